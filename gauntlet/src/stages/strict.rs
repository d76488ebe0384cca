//! Strict profile: the engine's opt-in refusals, every toggle on at once
//! (`secrets = "refuse"`, `no_source_create = "refuse"`,
//! `marker_repair = "never"`), on the estate twin after greenfield apply
//! left the estate there as the engine applied it.
//!
//! Four plans, each in the estate twin's working copy with a `strict` block
//! written into its `live.hcl`: the root alone (every toggle silent), then
//! the root with a scratch block setting a secret, with a scratch block
//! creating what only the record store could find again, and with one
//! object's address marker wrong. Each of the last three is refused once,
//! by address and by setting. The scratch blocks are never applied; the
//! working copy's `live.hcl` and the live system are put back afterwards.

use std::fs;

use crate::stage::Toggle;
use crate::witness::Handle;

use super::kit::{io, verdict, ADDRESS_KEY};
use super::{ColdOutcome, Lane, StageOutput, StepError};

/// The scratch file the refused blocks are written into.
const SCRATCH: &str = "strict_scratch.tf";

/// A scratch block whose config-only argument (one the provider cannot
/// read back, so only the record store could keep it) is set from a
/// sensitive variable.
const SECRET: &str = r#"variable "strict_break_glass" {
  type      = bool
  sensitive = true
  default   = true
}

resource "aws_s3_bucket" "strict_secret" {
  bucket        = "refaws-strict-secret"
  force_destroy = var.strict_break_glass
}
"#;
const SECRET_ADDR: &str = "aws_s3_bucket.strict_secret";

/// A scratch block creating an origin access control: its ID is
/// generated, it carries no tags, and no configuration names it. It names
/// nothing else, so it fits every estate's root; it is never applied.
const NO_SOURCE: &str = r#"resource "aws_cloudfront_origin_access_control" "strict_extra" {
  name                              = "strict-extra"
  origin_access_control_origin_type = "s3"
  signing_behavior                  = "always"
  signing_protocol                  = "sigv4"
}
"#;
const NO_SOURCE_ADDR: &str = "aws_cloudfront_origin_access_control.strict_extra";

/// The address written over the queue's own in the marker arm.
const WRONG_ADDRESS: &str = "aws_sqs_queue.retired";

/// The estate's `live` block with a `strict` block; a toggle's BREAK turns
/// its setting back off.
fn settings(lane: &Lane) -> String {
    let b = lane.breaks;
    let pick = |t: Toggle, on: &'static str, off: &'static str| if b.on(t) { off } else { on };
    format!(
        "live {{\n  estate = \"{}\"\n  strict {{\n    secrets          = \"{}\"\n    no_source_create = \"{}\"\n    marker_repair    = \"{}\"\n  }}\n}}\n",
        lane.estate.name,
        pick(Toggle::StrictSecrets, "refuse", "allow"),
        pick(Toggle::StrictCreate, "refuse", "allow"),
        pick(Toggle::StrictMarkers, "never", "repair"),
    )
}

/// The `Error: ` summaries of what the engine printed.
fn errors(output: &str) -> Vec<&str> {
    output
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("Error: "))
        .collect()
}

/// A plan that must be refused exactly once, with `summary`, naming
/// `addr` and the setting `setting`.
fn refused_once(
    result: Result<crate::choudoufu::EnginePlan, String>,
    summary: &str,
    addr: &str,
    setting: &str,
) -> Result<String, String> {
    let output = match result {
        Ok(plan) => {
            return Err(format!(
                "no refusal: the plan exited {} with {} ({})",
                plan.code,
                plan.summary_line(),
                plan.describe()
            ))
        }
        Err(output) => output,
    };
    let found = errors(&output);
    // Read as a person reads it: where the terminal wrapped a detail is
    // not what it says.
    let said = output.split_whitespace().collect::<Vec<_>>().join(" ");
    let named = said.contains(addr) && said.contains(setting);
    if found == [summary] && named {
        Ok(format!(
            "exactly one refusal, \"{summary}\", naming {addr} and {setting}"
        ))
    } else {
        Err(format!(
            "expected exactly one \"{summary}\" naming {addr} and {setting}; the plan exited 1 with {} error(s): {}",
            found.len(),
            found.join(" | ")
        ))
    }
}

pub fn strict_profile(lane: &Lane, _cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let live = lane.engine.dir.join("live.hcl");
    let original = fs::read_to_string(&live).map_err(io(&live))?;
    fs::write(&live, settings(lane)).map_err(io(&live))?;
    let result = arms(lane);
    let scratch = lane.engine.dir.join(SCRATCH);
    if scratch.exists() {
        fs::remove_file(&scratch).map_err(io(&scratch))?;
    }
    fs::write(&live, original).map_err(io(&live))?;
    result
}

fn arms(lane: &Lane) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let e = lane.estate_twin();
    let scratch = lane.engine.dir.join(SCRATCH);

    // Every toggle on, the root as it is: nothing to refuse.
    clock.say("Strict profile: choudoufu plan of the estate's root with every toggle on");
    let tamper = super::kit::unstamp(lane, Toggle::StrictSilent)?;
    let silent = lane.engine.plan_or_refusal(clock, &[]);
    tamper.restore()?;
    let records = e.witness.records(&lane.estate.name)?.len();
    let silent = match silent? {
        Ok(plan) if plan.is_empty() => Ok(format!(
            "the estate's own root plans empty with every toggle on ({}): all three are silent over its {records} records in the live store and its markers",
            plan.summary_line(),
        )),
        Ok(plan) => Err(format!(
            "the estate's root with every toggle on: {} ({})",
            plan.summary_line(),
            plan.describe()
        )),
        Err(output) => Err(format!(
            "the estate's root with every toggle on was refused: {}",
            errors(&output).join(" | ")
        )),
    };

    // A secret the record store would have to keep.
    clock.say("Strict profile: a block setting a secret the provider cannot read back");
    fs::write(&scratch, SECRET).map_err(io(&scratch))?;
    let secrets = refused_once(
        lane.engine.plan_or_refusal(clock, &[])?,
        "Strict profile: secret refused",
        SECRET_ADDR,
        "secrets = \"refuse\"",
    )
    .map(|s| {
        format!("{SECRET_ADDR} sets force_destroy, which the provider cannot read back, from a sensitive variable: {s}")
    });

    // A create only the record store could find again.
    clock.say("Strict profile: a block creating what only a record could find");
    fs::write(&scratch, NO_SOURCE).map_err(io(&scratch))?;
    let create = refused_once(
        lane.engine.plan_or_refusal(clock, &[])?,
        "Strict profile: create refused",
        NO_SOURCE_ADDR,
        "no_source_create = \"refuse\"",
    )
    .map(|s| format!("an origin access control, whose ID aws generates and which carries no tags, {NO_SOURCE_ADDR}: {s}"));
    fs::remove_file(&scratch).map_err(io(&scratch))?;

    // An object whose address marker is wrong: the manifest's queue, or
    // else the first object by ARN carrying this estate's markers.
    let object = lane.target(|k| k.stamped_queue.clone().map(Handle::Queue), None)?;
    let own = object
        .tags(&e.witness)?
        .and_then(|t| t.get(ADDRESS_KEY).cloned())
        .ok_or_else(|| StepError::Knob(format!("{object} carries no {ADDRESS_KEY}")))?;
    clock.say(&format!(
        "Strict profile: {object}'s {ADDRESS_KEY} rewritten to {WRONG_ADDRESS}"
    ));
    object.set_tag(&e.witness, ADDRESS_KEY, Some(WRONG_ADDRESS))?;
    let markers = lane.engine.plan_or_refusal(clock, &[]);
    object.set_tag(&e.witness, ADDRESS_KEY, Some(&own))?;
    let markers = refused_once(
        markers?,
        "Strict profile: marker repair refused",
        &own,
        "marker_repair = \"never\"",
    )
    .map(|s| format!("{object} marked {ADDRESS_KEY}={WRONG_ADDRESS}: {s}"));

    Ok(StageOutput {
        assertions: vec![
            verdict(Toggle::StrictSilent, silent),
            verdict(Toggle::StrictSecrets, secrets),
            verdict(Toggle::StrictCreate, create),
            verdict(Toggle::StrictMarkers, markers),
        ],
        summary: "every strict toggle on in the estate twin's live.hcl (secrets = \"refuse\", no_source_create = \"refuse\", marker_repair = \"never\"), four plans, none applied".into(),
        plans: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_refusal_is_judged_by_its_summary_address_and_setting() {
        let out = "\nError: Strict profile: create refused\n\n  on strict_scratch.tf line 1:\n\naws_cloudfront_origin_access_control.strict_extra would create ... (no_source_create = \"refuse\") refuses such creates.\n";
        let ok = refused_once(
            Err(out.into()),
            "Strict profile: create refused",
            NO_SOURCE_ADDR,
            "no_source_create = \"refuse\"",
        );
        assert!(ok.is_ok(), "{ok:?}");
        let twice = format!("{out}{out}");
        assert!(refused_once(
            Err(twice),
            "Strict profile: create refused",
            NO_SOURCE_ADDR,
            "no_source_create"
        )
        .is_err());
        assert!(refused_once(
            Err(out.into()),
            "Strict profile: create refused",
            SECRET_ADDR,
            "no_source_create"
        )
        .is_err());
        let wrapped = out.replace("(no_source_create = ", "(no_source_create =\n");
        let ok = refused_once(
            Err(wrapped),
            "Strict profile: create refused",
            NO_SOURCE_ADDR,
            "no_source_create = \"refuse\"",
        );
        assert!(
            ok.is_ok(),
            "a setting the terminal wrapped is still named: {ok:?}"
        );
    }
}
