//! Plan, review, apply: a saved plan is applied only to the live system it
//! was made against.
//!
//! Both twins' roots give one queue a `reviewed = "yes"` tag and save a plan
//! of it (a root run: one block's object, or on a root of module calls
//! everything a call tags through its `tags` input). On the estate twin the world then moves out of band (a stray tag
//! on another queue, with the AWS CLI, never the engine) and the engine must
//! refuse the saved plan with exit 3, applying nothing. With the stray tag
//! gone the live system is as it was, and the same file applies exactly its
//! one change; stock applies its own plan file on the oracle twin.

use std::collections::BTreeMap;

use engine::addr::ResourceInstanceAddr;

use crate::choudoufu::{Action, Applied};
use crate::edit::{self, Block};
use crate::oracle::Plan;
use crate::oracle::StateInstance;
use crate::stage::{Assertion, Toggle};
use crate::substrate::Side;
use crate::witness::{Handle, Witness};

use super::kit::{edit_root, marked_objects, retag, side_by_side, sorted, verdict};
use super::{both_ok, ColdOutcome, Lane, StageOutput, StagePlan, StepError, TwinView};

const REFUSAL: &str = "The approved plan no longer matches the live system";
const STRAY: (&str, &str) = ("stray", "out-of-band");
const REVIEWED: (&str, &str) = ("reviewed", "yes");

/// What the saved plan tags: one block, or everything a module call tags
/// through its `tags` input.
/// A block comes with its target; a call's is known from stock's plan.
enum Through {
    Block(ResourceInstanceAddr, Box<Target>),
    Call(String),
}

impl Through {
    fn block(&self) -> Block<'_> {
        match self {
            Through::Block(a, _) => Block::resource(&a.type_name, &a.name),
            Through::Call(name) => Block::call(name),
        }
    }
}

impl std::fmt::Display for Through {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Through::Block(a, _) => write!(f, "{a}"),
            Through::Call(name) => write!(f, "module.{name}"),
        }
    }
}

/// The object the stage reads the tag back on (on each twin, estate twin
/// first), and what it moves out of band on the estate twin: the
/// manifest's queues, or objects by ARN.
#[derive(Clone)]
struct Target {
    tagged: [Handle; 2],
    moved: Handle,
}

impl Target {
    /// The tagged object's tags on the twin `w` reads.
    fn tags(&self, w: &Witness) -> Result<BTreeMap<String, String>, StepError> {
        Ok(self.tagged[w.side as usize].tags(w)?.unwrap_or_default())
    }

    /// The stray tag set on (`on`) or taken off the object that moves.
    fn stray(&self, w: &Witness, on: bool) -> Result<(), StepError> {
        Ok(self.moved.set_tag(w, STRAY.0, on.then_some(STRAY.1))?)
    }
}

/// A root run's target: the first single-instance block of the root's own
/// folder whose object the tagging API lists, and the next such object;
/// those whose ARN holds a generated id first. A name-keyed object carries
/// the reviewed tag past its destroy: moto keeps a deleted log group's
/// tags for the next group of that name, which greenfield apply creates.
fn derived(lane: &Lane, cold: &ColdOutcome) -> Result<(ResourceInstanceAddr, Target), StepError> {
    let mut singles = super::derive::single_blocks(lane, cold, true)?;
    singles.sort_by_key(|i| {
        let arn = i.values["arn"].as_str().unwrap_or_default();
        crate::witness::generated_ids_out(arn) == arn
    });
    let [tagged, moved, ..] = singles.as_slice() else {
        return Err(StepError::NotDerived(
            "the root's own folder has fewer than two single-instance blocks whose objects the tagging API lists: one to tag through a saved plan, another to move out of band".into(),
        ));
    };
    let oracle_state = lane.oracle_twin().oracle.state()?;
    let arn = |i: &StateInstance| i.values["arn"].as_str().unwrap_or_default().to_owned();
    let there = oracle_state
        .iter()
        .find(|i| i.addr == tagged.addr)
        .map(arn)
        .ok_or_else(|| {
            StepError::Knob(format!("the oracle twin's state holds no {}", tagged.addr))
        })?;
    Ok((
        tagged.addr.clone(),
        Target {
            tagged: [Handle::Object(arn(tagged)), Handle::Object(there)],
            moved: Handle::Object(arn(moved)),
        },
    ))
}

/// On a root of module calls, the first call whose module takes a `tags`
/// input, by its name now.
fn tagged_call(lane: &Lane, cold: &ColdOutcome) -> Result<Option<String>, StepError> {
    let root = &lane.oracle_twin().oracle.dir;
    for call in super::derive::calls(lane, cold, false)? {
        if super::derive::takes_tags(root, &call.now)? {
            return Ok(Some(call.now));
        }
    }
    Ok(None)
}

/// What stock's saved plan for a tag through the call `name` updates:
/// its in-place updates within the call.
fn call_updates(plan: &Plan, name: &str) -> Vec<(String, Action)> {
    let within = |a: &str| {
        a.strip_prefix(&format!("module.{name}"))
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
    };
    plan.actions()
        .into_iter()
        .filter(|(a, x)| *x == Action::Update && within(a))
        .collect()
}

/// The target of a tag through a call: the first object stock's plan
/// updates that carries this estate's address marker on the estate twin
/// (and the same instance's object on the oracle twin), and a marked
/// object it does not update to move out of band (the same one when it
/// updates all of them).
fn call_target(lane: &Lane, updates: &[(String, Action)]) -> Result<Target, StepError> {
    let marked = marked_objects(lane)?;
    let updated = |a: &String| updates.iter().any(|(u, _)| u == a);
    let (addr, arn) = marked.iter().find(|(a, _)| updated(a)).ok_or_else(|| {
        StepError::Knob(
            "stock's saved plan updates no object the tagging API lists with this estate's address marker".into(),
        )
    })?;
    let there = lane
        .oracle_twin()
        .oracle
        .state()?
        .into_iter()
        .find(|i| i.addr.to_string() == *addr)
        .and_then(|i| i.values["arn"].as_str().map(str::to_owned))
        .ok_or_else(|| {
            StepError::Knob(format!(
                "the oracle twin's state holds no {addr} with an ARN"
            ))
        })?;
    let moved = marked
        .iter()
        .find(|(a, _)| !updated(a))
        .map_or(arn, |(_, other)| other);
    Ok(Target {
        tagged: [Handle::Object(arn.clone()), Handle::Object(there)],
        moved: Handle::Object(moved.clone()),
    })
}

pub fn plan_review_apply(lane: &Lane, cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let estate = lane.estate;
    let breaks = lane.breaks;
    let e = lane.estate_twin();
    let o = lane.oracle_twin();
    // What gains the tag and what moves out of band: the manifest's
    // queues, or where it names none the first block of the root's own
    // folder whose object the tagging API lists, and another such object.
    let k = &estate.knobs;
    let through = match (&k.reviewed_block, &k.stamped_queue) {
        (Some(reviewed_block), Some(moved)) => {
            let queue = cold
                .estate_state
                .iter()
                .find(|i| i.addr == *reviewed_block)
                .and_then(|i| i.values["name"].as_str())
                .ok_or_else(|| {
                    StepError::Knob(format!(
                        "knobs.reviewed_block: the estate twin's state holds no {} with a name",
                        reviewed_block
                    ))
                })?;
            let target = Target {
                tagged: [
                    Handle::Queue(queue.to_owned()),
                    Handle::Queue(queue.to_owned()),
                ],
                moved: Handle::Queue(moved.clone()),
            };
            Through::Block(reviewed_block.clone(), Box::new(target))
        }
        _ => match derived(lane, cold) {
            Ok((block, target)) => Through::Block(block, Box::new(target)),
            Err(StepError::NotDerived(why)) => match tagged_call(lane, cold)? {
                Some(name) => Through::Call(name),
                None => {
                    return Err(StepError::NotDerived(format!(
                        "{why}, and no module call of it takes a tags input"
                    )))
                }
            },
            Err(e) => return Err(e),
        },
    };
    let block = &through;

    clock.say(&format!(
        "Plan, review, apply: {block} gains {}={} on both twins, planned to a file",
        REVIEWED.0, REVIEWED.1
    ));
    both_ok(lane.both(|t: &TwinView| {
        let edited = edit_root(&t.oracle.dir, |s| {
            edit::add_tag(s, &through.block(), REVIEWED.0, REVIEWED.1)
        })?;
        if edited {
            Ok(())
        } else {
            Err(StepError::Knob(format!(
                "{block} on the {}: no tags argument a tag can be added to",
                t.side
            )))
        }
    }))?;
    let (ep, sp) = side_by_side(
        || lane.engine.plan(clock, &["-out", "review.plan"]),
        || o.oracle.plan(clock, "review.tfplan", &[]),
    );
    let (ep, sp) = (ep?, sp?);
    let (want, target) = match &through {
        Through::Call(name) => {
            let want = call_updates(&sp, name);
            let target = call_target(lane, &want)?;
            (want, target)
        }
        Through::Block(b, target) => (vec![(b.to_string(), Action::Update)], (**target).clone()),
    };

    // The world moves on the estate twin after the review.
    if !breaks.on(Toggle::ReviewRefused) {
        target.stray(&e.witness, true)?;
    }
    let (first, first_out) = lane.engine.apply_saved(clock, "review.plan")?;
    let tags_after_refusal = target.tags(&e.witness)?;
    if !breaks.on(Toggle::ReviewRefused) {
        target.stray(&e.witness, false)?;
    }
    let said = format!("{}{}", first_out.stdout, first_out.stderr);
    let mut p = Vec::new();
    if want.is_empty()
        || sorted(ep.changes.clone()) != sorted(want.clone())
        || sorted(sp.actions()) != sorted(want.clone())
    {
        p.push(format!(
            "the saved plans are not the updates of {block} alone: choudoufu {} ({}), stock {} ({})",
            ep.describe(),
            ep.summary_line(),
            sp.actions()
                .iter()
                .map(|(a, x)| format!("{a} ({})", x.word()))
                .collect::<Vec<_>>()
                .join(", "),
            sp.summary_line()
        ));
    }
    if first_out.code != 3 || !said.contains(REFUSAL) || first.is_some() {
        p.push(format!(
            "after the live system moved, choudoufu apply review.plan exited {} ({})",
            first_out.code,
            first.map_or_else(
                || said.trim().lines().last().unwrap_or("").to_owned(),
                |a| a.to_string()
            )
        ));
    }
    if tags_after_refusal.contains_key(REVIEWED.0) {
        p.push(format!(
            "{} carries {}={} though the plan was refused",
            target.tagged[Side::Estate as usize],
            REVIEWED.0,
            tags_after_refusal[REVIEWED.0]
        ));
    }
    let refused = if p.is_empty() {
        Ok(format!(
            "choudoufu plan -out review.plan saved exactly {} ({}), as stock's plan file on the oracle twin ({}); then {} gained a stray tag {}={} with the AWS CLI, and choudoufu apply review.plan refused with \"{REFUSAL}\" at exit 3, applying nothing: the AWS CLI reads no {} tag on {}",
            super::kit::describe(&sorted(want.clone())),
            ep.summary_line(),
            sp.summary_line(),
            target.moved,
            STRAY.0,
            STRAY.1,
            REVIEWED.0,
            target.tagged[Side::Estate as usize]
        ))
    } else {
        Err(p.join("; "))
    };

    // The stray tag gone, the identical file applies; stock applies its own.
    clock.say("Plan, review, apply: the live system put back, the same file applied");
    let (second, stock) = side_by_side(
        || match first {
            // Already applied (only when the world did not move).
            Some(a) => Ok((Some(a), None)),
            None => lane
                .engine
                .apply_saved(clock, "review.plan")
                .map(|(a, out)| (a, Some(out))),
        },
        || o.oracle.apply(clock, "review.tfplan"),
    );
    let (second, second_out) = second?;
    stock?;
    let tamper = retag(
        lane,
        Toggle::ReviewApplied,
        || Ok(target.tagged[Side::Estate as usize].clone()),
        REVIEWED.0,
        None,
        Some(REVIEWED.1.to_owned()),
    )?;
    let [here, there] = both_ok(lane.both(|t: &TwinView| target.tags(&t.witness)))?;
    tamper.restore()?;
    let replan = lane.engine.plan(clock, &[])?;
    let one = Applied {
        changed: want.len(),
        ..Applied::default()
    };
    let reviewed = |t: &std::collections::BTreeMap<String, String>| {
        t.get(REVIEWED.0).map(String::as_str) == Some(REVIEWED.1)
    };
    let mut p = Vec::new();
    if second != Some(one) {
        p.push(format!(
            "choudoufu apply review.plan with the live system put back: {}",
            match (&second, &second_out) {
                (Some(a), _) => a.to_string(),
                (None, Some(out)) => format!(
                    "exit {}: {}",
                    out.code,
                    format!("{}{}", out.stdout, out.stderr).trim()
                ),
                (None, None) => "not run".into(),
            }
        ));
    }
    if !reviewed(&here) {
        p.push(format!(
            "the AWS CLI reads no {}={} on {} on the estate twin",
            REVIEWED.0,
            REVIEWED.1,
            target.tagged[Side::Estate as usize]
        ));
    }
    if !reviewed(&there) {
        p.push(format!(
            "stock's plan file left no {}={} on {} on the oracle twin",
            REVIEWED.0,
            REVIEWED.1,
            target.tagged[Side::Oracle as usize]
        ));
    }
    if !replan.is_empty() {
        p.push(format!(
            "the next plan: {} ({})",
            replan.summary_line(),
            replan.describe()
        ));
    }
    let applied = if p.is_empty() {
        Ok(format!(
            "with the stray tag removed the identical file applied: {one}; the AWS CLI reads {}={} on {} on both twins (stock's own plan file applied on the oracle twin), and the next plan is empty ({})",
            REVIEWED.0,
            REVIEWED.1,
            target.tagged[Side::Oracle as usize],
            replan.summary_line()
        ))
    } else {
        Err(p.join("; "))
    };
    let out: Vec<Assertion> = vec![
        verdict(Toggle::ReviewRefused, refused),
        verdict(Toggle::ReviewApplied, applied),
    ];
    Ok(StageOutput {
        assertions: out,
        summary: format!("a saved plan giving {block} a {} tag", REVIEWED.0),
        plans: vec![StagePlan::Engine(ep), StagePlan::Stock(Side::Oracle, sp)],
    })
}
