//! The sweep, as the planner takes it: every lane's objects that carry the
//! estate's marker and that no declared instance bound, and the records of
//! instances no block declares; each planned as a destroy at its marker's
//! address, or at a synthetic `<type>.orphan_<name>`.

use super::Planner;
use crate::addr::{call_names, InstanceKey, Mode, ModuleStep, ResourceInstanceAddr};
use crate::bind::aws::is_aws;
use crate::bind::catalogue::{Catalogue, Family};
use crate::bind::locate;
use crate::bind::sweep::{self, Orphan, Recorded};
use crate::config::{ProviderRef, ResourceKey};
use crate::diag::{Diagnostic, Diagnostics};
use crate::plan::step::Decision;
use crate::plan::{Action, Reason};
use crate::provider::{Provider, ProviderError};
use crate::session::{Launcher, Sessions};
use crate::value::{Kind, Value};
use std::collections::{BTreeMap, BTreeSet};

impl<P: Provider + Clone> Planner<'_, '_, P> {
    /// Finds every live object carrying the estate's marker (and every
    /// recorded object) that no declared instance bound, and plans its
    /// destroy. Returns their addresses in the order to destroy them:
    /// parts and record-only objects before the objects they belong to.
    pub(super) async fn sweep<L: Launcher<Provider = P>>(
        &mut self,
        sessions: &mut Sessions<L>,
    ) -> Result<Vec<ResourceInstanceAddr>, Diagnostics> {
        let declared: BTreeSet<String> = self.entries.steps.keys().map(|a| a.to_string()).collect();
        let records = match self.req.use_records {
            true => self.store.all().map_err(|e| {
                Diagnostics::from(Diagnostic::error("Unreadable record", e.to_string()))
            })?,
            false => Vec::new(),
        };
        let recorded: BTreeSet<String> = records.iter().map(|r| r.address.clone()).collect();
        // Types the tagging API may omit: those whose listing filters by
        // the estate's marker are listed in every plan (one request each,
        // naming only the estate's objects), so an object whose block and
        // record are both gone is still found; a listing of every object
        // of a type only where the estate declares or recorded one. A
        // listing of a type the estate declares or recorded must answer;
        // the others are only that net, and may fail (a root that uses no
        // EC2, under credentials that may not list it), with a warning.
        let needed: BTreeSet<String> = self
            .entries
            .steps
            .values()
            .map(|s| s.type_name.clone())
            .chain(records.iter().map(|r| r.type_name.clone()))
            .collect();
        let mut scan = needed.clone();
        scan.extend(Catalogue::builtin().listed_by_marker().map(str::to_string));
        // Every provider configuration a block used, and the default one
        // of the aws provider when the root uses it at all.
        let mut prefs: BTreeSet<ProviderRef> = self.lanes.keys().cloned().collect();
        prefs.extend(
            sessions
                .providers()
                .filter(|(_, source)| is_aws(source))
                .map(|(name, _)| ProviderRef {
                    name: name.to_string(),
                    alias: None,
                }),
        );
        let mut unlisted = BTreeMap::new();
        let mut swept = crate::bind::Held::default();
        let mut found: Vec<(ProviderRef, Orphan)> = Vec::new();
        for pref in prefs {
            let lane = self.lane(sessions, &pref).await?;
            // With no record at all (lost, or `-no-records`) while the
            // estate has objects, every other listing runs too: nothing
            // else finds an object whose block is gone of a type the
            // tagging API omits (IAM roles and users, on aws itself). Each
            // names every object of its type in the account, read for its
            // marker, so only then.
            let mut scan = scan.clone();
            if records.is_empty()
                && (!self.bound.is_empty()
                    || !lane.tagged().await.map_err(sweep_failed)?.is_empty())
            {
                scan.extend(Catalogue::builtin().listed().map(str::to_string));
            }
            let marked = sweep::marked(&lane, &scan, &needed, &self.bound, &mut swept)
                .await
                .map_err(sweep_failed)?;
            found.extend(marked.orphans.into_iter().map(|o| (pref.clone(), o)));
            unlisted.extend(marked.unlisted);
        }
        if !unlisted.is_empty() {
            // One line per reason, naming every type it stopped.
            let mut by_why: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for (t, why) in unlisted {
                by_why.entry(why).or_default().push(t);
            }
            self.diags.push(Diagnostic::warning(
                "Some types could not be listed",
                format!(
                    "The sweep lists these types for objects of the estate whose block and record are both gone; no block or record of the estate is of them, and listing them failed, so this plan would not find such an object:\n{}",
                    by_why
                        .iter()
                        .map(|(why, types)| format!("  {}: {why}", types.join(", ")))
                        .collect::<Vec<_>>()
                        .join("\n")
                ),
            ));
        }
        // Those so far were found by their marker.
        let by_marker = found.len();
        // Records of instances no block declares, by their provider.
        let mut by_provider: BTreeMap<ProviderRef, Vec<_>> = BTreeMap::new();
        for r in records {
            let Ok(addr) = r.address.parse::<ResourceInstanceAddr>() else {
                continue;
            };
            if declared.contains(&r.address) || self.entries.steps.contains_key(&addr) {
                continue;
            }
            let pref = r.provider_ref();
            if sessions.schema(&pref.name).is_none() {
                continue;
            }
            by_provider.entry(pref).or_default().push(r);
        }
        for (pref, records) in by_provider {
            let lane = self.lane(sessions, &pref).await?;
            for r in sweep::recorded(&lane, records, &self.bound, &mut swept)
                .await
                .map_err(sweep_failed)?
            {
                match r {
                    Recorded::Orphan(o) => found.push((pref.clone(), *o)),
                    Recorded::Stale(address) => self.stale_records.push(address),
                }
            }
        }
        let mut found = outliving_kept(found, by_marker, &recorded);
        // The parts of what goes, which no record names any more.
        for i in 0..found.len() {
            let (pref, parent) = found[i].clone();
            let lane = self.lane(sessions, &pref).await?;
            for o in sweep::parts(&lane, &parent, &self.bound, &mut swept)
                .await
                .map_err(sweep_failed)?
            {
                found.push((pref.clone(), o));
            }
        }
        let found = destroy_order(found);
        let mut orphans = Vec::new();
        let mut taken = declared;
        for (pref, o) in found {
            let addr = orphan_addr(&o.type_name, o.address.as_deref(), &o.id, &taken);
            taken.insert(addr.to_string());
            self.orphan(sessions, &pref, addr.clone(), o)?;
            orphans.push(addr);
        }
        Ok(orphans)
    }

    fn orphan<L: Launcher<Provider = P>>(
        &mut self,
        sessions: &Sessions<L>,
        pref: &ProviderRef,
        addr: ResourceInstanceAddr,
        o: Orphan,
    ) -> Result<(), Diagnostics> {
        let schema = sessions
            .resource_schema(&pref.name, &o.type_name)
            .ok_or_else(|| {
                Diagnostics::from(Diagnostic::error(
                    "Unsupported resource type",
                    o.type_name.to_string(),
                ))
            })?;
        // A `removed` block that keeps the object forgets it instead.
        let action = match self.kept_by_removed(&addr) {
            true => Action::Forget,
            false => Action::Delete,
        };
        let reason = match &addr.key {
            _ if !self.module_instance_declared(&addr.module) => Reason::DeleteBecauseNoModule,
            Some(InstanceKey::Int(_)) if self.declares(&addr) => Reason::DeleteBecauseCountIndex,
            Some(InstanceKey::Str(_)) if self.declares(&addr) => Reason::DeleteBecauseEachKey,
            _ => Reason::DeleteBecauseNoResourceConfig,
        };
        self.entries.add(Decision {
            addr,
            previous_addr: None,
            key: None,
            provider: pref.clone(),
            source: sessions.source(&pref.name),
            type_name: o.type_name,
            identity: o.ident,
            action,
            reason: Some(reason),
            before: Some(o.state.value.clone()),
            after: None,
            prior: Some(o.state),
            id: Some(o.id),
            schema,
            replace_paths: Vec::new(),
            deposed: Vec::new(),
            importing: None,
        });
        Ok(())
    }

    /// Whether a `removed` block with `destroy = false` names `addr`: its
    /// resource, or a module call it is within.
    fn kept_by_removed(&self, addr: &ResourceInstanceAddr) -> bool {
        let calls = call_names(&addr.module);
        self.req.tree.modules().into_iter().any(|t| {
            t.module.removed.iter().filter(|r| !r.destroy).any(|r| {
                let from: Vec<String> = t.path.iter().chain(&r.from.module).cloned().collect();
                match &r.from.resource {
                    Some(key) => {
                        calls == from
                            && key.mode == addr.mode
                            && key.type_name == addr.type_name
                            && key.name == addr.name
                    }
                    None => calls.starts_with(&from),
                }
            })
        })
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

/// The swept objects but those found by their marker alone (among the
/// first `by_marker` of `found`, at an address no record names) of a type
/// whose objects outlive their destroy (a VPC's adopted default ACL),
/// while the object they are `within` stays: such a one goes beside that
/// object's destroy. (On moto a deleted VPC's default ACL stays, marked.)
fn outliving_kept(
    found: Vec<(ProviderRef, Orphan)>,
    by_marker: usize,
    recorded: &BTreeSet<String>,
) -> Vec<(ProviderRef, Orphan)> {
    let going: BTreeSet<(String, String)> = found
        .iter()
        .map(|(_, o)| (o.type_name.clone(), o.id.clone()))
        .collect();
    found
        .into_iter()
        .enumerate()
        .filter(|(i, (_, o))| {
            let Some(within) = &o.ident.entry.within else {
                return true;
            };
            let owner = o.state.value.get(&within.attr).and_then(Value::as_str);
            *i >= by_marker
                || o.address.as_deref().is_some_and(|a| recorded.contains(a))
                || owner
                    .is_some_and(|id| going.contains(&(within.type_name.clone(), id.to_string())))
        })
        .map(|(_, f)| f)
        .collect()
}

/// The order to destroy swept objects in: an object goes before every
/// object it refers to by value (a subnet's `vpc_id` names its VPC), as
/// terraform destroys dependents first; parts and record-only objects
/// before tagged ones where nothing else decides. A cycle keeps that order.
fn destroy_order(mut found: Vec<(ProviderRef, Orphan)>) -> Vec<(ProviderRef, Orphan)> {
    found.sort_by_key(|(_, o)| o.ident.family == Family::Tagged);
    let handles: Vec<BTreeSet<String>> = found
        .iter()
        .map(|(_, o)| {
            locate::handles(&o.ident, Some(&o.id), &o.state.value)
                .into_iter()
                .collect()
        })
        .collect();
    let mentions: Vec<BTreeSet<String>> = found
        .iter()
        .map(|(_, o)| {
            let mut out = BTreeSet::new();
            strings(&o.state.value, &mut out);
            out
        })
        .collect();
    // refers[a] holds b when object a names object b.
    let refers: Vec<Vec<usize>> = (0..found.len())
        .map(|a| {
            (0..found.len())
                .filter(|&b| b != a && !handles[b].is_disjoint(&mentions[a]))
                .collect()
        })
        .collect();
    let mut left: Vec<usize> = (0..found.len()).collect();
    let mut order = Vec::new();
    while !left.is_empty() {
        // The first object no other remaining object refers to.
        let next = left
            .iter()
            .position(|&b| !left.iter().any(|&a| a != b && refers[a].contains(&b)))
            .unwrap_or(0);
        order.push(left.remove(next));
    }
    let mut slots: Vec<Option<(ProviderRef, Orphan)>> = found.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// Every string in a value, tags aside (a tag's value names nothing).
fn strings(v: &Value, out: &mut BTreeSet<String>) {
    match &v.kind {
        Kind::String(s) => {
            out.insert(s.clone());
        }
        Kind::Object(m) => {
            for (k, e) in m {
                if k != "tags" && k != "tags_all" {
                    strings(e, out);
                }
            }
        }
        Kind::Map(_, m) => m.values().for_each(|e| strings(e, out)),
        Kind::List(_, e) | Kind::Set(_, e) | Kind::Tuple(e) => {
            e.iter().for_each(|e| strings(e, out))
        }
        _ => {}
    }
}

/// A swept object's address: its address marker when that names an
/// instance of its type that nothing declares now (nor another swept
/// object took), else a synthetic `<type>.orphan_<name>`.
fn orphan_addr(
    type_name: &str,
    marker: Option<&str>,
    id: &str,
    taken: &BTreeSet<String>,
) -> ResourceInstanceAddr {
    if let Some(a) = marker.and_then(|m| m.parse::<ResourceInstanceAddr>().ok()) {
        if a.type_name == type_name && a.mode == Mode::Managed && !taken.contains(&a.to_string()) {
            return a;
        }
    }
    ResourceInstanceAddr::managed(type_name, &sweep::orphan_name(id))
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

    #[test]
    fn swept_objects_are_destroyed_before_what_they_name() {
        let orphan = |ty: &str, id: &str, attrs: &[(&str, &str)]| {
            let mut m: std::collections::BTreeMap<String, Value> = attrs
                .iter()
                .map(|(k, v)| (k.to_string(), Value::string(*v)))
                .collect();
            m.insert("id".into(), Value::string(id));
            (
                ProviderRef {
                    name: "aws".into(),
                    alias: None,
                },
                Orphan {
                    type_name: ty.into(),
                    id: id.into(),
                    state: crate::provider::ResourceState {
                        value: Value::object(m),
                        private: Vec::new(),
                    },
                    address: None,
                    ident: crate::bind::catalogue::Identity::of(ty, true),
                },
            )
        };
        let found = vec![
            orphan("aws_vpc", "vpc-1", &[]),
            orphan("aws_route_table", "rtb-1", &[("vpc_id", "vpc-1")]),
            orphan("aws_subnet", "subnet-1", &[("vpc_id", "vpc-1")]),
            orphan(
                "aws_route_table_association",
                "rtbassoc-1",
                &[("subnet_id", "subnet-1"), ("route_table_id", "rtb-1")],
            ),
            orphan("aws_s3_bucket", "b", &[]),
        ];
        let order: Vec<String> = destroy_order(found)
            .into_iter()
            .map(|(_, o)| o.id)
            .collect();
        let at = |id: &str| order.iter().position(|o| o == id).unwrap();
        assert!(at("rtbassoc-1") < at("subnet-1"), "{order:?}");
        assert!(at("rtbassoc-1") < at("rtb-1"), "{order:?}");
        assert!(at("subnet-1") < at("vpc-1"), "{order:?}");
        assert!(at("rtb-1") < at("vpc-1"), "{order:?}");
        assert_eq!(order.len(), 5);
    }
}
