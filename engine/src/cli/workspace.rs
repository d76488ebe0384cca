//! `choudoufu workspace new|select|list|show|delete`: terraform's
//! workspaces, each its own estate (see `engine::workspaces`), listed in
//! the live system.

use engine::diag;
use engine::provider::grpc::GrpcProvider;
use engine::workspace::Workspace;
use engine::workspaces::{self, Registry, WorkspaceError, DEFAULT};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// What `workspace` was asked to do.
pub(crate) enum Verb {
    New(String),
    Select { name: String, or_create: bool },
    List,
    Show,
    Delete { name: String, force: bool },
}

/// Prints a line on stdout; a reader that stops early (`| head`) is not
/// an error.
fn out(text: &str) {
    let _ = writeln!(std::io::stdout(), "{text}");
}

/// Prints an error as terraform prints a workspace command's, and exits 1.
fn fail(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("{e}");
    ExitCode::FAILURE
}

/// `choudoufu workspace VERB`.
pub(crate) fn workspace(verb: Verb, no_color: bool) -> ExitCode {
    let style = diag::Style::new(!no_color);
    let root = match std::env::current_dir() {
        Ok(r) => r,
        Err(e) => return crate::report(Err(e.into())),
    };
    // `show` reads only the working directory, as terraform's does.
    if let Verb::Show = verb {
        return match workspaces::selected(&root) {
            Ok((w, _)) => {
                out(&w);
                ExitCode::SUCCESS
            }
            Err(e) => fail(e),
        };
    }
    if let Verb::New(name) | Verb::Select { name, .. } = &verb {
        if let Ok((_, true)) = workspaces::selected(&root) {
            return fail(WorkspaceError::Overridden);
        }
        if !workspaces::valid(name) {
            let base = engine::live::load(&root)
                .map(|s| s.base)
                .unwrap_or_else(|_| "<estate>".into());
            return fail(workspaces::check(name, &base).unwrap_err());
        }
    }
    crate::cli::in_workspace(&[], crate::cli::Ui::Human(style), async |root, ws| {
        let provider = match aws_provider(ws).await {
            Ok(p) => p,
            Err(d) => {
                eprint!("{}", diag::render_all(&d, &ws.tree.sources(), style));
                return ExitCode::FAILURE;
            }
        };
        let registry = match Registry::new(&provider, &ws.settings.base) {
            Ok(r) => r,
            Err(e) => return fail(e),
        };
        match run(verb, root, ws, &registry, style).await {
            Ok(code) => code,
            Err(e) => fail(e),
        }
    })
}

async fn run(
    verb: Verb,
    root: &Path,
    ws: &mut Workspace,
    registry: &Registry,
    style: diag::Style,
) -> Result<ExitCode, WorkspaceError> {
    let current = ws.settings.workspace.clone();
    match verb {
        Verb::Show => unreachable!("show needs no provider"),
        Verb::List => {
            for w in registry.list().await? {
                let mark = if w == current { "*" } else { " " };
                out(&format!("{mark} {w}"));
            }
            out("");
        }
        Verb::New(name) => {
            if registry.exists(&name).await? {
                return Err(WorkspaceError::Exists(name));
            }
            registry.create(&name).await?;
            workspaces::select(root, &name)?;
            created(&name, style);
        }
        Verb::Select { name, or_create } => {
            if !registry.exists(&name).await? {
                if !or_create {
                    return Err(WorkspaceError::Missing(name));
                }
                registry.create(&name).await?;
                workspaces::select(root, &name)?;
                created(&name, style);
                return Ok(ExitCode::SUCCESS);
            }
            workspaces::select(root, &name)?;
            say(style, &format!("Switched to workspace {name:?}."));
        }
        Verb::Delete { name, force } => {
            if name == DEFAULT {
                return Err(WorkspaceError::DeleteDefault);
            }
            if name == current {
                return Err(WorkspaceError::DeleteActive(name));
            }
            if !registry.exists(&name).await? {
                eprintln!("Workspace {name:?} doesn't exist.");
                return Ok(ExitCode::FAILURE);
            }
            // What the workspace's estate still holds: its records.
            let estate = workspaces::estate(&ws.settings.base, &name);
            let kept = std::mem::replace(&mut ws.settings.estate, estate.clone());
            let held = ws
                .open_records(root, false, &mut |_| {})
                .await
                .map(|store| store.all().unwrap_or_default());
            ws.settings.estate = kept;
            let held = match held {
                Ok(h) => h,
                Err(d) => {
                    eprint!("{}", diag::render_all(&d, &ws.tree.sources(), style));
                    return Ok(ExitCode::FAILURE);
                }
            };
            if !held.is_empty() && !force {
                let list: String = held
                    .iter()
                    .map(|r| format!("  - {}\n", r.address))
                    .collect();
                let d = diag::Diagnostic::error(
                    "Workspace is not empty",
                    format!("Workspace {name:?} (estate {estate:?}) holds records of the following resource instances:\n{list}\nIts objects carry the estate's markers: deleting the workspace leaves them and their records in place, where no plan of another workspace sees them. Destroy them first (select the workspace, then choudoufu destroy), or use -force to delete the workspace from the list anyway; selecting a workspace of that name again finds them all."),
                );
                eprint!(
                    "{}",
                    diag::render_all(&d.into(), &diag::Sources::default(), style)
                );
                return Ok(ExitCode::FAILURE);
            }
            registry.delete(&name).await?;
            say(style, &format!("Deleted workspace {name:?}!"));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A line in terraform's green.
fn say(style: diag::Style, text: &str) {
    if style.color {
        out(&format!("\x1b[0m\x1b[32m{text}\x1b[0m"));
    } else {
        out(text);
    }
}

fn created(name: &str, style: diag::Style) {
    let head = format!("Created and switched to workspace {name:?}!");
    let body = "You're now on a new, empty workspace. Workspaces isolate their state,\nso if you run \"choudoufu plan\" it will not see any existing object\nof another workspace: each is its own estate.";
    if style.color {
        out(&format!(
            "\x1b[0m\x1b[32m\x1b[1m{head}\x1b[0m\x1b[32m\n\n{body}\x1b[0m"
        ));
    } else {
        out(&format!("{head}\n\n{body}"));
    }
}

/// The root's default aws provider, configured.
async fn aws_provider(ws: &mut Workspace) -> Result<GrpcProvider, diag::Diagnostics> {
    engine::planner::configure_providers(&ws.tree.module, ws.vars.clone(), &mut ws.sessions)
        .await?;
    let aws = engine::bind::aws::default_provider();
    Ok(ws.sessions.get(&aws).await?.clone())
}
