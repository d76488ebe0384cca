//! Plan with no local state: the estate twin's estate, as greenfield apply
//! left it, planned from a fresh copy of the root (no local folder, no
//! schema cache, no state file, a separate HOME; its lock file and
//! `choudoufu init`, as a new clone of the repository gets them) with only
//! the live system left, which holds the estate's record store.
//!
//! The promise is strict: the fresh copy plans "No changes.", nothing to
//! add, change or destroy, or the stage fails. The plan in the working
//! copy comes first and must be empty too; the estate twin's moto log
//! counts the requests each plan made, and both figures go on the page.
//! Stock terraform has no plan at all in this position: it would create
//! everything again.

use std::fs;
use std::path::Path;
use std::time::Instant;

use crate::choudoufu::EnginePlan;
use crate::stage::Toggle;

use super::kit::{io, verdict};
use super::{ColdOutcome, Lane, StageOutput, StagePlan, StepError};

/// Whether a line of moto's log is a request it served:
/// `127.0.0.1 - - [date] "POST / HTTP/1.1" 200 -`.
fn served(line: &str) -> bool {
    line.match_indices("\" ").any(|(i, _)| {
        let rest = &line.as_bytes()[i + 2..];
        rest.len() >= 4 && rest[..3].iter().all(u8::is_ascii_digit) && rest[3] == b' '
    })
}

/// How many requests moto has served so far.
fn requests(log: &Path) -> Result<usize, StepError> {
    let text = fs::read_to_string(log).map_err(io(log))?;
    Ok(text.lines().filter(|l| served(l)).count())
}

pub fn plan_with_no_local_state(
    lane: &Lane,
    _cold: &ColdOutcome,
) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let e = lane.estate_twin();
    let estate = &lane.estate.name;

    clock.say("Plan with no local state: choudoufu plan in the estate twin's working copy");
    let records = e.witness.records(estate)?.len();
    let before = requests(&e.moto_log)?;
    let started = Instant::now();
    let with = lane.engine.plan(clock, &[])?;
    let with_secs = started.elapsed().as_secs_f64();
    let with_requests = requests(&e.moto_log)? - before;

    let fresh = lane
        .engine
        .fresh_copy(clock, &lane.engine.beside_path("fresh-clone"))?;
    let tamper = super::kit::unstamp(lane, Toggle::NoLocalState)?;
    clock.say("Plan with no local state: choudoufu plan in a fresh copy of the root");
    let before = requests(&e.moto_log)?;
    let started = Instant::now();
    let without = fresh.plan_or_refusal(clock, &[]);
    let without_secs = started.elapsed().as_secs_f64();
    let without_requests = requests(&e.moto_log)? - before;
    tamper.restore()?;
    let without = without?;

    let figures = format!(
        "plan_requests_record_store={with_requests} plan_requests_no_local_state={without_requests} ratio={:.2}x (moto's log on the estate twin; {with_secs:.1}s and {without_secs:.1}s)",
        without_requests as f64 / with_requests.max(1) as f64
    );
    let mut plans = vec![StagePlan::Engine(with.clone())];
    let result = match without {
        Err(output) => Err(format!(
            "the plan in the fresh copy was refused: {}",
            output
                .lines()
                .filter(|l| l.trim_start().starts_with("Error: ") || l.contains(" binds "))
                .collect::<Vec<_>>()
                .join(" ")
        )),
        Ok(plan) => {
            let shape = judge(
                &with,
                &plan,
                records,
                &figures,
                &engine::record::ssm::place(estate),
            );
            plans.push(StagePlan::Engine(plan));
            shape
        }
    };
    Ok(StageOutput {
        assertions: vec![verdict(Toggle::NoLocalState, result)],
        summary: "the estate twin planned from a fresh copy of the root, only the live system left"
            .into(),
        plans,
    })
}

/// The verdict on the two plans: both "No changes.", the working copy's
/// (`with`) and the fresh copy's (`fresh`); `records` is how many records
/// the live store (`place`) holds.
fn judge(
    with: &EnginePlan,
    fresh: &EnginePlan,
    records: usize,
    figures: &str,
    place: &str,
) -> Result<String, String> {
    if with.is_empty() && fresh.is_empty() {
        return Ok(format!(
            "in the estate twin's working copy the plan is empty ({}); in a fresh copy of the root with no local folder, no schema cache, no state file and a separate HOME it is empty too ({}): nothing to add, change or destroy, every instance bound from the live system alone, the {records} records of the estate's record store read there ({place}). {figures}. Stock terraform in this position has no plan at all",
            with.summary_line(),
            fresh.summary_line(),
        ));
    }
    let mut p = Vec::new();
    if !with.is_empty() {
        p.push(format!(
            "in the working copy: {} ({})",
            with.summary_line(),
            with.describe()
        ));
    }
    if !fresh.is_empty() {
        p.push(format!(
            "in the fresh copy: {} ({}), where \"No changes.\" was required",
            fresh.summary_line(),
            fresh.describe()
        ));
    }
    Err(format!(
        "{}; the live store ({place}) holds {records} records. {figures}",
        p.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_no_changes_in_both_copies_passes() {
        let empty = EnginePlan::parse(
            0,
            "\nNo changes. Your infrastructure matches the configuration.\n",
        );
        let create = EnginePlan::parse(
            2,
            "  # aws_sns_topic_subscription.s will be created\n\nPlan: 1 to add, 0 to change, 0 to destroy.\n",
        );
        let ok = judge(
            &empty,
            &empty,
            6,
            "f",
            "SSM parameters under /choudoufu/records/e",
        );
        assert!(ok.as_ref().is_ok_and(|s| s.contains("6 records")), "{ok:?}");
        // A create of what only a record finds is no longer allowed.
        let err = judge(&empty, &create, 6, "f", "p").unwrap_err();
        assert!(
            err.contains("in the fresh copy: Plan: 1 to add")
                && err.contains("aws_sns_topic_subscription.s (create)"),
            "{err}"
        );
        assert!(judge(&create, &empty, 6, "f", "p")
            .unwrap_err()
            .contains("in the working copy"));
    }

    #[test]
    fn a_served_request_is_a_line_with_its_status() {
        assert!(served(
            "127.0.0.1 - - [03/Dec/2026 04:40:00] \"POST / HTTP/1.1\" 200 -"
        ));
        assert!(served(
            "127.0.0.1 - - [03/Dec/2026 04:40:00] \"GET /refaws-artifacts?tagging HTTP/1.1\" 404 -"
        ));
        assert!(!served(" * Running on http://127.0.0.1:5000"));
        assert!(!served("say \"hi\" 20 times"));
    }
}
