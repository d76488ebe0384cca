//! A plan in terraform's JSON plan format, as `terraform show -json PLANFILE`
//! writes it (format version 1.2).
//!
//! Values are written as cty's JSON encoding writes them. Unknown values are
//! left out of `after` (an object drops the attribute, a sequence keeps a
//! `null` in its place) and marked `true` at the same place in
//! `after_unknown`; sensitive values, whether marked on the value or declared
//! sensitive by the schema, are marked `true` in `before_sensitive` and
//! `after_sensitive`. The same encodings feed [`super::render`], which, like
//! terraform, renders a plan from this JSON form.
//!
//! Left out, because the plan model does not carry them: `variables`,
//! `prior_state`, `configuration`, `relevant_attributes`, `resource_drift`,
//! `checks`, and `timestamp`, which a saved plan adds.
//!
//! [`value_from_json`] reads a value back from this format (the inverse,
//! given the type), so a plan terraform wrote can be compared with ours.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde_json::{json, Map, Value as Json};

use super::{Action, OutputChange, Plan, Reason, ResourceChange};
use crate::addr::{InstanceKey, Mode, ResourceInstanceAddr};
use crate::provider::path::{AttributePath, PathStep};
use crate::provider::schema::{Attribute, Block, Nesting, ObjectNesting};
use crate::value::number::Number;
use crate::value::{Kind, Type, Value};

/// The JSON plan format version terraform 1.11 writes.
pub const FORMAT_VERSION: &str = "1.2";

/// The whole plan in terraform's JSON plan format.
///
/// `terraform_version` is the version string written as
/// `terraform_version` (terraform writes its own; an engine compatible
/// with terraform 1.11.4 may write `"1.11.4"` so that tools checking it
/// accept the plan). The plan is taken to be applyable when it changes
/// something, complete, and not errored.
/// `doc` as terraform prints JSON (Go's `encoding/json`): compact, or
/// indented by two spaces, with `<`, `>`, `&`, U+2028 and U+2029 escaped.
pub fn go_text(doc: &Json, pretty: bool) -> String {
    let mut out = GoEscaped::new(Vec::new());
    if pretty {
        serde_json::to_writer_pretty(&mut out, doc)
    } else {
        serde_json::to_writer(&mut out, doc)
    }
    .expect("JSON values serialize");
    String::from_utf8(out.finish().expect("a Vec takes every write")).expect("JSON is UTF-8")
}

/// A writer of JSON text that escapes `<`, `>`, `&`, U+2028 and U+2029 as
/// Go's `encoding/json` does. Outside strings JSON has none of them, so
/// escaping every one escapes exactly those in strings.
pub struct GoEscaped<W: std::io::Write> {
    inner: W,
    /// The start of a three-byte sequence split across writes.
    pending: Vec<u8>,
}

impl<W: std::io::Write> GoEscaped<W> {
    pub fn new(inner: W) -> GoEscaped<W> {
        GoEscaped {
            inner,
            pending: Vec::new(),
        }
    }

    /// Writes what is pending and hands back the inner writer.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.inner.write_all(&std::mem::take(&mut self.pending))?;
        self.inner.flush()?;
        Ok(self.inner)
    }
}

impl<W: std::io::Write> std::io::Write for GoEscaped<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut bytes = std::mem::take(&mut self.pending);
        bytes.extend_from_slice(buf);
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b @ (b'<' | b'>' | b'&') => out.extend(format!("\\u{b:04x}").bytes()),
                // U+2028 and U+2029 are E2 80 A8 and E2 80 A9.
                0xE2 if bytes.len() - i < 3 => {
                    self.pending = bytes[i..].to_vec();
                    break;
                }
                0xE2 if bytes[i + 1] == 0x80 && matches!(bytes[i + 2], 0xA8 | 0xA9) => {
                    out.extend(format!("\\u20{:02x}", bytes[i + 2] - 0x80).bytes());
                    i += 2;
                }
                b => out.push(b),
            }
            i += 1;
        }
        self.inner.write_all(&out)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

pub fn plan_json(plan: &Plan, terraform_version: &str) -> Json {
    let mut out = Map::new();
    out.insert("format_version".into(), json!(FORMAT_VERSION));
    out.insert("terraform_version".into(), json!(terraform_version));
    out.insert("planned_values".into(), planned_values(plan));

    let changes: Vec<Json> = sorted_changes(plan)
        .into_iter()
        .filter(|c| !(c.addr.mode == Mode::Data && c.action == Action::Delete))
        .map(resource_change_json)
        .collect();
    if !changes.is_empty() {
        out.insert("resource_changes".into(), Json::Array(changes));
    }
    if !plan.outputs.is_empty() {
        let outputs: Map<String, Json> = plan
            .outputs
            .iter()
            .map(|o| (o.name.clone(), output_change(o).to_json()))
            .collect();
        out.insert("output_changes".into(), Json::Object(outputs));
    }
    out.insert("applyable".into(), json!(plan.has_changes()));
    out.insert("complete".into(), json!(true));
    out.insert("errored".into(), json!(false));
    Json::Object(out)
}

/// The plan's instance changes in terraform's address order: module path
/// (shorter first), then data before managed, type, name and key (no key,
/// then numbers, then strings).
pub(crate) fn sorted_changes(plan: &Plan) -> Vec<&ResourceChange> {
    let mut changes: Vec<&ResourceChange> = plan.changes.iter().collect();
    changes.sort_by(|a, b| address_order(&a.addr, &b.addr));
    changes
}

fn address_order(a: &ResourceInstanceAddr, b: &ResourceInstanceAddr) -> Ordering {
    let mode_rank = |m: Mode| match m {
        Mode::Data => 0,
        Mode::Managed => 1,
    };
    a.module
        .len()
        .cmp(&b.module.len())
        .then_with(|| {
            for (x, y) in a.module.iter().zip(&b.module) {
                let o = x
                    .name
                    .cmp(&y.name)
                    .then_with(|| key_order(x.key.as_ref(), y.key.as_ref()));
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        })
        .then_with(|| mode_rank(a.mode).cmp(&mode_rank(b.mode)))
        .then_with(|| a.type_name.cmp(&b.type_name))
        .then_with(|| a.name.cmp(&b.name))
        .then_with(|| key_order(a.key.as_ref(), b.key.as_ref()))
}

fn key_order(a: Option<&InstanceKey>, b: Option<&InstanceKey>) -> Ordering {
    // No key, then integer keys, then string keys: the derived order.
    a.cmp(&b)
}

/// One change's values as the JSON plan holds them: terraform's
/// `jsonplan.Change`. `None` is a field left out.
#[derive(Debug, Clone)]
pub(crate) struct ChangeJson {
    pub actions: &'static [&'static str],
    pub before: Option<Json>,
    pub after: Option<Json>,
    pub after_unknown: Json,
    pub before_sensitive: Json,
    pub after_sensitive: Json,
    pub replace_paths: Option<Json>,
    /// `{"id": ...}` when an `import` block brings the object in.
    pub importing: Option<Json>,
}

impl ChangeJson {
    fn to_json(&self) -> Json {
        let mut c = Map::new();
        c.insert("actions".into(), json!(self.actions));
        if let Some(b) = &self.before {
            c.insert("before".into(), b.clone());
        }
        if let Some(a) = &self.after {
            c.insert("after".into(), a.clone());
        }
        c.insert("after_unknown".into(), self.after_unknown.clone());
        c.insert("before_sensitive".into(), self.before_sensitive.clone());
        c.insert("after_sensitive".into(), self.after_sensitive.clone());
        if let Some(p) = &self.replace_paths {
            c.insert("replace_paths".into(), p.clone());
        }
        if let Some(i) = &self.importing {
            c.insert("importing".into(), i.clone());
        }
        Json::Object(c)
    }
}

/// The JSON plan's action list.
pub(crate) fn actions(action: Action) -> &'static [&'static str] {
    match action {
        Action::NoOp => &["no-op"],
        Action::Create => &["create"],
        Action::Read => &["read"],
        Action::Update => &["update"],
        Action::Replace {
            create_before_destroy: false,
        } => &["delete", "create"],
        Action::Replace {
            create_before_destroy: true,
        } => &["create", "delete"],
        Action::Delete => &["delete"],
        Action::Forget => &["forget"],
    }
}

fn reason_str(reason: &Reason) -> &'static str {
    match reason {
        Reason::ReplaceBecauseCannotUpdate => "replace_because_cannot_update",
        Reason::ReplaceByTriggers => "replace_by_triggers",
        Reason::ReplaceByRequest => "replace_by_request",
        Reason::DeleteBecauseNoResourceConfig => "delete_because_no_resource_config",
        Reason::DeleteBecauseCountIndex => "delete_because_count_index",
        Reason::DeleteBecauseEachKey => "delete_because_each_key",
        Reason::DeleteBecauseNoModule => "delete_because_no_module",
        Reason::ReadBecauseConfigUnknown => "read_because_config_unknown",
        Reason::ReadBecauseDependencyPending => "read_because_dependency_pending",
    }
}

/// The values of a resource instance change. A missing before or after is
/// a null object, as terraform holds it.
pub(crate) fn resource_change(rc: &ResourceChange) -> ChangeJson {
    let block = &rc.schema.block;
    let null = || Value::null(block.implied_type());
    let before = rc.before.clone().unwrap_or_else(null);
    let after = rc.after.clone().unwrap_or_else(null);
    let before = mark_schema_sensitive(before, block);
    let after = mark_schema_sensitive(after, block);
    let (after_json, after_unknown) = after_and_unknown(&after, json!({}));
    ChangeJson {
        actions: actions(rc.action),
        before: Some(value_json(&before)),
        after: after_json,
        after_unknown,
        before_sensitive: sensitive_as_bool(&before),
        after_sensitive: sensitive_as_bool(&after),
        replace_paths: if rc.replace_paths.is_empty() {
            None
        } else {
            Some(Json::Array(
                rc.replace_paths.iter().map(path_json).collect(),
            ))
        },
        importing: rc.importing.as_ref().map(|id| json!({ "id": id })),
    }
}

/// The values of an output change: its sensitivity is one flag for before
/// and after alike.
pub(crate) fn output_change(oc: &OutputChange) -> ChangeJson {
    let null = || Value::null(Type::Dynamic);
    let before = oc.before.clone().unwrap_or_else(null);
    let after = oc.after.clone().unwrap_or_else(null);
    let (after_json, after_unknown) = after_and_unknown(&after, json!(false));
    ChangeJson {
        actions: actions(oc.action),
        before: Some(value_json(&before)),
        after: after_json,
        after_unknown,
        before_sensitive: json!(oc.sensitive),
        after_sensitive: json!(oc.sensitive),
        replace_paths: None,
        importing: None,
    }
}

/// `after` without its unknowns (left out when wholly unknown), and where
/// the unknowns were; `known` is what a wholly known value's
/// `after_unknown` is.
fn after_and_unknown(after: &Value, known: Json) -> (Option<Json>, Json) {
    if after.is_wholly_known() {
        (Some(value_json(after)), known)
    } else {
        (omit_unknowns(after), unknown_as_bool(after))
    }
}

fn resource_change_json(rc: &ResourceChange) -> Json {
    let mut r = Map::new();
    r.insert("address".into(), json!(rc.addr.to_string()));
    if let Some(prev) = rc.previous_addr.as_ref().filter(|p| **p != rc.addr) {
        r.insert("previous_address".into(), json!(prev.to_string()));
    }
    if !rc.addr.module.is_empty() {
        r.insert("module_address".into(), json!(module_address(&rc.addr)));
    }
    r.insert("mode".into(), json!(mode_str(rc.addr.mode)));
    r.insert("type".into(), json!(rc.addr.type_name));
    r.insert("name".into(), json!(rc.addr.name));
    if let Some(k) = &rc.addr.key {
        r.insert("index".into(), key_json(k));
    }
    r.insert("provider_name".into(), json!(rc.provider));
    if let Some(key) = &rc.deposed {
        r.insert("deposed".into(), json!(key));
    }
    r.insert("change".into(), resource_change(rc).to_json());
    if let Some(reason) = &rc.reason {
        r.insert("action_reason".into(), json!(reason_str(reason)));
    }
    Json::Object(r)
}

fn mode_str(mode: Mode) -> &'static str {
    match mode {
        Mode::Managed => "managed",
        Mode::Data => "data",
    }
}

pub(crate) fn key_json(k: &InstanceKey) -> Json {
    match k {
        InstanceKey::Int(i) => json!(i),
        InstanceKey::Str(s) => json!(s),
    }
}

/// `module.a["x"].module.b`: the module part of an address.
pub(crate) fn module_address(addr: &ResourceInstanceAddr) -> String {
    crate::addr::module_text(&addr.module)
}

fn path_json(path: &AttributePath) -> Json {
    Json::Array(
        path.0
            .iter()
            .map(|step| match step {
                PathStep::Attribute(name) | PathStep::Key(name) => json!(name),
                PathStep::Index(i) => json!(i),
            })
            .collect(),
    )
}

/// `planned_values`: every instance that will exist after apply, with its
/// known values, and the outputs that will.
fn planned_values(plan: &Plan) -> Json {
    let mut out = Map::new();
    let outputs: Map<String, Json> = plan
        .outputs
        .iter()
        .filter(|o| o.action != Action::Delete)
        .map(|o| {
            let mut v = Map::new();
            v.insert("sensitive".into(), json!(o.sensitive));
            if let Some(after) = o.after.as_ref().filter(|a| a.is_wholly_known()) {
                v.insert("type".into(), after.ty().to_json());
                v.insert("value".into(), value_json(after));
            }
            (o.name.clone(), Json::Object(v))
        })
        .collect();
    if !outputs.is_empty() {
        out.insert("outputs".into(), Json::Object(outputs));
    }
    let kept: Vec<&ResourceChange> = plan
        .changes
        .iter()
        .filter(|c| c.action != Action::Delete)
        .collect();
    out.insert("root_module".into(), planned_module(&kept, &[]));
    Json::Object(out)
}

/// One module of `planned_values`: its instances, sorted by address text
/// as terraform sorts them, and its child modules.
fn planned_module(changes: &[&ResourceChange], path: &[String]) -> Json {
    let step_text = |s: &crate::addr::ModuleStep| {
        format!(
            "module.{}{}",
            s.name,
            s.key.as_ref().map(|k| k.to_string()).unwrap_or_default()
        )
    };
    let mut resources: Vec<(String, Json)> = Vec::new();
    let mut children: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for c in changes {
        let steps: Vec<String> = c.addr.module.iter().map(step_text).collect();
        if steps.len() < path.len() || steps[..path.len()] != *path {
            continue;
        }
        if steps.len() == path.len() {
            resources.push((c.addr.to_string(), planned_resource(c)));
        } else {
            let child = steps[..=path.len()].to_vec();
            children.insert(child.join("."), child);
        }
    }
    resources.sort_by(|a, b| a.0.cmp(&b.0));
    let mut m = Map::new();
    if !resources.is_empty() {
        m.insert(
            "resources".into(),
            Json::Array(resources.into_iter().map(|(_, r)| r).collect()),
        );
    }
    if !path.is_empty() {
        m.insert("address".into(), json!(path.join(".")));
    }
    if !children.is_empty() {
        let kids = children
            .values()
            .map(|child| planned_module(changes, child))
            .collect();
        m.insert("child_modules".into(), Json::Array(kids));
    }
    Json::Object(m)
}

fn planned_resource(rc: &ResourceChange) -> Json {
    let mut r = Map::new();
    r.insert("address".into(), json!(rc.addr.to_string()));
    r.insert("mode".into(), json!(mode_str(rc.addr.mode)));
    r.insert("type".into(), json!(rc.addr.type_name));
    r.insert("name".into(), json!(rc.addr.name));
    if let Some(k) = &rc.addr.key {
        r.insert("index".into(), key_json(k));
    }
    r.insert("provider_name".into(), json!(rc.provider));
    r.insert("schema_version".into(), json!(rc.schema.version));
    if let Some(after) = &rc.after {
        let after = mark_schema_sensitive(after.clone(), &rc.schema.block);
        if let Some(Json::Object(values)) = omit_unknowns(&after).filter(|_| !after.is_null()) {
            r.insert("values".into(), Json::Object(values));
        }
        r.insert("sensitive_values".into(), sensitive_as_bool(&after));
    }
    Json::Object(r)
}

/// A known value in cty's JSON encoding; an unknown (which callers leave
/// out first) is written as null.
pub fn value_json(v: &Value) -> Json {
    match &v.kind {
        Kind::Null(_) | Kind::Unknown(_) => Json::Null,
        Kind::String(s) => Json::String(s.clone()),
        Kind::Number(n) => number_json(n),
        Kind::Bool(b) => Json::Bool(*b),
        Kind::List(_, e) | Kind::Set(_, e) | Kind::Tuple(e) => {
            Json::Array(e.iter().map(value_json).collect())
        }
        Kind::Map(_, m) | Kind::Object(m) => {
            Json::Object(m.iter().map(|(k, v)| (k.clone(), value_json(v))).collect())
        }
    }
}

/// A number as cty writes it (Go's `Text('f', -1)`). serde_json holds
/// integers exactly; other numbers go through f64, so a fraction with
/// more than 17 significant digits is rounded.
fn number_json(n: &Number) -> Json {
    let text = n.to_string_shortest();
    serde_json::from_str::<serde_json::Number>(&text)
        .map(Json::Number)
        .unwrap_or(Json::Null)
}

/// The value with its unknowns left out: `None` for a wholly unknown
/// value, attributes and map elements dropped, sequence elements nulled.
pub(crate) fn omit_unknowns(v: &Value) -> Option<Json> {
    match &v.kind {
        Kind::Unknown(_) => None,
        Kind::List(_, e) | Kind::Set(_, e) | Kind::Tuple(e) => Some(Json::Array(
            e.iter()
                .map(|x| omit_unknowns(x).unwrap_or(Json::Null))
                .collect(),
        )),
        Kind::Map(_, m) | Kind::Object(m) => Some(Json::Object(
            m.iter()
                .filter_map(|(k, x)| omit_unknowns(x).map(|j| (k.clone(), j)))
                .collect(),
        )),
        _ => Some(value_json(v)),
    }
}

/// Where the unknowns are: `true` for an unknown, `false` for a known
/// leaf or a null, arrays and objects following the value (objects leave
/// out what is known).
pub(crate) fn unknown_as_bool(v: &Value) -> Json {
    match &v.kind {
        Kind::Null(_) => Json::Bool(false),
        Kind::Unknown(_) => Json::Bool(true),
        Kind::List(_, e) | Kind::Set(_, e) | Kind::Tuple(e) => {
            Json::Array(e.iter().map(unknown_as_bool).collect())
        }
        Kind::Map(_, m) | Kind::Object(m) => Json::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), unknown_as_bool(x)))
                .filter(|(_, j)| *j != Json::Bool(false))
                .collect(),
        ),
        _ => Json::Bool(false),
    }
}

/// Where the sensitive values are, in the shape `unknown_as_bool` uses:
/// `true` for a marked value; an unknown collection is an empty one.
pub(crate) fn sensitive_as_bool(v: &Value) -> Json {
    if v.sensitive {
        return Json::Bool(true);
    }
    match &v.kind {
        Kind::Null(_) => Json::Bool(false),
        Kind::Unknown(t) => match t {
            Type::List(_) | Type::Set(_) | Type::Tuple(_) => json!([]),
            Type::Map(_) | Type::Object { .. } => json!({}),
            _ => Json::Bool(false),
        },
        Kind::List(_, e) | Kind::Set(_, e) | Kind::Tuple(e) => {
            Json::Array(e.iter().map(sensitive_as_bool).collect())
        }
        Kind::Map(_, m) | Kind::Object(m) => Json::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), sensitive_as_bool(x)))
                .filter(|(_, j)| *j != Json::Bool(false))
                .collect(),
        ),
        _ => Json::Bool(false),
    }
}

/// The value with the schema's sensitive attributes marked, at every
/// depth where the value is a known object (terraform's
/// `Block.SensitivePaths`). A null sensitive attribute is marked too.
pub(crate) fn mark_schema_sensitive(v: Value, block: &Block) -> Value {
    let Value { kind, sensitive } = v;
    let Kind::Object(mut attrs) = kind else {
        return Value { kind, sensitive };
    };
    for (name, attr) in &block.attributes {
        if let Some(child) = attrs.remove(name) {
            attrs.insert(name.clone(), mark_attribute(child, attr));
        }
    }
    for (name, nested) in &block.block_types {
        if let Some(child) = attrs.remove(name) {
            let child = match nested.nesting {
                Nesting::Single | Nesting::Group => mark_schema_sensitive(child, &nested.block),
                _ => map_elements(child, |e| mark_schema_sensitive(e, &nested.block)),
            };
            attrs.insert(name.clone(), child);
        }
    }
    Value {
        kind: Kind::Object(attrs),
        sensitive,
    }
}

fn mark_attribute(v: Value, attr: &Attribute) -> Value {
    let v = match &attr.nested_type {
        Some(nested) => {
            let inner = Block {
                attributes: nested.attributes.clone(),
                ..Block::default()
            };
            match nested.nesting {
                ObjectNesting::Single => mark_schema_sensitive(v, &inner),
                _ => map_elements(v, |e| mark_schema_sensitive(e, &inner)),
            }
        }
        None => v,
    };
    v.with_sensitive(attr.sensitive)
}

fn map_elements(v: Value, f: impl Fn(Value) -> Value) -> Value {
    let Value { kind, sensitive } = v;
    let kind = match kind {
        Kind::List(t, e) => Kind::List(t, e.into_iter().map(&f).collect()),
        Kind::Set(t, e) => Kind::Set(t, e.into_iter().map(&f).collect()),
        Kind::Tuple(e) => Kind::Tuple(e.into_iter().map(&f).collect()),
        Kind::Map(t, m) => Kind::Map(t, m.into_iter().map(|(k, x)| (k, f(x))).collect()),
        k => k,
    };
    Value { kind, sensitive }
}

/// Error reading a value back from the JSON plan format.
#[derive(Debug, thiserror::Error)]
#[error("JSON value does not fit type {ty}: {json}")]
pub struct FromJsonError {
    ty: String,
    json: String,
}

/// Reads a value of type `ty` back from the JSON plan format: `json` is
/// the value (unknowns left out), `unknown` the matching `after_unknown`
/// and `sensitive` the matching `*_sensitive` (either may be `null` when
/// absent). Sets keep the JSON's element order only as far as cty's order
/// allows.
pub fn value_from_json(
    json: &Json,
    ty: &Type,
    unknown: &Json,
    sensitive: &Json,
) -> Result<Value, FromJsonError> {
    let err = || FromJsonError {
        ty: ty.friendly_name(),
        json: json.to_string(),
    };
    let marked = *sensitive == Json::Bool(true);
    if *unknown == Json::Bool(true) {
        return Ok(Value::unknown(ty.clone()).with_sensitive(marked));
    }
    let at_key = |j: &Json, k: &str| j.get(k).cloned().unwrap_or(Json::Null);
    let at_index = |j: &Json, i: usize| j.get(i).cloned().unwrap_or(Json::Null);
    if json.is_null() {
        return Ok(Value::null(ty.clone()).with_sensitive(marked));
    }
    let v = match (ty, json) {
        (Type::String, Json::String(s)) => Value::string(s.clone()),
        (Type::Number, Json::Number(n)) => {
            Value::number(Number::parse(&n.to_string()).ok_or_else(err)?)
        }
        (Type::Bool, Json::Bool(b)) => Value::bool(*b),
        (Type::List(et) | Type::Set(et), Json::Array(items)) => {
            let mut elems = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                elems.push(value_from_json(
                    item,
                    et,
                    &at_index(unknown, i),
                    &at_index(sensitive, i),
                )?);
            }
            if matches!(ty, Type::Set(_)) {
                // A set's elements carry no marks of their own.
                let any = elems.iter().any(Value::has_sensitive);
                Value::set((**et).clone(), elems).with_sensitive(any)
            } else {
                Value::list((**et).clone(), elems)
            }
        }
        (Type::Tuple(ets), Json::Array(items)) if ets.len() == items.len() => {
            let mut elems = Vec::with_capacity(items.len());
            for (i, (item, et)) in items.iter().zip(ets).enumerate() {
                elems.push(value_from_json(
                    item,
                    et,
                    &at_index(unknown, i),
                    &at_index(sensitive, i),
                )?);
            }
            Value::tuple(elems)
        }
        (Type::Map(et), Json::Object(items)) => {
            let mut elems = BTreeMap::new();
            let keys = items.keys().chain(
                unknown
                    .as_object()
                    .into_iter()
                    .flat_map(|u| u.keys())
                    .filter(|k| !items.contains_key(*k)),
            );
            for k in keys {
                let item = items.get(k).cloned().unwrap_or(Json::Null);
                let v = value_from_json(&item, et, &at_key(unknown, k), &at_key(sensitive, k))?;
                elems.insert(k.clone(), v);
            }
            Value::map((**et).clone(), elems)
        }
        (Type::Object { attributes, .. }, Json::Object(items)) => {
            let mut attrs = BTreeMap::new();
            for (k, at) in attributes {
                let item = items.get(k).cloned().unwrap_or(Json::Null);
                let v = value_from_json(&item, at, &at_key(unknown, k), &at_key(sensitive, k))?;
                attrs.insert(k.clone(), v);
            }
            Value::object(attrs)
        }
        (Type::Dynamic, j) => dynamic_from_json(j),
        _ => return Err(err()),
    };
    Ok(v.with_sensitive(marked))
}

/// A value of no declared type: the type JSON implies (objects, tuples,
/// numbers, strings, bools).
fn dynamic_from_json(j: &Json) -> Value {
    match j {
        Json::Null => Value::null(Type::Dynamic),
        Json::Bool(b) => Value::bool(*b),
        Json::Number(n) => Number::parse(&n.to_string())
            .map(Value::number)
            .unwrap_or_else(|| Value::null(Type::Number)),
        Json::String(s) => Value::string(s.clone()),
        Json::Array(items) => Value::tuple(items.iter().map(dynamic_from_json).collect()),
        Json::Object(items) => Value::object(
            items
                .iter()
                .map(|(k, v)| (k.clone(), dynamic_from_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_text_escapes_as_go_does() {
        let doc = json!({"<k>": "a & b\u{2028}\u{2029}é"});
        assert_eq!(
            go_text(&doc, false),
            r#"{"\u003ck\u003e":"a \u0026 b\u2028\u2029é"}"#
        );
        assert_eq!(
            go_text(&json!({"a": [1]}), true),
            "{\n  \"a\": [\n    1\n  ]\n}"
        );
        // A sequence split across writes is still found.
        use std::io::Write;
        let mut w = GoEscaped::new(Vec::new());
        w.write_all(b"\"x\xE2\x80").unwrap();
        w.write_all(b"\xA8\xE2").unwrap();
        let out = w.finish().unwrap();
        assert_eq!(out, b"\"x\\u2028\xE2");
    }

    fn obj(pairs: &[(&str, Value)]) -> Value {
        Value::object(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn unknowns_leave_after_and_mark_after_unknown() {
        let v = obj(&[
            ("id", Value::unknown(Type::String)),
            ("name", Value::string("q")),
            (
                "list",
                Value::list(
                    Type::String,
                    vec![Value::string("a"), Value::unknown(Type::String)],
                ),
            ),
            ("tags", Value::unknown(Type::map(Type::String))),
        ]);
        assert_eq!(
            omit_unknowns(&v).unwrap(),
            json!({"name": "q", "list": ["a", null]})
        );
        assert_eq!(
            unknown_as_bool(&v),
            json!({"id": true, "list": [false, true], "tags": true})
        );
        assert_eq!(omit_unknowns(&Value::unknown(Type::String)), None);
    }

    #[test]
    fn sensitive_marks_and_unknown_collections() {
        let v = obj(&[
            ("secret", Value::string("s").with_sensitive(true)),
            ("tags", Value::map(Type::String, BTreeMap::new())),
            ("later", Value::unknown(Type::list(Type::String))),
            ("n", Value::null(Type::String)),
        ]);
        assert_eq!(
            sensitive_as_bool(&v),
            json!({"secret": true, "tags": {}, "later": []})
        );
    }

    #[test]
    fn numbers_are_json_numbers() {
        assert_eq!(value_json(&Value::int(262144)), json!(262144));
        let half = Number::parse("0.5").unwrap();
        assert_eq!(value_json(&Value::number(half)), json!(0.5));
    }

    #[test]
    fn reads_back_what_it_writes() {
        let ty = Type::object(
            [
                ("id".to_string(), Type::String),
                ("n".to_string(), Type::Number),
                ("tags".to_string(), Type::map(Type::String)),
            ]
            .into(),
        );
        let unknown = json!({"id": true});
        let sensitive = json!({"tags": {"k": true}});
        let after = json!({"n": 3, "tags": {"k": "v"}});
        let v = value_from_json(&after, &ty, &unknown, &sensitive).unwrap();
        assert!(!v.get("id").unwrap().is_known());
        assert!(v.get("tags").unwrap().get("k").unwrap().sensitive);
        assert_eq!(omit_unknowns(&v).unwrap(), after);
        // A known map is an empty object in after_unknown, not left out.
        assert_eq!(unknown_as_bool(&v), json!({"id": true, "tags": {}}));
        assert_eq!(sensitive_as_bool(&v), sensitive);
    }
}
