//! The engine's own settings for a root: the `live { ... }` block in
//! `live.hcl`, a file stock terraform never loads, so the same root runs
//! under both.
//!
//! ```hcl
//! live {
//!   estate       = "payments"            # the marker every object carries
//!   record_store = "live"                # records in the live system (default);
//!                                        # "local", or a folder, keeps them here
//!   strict {
//!     secrets          = "refuse"
//!     no_source_create = "refuse"
//!     marker_repair    = "never"
//!   }
//! }
//! ```
//!
//! In a workspace other than `default`, `NAME`, the estate is
//! `<estate>.NAME` (see [`crate::workspaces`]).

use crate::diag::{Diagnostic, Diagnostics};
use crate::source::SourceFile;
use hcl_edit::expr::Expression;
use std::path::{Path, PathBuf};

/// The file the settings live in, beside the root's `.tf` files.
pub const FILE: &str = "live.hcl";

/// An estate's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The estate's name: the value of every object's `tofu-estate` marker.
    /// In the default workspace the estate `live.hcl` names; in workspace
    /// `NAME`, `<estate>.NAME` (see [`crate::workspaces`]).
    pub estate: String,
    /// The estate `live.hcl` names, whatever the workspace.
    pub base: String,
    /// The selected workspace.
    pub workspace: String,
    /// Where the estate's records live.
    pub record_store: RecordPlace,
    pub strict: Strict,
}

/// Where an estate's records live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordPlace {
    /// In the live system, beside the estate lock: SSM parameters of the
    /// root's default aws provider configuration.
    Live,
    /// In a local folder, holding one folder per estate.
    Local(PathBuf),
}

/// The folder an earlier version of the engine kept every root's records
/// in, and `record_store = "local"` keeps them in still.
pub const LOCAL_RECORDS: &str = ".choudoufu/records";

/// The strict profile's opt-in refusals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Strict {
    /// Refuse blocks whose sensitive values would have to be stored.
    pub refuse_secrets: bool,
    /// Refuse creates of objects with no source to rebuild them from.
    pub refuse_no_source_create: bool,
    /// Never repair a missing or wrong address marker.
    pub never_repair_markers: bool,
}

/// Whether `name` may name an estate (or a workspace, whose name ends
/// its estate's): letters, digits, '-', '_' and '.', as tags and SSM
/// parameter names take them.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// Reads `live.hcl` in `root`.
pub fn load(root: &Path) -> Result<Settings, Diagnostics> {
    let path = root.join(FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        Diagnostics::from(Diagnostic::error(
            "No estate settings",
            format!(
                "This engine needs {FILE} in {} with a live {{ estate = \"...\" }} block naming the estate whose markers it writes and reads ({e}).",
                root.display()
            ),
        ))
    })?;
    let file = SourceFile::new(FILE, text);
    let body = hcl_edit::parser::parse_body(file.text()).map_err(|e| {
        Diagnostics::from(Diagnostic::error(
            "Invalid estate settings",
            format!("{FILE}:{}: {}", e.location().line(), e.message()),
        ))
    })?;
    let mut diags = Diagnostics::default();
    let mut found = None;
    for block in body.blocks() {
        if block.ident.as_str() != "live" {
            diags.push(
                Diagnostic::error(
                    "Unsupported block type",
                    format!("Blocks of type \"{}\" are not expected in {FILE}; it holds one live block.", block.ident.as_str()),
                )
                .at(file.range(crate::config::span_of(&block.ident))),
            );
            continue;
        }
        if found.is_some() {
            diags.push(
                Diagnostic::error("Duplicate live block", "Only one live block is allowed.")
                    .at(file.range(crate::config::span_of(&block.ident))),
            );
            continue;
        }
        found = Some(block);
    }
    let Some(block) = found else {
        diags.push(Diagnostic::error(
            "No estate settings",
            format!("{FILE} has no live {{ estate = \"...\" }} block."),
        ));
        return Err(diags);
    };
    let string =
        |body: &hcl_edit::structure::Body, key: &str, diags: &mut Diagnostics| -> Option<String> {
            let a = body.get_attribute(key)?;
            match crate::config::literal(&a.value) {
                Some(crate::value::Kind::String(s)) => Some(s),
                _ => {
                    diags.push(
                        Diagnostic::error(
                            "Invalid value",
                            format!("\"{key}\" must be a literal string."),
                        )
                        .at(file.range(crate::config::span_of(&a.value))),
                    );
                    None
                }
            }
        };
    for attr in block.body.attributes() {
        if !["estate", "record_store"].contains(&attr.key.as_str()) {
            diags.push(
                Diagnostic::error(
                    "Unsupported argument",
                    format!(
                        "An argument named \"{}\" is not expected here.",
                        attr.key.as_str()
                    ),
                )
                .at(file.range(crate::config::span_of(&attr.key))),
            );
        }
    }
    let estate = string(&block.body, "estate", &mut diags);
    if estate.is_none() && !diags.has_errors() {
        diags.push(Diagnostic::error(
            "Missing required argument",
            "The argument \"estate\" is required, but no definition was found.",
        ));
    }
    if let Some(e) = &estate {
        if !valid_name(e) {
            diags.push(Diagnostic::error(
                "Invalid estate name",
                format!("The estate name {e:?} must be non-empty letters, digits, '-', '_' or '.': it is written into tags on every object."),
            ));
        }
    }
    let record_store = match string(&block.body, "record_store", &mut diags).as_deref() {
        None | Some("live") => RecordPlace::Live,
        Some("local") => RecordPlace::Local(root.join(LOCAL_RECORDS)),
        Some(folder) => RecordPlace::Local(root.join(folder)),
    };
    let mut strict = Strict::default();
    for s in block.body.get_blocks("strict") {
        for attr in s.body.attributes() {
            let v = match &attr.value {
                Expression::String(v) => v.value().to_string(),
                _ => String::new(),
            };
            let ok = match (attr.key.as_str(), v.as_str()) {
                ("secrets", "refuse") => {
                    strict.refuse_secrets = true;
                    true
                }
                ("no_source_create", "refuse") => {
                    strict.refuse_no_source_create = true;
                    true
                }
                ("marker_repair", "never") => {
                    strict.never_repair_markers = true;
                    true
                }
                ("secrets" | "no_source_create", "allow") | ("marker_repair", "repair") => true,
                _ => false,
            };
            if !ok {
                diags.push(
                    Diagnostic::error(
                        "Invalid strict setting",
                        format!(
                            "{} = {:?} is not a strict setting; use secrets = \"refuse\", no_source_create = \"refuse\" or marker_repair = \"never\".",
                            attr.key.as_str(),
                            v
                        ),
                    )
                    .at(file.range(crate::config::span_of(&attr.key))),
                );
            }
        }
    }
    let workspace = match crate::workspaces::selected(root) {
        Ok((w, _)) => w,
        Err(e) => {
            diags.push(Diagnostic::error("Invalid workspace", e.to_string()));
            String::new()
        }
    };
    if !workspace.is_empty()
        && workspace != crate::workspaces::DEFAULT
        && record_store != RecordPlace::Live
    {
        diags.push(Diagnostic::error(
            "Workspaces need the live record store",
            format!("The workspace {workspace:?} is selected, but {FILE} keeps this estate's records in a local folder: a workspace is listed beside the records in the live system. Select the default workspace, or remove record_store from {FILE}."),
        ));
    }
    if diags.has_errors() {
        return Err(diags);
    }
    let base = estate.unwrap_or_default();
    Ok(Settings {
        estate: crate::workspaces::estate(&base, &workspace),
        base,
        workspace,
        record_store,
        strict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_selected_workspace_is_its_own_estate() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), "live {\n  estate = \"pay\"\n}\n").unwrap();
        crate::workspaces::select(dir.path(), "dev").unwrap();
        let s = load(dir.path()).unwrap();
        assert_eq!((s.estate.as_str(), s.base.as_str()), ("pay.dev", "pay"));
        assert_eq!(s.workspace, "dev");
        std::fs::write(
            dir.path().join(FILE),
            "live {\n  estate = \"pay\"\n  record_store = \"local\"\n}\n",
        )
        .unwrap();
        let e = load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("Workspaces need the live record store"), "{e}");
        crate::workspaces::select(dir.path(), "default").unwrap();
        assert_eq!(load(dir.path()).unwrap().estate, "pay");
    }

    #[test]
    fn reads_the_live_block() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(FILE),
            "live {\n  estate = \"pay\"\n  strict {\n    secrets = \"refuse\"\n  }\n}\n",
        )
        .unwrap();
        let s = load(dir.path()).unwrap();
        assert_eq!(s.estate, "pay");
        assert!(s.strict.refuse_secrets && !s.strict.never_repair_markers);
        assert_eq!(s.record_store, RecordPlace::Live);
        for (given, place) in [
            ("local", RecordPlace::Local(dir.path().join(LOCAL_RECORDS))),
            ("kept", RecordPlace::Local(dir.path().join("kept"))),
            ("live", RecordPlace::Live),
        ] {
            std::fs::write(
                dir.path().join(FILE),
                format!("live {{\n  estate = \"pay\"\n  record_store = \"{given}\"\n}}\n"),
            )
            .unwrap();
            assert_eq!(load(dir.path()).unwrap().record_store, place, "{given}");
        }
    }

    #[test]
    fn refuses_what_it_cannot_use() {
        let dir = tempfile::tempdir().unwrap();
        assert!(load(dir.path())
            .unwrap_err()
            .to_string()
            .contains("live.hcl"));
        std::fs::write(
            dir.path().join(FILE),
            "live {\n  estate = \"a b\"\n  colour = 1\n}\n",
        )
        .unwrap();
        let e = load(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("colour") && e.contains("Invalid estate name"),
            "{e}"
        );
    }
}
