//! Crash mid-apply: an apply killed by a real SIGTERM between two creates.
//!
//! Both roots gain two parameters, the second reading the first's name, so
//! a walk at `-parallelism=1` cannot start the second before the first
//! commits. The engine sends itself SIGTERM the instant the first create
//! commits (its test hook); stock terraform is brought to the same position
//! on the oracle twin with `-target`. From there the next plan must be
//! exactly the remainder, as stock's is, and one more apply converges. The
//! two blocks are removed again afterwards, so the stages after this one see
//! the estate as it was.

use std::fs;

use crate::choudoufu::{Action, Applied};
use crate::stage::Toggle;
use crate::substrate::Side;

use super::day_two::{
    both_apply, both_plans, put_back_parameter, same_as_stock, side_by_side, sorted,
    take_parameter, verdict, ESTATE_KEY,
};
use super::{both_ok, ColdOutcome, Lane, StageOutput, StagePlan, StepError, TwinView};

/// The test hook that makes the engine SIGTERM itself after a commit.
const HOOK: &str = "CHOUDOUFU_TEST_SIGTERM_AFTER";
const FIRST: &str = "aws_ssm_parameter.crash_first";
const SECOND: &str = "aws_ssm_parameter.crash_second";
const FILE: &str = "crash.tf";

/// The two blocks, naming their parameters under `prefix`.
fn blocks(prefix: &str) -> String {
    format!(
        r#"# Two creates in a row: the second reads the first's name.
resource "aws_ssm_parameter" "crash_first" {{
  name  = "{prefix}/first"
  type  = "String"
  value = "first"
}}

resource "aws_ssm_parameter" "crash_second" {{
  name  = "{prefix}/second"
  type  = "String"
  value = aws_ssm_parameter.crash_first.name
}}
"#
    )
}

pub fn crash_mid_apply(lane: &Lane, _cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let estate = lane.estate;
    let breaks = lane.breaks;
    let e = lane.estate_twin();
    let o = lane.oracle_twin();
    let prefix = &estate.knobs.crash_parameters;
    let (first, second) = (format!("{prefix}/first"), format!("{prefix}/second"));

    clock.say(&format!(
        "Crash mid-apply: {FIRST} and {SECOND} added to both roots"
    ));
    both_ok(lane.both(|t: &TwinView| {
        let path = t.oracle.dir.join(FILE);
        fs::write(&path, blocks(prefix)).map_err(|source| StepError::Io { path, source })
    }))?;
    let records_before = lane.engine.records(&estate.name).len();
    let target = format!("-target={FIRST}");
    let (killed, stock) = side_by_side(
        || {
            lane.engine.run_env(
                clock,
                &["apply", "-auto-approve", "-no-color", "-parallelism=1"],
                &[(HOOK, FIRST)],
            )
        },
        || {
            o.oracle.run(
                clock,
                &[
                    "apply",
                    "-no-color",
                    "-input=false",
                    "-auto-approve",
                    &target,
                ],
            )
        },
    );
    let (killed, _) = (killed?, stock?);
    let records_after = lane.engine.records(&estate.name).len();
    let first_tags = e.witness.parameter_tags(&first)?;
    let first_there = e.witness.parameter_value(&first)?.is_some();
    let second_there = e.witness.parameter_value(&second)?.is_some();

    let saved_first = if breaks.on(Toggle::CrashRemainder) {
        Some(take_parameter(&e.witness, &first)?)
    } else {
        None
    };
    let (ep, sp) = both_plans(lane, "crash.tfplan")?;
    if let Some(saved) = &saved_first {
        put_back_parameter(&e.witness, &first, saved)?;
    }
    let marked = first_tags
        .iter()
        .any(|(k, v)| k == ESTATE_KEY && *v == estate.name);
    let said = format!("{}{}", killed.stdout, killed.stderr);
    let mut p = Vec::new();
    if killed.code != 1 || !said.contains("Operation interrupted") {
        p.push(format!(
            "the apply under {HOOK}={FIRST} exited {} without saying it was interrupted: {}",
            killed.code,
            said.trim().lines().last().unwrap_or("")
        ));
    }
    if !first_there || !marked || second_there {
        p.push(format!(
            "after the kill the AWS CLI finds {first}: {}, carrying {ESTATE_KEY}={}: {marked}, and {second}: {second_there}",
            first_there, estate.name
        ));
    }
    let remainder = same_as_stock(&ep, &sp, &[(SECOND.to_owned(), Action::Create)]);
    if let Err(r) = &remainder {
        p.push(r.clone());
    }
    let remainder = match (p.is_empty(), remainder) {
        (true, Ok(r)) => Ok(format!(
            "an apply adding both was stopped by a real SIGTERM the engine sent itself ({HOOK}={FIRST}) the instant {FIRST}'s create committed, at -parallelism=1, exiting 1 with \"Operation interrupted\"; the AWS CLI finds {first} carrying {ESTATE_KEY}={} and no {second}; the interrupted apply wrote {} record(s) (files {records_before} -> {records_after}); stock was brought to the same position on the oracle twin with terraform apply {target}; from there {r}",
            estate.name,
            records_after.saturating_sub(records_before)
        )),
        _ => Err(p.join("; ")),
    };

    // The recovery apply converges.
    clock.say("Crash mid-apply: the recovery apply");
    let applied = both_apply(lane, "crash.tfplan")?;
    let saved_second = if breaks.on(Toggle::CrashRecovered) {
        Some(take_parameter(&e.witness, &second)?)
    } else {
        None
    };
    let value = e.witness.parameter_value(&second)?;
    let replan = lane.engine.plan(clock, &[])?;
    if let Some(saved) = &saved_second {
        put_back_parameter(&e.witness, &second, saved)?;
    }
    let one = Applied {
        added: 1,
        ..Applied::default()
    };
    let mut p = Vec::new();
    if applied != one {
        p.push(format!(
            "the recovery apply: {applied}, where {one} was expected"
        ));
    }
    if value.as_deref() != Some(first.as_str()) {
        p.push(format!(
            "the AWS CLI reads {second} = {:?}, where {first:?} (the first's name) was expected",
            value.unwrap_or_default()
        ));
    }
    if !replan.is_empty() {
        p.push(format!(
            "the next plan: {} ({})",
            replan.summary_line(),
            replan.describe()
        ));
    }

    // Both blocks out again, on both twins.
    both_ok(lane.both(|t: &TwinView| {
        let path = t.oracle.dir.join(FILE);
        fs::remove_file(&path).map_err(|source| StepError::Io { path, source })
    }))?;
    let (cp, sp_clean) = both_plans(lane, "crash-clean.tfplan")?;
    let cleaned = both_apply(lane, "crash-clean.tfplan")?;
    let both_gone = sorted(cp.changes.clone())
        == [
            (FIRST.to_owned(), Action::Delete),
            (SECOND.to_owned(), Action::Delete),
        ]
        && cleaned.destroyed == 2;
    if !both_gone {
        p.push(format!(
            "with both blocks removed again choudoufu proposed {} and applied {cleaned}",
            cp.describe()
        ));
    }
    let recovered = if p.is_empty() {
        Ok(format!(
            "the recovery apply: {applied}; the AWS CLI reads {second} = {first:?}, and the next plan is empty ({}); both blocks removed again afterwards: {} on the estate twin, as stock's {} on the oracle twin",
            replan.summary_line(),
            cleaned,
            sp_clean.summary_line()
        ))
    } else {
        Err(p.join("; "))
    };
    Ok(StageOutput {
        assertions: vec![
            verdict(Toggle::CrashRemainder, remainder),
            verdict(Toggle::CrashRecovered, recovered),
        ],
        summary: format!("{FIRST} and {SECOND} (which reads the first) added to both roots"),
        plans: vec![StagePlan::Engine(ep), StagePlan::Stock(Side::Oracle, sp)],
    })
}
