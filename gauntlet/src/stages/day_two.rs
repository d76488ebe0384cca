//! The engine's stages on the estate twin, after cold deploy: migrate,
//! replan from nothing, no-op apply, drift and reconverge, remove a block,
//! change count, the engine's half of teardown, and greenfield apply.
//!
//! Each stage drives `choudoufu` in the estate twin's working copy and, where
//! the seeds do, stock terraform doing the same thing on the oracle twin;
//! what happened to the live system is read back with the AWS CLI. A BREAK
//! toggle that corrupts the live system puts it back after the read when it
//! can, so that the stages after it start where a clean run would.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::choudoufu::{Action, Applied, EnginePlan};

use crate::edit::{self, Block};
use crate::estate::Undeclared;
use crate::oracle::StateInstance;
use crate::stage::{Assertion, Toggle};
use crate::substrate::Side;
use crate::witness::{
    arn_class, differences_but, normalised, Handle, Inventory, Kind, MarkerHit, Witness,
};

use super::kit::{
    both_apply, both_ok, both_plans, disturb, edit_root, io, marked_objects, retag, same_as_stock,
    side_by_side, take_away, tampered, unstamp, verdict, ADDRESS_KEY, DRIFT_TAG, ESTATE_KEY,
};
use super::{
    missing_undeclared, put_back_undeclared, take_undeclared, ColdOutcome, Lane, StageOutput,
    StagePlan, StepError, TwinView,
};

/// The state instance of a parameter, by its name.
fn parameter<'a>(state: &'a [StateInstance], name: &str) -> Result<&'a StateInstance, StepError> {
    state
        .iter()
        .find(|i| i.type_name == "aws_ssm_parameter" && i.values["name"] == name)
        .ok_or_else(|| {
            StepError::Knob(format!(
                "the cold state holds no aws_ssm_parameter named {name}"
            ))
        })
}

/// The objects carrying `tofu-estate=<estate>`, by kind and identity.
fn marked(hits: &[MarkerHit], estate: &str) -> BTreeSet<(Kind, String)> {
    hits.iter()
        .filter(|h| h.key == ESTATE_KEY && h.value == estate)
        .filter_map(|h| h.at.clone())
        .collect()
}

/// How the markers on `live` fall short: tagged objects of `state`
/// lacking `tofu-estate=<estate>` or their `tofu-address`, and objects
/// carrying a marker that none of them is. When `same_objects`, each
/// instance's object is the one its state names (migrate); else it is the
/// live object of its kind carrying its `tofu-address` (greenfield's
/// objects are new, their generated ids not the state's). Also returned:
/// how many instances the engine stamps, and those the witness cannot read
/// (an object by ARN with no ARN, or of a class the tagging API does not
/// list).
fn marker_problems(
    state: &[StateInstance],
    live: &Inventory,
    hits: &[MarkerHit],
    estate: &str,
    same_objects: bool,
) -> Result<Markers, StepError> {
    let (_, unlisted) = Inventory::of_state(state)?.listed_in(live);
    let mut m = Markers::default();
    let mut ours = BTreeSet::new();
    for i in state {
        let k = Kind::for_type(&i.type_name);
        if !k.stamped(i) {
            continue;
        }
        m.stamped += 1;
        if !k.names(i) {
            m.unread.push(format!("{} (no ARN)", i.addr));
            continue;
        }
        let mut id = k.identity(i)?;
        let addr = i.addr.to_string();
        let class = (k == Kind::Tagged).then(|| arn_class(&id));
        if let Some(class) = class.as_ref().filter(|c| unlisted.contains(*c)) {
            m.unread.push(format!(
                "{} ({class} is not listed by the tagging API)",
                i.addr
            ));
            continue;
        }
        if !same_objects {
            let found = hits.iter().find_map(|h| match &h.at {
                Some((hk, hid))
                    if h.key == ADDRESS_KEY
                        && h.value == addr
                        && *hk == k
                        && class.as_ref().is_none_or(|c| arn_class(hid) == *c) =>
                {
                    Some(hid.clone())
                }
                _ => None,
            });
            if let Some(found) = found {
                id = found;
            }
        }
        let on = |key: &str| {
            hits.iter()
                .find(|h| h.key == key && h.at.as_ref() == Some(&(k, id.clone())))
                .map(|h| h.value.clone())
        };
        let problems = &mut m.problems;
        match on(ESTATE_KEY) {
            Some(v) if v == estate => {}
            Some(v) => problems.push(format!("{} {id} carries tofu-estate={v}", k.noun())),
            None => problems.push(format!("{} {id} carries no tofu-estate tag", k.noun())),
        }
        match on(ADDRESS_KEY) {
            Some(v) if v == addr => {}
            Some(v) => problems.push(format!(
                "{} {id} carries tofu-address={v}, not {addr}",
                k.noun()
            )),
            None => problems.push(format!("{} {id} carries no tofu-address tag", k.noun())),
        }
        ours.insert((k, id));
    }
    for h in hits {
        if !h.at.as_ref().is_some_and(|at| ours.contains(at)) {
            m.problems.push(format!(
                "{}={} on {}, which no block declares",
                h.key, h.value, h.object
            ));
        }
    }
    Ok(m)
}

/// What [`marker_problems`] found.
#[derive(Default)]
struct Markers {
    stamped: usize,
    problems: Vec<String>,
    unread: Vec<String>,
}

/// Marker tags on the undeclared objects (S3 objects; a message carries no
/// tags).
fn undeclared_markers(w: &Witness, undeclared: &[Undeclared]) -> Result<Vec<String>, StepError> {
    let mut out = Vec::new();
    for u in undeclared {
        if let Undeclared::S3Object { bucket, key, .. } = u {
            for k in w.object_marker_keys(bucket, key)? {
                out.push(format!("{k} on {u}"));
            }
        }
    }
    Ok(out)
}

/// Migrate: `choudoufu migrate` with the estate twin's stock state.
pub fn migrate(lane: &Lane, cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let estate = lane.estate;
    let breaks = lane.breaks;
    let e = lane.estate_twin();
    let mut state_path = e.oracle.state_file();
    if breaks.on(Toggle::MigrateCounts) {
        // The manifest's parameter name, or an object by ARN's id with a
        // suffix.
        let state = &cold.estate_state;
        let (model, old, new) = match &estate.knobs.phantom_parameter {
            Some(p) => {
                let m = state.iter().find(|i| i.type_name == "aws_ssm_parameter");
                (m, m.and_then(|m| m.values["name"].as_str()), p.clone())
            }
            None => {
                let m = super::first_tagged(state);
                let id = m.and_then(|m| m.values["id"].as_str());
                (m, id, format!("{}-phantom", id.unwrap_or_default()))
            }
        };
        let model =
            model.ok_or_else(|| StepError::Knob("the state holds no object to copy".into()))?;
        state_path = phantom_state(&state_path, model, old.unwrap_or_default(), &new)?;
    }
    clock.say("Migrate: choudoufu migrate on the estate twin");
    let (m, out) = lane.engine.migrate(clock, &state_path)?;

    let records = e.witness.records(&estate.name)?.len();
    let tamper = unstamp(lane, Toggle::MigrateMarkers)?;
    clock.say("Migrate: reading the markers back with the AWS CLI");
    let live = e.witness.inventory(&lane.kinds)?;
    let hits = e.witness.markers(&live)?;
    let on_undeclared = undeclared_markers(&e.witness, &estate.undeclared)?;
    tamper.restore()?;

    let state = &cold.estate_state;
    let Markers {
        stamped: tagged,
        mut problems,
        unread,
    } = marker_problems(state, &live, &hits, &estate.name, true)?;
    problems.extend(on_undeclared);
    let owned = state.len() - tagged;
    let mut out_a = Vec::new();

    // Every instance stamped or recorded, none failed or skipped.
    let mut count_problems = Vec::new();
    if out.code != 0 {
        count_problems.push(format!("migrate exited {}", out.code));
    }
    if m.stamped + m.already != tagged {
        count_problems.push(format!(
            "{} stamped where the state holds {tagged} instances of tagged types",
            m.stamped + m.already
        ));
    }
    if m.recorded != owned {
        count_problems.push(format!(
            "{} recorded where the state holds {owned} instances owned through a parent",
            m.recorded
        ));
    }
    if m.failed + m.skipped != 0 {
        let lines: Vec<&str> = out
            .stdout
            .lines()
            .filter(|l| l.contains("failed") || l.contains("skipped:"))
            .filter(|l| !l.starts_with("Migrate complete!"))
            .map(str::trim)
            .collect();
        count_problems.push(format!(
            "{} failed and {} skipped ({})",
            m.failed,
            m.skipped,
            lines.join("; ")
        ));
    }
    out_a.push(Assertion::new(
        Toggle::MigrateCounts,
        count_problems.is_empty(),
        if count_problems.is_empty() {
            format!(
                "{} of {} instances accounted for: {m} (exit 0); the {tagged} of tagged types stamped, the {owned} owned through a parent recorded; the AWS CLI reads {records} records in the live store ({})",
                m.total(),
                state.len(),
                engine::record::ssm::place(&estate.name)
            )
        } else {
            format!("{m}: {}", count_problems.join("; "))
        },
    ));

    // The witness reads the marker on every tagged object, and nowhere else.
    out_a.push(Assertion::new(
        Toggle::MigrateMarkers,
        problems.is_empty(),
        if problems.is_empty() {
            format!(
                "the AWS CLI reads tofu-estate={} and the instance's own tofu-address on all {} tagged objects it can read{}, and no marker on the {} objects that existed before ({}) or on the {} undeclared S3 objects (messages carry no tags)",
                estate.name,
                tagged - unread.len(),
                if unread.is_empty() {
                    String::new()
                } else {
                    format!(" (not read: {})", unread.join(", "))
                },
                e.baseline.len(),
                e.baseline.names(),
                estate
                    .undeclared
                    .iter()
                    .filter(|u| matches!(u, Undeclared::S3Object { .. }))
                    .count()
            )
        } else {
            problems.join("; ")
        },
    ));
    Ok(StageOutput {
        assertions: out_a,
        summary: format!(
            "choudoufu migrate took the estate twin's terraform.tfstate ({} instances)",
            state.len()
        ),
        plans: Vec::new(),
    })
}

/// A copy of the state at `path` holding one more instance, whose object
/// does not exist: a copy of `model`'s block's first instance with `old`
/// (its identity) replaced by `new` in its id, name and ARN, keyed 99 in
/// a counted block, or as a block of its own (`<name>_phantom`).
fn phantom_state(
    path: &Path,
    model: &StateInstance,
    old: &str,
    new: &str,
) -> Result<std::path::PathBuf, StepError> {
    let text = fs::read_to_string(path).map_err(io(path))?;
    let mut v: Value = serde_json::from_str(&text)
        .map_err(|e| StepError::Knob(format!("{}: {e}", path.display())))?;
    let resources = v["resources"]
        .as_array_mut()
        .ok_or_else(|| StepError::Knob(format!("{}: no resources array", path.display())))?;
    let i = resources
        .iter()
        .position(|r| r["type"] == model.addr.type_name && r["name"] == model.addr.name)
        .ok_or_else(|| StepError::Knob(format!("{}: no {}", path.display(), model.addr)))?;
    let mut copy = resources[i]["instances"][0].clone();
    for k in ["id", "name", "arn"] {
        if let Some(a) = copy["attributes"][k].as_str() {
            copy["attributes"][k] = Value::from(a.replace(old, new));
        }
    }
    if copy["index_key"].is_null() {
        let mut block = resources[i].clone();
        block["name"] = Value::from(format!("{}_phantom", model.addr.name));
        block["instances"] = Value::from(vec![copy]);
        resources.push(block);
    } else if let Some(instances) = resources[i]["instances"].as_array_mut() {
        copy["index_key"] = Value::from(99);
        instances.push(copy);
    }
    let to = path.with_file_name("phantom.tfstate");
    fs::write(&to, v.to_string()).map_err(io(&to))?;
    Ok(to)
}

/// Replan from nothing: the state file deleted, the plan is empty.
pub fn replan(lane: &Lane, cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let e = lane.estate_twin();
    for name in ["terraform.tfstate", "terraform.tfstate.backup"] {
        let p = lane.engine.dir.join(name);
        if p.exists() {
            fs::remove_file(&p).map_err(io(&p))?;
        }
    }
    let tamper = disturb(
        lane,
        Toggle::ReplanEmpty,
        |k| &k.drift_parameter,
        "before-replan",
        None,
    )?;
    clock.say("Replan from nothing: choudoufu plan with no terraform.tfstate");
    let plan = lane.engine.plan(clock, &[])?;
    tamper.restore()?;
    let missing = lane.knob(Toggle::ReplanIdentities, |k| &k.missing_parameter)?;
    let tamper = take_away(lane, Toggle::ReplanIdentities, missing)?;
    let live = e.witness.inventory(&lane.kinds)?;
    tamper.restore()?;
    let (declared, unlisted) = Inventory::of_state(&cold.estate_state)?.listed_in(&live);
    let absent = declared.minus(&live);
    let no_state = !lane.engine.dir.join("terraform.tfstate").exists();
    let mut out = Vec::new();
    out.push(Assertion::new(
        Toggle::ReplanEmpty,
        plan.is_empty() && no_state,
        if plan.is_empty() && no_state {
            format!(
                "with terraform.tfstate deleted from the root, choudoufu plan -detailed-exitcode exits 0: {}",
                plan.summary_line()
            )
        } else {
            format!(
                "choudoufu plan -detailed-exitcode exited {} with {} ({}){}",
                plan.code,
                plan.summary_line(),
                plan.describe(),
                if no_state { "" } else { "; terraform.tfstate is still there" }
            )
        },
    ));
    out.push(Assertion::new(
        Toggle::ReplanIdentities,
        absent.is_empty(),
        if absent.is_empty() {
            format!(
                "all {} identities of the migrated state read back present with the AWS CLI over {} types ({}){}",
                declared.len(),
                declared.kinds(),
                declared.counts(),
                super::unread(&cold.estate_state, &unlisted, false)
            )
        } else {
            format!("not live: {}", absent.names())
        },
    ));
    Ok(StageOutput {
        assertions: out,
        summary: "the engine planned from the live system alone".into(),
        plans: vec![StagePlan::Engine(plan)],
    })
}

/// No-op apply: nothing changes, the markers stay as they were.
pub fn noop_apply(lane: &Lane) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let estate = lane.estate;
    let e = lane.estate_twin();
    let before = marked(
        &e.witness.markers(&e.witness.inventory(&lane.kinds)?)?,
        &estate.name,
    );
    let changed = disturb(
        lane,
        Toggle::NoopChanges,
        |k| &k.second_drift_parameter,
        "before-apply",
        None,
    )?;
    clock.say("No-op apply: choudoufu apply -auto-approve");
    let (applied, _) = lane.engine.apply(clock, false)?;
    changed.keep();
    let queue = lane.knob(Toggle::NoopMarkers, |k| &k.lost_preexisting_queue)?;
    let tamper = lane.tamper(
        Toggle::NoopMarkers,
        || Ok(e.witness.tag_queue(queue, ESTATE_KEY, &estate.name)?),
        |()| Ok(e.witness.untag_queue(queue, ESTATE_KEY)?),
    )?;
    let after = marked(
        &e.witness.markers(&e.witness.inventory(&lane.kinds)?)?,
        &estate.name,
    );
    tamper.restore()?;
    let none = applied == Applied::default();
    let mut out = vec![Assertion::new(
        Toggle::NoopChanges,
        none,
        format!("choudoufu apply: {applied}"),
    )];
    let names = |s: &BTreeSet<(Kind, String)>| {
        s.iter()
            .map(|(k, id)| format!("{} {id}", k.noun()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let gained: BTreeSet<_> = after.difference(&before).cloned().collect();
    let lost: BTreeSet<_> = before.difference(&after).cloned().collect();
    out.push(Assertion::new(
        Toggle::NoopMarkers,
        gained.is_empty() && lost.is_empty(),
        if gained.is_empty() && lost.is_empty() {
            format!(
                "objects carrying tofu-estate={} unchanged at {}, counted with the AWS CLI before and after",
                estate.name,
                after.len()
            )
        } else {
            format!(
                "objects carrying tofu-estate={} went from {} to {} (gained: {}; lost: {})",
                estate.name,
                before.len(),
                after.len(),
                if gained.is_empty() { "none".into() } else { names(&gained) },
                if lost.is_empty() { "none".into() } else { names(&lost) }
            )
        },
    ));
    Ok(StageOutput {
        assertions: out,
        summary: "an apply with nothing to do".into(),
        plans: Vec::new(),
    })
}

/// Drift and reconverge: one parameter tampered on both twins.
pub fn drift(lane: &Lane, cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let Some(name) = &lane.estate.knobs.drift_parameter else {
        return drift_tag(lane, cold);
    };
    let clock = lane.clock;
    let e = lane.estate_twin();
    let inst = parameter(&cold.estate_state, name)?;
    let configured = inst.values["value"].as_str().unwrap_or("").to_owned();
    clock.say(&format!(
        "Drift and reconverge: {name} tampered on both twins"
    ));
    both_ok(lane.both(|t: &TwinView| {
        t.witness.overwrite_parameter(name, &tampered("drift"))?;
        Ok(())
    }))?;
    let second = disturb(
        lane,
        Toggle::DriftSingle,
        |k| &k.second_drift_parameter,
        "drift",
        None,
    )?;
    let (ep, sp) = both_plans(lane, "drift.tfplan")?;
    let want = [(inst.addr.to_string(), Action::Update)];
    let mut single = same_as_stock(&ep, &sp, &want);
    let applied = both_apply(lane, "drift.tfplan")?;
    second.keep();
    let one = Applied {
        changed: 1,
        ..Applied::default()
    };
    single = single.and_then(|s| {
        if applied == one {
            Ok(format!("{s}; apply: {applied}"))
        } else {
            Err(format!("{s}, but apply: {applied}"))
        }
    });

    let tamper = lane.tamper(
        Toggle::DriftReconverged,
        || Ok(e.witness.overwrite_parameter(name, &tampered("again"))?),
        |()| Ok(e.witness.overwrite_parameter(name, &configured)?),
    )?;
    let value = e.witness.parameter_value(name)?;
    let replan = lane.engine.plan(clock, &[])?;
    tamper.restore()?;
    let reconverged = value.as_deref() == Some(configured.as_str()) && replan.is_empty();
    let out = vec![
        verdict(Toggle::DriftSingle, single),
        Assertion::new(
            Toggle::DriftReconverged,
            reconverged,
            if reconverged {
                format!(
                    "the AWS CLI reads {name} = {configured:?} back, as configured, and the next plan is empty ({})",
                    replan.summary_line()
                )
            } else {
                format!(
                    "the AWS CLI reads {name} = {:?} where {configured:?} is configured; the next plan: {} ({})",
                    value.unwrap_or_default(),
                    replan.summary_line(),
                    replan.describe()
                )
            },
        ),
    ];
    Ok(StageOutput {
        assertions: out,
        summary: format!("{name}'s value changed with the AWS CLI on both twins"),
        plans: vec![StagePlan::Engine(ep), StagePlan::Stock(Side::Oracle, sp)],
    })
}

/// Drift and reconverge where the manifest names no parameter to change
/// (a root run names none): a tag no configuration names, set through the tagging API on
/// both twins on one object by ARN (the first by address of those the
/// tagging API lists). Stock and the engine must plan the same one
/// in-place update; after both apply, the tag is gone and the next plan is
/// empty.
fn drift_tag(lane: &Lane, cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let e = lane.estate_twin();
    let live = e.witness.inventory(&lane.kinds)?;
    let (listed, _) = Inventory::of_state(&cold.estate_state)?.listed_in(&live);
    let arn_of = |i: &StateInstance| i.values["arn"].as_str().map(str::to_owned);
    let inst = cold
        .estate_state
        .iter()
        .filter(|i| Kind::for_type(&i.type_name) == Kind::Tagged)
        .filter(|i| arn_of(i).is_some_and(|a| listed.contains(Kind::Tagged, &a)))
        .min_by_key(|i| i.addr.to_string())
        .ok_or_else(|| {
            StepError::NotDerived(
                "no object of the root has an ARN the tagging API lists, so none can be tagged out of band".into(),
            )
        })?;
    let addr = inst.addr.to_string();
    let oracle_state = lane.oracle_twin().oracle.state()?;
    let arns: Vec<String> = [&cold.estate_state, &oracle_state]
        .iter()
        .map(|state| {
            state
                .iter()
                .find(|i| i.addr == inst.addr)
                .and_then(arn_of)
                .ok_or_else(|| StepError::Knob(format!("a twin's state holds no ARN of {addr}")))
        })
        .collect::<Result<_, _>>()?;
    clock.say(&format!(
        "Drift and reconverge: {DRIFT_TAG} set on {addr} on both twins"
    ));
    both_ok(lane.both(|t: &TwinView| {
        t.witness
            .tag_object(&arns[t.side as usize], DRIFT_TAG, &tampered("drift"))?;
        Ok(())
    }))?;
    let second = disturb(
        lane,
        Toggle::DriftSingle,
        |k| &k.second_drift_parameter,
        "drift",
        Some(&arns[Side::Estate as usize]),
    )?;
    let (ep, sp) = both_plans(lane, "drift.tfplan")?;
    let want = [(addr.clone(), Action::Update)];
    let single = same_as_stock(&ep, &sp, &want);
    let applied = both_apply(lane, "drift.tfplan")?;
    second.keep();
    let one = Applied {
        changed: 1,
        ..Applied::default()
    };
    let single = single.and_then(|s| {
        if applied == one {
            Ok(format!("{s}; apply: {applied}"))
        } else {
            Err(format!("{s}, but apply: {applied}"))
        }
    });
    let drifted = Handle::Object(arns[Side::Estate as usize].clone());
    let tamper = retag(
        lane,
        Toggle::DriftReconverged,
        || Ok(drifted.clone()),
        DRIFT_TAG,
        Some(tampered("again")),
        None,
    )?;
    let tags = drifted.tags(&e.witness)?;
    let replan = lane.engine.plan(clock, &[])?;
    tamper.restore()?;
    let left = tags.as_ref().and_then(|t| t.get(DRIFT_TAG));
    let reconverged = tags.is_some() && left.is_none() && replan.is_empty();
    let out = vec![
        verdict(Toggle::DriftSingle, single),
        Assertion::new(
            Toggle::DriftReconverged,
            reconverged,
            match (left, reconverged) {
                (_, true) => format!(
                    "the AWS CLI reads {addr}'s tags back without {DRIFT_TAG}, as configured, and the next plan is empty ({})",
                    replan.summary_line()
                ),
                (Some(v), _) => format!("{addr} still carries {DRIFT_TAG}={v}"),
                (None, _) => format!(
                    "{}; the next plan: {} ({})",
                    if tags.is_none() {
                        "the tagging API no longer lists the object"
                    } else {
                        "the tag is gone"
                    },
                    replan.summary_line(),
                    replan.describe()
                ),
            },
        ),
    ];
    Ok(StageOutput {
        assertions: out,
        summary: format!(
            "a tag no configuration names ({DRIFT_TAG}) set on {addr} with the AWS CLI on both twins"
        ),
        plans: vec![StagePlan::Engine(ep), StagePlan::Stock(Side::Oracle, sp)],
    })
}

/// Remove a block from both twins' roots.
pub fn remove_block(lane: &Lane, cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let estate = lane.estate;
    let breaks = lane.breaks;
    let e = lane.estate_twin();
    // A root run removes the last qualifying block still declared under
    // its cold address: Rename moved the first.
    let block = &match &estate.knobs.removed_block {
        Some(b) => b.clone(),
        None => match super::derive::single_blocks(lane, cold, false)?.last() {
            Some(i) => i.addr.clone(),
            None => return super::calls::remove(lane, cold),
        },
    };
    let insts: Vec<&StateInstance> = cold
        .estate_state
        .iter()
        .filter(|i| i.addr.type_name == block.type_name && i.addr.name == block.name)
        .collect();
    let kind = Kind::for_type(&block.type_name);
    if insts.len() != 1 || !kind.tagged() {
        return Err(StepError::Knob(format!(
            "knobs.removed_block = {block}: the cold state holds {} instances of it, where Remove a block needs exactly one of a tagged type",
            insts.len()
        )));
    }
    let id = kind.identity(insts[0])?;
    let before = e.witness.inventory(&lane.kinds)?;
    for t in &lane.twins {
        if t.side == Side::Estate && breaks.on(Toggle::RemoveDestroy) {
            continue;
        }
        if !edit_root(&t.oracle.dir, |s| {
            edit::remove_block(s, &Block::resource(&block.type_name, &block.name))
        })? {
            return Err(StepError::Knob(format!(
                "knobs.removed_block: no file of the {}'s root holds resource \"{}\" \"{}\"",
                t.side, block.type_name, block.name
            )));
        }
    }
    clock.say(&format!("Remove a block: {block} deleted from both roots"));
    let (ep, sp) = both_plans(lane, "remove.tfplan")?;
    let want = [(block.to_string(), Action::Delete)];
    let mut destroy = same_as_stock(&ep, &sp, &want);
    let applied = both_apply(lane, "remove.tfplan")?;

    let taken = estate.undeclared.iter().find(|u| u.can_be_taken_away());
    let tamper = lane.tamper(
        Toggle::RemoveUntouched,
        || match taken {
            Some(u) => take_undeclared(&e.witness, u),
            None => Ok(None),
        },
        |held| match taken {
            Some(u) => put_back_undeclared(&e.witness, u, held),
            None => Ok(()),
        },
    )?;
    let after = e.witness.inventory(&lane.kinds)?;
    let missing = missing_undeclared(&e.witness, &estate.undeclared)?;
    tamper.restore()?;
    let replan = lane.engine.plan(clock, &[])?;
    if breaks.on(Toggle::RemoveDestroy) {
        // Leave the estate twin as the oracle twin is: block and object gone.
        edit_root(&e.oracle.dir, |s| {
            edit::remove_block(s, &Block::resource(&block.type_name, &block.name))
        })?;
        // A parameter is deleted with the AWS CLI; any other object is
        // left to the engine's next apply, which finds it by its markers
        // with no block declaring it.
        if kind == Kind::Parameter {
            e.witness.delete_parameter(&id)?;
        } else {
            lane.engine.apply(clock, false)?;
        }
    }

    let gone = !after.contains(kind, &id);
    let one = Applied {
        destroyed: 1,
        ..Applied::default()
    };
    destroy = destroy.and_then(|s| {
        let mut p = Vec::new();
        if applied != one {
            p.push(format!("apply: {applied}"));
        }
        if !gone {
            p.push(format!("{} {id} is still live", kind.noun()));
        }
        if !replan.is_empty() {
            p.push(format!(
                "the next plan is not empty: {} ({})",
                replan.summary_line(),
                replan.describe()
            ));
        }
        if p.is_empty() {
            Ok(format!(
                "{s}; apply: {applied}; the AWS CLI no longer finds {} {id}; the next plan is empty",
                kind.noun()
            ))
        } else {
            Err(format!("{s}, but {}", p.join("; ")))
        }
    });

    let untouched = nothing_else_moved(
        lane,
        (&before, &after),
        &missing,
        &[(kind, id.clone())],
        &format!("{} {id}", kind.noun()),
    );
    Ok(StageOutput {
        assertions: vec![
            verdict(Toggle::RemoveDestroy, destroy),
            verdict(Toggle::RemoveUntouched, untouched),
        ],
        summary: format!(
            "resource \"{}\" \"{}\" deleted from both roots",
            block.type_name, block.name
        ),
        plans: vec![StagePlan::Engine(ep), StagePlan::Stock(Side::Oracle, sp)],
    })
}

/// Remove a block's second verdict: every undeclared object there
/// (`missing` names those that are not), nothing that existed before cold
/// deploy gone, and between the two inventories nothing but `removed`
/// (`what`, in words) left and nothing came.
pub(super) fn nothing_else_moved(
    lane: &Lane,
    (before, after): (&Inventory, &Inventory),
    missing: &[String],
    removed: &[(Kind, String)],
    what: &str,
) -> Result<String, String> {
    let estate = lane.estate;
    let e = lane.estate_twin();
    let mut expected = before.clone();
    for (k, id) in removed {
        if let Some(ids) = expected.0.get_mut(k) {
            ids.remove(id);
        }
    }
    let lost = expected.minus(after);
    let extra = after.minus(&expected);
    let lost_before = e.baseline.minus(after);
    let mut p = Vec::new();
    if !missing.is_empty() {
        p.push(format!("missing: {}", missing.join(", ")));
    }
    if !lost_before.is_empty() {
        p.push(format!(
            "gone though it existed before cold deploy: {}",
            lost_before.names()
        ));
    }
    if !lost.is_empty() {
        p.push(format!("also gone: {}", lost.names()));
    }
    if !extra.is_empty() {
        p.push(format!("new: {}", extra.names()));
    }
    if !p.is_empty() {
        return Err(p.join("; "));
    }
    Ok(format!(
        "{}the {} objects that existed before{} are all still there, and nothing but {what} left the inventory",
        if estate.undeclared.is_empty() {
            String::new()
        } else {
            format!(
                "the {} the running system wrote, and ",
                super::undeclared_summary(&estate.undeclared)
            )
        },
        e.baseline.len(),
        if estate.undeclared.is_empty() { "" } else { "," },
    ))
}

/// Change count: the count block lowered by one on both twins, then raised
/// back.
pub fn change_count(lane: &Lane, cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let estate = lane.estate;
    let e = lane.estate_twin();
    let block = &match &estate.knobs.count_block {
        Some(b) => b.clone(),
        None => match super::derive::counted_block(lane, cold)? {
            Some(b) => b,
            None => return super::calls::change_count(lane, cold),
        },
    };
    let mut insts: Vec<&StateInstance> = cold
        .estate_state
        .iter()
        .filter(|i| i.addr.type_name == block.type_name && i.addr.name == block.name)
        .collect();
    insts.sort_by_key(|i| i.addr.to_string());
    let kind = Kind::for_type(&block.type_name);
    let n = insts.len();
    let top = insts
        .iter()
        .find(|i| i.addr.to_string() == format!("{block}[{}]", n.saturating_sub(1)))
        .ok_or_else(|| {
            StepError::Knob(format!(
                "knobs.count_block = {block}: the cold state holds no {block}[{}]",
                n.saturating_sub(1)
            ))
        })?;
    let top_addr = top.addr.to_string();
    let top_id = kind.identity(top)?;
    let top_value = top.values["value"].as_str().unwrap_or("").to_owned();
    // A parameter is put back out of band under CountDown; any other
    // object cannot be, so the estate twin keeps its count instead.
    let keep_count = lane.breaks.on(Toggle::CountDown) && kind != Kind::Parameter;
    let set = |to: usize, skip_estate: bool| -> Result<(), StepError> {
        for t in &lane.twins {
            if skip_estate && t.side == Side::Estate {
                continue;
            }
            if !edit_root(&t.oracle.dir, |s| {
                edit::set_count(s, &Block::resource(&block.type_name, &block.name), to)
            })? {
                return Err(StepError::Knob(format!(
                    "knobs.count_block: no file of the {}'s root holds resource \"{}\" \"{}\" with a count",
                    t.side, block.type_name, block.name
                )));
            }
        }
        Ok(())
    };

    // Down by one.
    clock.say(&format!("Change count: {block} from {n} to {}", n - 1));
    set(n - 1, keep_count)?;
    let (ep_down, sp_down) = both_plans(lane, "count-down.tfplan")?;
    let mut down = same_as_stock(&ep_down, &sp_down, &[(top_addr.clone(), Action::Delete)]);
    let applied = both_apply(lane, "count-down.tfplan")?;
    let put_back = kind == Kind::Parameter;
    let tamper = lane.tamper(
        Toggle::CountDown,
        || match put_back {
            true => Ok(e.witness.put_parameter(&top_id, &top_value)?),
            false => Ok(()),
        },
        |()| match put_back {
            true => Ok(e.witness.delete_parameter(&top_id)?),
            false => Ok(()),
        },
    )?;
    let live = e.witness.inventory(&lane.kinds)?;
    tamper.restore()?;
    if keep_count {
        // The estate twin as the oracle twin is now.
        edit_root(&e.oracle.dir, |s| {
            edit::set_count(s, &Block::resource(&block.type_name, &block.name), n - 1)
        })?;
        lane.engine.apply(clock, false)?;
    }
    let others: Vec<String> = insts
        .iter()
        .filter(|i| i.addr.to_string() != top_addr)
        .map(|i| kind.identity(i))
        .collect::<Result<_, _>>()?;
    let absent_others: Vec<&String> = others
        .iter()
        .filter(|id| !live.contains(kind, id))
        .collect();
    down = down.and_then(|s| {
        let mut p = Vec::new();
        if applied.destroyed != 1 || applied.added + applied.changed != 0 {
            p.push(format!("apply: {applied}"));
        }
        if live.contains(kind, &top_id) {
            p.push(format!("{} {top_id} is still live", kind.noun()));
        }
        if !absent_others.is_empty() {
            p.push(format!("also gone: {:?}", absent_others));
        }
        if p.is_empty() {
            Ok(format!(
                "{n} to {}: {s}; apply: {applied}; the AWS CLI finds no {top_id} and still finds {}",
                n - 1,
                others.join(", ")
            ))
        } else {
            Err(format!("{n} to {}: {s}, but {}", n - 1, p.join("; ")))
        }
    });

    // Back up.
    clock.say(&format!("Change count: {block} from {} back to {n}", n - 1));
    set(n, false)?;
    let (ep_up, sp_up) = both_plans(lane, "count-up.tfplan")?;
    let mut up = same_as_stock(&ep_up, &sp_up, &[(top_addr.clone(), Action::Create)]);
    let applied = both_apply(lane, "count-up.tfplan")?;
    // A parameter is deleted (and put back); an object by ARN, which comes
    // back with a new ARN, loses the address marker it is found by.
    let tamper = match kind {
        Kind::Tagged => retag(
            lane,
            Toggle::CountUp,
            || {
                marked_objects(lane)?
                    .into_iter()
                    .find(|(a, _)| *a == top_addr)
                    .map(|(_, arn)| Handle::Object(arn))
                    .ok_or_else(|| {
                        StepError::Knob(format!("no object carries {ADDRESS_KEY}={top_addr}"))
                    })
            },
            ADDRESS_KEY,
            None,
            Some(top_addr.clone()),
        )?,
        _ => take_away(lane, Toggle::CountUp, &top_id)?,
    };
    let live = e.witness.inventory(&lane.kinds)?;
    // An object by ARN comes back with a new ARN: it is found by its
    // address marker.
    let back = if kind == Kind::Tagged {
        e.witness.markers(&live)?.iter().any(|h| {
            h.key == ADDRESS_KEY
                && h.value == top_addr
                && h.at.as_ref().is_some_and(|(k, id)| live.contains(*k, id))
        })
    } else {
        live.contains(kind, &top_id)
    };
    let found = if kind == Kind::Tagged {
        format!("an object carrying {ADDRESS_KEY}={top_addr}")
    } else {
        top_id.clone()
    };
    let replan = lane.engine.plan(clock, &[])?;
    tamper.restore()?;
    up = up.and_then(|s| {
        let mut p = Vec::new();
        if applied.added != 1 || applied.changed + applied.destroyed != 0 {
            p.push(format!("apply: {applied}"));
        }
        if !back {
            p.push(format!("the AWS CLI finds no {found}"));
        }
        if !replan.is_empty() {
            p.push(format!(
                "the next plan is not empty: {} ({})",
                replan.summary_line(),
                replan.describe()
            ));
        }
        if p.is_empty() {
            Ok(format!(
                "back to {n}: {s}; apply: {applied}; the AWS CLI finds {found} again; the next plan is empty"
            ))
        } else {
            Err(format!("back to {n}: {s}, but {}", p.join("; ")))
        }
    });
    Ok(StageOutput {
        assertions: vec![
            verdict(Toggle::CountDown, down),
            verdict(Toggle::CountUp, up),
        ],
        summary: format!("{block}'s count changed on both twins"),
        plans: vec![
            StagePlan::Engine(ep_down),
            StagePlan::Stock(Side::Oracle, sp_down),
            StagePlan::Engine(ep_up),
            StagePlan::Stock(Side::Oracle, sp_up),
        ],
    })
}

/// The engine's half of teardown: `choudoufu destroy` on the estate twin.
/// Returns what it destroyed; the assertions come after stock's half.
pub fn engine_destroy(lane: &Lane) -> Result<Applied, StepError> {
    lane.clock
        .say("Teardown: choudoufu destroy -auto-approve on the estate twin");
    Ok(lane.engine.apply(lane.clock, true)?.0)
}

/// The assertion on the engine's teardown, read after it.
pub fn engine_teardown_assertion(
    lane: &Lane,
    applied: Applied,
    stock_destroyed: usize,
) -> Result<Assertion, StepError> {
    let estate = lane.estate;
    let e = lane.estate_twin();
    let queue = lane.knob(Toggle::TeardownEngine, |k| &k.lost_preexisting_queue)?;
    let tamper = lane.tamper(
        Toggle::TeardownEngine,
        || Ok(e.witness.tag_queue(queue, ESTATE_KEY, &estate.name)?),
        |()| Ok(e.witness.untag_queue(queue, ESTATE_KEY)?),
    )?;
    let after = e.witness.inventory(&lane.kinds)?;
    let hits = e.witness.markers(&after)?;
    tamper.restore()?;
    let mut p = Vec::new();
    if !hits.is_empty() {
        p.push(format!(
            "marker tags left: {}",
            hits.iter()
                .map(|h| format!("{}={} on {}", h.key, h.value, h.object))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let lost = e.baseline.minus(&after);
    let extra = after.minus(&e.baseline);
    if !lost.is_empty() {
        p.push(format!(
            "gone though it existed before cold deploy: {}",
            lost.names()
        ));
    }
    if !extra.is_empty() {
        p.push(format!("still live: {}", extra.names()));
    }
    if applied.destroyed != stock_destroyed || applied.added + applied.changed != 0 {
        p.push(format!(
            "choudoufu destroy: {applied}, where stock destroyed {stock_destroyed}"
        ));
    }
    Ok(if p.is_empty() {
        Assertion::new(
            Toggle::TeardownEngine,
            true,
            format!(
                "choudoufu destroy on the estate twin destroyed {} objects, as many as stock's destroy on the oracle twin; no object carries a marker tag and exactly the {} objects that existed before are left, read with the AWS CLI",
                applied.destroyed,
                e.baseline.len()
            ),
        )
    } else {
        Assertion::new(Toggle::TeardownEngine, false, p.join("; "))
    })
}

/// Greenfield apply: the estate's root applied by the engine on the emptied
/// estate twin, from nothing.
pub fn greenfield(lane: &Lane, cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let estate = lane.estate;
    let e = lane.estate_twin();
    // The estate's own root again (earlier stages edited the working copy),
    // no state file, an empty record store.
    for f in &estate.root_files {
        let to = lane.engine.dir.join(f.file_name().unwrap_or_default());
        fs::copy(f, &to).map_err(io(f))?;
    }
    // The destroy should have emptied the record store in the live system;
    // whatever it left is deleted here, and the page says so.
    let left: Vec<String> = e
        .witness
        .record_parameters(&estate.name)?
        .into_keys()
        .collect();
    e.witness.delete_parameters(&left)?;
    let local = lane.engine.dir.join(".choudoufu");
    let local_left = local.exists();
    if local_left {
        fs::remove_dir_all(&local).map_err(io(&local))?;
    }
    let state_file = lane.engine.dir.join("terraform.tfstate").exists();
    clock.say("Greenfield apply: choudoufu apply from nothing on the estate twin");
    let (applied, _) = lane.engine.apply(clock, false)?;
    let records = e.witness.records(&estate.name)?.len();

    let tamper = disturb(
        lane,
        Toggle::GreenfieldReplan,
        |k| &k.drift_parameter,
        "before-replan",
        None,
    )?;
    // An object nothing but a record proves is refused without records,
    // with an import block as the remedy: planned again with those import
    // blocks, taken out before the stages after this one.
    let (with, without) = side_by_side(
        || lane.engine.plan(clock, &[]),
        || lane.engine.plan_or_refusal(clock, &["-no-records"]),
    );
    let (with, without) = (with?, without?);
    let (without, claimed, imports) =
        super::claim::follow_remedies(&lane.engine.dir, without, || {
            lane.engine.plan_or_refusal(clock, &["-no-records"])
        })?;
    drop(imports);
    tamper.restore()?;
    let inventory = disturb(
        lane,
        Toggle::GreenfieldInventory,
        |k| &k.second_drift_parameter,
        "after-apply",
        None,
    )?;
    let markers = unstamp(lane, Toggle::GreenfieldMarkers)?;
    clock.say("Greenfield apply: reading the estate twin back with the AWS CLI");
    let live = e.witness.inventory(&lane.kinds)?;
    let described: std::collections::BTreeMap<String, Value> = e
        .witness
        .describe(&live)?
        .into_iter()
        .map(|(k, v)| (k, normalised(&v)))
        .collect();
    let hits = e.witness.markers(&live)?;
    // The stages after this one start from the estate as applied.
    inventory.restore()?;
    markers.restore()?;

    // The inventory equals stock's cold deploy, field by field.
    let mut diffs = Vec::new();
    let keys: BTreeSet<&String> = described
        .keys()
        .chain(cold.oracle_described.keys())
        .collect();
    for k in keys {
        match (described.get(k), cold.oracle_described.get(k)) {
            (Some(a), Some(b)) => differences_but(a, b, k, &cold.unstable, &mut diffs),
            (Some(_), None) => diffs.push(format!("{k}: live here, not in stock's cold deploy")),
            (None, Some(_)) => diffs.push(format!("{k}: in stock's cold deploy, not live here")),
            (None, None) => {}
        }
    }
    let created =
        applied.added == cold.estate_state.len() && applied.changed + applied.destroyed == 0;
    let mut p = Vec::new();
    if !state_file && created && diffs.is_empty() {
        // all good
    } else {
        if state_file {
            p.push("a terraform.tfstate is in the root".to_owned());
        }
        if !created {
            p.push(format!(
                "apply: {applied}, where stock's cold deploy created {}",
                cold.estate_state.len()
            ));
        }
        if !diffs.is_empty() {
            p.push(format!(
                "{} differences from stock's cold deploy: {}",
                diffs.len(),
                diffs.iter().take(8).cloned().collect::<Vec<_>>().join("; ")
            ));
        }
    }
    let inventory = if p.is_empty() {
        Ok(format!(
            "choudoufu apply with no terraform.tfstate and an empty record store ({}{}): {applied}; the AWS CLI describes all {} objects on the estate twin (the {} that existed before among them) field by field exactly as stock's cold deploy left the oracle twin, marker tags, timestamps, generated ids and versions left out{}",
            match left.len() {
                0 => format!("the destroy left no parameter under {}", engine::record::ssm::path(&estate.name)),
                n => format!(
                    "the destroy left {n} parameter(s) under {}, deleted with the AWS CLI before the apply: {}",
                    engine::record::ssm::path(&estate.name),
                    left.join(", ")
                ),
            },
            if local_left {
                "; a local .choudoufu folder in the working copy removed too"
            } else {
                ""
            },
            described.len(),
            e.baseline.len(),
            match cold.unstable.len() {
                0 => String::new(),
                n => format!(
                    ", and the {n} field(s) the two stock deploys hold differently ({})",
                    cold.unstable.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
            }
        ))
    } else {
        Err(p.join("; "))
    };

    // Every tagged object carries the marker.
    let state = cold.estate_state.as_slice();
    let Markers {
        stamped: tagged,
        problems,
        unread,
    } = marker_problems(state, &live, &hits, &estate.name, false)?;
    let markers = if problems.is_empty() {
        Ok(format!(
            "all {} tagged objects it can read carry tofu-estate={} and their own tofu-address{}, and none of the {} that existed before does",
            tagged - unread.len(),
            estate.name,
            if unread.is_empty() {
                String::new()
            } else {
                format!(" (not read: {})", unread.join(", "))
            },
            e.baseline.len()
        ))
    } else {
        Err(problems.join("; "))
    };

    // Replans are empty: with the records; without them, nothing created,
    // destroyed or replaced, and updates only of what a record holds.
    let held = super::lost_store::held(&e.witness.records(&estate.name)?);
    let replan = match &without {
        Ok(without) => judge_replans(&with, without, &held, &claimed, records, &estate.name),
        Err(output) => Err(format!(
            "with -no-records the plan was refused: {}",
            super::lost_store::refusals(output)
        )),
    };
    Ok(StageOutput {
        assertions: vec![
            verdict(Toggle::GreenfieldInventory, inventory),
            verdict(Toggle::GreenfieldMarkers, markers),
            verdict(Toggle::GreenfieldReplan, replan),
        ],
        summary: "the engine applied the estate's root on the emptied estate twin".into(),
        plans: without.into_iter().map(StagePlan::Engine).collect(),
    })
}

/// Greenfield's replans: with the records, empty; with `-no-records`
/// (and the import blocks the refusals of `claimed` gave), nothing
/// created, destroyed or replaced, and updates only of what a record
/// holds (`held`).
fn judge_replans(
    with: &EnginePlan,
    without: &EnginePlan,
    held: &BTreeMap<String, BTreeSet<String>>,
    claimed: &[super::claim::Unclaimed],
    records: usize,
    estate: &str,
) -> Result<String, String> {
    let mut residue = super::lost_store::residue(without, held);
    residue
        .wrong
        .extend(super::claim::imports_exactly(without, claimed).err());
    let mut p = Vec::new();
    if !with.is_empty() {
        p.push(format!(
            "with the record store ({records} records in the live store): {} ({})",
            with.summary_line(),
            with.describe()
        ));
    }
    if !residue.wrong.is_empty() {
        p.push(format!(
            "with -no-records: {} ({}), where nothing may be created, destroyed or replaced: {}",
            without.summary_line(),
            without.describe(),
            residue.wrong.join("; ")
        ));
    }
    if !p.is_empty() {
        return Err(p.join("; "));
    }
    Ok(format!(
        "the replan with the record store ({records} records in the live store, {}) is empty ({}); with -no-records {}its plan ({}) creates, destroys and replaces nothing{}",
        engine::record::ssm::place(estate),
        with.summary_line(),
        super::claim::refused_words(claimed),
        without.summary_line(),
        super::lost_store::put_back(&residue.updates),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::claim::Unclaimed;

    #[test]
    fn greenfields_replan_without_records_is_held_to_importing_exactly_the_refused_objects() {
        let empty = EnginePlan::parse(
            0,
            "\nNo changes. Your infrastructure matches the configuration.\n",
        );
        let group = [Unclaimed {
            address: "aws_iam_group.ops".into(),
            id: "ops".into(),
        }];
        let imported = EnginePlan::parse(
            2,
            "  # aws_iam_group.ops will be imported\n\nPlan: 1 to import, 0 to add, 0 to change, 0 to destroy.\n",
        );
        let ok = judge_replans(&empty, &imported, &BTreeMap::new(), &group, 3, "e").unwrap();
        assert!(
            ok.contains("with -no-records it refused the 1 object(s) nothing but a record proves, by address, each with an import block as the remedy (aws_iam_group.ops (ops)); with those import blocks written, its plan (Plan: 1 to import,"),
            "{ok}"
        );
        // Without refusals the words are as before; a plan importing
        // nothing after a refusal fails.
        let plain = judge_replans(&empty, &empty, &BTreeMap::new(), &[], 3, "e").unwrap();
        assert!(
            plain.contains("with -no-records its plan (No changes."),
            "{plain}"
        );
        assert!(judge_replans(&empty, &empty, &BTreeMap::new(), &group, 3, "e").is_err());
    }
}
