//! `choudoufu validate` against `terraform validate`: every broken root in
//! `engine/tests/broken_roots/` (a `.tf` or `.tf.json` file, or a directory
//! holding a root and the modules it calls) must be refused by both, with
//! errors on the same files and lines; every root in
//! `engine/tests/accepted_roots/` (the language features published roots
//! use), every estate root, its JSON rewrite, and the root calling local
//! modules in `engine/tests/fixtures/modules/`, must pass both.

use crate::support::{cli_config, plugin_mirror, terraform};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The verdict and the (file, line) of every error, from `validate -json`.
#[derive(Debug, PartialEq, Eq)]
struct Verdict {
    valid: bool,
    errors: Vec<(String, u64)>,
    summaries: Vec<String>,
}

fn verdict(out: &std::process::Output) -> Verdict {
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "validate -json printed no JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let mut errors = Vec::new();
    let mut summaries = Vec::new();
    for d in doc["diagnostics"].as_array().unwrap() {
        if d["severity"] != "error" {
            continue;
        }
        let file = d["range"]["filename"].as_str().unwrap_or("").to_string();
        let line = d["range"]["start"]["line"].as_u64().unwrap_or(0);
        errors.push((file, line));
        summaries.push(d["summary"].as_str().unwrap().to_string());
    }
    errors.sort();
    Verdict {
        valid: doc["valid"].as_bool().unwrap(),
        errors,
        summaries,
    }
}

struct Judge {
    tfrc: PathBuf,
    cache: tempfile::TempDir,
    _home: tempfile::TempDir,
}

impl Judge {
    fn new() -> Judge {
        let home = tempfile::tempdir().unwrap();
        let tfrc = cli_config(home.path(), &plugin_mirror());
        Judge {
            tfrc,
            cache: tempfile::tempdir().unwrap(),
            _home: home,
        }
    }

    fn command(&self, program: &Path, dir: &Path) -> Command {
        let mut c = Command::new(program);
        c.current_dir(dir)
            .env("TF_CLI_CONFIG_FILE", &self.tfrc)
            .env("CHOUDOUFU_CACHE_DIR", self.cache.path())
            .env("CHECKPOINT_DISABLE", "1")
            .env_remove("TF_LOG");
        c
    }

    /// terraform's verdict and ours on the root in `dir`.
    fn both(&self, dir: &Path) -> (Verdict, Verdict) {
        let init = self
            .command(&terraform(), dir)
            .args(["init", "-backend=false", "-input=false", "-no-color"])
            .output()
            .unwrap();
        let theirs = if init.status.success() {
            verdict(
                &self
                    .command(&terraform(), dir)
                    .args(["validate", "-json", "-no-color"])
                    .output()
                    .unwrap(),
            )
        } else {
            // terraform refuses to init a root it cannot parse; its init
            // errors are the verdict.
            let text = String::from_utf8_lossy(&init.stderr).to_string();
            let errors = text
                .lines()
                .filter_map(|l| l.trim().strip_prefix("on "))
                .filter_map(|l| {
                    let (file, rest) = l.split_once(" line ")?;
                    let line = rest.split([',', ':']).next()?.parse().ok()?;
                    Some((file.to_string(), line))
                })
                .collect();
            Verdict {
                valid: false,
                errors,
                summaries: text
                    .lines()
                    .filter_map(|l| l.strip_prefix("Error: ").map(str::to_string))
                    .collect(),
            }
        };
        let ours = verdict(
            &self
                .command(Path::new(env!("CARGO_BIN_EXE_choudoufu")), dir)
                .args(["validate", "-json"])
                .output()
                .unwrap(),
        );
        (theirs, ours)
    }
}

#[test]
fn broken_roots_are_refused_on_terraforms_lines() {
    let judge = Judge::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/broken_roots");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.to_string_lossy();
            p.is_dir() || name.ends_with(".tf") || name.ends_with(".tf.json")
        })
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 20,
        "at least 20 broken roots, found {}",
        cases.len()
    );
    let mut failures = Vec::new();
    println!("{:<32} {:<44} choudoufu", "root", "terraform");
    for case in &cases {
        let file = case.file_name().unwrap().to_string_lossy().to_string();
        let (name, main) = match file.strip_suffix(".tf.json") {
            Some(name) => (name, "main.tf.json"),
            None => (file.trim_end_matches(".tf"), "main.tf"),
        };
        let root = tempfile::tempdir().unwrap();
        if case.is_dir() {
            copy_tree(case, root.path());
        } else {
            std::fs::copy(case, root.path().join(main)).unwrap();
        }
        let (theirs, ours) = judge.both(root.path());
        let show = |v: &Verdict| format!("{:?} {}", v.errors, v.summaries.join("; "));
        println!("{name:<32} {:<44} {}", show(&theirs), show(&ours));
        if theirs.valid || ours.valid || theirs.errors != ours.errors {
            failures.push(format!(
                "{name}: terraform {theirs:?}\n  choudoufu {ours:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "verdicts differ:\n{}",
        failures.join("\n")
    );
}

#[test]
fn accepted_roots_are_valid_for_both() {
    let judge = Judge::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/accepted_roots");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 5,
        "at least 5 accepted roots, found {}",
        cases.len()
    );
    let mut failures = Vec::new();
    for case in &cases {
        let root = tempfile::tempdir().unwrap();
        if case.is_dir() {
            copy_tree(case, root.path());
        } else {
            std::fs::copy(case, root.path().join("main.tf")).unwrap();
        }
        let (theirs, ours) = judge.both(root.path());
        let name = case.file_name().unwrap().to_string_lossy();
        println!(
            "{name:<32} terraform {theirs:?}\n{:<32} choudoufu {ours:?}",
            ""
        );
        if !theirs.valid || theirs != ours {
            failures.push(format!(
                "{name}: terraform {theirs:?}\n  choudoufu {ours:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "verdicts differ:\n{}",
        failures.join("\n")
    );
}

#[test]
fn estate_roots_are_valid() {
    let judge = Judge::new();
    let estates = Path::new(env!("CARGO_MANIFEST_DIR")).join("../estates");
    let mut checked = 0;
    for entry in std::fs::read_dir(&estates).unwrap() {
        let src = entry.unwrap().path();
        if !src.join("estate.toml").is_file() {
            continue;
        }
        // The whole folder: a root calls its local modules (./endpoints).
        let root = tempfile::tempdir().unwrap();
        copy_tree(&src, root.path());
        let (theirs, ours) = judge.both(root.path());
        assert!(theirs.valid, "{}: terraform says {theirs:?}", src.display());
        assert!(ours.valid, "{}: choudoufu says {ours:?}", src.display());
        checked += 1;
    }
    assert!(checked > 0, "no estate found under {}", estates.display());
}

#[test]
fn json_rewrite_of_the_estate_root_is_valid() {
    let judge = Judge::new();
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/json/reference-aws-stateful");
    let root = tempfile::tempdir().unwrap();
    std::fs::copy(src.join("main.tf.json"), root.path().join("main.tf.json")).unwrap();
    let (theirs, ours) = judge.both(root.path());
    assert!(theirs.valid, "terraform says {theirs:?}");
    assert!(ours.valid, "choudoufu says {ours:?}");
}

#[test]
fn roots_calling_local_modules_are_valid() {
    let judge = Judge::new();
    let root = tempfile::tempdir().unwrap();
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/modules"),
        root.path(),
    );
    let (theirs, ours) = judge.both(root.path());
    assert!(theirs.valid, "terraform says {theirs:?}");
    assert!(ours.valid, "choudoufu says {ours:?}");
}

/// Copies the files under `from` into `to`, keeping their layout.
fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}
