//! Replace with create_before_destroy: a parameter whose content-hashed name
//! changes, on both twins.
//!
//! A name is an SSM parameter's identity, so a new name is a replacement;
//! under `create_before_destroy` stock creates the new object first and then
//! destroys the old one, deposed. The engine keeps no state: the old object
//! is found through the block's address marker (and its record), so the plan
//! must be stock's replacement, not a create beside an orphan destroy, and
//! the apply must keep stock's order. The block is removed again afterwards,
//! so the stages after this one see the estate as it was.

use std::fs;

use sha2::{Digest, Sha256};

use crate::choudoufu::{Action, Applied, EnginePlan, Output};
use crate::oracle::Plan;
use crate::stage::Toggle;
use crate::substrate::Side;
use crate::witness::StoredRecord;

use super::kit::{
    both_apply, both_plans, io, put_back_parameter, remove_both, resurrect, same_as_stock,
    side_by_side, take_parameter, verdict, write_both, ADDRESS_KEY, ESTATE_KEY,
};
use super::{ColdOutcome, Lane, StageOutput, StagePlan, StepError};

const ADDR: &str = "aws_ssm_parameter.hashed";
const FILE: &str = "replace.tf";
const BEFORE: &str = "content-a";
const AFTER: &str = "content-b";
const LIFECYCLE: &str = "  lifecycle {\n    create_before_destroy = true\n  }\n";

/// The block, naming its parameter under `prefix` by a hash of `content`,
/// with its `create_before_destroy` lifecycle when `cbd`.
fn block(prefix: &str, content: &str, cbd: bool) -> String {
    let lifecycle = if cbd { LIFECYCLE } else { "" };
    format!(
        r#"# A parameter named by a hash of its content: new content, new object,
# created before the old one is destroyed.
resource "aws_ssm_parameter" "hashed" {{
  name  = "{prefix}/hashed-${{substr(sha256("{content}"), 0, 8)}}"
  type  = "String"
  value = "{content}"
{lifecycle}}}
"#
    )
}

/// The parameter name the block gives `content`.
fn hashed_name(prefix: &str, content: &str) -> String {
    let digest = Sha256::digest(content.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}/hashed-{}", &hex[..8])
}

/// Where the new object's create completes and the deposed object's destroy
/// starts in an apply log: both lines, the create first.
fn order(log: &str) -> Result<(Cited, Cited), String> {
    let lines: Vec<&str> = log.lines().collect();
    let created = lines
        .iter()
        .position(|l| l.starts_with(&format!("{ADDR}: Creation complete")));
    let destroying = lines.iter().position(|l| {
        l.starts_with(&format!("{ADDR} (deposed object ")) && l.contains("Destroying...")
    });
    let cite = |i: usize| Cited {
        line: i + 1,
        text: lines[i].trim().to_owned(),
    };
    match (created, destroying) {
        (Some(c), Some(d)) if c < d => Ok((cite(c), cite(d))),
        (Some(c), Some(d)) => Err(format!(
            "the deposed object's destroy starts ({}) before the new object's creation completes ({})",
            cite(d),
            cite(c)
        )),
        (c, d) => Err(format!(
            "the log shows the new object's creation complete: {}, the deposed object's destroy: {}",
            c.map_or("no".into(), |c| cite(c).to_string()),
            d.map_or("no".into(), |d| cite(d).to_string())
        )),
    }
}

/// A line of a log, quoted with its number.
#[derive(Debug)]
struct Cited {
    line: usize,
    text: String,
}

impl std::fmt::Display for Cited {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: \"{}\"", self.line, self.text)
    }
}

/// Whether a plan text is terraform's create-before-destroy replacement of
/// [`ADDR`]: the heading, the `+/-` symbol and its legend, one add and one
/// destroy, and no orphan destroy beside it.
fn plan_shape(text: &str) -> Result<(), String> {
    let wanted = [
        format!("# {ADDR} must be replaced"),
        "+/- create replacement and then destroy".to_owned(),
        "+/- resource \"aws_ssm_parameter\" \"hashed\"".to_owned(),
        "Plan: 1 to add, 0 to change, 1 to destroy.".to_owned(),
    ];
    let missing: Vec<&String> = wanted
        .iter()
        .filter(|w| !text.contains(w.as_str()))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "it lacks {}",
            missing
                .iter()
                .map(|m| format!("{m:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if text.contains("orphan") {
        return Err("it destroys an orphan beside the replacement".into());
    }
    Ok(())
}

pub fn replace_with_create_before_destroy(
    lane: &Lane,
    _cold: &ColdOutcome,
) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let estate = lane.estate;
    let e = lane.estate_twin();
    let o = lane.oracle_twin();
    let prefix = &estate.scratch_names().replaced_parameters;
    let (old, new) = (hashed_name(prefix, BEFORE), hashed_name(prefix, AFTER));

    clock.say(&format!(
        "Replace with create_before_destroy: {ADDR} ({old}) added to both roots"
    ));
    write_both(lane, FILE, &block(prefix, BEFORE, true))?;
    let (added_plan, _) = both_plans(lane, "replace-add.tfplan")?;
    let added = both_apply(lane, "replace-add.tfplan")?;
    let one_added = Applied {
        added: 1,
        ..Applied::default()
    };
    if added_plan.changes != [(ADDR.to_owned(), Action::Create)] || added != one_added {
        return Err(StepError::Knob(format!(
            "knobs.replaced_parameters: adding {ADDR} planned {} and applied {added}",
            added_plan.describe()
        )));
    }

    clock.say(&format!(
        "Replace with create_before_destroy: its content changes, so its name: {old} -> {new}"
    ));
    write_both(lane, FILE, &block(prefix, AFTER, true))?;
    let tamper = lane.tamper(
        Toggle::ReplacePlan,
        || unbind(lane, &old),
        |held| held.put_back(lane, &old),
    )?;
    let (ep, sp) = both_plans(lane, "replace.tfplan")?;
    tamper.restore()?;
    let plan = judge_plan(&ep, &sp);

    // The apply at -parallelism=1, so the log's order is the walk's.
    let tamper = lane.tamper(
        Toggle::ReplaceOrder,
        || cbd(lane, false),
        |()| cbd(lane, true),
    )?;
    let (engine_log, stock_log) = side_by_side(
        || {
            lane.engine.run(
                clock,
                &["apply", "-auto-approve", "-no-color", "-parallelism=1"],
            )
        },
        || {
            o.oracle.run(
                clock,
                &[
                    "apply",
                    "-no-color",
                    "-input=false",
                    "-parallelism=1",
                    "replace.tfplan",
                ],
            )
        },
    );
    tamper.restore()?;
    let (engine_log, stock_log) = (engine_log?, stock_log?);
    let order = judge_order(&engine_log, &stock_log);

    // Exactly the new object remains, carrying the block's markers.
    let tamper = resurrect(lane, Toggle::ReplaceEnd, &old, BEFORE, ADDR)?;
    let old_there = e.witness.parameter_value(&old)?.is_some();
    let new_value = e.witness.parameter_value(&new)?;
    let new_tags = e.witness.parameter_tags(&new)?;
    let stock_old_there = o.witness.parameter_value(&old)?.is_some();
    let replan = lane.engine.plan(clock, &[])?;
    tamper.restore()?;
    let mut p = Vec::new();
    let tag = |k: &str| {
        new_tags
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    if old_there || stock_old_there {
        p.push(format!(
            "the AWS CLI still finds {old} on the {}",
            if old_there {
                "estate twin"
            } else {
                "oracle twin"
            }
        ));
    }
    if new_value.as_deref() != Some(AFTER)
        || tag(ESTATE_KEY) != Some(estate.name.as_str())
        || tag(ADDRESS_KEY) != Some(ADDR)
    {
        p.push(format!(
            "the AWS CLI reads {new} = {:?} carrying {ESTATE_KEY}={} and {ADDRESS_KEY}={}",
            new_value.unwrap_or_default(),
            tag(ESTATE_KEY).unwrap_or("(none)"),
            tag(ADDRESS_KEY).unwrap_or("(none)")
        ));
    }
    if !replan.is_empty() {
        p.push(format!(
            "the next plan: {} ({})",
            replan.summary_line(),
            replan.describe()
        ));
    }

    // The block out again, on both twins.
    remove_both(lane, FILE)?;
    let (cp, sp_clean) = both_plans(lane, "replace-clean.tfplan")?;
    let cleaned = both_apply(lane, "replace-clean.tfplan")?;
    if cp.changes != [(ADDR.to_owned(), Action::Delete)] || cleaned.destroyed != 1 {
        p.push(format!(
            "with the block removed again choudoufu proposed {} and applied {cleaned}",
            cp.describe()
        ));
    }
    let end = if p.is_empty() {
        Ok(format!(
            "the AWS CLI finds no {old} on either twin and reads {new} = {AFTER:?} carrying {ESTATE_KEY}={} and {ADDRESS_KEY}={ADDR}; the next plan is empty ({}); the block removed again afterwards: {cleaned} on the estate twin, as stock's {} on the oracle twin",
            estate.name,
            replan.summary_line(),
            sp_clean.summary_line()
        ))
    } else {
        Err(p.join("; "))
    };
    Ok(StageOutput {
        assertions: vec![
            verdict(Toggle::ReplacePlan, plan),
            verdict(Toggle::ReplaceOrder, order),
            verdict(Toggle::ReplaceEnd, end),
        ],
        summary: format!(
            "{ADDR} under create_before_destroy, its content-hashed name changed ({old} -> {new}) on both twins"
        ),
        plans: vec![StagePlan::Engine(ep), StagePlan::Stock(Side::Oracle, sp)],
    })
}

/// The plan assertion: stock's replacement on both twins.
fn judge_plan(ep: &EnginePlan, sp: &Plan) -> Result<String, String> {
    let mut p = Vec::new();
    let same = same_as_stock(ep, sp, &[(ADDR.to_owned(), Action::Replace)]);
    if let Err(s) = &same {
        p.push(s.clone());
    }
    if let Err(why) = plan_shape(&ep.text) {
        p.push(format!(
            "choudoufu's plan is not a create-before-destroy replacement: {why}"
        ));
    }
    if let Err(why) = plan_shape(&sp.text) {
        p.push(format!(
            "stock's plan is not a create-before-destroy replacement: {why}"
        ));
    }
    let stock_order = sp.json["resource_changes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["address"] == ADDR)
        .map(|c| c["change"]["actions"].clone());
    if stock_order != Some(serde_json::json!(["create", "delete"])) {
        p.push(format!(
            "stock's plan orders {ADDR}'s actions {}",
            stock_order.unwrap_or_default()
        ));
    }
    match (p.is_empty(), same) {
        (true, Ok(s)) => Ok(format!(
            "{s}: '{ADDR} must be replaced', +/- create replacement and then destroy, 1 add and 1 destroy (stock's actions [\"create\", \"delete\"]), with no orphan destroy beside it: the old parameter carries the block's {ADDRESS_KEY} marker, which binds it"
        )),
        _ => Err(p.join("; ")),
    }
}

/// The order assertion: the new object's create completes before the
/// deposed object's destroy starts, in both logs.
fn judge_order(engine: &Output, stock: &str) -> Result<String, String> {
    let log = format!("{}{}", engine.stdout, engine.stderr);
    let mut p = Vec::new();
    if engine.code != 0 {
        p.push(format!(
            "choudoufu apply -parallelism=1 exited {}: {}",
            engine.code,
            log.trim().lines().last().unwrap_or("")
        ));
    }
    let ours = order(&engine.stdout).map_err(|e| format!("choudoufu's apply: {e}"));
    let theirs = order(stock).map_err(|e| format!("stock's apply: {e}"));
    let applied = Applied::parse(&engine.stdout);
    let want = Applied {
        added: 1,
        destroyed: 1,
        ..Applied::default()
    };
    if applied != Some(want) {
        p.push(format!(
            "choudoufu's apply: {}, where {want} was expected",
            applied.map_or("no Apply complete! line".into(), |a| a.to_string())
        ));
    }
    for r in [&ours, &theirs] {
        if let Err(e) = r {
            p.push(e.clone());
        }
    }
    match (p.is_empty(), ours, theirs) {
        (true, Ok((c, d)), Ok((sc, sd))) => Ok(format!(
            "at -parallelism=1 choudoufu's apply log shows the new object's creation complete ({c}) before the deposed object's destroy starts ({d}), the order stock's apply shows on the oracle twin ({sc}, then {sd}); apply: {want}"
        )),
        _ => Err(p.join("; ")),
    }
}

/// The estate twin's block after the change, with `create_before_destroy`
/// or without it.
fn cbd(lane: &Lane, on: bool) -> Result<(), StepError> {
    let path = lane.estate_twin().oracle.dir.join(FILE);
    let text = block(&lane.estate.scratch_names().replaced_parameters, AFTER, on);
    fs::write(&path, text).map_err(io(&path))
}

/// What [`unbind`] took away: the old parameter and its record's
/// parameters in the live store.
struct Held {
    parameter: super::kit::Saved,
    record: Option<StoredRecord>,
}

impl Held {
    fn put_back(self, lane: &Lane, old: &str) -> Result<(), StepError> {
        let w = &lane.estate_twin().witness;
        w.delete_parameter(old)?;
        put_back_parameter(w, old, &self.parameter)?;
        if let Some(record) = &self.record {
            w.put_back(record)?;
        }
        Ok(())
    }
}

/// Take away what binds the old parameter to the block: its address marker
/// (the parameter is put back without it) and its record in the live
/// store.
fn unbind(lane: &Lane, old: &str) -> Result<Held, StepError> {
    let w = &lane.estate_twin().witness;
    let parameter = take_parameter(w, old)?;
    let unmarked: Vec<(String, String)> = parameter
        .tags
        .iter()
        .filter(|(k, _)| k != ADDRESS_KEY)
        .cloned()
        .collect();
    w.put_parameter_tagged(old, &parameter.value, &unmarked)?;
    let record = match w.record_of(&lane.estate.name, ADDR)? {
        Some(r) => {
            w.take_record(&r)?;
            Some(r)
        }
        None => None,
    };
    Ok(Held { parameter, record })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_is_the_one_terraform_computes() {
        // substr(sha256("content-a"), 0, 8) in terraform console.
        assert_eq!(hashed_name("/p", "content-a"), "/p/hashed-f245bf69");
        assert!(block("/p", "content-a", true)
            .contains("name  = \"/p/hashed-${substr(sha256(\"content-a\"), 0, 8)}\""));
    }

    #[test]
    fn the_order_is_read_from_the_apply_log() {
        let good = "aws_ssm_parameter.hashed: Creating...\n\
                    aws_ssm_parameter.hashed: Creation complete after 0s [id=/p/b]\n\
                    aws_ssm_parameter.hashed (deposed object 1a2b3c4d): Destroying... [id=/p/a]\n";
        let (c, d) = order(good).unwrap();
        assert_eq!((c.line, d.line), (2, 3));
        assert_eq!(
            format!("{c}, then {d}"),
            "line 2: \"aws_ssm_parameter.hashed: Creation complete after 0s [id=/p/b]\", then line 3: \"aws_ssm_parameter.hashed (deposed object 1a2b3c4d): Destroying... [id=/p/a]\""
        );
        let bad = "aws_ssm_parameter.hashed (deposed object 1a2b3c4d): Destroying... [id=/p/a]\n\
                   aws_ssm_parameter.hashed: Creation complete after 0s [id=/p/b]\n";
        assert!(order(bad)
            .unwrap_err()
            .contains("before the new object's creation"));
        let destroy_first = "aws_ssm_parameter.hashed: Destroying... [id=/p/a]\n\
                             aws_ssm_parameter.hashed: Creation complete after 0s [id=/p/b]\n";
        assert!(order(destroy_first).unwrap_err().contains("destroy: no"));
    }

    #[test]
    fn the_lifecycle_block_comes_off_and_back() {
        let on = block("/p", "content-b", true);
        let off = block("/p", "content-b", false);
        assert!(on.contains("create_before_destroy = true"));
        assert_eq!(off, on.replace(LIFECYCLE, ""));
        assert!(off.ends_with("  value = \"content-b\"\n}\n"), "{off}");
    }
}
