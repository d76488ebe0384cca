//! The template functions: `templatefile` renders a file, `templatestring`
//! a string from elsewhere, both with the given variables and nothing
//! else in scope.
//!
//! Before rendering, every name the template refers to is checked against
//! the variables, so a missing one is reported with its line and column as
//! terraform reports it. Inside a template neither template function may
//! be called again, and a `templatestring` template may not read files;
//! `expr` refuses those calls, since only it knows where it is evaluating.

use super::{arg_error, fs, Func, FuncResult, Param};
use crate::eval::expr::Scope;
use crate::value::convert::convert;
use crate::value::{go_quote, Kind, Type, Value};
use std::collections::BTreeMap;
use std::ops::Range;

/// The name errors give a `templatestring` template.
const STRING_NAME: &str = "<templatestring argument>";

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "templatefile" => Func::new(
            vec![
                Param::new("path", Type::String).marked(),
                Param::new("vars", Type::Dynamic),
            ],
            Type::Dynamic,
            templatefile,
        ),
        // `expr` checks that the template argument is a reference before
        // evaluating it; here it is the referenced value.
        "templatestring" => Func::new(
            vec![
                Param::new("template", Type::Dynamic).nullable(),
                Param::new("vars", Type::Dynamic),
            ],
            Type::String,
            templatestring,
        ),
        _ => return None,
    })
}

fn templatefile(a: Vec<Value>) -> FuncResult {
    let sensitive = a[0].sensitive;
    let name = a[0].as_str().unwrap_or_default().to_string();
    let src = fs::read_text(&name, sensitive)?;
    let template = hcl_edit::parser::parse_template(&src).map_err(|e| parse_error(&name, &e))?;
    let v = render(&src, &template, &name, &a[1], false)?;
    let marked = sensitive || v.sensitive;
    Ok(v.with_sensitive(marked))
}

fn templatestring(a: Vec<Value>) -> FuncResult {
    let Some(src) = a[0].as_str() else {
        return Err(arg_error(
            "template",
            "invalid template value: a string is required",
        ));
    };
    let template = hcl_edit::parser::parse_template(src).map_err(|e| {
        arg_error(
            "template",
            format!("invalid template: {}", parse_error(STRING_NAME, &e)),
        )
    })?;
    let v = render(src, &template, STRING_NAME, &a[1], true)?;
    convert(v, &Type::String).map_err(|e| format!("invalid template result: {}", e.message))
}

fn parse_error(name: &str, e: &hcl_edit::parser::Error) -> String {
    let at = e.location();
    format!(
        "{name}:{},{}-{}: Invalid template; {}.",
        at.line(),
        at.column(),
        at.column(),
        e.message().trim_end_matches('.')
    )
}

/// Renders a parsed template with `vars` as its only names.
fn render(
    src: &str,
    template: &hcl_edit::template::Template,
    name: &str,
    vars: &Value,
    refuse_files: bool,
) -> FuncResult {
    let vars: BTreeMap<String, Value> = match &vars.kind {
        Kind::Object(m) | Kind::Map(_, m) => m.clone(),
        _ => return Err(arg_error("vars", "invalid vars value: must be a map")),
    };
    for k in vars.keys() {
        if !valid_identifier(k) {
            return Err(arg_error(
                "vars",
                format!("invalid template variable name {}: must start with a letter, followed by zero or more letters, digits, and underscores", go_quote(k)),
            ));
        }
    }
    let mut refs = References::default();
    hcl_edit::visit::Visit::visit_template(&mut refs, template);
    if let Some((root, span)) = refs.found.iter().find(|(r, _)| !vars.contains_key(r)) {
        return Err(arg_error(
            "vars",
            format!(
                "vars map does not contain key {}, referenced at {name}:{}",
                go_quote(root),
                range_text(src, span.clone())
            ),
        ));
    }
    let scope = vars
        .iter()
        .fold(Scope::default(), |s, (k, v)| s.with(k, v.clone()))
        .in_template(refuse_files);
    let whole = 0..src.len();
    let v = scope.eval_template(template).map_err(|d| {
        let at = d.span.clone().unwrap_or(whole.clone());
        format!(
            "{name}:{}: {}; {}",
            range_text(src, at),
            d.summary,
            d.detail
        )
    })?;
    if v.is_null() {
        return Err(format!(
            "{name}:{}: Template result is null; The result of the template is null, which is not a valid result for a templatestring call.",
            range_text(src, whole)
        ));
    }
    Ok(v)
}

/// HCL's identifier rule: a letter or underscore, then letters, digits,
/// underscores and dashes.
fn valid_identifier(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f.is_alphabetic() || f == '_')
        && c.all(|x| x.is_alphanumeric() || x == '_' || x == '-')
}

/// A byte range as HCL prints it: `line,col-col` or `line,col-line,col`.
fn range_text(src: &str, r: Range<usize>) -> String {
    let pos = |at: usize| {
        let before = &src[..at.min(src.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        (line, col)
    };
    let ((l1, c1), (l2, c2)) = (pos(r.start), pos(r.end));
    if l1 == l2 {
        format!("{l1},{c1}-{c2}")
    } else {
        format!("{l1},{c1}-{l2},{c2}")
    }
}

/// The root names a template refers to, in source order, with where each
/// appears; names bound by `for` are not references.
#[derive(Default)]
struct References {
    bound: Vec<String>,
    found: Vec<(String, Range<usize>)>,
}

impl References {
    fn within(&mut self, names: &[&str], f: impl FnOnce(&mut Self)) {
        let n = self.bound.len();
        self.bound.extend(names.iter().map(|s| s.to_string()));
        f(self);
        self.bound.truncate(n);
    }
}

impl hcl_edit::visit::Visit for References {
    fn visit_expr(&mut self, e: &hcl_edit::expr::Expression) {
        use hcl_edit::Span;
        if let hcl_edit::expr::Expression::Variable(v) = e {
            let name = v.as_str();
            if !self.bound.iter().any(|b| b == name) {
                self.found
                    .push((name.to_string(), v.span().unwrap_or_default()));
            }
            return;
        }
        hcl_edit::visit::visit_expr(self, e);
    }

    fn visit_for_expr(&mut self, f: &hcl_edit::expr::ForExpr) {
        self.visit_expr(&f.intro.collection_expr);
        let mut names = vec![f.intro.value_var.as_str()];
        names.extend(f.intro.key_var.as_ref().map(|k| k.as_str()));
        self.within(&names, |s| {
            if let Some(k) = &f.key_expr {
                s.visit_expr(k);
            }
            s.visit_expr(&f.value_expr);
            if let Some(c) = &f.cond {
                s.visit_expr(&c.expr);
            }
        });
    }

    fn visit_for_template_expr(&mut self, f: &hcl_edit::template::ForTemplateExpr) {
        self.visit_expr(&f.collection_expr);
        let mut names = vec![f.value_var.as_str()];
        names.extend(f.key_var.as_ref().map(|k| k.as_str()));
        self.within(&names, |s| s.visit_template(&f.template));
    }
}
