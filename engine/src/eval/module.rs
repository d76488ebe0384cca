//! A module's named values as evaluation proceeds, the scope each block's
//! expressions see, and `count` / `for_each` expansion.

use super::funcs::Phase;
use super::inputs::{at_expr, from_call};
use super::Scope;
use crate::addr::{module_text, InstanceKey, ModuleStep};
use crate::config::refs::{Reference, Target};
use crate::config::tree::Tree;
use crate::config::{Expr, Module, ModuleCall, ResourceKey};
use crate::diag::{Diagnostic, Diagnostics};
use crate::value::{Kind, Type, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// The values of a module's variables, locals, resources, module calls and
/// outputs known so far.
#[derive(Debug, Clone)]
pub struct ModuleValues {
    pub vars: BTreeMap<String, Value>,
    pub locals: BTreeMap<String, Value>,
    /// A resource's whole value: one object, a tuple of objects (`count`),
    /// an object of objects by key (`for_each`), or an unknown when its
    /// instances are not yet known.
    pub resources: BTreeMap<ResourceKey, Value>,
    pub modules: BTreeMap<String, Value>,
    pub outputs: BTreeMap<String, Value>,
    /// `path.module`, `path.root`, `path.cwd`.
    pub path: Value,
    /// What the impure functions answer.
    pub phase: Phase,
}

/// Which instance an expression is evaluated for.
#[derive(Debug, Clone, Default)]
pub struct Instance {
    pub count_index: Option<Value>,
    pub each: Option<(Value, Value)>,
    pub self_value: Option<Value>,
}

impl ModuleValues {
    pub fn new(vars: BTreeMap<String, Value>, module_dir: &Path, root_dir: &Path) -> ModuleValues {
        let cwd = std::env::current_dir().unwrap_or_default();
        let rel = |p: &Path| {
            let s = p
                .strip_prefix(&cwd)
                .unwrap_or(p)
                .to_string_lossy()
                .to_string();
            if s.is_empty() {
                ".".to_string()
            } else {
                s
            }
        };
        ModuleValues {
            vars,
            path: Value::object(BTreeMap::from([
                ("module".to_string(), Value::string(rel(module_dir))),
                ("root".to_string(), Value::string(rel(root_dir))),
                ("cwd".to_string(), Value::string(cwd.to_string_lossy())),
            ])),
            locals: BTreeMap::new(),
            resources: BTreeMap::new(),
            modules: BTreeMap::new(),
            outputs: BTreeMap::new(),
            phase: Phase::Console,
        }
    }

    /// These values, evaluated in `phase`.
    pub fn in_phase(mut self, phase: Phase) -> ModuleValues {
        self.phase = phase;
        self
    }

    /// A scope holding exactly what `refs` name (so evaluating one block
    /// costs what it refers to, not the size of the module).
    pub fn scope_for(&self, refs: &[Reference], instance: &Instance) -> Scope {
        let mut var = BTreeMap::new();
        let mut local = BTreeMap::new();
        let mut module = BTreeMap::new();
        let mut managed: BTreeMap<&str, BTreeMap<String, Value>> = BTreeMap::new();
        let mut data: BTreeMap<&str, BTreeMap<String, Value>> = BTreeMap::new();
        let mut scope = Scope::default().in_phase(self.phase.clone());
        for r in refs {
            match &r.target {
                Target::Var(n) => {
                    if let Some(v) = self.vars.get(n) {
                        var.insert(n.clone(), v.clone());
                    }
                }
                Target::Local(n) => {
                    if let Some(v) = self.locals.get(n) {
                        local.insert(n.clone(), v.clone());
                    }
                }
                Target::Module(n) => {
                    if let Some(v) = self.modules.get(n) {
                        module.insert(n.clone(), v.clone());
                    }
                }
                Target::Resource(k) => {
                    if let Some(v) = self.resources.get(k) {
                        let table = match k.mode {
                            crate::addr::Mode::Managed => &mut managed,
                            crate::addr::Mode::Data => &mut data,
                        };
                        table
                            .entry(&k.type_name)
                            .or_default()
                            .insert(k.name.clone(), v.clone());
                    }
                }
                Target::Path => scope = scope.with("path", self.path.clone()),
                Target::Terraform => {
                    scope = scope.with(
                        "terraform",
                        Value::object(BTreeMap::from([(
                            "workspace".to_string(),
                            Value::string(crate::workspaces::current()),
                        )])),
                    )
                }
                Target::Count => {
                    if let Some(i) = &instance.count_index {
                        scope = scope.with(
                            "count",
                            Value::object(BTreeMap::from([("index".to_string(), i.clone())])),
                        );
                    }
                }
                Target::Each => {
                    if let Some((k, v)) = &instance.each {
                        scope = scope.with(
                            "each",
                            Value::object(BTreeMap::from([
                                ("key".to_string(), k.clone()),
                                ("value".to_string(), v.clone()),
                            ])),
                        );
                    }
                }
                Target::SelfRef => {
                    if let Some(s) = &instance.self_value {
                        scope = scope.with("self", s.clone());
                    }
                }
                Target::Invalid(..) => {}
            }
        }
        if !var.is_empty() {
            scope = scope.with("var", Value::object(var));
        }
        if !local.is_empty() {
            scope = scope.with("local", Value::object(local));
        }
        if !module.is_empty() {
            scope = scope.with("module", Value::object(module));
        }
        for (t, names) in managed {
            scope = scope.with(t, Value::object(names));
        }
        if !data.is_empty() {
            let d = data
                .into_iter()
                .map(|(t, n)| (t.to_string(), Value::object(n)))
                .collect();
            scope = scope.with("data", Value::object(d));
        }
        scope
    }

    /// Evaluates one expression with what it refers to.
    pub fn eval(&self, e: &Expr, instance: &Instance) -> Result<Value, Diagnostics> {
        let scope = self.scope_for(&e.references(), instance);
        let span = e.range();
        scope
            .eval(&e.expr)
            .map_err(|d| at_expr(d, &e.file, span.start.byte..span.end.byte).into())
    }
}

/// The values of every module instance of a tree as evaluation proceeds,
/// by module instance path (`module.app["a"]` is `[app["a"]]`; the root is
/// empty). A call's expansion creates its instances, with their input
/// variables from the call's arguments; each output evaluated in a child
/// instance becomes part of `module.NAME` in its caller's scope.
#[derive(Debug, Clone)]
pub struct TreeValues {
    pub instances: BTreeMap<Vec<ModuleStep>, ModuleValues>,
    /// Each call's expansion, by the calling instance and the call's name.
    calls: BTreeMap<(Vec<ModuleStep>, String), Expansion>,
}

impl TreeValues {
    pub fn new(root: ModuleValues) -> TreeValues {
        TreeValues {
            instances: BTreeMap::from([(Vec::new(), root)]),
            calls: BTreeMap::new(),
        }
    }

    /// The root module's values.
    pub fn root(&self) -> &ModuleValues {
        &self.instances[&Vec::new()]
    }

    /// The values of the module instance `at`, to fill in as evaluation
    /// proceeds (its call expanded it before any of its blocks).
    pub fn at_mut(&mut self, at: &[ModuleStep]) -> &mut ModuleValues {
        self.instances
            .get_mut(at)
            .expect("a module instance is expanded before its blocks")
    }

    /// The instances of the module at `path` (call names), in order.
    pub fn instances_of(&self, path: &[String]) -> Vec<Vec<ModuleStep>> {
        self.instances
            .keys()
            .filter(|i| i.len() == path.len() && i.iter().zip(path).all(|(s, n)| &s.name == n))
            .cloned()
            .collect()
    }

    /// Expands call `name` of the instance `at` (of module `tree`): one
    /// child instance per `count` index or `for_each` key, each with its
    /// input variables from the call's arguments as that instance sees them.
    pub fn expand_call(
        &mut self,
        at: &[ModuleStep],
        tree: &Tree,
        name: &str,
        root_dir: &Path,
    ) -> Result<(), Diagnostics> {
        let call = &tree.module.module_calls[name];
        let child = &tree.children[name];
        let parent = &self.instances[at];
        let exp = expansion(parent, call.count.as_ref(), call.for_each.as_ref(), false)?;
        let mut made = Vec::new();
        for (key, instance) in exp.instances() {
            let mut path = at.to_vec();
            path.push(ModuleStep {
                name: name.to_string(),
                key,
            });
            let vars = from_call(call, &child.module, &module_text(&path), |e| {
                parent.eval(e, &instance)
            })?;
            made.push((
                path,
                ModuleValues::new(vars, &child.module.dir, root_dir).in_phase(parent.phase.clone()),
            ));
        }
        self.instances.extend(made);
        self.calls.insert((at.to_vec(), name.to_string()), exp);
        self.publish(at, name);
        Ok(())
    }

    /// Sets output `name` of instance `at`; in a child instance it becomes
    /// visible as `module.CALL.name` to the caller (marked when `sensitive`).
    pub fn set_output(&mut self, at: &[ModuleStep], name: &str, value: Value, sensitive: bool) {
        let Some(values) = self.instances.get_mut(at) else {
            return;
        };
        let value = if sensitive && !at.is_empty() {
            value.with_sensitive(true)
        } else {
            value
        };
        values.outputs.insert(name.to_string(), value);
        if let Some((last, parent)) = at.split_last() {
            self.publish(parent, &last.name);
        }
    }

    /// Rebuilds `module.NAME` in the caller `at` from its instances'
    /// outputs so far: an object, a tuple (`count`) or an object by key
    /// (`for_each`).
    fn publish(&mut self, at: &[ModuleStep], name: &str) {
        let Some(exp) = self.calls.get(&(at.to_vec(), name.to_string())) else {
            return;
        };
        let outputs = exp
            .instances()
            .into_iter()
            .map(|(key, _)| {
                let mut path = at.to_vec();
                path.push(ModuleStep {
                    name: name.to_string(),
                    key,
                });
                Value::object(
                    self.instances
                        .get(&path)
                        .map(|v| v.outputs.clone())
                        .unwrap_or_default(),
                )
            })
            .collect();
        let whole = exp.assemble(outputs);
        if let Some(caller) = self.instances.get_mut(at) {
            caller.modules.insert(name.to_string(), whole);
        }
    }
}

/// Whether the root output `name` is sensitive: declared so, or holding a
/// sensitive value (root outputs carry no mark of their declaration).
pub fn root_output_sensitive(root: &Module, name: &str, value: &Value) -> bool {
    root.outputs.get(name).is_some_and(|o| o.sensitive) || value.has_sensitive()
}

/// What `module.NAME` is before the child's outputs are known (as
/// `validate` sees it): an unknown object with an attribute per output, or
/// an unknown list (`count`) or map (`for_each`) of such objects.
pub fn unknown_outputs(call: &ModuleCall, child: &Module) -> Value {
    let object = Type::object(
        child
            .outputs
            .keys()
            .map(|n| (n.clone(), Type::Dynamic))
            .collect(),
    );
    Value::unknown(if call.count.is_some() {
        Type::list(object)
    } else if call.for_each.is_some() {
        Type::map(object)
    } else {
        object
    })
}

/// How many instances a block has, and their keys.
#[derive(Debug, Clone)]
pub enum Expansion {
    /// No `count` or `for_each`: one instance with no key.
    Single,
    /// `count`: instances 0..n.
    Count(u64),
    /// `for_each`: one instance per key, with its `each.value`.
    ForEach(BTreeMap<String, Value>),
    /// Not known until apply.
    Unknown,
}

impl Expansion {
    /// Each instance's key and what its expressions see.
    pub fn instances(&self) -> Vec<(Option<InstanceKey>, Instance)> {
        match self {
            Expansion::Single | Expansion::Unknown => vec![(None, Instance::default())],
            Expansion::Count(n) => (0..*n)
                .map(|i| {
                    (
                        Some(InstanceKey::Int(i)),
                        Instance {
                            count_index: Some(Value::int(i as i64)),
                            ..Instance::default()
                        },
                    )
                })
                .collect(),
            Expansion::ForEach(m) => m
                .iter()
                .map(|(k, v)| {
                    (
                        Some(InstanceKey::Str(k.clone())),
                        Instance {
                            each: Some((Value::string(k.clone()), v.clone())),
                            ..Instance::default()
                        },
                    )
                })
                .collect(),
        }
    }

    /// The block's whole value from its instances' values.
    pub fn assemble(&self, mut values: Vec<Value>) -> Value {
        match self {
            Expansion::Single => values
                .pop()
                .unwrap_or_else(|| Value::unknown(Type::Dynamic)),
            Expansion::Unknown => Value::unknown(Type::Dynamic),
            Expansion::Count(_) => Value::tuple(values),
            Expansion::ForEach(m) => Value::object(m.keys().cloned().zip(values).collect()),
        }
    }
}

/// Evaluates `count` or `for_each` as terraform checks them. `unknown_ok`
/// allows an unknown result (validate), else it is an error (plan).
pub fn expansion(
    values: &ModuleValues,
    count: Option<&Expr>,
    for_each: Option<&Expr>,
    unknown_ok: bool,
) -> Result<Expansion, Diagnostics> {
    if let Some(c) = count {
        let v = values.eval(c, &Instance::default())?;
        let bad = |detail: &str| -> Diagnostics {
            Diagnostic::error(
                "Invalid count argument",
                format!("The given \"count\" argument value is unsuitable: {detail}"),
            )
            .at(c.range())
            .into()
        };
        if !v.is_known() {
            if unknown_ok {
                return Ok(Expansion::Unknown);
            }
            return Err(Diagnostic::error(
                "Invalid count argument",
                "The \"count\" value depends on resource attributes that cannot be determined until apply, so Terraform cannot predict how many instances will be created. To work around this, use the -target argument to first apply only the resources that the count depends on.",
            )
            .at(c.range())
            .into());
        }
        if v.is_null() {
            return Err(bad("must not be null."));
        }
        let n = crate::value::convert::convert(v.unmark_deep(), &Type::Number).map_err(|e| {
            Diagnostics::from(
                Diagnostic::error(
                    "Incorrect value type",
                    format!("Invalid expression value: {}.", e.message),
                )
                .at(c.range()),
            )
        })?;
        let n = n.as_number().and_then(|n| {
            use num_traits::ToPrimitive;
            if n.is_integer() {
                n.trunc_bigint().to_i64()
            } else {
                None
            }
        });
        return match n {
            Some(n) if n >= 0 => Ok(Expansion::Count(n as u64)),
            Some(_) => Err(bad("must be greater than or equal to zero.")),
            None => Err(bad("count must be a whole number.")),
        };
    }
    let Some(f) = for_each else {
        return Ok(Expansion::Single);
    };
    let v = values.eval(f, &Instance::default())?;
    let bad = |summary: &str, detail: String| -> Diagnostics {
        Diagnostic::error(summary, detail).at(f.range()).into()
    };
    if v.sensitive || v.has_sensitive() {
        return Err(bad(
            "Invalid for_each argument",
            "Sensitive values, or values derived from sensitive values, cannot be used as for_each arguments. If used, the sensitive value could be exposed as a resource instance key.".into(),
        ));
    }
    if !v.is_known() {
        if unknown_ok {
            return Ok(Expansion::Unknown);
        }
        return Err(bad(
            "Invalid for_each argument",
            "The \"for_each\" map includes keys derived from resource attributes that cannot be determined until apply, and so Terraform cannot determine the full set of keys that will identify the instances of this resource.".into(),
        ));
    }
    match v.kind {
        Kind::Null(_) => Err(bad(
            "Invalid for_each argument",
            "The given \"for_each\" argument value is unsuitable: the given \"for_each\" argument value is null. A map, or set of strings is allowed.".into(),
        )),
        Kind::Map(_, m) | Kind::Object(m) => Ok(Expansion::ForEach(m)),
        Kind::Set(ref t, ref items) if *t == Type::String || *t == Type::Dynamic => {
            let mut out = BTreeMap::new();
            for i in items {
                match i.as_str() {
                    Some(s) => {
                        out.insert(s.to_string(), i.clone());
                    }
                    None if !i.is_known() && unknown_ok => return Ok(Expansion::Unknown),
                    None => {
                        return Err(bad(
                            "Invalid for_each set argument",
                            "The given \"for_each\" argument value is unsuitable: \"for_each\" sets must not contain null values.".into(),
                        ))
                    }
                }
            }
            Ok(Expansion::ForEach(out))
        }
        Kind::Set(t, _) => Err(bad(
            "Invalid for_each set argument",
            format!("The given \"for_each\" argument value is unsuitable: \"for_each\" supports maps and sets of strings, but you have provided a set containing type {}.", t.friendly_name()),
        )),
        other => Err(bad(
            "Invalid for_each argument",
            format!(
                "The given \"for_each\" argument value is unsuitable: the \"for_each\" argument must be a map, or set of strings, and you have provided a value of type {}.",
                Value::from(other).ty().friendly_name()
            ),
        )),
    }
}

/// The scope `console` evaluates in for a root: its variables, its locals
/// (those that refer to resources see them unknown, as no state is kept),
/// `path` and `terraform`.
pub fn console_scope(
    module: &crate::config::Module,
    vars: BTreeMap<String, Value>,
) -> Result<Scope, Diagnostics> {
    use crate::graph::{Graph, Node};
    let (graph, diags) = Graph::build(module);
    if diags.has_errors() {
        return Err(diags);
    }
    let order = graph.order().map_err(|cycles| {
        Diagnostics(
            cycles
                .iter()
                .map(|c| crate::graph::cycle_diagnostic(c))
                .collect(),
        )
    })?;
    let mut values = ModuleValues::new(vars, &module.dir, &module.dir);
    for node in order {
        match node {
            Node::Local(name) => {
                let v = values.eval(&module.locals[&name].expr, &Instance::default())?;
                values.locals.insert(name, v);
            }
            Node::Resource(key) => {
                values.resources.insert(key, Value::unknown(Type::Dynamic));
            }
            Node::ModuleCall(name) => {
                values.modules.insert(name, Value::unknown(Type::Dynamic));
            }
            _ => {}
        }
    }
    let scope = Scope::default()
        .with("var", Value::object(values.vars.clone()))
        .with("local", Value::object(values.locals.clone()))
        .with("path", values.path.clone())
        .with(
            "terraform",
            Value::object(BTreeMap::from([(
                "workspace".to_string(),
                Value::string(crate::workspaces::current()),
            )])),
        );
    Ok(scope)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tree::load_tree;
    use crate::eval::format::console;

    fn step(name: &str, key: Option<InstanceKey>) -> ModuleStep {
        ModuleStep {
            name: name.into(),
            key,
        }
    }

    #[test]
    fn each_call_instance_gets_its_inputs_and_its_outputs_reach_the_caller() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("q")).unwrap();
        std::fs::write(
            dir.path().join("main.tf"),
            "module \"one\" {\n  source = \"./q\"\n  name = \"x\"\n}\nmodule \"counted\" {\n  source = \"./q\"\n  count = 2\n  name = \"c${count.index}\"\n}\nmodule \"each\" {\n  source = \"./q\"\n  for_each = toset([\"a\", \"b\"])\n  name = each.key\n}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("q/main.tf"),
            "variable \"name\" {}\noutput \"out\" {\n  value = var.name\n  sensitive = true\n}\n",
        )
        .unwrap();
        let (tree, d) = load_tree(dir.path());
        assert!(!d.has_errors(), "{d}");
        let mut values =
            TreeValues::new(ModuleValues::new(BTreeMap::new(), dir.path(), dir.path()));
        for call in ["one", "counted", "each"] {
            values.expand_call(&[], &tree, call, dir.path()).unwrap();
        }
        let counted = values.instances_of(&["counted".to_string()]);
        assert_eq!(
            counted,
            [
                vec![step("counted", Some(InstanceKey::Int(0)))],
                vec![step("counted", Some(InstanceKey::Int(1)))]
            ]
        );
        for instance in values
            .instances_of(&["counted".to_string()])
            .into_iter()
            .chain(values.instances_of(&["each".to_string()]))
            .chain(values.instances_of(&["one".to_string()]))
        {
            let name = values.instances[&instance].vars["name"].clone();
            values.set_output(&instance, "out", name, true);
        }
        let module = |name: &str| console(&values.root().modules[name].clone().unmark_deep());
        assert_eq!(module("one"), "{\n  \"out\" = \"x\"\n}");
        assert_eq!(
            module("counted"),
            "[\n  {\n    \"out\" = \"c0\"\n  },\n  {\n    \"out\" = \"c1\"\n  },\n]"
        );
        assert_eq!(
            module("each"),
            "{\n  \"a\" = {\n    \"out\" = \"a\"\n  }\n  \"b\" = {\n    \"out\" = \"b\"\n  }\n}"
        );
        // A sensitive output stays sensitive in the caller.
        assert!(values.root().modules["one"].has_sensitive());
    }
}
