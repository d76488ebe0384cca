//! Roots run without a manifest (`run --root`): a root of our own through
//! every stage whose moves a root run derives, once calling its module from
//! a git repository (installed by `init` in each working copy, as in a new
//! clone) and once with the module in a local folder beside it under every
//! toggle; and the roots the aws lane cannot run, each stopped at once with
//! a page saying why.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use gauntlet::estate::{Estate, RootArgs};
use gauntlet::stage::{StageId, Toggle};

use crate::bad_input::stopped;
use crate::runs::{broken_args, broken_run, judge_broken};
use crate::{assert_nothing_left, finish, moto_pids, stage, workspace, Scratch};

fn root(name: &str) -> PathBuf {
    workspace().join("gauntlet/tests/fixtures/roots").join(name)
}

/// The stage a root run cannot derive its moves for: the neighbour estate
/// is named by a manifest.
const MANIFEST_ONLY: [&str; 1] = ["Two estates on one twin"];

/// `git` with `args` in `dir`, as a fixed author.
fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=gauntlet",
            "-c",
            "user.email=gauntlet@example.com",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The vpc root copied under `at`, calling its module from a git
/// repository made of the module's folder and tagged `v1.0.0`, by
/// `git::file://…?ref=v1.0.0` as users call a module from their own
/// repositories.
fn vpc_calling_git(at: &Path) -> PathBuf {
    let repo = at.join("web-sg");
    fs::create_dir_all(&repo).unwrap();
    fs::copy(root("modules/web-sg/main.tf"), repo.join("main.tf")).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "web-sg"]);
    git(&repo, &["tag", "v1.0.0"]);
    let dir = at.join("vpc");
    fs::create_dir_all(&dir).unwrap();
    for f in ["main.tf", "versions.tf"] {
        let text = fs::read_to_string(root("vpc").join(f)).unwrap();
        let called = text.replace(
            "source = \"../modules/web-sg\"",
            &format!("source = \"git::file://{}?ref=v1.0.0\"", repo.display()),
        );
        fs::write(dir.join(f), called).unwrap();
    }
    assert!(fs::read_to_string(dir.join("main.tf"))
        .unwrap()
        .contains("git::file://"));
    dir
}

#[test]
fn a_root_calling_its_module_from_git_passes_every_stage_it_runs() {
    let s = Scratch::new();
    let dir = vpc_calling_git(&s.dir.path().join("repos"))
        .display()
        .to_string();
    let out = finish(
        s.gauntlet(&["run", "--root", &dir, "--var", "prefix=gx"])
            .output()
            .unwrap(),
    );
    assert_eq!(
        out.code,
        Some(0),
        "{}\n{}\n{}",
        out.stdout,
        s.not_passed("vpc"),
        out.stderr
    );
    assert_eq!(moto_pids(&out.stderr).len(), 2, "{}", out.stderr);
    assert_nothing_left(&out.stderr, &s);

    let r = s.record("vpc");
    assert_eq!(r["set"], "root");
    let description = r["description"].as_str().unwrap();
    assert!(
        description.contains(
            "9 resource types declared by it and the remote module it calls, installed by init in each working copy"
        ),
        "{description}"
    );
    for row in r["stages"].as_array().unwrap() {
        let title = row["title"].as_str().unwrap();
        let detail = row["detail"].as_str().unwrap();
        if MANIFEST_ONLY.contains(&title) {
            assert_eq!(row["verdict"], "not-run", "{title}: {detail}");
            assert!(detail.contains("a root run has no estate.toml"), "{detail}");
        } else {
            assert_eq!(row["verdict"], "pass", "{title}: {detail}");
        }
    }
    // The module's objects and the root's, read by ARN and by reads.toml,
    // and the one class moto's tagging API leaves out named.
    let cold = stage(&r, "Cold deploy")["detail"].as_str().unwrap();
    for seen in [
        "13 instances over 9 types",
        "2 ec2:subnet",
        "3 ec2:security-group",
        "1 logs:log-group",
        "2 route_table_association",
        "1 ssm_parameter",
        "not read: ec2:security-group-rule (not listed by the tagging API)",
    ] {
        assert!(cold.contains(seen), "{seen}: {cold}");
    }
    // The moves derived from the root: blocks of its own folder (nothing
    // refers to those Rename, Remove and Count take), and scratch objects
    // named under the estate's name.
    for (title, seen) in [
        (
            "Drift and reconverge",
            "gauntlet-drift) set on aws_cloudwatch_log_group.flow",
        ),
        (
            "Rename",
            "aws_cloudwatch_log_group.flow -> aws_cloudwatch_log_group.flow_renamed",
        ),
        (
            "Remove a block",
            "resource \"aws_internet_gateway\" \"main\" deleted",
        ),
        (
            "Change count",
            "finds an object carrying tofu-address=aws_security_group.spare[1] again",
        ),
        (
            "Plan, review, apply",
            "a saved plan giving aws_route_table.private a reviewed tag",
        ),
        (
            "Crash mid-apply",
            "finds /gauntlet/vpc/crash/first carrying tofu-estate=vpc",
        ),
        (
            "A second machine",
            "the first copy's next plan is empty (No changes.",
        ),
        (
            "Lost record store",
            "creates, destroys and replaces nothing",
        ),
        ("Two applies at once", "gained aws_sqs_queue.concurrent"),
    ] {
        let detail = stage(&r, title)["detail"].as_str().unwrap();
        assert!(detail.contains(seen), "{title}: {seen}: {detail}");
    }
    // Greenfield's objects are new, their generated ids not stock's.
    let greenfield = stage(&r, "Greenfield apply")["detail"].as_str().unwrap();
    assert!(
        greenfield.contains("field by field exactly as stock's cold deploy"),
        "{greenfield}"
    );
    let page = s.page("vpc");
    assert!(
        page.contains("cargo run -p gauntlet -- run --root ") && page.contains("--var 'prefix=gx'"),
        "{page}"
    );
    assert!(
        page.contains("Clear. Every headline stage passes."),
        "{page}"
    );
}

#[test]
fn a_root_using_another_provider_stops_before_anything_starts() {
    let s = Scratch::new();
    let dir = root("other-provider").display().to_string();
    let out = finish(s.gauntlet(&["run", "--root", &dir]).output().unwrap());
    stopped(
        &s,
        &out,
        "other-provider",
        "uses the random provider beside aws",
    );
    assert!(moto_pids(&out.stderr).is_empty(), "{}", out.stderr);
}

#[test]
fn a_root_stock_terraform_rejects_stops() {
    let s = Scratch::new();
    let dir = root("rejected").display().to_string();
    let out = finish(s.gauntlet(&["run", "--root", &dir]).output().unwrap());
    stopped(&s, &out, "rejected", "stock terraform rejected the root");
    assert!(
        out.stderr.contains("aws_sqs_queue.missing"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_empty_folder_stops() {
    let s = Scratch::new();
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().display().to_string();
    let out = finish(
        s.gauntlet(&["run", "--root", &dir, "--name", "empty"])
            .output()
            .unwrap(),
    );
    stopped(&s, &out, "empty", "not a terraform root");
}

#[test]
fn a_root_run_refuses_the_toggles_only_a_manifest_can_aim() {
    let s = Scratch::new();
    let dir = root("vpc").display().to_string();
    let out = finish(
        s.gauntlet(&["run", "--root", &dir, "--break", "cold-inventory"])
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("vpc cannot turn on cold-inventory, which deletes the declared parameter knobs.missing_parameter names out of band"),
        "{}",
        out.stderr
    );
    let out = finish(
        s.gauntlet(&["run", "--root", &dir])
            .env("BREAK_NOOP_MARKERS", "1")
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("noop-markers, which tampers with the pre-existing queue knobs.lost_preexisting_queue names"),
        "{}",
        out.stderr
    );
    assert!(moto_pids(&out.stderr).is_empty());
}

/// The toggles a root run aims itself, each proven on the fixture root: the
/// cold deploy's two, which break the state and markers every later stage
/// builds on, in a run of their own that stops after it; the others in one
/// run through every stage.
const ROOT_COLD: [Toggle; 2] = [Toggle::ColdState, Toggle::ColdMarkers];

fn root_run(toggles: &[Toggle], stop_after: Option<StageId>) {
    let dir = root("vpc").display().to_string();
    broken_run(
        &["run", "--root", &dir, "--var", "prefix=gx"],
        "vpc",
        toggles,
        stop_after,
    );
}

// Through the nightly workflow's own script, as its run and site steps
// call it: the same run, the same red verdicts, and the site rendered from
// the pages it wrote.
#[test]
fn break_root_cold_deploy() {
    let s = Scratch::new();
    let dir = root("vpc").display().to_string();
    let stop = Some(StageId::ColdDeploy);
    let mut args = broken_args(&["--root", &dir, "--var", "prefix=gx"], &ROOT_COLD, stop);
    args.extend(["--work-dir".into(), s.work().display().to_string()]);
    let script = |sub: &str| {
        let mut cmd = Command::new(workspace().join("scripts/evidence.sh"));
        cmd.arg(sub)
            .env("GAUNTLET", env!("CARGO_BIN_EXE_gauntlet"))
            .env("REPORTS", s.reports());
        for t in Toggle::ALL {
            cmd.env_remove(t.env());
        }
        cmd
    };
    let mut run = script("run");
    run.args(&args);
    judge_broken(&s, run, "vpc", &ROOT_COLD, stop);
    let site = finish(script("site").output().unwrap());
    assert_eq!(site.code, Some(0), "{}\n{}", site.stdout, site.stderr);
    let index = fs::read_to_string(s.reports().join("index.html")).unwrap();
    assert!(index.contains("vpc.html"), "{index}");
    assert!(s.reports().join("vpc.html").is_file());
}

#[test]
fn break_root_every_derived_toggle_after_cold_deploy() {
    let vpc = Estate::from_root(&root("vpc"), "vpc", &RootArgs::default()).unwrap();
    let toggles: Vec<Toggle> = Toggle::ALL
        .into_iter()
        .filter(|t| vpc.unaimed(*t).is_none() && !ROOT_COLD.contains(t))
        .collect();
    assert_eq!(toggles.len(), 32);
    root_run(&toggles, None);
}
