//! Markers: the `tofu-estate` and `tofu-address` tags that make an object
//! findable from the live system alone, written in the same call that
//! creates the object.

use crate::value::{Kind, Type, Value};
use std::collections::BTreeMap;

pub const ESTATE_TAG: &str = "tofu-estate";
pub const ADDRESS_TAG: &str = "tofu-address";

/// Who an object's markers say owns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// No estate marker.
    Nobody,
    /// An estate marker, with the address marker if present.
    Estate {
        estate: String,
        address: Option<String>,
    },
}

/// Reads the markers from an object's `tags` (or `tags_all`).
pub fn owner(object: &Value) -> Owner {
    let tag = |key: &str| -> Option<String> {
        for attr in ["tags_all", "tags"] {
            if let Some(v) = object
                .get(attr)
                .and_then(|t| t.get(key))
                .and_then(|v| v.as_str())
            {
                return Some(v.to_string());
            }
        }
        None
    };
    match tag(ESTATE_TAG) {
        Some(estate) => Owner::Estate {
            estate,
            address: tag(ADDRESS_TAG),
        },
        None => Owner::Nobody,
    }
}

/// The configuration with the markers merged into its `tags` (a block's
/// own tags win for any other key; the markers win for theirs).
pub fn with_markers(config: Value, estate: &str, address: &str) -> Value {
    let sensitive = config.sensitive;
    let Kind::Object(mut attrs) = config.kind else {
        return config;
    };
    let mut tags: BTreeMap<String, Value> = match attrs.remove("tags").map(|t| t.kind) {
        Some(Kind::Map(_, m)) | Some(Kind::Object(m)) => m,
        Some(Kind::Unknown(t)) => {
            // Unknown tags stay unknown; the provider learns them at apply.
            attrs.insert("tags".into(), Value::unknown(t));
            return Value::object(attrs).with_sensitive(sensitive);
        }
        _ => BTreeMap::new(),
    };
    tags.insert(ESTATE_TAG.into(), Value::string(estate));
    tags.insert(ADDRESS_TAG.into(), Value::string(address));
    attrs.insert("tags".into(), Value::map(Type::String, tags));
    Value::object(attrs).with_sensitive(sensitive)
}

/// The value with the marker keys taken out of `tags` and `tags_all`, as
/// a person compares objects (empty maps become null when the
/// configuration had no tags).
pub fn without_markers(v: &Value) -> Value {
    let Kind::Object(attrs) = &v.kind else {
        return v.clone();
    };
    let mut out = attrs.clone();
    for attr in ["tags", "tags_all"] {
        if let Some(Value {
            kind: Kind::Map(t, m),
            sensitive,
        }) = out.get(attr).cloned()
        {
            let mut m = m;
            m.remove(ESTATE_TAG);
            m.remove(ADDRESS_TAG);
            out.insert(attr.to_string(), Value::map(t, m).with_sensitive(sensitive));
        }
    }
    Value::object(out).with_sensitive(v.sensitive)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_merge_into_tags_and_read_back() {
        let config = Value::object(BTreeMap::from([
            ("name".to_string(), Value::string("q")),
            (
                "tags".to_string(),
                Value::map(
                    Type::String,
                    BTreeMap::from([("app".to_string(), Value::string("x"))]),
                ),
            ),
        ]));
        let marked = with_markers(config, "pay", "aws_sqs_queue.q");
        assert_eq!(
            owner(&marked),
            Owner::Estate {
                estate: "pay".into(),
                address: Some("aws_sqs_queue.q".into())
            }
        );
        assert_eq!(
            marked.get("tags").unwrap().get("app").unwrap().as_str(),
            Some("x")
        );
        let plain = without_markers(&marked);
        assert_eq!(owner(&plain), Owner::Nobody);
        let untagged = Value::object(BTreeMap::from([(
            "tags".to_string(),
            Value::null(Type::map(Type::String)),
        )]));
        assert_eq!(
            owner(&with_markers(untagged, "e", "a.b")),
            Owner::Estate {
                estate: "e".into(),
                address: Some("a.b".into())
            }
        );
    }
}
