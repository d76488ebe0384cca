//! The stages this gauntlet runs, each a sequence of real actions on the
//! twins followed by assertions read back through the witness.
//!
//! A stage returns its assertions; it never decides its own verdict. BREAK
//! toggles act here, on the live system or the state, between the action and
//! the read, so that a passing stage under a toggle means the assertion is
//! not load-bearing. The moves stages share (side by side, verdicts, a
//! toggle's tamper and its restore) are in [`kit`].

use std::collections::BTreeSet;
use std::thread;

use crate::choudoufu::{EngineError, EnginePlan, EngineRoot};
use crate::clock::Clock;
use crate::estate::{Estate, Knobs, Undeclared};
use crate::oracle::{Oracle, OracleError, Plan, StateInstance};
use crate::process::ProcessError;
use crate::stage::{Assertion, Breaks, Toggle};
use crate::substrate::Side;
use crate::witness::{Handle, Inventory, Kind, Witness, WitnessError};

use kit::both_ok;

mod calls;
mod claim;
pub mod crash;
pub mod day_two;
mod derive;
mod kit;
pub mod lock;
pub mod lost_store;
pub mod neighbour;
pub mod no_local_state;
pub mod rename;
pub mod replace;
pub mod review;
pub mod second_machine;
pub mod strict;

/// A step of a stage that could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    #[error(transparent)]
    Oracle(#[from] OracleError),
    #[error(transparent)]
    Witness(#[from] WitnessError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("{path}: {source}")]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Knob(String),
    /// A root run's stage found nothing in the root to derive its moves
    /// from: the stage is not run, and the stages after it are.
    #[error("{0}")]
    NotDerived(String),
}

impl StepError {
    pub fn interrupted(&self) -> bool {
        matches!(
            self,
            StepError::Oracle(OracleError::Process(ProcessError::Interrupted { .. }))
                | StepError::Witness(WitnessError::Process(ProcessError::Interrupted { .. }))
                | StepError::Engine(EngineError::Process(ProcessError::Interrupted { .. }))
        )
    }
}

/// One twin as the stages see it: terraform in its working copy, the
/// witness, and what the witness saw before cold deploy.
pub struct TwinView {
    pub side: Side,
    pub oracle: Oracle,
    pub witness: Witness,
    pub baseline: Inventory,
    /// The twin's moto log, where each request served is a line.
    pub moto_log: std::path::PathBuf,
}

/// Everything a stage works with.
pub struct Lane<'a> {
    pub clock: &'a Clock,
    pub estate: &'a Estate,
    pub breaks: &'a Breaks,
    pub kinds: BTreeSet<Kind>,
    pub twins: [TwinView; 2],
    /// The engine in the estate twin's working copy.
    pub engine: EngineRoot,
}

impl Lane<'_> {
    pub(crate) fn estate_twin(&self) -> &TwinView {
        &self.twins[0]
    }

    pub(crate) fn oracle_twin(&self) -> &TwinView {
        &self.twins[1]
    }

    /// The knob a BREAK toggle tampers with, read only when the toggle is
    /// on; empty when it is off, where only that toggle's tamper, which
    /// then does nothing, uses it. A toggle whose knob the manifest leaves
    /// out is refused before the run (`Estate::unaimed`).
    pub(crate) fn knob<'s>(
        &'s self,
        toggle: Toggle,
        f: impl FnOnce(&'s Knobs) -> &'s Option<String>,
    ) -> Result<&'s str, StepError> {
        if !self.breaks.on(toggle) {
            return Ok("");
        }
        f(&self.estate.knobs).as_deref().ok_or_else(|| {
            StepError::Knob(format!(
                "{} is on, but the manifest names nothing for it to tamper with",
                toggle.env()
            ))
        })
    }
}

/// The kinds of live object a lane reads: those the root declares and those
/// of the pre-existing objects.
pub fn kinds(estate: &Estate) -> BTreeSet<Kind> {
    let mut k: BTreeSet<Kind> = estate
        .resource_types
        .iter()
        .map(|t| Kind::for_type(t))
        .collect();
    if !estate.preexisting.buckets.is_empty() {
        k.insert(Kind::Bucket);
    }
    if !estate.preexisting.queues.is_empty() {
        k.insert(Kind::Queue);
    }
    if !estate.preexisting.roles.is_empty() {
        k.insert(Kind::Role);
    }
    k
}

/// Create the pre-existing objects on a twin and read its baseline.
pub fn seed_preexisting(
    estate: &Estate,
    witness: &Witness,
    kinds: &BTreeSet<Kind>,
) -> Result<Inventory, WitnessError> {
    let p = &estate.preexisting;
    let created: Vec<Result<(), WitnessError>> = thread::scope(|s| {
        let hs: Vec<_> = p
            .buckets
            .iter()
            .map(|b| s.spawn(move || witness.create_bucket(b)))
            .chain(
                p.queues
                    .iter()
                    .map(|q| s.spawn(move || witness.create_queue(q))),
            )
            .chain(
                p.roles
                    .iter()
                    .map(|r| s.spawn(move || witness.create_role(r))),
            )
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    created.into_iter().collect::<Result<(), _>>()?;
    witness.inventory(kinds)
}

/// A plan a stage showed on the way: stock's on a twin, or the engine's on
/// the estate twin.
pub enum StagePlan {
    Stock(Side, Plan),
    Engine(EnginePlan),
}

/// What a stage returns: its assertions, a one-line summary for the page,
/// and the plans it showed on the way.
pub struct StageOutput {
    pub assertions: Vec<Assertion>,
    pub summary: String,
    pub plans: Vec<StagePlan>,
}

/// What cold deploy leaves for the stages after it.
pub struct ColdOutcome {
    /// The estate twin's state, which migrate takes.
    pub estate_state: Vec<StateInstance>,
    /// Every live object on the oracle twin, described field by field and
    /// normalised: what greenfield apply must reproduce (empty when the run
    /// stops before it).
    pub oracle_described: std::collections::BTreeMap<String, serde_json::Value>,
    /// The described paths the two twins' stock deploys hold differently
    /// (an elastic IP's address, and what copies it): no apply reproduces
    /// them, so greenfield apply does not compare them.
    pub unstable: BTreeSet<String>,
}

/// The state's first object by ARN that carries tags (so the tagging API
/// lists it), in address order: what a toggle takes where no manifest
/// names an object.
pub(crate) fn first_tagged(state: &[StateInstance]) -> Option<&StateInstance> {
    state
        .iter()
        .filter(|i| {
            let k = Kind::for_type(&i.type_name);
            k == Kind::Tagged && k.names(i) && !crate::witness::untagged_by_arn(i)
        })
        .min_by_key(|i| i.addr.to_string())
}

pub(crate) fn addresses(state: &[StateInstance]) -> BTreeSet<String> {
    state.iter().map(|i| i.addr.to_string()).collect()
}

pub(crate) fn list(set: &BTreeSet<String>) -> String {
    set.iter().cloned().collect::<Vec<_>>().join(", ")
}

/// Cold deploy: stock terraform plans and applies the root on both twins.
/// `describe_oracle`: whether greenfield apply will run, and so needs the
/// oracle twin described as cold deploy leaves it.
pub fn cold_deploy(
    lane: &Lane,
    describe_oracle: bool,
) -> Result<(StageOutput, ColdOutcome), StepError> {
    let clock = lane.clock;
    let estate = lane.estate;
    let breaks = lane.breaks;

    let plans: [Plan; 2] = both_ok(lane.both(|t| {
        clock.say(&format!(
            "Cold deploy: terraform plan and apply on the {}",
            t.side
        ));
        let plan = t.oracle.plan(clock, "cold.tfplan", &[])?;
        t.oracle.apply(clock, "cold.tfplan")?;
        Ok(plan)
    }))?;

    // The running system writes what no block declares.
    both_ok(lane.both(|t| {
        for u in &estate.undeclared {
            match u {
                Undeclared::S3Object { bucket, key, body } => {
                    t.witness.put_object(bucket, key, body)?
                }
                Undeclared::SqsMessage { queue, body } => t.witness.send_message(queue, body)?,
                Undeclared::SecurityGroupRule {
                    group,
                    cidr,
                    port,
                    description,
                } => t
                    .witness
                    .add_ingress_rule(group, cidr, *port, description)?,
            }
        }
        Ok(())
    }))?;

    let e = lane.estate_twin();
    // Where the manifest names no target, the toggles take the state's
    // first object by ARN carrying tags that the tagging API lists, chosen
    // once, before either changes anything.
    let derived = (breaks.on(Toggle::ColdState) && estate.knobs.state_rm_address.is_none())
        || (breaks.on(Toggle::ColdMarkers) && estate.knobs.stamped_queue.is_none());
    let first = match derived {
        false => None,
        true => {
            let live = e.witness.inventory(&lane.kinds)?;
            let listed: Vec<StateInstance> = e
                .oracle
                .state()?
                .into_iter()
                .filter(|i| {
                    i.values["arn"]
                        .as_str()
                        .is_some_and(|a| live.contains(Kind::Tagged, a))
                })
                .collect();
            first_tagged(&listed).cloned()
        }
    };
    let first = || {
        first.clone().ok_or_else(|| {
            StepError::Knob("the state holds no object by ARN the tagging API lists".into())
        })
    };
    if breaks.on(Toggle::ColdState) {
        let addr = match &estate.knobs.state_rm_address {
            Some(a) => a.to_string(),
            None => first()?.addr.to_string(),
        };
        e.oracle.run(clock, &["state", "rm", "-no-color", &addr])?;
    }
    if breaks.on(Toggle::ColdInventory) {
        e.witness
            .delete_parameter(lane.knob(Toggle::ColdInventory, |k| &k.missing_parameter)?)?;
    }
    if breaks.on(Toggle::ColdMarkers) {
        let h = match &estate.knobs.stamped_queue {
            Some(q) => Handle::Queue(q.clone()),
            None => Handle::Object(first()?.values["arn"].as_str().unwrap_or_default().into()),
        };
        h.set_tag(&e.witness, kit::ESTATE_KEY, Some(&estate.name))?;
    }
    if breaks.on(Toggle::ColdUndeclared) {
        if let Some(u) = estate.undeclared.iter().find(|u| u.can_be_taken_away()) {
            take_undeclared(&e.witness, u)?;
        }
    }

    clock.say("Cold deploy: reading both twins back with the AWS CLI");
    let reads = both_ok(lane.both(|t| {
        let state = t.oracle.state()?;
        let live = t.witness.inventory(&lane.kinds)?;
        let markers = t.witness.markers(&live)?;
        let missing = missing_undeclared(&t.witness, &estate.undeclared)?;
        Ok((
            state,
            live,
            markers,
            missing,
            t.oracle.state_file().is_file(),
        ))
    }))?;

    let mut out = Vec::new();

    // A real terraform.tfstate on each, holding exactly what the plan created.
    let created: [BTreeSet<String>; 2] = plans.each_ref().map(|p| {
        p.changes()
            .into_iter()
            .filter(|(_, a)| a.iter().any(|x| x == "create"))
            .map(|(addr, _)| addr)
            .collect()
    });
    let mut problems = Vec::new();
    for (i, t) in lane.twins.iter().enumerate() {
        let (state, _, _, _, file) = &reads[i];
        let held = addresses(state);
        if !file {
            problems.push(format!("the {} has no terraform.tfstate", t.side));
        }
        let lost: BTreeSet<String> = created[i].difference(&held).cloned().collect();
        let extra: BTreeSet<String> = held.difference(&created[i]).cloned().collect();
        if !lost.is_empty() || !extra.is_empty() {
            problems.push(format!(
                "the {}'s state holds {} instances where stock's plan created {} (missing: {}; unplanned: {})",
                t.side,
                held.len(),
                created[i].len(),
                if lost.is_empty() { "none".into() } else { list(&lost) },
                if extra.is_empty() { "none".into() } else { list(&extra) },
            ));
        }
    }
    let state_len = reads[1].0.len();
    if problems.is_empty() && addresses(&reads[0].0) != addresses(&reads[1].0) {
        problems.push("the two twins' states hold different addresses".into());
    }
    out.push(Assertion::new(
        Toggle::ColdState,
        problems.is_empty(),
        if problems.is_empty() {
            format!(
                "a real terraform.tfstate on each twin with {state_len} instances, exactly the {} stock's plan created ({})",
                created[1].len(),
                plans[1].summary_line()
            )
        } else {
            problems.join("; ")
        },
    ));

    // The witness counts exactly the state's objects on each twin.
    // Objects by ARN carrying no tag yet are not listed; nor are the
    // classes the emulator's tagging API leaves out.
    let mut problems = Vec::new();
    let mut declared_live = Vec::new();
    let mut unlisted = BTreeSet::new();
    for (i, t) in lane.twins.iter().enumerate() {
        let (state, live, _, _, _) = &reads[i];
        let declared = Inventory::of_state(state)?;
        let new = live.minus(&t.baseline);
        let (listed, not_listed) = Inventory::of_state_tagged(state)?.listed_in(&new);
        unlisted.extend(not_listed);
        let absent = listed.minus(&new);
        let unexpected = new.minus(&declared);
        if !absent.is_empty() {
            problems.push(format!(
                "on the {} the state's {} are not live",
                t.side,
                absent.names()
            ));
        }
        if !unexpected.is_empty() {
            problems.push(format!(
                "on the {} {} are live and in no state",
                t.side,
                unexpected.names()
            ));
        }
        declared_live.push(new);
    }
    // Generated identities (a subscription's ARN) differ between twins, so
    // the twins agree when their counts by type agree.
    if problems.is_empty() && declared_live[0].counts() != declared_live[1].counts() {
        problems.push(format!(
            "the twins differ: estate twin {}; oracle twin {}",
            declared_live[0].counts(),
            declared_live[1].counts()
        ));
    }
    out.push(Assertion::new(
        Toggle::ColdInventory,
        problems.is_empty(),
        if problems.is_empty() {
            format!(
                "the AWS CLI counts the same {} objects over {} types on both twins ({}), exactly the state's, beside the {} that existed before{}",
                declared_live[1].len(),
                declared_live[1].kinds(),
                declared_live[1].counts(),
                lane.oracle_twin().baseline.len(),
                unread(&reads[1].0, &unlisted, true)
            )
        } else {
            problems.join("; ")
        },
    ));

    // No estate markers anywhere.
    let hits: Vec<String> = lane
        .twins
        .iter()
        .zip(&reads)
        .flat_map(|(t, r)| {
            r.2.iter()
                .map(move |h| format!("{}={} on {} ({})", h.key, h.value, h.object, t.side))
        })
        .collect();
    out.push(Assertion::new(
        Toggle::ColdMarkers,
        hits.is_empty(),
        if hits.is_empty() {
            "zero tofu-estate or tofu-address tags on either twin (the tagging API over every service it lists; IAM tags read role by role and policy by policy)".to_owned()
        } else {
            format!("marker tags found: {}", hits.join(", "))
        },
    ));

    // The undeclared objects are there.
    let missing: Vec<String> = lane
        .twins
        .iter()
        .zip(&reads)
        .flat_map(|(t, r)| {
            r.3.iter()
                .map(move |m| format!("{m} is missing on the {}", t.side))
        })
        .collect();
    out.push(Assertion::new(
        Toggle::ColdUndeclared,
        missing.is_empty(),
        if estate.undeclared.is_empty() {
            "nothing to read back: the estate names no object the running system writes".to_owned()
        } else if missing.is_empty() {
            format!(
                "the running system wrote {} that no block declares, each read back on both twins",
                undeclared_summary(&estate.undeclared)
            )
        } else {
            missing.join("; ")
        },
    ));

    let summary = format!(
        "{} instances over {} types from plain terraform on both twins, one moto server each",
        state_len,
        estate.resource_types.len()
    );
    let [(estate_state, estate_live, ..), (_, oracle_live, ..)] = reads;
    let (oracle_described, unstable) = if describe_oracle {
        clock.say("Cold deploy: describing both twins' objects for greenfield apply");
        let described = |twin: &TwinView, live: &Inventory| {
            twin.witness.describe(live).map(|d| {
                d.into_iter()
                    .map(|(k, v)| (k, crate::witness::normalised(&v)))
                    .collect::<std::collections::BTreeMap<_, _>>()
            })
        };
        let (estate_described, oracle_described) = kit::side_by_side(
            || described(lane.estate_twin(), &estate_live),
            || described(lane.oracle_twin(), &oracle_live),
        );
        let (estate_described, oracle_described) = (estate_described?, oracle_described?);
        let unstable = crate::witness::differing_paths(&estate_described, &oracle_described);
        (oracle_described, unstable)
    } else {
        Default::default()
    };
    let [_, oracle_plan] = plans;
    Ok((
        StageOutput {
            assertions: out,
            summary,
            plans: vec![StagePlan::Stock(Side::Oracle, oracle_plan)],
        },
        ColdOutcome {
            estate_state,
            oracle_described,
            unstable,
        },
    ))
}

/// What of a state the witness could not read, for the page: `` when it
/// read everything, else `; not read: ...` naming the types with no way to
/// name an object (no ARN), the untagged objects by ARN (the tagging API
/// lists an object once it carries a tag, so only `before_markers`) and
/// the classes the tagging API does not list.
pub(crate) fn unread(
    state: &[StateInstance],
    unlisted: &BTreeSet<String>,
    before_markers: bool,
) -> String {
    let mut nameless = BTreeSet::new();
    let mut untagged = 0;
    for i in state {
        let k = Kind::for_type(&i.type_name);
        if !k.names(i) {
            nameless.insert(i.type_name.as_str());
        } else if before_markers && crate::witness::untagged_by_arn(i) {
            untagged += 1;
        }
    }
    let mut parts = Vec::new();
    if !nameless.is_empty() {
        parts.push(format!(
            "{} (no ARN and no read of their own)",
            nameless.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    if untagged > 0 {
        parts.push(format!("{untagged} objects with no tag yet"));
    }
    if !unlisted.is_empty() {
        parts.push(format!(
            "{} (not listed by the tagging API)",
            list(unlisted)
        ));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("; not read: {}", parts.join("; "))
    }
}

/// `2 objects in refaws-data and 2 messages in refaws-jobs`.
pub(crate) fn undeclared_summary(u: &[Undeclared]) -> String {
    let mut parts: Vec<(String, usize)> = Vec::new();
    for x in u {
        let what = match x {
            Undeclared::S3Object { bucket, .. } => format!("object(s) in bucket {bucket}"),
            Undeclared::SqsMessage { queue, .. } => format!("message(s) in queue {queue}"),
            Undeclared::SecurityGroupRule { group, .. } => {
                format!("ingress rule(s) on security group {group}")
            }
        };
        match parts.iter_mut().find(|(w, _)| *w == what) {
            Some((_, n)) => *n += 1,
            None => parts.push((what, 1)),
        }
    }
    parts
        .into_iter()
        .map(|(w, n)| format!("{n} {w}"))
        .collect::<Vec<_>>()
        .join(" and ")
}

/// An undeclared object deleted out of band, keeping what puts it back: an
/// S3 object's delete marker in a versioned bucket.
pub(crate) fn take_undeclared(w: &Witness, u: &Undeclared) -> Result<Option<String>, StepError> {
    Ok(match u {
        Undeclared::S3Object { bucket, key, .. } => w.delete_object(bucket, key)?,
        Undeclared::SecurityGroupRule {
            group, cidr, port, ..
        } => {
            w.remove_ingress_rule(group, cidr, *port)?;
            None
        }
        Undeclared::SqsMessage { .. } => None,
    })
}

/// Put back what [`take_undeclared`] took. In a versioned bucket that means
/// removing the delete marker: a bucket left holding one makes the aws
/// provider's force_destroy loop forever against moto, for stock terraform
/// as for the engine.
pub(crate) fn put_back_undeclared(
    w: &Witness,
    u: &Undeclared,
    delete_marker: Option<String>,
) -> Result<(), StepError> {
    match (u, &delete_marker) {
        (Undeclared::S3Object { bucket, key, .. }, Some(marker)) => {
            w.delete_version(bucket, key, marker)?
        }
        (Undeclared::S3Object { bucket, key, body }, None) => w.put_object(bucket, key, body)?,
        (
            Undeclared::SecurityGroupRule {
                group,
                cidr,
                port,
                description,
            },
            _,
        ) => w.add_ingress_rule(group, cidr, *port, description)?,
        (Undeclared::SqsMessage { .. }, _) => {}
    }
    Ok(())
}

/// The undeclared objects the witness cannot find on a twin.
pub(crate) fn missing_undeclared(
    w: &Witness,
    undeclared: &[Undeclared],
) -> Result<Vec<String>, WitnessError> {
    let mut missing = Vec::new();
    let mut expected_messages: Vec<(&str, u64)> = Vec::new();
    for u in undeclared {
        match u {
            Undeclared::S3Object { bucket, key, .. } => {
                let keys = w.object_keys(bucket)?.unwrap_or_default();
                if !keys.contains(key) {
                    missing.push(u.to_string());
                }
            }
            Undeclared::SecurityGroupRule {
                group, cidr, port, ..
            } => {
                if w.ingress_rule(group, cidr, *port)?.is_none() {
                    missing.push(u.to_string());
                }
            }
            Undeclared::SqsMessage { queue, .. } => {
                match expected_messages.iter_mut().find(|(q, _)| q == queue) {
                    Some((_, n)) => *n += 1,
                    None => expected_messages.push((queue, 1)),
                }
            }
        }
    }
    for (queue, n) in expected_messages {
        let have = w.message_count(queue)?.unwrap_or(0);
        if have < n {
            missing.push(format!("{} of {n} messages in queue {queue}", n - have));
        }
    }
    Ok(missing)
}

/// Teardown by stock terraform on the oracle twin and, when `engine`, by
/// choudoufu on the estate twin, side by side.
pub fn teardown(lane: &Lane, engine: bool) -> Result<StageOutput, StepError> {
    let clock = lane.clock;
    let estate = lane.estate;
    let breaks = lane.breaks;
    let o = lane.oracle_twin();
    // What the oracle twin's state holds now, after the stages before this
    // one changed it, and what is live.
    let state_before = o.oracle.state()?;
    let live_before = o.witness.inventory(&lane.kinds)?;

    if breaks.on(Toggle::TeardownUndeclared) {
        let keep = estate.preexisting.buckets.first().ok_or_else(|| {
            StepError::Knob(
                "BREAK_TEARDOWN_UNDECLARED needs a pre-existing bucket to copy into".into(),
            )
        })?;
        if let Some(Undeclared::S3Object { key, body, .. }) = estate
            .undeclared
            .iter()
            .find(|u| matches!(u, Undeclared::S3Object { .. }))
        {
            o.witness.put_object(keep, key, body)?;
        }
    }

    let (stock, engine_applied) = thread::scope(|s| {
        let h = engine.then(|| s.spawn(|| day_two::engine_destroy(lane)));
        clock.say("Teardown: terraform plan -destroy and apply on the oracle twin");
        let stock = o
            .oracle
            .plan(clock, "teardown.tfplan", &["-destroy"])
            .and_then(|plan| o.oracle.apply(clock, "teardown.tfplan").map(|_| plan));
        let e = h.map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        (stock, e)
    });
    let plan = stock?;
    let engine_applied = engine_applied.transpose()?;

    if breaks.on(Toggle::TeardownRemoved) {
        o.witness.put_parameter(
            lane.knob(Toggle::TeardownRemoved, |k| &k.resurrected_parameter)?,
            "resurrected",
        )?;
    }
    if breaks.on(Toggle::TeardownSurvivors) {
        o.witness
            .delete_queue(lane.knob(Toggle::TeardownSurvivors, |k| &k.lost_preexisting_queue)?)?;
    }

    clock.say("Teardown: reading the oracle twin back with the AWS CLI");
    let after = o.witness.inventory(&lane.kinds)?;
    let state_after = o.oracle.state()?;
    let (declared, unlisted) = Inventory::of_state(&state_before)?.listed_in(&live_before);
    let mut out = Vec::new();

    // Exactly the state's instances removed.
    let removed = live_before.minus(&after);
    let left = after.intersect(&declared);
    let over = removed.minus(&declared);
    let destroys = plan.summary().2;
    let mut problems = Vec::new();
    if !left.is_empty() {
        problems.push(format!("still live after the destroy: {}", left.names()));
    }
    if !over.is_empty() {
        problems.push(format!(
            "removed though no state held them: {}",
            over.names()
        ));
    }
    if !state_after.is_empty() {
        problems.push(format!(
            "the state still holds {} instances",
            state_after.len()
        ));
    }
    if destroys != state_before.len() {
        problems.push(format!(
            "stock's plan destroys {destroys} where the state held {}",
            state_before.len()
        ));
    }
    out.push(Assertion::new(
        Toggle::TeardownRemoved,
        problems.is_empty(),
        if problems.is_empty() {
            format!(
                "terraform destroy on the oracle twin removed exactly the {} instances its state held ({}), the {} objects of them the AWS CLI reads over {} types gone, and left an empty state{}",
                state_before.len(),
                plan.summary_line(),
                declared.len(),
                declared.kinds(),
                unread(&state_before, &unlisted, false)
            )
        } else {
            problems.join("; ")
        },
    ));

    // Everything that existed before cold deploy is still there, and nothing else.
    let lost = o.baseline.minus(&after);
    let extra = after.minus(&o.baseline);
    let mut problems = Vec::new();
    if !lost.is_empty() {
        problems.push(format!(
            "gone though it existed before cold deploy: {}",
            lost.names()
        ));
    }
    if !extra.is_empty() {
        problems.push(format!(
            "live after teardown and not before cold deploy: {}",
            extra.names()
        ));
    }
    out.push(Assertion::new(
        Toggle::TeardownSurvivors,
        problems.is_empty(),
        if problems.is_empty() {
            format!(
                "the {} objects that existed before cold deploy ({}) are still there, and nothing else is",
                o.baseline.len(),
                o.baseline.names()
            )
        } else {
            problems.join("; ")
        },
    ));

    // The undeclared objects went with their parents, as stock handles them.
    let mut problems = Vec::new();
    let buckets: Vec<String> = after
        .0
        .get(&Kind::Bucket)
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    for u in &estate.undeclared {
        match u {
            Undeclared::S3Object { bucket, key, .. } => {
                for b in &buckets {
                    if o.witness.object_keys(b)?.unwrap_or_default().contains(key) {
                        problems.push(format!("{u} outlived the teardown in bucket {b}"));
                    }
                }
                if after.contains(Kind::Bucket, bucket) {
                    problems.push(format!("bucket {bucket} holding {u} is still there"));
                }
            }
            Undeclared::SqsMessage { queue, .. } => {
                if let Some(n) = o.witness.message_count(queue)? {
                    problems.push(format!("queue {queue} is still there with {n} messages"));
                }
            }
            Undeclared::SecurityGroupRule { group, .. } => {
                if o.witness.security_group_id(group)?.is_some() {
                    problems.push(format!("security group {group} holding {u} is still there"));
                }
            }
        }
    }
    problems.dedup();
    out.push(Assertion::new(
        Toggle::TeardownUndeclared,
        problems.is_empty(),
        if estate.undeclared.is_empty() {
            "nothing to read back: the estate names no object the running system writes".to_owned()
        } else if problems.is_empty() {
            format!(
                "the {} went with their parents (force_destroy empties a bucket; a queue's messages and a security group's rules go with it), as stock handles them",
                undeclared_summary(&estate.undeclared)
            )
        } else {
            problems.join("; ")
        },
    ));
    if let Some(applied) = engine_applied {
        out.push(day_two::engine_teardown_assertion(lane, applied, destroys)?);
    }
    Ok(StageOutput {
        assertions: out,
        summary: if engine {
            "stock terraform tears the estate down on the oracle twin and choudoufu on the estate twin, side by side".into()
        } else {
            "stock terraform tears the estate down on the oracle twin".into()
        },
        plans: vec![StagePlan::Stock(Side::Oracle, plan)],
    })
}
