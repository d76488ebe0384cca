//! `choudoufu init`: the working directory made ready, as `terraform init`
//! does.

use crate::report;
use engine::diag;
use std::process::ExitCode;

/// `choudoufu init`: exit 0 when the working directory is ready.
pub(crate) fn run_init(
    upgrade: bool,
    plugin_dirs: Vec<std::path::PathBuf>,
    lockfile: Option<&str>,
    no_color: bool,
) -> ExitCode {
    let style = diag::Style::new(!no_color);
    let lockfile_readonly = match lockfile {
        None => false,
        Some("readonly") => true,
        Some(other) => {
            let d = diag::Diagnostic::error(
                "Invalid argument",
                format!("The -lockfile option accepts only \"readonly\", not {other:?}."),
            );
            eprint!(
                "{}",
                diag::render_all(&d.into(), &Default::default(), style)
            );
            return ExitCode::FAILURE;
        }
    };
    let root = match std::env::current_dir() {
        Ok(r) => r,
        Err(e) => return report(Err(e.into())),
    };
    let options = engine::init::Options {
        upgrade,
        plugin_dirs,
        lockfile_readonly,
        color: !no_color,
    };
    let mut out = std::io::stdout().lock();
    match engine::init::init(&root, &options, &mut out) {
        Ok(warned) => {
            eprint!(
                "{}",
                diag::render_all(&warned.warnings, &warned.sources, style)
            );
            ExitCode::SUCCESS
        }
        Err(failed) => {
            eprint!(
                "{}",
                diag::render_all(&failed.diagnostics, &failed.sources, style)
            );
            ExitCode::FAILURE
        }
    }
}
