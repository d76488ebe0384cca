//! A module call removed after every record was lost: the engine finds
//! each object the call made from its marker or its owner's, as the plan
//! with the records found them, and its apply leaves nothing behind. And a
//! VPC's adopted default, whose destroy leaves the object in place, is not
//! planned for destroy again once it went.

use crate::support::{aws_provider, text, write_live, Moto, Workdir};
use std::collections::BTreeSet;
use std::path::Path;

const ESTATE: &str = "it-lost-records";

/// The `net` module: a VPC with its adopted defaults, a subnet, a route
/// table and its association, an ACL, a group with a rule, an S3 gateway
/// endpoint, an elastic IP, a log group, a role and a policy named by
/// prefix, their attachment, an inline policy of the role, and a user. The
/// emulator's tagging API lists none of the endpoint, the elastic IP, the
/// ACLs, the rule, the role, the policy or the user (aws's lists no role
/// or user either), and no part carries a marker.
const NET: &str = r#"
variable "name" {
  type = string
}

variable "default_group" {
  type = bool
}

resource "aws_vpc" "v" {
  cidr_block = "10.42.0.0/16"
}

resource "aws_subnet" "s" {
  vpc_id     = aws_vpc.v.id
  cidr_block = "10.42.1.0/24"
}

resource "aws_default_network_acl" "d" {
  default_network_acl_id = aws_vpc.v.default_network_acl_id
  subnet_ids             = [aws_subnet.s.id]

  ingress {
    protocol   = -1
    rule_no    = 100
    action     = "allow"
    cidr_block = "0.0.0.0/0"
    from_port  = 0
    to_port    = 0
  }
}

resource "aws_default_route_table" "d" {
  default_route_table_id = aws_vpc.v.default_route_table_id
}

resource "aws_default_security_group" "d" {
  count  = var.default_group ? 1 : 0
  vpc_id = aws_vpc.v.id
}

resource "aws_route_table" "r" {
  vpc_id = aws_vpc.v.id
}

resource "aws_route_table_association" "a" {
  subnet_id      = aws_subnet.s.id
  route_table_id = aws_route_table.r.id
}

resource "aws_network_acl" "n" {
  vpc_id = aws_vpc.v.id
}

resource "aws_security_group" "g" {
  name   = "${var.name}-g"
  vpc_id = aws_vpc.v.id
}

resource "aws_vpc_security_group_ingress_rule" "i" {
  security_group_id = aws_security_group.g.id
  cidr_ipv4         = "10.0.0.0/8"
  ip_protocol       = "tcp"
  from_port         = 443
  to_port           = 443
}

resource "aws_vpc_endpoint" "s3" {
  vpc_id       = aws_vpc.v.id
  service_name = "com.amazonaws.us-east-1.s3"
}

resource "aws_eip" "e" {
  domain = "vpc"
}

resource "aws_cloudwatch_log_group" "l" {
  name = "/${var.name}/flow"
}

resource "aws_iam_role" "r" {
  name_prefix = "${var.name}-"
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Action = "sts:AssumeRole", Principal = { Service = "ec2.amazonaws.com" } }]
  })
}

resource "aws_iam_policy" "p" {
  name_prefix = "${var.name}-"
  policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Action = "logs:PutLogEvents", Resource = aws_cloudwatch_log_group.l.arn }]
  })
}

resource "aws_iam_role_policy_attachment" "a" {
  role       = aws_iam_role.r.name
  policy_arn = aws_iam_policy.p.arn
}

resource "aws_iam_role_policy" "i" {
  name = "inline"
  role = aws_iam_role.r.id
  policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Action = "logs:CreateLogStream", Resource = aws_cloudwatch_log_group.l.arn }]
  })
}

resource "aws_iam_user" "u" {
  name = "${var.name}-u"
}
"#;

/// The root: the call (or none), and a parameter that stays.
fn write_root(dir: &Path, moto: &Moto, call: Option<bool>) {
    let provider = aws_provider(&moto.endpoint);
    let call = match call {
        Some(default_group) => format!(
            "module \"net\" {{\n  source        = \"./net\"\n  name          = \"it-lost\"\n  default_group = {default_group}\n}}\n"
        ),
        None => String::new(),
    };
    std::fs::create_dir_all(dir.join("net")).unwrap();
    std::fs::write(dir.join("net/main.tf"), NET).unwrap();
    std::fs::write(
        dir.join("main.tf"),
        format!(
            r#"{provider}
{call}
resource "aws_ssm_parameter" "keep" {{
  name  = "/it/lost/keep"
  type  = "String"
  value = "kept"
}}
"#
        ),
    )
    .unwrap();
    write_live(dir, ESTATE);
}

/// Every `# <address> will be ...` line's address and verb.
fn headlines(out: &str) -> BTreeSet<String> {
    out.lines()
        .filter_map(|l| l.trim().strip_prefix("# "))
        .filter(|l| l.contains(" will be ") || l.contains(" must be "))
        .map(str::to_string)
        .collect()
}

fn summary(out: &str) -> &str {
    out.lines()
        .find(|l| l.starts_with("Plan: ") || l.starts_with("No changes."))
        .unwrap_or_else(|| panic!("no summary line in:\n{out}"))
}

/// How many of the objects an EC2 `describe` call lists `keep` picks.
fn count(moto: &Moto, call: &str, key: &str, keep: impl Fn(&serde_json::Value) -> bool) -> usize {
    moto.aws(&["ec2", call])[key]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| keep(o))
        .count()
}

fn is_the_modules_vpc(o: &serde_json::Value) -> bool {
    o["CidrBlock"].as_str() == Some("10.42.0.0/16")
}

#[test]
fn a_removed_call_is_found_and_destroyed_with_every_record_lost() {
    let moto = Moto::start();
    let e = Workdir::new();
    write_root(e.dir.path(), &moto, Some(true));
    e.init();
    let applied = e.engine(&["apply", "-auto-approve"]);
    assert!(applied.status.success(), "{}", text(&applied));
    assert!(
        text(&applied).contains("Apply complete! Resources: 19 added"),
        "{}",
        text(&applied)
    );

    // The default group's block removed while its VPC stays: its destroy
    // leaves the group, as terraform's does, without the estate's markers;
    // then nothing more to do, with the records and without them (where the
    // role and the policy named by prefix are found by their listings and
    // their markers).
    write_root(e.dir.path(), &moto, Some(false));
    let plan = e.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(
        headlines(&text(&plan)),
        BTreeSet::from([
            "module.net.aws_default_security_group.d[0] will be destroyed".to_string()
        ]),
        "{}",
        text(&plan)
    );
    let applied = e.engine(&["apply", "-auto-approve"]);
    assert!(applied.status.success(), "{}", text(&applied));
    let vpcs = moto.aws(&[
        "ec2",
        "describe-vpcs",
        "--filters",
        "Name=cidr,Values=10.42.0.0/16",
    ]);
    let vpc = vpcs["Vpcs"][0]["VpcId"].as_str().unwrap().to_string();
    let groups = moto.aws(&[
        "ec2",
        "describe-security-groups",
        "--filters",
        &format!("Name=vpc-id,Values={vpc}"),
        "Name=group-name,Values=default",
    ]);
    let group = &groups["SecurityGroups"][0];
    assert!(group["GroupId"].is_string(), "{groups}");
    let tags = group["Tags"].as_array().cloned().unwrap_or_default();
    assert!(
        tags.iter()
            .all(|t| !t["Key"].as_str().unwrap_or_default().starts_with("tofu-")),
        "{groups}"
    );
    for args in [
        &["plan", "-detailed-exitcode"][..],
        &["plan", "-detailed-exitcode", "-no-records"],
    ] {
        let replan = e.engine(args);
        assert_eq!(replan.status.code(), Some(0), "{args:?}: {}", text(&replan));
    }

    // The call removed: the plan with the records is the bar.
    write_root(e.dir.path(), &moto, None);
    let with = e.engine(&["plan", "-detailed-exitcode"]);
    let with_out = text(&with);
    assert_eq!(with.status.code(), Some(2), "{with_out}");
    assert_eq!(
        summary(&with_out),
        "Plan: 0 to add, 0 to change, 17 to destroy."
    );

    // Every record lost: the same objects, each at the address its marker
    // names; the three parts, which carry none, under their parents' module
    // with names of their own.
    moto.lose_records(ESTATE);
    assert!(moto.record_parameters(ESTATE).is_empty());
    let without = e.engine(&["plan", "-detailed-exitcode"]);
    let without_out = text(&without);
    assert_eq!(without.status.code(), Some(2), "{without_out}");
    assert_eq!(
        summary(&without_out),
        "Plan: 0 to add, 0 to change, 17 to destroy.",
        "{without_out}"
    );
    let mut expected = headlines(&with_out);
    let mut found = headlines(&without_out);
    let mut renamed = Vec::new();
    for (part, prefix) in [
        (
            "aws_route_table_association.a",
            "aws_route_table_association.orphan_rtb-",
        ),
        (
            "aws_iam_role_policy_attachment.a",
            "aws_iam_role_policy_attachment.orphan_it-lost-",
        ),
        ("aws_iam_role_policy.i", "aws_iam_role_policy.orphan_inline"),
    ] {
        assert!(
            expected.remove(&format!("module.net.{part} will be destroyed")),
            "{with_out}"
        );
        let orphan: Vec<String> = found
            .iter()
            .filter(|h| h.starts_with(&format!("module.net.{prefix}")))
            .cloned()
            .collect();
        assert_eq!(orphan.len(), 1, "{prefix}: {without_out}");
        found.remove(&orphan[0]);
        renamed.push(orphan[0].trim_end_matches(" will be destroyed").to_string());
    }
    assert_eq!(found, expected, "{without_out}");

    // Its apply leaves nothing of the call, and keeps the parameter; each
    // part goes before its parent, as AWS requires (a route table, a role
    // or a policy still associated or attached is not deleted).
    let applied = e.engine(&["apply", "-auto-approve"]);
    let applied_out = text(&applied);
    assert!(applied.status.success(), "{applied_out}");
    let at = |h: &str| {
        applied_out
            .find(h)
            .unwrap_or_else(|| panic!("{h}: {applied_out}"))
    };
    let parents: [&[&str]; 3] = [
        &["aws_route_table.r"],
        &["aws_iam_role.r", "aws_iam_policy.p"],
        &["aws_iam_role.r"],
    ];
    for (part, parents) in renamed.iter().zip(parents) {
        for parent in parents {
            assert!(
                at(&format!("{part}: Destruction complete"))
                    < at(&format!("module.net.{parent}: Destroying...")),
                "{applied_out}"
            );
        }
    }
    assert!(
        text(&applied).contains("Resources: 0 added, 0 changed, 17 destroyed."),
        "{}",
        text(&applied)
    );
    assert_eq!(count(&moto, "describe-vpcs", "Vpcs", is_the_modules_vpc), 0);
    assert_eq!(count(&moto, "describe-addresses", "Addresses", |_| true), 0);
    let groups = moto.aws(&["logs", "describe-log-groups"]);
    assert_eq!(groups["logGroups"].as_array().unwrap().len(), 0, "{groups}");
    assert_eq!(moto.parameter("/it/lost/keep").as_deref(), Some("kept"));
    for (list, key) in [("list-roles", "Roles"), ("list-users", "Users")] {
        let listed = moto.aws(&["iam", list]);
        assert_eq!(listed[key].as_array().unwrap().len(), 0, "{listed}");
    }
    let policies = moto.aws(&["iam", "list-policies", "--scope", "Local"]);
    assert_eq!(
        policies["Policies"].as_array().unwrap().len(),
        0,
        "{policies}"
    );
    let replan = e.engine(&["plan", "-detailed-exitcode"]);
    assert_eq!(replan.status.code(), Some(0), "{}", text(&replan));
}
