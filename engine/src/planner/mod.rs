//! The stateless planner: the live system is the prior state.
//!
//! Blocks are evaluated in dependency order, each once per instance of its
//! module (a call's `count` or `for_each`), so every address carries its
//! module path (`module.app["a"].aws_sqs_queue.q`). A managed block's
//! instances go through [`managed`]'s steps: bind, claim ownership, decide
//! the action, record the change. The sweep then plans the destroy of what
//! carries the estate's marker and no instance bound ([`orphans`]).
//!
//! - [`targets`]: what `-target` reaches;
//! - [`checks`]: ownership, the strict profile, `prevent_destroy`;
//! - [`moves`]: `moved` and `import` blocks;
//! - [`assertions`]: `check` blocks and `provider_meta`.
//!
//! The planner reads and never writes: binding lives in `bind`, the
//! proposed-value rules in `plan::objchange`, the changes in `apply`.

mod assertions;
mod checks;
mod managed;
mod moves;
mod orphans;
mod targets;

use crate::addr::{ModuleStep, ResourceInstanceAddr};
use crate::bind::aws::Lane;
use crate::config::tree::Tree;
use crate::config::{Module, ProviderRef, Resource};
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::body::decode;
use crate::eval::funcs::Phase;
use crate::eval::module::{expansion, root_output_sensitive, Instance, ModuleValues, TreeValues};
use crate::graph::{cycle_diagnostic, Graph, Node, TreeGraph, TreeNode};
use crate::plan::step::Entries;
pub use crate::plan::step::{DeposedObject, Planned, Request, Step};
use crate::plan::{Action, OutputChange, Plan};
use crate::provider::{Provider, ProviderError};
use crate::record::{OutputRecord, RecordStore};
use crate::session::{Launcher, Sessions};
use crate::value::{Type, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// How many live reads a plan makes at once (terraform refreshes ten
/// instances at a time by default).
const READS_IN_FLIGHT: usize = 10;

/// Plans `req` against the live system.
pub async fn plan<L: Launcher>(
    req: &Request<'_>,
    sessions: &mut Sessions<L>,
    store: &RecordStore,
) -> Result<Planned, Diagnostics> {
    let module = &req.tree.module;
    let mut refused = req.tree.check_removed();
    refused.extend(assertions::provider_metas(req.tree, sessions));
    if refused.has_errors() {
        return Err(refused);
    }
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
        bound: crate::bind::Held::default(),
        entries: Entries::default(),
        diags: Diagnostics::default(),
        stale_records: Vec::new(),
        needed: targets::needed(&graph, &req.targets),
        lanes: BTreeMap::new(),
        by_record: Vec::new(),
        uncatalogued: Vec::new(),
        unbound: Vec::new(),
        failed_checks: BTreeSet::new(),
        reads: Vec::new(),
    };
    // As terraform does, a node that fails stops only what depends on it:
    // every other node is still planned, so one plan reports every error
    // (each refused object, say), not the first.
    let mut failed: BTreeSet<&TreeNode> = BTreeSet::new();
    for tn in &order {
        if graph.deps(tn).any(|d| failed.contains(d)) {
            failed.insert(tn);
            continue;
        }
        // Each instance of the block's module (known once its call is).
        for instance in p.values.instances_of(&tn.module) {
            p.here = instance;
            if let Err(d) = p.node(&tn.node, sessions).await {
                p.diags.extend(d);
                failed.insert(tn);
                break;
            }
        }
    }
    p.here = Vec::new();
    if p.diags.has_errors() {
        return Err(p.diags);
    }
    p.check_blocks();
    // A refresh-only plan destroys nothing, so it sweeps nothing.
    let orphans = if req.refresh_only {
        Vec::new()
    } else if req.targets.is_empty() {
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
    p.say_how_found();
    p.replace_unmatched();
    let forgotten: Vec<String> = p
        .entries
        .changes
        .iter()
        .filter(|c| c.action == Action::Forget)
        .map(|c| format!(" - {}", c.addr))
        .collect();
    if !forgotten.is_empty() {
        p.diags.push(Diagnostic::warning(
            "Some objects will no longer be managed by Terraform",
            format!("If you apply this plan, Terraform will discard its tracking information for the following objects, but it will not delete them:\n{}\n\nAfter applying this plan, Terraform will no longer manage these objects. You will need to import them into Terraform to manage them again.", forgotten.join("\n")),
        ));
    }
    let mut entries = std::mem::take(&mut p.entries);
    entries.changes.sort_by(|a, b| a.addr.cmp(&b.addr));
    // A targeted plan leaves the outputs as they were, and apply keeps them.
    let outputs = match req.targets.is_empty() {
        true => p.output_changes()?,
        false => Vec::new(),
    };
    Ok(Planned {
        plan: Plan {
            changes: entries.changes,
            outputs,
            destroy: req.destroy,
            refresh_only: req.refresh_only,
            reads: std::mem::take(&mut p.reads),
        },
        steps: entries.steps,
        order,
        graph,
        orphans,
        warnings: p.diags,
        stale_records: p.stale_records,
    })
}

/// `-replace` without an instance key, on a block with `count` or
/// `for_each`: terraform's warning naming the instances it could mean.
impl<P> Planner<'_, '_, P> {
    fn replace_unmatched(&mut self) {
        for wanted in self.req.replace.iter().filter(|r| r.key.is_none()) {
            let mut keyed: Vec<&crate::addr::ResourceInstanceAddr> = self
                .entries
                .changes
                .iter()
                .map(|c| &c.addr)
                .filter(|a| {
                    a.key.is_some()
                        && a.module == wanted.module
                        && a.mode == wanted.mode
                        && a.type_name == wanted.type_name
                        && a.name == wanted.name
                })
                .collect();
            if keyed.is_empty() {
                continue;
            }
            keyed.sort();
            let options: Vec<String> = keyed
                .iter()
                .map(|a| format!("  -replace=\"{a}\""))
                .collect();
            self.diags.push(Diagnostic::warning(
                "Incompletely-matched force-replace resource instance",
                format!(
                    "Your force-replace request for {wanted} doesn't match any resource instances because it lacks an instance key.\n\nTo force replacement of particular instances, use one or more of the following options instead:\n{}",
                    options.join("\n")
                ),
            ));
        }
    }
}

struct Planner<'a, 'r, P> {
    req: &'a Request<'r>,
    store: &'a RecordStore,
    /// Every module instance's values.
    values: TreeValues,
    /// The module instance whose block is being planned.
    here: Vec<ModuleStep>,
    /// Values that name objects this estate owns (IDs, ARNs, URLs,
    /// names), for its parts to be recognised by.
    owned: BTreeSet<String>,
    /// Import IDs and ARNs of every object a declared instance bound.
    bound: crate::bind::Held,
    entries: Entries,
    diags: Diagnostics,
    /// Records left at an old address by a rename.
    stale_records: Vec<String>,
    /// With `-target`: the blocks the targets need, themselves included.
    needed: Option<BTreeSet<TreeNode>>,
    /// Each provider configuration's view of the live system.
    lanes: BTreeMap<ProviderRef, Rc<Lane<P>>>,
    /// Instances only their records find, for the plan to say so.
    by_record: Vec<ResourceInstanceAddr>,
    /// Instances of types outside the catalogue, and how each was found.
    uncatalogued: Vec<(ResourceInstanceAddr, Option<crate::bind::locate::Via>)>,
    /// Instances of types outside the catalogue whose marked objects (by
    /// ARN) no ID read back.
    unbound: Vec<(ResourceInstanceAddr, Vec<String>)>,
    /// The checks (module instance and name) whose data source could not
    /// be read.
    failed_checks: BTreeSet<(Vec<ModuleStep>, String)>,
    /// The data sources read, for the plan to say so.
    reads: Vec<crate::plan::DataRead>,
}

impl<'r, P> Planner<'_, 'r, P> {
    /// The module of the instance being planned.
    fn tree(&self) -> &'r Tree {
        self.req.tree.of_instance(&self.here)
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
            .provider_for(&crate::addr::call_names(&self.here), res.provider_ref())
    }
}

impl<P: Provider + Clone> Planner<'_, '_, P> {
    /// The lane of a provider configuration, opened once.
    async fn lane<L: Launcher<Provider = P>>(
        &mut self,
        sessions: &mut Sessions<L>,
        pref: &ProviderRef,
    ) -> Result<Rc<Lane<P>>, Diagnostics> {
        if let Some(l) = self.lanes.get(pref) {
            return Ok(l.clone());
        }
        let source = sessions.source(&pref.name);
        let provider = sessions.get(pref).await?.clone();
        let config = sessions.config(pref).cloned();
        let lane = Rc::new(Lane::new(
            provider,
            &self.req.settings.estate,
            &source,
            config,
        ));
        self.lanes.insert(pref.clone(), lane.clone());
        Ok(lane)
    }

    async fn node<L: Launcher<Provider = P>>(
        &mut self,
        node: &Node,
        sessions: &mut Sessions<L>,
    ) -> Result<(), Diagnostics> {
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
                    crate::addr::Mode::Managed => self.managed(res, sessions).await?,
                    crate::addr::Mode::Data => self.data(res, sessions).await?,
                }
            }
        }
        Ok(())
    }

    async fn data<L: Launcher<Provider = P>>(
        &mut self,
        res: &Resource,
        sessions: &mut Sessions<L>,
    ) -> Result<(), Diagnostics> {
        let pref = self.provider_of(res);
        let mut reads = std::mem::take(&mut self.reads);
        let read = read_data(res, &pref, self.values(), &self.here, sessions, &mut reads).await;
        self.reads = reads;
        let v = match read {
            Ok(v) => v,
            // A check's data source that cannot be read fails its check,
            // never the plan.
            Err(d) if res.check.is_some() => {
                let check = res.check.clone().unwrap_or_default();
                for mut w in d.0 {
                    w.severity = crate::diag::Severity::Warning;
                    w.context = Some(format!("check \"{check}\""));
                    self.diags.push(w);
                }
                self.failed_checks.insert((self.here.clone(), check));
                Value::unknown(Type::Dynamic)
            }
            Err(d) => return Err(d),
        };
        self.values_mut().resources.insert(res.key.clone(), v);
        Ok(())
    }

    /// Says, once, how the instances of types outside the catalogue were
    /// found; and warns of the instances only their records find: without
    /// the record store a plan would propose to create them again.
    fn say_how_found(&mut self) {
        if !self.uncatalogued.is_empty() {
            let list: Vec<String> = self
                .uncatalogued
                .iter()
                .map(|(a, via)| match via {
                    Some(v) => format!("  - {a}: found {v}"),
                    None => format!("  - {a}: no object found"),
                })
                .collect();
            self.diags.push(Diagnostic::warning(
                "Resource types outside the identity catalogue",
                format!(
                    "The engine has no catalogue entry for these instances' types, so it found their objects by its families' general rules (an object with tags by its address marker, any other by its record):\n{}",
                    list.join("\n")
                ),
            ));
        }
        for (addr, arns) in std::mem::take(&mut self.unbound) {
            self.diags.push(Diagnostic::warning(
                "Marked object not bound",
                format!(
                    "The tagging listing shows {} carrying the address marker of {addr}, but no import ID the engine could take from it reads back as a {}. The plan treats {addr} as having no object. If that object is this instance's, add a catalogue entry for {} or keep the record store, before applying: an apply would create a second object.",
                    arns.join(", "),
                    addr.type_name,
                    addr.type_name
                ),
            ));
        }
        if self.by_record.is_empty() {
            return;
        }
        let list: Vec<String> = self.by_record.iter().map(|a| format!("  - {a}")).collect();
        self.diags.push(Diagnostic::warning(
            "Objects found only by their records",
            format!(
                "Nothing in the configuration or in the live system names the objects of these instances; they were found only by the record store of estate \"{}\". Without it a plan proposes to create them again:\n{}",
                self.req.settings.estate,
                list.join("\n")
            ),
        ));
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
            // A null output is no output, as in terraform's state.
            let action = match prior {
                None if after.is_null() => Action::NoOp,
                Some(_) if after.is_null() => Action::Delete,
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
}

/// Configures every `provider` block of the module, evaluating only what
/// they refer to (for commands that read and write objects without
/// planning the whole module, such as `migrate`): the variables and locals
/// they need, and the data sources those read. Locals no provider block
/// needs are left alone, whatever they read.
pub async fn configure_providers<L: Launcher>(
    module: &Module,
    vars: BTreeMap<String, Value>,
    sessions: &mut Sessions<L>,
) -> Result<(), Diagnostics> {
    let (graph, diags) = Graph::build(module);
    if diags.has_errors() {
        return Err(diags);
    }
    let order = graph
        .order()
        .map_err(|cycles| Diagnostics(cycles.iter().map(|c| cycle_diagnostic(c)).collect()))?;
    // Once every provider block is configured (the lock, then the record
    // store, ask in turn), nothing is evaluated or read again.
    let providers: Vec<&Node> = order
        .iter()
        .filter(|n| matches!(n, Node::Provider(_)))
        .collect();
    if providers
        .iter()
        .all(|n| matches!(n, Node::Provider(p) if sessions.is_open(p)))
    {
        return Ok(());
    }
    let mut needed: BTreeSet<&Node> = BTreeSet::new();
    let mut todo = providers;
    while let Some(n) = todo.pop() {
        if needed.insert(n) {
            todo.extend(graph.deps(n));
        }
    }
    let mut values = ModuleValues::new(vars, &module.dir, &module.dir);
    for node in order.iter().filter(|n| needed.contains(n)) {
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
            Node::Resource(key) => {
                let res = &module.resources[key];
                let v = match key.mode {
                    crate::addr::Mode::Data => {
                        let mut reads = Vec::new();
                        read_data(res, &res.provider_ref(), &values, &[], sessions, &mut reads)
                            .await?
                    }
                    // Not known without a plan.
                    crate::addr::Mode::Managed => Value::unknown(Type::Dynamic),
                };
                values.resources.insert(key.clone(), v);
            }
            _ => {}
        }
    }
    Ok(())
}

/// Reads every instance of data source `res` of the module instance
/// `here` through provider configuration `pref`, its configuration
/// evaluated in `values`, noting each read in `reads`; an instance whose
/// configuration is not wholly known yet is unknown.
async fn read_data<L: Launcher>(
    res: &Resource,
    pref: &ProviderRef,
    values: &ModuleValues,
    here: &[ModuleStep],
    sessions: &mut Sessions<L>,
    reads: &mut Vec<crate::plan::DataRead>,
) -> Result<Value, Diagnostics> {
    let schema = sessions
        .schema(&pref.name)
        .and_then(|s| s.data_sources.get(&res.key.type_name).cloned())
        .ok_or_else(|| unsupported_type(res, "data source"))?;
    let exp = expansion(values, res.count.as_ref(), res.for_each.as_ref(), false)?;
    let mut read = Vec::new();
    for (key, instance) in exp.instances() {
        let scope = values.scope_for(&res.config.references(), &instance);
        let config = decode(&res.config, &schema.block, &scope)?;
        let v = if config.is_wholly_known() {
            let provider = sessions.get(pref).await?;
            let addr = res.key.instance(here, key);
            let started = std::time::Instant::now();
            let v = provider
                .read_data_source(&res.key.type_name, &config)
                .await
                .map_err(|e| provider_failed(res, &addr, e))?;
            let id = v.get("id").and_then(Value::as_str).map(str::to_owned);
            let elapsed = started.elapsed();
            reads.push(crate::plan::DataRead { addr, id, elapsed });
            v
        } else {
            Value::unknown(schema.block.implied_type().without_optional())
        };
        read.push(v);
    }
    Ok(exp.assemble(read))
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
