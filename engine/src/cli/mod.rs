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

/// Opens the root in the working directory, with `cli`'s variables, on a
/// runtime of its own, and runs `f` on it; the providers are stopped
/// after. A root that cannot be opened is reported in `style`.
pub(crate) fn in_workspace(
    cli: &[CliInput],
    style: diag::Style,
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
                eprint!("{}", diag::render_all(&e.diagnostics, &e.sources, style));
                return ExitCode::FAILURE;
            }
        };
        let code = f(&root, &mut ws).await;
        ws.sessions.close().await;
        code
    })
}
