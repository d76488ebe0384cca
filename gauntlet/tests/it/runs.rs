//! Whole runs of the reference estates: clean, and under each BREAK toggle.

use std::path::{Path, PathBuf};

use gauntlet::estate::Estate;
use gauntlet::machine::Pins;
use gauntlet::stage::{StageId, Toggle};

use crate::{
    assert_nothing_left, finish, moto_pids, said, stage, workspace, Scratch, ESTATE, NETWORK,
    PLATFORM,
};

/// The stages this gauntlet runs, in the page's order.
const RUN: [&str; 19] = [
    "Cold deploy",
    "Migrate",
    "Replan from nothing",
    "No-op apply",
    "Drift and reconverge",
    "Rename",
    "Remove a block",
    "Change count",
    "Replace with create_before_destroy",
    "Crash mid-apply",
    "Teardown",
    "Plan, review, apply",
    "Greenfield apply",
    "Strict profile",
    "Plan with no local state",
    "A second machine",
    "Lost record store",
    "Two applies at once",
    "Two estates on one twin",
];

fn detail(r: &serde_json::Value, title: &str) -> String {
    said(r, title)
}

/// Run `estate` with no toggle and require every stage it runs to pass,
/// the others to be listed as not run, the page to say so and nothing to
/// be left running. Returns the run record.
fn clean_run(estate: &str) -> serde_json::Value {
    let s = Scratch::new();
    let out = finish(s.gauntlet(&["run", estate]).output().unwrap());
    assert_eq!(
        out.code,
        Some(0),
        "{}\n{}\n{}",
        out.stdout,
        s.not_passed(estate),
        out.stderr
    );
    assert_eq!(moto_pids(&out.stderr).len(), 2, "{}", out.stderr);
    assert_nothing_left(&out.stderr, &s);

    let r = s.record(estate);
    // Only an estate with a [neighbour] has a second estate to run.
    let neighbour = estate == PLATFORM;
    for title in RUN {
        let row = stage(&r, title);
        if title == "Two estates on one twin" && !neighbour {
            assert_eq!(row["verdict"], "not-run", "{title}: {}", row["detail"]);
            assert!(
                row["detail"].as_str().unwrap().contains("no [neighbour]"),
                "{}",
                row["detail"]
            );
            continue;
        }
        assert_eq!(row["verdict"], "pass", "{title}: {}", row["detail"]);
        assert!(row["duration_ms"].as_u64().unwrap() > 0);
    }
    // Every stage runs.
    assert_eq!(RUN.len(), StageId::ALL.len());

    let page = s.page(estate);
    assert!(page.contains("| Stage | Verdict | Duration | What it did |"));
    for title in RUN {
        let id = StageId::ALL
            .into_iter()
            .find(|s| s.title() == title)
            .unwrap();
        let verdict = if title == "Two estates on one twin" && !neighbour {
            "not run"
        } else {
            "pass"
        };
        assert!(
            page.contains(&format!("| [{title}](#{}) | {verdict} |", id.slug()))
                || page.contains(&format!(
                    "| [{title} (not a headline stage)](#{}) | {verdict} |",
                    id.slug()
                )),
            "{title}"
        );
        // Each condition of a stage that ran is on the page, held.
        if verdict == "pass" {
            for t in Toggle::ALL.into_iter().filter(|t| t.stage() == id) {
                assert!(
                    page.contains(&format!(
                        "- holds: passes when {} ([`{}`]",
                        t.bar(),
                        t.name()
                    )),
                    "{title}: {}",
                    t.name()
                );
            }
        }
    }
    assert!(page.contains("Oracle: stock terraform"));
    assert!(page.contains(&format!("cargo run -p gauntlet -- run {estate}")));
    let second = detail(&r, "A second machine");
    for seen in [
        "in a fresh copy of the root (no local folder, no schema cache, no state file, a separate HOME) choudoufu apply proposed exactly ",
        "the first copy's next plan is empty (No changes.",
        "the second copy's apply read what the first left in the live store ('# aws_ssm_parameter.second_machine (deposed object ",
        "applied 0 added, 0 changed, 1 destroyed, after which the AWS CLI finds exactly ",
    ] {
        assert!(second.contains(seen), "{seen}: {second}");
    }
    let lost = detail(&r, "Lost record store");
    for seen in [
        "records (",
        "deleted, and the plan made in a fresh copy of the root",
        "creates, destroys and replaces nothing",
        "the store holds ",
        "the next plan is empty (No changes.",
    ] {
        assert!(lost.contains(seen), "{seen}: {lost}");
    }
    let lock = detail(&r, "Two applies at once");
    for seen in [
        "is locked by another run: lock ID ",
        "waited its turn and then applied 0 added, 0 changed, 0 destroyed",
        "the next apply was refused at exit 1",
        "one more apply applied 0 added, 0 changed, 1 destroyed",
    ] {
        assert!(lock.contains(seen), "{seen}: {lock}");
    }
    let t = &r["timing"];
    assert!(t["terraform"].as_u64().unwrap() > 0 && t["witness"].as_u64().unwrap() > 0);
    assert!(t["engine"].as_u64().unwrap() > 0);
    r
}

#[test]
fn a_clean_run_passes_every_stage_it_runs_and_leaves_nothing_running() {
    let r = clean_run(ESTATE);
    let cold = detail(&r, "Cold deploy");
    assert!(cold.contains("17 instances"), "{cold}");
    assert!(
        cold.contains("zero tofu-estate or tofu-address tags"),
        "{cold}"
    );
    let migrate = detail(&r, "Migrate");
    assert!(
        migrate.contains(
            "17 of 17 instances accounted for: 11 newly stamped, 0 already stamped, 6 recorded"
        ),
        "{migrate}"
    );
    assert!(
        migrate.contains("tofu-estate=reference-aws-stateful")
            && migrate.contains("all 11 tagged objects"),
        "{migrate}"
    );
    assert!(
        detail(&r, "Replan from nothing").contains("exits 0: No changes."),
        "{}",
        detail(&r, "Replan from nothing")
    );
    let noop = detail(&r, "No-op apply");
    assert!(noop.contains("0 added, 0 changed, 0 destroyed"), "{noop}");
    let drift = detail(&r, "Drift and reconverge");
    assert!(
        drift.contains("choudoufu proposed exactly aws_ssm_parameter.shard[0] (update)"),
        "{drift}"
    );
    let rename = detail(&r, "Rename");
    assert!(
        rename.contains("exactly aws_sqs_queue.dead_letters (update)")
            && rename.contains("tofu-address=aws_sqs_queue.dead_letters"),
        "{rename}"
    );
    let replace = detail(&r, "Replace with create_before_destroy");
    assert!(
        replace.contains("choudoufu proposed exactly aws_ssm_parameter.hashed (replace)")
            && replace.contains("+/- create replacement and then destroy")
            && replace.contains("before the deposed object's destroy starts")
            && replace.contains("the next plan is empty"),
        "{replace}"
    );
    let crash = detail(&r, "Crash mid-apply");
    assert!(
        crash.contains("choudoufu proposed exactly aws_ssm_parameter.crash_second (create)")
            && crash.contains("the recovery apply: 1 added, 0 changed, 0 destroyed")
            && crash.contains("the record's deposed entry is cleared and the replan is empty"),
        "{crash}"
    );
    let review = detail(&r, "Plan, review, apply");
    assert!(
        review.contains("The approved plan no longer matches the live system")
            && review.contains("the identical file applied: 0 added, 1 changed, 0 destroyed"),
        "{review}"
    );
    let remove = detail(&r, "Remove a block");
    assert!(
        remove.contains("choudoufu proposed exactly aws_ssm_parameter.worker_concurrency (delete)"),
        "{remove}"
    );
    let count = detail(&r, "Change count");
    assert!(
        count.contains("aws_ssm_parameter.shard[1] (delete)")
            && count.contains("aws_ssm_parameter.shard[1] (create)"),
        "{count}"
    );
    let teardown = detail(&r, "Teardown");
    assert!(
        teardown.contains("removed exactly the 16 instances"),
        "{teardown}"
    );
    assert!(teardown.contains("refaws-preexisting-keep"), "{teardown}");
    assert!(
        teardown.contains("choudoufu destroy on the estate twin destroyed 16 objects"),
        "{teardown}"
    );
    let green = detail(&r, "Greenfield apply");
    assert!(
        green.contains("17 added, 0 changed, 0 destroyed"),
        "{green}"
    );
    assert!(green.contains("field by field"), "{green}");
    let strict = detail(&r, "Strict profile");
    for refusal in [
        "\"Strict profile: secret refused\", naming aws_s3_bucket.strict_secret",
        "\"Strict profile: create refused\", naming aws_cloudfront_origin_access_control.strict_extra",
        "\"Strict profile: marker repair refused\", naming aws_sqs_queue.jobs",
    ] {
        assert!(strict.contains(refusal), "{refusal}: {strict}");
    }
    assert!(
        strict.contains("plans empty with every toggle on"),
        "{strict}"
    );
    let local = detail(&r, "Plan with no local state");
    assert!(
        local.contains("in a fresh copy of the root with no local folder")
            && local.contains("it is empty too (No changes.")
            && local.contains("plan_requests_no_local_state="),
        "{local}"
    );
}

/// The second estate: for_each over a map, an inline role policy owned
/// through its role, a subscription owned through its topic.
#[test]
fn a_clean_run_of_the_platform_estate_passes_every_stage_it_runs() {
    let r = clean_run(PLATFORM);
    let cold = detail(&r, "Cold deploy");
    assert!(cold.contains("24 instances"), "{cold}");
    let migrate = detail(&r, "Migrate");
    assert!(
        migrate.contains(
            "24 of 24 instances accounted for: 15 newly stamped, 0 already stamped, 9 recorded"
        ),
        "{migrate}"
    );
    let drift = detail(&r, "Drift and reconverge");
    assert!(
        drift.contains(r#"choudoufu proposed exactly aws_ssm_parameter.service["api"] (update)"#),
        "{drift}"
    );
    let rename = detail(&r, "Rename");
    assert!(
        rename.contains("exactly aws_sqs_queue.work_intake (update)")
            && rename.contains("tofu-address=aws_sqs_queue.work_intake"),
        "{rename}"
    );
    let remove = detail(&r, "Remove a block");
    assert!(
        remove.contains("choudoufu proposed exactly aws_ssm_parameter.release (delete)"),
        "{remove}"
    );
    let count = detail(&r, "Change count");
    assert!(
        count.contains("aws_ssm_parameter.replica[1] (delete)")
            && count.contains("aws_ssm_parameter.replica[1] (create)"),
        "{count}"
    );
    let teardown = detail(&r, "Teardown");
    assert!(
        teardown.contains("choudoufu destroy on the estate twin destroyed 23 objects")
            && teardown.contains("platform-preexisting-legacy"),
        "{teardown}"
    );
    let green = detail(&r, "Greenfield apply");
    assert!(
        green.contains("24 added, 0 changed, 0 destroyed") && green.contains("field by field"),
        "{green}"
    );
    let replace = detail(&r, "Replace with create_before_destroy");
    assert!(
        replace.contains("choudoufu proposed exactly aws_ssm_parameter.hashed (replace)")
            && replace.contains("/platform/replace/hashed-")
            && replace.contains("before the deposed object's destroy starts"),
        "{replace}"
    );
    let crash = detail(&r, "Crash mid-apply");
    assert!(
        crash.contains("choudoufu proposed exactly aws_ssm_parameter.crash_second (create)")
            && crash.contains("/platform/crash/first carrying tofu-estate=reference-aws-platform"),
        "{crash}"
    );
    let review = detail(&r, "Plan, review, apply");
    assert!(
        review.contains("saved exactly aws_sqs_queue.alerts (update)")
            && review.contains("The approved plan no longer matches the live system"),
        "{review}"
    );
    let strict = detail(&r, "Strict profile");
    assert!(
        strict.contains("silent over its 24 records")
            && strict.contains("\"Strict profile: create refused\", naming aws_cloudfront_origin_access_control.strict_extra")
            && strict.contains("\"Strict profile: marker repair refused\", naming aws_sqs_queue.alerts"),
        "{strict}"
    );
    let local = detail(&r, "Plan with no local state");
    assert!(local.contains("it is empty too (No changes."), "{local}");
    let two = detail(&r, "Two estates on one twin");
    for seen in [
        "estate reference-aws-platform-app applied 5 added, 0 changed, 0 destroyed",
        "platform-intake's policy, platform-alerts's subscription of platform-intake, platform-app-audit attached to platform-api, owner=app on platform-sessions",
        "reference-aws-platform's plan over objects holding the neighbour's parts: No changes.",
        "with \"Object owned by another estate\": the queue it would bind to is reference-aws-platform's, which carries the marker of estate \"reference-aws-platform\"",
        "choudoufu destroy of reference-aws-platform-app applied 0 added, 0 changed, 5 destroyed",
    ] {
        assert!(two.contains(seen), "{seen}: {two}");
    }
}

/// The third estate, a network root with four knobs: every other move each
/// stage derives from the root, and the objects the emulator's tagging API
/// leaves out (the elastic IP, the endpoints, the ACL, the rules) are found
/// by their records.
#[test]
fn a_clean_run_of_the_network_estate_passes_every_stage_it_runs() {
    let r = clean_run(NETWORK);
    let cold = detail(&r, "Cold deploy");
    assert!(
        cold.contains("42 instances")
            && cold.contains("ingress rule(s) on security group netref-app"),
        "{cold}"
    );
    let migrate = detail(&r, "Migrate");
    assert!(
        migrate.contains("42 of 42 instances accounted for"),
        "{migrate}"
    );
    let rename = detail(&r, "Rename");
    assert!(
        rename.contains("exactly aws_security_group.bastion_renamed (update)"),
        "{rename}"
    );
    let count = detail(&r, "Change count");
    assert!(
        count.contains("aws_ssm_parameter.private_subnet[2] (delete)")
            && count.contains("aws_ssm_parameter.private_subnet[2] (create)"),
        "{count}"
    );
    let green = detail(&r, "Greenfield apply");
    assert!(
        green.contains("42 added, 0 changed, 0 destroyed")
            && green.contains("the two stock deploys hold differently"),
        "{green}"
    );
    let local = detail(&r, "Plan with no local state");
    assert!(local.contains("it is empty too (No changes."), "{local}");
}

/// The network estate's toggles, as its manifest and root aim them.
fn network_toggles(cold: bool) -> Vec<Toggle> {
    let net = Estate::load(
        &workspace().join("estates"),
        NETWORK,
        &gauntlet::corpus::Checkouts {
            source_dir: None,
            cache: workspace().join(".gauntlet/sources"),
        },
    )
    .unwrap();
    Toggle::ALL
        .into_iter()
        .filter(|t| net.unaimed(*t).is_none() && (t.stage() == StageId::ColdDeploy) == cold)
        .collect()
}

#[test]
fn break_network_cold_state_cold_inventory_cold_markers_cold_undeclared() {
    let toggles = network_toggles(true);
    assert_eq!(
        toggles,
        [
            Toggle::ColdState,
            Toggle::ColdInventory,
            Toggle::ColdMarkers,
            Toggle::ColdUndeclared
        ]
    );
    broken_together(NETWORK, &toggles, Some(StageId::ColdDeploy));
}

#[test]
fn break_network_every_toggle_after_cold_deploy() {
    let toggles = network_toggles(false);
    assert_eq!(toggles.len(), 39, "{toggles:?}");
    broken_together(NETWORK, &toggles, None);
}

/// Run with `toggles` on, stopping after `stop_after` when given, and
/// require each toggle's stage to fail on that toggle's assertion, and every
/// other stage that ran to pass. Toggles run together only when each
/// corrupts what its own assertion reads and nothing another toggle's
/// assertion relies on, and each puts the live system back after its read
/// where later stages would see it.
fn broken_together(estate: &str, toggles: &[Toggle], stop_after: Option<StageId>) {
    broken_run(&["run", estate], estate, toggles, stop_after);
}

/// [`broken_together`] for any run: `run` names what to run (an estate, or
/// a root with its flags), `page` the page it writes.
pub(crate) fn broken_run(
    run: &[&str],
    page: &str,
    toggles: &[Toggle],
    stop_after: Option<StageId>,
) {
    let s = Scratch::new();
    let args = broken_args(run, toggles, stop_after);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    judge_broken(&s, s.gauntlet(&args), page, toggles, stop_after);
}

/// `run` with `--stop-after` and a `--break` for each of `toggles`.
pub(crate) fn broken_args(
    run: &[&str],
    toggles: &[Toggle],
    stop_after: Option<StageId>,
) -> Vec<String> {
    let mut args: Vec<String> = run.iter().map(|a| (*a).to_owned()).collect();
    if let Some(st) = stop_after {
        args.extend(["--stop-after".to_owned(), st.slug()]);
    }
    for t in toggles {
        args.extend(["--break".to_owned(), t.name().to_owned()]);
    }
    args
}

/// Run `cmd`, a broken run writing its pages into `s`, and judge it as
/// [`broken_run`] describes.
pub(crate) fn judge_broken(
    s: &Scratch,
    mut cmd: std::process::Command,
    page: &str,
    toggles: &[Toggle],
    stop_after: Option<StageId>,
) {
    let out = finish(cmd.output().unwrap());
    assert_nothing_left(&out.stderr, s);
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    let r = s.record(page);
    let broken: Vec<StageId> = toggles.iter().map(|t| t.stage()).collect();
    for t in toggles {
        let row = stage(&r, t.stage().title());
        let detail = row["detail"].as_str().unwrap();
        assert_eq!(row["verdict"], "fail", "{}: {detail}", t.name());
        assert!(
            row["failed"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f == t.name()),
            "{} did not fail under its own toggle: {detail}",
            t.name()
        );
        assert!(detail.contains(&format!("{}=1", t.env())), "{detail}");
        assert_fails_on_its_page(&s.page(page), *t);
    }
    for title in RUN {
        let id = StageId::ALL
            .into_iter()
            .find(|s| s.title() == title)
            .unwrap();
        // Only an estate with a [neighbour] has a second estate to run.
        let no_neighbour = id == StageId::TwoEstatesOnOneTwin && page != PLATFORM;
        if broken.contains(&id) || stop_after.is_some_and(|st| id > st) || no_neighbour {
            continue;
        }
        let row = stage(&r, title);
        assert_eq!(
            row["verdict"], "pass",
            "{title} failed though no toggle of it is on: {}",
            row["detail"]
        );
    }
}

/// Run with one toggle on through its environment variable, `env` set
/// beside it, stopping after its stage, and require the stage to fail on
/// its assertion. Returns what the run printed.
fn broken(toggle: Toggle, env: &[(&str, &Path)]) -> String {
    let s = Scratch::new();
    let mut args = vec!["run", ESTATE];
    let slug = toggle.stage().slug();
    args.extend(["--stop-after", &slug]);
    let mut cmd = s.gauntlet(&args);
    cmd.env(toggle.env(), "1").envs(env.iter().copied());
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
    assert!(detail.contains(&format!("{}=1", toggle.env())), "{detail}");
    assert_fails_on_its_page(&s.page(ESTATE), toggle);
    out.stderr
}

/// A broken run's page says its stage failed, and names the condition the
/// toggle broke, linked to the toggle.
fn assert_fails_on_its_page(page: &str, t: Toggle) {
    let stage = t.stage();
    let row = format!("](#{}) | fail |", stage.slug());
    assert!(page.contains(&row), "{}: {row}\n{page}", t.name());
    let failed = format!(
        "- **FAILED**: passes when {} ([`{}`](toggles.md#{}))",
        t.bar(),
        t.name(),
        t.name()
    );
    assert!(page.contains(&failed), "{}: {failed}\n{page}", t.name());
}

/// A filesystem mirror in the packed layout `terraform providers mirror`
/// writes, under `dir`, holding the pinned aws provider found where the
/// machine keeps it, zipped (stored, not compressed: the same bytes).
fn packed_mirror(dir: &Path) -> PathBuf {
    use std::io::Write;
    let pins = Pins::load(&workspace().join("live/aws-lane.toml")).unwrap();
    let version = &pins.oracle.aws_provider;
    let found =
        gauntlet::machine::find_provider(&workspace(), version, &pins.oracle.provider_mirrors)
            .unwrap();
    let binary = found.package;
    assert!(
        !binary.to_string_lossy().ends_with(".zip"),
        "{}",
        binary.display()
    );
    let place = dir.join("registry.terraform.io/hashicorp/aws");
    std::fs::create_dir_all(&place).unwrap();
    let archive = place.join(format!(
        "terraform-provider-aws_{version}_{}.zip",
        engine::provider::discovery::current_target()
    ));
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&archive).unwrap());
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(true)
        .unix_permissions(0o755);
    zip.start_file(binary.file_name().unwrap().to_string_lossy(), options)
        .unwrap();
    zip.write_all(&std::fs::read(&binary).unwrap()).unwrap();
    zip.finish().unwrap();
    archive
}

// The cold deploy's inventory toggle runs once more alone on the stateful
// estate, the one test that turns a toggle on through its environment
// variable. It also proves a packed mirror serves a run: the machine check
// finds the archive, and both tools' init unpack it.
#[test]
fn break_cold_inventory() {
    let mirror = tempfile::tempdir().unwrap();
    let archive = packed_mirror(mirror.path());
    let said = broken(
        Toggle::ColdInventory,
        &[("GAUNTLET_PROVIDER_MIRROR", mirror.path())],
    );
    assert!(
        said.contains(&format!("at {}", archive.display())),
        "{said}"
    );
}

// A run through every stage takes about twelve minutes alone, so each
// toggle is proven red once: the network estate's two runs take every
// toggle its root can aim (the cold deploy's together, the rest together
// after it), the platform estate's run the rest and again the knob-driven
// ones, through other objects of other types. Toggles share a run only
// when each corrupts what its own assertion reads and nothing a later
// stage reads: a toggle that changes the live system puts it back after
// its read, and two toggles of one stage touch different objects (or
// different twins). Every stage without a toggle on must still pass.

/// The platform estate's toggles: those the network estate's root cannot
/// aim (the teardown's undeclared object and the neighbour's), and the
/// knob-driven ones again through other objects of other types (a
/// for_each instance drifted, another queue stamped, renamed and
/// reviewed).
const PLATFORM_TOGGLES: [Toggle; 22] = [
    Toggle::MigrateMarkers,
    Toggle::ReplanEmpty,
    Toggle::NoopMarkers,
    Toggle::DriftReconverged,
    Toggle::RenameMarker,
    Toggle::RemoveDestroy,
    Toggle::CountUp,
    Toggle::ReplaceOrder,
    Toggle::CrashRecovered,
    Toggle::TeardownRemoved,
    Toggle::TeardownUndeclared,
    Toggle::ReviewApplied,
    Toggle::GreenfieldMarkers,
    Toggle::GreenfieldReplan,
    Toggle::StrictSilent,
    Toggle::StrictMarkers,
    Toggle::SecondWindow,
    Toggle::LostStoreReconverged,
    Toggle::LockBroken,
    Toggle::NeighbourBoundary,
    Toggle::NeighbourRefused,
    Toggle::NeighbourTeardown,
];

#[test]
fn break_platform_toggles() {
    broken_together(PLATFORM, &PLATFORM_TOGGLES, None);
}

/// Every toggle is proven red by one of the runs above: the network
/// estate's two, the platform estate's, and the cold deploy's inventory
/// toggle alone on the stateful estate.
#[test]
fn every_toggle_has_a_test_above() {
    let mut run: Vec<Toggle> = network_toggles(true);
    run.extend(network_toggles(false));
    run.extend(PLATFORM_TOGGLES);
    run.push(Toggle::ColdInventory);
    for t in Toggle::ALL {
        assert!(run.contains(&t), "no test runs {}", t.name());
    }
}
