//! Whether a page still speaks for the code: a run's record is stale once
//! the engine's or the gauntlet's sources, the lock file, the pins
//! (`live/`) or the estate's own folder changed after the commit it ran at.

use std::path::Path;
use std::process::Command;

use crate::evidence::RunRecord;

/// What the page's commit is to the checkout the page is rendered in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Freshness {
    /// Nothing the run depends on changed since its commit.
    Current,
    /// `paths` changed since, the last time at `commit` on `date`.
    Stale {
        commit: String,
        date: String,
        paths: Vec<String>,
    },
    /// Not decided, and why.
    Unknown(String),
}

impl Freshness {
    /// The page's banner, in Markdown; empty for a current page.
    pub fn banner(&self, r: &RunRecord) -> String {
        self.says("This run", &r.commit, &r.reproduce)
    }

    /// The banner of `what` (`This run`), measured at `commit`, that
    /// `again` reproduces.
    pub fn says(&self, what: &str, from: &str, again: &str) -> String {
        match self {
            Freshness::Current => String::new(),
            Freshness::Stale {
                commit,
                date,
                paths,
            } => {
                let pins = if paths.iter().any(|p| p == "live/") {
                    " (a pin moved)"
                } else {
                    ""
                };
                format!(
                    "**Stale.** {what} is from commit {at}; {} changed since{pins}, last at {commit} on {date}. What it shows may no longer hold: run it again with `{again}`.",
                    paths.join(", "),
                    at = from,
                )
            }
            Freshness::Unknown(why) => format!("Freshness not checked: {why}."),
        }
    }

    pub fn stale(&self) -> bool {
        matches!(self, Freshness::Stale { .. })
    }
}

/// The gauntlet's modules that render a record rather than make one: the
/// pages are drawn by the code of the checkout they are rendered in, so a
/// change to these leaves every record as true as it was.
const RENDERERS: [&str; 5] = [
    "site.rs",
    "report.rs",
    "chart.rs",
    "browser.rs",
    "freshness.rs",
];

/// The paths a run depends on, as git pathspecs relative to the checkout's
/// top: the two crates' sources and manifests (their tests are not the
/// run, the renderers not the record), the lock file, the pins, and the
/// estate.
fn watched(top: &Path, estate: &str) -> Vec<String> {
    let mut paths: Vec<String> = [
        "engine/src",
        "engine/Cargo.toml",
        "gauntlet/src",
        "gauntlet/Cargo.toml",
        "live",
        "Cargo.lock",
    ]
    .into_iter()
    .map(String::from)
    .chain(RENDERERS.map(|r| format!(":(exclude)gauntlet/src/{r}")))
    .collect();
    let own = format!("estates/{estate}");
    if top.join(&own).is_dir() {
        paths.push(own);
    }
    paths
}

/// Decide whether `r`, rendered from `reports`, is current in the git
/// checkout that folder belongs to.
pub fn of(reports: &Path, r: &RunRecord) -> Freshness {
    at(reports, &r.commit, |top| watched(top, &r.estate))
}

/// Decide whether the plan-from-nothing figures, measured at `commit`, are
/// current: they follow the engine, the pins and the script that measures.
pub fn of_figures(reports: &Path, commit: &str) -> Freshness {
    at(reports, commit, |_| {
        [
            "engine/src",
            "engine/Cargo.toml",
            "live",
            "Cargo.lock",
            "scripts/bench-plan.sh",
        ]
        .map(String::from)
        .to_vec()
    })
}

/// Decide whether figures measured at `commit` are current in the
/// checkout `reports` belongs to, given the paths (relative to its top)
/// they depend on.
fn at(reports: &Path, commit: &str, paths: impl FnOnce(&Path) -> Vec<String>) -> Freshness {
    let git = |dir: &Path, args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
    };
    let text = |o: std::process::Output| String::from_utf8_lossy(&o.stdout).trim().to_owned();
    let Some(top) = git(reports, &["rev-parse", "--show-toplevel"])
        .filter(|o| o.status.success())
        .map(text)
    else {
        return Freshness::Unknown(format!("{} is not in a git checkout", reports.display()));
    };
    let top = Path::new(&top);
    let at = commit.split_whitespace().next().unwrap_or_default();
    if at.is_empty() || !at.chars().all(|c| c.is_ascii_hexdigit()) {
        return Freshness::Unknown(format!("no commit is named ({commit})"));
    }
    let paths = paths(top);
    let mut log = vec!["log", "-1", "--format=%h %cs", "HEAD", "--"];
    log.extend(paths.iter().map(String::as_str));
    let Some(last) = git(top, &log).filter(|o| o.status.success()).map(text) else {
        return Freshness::Unknown("git log failed".into());
    };
    let Some((last, date)) = last.split_once(' ') else {
        return Freshness::Current;
    };
    match git(top, &["merge-base", "--is-ancestor", last, at]).and_then(|o| o.status.code()) {
        Some(0) => Freshness::Current,
        Some(1) => {
            let mut diff = vec!["diff", "--name-only", at, "HEAD", "--"];
            diff.extend(paths.iter().map(String::as_str));
            let mut changed: Vec<String> = git(top, &diff)
                .map(text)
                .unwrap_or_default()
                .lines()
                .filter_map(|f| {
                    paths
                        .iter()
                        .filter(|p| !p.starts_with(':'))
                        .find(|p| f == *p || f.starts_with(&format!("{p}/")))
                })
                .map(|p| {
                    if top.join(p).is_dir() {
                        format!("{p}/")
                    } else {
                        p.clone()
                    }
                })
                .collect();
            changed.sort();
            changed.dedup();
            Freshness::Stale {
                commit: last.to_owned(),
                date: date.to_owned(),
                paths: changed,
            }
        }
        _ => Freshness::Unknown(format!("commit {at} is not in this checkout")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    fn commit_file(top: &Path, file: &str, text: &str) -> String {
        let path = top.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        git(top, &["add", "-A"]);
        git(top, &["commit", "-q", "-m", file]);
        git(top, &["rev-parse", "--short=10", "HEAD"])
    }

    #[test]
    fn a_page_goes_stale_when_what_it_ran_changes_and_not_before() {
        let d = tempfile::tempdir().unwrap();
        let top = d.path();
        git(top, &["init", "-q"]);
        commit_file(top, "engine/src/lib.rs", "a");
        commit_file(top, "estates/e/main.tf", "a");
        let mut r = crate::report::tests::record();
        r.commit = commit_file(top, "reports/e.json", "{}");
        let reports = top.join("reports");
        assert_eq!(of(&reports, &r), Freshness::Current);
        assert_eq!(Freshness::Current.banner(&r), "");
        // A change to the reports, the README, another estate, the
        // engine's tests or a renderer: current.
        commit_file(top, "README.md", "b");
        commit_file(top, "estates/other/main.tf", "b");
        commit_file(top, "engine/tests/it.rs", "b");
        commit_file(top, "gauntlet/src/site.rs", "b");
        assert_eq!(of(&reports, &r), Freshness::Current);
        // The engine and a pin change: stale, naming both.
        commit_file(top, "engine/src/lib.rs", "b");
        let last = commit_file(top, "live/aws-lane.toml", "b");
        let f = of(&reports, &r);
        assert!(f.stale());
        let Freshness::Stale { commit, paths, .. } = &f else {
            unreachable!()
        };
        assert!(last.starts_with(commit.as_str()), "{last} {commit}");
        assert_eq!(paths, &["engine/src/", "live/"]);
        let banner = f.banner(&r);
        assert!(
            banner.starts_with(&format!("**Stale.** This run is from commit {}; engine/src/, live/ changed since (a pin moved), last at ", r.commit)),
            "{banner}"
        );
        // A record of a dirty tree is judged by its commit.
        r.commit = format!("{} (with uncommitted changes)", r.commit);
        assert!(of(&reports, &r).stale());
        // Outside a checkout, or a commit it does not hold: not decided.
        let elsewhere = tempfile::tempdir().unwrap();
        assert!(matches!(of(elsewhere.path(), &r), Freshness::Unknown(_)));
        r.commit = "0123456789".into();
        assert!(matches!(of(&reports, &r), Freshness::Unknown(_)));
    }
}
