//! The proposed new object a plan starts from: terraform's `ProposedNew`
//! (`plans/objchange`), which merges a resource's configuration over its
//! prior state before the provider plans.
//!
//! For each attribute: a non-computed attribute takes the configuration's
//! value; a computed one takes the prior value when the configuration is
//! null (so optional+computed attributes keep what the provider chose), and
//! the configuration's value otherwise. Nested blocks recurse: single and
//! group blocks directly, list blocks paired by index, map blocks by key,
//! and set blocks with the unused prior element that agrees on every
//! non-computed attribute. Unknown configuration values stay unknown.
//!
//! Not yet: nested attribute types (protocol 6) and write-only attributes.

use std::collections::BTreeMap;

use super::schema::{Block, NestedBlock, Nesting};
use super::value::Value;

/// The proposed new object for `block`, from its prior value (null for a
/// create) and its configuration (null for a destroy).
pub fn proposed_new(block: &Block, prior: &Value, config: &Value) -> Value {
    if config.is_null() && prior.is_null() {
        return Value::Null;
    }
    let prior = if prior.is_null() {
        // All attributes null, as an empty configuration block decodes.
        let nulls = block
            .attributes
            .keys()
            .chain(block.block_types.keys())
            .map(|name| (name.clone(), Value::Null))
            .collect();
        Value::Object(nulls)
    } else {
        prior.clone()
    };
    proposed_object(block, &prior, config)
}

fn proposed_object(block: &Block, prior: &Value, config: &Value) -> Value {
    let Value::Object(config_attrs) = config else {
        // A null or unknown block configuration: keep the prior value.
        return prior.clone();
    };
    let get = |v: &Value, name: &str| v.get(name).cloned().unwrap_or(Value::Null);
    let mut out = BTreeMap::new();
    for (name, attr) in &block.attributes {
        let config_v = config_attrs.get(name).cloned().unwrap_or(Value::Null);
        let new = if attr.computed && config_v.is_null() {
            get(prior, name)
        } else {
            config_v
        };
        out.insert(name.clone(), new);
    }
    for (name, nested) in &block.block_types {
        let config_v = config_attrs.get(name).cloned().unwrap_or(Value::Null);
        out.insert(
            name.clone(),
            proposed_nested(nested, &get(prior, name), &config_v),
        );
    }
    Value::Object(out)
}

fn proposed_nested(nested: &NestedBlock, prior: &Value, config: &Value) -> Value {
    if matches!(config, Value::Unknown) {
        return Value::Unknown;
    }
    let block = &nested.block;
    match (nested.nesting, config) {
        (Nesting::Single, Value::Null) => Value::Null,
        (Nesting::Single | Nesting::Group, _) => proposed_object(block, prior, config),
        (Nesting::List, Value::List(items)) => {
            let prior_items = match prior {
                Value::List(p) => p.as_slice(),
                _ => &[],
            };
            Value::List(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, c)| element(block, prior_items.get(i), c))
                    .collect(),
            )
        }
        (Nesting::Map, Value::Map(items)) => {
            let prior_items = match prior {
                Value::Map(p) => Some(p),
                _ => None,
            };
            Value::Map(
                items
                    .iter()
                    .map(|(k, c)| {
                        (
                            k.clone(),
                            element(block, prior_items.and_then(|p| p.get(k)), c),
                        )
                    })
                    .collect(),
            )
        }
        (Nesting::Set, Value::Set(items)) => {
            let prior_items = match prior {
                Value::Set(p) => p.as_slice(),
                _ => &[],
            };
            let mut used = vec![false; prior_items.len()];
            let mut out = Vec::new();
            for c in items {
                let matched = prior_items
                    .iter()
                    .enumerate()
                    .find(|(i, p)| !used[*i] && agrees_on_config(block, p, c))
                    .map(|(i, p)| {
                        used[i] = true;
                        p
                    });
                out.push(element(block, matched, c));
            }
            Value::Set(out)
        }
        // A collection of blocks that is null or of another shape: take it
        // as configured.
        _ => config.clone(),
    }
}

fn element(block: &Block, prior: Option<&Value>, config: &Value) -> Value {
    match prior {
        Some(p) if !p.is_null() => proposed_object(block, p, config),
        _ => proposed_new(block, &Value::Null, config),
    }
}

/// Whether a prior set element could have come from this configuration
/// element: equal on every non-computed attribute, recursively.
fn agrees_on_config(block: &Block, prior: &Value, config: &Value) -> bool {
    let get = |v: &Value, name: &str| v.get(name).cloned().unwrap_or(Value::Null);
    block
        .attributes
        .iter()
        .filter(|(_, a)| !a.computed)
        .all(|(name, _)| get(prior, name) == get(config, name))
        && block.block_types.iter().all(|(name, nested)| {
            let (p, c) = (get(prior, name), get(config, name));
            match (&p, &c) {
                (Value::List(ps), Value::List(cs)) | (Value::Set(ps), Value::Set(cs)) => {
                    ps.len() == cs.len()
                        && cs
                            .iter()
                            .all(|c| ps.iter().any(|p| agrees_on_config(&nested.block, p, c)))
                }
                (Value::Map(ps), Value::Map(cs)) => {
                    ps.len() == cs.len()
                        && cs.iter().all(|(k, c)| {
                            ps.get(k)
                                .is_some_and(|p| agrees_on_config(&nested.block, p, c))
                        })
                }
                (Value::Object(_), Value::Object(_)) => agrees_on_config(&nested.block, &p, &c),
                _ => p == c,
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::schema::{Attribute, DescriptionKind};
    use crate::provider::types::Type;

    fn attr(optional: bool, computed: bool) -> Attribute {
        Attribute {
            ty: Type::String,
            description: String::new(),
            description_kind: DescriptionKind::Plain,
            required: !optional && !computed,
            optional,
            computed,
            sensitive: false,
            deprecated: false,
            write_only: false,
        }
    }

    fn obj(entries: &[(&str, Value)]) -> Value {
        Value::Object(
            entries
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    /// name (required), id (computed), policy (optional+computed), and a
    /// set block `rule` with a required `port` and a computed `rule_id`.
    fn block() -> Block {
        let mut rule = Block::default();
        rule.attributes.insert("port".into(), attr(false, false));
        rule.attributes.insert("rule_id".into(), attr(false, true));
        let mut b = Block::default();
        b.attributes.insert("name".into(), attr(false, false));
        b.attributes.insert("id".into(), attr(false, true));
        b.attributes.insert("policy".into(), attr(true, true));
        b.block_types.insert(
            "rule".into(),
            NestedBlock {
                nesting: Nesting::Set,
                block: rule,
                min_items: 0,
                max_items: 0,
            },
        );
        b
    }

    #[test]
    fn create_takes_the_configuration() {
        let config = obj(&[
            ("name", "q".into()),
            ("id", Value::Null),
            ("policy", Value::Null),
            (
                "rule",
                Value::Set(vec![obj(&[
                    ("port", "80".into()),
                    ("rule_id", Value::Null),
                ])]),
            ),
        ]);
        assert_eq!(proposed_new(&block(), &Value::Null, &config), config);
    }

    #[test]
    fn update_keeps_computed_values_the_configuration_leaves_null() {
        let prior = obj(&[
            ("name", "old".into()),
            ("id", "q-1".into()),
            ("policy", "{}".into()),
            (
                "rule",
                Value::Set(vec![
                    obj(&[("port", "443".into()), ("rule_id", "r-443".into())]),
                    obj(&[("port", "80".into()), ("rule_id", "r-80".into())]),
                ]),
            ),
        ]);
        let config = obj(&[
            ("name", "new".into()),
            ("id", Value::Null),
            ("policy", Value::Null),
            (
                "rule",
                Value::Set(vec![
                    obj(&[("port", "80".into()), ("rule_id", Value::Null)]),
                    obj(&[("port", "22".into()), ("rule_id", Value::Null)]),
                ]),
            ),
        ]);
        let want = obj(&[
            ("name", "new".into()),
            ("id", "q-1".into()),
            ("policy", "{}".into()),
            (
                "rule",
                Value::Set(vec![
                    obj(&[("port", "80".into()), ("rule_id", "r-80".into())]),
                    obj(&[("port", "22".into()), ("rule_id", Value::Null)]),
                ]),
            ),
        ]);
        assert_eq!(proposed_new(&block(), &prior, &config), want);
    }

    #[test]
    fn configured_computed_value_wins_and_unknown_stays() {
        let prior = obj(&[
            ("name", "q".into()),
            ("id", "q-1".into()),
            ("policy", "{}".into()),
            ("rule", Value::Set(vec![])),
        ]);
        let config = obj(&[
            ("name", Value::Unknown),
            ("id", Value::Null),
            ("policy", "{\"v\":1}".into()),
            ("rule", Value::Unknown),
        ]);
        let got = proposed_new(&block(), &prior, &config);
        assert_eq!(got.get("name"), Some(&Value::Unknown));
        assert_eq!(got.get("policy"), Some(&Value::from("{\"v\":1}")));
        assert_eq!(got.get("rule"), Some(&Value::Unknown));
    }

    #[test]
    fn destroy_of_nothing_is_null() {
        assert_eq!(
            proposed_new(&block(), &Value::Null, &Value::Null),
            Value::Null
        );
    }
}
