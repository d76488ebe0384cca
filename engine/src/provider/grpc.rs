//! The tfplugin5 client: the one module that sees the protocol's wire types.
//!
//! Generated messages stay in the private `pb` module; every request is
//! built and every response converted here, into the types of
//! [`super::schema`] and [`super::diagnostic`]. Protocol 6 plugins are
//! recognised by the handshake but not driven yet.

use std::collections::BTreeMap;
use std::time::Instant;

use super::diagnostic::{AttributePath, Diagnostic, PathStep, Severity};
use super::plugin::{Plugin, MAX_MESSAGE_SIZE};
use super::schema::{
    Attribute, Block, Capabilities, DescriptionKind, Function, NestedBlock, Nesting, Parameter,
    ProviderSchema, Schema,
};
use super::types::Type;
use super::{Provider, ProviderError};

// The protocol wraps each call's Request and Response in a message used
// only as a namespace (such as `GetProviderSchema`), never built itself.
#[allow(dead_code)]
mod pb {
    tonic::include_proto!("tfplugin5");
}

type Client = pb::provider_client::ProviderClient<tonic::transport::Channel>;

/// A provider plugin driven over protocol 5.
pub struct GrpcProvider {
    plugin: Plugin,
    client: Client,
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
        Ok(GrpcProvider { plugin, client })
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
        let diagnostics = diagnostics(std::mem::take(&mut response.diagnostics));
        for warning in diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
        {
            tracing::warn!("provider {}: {warning}", self.plugin.binary().display());
        }
        if diagnostics.iter().any(|d| d.severity == Severity::Error) {
            return Err(ProviderError::Diagnostics {
                binary: self.plugin.binary().into(),
                method: METHOD,
                diagnostics,
            });
        }
        provider_schema(response).map_err(|reason| self.decode_error(METHOD, reason))
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
