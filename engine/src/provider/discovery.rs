//! Finding a provider binary on disk, where terraform would find it.
//!
//! Given a source address (`hashicorp/aws`) and a version constraint
//! (`>= 5.0, < 6.0`), [`Places`] searches, in order:
//!
//! 1. the root's `.terraform/providers` (what `terraform init` installed);
//!    a match there wins, as terraform runs with what init selected;
//! 2. the plugin cache (`TF_PLUGIN_CACHE_DIR`, else the CLI config's
//!    `plugin_cache_dir`);
//! 3. the filesystem mirrors of the CLI config's `provider_installation`
//!    block (with their `include`/`exclude` patterns), or, when the config
//!    has no such block, terraform's implicit local mirrors:
//!    `terraform.d/plugins` in the working directory,
//!    `~/.terraform.d/plugins`, and `terraform/plugins` under
//!    `$XDG_DATA_HOME` and each of `$XDG_DATA_DIRS`.
//!
//! Among places 2 and 3 the newest matching version wins (the earlier place
//! on a tie), as terraform's installer picks the newest version any source
//! offers. The CLI config is `TF_CLI_CONFIG_FILE`, else `~/.terraformrc`.
//! A place holds packages in the unpacked layout
//! (`HOST/NAMESPACE/TYPE/VERSION/OS_ARCH/terraform-provider-TYPE*`) or the
//! packed one `terraform providers mirror` writes
//! (`HOST/NAMESPACE/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip`);
//! network installation is not supported. When nothing matches, the error
//! lists every place looked and what was there.
//!
//! The engine's commands launch only what the lock file selects
//! ([`super::locked`]); `Places` serves tools that look for a provider
//! before any root is initialised, such as the gauntlet's machine check.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The registry host a short source address (`hashicorp/aws`) means.
pub const DEFAULT_REGISTRY: &str = "registry.terraform.io";

/// A provider's source address: `registry.terraform.io/hashicorp/aws`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProviderSource {
    pub hostname: String,
    pub namespace: String,
    pub type_name: String,
}

impl FromStr for ProviderSource {
    type Err = DiscoveryError;

    /// Parses `TYPE`, `NAMESPACE/TYPE` or `HOST/NAMESPACE/TYPE`; a bare
    /// type means namespace `hashicorp`, as terraform's legacy default.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parts: Vec<&str> = s.split('/').collect();
        let valid = |p: &str| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        };
        let (hostname, namespace, type_name) = match parts.as_slice() {
            [t] => (DEFAULT_REGISTRY, "hashicorp", *t),
            [n, t] => (DEFAULT_REGISTRY, *n, *t),
            [h, n, t] => (*h, *n, *t),
            _ => ("", "", ""),
        };
        if ![hostname, namespace, type_name].iter().all(|p| valid(p)) {
            return Err(DiscoveryError::Source { text: s.into() });
        }
        Ok(ProviderSource {
            hostname: hostname.to_ascii_lowercase(),
            namespace: namespace.to_ascii_lowercase(),
            type_name: type_name.to_ascii_lowercase(),
        })
    }
}

impl fmt::Display for ProviderSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.hostname, self.namespace, self.type_name)
    }
}

impl ProviderSource {
    /// The short form terraform prints: `hashicorp/aws` on the default
    /// registry, the full address elsewhere.
    pub fn for_display(&self) -> String {
        if self.hostname == DEFAULT_REGISTRY {
            format!("{}/{}", self.namespace, self.type_name)
        } else {
            self.to_string()
        }
    }

    pub(crate) fn package_dir(&self, base: &Path) -> PathBuf {
        base.join(&self.hostname)
            .join(&self.namespace)
            .join(&self.type_name)
    }
}

/// A provider version: `MAJOR.MINOR.PATCH[-PRERELEASE]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub prerelease: Option<String>,
}

impl FromStr for Version {
    type Err = DiscoveryError;

    /// Parses a full version; build metadata (`+...`) is ignored.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (v, parts) = parse_version_prefix(s)?;
        if parts != 3 {
            return Err(DiscoveryError::Version { text: s.into() });
        }
        Ok(v)
    }
}

/// Parses a possibly partial version (`5`, `5.1`, `5.1.2-beta1`) and
/// returns how many numeric parts it had; missing parts are zero.
fn parse_version_prefix(s: &str) -> Result<(Version, usize), DiscoveryError> {
    let error = || DiscoveryError::Version { text: s.into() };
    let text = s.trim().trim_start_matches('v');
    let text = text.split_once('+').map_or(text, |(v, _)| v);
    let (numbers, prerelease) = match text.split_once('-') {
        Some((n, p)) if !p.is_empty() => (n, Some(p.to_string())),
        Some(_) => return Err(error()),
        None => (text, None),
    };
    let parts: Vec<u64> = numbers
        .split('.')
        .map(|p| p.parse::<u64>().map_err(|_| error()))
        .collect::<Result<_, _>>()?;
    if parts.is_empty() || parts.len() > 3 || (prerelease.is_some() && parts.len() != 3) {
        return Err(error());
    }
    let part = |i: usize| parts.get(i).copied().unwrap_or(0);
    Ok((
        Version {
            major: part(0),
            minor: part(1),
            patch: part(2),
            prerelease,
        },
        parts.len(),
    ))
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (&self.prerelease, &other.prerelease) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some(a), Some(b)) => compare_prerelease(a, b),
            })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Semver precedence of prerelease identifiers: numeric ones compare as
/// numbers and sort before alphanumeric ones.
fn compare_prerelease(a: &str, b: &str) -> Ordering {
    let mut a = a.split('.');
    let mut b = b.split('.');
    loop {
        match (a.next(), b.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(x), Ok(y)) => x.cmp(&y),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    (Err(_), Err(_)) => x.cmp(y),
                };
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if let Some(pre) = &self.prerelease {
            write!(f, "-{pre}")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
    /// `~>`: at least the version, below the next increment of its
    /// second-to-last given part.
    Pessimistic,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Condition {
    op: Op,
    version: Version,
    /// How many numeric parts were written (for `~>`).
    parts: usize,
}

/// A terraform version constraint: comma-separated conditions, all of
/// which must hold. An empty constraint allows any release version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionConstraint {
    conditions: Vec<Condition>,
    text: String,
}

impl FromStr for VersionConstraint {
    type Err = DiscoveryError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut conditions = Vec::new();
        for raw in s.split(',').map(str::trim).filter(|c| !c.is_empty()) {
            let (op, rest) = [
                ("~>", Op::Pessimistic),
                (">=", Op::Ge),
                ("<=", Op::Le),
                ("!=", Op::Ne),
                (">", Op::Gt),
                ("<", Op::Lt),
                ("=", Op::Eq),
            ]
            .iter()
            .find_map(|(sym, op)| raw.strip_prefix(sym).map(|rest| (*op, rest)))
            .unwrap_or((Op::Eq, raw));
            let (version, parts) = parse_version_prefix(rest)
                .map_err(|_| DiscoveryError::Constraint { text: s.into() })?;
            conditions.push(Condition { op, version, parts });
        }
        Ok(VersionConstraint {
            conditions,
            text: s.trim().into(),
        })
    }
}

impl fmt::Display for VersionConstraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.text.is_empty() {
            write!(f, "any version")
        } else {
            write!(f, "{}", self.text)
        }
    }
}

impl VersionConstraint {
    /// Combines two constraints (as several `required_providers` entries
    /// for one provider combine).
    pub fn and(mut self, other: &VersionConstraint) -> VersionConstraint {
        self.conditions.extend(other.conditions.iter().cloned());
        self.text = match (self.text.is_empty(), other.text.is_empty()) {
            (_, true) => self.text,
            (true, false) => other.text.clone(),
            (false, false) => format!("{}, {}", self.text, other.text),
        };
        self
    }

    /// Whether no condition is given (any release version is allowed).
    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty()
    }

    /// terraform's normalized form, as the lock file and `init` write it:
    /// each condition once, missing version parts written as zero, sorted
    /// by version and then by operator (`>`, `>=`, `=`, `~>` with three
    /// parts, `~>` with two, `<=`, `<`, `!=`), `=` left out; `~> 5` and
    /// `~> 5.1` keep two parts.
    pub fn canonical(&self) -> String {
        let key = |c: &Condition| match c.op {
            Op::Gt => 1,
            Op::Ge => 2,
            Op::Eq => 3,
            Op::Pessimistic if c.parts == 3 => 4,
            Op::Pessimistic => 5,
            Op::Le => 6,
            Op::Lt => 7,
            Op::Ne => 8,
        };
        let mut terms: Vec<(&Version, u8)> = self
            .conditions
            .iter()
            .map(|c| (&c.version, key(c)))
            .collect();
        terms.sort();
        terms.dedup();
        terms
            .iter()
            .map(|(v, op)| {
                let symbol = ["", "> ", ">= ", "", "~> ", "~> ", "<= ", "< ", "!= "][*op as usize];
                let pre = v
                    .prerelease
                    .as_ref()
                    .map(|p| format!("-{p}"))
                    .unwrap_or_default();
                if *op == 5 {
                    format!("{symbol}{}.{}{pre}", v.major, v.minor)
                } else {
                    format!("{symbol}{v}")
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether `v` satisfies every condition. A prerelease is allowed only
    /// when some condition names it exactly, as in terraform.
    pub fn allows(&self, v: &Version) -> bool {
        if v.prerelease.is_some()
            && !self
                .conditions
                .iter()
                .any(|c| c.op == Op::Eq && &c.version == v)
        {
            return false;
        }
        self.conditions.iter().all(|c| c.allows(v))
    }
}

impl Condition {
    fn allows(&self, v: &Version) -> bool {
        let c = &self.version;
        match self.op {
            Op::Eq => v == c,
            Op::Ne => v != c,
            Op::Gt => v > c,
            Op::Ge => v >= c,
            Op::Lt => v < c,
            Op::Le => v <= c,
            Op::Pessimistic => {
                let upper = match self.parts {
                    1 | 2 => (c.major + 1, 0, 0),
                    _ => (c.major, c.minor + 1, 0),
                };
                v >= c && (v.major, v.minor, v.patch) < upper
            }
        }
    }
}

/// Why discovery failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiscoveryError {
    #[error("invalid provider source address {text:?}")]
    Source { text: String },
    #[error("invalid version {text:?}")]
    Version { text: String },
    #[error("invalid version constraint {text:?}")]
    Constraint { text: String },
    #[error("could not read the CLI configuration {}: {reason}", path.display())]
    CliConfig { path: PathBuf, reason: String },
    #[error(
        "no provider {} matching {} for {}; looked in:\n{}",
        .0.source,
        .0.constraint,
        .0.target,
        list(&.0.looked)
    )]
    NotFound(Box<NotFound>),
}

/// A failed search: what was sought, and every place looked.
#[derive(Debug)]
pub struct NotFound {
    pub source: ProviderSource,
    pub constraint: VersionConstraint,
    /// The platform sought, such as `linux_amd64`.
    pub target: String,
    pub looked: Vec<Looked>,
}

fn list(looked: &[Looked]) -> String {
    looked
        .iter()
        .map(|l| format!("  - {}", l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One place discovery looked, and what it found there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Looked {
    pub kind: PlaceKind,
    pub path: PathBuf,
    pub finding: String,
}

impl fmt::Display for Looked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            self.path.display(),
            self.kind,
            self.finding
        )
    }
}

/// What kind of place a directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaceKind {
    /// The root's `.terraform/providers`.
    Installed,
    PluginCache,
    /// A `filesystem_mirror` from the CLI config.
    FilesystemMirror,
    /// One of terraform's implicit local mirror directories.
    ImplicitMirror,
    /// The CLI configuration file itself.
    CliConfig,
}

impl fmt::Display for PlaceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PlaceKind::Installed => "installed by init",
            PlaceKind::PluginCache => "plugin cache",
            PlaceKind::FilesystemMirror => "filesystem mirror",
            PlaceKind::ImplicitMirror => "implicit local mirror",
            PlaceKind::CliConfig => "CLI configuration",
        })
    }
}

#[derive(Debug, Clone)]
struct Place {
    kind: PlaceKind,
    dir: PathBuf,
    include: Vec<String>,
    exclude: Vec<String>,
}

/// A provider package that [`Places::find`] chose: an executable in an
/// unpacked package, or a packed archive `init` unpacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundPackage {
    pub source: ProviderSource,
    pub version: Version,
    /// The executable, or the `.zip` archive when `packed`.
    pub path: PathBuf,
    pub packed: bool,
    /// The place it was found in.
    pub place: PathBuf,
}

/// A provider binary that discovery chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundProvider {
    pub source: ProviderSource,
    pub version: Version,
    pub executable: PathBuf,
    /// The place it was found in.
    pub place: PathBuf,
}

/// The ordered list of places to search, read from the environment and CLI
/// configuration once.
#[derive(Debug, Clone)]
pub struct Places {
    places: Vec<Place>,
    /// Notes about the configuration itself, reported with a failed search.
    notes: Vec<Looked>,
    target: String,
}

impl Places {
    /// The places for a root directory, from the process environment.
    pub fn for_root(root: &Path) -> Result<Places, DiscoveryError> {
        Places::for_root_with(root, &|name| std::env::var_os(name), &current_target())
    }

    /// The places for a root directory, with environment variables read
    /// through `env` and binaries for `target` (`linux_amd64`).
    pub fn for_root_with(
        root: &Path,
        env: &dyn Fn(&str) -> Option<OsString>,
        target: &str,
    ) -> Result<Places, DiscoveryError> {
        let installation = Installation::for_root_with(root, env)?;
        let mut places = vec![Place {
            kind: PlaceKind::Installed,
            dir: root.join(".terraform").join("providers"),
            include: vec![],
            exclude: vec![],
        }];
        if let Some(cache) = installation.plugin_cache {
            places.push(Place {
                kind: PlaceKind::PluginCache,
                dir: cache,
                include: vec![],
                exclude: vec![],
            });
        }
        let explicit = installation.explicit;
        places.extend(installation.methods.into_iter().filter_map(|m| {
            let Location::FilesystemMirror(dir) = m.location else {
                return None;
            };
            Some(Place {
                kind: if explicit {
                    PlaceKind::FilesystemMirror
                } else {
                    PlaceKind::ImplicitMirror
                },
                dir,
                include: m.include,
                exclude: m.exclude,
            })
        }));
        let notes = installation.notes;
        Ok(Places {
            places,
            notes,
            target: target.into(),
        })
    }

    /// Only the given filesystem mirrors, searched in order.
    pub fn mirrors(dirs: impl IntoIterator<Item = PathBuf>) -> Places {
        Places {
            places: Vec::new(),
            notes: Vec::new(),
            target: current_target(),
        }
        .with_mirrors(dirs)
    }

    /// These places, then the given filesystem mirrors after them.
    pub fn with_mirrors(mut self, dirs: impl IntoIterator<Item = PathBuf>) -> Places {
        self.places.extend(dirs.into_iter().map(|dir| Place {
            kind: PlaceKind::FilesystemMirror,
            dir,
            include: vec![],
            exclude: vec![],
        }));
        self
    }

    /// The newest binary for `source` that `constraint` allows.
    pub fn find(
        &self,
        source: &ProviderSource,
        constraint: &VersionConstraint,
    ) -> Result<FoundPackage, DiscoveryError> {
        let mut looked = self.notes.clone();
        let mut best: Option<FoundPackage> = None;
        for place in &self.places {
            let (found, finding) = self.search(place, source, constraint);
            looked.push(Looked {
                kind: place.kind,
                path: place.dir.clone(),
                finding,
            });
            if let Some(found) = found {
                if place.kind == PlaceKind::Installed {
                    return Ok(found);
                }
                if best.as_ref().is_none_or(|b| found.version > b.version) {
                    best = Some(found);
                }
            }
        }
        best.ok_or_else(|| {
            DiscoveryError::NotFound(Box::new(NotFound {
                source: source.clone(),
                constraint: constraint.clone(),
                target: self.target.clone(),
                looked,
            }))
        })
    }

    /// Searches one place; returns the newest match (unpacked before
    /// packed at one version) and a finding for the error report.
    fn search(
        &self,
        place: &Place,
        source: &ProviderSource,
        constraint: &VersionConstraint,
    ) -> (Option<FoundPackage>, String) {
        if !place.dir.is_dir() {
            return (None, "no such directory".into());
        }
        if !place.include.is_empty() && !place.include.iter().any(|p| pattern_matches(p, source)) {
            return (None, format!("{source} is not in its include list"));
        }
        if place.exclude.iter().any(|p| pattern_matches(p, source)) {
            return (None, format!("{source} is in its exclude list"));
        }
        let package_dir = source.package_dir(&place.dir);
        let Ok(entries) = fs::read_dir(&package_dir) else {
            return (None, format!("no {source}"));
        };
        // (version, packed, the executable or archive for this platform)
        let mut versions: Vec<(Version, bool, Option<PathBuf>)> = Vec::new();
        let archive_prefix = format!("terraform-provider-{}_", source.type_name);
        let archive_suffix = format!("_{}.zip", self.target);
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(v) = name
                .strip_prefix(&archive_prefix)
                .and_then(|r| r.strip_suffix(".zip"))
            {
                // Another platform's archive names a version absent here.
                let here = name.ends_with(&archive_suffix).then(|| entry.path());
                let v = v.split('_').next().unwrap_or(v);
                if let Ok(v) = v.parse::<Version>() {
                    versions.push((v, true, here));
                }
            } else if let Ok(v) = name.parse::<Version>() {
                let executable = executable_in(&entry.path().join(&self.target), &source.type_name);
                versions.push((v, false, executable));
            }
        }
        versions.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut present = Vec::new();
        for (version, packed, path) in versions {
            let layout = if packed { " (packed)" } else { "" };
            present.push(match &path {
                Some(_) => format!("{version}{layout}"),
                None => format!("{version}{layout} (no {} package)", self.target),
            });
            if let (Some(path), true) = (path, constraint.allows(&version)) {
                return (
                    Some(FoundPackage {
                        source: source.clone(),
                        version: version.clone(),
                        path,
                        packed,
                        place: place.dir.clone(),
                    }),
                    format!("found {version}{layout}"),
                );
            }
        }
        present.dedup();
        let finding = if present.is_empty() {
            format!("no versions of {source}")
        } else {
            format!("versions {} present, none matches", present.join(", "))
        };
        (None, finding)
    }
}

/// The executable in an unpacked package directory, chosen as terraform
/// does: the first file whose name starts with `terraform-provider-TYPE`.
fn executable_in(dir: &Path, type_name: &str) -> Option<PathBuf> {
    let prefix = format!("terraform-provider-{type_name}");
    let mut names: Vec<PathBuf> = fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .filter(|p| {
            fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .collect();
    names.sort();
    names.into_iter().next()
}

/// Matches an include/exclude pattern (`hashicorp/*`,
/// `registry.terraform.io/hashicorp/aws`, `*/*`) against a source.
fn pattern_matches(pattern: &str, source: &ProviderSource) -> bool {
    let parts: Vec<&str> = pattern.split('/').collect();
    let (host, namespace, type_name) = match parts.as_slice() {
        [n, t] => (DEFAULT_REGISTRY, *n, *t),
        [h, n, t] => (*h, *n, *t),
        _ => return false,
    };
    let part = |p: &str, v: &str| p == "*" || p.eq_ignore_ascii_case(v);
    part(host, &source.hostname)
        && part(namespace, &source.namespace)
        && part(type_name, &source.type_name)
}

fn expand_home(path: &Path, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}

/// This machine's platform in terraform's notation, such as `linux_amd64`.
pub fn current_target() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    };
    format!("{}_{arch}", std::env::consts::OS)
}

/// What the CLI configuration says of module hosts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hosts {
    /// Per host, the services its `host` block names, by service ID
    /// (`modules.v1`).
    pub services: BTreeMap<String, BTreeMap<String, String>>,
    /// Per host, the API token a `credentials` block or a `TF_TOKEN_*`
    /// variable gives.
    pub tokens: BTreeMap<String, String>,
}

/// Where `init` installs providers from, as the CLI configuration says:
/// the methods of its `provider_installation` block in order, or, without
/// one, terraform's implied local mirrors and then the origin registry;
/// and the plugin cache.
#[derive(Debug, Clone)]
pub struct Installation {
    /// The module hosts the CLI configuration names: `host` blocks'
    /// services, and tokens from `credentials` blocks and `TF_TOKEN_*`.
    pub hosts: Hosts,
    pub plugin_cache: Option<PathBuf>,
    /// `plugin_cache_may_break_dependency_lock_file`: a cached package may
    /// be used even when the lock file has no entry to check it against.
    pub cache_may_break_lock: bool,
    pub methods: Vec<Method>,
    /// Whether the methods come from a `provider_installation` block.
    pub explicit: bool,
    /// The CLI configuration file when it is missing.
    pub notes: Vec<Looked>,
}

/// One installation method, and the providers it may serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Method {
    pub location: Location,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

impl Method {
    /// Whether this method may serve `source` (terraform's include and
    /// exclude patterns).
    pub fn handles(&self, source: &ProviderSource) -> bool {
        if self.exclude.iter().any(|p| pattern_matches(p, source)) {
            return false;
        }
        self.include.is_empty() || self.include.iter().any(|p| pattern_matches(p, source))
    }
}

/// Where a method installs from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A directory in the packed or unpacked layout.
    FilesystemMirror(PathBuf),
    /// An HTTPS mirror (`network_mirror`).
    NetworkMirror(String),
    /// The provider's origin registry (`direct`).
    Direct,
}

impl Installation {
    /// From the process environment.
    pub fn for_root(root: &Path) -> Result<Installation, DiscoveryError> {
        Installation::for_root_with(root, &|name| std::env::var_os(name))
    }

    /// With environment variables read through `env`. Without a
    /// `provider_installation` block, the implied local mirrors that exist
    /// come first (the working directory's `terraform.d/plugins`,
    /// `~/.terraform.d/plugins`, `terraform/plugins` under
    /// `$XDG_DATA_HOME` and each of `$XDG_DATA_DIRS`), then the registry
    /// for every provider none of them holds.
    pub fn for_root_with(
        root: &Path,
        env: &dyn Fn(&str) -> Option<OsString>,
    ) -> Result<Installation, DiscoveryError> {
        let var = |name: &str| env(name).filter(|v| !v.is_empty());
        let home = var("HOME").map(PathBuf::from);
        let mut notes = Vec::new();
        let config_path = var("TF_CLI_CONFIG_FILE")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".terraformrc")));
        let config = match &config_path {
            Some(path) if path.is_file() => CliConfig::read(path)?,
            Some(path) => {
                notes.push(Looked {
                    kind: PlaceKind::CliConfig,
                    path: path.clone(),
                    finding: "no such file".into(),
                });
                CliConfig::default()
            }
            None => CliConfig::default(),
        };
        let plugin_cache = var("TF_PLUGIN_CACHE_DIR")
            .map(PathBuf::from)
            .or(config.plugin_cache_dir)
            .map(|dir| expand_home(&dir, home.as_deref()));
        let cache_may_break_lock = var("TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE").is_some()
            || config.cache_may_break_lock;
        let explicit = config.methods.is_some();
        let methods = match config.methods {
            Some(methods) => methods
                .into_iter()
                .map(|mut m| {
                    if let Location::FilesystemMirror(dir) = &m.location {
                        m.location = Location::FilesystemMirror(expand_home(dir, home.as_deref()));
                    }
                    m
                })
                .collect(),
            None => {
                let mut implicit = vec![root.join("terraform.d").join("plugins")];
                if let Some(home) = &home {
                    implicit.push(home.join(".terraform.d").join("plugins"));
                }
                let data_home = var("XDG_DATA_HOME")
                    .map(PathBuf::from)
                    .or_else(|| home.as_ref().map(|h| h.join(".local").join("share")));
                let data_dirs =
                    var("XDG_DATA_DIRS").unwrap_or_else(|| "/usr/local/share:/usr/share".into());
                implicit.extend(
                    data_home
                        .into_iter()
                        .chain(std::env::split_paths(&data_dirs))
                        .map(|dir| dir.join("terraform").join("plugins")),
                );
                let mut methods: Vec<Method> = implicit
                    .into_iter()
                    .map(|dir| Method {
                        location: Location::FilesystemMirror(dir),
                        include: vec![],
                        exclude: vec![],
                    })
                    .collect();
                methods.push(Method {
                    location: Location::Direct,
                    include: vec![],
                    exclude: vec![],
                });
                methods
            }
        };
        Ok(Installation {
            hosts: config.hosts,
            plugin_cache,
            cache_may_break_lock,
            methods,
            explicit,
            notes,
        })
    }
}

#[derive(Debug, Default)]
struct CliConfig {
    plugin_cache_dir: Option<PathBuf>,
    cache_may_break_lock: bool,
    hosts: Hosts,
    /// The methods of a `provider_installation` block, when the
    /// configuration has one.
    methods: Option<Vec<Method>>,
}

impl CliConfig {
    fn read(path: &Path) -> Result<CliConfig, DiscoveryError> {
        let error = |reason: String| DiscoveryError::CliConfig {
            path: path.into(),
            reason,
        };
        let text = fs::read_to_string(path).map_err(|e| error(e.to_string()))?;
        CliConfig::parse(&text).map_err(error)
    }

    fn parse(text: &str) -> Result<CliConfig, String> {
        let body = hcl::parse(text).map_err(|e| e.to_string())?;
        let mut config = CliConfig::default();
        for attr in body.attributes() {
            match attr.key() {
                "plugin_cache_dir" => {
                    config.plugin_cache_dir = Some(string(attr.expr(), "plugin_cache_dir")?.into())
                }
                "plugin_cache_may_break_dependency_lock_file" => {
                    config.cache_may_break_lock = matches!(attr.expr(), hcl::Expression::Bool(true))
                }
                _ => {}
            }
        }
        for block in body.blocks() {
            let label = block.labels().first().map(|l| l.as_str().to_lowercase());
            match (block.identifier(), label) {
                ("host", Some(host)) => {
                    let services = block
                        .body()
                        .attributes()
                        .find(|a| a.key() == "services")
                        .map(|a| match a.expr() {
                            hcl::Expression::Object(o) => o
                                .iter()
                                .map(|(k, v)| Ok((k.to_string(), string(v, "a service URL")?)))
                                .collect::<Result<BTreeMap<_, _>, String>>(),
                            _ => Err("a host block's services must be an object".into()),
                        })
                        .transpose()?
                        .unwrap_or_default();
                    config.hosts.services.insert(host, services);
                    continue;
                }
                ("credentials", Some(host)) => {
                    if let Some(t) = block.body().attributes().find(|a| a.key() == "token") {
                        config.hosts.tokens.insert(host, string(t.expr(), "token")?);
                    }
                    continue;
                }
                ("provider_installation", _) => {}
                _ => continue,
            }
            let methods = config.methods.get_or_insert_with(Vec::new);
            for method in block.body().blocks() {
                let mut path = None;
                let mut url = None;
                let mut include = Vec::new();
                let mut exclude = Vec::new();
                for attr in method.body().attributes() {
                    match attr.key() {
                        "path" => path = Some(string(attr.expr(), "path")?),
                        "url" => url = Some(string(attr.expr(), "url")?),
                        "include" => include = strings(attr.expr(), "include")?,
                        "exclude" => exclude = strings(attr.expr(), "exclude")?,
                        _ => {}
                    }
                }
                let location = match method.identifier() {
                    "filesystem_mirror" => Location::FilesystemMirror(
                        path.ok_or("a filesystem_mirror block needs a path")?.into(),
                    ),
                    "network_mirror" => {
                        Location::NetworkMirror(url.ok_or("a network_mirror block needs a url")?)
                    }
                    "direct" => Location::Direct,
                    // dev_overrides and other blocks choose no source.
                    _ => continue,
                };
                methods.push(Method {
                    location,
                    include,
                    exclude,
                });
            }
        }
        Ok(config)
    }
}

fn string(expr: &hcl::Expression, what: &str) -> Result<String, String> {
    match expr {
        hcl::Expression::String(s) => Ok(s.clone()),
        _ => Err(format!("{what} must be a string")),
    }
}

fn strings(expr: &hcl::Expression, what: &str) -> Result<Vec<String>, String> {
    match expr {
        hcl::Expression::Array(items) => items.iter().map(|e| string(e, what)).collect(),
        _ => Err(format!("{what} must be a list of strings")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn allows(constraint: &str, version: &str) -> bool {
        constraint
            .parse::<VersionConstraint>()
            .unwrap()
            .allows(&v(version))
    }

    #[test]
    fn sources() {
        let s: ProviderSource = "hashicorp/aws".parse().unwrap();
        assert_eq!(s.to_string(), "registry.terraform.io/hashicorp/aws");
        let s: ProviderSource = "aws".parse().unwrap();
        assert_eq!(s.to_string(), "registry.terraform.io/hashicorp/aws");
        let s: ProviderSource = "example.com/Acme/Thing".parse().unwrap();
        assert_eq!(s.to_string(), "example.com/acme/thing");
        for bad in ["", "a//b", "a/b/c/d", "a b/c"] {
            assert!(bad.parse::<ProviderSource>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn version_order() {
        assert!(v("5.100.0") > v("5.99.9"));
        assert!(v("1.0.0") > v("1.0.0-rc1"));
        assert!(v("1.0.0-beta.11") > v("1.0.0-beta.2"));
        assert!(v("1.0.0-beta") > v("1.0.0-alpha.1"));
        assert!("1.2".parse::<Version>().is_err());
        assert_eq!(v("v1.2.3+build").to_string(), "1.2.3");
    }

    #[test]
    fn constraints() {
        assert!(allows("5.100.0", "5.100.0"));
        assert!(allows("= 5.100.0", "5.100.0"));
        assert!(!allows("= 5.100.0", "5.100.1"));
        assert!(allows(">= 5.0", "5.100.0"));
        assert!(!allows(">= 5.0", "4.9.9"));
        assert!(allows(">= 5.0, < 6.0.0", "5.100.0"));
        assert!(!allows(">= 5.0, < 6.0.0", "6.0.0"));
        assert!(allows("~> 5.0", "5.100.0"));
        assert!(!allows("~> 5.0", "6.0.0"));
        assert!(allows("~> 5.99.1", "5.99.7"));
        assert!(!allows("~> 5.99.1", "5.100.0"));
        assert!(allows("!= 5.99.0", "5.100.0"));
        assert!(allows("> 5.99.0, <= 5.100.0", "5.100.0"));
        assert!(allows("", "1.0.0"));
        assert!(!allows(">= 1.0.0", "2.0.0-beta1"));
        assert!(allows("2.0.0-beta1", "2.0.0-beta1"));
        assert!("=> 1.0".parse::<VersionConstraint>().is_err());
        assert!(">= one".parse::<VersionConstraint>().is_err());
    }

    #[test]
    fn canonical_constraints_as_terraform_writes_them() {
        let canonical = |s: &str| s.parse::<VersionConstraint>().unwrap().canonical();
        assert_eq!(
            canonical(">= 5.0, ~> 5.1, != 4.0.0, >= 5.0.0"),
            "!= 4.0.0, >= 5.0.0, ~> 5.1"
        );
        assert_eq!(canonical("= 5.100.0"), "5.100.0");
        assert_eq!(canonical("~> 2"), "~> 2.0");
        assert_eq!(
            canonical("< 6.0, ~> 5.99.1, > 5"),
            "> 5.0.0, ~> 5.99.1, < 6.0.0"
        );
        assert_eq!(canonical("2.0.0-beta1"), "2.0.0-beta1");
        assert_eq!(canonical(""), "");
        assert_eq!(
            "hashicorp/aws"
                .parse::<ProviderSource>()
                .unwrap()
                .for_display(),
            "hashicorp/aws"
        );
        assert_eq!(
            "example.com/a/b"
                .parse::<ProviderSource>()
                .unwrap()
                .for_display(),
            "example.com/a/b"
        );
    }

    #[test]
    fn cli_config() {
        let config = CliConfig::parse(
            r#"
            plugin_cache_dir = "/cache"
            provider_installation {
              filesystem_mirror {
                path    = "/mirror"
                include = ["hashicorp/*"]
              }
              direct {
                exclude = ["hashicorp/*"]
              }
            }
            "#,
        )
        .unwrap();
        assert_eq!(config.plugin_cache_dir, Some(PathBuf::from("/cache")));
        let methods = config.methods.unwrap();
        assert_eq!(methods.len(), 2);
        assert_eq!(
            methods[0].location,
            Location::FilesystemMirror(PathBuf::from("/mirror"))
        );
        assert_eq!(methods[0].include, vec!["hashicorp/*"]);
        assert_eq!(methods[1].location, Location::Direct);
        let aws: ProviderSource = "hashicorp/aws".parse().unwrap();
        assert!(methods[0].handles(&aws) && !methods[1].handles(&aws));
        assert!(CliConfig::parse("provider_installation { filesystem_mirror {} }").is_err());
    }

    #[test]
    fn patterns() {
        let aws: ProviderSource = "hashicorp/aws".parse().unwrap();
        assert!(pattern_matches("hashicorp/*", &aws));
        assert!(pattern_matches("registry.terraform.io/*/aws", &aws));
        assert!(pattern_matches("*/*", &aws));
        assert!(!pattern_matches("example.com/*/*", &aws));
        assert!(!pattern_matches("aws", &aws));
    }

    /// A provider package in the unpacked layout under `base`.
    fn package(base: &Path, source: &str, version: &str, target: &str) -> PathBuf {
        let source: ProviderSource = source.parse().unwrap();
        let dir = source.package_dir(base).join(version).join(target);
        fs::create_dir_all(&dir).unwrap();
        let exe = dir.join(format!(
            "terraform-provider-{}_v{version}_x5",
            source.type_name
        ));
        fs::write(&exe, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();
        exe
    }

    fn env_of(vars: HashMap<&'static str, String>) -> impl Fn(&str) -> Option<OsString> {
        move |name| vars.get(name).map(OsString::from)
    }

    #[test]
    fn finds_the_newest_match_across_places_and_prefers_installed() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        let root = t.join("root");
        fs::create_dir_all(&root).unwrap();
        let mirror = t.join("mirror");
        let cache = t.join("cache");
        package(&mirror, "hashicorp/aws", "5.99.0", "linux_amd64");
        let newest = package(&mirror, "hashicorp/aws", "5.100.0", "linux_amd64");
        package(&mirror, "hashicorp/aws", "6.0.0", "darwin_arm64");
        package(&cache, "hashicorp/aws", "5.99.0", "linux_amd64");
        let config = t.join("cli.tfrc");
        fs::write(
            &config,
            format!(
                "plugin_cache_dir = \"{}\"\nprovider_installation {{\n filesystem_mirror {{ path = \"{}\" }}\n}}\n",
                cache.display(),
                mirror.display()
            ),
        )
        .unwrap();
        let env = env_of(HashMap::from([(
            "TF_CLI_CONFIG_FILE",
            config.display().to_string(),
        )]));
        let places = Places::for_root_with(&root, &env, "linux_amd64").unwrap();
        let aws: ProviderSource = "hashicorp/aws".parse().unwrap();

        let found = places.find(&aws, &">= 5.0".parse().unwrap()).unwrap();
        assert_eq!(
            (found.version.to_string(), &found.path),
            ("5.100.0".into(), &newest)
        );
        let found = places.find(&aws, &"= 5.99.0".parse().unwrap()).unwrap();
        assert_eq!(found.place, cache);

        let installed = package(
            &root.join(".terraform/providers"),
            "hashicorp/aws",
            "5.99.0",
            "linux_amd64",
        );
        let found = places.find(&aws, &">= 5.0".parse().unwrap()).unwrap();
        assert_eq!(found.path, installed);
    }

    /// The packed layout `terraform providers mirror` writes: archives
    /// beside the version folders, one per platform.
    #[test]
    fn finds_packed_archives_as_terraform_providers_mirror_writes_them() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        let mirror = t.join("mirror");
        let aws: ProviderSource = "hashicorp/aws".parse().unwrap();
        let dir = aws.package_dir(&mirror);
        fs::create_dir_all(&dir).unwrap();
        let here = current_target();
        for name in [
            format!("terraform-provider-aws_5.100.0_{here}.zip"),
            "terraform-provider-aws_5.100.0_plan9_mips.zip".into(),
            "terraform-provider-aws_6.0.0_plan9_mips.zip".into(),
        ] {
            fs::write(dir.join(name), "PK").unwrap();
        }
        let unpacked = package(&mirror, "hashicorp/aws", "5.99.0", &here);
        let places = Places::mirrors([mirror.clone()]);

        let found = places.find(&aws, &">= 5.0".parse().unwrap()).unwrap();
        assert_eq!(found.version.to_string(), "5.100.0");
        assert!(found.packed);
        assert_eq!(
            found.path,
            dir.join(format!("terraform-provider-aws_5.100.0_{here}.zip"))
        );
        assert_eq!(found.place, mirror);

        // An unpacked package wins over the archive of the same version.
        let same = package(&mirror, "hashicorp/aws", "5.100.0", &here);
        let found = places.find(&aws, &">= 5.0".parse().unwrap()).unwrap();
        assert_eq!((found.path, found.packed), (same, false));
        let found = places.find(&aws, &"= 5.99.0".parse().unwrap()).unwrap();
        assert_eq!(found.path, unpacked);

        // Another platform's archive is named, never taken.
        let err = places
            .find(&aws, &">= 6.0".parse().unwrap())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("6.0.0 (packed) (no {here} package)")),
            "{err}"
        );
    }

    #[test]
    fn not_found_lists_every_place() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        let mirror = t.join("mirror");
        package(&mirror, "hashicorp/aws", "5.99.0", "linux_amd64");
        let config = t.join("cli.tfrc");
        fs::write(
            &config,
            format!(
                "provider_installation {{\n filesystem_mirror {{ path = \"{}\" }}\n filesystem_mirror {{\n path = \"{}\"\n exclude = [\"hashicorp/aws\"]\n }}\n}}\n",
                mirror.display(),
                t.join("other").display()
            ),
        )
        .unwrap();
        fs::create_dir_all(t.join("other")).unwrap();
        let env = env_of(HashMap::from([
            ("TF_CLI_CONFIG_FILE", config.display().to_string()),
            (
                "TF_PLUGIN_CACHE_DIR",
                t.join("nocache").display().to_string(),
            ),
        ]));
        let places = Places::for_root_with(t, &env, "linux_amd64").unwrap();
        let err = places
            .find(
                &"hashicorp/aws".parse().unwrap(),
                &"= 5.100.0".parse().unwrap(),
            )
            .unwrap_err()
            .to_string();
        let root_installed = t.join(".terraform/providers");
        for want in [
            "no provider registry.terraform.io/hashicorp/aws matching = 5.100.0 for linux_amd64",
            &format!("{} (installed by init): no such directory", root_installed.display()),
            &format!("{} (plugin cache): no such directory", t.join("nocache").display()),
            &format!("{} (filesystem mirror): versions 5.99.0 present, none matches", mirror.display()),
            &format!("{} (filesystem mirror): registry.terraform.io/hashicorp/aws is in its exclude list", t.join("other").display()),
        ] {
            assert!(err.contains(want), "missing {want:?} in:\n{err}");
        }
    }

    #[test]
    fn implicit_mirrors_without_installation_block() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        let home = t.join("home");
        let exe = package(
            &home.join(".terraform.d/plugins"),
            "hashicorp/aws",
            "5.100.0",
            "linux_amd64",
        );
        let env = env_of(HashMap::from([
            ("HOME", home.display().to_string()),
            ("XDG_DATA_DIRS", t.join("share").display().to_string()),
        ]));
        let places = Places::for_root_with(t, &env, "linux_amd64").unwrap();
        let found = places
            .find(
                &"hashicorp/aws".parse().unwrap(),
                &VersionConstraint::default(),
            )
            .unwrap();
        assert_eq!(found.path, exe);
        let err = places
            .find(
                &"hashicorp/nope".parse().unwrap(),
                &VersionConstraint::default(),
            )
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(".terraformrc (CLI configuration): no such file"),
            "{err}"
        );
        assert!(
            err.contains(&format!(
                "{} (implicit local mirror)",
                t.join("share/terraform/plugins").display()
            )),
            "{err}"
        );
        assert!(
            err.contains(&format!(
                "{} (implicit local mirror)",
                home.join(".local/share/terraform/plugins").display()
            )),
            "{err}"
        );
    }
}
