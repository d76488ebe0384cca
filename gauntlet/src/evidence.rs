//! The evidence of one run, as data.
//!
//! The runner fills a [`RunRecord`]; the JSON record and the Markdown page
//! are independent renderings of it (see `report`).

use serde::{Deserialize, Serialize};

use crate::clock::Breakdown;
use crate::conditions::Conditions;
use crate::stage::{StageId, Toggle};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Pass,
    Fail,
    /// The stage started and could not finish (terraform or the witness failed).
    Error,
    NotRun,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Error => "error",
            Verdict::NotRun => "not run",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StageRecord {
    pub stage: StageId,
    pub title: String,
    pub headline: bool,
    pub verdict: Verdict,
    pub duration_ms: Option<u64>,
    /// What the stage did, in a sentence; for a stage that did not finish,
    /// why.
    pub detail: String,
    /// The BREAK names of the assertions that failed.
    pub failed: Vec<String>,
    /// Each assertion the stage made, in its order: the verdict is theirs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<Check>,
    /// Where the stage's time went and what moto served, for a stage that
    /// ran; records written before stages were measured have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<Measured>,
}

/// One assertion of a stage: its toggle (whose [`Toggle::bar`] is the
/// condition), whether it held, and what the witness saw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub toggle: Toggle,
    pub holds: bool,
    pub seen: String,
}

/// A stage's verdict that its assertions do not give.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{stage}: the record says {said} but its assertions give {given}")]
pub struct Disagrees {
    pub stage: String,
    pub said: &'static str,
    pub given: &'static str,
}

/// What one stage spent: the wall time the engine and stock terraform ran
/// (overlapping runs counted once), and the requests moto served on each
/// twin, the witness's reads included.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Measured {
    /// choudoufu and the provider it runs.
    pub engine_ms: u64,
    /// Stock terraform and the provider it runs, on either twin.
    pub stock_ms: u64,
    /// Requests moto served on the estate twin.
    pub estate_requests: u64,
    /// Requests moto served on the oracle twin.
    pub oracle_requests: u64,
}

impl StageRecord {
    pub fn not_run(stage: StageId, why: &str) -> StageRecord {
        StageRecord {
            stage,
            title: stage.title().to_owned(),
            headline: stage.headline(),
            verdict: Verdict::NotRun,
            duration_ms: None,
            detail: why.to_owned(),
            failed: Vec::new(),
            checks: Vec::new(),
            measured: None,
        }
    }

    /// The verdict the stage's assertions give: pass when each holds, fail
    /// when one does not. A stage that made none (not run, or stopped by an
    /// error) keeps the verdict it was given.
    pub fn given(&self) -> Verdict {
        if self.checks.is_empty() {
            self.verdict
        } else if self.checks.iter().all(|c| c.holds) {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }

    /// Refuse a record whose verdict, failed list and assertions disagree: a
    /// page never prints a pass over a condition that failed. A pass with
    /// no assertion behind it is refused too.
    pub fn agrees(&self) -> Result<(), Disagrees> {
        let failed: Vec<&str> = self
            .checks
            .iter()
            .filter(|c| !c.holds)
            .map(|c| c.toggle.name())
            .collect();
        let given = self.given();
        let bare_pass = self.verdict == Verdict::Pass && self.checks.is_empty();
        if given != self.verdict || self.failed.iter().map(String::as_str).ne(failed) || bare_pass {
            return Err(Disagrees {
                stage: self.title.clone(),
                said: self.verdict.word(),
                given: if bare_pass { "nothing" } else { given.word() },
            });
        }
        Ok(())
    }
}

fn terraform() -> String {
    "terraform".into()
}

/// A plan stock terraform or the engine showed during a stage.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlanRecord {
    pub stage: StageId,
    /// Which twin: `estate` or `oracle`.
    pub twin: String,
    /// Who planned: `terraform` or `choudoufu`.
    #[serde(default = "terraform")]
    pub tool: String,
    /// terraform's summary line: `Plan: 16 to add, 0 to change, 0 to destroy.`
    pub summary: String,
    /// Each resource change as `address: action[,action]`.
    pub changes: Vec<String>,
    /// `terraform show` of the plan file, or the engine's plan text.
    pub text: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Versions {
    pub emulator: String,
    pub witness: String,
    pub terraform: String,
    pub terraform_pin: String,
    pub aws_provider: String,
    pub engine: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    pub estate: String,
    pub description: String,
    pub set: String,
    pub lane: String,
    pub stages: Vec<StageRecord>,
    pub plans: Vec<PlanRecord>,
    pub commit: String,
    pub started_at: String,
    pub exit_code: i32,
    pub versions: Versions,
    /// The build, the machine and what ran beside the run.
    #[serde(default)]
    pub conditions: Conditions,
    pub timing: Breakdown,
    /// The BREAK toggles that were on.
    pub breaks: Vec<String>,
    /// Why the run stopped before its stages finished, if it did.
    pub error: Option<String>,
    pub reproduce: String,
    /// A corpus estate's repository, commit and folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<crate::corpus::Source>,
}

impl RunRecord {
    /// The verdict line of the page.
    pub fn verdict_line(&self) -> String {
        if let Some(e) = &self.error {
            let first = e.lines().next().unwrap_or("");
            return format!("Stopped. The run could not complete: {first}");
        }
        let failing: Vec<&str> = self
            .stages
            .iter()
            .filter(|s| matches!(s.verdict, Verdict::Fail | Verdict::Error))
            .map(|s| s.title.as_str())
            .collect();
        if !failing.is_empty() {
            return format!("Red. Failing: {}.", failing.join(", "));
        }
        let headline = self.stages.iter().filter(|s| s.headline).count();
        let not_run = self
            .stages
            .iter()
            .filter(|s| s.headline && s.verdict == Verdict::NotRun)
            .count();
        if not_run == 0 {
            "Clear. Every headline stage passes.".into()
        } else {
            format!(
                "Clear so far. Every stage that ran passes; {not_run} of {headline} headline stages are not run yet."
            )
        }
    }

    /// The exit code a run with these stages ends with.
    pub fn code(&self) -> i32 {
        if self.error.is_some() {
            2
        } else if self
            .stages
            .iter()
            .any(|s| matches!(s.verdict, Verdict::Fail | Verdict::Error))
        {
            1
        } else {
            0
        }
    }
}
