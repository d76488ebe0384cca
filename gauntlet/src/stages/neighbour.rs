//! Two estates on one twin: the estate's `[neighbour]`, a second root whose
//! estate owns no whole object of this one's, only parts of them (a queue's
//! policy, a subscription to a topic, a policy attached to a role, one tag
//! on a table), applied by the engine on the estate twin greenfield left.
//!
//! Neither plan may propose touching the other's things: with the
//! neighbour's parts in place this estate's plan is empty (its table block
//! leaves the neighbour's tag alone, the boundary stock terraform keeps the
//! same way), and so is the neighbour's. A block of the neighbour's naming
//! one of this estate's whole objects is refused by that estate's name. The
//! neighbour's teardown removes exactly its parts, and this estate's objects
//! and its own parts stay as they were. Stock terraform has no estate
//! boundary to compare with: its two states simply do not know each other.

use std::collections::BTreeMap;
use std::fs;

use crate::choudoufu::Applied;
use crate::estate::{Neighbour, RawNeighbour};
use crate::stage::Toggle;
use crate::witness::Witness;

use super::kit::{edit_root, io, verdict, ESTATE_KEY};
use super::{ColdOutcome, Lane, StageOutput, StagePlan, StepError};

/// The neighbour's block naming one of this estate's queues.
const TAKEN: &str = "aws_sqs_queue.taken";
const TAKEN_FILE: &str = "taken.tf";
/// The boundary in this estate's root, which BREAK_NEIGHBOUR_BOUNDARY drops.
const BOUNDARY: &str = "ignore_changes = [tags[\"owner\"]]";
const NO_BOUNDARY: &str = "ignore_changes = []";

/// What the witness sees of the neighbour's parts of this estate's objects.
#[derive(Debug, Clone, PartialEq)]
struct Parts {
    queue_policy: bool,
    endpoints: Vec<String>,
    attached: Vec<String>,
    table_tags: BTreeMap<String, String>,
}

impl Parts {
    fn read(w: &Witness, n: &RawNeighbour) -> Result<Parts, StepError> {
        Ok(Parts {
            queue_policy: w.queue_policy(&n.queue_policy)?.is_some(),
            endpoints: w.topic_endpoints(&n.subscription_topic)?,
            attached: w.attached_policies(&n.attachment_role)?,
            table_tags: w.table_tags(&n.table)?,
        })
    }

    /// Which of the neighbour's parts are there, in words; empty when none.
    fn present(&self, n: &RawNeighbour, queue_arn: &str) -> Vec<String> {
        let mut v = Vec::new();
        if self.queue_policy {
            v.push(format!("{}'s policy", n.queue_policy));
        }
        if self.endpoints.iter().any(|e| e == queue_arn) {
            v.push(format!(
                "{}'s subscription of {}",
                n.subscription_topic, n.subscription_queue
            ));
        }
        if self.attached.contains(&n.attachment_policy) {
            v.push(format!(
                "{} attached to {}",
                n.attachment_policy, n.attachment_role
            ));
        }
        if self.table_tags.get(&n.table_tag) == Some(&n.table_tag_value) {
            v.push(format!(
                "{}={} on {}",
                n.table_tag, n.table_tag_value, n.table
            ));
        }
        v
    }
}

/// Whitespace runs made one space, so a wrapped diagnostic reads as a line.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub fn two_estates(lane: &Lane, _cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let estate = &lane.estate.name;
    let Some(neighbour) = &lane.estate.neighbour else {
        return Err(StepError::Knob("the estate declares no [neighbour]".into()));
    };
    let Neighbour {
        parts: n, blocks, ..
    } = neighbour;
    let w = &lane.estate_twin().witness;
    let app = lane.engine.beside(clock, &n.root, &neighbour.dir)?;
    let queue_arn = w.queue_arn(&n.subscription_queue)?;

    // The neighbour applies its parts; neither plan touches the other's.
    clock.say(&format!(
        "Two estates on one twin: choudoufu apply of {} ({} blocks)",
        n.estate, blocks
    ));
    let before = Parts::read(w, n)?;
    let (applied, _) = app.apply(clock, false)?;
    let with = Parts::read(w, n)?;
    let swap = |from: &str, to: &str| {
        edit_root(&lane.engine.dir, |t| {
            t.contains(from).then(|| t.replace(from, to))
        })
    };
    let tamper = lane.tamper(
        Toggle::NeighbourBoundary,
        || swap(BOUNDARY, NO_BOUNDARY),
        |dropped| {
            if dropped {
                swap(NO_BOUNDARY, BOUNDARY)?;
            }
            Ok(())
        },
    )?;
    let own_plan = lane.engine.plan(clock, &[]);
    tamper.restore()?;
    let own_plan = own_plan?;
    let app_plan = app.plan(clock, &[])?;
    let added = Applied {
        added: *blocks,
        ..Applied::default()
    };
    let written = with.present(n, &queue_arn);
    let mut p = Vec::new();
    if !before.present(n, &queue_arn).is_empty() {
        p.push(format!(
            "before the neighbour's apply the AWS CLI already finds {}",
            before.present(n, &queue_arn).join(", ")
        ));
    }
    if applied != added {
        p.push(format!(
            "the neighbour's apply: {applied}, where {added} was expected"
        ));
    }
    if written.len() != 4 {
        p.push(format!(
            "after it the AWS CLI finds only {} of the neighbour's four parts",
            if written.is_empty() {
                "none".to_owned()
            } else {
                written.join(", ")
            }
        ));
    }
    for (whose, plan) in [(estate, &own_plan), (&n.estate, &app_plan)] {
        if !plan.is_empty() {
            p.push(format!(
                "{whose}'s plan: {} ({})",
                plan.summary_line(),
                plan.describe()
            ));
        }
    }
    let boundary = if p.is_empty() {
        Ok(format!(
            "estate {} applied {applied} on the estate twin, writing into {estate}'s objects: the AWS CLI finds {}, beside {estate}'s own subscription of its alert queue; {estate}'s plan over objects holding the neighbour's parts: {} (its table block ignores tags[\"owner\"], the boundary stock terraform keeps the same way), and {}'s plan: {}",
            n.estate,
            written.join(", "),
            own_plan.summary_line(),
            n.estate,
            app_plan.summary_line()
        ))
    } else {
        Err(p.join("; "))
    };

    // A block of the neighbour's naming one of this estate's whole objects.
    let taken_queue = lane
        .estate
        .knobs
        .stamped_queue
        .as_deref()
        .ok_or_else(|| StepError::Knob("[neighbour] needs knobs.stamped_queue".into()))?;
    clock.say(&format!(
        "Two estates on one twin: a block of {} naming {estate}'s queue {taken_queue}",
        n.estate
    ));
    let taken_file = app.dir.join(TAKEN_FILE);
    fs::write(
        &taken_file,
        format!("resource \"aws_sqs_queue\" \"taken\" {{\n  name = \"{taken_queue}\"\n}}\n"),
    )
    .map_err(io(&taken_file))?;
    let tags_before = w.queue_tags(taken_queue)?;
    let tamper = lane.tamper(
        Toggle::NeighbourRefused,
        || Ok(w.untag_queue(taken_queue, ESTATE_KEY)?),
        |()| Ok(w.tag_queue(taken_queue, ESTATE_KEY, estate)?),
    )?;
    let refused = app.plan_or_refusal(clock, &[]);
    tamper.restore()?;
    let refused = refused?;
    fs::remove_file(&taken_file).map_err(io(&taken_file))?;
    let tags_after = w.queue_tags(taken_queue)?;
    let owner = format!("which carries the marker of estate \"{estate}\"");
    let refusal = match refused {
        Err(out) => {
            let said = flat(&out);
            if said.contains("Error: Object owned by another estate")
                && said.contains(TAKEN)
                && said.contains(&owner)
                && tags_after == tags_before
            {
                Ok(format!(
                    "{TAKEN} (name = \"{taken_queue}\") in {}'s root was refused at plan, exit 1, with \"Object owned by another estate\": the queue it would bind to is {estate}'s, {owner}; the queue's tags are unchanged",
                    n.estate
                ))
            } else {
                Err(format!(
                    "{TAKEN} was refused without naming estate {estate}, or the queue changed: {}",
                    said.chars().take(400).collect::<String>()
                ))
            }
        }
        Ok(plan) => Err(format!(
            "{TAKEN} naming {estate}'s queue {taken_queue} was planned, not refused: {} ({})",
            plan.summary_line(),
            plan.describe()
        )),
    };

    // The neighbour's teardown takes exactly its parts.
    clock.say(&format!(
        "Two estates on one twin: choudoufu destroy of {}",
        n.estate
    ));
    let (destroyed, _) = app.apply(clock, true)?;
    let tamper = lane.tamper(
        Toggle::NeighbourTeardown,
        || Ok(w.tag_table(&n.table, &n.table_tag, &n.table_tag_value)?),
        |()| Ok(w.untag_table(&n.table, &n.table_tag)?),
    )?;
    let after = Parts::read(w, n)?;
    tamper.restore()?;
    let own_after = lane.engine.plan(clock, &[])?;
    let records: Vec<String> = w.record_parameters(&n.estate)?.into_keys().collect();
    let gone = Applied {
        destroyed: *blocks,
        ..Applied::default()
    };
    let mut p = Vec::new();
    if destroyed != gone {
        p.push(format!(
            "the neighbour's destroy: {destroyed}, where {gone} was expected"
        ));
    }
    let left = after.present(n, &queue_arn);
    if !left.is_empty() {
        p.push(format!(
            "after it the AWS CLI still finds {}",
            left.join(", ")
        ));
    }
    if after != before {
        p.push(format!(
            "{estate}'s objects read differently after the neighbour came and went: {before:?} before, {after:?} after"
        ));
    }
    if !own_after.is_empty() {
        p.push(format!(
            "{estate}'s plan: {} ({})",
            own_after.summary_line(),
            own_after.describe()
        ));
    }
    if !records.is_empty() {
        p.push(format!(
            "the neighbour's record store in the live system still holds {} parameter(s): {}",
            records.len(),
            records.join(", ")
        ));
    }
    let teardown = if p.is_empty() {
        Ok(format!(
            "choudoufu destroy of {} applied {destroyed}: the AWS CLI finds none of its parts and no parameter left under {}, and {estate}'s queue policy, subscriptions, attached policies and table tags read exactly as before the neighbour came; {estate}'s plan: {}",
            n.estate,
            engine::record::ssm::path(&n.estate),
            own_after.summary_line()
        ))
    } else {
        Err(p.join("; "))
    };

    Ok(StageOutput {
        assertions: vec![
            verdict(Toggle::NeighbourBoundary, boundary),
            verdict(Toggle::NeighbourRefused, refusal),
            verdict(Toggle::NeighbourTeardown, teardown),
        ],
        summary: format!(
            "a second estate, {}, writing parts of this estate's objects on the estate twin",
            n.estate
        ),
        plans: vec![StagePlan::Engine(own_plan), StagePlan::Engine(app_plan)],
    })
}
