//! The stateless engine end to end: `choudoufu apply`, `plan`, `destroy`
//! and their refusals against the real aws provider and a real moto, each
//! outcome read back with the AWS CLI. No terraform.tfstate is ever written.

use crate::support::{aws_provider, flat, record_parameter, text, write_live, Moto, Workdir};
use std::path::Path;

const ESTATE: &str = "it-stateless";

/// A root of SSM parameters (count from a variable) and a bucket with a
/// policy, pointed at `moto`.
fn root(dir: &Path, moto: &Moto, extra: &str) {
    std::fs::write(
        dir.join("main.tf"),
        format!(
            r#"
variable "shards" {{
  type    = number
  default = 2
}}

{provider}
resource "aws_ssm_parameter" "shard" {{
  count = var.shards
  name  = "/it/shard/${{count.index}}"
  type  = "String"
  value = "shard-${{count.index}}"
  tags  = {{ app = "it" }}
}}

resource "aws_s3_bucket" "data" {{
  bucket        = "it-data"
  force_destroy = true
}}

resource "aws_s3_bucket_policy" "data" {{
  bucket = aws_s3_bucket.data.id
  policy = jsonencode({{
    Version   = "2012-10-17"
    Statement = [{{ Effect = "Deny", Principal = "*", Action = "s3:DeleteBucket", Resource = aws_s3_bucket.data.arn }}]
  }})
}}
{extra}"#,
            provider = aws_provider(&moto.endpoint)
        ),
    )
    .unwrap();
    write_live(dir, ESTATE);
}

/// The tags of an SSM parameter, or `None` when it does not exist.
pub(crate) fn parameter_tags(moto: &Moto, name: &str) -> Option<serde_json::Value> {
    let found = moto.aws(&["ssm", "describe-parameters"]);
    let exists = found["Parameters"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["Name"] == name);
    exists.then(|| {
        moto.aws(&[
            "ssm",
            "list-tags-for-resource",
            "--resource-type",
            "Parameter",
            "--resource-id",
            name,
        ])["TagList"]
            .clone()
    })
}

fn tag<'a>(tags: &'a serde_json::Value, key: &str) -> Option<&'a str> {
    tags.as_array()?.iter().find(|t| t["Key"] == key)?["Value"].as_str()
}

/// A root using no EC2, whose configuration cannot reach it (as
/// credentials that may not list EC2 cannot): the sweep's listings of EC2
/// types by the estate's marker, its net for an object whose block and
/// record are both gone, fail. The apply and the next plan still go, and
/// say which types they could not list.
#[test]
fn a_service_the_root_does_not_use_and_cannot_reach_is_named_not_fatal() {
    let moto = Moto::start();
    let e = Workdir::new();
    let dir = e.dir.path();
    let reachable = format!("    {:<24} = \"{}\"", "ec2", moto.endpoint);
    let provider = aws_provider(&moto.endpoint);
    assert!(provider.contains(&reachable), "{provider}");
    let provider = provider.replace(&reachable, "    ec2 = \"http://ec2.invalid\"");
    std::fs::write(
        dir.join("main.tf"),
        format!(
            "{provider}\nresource \"aws_ssm_parameter\" \"p\" {{\n  name  = \"/it/no-ec2\"\n  type  = \"String\"\n  value = \"v\"\n}}\n"
        ),
    )
    .unwrap();
    write_live(dir, ESTATE);
    e.init();
    let applied = e.engine(&["apply", "-auto-approve"]);
    assert!(applied.status.success(), "{}", text(&applied));
    let plan = e.engine(&["plan", "-detailed-exitcode"]);
    let shown = flat(&text(&plan));
    assert_eq!(plan.status.code(), Some(0), "{shown}");
    assert!(shown.contains("No changes."), "{shown}");
    assert!(
        shown.contains("Warning: Some types could not be listed"),
        "{shown}"
    );
    for t in [
        "aws_eip",
        "aws_network_acl",
        "aws_vpc_security_group_ingress_rule",
    ] {
        assert!(shown.contains(t), "{t}: {shown}");
    }
    assert!(!shown.contains("aws_ssm_parameter:"), "{shown}");
}

#[test]
fn apply_replan_scale_and_destroy_with_no_state_file() {
    let moto = Moto::start();
    let e = Workdir::new();
    root(e.dir.path(), &moto, "");
    moto.aws(&[
        "ssm",
        "put-parameter",
        "--name",
        "/it/unowned",
        "--type",
        "String",
        "--value",
        "x",
    ]);
    e.init();

    let applied = e.engine(&["apply", "-auto-approve"]);
    assert!(applied.status.success(), "{}", text(&applied));
    assert!(
        text(&applied).contains("Apply complete! Resources: 4 added, 0 changed, 0 destroyed."),
        "{}",
        text(&applied)
    );
    for i in 0..2 {
        let tags = parameter_tags(&moto, &format!("/it/shard/{i}")).expect("the parameter exists");
        assert_eq!(tag(&tags, "tofu-estate"), Some(ESTATE), "{tags}");
        assert_eq!(
            tag(&tags, "tofu-address"),
            Some(format!("aws_ssm_parameter.shard[{i}]").as_str())
        );
        assert_eq!(tag(&tags, "app"), Some("it"));
    }
    let bucket_tags = moto.aws(&["s3api", "get-bucket-tagging", "--bucket", "it-data"]);
    assert_eq!(tag(&bucket_tags["TagSet"], "tofu-estate"), Some(ESTATE));
    assert!(!e.dir.path().join("terraform.tfstate").exists());

    for args in [
        &["plan", "-detailed-exitcode"][..],
        &["plan", "-detailed-exitcode", "-no-records"][..],
    ] {
        let replan = e.engine(args);
        assert_eq!(replan.status.code(), Some(0), "{args:?}: {}", text(&replan));
        assert!(text(&replan).contains("No changes."), "{}", text(&replan));
    }

    let scaled = e.engine(&["plan", "-detailed-exitcode", "-var", "shards=1"]);
    assert_eq!(scaled.status.code(), Some(2), "{}", text(&scaled));
    let out = text(&scaled);
    assert!(
        out.contains("# aws_ssm_parameter.shard[1] will be destroyed"),
        "{out}"
    );
    assert!(
        out.contains("Plan: 0 to add, 0 to change, 1 to destroy."),
        "{out}"
    );
    let applied = e.engine(&["apply", "-auto-approve", "-var", "shards=1"]);
    assert!(applied.status.success(), "{}", text(&applied));
    assert!(parameter_tags(&moto, "/it/shard/1").is_none());
    assert!(parameter_tags(&moto, "/it/shard/0").is_some());

    let destroyed = e.engine(&["destroy", "-auto-approve", "-var", "shards=1"]);
    assert!(destroyed.status.success(), "{}", text(&destroyed));
    assert!(
        text(&destroyed).contains("Destroy complete! Resources: 3 destroyed."),
        "{}",
        text(&destroyed)
    );
    assert!(parameter_tags(&moto, "/it/shard/0").is_none());
    let buckets = moto.aws(&["s3api", "list-buckets"]);
    assert!(
        buckets["Buckets"].as_array().unwrap().is_empty(),
        "{buckets}"
    );
    assert!(
        parameter_tags(&moto, "/it/unowned").is_some(),
        "an unmarked object was touched"
    );
}

#[test]
fn unowned_objects_and_corrupt_records_are_refused_by_name() {
    let moto = Moto::start();
    let e = Workdir::new();
    moto.aws(&[
        "ssm",
        "put-parameter",
        "--name",
        "/it/taken",
        "--type",
        "String",
        "--value",
        "theirs",
    ]);
    root(
        e.dir.path(),
        &moto,
        "resource \"aws_ssm_parameter\" \"taken\" {\n  name  = \"/it/taken\"\n  type  = \"String\"\n  value = \"ours\"\n}\n",
    );
    e.init();
    let refused = e.engine(&["plan"]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    let out = text(&refused);
    assert!(out.contains("Object not owned by this estate"), "{out}");
    assert!(
        flat(&out).contains("aws_ssm_parameter.taken would bind to the live object /it/taken"),
        "{out}"
    );
    let applied = e.engine(&["apply", "-auto-approve"]);
    assert_eq!(applied.status.code(), Some(1));
    assert!(
        parameter_tags(&moto, "/it/shard/0").is_none(),
        "a refused plan must change nothing"
    );
    let value = moto.aws(&["ssm", "get-parameter", "--name", "/it/taken"]);
    assert_eq!(value["Parameter"]["Value"], "theirs");

    // Another estate's object is refused by that estate's name.
    moto.aws(&[
        "ssm",
        "add-tags-to-resource",
        "--resource-type",
        "Parameter",
        "--resource-id",
        "/it/taken",
        "--tags",
        "Key=tofu-estate,Value=payments",
    ]);
    let out = text(&e.engine(&["plan"]));
    assert!(
        flat(&out).contains("carries the marker of estate \"payments\""),
        "{out}"
    );

    // A corrupt record names its file and plans nothing.
    root(e.dir.path(), &moto, "");
    let applied = e.engine(&["apply", "-auto-approve"]);
    assert!(applied.status.success(), "{}", text(&applied));
    let record = record_parameter(ESTATE, "aws_s3_bucket.data");
    assert!(moto.parameter(&record).is_some(), "no record of the bucket");
    moto.put_parameter(&record, "{ not json");
    let corrupt = e.engine(&["plan"]);
    assert_eq!(corrupt.status.code(), Some(1), "{}", text(&corrupt));
    let out = flat(&text(&corrupt));
    assert!(out.contains(&record) && out.contains("corrupt"), "{out}");
    assert!(!out.contains("will be destroyed"), "{out}");
}

/// As terraform: a plan shows `timestamp()` as known after apply and
/// `plantimestamp()` as the instant it was made; a saved plan's apply keeps
/// that instant, so the plan still matches, and `timestamp()` is the apply's.
#[test]
fn a_saved_plan_keeps_its_plantimestamp_and_leaves_timestamp_to_apply() {
    let moto = Moto::start();
    let e = Workdir::new();
    std::fs::write(
        e.dir.path().join("main.tf"),
        format!(
            r#"
{provider}
resource "aws_ssm_parameter" "stamp" {{
  name           = "/it/stamp"
  type           = "String"
  insecure_value = plantimestamp()
  description    = "applied ${{timestamp()}}"
}}

output "planned_at" {{
  value = plantimestamp()
}}
"#,
            provider = aws_provider(&moto.endpoint)
        ),
    )
    .unwrap();
    write_live(e.dir.path(), ESTATE);
    e.init();
    let planned = e.engine(&["plan", "-out", "stamp.plan"]);
    let out = text(&planned);
    assert!(planned.status.success(), "{out}");
    assert!(
        out.contains("+ description    = (known after apply)"),
        "{out}"
    );
    let at = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("+ planned_at = \""))
        .and_then(|l| l.strip_suffix('"'))
        .unwrap_or_else(|| panic!("no planned_at in {out}"))
        .to_string();
    assert!(
        out.contains(&format!("+ insecure_value = \"{at}\"")),
        "{out}"
    );

    // Apply a second later: the plan still matches, and only timestamp()
    // moved on.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let applied = e.engine(&["apply", "stamp.plan"]);
    let out = text(&applied);
    assert!(applied.status.success(), "{out}");
    assert!(out.contains(&format!("planned_at = \"{at}\"")), "{out}");
    let live = &moto.aws(&["ssm", "get-parameter", "--name", "/it/stamp"])["Parameter"];
    assert_eq!(live["Value"], at.as_str());
    let described = moto.aws(&[
        "ssm",
        "describe-parameters",
        "--parameter-filters",
        "Key=Name,Values=/it/stamp",
    ]);
    let description = described["Parameters"][0]["Description"].as_str().unwrap();
    assert!(description.starts_with("applied 20"), "{description}");
    assert_ne!(description, format!("applied {at}"));
    assert!(e.engine(&["destroy", "-auto-approve"]).status.success());
}

#[test]
fn a_saved_plan_applies_only_to_the_live_system_it_read() {
    let moto = Moto::start();
    let e = Workdir::new();
    root(e.dir.path(), &moto, "");
    e.init();
    assert!(e.engine(&["apply", "-auto-approve"]).status.success());
    let planned = e.engine(&["plan", "-var", "shards=1", "-out", "approved.plan"]);
    assert!(planned.status.success(), "{}", text(&planned));
    let shown = e.engine(&["show", "-json", "approved.plan"]);
    let doc: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    let deletes: Vec<&serde_json::Value> = doc["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["change"]["actions"] == serde_json::json!(["delete"]))
        .collect();
    assert_eq!(deletes.len(), 1, "{doc}");
    assert_eq!(deletes[0]["address"], "aws_ssm_parameter.shard[1]");

    // The world moves on between review and apply: nothing is applied.
    moto.aws(&[
        "ssm",
        "put-parameter",
        "--name",
        "/it/shard/0",
        "--type",
        "String",
        "--value",
        "drifted",
        "--overwrite",
    ]);
    let stale = e.engine(&["apply", "-var", "shards=1", "approved.plan"]);
    assert_eq!(stale.status.code(), Some(3), "{}", text(&stale));
    assert!(
        text(&stale).contains("The approved plan no longer matches the live system"),
        "{}",
        text(&stale)
    );
    assert!(
        text(&stale).contains("aws_ssm_parameter.shard[0]"),
        "{}",
        text(&stale)
    );
    assert!(
        parameter_tags(&moto, "/it/shard/1").is_some(),
        "nothing may be applied"
    );

    // Corrupt, truncated and foreign plan files are refused.
    let bytes = std::fs::read(e.dir.path().join("approved.plan")).unwrap();
    std::fs::write(e.dir.path().join("cut.plan"), &bytes[..bytes.len() / 2]).unwrap();
    let cut = e.engine(&["apply", "cut.plan"]);
    assert_eq!(cut.status.code(), Some(1));
    assert!(
        text(&cut).contains("corrupt or truncated"),
        "{}",
        text(&cut)
    );
    let foreign = String::from_utf8(bytes)
        .unwrap()
        .replace(ESTATE, "someone-else");
    std::fs::write(e.dir.path().join("foreign.plan"), foreign).unwrap();
    let refused = e.engine(&["apply", "-var", "shards=1", "foreign.plan"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused).contains("was made for estate \"someone-else\""),
        "{}",
        text(&refused)
    );

    // A plan of the world as it is applies.
    assert!(e
        .engine(&["plan", "-var", "shards=1", "-out", "fresh.plan"])
        .status
        .success());
    let applied = e.engine(&["apply", "-var", "shards=1", "fresh.plan"]);
    assert!(applied.status.success(), "{}", text(&applied));
    assert!(
        text(&applied).contains("0 added, 1 changed, 1 destroyed"),
        "{}",
        text(&applied)
    );
    assert!(parameter_tags(&moto, "/it/shard/1").is_none());
}

#[test]
fn a_second_interrupt_stops_the_apply_at_once_and_the_next_plan_finds_what_was_in_flight() {
    use nix::sys::signal::{kill, Signal};
    use std::time::{Duration, Instant};
    let moto = Moto::start();
    let e = Workdir::new();
    // An SQS queue keeps its create in flight for about 25 seconds.
    root(
        e.dir.path(),
        &moto,
        "resource \"aws_sqs_queue\" \"slow\" {\n  name = \"it-interrupted\"\n}\n",
    );
    e.init();
    let (out, err) = (e.home.path().join("out"), e.home.path().join("err"));
    let mut apply = e
        .command(Path::new(env!("CARGO_BIN_EXE_choudoufu")))
        .args(["apply", "-auto-approve", "-no-color"])
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let said = || {
        let [o, e] = [&out, &err].map(|p| std::fs::read_to_string(p).unwrap());
        format!("{o}{e}")
    };
    // Interrupted once every other object's create has completed (two
    // shards, the bucket and its policy), with the queue's in flight: on a
    // busy machine the queue may start before the bucket is done, and an
    // exit at once loses whatever is in flight.
    let started = Instant::now();
    while !said().contains("aws_sqs_queue.slow: Creating...")
        || said().matches(": Creation complete after").count() < 4
    {
        assert!(apply.try_wait().unwrap().is_none(), "{}", said());
        assert!(started.elapsed() < Duration::from_secs(120), "{}", said());
        std::thread::sleep(Duration::from_millis(100));
    }
    // The create request reaches moto; the first interrupt waits for it,
    // the second does not.
    std::thread::sleep(Duration::from_secs(2));
    let providers = crate::support::children(apply.id());
    let pid = nix::unistd::Pid::from_raw(apply.id() as i32);
    kill(pid, Signal::SIGINT).unwrap();
    std::thread::sleep(Duration::from_secs(1));
    assert!(apply.try_wait().unwrap().is_none(), "{}", said());
    kill(pid, Signal::SIGINT).unwrap();
    let second = Instant::now();
    let status = loop {
        if let Some(status) = apply.try_wait().unwrap() {
            break status;
        }
        assert!(
            second.elapsed() < Duration::from_secs(15),
            "still running 15 s after the second interrupt, the create's own time: {}",
            said()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let said = flat(&said());
    assert_eq!(status.code(), Some(1), "{said}");
    for line in [
        "Interrupt received.",
        "Two interrupts received. Exiting immediately. Note that data loss may have occurred.",
        "Error: Apply cancelled",
    ] {
        assert!(said.contains(line), "no {line:?} in {said}");
    }
    crate::support::wait_gone(&providers, Duration::from_secs(10));
    let lock = format!("/choudoufu/lock/{ESTATE}");
    assert!(parameter_tags(&moto, &lock).is_none(), "the lock is held");
    // The queue was created with its markers: the next plan binds it.
    let plan = e.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(0), "{}", text(&plan));
}

#[test]
fn an_apply_killed_at_a_commit_loses_nothing() {
    let moto = Moto::start();
    let e = Workdir::new();
    root(e.dir.path(), &moto, "");
    e.init();
    let killed = e.apply_killed_after("aws_s3_bucket.data");
    assert_eq!(killed.status.code(), Some(1), "{}", text(&killed));
    assert!(
        text(&killed).contains("Operation interrupted"),
        "{}",
        text(&killed)
    );
    let bucket = moto.aws(&["s3api", "get-bucket-tagging", "--bucket", "it-data"]);
    assert_eq!(
        tag(&bucket["TagSet"], "tofu-estate"),
        Some(ESTATE),
        "the committed create carries its marker"
    );
    // The next plan is exactly the remainder: the policy that needs the
    // bucket was never started, and the bucket is not proposed again.
    let next = e.engine(&["plan"]);
    let out = text(&next);
    assert!(
        out.contains("# aws_s3_bucket_policy.data will be created"),
        "{out}"
    );
    assert!(
        !out.contains("# aws_s3_bucket.data will be created"),
        "{out}"
    );
    let added: usize = out
        .lines()
        .filter(|l| l.trim_start().starts_with("# ") && l.ends_with("will be created"))
        .count();
    let remaining = ["/it/shard/0", "/it/shard/1"]
        .iter()
        .filter(|p| parameter_tags(&moto, p).is_none())
        .count();
    assert_eq!(added, 1 + remaining, "{out}");
    let applied = e.engine(&["apply", "-auto-approve"]);
    assert!(applied.status.success(), "{}", text(&applied));
    let replan = e.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(replan.status.code(), Some(0), "{}", text(&replan));
}

#[test]
fn two_applies_of_one_estate_take_turns() {
    let moto = Moto::start();
    let e = Workdir::new();
    // Two SQS queues, one after the other, keep the first apply holding
    // the lock for about 50 seconds: longer than a busy machine takes to
    // start the runs that meet it.
    root(
        e.dir.path(),
        &moto,
        "resource \"aws_sqs_queue\" \"slow\" {\n  name = \"it-slow\"\n}\n\nresource \"aws_sqs_queue\" \"slower\" {\n  name       = \"it-slower\"\n  depends_on = [aws_sqs_queue.slow]\n}\n",
    );
    e.init();
    let first = e
        .command(Path::new(env!("CARGO_BIN_EXE_choudoufu")))
        .args(["apply", "-auto-approve", "-no-color"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let lock = format!("/choudoufu/lock/{ESTATE}");
    let started = std::time::Instant::now();
    while parameter_tags(&moto, &lock).is_none() {
        assert!(
            started.elapsed().as_secs() < 60,
            "the first apply never took the lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let holder = moto.aws(&["ssm", "get-parameter", "--name", &lock]);
    let holder: serde_json::Value =
        serde_json::from_str(holder["Parameter"]["Value"].as_str().unwrap()).unwrap();

    // A run given a timeout starts now, while the first holds the lock.
    let waited = e
        .command(Path::new(env!("CARGO_BIN_EXE_choudoufu")))
        .args(["apply", "-auto-approve", "-no-color", "-lock-timeout=120s"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();

    // A run without one is refused at once, naming the holder.
    let refused = e.engine(&["apply", "-auto-approve"]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    let out = text(&refused);
    assert!(out.contains("is locked by another run"), "{out}");
    assert!(out.contains(holder["ID"].as_str().unwrap()), "{out}");

    // The one with a timeout waits its turn, and finds nothing left to do.
    let waited = waited.wait_with_output().unwrap();
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success(), "{}", text(&first));
    assert!(text(&first).contains("6 added"), "{}", text(&first));
    assert!(waited.status.success(), "{}", text(&waited));
    let said = text(&waited);
    assert!(
        said.contains("is locked by another run: lock ID ")
            && said.contains(holder["ID"].as_str().unwrap())
            && said.contains("Waiting up to 120s"),
        "{said}"
    );
    assert!(
        text(&waited).contains("0 added, 0 changed, 0 destroyed"),
        "{}",
        text(&waited)
    );
    assert!(
        parameter_tags(&moto, &lock).is_none(),
        "the lock was not released"
    );
    let queues = moto.aws(&["sqs", "list-queues"]);
    let urls: std::collections::BTreeSet<&str> = queues["QueueUrls"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|u| u.as_str())
        .collect();
    assert_eq!(urls.len(), 2, "{queues}");

    // A lock left by a killed run is broken by its ID only.
    moto.aws(&[
        "ssm",
        "put-parameter",
        "--name",
        &lock,
        "--type",
        "String",
        "--value",
        r#"{"ID":"dead-run","Operation":"OperationTypeApply","Who":"ci@gone","Created":"0"}"#,
    ]);
    let stuck = text(&e.engine(&["apply", "-auto-approve"]));
    assert!(stuck.contains("force-unlock dead-run"), "{stuck}");
    assert_eq!(
        e.engine(&["force-unlock", "-force", "someone-else"])
            .status
            .code(),
        Some(1)
    );
    let unlocked = e.engine(&["force-unlock", "-force", "dead-run"]);
    assert!(
        text(&unlocked).contains("has been successfully unlocked: it was held by ci@gone"),
        "{}",
        text(&unlocked)
    );
    assert!(e.engine(&["apply", "-auto-approve"]).status.success());
}

#[test]
fn the_strict_profile_refuses_to_repair_markers() {
    let moto = Moto::start();
    let e = Workdir::new();
    root(e.dir.path(), &moto, "");
    e.init();
    assert!(e.engine(&["apply", "-auto-approve"]).status.success());
    moto.aws(&[
        "ssm",
        "add-tags-to-resource",
        "--resource-type",
        "Parameter",
        "--resource-id",
        "/it/shard/0",
        "--tags",
        "Key=tofu-address,Value=aws_ssm_parameter.elsewhere",
    ]);

    // By default the plan repairs the marker in place.
    let repair = text(&e.engine(&["plan"]));
    assert!(
        repair.contains("# aws_ssm_parameter.shard[0] will be updated in-place"),
        "{repair}"
    );
    assert!(
        repair.contains("\"aws_ssm_parameter.elsewhere\" -> \"aws_ssm_parameter.shard[0]\""),
        "{repair}"
    );

    // Under the strict profile it refuses, by address, and changes nothing.
    std::fs::write(
        e.dir.path().join("live.hcl"),
        format!("live {{\n  estate = \"{ESTATE}\"\n  strict {{\n    marker_repair = \"never\"\n  }}\n}}\n"),
    )
    .unwrap();
    let refused = e.engine(&["apply", "-auto-approve"]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    let out = flat(&text(&refused));
    assert!(
        out.contains("Strict profile: marker repair refused"),
        "{out}"
    );
    assert!(
        out.contains("aws_ssm_parameter.shard[0] binds the live object /it/shard/0"),
        "{out}"
    );
    let tags = parameter_tags(&moto, "/it/shard/0").unwrap();
    assert_eq!(
        tag(&tags, "tofu-address"),
        Some("aws_ssm_parameter.elsewhere")
    );
}

/// Every type of the reference estates that settles at once (their SQS
/// queues take 25 s each and add nothing to the question): ten instances
/// with references across seven types.
fn commit_points_root(dir: &Path, moto: &Moto) {
    root(
        dir,
        moto,
        r#"
resource "aws_s3_bucket_versioning" "data" {
  bucket = aws_s3_bucket.data.id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_iam_role" "worker" {
  name = "it-worker"
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Principal = { Service = "lambda.amazonaws.com" }, Action = "sts:AssumeRole" }]
  })
}

resource "aws_iam_policy" "worker" {
  name = "it-worker"
  policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Action = "s3:GetObject", Resource = "${aws_s3_bucket.data.arn}/*" }]
  })
}

resource "aws_iam_role_policy_attachment" "worker" {
  role       = aws_iam_role.worker.name
  policy_arn = aws_iam_policy.worker.arn
}

resource "aws_iam_role_policy" "worker" {
  name = "it-worker-own"
  role = aws_iam_role.worker.name
  policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Action = "dynamodb:GetItem", Resource = aws_dynamodb_table.state.arn }]
  })
}

resource "aws_dynamodb_table" "state" {
  name         = "it-state"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "pk"
  attribute {
    name = "pk"
    type = "S"
  }
}
"#,
    );
}

#[test]
fn killed_at_every_commit_point_the_next_plan_is_the_remainder() {
    let moto = Moto::start();
    let e = Workdir::new();
    commit_points_root(e.dir.path(), &moto);
    e.init();
    // In the order an apply with `-parallelism=1` makes them.
    let addresses = [
        "aws_dynamodb_table.state",
        "aws_s3_bucket.data",
        "aws_iam_role.worker",
        "aws_ssm_parameter.shard[0]",
        "aws_ssm_parameter.shard[1]",
        "aws_iam_policy.worker",
        "aws_s3_bucket_policy.data",
        "aws_s3_bucket_versioning.data",
        "aws_iam_role_policy.worker",
        "aws_iam_role_policy_attachment.worker",
    ];
    // One deploy, walked forward: each apply is killed at the next commit
    // point, so every commit point is struck once (each with the earlier
    // ones' objects in place, after as many kills), every killed apply
    // commits exactly one object, and every next plan must be exactly the
    // remainder.
    let total = addresses.len();
    let mut table = vec![format!(
        "{:<40} {:>9} {:>14} {:>9}",
        "killed after", "committed", "next plan adds", "remainder"
    )];
    let mut wrong = Vec::new();
    let mut committed = 0;
    for kill_at in addresses {
        let killed = e.apply_killed_after(kill_at);
        let out = text(&killed);
        assert_eq!(killed.status.code(), Some(1), "{kill_at}: {out}");
        let made: Vec<&str> = out
            .lines()
            .filter(|l| l.contains("Creation complete"))
            .collect();
        assert_eq!(made.len(), 1, "killed after {kill_at}: {made:#?}");
        committed += made.len();
        let next = text(&e.engine(&["plan"]));
        let adds: Vec<&str> = next
            .lines()
            .filter_map(|l| l.trim().strip_prefix("# "))
            .filter_map(|l| l.strip_suffix(" will be created"))
            .collect();
        let others = next.contains("will be destroyed")
            || next.contains("updated in-place")
            || next.contains("must be replaced");
        table.push(format!(
            "{kill_at:<40} {committed:>9} {:>14} {:>9}",
            adds.len(),
            total - committed
        ));
        if adds.len() != total - committed || others || adds.contains(&kill_at) {
            wrong.push(format!(
                "killed after {kill_at}: {committed} committed; the killed apply said:\n{out}\nthe next plan:\n{next}"
            ));
        }
    }
    assert_eq!(committed, total, "{}", table.join("\n"));
    let converged = e.engine(&["apply", "-auto-approve"]);
    assert!(converged.status.success(), "{}", text(&converged));
    assert_eq!(
        e.engine(&["plan", "-detailed-exitcode"]).status.code(),
        Some(0)
    );
    println!("{}", table.join("\n"));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A create_before_destroy parameter whose name is `name`.
const HASHED: &str = r#"
resource "aws_ssm_parameter" "hashed" {
  name  = "/it/cbd/NAME"
  type  = "String"
  value = "NAME"
  lifecycle {
    create_before_destroy = true
  }
}
"#;

/// Each line of `out` that contains `what`, by position.
fn line_of(out: &str, what: &str) -> Option<usize> {
    out.lines().position(|l| l.contains(what))
}

#[test]
fn create_before_destroy_replaces_in_order_and_a_stop_between_loses_nothing() {
    let moto = Moto::start();
    let e = Workdir::new();
    let hashed = |name: &str| HASHED.replace("NAME", name);
    root(e.dir.path(), &moto, &hashed("a"));
    e.init();
    let first = e.engine(&["apply", "-auto-approve"]);
    assert!(first.status.success(), "{}", text(&first));

    // A new name: the old object is this address's (its record, its
    // address marker), so the plan is stock's replacement, not a create
    // beside an orphan destroy.
    root(e.dir.path(), &moto, &hashed("b"));
    let plan = text(&e.engine(&["plan"]));
    assert!(
        plan.contains("# aws_ssm_parameter.hashed must be replaced"),
        "{plan}"
    );
    assert!(
        plan.contains("+/- resource \"aws_ssm_parameter\" \"hashed\""),
        "{plan}"
    );
    assert!(plan.contains("# forces replacement"), "{plan}");
    // As stock: the SDK lists `id` among the paths forcing the replacement,
    // but `id` itself does not change in the update plan, so it is not
    // blamed.
    assert!(
        plan.lines()
            .any(|l| l.trim_start().starts_with("~ id ") && !l.contains("# forces")),
        "{plan}"
    );
    assert!(
        plan.contains("Plan: 1 to add, 0 to change, 1 to destroy."),
        "{plan}"
    );
    assert!(!plan.contains("orphan"), "{plan}");

    // The order at -parallelism=1: the new object's create completes
    // before the deposed object's destroy starts.
    let applied = e.engine(&["apply", "-auto-approve", "-parallelism=1"]);
    let out = text(&applied);
    assert!(applied.status.success(), "{out}");
    let created = line_of(&out, "aws_ssm_parameter.hashed: Creation complete").expect(&out);
    let destroying = line_of(&out, "(deposed object ").expect(&out);
    assert!(created < destroying, "{out}");
    // As stock prints it: the key on the start line, not on completion.
    assert!(
        out.lines()
            .nth(destroying)
            .unwrap()
            .contains("Destroying... [id=/it/cbd/a]"),
        "{out}"
    );
    assert!(
        out.contains("aws_ssm_parameter.hashed: Destruction complete"),
        "{out}"
    );
    assert!(
        out.contains("Resources: 1 added, 0 changed, 1 destroyed."),
        "{out}"
    );
    assert!(parameter_tags(&moto, "/it/cbd/a").is_none(), "{out}");
    let b = parameter_tags(&moto, "/it/cbd/b").expect("the replacement exists");
    assert_eq!(tag(&b, "tofu-address"), Some("aws_ssm_parameter.hashed"));
    let replan = e.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(replan.status.code(), Some(0), "{}", text(&replan));

    // Stopped the instant the new object commits: both exist, the record
    // holds the old one as deposed, and the next plan destroys exactly it.
    root(e.dir.path(), &moto, &hashed("c"));
    let killed = e.apply_killed_after("aws_ssm_parameter.hashed");
    assert_eq!(killed.status.code(), Some(1), "{}", text(&killed));
    assert!(parameter_tags(&moto, "/it/cbd/b").is_some());
    assert!(parameter_tags(&moto, "/it/cbd/c").is_some());
    let record = record_parameter(ESTATE, "aws_ssm_parameter.hashed");
    let held = moto.record(ESTATE, "aws_ssm_parameter.hashed").unwrap();
    assert_eq!(held["id"], "/it/cbd/c");
    assert_eq!(held["deposed"][0]["id"], "/it/cbd/b", "{held}");
    let key = held["deposed"][0]["key"].as_str().unwrap().to_string();
    let next = text(&e.engine(&["plan"]));
    assert!(
        next.contains(&format!(
            "# aws_ssm_parameter.hashed (deposed object {key}) will be destroyed"
        )),
        "{next}"
    );
    assert!(
        next.contains("# (left over from a partially-failed replacement of this instance)"),
        "{next}"
    );
    assert!(
        next.contains("Plan: 0 to add, 0 to change, 1 to destroy."),
        "{next}"
    );
    let json = e.engine(&["plan", "-out", "deposed.plan"]);
    assert!(json.status.success(), "{}", text(&json));
    let shown: serde_json::Value =
        serde_json::from_slice(&e.engine(&["show", "-json", "deposed.plan"]).stdout).unwrap();
    let deposed: Vec<_> = shown["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|rc| rc["deposed"] == key.as_str())
        .collect();
    assert_eq!(deposed.len(), 1, "{shown}");
    assert_eq!(deposed[0]["change"]["actions"][0], "delete");

    // Without the record, the old object is still found: by its address
    // marker, as an orphan of the estate.
    let aside = moto.parameter(&record).unwrap();
    moto.delete_parameter(&record);
    let orphan = text(&e.engine(&["plan"]));
    assert!(
        orphan.contains("Plan: 0 to add, 0 to change, 1 to destroy."),
        "{orphan}"
    );
    assert!(orphan.contains("orphan"), "{orphan}");
    moto.put_parameter(&record, &aside);

    let recovered = e.engine(&["apply", "-auto-approve"]);
    assert!(recovered.status.success(), "{}", text(&recovered));
    assert!(parameter_tags(&moto, "/it/cbd/b").is_none());
    assert!(parameter_tags(&moto, "/it/cbd/c").is_some());
    let held = moto.record(ESTATE, "aws_ssm_parameter.hashed").unwrap();
    assert!(held.get("deposed").is_none(), "{held}");
    let replan = e.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(replan.status.code(), Some(0), "{}", text(&replan));

    // With no record store at all, a rename still plans as a replacement:
    // the address marker names the old object.
    moto.lose_records(ESTATE);
    root(e.dir.path(), &moto, &hashed("d"));
    let unrecorded = text(&e.engine(&["plan"]));
    assert!(
        unrecorded.contains("# aws_ssm_parameter.hashed must be replaced"),
        "{unrecorded}"
    );
    assert!(!unrecorded.contains("orphan"), "{unrecorded}");
    let destroyed = e.engine(&["destroy", "-auto-approve"]);
    assert!(destroyed.status.success(), "{}", text(&destroyed));
}

/// A root declaring one SSM parameter, with `extra` beside it.
fn adopt_root(dir: &Path, moto: &Moto, extra: &str) {
    std::fs::write(
        dir.join("main.tf"),
        format!(
            "{}\nresource \"aws_ssm_parameter\" \"adopted\" {{\n  name  = \"/it/adopt\"\n  type  = \"String\"\n  value = \"theirs\"\n}}\n{extra}",
            aws_provider(&moto.endpoint)
        ),
    )
    .unwrap();
    write_live(dir, ESTATE);
}

#[test]
fn an_import_block_adopts_an_unmarked_object_as_stock_imports_it() {
    let moto = Moto::start();
    let e = Workdir::new();
    let put = |name: &str, tags: Option<&str>| {
        let mut args = vec![
            "ssm",
            "put-parameter",
            "--name",
            name,
            "--type",
            "String",
            "--value",
            "theirs",
        ];
        if let Some(t) = tags {
            args.extend(["--tags", t]);
        }
        moto.aws(&args);
    };
    put("/it/adopt", None);
    let import = "import {\n  to = aws_ssm_parameter.adopted\n  id = \"/it/adopt\"\n}\n";

    // Without an import block the object is never adopted.
    adopt_root(e.dir.path(), &moto, "");
    e.init();
    let refused = e.engine(&["plan"]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(
        flat(&text(&refused)).contains("add an import block"),
        "{}",
        text(&refused)
    );

    // With one, it is imported, as stock imports it, and its markers are
    // the one change.
    adopt_root(e.dir.path(), &moto, import);
    let terraform = crate::support::terraform();
    let init = e.run(&terraform, &["init", "-no-color"]);
    assert!(init.status.success(), "{}", text(&init));
    let stock = text(&e.run(&terraform, &["plan", "-no-color"]));
    // Stock writes no marker, so its import changes nothing.
    assert!(
        stock.contains("# aws_ssm_parameter.adopted will be imported"),
        "{stock}"
    );
    assert!(
        stock.contains("Plan: 1 to import, 0 to add, 0 to change, 0 to destroy."),
        "{stock}"
    );
    let planned = e.engine(&["plan", "-detailed-exitcode", "-out", "adopt.plan"]);
    assert_eq!(planned.status.code(), Some(2), "{}", text(&planned));
    let plan = text(&planned);
    assert!(
        plan.contains("# aws_ssm_parameter.adopted will be updated in-place\n  # (imported from \"/it/adopt\")"),
        "{plan}"
    );
    assert!(
        plan.contains("+ \"tofu-estate\"  = \"it-stateless\""),
        "{plan}"
    );
    assert!(
        plan.contains("Plan: 1 to import, 0 to add, 1 to change, 0 to destroy."),
        "{plan}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&e.engine(&["show", "-json", "adopt.plan"]).stdout).unwrap();
    assert_eq!(
        json["resource_changes"][0]["change"]["importing"]["id"],
        "/it/adopt"
    );

    let applied = e.engine(&["apply", "-auto-approve"]);
    let out = text(&applied);
    assert!(applied.status.success(), "{out}");
    assert!(
        out.contains("aws_ssm_parameter.adopted: Importing... [id=/it/adopt]")
            && out.contains("aws_ssm_parameter.adopted: Import complete [id=/it/adopt]"),
        "{out}"
    );
    assert!(
        out.contains("Apply complete! Resources: 1 imported, 0 added, 1 changed, 0 destroyed."),
        "{out}"
    );
    let tags = parameter_tags(&moto, "/it/adopt").unwrap();
    assert_eq!(tag(&tags, "tofu-estate"), Some(ESTATE), "{tags}");
    assert_eq!(
        tag(&tags, "tofu-address"),
        Some("aws_ssm_parameter.adopted"),
        "{tags}"
    );
    // Owned now: the import block left in place imports nothing again.
    let replan = e.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(replan.status.code(), Some(0), "{}", text(&replan));

    // An import of nothing is stock's error; another estate's object is
    // refused even with an import block.
    let missing = import.replace("/it/adopt", "/it/nothing");
    adopt_root(e.dir.path(), &moto, &missing);
    let out = text(&e.engine(&["plan"]));
    assert!(
        out.contains("Cannot import non-existent remote object"),
        "{out}"
    );
    put("/it/theirs", Some("Key=tofu-estate,Value=payments"));
    let theirs = import.replace("/it/adopt", "/it/theirs");
    std::fs::write(
        e.dir.path().join("main.tf"),
        format!(
            "{}\nresource \"aws_ssm_parameter\" \"adopted\" {{\n  name  = \"/it/theirs\"\n  type  = \"String\"\n  value = \"theirs\"\n}}\n{theirs}",
            aws_provider(&moto.endpoint)
        ),
    )
    .unwrap();
    let refused = e.engine(&["plan"]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(
        flat(&text(&refused)).contains("carries the marker of estate \"payments\""),
        "{}",
        text(&refused)
    );
    let tags = parameter_tags(&moto, "/it/theirs").unwrap();
    assert_eq!(tag(&tags, "tofu-estate"), Some("payments"), "{tags}");
}

#[test]
fn an_import_block_with_for_each_adopts_each_instance() {
    let moto = Moto::start();
    let e = Workdir::new();
    for n in ["a", "b"] {
        moto.aws(&[
            "ssm",
            "put-parameter",
            "--name",
            &format!("/it/each/{n}"),
            "--type",
            "String",
            "--value",
            "theirs",
        ]);
    }
    std::fs::write(
        e.dir.path().join("main.tf"),
        format!(
            r#"{}
locals {{
  names = {{ a = "/it/each/a", b = "/it/each/b" }}
}}

resource "aws_ssm_parameter" "p" {{
  for_each = local.names
  name     = each.value
  type     = "String"
  value    = "theirs"
}}

import {{
  for_each = local.names
  to       = aws_ssm_parameter.p[each.key]
  id       = each.value
}}
"#,
            aws_provider(&moto.endpoint)
        ),
    )
    .unwrap();
    write_live(e.dir.path(), ESTATE);
    let terraform = crate::support::terraform();
    let init = e.run(&terraform, &["init", "-no-color"]);
    assert!(init.status.success(), "{}", text(&init));
    let stock = text(&e.run(&terraform, &["plan", "-no-color"]));
    let planned = text(&e.engine(&["plan"]));
    for key in ["a", "b"] {
        let addr = format!("aws_ssm_parameter.p[\"{key}\"]");
        assert!(
            stock.contains(&format!("# {addr} will be imported")),
            "{stock}"
        );
        assert!(
            planned.contains(&format!(
                "# {addr} will be updated in-place\n  # (imported from \"/it/each/{key}\")"
            )),
            "{planned}"
        );
    }
    assert!(
        stock.contains("Plan: 2 to import, 0 to add, 0 to change, 0 to destroy."),
        "{stock}"
    );
    assert!(
        planned.contains("Plan: 2 to import, 0 to add, 2 to change, 0 to destroy."),
        "{planned}"
    );
    let applied = e.engine(&["apply", "-auto-approve"]);
    assert!(
        text(&applied)
            .contains("Apply complete! Resources: 2 imported, 0 added, 2 changed, 0 destroyed."),
        "{}",
        text(&applied)
    );
    for key in ["a", "b"] {
        let tags = parameter_tags(&moto, &format!("/it/each/{key}")).unwrap();
        assert_eq!(
            tag(&tags, "tofu-address"),
            Some(format!("aws_ssm_parameter.p[\"{key}\"]").as_str()),
            "{tags}"
        );
    }
    let replan = e.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(replan.status.code(), Some(0), "{}", text(&replan));
}

/// A Lambda function's package as a zip holding `index.py` returning `n`.
fn lambda_package(path: &Path, n: u32) {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    zip.start_file("index.py", zip::write::SimpleFileOptions::default())
        .unwrap();
    write!(zip, "def handler(event, context):\n    return {n}\n").unwrap();
    zip.finish().unwrap();
}

/// A self-signed certificate and its private key, PEM, for an imported
/// ACM certificate.
fn certificate(dir: &Path) {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["learned.example.com".to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    std::fs::write(dir.join("cert.pem"), cert.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), key.serialize_pem()).unwrap();
}

/// A root of one object of each class of argument the API never returns:
/// a Lambda function whose configuration sets `source_code_hash` (its
/// package `n`), an imported certificate's private key (sensitive), and a
/// parameter's write-only value with its version.
fn learned_root(dir: &Path, moto: &Moto, n: u32) {
    lambda_package(&dir.join("fn.zip"), n);
    if !dir.join("key.pem").exists() {
        certificate(dir);
    }
    std::fs::write(
        dir.join("main.tf"),
        format!(
            r#"{provider}
resource "aws_iam_role" "fn" {{
  name = "it-learned"
  assume_role_policy = jsonencode({{
    Version   = "2012-10-17"
    Statement = [{{ Effect = "Allow", Action = "sts:AssumeRole", Principal = {{ Service = "lambda.amazonaws.com" }} }}]
  }})
}}

resource "aws_lambda_function" "fn" {{
  function_name    = "it-learned"
  role             = aws_iam_role.fn.arn
  handler          = "index.handler"
  runtime          = "python3.12"
  filename         = "${{path.module}}/fn.zip"
  source_code_hash = filebase64sha256("${{path.module}}/fn.zip")
}}

resource "aws_acm_certificate" "imported" {{
  certificate_body = file("${{path.module}}/cert.pem")
  private_key      = file("${{path.module}}/key.pem")
}}

resource "aws_ssm_parameter" "write_only" {{
  name             = "/learned/write-only"
  type             = "SecureString"
  value_wo         = "never-stored"
  value_wo_version = 1
}}
"#,
            provider = aws_provider(&moto.endpoint)
        ),
    )
    .unwrap();
}

/// No catalogue entry names what the read of these objects loses: what
/// keeps it is learned.
fn not_listed() {
    for (type_name, name) in [
        ("aws_lambda_function", "source_code_hash"),
        ("aws_acm_certificate", "private_key"),
        ("aws_ssm_parameter", "value_wo_version"),
    ] {
        let listed = engine::bind::aws::identity(true, type_name, None).config_only();
        assert!(!listed.contains(&name), "{type_name}: {listed:?}");
    }
}

/// The private key is kept as terraform's state keeps it, and only
/// encrypted: every record parameter holding it is a SecureString (moto
/// stores such a value unencrypted, so its type is what can be checked).
/// The write-only value is kept nowhere.
fn secrets_kept_encrypted(moto: &Moto, dir: &Path) {
    let key = std::fs::read_to_string(dir.join("key.pem")).unwrap();
    let line = key.lines().nth(1).unwrap();
    let read = moto.aws(&[
        "ssm",
        "get-parameters-by-path",
        "--path",
        &format!("/choudoufu/records/{ESTATE}"),
        "--recursive",
        "--with-decryption",
    ]);
    let params = read["Parameters"].as_array().unwrap();
    let holding: Vec<&serde_json::Value> = params
        .iter()
        .filter(|p| p["Value"].as_str().unwrap().contains(line))
        .collect();
    assert!(!holding.is_empty(), "no record keeps the key: {read}");
    for p in holding {
        assert_eq!(p["Type"], "SecureString", "{}", p["Name"]);
    }
    let plain: Vec<&serde_json::Value> = params.iter().filter(|p| p["Type"] == "String").collect();
    assert!(!plain.is_empty(), "every record encrypted: {read}");
    assert!(!read.to_string().contains("never-stored"), "{read}");
}

/// A new package in `e`'s root plans exactly one update; the plan's text.
fn a_new_package_plans_an_update(e: &Workdir) -> String {
    lambda_package(&e.dir.path().join("fn.zip"), 2);
    let plan = e.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(2), "{}", text(&plan));
    let shown = flat(&text(&plan));
    assert!(
        shown.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{shown}"
    );
    shown
}

/// `source_code_hash`, a private key and a write-only value's version are
/// never read back from the API, and no catalogue entry names them: what
/// the engine keeps of them, it learns by reading each object back after
/// its apply. The next plan is empty, the key is kept only encrypted, a new
/// package plans its update as stock plans it, and that apply's plan is
/// empty too.
#[test]
fn what_a_read_cannot_return_is_learned_at_apply_and_kept_in_the_record() {
    let moto = Moto::start();
    let e = Workdir::new();
    let dir = e.dir.path();
    learned_root(dir, &moto, 1);
    write_live(dir, ESTATE);
    not_listed();
    e.init();

    let applied = e.engine(&["apply", "-auto-approve"]);
    assert!(applied.status.success(), "{}", text(&applied));
    let plan = e.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(0), "{}", text(&plan));
    secrets_kept_encrypted(&moto, dir);

    let shown = a_new_package_plans_an_update(&e);
    assert!(shown.contains("~ source_code_hash = \""), "{shown}");
    let applied = e.engine(&["apply", "-auto-approve"]);
    assert!(applied.status.success(), "{}", text(&applied));
    let plan = e.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(0), "{}", text(&plan));
}

/// The same, learned at `migrate` from stock's state: the migrated
/// objects' next plan is empty, with no catalogue entry naming what the
/// reads lose, the key is kept only encrypted, and a new package still
/// plans its update.
#[test]
fn what_a_read_cannot_return_is_learned_at_migrate_from_the_stock_state() {
    let moto = Moto::start();
    let (stock, e) = (Workdir::new(), Workdir::new());
    learned_root(stock.dir.path(), &moto, 1);
    let tf = crate::support::terraform();
    for args in [
        &["init", "-input=false", "-no-color"][..],
        &["apply", "-auto-approve", "-no-color"],
    ] {
        let out = stock.run(&tf, args);
        assert!(out.status.success(), "terraform {args:?}: {}", text(&out));
    }
    let dir = e.dir.path();
    for pem in ["cert.pem", "key.pem"] {
        std::fs::copy(stock.dir.path().join(pem), dir.join(pem)).unwrap();
    }
    learned_root(dir, &moto, 1);
    write_live(dir, ESTATE);
    not_listed();
    e.init();
    let state = stock.dir.path().join("terraform.tfstate");
    let migrated = e.engine(&["migrate", "-state", &state.display().to_string()]);
    assert!(migrated.status.success(), "{}", text(&migrated));
    let plan = e.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(0), "{}", text(&plan));
    secrets_kept_encrypted(&moto, dir);

    a_new_package_plans_an_update(&e);
}

/// The names of the SSM parameters moto holds under `/dep/`.
fn dep_parameters(moto: &Moto) -> Vec<String> {
    let listed = moto.aws(&["ssm", "get-parameters-by-path", "--path", "/dep"]);
    let mut names: Vec<String> = listed["Parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["Name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn a_deposed_object_of_a_stock_state_is_migrated_and_destroyed_as_terraform_would() {
    // A stock state holding a deposed object, as an apply interrupted
    // between a create_before_destroy replacement's create and its destroy
    // leaves one: made here by moving one object into the other's instance
    // as its deposed object. Both tools then plan its destroy alone.
    let moto = Moto::start();
    let w = Workdir::new();
    let main = |with_old: bool| {
        let old = "resource \"aws_ssm_parameter\" \"old\" {\n  name  = \"/dep/old\"\n  type  = \"String\"\n  value = \"old\"\n}\n";
        format!(
            "{}\nresource \"aws_ssm_parameter\" \"p\" {{\n  name  = \"/dep/new\"\n  type  = \"String\"\n  value = \"new\"\n  lifecycle {{\n    create_before_destroy = true\n  }}\n}}\n{}",
            aws_provider(&moto.endpoint),
            if with_old { old } else { "" }
        )
    };
    let dir = w.dir.path();
    std::fs::write(dir.join("main.tf"), main(true)).unwrap();
    let tf = crate::support::terraform();
    let init = w.run(&tf, &["init", "-input=false", "-no-color"]);
    assert!(init.status.success(), "{}", text(&init));
    let applied = w.run(
        &tf,
        &["apply", "-auto-approve", "-input=false", "-no-color"],
    );
    assert!(applied.status.success(), "{}", text(&applied));

    let path = dir.join("terraform.tfstate");
    let mut state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let resources = state["resources"].as_array_mut().unwrap();
    let at =
        |rs: &[serde_json::Value], name: &str| rs.iter().position(|r| r["name"] == name).unwrap();
    let old = resources.remove(at(resources, "old"));
    let mut deposed = old["instances"][0].clone();
    deposed["deposed"] = serde_json::json!("0a1b2c3d");
    let p = at(resources, "p");
    resources[p]["instances"]
        .as_array_mut()
        .unwrap()
        .push(deposed);
    std::fs::write(&path, serde_json::to_vec_pretty(&state).unwrap()).unwrap();
    std::fs::write(dir.join("main.tf"), main(false)).unwrap();

    let line = "# aws_ssm_parameter.p (deposed object 0a1b2c3d) will be destroyed";
    let stock = w.run(&tf, &["plan", "-input=false", "-no-color"]);
    let said = text(&stock);
    assert!(stock.status.success(), "{said}");
    assert!(
        said.contains(line) && said.contains("Plan: 0 to add, 0 to change, 1 to destroy."),
        "{said}"
    );

    write_live(dir, "it-deposed");
    let migrated = w.engine(&["migrate", "-state", "terraform.tfstate"]);
    let said = text(&migrated);
    assert!(migrated.status.success(), "{said}");
    assert!(
        said.contains("aws_ssm_parameter.p (deposed object 0a1b2c3d): stamped")
            && said.contains("Migrate complete! 2 newly stamped, 0 already stamped, 0 recorded, 0 failed, 0 skipped."),
        "{said}"
    );
    std::fs::remove_file(&path).unwrap();
    let plan = w.engine(&["plan"]);
    let said = text(&plan);
    assert!(plan.status.success(), "{said}");
    assert!(
        said.contains(line) && said.contains("Plan: 0 to add, 0 to change, 1 to destroy."),
        "{said}"
    );
    let apply = w.engine(&["apply", "-auto-approve"]);
    assert!(apply.status.success(), "{}", text(&apply));
    assert_eq!(dep_parameters(&moto), ["/dep/new"]);
    let replan = w.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(replan.status.code(), Some(0), "{}", text(&replan));
}
