//! Saved plans: `plan -out FILE` and `apply FILE`.
//!
//! A plan file holds what was approved (the plan, as text and in
//! terraform's JSON plan format), what it was made from (the estate, the
//! root, a digest of the configuration and the variables), and a
//! fingerprint of every live object the plan read. Applying it plans again
//! from the live system; if any fingerprint or any planned change differs,
//! nothing is applied.

use crate::addr::ResourceInstanceAddr;
use crate::eval::format;
use crate::planner::Planned;
use crate::value::Value;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const FORMAT: &str = "choudoufu-plan/1";

/// A plan file's content.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SavedPlan {
    pub format: String,
    pub engine_version: String,
    pub estate: String,
    pub root: PathBuf,
    /// SHA-256 over every configuration file's name and bytes.
    pub config_digest: String,
    /// SHA-256 over the input variables' final values.
    pub vars_digest: String,
    pub destroy: bool,
    /// A `-refresh-only` plan: its apply plans so again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refresh_only: bool,
    /// The `-replace` addresses the plan was made with: its apply plans
    /// with them again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replace: Vec<String>,
    /// Per instance read: a digest of the live object as the plan saw it
    /// ("absent" when there was none).
    pub fingerprints: BTreeMap<String, String>,
    /// Per instance: its action and planned object, digested.
    pub changes: BTreeMap<String, String>,
    /// When the plan was made (RFC 3339): its apply answers
    /// `plantimestamp()` with it, as terraform does.
    pub plan_timestamp: String,
    /// The approved plan as `plan` printed it.
    pub text: String,
    /// The approved plan in terraform's JSON plan format.
    pub json: serde_json::Value,
}

/// Why a plan file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SavedPlanError {
    #[error("could not read the plan file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("could not write the plan file {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the plan file {} is corrupt or truncated ({reason}); make a new plan", path.display())]
    Corrupt { path: PathBuf, reason: String },
    #[error("the plan file {} was made for {what}; make a new plan here", path.display())]
    Elsewhere { path: PathBuf, what: String },
}

/// What the live system and the plan look like, as digests.
pub struct Digests {
    pub fingerprints: BTreeMap<String, String>,
    pub changes: BTreeMap<String, String>,
}

fn digest(text: &str) -> String {
    let mut h = Sha256::new();
    h.update(text.as_bytes());
    format!("{:x}", h.finalize())
}

fn value_digest(v: Option<&Value>) -> String {
    match v {
        Some(v) => digest(&format::console(v)),
        None => "absent".to_string(),
    }
}

/// The digests of a fresh plan.
pub fn digests(planned: &Planned) -> Digests {
    let mut fingerprints = BTreeMap::new();
    let mut changes = BTreeMap::new();
    for (addr, step) in &planned.steps {
        fingerprints.insert(
            addr.to_string(),
            value_digest(step.prior.as_ref().map(|p| &p.value)),
        );
    }
    for c in &planned.plan.changes {
        changes.insert(
            c.addr.to_string(),
            digest(&format!(
                "{:?} {}",
                c.action,
                value_digest(c.after.as_ref())
            )),
        );
    }
    Digests {
        fingerprints,
        changes,
    }
}

/// SHA-256 over a root's configuration files (`.tf`, `.tf.json`,
/// `live.hcl`), by name, in name order.
pub fn config_digest(root: &Path) -> String {
    let mut names: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            n.ends_with(".tf") || n.ends_with(".tf.json") || n == crate::live::FILE
        })
        .collect();
    names.sort();
    let mut h = Sha256::new();
    for p in names {
        h.update(p.file_name().unwrap_or_default().as_encoded_bytes());
        h.update([0]);
        h.update(std::fs::read(&p).unwrap_or_default());
        h.update([0]);
    }
    format!("{:x}", h.finalize())
}

/// SHA-256 over variable values.
pub fn vars_digest(vars: &BTreeMap<String, Value>) -> String {
    let text: String = vars
        .iter()
        .map(|(k, v)| format!("{k}={}\n", format::console(v)))
        .collect();
    digest(&text)
}

impl SavedPlan {
    pub fn write(&self, path: &Path) -> Result<(), SavedPlanError> {
        let bytes = serde_json::to_vec(self).expect("plans serialize");
        std::fs::write(path, bytes).map_err(|source| SavedPlanError::Write {
            path: path.into(),
            source,
        })
    }

    pub fn read(path: &Path) -> Result<SavedPlan, SavedPlanError> {
        let bytes = std::fs::read(path).map_err(|source| SavedPlanError::Read {
            path: path.into(),
            source,
        })?;
        let plan: SavedPlan =
            serde_json::from_slice(&bytes).map_err(|e| SavedPlanError::Corrupt {
                path: path.into(),
                reason: e.to_string(),
            })?;
        if plan.format != FORMAT {
            return Err(SavedPlanError::Corrupt {
                path: path.into(),
                reason: format!("its format is {:?}, not {FORMAT:?}", plan.format),
            });
        }
        Ok(plan)
    }

    /// Refuses a plan made for another estate or root, or from other
    /// configuration or variables.
    pub fn check_origin(
        &self,
        path: &Path,
        estate: &str,
        root: &Path,
        vars: &BTreeMap<String, Value>,
    ) -> Result<(), SavedPlanError> {
        let elsewhere = |what: String| SavedPlanError::Elsewhere {
            path: path.into(),
            what,
        };
        if self.estate != estate {
            return Err(elsewhere(format!(
                "estate \"{}\", not \"{estate}\"",
                self.estate
            )));
        }
        if self.root != root {
            return Err(elsewhere(format!("the root {}", self.root.display())));
        }
        if self.config_digest != config_digest(root) {
            return Err(elsewhere("a configuration that has changed since".into()));
        }
        if self.vars_digest != vars_digest(vars) {
            return Err(elsewhere("other input variable values".into()));
        }
        Ok(())
    }

    /// The addresses whose live object or planned change moved since the
    /// plan was approved.
    pub fn moved(&self, now: &Digests) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let keys = self
            .fingerprints
            .keys()
            .chain(now.fingerprints.keys())
            .chain(self.changes.keys())
            .chain(now.changes.keys());
        for k in keys {
            let moved = self.fingerprints.get(k) != now.fingerprints.get(k)
                || self.changes.get(k) != now.changes.get(k);
            if moved && !out.contains(k) {
                out.push(k.clone());
            }
        }
        out.sort_by(|a, b| {
            let parse = |s: &str| s.parse::<ResourceInstanceAddr>().ok();
            parse(a).cmp(&parse(b)).then(a.cmp(b))
        });
        out
    }

    /// A new plan file's content.
    pub fn new(
        planned: &Planned,
        estate: &str,
        root: &Path,
        vars: &BTreeMap<String, Value>,
        destroy: bool,
        plan_timestamp: &str,
        text: String,
    ) -> SavedPlan {
        let d = digests(planned);
        let mut json =
            crate::plan::json::plan_json(&planned.plan, crate::provider::TERRAFORM_COMPAT_VERSION);
        json["timestamp"] = serde_json::Value::from(plan_timestamp);
        SavedPlan {
            format: FORMAT.to_string(),
            engine_version: crate::VERSION.to_string(),
            estate: estate.to_string(),
            root: root.to_path_buf(),
            config_digest: config_digest(root),
            vars_digest: vars_digest(vars),
            destroy,
            refresh_only: planned.plan.refresh_only,
            replace: Vec::new(),
            fingerprints: d.fingerprints,
            changes: d.changes,
            plan_timestamp: plan_timestamp.to_string(),
            text,
            json,
        }
    }

    /// The plan file of a plan made with `-replace` for each of `addrs`.
    pub fn replacing(mut self, addrs: &[String]) -> SavedPlan {
        self.replace = addrs.to_vec();
        self
    }
}
