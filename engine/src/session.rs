//! Provider sessions: each provider configuration a module uses, launched
//! and configured once, for the plan or apply that needs it.
//!
//! How a provider is started is a [`Launcher`]: the engine's is
//! [`Plugins`], which starts the real binary over the plugin protocol;
//! tests of the engine's own logic may hand in another.

use crate::config::ProviderRef;
use crate::diag::{Diagnostic, Diagnostics};
use crate::provider::grpc::GrpcProvider;
use crate::provider::plugin::{LaunchOptions, Plugin};
use crate::provider::resolve::Resolved;
use crate::provider::schema::{ProviderSchema, Schema};
use crate::provider::{Provider, ProviderError};
use crate::value::convert::convert;
use crate::value::Value;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

/// Starts a provider that a root resolved.
pub trait Launcher {
    type Provider: Provider + Clone;

    /// Starts the provider, ready to be configured.
    fn launch(
        &self,
        resolved: &Resolved,
    ) -> impl Future<Output = Result<Self::Provider, ProviderError>>;
}

/// The real provider binaries, started over the plugin protocol.
pub struct Plugins(pub LaunchOptions);

impl Launcher for Plugins {
    type Provider = GrpcProvider;

    async fn launch(&self, resolved: &Resolved) -> Result<GrpcProvider, ProviderError> {
        let plugin = Plugin::launch(&resolved.found.executable, &self.0).await?;
        Ok(GrpcProvider::new(plugin)?.with_schema(resolved.schema.clone()))
    }
}

/// The providers of one run.
pub struct Sessions<L: Launcher = Plugins> {
    resolved: BTreeMap<String, Resolved>,
    open: BTreeMap<ProviderRef, L::Provider>,
    configs: BTreeMap<ProviderRef, Value>,
    launcher: L,
}

impl<L: Launcher> Sessions<L> {
    pub fn new(resolved: BTreeMap<String, Resolved>, launcher: L) -> Sessions<L> {
        Sessions {
            resolved,
            open: BTreeMap::new(),
            configs: BTreeMap::new(),
            launcher,
        }
    }

    /// The schema of the provider a local name stands for.
    pub fn schema(&self, local_name: &str) -> Option<&Arc<ProviderSchema>> {
        self.resolved.get(local_name).map(|r| &r.schema)
    }

    /// A resource type's schema.
    pub fn resource_schema(&self, local_name: &str, type_name: &str) -> Option<Arc<Schema>> {
        self.schema(local_name)
            .and_then(|s| s.resources.get(type_name))
            .map(|s| Arc::new(s.clone()))
    }

    /// Every provider's local name and full source address.
    pub fn providers(&self) -> impl Iterator<Item = (&str, String)> {
        self.resolved
            .iter()
            .map(|(name, r)| (name.as_str(), r.found.source.to_string()))
    }

    /// The provider's full source address, as plans name it.
    pub fn source(&self, local_name: &str) -> String {
        self.resolved
            .get(local_name)
            .map_or_else(|| local_name.to_string(), |r| r.found.source.to_string())
    }

    /// Whether the provider configuration `p` is launched and configured.
    pub fn is_open(&self, p: &ProviderRef) -> bool {
        self.open.contains_key(p)
    }

    /// The configuration the provider configuration `p` was configured
    /// with, as the provider prepared it.
    pub fn config(&self, p: &ProviderRef) -> Option<&Value> {
        self.configs.get(p)
    }

    /// Launches and configures the provider configuration `p` with
    /// `config` (an object of its provider block's type).
    pub async fn configure(&mut self, p: &ProviderRef, config: Value) -> Result<(), Diagnostics> {
        if self.open.contains_key(p) {
            return Ok(());
        }
        let Some(resolved) = self.resolved.get(&p.name) else {
            return Err(Diagnostic::error(
                "Missing required provider",
                format!("This configuration requires provider {p}, but it was not found."),
            )
            .into());
        };
        let block = &resolved.schema.provider.block;
        let config = convert(config, &block.implied_type()).map_err(|e| {
            Diagnostics::from(Diagnostic::error(
                "Invalid provider configuration",
                format!("{p}: {}", e.message),
            ))
        })?;
        let failed = |e: ProviderError| {
            Diagnostics::from(Diagnostic::error(
                "Failed to configure provider",
                format!("{p}: {e}"),
            ))
        };
        let mut provider = self.launcher.launch(resolved).await.map_err(failed)?;
        let prepared = provider
            .prepare_provider_config(&config)
            .await
            .map_err(failed)?;
        provider.configure(&prepared).await.map_err(failed)?;
        self.open.insert(p.clone(), provider);
        self.configs.insert(p.clone(), prepared);
        Ok(())
    }

    /// The configured provider for `p`, configuring it with an empty
    /// configuration if no `provider` block did.
    pub async fn get(&mut self, p: &ProviderRef) -> Result<&mut L::Provider, Diagnostics> {
        if !self.open.contains_key(p) {
            let empty = self
                .resolved
                .get(&p.name)
                .map(|r| r.schema.provider.block.value_with(BTreeMap::new()))
                .unwrap_or_else(|| Value::object(BTreeMap::new()));
            self.configure(p, empty).await?;
        }
        Ok(self.open.get_mut(p).expect("configured above"))
    }

    /// Stops every provider.
    pub async fn close(self) {
        for (_, p) in self.open {
            p.shutdown().await;
        }
    }
}
