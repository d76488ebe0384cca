//! Where the run's wall time goes, and progress while it runs.
//!
//! Every blocking wait on something outside the harness (terraform and its
//! provider, moto, the AWS CLI, package installs) is a span tagged with a
//! [`Category`]. The harness's own overhead is the wall time covered by no
//! span at all. A ticker thread prints what the run is waiting for, so a long
//! terraform apply never looks like a hang.

use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// What a wait was spent on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    /// Stock terraform, including the provider plugins it runs.
    Terraform,
    /// The engine under test, including the provider plugins it runs.
    Engine,
    /// Starting the emulator and waiting until it answers.
    Emulator,
    /// The AWS CLI reading or changing the live system.
    Witness,
    /// Installing the pinned emulator and witness into the virtualenv.
    Provisioning,
}

#[derive(Default)]
struct State {
    spans: Vec<(Category, Instant, Instant)>,
    active: Vec<(u64, String, Instant)>,
    next_id: u64,
    stage: String,
    done: bool,
}

/// The run's clock: spans, the current stage, and the progress ticker.
#[derive(Clone)]
pub struct Clock {
    origin: Instant,
    state: Arc<(Mutex<State>, Condvar)>,
}

/// Wall time by category; overlapping spans of one category count once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    #[serde(with = "millis")]
    pub total: Duration,
    #[serde(with = "millis")]
    pub terraform: Duration,
    #[serde(with = "millis", default)]
    pub engine: Duration,
    #[serde(with = "millis")]
    pub emulator: Duration,
    #[serde(with = "millis")]
    pub witness: Duration,
    #[serde(with = "millis")]
    pub provisioning: Duration,
    /// Wall time in which the harness waited on nothing outside itself.
    #[serde(with = "millis")]
    pub harness: Duration,
}

impl Breakdown {
    /// The harness's own share of the run, as a fraction of the total.
    pub fn harness_share(&self) -> f64 {
        if self.total.is_zero() {
            return 0.0;
        }
        self.harness.as_secs_f64() / self.total.as_secs_f64()
    }
}

pub(crate) mod millis {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_millis() as u64)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}

impl Clock {
    pub fn start() -> Clock {
        Clock {
            origin: Instant::now(),
            state: Arc::new((Mutex::new(State::default()), Condvar::new())),
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.origin.elapsed()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Name the stage now running, for progress lines.
    pub fn set_stage(&self, stage: &str) {
        self.lock().stage = stage.to_owned();
        self.say(stage);
    }

    /// Print one progress line, prefixed with the elapsed time.
    pub fn say(&self, what: &str) {
        eprintln!("[{:>6.1}s] {what}", self.elapsed().as_secs_f64());
    }

    /// Run `f` as a wait on `category`, announced as `label`.
    pub fn wait<T>(&self, category: Category, label: &str, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let id = {
            let mut s = self.lock();
            s.next_id += 1;
            let id = s.next_id;
            s.active.push((id, label.to_owned(), start));
            id
        };
        let out = f();
        let end = Instant::now();
        let mut s = self.lock();
        s.active.retain(|(i, _, _)| *i != id);
        s.spans.push((category, start, end));
        out
    }

    /// Print what the run is waiting for every `every`, until the clock is
    /// finished.
    pub fn ticker(&self, every: Duration) -> thread::JoinHandle<()> {
        let clock = self.clone();
        thread::spawn(move || {
            let (lock, cv) = &*clock.state;
            let mut s = lock.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                let (next, _) = cv.wait_timeout(s, every).unwrap_or_else(|p| p.into_inner());
                s = next;
                if s.done {
                    return;
                }
                let waits: Vec<String> = s
                    .active
                    .iter()
                    .filter(|(_, _, since)| since.elapsed() >= every)
                    .map(|(_, l, since)| format!("{l} ({}s)", since.elapsed().as_secs()))
                    .collect();
                if !waits.is_empty() {
                    eprintln!(
                        "[{:>6.1}s] {}: still waiting for {}",
                        clock.elapsed().as_secs_f64(),
                        s.stage,
                        waits.join(", ")
                    );
                }
            }
        })
    }

    /// Stop the ticker.
    pub fn finish(&self) {
        self.lock().done = true;
        self.state.1.notify_all();
    }

    /// Wall time spent waiting on `category` since `since`, overlapping
    /// waits counted once: what one stage spent on terraform or the engine.
    pub fn spent_since(&self, category: Category, since: Instant) -> Duration {
        let s = self.lock();
        let mut iv: Vec<(Instant, Instant)> = s
            .spans
            .iter()
            .filter(|(c, _, b)| *c == category && *b > since)
            .map(|(_, a, b)| ((*a).max(since), *b))
            .collect();
        union_len(&mut iv)
    }

    /// Wall time so far, by category.
    pub fn breakdown(&self) -> Breakdown {
        let now = Instant::now();
        let s = self.lock();
        let covered = |want: Option<Category>| {
            let mut iv: Vec<(Instant, Instant)> = s
                .spans
                .iter()
                .filter(|(c, _, _)| want.is_none_or(|w| w == *c))
                .map(|(_, a, b)| (*a, *b))
                .collect();
            union_len(&mut iv)
        };
        let total = now - self.origin;
        Breakdown {
            total,
            terraform: covered(Some(Category::Terraform)),
            engine: covered(Some(Category::Engine)),
            emulator: covered(Some(Category::Emulator)),
            witness: covered(Some(Category::Witness)),
            provisioning: covered(Some(Category::Provisioning)),
            harness: total.saturating_sub(covered(None)),
        }
    }
}

/// The length of the union of intervals.
fn union_len(iv: &mut [(Instant, Instant)]) -> Duration {
    iv.sort();
    let mut total = Duration::ZERO;
    let mut cur: Option<(Instant, Instant)> = None;
    for &(a, b) in iv.iter() {
        cur = match cur {
            Some((ca, cb)) if a <= cb => Some((ca, cb.max(b))),
            Some((ca, cb)) => {
                total += cb - ca;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    if let Some((a, b)) = cur {
        total += b - a;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_spans_count_once() {
        let t = Instant::now();
        let s = |a: u64, b: u64| (t + Duration::from_millis(a), t + Duration::from_millis(b));
        let mut iv = vec![s(0, 10), s(5, 20), s(30, 40), s(35, 36)];
        assert_eq!(union_len(&mut iv), Duration::from_millis(30));
        assert_eq!(union_len(&mut []), Duration::ZERO);
    }

    #[test]
    fn a_stage_counts_only_its_own_waits() {
        let c = Clock::start();
        c.wait(Category::Engine, "before", || {
            thread::sleep(Duration::from_millis(40))
        });
        let since = Instant::now();
        c.wait(Category::Engine, "e", || {
            thread::sleep(Duration::from_millis(20))
        });
        c.wait(Category::Terraform, "t", || {
            thread::sleep(Duration::from_millis(10))
        });
        let engine = c.spent_since(Category::Engine, since);
        assert!(engine >= Duration::from_millis(20), "{engine:?}");
        assert!(engine < Duration::from_millis(40), "{engine:?}");
        let terraform = c.spent_since(Category::Terraform, since);
        assert!(terraform >= Duration::from_millis(10) && terraform < Duration::from_millis(20));
        assert_eq!(c.spent_since(Category::Witness, since), Duration::ZERO);
    }

    #[test]
    fn harness_time_is_what_no_wait_covers() {
        let c = Clock::start();
        c.wait(Category::Terraform, "t", || {
            thread::sleep(Duration::from_millis(60))
        });
        thread::sleep(Duration::from_millis(30));
        let b = c.breakdown();
        assert!(b.terraform >= Duration::from_millis(60));
        assert!(b.harness >= Duration::from_millis(30));
        assert!(b.harness < b.total);
        assert!(b.harness_share() > 0.0 && b.harness_share() < 1.0);
    }
}
