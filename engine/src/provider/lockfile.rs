//! The dependency lock file, `.terraform.lock.hcl`: the provider versions
//! `init` selected and the checksums their packages must match, read and
//! written byte for byte as terraform 1.11 reads and writes it.
//!
//! Reading checks what terraform checks (fully-qualified, normalized
//! source addresses, versions and constraints; `version` present; `hashes`
//! a non-empty list of `SCHEME:VALUE` strings; no other blocks or
//! arguments; a `module` block is only warned about) and reports each
//! problem with the file and line. Writing produces terraform's normalized
//! form: the two header comments, then one `provider` block per provider,
//! sorted by address, hashes sorted and deduplicated. Choosing versions and
//! verifying packages belong to [`super::install`] and [`super::locked`].

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::Path;

use hcl_edit::expr::Expression;

use super::discovery::{ProviderSource, Version, VersionConstraint};
use super::hashes::PackageHash;
use crate::config::{literal, span_of};
use crate::diag::{Diagnostic, Diagnostics, Sources};
use crate::source::SourceFile;
use crate::value::Kind;

/// The lock file's name, in the root module's directory.
pub const FILE: &str = ".terraform.lock.hcl";

/// One provider's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderLock {
    pub version: Version,
    /// The constraints the configuration gave when it was selected (none
    /// when it gave none), in normalized form.
    pub constraints: String,
    /// Sorted and without duplicates.
    hashes: Vec<PackageHash>,
}

impl ProviderLock {
    pub fn new(
        version: Version,
        constraints: &VersionConstraint,
        hashes: impl IntoIterator<Item = PackageHash>,
    ) -> ProviderLock {
        let mut hashes: Vec<PackageHash> = hashes.into_iter().collect();
        hashes.sort();
        hashes.dedup();
        ProviderLock {
            version,
            constraints: constraints.canonical(),
            hashes,
        }
    }

    pub fn hashes(&self) -> &[PackageHash] {
        &self.hashes
    }

    /// The hashes of the schemes this engine can check (`h1:` and `zh:`).
    pub fn preferred_hashes(&self) -> impl Iterator<Item = &PackageHash> {
        self.hashes.iter().filter(|h| h.is_h1() || h.is_zh())
    }
}

/// Every provider's entry, by source address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Locks {
    pub providers: BTreeMap<ProviderSource, ProviderLock>,
}

/// A lock file that could not be read: its problems, and the file itself
/// for rendering them with their lines.
#[derive(Debug)]
pub struct Invalid {
    pub diagnostics: Diagnostics,
    pub sources: Sources,
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let style = crate::diag::Style::new(false);
        write!(
            f,
            "{}",
            crate::diag::render_all(&self.diagnostics, &self.sources, style).trim()
        )
    }
}

impl Locks {
    /// Reads `root/.terraform.lock.hcl`; `Ok(None)` when there is none.
    /// Warnings (a `module` block) come back beside the locks.
    pub fn read(root: &Path) -> Result<Option<(Locks, Diagnostics)>, Invalid> {
        let path = root.join(FILE);
        match fs::read_to_string(&path) {
            Ok(text) => Locks::parse(&text).map(Some),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Invalid {
                diagnostics: Diagnostic::error(
                    "Failed to read dependency lock file",
                    format!("Error reading {}: {e}.", path.display()),
                )
                .into(),
                sources: Sources::default(),
            }),
        }
    }

    /// Parses a lock file's text (named [`FILE`] in diagnostics).
    pub fn parse(text: &str) -> Result<(Locks, Diagnostics), Invalid> {
        let file = SourceFile::new(FILE, text.to_string());
        let mut sources = Sources::default();
        sources.add(file.clone());
        let mut diags = Diagnostics::default();
        let mut locks = Locks::default();
        let body = match hcl_edit::parser::parse_body(file.text()) {
            Ok(body) => body,
            Err(e) => {
                return Err(Invalid {
                    diagnostics: crate::config::parse_error(&file, &e).into(),
                    sources,
                })
            }
        };
        let at = |s: std::ops::Range<usize>| file.range(s);
        for attr in body.attributes() {
            diags.push(
                Diagnostic::error(
                    "Unsupported argument",
                    format!(
                        "An argument named \"{}\" is not expected here.",
                        attr.key.as_str()
                    ),
                )
                .at(at(span_of(&attr.key))),
            );
        }
        let mut seen: BTreeMap<ProviderSource, usize> = BTreeMap::new();
        let mut warned_module = false;
        for block in body.blocks() {
            match block.ident.as_str() {
                "provider" => {}
                "module" => {
                    if !warned_module {
                        warned_module = true;
                        diags.push(
                            Diagnostic::warning(
                                "Dependency locks for modules are not yet supported",
                                format!("Terraform v{} only supports dependency locks for providers, not for modules. This configuration may be intended for a later version of Terraform that also supports dependency locks for modules.", super::TERRAFORM_COMPAT_VERSION),
                            )
                            .at(at(span_of(&block.ident))),
                        );
                    }
                    continue;
                }
                other => {
                    diags.push(
                        Diagnostic::error(
                            "Unsupported block type",
                            format!("Blocks of type \"{other}\" are not expected here."),
                        )
                        .at(at(span_of(&block.ident))),
                    );
                    continue;
                }
            }
            let label = match block.labels.as_slice() {
                [hcl_edit::structure::BlockLabel::String(s)] => (s.value().to_string(), span_of(s)),
                _ => {
                    diags.push(
                        Diagnostic::error(
                            "Invalid provider lock block",
                            "A provider lock block has exactly one label: the provider's source address, in quotes.",
                        )
                        .at(at(span_of(&block.ident))),
                    );
                    continue;
                }
            };
            let (raw_addr, addr_span) = label;
            let invalid_addr = |detail: String| {
                Diagnostic::error("Invalid provider source address", detail)
                    .at(at(addr_span.clone()))
            };
            let addr = match raw_addr.parse::<ProviderSource>() {
                Ok(a) if raw_addr.split('/').count() == 3 => a,
                _ => {
                    diags.push(invalid_addr("The provider source address for a provider lock must be a valid, fully-qualified address of the form \"hostname/namespace/type\".".into()));
                    continue;
                }
            };
            if addr.to_string() != raw_addr {
                diags.push(
                    Diagnostic::error(
                        "Non-normalized provider source address",
                        format!("The provider source address for this provider lock must be written as \"{addr}\", the fully-qualified and normalized form."),
                    )
                    .at(at(addr_span.clone())),
                );
                continue;
            }
            let line = file.range(span_of(&block.ident)).start.line;
            if let Some(first) = seen.get(&addr) {
                diags.push(
                    Diagnostic::error(
                        "Duplicate provider lock",
                        format!("This lockfile already declared a lock for provider {addr} at {FILE}:{first}."),
                    )
                    .at(at(span_of(&block.ident))),
                );
                continue;
            }
            seen.insert(addr.clone(), line);
            if let Some(lock) = provider_block(&file, &addr, block, &mut diags) {
                locks.providers.insert(addr, lock);
            }
        }
        if diags.has_errors() {
            return Err(Invalid {
                diagnostics: diags,
                sources,
            });
        }
        Ok((locks, diags))
    }

    /// The file's text, exactly as terraform writes it.
    pub fn render(&self) -> String {
        let mut out = String::from(
            "# This file is maintained automatically by \"terraform init\".\n# Manual edits may be lost in future updates.\n",
        );
        for (addr, lock) in &self.providers {
            out.push_str(&format!("\nprovider {} {{\n", quoted(&addr.to_string())));
            // hclwrite aligns the `=` of consecutive one-line arguments.
            if lock.constraints.is_empty() {
                out.push_str(&format!(
                    "  version = {}\n",
                    quoted(&lock.version.to_string())
                ));
            } else {
                out.push_str(&format!(
                    "  version     = {}\n  constraints = {}\n",
                    quoted(&lock.version.to_string()),
                    quoted(&lock.constraints)
                ));
            }
            if !lock.hashes.is_empty() {
                out.push_str("  hashes = [\n");
                for h in &lock.hashes {
                    out.push_str(&format!("    {},\n", quoted(h.as_str())));
                }
                out.push_str("  ]\n");
            }
            out.push_str("}\n");
        }
        out
    }

    /// Replaces `root/.terraform.lock.hcl` atomically (mode 0644).
    pub fn write(&self, root: &Path) -> io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let mut file = tempfile::Builder::new()
            .prefix(".terraform.lock.hcl")
            .tempfile_in(root)?;
        file.write_all(self.render().as_bytes())?;
        file.flush()?;
        fs::set_permissions(file.path(), fs::Permissions::from_mode(0o644))?;
        file.persist(root.join(FILE)).map_err(|e| e.error)?;
        Ok(())
    }
}

/// A string as hclwrite quotes it (lock file values never need more than
/// `\` and `"` escaped).
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn provider_block(
    file: &SourceFile,
    addr: &ProviderSource,
    block: &hcl_edit::structure::Block,
    diags: &mut Diagnostics,
) -> Option<ProviderLock> {
    let at = |s: std::ops::Range<usize>| file.range(s);
    for inner in block.body.blocks() {
        diags.push(
            Diagnostic::error(
                "Unsupported block type",
                format!(
                    "Blocks of type \"{}\" are not expected here.",
                    inner.ident.as_str()
                ),
            )
            .at(at(span_of(&inner.ident))),
        );
    }
    for attr in block.body.attributes() {
        if !["version", "constraints", "hashes"].contains(&attr.key.as_str()) {
            diags.push(
                Diagnostic::error(
                    "Unsupported argument",
                    format!(
                        "An argument named \"{}\" is not expected here.",
                        attr.key.as_str()
                    ),
                )
                .at(at(span_of(&attr.key))),
            );
        }
    }
    let string = |expr: &Expression, diags: &mut Diagnostics| match literal(expr) {
        Some(Kind::String(s)) => Some(s),
        _ => {
            diags.push(
                Diagnostic::error(
                    "Incorrect attribute value type",
                    "Inappropriate value for attribute: string required.",
                )
                .at(at(span_of(expr))),
            );
            None
        }
    };
    let mut ok = true;
    let version = match block.body.get_attribute("version") {
        None => {
            diags.push(
                Diagnostic::error(
                    "Missing required argument",
                    "The argument \"version\" is required, but no definition was found.",
                )
                .at(at(span_of(&block.ident))),
            );
            None
        }
        Some(a) => string(&a.value, diags).and_then(|raw| {
            let invalid = |detail: String| {
                Diagnostic::error("Invalid provider version number", detail)
                    .at(at(span_of(&a.value)))
            };
            match raw.parse::<Version>() {
                Ok(v) if v.to_string() == raw => Some(v),
                Ok(v) => {
                    diags.push(invalid(format!("The selected version number for provider {addr} must be written in normalized form: \"{v}\".")));
                    None
                }
                Err(e) => {
                    diags.push(invalid(format!(
                        "The selected version number for provider {addr} is invalid: {e}."
                    )));
                    None
                }
            }
        }),
    };
    let constraints = match block.body.get_attribute("constraints") {
        None => Some(VersionConstraint::default()),
        Some(a) => string(&a.value, diags).and_then(|raw| {
            let invalid = |detail: String| {
                Diagnostic::error("Invalid provider version constraints", detail)
                    .at(at(span_of(&a.value)))
            };
            match raw.parse::<VersionConstraint>() {
                Ok(c) if c.canonical() == raw => Some(c),
                Ok(c) => {
                    diags.push(invalid(format!("The recorded version constraints for provider {addr} must be written in normalized form: \"{}\".", c.canonical())));
                    None
                }
                Err(e) => {
                    diags.push(invalid(format!(
                        "The recorded version constraints for provider {addr} are invalid: {e}."
                    )));
                    None
                }
            }
        }),
    };
    let mut hashes = Vec::new();
    if let Some(a) = block.body.get_attribute("hashes") {
        match &a.value {
            Expression::Array(items) if items.iter().next().is_none() => {
                ok = false;
                diags.push(
                    Diagnostic::error(
                        "Invalid provider hash set",
                        "The \"hashes\" argument must either be omitted or contain at least one hash value.",
                    )
                    .at(at(span_of(&a.value))),
                );
            }
            Expression::Array(items) => {
                for item in items.iter() {
                    let Some(raw) = string(item, diags) else {
                        ok = false;
                        continue;
                    };
                    match PackageHash::parse(&raw) {
                        Ok(h) => hashes.push(h),
                        Err(e) => {
                            ok = false;
                            diags.push(
                                Diagnostic::error(
                                    "Invalid provider hash string",
                                    format!("Cannot interpret \"{raw}\" as a provider hash: {e}."),
                                )
                                .at(at(span_of(item))),
                            );
                        }
                    }
                }
            }
            other => {
                ok = false;
                diags.push(
                    Diagnostic::error(
                        "Invalid expression",
                        "A static list expression is required.",
                    )
                    .at(at(span_of(other))),
                );
            }
        }
    }
    match (version, constraints, ok) {
        (Some(version), Some(constraints), true) => {
            Some(ProviderLock::new(version, &constraints, hashes))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TERRAFORM_WROTE: &str = r#"# This file is maintained automatically by "terraform init".
# Manual edits may be lost in future updates.

provider "example.com/test/fake" {
  version = "1.1.0"
  hashes = [
    "h1:ej0dK1Pxpz9hD37kCwMV+FITdmWpoZ0wVE+Snv2jFEY=",
  ]
}

provider "registry.terraform.io/hashicorp/aws" {
  version     = "5.100.0"
  constraints = "!= 4.0.0, >= 5.0.0, ~> 5.1"
  hashes = [
    "h1:edXOJWE4ORX8Fm+dpVpICzMZJat4AX0VRCAy/xkcOc0=",
    "zh:0000000000000000000000000000000000000000000000000000000000000000",
  ]
}
"#;

    #[test]
    fn reads_and_writes_terraforms_form_byte_for_byte() {
        let (locks, warnings) = Locks::parse(TERRAFORM_WROTE).unwrap();
        assert!(warnings.is_empty());
        assert_eq!(locks.providers.len(), 2);
        assert_eq!(locks.render(), TERRAFORM_WROTE);
    }

    #[test]
    fn writes_sorted_and_deduplicated() {
        let mut locks = Locks::default();
        let h = |s: &str| PackageHash::parse(s).unwrap();
        locks.providers.insert(
            "registry.terraform.io/hashicorp/aws".parse().unwrap(),
            ProviderLock::new(
                "5.100.0".parse().unwrap(),
                &">= 5.0, ~> 5.1, != 4.0.0, >= 5.0.0".parse().unwrap(),
                [
                    h("zh:0000000000000000000000000000000000000000000000000000000000000000"),
                    h("h1:edXOJWE4ORX8Fm+dpVpICzMZJat4AX0VRCAy/xkcOc0="),
                    h("h1:edXOJWE4ORX8Fm+dpVpICzMZJat4AX0VRCAy/xkcOc0="),
                ],
            ),
        );
        locks.providers.insert(
            "example.com/test/fake".parse().unwrap(),
            ProviderLock::new(
                "1.1.0".parse().unwrap(),
                &VersionConstraint::default(),
                [h("h1:ej0dK1Pxpz9hD37kCwMV+FITdmWpoZ0wVE+Snv2jFEY=")],
            ),
        );
        assert_eq!(locks.render(), TERRAFORM_WROTE);
    }

    /// The rendered problems, with the wrapping undone.
    fn errors(text: &str) -> String {
        let e = Locks::parse(text).unwrap_err().to_string();
        e.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn problems_name_the_file_and_line() {
        let broken = "provider \"registry.terraform.io/hashicorp/aws\" {\n  version = \"5.100.0\"\n  hashes = [\n    \"h1:x\",\n  \n}\n";
        let e = errors(broken);
        assert!(e.contains("on .terraform.lock.hcl line"), "{e}");
        let e = errors(
            "provider \"registry.terraform.io/hashicorp/aws\" {\n  version = \"v5.100\"\n}\n",
        );
        assert!(e.contains("Invalid provider version number"), "{e}");
        assert!(e.contains("on .terraform.lock.hcl line 2"), "{e}");
        let e = errors("provider \"hashicorp/aws\" {\n  version = \"5.100.0\"\n}\n");
        assert!(e.contains("fully-qualified"), "{e}");
        let e = errors(
            "provider \"registry.terraform.io/Hashicorp/aws\" {\n  version = \"5.100.0\"\n}\n",
        );
        assert!(e.contains("Non-normalized provider source address"), "{e}");
        let e = errors("provider \"registry.terraform.io/hashicorp/aws\" {\n  version = \"5.100.0\"\n  constraints = \"= 5.100.0\"\n}\n");
        assert!(
            e.contains("must be written in normalized form: \"5.100.0\""),
            "{e}"
        );
        let e = errors("provider \"registry.terraform.io/hashicorp/aws\" {\n  version = \"5.100.0\"\n  hashes = []\n}\n");
        assert!(e.contains("Invalid provider hash set"), "{e}");
        let e = errors("provider \"registry.terraform.io/hashicorp/aws\" {\n  version = \"5.100.0\"\n  hashes = [\"nothing\"]\n}\n");
        assert!(e.contains("Invalid provider hash string"), "{e}");
        let e = errors("provider \"registry.terraform.io/hashicorp/aws\" {\n  foo = 1\n}\nresource \"x\" \"y\" {}\n");
        assert!(e.contains("Missing required argument"), "{e}");
        assert!(
            e.contains("An argument named \"foo\" is not expected here"),
            "{e}"
        );
        assert!(
            e.contains("Blocks of type \"resource\" are not expected here"),
            "{e}"
        );
        assert!(e.contains("on .terraform.lock.hcl line 4"), "{e}");
        let twice = "provider \"registry.terraform.io/hashicorp/aws\" {\n  version = \"5.100.0\"\n}\nprovider \"registry.terraform.io/hashicorp/aws\" {\n  version = \"5.100.0\"\n}\n";
        assert!(errors(twice).contains("at .terraform.lock.hcl:1"));
    }

    #[test]
    fn a_module_block_is_a_warning() {
        let (locks, warnings) = Locks::parse("module \"x\" {}\n").unwrap();
        assert!(locks.providers.is_empty());
        assert_eq!(warnings.warnings(), 1);
    }

    #[test]
    fn write_replaces_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let (locks, _) = Locks::parse(TERRAFORM_WROTE).unwrap();
        locks.write(dir.path()).unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join(FILE)).unwrap(),
            TERRAFORM_WROTE
        );
        let (read, _) = Locks::read(dir.path()).unwrap().unwrap();
        assert_eq!(read, locks);
        assert!(Locks::read(&dir.path().join("none")).unwrap().is_none());
    }
}
