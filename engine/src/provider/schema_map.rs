//! Schemas by type name, decoded when first asked for.
//!
//! The aws provider declares over two thousand resource and data source
//! types; a plan uses a handful. A map filled from the provider holds every
//! schema decoded; a map read from the schema cache ([`super::cache`])
//! holds each schema as its stored bytes and decodes one on its first
//! lookup, so a run pays for the types it reads and not for the others
//! (about a second of CPU and 250 MB a run for the aws provider).

use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Index, Range};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::schema::Schema;

/// Schemas by type name.
#[derive(Clone, Default)]
pub struct SchemaMap {
    entries: BTreeMap<String, Entry>,
}

#[derive(Clone)]
enum Entry {
    Decoded(Schema),
    /// `bytes[range]` is the schema as [`SchemaMap::encode`] wrote it.
    Encoded {
        bytes: Arc<[u8]>,
        range: Range<usize>,
        decoded: OnceLock<Schema>,
    },
}

impl Entry {
    fn schema(&self) -> &Schema {
        match self {
            Entry::Decoded(schema) => schema,
            Entry::Encoded {
                bytes,
                range,
                decoded,
            } => decoded.get_or_init(|| {
                // The cache checks the bytes' digest before it builds a
                // map of them, and its format version names this type's
                // encoding: bytes that do not decode are a defect here.
                serde_json::from_slice(&bytes[range.clone()])
                    .expect("a schema the cache verified decodes")
            }),
        }
    }
}

impl SchemaMap {
    /// The map over `bytes`, holding each `(name, range)` of `index`
    /// undecoded; `None` when a range falls outside `bytes`.
    pub(super) fn encoded(
        bytes: Arc<[u8]>,
        index: BTreeMap<String, Range<usize>>,
    ) -> Option<SchemaMap> {
        let entries = index
            .into_iter()
            .map(|(name, range)| {
                let fits = range.start <= range.end && range.end <= bytes.len();
                fits.then(|| {
                    let entry = Entry::Encoded {
                        bytes: Arc::clone(&bytes),
                        range,
                        decoded: OnceLock::new(),
                    };
                    (name, entry)
                })
            })
            .collect::<Option<_>>()?;
        Some(SchemaMap { entries })
    }

    /// Appends each schema's encoding to `out` (as stored, without
    /// decoding one that was never read) and returns where each went.
    pub(super) fn encode(
        &self,
        out: &mut Vec<u8>,
    ) -> serde_json::Result<BTreeMap<String, Range<usize>>> {
        let mut index = BTreeMap::new();
        for (name, entry) in &self.entries {
            let start = out.len();
            match entry {
                Entry::Encoded {
                    bytes,
                    range,
                    decoded,
                } if decoded.get().is_none() => out.extend_from_slice(&bytes[range.clone()]),
                _ => serde_json::to_writer(&mut *out, entry.schema())?,
            }
            index.insert(name.clone(), start..out.len());
        }
        Ok(index)
    }

    pub fn get(&self, name: &str) -> Option<&Schema> {
        self.entries.get(name).map(Entry::schema)
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> + Clone {
        self.entries.keys()
    }

    /// Every schema, in name order; decodes each.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Schema)> + Clone {
        self.entries.iter().map(|(name, e)| (name, e.schema()))
    }

    /// Every schema, in name order; decodes each.
    pub fn values(&self) -> impl Iterator<Item = &Schema> + Clone {
        self.entries.values().map(Entry::schema)
    }

    pub fn insert(&mut self, name: String, schema: Schema) {
        self.entries.insert(name, Entry::Decoded(schema));
    }
}

impl Index<&str> for SchemaMap {
    type Output = Schema;

    fn index(&self, name: &str) -> &Schema {
        self.get(name)
            .unwrap_or_else(|| panic!("no schema for {name}"))
    }
}

impl FromIterator<(String, Schema)> for SchemaMap {
    fn from_iter<I: IntoIterator<Item = (String, Schema)>>(iter: I) -> Self {
        SchemaMap {
            entries: iter
                .into_iter()
                .map(|(name, schema)| (name, Entry::Decoded(schema)))
                .collect(),
        }
    }
}

impl<const N: usize> From<[(String, Schema); N]> for SchemaMap {
    fn from(schemas: [(String, Schema); N]) -> Self {
        schemas.into_iter().collect()
    }
}

impl<'a> IntoIterator for &'a SchemaMap {
    type Item = (&'a String, &'a Schema);
    type IntoIter = Box<dyn Iterator<Item = (&'a String, &'a Schema)> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

/// As a plain map of name to schema (test fixtures keep schemas so).
impl Serialize for SchemaMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for SchemaMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = BTreeMap::<String, Schema>::deserialize(d)?;
        Ok(map.into_iter().collect())
    }
}

impl PartialEq for SchemaMap {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl fmt::Debug for SchemaMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::schema::Block;

    fn schema(version: i64) -> Schema {
        Schema {
            version,
            block: Block::default(),
        }
    }

    #[test]
    fn an_encoded_map_decodes_what_is_read_and_reencodes_the_rest_as_stored() {
        let whole: SchemaMap = [("a".to_string(), schema(1)), ("b".to_string(), schema(2))].into();
        let mut bytes = b"header".to_vec();
        let index = whole.encode(&mut bytes).unwrap();
        let read = SchemaMap::encoded(bytes.clone().into(), index.clone()).unwrap();
        assert_eq!(read.get("b").map(|s| s.version), Some(2));
        assert!(read.get("c").is_none());
        assert_eq!(read, whole);

        let mut again = b"header".to_vec();
        assert_eq!(read.encode(&mut again).unwrap(), index);
        assert_eq!(again, bytes);
    }

    #[test]
    fn a_range_outside_the_bytes_is_refused() {
        let index = BTreeMap::from([("a".to_string(), 0..10)]);
        assert!(SchemaMap::encoded(Arc::from(&b"{}"[..]), index).is_none());
    }
}
