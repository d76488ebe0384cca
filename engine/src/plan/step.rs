//! What a plan hands to apply: the request it answered, and for each
//! instance the step that carries its change out. A plan's entry and its
//! step are made together, by [`Entries::add`], so the two never disagree.

use super::{Action, Plan, Reason, ResourceChange};
use crate::addr::{ResourceInstanceAddr, Target};
use crate::bind::catalogue::Identity;
use crate::config::tree::Tree;
use crate::config::{ProviderRef, ResourceKey};
use crate::diag::Diagnostics;
use crate::graph::{TreeGraph, TreeNode};
use crate::live::Settings;
use crate::provider::schema::Schema;
use crate::provider::ResourceState;
use crate::record::Deposed;
use crate::value::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What to plan (and, for apply, what was planned).
pub struct Request<'a> {
    /// The root module and the modules it calls.
    pub tree: &'a Tree,
    pub settings: &'a Settings,
    pub vars: BTreeMap<String, Value>,
    /// Plan to destroy everything the estate owns (`plan -destroy`).
    pub destroy: bool,
    /// Read records from the store (the store is always written).
    pub use_records: bool,
    /// `-target` addresses (resources, instances, module calls or module
    /// instances): plan only these and what they depend on, and sweep
    /// nothing.
    pub targets: Vec<Target>,
    /// `-replace` addresses: these instances are replaced even where the
    /// provider would update them in place or leave them as they are.
    pub replace: Vec<ResourceInstanceAddr>,
    /// When the plan was made (RFC 3339), `plantimestamp()`'s answer; a
    /// saved plan's apply keeps the saved plan's.
    pub plan_timestamp: String,
    /// `-refresh-only`: read every object and change none. Its apply
    /// brings the records and the outputs up to date.
    pub refresh_only: bool,
}

/// One instance's planned change, with what apply needs to carry it out.
#[derive(Debug, Clone)]
pub struct Step {
    pub addr: ResourceInstanceAddr,
    /// The block that declares it (none for a swept object).
    pub key: Option<ResourceKey>,
    pub provider: ProviderRef,
    pub type_name: String,
    /// How the type's objects are found and owned.
    pub identity: Identity,
    pub action: Action,
    /// The live object as read (none for a create).
    pub prior: Option<ResourceState>,
    /// The ID the object was imported by.
    pub id: Option<String>,
    pub schema: Arc<Schema>,
    /// Old objects a create_before_destroy replacement left behind, to be
    /// destroyed after this step's own change.
    pub deposed: Vec<DeposedObject>,
    /// The ID an `import` block brings the object into the estate by.
    pub importing: Option<String>,
}

/// A deposed object as the plan read it: its record entry and the object.
#[derive(Debug, Clone)]
pub struct DeposedObject {
    pub entry: Deposed,
    pub state: ResourceState,
}

/// A plan and what applying it needs.
pub struct Planned {
    pub plan: Plan,
    pub steps: BTreeMap<ResourceInstanceAddr, Step>,
    pub order: Vec<TreeNode>,
    /// The dependency graph of every module, linked, which apply walks.
    pub graph: TreeGraph,
    /// Steps of objects no block declares, in the order to destroy them.
    pub orphans: Vec<ResourceInstanceAddr>,
    /// Warnings met on the way.
    pub warnings: Diagnostics,
    /// Records left at an old address by a rename, removed by apply.
    pub stale_records: Vec<String>,
}

/// What the planner decided for one instance.
pub struct Decision {
    pub addr: ResourceInstanceAddr,
    pub previous_addr: Option<ResourceInstanceAddr>,
    pub key: Option<ResourceKey>,
    pub provider: ProviderRef,
    /// The provider's source address, as plans name it.
    pub source: String,
    pub type_name: String,
    pub identity: Identity,
    pub action: Action,
    pub reason: Option<Reason>,
    pub before: Option<Value>,
    pub after: Option<Value>,
    pub prior: Option<ResourceState>,
    pub id: Option<String>,
    pub schema: Arc<Schema>,
    pub replace_paths: Vec<crate::provider::path::AttributePath>,
    pub deposed: Vec<DeposedObject>,
    pub importing: Option<String>,
}

/// The plan's entries and apply's steps, as the planner makes them.
#[derive(Default)]
pub struct Entries {
    pub changes: Vec<ResourceChange>,
    pub steps: BTreeMap<ResourceInstanceAddr, Step>,
}

impl Entries {
    /// Adds one instance's entry, its deposed objects' destroys, and its
    /// step.
    pub fn add(&mut self, d: Decision) {
        self.changes.push(ResourceChange {
            addr: d.addr.clone(),
            previous_addr: d.previous_addr,
            provider: d.source.clone(),
            action: d.action,
            reason: d.reason,
            before: d.before,
            after: d.after,
            schema: d.schema.clone(),
            replace_paths: d.replace_paths,
            deposed: None,
            importing: d.importing.clone(),
        });
        for o in &d.deposed {
            self.changes.push(ResourceChange {
                addr: d.addr.clone(),
                previous_addr: None,
                provider: d.source.clone(),
                action: Action::Delete,
                reason: None,
                before: Some(o.state.value.clone()),
                after: None,
                schema: d.schema.clone(),
                replace_paths: Vec::new(),
                deposed: Some(o.entry.key.clone()),
                importing: None,
            });
        }
        self.steps.insert(
            d.addr.clone(),
            Step {
                addr: d.addr,
                key: d.key,
                provider: d.provider,
                type_name: d.type_name,
                identity: d.identity,
                action: d.action,
                prior: d.prior,
                id: d.id,
                schema: d.schema,
                deposed: d.deposed,
                importing: d.importing,
            },
        );
    }
}
