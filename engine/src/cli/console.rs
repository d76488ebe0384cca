//! `choudoufu console`: expressions read from stdin, each answered as
//! `terraform console` answers it.

use engine::diag;
use engine::eval::{self, format, EvalError};
use std::io::{BufRead, Write};

/// The console loop; returns the exit code (1 if any expression failed).
pub(crate) fn console(no_color: bool) -> u8 {
    // In a root, its variables and locals are in scope.
    let root = std::env::current_dir().unwrap_or_default();
    let (module, diags) = engine::config::load(&root);
    let style = diag::Style::new(!no_color);
    if diags.has_errors() {
        eprint!("{}", diag::render_all(&diags, module.sources(), style));
        return 1;
    }
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let scope = match engine::eval::inputs::collect(&module, &[], &env)
        .and_then(|vars| engine::eval::module::console_scope(&module, vars))
    {
        Ok(scope) => scope,
        Err(d) => {
            eprint!("{}", diag::render_all(&d, module.sources(), style));
            return 1;
        }
    };
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
        // References to what the root does not declare get terraform's
        // words before evaluation, as in a block.
        if let Ok(expr) = hcl_edit::parser::parse_expr(line) {
            let file = engine::source::SourceFile::new("<console-input>", line.to_string());
            let refs = engine::config::refs::references(&engine::config::Expr::new(expr, file));
            if let Some(d) = engine::graph::check_references(&module, &refs)
                .iter()
                .next()
            {
                failed = true;
                let d = EvalError::new(d.summary.clone(), d.detail.clone());
                eprint!("{}", render_diagnostic(&d, no_color));
                continue;
            }
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
pub(crate) fn render_diagnostic(d: &EvalError, no_color: bool) -> String {
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
    let out = diag::render(&d, &diag::Sources::default(), diag::Style::new(!no_color));
    if no_color {
        out
    } else {
        format!("{out}\x1b[0m\x1b[0m\n")
    }
}
