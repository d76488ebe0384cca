//! Rename, Remove a block and Change count on a root whose own folder
//! holds module calls and no block to move (a published module's example,
//! and most roots users write): the moves users make on such roots.
//!
//! Rename renames a call with a `moved` block: stock moves every instance
//! in its state with zero churn; the engine finds each object as before and
//! rewrites only the address markers inside the call. Remove a block
//! deletes a call with the outputs that read it: both destroy exactly its
//! objects; the call is then put back, so the stages after it have the
//! whole root. Change count gives a call `count = 1` with the `moved`
//! block terraform needs to keep its objects (terraform implies no move for
//! a module call), lowers it to zero and raises it back to one.

use engine::addr::InstanceKey;

use crate::choudoufu::{Action, Applied, EnginePlan};
use crate::edit::{self, Block};
use crate::stage::Toggle;
use crate::substrate::Side;
use crate::witness::{Handle, Inventory, Kind};

use super::derive::{self, within, Call};
use super::kit::{
    both_apply, both_plans, edit_root, edit_root_saving, marked_objects, put_back, retag,
    same_as_stock, verdict, ADDRESS_KEY,
};
use super::rename::{beyond_the_marker, carries_new_address, stock_moves};
use super::{both_ok, ColdOutcome, Lane, StageOutput, StagePlan, StepError, TwinView};

/// The number of in-place updates in the engine's plan when every change
/// is an update within `call` (`module.a.`, `module.a[0].`) confined to
/// its address marker; otherwise what else it proposes.
fn marker_updates(plan: &EnginePlan, call: &str) -> Result<usize, String> {
    let mut problems = Vec::new();
    for (addr, action) in &plan.changes {
        if *action != Action::Update || !addr.starts_with(call) {
            problems.push(format!("{addr} ({})", action.word()));
            continue;
        }
        let beyond = beyond_the_marker(plan, addr);
        if !beyond.is_empty() {
            problems.push(format!(
                "{addr} changes more than its address marker: {}",
                beyond.join(" | ")
            ));
        }
    }
    match (problems.is_empty(), plan.changes.len()) {
        (true, 0) => Err(format!(
            "choudoufu proposed no change ({}) where the address markers within {call} move",
            plan.summary_line()
        )),
        (true, n) => Ok(n),
        (false, _) => Err(format!(
            "choudoufu proposed {} ({})",
            problems.join(", "),
            plan.summary_line()
        )),
    }
}

/// The objects the witness saw in `live` of the call's instances, by the
/// cold deploy's identities.
fn seen(call: &Call, live: &Inventory) -> Vec<(Kind, String)> {
    call.instances
        .iter()
        .filter_map(|i| {
            let k = Kind::for_type(&i.type_name);
            let id = k.identity(i).ok()?;
            live.contains(k, &id).then_some((k, id))
        })
        .collect()
}

/// The ARNs of the objects carrying this estate's address markers within
/// `call` (`module.a[0].`), by address.
fn marked_within(lane: &Lane, call: &str) -> Result<Vec<(String, String)>, StepError> {
    Ok(marked_objects(lane)?
        .into_iter()
        .filter(|(a, _)| a.starts_with(call))
        .collect())
}

/// The call of those nothing but outputs reads (in name order) that `pick`
/// takes, or why the stage is not run.
fn read_by_outputs_only<'c>(
    lane: &Lane,
    cold: &'c ColdOutcome,
    pick: impl FnOnce(&mut Vec<Call<'c>>) -> Option<Call<'c>>,
) -> Result<Call<'c>, StepError> {
    pick(&mut derive::calls(lane, cold, true)?).ok_or_else(|| {
        StepError::NotDerived(format!(
            "{}, nothing but outputs reading it",
            derive::NOTHING_TO_MOVE
        ))
    })
}

pub fn rename(lane: &Lane, cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let e = lane.estate_twin();
    let calls = derive::calls(lane, cold, false)?;
    let call = calls
        .first()
        .ok_or_else(|| StepError::NotDerived(derive::NOTHING_TO_MOVE.into()))?;
    let from = call.now.clone();
    let to = derive::renamed(&from);
    let (fb, tb) = (Block::call(&from), Block::call(&to));
    let moved = edit::moved_block(&fb.traversal(), &tb.traversal());
    clock.say(&format!(
        "Rename: module.{from} -> module.{to} with a moved block on both twins"
    ));
    both_ok(lane.both(|t: &TwinView| {
        let renamed = edit_root(&t.oracle.dir, |s| {
            let mut out = edit::rename_block(s, &fb, &to)?;
            if fb.declared_in(s) {
                out.push_str(&moved);
            }
            Some(out)
        })?;
        if !renamed {
            return Err(StepError::Knob(format!(
                "no file of the {}'s root declares module \"{from}\"",
                t.side
            )));
        }
        Ok(())
    }))?;
    // A renamed call is a module terraform has not installed under that
    // name yet.
    lane.oracle_twin().oracle.init(clock)?;
    lane.engine.init(clock)?;
    let tamper = lane.tamper(
        Toggle::RenameInPlace,
        || {
            edit_root_saving(&e.oracle.dir, |s| {
                s.contains(&moved).then(|| s.replace(&moved, ""))
            })
        },
        put_back,
    )?;
    let (ep, sp) = both_plans(lane, "rename.tfplan")?;
    tamper.restore()?;
    let applied = both_apply(lane, "rename.tfplan")?;

    let pairs: Vec<(String, String)> = call
        .instances
        .iter()
        .map(|i| (i.addr.to_string(), within(&i.addr, &to, None)))
        .collect();
    let mut p = Vec::new();
    let updates = marker_updates(&ep, &format!("{}.", tb.traversal()))
        .map_err(|s| p.push(s))
        .unwrap_or(0);
    p.extend(stock_moves(&sp, &pairs));
    let want = Applied {
        changed: updates,
        ..Applied::default()
    };
    if updates > 0 && applied != want {
        p.push(format!(
            "choudoufu apply: {applied}, where {want} was expected"
        ));
    }
    let churn = if p.is_empty() {
        Ok(format!(
            "choudoufu proposed no add and no destroy: {updates} in-place updates within module.{to} ({}), each confined to its {ADDRESS_KEY} tag rewritten from module.{from} to module.{to}; stock's plan on the oracle twin moves all {} instances with zero churn ({}), since stock writes no marker; apply: {applied}",
            ep.summary_line(),
            pairs.len(),
            sp.summary_line()
        ))
    } else {
        Err(p.join("; "))
    };

    // The first object the tagging API lists carries its new address.
    let first = call.readable[0];
    let handle = Handle::Object(first.values["arn"].as_str().unwrap_or_default().to_owned());
    let new_addr = within(&first.addr, &to, None);
    let tamper = retag(
        lane,
        Toggle::RenameMarker,
        || Ok(handle.clone()),
        ADDRESS_KEY,
        Some(first.addr.to_string()),
        Some(new_addr.clone()),
    )?;
    let tags = handle.tags(&e.witness)?;
    tamper.restore()?;
    let replan = lane.engine.plan(clock, &[])?;
    let marker = carries_new_address(
        &handle.to_string(),
        tags.as_ref(),
        &new_addr,
        &lane.estate.name,
        &replan,
    );
    Ok(StageOutput {
        assertions: vec![
            verdict(Toggle::RenameInPlace, churn),
            verdict(Toggle::RenameMarker, marker),
        ],
        summary: format!(
            "moved block: module.{from} -> module.{to} on both twins, a module call of the root's own folder, its references renamed too"
        ),
        plans: vec![StagePlan::Engine(ep), StagePlan::Stock(Side::Oracle, sp)],
    })
}

/// Remove a block on a root of module calls: the last call nothing but
/// outputs reads, deleted with those outputs, then put back.
pub fn remove(lane: &Lane, cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let estate = lane.estate;
    let breaks = lane.breaks;
    let e = lane.estate_twin();
    let call = &read_by_outputs_only(lane, cold, Vec::pop)?;
    let name = call.now.clone();
    let block = Block::call(&name);
    let delete = |s: &str| {
        let out = edit::remove_outputs_reading(s, &block).unwrap_or_else(|| s.to_owned());
        let out = edit::remove_block(&out, &block).unwrap_or(out);
        (out != s).then_some(out)
    };
    let before = e.witness.inventory(&lane.kinds)?;
    let objects = seen(call, &before);
    clock.say(&format!(
        "Remove a block: module.{name} and the outputs reading it deleted from both roots"
    ));
    let saved = both_ok(lane.both(|t: &TwinView| {
        if t.side == Side::Estate && breaks.on(Toggle::RemoveDestroy) {
            return Ok(Vec::new());
        }
        let saved = edit_root_saving(&t.oracle.dir, delete)?;
        if saved.is_empty() {
            return Err(StepError::Knob(format!(
                "no file of the {}'s root declares module \"{name}\"",
                t.side
            )));
        }
        Ok(saved)
    }))?;
    let (ep, sp) = both_plans(lane, "remove.tfplan")?;
    let want: Vec<(String, Action)> = call
        .instances
        .iter()
        .map(|i| (within(&i.addr, &name, None), Action::Delete))
        .collect();
    let mut destroy = same_as_stock(&ep, &sp, &want);
    let applied = both_apply(lane, "remove.tfplan")?;

    let taken = estate.undeclared.iter().find(|u| u.can_be_taken_away());
    let tamper = lane.tamper(
        Toggle::RemoveUntouched,
        || match taken {
            Some(u) => super::take_undeclared(&e.witness, u),
            None => Ok(None),
        },
        |held| match taken {
            Some(u) => super::put_back_undeclared(&e.witness, u, held),
            None => Ok(()),
        },
    )?;
    let after = e.witness.inventory(&lane.kinds)?;
    let missing = super::missing_undeclared(&e.witness, &estate.undeclared)?;
    tamper.restore()?;
    let replan = lane.engine.plan(clock, &[])?;
    let [mut estate_saved, oracle_saved] = saved;
    if breaks.on(Toggle::RemoveDestroy) {
        // Leave the estate twin as the oracle twin is: call and objects
        // gone, by the engine's next apply.
        estate_saved = edit_root_saving(&e.oracle.dir, delete)?;
        lane.engine.apply(clock, false)?;
    }

    let still: Vec<String> = objects
        .iter()
        .filter(|(k, id)| after.contains(*k, id))
        .map(|(k, id)| format!("{} {id}", k.noun()))
        .collect();
    let one = Applied {
        destroyed: want.len(),
        ..Applied::default()
    };
    destroy = destroy.and_then(|s| {
        let mut p = Vec::new();
        if applied != one {
            p.push(format!("apply: {applied}"));
        }
        if !still.is_empty() {
            p.push(format!("still live: {}", still.join(", ")));
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
                "{s}; apply: {applied}; the AWS CLI no longer finds any of the call's {} objects it read before; the next plan is empty",
                objects.len()
            ))
        } else {
            Err(format!("{s}, but {}", p.join("; ")))
        }
    });

    let untouched = super::day_two::nothing_else_moved(
        lane,
        (&before, &after),
        &missing,
        &objects,
        &format!("the call's {} objects", objects.len()),
    );

    // The call back, so the stages after this one have the whole root.
    clock.say(&format!(
        "Remove a block: module.{name} put back on both twins"
    ));
    put_back(estate_saved)?;
    put_back(oracle_saved)?;
    both_plans(lane, "remove-back.tfplan")?;
    both_apply(lane, "remove-back.tfplan")?;
    Ok(StageOutput {
        assertions: vec![
            verdict(Toggle::RemoveDestroy, destroy),
            verdict(Toggle::RemoveUntouched, untouched),
        ],
        summary: format!(
            "module \"{name}\" and the outputs reading it deleted from both roots, a call nothing else reads; put back after the checks"
        ),
        plans: vec![StagePlan::Engine(ep), StagePlan::Stock(Side::Oracle, sp)],
    })
}

/// Change count on a root of module calls: the first call nothing but
/// outputs reads gains `count = 1` with its `moved` block, then goes to
/// zero (the outputs reading it removed) and back to one.
pub fn change_count(lane: &Lane, cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let breaks = lane.breaks;
    let e = lane.estate_twin();
    let call = &read_by_outputs_only(lane, cold, |calls| {
        (!calls.is_empty()).then(|| calls.remove(0))
    })?;
    let name = call.now.clone();
    let block = Block::call(&name);
    let whole = block.traversal();
    let first = format!("{whole}[0]");
    let moved = edit::moved_block(&whole, &first);
    // Each edit on both twins; under `skip_estate` the estate twin keeps
    // its root, and the edit is returned to be made there later.
    let edit_both = |f: &(dyn Fn(&str) -> Option<String> + Sync), skip_estate: bool| {
        both_ok(lane.both(|t: &TwinView| {
            if skip_estate && t.side == Side::Estate {
                return Ok(());
            }
            match edit_root(&t.oracle.dir, f)? {
                true => Ok(()),
                false => Err(StepError::Knob(format!(
                    "no file of the {}'s root declares module \"{name}\" as the stage left it",
                    t.side
                ))),
            }
        }))
        .map(drop)
    };
    let counted = |s: &str| {
        let declared = block.declared_in(s);
        let mut out = match declared {
            true => edit::add_count(s, &block, 1)?,
            false => s.to_owned(),
        };
        if let Some(indexed) = edit::index_references(&out, &block, 0) {
            out = indexed;
        }
        if declared {
            out.push_str(&moved);
        }
        (out != s).then_some(out)
    };
    let zero = |s: &str| {
        let out = edit::remove_outputs_reading(s, &block).unwrap_or_else(|| s.to_owned());
        let out = edit::set_count(&out, &block, 0).unwrap_or(out);
        (out != s).then_some(out)
    };
    let one = |s: &str| edit::set_count(s, &block, 1);
    let keyed =
        |i: &&crate::oracle::StateInstance| within(&i.addr, &name, Some(InstanceKey::Int(0)));

    // Given a count, with the move that keeps its objects.
    let skip = breaks.on(Toggle::CountDown);
    clock.say(&format!(
        "Change count: module.{name} gains count = 1, moved to {first}"
    ));
    edit_both(&counted, skip)?;
    let (ep_move, sp_move) = both_plans(lane, "count-one.tfplan")?;
    let applied_move = both_apply(lane, "count-one.tfplan")?;
    let pairs: Vec<(String, String)> = call
        .instances
        .iter()
        .map(|i| (within(&i.addr, &name, None), keyed(i)))
        .collect();
    let mut p = Vec::new();
    match marker_updates(&ep_move, &format!("{first}.")) {
        Ok(n) if applied_move.changed != n || applied_move.added + applied_move.destroyed != 0 => {
            p.push(format!("choudoufu apply: {applied_move}"));
        }
        Ok(_) => {}
        Err(s) => p.push(s),
    }
    p.extend(stock_moves(&sp_move, &pairs));

    // Down to zero.
    let objects = marked_within(lane, &format!("{first}."))?;
    clock.say(&format!("Change count: module.{name} from 1 to 0"));
    edit_both(&zero, skip)?;
    let (ep_down, sp_down) = both_plans(lane, "count-down.tfplan")?;
    let want: Vec<(String, Action)> = call
        .instances
        .iter()
        .map(|i| (keyed(i), Action::Delete))
        .collect();
    let down_plans = same_as_stock(&ep_down, &sp_down, &want);
    let applied_down = both_apply(lane, "count-down.tfplan")?;
    let live = e.witness.inventory(&lane.kinds)?;
    if skip {
        // The estate twin as the oracle twin is now.
        edit_root(&e.oracle.dir, counted)?;
        edit_root(&e.oracle.dir, zero)?;
        lane.engine.apply(clock, false)?;
    }
    let still: Vec<&String> = objects
        .iter()
        .filter(|(_, arn)| live.contains(Kind::Tagged, arn))
        .map(|(_, arn)| arn)
        .collect();
    match down_plans {
        Err(s) => p.push(s),
        Ok(_) if applied_down.destroyed != want.len() => {
            p.push(format!("choudoufu apply to zero: {applied_down}"))
        }
        Ok(_) => {}
    }
    if !still.is_empty() {
        p.push(format!(
            "at zero the AWS CLI still finds {}",
            still
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let down = if p.is_empty() {
        Ok(format!(
            "count = 1 with moved {{ from = {whole}, to = {first} }}: {} in-place updates confined to the address markers ({}), where stock moves all {} instances with zero churn ({}); then count = 0: choudoufu proposed exactly the {} destroys stock's own plan proposes ({}); apply: {applied_down}; the AWS CLI finds none of the call's {} marked objects",
            applied_move.changed,
            ep_move.summary_line(),
            pairs.len(),
            sp_move.summary_line(),
            want.len(),
            ep_down.summary_line(),
            objects.len()
        ))
    } else {
        Err(p.join("; "))
    };

    // Back to one.
    clock.say(&format!("Change count: module.{name} from 0 back to 1"));
    edit_both(&one, false)?;
    let (ep_up, sp_up) = both_plans(lane, "count-up.tfplan")?;
    let want: Vec<(String, Action)> = call
        .instances
        .iter()
        .map(|i| (keyed(i), Action::Create))
        .collect();
    let up_plans = same_as_stock(&ep_up, &sp_up, &want);
    let applied_up = both_apply(lane, "count-up.tfplan")?;
    let readable: Vec<String> = call.readable.iter().map(keyed).collect();
    let tamper = retag(
        lane,
        Toggle::CountUp,
        || {
            marked_objects(lane)?
                .into_iter()
                .find(|(a, _)| *a == readable[0])
                .map(|(_, arn)| Handle::Object(arn))
                .ok_or_else(|| {
                    StepError::Knob(format!("no object carries {ADDRESS_KEY}={}", readable[0]))
                })
        },
        ADDRESS_KEY,
        None,
        Some(readable[0].clone()),
    )?;
    let back = marked_within(lane, &format!("{first}."))?;
    tamper.restore()?;
    let replan = lane.engine.plan(clock, &[])?;
    let absent: Vec<&String> = readable
        .iter()
        .filter(|a| !back.iter().any(|(b, _)| b == *a))
        .collect();
    let up = up_plans.and_then(|s| {
        let mut p = Vec::new();
        if applied_up.added != want.len() || applied_up.changed + applied_up.destroyed != 0 {
            p.push(format!("apply: {applied_up}"));
        }
        if !absent.is_empty() {
            p.push(format!(
                "no live object carries {ADDRESS_KEY}={}",
                absent.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            ));
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
                "back to 1: {s}; apply: {applied_up}; the AWS CLI finds a live object carrying each of the {} address markers the tagging API lists; the next plan is empty",
                readable.len()
            ))
        } else {
            Err(format!("back to 1: {s}, but {}", p.join("; ")))
        }
    });
    Ok(StageOutput {
        assertions: vec![verdict(Toggle::CountDown, down), verdict(Toggle::CountUp, up)],
        summary: format!(
            "module \"{name}\" given count = 1 with a moved block, then 0 (the outputs reading it removed) and 1 again, on both twins"
        ),
        plans: vec![
            StagePlan::Engine(ep_move),
            StagePlan::Stock(Side::Oracle, sp_move),
            StagePlan::Engine(ep_down),
            StagePlan::Stock(Side::Oracle, sp_down),
            StagePlan::Engine(ep_up),
            StagePlan::Stock(Side::Oracle, sp_up),
        ],
    })
}
