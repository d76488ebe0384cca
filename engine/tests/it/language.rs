//! Language features of published roots, through the real aws provider and
//! a real moto, beside stock terraform: attributes written as blocks reach
//! the provider as terraform sends them; `migrate` and `plan` of a root
//! whose locals read data sources, with its only provider block in an
//! override file and checks that warn.

use crate::support::{aws_binary, terraform, text, write_live, Moto, Workdir};
use engine::config::{Resource, ResourceKey};
use engine::eval::body::decode;
use engine::eval::module::{Instance, ModuleValues};
use engine::plan::json::value_json;
use engine::provider::grpc::GrpcProvider;
use engine::provider::plugin::{LaunchOptions, Plugin};
use engine::provider::proposed::proposed_new;
use engine::provider::{Provider, ResourceState};
use engine::value::{Kind, Value};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// The aws provider pointed at `endpoint` for the services these roots use.
fn provider_block(endpoint: &str) -> String {
    let endpoints: String = ["ec2", "iam", "resourcegroupstaggingapi", "ssm", "sts"]
        .iter()
        .map(|s| format!("    {s:<24} = \"{endpoint}\"\n"))
        .collect();
    format!(
        "provider \"aws\" {{\n  region                      = \"us-east-1\"\n  access_key                  = \"test\"\n  secret_key                  = \"test\"\n  skip_credentials_validation = true\n  skip_metadata_api_check     = true\n  skip_requesting_account_id  = true\n  endpoints {{\n{endpoints}  }}\n}}\n"
    )
}

const REQUIRED: &str = "terraform {\n  required_providers {\n    aws = {\n      source  = \"hashicorp/aws\"\n      version = \"5.100.0\"\n    }\n  }\n}\n";

/// A security group whose rules are written as blocks: static, dynamic
/// over a variable, and dynamic over an empty list.
fn security_group_root(vpc_id: &str) -> String {
    format!(
        r#"{REQUIRED}
variable "ports" {{
  type    = list(number)
  default = [80, 443]
}}

resource "aws_security_group" "web" {{
  name        = "web"
  description = "rules written as blocks"
  vpc_id      = "{vpc_id}"

  ingress {{
    description = "ssh"
    from_port   = 22
    to_port     = 22
    protocol    = "tcp"
    cidr_blocks = ["10.0.0.0/8"]
  }}

  dynamic "ingress" {{
    for_each = var.ports
    content {{
      from_port        = ingress.value
      to_port          = ingress.value
      protocol         = "tcp"
      ipv6_cidr_blocks = ["::/0"]
    }}
  }}

  dynamic "egress" {{
    for_each = []
    content {{
      from_port = egress.value
      to_port   = egress.value
      protocol  = "tcp"
    }}
  }}
}}
"#
    )
}

/// terraform's planned `after` for the only resource change of the saved
/// plan in `w`, with the attributes it leaves unknown.
fn terraform_after(w: &Workdir) -> (Json, Json) {
    let tf = terraform();
    for args in [
        &["init", "-backend=false", "-input=false", "-no-color"][..],
        &["plan", "-out=tf.plan", "-input=false", "-no-color"],
    ] {
        let out = w.run(&tf, args);
        assert!(out.status.success(), "terraform {args:?}: {}", text(&out));
    }
    let shown = w.run(&tf, &["show", "-json", "tf.plan"]);
    assert!(shown.status.success(), "{}", text(&shown));
    let doc: Json = serde_json::from_slice(&shown.stdout).unwrap();
    let change = &doc["resource_changes"][0]["change"];
    (change["after"].clone(), change["after_unknown"].clone())
}

#[tokio::test]
async fn attributes_written_as_blocks_reach_the_provider_as_terraform_sends_them() {
    let moto = Moto::start();
    let vpc = moto.aws(&["ec2", "create-vpc", "--cidr-block", "10.40.0.0/16"]);
    let vpc_id = vpc["Vpc"]["VpcId"].as_str().unwrap().to_string();
    let w = Workdir::new();
    let root = w.dir.path();
    std::fs::write(root.join("main.tf"), security_group_root(&vpc_id)).unwrap();
    std::fs::write(root.join("provider.tf"), provider_block(&moto.endpoint)).unwrap();
    let (theirs, unknown) = terraform_after(&w);

    // The engine's side: the same body decoded against the real schema,
    // planned as a create by the same provider.
    let (module, d) = engine::config::load(root);
    assert!(!d.has_errors(), "{d}");
    let vars = engine::eval::inputs::collect(&module, &[], &BTreeMap::new()).unwrap();
    let values = ModuleValues::new(vars, root, root);
    let plugin = Plugin::launch(&aws_binary(), &LaunchOptions::default())
        .await
        .unwrap();
    let mut provider = GrpcProvider::new(plugin).unwrap();
    let schema = provider.schema().await.unwrap();
    let aws = module.providers.values().next().unwrap();
    let scope = values.scope_for(&aws.config.references(), &Instance::default());
    let config = decode(&aws.config, &schema.provider.block, &scope).unwrap();
    let prepared = provider.prepare_provider_config(&config).await.unwrap();
    provider.configure(&prepared).await.unwrap();
    let key = ResourceKey {
        mode: engine::addr::Mode::Managed,
        type_name: "aws_security_group".into(),
        name: "web".into(),
    };
    let res: &Resource = &module.resources[&key];
    let block = &schema.resources["aws_security_group"].block;
    let scope = values.scope_for(&res.config.references(), &Instance::default());
    let config = decode(&res.config, block, &scope).unwrap();
    let prior = Value::null(block.implied_type().without_optional());
    let proposed = proposed_new(block, &prior, &config);
    let none = ResourceState {
        value: prior,
        private: Vec::new(),
    };
    let planned = provider
        .plan_resource_change("aws_security_group", &none, &proposed, &config)
        .await
        .unwrap();
    provider.shutdown().await;

    let ours = value_json(&planned.planned_state);
    let ingress = theirs["ingress"].as_array().unwrap();
    assert_eq!(ingress.len(), 3, "{theirs:#}");
    // No egress block leaves the attribute null, which the provider
    // computes.
    assert_eq!(unknown["egress"], Json::Bool(true), "{unknown:#}");
    for (name, value) in theirs.as_object().unwrap() {
        assert_eq!(&ours[name], value, "{name}: ours {ours:#}");
    }
    for (name, is_unknown) in unknown.as_object().unwrap() {
        if is_unknown == &Json::Bool(true) {
            let Kind::Object(attrs) = &planned.planned_state.kind else {
                panic!("{ours:#}")
            };
            assert!(!attrs[name].is_known(), "{name} should be unknown");
        }
    }
}

#[test]
fn a_root_reading_data_sources_in_locals_migrates_and_its_checks_warn() {
    let moto = Moto::start();
    let w = Workdir::new();
    let root = w.dir.path();
    // No provider block in the primary files: the override file's is the
    // whole configuration of the default provider, and the locals read data
    // sources no provider block needs.
    std::fs::write(
        root.join("main.tf"),
        format!(
            r#"{REQUIRED}
terraform {{
  provider_meta "aws" {{}}
}}

data "aws_availability_zones" "available" {{
  state = "available"
}}

data "aws_region" "current" {{}}

locals {{
  azs    = slice(data.aws_availability_zones.available.names, 0, 2)
  prefix = "/it/lang/${{data.aws_region.current.name}}"
}}

resource "aws_ssm_parameter" "zone" {{
  for_each = toset(local.azs)
  name     = "${{local.prefix}}/${{each.key}}"
  type     = "String"
  value    = each.value
}}

check "three_zones" {{
  assert {{
    condition     = length(local.azs) == 3
    error_message = "Only ${{length(local.azs)}} zones are used."
  }}
}}

check "retired" {{
  data "aws_ssm_parameter" "retired" {{
    name = "${{local.prefix}}/retired"
  }}

  assert {{
    condition     = data.aws_ssm_parameter.retired.value == "no"
    error_message = "The retired flag is set."
  }}
}}
"#
        ),
    )
    .unwrap();
    std::fs::write(root.join("override.tf"), provider_block(&moto.endpoint)).unwrap();
    let tf = terraform();
    let mut applied = String::new();
    for args in [
        &["init", "-backend=false", "-input=false", "-no-color"][..],
        &["apply", "-auto-approve", "-input=false", "-no-color"],
    ] {
        let out = w.run(&tf, args);
        assert!(out.status.success(), "terraform {args:?}: {}", text(&out));
        applied = text(&out);
    }
    // Checks warn and never fail: a false assertion, and a data source
    // that cannot be read.
    let warnings = |out: &str| {
        let mut w: Vec<String> = out
            .lines()
            .filter_map(|l| l.strip_prefix("Warning: "))
            .map(str::to_string)
            .collect();
        w.sort();
        w
    };
    let expected = [
        "Check block assertion failed",
        "reading SSM Parameter (/it/lang/us-east-1/retired): couldn't find resource",
    ];
    assert_eq!(warnings(&applied), expected, "{applied}");
    assert!(applied.contains("Only 2 zones are used."), "{applied}");
    write_live(root, "it-lang");

    let migrated = w.engine(&["migrate", "-state", "terraform.tfstate"]);
    let out = text(&migrated);
    assert!(migrated.status.success(), "{out}");
    assert!(
        out.contains("Migrate complete! 2 newly stamped, 0 already stamped, 0 recorded, 0 failed, 0 skipped."),
        "{out}"
    );
    let tags = moto.aws(&[
        "ssm",
        "list-tags-for-resource",
        "--resource-type",
        "Parameter",
        "--resource-id",
        "/it/lang/us-east-1/us-east-1a",
    ]);
    assert!(
        tags["TagList"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["Key"] == "tofu-estate" && t["Value"] == "it-lang"),
        "{tags:#}"
    );

    // The plan reads the data sources for for_each and binds both
    // parameters through the override's provider configuration.
    std::fs::remove_file(root.join("terraform.tfstate")).unwrap();
    let replan = w.engine(&["plan", "-detailed-exitcode"]);
    let out = text(&replan);
    assert_eq!(replan.status.code(), Some(0), "{out}");
    assert!(out.contains("No changes."), "{out}");
    assert_eq!(warnings(&out), expected, "{out}");
    assert!(out.contains("Only 2 zones are used."), "{out}");

    // The aws provider's meta schema is empty: an argument in
    // provider_meta stops both plans, on its line (terraform says so once
    // for each instance it plans, the engine once).
    let main = std::fs::read_to_string(root.join("main.tf")).unwrap();
    let main = main.replace(
        "provider_meta \"aws\" {}",
        "provider_meta \"aws\" {\n    module_name = \"lang\"\n  }",
    );
    std::fs::write(root.join("main.tf"), main).unwrap();
    let refused = |out: &std::process::Output| {
        let t = text(out);
        assert_eq!(out.status.code(), Some(1), "{t}");
        let lines: Vec<&str> = t.lines().map(str::trim).collect();
        let mut errors: Vec<(String, String)> = lines
            .windows(3)
            .filter_map(|w| Some((w[0].strip_prefix("Error: ")?.to_string(), w[2].to_string())))
            .collect();
        errors.dedup();
        errors
    };
    let theirs = refused(&w.run(&tf, &["plan", "-input=false", "-no-color"]));
    let unsupported = (
        "Unsupported argument".to_string(),
        "on main.tf line 12, in terraform:".to_string(),
    );
    assert_eq!(theirs, [unsupported]);
    assert_eq!(refused(&w.engine(&["plan"])), theirs);
}
