//! Terraform's workspaces, each its own estate.
//!
//! The selected workspace is where terraform keeps it: the file
//! `environment` in the data folder (`.terraform`, or `TF_DATA_DIR`), or
//! `TF_WORKSPACE` overriding it; `terraform.workspace` evaluates to it. The
//! workspace `default` is the estate `live.hcl` names; any other, `NAME`,
//! is the estate `<estate>.NAME`. So two workspaces of one root write
//! different markers, keep their records apart and take different locks:
//! neither plans, binds or sweeps the other's objects.
//!
//! Which workspaces exist is kept in the live system beside the records,
//! so a fresh clone lists and selects what another machine created: one
//! SSM parameter per workspace `new` made, `/choudoufu/workspaces/<estate>/NAME`,
//! tagged `tofu-workspace` (never the estate marker, so no sweep takes it).

use crate::provider::grpc::GrpcProvider;
use crate::provider::schema::Schema;
use crate::provider::{Provider, ProviderError};
use crate::record::ssm;
use crate::value::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The workspace every root starts in: the estate `live.hcl` names.
pub const DEFAULT: &str = "default";

/// Where every estate's workspaces are listed.
pub const PREFIX: &str = "/choudoufu/workspaces";

/// Why a workspace could not be chosen, listed, made or deleted. The
/// messages are terraform's where terraform has one.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("The workspace name {name:?} is not allowed. The name must contain only letters, digits, '-', '_' and '.': it names the workspace's estate, {estate}.{name}, which is written into tags on every object.")]
    Name { name: String, estate: String },
    #[error("The selected workspace {name:?} (from {from}) is not allowed: a workspace's name must contain only letters, digits, '-', '_' and '.'.")]
    Selected { name: String, from: String },
    #[error("Workspace {0:?} already exists")]
    Exists(String),
    #[error("\nWorkspace {0:?} doesn't exist.\n\nYou can create this workspace with the \"new\" subcommand \nor include the \"-or-create\" flag with the \"select\" subcommand.")]
    Missing(String),
    #[error("cannot delete default state")]
    DeleteDefault,
    #[error("Workspace {0:?} is your active workspace.\n\nYou cannot delete the currently active workspace. Please switch\nto another workspace and try again.")]
    DeleteActive(String),
    #[error("\nThe selected workspace is currently overridden using the TF_WORKSPACE\nenvironment variable.\n\nTo select a new workspace, either update this environment variable or unset\nit and then run this command again.")]
    Overridden,
    #[error("reading or writing {path}: {source}")]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the workspaces of estate {estate:?} ({place}): {source}")]
    Live {
        estate: String,
        place: String,
        source: Box<ProviderError>,
    },
    #[error("the aws provider has no aws_ssm_parameter resource or aws_ssm_parameters_by_path data source to keep the workspaces in")]
    NoSchema,
}

/// Whether `name` may name a workspace: what an estate's name may hold.
pub fn valid(name: &str) -> bool {
    crate::live::valid_name(name)
}

/// `name`, if it may name a workspace of `estate`.
pub fn check(name: &str, estate: &str) -> Result<(), WorkspaceError> {
    if valid(name) {
        Ok(())
    } else {
        Err(WorkspaceError::Name {
            name: name.to_string(),
            estate: estate.to_string(),
        })
    }
}

/// The estate of workspace `workspace` of the root whose `live.hcl` names
/// `estate`.
pub fn estate(estate: &str, workspace: &str) -> String {
    if workspace == DEFAULT {
        estate.to_string()
    } else {
        format!("{estate}.{workspace}")
    }
}

/// The file holding the selected workspace of the root in `root`.
pub fn environment_file(root: &Path) -> PathBuf {
    crate::config::manifest::data_dir(root).join("environment")
}

/// The selected workspace of the root in `root`: `TF_WORKSPACE` when set
/// (and whether it was), else the environment file's, else `default`.
pub fn selected(root: &Path) -> Result<(String, bool), WorkspaceError> {
    if let Some(name) = std::env::var("TF_WORKSPACE").ok().filter(|w| !w.is_empty()) {
        return if valid(&name) {
            Ok((name, true))
        } else {
            Err(WorkspaceError::Selected {
                name,
                from: "TF_WORKSPACE".into(),
            })
        };
    }
    let path = environment_file(root);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let name = text.trim().to_string();
            if name.is_empty() {
                Ok((DEFAULT.to_string(), false))
            } else if valid(&name) {
                Ok((name, false))
            } else {
                Err(WorkspaceError::Selected {
                    name,
                    from: path.display().to_string(),
                })
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((DEFAULT.to_string(), false)),
        Err(source) => Err(WorkspaceError::File { path, source }),
    }
}

/// The name `terraform.workspace` evaluates to in the working directory:
/// the selected workspace, `default` when none can be read (opening the
/// root has refused an unreadable or invalid one already).
/// Read once per process: the working directory is set (`-chdir`) before
/// anything evaluates, and a command never changes its workspace.
pub fn current() -> String {
    static CURRENT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    CURRENT
        .get_or_init(|| {
            let root = std::env::current_dir().unwrap_or_default();
            selected(&root)
                .map(|(w, _)| w)
                .unwrap_or_else(|_| DEFAULT.to_string())
        })
        .clone()
}

/// Selects `name` for the root in `root`, as terraform records it.
pub fn select(root: &Path, name: &str) -> Result<(), WorkspaceError> {
    let path = environment_file(root);
    let write = || {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, name)
    };
    write().map_err(|source| WorkspaceError::File {
        path: path.clone(),
        source,
    })
}

/// The live list of one estate's workspaces, through the root's default
/// aws provider (configured).
pub struct Registry {
    provider: GrpcProvider,
    resource: Schema,
    by_path: Schema,
    estate: String,
}

impl Registry {
    pub fn new(provider: &GrpcProvider, estate: &str) -> Result<Registry, WorkspaceError> {
        let schemas = provider.cached_schema().ok_or(WorkspaceError::NoSchema)?;
        let resource = schemas.resources.get("aws_ssm_parameter").cloned();
        let by_path = schemas
            .data_sources
            .get("aws_ssm_parameters_by_path")
            .cloned();
        let (Some(resource), Some(by_path)) = (resource, by_path) else {
            return Err(WorkspaceError::NoSchema);
        };
        Ok(Registry {
            provider: provider.clone(),
            resource,
            by_path,
            estate: estate.to_string(),
        })
    }

    fn path(&self) -> String {
        format!("{PREFIX}/{}", self.estate)
    }

    fn failed(&self, source: ProviderError) -> WorkspaceError {
        WorkspaceError::Live {
            estate: self.estate.clone(),
            place: format!("SSM parameters under {}", self.path()),
            source: Box::new(source),
        }
    }

    /// Every workspace: `default` first, then those `new` made, by name.
    pub async fn list(&self) -> Result<Vec<String>, WorkspaceError> {
        let made = ssm::read_path(&self.provider, &self.by_path, &self.path(), false)
            .await
            .map_err(|e| self.failed(e))?;
        let mut all = vec![DEFAULT.to_string()];
        all.extend(made.into_keys().filter(|w| w != DEFAULT && valid(w)));
        Ok(all)
    }

    /// Whether workspace `name` exists.
    pub async fn exists(&self, name: &str) -> Result<bool, WorkspaceError> {
        Ok(self.list().await?.iter().any(|w| w == name))
    }

    /// Makes workspace `name`, which the caller has found not to exist.
    pub async fn create(&self, name: &str) -> Result<(), WorkspaceError> {
        check(name, &self.estate)?;
        let tags = BTreeMap::from([("tofu-workspace".to_string(), Value::string(&self.estate))]);
        ssm::put_parameter(
            &self.provider,
            &self.resource,
            &format!("{}/{name}", self.path()),
            &estate(&self.estate, name),
            ssm::ParamType::String,
            Some(tags),
        )
        .await
        .map_err(|e| self.failed(e))
    }

    /// Deletes workspace `name` from the list.
    pub async fn delete(&self, name: &str) -> Result<(), WorkspaceError> {
        ssm::delete_parameter(
            &self.provider,
            &self.resource,
            &format!("{}/{name}", self.path()),
        )
        .await
        .map_err(|e| self.failed(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_workspace_is_its_own_estate() {
        assert_eq!(estate("pay", DEFAULT), "pay");
        assert_eq!(estate("pay", "staging"), "pay.staging");
        assert_ne!(estate("pay", "a.b"), estate("pay", "a"));
        assert!(valid("a.b_c-d"));
        for bad in ["", "a/b", "a b", "é", "a:b"] {
            assert!(!valid(bad), "{bad}");
        }
        let e = check("a/b", "pay").unwrap_err().to_string();
        assert!(
            e.contains("\"a/b\" is not allowed") && e.contains("pay.a/b"),
            "{e}"
        );
    }

    #[test]
    fn the_selection_is_read_where_terraform_writes_it() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(selected(dir.path()).unwrap(), (DEFAULT.to_string(), false));
        select(dir.path(), "staging").unwrap();
        let file = std::fs::read_to_string(dir.path().join(".terraform/environment")).unwrap();
        assert_eq!(file, "staging");
        assert_eq!(
            selected(dir.path()).unwrap(),
            ("staging".to_string(), false)
        );
        std::fs::write(dir.path().join(".terraform/environment"), "../x").unwrap();
        let e = selected(dir.path()).unwrap_err().to_string();
        assert!(e.contains("\"../x\"") && e.contains("environment"), "{e}");
    }
}
