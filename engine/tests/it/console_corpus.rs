//! The console conformance corpus: every expression in
//! `tests/console_corpus.txt` is answered by `choudoufu console` and by
//! stock `terraform console`, and the answers are compared text for text.
//!
//! Terraform's piped console prints only the last result and stops at the
//! first error, so each expression runs in its own process on both sides.
//! An answer is stdout for a value, or the error text on stderr; both sides
//! run with `-no-color`. A corpus line may end in `# known: <reason>` to
//! record an accepted difference; those still count as mismatches.
//!
//! Both consoles run in a directory holding a copy of
//! `tests/fixtures/console/`, so the filesystem functions read the same
//! files on both sides.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const CORPUS: &str = include_str!("../console_corpus.txt");
const REQUIRED_MATCH: f64 = 0.98;
const KNOWN: &str = " # known: ";

struct Case {
    line: usize,
    expr: String,
    known: Option<String>,
}

fn cases() -> Vec<Case> {
    CORPUS
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| match l.split_once(KNOWN) {
            Some((e, why)) => Case {
                line: i + 1,
                expr: e.trim().to_string(),
                known: Some(why.trim().to_string()),
            },
            None => Case {
                line: i + 1,
                expr: l.trim().to_string(),
                known: None,
            },
        })
        .collect()
}

fn terraform() -> PathBuf {
    let name = std::env::var_os("TERRAFORM").unwrap_or_else(|| "terraform".into());
    let found = Command::new(&name)
        .arg("version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match found {
        Ok(s) if s.success() => PathBuf::from(name),
        _ => panic!(
            "terraform is not on PATH (or TERRAFORM does not name it): the console corpus needs stock terraform 1.11 as its oracle"
        ),
    }
}

/// One answer: the value printed, or the error text.
pub(crate) fn answer(program: &Path, dir: &Path, expr: &str) -> String {
    let mut child = Command::new(program)
        .args(["console", "-no-color"])
        .current_dir(dir)
        .env("TF_CLI_CONFIG_FILE", dir.join("terraformrc"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn console");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(format!("{expr}\n").as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("console output");
    let text = if out.status.success() {
        out.stdout
    } else {
        out.stderr
    };
    String::from_utf8_lossy(&text).trim().to_string()
}

/// Copies the fixture tree `from` into `to`.
fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read fixture dir") {
        let entry = entry.expect("fixture entry");
        let dest = to.join(entry.file_name());
        if entry.file_type().expect("fixture type").is_dir() {
            std::fs::create_dir(&dest).expect("create fixture dir");
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).expect("copy fixture");
        }
    }
}

/// Answers for every expression, on two workers. Terraform's console takes
/// a state lock in its working directory, so each worker has its own.
fn answers(program: &Path, exprs: &[&str]) -> Vec<String> {
    let half = exprs.len().div_ceil(2).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = exprs
            .chunks(half)
            .map(|chunk| {
                s.spawn(move || {
                    let dir = tempfile::tempdir().expect("tempdir");
                    std::fs::write(dir.path().join("terraformrc"), "").expect("write terraformrc");
                    let fixtures =
                        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/console");
                    copy_tree(&fixtures, dir.path());
                    chunk
                        .iter()
                        .map(|e| answer(program, dir.path(), e))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("worker"))
            .collect()
    })
}

#[test]
fn console_matches_terraform() {
    let tf = terraform();
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_choudoufu"));
    let cases = cases();
    assert!(
        cases.len() >= 300,
        "the corpus must hold at least 300 expressions, has {}",
        cases.len()
    );
    let exprs: Vec<&str> = cases.iter().map(|c| c.expr.as_str()).collect();
    let theirs = answers(&tf, &exprs);
    let mine = answers(&ours, &exprs);
    let mut same = 0;
    for ((c, t), m) in cases.iter().zip(&theirs).zip(&mine) {
        if t == m {
            same += 1;
            if c.known.is_some() {
                println!("line {}: marked known but now matches: {}", c.line, c.expr);
            }
            continue;
        }
        let tag = c
            .known
            .as_deref()
            .map(|k| format!(" (known: {k})"))
            .unwrap_or_default();
        println!(
            "MISMATCH line {}{tag}: {}\n--- terraform\n{t}\n--- choudoufu\n{m}\n",
            c.line, c.expr
        );
    }
    let ratio = same as f64 / cases.len() as f64;
    println!(
        "console corpus: {same}/{} identical ({:.1}%)",
        cases.len(),
        ratio * 100.0
    );
    let unexplained = cases
        .iter()
        .zip(&theirs)
        .zip(&mine)
        .filter(|((c, t), m)| t != m && c.known.is_none())
        .count();
    assert!(
        ratio >= REQUIRED_MATCH,
        "only {:.1}% of answers match terraform",
        ratio * 100.0
    );
    assert_eq!(unexplained, 0, "mismatches without a `# known:` reason");
}
