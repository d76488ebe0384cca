//! Plan with no local state: the estate twin's estate, as greenfield apply
//! left it, planned from a fresh copy of the root (no record store, no
//! schema cache, no state file; its lock file and `choudoufu init`, as a
//! new clone of the repository gets them) with only the live system
//! left.
//!
//! The plan in the working copy, with its record store, comes first; the
//! estate twin's moto log counts the requests each plan made, and both
//! figures go on the page. Stock terraform has no plan at all in this
//! position: it would create everything again.

use std::fs;
use std::path::Path;
use std::time::Instant;

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

pub fn plan_with_no_local_state(lane: &Lane, cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let e = lane.estate_twin();
    let estate = &lane.estate.name;

    clock.say("Plan with no local state: choudoufu plan with the record store");
    let records = lane.engine.records(estate).len();
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

    let live = e.witness.inventory(&lane.kinds)?;
    let (only_records, why) = super::found_by_record_only(&cold.estate_state, &live)?;
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
            let unexplained =
                super::unexplained_by_records(&plan.changes, &cold.estate_state, &only_records);
            let shape = if unexplained.is_empty() && with.is_empty() {
                Ok(format!(
                    "with the record store ({records} records) the plan is empty ({}); in a fresh copy of the root with no record store, no schema cache and no state file it proposes exactly {} ({}): {}{}; nothing else is created or changed, nothing is destroyed, every other instance bound by its identity and marker. {figures}. Stock terraform in this position has no plan at all",
                    with.summary_line(),
                    plan.describe(),
                    plan.summary_line(),
                    if only_records.is_empty() {
                        "nothing is found by a record alone".to_owned()
                    } else {
                        format!("{why}, so only a record finds them")
                    },
                    super::following_words(&plan.changes),
                ))
            } else {
                Err(format!(
                    "with the record store: {} ({}); in the fresh copy: {} ({}), where no lost record explains {}. {figures}",
                    with.summary_line(),
                    with.describe(),
                    plan.summary_line(),
                    plan.describe(),
                    super::kit::describe(&unexplained.into_iter().cloned().collect::<Vec<_>>())
                ))
            };
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

#[cfg(test)]
mod tests {
    use super::*;

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
