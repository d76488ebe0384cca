//! A plan: what applying the configuration would change in the live
//! system, instance by instance, as the provider planned it.
//!
//! The plan is data. `render` prints it as terraform prints a plan and
//! `json` writes terraform's JSON plan format (`show -json`); the planner
//! that fills it in and the apply that carries it out live elsewhere.

pub mod json;
pub mod objchange;
pub mod render;
pub mod step;

use crate::addr::ResourceInstanceAddr;
use crate::provider::path::AttributePath;
use crate::provider::schema::Schema;
use crate::value::Value;
use std::sync::Arc;

/// What happens to one resource instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    NoOp,
    Create,
    /// A data source read during apply (its configuration is not yet known).
    Read,
    Update,
    /// Destroy then create (the default), or create then destroy.
    Replace {
        create_before_destroy: bool,
    },
    Delete,
    /// No longer managed, not destroyed (a `removed` block with
    /// `destroy = false`): the object loses the estate's markers and
    /// record, and stays.
    Forget,
}

/// Why an action was chosen, when terraform says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// A replacement forced by attributes the provider cannot update in place.
    ReplaceBecauseCannotUpdate,
    /// A replacement forced by `replace_triggered_by`.
    ReplaceByTriggers,
    /// A replacement asked for with `-replace=ADDRESS`.
    ReplaceByRequest,
    /// A delete because no block declares the instance any more (a swept
    /// object carrying the estate's marker).
    DeleteBecauseNoResourceConfig,
    /// A delete because `count` no longer reaches the instance's index.
    DeleteBecauseCountIndex,
    /// A delete because `for_each` no longer has the instance's key.
    DeleteBecauseEachKey,
    /// A delete because the module instance holding it is no longer
    /// declared (its call removed, or its count or for_each no longer
    /// reaching it).
    DeleteBecauseNoModule,
    /// A data source read during apply because its configuration refers
    /// to values not yet known.
    ReadBecauseConfigUnknown,
    /// A data source read during apply because it depends on a resource
    /// with changes pending.
    ReadBecauseDependencyPending,
}

/// One instance's change.
#[derive(Debug, Clone)]
pub struct ResourceChange {
    pub addr: ResourceInstanceAddr,
    /// The address before a `moved` block renamed it, if it was.
    pub previous_addr: Option<ResourceInstanceAddr>,
    /// The provider's full address: `registry.terraform.io/hashicorp/aws`.
    pub provider: String,
    pub action: Action,
    pub reason: Option<Reason>,
    /// The live object before (null or absent for a create).
    pub before: Option<Value>,
    /// The object after, as planned: unknown where known only after apply
    /// (absent for a delete).
    pub after: Option<Value>,
    /// The resource type's schema, for rendering (blocks, sensitivity).
    pub schema: Arc<Schema>,
    /// Attribute paths whose change forces the replacement.
    pub replace_paths: Vec<AttributePath>,
    /// The key of a deposed object (one a create_before_destroy
    /// replacement left behind), whose destroy this change is.
    pub deposed: Option<String>,
    /// The ID an `import` block brings the object into the estate by.
    pub importing: Option<String>,
}

/// An output value's change.
#[derive(Debug, Clone)]
pub struct OutputChange {
    pub name: String,
    pub action: Action,
    pub before: Option<Value>,
    pub after: Option<Value>,
    pub sensitive: bool,
}

/// The whole plan.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Every instance considered, no-ops included, in address order.
    pub changes: Vec<ResourceChange>,
    pub outputs: Vec<OutputChange>,
    /// A plan made with `-destroy`.
    pub destroy: bool,
    /// A plan made with `-refresh-only`: every object as it is.
    pub refresh_only: bool,
    /// The data sources the plan read, in the order it read them.
    pub reads: Vec<DataRead>,
}

/// One data source instance read while planning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataRead {
    pub addr: ResourceInstanceAddr,
    /// The `id` of what it read, when it has one.
    pub id: Option<String>,
    pub elapsed: std::time::Duration,
}

impl Plan {
    /// Counts to add, change and destroy, as terraform's summary gives
    /// them (a replacement counts once as an add and once as a destroy; a
    /// data source's delete is not counted).
    pub fn counts(&self) -> (usize, usize, usize) {
        let mut add = 0;
        let mut change = 0;
        let mut destroy = 0;
        for c in &self.changes {
            match c.action {
                Action::Create => add += 1,
                Action::Update => change += 1,
                Action::Replace { .. } => {
                    add += 1;
                    destroy += 1;
                }
                Action::Delete if c.addr.mode == crate::addr::Mode::Managed => destroy += 1,
                Action::Delete | Action::NoOp | Action::Read | Action::Forget => {}
            }
        }
        (add, change, destroy)
    }

    /// How many objects `import` blocks bring into the estate.
    pub fn imports(&self) -> usize {
        self.changes
            .iter()
            .filter(|c| c.importing.is_some())
            .count()
    }

    /// Whether applying would change anything in the live system.
    pub fn has_changes(&self) -> bool {
        self.changes
            .iter()
            .any(|c| !matches!(c.action, Action::NoOp | Action::Read) || c.importing.is_some())
            || self.outputs.iter().any(|o| o.action != Action::NoOp)
    }
}
