//! The plugin protocol client, for protocols 5 and 6: the one module that
//! sees the protocol's wire types.
//!
//! Generated messages stay in the private `pb5` and `pb6` modules; every
//! request is built and every response converted here, into the types of
//! [`super::schema`], [`crate::value`] and [`super::diagnostic`]. The
//! handshake's negotiated version picks the client. The two protocols
//! share most messages (protocol 6 reuses the protocol 5 types for them,
//! see build.rs) and name their requests' fields alike, so each call is
//! written once for both (`call!`); only schema attributes, which gained
//! nested types in protocol 6, are converted per protocol.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use super::msgpack;
use super::path::{AttributePath, PathStep};
use super::plugin::{Plugin, MAX_MESSAGE_SIZE};
use super::schema::{
    Attribute, Block, Capabilities, DescriptionKind, Function, NestedBlock, NestedType, Nesting,
    ObjectNesting, Parameter, ProviderSchema, Schema, SchemaMap,
};
use super::{
    ImportedResource, PlannedChange, Provider, ProviderError, ResourceState, Stopper,
    TERRAFORM_COMPAT_VERSION,
};
use crate::diag::{Diagnostic, Severity};
use crate::value::{Type, Value};

// The protocol wraps each call's Request and Response in a message used
// only as a namespace (such as `GetProviderSchema`), never built itself.
#[allow(dead_code)]
mod pb5 {
    tonic::include_proto!("tfplugin5");
}

#[allow(dead_code)]
mod pb6 {
    tonic::include_proto!("tfplugin6");
}

/// The client of the protocol the plugin chose.
#[derive(Clone)]
enum Client {
    V5(pb5::provider_client::ProviderClient<tonic::transport::Channel>),
    V6(pb6::provider_client::ProviderClient<tonic::transport::Channel>),
}

impl Client {
    fn protocol(&self) -> u32 {
        match self {
            Client::V5(_) => 5,
            Client::V6(_) => 6,
        }
    }
}

/// Makes one call in whichever protocol the client speaks: `rpc5` or
/// `rpc6` with a request built from the same field list (both protocols
/// name the fields alike and share their types), the response bound to
/// `$r` and read by the same expression. Evaluates to the expression's
/// value; a failed call returns [`ProviderError::Rpc`] from the caller.
macro_rules! call {
    ($self:ident, $method:expr,
     $rpc5:ident($($req5:ident)::+), $rpc6:ident($($req6:ident)::+),
     { $($field:tt)* }, |$r:ident| $read:expr) => {
        match $self.client.clone() {
            Client::V5(mut client) => {
                let $r = client
                    .$rpc5($($req5)::+ { $($field)* })
                    .await
                    .map_err(|status| $self.rpc_error($method, status))?
                    .into_inner();
                $read
            }
            Client::V6(mut client) => {
                let $r = client
                    .$rpc6($($req6)::+ { $($field)* })
                    .await
                    .map_err(|status| $self.rpc_error($method, status))?
                    .into_inner();
                $read
            }
        }
    };
}

/// What the engine tells providers it supports: write-only attributes
/// (as terraform 1.11 does, so providers accept them in configuration),
/// not deferred changes.
fn client_capabilities() -> Option<pb5::ClientCapabilities> {
    Some(pb5::ClientCapabilities {
        deferral_allowed: false,
        write_only_attributes_allowed: true,
    })
}

/// A provider plugin driven over protocol 5 or 6. Calls that carry values
/// need the schema: the one [`GrpcProvider::with_schema`] gave, else the
/// one the first such call asks for.
/// Clones share the plugin: calls through several clones run at once
/// over the one connection, and the plugin stops when the last clone is
/// shut down or dropped.
#[derive(Clone)]
pub struct GrpcProvider {
    plugin: Arc<Plugin>,
    client: Client,
    schema: Option<Arc<ProviderSchema>>,
}

impl GrpcProvider {
    /// Wraps a launched plugin, speaking the protocol it chose in its
    /// handshake; refuses any but 5 and 6.
    pub fn new(plugin: Plugin) -> Result<GrpcProvider, ProviderError> {
        let channel = plugin.channel();
        let client = match plugin.protocol() {
            5 => Client::V5(
                pb5::provider_client::ProviderClient::new(channel)
                    .max_decoding_message_size(MAX_MESSAGE_SIZE)
                    .max_encoding_message_size(MAX_MESSAGE_SIZE),
            ),
            6 => Client::V6(
                pb6::provider_client::ProviderClient::new(channel)
                    .max_decoding_message_size(MAX_MESSAGE_SIZE)
                    .max_encoding_message_size(MAX_MESSAGE_SIZE),
            ),
            protocol => {
                return Err(ProviderError::UnsupportedProtocol {
                    binary: plugin.binary().into(),
                    protocol,
                })
            }
        };
        Ok(GrpcProvider {
            plugin: Arc::new(plugin),
            client,
            schema: None,
        })
    }

    /// The plugin protocol this provider is driven over (5 or 6).
    pub fn protocol(&self) -> u32 {
        self.client.protocol()
    }

    /// Uses a schema obtained earlier (from the cache) instead of asking.
    /// Only sound for the same binary, and for providers that announce
    /// `get_provider_schema_optional`, as the aws provider does.
    pub fn with_schema(mut self, schema: Arc<ProviderSchema>) -> GrpcProvider {
        self.schema = Some(schema);
        self
    }

    /// The provider's executable.
    pub fn binary(&self) -> &std::path::Path {
        self.plugin.binary()
    }

    async fn known_schema(&mut self) -> Result<Arc<ProviderSchema>, ProviderError> {
        if let Some(schema) = &self.schema {
            return Ok(schema.clone());
        }
        let schema = Arc::new(self.schema().await?);
        self.schema = Some(schema.clone());
        Ok(schema)
    }

    /// The schema of a resource type, and the implied type of its state.
    async fn resource_schema(
        &mut self,
        method: &'static str,
        type_name: &str,
    ) -> Result<(Arc<ProviderSchema>, Type), ProviderError> {
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
        let ty = resource.block.implied_type();
        Ok((schema, ty))
    }

    /// The implied type of a resource type's state.
    async fn resource_type(
        &mut self,
        method: &'static str,
        type_name: &str,
    ) -> Result<Type, ProviderError> {
        Ok(self.resource_schema(method, type_name).await?.1)
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

    /// The protocol's name for a call.
    fn method(&self, v5: &'static str, v6: &'static str) -> &'static str {
        match self.client {
            Client::V5(_) => v5,
            Client::V6(_) => v6,
        }
    }

    fn encode(
        &self,
        method: &'static str,
        value: &Value,
        ty: &Type,
    ) -> Result<pb5::DynamicValue, ProviderError> {
        let msgpack = msgpack::encode(value, ty).map_err(|e| ProviderError::Encode {
            binary: self.plugin.binary().into(),
            method,
            reason: e.to_string(),
        })?;
        Ok(pb5::DynamicValue {
            msgpack,
            json: Vec::new(),
        })
    }

    /// No provider_meta block: a null of the dynamic type, as terraform
    /// sends.
    fn no_provider_meta(&self, method: &'static str) -> Result<pb5::DynamicValue, ProviderError> {
        self.encode(method, &Value::null(Type::Dynamic), &Type::Dynamic)
    }

    fn decode(
        &self,
        method: &'static str,
        value: Option<pb5::DynamicValue>,
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

    /// Fails when an object a provider returned (planned, applied, read or
    /// imported) holds a value for a write-only attribute, as terraform
    /// refuses it.
    fn check_write_only(
        &self,
        method: &'static str,
        schema: &ProviderSchema,
        type_name: &str,
        value: &Value,
    ) -> Result<(), ProviderError> {
        let Some(resource) = schema.resources.get(type_name) else {
            return Ok(());
        };
        let paths = resource.block.non_null_write_only(value);
        if paths.is_empty() {
            return Ok(());
        }
        Err(ProviderError::WriteOnlySet {
            binary: self.plugin.binary().into(),
            method,
            type_name: type_name.into(),
            paths,
        })
    }

    /// Logs warnings; fails on errors.
    fn check(
        &self,
        method: &'static str,
        diagnostics: Vec<pb5::Diagnostic>,
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
    type Stop = StopHandle;

    /// A handle that cancels this provider's calls in flight (the Stop or
    /// StopProvider RPC) from another task; the provider keeps running.
    fn stop_handle(&self) -> StopHandle {
        StopHandle {
            client: self.client.clone(),
            binary: self.plugin.binary().into(),
        }
    }

    /// The schema given with [`GrpcProvider::with_schema`] or fetched by an
    /// earlier call, if any.
    fn cached_schema(&self) -> Option<&Arc<ProviderSchema>> {
        self.schema.as_ref()
    }

    /// Stops the plugin through its controller, if this is the last clone
    /// (the others keep it running until they go too).
    async fn shutdown(self) {
        if let Ok(plugin) = Arc::try_unwrap(self.plugin) {
            plugin.shutdown().await;
        }
    }

    async fn schema(&mut self) -> Result<ProviderSchema, ProviderError> {
        let method = self.method("GetSchema", "GetProviderSchema");
        let started = Instant::now();
        let rpc_error = |status| self.rpc_error(method, status);
        let (diagnostics, schema) = match self.client.clone() {
            Client::V5(mut client) => {
                let mut response = client
                    .get_schema(pb5::get_provider_schema::Request {})
                    .await
                    .map_err(rpc_error)?
                    .into_inner();
                let diagnostics = std::mem::take(&mut response.diagnostics);
                (diagnostics, from_v5::provider_schema(response))
            }
            Client::V6(mut client) => {
                let mut response = client
                    .get_provider_schema(pb6::get_provider_schema::Request {})
                    .await
                    .map_err(rpc_error)?
                    .into_inner();
                let diagnostics = std::mem::take(&mut response.diagnostics);
                (diagnostics, from_v6::provider_schema(response))
            }
        };
        tracing::debug!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            "{method} answered"
        );
        self.check(method, diagnostics)?;
        schema.map_err(|reason| self.decode_error(method, reason))
    }

    async fn configure(&mut self, config: &Value) -> Result<(), ProviderError> {
        let method = self.method("Configure", "ConfigureProvider");
        let ty = self.known_schema().await?.provider.block.implied_type();
        call! {
            self, method,
            configure(pb5::configure::Request),
            configure_provider(pb6::configure_provider::Request),
            {
                terraform_version: TERRAFORM_COMPAT_VERSION.into(),
                config: Some(self.encode(method, config, &ty)?),
                client_capabilities: client_capabilities(),
            },
            |response| self.check(method, response.diagnostics)
        }
    }

    async fn import_resource_state(
        &mut self,
        type_name: &str,
        id: &str,
    ) -> Result<Vec<ImportedResource>, ProviderError> {
        const METHOD: &str = "ImportResourceState";
        self.resource_type(METHOD, type_name).await?;
        let resources = call! {
            self, METHOD,
            import_resource_state(pb5::import_resource_state::Request),
            import_resource_state(pb6::import_resource_state::Request),
            {
                type_name: type_name.into(),
                id: id.into(),
                client_capabilities: client_capabilities(),
            },
            |response| {
                self.check(METHOD, response.diagnostics)?;
                response
                    .imported_resources
                    .into_iter()
                    .map(|r| (r.type_name, r.state, r.private))
                    .collect::<Vec<_>>()
            }
        };
        let mut imported = Vec::new();
        for (type_name, state, private) in resources {
            // An import may return objects of other types too.
            let (schema, ty) = self.resource_schema(METHOD, &type_name).await?;
            let value = self.decode(METHOD, state, &ty)?;
            self.check_write_only(METHOD, &schema, &type_name, &value)?;
            imported.push(ImportedResource {
                state: ResourceState { value, private },
                type_name,
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
        call! {
            self, METHOD,
            upgrade_resource_state(pb5::upgrade_resource_state::Request),
            upgrade_resource_state(pb6::upgrade_resource_state::Request),
            {
                type_name: type_name.into(),
                version,
                raw_state: Some(pb5::RawState {
                    json: raw_json.to_vec(),
                }),
            },
            |response| {
                self.check(METHOD, response.diagnostics)?;
                self.decode(METHOD, response.upgraded_state, &ty)
            }
        }
    }

    async fn prepare_provider_config(&mut self, config: &Value) -> Result<Value, ProviderError> {
        let ty = self.known_schema().await?.provider.block.implied_type();
        match self.client.clone() {
            Client::V5(mut client) => {
                const METHOD: &str = "PrepareProviderConfig";
                let request = pb5::prepare_provider_config::Request {
                    config: Some(self.encode(METHOD, config, &ty)?),
                };
                let response = client
                    .prepare_provider_config(request)
                    .await
                    .map_err(|status| self.rpc_error(METHOD, status))?
                    .into_inner();
                self.check(METHOD, response.diagnostics)?;
                self.decode(METHOD, response.prepared_config, &ty)
            }
            // Protocol 6 only validates; the configuration is used as given,
            // as terraform uses it.
            Client::V6(mut client) => {
                const METHOD: &str = "ValidateProviderConfig";
                let request = pb6::validate_provider_config::Request {
                    config: Some(self.encode(METHOD, config, &ty)?),
                };
                let response = client
                    .validate_provider_config(request)
                    .await
                    .map_err(|status| self.rpc_error(METHOD, status))?
                    .into_inner();
                self.check(METHOD, response.diagnostics)?;
                Ok(config.clone())
            }
        }
    }

    async fn validate_resource_config(
        &mut self,
        type_name: &str,
        config: &Value,
    ) -> Result<(), ProviderError> {
        let method = self.method("ValidateResourceTypeConfig", "ValidateResourceConfig");
        let ty = self.resource_type(method, type_name).await?;
        call! {
            self, method,
            validate_resource_type_config(pb5::validate_resource_type_config::Request),
            validate_resource_config(pb6::validate_resource_config::Request),
            {
                type_name: type_name.into(),
                config: Some(self.encode(method, config, &ty)?),
                client_capabilities: client_capabilities(),
            },
            |response| self.check(method, response.diagnostics)
        }
    }

    async fn validate_data_source_config(
        &mut self,
        type_name: &str,
        config: &Value,
    ) -> Result<(), ProviderError> {
        let method = self.method("ValidateDataSourceConfig", "ValidateDataResourceConfig");
        let ty = self.data_source_type(method, type_name).await?;
        call! {
            self, method,
            validate_data_source_config(pb5::validate_data_source_config::Request),
            validate_data_resource_config(pb6::validate_data_resource_config::Request),
            {
                type_name: type_name.into(),
                config: Some(self.encode(method, config, &ty)?),
            },
            |response| self.check(method, response.diagnostics)
        }
    }

    async fn plan_resource_change(
        &mut self,
        type_name: &str,
        prior: &ResourceState,
        proposed_new: &Value,
        config: &Value,
    ) -> Result<PlannedChange, ProviderError> {
        const METHOD: &str = "PlanResourceChange";
        let (schema, ty) = self.resource_schema(METHOD, type_name).await?;
        let planned = call! {
            self, METHOD,
            plan_resource_change(pb5::plan_resource_change::Request),
            plan_resource_change(pb6::plan_resource_change::Request),
            {
                type_name: type_name.into(),
                prior_state: Some(self.encode(METHOD, &prior.value, &ty)?),
                proposed_new_state: Some(self.encode(METHOD, proposed_new, &ty)?),
                config: Some(self.encode(METHOD, config, &ty)?),
                prior_private: prior.private.clone(),
                provider_meta: Some(self.no_provider_meta(METHOD)?),
                client_capabilities: client_capabilities(),
            },
            |response| {
                self.check(METHOD, response.diagnostics)?;
                PlannedChange {
                    planned_state: self.decode(METHOD, response.planned_state, &ty)?,
                    requires_replace: response
                        .requires_replace
                        .into_iter()
                        .map(attribute_path)
                        .collect(),
                    planned_private: response.planned_private,
                    legacy_type_system: response.legacy_type_system,
                }
            }
        };
        self.check_write_only(METHOD, &schema, type_name, &planned.planned_state)?;
        Ok(planned)
    }

    async fn apply_resource_change(
        &mut self,
        type_name: &str,
        prior: &Value,
        planned: &PlannedChange,
        config: &Value,
    ) -> Result<Option<ResourceState>, ProviderError> {
        const METHOD: &str = "ApplyResourceChange";
        let (schema, ty) = self.resource_schema(METHOD, type_name).await?;
        let (value, private) = call! {
            self, METHOD,
            apply_resource_change(pb5::apply_resource_change::Request),
            apply_resource_change(pb6::apply_resource_change::Request),
            {
                type_name: type_name.into(),
                prior_state: Some(self.encode(METHOD, prior, &ty)?),
                planned_state: Some(self.encode(METHOD, &planned.planned_state, &ty)?),
                config: Some(self.encode(METHOD, config, &ty)?),
                planned_private: planned.planned_private.clone(),
                provider_meta: Some(self.no_provider_meta(METHOD)?),
            },
            |response| {
                self.check(METHOD, response.diagnostics)?;
                (self.decode(METHOD, response.new_state, &ty)?, response.private)
            }
        };
        self.check_write_only(METHOD, &schema, type_name, &value)?;
        Ok((!value.is_null()).then_some(ResourceState { value, private }))
    }

    async fn read_data_source(
        &mut self,
        type_name: &str,
        config: &Value,
    ) -> Result<Value, ProviderError> {
        const METHOD: &str = "ReadDataSource";
        let ty = self.data_source_type(METHOD, type_name).await?;
        call! {
            self, METHOD,
            read_data_source(pb5::read_data_source::Request),
            read_data_source(pb6::read_data_source::Request),
            {
                type_name: type_name.into(),
                config: Some(self.encode(METHOD, config, &ty)?),
                provider_meta: Some(self.no_provider_meta(METHOD)?),
                client_capabilities: client_capabilities(),
            },
            |response| {
                self.check(METHOD, response.diagnostics)?;
                self.decode(METHOD, response.state, &ty)
            }
        }
    }

    async fn read_resource(
        &mut self,
        type_name: &str,
        current: &ResourceState,
    ) -> Result<Option<ResourceState>, ProviderError> {
        const METHOD: &str = "ReadResource";
        let (schema, ty) = self.resource_schema(METHOD, type_name).await?;
        let (value, private) = call! {
            self, METHOD,
            read_resource(pb5::read_resource::Request),
            read_resource(pb6::read_resource::Request),
            {
                type_name: type_name.into(),
                current_state: Some(self.encode(METHOD, &current.value, &ty)?),
                private: current.private.clone(),
                provider_meta: Some(self.no_provider_meta(METHOD)?),
                client_capabilities: client_capabilities(),
            },
            |response| {
                self.check(METHOD, response.diagnostics)?;
                (self.decode(METHOD, response.new_state, &ty)?, response.private)
            }
        };
        self.check_write_only(METHOD, &schema, type_name, &value)?;
        Ok((!value.is_null()).then_some(ResourceState { value, private }))
    }
}

/// Cancels a provider's calls in flight, from any task.
#[derive(Clone)]
pub struct StopHandle {
    client: Client,
    binary: std::path::PathBuf,
}

impl Stopper for StopHandle {
    /// Sends Stop (StopProvider in protocol 6); the calls in flight then
    /// return, usually with errors.
    async fn stop(&self) -> Result<(), ProviderError> {
        let rpc_error = |method, status: tonic::Status| ProviderError::Rpc {
            binary: self.binary.clone(),
            method,
            code: format!("{:?}", status.code()),
            message: status.message().to_string(),
        };
        let error = match self.client.clone() {
            Client::V5(mut client) => {
                client
                    .stop(pb5::stop::Request {})
                    .await
                    .map_err(|status| rpc_error("Stop", status))?
                    .into_inner()
                    .error
            }
            Client::V6(mut client) => {
                client
                    .stop_provider(pb6::stop_provider::Request {})
                    .await
                    .map_err(|status| rpc_error("StopProvider", status))?
                    .into_inner()
                    .error
            }
        };
        if error.is_empty() {
            Ok(())
        } else {
            Err(ProviderError::Stop {
                binary: self.binary.clone(),
                message: error,
            })
        }
    }
}

/// Converts a protocol's schema messages into the schema model. The two
/// protocols' schema messages differ only in their attributes, converted
/// by the function given; everything else is written once here.
macro_rules! schema_conversion {
    ($module:ident, $pb:ident, $attribute:path) => {
        mod $module {
            use super::*;

            pub(super) fn provider_schema(
                r: $pb::get_provider_schema::Response,
            ) -> Result<ProviderSchema, String> {
                let schemas = |map: std::collections::HashMap<String, $pb::Schema>| {
                    map.into_iter()
                        .map(|(name, s)| {
                            let converted = schema(s).map_err(|e| format!("{name}: {e}"))?;
                            Ok((name, converted))
                        })
                        .collect::<Result<SchemaMap, String>>()
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
                    provider: schema(r.provider.unwrap_or_default())
                        .map_err(|e| format!("provider: {e}"))?,
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

            fn schema(s: $pb::Schema) -> Result<Schema, String> {
                Ok(Schema {
                    version: s.version,
                    block: block(s.block.unwrap_or_default())?,
                })
            }

            fn block(b: $pb::schema::Block) -> Result<Block, String> {
                let description_kind = description_kind(b.description_kind());
                let attributes = b
                    .attributes
                    .into_iter()
                    .map(|a| {
                        let name = a.name.clone();
                        Ok((name, $attribute(a)?))
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

            fn nested_block(nb: $pb::schema::NestedBlock) -> Result<NestedBlock, String> {
                use $pb::schema::nested_block::NestingMode;
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
        }
    };
}

schema_conversion!(from_v5, pb5, attribute_v5);
schema_conversion!(from_v6, pb6, attribute_v6);

fn attribute_v5(a: pb5::schema::Attribute) -> Result<Attribute, String> {
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

/// A protocol 6 attribute: declared by its type, or by a nested type whose
/// implied type it then has.
fn attribute_v6(a: pb6::schema::Attribute) -> Result<Attribute, String> {
    let description_kind = description_kind(a.description_kind());
    let (ty, nested_type) = match a.nested_type {
        Some(object) => {
            let nested = nested_type(object).map_err(|e| format!("attribute {}: {e}", a.name))?;
            (nested.implied_type(), Some(nested))
        }
        None => (
            Type::from_json_bytes(&a.r#type).map_err(|e| format!("attribute {}: {e}", a.name))?,
            None,
        ),
    };
    Ok(Attribute {
        ty,
        nested_type,
        description_kind,
        description: a.description,
        required: a.required,
        optional: a.optional,
        computed: a.computed,
        sensitive: a.sensitive,
        deprecated: a.deprecated,
        write_only: a.write_only,
    })
}

fn nested_type(object: pb6::schema::Object) -> Result<NestedType, String> {
    use pb6::schema::object::NestingMode;
    let nesting = match object.nesting() {
        NestingMode::Single => ObjectNesting::Single,
        NestingMode::List => ObjectNesting::List,
        NestingMode::Set => ObjectNesting::Set,
        NestingMode::Map => ObjectNesting::Map,
        NestingMode::Invalid => return Err("invalid nesting mode".into()),
    };
    let attributes = object
        .attributes
        .into_iter()
        .map(|a| {
            let name = a.name.clone();
            Ok((name, attribute_v6(a)?))
        })
        .collect::<Result<_, String>>()?;
    Ok(NestedType {
        nesting,
        attributes,
    })
}

fn function(f: pb5::Function) -> Result<Function, String> {
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

fn parameter(p: pb5::function::Parameter) -> Result<Parameter, String> {
    Ok(Parameter {
        ty: Type::from_json_bytes(&p.r#type).map_err(|e| format!("parameter {}: {e}", p.name))?,
        description_kind: description_kind(p.description_kind()),
        name: p.name,
        allow_null_value: p.allow_null_value,
        allow_unknown_values: p.allow_unknown_values,
        description: p.description,
    })
}

fn description_kind(kind: pb5::StringKind) -> DescriptionKind {
    match kind {
        pb5::StringKind::Plain => DescriptionKind::Plain,
        pb5::StringKind::Markdown => DescriptionKind::Markdown,
    }
}

fn diagnostics(ds: Vec<pb5::Diagnostic>) -> Vec<Diagnostic> {
    ds.into_iter()
        .map(|d| Diagnostic {
            severity: match d.severity() {
                pb5::diagnostic::Severity::Warning => Severity::Warning,
                // INVALID is not a severity a provider should send; treat it
                // as the stricter one.
                pb5::diagnostic::Severity::Error | pb5::diagnostic::Severity::Invalid => {
                    Severity::Error
                }
            },
            attribute: d.attribute.map(attribute_path),
            ..Diagnostic::error(d.summary, d.detail)
        })
        .collect()
}

fn attribute_path(p: pb5::AttributePath) -> AttributePath {
    use pb5::attribute_path::step::Selector;
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
