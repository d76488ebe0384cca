//! Every process the gauntlet starts, owned by a guard.
//!
//! A child is started in its own process group and registered in a
//! process-wide table. Dropping its [`Guard`] stops the whole group (SIGTERM,
//! then SIGKILL after a grace period) and reaps it, so success, failure and a
//! panic all leave nothing running. [`install_interrupt_handler`] makes Ctrl-C
//! and SIGTERM do the same for every registered group before the run ends.
//! Short-lived commands (terraform, the AWS CLI) go through [`run`], which
//! registers them for the duration of the call.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use crate::clock::{Category, Clock};

/// How long a group gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

fn table() -> &'static Mutex<BTreeMap<u32, String>> {
    static TABLE: OnceLock<Mutex<BTreeMap<u32, String>>> = OnceLock::new();
    TABLE.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Whether Ctrl-C or SIGTERM reached the gauntlet.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Errors from starting or running a child process.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("could not start {label} ({program}): {source}")]
    Spawn {
        label: String,
        program: String,
        source: std::io::Error,
    },
    #[error("waiting for {label} failed: {source}")]
    Wait {
        label: String,
        source: std::io::Error,
    },
    #[error("interrupted while {label} was running")]
    Interrupted { label: String },
}

/// On Ctrl-C or SIGTERM: mark the run interrupted and ask every registered
/// process group to stop, so the waits in progress return and the run unwinds
/// through its guards and writes its page. terraform stops gracefully, which
/// can mean finishing an SQS create; whatever still runs after the grace
/// period is killed, and if the run has not ended long after that the
/// process exits with 130 regardless.
pub fn install_interrupt_handler() {
    let result = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            return;
        }
        eprintln!("gauntlet: interrupted; stopping every process it started");
        signal_all(Signal::SIGTERM);
        thread::spawn(|| {
            thread::sleep(GRACE);
            signal_all(Signal::SIGKILL);
            thread::sleep(GRACE * 6);
            signal_all(Signal::SIGKILL);
            std::process::exit(130);
        });
    });
    if let Err(e) = result {
        eprintln!("gauntlet: could not install the Ctrl-C handler: {e}");
    }
}

fn signal_all(signal: Signal) {
    let pids: Vec<u32> = table()
        .lock()
        .map(|t| t.keys().copied().collect())
        .unwrap_or_default();
    for pid in pids {
        let _ = killpg(Pid::from_raw(pid as i32), signal);
    }
}

/// A running child process that is stopped, with its whole process group,
/// when this value is dropped.
pub struct Guard {
    child: Child,
    label: String,
}

impl Guard {
    /// Start `cmd` in a new process group and register it.
    pub fn spawn(mut cmd: Command, label: &str) -> Result<Guard, ProcessError> {
        cmd.process_group(0);
        let program = cmd.get_program().to_string_lossy().into_owned();
        // Hold the table lock across the spawn so an interrupt arriving in
        // between cannot miss the new group.
        let mut t = table().lock().unwrap_or_else(|p| p.into_inner());
        if interrupted() {
            return Err(ProcessError::Interrupted {
                label: label.to_owned(),
            });
        }
        let child = cmd.spawn().map_err(|source| ProcessError::Spawn {
            label: label.to_owned(),
            program,
            source,
        })?;
        t.insert(child.id(), label.to_owned());
        Ok(Guard {
            child,
            label: label.to_owned(),
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The exit status, if the process has already ended.
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The child's stdin and stdout, when they were piped.
    pub fn take_pipes(&mut self) -> (Option<ChildStdin>, Option<ChildStdout>) {
        (self.child.stdin.take(), self.child.stdout.take())
    }

    /// Kill the whole group at once with SIGKILL, as a machine dying
    /// would: nothing in it gets to clean up.
    pub fn kill(mut self) {
        let _ = killpg(Pid::from_raw(self.child.id() as i32), Signal::SIGKILL);
        let _ = self.child.wait();
    }

    /// Wait for the process to end and collect what it wrote to piped stdout
    /// and stderr.
    fn wait_output(mut self) -> Result<Output, ProcessError> {
        let label = self.label.clone();
        let wait_err = |source| ProcessError::Wait {
            label: label.clone(),
            source,
        };
        // Drain both pipes on their own threads so neither can fill and block.
        let out = self.child.stdout.take().map(drain);
        let err = self.child.stderr.take().map(drain);
        let status = self.child.wait().map_err(wait_err)?;
        let stdout = out
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        let stderr = err
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        Ok(Output {
            status,
            stdout,
            stderr,
        })
    }

    fn stop(&mut self) {
        let pid = Pid::from_raw(self.child.id() as i32);
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = killpg(pid, Signal::SIGTERM);
            let deadline = Instant::now() + GRACE;
            while Instant::now() < deadline {
                if self.child.try_wait().ok().flatten().is_some() {
                    break;
                }
                thread::sleep(Duration::from_millis(20));
            }
        }
        // The leader may be gone while others in its group live on.
        let _ = killpg(pid, Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.stop();
        if let Ok(mut t) = table().lock() {
            t.remove(&self.child.id());
        }
    }
}

fn drain(mut r: impl Read + Send + 'static) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

/// Run a command to completion under a guard, with stdout and stderr
/// captured, and account its wall time to `category`.
pub fn run(
    clock: &Clock,
    category: Category,
    label: &str,
    mut cmd: Command,
) -> Result<Output, ProcessError> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = clock.wait(category, label, || Guard::spawn(cmd, label)?.wait_output())?;
    if interrupted() {
        return Err(ProcessError::Interrupted {
            label: label.to_owned(),
        });
    }
    Ok(output)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registered() -> Vec<u32> {
        table().lock().unwrap().keys().copied().collect()
    }

    fn alive(pid: u32) -> bool {
        nix::sys::signal::kill(Pid::from_raw(pid as i32), None).is_ok()
    }

    #[test]
    fn dropping_a_guard_stops_its_whole_group() {
        // A shell that starts a grandchild in the same group, then waits.
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 300 & echo $!; wait"])
            .stdout(Stdio::piped());
        let mut g = Guard::spawn(cmd, "sleeper").unwrap();
        let mut line = String::new();
        let mut out = g.child.stdout.take().unwrap();
        let mut byte = [0u8; 1];
        while out.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
            line.push(byte[0] as char);
        }
        let grandchild: u32 = line.trim().parse().unwrap();
        let leader = g.pid();
        assert!(alive(grandchild) && alive(leader));
        assert!(registered().contains(&leader));
        drop(g);
        assert!(!alive(leader), "leader survived its guard");
        // The grandchild was reparented; give init a moment to reap it.
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(grandchild) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(grandchild), "grandchild survived its group's guard");
        assert!(!registered().contains(&leader));
    }

    #[test]
    fn a_panic_drops_the_guard() {
        let mut cmd = Command::new("sleep");
        cmd.arg("300");
        let g = Guard::spawn(cmd, "sleeper").unwrap();
        let pid = g.pid();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let _g = g;
            panic!("boom");
        }));
        assert!(r.is_err());
        assert!(!alive(pid));
    }

    #[test]
    fn run_captures_output_and_accounts_time() {
        let clock = Clock::start();
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2; exit 3"]);
        let o = run(&clock, Category::Witness, "sh", cmd).unwrap();
        assert_eq!(o.status.code(), Some(3));
        assert_eq!(o.stdout, b"out\n");
        assert_eq!(o.stderr, b"err\n");
        assert!(clock.breakdown().witness > Duration::ZERO);
    }

    #[test]
    fn a_missing_program_is_named() {
        let clock = Clock::start();
        let err = run(
            &clock,
            Category::Terraform,
            "terraform init",
            Command::new("/nonexistent/terraform"),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("terraform init") && msg.contains("/nonexistent/terraform"),
            "{msg}"
        );
    }
}
