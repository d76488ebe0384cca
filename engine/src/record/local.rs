//! The record store in a local folder (`record_store = "local"`, or a
//! path): one JSON file per instance under `<base>/<estate>/`, written
//! atomically, read as each plan asks. Kept for roots that want no record
//! in the live system, for the in-process scenarios, and to read what an
//! earlier version of the engine left on a machine.

use super::{OutputRecord, Record, RecordError};
use crate::addr::ResourceInstanceAddr;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The records of one estate in a folder.
#[derive(Debug, Clone)]
pub struct LocalStore {
    dir: PathBuf,
}

const OUTPUTS: &str = "root.outputs";

impl LocalStore {
    /// The store in `base/<estate>/` (created on first write).
    pub fn open(base: &Path, estate: &str) -> LocalStore {
        LocalStore {
            dir: base.join(estate),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, addr: &str) -> PathBuf {
        let mut name = String::new();
        for b in addr.bytes() {
            if b.is_ascii_alphanumeric() || b"._-".contains(&b) {
                name.push(b as char);
            } else {
                name.push_str(&format!("%{b:02X}"));
            }
        }
        self.dir.join(format!("{name}.json"))
    }

    /// The record of `addr`, if there is one.
    pub fn get(&self, addr: &ResourceInstanceAddr) -> Result<Option<Record>, RecordError> {
        let path = self.path(&addr.to_string());
        let Some(record) = read::<Record>(&path)? else {
            return Ok(None);
        };
        if record.address != addr.to_string() {
            return Err(corrupt(
                &path,
                format!("it names {} rather than {addr}", record.address),
            ));
        }
        Ok(Some(record))
    }

    /// Writes a record durably.
    pub fn put(&self, record: &Record) -> Result<(), RecordError> {
        let text = serde_json::to_vec_pretty(record).expect("records serialize");
        self.write(&self.path(&record.address), &text)
    }

    /// Writes `text` to `path` durably (a temporary file renamed over the
    /// old one).
    fn write(&self, path: &Path, text: &[u8]) -> Result<(), RecordError> {
        let io = |source| RecordError::Io {
            path: path.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let mut f = std::fs::File::create(&tmp).map_err(io)?;
        f.write_all(text).map_err(io)?;
        f.write_all(b"\n").map_err(io)?;
        f.sync_all().map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// Removes the record of `addr`, if any.
    pub fn remove(&self, addr: &str) -> Result<(), RecordError> {
        remove_file(&self.path(addr))
    }

    /// The root module's outputs as the last apply left them.
    pub fn outputs(&self) -> Result<BTreeMap<String, OutputRecord>, RecordError> {
        Ok(read(&self.dir.join(OUTPUTS))?.unwrap_or_default())
    }

    /// Keeps `outputs` as the root module's outputs; none removes the file.
    pub fn put_outputs(&self, outputs: &BTreeMap<String, OutputRecord>) -> Result<(), RecordError> {
        let path = self.dir.join(OUTPUTS);
        if outputs.is_empty() {
            return remove_file(&path);
        }
        let text = serde_json::to_vec_pretty(outputs).expect("outputs serialize");
        self.write(&path, &text)
    }

    /// Whether the folder holds any record or outputs.
    pub fn is_empty(&self) -> bool {
        std::fs::read_dir(&self.dir).map_or(true, |mut d| {
            !d.any(|e| {
                e.is_ok_and(|e| {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    name.ends_with(".json") || name == OUTPUTS
                })
            })
        })
    }

    /// Every record, for the sweep of types only records can find.
    pub fn all(&self) -> Result<Vec<Record>, RecordError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(RecordError::Io {
                    path: self.dir.clone(),
                    source,
                })
            }
        };
        let mut out = Vec::new();
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
            out.extend(read::<Record>(&path)?);
        }
        out.sort_by(|a, b| a.address.cmp(&b.address));
        Ok(out)
    }
}

fn corrupt(path: &Path, reason: String) -> RecordError {
    RecordError::Corrupt {
        place: path.display().to_string(),
        reason,
        remedy: "move it aside to plan without it, or restore it",
    }
}

/// The JSON file at `path`, if there is one.
fn read<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, RecordError> {
    let text = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(RecordError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    serde_json::from_slice(&text)
        .map(Some)
        .map_err(|e| corrupt(path, e.to_string()))
}

fn remove_file(path: &Path) -> Result<(), RecordError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(RecordError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}
