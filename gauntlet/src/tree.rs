//! Copies of a root's folder tree: a root whose local modules sit beside it
//! (`source = "../../modules/x"`) is copied with them, so each twin's
//! working copy resolves the same relative sources.

use std::fs;
use std::io;
use std::path::Path;

/// Folders never copied: version control, and terraform's and the
/// engine's working data (the record store among it).
const SKIPPED: &[&str] = &[".git", ".terraform", ".choudoufu"];

/// Copy the folder `from` to `to`, recursively, leaving out [`SKIPPED`]
/// folders, state files, and every file `keep` refuses. Symbolic links are
/// followed.
pub fn copy(from: &Path, to: &Path, keep: &dyn Fn(&Path) -> bool) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            if !SKIPPED.contains(&name.as_ref()) {
                copy(&path, &to.join(&*name), keep)?;
            }
        } else if !name.contains(".tfstate") && keep(&path) {
            fs::copy(&path, to.join(&*name))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_is_copied_without_state_or_working_data() {
        let d = tempfile::tempdir().unwrap();
        let from = d.path().join("repo");
        for dir in ["examples/http/.terraform/providers", "modules/http", ".git"] {
            fs::create_dir_all(from.join(dir)).unwrap();
        }
        for f in [
            "examples/http/main.tf",
            "examples/http/terraform.tfstate",
            "examples/http/.terraform/providers/p",
            "modules/http/main.tf",
            "modules/http/README.md",
            ".git/HEAD",
        ] {
            fs::write(from.join(f), "x").unwrap();
        }
        let to = d.path().join("copy");
        copy(&from, &to, &|p| p.extension().is_some_and(|e| e == "tf")).unwrap();
        assert!(to.join("examples/http/main.tf").is_file());
        assert!(to.join("modules/http/main.tf").is_file());
        for gone in [
            "examples/http/terraform.tfstate",
            "examples/http/.terraform",
            "modules/http/README.md",
            ".git",
        ] {
            assert!(!to.join(gone).exists(), "{gone} was copied");
        }
    }
}
