//! The verbs of the `choudoufu` command line, one file each; `main.rs`
//! parses the arguments and dispatches.

pub mod console;
pub mod init;
pub mod migrate;
pub mod output;
pub mod plan;
pub mod providers;
pub mod records;
pub mod unlock;
pub mod validate;
pub mod workspace;

use engine::diag;
use engine::eval::inputs::CliInput;
use engine::workspace::Workspace;
use std::path::Path;
use std::process::ExitCode;

/// Where a command's words go: terraform's human text (diagnostics on
/// stderr), or terraform's machine-readable stream on stdout (`-json`).
#[derive(Clone, Copy)]
pub(crate) enum Ui {
    Human(diag::Style),
    Json,
}

impl Ui {
    pub(crate) fn diagnostics(self, d: &diag::Diagnostics, sources: &diag::Sources) {
        match self {
            Ui::Human(style) => eprint!("{}", diag::render_all(d, sources, style)),
            Ui::Json => {
                for line in engine::json_ui::diagnostics(d, sources) {
                    println!("{line}");
                }
            }
        }
    }

    /// An error with no place in the configuration; exit 1.
    pub(crate) fn fail(self, e: anyhow::Error) -> ExitCode {
        match self {
            Ui::Human(_) => crate::report(Err(e)),
            Ui::Json => {
                let d = diag::Diagnostic::error(format!("{e:#}"), "");
                self.diagnostics(&d.into(), &diag::Sources::default());
                ExitCode::FAILURE
            }
        }
    }

    /// A line of the command's own: printed, or streamed as a `log`.
    pub(crate) fn say(self, text: &str) {
        match self {
            Ui::Human(_) => println!("{text}"),
            Ui::Json => println!("{}", engine::json_ui::log(text.trim())),
        }
    }
}

/// Opens the root in the working directory, with `cli`'s variables, on a
/// runtime of its own, and runs `f` on it; the providers are stopped
/// after. A root that cannot be opened is reported through `ui`.
pub(crate) fn in_workspace(
    cli: &[CliInput],
    ui: Ui,
    f: impl AsyncFnOnce(&Path, &mut Workspace) -> ExitCode,
) -> ExitCode {
    use engine::provider::plugin::LaunchOptions;
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return crate::report(Err(e.into())),
    };
    let root = match std::env::current_dir() {
        Ok(r) => r,
        Err(e) => return crate::report(Err(e.into())),
    };
    runtime.block_on(async {
        let mut ws = match Workspace::open(&root, cli, &env, LaunchOptions::from_env()).await {
            Ok(ws) => ws,
            Err(e) => {
                ui.diagnostics(&e.diagnostics, &e.sources);
                return ExitCode::FAILURE;
            }
        };
        let code = f(&root, &mut ws).await;
        ws.sessions.close().await;
        code
    })
}
