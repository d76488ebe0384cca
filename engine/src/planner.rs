//! The stateless planner: the live system is the prior state.
//!
//! Blocks are evaluated in dependency order. Each declared resource
//! instance is bound to its live object by identity (import, then read),
//! its markers are checked, and the provider plans the change from what is
//! live to what is configured, with the estate's markers merged into the
//! configuration. The sweep then finds what carries the estate's marker and
//! no instance bound: those are planned as destroys.
//!
//! A root's local child modules are planned with it: the blocks of every
//! module in the order of the linked graph, each once per module instance
//! (a call's `count` or `for_each`), so every address carries its module
//! path (`module.app["a"].aws_sqs_queue.q`).

use crate::addr::{InstanceKey, Mode, ModuleStep, ResourceInstanceAddr, Target};
use crate::bind::identity::{self, FromArn, Locate, Marks, Row};
use crate::bind::marker::{self, Owner};
use crate::config::tree::Tree;
use crate::config::{IgnoreChanges, Module, ProviderRef, Resource, ResourceKey};
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::body::decode;
use crate::eval::funcs::Phase;
use crate::eval::module::{
    expansion, root_output_sensitive, Expansion, Instance, ModuleValues, TreeValues,
};
use crate::graph::{cycle_diagnostic, Graph, Node, TreeGraph, TreeNode};
use crate::live::Settings;
use crate::plan::{Action, OutputChange, Plan, Reason, ResourceChange};
use crate::provider::diagnostic::{AttributePath, PathStep};
use crate::provider::grpc::GrpcProvider;
use crate::provider::proposed::proposed_new;
use crate::provider::schema::Schema;
use crate::provider::{PlannedChange, Provider, ProviderError, ResourceState};
use crate::record::{self, Deposed, OutputRecord, Record, RecordStore};
use crate::session::Sessions;
use crate::value::{Kind, Type, Value};
use futures_util::StreamExt;
use hcl_edit::expr::{Expression, TraversalOperator};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// How many live reads a plan makes at once (terraform refreshes ten
/// instances at a time by default).
const READS_IN_FLIGHT: usize = 10;

/// What to plan.
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
    /// When the plan was made (RFC 3339), `plantimestamp()`'s answer; a
    /// saved plan's apply keeps the saved plan's.
    pub plan_timestamp: String,
}

/// One instance's planned change, with what apply needs to carry it out.
#[derive(Debug, Clone)]
pub struct Step {
    pub addr: ResourceInstanceAddr,
    /// The block that declares it (none for a swept object).
    pub key: Option<ResourceKey>,
    pub provider: ProviderRef,
    pub type_name: String,
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

/// Plans `req` against the live system.
pub async fn plan(
    req: &Request<'_>,
    sessions: &mut Sessions,
    store: &RecordStore,
) -> Result<Planned, Diagnostics> {
    let module = &req.tree.module;
    let (graph, order) = TreeGraph::of_tree(req.tree)?;
    let mut p = Planner {
        req,
        store,
        values: TreeValues::new(
            ModuleValues::new(req.vars.clone(), &module.dir, &module.dir)
                .in_phase(Phase::Plan(req.plan_timestamp.clone())),
        ),
        here: Vec::new(),
        owned: BTreeSet::new(),
        bound: BTreeSet::new(),
        steps: BTreeMap::new(),
        changes: Vec::new(),
        diags: Diagnostics::default(),
        stale_records: Vec::new(),
        needed: needed_by_targets(&graph, &req.targets),
        tagged: None,
    };
    for tn in &order {
        // Each instance of the block's module (known once its call is).
        for instance in p.values.instances_of(&tn.module) {
            p.here = instance;
            p.node(&tn.node, sessions).await?;
        }
    }
    p.here = Vec::new();
    if p.diags.has_errors() {
        return Err(p.diags);
    }
    let orphans = if req.targets.is_empty() {
        p.sweep(sessions).await?
    } else {
        p.diags.push(Diagnostic::warning(
            "Resource targeting is in effect",
            "You are creating a plan with the -target option, which means that the result of this plan may not represent all of the changes requested by the current configuration.\n\nThe -target option is not for routine use, and is provided only for exceptional situations such as recovering from errors or mistakes, or when Terraform specifically suggests to use it as part of an error message.",
        ));
        Vec::new()
    };
    if p.diags.has_errors() {
        return Err(p.diags);
    }
    p.changes.sort_by(|a, b| a.addr.cmp(&b.addr));
    // A targeted plan leaves the outputs as they were, and apply keeps them.
    let outputs = match req.targets.is_empty() {
        true => p.output_changes()?,
        false => Vec::new(),
    };
    Ok(Planned {
        plan: Plan {
            changes: p.changes,
            outputs,
            destroy: req.destroy,
        },
        steps: p.steps,
        order,
        graph,
        orphans,
        warnings: p.diags,
        stale_records: p.stale_records,
    })
}

struct Planner<'a, 'r> {
    req: &'a Request<'r>,
    store: &'a RecordStore,
    /// Every module instance's values.
    values: TreeValues,
    /// The module instance whose block is being planned.
    here: Vec<ModuleStep>,
    /// Identifying values (IDs, ARNs, URLs, names) of objects this estate
    /// owns, for the types owned through a parent.
    owned: BTreeSet<String>,
    /// Import IDs and ARNs of every object a declared instance bound.
    bound: BTreeSet<String>,
    steps: BTreeMap<ResourceInstanceAddr, Step>,
    changes: Vec<ResourceChange>,
    diags: Diagnostics,
    /// Records left at an old address by a rename.
    stale_records: Vec<String>,
    /// With `-target`: the blocks the targets need, themselves included.
    needed: Option<BTreeSet<TreeNode>>,
    /// The tagging API's listing of the estate's objects (ARN and address
    /// marker), read once when first needed.
    tagged: Option<Vec<(String, Option<String>)>>,
}

impl<'a, 'r> Planner<'a, 'r> {
    /// The module of the instance being planned.
    fn tree(&self) -> &'r Tree {
        tree_of(self.req.tree, &self.here)
    }

    fn module(&self) -> &'r Module {
        &self.tree().module
    }

    /// The values of the module instance being planned.
    fn values(&self) -> &ModuleValues {
        &self.values.instances[&self.here]
    }

    fn values_mut(&mut self) -> &mut ModuleValues {
        self.values.at_mut(&self.here)
    }

    /// The provider configuration a block of this module uses.
    fn provider_of(&self, res: &Resource) -> ProviderRef {
        self.req
            .tree
            .provider_for(&call_names(&self.here), res.provider_ref())
    }

    async fn node(&mut self, node: &Node, sessions: &mut Sessions) -> Result<(), Diagnostics> {
        let tree = self.tree();
        let module = &tree.module;
        match node {
            Node::Variable(_) => {}
            Node::ModuleCall(name) => {
                let root = &self.req.tree.module.dir;
                self.values.expand_call(&self.here, tree, name, root)?;
            }
            Node::Local(name) => {
                let v = self
                    .values()
                    .eval(&module.locals[name].expr, &Instance::default())?;
                self.values_mut().locals.insert(name.clone(), v);
            }
            Node::Output(name) => {
                let out = &module.outputs[name];
                let v = self.values().eval(&out.value, &Instance::default())?;
                self.values.set_output(&self.here, name, v, out.sensitive);
            }
            Node::Provider(p) if !self.here.is_empty() => {
                return Err(Diagnostic::error(
                    "Provider configuration in a child module",
                    format!(
                        "The module {} configures provider {p} itself. This engine plans child modules that use their caller's provider configurations (inherited, or passed with the call's providers argument): move the provider block to the root module.",
                        crate::addr::module_text(&self.here)
                    ),
                )
                .at(module.providers[p].range.clone())
                .into());
            }
            Node::Provider(p) => {
                let config = &module.providers[p];
                let schema = sessions.schema(&p.name).cloned().ok_or_else(|| {
                    Diagnostics::from(
                        Diagnostic::error(
                            "Missing required provider",
                            format!("No provider is installed for {p}."),
                        )
                        .at(config.range.clone()),
                    )
                })?;
                let scope = self
                    .values()
                    .scope_for(&config.config.references(), &Instance::default());
                let value = decode(&config.config, &schema.provider.block, &scope)?;
                sessions.configure(p, value).await?;
            }
            Node::Resource(key) if !self.targeted(key) => {
                let unknown = Value::unknown(Type::Dynamic);
                self.values_mut().resources.insert(key.clone(), unknown);
            }
            Node::Resource(key) => {
                let res = &module.resources[key];
                match key.mode {
                    Mode::Managed => self.managed(res, sessions).await?,
                    Mode::Data => self.data(res, sessions).await?,
                }
            }
        }
        Ok(())
    }

    async fn data(&mut self, res: &Resource, sessions: &mut Sessions) -> Result<(), Diagnostics> {
        let pref = self.provider_of(res);
        let schema = sessions
            .schema(&pref.name)
            .and_then(|s| s.data_sources.get(&res.key.type_name).cloned())
            .ok_or_else(|| unsupported_type(res, "data source"))?;
        let exp = expansion(
            self.values(),
            res.count.as_ref(),
            res.for_each.as_ref(),
            false,
        )?;
        let mut values = Vec::new();
        for (key, instance) in exp.instances() {
            let scope = self.values().scope_for(&res.config.references(), &instance);
            let config = decode(&res.config, &schema.block, &scope)?;
            let v = if config.is_wholly_known() {
                let provider = sessions.get(&pref).await?;
                provider
                    .read_data_source(&res.key.type_name, &config)
                    .await
                    .map_err(|e| {
                        provider_failed(res, &instance_addr(&self.here, &res.key, key), e)
                    })?
            } else {
                Value::unknown(schema.block.implied_type().without_optional())
            };
            values.push(v);
        }
        self.values_mut()
            .resources
            .insert(res.key.clone(), exp.assemble(values));
        Ok(())
    }

    async fn managed(
        &mut self,
        res: &Resource,
        sessions: &mut Sessions,
    ) -> Result<(), Diagnostics> {
        let key = &res.key;
        let row = identity::row(&key.type_name).ok_or_else(|| no_identity_row(res))?;
        let pref = self.provider_of(res);
        let schema = sessions
            .resource_schema(&pref.name, &key.type_name)
            .ok_or_else(|| unsupported_type(res, "resource type"))?;
        let source = sessions.source(&pref.name);
        let exp = expansion(
            self.values(),
            res.count.as_ref(),
            res.for_each.as_ref(),
            false,
        )?;
        // Each instance's configuration and record, then every live read at
        // once (as terraform refreshes), then the plans in address order.
        let mut inputs = Vec::new();
        for (inst_key, instance) in exp.instances() {
            let addr = instance_addr(&self.here, key, inst_key.clone());
            if !self.targets_instance(&addr) {
                continue;
            }
            let scope = self.values().scope_for(&res.config.references(), &instance);
            let config = decode(&res.config, &schema.block, &scope)?;
            let record = if self.req.use_records {
                self.store.get(&addr).map_err(|e| {
                    Diagnostics::from(
                        Diagnostic::error("Unreadable record", e.to_string()).at(res.range.clone()),
                    )
                })?
            } else {
                None
            };
            let import = self.import_id(&addr)?;
            inputs.push((addr, config, record, import));
        }
        let shared = sessions.get(&pref).await?.clone();
        let founds: Vec<_> =
            futures_util::stream::iter(inputs.iter().map(|(_, config, record, import)| {
                let mut provider = shared.clone();
                async move {
                    match import {
                        // An import block names the object itself.
                        Some(id) => import_read(&mut provider, &key.type_name, id)
                            .await
                            .map(|found| (Some(id.clone()), found)),
                        None => {
                            bind(&mut provider, row, &key.type_name, config, record.as_ref()).await
                        }
                    }
                }
            }))
            .buffered(READS_IN_FLIGHT)
            .collect()
            .await;
        let provider = sessions.get(&pref).await?;
        let mut afters = Vec::new();
        for ((addr, config, record, import), found) in inputs.into_iter().zip(founds) {
            let found = match found.map_err(|e| provider_failed(res, &addr, e))? {
                (Some(id), Some(state)) => Some((id, state)),
                (Some(_), None) if import.is_some() => {
                    return Err(Diagnostic::error(
                        "Cannot import non-existent remote object",
                        format!(
                            "While attempting to import an existing object to \"{addr}\", the provider detected that no object exists with the given id. Only pre-existing objects can be imported; check that the id is correct and that it is associated with the provider's configured region or endpoint, or remove the import block to create a new remote object for this resource."
                        ),
                    )
                    .at(res.range.clone())
                    .about(addr.to_string())
                    .into());
                }
                (tried, _) => self
                    .rebind(
                        &mut shared.clone(),
                        row,
                        &addr,
                        record.as_ref(),
                        tried.as_deref(),
                    )
                    .await
                    .map_err(|e| provider_failed(res, &addr, e))?,
            };
            let deposed = self
                .deposed(&mut shared.clone(), row, record.as_ref())
                .await
                .map_err(|e| provider_failed(res, &addr, e))?;
            // An import block adopts an object this estate does not own
            // yet and no other estate has marked; one this estate already
            // owns is simply bound, as stock terraform skips the import of
            // an instance its state already holds.
            check_marker_key(res, &addr, row, &config)?;
            let mut owner_refusal = None;
            let mut importing = None;
            if let Some((id, state)) = &found {
                let owner = Ownership {
                    id,
                    live: &state.value,
                    config: &config,
                    record: record.as_ref(),
                };
                let verdict = self
                    .check_owner(&mut shared.clone(), res, &addr, row, owner)
                    .await;
                let another = matches!(
                    marker::owner(&state.value),
                    Owner::Estate { estate, .. } if estate != self.req.settings.estate
                );
                match (verdict, import.is_some()) {
                    (Err(_), true) if !another => importing = Some(id.clone()),
                    (Err(e), _) => owner_refusal = Some(e),
                    (Ok(()), _) => {}
                }
            }
            if let Some(e) = owner_refusal {
                return Err(e);
            }
            let prior = match found {
                Some((id, mut state)) => {
                    patch_config_only(&mut state.value, &config, record.as_ref(), row, &schema);
                    self.bound.insert(id.clone());
                    if let Some(arn) = state.value.get("arn").and_then(Value::as_str) {
                        self.bound.insert(arn.to_string());
                    }
                    Some((id, state))
                }
                None => None,
            };
            let previous_addr = prior
                .as_ref()
                .and_then(|(_, s)| match marker::owner(&s.value) {
                    Owner::Estate {
                        address: Some(a), ..
                    } => a.parse::<ResourceInstanceAddr>().ok(),
                    _ => None,
                })
                .filter(|old| *old != addr && self.moved(old, &addr));
            if let Some(old) = &previous_addr {
                self.stale_records.push(old.to_string());
            }
            if let Some((id, state)) = &prior {
                self.check_strict_markers(
                    res,
                    &addr,
                    row,
                    id,
                    &state.value,
                    previous_addr.is_some(),
                )?;
            }
            self.check_strict_secrets(res, &addr, row, &schema, &config)?;
            let live = prior.as_ref().map(|p| &p.1.value);
            let config = keep_live_json(ignore_changes(res, config, live), live);
            let marked = match row.marks {
                Marks::Tags => {
                    marker::with_markers(config, &self.req.settings.estate, &addr.to_string())
                }
                Marks::Parent { .. } => config,
            };
            let ty = schema.block.implied_type().without_optional();
            let (action, before, after, replace_paths) = match (&prior, self.req.destroy) {
                (None, true) => {
                    afters.push(Value::unknown(ty));
                    continue;
                }
                (None, false) => {
                    self.check_strict_create(res, &addr, row)?;
                    let planned = plan_create(provider, &key.type_name, &schema, &marked)
                        .await
                        .map_err(|e| provider_failed(res, &addr, e))?;
                    (
                        Action::Create,
                        None,
                        Some(planned.planned_state),
                        Vec::new(),
                    )
                }
                (Some((_, state)), true) => {
                    self.check_prevent_destroy(res, &addr)?;
                    (Action::Delete, Some(state.value.clone()), None, Vec::new())
                }
                (Some((_, state)), false) => {
                    let proposed = proposed_new(&schema.block, &state.value, &marked);
                    let mut planned = provider
                        .plan_resource_change(&key.type_name, state, &proposed, &marked)
                        .await
                        .map_err(|e| provider_failed(res, &addr, e))?;
                    // As terraform does, ignore_changes applies to the
                    // provider's plan as well as to the configuration.
                    planned.planned_state =
                        ignore_changes(res, planned.planned_state, Some(&state.value));
                    let mut live = state.value.clone();
                    default_config_only(&mut live, &planned.planned_state, row);
                    let state = &ResourceState {
                        value: live,
                        private: state.private.clone(),
                    };
                    let replace_paths = forcing(
                        &state.value,
                        &planned.planned_state,
                        &planned.requires_replace,
                    );
                    if same(&planned.planned_state, &state.value) {
                        (
                            Action::NoOp,
                            Some(state.value.clone()),
                            Some(state.value.clone()),
                            Vec::new(),
                        )
                    } else if !replace_paths.is_empty() {
                        self.check_prevent_destroy(res, &addr)?;
                        let create = plan_create(provider, &key.type_name, &schema, &marked)
                            .await
                            .map_err(|e| provider_failed(res, &addr, e))?;
                        (
                            Action::Replace {
                                create_before_destroy: res.lifecycle.create_before_destroy,
                            },
                            Some(state.value.clone()),
                            Some(create.planned_state),
                            replace_paths,
                        )
                    } else {
                        (
                            Action::Update,
                            Some(state.value.clone()),
                            Some(planned.planned_state),
                            Vec::new(),
                        )
                    }
                }
            };
            // A destroy plan still evaluates what refers to the object: as it is.
            let downstream = after
                .clone()
                .or_else(|| before.clone())
                .unwrap_or_else(|| Value::unknown(ty.clone()));
            if row.marks == Marks::Tags {
                for v in [before.as_ref(), after.as_ref()].into_iter().flatten() {
                    self.own(v);
                }
            }
            afters.push(downstream);
            let reason = match action {
                Action::Replace { .. } => Some(Reason::ReplaceBecauseCannotUpdate),
                _ => None,
            };
            self.changes.push(ResourceChange {
                addr: addr.clone(),
                previous_addr,
                provider: source.clone(),
                action,
                reason,
                before,
                after,
                schema: schema.clone(),
                replace_paths,
                deposed: None,
                importing: importing.clone(),
            });
            self.steps.insert(
                addr.clone(),
                Step {
                    addr: addr.clone(),
                    key: Some(key.clone()),
                    provider: pref.clone(),
                    type_name: key.type_name.clone(),
                    action,
                    id: prior.as_ref().map(|p| p.0.clone()),
                    prior: prior.map(|p| p.1),
                    schema: schema.clone(),
                    deposed: deposed.clone(),
                    importing,
                },
            );
            for d in deposed {
                self.changes.push(ResourceChange {
                    addr: addr.clone(),
                    previous_addr: None,
                    provider: source.clone(),
                    action: Action::Delete,
                    reason: None,
                    before: Some(d.state.value),
                    after: None,
                    schema: schema.clone(),
                    replace_paths: Vec::new(),
                    deposed: Some(d.entry.key),
                    importing: None,
                });
            }
        }
        let whole = match exp {
            Expansion::Unknown => Value::unknown(Type::Dynamic),
            _ => exp.assemble(afters),
        };
        self.values_mut().resources.insert(key.clone(), whole);
        Ok(())
    }

    /// The root outputs' changes against what the last apply left in the
    /// record store: new, changed (or unknown until apply), removed (every
    /// one, in a destroy plan), or unchanged.
    fn output_changes(&self) -> Result<Vec<OutputChange>, Diagnostics> {
        let before = match self.req.use_records {
            true => self.store.outputs().map_err(|e| {
                Diagnostics::from(Diagnostic::error("Unreadable record", e.to_string()))
            })?,
            false => BTreeMap::new(),
        };
        let now = &self.values.root().outputs;
        let mut out = Vec::new();
        for (name, after) in now.iter().filter(|_| !self.req.destroy) {
            let sensitive = root_output_sensitive(&self.req.tree.module, name, after);
            let prior = before.get(name);
            let action = match prior {
                None => Action::Create,
                Some(r)
                    if after.is_wholly_known()
                        && OutputRecord::of(after, sensitive).digest == r.digest =>
                {
                    Action::NoOp
                }
                Some(_) => Action::Update,
            };
            // Unchanged is what it was, which a sensitive record does not
            // keep.
            let before = match action {
                Action::NoOp => Some(after.clone()),
                _ => prior.map(OutputRecord::value),
            };
            out.push(OutputChange {
                name: name.clone(),
                action,
                before,
                after: Some(after.clone()),
                sensitive: sensitive || prior.is_some_and(|r| r.sensitive),
            });
        }
        for (name, r) in &before {
            if self.req.destroy || !now.contains_key(name) {
                out.push(OutputChange {
                    name: name.clone(),
                    action: Action::Delete,
                    before: Some(r.value()),
                    after: None,
                    sensitive: r.sensitive,
                });
            }
        }
        Ok(out)
    }

    /// The ID of the root's `import` block for `addr`, evaluated: `None`
    /// when no import block names it (import blocks live in the root
    /// module only).
    fn import_id(&self, addr: &ResourceInstanceAddr) -> Result<Option<String>, Diagnostics> {
        if !self.here.is_empty() {
            return Ok(None);
        }
        for import in &self.module().imports {
            let instances = match &import.for_each {
                None => vec![(None, Instance::default())],
                Some(_) => {
                    expansion(self.values(), None, import.for_each.as_ref(), false)?.instances()
                }
            };
            for (_, instance) in instances {
                if self.import_to(&import.to, &instance)?.as_ref() != Some(addr) {
                    continue;
                }
                let id = self.values().eval(&import.id, &instance)?;
                return match id.as_str() {
                    Some(s) if id.is_known() && !s.is_empty() => Ok(Some(s.to_string())),
                    _ => Err(Diagnostic::error(
                        "Invalid import id argument",
                        "The import block \"id\" argument must be a non-empty string known before apply, from literals, variables and locals.",
                    )
                    .at(import.range.clone())
                    .about(addr.to_string())
                    .into()),
                };
            }
        }
        Ok(None)
    }

    /// The instance an import block's `to` names, its index expressions
    /// (`aws_ssm_parameter.p[each.key]`) evaluated for one instance of the
    /// block's `for_each`.
    fn import_to(
        &self,
        to: &crate::config::Expr,
        instance: &Instance,
    ) -> Result<Option<ResourceInstanceAddr>, Diagnostics> {
        let Expression::Traversal(t) = &to.expr else {
            return Ok(expr_text(to).parse().ok());
        };
        let Expression::Variable(root) = &t.expr else {
            return Ok(None);
        };
        let mut text = root.as_str().to_string();
        for op in &t.operators {
            match op.value() {
                TraversalOperator::GetAttr(a) => {
                    text.push('.');
                    text.push_str(a.as_str());
                }
                TraversalOperator::LegacyIndex(n) => text.push_str(&format!("[{}]", n.value())),
                TraversalOperator::Index(e) => {
                    let key = crate::config::Expr {
                        expr: e.clone(),
                        file: to.file.clone(),
                    };
                    let v = self.values().eval(&key, instance)?;
                    match (v.as_str(), v.as_number().and_then(|n| n.to_i64())) {
                        (Some(s), _) => text.push_str(&format!("[{}]", serde_json::json!(s))),
                        (_, Some(n)) => text.push_str(&format!("[{n}]")),
                        _ => return Ok(None),
                    }
                }
                _ => return Ok(None),
            }
        }
        Ok(text.parse().ok())
    }

    /// Whether a `moved` block renames `old` to `new`: one of this module's
    /// (its addresses within each instance of it), or one of the root's.
    fn moved(&self, old: &ResourceInstanceAddr, new: &ResourceInstanceAddr) -> bool {
        moved_from(self.module(), &self.here, old, new)
            || (!self.here.is_empty() && moved_from(&self.req.tree.module, &[], old, new))
    }

    /// Whether `-target` reaches a block: no targets, a target in it, or a
    /// target that depends on it.
    fn targeted(&self, key: &ResourceKey) -> bool {
        self.needed.as_ref().is_none_or(|n| {
            n.contains(&TreeNode {
                module: call_names(&self.here),
                node: Node::Resource(key.clone()),
            })
        })
    }

    /// Whether `-target` reaches one instance: its block is a dependency of
    /// a target, or a target names the block or this instance.
    fn targets_instance(&self, addr: &ResourceInstanceAddr) -> bool {
        let t = &self.req.targets;
        if t.is_empty() {
            return true;
        }
        // A target's module step with no key names every instance of the
        // call, as in terraform.
        let calls = |steps: &[ModuleStep]| {
            steps.len() <= addr.module.len()
                && steps
                    .iter()
                    .zip(&addr.module)
                    .all(|(t, m)| t.name == m.name)
        };
        let instances = |steps: &[ModuleStep]| {
            calls(steps)
                && steps
                    .iter()
                    .zip(&addr.module)
                    .all(|(t, m)| t.key.is_none() || t.key == m.key)
        };
        // The targets naming this block (the block itself, or a module
        // call around it); reached when one of them names this instance.
        let mut named = false;
        for x in t {
            match x {
                Target::Resource(x)
                    if x.module.len() == addr.module.len()
                        && calls(&x.module)
                        && x.mode == addr.mode
                        && x.type_name == addr.type_name
                        && x.name == addr.name =>
                {
                    named = true;
                    if instances(&x.module) && (x.key.is_none() || x.key == addr.key) {
                        return true;
                    }
                }
                Target::Module(steps) if calls(steps) => {
                    named = true;
                    if instances(steps) {
                        return true;
                    }
                }
                _ => {}
            }
        }
        !named
    }

    /// Remembers the identifying values of an object this estate owns.
    fn own(&mut self, v: &Value) {
        for attr in ["id", "arn", "url", "name", "bucket"] {
            if let Some(s) = v.get(attr).and_then(Value::as_str) {
                self.owned.insert(s.to_string());
            }
        }
    }

    async fn check_owner(
        &self,
        provider: &mut GrpcProvider,
        res: &Resource,
        addr: &ResourceInstanceAddr,
        row: &Row,
        found: Ownership<'_>,
    ) -> Result<(), Diagnostics> {
        let estate = &self.req.settings.estate;
        let id = found.id;
        let refuse = |summary: &str, detail: String| -> Diagnostics {
            Diagnostic::error(summary, detail)
                .at(res.range.clone())
                .about(addr.to_string())
                .into()
        };
        match row.marks {
            Marks::Tags => match marker::owner(found.live) {
                Owner::Estate { estate: e, .. } if &e == estate => Ok(()),
                Owner::Estate { estate: other, .. } => Err(refuse(
                    "Object owned by another estate",
                    format!(
                        "{addr} would bind to the live object {id}, which carries the marker of estate \"{other}\". One estate never adopts, writes or destroys another estate's objects: give this block's object another name, or remove the block."
                    ),
                )),
                Owner::Nobody => Err(refuse(
                    "Object not owned by this estate",
                    format!(
                        "{addr} would bind to the live object {id}, which carries no {} marker: something outside estate \"{estate}\" made it. It is never adopted silently. To bring it into the estate, add an import block for it (to = {addr}, id = \"{id}\"), or run choudoufu migrate with a terraform state that holds it; otherwise give this block's object another name.",
                        marker::ESTATE_TAG
                    ),
                )),
            },
            Marks::Parent { attr, .. } => {
                let parent = found
                    .config
                    .get(attr)
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                // A part of this estate's object, or a part this estate's
                // own record names (a part of another estate's object).
                let recorded = found.record.is_some_and(|r| r.id.as_deref() == Some(id));
                if recorded || self.owned.contains(parent) {
                    return Ok(());
                }
                match parent_estate(provider, row, parent).await {
                    Ok(Some(other)) if &other != estate => Err(refuse(
                        "Object owned by another estate",
                        format!(
                            "{addr} would bind to the live object {id}, part of {parent} ({attr}), which carries the marker of estate \"{other}\". A part of another estate's object is this estate's only when this estate's record names it, and none does: it is never adopted or written silently. If this estate made it and lost its record, add an import block for it (to = {addr}, id = \"{id}\"); otherwise remove the block."
                        ),
                    )),
                    Ok(_) => Err(refuse(
                        "Object not owned by this estate",
                        format!(
                            "{addr} would bind to the live object {id}, but {} carries no marker and its parent {parent} ({attr}) is not an object of estate \"{estate}\". It is never adopted silently.",
                            res.key.type_name
                        ),
                    )),
                    Err(e) => Err(provider_failed(res, addr, e)),
                }
            }
        }
    }

    /// The strict profile's `marker_repair = "never"`: an object whose
    /// address marker names another address (other than by a moved block)
    /// is refused instead of re-marked.
    fn check_strict_markers(
        &self,
        res: &Resource,
        addr: &ResourceInstanceAddr,
        row: &Row,
        id: &str,
        live: &Value,
        moved: bool,
    ) -> Result<(), Diagnostics> {
        if !self.req.settings.strict.never_repair_markers || row.marks != Marks::Tags || moved {
            return Ok(());
        }
        let address = match marker::owner(live) {
            Owner::Estate { address, .. } => address,
            Owner::Nobody => return Ok(()),
        };
        if address.as_deref() == Some(addr.to_string().as_str()) {
            return Ok(());
        }
        Err(Diagnostic::error(
            "Strict profile: marker repair refused",
            format!(
                "{addr} binds the live object {id}, whose {} marker says {}. The strict profile (marker_repair = \"never\") does not rewrite markers: add a moved block if the block was renamed, or fix the marker by hand.",
                marker::ADDRESS_TAG,
                address.map_or("nothing".to_string(), |a| format!("\"{a}\""))
            ),
        )
        .at(res.range.clone())
        .about(addr.to_string())
        .into())
    }

    /// The strict profile's `secrets = "refuse"`: a block whose sensitive
    /// values would have to be kept in the record store is refused.
    fn check_strict_secrets(
        &self,
        res: &Resource,
        addr: &ResourceInstanceAddr,
        row: &Row,
        schema: &Schema,
        config: &Value,
    ) -> Result<(), Diagnostics> {
        if !self.req.settings.strict.refuse_secrets {
            return Ok(());
        }
        for name in row.config_only {
            let Some(v) = config.get(name).filter(|v| !v.is_null()) else {
                continue;
            };
            let declared = schema
                .block
                .attributes
                .get(*name)
                .is_some_and(|a| a.sensitive);
            if declared || v.sensitive || v.has_sensitive() {
                return Err(Diagnostic::error(
                    "Strict profile: secret refused",
                    format!("{addr} sets {name}, a sensitive value the provider cannot read back, so the record store would have to keep it. The strict profile (secrets = \"refuse\") stores no secrets."),
                )
                .at(res.range.clone())
                .about(addr.to_string())
                .into());
            }
        }
        Ok(())
    }

    /// The strict profile's `no_source_create = "refuse"`: no object is
    /// created that only the record store could find again.
    fn check_strict_create(
        &self,
        res: &Resource,
        addr: &ResourceInstanceAddr,
        row: &Row,
    ) -> Result<(), Diagnostics> {
        if !self.req.settings.strict.refuse_no_source_create
            || !matches!(row.locate, Locate::Record)
        {
            return Ok(());
        }
        Err(Diagnostic::error(
            "Strict profile: create refused",
            format!(
                "{addr} would create a {} object, which nothing in the live system or the configuration names: only the record store could find it again. The strict profile (no_source_create = \"refuse\") refuses such creates.",
                res.key.type_name
            ),
        )
        .at(res.range.clone())
        .about(addr.to_string())
        .into())
    }

    fn check_prevent_destroy(
        &self,
        res: &Resource,
        addr: &ResourceInstanceAddr,
    ) -> Result<(), Diagnostics> {
        if res.lifecycle.prevent_destroy {
            return Err(Diagnostic::error(
                "Instance cannot be destroyed",
                format!("Resource {addr} has lifecycle.prevent_destroy set, but the plan calls for this resource to be destroyed. To avoid this error and continue with the plan, either disable lifecycle.prevent_destroy or reduce the scope of the plan using the -target option."),
            )
            .at(res.range.clone())
            .into());
        }
        Ok(())
    }

    /// Finds every live object carrying the estate's marker (and every
    /// recorded object of a type that carries none) that no declared
    /// instance bound, and plans its destroy.
    async fn sweep(
        &mut self,
        sessions: &mut Sessions,
    ) -> Result<Vec<ResourceInstanceAddr>, Diagnostics> {
        let estate = self.req.settings.estate.clone();
        let declared: BTreeSet<String> = self.steps.keys().map(|a| a.to_string()).collect();
        let mut candidates: Vec<(String, &'static Row)> = Vec::new();
        // Types whose provider is configured: the sweep asks the same
        // provider the blocks use (the aws provider here).
        let aws = ProviderRef {
            name: "aws".into(),
            alias: None,
        };
        let uses_aws = sessions.schema("aws").is_some();
        if uses_aws {
            let provider = sessions.get(&aws).await?;
            for (arn, _) in self.tagged(provider).await.map_err(sweep_failed)? {
                if let Some(row) = identity::row_for_arn(arn) {
                    candidates.push((arn.clone(), row));
                }
            }
            for name in iam_roles(provider).await.map_err(sweep_failed)? {
                let row = identity::row("aws_iam_role").expect("roles have a row");
                candidates.push((name, row));
            }
        }
        let mut orphans = Vec::new();
        let mut seen = BTreeSet::new();
        for (handle, row) in candidates {
            if self.bound.contains(&handle) || !seen.insert(handle.clone()) {
                continue;
            }
            let provider = sessions.get(&aws).await?;
            let id = if row.type_name == "aws_iam_role" && !handle.starts_with("arn:") {
                Some(handle.clone())
            } else {
                id_from_arn(provider, row, &handle)
                    .await
                    .map_err(sweep_failed)?
            };
            let Some(id) = id else { continue };
            if self.bound.contains(&id) {
                continue;
            }
            let Some(state) = import_read(provider, row.type_name, &id)
                .await
                .map_err(sweep_failed)?
            else {
                continue;
            };
            let Owner::Estate { estate: e, address } = marker::owner(&state.value) else {
                continue;
            };
            if e != estate {
                continue;
            }
            if let Some(arn) = state.value.get("arn").and_then(Value::as_str) {
                if self.bound.contains(arn) {
                    continue;
                }
            }
            let addr = orphan_addr(row.type_name, address.as_deref(), &id, &declared);
            self.orphan(sessions, &aws, row, addr.clone(), id, state)
                .await?;
            orphans.push(addr);
        }
        // Types that carry no marker: their records name them.
        if self.req.use_records {
            let records = self.store.all().map_err(|e| {
                Diagnostics::from(Diagnostic::error("Unreadable record", e.to_string()))
            })?;
            for r in records {
                let Ok(addr) = r.address.parse::<ResourceInstanceAddr>() else {
                    continue;
                };
                if declared.contains(&r.address) || self.steps.contains_key(&addr) {
                    continue;
                }
                let Some(row) = identity::row(&r.type_name) else {
                    continue;
                };
                if row.marks == Marks::Tags {
                    continue;
                }
                let Some(id) = r.id.clone() else { continue };
                if self.bound.contains(&id) {
                    // Renamed: another address binds the object now.
                    self.stale_records.push(r.address.clone());
                    continue;
                }
                let provider = sessions.get(&aws).await?;
                let Some(state) = import_read(provider, row.type_name, &id)
                    .await
                    .map_err(sweep_failed)?
                else {
                    continue;
                };
                self.orphan(sessions, &aws, row, addr.clone(), id, state)
                    .await?;
                orphans.insert(0, addr);
            }
        }
        Ok(orphans)
    }

    async fn orphan(
        &mut self,
        sessions: &mut Sessions,
        pref: &ProviderRef,
        row: &Row,
        addr: ResourceInstanceAddr,
        id: String,
        state: ResourceState,
    ) -> Result<(), Diagnostics> {
        let schema = sessions
            .resource_schema(&pref.name, row.type_name)
            .ok_or_else(|| {
                Diagnostics::from(Diagnostic::error(
                    "Unsupported resource type",
                    row.type_name.to_string(),
                ))
            })?;
        let reason = match &addr.key {
            _ if !self.module_instance_declared(&addr.module) => Reason::DeleteBecauseNoModule,
            Some(InstanceKey::Int(_)) if self.declares(&addr) => Reason::DeleteBecauseCountIndex,
            Some(InstanceKey::Str(_)) if self.declares(&addr) => Reason::DeleteBecauseEachKey,
            _ => Reason::DeleteBecauseNoResourceConfig,
        };
        self.changes.push(ResourceChange {
            addr: addr.clone(),
            previous_addr: None,
            provider: sessions.source(&pref.name),
            action: Action::Delete,
            reason: Some(reason),
            before: Some(state.value.clone()),
            after: None,
            schema: schema.clone(),
            replace_paths: Vec::new(),
            deposed: None,
            importing: None,
        });
        self.steps.insert(
            addr.clone(),
            Step {
                addr,
                key: None,
                provider: pref.clone(),
                type_name: row.type_name.to_string(),
                action: Action::Delete,
                prior: Some(state),
                id: Some(id),
                schema,
                deposed: Vec::new(),
                importing: None,
            },
        );
        Ok(())
    }

    /// The estate's objects as the tagging API lists them, read once.
    async fn tagged(
        &mut self,
        provider: &mut GrpcProvider,
    ) -> Result<&[(String, Option<String>)], ProviderError> {
        if self.tagged.is_none() {
            self.tagged = Some(tagged(provider, &self.req.settings.estate).await?);
        }
        Ok(self.tagged.as_deref().unwrap_or_default())
    }

    /// Whether an object's markers make it this estate's, at `address`
    /// when one is given; an object of a type owned through its parent
    /// carries no marker of its own.
    fn is_ours(&self, row: &Row, object: &Value, address: Option<&str>) -> bool {
        match marker::owner(object) {
            Owner::Estate {
                estate,
                address: marked,
            } => {
                estate == self.req.settings.estate
                    && address.is_none_or(|want| marked.as_deref() == Some(want))
            }
            Owner::Nobody => row.marks != Marks::Tags,
        }
    }

    /// A declared instance whose identity finds no object, though it had
    /// one: its configuration changed what names it (a rename under
    /// create_before_destroy, say). Terraform would hold the old object in
    /// state at this address; here the record names it, or the address
    /// marker does, and it binds only if it carries this estate's marker
    /// for this very address (or, for a type owned through its parent, if
    /// its record says so). The provider's plan then says whether it must
    /// be replaced. `tried` is the ID the identity already looked for.
    async fn rebind(
        &mut self,
        provider: &mut GrpcProvider,
        row: &'static Row,
        addr: &ResourceInstanceAddr,
        record: Option<&Record>,
        tried: Option<&str>,
    ) -> Result<Option<(String, ResourceState)>, ProviderError> {
        let want = addr.to_string();
        let mut ids: Vec<String> = record.and_then(|r| r.id.clone()).into_iter().collect();
        if row.marks == Marks::Tags && !self.req.settings.estate.is_empty() {
            let marked: Vec<String> = self
                .tagged(provider)
                .await?
                .iter()
                .filter(|(arn, address)| {
                    address.as_deref() == Some(want.as_str())
                        && identity::row_for_arn(arn).is_some_and(|r| r.type_name == row.type_name)
                })
                .map(|(arn, _)| arn.clone())
                .collect();
            for arn in marked {
                if let Some(id) = id_from_arn(provider, row, &arn).await? {
                    ids.push(id);
                }
            }
        }
        for id in ids {
            if Some(id.as_str()) == tried || self.bound.contains(&id) {
                continue;
            }
            let Some(state) = import_read(provider, row.type_name, &id).await? else {
                continue;
            };
            if row.absent_if.is_some_and(|absent| absent(&state.value))
                || !self.is_ours(row, &state.value, Some(&want))
            {
                continue;
            }
            return Ok(Some((id, state)));
        }
        Ok(None)
    }

    /// The deposed objects an instance's record names that still exist:
    /// an apply stopped between a create_before_destroy replacement's
    /// create and its destroy.
    async fn deposed(
        &mut self,
        provider: &mut GrpcProvider,
        row: &'static Row,
        record: Option<&Record>,
    ) -> Result<Vec<DeposedObject>, ProviderError> {
        let mut out = Vec::new();
        for d in record.map(|r| r.deposed.as_slice()).unwrap_or_default() {
            let Some(state) = import_read(provider, row.type_name, &d.id).await? else {
                continue;
            };
            if !self.is_ours(row, &state.value, None) {
                continue;
            }
            self.bound.insert(d.id.clone());
            if let Some(arn) = state.value.get("arn").and_then(Value::as_str) {
                self.bound.insert(arn.to_string());
            }
            out.push(DeposedObject {
                entry: d.clone(),
                state,
            });
        }
        Ok(out)
    }

    /// Whether the block of `addr` (ignoring its key) is declared.
    fn declares(&self, addr: &ResourceInstanceAddr) -> bool {
        self.req
            .tree
            .at(&call_names(&addr.module))
            .is_some_and(|t| {
                t.module.resources.contains_key(&ResourceKey {
                    mode: addr.mode,
                    type_name: addr.type_name.clone(),
                    name: addr.name.clone(),
                })
            })
    }

    /// Whether the module instance `path` exists in this plan (the root
    /// always does).
    fn module_instance_declared(&self, path: &[ModuleStep]) -> bool {
        self.values.instances.contains_key(path)
    }
}

/// Configures every `provider` block of the module, evaluating the
/// variables and locals they refer to (for commands that read and write
/// objects without planning the whole module, such as `migrate`).
pub async fn configure_providers(
    module: &Module,
    vars: BTreeMap<String, Value>,
    sessions: &mut Sessions,
) -> Result<(), Diagnostics> {
    let (graph, diags) = Graph::build(module);
    if diags.has_errors() {
        return Err(diags);
    }
    let order = graph
        .order()
        .map_err(|cycles| Diagnostics(cycles.iter().map(|c| cycle_diagnostic(c)).collect()))?;
    let mut values = ModuleValues::new(vars, &module.dir, &module.dir);
    for node in &order {
        match node {
            Node::Local(name) => {
                let v = values.eval(&module.locals[name].expr, &Instance::default())?;
                values.locals.insert(name.clone(), v);
            }
            Node::Provider(p) => {
                let config = &module.providers[p];
                let Some(schema) = sessions.schema(&p.name).cloned() else {
                    continue;
                };
                let scope = values.scope_for(&config.config.references(), &Instance::default());
                let value = decode(&config.config, &schema.provider.block, &scope)?;
                sessions.configure(p, value).await?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// The blocks `-target` addresses need: the targets' blocks and everything
/// they depend on; `None` without targets.
fn needed_by_targets(graph: &TreeGraph, targets: &[Target]) -> Option<BTreeSet<TreeNode>> {
    if targets.is_empty() {
        return None;
    }
    let mut todo: Vec<TreeNode> = Vec::new();
    for t in targets {
        match t {
            Target::Resource(t) => todo.push(TreeNode {
                module: call_names(&t.module),
                node: Node::Resource(ResourceKey {
                    mode: t.mode,
                    type_name: t.type_name.clone(),
                    name: t.name.clone(),
                }),
            }),
            // Every resource block in the call and the calls within it.
            Target::Module(steps) => {
                let within = call_names(steps);
                todo.extend(
                    graph
                        .nodes()
                        .filter(|n| {
                            matches!(n.node, Node::Resource(_)) && n.module.starts_with(&within)
                        })
                        .cloned(),
                );
            }
        }
    }
    let mut seen = BTreeSet::new();
    let mut out = BTreeSet::new();
    while let Some(n) = todo.pop() {
        if !seen.insert(n.clone()) {
            continue;
        }
        if let Node::Resource(_) = &n.node {
            out.insert(n.clone());
        }
        todo.extend(graph.deps(&n).cloned());
    }
    Some(out)
}

/// Whether a `moved` block of `module` renames `old` to `new` (whole
/// resources or single instances), its addresses taken within the module
/// instance `within`.
fn moved_from(
    module: &Module,
    within: &[ModuleStep],
    old: &ResourceInstanceAddr,
    new: &ResourceInstanceAddr,
) -> bool {
    let text = expr_text;
    let strip = |a: &ResourceInstanceAddr| ResourceInstanceAddr {
        key: None,
        ..a.clone()
    };
    module.moved.iter().any(|m| {
        let (Ok(from), Ok(to)) = (
            text(&m.from).parse::<ResourceInstanceAddr>(),
            text(&m.to).parse::<ResourceInstanceAddr>(),
        ) else {
            return false;
        };
        let inside = |a: ResourceInstanceAddr| ResourceInstanceAddr {
            module: within.iter().cloned().chain(a.module).collect(),
            ..a
        };
        let (from, to) = (inside(from), inside(to));
        (from == *old && to == *new)
            || (from.key.is_none()
                && to.key.is_none()
                && from == strip(old)
                && to == strip(new)
                && old.key == new.key)
    })
}

/// An expression as its source spells it: an address in a `moved` or
/// `import` block.
fn expr_text(e: &crate::config::Expr) -> String {
    let span = crate::config::span_of(&e.expr);
    e.file
        .text()
        .get(span)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The address of an instance of a block of the module instance `module`.
pub fn instance_addr(
    module: &[ModuleStep],
    key: &ResourceKey,
    inst: Option<InstanceKey>,
) -> ResourceInstanceAddr {
    ResourceInstanceAddr {
        module: module.to_vec(),
        mode: key.mode,
        type_name: key.type_name.clone(),
        name: key.name.clone(),
        key: inst,
    }
}

/// The call names of a module instance path (`module.app["a"]` is `app`).
pub fn call_names(path: &[ModuleStep]) -> Vec<String> {
    path.iter().map(|s| s.name.clone()).collect()
}

/// The module of a module instance of `tree`.
pub fn tree_of<'t>(tree: &'t Tree, instance: &[ModuleStep]) -> &'t Tree {
    tree.at(&call_names(instance))
        .expect("module instances are of modules of the tree")
}

/// A swept object's address: its address marker when that names an
/// instance of its type that nothing declares now, else a synthetic
/// `<type>.orphan_<name>`.
fn orphan_addr(
    type_name: &str,
    marker: Option<&str>,
    id: &str,
    declared: &BTreeSet<String>,
) -> ResourceInstanceAddr {
    if let Some(a) = marker.and_then(|m| m.parse::<ResourceInstanceAddr>().ok()) {
        if a.type_name == type_name && a.mode == Mode::Managed && !declared.contains(&a.to_string())
        {
            return a;
        }
    }
    let tail = id.rsplit(['/', ':']).find(|s| !s.is_empty()).unwrap_or(id);
    let name: String = tail
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    ResourceInstanceAddr::managed(type_name, &format!("orphan_{name}"))
}

/// Plans a create from nothing.
async fn plan_create(
    provider: &mut GrpcProvider,
    type_name: &str,
    schema: &Schema,
    config: &Value,
) -> Result<PlannedChange, ProviderError> {
    let ty = schema.block.implied_type().without_optional();
    let null = ResourceState {
        value: Value::null(ty.clone()),
        private: Vec::new(),
    };
    let proposed = proposed_new(&schema.block, &null.value, config);
    provider
        .plan_resource_change(type_name, &null, &proposed, config)
        .await
}

/// Finds a declared instance's live object: its import ID from the
/// configuration (or a lookup, or the record), then import and read.
/// Returns the ID looked for (`None` while it is not yet known) and the
/// object (`None` when there is no such object).
pub async fn bind(
    provider: &mut GrpcProvider,
    row: &Row,
    type_name: &str,
    config: &Value,
    record: Option<&Record>,
) -> Result<(Option<String>, Option<ResourceState>), ProviderError> {
    let text = |attr: &str| {
        config
            .get(attr)
            .filter(|v| v.is_known())
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let id = match row.locate {
        Locate::Attr(a) => text(a),
        Locate::Joined(attrs, sep) => attrs
            .iter()
            .map(|a| text(a))
            .collect::<Option<Vec<_>>>()
            .map(|p| p.join(sep)),
        Locate::Lookup {
            data_source,
            args,
            id,
        } => {
            let mut given = Vec::new();
            for (arg, attr) in args {
                match config.get(attr) {
                    Some(v) if v.is_known() && !v.is_null() => given.push((*arg, v.clone())),
                    _ => return Ok((None, None)),
                }
            }
            lookup(provider, data_source, &given, id).await?
        }
        Locate::Record => record.and_then(|r| r.id.clone()),
        Locate::Template(t) => expand_template(provider, t, config).await?,
    };
    let Some(id) = id else {
        return Ok((None, None));
    };
    let found = import_read(provider, type_name, &id)
        .await?
        .filter(|s| !row.absent_if.is_some_and(|absent| absent(&s.value)));
    Ok((Some(id), found))
}

/// Fills an ID template from configuration and the provider's account
/// and region; `None` while an attribute is unknown.
async fn expand_template(
    provider: &mut GrpcProvider,
    template: &str,
    config: &Value,
) -> Result<Option<String>, ProviderError> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c);
        let name = &rest[open + 1..close];
        let value = match name {
            "account" => fact(provider, "aws_caller_identity", "account_id").await?,
            "region" => fact(provider, "aws_region", "name").await?,
            "path" => match config.get("path") {
                Some(v) if !v.is_known() => None,
                Some(v) => Some(v.as_str().unwrap_or("/").to_string()),
                None => Some("/".to_string()),
            },
            attr => config
                .get(attr)
                .filter(|v| v.is_known())
                .and_then(Value::as_str)
                .map(str::to_string),
        };
        let Some(value) = value else { return Ok(None) };
        out.push_str(&value);
        rest = &rest[(close + 1).min(rest.len())..];
    }
    out.push_str(rest);
    Ok(Some(out))
}

/// One attribute of an argument-less data source (the account, the region).
async fn fact(
    provider: &mut GrpcProvider,
    data_source: &str,
    attr: &str,
) -> Result<Option<String>, ProviderError> {
    let Some(schema) = provider
        .cached_schema()
        .and_then(|s| s.data_sources.get(data_source).cloned())
    else {
        return Ok(None);
    };
    let v = provider
        .read_data_source(data_source, &schema.block.value_with(BTreeMap::new()))
        .await?;
    Ok(v.get(attr).and_then(Value::as_str).map(str::to_string))
}

/// Import then read; `None` when the object does not exist.
pub async fn import_read(
    provider: &mut GrpcProvider,
    type_name: &str,
    id: &str,
) -> Result<Option<ResourceState>, ProviderError> {
    let imported = match provider.import_resource_state(type_name, id).await {
        Ok(i) => i,
        Err(e) if is_not_found(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    let Some(first) = imported.into_iter().find(|i| i.type_name == type_name) else {
        return Ok(None);
    };
    match provider.read_resource(type_name, &first.state).await {
        Ok(s) => Ok(s),
        Err(e) if is_not_found(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Reads a lookup data source; `None` when it finds nothing.
async fn lookup(
    provider: &mut GrpcProvider,
    data_source: &str,
    args: &[(&str, Value)],
    id: &str,
) -> Result<Option<String>, ProviderError> {
    let Some(schema) = provider
        .cached_schema()
        .and_then(|s| s.data_sources.get(data_source).cloned())
    else {
        return Ok(None);
    };
    let given = args
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let config = schema.block.value_with(given);
    match provider.read_data_source(data_source, &config).await {
        Ok(v) => Ok(v.get(id).and_then(Value::as_str).map(str::to_string)),
        Err(e) if is_not_found(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The ARN of every object the tagging API lists with the estate's marker.
async fn tagged(
    provider: &mut GrpcProvider,
    estate: &str,
) -> Result<Vec<(String, Option<String>)>, ProviderError> {
    const DS: &str = "aws_resourcegroupstaggingapi_resources";
    let Some(schema) = provider
        .cached_schema()
        .and_then(|s| s.data_sources.get(DS).cloned())
    else {
        return Ok(Vec::new());
    };
    let filter_block = &schema.block.block_types["tag_filter"].block;
    let filter = filter_block.value_with(BTreeMap::from([
        ("key".to_string(), Value::string(marker::ESTATE_TAG)),
        (
            "values".to_string(),
            Value::set(Type::String, vec![Value::string(estate)]),
        ),
    ]));
    let config = crate::value::convert::convert(
        schema.block.value_with(BTreeMap::from([(
            "tag_filter".to_string(),
            Value::tuple(vec![filter]),
        )])),
        &schema.block.implied_type(),
    )
    .map_err(|e| ProviderError::Encode {
        binary: provider.binary().into(),
        method: "ReadDataSource",
        reason: e.message,
    })?;
    let v = provider.read_data_source(DS, &config).await?;
    let mut out = Vec::new();
    for m in v
        .get("resource_tag_mapping_list")
        .and_then(Value::elements)
        .unwrap_or_default()
    {
        if let Some(arn) = m.get("resource_arn").and_then(Value::as_str) {
            let address = m
                .get("tags")
                .and_then(|t| t.get(marker::ADDRESS_TAG))
                .and_then(Value::as_str)
                .map(str::to_string);
            out.push((arn.to_string(), address));
        }
    }
    Ok(out)
}

/// The import ID of the object an ARN names.
async fn id_from_arn(
    provider: &mut GrpcProvider,
    row: &Row,
    arn: &str,
) -> Result<Option<String>, ProviderError> {
    Ok(match row.from_arn {
        Some(FromArn::Arn) => Some(arn.to_string()),
        Some(FromArn::Name(_)) => Some(identity::name_in_arn(row, arn)),
        Some(FromArn::Lookup {
            data_source,
            arg,
            id,
        }) => {
            let name = identity::name_in_arn(row, arn);
            lookup(provider, data_source, &[(arg, Value::string(name))], id).await?
        }
        None => None,
    })
}

/// A tag written by a block of its own (`aws_dynamodb_tag`) never sets a
/// marker: that would hand the object to an estate, or take it from one.
fn check_marker_key(
    res: &Resource,
    addr: &ResourceInstanceAddr,
    row: &Row,
    config: &Value,
) -> Result<(), Diagnostics> {
    let key = config.get("key").and_then(Value::as_str);
    match (row.marks, key) {
        (Marks::Parent { .. }, Some(k)) if k == marker::ESTATE_TAG || k == marker::ADDRESS_TAG => {
            Err(Diagnostic::error(
                "Marker tag written by a block",
                format!(
                    "{addr} writes the tag \"{k}\", which is an estate's marker: only the engine writes markers, in the call that creates the object. Give the tag another key."
                ),
            )
            .at(res.range.clone())
            .about(addr.to_string())
            .into())
        }
        _ => Ok(()),
    }
}

/// A bound object as its ownership is judged: its ID, its live value, the
/// block's configuration and this estate's record of the instance.
struct Ownership<'a> {
    id: &'a str,
    live: &'a Value,
    config: &'a Value,
    record: Option<&'a Record>,
}

/// The estate whose marker the parent of a part carries, named by the
/// part's `handle` (a bucket's name, a queue's URL, a table's ARN).
async fn parent_estate(
    provider: &mut GrpcProvider,
    row: &Row,
    handle: &str,
) -> Result<Option<String>, ProviderError> {
    let Marks::Parent { of, .. } = row.marks else {
        return Ok(None);
    };
    let Some(parent) = identity::row(of) else {
        return Ok(None);
    };
    let id = if handle.starts_with("arn:") {
        id_from_arn(provider, parent, handle).await?
    } else {
        Some(handle.to_string())
    };
    let Some(id) = id.filter(|i| !i.is_empty()) else {
        return Ok(None);
    };
    Ok(import_read(provider, of, &id)
        .await?
        .and_then(|s| match marker::owner(&s.value) {
            Owner::Estate { estate, .. } => Some(estate),
            Owner::Nobody => None,
        }))
}

/// Every IAM role's name (the tagging API does not list IAM roles).
async fn iam_roles(provider: &mut GrpcProvider) -> Result<Vec<String>, ProviderError> {
    const DS: &str = "aws_iam_roles";
    let Some(schema) = provider
        .cached_schema()
        .and_then(|s| s.data_sources.get(DS).cloned())
    else {
        return Ok(Vec::new());
    };
    let v = provider
        .read_data_source(DS, &schema.block.value_with(BTreeMap::new()))
        .await?;
    Ok(v.get("names")
        .and_then(Value::elements)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|n| n.as_str().map(str::to_string))
        .collect())
}

/// Whether a provider error says the object is not there.
fn is_not_found(e: &ProviderError) -> bool {
    let ProviderError::Diagnostics { diagnostics, .. } = e else {
        return false;
    };
    diagnostics.iter().any(|d| {
        let text = format!("{} {}", d.summary, d.detail).to_lowercase();
        [
            "not found",
            "notfound",
            "does not exist",
            "nosuch",
            "non-existent",
            "couldn't find",
            "no matching",
            "empty result",
            "doesnotexist",
        ]
        .iter()
        .any(|p| text.contains(p))
    })
}

/// Terraform's ignore_changes: the ignored arguments keep their live
/// values in the configuration the provider plans with.
pub fn ignore_changes(res: &Resource, config: Value, prior: Option<&Value>) -> Value {
    let Some(prior) = prior else { return config };
    let paths: Vec<Vec<String>> = match &res.lifecycle.ignore_changes {
        IgnoreChanges::None => return config,
        IgnoreChanges::All => {
            return prior.clone();
        }
        IgnoreChanges::Paths(p) => p.iter().filter_map(|e| ignore_path(&e.expr)).collect(),
    };
    let sensitive = config.sensitive;
    let Kind::Object(mut attrs) = config.kind else {
        return config;
    };
    for path in paths {
        let Some(live) = prior.get(&path[0]) else {
            continue;
        };
        match path.as_slice() {
            [attr] => {
                attrs.insert(attr.clone(), live.clone());
            }
            [attr, key] => {
                if let Some(Value {
                    kind: Kind::Map(t, m),
                    sensitive: s,
                }) = attrs.get(attr).cloned()
                {
                    let mut m = m;
                    match live.get(key) {
                        Some(v) => m.insert(key.clone(), v.clone()),
                        None => m.remove(key),
                    };
                    attrs.insert(attr.clone(), Value::map(t, m).with_sensitive(s));
                }
            }
            _ => {}
        }
    }
    Value::object(attrs).with_sensitive(sensitive)
}

/// Where the configuration writes a JSON document the live object holds
/// in an equivalent form (other whitespace, other key order), the live
/// form is kept: providers keep the prior form of an equivalent policy,
/// and with no state file the prior form is the live one.
pub fn keep_live_json(config: Value, live: Option<&Value>) -> Value {
    let Some(live) = live else { return config };
    let sensitive = config.sensitive;
    let Kind::Object(mut attrs) = config.kind else {
        return config;
    };
    for (name, v) in attrs.iter_mut() {
        let (Some(want), Some(have)) = (v.as_str(), live.get(name).and_then(Value::as_str)) else {
            continue;
        };
        if want == have || !want.trim_start().starts_with(['{', '[']) {
            continue;
        }
        let parse = |s: &str| serde_json::from_str::<serde_json::Value>(s).ok();
        if let (Some(a), Some(b)) = (parse(want), parse(have)) {
            if a == b {
                *v = Value::string(have).with_sensitive(v.sensitive);
            }
        }
    }
    Value::object(attrs).with_sensitive(sensitive)
}

/// An ignore_changes entry as a path: `redrive_policy`, `tags["Name"]`,
/// `tags.Name`.
fn ignore_path(e: &hcl_edit::expr::Expression) -> Option<Vec<String>> {
    use hcl_edit::expr::{Expression, TraversalOperator};
    match e {
        Expression::Variable(v) => Some(vec![v.as_str().to_string()]),
        Expression::Traversal(t) => {
            let mut out = ignore_path(&t.expr)?;
            for op in &t.operators {
                match op.value() {
                    TraversalOperator::GetAttr(a) => out.push(a.as_str().to_string()),
                    TraversalOperator::Index(Expression::String(s)) => {
                        out.push(s.value().to_string())
                    }
                    _ => return None,
                }
            }
            Some(out)
        }
        Expression::String(s) => Some(vec![s.value().to_string()]),
        _ => None,
    }
}

/// Fills in the arguments the provider cannot read back. The live system
/// cannot disagree with them, so they take the configured value, else the
/// recorded one; one left null takes the provider's planned default later.
fn patch_config_only(
    live: &mut Value,
    config: &Value,
    record: Option<&Record>,
    row: &Row,
    schema: &Schema,
) {
    let Kind::Object(attrs) = &mut live.kind else {
        return;
    };
    for name in row.config_only {
        let configured = config
            .get(name)
            .filter(|v| !v.is_null() && v.is_known())
            .cloned();
        let recorded = record
            .and_then(|r| r.config_only.get(*name))
            .zip(schema.block.attributes.get(*name))
            .and_then(|(j, a)| record::from_json(j, &a.ty));
        if let Some(v) = configured.or(recorded) {
            attrs.insert(name.to_string(), v);
        }
    }
}

/// Config-only arguments still null in the live value take the planned
/// value (the provider's default), so leaving them unset is no change.
fn default_config_only(live: &mut Value, planned: &Value, row: &Row) {
    let Kind::Object(attrs) = &mut live.kind else {
        return;
    };
    for name in row.config_only {
        if attrs.get(*name).is_some_and(Value::is_null) {
            if let Some(p) = planned.get(name) {
                attrs.insert(name.to_string(), p.clone());
            }
        }
    }
}

/// The paths among those the provider says force a replacement whose value
/// actually changes from `prior` to `planned`, or is not yet known: as
/// terraform does, so an SDK provider's `id` (listed whenever anything forces
/// a replacement) is not itself blamed, and a listed path that does not
/// change (or reaches nothing on either side) plans an update.
fn forcing(prior: &Value, planned: &Value, paths: &[AttributePath]) -> Vec<AttributePath> {
    paths
        .iter()
        .filter(|path| {
            let before = at_path(prior, path);
            let after = at_path(planned, path);
            match (before, after) {
                (None, None) => false,
                (Some(v), None) | (None, Some(v)) => !v.is_null() || !v.is_known(),
                (Some(b), Some(a)) => {
                    crate::eval::expr::equals(&b.clone().unmark_deep(), &a.clone().unmark_deep())
                        != Some(true)
                }
            }
        })
        .cloned()
        .collect()
}

/// The value `path` reaches in `v`, if every step finds something.
fn at_path<'a>(v: &'a Value, path: &AttributePath) -> Option<&'a Value> {
    path.0.iter().try_fold(v, |v, step| match (step, &v.kind) {
        (PathStep::Attribute(k) | PathStep::Key(k), _) => v.get(k),
        (PathStep::Index(i), Kind::List(_, e) | Kind::Tuple(e)) => {
            usize::try_from(*i).ok().and_then(|i| e.get(i))
        }
        _ => None,
    })
}

/// Whether two objects are the same (sets compared as sets).
pub fn same(a: &Value, b: &Value) -> bool {
    match (&a.kind, &b.kind) {
        (Kind::Set(_, x), Kind::Set(_, y)) => {
            x.len() == y.len() && x.iter().all(|e| y.iter().any(|f| same(e, f)))
        }
        (Kind::List(_, x), Kind::List(_, y)) | (Kind::Tuple(x), Kind::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(e, f)| same(e, f))
        }
        (Kind::Map(_, x), Kind::Map(_, y)) | (Kind::Object(x), Kind::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, e)| y.get(k).is_some_and(|f| same(e, f)))
        }
        (Kind::String(x), Kind::String(y)) if x != y => equivalent_json(x, y),
        _ => crate::eval::expr::equals(a, b) == Some(true),
    }
}

/// Whether two strings are the same JSON document in different forms.
fn equivalent_json(a: &str, b: &str) -> bool {
    if !a.trim_start().starts_with(['{', '[']) {
        return false;
    }
    let parse = |s: &str| serde_json::from_str::<serde_json::Value>(s).ok();
    matches!((parse(a), parse(b)), (Some(x), Some(y)) if x == y)
}

fn no_identity_row(res: &Resource) -> Diagnostics {
    let supported: Vec<&str> = identity::supported().collect();
    Diagnostic::error(
        "Resource type without an identity row",
        format!(
            "{} has no identity row: this engine cannot find its live object from configuration alone, so it refuses to plan it rather than guess. Supported types: {}.",
            res.key.type_name,
            supported.join(", ")
        ),
    )
    .at(res.range.clone())
    .into()
}

fn unsupported_type(res: &Resource, what: &str) -> Diagnostics {
    Diagnostic::error(
        "Invalid resource type",
        format!(
            "The provider does not support {what} \"{}\".",
            res.key.type_name
        ),
    )
    .at(res.range.clone())
    .into()
}

fn provider_failed(res: &Resource, addr: &ResourceInstanceAddr, e: ProviderError) -> Diagnostics {
    let mut out = Diagnostics::default();
    match e {
        ProviderError::Diagnostics { diagnostics, .. } => {
            for d in diagnostics {
                out.push(
                    Diagnostic::error(d.summary, d.detail)
                        .at(res.range.clone())
                        .about(addr.to_string()),
                );
            }
        }
        other => out.push(
            Diagnostic::error("Provider error", other.to_string())
                .at(res.range.clone())
                .about(addr.to_string()),
        ),
    }
    out
}

fn sweep_failed(e: ProviderError) -> Diagnostics {
    Diagnostic::error(
        "The sweep could not list the estate's objects",
        format!("Listing what carries the estate's marker failed, so no plan is made (a plan without the sweep could miss objects to destroy): {e}"),
    )
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_whose_value_changes_or_is_unknown_force_a_replacement() {
        let obj = |id: Value, name: &str| {
            Value::object(BTreeMap::from([
                ("id".to_string(), id),
                ("name".to_string(), Value::string(name)),
                (
                    "tags".to_string(),
                    Value::map(
                        Type::String,
                        BTreeMap::from([("k".into(), Value::string("v"))]),
                    ),
                ),
            ]))
        };
        let path = |steps: &[PathStep]| AttributePath(steps.to_vec());
        let id = path(&[PathStep::Attribute("id".into())]);
        let name = path(&[PathStep::Attribute("name".into())]);
        let tag = path(&[
            PathStep::Attribute("tags".into()),
            PathStep::Key("k".into()),
        ]);
        let gone = path(&[
            PathStep::Attribute("tags".into()),
            PathStep::Key("x".into()),
        ]);
        let prior = obj(Value::string("q"), "a");
        // The SDK lists `id` beside `name`; only `name` changes.
        let renamed = obj(Value::string("q"), "b");
        let all = [id.clone(), name.clone(), tag.clone(), gone.clone()];
        assert_eq!(forcing(&prior, &renamed, &all), vec![name.clone()]);
        // Nothing listed changes: an update, not a replacement.
        assert!(forcing(&prior, &prior, &all).is_empty());
        // A value not known until apply may change: it forces.
        let unknown = obj(Value::unknown(Type::String), "a");
        assert_eq!(forcing(&prior, &unknown, &all), vec![id]);
    }

    #[test]
    fn a_moved_block_in_a_module_renames_within_each_instance_of_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("main.tf"),
            "moved {\n  from = aws_sqs_queue.old\n  to   = aws_sqs_queue.new\n}\n",
        )
        .unwrap();
        let (module, d) = crate::config::load(dir.path());
        assert!(!d.has_errors(), "{d}");
        let addr = |s: &str| s.parse::<ResourceInstanceAddr>().unwrap();
        let within = addr("module.app[\"a\"].aws_sqs_queue.x").module;
        assert!(moved_from(
            &module,
            &within,
            &addr("module.app[\"a\"].aws_sqs_queue.old"),
            &addr("module.app[\"a\"].aws_sqs_queue.new"),
        ));
        assert!(!moved_from(
            &module,
            &within,
            &addr("module.app[\"b\"].aws_sqs_queue.old"),
            &addr("module.app[\"a\"].aws_sqs_queue.new"),
        ));
        assert!(!moved_from(
            &module,
            &within,
            &addr("aws_sqs_queue.old"),
            &addr("aws_sqs_queue.new"),
        ));
        assert!(moved_from(
            &module,
            &[],
            &addr("aws_sqs_queue.old[1]"),
            &addr("aws_sqs_queue.new[1]"),
        ));
    }

    #[test]
    fn a_swept_object_keeps_its_module_address() {
        let declared = BTreeSet::from(["module.app[\"a\"].aws_sqs_queue.q".to_string()]);
        let swept = orphan_addr(
            "aws_sqs_queue",
            Some("module.app[\"b\"].aws_sqs_queue.q"),
            "https://sqs/123/q-b",
            &declared,
        );
        assert_eq!(swept.to_string(), "module.app[\"b\"].aws_sqs_queue.q");
        assert_eq!(crate::addr::module_text(&swept.module), "module.app[\"b\"]");
    }
}
