//! An estate's history: one line per run in
//! `reports/history/<estate>.jsonl`, and what changed from one run to the
//! next.
//!
//! A line keeps what a trend needs (the commit, the date, the versions,
//! each stage's verdict, duration and measurements), never the details or
//! the plans, which stay in the run's own record. Lines are only appended;
//! `started_at` leads each line, so sorting a file's lines sorts its runs.
//! Rendering the changes is the pages' business (`report`, `site`).

use std::fmt;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::conditions::Conditions;
use crate::evidence::{Measured, RunRecord, Verdict, Versions};
use crate::report::human;
use crate::stage::StageId;

/// A duration that moved by more than this share of the one before is a
/// change worth showing.
pub const MOVED: f64 = 0.25;

/// One run of one estate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    pub started_at: String,
    pub commit: String,
    pub exit_code: i32,
    /// The BREAK toggles that were on.
    #[serde(default)]
    pub breaks: Vec<String>,
    pub versions: Versions,
    #[serde(default)]
    pub conditions: Conditions,
    pub total_ms: u64,
    pub stages: Vec<StageLine>,
}

/// One stage of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageLine {
    pub stage: StageId,
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<Measured>,
}

impl Line {
    /// The history line of a run.
    pub fn of(r: &RunRecord) -> Line {
        Line {
            started_at: r.started_at.clone(),
            commit: r.commit.clone(),
            exit_code: r.exit_code,
            breaks: r.breaks.clone(),
            versions: r.versions.clone(),
            conditions: r.conditions.clone(),
            total_ms: r.timing.total.as_millis() as u64,
            stages: r
                .stages
                .iter()
                .map(|s| StageLine {
                    stage: s.stage,
                    verdict: s.verdict,
                    duration_ms: s.duration_ms,
                    measured: s.measured,
                })
                .collect(),
        }
    }

    /// Whether this line records the run `r`.
    pub fn is(&self, r: &RunRecord) -> bool {
        self.started_at == r.started_at && self.commit == r.commit
    }

    pub fn stage(&self, stage: StageId) -> Option<&StageLine> {
        self.stages.iter().find(|s| s.stage == stage)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: not a history line: {source}")]
    Line {
        path: PathBuf,
        line: usize,
        source: serde_json::Error,
    },
}

/// Where an estate's history lives under a reports directory.
pub fn file(reports: &Path, estate: &str) -> PathBuf {
    reports.join("history").join(format!("{estate}.jsonl"))
}

/// Append the run's line to its estate's history.
pub fn append(reports: &Path, r: &RunRecord) -> Result<PathBuf, HistoryError> {
    let path = file(reports, &r.estate);
    let io = |source| HistoryError::Io {
        path: path.clone(),
        source,
    };
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(io)?;
    }
    let mut text = serde_json::to_string(&Line::of(r)).map_err(|e| io(e.into()))?;
    text.push('\n');
    fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(io)?;
    Ok(path)
}

/// Every run in an estate's history, oldest first; none when it has no
/// history yet.
pub fn read(reports: &Path, estate: &str) -> Result<Vec<Line>, HistoryError> {
    let path = file(reports, estate);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(HistoryError::Io { path, source }),
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|source| HistoryError::Line {
                path: path.clone(),
                line: i + 1,
                source,
            })
        })
        .collect()
}

/// One thing that changed between two runs of a stage.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Passed before, fails or errors now.
    TurnedRed {
        stage: StageId,
        was: Verdict,
        now: Verdict,
    },
    /// Failed or errored before, passes now.
    TurnedGreen {
        stage: StageId,
        was: Verdict,
        now: Verdict,
    },
    /// Its duration moved by more than [`MOVED`].
    Moved {
        stage: StageId,
        was_ms: u64,
        now_ms: u64,
    },
}

impl Change {
    pub fn stage(&self) -> StageId {
        match self {
            Change::TurnedRed { stage, .. }
            | Change::TurnedGreen { stage, .. }
            | Change::Moved { stage, .. } => *stage,
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::TurnedRed { stage, was, now } | Change::TurnedGreen { stage, was, now } => {
                let colour = if now == &Verdict::Pass {
                    "green"
                } else {
                    "red"
                };
                write!(
                    f,
                    "{} turned {colour}: {} before, {} now",
                    stage.title(),
                    was.word(),
                    now.word()
                )
            }
            Change::Moved {
                stage,
                was_ms,
                now_ms,
            } => {
                let share = (*now_ms as f64 - *was_ms as f64) / (*was_ms).max(1) as f64;
                let how = if share > 0.0 { "longer" } else { "shorter" };
                write!(
                    f,
                    "{} took {}, {:.0}% {how} than the {} before",
                    stage.title(),
                    human(Duration::from_millis(*now_ms)),
                    share.abs() * 100.0,
                    human(Duration::from_millis(*was_ms))
                )
            }
        }
    }
}

fn red(v: Verdict) -> bool {
    matches!(v, Verdict::Fail | Verdict::Error)
}

/// What changed from run `was` to run `now`, stage by stage in the page's
/// order: a stage that turned red or green, a duration that moved by more
/// than a quarter. A stage that did not run in either is left out.
pub fn changes(was: &Line, now: &Line) -> Vec<Change> {
    let mut out = Vec::new();
    for n in &now.stages {
        let Some(w) = was.stage(n.stage) else {
            continue;
        };
        let stage = n.stage;
        if w.verdict == Verdict::Pass && red(n.verdict) {
            out.push(Change::TurnedRed {
                stage,
                was: w.verdict,
                now: n.verdict,
            });
        } else if red(w.verdict) && n.verdict == Verdict::Pass {
            out.push(Change::TurnedGreen {
                stage,
                was: w.verdict,
                now: n.verdict,
            });
        }
        if let (Some(was_ms), Some(now_ms)) = (w.duration_ms, n.duration_ms) {
            if (now_ms as f64 - was_ms as f64).abs() > MOVED * was_ms as f64 {
                out.push(Change::Moved {
                    stage,
                    was_ms,
                    now_ms,
                });
            }
        }
    }
    out
}

/// The last run before `r` of like conditions, and what changed since.
#[derive(Debug, Clone, PartialEq)]
pub enum Since {
    Like {
        previous: Box<Line>,
        changes: Vec<Change>,
        /// Runs between the two under other conditions, not compared.
        passed_over: usize,
    },
    /// Earlier runs there are, none of like conditions.
    NoneAlike { earlier: usize },
}

/// What changed since the last run before `r` of like conditions
/// ([`Conditions::like`]); none when `r` is not in the history or is its
/// first line.
pub fn since(lines: &[Line], r: &RunRecord) -> Option<Since> {
    let at = lines.iter().rposition(|l| l.is(r))?;
    let now = &lines[at];
    let earlier = &lines[..at];
    if earlier.is_empty() {
        return None;
    }
    let Some(back) = earlier
        .iter()
        .rev()
        .position(|l| l.conditions.like(&now.conditions))
    else {
        return Some(Since::NoneAlike {
            earlier: earlier.len(),
        });
    };
    let previous = &earlier[earlier.len() - 1 - back];
    Some(Since::Like {
        previous: Box::new(previous.clone()),
        changes: changes(previous, now),
        passed_over: back,
    })
}

/// The sentence that opens a comparison: which run, under which
/// conditions, and how many were passed over.
pub fn since_lead(conditions: &Conditions, previous: &Line, passed_over: usize) -> String {
    let over = match passed_over {
        0 => String::new(),
        1 => " (1 later run under other conditions is not compared)".into(),
        n => format!(" ({n} later runs under other conditions are not compared)"),
    };
    format!(
        "Against the last run of like conditions ({}), at commit {} on {}{over}:",
        conditions.kind(),
        previous.commit,
        previous.started_at
    )
}

/// The sentence for a history with no run of like conditions.
pub fn none_alike(conditions: &Conditions, earlier: usize) -> String {
    format!(
        "No earlier run of like conditions ({}) to compare with: the {earlier} earlier run(s) in this estate's history ran under other conditions, and times are compared only between like runs.",
        conditions.kind()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(at: &str, stages: &[(StageId, Verdict, Option<u64>)]) -> Line {
        Line {
            started_at: at.into(),
            commit: "abc".into(),
            exit_code: 0,
            breaks: vec![],
            versions: Versions::default(),
            conditions: Conditions::default(),
            total_ms: 1,
            stages: stages
                .iter()
                .map(|&(stage, verdict, duration_ms)| StageLine {
                    stage,
                    verdict,
                    duration_ms,
                    measured: None,
                })
                .collect(),
        }
    }

    #[test]
    fn a_stage_turning_red_or_green_and_a_quarter_moved_are_changes() {
        use StageId::*;
        use Verdict::*;
        let was = line(
            "1",
            &[
                (ColdDeploy, Pass, Some(100_000)),
                (Migrate, Fail, Some(10_000)),
                (Rename, Pass, Some(20_000)),
                (Teardown, NotRun, None),
                (StrictProfile, Pass, Some(8_000)),
            ],
        );
        let now = line(
            "2",
            &[
                (ColdDeploy, Error, Some(124_000)),
                (Migrate, Pass, Some(7_400)),
                (Rename, Pass, Some(26_000)),
                (Teardown, Fail, Some(1_000)),
                (StrictProfile, NotRun, None),
            ],
        );
        let c = changes(&was, &now);
        let words: Vec<String> = c.iter().map(ToString::to_string).collect();
        assert_eq!(
            words,
            [
                "Cold deploy turned red: pass before, error now",
                "Migrate turned green: fail before, pass now",
                "Migrate took 7.4s, 26% shorter than the 10s before",
                "Rename took 26s, 30% longer than the 20s before",
            ]
        );
        assert_eq!(c[2].stage(), Migrate);
        assert!(changes(&now, &now).is_empty());
    }

    #[test]
    fn lines_append_read_back_and_find_the_run_before() {
        let d = tempfile::tempdir().unwrap();
        assert!(read(d.path(), "e").unwrap().is_empty());
        let mut r = crate::report::tests::record();
        append(d.path(), &r).unwrap();
        r.started_at = "2026-12-03T00:00:00Z".into();
        r.stages[0].duration_ms = Some(200_000);
        let path = append(d.path(), &r).unwrap();
        assert_eq!(path, d.path().join("history/e.jsonl"));
        let lines = read(d.path(), "e").unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1], Line::of(&r));
        let Some(Since::Like {
            previous,
            changes,
            passed_over: 0,
        }) = since(&lines, &r)
        else {
            panic!("{:?}", since(&lines, &r));
        };
        assert_eq!(*previous, lines[0]);
        assert_eq!(changes.len(), 1, "{changes:?}");
        // The first run has nothing before it; a run not in the history
        // has no place in it.
        r.started_at = "2026-12-02T00:00:00Z".into();
        assert!(since(&lines, &r).is_none());
        r.started_at = "never".into();
        assert!(since(&lines, &r).is_none());
        // Each line starts with its date, so sorted lines are runs in order.
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.lines().all(|l| l.starts_with("{\"started_at\":")));
    }

    #[test]
    fn times_are_compared_only_with_a_run_of_like_conditions() {
        let d = tempfile::tempdir().unwrap();
        let mut r = crate::report::tests::record();
        r.conditions.profile = "release".into();
        append(d.path(), &r).unwrap();
        // Two runs under other conditions: a debug build, then three at once.
        r.started_at = "2026-12-03T00:00:00Z".into();
        r.conditions.profile = "debug".into();
        append(d.path(), &r).unwrap();
        r.started_at = "2026-12-04T00:00:00Z".into();
        r.conditions.profile = "release".into();
        r.conditions.alongside = 2;
        append(d.path(), &r).unwrap();
        r.started_at = "2026-12-05T00:00:00Z".into();
        r.conditions.alongside = 0;
        r.stages[0].duration_ms = Some(1);
        append(d.path(), &r).unwrap();
        let lines = read(d.path(), "e").unwrap();
        match since(&lines, &r) {
            Some(Since::Like {
                previous,
                passed_over,
                changes,
            }) => {
                assert_eq!(*previous, lines[0]);
                assert_eq!(passed_over, 2);
                assert_eq!(changes.len(), 1, "{changes:?}");
                let lead = since_lead(&r.conditions, &previous, passed_over);
                assert!(
                    lead.starts_with("Against the last run of like conditions (release build, 2 cores, run alone), at commit ")
                        && lead.ends_with("(2 later runs under other conditions are not compared):"),
                    "{lead}"
                );
            }
            other => panic!("{other:?}"),
        }
        // The debug run has earlier runs, none of its kind.
        r.started_at = "2026-12-03T00:00:00Z".into();
        r.conditions.profile = "debug".into();
        assert_eq!(since(&lines, &r), Some(Since::NoneAlike { earlier: 1 }));
    }

    #[test]
    fn a_bad_line_is_named_by_file_and_line() {
        let d = tempfile::tempdir().unwrap();
        let path = file(d.path(), "e");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, "\n{not json}\n").unwrap();
        let e = read(d.path(), "e").unwrap_err().to_string();
        assert!(e.contains("history/e.jsonl:2: not a history line"), "{e}");
    }
}
