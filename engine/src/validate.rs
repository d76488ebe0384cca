//! `choudoufu validate`: a root checked as `terraform validate` checks it,
//! without touching any live object. Structure, references and cycles
//! first; then every block evaluated with unknown input variables and
//! unknown resource attributes against its provider's schema; then each
//! resource's configuration given to its provider to check.

use crate::addr::Mode;
use crate::config::{self, Module, ResourceKey};
use crate::diag::{Diagnostic, Diagnostics, Sources};
use crate::eval::body::decode;
use crate::eval::inputs;
use crate::eval::module::{expansion, Instance, ModuleValues};
use crate::graph::{cycle_diagnostic, Graph, Node};
use crate::provider::cache::SchemaCache;
use crate::provider::diagnostic::{PathStep, Severity as ProviderSeverity};
use crate::provider::plugin::{LaunchOptions, Plugin};
use crate::provider::resolve::{self, Resolved};
use crate::provider::{grpc::GrpcProvider, Provider, ProviderError};
use crate::source::Range;
use crate::value::{Type, Value};
use std::collections::BTreeMap;
use std::path::Path;

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

/// Validates the root module in `dir`.
pub async fn validate(
    dir: &Path,
    cache: Option<&SchemaCache>,
    options: &LaunchOptions,
    depth: Depth,
) -> Validation {
    let (module, mut diags) = config::load(dir);
    let sources = module.sources().clone();
    if !diags.has_errors() {
        check(&module, cache, options, depth, &mut diags).await;
    }
    Validation {
        diagnostics: diags,
        sources,
    }
}

async fn check(
    module: &Module,
    cache: Option<&SchemaCache>,
    options: &LaunchOptions,
    depth: Depth,
    diags: &mut Diagnostics,
) {
    let (graph, d) = Graph::build(module);
    diags.extend(d);
    if diags.has_errors() {
        return;
    }
    let order = match graph.order() {
        Ok(o) => o,
        Err(cycles) => {
            for c in cycles {
                diags.push(cycle_diagnostic(&c));
            }
            return;
        }
    };
    diags.extend(inputs::check_defaults(module));
    for call in module.module_calls.values() {
        diags.push(
            Diagnostic::error(
                "Module calls are not supported",
                format!("This engine does not load child modules yet, so module \"{}\" cannot be validated.", call.name),
            )
            .at(call.range.clone()),
        );
    }
    if diags.has_errors() {
        return;
    }
    let providers = if module.resources.is_empty() && module.providers.is_empty() {
        BTreeMap::new()
    } else {
        match resolve::for_module(module, cache, options).await {
            Ok(p) => p,
            Err(e) => {
                diags.push(Diagnostic::error(
                    "Failed to load plugin schemas",
                    format!("Error while loading schemas for plugin components: {e}."),
                ));
                return;
            }
        }
    };
    let mut values = ModuleValues::new(inputs::unknowns(module), &module.dir, &module.dir);
    let mut checks: BTreeMap<String, Vec<(ResourceKey, Value)>> = BTreeMap::new();
    for node in order {
        match node {
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
                let context = format!(
                    "{} \"{}\" \"{}\"",
                    if key.mode == Mode::Data {
                        "data"
                    } else {
                        "resource"
                    },
                    key.type_name,
                    key.name
                );
                if let Err(d) = expansion(&values, res.count.as_ref(), res.for_each.as_ref(), true)
                {
                    diags.extend(with_context(d, &context));
                }
                let provider = res.provider_ref().name;
                let Some(schema) = providers.get(&provider).and_then(|r| {
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
                    let source = providers
                        .get(&provider)
                        .map_or(provider.clone(), |r| r.found.source.to_string());
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
                    continue;
                };
                let instance = Instance {
                    count_index: res.count.as_ref().map(|_| Value::unknown(Type::Number)),
                    each: res
                        .for_each
                        .as_ref()
                        .map(|_| (Value::unknown(Type::String), Value::unknown(Type::Dynamic))),
                    self_value: None,
                };
                let scope = values.scope_for(&res.config.references(), &instance);
                match decode(&res.config, &schema.block, &scope) {
                    Ok(v) => checks.entry(provider).or_default().push((key.clone(), v)),
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
                values.modules.insert(name, Value::unknown(Type::Dynamic));
            }
            Node::Output(name) => {
                let out = &module.outputs[&name];
                if let Err(d) = values.eval(&out.value, &Instance::default()) {
                    diags.extend(with_context(d, &format!("output \"{name}\"")));
                }
            }
        }
    }
    if depth.provider_checks && !diags.has_errors() {
        for (name, configs) in checks {
            if let Some(resolved) = providers.get(&name) {
                provider_checks(module, resolved, configs, options, diags).await;
            }
        }
    }
}

/// Lets the provider check each resource's configuration.
async fn provider_checks(
    module: &Module,
    resolved: &Resolved,
    configs: Vec<(ResourceKey, Value)>,
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
    for (key, config) in configs {
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
                    diags.push(ours.at(at).about(key.to_string()).in_context(Some(format!(
                        "{} \"{}\" \"{}\"",
                        if key.mode == Mode::Data {
                            "data"
                        } else {
                            "resource"
                        },
                        key.type_name,
                        key.name
                    ))));
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
