//! `choudoufu validate`: terraform's verdicts on terraform's lines, human
//! or JSON.

use crate::report;
use engine::diag;
use std::process::ExitCode;

/// `validate -json`, its fields in terraform's order.
#[derive(serde::Serialize)]
struct ValidateJson {
    format_version: &'static str,
    valid: bool,
    error_count: usize,
    warning_count: usize,
    diagnostics: Vec<diag::JsonDiagnostic>,
}

/// `choudoufu validate`: exit 0 when valid, 1 when not.
pub(crate) fn validate(json: bool, no_color: bool) -> ExitCode {
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
        let doc = ValidateJson {
            format_version: "1.0",
            valid: v.is_valid(),
            error_count: d.errors(),
            warning_count: d.warnings(),
            diagnostics: d.iter().map(|x| diag::to_json(x, &v.sources)).collect(),
        };
        match serde_json::to_string_pretty(&doc) {
            Ok(text) => println!("{text}"),
            Err(e) => return report(Err(e.into())),
        }
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
