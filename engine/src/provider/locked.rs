//! What the dependency lock file allows a command to launch, checked as
//! terraform 1.11 checks it before `plan`, `apply` and `validate` start any
//! provider: every locked provider's package is installed in
//! `.terraform/providers` and matches one of its locked checksums, and
//! every provider the configuration requires has a locked version its
//! constraints allow. Only then are the binaries handed out.
//!
//! A root without a lock file has selected nothing, as for terraform: a
//! configuration that requires a provider is inconsistent with it until
//! `init` writes one. Installing, and writing the lock file, belong to
//! [`super::install`] and `init`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use super::cache::SchemaCache;
use super::discovery::{current_target, FoundProvider, ProviderSource, VersionConstraint};
use super::hashes;
use super::install::executable;
use super::lockfile::{Invalid, Locks};
use crate::diag::{Diagnostic, Diagnostics, Sources};

/// Why the lock file forbids launching.
#[derive(Debug)]
#[non_exhaustive]
pub enum LockError {
    /// The lock file could not be read.
    Invalid(Invalid),
    /// A locked package is missing or changed: each provider and why.
    NotInstalled(Vec<(ProviderSource, String)>),
    /// The configuration requires what the lock file does not select.
    Inconsistent {
        problems: Vec<String>,
        /// The required providers the lock file selects no version of.
        unselected: Vec<ProviderSource>,
        locks_empty: bool,
    },
}

impl LockError {
    /// terraform's diagnostics for it, and the lock file's text when the
    /// diagnostics point into it.
    pub fn diagnostics(&self) -> (Diagnostics, Sources) {
        match self {
            LockError::Invalid(invalid) => (invalid.diagnostics.clone(), invalid.sources.clone()),
            LockError::NotInstalled(problems) => {
                let list: String = problems
                    .iter()
                    .map(|(p, why)| format!("\n  - {p}: {why}"))
                    .collect();
                let suggestion = if in_automation() {
                    "You must install the required plugins before running Terraform operations."
                } else {
                    "To download the plugins required for this configuration, run:\n  choudoufu init"
                };
                let d = Diagnostic::error(
                    "Required plugins are not installed",
                    format!("The installed provider plugins are not consistent with the packages selected in the dependency lock file:{list}\n\nTerraform uses external plugins to integrate with a variety of different infrastructure services. {suggestion}"),
                );
                (d.into(), Sources::default())
            }
            LockError::Inconsistent {
                problems,
                locks_empty,
                ..
            } => {
                let list: String = problems.iter().map(|p| format!("\n  - {p}")).collect();
                let suggestion = if *locks_empty {
                    "To make the initial dependency selections that will initialize the dependency lock file, run:\n  choudoufu init"
                } else {
                    "To update the locked dependency selections to match a changed configuration, run:\n  choudoufu init -upgrade"
                };
                let d = Diagnostic::error(
                    "Inconsistent dependency lock file",
                    format!("The following dependency selections recorded in the lock file are inconsistent with the current configuration:{list}\n\n{suggestion}"),
                );
                (d.into(), Sources::default())
            }
        }
    }

    /// What `validate` reports instead: it checks no selections, but a
    /// provider with none selected is one it cannot load ("Missing required
    /// provider", as terraform's validate says it).
    pub fn validate_diagnostics(&self) -> (Diagnostics, Sources) {
        match self {
            LockError::Inconsistent { unselected, .. } if !unselected.is_empty() => {
                let mut diags = Diagnostics::default();
                for provider in unselected {
                    diags.push(Diagnostic::error(
                        "Missing required provider",
                        format!("This configuration requires provider {provider}, but that provider isn't available. You may be able to install it automatically by running:\n  choudoufu init"),
                    ));
                }
                (diags, Sources::default())
            }
            _ => self.diagnostics(),
        }
    }

    /// The configuration requires `provider`, of which the lock file
    /// selects no version.
    pub(super) fn unselected(provider: &ProviderSource, locks_empty: bool) -> LockError {
        LockError::Inconsistent {
            problems: vec![unselected_line(provider)],
            unselected: vec![provider.clone()],
            locks_empty,
        }
    }
}

/// terraform's line for a required provider the lock file selects no
/// version of.
fn unselected_line(provider: &ProviderSource) -> String {
    format!("provider {provider}: required by this configuration but no version is selected")
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let LockError::Invalid(invalid) = self {
            return write!(f, "{invalid}");
        }
        let (diags, _) = self.diagnostics();
        let d = diags.iter().next().expect("one diagnostic");
        write!(f, "{}: {}", d.summary, d.detail)
    }
}

impl std::error::Error for LockError {}

fn in_automation() -> bool {
    std::env::var_os("TF_IN_AUTOMATION").is_some_and(|v| !v.is_empty())
}

/// The binary of each locked provider, verified (none when the root has
/// no lock file). `required` is every provider the configuration
/// requires, with its constraints combined; `memo` remembers file
/// checksums while the files stay unchanged.
pub fn selections(
    root: &Path,
    required: &BTreeMap<ProviderSource, VersionConstraint>,
    memo: Option<&SchemaCache>,
) -> Result<BTreeMap<ProviderSource, FoundProvider>, LockError> {
    let locks = match Locks::read(root).map_err(LockError::Invalid)? {
        Some((locks, _warnings)) => locks,
        None => Locks::default(),
    };
    let base = root.join(".terraform").join("providers");
    let platform = current_target();
    let mut found = BTreeMap::new();
    let mut missing = Vec::new();
    for (provider, lock) in &locks.providers {
        let dir = provider
            .package_dir(&base)
            .join(lock.version.to_string())
            .join(&platform);
        let version = &lock.version;
        if !dir.is_dir() {
            missing.push((
                provider.clone(),
                format!(
                    "there is no package for {provider} {version} cached in .terraform/providers"
                ),
            ));
            continue;
        }
        if lock.preferred_hashes().next().is_some() {
            let matched = match hashes::h1_dir(&dir, memo) {
                Ok(h1) => lock.preferred_hashes().any(|h| *h == h1),
                Err(e) => {
                    missing.push((
                        provider.clone(),
                        format!("failed to verify checksum of {provider} {version} package cached in in .terraform/providers: {e}"),
                    ));
                    continue;
                }
            };
            if !matched {
                missing.push((
                    provider.clone(),
                    format!("the cached package for {provider} {version} (in .terraform/providers) does not match any of the checksums recorded in the dependency lock file"),
                ));
                continue;
            }
        }
        let Some(executable) = executable(&dir, &provider.type_name) else {
            missing.push((
                provider.clone(),
                format!(
                    "could not find executable file starting with terraform-provider-{}",
                    provider.type_name
                ),
            ));
            continue;
        };
        found.insert(
            provider.clone(),
            FoundProvider {
                source: provider.clone(),
                version: version.clone(),
                executable,
                place: base.clone(),
            },
        );
    }
    if !missing.is_empty() {
        return Err(LockError::NotInstalled(missing));
    }
    let mut problems = Vec::new();
    let mut unselected = Vec::new();
    for (provider, constraint) in required {
        let Some(lock) = locks.providers.get(provider) else {
            problems.push(unselected_line(provider));
            unselected.push(provider.clone());
            continue;
        };
        if !constraint.allows(&lock.version) {
            let current = constraint.canonical();
            problems.push(if current != lock.constraints {
                format!(
                    "provider {provider}: locked version selection {} doesn't match the updated version constraints \"{current}\"",
                    lock.version
                )
            } else {
                format!(
                    "provider {provider}: version constraints \"{current}\" don't match the locked version selection {}",
                    lock.version
                )
            });
        }
    }
    problems.sort();
    if !problems.is_empty() {
        return Err(LockError::Inconsistent {
            problems,
            unselected,
            locks_empty: locks.providers.is_empty(),
        });
    }
    Ok(found)
}
