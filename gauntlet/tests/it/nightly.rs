//! The nightly evidence workflow's script (`scripts/evidence.sh`) on its
//! own: the estate list its matrix takes, the run history carried from
//! night to night through the cache, and the weekly benchmark's job. Its
//! `run` and `site` steps for an estate run in
//! `roots::break_root_cold_deploy`.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::{finish, workspace};

fn evidence(args: &[&str], reports: &Path) -> String {
    let out = finish(
        Command::new(workspace().join("scripts/evidence.sh"))
            .args(args)
            .env("REPORTS", reports)
            .env("GAUNTLET", env!("CARGO_BIN_EXE_gauntlet"))
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, Some(0), "{args:?}: {}{}", out.stdout, out.stderr);
    out.stdout
}

#[test]
fn the_matrix_lists_every_estate() {
    let listed: Vec<String> =
        serde_json::from_str(&evidence(&["estates"], Path::new("reports"))).unwrap();
    let mut on_disk: Vec<String> = fs::read_dir(workspace().join("estates"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("estate.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    assert_eq!(listed, on_disk);
    assert!(listed.len() >= 3, "{listed:?}");
    // The weekly run adds the benchmark as one more job.
    let weekly: Vec<String> = serde_json::from_str(&evidence(
        &["estates", "--with-bench"],
        Path::new("reports"),
    ))
    .unwrap();
    assert_eq!(weekly[..listed.len()], listed[..]);
    assert_eq!(weekly[listed.len()..], ["plan-from-nothing"]);
}

/// The benchmark's job, as the workflow runs it (a debug build and one
/// small size here): its page and figures land in the reports folder, and
/// the site draws them beside an estate's record.
#[test]
fn the_weekly_benchmark_writes_the_figures_the_site_draws() {
    let d = tempfile::tempdir().unwrap();
    let reports = d.path().join("reports");
    fs::create_dir_all(&reports).unwrap();
    let out = finish(
        Command::new(workspace().join("scripts/evidence.sh"))
            .args(["run", "plan-from-nothing"])
            .env("REPORTS", &reports)
            .env("BUILD", "debug")
            // The suite's own engine, beside the gauntlet: a build here
            // would replace it under the tests running it.
            .env(
                "CHOUDOUFU",
                Path::new(env!("CARGO_BIN_EXE_gauntlet")).with_file_name("choudoufu"),
            )
            .env("SIZES", "3")
            .env("RUNS", "1")
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let figures: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(reports.join("plan-from-nothing.json")).unwrap())
            .unwrap();
    assert_eq!(figures["build"], "debug");
    assert_eq!(figures["rows"][0]["objects"], 3);
    assert!(figures["rows"][0]["terraform_requests"].as_u64().unwrap() > 0);
    assert!(figures["rows"][0]["choudoufu_requests"].as_u64().unwrap() > 0);
    assert_eq!(
        figures["command"],
        "SHAPE=simple SIZES=\"3\" RUNS=1 BUILD=debug scripts/bench-plan.sh"
    );
    let page = fs::read_to_string(reports.join("plan-from-nothing.md")).unwrap();
    assert!(page.contains("debug build"), "{page}");
    let record = workspace().join("reports/reference-aws-stateful.json");
    fs::copy(&record, reports.join("reference-aws-stateful.json")).unwrap();
    evidence(&["site"], &reports);
    let index = fs::read_to_string(reports.join("index.md")).unwrap();
    assert!(index.contains("| 3 | "), "{index}");
    assert!(reports.join("charts/plan-from-nothing-time.svg").is_file());
}

/// Three nights, each on a fresh checkout holding only the committed
/// history: what the cache carries keeps every night's line, in order, and
/// the cache holds the files themselves, never a folder inside a folder.
#[test]
fn the_history_survives_night_after_night() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let committed = "{\"started_at\":\"2026-11-30T02:23:00Z\"}\n";
    for night in 1..=3 {
        let reports = d.path().join(format!("night-{night}/reports"));
        fs::create_dir_all(reports.join("history")).unwrap();
        let file = reports.join("history/reference-aws-stateful.jsonl");
        fs::write(&file, committed).unwrap();
        evidence(&["merge-history", &cache.display().to_string()], &reports);
        let mut lines = fs::read_to_string(&file).unwrap();
        assert_eq!(lines.lines().count(), night, "night {night}: {lines}");
        lines.push_str(&format!(
            "{{\"started_at\":\"2026-12-0{night}T02:23:00Z\"}}\n"
        ));
        fs::write(&file, lines).unwrap();
        evidence(&["keep-history", &cache.display().to_string()], &reports);
    }
    let kept = fs::read_to_string(cache.join("reference-aws-stateful.jsonl")).unwrap();
    let dates: Vec<&str> = kept.lines().map(|l| &l[15..25]).collect();
    assert_eq!(
        dates,
        ["2026-11-30", "2026-12-01", "2026-12-02", "2026-12-03"],
        "{kept}"
    );
    let entries: Vec<String> = fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries, ["reference-aws-stateful.jsonl"]);
}
