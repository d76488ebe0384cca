//! Two applies at once: the estate's lock, kept in the live system.
//!
//! On the estate greenfield left, the estate twin's root gains a queue and
//! two `choudoufu apply -lock-timeout=5m` run side by side, the second
//! started the moment the first's lock (`/choudoufu/lock/<estate>`)
//! appears: the second must wait, naming the holder, and then find nothing
//! left to do, and the queue must exist once, marked. Then, with the queue's
//! block removed, an apply is killed with SIGKILL while it holds the lock,
//! as a dying CI runner leaves it: the next apply is refused naming the
//! dead run's lock, `force-unlock` with that ID breaks it, and one more
//! apply takes the queue away, leaving the estate as greenfield left it.
//! Stock terraform's lock guards a local state file, which the oracle twin's
//! copy alone holds, so the oracle twin has no part here.

use std::fs;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::choudoufu::{Applied, EngineError, Output};
use crate::process::Guard;
use crate::stage::Toggle;
use crate::witness::Witness;

use super::kit::{side_by_side, verdict, ADDRESS_KEY, ESTATE_KEY};
use super::{ColdOutcome, Lane, StageOutput, StagePlan, StepError};

const FILE: &str = "concurrent.tf";
const BLOCK: &str = "aws_sqs_queue.concurrent";
/// How long the second apply may wait, as it is told.
const LOCK_TIMEOUT: &str = "-lock-timeout=5m";
/// How long the stage watches for an apply's lock to appear.
const LOCK_SEEN_WITHIN: Duration = Duration::from_secs(120);

/// The queue's block.
fn block(name: &str) -> String {
    format!(
        "# Added by two applies at once; a queue's create takes seconds.\nresource \"aws_sqs_queue\" \"concurrent\" {{\n  name = \"{name}\"\n}}\n"
    )
}

/// The parameter holding the estate's lock.
fn lock_parameter(estate: &str) -> String {
    format!("/choudoufu/lock/{estate}")
}

/// The lock's ID once the parameter holds one, read until `done` says the
/// run that should take it has ended, or for [`LOCK_SEEN_WITHIN`].
fn lock_id(
    witness: &Witness,
    parameter: &str,
    mut done: impl FnMut() -> bool,
) -> Result<Option<String>, StepError> {
    let started = Instant::now();
    while started.elapsed() < LOCK_SEEN_WITHIN && !done() {
        if let Some(text) = witness.parameter_value(parameter)? {
            let id = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v["ID"].as_str().map(str::to_owned))
                .unwrap_or(text);
            return Ok(Some(id));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(None)
}

/// The last line a run printed, for the page.
fn last_line(out: &Output) -> String {
    format!("{}{}", out.stdout, out.stderr)
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("")
        .to_owned()
}

/// A run's exit and closing line, when it did not end as `want`.
fn ended(what: &str, out: &Output, want: Applied) -> Option<String> {
    let applied = Applied::parse(&out.stdout);
    (out.code != 0 || applied != Some(want)).then(|| match applied {
        Some(a) => format!(
            "{what} exited {} and applied {a}, where {want} was expected",
            out.code
        ),
        None => format!(
            "{what} exited {}: {}, where {want} was expected",
            out.code,
            last_line(out)
        ),
    })
}

pub fn two_applies_at_once(lane: &Lane, _cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let estate = &lane.estate.name;
    let witness = &lane.estate_twin().witness;
    let queue = &lane.estate.scratch_names().concurrent_queue;
    let lock = lock_parameter(estate);
    let file = lane.engine.dir.join(FILE);
    let io = |source| StepError::Io {
        path: file.clone(),
        source,
    };

    clock.say(&format!(
        "Two applies at once: {BLOCK} added, two applies started together"
    ));
    fs::write(&file, block(queue)).map_err(io)?;
    let apply = ["apply", "-auto-approve", "-no-color", LOCK_TIMEOUT];
    let second_args: &[&str] = if lane.breaks.on(Toggle::LockTurns) {
        &["apply", "-auto-approve", "-no-color", "-lock=false"]
    } else {
        &apply
    };
    let first_done = AtomicBool::new(false);
    let (first, second) = side_by_side(
        || {
            let started = Instant::now();
            let out = lane.engine.run(clock, &apply);
            first_done.store(true, Ordering::SeqCst);
            out.map(|o| (o, started.elapsed()))
        },
        || -> Result<_, StepError> {
            let holder = lock_id(witness, &lock, || first_done.load(Ordering::SeqCst))?;
            let started = Instant::now();
            let out = lane.engine.run(clock, second_args)?;
            Ok((holder, out, started.elapsed()))
        },
    );
    let (first, first_took) = first?;
    let (holder, second, second_took) = second?;
    let tags = witness.queue_tags(queue)?;
    let left = witness.parameter_value(&lock)?;
    let replan = lane.engine.plan(clock, &[])?;

    let one = Applied {
        added: 1,
        ..Applied::default()
    };
    let mut p = Vec::new();
    p.extend(ended("the first apply", &first, one));
    let waited_for = holder
        .as_ref()
        .map(|id| format!("is locked by another run: lock ID {id},"));
    let said = format!("{}{}", second.stdout, second.stderr);
    match &waited_for {
        None => p.push(format!(
            "the first apply's lock {lock} was never seen while it ran"
        )),
        Some(w) if !said.contains(w.as_str()) => p.push(format!(
            "the second apply did not wait naming the first's lock ({}): {}",
            holder.as_deref().unwrap_or_default(),
            said.lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim()
        )),
        Some(_) => {}
    }
    p.extend(ended("the second apply", &second, Applied::default()));
    let marked = tags.as_ref().is_some_and(|t| {
        t.get(ESTATE_KEY) == Some(estate) && t.get(ADDRESS_KEY).map(String::as_str) == Some(BLOCK)
    });
    if !marked {
        p.push(format!(
            "the AWS CLI finds queue {queue} {}",
            match &tags {
                None => "missing".to_owned(),
                Some(t) => format!("carrying {t:?}, not both markers"),
            }
        ));
    }
    if left.is_some() {
        p.push(format!("the lock {lock} is still there after both applies"));
    }
    if !replan.is_empty() {
        p.push(format!(
            "the next plan: {} ({})",
            replan.summary_line(),
            replan.describe()
        ));
    }
    let turns = if p.is_empty() {
        Ok(format!(
            "two `choudoufu apply -auto-approve {LOCK_TIMEOUT}` of the estate twin's root, which gained {BLOCK}, ran side by side, the second started the moment the first's lock appeared in the live system (SSM parameter {lock}, lock ID {}): the first took {:.0}s and applied {one}; the second printed \"{}\", waited its turn and then applied {} in {:.0}s, having found the first's queue by its markers; the AWS CLI finds {queue} once, carrying {ESTATE_KEY}={estate} and {ADDRESS_KEY}={BLOCK}, and no lock left; the next plan: {}",
            holder.as_deref().unwrap_or_default(),
            first_took.as_secs_f64(),
            said.lines()
                .find(|l| l.contains("is locked by another run"))
                .unwrap_or("")
                .trim(),
            Applied::default(),
            second_took.as_secs_f64(),
            replan.summary_line()
        ))
    } else {
        Err(p.join("; "))
    };

    // A run killed while it holds the lock. It is never approved (its
    // stdin stays open and silent), so it changes nothing before the kill
    // however fast it plans: an approved one could destroy the queue first.
    clock.say("Two applies at once: an apply killed with SIGKILL while it holds the lock");
    fs::remove_file(&file).map_err(io)?;
    let mut cmd = lane.engine.command(&["apply", "-no-color"], &[]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut doomed = Guard::spawn(cmd, "choudoufu apply").map_err(EngineError::from)?;
    let dead = lock_id(witness, &lock, || doomed.try_wait().is_some())?;
    doomed.kill();
    if lane.breaks.on(Toggle::LockBroken) {
        witness.delete_parameter(&lock)?;
    }
    let refused = lane
        .engine
        .run(clock, &["apply", "-auto-approve", "-no-color"])?;
    let dead_id = dead.clone().unwrap_or_default();
    let unlocked = lane
        .engine
        .run(clock, &["force-unlock", "-force", &dead_id])?;
    let last = lane
        .engine
        .run(clock, &["apply", "-auto-approve", "-no-color"])?;
    let gone = witness.queue_tags(queue)?.is_none();
    let left = witness.parameter_value(&lock)?;

    let mut p = Vec::new();
    let refusal = format!("{}{}", refused.stdout, refused.stderr);
    let hint = format!("choudoufu force-unlock {dead_id}");
    if dead.is_none() {
        p.push(format!("the killed apply's lock {lock} was never seen"));
    }
    if refused.code != 1
        || !refusal.contains("is locked by another run")
        || !refusal.contains(&hint)
    {
        p.push(format!(
            "the apply after the kill exited {} without refusing on the dead run's lock {dead_id}: {}",
            refused.code,
            last_line(&refused)
        ));
    }
    if unlocked.code != 0 {
        p.push(format!(
            "`choudoufu force-unlock -force {dead_id}` exited {}: {}",
            unlocked.code,
            last_line(&unlocked)
        ));
    }
    let destroyed = Applied {
        destroyed: 1,
        ..Applied::default()
    };
    p.extend(ended("the apply after force-unlock", &last, destroyed));
    if !gone {
        p.push(format!("the AWS CLI still finds queue {queue}"));
    }
    if left.is_some() {
        p.push(format!("the lock {lock} is still there"));
    }
    let broken = if p.is_empty() {
        Ok(format!(
            "with {BLOCK} removed from the root, an apply awaiting its approval was killed with SIGKILL the moment its lock (ID {dead_id}) appeared, leaving the lock behind as a dead CI runner would; the next apply was refused at exit 1, \"{}\", naming that lock and \"{hint}\"; `choudoufu force-unlock -force {dead_id}` said \"{}\", and one more apply applied {destroyed}: the AWS CLI finds no {queue} and no lock",
            refusal
                .lines()
                .find(|l| l.contains("is locked by another run"))
                .unwrap_or("")
                .trim(),
            last_line(&unlocked)
        ))
    } else {
        Err(p.join("; "))
    };

    Ok(StageOutput {
        assertions: vec![
            verdict(Toggle::LockTurns, turns),
            verdict(Toggle::LockBroken, broken),
        ],
        summary: "two applies of one estate at once, and a lock left by a killed run".into(),
        plans: vec![StagePlan::Engine(replan)],
    })
}
