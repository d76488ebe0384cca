//! Roots run without a manifest (`run --root`): a root of our own through
//! every stage whose moves a root run derives, once calling its module from
//! a git repository, a registry and an archive (installed by `init` in each
//! working copy, as in a new clone) and once with the module in a local
//! folder beside it under every toggle; and the roots the aws lane cannot run, each stopped at once with
//! a page saying why.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use gauntlet::estate::{Estate, RootArgs};
use gauntlet::stage::{StageId, Toggle};

use crate::bad_input::stopped;
use crate::runs::{broken_args, broken_run, judge_broken};
use crate::{assert_nothing_left, finish, moto_pids, said, workspace, Scratch};

fn root(name: &str) -> PathBuf {
    workspace().join("gauntlet/tests/fixtures/roots").join(name)
}

/// The stage a root run cannot derive its moves for: the neighbour estate
/// is named by a manifest.
const MANIFEST_ONLY: [&str; 1] = ["Two estates on one twin"];

/// `git` with `args` in `dir`, as a fixed author.
pub(crate) fn git(dir: &Path, args: &[&str]) {
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

/// The module registry (and archive server) the engine's own tests speak
/// the protocol with, on a free loopback port, serving the packages under
/// `served`; stopped when dropped.
pub(crate) struct Registry {
    child: std::process::Child,
    pub(crate) port: u16,
}

impl Registry {
    pub(crate) fn start(served: &Path) -> Registry {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("python3")
            .arg(workspace().join("engine/tests/fixtures/module_registry.py"))
            .arg(served)
            .arg(port.to_string())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed().as_secs() < 20,
                "the registry did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Registry { child, port }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The fixture's module packed as a registry package (`acme/web-sg/aws`
/// 1.0.0, a `.tar.gz`) and as a `.zip` archive, under `at/served`.
pub(crate) fn served(at: &Path) -> PathBuf {
    let served = at.join("served");
    let package = served.join("modules/acme/web-sg/aws");
    let archives = served.join("archives");
    for d in [&package, &archives] {
        fs::create_dir_all(d).unwrap();
    }
    let module = root("modules/web-sg");
    for (program, args) in [
        (
            "tar",
            vec![
                "-czf".to_owned(),
                package.join("1.0.0.tar.gz").display().to_string(),
                "main.tf".into(),
            ],
        ),
        (
            "python3",
            vec![
                "-m".into(),
                "zipfile".into(),
                "-c".into(),
                archives.join("web-sg.zip").display().to_string(),
                "main.tf".into(),
            ],
        ),
    ] {
        let out = Command::new(program)
            .args(&args)
            .current_dir(&module)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{program}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    served
}

/// A CLI config reaching the registry on `port` by the host name
/// `registry.gauntlet.test`, beside what the user's own config holds.
pub(crate) fn registry_config(at: &Path, port: u16) -> PathBuf {
    let own = std::env::var_os("TF_CLI_CONFIG_FILE")
        .and_then(|f| fs::read_to_string(f).ok())
        .unwrap_or_default();
    let path = at.join("registry.tfrc");
    fs::write(
        &path,
        format!(
            "{own}\nhost \"registry.gauntlet.test\" {{\n  services = {{\n    \"modules.v1\" = \"http://127.0.0.1:{port}/v1/modules/\"\n  }}\n}}\n"
        ),
    )
    .unwrap();
    path
}

/// The fixture's module as a git repository under `at`, tagged `v1.0.0`.
pub(crate) fn web_sg_repo(at: &Path) -> PathBuf {
    let repo = at.join("web-sg");
    fs::create_dir_all(&repo).unwrap();
    fs::copy(root("modules/web-sg/main.tf"), repo.join("main.tf")).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "web-sg"]);
    git(&repo, &["tag", "v1.0.0"]);
    repo
}

/// The vpc root copied under `at`, calling its module three ways, as
/// users call modules: from a git repository made of the module's folder
/// and tagged `v1.0.0` (`git::file://…?ref=v1.0.0`), from the registry on
/// `port` by a version constraint, and as a `.zip` archive over HTTP.
fn vpc_calling_remote(at: &Path, port: u16) -> PathBuf {
    let repo = web_sg_repo(at);
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
    let call = |name: &str, source: &str| {
        format!(
            "module \"{name}\" {{\n  {source}\n  name   = \"${{var.prefix}}-{name}\"\n  vpc_id = aws_vpc.main.id\n  cidr   = aws_vpc.main.cidr_block\n}}\n"
        )
    };
    fs::write(
        dir.join("remote.tf"),
        [
            call(
                "web_registry",
                "source  = \"registry.gauntlet.test/acme/web-sg/aws\"\n  version = \"~> 1.0\"",
            ),
            call(
                "web_archive",
                &format!("source = \"http://127.0.0.1:{port}/archives/web-sg.zip\""),
            ),
        ]
        .join("\n"),
    )
    .unwrap();
    dir
}

#[test]
fn a_root_calling_its_modules_from_git_a_registry_and_an_archive_passes_every_stage_it_runs() {
    let s = Scratch::new();
    let at = s.dir.path().join("repos");
    let registry = Registry::start(&served(&at));
    let config = registry_config(&at, registry.port);
    let dir = vpc_calling_remote(&at, registry.port).display().to_string();
    let out = finish(
        s.gauntlet(&["run", "--root", &dir, "--var", "prefix=gx"])
            .env("TF_CLI_CONFIG_FILE", &config)
            .output()
            .unwrap(),
    );
    drop(registry);
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
            "10 resource types declared by it and the 3 remote modules it calls, installed by init in each working copy"
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
    let cold = &said(&r, "Cold deploy");
    for seen in [
        "18 instances over 10 types",
        "2 ec2:subnet",
        "5 ec2:security-group",
        "1 iam_group",
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
            "refused the 1 object(s) nothing but a record proves, by address, each with an import block as the remedy (aws_iam_group.operators (gx-operators)); with those import blocks written, its plan (Plan: 1 to import,",
        ),
        (
            "Lost record store",
            "imports exactly them, creates, destroys and replaces nothing",
        ),
        (
            "Greenfield apply",
            "with -no-records it refused the 1 object(s) nothing but a record proves, by address, each with an import block as the remedy (aws_iam_group.operators (gx-operators)); with those import blocks written, its plan (Plan: 1 to import,",
        ),
        ("Two applies at once", "gained aws_sqs_queue.concurrent"),
    ] {
        let detail = &said(&r, title);
        assert!(detail.contains(seen), "{title}: {seen}: {detail}");
    }
    // Greenfield's objects are new, their generated ids not stock's.
    let greenfield = &said(&r, "Greenfield apply");
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
    assert_eq!(toggles.len(), 33);
    root_run(&toggles, None);
}
