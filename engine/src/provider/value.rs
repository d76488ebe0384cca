//! Values as they cross the plugin boundary: conversion to the schema's
//! types, and the msgpack encoding.
//!
//! A [`Value`] is shaped like cty's values: null, unknown, the primitives,
//! and the collection and structural kinds. Values do not carry their own
//! type; [`encode`] and [`decode`] are driven by the schema's [`Type`], as
//! go-cty's msgpack codec is:
//!
//! - null is nil; an unknown is the extension value `d4 00 00` (type 0),
//!   and any extension value read is an unknown (refinements are dropped);
//! - a number is an int when it is an exact integer, a float64 when the
//!   float is exact, else its decimal text;
//! - list, set and tuple are arrays; map and object are maps (object
//!   attributes all present, keys sorted);
//! - a value of type `dynamic` is `[type JSON as bin, value]`, the value
//!   encoded by that type. Writing one, the type is inferred from the value,
//!   with `dynamic` for what a null or unknown cannot tell.
//!
//! Sensitive marks and unknown refinements are not represented yet.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use rmpv::Value as Mp;

use super::types::Type;

/// A value of some cty type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Null,
    /// Not known until apply.
    Unknown,
    Bool(bool),
    Number(Number),
    String(String),
    List(Vec<Value>),
    /// Elements in no particular order.
    Set(Vec<Value>),
    Map(BTreeMap<String, Value>),
    Object(BTreeMap<String, Value>),
    Tuple(Vec<Value>),
}

impl Value {
    /// The value of an object's attribute, or of a map's element.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(m) | Value::Map(m) => m.get(key),
            _ => None,
        }
    }

    /// The string, when this is a known string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The type cty would give this value, as far as it can tell: a null
    /// or unknown says nothing (`dynamic`), nor does an empty collection
    /// about its elements, and elements whose types differ make the
    /// element type `dynamic` (each element then carries its own type).
    pub fn inferred_type(&self) -> Type {
        let element = |items: &[Value]| {
            let mut types = items
                .iter()
                .filter(|v| !matches!(v, Value::Null | Value::Unknown))
                .map(Value::inferred_type);
            match types.next() {
                Some(first) if types.all(|t| t == first) => first,
                _ => Type::Dynamic,
            }
        };
        match self {
            Value::Null | Value::Unknown => Type::Dynamic,
            Value::Bool(_) => Type::Bool,
            Value::Number(_) => Type::Number,
            Value::String(_) => Type::String,
            Value::List(items) => Type::List(Box::new(element(items))),
            Value::Set(items) => Type::Set(Box::new(element(items))),
            Value::Map(items) => {
                let items: Vec<Value> = items.values().cloned().collect();
                Type::Map(Box::new(element(&items)))
            }
            Value::Object(attrs) => Type::Object {
                attributes: attrs
                    .iter()
                    .map(|(k, v)| (k.clone(), v.inferred_type()))
                    .collect(),
                optional: Default::default(),
            },
            Value::Tuple(items) => Type::Tuple(items.iter().map(Value::inferred_type).collect()),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.into())
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Number(Number::from(n))
    }
}

/// An arbitrary-precision decimal number, kept as its canonical text
/// (`-12`, `0.5`, `1e+100` is written out as digits).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Number(String);

impl Number {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The number as an `i64`, when it is one exactly.
    pub fn as_i64(&self) -> Option<i64> {
        self.0.parse().ok()
    }
}

impl From<i64> for Number {
    fn from(n: i64) -> Number {
        Number(n.to_string())
    }
}

impl From<u64> for Number {
    fn from(n: u64) -> Number {
        Number(n.to_string())
    }
}

/// Why a text is not a number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a decimal number")]
pub struct NumberError(String);

impl FromStr for Number {
    type Err = NumberError;

    /// Accepts `[-]digits[.digits][e[+-]digits]` and normalises it: no
    /// exponent, no leading zeros, no trailing fractional zeros, no `-0`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let error = || NumberError(s.into());
        let (negative, rest) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s.strip_prefix('+').unwrap_or(s)),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(i) => (
                &rest[..i],
                rest[i + 1..].parse::<i64>().map_err(|_| error())?,
            ),
            None => (rest, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if (int.is_empty() && frac.is_empty())
            || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit())
            || exponent.abs() > 10_000
        {
            return Err(error());
        }
        let digits = format!("{int}{frac}");
        // The decimal point sits after `point` digits of `digits`.
        let point = int.len() as i64 + exponent;
        let (whole, fraction) = if point <= 0 {
            (
                String::new(),
                format!("{}{digits}", "0".repeat((-point) as usize)),
            )
        } else if point as usize >= digits.len() {
            (
                format!("{digits}{}", "0".repeat(point as usize - digits.len())),
                String::new(),
            )
        } else {
            (
                digits[..point as usize].to_string(),
                digits[point as usize..].to_string(),
            )
        };
        let whole = whole.trim_start_matches('0');
        let fraction = fraction.trim_end_matches('0');
        let mut text = String::new();
        if negative && !(whole.is_empty() && fraction.is_empty()) {
            text.push('-');
        }
        text.push_str(if whole.is_empty() { "0" } else { whole });
        if !fraction.is_empty() {
            text.push('.');
            text.push_str(fraction);
        }
        Ok(Number(text))
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Number {
    /// The number as msgpack: int, exact float64, or decimal text.
    fn to_msgpack(&self) -> Mp {
        if let Ok(i) = self.0.parse::<i64>() {
            return Mp::from(i);
        }
        if let Ok(u) = self.0.parse::<u64>() {
            return Mp::from(u);
        }
        match self.exact_f64() {
            Some(f) => Mp::F64(f),
            None => Mp::from(self.0.as_str()),
        }
    }

    /// The number as an f64 when that float is exactly this decimal: the
    /// decimal's fraction must be dyadic and its significand fit 53 bits.
    fn exact_f64(&self) -> Option<f64> {
        let text = self.0.trim_start_matches('-');
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        let k = fraction.len() as u32;
        let n: u128 = format!("{whole}{fraction}").parse().ok()?;
        let five_k = 5u128.checked_pow(k)?;
        if !n.is_multiple_of(five_k) {
            return None;
        }
        // value = (n / 5^k) / 2^k, exact when the quotient fits the
        // significand.
        let significand = n / five_k;
        if significand >= 1 << 53 {
            return None;
        }
        let value = significand as f64 / 2f64.powi(k as i32);
        Some(if self.0.starts_with('-') {
            -value
        } else {
            value
        })
    }

    fn from_f64(f: f64) -> Result<Number, ValueError> {
        if !f.is_finite() {
            return Err(ValueError::new("infinite numbers are not supported"));
        }
        // Rust writes the shortest text that reads back as the same float.
        format!("{f}")
            .parse()
            .map_err(|e: NumberError| ValueError::new(e.to_string()))
    }
}

/// Converts a value to type `ty` as terraform converts a configuration
/// value to an attribute's type (cty's conversions): a string from a
/// number or bool, a number or bool from their string forms, lists, sets
/// and tuples into each other (sets dropping duplicates), maps and objects
/// into each other, with an object's missing optional attributes null.
/// Null and unknown values convert to anything.
pub fn convert(value: &Value, ty: &Type) -> Result<Value, ValueError> {
    let required = |what: &str| ValueError::new(format!("{what} required, got {}", kind(value)));
    let each = |items: &[Value], t: &Type| -> Result<Vec<Value>, ValueError> {
        items
            .iter()
            .enumerate()
            .map(|(i, v)| convert(v, t).map_err(|e| e.at(&format!("[{i}]"))))
            .collect()
    };
    Ok(match (value, ty) {
        (Value::Null, _) | (Value::Unknown, _) | (_, Type::Dynamic) => value.clone(),
        (Value::String(_), Type::String) => value.clone(),
        (Value::Number(n), Type::String) => Value::String(n.to_string()),
        (Value::Bool(b), Type::String) => Value::String(b.to_string()),
        (_, Type::String) => return Err(required("string")),
        (Value::Number(_), Type::Number) => value.clone(),
        (Value::String(s), Type::Number) => Value::Number(
            s.parse()
                .map_err(|_| ValueError::new(format!("a number is required, got {s:?}")))?,
        ),
        (_, Type::Number) => return Err(required("number")),
        (Value::Bool(_), Type::Bool) => value.clone(),
        (Value::String(s), Type::Bool) => match s.as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => return Err(ValueError::new(format!("a bool is required, got {s:?}"))),
        },
        (_, Type::Bool) => return Err(required("bool")),
        (Value::List(items) | Value::Set(items) | Value::Tuple(items), Type::List(t)) => {
            Value::List(each(items, t)?)
        }
        (Value::List(items) | Value::Set(items) | Value::Tuple(items), Type::Set(t)) => {
            let mut unique: Vec<Value> = Vec::new();
            for v in each(items, t)? {
                if !unique.contains(&v) {
                    unique.push(v);
                }
            }
            Value::Set(unique)
        }
        (_, Type::List(_)) => return Err(required("list")),
        (_, Type::Set(_)) => return Err(required("set")),
        (Value::List(items) | Value::Tuple(items), Type::Tuple(types)) => {
            if items.len() != types.len() {
                return Err(ValueError::new(format!(
                    "a tuple of {} elements is required ({} given)",
                    types.len(),
                    items.len()
                )));
            }
            Value::Tuple(
                items
                    .iter()
                    .zip(types)
                    .enumerate()
                    .map(|(i, (v, t))| convert(v, t).map_err(|e| e.at(&format!("[{i}]"))))
                    .collect::<Result<_, _>>()?,
            )
        }
        (_, Type::Tuple(_)) => return Err(required("tuple")),
        (Value::Map(items) | Value::Object(items), Type::Map(t)) => Value::Map(
            items
                .iter()
                .map(|(k, v)| {
                    Ok((
                        k.clone(),
                        convert(v, t).map_err(|e| e.at(&format!("[{k:?}]")))?,
                    ))
                })
                .collect::<Result<_, ValueError>>()?,
        ),
        (_, Type::Map(_)) => return Err(required("map")),
        (
            Value::Map(items) | Value::Object(items),
            Type::Object {
                attributes,
                optional,
            },
        ) => {
            if let Some(extra) = items.keys().find(|k| !attributes.contains_key(*k)) {
                return Err(ValueError::new(format!("unsupported attribute {extra:?}")));
            }
            let mut out = BTreeMap::new();
            for (name, t) in attributes {
                let v = match items.get(name) {
                    Some(v) => convert(v, t).map_err(|e| e.at(&format!(".{name}")))?,
                    None if optional.contains(name) => Value::Null,
                    None => return Err(ValueError::new(format!("attribute {name:?} is required"))),
                };
                out.insert(name.clone(), v);
            }
            Value::Object(out)
        }
        (_, Type::Object { .. }) => return Err(required("object")),
    })
}

/// Why a value could not be converted, encoded or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}{}", if path.is_empty() { String::new() } else { format!(" at {path}") })]
pub struct ValueError {
    message: String,
    path: String,
}

impl ValueError {
    fn new(message: impl Into<String>) -> ValueError {
        ValueError {
            message: message.into(),
            path: String::new(),
        }
    }

    fn at(mut self, step: &str) -> ValueError {
        self.path = format!("{step}{}", self.path);
        self
    }
}

/// Encodes `value` as msgpack for a position of type `ty`.
pub fn encode(value: &Value, ty: &Type) -> Result<Vec<u8>, ValueError> {
    let mp = to_msgpack(value, ty)?;
    let mut out = Vec::new();
    rmpv::encode::write_value(&mut out, &mp).map_err(|e| ValueError::new(e.to_string()))?;
    Ok(out)
}

/// Decodes msgpack read from a position of type `ty`.
pub fn decode(bytes: &[u8], ty: &Type) -> Result<Value, ValueError> {
    let mut reader = bytes;
    let mp = rmpv::decode::read_value(&mut reader).map_err(|e| ValueError::new(e.to_string()))?;
    if !reader.is_empty() {
        return Err(ValueError::new("trailing bytes after the value"));
    }
    from_msgpack(mp, ty)
}

fn unknown() -> Mp {
    Mp::Ext(0, vec![0])
}

fn to_msgpack(value: &Value, ty: &Type) -> Result<Mp, ValueError> {
    if *ty == Type::Dynamic {
        return match value {
            Value::Null => Ok(Mp::Nil),
            Value::Unknown => Ok(unknown()),
            _ => {
                let actual = value.inferred_type();
                let type_json = serde_json::to_vec(&actual.to_json()).expect("JSON of a type");
                Ok(Mp::Array(vec![
                    Mp::Binary(type_json),
                    to_msgpack(value, &actual)?,
                ]))
            }
        };
    }
    let mismatch = || ValueError::new(format!("a {} value cannot be a {ty}", kind(value)));
    match (value, ty) {
        (Value::Null, _) => Ok(Mp::Nil),
        (Value::Unknown, _) => Ok(unknown()),
        (Value::Bool(b), Type::Bool) => Ok(Mp::Boolean(*b)),
        (Value::String(s), Type::String) => Ok(Mp::from(s.as_str())),
        (Value::Number(n), Type::Number) => Ok(n.to_msgpack()),
        (Value::List(items), Type::List(t)) | (Value::Set(items), Type::Set(t)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| to_msgpack(v, t).map_err(|e| e.at(&format!("[{i}]"))))
            .collect::<Result<_, _>>()
            .map(Mp::Array),
        (Value::Tuple(items), Type::Tuple(types)) => {
            if items.len() != types.len() {
                return Err(ValueError::new(format!(
                    "a tuple of {} elements is required ({} given)",
                    types.len(),
                    items.len()
                )));
            }
            items
                .iter()
                .zip(types)
                .enumerate()
                .map(|(i, (v, t))| to_msgpack(v, t).map_err(|e| e.at(&format!("[{i}]"))))
                .collect::<Result<_, _>>()
                .map(Mp::Array)
        }
        (Value::Map(items), Type::Map(t)) => items
            .iter()
            .map(|(k, v)| {
                let v = to_msgpack(v, t).map_err(|e| e.at(&format!("[{k:?}]")))?;
                Ok((Mp::from(k.as_str()), v))
            })
            .collect::<Result<_, _>>()
            .map(Mp::Map),
        (Value::Object(attrs), Type::Object { attributes, .. }) => {
            if let Some(extra) = attrs.keys().find(|k| !attributes.contains_key(*k)) {
                return Err(ValueError::new(format!("unsupported attribute {extra:?}")));
            }
            // Every attribute is written, in name order; absent ones as null.
            attributes
                .iter()
                .map(|(name, t)| {
                    let v = attrs.get(name).unwrap_or(&Value::Null);
                    let v = to_msgpack(v, t).map_err(|e| e.at(&format!(".{name}")))?;
                    Ok((Mp::from(name.as_str()), v))
                })
                .collect::<Result<_, _>>()
                .map(Mp::Map)
        }
        _ => Err(mismatch()),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Unknown => "unknown",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::List(_) => "list",
        Value::Set(_) => "set",
        Value::Map(_) => "map",
        Value::Object(_) => "object",
        Value::Tuple(_) => "tuple",
    }
}

fn from_msgpack(mp: Mp, ty: &Type) -> Result<Value, ValueError> {
    match mp {
        Mp::Ext(..) => return Ok(Value::Unknown),
        Mp::Nil => return Ok(Value::Null),
        _ => {}
    }
    let mismatch = |mp: &Mp| ValueError::new(format!("msgpack {mp} is not a {ty}"));
    match ty {
        Type::Dynamic => {
            let Mp::Array(mut parts) = mp else {
                return Err(ValueError::new("a dynamic value is [type, value]"));
            };
            if parts.len() != 2 {
                return Err(ValueError::new("a dynamic value is [type, value]"));
            }
            let value = parts.pop().expect("two parts");
            let type_json = match parts.pop().expect("two parts") {
                Mp::Binary(b) => b,
                Mp::String(s) => s.into_bytes(),
                _ => return Err(ValueError::new("a dynamic value's type is JSON bytes")),
            };
            let actual =
                Type::from_json_bytes(&type_json).map_err(|e| ValueError::new(e.to_string()))?;
            from_msgpack(value, &actual)
        }
        Type::Bool => match mp {
            Mp::Boolean(b) => Ok(Value::Bool(b)),
            other => Err(mismatch(&other)),
        },
        Type::String => match mp {
            Mp::String(s) => s
                .into_str()
                .map(Value::String)
                .ok_or_else(|| ValueError::new("a string is not valid UTF-8")),
            other => Err(mismatch(&other)),
        },
        Type::Number => match mp {
            Mp::Integer(i) => Ok(Value::Number(match (i.as_i64(), i.as_u64()) {
                (Some(i), _) => Number::from(i),
                (None, Some(u)) => Number::from(u),
                _ => return Err(ValueError::new("integer out of range")),
            })),
            Mp::F64(f) => Number::from_f64(f).map(Value::Number),
            Mp::F32(f) => Number::from_f64(f64::from(f)).map(Value::Number),
            Mp::String(s) => s
                .as_str()
                .ok_or_else(|| ValueError::new("a number's text is not valid UTF-8"))?
                .parse()
                .map(Value::Number)
                .map_err(|e: NumberError| ValueError::new(e.to_string())),
            other => Err(mismatch(&other)),
        },
        Type::List(t) | Type::Set(t) => {
            let Mp::Array(items) = mp else {
                return Err(mismatch(&mp));
            };
            let items = items
                .into_iter()
                .enumerate()
                .map(|(i, v)| from_msgpack(v, t).map_err(|e| e.at(&format!("[{i}]"))))
                .collect::<Result<_, _>>()?;
            Ok(match ty {
                Type::List(_) => Value::List(items),
                _ => Value::Set(items),
            })
        }
        Type::Tuple(types) => {
            let Mp::Array(items) = mp else {
                return Err(mismatch(&mp));
            };
            if items.len() != types.len() {
                return Err(ValueError::new(format!(
                    "a tuple of {} elements is required ({} given)",
                    types.len(),
                    items.len()
                )));
            }
            items
                .into_iter()
                .zip(types)
                .enumerate()
                .map(|(i, (v, t))| from_msgpack(v, t).map_err(|e| e.at(&format!("[{i}]"))))
                .collect::<Result<_, _>>()
                .map(Value::Tuple)
        }
        Type::Map(t) => {
            let Mp::Map(entries) = mp else {
                return Err(mismatch(&mp));
            };
            entries
                .into_iter()
                .map(|(k, v)| {
                    let key = map_key(k)?;
                    let v = from_msgpack(v, t).map_err(|e| e.at(&format!("[{key:?}]")))?;
                    Ok((key, v))
                })
                .collect::<Result<_, _>>()
                .map(Value::Map)
        }
        Type::Object { attributes, .. } => {
            let Mp::Map(entries) = mp else {
                return Err(mismatch(&mp));
            };
            let mut attrs = BTreeMap::new();
            for (k, v) in entries {
                let name = map_key(k)?;
                let t = attributes
                    .get(&name)
                    .ok_or_else(|| ValueError::new(format!("unsupported attribute {name:?}")))?;
                let v = from_msgpack(v, t).map_err(|e| e.at(&format!(".{name}")))?;
                attrs.insert(name, v);
            }
            // A provider sends every attribute; fill any it left out as
            // null, so readers see the full shape.
            for name in attributes.keys() {
                attrs.entry(name.clone()).or_insert(Value::Null);
            }
            Ok(Value::Object(attrs))
        }
    }
}

fn map_key(key: Mp) -> Result<String, ValueError> {
    match key {
        Mp::String(s) => s
            .into_str()
            .ok_or_else(|| ValueError::new("a key is not valid UTF-8")),
        other => Err(ValueError::new(format!("map key {other} is not a string"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ty(j: serde_json::Value) -> Type {
        Type::from_json(&j).unwrap()
    }

    fn num(s: &str) -> Value {
        Value::Number(s.parse().unwrap())
    }

    fn round_trip(value: &Value, t: &Type) -> Vec<u8> {
        let bytes = encode(value, t).unwrap();
        assert_eq!(&decode(&bytes, t).unwrap(), value, "{t}");
        bytes
    }

    #[test]
    fn numbers_normalise() {
        for (text, want) in [
            ("0", "0"),
            ("-0", "0"),
            ("007", "7"),
            ("1.50", "1.5"),
            ("-0.250", "-0.25"),
            ("1e3", "1000"),
            ("1.5e-3", "0.0015"),
            (
                "12345678901234567890123456789",
                "12345678901234567890123456789",
            ),
            (".5", "0.5"),
        ] {
            assert_eq!(text.parse::<Number>().unwrap().as_str(), want, "{text}");
        }
        for bad in ["", "-", "1.2.3", "abc", "1e", "0x10", "1e99999"] {
            assert!(bad.parse::<Number>().is_err(), "{bad}");
        }
    }

    #[test]
    fn primitives_encode_as_go_cty_does() {
        // Exact bytes as go-cty writes them.
        assert_eq!(encode(&Value::Null, &Type::String).unwrap(), [0xc0]);
        assert_eq!(
            encode(&Value::Unknown, &Type::String).unwrap(),
            [0xd4, 0, 0]
        );
        assert_eq!(encode(&true.into(), &Type::Bool).unwrap(), [0xc3]);
        assert_eq!(
            encode(&"hi".into(), &Type::String).unwrap(),
            [0xa2, b'h', b'i']
        );
        assert_eq!(encode(&num("5"), &Type::Number).unwrap(), [0x05]);
        assert_eq!(encode(&num("-1"), &Type::Number).unwrap(), [0xff]);
        // 0.5 is an exact float64; 0.1 is not, so it travels as text.
        assert_eq!(
            encode(&num("0.5"), &Type::Number).unwrap(),
            [0xcb, 0x3f, 0xe0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            encode(&num("0.1"), &Type::Number).unwrap(),
            [0xa3, b'0', b'.', b'1']
        );
        round_trip(&num("0.1"), &Type::Number);
        round_trip(&num("12345678901234567890123456789"), &Type::Number);
        round_trip(&num("18446744073709551615"), &Type::Number);
        round_trip(&num("-9223372036854775808"), &Type::Number);
    }

    #[test]
    fn any_extension_is_unknown() {
        // A refined unknown (type 12) with a payload.
        let refined = [0xc7, 0x03, 0x0c, 0x81, 0x01, 0xc3];
        assert_eq!(decode(&refined, &Type::String).unwrap(), Value::Unknown);
        assert_eq!(
            decode(&refined, &ty(json!(["list", "number"]))).unwrap(),
            Value::Unknown
        );
    }

    #[test]
    fn objects_write_every_attribute_in_order() {
        let t = ty(json!(["object", {"b": "string", "a": "number"}]));
        let v = Value::Object([("b".to_string(), Value::from("x"))].into());
        let bytes = encode(&v, &t).unwrap();
        // {"a": nil, "b": "x"}
        assert_eq!(bytes, [0x82, 0xa1, b'a', 0xc0, 0xa1, b'b', 0xa1, b'x']);
        let back = decode(&bytes, &t).unwrap();
        assert_eq!(back.get("a"), Some(&Value::Null));
        assert_eq!(back.get("b"), Some(&Value::from("x")));
        let extra = Value::Object([("c".to_string(), Value::Null)].into());
        assert!(encode(&extra, &t).is_err());
    }

    #[test]
    fn dynamic_is_type_then_inline_value() {
        let bytes = encode(&"x".into(), &Type::Dynamic).unwrap();
        let mut want = vec![0x92, 0xc4, 8];
        want.extend_from_slice(b"\"string\"");
        want.extend_from_slice(&[0xa1, b'x']);
        assert_eq!(bytes, want);
        assert_eq!(decode(&bytes, &Type::Dynamic).unwrap(), Value::from("x"));
        assert_eq!(encode(&Value::Null, &Type::Dynamic).unwrap(), [0xc0]);
        assert_eq!(
            encode(&Value::Unknown, &Type::Dynamic).unwrap(),
            [0xd4, 0, 0]
        );
    }

    #[test]
    fn every_shape_round_trips_with_unknowns_and_nulls_inside() {
        let object_type = ty(json!(["object", {
            "name": "string",
            "count": "number",
            "on": "bool",
            "tags": ["map", "string"],
            "ids": ["set", "string"],
            "rules": ["list", ["object", {"port": "number", "cidrs": ["list", "string"]}]],
            "pair": ["tuple", ["string", "number"]],
            "any": "dynamic"
        }]));
        let rule = |port: Value, cidrs: Value| {
            Value::Object([("port".to_string(), port), ("cidrs".to_string(), cidrs)].into())
        };
        let values = [
            Value::Object(
                [
                    ("name".to_string(), "q".into()),
                    ("count".to_string(), num("3")),
                    ("on".to_string(), true.into()),
                    (
                        "tags".to_string(),
                        Value::Map(
                            [
                                ("env".to_string(), "prod".into()),
                                ("x".to_string(), Value::Unknown),
                            ]
                            .into(),
                        ),
                    ),
                    (
                        "ids".to_string(),
                        Value::Set(vec!["a".into(), Value::Unknown]),
                    ),
                    (
                        "rules".to_string(),
                        Value::List(vec![
                            rule(num("443"), Value::List(vec!["10.0.0.0/8".into()])),
                            rule(Value::Unknown, Value::Null),
                            rule(num("80"), Value::List(vec![Value::Unknown])),
                        ]),
                    ),
                    (
                        "pair".to_string(),
                        Value::Tuple(vec!["a".into(), num("-2.5")]),
                    ),
                    (
                        "any".to_string(),
                        Value::List(vec![Value::Object([("k".to_string(), "v".into())].into())]),
                    ),
                ]
                .into(),
            ),
            Value::Null,
            Value::Unknown,
        ];
        for value in &values {
            round_trip(value, &object_type);
        }
        // Empty collections, and collections of nothing but unknowns.
        for (value, t) in [
            (Value::List(vec![]), ty(json!(["list", "string"]))),
            (Value::Set(vec![]), ty(json!(["set", ["map", "bool"]]))),
            (Value::Map(BTreeMap::new()), ty(json!(["map", "number"]))),
            (Value::Tuple(vec![]), ty(json!(["tuple", []]))),
            (Value::Object(BTreeMap::new()), ty(json!(["object", {}]))),
            (
                Value::List(vec![Value::Unknown, Value::Null]),
                ty(json!(["list", ["set", "string"]])),
            ),
        ] {
            round_trip(&value, &t);
        }
    }

    /// A small deterministic generator (xorshift), so the round-trip
    /// property is checked over many shapes without a test dependency.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }

        fn ty(&mut self, depth: u32) -> Type {
            let leaf = depth == 0 || self.next(3) == 0;
            if leaf {
                return [Type::String, Type::Number, Type::Bool, Type::Dynamic]
                    [self.next(4) as usize]
                    .clone();
            }
            match self.next(6) {
                0 => Type::List(Box::new(self.ty(depth - 1))),
                1 => Type::Set(Box::new(self.ty(depth - 1))),
                2 => Type::Map(Box::new(self.ty(depth - 1))),
                3 => Type::Tuple((0..self.next(3)).map(|_| self.ty(depth - 1)).collect()),
                _ => Type::Object {
                    attributes: (0..self.next(4))
                        .map(|i| (format!("a{i}"), self.ty(depth - 1)))
                        .collect(),
                    optional: Default::default(),
                },
            }
        }

        fn value(&mut self, ty: &Type, depth: u32) -> Value {
            match self.next(10) {
                0 => return Value::Null,
                1 => return Value::Unknown,
                _ => {}
            }
            match ty {
                Type::String => {
                    Value::String(["", "x", "ünï", "a|b"][self.next(4) as usize].into())
                }
                Type::Number => {
                    num(["0", "-7", "0.5", "0.1", "1e40", "-2.25"][self.next(6) as usize])
                }
                Type::Bool => Value::Bool(self.next(2) == 0),
                Type::Dynamic => {
                    let actual = self.ty(depth.min(2));
                    self.value(&actual, depth.saturating_sub(1))
                }
                Type::List(t) => {
                    Value::List((0..self.next(3)).map(|_| self.value(t, depth)).collect())
                }
                Type::Set(t) => {
                    Value::Set((0..self.next(3)).map(|_| self.value(t, depth)).collect())
                }
                Type::Map(t) => Value::Map(
                    (0..self.next(3))
                        .map(|i| (format!("k{i}"), self.value(t, depth)))
                        .collect(),
                ),
                Type::Tuple(ts) => Value::Tuple(ts.iter().map(|t| self.value(t, depth)).collect()),
                Type::Object { attributes, .. } => Value::Object(
                    attributes
                        .iter()
                        .map(|(k, t)| (k.clone(), self.value(t, depth)))
                        .collect(),
                ),
            }
        }
    }

    #[test]
    fn generated_values_round_trip() {
        let mut gen = Gen(0x9e37_79b9_7f4a_7c15);
        for _ in 0..2000 {
            let t = gen.ty(4);
            let v = gen.value(&t, 3);
            round_trip(&v, &t);
        }
    }

    #[test]
    fn conversions_follow_cty() {
        let t = ty(json!(["object", {
            "flag": "string",
            "port": "number",
            "on": "bool",
            "ids": ["set", "string"],
            "pair": ["tuple", ["string", "number"]],
            "tags": ["map", "string"],
            "opt": "string"
        }, ["opt"]]));
        let given = Value::Object(
            [
                ("flag".to_string(), true.into()),
                ("port".to_string(), "8080".into()),
                ("on".to_string(), "false".into()),
                (
                    "ids".to_string(),
                    Value::Tuple(vec!["a".into(), num("1"), "a".into()]),
                ),
                ("pair".to_string(), Value::List(vec![num("1"), "2".into()])),
                (
                    "tags".to_string(),
                    Value::Object([("n".to_string(), num("3"))].into()),
                ),
            ]
            .into(),
        );
        let got = convert(&given, &t).unwrap();
        let want = Value::Object(
            [
                ("flag".to_string(), "true".into()),
                ("port".to_string(), num("8080")),
                ("on".to_string(), false.into()),
                ("ids".to_string(), Value::Set(vec!["a".into(), "1".into()])),
                ("pair".to_string(), Value::Tuple(vec!["1".into(), num("2")])),
                (
                    "tags".to_string(),
                    Value::Map([("n".to_string(), "3".into())].into()),
                ),
                ("opt".to_string(), Value::Null),
            ]
            .into(),
        );
        assert_eq!(got, want);
        encode(&got, &t).unwrap();

        let err = |v: Value, t: Type| convert(&v, &t).unwrap_err().to_string();
        assert_eq!(
            err("x".into(), Type::Number),
            "a number is required, got \"x\""
        );
        assert_eq!(
            err("yes".into(), Type::Bool),
            "a bool is required, got \"yes\""
        );
        assert_eq!(
            err(Value::List(vec![]), Type::String),
            "string required, got list"
        );
        let obj_t = ty(json!(["object", {"a": "string"}]));
        assert_eq!(
            err(Value::Object(BTreeMap::new()), obj_t.clone()),
            "attribute \"a\" is required"
        );
        assert_eq!(
            err(
                Value::Object([("a".to_string(), Value::List(vec![]))].into()),
                obj_t
            ),
            "string required, got list at .a"
        );
    }

    #[test]
    fn mismatches_name_the_path() {
        let t = ty(json!(["object", {"rules": ["list", ["object", {"port": "number"}]]}]));
        let v = Value::Object(
            [(
                "rules".to_string(),
                Value::List(vec![Value::Object(
                    [("port".to_string(), "http".into())].into(),
                )]),
            )]
            .into(),
        );
        let err = encode(&v, &t).unwrap_err().to_string();
        assert_eq!(
            err,
            "a string value cannot be a \"number\" at .rules[0].port"
        );
        assert!(decode(&[0xa1, b'x'], &Type::Number).is_err());
        assert!(decode(&[0xc0, 0xc0], &Type::String).is_err());
    }
}
