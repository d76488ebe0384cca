//! Whole runs of the reference estate: clean, and under each BREAK toggle.

use gauntlet::stage::{StageId, Toggle};

use crate::{assert_nothing_left, finish, moto_pids, stage, Scratch, ESTATE};

#[test]
fn a_clean_run_passes_cold_deploy_and_teardown_and_leaves_nothing_running() {
    let s = Scratch::new();
    let out = finish(s.gauntlet(&["run", ESTATE]).output().unwrap());
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert_eq!(moto_pids(&out.stderr).len(), 2, "{}", out.stderr);
    assert_nothing_left(&out.stderr, &s);

    let r = s.record(ESTATE);
    for title in ["Cold deploy", "Teardown"] {
        let row = stage(&r, title);
        assert_eq!(row["verdict"], "pass", "{title}: {}", row["detail"]);
        assert!(row["duration_ms"].as_u64().unwrap() > 0);
    }
    let cold = stage(&r, "Cold deploy")["detail"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(cold.contains("16 instances"), "{cold}");
    assert!(
        cold.contains("zero tofu-estate or tofu-address tags"),
        "{cold}"
    );
    let teardown = stage(&r, "Teardown")["detail"].as_str().unwrap().to_owned();
    assert!(
        teardown.contains("removed exactly the 16 instances"),
        "{teardown}"
    );
    assert!(teardown.contains("refaws-preexisting-keep"), "{teardown}");
    // Every other stage is listed, not run.
    let not_run = r["stages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["verdict"] == "not-run")
        .count();
    assert_eq!(not_run, StageId::ALL.len() - 2);

    let page = s.page(ESTATE);
    assert!(page.contains("| Stage | Verdict | Duration | Detail |"));
    assert!(page.contains("| Cold deploy | pass |"));
    assert!(page.contains("| Teardown | pass |"));
    assert!(page.contains("| Migrate | not run |"));
    assert!(page.contains("Oracle: stock terraform"));
    assert!(page.contains("cargo run -p gauntlet -- run reference-aws-stateful"));
    let t = &r["timing"];
    assert!(t["terraform"].as_u64().unwrap() > 0 && t["witness"].as_u64().unwrap() > 0);
}

/// Run with one toggle on and require its stage to fail on its assertion.
fn broken(toggle: Toggle, via_env: bool) {
    let s = Scratch::new();
    let mut args = vec!["run", ESTATE];
    if toggle.stage() == StageId::ColdDeploy {
        args.extend(["--stop-after", "cold-deploy"]);
    }
    let mut cmd = s.gauntlet(&args);
    if via_env {
        cmd.env(toggle.env(), "1");
    } else {
        cmd.args(["--break", toggle.name()]);
    }
    let out = finish(cmd.output().unwrap());
    assert_nothing_left(&out.stderr, &s);
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    let r = s.record(ESTATE);
    assert_eq!(r["breaks"][0], toggle.name());
    let row = stage(&r, toggle.stage().title());
    let detail = row["detail"].as_str().unwrap();
    assert_eq!(row["verdict"], "fail", "{detail}");
    assert!(
        row["failed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == toggle.name()),
        "{} did not fail under its own toggle: {detail}",
        toggle.name()
    );
    assert!(
        detail.contains(&format!("assertion {} failed", toggle.name())),
        "{detail}"
    );
    assert!(detail.contains(&format!("{}=1", toggle.env())), "{detail}");
}

#[test]
fn break_cold_state() {
    broken(Toggle::ColdState, false);
}

#[test]
fn break_cold_inventory() {
    broken(Toggle::ColdInventory, true);
}

#[test]
fn break_cold_markers() {
    broken(Toggle::ColdMarkers, false);
}

#[test]
fn break_cold_undeclared() {
    broken(Toggle::ColdUndeclared, false);
}

#[test]
fn break_teardown_removed() {
    broken(Toggle::TeardownRemoved, false);
}

#[test]
fn break_teardown_survivors() {
    broken(Toggle::TeardownSurvivors, true);
}

#[test]
fn break_teardown_undeclared() {
    broken(Toggle::TeardownUndeclared, false);
}

#[test]
fn every_toggle_has_a_test_above() {
    let src = include_str!("runs.rs");
    for t in Toggle::ALL {
        let name = format!("fn break_{}()", t.name().replace('-', "_"));
        assert!(src.contains(&name), "no test {name}");
    }
}
