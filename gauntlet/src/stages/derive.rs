//! The moves a root run derives from the root itself, where an estate's
//! manifest names them: which block Rename moves, Remove a block deletes
//! and Change count shrinks. A block qualifies when it sits in the root's
//! own folder, nothing else in the root refers to it (so the move touches
//! exactly its objects; Plan, review, apply's tag may go on a block others
//! refer to), and its objects are read by ARN through the tagging API,
//! which lists them now (so the witness can follow them).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use engine::addr::{InstanceKey, ResourceInstanceAddr};

use crate::oracle::StateInstance;
use crate::witness::Kind;

use super::kit::io;
use super::{ColdOutcome, Lane, StepError};

/// Why Rename or Remove a block is not run when no single block qualifies.
pub(crate) const NO_SINGLE_BLOCK: &str = "no block of the root's own folder has one instance whose object the tagging API lists and that nothing else refers to";

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
                    .any(|t| crate::edit::refers_to(t, &a.type_name, &a.name)))
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
                && texts
                    .iter()
                    .any(|t| crate::edit::set_count(t, &a.type_name, &a.name, 0).is_some());
            counted.then(|| ResourceInstanceAddr {
                key: None,
                ..a.clone()
            })
        }))
}
