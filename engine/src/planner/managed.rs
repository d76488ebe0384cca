//! A managed block's instances, as named steps: gather each instance's
//! configuration and record; bind (the first look for every instance at
//! once, as terraform refreshes, then the second look and deposed objects
//! in address order); claim ownership; decide the action with the
//! provider; record the change and what flows downstream.

use super::{provider_failed, unsupported_type, Planner, READS_IN_FLIGHT};
use crate::addr::ResourceInstanceAddr;
use crate::bind::aws::Lane;
use crate::bind::catalogue::{Family, Identity};
use crate::bind::locate;
use crate::bind::marker::{self, Owner};
use crate::config::{ProviderRef, Resource};
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::body::decode;
use crate::eval::module::{expansion, Expansion};
use crate::plan::objchange::{
    default_config_only, forcing, ignore_changes, keep_live_json, patch_config_only, same,
};
use crate::plan::step::{Decision, DeposedObject};
use crate::plan::{Action, Reason};
use crate::provider::proposed::proposed_new;
use crate::provider::schema::Schema;
use crate::provider::{PlannedChange, Provider, ProviderError, ResourceState};
use crate::record::Record;
use crate::session::{Launcher, Sessions};
use crate::value::{Type, Value};
use futures_util::StreamExt;
use std::rc::Rc;
use std::sync::Arc;

/// One instance as configured, before anything is read.
struct Input {
    addr: ResourceInstanceAddr,
    config: Value,
    record: Option<Record>,
    /// The ID an `import` block names it by.
    import: Option<String>,
}

/// The first look's answer: the ID looked for and the object.
type FirstLook = Result<locate::Look, ProviderError>;

/// An instance bound: its live object, if any, and what else the binding
/// found.
struct Bound {
    found: Option<(String, ResourceState)>,
    /// How it was found.
    via: Option<locate::Via>,
    deposed: Vec<DeposedObject>,
    /// The ID an `import` block adopts the object by.
    importing: Option<String>,
    /// The address a `moved` block renames from, when only that address's
    /// record or marker found the object.
    moved_from: Option<ResourceInstanceAddr>,
}

/// What the planner knows of the block being planned.
struct Block<'b, P> {
    res: &'b Resource,
    pref: ProviderRef,
    source: String,
    schema: Arc<Schema>,
    lane: Rc<Lane<P>>,
    ident: Identity,
}

impl<P: Provider + Clone> Planner<'_, '_, P> {
    pub(super) async fn managed<L: Launcher<Provider = P>>(
        &mut self,
        res: &Resource,
        sessions: &mut Sessions<L>,
    ) -> Result<(), Diagnostics> {
        let pref = self.provider_of(res);
        let schema = sessions
            .resource_schema(&pref.name, &res.key.type_name)
            .ok_or_else(|| unsupported_type(res, "resource type"))?;
        let lane = self.lane(sessions, &pref).await?;
        let block = Block {
            res,
            source: sessions.source(&pref.name),
            pref,
            ident: lane.identity(&res.key.type_name),
            schema,
            lane,
        };
        let exp = expansion(
            self.values(),
            res.count.as_ref(),
            res.for_each.as_ref(),
            false,
        )?;
        let inputs = self.inputs(&block, &exp)?;
        let firsts = first_looks(&block, &inputs).await;
        let mut afters = Vec::new();
        for (input, first) in inputs.into_iter().zip(firsts) {
            if let Some(v) = self.instance(&block, input, first).await? {
                afters.push(v);
            }
        }
        let whole = match exp {
            Expansion::Unknown => Value::unknown(Type::Dynamic),
            _ => exp.assemble(afters),
        };
        self.values_mut().resources.insert(res.key.clone(), whole);
        Ok(())
    }

    /// Each instance's configuration, record and import block.
    fn inputs(&self, block: &Block<'_, P>, exp: &Expansion) -> Result<Vec<Input>, Diagnostics> {
        let res = block.res;
        let mut inputs = Vec::new();
        for (inst_key, instance) in exp.instances() {
            let addr = res.key.instance(&self.here, inst_key.clone());
            if !self.targets_instance(&addr) {
                continue;
            }
            let scope = self.values().scope_for(&res.config.references(), &instance);
            let config = decode(&res.config, &block.schema.block, &scope)?;
            let record = self.record_of(res, &addr)?;
            let import = self.import_id(&addr)?;
            inputs.push(Input {
                addr,
                config,
                record,
                import,
            });
        }
        Ok(inputs)
    }

    /// The record of `addr`, when this plan reads records.
    fn record_of(
        &self,
        res: &Resource,
        addr: &ResourceInstanceAddr,
    ) -> Result<Option<Record>, Diagnostics> {
        if !self.req.use_records {
            return Ok(None);
        }
        self.store.get(addr).map_err(|e| {
            Diagnostic::error("Unreadable record", e.to_string())
                .at(res.range.clone())
                .into()
        })
    }

    /// Plans one instance; returns the value what refers to it sees (none
    /// for an instance a destroy plan has nothing to do for but count).
    async fn instance(
        &mut self,
        block: &Block<'_, P>,
        input: Input,
        first: FirstLook,
    ) -> Result<Option<Value>, Diagnostics> {
        let res = block.res;
        let addr = input.addr.clone();
        if let Some(k) = crate::bind::aws::writes_marker(&input.config) {
            if block.ident.family != Family::Tagged {
                return Err(refusal(
                    res,
                    &addr,
                    "Marker tag written by a block",
                    format!("{addr} writes the tag \"{k}\", which is an estate's marker: only the engine writes markers, in the call that creates the object. Give the tag another key."),
                ));
            }
        }
        let mut bound = self.bind(block, &input, first).await?;
        if self.req.refresh_only {
            // Nothing is destroyed, and nothing adopted: an object only an
            // `import` block names is not the estate's yet.
            bound.deposed.clear();
            if bound.importing.take().is_some() {
                bound.found = None;
            }
        }
        let Bound {
            found,
            via,
            deposed,
            importing,
            moved_from,
        } = bound;
        if !block.ident.catalogued {
            self.uncatalogued.push((addr.clone(), via));
        }
        // Where its object lived before, by its marker or the record that
        // found it: a rename's old address, whose record (what the live
        // system cannot tell) moves with it, as a state's entry does.
        let previous_addr = found
            .as_ref()
            .and_then(|(_, s)| match marker::owner(&s.value) {
                Owner::Estate {
                    address: Some(a), ..
                } => a.parse::<ResourceInstanceAddr>().ok(),
                _ => None,
            })
            .filter(|old| *old != addr && self.moved(old, &addr))
            .or(moved_from);
        let mut input = input;
        if let (None, Some(old)) = (&input.record, &previous_addr) {
            input.record = self.record_of(res, old)?;
        }
        let prior = match found {
            Some((id, mut state)) => {
                let listed = block.ident.config_only();
                let config_only = Record::config_only_with(input.record.as_ref(), &listed);
                patch_config_only(
                    &mut state.value,
                    &input.config,
                    input.record.as_ref(),
                    &config_only,
                    &block.schema,
                );
                self.bound.hold(&res.key.type_name, &id, &state.value);
                // Its record names it by the import ID its own state gives,
                // which may differ from the one configuration gave (a
                // rule's ports as the provider normalises them): that
                // record is this instance's, under an old address, and
                // never an orphan.
                if let Some(own) = block.ident.import_id(&state.value) {
                    self.bound.insert(&res.key.type_name, &own);
                }
                Some((id, state))
            }
            None => None,
        };
        if let Some(old) = &previous_addr {
            self.stale_records.push(old.to_string());
        }
        if let Some((id, state)) = &prior {
            self.check_strict_markers(
                res,
                &addr,
                &block.ident,
                id,
                &state.value,
                previous_addr.is_some(),
            )?;
        }
        self.check_strict_secrets(
            res,
            &addr,
            &Record::config_only_with(input.record.as_ref(), &block.ident.config_only()),
            &block.schema,
            &input.config,
        )?;
        if block.ident.record_only() {
            self.by_record.push(addr.clone());
        }
        let Some(decided) = self.decide(block, &input, prior.as_ref()).await? else {
            return Ok(Some(Value::unknown(
                block.schema.block.implied_type().without_optional(),
            )));
        };
        let (action, before, after, replace_paths) = decided;
        // A destroy plan still evaluates what refers to the object: as it is.
        let downstream = after.clone().or_else(|| before.clone()).unwrap_or_else(|| {
            Value::unknown(block.schema.block.implied_type().without_optional())
        });
        if block.ident.family == Family::Tagged {
            for v in [before.as_ref(), after.as_ref()].into_iter().flatten() {
                let id = prior.as_ref().map(|p| p.0.as_str());
                self.owned.extend(locate::handles(&block.ident, id, v));
            }
        }
        let reason = match action {
            Action::Replace { .. } if self.req.replace.contains(&addr) => {
                Some(Reason::ReplaceByRequest)
            }
            Action::Replace { .. } => Some(Reason::ReplaceBecauseCannotUpdate),
            _ => None,
        };
        let (id, prior) = match prior {
            Some((id, state)) => (Some(id), Some(state)),
            None => (None, None),
        };
        self.entries.add(Decision {
            addr,
            previous_addr,
            key: Some(res.key.clone()),
            provider: block.pref.clone(),
            source: block.source.clone(),
            type_name: res.key.type_name.clone(),
            identity: block.ident.clone(),
            action,
            reason,
            before,
            after,
            prior,
            id,
            schema: block.schema.clone(),
            replace_paths,
            deposed,
            importing,
        });
        Ok(Some(downstream))
    }

    /// Binds an instance: the first look's object, else the second look's;
    /// its deposed objects; and its ownership claimed.
    async fn bind(
        &mut self,
        block: &Block<'_, P>,
        input: &Input,
        first: FirstLook,
    ) -> Result<Bound, Diagnostics> {
        let (res, addr) = (block.res, &input.addr);
        let failed = |e| provider_failed(res, addr, e);
        let mut moved_from = None;
        let found = match first.map_err(failed)? {
            (Some(id), via, Some(state)) => Some((id, via, state)),
            (Some(_), _, None) if input.import.is_some() => {
                return Err(refusal(
                    res,
                    addr,
                    "Cannot import non-existent remote object",
                    format!(
                        "While attempting to import an existing object to \"{addr}\", the provider detected that no object exists with the given id. Only pre-existing objects can be imported; check that the id is correct and that it is associated with the provider's configured region or endpoint, or remove the import block to create a new remote object for this resource."
                    ),
                ));
            }
            (tried, _, _) => {
                let here = locate::second_look(
                    &block.lane,
                    &block.ident,
                    &addr.to_string(),
                    input.record.as_ref(),
                    tried.as_deref(),
                    &self.bound,
                )
                .await
                .map_err(failed)?;
                match here {
                    Some(found) => Some(found),
                    None => {
                        let moved = self.where_moved_from(block, addr, tried.as_deref()).await?;
                        moved_from = moved.as_ref().map(|(old, _)| old.clone());
                        moved.map(|(_, found)| found)
                    }
                }
            }
        };
        // A type outside the catalogue whose marked object no ID read back:
        // the plan says so rather than pass over it in silence.
        if found.is_none() && !block.ident.catalogued && block.ident.is_tagged() {
            let arns = block
                .lane
                .marked_arns(&addr.to_string())
                .await
                .map_err(failed)?;
            if !arns.is_empty() {
                self.unbound.push((addr.clone(), arns));
            }
        }
        let deposed = self
            .deposed(block, input.record.as_ref())
            .await
            .map_err(failed)?;
        // An import block adopts an object this estate does not own yet
        // and no other estate has marked; one this estate already owns is
        // simply bound, as stock terraform skips the import of an instance
        // its state already holds.
        let via = found.as_ref().map(|f| f.1);
        let found = found.map(|(id, _, state)| (id, state));
        let mut importing = None;
        if let Some((id, state)) = &found {
            let verdict = self
                .check_owner(
                    block.lane.as_ref(),
                    res,
                    addr,
                    &block.ident,
                    id,
                    &state.value,
                    &input.config,
                    input.record.as_ref(),
                )
                .await;
            let another = matches!(
                marker::owner(&state.value),
                Owner::Estate { estate, .. } if estate != self.req.settings.estate
            );
            match (verdict, input.import.is_some()) {
                (Err(_), true) if !another => importing = Some(id.clone()),
                (Err(e), _) => return Err(e),
                (Ok(()), _) => {}
            }
        }
        Ok(Bound {
            found,
            via,
            deposed,
            importing,
            moved_from,
        })
    }

    /// The second look under each address a `moved` block renames to
    /// `addr`, with that address's record: an object whose ID aws
    /// generates (a security group, a VPC) is named by nothing in
    /// configuration, so only its old record or old marker finds it.
    async fn where_moved_from(
        &self,
        block: &Block<'_, P>,
        addr: &ResourceInstanceAddr,
        tried: Option<&str>,
    ) -> Result<Option<(ResourceInstanceAddr, (String, locate::Via, ResourceState))>, Diagnostics>
    {
        let res = block.res;
        for old in self.moved_sources(addr) {
            let record = self.record_of(res, &old)?;
            let found = locate::second_look(
                &block.lane,
                &block.ident,
                &old.to_string(),
                record.as_ref(),
                tried,
                &self.bound,
            )
            .await
            .map_err(|e| provider_failed(res, addr, e))?;
            if let Some(found) = found {
                return Ok(Some((old, found)));
            }
        }
        Ok(None)
    }

    /// The deposed objects an instance's record names that still exist:
    /// an apply stopped between a create_before_destroy replacement's
    /// create and its destroy.
    async fn deposed(
        &mut self,
        block: &Block<'_, P>,
        record: Option<&Record>,
    ) -> Result<Vec<DeposedObject>, ProviderError> {
        let mut out = Vec::new();
        for d in record.map(|r| r.deposed.as_slice()).unwrap_or_default() {
            let Some(state) = block.lane.read(&block.ident.type_name, &d.id).await? else {
                continue;
            };
            if !locate::is_ours(&self.req.settings.estate, &block.ident, &state.value, None) {
                continue;
            }
            self.bound.hold(&block.ident.type_name, &d.id, &state.value);
            out.push(DeposedObject {
                entry: d.clone(),
                state,
            });
        }
        Ok(out)
    }

    /// Decides the action with the provider: the configuration adjusted
    /// (ignore_changes, live JSON, markers), then planned from the live
    /// object. `None` for an instance with no object in a destroy plan.
    #[allow(clippy::type_complexity)]
    async fn decide(
        &mut self,
        block: &Block<'_, P>,
        input: &Input,
        prior: Option<&(String, ResourceState)>,
    ) -> Result<
        Option<(
            Action,
            Option<Value>,
            Option<Value>,
            Vec<crate::provider::path::AttributePath>,
        )>,
        Diagnostics,
    > {
        let (res, addr) = (block.res, &input.addr);
        let failed = |e| provider_failed(res, addr, e);
        let type_name = &res.key.type_name;
        let live = prior.map(|p| &p.1.value);
        let config = keep_live_json(ignore_changes(res, input.config.clone(), live), live);
        let marked = match block.ident.family {
            Family::Tagged => {
                marker::with_markers(config, &self.req.settings.estate, &addr.to_string())
            }
            Family::Part(_) | Family::Record => config,
        };
        // A refresh-only plan keeps every object as it is, and plans
        // nothing for an instance with none.
        if self.req.refresh_only {
            return Ok(prior.map(|(_, state)| {
                let live = state.value.clone();
                (Action::NoOp, Some(live.clone()), Some(live), Vec::new())
            }));
        }
        let mut provider = block.lane.provider();
        Ok(Some(match (prior, self.req.destroy) {
            (None, true) => return Ok(None),
            (None, false) => {
                self.check_strict_create(res, addr, &block.ident)?;
                let planned = plan_create(&mut provider, type_name, &block.schema, &marked)
                    .await
                    .map_err(failed)?;
                (
                    Action::Create,
                    None,
                    Some(planned.planned_state),
                    Vec::new(),
                )
            }
            (Some((_, state)), true) => {
                self.check_prevent_destroy(res, addr)?;
                (Action::Delete, Some(state.value.clone()), None, Vec::new())
            }
            (Some((_, state)), false) => {
                let proposed = proposed_new(&block.schema.block, &state.value, &marked);
                let mut planned = provider
                    .plan_resource_change(type_name, state, &proposed, &marked)
                    .await
                    .map_err(failed)?;
                // As terraform does, ignore_changes applies to the
                // provider's plan as well as to the configuration.
                planned.planned_state =
                    ignore_changes(res, planned.planned_state, Some(&state.value));
                let mut live = state.value.clone();
                let listed = block.ident.config_only();
                default_config_only(
                    &mut live,
                    &planned.planned_state,
                    &Record::config_only_with(input.record.as_ref(), &listed),
                );
                let replace_paths =
                    forcing(&live, &planned.planned_state, &planned.requires_replace);
                let requested = self.req.replace.contains(addr);
                if same(&planned.planned_state, &live) && !requested {
                    (Action::NoOp, Some(live.clone()), Some(live), Vec::new())
                } else if requested || !replace_paths.is_empty() {
                    self.check_prevent_destroy(res, addr)?;
                    let create = plan_create(&mut provider, type_name, &block.schema, &marked)
                        .await
                        .map_err(failed)?;
                    (
                        Action::Replace {
                            create_before_destroy: res.lifecycle.create_before_destroy,
                        },
                        Some(live),
                        Some(create.planned_state),
                        replace_paths,
                    )
                } else {
                    (
                        Action::Update,
                        Some(live),
                        Some(planned.planned_state),
                        Vec::new(),
                    )
                }
            }
        }))
    }
}

/// The first look for every instance of a block at once (an import
/// block's ID, else the catalogue's identity), as terraform refreshes.
async fn first_looks<P: Provider + Clone>(
    block: &Block<'_, P>,
    inputs: &[Input],
) -> Vec<FirstLook> {
    futures_util::stream::iter(inputs.iter().map(|input| async move {
        match &input.import {
            Some(id) => block
                .lane
                .read(&block.ident.type_name, id)
                .await
                .map(|found| (Some(id.clone()), locate::Via::Import, found)),
            None => {
                locate::first_look(
                    &block.lane,
                    &block.ident,
                    &input.config,
                    input.record.as_ref(),
                )
                .await
            }
        }
    }))
    .buffered(READS_IN_FLIGHT)
    .collect()
    .await
}

/// Plans a create from nothing.
pub(super) async fn plan_create<P: Provider>(
    provider: &mut P,
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

/// An error about one instance, at its block.
pub(super) fn refusal(
    res: &Resource,
    addr: &ResourceInstanceAddr,
    summary: &str,
    detail: String,
) -> Diagnostics {
    Diagnostic::error(summary, detail)
        .at(res.range.clone())
        .about(addr.to_string())
        .into()
}
