//! The plan renderings against stock terraform's: each scenario under
//! `tests/fixtures/plans/` holds the plan terraform made (`plan.json`, from
//! `terraform show -json`) and what terraform printed for it (`plan.txt`
//! and `plan.color.txt`, from `terraform show`). The plan is read back into
//! the engine's plan model with the real aws provider's schema, then
//! printed and written by the engine, and the results must be identical.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use engine::addr::{Mode, ResourceInstanceAddr};
use engine::plan::json::{plan_json, value_from_json};
use engine::plan::render::human;
use engine::plan::{Action, OutputChange, Plan, Reason, ResourceChange};
use engine::provider::load_schema;
use engine::provider::path::{AttributePath, PathStep};
use engine::provider::plugin::LaunchOptions;
use engine::provider::schema::{ProviderSchema, Schema};
use engine::value::Type;
use serde_json::Value as Json;

use crate::support::aws_binary;

const SCENARIOS: &[&str] = &[
    "create",
    "update",
    "replace",
    "delete",
    "destroy",
    "nochanges",
    "outputs",
    "nested",
    "mixed",
];

/// The keys of `show -json` the engine writes; the others describe the
/// configuration and prior state, which the plan model does not hold.
const JSON_KEYS: &[&str] = &[
    "format_version",
    "terraform_version",
    "planned_values",
    "resource_changes",
    "output_changes",
    "applyable",
    "complete",
    "errored",
];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plans")
}

fn action(actions: &Json) -> Action {
    let list: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    match list.as_slice() {
        ["no-op"] => Action::NoOp,
        ["create"] => Action::Create,
        ["read"] => Action::Read,
        ["update"] => Action::Update,
        ["delete", "create"] => Action::Replace {
            create_before_destroy: false,
        },
        ["create", "delete"] => Action::Replace {
            create_before_destroy: true,
        },
        ["delete"] => Action::Delete,
        other => panic!("unexpected actions {other:?}"),
    }
}

fn reason(r: &str) -> Reason {
    match r {
        "replace_because_cannot_update" => Reason::ReplaceBecauseCannotUpdate,
        "replace_by_triggers" => Reason::ReplaceByTriggers,
        "delete_because_no_resource_config" => Reason::DeleteBecauseNoResourceConfig,
        "delete_because_count_index" => Reason::DeleteBecauseCountIndex,
        "delete_because_each_key" => Reason::DeleteBecauseEachKey,
        "delete_because_no_module" => Reason::DeleteBecauseNoModule,
        "read_because_config_unknown" => Reason::ReadBecauseConfigUnknown,
        "read_because_dependency_pending" => Reason::ReadBecauseDependencyPending,
        other => panic!("unexpected action reason {other}"),
    }
}

fn path(p: &Json) -> AttributePath {
    AttributePath(
        p.as_array()
            .unwrap()
            .iter()
            .map(|s| match s {
                Json::String(s) => PathStep::Attribute(s.clone()),
                Json::Number(n) => PathStep::Index(n.as_i64().unwrap()),
                other => panic!("unexpected path step {other}"),
            })
            .collect(),
    )
}

/// A value of the change, or `None` for a null object.
fn value(
    change: &Json,
    key: &str,
    unknown: &str,
    sensitive: &str,
    ty: &Type,
) -> Option<engine::value::Value> {
    let null = Json::Null;
    let v = change.get(key).unwrap_or(&null);
    let u = change.get(unknown).unwrap_or(&null);
    if v.is_null() && *u != Json::Bool(true) {
        return None;
    }
    let s = change.get(sensitive).unwrap_or(&null);
    Some(value_from_json(v, ty, u, s).unwrap())
}

/// terraform's JSON plan read back into the plan model.
fn plan_from_json(j: &Json, aws: &ProviderSchema, destroy: bool) -> Plan {
    let mut schemas: BTreeMap<String, Arc<Schema>> = BTreeMap::new();
    let mut plan = Plan {
        destroy,
        ..Plan::default()
    };
    for rc in j["resource_changes"].as_array().into_iter().flatten() {
        let addr: ResourceInstanceAddr = rc["address"].as_str().unwrap().parse().unwrap();
        let type_name = rc["type"].as_str().unwrap();
        let schema = schemas
            .entry(format!("{:?}.{type_name}", addr.mode))
            .or_insert_with(|| {
                let source = match addr.mode {
                    Mode::Managed => &aws.resources,
                    Mode::Data => &aws.data_sources,
                };
                Arc::new(source[type_name].clone())
            })
            .clone();
        let ty = schema.block.implied_type();
        let change = &rc["change"];
        plan.changes.push(ResourceChange {
            previous_addr: rc
                .get("previous_address")
                .map(|p| p.as_str().unwrap().parse().unwrap()),
            addr,
            provider: rc["provider_name"].as_str().unwrap().to_string(),
            action: action(&change["actions"]),
            reason: rc.get("action_reason").map(|r| reason(r.as_str().unwrap())),
            before: value(change, "before", "-", "before_sensitive", &ty),
            after: value(change, "after", "after_unknown", "after_sensitive", &ty),
            schema,
            replace_paths: change
                .get("replace_paths")
                .and_then(Json::as_array)
                .map(|ps| ps.iter().map(path).collect())
                .unwrap_or_default(),
            deposed: rc.get("deposed").and_then(Json::as_str).map(str::to_string),
            importing: rc["change"]["importing"]["id"].as_str().map(str::to_string),
        });
    }
    for (name, oc) in j["output_changes"].as_object().into_iter().flatten() {
        let ty = Type::Dynamic;
        plan.outputs.push(OutputChange {
            name: name.clone(),
            action: action(&oc["actions"]),
            before: value(oc, "before", "-", "-", &ty),
            after: value(oc, "after", "after_unknown", "-", &ty),
            sensitive: oc["after_sensitive"] == Json::Bool(true),
        });
    }
    plan
}

/// Paths at which two JSON documents differ.
fn differences(ours: &Json, theirs: &Json, at: &str, out: &mut Vec<String>) {
    match (ours, theirs) {
        (Json::Object(a), Json::Object(b)) => {
            for k in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                let null = Json::Null;
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => differences(x, y, &format!("{at}.{k}"), out),
                    _ => out.push(format!(
                        "{at}.{k}: ours {} theirs {}",
                        a.get(k).unwrap_or(&null),
                        b.get(k).unwrap_or(&null)
                    )),
                }
            }
        }
        (Json::Array(a), Json::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                differences(x, y, &format!("{at}[{i}]"), out);
            }
        }
        (a, b) if a != b => out.push(format!("{at}: ours {a} theirs {b}")),
        _ => {}
    }
}

#[tokio::test]
async fn plans_render_as_terraform_renders_them() {
    let aws = load_schema(&aws_binary(), None, &LaunchOptions::default())
        .await
        .unwrap();
    let mut failures = Vec::new();
    for scenario in SCENARIOS {
        let dir = fixtures().join(scenario);
        let theirs: Json =
            serde_json::from_str(&fs::read_to_string(dir.join("plan.json")).unwrap()).unwrap();
        let plan = plan_from_json(&theirs, &aws, *scenario == "destroy");

        for (file, color) in [("plan.txt", false), ("plan.color.txt", true)] {
            let expected = fs::read_to_string(dir.join(file)).unwrap();
            let ours = human(&plan, color);
            if ours != expected {
                let got = dir.join(format!("{file}.ours"));
                fs::write(&got, &ours).unwrap();
                failures.push(format!(
                    "{scenario}/{file} differs: diff {} {}",
                    dir.join(file).display(),
                    got.display()
                ));
            }
        }

        let ours = plan_json(&plan, "1.11.4");
        let mut diffs = Vec::new();
        for key in JSON_KEYS {
            let null = Json::Null;
            differences(
                ours.get(key).unwrap_or(&null),
                theirs.get(key).unwrap_or(&null),
                key,
                &mut diffs,
            );
        }
        if !diffs.is_empty() {
            failures.push(format!("{scenario}/plan.json:\n  {}", diffs.join("\n  ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
