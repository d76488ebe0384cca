//! The proposed object, apart from the walk: how the configuration is
//! adjusted before the provider plans it (ignore_changes, equivalent JSON
//! kept in its live form, arguments only the record store knows), and how
//! the provider's answer is judged (which paths really force a
//! replacement, whether anything changes at all).
//!
//! Pure functions over values; nothing here talks to a provider.

use crate::config::{IgnoreChanges, Resource};
use crate::provider::path::{AttributePath, PathStep};
use crate::provider::schema::{Block, Nesting, Schema};
use crate::record::{self, Record};
use crate::value::{Kind, Value};
use hcl_edit::expr::{Expression, TraversalOperator};
use std::collections::BTreeMap;

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
fn ignore_path(e: &Expression) -> Option<Vec<String>> {
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

/// Fills in the arguments the provider cannot read back, as terraform's
/// state holds them: the value the record kept from the last apply, so a
/// changed configuration plans its update as stock does; with no record,
/// the configured value, since the live system cannot disagree with it.
/// One left null takes the provider's planned default later. A `timeouts`
/// block is one of them for every type.
pub fn patch_config_only(
    live: &mut Value,
    config: &Value,
    record: Option<&Record>,
    config_only: &[&str],
    schema: &Schema,
) {
    let Kind::Object(attrs) = &mut live.kind else {
        return;
    };
    for name in config_only {
        let configured = config
            .get(name)
            .filter(|v| !v.is_null() && v.is_known())
            .cloned();
        let recorded = record
            .and_then(|r| r.config_only.get(*name))
            .zip(schema.block.attributes.get(*name))
            .and_then(|(j, a)| record::from_json(j, &a.ty));
        if let Some(v) = recorded.or(configured) {
            attrs.insert(name.to_string(), v);
        }
    }
    if schema.block.block_types.contains_key(TIMEOUTS) {
        if let Some(v) = config
            .get(TIMEOUTS)
            .filter(|v| !v.is_null() && v.is_known())
        {
            attrs.insert(TIMEOUTS.to_string(), v.clone());
        }
    }
}

/// The provider SDK's `timeouts` block, of every type that has one: never
/// read back from the API, kept by terraform's state from the
/// configuration of the last apply, so config-only for every type.
const TIMEOUTS: &str = "timeouts";

/// Config-only arguments still null in the live value take the planned
/// value (the provider's default), so leaving them unset is no change.
pub fn default_config_only(live: &mut Value, planned: &Value, config_only: &[&str]) {
    let Kind::Object(attrs) = &mut live.kind else {
        return;
    };
    for name in config_only.iter().copied().chain([TIMEOUTS]) {
        if attrs.get(name).is_some_and(Value::is_null) {
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
pub fn forcing(prior: &Value, planned: &Value, paths: &[AttributePath]) -> Vec<AttributePath> {
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

/// A state object as the configuration that would produce it: attributes
/// the provider sets or computes when left out are null, everything else
/// as it is.
pub fn config_from_state(block: &Block, state: &Value) -> Value {
    from_state(block, state, true)
}

/// [`config_from_state`] at any depth: only the object's own `id` (`top`)
/// is the provider's; a nested block's `id` (a replication rule's) is
/// configuration like any other attribute.
fn from_state(block: &Block, state: &Value, top: bool) -> Value {
    let Kind::Object(attrs) = &state.kind else {
        return state.clone();
    };
    let mut out = BTreeMap::new();
    for (name, v) in attrs {
        if let Some(a) = block.attributes.get(name) {
            // What the provider computes when configuration leaves it out
            // is left out here too: the proposed value keeps the prior
            // one, and the provider's own checks see what a root that
            // never set it would give (a NAT gateway's secondary address
            // count, which it refuses beside a public connectivity type).
            let settable = a.required || (a.optional && !a.computed);
            out.insert(
                name.clone(),
                if settable && !(top && name == "id") {
                    v.clone()
                } else {
                    Value::null(v.ty())
                },
            );
        } else if let Some(nested) = block.block_types.get(name) {
            let inner = |e: &Value| from_state(&nested.block, e, false);
            let converted = match (&v.kind, nested.nesting) {
                (_, _) if v.is_null() || !v.is_known() => v.clone(),
                (Kind::List(t, items), _) => {
                    Value::list(t.clone(), items.iter().map(inner).collect())
                }
                (Kind::Set(t, items), _) => {
                    Value::set(t.clone(), items.iter().map(inner).collect())
                }
                (Kind::Map(t, items), _) => Value::map(
                    t.clone(),
                    items.iter().map(|(k, e)| (k.clone(), inner(e))).collect(),
                ),
                (Kind::Object(_), Nesting::Single | Nesting::Group) => inner(v),
                _ => v.clone(),
            };
            out.insert(name.clone(), converted);
        } else {
            out.insert(name.clone(), v.clone());
        }
    }
    Value::object(out).with_sensitive(state.sensitive)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Type;
    use std::collections::BTreeMap;

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
    fn only_the_objects_own_id_is_left_out_of_the_configuration_a_state_gives() {
        let block: Block = serde_json::from_value(serde_json::json!({
            "attributes": {
                "id": { "type": "string", "optional": true, "computed": true },
                "bucket": { "type": "string", "required": true }
            },
            "block_types": { "rule": { "nesting": "list", "block": { "attributes": {
                "id": { "type": "string", "optional": true },
                "status": { "type": "string", "required": true }
            } } } }
        }))
        .unwrap();
        let rule = Value::object(BTreeMap::from([
            ("id".to_string(), Value::string("keep")),
            ("status".to_string(), Value::string("Enabled")),
        ]));
        let state = Value::object(BTreeMap::from([
            ("id".to_string(), Value::string("b")),
            ("bucket".to_string(), Value::string("b")),
            (
                "rule".to_string(),
                Value::list(rule.ty(), vec![rule.clone()]),
            ),
        ]));
        let config = config_from_state(&block, &state);
        assert!(config.get("id").unwrap().is_null());
        assert_eq!(config.get("bucket"), Some(&Value::string("b")));
        // A rule's `id` is written in configuration: a write that left it
        // out would have the API make up another.
        assert_eq!(
            config.get("rule"),
            Some(&Value::list(rule.ty(), vec![rule]))
        );
    }
}
