//! `choudoufu validate`: a root and the modules it calls checked as
//! `terraform validate` checks them, without touching any live object.
//! Structure, references and cycles first; then every block evaluated with
//! unknown input variables, resource attributes and module outputs against
//! its provider's schema; then each resource's configuration given to its
//! provider to check.

use crate::addr::Mode;
use crate::config::tree::{load_tree, Tree};
use crate::config::{self, Module, ResourceKey};
use crate::diag::Severity;
use crate::diag::{Diagnostic, Diagnostics, Sources};
use crate::eval::body::decode;
use crate::eval::inputs;
use crate::eval::module::{expansion, unknown_outputs, Instance, ModuleValues};
use crate::graph::{tree_cycle_diagnostic, Graph, Node, TreeGraph, TreeNode};
use crate::provider::cache::SchemaCache;
use crate::provider::discovery::ProviderSource;
use crate::provider::path::PathStep;
use crate::provider::plugin::{LaunchOptions, Plugin};
use crate::provider::resolve::{self, Resolved};
use crate::provider::{grpc::GrpcProvider, Provider, ProviderError};
use crate::source::Range;
use crate::value::{Type, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What validation found, and the files its diagnostics point into.
pub struct Validation {
    pub diagnostics: Diagnostics,
    pub sources: Sources,
}

impl Validation {
    pub fn is_valid(&self) -> bool {
        !self.diagnostics.has_errors()
    }
}

/// How far validation goes.
#[derive(Debug, Clone, Copy)]
pub struct Depth {
    /// Launch each provider and let it check its resources' configuration,
    /// as terraform does.
    pub provider_checks: bool,
}

/// Validates the root module in `dir` and every module it calls.
pub async fn validate(
    dir: &Path,
    cache: Option<&SchemaCache>,
    options: &LaunchOptions,
    depth: Depth,
) -> Validation {
    let (tree, mut diags) = load_tree(dir);
    let mut sources = tree.sources();
    if !diags.has_errors() {
        check(&tree, cache, options, depth, &mut diags, &mut sources).await;
    }
    Validation {
        diagnostics: diags,
        sources,
    }
}

/// Resource configurations for one provider binary to check, with the
/// module each resource is in.
type Checks<'a> = BTreeMap<PathBuf, (Resolved, Vec<(&'a Tree, ResourceKey, Value)>)>;

async fn check(
    tree: &Tree,
    cache: Option<&SchemaCache>,
    options: &LaunchOptions,
    depth: Depth,
    diags: &mut Diagnostics,
    sources: &mut Sources,
) {
    let modules = tree.modules();
    let mut graphs = BTreeMap::new();
    for t in &modules {
        let (graph, d) = Graph::build_in(&t.module, &t.address());
        diags.extend(d);
        graphs.insert(t.path.clone(), graph);
    }
    if diags.has_errors() {
        return;
    }
    let linked = TreeGraph::build(tree, &graphs);
    let order = match linked.order() {
        Ok(o) => o,
        Err(cycles) => {
            for c in cycles {
                diags.push(tree_cycle_diagnostic(&c));
            }
            return;
        }
    };
    for t in &modules {
        diags.extend(inputs::check_defaults(&t.module));
    }
    // A child module may also receive aliases through
    // `configuration_aliases`, which are not read; the root has only its
    // provider blocks.
    diags.extend(missing_passed_providers(&tree.module));
    if diags.has_errors() {
        return;
    }
    let using: Vec<&Tree> = modules
        .iter()
        .copied()
        .filter(|t| !t.module.resources.is_empty() || !t.module.providers.is_empty())
        .collect();
    let ms: Vec<&Module> = using.iter().map(|t| &t.module).collect();
    let mut providers = BTreeMap::new();
    match resolve::for_modules(&ms, &tree.module.dir, cache, options).await {
        Ok(found) => {
            for (t, p) in using.iter().zip(found) {
                providers.insert(t.path.clone(), p);
            }
        }
        Err(e) => {
            match e.validate_lock_diagnostics() {
                Some((lock_diags, lock_file)) => {
                    diags.extend(lock_diags);
                    sources.extend(&lock_file);
                }
                None => diags.push(Diagnostic::error(
                    "Failed to load plugin schemas",
                    format!("Error while loading schemas for plugin components: {e}."),
                )),
            }
            return;
        }
    }
    let mut checks = Checks::new();
    evaluate(&modules, &linked, order, &providers, &mut checks, diags);
    if depth.provider_checks && !diags.has_errors() {
        for (resolved, configs) in checks.into_values() {
            provider_checks(&resolved, configs, options, diags).await;
        }
    }
}

/// Evaluates every block of every module in `order`, with unknown
/// variables, resource attributes and module outputs, and collects each
/// resource's configuration for its provider to check. As terraform's walk
/// does, a block that depends on one that failed is skipped, and so is
/// every block of a module whose call failed.
fn evaluate<'a>(
    modules: &[&'a Tree],
    linked: &TreeGraph,
    order: Vec<TreeNode>,
    providers: &BTreeMap<Vec<String>, BTreeMap<String, Resolved>>,
    checks: &mut Checks<'a>,
    diags: &mut Diagnostics,
) {
    let root_dir = &modules[0].module.dir;
    let trees: BTreeMap<&Vec<String>, &'a Tree> = modules.iter().map(|t| (&t.path, *t)).collect();
    let mut values: BTreeMap<&Vec<String>, ModuleValues> = modules
        .iter()
        .map(|t| {
            let mut v = ModuleValues::new(inputs::unknowns(&t.module), &t.module.dir, root_dir)
                .in_phase(crate::eval::funcs::Phase::Validate);
            for (name, child) in &t.children {
                let call = &t.module.module_calls[name];
                v.modules
                    .insert(name.clone(), unknown_outputs(call, &child.module));
            }
            (&t.path, v)
        })
        .collect();
    let none = BTreeMap::new();
    let mut failed: BTreeSet<TreeNode> = BTreeSet::new();
    let errors = |d: &Diagnostics| d.iter().filter(|x| x.is_error()).count();
    for tn in order {
        let call_failed = (0..tn.module.len()).any(|i| {
            failed.contains(&TreeNode {
                module: tn.module[..i].to_vec(),
                node: Node::ModuleCall(tn.module[i].clone()),
            })
        });
        if call_failed || linked.deps(&tn).any(|d| failed.contains(d)) {
            failed.insert(tn);
            continue;
        }
        let (Some(tree), Some(values)) = (trees.get(&tn.module), values.get_mut(&tn.module)) else {
            continue;
        };
        let module = &tree.module;
        let providers = providers.get(&tn.module).unwrap_or(&none);
        let before = errors(diags);
        match tn.node.clone() {
            Node::Variable(_) => {}
            Node::Local(name) => {
                let local = &module.locals[&name];
                let v = values
                    .eval(&local.expr, &Instance::default())
                    .unwrap_or_else(|d| {
                        diags.extend(with_context(d, "locals"));
                        Value::unknown(Type::Dynamic)
                    });
                values.locals.insert(name, v);
            }
            Node::Provider(p) => {
                let config = &module.providers[&p];
                if let Some(r) = providers.get(&p.name) {
                    let scope = values.scope_for(&config.config.references(), &Instance::default());
                    if let Err(d) = decode(&config.config, &r.schema.provider.block, &scope) {
                        diags.extend(with_context(d, &format!("provider \"{}\"", p.name)));
                    }
                }
            }
            Node::Resource(key) => {
                let res = &module.resources[&key];
                let context = resource_context(&key);
                if let Err(d) = expansion(values, res.count.as_ref(), res.for_each.as_ref(), true) {
                    diags.extend(with_context(d, &context));
                }
                let provider = res.provider_ref().name;
                let resolved = providers.get(&provider);
                let Some(schema) = resolved.and_then(|r| {
                    let table = match key.mode {
                        Mode::Managed => &r.schema.resources,
                        Mode::Data => &r.schema.data_sources,
                    };
                    table.get(&key.type_name)
                }) else {
                    let what = if key.mode == Mode::Data {
                        "data source"
                    } else {
                        "resource type"
                    };
                    let source = resolved.map_or(provider.clone(), |r| r.found.source.to_string());
                    diags.push(
                        Diagnostic::error(
                            if key.mode == Mode::Data {
                                "Invalid data source"
                            } else {
                                "Invalid resource type"
                            },
                            format!(
                                "The provider {source} does not support {what} \"{}\".",
                                key.type_name
                            ),
                        )
                        .at(res.range.clone()),
                    );
                    values.resources.insert(key, Value::unknown(Type::Dynamic));
                    failed.insert(tn);
                    continue;
                };
                let instance = unknown_instance(res.count.is_some(), res.for_each.is_some());
                let scope = values.scope_for(&res.config.references(), &instance);
                match decode(&res.config, &schema.block, &scope) {
                    Ok(v) => {
                        if let Some(r) = resolved {
                            checks
                                .entry(r.found.executable.clone())
                                .or_insert_with(|| (r.clone(), Vec::new()))
                                .1
                                .push((tree, key.clone(), v));
                        }
                    }
                    Err(d) => diags.extend(with_context(d, &context)),
                }
                if key.mode == Mode::Managed && tn.module.is_empty() {
                    diags.extend(import_checks(module, res, values));
                }
                let whole = if res.count.is_some() || res.for_each.is_some() {
                    Value::unknown(Type::Dynamic)
                } else {
                    Value::unknown(schema.block.implied_type().without_optional())
                };
                values.resources.insert(key, whole);
            }
            Node::ModuleCall(name) => {
                let call = &module.module_calls[&name];
                let child = &tree.children[&name];
                let context = format!("module \"{name}\"");
                if let Err(d) = expansion(values, call.count.as_ref(), call.for_each.as_ref(), true)
                {
                    diags.extend(with_context(d, &context));
                }
                let instance = unknown_instance(call.count.is_some(), call.for_each.is_some());
                if let Err(d) = inputs::from_call(call, &child.module, &child.address(), |e| {
                    values.eval(e, &instance)
                }) {
                    diags.extend(with_context(d, &context));
                }
            }
            Node::Output(name) => {
                let out = &module.outputs[&name];
                if let Err(d) = values.eval(&out.value, &Instance::default()) {
                    diags.extend(with_context(d, &format!("output \"{name}\"")));
                }
            }
        }
        if errors(diags) > before {
            failed.insert(tn);
        }
    }
}

/// The `import` blocks of the root `module` into `res`, checked as
/// terraform's validate walk checks them: the ID refers to nothing but
/// what is declared and never to `res` itself, and each `to` names an
/// instance whose key fits how `res` repeats (evaluated per element of a
/// known `for_each`). The first error ends the checks of `res`.
fn import_checks(module: &Module, res: &config::Resource, values: &ModuleValues) -> Diagnostics {
    use crate::addr::InstanceKey;
    use crate::config::refs::Target;
    let mut diags = Diagnostics::default();
    let into_res = |i: &&config::Import| {
        i.target.module.is_empty() && i.target.resource.as_ref() == Some(&res.key)
    };
    for imp in module.imports.iter().filter(into_res) {
        for r in imp.id.references() {
            if r.target == Target::Resource(res.key.clone()) {
                diags.push(
                    Diagnostic::error(
                        "Invalid import id argument",
                        "The import ID cannot reference the resource being imported.",
                    )
                    .at(r.range.clone()),
                );
            }
        }
        if diags.has_errors() {
            return diags;
        }
        // References are checked where terraform's walk evaluates them.
        let undeclared = |refs: Vec<crate::config::refs::Reference>, diags: &mut Diagnostics| {
            diags.extend(crate::graph::check_references(module, &refs));
            diags.has_errors()
        };
        // Each instance `to` names, and what the ID sees for it.
        let mut instances: Vec<(Option<InstanceKey>, Instance)> = Vec::new();
        match &imp.for_each {
            Some(f) => {
                if undeclared(f.references(), &mut diags) {
                    return diags;
                }
                let each = match values.eval(f, &Instance::default()) {
                    Ok(v) => v,
                    Err(d) => {
                        diags.extend(d);
                        return diags;
                    }
                };
                let Some(pairs) = for_each_pairs(&each) else {
                    continue;
                };
                let mut refs: Vec<_> = imp.keys().iter().flat_map(|k| k.references()).collect();
                refs.extend(imp.id.references());
                refs.retain(|r| r.target != Target::Each);
                if undeclared(refs, &mut diags) {
                    return diags;
                }
                for (k, v) in pairs {
                    let instance = Instance {
                        each: Some((k, v)),
                        ..Instance::default()
                    };
                    let mut key = None;
                    for e in imp.keys() {
                        match values.eval(&e, &instance) {
                            Ok(v) => key = instance_key(&v),
                            Err(d) => {
                                diags.extend(d);
                                return diags;
                            }
                        }
                    }
                    instances.push((key, instance));
                }
            }
            None => {
                let Some(to) = crate::config::static_import_to(&imp.to) else {
                    diags.push(
                        Diagnostic::error(
                            "Invalid expression",
                            "A single static variable reference is required: only attribute access and indexing with constant keys. No calculations, function calls, template expressions, etc are allowed here.",
                        )
                        .at(imp.to.range()),
                    );
                    diags.push(Diagnostic::error(
                        "Invalid address",
                        "Resource specification must include a resource type and name.",
                    ));
                    return diags;
                };
                if undeclared(imp.id.references(), &mut diags) {
                    return diags;
                }
                instances.push((to.key, Instance::default()));
            }
        }
        for (key, instance) in instances {
            let problem = match (&key, res.for_each.is_some(), res.count.is_some()) {
                (Some(InstanceKey::Str(_)), false, _) => {
                    Some("The target resource does not use for_each.")
                }
                (Some(InstanceKey::Int(_)), _, false) => {
                    Some("The target resource does not use count.")
                }
                (None, true, _) => Some("The target resource is using for_each."),
                (None, _, true) => Some("The target resource is using count."),
                _ => None,
            };
            if let Some(detail) = problem {
                diags.push(
                    Diagnostic::error("Invalid import 'to' expression", detail).at(imp.to.range()),
                );
                return diags;
            }
            if let Err(d) = values.eval(&imp.id, &instance) {
                diags.extend(d);
                return diags;
            }
        }
    }
    diags
}

/// The key and value of each element of a known `for_each` collection.
fn for_each_pairs(v: &Value) -> Option<Vec<(Value, Value)>> {
    use crate::value::Kind;
    match &v.kind {
        Kind::Map(_, m) | Kind::Object(m) => Some(
            m.iter()
                .map(|(k, v)| (Value::string(k.clone()), v.clone()))
                .collect(),
        ),
        Kind::Set(_, items) => Some(items.iter().map(|x| (x.clone(), x.clone())).collect()),
        _ => None,
    }
}

/// The instance key a `to` index evaluates to.
fn instance_key(v: &Value) -> Option<crate::addr::InstanceKey> {
    use crate::addr::InstanceKey;
    if let Some(s) = v.as_str() {
        return Some(InstanceKey::Str(s.to_string()));
    }
    v.as_number()
        .and_then(|n| n.to_i64().and_then(|i| u64::try_from(i).ok()))
        .map(InstanceKey::Int)
}

/// Each aliased configuration a call's `providers` passes that `module`
/// does not declare, as terraform reports it (with no source range).
fn missing_passed_providers(module: &Module) -> Diagnostics {
    let mut diags = Diagnostics::default();
    for call in module.module_calls.values() {
        for (_, parent) in &call.providers {
            let Some(alias) = &parent.alias else { continue };
            if module.providers.contains_key(parent) {
                continue;
            }
            let written = module
                .required_providers
                .get(&parent.name)
                .and_then(|r| r.source.clone())
                .unwrap_or_else(|| parent.name.clone());
            let source = written
                .parse::<ProviderSource>()
                .map_or(written, |s| s.to_string());
            diags.push(Diagnostic::error(
                format!("missing provider provider[\"{source}\"].{alias}"),
                "",
            ));
        }
    }
    diags
}

/// What a block with `count` or `for_each` sees for an instance not yet
/// known: `count.index`, `each.key` and `each.value` unknown.
fn unknown_instance(count: bool, for_each: bool) -> Instance {
    Instance {
        count_index: count.then(|| Value::unknown(Type::Number)),
        each: for_each.then(|| (Value::unknown(Type::String), Value::unknown(Type::Dynamic))),
        self_value: None,
    }
}

/// A resource block as diagnostics name it: `resource "aws_sqs_queue" "q"`.
fn resource_context(key: &ResourceKey) -> String {
    format!(
        "{} \"{}\" \"{}\"",
        if key.mode == Mode::Data {
            "data"
        } else {
            "resource"
        },
        key.type_name,
        key.name
    )
}

/// Lets the provider check each resource's configuration.
async fn provider_checks(
    resolved: &Resolved,
    configs: Vec<(&Tree, ResourceKey, Value)>,
    options: &LaunchOptions,
    diags: &mut Diagnostics,
) {
    let binary = &resolved.found.executable;
    let launched = async {
        let plugin = Plugin::launch(binary, options).await?;
        GrpcProvider::new(plugin).map(|p| p.with_schema(resolved.schema.clone()))
    };
    let mut provider = match launched.await {
        Ok(p) => p,
        Err(e) => {
            diags.push(Diagnostic::error("Failed to start provider", e.to_string()));
            return;
        }
    };
    for (tree, key, config) in configs {
        let module = &tree.module;
        let result = match key.mode {
            Mode::Managed => {
                provider
                    .validate_resource_config(&key.type_name, &config)
                    .await
            }
            Mode::Data => {
                provider
                    .validate_data_source_config(&key.type_name, &config)
                    .await
            }
        };
        let res = &module.resources[&key];
        match result {
            Ok(()) => {}
            Err(ProviderError::Diagnostics { diagnostics, .. }) => {
                for d in diagnostics {
                    let at = attribute_range(res, d.attribute.as_ref().and_then(|p| p.0.first()));
                    let ours = match d.severity {
                        Severity::Error => Diagnostic::error(d.summary, d.detail),
                        Severity::Warning => Diagnostic::warning(d.summary, d.detail),
                    };
                    diags.push(
                        ours.at(at)
                            .about(match tree.address().as_str() {
                                "" => key.to_string(),
                                m => format!("{m}.{key}"),
                            })
                            .in_context(Some(resource_context(&key))),
                    );
                }
            }
            Err(e) => {
                diags.push(Diagnostic::error("Provider error", e.to_string()).at(res.range.clone()))
            }
        }
    }
    provider.shutdown().await;
}

/// Where a provider's diagnostic about an attribute points: the
/// attribute's value when the configuration sets it, else the block.
fn attribute_range(res: &config::Resource, step: Option<&PathStep>) -> Range {
    if let Some(PathStep::Attribute(name)) = step {
        if let Some(a) = res.config.body.get_attribute(name) {
            return res.config.file.range(config::span_of(&a.value));
        }
    }
    res.range.clone()
}

fn with_context(d: Diagnostics, context: &str) -> Diagnostics {
    Diagnostics(
        d.0.into_iter()
            .map(|x| {
                let c = x.context.clone().or(Some(context.to_string()));
                x.in_context(c)
            })
            .collect(),
    )
}
