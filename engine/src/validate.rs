//! `choudoufu validate`: a root and the modules it calls checked as
//! `terraform validate` checks them, without touching any live object. Structure, references and cycles
//! first; then every block evaluated with unknown input variables and
//! unknown resource attributes against its provider's schema; then each
//! resource's configuration given to its provider to check.

use crate::addr::Mode;
use crate::config::tree::{load_tree, Tree};
use crate::config::{self, Module, ResourceKey};
use crate::diag::{Diagnostic, Diagnostics, Sources};
use crate::eval::body::decode;
use crate::eval::inputs;
use crate::eval::module::{expansion, unknown_outputs, Instance, ModuleValues};
use crate::graph::{cycle_in_module, Graph, Node};
use crate::provider::cache::SchemaCache;
use crate::provider::diagnostic::{PathStep, Severity as ProviderSeverity};
use crate::provider::discovery::ProviderSource;
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
    let sources = tree.sources();
    if !diags.has_errors() {
        check(&tree, cache, options, depth, &mut diags).await;
    }
    Validation {
        diagnostics: diags,
        sources,
    }
}

/// Resource configurations for one provider binary to check, with the
/// module each resource is in.
type Checks<'a> = BTreeMap<PathBuf, (Resolved, Vec<(&'a Module, ResourceKey, Value)>)>;

async fn check(
    tree: &Tree,
    cache: Option<&SchemaCache>,
    options: &LaunchOptions,
    depth: Depth,
    diags: &mut Diagnostics,
) {
    let modules = tree.modules();
    let mut prepared = BTreeMap::new();
    for t in &modules {
        let (graph, d) = Graph::build_in(&t.module, &t.address());
        diags.extend(d);
        match graph.order() {
            Ok(order) => {
                prepared.insert(
                    t.address(),
                    Prepared {
                        graph,
                        order,
                        providers: BTreeMap::new(),
                    },
                );
            }
            Err(cycles) => {
                for c in cycles {
                    diags.push(cycle_in_module(&t.address(), &c));
                }
            }
        }
    }
    if diags.has_errors() {
        return;
    }
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
        .into_iter()
        .filter(|t| !t.module.resources.is_empty() || !t.module.providers.is_empty())
        .collect();
    let ms: Vec<&Module> = using.iter().map(|t| &t.module).collect();
    match resolve::for_modules(&ms, &tree.module.dir, cache, options).await {
        Ok(found) => {
            for (t, providers) in using.iter().zip(found) {
                if let Some(p) = prepared.get_mut(&t.address()) {
                    p.providers = providers;
                }
            }
        }
        Err(e) => {
            diags.push(Diagnostic::error(
                "Failed to load plugin schemas",
                format!("Error while loading schemas for plugin components: {e}."),
            ));
            return;
        }
    }
    let mut checks = Checks::new();
    evaluate(tree, &tree.module.dir, &prepared, &mut checks, diags);
    if depth.provider_checks && !diags.has_errors() {
        for (resolved, configs) in checks.into_values() {
            provider_checks(&resolved, configs, options, diags).await;
        }
    }
}

/// One module's graph, the order to evaluate it in, and its providers.
struct Prepared {
    graph: Graph,
    order: Vec<Node>,
    providers: BTreeMap<String, Resolved>,
}

/// Evaluates every block of one module in order, and of the modules it
/// calls, with unknown variables and unknown resource attributes and module
/// outputs, and collects each resource's configuration for its provider to
/// check. As terraform's walk does, a block that depends on one that failed
/// is skipped, and a call whose arguments failed does not evaluate its
/// module. Returns whether every output of the module could be evaluated.
fn evaluate<'a>(
    tree: &'a Tree,
    root_dir: &Path,
    prepared: &BTreeMap<String, Prepared>,
    checks: &mut Checks<'a>,
    diags: &mut Diagnostics,
) -> bool {
    let module = &tree.module;
    let Some(Prepared {
        graph,
        order,
        providers,
    }) = prepared.get(&tree.address())
    else {
        return false;
    };
    let mut values = ModuleValues::new(inputs::unknowns(module), &module.dir, root_dir);
    let mut failed: BTreeSet<&Node> = BTreeSet::new();
    let errors = |d: &Diagnostics| d.iter().filter(|x| x.is_error()).count();
    for node in order {
        if graph.deps(node).any(|d| failed.contains(d)) {
            failed.insert(node);
            continue;
        }
        let before = errors(diags);
        match node.clone() {
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
                if let Err(d) = expansion(&values, res.count.as_ref(), res.for_each.as_ref(), true)
                {
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
                    failed.insert(node);
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
                                .push((module, key.clone(), v));
                        }
                    }
                    Err(d) => diags.extend(with_context(d, &context)),
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
                if let Err(d) =
                    expansion(&values, call.count.as_ref(), call.for_each.as_ref(), true)
                {
                    diags.extend(with_context(d, &context));
                }
                let instance = unknown_instance(call.count.is_some(), call.for_each.is_some());
                match inputs::from_call(call, &child.module, &child.address(), |e| {
                    values.eval(e, &instance)
                }) {
                    Ok(_) if errors(diags) == before => {
                        if !evaluate(child, root_dir, prepared, checks, diags) {
                            failed.insert(node);
                        }
                    }
                    Ok(_) => {}
                    Err(d) => diags.extend(with_context(d, &context)),
                }
                values
                    .modules
                    .insert(name, unknown_outputs(call, &child.module));
            }
            Node::Output(name) => {
                let out = &module.outputs[&name];
                if let Err(d) = values.eval(&out.value, &Instance::default()) {
                    diags.extend(with_context(d, &format!("output \"{name}\"")));
                }
            }
        }
        if errors(diags) > before {
            failed.insert(node);
        }
    }
    !order
        .iter()
        .any(|n| matches!(n, Node::Output(_)) && failed.contains(n))
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
    configs: Vec<(&Module, ResourceKey, Value)>,
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
    for (module, key, config) in configs {
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
                        ProviderSeverity::Error => Diagnostic::error(d.summary, d.detail),
                        ProviderSeverity::Warning => Diagnostic::warning(d.summary, d.detail),
                    };
                    diags.push(
                        ours.at(at)
                            .about(key.to_string())
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
