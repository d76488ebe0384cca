//! The msgpack encoding of values as they cross the plugin boundary,
//! exactly as go-cty writes it.
//!
//! Encoding and decoding are driven by the schema's [`Type`], as go-cty's
//! codec is:
//!
//! - null is nil; an unknown is the extension value `d4 00 00` (type 0),
//!   and any extension value read is an unknown (refinements are dropped);
//! - a number is an int when it is an exact int64, a float64 when the
//!   float is exact, else its shortest decimal text;
//! - list, set and tuple are arrays; map and object are maps (object
//!   attributes all present, keys sorted);
//! - a value of type `dynamic` whose own type is not `dynamic` is
//!   `[type JSON as bin, value]`, the value encoded by its own type; a
//!   null or unknown of type `dynamic` is written bare.
//!
//! Decoded values are typed by the position they were read from: a null or
//! unknown takes the schema type there (without optional attributes, as
//! every value's type is). Sensitive marks are not sent: the provider never
//! sees them, and nothing decoded carries one.

use std::collections::BTreeMap;

use num_bigint::BigInt;
use rmpv::Value as Mp;

use crate::value::number::{Number, INT_PREC};
use crate::value::{Kind, Type, Value};

/// Why a value could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}{}", if path.is_empty() { String::new() } else { format!(" at {path}") })]
pub struct CodecError {
    message: String,
    path: String,
}

impl CodecError {
    fn new(message: impl Into<String>) -> CodecError {
        CodecError {
            message: message.into(),
            path: String::new(),
        }
    }

    fn at(mut self, step: &str) -> CodecError {
        self.path = format!("{step}{}", self.path);
        self
    }
}

/// Encodes `value` as msgpack for a position of type `ty`.
pub fn encode(value: &Value, ty: &Type) -> Result<Vec<u8>, CodecError> {
    let mp = to_msgpack(value, ty)?;
    let mut out = Vec::new();
    rmpv::encode::write_value(&mut out, &mp).map_err(|e| CodecError::new(e.to_string()))?;
    Ok(out)
}

/// Decodes msgpack read from a position of type `ty`.
pub fn decode(bytes: &[u8], ty: &Type) -> Result<Value, CodecError> {
    let mut reader = bytes;
    let mp = rmpv::decode::read_value(&mut reader).map_err(|e| CodecError::new(e.to_string()))?;
    if !reader.is_empty() {
        return Err(CodecError::new("trailing bytes after the value"));
    }
    from_msgpack(mp, ty)
}

fn unknown() -> Mp {
    Mp::Ext(0, vec![0])
}

fn tuple_length(want: usize, given: usize) -> CodecError {
    CodecError::new(format!(
        "a tuple of {want} elements is required ({given} given)"
    ))
}

fn to_msgpack(value: &Value, ty: &Type) -> Result<Mp, CodecError> {
    if *ty == Type::Dynamic {
        let actual = value.ty();
        if actual != Type::Dynamic {
            let type_json = serde_json::to_vec(&actual.to_json()).expect("JSON of a type");
            return Ok(Mp::Array(vec![
                Mp::Binary(type_json),
                to_msgpack(value, &actual)?,
            ]));
        }
    }
    let mismatch = || {
        CodecError::new(format!(
            "a {} value cannot be a {}",
            kind(value),
            ty.to_json()
        ))
    };
    match (&value.kind, ty) {
        (Kind::Unknown(_), _) => Ok(unknown()),
        (Kind::Null(_), _) => Ok(Mp::Nil),
        (Kind::Bool(b), Type::Bool) => Ok(Mp::Boolean(*b)),
        (Kind::String(s), Type::String) => Ok(Mp::from(s.as_str())),
        (Kind::Number(n), Type::Number) => Ok(number_to_msgpack(n)),
        (Kind::List(_, items), Type::List(t)) | (Kind::Set(_, items), Type::Set(t)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| to_msgpack(v, t).map_err(|e| e.at(&format!("[{i}]"))))
            .collect::<Result<_, _>>()
            .map(Mp::Array),
        (Kind::Tuple(items), Type::Tuple(types)) => {
            if items.len() != types.len() {
                return Err(tuple_length(types.len(), items.len()));
            }
            items
                .iter()
                .zip(types)
                .enumerate()
                .map(|(i, (v, t))| to_msgpack(v, t).map_err(|e| e.at(&format!("[{i}]"))))
                .collect::<Result<_, _>>()
                .map(Mp::Array)
        }
        (Kind::Map(_, items), Type::Map(t)) => items
            .iter()
            .map(|(k, v)| {
                let v = to_msgpack(v, t).map_err(|e| e.at(&format!("[{k:?}]")))?;
                Ok((Mp::from(k.as_str()), v))
            })
            .collect::<Result<_, _>>()
            .map(Mp::Map),
        (Kind::Object(attrs), Type::Object { attributes, .. }) => {
            if let Some(extra) = attrs.keys().find(|k| !attributes.contains_key(*k)) {
                return Err(CodecError::new(format!("unsupported attribute {extra:?}")));
            }
            // Every attribute is written, in name order; absent ones as null.
            attributes
                .iter()
                .map(|(name, t)| {
                    let v = match attrs.get(name) {
                        Some(v) => to_msgpack(v, t).map_err(|e| e.at(&format!(".{name}")))?,
                        None => Mp::Nil,
                    };
                    Ok((Mp::from(name.as_str()), v))
                })
                .collect::<Result<_, _>>()
                .map(Mp::Map)
        }
        _ => Err(mismatch()),
    }
}

/// go-cty's choice: an int when the number is an exact int64, a float64
/// when that float is exact, else the shortest decimal text.
fn number_to_msgpack(n: &Number) -> Mp {
    if let Some(i) = n.to_i64() {
        return Mp::from(i);
    }
    let f = n.to_f64();
    if n.compare(&Number::from_f64(f)) == std::cmp::Ordering::Equal {
        return Mp::F64(f);
    }
    Mp::from(n.to_string_shortest())
}

fn kind(value: &Value) -> &'static str {
    match &value.kind {
        Kind::Null(_) => "null",
        Kind::Unknown(_) => "unknown",
        Kind::Bool(_) => "bool",
        Kind::Number(_) => "number",
        Kind::String(_) => "string",
        Kind::List(..) => "list",
        Kind::Set(..) => "set",
        Kind::Map(..) => "map",
        Kind::Object(_) => "object",
        Kind::Tuple(_) => "tuple",
    }
}

fn from_msgpack(mp: Mp, ty: &Type) -> Result<Value, CodecError> {
    match mp {
        Mp::Ext(..) => return Ok(Value::unknown(ty.without_optional())),
        Mp::Nil => return Ok(Value::null(ty.without_optional())),
        _ => {}
    }
    let mismatch = |mp: &Mp| CodecError::new(format!("msgpack {mp} is not a {}", ty.to_json()));
    match ty {
        Type::Dynamic => {
            let Mp::Array(mut parts) = mp else {
                return Err(CodecError::new("a dynamic value is [type, value]"));
            };
            if parts.len() != 2 {
                return Err(CodecError::new("a dynamic value is [type, value]"));
            }
            let value = parts.pop().expect("two parts");
            let type_json = match parts.pop().expect("two parts") {
                Mp::Binary(b) => b,
                Mp::String(s) => s.into_bytes(),
                _ => return Err(CodecError::new("a dynamic value's type is JSON bytes")),
            };
            let actual =
                Type::from_json_bytes(&type_json).map_err(|e| CodecError::new(e.to_string()))?;
            from_msgpack(value, &actual)
        }
        Type::Bool => match mp {
            Mp::Boolean(b) => Ok(Value::bool(b)),
            other => Err(mismatch(&other)),
        },
        Type::String => match mp {
            Mp::String(s) => s
                .into_str()
                .map(Value::string)
                .ok_or_else(|| CodecError::new("a string is not valid UTF-8")),
            other => Err(mismatch(&other)),
        },
        Type::Number => match mp {
            Mp::Integer(i) => Ok(Value::number(match (i.as_i64(), i.as_u64()) {
                (Some(i), _) => Number::from_i64(i),
                (None, Some(u)) => Number::from_bigint(&BigInt::from(u), INT_PREC),
                _ => return Err(CodecError::new("integer out of range")),
            })),
            Mp::F64(f) => number_from_f64(f),
            Mp::F32(f) => number_from_f64(f64::from(f)),
            Mp::String(s) => {
                let text = s
                    .as_str()
                    .ok_or_else(|| CodecError::new("a number's text is not valid UTF-8"))?;
                Number::parse(text)
                    .map(Value::number)
                    .ok_or_else(|| CodecError::new(format!("{text:?} is not a decimal number")))
            }
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
                Type::List(_) => Value::list(t.without_optional(), items),
                _ => Value::set(t.without_optional(), items),
            })
        }
        Type::Tuple(types) => {
            let Mp::Array(items) = mp else {
                return Err(mismatch(&mp));
            };
            if items.len() != types.len() {
                return Err(tuple_length(types.len(), items.len()));
            }
            items
                .into_iter()
                .zip(types)
                .enumerate()
                .map(|(i, (v, t))| from_msgpack(v, t).map_err(|e| e.at(&format!("[{i}]"))))
                .collect::<Result<_, _>>()
                .map(Value::tuple)
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
                .map(|m| Value::map(t.without_optional(), m))
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
                    .ok_or_else(|| CodecError::new(format!("unsupported attribute {name:?}")))?;
                let v = from_msgpack(v, t).map_err(|e| e.at(&format!(".{name}")))?;
                attrs.insert(name, v);
            }
            // A provider sends every attribute; fill any it left out as
            // null, so readers see the full shape.
            for (name, t) in attributes {
                attrs
                    .entry(name.clone())
                    .or_insert_with(|| Value::null(t.without_optional()));
            }
            Ok(Value::object(attrs))
        }
    }
}

/// A float as go-cty reads it: infinities are numbers, NaN is not.
fn number_from_f64(f: f64) -> Result<Value, CodecError> {
    if f.is_nan() {
        return Err(CodecError::new("NaN is not a number"));
    }
    Ok(Value::number(Number::from_f64(f)))
}

fn map_key(key: Mp) -> Result<String, CodecError> {
    match key {
        Mp::String(s) => s
            .into_str()
            .ok_or_else(|| CodecError::new("a key is not valid UTF-8")),
        other => Err(CodecError::new(format!("map key {other} is not a string"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::convert::convert;
    use serde_json::json;

    fn ty(j: serde_json::Value) -> Type {
        Type::from_json(&j).unwrap()
    }

    fn num(s: &str) -> Value {
        Value::number(Number::parse(s).unwrap())
    }

    fn s(text: &str) -> Value {
        Value::string(text)
    }

    fn round_trip(value: &Value, t: &Type) -> Vec<u8> {
        let bytes = encode(value, t).unwrap();
        assert_eq!(&decode(&bytes, t).unwrap(), value, "{}", t.to_json());
        bytes
    }

    #[test]
    fn primitives_encode_as_go_cty_does() {
        // Exact bytes as go-cty writes them.
        assert_eq!(
            encode(&Value::null(Type::String), &Type::String).unwrap(),
            [0xc0]
        );
        assert_eq!(
            encode(&Value::unknown(Type::String), &Type::String).unwrap(),
            [0xd4, 0, 0]
        );
        assert_eq!(encode(&Value::bool(true), &Type::Bool).unwrap(), [0xc3]);
        assert_eq!(encode(&s("hi"), &Type::String).unwrap(), [0xa2, b'h', b'i']);
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
    fn numbers_beyond_int64_and_float64_travel_as_go_cty_writes_them() {
        // go-cty writes an int only when it is an exact int64; 2^64-1 is
        // not, nor an exact float64, so it is its decimal text.
        let mut want = vec![0xb4];
        want.extend_from_slice(b"18446744073709551615");
        assert_eq!(
            encode(&num("18446744073709551615"), &Type::Number).unwrap(),
            want
        );
        // 2^64 is an exact float64.
        assert_eq!(
            encode(&num("18446744073709551616"), &Type::Number).unwrap(),
            [0xcb, 0x43, 0xf0, 0, 0, 0, 0, 0, 0]
        );
        // A large exact float is written out in full, never with an exponent.
        let mut want = vec![0xd9, 41];
        want.extend_from_slice(format!("1{}", "0".repeat(40)).as_bytes());
        assert_eq!(encode(&num("1e40"), &Type::Number).unwrap(), want);
        // A uint64 another encoder wrote still reads as its number.
        let big = [0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
        assert_eq!(
            decode(&big, &Type::Number).unwrap(),
            num("18446744073709551615")
        );
        // Infinities are float64s, as in go-cty; NaN is refused.
        let inf = Value::number(Number::infinity(false));
        assert_eq!(
            round_trip(&inf, &Type::Number),
            [0xcb, 0x7f, 0xf0, 0, 0, 0, 0, 0, 0]
        );
        assert!(decode(&[0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0], &Type::Number).is_err());
    }

    #[test]
    fn any_extension_is_unknown_of_the_position_type() {
        // A refined unknown (type 12) with a payload.
        let refined = [0xc7, 0x03, 0x0c, 0x81, 0x01, 0xc3];
        assert_eq!(
            decode(&refined, &Type::String).unwrap(),
            Value::unknown(Type::String)
        );
        let list = ty(json!(["list", "number"]));
        assert_eq!(decode(&refined, &list).unwrap(), Value::unknown(list));
        // Optional attributes belong to the schema, not to values.
        let opt = ty(json!(["object", {"a": "string"}, ["a"]]));
        assert_eq!(
            decode(&refined, &opt).unwrap(),
            Value::unknown(ty(json!(["object", {"a": "string"}])))
        );
    }

    #[test]
    fn sensitive_marks_are_not_sent() {
        let marked = s("secret").with_sensitive(true);
        let bytes = encode(&marked, &Type::String).unwrap();
        assert_eq!(bytes, encode(&s("secret"), &Type::String).unwrap());
        assert!(!decode(&bytes, &Type::String).unwrap().has_sensitive());
    }

    #[test]
    fn objects_write_every_attribute_in_order() {
        let t = ty(json!(["object", {"b": "string", "a": "number"}]));
        let v = Value::object([("b".to_string(), s("x"))].into());
        let bytes = encode(&v, &t).unwrap();
        // {"a": nil, "b": "x"}
        assert_eq!(bytes, [0x82, 0xa1, b'a', 0xc0, 0xa1, b'b', 0xa1, b'x']);
        let back = decode(&bytes, &t).unwrap();
        assert_eq!(back.get("a"), Some(&Value::null(Type::Number)));
        assert_eq!(back.get("b"), Some(&s("x")));
        let extra = Value::object([("c".to_string(), Value::null(Type::String))].into());
        assert!(encode(&extra, &t).is_err());
    }

    #[test]
    fn dynamic_is_type_then_inline_value() {
        let bytes = encode(&s("x"), &Type::Dynamic).unwrap();
        let mut want = vec![0x92, 0xc4, 8];
        want.extend_from_slice(b"\"string\"");
        want.extend_from_slice(&[0xa1, b'x']);
        assert_eq!(bytes, want);
        assert_eq!(decode(&bytes, &Type::Dynamic).unwrap(), s("x"));
        assert_eq!(
            encode(&Value::null(Type::Dynamic), &Type::Dynamic).unwrap(),
            [0xc0]
        );
        assert_eq!(
            encode(&Value::unknown(Type::Dynamic), &Type::Dynamic).unwrap(),
            [0xd4, 0, 0]
        );
    }

    #[test]
    fn a_typed_null_or_unknown_in_a_dynamic_position_keeps_its_type() {
        // As go-cty writes them: the type travels with the null or unknown.
        let mut want = vec![0x92, 0xc4, 8];
        want.extend_from_slice(b"\"string\"");
        want.push(0xc0);
        assert_eq!(round_trip(&Value::null(Type::String), &Type::Dynamic), want);
        let mut want = vec![0x92, 0xc4, 8];
        want.extend_from_slice(b"\"number\"");
        want.extend_from_slice(&[0xd4, 0, 0]);
        assert_eq!(
            round_trip(&Value::unknown(Type::Number), &Type::Dynamic),
            want
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
        let rule_type = ty(json!(["object", {"port": "number", "cidrs": ["list", "string"]}]));
        let rule = |port: Value, cidrs: Value| {
            Value::object([("port".to_string(), port), ("cidrs".to_string(), cidrs)].into())
        };
        let strings = Type::list(Type::String);
        let values = [
            Value::object(
                [
                    ("name".to_string(), s("q")),
                    ("count".to_string(), num("3")),
                    ("on".to_string(), Value::bool(true)),
                    (
                        "tags".to_string(),
                        Value::map(
                            Type::String,
                            [
                                ("env".to_string(), s("prod")),
                                ("x".to_string(), Value::unknown(Type::String)),
                            ]
                            .into(),
                        ),
                    ),
                    (
                        "ids".to_string(),
                        Value::set(Type::String, vec![s("a"), Value::unknown(Type::String)]),
                    ),
                    (
                        "rules".to_string(),
                        Value::list(
                            rule_type,
                            vec![
                                rule(num("443"), Value::list(Type::String, vec![s("10.0.0.0/8")])),
                                rule(Value::unknown(Type::Number), Value::null(strings)),
                                rule(
                                    num("80"),
                                    Value::list(Type::String, vec![Value::unknown(Type::String)]),
                                ),
                            ],
                        ),
                    ),
                    ("pair".to_string(), Value::tuple(vec![s("a"), num("-2.5")])),
                    (
                        "any".to_string(),
                        Value::tuple(vec![Value::object([("k".to_string(), s("v"))].into())]),
                    ),
                ]
                .into(),
            ),
            Value::null(object_type.clone()),
            Value::unknown(object_type.clone()),
        ];
        for value in &values {
            round_trip(value, &object_type);
        }
        // Empty collections, and collections of nothing but unknowns.
        let string_set = Type::set(Type::String);
        for (value, t) in [
            (
                Value::list(Type::String, vec![]),
                ty(json!(["list", "string"])),
            ),
            (
                Value::set(Type::map(Type::Bool), vec![]),
                ty(json!(["set", ["map", "bool"]])),
            ),
            (
                Value::map(Type::Number, BTreeMap::new()),
                ty(json!(["map", "number"])),
            ),
            (Value::tuple(vec![]), ty(json!(["tuple", []]))),
            (Value::object(BTreeMap::new()), ty(json!(["object", {}]))),
            (
                Value::list(
                    string_set.clone(),
                    vec![Value::unknown(string_set.clone()), Value::null(string_set)],
                ),
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
                0 => Type::list(self.ty(depth - 1)),
                1 => Type::set(self.ty(depth - 1)),
                2 => Type::map(self.ty(depth - 1)),
                3 => Type::Tuple((0..self.next(3)).map(|_| self.ty(depth - 1)).collect()),
                _ => Type::object(
                    (0..self.next(4))
                        .map(|i| (format!("a{i}"), self.ty(depth - 1)))
                        .collect(),
                ),
            }
        }

        fn value(&mut self, ty: &Type, depth: u32) -> Value {
            match self.next(10) {
                0 => return Value::null(ty.clone()),
                1 => return Value::unknown(ty.clone()),
                _ => {}
            }
            match ty {
                Type::String => s(["", "x", "ünï", "a|b"][self.next(4) as usize]),
                Type::Number => {
                    num(["0", "-7", "0.5", "0.1", "1e40", "-2.25"][self.next(6) as usize])
                }
                Type::Bool => Value::bool(self.next(2) == 0),
                Type::Dynamic => {
                    let actual = self.ty(depth.min(2));
                    self.value(&actual, depth.saturating_sub(1))
                }
                Type::List(t) => Value::list(
                    (**t).clone(),
                    (0..self.next(3)).map(|_| self.value(t, depth)).collect(),
                ),
                Type::Set(t) => Value::set(
                    (**t).clone(),
                    (0..self.next(3)).map(|_| self.value(t, depth)).collect(),
                ),
                Type::Map(t) => Value::map(
                    (**t).clone(),
                    (0..self.next(3))
                        .map(|i| (format!("k{i}"), self.value(t, depth)))
                        .collect(),
                ),
                Type::Tuple(ts) => Value::tuple(ts.iter().map(|t| self.value(t, depth)).collect()),
                Type::Object { attributes, .. } => Value::object(
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

    /// A configuration converted to a schema type by cty's rules encodes
    /// at that type. Where the provider side once had rules of its own,
    /// go-cty's are kept: its messages, `"1"` and `"0"` as bools, extra
    /// attributes dropped by an object conversion.
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
        let given = Value::object(
            [
                ("flag".to_string(), Value::bool(true)),
                ("port".to_string(), s("8080")),
                ("on".to_string(), s("false")),
                (
                    "ids".to_string(),
                    Value::tuple(vec![s("a"), num("1"), s("a")]),
                ),
                (
                    "pair".to_string(),
                    Value::list(Type::String, vec![s("1"), s("2")]),
                ),
                (
                    "tags".to_string(),
                    Value::object([("n".to_string(), num("3"))].into()),
                ),
            ]
            .into(),
        );
        let got = convert(given, &t).unwrap();
        let want = Value::object(
            [
                ("flag".to_string(), s("true")),
                ("port".to_string(), num("8080")),
                ("on".to_string(), Value::bool(false)),
                (
                    "ids".to_string(),
                    Value::set(Type::String, vec![s("a"), s("1")]),
                ),
                ("pair".to_string(), Value::tuple(vec![s("1"), num("2")])),
                (
                    "tags".to_string(),
                    Value::map(Type::String, [("n".to_string(), s("3"))].into()),
                ),
                ("opt".to_string(), Value::null(Type::String)),
            ]
            .into(),
        );
        assert_eq!(got, want);
        // The value's type has no optional attributes; the schema's has.
        assert_eq!(got.ty(), t.without_optional());
        encode(&got, &t).unwrap();

        let err = |v: Value, t: Type| convert(v, &t).unwrap_err().to_string();
        assert_eq!(err(s("x"), Type::Number), "a number is required");
        assert_eq!(err(s("yes"), Type::Bool), "a bool is required");
        assert_eq!(convert(s("1"), &Type::Bool).unwrap(), Value::bool(true));
        assert_eq!(
            err(Value::list(Type::String, vec![]), Type::String),
            "string required"
        );
        let obj_t = ty(json!(["object", {"a": "string"}]));
        assert_eq!(
            err(Value::object(BTreeMap::new()), obj_t.clone()),
            "attribute \"a\" is required"
        );
        assert_eq!(
            err(
                Value::object([("a".to_string(), Value::list(Type::String, vec![]))].into()),
                obj_t.clone()
            ),
            "string required at .a"
        );
        let extra = Value::object([("a".to_string(), s("x")), ("b".to_string(), s("y"))].into());
        assert_eq!(
            convert(extra, &obj_t).unwrap(),
            Value::object([("a".to_string(), s("x"))].into())
        );
        let nested = ty(json!(["list", ["object", {"port": "number"}]]));
        let v = Value::tuple(vec![Value::object(
            [("port".to_string(), s("http"))].into(),
        )]);
        assert_eq!(err(v, nested), "a number is required at [0].port");
    }

    #[test]
    fn mismatches_name_the_path() {
        let t = ty(json!(["object", {"rules": ["list", ["object", {"port": "number"}]]}]));
        let v = Value::object(
            [(
                "rules".to_string(),
                Value::tuple(vec![Value::object(
                    [("port".to_string(), s("http"))].into(),
                )]),
            )]
            .into(),
        );
        let err = encode(&v, &t).unwrap_err().to_string();
        assert_eq!(
            err,
            "a tuple value cannot be a [\"list\",[\"object\",{\"port\":\"number\"}]] at .rules"
        );
        let v = Value::object(
            [(
                "rules".to_string(),
                Value::list(
                    Type::object([("port".to_string(), Type::String)].into()),
                    vec![Value::object([("port".to_string(), s("http"))].into())],
                ),
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
    #[test]
    fn nested_attribute_values_travel_by_their_implied_type() {
        use crate::provider::schema::{Attribute, DescriptionKind, NestedType, ObjectNesting};
        let leaf = |optional: bool| Attribute {
            ty: Type::String,
            nested_type: None,
            description: String::new(),
            description_kind: DescriptionKind::Plain,
            required: !optional,
            optional,
            computed: false,
            sensitive: false,
            deprecated: false,
            write_only: false,
        };
        let nested = NestedType {
            nesting: ObjectNesting::Set,
            attributes: [
                ("name".to_string(), leaf(false)),
                ("note".to_string(), leaf(true)),
            ]
            .into(),
        };
        let t = nested.implied_type();
        let object = |name: &str| {
            Value::object(
                [
                    ("name".to_string(), s(name)),
                    ("note".to_string(), Value::null(Type::String)),
                ]
                .into(),
            )
        };
        let value = Value::set(
            t.element().unwrap().without_optional(),
            vec![object("a"), object("b")],
        );
        // Optional attributes are still sent, as null: [{name:"a",note:nil},…].
        let bytes = round_trip(&value, &t);
        assert_eq!(&bytes[..3], &[0x92, 0x82, 0xa4]);
        assert_eq!(
            decode(&[0xc0], &t).unwrap(),
            Value::null(t.without_optional())
        );
    }
}
