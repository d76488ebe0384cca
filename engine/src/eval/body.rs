//! A resource's, data source's or provider's body evaluated against its
//! schema: arguments converted to their types, nested blocks gathered by
//! their nesting mode (for a body read from JSON, which arguments are
//! blocks is decided here), `dynamic` blocks expanded, and terraform's errors for
//! arguments and blocks the schema does not have.

use super::inputs::at_expr;
use super::Scope;
use crate::config::{span_of, Body};
use crate::diag::{suggest, Diagnostic, Diagnostics};
use crate::provider::schema::{Block, Nesting};
use crate::source::SourceFile;
use crate::value::convert::convert;
use crate::value::{Kind, Type, Value};
use hcl_edit::structure::{Block as HclBlock, Body as HclBody};
use std::collections::BTreeMap;

/// One nested block found: its label (map nesting), value and place.
type Found = (Option<String>, Value, crate::source::Range);

/// The body's value as an object of the schema's implied type.
pub fn decode(body: &Body, schema: &Block, scope: &Scope) -> Result<Value, Diagnostics> {
    let mut diags = Diagnostics::default();
    let v = decode_body(&body.body, &body.file, schema, scope, &mut diags);
    if diags.has_errors() {
        Err(diags)
    } else {
        Ok(v)
    }
}

fn decode_body(
    body: &HclBody,
    file: &SourceFile,
    schema: &Block,
    scope: &Scope,
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
            Err(e) => {
                let path = if e.path.is_empty() {
                    String::new()
                } else {
                    format!("{}: ", e.path.trim_start_matches('.'))
                };
                diags.push(
                    Diagnostic::error(
                        "Incorrect attribute value type",
                        format!(
                            "Inappropriate value for attribute \"{name}\": {path}{}.",
                            e.message
                        ),
                    )
                    .at(file.range(span)),
                );
            }
        }
    }
    for (name, a) in &schema.attributes {
        if a.required && !seen.contains_key(name) {
            diags.push(
                Diagnostic::error(
                    "Missing required argument",
                    format!("The argument \"{name}\" is required, but no definition was found."),
                )
                .at(body_range(body, file)),
            );
        }
    }
    let mut blocks: BTreeMap<String, Vec<(Option<String>, Value, crate::source::Range)>> =
        BTreeMap::new();
    let mut unknown_blocks: BTreeMap<String, bool> = BTreeMap::new();
    for block in body.blocks() {
        let ident = block.ident.as_str();
        if ident == "dynamic" {
            dynamic(
                block,
                file,
                schema,
                scope,
                diags,
                &mut blocks,
                &mut unknown_blocks,
            );
            continue;
        }
        let Some(nested) = schema.block_types.get(ident) else {
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
        };
        let label = block.labels.first().map(|l| l.as_str().to_string());
        if (nested.nesting == Nesting::Map) != label.is_some() {
            diags.push(
                Diagnostic::error(
                    if label.is_some() {
                        format!("Extraneous label for {ident}")
                    } else {
                        format!("Missing name for {ident}")
                    },
                    if label.is_some() {
                        "No labels are expected for this block.".to_string()
                    } else {
                        format!("All {ident} blocks must have 1 labels (name).")
                    },
                )
                .at(file.range(span_of(&block.ident))),
            );
            continue;
        }
        let v = decode_body(&block.body, file, &nested.block, scope, diags);
        blocks.entry(ident.to_string()).or_default().push((
            label,
            v,
            file.range(span_of(&block.ident)),
        ));
    }
    for (name, nested) in &schema.block_types {
        let found = blocks.remove(name).unwrap_or_default();
        let is_unknown = unknown_blocks.get(name).copied().unwrap_or(false);
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
        let value = if is_unknown {
            match nested.nesting {
                Nesting::Single | Nesting::Group => Value::unknown(inner),
                Nesting::List if inner.has_dynamic() => Value::unknown(Type::Dynamic),
                Nesting::List => Value::unknown(Type::list(inner)),
                Nesting::Set => Value::unknown(Type::set(inner)),
                Nesting::Map => Value::unknown(Type::map(inner)),
            }
        } else if found.is_empty() {
            continue;
        } else {
            let mut items: Vec<(Option<String>, Value)> =
                found.into_iter().map(|(l, v, _)| (l, v)).collect();
            match nested.nesting {
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
            }
        };
        given.insert(name.clone(), value);
    }
    schema.value_with(given)
}

/// Expands a `dynamic "name" { for_each, iterator, labels, content }` block.
fn dynamic(
    block: &HclBlock,
    file: &SourceFile,
    schema: &Block,
    scope: &Scope,
    diags: &mut Diagnostics,
    blocks: &mut BTreeMap<String, Vec<Found>>,
    unknown: &mut BTreeMap<String, bool>,
) {
    let at = file.range(span_of(&block.ident));
    let Some(name) = block.labels.first().map(|l| l.as_str().to_string()) else {
        diags.push(
            Diagnostic::error(
                "Missing name for dynamic",
                "All dynamic blocks must have 1 labels (type).",
            )
            .at(at),
        );
        return;
    };
    let Some(nested) = schema.block_types.get(&name) else {
        diags.push(
            Diagnostic::error(
                "Unsupported block type",
                format!("Blocks of type \"{name}\" are not expected here."),
            )
            .at(at),
        );
        return;
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
    let collection = match scope.eval(&for_each.value) {
        Ok(v) => v,
        Err(e) => {
            diags.push(at_expr(e, file, span_of(&for_each.value)));
            return;
        }
    };
    if !collection.is_known() {
        unknown.insert(name, true);
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
        let v = decode_body(&content.body, file, &nested.block, &inner_scope, diags);
        blocks
            .entry(name.clone())
            .or_default()
            .push((label, v, at.clone()));
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
