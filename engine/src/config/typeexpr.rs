//! Type constraints as `variable` blocks write them: `string`,
//! `list(number)`, `map(object({ a = string, b = optional(number, 1) }))`.

use super::Expr;
use crate::diag::Diagnostic;
use crate::value::Type;
use hcl_edit::expr::{Expression, ObjectKey};
use std::collections::{BTreeMap, BTreeSet};

/// A declared type and the defaults its `optional(T, default)` attributes
/// give.
#[derive(Debug, Clone)]
pub struct Constraint {
    pub ty: Type,
    pub defaults: Defaults,
}

impl Constraint {
    /// `any`: no constraint.
    pub fn any() -> Constraint {
        Constraint {
            ty: Type::Dynamic,
            defaults: Defaults::default(),
        }
    }
}

/// Default values for optional object attributes, as written, and those of
/// nested types. For a collection, the element's defaults sit under "".
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    pub attrs: BTreeMap<String, Expr>,
    pub children: BTreeMap<String, Defaults>,
}

impl Defaults {
    pub fn is_empty(&self) -> bool {
        self.attrs.is_empty() && self.children.is_empty()
    }
}

/// Parses a type expression.
pub fn parse(e: &Expr) -> Result<Constraint, Box<Diagnostic>> {
    let (ty, defaults) = parse_inner(&e.expr, e, false)?;
    Ok(Constraint { ty, defaults })
}

fn invalid(at: &Expression, e: &Expr, detail: impl Into<String>) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error("Invalid type specification", detail)
            .at(e.file.range(super::span_of(at))),
    )
}

fn parse_inner(
    x: &Expression,
    e: &Expr,
    in_object: bool,
) -> Result<(Type, Defaults), Box<Diagnostic>> {
    match x {
        Expression::Variable(v) => match v.as_str() {
            "string" => Ok((Type::String, Defaults::default())),
            "number" => Ok((Type::Number, Defaults::default())),
            "bool" => Ok((Type::Bool, Defaults::default())),
            "any" => Ok((Type::Dynamic, Defaults::default())),
            k @ ("list" | "set" | "map" | "tuple" | "object") => Err(invalid(
                x,
                e,
                format!("The {k} type constructor requires one argument specifying the element type."),
            )),
            other => Err(invalid(
                x,
                e,
                format!("The keyword \"{other}\" is not a valid type specification."),
            )),
        },
        Expression::Parenthesis(p) => parse_inner(p.inner(), e, in_object),
        Expression::FuncCall(f) if f.name.namespace.is_empty() => {
            let name = f.name.name.as_str();
            let args: Vec<&Expression> = f.args.iter().collect();
            let one = |args: &[&Expression]| -> Result<(Type, Defaults), Box<Diagnostic>> {
                match args {
                    [a] => parse_inner(a, e, false),
                    _ => Err(invalid(
                        x,
                        e,
                        format!("The {name} type constructor requires one argument specifying the element type."),
                    )),
                }
            };
            match name {
                "list" | "set" | "map" => {
                    let (el, d) = one(&args)?;
                    let mut defaults = Defaults::default();
                    if !d.is_empty() {
                        defaults.children.insert(String::new(), d);
                    }
                    let ty = match name {
                        "list" => Type::list(el),
                        "set" => Type::set(el),
                        _ => Type::map(el),
                    };
                    Ok((ty, defaults))
                }
                "tuple" => {
                    let [Expression::Array(items)] = args.as_slice() else {
                        return Err(invalid(x, e, "The tuple type constructor requires one argument specifying the element types as a list."));
                    };
                    let mut types = Vec::new();
                    let mut defaults = Defaults::default();
                    for (i, item) in items.iter().enumerate() {
                        let (t, d) = parse_inner(item, e, false)?;
                        if !d.is_empty() {
                            defaults.children.insert(i.to_string(), d);
                        }
                        types.push(t);
                    }
                    Ok((Type::Tuple(types), defaults))
                }
                "object" => {
                    let [Expression::Object(obj)] = args.as_slice() else {
                        return Err(invalid(x, e, "The object type constructor requires one argument specifying the attribute types as a map."));
                    };
                    let mut attributes = BTreeMap::new();
                    let mut optional = BTreeSet::new();
                    let mut defaults = Defaults::default();
                    for (k, v) in obj.iter() {
                        let key = match k {
                            ObjectKey::Ident(i) => i.as_str().to_string(),
                            ObjectKey::Expression(Expression::String(s)) => s.value().clone(),
                            ObjectKey::Expression(k) => {
                                return Err(invalid(k, e, "Object constructor map keys must be attribute names."))
                            }
                        };
                        let (t, d, opt, default) = match v.expr() {
                            Expression::FuncCall(o) if o.name.name.as_str() == "optional" && o.name.namespace.is_empty() => {
                                let oargs: Vec<&Expression> = o.args.iter().collect();
                                match oargs.as_slice() {
                                    [t] => {
                                        let (t, d) = parse_inner(t, e, true)?;
                                        (t, d, true, None)
                                    }
                                    [t, def] => {
                                        let (t, d) = parse_inner(t, e, true)?;
                                        (t, d, true, Some(Expr::new((*def).clone(), e.file.clone())))
                                    }
                                    _ => return Err(invalid(v.expr(), e, "Optional attribute modifier expects at most two arguments: an attribute type, and a default value.")),
                                }
                            }
                            other => {
                                let (t, d) = parse_inner(other, e, true)?;
                                (t, d, false, None)
                            }
                        };
                        if opt {
                            optional.insert(key.clone());
                        }
                        if let Some(def) = default {
                            defaults.attrs.insert(key.clone(), def);
                        }
                        if !d.is_empty() {
                            defaults.children.insert(key.clone(), d);
                        }
                        attributes.insert(key, t);
                    }
                    Ok((Type::Object { attributes, optional }, defaults))
                }
                "optional" => Err(invalid(
                    x,
                    e,
                    if in_object {
                        "Optional attribute modifier is only for attribute types directly in an object type."
                    } else {
                        "Keyword \"optional\" is valid only as a modifier for object type attributes."
                    },
                )),
                other => Err(invalid(
                    x,
                    e,
                    format!("Keyword \"{other}\" is not a valid type constructor."),
                )),
            }
        }
        _ => Err(invalid(
            x,
            e,
            "A type specification is either a primitive type keyword (bool, number, string) or a complex type constructor call, like list(string).",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    fn ty(src: &str) -> Result<Constraint, Box<Diagnostic>> {
        let file = SourceFile::new("t.tf", src);
        let expr = hcl_edit::parser::parse_expr(src).unwrap();
        parse(&Expr::new(expr, file))
    }

    #[test]
    fn parses_nested_constraints_with_optional_defaults() {
        let c =
            ty("map(object({ a = string, b = optional(number, 1), c = optional(list(bool)) }))")
                .unwrap();
        let Type::Map(el) = &c.ty else {
            panic!("{:?}", c.ty)
        };
        let Type::Object {
            attributes,
            optional,
        } = el.as_ref()
        else {
            panic!()
        };
        assert_eq!(attributes.len(), 3);
        assert_eq!(optional.iter().collect::<Vec<_>>(), ["b", "c"]);
        assert!(c.defaults.children[""].attrs.contains_key("b"));
        assert_eq!(
            ty("tuple([string, number])").unwrap().ty,
            Type::Tuple(vec![Type::String, Type::Number])
        );
    }

    #[test]
    fn refuses_what_terraform_refuses() {
        assert!(ty("strin")
            .unwrap_err()
            .detail
            .contains("\"strin\" is not a valid"));
        assert!(ty("list").is_err());
        assert!(ty("optional(string)").is_err());
        assert!(ty("\"string\"").is_err());
    }
}
