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
use crate::value::{Kind, Type, Value};

/// The proposed new object for `block`, from its prior value (null for a
/// create) and its configuration (null for a destroy).
pub fn proposed_new(block: &Block, prior: &Value, config: &Value) -> Value {
    if config.is_null() && prior.is_null() {
        return prior.clone();
    }
    let prior = if prior.is_null() {
        // All attributes null, as an empty configuration block decodes.
        Value::object(
            attribute_types(block)
                .into_iter()
                .map(|(name, t)| (name, Value::null(t)))
                .collect(),
        )
    } else {
        prior.clone()
    };
    proposed_object(block, &prior, config)
}

/// The type of each attribute and nested block type of `block`, as its
/// values have them.
fn attribute_types(block: &Block) -> BTreeMap<String, Type> {
    match block.implied_type().without_optional() {
        Type::Object { attributes, .. } => attributes,
        _ => unreachable!("a block's implied type is an object"),
    }
}

/// The attribute `name` of `v`, or a null of type `t` when `v` has none.
fn get(v: &Value, name: &str, t: &Type) -> Value {
    v.get(name)
        .cloned()
        .unwrap_or_else(|| Value::null(t.clone()))
}

fn proposed_object(block: &Block, prior: &Value, config: &Value) -> Value {
    let Kind::Object(config_attrs) = &config.kind else {
        // A null or unknown block configuration: keep the prior value.
        return prior.clone();
    };
    let types = attribute_types(block);
    let mut out = BTreeMap::new();
    for (name, attr) in &block.attributes {
        let config_v = get(config, name, &types[name]);
        let new = if attr.computed && config_v.is_null() {
            get(prior, name, &types[name])
        } else {
            config_v
        };
        out.insert(name.clone(), new);
    }
    for (name, nested) in &block.block_types {
        let config_v = config_attrs
            .get(name)
            .cloned()
            .unwrap_or_else(|| Value::null(types[name].clone()));
        out.insert(
            name.clone(),
            proposed_nested(nested, &get(prior, name, &types[name]), &config_v),
        );
    }
    Value::object(out).with_sensitive(config.sensitive)
}

fn proposed_nested(nested: &NestedBlock, prior: &Value, config: &Value) -> Value {
    if !config.is_known() {
        return config.clone();
    }
    let block = &nested.block;
    let out = match (nested.nesting, &config.kind) {
        (Nesting::Single, Kind::Null(_)) => return config.clone(),
        (Nesting::Single | Nesting::Group, _) => return proposed_object(block, prior, config),
        (Nesting::List, Kind::List(ety, items)) => {
            let prior_items = match &prior.kind {
                Kind::List(_, p) => p.as_slice(),
                _ => &[],
            };
            Value::list(
                ety.clone(),
                items
                    .iter()
                    .enumerate()
                    .map(|(i, c)| element(block, prior_items.get(i), c))
                    .collect(),
            )
        }
        (Nesting::Map, Kind::Map(ety, items)) => {
            let prior_items = match &prior.kind {
                Kind::Map(_, p) => Some(p),
                _ => None,
            };
            Value::map(
                ety.clone(),
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
        (Nesting::Set, Kind::Set(ety, items)) => {
            let prior_items = match &prior.kind {
                Kind::Set(_, p) => p.as_slice(),
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
            Value::set(ety.clone(), out)
        }
        // A collection of blocks that is null or of another shape: take it
        // as configured.
        _ => return config.clone(),
    };
    out.with_sensitive(config.sensitive)
}

fn element(block: &Block, prior: Option<&Value>, config: &Value) -> Value {
    match prior {
        Some(p) if !p.is_null() => proposed_object(block, p, config),
        _ => proposed_new(block, &Value::null(block.implied_type()), config),
    }
}

/// Whether a prior set element could have come from this configuration
/// element: equal on every non-computed attribute, recursively.
fn agrees_on_config(block: &Block, prior: &Value, config: &Value) -> bool {
    let types = attribute_types(block);
    let get = |v: &Value, name: &str| get(v, name, &types[name]);
    block
        .attributes
        .iter()
        .filter(|(_, a)| !a.computed)
        .all(|(name, _)| get(prior, name) == get(config, name))
        && block.block_types.iter().all(|(name, nested)| {
            let (p, c) = (get(prior, name), get(config, name));
            match (&p.kind, &c.kind) {
                (Kind::List(_, ps), Kind::List(_, cs)) | (Kind::Set(_, ps), Kind::Set(_, cs)) => {
                    ps.len() == cs.len()
                        && cs
                            .iter()
                            .all(|c| ps.iter().any(|p| agrees_on_config(&nested.block, p, c)))
                }
                (Kind::Map(_, ps), Kind::Map(_, cs)) => {
                    ps.len() == cs.len()
                        && cs.iter().all(|(k, c)| {
                            ps.get(k)
                                .is_some_and(|p| agrees_on_config(&nested.block, p, c))
                        })
                }
                (Kind::Object(_), Kind::Object(_)) => agrees_on_config(&nested.block, &p, &c),
                _ => p == c,
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::schema::{Attribute, DescriptionKind};

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
        Value::object(
            entries
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    fn s(text: &str) -> Value {
        Value::string(text)
    }

    fn null() -> Value {
        Value::null(Type::String)
    }

    fn rule_type() -> Type {
        Type::object(
            [
                ("port".to_string(), Type::String),
                ("rule_id".to_string(), Type::String),
            ]
            .into(),
        )
    }

    fn rules(items: Vec<Value>) -> Value {
        Value::set(rule_type(), items)
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
            ("name", s("q")),
            ("id", null()),
            ("policy", null()),
            (
                "rule",
                rules(vec![obj(&[("port", s("80")), ("rule_id", null())])]),
            ),
        ]);
        let prior = Value::null(block().implied_type());
        assert_eq!(proposed_new(&block(), &prior, &config), config);
    }

    #[test]
    fn update_keeps_computed_values_the_configuration_leaves_null() {
        let prior = obj(&[
            ("name", s("old")),
            ("id", s("q-1")),
            ("policy", s("{}")),
            (
                "rule",
                rules(vec![
                    obj(&[("port", s("443")), ("rule_id", s("r-443"))]),
                    obj(&[("port", s("80")), ("rule_id", s("r-80"))]),
                ]),
            ),
        ]);
        let config = obj(&[
            ("name", s("new")),
            ("id", null()),
            ("policy", null()),
            (
                "rule",
                rules(vec![
                    obj(&[("port", s("80")), ("rule_id", null())]),
                    obj(&[("port", s("22")), ("rule_id", null())]),
                ]),
            ),
        ]);
        let want = obj(&[
            ("name", s("new")),
            ("id", s("q-1")),
            ("policy", s("{}")),
            (
                "rule",
                rules(vec![
                    obj(&[("port", s("80")), ("rule_id", s("r-80"))]),
                    obj(&[("port", s("22")), ("rule_id", null())]),
                ]),
            ),
        ]);
        assert_eq!(proposed_new(&block(), &prior, &config), want);
    }

    #[test]
    fn configured_computed_value_wins_and_unknown_stays() {
        let prior = obj(&[
            ("name", s("q")),
            ("id", s("q-1")),
            ("policy", s("{}")),
            ("rule", rules(vec![])),
        ]);
        let config = obj(&[
            ("name", Value::unknown(Type::String)),
            ("id", null()),
            ("policy", s("{\"v\":1}")),
            ("rule", Value::unknown(Type::set(rule_type()))),
        ]);
        let got = proposed_new(&block(), &prior, &config);
        assert_eq!(got.get("name"), Some(&Value::unknown(Type::String)));
        assert_eq!(got.get("policy"), Some(&s("{\"v\":1}")));
        assert_eq!(
            got.get("rule"),
            Some(&Value::unknown(Type::set(rule_type())))
        );
    }

    #[test]
    fn destroy_of_nothing_is_null() {
        let null = Value::null(block().implied_type());
        assert_eq!(proposed_new(&block(), &null, &null), null);
    }
}
