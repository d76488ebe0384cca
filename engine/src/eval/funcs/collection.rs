//! Collection functions: lists, sets, maps and the structural values that
//! stand in for them.

use super::{arg_error, Func, FuncResult, Param};
use crate::eval::expr::equals;
use crate::value::convert::{convert, unify};
use crate::value::number::Number;
use crate::value::{Kind, Type, Value};
use std::collections::BTreeMap;
use unicode_segmentation::UnicodeSegmentation;

fn any(name: &'static str) -> Param {
    Param::new(name, Type::Dynamic)
}

fn num(v: &Value) -> Number {
    v.as_number().cloned().unwrap_or_else(Number::zero)
}

/// Elements of a sequence (list, set, tuple) or a mapping's values.
fn elems(v: &Value) -> Vec<Value> {
    v.elements()
        .unwrap_or_default()
        .into_iter()
        .cloned()
        .collect()
}

/// A list of the given elements, unified to one element type; a tuple if
/// they have none in common.
fn list_of(elements: Vec<Value>, ety_if_empty: Type) -> FuncResult {
    if elements.is_empty() {
        return Ok(Value::list(ety_if_empty, vec![]));
    }
    let types: Vec<Type> = elements.iter().map(Value::ty).collect();
    let ety = unify(&types).ok_or_else(|| "all elements must have the same type".to_string())?;
    let e = elements
        .into_iter()
        .map(|v| convert(v, &ety))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.message)?;
    Ok(Value::list(ety, e))
}

fn list_param(name: &'static str) -> Param {
    Param::new(name, Type::list(Type::Dynamic))
}

fn set_param(name: &'static str) -> Param {
    Param::new(name, Type::set(Type::Dynamic))
}

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "matchkeys" => Func::new(
            vec![
                list_param("values"),
                list_param("keys"),
                list_param("searchset"),
            ],
            Type::list(Type::Dynamic),
            matchkeys,
        ),
        // As in terraform, the count of a collection holding unknowns is
        // known (save a set's, whose unknowns may turn out equal), and so
        // is a tuple's or object's from its type alone; only the
        // collection's own mark passes to the result.
        "length" => Func::new(vec![any("value").unknowns().marked()], Type::Number, |a| {
            let unknown = Value::unknown(Type::Number).with_sensitive(a[0].sensitive);
            let n = match &a[0].kind {
                Kind::Unknown(Type::Tuple(t)) => t.len(),
                Kind::Unknown(Type::Object { attributes, .. }) => attributes.len(),
                Kind::Unknown(_) => return Ok(unknown),
                Kind::String(t) => t.graphemes(true).count(),
                Kind::Set(_, e) if e.len() > 1 && !a[0].is_wholly_known() => return Ok(unknown),
                Kind::List(_, e) | Kind::Set(_, e) | Kind::Tuple(e) => e.len(),
                Kind::Map(_, m) | Kind::Object(m) => m.len(),
                _ => {
                    return Err(String::from(
                        "argument must be a string, a collection type, or a structural type",
                    ))
                }
            };
            Ok(Value::int(n as i64).with_sensitive(a[0].sensitive))
        }),
        "concat" => Func::new(vec![], Type::Dynamic, |a| {
            let mut all = Vec::new();
            let mut all_lists = true;
            for v in &a {
                match &v.kind {
                    Kind::List(..) | Kind::Set(..) => all.extend(elems(v)),
                    Kind::Tuple(e) => {
                        all_lists = false;
                        all.extend(e.iter().cloned())
                    }
                    _ => return Err(String::from("all arguments must be lists or tuples")),
                }
            }
            if all_lists {
                let types: Vec<Type> = a.iter().map(Value::ty).collect();
                let ety = unify(&types)
                    .and_then(|t| t.element().cloned())
                    .unwrap_or(Type::Dynamic);
                return list_of(all, ety);
            }
            Ok(Value::tuple(all))
        })
        .variadic(any("seqs").structural()),
        "merge" => Func::new(vec![], Type::Dynamic, |a| {
            let mut out: BTreeMap<String, Value> = BTreeMap::new();
            let mut all_maps = true;
            for v in &a {
                match &v.kind {
                    Kind::Null(_) => {}
                    Kind::Map(_, m) => out.extend(m.clone()),
                    Kind::Object(m) => {
                        all_maps = false;
                        out.extend(m.clone())
                    }
                    _ => {
                        return Err("arguments must be maps or objects, got \"".to_string()
                            + &v.ty().friendly_name()
                            + "\"")
                    }
                }
            }
            if all_maps && !a.is_empty() {
                let ety = unify(&out.values().map(Value::ty).collect::<Vec<_>>())
                    .unwrap_or(Type::Dynamic);
                let converted = out
                    .into_iter()
                    .map(|(k, v)| convert(v, &ety).map(|v| (k, v)))
                    .collect::<Result<_, _>>()
                    .map_err(|e| e.message)?;
                return Ok(Value::map(ety, converted));
            }
            Ok(Value::object(out))
        })
        .variadic(any("maps").nullable().structural()),
        "lookup" => Func::new(
            vec![
                any("inputMap").structural().marked(),
                Param::new("key", Type::String),
            ],
            Type::Dynamic,
            |a| {
                // The element keeps its own mark and takes the map's.
                let key = a[1].as_str().unwrap_or_default();
                let outer = a[0].sensitive;
                let found = match &a[0].kind {
                    Kind::Map(_, m) | Kind::Object(m) => m
                        .get(key)
                        .map(|v| v.clone().with_sensitive(v.sensitive || outer)),
                    _ => {
                        return Err(arg_error(
                            "inputMap",
                            "the given object has no attribute or element",
                        ))
                    }
                };
                // As terraform types it: a map's element type, which the
                // default must convert to; an object's attribute as it is,
                // or the default as it is.
                let default = match (&a[0].kind, a.get(2)) {
                    (Kind::Map(ety, _), Some(d)) => {
                        Some(convert(d.clone(), ety).map_err(|_| {
                            arg_error(
                                "default",
                                "the default value must have the same type as the map elements",
                            )
                        })?)
                    }
                    (_, d) => d.cloned(),
                };
                match (found, default) {
                    (Some(v), _) => Ok(v),
                    (None, Some(d)) => Ok(d),
                    (None, None) => Err(arg_error(
                        "inputMap",
                        format!("the given object has no attribute {key:?}"),
                    )),
                }
            },
        )
        .variadic(any("default").nullable().unknowns()),
        "element" => Func::new(
            vec![any("list").structural(), Param::new("index", Type::Number)],
            Type::Dynamic,
            |a| {
                let e = elems(&a[0]);
                if !matches!(a[0].kind, Kind::List(..) | Kind::Tuple(..)) {
                    return Err(
                        "cannot read elements from ".to_string() + &a[0].ty().friendly_name()
                    );
                }
                if e.is_empty() {
                    return Err("cannot use element function with an empty list".into());
                }
                let i = num(&a[1]).floor().to_i64().unwrap_or(0);
                let len = e.len() as i64;
                Ok(e[(((i % len) + len) % len) as usize].clone())
            },
        ),
        "keys" => Func::new(
            vec![any("inputMap").structural()],
            Type::list(Type::String),
            |a| match &a[0].kind {
                Kind::Map(_, m) => Ok(Value::list(
                    Type::String,
                    m.keys().map(|k| Value::string(k.clone())).collect(),
                )),
                Kind::Object(m) => Ok(Value::tuple(
                    m.keys().map(|k| Value::string(k.clone())).collect(),
                )),
                _ => Err(arg_error("inputMap", "must have map or object type")),
            },
        ),
        "values" => Func::new(
            vec![any("mapping").structural()],
            Type::Dynamic,
            |a| match &a[0].kind {
                Kind::Map(t, m) => Ok(Value::list(t.clone(), m.values().cloned().collect())),
                Kind::Object(m) => Ok(Value::tuple(m.values().cloned().collect())),
                _ => Err(String::from(
                    "values() requires a map as the first argument",
                )),
            },
        ),
        "contains" => Func::new(vec![any("list"), any("value")], Type::Bool, |a| {
            if !matches!(a[0].kind, Kind::List(..) | Kind::Set(..) | Kind::Tuple(..)) {
                return Err(String::from("argument must be list, tuple, or set"));
            }
            Ok(Value::bool(
                elems(&a[0]).iter().any(|e| equals(e, &a[1]) == Some(true)),
            ))
        }),
        "distinct" => Func::new(vec![list_param("list")], Type::Dynamic, |a| {
            let Kind::List(t, e) = &a[0].kind else {
                unreachable!("converted to a list")
            };
            let mut out: Vec<Value> = Vec::new();
            for v in e {
                if !out.iter().any(|o| equals(o, v) == Some(true)) {
                    out.push(v.clone());
                }
            }
            Ok(Value::list(t.clone(), out))
        }),
        "flatten" => Func::new(vec![any("list")], Type::Dynamic, |a| {
            if !matches!(a[0].kind, Kind::List(..) | Kind::Set(..) | Kind::Tuple(..)) {
                return Err(String::from("can only flatten lists, sets and tuples"));
            }
            let mut out = Vec::new();
            flatten(&a[0], &mut out);
            Ok(Value::tuple(out))
        }),
        "coalesce" => Func::new(vec![], Type::Dynamic, |a| {
            let types: Vec<Type> = a.iter().map(Value::ty).collect();
            let t = unify(&types)
                .ok_or_else(|| String::from("all arguments must have the same type"))?;
            for v in a {
                if v.is_null() || v.as_str() == Some("") {
                    continue;
                }
                return convert(v, &t).map_err(|e| e.message);
            }
            Err("no non-null, non-empty-string arguments".into())
        })
        .variadic(any("vals").nullable()),
        "coalescelist" => Func::new(vec![], Type::Dynamic, |a| {
            for v in a {
                if !matches!(v.kind, Kind::List(..) | Kind::Tuple(..)) {
                    return Err(String::from(
                        "coalescelist arguments must be lists or tuples",
                    ));
                }
                if !elems(&v).is_empty() {
                    return Ok(v);
                }
            }
            Err("no non-null arguments".into())
        })
        .variadic(any("vals").structural()),
        "compact" => Func::new(
            vec![Param::new("list", Type::list(Type::String))],
            Type::list(Type::String),
            |a| {
                let e = elems(&a[0])
                    .into_iter()
                    .filter(|v| !v.is_null() && v.as_str() != Some(""))
                    .collect();
                Ok(Value::list(Type::String, e))
            },
        ),
        "slice" => Func::new(
            vec![
                any("list").structural(),
                Param::new("start_index", Type::Number),
                Param::new("end_index", Type::Number),
            ],
            Type::Dynamic,
            |a| {
                let e = elems(&a[0]);
                let (s, t) = (
                    num(&a[1]).to_i64().unwrap_or(-1),
                    num(&a[2]).to_i64().unwrap_or(-1),
                );
                if s < 0 {
                    return Err(arg_error(
                        "start_index",
                        "must be greater than or equal to 0",
                    ));
                }
                if t > e.len() as i64 {
                    return Err(arg_error(
                        "end_index",
                        "end index must not be greater than the length of the list",
                    ));
                }
                if s > t {
                    return Err(arg_error(
                        "start_index",
                        "must be less than or equal to end_index",
                    ));
                }
                let part = e[s as usize..t as usize].to_vec();
                match &a[0].kind {
                    Kind::List(ety, _) => Ok(Value::list(ety.clone(), part)),
                    Kind::Tuple(_) => Ok(Value::tuple(part)),
                    _ => Err(String::from("must be a list or tuple value")),
                }
            },
        ),
        "sort" => Func::new(
            vec![Param::new("list", Type::list(Type::String))],
            Type::list(Type::String),
            |a| {
                let mut e = elems(&a[0]);
                if e.iter().any(Value::is_null) {
                    return Err(String::from(
                        "given list element 0 is null; a null string cannot be sorted",
                    ));
                }
                e.sort_by(|x, y| {
                    x.as_str()
                        .unwrap_or_default()
                        .cmp(y.as_str().unwrap_or_default())
                });
                Ok(Value::list(Type::String, e))
            },
        ),
        "reverse" => Func::new(vec![any("list")], Type::Dynamic, |a| {
            let mut e = elems(&a[0]);
            e.reverse();
            match &a[0].kind {
                Kind::List(t, _) => Ok(Value::list(t.clone(), e)),
                Kind::Tuple(_) => Ok(Value::tuple(e)),
                Kind::Set(t, _) => Ok(Value::list(t.clone(), e)),
                _ => Err(String::from("can only reverse list or tuple values")),
            }
        }),
        "range" => Func::new(vec![], Type::list(Type::Number), range)
            .variadic(Param::new("params", Type::Number)),
        "zipmap" => Func::new(
            vec![Param::new("keys", Type::list(Type::String)), any("values")],
            Type::Dynamic,
            |a| {
                let k = elems(&a[0]);
                let v = elems(&a[1]);
                if k.len() != v.len() {
                    return Err(format!(
                        "number of keys ({}) does not match number of values ({})",
                        k.len(),
                        v.len()
                    ));
                }
                let m: BTreeMap<String, Value> = k
                    .iter()
                    .map(|k| k.as_str().unwrap_or_default().to_string())
                    .zip(v)
                    .collect();
                match &a[1].kind {
                    Kind::Tuple(_) => Ok(Value::object(m)),
                    Kind::List(t, _) => Ok(Value::map(t.clone(), m)),
                    _ => Err(String::from("must be a list or tuple value")),
                }
            },
        ),
        "index" => Func::new(vec![any("list"), any("value")], Type::Number, |a| {
            if !matches!(a[0].kind, Kind::List(..) | Kind::Tuple(..)) {
                return Err(String::from("argument must be a list or tuple"));
            }
            elems(&a[0])
                .iter()
                .position(|e| equals(e, &a[1]) == Some(true))
                .map(|i| Value::int(i as i64))
                .ok_or_else(|| "item not found".to_string())
        }),
        "transpose" => Func::new(
            vec![Param::new("values", Type::map(Type::list(Type::String)))],
            Type::map(Type::list(Type::String)),
            |a| {
                let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
                if let Kind::Map(_, m) = &a[0].kind {
                    for (k, l) in m {
                        for v in elems(l) {
                            out.entry(v.as_str().unwrap_or_default().to_string())
                                .or_default()
                                .push(Value::string(k.clone()));
                        }
                    }
                }
                let m = out
                    .into_iter()
                    .map(|(k, v)| (k, Value::list(Type::String, v)))
                    .collect();
                Ok(Value::map(Type::list(Type::String), m))
            },
        ),
        "setunion" => set_func(setunion),
        "setintersection" => set_func(setintersection),
        "setsubtract" => Func::new(vec![set_param("a"), set_param("b")], Type::Dynamic, |a| {
            let b = elems(&a[1]);
            let Kind::Set(t, e) = &a[0].kind else {
                unreachable!("converted to a set")
            };
            let keep = e
                .iter()
                .filter(|v| !b.iter().any(|w| w.same_element(v)))
                .cloned()
                .collect();
            Ok(Value::set(t.clone(), keep))
        }),
        "setproduct" => Func::new(vec![], Type::Dynamic, setproduct).variadic(any("sets")),
        "one" => Func::new(vec![any("list")], Type::Dynamic, |a| {
            let e = elems(&a[0]);
            if !matches!(a[0].kind, Kind::List(..) | Kind::Set(..) | Kind::Tuple(..)) {
                return Err(String::from("must be a list, set, or tuple value"));
            }
            match e.len() {
                0 => Ok(match a[0].ty() {
                    Type::List(t) | Type::Set(t) => Value::null(*t),
                    _ => Value::null(Type::Dynamic),
                }),
                1 => Ok(e[0].clone()),
                _ => Err(arg_error(
                    "list",
                    "must be a list, set, or tuple value with either zero or one elements",
                )),
            }
        }),
        "sum" => Func::new(vec![any("list")], Type::Number, |a| {
            let e = elems(&a[0]);
            if e.is_empty() {
                return Err(arg_error("list", "cannot sum an empty list"));
            }
            let mut total: Option<Number> = None;
            for v in e {
                let n = convert(v, &Type::Number).map_err(|e| e.message)?;
                let n = n
                    .as_number()
                    .cloned()
                    .ok_or("argument must be list, set, or tuple of number values")?;
                total = Some(match total {
                    None => n,
                    Some(t) => t
                        .add(&n)
                        .map_err(|_| "can't compute sum of opposing infinities".to_string())?,
                });
            }
            Ok(Value::number(total.unwrap_or_else(Number::zero)))
        }),
        "alltrue" => Func::new(
            vec![Param::new("list", Type::list(Type::Bool))],
            Type::Bool,
            |a| {
                Ok(Value::bool(
                    elems(&a[0]).iter().all(|v| v.as_bool() == Some(true)),
                ))
            },
        ),
        "anytrue" => Func::new(
            vec![Param::new("list", Type::list(Type::Bool))],
            Type::Bool,
            |a| {
                Ok(Value::bool(
                    elems(&a[0]).iter().any(|v| v.as_bool() == Some(true)),
                ))
            },
        ),
        "chunklist" => Func::new(
            vec![list_param("list"), Param::new("size", Type::Number)],
            Type::Dynamic,
            |a| {
                let Kind::List(t, e) = &a[0].kind else {
                    unreachable!("converted to a list")
                };
                let size = num(&a[1]).to_i64().unwrap_or(-1);
                if size < 0 {
                    return Err(String::from("the size argument must be positive"));
                }
                let chunks: Vec<Value> = if size == 0 {
                    vec![a[0].clone()]
                } else {
                    e.chunks(size as usize)
                        .map(|c| Value::list(t.clone(), c.to_vec()))
                        .collect()
                };
                Ok(Value::list(Type::list(t.clone()), chunks))
            },
        ),
        _ => return None,
    })
}

fn flatten(v: &Value, out: &mut Vec<Value>) {
    for e in elems(v) {
        match e.kind {
            Kind::List(..) | Kind::Set(..) | Kind::Tuple(..) => flatten(&e, out),
            _ => out.push(e),
        }
    }
}

fn set_func(imp: super::Impl) -> Func {
    Func::new(vec![set_param("first_set")], Type::Dynamic, imp).variadic(set_param("other_sets"))
}

/// A set of `elements` with their unified element type.
fn set_of(elements: Vec<Value>, sets: &[Value]) -> FuncResult {
    let types: Vec<Type> = sets
        .iter()
        .filter_map(|s| s.ty().element().cloned())
        .collect();
    let ety = unify(&types)
        .ok_or_else(|| "given sets must all have compatible element types".to_string())?;
    let e = elements
        .into_iter()
        .map(|v| convert(v, &ety))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.message)?;
    Ok(Value::set(ety, e))
}

fn setunion(a: Vec<Value>) -> FuncResult {
    let all: Vec<Value> = a.iter().flat_map(elems).collect();
    set_of(all, &a)
}

fn setintersection(a: Vec<Value>) -> FuncResult {
    let first = elems(&a[0]);
    let rest: Vec<Vec<Value>> = a[1..].iter().map(elems).collect();
    let keep = first
        .into_iter()
        .filter(|v| {
            rest.iter()
                .all(|s| s.iter().any(|w| equals(w, v) == Some(true)))
        })
        .collect();
    set_of(keep, &a)
}

fn range(a: Vec<Value>) -> FuncResult {
    let (start, end, step) = match a.len() {
        1 => (Number::from_i64(0), num(&a[0]), Number::from_i64(1)),
        2 => {
            let (s, e) = (num(&a[0]), num(&a[1]));
            let step = Number::from_i64(if e.compare(&s).is_lt() { -1 } else { 1 });
            (s, e, step)
        }
        3 => (num(&a[0]), num(&a[1]), num(&a[2])),
        _ => return Err(String::from("must have one, two, or three arguments")),
    };
    if step.is_zero() {
        return Err(String::from("step must not be zero"));
    }
    let mut out = Vec::new();
    let mut i = start;
    let up = !step.is_negative();
    while (up && i.compare(&end).is_lt()) || (!up && i.compare(&end).is_gt()) {
        if out.len() >= 1024 {
            return Err("more than 1024 values were generated; either decrease the difference between start and end or use a smaller step".into());
        }
        out.push(Value::number(i.clone()));
        i = i.add(&step).map_err(|_| "invalid step".to_string())?;
    }
    Ok(Value::list(Type::Number, out))
}

fn setproduct(a: Vec<Value>) -> FuncResult {
    if a.len() < 2 {
        return Err("at least two arguments are required".into());
    }
    let mut rows: Vec<Vec<Value>> = vec![vec![]];
    for s in &a {
        let e = elems(s);
        rows = rows
            .into_iter()
            .flat_map(|r| {
                e.iter().map(move |v| {
                    let mut r = r.clone();
                    r.push(v.clone());
                    r
                })
            })
            .collect();
    }
    let ety = Type::Tuple(
        a.iter()
            .map(|s| s.ty().element().cloned().unwrap_or(Type::Dynamic))
            .collect(),
    );
    let rows: Vec<Value> = rows.into_iter().map(Value::tuple).collect();
    if a.iter().all(|v| matches!(v.kind, Kind::Set(..))) {
        Ok(Value::set(ety, rows))
    } else {
        Ok(Value::list(ety, rows))
    }
}

/// The values whose key (at the same index) is in the search set; keys and
/// search set are compared after unifying their types.
fn matchkeys(a: Vec<Value>) -> FuncResult {
    let ety = a[0].ty().element().cloned().unwrap_or(Type::Dynamic);
    let ty = unify(&[a[1].ty(), a[2].ty()])
        .ok_or_else(|| "keys and searchset must be of the same type".to_string())?;
    let values = elems(&a[0]);
    let keys = elems(&convert(a[1].clone(), &ty).map_err(|e| e.message)?);
    let search = elems(&convert(a[2].clone(), &ty).map_err(|e| e.message)?);
    if values.len() != keys.len() {
        return Err("length of keys and values should be equal".to_string());
    }
    let mut out = Vec::new();
    for (k, v) in keys.iter().zip(values) {
        for s in &search {
            match equals(k, s) {
                Some(true) => {
                    out.push(v);
                    break;
                }
                Some(false) => {}
                None => return Ok(Value::list(ety, vec![])),
            }
        }
    }
    Ok(Value::list(ety, out))
}
