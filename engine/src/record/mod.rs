//! The record store: per estate, one small JSON record per instance holding
//! only what cannot be read back from the live system: the import ID of an
//! object nothing in configuration names, arguments the provider cannot
//! read, and the provider's private data. Losing the store may cost one
//! reconverging apply, never an object.
//!
//! Beside the records, `root.outputs` keeps the root module's output
//! values as the last apply left them (a sensitive one only as a digest):
//! outputs live in no object, so a plan's "Changes to Outputs" compares
//! against them.

use crate::addr::ResourceInstanceAddr;
use crate::value::number::Number;
use crate::value::{Kind, Type, Value};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub mod local;
pub mod ssm;

/// One instance's record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub address: String,
    #[serde(rename = "type")]
    pub type_name: String,
    /// The provider configuration that manages it, when not the default
    /// one of its type (`aws.west`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The ID the object is imported by, when configuration cannot give it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The object's own `id`, when the ID it is imported by is another (an
    /// association's `subnet/rtb`): the provider reads it by this, as
    /// terraform refreshes from state, with no import's lookup first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// Arguments the provider cannot read back, as JSON.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub config_only: BTreeMap<String, serde_json::Value>,
    /// For an object nothing but its record finds, or one it knows by its
    /// own `id`: the arguments it was made with (none sensitive), in
    /// terraform's state JSON, so the provider can read it back as
    /// terraform refreshes from its state.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub args: BTreeMap<String, serde_json::Value>,
    /// The provider's private bytes, base64.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub private: String,
    /// Whether `config_only` holds a sensitive value (a password the API
    /// never returns, kept as terraform's state keeps it): the store then
    /// writes the record encrypted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secret: bool,
    /// Objects a create_before_destroy replacement of this instance left
    /// behind: the new object committed, the old one not yet destroyed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deposed: Vec<Deposed>,
}

/// An old object of an instance awaiting its destroy, as terraform keeps a
/// deposed object in its state: by a key unique within the instance.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deposed {
    /// Eight hex digits, as terraform writes a deposed key.
    pub key: String,
    /// The ID the old object is imported by.
    pub id: String,
}

impl Deposed {
    /// A new deposed object with a fresh random key.
    pub fn new(id: String) -> Deposed {
        let mut bytes = [0u8; 4];
        // The key only tells deposed objects of one instance apart; a
        // failed draw leaves zeros, still a valid key.
        let _ = aws_lc_rs::rand::fill(&mut bytes);
        let key = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Deposed { key, id }
    }
}

impl Record {
    /// The provider configuration that manages the object.
    pub fn provider_ref(&self) -> crate::config::ProviderRef {
        match self.provider.as_deref().map(|p| p.split_once('.')) {
            Some(Some((name, alias))) => crate::config::ProviderRef {
                name: name.to_string(),
                alias: Some(alias.to_string()),
            },
            Some(None) => crate::config::ProviderRef {
                name: self.provider.clone().unwrap_or_default(),
                alias: None,
            },
            None => crate::config::ProviderRef {
                name: crate::config::implied_provider(&self.type_name),
                alias: None,
            },
        }
    }

    /// Names the provider configuration `p` in the record, unless it is the
    /// default one of the record's type.
    pub fn with_provider(mut self, p: &crate::config::ProviderRef) -> Record {
        let implied = crate::config::implied_provider(&self.type_name);
        self.provider = match &p.alias {
            Some(a) => Some(format!("{}.{a}", p.name)),
            None if p.name != implied => Some(p.name.clone()),
            None => None,
        };
        self
    }

    /// Keeps the values `value` (an object of `block`) holds (non-null) of
    /// the arguments `names`, which the provider cannot read back, and
    /// marks the record secret when one of them is sensitive.
    pub fn keep<'n>(
        &mut self,
        names: impl IntoIterator<Item = &'n str>,
        block: &crate::provider::schema::Block,
        value: &Value,
    ) {
        for name in names {
            let Some(v) = value.get(name).filter(|v| !v.is_null()) else {
                continue;
            };
            if let Some(j) = to_json(v) {
                self.config_only.insert(name.to_string(), j);
                self.secret |=
                    v.has_sensitive() || block.attributes.get(name).is_some_and(|a| a.sensitive);
            }
        }
    }

    /// The arguments this record keeps because the provider cannot read
    /// them back, beside those `listed` (the catalogue's) names.
    pub fn config_only_with<'a>(record: Option<&'a Record>, listed: &[&'a str]) -> Vec<&'a str> {
        let mut names = listed.to_vec();
        for k in record.into_iter().flat_map(|r| r.config_only.keys()) {
            if !names.contains(&k.as_str()) {
                names.push(k);
            }
        }
        names
    }

    /// The record of an instance's live object: its import ID, what of it
    /// cannot be read back, the provider configuration that manages it,
    /// and for an object nothing but the record finds, or one imported by
    /// another ID than its own, its arguments.
    pub fn for_object(
        address: String,
        ident: &crate::bind::catalogue::Identity,
        provider: &crate::config::ProviderRef,
        block: &crate::provider::schema::Block,
        state: &crate::provider::ResourceState,
    ) -> Record {
        let mut r = Record {
            address,
            type_name: ident.type_name.clone(),
            id: ident.import_id(&state.value),
            ..Record::default()
        };
        r.keep(ident.config_only(), block, &state.value);
        r.set_private(&state.private);
        let r = r.with_provider(provider);
        let own = state.value.get("id").and_then(Value::as_str);
        let r = match own {
            Some(own) if r.id.as_deref() != Some(own) => Record {
                object: Some(own.to_string()),
                ..r
            },
            _ => r,
        };
        match ident.generated() || r.object.is_some() {
            true => r.with_args(block, &state.value),
            false => r,
        }
    }

    /// Keeps the object's non-sensitive arguments, for a provider read
    /// from the record alone.
    pub fn with_args(mut self, block: &crate::provider::schema::Block, state: &Value) -> Record {
        for (name, a) in &block.attributes {
            let Some(v) = state.get(name) else { continue };
            if (a.required || a.optional) && !a.sensitive && !v.is_null() && !v.has_sensitive() {
                self.args
                    .insert(name.clone(), crate::plan::json::value_json(v));
            }
        }
        self
    }

    /// The object as the record knows it, in the type's schema, for a
    /// provider read: its `id` and arguments, the rest null.
    pub fn prior(&self, block: &crate::provider::schema::Block) -> Value {
        let mut given = BTreeMap::new();
        for (name, j) in &self.args {
            let Some(a) = block.attributes.get(name) else {
                continue;
            };
            let ty = a.ty.without_optional();
            if let Ok(v) = crate::plan::json::value_from_json(
                j,
                &ty,
                &serde_json::Value::Null,
                &serde_json::Value::Null,
            ) {
                given.insert(name.clone(), v);
            }
        }
        let id = self.object.as_ref().or(self.id.as_ref());
        if let (Some(id), true) = (id, block.attributes.contains_key("id")) {
            given.insert("id".to_string(), Value::string(id.clone()));
        }
        block.value_with(given)
    }

    pub fn private_bytes(&self) -> Vec<u8> {
        base64::engine::general_purpose::STANDARD
            .decode(&self.private)
            .unwrap_or_default()
    }

    pub fn set_private(&mut self, bytes: &[u8]) {
        self.private = base64::engine::general_purpose::STANDARD.encode(bytes);
    }
}

/// Why the store could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("record {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("record {place} is corrupt ({reason}); {remedy}")]
    Corrupt {
        place: String,
        reason: String,
        remedy: &'static str,
    },
    #[error("the record store {place}: {reason}")]
    Live { place: String, reason: String },
}

/// The records of one estate: in the live system (the default), or in a
/// local folder.
pub struct RecordStore(Backend);

enum Backend {
    Local(local::LocalStore),
    Live(Box<ssm::LiveStore>),
}

impl RecordStore {
    /// The store in the folder `base/<estate>/` (created on first write).
    pub fn open(base: &Path, estate: &str) -> RecordStore {
        RecordStore(Backend::Local(local::LocalStore::open(base, estate)))
    }

    /// The store in the live system, as read once.
    pub fn live(store: ssm::LiveStore) -> RecordStore {
        RecordStore(Backend::Live(Box::new(store)))
    }

    /// Where the store is, as a person reads it.
    pub fn place(&self) -> String {
        match &self.0 {
            Backend::Local(s) => format!("the folder {}", s.dir().display()),
            Backend::Live(s) => s.place(),
        }
    }

    /// The record of `addr`, if there is one.
    pub fn get(&self, addr: &ResourceInstanceAddr) -> Result<Option<Record>, RecordError> {
        match &self.0 {
            Backend::Local(s) => s.get(addr),
            Backend::Live(s) => s.get(addr),
        }
    }

    /// Every record, sorted by address.
    pub fn all(&self) -> Result<Vec<Record>, RecordError> {
        match &self.0 {
            Backend::Local(s) => s.all(),
            Backend::Live(s) => s.all(),
        }
    }

    /// The root module's outputs as the last apply left them.
    pub fn outputs(&self) -> Result<BTreeMap<String, OutputRecord>, RecordError> {
        match &self.0 {
            Backend::Local(s) => s.outputs(),
            Backend::Live(s) => s.outputs(),
        }
    }

    /// Writes a record durably.
    pub async fn put(&self, record: &Record) -> Result<(), RecordError> {
        match &self.0 {
            Backend::Local(s) => s.put(record),
            Backend::Live(s) => s.put(record).await,
        }
    }

    /// Removes the record of `addr`, if any.
    pub async fn remove(&self, addr: &str) -> Result<(), RecordError> {
        match &self.0 {
            Backend::Local(s) => s.remove(addr),
            Backend::Live(s) => s.remove(addr).await,
        }
    }

    /// Keeps `outputs` as the root module's outputs; none removes them.
    pub async fn put_outputs(
        &self,
        outputs: &BTreeMap<String, OutputRecord>,
    ) -> Result<(), RecordError> {
        match &self.0 {
            Backend::Local(s) => s.put_outputs(outputs),
            Backend::Live(s) => s.put_outputs(outputs).await,
        }
    }
}

/// One root output as an apply left it, in the shape of a terraform state
/// file's outputs: its type and value (cty's JSON), whether it is
/// sensitive, and a digest of both. A sensitive output keeps only its type
/// and digest: no secret is written to the store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputRecord {
    #[serde(rename = "type")]
    pub type_json: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sensitive: bool,
    /// SHA-256 over the type and the value.
    pub digest: String,
}

impl OutputRecord {
    /// The record of a known output value.
    pub fn of(v: &Value, sensitive: bool) -> OutputRecord {
        let ty = v.ty().to_json();
        let value = crate::plan::json::value_json(v);
        OutputRecord::from_parts(ty, value, sensitive)
    }

    /// The record of a value in cty's JSON, as a state file holds it.
    pub fn from_parts(
        type_json: serde_json::Value,
        value: serde_json::Value,
        sensitive: bool,
    ) -> OutputRecord {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(type_json.to_string().as_bytes());
        h.update(b"\n");
        h.update(value.to_string().as_bytes());
        OutputRecord {
            digest: format!("{:x}", h.finalize()),
            type_json,
            value: (!sensitive).then_some(value),
            sensitive,
        }
    }

    /// The value, as far as the record keeps it. A sensitive one reads as
    /// its digest, marked sensitive: what it was is never printed, only
    /// that it is something other than nothing.
    pub fn value(&self) -> Value {
        if self.sensitive {
            return Value::string(format!("sha256:{}", self.digest)).with_sensitive(true);
        }
        let ty = Type::from_json(&self.type_json).unwrap_or(Type::Dynamic);
        let none = serde_json::Value::Null;
        self.value
            .as_ref()
            .and_then(|j| crate::plan::json::value_from_json(j, &ty, &none, &none).ok())
            .unwrap_or_else(|| Value::null(ty))
    }
}

/// A known value of a primitive type as JSON, for `config_only`.
pub fn to_json(v: &Value) -> Option<serde_json::Value> {
    match &v.kind {
        Kind::String(s) => Some(serde_json::Value::String(s.clone())),
        Kind::Bool(b) => Some(serde_json::Value::Bool(*b)),
        Kind::Number(n) => serde_json::from_str(&n.to_string_shortest()).ok(),
        _ => None,
    }
}

/// Back from JSON to a value of `ty`.
pub fn from_json(j: &serde_json::Value, ty: &Type) -> Option<Value> {
    match (j, ty) {
        (serde_json::Value::String(s), Type::String) => Some(Value::string(s.clone())),
        (serde_json::Value::Bool(b), Type::Bool) => Some(Value::bool(*b)),
        (serde_json::Value::Number(n), Type::Number) => {
            Number::parse(&n.to_string()).map(Value::number)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_round_trip_and_a_sensitive_one_keeps_only_its_digest() {
        let dir = tempfile::tempdir().unwrap();
        let store = local::LocalStore::open(dir.path(), "pay");
        assert!(store.outputs().unwrap().is_empty());
        let url = Value::string("http://q".to_string());
        let secret = Value::string("hunter2".to_string());
        let outputs: BTreeMap<String, OutputRecord> = [
            ("url".to_string(), OutputRecord::of(&url, false)),
            ("secret".to_string(), OutputRecord::of(&secret, true)),
        ]
        .into();
        store.put_outputs(&outputs).unwrap();
        let back = store.outputs().unwrap();
        assert_eq!(back, outputs);
        assert_eq!(back["url"].value(), url);
        let kept = back["secret"].value();
        assert!(kept.has_sensitive() && kept.as_str().unwrap().starts_with("sha256:"));
        let text = std::fs::read_to_string(dir.path().join("pay/root.outputs")).unwrap();
        assert!(!text.contains("hunter2"), "{text}");
        // The same value digests the same; another value does not.
        assert_eq!(
            OutputRecord::of(&secret, true).digest,
            back["secret"].digest
        );
        assert_ne!(OutputRecord::of(&url, true).digest, back["secret"].digest);
        // Records are not outputs, and outputs are not records.
        assert!(store.all().unwrap().is_empty());
        store.put_outputs(&BTreeMap::new()).unwrap();
        assert!(!dir.path().join("pay/root.outputs").exists());
        std::fs::write(dir.path().join("pay/root.outputs"), "{").unwrap();
        let e = store.outputs().unwrap_err().to_string();
        assert!(e.contains("root.outputs is corrupt"), "{e}");
    }

    #[test]
    fn records_round_trip_and_corruption_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = local::LocalStore::open(dir.path(), "pay");
        let addr: ResourceInstanceAddr = "aws_ssm_parameter.shard[1]".parse().unwrap();
        assert_eq!(store.get(&addr).unwrap(), None);
        let mut r = Record {
            address: addr.to_string(),
            type_name: "aws_ssm_parameter".into(),
            ..Record::default()
        };
        r.config_only
            .insert("overwrite".into(), serde_json::Value::Bool(true));
        r.set_private(b"\x00\x01");
        r.deposed.push(Deposed::new("/old/name".into()));
        assert_eq!(r.deposed[0].key.len(), 8);
        store.put(&r).unwrap();
        assert_eq!(store.get(&addr).unwrap().unwrap(), r);
        assert_eq!(store.all().unwrap().len(), 1);
        let file = std::fs::read_dir(store.dir())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        std::fs::write(&file, "{not json").unwrap();
        let e = store.get(&addr).unwrap_err().to_string();
        assert!(
            e.contains(&file.display().to_string()) && e.contains("corrupt"),
            "{e}"
        );
        store.remove(&addr.to_string()).unwrap();
        assert_eq!(store.get(&addr).unwrap(), None);
    }
}
