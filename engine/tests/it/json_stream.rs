//! `-json` against stock terraform: a CI-style run of a reference estate
//! (`plan -json -out F`, `show -json F`, `apply -json F`, `plan -json`,
//! `destroy -json -auto-approve`) by each tool on its own emulator, every
//! line read as terraform's machine-readable UI, and the two streams
//! compared message by message: type, level, address, action, reason,
//! summary counts and outputs. What runs concurrently (refreshes, changes
//! in flight) is compared as a set within its part of the stream; the
//! parts must come in the same order. "Still creating" lines depend on
//! timing, so each is only required to fall inside its change.
//!
//! terraform's `resource_drift` lines are set aside and counted: drift is
//! a difference from a stored state, and the engine has none.

use crate::support::{terraform, text, Moto, Workdir};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::Path;

/// The estate's root in `w`, its provider settings for an emulator.
fn twin(estate: &str, w: &Workdir) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../estates")
        .join(estate);
    for f in ["main.tf", "live.hcl"] {
        std::fs::copy(from.join(f), w.dir.path().join(f)).unwrap();
    }
    emulator_settings(w);
}

/// A root reading data sources: the default VPC and its default
/// security group, a group of its own in that VPC, and a rule between the
/// two.
fn reader(w: &Workdir) {
    std::fs::write(
        w.dir.path().join("main.tf"),
        r#"provider "aws" {
  region = "us-east-1"
}

data "aws_vpc" "default" {
  default = true
}

data "aws_security_group" "default" {
  vpc_id = data.aws_vpc.default.id
  name   = "default"
}

resource "aws_security_group" "app" {
  name   = "json-app"
  vpc_id = data.aws_vpc.default.id
}

resource "aws_security_group_rule" "from_default" {
  type                     = "ingress"
  from_port                = 443
  to_port                  = 443
  protocol                 = "tcp"
  security_group_id        = aws_security_group.app.id
  source_security_group_id = data.aws_security_group.default.id
}

output "vpc" {
  value = data.aws_vpc.default.cidr_block
}
"#,
    )
    .unwrap();
    crate::support::write_live(w.dir.path(), "json-reader");
    emulator_settings(w);
}

fn emulator_settings(w: &Workdir) {
    std::fs::write(
        w.dir.path().join("emulator_override.tf"),
        "provider \"aws\" {\n  access_key                  = \"test\"\n  secret_key                  = \"test\"\n  skip_credentials_validation = true\n  skip_metadata_api_check     = true\n  skip_requesting_account_id  = true\n  s3_use_path_style           = true\n}\n",
    )
    .unwrap();
}

struct Tool<'a> {
    program: std::path::PathBuf,
    w: &'a Workdir,
    moto: &'a Moto,
}

impl Tool<'_> {
    fn run(&self, args: &[&str]) -> std::process::Output {
        self.w
            .command(&self.program)
            .args(args)
            .env("AWS_ENDPOINT_URL", &self.moto.endpoint)
            .output()
            .unwrap()
    }

    /// The command's stream, every line parsed; panics unless it exits 0
    /// and every line is a UI message.
    fn stream(&self, args: &[&str]) -> Vec<Json> {
        let out = self.run(args);
        assert!(out.status.success(), "{args:?}: {}", text(&out));
        let lines: Vec<Json> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{args:?}: {e}: {l}")))
            .collect();
        for l in &lines {
            for k in ["@level", "@message", "@timestamp", "type"] {
                assert!(l[k].is_string(), "{args:?}: no {k}: {l}");
            }
            assert_eq!(l["@module"], "terraform.ui", "{l}");
        }
        lines
    }
}

/// Where a message stands in a stream: the part it belongs to.
fn part(l: &Json, applied: bool) -> u8 {
    match l["type"].as_str().unwrap() {
        "version" => 0,
        "refresh_start" | "refresh_complete" => 1,
        // A data source's read while planning, with the tick a read
        // slower than ten seconds prints.
        "apply_start" | "apply_progress" | "apply_complete"
            if l["hook"]["action"] == "read" && !applied =>
        {
            1
        }
        "planned_change" => 2,
        "change_summary" if l["changes"]["operation"] == "plan" => 3,
        "outputs" if !applied => 4,
        "apply_start" | "apply_progress" | "apply_complete" => 5,
        "change_summary" => 6,
        "outputs" => 7,
        other => panic!("unexpected message type {other}: {l}"),
    }
}

/// A message as compared: everything but times, ids and timing.
fn key(l: &Json, endpoint: &str) -> String {
    let addr = |o: &Json| {
        o["resource"]["addr"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let ty = l["type"].as_str().unwrap();
    match ty {
        "version" => ty.to_owned(),
        "refresh_start" | "refresh_complete" => format!("{ty} {}", addr(&l["hook"])),
        "planned_change" => {
            let c = &l["change"];
            format!(
                "{ty} {} {} reason={} from={} importing={}",
                addr(c),
                c["action"],
                c["reason"],
                c["previous_resource"]["addr"],
                c["importing"]
            )
        }
        "apply_start" | "apply_complete" => {
            format!(
                "{ty} {} {} {}",
                addr(&l["hook"]),
                l["hook"]["action"],
                l["@level"]
            )
        }
        "change_summary" => format!("{ty} {}", l["changes"]),
        "outputs" => format!("{ty} {}", l["outputs"]).replace(endpoint, "ENDPOINT"),
        _ => format!("{ty} {}", l["@message"]),
    }
}

/// How `ours` differs from `stock`; empty when it does not.
fn differences(what: &str, ours: &[Json], stock: &[Json], endpoints: (&str, &str)) -> Vec<String> {
    let mut problems = Vec::new();
    let drift = stock
        .iter()
        .filter(|l| l["type"] == "resource_drift")
        .count();
    if drift > 0 {
        eprintln!("{what}: stock streamed {drift} resource_drift line(s), set aside");
    }
    let stock: Vec<&Json> = stock
        .iter()
        .filter(|l| l["type"] != "resource_drift")
        .collect();
    let ours: Vec<&Json> = ours.iter().collect();
    // The parts, in order.
    let parts = |s: &[&Json]| {
        let mut seq: Vec<u8> = s.iter().map(|l| part(l, after_summary(s, l))).collect();
        let sorted = seq.windows(2).all(|w| w[0] <= w[1]);
        seq.dedup();
        (seq, sorted)
    };
    let (ours_parts, ours_sorted) = parts(&ours);
    let (stock_parts, _) = parts(&stock);
    if !ours_sorted {
        problems.push(format!("{what}: our parts are out of order"));
    }
    if ours_parts != stock_parts {
        problems.push(format!(
            "{what}: parts {ours_parts:?}, stock's {stock_parts:?}"
        ));
    }
    // The messages, as sets (concurrent work comes in any order).
    let keys = |s: &[&Json], endpoint: &str| {
        let mut m: BTreeMap<String, usize> = BTreeMap::new();
        for l in s.iter().filter(|l| l["type"] != "apply_progress") {
            *m.entry(key(l, endpoint)).or_default() += 1;
        }
        m
    };
    let (ko, ks) = (keys(&ours, endpoints.0), keys(&stock, endpoints.1));
    for (k, n) in &ks {
        if ko.get(k) != Some(n) {
            problems.push(format!(
                "{what}: stock has {n} x {k}, we have {:?}",
                ko.get(k)
            ));
        }
    }
    for (k, n) in &ko {
        if !ks.contains_key(k) {
            problems.push(format!("{what}: we have {n} x {k}, stock none"));
        }
    }
    // Each change starts, may say it is still running, and completes, in
    // that order.
    let mut open: BTreeMap<String, bool> = BTreeMap::new();
    for l in &ours {
        let a = l["hook"]["resource"]["addr"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        match l["type"].as_str().unwrap() {
            "apply_start" => {
                open.insert(a, true);
            }
            "apply_progress" if open.get(&a) != Some(&true) => {
                problems.push(format!("{what}: progress outside its change: {l}"))
            }
            "apply_complete" if open.insert(a, false) != Some(true) => {
                problems.push(format!("{what}: completed before it started: {l}"))
            }
            _ => {}
        }
    }
    problems
}

/// Whether `l` comes after the stream's plan summary (an apply's outputs
/// follow its own summary).
fn after_summary(s: &[&Json], l: &Json) -> bool {
    let at = s.iter().position(|x| std::ptr::eq(*x, l)).unwrap();
    s[..at].iter().any(|x| {
        (x["type"] == "apply_start" && x["hook"]["action"] != "read")
            || (x["type"] == "change_summary" && x["changes"]["operation"] != "plan")
    })
}

fn ci_style_run_streams_as_stock_does(root: impl Fn(&Workdir)) {
    let (stock_moto, our_moto) = (Moto::start(), Moto::start());
    let (sw, ow) = (Workdir::new(), Workdir::new());
    root(&sw);
    root(&ow);
    let stock = Tool {
        program: terraform(),
        w: &sw,
        moto: &stock_moto,
    };
    let ours = Tool {
        program: Path::new(env!("CARGO_BIN_EXE_choudoufu")).to_path_buf(),
        w: &ow,
        moto: &our_moto,
    };
    for t in [&stock, &ours] {
        let out = t.run(&["init", "-input=false", "-no-color"]);
        assert!(out.status.success(), "init: {}", text(&out));
    }
    let endpoints = (our_moto.endpoint.as_str(), stock_moto.endpoint.as_str());
    let mut problems = Vec::new();
    let steps: [(&str, &[&str]); 4] = [
        ("plan -json -out", &["plan", "-json", "-out=ci.plan"]),
        ("apply -json ci.plan", &["apply", "-json", "ci.plan"]),
        ("plan -json after apply", &["plan", "-json"]),
        ("destroy -json", &["destroy", "-json", "-auto-approve"]),
    ];
    for (what, args) in steps {
        let (s, o) = (stock.stream(args), ours.stream(args));
        problems.extend(differences(what, &o, &s, endpoints));
        if what == "plan -json -out" {
            // The saved plan reads back as terraform's JSON plan, with the
            // same changes.
            let changes = |t: &Tool| {
                let out = t.run(&["show", "-json", "ci.plan"]);
                assert!(out.status.success(), "show: {}", text(&out));
                let doc: Json = serde_json::from_slice(&out.stdout).unwrap();
                let mut c: Vec<String> = doc["resource_changes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| format!("{} {}", r["address"], r["change"]["actions"]))
                    .collect();
                c.sort();
                c
            };
            let (cs, co) = (changes(&stock), changes(&ours));
            if cs != co {
                problems.push(format!("show -json: ours {co:#?}\nstock's {cs:#?}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_stateful_estate_streams_as_stock_does() {
    ci_style_run_streams_as_stock_does(|w| twin("reference-aws-stateful", w));
}

#[test]
fn the_platform_estate_streams_as_stock_does() {
    ci_style_run_streams_as_stock_does(|w| twin("reference-aws-platform", w));
}

#[test]
fn a_root_reading_data_sources_streams_as_stock_does() {
    ci_style_run_streams_as_stock_does(reader);
}

#[test]
fn apply_json_without_approval_is_refused_as_stock_refuses_it() {
    let w = Workdir::new();
    crate::support::aws_root(w.dir.path());
    crate::support::write_live(w.dir.path(), "json-refused");
    let run = |program: &Path| {
        let out = w.run(program, &["apply", "-json"]);
        let lines: Vec<Json> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (out.status.code(), lines)
    };
    let (code, ours) = run(Path::new(env!("CARGO_BIN_EXE_choudoufu")));
    let (stock_code, stock) = run(&terraform());
    assert_eq!(code, stock_code);
    assert_eq!(code, Some(1));
    assert_eq!(ours.len(), 2, "{ours:?}");
    assert_eq!(ours[0]["type"], "version");
    assert_eq!(ours[1]["type"], stock[1]["type"]);
    assert_eq!(ours[1]["@level"], "error");
    assert_eq!(ours[1]["diagnostic"], stock[1]["diagnostic"]);
}
