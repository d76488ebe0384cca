//! A second machine: the estate greenfield apply left, worked from two
//! copies of its root, as a team works one root from a CI runner and a
//! laptop. The second copy is fresh (no local folder, no schema cache, no
//! state file, a separate HOME; its lock file and `choudoufu init`, as a
//! new clone gets them); the only thing the two copies share is the live
//! system, which holds the estate's record store and its lock.
//!
//! First a drift: one object changed out of band, and the second copy
//! applies. It must put back exactly that object, and the first copy's next
//! plan must then be empty. Then the create_before_destroy window: a
//! parameter under `create_before_destroy`, created from the first copy and
//! renamed in both, the first copy's apply killed the instant the new
//! object's create commits. The second copy's apply must finish the
//! replacement, destroying exactly the old object, and the first copy's
//! next plan must be empty. The block goes again afterwards, so the stages
//! after this one see the estate as greenfield left it.
//!
//! Stock terraform has no second machine without a shared backend: its
//! state file stays on the machine that applied.

use std::fs;
use std::path::Path;

use crate::choudoufu::{Applied, EnginePlan, EngineRoot};
use crate::stage::Toggle;
use crate::witness::Handle;

use super::kit::{
    disturb, io, marked_objects, not_interrupted, resurrect, tampered, verdict, ADDRESS_KEY,
    DRIFT_TAG,
};
use super::{ColdOutcome, Lane, StageOutput, StagePlan, StepError};

/// The test hook that makes the engine SIGTERM itself after a commit.
const HOOK: &str = "CHOUDOUFU_TEST_SIGTERM_AFTER";
const WINDOW: &str = "aws_ssm_parameter.second_machine";
const WINDOW_FILE: &str = "second-machine.tf";

/// The create_before_destroy block, naming its parameter `name`.
fn window_block(name: &str) -> String {
    format!(
        r#"# Renamed under create_before_destroy from one copy, finished from the other.
resource "aws_ssm_parameter" "second_machine" {{
  name  = "{name}"
  type  = "String"
  value = "second-machine"
  lifecycle {{
    create_before_destroy = true
  }}
}}
"#
    )
}

/// The out-of-band change the second copy puts back: the manifest's drift
/// parameter's value, or where it names none a tag no configuration names
/// on the first object by ARN carrying the estate's markers.
enum Drift {
    Value {
        name: String,
        configured: String,
        address: String,
    },
    Tag {
        object: Handle,
        address: String,
    },
}

impl Drift {
    fn make(lane: &Lane) -> Result<Drift, StepError> {
        let w = &lane.estate_twin().witness;
        let drift = match &lane.estate.knobs.drift_parameter {
            Some(name) => {
                let configured = w.parameter_value(name)?.ok_or_else(|| {
                    StepError::Knob(format!("the drift parameter {name} is not there"))
                })?;
                let address = w
                    .parameter_tags(name)?
                    .into_iter()
                    .find(|(k, _)| k == ADDRESS_KEY)
                    .map(|(_, v)| v)
                    .ok_or_else(|| {
                        StepError::Knob(format!(
                            "the drift parameter {name} carries no {ADDRESS_KEY}"
                        ))
                    })?;
                w.overwrite_parameter(name, &tampered("second-machine"))?;
                Drift::Value {
                    name: name.clone(),
                    configured,
                    address,
                }
            }
            None => {
                let (address, arn) = marked_objects(lane)?.into_iter().next().ok_or_else(|| {
                    StepError::NotDerived(
                        "no object by ARN carries this estate's markers, so none can be changed out of band".into(),
                    )
                })?;
                let object = Handle::Object(arn);
                object.set_tag(w, DRIFT_TAG, Some(&tampered("second-machine")))?;
                Drift::Tag { object, address }
            }
        };
        Ok(drift)
    }

    fn address(&self) -> &str {
        match self {
            Drift::Value { address, .. } | Drift::Tag { address, .. } => address,
        }
    }

    /// The ARN a toggle must leave alone, when the drift is a tag.
    fn arn(&self) -> Option<&str> {
        match self {
            Drift::Tag {
                object: Handle::Object(arn),
                ..
            } => Some(arn),
            _ => None,
        }
    }

    fn what(&self) -> String {
        match self {
            Drift::Value { name, .. } => format!("{name}'s value changed with the AWS CLI"),
            Drift::Tag { object, .. } => format!("{DRIFT_TAG} set on {object} with the AWS CLI"),
        }
    }

    /// Whether the AWS CLI reads the object as configured again, in words
    /// for the page when it does not.
    fn put_back(&self, lane: &Lane) -> Result<Result<String, String>, StepError> {
        let w = &lane.estate_twin().witness;
        Ok(match self {
            Drift::Value {
                name, configured, ..
            } => match w.parameter_value(name)? {
                Some(v) if v == *configured => {
                    Ok(format!("the AWS CLI reads {name} = {configured:?} back"))
                }
                v => Err(format!(
                    "the AWS CLI reads {name} = {:?} where {configured:?} is configured",
                    v.unwrap_or_default()
                )),
            },
            Drift::Tag { object, .. } => match object.tags(w)? {
                Some(tags) if !tags.contains_key(DRIFT_TAG) => {
                    Ok(format!("the AWS CLI reads no {DRIFT_TAG} tag on {object}"))
                }
                Some(tags) => Err(format!(
                    "the AWS CLI still reads {DRIFT_TAG}={} on {object}",
                    tags[DRIFT_TAG]
                )),
                None => Err(format!("the AWS CLI no longer finds {object}")),
            },
        })
    }
}

pub fn a_second_machine(lane: &Lane, _cold: &ColdOutcome) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let first = &lane.engine;
    let second = first.fresh_copy(clock, &first.beside_path("second-machine"))?;

    clock.say("A second machine: one object changed out of band, the second copy applies");
    let drift = Drift::make(lane)?;
    let (fixed, out) = second.apply(clock, false)?;
    let proposed = EnginePlan::parse(2, &out.stdout);
    let put_back = drift.put_back(lane)?;
    let tamper = disturb(
        lane,
        Toggle::SecondDrift,
        |k| &k.second_drift_parameter,
        "second-machine",
        drift.arn(),
    )?;
    let after = first.plan(clock, &[])?;
    tamper.restore()?;
    let one = Applied {
        changed: 1,
        ..Applied::default()
    };
    let want = [(drift.address().to_owned(), crate::choudoufu::Action::Update)];
    let mut p = Vec::new();
    if proposed.changes != want || fixed != one {
        p.push(format!(
            "the second copy's apply proposed {} ({}) and applied {fixed}, where exactly {} (update) and {one} were expected",
            proposed.summary_line(),
            proposed.describe(),
            drift.address()
        ));
    }
    if let Err(e) = &put_back {
        p.push(e.clone());
    }
    if !after.is_empty() {
        p.push(format!(
            "the first copy's next plan: {} ({}), where \"No changes.\" was required",
            after.summary_line(),
            after.describe()
        ));
    }
    let drifted = if p.is_empty() {
        Ok(format!(
            "{}; in a fresh copy of the root (no local folder, no schema cache, no state file, a separate HOME) choudoufu apply proposed exactly {} (update) ({}) and applied {fixed}; {}; the first copy's next plan is empty ({})",
            drift.what(),
            drift.address(),
            proposed.summary_line(),
            put_back.unwrap_or_default(),
            after.summary_line()
        ))
    } else {
        Err(p.join("; "))
    };

    let window = window(lane, &second)?;
    Ok(StageOutput {
        assertions: vec![
            verdict(Toggle::SecondDrift, drifted),
            verdict(Toggle::SecondWindow, window),
        ],
        summary: "the estate twin worked from its working copy and a fresh copy of the root, only the live system between them".into(),
        plans: vec![StagePlan::Engine(proposed), StagePlan::Engine(after)],
    })
}

/// The create_before_destroy window, half done from the first copy and
/// finished from the second.
fn window(lane: &Lane, second: &EngineRoot) -> Result<Result<String, String>, StepError> {
    let clock = lane.clock;
    let estate = lane.estate;
    let first = &lane.engine;
    let w = &lane.estate_twin().witness;
    let prefix = &estate.scratch_names().crash_parameters;
    let (old, new) = (format!("{prefix}/machine-a"), format!("{prefix}/machine-b"));
    let write = |name: &str| -> Result<(), StepError> {
        for dir in [&first.dir, &second.dir] {
            let path = dir.join(WINDOW_FILE);
            fs::write(&path, window_block(name)).map_err(io(&path))?;
        }
        Ok(())
    };
    let remove = |dir: &Path| -> Result<(), StepError> {
        let path = dir.join(WINDOW_FILE);
        fs::remove_file(&path).map_err(io(&path))
    };

    clock.say(&format!(
        "A second machine: {WINDOW} ({old}) under create_before_destroy, renamed to {new} in both copies, the first copy's apply killed between its create and its destroy"
    ));
    write(&old)?;
    let (created, _) = first.apply(clock, false)?;
    write(&new)?;
    let killed = first.run_env(
        clock,
        &["apply", "-auto-approve", "-no-color", "-parallelism=1"],
        &[(HOOK, WINDOW)],
    )?;
    let mut p = Vec::new();
    if created.added != 1 {
        p.push(format!(
            "adding {WINDOW} from the first copy applied {created}"
        ));
    }
    p.extend(not_interrupted(
        &killed,
        &format!("the first copy's replacing apply under {HOOK}={WINDOW}"),
    ));
    let both_there = w.parameter_value(&old)?.is_some() && w.parameter_value(&new)?.is_some();
    if !both_there {
        p.push(format!(
            "after the kill the AWS CLI does not find both {old} and {new}"
        ));
    }

    clock.say("A second machine: the second copy applies what the first left half done");
    let (finished, out) = second.apply(clock, false)?;
    let tamper = resurrect(lane, Toggle::SecondWindow, &old, "second-machine", WINDOW)?;
    let old_there = w.parameter_value(&old)?.is_some();
    let new_there = w.parameter_value(&new)?.is_some();
    let after = first.plan(clock, &[])?;
    tamper.restore()?;
    let destroy_one = Applied {
        destroyed: 1,
        ..Applied::default()
    };
    let leg = out
        .stdout
        .lines()
        .find(|l| l.contains(&format!("# {WINDOW} (deposed object ")))
        .map(str::trim)
        .map(str::to_owned);
    if finished != destroy_one || leg.is_none() {
        p.push(format!(
            "the second copy's apply: {finished}{}, where {destroy_one} of the deposed object was expected",
            match &leg {
                Some(_) => String::new(),
                None => " with no deposed-object line".into(),
            }
        ));
    }
    if old_there || !new_there || !after.is_empty() {
        p.push(format!(
            "after it the AWS CLI finds {old}: {old_there} and {new}: {new_there}; the first copy's next plan: {} ({})",
            after.summary_line(),
            after.describe()
        ));
    }

    // The block out again, from the second copy; the first must agree.
    remove(&first.dir)?;
    remove(&second.dir)?;
    let (cleaned, _) = second.apply(clock, false)?;
    let settled = first.plan(clock, &[])?;
    if cleaned != destroy_one || !settled.is_empty() {
        p.push(format!(
            "with {WINDOW} removed from both copies the second applied {cleaned} and the first then planned {} ({})",
            settled.summary_line(),
            settled.describe()
        ));
    }
    Ok(if p.is_empty() {
        Ok(format!(
            "{WINDOW} under create_before_destroy, created from the first copy ({created}) and renamed {old} -> {new} in both copies; the first copy's apply was killed by the engine's own hook ({HOOK}={WINDOW}) the instant the new object's create committed, at -parallelism=1, leaving both parameters; the second copy's apply read what the first left in the live store ('{}') and applied {finished}, after which the AWS CLI finds exactly {new} and the first copy's next plan is empty ({}); with the block removed from both copies, the second copy's apply: {cleaned}, and the first copy's plan: {}",
            leg.unwrap_or_default(),
            after.summary_line(),
            settled.summary_line()
        ))
    } else {
        Err(p.join("; "))
    })
}
