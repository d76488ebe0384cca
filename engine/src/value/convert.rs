//! Terraform's implicit conversions and type unification.
//!
//! `convert` turns a value into a wanted type the way cty's `convert`
//! package does (number and bool to string, string to number or bool,
//! tuples to lists and sets, objects to maps, ...), and `unify` finds the
//! one type a group of values can all become (for conditionals, collection
//! constructors and `tolist`/`tomap`). Nulls and unknowns convert to a null
//! or unknown of the wanted type; the sensitive mark is kept. The same
//! conversion brings a configuration to a provider schema's type: an
//! object type's optional attributes may be absent (they become null), and
//! the result's type is the wanted one without optional attributes.

use super::number::Number;
use super::{Kind, Type, Value};
use std::collections::BTreeMap;

/// Why a conversion failed, in cty's words (`a number is required`), and
/// where inside the value (`.rules[0].port`, empty at the top), as cty's
/// path errors carry it. The console's messages use `message` alone, as
/// terraform's do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}{}", if path.is_empty() { String::new() } else { format!(" at {path}") })]
pub struct ConvertError {
    pub message: String,
    pub path: String,
}

impl ConvertError {
    fn new(message: impl Into<String>) -> ConvertError {
        ConvertError {
            message: message.into(),
            path: String::new(),
        }
    }

    fn at(mut self, step: &str) -> ConvertError {
        self.path = format!("{step}{}", self.path);
        self
    }
}

fn mismatch(want: &Type) -> ConvertError {
    ConvertError::new(match want {
        Type::Object { .. } => "object required".into(),
        Type::Tuple(_) => "tuple required".into(),
        t => format!("{} required", t.constraint_name()),
    })
}

/// Converts `v` to `want`.
pub fn convert(v: Value, want: &Type) -> Result<Value, ConvertError> {
    let sensitive = v.sensitive;
    convert_inner(v, want).map(|r| r.with_sensitive(sensitive))
}

fn convert_inner(v: Value, want: &Type) -> Result<Value, ConvertError> {
    if *want == Type::Dynamic {
        return Ok(v);
    }
    let got = v.ty();
    if got == *want {
        return Ok(v);
    }
    match v.kind {
        Kind::Null(_) => {
            if got == Type::Dynamic || type_converts(&got, want) {
                return Ok(Value::null(want.without_optional()));
            }
            return Err(mismatch(want));
        }
        Kind::Unknown(_) => {
            if got == Type::Dynamic || type_converts(&got, want) {
                return Ok(Value::unknown(want.without_optional()));
            }
            return Err(mismatch(want));
        }
        _ => {}
    }
    let sensitive = v.sensitive;
    let out = match (v.kind, want) {
        (Kind::Number(n), Type::String) => Value::string(n.to_string_shortest()),
        (Kind::Bool(b), Type::String) => Value::string(if b { "true" } else { "false" }),
        (Kind::String(s), Type::Number) => match Number::parse(&s) {
            Some(n) => Value::number(n),
            None => return Err(ConvertError::new("a number is required")),
        },
        (Kind::String(s), Type::Bool) => match s.as_str() {
            "true" | "1" => Value::bool(true),
            "false" | "0" => Value::bool(false),
            _ => {
                let msg = match s.to_lowercase().as_str() {
                    "true" => "a bool is required; to convert from string, use lowercase \"true\"",
                    "false" => {
                        "a bool is required; to convert from string, use lowercase \"false\""
                    }
                    _ => "a bool is required",
                };
                return Err(ConvertError::new(msg));
            }
        },
        (Kind::List(_, e) | Kind::Set(_, e) | Kind::Tuple(e), Type::List(ety)) => {
            let (ety, e) = convert_elements(e, ety, &got, "list", &index)?;
            Value::list(ety, e)
        }
        (Kind::List(_, e) | Kind::Set(_, e) | Kind::Tuple(e), Type::Set(ety)) => {
            let (ety, e) = convert_elements(e, ety, &got, "set", &index)?;
            Value::set(ety, e)
        }
        (Kind::List(_, e) | Kind::Tuple(e), Type::Tuple(etys)) => {
            if e.len() != etys.len() {
                return Err(ConvertError::new(format!(
                    "tuple required with exactly {} elements",
                    etys.len()
                )));
            }
            let e = e
                .into_iter()
                .zip(etys)
                .enumerate()
                .map(|(i, (v, t))| convert(v, t).map_err(|e| e.at(&format!("[{i}]"))))
                .collect::<Result<_, _>>()?;
            Value::tuple(e)
        }
        (Kind::Map(_, m) | Kind::Object(m), Type::Map(ety)) => {
            let keys: Vec<String> = m.keys().cloned().collect();
            let step = |i: usize| format!("[{:?}]", keys[i]);
            let (ety, e) = convert_elements(m.into_values().collect(), ety, &got, "map", &step)?;
            Value::map(ety, keys.into_iter().zip(e).collect())
        }
        (
            Kind::Map(_, mut m) | Kind::Object(mut m),
            Type::Object {
                attributes,
                optional,
            },
        ) => {
            let mut out = BTreeMap::new();
            for (name, aty) in attributes {
                let v = match m.remove(name) {
                    Some(v) => convert(v, aty).map_err(|e| e.at(&format!(".{name}")))?,
                    None if optional.contains(name) => Value::null(aty.without_optional()),
                    None => {
                        return Err(ConvertError::new(format!("attribute {name:?} is required")))
                    }
                };
                out.insert(name.clone(), v);
            }
            Value::object(out)
        }
        _ => return Err(mismatch(want)),
    };
    Ok(out.with_sensitive(sensitive))
}

/// Converts collection elements to `ety`, unifying them first when `ety`
/// is `Dynamic` (as converting to `list(any)` does).
fn convert_elements(
    elems: Vec<Value>,
    ety: &Type,
    from: &Type,
    to: &str,
    step: &dyn Fn(usize) -> String,
) -> Result<(Type, Vec<Value>), ConvertError> {
    let ety = if ety.has_dynamic() {
        let types: Vec<Type> = elems.iter().map(Value::ty).collect();
        if types.is_empty() {
            ety.clone()
        } else {
            match unify(&types) {
                Some(t) if type_converts(&t, ety) => t,
                _ => {
                    let from = match from {
                        Type::Object { .. } => "object".to_string(),
                        Type::Tuple(_) => "tuple".to_string(),
                        t => t.friendly_name(),
                    };
                    return Err(ConvertError::new(format!(
                        "cannot convert {from} to {to} of any single type"
                    )));
                }
            }
        }
    } else {
        ety.clone()
    };
    // Elements convert to the element type as declared, so the optional
    // attributes of an object element may be absent; the collection's
    // element type, like every value's type, has none.
    let e = elems
        .into_iter()
        .enumerate()
        .map(|(i, v)| convert(v, &ety).map_err(|e| e.at(&step(i))))
        .collect::<Result<_, _>>()?;
    Ok((ety.without_optional(), e))
}

fn index(i: usize) -> String {
    format!("[{i}]")
}

/// Whether some value of type `from` may convert to `to`.
pub fn type_converts(from: &Type, to: &Type) -> bool {
    if from == to || *to == Type::Dynamic || *from == Type::Dynamic {
        return true;
    }
    match (from, to) {
        (Type::Number | Type::Bool, Type::String) => true,
        (Type::String, Type::Number | Type::Bool) => true,
        (Type::List(f) | Type::Set(f), Type::List(t) | Type::Set(t)) => type_converts(f, t),
        (Type::Tuple(fs), Type::List(t) | Type::Set(t)) => {
            if t.has_dynamic() {
                fs.is_empty() || unify(fs).is_some_and(|u| type_converts(&u, t))
            } else {
                fs.iter().all(|f| type_converts(f, t))
            }
        }
        (Type::Map(f), Type::Map(t)) => type_converts(f, t),
        (Type::Object { attributes: fs, .. }, Type::Map(t)) => {
            if t.has_dynamic() {
                let tys: Vec<Type> = fs.values().cloned().collect();
                tys.is_empty() || unify(&tys).is_some_and(|u| type_converts(&u, t))
            } else {
                fs.values().all(|f| type_converts(f, t))
            }
        }
        (
            Type::Object { attributes: fs, .. },
            Type::Object {
                attributes: ts,
                optional,
            },
        ) => ts.iter().all(|(k, t)| match fs.get(k) {
            Some(f) => type_converts(f, t),
            None => optional.contains(k),
        }),
        (Type::Map(f), Type::Object { attributes: ts, .. }) => {
            ts.values().all(|t| type_converts(f, t))
        }
        (Type::Tuple(fs), Type::Tuple(ts)) => {
            fs.len() == ts.len() && fs.iter().zip(ts).all(|(f, t)| type_converts(f, t))
        }
        (Type::List(f), Type::Tuple(ts)) => ts.iter().all(|t| type_converts(f, t)),
        _ => false,
    }
}

/// The single type all of `types` can convert to, as cty's unification
/// chooses it; `None` when there is none.
pub fn unify(types: &[Type]) -> Option<Type> {
    let known: Vec<&Type> = types.iter().filter(|t| **t != Type::Dynamic).collect();
    let Some(first) = known.first() else {
        return Some(Type::Dynamic);
    };
    if known.iter().all(|t| t == first) {
        return Some((*first).clone());
    }
    let count = |f: fn(&Type) -> bool| known.iter().filter(|t| f(t)).count();
    let maps = count(|t| matches!(t, Type::Map(_)));
    let lists = count(|t| matches!(t, Type::List(_)));
    let sets = count(|t| matches!(t, Type::Set(_)));
    let objects = count(|t| matches!(t, Type::Object { .. }));
    let tuples = count(|t| matches!(t, Type::Tuple(_)));
    let n = known.len();
    let elements = |ts: &[&Type]| -> Option<Type> {
        let mut all = Vec::new();
        for t in ts {
            match t {
                Type::List(e) | Type::Set(e) | Type::Map(e) => all.push((**e).clone()),
                Type::Object { attributes, .. } => all.extend(attributes.values().cloned()),
                Type::Tuple(e) => all.extend(e.iter().cloned()),
                _ => return None,
            }
        }
        unify(&all)
    };
    if maps > 0 && maps == n {
        return elements(&known).map(Type::map);
    }
    if maps > 0 && maps + objects == n {
        if let Some(t) = elements(&known) {
            return Some(Type::map(t));
        }
    }
    if lists > 0 && lists == n {
        return elements(&known).map(Type::list);
    }
    if lists > 0 && lists + tuples == n {
        if let Some(t) = elements(&known) {
            return Some(Type::list(t));
        }
    }
    if sets > 0 && sets == n {
        return elements(&known).map(Type::set);
    }
    if objects > 0 && objects == n {
        let Type::Object { attributes: a0, .. } = first else {
            return None;
        };
        if known
            .iter()
            .any(|t| !matches!(t, Type::Object { attributes: a, .. } if a.keys().eq(a0.keys())))
        {
            return elements(&known).map(Type::map);
        }
        let mut out = BTreeMap::new();
        for name in a0.keys() {
            let mut tys = Vec::new();
            for t in &known {
                let Type::Object { attributes: a, .. } = t else {
                    return None;
                };
                if a.len() != a0.len() {
                    return None;
                }
                tys.push(a.get(name)?.clone());
            }
            out.insert(name.clone(), unify(&tys)?);
        }
        return Some(Type::object(out));
    }
    if tuples > 0 && tuples == n {
        let Type::Tuple(e0) = first else { return None };
        if known
            .iter()
            .any(|t| !matches!(t, Type::Tuple(e) if e.len() == e0.len()))
        {
            return elements(&known).map(Type::list);
        }
        let mut out = Vec::new();
        for i in 0..e0.len() {
            let mut tys = Vec::new();
            for t in &known {
                let Type::Tuple(e) = t else { return None };
                if e.len() != e0.len() {
                    return None;
                }
                tys.push(e[i].clone());
            }
            out.push(unify(&tys)?);
        }
        return Some(Type::Tuple(out));
    }
    if objects > 0 && tuples > 0 {
        return None;
    }
    let mut order: Vec<&Type> = known.clone();
    order.sort_by_key(|t| match t {
        Type::String => 0,
        t if t.is_primitive() => 1,
        _ => 2,
    });
    order
        .into_iter()
        .find(|want| known.iter().all(|t| t == want || type_converts(t, want)))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(i: i64) -> Value {
        Value::int(i)
    }

    #[test]
    fn primitives_convert_both_ways() {
        assert_eq!(convert(n(12), &Type::String).unwrap().as_str(), Some("12"));
        assert_eq!(
            convert(Value::bool(true), &Type::String).unwrap().as_str(),
            Some("true")
        );
        let v = convert(Value::string("1.5"), &Type::Number).unwrap();
        assert_eq!(v.as_number().unwrap().to_string_shortest(), "1.5");
        assert_eq!(
            convert(Value::string("x"), &Type::Number)
                .unwrap_err()
                .message,
            "a number is required"
        );
        assert!(convert(n(1), &Type::Bool).is_err());
    }

    #[test]
    fn unify_prefers_string_and_ignores_dynamic() {
        assert_eq!(unify(&[Type::Number, Type::String]), Some(Type::String));
        assert_eq!(unify(&[Type::Dynamic, Type::Number]), Some(Type::Number));
        assert_eq!(unify(&[Type::Number, Type::Bool]), None);
        let t1 = Type::Tuple(vec![Type::Number]);
        let t2 = Type::Tuple(vec![Type::String]);
        assert_eq!(unify(&[t1, t2]), Some(Type::Tuple(vec![Type::String])));
    }

    #[test]
    fn tuple_to_list_unifies_elements() {
        let v = convert(
            Value::tuple(vec![n(1), Value::string("a")]),
            &Type::list(Type::Dynamic),
        )
        .unwrap();
        assert_eq!(v.ty(), Type::list(Type::String));
        let m = BTreeMap::from([
            ("a".to_string(), n(1)),
            ("b".to_string(), Value::bool(true)),
        ]);
        assert!(convert(Value::object(m), &Type::map(Type::Dynamic)).is_err());
    }

    #[test]
    fn collection_elements_may_leave_out_optional_attributes() {
        let element = Type::Object {
            attributes: [
                ("port".to_string(), Type::Number),
                ("id".to_string(), Type::String),
            ]
            .into(),
            optional: ["id".to_string()].into(),
        };
        let given = Value::tuple(vec![Value::object(BTreeMap::from([(
            "port".to_string(),
            n(80),
        )]))]);
        let v = convert(given, &Type::list(element.clone())).unwrap();
        assert_eq!(v.ty(), Type::list(element.without_optional()));
        assert!(v.elements().unwrap()[0].get("id").unwrap().is_null());
    }

    #[test]
    fn null_and_unknown_take_the_wanted_type() {
        let v = convert(Value::null(Type::Dynamic), &Type::Number).unwrap();
        assert!(v.is_null());
        assert_eq!(v.ty(), Type::Number);
        let u = convert(
            Value::unknown(Type::Number).with_sensitive(true),
            &Type::String,
        )
        .unwrap();
        assert!(!u.is_known() && u.sensitive);
        assert_eq!(u.ty(), Type::String);
    }
}
