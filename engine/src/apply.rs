//! Apply: the only place that changes the live system.
//!
//! The plan's steps are carried out in dependency order (destroys in
//! reverse), each instance's configuration evaluated again with what its
//! dependencies became, so values known only after apply flow on. Each
//! change writes its record the moment it commits. The walk covers every
//! module of the tree, each block once per module instance, so a change
//! waits for what it depends on across module boundaries.

use crate::addr::{call_names, Mode, ModuleStep, ResourceInstanceAddr};
use crate::bind::marker;
use crate::bind::readback::Readback;
use crate::config::Resource;
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::body::decode;
use crate::eval::funcs::Phase;
use crate::eval::module::{
    expansion, root_output_sensitive, Expansion, Instance, ModuleValues, TreeValues,
};
use crate::graph::{Node, TreeNode};
use crate::plan::objchange::{config_from_state, ignore_changes, keep_live_json};
use crate::plan::step::{Planned, Request, Step};
use crate::plan::Action;
use crate::provider::proposed::proposed_new;
use crate::provider::{Provider, ProviderError, ResourceState};
use crate::record::{Deposed, OutputRecord, Record, RecordStore};
use crate::session::{Launcher, Sessions};
use crate::value::{Type, Value};
use futures_util::stream::{FuturesUnordered, StreamExt};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Notify, Semaphore};

/// What an apply did.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    /// Objects `import` blocks brought into the estate.
    pub imported: usize,
    pub added: usize,
    pub changed: usize,
    pub destroyed: usize,
    pub outputs: BTreeMap<String, Value>,
    /// A second interrupt abandoned the changes in flight, so the next
    /// plan may not be exactly the rest.
    pub cancelled: bool,
}

impl Applied {
    /// terraform's closing sentence of an apply, or of a destroy.
    pub fn summary(&self, destroy: bool) -> String {
        if destroy {
            return format!("Destroy complete! Resources: {} destroyed.", self.destroyed);
        }
        let imported = match self.imported {
            0 => String::new(),
            n => format!("{n} imported, "),
        };
        format!(
            "Apply complete! Resources: {imported}{} added, {} changed, {} destroyed.",
            self.added, self.changed, self.destroyed
        )
    }

    /// The root outputs as terraform lists them after an apply
    /// (`\nOutputs:\n\nname = value`, a sensitive one as `<sensitive>`);
    /// empty when there are none. A null output is no output.
    pub fn outputs_text(&self, root: &crate::config::Module) -> String {
        let shown: Vec<String> = self
            .outputs
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(
                |(name, value)| match root_output_sensitive(root, name, value) {
                    true => format!("{name} = <sensitive>\n"),
                    false => format!("{name} = {}\n", crate::eval::format::console(value)),
                },
            )
            .collect();
        match shown.is_empty() {
            true => String::new(),
            false => format!("\nOutputs:\n\n{}", shown.concat()),
        }
    }
}

/// Where apply reports progress: one event per change started, still
/// running every ten seconds, finished or failed (terraform's hooks). Its
/// `Display` is terraform's line for it.
pub trait Progress {
    fn event(&mut self, event: Event);
}

impl<F: FnMut(Event)> Progress for F {
    fn event(&mut self, event: Event) {
        self(event)
    }
}

/// What a change is doing, as terraform's hooks name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doing {
    Create,
    Update,
    Delete,
    /// An `import` block's object taken into the estate.
    Import,
}

impl Doing {
    /// terraform's `-json` action: `create`, `update`, `delete`, `import`.
    pub fn as_str(self) -> &'static str {
        match self {
            Doing::Create => "create",
            Doing::Update => "update",
            Doing::Delete => "delete",
            Doing::Import => "import",
        }
    }

    /// terraform's noun for the change finished or failed.
    fn noun(self) -> &'static str {
        match self {
            Doing::Create => "Creation",
            Doing::Update => "Modifications",
            Doing::Delete => "Destruction",
            Doing::Import => "Import",
        }
    }
}

/// Where a change is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stage {
    /// Started, on the object `id` names (none for a create).
    Start { id: Option<String> },
    /// Still running after `elapsed`.
    Running { elapsed: Duration },
    /// Finished after `elapsed`; `id` names the object a create or update
    /// left (none for a destroy).
    Complete {
        id: Option<String>,
        elapsed: Duration,
    },
    /// Failed after `elapsed` (the error follows as a diagnostic).
    Errored { elapsed: Duration },
}

/// One moment of one instance's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub addr: ResourceInstanceAddr,
    /// The deposed object's key, when the change is a deposed object's.
    pub deposed: Option<String>,
    pub doing: Doing,
    pub stage: Stage,
}

impl Event {
    /// terraform's line for the event in its human UI; none for a failure,
    /// which terraform's text leaves to the error that follows.
    pub fn line(&self) -> Option<String> {
        match self.stage {
            Stage::Errored { .. } => None,
            _ => Some(self.to_string()),
        }
    }
}

impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let addr = &self.addr;
        let id = |id: &Option<String>| match id {
            Some(id) if !id.is_empty() => format!(" [id={id}]"),
            _ => String::new(),
        };
        match (&self.stage, self.doing) {
            // terraform names the deposed object when its destroy starts only.
            (Stage::Start { id: i }, Doing::Delete) => match &self.deposed {
                Some(key) => write!(f, "{addr} (deposed object {key}): Destroying...{}", id(i)),
                None => write!(f, "{addr}: Destroying...{}", id(i)),
            },
            (Stage::Start { .. }, Doing::Create) => write!(f, "{addr}: Creating..."),
            (Stage::Start { id: i }, Doing::Update) => write!(f, "{addr}: Modifying...{}", id(i)),
            (Stage::Start { id: i }, Doing::Import) => write!(f, "{addr}: Importing...{}", id(i)),
            (Stage::Running { elapsed }, doing) => {
                let verb = match doing {
                    Doing::Create => "creating",
                    Doing::Update => "modifying",
                    Doing::Delete => "destroying",
                    Doing::Import => "importing",
                };
                write!(f, "{addr}: Still {verb}... [{} elapsed]", seconds(*elapsed))
            }
            (Stage::Complete { id: i, .. }, Doing::Import) => {
                write!(f, "{addr}: Import complete{}", id(i))
            }
            (Stage::Complete { id: i, elapsed }, doing) => write!(
                f,
                "{addr}: {} complete after {}{}",
                doing.noun(),
                seconds(*elapsed),
                id(i)
            ),
            (Stage::Errored { elapsed }, doing) => write!(
                f,
                "{addr}: {} errored after {}",
                doing.noun(),
                seconds(*elapsed)
            ),
        }
    }
}

/// How many provider calls that change objects may run at once, as
/// terraform's `-parallelism` (default 10).
pub const DEFAULT_PARALLELISM: usize = 10;

/// Keeps the root outputs a whole apply left (none after a destroy) in
/// the record store, for the next plan's "Changes to Outputs". A targeted
/// apply leaves them as they were, as its plan did.
async fn keep_outputs(
    req: &Request<'_>,
    store: &RecordStore,
    outputs: &BTreeMap<String, Value>,
) -> Result<(), Diagnostics> {
    if !req.targets.is_empty() {
        return Ok(());
    }
    let kept = outputs
        .iter()
        .filter(|(_, v)| !req.destroy && v.is_wholly_known() && !v.is_null())
        .map(|(name, v)| {
            let sensitive = root_output_sensitive(&req.tree.module, name, v);
            (name.clone(), OutputRecord::of(v, sensitive))
        })
        .collect();
    store.put_outputs(&kept).await.map_err(|e| {
        Diagnostics::from(Diagnostic::error(
            "Failed to keep the outputs",
            format!("Every change was applied and recorded, but {e}."),
        ))
    })
}

/// Carries out `planned`, walking the dependency graph with up to
/// `parallelism` changes in flight. On failure, nothing new starts, what is
/// in flight finishes and is recorded, and `Applied` says what committed.
pub async fn apply<L: Launcher>(
    req: &Request<'_>,
    planned: &Planned,
    sessions: &mut Sessions<L>,
    store: &RecordStore,
    progress: &mut dyn Progress,
    parallelism: usize,
) -> Result<Applied, (Applied, Diagnostics)> {
    let interrupted = Arc::new(AtomicBool::new(false));
    let cancel = Arc::new(Notify::new());
    let listener = listen_for_interrupts(interrupted.clone(), cancel.clone());
    let shared = Shared {
        req,
        store,
        progress: RefCell::new(progress),
        done: RefCell::new(Applied::default()),
        permits: Semaphore::new(parallelism.max(1)),
        interrupted,
        kill_after: std::env::var(SIGTERM_AFTER).ok(),
        deferred: RefCell::default(),
        readback: Readback::new(!req.settings.strict.refuse_secrets),
    };
    let root = &req.tree.module.dir;
    let mut walk = Walk {
        planned,
        values: TreeValues::new(
            ModuleValues::new(req.vars.clone(), root, root)
                .in_phase(Phase::Apply(req.plan_timestamp.clone())),
        ),
        finished: BTreeSet::new(),
        started: BTreeSet::new(),
        failure: Diagnostics::default(),
    };
    // A second interrupt abandons the changes in flight, as terraform's
    // does: their calls are dropped, and the provider ends with the command.
    let finished = tokio::select! {
        r = walk.run(&shared, sessions) => Some(r),
        () = cancel.notified() => None,
    };
    let cancelled = finished.is_none();
    let result = finished.unwrap_or_else(|| Err(Diagnostic::error(
        "Apply cancelled",
        "A second interrupt stopped the apply without waiting for the changes in flight. What committed before it is recorded; a change that was in flight may have completed in the live system with no record. Such an object carries its markers when its type takes tags, and the next plan binds it; an object of a type without tags is not found again. Read the next plan before applying it.",
    )
    .into()));
    if let Some(l) = listener {
        l.abort();
    }
    if shared.interrupted.load(Ordering::SeqCst) && !cancelled {
        let d = shared.done.borrow();
        walk.failure.push(Diagnostic::error(
            "Operation interrupted",
            format!(
                "The apply stopped after the changes in flight committed: {} added, {} changed, {} destroyed, each recorded. The next plan proposes exactly the rest.",
                d.added, d.changed, d.destroyed
            ),
        ));
    }
    let mut done = shared.done.take();
    done.outputs = walk.values.root().outputs.clone();
    done.cancelled = cancelled;
    match result {
        Ok(()) if !walk.failure.has_errors() => match keep_outputs(req, store, &done.outputs).await
        {
            Ok(()) => Ok(done),
            Err(d) => Err((done, d)),
        },
        Ok(()) => Err((done, walk.failure)),
        Err(d) => {
            walk.failure.extend(d);
            Err((done, walk.failure))
        }
    }
}

/// What every change in flight shares.
struct Shared<'a, 'r> {
    req: &'a Request<'r>,
    store: &'a RecordStore,
    progress: RefCell<&'a mut dyn Progress>,
    done: RefCell<Applied>,
    permits: Semaphore,
    /// Set by SIGINT or SIGTERM: start nothing new.
    interrupted: Arc<AtomicBool>,
    /// The test hook's address (see [`SIGTERM_AFTER`]).
    kill_after: Option<String>,
    /// The old objects of create_before_destroy replacements, destroyed
    /// once everything that depends on them has changed.
    deferred: RefCell<Vec<(ResourceInstanceAddr, Deposed)>>,
    /// What each type's read cannot return, learned as objects commit.
    readback: Readback,
}

impl Shared<'_, '_> {
    fn say(&self, addr: &ResourceInstanceAddr, doing: Doing, stage: Stage) {
        self.progress.borrow_mut().event(Event {
            addr: addr.clone(),
            deposed: None,
            doing,
            stage,
        });
    }

    /// Whether new changes may start.
    fn stopping(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
    }

    /// Called the instant a change commits: the test hook sends SIGTERM
    /// to this process when it names the address.
    fn committed(&self, addr: &ResourceInstanceAddr) {
        if self.kill_after.as_deref() == Some(addr.to_string().as_str()) {
            // The signal is handled at the walk's next turn; the flag makes
            // it take effect at this very commit, as a kill arriving now would.
            self.interrupted.store(true, Ordering::SeqCst);
            let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGTERM);
        }
    }
}

/// An environment variable naming a resource instance address: the engine
/// sends itself SIGTERM the instant that instance's change commits, so
/// tests can stop an apply at an exact point.
pub const SIGTERM_AFTER: &str = "CHOUDOUFU_TEST_SIGTERM_AFTER";

/// Sets `flag` on SIGINT or SIGTERM, and notifies `cancel` on a second
/// one, saying so each time as terraform does.
fn listen_for_interrupts(
    flag: Arc<AtomicBool>,
    cancel: Arc<Notify>,
) -> Option<tokio::task::JoinHandle<()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut int = signal(SignalKind::interrupt()).ok()?;
    let mut term = signal(SignalKind::terminate()).ok()?;
    Some(tokio::spawn(async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        flag.store(true, Ordering::SeqCst);
        eprintln!("\nInterrupt received.\nPlease wait for the changes in flight to finish, or data loss may occur.\nGracefully shutting down...");
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        eprintln!("\nTwo interrupts received. Exiting immediately. Note that data loss may have occurred.");
        cancel.notify_one();
    }))
}

/// The walk's own state between changes.
struct Walk<'a> {
    planned: &'a Planned,
    /// Every module instance's values.
    values: TreeValues,
    finished: BTreeSet<TreeNode>,
    started: BTreeSet<TreeNode>,
    failure: Diagnostics,
}

/// One node's instances, ready to run: each step with its configuration.
type Jobs<'a, P> = Vec<(&'a Step, Option<Value>, P)>;

impl<'a> Walk<'a> {
    async fn run<L: Launcher>(
        &mut self,
        shared: &Shared<'_, '_>,
        sessions: &mut Sessions<L>,
    ) -> Result<(), Diagnostics> {
        let destroy = shared.req.destroy;
        let mut running = FuturesUnordered::new();
        loop {
            // Start everything ready; nodes with no provider work finish at
            // once and may make more nodes ready.
            let mut started_any = true;
            while started_any && !self.failure.has_errors() && !shared.stopping() {
                started_any = false;
                let ready: Vec<TreeNode> = self
                    .planned
                    .order
                    .iter()
                    .filter(|n| !self.started.contains(*n) && self.ready(n, destroy))
                    .cloned()
                    .collect();
                for node in ready {
                    started_any = true;
                    self.started.insert(node.clone());
                    match self.start(shared, sessions, &node).await {
                        Ok(Some(jobs)) => {
                            let key = node.clone();
                            running.push(async move {
                                let results = futures_util::future::join_all(jobs.into_iter().map(
                                    |(step, config, provider)| {
                                        change(shared, provider, step, config)
                                    },
                                ))
                                .await;
                                (key, results)
                            });
                        }
                        Ok(None) => {
                            self.finished.insert(node);
                        }
                        Err(d) => self.failure.extend(d),
                    }
                }
            }
            let Some((node, results)) = running.next().await else {
                if !self.failure.has_errors() && !shared.stopping() {
                    // Nothing running and nothing ready: a node that never
                    // started would be a change silently left out.
                    let stuck: Vec<String> = self
                        .planned
                        .order
                        .iter()
                        .filter(|n| !self.started.contains(*n))
                        .map(ToString::to_string)
                        .collect();
                    if !stuck.is_empty() {
                        self.failure.push(Diagnostic::error(
                            "Apply could not finish",
                            format!(
                                "These blocks never became ready to apply, so their changes were not made: {}.",
                                stuck.join(", ")
                            ),
                        ));
                    }
                }
                break;
            };
            let mut values = Vec::new();
            for r in results {
                match r {
                    Ok(v) => values.push(v),
                    Err(d) => {
                        self.failure.extend(d);
                        values.push(Value::unknown(Type::Dynamic));
                    }
                }
            }
            if let Node::Resource(key) = &node.node {
                let tree = shared.req.tree.at(&node.module);
                let res = &tree
                    .expect("walked modules are of the tree")
                    .module
                    .resources[key];
                // Each module instance's values, in the order its jobs ran.
                let mut values = values.into_iter();
                for instance in self.values.instances_of(&node.module) {
                    let n = self.planned_in(&instance, key);
                    let here = self.values.at_mut(&instance);
                    let exp = expansion(here, res.count.as_ref(), res.for_each.as_ref(), false)
                        .unwrap_or(Expansion::Unknown);
                    let whole = match exp {
                        Expansion::Unknown => Value::unknown(Type::Dynamic),
                        _ => exp.assemble(values.by_ref().take(n).collect()),
                    };
                    here.resources.insert(key.clone(), whole);
                }
            }
            self.finished.insert(node);
        }
        if self.failure.has_errors() || shared.stopping() {
            return Ok(());
        }
        // The old objects of create_before_destroy replacements, now that
        // everything that depended on them has changed.
        let deferred = shared.deferred.take();
        for (addr, old) in deferred.iter().rev() {
            if shared.stopping() {
                return Ok(());
            }
            let Some(step) = self.planned.steps.get(addr) else {
                continue;
            };
            if let Some(prior) = &step.prior {
                let provider = sessions.get(&step.provider).await?.clone();
                let _permit = shared
                    .permits
                    .acquire()
                    .await
                    .expect("the semaphore is never closed");
                destroy_live(shared, &provider, step, Some(&old.key), prior).await?;
                forget_deposed(shared.store, step, &old.key).await?;
            }
        }
        for addr in &self.planned.stale_records {
            shared.store.remove(addr).await.map_err(|e| {
                Diagnostics::from(Diagnostic::error("Failed to remove record", e.to_string()))
            })?;
        }
        // Objects no block declares, last (those owned through a parent
        // first, as the sweep ordered them).
        for addr in &self.planned.orphans {
            if shared.stopping() {
                break;
            }
            if let Some(step) = self.planned.steps.get(addr) {
                let provider = sessions.get(&step.provider).await?.clone();
                let _permit = shared
                    .permits
                    .acquire()
                    .await
                    .expect("the semaphore is never closed");
                match step.action {
                    Action::Forget => forget_object(shared, &provider, step).await?,
                    _ => destroy_object(shared, &provider, step, true).await?,
                }
            }
        }
        Ok(())
    }

    /// Whether a node may start: everything it depends on is finished (in
    /// a destroy, everything that depends on it).
    fn ready(&self, node: &TreeNode, destroy: bool) -> bool {
        let graph = &self.planned.graph;
        if destroy {
            graph.dependents(node).all(|n| self.finished.contains(n))
        } else {
            self.expanded(node) && graph.deps(node).all(|d| self.finished.contains(d))
        }
    }

    /// Whether every module call on the path to `node`'s module has made
    /// its instances, which a node starts in: terraform expands a module
    /// before anything in it, even a block that refers to nothing the call
    /// passes in (a data source, a literal). Every call is a node of the
    /// walk.
    fn expanded(&self, node: &TreeNode) -> bool {
        (0..node.module.len()).all(|i| {
            self.finished.contains(&TreeNode {
                module: node.module[..i].to_vec(),
                node: Node::ModuleCall(node.module[i].clone()),
            })
        })
    }

    /// How many of the plan's steps are instances of block `key` in the
    /// module instance `instance` (the jobs its node ran there).
    fn planned_in(&self, instance: &[ModuleStep], key: &crate::config::ResourceKey) -> usize {
        self.planned
            .steps
            .values()
            .filter(|s| s.key.as_ref() == Some(key) && s.addr.module == instance)
            .count()
    }

    /// Starts a node in every instance of its module: evaluates what needs
    /// no provider at once (`None`), or returns the changes its instances
    /// need, module instance by module instance.
    async fn start<L: Launcher>(
        &mut self,
        shared: &Shared<'_, '_>,
        sessions: &mut Sessions<L>,
        node: &TreeNode,
    ) -> Result<Option<Jobs<'a, L::Provider>>, Diagnostics> {
        if shared.req.destroy {
            return self.start_destroy(sessions, node).await;
        }
        let mut all: Option<Jobs<'a, L::Provider>> = None;
        for instance in self.values.instances_of(&node.module) {
            if let Some(jobs) = self
                .start_in(shared, sessions, &instance, &node.node)
                .await?
            {
                all.get_or_insert_with(Vec::new).extend(jobs);
            }
        }
        Ok(all)
    }

    /// A destroy starts a resource node's deletes, in every module instance.
    async fn start_destroy<L: Launcher>(
        &mut self,
        sessions: &mut Sessions<L>,
        node: &TreeNode,
    ) -> Result<Option<Jobs<'a, L::Provider>>, Diagnostics> {
        match &node.node {
            Node::Resource(key) => {
                let mut jobs = Vec::new();
                for step in self.planned.steps.values().filter(|s| {
                    s.key.as_ref() == Some(key) && call_names(&s.addr.module) == node.module
                }) {
                    let provider = sessions.get(&step.provider).await?.clone();
                    jobs.push((step, None, provider));
                }
                Ok(Some(jobs))
            }
            _ => Ok(None),
        }
    }

    /// Starts a node in one module instance (`here`).
    async fn start_in<L: Launcher>(
        &mut self,
        shared: &Shared<'_, '_>,
        sessions: &mut Sessions<L>,
        here: &[ModuleStep],
        node: &Node,
    ) -> Result<Option<Jobs<'a, L::Provider>>, Diagnostics> {
        let tree = shared.req.tree.of_instance(here);
        let module = &tree.module;
        let values = &self.values.instances[here];
        match node {
            Node::Local(name) => {
                let v = values.eval(&module.locals[name].expr, &Instance::default())?;
                self.values.at_mut(here).locals.insert(name.clone(), v);
                Ok(None)
            }
            Node::Output(name) => {
                let out = &module.outputs[name];
                let v = values.eval(&out.value, &Instance::default())?;
                self.values.set_output(here, name, v, out.sensitive);
                Ok(None)
            }
            Node::ModuleCall(name) => {
                let root = &shared.req.tree.module.dir;
                self.values.expand_call(here, tree, name, root)?;
                Ok(None)
            }
            Node::Resource(key) if key.mode == Mode::Data => {
                let pref = shared
                    .req
                    .tree
                    .provider_for(&call_names(here), module.resources[key].provider_ref());
                self.read_data(sessions, here, &module.resources[key], &pref)
                    .await?;
                Ok(None)
            }
            Node::Resource(key) => {
                let res = &module.resources[key];
                let exp = expansion(values, res.count.as_ref(), res.for_each.as_ref(), false)?;
                let mut jobs = Vec::new();
                for (inst_key, instance) in exp.instances() {
                    let addr = key.instance(here, inst_key);
                    // Not in the plan (left out by -target): untouched.
                    let Some(step) = self.planned.steps.get(&addr) else {
                        continue;
                    };
                    let config = match step.action {
                        Action::Create | Action::Update | Action::Replace { .. } => {
                            let scope = values.scope_for(&res.config.references(), &instance);
                            let config = decode(&res.config, &step.schema.block, &scope)?;
                            let config = match step.identity.is_tagged() {
                                true => marker::with_markers(
                                    config,
                                    &shared.req.settings.estate,
                                    &addr.to_string(),
                                ),
                                false => config,
                            };
                            let live = step.prior.as_ref().map(|p| &p.value);
                            Some(keep_live_json(keep_ignored(res, config, live), live))
                        }
                        _ => None,
                    };
                    let provider = sessions.get(&step.provider).await?.clone();
                    jobs.push((step, config, provider));
                }
                Ok(Some(jobs))
            }
            _ => Ok(None),
        }
    }

    async fn read_data<L: Launcher>(
        &mut self,
        sessions: &mut Sessions<L>,
        here: &[ModuleStep],
        res: &Resource,
        pref: &crate::config::ProviderRef,
    ) -> Result<(), Diagnostics> {
        let Some(schema) = sessions
            .schema(&pref.name)
            .and_then(|s| s.data_sources.get(&res.key.type_name).cloned())
        else {
            return Ok(());
        };
        let here_values = &self.values.instances[here];
        let exp = expansion(
            here_values,
            res.count.as_ref(),
            res.for_each.as_ref(),
            false,
        )?;
        let mut values = Vec::new();
        for (inst_key, instance) in exp.instances() {
            let scope = here_values.scope_for(&res.config.references(), &instance);
            let config = decode(&res.config, &schema.block, &scope)?;
            let provider = sessions.get(pref).await?;
            let v = provider
                .read_data_source(&res.key.type_name, &config)
                .await
                .map_err(|e| failed(&res.key.instance(here, inst_key), e))?;
            values.push(v);
        }
        self.values
            .at_mut(here)
            .resources
            .insert(res.key.clone(), exp.assemble(values));
        Ok(())
    }
}

/// Carries out one instance's step; returns the object it leaves.
async fn change<P: Provider + Clone>(
    shared: &Shared<'_, '_>,
    provider: P,
    step: &Step,
    config: Option<Value>,
) -> Result<Value, Diagnostics> {
    let prior_value = || {
        step.prior
            .as_ref()
            .map(|p| p.value.clone())
            .unwrap_or_else(|| Value::unknown(Type::Dynamic))
    };
    let _permit = shared
        .permits
        .acquire()
        .await
        .expect("the semaphore is never closed");
    // Interrupted while waiting for a turn: this change never starts.
    if shared.stopping() && !matches!(step.action, Action::NoOp | Action::Read) {
        return Ok(prior_value());
    }
    // As terraform, an imported object is announced before its change;
    // stamping its markers is that change.
    if let Some(id) = &step.importing {
        let id = Some(id.clone());
        shared.say(&step.addr, Doing::Import, Stage::Start { id: id.clone() });
        let elapsed = Duration::ZERO;
        shared.say(&step.addr, Doing::Import, Stage::Complete { id, elapsed });
        shared.done.borrow_mut().imported += 1;
    }
    // Deposed objects go after the instance's own create or update (the
    // create_before_destroy order), but before its destroy, which forgets
    // the record that names them.
    if step.action == Action::Delete {
        destroy_deposed(shared, &provider, step).await?;
    }
    let out = match (step.action, config) {
        (Action::Delete, _) => {
            destroy_object(shared, &provider, step, true).await?;
            return Ok(Value::null(Type::Dynamic));
        }
        (
            Action::Replace {
                create_before_destroy: false,
            },
            Some(config),
        ) => {
            destroy_object(shared, &provider, step, false).await?;
            create_or_update(shared, &provider, step, &config, None, &[]).await?
        }
        (
            Action::Replace {
                create_before_destroy: true,
            },
            Some(config),
        ) => {
            // The old object becomes deposed: the new one's record names
            // it until it is destroyed, so a run stopped in between leaves
            // it findable. As terraform does, it goes only once what
            // depends on it has moved to the new object.
            let old = Deposed::new(step.id.clone().unwrap_or_default());
            let v = create_or_update(
                shared,
                &provider,
                step,
                &config,
                None,
                std::slice::from_ref(&old),
            )
            .await?;
            shared.deferred.borrow_mut().push((step.addr.clone(), old));
            v
        }
        (Action::Update, Some(config)) => {
            create_or_update(shared, &provider, step, &config, step.prior.as_ref(), &[]).await?
        }
        (Action::Create, Some(config)) => {
            create_or_update(shared, &provider, step, &config, None, &[]).await?
        }
        _ => {
            // A bound object with no record (the store was lost, or the
            // block was renamed) gets one again.
            if let (Some(prior), Ok(None)) = (&step.prior, shared.store.get(&step.addr)) {
                let mut r = Record::for_object(
                    step.addr.to_string(),
                    &step.identity,
                    &step.provider,
                    &step.schema.block,
                    prior,
                );
                r.id = step.id.clone().or(r.id);
                shared.store.put(&r).await.map_err(|e| {
                    Diagnostics::from(Diagnostic::error("Failed to write record", e.to_string()))
                })?;
            }
            prior_value()
        }
    };
    if !shared.stopping() {
        destroy_deposed(shared, &provider, step).await?;
    }
    Ok(out)
}

/// Destroys the deposed objects the plan found for the step's instance,
/// each then struck from its record.
async fn destroy_deposed<P: Provider + Clone>(
    shared: &Shared<'_, '_>,
    provider: &P,
    step: &Step,
) -> Result<(), Diagnostics> {
    for d in &step.deposed {
        destroy_live(shared, provider, step, Some(&d.entry.key), &d.state).await?;
        forget_deposed(shared.store, step, &d.entry.key).await?;
    }
    Ok(())
}

/// Strikes a destroyed deposed object from the instance's record.
async fn forget_deposed(store: &RecordStore, step: &Step, key: &str) -> Result<(), Diagnostics> {
    let failed = |e: crate::record::RecordError| {
        Diagnostics::from(
            Diagnostic::error(
                "Failed to write record",
                format!("{} (deposed object {key}) is destroyed, but the record still names it: {e}. The next plan finds it gone.", step.addr),
            )
            .about(step.addr.to_string()),
        )
    };
    if let Some(mut r) = store.get(&step.addr).map_err(failed)? {
        r.deposed.retain(|d| d.key != key);
        store.put(&r).await.map_err(failed)?;
    }
    Ok(())
}

/// Plans the change again with the configuration as it now evaluates,
/// applies it, and records the result.
async fn create_or_update<P: Provider + Clone>(
    shared: &Shared<'_, '_>,
    provider: &P,
    step: &Step,
    config: &Value,
    prior: Option<&ResourceState>,
    deposed: &[Deposed],
) -> Result<Value, Diagnostics> {
    let mut provider = provider.clone();
    let addr = &step.addr;
    let ty = step.schema.block.implied_type().without_optional();
    let null = ResourceState {
        value: Value::null(ty),
        private: Vec::new(),
    };
    let prior = prior.unwrap_or(&null);
    let creating = prior.value.is_null();
    let proposed = proposed_new(&step.schema.block, &prior.value, config);
    let mut planned = provider
        .plan_resource_change(&step.type_name, prior, &proposed, config)
        .await
        .map_err(|e| failed(addr, e))?;
    let res = step.key.as_ref().and_then(|k| {
        shared
            .req
            .tree
            .at(&call_names(&addr.module))
            .and_then(|t| t.module.resources.get(k))
    });
    if let (Some(res), false) = (res, creating) {
        planned.planned_state = ignore_changes(res, planned.planned_state, Some(&prior.value));
    }
    let id = prior
        .value
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let started = Instant::now();
    let (doing, verb) = match creating {
        true => (Doing::Create, "creating"),
        false => (Doing::Update, "modifying"),
    };
    let id = (!creating).then_some(id);
    shared.say(addr, doing, Stage::Start { id });
    let result = with_ticker(
        provider.apply_resource_change(&step.type_name, &prior.value, &planned, config),
        addr,
        doing,
        shared,
    )
    .await;
    if result.is_err() {
        let elapsed = started.elapsed();
        shared.say(addr, doing, Stage::Errored { elapsed });
    }
    let state = match result {
        Ok(Some(s)) => s,
        Ok(None) => {
            return Err(Diagnostic::error(
                "Provider produced null object",
                format!("The provider returned no object after {verb} {addr}."),
            )
            .about(addr.to_string())
            .into())
        }
        Err(e) => return Err(failed(addr, e)),
    };
    let elapsed = started.elapsed();
    let new_id = state
        .value
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let id = Some(new_id);
    shared.say(addr, doing, Stage::Complete { id, elapsed });
    match creating {
        true => shared.done.borrow_mut().added += 1,
        false => shared.done.borrow_mut().changed += 1,
    }
    // The record first, with what the type's read is known to lose, the
    // instant the change commits; then, while the object shows arguments
    // not yet tried, one import and read teaches the rest, and the record
    // is written again if it must keep more.
    let (ty, block) = (&step.type_name, &step.schema.block);
    let known = shared.readback.lost(ty, block, &state.value);
    let mut r = record(shared.store, step, &state, deposed, &known).await?;
    shared.committed(addr);
    if let (true, Some(id)) = (
        shared.readback.untried(ty, block, &state.value),
        r.id.clone(),
    ) {
        match shared
            .readback
            .learn(
                &mut provider,
                ty,
                &id,
                block,
                &state.value,
                &step.identity.config_only(),
            )
            .await
        {
            Ok(lost) if lost != known => {
                r.keep(lost.iter().map(String::as_str), block, &state.value);
                put(shared.store, step, &r).await?;
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(
                address = %addr,
                error = %e,
                "reading the object back to learn what its read loses failed"
            ),
        }
    }
    Ok(state.value)
}

/// Writes the record of a committed object, keeping the values of `lost`,
/// the arguments its type's read cannot return.
async fn record(
    store: &RecordStore,
    step: &Step,
    state: &ResourceState,
    deposed: &[Deposed],
    lost: &[String],
) -> Result<Record, Diagnostics> {
    let mut r = Record::for_object(
        step.addr.to_string(),
        &step.identity,
        &step.provider,
        &step.schema.block,
        state,
    );
    r.keep(
        lost.iter().map(String::as_str),
        &step.schema.block,
        &state.value,
    );
    r.deposed = deposed.to_vec();
    put(store, step, &r).await?;
    Ok(r)
}

async fn put(store: &RecordStore, step: &Step, r: &Record) -> Result<(), Diagnostics> {
    store.put(r).await.map_err(|e| {
        Diagnostics::from(
            Diagnostic::error(
                "Failed to write record",
                format!("{} committed, but its record could not be written: {e}. The next plan still finds the object by its markers.", step.addr),
            )
            .about(step.addr.to_string()),
        )
    })
}

/// Destroys the step's prior object; `forget` removes its record.
async fn destroy_object<P: Provider + Clone>(
    shared: &Shared<'_, '_>,
    provider: &P,
    step: &Step,
    forget: bool,
) -> Result<(), Diagnostics> {
    let Some(prior) = &step.prior else {
        return Ok(());
    };
    let addr = &step.addr;
    destroy_live(shared, provider, step, None, prior).await?;
    if forget {
        shared.store.remove(&addr.to_string()).await.map_err(|e| {
            Diagnostics::from(Diagnostic::error(
                "Failed to remove record",
                format!("{addr} is destroyed, but its record could not be removed: {e}."),
            ))
        })?;
    }
    shared.committed(addr);
    Ok(())
}

/// Forgets an object a `removed` block keeps: a tagged object's markers
/// come off, by an update that removes only them, and its record goes; the
/// object itself stays, unmanaged.
async fn forget_object<P: Provider + Clone>(
    shared: &Shared<'_, '_>,
    provider: &P,
    step: &Step,
) -> Result<(), Diagnostics> {
    let Some(prior) = &step.prior else {
        return Ok(());
    };
    let addr = &step.addr;
    if step.identity.is_tagged() {
        unmark(&mut provider.clone(), step, prior)
            .await
            .map_err(|e| failed(addr, e))?;
    }
    shared.store.remove(&addr.to_string()).await.map_err(|e| {
        Diagnostics::from(Diagnostic::error(
            "Failed to remove record",
            format!("{addr} is no longer managed, but its record could not be removed: {e}."),
        ))
    })?;
    shared.committed(addr);
    Ok(())
}

/// Takes a tagged object's markers off by an update that removes only
/// them; returns the object as it is then.
async fn unmark<P: Provider>(
    provider: &mut P,
    step: &Step,
    prior: &ResourceState,
) -> Result<ResourceState, ProviderError> {
    let block = &step.schema.block;
    let config = marker::without_markers(&config_from_state(block, &prior.value));
    let proposed = proposed_new(block, &prior.value, &config);
    let planned = provider
        .plan_resource_change(&step.type_name, prior, &proposed, &config)
        .await?;
    let after = provider
        .apply_resource_change(&step.type_name, &prior.value, &planned, &config)
        .await?;
    Ok(after.unwrap_or_else(|| prior.clone()))
}

/// Destroys one live object of the step's instance (its current object,
/// or a deposed one by key), saying so as terraform does.
async fn destroy_live<P: Provider + Clone>(
    shared: &Shared<'_, '_>,
    provider: &P,
    step: &Step,
    deposed: Option<&str>,
    prior: &ResourceState,
) -> Result<(), Diagnostics> {
    let mut provider = provider.clone();
    let addr = &step.addr;
    let id = prior
        .value
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    shared.progress.borrow_mut().event(Event {
        addr: addr.clone(),
        deposed: deposed.map(str::to_string),
        doing: Doing::Delete,
        stage: Stage::Start { id: Some(id) },
    });
    let started = Instant::now();
    // An adopted object outlives its destroy (the provider only forgets a
    // VPC's default ACL): its markers come off first, as a forgotten
    // object's do, so that nothing finds it as the estate's again.
    let adopted = step.identity.entry.adopts && step.identity.is_tagged();
    let result = with_ticker(
        async {
            let prior = match adopted {
                true => &unmark(&mut provider.clone(), step, prior).await?,
                false => prior,
            };
            destroy_state(&mut provider, &step.type_name, prior, &step.schema).await
        },
        addr,
        Doing::Delete,
        shared,
    )
    .await;
    let elapsed = started.elapsed();
    if let Err(e) = result {
        shared.say(addr, Doing::Delete, Stage::Errored { elapsed });
        return Err(failed(addr, e));
    }
    shared.say(addr, Doing::Delete, Stage::Complete { id: None, elapsed });
    shared.done.borrow_mut().destroyed += 1;
    Ok(())
}

/// Plans and applies the destroy of one live object.
pub async fn destroy_state<P: Provider>(
    provider: &mut P,
    type_name: &str,
    prior: &ResourceState,
    schema: &crate::provider::schema::Schema,
) -> Result<(), ProviderError> {
    let ty = schema.block.implied_type().without_optional();
    let null = Value::null(ty);
    let planned = provider
        .plan_resource_change(type_name, prior, &null, &null)
        .await?;
    provider
        .apply_resource_change(type_name, &prior.value, &planned, &null)
        .await
        .map(|_| ())
}

/// The ignored arguments keep their live values (as the plan did).
fn keep_ignored(res: &Resource, config: Value, prior: Option<&Value>) -> Value {
    match (&res.lifecycle.ignore_changes, prior) {
        (crate::config::IgnoreChanges::None, _) | (_, None) => config,
        (_, Some(_)) => ignore_changes(res, config, prior),
    }
}

/// Runs a provider call, printing terraform's "Still creating..." line
/// every ten seconds while it runs.
async fn with_ticker<T>(
    call: impl std::future::Future<Output = T>,
    addr: &ResourceInstanceAddr,
    doing: Doing,
    shared: &Shared<'_, '_>,
) -> T {
    tokio::pin!(call);
    let started = Instant::now();
    let mut tick = tokio::time::interval_at(
        tokio::time::Instant::now() + Duration::from_secs(10),
        Duration::from_secs(10),
    );
    loop {
        tokio::select! {
            out = &mut call => return out,
            _ = tick.tick() => {
                shared.say(addr, doing, Stage::Running { elapsed: started.elapsed() });
            }
        }
    }
}

pub(crate) fn seconds(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

fn failed(addr: &ResourceInstanceAddr, e: ProviderError) -> Diagnostics {
    let mut out = Diagnostics::default();
    match e {
        ProviderError::Diagnostics { diagnostics, .. } => {
            for d in diagnostics {
                out.push(Diagnostic::error(d.summary, d.detail).about(addr.to_string()));
            }
        }
        other => {
            out.push(Diagnostic::error("Provider error", other.to_string()).about(addr.to_string()))
        }
    }
    out
}
