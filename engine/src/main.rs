//! The `choudoufu` command line: terraform's verbs over a stateless engine.

mod cli;

use clap::{Parser, Subcommand};
use cli::console::console;
use cli::init::run_init;
use cli::migrate::run_migrate;
use cli::output::output;
use cli::plan::{run_plan, Mode};
use cli::providers::{providers_identity, providers_schema};
use cli::unlock::force_unlock;
use cli::validate::validate;
use std::io::Write;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "choudoufu",
    about = "A Terraform-compatible engine that keeps no state file"
)]
struct Cli {
    /// Switch to a different working directory before running the command
    /// (`-chdir=DIR`, before the command's name, as terraform takes it).
    #[arg(long, value_name = "DIR")]
    chdir: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show the engine version.
    Version {
        /// Print the version as JSON, as `terraform version -json` does.
        #[arg(long)]
        json: bool,
    },
    /// Prepare the working directory as `terraform init` does: check the
    /// estate's settings, install the providers the configuration requires
    /// into .terraform/providers and write the dependency lock file.
    Init {
        /// Choose the newest versions the constraints allow, whatever the
        /// lock file selected.
        #[arg(long)]
        upgrade: bool,
        /// Install providers only from this directory (repeatable).
        #[arg(long = "plugin-dir", value_name = "DIR")]
        plugin_dirs: Vec<std::path::PathBuf>,
        /// `-lockfile=readonly`: check the lock file, never change it.
        #[arg(long, value_name = "MODE", require_equals = true)]
        lockfile: Option<String>,
        /// Print without colour.
        #[arg(long = "no-color")]
        no_color: bool,
        /// Ask for no input (accepted for terraform compatibility: init
        /// never prompts).
        #[arg(long, default_value = "true", num_args = 0..=1, default_missing_value = "true", require_equals = true)]
        input: String,
    },
    /// Evaluate expressions read from stdin, one per line, and print each
    /// result as `terraform console` prints it. Unlike terraform's piped
    /// mode, which prints only the last result and stops at the first
    /// error, every line gets its answer.
    Console {
        /// Print errors without colour or box drawing.
        #[arg(long = "no-color")]
        no_color: bool,
    },
    /// Check the configuration in the working directory (or -chdir) the
    /// way `terraform validate` does, without touching any live object.
    Validate {
        /// Print the result in terraform's JSON format.
        #[arg(long)]
        json: bool,
        /// Print without colour or box drawing.
        #[arg(long = "no-color")]
        no_color: bool,
    },
    /// Show what applying the configuration would change, reading the live
    /// system as the prior state.
    Plan {
        #[command(flatten)]
        args: PlanArgs,
        /// Exit 0 with no changes, 1 on error, 2 with changes.
        #[arg(long = "detailed-exitcode")]
        detailed_exitcode: bool,
        /// Save the plan, with a fingerprint of every live object it read,
        /// for `apply FILE`.
        #[arg(long, value_name = "FILE")]
        out: Option<std::path::PathBuf>,
    },
    /// Print a saved plan, as text or in terraform's JSON plan format.
    Show {
        /// Print the plan in terraform's JSON plan format.
        #[arg(long)]
        json: bool,
        /// Print without colour (the saved text has none).
        #[arg(long = "no-color")]
        no_color: bool,
        /// The plan file.
        file: std::path::PathBuf,
    },
    /// Plan, ask for approval, and change the live system.
    Apply {
        #[command(flatten)]
        args: PlanArgs,
        /// Apply without asking for approval.
        #[arg(long = "auto-approve")]
        auto_approve: bool,
        /// A plan saved by `plan -out`: applied only if the live system
        /// still matches what it read (else exit 3), without asking.
        plan_file: Option<std::path::PathBuf>,
    },
    /// Destroy every object the estate owns.
    Destroy {
        #[command(flatten)]
        args: PlanArgs,
        /// Destroy without asking for approval.
        #[arg(long = "auto-approve")]
        auto_approve: bool,
    },
    /// Take a stock terraform state into the estate: stamp the estate's
    /// markers on every object it holds (an update that only adds them) and
    /// record those owned through a parent. The state file is only read.
    Migrate {
        /// The terraform state to migrate.
        #[arg(long, value_name = "FILE", default_value = "terraform.tfstate")]
        state: std::path::PathBuf,
        /// Print without colour.
        #[arg(long = "no-color")]
        no_color: bool,
    },
    /// Break the estate's lock left by a run that was killed: only when its
    /// ID is LOCK_ID.
    ForceUnlock {
        /// The lock's ID, as the refused run printed it.
        lock_id: String,
        /// Do not ask for confirmation.
        #[arg(long)]
        force: bool,
        /// Print without colour.
        #[arg(long = "no-color")]
        no_color: bool,
    },
    /// Print the root outputs the last apply left, as `terraform output`
    /// prints them from its state. A sensitive output's value is not kept
    /// (only its digest), so it cannot be printed.
    Output {
        /// Print in terraform's JSON format.
        #[arg(long)]
        json: bool,
        /// Print one string, number or bool output's value as it is.
        #[arg(long)]
        raw: bool,
        /// Print without colour.
        #[arg(long = "no-color")]
        no_color: bool,
        /// One output's name.
        name: Option<String>,
    },
    /// Read the estate's record store: what the engine keeps of each
    /// instance that the live system cannot tell it.
    Records {
        #[command(subcommand)]
        command: RecordsCommand,
    },
    /// Show information about the providers the root in the working
    /// directory requires.
    Providers {
        #[command(subcommand)]
        command: ProvidersCommand,
    },
    /// Workspaces, as terraform's: each its own estate (`<estate>.NAME`;
    /// `default` is the estate live.hcl names), listed in the live system.
    Workspace {
        #[command(subcommand)]
        command: WorkspaceCommand,
    },
    /// Refused: use `terraform fmt` (formatting touches only the files).
    #[command(disable_help_flag = true)]
    Fmt {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        args: Vec<String>,
    },
    /// Refused: use `terraform test` (it applies into a state of its own).
    #[command(disable_help_flag = true)]
    Test {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        args: Vec<String>,
    },
}

#[derive(Subcommand)]
enum WorkspaceCommand {
    /// Create a workspace (its estate `<estate>.NAME`) and select it.
    New {
        name: String,
        /// Print without colour.
        #[arg(long = "no-color")]
        no_color: bool,
    },
    /// Select a workspace.
    Select {
        name: String,
        /// Create the workspace if it does not exist.
        #[arg(long = "or-create", default_value = "false", num_args = 0..=1, default_missing_value = "true", require_equals = true)]
        or_create: String,
        /// Print without colour.
        #[arg(long = "no-color")]
        no_color: bool,
    },
    /// List the workspaces, the selected one marked with *.
    List {
        /// Print without colour.
        #[arg(long = "no-color")]
        no_color: bool,
    },
    /// Print the selected workspace's name.
    Show {
        /// Print without colour.
        #[arg(long = "no-color")]
        no_color: bool,
    },
    /// Delete a workspace from the list; refused while its estate holds
    /// records, unless -force.
    Delete {
        name: String,
        /// Delete it even though its estate holds records (its objects and
        /// records stay where they are).
        #[arg(long)]
        force: bool,
        /// Print without colour.
        #[arg(long = "no-color")]
        no_color: bool,
    },
}

/// The options `plan`, `apply` and `destroy` share.
#[derive(clap::Args, Clone)]
struct PlanArgs {
    /// Plan to destroy every object the estate owns.
    #[arg(long)]
    destroy: bool,
    /// Set an input variable: -var 'name=value'.
    #[arg(long = "var", value_name = "NAME=VALUE")]
    vars: Vec<String>,
    /// Read input variables from a file.
    #[arg(long = "var-file", value_name = "FILE")]
    var_files: Vec<std::path::PathBuf>,
    /// Print without colour.
    #[arg(long = "no-color")]
    no_color: bool,
    /// Read every object and change none: the apply brings the records
    /// and the outputs up to date.
    #[arg(long = "refresh-only")]
    refresh_only: bool,
    /// Stream terraform's machine-readable UI on stdout: one JSON message
    /// a line (apply needs -auto-approve or a saved plan).
    #[arg(long)]
    json: bool,
    /// Ask for no input (accepted for terraform compatibility: the engine
    /// never prompts for variables).
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", require_equals = true)]
    input: Option<String>,
    /// Plan only this resource or instance (and what it depends on).
    #[arg(long = "target", value_name = "ADDRESS")]
    targets: Vec<String>,
    /// Replace this resource instance even where it would be updated in
    /// place or left as it is (repeatable).
    #[arg(long = "replace", value_name = "ADDRESS")]
    replace: Vec<String>,
    /// Limit the number of concurrent changes.
    #[arg(long, default_value_t = engine::apply::DEFAULT_PARALLELISM)]
    parallelism: usize,
    /// Do not take the estate's lock (apply and destroy take it by default).
    #[arg(long, default_value = "true", num_args = 0..=1, default_missing_value = "true", require_equals = true)]
    lock: String,
    /// How long to wait for another run's lock, e.g. 30s or 5m.
    #[arg(long = "lock-timeout", default_value = "0s")]
    lock_timeout: String,
    /// Plan without the record store (it is still written on apply).
    #[arg(long = "no-records")]
    no_records: bool,
}

#[derive(Subcommand)]
enum RecordsCommand {
    /// List the addresses the store holds a record of, as `terraform state
    /// list` lists a state's.
    List {
        /// Print where the store is, every record whole and the outputs'
        /// names, as JSON.
        #[arg(long)]
        json: bool,
        /// Print without colour.
        #[arg(long = "no-color")]
        no_color: bool,
    },
}

#[derive(Subcommand)]
enum ProvidersCommand {
    /// Print the providers' schemas in terraform's JSON format.
    Schema {
        /// Print JSON (required, as in terraform).
        #[arg(long, required = true)]
        json: bool,
    },
    /// Print, for every resource type of the root's providers, how the
    /// engine finds and owns its objects (its identity family) and which
    /// live test proves it.
    Identity {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Only these resource types.
        types: Vec<String>,
    },
}

fn main() -> ExitCode {
    init_logging();
    let cli = Cli::parse_from(terraform_style_args(std::env::args_os()));
    if let Some(dir) = &cli.chdir {
        if let Err(e) = std::env::set_current_dir(dir) {
            eprintln!("Error handling -chdir option: chdir {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
    }
    match cli.command {
        Command::Init {
            upgrade,
            plugin_dirs,
            lockfile,
            no_color,
            input: _,
        } => return run_init(upgrade, plugin_dirs, lockfile.as_deref(), no_color),
        Command::Version { json } => {
            if json {
                let v = serde_json::json!({ "choudoufu_version": engine::VERSION });
                println!("{v:#}");
            } else {
                println!("choudoufu v{}", engine::VERSION);
            }
        }
        Command::Console { no_color } => return ExitCode::from(console(no_color)),
        Command::Validate { json, no_color } => return validate(json, no_color),
        Command::Migrate { state, no_color } => return run_migrate(&state, no_color),
        Command::Output {
            json,
            raw,
            no_color,
            name,
        } => return output(name.as_deref(), json, raw, no_color),
        Command::Records {
            command: RecordsCommand::List { json, no_color },
        } => return cli::records::list(json, no_color),
        Command::ForceUnlock {
            lock_id,
            force,
            no_color: _,
        } => return report(force_unlock(&lock_id, force)),
        Command::Plan {
            args,
            detailed_exitcode,
            out,
        } => {
            return run_plan(
                &args,
                Mode::Plan {
                    detailed_exitcode,
                    out,
                },
            )
        }
        Command::Apply {
            mut args,
            auto_approve,
            plan_file,
        } => {
            let saved = match plan_file.as_deref().map(engine::saved::SavedPlan::read) {
                Some(Ok(s)) => Some(Box::new((plan_file.clone().unwrap_or_default(), s))),
                Some(Err(e)) => return report(Err(e.into())),
                None => None,
            };
            if let Some(saved) = &saved {
                args.destroy = saved.1.destroy;
                args.refresh_only = saved.1.refresh_only;
                args.replace = saved.1.replace.clone();
            }
            return run_plan(
                &args,
                Mode::Apply {
                    auto_approve,
                    saved,
                },
            );
        }
        Command::Destroy {
            mut args,
            auto_approve,
        } => {
            args.destroy = true;
            return run_plan(
                &args,
                Mode::Apply {
                    auto_approve,
                    saved: None,
                },
            );
        }
        Command::Show {
            json,
            no_color: _,
            file,
        } => {
            return match engine::saved::SavedPlan::read(&file) {
                // A reader that stops early (`| head`) is not an error.
                Ok(s) if json => {
                    let _ = writeln!(
                        std::io::stdout(),
                        "{}",
                        engine::plan::json::go_text(&s.json, false)
                    );
                    ExitCode::SUCCESS
                }
                Ok(s) => {
                    let _ = write!(std::io::stdout(), "{}", s.text);
                    ExitCode::SUCCESS
                }
                Err(e) => report(Err(e.into())),
            };
        }
        Command::Providers {
            command: ProvidersCommand::Schema { json: _ },
        } => return report(providers_schema()),
        Command::Providers {
            command: ProvidersCommand::Identity { json, types },
        } => return report(providers_identity(json, &types)),
        Command::Workspace { command } => {
            use cli::workspace::Verb;
            let (verb, no_color) = match command {
                WorkspaceCommand::New { name, no_color } => (Verb::New(name), no_color),
                WorkspaceCommand::Select {
                    name,
                    or_create,
                    no_color,
                } => (
                    Verb::Select {
                        name,
                        or_create: or_create == "true",
                    },
                    no_color,
                ),
                WorkspaceCommand::List { no_color } => (Verb::List, no_color),
                WorkspaceCommand::Show { no_color } => (Verb::Show, no_color),
                WorkspaceCommand::Delete {
                    name,
                    force,
                    no_color,
                } => (Verb::Delete { name, force }, no_color),
            };
            return cli::workspace::workspace(verb, no_color);
        }
        Command::Fmt { .. } => return refused(REFUSED_FMT),
        Command::Test { .. } => return refused(REFUSED_TEST),
    }
    ExitCode::SUCCESS
}

/// Why `fmt` is left to terraform.
const REFUSED_FMT: (&str, &str) = (
    "choudoufu does not format configuration",
    "Formatting reads and writes only the .tf files, never the live system or any state, so stock terraform's formatter serves a choudoufu root exactly: run \"terraform fmt\". Its canonical layout is hclwrite's; a second formatter could only drift from it, and a root formatted by two tools would change back and forth.",
);

/// Why `test` is left to terraform.
const REFUSED_TEST: (&str, &str) = (
    "choudoufu does not run test files",
    "\"terraform test\" applies each run block into a state of its own and destroys what it made at the end; a choudoufu estate has no state to set aside, and the test's objects would carry the estate's markers. Run \"terraform test\" with stock terraform: the root is plain terraform.",
);

/// A command choudoufu leaves to terraform: the reason, as an error
/// diagnostic, and exit status 1.
fn refused((summary, detail): (&str, &str)) -> ExitCode {
    let d = engine::diag::Diagnostic::error(summary, detail);
    eprint!(
        "{}",
        engine::diag::render_all(
            &d.into(),
            &engine::diag::Sources::default(),
            engine::diag::Style::new(false)
        )
    );
    ExitCode::FAILURE
}

/// Prints an error with its chain of causes, terraform style, and maps it to
/// exit status 1.
fn report(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("Error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Terraform spells long options with one dash (`-json`, `-auto-approve`);
/// accept that spelling as well as clap's `--json`.
fn terraform_style_args(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    args.map(|arg| match arg.to_str() {
        Some(s) if s.len() > 2 && s.starts_with('-') && !s.starts_with("--") => {
            format!("-{s}").into()
        }
        _ => arg,
    })
    .collect()
}

/// `CHOUDOUFU_LOG=debug` (or trace, info, warn, error) logs the engine and
/// what its provider plugins write to stderr, on stderr.
fn init_logging() {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let Some(level) = std::env::var("CHOUDOUFU_LOG")
        .ok()
        .and_then(|v| v.parse::<tracing_subscriber::filter::LevelFilter>().ok())
    else {
        return;
    };
    let targets = tracing_subscriber::filter::Targets::new()
        .with_target("engine", level)
        .with_target("provider", level);
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level)
        .finish()
        .with(targets)
        .init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fmt_and_test_are_refused_whatever_their_flags() {
        for (args, fmt) in [
            (
                vec!["choudoufu", "fmt", "-recursive", "-check", "dir"],
                true,
            ),
            (
                vec!["choudoufu", "test", "-filter=a.tftest.hcl", "-verbose"],
                false,
            ),
            (vec!["choudoufu", "fmt"], true),
        ] {
            let args = terraform_style_args(args.into_iter().map(std::ffi::OsString::from));
            let cli = Cli::try_parse_from(args).unwrap();
            match cli.command {
                Command::Fmt { .. } => assert!(fmt),
                Command::Test { .. } => assert!(!fmt),
                _ => panic!("not refused"),
            }
        }
        assert_eq!(refused(REFUSED_FMT), ExitCode::FAILURE);
    }
}
