//! The `choudoufu` command line: terraform's verbs over a stateless engine.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use engine::diag;
use engine::eval::{self, format, Diagnostic, Scope};
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
    /// Show information about the providers the root in the working
    /// directory requires.
    Providers {
        #[command(subcommand)]
        command: ProvidersCommand,
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
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    serde_json::to_writer(&mut out, &document)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
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
    let scope = Scope::default();
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
