//! `choudoufu migrate`: a stock terraform state taken into an estate.
//!
//! Every instance the state holds is read live through its provider. An
//! object of a type that carries tags is stamped with the estate's markers
//! by an update that only adds them; an object of a type owned through its
//! parent is recorded. A deposed object (the old object of a
//! create_before_destroy replacement terraform has not destroyed yet) is
//! stamped likewise and joins its instance's record, so the next plan
//! destroys it as terraform's would. Nothing else about any object
//! changes, and the state file is only read.

use crate::addr::ResourceInstanceAddr;
use crate::bind::aws;
use crate::bind::catalogue::Family;
use crate::bind::marker::{self, Owner};
use crate::bind::readback::Readback;
use crate::config::ProviderRef;
use crate::diag::{Diagnostic, Diagnostics};
use crate::provider::proposed::proposed_new;
use crate::provider::{Provider, ResourceState};
use crate::record::{OutputRecord, Record, RecordStore};
use crate::session::{Launcher, Sessions};
use base64::Engine as _;
use std::collections::BTreeMap;
use std::path::Path;

/// What happened to one instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The markers were written onto the object.
    Stamped,
    /// The object already carried this estate's markers.
    AlreadyStamped,
    /// A type that carries no tags: recorded, owned through its parent
    /// (`true`) or found only by the record.
    Recorded { part: bool },
    /// Not migrated, and why.
    Failed(String),
    /// Not migrated because nothing can be done with it, and why.
    Skipped(String),
}

impl Outcome {
    /// Whether the instance is now the estate's: stamped or recorded.
    pub fn accounted(&self) -> bool {
        !matches!(self, Outcome::Failed(_) | Outcome::Skipped(_))
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Stamped => f.write_str("stamped"),
            Outcome::AlreadyStamped => f.write_str("already stamped"),
            Outcome::Recorded { part: true } => f.write_str("recorded (owned through its parent)"),
            Outcome::Recorded { part: false } => f.write_str("recorded (found only by its record)"),
            Outcome::Failed(why) => write!(f, "failed: {why}"),
            Outcome::Skipped(why) => write!(f, "skipped: {why}"),
        }
    }
}

/// One instance migrated, as the progress reports it.
#[derive(Debug, Clone)]
pub struct Progress {
    pub addr: ResourceInstanceAddr,
    /// The key of a deposed object of the instance.
    pub deposed: Option<String>,
    /// Whether the state marks the object tainted.
    pub tainted: bool,
    pub outcome: Outcome,
}

impl std::fmt::Display for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.deposed {
            Some(key) => write!(f, "{} (deposed object {key}): {}", self.addr, self.outcome)?,
            None => write!(f, "{}: {}", self.addr, self.outcome)?,
        }
        if self.tainted && self.outcome.accounted() {
            write!(
                f,
                " (tainted in the state, where terraform's next plan replaces it; the engine keeps no taint: plan -replace={} does)",
                self.addr
            )?;
        }
        Ok(())
    }
}

/// The counts `migrate` prints.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub stamped: usize,
    pub already: usize,
    pub recorded: usize,
    pub failed: usize,
    pub skipped: usize,
}

impl Counts {
    fn add(&mut self, o: &Outcome) {
        match o {
            Outcome::Stamped => self.stamped += 1,
            Outcome::AlreadyStamped => self.already += 1,
            Outcome::Recorded { .. } => self.recorded += 1,
            Outcome::Failed(_) => self.failed += 1,
            Outcome::Skipped(_) => self.skipped += 1,
        }
    }
}

/// One managed instance of a state file.
struct StateInstance {
    addr: ResourceInstanceAddr,
    provider: ProviderRef,
    schema_version: i64,
    attributes: serde_json::Value,
    private: Vec<u8>,
    /// The key of an old object a create_before_destroy replacement has
    /// not destroyed yet; `None` for the instance's current object.
    deposed: Option<String>,
    /// Whether the state marks the object tainted.
    tainted: bool,
}

/// What the engine takes from a state file: its managed instances and its
/// root outputs.
struct State {
    instances: Vec<StateInstance>,
    outputs: BTreeMap<String, OutputRecord>,
}

/// Reads a terraform state (format version 4).
fn read_state(path: &Path) -> Result<State, Diagnostics> {
    let bad = |detail: String| -> Diagnostics {
        Diagnostic::error(
            "Invalid state file",
            format!("{}: {detail}", path.display()),
        )
        .into()
    };
    let text = std::fs::read(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    let doc: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
    if doc["version"] != 4 {
        return Err(bad(format!(
            "state format version {} is not 4",
            doc["version"]
        )));
    }
    let mut out = Vec::new();
    for r in doc["resources"].as_array().into_iter().flatten() {
        if r["mode"] != "managed" {
            continue;
        }
        let (Some(type_name), Some(name)) = (r["type"].as_str(), r["name"].as_str()) else {
            return Err(bad("a resource without type or name".into()));
        };
        // provider["registry.terraform.io/hashicorp/aws"] or .aws.alias
        let provider_text = r["provider"].as_str().unwrap_or("");
        let local = provider_text
            .rsplit_once('/')
            .map_or(provider_text, |(_, n)| n)
            .trim_end_matches(['"', ']']);
        let (local, alias) = match provider_text.rsplit_once("].") {
            Some((_, alias)) => (
                crate::config::implied_provider(type_name),
                Some(alias.to_string()),
            ),
            None => (local.to_string(), None),
        };
        for inst in r["instances"].as_array().into_iter().flatten() {
            let key = match &inst["index_key"] {
                serde_json::Value::Number(n) => n.as_u64().map(crate::addr::InstanceKey::Int),
                serde_json::Value::String(s) => Some(crate::addr::InstanceKey::Str(s.clone())),
                _ => None,
            };
            // A module instance's objects: `module.app["a"]` in "module".
            let text = match r["module"].as_str() {
                Some(m) => format!("{m}.{type_name}.{name}"),
                None => format!("{type_name}.{name}"),
            };
            let mut addr: ResourceInstanceAddr = text
                .parse()
                .map_err(|e: crate::addr::AddrError| bad(e.to_string()))?;
            addr.key = key;
            let private = inst["private"]
                .as_str()
                .and_then(|p| base64::engine::general_purpose::STANDARD.decode(p).ok())
                .unwrap_or_default();
            out.push(StateInstance {
                addr,
                provider: ProviderRef {
                    name: local.clone(),
                    alias: alias.clone(),
                },
                schema_version: inst["schema_version"].as_i64().unwrap_or(0),
                attributes: inst["attributes"].clone(),
                private,
                deposed: inst["deposed"].as_str().map(str::to_string),
                tainted: inst["status"] == "tainted",
            });
        }
    }
    let mut outputs = BTreeMap::new();
    for (name, o) in doc["outputs"].as_object().into_iter().flatten() {
        let sensitive = o["sensitive"] == true;
        let record = OutputRecord::from_parts(o["type"].clone(), o["value"].clone(), sensitive);
        outputs.insert(name.clone(), record);
    }
    Ok(State {
        instances: out,
        outputs,
    })
}

/// Migrates every instance of the state at `path` into the estate.
/// `secrets`: whether a sensitive argument the provider cannot read back
/// is kept in its record, as the state kept it (not under a strict
/// profile refusing secrets).
pub async fn migrate<L: Launcher>(
    path: &Path,
    estate: &str,
    secrets: bool,
    sessions: &mut Sessions<L>,
    store: &RecordStore,
    progress: &mut dyn FnMut(Progress),
) -> Result<Counts, Diagnostics> {
    let State { instances, outputs } = read_state(path)?;
    for p in instances
        .iter()
        .map(|i| &i.provider)
        .collect::<std::collections::BTreeSet<_>>()
    {
        sessions.get(p).await?;
    }
    let mut counts = Counts::default();
    let readback = Readback::new(secrets);
    // Current objects first: a deposed object joins its instance's record.
    let (current, deposed): (Vec<&StateInstance>, Vec<&StateInstance>) =
        instances.iter().partition(|i| i.deposed.is_none());
    for inst in current.into_iter().chain(deposed) {
        let outcome = migrate_one(inst, estate, sessions, store, &readback).await;
        counts.add(&outcome);
        progress(Progress {
            addr: inst.addr.clone(),
            deposed: inst.deposed.clone(),
            tainted: inst.tainted,
            outcome,
        });
    }
    // The state's outputs become what the last apply left, so the first
    // plan after migrate proposes no output changes either.
    if !outputs.is_empty() {
        store.put_outputs(&outputs).await.map_err(|e| {
            Diagnostics::from(Diagnostic::error(
                "Failed to keep the outputs",
                e.to_string(),
            ))
        })?;
    }
    Ok(counts)
}

async fn migrate_one<L: Launcher>(
    inst: &StateInstance,
    estate: &str,
    sessions: &mut Sessions<L>,
    store: &RecordStore,
    readback: &Readback,
) -> Outcome {
    let type_name = inst.addr.type_name.as_str();
    let Some(schema) = sessions.resource_schema(&inst.provider.name, type_name) else {
        return Outcome::Skipped(format!(
            "the provider {} has no resource type {type_name}",
            sessions.source(&inst.provider.name)
        ));
    };
    let ident = aws::identity(
        aws::is_aws(&sessions.source(&inst.provider.name)),
        type_name,
        Some(&schema),
    );
    let Ok(provider) = sessions.get(&inst.provider).await else {
        return Outcome::Failed(format!("{} is not configured", inst.provider));
    };
    let raw = serde_json::to_vec(&inst.attributes).unwrap_or_default();
    let value = match provider
        .upgrade_resource_state(type_name, inst.schema_version, &raw)
        .await
    {
        Ok(v) => v,
        Err(e) => return Outcome::Failed(e.to_string()),
    };
    let stored = ResourceState {
        value,
        private: inst.private.clone(),
    };
    let live = match provider.read_resource(type_name, &stored).await {
        Ok(Some(s)) => s,
        Ok(None) => return Outcome::Skipped("the object no longer exists".into()),
        Err(e) => return Outcome::Failed(e.to_string()),
    };
    // A deposed object belongs to its instance's record, as the old
    // object of the engine's own create_before_destroy does.
    let current = match &inst.deposed {
        None => None,
        Some(_) => match store.get(&inst.addr) {
            Ok(Some(r)) => Some(r),
            Ok(None) => {
                return Outcome::Failed(
                    "a deposed object whose instance has no current object taken".into(),
                )
            }
            Err(e) => return Outcome::Failed(e.to_string()),
        },
    };
    let address = inst.addr.to_string();
    let outcome = match &ident.family {
        Family::Part(_) => Outcome::Recorded { part: true },
        Family::Record => Outcome::Recorded { part: false },
        Family::Tagged => match marker::owner(&live.value) {
            Owner::Estate {
                estate: e,
                address: a,
            } if e == estate && a.as_deref() == Some(address.as_str()) => Outcome::AlreadyStamped,
            Owner::Estate { estate: e, .. } if e != estate => {
                return Outcome::Failed(format!("it carries the marker of estate \"{e}\""));
            }
            _ => {
                let config = marker::with_markers(
                    crate::plan::objchange::config_from_state(&schema.block, &live.value),
                    estate,
                    &address,
                );
                let proposed = proposed_new(&schema.block, &live.value, &config);
                let planned = match provider
                    .plan_resource_change(type_name, &live, &proposed, &config)
                    .await
                {
                    Ok(p) => p,
                    Err(e) => return Outcome::Failed(e.to_string()),
                };
                if !planned.requires_replace.is_empty() {
                    return Outcome::Failed("stamping the markers would replace the object".into());
                }
                match provider
                    .apply_resource_change(type_name, &live.value, &planned, &config)
                    .await
                {
                    Ok(Some(_)) => Outcome::Stamped,
                    Ok(None) => return Outcome::Failed("the provider returned no object".into()),
                    Err(e) => return Outcome::Failed(e.to_string()),
                }
            }
        },
    };
    let mut r = Record::for_object(address, &ident, &inst.provider, &schema.block, &live);
    let Some(id) = r.id.clone() else {
        return Outcome::Failed("the object has no ID to find it again by".into());
    };
    if let (Some(key), Some(mut current)) = (&inst.deposed, current) {
        current.deposed.retain(|d| d.key != *key);
        current.deposed.push(crate::record::Deposed {
            key: key.clone(),
            id,
        });
        return match store.put(&current).await {
            Ok(()) => outcome,
            Err(e) => Outcome::Failed(e.to_string()),
        };
    }
    // What the stock state holds and an import and read of the object do
    // not return: kept in the record, as the state kept it.
    let lost = if readback.untried(type_name, &schema.block, &live.value) {
        match readback
            .learn(
                provider,
                type_name,
                &id,
                &schema.block,
                &live.value,
                &ident.config_only(),
            )
            .await
        {
            Ok(lost) => lost,
            Err(e) => {
                tracing::warn!(address = %r.address, error = %e, "reading the object back to learn what its read loses failed");
                readback.lost(type_name, &schema.block, &live.value)
            }
        }
    } else {
        readback.lost(type_name, &schema.block, &live.value)
    };
    r.keep(lost.iter().map(String::as_str), &schema.block, &live.value);
    if let Err(e) = store.put(&r).await {
        return Outcome::Failed(e.to_string());
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    #[test]
    fn state_instances_give_their_objects_their_address_deposed_key_and_taint() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("terraform.tfstate");
        let aws = "provider[\"registry.terraform.io/hashicorp/aws\"]";
        let state = serde_json::json!({
            "version": 4,
            "resources": [
                {"mode": "managed", "type": "aws_sqs_queue", "name": "q", "provider": aws,
                 "instances": [{"schema_version": 0, "attributes": {"id": "u0"}}]},
                {"module": "module.app[\"a\"].module.inner", "mode": "managed", "type": "aws_sqs_queue",
                 "name": "q", "provider": aws,
                 "instances": [{"index_key": 1, "schema_version": 0, "attributes": {"id": "u1"}},
                               {"index_key": 2, "status": "tainted", "schema_version": 0, "attributes": {"id": "u2"}},
                               {"index_key": 2, "deposed": "0a1b2c3d", "schema_version": 0, "attributes": {"id": "u3"}}]},
                {"module": "module.app[\"a\"]", "mode": "data", "type": "aws_region", "name": "r",
                 "provider": aws, "instances": [{"schema_version": 0, "attributes": {}}]}
            ],
            "outputs": {
                "url": {"value": "u0", "type": "string"},
                "n": {"value": {"a": [1, 2.5]}, "type": ["object", {"a": ["list", "number"]}]},
                "secret": {"value": "x", "type": "string", "sensitive": true}
            }
        });
        std::fs::write(&path, state.to_string()).unwrap();
        // Outputs digest as the values a plan evaluates do.
        let outputs = read_state(&path).unwrap().outputs;
        let num = |n: &str| Value::number(crate::value::number::Number::parse(n).unwrap());
        let list = Value::list(crate::value::Type::Number, vec![num("1"), num("2.5")]);
        let n = Value::object([("a".to_string(), list)].into());
        assert_eq!(outputs["n"], OutputRecord::of(&n, false));
        assert_eq!(
            outputs["url"],
            OutputRecord::of(&Value::string("u0"), false)
        );
        let secret = &outputs["secret"];
        assert_eq!(*secret, OutputRecord::of(&Value::string("x"), true));
        assert_eq!(secret.value, None);
        let found: Vec<String> = read_state(&path)
            .unwrap()
            .instances
            .iter()
            .map(|i| format!("{} {} {:?} {}", i.addr, i.provider, i.deposed, i.tainted))
            .collect();
        assert_eq!(
            found,
            [
                "aws_sqs_queue.q provider.aws None false",
                "module.app[\"a\"].module.inner.aws_sqs_queue.q[1] provider.aws None false",
                "module.app[\"a\"].module.inner.aws_sqs_queue.q[2] provider.aws None true",
                "module.app[\"a\"].module.inner.aws_sqs_queue.q[2] provider.aws Some(\"0a1b2c3d\") false"
            ]
        );
        let said = Progress {
            addr: "aws_sqs_queue.q".parse().unwrap(),
            deposed: None,
            tainted: true,
            outcome: Outcome::Stamped,
        }
        .to_string();
        assert!(
            said.starts_with("aws_sqs_queue.q: stamped (tainted in the state")
                && said.ends_with("plan -replace=aws_sqs_queue.q does)"),
            "{said}"
        );
    }
}
