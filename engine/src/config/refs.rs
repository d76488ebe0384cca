//! The references an expression or a block body makes: what each
//! `var.x`, `local.y`, `aws_sqs_queue.q.arn` or `module.m.out` names.
//! Names bound by `for` expressions, template `for` directives and
//! `dynamic` block iterators are not references.

use super::{body::span_of, Expr, ResourceKey};
use crate::addr::Mode;
use crate::diag::Diagnostic;
use crate::source::{Range, SourceFile};
use hcl_edit::expr::{Expression, TraversalOperator};
use hcl_edit::structure::Body;
use hcl_edit::template::{Directive, Element, Template};

/// What a reference names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Target {
    Var(String),
    Local(String),
    Resource(ResourceKey),
    Module(String),
    Count,
    Each,
    Path,
    Terraform,
    SelfRef,
    /// A name that cannot start a reference, or a reference missing the
    /// attribute it needs (`var`, `aws_sqs_queue` alone, `data.x`): the
    /// root name and what terraform says about it.
    Invalid(String, &'static str),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Var(n) => write!(f, "var.{n}"),
            Target::Local(n) => write!(f, "local.{n}"),
            Target::Resource(k) => write!(f, "{k}"),
            Target::Module(n) => write!(f, "module.{n}"),
            Target::Count => f.write_str("count"),
            Target::Each => f.write_str("each"),
            Target::Path => f.write_str("path"),
            Target::Terraform => f.write_str("terraform"),
            Target::SelfRef => f.write_str("self"),
            Target::Invalid(n, _) => f.write_str(n),
        }
    }
}

/// One reference and where it is written.
#[derive(Debug, Clone)]
pub struct Reference {
    pub target: Target,
    pub range: Range,
    /// For a module call, the output named after it (`module.m.out`,
    /// `module.m[0].out`); `None` when the call is used as a whole.
    pub output: Option<String>,
}

/// The references in one expression.
pub fn references(e: &Expr) -> Vec<Reference> {
    let mut w = Walker {
        file: &e.file,
        bound: Vec::new(),
        out: Vec::new(),
        calls: None,
    };
    w.expr(&e.expr);
    w.out
}

/// What keeps `e` from being a constant, as hcl reports it when an
/// expression is evaluated with no context at all (`provider_meta`
/// arguments): each reference, and each function call (whose arguments
/// are then never looked at).
pub fn not_constant(e: &Expr) -> Vec<Diagnostic> {
    let mut w = Walker {
        file: &e.file,
        bound: Vec::new(),
        out: Vec::new(),
        calls: Some(Vec::new()),
    };
    w.expr(&e.expr);
    let calls = w.calls.unwrap_or_default();
    w.out
        .into_iter()
        .map(|r| {
            Diagnostic::error("Variables not allowed", "Variables may not be used here.")
                .at(r.range)
        })
        .chain(calls.into_iter().map(|at| {
            Diagnostic::error(
                "Function calls not allowed",
                "Functions may not be called here.",
            )
            .at(at)
        }))
        .collect()
}

/// The references anywhere in a body, nested and `dynamic` blocks included.
pub fn body_references(body: &Body, file: &SourceFile) -> Vec<Reference> {
    let mut w = Walker {
        file,
        bound: Vec::new(),
        out: Vec::new(),
        calls: None,
    };
    w.body(body);
    w.out
}

struct Walker<'a> {
    file: &'a SourceFile,
    bound: Vec<String>,
    out: Vec<Reference>,
    /// Where function calls are, when they are collected instead of
    /// walked into.
    calls: Option<Vec<Range>>,
}

impl Walker<'_> {
    fn body(&mut self, body: &Body) {
        for attr in body.attributes() {
            self.expr(&attr.value);
        }
        for block in body.blocks() {
            if block.ident.as_str() == "dynamic" {
                let label = block.labels.first().map(|l| l.as_str().to_string());
                let iterator = block
                    .body
                    .get_attribute("iterator")
                    .and_then(|a| super::keyword_path(&a.value))
                    .and_then(|p| p.first().cloned())
                    .or(label);
                for attr in block.body.attributes() {
                    if attr.key.as_str() != "iterator" {
                        self.expr(&attr.value);
                    }
                }
                let pushed = iterator.is_some();
                if let Some(it) = iterator {
                    self.bound.push(it);
                }
                for inner in block.body.blocks() {
                    self.body(&inner.body);
                }
                if pushed {
                    self.bound.pop();
                }
            } else {
                self.body(&block.body);
            }
        }
    }

    fn expr(&mut self, e: &Expression) {
        match e {
            Expression::Null(_)
            | Expression::Bool(_)
            | Expression::Number(_)
            | Expression::String(_) => {}
            Expression::Array(a) => a.iter().for_each(|x| self.expr(x)),
            Expression::Object(o) => {
                for (k, v) in o.iter() {
                    if let hcl_edit::expr::ObjectKey::Expression(k) = k {
                        // A bare identifier key is a literal name, not a
                        // reference, even when written in parentheses-free
                        // form; only parenthesised keys are expressions.
                        if !matches!(k, Expression::Variable(_)) {
                            self.expr(k);
                        }
                    }
                    self.expr(v.expr());
                }
            }
            Expression::StringTemplate(t) => self.template(t),
            Expression::HeredocTemplate(h) => self.template(&h.template),
            Expression::Parenthesis(p) => self.expr(p.inner()),
            Expression::Variable(v) => self.root(v.as_str(), &[], span_of(e)),
            Expression::Conditional(c) => {
                self.expr(&c.cond_expr);
                self.expr(&c.true_expr);
                self.expr(&c.false_expr);
            }
            Expression::FuncCall(f) => match &mut self.calls {
                Some(calls) => {
                    let name = &f.name;
                    let start = name.namespace.first().map_or(span_of(&name.name), span_of);
                    calls.push(self.file.range(start.start..span_of(&name.name).end));
                }
                None => f.args.iter().for_each(|x| self.expr(x)),
            },
            Expression::Traversal(t) => {
                let ops: Vec<&TraversalOperator> = t.operators.iter().map(|o| o.value()).collect();
                match &t.expr {
                    Expression::Variable(v) => self.root(v.as_str(), &ops, span_of(e)),
                    other => self.expr(other),
                }
                for op in ops {
                    if let TraversalOperator::Index(i) = op {
                        self.expr(i);
                    }
                }
            }
            Expression::UnaryOp(u) => self.expr(&u.expr),
            Expression::BinaryOp(b) => {
                self.expr(&b.lhs_expr);
                self.expr(&b.rhs_expr);
            }
            Expression::ForExpr(f) => {
                self.expr(&f.intro.collection_expr);
                let n = self.bind(
                    f.intro.key_var.as_ref().map(|k| k.as_str()),
                    f.intro.value_var.as_str(),
                );
                if let Some(k) = &f.key_expr {
                    self.expr(k);
                }
                self.expr(&f.value_expr);
                if let Some(c) = &f.cond {
                    self.expr(&c.expr);
                }
                self.bound.truncate(self.bound.len() - n);
            }
        }
    }

    fn bind(&mut self, key: Option<&str>, value: &str) -> usize {
        self.bound.push(value.to_string());
        match key {
            Some(k) => {
                self.bound.push(k.to_string());
                2
            }
            None => 1,
        }
    }

    fn template(&mut self, t: &Template) {
        for el in t.iter() {
            match el {
                Element::Literal(_) => {}
                Element::Interpolation(i) => self.expr(&i.expr),
                Element::Directive(d) => match d.as_ref() {
                    Directive::If(i) => {
                        self.expr(&i.if_expr.cond_expr);
                        self.template(&i.if_expr.template);
                        if let Some(e) = &i.else_expr {
                            self.template(&e.template);
                        }
                    }
                    Directive::For(f) => {
                        self.expr(&f.for_expr.collection_expr);
                        let n = self.bind(
                            f.for_expr.key_var.as_ref().map(|k| k.as_str()),
                            f.for_expr.value_var.as_str(),
                        );
                        self.template(&f.for_expr.template);
                        self.bound.truncate(self.bound.len() - n);
                    }
                },
            }
        }
    }

    fn root(&mut self, name: &str, ops: &[&TraversalOperator], span: std::ops::Range<usize>) {
        if self.bound.iter().any(|b| b == name) {
            return;
        }
        let attr = |i: usize| match ops.get(i) {
            Some(TraversalOperator::GetAttr(a)) => Some(a.as_str().to_string()),
            _ => None,
        };
        let target = match name {
            "var" => attr(0).map(Target::Var),
            "local" => attr(0).map(Target::Local),
            "module" => attr(0).map(Target::Module),
            "count" => Some(Target::Count),
            "each" => Some(Target::Each),
            "path" => Some(Target::Path),
            "terraform" => Some(Target::Terraform),
            "self" => Some(Target::SelfRef),
            "data" => match (attr(0), attr(1)) {
                (Some(t), Some(n)) => Some(Target::Resource(ResourceKey {
                    mode: Mode::Data,
                    type_name: t,
                    name: n,
                })),
                _ => {
                    self.push(Target::Invalid(name.into(), "The \"data\" object must be followed by two attribute names: the data source type and the resource name."), span);
                    return;
                }
            },
            "resource" | "ephemeral" => None,
            other => attr(0).map(|n| {
                Target::Resource(ResourceKey {
                    mode: Mode::Managed,
                    type_name: other.to_string(),
                    name: n,
                })
            }),
        };
        let target = target.unwrap_or_else(|| {
            let why = match name {
                "var" => "The \"var\" object cannot be accessed directly. Instead, access one of its attributes.",
                "local" => "The \"local\" object cannot be accessed directly. Instead, access one of its attributes.",
                "module" => "The \"module\" object cannot be accessed directly. Instead, access one of its attributes.",
                _ => "A reference to a resource type must be followed by at least one attribute access, specifying the resource name.",
            };
            Target::Invalid(name.to_string(), why)
        });
        let output = match (&target, ops.get(1)) {
            (Target::Module(_), Some(TraversalOperator::GetAttr(_))) => attr(1),
            (
                Target::Module(_),
                Some(TraversalOperator::Index(_) | TraversalOperator::LegacyIndex(_)),
            ) => attr(2),
            _ => None,
        };
        self.out.push(Reference {
            target,
            range: self.file.range(span),
            output,
        });
    }

    fn push(&mut self, target: Target, span: std::ops::Range<usize>) {
        self.out.push(Reference {
            target,
            range: self.file.range(span),
            output: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(src: &str) -> Vec<String> {
        let file = SourceFile::new("t.tf", src);
        let e = Expr::new(hcl_edit::parser::parse_expr(src).unwrap(), file);
        references(&e)
            .iter()
            .map(|r| r.target.to_string())
            .collect()
    }

    #[test]
    fn finds_every_kind_of_reference() {
        assert_eq!(
            refs("\"${var.a}-${local.b}\" == aws_sqs_queue.q[0].arn ? module.m.x : data.aws_iam_policy_document.p.json"),
            ["var.a", "local.b", "aws_sqs_queue.q", "module.m", "data.aws_iam_policy_document.p"]
        );
        assert_eq!(refs("{ for k, v in var.m : k => v.id if v.on }"), ["var.m"]);
        assert_eq!(
            refs("[for x in local.l : \"%{for y in x}${y}${var.z}%{endfor}\"]"),
            ["local.l", "var.z"]
        );
        assert_eq!(refs("lookup(each.value, count.index)"), ["each", "count"]);
        assert_eq!(refs("var"), ["var"]);
    }

    #[test]
    fn a_constant_has_no_references_and_calls_no_function() {
        let problems = |src: &str| {
            let file = SourceFile::new("t.tf", src);
            let e = Expr::new(hcl_edit::parser::parse_expr(src).unwrap(), file);
            not_constant(&e)
                .into_iter()
                .map(|d| (d.summary, d.subject.unwrap().start.column))
                .collect::<Vec<_>>()
        };
        assert!(problems("{ a = [for x in [1, 2] : x * 2], b = \"s\" }").is_empty());
        assert_eq!(
            problems("var.a + upper(local.b)"),
            [
                ("Variables not allowed".to_string(), 1),
                ("Function calls not allowed".to_string(), 9)
            ]
        );
    }

    #[test]
    fn a_module_reference_names_its_output() {
        let outputs = |src: &str| {
            let file = SourceFile::new("t.tf", src);
            let e = Expr::new(hcl_edit::parser::parse_expr(src).unwrap(), file);
            references(&e)
                .into_iter()
                .map(|r| r.output)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            outputs("[module.a.x, module.b[0].y, module.c[\"k\"].z, module.d, module.e[*].w]"),
            [
                Some("x".to_string()),
                Some("y".to_string()),
                Some("z".to_string()),
                None,
                None
            ]
        );
    }
}
