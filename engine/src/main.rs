//! The `choudoufu` command line: terraform's verbs over a stateless engine.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
        Command::Providers {
            command: ProvidersCommand::Schema { json: _ },
        } => return report(providers_schema()),
    }
    ExitCode::SUCCESS
}

fn providers_schema() -> anyhow::Result<()> {
    use engine::provider::schema::TerraformSchemas;
    use engine::provider::{cache::SchemaCache, plugin::LaunchOptions, required_schemas};
    use std::io::Write;
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
