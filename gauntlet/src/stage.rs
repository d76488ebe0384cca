//! The stages of an estate's life, their assertions and BREAK toggles.
//!
//! Every assertion a stage makes has a [`Toggle`] that corrupts what it
//! checks on purpose: `BREAK_<NAME>=1` in the environment or
//! `--break <name>` on the command line. Under its toggle the assertion must
//! fail, and with it the stage; the test suite runs each toggle to prove it.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// Every stage of the seeds, in the order the page lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum StageId {
    ColdDeploy,
    Migrate,
    ReplanFromNothing,
    NoOpApply,
    DriftAndReconverge,
    Rename,
    RemoveABlock,
    ChangeCount,
    ReplaceWithCreateBeforeDestroy,
    CrashMidApply,
    Teardown,
    PlanReviewApply,
    GreenfieldApply,
    StrictProfile,
    PlanWithNoLocalState,
    ASecondMachine,
    LostRecordStore,
    TwoAppliesAtOnce,
    TwoEstatesOnOneTwin,
}

impl StageId {
    pub const ALL: [StageId; 19] = [
        StageId::ColdDeploy,
        StageId::Migrate,
        StageId::ReplanFromNothing,
        StageId::NoOpApply,
        StageId::DriftAndReconverge,
        StageId::Rename,
        StageId::RemoveABlock,
        StageId::ChangeCount,
        StageId::ReplaceWithCreateBeforeDestroy,
        StageId::CrashMidApply,
        StageId::Teardown,
        StageId::PlanReviewApply,
        StageId::GreenfieldApply,
        StageId::StrictProfile,
        StageId::PlanWithNoLocalState,
        StageId::ASecondMachine,
        StageId::LostRecordStore,
        StageId::TwoAppliesAtOnce,
        StageId::TwoEstatesOnOneTwin,
    ];

    pub fn title(self) -> &'static str {
        match self {
            StageId::ColdDeploy => "Cold deploy",
            StageId::Migrate => "Migrate",
            StageId::ReplanFromNothing => "Replan from nothing",
            StageId::NoOpApply => "No-op apply",
            StageId::DriftAndReconverge => "Drift and reconverge",
            StageId::Rename => "Rename",
            StageId::RemoveABlock => "Remove a block",
            StageId::ChangeCount => "Change count",
            StageId::ReplaceWithCreateBeforeDestroy => "Replace with create_before_destroy",
            StageId::CrashMidApply => "Crash mid-apply",
            StageId::Teardown => "Teardown",
            StageId::PlanReviewApply => "Plan, review, apply",
            StageId::GreenfieldApply => "Greenfield apply",
            StageId::StrictProfile => "Strict profile",
            StageId::PlanWithNoLocalState => "Plan with no local state",
            StageId::ASecondMachine => "A second machine",
            StageId::LostRecordStore => "Lost record store",
            StageId::TwoAppliesAtOnce => "Two applies at once",
            StageId::TwoEstatesOnOneTwin => "Two estates on one twin",
        }
    }

    /// The stage's name on the command line: `cold-deploy`.
    pub fn slug(self) -> String {
        self.title()
            .to_lowercase()
            .replace(|c: char| !c.is_ascii_alphanumeric(), "-")
            .split('-')
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join("-")
    }

    /// Whether the stage counts toward an estate's headline verdict.
    pub fn headline(self) -> bool {
        !matches!(
            self,
            StageId::StrictProfile
                | StageId::PlanWithNoLocalState
                | StageId::ASecondMachine
                | StageId::LostRecordStore
                | StageId::TwoAppliesAtOnce
                | StageId::TwoEstatesOnOneTwin
        )
    }
}

impl std::str::FromStr for StageId {
    type Err = String;

    fn from_str(s: &str) -> Result<StageId, String> {
        StageId::ALL
            .into_iter()
            .find(|t| t.slug() == s)
            .ok_or_else(|| {
                let names: Vec<String> = StageId::ALL.iter().map(|t| t.slug()).collect();
                format!("no stage named {s:?}; the stages are {}", names.join(", "))
            })
    }
}

/// A BREAK toggle: one per assertion. [`Toggle::bar`] is the assertion's
/// pass condition, [`Toggle::what`] how the toggle corrupts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Toggle {
    ColdState,
    ColdInventory,
    ColdMarkers,
    ColdUndeclared,
    TeardownRemoved,
    TeardownSurvivors,
    TeardownUndeclared,
    MigrateCounts,
    MigrateMarkers,
    ReplanEmpty,
    ReplanIdentities,
    NoopChanges,
    NoopMarkers,
    DriftSingle,
    DriftReconverged,
    RenameInPlace,
    RenameMarker,
    RemoveDestroy,
    RemoveUntouched,
    CountDown,
    CountUp,
    ReplacePlan,
    ReplaceOrder,
    ReplaceEnd,
    CrashRemainder,
    CrashRecovered,
    CrashWindow,
    ReviewRefused,
    ReviewApplied,
    TeardownEngine,
    GreenfieldInventory,
    GreenfieldMarkers,
    GreenfieldReplan,
    StrictSecrets,
    StrictSilent,
    StrictCreate,
    StrictMarkers,
    NoLocalState,
    SecondDrift,
    SecondWindow,
    LostStorePlan,
    LostStoreReconverged,
    LockTurns,
    LockBroken,
    NeighbourBoundary,
    NeighbourRefused,
    NeighbourTeardown,
}

impl Toggle {
    pub const ALL: [Toggle; 47] = [
        Toggle::ColdState,
        Toggle::ColdInventory,
        Toggle::ColdMarkers,
        Toggle::ColdUndeclared,
        Toggle::MigrateCounts,
        Toggle::MigrateMarkers,
        Toggle::ReplanEmpty,
        Toggle::ReplanIdentities,
        Toggle::NoopChanges,
        Toggle::NoopMarkers,
        Toggle::DriftSingle,
        Toggle::DriftReconverged,
        Toggle::RenameInPlace,
        Toggle::RenameMarker,
        Toggle::RemoveDestroy,
        Toggle::RemoveUntouched,
        Toggle::CountDown,
        Toggle::CountUp,
        Toggle::ReplacePlan,
        Toggle::ReplaceOrder,
        Toggle::ReplaceEnd,
        Toggle::TeardownRemoved,
        Toggle::TeardownSurvivors,
        Toggle::TeardownUndeclared,
        Toggle::CrashRemainder,
        Toggle::CrashRecovered,
        Toggle::CrashWindow,
        Toggle::TeardownEngine,
        Toggle::ReviewRefused,
        Toggle::ReviewApplied,
        Toggle::GreenfieldInventory,
        Toggle::GreenfieldMarkers,
        Toggle::GreenfieldReplan,
        Toggle::StrictSecrets,
        Toggle::StrictSilent,
        Toggle::StrictCreate,
        Toggle::StrictMarkers,
        Toggle::NoLocalState,
        Toggle::SecondDrift,
        Toggle::SecondWindow,
        Toggle::LostStorePlan,
        Toggle::LostStoreReconverged,
        Toggle::LockTurns,
        Toggle::LockBroken,
        Toggle::NeighbourBoundary,
        Toggle::NeighbourRefused,
        Toggle::NeighbourTeardown,
    ];

    /// The name used by `--break` and in details: `cold-inventory`.
    pub fn name(self) -> &'static str {
        match self {
            Toggle::ColdState => "cold-state",
            Toggle::ColdInventory => "cold-inventory",
            Toggle::ColdMarkers => "cold-markers",
            Toggle::ColdUndeclared => "cold-undeclared",
            Toggle::TeardownRemoved => "teardown-removed",
            Toggle::TeardownSurvivors => "teardown-survivors",
            Toggle::TeardownUndeclared => "teardown-undeclared",
            Toggle::MigrateCounts => "migrate-counts",
            Toggle::MigrateMarkers => "migrate-markers",
            Toggle::ReplanEmpty => "replan-empty",
            Toggle::ReplanIdentities => "replan-identities",
            Toggle::NoopChanges => "noop-changes",
            Toggle::NoopMarkers => "noop-markers",
            Toggle::DriftSingle => "drift-single",
            Toggle::DriftReconverged => "drift-reconverged",
            Toggle::RenameInPlace => "rename-in-place",
            Toggle::RenameMarker => "rename-marker",
            Toggle::ReplacePlan => "replace-plan",
            Toggle::ReplaceOrder => "replace-order",
            Toggle::ReplaceEnd => "replace-end",
            Toggle::CrashRemainder => "crash-remainder",
            Toggle::CrashRecovered => "crash-recovered",
            Toggle::CrashWindow => "crash-window",
            Toggle::ReviewRefused => "review-refused",
            Toggle::ReviewApplied => "review-applied",
            Toggle::RemoveDestroy => "remove-destroy",
            Toggle::RemoveUntouched => "remove-untouched",
            Toggle::CountDown => "count-down",
            Toggle::CountUp => "count-up",
            Toggle::TeardownEngine => "teardown-engine",
            Toggle::GreenfieldInventory => "greenfield-inventory",
            Toggle::GreenfieldMarkers => "greenfield-markers",
            Toggle::GreenfieldReplan => "greenfield-replan",
            Toggle::StrictSecrets => "strict-secrets",
            Toggle::StrictSilent => "strict-silent",
            Toggle::StrictCreate => "strict-create",
            Toggle::StrictMarkers => "strict-markers",
            Toggle::NoLocalState => "no-local-state",
            Toggle::SecondDrift => "second-drift",
            Toggle::SecondWindow => "second-window",
            Toggle::LostStorePlan => "lost-store-plan",
            Toggle::LostStoreReconverged => "lost-store-reconverged",
            Toggle::LockTurns => "lock-turns",
            Toggle::LockBroken => "lock-broken",
            Toggle::NeighbourBoundary => "neighbour-boundary",
            Toggle::NeighbourRefused => "neighbour-refused",
            Toggle::NeighbourTeardown => "neighbour-teardown",
        }
    }

    /// The environment variable: `BREAK_COLD_INVENTORY`.
    pub fn env(self) -> String {
        format!("BREAK_{}", self.name().replace('-', "_").to_uppercase())
    }

    pub fn stage(self) -> StageId {
        match self {
            Toggle::ColdState
            | Toggle::ColdInventory
            | Toggle::ColdMarkers
            | Toggle::ColdUndeclared => StageId::ColdDeploy,
            Toggle::MigrateCounts | Toggle::MigrateMarkers => StageId::Migrate,
            Toggle::ReplanEmpty | Toggle::ReplanIdentities => StageId::ReplanFromNothing,
            Toggle::NoopChanges | Toggle::NoopMarkers => StageId::NoOpApply,
            Toggle::DriftSingle | Toggle::DriftReconverged => StageId::DriftAndReconverge,
            Toggle::RenameInPlace | Toggle::RenameMarker => StageId::Rename,
            Toggle::ReplacePlan | Toggle::ReplaceOrder | Toggle::ReplaceEnd => {
                StageId::ReplaceWithCreateBeforeDestroy
            }
            Toggle::CrashRemainder | Toggle::CrashRecovered | Toggle::CrashWindow => {
                StageId::CrashMidApply
            }
            Toggle::ReviewRefused | Toggle::ReviewApplied => StageId::PlanReviewApply,
            Toggle::RemoveDestroy | Toggle::RemoveUntouched => StageId::RemoveABlock,
            Toggle::CountDown | Toggle::CountUp => StageId::ChangeCount,
            Toggle::TeardownRemoved
            | Toggle::TeardownSurvivors
            | Toggle::TeardownUndeclared
            | Toggle::TeardownEngine => StageId::Teardown,
            Toggle::GreenfieldInventory | Toggle::GreenfieldMarkers | Toggle::GreenfieldReplan => {
                StageId::GreenfieldApply
            }
            Toggle::StrictSecrets
            | Toggle::StrictSilent
            | Toggle::StrictCreate
            | Toggle::StrictMarkers => StageId::StrictProfile,
            Toggle::NoLocalState => StageId::PlanWithNoLocalState,
            Toggle::SecondDrift | Toggle::SecondWindow => StageId::ASecondMachine,
            Toggle::LostStorePlan | Toggle::LostStoreReconverged => StageId::LostRecordStore,
            Toggle::LockTurns | Toggle::LockBroken => StageId::TwoAppliesAtOnce,
            Toggle::NeighbourBoundary | Toggle::NeighbourRefused | Toggle::NeighbourTeardown => {
                StageId::TwoEstatesOnOneTwin
            }
        }
    }

    /// The assertion's pass condition, as the page prints it after "passes
    /// when": written once, here, beside the stage that checks it.
    pub fn bar(self) -> &'static str {
        match self {
            Toggle::ColdState => {
                "each twin's terraform.tfstate holds exactly the instances stock's plan created"
            }
            Toggle::ColdInventory => {
                "the AWS CLI counts, type by type, exactly the state's objects on each twin"
            }
            Toggle::ColdMarkers => {
                "no object on either twin carries an estate marker"
            }
            Toggle::ColdUndeclared => {
                "the undeclared objects the running system wrote are there"
            }
            Toggle::TeardownRemoved => {
                "stock's destroy removes exactly the state's instances and leaves an empty state"
            }
            Toggle::TeardownSurvivors => {
                "everything that existed before cold deploy is still there, and nothing else"
            }
            Toggle::TeardownUndeclared => {
                "the undeclared objects went with their parents, as stock handles them"
            }
            Toggle::MigrateCounts => {
                "every instance of the state is stamped or recorded, none failed or skipped"
            }
            Toggle::MigrateMarkers => {
                "the AWS CLI reads the estate's marker on every tagged object and on nothing else"
            }
            Toggle::ReplanEmpty => {
                "with no state file the engine's plan is empty"
            }
            Toggle::ReplanIdentities => {
                "every identity of the migrated state reads back live"
            }
            Toggle::NoopChanges => {
                "an apply with nothing to do reports 0 added, 0 changed, 0 destroyed"
            }
            Toggle::NoopMarkers => {
                "the objects carrying the marker are the same before and after"
            }
            Toggle::DriftSingle => {
                "the engine proposes exactly the one update stock proposes"
            }
            Toggle::DriftReconverged => {
                "after the apply the configured value reads back and the next plan is empty"
            }
            Toggle::RenameInPlace => {
                "a `moved` block plans no add and no destroy, only an in-place rewrite of the address marker, where stock plans zero churn"
            }
            Toggle::RenameMarker => {
                "the same object carries the new tofu-address and the next plan is empty"
            }
            Toggle::RemoveDestroy => {
                "the engine plans exactly stock's one destroy and the object is gone"
            }
            Toggle::RemoveUntouched => {
                "undeclared and pre-existing objects are untouched"
            }
            Toggle::CountDown => {
                "lowering the count destroys exactly the top index, as stock plans it"
            }
            Toggle::CountUp => {
                "raising it back creates exactly that index and the next plan is empty"
            }
            Toggle::ReplacePlan => {
                "a changed identifying attribute plans stock's create-before-destroy replacement, with no orphan destroy beside it"
            }
            Toggle::ReplaceOrder => {
                "at `-parallelism=1` the new object's create completes before the deposed object's destroy starts, as in stock's log"
            }
            Toggle::ReplaceEnd => {
                "exactly the new object remains, carrying the markers, and the next plan is empty"
            }
            Toggle::CrashRemainder => {
                "after the kill the first object exists, marked, the second does not, and the next plan is exactly the remainder, as stock's from the same position"
            }
            Toggle::CrashRecovered => {
                "the recovery apply adds exactly the remainder, the second reads the first, and the next plan is empty"
            }
            Toggle::CrashWindow => {
                "a create_before_destroy replacement killed between the new object's create and the old one's destroy leaves both marked and the old one deposed in the record; one more apply leaves exactly the new object and an empty replan"
            }
            Toggle::ReviewRefused => {
                "a saved plan applied after the live system moved is refused with exit 3 and applies nothing"
            }
            Toggle::ReviewApplied => {
                "with the live system back as it was, the same file applies exactly its one change, which reads back"
            }
            Toggle::TeardownEngine => {
                "the engine's destroy leaves nothing carrying the marker and every pre-existing object, and destroys as many as stock"
            }
            Toggle::GreenfieldInventory => {
                "the live inventory after the engine's apply equals stock's cold deploy field by field"
            }
            Toggle::GreenfieldMarkers => {
                "every tagged object the engine created carries the marker"
            }
            Toggle::GreenfieldReplan => {
                "the replans are empty, with the record store and without it"
            }
            Toggle::StrictSecrets => {
                "with every toggle on, a block setting a secret the provider cannot read back is refused once, by address and setting"
            }
            Toggle::StrictSilent => {
                "the estate's own root plans empty with every toggle on"
            }
            Toggle::StrictCreate => {
                "a create of a type only the record store can find again is refused"
            }
            Toggle::StrictMarkers => {
                "an object whose address marker is wrong is refused, not re-marked"
            }
            Toggle::NoLocalState => {
                "in a fresh copy of the root (no local folder, no cache, no state file, a separate HOME), with only the live system and the record store it holds, the plan is \"No changes.\": nothing to add, change or destroy"
            }
            Toggle::SecondDrift => {
                "a fresh copy of the root applies a drift away, and the first copy's next plan is then empty"
            }
            Toggle::SecondWindow => {
                "a create_before_destroy replacement the first copy's apply left half done (killed between the new object's create and the old one's destroy) is finished by the second copy, leaving exactly the new object and nothing to plan"
            }
            Toggle::LostStorePlan => {
                "with every record deleted, a fresh copy's plan creates, destroys and replaces nothing, and updates only what a deleted record held; an object nothing but a record proves is refused by address with an import block as the remedy, and with those import blocks the plan imports exactly them"
            }
            Toggle::LostStoreReconverged => {
                "one apply in the fresh copy reconverges and the next plan is empty"
            }
            Toggle::LockTurns => {
                "the second apply waits for the first's lock, naming it, and then has nothing to do"
            }
            Toggle::LockBroken => {
                "a lock left by a killed run refuses the next apply until `force-unlock` breaks it"
            }
            Toggle::NeighbourBoundary => {
                "with the neighbour's parts written into this estate's objects, neither plan proposes anything"
            }
            Toggle::NeighbourRefused => {
                "a neighbour's block naming one of this estate's objects is refused by this estate's name"
            }
            Toggle::NeighbourTeardown => {
                "the neighbour's teardown removes exactly its parts"
            }
        }
    }

    /// What the toggle does, for `gauntlet breaks`.
    pub fn what(self) -> &'static str {
        match self {
            Toggle::ColdState => {
                "removes one instance from the estate twin's state before the state check"
            }
            Toggle::ColdInventory => {
                "deletes one declared parameter out of band before the witness counts"
            }
            Toggle::ColdMarkers => {
                "stamps one declared queue (a root run: its first object by ARN with tags) with a tofu-estate tag before the marker read"
            }
            Toggle::ColdUndeclared => {
                "deletes one undeclared object before the witness looks for it"
            }
            Toggle::TeardownRemoved => "puts one destroyed parameter back after the destroy",
            Toggle::TeardownSurvivors => {
                "deletes one pre-existing queue before the survivors are read"
            }
            Toggle::TeardownUndeclared => {
                "copies one undeclared object into a pre-existing bucket before the destroy"
            }
            Toggle::MigrateCounts => {
                "migrates a copy of the state holding one more instance, whose object does not exist"
            }
            Toggle::MigrateMarkers => {
                "removes one queue's (a root run: one object's by ARN) tofu-estate tag after migrate, before the read"
            }
            Toggle::ReplanEmpty => {
                "changes one parameter's value (a root run: tags one object gauntlet-drift) before the plan"
            }
            Toggle::ReplanIdentities => {
                "deletes one declared parameter after the plan, before the read"
            }
            Toggle::NoopChanges => {
                "changes one parameter's value (a root run: tags one object gauntlet-drift) before the apply"
            }
            Toggle::NoopMarkers => {
                "stamps a pre-existing queue with the estate's marker before the count"
            }
            Toggle::DriftSingle => {
                "tampers a second parameter (a root run: tags a second object) on the estate twin"
            }
            Toggle::DriftReconverged => {
                "tampers the object again after the apply, before the read"
            }
            Toggle::RenameInPlace => {
                "also changes the renamed queue's name (a root run: adds a tag to the renamed block; on a root of module calls, leaves the moved block out) on the estate twin before the plan"
            }
            Toggle::RenameMarker => {
                "writes the old tofu-address back on the renamed object before the read"
            }
            Toggle::ReplacePlan => {
                "takes the old parameter's address marker and record away before the plan"
            }
            Toggle::ReplaceOrder => {
                "drops create_before_destroy from the estate twin's block for the apply"
            }
            Toggle::ReplaceEnd => {
                "creates the old parameter again, carrying the block's markers, before the read"
            }
            Toggle::CrashRemainder => "deletes the first object after the kill, before the plan",
            Toggle::CrashRecovered => "deletes the second object after the recovery apply, before the read",
            Toggle::CrashWindow => {
                "creates the window's old parameter again, carrying the block's markers, before the read"
            }
            Toggle::ReviewRefused => "leaves the live system as it was before the first apply",
            Toggle::ReviewApplied => "removes the applied tag before the read",
            Toggle::RemoveDestroy => {
                "keeps the block (on a root of module calls, the call) on the estate twin for the plan and apply"
            }
            Toggle::RemoveUntouched => {
                "deletes one undeclared object after the apply, before the read"
            }
            Toggle::CountDown => {
                "puts the destroyed parameter back out of band before the read (any other block, or a module call: keeps the estate twin's count as it was for the plan and apply)"
            }
            Toggle::CountUp => {
                "deletes the created parameter (a root run: takes its object's tofu-address away) before the read"
            }
            Toggle::TeardownEngine => {
                "stamps a pre-existing queue with the estate's marker after the engine's destroy"
            }
            Toggle::GreenfieldInventory => {
                "changes one parameter's value (a root run: tags one object gauntlet-drift) after the apply, before the inventory read"
            }
            Toggle::GreenfieldMarkers => {
                "removes one queue's (a root run: one object's by ARN) tofu-estate tag after the apply, before the read"
            }
            Toggle::GreenfieldReplan => {
                "changes one parameter's value (a root run: tags one object gauntlet-drift) before the replans"
            }
            Toggle::StrictSecrets => "writes secrets = \"allow\" into the strict block",
            Toggle::StrictSilent => {
                "removes one queue's (a root run: one object's by ARN) tofu-estate tag before the strict plan"
            }
            Toggle::StrictCreate => "writes no_source_create = \"allow\" into the strict block",
            Toggle::StrictMarkers => "writes marker_repair = \"repair\" into the strict block",
            Toggle::NoLocalState => {
                "removes one queue's (a root run: one object's by ARN) tofu-estate tag before the plan in the fresh copy"
            }
            Toggle::SecondDrift => {
                "changes a second object out of band (the manifest's second drift parameter, or a tag on another object by ARN) after the second copy's apply, before the first copy's plan"
            }
            Toggle::SecondWindow => {
                "creates the window's old parameter again, carrying the block's markers, after the second copy's apply, before the read"
            }
            Toggle::LostStorePlan => {
                "removes one queue's (a root run: one object's by ARN) tofu-estate tag before the plan with every record deleted"
            }
            Toggle::LostStoreReconverged => {
                "changes one parameter's value (a root run: tags one object gauntlet-drift) after the apply, before the next plan"
            }
            Toggle::LockTurns => "runs the second apply with -lock=false",
            Toggle::LockBroken => {
                "deletes the killed run's lock with the AWS CLI before the next apply"
            }
            Toggle::NeighbourBoundary => {
                "drops the table's ignore_changes from the estate's root before its plan"
            }
            Toggle::NeighbourRefused => {
                "removes the named queue's tofu-estate tag before the neighbour's plan"
            }
            Toggle::NeighbourTeardown => {
                "writes the neighbour's table tag back after its destroy, before the read"
            }
        }
    }
}

impl std::str::FromStr for Toggle {
    type Err = String;

    fn from_str(s: &str) -> Result<Toggle, String> {
        Toggle::ALL
            .into_iter()
            .find(|t| t.name() == s || t.env() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Toggle::ALL.iter().map(|t| t.name()).collect();
                format!(
                    "no BREAK toggle named {s:?}; the toggles are {}",
                    names.join(", ")
                )
            })
    }
}

/// The toggles on for one run: from `--break` flags and `BREAK_*=1`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Breaks(BTreeSet<Toggle>);

impl Breaks {
    pub fn new(flags: &[Toggle], env: impl Fn(&str) -> Option<String>) -> Breaks {
        let mut set: BTreeSet<Toggle> = flags.iter().copied().collect();
        for t in Toggle::ALL {
            if env(&t.env()).is_some_and(|v| !v.is_empty() && v != "0") {
                set.insert(t);
            }
        }
        Breaks(set)
    }

    pub fn on(&self, t: Toggle) -> bool {
        self.0.contains(&t)
    }

    pub fn names(&self) -> Vec<String> {
        self.0.iter().map(|t| t.name().to_owned()).collect()
    }
}

/// One assertion's result.
#[derive(Debug, Clone)]
pub struct Assertion {
    pub toggle: Toggle,
    pub holds: bool,
    /// What was seen, in words for the page.
    pub seen: String,
}

impl Assertion {
    pub fn new(toggle: Toggle, holds: bool, seen: impl Into<String>) -> Assertion {
        Assertion {
            toggle,
            holds,
            seen: seen.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toggles_parse_by_name_and_env() {
        for t in Toggle::ALL {
            // A record names an assertion by its toggle's name.
            assert_eq!(serde_json::to_value(t).unwrap(), t.name());
            assert_eq!(t.name().parse::<Toggle>().unwrap(), t);
            assert_eq!(t.env().parse::<Toggle>().unwrap(), t);
        }
        assert_eq!(Toggle::ColdInventory.env(), "BREAK_COLD_INVENTORY");
        let e = "cold".parse::<Toggle>().unwrap_err();
        assert!(e.contains("cold-inventory"), "{e}");
    }

    #[test]
    fn breaks_come_from_flags_and_the_environment() {
        let env = |k: &str| match k {
            "BREAK_TEARDOWN_SURVIVORS" => Some("1".to_owned()),
            "BREAK_COLD_MARKERS" => Some("0".to_owned()),
            _ => None,
        };
        let b = Breaks::new(&[Toggle::ColdState], env);
        assert!(b.on(Toggle::ColdState) && b.on(Toggle::TeardownSurvivors));
        assert!(!b.on(Toggle::ColdMarkers));
        assert_eq!(b.names(), ["cold-state", "teardown-survivors"]);
    }

    #[test]
    fn the_stages_past_the_headline_have_toggles_too() {
        let off: BTreeSet<StageId> = Toggle::ALL
            .iter()
            .map(|t| t.stage())
            .filter(|s| !s.headline())
            .collect();
        assert_eq!(
            off.into_iter().collect::<Vec<_>>(),
            [
                StageId::StrictProfile,
                StageId::PlanWithNoLocalState,
                StageId::ASecondMachine,
                StageId::LostRecordStore,
                StageId::TwoAppliesAtOnce,
                StageId::TwoEstatesOnOneTwin
            ]
        );
        assert_eq!(StageId::ALL.iter().filter(|s| s.headline()).count(), 13);
        assert_eq!(
            StageId::ReplaceWithCreateBeforeDestroy.slug(),
            "replace-with-create-before-destroy"
        );
        for s in StageId::ALL {
            assert_eq!(s.slug().parse::<StageId>().unwrap(), s);
        }
    }
}
