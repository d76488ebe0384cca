//! terraform's machine-readable UI (`-json` on `plan`, `apply` and
//! `destroy`, UI version 1.2): one JSON object a line, each with its level,
//! message, module, timestamp and type, as wrappers and CI integrations
//! read terraform's.
//!
//! Top-level keys are in alphabetical order and nested objects in
//! terraform's field order, as terraform writes them. The engine streams
//! the same message types terraform does, in the same order, with two
//! differences that follow from having no state: there is no
//! `resource_drift` (a plan is made from the live system, so there is no
//! earlier record of an object to have drifted from), and each data
//! source and object the plan read is announced (a `read` hook pair, a
//! `refresh_start` and `refresh_complete` pair) once the plan's reads are
//! done, not as each read starts.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::Value as Json;

use crate::addr::{InstanceKey, Mode, ResourceInstanceAddr};
use crate::apply::{Applied, Event, Stage};
use crate::config::Module;
use crate::diag::{self, Diagnostic, Diagnostics, Severity, Sources};
use crate::plan::{Action, Plan, Reason, ResourceChange};
use crate::value::Value;

/// The UI version these messages follow.
const UI_VERSION: &str = "1.2";

/// One message: its level, text and type, and its own fields.
fn message(level: &str, text: &str, ty: &str, fields: Vec<(&str, String)>) -> String {
    let mut all: Vec<(&str, String)> = vec![
        ("@level", quoted(level)),
        ("@message", quoted(text)),
        ("@module", quoted("terraform.ui")),
        ("@timestamp", quoted(&timestamp(SystemTime::now()))),
        ("type", quoted(ty)),
    ];
    all.extend(fields);
    all.sort_by(|a, b| a.0.cmp(b.0));
    let body: Vec<String> = all
        .into_iter()
        .map(|(k, v)| format!("{}:{v}", quoted(k)))
        .collect();
    format!("{{{}}}", body.join(","))
}

fn quoted(s: &str) -> String {
    Json::String(s.to_owned()).to_string()
}

fn encoded(v: &impl Serialize) -> String {
    serde_json::to_string(v).expect("UI messages encode")
}

/// RFC 3339 with microseconds, in UTC: `2026-12-07T08:30:27.161415Z`.
fn timestamp(at: SystemTime) -> String {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = crate::eval::funcs::rfc3339_utc(since.as_secs() as i64);
    let whole = seconds.trim_end_matches('Z');
    format!("{whole}.{:06}Z", since.subsec_micros())
}

/// The first line of every stream.
pub fn version() -> String {
    let v = crate::VERSION;
    message(
        "info",
        &format!("choudoufu {v}"),
        "version",
        vec![("choudoufu", quoted(v)), ("ui", quoted(UI_VERSION))],
    )
}

/// An instance as terraform's messages name it.
#[derive(Serialize)]
struct ResourceJson {
    addr: String,
    module: String,
    resource: String,
    implied_provider: String,
    resource_type: String,
    resource_name: String,
    resource_key: Json,
}

fn resource(addr: &ResourceInstanceAddr) -> ResourceJson {
    let module = crate::addr::module_text(&addr.module);
    let local = ResourceInstanceAddr {
        module: Vec::new(),
        ..addr.clone()
    };
    ResourceJson {
        addr: addr.to_string(),
        module,
        resource: local.to_string(),
        implied_provider: addr
            .type_name
            .split('_')
            .next()
            .unwrap_or_default()
            .to_owned(),
        resource_type: addr.type_name.clone(),
        resource_name: addr.name.clone(),
        resource_key: match &addr.key {
            None => Json::Null,
            Some(InstanceKey::Int(i)) => Json::from(*i),
            Some(InstanceKey::Str(s)) => Json::from(s.as_str()),
        },
    }
}

/// A planned change, as `planned_change` carries it.
#[derive(Serialize)]
struct ChangeJson {
    resource: ResourceJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    previous_resource: Option<ResourceJson>,
    action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    importing: Option<Importing>,
}

#[derive(Serialize)]
struct Importing {
    id: String,
}

fn action_word(action: Action) -> &'static str {
    match action {
        Action::NoOp => "noop",
        Action::Create => "create",
        Action::Read => "read",
        Action::Update => "update",
        Action::Replace { .. } => "replace",
        Action::Delete => "delete",
        Action::Forget => "remove",
    }
}

/// The UI's name for a reason, which is not the plan format's
/// (`plan::json`): the stream says `cannot_update` where a plan file says
/// `replace_because_cannot_update`.
fn reason_word(reason: &Reason) -> &'static str {
    match reason {
        Reason::ReplaceBecauseCannotUpdate => "cannot_update",
        Reason::ReplaceByTriggers => "replace_triggered_by",
        Reason::ReplaceByRequest => "requested",
        Reason::DeleteBecauseNoResourceConfig => "delete_because_no_resource_config",
        Reason::DeleteBecauseCountIndex => "delete_because_count_index",
        Reason::DeleteBecauseEachKey => "delete_because_each_key",
        Reason::DeleteBecauseNoModule => "delete_because_no_module",
        Reason::ReadBecauseConfigUnknown => "read_because_config_unknown",
        Reason::ReadBecauseDependencyPending => "read_because_dependency_pending",
    }
}

fn change(rc: &ResourceChange) -> ChangeJson {
    let mut action = action_word(rc.action);
    // A move or an import with nothing else to do is named for itself.
    let moved = rc.previous_addr.as_ref().filter(|p| **p != rc.addr);
    if rc.action == Action::NoOp && moved.is_some() {
        action = "move";
    }
    if rc.action == Action::NoOp && rc.importing.is_some() && moved.is_none() {
        action = "import";
    }
    ChangeJson {
        resource: resource(&rc.addr),
        previous_resource: moved.map(resource),
        action,
        reason: rc.reason.as_ref().map(reason_word),
        importing: rc.importing.clone().map(|id| Importing { id }),
    }
}

/// Whether the plan names this change in its stream: terraform leaves out
/// no-ops that neither move nor import, and the delete of a data source.
fn streamed(rc: &ResourceChange) -> bool {
    let moved = rc.previous_addr.as_ref().is_some_and(|p| *p != rc.addr);
    let data_delete = rc.action == Action::Delete && rc.addr.mode == Mode::Data;
    !data_delete && (rc.action != Action::NoOp || moved || rc.importing.is_some())
}

/// The `id` of an object as hooks name it, if it has one.
fn object_id(v: Option<&Value>) -> Option<String> {
    let id = v?.get("id")?.as_str()?.to_owned();
    (!id.is_empty()).then_some(id)
}

/// What a plan streams: an `apply_start` and `apply_complete` (action
/// `read`) for each data source it read, a `refresh_start` and
/// `refresh_complete` for every object it read, each `planned_change`, and its `change_summary`
/// and the `outputs` it changes. The apply of a saved plan (`saved`)
/// streams only the changes, as terraform's does: its reads check the
/// plan still holds, and are no refresh.
pub fn plan(plan: &Plan, saved: bool) -> Vec<String> {
    let mut out = Vec::new();
    let read: Vec<&ResourceChange> = plan
        .changes
        .iter()
        .filter(|rc| !saved && rc.addr.mode == Mode::Managed && rc.deposed.is_none())
        .filter(|rc| rc.before.as_ref().is_some_and(|b| !b.is_null()))
        .collect();
    // Each data source read, as terraform's hooks report one.
    for r in plan.reads.iter().filter(|_| !saved) {
        let h = |id: Option<String>, elapsed| HookJson {
            resource: resource(&r.addr),
            action: Some("read"),
            id_key: id.as_ref().map(|_| "id"),
            id_value: id,
            elapsed_seconds: elapsed,
        };
        let text = format!("{}: Refreshing...", r.addr);
        out.push(message(
            "info",
            &text,
            "apply_start",
            vec![("hook", encoded(&h(None, None)))],
        ));
        let secs = r.elapsed.as_secs_f64().round() as u64;
        let id = r.id.clone().filter(|i| !i.is_empty());
        let shown = match &id {
            Some(id) => format!(" [id={id}]"),
            None => String::new(),
        };
        let took = crate::apply::seconds(Duration::from_secs(secs));
        let text = format!("{}: Refresh complete after {took}{shown}", r.addr);
        let hook = encoded(&h(id, Some(secs)));
        out.push(message(
            "info",
            &text,
            "apply_complete",
            vec![("hook", hook)],
        ));
    }
    for (ty, said) in [
        ("refresh_start", "Refreshing state..."),
        ("refresh_complete", "Refresh complete"),
    ] {
        for rc in &read {
            let id = object_id(rc.before.as_ref());
            let shown = match &id {
                Some(id) => format!("{}: {said} [id={id}]", rc.addr),
                None => format!("{}: {said}", rc.addr),
            };
            out.push(message(
                "info",
                &shown,
                ty,
                vec![(
                    "hook",
                    encoded(&HookJson {
                        resource: resource(&rc.addr),
                        action: None,
                        id_key: id.as_ref().map(|_| "id"),
                        id_value: id,
                        elapsed_seconds: None,
                    }),
                )],
            ));
        }
    }
    for rc in plan.changes.iter().filter(|rc| streamed(rc)) {
        let c = change(rc);
        let text = format!("{}: Plan to {}", rc.addr, c.action);
        out.push(message(
            "info",
            &text,
            "planned_change",
            vec![("change", encoded(&c))],
        ));
    }
    if saved {
        return out;
    }
    let (add, chg, remove) = plan.counts();
    let import = plan.imports();
    let text = crate::plan::render::summary(plan);
    out.push(summary_line(&text, add, chg, remove, import, "plan"));
    let outputs: Vec<(String, Json)> = plan
        .outputs
        .iter()
        .map(|o| {
            let entry =
                serde_json::json!({"sensitive": o.sensitive, "action": action_word(o.action)});
            (o.name.clone(), entry)
        })
        .collect();
    if !outputs.is_empty() {
        out.push(outputs_line(&outputs));
    }
    out
}

#[derive(Serialize)]
struct Counts<'a> {
    add: usize,
    change: usize,
    import: usize,
    remove: usize,
    operation: &'a str,
}

fn summary_line(
    text: &str,
    add: usize,
    chg: usize,
    remove: usize,
    import: usize,
    op: &str,
) -> String {
    let counts = Counts {
        add,
        change: chg,
        import,
        remove,
        operation: op,
    };
    message(
        "info",
        text,
        "change_summary",
        vec![("changes", encoded(&counts))],
    )
}

/// Outputs in name order, each entry's fields in terraform's order.
fn outputs_line(outputs: &[(String, Json)]) -> String {
    let body: Vec<String> = outputs
        .iter()
        .map(|(name, entry)| format!("{}:{}", quoted(name), ordered(entry)))
        .collect();
    let text = format!("Outputs: {}", outputs.len());
    message(
        "info",
        &text,
        "outputs",
        vec![("outputs", format!("{{{}}}", body.join(",")))],
    )
}

/// An output entry with its fields in terraform's order: sensitive,
/// type, value, action.
fn ordered(entry: &Json) -> String {
    let parts: Vec<String> = ["sensitive", "type", "value", "action"]
        .into_iter()
        .filter_map(|k| entry.get(k).map(|v| format!("{}:{v}", quoted(k))))
        .collect();
    format!("{{{}}}", parts.join(","))
}

/// A hook's object: what it is about, and for a change its action, the
/// object's id and the time taken (a refresh names no action).
#[derive(Serialize)]
struct HookJson {
    resource: ResourceJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    action: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id_key: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id_value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    elapsed_seconds: Option<u64>,
}

/// A change's progress during apply; `None` for what terraform does not
/// stream (an import's announcement: the plan's `planned_change` names it).
pub fn hook(event: &Event) -> Option<String> {
    if event.doing == crate::apply::Doing::Import {
        return None;
    }
    let secs = |d: &Duration| Some(d.as_secs_f64().round() as u64);
    let some_id = |id: &Option<String>| id.clone().filter(|i| !i.is_empty());
    let (ty, id, elapsed) = match &event.stage {
        Stage::Start { id } => ("apply_start", some_id(id), None),
        Stage::Running { elapsed } => ("apply_progress", None, secs(elapsed)),
        Stage::Complete { id, elapsed } => ("apply_complete", some_id(id), secs(elapsed)),
        Stage::Errored { elapsed } => ("apply_errored", None, secs(elapsed)),
    };
    let h = HookJson {
        resource: resource(&event.addr),
        action: Some(event.doing.as_str()),
        id_key: id.as_ref().map(|_| "id"),
        id_value: id,
        elapsed_seconds: elapsed,
    };
    let level = match event.stage {
        Stage::Errored { .. } => "error",
        _ => "info",
    };
    Some(message(
        level,
        &event.to_string(),
        ty,
        vec![("hook", encoded(&h))],
    ))
}

/// What an apply or destroy streams when it is done: its `change_summary`
/// and, after an apply, the root module's outputs.
pub fn applied(done: &Applied, destroy: bool, root: &Module) -> Vec<String> {
    let text = done.summary(destroy);
    let op = if destroy { "destroy" } else { "apply" };
    let mut out = vec![summary_line(
        &text,
        done.added,
        done.changed,
        done.destroyed,
        done.imported,
        op,
    )];
    if destroy {
        return out;
    }
    let outputs: Vec<(String, Json)> = done
        .outputs
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(name, v)| {
            let sensitive = crate::eval::module::root_output_sensitive(root, name, v);
            let mut entry = serde_json::json!({"sensitive": sensitive, "type": v.ty().to_json()});
            if !sensitive {
                entry["value"] = crate::plan::json::value_json(v);
            }
            (name.clone(), entry)
        })
        .collect();
    // After an apply terraform streams its outputs even when there are none.
    out.push(outputs_line(&outputs));
    out
}

/// Each diagnostic as a `diagnostic` message.
pub fn diagnostics(d: &Diagnostics, sources: &Sources) -> Vec<String> {
    d.iter().map(|x| diagnostic(x, sources)).collect()
}

fn diagnostic(d: &Diagnostic, sources: &Sources) -> String {
    let (level, word) = match d.severity {
        Severity::Error => ("error", "Error"),
        Severity::Warning => ("warn", "Warning"),
    };
    let text = format!("{word}: {}", d.summary);
    let body = encoded(&diag::to_json(d, sources));
    message(level, &text, "diagnostic", vec![("diagnostic", body)])
}

/// A plain line of the run's own (`log`), such as where a plan was saved.
pub fn log(text: &str) -> String {
    message("info", text, "log", Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_have_microseconds() {
        let at = UNIX_EPOCH + Duration::from_micros(1_765_096_227_161_415);
        assert_eq!(timestamp(at), "2025-12-07T08:30:27.161415Z");
    }

    #[test]
    fn a_message_sorts_its_keys_and_keeps_nested_order() {
        let addr: ResourceInstanceAddr = "module.m.aws_ssm_parameter.p[1]".parse().unwrap();
        let line = message(
            "info",
            "x",
            "planned_change",
            vec![("change", encoded(&resource(&addr)))],
        );
        assert!(line.ends_with(r#","type":"planned_change"}"#), "{line}");
        assert!(line.contains(r#""change":{"addr":"module.m.aws_ssm_parameter.p[1]","module":"module.m","resource":"aws_ssm_parameter.p[1]","implied_provider":"aws","resource_type":"aws_ssm_parameter","resource_name":"p","resource_key":1}"#), "{line}");
        assert!(
            line.starts_with(
                r#"{"@level":"info","@message":"x","@module":"terraform.ui","@timestamp":""#
            ),
            "{line}"
        );
    }
}
