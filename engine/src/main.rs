//! The `choudoufu` command line: terraform's verbs over a stateless engine.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
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
    let body = [
        String::new(),
        "  on <console-input> line 1:".to_string(),
        "  (source code not available)".to_string(),
        String::new(),
    ];
    if no_color {
        let mut out = format!("\nError: {}\n", d.summary);
        for l in body {
            out.push_str(&l);
            out.push('\n');
        }
        for l in wrap(&d.detail, 77) {
            out.push_str(&l);
            out.push('\n');
        }
        out.push('\n');
        return out;
    }
    let bar = "\x1b[31m│\x1b[0m \x1b[0m";
    let mut out = String::from("\x1b[31m\x1b[31m╷\x1b[0m\x1b[0m\n");
    out.push_str(&format!(
        "{bar}\x1b[1m\x1b[31mError: \x1b[0m\x1b[0m\x1b[1m{}\x1b[0m\n",
        d.summary
    ));
    out.push_str(&format!("{bar}\n{bar}\x1b[0m  on <console-input> line 1:\n{bar}  (source code not available)\n{bar}\n"));
    for l in wrap(&d.detail, 75) {
        out.push_str(&format!("{bar}{l}\n"));
    }
    out.push_str("\x1b[31m╵\x1b[0m\x1b[0m\n\x1b[0m\x1b[0m\n");
    out
}

/// Greedy word wrap of each line of `text` at `width` columns, as
/// terraform wraps diagnostic details; indented lines are left alone.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for para in text.split('\n') {
        if para.starts_with(' ') {
            lines.push(para.to_string());
            continue;
        }
        let mut cur = String::new();
        for word in para.split(' ') {
            if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > width {
                lines.push(std::mem::take(&mut cur));
            } else if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(word);
        }
        lines.push(cur);
    }
    lines
}
