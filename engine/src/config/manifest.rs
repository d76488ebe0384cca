//! The module manifest `terraform init` writes,
//! `.terraform/modules/modules.json`: for each module call, by its key
//! (the call names from the root, joined by dots: `web`, `web.rules`),
//! the source it was installed from, the version a registry source
//! resolved to and the directory it sits in, relative to the root.
//!
//! A call whose source is not local is loaded from the directory the
//! manifest names, after the checks terraform makes: the call is
//! installed, its source is the one installed, and the installed version
//! still meets its `version` constraint. `TF_DATA_DIR` moves `.terraform`
//! as it does for terraform.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ModuleCall;
use crate::diag::Diagnostic;
use crate::provider::discovery::{Version, VersionConstraint};

/// What terraform says after each of these errors.
const RUN_INIT: &str =
    "Run \"terraform init\" to install all modules required by this configuration.";

/// One installed module.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Entry {
    #[serde(rename = "Key")]
    pub key: String,
    #[serde(rename = "Source")]
    pub source: String,
    #[serde(rename = "Version", default)]
    pub version: Option<String>,
    #[serde(rename = "Dir")]
    pub dir: String,
}

#[derive(Deserialize)]
struct File {
    #[serde(rename = "Modules", default)]
    modules: Vec<Entry>,
}

/// Terraform's data folder of the root in `root`: `TF_DATA_DIR` when set
/// (relative to the root, as terraform takes it from the working
/// directory), else `.terraform`.
pub fn data_dir(root: &Path) -> PathBuf {
    let data = std::env::var_os("TF_DATA_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(".terraform"));
    root.join(data)
}

/// The manifest of one root, empty when `init` installed nothing.
#[derive(Debug, Clone, Default)]
pub struct Manifest {
    root: PathBuf,
    entries: BTreeMap<String, Entry>,
}

impl Manifest {
    /// Where the manifest of the root in `root` is: under `TF_DATA_DIR`
    /// when set (relative to the root, as terraform takes it from the
    /// working directory), else `.terraform`.
    pub fn path(root: &Path) -> PathBuf {
        data_dir(root).join("modules").join("modules.json")
    }

    /// The manifest of the root in `root`; an empty one when there is no
    /// file, an error when there is one that cannot be read.
    pub fn read(root: &Path) -> Result<Manifest, Box<Diagnostic>> {
        let path = Self::path(root);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Manifest {
                    root: root.to_owned(),
                    entries: BTreeMap::new(),
                })
            }
            Err(e) => return Err(unreadable(&path, &e.to_string())),
        };
        let file: File =
            serde_json::from_str(&text).map_err(|e| unreadable(&path, &e.to_string()))?;
        Ok(Manifest {
            root: root.to_owned(),
            entries: file
                .modules
                .into_iter()
                .map(|e| (e.key.clone(), e))
                .collect(),
        })
    }

    /// The entry installed under `key`.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.get(key)
    }

    /// The directory the call at `path` (call names from the root, the
    /// call's own last) loads, or the error terraform gives for it.
    pub fn dir_of(&self, path: &[String], call: &ModuleCall) -> Result<PathBuf, Box<Diagnostic>> {
        let in_module = Some(format!("module \"{}\"", call.name));
        let Some(entry) = self.entries.get(&path.join(".")) else {
            return Err(Box::new(
                Diagnostic::error(
                    "Module not installed",
                    format!("This module is not yet installed. {RUN_INIT}"),
                )
                .at(call.range.clone()),
            ));
        };
        if normal_source(&entry.source) != normal_source(&call.source) {
            return Err(Box::new(
                Diagnostic::error(
                    "Module source has changed",
                    format!("The source address was changed since this module was installed. {RUN_INIT}"),
                )
                .at(call.source_range.clone())
                .in_context(in_module),
            ));
        }
        if let Some(wanted) = call
            .version
            .as_deref()
            .and_then(|v| v.parse::<VersionConstraint>().ok())
            .filter(|c| !c.is_empty())
        {
            let installed = entry
                .version
                .as_deref()
                .and_then(|v| v.parse::<Version>().ok());
            let detail = match &installed {
                None => Some(format!("The version requirements have changed since this module was installed and the installed version is no longer acceptable. {RUN_INIT}")),
                Some(v) if !wanted.allows(v) => Some(format!("The version requirements have changed since this module was installed and the installed version ({v}) is no longer acceptable. {RUN_INIT}")),
                Some(_) => None,
            };
            if let Some(detail) = detail {
                return Err(Box::new(
                    Diagnostic::error("Module version requirements have changed", detail)
                        .at(call.source_range.clone())
                        .in_context(in_module),
                ));
            }
        }
        let dir = self.root.join(&entry.dir);
        if !dir.is_dir() {
            return Err(Box::new(
                Diagnostic::error(
                    "Module not installed",
                    format!(
                        "This module's local cache directory {} could not be read. {RUN_INIT}",
                        entry.dir
                    ),
                )
                .at(call.range.clone()),
            ));
        }
        Ok(dir)
    }
}

/// Whether a module source is a local directory, as terraform reads one.
pub fn is_local(source: &str) -> bool {
    source.starts_with("./") || source.starts_with("../")
}

fn unreadable(path: &Path, why: &str) -> Box<Diagnostic> {
    Box::new(Diagnostic::error(
        "Failed to read module manifest",
        format!(
            "The module manifest {} could not be read: {why}. {RUN_INIT}",
            path.display()
        ),
    ))
}

/// A module source in the one form terraform compares: a registry
/// address with its host (`registry.terraform.io/` added to a
/// three-part `namespace/name/system`), a GitHub or Bitbucket shorthand
/// as the git URL it stands for; any other source as written.
pub fn normal_source(source: &str) -> String {
    let (bare, query) = match source.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (source, None),
    };
    let (path, sub) = match bare.split_once("//") {
        Some((p, s)) if !p.ends_with(':') && !p.contains("::") => (p, Some(s)),
        _ => (bare, None),
    };
    // terraform writes the subdirectory before the query.
    let with_sub = |base: String| {
        let base = match sub {
            Some(s) => format!("{base}//{s}"),
            None => base,
        };
        match query {
            Some(q) => format!("{base}?{q}"),
            None => base,
        }
    };
    if let Some(rest) = path.strip_prefix("github.com/") {
        let repo = rest.trim_end_matches(".git");
        return with_sub(format!("git::https://github.com/{repo}.git"));
    }
    if let Some(rest) = path.strip_prefix("bitbucket.org/") {
        return with_sub(format!("git::https://bitbucket.org/{rest}.git"));
    }
    let parts: Vec<&str> = path.split('/').collect();
    let plain = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    let remote = source.contains("::") || source.contains("://");
    if !remote && parts.len() == 3 && parts.iter().all(|p| plain(p)) {
        return with_sub(format!("registry.terraform.io/{}", path.to_lowercase()));
    }
    if !remote && parts.len() == 4 && parts[0].contains('.') && parts[1..].iter().all(|p| plain(p))
    {
        return with_sub(path.to_lowercase());
    }
    source.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_compare_as_terraform_normalizes_them() {
        assert_eq!(
            normal_source("terraform-aws-modules/vpc/aws"),
            "registry.terraform.io/terraform-aws-modules/vpc/aws"
        );
        assert_eq!(
            normal_source("registry.terraform.io/terraform-aws-modules/vpc/aws"),
            "registry.terraform.io/terraform-aws-modules/vpc/aws"
        );
        assert_eq!(
            normal_source("terraform-aws-modules/security-group/aws//modules/http-80"),
            "registry.terraform.io/terraform-aws-modules/security-group/aws//modules/http-80"
        );
        assert_eq!(
            normal_source("github.com/hashicorp/example"),
            "git::https://github.com/hashicorp/example.git"
        );
        assert_eq!(
            normal_source("github.com/hashicorp/example//sub?ref=v2"),
            "git::https://github.com/hashicorp/example.git//sub?ref=v2"
        );
        let git = "git::https://example.com/network.git//modules/vpc?ref=v1.2.0";
        assert_eq!(normal_source(git), git);
        assert_eq!(
            normal_source("git::file:///srv/sg.git//modules/http-80?ref=v5.3.1"),
            "git::file:///srv/sg.git//modules/http-80?ref=v5.3.1"
        );
    }

    fn call(source: &str, version: Option<&str>) -> ModuleCall {
        let d = tempfile::tempdir().unwrap();
        let version = version
            .map(|v| format!("  version = \"{v}\"\n"))
            .unwrap_or_default();
        std::fs::write(
            d.path().join("main.tf"),
            format!("module \"web\" {{\n  source = \"{source}\"\n{version}}}\n"),
        )
        .unwrap();
        let (module, diags) = crate::config::load(d.path());
        assert!(!diags.has_errors(), "{diags:?}");
        module.module_calls["web"].clone()
    }

    fn manifest(dir: &Path, json: &str) {
        std::fs::create_dir_all(dir.join(".terraform/modules/web")).unwrap();
        std::fs::write(dir.join(".terraform/modules/modules.json"), json).unwrap();
    }

    #[test]
    fn an_installed_call_loads_from_the_directory_init_named() {
        let d = tempfile::tempdir().unwrap();
        manifest(
            d.path(),
            r#"{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"web","Source":"registry.terraform.io/terraform-aws-modules/vpc/aws","Version":"5.21.0","Dir":".terraform/modules/web"}]}"#,
        );
        let m = Manifest::read(d.path()).unwrap();
        let path = ["web".to_owned()];
        let dir = m
            .dir_of(
                &path,
                &call("terraform-aws-modules/vpc/aws", Some("~> 5.0")),
            )
            .unwrap();
        assert_eq!(dir, d.path().join(".terraform/modules/web"));

        let e = m
            .dir_of(
                &path,
                &call("terraform-aws-modules/vpc/aws", Some("~> 6.0")),
            )
            .unwrap_err();
        assert_eq!(e.summary, "Module version requirements have changed");
        assert!(
            e.detail
                .contains("the installed version (5.21.0) is no longer acceptable"),
            "{}",
            e.detail
        );

        let e = m
            .dir_of(&path, &call("terraform-aws-modules/sg/aws", None))
            .unwrap_err();
        assert_eq!(e.summary, "Module source has changed");

        let e = m
            .dir_of(
                &["db".to_owned()],
                &call("terraform-aws-modules/rds/aws", None),
            )
            .unwrap_err();
        assert_eq!(e.summary, "Module not installed");
        assert!(e.detail.contains("Run \"terraform init\""), "{}", e.detail);
    }

    #[test]
    fn no_manifest_means_nothing_installed_and_a_broken_one_is_named() {
        let d = tempfile::tempdir().unwrap();
        let m = Manifest::read(d.path()).unwrap();
        let e = m
            .dir_of(
                &["web".to_owned()],
                &call("git::https://example.com/x.git", None),
            )
            .unwrap_err();
        assert_eq!(e.summary, "Module not installed");
        manifest(d.path(), "{not json");
        let e = Manifest::read(d.path()).unwrap_err();
        assert_eq!(e.summary, "Failed to read module manifest");
        assert!(e.detail.contains("modules.json"), "{}", e.detail);
    }
}
