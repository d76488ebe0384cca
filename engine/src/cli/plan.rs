//! `plan`, `apply` and `destroy`: a plan from the live system, shown, saved
//! or approved and applied, under the estate's lock.

use crate::cli::Ui;
use crate::PlanArgs;
use engine::diag;
use std::io::Write;
use std::process::ExitCode;

/// What `run_plan` does after planning.
pub(crate) enum Mode {
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
pub(crate) fn run_plan(args: &PlanArgs, mode: Mode) -> ExitCode {
    use engine::eval::inputs::CliInput;
    let style = diag::Style::new(!args.no_color && !args.json);
    let ui = match args.json {
        true => Ui::Json,
        false => Ui::Human(style),
    };
    if args.json {
        println!("{}", engine::json_ui::version());
    }
    if let Some(d) = mode_conflict(args) {
        ui.diagnostics(&d.into(), &diag::Sources::default());
        return ExitCode::FAILURE;
    }
    if args.json {
        // No prompt can be answered in the middle of a stream.
        if let Mode::Apply {
            auto_approve: false,
            saved: None,
        } = mode
        {
            let d = diag::Diagnostic::error(
                "Plan file or auto-approve required",
                "Terraform cannot ask for interactive approval when -json is set. You can either apply a saved plan file, or enable the -auto-approve option.",
            );
            ui.diagnostics(&d.into(), &diag::Sources::default());
            return ExitCode::FAILURE;
        }
    }
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
    crate::cli::in_workspace(&cli, ui, async |root, ws| {
        let sources = ws.tree.sources();
        let mut lock = None;
        if matches!(mode, Mode::Apply { .. }) && args.lock != "false" {
            match take_lock(ws, args, ui).await {
                Ok(l) => lock = l,
                Err(e) => return ui.fail(e),
            }
        }
        // Read after the lock is taken: the plan sees what its last holder
        // wrote.
        let write = matches!(mode, Mode::Apply { .. });
        let mut said = |line: String| match ui {
            Ui::Human(_) => say_records(line),
            Ui::Json => ui.say(&line),
        };
        let code = match ws.open_records(root, write, &mut said).await {
            Ok(store) => plan_and_apply(ws, &store, args, mode, root, &sources, ui).await,
            Err(d) => {
                ui.diagnostics(&d, &sources);
                ExitCode::FAILURE
            }
        };
        if let Some(l) = lock {
            let id = l.id();
            match tokio::time::timeout(RELEASE_WITHIN, l.release()).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => eprintln!("\nError releasing the estate lock: {e}"),
                Err(_) => eprintln!(
                    "\nError releasing the estate lock: no answer within {RELEASE_WITHIN:?}. Once nothing else runs on this estate, break it with: choudoufu force-unlock {id}"
                ),
            }
        }
        code
    })
}

/// terraform's refusal of plan modes that cannot go together.
fn mode_conflict(args: &PlanArgs) -> Option<diag::Diagnostic> {
    if args.refresh_only && args.destroy {
        return Some(diag::Diagnostic::error(
            "Incompatible plan mode options",
            "The -destroy and -refresh-only options are mutually-exclusive.",
        ));
    }
    if args.refresh_only && !args.replace.is_empty() {
        return Some(diag::Diagnostic::error(
            "Unsupported plan mode",
            "Forcing resource instance replacement (with -replace=...) is allowed only in normal planning mode.",
        ));
    }
    None
}

/// What opening the record store has to say: a move of an earlier
/// version's local records, or a warning that they are read beside it.
pub(crate) fn say_records(line: String) {
    match line.starts_with("Warning") {
        true => eprintln!("{line}\n"),
        false => println!("{line}\n"),
    }
}

/// How long letting go of the estate lock may take before the command
/// gives up and says how to break it.
const RELEASE_WITHIN: std::time::Duration = std::time::Duration::from_secs(30);

/// Takes the estate's lock in the live system (when the root uses the aws
/// provider, where the lock lives).
pub(crate) async fn take_lock(
    ws: &mut engine::workspace::Workspace,
    args: &PlanArgs,
    ui: Ui,
) -> anyhow::Result<Option<engine::lock::Lock>> {
    if ws.sessions.schema("aws").is_none() {
        return Ok(None);
    }
    let timeout = parse_duration(&args.lock_timeout)?;
    engine::planner::configure_providers(&ws.tree.module, ws.vars.clone(), &mut ws.sessions)
        .await
        .map_err(|d| anyhow::anyhow!("{d}"))?;
    let aws = engine::bind::aws::default_provider();
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
        ui.say(&format!(
            "Estate \"{estate}\" is locked by another run: lock ID {}, {} by {} since {}. Waiting up to {} for it to finish...",
            holder.id,
            holder.operation,
            holder.who,
            holder.created,
            args.lock_timeout
        ));
    };
    Ok(Some(
        engine::lock::acquire(&provider, &estate, operation, timeout, waiting).await?,
    ))
}

/// A duration as terraform writes them: `0s`, `30s`, `5m`, `1h`.
pub(crate) fn parse_duration(text: &str) -> anyhow::Result<std::time::Duration> {
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
pub(crate) async fn plan_and_apply(
    ws: &mut engine::workspace::Workspace,
    store: &engine::record::RecordStore,
    args: &PlanArgs,
    mode: Mode,
    root: &std::path::Path,
    sources: &diag::Sources,
    ui: Ui,
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
        let mut replace = Vec::new();
        for r in &args.replace {
            match r.parse::<engine::addr::ResourceInstanceAddr>() {
                Ok(a) => replace.push(a),
                Err(e) => {
                    eprintln!("\nError: Invalid force-replace address {r:?}\n\n{e}");
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
            replace,
            plan_timestamp,
            refresh_only: args.refresh_only,
        };
        let planned = match engine::planner::plan(&req, &mut ws.sessions, store).await {
            Ok(p) => p,
            Err(d) => {
                ui.diagnostics(&d, &sources);
                return ExitCode::FAILURE;
            }
        };
        // Warnings follow the plan, as terraform prints them.
        if let Mode::Apply {
            saved: Some(approved),
            ..
        } = &mode
        {
            if let Ui::Json = ui {
                for line in engine::json_ui::plan(&planned.plan, true) {
                    println!("{line}");
                }
            }
            ui.diagnostics(&planned.warnings, &sources);
            let (path, saved) = approved.as_ref();
            if let Err(e) = saved.check_origin(path, &ws.settings.estate, &root, &ws.vars) {
                return ui.fail(e.into());
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
            match ui {
                Ui::Human(_) => print!(
                    "{}",
                    engine::plan::render::human(&planned.plan, !args.no_color)
                ),
                Ui::Json => {
                    for line in engine::json_ui::plan(&planned.plan, false) {
                        println!("{line}");
                    }
                }
            }
            ui.diagnostics(&planned.warnings, &sources);
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
                    )
                    .replacing(&args.replace);
                    if let Err(e) = saved.write(&out) {
                        return ui.fail(e.into());
                    }
                    // The stream says nothing of it, as terraform's.
                    if let Ui::Human(_) = ui {
                        println!("\nSaved the plan to: {}\n\nTo perform exactly these actions, run the following command to apply:\n    choudoufu apply \"{}\"", out.display(), out.display());
                    }
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
                let mut progress = |event: engine::apply::Event| match ui {
                    Ui::Human(_) => {
                        if let Some(line) = event.line() {
                            println!("{line}");
                        }
                    }
                    Ui::Json => {
                        if let Some(line) = engine::json_ui::hook(&event) {
                            println!("{line}");
                        }
                    }
                };
                match engine::apply::apply(
                    &req,
                    &planned,
                    &mut ws.sessions,
                    store,
                    &mut progress,
                    args.parallelism,
                )
                .await
                {
                    Ok(done) if args.json => {
                        for line in engine::json_ui::applied(&done, args.destroy, &ws.tree.module) {
                            println!("{line}");
                        }
                        ExitCode::SUCCESS
                    }
                    Ok(done) => {
                        println!("\n{}", apply_complete(&done, args.destroy, !args.no_color));
                        if !args.destroy {
                            print!("{}", done.outputs_text(&ws.tree.module));
                        }
                        ExitCode::SUCCESS
                    }
                    Err((done, d)) => {
                        ui.diagnostics(&d, &sources);
                        let rest = if done.cancelled {
                            ""
                        } else {
                            ", and the next plan proposes exactly the rest"
                        };
                        eprintln!(
                            "\nApplied before the error: {} added, {} changed, {} destroyed; each is recorded{rest}.",
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

/// terraform's approval prompt; only "yes" approves.
pub(crate) fn approved(destroy: bool) -> bool {
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
pub(crate) fn apply_complete(done: &engine::apply::Applied, destroy: bool, color: bool) -> String {
    let text = done.summary(destroy);
    if color {
        format!("\x1b[0m\x1b[1m\x1b[32m{text}\x1b[0m")
    } else {
        text
    }
}
