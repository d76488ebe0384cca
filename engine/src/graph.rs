//! The dependency graph of one module: which blocks each block refers to,
//! through references and `depends_on`, checked against what the module
//! declares, in an order that evaluates every block after what it needs.

use crate::addr::Mode;
use crate::config::refs::{Reference, Target};
use crate::config::tree::Tree;
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
    /// For a node that refers to a module call: the call's outputs it
    /// names, or `None` when it uses the call as a whole.
    outputs: BTreeMap<(Node, String), Option<BTreeSet<String>>>,
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
            in_check: None,
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
        for c in module.checks.values() {
            b.in_check = Some(&c.name);
            for a in &c.asserts {
                b.refs_only(&a.condition, PLAIN);
                b.refs_only(&a.error_message, PLAIN);
            }
            b.in_check = None;
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
        order_of(&self.deps)
    }

    /// The outputs of module call `call` that `node` names, or `None` when
    /// it uses the call as a whole (or does not refer to it).
    pub fn outputs_used(&self, node: &Node, call: &str) -> Option<&BTreeSet<String>> {
        self.outputs
            .get(&(node.clone(), call.to_string()))
            .and_then(Option::as_ref)
    }
}

/// A block of one module of a tree: the call names from the root to its
/// module, and the block.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TreeNode {
    pub module: Vec<String>,
    pub node: Node,
}

impl fmt::Display for TreeNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for call in &self.module {
            write!(f, "module.{call}.")?;
        }
        write!(f, "{}", self.node)
    }
}

/// The blocks of every module of a tree by their references across calls,
/// as terraform links them: a reference to `module.x.out` depends on the
/// child's output `out` (on every output, and the call, when it uses
/// `module.x` as a whole or names no output the child declares), and the child's variables depend on the call,
/// which depends on what its arguments and meta-arguments reference. So
/// two calls may use each other's outputs when no output depends on the
/// argument that uses the other.
#[derive(Debug, Clone, Default)]
pub struct TreeGraph {
    deps: BTreeMap<TreeNode, BTreeSet<TreeNode>>,
    /// The same edges reversed: what depends on each node.
    dependents: BTreeMap<TreeNode, BTreeSet<TreeNode>>,
}

impl TreeGraph {
    /// Links the graph of each module of `tree` (by its call path).
    pub fn build(tree: &Tree, graphs: &BTreeMap<Vec<String>, Graph>) -> TreeGraph {
        let mut deps: BTreeMap<TreeNode, BTreeSet<TreeNode>> = BTreeMap::new();
        let at = |module: &[String], node: Node| TreeNode {
            module: module.to_vec(),
            node,
        };
        for t in tree.modules() {
            let Some(g) = graphs.get(&t.path) else {
                continue;
            };
            for x in g.nodes() {
                let mut set = BTreeSet::new();
                for d in g.deps(x) {
                    let Node::ModuleCall(call) = d else {
                        set.insert(at(&t.path, d.clone()));
                        continue;
                    };
                    let Some(child) = t.children.get(call) else {
                        continue;
                    };
                    let outputs = &child.module.outputs;
                    // A name the child does not declare (an error found
                    // in evaluation) depends on the call as a whole.
                    match g
                        .outputs_used(x, call)
                        .filter(|used| used.iter().all(|o| outputs.contains_key(o)))
                    {
                        Some(used) => {
                            for o in used {
                                set.insert(at(&child.path, Node::Output(o.clone())));
                            }
                        }
                        None => {
                            for o in outputs.keys() {
                                set.insert(at(&child.path, Node::Output(o.clone())));
                            }
                            set.insert(at(&t.path, d.clone()));
                        }
                    }
                }
                deps.entry(at(&t.path, x.clone())).or_default().extend(set);
            }
            for (call, child) in &t.children {
                for v in child.module.variables.keys() {
                    deps.entry(at(&child.path, Node::Variable(v.clone())))
                        .or_default()
                        .insert(at(&t.path, Node::ModuleCall(call.clone())));
                }
            }
        }
        let mut dependents: BTreeMap<TreeNode, BTreeSet<TreeNode>> = BTreeMap::new();
        for (n, ds) in &deps {
            for d in ds {
                dependents.entry(d.clone()).or_default().insert(n.clone());
            }
        }
        TreeGraph { deps, dependents }
    }

    /// Builds the graph of every module of `tree` and links them, in
    /// order: each module's reference errors, or the cycles across modules.
    pub fn of_tree(tree: &Tree) -> Result<(TreeGraph, Vec<TreeNode>), Diagnostics> {
        let mut diags = Diagnostics::default();
        let mut graphs = BTreeMap::new();
        for t in tree.modules() {
            let (graph, d) = Graph::build_in(&t.module, &t.address());
            diags.extend(d);
            graphs.insert(t.path.clone(), graph);
        }
        if diags.has_errors() {
            return Err(diags);
        }
        let linked = TreeGraph::build(tree, &graphs);
        let order = linked.order().map_err(|cycles| {
            Diagnostics(cycles.iter().map(|c| tree_cycle_diagnostic(c)).collect())
        })?;
        Ok((linked, order))
    }

    /// What `node` depends on directly.
    pub fn deps(&self, node: &TreeNode) -> impl Iterator<Item = &TreeNode> {
        self.deps.get(node).into_iter().flatten()
    }

    /// What depends on `node` directly.
    pub fn dependents(&self, node: &TreeNode) -> impl Iterator<Item = &TreeNode> {
        self.dependents.get(node).into_iter().flatten()
    }

    pub fn nodes(&self) -> impl Iterator<Item = &TreeNode> {
        self.deps.keys()
    }

    /// Every block of every module after everything it depends on, or the
    /// cycles that make such an order impossible.
    pub fn order(&self) -> Result<Vec<TreeNode>, Vec<Vec<TreeNode>>> {
        order_of(&self.deps)
    }
}

/// The diagnostic for a cycle across modules, naming every block in it as
/// terraform does: `module.app.var.name`.
pub fn tree_cycle_diagnostic(cycle: &[TreeNode]) -> Diagnostic {
    let names: Vec<String> = cycle.iter().map(TreeNode::to_string).collect();
    Diagnostic::error(format!("Cycle: {}", names.join(", ")), "")
}

/// Every node after everything it depends on, or the cycles.
fn order_of<N: Ord + Clone>(deps: &BTreeMap<N, BTreeSet<N>>) -> Result<Vec<N>, Vec<Vec<N>>> {
    fn visit<'a, N: Ord + Clone>(
        deps: &'a BTreeMap<N, BTreeSet<N>>,
        n: &'a N,
        done: &mut BTreeSet<&'a N>,
        out: &mut Vec<N>,
    ) {
        if !done.insert(n) {
            return;
        }
        for d in deps.get(n).into_iter().flatten() {
            visit(deps, d, done, out);
        }
        out.push(n.clone());
    }
    let cycles = strongly_connected(deps);
    if !cycles.is_empty() {
        return Err(cycles);
    }
    let mut out = Vec::with_capacity(deps.len());
    let mut done = BTreeSet::new();
    for n in deps.keys() {
        visit(deps, n, &mut done, &mut out);
    }
    Ok(out)
}

/// Strongly connected components with more than one node, or one node
/// depending on itself (Tarjan's algorithm).
fn strongly_connected<N: Ord + Clone>(deps: &BTreeMap<N, BTreeSet<N>>) -> Vec<Vec<N>> {
    struct T<'a, N> {
        deps: &'a BTreeMap<N, BTreeSet<N>>,
        index: BTreeMap<&'a N, usize>,
        low: BTreeMap<&'a N, usize>,
        stack: Vec<&'a N>,
        on_stack: BTreeSet<&'a N>,
        next: usize,
        out: Vec<Vec<N>>,
    }
    impl<'a, N: Ord + Clone> T<'a, N> {
        fn edges(&self, v: &N) -> impl Iterator<Item = &'a N> {
            self.deps.get(v).into_iter().flatten()
        }
        fn strong(&mut self, v: &'a N) {
            self.index.insert(v, self.next);
            self.low.insert(v, self.next);
            self.next += 1;
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.edges(v) {
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
                let self_loop = self.edges(v).any(|d| d == v);
                if comp.len() > 1 || self_loop {
                    comp.sort();
                    self.out.push(comp);
                }
            }
        }
    }
    let mut t = T {
        deps,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in deps.keys() {
        if !t.index.contains_key(v) {
            t.strong(v);
        }
    }
    t.out
}

/// Checks references written outside any block (the console's input)
/// against what `module` declares, with terraform's errors.
pub fn check_references(module: &Module, refs: &[Reference]) -> Diagnostics {
    let mut b = Builder {
        module,
        address: "",
        graph: Graph::default(),
        diags: Diagnostics::default(),
        in_check: None,
    };
    for r in refs {
        b.check(r, PLAIN);
    }
    b.diags
}

/// The diagnostic for a cycle, naming every block in it.
pub fn cycle_diagnostic(cycle: &[Node]) -> Diagnostic {
    let names: Vec<String> = cycle.iter().map(Node::to_string).collect();
    Diagnostic::error(format!("Cycle: {}", names.join(", ")), "")
}

struct Builder<'a> {
    module: &'a Module,
    address: &'a str,
    graph: Graph,
    diags: Diagnostics,
    /// The `check` block whose assertions are being read: the one place
    /// its data source may be referred to from.
    in_check: Option<&'a str>,
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
                if let Node::ModuleCall(call) = &dep {
                    let used = self
                        .graph
                        .outputs
                        .entry((node.clone(), call.clone()))
                        .or_insert_with(|| Some(BTreeSet::new()));
                    match (&r.output, used) {
                        (Some(o), Some(set)) => {
                            set.insert(o.clone());
                        }
                        (None, used) => *used = None,
                        (Some(_), None) => {}
                    }
                }
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
            Target::Resource(k) => match m.resources.get(k) {
                Some(res) if res.check.is_none() || res.check.as_deref() == self.in_check => {
                    return Some(Node::Resource(k.clone()))
                }
                Some(_) => err(
                    "Reference to scoped resource",
                    format!("The referenced data resource \"{}\" \"{}\" is not available from this context.", k.type_name, k.name),
                ),
                None => {
                    let kind = match k.mode {
                        Mode::Managed => "managed",
                        Mode::Data => "data",
                    };
                    err(
                        "Reference to undeclared resource",
                        format!("A {kind} resource \"{}\" \"{}\" has not been declared in {within}.", k.type_name, k.name),
                    )
                }
            },
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

    #[test]
    fn calls_may_use_each_others_outputs_unless_an_output_needs_the_other() {
        let linked = |root: &str| {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir(dir.path().join("q")).unwrap();
            std::fs::write(dir.path().join("main.tf"), root).unwrap();
            std::fs::write(
                dir.path().join("q/main.tf"),
                "variable \"in\" {}\noutput \"fixed\" { value = 1 }\noutput \"echo\" { value = var.in }\n",
            )
            .unwrap();
            let (tree, d) = crate::config::tree::load_tree(dir.path());
            assert!(!d.has_errors(), "{d}");
            let graphs = tree
                .modules()
                .iter()
                .map(|t| (t.path.clone(), Graph::build_in(&t.module, &t.address()).0))
                .collect();
            TreeGraph::build(&tree, &graphs).order()
        };
        let order = linked(
            "module \"a\" {\n  source = \"./q\"\n  in = module.b.fixed\n}\nmodule \"b\" {\n  source = \"./q\"\n  in = module.a.fixed\n}\noutput \"o\" { value = module.a.echo }\n",
        )
        .unwrap();
        let pos = |s: &str| order.iter().position(|n| n.to_string() == s).unwrap();
        assert!(pos("module.b.output.fixed") < pos("module.a"));
        assert!(pos("module.a") < pos("module.a.var.in"));
        assert!(pos("module.a.var.in") < pos("module.a.output.echo"));
        assert!(pos("module.a.output.echo") < pos("output.o"));
        let cycles = linked(
            "module \"a\" {\n  source = \"./q\"\n  in = module.b.echo\n}\nmodule \"b\" {\n  source = \"./q\"\n  in = module.a.echo\n}\n",
        )
        .unwrap_err();
        assert_eq!(
            tree_cycle_diagnostic(&cycles[0]).summary,
            "Cycle: module.a, module.b, module.a.var.in, module.a.output.echo, module.b.var.in, module.b.output.echo"
        );
    }
}
