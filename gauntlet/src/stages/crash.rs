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
//!
//! Then the create_before_destroy window: a parameter renamed under
//! `create_before_destroy` on the estate twin, the apply killed the instant
//! the new object's create commits, before the old one is destroyed. Both
//! objects then carry the block's address marker and the record holds the
//! old one as the address's deposed object; one more apply must leave
//! exactly the new object, as stock's replacement does.

use std::fs;

use crate::choudoufu::{Action, Applied};
use crate::stage::Toggle;
use crate::substrate::Side;

use super::kit::{
    both_apply, both_plans, io, not_interrupted, remove_both, resurrect, same_as_stock,
    side_by_side, sorted, take_away, verdict, write_both, ADDRESS_KEY, ESTATE_KEY,
};
use super::{ColdOutcome, Lane, StageOutput, StagePlan, StepError};

/// The test hook that makes the engine SIGTERM itself after a commit.
const HOOK: &str = "CHOUDOUFU_TEST_SIGTERM_AFTER";
const FIRST: &str = "aws_ssm_parameter.crash_first";
const SECOND: &str = "aws_ssm_parameter.crash_second";
const FILE: &str = "crash.tf";
const WINDOW: &str = "aws_ssm_parameter.crash_rename";
const WINDOW_FILE: &str = "crash-window.tf";

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

/// The create_before_destroy block, naming its parameter `name`.
fn window_block(name: &str) -> String {
    format!(
        r#"# Renamed under create_before_destroy, the apply killed in between.
resource "aws_ssm_parameter" "crash_rename" {{
  name  = "{name}"
  type  = "String"
  value = "window"
  lifecycle {{
    create_before_destroy = true
  }}
}}
"#
    )
}

pub fn crash_mid_apply(lane: &Lane, _cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let estate = lane.estate;
    let e = lane.estate_twin();
    let o = lane.oracle_twin();
    let prefix = &estate.scratch_names().crash_parameters;
    let (first, second) = (format!("{prefix}/first"), format!("{prefix}/second"));

    clock.say(&format!(
        "Crash mid-apply: {FIRST} and {SECOND} added to both roots"
    ));
    write_both(lane, FILE, &blocks(prefix))?;
    let records_before = e.witness.records(&estate.name)?.len();
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
    let records_after = e.witness.records(&estate.name)?.len();
    let first_tags = e.witness.parameter_tags(&first)?;
    let first_there = e.witness.parameter_value(&first)?.is_some();
    let second_there = e.witness.parameter_value(&second)?.is_some();

    let tamper = take_away(lane, Toggle::CrashRemainder, &first)?;
    let (ep, sp) = both_plans(lane, "crash.tfplan")?;
    tamper.restore()?;
    let marked = first_tags
        .iter()
        .any(|(k, v)| k == ESTATE_KEY && *v == estate.name);
    let mut p = Vec::new();
    p.extend(not_interrupted(
        &killed,
        &format!("the apply under {HOOK}={FIRST}"),
    ));
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
            "an apply adding both was stopped by a real SIGTERM the engine sent itself ({HOOK}={FIRST}) the instant {FIRST}'s create committed, at -parallelism=1, exiting 1 with \"Operation interrupted\"; the AWS CLI finds {first} carrying {ESTATE_KEY}={} and no {second}; the interrupted apply wrote {} record(s) (records in the live store {records_before} -> {records_after}); stock was brought to the same position on the oracle twin with terraform apply {target}; from there {r}",
            estate.name,
            records_after.saturating_sub(records_before)
        )),
        _ => Err(p.join("; ")),
    };

    // The recovery apply converges.
    clock.say("Crash mid-apply: the recovery apply");
    let applied = both_apply(lane, "crash.tfplan")?;
    let tamper = take_away(lane, Toggle::CrashRecovered, &second)?;
    let value = e.witness.parameter_value(&second)?;
    let replan = lane.engine.plan(clock, &[])?;
    tamper.restore()?;
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
    remove_both(lane, FILE)?;
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
    let window = window(lane)?;
    Ok(StageOutput {
        assertions: vec![
            verdict(Toggle::CrashRemainder, remainder),
            verdict(Toggle::CrashRecovered, recovered),
            verdict(Toggle::CrashWindow, window),
        ],
        summary: format!("{FIRST} and {SECOND} (which reads the first) added to both roots"),
        plans: vec![StagePlan::Engine(ep), StagePlan::Stock(Side::Oracle, sp)],
    })
}

/// The create_before_destroy window on the estate twin: killed after the new
/// object's create, then one more apply.
fn window(lane: &Lane) -> Result<Result<String, String>, StepError> {
    let clock = lane.clock;
    let estate = lane.estate;
    let e = lane.estate_twin();
    let prefix = &estate.scratch_names().crash_parameters;
    let (old, new) = (format!("{prefix}/rename-a"), format!("{prefix}/rename-b"));
    let path = e.oracle.dir.join(WINDOW_FILE);
    let write = |name: &str| fs::write(&path, window_block(name)).map_err(io(&path));

    clock.say(&format!(
        "Crash mid-apply: {WINDOW} ({old}) under create_before_destroy, renamed to {new} and killed between its create and its destroy"
    ));
    write(&old)?;
    let (created, _) = lane.engine.apply(clock, false)?;
    write(&new)?;
    let killed = lane.engine.run_env(
        clock,
        &["apply", "-auto-approve", "-no-color", "-parallelism=1"],
        &[(HOOK, WINDOW)],
    )?;
    let mut p = Vec::new();
    if created.added != 1 {
        p.push(format!("adding {WINDOW} applied {created}"));
    }
    p.extend(not_interrupted(
        &killed,
        &format!("the replacing apply under {HOOK}={WINDOW}"),
    ));
    let address = |name: &str| -> Result<Option<String>, StepError> {
        Ok(e.witness
            .parameter_tags(name)?
            .into_iter()
            .find(|(k, _)| k == ADDRESS_KEY)
            .map(|(_, v)| v))
    };
    let (old_marker, new_marker) = (address(&old)?, address(&new)?);
    if old_marker.as_deref() != Some(WINDOW) || new_marker.as_deref() != Some(WINDOW) {
        p.push(format!(
            "after the kill {old} carries {ADDRESS_KEY}={} and {new} carries {}, where both should carry {WINDOW}",
            old_marker.as_deref().unwrap_or("(none or absent)"),
            new_marker.as_deref().unwrap_or("(none or absent)")
        ));
    }
    let deposed_after_kill = deposed(lane)?;
    if deposed_after_kill != [old.clone()] {
        p.push(format!(
            "after the kill the record of {WINDOW} holds deposed objects {deposed_after_kill:?}, where [{old:?}] was expected"
        ));
    }

    // One more apply: exactly the new object remains.
    let replan = lane.engine.plan(clock, &[])?;
    let (recovered, _) = lane.engine.apply(clock, false)?;
    let tamper = resurrect(lane, Toggle::CrashWindow, &old, "window", WINDOW)?;
    let old_there = e.witness.parameter_value(&old)?.is_some();
    let new_there = e.witness.parameter_value(&new)?.is_some();
    let deposed_after = deposed(lane)?;
    let after = lane.engine.plan(clock, &[])?;
    tamper.restore()?;
    let destroy_one = Applied {
        destroyed: 1,
        ..Applied::default()
    };
    if recovered != destroy_one {
        p.push(format!(
            "the apply after the kill: {recovered}, where {destroy_one} was expected"
        ));
    }
    if old_there || !new_there || !deposed_after.is_empty() || !after.is_empty() {
        p.push(format!(
            "after one more apply the AWS CLI finds {old}: {old_there} and {new}: {new_there}; the record's deposed objects: {deposed_after:?}; the next plan: {} ({})",
            after.summary_line(),
            after.describe()
        ));
    }

    // The block out again.
    fs::remove_file(&path).map_err(io(&path))?;
    let (cleaned, _) = lane.engine.apply(clock, false)?;
    if cleaned != destroy_one {
        p.push(format!(
            "with {WINDOW} removed again choudoufu applied {cleaned}"
        ));
    }
    let leg = replan
        .text
        .lines()
        .find(|l| l.contains(&format!("# {WINDOW} (deposed object ")))
        .map(str::trim)
        .unwrap_or("(no deposed-object line)")
        .to_owned();
    Ok(if p.is_empty() {
        Ok(format!(
            "the create_before_destroy window too: {WINDOW} renamed {old} -> {new} was killed by the engine's own hook ({HOOK}={WINDOW}) the instant the new object's create committed, at -parallelism=1, leaving both objects carrying {ADDRESS_KEY}={WINDOW} and the record holding {old} as the address's deposed object; the next plan read {} ('{leg}'), one more apply: {recovered}, after which exactly {new} remains, the record's deposed entry is cleared and the replan is empty ({})",
            replan.summary_line(),
            after.summary_line()
        ))
    } else {
        Err(p.join("; "))
    })
}

/// The IDs the record of [`WINDOW`] holds as deposed objects, as the
/// AWS CLI reads the record store in the live system.
fn deposed(lane: &Lane) -> Result<Vec<String>, StepError> {
    let record = lane
        .estate_twin()
        .witness
        .record_of(&lane.estate.name, WINDOW)?;
    Ok(record
        .into_iter()
        .flat_map(|r| r.record.deposed)
        .map(|d| d.id)
        .collect())
}
