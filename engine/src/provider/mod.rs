//! The plugin boundary: finding, starting and talking to the real,
//! unmodified terraform provider binaries.
//!
//! - [`requirements`] reads what a root asks for (`required_providers`);
//! - [`discovery`] finds the binary where terraform would;
//! - [`handshake`], [`tls`] and [`plugin`] start it and connect to it the
//!   way go-plugin's host does;
//! - [`grpc`] speaks protocols 5 and 6 and is the only module that sees
//!   wire types; the rest of the engine uses the [`Provider`] trait and the
//!   [`schema`] and [`path`] models over `crate::value`'s values (a
//!   provider's diagnostics are `crate::diag::Diagnostic`s),
//!   which [`msgpack`] encodes for the wire;
//! - [`cache`] keeps schemas keyed by the binary's hash, and
//!   [`schema_map`] decodes a stored type's schema when it is first read;
//! - [`proposed`] builds the proposed new object a plan starts from.
//!
//! Not here: evaluating configuration, and deciding what to change.

pub mod cache;
pub mod discovery;
pub mod grpc;
pub mod handshake;
pub mod hashes;
pub mod install;
pub mod locked;
pub mod lockfile;
pub mod msgpack;
pub mod path;
pub mod plugin;
pub mod proposed;
pub mod requirements;
pub mod resolve;
pub mod schema;
mod schema_map;
mod tls;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diag::Diagnostic;
use crate::value::Value;
use cache::SchemaCache;
use path::AttributePath;
use plugin::{LaunchError, LaunchOptions, Plugin};
use schema::ProviderSchema;

/// The terraform release whose plugin protocol behaviour the engine follows;
/// providers are told this version in Configure, as terraform tells its own.
pub const TERRAFORM_COMPAT_VERSION: &str = "1.11.4";

/// A resource instance's state as a provider returns it: the object, and
/// private bytes to be handed back unchanged on the next call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceState {
    pub value: Value,
    pub private: Vec<u8>,
}

/// One object an import found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedResource {
    pub type_name: String,
    pub state: ResourceState,
}

/// A provider's plan for one resource instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedChange {
    /// The planned object, with unknowns where apply will decide; null
    /// for a destroy.
    pub planned_state: Value,
    /// Attributes whose change forces the object to be replaced.
    pub requires_replace: Vec<AttributePath>,
    /// Bytes to hand to ApplyResourceChange unchanged.
    pub planned_private: Vec<u8>,
    /// The provider is built on the legacy SDK, whose plans and results
    /// terraform checks less strictly.
    pub legacy_type_system: bool,
}

/// Cancels a provider's calls in flight, from any task: obtained from
/// [`Provider::stop_handle`] before the calls start, since they borrow the
/// provider.
pub trait Stopper: Clone + Send + Sync + 'static {
    /// Asks the provider to cancel what it is doing (terraform's Stop);
    /// the calls in flight then return, usually with errors, and the
    /// provider keeps running.
    fn stop(&self) -> impl Future<Output = Result<(), ProviderError>> + Send;
}

/// What the engine can ask of a provider. Warnings a call returns are
/// logged; errors fail the call with [`ProviderError::Diagnostics`].
pub trait Provider {
    type Stop: Stopper;

    /// A handle that cancels this provider's calls in flight from another
    /// task (or from a future joined with the call).
    fn stop_handle(&self) -> Self::Stop;

    /// Cancels this provider's calls in flight; see [`Stopper::stop`].
    fn stop(&self) -> impl Future<Output = Result<(), ProviderError>> + Send {
        let handle = self.stop_handle();
        async move { handle.stop().await }
    }

    /// The schema this provider was given or has already fetched, if any:
    /// what the engine consults to build data source requests.
    fn cached_schema(&self) -> Option<&Arc<ProviderSchema>>;

    /// Stops the provider once no clone of it is left.
    fn shutdown(self) -> impl Future<Output = ()>;

    /// The provider's schema: its own configuration, resources, data
    /// sources, ephemeral resources and functions.
    fn schema(&mut self) -> impl Future<Output = Result<ProviderSchema, ProviderError>> + Send;

    /// Configures the provider. `config` is an object of the provider
    /// block's type (see [`schema::Block::value_with`]).
    fn configure(
        &mut self,
        config: &Value,
    ) -> impl Future<Output = Result<(), ProviderError>> + Send;

    /// Asks the provider for the object(s) `id` names. The states hold
    /// what the id alone tells; read them to learn the rest.
    fn import_resource_state(
        &mut self,
        type_name: &str,
        id: &str,
    ) -> impl Future<Output = Result<Vec<ImportedResource>, ProviderError>> + Send;

    /// Reads the live object behind `current`; `None` when it is gone.
    fn read_resource(
        &mut self,
        type_name: &str,
        current: &ResourceState,
    ) -> impl Future<Output = Result<Option<ResourceState>, ProviderError>> + Send;

    /// Turns stored state (terraform's JSON form, written with schema
    /// `version` of the type) into a value of the current schema. Works
    /// before Configure; terraform calls it for every stored object in
    /// every run, even when the version is current.
    fn upgrade_resource_state(
        &mut self,
        type_name: &str,
        version: i64,
        raw_json: &[u8],
    ) -> impl Future<Output = Result<Value, ProviderError>> + Send;

    /// Checks the provider configuration and returns it as the provider
    /// prepared it (defaults filled in); Configure takes that value.
    fn prepare_provider_config(
        &mut self,
        config: &Value,
    ) -> impl Future<Output = Result<Value, ProviderError>> + Send;

    /// Checks a resource's configuration.
    fn validate_resource_config(
        &mut self,
        type_name: &str,
        config: &Value,
    ) -> impl Future<Output = Result<(), ProviderError>> + Send;

    /// Checks a data source's configuration.
    fn validate_data_source_config(
        &mut self,
        type_name: &str,
        config: &Value,
    ) -> impl Future<Output = Result<(), ProviderError>> + Send;

    /// Plans a change from `prior` (null value for a create) to the
    /// proposed new object (see [`proposed::proposed_new`]; null with a null
    /// `config` for a destroy).
    fn plan_resource_change(
        &mut self,
        type_name: &str,
        prior: &ResourceState,
        proposed_new: &Value,
        config: &Value,
    ) -> impl Future<Output = Result<PlannedChange, ProviderError>> + Send;

    /// Carries out a planned change; returns the new state, or `None` once
    /// the object is destroyed.
    fn apply_resource_change(
        &mut self,
        type_name: &str,
        prior: &Value,
        planned: &PlannedChange,
        config: &Value,
    ) -> impl Future<Output = Result<Option<ResourceState>, ProviderError>> + Send;

    /// Reads a data source.
    fn read_data_source(
        &mut self,
        type_name: &str,
        config: &Value,
    ) -> impl Future<Output = Result<Value, ProviderError>> + Send;
}

/// Why a provider call failed. Every variant names the binary, but for a
/// direct read of the aws API made with a provider's configuration.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    #[error(
        "reading the aws API directly ({call}) with the provider's configuration failed: {reason}"
    )]
    Direct { call: String, reason: String },
    #[error(transparent)]
    Launch(#[from] LaunchError),
    #[error("provider {}: speaks plugin protocol {protocol}, and the engine drives only protocols 5 and 6", binary.display())]
    UnsupportedProtocol { binary: PathBuf, protocol: u32 },
    #[error("provider {}: {method} failed ({code}): {message}", binary.display())]
    Rpc {
        binary: PathBuf,
        method: &'static str,
        code: String,
        message: String,
    },
    #[error("provider {}: Stop failed: {message}", binary.display())]
    Stop { binary: PathBuf, message: String },
    #[error("provider {}: {method} returned errors:\n{}", binary.display(), lines(diagnostics))]
    Diagnostics {
        binary: PathBuf,
        method: &'static str,
        diagnostics: Vec<Diagnostic>,
    },
    #[error("provider {}: {method}: no {what} named {name:?} in its schema", binary.display())]
    NoSuchType {
        binary: PathBuf,
        method: &'static str,
        what: &'static str,
        name: String,
    },
    #[error("provider {}: {method} returned a value for write-only attribute(s) of {type_name}: {}; write-only attributes cannot be read back from a provider", binary.display(), paths.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))]
    WriteOnlySet {
        binary: PathBuf,
        method: &'static str,
        type_name: String,
        paths: Vec<AttributePath>,
    },
    #[error("provider {}: could not encode the {method} request: {reason}", binary.display())]
    Encode {
        binary: PathBuf,
        method: &'static str,
        reason: String,
    },
    #[error("provider {}: could not decode the {method} response: {reason}", binary.display())]
    Decode {
        binary: PathBuf,
        method: &'static str,
        reason: String,
    },
}

fn lines(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| format!("  {}", d.provider_line()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The schema of the provider in `binary`: from the cache when it holds
/// one for this exact binary, else by launching the provider and asking it
/// (then storing the answer). Cache trouble is logged, never fatal.
pub async fn load_schema(
    binary: &Path,
    cache: Option<&SchemaCache>,
    options: &LaunchOptions,
) -> Result<ProviderSchema, ProviderError> {
    let hash = cache.and_then(|c| match c.binary_hash(binary) {
        Ok(hash) => Some((c, hash)),
        Err(e) => {
            tracing::warn!("schema cache: could not hash {}: {e}", binary.display());
            None
        }
    });
    if let Some((cache, hash)) = &hash {
        if let Some(schema) = cache.load(hash) {
            tracing::debug!(sha256 = hash.as_str(), "schema cache hit");
            return Ok(schema);
        }
    }
    let plugin = Plugin::launch(binary, options).await?;
    let mut provider = grpc::GrpcProvider::new(plugin)?;
    let result = provider.schema().await;
    provider.shutdown().await;
    let schema = result?;
    if let Some((cache, hash)) = &hash {
        if let Err(e) = cache.store(hash, &schema) {
            tracing::warn!(
                "schema cache: could not store in {}: {e}",
                cache.dir().display()
            );
        }
    }
    Ok(schema)
}

/// Why `providers schema` failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SchemasError {
    #[error(transparent)]
    Requirements(#[from] requirements::RequirementsError),
    #[error(transparent)]
    Discovery(#[from] discovery::DiscoveryError),
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error("{reason}")]
    Config { reason: String },
    #[error(transparent)]
    Locked(locked::LockError),
}

impl SchemasError {
    /// terraform's diagnostics for an error the lock file raised, with the
    /// lock file's text when they point into it; `None` for the others.
    pub fn lock_diagnostics(&self) -> Option<(crate::diag::Diagnostics, crate::diag::Sources)> {
        match self {
            SchemasError::Locked(e) => Some(e.diagnostics()),
            _ => None,
        }
    }

    /// As [`SchemasError::lock_diagnostics`], worded as `validate` words
    /// them.
    pub fn validate_lock_diagnostics(
        &self,
    ) -> Option<(crate::diag::Diagnostics, crate::diag::Sources)> {
        match self {
            SchemasError::Locked(e) => Some(e.validate_diagnostics()),
            _ => None,
        }
    }
}

/// The schema of every provider the configuration in `root` uses, by
/// source address: its modules' `required_providers` and the
/// `hashicorp/<name>` providers terraform implies for resources and
/// provider blocks that name no requirement, as `terraform providers
/// schema` lists them.
pub async fn required_schemas(
    root: &Path,
    cache: Option<&SchemaCache>,
    options: &LaunchOptions,
) -> Result<Vec<(String, ProviderSchema)>, SchemasError> {
    let (tree, diags) = crate::config::tree::load_tree(root);
    if let Some(d) = diags.iter().find(|d| d.is_error()) {
        return Err(SchemasError::Config {
            reason: format!("{}: {}", d.summary, d.detail),
        });
    }
    let modules: Vec<&crate::config::Module> = tree.modules().iter().map(|t| &t.module).collect();
    let resolved = resolve::for_modules(&modules, root, cache, options).await?;
    let mut by_source: std::collections::BTreeMap<String, Arc<ProviderSchema>> =
        std::collections::BTreeMap::new();
    for r in resolved.into_iter().flat_map(|m| m.into_values()) {
        by_source
            .entry(r.found.source.to_string())
            .or_insert(r.schema);
    }
    Ok(by_source
        .into_iter()
        .map(|(source, schema)| (source, Arc::unwrap_or_clone(schema)))
        .collect())
}
