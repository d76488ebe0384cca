//! Evaluation: terraform expressions to values.
//!
//! `eval` owns the expression evaluator (`expr`), the built-in functions
//! (`funcs`) and the console's printing of values (`format`), over the
//! value model in `crate::value`. It knows nothing of live objects, providers or
//! configuration files: it computes values from expressions and the names in
//! a [`Scope`], and does no I/O beyond the filesystem functions. Unknown
//! values and the sensitive mark propagate through everything it computes.

pub mod body;
pub mod error;
pub mod expr;
pub mod format;
pub mod funcs;
pub mod inputs;
pub mod module;

pub use error::EvalError;
pub use expr::Scope;

use crate::value::Value;

/// Parses and evaluates one expression in `scope`.
pub fn eval_str(scope: &Scope, src: &str) -> error::Result<Value> {
    let expr = hcl_edit::parser::parse_expr(src).map_err(|e| {
        let detail = if src.trim().is_empty() || e.message().contains("end of input") {
            "Expected the start of an expression, but found the end of the file.".to_string()
        } else {
            format!("{}.", e.message().trim_end_matches('.'))
        };
        EvalError::new("Invalid expression", detail)
    })?;
    scope.eval(&expr)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(src: &str) -> String {
        format::console(&eval_str(&Scope::default(), src).unwrap())
    }

    #[test]
    fn console_formats_collections_like_terraform() {
        assert_eq!(show("tolist([1,2])"), "tolist([\n  1,\n  2,\n])");
        assert_eq!(
            show("{a={b=[1]}}"),
            "{\n  \"a\" = {\n    \"b\" = [\n      1,\n    ]\n  }\n}"
        );
        assert_eq!(show("true ? null : 1"), "tonumber(null)");
        assert_eq!(show("[\"a\\nb\"]"), "[\n  <<-EOT\n  a\n  b\n  EOT,\n]");
    }

    #[test]
    fn unification_matches_terraform() {
        assert_eq!(show("true ? 1 : \"x\""), "\"1\"");
        assert_eq!(
            show("tolist([1, \"a\"])"),
            "tolist([\n  \"1\",\n  \"a\",\n])"
        );
        assert_eq!(show("true ? {a=1} : {b=2}"), "tomap({\n  \"a\" = 1\n})");
    }
}
