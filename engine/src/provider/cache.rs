//! Decoded provider schemas kept on disk, keyed by the SHA-256 of the
//! provider binary, so a later run skips GetSchema (and the launch it
//! needs) for a binary it has seen.
//!
//! Hashing a 700 MB provider takes longer than asking it for its schema, so
//! the hash itself is remembered per file identity (device, inode, size,
//! modification and change times); any change to the file makes it hashed
//! again. A cache entry that cannot be read is a miss, never an error: the
//! cache can be deleted at any time. Layout under the cache directory:
//! `schemas/v2/<sha256>.json` and `hashes/<sha256 of the path>.json`.
//!
//! A stored schema is one line of JSON (the provider's own schema, its
//! functions, and where each type's schema lies) followed by every type's
//! schema, one JSON document after another, with the SHA-256 of those bytes
//! in the first line. A run decodes only the types it reads
//! ([`SchemaMap`]); the digest is checked at load, so a damaged entry is a
//! miss and never a half-read schema.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::ops::Range;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::schema::{Capabilities, Function, ProviderSchema, Schema};
use super::schema_map::SchemaMap;

/// The format of stored schemas; bump it when [`ProviderSchema`] or the
/// layout below changes.
const SCHEMA_FORMAT: &str = "v2";

/// The first line of a stored schema: everything but the types' schemas,
/// and where each of those lies in the bytes after the line.
#[derive(Serialize, Deserialize)]
struct Header {
    provider: Schema,
    functions: BTreeMap<String, Function>,
    provider_meta: Option<Schema>,
    capabilities: Capabilities,
    resources: BTreeMap<String, Range<usize>>,
    data_sources: BTreeMap<String, Range<usize>>,
    ephemeral_resources: BTreeMap<String, Range<usize>>,
    /// The SHA-256 of the bytes after the first line.
    body_sha256: String,
}

/// A provider binary's SHA-256, as lowercase hex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BinaryHash(String);

impl BinaryHash {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A directory of cached schemas.
#[derive(Debug, Clone)]
pub struct SchemaCache {
    dir: PathBuf,
}

/// What identifies one version of a file without reading it.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
struct FileIdentity {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

#[derive(Serialize, Deserialize)]
struct HashMemo {
    identity: FileIdentity,
    sha256: BinaryHash,
}

impl SchemaCache {
    pub fn new(dir: impl Into<PathBuf>) -> SchemaCache {
        SchemaCache { dir: dir.into() }
    }

    /// The cache directory from the environment: `CHOUDOUFU_CACHE_DIR`,
    /// else `$XDG_CACHE_HOME/choudoufu`, else `~/.cache/choudoufu`; none
    /// when there is no home either.
    pub fn from_env() -> Option<SchemaCache> {
        let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(dir) = var("CHOUDOUFU_CACHE_DIR") {
            return Some(SchemaCache::new(dir));
        }
        let base = var("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|home| Path::new(&home).join(".cache")))?;
        Some(SchemaCache::new(base.join("choudoufu")))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The binary's SHA-256, from the memo when the file is unchanged.
    pub fn binary_hash(&self, binary: &Path) -> io::Result<BinaryHash> {
        let binary = fs::canonicalize(binary)?;
        let identity = identity(&binary)?;
        let memo_path = self.dir.join("hashes").join(format!(
            "{}.json",
            sha256_hex(binary.as_os_str().as_encoded_bytes())
        ));
        if let Some(memo) = read_json::<HashMemo>(&memo_path) {
            if memo.identity == identity {
                return Ok(memo.sha256);
            }
        }
        let sha256 = hash_file(&binary)?;
        // Hashing took a while; if the file changed meanwhile, do not
        // remember a hash that may belong to neither version.
        if self::identity(&binary)? == identity {
            let memo = HashMemo {
                identity,
                sha256: sha256.clone(),
            };
            if let Err(e) = write_json(&memo_path, &memo) {
                tracing::warn!("could not remember the hash of {}: {e}", binary.display());
            }
        }
        Ok(sha256)
    }

    /// The schema stored for a binary, if any: its types' schemas are
    /// decoded as they are read.
    pub fn load(&self, hash: &BinaryHash) -> Option<ProviderSchema> {
        let path = self.schema_path(hash);
        let bytes = fs::read(&path).ok()?;
        let schema = decode_schema(bytes);
        if schema.is_none() {
            tracing::debug!("ignoring unreadable cache entry {}", path.display());
        }
        schema
    }

    /// Stores a binary's schema, replacing any earlier entry atomically.
    pub fn store(&self, hash: &BinaryHash, schema: &ProviderSchema) -> io::Result<()> {
        let mut body = Vec::new();
        let resources = schema.resources.encode(&mut body)?;
        let data_sources = schema.data_sources.encode(&mut body)?;
        let ephemeral_resources = schema.ephemeral_resources.encode(&mut body)?;
        let header = Header {
            provider: schema.provider.clone(),
            functions: schema.functions.clone(),
            provider_meta: schema.provider_meta.clone(),
            capabilities: schema.capabilities,
            resources,
            data_sources,
            ephemeral_resources,
            body_sha256: sha256_hex(&body),
        };
        let mut bytes = serde_json::to_vec(&header)?;
        bytes.push(b'\n');
        bytes.extend_from_slice(&body);
        write_bytes(&self.schema_path(hash), &bytes)
    }

    fn schema_path(&self, hash: &BinaryHash) -> PathBuf {
        self.dir
            .join("schemas")
            .join(SCHEMA_FORMAT)
            .join(format!("{}.json", hash.as_str()))
    }
}

/// A file's SHA-256: remembered in `cache` when there is one (see
/// [`SchemaCache::binary_hash`]), else read through.
pub fn file_sha256(cache: Option<&SchemaCache>, path: &Path) -> io::Result<BinaryHash> {
    match cache {
        Some(cache) => cache.binary_hash(path),
        None => hash_file(path),
    }
}

fn identity(path: &Path) -> io::Result<FileIdentity> {
    let meta = fs::metadata(path)?;
    let ns = |secs: i64, nanos: i64| i128::from(secs) * 1_000_000_000 + i128::from(nanos);
    Ok(FileIdentity {
        dev: meta.dev(),
        ino: meta.ino(),
        len: meta.len(),
        mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
        ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
    })
}

fn hash_file(path: &Path) -> io::Result<BinaryHash> {
    let mut file = File::open(path)?;
    let mut context = aws_lc_rs::digest::Context::new(&aws_lc_rs::digest::SHA256);
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        context.update(&buffer[..n]);
    }
    Ok(BinaryHash(hex(context.finish().as_ref())))
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex(aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, bytes).as_ref())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Option<T> {
    let bytes = fs::read(path).ok()?;
    match serde_json::from_slice(&bytes) {
        Ok(value) => Some(value),
        Err(e) => {
            tracing::debug!("ignoring unreadable cache entry {}: {e}", path.display());
            None
        }
    }
}

/// A stored schema from its bytes, when they are whole and of this format.
fn decode_schema(bytes: Vec<u8>) -> Option<ProviderSchema> {
    let line = bytes.iter().position(|b| *b == b'\n')?;
    let header: Header = serde_json::from_slice(&bytes[..line]).ok()?;
    let start = line + 1;
    if sha256_hex(&bytes[start..]) != header.body_sha256 {
        return None;
    }
    let bytes: Arc<[u8]> = bytes.into();
    let map = |index: BTreeMap<String, Range<usize>>| {
        let shifted = index
            .into_iter()
            .map(|(name, r)| Some((name, r.start.checked_add(start)?..r.end.checked_add(start)?)))
            .collect::<Option<_>>()?;
        SchemaMap::encoded(Arc::clone(&bytes), shifted)
    };
    Some(ProviderSchema {
        provider: header.provider,
        resources: map(header.resources)?,
        data_sources: map(header.data_sources)?,
        ephemeral_resources: map(header.ephemeral_resources)?,
        functions: header.functions,
        provider_meta: header.provider_meta,
        capabilities: header.capabilities,
    })
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> io::Result<()> {
    write_bytes(path, &serde_json::to_vec(value)?)
}

fn write_bytes(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().expect("cache paths have a parent");
    fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(bytes)?;
    file.flush()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_sha256_and_remembered_until_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let cache = SchemaCache::new(dir.path().join("cache"));
        let binary = dir.path().join("bin");
        fs::write(&binary, b"abc").unwrap();
        let first = cache.binary_hash(&binary).unwrap();
        assert_eq!(
            first.as_str(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(cache.binary_hash(&binary).unwrap(), first);
        fs::write(&binary, b"abcd").unwrap();
        assert_ne!(cache.binary_hash(&binary).unwrap(), first);
    }

    #[test]
    fn unreadable_entries_are_misses() {
        let dir = tempfile::tempdir().unwrap();
        let cache = SchemaCache::new(dir.path());
        let hash = BinaryHash("00".into());
        assert!(cache.load(&hash).is_none());
        fs::create_dir_all(cache.schema_path(&hash).parent().unwrap()).unwrap();
        fs::write(cache.schema_path(&hash), b"{not json").unwrap();
        assert!(cache.load(&hash).is_none());
    }

    #[test]
    fn a_stored_schema_reads_back_whole_and_a_damaged_one_is_a_miss() {
        use crate::provider::schema::Block;
        let dir = tempfile::tempdir().unwrap();
        let cache = SchemaCache::new(dir.path());
        let hash = BinaryHash("01".into());
        let schema = |version| Schema {
            version,
            block: Block::default(),
        };
        let stored = ProviderSchema {
            provider: schema(0),
            resources: [
                ("x_a".to_string(), schema(1)),
                ("x_b".to_string(), schema(2)),
            ]
            .into(),
            data_sources: [("x_c".to_string(), schema(3))].into(),
            ephemeral_resources: SchemaMap::default(),
            functions: BTreeMap::new(),
            provider_meta: None,
            capabilities: Capabilities::default(),
        };
        cache.store(&hash, &stored).unwrap();
        let read = cache.load(&hash).unwrap();
        assert_eq!(read.resources.get("x_b").map(|s| s.version), Some(2));
        assert_eq!(read, stored);

        let path = cache.schema_path(&hash);
        let mut bytes = fs::read(&path).unwrap();
        let last = bytes.len() - 2;
        bytes[last] ^= 1;
        fs::write(&path, &bytes).unwrap();
        assert!(cache.load(&hash).is_none());
    }
}
