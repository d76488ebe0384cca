//! The engine under test, run as a user runs it: the `choudoufu` binary in
//! a root directory, its output read as text.
//!
//! The gauntlet never links the engine's planner; it runs the binary built
//! from this workspace (`CHOUDOUFU`, else the `choudoufu` beside the running
//! `gauntlet`) with a cleared environment, like stock terraform, and reads
//! terraform's own wording back: the plan's `# <address> will be ...` lines
//! and summary, and the closing line of an apply, a destroy or a migrate.
//! What the engine did to the live system is the witness's to say, never
//! this module's.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::clock::{Category, Clock};
use crate::process;

/// The engine could not be found or run, or printed what cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("the choudoufu binary was not found: {looked}. Build it with `cargo build -p engine --bin choudoufu` (beside the gauntlet, in the same target dir), or set CHOUDOUFU to its path")]
    NotFound { looked: String },
    #[error("{path} did not answer `choudoufu version -json`: {reason}")]
    BadBinary { path: PathBuf, reason: String },
    #[error("`choudoufu {command}` exited {code}:\n{output}")]
    Failed {
        command: String,
        code: String,
        output: String,
    },
    #[error("`choudoufu {command}` printed what the gauntlet cannot read: {reason}\n{output}")]
    Unreadable {
        command: String,
        reason: String,
        output: String,
    },
    #[error(transparent)]
    Process(#[from] process::ProcessError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The engine binary and the version it reports.
#[derive(Debug, Clone)]
pub struct Choudoufu {
    pub path: PathBuf,
    pub version: String,
}

impl Choudoufu {
    /// `CHOUDOUFU` when set, else `choudoufu` beside the running binary.
    pub fn find(clock: &Clock) -> Result<Choudoufu, EngineError> {
        let (path, looked) = match std::env::var_os("CHOUDOUFU") {
            Some(p) => {
                let p = PathBuf::from(p);
                let looked = format!("CHOUDOUFU={} is not a file", p.display());
                (p, looked)
            }
            None => {
                let exe = std::env::current_exe().map_err(|source| EngineError::Io {
                    path: PathBuf::from("/proc/self/exe"),
                    source,
                })?;
                let p = exe.with_file_name("choudoufu");
                let looked = format!("CHOUDOUFU is not set and {} does not exist", p.display());
                (p, looked)
            }
        };
        if !path.is_file() {
            return Err(EngineError::NotFound { looked });
        }
        let mut cmd = Command::new(&path);
        cmd.args(["version", "-json"]).env_clear();
        let out = process::run(clock, Category::Engine, "choudoufu version", cmd)?;
        let bad = |reason: String| EngineError::BadBinary {
            path: path.clone(),
            reason,
        };
        if !out.status.success() {
            return Err(bad(String::from_utf8_lossy(&out.stderr).trim().to_owned()));
        }
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).map_err(|e| bad(e.to_string()))?;
        let version = v["choudoufu_version"]
            .as_str()
            .ok_or_else(|| bad("no choudoufu_version".into()))?
            .to_owned();
        Ok(Choudoufu { path, version })
    }
}

/// One action of a plan, in terraform's JSON words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    Create,
    Update,
    Delete,
    Replace,
}

impl Action {
    pub fn word(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::Delete => "delete",
            Action::Replace => "replace",
        }
    }

    /// The action of a `show -json` change's `actions` list; `None` for
    /// no-op and read.
    pub fn of_json(actions: &[String]) -> Option<Action> {
        match actions.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            ["create"] => Some(Action::Create),
            ["update"] => Some(Action::Update),
            ["delete"] => Some(Action::Delete),
            ["delete", "create"] | ["create", "delete"] => Some(Action::Replace),
            _ => None,
        }
    }
}

/// A plan as the engine printed it.
#[derive(Debug, Clone)]
pub struct EnginePlan {
    /// The exit code under `-detailed-exitcode`: 0 empty, 2 with changes.
    pub code: i32,
    pub text: String,
    /// Each `# <address> will be ...` line, in the order printed.
    pub changes: Vec<(String, Action)>,
}

impl EnginePlan {
    /// Read the resource changes out of terraform's plan text.
    pub fn parse(code: i32, text: &str) -> EnginePlan {
        let mut changes = Vec::new();
        for line in text.lines() {
            let Some(rest) = line.trim_start().strip_prefix("# ") else {
                continue;
            };
            let Some((addr, what)) = rest.split_once(' ') else {
                continue;
            };
            let action = if what.starts_with("will be created") {
                Action::Create
            } else if what.starts_with("will be updated in-place") {
                Action::Update
            } else if what.starts_with("will be destroyed") {
                Action::Delete
            } else if what.starts_with("must be replaced") {
                Action::Replace
            } else {
                continue;
            };
            changes.push((addr.to_owned(), action));
        }
        EnginePlan {
            code,
            text: text.to_owned(),
            changes,
        }
    }

    /// terraform's summary line, or the "No changes." line; for a plan
    /// that changes only outputs (terraform prints no summary then),
    /// [`OUTPUTS_ONLY`].
    pub fn summary_line(&self) -> String {
        let line = self
            .text
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with("Plan:") || l.starts_with("No changes."));
        match line {
            Some(l) => l.to_owned(),
            None if self.changes.is_empty() && self.text.contains("\nChanges to Outputs:") => {
                OUTPUTS_ONLY.to_owned()
            }
            None => String::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.code == 0 && self.changes.is_empty() && self.summary_line().starts_with("No changes.")
    }

    /// `aws_ssm_parameter.shard[1] (delete), ...` for the page.
    pub fn describe(&self) -> String {
        if self.changes.is_empty() {
            return "no resource changes".into();
        }
        self.changes
            .iter()
            .map(|(a, x)| format!("{a} ({})", x.word()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The summary of a plan whose only changes are to outputs.
pub const OUTPUTS_ONLY: &str = "Changes to Outputs only, no resource changes.";

/// `Apply complete! Resources: 1 added, 0 changed, 0 destroyed.` as numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Applied {
    pub added: usize,
    pub changed: usize,
    pub destroyed: usize,
}

impl std::fmt::Display for Applied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} added, {} changed, {} destroyed",
            self.added, self.changed, self.destroyed
        )
    }
}

/// The numbers after a word such as `added` in a closing line.
fn count_before(line: &str, word: &str) -> Option<usize> {
    let words: Vec<&str> = line.split_whitespace().collect();
    words.windows(2).find_map(|w| {
        (w[1].trim_end_matches(['.', ',']) == word)
            .then(|| w[0].parse().ok())
            .flatten()
    })
}

impl Applied {
    pub fn parse(text: &str) -> Option<Applied> {
        let line = text.lines().map(str::trim).find(|l| {
            l.starts_with("Apply complete! Resources:")
                || l.starts_with("Destroy complete! Resources:")
        })?;
        if line.starts_with("Destroy") {
            return Some(Applied {
                destroyed: count_before(line, "destroyed")?,
                ..Applied::default()
            });
        }
        Some(Applied {
            added: count_before(line, "added")?,
            changed: count_before(line, "changed")?,
            destroyed: count_before(line, "destroyed")?,
        })
    }
}

/// `Migrate complete! ...` as numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Migrated {
    pub stamped: usize,
    pub already: usize,
    pub recorded: usize,
    pub failed: usize,
    pub skipped: usize,
}

impl Migrated {
    pub fn parse(text: &str) -> Option<Migrated> {
        let line = text
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with("Migrate complete!"))?;
        let n = |after: &str| {
            let i = line.find(after)?;
            line[..i].split_whitespace().last()?.parse().ok()
        };
        Some(Migrated {
            stamped: n(" newly stamped")?,
            already: n(" already stamped")?,
            recorded: n(" recorded")?,
            failed: n(" failed")?,
            skipped: n(" skipped")?,
        })
    }

    /// Every instance accounted for, one way or another.
    pub fn total(&self) -> usize {
        self.stamped + self.already + self.recorded + self.failed + self.skipped
    }
}

impl std::fmt::Display for Migrated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} newly stamped, {} already stamped, {} recorded, {} failed, {} skipped",
            self.stamped, self.already, self.recorded, self.failed, self.skipped
        )
    }
}

/// What one engine command printed.
#[derive(Debug, Clone)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// The engine in one root directory, with a cleared environment.
#[derive(Debug, Clone)]
pub struct EngineRoot {
    pub bin: Choudoufu,
    pub dir: PathBuf,
    home: PathBuf,
    cli_config: PathBuf,
    cache: PathBuf,
    /// The twin's emulator, every service's endpoint.
    endpoint: String,
    /// The top of the module tree `dir` sits in, when the root calls local
    /// modules outside its folder.
    tree: Option<PathBuf>,
}

impl EngineRoot {
    /// The engine in `dir`, finding the provider through `cli_config` as
    /// terraform does, caching schemas under `cache`.
    pub fn new(
        bin: &Choudoufu,
        dir: &Path,
        home: &Path,
        cli_config: &Path,
        cache: &Path,
        endpoint: &str,
    ) -> Result<EngineRoot, EngineError> {
        for d in [home, cache] {
            fs::create_dir_all(d).map_err(|source| EngineError::Io {
                path: d.to_owned(),
                source,
            })?;
        }
        Ok(EngineRoot {
            bin: bin.clone(),
            dir: dir.to_owned(),
            home: home.to_owned(),
            cli_config: cli_config.to_owned(),
            cache: cache.to_owned(),
            endpoint: endpoint.to_owned(),
            tree: None,
        })
    }

    /// A folder beside this root's working copy (beside its module tree,
    /// when it sits in one), for another copy of it.
    pub fn beside_path(&self, name: &str) -> PathBuf {
        self.tree.as_ref().unwrap_or(&self.dir).with_file_name(name)
    }

    /// This root, sitting at its place in the module tree under `top`.
    pub fn in_tree(mut self, top: Option<&Path>) -> EngineRoot {
        self.tree = top.map(Path::to_owned);
        self
    }

    /// A fresh copy of this root under `base`, as a new clone of its
    /// repository would be once `choudoufu init` ran in it: the `.tf`,
    /// `.tf.json` and `live.hcl` files and the dependency lock file only
    /// (no local record store, no state file), in `base/root`, with an empty home
    /// and schema cache beside it.
    pub fn fresh_copy(&self, clock: &Clock, base: &Path) -> Result<EngineRoot, EngineError> {
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| EngineError::Io { path, source }
        };
        if base.exists() {
            fs::remove_dir_all(base).map_err(io(base))?;
        }
        let own = |path: &Path| {
            crate::oracle::is_root_file(path) || path.file_name().is_some_and(|n| n == "live.hcl")
        };
        // The root's folder as a clone holds it; the modules' folders whole.
        let (dir, tree) = match &self.tree {
            Some(top) => {
                let rel = self.dir.strip_prefix(top).unwrap_or(Path::new(""));
                let keep = |p: &Path| p.parent() != Some(self.dir.as_path()) || own(p);
                crate::tree::copy(top, &base.join("tree"), &keep).map_err(io(top))?;
                (base.join("tree").join(rel), Some(base.join("tree")))
            }
            None => {
                let dir = base.join("root");
                fs::create_dir_all(&dir).map_err(io(&dir))?;
                for entry in fs::read_dir(&self.dir).map_err(io(&self.dir))? {
                    let path = entry.map_err(io(&self.dir))?.path();
                    if path.is_file() && own(&path) {
                        let to = dir.join(path.file_name().unwrap_or_default());
                        fs::copy(&path, &to).map_err(io(&path))?;
                    }
                }
                (dir, None)
            }
        };
        let fresh = EngineRoot::new(
            &self.bin,
            &dir,
            &base.join("home"),
            &self.cli_config,
            &base.join("cache"),
            &self.endpoint,
        )?
        .in_tree(tree.as_deref());
        fresh.init(clock)?;
        Ok(fresh)
    }

    /// Another root on this root's twin: the `.tf` files and `live.hcl` of
    /// `source`, copied into a folder `name` beside this root with this
    /// root's provider override, its own home, and this root's schema
    /// cache, initialised by `choudoufu init`.
    pub fn beside(
        &self,
        clock: &Clock,
        name: &str,
        source: &Path,
    ) -> Result<EngineRoot, EngineError> {
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| EngineError::Io { path, source }
        };
        let base = self.beside_path(name);
        if base.exists() {
            fs::remove_dir_all(&base).map_err(io(&base))?;
        }
        let dir = base.join("root");
        fs::create_dir_all(&dir).map_err(io(&dir))?;
        let copy = |from: &Path, name: &str| {
            let to = dir.join(name);
            fs::copy(from, &to).map(drop).map_err(io(from))
        };
        for entry in fs::read_dir(source).map_err(io(source))? {
            let path = entry.map_err(io(source))?.path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let keep = name.ends_with(".tf") || name.ends_with(".tf.json") || name == "live.hcl";
            if path.is_file() && keep {
                copy(&path, &name)?;
            }
        }
        for entry in fs::read_dir(&self.dir).map_err(io(&self.dir))? {
            let path = entry.map_err(io(&self.dir))?.path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if name.ends_with("_override.tf") {
                copy(&path, &name)?;
            }
        }
        let beside = EngineRoot::new(
            &self.bin,
            &dir,
            &base.join("home"),
            &self.cli_config,
            &self.cache,
            &self.endpoint,
        )?;
        beside.init(clock)?;
        Ok(beside)
    }

    /// `choudoufu init -input=false`: the providers the lock file selects
    /// (or the constraints allow, writing one) installed in this root.
    pub fn init(&self, clock: &Clock) -> Result<(), EngineError> {
        let args = ["init", "-input=false", "-no-color"];
        let out = self.run(clock, &args)?;
        if out.code != 0 {
            return Err(Self::failed(&args, &out));
        }
        Ok(())
    }

    /// `choudoufu <args>`, whatever its exit code.
    pub fn run(&self, clock: &Clock, args: &[&str]) -> Result<Output, EngineError> {
        self.run_env(clock, args, &[])
    }

    /// `choudoufu <args>` with `env` set beside the cleared environment.
    pub fn run_env(
        &self,
        clock: &Clock,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<Output, EngineError> {
        let cmd = self.command(args, env);
        let label = format!("choudoufu {}", args.first().unwrap_or(&""));
        let out = process::run(clock, Category::Engine, &label, cmd)?;
        Ok(Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    /// The command `choudoufu <args>` in this root, with `env` set beside
    /// the cleared environment, to run or to start.
    pub fn command(&self, args: &[&str], env: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new(&self.bin.path);
        cmd.args(args)
            .current_dir(&self.dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env(crate::substrate::ENDPOINT_VAR, &self.endpoint)
            .env("TF_CLI_CONFIG_FILE", &self.cli_config)
            .env("CHOUDOUFU_CACHE_DIR", &self.cache)
            .env("AWS_CONFIG_FILE", "/dev/null")
            .env("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
            .envs(crate::machine::registry_tokens())
            .envs(env.iter().copied());
        cmd
    }

    fn failed(args: &[&str], out: &Output) -> EngineError {
        EngineError::Failed {
            command: args.join(" "),
            code: out.code.to_string(),
            output: format!("{}{}", out.stdout, out.stderr).trim().to_owned(),
        }
    }

    /// `choudoufu migrate -state <state>`: the counts, and the exit code
    /// (1 when any instance failed, which is the stage's to judge).
    pub fn migrate(&self, clock: &Clock, state: &Path) -> Result<(Migrated, Output), EngineError> {
        let state = state.display().to_string();
        let args = ["migrate", "-state", &state, "-no-color"];
        let out = self.run(clock, &args)?;
        match Migrated::parse(&out.stdout) {
            Some(m) => Ok((m, out)),
            None => Err(Self::failed(&args, &out)),
        }
    }

    /// `choudoufu plan -detailed-exitcode` with `extra` flags.
    pub fn plan(&self, clock: &Clock, extra: &[&str]) -> Result<EnginePlan, EngineError> {
        let mut args = vec!["plan", "-detailed-exitcode", "-no-color"];
        args.extend_from_slice(extra);
        let out = self.run(clock, &args)?;
        if out.code != 0 && out.code != 2 {
            return Err(Self::failed(&args, &out));
        }
        let plan = EnginePlan::parse(out.code, &out.stdout);
        if plan.summary_line().is_empty() {
            return Err(EngineError::Unreadable {
                command: args.join(" "),
                reason: "no `Plan:` or `No changes.` line".into(),
                output: out.stdout,
            });
        }
        Ok(plan)
    }

    /// `choudoufu plan -detailed-exitcode` with `extra` flags, or, when it
    /// refused to plan (exit 1), everything it printed: a refusal is the
    /// stage's to judge.
    pub fn plan_or_refusal(
        &self,
        clock: &Clock,
        extra: &[&str],
    ) -> Result<Result<EnginePlan, String>, EngineError> {
        match self.plan(clock, extra) {
            Ok(plan) => Ok(Ok(plan)),
            Err(EngineError::Failed { code, output, .. }) if code == "1" => Ok(Err(output)),
            Err(e) => Err(e),
        }
    }

    /// `choudoufu apply FILE`: a saved plan applied, whatever its exit code
    /// (3 when the live system moved since the plan, which is the stage's to
    /// judge), and what it applied when it did.
    pub fn apply_saved(
        &self,
        clock: &Clock,
        file: &str,
    ) -> Result<(Option<Applied>, Output), EngineError> {
        let out = self.run(clock, &["apply", "-no-color", file])?;
        Ok((Applied::parse(&out.stdout), out))
    }

    /// `choudoufu apply -auto-approve` (or `destroy`): what it applied.
    pub fn apply(&self, clock: &Clock, destroy: bool) -> Result<(Applied, Output), EngineError> {
        let verb = if destroy { "destroy" } else { "apply" };
        let args = [verb, "-auto-approve", "-no-color"];
        let out = self.run(clock, &args)?;
        if out.code != 0 {
            return Err(Self::failed(&args, &out));
        }
        match Applied::parse(&out.stdout) {
            Some(a) => Ok((a, out)),
            None => Err(EngineError::Unreadable {
                command: args.join(" "),
                reason: "no `Apply complete!` or `Destroy complete!` line".into(),
                output: out.stdout,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_changing_only_outputs_reads_as_such() {
        let text = "\nChanges to Outputs:\n  + vpc_id = \"vpc-1\"\n\nYou can apply this plan to save these new output values to the Terraform\nstate, without changing any real infrastructure.\n";
        let plan = EnginePlan::parse(2, text);
        assert_eq!(plan.summary_line(), OUTPUTS_ONLY);
        assert!(plan.changes.is_empty() && !plan.is_empty());
        assert_eq!(EnginePlan::parse(2, "nothing readable").summary_line(), "");
    }

    #[test]
    fn reads_a_plan_as_terraform_prints_it() {
        let text = "\nTerraform will perform the following actions:\n\n  # aws_ssm_parameter.shard[1] will be destroyed\n  # (because index [1] is out of range for count)\n  - resource \"aws_ssm_parameter\" \"shard\" {\n    }\n\n  # aws_sqs_queue.q will be updated in-place\n  # aws_s3_bucket.b must be replaced\n  # aws_sns_topic.t will be created\n\nPlan: 2 to add, 1 to change, 2 to destroy.\n";
        let p = EnginePlan::parse(2, text);
        assert_eq!(
            p.changes,
            [
                ("aws_ssm_parameter.shard[1]".to_owned(), Action::Delete),
                ("aws_sqs_queue.q".to_owned(), Action::Update),
                ("aws_s3_bucket.b".to_owned(), Action::Replace),
                ("aws_sns_topic.t".to_owned(), Action::Create),
            ]
        );
        assert_eq!(
            p.summary_line(),
            "Plan: 2 to add, 1 to change, 2 to destroy."
        );
        assert!(!p.is_empty());
        let empty = EnginePlan::parse(
            0,
            "\nNo changes. Your infrastructure matches the configuration.\n",
        );
        assert!(empty.is_empty());
        assert_eq!(
            Action::of_json(&["delete".into(), "create".into()]),
            Some(Action::Replace)
        );
        assert_eq!(Action::of_json(&["no-op".into()]), None);
    }

    #[test]
    fn reads_closing_lines() {
        assert_eq!(
            Applied::parse("x\nApply complete! Resources: 1 added, 2 changed, 3 destroyed.\n"),
            Some(Applied {
                added: 1,
                changed: 2,
                destroyed: 3
            })
        );
        assert_eq!(
            Applied::parse("Destroy complete! Resources: 16 destroyed.").map(|a| a.destroyed),
            Some(16)
        );
        assert_eq!(Applied::parse("Error"), None);
        let m = Migrated::parse("Migrate complete! 10 newly stamped, 0 already stamped, 6 recorded, 1 failed, 2 skipped.").unwrap();
        assert_eq!(
            (m.stamped, m.already, m.recorded, m.failed, m.skipped),
            (10, 0, 6, 1, 2)
        );
        assert_eq!(m.total(), 19);
    }
}
