//! The dependency graph of one module: which blocks each block refers to,
//! through references and `depends_on`, checked against what the module
//! declares, in an order that evaluates every block after what it needs.

use crate::addr::Mode;
use crate::config::refs::{Reference, Target};
use crate::config::{Expr, Module, ProviderRef, ResourceKey};
use crate::diag::{suggest, Diagnostic, Diagnostics};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// One block of a module that has a value or an effect.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Node {
    Variable(String),
    Local(String),
    Provider(ProviderRef),
    Resource(ResourceKey),
    ModuleCall(String),
    Output(String),
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Variable(n) => write!(f, "var.{n}"),
            Node::Local(n) => write!(f, "local.{n}"),
            Node::Provider(p) => write!(f, "{p}"),
            Node::Resource(k) => write!(f, "{k}"),
            Node::ModuleCall(n) => write!(f, "module.{n}"),
            Node::Output(n) => write!(f, "output.{n}"),
        }
    }
}

/// Every node and what it depends on.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    deps: BTreeMap<Node, BTreeSet<Node>>,
}

/// Where a reference is written: what is allowed there.
#[derive(Clone, Copy)]
struct Context {
    count: bool,
    for_each: bool,
    self_ok: bool,
}

const PLAIN: Context = Context {
    count: false,
    for_each: false,
    self_ok: false,
};

impl Graph {
    /// Builds the graph of `module`, reporting every reference to
    /// something the module does not declare, or that is not available
    /// where it is written.
    pub fn build(module: &Module) -> (Graph, Diagnostics) {
        Graph::build_in(module, "")
    }

    /// Builds the graph of the module at `address` (`module.app`; empty for
    /// the root), which its diagnostics name.
    pub fn build_in(module: &Module, address: &str) -> (Graph, Diagnostics) {
        let mut b = Builder {
            module,
            address,
            graph: Graph::default(),
            diags: Diagnostics::default(),
        };
        for name in module.variables.keys() {
            b.graph
                .deps
                .entry(Node::Variable(name.clone()))
                .or_default();
        }
        for (name, local) in &module.locals {
            b.expr(Node::Local(name.clone()), &local.expr, PLAIN);
        }
        for (key, p) in &module.providers {
            let node = Node::Provider(key.clone());
            b.graph.deps.entry(node.clone()).or_default();
            b.refs(node, p.config.references(), PLAIN);
        }
        for (key, r) in &module.resources {
            let node = Node::Resource(key.clone());
            b.graph.deps.entry(node.clone()).or_default();
            let ctx = Context {
                count: r.count.is_some(),
                for_each: r.for_each.is_some(),
                self_ok: false,
            };
            for meta in r.count.iter().chain(&r.for_each) {
                b.expr(node.clone(), meta, PLAIN);
            }
            b.refs(node.clone(), r.config.references(), ctx);
            for d in &r.depends_on {
                b.expr(node.clone(), d, PLAIN);
            }
            for t in &r.lifecycle.replace_triggered_by {
                b.expr(node.clone(), t, ctx);
            }
            for c in r.lifecycle.preconditions.iter() {
                b.expr(node.clone(), &c.condition, ctx);
                b.expr(node.clone(), &c.error_message, ctx);
            }
            for c in r.lifecycle.postconditions.iter() {
                let post = Context {
                    self_ok: true,
                    ..ctx
                };
                b.expr(node.clone(), &c.condition, post);
                b.expr(node.clone(), &c.error_message, post);
            }
            let p = r.provider_ref();
            if module.providers.contains_key(&p) {
                b.graph
                    .deps
                    .get_mut(&node)
                    .unwrap()
                    .insert(Node::Provider(p));
            }
        }
        for (name, call) in &module.module_calls {
            let node = Node::ModuleCall(name.clone());
            b.graph.deps.entry(node.clone()).or_default();
            let ctx = Context {
                count: call.count.is_some(),
                for_each: call.for_each.is_some(),
                self_ok: false,
            };
            for meta in call.count.iter().chain(&call.for_each) {
                b.expr(node.clone(), meta, PLAIN);
            }
            for e in call.inputs.values() {
                b.expr(node.clone(), e, ctx);
            }
            for d in &call.depends_on {
                b.expr(node.clone(), d, PLAIN);
            }
        }
        for (name, out) in &module.outputs {
            let node = Node::Output(name.clone());
            b.expr(node.clone(), &out.value, PLAIN);
            for d in &out.depends_on {
                b.expr(node.clone(), d, PLAIN);
            }
            for c in &out.preconditions {
                b.expr(node.clone(), &c.condition, PLAIN);
            }
        }
        for c in &module.checks {
            b.refs_only(&c.condition, PLAIN);
        }
        (b.graph, b.diags)
    }

    /// What `node` depends on directly.
    pub fn deps(&self, node: &Node) -> impl Iterator<Item = &Node> {
        self.deps.get(node).into_iter().flatten()
    }

    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.deps.keys()
    }

    /// Every node after everything it depends on, or the cycles that make
    /// such an order impossible, each as the nodes in it.
    pub fn order(&self) -> Result<Vec<Node>, Vec<Vec<Node>>> {
        let cycles = self.cycles();
        if !cycles.is_empty() {
            return Err(cycles);
        }
        let mut out = Vec::with_capacity(self.deps.len());
        let mut done = BTreeSet::new();
        for n in self.deps.keys() {
            self.visit(n, &mut done, &mut out);
        }
        Ok(out)
    }

    fn visit<'a>(&'a self, n: &'a Node, done: &mut BTreeSet<&'a Node>, out: &mut Vec<Node>) {
        if !done.insert(n) {
            return;
        }
        for d in self.deps(n) {
            self.visit(d, done, out);
        }
        out.push(n.clone());
    }

    /// Strongly connected components with more than one node, or one node
    /// depending on itself (Tarjan's algorithm).
    fn cycles(&self) -> Vec<Vec<Node>> {
        struct T<'a> {
            g: &'a Graph,
            index: BTreeMap<&'a Node, usize>,
            low: BTreeMap<&'a Node, usize>,
            stack: Vec<&'a Node>,
            on_stack: BTreeSet<&'a Node>,
            next: usize,
            out: Vec<Vec<Node>>,
        }
        impl<'a> T<'a> {
            fn strong(&mut self, v: &'a Node) {
                self.index.insert(v, self.next);
                self.low.insert(v, self.next);
                self.next += 1;
                self.stack.push(v);
                self.on_stack.insert(v);
                for w in self.g.deps(v) {
                    if !self.index.contains_key(w) {
                        self.strong(w);
                        let lw = self.low[w];
                        let lv = self.low.get_mut(v).unwrap();
                        *lv = (*lv).min(lw);
                    } else if self.on_stack.contains(w) {
                        let iw = self.index[w];
                        let lv = self.low.get_mut(v).unwrap();
                        *lv = (*lv).min(iw);
                    }
                }
                if self.low[v] == self.index[v] {
                    let mut comp = Vec::new();
                    while let Some(w) = self.stack.pop() {
                        self.on_stack.remove(w);
                        comp.push(w.clone());
                        if w == v {
                            break;
                        }
                    }
                    let self_loop = self.g.deps(v).any(|d| d == v);
                    if comp.len() > 1 || self_loop {
                        comp.sort();
                        self.out.push(comp);
                    }
                }
            }
        }
        let mut t = T {
            g: self,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            on_stack: BTreeSet::new(),
            next: 0,
            out: Vec::new(),
        };
        for v in self.deps.keys() {
            if !t.index.contains_key(v) {
                t.strong(v);
            }
        }
        t.out
    }
}

/// Checks references written outside any block (the console's input)
/// against what `module` declares, with terraform's errors.
pub fn check_references(module: &Module, refs: &[Reference]) -> Diagnostics {
    let mut b = Builder {
        module,
        address: "",
        graph: Graph::default(),
        diags: Diagnostics::default(),
    };
    for r in refs {
        b.check(r, PLAIN);
    }
    b.diags
}

/// The diagnostic for a cycle, naming every block in it.
pub fn cycle_diagnostic(cycle: &[Node]) -> Diagnostic {
    cycle_in_module("", cycle)
}

/// The diagnostic for a cycle in the module at `address` (empty for the
/// root), naming every block in it as terraform does: `module.app.local.a`.
pub fn cycle_in_module(address: &str, cycle: &[Node]) -> Diagnostic {
    let names: Vec<String> = cycle
        .iter()
        .map(|n| {
            if address.is_empty() {
                n.to_string()
            } else {
                format!("{address}.{n}")
            }
        })
        .collect();
    Diagnostic::error(format!("Cycle: {}", names.join(", ")), "")
}

struct Builder<'a> {
    module: &'a Module,
    address: &'a str,
    graph: Graph,
    diags: Diagnostics,
}

impl Builder<'_> {
    fn expr(&mut self, node: Node, e: &Expr, ctx: Context) {
        self.graph.deps.entry(node.clone()).or_default();
        self.refs(node, e.references(), ctx);
    }

    fn refs_only(&mut self, e: &Expr, ctx: Context) {
        for r in e.references() {
            self.check(&r, ctx);
        }
    }

    fn refs(&mut self, node: Node, refs: Vec<Reference>, ctx: Context) {
        for r in refs {
            if let Some(dep) = self.check(&r, ctx) {
                self.graph.deps.entry(node.clone()).or_default().insert(dep);
            }
        }
    }

    /// The node a reference depends on, or a diagnostic if it names
    /// nothing declared or is not allowed where it is written.
    fn check(&mut self, r: &Reference, ctx: Context) -> Option<Node> {
        let m = self.module;
        let within = if self.address.is_empty() {
            "the root module"
        } else {
            self.address
        };
        let err =
            |summary: &str, detail: String| Diagnostic::error(summary, detail).at(r.range.clone());
        let problem = match &r.target {
            Target::Var(n) if m.variables.contains_key(n) => return Some(Node::Variable(n.clone())),
            Target::Var(n) => err(
                "Reference to undeclared input variable",
                format!("An input variable with the name \"{n}\" has not been declared.{} This variable can be declared with a variable \"{n}\" {{}} block.", suggest(n, m.variables.keys())),
            ),
            Target::Local(n) if m.locals.contains_key(n) => return Some(Node::Local(n.clone())),
            Target::Local(n) => err(
                "Reference to undeclared local value",
                format!("A local value with the name \"{n}\" has not been declared.{}", suggest(n, m.locals.keys())),
            ),
            Target::Resource(k) if m.resources.contains_key(k) => return Some(Node::Resource(k.clone())),
            Target::Resource(k) => {
                let kind = match k.mode {
                    Mode::Managed => "managed",
                    Mode::Data => "data",
                };
                err(
                    "Reference to undeclared resource",
                    format!("A {kind} resource \"{}\" \"{}\" has not been declared in {within}.", k.type_name, k.name),
                )
            }
            Target::Module(n) if m.module_calls.contains_key(n) => return Some(Node::ModuleCall(n.clone())),
            Target::Module(n) => err(
                "Reference to undeclared module",
                format!("No module call named \"{n}\" is declared in {within}.{}", suggest(n, m.module_calls.keys())),
            ),
            Target::Count if ctx.count => return None,
            Target::Count => err(
                "Reference to \"count\" in non-counted context",
                "The \"count\" object can only be used in \"module\", \"resource\", and \"data\" blocks, and only when the \"count\" argument is set.".into(),
            ),
            Target::Each if ctx.for_each => return None,
            Target::Each => err(
                "Reference to \"each\" in context without for_each",
                "The \"each\" object can be used only in \"module\" or \"resource\" blocks, and only when the \"for_each\" argument is set.".into(),
            ),
            Target::SelfRef if ctx.self_ok => return None,
            Target::SelfRef => err(
                "Invalid \"self\" reference",
                "The \"self\" object is not available in this context. This object can be used only in resource provisioner, connection, and postcondition blocks.".into(),
            ),
            Target::Path | Target::Terraform => return None,
            Target::Invalid(_, why) => err("Invalid reference", (*why).into()),
        };
        self.diags.push(problem);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(src: &str) -> Module {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("main.tf"), src).unwrap();
        let (m, d) = crate::config::load(dir.path());
        assert!(!d.has_errors(), "{d}");
        m
    }

    #[test]
    fn orders_blocks_after_what_they_reference() {
        let m = module(
            r#"
            variable "n" { default = 2 }
            locals { name = "q-${var.n}" }
            resource "aws_sqs_queue" "q" { name = local.name }
            resource "aws_sqs_queue_policy" "p" {
              queue_url = aws_sqs_queue.q.url
              policy    = "{}"
            }
            output "url" { value = aws_sqs_queue_policy.p.id }
            "#,
        );
        let (g, d) = Graph::build(&m);
        assert!(d.is_empty(), "{d}");
        let order: Vec<String> = g.order().unwrap().iter().map(Node::to_string).collect();
        let pos = |s: &str| order.iter().position(|n| n == s).unwrap();
        assert!(pos("var.n") < pos("local.name"));
        assert!(pos("local.name") < pos("aws_sqs_queue.q"));
        assert!(pos("aws_sqs_queue.q") < pos("aws_sqs_queue_policy.p"));
        assert!(pos("aws_sqs_queue_policy.p") < pos("output.url"));
    }

    #[test]
    fn reports_cycles_and_undeclared_names_with_their_lines() {
        let m = module(
            "locals {\n  a = local.b\n  b = local.a\n  c = var.nope\n  d = count.index\n}\n",
        );
        let (g, d) = Graph::build(&m);
        let lines: Vec<(usize, &str)> = d
            .iter()
            .map(|d| (d.subject.as_ref().unwrap().start.line, d.summary.as_str()))
            .collect();
        assert_eq!(
            lines,
            [
                (4, "Reference to undeclared input variable"),
                (5, "Reference to \"count\" in non-counted context")
            ]
        );
        let cycles = g.order().unwrap_err();
        assert_eq!(
            cycle_diagnostic(&cycles[0]).summary,
            "Cycle: local.a, local.b"
        );
    }
}
