//! Bad input and a bad machine: each stops the run at once with a message
//! saying what is wrong and what to do, writes a page saying so, and leaves
//! nothing running.

use std::fs;
use std::net::{Ipv4Addr, TcpListener};
use std::path::Path;

use crate::{assert_nothing_left, finish, workspace, Finished, Scratch, ESTATE, NETWORK, PLATFORM};

/// The run stopped with exit code 2, said `what` on stderr, and wrote a page
/// for `estate` that says so too.
pub(crate) fn stopped(s: &Scratch, out: &Finished, estate: &str, what: &str) {
    assert_eq!(out.code, Some(2), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains(what),
        "stderr lacks {what:?}:\n{}",
        out.stderr
    );
    let r = s.record(estate);
    assert!(r["error"].as_str().unwrap().contains(what), "{r}");
    let page = s.page(estate);
    assert!(
        page.contains("Stopped. The run could not complete"),
        "{page}"
    );
    assert_nothing_left(&out.stderr, s);
}

/// A copy of the reference estate under a scratch estates dir.
fn estate_copy(s: &Scratch) -> std::path::PathBuf {
    let from = workspace().join("estates").join(ESTATE);
    let to = s.dir.path().join("estates").join(ESTATE);
    fs::create_dir_all(&to).unwrap();
    for e in fs::read_dir(from).unwrap().flatten() {
        fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
    to
}

fn run_in(s: &Scratch, estates: &Path) -> Finished {
    let dir = estates.display().to_string();
    finish(
        s.gauntlet(&["run", ESTATE, "--estates-dir", &dir])
            .output()
            .unwrap(),
    )
}

#[test]
fn a_missing_terraform() {
    let s = Scratch::new();
    let out = finish(
        s.gauntlet(&["run", ESTATE])
            .env("TERRAFORM", "/nonexistent/terraform")
            .output()
            .unwrap(),
    );
    stopped(
        &s,
        &out,
        ESTATE,
        "TERRAFORM=/nonexistent/terraform is not an executable file",
    );
    assert!(
        out.stderr.contains("Install terraform 1.11.4 on PATH"),
        "{}",
        out.stderr
    );

    let out = finish(
        s.gauntlet(&["run", ESTATE])
            .env_remove("TERRAFORM")
            .env("PATH", "/nonexistent")
            .output()
            .unwrap(),
    );
    stopped(&s, &out, ESTATE, "no `terraform` on PATH");

    // `gauntlet list` shows the estate's last verdict from its record.
    let reports = s.reports().display().to_string();
    let list = finish(
        std::process::Command::new(env!("CARGO_BIN_EXE_gauntlet"))
            .current_dir(workspace())
            .args(["list", "--reports-dir", &reports])
            .output()
            .unwrap(),
    );
    assert_eq!(list.code, Some(0), "{}", list.stderr);
    let line = list
        .stdout
        .lines()
        .find(|l| l.starts_with(ESTATE))
        .unwrap_or_else(|| panic!("{ESTATE} not listed:\n{}", list.stdout));
    assert!(
        line.contains("Stopped. The run could not complete: stock terraform was not found"),
        "{line}"
    );
    assert!(line.contains("19 not run"), "{line}");
}

#[test]
fn a_missing_engine() {
    let s = Scratch::new();
    let out = finish(
        s.gauntlet(&["run", ESTATE])
            .env("CHOUDOUFU", "/nonexistent/choudoufu")
            .output()
            .unwrap(),
    );
    stopped(
        &s,
        &out,
        ESTATE,
        "CHOUDOUFU=/nonexistent/choudoufu is not a file",
    );
    assert!(
        out.stderr.contains("cargo build -p engine --bin choudoufu"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_provider_in_no_mirror() {
    let s = Scratch::new();
    let empty = tempfile::tempdir().unwrap();
    let out = finish(
        s.gauntlet(&["run", ESTATE])
            .env("GAUNTLET_PROVIDER_MIRROR", empty.path())
            .output()
            .unwrap(),
    );
    stopped(
        &s,
        &out,
        ESTATE,
        "was not found in any filesystem mirror or plugin cache",
    );
    assert!(
        out.stderr.contains(&empty.path().display().to_string()),
        "{}",
        out.stderr
    );
}

#[test]
fn a_port_already_taken() {
    let s = Scratch::new();
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let taken = l.local_addr().unwrap().port();
    let ports = format!("{taken},{}", taken.wrapping_add(1).max(1024));
    let out = finish(
        s.gauntlet(&["run", ESTATE, "--ports", &ports])
            .output()
            .unwrap(),
    );
    stopped(
        &s,
        &out,
        ESTATE,
        &format!("port {taken} on 127.0.0.1 is already in use"),
    );
}

#[test]
fn an_unknown_estate() {
    let s = Scratch::new();
    let out = finish(s.gauntlet(&["run", "no-such-estate"]).output().unwrap());
    stopped(
        &s,
        &out,
        "no-such-estate",
        "no estate named \"no-such-estate\"",
    );
    // Every estate on disk, corpus ones with the reference ones, by name.
    let known = gauntlet::estate::names(&workspace().join("estates"));
    for n in [NETWORK, PLATFORM, ESTATE, "corpus-aws-vpc-simple"] {
        assert!(known.iter().any(|k| k == n), "{n} is not among {known:?}");
    }
    assert!(
        out.stderr.contains(&format!(
            "known estates: {}
",
            known.join(", ")
        )),
        "{}",
        out.stderr
    );
}

#[test]
fn a_malformed_manifest() {
    let s = Scratch::new();
    let dir = estate_copy(&s);
    let m = dir.join("estate.toml");
    let text = fs::read_to_string(&m)
        .unwrap()
        .replace("lane = \"aws\"", "lane = aws");
    fs::write(&m, text).unwrap();
    let out = run_in(&s, dir.parent().unwrap());
    stopped(&s, &out, ESTATE, "estate.toml");
    assert!(out.stderr.contains("line "), "{}", out.stderr);
}

#[test]
fn a_root_stock_terraform_rejects() {
    let s = Scratch::new();
    let dir = estate_copy(&s);
    fs::write(
        dir.join("broken.tf"),
        "resource \"aws_sqs_queue\" \"broken\" {\n  name = var.missing\n}\n",
    )
    .unwrap();
    let out = run_in(&s, dir.parent().unwrap());
    stopped(&s, &out, ESTATE, "stock terraform rejected the root");
    assert!(out.stderr.contains("var.missing"), "{}", out.stderr);
    assert!(out.stderr.contains("broken.tf"), "{}", out.stderr);
}

#[test]
fn a_work_dir_another_run_is_using() {
    let s = Scratch::new();
    fs::create_dir_all(s.dir.path()).unwrap();
    let lock = fs::File::create(s.work().with_extension("lock")).unwrap();
    lock.lock().unwrap();
    let out = finish(s.gauntlet(&["run", ESTATE]).output().unwrap());
    stopped(&s, &out, ESTATE, "another gauntlet run is using");
    assert!(out.stderr.contains("--work-dir"), "{}", out.stderr);
}
