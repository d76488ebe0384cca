//! An estate: a terraform root, its `live` settings and its stage knobs.
//!
//! `estates/<name>/` holds the root's `.tf` files, `live.hcl` (the engine's
//! settings, in a file stock terraform does not load) and `estate.toml`, the
//! manifest the gauntlet reads. The manifest is parsed into [`RawManifest`]
//! and then checked into [`Estate`], the only form the runner sees.

use std::fs;
use std::path::{Path, PathBuf};

use engine::addr::ResourceInstanceAddr;
use serde::Deserialize;

use crate::corpus::{self, Checkouts, CorpusError, Source};
use crate::stage::{Breaks, Toggle};

/// Why an estate cannot be run.
#[derive(Debug, thiserror::Error)]
pub enum EstateError {
    #[error("no estate named {name:?} in {dir}; known estates: {known}")]
    Unknown {
        name: String,
        dir: PathBuf,
        known: String,
    },
    #[error("{path}: {message}")]
    Malformed { path: PathBuf, message: String },
    #[error("{path}: the configuration uses the {providers} provider beside aws; this gauntlet runs the aws lane only, whose emulator serves the aws provider")]
    OtherProviders { path: PathBuf, providers: String },
    #[error("{estate} cannot turn on {refused}: its manifest names nothing for them to tamper with (a root run has no manifest)")]
    Unaimed { estate: String, refused: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Corpus { path: PathBuf, source: CorpusError },
}

/// `estate.toml` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawManifest {
    pub description: String,
    pub set: String,
    pub lane: String,
    #[serde(default)]
    pub preexisting: Preexisting,
    #[serde(default)]
    pub undeclared: Vec<Undeclared>,
    #[serde(default)]
    pub knobs: RawKnobs,
    pub neighbour: Option<RawNeighbour>,
    /// A corpus estate's root: a public repository's folder at a pinned
    /// commit, in place of files beside the manifest.
    pub source: Option<Source>,
}

impl RawManifest {
    /// The lane and the description, as every manifest needs them.
    fn check_words(&self) -> Result<(), String> {
        if self.lane != "aws" {
            return Err(format!(
                "lane = {:?}: this gauntlet runs the aws lane only; the kubernetes lane needs Docker and kind",
                self.lane
            ));
        }
        if self.description.trim().is_empty() {
            return Err("description is empty".into());
        }
        Ok(())
    }
}

/// `[neighbour]`: a second estate on the same twin, whose root (a folder
/// of this one) owns no whole object of this estate's, only parts of them,
/// and what the witness reads to see those parts.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNeighbour {
    /// The folder of its root, beside `estate.toml`.
    pub root: String,
    /// Its estate name, as its `live.hcl` says.
    pub estate: String,
    /// The queue of this estate's whose policy it writes.
    pub queue_policy: String,
    /// This estate's topic it subscribes a queue of this estate's to.
    pub subscription_topic: String,
    pub subscription_queue: String,
    /// This estate's role it attaches its own policy to.
    pub attachment_role: String,
    pub attachment_policy: String,
    /// This estate's table it writes one tag on, which this estate's block
    /// ignores.
    pub table: String,
    pub table_tag: String,
    pub table_tag_value: String,
}

/// A checked `[neighbour]`.
#[derive(Debug, Clone)]
pub struct Neighbour {
    pub parts: RawNeighbour,
    pub dir: PathBuf,
    /// Its root's `.tf` files.
    pub root_files: Vec<PathBuf>,
    /// How many resource blocks its root declares (none has count or
    /// for_each).
    pub blocks: usize,
}

/// `[knobs]` as written: each names what a stage moves or a BREAK toggle
/// tampers with; each left out is derived from the root, as a root run
/// derives it, and a toggle that cannot be aimed without it is refused.
#[derive(Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RawKnobs {
    pub state_rm_address: Option<String>,
    pub missing_parameter: Option<String>,
    pub stamped_queue: Option<String>,
    pub resurrected_parameter: Option<String>,
    pub lost_preexisting_queue: Option<String>,
    pub removed_block: Option<String>,
    pub count_block: Option<String>,
    pub drift_parameter: Option<String>,
    pub second_drift_parameter: Option<String>,
    pub phantom_parameter: Option<String>,
    pub renamed_block: Option<String>,
    pub renamed_to: Option<String>,
    pub reviewed_block: Option<String>,
    pub crash_parameters: Option<String>,
    pub replaced_parameters: Option<String>,
    pub concurrent_queue: Option<String>,
}

/// Objects that exist before cold deploy and that no stage may touch.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preexisting {
    #[serde(default)]
    pub buckets: Vec<String>,
    #[serde(default)]
    pub queues: Vec<String>,
    #[serde(default)]
    pub roles: Vec<String>,
}

/// An object the running system makes and no block declares.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
pub enum Undeclared {
    S3Object {
        bucket: String,
        key: String,
        body: String,
    },
    SqsMessage {
        queue: String,
        body: String,
    },
    /// An ingress rule another tool adds to a declared security group (by
    /// its name): TCP on `port` from `cidr`.
    SecurityGroupRule {
        group: String,
        cidr: String,
        port: u16,
        description: String,
    },
}

impl Undeclared {
    /// Whether a toggle can delete it out of band and put it back: an
    /// object or a rule can; a message, once received, cannot.
    pub fn can_be_taken_away(&self) -> bool {
        !matches!(self, Undeclared::SqsMessage { .. })
    }
}

impl std::fmt::Display for Undeclared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Undeclared::S3Object { bucket, key, .. } => write!(f, "object s3://{bucket}/{key}"),
            Undeclared::SqsMessage { queue, .. } => write!(f, "a message in queue {queue}"),
            Undeclared::SecurityGroupRule {
                group, cidr, port, ..
            } => write!(
                f,
                "ingress rule tcp/{port} from {cidr} on security group {group}"
            ),
        }
    }
}

/// What each stage moves and each BREAK toggle tampers with, where the
/// manifest names it; `None` where the stage or toggle derives it from the
/// root (see `stages::derive` and `Lane::target`), or where a toggle that
/// needs it cannot be aimed (`Estate::unaimed`).
#[derive(Debug, Clone, Default)]
pub struct Knobs {
    /// BREAK_COLD_STATE: this instance is removed from the estate twin's state.
    pub state_rm_address: Option<ResourceInstanceAddr>,
    /// BREAK_COLD_INVENTORY: this declared parameter is deleted before the count.
    pub missing_parameter: Option<String>,
    /// BREAK_COLD_MARKERS: this declared queue is stamped with a marker tag.
    pub stamped_queue: Option<String>,
    /// BREAK_TEARDOWN_REMOVED: this declared parameter is put back after destroy.
    pub resurrected_parameter: Option<String>,
    /// BREAK_TEARDOWN_SURVIVORS: this pre-existing queue is deleted before the read.
    pub lost_preexisting_queue: Option<String>,
    /// Remove a block: this block (a tagged type, no count, nothing refers
    /// to it) is deleted from both twins' roots.
    pub removed_block: Option<ResourceInstanceAddr>,
    /// Change count: this block's count is lowered by one and raised back.
    pub count_block: Option<ResourceInstanceAddr>,
    /// Drift and reconverge: this declared parameter's value is tampered on
    /// both twins.
    pub drift_parameter: Option<String>,
    /// BREAK_DRIFT_SINGLE and other toggles: a second declared parameter
    /// tampered on the estate twin.
    pub second_drift_parameter: Option<String>,
    /// BREAK_MIGRATE_COUNTS: an instance naming this parameter, which does
    /// not exist, is added to the migrated copy of the state.
    pub phantom_parameter: Option<String>,
    /// Rename: this block (a queue) is renamed to the second with a
    /// `moved` block on both twins (`renamed_block`, `renamed_to`).
    pub renamed: Option<(ResourceInstanceAddr, ResourceInstanceAddr)>,
    /// Plan, review, apply: this block (a queue) gains a `reviewed` tag in a
    /// saved plan.
    pub reviewed_block: Option<ResourceInstanceAddr>,
    /// Crash mid-apply: the two parameters it adds are named under this
    /// path (`<path>/first`, `<path>/second`); nothing else may live there.
    pub crash_parameters: Option<String>,
    /// Replace with create_before_destroy: the parameter it adds (and
    /// removes again) is named `<path>/hashed-<8 hex digits of its
    /// content's sha256>`; nothing else may live there.
    pub replaced_parameters: Option<String>,
    /// Two applies at once: the queue both add (and the stage removes
    /// again); a queue's create keeps the first apply holding the lock.
    pub concurrent_queue: Option<String>,
}

/// A checked estate, ready to run.
#[derive(Debug, Clone)]
pub struct Estate {
    pub name: String,
    pub dir: PathBuf,
    pub description: String,
    pub set: String,
    pub lane: String,
    pub preexisting: Preexisting,
    pub undeclared: Vec<Undeclared>,
    /// What the stages move and the toggles tamper with, where the manifest
    /// names it: nothing for a root run (`run --root`).
    pub knobs: Knobs,
    /// The second estate on the same twin, when the manifest names one.
    pub neighbour: Option<Neighbour>,
    /// The root's `.tf` and `.tf.json` files, by file name.
    pub root_files: Vec<PathBuf>,
    /// Every resource type the root declares, sorted.
    pub resource_types: Vec<String>,
    /// The region the root's `provider "aws"` block names, or the
    /// gauntlet's when it names none it can read.
    pub region: String,
    /// The root's local modules, when its module calls reach folders
    /// outside its own.
    pub modules: Option<ModuleTree>,
    /// The sources of the remote modules the root and its local modules
    /// call, which `init` installs in each working copy as in a new clone.
    pub remote_sources: Vec<String>,
    /// Files the gauntlet writes into each working copy of the root, by
    /// name: the provider settings and the input variables.
    pub extra_files: Vec<(String, String)>,
    /// A corpus estate's repository, commit and folder.
    pub source: Option<Source>,
}

/// A root and the local modules it calls, in the folder that holds them
/// all.
#[derive(Debug, Clone)]
pub struct ModuleTree {
    /// The nearest folder holding the root and every module folder.
    pub top: PathBuf,
    /// The root, relative to `top`.
    pub root: PathBuf,
    /// How many local module folders the root's calls reach.
    pub count: usize,
}

/// The names of the estates under `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().join("estate.toml").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The `[source]` of the estate `name`'s manifest, for a corpus estate.
pub fn source_of(dir: &Path, name: &str) -> Option<Source> {
    let text = fs::read_to_string(dir.join(name).join("estate.toml")).ok()?;
    toml::from_str::<RawManifest>(&text).ok()?.source
}

/// A name an estate may have: lower-case letters, digits and dashes.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
}

/// What Crash mid-apply, Replace with create_before_destroy and Two
/// applies at once add to the root (and remove again): SSM parameters under
/// two paths, and an SQS queue.
#[derive(Debug, Clone)]
pub struct ScratchNames {
    pub crash_parameters: String,
    pub replaced_parameters: String,
    pub concurrent_queue: String,
}

impl Estate {
    /// The names of the objects a stage adds to the root and removes again:
    /// the manifest's, or else names under the estate's.
    pub fn scratch_names(&self) -> ScratchNames {
        let k = &self.knobs;
        ScratchNames {
            crash_parameters: k
                .crash_parameters
                .clone()
                .unwrap_or_else(|| format!("/gauntlet/{}/crash", self.name)),
            replaced_parameters: k
                .replaced_parameters
                .clone()
                .unwrap_or_else(|| format!("/gauntlet/{}/replace", self.name)),
            concurrent_queue: k
                .concurrent_queue
                .clone()
                .unwrap_or_else(|| format!("gauntlet-{}-concurrent", self.name)),
        }
    }

    /// Why `t` cannot be aimed at this estate: what its tamper needs that
    /// only the manifest can name, and this one does not; `None` when it
    /// can.
    pub fn unaimed(&self, t: Toggle) -> Option<&'static str> {
        let k = &self.knobs;
        let s3_object = || {
            self.undeclared
                .iter()
                .any(|u| matches!(u, Undeclared::S3Object { .. }))
        };
        let (missing, why) = match t {
            Toggle::ColdInventory | Toggle::ReplanIdentities => (
                k.missing_parameter.is_none(),
                "deletes the declared parameter knobs.missing_parameter names out of band",
            ),
            Toggle::TeardownRemoved => (
                k.resurrected_parameter.is_none(),
                "puts back the destroyed parameter knobs.resurrected_parameter names",
            ),
            Toggle::NoopMarkers | Toggle::TeardownEngine | Toggle::TeardownSurvivors => (
                k.lost_preexisting_queue.is_none(),
                "tampers with the pre-existing queue knobs.lost_preexisting_queue names",
            ),
            Toggle::ColdUndeclared | Toggle::RemoveUntouched => (
                !self.undeclared.iter().any(Undeclared::can_be_taken_away),
                "deletes an [[undeclared]] s3_object or security_group_rule",
            ),
            Toggle::TeardownUndeclared => (
                !s3_object() || self.preexisting.buckets.is_empty(),
                "copies an [[undeclared]] s3_object into a [preexisting] bucket",
            ),
            Toggle::NeighbourBoundary | Toggle::NeighbourRefused | Toggle::NeighbourTeardown => (
                self.neighbour.is_none(),
                "tampers with the [neighbour] estate",
            ),
            _ => (false, ""),
        };
        missing.then_some(why)
    }

    /// The toggles of `breaks` this estate cannot aim, each with why.
    pub fn check_breaks(&self, breaks: &Breaks) -> Result<(), EstateError> {
        let refused: Vec<String> = Toggle::ALL
            .into_iter()
            .filter(|t| breaks.on(*t))
            .filter_map(|t| Some(format!("{}, which {}", t.name(), self.unaimed(t)?)))
            .collect();
        if refused.is_empty() {
            return Ok(());
        }
        Err(EstateError::Unaimed {
            estate: self.name.clone(),
            refused: refused.join("; "),
        })
    }

    /// Load and check `dir/<name>`; a corpus estate's root is brought
    /// through `checkouts`.
    pub fn load(
        estates_dir: &Path,
        name: &str,
        checkouts: &Checkouts,
    ) -> Result<Estate, EstateError> {
        let dir = estates_dir.join(name);
        let manifest_path = dir.join("estate.toml");
        if !valid_name(name) || !manifest_path.is_file() {
            let known = names(estates_dir);
            return Err(EstateError::Unknown {
                name: name.to_owned(),
                dir: estates_dir.to_owned(),
                known: if known.is_empty() {
                    "none".into()
                } else {
                    known.join(", ")
                },
            });
        }
        let text = read(&manifest_path)?;
        let raw: RawManifest = toml::from_str(&text).map_err(|e| EstateError::Malformed {
            path: manifest_path.clone(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        if let Some(source) = raw.source.clone() {
            return Self::corpus(name, &manifest_path, raw, source, checkouts);
        }
        let root = scan_root(&dir)?;
        check_live_block(&dir.join("live.hcl"), name, "the estate's folder")?;
        if !root.provider_block {
            return Err(EstateError::Malformed {
                path: dir.clone(),
                message: "the root needs a provider \"aws\" block".into(),
            });
        }
        let neighbour = match &raw.neighbour {
            None => None,
            Some(n) => {
                let ndir = dir.join(&n.root);
                if !valid_name(&n.root) || !ndir.is_dir() {
                    return Err(EstateError::Malformed {
                        path: manifest_path,
                        message: format!(
                            "neighbour.root = {:?} is not a folder beside estate.toml",
                            n.root
                        ),
                    });
                }
                let nroot = scan_root(&ndir)?;
                check_live_block(&ndir.join("live.hcl"), &n.estate, "neighbour.estate")?;
                let mut blocks = 0;
                for f in &nroot.files {
                    blocks += read(f)?
                        .lines()
                        .filter(|l| l.starts_with("resource \""))
                        .count();
                }
                Some(Neighbour {
                    parts: n.clone(),
                    dir: ndir,
                    root_files: nroot.files,
                    blocks,
                })
            }
        };
        let mut estate = Self::check(name, dir, &manifest_path, raw, root)?;
        estate.neighbour = neighbour;
        Ok(estate)
    }

    /// A corpus estate: its root brought from the repository at the
    /// commit, then run as a root run is (every stage derives its moves
    /// from the root), under the manifest's name and words.
    fn corpus(
        name: &str,
        path: &Path,
        raw: RawManifest,
        source: Source,
        checkouts: &Checkouts,
    ) -> Result<Estate, EstateError> {
        let bad = |message: String| EstateError::Malformed {
            path: path.to_owned(),
            message,
        };
        raw.check_words().map_err(bad)?;
        if raw.knobs != RawKnobs::default()
            || raw.preexisting != Preexisting::default()
            || !raw.undeclared.is_empty()
            || raw.neighbour.is_some()
        {
            return Err(bad(
                "a corpus estate ([source]) names no [knobs], [preexisting], [[undeclared]] or [neighbour]: its stages derive their moves from the root, as a root run's do".into(),
            ));
        }
        let root = corpus::checkout(&source, checkouts).map_err(|e| EstateError::Corpus {
            path: path.to_owned(),
            source: e,
        })?;
        let mut estate = Self::from_root(&root, name, &RootArgs::default())?;
        estate.description = raw.description.trim().to_owned();
        estate.set = raw.set;
        estate.source = Some(source);
        Ok(estate)
    }

    fn check(
        name: &str,
        dir: PathBuf,
        path: &Path,
        raw: RawManifest,
        root: Root,
    ) -> Result<Estate, EstateError> {
        let modules = module_tree(&dir, &root)?;
        let Root {
            files: root_files,
            resource_types,
            region,
            remote_sources,
            ..
        } = root;
        let bad = |message: String| EstateError::Malformed {
            path: path.to_owned(),
            message,
        };
        raw.check_words().map_err(bad)?;
        let preexisting = raw.preexisting;
        for n in preexisting
            .buckets
            .iter()
            .chain(&preexisting.queues)
            .chain(&preexisting.roles)
        {
            if n.trim().is_empty() {
                return Err(bad("[preexisting] holds an empty name".into()));
            }
        }
        let undeclared = raw.undeclared;
        let k = raw.knobs;
        let knob = |knob: &str,
                    text: &Option<String>|
         -> Result<Option<ResourceInstanceAddr>, EstateError> {
            let Some(text) = text else { return Ok(None) };
            let a: ResourceInstanceAddr = text
                .parse()
                .map_err(|e| bad(format!("knobs.{knob}: {e}")))?;
            if !resource_types.contains(&a.type_name) {
                return Err(bad(format!(
                    "knobs.{knob} names {a}, but the root declares no {}",
                    a.type_name
                )));
            }
            Ok(Some(a))
        };
        let block = |name: &str,
                     text: &Option<String>|
         -> Result<Option<ResourceInstanceAddr>, EstateError> {
            let a = knob(name, text)?;
            if a.as_ref()
                .is_some_and(|a| a.key.is_some() || !a.module.is_empty())
            {
                return Err(bad(format!(
                    "knobs.{name} = {:?} names an instance; name the block, such as aws_sqs_queue.q",
                    text.as_deref().unwrap_or_default()
                )));
            }
            Ok(a)
        };
        let queue = |name: &str,
                     text: &Option<String>|
         -> Result<Option<ResourceInstanceAddr>, EstateError> {
            let a = block(name, text)?;
            if let Some(a) = a.as_ref().filter(|a| a.type_name != "aws_sqs_queue") {
                return Err(bad(format!(
                    "knobs.{name} names {a}; its stage reads the queue's tags, so it must be an aws_sqs_queue (or leave it out to have it derived)"
                )));
            }
            Ok(a)
        };
        let state_rm_address = knob("state_rm_address", &k.state_rm_address)?;
        let removed_block = block("removed_block", &k.removed_block)?;
        let count_block = block("count_block", &k.count_block)?;
        let renamed =
            match (queue("renamed_block", &k.renamed_block)?, &k.renamed_to) {
                (None, None) => None,
                (Some(from), Some(to_text)) => {
                    let to: ResourceInstanceAddr = to_text
                        .parse()
                        .map_err(|e| bad(format!("knobs.renamed_to: {e}")))?;
                    if to.type_name != from.type_name
                        || to.key.is_some()
                        || !to.module.is_empty()
                        || to == from
                    {
                        return Err(bad(format!(
                            "knobs.renamed_to = {to_text:?} must be another block of {from}'s type"
                        )));
                    }
                    Some((from, to))
                }
                _ => return Err(bad(
                    "knobs.renamed_block and knobs.renamed_to go together: name both or neither"
                        .into(),
                )),
            };
        let reviewed_block = queue("reviewed_block", &k.reviewed_block)?;
        if let Some(q) = k
            .lost_preexisting_queue
            .as_ref()
            .filter(|q| !preexisting.queues.contains(q))
        {
            return Err(bad(format!(
                "knobs.lost_preexisting_queue = {q:?} is not one of [preexisting] queues"
            )));
        }
        let knobs = Knobs {
            state_rm_address,
            missing_parameter: k.missing_parameter,
            stamped_queue: k.stamped_queue,
            resurrected_parameter: k.resurrected_parameter,
            lost_preexisting_queue: k.lost_preexisting_queue,
            removed_block,
            count_block,
            drift_parameter: k.drift_parameter,
            second_drift_parameter: k.second_drift_parameter,
            phantom_parameter: k.phantom_parameter,
            renamed,
            reviewed_block,
            crash_parameters: k.crash_parameters,
            replaced_parameters: k.replaced_parameters,
            concurrent_queue: k.concurrent_queue,
        };
        Ok(Estate {
            name: name.to_owned(),
            description: raw.description.trim().to_owned(),
            set: raw.set,
            lane: raw.lane,
            preexisting,
            undeclared,
            neighbour: None,
            knobs,
            root_files,
            resource_types,
            region: region.ok_or_else(|| EstateError::Malformed {
                path: dir.join("main.tf"),
                message: "the root needs a provider \"aws\" block with region set to a literal string; the witness reads the same region".into(),
            })?,
            modules,
            remote_sources,
            extra_files: vec![(
                "gauntlet_override.tf".into(),
                crate::substrate::provider_override(None),
            )],
            dir,
            source: None,
        })
    }
}

/// A root run without a manifest (`run --root`): what it is given.
#[derive(Debug, Clone, Default)]
pub struct RootArgs {
    /// `--var NAME=VALUE`, in order.
    pub vars: Vec<(String, String)>,
    /// `--var-file FILE`, in order.
    pub var_files: Vec<PathBuf>,
}

/// The estate name a root's folder gives: its name in lower case, every
/// run of other characters a dash.
pub fn name_of_root(dir: &Path) -> String {
    let base = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let mut name = String::new();
    for c in base.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            name.push(c);
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    name.trim_end_matches('-').chars().take(64).collect()
}

impl Estate {
    /// Any terraform root of the aws provider, as the estate `name`, with
    /// no manifest: nothing pre-exists, nothing undeclared, no knobs.
    pub fn from_root(dir: &Path, name: &str, args: &RootArgs) -> Result<Estate, EstateError> {
        let bad = |message: String| EstateError::Malformed {
            path: dir.to_owned(),
            message,
        };
        if !dir.is_dir() {
            return Err(bad("not a folder".into()));
        }
        if !valid_name(name) {
            return Err(bad(format!(
                "{name:?} cannot name an estate: use lower-case letters, digits and dashes (--name)"
            )));
        }
        let root = scan_root(dir)?;
        let modules = module_tree(dir, &root)?;
        // The gauntlet's provider settings: merged into the root's own
        // block, or the block itself; the region when the root names none
        // the gauntlet can read, so that the witness reads where terraform
        // writes.
        let region = root.region.clone().unwrap_or_else(|| "us-east-1".into());
        let set_region = root.region.is_none().then_some(region.as_str());
        let mut extra_files = vec![(
            if root.provider_block {
                "gauntlet_override.tf"
            } else {
                "gauntlet_provider.tf"
            }
            .to_owned(),
            crate::substrate::provider_override(set_region),
        )];
        for (i, f) in args.var_files.iter().enumerate() {
            let text = read(f)?;
            let json = f.extension().is_some_and(|e| e == "json");
            let ext = if json {
                "auto.tfvars.json"
            } else {
                "auto.tfvars"
            };
            extra_files.push((format!("gauntlet-{}.{ext}", i + 1), text));
        }
        if !args.vars.is_empty() {
            // As terraform takes -var: the raw string for a variable of a
            // primitive type (or none declared), else an HCL expression.
            let mut text = String::new();
            for (k, v) in &args.vars {
                let value = if complex_variable(&root.files, k)? {
                    v.clone()
                } else {
                    hcl::format::to_string(&hcl::Expression::String(v.clone()))
                        .map_err(|e| bad(format!("--var {k}: {e}")))?
                };
                text.push_str(&format!("{k} = {value}\n"));
            }
            extra_files.push(("gauntlet-vars.auto.tfvars".into(), text));
        }
        Ok(Estate {
            name: name.to_owned(),
            dir: dir.to_owned(),
            description: root_description(
                dir,
                root.resource_types.len(),
                root.module_dirs.len(),
                root.remote_sources.len(),
            ),
            set: "root".into(),
            lane: "aws".into(),
            preexisting: Preexisting::default(),
            undeclared: Vec::new(),
            knobs: Knobs::default(),
            neighbour: None,
            root_files: root.files,
            resource_types: root.resource_types,
            region,
            modules,
            remote_sources: root.remote_sources,
            extra_files,
            source: None,
        })
    }

    /// Take in the remote modules `init` installed in the working copy
    /// `dir` (its `.terraform/modules/modules.json`): the resource types
    /// they declare join the root's, so the witness reads their objects
    /// too. A module of another provider stops the run as the root's own
    /// would.
    pub fn installed(&mut self, dir: &Path) -> Result<(), EstateError> {
        if self.remote_sources.is_empty() {
            return Ok(());
        }
        let path = dir.join(".terraform/modules/modules.json");
        let manifest: serde_json::Value =
            serde_json::from_str(&read(&path)?).map_err(|e| EstateError::Malformed {
                path: path.clone(),
                message: e.to_string(),
            })?;
        let mut found = Root::default();
        let installed = manifest["Modules"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["Dir"].as_str())
            .filter(|d| d.starts_with(".terraform/modules/"));
        for d in installed {
            for body in bodies(&dir.join(d))? {
                scan_body(&body, false, &mut found);
            }
        }
        found.other_providers.sort();
        found.other_providers.dedup();
        refuse_other_providers(&found, &path)?;
        self.resource_types.extend(found.resource_types);
        self.resource_types.sort();
        self.resource_types.dedup();
        if self.source.is_some() || self.set != "root" {
            return Ok(());
        }
        self.description = root_description(
            &self.dir,
            self.resource_types.len(),
            self.modules.as_ref().map_or(0, |m| m.count),
            self.remote_sources.len(),
        );
        Ok(())
    }
}

/// What a root run's page says of the root it ran.
fn root_description(dir: &Path, types: usize, local: usize, remote: usize) -> String {
    format!(
        "The terraform root in {}, run through the stages it needs no manifest for: {types} resource types declared{}.",
        dir.display(),
        calls(local, remote)
    )
}

/// How a root run's page describes the modules a root calls.
fn calls(local: usize, remote: usize) -> String {
    let plural = |n: usize, one: &str| {
        if n == 1 {
            format!("the {one} module")
        } else {
            format!("the {n} {one} modules")
        }
    };
    match (local, remote) {
        (0, 0) => String::new(),
        (l, 0) => format!(" by it and {} it calls", plural(l, "local")),
        (0, r) => format!(
            " by it and {} it calls, installed by init in each working copy",
            plural(r, "remote")
        ),
        (l, r) => format!(
            " by it, {} and {} it calls, installed by init in each working copy",
            plural(l, "local"),
            plural(r, "remote")
        ),
    }
}

/// Whether the root declares variable `name` with a type other than
/// `string`, `number` or `bool`: terraform parses its `-var` value as an
/// expression, where it takes a primitive's raw.
fn complex_variable(files: &[PathBuf], name: &str) -> Result<bool, EstateError> {
    for f in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "tf"))
    {
        let Ok(body) = hcl::parse(&read(f)?) else {
            continue;
        };
        let declared = body
            .blocks()
            .filter(|b| b.identifier() == "variable")
            .find(|b| b.labels().first().is_some_and(|l| l.as_str() == name));
        if let Some(b) = declared {
            let ty = b.body().attributes().find(|a| a.key() == "type");
            return Ok(match ty.map(|a| a.expr()) {
                None => false,
                Some(hcl::Expression::Variable(v)) => {
                    !matches!(v.as_str(), "string" | "number" | "bool")
                }
                Some(_) => true,
            });
        }
    }
    Ok(false)
}

/// The folder holding a root and every local module it calls, when it
/// calls any.
fn module_tree(dir: &Path, root: &Root) -> Result<Option<ModuleTree>, EstateError> {
    if root.module_dirs.is_empty() {
        return Ok(None);
    }
    let here = dir.canonicalize().map_err(|source| EstateError::Io {
        path: dir.to_owned(),
        source,
    })?;
    let mut top = here.clone();
    while !root.module_dirs.iter().all(|m| m.starts_with(&top)) {
        if !top.pop() {
            break;
        }
    }
    let rel = here.strip_prefix(&top).unwrap_or(Path::new("")).to_owned();
    Ok(Some(ModuleTree {
        top,
        root: rel,
        count: root.module_dirs.len(),
    }))
}

fn read(path: &Path) -> Result<String, EstateError> {
    fs::read_to_string(path).map_err(|source| EstateError::Io {
        path: path.to_owned(),
        source,
    })
}

/// What the gauntlet reads from a root and the local modules it calls:
/// the root's files, the resource types they all declare, and the root's
/// provider block and region. A configuration naming a provider other than
/// aws is refused while it is read.
#[derive(Default)]
struct Root {
    files: Vec<PathBuf>,
    resource_types: Vec<String>,
    region: Option<String>,
    /// Whether the root itself has a `provider "aws"` block.
    provider_block: bool,
    /// Providers other than aws the configuration names, sorted.
    other_providers: Vec<String>,
    /// The folders of the local modules called, canonical.
    module_dirs: Vec<PathBuf>,
    /// The sources of the remote modules called (registry, git, archive),
    /// as written, sorted.
    remote_sources: Vec<String>,
}

/// The `.tf` and `.tf.json` files of a folder, sorted.
fn tf_files(dir: &Path) -> Result<Vec<PathBuf>, EstateError> {
    let rd = fs::read_dir(dir).map_err(|source| EstateError::Io {
        path: dir.to_owned(),
        source,
    })?;
    let mut files: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            p.is_file() && (n.ends_with(".tf") || n.ends_with(".tf.json"))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// The providers built into terraform, which any root may use.
const BUILT_IN: &[&str] = &["terraform"];

fn scan_root(dir: &Path) -> Result<Root, EstateError> {
    let files = tf_files(dir)?;
    if files.is_empty() {
        return Err(EstateError::Malformed {
            path: dir.to_owned(),
            message: "no .tf or .tf.json files: not a terraform root".into(),
        });
    }
    let mut root = Root {
        files,
        ..Root::default()
    };
    let mut seen = vec![dir.canonicalize().map_err(|source| EstateError::Io {
        path: dir.to_owned(),
        source,
    })?];
    let mut queue = vec![(seen[0].clone(), true)];
    while let Some((folder, is_root)) = queue.pop() {
        for body in bodies(&folder)? {
            scan_body(&body, is_root, &mut root);
            for m in body.blocks().filter(|b| b.identifier() == "module") {
                let source = m.body().attributes().find(|a| a.key() == "source");
                let Some(hcl::Expression::String(src)) = source.map(|a| a.expr()) else {
                    continue;
                };
                if !(src.starts_with("./") || src.starts_with("../")) {
                    root.remote_sources.push(src.clone());
                    continue;
                }
                let Ok(d) = folder.join(src).canonicalize() else {
                    continue;
                };
                if !seen.contains(&d) {
                    seen.push(d.clone());
                    root.module_dirs.push(d.clone());
                    queue.push((d, false));
                }
            }
        }
    }
    for v in [
        &mut root.resource_types,
        &mut root.other_providers,
        &mut root.remote_sources,
    ] {
        v.sort();
        v.dedup();
    }
    refuse_other_providers(&root, dir)?;
    root.module_dirs.sort();
    Ok(root)
}

/// The `.tf` files of `folder`, parsed. A root terraform rejects is
/// terraform's to report, with its own diagnostics; here an unparsable
/// file only contributes nothing.
fn bodies(folder: &Path) -> Result<Vec<hcl::Body>, EstateError> {
    let mut out = Vec::new();
    for f in tf_files(folder)?
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "tf"))
    {
        if let Ok(body) = hcl::parse(&read(f)?) {
            out.push(body);
        }
    }
    Ok(out)
}

/// Stops at a configuration naming a provider other than aws.
fn refuse_other_providers(root: &Root, path: &Path) -> Result<(), EstateError> {
    match root.other_providers.is_empty() {
        true => Ok(()),
        false => Err(EstateError::OtherProviders {
            path: path.to_owned(),
            providers: root.other_providers.join(", "),
        }),
    }
}

/// What one file's body adds to `root`: its resource types, the providers
/// its blocks name, and for the root's own files the provider block and
/// its region.
fn scan_body(body: &hcl::Body, is_root: bool, root: &mut Root) {
    let mut other = |name: &str| {
        if name != "aws" && !BUILT_IN.contains(&name) {
            root.other_providers.push(name.to_owned());
        }
    };
    for b in body.blocks() {
        let label = b.labels().first().map(|l| l.as_str());
        match (b.identifier(), label) {
            ("resource" | "data", Some(t)) => {
                other(t.split('_').next().unwrap_or(t));
                if b.identifier() == "resource" {
                    root.resource_types.push(t.to_owned());
                }
            }
            ("provider", Some(p)) => other(p),
            ("terraform", _) => {
                for rp in b
                    .body()
                    .blocks()
                    .filter(|x| x.identifier() == "required_providers")
                {
                    for a in rp.body().attributes() {
                        other(a.key());
                    }
                }
            }
            _ => {}
        }
    }
    if !is_root {
        return;
    }
    let aws = body
        .blocks()
        .filter(|b| b.identifier() == "provider")
        .filter(|b| b.labels().first().is_some_and(|l| l.as_str() == "aws"))
        .filter(|b| !b.body().attributes().any(|a| a.key() == "alias"));
    for b in aws {
        root.provider_block = true;
        for a in b.body().attributes().filter(|a| a.key() == "region") {
            if let Some(r) = literal(a.expr(), body) {
                root.region = Some(r);
            }
        }
    }
}

/// A string an expression names: a literal, or a `local.x` or `var.x`
/// whose local or default is one (in the same file).
fn literal(expr: &hcl::Expression, body: &hcl::Body) -> Option<String> {
    use hcl::expr::TraversalOperator;
    match expr {
        hcl::Expression::String(s) => Some(s.clone()),
        hcl::Expression::Traversal(t) => {
            let hcl::Expression::Variable(root) = &t.expr else {
                return None;
            };
            let [TraversalOperator::GetAttr(name)] = t.operators.as_slice() else {
                return None;
            };
            let value = match root.as_str() {
                "local" => body
                    .blocks()
                    .filter(|b| b.identifier() == "locals")
                    .flat_map(|b| b.body().attributes())
                    .find(|a| a.key() == name.as_str())
                    .map(|a| a.expr().clone()),
                "var" => body
                    .blocks()
                    .filter(|b| b.identifier() == "variable")
                    .filter(|b| {
                        b.labels()
                            .first()
                            .is_some_and(|l| l.as_str() == name.as_str())
                    })
                    .flat_map(|b| b.body().attributes())
                    .find(|a| a.key() == "default")
                    .map(|a| a.expr().clone()),
                _ => None,
            }?;
            match value {
                hcl::Expression::String(s) => Some(s),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `live.hcl` must hold `live { estate = "<name>" }`, the name `whence`
/// gives.
fn check_live_block(path: &Path, name: &str, whence: &str) -> Result<(), EstateError> {
    let bad = |message: String| EstateError::Malformed {
        path: path.to_owned(),
        message,
    };
    let body = hcl::parse(&read(path)?).map_err(|e| bad(e.to_string()))?;
    let live = body
        .blocks()
        .find(|b| b.identifier() == "live")
        .ok_or_else(|| bad("no live { ... } block".into()))?;
    let estate = live
        .body()
        .attributes()
        .find(|a| a.key() == "estate")
        .and_then(|a| match a.expr() {
            hcl::Expression::String(s) => Some(s.clone()),
            _ => None,
        })
        .ok_or_else(|| bad("the live block has no estate = \"...\" string".into()))?;
    if estate != name {
        return Err(bad(format!(
            "live.estate = {estate:?}, but {whence} is {name:?}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where a test's estates would bring a corpus root from: nowhere.
    fn no_checkouts() -> Checkouts {
        Checkouts {
            source_dir: None,
            cache: PathBuf::from("/nonexistent/gauntlet-sources"),
        }
    }

    /// A root calling a git module: what init installed joins the root's
    /// types and its page's words; a module of another provider stops it.
    #[test]
    fn a_remote_call_joins_the_root_once_init_installed_it() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        fs::write(
            root.join("main.tf"),
            "resource \"aws_sqs_queue\" \"q\" {}\nmodule \"web\" {\n  source = \"git::https://example.com/web.git?ref=v1\"\n}\n",
        )
        .unwrap();
        let mut e = Estate::from_root(root, "r", &RootArgs::default()).unwrap();
        assert_eq!(
            e.remote_sources,
            ["git::https://example.com/web.git?ref=v1"]
        );
        assert!(
            e.description
                .contains("1 resource types declared by it and the remote module it calls"),
            "{}",
            e.description
        );
        let web = root.join(".terraform/modules/web");
        fs::create_dir_all(&web).unwrap();
        fs::write(
            root.join(".terraform/modules/modules.json"),
            r#"{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"web","Source":"git::https://example.com/web.git?ref=v1","Dir":".terraform/modules/web"}]}"#,
        )
        .unwrap();
        fs::write(
            web.join("main.tf"),
            "resource \"aws_security_group\" \"this\" {}\nresource \"aws_sqs_queue\" \"q\" {}\n",
        )
        .unwrap();
        e.installed(root).unwrap();
        assert_eq!(e.resource_types, ["aws_security_group", "aws_sqs_queue"]);
        assert!(
            e.description.contains("2 resource types declared"),
            "{}",
            e.description
        );

        fs::write(web.join("random.tf"), "resource \"random_id\" \"x\" {}\n").unwrap();
        let err = e.installed(root).unwrap_err().to_string();
        assert!(
            err.contains("random") && err.contains("modules.json"),
            "{err}"
        );
    }

    const MANIFEST: &str = r#"
description = "test estate"
set = "growing"
lane = "aws"
[preexisting]
buckets = ["kb"]
queues = ["keep"]
[[undeclared]]
kind = "s3_object"
bucket = "b"
key = "k"
body = "x"
[knobs]
state_rm_address = "aws_sqs_queue.q"
missing_parameter = "/p/1"
stamped_queue = "q"
resurrected_parameter = "/p/0"
lost_preexisting_queue = "keep"
removed_block = "aws_sqs_queue.q"
count_block = "aws_sqs_queue.q"
drift_parameter = "/p/0"
second_drift_parameter = "/p/1"
phantom_parameter = "/p/9"
renamed_block = "aws_sqs_queue.q"
renamed_to = "aws_sqs_queue.r"
reviewed_block = "aws_sqs_queue.q"
crash_parameters = "/p/crash"
replaced_parameters = "/p/replace"
concurrent_queue = "p-concurrent"
"#;

    fn estate_dir(manifest: &str, live: &str) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let e = d.path().join("e1");
        fs::create_dir(&e).unwrap();
        fs::write(e.join("estate.toml"), manifest).unwrap();
        fs::write(e.join("live.hcl"), live).unwrap();
        fs::write(
            e.join("main.tf"),
            "provider \"aws\" {\n  region = \"us-east-1\"\n}\nresource \"aws_sqs_queue\" \"q\" {}\n",
        )
        .unwrap();
        d
    }

    #[test]
    fn a_good_manifest_checks() {
        let d = estate_dir(MANIFEST, "live { estate = \"e1\" }\n");
        let e = Estate::load(d.path(), "e1", &no_checkouts()).unwrap();
        assert_eq!(e.resource_types, ["aws_sqs_queue"]);
        assert_eq!(e.region, "us-east-1");
        assert_eq!(
            e.knobs.state_rm_address.as_ref().unwrap().to_string(),
            "aws_sqs_queue.q"
        );
        assert_eq!(names(d.path()), ["e1"]);
    }

    #[test]
    fn knobs_left_out_are_derived_and_the_toggles_needing_them_refused() {
        let bare = &MANIFEST[..MANIFEST.find("[knobs]").unwrap()];
        let d = estate_dir(bare, "live { estate = \"e1\" }\n");
        let e = Estate::load(d.path(), "e1", &no_checkouts()).unwrap();
        assert!(e.knobs.state_rm_address.is_none() && e.knobs.renamed.is_none());
        assert_eq!(e.scratch_names().concurrent_queue, "gauntlet-e1-concurrent");
        // Aimed at what the root shows: an object by ARN, a derived block.
        for t in [Toggle::ColdState, Toggle::ColdMarkers, Toggle::RenameMarker] {
            assert_eq!(e.unaimed(t), None, "{}", t.name());
        }
        // The manifest's other sections still aim theirs.
        assert_eq!(e.unaimed(Toggle::ColdUndeclared), None);
        assert_eq!(e.unaimed(Toggle::TeardownUndeclared), None);
        let breaks = Breaks::new(&[Toggle::ColdMarkers, Toggle::TeardownRemoved], |_| None);
        let msg = e.check_breaks(&breaks).unwrap_err().to_string();
        assert!(
            msg.contains("e1 cannot turn on teardown-removed, which puts back the destroyed parameter knobs.resurrected_parameter names")
                && !msg.contains("cold-markers"),
            "{msg}"
        );
        assert!(e
            .check_breaks(&Breaks::new(&[Toggle::ColdMarkers], |_| None))
            .is_ok());

        let half = format!("{bare}[knobs]\nrenamed_block = \"aws_sqs_queue.q\"\n");
        let d = estate_dir(&half, "live { estate = \"e1\" }\n");
        let msg = Estate::load(d.path(), "e1", &no_checkouts())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("name both or neither"), "{msg}");
    }

    #[test]
    fn unknown_estates_are_named_with_the_known_ones() {
        let d = estate_dir(MANIFEST, "live { estate = \"e1\" }\n");
        for name in ["nope", "../e1", ""] {
            let msg = Estate::load(d.path(), name, &no_checkouts())
                .unwrap_err()
                .to_string();
            assert!(msg.contains("known estates: e1"), "{msg}");
        }
    }

    #[test]
    fn malformed_manifests_name_the_file_and_line() {
        let d = estate_dir(
            &MANIFEST.replace("lane = \"aws\"", "lane = aws"),
            "live { estate = \"e1\" }",
        );
        let msg = Estate::load(d.path(), "e1", &no_checkouts())
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("estate.toml") && msg.contains("line 4"),
            "{msg}"
        );

        let d = estate_dir(
            &MANIFEST.replace("[knobs]", "[knobs]\nextra = 1"),
            "live { estate = \"e1\" }",
        );
        let msg = Estate::load(d.path(), "e1", &no_checkouts())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("unknown field `extra`"), "{msg}");
    }

    #[test]
    fn knobs_are_checked_against_the_root() {
        let d = estate_dir(
            &MANIFEST.replace("aws_sqs_queue.q\"", "aws_sns_topic.t\""),
            "live { estate = \"e1\" }",
        );
        let msg = Estate::load(d.path(), "e1", &no_checkouts())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("declares no aws_sns_topic"), "{msg}");

        let d = estate_dir(
            &MANIFEST.replace("queues = [\"keep\"]", "queues = [\"other\"]"),
            "live { estate = \"e1\" }",
        );
        let msg = Estate::load(d.path(), "e1", &no_checkouts())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("lost_preexisting_queue"), "{msg}");

        let d = estate_dir(
            &MANIFEST.replace("\"aws_sqs_queue.q\"", "\"aws_sqs_queue\""),
            "live { estate = \"e1\" }",
        );
        let msg = Estate::load(d.path(), "e1", &no_checkouts())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("state_rm_address"), "{msg}");
    }

    #[test]
    fn a_neighbour_is_a_root_in_a_folder_of_the_estate() {
        let neighbour = "\n[neighbour]\nroot = \"app\"\nestate = \"e1-app\"\nqueue_policy = \"q\"\nsubscription_topic = \"t\"\nsubscription_queue = \"q\"\nattachment_role = \"r\"\nattachment_policy = \"p\"\ntable = \"s\"\ntable_tag = \"owner\"\ntable_tag_value = \"app\"\n";
        let manifest = format!("{MANIFEST}{neighbour}");
        let d = estate_dir(&manifest, "live { estate = \"e1\" }\n");
        let msg = Estate::load(d.path(), "e1", &no_checkouts())
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("neighbour.root = \"app\" is not a folder"),
            "{msg}"
        );

        let app = d.path().join("e1/app");
        fs::create_dir(&app).unwrap();
        fs::write(
            app.join("main.tf"),
            "provider \"aws\" {\n  region = \"us-east-1\"\n}\nresource \"aws_sqs_queue_policy\" \"p\" {\n}\nresource \"aws_dynamodb_tag\" \"t\" {\n}\n",
        )
        .unwrap();
        fs::write(app.join("live.hcl"), "live { estate = \"e1\" }\n").unwrap();
        let msg = Estate::load(d.path(), "e1", &no_checkouts())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("but neighbour.estate is \"e1-app\""), "{msg}");

        fs::write(app.join("live.hcl"), "live { estate = \"e1-app\" }\n").unwrap();
        let e = Estate::load(d.path(), "e1", &no_checkouts()).unwrap();
        let n = e.neighbour.unwrap();
        assert_eq!((n.parts.estate.as_str(), n.blocks), ("e1-app", 2));
        assert_eq!(n.root_files, [app.join("main.tf")]);
        // The estate's own root is only the files beside the manifest.
        assert!(e
            .root_files
            .iter()
            .all(|f| f.parent() == Some(&d.path().join("e1"))));
    }

    #[test]
    fn the_live_block_must_name_the_estate() {
        let d = estate_dir(MANIFEST, "live { estate = \"other\" }\n");
        let msg = Estate::load(d.path(), "e1", &no_checkouts())
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("live.hcl") && msg.contains("\"other\""),
            "{msg}"
        );
    }

    #[test]
    fn a_corpus_estate_runs_a_repository_folder_at_its_commit() {
        let d = tempfile::tempdir().unwrap();
        let clone = d.path().join("clone");
        let root = "provider \"aws\" {\n  region = \"eu-west-1\"\n}\n\nmodule \"q\" {\n  source = \"../../\"\n}\n";
        let rev = crate::corpus::test_repo(&clone, "examples/simple", root, "# later\n");
        let estates = d.path().join("estates");
        let manifest = |extra: &str| {
            fs::create_dir_all(estates.join("corpus-q")).unwrap();
            fs::write(
                estates.join("corpus-q/estate.toml"),
                format!("description = \"q\"\nset = \"corpus\"\nlane = \"aws\"\n{extra}\n[source]\ngit = \"https://example.com/q\"\nrev = \"{rev}\"\npath = \"examples/simple\"\n"),
            )
            .unwrap();
        };
        manifest("");
        let at = Checkouts {
            source_dir: Some(clone),
            cache: d.path().join("cache"),
        };
        let e = Estate::load(&estates, "corpus-q", &at).unwrap();
        assert_eq!(
            e.dir,
            d.path().join("cache").join(&rev).join("examples/simple")
        );
        assert_eq!((e.set.as_str(), e.description.as_str()), ("corpus", "q"));
        assert_eq!(e.source.as_ref().unwrap().rev, rev);
        assert_eq!(e.region, "eu-west-1");
        assert!(
            e.modules.is_some(),
            "the repository's own module beside the root"
        );
        assert_eq!(source_of(&estates, "corpus-q"), e.source);

        manifest("[knobs]\nremoved_block = \"aws_sqs_queue.q\"\n");
        let msg = Estate::load(&estates, "corpus-q", &at)
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("a corpus estate ([source]) names no [knobs]"),
            "{msg}"
        );
        manifest("");
        let msg = Estate::load(&estates, "corpus-q", &no_checkouts())
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("estate.toml") && msg.contains("fetching"),
            "{msg}"
        );
    }
}
