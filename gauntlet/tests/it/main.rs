//! Integration tests of the gauntlet against real parts: the real terraform
//! binary, the real aws provider and real moto servers, read back with the
//! real AWS CLI. Every test runs the `gauntlet` binary as a user would.

mod awscli;
mod bad_input;
mod corpus;
mod guards;
mod nightly;
mod roots;
mod runs;
mod site;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const ESTATE: &str = "reference-aws-stateful";
/// The second reference estate, run clean and with one toggle per stage.
pub const PLATFORM: &str = "reference-aws-platform";
/// The third, a network root: its knobs are only what no stage derives.
pub const NETWORK: &str = "reference-aws-network";

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A scratch place for one gauntlet invocation: its work and reports dirs.
pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Default for Scratch {
    fn default() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().unwrap(),
        }
    }
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch::default()
    }

    pub fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    pub fn reports(&self) -> PathBuf {
        self.dir.path().join("reports")
    }

    /// `gauntlet` with this scratch's work and reports dirs after `args`.
    pub fn gauntlet(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gauntlet"));
        cmd.current_dir(workspace())
            .args(args)
            .arg("--work-dir")
            .arg(self.work())
            .arg("--reports-dir")
            .arg(self.reports());
        for t in gauntlet::stage::Toggle::ALL {
            cmd.env_remove(t.env());
        }
        cmd.env_remove("GAUNTLET_TEST_PANIC");
        cmd.env_remove("CHOUDOUFU");
        cmd
    }

    /// The run record the gauntlet wrote for `estate`.
    pub fn record(&self, estate: &str) -> Value {
        let p = self.reports().join(format!("{estate}.json"));
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        serde_json::from_str(&text).unwrap()
    }

    /// Every stage that did not pass, with its detail, from the run record
    /// if one was written: what a failed run's assertion message needs.
    pub fn not_passed(&self, estate: &str) -> String {
        let p = self.reports().join(format!("{estate}.json"));
        let Ok(text) = std::fs::read_to_string(&p) else {
            return format!("no run record at {}", p.display());
        };
        let Ok(r) = serde_json::from_str::<Value>(&text) else {
            return format!("{} is not JSON", p.display());
        };
        r["stages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s["verdict"] != "pass" && s["verdict"] != "not-run")
            .map(|s| format!("{}: {}: {}\n", s["title"], s["verdict"], s["detail"]))
            .collect()
    }

    pub fn page(&self, estate: &str) -> String {
        std::fs::read_to_string(self.reports().join(format!("{estate}.md"))).unwrap()
    }
}

/// The output of a finished gauntlet, with stderr as text.
pub struct Finished {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

pub fn finish(out: Output) -> Finished {
    Finished {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The moto pids a gauntlet announced on stderr.
pub fn moto_pids(stderr: &str) -> Vec<i32> {
    stderr
        .lines()
        .filter_map(|l| l.split("started moto_server (pid ").nth(1))
        .filter_map(|rest| rest.split(')').next()?.parse().ok())
        .collect()
}

fn alive(pid: i32) -> bool {
    // A zombie is not running; read its state rather than only its presence.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Processes whose working directory lies under `dir`.
pub fn processes_in(dir: &Path) -> Vec<i32> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(&dir))
                && alive(*pid)
        })
        .collect()
}

/// Assert nothing the gauntlet started is still running: the moto servers it
/// announced, and any process working inside its scratch dir (terraform and
/// its providers).
pub fn assert_nothing_left(stderr: &str, scratch: &Scratch) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let motos: Vec<i32> = moto_pids(stderr)
            .into_iter()
            .filter(|p| alive(*p))
            .collect();
        let others = processes_in(scratch.dir.path());
        if motos.is_empty() && others.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            panic!("left running: moto {motos:?}, in the scratch dir {others:?}\n{stderr}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// What a stage of a record said: its summary, then what each of its
/// assertions saw.
pub fn said(record: &Value, title: &str) -> String {
    let row = stage(record, title);
    let mut all = vec![row["detail"].as_str().unwrap().to_owned()];
    all.extend(
        row["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| c["seen"].as_str().unwrap().to_owned()),
    );
    all.join("; ")
}

/// The stage row of a record, by its title.
pub fn stage<'a>(record: &'a Value, title: &str) -> &'a Value {
    record["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["title"] == title)
        .unwrap_or_else(|| panic!("no stage {title}"))
}
