//! The proposed new object a plan starts from: terraform's `ProposedNew`
//! (`plans/objchange`), which merges a resource's configuration over its
//! prior state before the provider plans.
//!
//! For each attribute: a non-computed attribute takes the configuration's
//! value; a computed one takes the prior value when the configuration is
//! null (so optional+computed attributes keep what the provider chose), and
//! the configuration's value otherwise. The one exception: an optional
//! nested attribute whose prior value holds a non-computed value keeps the
//! configuration's null, since that value can only have come from a
//! configuration that no longer sets it.
//!
//! Nested blocks and nested attributes (protocol 6) recurse alike: single
//! and group blocks and single nested attributes directly, lists paired by
//! index, maps by key, and sets with the first unused prior element that
//! could have come from the configuration element (equal but for computed
//! attributes the configuration leaves null). Unknown configuration values
//! stay unknown.
//!
//! Write-only attributes are merged like any other: terraform sends their
//! configured values in the proposed object and the configuration, and the
//! provider plans them as null (checked in [`super::grpc`]).

use std::collections::BTreeMap;

use super::schema::{Attribute, Block, NestedBlock, NestedType, Nesting, ObjectNesting};
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

/// The attribute `name` of `v`, or a null of type `t` when `v` has none
/// (an unknown when `v` is unknown).
fn get(v: &Value, name: &str, t: &Type) -> Value {
    match v.get(name) {
        Some(x) => x.clone(),
        None if !v.is_known() => Value::unknown(t.without_optional()),
        None => Value::null(t.without_optional()),
    }
}

/// Equality as cty's `RawEquals` judges it, marks aside.
fn raw_equals(a: &Value, b: &Value) -> bool {
    if a.has_sensitive() || b.has_sensitive() {
        a.clone().unmark_deep() == b.clone().unmark_deep()
    } else {
        a == b
    }
}

fn proposed_object(block: &Block, prior: &Value, config: &Value) -> Value {
    let Kind::Object(config_attrs) = &config.kind else {
        // A null or unknown block configuration: keep the prior value.
        return prior.clone();
    };
    let types = attribute_types(block);
    let mut out = proposed_attributes(&block.attributes, prior, config);
    for (name, nested) in &block.block_types {
        let config_v = config_attrs
            .get(name)
            .cloned()
            .unwrap_or_else(|| Value::null(types[name].clone()));
        out.insert(
            name.clone(),
            proposed_nested_block(nested, &get(prior, name, &types[name]), &config_v),
        );
    }
    Value::object(out).with_sensitive(config.sensitive)
}

/// terraform's `proposedNewAttributes`: the attributes of a block or of a
/// nested attribute's object, merged.
fn proposed_attributes(
    attributes: &BTreeMap<String, Attribute>,
    prior: &Value,
    config: &Value,
) -> BTreeMap<String, Value> {
    attributes
        .iter()
        .map(|(name, attr)| {
            let prior_v = get(prior, name, &attr.ty);
            let config_v = get(config, name, &attr.ty);
            let new = if attr.computed && config_v.is_null() {
                if configured_before(attr, &prior_v) {
                    config_v
                } else {
                    prior_v
                }
            } else if let Some(nested) = &attr.nested_type {
                proposed_nested_type(nested, &prior_v, &config_v)
            } else {
                config_v
            };
            (name.clone(), new)
        })
        .collect()
}

/// terraform's `optionalValueNotComputable`: whether an optional nested
/// attribute's prior value holds a non-null value of a non-computed
/// attribute, which only configuration can have set.
fn configured_before(attr: &Attribute, prior: &Value) -> bool {
    match &attr.nested_type {
        Some(nested) if attr.optional => holds_configured_value(nested, prior),
        _ => false,
    }
}

fn holds_configured_value(nested: &NestedType, v: &Value) -> bool {
    objects(nested.nesting, v).into_iter().any(|object| {
        nested.attributes.iter().any(|(name, a)| {
            let Some(x) = object.get(name).filter(|x| !x.is_null()) else {
                return false;
            };
            !a.computed
                || a.nested_type
                    .as_ref()
                    .is_some_and(|inner| holds_configured_value(inner, x))
        })
    })
}

/// The objects a nested attribute's value holds.
fn objects(nesting: ObjectNesting, v: &Value) -> Vec<&Value> {
    match (nesting, &v.kind) {
        (ObjectNesting::Single, Kind::Object(_)) => vec![v],
        (_, Kind::List(_, items) | Kind::Set(_, items) | Kind::Tuple(items)) => {
            items.iter().collect()
        }
        (_, Kind::Map(_, items)) => items.values().collect(),
        (_, Kind::Object(items)) => items.values().collect(),
        _ => Vec::new(),
    }
}

/// terraform's `proposedNewNestedType`.
fn proposed_nested_type(nested: &NestedType, prior: &Value, config: &Value) -> Value {
    if !config.is_known() || config.is_null() {
        return config.clone();
    }
    let object = |prior: Option<&Value>, config: &Value| match prior {
        Some(p) => proposed_object_attributes(nested, p, config),
        None => config.clone(),
    };
    let merge_set_element = |prior: Option<&Value>, config: &Value| match prior {
        Some(p) => proposed_object_attributes(nested, p, config),
        None => proposed_object_attributes(nested, &Value::null(config.ty()), config),
    };
    let valid_prior = |p: &Value, c: &Value| valid_prior_attributes(&nested.attributes, p, c);
    match nested.nesting {
        ObjectNesting::Single => proposed_object_attributes(nested, prior, config),
        ObjectNesting::List => proposed_list(prior, config, object),
        ObjectNesting::Map => proposed_map(prior, config, object),
        ObjectNesting::Set => proposed_set(prior, config, valid_prior, merge_set_element),
    }
}

/// terraform's `proposedNewObjectAttributes`.
fn proposed_object_attributes(nested: &NestedType, prior: &Value, config: &Value) -> Value {
    if config.is_null() {
        return config.clone();
    }
    Value::object(proposed_attributes(&nested.attributes, prior, config))
        .with_sensitive(config.sensitive)
}

fn proposed_nested_block(nested: &NestedBlock, prior: &Value, config: &Value) -> Value {
    if !config.is_known() {
        return config.clone();
    }
    let block = &nested.block;
    let element = |prior: Option<&Value>, config: &Value| match prior {
        Some(p) => proposed_new(block, p, config),
        None => config.clone(),
    };
    let set_element = |prior: Option<&Value>, config: &Value| {
        proposed_new(
            block,
            prior.unwrap_or(&Value::null(block.implied_type().without_optional())),
            config,
        )
    };
    let valid_prior = |p: &Value, c: &Value| valid_prior_block(block, p, c);
    match (nested.nesting, &config.kind) {
        (Nesting::Single, Kind::Null(_)) => config.clone(),
        (Nesting::Single | Nesting::Group, _) => proposed_new(block, prior, config),
        (Nesting::List, _) => proposed_list(prior, config, element),
        (Nesting::Map, _) => proposed_map(prior, config, element),
        (Nesting::Set, _) => proposed_set(prior, config, valid_prior, set_element),
    }
}

/// A list (or tuple) of blocks or objects, paired with the prior list by
/// index; an element with no prior counterpart is taken as configured.
fn proposed_list(
    prior: &Value,
    config: &Value,
    merge: impl Fn(Option<&Value>, &Value) -> Value,
) -> Value {
    let prior_item = |i: usize| -> Option<Value> {
        match &prior.kind {
            Kind::List(_, p) | Kind::Tuple(p) => p.get(i).cloned(),
            Kind::Unknown(t) => Some(Value::unknown(
                t.element().cloned().unwrap_or(Type::Dynamic),
            )),
            _ => None,
        }
    };
    let out = match &config.kind {
        Kind::List(ety, items) if !items.is_empty() => Value::list(
            ety.clone(),
            items
                .iter()
                .enumerate()
                .map(|(i, c)| merge(prior_item(i).as_ref(), c))
                .collect(),
        ),
        Kind::Tuple(items) if !items.is_empty() => Value::tuple(
            items
                .iter()
                .enumerate()
                .map(|(i, c)| merge(prior_item(i).as_ref(), c))
                .collect(),
        ),
        _ => return config.clone(),
    };
    out.with_sensitive(config.sensitive)
}

/// A map (or object) of blocks or objects, paired with the prior one by
/// key; an element with no prior counterpart is taken as configured.
fn proposed_map(
    prior: &Value,
    config: &Value,
    merge: impl Fn(Option<&Value>, &Value) -> Value,
) -> Value {
    let prior_item = |k: &str| -> Option<Value> {
        match &prior.kind {
            Kind::Map(_, p) | Kind::Object(p) => p.get(k).cloned(),
            _ => None,
        }
    };
    let merged = |items: &BTreeMap<String, Value>| -> BTreeMap<String, Value> {
        items
            .iter()
            .map(|(k, c)| (k.clone(), merge(prior_item(k).as_ref(), c)))
            .collect()
    };
    let out = match &config.kind {
        Kind::Map(ety, items) if !items.is_empty() => Value::map(ety.clone(), merged(items)),
        Kind::Object(items) if !items.is_empty() => Value::object(merged(items)),
        _ => return config.clone(),
    };
    out.with_sensitive(config.sensitive)
}

/// A set of blocks or objects: each configuration element is paired with
/// the first unused prior element that could have come from it.
fn proposed_set(
    prior: &Value,
    config: &Value,
    valid_prior: impl Fn(&Value, &Value) -> bool,
    merge: impl Fn(Option<&Value>, &Value) -> Value,
) -> Value {
    let Kind::Set(ety, items) = &config.kind else {
        return config.clone();
    };
    if items.is_empty() {
        return config.clone();
    }
    let prior_items = match &prior.kind {
        Kind::Set(_, p) => p.as_slice(),
        _ => &[],
    };
    let mut used = vec![false; prior_items.len()];
    let mut out = Vec::with_capacity(items.len());
    for c in items {
        let matched = prior_items
            .iter()
            .enumerate()
            .find(|(i, p)| !used[*i] && valid_prior(p, c))
            .map(|(i, p)| {
                used[i] = true;
                p
            });
        out.push(merge(matched, c));
    }
    Value::set(ety.clone(), out).with_sensitive(config.sensitive)
}

/// terraform's `validPriorFromConfig` for a block: whether `prior` could
/// have been planned from `config`, differing only where a computed
/// attribute is null in the configuration. Sets are not looked into.
fn valid_prior_block(block: &Block, prior: &Value, config: &Value) -> bool {
    if raw_equals(prior, config) {
        return true;
    }
    if !valid_prior_attributes(&block.attributes, prior, config) {
        return false;
    }
    let types = attribute_types(block);
    block.block_types.iter().all(|(name, nested)| {
        let (p, c) = (
            get(prior, name, &types[name]),
            get(config, name, &types[name]),
        );
        let shape = match nested.nesting {
            Nesting::Single | Nesting::Group => Shape::Object,
            Nesting::List => Shape::List,
            Nesting::Map => Shape::Map,
            Nesting::Set => Shape::Set,
        };
        valid_prior_nested(shape, &p, &c, &|p, c| {
            valid_prior_block(&nested.block, p, c)
        })
    })
}

fn valid_prior_attributes(
    attributes: &BTreeMap<String, Attribute>,
    prior: &Value,
    config: &Value,
) -> bool {
    if raw_equals(prior, config) {
        return true;
    }
    if !matches!(
        (&prior.kind, &config.kind),
        (Kind::Object(_), Kind::Object(_))
    ) {
        // A null prior holds nothing to disagree with; anything else that
        // differs is not of this configuration.
        return prior.is_null();
    }
    attributes.iter().all(|(name, a)| {
        let (p, c) = (get(prior, name, &a.ty), get(config, name, &a.ty));
        if raw_equals(&p, &c) {
            return true;
        }
        match &a.nested_type {
            Some(nested) => {
                let shape = match nested.nesting {
                    ObjectNesting::Single => Shape::Object,
                    ObjectNesting::List => Shape::List,
                    ObjectNesting::Map => Shape::Map,
                    ObjectNesting::Set => Shape::Set,
                };
                valid_prior_nested(shape, &p, &c, &|p, c| {
                    valid_prior_attributes(&nested.attributes, p, c)
                })
            }
            // A leaf may differ only where it is computed and left null.
            None => !is_set_typed(&c) && a.computed && c.is_null(),
        }
    })
}

/// How the objects of a nested block type or nested attribute repeat.
#[derive(Clone, Copy)]
enum Shape {
    Object,
    List,
    Map,
    Set,
}

/// Unequal values of a nested block type or nested attribute: objects
/// compare attribute by attribute, lists element by element and maps key
/// by key (every prior element needs a counterpart); sets must be equal.
fn valid_prior_nested(
    shape: Shape,
    prior: &Value,
    config: &Value,
    element: &dyn Fn(&Value, &Value) -> bool,
) -> bool {
    if is_set_typed(config) {
        return false;
    }
    if prior.is_null() {
        return true;
    }
    match (shape, &prior.kind, &config.kind) {
        (Shape::Object, Kind::Object(_), Kind::Object(_)) => element(prior, config),
        (Shape::List, Kind::List(_, ps) | Kind::Tuple(ps), Kind::List(_, cs) | Kind::Tuple(cs)) => {
            ps.len() <= cs.len() && ps.iter().zip(cs).all(|(p, c)| element(p, c))
        }
        (Shape::Map, Kind::Map(_, ps) | Kind::Object(ps), Kind::Map(_, cs) | Kind::Object(cs)) => {
            ps.iter()
                .all(|(k, p)| cs.get(k).is_some_and(|c| element(p, c)))
        }
        _ => false,
    }
}

fn is_set_typed(v: &Value) -> bool {
    match &v.kind {
        Kind::Set(..) => true,
        Kind::Null(t) | Kind::Unknown(t) => matches!(t, Type::Set(_)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::schema::DescriptionKind;

    fn attr(optional: bool, computed: bool) -> Attribute {
        Attribute {
            ty: Type::String,
            nested_type: None,
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
    /// A resource with nested attributes: `disk` (single), `ports` (set),
    /// `tags` (map) and `rules` (list), each object with a configurable
    /// `name` and a computed `id`; `rules` is optional+computed.
    fn nested_block() -> Block {
        let object = NestedType {
            nesting: ObjectNesting::Single,
            attributes: [
                ("name".to_string(), attr(true, false)),
                ("id".to_string(), attr(false, true)),
            ]
            .into(),
        };
        let mut b = Block::default();
        for (name, nesting, computed) in [
            ("disk", ObjectNesting::Single, false),
            ("ports", ObjectNesting::Set, false),
            ("tags", ObjectNesting::Map, false),
            ("rules", ObjectNesting::List, true),
        ] {
            let nested = NestedType {
                nesting,
                ..object.clone()
            };
            b.attributes.insert(
                name.into(),
                Attribute {
                    ty: nested.implied_type(),
                    nested_type: Some(nested),
                    ..attr(true, computed)
                },
            );
        }
        b
    }

    fn item(name: Value, id: Value) -> Value {
        obj(&[("name", name), ("id", id)])
    }

    fn item_type() -> Type {
        item(null(), null()).ty()
    }

    #[test]
    fn nested_attributes_keep_computed_values_by_nesting() {
        let prior = obj(&[
            ("disk", item(s("d"), s("disk-1"))),
            (
                "ports",
                Value::set(
                    item_type(),
                    vec![item(s("80"), s("p-80")), item(s("443"), s("p-443"))],
                ),
            ),
            (
                "tags",
                Value::map(
                    item_type(),
                    [("a".to_string(), item(s("x"), s("t-a")))].into(),
                ),
            ),
            (
                "rules",
                Value::list(item_type(), vec![item(s("r"), s("r-1"))]),
            ),
        ]);
        let config = obj(&[
            ("disk", item(s("d2"), null())),
            (
                "ports",
                Value::set(
                    item_type(),
                    vec![item(s("443"), null()), item(s("22"), null())],
                ),
            ),
            (
                "tags",
                Value::map(
                    item_type(),
                    [
                        ("a".to_string(), item(s("y"), null())),
                        ("b".to_string(), item(s("z"), null())),
                    ]
                    .into(),
                ),
            ),
            ("rules", Value::null(Type::list(item_type()))),
        ]);
        let got = proposed_new(&nested_block(), &prior, &config);
        // A single object keeps its computed id.
        assert_eq!(got.get("disk"), Some(&item(s("d2"), s("disk-1"))));
        // A set element keeps the id of the prior element it came from.
        assert_eq!(
            got.get("ports"),
            Some(&Value::set(
                item_type(),
                vec![item(s("443"), s("p-443")), item(s("22"), null())]
            ))
        );
        // Map elements pair by key.
        assert_eq!(
            got.get("tags"),
            Some(&Value::map(
                item_type(),
                [
                    ("a".to_string(), item(s("y"), s("t-a"))),
                    ("b".to_string(), item(s("z"), null())),
                ]
                .into()
            ))
        );
        // `rules` once held a configured name: configuration removed it,
        // so it stays null rather than keeping the prior list.
        assert_eq!(
            got.get("rules"),
            Some(&Value::null(Type::list(item_type())))
        );
    }

    #[test]
    fn optional_computed_nested_attribute_keeps_what_the_provider_chose() {
        // Only computed values in the prior list: the provider chose it.
        let chosen = Value::list(item_type(), vec![item(null(), s("r-1"))]);
        let prior = obj(&[
            ("disk", Value::null(item_type())),
            ("ports", Value::null(Type::set(item_type()))),
            ("tags", Value::null(Type::map(item_type()))),
            ("rules", chosen.clone()),
        ]);
        let config = obj(&[
            ("disk", Value::null(item_type())),
            ("ports", Value::null(Type::set(item_type()))),
            ("tags", Value::null(Type::map(item_type()))),
            ("rules", Value::null(Type::list(item_type()))),
        ]);
        let got = proposed_new(&nested_block(), &prior, &config);
        assert_eq!(got.get("rules"), Some(&chosen));
        // An unknown nested configuration stays unknown.
        let mut unknown_disk = config.clone();
        if let Kind::Object(attrs) = &mut unknown_disk.kind {
            attrs.insert("disk".into(), Value::unknown(item_type()));
        }
        let got = proposed_new(&nested_block(), &prior, &unknown_disk);
        assert_eq!(got.get("disk"), Some(&Value::unknown(item_type())));
    }
}
