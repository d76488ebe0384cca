//! The record store in the live system, against the real aws provider and
//! a real moto: what one working copy applies, a fresh copy of the root on
//! "another machine" (another directory, another home, no local files)
//! plans from; a record too large for one parameter is split and joined
//! back; records an earlier version left in the local folder are read by
//! a plan and moved by an apply.

use crate::support::{aws_provider, flat, record_parameter, text, write_live, Moto, Workdir};
use std::path::Path;

const ESTATE: &str = "it-records";
const SUBSCRIPTION: &str = "aws_sns_topic_subscription.audit";

/// A queue subscribed to a topic (a subscription's ARN is generated: its
/// record keeps it, with the arguments it is read by) with a filter policy
/// large enough that its record spans several parameters, and an output.
fn root(dir: &Path, moto: &Moto) {
    let colours: Vec<String> = (0..90)
        .map(|i| format!("\"colour-{i:03}-{}\"", "x".repeat(48)))
        .collect();
    std::fs::write(
        dir.join("main.tf"),
        format!(
            r#"{provider}
resource "aws_sqs_queue" "audit" {{
  name = "it-records-audit"
}}

resource "aws_sns_topic" "events" {{
  name = "it-records-events"
}}

resource "aws_sns_topic_subscription" "audit" {{
  topic_arn     = aws_sns_topic.events.arn
  protocol      = "sqs"
  endpoint      = aws_sqs_queue.audit.arn
  filter_policy = jsonencode({{ colour = [{colours}] }})
}}

output "queue" {{
  value = aws_sqs_queue.audit.url
}}
"#,
            provider = aws_provider(&moto.endpoint),
            colours = colours.join(", "),
        ),
    )
    .unwrap();
    write_live(dir, ESTATE);
}

/// A fresh copy of the root in `w`: only its configuration files.
fn copy_root(from: &Workdir, to: &Workdir) {
    for name in ["main.tf", "live.hcl"] {
        std::fs::copy(from.dir.path().join(name), to.dir.path().join(name)).unwrap();
    }
}

#[test]
fn another_machine_plans_from_what_one_applied() {
    let moto = Moto::start();
    let first = Workdir::new();
    root(first.dir.path(), &moto);
    first.init();
    let init = text(&first.engine(&["init", "-input=false"]));
    assert!(
        flat(&init).contains(&format!(
            "records in the live system: SSM parameters under /choudoufu/records/{ESTATE}"
        )),
        "{init}"
    );
    let applied = first.engine(&["apply", "-auto-approve"]);
    assert!(applied.status.success(), "{}", text(&applied));
    assert!(
        !first.dir.path().join(".choudoufu").exists(),
        "the apply wrote a local record store"
    );

    // The subscription's record is split across parameters, each under
    // SSM's 4 KB, and reads back whole.
    let stored = moto.record_parameters(ESTATE);
    let head = record_parameter(ESTATE, SUBSCRIPTION);
    let parts = stored
        .keys()
        .filter(|n| n.starts_with(&format!("{head}-")))
        .count();
    assert!(parts > 0, "{stored:?}");
    for (n, v) in &stored {
        assert!(v.len() <= 4096, "{n}");
    }
    assert!(stored[&head].starts_with("choudoufu-parts "));
    assert!(stored.contains_key(&record_parameter(ESTATE, "root.outputs")));

    // Another machine: a fresh copy, its own home, no local files.
    let second = Workdir::new();
    copy_root(&first, &second);
    second.init();
    let plan = second.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(0), "{}", text(&plan));
    let listed = text(&second.engine(&["records", "list"]));
    for addr in ["aws_sns_topic.events", SUBSCRIPTION, "aws_sqs_queue.audit"] {
        assert!(listed.lines().any(|l| l == addr), "{addr}: {listed}");
    }
    let json: serde_json::Value =
        serde_json::from_slice(&second.engine(&["records", "list", "-json"]).stdout).unwrap();
    assert_eq!(json["outputs"], serde_json::json!(["queue"]), "{json}");
    let output = second.engine(&["output", "-raw", "queue"]);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("{}/123456789012/it-records-audit", moto.endpoint),
        "{}",
        text(&output)
    );

    // The subscription's record as an earlier version kept it: in the
    // local folder only. A plan reads it there and warns; an apply moves
    // it into the live store.
    let record = moto.record(ESTATE, SUBSCRIPTION).unwrap();
    for n in moto
        .record_parameters(ESTATE)
        .keys()
        .filter(|n| n.starts_with(&head))
    {
        moto.delete_parameter(n);
    }
    let folder = second.dir.path().join(".choudoufu/records").join(ESTATE);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("aws_sns_topic_subscription.audit.json"),
        serde_json::to_vec_pretty(&record).unwrap(),
    )
    .unwrap();
    let plan = second.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(0), "{}", text(&plan));
    assert!(
        flat(&text(&plan)).contains("1 record(s) an earlier version left in .choudoufu/records/it-records are read beside the live system's"),
        "{}",
        text(&plan)
    );
    let moved = second.engine(&["apply", "-auto-approve"]);
    assert!(moved.status.success(), "{}", text(&moved));
    assert!(
        flat(&text(&moved)).contains("Moved 1 record(s) an earlier version left in .choudoufu/records/it-records into the live system"),
        "{}",
        text(&moved)
    );
    assert!(!folder.exists() && folder.with_extension("moved").exists());
    assert_eq!(moto.record(ESTATE, SUBSCRIPTION), Some(record));

    // The first copy plans nothing either, and its destroy leaves no
    // record behind.
    let replan = first.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(replan.status.code(), Some(0), "{}", text(&replan));
    let destroyed = first.engine(&["destroy", "-auto-approve"]);
    assert!(destroyed.status.success(), "{}", text(&destroyed));
    assert_eq!(moto.record_parameters(ESTATE), Default::default());
}
