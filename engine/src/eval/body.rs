//! A resource's, data source's or provider's body evaluated against its
//! schema: arguments converted to their types, nested blocks gathered by
//! their nesting mode (for a body read from JSON, which arguments are
//! blocks is decided here), `dynamic` blocks expanded, and terraform's errors for
//! arguments and blocks the schema does not have.
//!
//! As in terraform, an attribute of list or set of object type may also be
//! written as blocks named after it, static or `dynamic`, each block one
//! element of the list (terraform's "attributes as blocks", kept for
//! providers built on the legacy SDK): the blocks' bodies are read against
//! the element's attributes, all optional, and a body that sets the
//! attribute with `=` takes it as an argument instead. No block of that name
//! leaves the attribute null. Schemas a legacy SDK could not have produced
//! (nested attributes, object or tuple types) keep every attribute an
//! argument.

use super::inputs::at_expr;
use super::Scope;
use crate::config::{span_of, Body};
use crate::diag::{suggest, Diagnostic, Diagnostics};
use crate::provider::schema::{Attribute, Block, NestedBlock, Nesting};
use crate::source::{Range, SourceFile};
use crate::value::convert::convert;
use crate::value::{Kind, Type, Value};
use hcl_edit::structure::{Block as HclBlock, Body as HclBody};
use std::collections::BTreeMap;

/// One nested block found: its label (map nesting), value and place.
type Found = (Option<String>, Value, Range);

/// The body's value as an object of the schema's implied type.
pub fn decode(body: &Body, schema: &Block, scope: &Scope) -> Result<Value, Diagnostics> {
    let mut diags = Diagnostics::default();
    let mode = Mode {
        attributes_as_blocks: attributes_as_blocks(schema),
        unknown: false,
    };
    let v = decode_body(&body.body, &body.file, schema, scope, mode, &mut diags);
    if diags.has_errors() {
        Err(diags)
    } else {
        Ok(v)
    }
}

/// How a body is read.
#[derive(Clone, Copy)]
struct Mode {
    /// Whether attributes of list or set of object type may be written as
    /// blocks here.
    attributes_as_blocks: bool,
    /// The body of a `dynamic` block whose `for_each` is not known yet (or
    /// one nested in it): checked against the schema but never evaluated,
    /// every argument it sets unknown and every nested block type it holds
    /// wholly unknown, as terraform reads such a body.
    unknown: bool,
}

/// What the blocks of one type in a body become.
enum Target<'a> {
    /// The values of a nested block type.
    Nested(&'a NestedBlock),
    /// The elements of an attribute written as blocks, read against the
    /// element's attributes.
    Elements(&'a Block),
}

/// Whether terraform lets the attributes of list or set of object type in
/// `schema` be written as blocks: not when any attribute, at any depth of
/// nested blocks, has a type the legacy SDK could not declare.
pub fn attributes_as_blocks(schema: &Block) -> bool {
    let legacy = |a: &Attribute| {
        if a.nested_type.is_some() {
            return false;
        }
        match &a.ty {
            Type::Object { .. } | Type::Tuple(_) => false,
            Type::Map(e) if matches!(**e, Type::Object { .. }) => false,
            Type::List(e) | Type::Set(e) | Type::Map(e) => match e.element() {
                Some(inner) => inner.is_primitive(),
                None => true,
            },
            _ => true,
        }
    };
    schema.attributes.values().all(legacy)
        && schema
            .block_types
            .values()
            .all(|b| attributes_as_blocks(&b.block))
}

/// The schema a block standing for one element of an attribute of list or
/// set of object type is read against: the object's attributes, each
/// optional.
fn element_schema(element: &Type) -> Block {
    let Type::Object { attributes, .. } = element else {
        return Block::default();
    };
    Block {
        attributes: attributes
            .iter()
            .map(|(name, ty)| {
                let a = Attribute {
                    ty: ty.clone(),
                    nested_type: None,
                    description: String::new(),
                    description_kind: Default::default(),
                    required: false,
                    optional: true,
                    computed: false,
                    sensitive: false,
                    deprecated: false,
                    write_only: false,
                };
                (name.clone(), a)
            })
            .collect(),
        ..Block::default()
    }
}

/// The element type of an attribute of list or set of object type.
fn object_elements(ty: &Type) -> Option<&Type> {
    match ty {
        Type::List(e) | Type::Set(e) if matches!(**e, Type::Object { .. }) => Some(e),
        _ => None,
    }
}

fn decode_body(
    body: &HclBody,
    file: &SourceFile,
    schema: &Block,
    scope: &Scope,
    mode: Mode,
    diags: &mut Diagnostics,
) -> Value {
    let split;
    let body = if file.is_json() {
        let labels = |name: &str| {
            let nested = schema.block_types.get(name)?;
            (!schema.attributes.contains_key(name))
                .then_some(usize::from(nested.nesting == Nesting::Map))
        };
        split = crate::config::json::split_blocks(body, file, labels, diags);
        &split
    } else {
        body
    };
    // The attributes this body writes as blocks, with their elements' schema.
    let as_blocks: BTreeMap<&str, Block> = if mode.attributes_as_blocks {
        schema
            .attributes
            .iter()
            .filter(|(name, _)| !body.has_attribute(name))
            .filter_map(|(name, a)| Some((name.as_str(), element_schema(object_elements(&a.ty)?))))
            .collect()
    } else {
        BTreeMap::new()
    };
    let mut given: BTreeMap<String, Value> = BTreeMap::new();
    let mut seen = BTreeMap::new();
    for attr in body.attributes() {
        let name = attr.key.as_str();
        let key_range = file.range(span_of(&attr.key));
        if let Some(first) = seen.insert(name.to_string(), key_range.clone()) {
            diags.push(
                Diagnostic::error(
                    "Attribute redefined",
                    format!("The argument \"{name}\" was already set at {first}. Each argument may be set only once."),
                )
                .at(key_range),
            );
            continue;
        }
        let Some(a) = schema.attributes.get(name) else {
            let hint = if schema.block_types.contains_key(name) {
                format!(" Did you mean to define a block of type \"{name}\"?")
            } else {
                suggest(name, schema.attributes.keys())
            };
            diags.push(
                Diagnostic::error(
                    "Unsupported argument",
                    format!("An argument named \"{name}\" is not expected here.{hint}"),
                )
                .at(key_range),
            );
            continue;
        };
        if mode.unknown {
            given.insert(name.to_string(), Value::unknown(a.ty.without_optional()));
            continue;
        }
        let span = span_of(&attr.value);
        let v = match scope.eval(&attr.value) {
            Ok(v) => v,
            Err(e) => {
                diags.push(at_expr(e, file, span));
                continue;
            }
        };
        match convert(v, &a.ty) {
            Ok(v) => {
                given.insert(name.to_string(), v);
            }
            Err(e) => diags.push(type_error(name, &e, file.range(span))),
        }
    }
    for (name, a) in &schema.attributes {
        // An attribute that may be written as blocks is never missing to
        // the language: the provider says whether it must be set.
        if a.required && !seen.contains_key(name) && !as_blocks.contains_key(name.as_str()) {
            diags.push(
                Diagnostic::error(
                    "Missing required argument",
                    format!("The argument \"{name}\" is required, but no definition was found."),
                )
                .at(body_range(body, file)),
            );
        }
    }
    let mut found = Gathered::default();
    for block in body.blocks() {
        let ident = block.ident.as_str();
        if ident == "dynamic" {
            dynamic(
                block, file, schema, &as_blocks, scope, mode, diags, &mut found,
            );
            continue;
        }
        let target = match (schema.block_types.get(ident), as_blocks.get(ident)) {
            (Some(nested), _) => Target::Nested(nested),
            (None, Some(element)) => Target::Elements(element),
            (None, None) => {
                let hint = if schema.attributes.contains_key(ident) {
                    format!(" Did you mean to define argument \"{ident}\"? If so, use the equals sign to assign it a value.")
                } else {
                    String::new()
                };
                diags.push(
                    Diagnostic::error(
                        "Unsupported block type",
                        format!("Blocks of type \"{ident}\" are not expected here.{hint}"),
                    )
                    .at(file.range(span_of(&block.ident))),
                );
                continue;
            }
        };
        let map = matches!(target, Target::Nested(n) if n.nesting == Nesting::Map);
        if !labels_fit(block, usize::from(map), "name", file, diags) {
            continue;
        }
        let label = block.labels.first().map(|l| l.as_str().to_string());
        let at = file.range(span_of(&block.ident));
        found.read(
            ident,
            &target,
            &block.body,
            label,
            at,
            file,
            scope,
            mode,
            diags,
        );
    }
    for (name, nested) in &schema.block_types {
        let blocks = found.blocks.remove(name).unwrap_or_default();
        let is_unknown = found.unknown.contains(name.as_str());
        if let Some(value) = nested_value(name, nested, blocks, is_unknown, body, file, diags) {
            given.insert(name.clone(), value);
        }
    }
    for (name, elements) in found.elements {
        let a = &schema.attributes[&name];
        let at = elements[0].1.clone();
        let ety = object_elements(&a.ty).map(Type::without_optional);
        let list = Value::list(
            ety.unwrap_or(Type::Dynamic),
            elements.into_iter().map(|(v, _)| v).collect(),
        );
        match convert(list, &a.ty) {
            Ok(v) => {
                given.insert(name, v);
            }
            Err(e) => diags.push(type_error(&name, &e, at)),
        }
    }
    schema.value_with(given)
}

/// terraform's error for a value that does not convert to its attribute's
/// type.
fn type_error(name: &str, e: &crate::value::convert::ConvertError, at: Range) -> Diagnostic {
    let path = if e.path.is_empty() {
        String::new()
    } else {
        format!("{}: ", e.path.trim_start_matches('.'))
    };
    Diagnostic::error(
        "Incorrect attribute value type",
        format!(
            "Inappropriate value for attribute \"{name}\": {path}{}.",
            e.message
        ),
    )
    .at(at)
}

/// The blocks of a body, static and generated, by type.
#[derive(Default)]
struct Gathered {
    /// Nested blocks by block type.
    blocks: BTreeMap<String, Vec<Found>>,
    /// Nested block types a block of which is unknown, which makes the
    /// whole type's value unknown.
    unknown: std::collections::BTreeSet<String>,
    /// Elements of attributes written as blocks, with each block's place.
    elements: BTreeMap<String, Vec<(Value, Range)>>,
}

impl Gathered {
    /// Reads one block's `body` of type `name` into what it stands for.
    #[allow(clippy::too_many_arguments)]
    fn read(
        &mut self,
        name: &str,
        target: &Target<'_>,
        body: &HclBody,
        label: Option<String>,
        at: Range,
        file: &SourceFile,
        scope: &Scope,
        mode: Mode,
        diags: &mut Diagnostics,
    ) {
        match target {
            Target::Nested(nested) => {
                let v = decode_body(body, file, &nested.block, scope, mode, diags);
                if mode.unknown {
                    self.unknown.insert(name.to_string());
                }
                self.blocks
                    .entry(name.to_string())
                    .or_default()
                    .push((label, v, at));
            }
            Target::Elements(element) => {
                let mode = Mode {
                    attributes_as_blocks: attributes_as_blocks(element),
                    ..mode
                };
                let v = decode_body(body, file, element, scope, mode, diags);
                self.elements
                    .entry(name.to_string())
                    .or_default()
                    .push((v, at));
            }
        }
    }
}

/// The value of nested block type `name` from the blocks found, after
/// checking their number; `None` when no block was given.
fn nested_value(
    name: &str,
    nested: &NestedBlock,
    found: Vec<Found>,
    is_unknown: bool,
    body: &HclBody,
    file: &SourceFile,
    diags: &mut Diagnostics,
) -> Option<Value> {
    let inner = nested.block.implied_type().without_optional();
    if !is_unknown {
        let n = found.len() as u64;
        let at = found
            .get(nested.max_items as usize)
            .or(found.last())
            .map(|f| f.2.clone());
        if nested.min_items > 0
            && n < nested.min_items
            && !matches!(nested.nesting, Nesting::Single | Nesting::Group)
        {
            diags.push(
                Diagnostic::error(
                    format!("Insufficient {name} blocks"),
                    format!(
                        "At least {} \"{name}\" blocks are required.",
                        nested.min_items
                    ),
                )
                .at(body_range(body, file)),
            );
        }
        if nested.max_items > 0 && n > nested.max_items
            || matches!(nested.nesting, Nesting::Single | Nesting::Group) && n > 1
        {
            let d = Diagnostic::error(
                format!("Too many {name} blocks"),
                format!(
                    "No more than {} \"{name}\" blocks are allowed",
                    nested.max_items.max(1)
                ),
            );
            diags.push(match at {
                Some(r) => d.at(r),
                None => d,
            });
        }
        if nested.min_items == 1 && n == 0 && nested.nesting == Nesting::Single {
            diags.push(
                Diagnostic::error(
                    format!("Missing {name} block"),
                    format!("A block of type \"{name}\" is required here."),
                )
                .at(body_range(body, file)),
            );
        }
    }
    if is_unknown {
        return Some(match nested.nesting {
            Nesting::Single | Nesting::Group => Value::unknown(inner),
            Nesting::List if inner.has_dynamic() => Value::unknown(Type::Dynamic),
            Nesting::List => Value::unknown(Type::list(inner)),
            Nesting::Set => Value::unknown(Type::set(inner)),
            Nesting::Map => Value::unknown(Type::map(inner)),
        });
    }
    if found.is_empty() {
        return None;
    }
    let mut items: Vec<(Option<String>, Value)> =
        found.into_iter().map(|(l, v, _)| (l, v)).collect();
    Some(match nested.nesting {
        Nesting::Single | Nesting::Group => items.remove(0).1,
        Nesting::List if inner.has_dynamic() => {
            Value::tuple(items.into_iter().map(|i| i.1).collect())
        }
        Nesting::List => Value::list(inner, items.into_iter().map(|i| i.1).collect()),
        Nesting::Set => Value::set(inner, items.into_iter().map(|i| i.1).collect()),
        Nesting::Map if inner.has_dynamic() => Value::object(
            items
                .into_iter()
                .map(|(l, v)| (l.unwrap_or_default(), v))
                .collect(),
        ),
        Nesting::Map => Value::map(
            inner,
            items
                .into_iter()
                .map(|(l, v)| (l.unwrap_or_default(), v))
                .collect(),
        ),
    })
}

/// Whether `block` has the `want` labels its type takes (`what` names
/// them), with hcl's errors when it has not.
fn labels_fit(
    block: &HclBlock,
    want: usize,
    what: &str,
    file: &SourceFile,
    diags: &mut Diagnostics,
) -> bool {
    let name = block.ident.as_str();
    let have = block.labels.len();
    if have > want {
        let detail = if want == 0 {
            format!("No labels are expected for {name} blocks.")
        } else {
            format!("Only {want} labels ({what}) are expected for {name} blocks.")
        };
        diags.push(
            Diagnostic::error(format!("Extraneous label for {name}"), detail)
                .at(file.range(span_of(&block.labels[want]))),
        );
        return false;
    }
    if have < want {
        diags.push(
            Diagnostic::error(
                format!("Missing {what} for {name}"),
                format!("All {name} blocks must have {want} labels ({what})."),
            )
            .at(file.range(span_of(&block.ident))),
        );
        return false;
    }
    true
}

/// Expands a `dynamic "name" { for_each, iterator, labels, content }` block.
#[allow(clippy::too_many_arguments)]
fn dynamic(
    block: &HclBlock,
    file: &SourceFile,
    schema: &Block,
    as_blocks: &BTreeMap<&str, Block>,
    scope: &Scope,
    mode: Mode,
    diags: &mut Diagnostics,
    found: &mut Gathered,
) {
    let at = file.range(span_of(&block.ident));
    if !labels_fit(block, 1, "type", file, diags) {
        return;
    }
    let name = block.labels[0].as_str().to_string();
    let target = match (schema.block_types.get(&name), as_blocks.get(name.as_str())) {
        (Some(nested), _) => Target::Nested(nested),
        (None, Some(element)) => Target::Elements(element),
        (None, None) => {
            diags.push(
                Diagnostic::error(
                    "Unsupported block type",
                    format!("Blocks of type \"{name}\" are not expected here."),
                )
                .at(at),
            );
            return;
        }
    };
    let iterator = block
        .body
        .get_attribute("iterator")
        .and_then(|a| crate::config::keyword_path(&a.value))
        .and_then(|p| p.into_iter().next())
        .unwrap_or_else(|| name.clone());
    let Some(for_each) = block.body.get_attribute("for_each") else {
        diags.push(
            Diagnostic::error(
                "Missing required argument",
                "The argument \"for_each\" is required, but no definition was found.",
            )
            .at(at),
        );
        return;
    };
    let Some(content) = block.body.blocks().find(|b| b.ident.as_str() == "content") else {
        diags.push(
            Diagnostic::error(
                "Missing content block",
                "A dynamic block must have a nested block of type \"content\" to describe the body of each generated block.",
            )
            .at(at),
        );
        return;
    };
    let collection = if mode.unknown {
        Value::unknown(Type::Dynamic)
    } else {
        match scope.eval(&for_each.value) {
            Ok(v) => v,
            Err(e) => {
                diags.push(at_expr(e, file, span_of(&for_each.value)));
                return;
            }
        }
    };
    if !collection.is_known() {
        // One block whose every value is unknown stands for all of them:
        // its body is still checked against the schema.
        let unknown = Mode {
            unknown: true,
            ..mode
        };
        found.read(
            &name,
            &target,
            &content.body,
            None,
            at,
            file,
            scope,
            unknown,
            diags,
        );
        if let Target::Nested(_) = target {
            found.unknown.insert(name);
        }
        return;
    }
    if collection.is_null() {
        diags.push(
            Diagnostic::error(
                "Invalid dynamic for_each value",
                "Cannot use a null value in for_each.",
            )
            .at(file.range(span_of(&for_each.value))),
        );
        return;
    }
    let pairs: Vec<(Value, Value)> = match &collection.kind {
        Kind::List(_, items) | Kind::Tuple(items) | Kind::Set(_, items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let key = if matches!(collection.kind, Kind::Set(..)) {
                    v.clone()
                } else {
                    Value::int(i as i64)
                };
                (key, v.clone())
            })
            .collect(),
        Kind::Map(_, items) | Kind::Object(items) => items
            .iter()
            .map(|(k, v)| (Value::string(k.clone()), v.clone()))
            .collect(),
        _ => {
            diags.push(
                Diagnostic::error(
                    "Invalid dynamic for_each value",
                    format!(
                        "Cannot use a {} value in for_each. An iterable collection is required.",
                        collection.ty().friendly_name()
                    ),
                )
                .at(file.range(span_of(&for_each.value))),
            );
            return;
        }
    };
    for (key, value) in pairs {
        let it = Value::object(BTreeMap::from([
            ("key".to_string(), key),
            ("value".to_string(), value),
        ]))
        .with_sensitive(collection.sensitive);
        let inner_scope = scope.with(&iterator, it);
        let label = match block.body.get_attribute("labels") {
            Some(l) => match inner_scope.eval(&l.value) {
                Ok(v) => v
                    .elements()
                    .and_then(|e| e.first().and_then(|x| x.as_str().map(str::to_string))),
                Err(e) => {
                    diags.push(at_expr(e, file, span_of(&l.value)));
                    None
                }
            },
            None => None,
        };
        found.read(
            &name,
            &target,
            &content.body,
            label,
            at.clone(),
            file,
            &inner_scope,
            mode,
            diags,
        );
    }
}
/// Where a missing argument or block is reported: the body's start, or for
/// a body read from JSON (which has no span of its own) the end of its last
/// argument.
fn body_range(body: &HclBody, file: &SourceFile) -> crate::source::Range {
    use hcl_edit::Span;
    let at = match body.span() {
        Some(span) => span.start,
        None => body
            .attributes()
            .filter_map(|a| a.value.span())
            .map(|s| s.end)
            .max()
            .unwrap_or(0),
    };
    file.range(at..at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::schema::{NestedType, ObjectNesting};

    fn attr(ty: Type, required: bool) -> Attribute {
        let mut a = element_schema(&Type::object(BTreeMap::from([("x".to_string(), ty)])))
            .attributes
            .remove("x")
            .unwrap();
        a.required = required;
        a.optional = !required;
        a
    }

    fn object(attrs: &[(&str, Type)]) -> Type {
        Type::object(
            attrs
                .iter()
                .map(|(n, t)| (n.to_string(), t.clone()))
                .collect(),
        )
    }

    /// The shape of the aws provider's `aws_security_group`: `ingress` a
    /// set of objects, `name` a string, and `timeouts` a nested block.
    fn security_group() -> Block {
        let rule = object(&[
            ("cidr_blocks", Type::list(Type::String)),
            ("description", Type::String),
            ("from_port", Type::Number),
            ("protocol", Type::String),
        ]);
        let timeouts = Block {
            attributes: BTreeMap::from([("create".to_string(), attr(Type::String, false))]),
            ..Block::default()
        };
        Block {
            attributes: BTreeMap::from([
                ("ingress".to_string(), attr(Type::set(rule), false)),
                ("name".to_string(), attr(Type::String, false)),
            ]),
            block_types: BTreeMap::from([(
                "timeouts".to_string(),
                NestedBlock {
                    nesting: Nesting::Single,
                    block: timeouts,
                    min_items: 0,
                    max_items: 0,
                },
            )]),
            ..Block::default()
        }
    }

    fn scope() -> Scope {
        let ports = Value::tuple(vec![Value::int(80), Value::int(443)]);
        Scope::default().with(
            "var",
            Value::object(BTreeMap::from([
                ("ports".to_string(), ports),
                ("unknown".to_string(), Value::unknown(Type::Dynamic)),
            ])),
        )
    }

    fn decode_text(name: &str, text: &str, schema: &Block) -> Result<Value, Diagnostics> {
        let file = SourceFile::new(name, text);
        let body = if file.is_json() {
            // A resource's body, as the module reads it from JSON.
            let (top, diags) = crate::config::json::body(&file);
            assert!(diags.is_empty(), "{diags:?}");
            let resource = top.blocks().next().unwrap().body.clone();
            resource
        } else {
            hcl_edit::parser::parse_body(text).unwrap()
        };
        decode(&Body { body, file }, schema, &scope())
    }

    fn value(text: &str, schema: &Block) -> Value {
        decode_text("main.tf", text, schema).unwrap_or_else(|d| panic!("{d:?}"))
    }

    fn errors(text: &str, schema: &Block) -> Vec<(String, usize)> {
        let diags = decode_text("main.tf", text, schema).unwrap_err();
        diags
            .0
            .iter()
            .map(|d| (d.summary.clone(), d.subject.as_ref().unwrap().start.line))
            .collect()
    }

    /// `text` evaluated and converted to the type of `name` in `schema`.
    fn expected(text: &str, schema: &Block, name: &str) -> Value {
        let e: hcl_edit::expr::Expression = text.parse().unwrap();
        convert(scope().eval(&e).unwrap(), &schema.attributes[name].ty).unwrap()
    }

    #[test]
    fn blocks_static_and_dynamic_are_the_elements_of_a_set_attribute() {
        let sg = security_group();
        let v = value(
            r#"
name = "web"
ingress {
  from_port   = 22
  protocol    = "tcp"
  cidr_blocks = ["10.0.0.0/8"]
}
dynamic "ingress" {
  for_each = var.ports
  iterator = port
  content {
    from_port   = port.value
    protocol    = "tcp"
    description = "port ${port.key}"
  }
}
timeouts {
  create = "5m"
}
"#,
            &sg,
        );
        assert_eq!(
            v.get("ingress").unwrap(),
            &expected(
                r#"[
  {cidr_blocks = ["10.0.0.0/8"], description = null, from_port = 22, protocol = "tcp"},
  {cidr_blocks = null, description = "port 0", from_port = 80, protocol = "tcp"},
  {cidr_blocks = null, description = "port 1", from_port = 443, protocol = "tcp"},
]"#,
                &sg,
                "ingress"
            )
        );
        assert_eq!(v.get("name").unwrap(), &Value::string("web"));
        assert_eq!(
            v.get("timeouts").unwrap().get("create").unwrap(),
            &Value::string("5m")
        );
    }

    #[test]
    fn no_block_leaves_the_attribute_null_and_an_argument_wins() {
        let sg = security_group();
        let none = value(
            "dynamic \"ingress\" {\n  for_each = []\n  content {}\n}\n",
            &sg,
        );
        assert!(none.get("ingress").unwrap().is_null());
        let given = value("ingress = []\n", &sg);
        assert_eq!(
            given.get("ingress").unwrap(),
            &expected("[]", &sg, "ingress")
        );
        // Once the attribute is an argument, a block of its name is not.
        assert_eq!(
            errors("ingress = []\ningress {\n  from_port = 1\n}\n", &sg),
            [("Unsupported block type".to_string(), 2)]
        );
    }

    #[test]
    fn an_element_block_is_checked_against_the_element_type() {
        let sg = security_group();
        assert_eq!(
            errors(
                "ingress {\n  port = 1\n}\ningress \"x\" {\n}\ningress {\n  from_port = \"a\"\n}\n",
                &sg
            ),
            [
                ("Unsupported argument".to_string(), 2),
                ("Extraneous label for ingress".to_string(), 4),
                ("Incorrect attribute value type".to_string(), 7),
            ]
        );
    }

    #[test]
    fn an_unknown_for_each_gives_one_element_of_unknowns_and_is_still_checked() {
        let sg = security_group();
        let text = "dynamic \"ingress\" {\n  for_each = var.unknown\n  content {\n    from_port = ingress.value\n  }\n}\n";
        let v = value(text, &sg);
        let Kind::Set(_, elements) = &v.get("ingress").unwrap().kind else {
            panic!("{v:?}")
        };
        assert_eq!(elements.len(), 1);
        assert_eq!(
            elements[0].get("from_port").unwrap(),
            &Value::unknown(Type::Number)
        );
        assert!(elements[0].get("protocol").unwrap().is_null());
        let bad = text.replace("from_port", "port");
        assert_eq!(errors(&bad, &sg), [("Unsupported argument".to_string(), 4)]);
        // A nested block type's content is checked the same way, and its
        // value is wholly unknown.
        let timeouts = "dynamic \"timeouts\" {\n  for_each = var.unknown\n  content {\n    delete = 1\n  }\n}\n";
        assert_eq!(
            errors(timeouts, &sg),
            [("Unsupported argument".to_string(), 4)]
        );
    }

    #[test]
    fn a_required_attribute_that_blocks_may_set_is_left_to_the_provider() {
        let mut sg = security_group();
        sg.attributes.get_mut("ingress").unwrap().required = true;
        sg.attributes.get_mut("name").unwrap().required = true;
        assert_eq!(
            errors("", &sg),
            [("Missing required argument".to_string(), 1)]
        );
    }

    #[test]
    fn attributes_inside_an_element_may_be_blocks_too() {
        let inner = object(&[("cidr", Type::String)]);
        let route = object(&[("targets", Type::list(inner)), ("name", Type::String)]);
        let schema = Block {
            attributes: BTreeMap::from([("route".to_string(), attr(Type::list(route), false))]),
            ..Block::default()
        };
        let v = value(
            "route {\n  name = \"a\"\n  targets {\n    cidr = \"x\"\n  }\n  targets {\n    cidr = \"y\"\n  }\n}\n",
            &schema,
        );
        assert_eq!(
            v.get("route").unwrap(),
            &expected(
                r#"[{name = "a", targets = [{cidr = "x"}, {cidr = "y"}]}]"#,
                &schema,
                "route"
            )
        );
    }

    #[test]
    fn schemas_the_legacy_sdk_cannot_declare_keep_attributes_as_arguments() {
        let mut sg = security_group();
        assert!(attributes_as_blocks(&sg));
        let mut nested = attr(Type::String, false);
        nested.nested_type = Some(NestedType {
            nesting: ObjectNesting::Single,
            attributes: BTreeMap::new(),
        });
        sg.block_types
            .get_mut("timeouts")
            .unwrap()
            .block
            .attributes
            .insert("n".to_string(), nested);
        assert!(!attributes_as_blocks(&sg));
        assert_eq!(
            errors("ingress {\n  from_port = 1\n}\n", &sg),
            [("Unsupported block type".to_string(), 1)]
        );
        for ty in [
            object(&[("a", Type::String)]),
            Type::map(object(&[("a", Type::String)])),
            Type::list(Type::list(Type::list(Type::String))),
            Type::Tuple(vec![]),
        ] {
            let mut schema = security_group();
            schema
                .attributes
                .insert("odd".to_string(), attr(ty.clone(), false));
            assert!(!attributes_as_blocks(&schema), "{ty:?}");
        }
        let mut lists = security_group();
        lists.attributes.insert(
            "odd".to_string(),
            attr(Type::list(Type::list(Type::String)), false),
        );
        assert!(attributes_as_blocks(&lists));
    }

    #[test]
    fn json_takes_the_attribute_as_an_argument_and_dynamic_as_blocks() {
        let sg = security_group();
        let v = decode_text(
            "main.tf.json",
            r#"{"resource": {"aws_security_group": {"g": {"ingress": [{"cidr_blocks": null, "description": null, "from_port": 1, "protocol": "tcp"}]}}}}"#,
            &sg,
        )
        .unwrap();
        assert_eq!(
            v.get("ingress").unwrap(),
            &expected(
                r#"[{cidr_blocks = null, description = null, from_port = 1, protocol = "tcp"}]"#,
                &sg,
                "ingress"
            )
        );
        let v = decode_text(
            "main.tf.json",
            r#"{"resource": {"aws_security_group": {"g": {"dynamic": {"ingress": {"for_each": "${var.ports}", "content": {"from_port": "${ingress.value}"}}}}}}}"#,
            &sg,
        )
        .unwrap();
        assert_eq!(
            v.get("ingress").unwrap(),
            &expected(
                r#"[{cidr_blocks = null, description = null, from_port = 80, protocol = null},
                    {cidr_blocks = null, description = null, from_port = 443, protocol = null}]"#,
                &sg,
                "ingress"
            )
        );
    }
}
