//! The conditions a run ran under: how the engine was built, the machine's
//! cores, its load when the run started and what else the gauntlet ran
//! beside it. A page prints them; a comparison of two runs' times is made
//! only between runs of like conditions.

use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Conditions {
    /// How the choudoufu the run used was built: `debug` or `release` (the
    /// cargo profile folder it sits in), else `unknown`; empty in lines
    /// written before conditions were recorded.
    pub profile: String,
    /// The cores the machine offered the run.
    pub cores: usize,
    /// The one-minute load average when the run started.
    pub load: f64,
    /// Other gauntlet runs going when this one started.
    pub alongside: usize,
}

impl Conditions {
    /// The machine as the run starts: cores, load, other runs. The profile
    /// is set once the engine binary is found ([`profile_of`]).
    pub fn now() -> Conditions {
        Conditions {
            profile: "unknown".into(),
            cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
            load: fs::read_to_string("/proc/loadavg")
                .ok()
                .and_then(|s| s.split_whitespace().next()?.parse().ok())
                .unwrap_or(0.0),
            alongside: other_runs(Path::new("/proc"), std::process::id()),
        }
    }

    /// Whether two runs' times may be compared: the same build of the
    /// engine, the same cores and as many runs beside each. Load is printed,
    /// not matched: it follows from what runs alongside.
    pub fn like(&self, other: &Conditions) -> bool {
        !self.profile.is_empty()
            && self.profile == other.profile
            && self.cores == other.cores
            && self.alongside == other.alongside
    }

    /// `debug build, 2 cores, 2 other runs alongside`: what [`like`] matches.
    ///
    /// [`like`]: Conditions::like
    pub fn kind(&self) -> String {
        if self.profile.is_empty() {
            return "conditions not recorded".into();
        }
        let alongside = match self.alongside {
            0 => "run alone".to_owned(),
            1 => "1 other gauntlet run alongside".to_owned(),
            n => format!("{n} other gauntlet runs alongside"),
        };
        format!("{} build, {} cores, {alongside}", self.profile, self.cores)
    }

    /// [`kind`](Conditions::kind) with the load average at the start.
    pub fn describe(&self) -> String {
        if self.profile.is_empty() {
            return self.kind();
        }
        format!(
            "{}, load average {:.2} at the start",
            self.kind(),
            self.load
        )
    }
}

/// The cargo profile a binary was built in, from the folder it sits in.
pub fn profile_of(binary: &Path) -> String {
    let parent = binary
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str());
    match parent {
        Some(p @ ("debug" | "release")) => p.to_owned(),
        _ => "unknown".into(),
    }
}

/// How many processes under `proc` other than `me` are a gauntlet running
/// an estate: a binary named `gauntlet` whose arguments hold `run`.
fn other_runs(proc: &Path, me: u32) -> usize {
    let Ok(entries) = fs::read_dir(proc) else {
        return 0;
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|pid| pid != me)
        })
        .filter(|e| {
            let Ok(raw) = fs::read(e.path().join("cmdline")) else {
                return false;
            };
            let mut args = raw.split(|b| *b == 0).map(String::from_utf8_lossy);
            let is_gauntlet = args.next().is_some_and(|a| {
                Path::new(a.as_ref())
                    .file_name()
                    .is_some_and(|n| n == "gauntlet")
            });
            is_gauntlet && args.any(|a| a == "run")
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(profile: &str, cores: usize, alongside: usize) -> Conditions {
        Conditions {
            profile: profile.into(),
            cores,
            load: 1.5,
            alongside,
        }
    }

    #[test]
    fn only_the_same_build_cores_and_company_are_alike() {
        let a = of("release", 2, 0);
        assert!(a.like(&of("release", 2, 0)));
        assert!(!a.like(&of("debug", 2, 0)));
        assert!(!a.like(&of("release", 4, 0)));
        assert!(!a.like(&of("release", 2, 2)));
        // Lines from before conditions were recorded are like nothing.
        assert!(!Conditions::default().like(&Conditions::default()));
        assert_eq!(
            of("debug", 2, 2).describe(),
            "debug build, 2 cores, 2 other gauntlet runs alongside, load average 1.50 at the start"
        );
    }

    #[test]
    fn the_profile_is_the_folder_the_binary_sits_in() {
        assert_eq!(
            profile_of(Path::new("/w/target/release/choudoufu")),
            "release"
        );
        assert_eq!(profile_of(Path::new("/w/target/debug/choudoufu")), "debug");
        assert_eq!(profile_of(Path::new("/usr/local/bin/choudoufu")), "unknown");
    }

    #[test]
    fn other_runs_are_gauntlets_running_an_estate() {
        let d = tempfile::tempdir().unwrap();
        for (pid, cmdline) in [
            (
                "10",
                "/w/target/debug/gauntlet\0run\0reference-aws-network\0",
            ),
            ("11", "/w/target/debug/gauntlet\0site\0"),
            ("12", "cargo\0run\0-p\0gauntlet\0--\0run\0x\0"),
            ("13", "/w/target/release/gauntlet\0run\0--root\0r\0"),
        ] {
            fs::create_dir(d.path().join(pid)).unwrap();
            fs::write(d.path().join(pid).join("cmdline"), cmdline).unwrap();
        }
        fs::create_dir(d.path().join("self")).unwrap();
        assert_eq!(other_runs(d.path(), 99), 2);
        assert_eq!(other_runs(d.path(), 13), 1);
    }
}
