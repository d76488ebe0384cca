//! Two estates on one live system: `platform` owns whole objects, `app`
//! owns only parts of them (a queue policy, a subscription, a role's
//! policy attachment, one tag of a table through `aws_dynamodb_tag`) and a
//! policy of its own. Neither plan proposes touching the other's things,
//! a write over the other estate's object is refused by name, and each
//! teardown removes exactly its own. Real aws provider, real moto, every
//! outcome read back with the AWS CLI.

use crate::support::{aws_provider, flat, text, write_live, Moto, Workdir};
use std::path::Path;

const PLATFORM: &str = "it-platform";
const APP: &str = "it-app";

/// The platform's root; `boundary` is its `ignore_changes` on the table's
/// tags, which leaves the tag `app` writes alone.
fn platform_root(dir: &Path, moto: &Moto, boundary: bool) {
    let ignore = if boundary { r#"tags["owner"]"# } else { "" };
    std::fs::write(
        dir.join("main.tf"),
        format!(
            r#"{provider}
resource "aws_sns_topic" "events" {{
  name = "shared-events"
}}

resource "aws_sqs_queue" "inbox" {{
  name = "shared-inbox"
}}

resource "aws_iam_role" "worker" {{
  name = "shared-worker"
  assume_role_policy = jsonencode({{
    Version   = "2012-10-17"
    Statement = [{{ Effect = "Allow", Principal = {{ Service = "lambda.amazonaws.com" }}, Action = "sts:AssumeRole" }}]
  }})
}}

resource "aws_dynamodb_table" "sessions" {{
  name         = "shared-sessions"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "id"
  attribute {{
    name = "id"
    type = "S"
  }}
  tags = {{ team = "platform" }}
  lifecycle {{
    ignore_changes = [{ignore}]
  }}
}}
"#,
            provider = aws_provider(&moto.endpoint)
        ),
    )
    .unwrap();
    write_live(dir, PLATFORM);
}

/// The app's root: parts of the platform's objects, found through data
/// sources, and one policy of its own; `owner_tag` keeps the table tag.
fn app_root(dir: &Path, moto: &Moto, owner_tag: bool, extra: &str) {
    let tag = if owner_tag {
        r#"
resource "aws_dynamodb_tag" "owner" {
  resource_arn = data.aws_dynamodb_table.sessions.arn
  key          = "owner"
  value        = "app"
}
"#
    } else {
        ""
    };
    std::fs::write(
        dir.join("main.tf"),
        format!(
            r#"{provider}
data "aws_sns_topic" "events" {{
  name = "shared-events"
}}

data "aws_sqs_queue" "inbox" {{
  name = "shared-inbox"
}}

data "aws_dynamodb_table" "sessions" {{
  name = "shared-sessions"
}}

resource "aws_iam_policy" "logs" {{
  name = "app-logs"
  policy = jsonencode({{
    Version   = "2012-10-17"
    Statement = [{{ Effect = "Allow", Action = "logs:PutLogEvents", Resource = "*" }}]
  }})
}}

resource "aws_iam_role_policy_attachment" "worker_logs" {{
  role       = "shared-worker"
  policy_arn = aws_iam_policy.logs.arn
}}

resource "aws_sqs_queue_policy" "inbox" {{
  queue_url = data.aws_sqs_queue.inbox.url
  policy = jsonencode({{
    Version = "2012-10-17"
    Statement = [{{
      Effect    = "Allow"
      Principal = {{ Service = "sns.amazonaws.com" }}
      Action    = "sqs:SendMessage"
      Resource  = data.aws_sqs_queue.inbox.arn
    }}]
  }})
}}

resource "aws_sns_topic_subscription" "inbox" {{
  topic_arn = data.aws_sns_topic.events.arn
  protocol  = "sqs"
  endpoint  = data.aws_sqs_queue.inbox.arn
}}
{tag}{extra}"#,
            provider = aws_provider(&moto.endpoint)
        ),
    )
    .unwrap();
    write_live(dir, APP);
}

/// The table's tags, key to value.
fn table_tags(moto: &Moto) -> std::collections::BTreeMap<String, String> {
    let table = moto.aws(&[
        "dynamodb",
        "describe-table",
        "--table-name",
        "shared-sessions",
    ]);
    let arn = table["Table"]["TableArn"].as_str().unwrap().to_string();
    let tags = moto.aws(&["dynamodb", "list-tags-of-resource", "--resource-arn", &arn]);
    tags["Tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["Key"].as_str().unwrap().to_string(),
                t["Value"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn queue_url(moto: &Moto) -> String {
    let q = moto.aws(&["sqs", "get-queue-url", "--queue-name", "shared-inbox"]);
    q["QueueUrl"].as_str().unwrap().to_string()
}

/// The queue's attribute `name`, if set.
fn queue_attr(moto: &Moto, name: &str) -> Option<String> {
    let a = moto.aws(&[
        "sqs",
        "get-queue-attributes",
        "--queue-url",
        &queue_url(moto),
        "--attribute-names",
        "All",
    ]);
    a["Attributes"][name].as_str().map(str::to_string)
}

fn queue_tags(moto: &Moto) -> serde_json::Value {
    moto.aws(&["sqs", "list-queue-tags", "--queue-url", &queue_url(moto)])["Tags"].clone()
}

/// How many subscriptions the topic has.
fn subscriptions(moto: &Moto) -> usize {
    let s = moto.aws(&["sns", "list-subscriptions"]);
    s["Subscriptions"].as_array().map_or(0, Vec::len)
}

/// The names of the policies attached to the role.
fn attached(moto: &Moto) -> Vec<String> {
    let a = moto.aws(&[
        "iam",
        "list-attached-role-policies",
        "--role-name",
        "shared-worker",
    ]);
    a["AttachedPolicies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["PolicyName"].as_str().unwrap().to_string())
        .collect()
}

/// `plan -detailed-exitcode`'s exit code and text.
fn plan(w: &Workdir, extra: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["plan", "-detailed-exitcode"];
    args.extend_from_slice(extra);
    let out = w.engine(&args);
    (out.status.code(), text(&out))
}

#[test]
fn two_estates_share_objects_and_never_touch_each_others_parts() {
    let moto = Moto::start();
    let platform = Workdir::new();
    let app = Workdir::new();
    platform_root(platform.dir.path(), &moto, true);
    app_root(app.dir.path(), &moto, true, "");
    platform.init();
    app.init();

    let applied = platform.engine(&["apply", "-auto-approve"]);
    assert!(
        text(&applied).contains("Apply complete! Resources: 4 added, 0 changed, 0 destroyed."),
        "{}",
        text(&applied)
    );
    let applied = app.engine(&["apply", "-auto-approve"]);
    assert!(
        text(&applied).contains("Apply complete! Resources: 5 added, 0 changed, 0 destroyed."),
        "{}",
        text(&applied)
    );
    let tags = table_tags(&moto);
    assert_eq!(
        tags.get("owner").map(String::as_str),
        Some("app"),
        "{tags:?}"
    );
    assert_eq!(tags.get("tofu-estate").map(String::as_str), Some(PLATFORM));
    assert!(queue_attr(&moto, "Policy").is_some());
    assert_eq!(subscriptions(&moto), 1);
    assert_eq!(attached(&moto), ["app-logs"]);

    // Neither plan proposes touching the other's things.
    for (who, w) in [("platform", &platform), ("app", &app)] {
        let (code, out) = plan(w, &[]);
        assert_eq!(code, Some(0), "{who}'s plan is not empty:\n{out}");
    }
    // Without its ignore_changes the platform's plan takes the app's tag:
    // the boundary is the platform's to keep, as with stock terraform.
    platform_root(platform.dir.path(), &moto, false);
    let (code, out) = plan(&platform, &[]);
    assert_eq!(code, Some(2), "{out}");
    let takes_tag = out.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with(r#"- "owner""#) && l.ends_with(r#"= "app" -> null"#)
    });
    assert!(
        out.contains("# aws_dynamodb_table.sessions will be updated in-place") && takes_tag,
        "{out}"
    );
    platform_root(platform.dir.path(), &moto, true);

    // A write over the platform's objects is refused by name, and changes
    // nothing: a whole object, or its marker through a tag of its own.
    for (block, summary, detail) in [
        (
            "resource \"aws_sqs_queue\" \"stolen\" {\n  name = \"shared-inbox\"\n}\n",
            "Object owned by another estate",
            format!("aws_sqs_queue.stolen would bind to the live object {}, which carries the marker of estate \"{PLATFORM}\"", queue_url(&moto)),
        ),
        (
            "resource \"aws_dynamodb_tag\" \"marker\" {\n  resource_arn = data.aws_dynamodb_table.sessions.arn\n  key          = \"tofu-estate\"\n  value        = \"it-app\"\n}\n",
            "Marker tag written by a block",
            "aws_dynamodb_tag.marker writes the tag \"tofu-estate\", which is an estate's marker".to_string(),
        ),
    ] {
        app_root(app.dir.path(), &moto, true, block);
        let refused = app.engine(&["apply", "-auto-approve"]);
        let out = flat(&text(&refused));
        assert_eq!(refused.status.code(), Some(1), "{out}");
        assert!(out.contains(summary), "{out}");
        assert!(out.contains(&detail), "{out}");
    }
    assert_eq!(table_tags(&moto), tags, "a refused apply changed the table");
    app_root(app.dir.path(), &moto, true, "");

    // The app owns its parts of the platform's objects by its own records:
    // without them, it refuses to adopt them rather than guess.
    let (code, out) = plan(&app, &["-no-records"]);
    assert_eq!(code, Some(1), "{out}");
    let out = flat(&out);
    assert!(
        out.contains("Object owned by another estate")
            && out.contains(&format!("which carries the marker of estate \"{PLATFORM}\". A part of another estate's object is this estate's only when this estate's record names it")),
        "{out}"
    );

    // Removing one of the app's blocks destroys exactly that part.
    app_root(app.dir.path(), &moto, false, "");
    let (code, out) = plan(&app, &[]);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("# aws_dynamodb_tag.owner will be destroyed")
            && out.contains("Plan: 0 to add, 0 to change, 1 to destroy."),
        "{out}"
    );
    let applied = app.engine(&["apply", "-auto-approve"]);
    assert!(
        text(&applied).contains("Apply complete! Resources: 0 added, 0 changed, 1 destroyed."),
        "{}",
        text(&applied)
    );
    let after = table_tags(&moto);
    assert!(!after.contains_key("owner"), "{after:?}");
    assert_eq!(after.get("team").map(String::as_str), Some("platform"));
    assert_eq!(after.get("tofu-estate").map(String::as_str), Some(PLATFORM));
    for (who, w) in [("platform", &platform), ("app", &app)] {
        let (code, out) = plan(w, &[]);
        assert_eq!(code, Some(0), "{who}'s plan is not empty:\n{out}");
    }

    // The app's teardown releases its parts and leaves the platform's
    // objects, still marked, with the platform's plan empty.
    let destroyed = app.engine(&["destroy", "-auto-approve"]);
    assert!(
        text(&destroyed).contains("Destroy complete! Resources: 4 destroyed."),
        "{}",
        text(&destroyed)
    );
    assert_eq!(queue_attr(&moto, "Policy"), None);
    assert_eq!(subscriptions(&moto), 0);
    assert!(attached(&moto).is_empty());
    assert_eq!(
        queue_tags(&moto)["tofu-estate"].as_str(),
        Some(PLATFORM),
        "{}",
        queue_tags(&moto)
    );
    let (code, out) = plan(&platform, &[]);
    assert_eq!(code, Some(0), "{out}");

    let destroyed = platform.engine(&["destroy", "-auto-approve"]);
    assert!(
        text(&destroyed).contains("Destroy complete! Resources: 4 destroyed."),
        "{}",
        text(&destroyed)
    );
    let queues = moto.aws(&["sqs", "list-queues"]);
    assert!(
        queues["QueueUrls"].as_array().is_none_or(Vec::is_empty),
        "{queues}"
    );
}
