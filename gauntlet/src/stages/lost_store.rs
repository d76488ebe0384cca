//! Lost record store: the estate greenfield apply left, with every record
//! deleted from the live system (each record's parameters and the root
//! outputs'), planned and applied from a fresh copy of the root (no local
//! folder, no schema cache, no state file, a separate HOME), as a team
//! would after losing the store and the machine that applied.
//!
//! The promise: records are a convenience, never the only proof that an
//! object exists. The plan creates, destroys and replaces nothing; an
//! in-place update is allowed only for what a deleted record held (an
//! argument the provider cannot read back), each named with its
//! attribute. One apply reconverges, and the next plan is empty.
//!
//! Stock terraform that loses its state file has no plan at all: it would
//! create everything again.

use std::collections::{BTreeMap, BTreeSet};

use crate::choudoufu::{Action, EnginePlan};
use crate::stage::Toggle;
use crate::witness::StoredRecord;

use super::claim::{self, Unclaimed};
use super::kit::{disturb, unstamp, verdict};
use super::{ColdOutcome, Lane, StageOutput, StagePlan, StepError};

pub fn lost_record_store(lane: &Lane, _cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let e = lane.estate_twin();
    let estate = &lane.estate.name;
    let place = engine::record::ssm::place(estate);

    // What each record held that a read cannot give back, before it goes.
    let records = e.witness.records(estate)?;
    let held = held(&records);
    let parameters: Vec<String> = e.witness.record_parameters(estate)?.into_keys().collect();
    clock.say(&format!(
        "Lost record store: deleting all {} parameters of the record store ({place})",
        parameters.len()
    ));
    e.witness.delete_parameters(&parameters)?;
    let left = e.witness.record_parameters(estate)?.len();

    let fresh = lane
        .engine
        .fresh_copy(clock, &lane.engine.beside_path("lost-store"))?;
    let tamper = unstamp(lane, Toggle::LostStorePlan)?;
    clock.say("Lost record store: choudoufu plan in a fresh copy, no record anywhere");
    // An object nothing but a record proves is refused with an import
    // block as the remedy; the import blocks stay for the apply.
    let planned = fresh.plan_or_refusal(clock, &[]).map_err(StepError::from).and_then(|first| {
        if let Err(output) = &first {
            if let Ok(list) = claim::unclaimed(output) {
                clock.say(&format!(
                    "Lost record store: refused as promised, each with an import block as the remedy: {}; planning again with those import blocks",
                    claim::describe(&list)
                ));
            }
        }
        claim::follow_remedies(&fresh.dir, first, || fresh.plan_or_refusal(clock, &[]))
    });
    tamper.restore()?;
    let (planned, claimed, imports) = planned?;

    let mut plans = Vec::new();
    let plan = match planned {
        Err(output) => Err(format!(
            "with every record deleted the plan was refused: {}",
            refusals(&output)
        )),
        Ok(plan) => {
            let counts = Counts {
                records: records.len(),
                parameters: parameters.len(),
                left,
            };
            let shape = judge(&plan, &held, &claimed, counts, &place);
            plans.push(StagePlan::Engine(plan));
            shape
        }
    };

    // One apply reconverges, and the next plan is empty.
    let reconverged = match plan {
        Err(_) => {
            drop(imports);
            recover(lane, &fresh)?;
            Err("not tried: the plan with every record deleted did not hold".to_owned())
        }
        Ok(_) => {
            clock.say("Lost record store: choudoufu apply in the fresh copy");
            let (applied, _) = fresh.apply(clock, false)?;
            let stored = e.witness.records(estate)?.len();
            let tamper = disturb(
                lane,
                Toggle::LostStoreReconverged,
                |k| &k.drift_parameter,
                "lost-store",
                None,
            )?;
            clock.say("Lost record store: choudoufu plan after the apply");
            let next = fresh.plan(clock, &[]);
            tamper.restore()?;
            let next = next?;
            let seen = if next.is_empty() && applied.added == 0 && applied.destroyed == 0 {
                Ok(format!(
                    "the apply in the fresh copy applied {applied} and the store holds {stored} records again; the next plan is empty ({})",
                    next.summary_line()
                ))
            } else {
                Err(format!(
                    "the apply applied {applied}; the next plan: {} ({})",
                    next.summary_line(),
                    next.describe()
                ))
            };
            plans.push(StagePlan::Engine(next));
            seen
        }
    };
    Ok(StageOutput {
        assertions: vec![
            verdict(Toggle::LostStorePlan, plan),
            verdict(Toggle::LostStoreReconverged, reconverged),
        ],
        summary: "every record deleted from the live system; a fresh copy of the root planned and applied with nothing but the live objects".into(),
        plans,
    })
}

/// After a plan that did not hold, the records written again by an
/// apply in the fresh copy, following the import-block remedies as the
/// stage does, so that the stages after this one start where a clean run
/// would (a toggle broke only what this stage reads). Nothing asserted.
fn recover(lane: &Lane, fresh: &crate::choudoufu::EngineRoot) -> Result<(), StepError> {
    let clock = lane.clock;
    clock.say("Lost record store: the records written again for the stages after this one");
    let first = fresh.plan_or_refusal(clock, &[])?;
    let (_, _, imports) =
        claim::follow_remedies(&fresh.dir, first, || fresh.plan_or_refusal(clock, &[]))?;
    fresh.apply(clock, false)?;
    drop(imports);
    Ok(())
}

/// The error lines of a refused plan, on one line.
pub(crate) fn refusals(output: &str) -> String {
    output
        .lines()
        .filter(|l| l.trim_start().starts_with("Error: ") || l.contains(" would bind "))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The top-level attributes an update in the plan text changes: the lines
/// `      ~ name`, `      + name` and `      - name` of its block.
pub(crate) fn updated_attributes(text: &str, address: &str) -> Vec<String> {
    let head = format!("  # {address} will be updated in-place");
    let mut lines = text.lines().skip_while(|l| *l != head).skip(2);
    let mut out = Vec::new();
    for line in lines.by_ref() {
        if line == "    }" {
            break;
        }
        let Some(rest) = line.strip_prefix("      ") else {
            continue;
        };
        let Some(rest) = ["~ ", "+ ", "- "].iter().find_map(|m| rest.strip_prefix(m)) else {
            continue;
        };
        if let Some(name) = rest.split([' ', '=']).next().filter(|n| !n.is_empty()) {
            out.push(name.to_owned());
        }
    }
    out
}

/// What each record holds that a read cannot give back: its arguments
/// the provider never returns, by address.
pub(crate) fn held(records: &[StoredRecord]) -> BTreeMap<String, BTreeSet<String>> {
    records
        .iter()
        .map(|r| {
            (
                r.record.address.clone(),
                r.record.config_only.keys().cloned().collect(),
            )
        })
        .collect()
}

/// A plan made without records, against what the records held (`held`):
/// the changes no lost record explains (any create, destroy or replace; an
/// update of an attribute no record held), and the updates putting back
/// what records held, each with its attributes.
pub(crate) struct Residue {
    pub wrong: Vec<String>,
    pub updates: Vec<String>,
}

pub(crate) fn residue(plan: &EnginePlan, held: &BTreeMap<String, BTreeSet<String>>) -> Residue {
    let mut r = Residue {
        wrong: Vec::new(),
        updates: Vec::new(),
    };
    for (address, action) in &plan.changes {
        if *action != Action::Update {
            r.wrong.push(format!("{address} {}", action.word()));
            continue;
        }
        let changed = updated_attributes(&plan.text, address);
        let kept = held.get(address).cloned().unwrap_or_default();
        let unheld: Vec<&str> = changed
            .iter()
            .filter(|a| !kept.contains(*a))
            .map(String::as_str)
            .collect();
        match (changed.is_empty(), unheld.is_empty()) {
            (true, _) => r.wrong.push(format!(
                "{address} updated in attributes the plan does not name"
            )),
            (false, false) => r.wrong.push(format!(
                "{address} updated in {} which no record held",
                unheld.join(", ")
            )),
            (false, true) => r
                .updates
                .push(format!("{address} ({})", changed.join(", "))),
        }
    }
    r
}

/// The records deleted: how many, their parameters, and how many
/// parameters were still there after the delete.
#[derive(Debug, Clone, Copy)]
struct Counts {
    records: usize,
    parameters: usize,
    left: usize,
}

/// The verdict on the plan with every record deleted: no create, destroy
/// or replace, each update changing only what the instance's deleted
/// record held (`held`, by address), and, where objects nothing but a
/// record proves were refused (`claimed`), the plan with their remedies'
/// import blocks importing exactly them.
fn judge(
    plan: &EnginePlan,
    held: &BTreeMap<String, BTreeSet<String>>,
    claimed: &[Unclaimed],
    counts: Counts,
    place: &str,
) -> Result<String, String> {
    let Counts {
        records,
        parameters,
        left,
    } = counts;
    let Residue { mut wrong, updates } = residue(plan, held);
    if left != 0 {
        wrong.push(format!(
            "{left} record parameters were still there after the delete"
        ));
    }
    wrong.extend(claim::imports_exactly(plan, claimed).err());
    let deleted = format!(
        "all {records} records ({parameters} parameters, the outputs' included, {place}) deleted, and the plan made in a fresh copy of the root with no local folder, no schema cache, no state file and a separate HOME"
    );
    let summary = plan.summary_line();
    // "It refused …; with those import blocks written, its plan", or "Its plan".
    let mut lead = claim::refused_words(claimed) + "its plan";
    lead.replace_range(..1, &lead[..1].to_uppercase());
    if !wrong.is_empty() {
        return Err(format!(
            "{deleted}. {lead}: {summary} ({}), where nothing may be created, destroyed or replaced: {}",
            plan.describe(),
            wrong.join("; ")
        ));
    }
    let imports = match claimed.len() {
        0 => "",
        _ => " imports exactly them,",
    };
    Ok(format!(
        "{deleted}. {lead} ({summary}){imports} creates, destroys and replaces nothing{}",
        put_back(&updates)
    ))
}

/// The words for the updates a plan without records makes.
pub(crate) fn put_back(updates: &[String]) -> String {
    match updates.len() {
        0 => ", and updates nothing: every object is found by its marker, its configuration or its owner".to_owned(),
        n => format!(
            "; its {n} in-place update(s) put back what the records held: {}",
            updates.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UPDATE: &str = "
Terraform will perform the following actions:

  # aws_s3_bucket.logs will be updated in-place
  ~ resource \"aws_s3_bucket\" \"logs\" {
      ~ force_destroy               = false -> true
        id                          = \"logs\"
        tags                        = {}
        # (10 unchanged attributes hidden)
    }

Plan: 0 to add, 1 to change, 0 to destroy.
";

    const COUNTS: Counts = Counts {
        records: 3,
        parameters: 4,
        left: 0,
    };

    fn held(address: &str, attrs: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
        BTreeMap::from([(
            address.to_owned(),
            attrs.iter().map(|a| a.to_string()).collect(),
        )])
    }

    #[test]
    fn an_update_of_what_a_record_held_is_the_only_change_allowed() {
        assert_eq!(
            updated_attributes(UPDATE, "aws_s3_bucket.logs"),
            ["force_destroy"]
        );
        let plan = EnginePlan::parse(2, UPDATE);
        let ok = judge(
            &plan,
            &held("aws_s3_bucket.logs", &["force_destroy"]),
            &[],
            COUNTS,
            "p",
        )
        .unwrap();
        assert!(ok.contains("aws_s3_bucket.logs (force_destroy)"), "{ok}");
        let e = judge(&plan, &held("aws_s3_bucket.logs", &[]), &[], COUNTS, "p").unwrap_err();
        assert!(
            e.contains("updated in force_destroy which no record held"),
            "{e}"
        );
        let create = EnginePlan::parse(
            2,
            "  # aws_eip.nat will be created\n\nPlan: 1 to add, 0 to change, 0 to destroy.\n",
        );
        let e = judge(&create, &BTreeMap::new(), &[], COUNTS, "p").unwrap_err();
        assert!(e.contains("aws_eip.nat create"), "{e}");
        let empty = EnginePlan::parse(
            0,
            "\nNo changes. Your infrastructure matches the configuration.\n",
        );
        assert!(judge(&empty, &BTreeMap::new(), &[], COUNTS, "p").is_ok());
        let left = Counts { left: 1, ..COUNTS };
        assert!(judge(&empty, &BTreeMap::new(), &[], left, "p").is_err());
        // Objects refused for want of a record pass only when the plan
        // with their import blocks imports exactly them.
        let group = [Unclaimed {
            address: "aws_iam_group.ops".into(),
            id: "ops".into(),
        }];
        assert!(judge(&empty, &BTreeMap::new(), &group, COUNTS, "p").is_err());
        let imported = EnginePlan::parse(
            2,
            "  # aws_iam_group.ops will be imported\n\nPlan: 1 to import, 0 to add, 0 to change, 0 to destroy.\n",
        );
        let ok = judge(&imported, &BTreeMap::new(), &group, COUNTS, "p").unwrap();
        assert!(
            ok.contains("refused the 1 object(s)") && ok.contains("imports exactly them"),
            "{ok}"
        );
    }
}
