//! The `choudoufu` command line: terraform's verbs over a stateless engine.

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
}

fn main() {
    let cli = Cli::parse_from(std::env::args().map(|a| {
        if a == "-no-color" {
            "--no-color".to_string()
        } else {
            a
        }
    }));
    match cli.command {
        Command::Version { json } => {
            if json {
                let v = serde_json::json!({ "choudoufu_version": engine::VERSION });
                println!("{v:#}");
            } else {
                println!("choudoufu v{}", engine::VERSION);
            }
        }
        Command::Console { no_color } => std::process::exit(console(no_color)),
    }
}

/// The console loop; returns the exit code (1 if any expression failed).
fn console(no_color: bool) -> i32 {
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
    i32::from(failed)
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
