//! The record store in the live system: SSM parameters of the estate's
//! account and region (the root's default aws provider configuration),
//! beside the estate lock, so any machine with the credentials plans from
//! what any other machine applied.
//!
//! Layout, under `/choudoufu/records/<estate>/`:
//!
//! - `<key>`: one instance's record, where `<key>` is the first 32 hex
//!   digits of the SHA-256 of its address (so any address, however long
//!   its keys, has a name SSM accepts); the value is the record's JSON,
//!   which names the address.
//! - `root.outputs`: the root outputs the last whole apply left.
//! - A value over [`CHUNK`] bytes (a standard parameter holds 4 KB) is
//!   split: the head's value is `choudoufu-parts <gen> <count>` and a
//!   line, then the first chunk; `<head>-<gen>-<i>` hold the others. Parts
//!   are written before the head, under a fresh `<gen>`, so a crash
//!   between them leaves the old record whole; parts no head names are
//!   ignored, and removed by the next write of that head.
//!
//! One read per command takes the whole store: the provider's
//! `aws_ssm_parameters_by_path` data source, which pages through
//! GetParametersByPath (ten parameters a request). Every write goes through
//! the provider's `aws_ssm_parameter` resource as the change it records
//! commits, so the store uses exactly the credentials and endpoints the
//! root configures. Parameters are standard tier, type String, but for a
//! record holding a sensitive value (a password the API never returns):
//! SecureString, under the account's default key for SSM. Outputs keep only
//! a digest of a sensitive value.

use super::{OutputRecord, Record, RecordError};
use crate::addr::ResourceInstanceAddr;
use crate::provider::grpc::GrpcProvider;
use crate::provider::proposed::proposed_new;
use crate::provider::schema::Schema;
use crate::provider::{Provider, ResourceState};
use crate::value::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

/// Where every estate's records live.
pub const PREFIX: &str = "/choudoufu/records";
/// The bytes a parameter's value carries at most here (SSM's standard
/// tier allows 4096).
pub const CHUNK: usize = 4000;
const OUTPUTS: &str = "root.outputs";
const HEADER: &str = "choudoufu-parts ";
const TYPE: &str = "aws_ssm_parameter";
const BY_PATH: &str = "aws_ssm_parameters_by_path";

/// The path of an estate's records.
pub fn path(estate: &str) -> String {
    format!("{PREFIX}/{estate}")
}

/// Where an estate's records are, as a person reads it.
pub fn place(estate: &str) -> String {
    format!("SSM parameters under {}", path(estate))
}

/// The parameter name, under the estate's path, of an address's record.
pub fn key(address: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(address.as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// The parameters that hold `text` under the name `head`: the head first,
/// then its parts.
pub fn encode(head: &str, text: &str, gen: &str) -> Vec<(String, String)> {
    if text.len() <= CHUNK {
        return vec![(head.to_string(), text.to_string())];
    }
    let mut chunks = Vec::new();
    let mut rest = text;
    // Room for the head's first line in its chunk.
    let mut room = CHUNK - HEADER.len() - 32;
    while !rest.is_empty() {
        let mut cut = room.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        chunks.push(&rest[..cut]);
        rest = &rest[cut..];
        room = CHUNK;
    }
    let mut out = vec![(
        head.to_string(),
        format!("{HEADER}{gen} {}\n{}", chunks.len(), chunks[0]),
    )];
    for (i, c) in chunks.iter().enumerate().skip(1) {
        out.push((format!("{head}-{gen}-{}", i + 1), c.to_string()));
    }
    out
}

/// What the store held when it was read, by name relative to the
/// estate's path.
#[derive(Debug, Default, Clone)]
pub struct Snapshot {
    /// Records by key; a value that does not read as a record, its reason.
    records: BTreeMap<String, Result<Record, String>>,
    outputs: Option<Result<BTreeMap<String, OutputRecord>, String>>,
    /// Every part parameter present, whether or not a head names it.
    parts: BTreeSet<String>,
}

impl Snapshot {
    /// The store's parameters (name relative to the path, value) read
    /// back into records.
    pub fn decode(params: &BTreeMap<String, String>) -> Snapshot {
        let mut s = Snapshot::default();
        for (name, value) in params {
            if name.contains('-') {
                s.parts.insert(name.clone());
                continue;
            }
            let text = join(name, value, params);
            if name == OUTPUTS {
                s.outputs = Some(text.and_then(|t| {
                    serde_json::from_str(&t).map_err(|e| format!("it is not outputs: {e}"))
                }));
                continue;
            }
            if name.len() != 32 || !name.bytes().all(|b| b.is_ascii_hexdigit()) {
                continue;
            }
            let record = text.and_then(|t| {
                let r: Record =
                    serde_json::from_str(&t).map_err(|e| format!("it is not a record: {e}"))?;
                match key(&r.address) == *name {
                    true => Ok(r),
                    false => Err(format!(
                        "it names {}, whose record has another name",
                        r.address
                    )),
                }
            });
            s.records.insert(name.clone(), record);
        }
        s
    }
}

impl Snapshot {
    /// The records that read back whole, by address.
    pub fn records(&self) -> Vec<Record> {
        let mut out: Vec<Record> = self
            .records
            .values()
            .filter_map(|r| r.as_ref().ok().cloned())
            .collect();
        out.sort_by(|a, b| a.address.cmp(&b.address));
        out
    }

    /// The outputs, if the store holds them and they read back.
    pub fn outputs(&self) -> Option<&BTreeMap<String, OutputRecord>> {
        self.outputs.as_ref().and_then(|o| o.as_ref().ok())
    }
}

/// A head's whole text, its parts joined.
fn join(name: &str, value: &str, params: &BTreeMap<String, String>) -> Result<String, String> {
    let Some(rest) = value.strip_prefix(HEADER) else {
        return Ok(value.to_string());
    };
    let (line, first) = rest.split_once('\n').unwrap_or((rest, ""));
    let mut words = line.split(' ');
    let (Some(gen), Some(Ok(count)), None) = (
        words.next(),
        words.next().map(str::parse::<usize>),
        words.next(),
    ) else {
        return Err(format!("its first line {line:?} names no parts"));
    };
    let mut text = first.to_string();
    for i in 2..=count {
        let part = format!("{name}-{gen}-{i}");
        match params.get(&part) {
            Some(v) => text.push_str(v),
            None => return Err(format!("its part {part} is missing")),
        }
    }
    Ok(text)
}

/// The store of one estate in SSM parameters.
pub struct LiveStore {
    provider: GrpcProvider,
    schema: Arc<Schema>,
    estate: String,
    path: String,
    snapshot: Mutex<Snapshot>,
}

impl LiveStore {
    /// Reads the estate's whole store through `provider` (configured).
    pub async fn open(provider: &GrpcProvider, estate: &str) -> Result<LiveStore, RecordError> {
        let path = path(estate);
        let missing = || RecordError::Live {
            place: path.clone(),
            reason: format!("the aws provider has no {TYPE} resource or {BY_PATH} data source"),
        };
        let schemas = provider.cached_schema().ok_or_else(missing)?;
        let schema = schemas.resources.get(TYPE).cloned().ok_or_else(missing)?;
        let by_path = schemas.data_sources.get(BY_PATH).ok_or_else(missing)?;
        let params = read_path(provider, by_path, &path, true)
            .await
            .map_err(|e| RecordError::Live {
                place: path.clone(),
                reason: format!("it could not be read: {e}"),
            })?;
        Ok(LiveStore {
            provider: provider.clone(),
            schema: Arc::new(schema),
            estate: estate.to_string(),
            path,
            snapshot: Mutex::new(Snapshot::decode(&params)),
        })
    }

    /// Where the store is, as a person reads it.
    pub fn place(&self) -> String {
        place(&self.estate)
    }

    fn corrupt(&self, name: &str, reason: &str) -> RecordError {
        RecordError::Corrupt {
            place: format!("{}/{name}", self.path),
            reason: reason.to_string(),
            remedy: "delete the parameter to plan without it",
        }
    }

    fn snapshot(&self) -> std::sync::MutexGuard<'_, Snapshot> {
        self.snapshot.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn get(&self, addr: &ResourceInstanceAddr) -> Result<Option<Record>, RecordError> {
        let name = key(&addr.to_string());
        match self.snapshot().records.get(&name) {
            None => Ok(None),
            Some(Ok(r)) => Ok(Some(r.clone())),
            Some(Err(reason)) => Err(self.corrupt(&name, reason)),
        }
    }

    pub fn all(&self) -> Result<Vec<Record>, RecordError> {
        let mut out = Vec::new();
        for (name, r) in &self.snapshot().records {
            match r {
                Ok(r) => out.push(r.clone()),
                Err(reason) => return Err(self.corrupt(name, reason)),
            }
        }
        out.sort_by(|a, b| a.address.cmp(&b.address));
        Ok(out)
    }

    pub fn outputs(&self) -> Result<BTreeMap<String, OutputRecord>, RecordError> {
        match &self.snapshot().outputs {
            None => Ok(BTreeMap::new()),
            Some(Ok(o)) => Ok(o.clone()),
            Some(Err(reason)) => Err(self.corrupt(OUTPUTS, reason)),
        }
    }

    /// Takes the records and outputs an earlier version left in a local
    /// folder that the live store does not hold: written to it when the
    /// command may `write`, else only read beside it. Returns how many.
    pub async fn take_earlier(
        &self,
        earlier: &super::local::LocalStore,
        write: bool,
    ) -> Result<usize, RecordError> {
        let mut taken = 0;
        for r in earlier.all()? {
            if self.snapshot().records.contains_key(&key(&r.address)) {
                continue;
            }
            taken += 1;
            match write {
                true => self.put(&r).await?,
                false => {
                    self.snapshot().records.insert(key(&r.address), Ok(r));
                }
            }
        }
        let outputs = earlier.outputs()?;
        if !outputs.is_empty() && self.snapshot().outputs.is_none() {
            match write {
                true => self.put_outputs(&outputs).await?,
                false => self.snapshot().outputs = Some(Ok(outputs)),
            }
        }
        Ok(taken)
    }

    /// Writes a record, unless the store already holds exactly it.
    pub async fn put(&self, record: &Record) -> Result<(), RecordError> {
        let name = key(&record.address);
        if matches!(self.snapshot().records.get(&name), Some(Ok(r)) if r == record) {
            return Ok(());
        }
        let text = serde_json::to_string(record).expect("records serialize");
        let kind = match record.secret {
            true => ParamType::SecureString,
            false => ParamType::String,
        };
        self.write(&name, &text, kind).await?;
        self.snapshot().records.insert(name, Ok(record.clone()));
        Ok(())
    }

    pub async fn remove(&self, address: &str) -> Result<(), RecordError> {
        let name = key(address);
        if self.snapshot().records.contains_key(&name) {
            self.delete(&name).await?;
        }
        self.clear_parts(&name, &[]).await?;
        self.snapshot().records.remove(&name);
        Ok(())
    }

    pub async fn put_outputs(
        &self,
        outputs: &BTreeMap<String, OutputRecord>,
    ) -> Result<(), RecordError> {
        let held = self.snapshot().outputs.clone();
        match (outputs.is_empty(), held) {
            (true, None) => return Ok(()),
            (false, Some(Ok(o))) if &o == outputs => return Ok(()),
            (true, Some(_)) => {
                self.delete(OUTPUTS).await?;
                self.clear_parts(OUTPUTS, &[]).await?;
                self.snapshot().outputs = None;
                return Ok(());
            }
            _ => {}
        }
        let text = serde_json::to_string(outputs).expect("outputs serialize");
        self.write(OUTPUTS, &text, ParamType::String).await?;
        self.snapshot().outputs = Some(Ok(outputs.clone()));
        Ok(())
    }

    /// Writes `text` as the head `name` and its parts: the parts first,
    /// the head last (its write commits the new text), then the old parts
    /// go.
    async fn write(&self, name: &str, text: &str, kind: ParamType) -> Result<(), RecordError> {
        let mut gen = [0u8; 4];
        // The generation only tells one write's parts from another's.
        let _ = aws_lc_rs::rand::fill(&mut gen);
        let gen: String = gen.iter().map(|b| format!("{b:02x}")).collect();
        let params = encode(name, text, &gen);
        for (part, value) in params.iter().skip(1) {
            self.put_param(part, value, kind).await?;
        }
        let (head, value) = &params[0];
        self.put_param(head, value, kind).await?;
        let kept: Vec<&str> = params.iter().skip(1).map(|(p, _)| p.as_str()).collect();
        self.snapshot()
            .parts
            .extend(kept.iter().map(|p| p.to_string()));
        self.clear_parts(name, &kept).await
    }

    /// Deletes the parts of the head `name` but those `kept`.
    async fn clear_parts(&self, name: &str, kept: &[&str]) -> Result<(), RecordError> {
        let prefix = format!("{name}-");
        let stale: Vec<String> = self
            .snapshot()
            .parts
            .iter()
            .filter(|p| p.starts_with(&prefix) && !kept.contains(&p.as_str()))
            .cloned()
            .collect();
        for p in stale {
            self.delete(&p).await?;
            self.snapshot().parts.remove(&p);
        }
        Ok(())
    }

    fn failed(&self, name: &str, e: impl std::fmt::Display) -> RecordError {
        RecordError::Live {
            place: format!("{}/{name}", self.path),
            reason: e.to_string(),
        }
    }

    /// Creates or overwrites one parameter.
    async fn put_param(&self, name: &str, value: &str, kind: ParamType) -> Result<(), RecordError> {
        let full = format!("{}/{name}", self.path);
        put_parameter(&self.provider, &self.schema, &full, value, kind, None)
            .await
            .map_err(|e| self.failed(name, e))
    }

    /// Deletes one parameter (gone already is deleted).
    async fn delete(&self, name: &str) -> Result<(), RecordError> {
        let full = format!("{}/{name}", self.path);
        delete_parameter(&self.provider, &self.schema, &full)
            .await
            .map_err(|e| self.failed(name, e))
    }
}

/// The parameters under `path` (below it at any depth when `recursive`),
/// by their names relative to it, read with the provider's
/// `aws_ssm_parameters_by_path` data source (`by_path`, its schema).
pub(crate) async fn read_path(
    provider: &GrpcProvider,
    by_path: &Schema,
    path: &str,
    recursive: bool,
) -> Result<BTreeMap<String, String>, crate::provider::ProviderError> {
    let config = by_path.block.value_with(BTreeMap::from([
        ("path".to_string(), Value::string(path)),
        ("recursive".to_string(), Value::bool(recursive)),
        ("with_decryption".to_string(), Value::bool(true)),
    ]));
    let read = provider.clone().read_data_source(BY_PATH, &config).await?;
    let strings = |name: &str| -> Vec<String> {
        read.get(name)
            .and_then(Value::elements)
            .unwrap_or_default()
            .into_iter()
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .collect()
    };
    let under = format!("{path}/");
    Ok(strings("names")
        .into_iter()
        .zip(strings("values"))
        .filter_map(|(n, v)| Some((n.strip_prefix(&under)?.to_string(), v)))
        .collect())
}

/// An SSM parameter's type: plain text, or encrypted with a KMS key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamType {
    String,
    SecureString,
}

/// Creates or overwrites the parameter `name` of type `kind` (`schema`, the
/// provider's `aws_ssm_parameter`), with `tags` when given.
pub(crate) async fn put_parameter(
    provider: &GrpcProvider,
    schema: &Schema,
    name: &str,
    value: &str,
    kind: ParamType,
    tags: Option<BTreeMap<String, Value>>,
) -> Result<(), crate::provider::ProviderError> {
    let block = &schema.block;
    let kind = match kind {
        ParamType::String => "String",
        ParamType::SecureString => "SecureString",
    };
    let mut args = BTreeMap::from([
        ("name".to_string(), Value::string(name)),
        ("type".to_string(), Value::string(kind)),
        ("value".to_string(), Value::string(value)),
        ("overwrite".to_string(), Value::bool(true)),
    ]);
    if let Some(tags) = tags {
        args.insert(
            "tags".to_string(),
            Value::map(crate::value::Type::String, tags),
        );
    }
    let config = block.value_with(args);
    let null = ResourceState {
        value: Value::null(block.implied_type().without_optional()),
        private: Vec::new(),
    };
    let proposed = proposed_new(block, &null.value, &config);
    let mut provider = provider.clone();
    let planned = provider
        .plan_resource_change(TYPE, &null, &proposed, &config)
        .await?;
    provider
        .apply_resource_change(TYPE, &null.value, &planned, &config)
        .await?;
    Ok(())
}

/// Deletes the parameter `name` (gone already is deleted).
pub(crate) async fn delete_parameter(
    provider: &GrpcProvider,
    schema: &Schema,
    name: &str,
) -> Result<(), crate::provider::ProviderError> {
    let prior = ResourceState {
        value: schema.block.value_with(BTreeMap::from([
            ("name".to_string(), Value::string(name)),
            ("id".to_string(), Value::string(name)),
            ("type".to_string(), Value::string("String")),
        ])),
        private: Vec::new(),
    };
    let mut provider = provider.clone();
    crate::apply::destroy_state(&mut provider, TYPE, &prior, schema).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(address: &str) -> Record {
        Record {
            address: address.to_string(),
            type_name: "aws_sns_topic_subscription".into(),
            id: Some("arn:aws:sns:us-east-1:123456789012:t:1".into()),
            ..Record::default()
        }
    }

    fn relative(params: Vec<(String, String)>) -> BTreeMap<String, String> {
        params.into_iter().collect()
    }

    #[test]
    fn keys_are_names_ssm_accepts_for_any_address() {
        let k = key(r#"module.app["a/b c"].aws_sqs_queue.q[0]"#);
        assert_eq!(k.len(), 32);
        assert!(k.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(k, key("aws_sqs_queue.q[0]"));
        assert_eq!(k, key(r#"module.app["a/b c"].aws_sqs_queue.q[0]"#));
    }

    #[test]
    fn a_small_record_is_one_parameter_holding_its_json() {
        let r = record("aws_sns_topic_subscription.s");
        let text = serde_json::to_string(&r).unwrap();
        let name = key(&r.address);
        let params = encode(&name, &text, "00000000");
        assert_eq!(params, vec![(name.clone(), text)]);
        let s = Snapshot::decode(&relative(params));
        assert_eq!(s.records[&name], Ok(r));
    }

    #[test]
    fn a_large_record_is_split_into_parts_under_4_kb_and_joined_back() {
        let mut r = record("aws_iam_policy.p");
        // Multi-byte characters across the cuts.
        r.args.insert(
            "policy".into(),
            serde_json::Value::String("é€".repeat(3000)),
        );
        let text = serde_json::to_string(&r).unwrap();
        let name = key(&r.address);
        let params = encode(&name, &text, "0a0b0c0d");
        assert!(params.len() > 2, "{}", params.len());
        assert!(params.iter().all(|(_, v)| v.len() <= 4096));
        assert!(params[0].1.starts_with("choudoufu-parts 0a0b0c0d "));
        assert_eq!(params[1].0, format!("{name}-0a0b0c0d-2"));
        let mut all = relative(params.clone());
        // A crashed write's parts under another generation are ignored.
        all.insert(format!("{name}-ffffffff-2"), "junk".into());
        let s = Snapshot::decode(&all);
        assert_eq!(s.records[&name], Ok(r));
        assert_eq!(s.parts.len(), params.len());
        // A missing part makes the record corrupt, naming the part.
        all.remove(&format!("{name}-0a0b0c0d-2"));
        let s = Snapshot::decode(&all);
        let e = s.records[&name].clone().unwrap_err();
        assert!(e.contains(&format!("{name}-0a0b0c0d-2")), "{e}");
    }

    #[test]
    fn outputs_stray_names_and_misfiled_records() {
        let mut params = BTreeMap::new();
        params.insert(OUTPUTS.to_string(), "{}".to_string());
        params.insert("notes".to_string(), "someone else's".to_string());
        let r = record("aws_sns_topic_subscription.s");
        params.insert(
            key("aws_sns_topic_subscription.t"),
            serde_json::to_string(&r).unwrap(),
        );
        let s = Snapshot::decode(&params);
        assert_eq!(s.outputs, Some(Ok(BTreeMap::new())));
        assert_eq!(s.records.len(), 1);
        let e = s.records.values().next().unwrap().clone().unwrap_err();
        assert!(e.contains("aws_sns_topic_subscription.s"), "{e}");
    }
}
