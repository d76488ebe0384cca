//! cty's JSON notation for types (`"string"`, `["list","number"]`,
//! `["object",{"a":"bool"},["a"]]`), as providers declare attribute types
//! and as a dynamic value's type travels in msgpack: [`Type::from_json`],
//! [`Type::to_json`], and serde in the same notation.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as Json;

use super::Type;

/// Why a JSON text is not a type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid type {json}: {reason}")]
pub struct TypeError {
    json: String,
    reason: &'static str,
}

impl Type {
    /// Reads a type from its JSON notation.
    pub fn from_json(json: &Json) -> Result<Type, TypeError> {
        let error = |reason| TypeError {
            json: json.to_string(),
            reason,
        };
        match json {
            Json::String(name) => match name.as_str() {
                "string" => Ok(Type::String),
                "number" => Ok(Type::Number),
                "bool" => Ok(Type::Bool),
                "dynamic" => Ok(Type::Dynamic),
                _ => Err(error("unknown primitive type")),
            },
            Json::Array(parts) => {
                let kind = parts
                    .first()
                    .and_then(Json::as_str)
                    .ok_or_else(|| error("a complex type starts with its kind"))?;
                match (kind, &parts[1..]) {
                    ("list", [element]) => Ok(Type::List(Box::new(Type::from_json(element)?))),
                    ("set", [element]) => Ok(Type::Set(Box::new(Type::from_json(element)?))),
                    ("map", [element]) => Ok(Type::Map(Box::new(Type::from_json(element)?))),
                    ("tuple", [Json::Array(elements)]) => Ok(Type::Tuple(
                        elements
                            .iter()
                            .map(Type::from_json)
                            .collect::<Result<_, _>>()?,
                    )),
                    ("object", [Json::Object(attrs), rest @ ..]) if rest.len() <= 1 => {
                        let attributes = attrs
                            .iter()
                            .map(|(k, v)| Ok((k.clone(), Type::from_json(v)?)))
                            .collect::<Result<BTreeMap<_, _>, TypeError>>()?;
                        let mut optional = BTreeSet::new();
                        if let Some(names) = rest.first() {
                            let names = names
                                .as_array()
                                .ok_or_else(|| error("optional attributes must be a list"))?;
                            for name in names {
                                let name = name
                                    .as_str()
                                    .filter(|n| attributes.contains_key(*n))
                                    .ok_or_else(|| error("optional attribute is not declared"))?;
                                optional.insert(name.to_string());
                            }
                        }
                        Ok(Type::Object {
                            attributes,
                            optional,
                        })
                    }
                    _ => Err(error("malformed complex type")),
                }
            }
            _ => Err(error("a type is a string or an array")),
        }
    }

    /// Reads a type from JSON bytes, as the plugin protocol carries them.
    pub fn from_json_bytes(bytes: &[u8]) -> Result<Type, TypeError> {
        let json: Json = serde_json::from_slice(bytes).map_err(|_| TypeError {
            json: String::from_utf8_lossy(bytes).into_owned(),
            reason: "not JSON",
        })?;
        Type::from_json(&json)
    }

    /// The type's JSON notation, as cty writes it: object attributes in
    /// name order, and the optional-attribute list only when non-empty.
    pub fn to_json(&self) -> Json {
        match self {
            Type::String => Json::from("string"),
            Type::Number => Json::from("number"),
            Type::Bool => Json::from("bool"),
            Type::Dynamic => Json::from("dynamic"),
            Type::List(t) => Json::Array(vec!["list".into(), t.to_json()]),
            Type::Set(t) => Json::Array(vec!["set".into(), t.to_json()]),
            Type::Map(t) => Json::Array(vec!["map".into(), t.to_json()]),
            Type::Tuple(ts) => Json::Array(vec![
                "tuple".into(),
                Json::Array(ts.iter().map(Type::to_json).collect()),
            ]),
            Type::Object {
                attributes,
                optional,
            } => {
                let attrs = attributes
                    .iter()
                    .map(|(k, t)| (k.clone(), t.to_json()))
                    .collect();
                let mut parts = vec!["object".into(), Json::Object(attrs)];
                if !optional.is_empty() {
                    parts.push(optional.iter().map(|s| Json::from(s.as_str())).collect());
                }
                Json::Array(parts)
            }
        }
    }
}

/// Serializes as the JSON notation, directly (as [`Type::to_json`] would
/// build it).
impl serde::Serialize for Type {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let (kind, len) = match self {
            Type::String => return s.serialize_str("string"),
            Type::Number => return s.serialize_str("number"),
            Type::Bool => return s.serialize_str("bool"),
            Type::Dynamic => return s.serialize_str("dynamic"),
            Type::List(_) => ("list", 2),
            Type::Set(_) => ("set", 2),
            Type::Map(_) => ("map", 2),
            Type::Tuple(_) => ("tuple", 2),
            Type::Object { optional, .. } => ("object", if optional.is_empty() { 2 } else { 3 }),
        };
        let mut seq = s.serialize_seq(Some(len))?;
        seq.serialize_element(kind)?;
        match self {
            Type::List(t) | Type::Set(t) | Type::Map(t) => seq.serialize_element(t.as_ref())?,
            Type::Tuple(ts) => seq.serialize_element(ts)?,
            Type::Object {
                attributes,
                optional,
            } => {
                seq.serialize_element(attributes)?;
                if !optional.is_empty() {
                    seq.serialize_element(optional)?;
                }
            }
            _ => {}
        }
        seq.end()
    }
}

impl<'de> serde::Deserialize<'de> for Type {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let json = Json::deserialize(deserializer)?;
        Type::from_json(&json).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trips_every_shape() {
        let cases = [
            json!("string"),
            json!("number"),
            json!("bool"),
            json!("dynamic"),
            json!(["list", "string"]),
            json!(["set", ["map", "number"]]),
            json!(["tuple", ["string", ["list", "bool"], "dynamic"]]),
            json!(["tuple", []]),
            json!(["object", {}]),
            json!(["object", {"a": "string", "b": ["set", "string"]}]),
            json!(["object", {"a": "string", "b": "number"}, ["b"]]),
        ];
        for case in cases {
            let ty = Type::from_json(&case).unwrap();
            assert_eq!(ty.to_json(), case, "{case}");
            assert_eq!(serde_json::to_value(&ty).unwrap(), case);
            let bytes = serde_json::to_vec(&ty).unwrap();
            assert_eq!(Type::from_json_bytes(&bytes).unwrap(), ty);
        }
    }

    #[test]
    fn empty_optional_list_is_dropped() {
        let ty = Type::from_json(&json!(["object", {"a": "bool"}, []])).unwrap();
        assert_eq!(ty.to_json(), json!(["object", {"a": "bool"}]));
    }

    #[test]
    fn refusals() {
        for bad in [
            json!("text"),
            json!(1),
            json!([]),
            json!(["list"]),
            json!(["list", "string", "string"]),
            json!(["object", ["a"]]),
            json!(["object", {"a": "bool"}, ["b"]]),
            json!(["tuple", "string"]),
            json!(["map", "nope"]),
        ] {
            assert!(Type::from_json(&bad).is_err(), "{bad}");
        }
        assert!(Type::from_json_bytes(b"not json").is_err());
    }
}
