//! Stock terraform, run in a private working copy of the estate root.
//!
//! Each twin gets its own copy of the root plus the generated provider
//! override, a CLI config that installs the aws provider from the mirror, and
//! an environment with nothing of the developer's in it (no ~/.aws, no
//! AWS_* variables). Plans are kept twice: as `terraform show -json` for
//! structured comparison and as text for the page. The text is the plan's
//! own output less its progress lines and its saved-plan footer, which is
//! byte for byte what `terraform show` of the file prints, without starting
//! terraform and the provider a third time.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use engine::addr::ResourceInstanceAddr;
use serde_json::Value;

use crate::clock::{Category, Clock};
use crate::estate::Estate;
use crate::machine::Terraform;
use crate::process;
use crate::substrate::{Side, ENDPOINT_VAR};

/// A terraform command that failed, or a root terraform rejects.
#[derive(Debug, thiserror::Error)]
pub enum OracleError {
    #[error("stock terraform rejected the root on the {side}: `terraform {command}` exited {code}:\n{stderr}")]
    Rejected {
        side: Side,
        command: String,
        code: String,
        stderr: String,
    },
    #[error("`terraform {command}` on the {side} printed what the gauntlet cannot read: {reason}")]
    Unreadable {
        side: Side,
        command: String,
        reason: String,
    },
    #[error(transparent)]
    Process(#[from] process::ProcessError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A plan as terraform showed it.
#[derive(Debug, Clone)]
pub struct Plan {
    /// `terraform show -json` of the plan file.
    pub json: Value,
    /// The human rendering, as `terraform show` of the file prints it.
    pub text: String,
}

impl Plan {
    /// The addresses and actions of every resource change, such as
    /// `("aws_sqs_queue.jobs", ["create"])`.
    pub fn changes(&self) -> Vec<(String, Vec<String>)> {
        self.json["resource_changes"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|c| {
                        let actions = c["change"]["actions"]
                            .as_array()
                            .map(|v| {
                                v.iter()
                                    .filter_map(|x| x.as_str().map(str::to_owned))
                                    .collect()
                            })
                            .unwrap_or_default();
                        (c["address"].as_str().unwrap_or("").to_owned(), actions)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Counts of (add, change, destroy) as terraform's summary line counts them.
    pub fn summary(&self) -> (usize, usize, usize) {
        let mut s = (0, 0, 0);
        for (_, actions) in self.changes() {
            for a in actions {
                match a.as_str() {
                    "create" => s.0 += 1,
                    "update" => s.1 += 1,
                    "delete" => s.2 += 1,
                    _ => {}
                }
            }
        }
        s
    }

    /// The changes that do something, as the engine's plan names them.
    pub fn actions(&self) -> Vec<(String, crate::choudoufu::Action)> {
        self.changes()
            .into_iter()
            .filter_map(|(addr, a)| Some((addr, crate::choudoufu::Action::of_json(&a)?)))
            .collect()
    }

    /// terraform's own summary line, read from the text rendering.
    pub fn summary_line(&self) -> String {
        self.text
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with("Plan:") || l.starts_with("No changes."))
            .unwrap_or("")
            .to_owned()
    }
}

/// One resource instance in a terraform state.
#[derive(Debug, Clone)]
pub struct StateInstance {
    pub addr: ResourceInstanceAddr,
    pub type_name: String,
    pub values: Value,
    /// The resources it depends on, as the state records them (every one
    /// on the way, not only the nearest), `aws_eip.nat` with no key.
    pub dependencies: Vec<String>,
}

/// Stock terraform in one twin's working copy.
pub struct Oracle {
    pub side: Side,
    pub dir: PathBuf,
    terraform: Terraform,
    cli_config: PathBuf,
    home: PathBuf,
    /// The twin's emulator, every service's endpoint.
    endpoint: String,
    tree: Option<PathBuf>,
}

/// Whether a file of a root's own folder is one terraform reads: `.tf`,
/// `.tf.json`, `*.auto.tfvars(.json)`, `terraform.tfvars(.json)` and the
/// dependency lock file.
pub fn is_root_file(p: &Path) -> bool {
    let n = p.file_name().unwrap_or_default().to_string_lossy();
    n.ends_with(".tf")
        || n.ends_with(".tf.json")
        || n.ends_with(".tfvars")
        || n.ends_with(".tfvars.json")
        || n == ".terraform.lock.hcl"
}

impl Oracle {
    /// Make a fresh working copy of the estate's root under
    /// `work/<side>/root` (with its local modules: `work/<side>/tree`, the
    /// root in its place there) with the gauntlet's provider settings
    /// beside it, terraform's endpoint set to `endpoint`.
    pub fn prepare(
        side: Side,
        work: &Path,
        estate: &Estate,
        endpoint: &str,
        terraform: &Terraform,
        cli_config: &Path,
    ) -> Result<Oracle, OracleError> {
        let base = work.join(side.name());
        let home = base.join("home");
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| OracleError::Io { path, source }
        };
        if base.exists() {
            fs::remove_dir_all(&base).map_err(io(&base))?;
        }
        fs::create_dir_all(&home).map_err(io(&home))?;
        let dir = match &estate.modules {
            Some(t) => {
                let top = base.join("tree");
                // The modules' folders whole; the root's own folder keeps
                // only what terraform reads, as a clone would hold it.
                let root = t.top.join(&t.root);
                let keep = |p: &Path| p.parent() != Some(root.as_path()) || is_root_file(p);
                crate::tree::copy(&t.top, &top, &keep).map_err(io(&t.top))?;
                top.join(&t.root)
            }
            None => {
                let dir = base.join("root");
                fs::create_dir_all(&dir).map_err(io(&dir))?;
                for f in &estate.root_files {
                    let to = dir.join(f.file_name().unwrap_or_default());
                    fs::copy(f, &to).map_err(io(f))?;
                }
                dir
            }
        };
        for (name, text) in &estate.extra_files {
            let o = dir.join(name);
            fs::write(&o, text).map_err(io(&o))?;
        }
        Ok(Oracle {
            side,
            dir,
            terraform: terraform.clone(),
            cli_config: cli_config.to_owned(),
            home,
            endpoint: endpoint.to_owned(),
            tree: estate.modules.as_ref().map(|_| base.join("tree")),
        })
    }

    /// The top of the working copy's module tree, when the root has local
    /// modules.
    pub fn tree(&self) -> Option<&Path> {
        self.tree.as_deref()
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.terraform.path);
        cmd.args(args)
            .current_dir(&self.dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env(ENDPOINT_VAR, &self.endpoint)
            .env("TF_CLI_CONFIG_FILE", &self.cli_config)
            .env("TF_IN_AUTOMATION", "1")
            .env("TF_INPUT", "0")
            .env("CHECKPOINT_DISABLE", "1")
            .env("AWS_CONFIG_FILE", "/dev/null")
            .env("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
            .envs(crate::machine::registry_tokens());
        cmd
    }

    /// Run `terraform <args>` and return stdout, or the rejection.
    pub fn run(&self, clock: &Clock, args: &[&str]) -> Result<String, OracleError> {
        let label = format!("terraform {} on the {}", args[0], self.side);
        let out = process::run(clock, Category::Terraform, &label, self.command(args))?;
        if !out.status.success() {
            return Err(OracleError::Rejected {
                side: self.side,
                command: args.join(" "),
                code: out
                    .status
                    .code()
                    .map_or_else(|| out.status.to_string(), |c| c.to_string()),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    pub fn init(&self, clock: &Clock) -> Result<(), OracleError> {
        self.run(clock, &["init", "-no-color", "-input=false"])?;
        Ok(())
    }

    /// `terraform plan -out` (with `extra` flags), shown as JSON and text.
    pub fn plan(&self, clock: &Clock, name: &str, extra: &[&str]) -> Result<Plan, OracleError> {
        let out = format!("-out={name}");
        let mut args = vec!["plan", "-no-color", "-input=false", &out];
        args.extend_from_slice(extra);
        let printed = self.run(clock, &args)?;
        let text = plan_body(&printed).ok_or_else(|| OracleError::Unreadable {
            side: self.side,
            command: args.join(" "),
            reason: "no plan after the progress lines".into(),
        })?;
        let json_text = self.run(clock, &["show", "-json", "-no-color", name])?;
        let json = serde_json::from_str(&json_text).map_err(|e| OracleError::Unreadable {
            side: self.side,
            command: format!("show -json {name}"),
            reason: e.to_string(),
        })?;
        Ok(Plan { json, text })
    }

    /// `terraform apply` of a saved plan file.
    pub fn apply(&self, clock: &Clock, name: &str) -> Result<String, OracleError> {
        self.run(clock, &["apply", "-no-color", "-input=false", name])
    }

    /// Every managed resource instance in the twin's `terraform.tfstate`,
    /// read from the file itself: no state file means no instances.
    pub fn state(&self) -> Result<Vec<StateInstance>, OracleError> {
        let path = self.state_file();
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => return Err(OracleError::Io { path, source }),
        };
        let unreadable = |reason: String| OracleError::Unreadable {
            side: self.side,
            command: format!("cat {}", path.display()),
            reason,
        };
        let v: Value = serde_json::from_str(&text).map_err(|e| unreadable(e.to_string()))?;
        state_instances(&v).map_err(unreadable)
    }

    /// The CLI config terraform runs with, which the engine reads too.
    pub fn cli_config(&self) -> &Path {
        &self.cli_config
    }

    /// The state file terraform wrote, if any.
    pub fn state_file(&self) -> PathBuf {
        self.dir.join("terraform.tfstate")
    }
}

/// What `terraform plan -out` printed, less what `terraform show` of the
/// file leaves out: the progress lines before the first blank line
/// (`X: Refreshing state...`, `X: Reading...`) and, after a plan with
/// changes, the rule and the `Saved the plan to:` footer below it.
fn plan_body(printed: &str) -> Option<String> {
    let start = if printed.starts_with('\n') {
        0
    } else {
        printed.find("\n\n")? + 1
    };
    let body = &printed[start..];
    // The footer is the rule right above `Saved the plan to:`; a note on
    // changes made outside terraform has a rule of its own, which stays.
    let end = match body.find("\n\nSaved the plan to: ") {
        Some(saved) => {
            let rule = body[..saved].rfind('\n')?;
            let line = &body[rule + 1..saved];
            (!line.is_empty() && line.chars().all(|c| c == '\u{2500}')).then_some(rule)?
        }
        None => body.len(),
    };
    Some(body[..end].to_owned())
}

/// The managed instances of a version 4 state file.
fn state_instances(state: &Value) -> Result<Vec<StateInstance>, String> {
    if state["version"] != 4 {
        return Err(format!(
            "state format version {} (expected 4)",
            state["version"]
        ));
    }
    let mut out = Vec::new();
    for r in state["resources"].as_array().into_iter().flatten() {
        if r["mode"] != "managed" {
            continue;
        }
        let module = r["module"]
            .as_str()
            .map(|m| format!("{m}."))
            .unwrap_or_default();
        let (Some(t), Some(n)) = (r["type"].as_str(), r["name"].as_str()) else {
            return Err("a resource without a type or name".into());
        };
        for i in r["instances"].as_array().into_iter().flatten() {
            let key = match &i["index_key"] {
                Value::Null => String::new(),
                k => format!("[{k}]"),
            };
            let addr: ResourceInstanceAddr = format!("{module}{t}.{n}{key}")
                .parse()
                .map_err(|e| format!("{e}"))?;
            out.push(StateInstance {
                type_name: t.to_owned(),
                addr,
                values: i["attributes"].clone(),
                dependencies: i["dependencies"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|d| d.as_str().map(str::to_owned))
                    .collect(),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_changes_and_summary_from_show_json() {
        let plan = Plan {
            json: serde_json::json!({"resource_changes": [
                {"address": "aws_sqs_queue.a", "change": {"actions": ["create"]}},
                {"address": "aws_sqs_queue.b", "change": {"actions": ["delete", "create"]}},
                {"address": "aws_sqs_queue.c", "change": {"actions": ["update"]}},
                {"address": "aws_sqs_queue.d", "change": {"actions": ["no-op"]}},
            ]}),
            text: "\nTerraform will perform...\n\nPlan: 2 to add, 1 to change, 1 to destroy.\n"
                .into(),
        };
        assert_eq!(plan.summary(), (2, 1, 1));
        assert_eq!(
            plan.summary_line(),
            "Plan: 2 to add, 1 to change, 1 to destroy."
        );
        assert_eq!(plan.changes()[1].1, ["delete", "create"]);
    }

    /// As terraform 1.11.4 printed them for a root whose objects were
    /// deleted out of band (shortened in the middle).
    #[test]
    fn the_plan_text_is_what_show_prints_of_the_file() {
        let body = format!("\nNote: Objects have changed outside of Terraform\n\n  # aws_dynamodb_table.state has been deleted\n  - resource \"aws_dynamodb_table\" \"state\" {{\n    }}\n\nUnless you have made equivalent changes to your configuration, or ignored the\nrelevant attributes using ignore_changes, the following plan may include\nactions to undo or respond to these changes.\n\n{}\n\nTerraform will perform the following actions:\n\nPlan: 17 to add, 0 to change, 0 to destroy.\n", "\u{2500}".repeat(77));
        let printed = format!(
            "aws_ssm_parameter.shard[0]: Refreshing state... [id=/refaws/shard/0]\naws_sqs_queue.jobs: Refreshing state... [id=http://127.0.0.1:46027/123456789012/refaws-jobs]\n{body}\n{}\n\nSaved the plan to: s1.tfplan\n\nTo perform exactly these actions, run the following command to apply:\n    terraform apply \"s1.tfplan\"\n",
            "\u{2500}".repeat(77)
        );
        assert_eq!(plan_body(&printed).unwrap(), body);

        // No changes: no rule and no footer; nothing in state: no progress.
        let empty = "\nNo changes. Your infrastructure matches the configuration.\n\nTerraform has compared your real infrastructure against your configuration\nand found no differences, so no changes are needed.\n";
        let printed =
            format!("aws_iam_role.worker: Refreshing state... [id=refaws-worker]\n{empty}");
        assert_eq!(plan_body(&printed).unwrap(), empty);
        assert_eq!(plan_body(empty).unwrap(), empty);
        assert_eq!(plan_body("a: Refreshing state... [id=a]\n"), None);
    }

    #[test]
    fn reads_instances_from_a_state_file_and_skips_data() {
        let v = serde_json::json!({
            "version": 4,
            "resources": [
                {"mode": "managed", "type": "aws_sqs_queue", "name": "q",
                 "instances": [{"index_key": 0, "attributes": {"name": "q0"}},
                               {"index_key": 1, "attributes": {"name": "q1"}}]},
                {"mode": "data", "type": "aws_iam_policy_document", "name": "p",
                 "instances": [{"attributes": {}}]},
                {"module": "module.m[\"a\"]", "mode": "managed", "type": "aws_sns_topic",
                 "name": "t", "instances": [{"attributes": {"name": "t"}}]},
            ]
        });
        let out = state_instances(&v).unwrap();
        let addrs: Vec<String> = out.iter().map(|i| i.addr.to_string()).collect();
        assert_eq!(
            addrs,
            [
                "aws_sqs_queue.q[0]",
                "aws_sqs_queue.q[1]",
                "module.m[\"a\"].aws_sns_topic.t"
            ]
        );
        assert_eq!(out[1].values["name"], "q1");
        assert!(state_instances(&serde_json::json!({"version": 3})).is_err());
    }
}
