//! Installing providers into a root's `.terraform/providers` as `terraform
//! init` does: for each provider the configuration requires, the version
//! the lock file selected (or, new or with `upgrade`, the newest one the
//! constraints allow), from the first source that has it for this platform;
//! through the plugin cache when there is one; checked against the lock
//! file's checksums; and the lock file's new entries.
//!
//! Sources are filesystem mirrors in the unpacked
//! (`HOST/NAMESPACE/TYPE/VERSION/OS_ARCH/`) and packed
//! (`HOST/NAMESPACE/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip`)
//! layouts: the CLI configuration's `filesystem_mirror` blocks, terraform's
//! implied local mirrors, or `-plugin-dir` directories. An unpacked package
//! is linked (a symlink, as terraform makes), a packed one unzipped. Network
//! mirrors and origin registries are not read: a provider only they could
//! serve fails, naming them with every place looked. Reporting is left to
//! the caller, through [`Event`]s and [`Problem`]s worded as terraform's.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::cache::SchemaCache;
use super::discovery::{
    current_target, Installation, Location, Method, ProviderSource, Version, VersionConstraint,
};
use super::hashes::{self, PackageHash};
use super::lockfile::{Locks, ProviderLock};

/// Where terraform's checksum documentation lives, as its errors cite it.
const CHECKSUM_DOCS: &str =
    "https://developer.hashicorp.com/terraform/language/files/dependency-lock#checksum-verification";

/// What the installer did, in terraform's order, for the caller to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Looking for the newest version the constraints allow (empty
    /// constraints: the latest version).
    Finding {
        provider: ProviderSource,
        constraints: String,
    },
    /// Keeping the version the lock file selected.
    Reusing { provider: ProviderSource },
    AlreadyInstalled {
        provider: ProviderSource,
        version: Version,
    },
    FromCache {
        provider: ProviderSource,
        version: Version,
    },
    Installing {
        provider: ProviderSource,
        version: Version,
    },
    Installed {
        provider: ProviderSource,
        version: Version,
    },
}

/// Why one provider could not be installed, as terraform words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub provider: ProviderSource,
    pub summary: String,
    pub detail: String,
}

/// The lock file's entries after installation, and the providers whose
/// entries hold only checksums computed here (terraform's "Incomplete
/// lock file information" warning).
#[derive(Debug, Clone)]
pub struct Outcome {
    pub locks: Locks,
    pub incomplete: Vec<ProviderSource>,
}

/// A package a source offers.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Package {
    Dir(PathBuf),
    Zip(PathBuf),
}

#[derive(Debug, Clone)]
struct Available {
    version: Version,
    platform: String,
    package: Package,
}

/// Installs into one root's `.terraform/providers`.
#[derive(Debug, Clone)]
pub struct Installer {
    target: PathBuf,
    cache: Option<PathBuf>,
    cache_may_break_lock: bool,
    methods: Vec<Method>,
    explicit: bool,
    platform: String,
    memo: Option<SchemaCache>,
}

impl Installer {
    /// For the root in `root`, from the sources `installation` names, or
    /// only from `plugin_dirs` when any are given (`-plugin-dir`). File
    /// checksums go through `memo` when given.
    pub fn new(
        root: &Path,
        installation: Installation,
        plugin_dirs: &[PathBuf],
        memo: Option<SchemaCache>,
    ) -> Installer {
        let (methods, explicit) = if plugin_dirs.is_empty() {
            (installation.methods, installation.explicit)
        } else {
            let methods = plugin_dirs
                .iter()
                .map(|dir| Method {
                    location: Location::FilesystemMirror(dir.clone()),
                    include: vec![],
                    exclude: vec![],
                })
                .collect();
            (methods, true)
        };
        Installer {
            target: root.join(".terraform").join("providers"),
            cache: installation.plugin_cache,
            cache_may_break_lock: installation.cache_may_break_lock,
            methods,
            explicit,
            platform: current_target(),
            memo,
        }
    }

    /// Ensures every provider in `reqs` is installed, as terraform's
    /// installer does; returns the new lock entries (those of providers no
    /// longer required dropped) and a problem per provider that failed.
    pub fn ensure(
        &self,
        previous: &Locks,
        reqs: &BTreeMap<ProviderSource, VersionConstraint>,
        upgrade: bool,
        events: &mut dyn FnMut(Event),
    ) -> (Outcome, Vec<Problem>) {
        let mut locks = previous.clone();
        let mut problems = Vec::new();
        let mut incomplete = Vec::new();
        let problem = |provider: &ProviderSource, summary: &str, detail: String| Problem {
            provider: provider.clone(),
            summary: summary.into(),
            detail,
        };
        // Step 1 and 2: choose a version of each.
        let mut need: Vec<(ProviderSource, Version, Vec<Available>)> = Vec::new();
        for (provider, constraint) in reqs {
            let lock = previous.providers.get(provider).filter(|_| !upgrade);
            if let Some(lock) = lock {
                events(Event::Reusing {
                    provider: provider.clone(),
                });
                if !constraint.allows(&lock.version) {
                    problems.push(problem(
                        provider,
                        "Failed to query available provider packages",
                        format!(
                            "Could not retrieve the list of available versions for provider {}: locked provider {provider} {} does not match configured version constraint {}; must use choudoufu init -upgrade to allow selection of new versions",
                            provider.for_display(),
                            lock.version,
                            constraint.canonical()
                        ),
                    ));
                    continue;
                }
            } else {
                events(Event::Finding {
                    provider: provider.clone(),
                    constraints: constraint.canonical(),
                });
            }
            let available = match self.available(provider) {
                Ok(a) => a,
                Err(detail) => {
                    problems.push(problem(
                        provider,
                        "Failed to query available provider packages",
                        format!(
                            "Could not retrieve the list of available versions for provider {}: {detail}",
                            provider.for_display()
                        ),
                    ));
                    continue;
                }
            };
            let mut versions: Vec<&Version> = available.iter().map(|a| &a.version).collect();
            versions.sort();
            versions.dedup();
            let chosen = versions.into_iter().rev().find(|v| match lock {
                Some(lock) => **v == lock.version,
                None => constraint.allows(v),
            });
            match chosen {
                Some(v) => {
                    let v = v.clone();
                    need.push((provider.clone(), v, available));
                }
                None => {
                    let why = match lock {
                        Some(lock) => format!(
                            "the previously-selected version {} is no longer available",
                            lock.version
                        ),
                        None => format!(
                            "no available releases match the given constraints {}",
                            constraint.canonical()
                        ),
                    };
                    problems.push(problem(
                        provider,
                        "Failed to query available provider packages",
                        format!(
                            "Could not retrieve the list of available versions for provider {}: {why}",
                            provider.for_display()
                        ),
                    ));
                }
            }
        }
        // Step 3: install each chosen version.
        for (provider, version, available) in need {
            let lock = previous.providers.get(&provider);
            let preferred: Vec<PackageHash> = match lock {
                Some(l) if l.version == version => l.preferred_hashes().cloned().collect(),
                _ => Vec::new(),
            };
            let target_dir = self.package_dir(&self.target, &provider, &version);
            if !preferred.is_empty()
                && target_dir.is_dir()
                && self.matches_any(&Package::Dir(target_dir.clone()), &preferred) == Ok(true)
            {
                events(Event::AlreadyInstalled {
                    provider: provider.clone(),
                    version: version.clone(),
                });
                continue;
            }
            let constraint = &reqs[&provider];
            let installing = |events: &mut dyn FnMut(Event)| {
                events(Event::Installing {
                    provider: provider.clone(),
                    version: version.clone(),
                })
            };
            let failed = |detail: String| {
                problem(
                    &provider,
                    "Failed to install provider",
                    format!(
                        "Error while installing {} v{version}: {detail}",
                        provider.for_display()
                    ),
                )
            };
            // Step 3a: a copy in the plugin cache the lock file vouches for.
            if let Some(cache) = &self.cache {
                let cached = self.package_dir(cache, &provider, &version);
                if cached.is_dir() {
                    let acceptable = (!preferred.is_empty()
                        && self.matches_any(&Package::Dir(cached.clone()), &preferred) == Ok(true))
                        || self.cache_may_break_lock;
                    if acceptable {
                        events(Event::FromCache {
                            provider: provider.clone(),
                            version: version.clone(),
                        });
                        if let Err(e) = link(&cached, &target_dir) {
                            problems.push(problem(
                                &provider,
                                "Failed to install provider from shared cache",
                                format!(
                                    "Error while importing {} v{version} from the shared cache directory: {e}.",
                                    provider.for_display()
                                ),
                            ));
                            continue;
                        }
                        match hashes::h1_dir(&target_dir, self.memo.as_ref()) {
                            Ok(h) => {
                                let prior_same = preferred.len() == 1 && preferred[0] == h;
                                let mut all = preferred.clone();
                                all.push(h);
                                if preferred.is_empty() || prior_same {
                                    incomplete.push(provider.clone());
                                }
                                locks.providers.insert(
                                    provider.clone(),
                                    ProviderLock::new(version.clone(), constraint, all),
                                );
                            }
                            Err(e) => problems.push(failed(e.to_string())),
                        }
                        continue;
                    }
                }
            }
            // Step 3b: the package from the first source that has it for
            // this platform.
            let Some(package) = available
                .iter()
                .find(|a| a.version == version && a.platform == self.platform)
                .map(|a| a.package.clone())
            else {
                problems.push(problem(
                    &provider,
                    "Incompatible provider version",
                    format!(
                        "Provider {provider} v{version} does not have a package available for your current platform, {}.\n\nProvider releases are separate from Terraform CLI releases, so not all providers are available for all platforms. Other versions of this provider may have different platforms supported.",
                        self.platform
                    ),
                ));
                continue;
            };
            installing(events);
            let install_to = match &self.cache {
                Some(cache) => self.package_dir(cache, &provider, &version),
                None => target_dir.clone(),
            };
            if let Err(detail) =
                self.install(&provider, &version, &package, &install_to, &preferred)
            {
                problems.push(failed(detail));
                continue;
            }
            if install_to != target_dir {
                if let Err(e) = link(&install_to, &target_dir) {
                    problems.push(failed(e.to_string()));
                    continue;
                }
            }
            if executable(&target_dir, &provider.type_name).is_none() {
                problems.push(failed(format!(
                    "provider binary not found: could not find executable file starting with terraform-provider-{}",
                    provider.type_name
                )));
                continue;
            }
            let new_hash = match hashes::h1_dir(&target_dir, self.memo.as_ref()) {
                Ok(h) => h,
                Err(e) => {
                    problems.push(failed(format!(
                        "after installing {provider}, failed to compute a checksum for it: {e}"
                    )));
                    continue;
                }
            };
            // No signed checksums come from a mirror: the entry records the
            // package as it is here, and the ones recorded before.
            if preferred.is_empty() || (preferred.len() == 1 && preferred[0] == new_hash) {
                incomplete.push(provider.clone());
            }
            let mut all = vec![new_hash];
            all.extend(preferred.iter().cloned());
            locks.providers.insert(
                provider.clone(),
                ProviderLock::new(version.clone(), constraint, all),
            );
            events(Event::Installed {
                provider: provider.clone(),
                version: version.clone(),
            });
        }
        locks.providers.retain(|p, _| reqs.contains_key(p));
        incomplete.sort();
        (Outcome { locks, incomplete }, problems)
    }

    /// Every package of `provider` the sources that may serve it offer, in
    /// source order; an error in terraform's words when none offers any.
    fn available(&self, provider: &ProviderSource) -> Result<Vec<Available>, String> {
        let mut found = Vec::new();
        let mut looked = Vec::new();
        let mut local = false;
        for method in &self.methods {
            if !method.handles(provider) {
                continue;
            }
            match &method.location {
                Location::FilesystemMirror(dir) => {
                    if !dir.is_dir() {
                        if self.explicit {
                            return Err(format!(
                                "cannot search {}: no such directory",
                                dir.display()
                            ));
                        }
                        continue;
                    }
                    looked.push(format!("  - {}", dir.display()));
                    let here = scan(dir, provider);
                    local |= !here.is_empty();
                    found.extend(here);
                }
                Location::NetworkMirror(url) => looked.push(format!(
                    "  - {url} (a network mirror: choudoufu installs from filesystem mirrors and the plugin cache only)"
                )),
                // Without a provider_installation block, the registry
                // serves only what no implied mirror holds.
                Location::Direct if !self.explicit && local => {}
                Location::Direct => looked.push(format!(
                    "  - {} (the provider's origin registry: choudoufu installs from filesystem mirrors and the plugin cache only; put the provider in a filesystem_mirror or the plugin cache, or pass -plugin-dir)",
                    provider.hostname
                )),
            }
        }
        if found.is_empty() {
            return Err(format!(
                "provider {provider} was not found in any of the search locations\n\n{}",
                looked.join("\n")
            ));
        }
        Ok(found)
    }

    fn package_dir(&self, base: &Path, provider: &ProviderSource, version: &Version) -> PathBuf {
        provider
            .package_dir(base)
            .join(version.to_string())
            .join(&self.platform)
    }

    fn matches_any(&self, package: &Package, allowed: &[PackageHash]) -> Result<bool, String> {
        let mut h1 = None;
        for want in allowed {
            if want.is_h1() {
                if h1.is_none() {
                    h1 = Some(
                        match package {
                            Package::Dir(d) => hashes::h1_dir(d, self.memo.as_ref()),
                            Package::Zip(z) => hashes::h1_zip(z),
                        }
                        .map_err(|e| e.to_string())?,
                    );
                }
                if h1.as_ref() == Some(want) {
                    return Ok(true);
                }
            } else if want.is_zh() {
                if let Package::Zip(z) = package {
                    if &hashes::zh(z).map_err(|e| e.to_string())? == want {
                        return Ok(true);
                    }
                }
            }
        }
        Ok(false)
    }

    /// Puts `package` at `to`: a symlink to an unpacked directory, or the
    /// contents of an archive; first checked against `allowed`.
    fn install(
        &self,
        provider: &ProviderSource,
        version: &Version,
        package: &Package,
        to: &Path,
        allowed: &[PackageHash],
    ) -> Result<(), String> {
        match package {
            Package::Zip(archive) => {
                if !allowed.is_empty() && !self.matches_any(package, allowed)? {
                    return Err(format!("the current package for {provider} {version} doesn't match any of the checksums previously recorded in the dependency lock file; for more information: {CHECKSUM_DOCS}"));
                }
                remove_link(to).map_err(|e| e.to_string())?;
                let parent = to.parent().expect("package directories have parents");
                fs::create_dir_all(parent).map_err(|e| {
                    format!(
                        "failed to create parent directories leading to {}: {e}",
                        to.display()
                    )
                })?;
                let file = fs::File::open(archive).map_err(|e| e.to_string())?;
                let mut zip = zip::ZipArchive::new(io::BufReader::new(file))
                    .map_err(|e| format!("{}: {e}", archive.display()))?;
                zip.extract(to)
                    .map_err(|e| format!("{}: {e}", archive.display()))
            }
            Package::Dir(dir) => {
                if allowed.iter().any(|h| !h.is_zh()) && !self.matches_any(package, allowed)? {
                    return Err(format!("the local package for {provider} {version} doesn't match any of the checksums previously recorded in the dependency lock file (this might be because the available checksums are for packages targeting different platforms); for more information: {CHECKSUM_DOCS}"));
                }
                link(dir, to).map_err(|e| e.to_string())
            }
        }
    }
}

/// Makes `to` a symlink to the absolute path of `from`, replacing what was
/// there, as terraform links an unpacked package.
fn link(from: &Path, to: &Path) -> Result<(), String> {
    let from = std::path::absolute(from).map_err(|e| e.to_string())?;
    if fs::canonicalize(&from).ok() == fs::canonicalize(to).ok() && to.exists() {
        if fs::symlink_metadata(to).is_ok_and(|m| m.file_type().is_symlink()) {
            return Ok(());
        }
        return Err(format!(
            "cannot install existing provider directory {} to itself",
            to.display()
        ));
    }
    remove_link(to).map_err(|e| {
        format!(
            "failed to remove existing {} before linking it to {}: {e}",
            from.display(),
            to.display()
        )
    })?;
    let parent = to.parent().expect("package directories have parents");
    fs::create_dir_all(parent).map_err(|e| {
        format!(
            "failed to create parent directories leading to {}: {e}",
            to.display()
        )
    })?;
    std::os::unix::fs::symlink(&from, to).map_err(|e| {
        format!(
            "failed to either symlink or copy {} to {}: {e}",
            from.display(),
            to.display()
        )
    })
}

/// Removes a package directory or the symlink standing for it.
fn remove_link(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// The packages of `provider` in a mirror directory, unpacked and packed,
/// in the order terraform's search walks them.
fn scan(dir: &Path, provider: &ProviderSource) -> Vec<Available> {
    let base = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let type_dir = provider.package_dir(&base);
    let mut names: Vec<(String, PathBuf)> = match fs::read_dir(&type_dir) {
        Ok(entries) => entries
            .flatten()
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
            .collect(),
        Err(_) => return Vec::new(),
    };
    names.sort();
    let mut out = Vec::new();
    let prefix = format!("terraform-provider-{}_", provider.type_name);
    for (name, path) in names {
        if path.is_dir() {
            let Ok(version) = name.parse::<Version>() else {
                continue;
            };
            if version.to_string() != name {
                continue;
            }
            let Ok(platforms) = fs::read_dir(&path) else {
                continue;
            };
            let mut platforms: Vec<(String, PathBuf)> = platforms
                .flatten()
                .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                .filter(|(n, p)| p.is_dir() && is_platform(n))
                .collect();
            platforms.sort();
            out.extend(platforms.into_iter().map(|(platform, p)| Available {
                version: version.clone(),
                platform,
                package: Package::Dir(p),
            }));
        } else {
            let lower = name.to_ascii_lowercase();
            let Some(info) = lower
                .strip_prefix(&prefix)
                .and_then(|r| r.strip_suffix(".zip"))
            else {
                continue;
            };
            let parts: Vec<&str> = info.split('_').collect();
            let [version, os, arch, ..] = parts.as_slice() else {
                continue;
            };
            let Ok(version) = version.parse::<Version>() else {
                continue;
            };
            out.push(Available {
                version,
                platform: format!("{os}_{arch}"),
                package: Package::Zip(path),
            });
        }
    }
    out
}

/// `OS_ARCH`, lowercase letters and digits on each side of one underscore.
fn is_platform(name: &str) -> bool {
    let ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    };
    matches!(name.split_once('_'), Some((os, arch)) if ok(os) && ok(arch))
}

/// The provider's executable in a package directory, chosen as terraform
/// chooses it: the first entry (by name) that is not a directory and is
/// named `terraform-provider-TYPE`, alone or followed by `_` or `.`.
pub fn executable(dir: &Path, type_name: &str) -> Option<PathBuf> {
    let prefix = format!("terraform-provider-{type_name}");
    let mut names: Vec<(String, PathBuf)> = fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    names.sort();
    names.into_iter().find_map(|(name, path)| {
        let rest = name.strip_prefix(&prefix)?;
        let delimited = rest.is_empty() || rest.starts_with('_') || rest.starts_with('.');
        (delimited && !path.is_dir()).then_some(path)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::ffi::OsString;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;

    fn write_exe(path: &Path, body: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, body).unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// An unpacked package in `mirror`.
    fn unpacked(mirror: &Path, version: &str, platform: &str) -> PathBuf {
        let dir = mirror.join(format!("example.com/test/fake/{version}/{platform}"));
        write_exe(
            &dir.join(format!("terraform-provider-fake_v{version}")),
            &format!("#!/bin/sh\necho {version}\n"),
        );
        dir
    }

    /// A packed package in `mirror`.
    fn packed(mirror: &Path, version: &str, platform: &str) -> PathBuf {
        let dir = mirror.join("example.com/test/fake");
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("terraform-provider-fake_{version}_{platform}.zip"));
        let mut zip = zip::ZipWriter::new(fs::File::create(&path).unwrap());
        zip.start_file(
            format!("terraform-provider-fake_v{version}"),
            zip::write::SimpleFileOptions::default().unix_permissions(0o755),
        )
        .unwrap();
        zip.write_all(format!("#!/bin/sh\necho {version}\n").as_bytes())
            .unwrap();
        zip.finish().unwrap();
        path
    }

    fn installer(root: &Path, config: &str, home: &Path) -> Installer {
        let tfrc = home.join("cli.tfrc");
        fs::write(&tfrc, config).unwrap();
        let vars = HashMap::from([
            ("TF_CLI_CONFIG_FILE", tfrc.display().to_string()),
            ("HOME", home.display().to_string()),
        ]);
        let env = move |n: &str| vars.get(n).map(OsString::from);
        let installation = Installation::for_root_with(root, &env).unwrap();
        Installer::new(root, installation, &[], None)
    }

    fn fake() -> ProviderSource {
        "example.com/test/fake".parse().unwrap()
    }

    fn reqs(constraint: &str) -> BTreeMap<ProviderSource, VersionConstraint> {
        BTreeMap::from([(fake(), constraint.parse().unwrap())])
    }

    #[test]
    fn installs_the_newest_allowed_version_linked_or_unpacked_and_locks_it() {
        let tmp = tempfile::tempdir().unwrap();
        let (root, mirror) = (tmp.path().join("root"), tmp.path().join("mirror"));
        fs::create_dir_all(&root).unwrap();
        let old = unpacked(&mirror, "1.0.0", &current_target());
        packed(&mirror, "1.1.0", &current_target());
        unpacked(&mirror, "2.0.0", "plan9_mips");
        let config = format!(
            "provider_installation {{\n filesystem_mirror {{ path = \"{}\" }}\n}}\n",
            mirror.display()
        );
        let inst = installer(&root, &config, tmp.path());
        let mut events = Vec::new();
        let (out, problems) = inst.ensure(&Locks::default(), &reqs("< 2.0.0"), false, &mut |e| {
            events.push(e)
        });
        assert!(problems.is_empty(), "{problems:?}");
        let lock = &out.locks.providers[&fake()];
        assert_eq!(lock.version.to_string(), "1.1.0");
        let installed = root
            .join(".terraform/providers/example.com/test/fake/1.1.0")
            .join(current_target());
        assert!(executable(&installed, "fake").is_some());
        assert_eq!(lock.hashes(), [hashes::h1_dir(&installed, None).unwrap()]);
        assert_eq!(out.incomplete, vec![fake()]);
        assert_eq!(events.len(), 3, "{events:?}");

        // The lock file holds 1.1.0 back from an older constraint's view;
        // a changed package is refused, an unchanged one is reused.
        let (again, problems) = inst.ensure(&out.locks, &reqs(""), false, &mut |_| {});
        assert!(problems.is_empty());
        assert_eq!(again.locks, out.locks);
        let (_, problems) = inst.ensure(&out.locks, &reqs("= 1.0.0"), false, &mut |_| {});
        assert!(problems[0]
            .detail
            .contains("does not match configured version constraint"));
        let (upgraded, problems) = inst.ensure(&out.locks, &reqs("= 1.0.0"), true, &mut |_| {});
        assert!(problems.is_empty());
        assert_eq!(
            upgraded.locks.providers[&fake()].version.to_string(),
            "1.0.0"
        );
        let link = fs::read_link(
            root.join(".terraform/providers/example.com/test/fake/1.0.0")
                .join(current_target()),
        )
        .unwrap();
        assert_eq!(link, fs::canonicalize(old).unwrap());
        let (_, problems) = inst.ensure(&out.locks, &reqs(">= 3.0"), true, &mut |_| {});
        assert!(problems[0]
            .detail
            .contains("no available releases match the given constraints >= 3.0.0"));
    }

    #[test]
    fn a_package_not_matching_the_lock_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (root, mirror) = (tmp.path().join("root"), tmp.path().join("mirror"));
        fs::create_dir_all(&root).unwrap();
        let dir = unpacked(&mirror, "1.0.0", &current_target());
        let config = format!(
            "provider_installation {{\n filesystem_mirror {{ path = \"{}\" }}\n}}\n",
            mirror.display()
        );
        let inst = installer(&root, &config, tmp.path());
        let (out, _) = inst.ensure(&Locks::default(), &reqs(""), false, &mut |_| {});
        write_exe(
            &dir.join("terraform-provider-fake_v1.0.0"),
            "#!/bin/sh\necho 1.0.1\n",
        );
        let (_, problems) = inst.ensure(&out.locks, &reqs(""), false, &mut |_| {});
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0]
                .detail
                .contains("doesn't match any of the checksums previously recorded"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_registry_only_provider_names_every_place_looked() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        fs::create_dir_all(root.join("terraform.d/plugins")).unwrap();
        let inst = installer(&root, "", tmp.path());
        let null: ProviderSource = "hashicorp/null".parse().unwrap();
        let (_, problems) = inst.ensure(
            &Locks::default(),
            &BTreeMap::from([(null, VersionConstraint::default())]),
            false,
            &mut |_| {},
        );
        let detail = &problems[0].detail;
        assert!(detail.contains("provider registry.terraform.io/hashicorp/null was not found in any of the search locations"), "{detail}");
        assert!(
            detail.contains(&root.join("terraform.d/plugins").display().to_string()),
            "{detail}"
        );
        assert!(
            detail.contains("registry.terraform.io (the provider's origin registry"),
            "{detail}"
        );
    }

    #[test]
    fn picks_executables_as_terraform_does() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        write_exe(&d.join("terraform-provider-fakeish"), "");
        assert_eq!(executable(d, "fake"), None);
        write_exe(&d.join("terraform-provider-fake_v1"), "");
        write_exe(&d.join("terraform-provider-fake.exe"), "");
        assert_eq!(
            executable(d, "fake"),
            Some(d.join("terraform-provider-fake.exe"))
        );
    }
}
