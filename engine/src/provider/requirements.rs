//! The providers a root module asks for: the `required_providers` entries
//! of its `terraform` blocks.
//!
//! This reads only those blocks, from the root's `*.tf` files (not
//! `*.tf.json`, not child modules), to tell discovery what to find; it
//! evaluates nothing, and the rest of the configuration is not its concern.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::discovery::{ProviderSource, VersionConstraint};

/// One provider a root requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The name the root uses for it (`aws` in `aws = { ... }`).
    pub local_name: String,
    pub source: ProviderSource,
    /// Every constraint given for it, combined.
    pub constraint: VersionConstraint,
}

/// Why the requirements could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RequirementsError {
    #[error("could not read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {reason}", path.display())]
    Invalid { path: PathBuf, reason: String },
}

/// The root's required providers, ordered by local name. Entries for the
/// same local name in several files combine their constraints.
pub fn required_providers(root: &Path) -> Result<Vec<Requirement>, RequirementsError> {
    let read_error = |path: &Path, source| RequirementsError::Read {
        path: path.into(),
        source,
    };
    let mut files: Vec<PathBuf> = fs::read_dir(root)
        .map_err(|e| read_error(root, e))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "tf") && p.is_file())
        .collect();
    files.sort();
    let mut found: BTreeMap<String, Requirement> = BTreeMap::new();
    for path in files {
        let text = fs::read_to_string(&path).map_err(|e| read_error(&path, e))?;
        let invalid = |reason: String| RequirementsError::Invalid {
            path: path.clone(),
            reason,
        };
        for req in parse(&text).map_err(invalid)? {
            match found.get_mut(&req.local_name) {
                Some(existing) if existing.source != req.source => {
                    return Err(invalid(format!(
                        "provider {:?} has two sources, {} and {}",
                        req.local_name, existing.source, req.source
                    )))
                }
                Some(existing) => {
                    existing.constraint = existing.constraint.clone().and(&req.constraint)
                }
                None => {
                    found.insert(req.local_name.clone(), req);
                }
            }
        }
    }
    Ok(found.into_values().collect())
}

fn parse(text: &str) -> Result<Vec<Requirement>, String> {
    let body = hcl::parse(text).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for terraform in body.blocks().filter(|b| b.identifier() == "terraform") {
        for required in terraform
            .body()
            .blocks()
            .filter(|b| b.identifier() == "required_providers")
        {
            for attr in required.body().attributes() {
                out.push(requirement(attr.key(), attr.expr())?);
            }
        }
    }
    Ok(out)
}

fn requirement(local_name: &str, expr: &hcl::Expression) -> Result<Requirement, String> {
    let mut source = None;
    let mut constraint = VersionConstraint::default();
    match expr {
        // The pre-0.13 shorthand: `aws = "~> 5.0"`.
        hcl::Expression::String(version) => {
            constraint = version.parse().map_err(|e| format!("{local_name}: {e}"))?;
        }
        hcl::Expression::Object(object) => {
            for (key, value) in object {
                let key = match key {
                    hcl::ObjectKey::Identifier(id) => id.to_string(),
                    hcl::ObjectKey::Expression(hcl::Expression::String(s)) => s.clone(),
                    _ => continue,
                };
                let text = || match value {
                    hcl::Expression::String(s) => Ok(s.as_str()),
                    _ => Err(format!("{local_name}.{key} must be a string")),
                };
                match key.as_str() {
                    "source" => {
                        source = Some(text()?.parse().map_err(|e| format!("{local_name}: {e}"))?)
                    }
                    "version" => {
                        constraint = text()?.parse().map_err(|e| format!("{local_name}: {e}"))?
                    }
                    _ => {}
                }
            }
        }
        _ => return Err(format!("required provider {local_name} must be an object")),
    }
    let source = match source {
        Some(source) => source,
        None => local_name
            .parse()
            .map_err(|e| format!("{local_name}: {e}"))?,
    };
    Ok(Requirement {
        local_name: local_name.into(),
        source,
        constraint,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_combines_required_providers() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("main.tf"),
            r#"
            terraform {
              required_providers {
                aws = { source = "hashicorp/aws", version = ">= 5.0" }
                random = "~> 3.0"
              }
            }
            resource "aws_sqs_queue" "q" { name = "q" }
            "#,
        )
        .unwrap();
        fs::write(
            dir.path().join("versions.tf"),
            "terraform {\n required_providers {\n aws = {\n source = \"hashicorp/aws\"\n version = \"< 6.0.0\"\n }\n }\n}\n",
        )
        .unwrap();
        fs::write(dir.path().join("notes.txt"), "terraform {").unwrap();
        let reqs = required_providers(dir.path()).unwrap();
        assert_eq!(reqs.len(), 2);
        assert_eq!(reqs[0].local_name, "aws");
        assert_eq!(
            reqs[0].source.to_string(),
            "registry.terraform.io/hashicorp/aws"
        );
        assert_eq!(reqs[0].constraint.to_string(), ">= 5.0, < 6.0.0");
        assert!(reqs[0].constraint.allows(&"5.100.0".parse().unwrap()));
        assert!(!reqs[0].constraint.allows(&"6.0.0".parse().unwrap()));
        assert_eq!(
            reqs[1].source.to_string(),
            "registry.terraform.io/hashicorp/random"
        );
    }

    #[test]
    fn conflicting_sources_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("a.tf"),
            "terraform {\n required_providers {\n x = { source = \"a/x\" }\n }\n}\n",
        )
        .unwrap();
        fs::write(
            dir.path().join("b.tf"),
            "terraform {\n required_providers {\n x = { source = \"b/x\" }\n }\n}\n",
        )
        .unwrap();
        let err = required_providers(dir.path()).unwrap_err().to_string();
        assert!(err.contains("two sources"), "{err}");
    }
}
