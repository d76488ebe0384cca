//! Apply: the only place that changes the live system.
//!
//! The plan's steps are carried out in dependency order (destroys in
//! reverse), each instance's configuration evaluated again with what its
//! dependencies became, so values known only after apply flow on. Each
//! change writes its record the moment it commits.

use crate::addr::{Mode, ResourceInstanceAddr};
use crate::bind::identity::{self, Locate, Marks, Row};
use crate::bind::marker;
use crate::config::Resource;
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::body::decode;
use crate::eval::module::{expansion, Expansion, Instance, ModuleValues};
use crate::graph::Node;
use crate::plan::Action;
use crate::planner::{instance_addr, Planned, Request, Step};
use crate::provider::grpc::GrpcProvider;
use crate::provider::proposed::proposed_new;
use crate::provider::{Provider, ProviderError, ResourceState};
use crate::record::{self, Record, RecordStore};
use crate::session::Sessions;
use crate::value::{Type, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// What an apply did.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    pub added: usize,
    pub changed: usize,
    pub destroyed: usize,
    pub outputs: BTreeMap<String, Value>,
}

/// Where apply reports progress, one line at a time, as terraform words it.
pub trait Progress {
    fn line(&mut self, line: String);
}

impl<F: FnMut(String)> Progress for F {
    fn line(&mut self, line: String) {
        self(line)
    }
}

/// Carries out `planned`. On failure, what committed before it is in
/// `Applied` (and recorded), and the error says what failed.
pub async fn apply(
    req: &Request<'_>,
    planned: &Planned,
    sessions: &mut Sessions,
    store: &RecordStore,
    progress: &mut dyn Progress,
) -> Result<Applied, (Applied, Diagnostics)> {
    let mut a = Applier {
        req,
        planned,
        store,
        values: ModuleValues::new(req.vars.clone(), &req.module.dir, &req.module.dir),
        done: Applied::default(),
        progress,
    };
    let result = a.run(sessions).await;
    let done = std::mem::take(&mut a.done);
    match result {
        Ok(()) => Ok(done),
        Err(d) => Err((done, d)),
    }
}

struct Applier<'a, 'r> {
    req: &'a Request<'r>,
    planned: &'a Planned,
    store: &'a RecordStore,
    values: ModuleValues,
    done: Applied,
    progress: &'a mut dyn Progress,
}

impl Applier<'_, '_> {
    async fn run(&mut self, sessions: &mut Sessions) -> Result<(), Diagnostics> {
        let module = self.req.module;
        if self.req.destroy {
            for node in self.planned.order.iter().rev() {
                if let Node::Resource(key) = node {
                    let steps: Vec<&Step> = self
                        .planned
                        .steps
                        .values()
                        .filter(|s| s.key.as_ref() == Some(key))
                        .collect();
                    for step in steps {
                        self.destroy(sessions, step).await?;
                    }
                }
            }
        } else {
            for node in &self.planned.order {
                match node {
                    Node::Variable(_) | Node::ModuleCall(_) | Node::Provider(_) => {}
                    Node::Local(name) => {
                        let v = self
                            .values
                            .eval(&module.locals[name].expr, &Instance::default())?;
                        self.values.locals.insert(name.clone(), v);
                    }
                    Node::Output(name) => {
                        let v = self
                            .values
                            .eval(&module.outputs[name].value, &Instance::default())?;
                        self.values.outputs.insert(name.clone(), v);
                    }
                    Node::Resource(key) => {
                        let res = &module.resources[key];
                        match key.mode {
                            Mode::Managed => self.managed(sessions, res).await?,
                            Mode::Data => self.data(sessions, res).await?,
                        }
                    }
                }
            }
        }
        for addr in &self.planned.orphans {
            if let Some(step) = self.planned.steps.get(addr) {
                self.destroy(sessions, step).await?;
            }
        }
        self.done.outputs = self.values.outputs.clone();
        Ok(())
    }

    async fn data(&mut self, sessions: &mut Sessions, res: &Resource) -> Result<(), Diagnostics> {
        let pref = res.provider_ref();
        let Some(schema) = sessions
            .schema(&pref.name)
            .and_then(|s| s.data_sources.get(&res.key.type_name).cloned())
        else {
            return Ok(());
        };
        let exp = expansion(
            &self.values,
            res.count.as_ref(),
            res.for_each.as_ref(),
            false,
        )?;
        let mut values = Vec::new();
        for (_, instance) in exp.instances() {
            let scope = self.values.scope_for(&res.config.references(), &instance);
            let config = decode(&res.config, &schema.block, &scope)?;
            let provider = sessions.get(&pref).await?;
            let v = provider
                .read_data_source(&res.key.type_name, &config)
                .await
                .map_err(|e| failed(&instance_addr(&res.key, None), e))?;
            values.push(v);
        }
        self.values
            .resources
            .insert(res.key.clone(), exp.assemble(values));
        Ok(())
    }

    async fn managed(
        &mut self,
        sessions: &mut Sessions,
        res: &Resource,
    ) -> Result<(), Diagnostics> {
        let key = &res.key;
        let exp = expansion(
            &self.values,
            res.count.as_ref(),
            res.for_each.as_ref(),
            false,
        )?;
        let mut afters = Vec::new();
        for (inst_key, instance) in exp.instances() {
            let addr = instance_addr(key, inst_key);
            let Some(step) = self.planned.steps.get(&addr) else {
                afters.push(Value::unknown(Type::Dynamic));
                continue;
            };
            let row = identity::row(&step.type_name).expect("planned types have rows");
            let after = match step.action {
                Action::NoOp | Action::Read => step
                    .prior
                    .as_ref()
                    .map(|p| p.value.clone())
                    .unwrap_or_else(|| Value::unknown(Type::Dynamic)),
                Action::Delete => {
                    self.destroy(sessions, step).await?;
                    Value::null(Type::Dynamic)
                }
                Action::Create | Action::Update | Action::Replace { .. } => {
                    let scope = self.values.scope_for(&res.config.references(), &instance);
                    let config = decode(&res.config, &step.schema.block, &scope)?;
                    let config = match row.marks {
                        Marks::Tags => marker::with_markers(
                            config,
                            &self.req.settings.estate,
                            &addr.to_string(),
                        ),
                        Marks::Parent(_) => config,
                    };
                    let live = step.prior.as_ref().map(|p| &p.value);
                    let config =
                        crate::planner::keep_live_json(keep_ignored(res, config, live), live);
                    match step.action {
                        Action::Replace {
                            create_before_destroy: false,
                        } => {
                            self.destroy(sessions, step).await?;
                            self.create_or_update(sessions, step, row, &config, None)
                                .await?
                        }
                        Action::Replace {
                            create_before_destroy: true,
                        } => {
                            let v = self
                                .create_or_update(sessions, step, row, &config, None)
                                .await?;
                            self.destroy_object(sessions, step, false).await?;
                            v
                        }
                        Action::Update => {
                            self.create_or_update(sessions, step, row, &config, step.prior.as_ref())
                                .await?
                        }
                        _ => {
                            self.create_or_update(sessions, step, row, &config, None)
                                .await?
                        }
                    }
                }
            };
            afters.push(after);
        }
        let whole = match exp {
            Expansion::Unknown => Value::unknown(Type::Dynamic),
            _ => exp.assemble(afters),
        };
        self.values.resources.insert(key.clone(), whole);
        Ok(())
    }

    /// Plans the change again with the configuration as it now evaluates,
    /// applies it, and records the result.
    async fn create_or_update(
        &mut self,
        sessions: &mut Sessions,
        step: &Step,
        row: &Row,
        config: &Value,
        prior: Option<&ResourceState>,
    ) -> Result<Value, Diagnostics> {
        let addr = &step.addr;
        let ty = step.schema.block.implied_type().without_optional();
        let null = ResourceState {
            value: Value::null(ty),
            private: Vec::new(),
        };
        let prior = prior.unwrap_or(&null);
        let creating = prior.value.is_null();
        let provider = sessions.get(&step.provider).await?;
        let proposed = proposed_new(&step.schema.block, &prior.value, config);
        let mut planned = provider
            .plan_resource_change(&step.type_name, prior, &proposed, config)
            .await
            .map_err(|e| failed(addr, e))?;
        let res = step
            .key
            .as_ref()
            .and_then(|k| self.req.module.resources.get(k));
        if let (Some(res), false) = (res, creating) {
            planned.planned_state =
                crate::planner::ignore_changes(res, planned.planned_state, Some(&prior.value));
        }
        let id = prior
            .value
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_string);
        let started = Instant::now();
        if creating {
            self.progress.line(format!("{addr}: Creating..."));
        } else {
            self.progress.line(format!(
                "{addr}: Modifying... [id={}]",
                id.clone().unwrap_or_default()
            ));
        }
        let verb = if creating { "creating" } else { "modifying" };
        let result = with_ticker(
            provider.apply_resource_change(&step.type_name, &prior.value, &planned, config),
            addr,
            verb,
            &mut *self.progress,
        )
        .await;
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
        let elapsed = seconds(started.elapsed());
        let new_id = state
            .value
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if creating {
            self.progress.line(format!(
                "{addr}: Creation complete after {elapsed} [id={new_id}]"
            ));
            self.done.added += 1;
        } else {
            self.progress.line(format!(
                "{addr}: Modifications complete after {elapsed} [id={new_id}]"
            ));
            self.done.changed += 1;
        }
        self.record(step, row, config, &state)?;
        Ok(state.value)
    }

    fn record(
        &self,
        step: &Step,
        row: &Row,
        config: &Value,
        state: &ResourceState,
    ) -> Result<(), Diagnostics> {
        let id = match row.locate {
            Locate::Record | Locate::Template(_) => state
                .value
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_string),
            Locate::Lookup { id, .. } => state
                .value
                .get(id)
                .and_then(Value::as_str)
                .map(str::to_string),
            Locate::Attr(a) => config.get(a).and_then(Value::as_str).map(str::to_string),
            Locate::Joined(attrs, sep) => attrs
                .iter()
                .map(|a| config.get(a).and_then(Value::as_str).map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .map(|p| p.join(sep)),
        };
        let mut r = Record {
            address: step.addr.to_string(),
            type_name: step.type_name.clone(),
            id,
            ..Record::default()
        };
        for name in row.config_only {
            if let Some(j) = state
                .value
                .get(name)
                .filter(|v| !v.is_null())
                .and_then(record::to_json)
            {
                r.config_only.insert(name.to_string(), j);
            }
        }
        r.set_private(&state.private);
        self.store.put(&r).map_err(|e| {
            Diagnostics::from(
                Diagnostic::error(
                    "Failed to write record",
                    format!("{} committed, but its record could not be written: {e}. The next plan still finds the object by its markers.", step.addr),
                )
                .about(step.addr.to_string()),
            )
        })
    }

    async fn destroy(&mut self, sessions: &mut Sessions, step: &Step) -> Result<(), Diagnostics> {
        self.destroy_object(sessions, step, true).await
    }

    /// Destroys the step's prior object; `forget` removes its record.
    async fn destroy_object(
        &mut self,
        sessions: &mut Sessions,
        step: &Step,
        forget: bool,
    ) -> Result<(), Diagnostics> {
        let Some(prior) = &step.prior else {
            return Ok(());
        };
        let addr = &step.addr;
        let provider = sessions.get(&step.provider).await?;
        let id = prior
            .value
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        self.progress
            .line(format!("{addr}: Destroying... [id={id}]"));
        let started = Instant::now();
        let result = destroy_state(provider, &step.type_name, prior, &step.schema).await;
        if let Err(e) = result {
            return Err(failed(addr, e));
        }
        self.progress.line(format!(
            "{addr}: Destruction complete after {}",
            seconds(started.elapsed())
        ));
        self.done.destroyed += 1;
        if forget {
            self.store.remove(&addr.to_string()).map_err(|e| {
                Diagnostics::from(Diagnostic::error(
                    "Failed to remove record",
                    format!("{addr} is destroyed, but its record could not be removed: {e}."),
                ))
            })?;
        }
        Ok(())
    }
}

/// Plans and applies the destroy of one live object.
pub async fn destroy_state(
    provider: &mut GrpcProvider,
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
        (_, Some(_)) => crate::planner::ignore_changes(res, config, prior),
    }
}

/// Runs a provider call, printing terraform's "Still creating..." line
/// every ten seconds while it runs.
async fn with_ticker<T>(
    call: impl std::future::Future<Output = T>,
    addr: &ResourceInstanceAddr,
    verb: &str,
    progress: &mut dyn Progress,
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
                progress.line(format!("{addr}: Still {verb}... [{} elapsed]", seconds(started.elapsed())));
            }
        }
    }
}

fn seconds(d: Duration) -> String {
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
