//! The tfplugin5 client: the one module that sees the protocol's wire types.
//!
//! Generated messages stay in the private `pb` module; every request is
//! built and every response converted here, into the types of
//! [`super::schema`], [`super::value`] and [`super::diagnostic`]. Protocol 6 plugins are
//! recognised by the handshake but not driven yet.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use super::diagnostic::{AttributePath, Diagnostic, PathStep, Severity};
use super::msgpack;
use super::plugin::{Plugin, MAX_MESSAGE_SIZE};
use super::schema::{
    Attribute, Block, Capabilities, DescriptionKind, Function, NestedBlock, Nesting, Parameter,
    ProviderSchema, Schema,
};
use super::{
    ImportedResource, PlannedChange, Provider, ProviderError, ResourceState,
    TERRAFORM_COMPAT_VERSION,
};
use crate::value::{Type, Value};

// The protocol wraps each call's Request and Response in a message used
// only as a namespace (such as `GetProviderSchema`), never built itself.
#[allow(dead_code)]
mod pb {
    tonic::include_proto!("tfplugin5");
}

type Client = pb::provider_client::ProviderClient<tonic::transport::Channel>;

/// A provider plugin driven over protocol 5. Calls that carry values need
/// the schema: the one [`GrpcProvider::with_schema`] gave, else the one
/// the first such call asks for.
pub struct GrpcProvider {
    plugin: Plugin,
    client: Client,
    schema: Option<Arc<ProviderSchema>>,
}

impl GrpcProvider {
    /// Wraps a launched plugin; refuses one that chose a protocol other
    /// than 5 in its handshake.
    pub fn new(plugin: Plugin) -> Result<GrpcProvider, ProviderError> {
        if plugin.protocol() != 5 {
            return Err(ProviderError::UnsupportedProtocol {
                binary: plugin.binary().into(),
                protocol: plugin.protocol(),
            });
        }
        let client = Client::new(plugin.channel())
            .max_decoding_message_size(MAX_MESSAGE_SIZE)
            .max_encoding_message_size(MAX_MESSAGE_SIZE);
        Ok(GrpcProvider {
            plugin,
            client,
            schema: None,
        })
    }

    /// Uses a schema obtained earlier (from the cache) instead of asking.
    /// Only sound for the same binary, and for providers that announce
    /// `get_provider_schema_optional`, as the aws provider does.
    pub fn with_schema(mut self, schema: Arc<ProviderSchema>) -> GrpcProvider {
        self.schema = Some(schema);
        self
    }

    async fn known_schema(&mut self) -> Result<Arc<ProviderSchema>, ProviderError> {
        if let Some(schema) = &self.schema {
            return Ok(schema.clone());
        }
        let schema = Arc::new(self.schema().await?);
        self.schema = Some(schema.clone());
        Ok(schema)
    }

    /// The implied type of a resource type's state.
    async fn resource_type(
        &mut self,
        method: &'static str,
        type_name: &str,
    ) -> Result<Type, ProviderError> {
        let schema = self.known_schema().await?;
        let resource =
            schema
                .resources
                .get(type_name)
                .ok_or_else(|| ProviderError::NoSuchType {
                    binary: self.plugin.binary().into(),
                    method,
                    what: "resource type",
                    name: type_name.into(),
                })?;
        Ok(resource.block.implied_type())
    }

    /// The implied type of a data source's configuration and result.
    async fn data_source_type(
        &mut self,
        method: &'static str,
        type_name: &str,
    ) -> Result<Type, ProviderError> {
        let schema = self.known_schema().await?;
        let data_source =
            schema
                .data_sources
                .get(type_name)
                .ok_or_else(|| ProviderError::NoSuchType {
                    binary: self.plugin.binary().into(),
                    method,
                    what: "data source",
                    name: type_name.into(),
                })?;
        Ok(data_source.block.implied_type())
    }

    /// A handle that cancels this provider's calls in flight (the Stop
    /// RPC) from another task; the provider keeps running.
    pub fn stop_handle(&self) -> StopHandle {
        StopHandle {
            client: self.client.clone(),
            binary: self.plugin.binary().into(),
        }
    }

    fn encode(
        &self,
        method: &'static str,
        value: &Value,
        ty: &Type,
    ) -> Result<pb::DynamicValue, ProviderError> {
        let msgpack = msgpack::encode(value, ty).map_err(|e| ProviderError::Encode {
            binary: self.plugin.binary().into(),
            method,
            reason: e.to_string(),
        })?;
        Ok(pb::DynamicValue {
            msgpack,
            json: Vec::new(),
        })
    }

    fn decode(
        &self,
        method: &'static str,
        value: Option<pb::DynamicValue>,
        ty: &Type,
    ) -> Result<Value, ProviderError> {
        let Some(value) = value else {
            return Ok(Value::null(ty.without_optional()));
        };
        if value.msgpack.is_empty() && !value.json.is_empty() {
            return Err(self.decode_error(
                method,
                "the provider answered in JSON, which the engine does not read".into(),
            ));
        }
        if value.msgpack.is_empty() {
            return Ok(Value::null(ty.without_optional()));
        }
        msgpack::decode(&value.msgpack, ty).map_err(|e| self.decode_error(method, e.to_string()))
    }

    /// Logs warnings; fails on errors.
    fn check(
        &self,
        method: &'static str,
        diagnostics: Vec<pb::Diagnostic>,
    ) -> Result<(), ProviderError> {
        let diagnostics = self::diagnostics(diagnostics);
        for warning in diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
        {
            tracing::warn!(
                "provider {}: {method}: {warning}",
                self.plugin.binary().display()
            );
        }
        if diagnostics.iter().any(|d| d.severity == Severity::Error) {
            return Err(ProviderError::Diagnostics {
                binary: self.plugin.binary().into(),
                method,
                diagnostics,
            });
        }
        Ok(())
    }

    /// The plugin underneath, to shut it down.
    pub fn into_plugin(self) -> Plugin {
        self.plugin
    }

    fn rpc_error(&self, method: &'static str, status: tonic::Status) -> ProviderError {
        ProviderError::Rpc {
            binary: self.plugin.binary().into(),
            method,
            code: format!("{:?}", status.code()),
            message: status.message().to_string(),
        }
    }

    fn decode_error(&self, method: &'static str, reason: String) -> ProviderError {
        ProviderError::Decode {
            binary: self.plugin.binary().into(),
            method,
            reason,
        }
    }
}

impl Provider for GrpcProvider {
    async fn schema(&mut self) -> Result<ProviderSchema, ProviderError> {
        const METHOD: &str = "GetSchema";
        let started = Instant::now();
        let mut response = self
            .client
            .get_schema(pb::get_provider_schema::Request {})
            .await
            .map_err(|status| self.rpc_error(METHOD, status))?
            .into_inner();
        tracing::debug!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            "GetSchema answered"
        );
        self.check(METHOD, std::mem::take(&mut response.diagnostics))?;
        provider_schema(response).map_err(|reason| self.decode_error(METHOD, reason))
    }

    async fn configure(&mut self, config: &Value) -> Result<(), ProviderError> {
        const METHOD: &str = "Configure";
        let ty = self.known_schema().await?.provider.block.implied_type();
        let request = pb::configure::Request {
            terraform_version: TERRAFORM_COMPAT_VERSION.into(),
            config: Some(self.encode(METHOD, config, &ty)?),
            client_capabilities: Some(pb::ClientCapabilities::default()),
        };
        let response = self
            .client
            .configure(request)
            .await
            .map_err(|status| self.rpc_error(METHOD, status))?
            .into_inner();
        self.check(METHOD, response.diagnostics)
    }

    async fn import_resource_state(
        &mut self,
        type_name: &str,
        id: &str,
    ) -> Result<Vec<ImportedResource>, ProviderError> {
        const METHOD: &str = "ImportResourceState";
        self.resource_type(METHOD, type_name).await?;
        let request = pb::import_resource_state::Request {
            type_name: type_name.into(),
            id: id.into(),
            client_capabilities: Some(pb::ClientCapabilities::default()),
        };
        let response = self
            .client
            .import_resource_state(request)
            .await
            .map_err(|status| self.rpc_error(METHOD, status))?
            .into_inner();
        self.check(METHOD, response.diagnostics)?;
        let mut imported = Vec::new();
        for resource in response.imported_resources {
            // An import may return objects of other types too.
            let ty = self.resource_type(METHOD, &resource.type_name).await?;
            imported.push(ImportedResource {
                state: ResourceState {
                    value: self.decode(METHOD, resource.state, &ty)?,
                    private: resource.private,
                },
                type_name: resource.type_name,
            });
        }
        Ok(imported)
    }

    async fn upgrade_resource_state(
        &mut self,
        type_name: &str,
        version: i64,
        raw_json: &[u8],
    ) -> Result<Value, ProviderError> {
        const METHOD: &str = "UpgradeResourceState";
        let ty = self.resource_type(METHOD, type_name).await?;
        let request = pb::upgrade_resource_state::Request {
            type_name: type_name.into(),
            version,
            raw_state: Some(pb::RawState {
                json: raw_json.to_vec(),
            }),
        };
        let response = self
            .client
            .upgrade_resource_state(request)
            .await
            .map_err(|status| self.rpc_error(METHOD, status))?
            .into_inner();
        self.check(METHOD, response.diagnostics)?;
        self.decode(METHOD, response.upgraded_state, &ty)
    }

    async fn prepare_provider_config(&mut self, config: &Value) -> Result<Value, ProviderError> {
        const METHOD: &str = "PrepareProviderConfig";
        let ty = self.known_schema().await?.provider.block.implied_type();
        let request = pb::prepare_provider_config::Request {
            config: Some(self.encode(METHOD, config, &ty)?),
        };
        let response = self
            .client
            .prepare_provider_config(request)
            .await
            .map_err(|status| self.rpc_error(METHOD, status))?
            .into_inner();
        self.check(METHOD, response.diagnostics)?;
        self.decode(METHOD, response.prepared_config, &ty)
    }

    async fn validate_resource_config(
        &mut self,
        type_name: &str,
        config: &Value,
    ) -> Result<(), ProviderError> {
        const METHOD: &str = "ValidateResourceTypeConfig";
        let ty = self.resource_type(METHOD, type_name).await?;
        let request = pb::validate_resource_type_config::Request {
            type_name: type_name.into(),
            config: Some(self.encode(METHOD, config, &ty)?),
        };
        let response = self
            .client
            .validate_resource_type_config(request)
            .await
            .map_err(|status| self.rpc_error(METHOD, status))?
            .into_inner();
        self.check(METHOD, response.diagnostics)
    }

    async fn validate_data_source_config(
        &mut self,
        type_name: &str,
        config: &Value,
    ) -> Result<(), ProviderError> {
        const METHOD: &str = "ValidateDataSourceConfig";
        let ty = self.data_source_type(METHOD, type_name).await?;
        let request = pb::validate_data_source_config::Request {
            type_name: type_name.into(),
            config: Some(self.encode(METHOD, config, &ty)?),
        };
        let response = self
            .client
            .validate_data_source_config(request)
            .await
            .map_err(|status| self.rpc_error(METHOD, status))?
            .into_inner();
        self.check(METHOD, response.diagnostics)
    }

    async fn plan_resource_change(
        &mut self,
        type_name: &str,
        prior: &ResourceState,
        proposed_new: &Value,
        config: &Value,
    ) -> Result<PlannedChange, ProviderError> {
        const METHOD: &str = "PlanResourceChange";
        let ty = self.resource_type(METHOD, type_name).await?;
        let request = pb::plan_resource_change::Request {
            type_name: type_name.into(),
            prior_state: Some(self.encode(METHOD, &prior.value, &ty)?),
            proposed_new_state: Some(self.encode(METHOD, proposed_new, &ty)?),
            config: Some(self.encode(METHOD, config, &ty)?),
            prior_private: prior.private.clone(),
            provider_meta: Some(self.encode(
                METHOD,
                &Value::null(Type::Dynamic),
                &Type::Dynamic,
            )?),
            client_capabilities: Some(pb::ClientCapabilities::default()),
        };
        let response = self
            .client
            .plan_resource_change(request)
            .await
            .map_err(|status| self.rpc_error(METHOD, status))?
            .into_inner();
        self.check(METHOD, response.diagnostics)?;
        Ok(PlannedChange {
            planned_state: self.decode(METHOD, response.planned_state, &ty)?,
            requires_replace: response
                .requires_replace
                .into_iter()
                .map(attribute_path)
                .collect(),
            planned_private: response.planned_private,
            legacy_type_system: response.legacy_type_system,
        })
    }

    async fn apply_resource_change(
        &mut self,
        type_name: &str,
        prior: &Value,
        planned: &PlannedChange,
        config: &Value,
    ) -> Result<Option<ResourceState>, ProviderError> {
        const METHOD: &str = "ApplyResourceChange";
        let ty = self.resource_type(METHOD, type_name).await?;
        let request = pb::apply_resource_change::Request {
            type_name: type_name.into(),
            prior_state: Some(self.encode(METHOD, prior, &ty)?),
            planned_state: Some(self.encode(METHOD, &planned.planned_state, &ty)?),
            config: Some(self.encode(METHOD, config, &ty)?),
            planned_private: planned.planned_private.clone(),
            provider_meta: Some(self.encode(
                METHOD,
                &Value::null(Type::Dynamic),
                &Type::Dynamic,
            )?),
        };
        let response = self
            .client
            .apply_resource_change(request)
            .await
            .map_err(|status| self.rpc_error(METHOD, status))?
            .into_inner();
        self.check(METHOD, response.diagnostics)?;
        let value = self.decode(METHOD, response.new_state, &ty)?;
        Ok((!value.is_null()).then_some(ResourceState {
            value,
            private: response.private,
        }))
    }

    async fn read_data_source(
        &mut self,
        type_name: &str,
        config: &Value,
    ) -> Result<Value, ProviderError> {
        const METHOD: &str = "ReadDataSource";
        let ty = self.data_source_type(METHOD, type_name).await?;
        let request = pb::read_data_source::Request {
            type_name: type_name.into(),
            config: Some(self.encode(METHOD, config, &ty)?),
            provider_meta: Some(self.encode(
                METHOD,
                &Value::null(Type::Dynamic),
                &Type::Dynamic,
            )?),
            client_capabilities: Some(pb::ClientCapabilities::default()),
        };
        let response = self
            .client
            .read_data_source(request)
            .await
            .map_err(|status| self.rpc_error(METHOD, status))?
            .into_inner();
        self.check(METHOD, response.diagnostics)?;
        self.decode(METHOD, response.state, &ty)
    }

    async fn read_resource(
        &mut self,
        type_name: &str,
        current: &ResourceState,
    ) -> Result<Option<ResourceState>, ProviderError> {
        const METHOD: &str = "ReadResource";
        let ty = self.resource_type(METHOD, type_name).await?;
        let request = pb::read_resource::Request {
            type_name: type_name.into(),
            current_state: Some(self.encode(METHOD, &current.value, &ty)?),
            private: current.private.clone(),
            // No provider_meta block: a null of the dynamic type, as
            // terraform sends.
            provider_meta: Some(self.encode(
                METHOD,
                &Value::null(Type::Dynamic),
                &Type::Dynamic,
            )?),
            client_capabilities: Some(pb::ClientCapabilities::default()),
        };
        let response = self
            .client
            .read_resource(request)
            .await
            .map_err(|status| self.rpc_error(METHOD, status))?
            .into_inner();
        self.check(METHOD, response.diagnostics)?;
        let value = self.decode(METHOD, response.new_state, &ty)?;
        Ok((!value.is_null()).then_some(ResourceState {
            value,
            private: response.private,
        }))
    }
}

/// Cancels a provider's calls in flight, from any task.
#[derive(Clone)]
pub struct StopHandle {
    client: Client,
    binary: std::path::PathBuf,
}

impl StopHandle {
    /// Sends Stop; the calls in flight then return, usually with errors.
    pub async fn stop(&self) -> Result<(), ProviderError> {
        let response = self
            .client
            .clone()
            .stop(pb::stop::Request {})
            .await
            .map_err(|status| ProviderError::Rpc {
                binary: self.binary.clone(),
                method: "Stop",
                code: format!("{:?}", status.code()),
                message: status.message().to_string(),
            })?
            .into_inner();
        if response.error.is_empty() {
            Ok(())
        } else {
            Err(ProviderError::Stop {
                binary: self.binary.clone(),
                message: response.error,
            })
        }
    }
}

fn provider_schema(r: pb::get_provider_schema::Response) -> Result<ProviderSchema, String> {
    let schemas = |map: std::collections::HashMap<String, pb::Schema>| {
        map.into_iter()
            .map(|(name, s)| {
                let converted = schema(s).map_err(|e| format!("{name}: {e}"))?;
                Ok((name, converted))
            })
            .collect::<Result<BTreeMap<_, _>, String>>()
    };
    let functions = r
        .functions
        .into_iter()
        .map(|(name, f)| {
            let converted = function(f).map_err(|e| format!("function {name}: {e}"))?;
            Ok((name, converted))
        })
        .collect::<Result<BTreeMap<_, _>, String>>()?;
    let caps = r.server_capabilities.unwrap_or_default();
    Ok(ProviderSchema {
        provider: schema(r.provider.unwrap_or_default()).map_err(|e| format!("provider: {e}"))?,
        resources: schemas(r.resource_schemas)?,
        data_sources: schemas(r.data_source_schemas)?,
        ephemeral_resources: schemas(r.ephemeral_resource_schemas)?,
        functions,
        provider_meta: r
            .provider_meta
            .filter(|m| m.block.is_some())
            .map(schema)
            .transpose()
            .map_err(|e| format!("provider_meta: {e}"))?,
        capabilities: Capabilities {
            plan_destroy: caps.plan_destroy,
            get_provider_schema_optional: caps.get_provider_schema_optional,
            move_resource_state: caps.move_resource_state,
        },
    })
}

fn schema(s: pb::Schema) -> Result<Schema, String> {
    Ok(Schema {
        version: s.version,
        block: block(s.block.unwrap_or_default())?,
    })
}

fn block(b: pb::schema::Block) -> Result<Block, String> {
    let description_kind = description_kind(b.description_kind());
    let attributes = b
        .attributes
        .into_iter()
        .map(|a| {
            let name = a.name.clone();
            Ok((name, attribute(a)?))
        })
        .collect::<Result<_, String>>()?;
    let block_types = b
        .block_types
        .into_iter()
        .map(|nb| {
            let name = nb.type_name.clone();
            Ok((name, nested_block(nb)?))
        })
        .collect::<Result<_, String>>()?;
    Ok(Block {
        attributes,
        block_types,
        description: b.description,
        description_kind,
        deprecated: b.deprecated,
    })
}

fn attribute(a: pb::schema::Attribute) -> Result<Attribute, String> {
    let ty = Type::from_json_bytes(&a.r#type).map_err(|e| format!("attribute {}: {e}", a.name))?;
    Ok(Attribute {
        ty,
        nested_type: None,
        description_kind: description_kind(a.description_kind()),
        description: a.description,
        required: a.required,
        optional: a.optional,
        computed: a.computed,
        sensitive: a.sensitive,
        deprecated: a.deprecated,
        write_only: a.write_only,
    })
}

fn nested_block(nb: pb::schema::NestedBlock) -> Result<NestedBlock, String> {
    use pb::schema::nested_block::NestingMode;
    let nesting = match nb.nesting() {
        NestingMode::Single => Nesting::Single,
        NestingMode::Group => Nesting::Group,
        NestingMode::List => Nesting::List,
        NestingMode::Set => Nesting::Set,
        NestingMode::Map => Nesting::Map,
        NestingMode::Invalid => {
            return Err(format!("block {}: invalid nesting mode", nb.type_name))
        }
    };
    let count = |n: i64, what: &str| {
        u64::try_from(n).map_err(|_| format!("block {}: negative {what}", nb.type_name))
    };
    Ok(NestedBlock {
        nesting,
        min_items: count(nb.min_items, "min_items")?,
        max_items: count(nb.max_items, "max_items")?,
        block: block(nb.block.unwrap_or_default())?,
    })
}

fn function(f: pb::Function) -> Result<Function, String> {
    let return_type = f
        .r#return
        .as_ref()
        .ok_or("no return type")
        .and_then(|r| Type::from_json_bytes(&r.r#type).map_err(|_| "invalid return type"))?;
    Ok(Function {
        description_kind: description_kind(f.description_kind()),
        parameters: f
            .parameters
            .into_iter()
            .map(parameter)
            .collect::<Result<_, _>>()?,
        variadic_parameter: f.variadic_parameter.map(parameter).transpose()?,
        return_type,
        summary: f.summary,
        description: f.description,
        deprecation_message: f.deprecation_message,
    })
}

fn parameter(p: pb::function::Parameter) -> Result<Parameter, String> {
    Ok(Parameter {
        ty: Type::from_json_bytes(&p.r#type).map_err(|e| format!("parameter {}: {e}", p.name))?,
        description_kind: description_kind(p.description_kind()),
        name: p.name,
        allow_null_value: p.allow_null_value,
        allow_unknown_values: p.allow_unknown_values,
        description: p.description,
    })
}

fn description_kind(kind: pb::StringKind) -> DescriptionKind {
    match kind {
        pb::StringKind::Plain => DescriptionKind::Plain,
        pb::StringKind::Markdown => DescriptionKind::Markdown,
    }
}

fn diagnostics(ds: Vec<pb::Diagnostic>) -> Vec<Diagnostic> {
    ds.into_iter()
        .map(|d| Diagnostic {
            severity: match d.severity() {
                pb::diagnostic::Severity::Warning => Severity::Warning,
                // INVALID is not a severity a provider should send; treat it
                // as the stricter one.
                pb::diagnostic::Severity::Error | pb::diagnostic::Severity::Invalid => {
                    Severity::Error
                }
            },
            summary: d.summary,
            detail: d.detail,
            attribute: d.attribute.map(attribute_path),
        })
        .collect()
}

fn attribute_path(p: pb::AttributePath) -> AttributePath {
    use pb::attribute_path::step::Selector;
    AttributePath(
        p.steps
            .into_iter()
            .filter_map(|s| s.selector)
            .map(|s| match s {
                Selector::AttributeName(n) => PathStep::Attribute(n),
                Selector::ElementKeyString(k) => PathStep::Key(k),
                Selector::ElementKeyInt(i) => PathStep::Index(i),
            })
            .collect(),
    )
}
