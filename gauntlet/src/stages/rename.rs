//! Rename: a block renamed with a `moved` block on both twins.
//!
//! Stock terraform moves the instance in its state and plans zero churn. The
//! engine keeps no state, so the object is found by its identity as before
//! and the one thing that changes is the address marker it carries: the plan
//! is one in-place update confined to the `tofu-address` tag, never an add
//! and a destroy.

use std::collections::BTreeMap;

use engine::addr::ResourceInstanceAddr;

use crate::choudoufu::{Action, Applied, EnginePlan};
use crate::edit::{self, Block};
use crate::oracle::Plan;
use crate::stage::Toggle;
use crate::substrate::Side;
use crate::witness::Handle;

use super::kit::{
    both_apply, both_plans, edit_root, edit_root_saving, put_back, retag, verdict, ADDRESS_KEY,
    ESTATE_KEY,
};
use super::{both_ok, ColdOutcome, Lane, StageOutput, StagePlan, StepError, TwinView};

/// The lines of the engine's plan for `addr` that change something, other
/// than the `tags`/`tags_all` openings and the `tofu-address` lines: empty
/// when the update is confined to the address marker.
pub(super) fn beyond_the_marker(plan: &EnginePlan, addr: &str) -> Vec<String> {
    let opening = format!("# {addr} will be updated in-place");
    let mut out = Vec::new();
    let mut inside = false;
    for line in plan.text.lines() {
        let t = line.trim();
        if t.starts_with("# ") && !t.starts_with("# (") {
            inside = t == opening;
            continue;
        }
        if !inside {
            continue;
        }
        let changes = ["~ ", "+ ", "- ", "-/+ ", "+/- "]
            .iter()
            .any(|p| t.starts_with(p));
        let allowed = t.starts_with("~ resource ")
            || t.starts_with("~ tags ")
            || t.starts_with("~ tags_all ")
            || t.contains(&format!("\"{ADDRESS_KEY}\""));
        if changes && !allowed {
            out.push(t.to_owned());
        }
    }
    out
}

/// What is wrong with stock's plan of the moves `pairs` (from, to): it
/// must change nothing and record each move.
pub(super) fn stock_moves(plan: &Plan, pairs: &[(String, String)]) -> Vec<String> {
    let moved = |from: &str, to: &str| {
        plan.json["resource_changes"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["address"] == to && c["previous_address"] == from)
    };
    let missing: Vec<String> = pairs
        .iter()
        .filter(|(from, to)| !moved(from, to))
        .map(|(from, to)| format!("{from} -> {to}"))
        .collect();
    let mut p = Vec::new();
    if !plan.actions().is_empty() {
        p.push(format!(
            "stock's plan on the oracle twin changes {} ({})",
            describe_stock(plan),
            plan.summary_line()
        ));
    }
    if !missing.is_empty() {
        p.push(format!(
            "stock's plan on the oracle twin does not record the moves {}",
            missing.join(", ")
        ));
    }
    p
}

pub fn rename(lane: &Lane, cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let estate = lane.estate;
    let e = lane.estate_twin();
    let named = estate.knobs.renamed.is_some();
    let (from, to) = match &estate.knobs.renamed {
        Some(pair) => pair.clone(),
        None => {
            let Some(from) = super::derive::single_blocks(lane, cold, false)?
                .first()
                .map(|i| i.addr.clone())
            else {
                return super::calls::rename(lane, cold);
            };
            let to = ResourceInstanceAddr {
                name: super::derive::renamed(&from.name),
                ..from.clone()
            };
            (from, to)
        }
    };
    let (from, to) = (&from, &to);
    let inst = cold
        .estate_state
        .iter()
        .find(|i| i.addr == *from)
        .ok_or_else(|| {
            StepError::Knob(format!(
                "knobs.renamed_block: the estate twin's state holds no {from}"
            ))
        })?;
    let queue = inst.values["name"].as_str().unwrap_or_default().to_owned();
    // The object whose address marker moves: the manifest's queue, or the
    // derived block's object by ARN.
    let arn = inst.values["arn"].as_str().unwrap_or_default().to_owned();
    let object = match named {
        true => format!("queue {queue}"),
        false => arn.clone(),
    };

    clock.say(&format!(
        "Rename: {from} -> {to} with a moved block on both twins"
    ));
    both_ok(lane.both(|t: &TwinView| {
        // The moved block goes into the file that declared the block, as a
        // person would write it.
        let header = format!("resource \"{}\" \"{}\" {{", from.type_name, from.name);
        let renamed = edit_root(&t.oracle.dir, |s| {
            let mut out =
                edit::rename_block(s, &Block::resource(&from.type_name, &from.name), &to.name)?;
            if s.lines().any(|l| l.trim_end() == header) {
                out.push_str(&edit::moved_block(
                    &Block::resource(&from.type_name, &from.name).traversal(),
                    &Block::resource(&to.type_name, &to.name).traversal(),
                ));
            }
            Some(out)
        })?;
        if !renamed {
            return Err(StepError::Knob(format!(
                "knobs.renamed_block: no file of the {}'s root mentions {from}",
                t.side
            )));
        }
        Ok(())
    }))?;
    // The manifest's queue is renamed too (an identity change, so a
    // replacement); a block of a root with no manifest's knobs gains a tag
    // (an update beyond the marker).
    let tamper = lane.tamper(
        Toggle::RenameInPlace,
        || {
            edit_root_saving(&e.oracle.dir, |s| match named {
                true => edit::set_attribute(
                    s,
                    &Block::resource(&to.type_name, &to.name),
                    "name",
                    |_| format!("{:?}", format!("{queue}-renamed")),
                ),
                false => edit::add_tag(
                    s,
                    &Block::resource(&to.type_name, &to.name),
                    "gauntlet-rename",
                    "tampered",
                ),
            })
        },
        put_back,
    )?;
    let (ep, sp) = both_plans(lane, "rename.tfplan")?;
    tamper.restore()?;
    let applied = both_apply(lane, "rename.tfplan")?;

    let (from_s, to_s) = (from.to_string(), to.to_string());
    let mut p = Vec::new();
    if ep.changes != [(to_s.clone(), Action::Update)] {
        p.push(format!(
            "choudoufu proposed {} ({}) where one in-place update of {to} was expected",
            ep.describe(),
            ep.summary_line()
        ));
    } else {
        let beyond = beyond_the_marker(&ep, &to_s);
        if !beyond.is_empty() {
            p.push(format!(
                "choudoufu's update of {to} changes more than its address marker: {}",
                beyond.join(" | ")
            ));
        }
    }
    p.extend(stock_moves(&sp, &[(from_s.clone(), to_s.clone())]));
    let one = Applied {
        changed: 1,
        ..Applied::default()
    };
    if applied != one {
        p.push(format!(
            "choudoufu apply: {applied}, where {one} was expected"
        ));
    }
    let churn = if p.is_empty() {
        Ok(format!(
            "choudoufu proposed no add and no destroy: exactly {to} (update) ({}), confined to its {ADDRESS_KEY} tag rewritten from {from} to {to}; stock's plan on the oracle twin moves the instance with zero churn ({}), since stock writes no marker; apply: {applied}",
            ep.summary_line(),
            sp.summary_line()
        ))
    } else {
        Err(p.join("; "))
    };

    // The same queue, now carrying the new address, and nothing left to do.
    let handle = match named {
        true => Handle::Queue(queue.clone()),
        false => Handle::Object(arn.clone()),
    };
    let tamper = retag(
        lane,
        Toggle::RenameMarker,
        || Ok(handle.clone()),
        ADDRESS_KEY,
        Some(from_s.clone()),
        Some(to_s.clone()),
    )?;
    let tags = handle.tags(&e.witness)?;
    tamper.restore()?;
    let replan = lane.engine.plan(clock, &[])?;
    let marker = carries_new_address(&object, tags.as_ref(), &to_s, &estate.name, &replan);
    Ok(StageOutput {
        assertions: vec![
            verdict(Toggle::RenameInPlace, churn),
            verdict(Toggle::RenameMarker, marker),
        ],
        summary: match named {
            true => format!(
                "moved block: {from} -> {to} on both twins, its one reference renamed too"
            ),
            false => format!(
                "moved block: {from} -> {to} on both twins, a block of the root's own folder nothing refers to"
            ),
        },
        plans: vec![StagePlan::Engine(ep), StagePlan::Stock(Side::Oracle, sp)],
    })
}

/// Whether `object`, read back with `tags` after the rename, carries the
/// address marker `to` and the estate's marker, and the next plan is empty.
pub(super) fn carries_new_address(
    object: &str,
    tags: Option<&BTreeMap<String, String>>,
    to: &str,
    estate: &str,
    replan: &EnginePlan,
) -> Result<String, String> {
    let Some(t) = tags else {
        return Err(format!("the AWS CLI no longer finds {object}"));
    };
    let address = t.get(ADDRESS_KEY).map(String::as_str);
    let owner = t.get(ESTATE_KEY).map(String::as_str);
    if address == Some(to) && owner == Some(estate) && replan.is_empty() {
        Ok(format!(
            "the AWS CLI reads the same {object} carrying {ADDRESS_KEY}={to} and {ESTATE_KEY}={estate}; the next plan is empty ({})",
            replan.summary_line()
        ))
    } else {
        Err(format!(
            "{object} carries {ADDRESS_KEY}={} and {ESTATE_KEY}={}, where {to} and {estate} are expected; the next plan: {} ({})",
            address.unwrap_or("(none)"),
            owner.unwrap_or("(none)"),
            replan.summary_line(),
            replan.describe()
        ))
    }
}

/// Stock's plan as addresses and actions, moves included.
fn describe_stock(plan: &Plan) -> String {
    let v: Vec<String> = plan
        .changes()
        .into_iter()
        .map(|(a, x)| format!("{a} ({})", x.join(", ")))
        .collect();
    if v.is_empty() {
        "no resource changes".into()
    } else {
        v.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_confined_to_the_address_marker_is_recognised() {
        let text = r#"
  # aws_sqs_queue.dead_letters will be updated in-place
  # (moved from aws_sqs_queue.jobs_dlq)
  ~ resource "aws_sqs_queue" "dead_letters" {
        id                                = "http://127.0.0.1:5997/123456789012/mv-dlq"
      ~ tags                              = {
            "app"          = "x"
          ~ "tofu-address" = "aws_sqs_queue.jobs_dlq" -> "aws_sqs_queue.dead_letters"
            "tofu-estate"  = "mv"
        }
      ~ tags_all                          = {
          ~ "tofu-address" = "aws_sqs_queue.jobs_dlq" -> "aws_sqs_queue.dead_letters"
            # (2 unchanged elements hidden)
        }
        # (18 unchanged attributes hidden)
    }

Plan: 0 to add, 1 to change, 0 to destroy.
"#;
        let plan = EnginePlan::parse(2, text);
        assert!(beyond_the_marker(&plan, "aws_sqs_queue.dead_letters").is_empty());
        let more = text.replace(
            "        id ",
            "      ~ visibility_timeout_seconds = 30 -> 60\n        id ",
        );
        let plan = EnginePlan::parse(2, &more);
        assert_eq!(
            beyond_the_marker(&plan, "aws_sqs_queue.dead_letters"),
            ["~ visibility_timeout_seconds = 30 -> 60"]
        );
    }
}
