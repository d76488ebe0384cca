//! Decoded provider schemas kept on disk, keyed by the SHA-256 of the
//! provider binary, so a later run skips GetSchema (and the launch it
//! needs) for a binary it has seen.
//!
//! Hashing a 700 MB provider takes longer than asking it for its schema, so
//! the hash itself is remembered per file identity (device, inode, size,
//! modification and change times); any change to the file makes it hashed
//! again. A cache entry that cannot be read is a miss, never an error: the
//! cache can be deleted at any time. Layout under the cache directory:
//! `schemas/v1/<sha256>.json` and `hashes/<sha256 of the path>.json`.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::schema::ProviderSchema;

/// The format of stored schemas; bump it when [`ProviderSchema`] changes.
const SCHEMA_FORMAT: &str = "v1";

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

    /// The schema stored for a binary, if any.
    pub fn load(&self, hash: &BinaryHash) -> Option<ProviderSchema> {
        read_json(&self.schema_path(hash))
    }

    /// Stores a binary's schema, replacing any earlier entry atomically.
    pub fn store(&self, hash: &BinaryHash, schema: &ProviderSchema) -> io::Result<()> {
        write_json(&self.schema_path(hash), schema)
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

fn write_json<T: Serialize>(path: &Path, value: &T) -> io::Result<()> {
    let dir = path.parent().expect("cache paths have a parent");
    fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    serde_json::to_writer(io::BufWriter::new(&mut file), value)?;
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
}
