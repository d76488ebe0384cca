//! Corpus estates: a published root pinned by commit, brought from its
//! repository and run through the stages as it is. The repository here is
//! one the test makes, fetched over `file://` (no network): a root whose
//! own folder holds module calls and nothing else, calling the
//! repository's own module beside it and a module from git, from a
//! registry and from an archive, as published examples do. So the moves
//! of Rename, Remove a block, Change count and Plan, review, apply are
//! module calls'.

use std::fs;
use std::path::{Path, PathBuf};

use gauntlet::stage::{StageId, Toggle};

use crate::roots::{git, registry_config, served, web_sg_repo, Registry};
use crate::runs::judge_broken;
use crate::{assert_nothing_left, finish, said, workspace, Scratch};

const ESTATE: &str = "corpus-calls";

/// The stages that move module calls, the last of them the run's.
const STOP: StageId = StageId::PlanReviewApply;

/// The repository under `at`, its root calling the registry on `port`,
/// committed; and the commit.
fn repository(at: &Path, port: u16) -> (PathBuf, String) {
    let web_sg = web_sg_repo(at);
    let repo = at.join("published");
    let fixture = workspace().join("gauntlet/tests/fixtures/corpus");
    for f in ["examples/calls/main.tf", "modules/network/main.tf"] {
        let to = repo.join(f);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        let text = fs::read_to_string(fixture.join(f)).unwrap();
        let text = text
            .replace(
                "GIT_SOURCE",
                &format!("git::file://{}?ref=v1.0.0", web_sg.display()),
            )
            .replace(
                "ARCHIVE_SOURCE",
                &format!("http://127.0.0.1:{port}/archives/web-sg.zip"),
            );
        fs::write(to, text).unwrap();
    }
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "examples"]);
    let out = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(&repo)
        .output()
        .unwrap();
    let rev = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    // A later commit the estate does not pin.
    fs::write(repo.join("examples/calls/later.tf"), "# not pinned\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "later"]);
    (repo, rev)
}

/// The estates folder holding the corpus estate's manifest.
fn estates(at: &Path, repo: &Path, rev: &str) -> PathBuf {
    let dir = at.join("estates").join(ESTATE);
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("estate.toml"),
        format!(
            "description = \"A published example of module calls.\"\nset = \"corpus\"\nlane = \"aws\"\n\n[source]\ngit = \"file://{}\"\nrev = \"{rev}\"\npath = \"examples/calls\"\n",
            repo.display()
        ),
    )
    .unwrap();
    at.join("estates")
}

/// `gauntlet run` of the corpus estate in `s`, fetching its repository,
/// with `extra` arguments.
fn run(s: &Scratch, extra: &[String]) -> (std::process::Command, Registry) {
    let at = s.dir.path().join("repos");
    let registry = Registry::start(&served(&at));
    let config = registry_config(&at, registry.port);
    let (repo, rev) = repository(&at, registry.port);
    let estates = estates(&at, &repo, &rev).display().to_string();
    let cache = s.dir.path().join("sources").display().to_string();
    let mut args = vec![
        "run".to_owned(),
        ESTATE.to_owned(),
        "--estates-dir".into(),
        estates,
        "--source-cache".into(),
        cache,
        "--stop-after".into(),
        STOP.slug(),
    ];
    args.extend_from_slice(extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = s.gauntlet(&args);
    cmd.env("TF_CLI_CONFIG_FILE", config);
    (cmd, registry)
}

#[test]
fn a_corpus_estate_of_module_calls_runs_every_stage_moving_calls() {
    let s = Scratch::new();
    let (mut cmd, registry) = run(&s, &[]);
    let out = finish(cmd.output().unwrap());
    drop(registry);
    assert_eq!(
        out.code,
        Some(0),
        "{}\n{}\n{}",
        out.stdout,
        s.not_passed(ESTATE),
        out.stderr
    );
    assert_nothing_left(&out.stderr, &s);

    let r = s.record(ESTATE);
    assert_eq!(r["set"], "corpus");
    assert_eq!(r["source"]["path"], "examples/calls");
    let rev = r["source"]["rev"].as_str().unwrap().to_owned();
    for row in r["stages"].as_array().unwrap() {
        let title = row["title"].as_str().unwrap();
        let id = StageId::ALL
            .into_iter()
            .find(|s| s.title() == title)
            .unwrap();
        let verdict = if id > STOP { "not-run" } else { "pass" };
        assert_eq!(row["verdict"], verdict, "{title}: {}", row["detail"]);
    }
    // The commit's tree, brought into the cache: not the later commit.
    let tree = s.dir.path().join("sources").join(&rev);
    assert!(tree.join("examples/calls/main.tf").is_file());
    assert!(!tree.join("examples/calls/later.tf").exists());
    // Each call-moving stage names the call it moved.
    for (title, seen) in [
        (
            "Rename",
            "moved block: module.network -> module.network_renamed on both twins",
        ),
        (
            "Rename",
            "each confined to its tofu-address tag rewritten from module.network to module.network_renamed",
        ),
        (
            "Remove a block",
            "module \"web_registry\" and the outputs reading it deleted from both roots",
        ),
        ("Remove a block", "the same address and action as stock's own plan"),
        (
            "Change count",
            "count = 1 with moved { from = module.web, to = module.web[0] }",
        ),
        (
            "Plan, review, apply",
            "a saved plan giving module.network_renamed a reviewed tag",
        ),
    ] {
        let detail = &said(&r, title);
        assert!(detail.contains(seen), "{title}: {seen}: {detail}");
    }
    let page = s.page(ESTATE);
    assert!(
        page.contains(&format!("commit {rev}, folder examples/calls.")),
        "{page}"
    );
    assert!(
        page.contains(&format!("cargo run -p gauntlet -- run {ESTATE}"))
            && page.contains("--source-dir"),
        "{page}"
    );
}

/// Every toggle of the stages that move calls turns its stage red on a
/// root of module calls, where each tampers in its own way (a `moved`
/// block left out, a count change kept off the estate twin, a marker
/// rewritten).
#[test]
fn break_corpus_module_call_stages() {
    let toggles = [
        Toggle::RenameInPlace,
        Toggle::RenameMarker,
        Toggle::RemoveDestroy,
        Toggle::CountDown,
        Toggle::CountUp,
        Toggle::ReviewRefused,
        Toggle::ReviewApplied,
    ];
    let s = Scratch::new();
    let breaks: Vec<String> = toggles
        .iter()
        .flat_map(|t| ["--break".to_owned(), t.name().to_owned()])
        .collect();
    let (cmd, registry) = run(&s, &breaks);
    judge_broken(&s, cmd, ESTATE, &toggles, Some(STOP));
    drop(registry);
}
