//! The moves a root run derives from the root itself, where an estate's
//! manifest names them: which block Rename moves, Remove a block deletes
//! and Change count shrinks, or on a root of module calls which call. A block qualifies when it sits in the root's
//! own folder, nothing else in the root refers to it (so the move touches
//! exactly its objects; Plan, review, apply's tag may go on a block others
//! refer to), and its objects are read by ARN through the tagging API,
//! which lists them now (so the witness can follow them).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use engine::addr::{InstanceKey, ResourceInstanceAddr};

use crate::edit::Block;
use crate::oracle::StateInstance;
use crate::witness::Kind;

use super::kit::io;
use super::{ColdOutcome, Lane, StepError};

/// The text of the root's own `.tf` files in `dir`, file by file.
fn root_texts(dir: &Path) -> Result<Vec<String>, StepError> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(io(dir))? {
        let path = entry.map_err(io(dir))?.path();
        if path.extension().is_some_and(|e| e == "tf") {
            out.push(fs::read_to_string(&path).map_err(io(&path))?);
        }
    }
    Ok(out)
}

/// The blocks that qualify, by their block address (no instance key), each
/// with its instances in the cold state, in address order; with
/// `referenced`, also blocks something else refers to.
fn qualifying<'c>(
    lane: &Lane,
    cold: &'c ColdOutcome,
    referenced: bool,
) -> Result<BTreeMap<String, Vec<&'c StateInstance>>, StepError> {
    let e = lane.estate_twin();
    let live = e.witness.inventory(&lane.kinds)?;
    let texts = root_texts(&e.oracle.dir)?;
    let mut blocks: BTreeMap<String, Vec<&StateInstance>> = BTreeMap::new();
    for i in &cold.estate_state {
        let a = &i.addr;
        let readable = Kind::for_type(&a.type_name) == Kind::Tagged
            && i.values["arn"]
                .as_str()
                .is_some_and(|arn| live.contains(Kind::Tagged, arn));
        if a.module.is_empty() && readable {
            blocks
                .entry(format!("{}.{}", a.type_name, a.name))
                .or_default()
                .push(i);
        }
    }
    blocks.retain(|_, insts| {
        let a = &insts[0].addr;
        let header = format!("resource \"{}\" \"{}\" {{", a.type_name, a.name);
        let declared = texts
            .iter()
            .any(|t| t.lines().any(|l| l.trim_end() == header));
        declared
            && (referenced
                || !texts
                    .iter()
                    .any(|t| crate::edit::refers_to(t, &Block::resource(&a.type_name, &a.name))))
    });
    Ok(blocks)
}

/// The single-instance blocks that qualify (with `referenced`, also those
/// something refers to), in address order.
pub(crate) fn single_blocks<'c>(
    lane: &Lane,
    cold: &'c ColdOutcome,
    referenced: bool,
) -> Result<Vec<&'c StateInstance>, StepError> {
    Ok(qualifying(lane, cold, referenced)?
        .into_values()
        .filter(|insts| insts.len() == 1 && insts[0].addr.key.is_none())
        .map(|insts| insts[0])
        .collect())
}

/// The first qualifying block with a top-level `count` argument (its
/// instances keyed by integers), as its block address.
pub(crate) fn counted_block(
    lane: &Lane,
    cold: &ColdOutcome,
) -> Result<Option<ResourceInstanceAddr>, StepError> {
    let texts = root_texts(&lane.estate_twin().oracle.dir)?;
    Ok(qualifying(lane, cold, false)?
        .into_values()
        .find_map(|insts| {
            let a = &insts[0].addr;
            let counted = insts
                .iter()
                .all(|i| matches!(i.addr.key, Some(InstanceKey::Int(_))))
                && texts.iter().any(|t| {
                    crate::edit::set_count(t, &Block::resource(&a.type_name, &a.name), 0).is_some()
                });
            counted.then(|| ResourceInstanceAddr {
                key: None,
                ..a.clone()
            })
        }))
}

/// Why a stage that moves a block or a module call is not run when
/// neither qualifies.
pub(crate) const NOTHING_TO_MOVE: &str = "no block of the root's own folder has one instance whose object the tagging API lists and that nothing else refers to, and no module call of it without count or for_each holds an object the tagging API lists";

/// A module call of the root's own folder that the stages move: declared
/// there with neither count nor for_each, holding at least one object the
/// tagging API lists, so the witness can follow the move.
pub(crate) struct Call<'c> {
    /// Its name in the estate twin's root now: its own, or the one Rename
    /// gave it.
    pub now: String,
    /// Every managed instance within it (its nested calls' too), in the
    /// estate twin's cold state.
    pub instances: Vec<&'c StateInstance>,
    /// Those the tagging API lists by ARN.
    pub readable: Vec<&'c StateInstance>,
}

/// The calls that qualify, in name order; with `outputs_only`, only those
/// nothing but `output` blocks reads, so deleting the call with those
/// outputs leaves a valid root.
pub(crate) fn calls<'c>(
    lane: &Lane,
    cold: &'c ColdOutcome,
    outputs_only: bool,
) -> Result<Vec<Call<'c>>, StepError> {
    let e = lane.estate_twin();
    let live = e.witness.inventory(&lane.kinds)?;
    let texts = root_texts(&e.oracle.dir)?;
    let marked: BTreeSet<String> = super::kit::marked_in(lane, &live)?
        .into_iter()
        .map(|(address, _)| address)
        .collect();
    let mut by_call: BTreeMap<String, Vec<&StateInstance>> = BTreeMap::new();
    for i in &cold.estate_state {
        if let Some(step) = i.addr.module.first() {
            by_call.entry(step.name.clone()).or_default().push(i);
        }
    }
    Ok(by_call
        .into_iter()
        .filter_map(|(name, instances)| {
            // Under the name Rename gave it, once it has.
            let renamed = renamed(&name);
            let now = [name.as_str(), renamed.as_str()]
                .into_iter()
                .find(|n| texts.iter().any(|t| Block::call(n).declared_in(t)))?;
            let block = Block::call(now);
            let keyed = instances.iter().any(|i| i.addr.module[0].key.is_some());
            let read_elsewhere = outputs_only
                && !texts
                    .iter()
                    .all(|t| crate::edit::only_outputs_read(t, &block));
            if keyed || read_elsewhere {
                return None;
            }
            // Listed under its cold ARN, or created again since (Remove a
            // block puts a call back, Change count takes it to zero and
            // back) and listed carrying its address marker.
            let readable: Vec<&StateInstance> = instances
                .iter()
                .copied()
                .filter(|i| {
                    Kind::for_type(&i.type_name) == Kind::Tagged
                        && (i.values["arn"]
                            .as_str()
                            .is_some_and(|arn| live.contains(Kind::Tagged, arn))
                            || [None, Some(InstanceKey::Int(0))]
                                .into_iter()
                                .any(|k| marked.contains(&within(&i.addr, now, k))))
                })
                .collect();
            (!readable.is_empty()).then(|| Call {
                now: now.to_owned(),
                instances,
                readable,
            })
        })
        .collect())
}

/// The name Rename gives a derived block or call.
pub(crate) fn renamed(name: &str) -> String {
    format!("{name}_renamed")
}

/// `addr` within the call `name` (keyed by `key`) instead of its first
/// module step: where the instance lives once the call is renamed or
/// given a count.
pub(crate) fn within(addr: &ResourceInstanceAddr, name: &str, key: Option<InstanceKey>) -> String {
    let mut a = addr.clone();
    if let Some(first) = a.module.first_mut() {
        first.name = name.to_owned();
        first.key = key;
    }
    a.to_string()
}

/// Whether the module the call `name` loads declares a `tags` variable,
/// as stock's `init` recorded where it put the module
/// (`.terraform/modules/modules.json`) in `root`.
pub(crate) fn takes_tags(root: &Path, name: &str) -> Result<bool, StepError> {
    let index = root.join(".terraform/modules/modules.json");
    let text = fs::read_to_string(&index).map_err(io(&index))?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| StepError::Knob(format!("{}: {e}", index.display())))?;
    let dir = json["Modules"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["Key"] == name)
        .and_then(|m| m["Dir"].as_str());
    let Some(dir) = dir else { return Ok(false) };
    Ok(root_texts(&root.join(dir))?
        .iter()
        .any(|t| t.lines().any(|l| l.trim_end() == "variable \"tags\" {")))
}
