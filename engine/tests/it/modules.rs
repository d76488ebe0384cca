//! A root calling local child modules (once, with `for_each`, with `count`,
//! and a module nested in each instance) planned by stock terraform and by
//! the engine, then applied, replanned, shrunk, renamed with a `moved`
//! block and destroyed by the engine against the real aws provider and a
//! real moto, read back with the AWS CLI.

use crate::support::{aws_provider, terraform, text, write_live, Moto, Workdir};
use std::collections::BTreeMap;
use std::path::Path;

const ESTATE: &str = "it-modules";

/// The root, its `queue` module and the `param` module each queue calls.
fn write_root(dir: &Path, moto: &Moto) {
    std::fs::create_dir_all(dir.join("queue/param")).unwrap();
    std::fs::write(
        dir.join("main.tf"),
        format!(
            r#"
variable "envs" {{
  type    = set(string)
  default = ["a", "b"]
}}

{provider}
module "one" {{
  source = "./queue"
  name   = "one"
}}

module "each" {{
  source   = "./queue"
  for_each = var.envs
  name     = "each-${{each.key}}"
}}

module "counted" {{
  source = "./queue"
  count  = 2
  name   = "counted-${{count.index}}"
}}

resource "aws_ssm_parameter" "urls" {{
  name  = "/it/mod/urls"
  type  = "String"
  value = join(",", [module.one.url, module.counted[1].url])
}}

output "one_url" {{
  value = module.one.url
}}
"#,
            provider = aws_provider(&moto.endpoint)
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("queue/main.tf"),
        r#"
variable "name" {
  type = string
}

resource "aws_sqs_queue" "q" {
  name = "it-mod-${var.name}"
}

module "param" {
  source = "./param"
  name   = "/it/mod/${var.name}"
  value  = aws_sqs_queue.q.url
}

output "url" {
  value = aws_sqs_queue.q.url
}
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("queue/param/main.tf"),
        r#"
variable "name" {
  type = string
}

variable "value" {
  type = string
}

resource "aws_ssm_parameter" "p" {
  name  = var.name
  type  = "String"
  value = var.value
}
"#,
    )
    .unwrap();
}

/// A working directory holding the root.
fn root(moto: &Moto) -> Workdir {
    let w = Workdir::new();
    write_root(w.dir.path(), moto);
    w
}

/// The actions of a `show -json` plan by address.
fn actions(plan: &serde_json::Value) -> BTreeMap<String, Vec<String>> {
    plan["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rc| {
            let acts = rc["change"]["actions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect();
            (rc["address"].as_str().unwrap().to_string(), acts)
        })
        .collect()
}

fn summary(out: &str) -> String {
    out.lines()
        .find(|l| l.starts_with("Plan: ") || l.starts_with("No changes."))
        .unwrap_or_else(|| panic!("no summary line in:\n{out}"))
        .to_string()
}

/// Every `# <address> will be ...` line, in order.
fn headlines(out: &str) -> Vec<String> {
    out.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("# ") && l.contains(" will be "))
        .map(str::to_string)
        .collect()
}

/// Each live SQS queue's `tofu-address` tag, by queue name.
fn queue_markers(moto: &Moto) -> BTreeMap<String, Option<String>> {
    let listed = moto.aws(&["sqs", "list-queues"]);
    let mut out = BTreeMap::new();
    for url in listed["QueueUrls"].as_array().into_iter().flatten() {
        let url = url.as_str().unwrap();
        let tags = moto.aws(&["sqs", "list-queue-tags", "--queue-url", url]);
        let name = url.rsplit('/').next().unwrap().to_string();
        let estate = tags["Tags"]["tofu-estate"].as_str();
        assert_eq!(estate, Some(ESTATE), "{name}: {tags}");
        out.insert(
            name,
            tags["Tags"]["tofu-address"].as_str().map(str::to_string),
        );
    }
    out
}

fn parameter_names(moto: &Moto) -> Vec<String> {
    let found = moto.aws(&["ssm", "describe-parameters"]);
    found["Parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["Name"].as_str().unwrap().to_string())
        // The engine's own record store is no object of the root.
        .filter(|n| !n.starts_with("/choudoufu/"))
        .collect()
}

#[test]
fn a_root_calling_modules_plans_as_terraform_does_and_applies_each_instance() {
    let moto = Moto::start();

    // Stock terraform's plan of the root, as the oracle.
    let stock = root(&moto);
    let tf = terraform();
    let init = stock.run(
        &tf,
        &["init", "-backend=false", "-input=false", "-no-color"],
    );
    assert!(init.status.success(), "{}", text(&init));
    let planned = stock.run(&tf, &["plan", "-input=false", "-no-color", "-out=tf.plan"]);
    assert!(planned.status.success(), "{}", text(&planned));
    let stock_text = text(&planned);
    let shown = stock.run(&tf, &["show", "-json", "tf.plan"]);
    let stock_json: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();

    // The engine's plan of the same root.
    let e = root(&moto);
    write_live(e.dir.path(), ESTATE);
    e.init();
    let planned = e.engine(&["plan", "-out", "review.plan"]);
    assert!(planned.status.success(), "{}", text(&planned));
    let ours_text = text(&planned);
    let shown = e.engine(&["show", "-json", "review.plan"]);
    assert!(shown.status.success(), "{}", text(&shown));
    let ours_json: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();

    assert_eq!(actions(&ours_json), actions(&stock_json));
    assert_eq!(actions(&ours_json).len(), 11);
    assert_eq!(summary(&ours_text), summary(&stock_text));
    assert_eq!(
        summary(&ours_text),
        "Plan: 11 to add, 0 to change, 0 to destroy."
    );
    assert_eq!(headlines(&ours_text), headlines(&stock_text));
    assert!(
        ours_text.contains("# module.each[\"a\"].module.param.aws_ssm_parameter.p will be created"),
        "{ours_text}"
    );
    let module_addresses = |plan: &serde_json::Value| -> BTreeMap<String, String> {
        plan["resource_changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|rc| {
                (
                    rc["address"].as_str().unwrap().to_string(),
                    rc["module_address"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                )
            })
            .collect()
    };
    assert_eq!(module_addresses(&ours_json), module_addresses(&stock_json));
    let children = |plan: &serde_json::Value| -> Vec<String> {
        plan["planned_values"]["root_module"]["child_modules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["address"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(children(&ours_json), children(&stock_json));

    // -target naming a module call, and a module instance nested in one:
    // the same instances as stock's targeted plans, dependencies included.
    for target in ["module.each", "module.counted[1].module.param"] {
        let flag = format!("-target={target}");
        let planned = stock.run(&tf, &["plan", "-input=false", "-no-color", &flag]);
        assert!(planned.status.success(), "{}", text(&planned));
        let stock_text = text(&planned);
        let planned = e.engine(&["plan", &flag]);
        let ours_text = text(&planned);
        assert!(planned.status.success(), "{ours_text}");
        assert_eq!(headlines(&ours_text), headlines(&stock_text), "{target}");
        assert_eq!(summary(&ours_text), summary(&stock_text), "{target}");
        assert!(
            ours_text.contains("Warning: Resource targeting is in effect"),
            "{ours_text}"
        );
    }
    assert_eq!(
        headlines(&text(&e.engine(&["plan", "-target=module.each[\"b\"]"]))),
        [
            "# module.each[\"b\"].aws_sqs_queue.q will be created",
            "# module.each[\"b\"].module.param.aws_ssm_parameter.p will be created",
        ]
    );

    // Apply, then every queue carries its full address.
    let applied = e.engine(&["apply", "-auto-approve"]);
    let out = text(&applied);
    assert!(applied.status.success(), "{out}");
    assert!(
        out.contains("Apply complete! Resources: 11 added, 0 changed, 0 destroyed."),
        "{out}"
    );
    assert!(out.contains("one_url = \""), "{out}");
    let markers = queue_markers(&moto);
    let expected: BTreeMap<String, Option<String>> = [
        ("it-mod-one", "module.one.aws_sqs_queue.q"),
        ("it-mod-each-a", "module.each[\"a\"].aws_sqs_queue.q"),
        ("it-mod-each-b", "module.each[\"b\"].aws_sqs_queue.q"),
        ("it-mod-counted-0", "module.counted[0].aws_sqs_queue.q"),
        ("it-mod-counted-1", "module.counted[1].aws_sqs_queue.q"),
    ]
    .into_iter()
    .map(|(n, a)| (n.to_string(), Some(a.to_string())))
    .collect();
    assert_eq!(markers, expected);
    let urls = moto.aws(&["ssm", "get-parameter", "--name", "/it/mod/urls"]);
    let value = urls["Parameter"]["Value"].as_str().unwrap();
    assert!(
        value.contains("it-mod-one") && value.contains("it-mod-counted-1"),
        "{value}"
    );
    assert_eq!(parameter_names(&moto).len(), 6);

    // From the live system alone, with records: no changes. Without them
    // nothing in the live system either; only the root's output, which
    // lives in no object, is new again.
    let replan = e.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(replan.status.code(), Some(0), "{}", text(&replan));
    assert!(text(&replan).contains("No changes."), "{}", text(&replan));
    let replan = e.engine(&["plan", "-detailed-exitcode", "-no-records"]);
    let out = text(&replan);
    assert_eq!(replan.status.code(), Some(2), "{out}");
    assert!(headlines(&out).is_empty(), "{out}");
    assert!(
        out.contains("Changes to Outputs:\n  + one_url = \""),
        "{out}"
    );

    // One module instance removed: only its objects are destroyed.
    let shrunk = e.engine(&["plan", "-detailed-exitcode", "-var", "envs=[\"a\"]"]);
    let out = text(&shrunk);
    assert_eq!(shrunk.status.code(), Some(2), "{out}");
    assert_eq!(
        headlines(&out),
        [
            "# module.each[\"b\"].aws_sqs_queue.q will be destroyed",
            "# module.each[\"b\"].module.param.aws_ssm_parameter.p will be destroyed",
        ]
    );
    assert!(
        out.contains("# (because module.each[\"b\"] is not in configuration)"),
        "{out}"
    );
    assert_eq!(summary(&out), "Plan: 0 to add, 0 to change, 2 to destroy.");
    let applied = e.engine(&["apply", "-auto-approve", "-var", "envs=[\"a\"]"]);
    assert!(applied.status.success(), "{}", text(&applied));
    let markers = queue_markers(&moto);
    assert!(!markers.contains_key("it-mod-each-b"), "{markers:?}");
    assert_eq!(markers.len(), 4, "{markers:?}");
    assert!(!parameter_names(&moto).contains(&"/it/mod/each-b".to_string()));
    assert_eq!(parameter_names(&moto).len(), 5);

    // A module call renamed with a moved block, as a module's upgrade
    // does: its objects, nested module's included, are found under the old
    // path and only their markers change; nothing is created or destroyed.
    let main = e.dir.path().join("main.tf");
    let renamed = std::fs::read_to_string(&main)
        .unwrap()
        .replace("module \"one\"", "module \"first\"")
        .replace("module.one.url", "module.first.url")
        + "\nmoved {\n  from = module.one\n  to   = module.first\n}\n";
    std::fs::write(&main, renamed).unwrap();
    let moved = e.engine(&["plan", "-var", "envs=[\"a\"]"]);
    let out = text(&moved);
    assert!(moved.status.success(), "{out}");
    assert_eq!(
        headlines(&out),
        [
            "# module.first.aws_sqs_queue.q will be updated in-place",
            "# module.first.module.param.aws_ssm_parameter.p will be updated in-place",
        ]
    );
    assert!(
        out.contains("# (moved from module.one.aws_sqs_queue.q)")
            && out.contains("# (moved from module.one.module.param.aws_ssm_parameter.p)"),
        "{out}"
    );
    assert_eq!(summary(&out), "Plan: 0 to add, 2 to change, 0 to destroy.");
    let applied = e.engine(&["apply", "-auto-approve", "-var", "envs=[\"a\"]"]);
    assert!(applied.status.success(), "{}", text(&applied));
    assert_eq!(
        queue_markers(&moto)["it-mod-one"].as_deref(),
        Some("module.first.aws_sqs_queue.q")
    );
    let replan = e.engine(&["plan", "-detailed-exitcode", "-var", "envs=[\"a\"]"]);
    assert_eq!(replan.status.code(), Some(0), "{}", text(&replan));

    // Destroy leaves nothing that carries the marker.
    let destroyed = e.engine(&["destroy", "-auto-approve", "-var", "envs=[\"a\"]"]);
    let out = text(&destroyed);
    assert!(destroyed.status.success(), "{out}");
    assert!(
        out.contains("Destroy complete! Resources: 9 destroyed."),
        "{out}"
    );
    assert!(queue_markers(&moto).is_empty());
    assert!(parameter_names(&moto).is_empty());
    let tagged = moto.aws(&[
        "resourcegroupstaggingapi",
        "get-resources",
        "--tag-filters",
        &format!("Key=tofu-estate,Values={ESTATE}"),
    ]);
    assert_eq!(tagged["ResourceTagMappingList"], serde_json::json!([]));
}

#[test]
fn a_stock_state_of_module_instances_migrates_and_replans_to_nothing() {
    let moto = Moto::start();
    let root = root(&moto);
    let tf = terraform();
    let init = root.run(
        &tf,
        &["init", "-backend=false", "-input=false", "-no-color"],
    );
    assert!(init.status.success(), "{}", text(&init));
    let applied = root.run(
        &tf,
        &["apply", "-auto-approve", "-input=false", "-no-color"],
    );
    assert!(applied.status.success(), "{}", text(&applied));
    write_live(root.dir.path(), ESTATE);

    let migrated = root.engine(&["migrate", "-state", "terraform.tfstate"]);
    let out = text(&migrated);
    assert!(migrated.status.success(), "{out}");
    assert!(
        out.contains("Migrate complete! 11 newly stamped, 0 already stamped, 0 recorded, 0 failed, 0 skipped."),
        "{out}"
    );
    assert_eq!(
        queue_markers(&moto)["it-mod-each-b"].as_deref(),
        Some("module.each[\"b\"].aws_sqs_queue.q")
    );

    std::fs::remove_file(root.dir.path().join("terraform.tfstate")).unwrap();
    let replan = root.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(replan.status.code(), Some(0), "{}", text(&replan));
    assert!(text(&replan).contains("No changes."), "{}", text(&replan));
}

/// A call holding a security group and two rules whose ports the provider
/// normalises (protocol -1 reads back as ports 0), taken from a stock
/// state and then renamed with a `moved` block: the rules' records, named
/// by the normalised import IDs, are the renamed instances' and never
/// orphans to destroy, and the group's record (`revoke_rules_on_delete`,
/// which no read returns) moves with it, so its update is the markers'
/// alone.
#[test]
fn a_migrated_call_holding_security_group_rules_is_renamed_moving_only_markers() {
    let moto = Moto::start();
    let w = Workdir::new();
    let dir = w.dir.path();
    std::fs::create_dir_all(dir.join("sg")).unwrap();
    std::fs::write(
        dir.join("main.tf"),
        format!(
            "{}\nmodule \"web\" {{\n  source = \"./sg\"\n  name   = \"it-mod-sg\"\n}}\n",
            aws_provider(&moto.endpoint)
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("sg/main.tf"),
        r#"variable "name" {
  type = string
}

data "aws_vpc" "default" {
  default = true
}

resource "aws_security_group" "this" {
  name                   = var.name
  vpc_id                 = data.aws_vpc.default.id
  revoke_rules_on_delete = true
}

resource "aws_security_group_rule" "egress" {
  type              = "egress"
  from_port         = -1
  to_port           = -1
  protocol          = "-1"
  cidr_blocks       = ["0.0.0.0/0"]
  security_group_id = aws_security_group.this.id
}

resource "aws_security_group_rule" "self" {
  type              = "ingress"
  from_port         = -1
  to_port           = -1
  protocol          = "-1"
  self              = true
  security_group_id = aws_security_group.this.id
}
"#,
    )
    .unwrap();
    let tf = terraform();
    for args in [
        &["init", "-backend=false", "-input=false", "-no-color"][..],
        &["apply", "-auto-approve", "-input=false", "-no-color"],
    ] {
        let out = w.run(&tf, args);
        assert!(out.status.success(), "{}", text(&out));
    }
    write_live(dir, ESTATE);
    let migrated = w.engine(&["migrate", "-state", "terraform.tfstate"]);
    assert!(migrated.status.success(), "{}", text(&migrated));
    std::fs::remove_file(dir.join("terraform.tfstate")).unwrap();

    let main = std::fs::read_to_string(dir.join("main.tf")).unwrap();
    std::fs::write(
        dir.join("main.tf"),
        main.replace("module \"web\"", "module \"web_renamed\"")
            + "\nmoved {\n  from = module.web\n  to   = module.web_renamed\n}\n",
    )
    .unwrap();
    let init = w.engine(&["init", "-input=false"]);
    assert!(init.status.success(), "{}", text(&init));
    let plan = w.engine(&["plan", "-out", "rename.plan"]);
    assert!(plan.status.success(), "{}", text(&plan));
    let shown = w.engine(&["show", "-json", "rename.plan"]);
    let planned = actions(&serde_json::from_slice(&shown.stdout).unwrap());
    let changing: BTreeMap<&String, &Vec<String>> =
        planned.iter().filter(|(_, a)| *a != &["no-op"]).collect();
    let update = vec!["update".to_string()];
    assert_eq!(
        changing,
        BTreeMap::from([(
            &"module.web_renamed.aws_security_group.this".to_string(),
            &update
        )]),
        "{}",
        text(&plan)
    );
    let doc: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    let group = doc["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["address"] == "module.web_renamed.aws_security_group.this")
        .unwrap();
    let without_tags = |v: &serde_json::Value| {
        let mut v = v.clone();
        for k in ["tags", "tags_all"] {
            v.as_object_mut().unwrap().remove(k);
        }
        v
    };
    assert_eq!(
        without_tags(&group["change"]["before"]),
        without_tags(&group["change"]["after"]),
        "the renamed group's update changes more than its markers:\n{}",
        text(&plan)
    );
    let applied = w.engine(&["apply", "-auto-approve"]);
    assert!(applied.status.success(), "{}", text(&applied));
    let replan = w.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(replan.status.code(), Some(0), "{}", text(&replan));
    // The group still holds both rules: nothing was destroyed.
    let groups = moto.aws(&[
        "ec2",
        "describe-security-groups",
        "--filters",
        "Name=group-name,Values=it-mod-sg",
    ]);
    let group = groups["SecurityGroups"][0]["GroupId"]
        .as_str()
        .unwrap()
        .to_owned();
    let rules = moto.aws(&[
        "ec2",
        "describe-security-group-rules",
        "--filters",
        &format!("Name=group-id,Values={group}"),
    ]);
    assert_eq!(
        rules["SecurityGroupRules"].as_array().unwrap().len(),
        2,
        "{rules}"
    );
}
