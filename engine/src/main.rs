//! The `choudoufu` command line: terraform's verbs over a stateless engine.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use engine::diag;
use engine::eval::{self, format, Diagnostic};
use std::io::{BufRead, Write};

#[derive(Parser)]
#[command(
    name = "choudoufu",
    about = "A Terraform-compatible engine that keeps no state file"
)]
struct Cli {
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
    /// Show information about the providers the root in the working
    /// directory requires.
    Providers {
        #[command(subcommand)]
        command: ProvidersCommand,
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
    /// Ask for no input (accepted for terraform compatibility: the engine
    /// never prompts for variables).
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", require_equals = true)]
    input: Option<String>,
    /// Plan only this resource or instance (and what it depends on).
    #[arg(long = "target", value_name = "ADDRESS")]
    targets: Vec<String>,
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
enum ProvidersCommand {
    /// Print the providers' schemas in terraform's JSON format.
    Schema {
        /// Print JSON (required, as in terraform).
        #[arg(long, required = true)]
        json: bool,
    },
}

fn main() -> ExitCode {
    init_logging();
    let cli = Cli::parse_from(terraform_style_args(std::env::args_os()));
    match cli.command {
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
    }
    ExitCode::SUCCESS
}

fn providers_schema() -> anyhow::Result<()> {
    use engine::provider::schema::TerraformSchemas;
    use engine::provider::{cache::SchemaCache, plugin::LaunchOptions, required_schemas};
    let root = std::env::current_dir()?;
    let cache = SchemaCache::from_env();
    // Current-thread: plugins must be launched from a thread that outlives
    // them (their parent-death signal follows the spawning thread).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let schemas = runtime.block_on(required_schemas(
        &root,
        cache.as_ref(),
        &LaunchOptions::from_env(),
    ))?;
    let document = TerraformSchemas::new(schemas.iter().map(|(a, s)| (a.clone(), s)));
    let mut out =
        engine::plan::json::GoEscaped::new(std::io::BufWriter::new(std::io::stdout().lock()));
    serde_json::to_writer(&mut out, &document)?;
    writeln!(out)?;
    out.finish()?;
    Ok(())
}

/// What `run_plan` does after planning.
enum Mode {
    Plan {
        detailed_exitcode: bool,
        out: Option<std::path::PathBuf>,
    },
    Apply {
        auto_approve: bool,
        saved: Option<Box<(std::path::PathBuf, engine::saved::SavedPlan)>>,
    },
}

/// `plan`, `apply` and `destroy`.
fn run_plan(args: &PlanArgs, mode: Mode) -> ExitCode {
    use engine::eval::inputs::CliInput;
    use engine::provider::plugin::LaunchOptions;
    use engine::workspace::Workspace;
    let style = diag::Style::new(!args.no_color);
    let mut cli: Vec<CliInput> = Vec::new();
    // -var and -var-file keep their command-line order.
    let raw: Vec<String> = std::env::args().collect();
    let (mut vars, mut files) = (args.vars.iter(), args.var_files.iter());
    for a in &raw {
        if a == "-var" || a == "--var" || a.starts_with("-var=") || a.starts_with("--var=") {
            if let Some(v) = vars.next() {
                cli.push(CliInput::Var(v.clone()));
            }
        } else if a.starts_with("-var-file") || a.starts_with("--var-file") {
            if let Some(f) = files.next() {
                cli.push(CliInput::VarFile(f.clone()));
            }
        }
    }
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return report(Err(e.into())),
    };
    let root = match std::env::current_dir() {
        Ok(r) => r,
        Err(e) => return report(Err(e.into())),
    };
    runtime.block_on(async {
        let mut ws = match Workspace::open(&root, &cli, &env, LaunchOptions::from_env()).await {
            Ok(ws) => ws,
            Err(e) => {
                eprint!("{}", diag::render_all(&e.diagnostics, &e.sources, style));
                return ExitCode::FAILURE;
            }
        };
        let sources = ws.tree.sources();
        let mut lock = None;
        if matches!(mode, Mode::Apply { .. }) && args.lock != "false" {
            match take_lock(&mut ws, args).await {
                Ok(l) => lock = l,
                Err(e) => {
                    ws.sessions.close().await;
                    return report(Err(e));
                }
            }
        }
        let code = plan_and_apply(&mut ws, args, mode, &root, &sources, style).await;
        if let Some(l) = lock {
            if let Err(e) = l.release().await {
                eprintln!("\nError releasing the estate lock: {e}");
            }
        }
        ws.sessions.close().await;
        code
    })
}

/// Takes the estate's lock in the live system (when the root uses the aws
/// provider, where the lock lives).
async fn take_lock(
    ws: &mut engine::workspace::Workspace,
    args: &PlanArgs,
) -> anyhow::Result<Option<engine::lock::Lock>> {
    if ws.sessions.schema("aws").is_none() {
        return Ok(None);
    }
    let timeout = parse_duration(&args.lock_timeout)?;
    engine::planner::configure_providers(&ws.tree.module, ws.vars.clone(), &mut ws.sessions)
        .await
        .map_err(|d| anyhow::anyhow!("{d}"))?;
    let aws = engine::config::ProviderRef {
        name: "aws".into(),
        alias: None,
    };
    let provider = ws
        .sessions
        .get(&aws)
        .await
        .map_err(|d| anyhow::anyhow!("{d}"))?
        .clone();
    let operation = if args.destroy {
        "OperationTypeDestroy"
    } else {
        "OperationTypeApply"
    };
    let estate = ws.settings.estate.clone();
    let waiting = |holder: &engine::lock::Holder| {
        println!(
            "Estate \"{estate}\" is locked by another run: lock ID {}, {} by {} since {}. Waiting up to {} for it to finish...",
            holder.id,
            holder.operation,
            holder.who,
            holder.created,
            args.lock_timeout
        );
    };
    Ok(Some(
        engine::lock::acquire(&provider, &estate, operation, timeout, waiting).await?,
    ))
}

/// A duration as terraform writes them: `0s`, `30s`, `5m`, `1h`.
fn parse_duration(text: &str) -> anyhow::Result<std::time::Duration> {
    let (n, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let n: u64 = n
        .parse()
        .map_err(|_| anyhow::anyhow!("invalid duration {text:?}: use 0s, 30s, 5m or 1h"))?;
    let secs = match unit {
        "" | "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        _ => anyhow::bail!("invalid duration {text:?}: use 0s, 30s, 5m or 1h"),
    };
    Ok(std::time::Duration::from_secs(secs))
}

/// Plans, and for `apply` and `destroy`, applies.
async fn plan_and_apply(
    ws: &mut engine::workspace::Workspace,
    args: &PlanArgs,
    mode: Mode,
    root: &std::path::Path,
    sources: &diag::Sources,
    style: diag::Style,
) -> ExitCode {
    {
        let root = root.to_path_buf();
        let sources = sources.clone();
        let mut targets = Vec::new();
        for t in &args.targets {
            match t.parse::<engine::addr::Target>() {
                Ok(a) => targets.push(a),
                Err(e) => {
                    eprintln!("Error: Invalid target {t:?}: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        // A saved plan's apply keeps the instant the plan was made.
        let plan_timestamp = match &mode {
            Mode::Apply {
                saved: Some(approved),
                ..
            } => approved.1.plan_timestamp.clone(),
            _ => engine::eval::funcs::rfc3339_now(),
        };
        let req = engine::planner::Request {
            tree: &ws.tree,
            settings: &ws.settings,
            vars: ws.vars.clone(),
            destroy: args.destroy,
            use_records: !args.no_records,
            targets,
            plan_timestamp,
        };
        let planned = match engine::planner::plan(&req, &mut ws.sessions, &ws.store).await {
            Ok(p) => p,
            Err(d) => {
                eprint!("{}", diag::render_all(&d, &sources, style));
                return ExitCode::FAILURE;
            }
        };
        eprint!("{}", diag::render_all(&planned.warnings, &sources, style));
        if let Mode::Apply {
            saved: Some(approved),
            ..
        } = &mode
        {
            let (path, saved) = approved.as_ref();
            if let Err(e) = saved.check_origin(path, &ws.settings.estate, &root, &ws.vars) {
                return report(Err(e.into()));
            }
            let moved = saved.moved(&engine::saved::digests(&planned));
            if !moved.is_empty() {
                eprintln!("\nError: The approved plan no longer matches the live system\n");
                eprintln!("Since {} was made, these changed in the live system or in what applying would do:", path.display());
                for m in &moved {
                    eprintln!("  - {m}");
                }
                eprintln!("\nNothing was applied. Make and review a new plan.");
                return ExitCode::from(3);
            }
        } else {
            print!(
                "{}",
                engine::plan::render::human(&planned.plan, !args.no_color)
            );
        }
        let code = match mode {
            Mode::Plan {
                detailed_exitcode,
                out,
            } => {
                if let Some(out) = out {
                    let text = engine::plan::render::human(&planned.plan, false);
                    let saved = engine::saved::SavedPlan::new(
                        &planned,
                        &ws.settings.estate,
                        &root,
                        &ws.vars,
                        args.destroy,
                        &req.plan_timestamp,
                        text,
                    );
                    if let Err(e) = saved.write(&out) {
                        return report(Err(e.into()));
                    }
                    println!("\nSaved the plan to: {}\n\nTo perform exactly these actions, run the following command to apply:\n    choudoufu apply \"{}\"", out.display(), out.display());
                }
                if detailed_exitcode && planned.plan.has_changes() {
                    ExitCode::from(2)
                } else {
                    ExitCode::SUCCESS
                }
            }
            Mode::Apply {
                auto_approve,
                saved,
            } => {
                let auto_approve = auto_approve || saved.is_some();
                // With no changes there is nothing to approve; the walk still
                // writes any record that is missing.
                if planned.plan.has_changes() && !auto_approve {
                    if !approved(args.destroy) {
                        println!("\nApply cancelled.");
                        return ExitCode::FAILURE;
                    }
                    // A blank line after the answer, as terraform leaves;
                    // without a prompt the progress follows the plan.
                    println!();
                }
                let mut progress = |line: String| println!("{line}");
                match engine::apply::apply(
                    &req,
                    &planned,
                    &mut ws.sessions,
                    &ws.store,
                    &mut progress,
                    args.parallelism,
                )
                .await
                {
                    Ok(done) => {
                        println!("\n{}", apply_complete(&done, args.destroy, !args.no_color));
                        if !args.destroy && !done.outputs.is_empty() {
                            println!("\nOutputs:\n");
                            for (name, value) in &done.outputs {
                                if engine::eval::module::root_output_sensitive(
                                    &ws.tree.module,
                                    name,
                                    value,
                                ) {
                                    println!("{name} = <sensitive>");
                                } else {
                                    println!("{name} = {}", engine::eval::format::console(value));
                                }
                            }
                        }
                        ExitCode::SUCCESS
                    }
                    Err((done, d)) => {
                        eprint!("{}", diag::render_all(&d, &sources, style));
                        eprintln!(
                            "\nApplied before the error: {} added, {} changed, {} destroyed; each is recorded, and the next plan proposes exactly the rest.",
                            done.added, done.changed, done.destroyed
                        );
                        ExitCode::FAILURE
                    }
                }
            }
        };
        code
    }
}

/// `choudoufu output [-json | -raw] [NAME]`.
fn output(name: Option<&str>, json: bool, raw: bool, no_color: bool) -> ExitCode {
    use diag::Diagnostic;
    use engine::record::RecordStore;
    // terraform's output command wraps its details a column earlier than
    // plan and validate do.
    let style = diag::Style {
        width: 77,
        ..diag::Style::new(!no_color)
    };
    let fail = |d: Diagnostic| {
        eprint!(
            "{}",
            diag::render_all(&d.into(), &diag::Sources::default(), style)
        );
        ExitCode::FAILURE
    };
    let root = match std::env::current_dir() {
        Ok(r) => r,
        Err(e) => return report(Err(e.into())),
    };
    let settings = match engine::live::load(&root) {
        Ok(s) => s,
        Err(d) => {
            eprint!("{}", diag::render_all(&d, &diag::Sources::default(), style));
            return ExitCode::FAILURE;
        }
    };
    let store = RecordStore::open(&settings.record_store, &settings.estate);
    let outputs = match store.outputs() {
        Ok(o) => o,
        Err(e) => return fail(Diagnostic::error("Unreadable record", e.to_string())),
    };
    let not_kept = |name: &str| {
        Diagnostic::error(
            format!("Output \"{name}\" is sensitive and not kept"),
            "The record store keeps only a digest of a sensitive output, so its value cannot be printed. Read it where it comes from, or make the output non-sensitive.",
        )
    };
    let Some(name) = name else {
        if raw {
            return fail(Diagnostic::error(
                "Output name required",
                "You must give the name of a single output value when using the -raw option.",
            ));
        }
        if json {
            let mut all = serde_json::Map::new();
            for (name, o) in &outputs {
                let mut entry = serde_json::Map::new();
                entry.insert("sensitive".into(), o.sensitive.into());
                entry.insert("type".into(), o.type_json.clone());
                match &o.value {
                    Some(v) => {
                        entry.insert("value".into(), v.clone());
                    }
                    None => {
                        let d = not_kept(name);
                        let warn = Diagnostic::warning(d.summary, d.detail);
                        eprint!(
                            "{}",
                            diag::render_all(&warn.into(), &diag::Sources::default(), style)
                        );
                    }
                }
                all.insert(name.clone(), entry.into());
            }
            let all = serde_json::Value::Object(all);
            println!("{}", engine::plan::json::go_text(&all, true));
            return ExitCode::SUCCESS;
        }
        if outputs.is_empty() {
            let warn = Diagnostic::warning(
                "No outputs found",
                "The state file either has no outputs defined, or all the defined outputs are empty. Please define an output in your configuration with the `output` keyword and run `terraform refresh` for it to become available. If you are using interpolation, please verify the interpolated value is not empty. You can use the `terraform console` command to assist.",
            );
            eprint!(
                "{}",
                diag::render_all(&warn.into(), &diag::Sources::default(), style)
            );
        }
        for (name, o) in &outputs {
            match o.sensitive {
                true => println!("{name} = <sensitive>"),
                false => println!("{name} = {}", engine::eval::format::console(&o.value())),
            }
        }
        return ExitCode::SUCCESS;
    };
    let Some(o) = outputs.get(name) else {
        return fail(Diagnostic::error(
            format!("Output \"{name}\" not found"),
            "The output variable requested could not be found in the state file. If you recently added this to your configuration, be sure to run `terraform apply`, since the state won't be updated with new output variables until that command is run.",
        ));
    };
    let (Some(value_json), false) = (&o.value, o.sensitive) else {
        return fail(not_kept(name));
    };
    let value = o.value();
    if json {
        println!("{}", engine::plan::json::go_text(value_json, false));
    } else if raw {
        match (value.as_str(), &value.kind) {
            (Some(s), _) => print!("{s}"),
            (None, engine::value::Kind::Number(_) | engine::value::Kind::Bool(_)) => {
                print!("{}", engine::eval::format::console(&value));
            }
            _ => {
                return fail(Diagnostic::error(
                    "Unsupported value for raw output",
                    format!(
                        "The -raw option only supports strings, numbers, and boolean values, but output value \"{name}\" is {}.\n\nUse the -json option for machine-readable representations of output values that have complex types.",
                        value.ty().friendly_name()
                    ),
                ));
            }
        }
    } else {
        println!("{}", engine::eval::format::console(&value));
    }
    ExitCode::SUCCESS
}

/// `choudoufu force-unlock LOCK_ID`.
fn force_unlock(lock_id: &str, force: bool) -> anyhow::Result<()> {
    use engine::provider::plugin::LaunchOptions;
    use engine::workspace::Workspace;
    if !force {
        println!("Do you really want to force-unlock?\n  choudoufu will remove the lock on the estate, so another run may start.\n  Only 'yes' will be accepted to confirm.\n");
        print!("  Enter a value: ");
        let _ = std::io::stdout().flush();
        let mut answer = String::new();
        let _ = std::io::stdin().read_line(&mut answer);
        if answer.trim() != "yes" {
            anyhow::bail!("force-unlock cancelled");
        }
    }
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let root = std::env::current_dir()?;
    runtime.block_on(async {
        let mut ws = Workspace::open(&root, &[], &env, LaunchOptions::from_env())
            .await
            .map_err(|e| anyhow::anyhow!("{}", e.diagnostics))?;
        let result = async {
            engine::planner::configure_providers(
                &ws.tree.module,
                ws.vars.clone(),
                &mut ws.sessions,
            )
            .await
            .map_err(|d| anyhow::anyhow!("{d}"))?;
            let aws = engine::config::ProviderRef {
                name: "aws".into(),
                alias: None,
            };
            let provider = ws
                .sessions
                .get(&aws)
                .await
                .map_err(|d| anyhow::anyhow!("{d}"))?
                .clone();
            let holder =
                engine::lock::force_unlock(&provider, &ws.settings.estate, lock_id).await?;
            println!(
                "The estate lock has been successfully unlocked: it was held by {} ({}, since {}).",
                holder.who, holder.operation, holder.created
            );
            anyhow::Ok(())
        }
        .await;
        ws.sessions.close().await;
        result
    })
}

/// `choudoufu migrate`: exit 0 when nothing failed.
fn run_migrate(state: &std::path::Path, no_color: bool) -> ExitCode {
    use engine::provider::plugin::LaunchOptions;
    use engine::workspace::Workspace;
    let style = diag::Style::new(!no_color);
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return report(Err(e.into())),
    };
    let root = match std::env::current_dir() {
        Ok(r) => r,
        Err(e) => return report(Err(e.into())),
    };
    runtime.block_on(async {
        let mut ws = match Workspace::open(&root, &[], &env, LaunchOptions::from_env()).await {
            Ok(ws) => ws,
            Err(e) => {
                eprint!("{}", diag::render_all(&e.diagnostics, &e.sources, style));
                return ExitCode::FAILURE;
            }
        };
        if let Err(d) = engine::planner::configure_providers(&ws.tree.module, ws.vars.clone(), &mut ws.sessions).await {
            eprint!("{}", diag::render_all(&d, ws.tree.module.sources(), style));
            ws.sessions.close().await;
            return ExitCode::FAILURE;
        }
        println!("Migrating {} into estate \"{}\":", state.display(), ws.settings.estate);
        let mut progress = |line: String| println!("  {line}");
        let result = engine::migrate::migrate(state, &ws.settings.estate, &mut ws.sessions, &ws.store, &mut progress).await;
        ws.sessions.close().await;
        match result {
            Ok(c) => {
                println!(
                    "\nMigrate complete! {} newly stamped, {} already stamped, {} recorded (owned through their parent), {} failed, {} skipped.",
                    c.stamped, c.already, c.recorded, c.failed, c.skipped
                );
                if c.failed > 0 {
                    ExitCode::FAILURE
                } else {
                    ExitCode::SUCCESS
                }
            }
            Err(d) => {
                eprint!("{}", diag::render_all(&d, &Default::default(), style));
                ExitCode::FAILURE
            }
        }
    })
}

/// terraform's approval prompt; only "yes" approves.
fn approved(destroy: bool) -> bool {
    if destroy {
        println!("\nDo you really want to destroy all resources?\n  Terraform will destroy all your managed infrastructure, as shown above.\n  There is no undo. Only 'yes' will be accepted to confirm.\n");
    } else {
        println!("\nDo you want to perform these actions?\n  Terraform will perform the actions described above.\n  Only 'yes' will be accepted to approve.\n");
    }
    print!("  Enter a value: ");
    let _ = std::io::stdout().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().read_line(&mut answer);
    answer.trim() == "yes"
}

/// terraform's closing line of an apply.
fn apply_complete(done: &engine::apply::Applied, destroy: bool, color: bool) -> String {
    let text = if destroy {
        format!("Destroy complete! Resources: {} destroyed.", done.destroyed)
    } else {
        let imported = match done.imported {
            0 => String::new(),
            n => format!("{n} imported, "),
        };
        format!(
            "Apply complete! Resources: {imported}{} added, {} changed, {} destroyed.",
            done.added, done.changed, done.destroyed
        )
    };
    if color {
        format!("\x1b[0m\x1b[1m\x1b[32m{text}\x1b[0m")
    } else {
        text
    }
}

/// `choudoufu validate`: exit 0 when valid, 1 when not.
fn validate(json: bool, no_color: bool) -> ExitCode {
    use engine::provider::{cache::SchemaCache, plugin::LaunchOptions};
    let run = || -> anyhow::Result<engine::validate::Validation> {
        let root = std::env::current_dir()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(runtime.block_on(engine::validate::validate(
            &root,
            SchemaCache::from_env().as_ref(),
            &LaunchOptions::from_env(),
            engine::validate::Depth {
                provider_checks: true,
            },
        )))
    };
    let v = match run() {
        Ok(v) => v,
        Err(e) => return report(Err(e)),
    };
    let d = &v.diagnostics;
    if json {
        let doc = serde_json::json!({
            "format_version": "1.0",
            "valid": v.is_valid(),
            "error_count": d.errors(),
            "warning_count": d.warnings(),
            "diagnostics": d.iter().map(|x| diag::to_json(x, &v.sources)).collect::<Vec<_>>(),
        });
        println!("{doc:#}");
    } else {
        eprint!(
            "{}",
            diag::render_all(d, &v.sources, diag::Style::new(!no_color))
        );
        if v.is_valid() {
            if no_color {
                println!("Success! The configuration is valid.\n");
            } else {
                println!("\x1b[32m\x1b[1mSuccess!\x1b[0m The configuration is valid.\x1b[0m\n");
            }
        }
    }
    if v.is_valid() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
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

/// The console loop; returns the exit code (1 if any expression failed).
fn console(no_color: bool) -> u8 {
    // In a root, its variables and locals are in scope.
    let root = std::env::current_dir().unwrap_or_default();
    let (module, diags) = engine::config::load(&root);
    let style = diag::Style::new(!no_color);
    if diags.has_errors() {
        eprint!("{}", diag::render_all(&diags, module.sources(), style));
        return 1;
    }
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let scope = match engine::eval::inputs::collect(&module, &[], &env)
        .and_then(|vars| engine::eval::module::console_scope(&module, vars))
    {
        Ok(scope) => scope,
        Err(d) => {
            eprint!("{}", diag::render_all(&d, module.sources(), style));
            return 1;
        }
    };
    let stdout = std::io::stdout();
    let mut failed = false;
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let line = line.trim();
        if line == "exit" {
            break;
        }
        if line.is_empty() {
            continue;
        }
        // References to what the root does not declare get terraform's
        // words before evaluation, as in a block.
        if let Ok(expr) = hcl_edit::parser::parse_expr(line) {
            let file = engine::source::SourceFile::new("<console-input>", line.to_string());
            let refs = engine::config::refs::references(&engine::config::Expr::new(expr, file));
            if let Some(d) = engine::graph::check_references(&module, &refs)
                .iter()
                .next()
            {
                failed = true;
                let d = Diagnostic::new(d.summary.clone(), d.detail.clone());
                eprint!("{}", render_diagnostic(&d, no_color));
                continue;
            }
        }
        match eval::eval_str(&scope, line) {
            Ok(v) => {
                let mut out = stdout.lock();
                let _ = writeln!(out, "{}", format::console(&v));
            }
            Err(d) => {
                failed = true;
                eprint!("{}", render_diagnostic(&d, no_color));
            }
        }
    }
    u8::from(failed)
}

/// An error as terraform renders it for console input.
fn render_diagnostic(d: &Diagnostic, no_color: bool) -> String {
    use engine::source::{Pos, Range};
    let line1 = Pos {
        line: 1,
        column: 1,
        byte: 0,
    };
    let at = Range {
        filename: "<console-input>".into(),
        start: line1,
        end: line1,
    };
    let d = diag::Diagnostic::error(d.summary.clone(), d.detail.clone()).at(at);
    let out = diag::render(
        &d,
        &diag::Sources::default(),
        diag::Style {
            color: !no_color,
            width: 77,
        },
    );
    if no_color {
        out
    } else {
        format!("{out}\x1b[0m\x1b[0m\n")
    }
}
