//! Provider sessions: each provider configuration a module uses, launched
//! and configured once, for the plan or apply that needs it.

use crate::config::ProviderRef;
use crate::diag::{Diagnostic, Diagnostics};
use crate::provider::grpc::GrpcProvider;
use crate::provider::plugin::{LaunchOptions, Plugin};
use crate::provider::resolve::Resolved;
use crate::provider::schema::{ProviderSchema, Schema};
use crate::provider::Provider;
use crate::value::convert::convert;
use crate::value::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The providers of one run.
pub struct Sessions {
    resolved: BTreeMap<String, Resolved>,
    open: BTreeMap<ProviderRef, GrpcProvider>,
    options: LaunchOptions,
}

impl Sessions {
    pub fn new(resolved: BTreeMap<String, Resolved>, options: LaunchOptions) -> Sessions {
        Sessions {
            resolved,
            open: BTreeMap::new(),
            options,
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

    /// The provider's full source address, as plans name it.
    pub fn source(&self, local_name: &str) -> String {
        self.resolved
            .get(local_name)
            .map_or_else(|| local_name.to_string(), |r| r.found.source.to_string())
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
        let failed = |e: crate::provider::ProviderError| {
            Diagnostics::from(Diagnostic::error(
                "Failed to configure provider",
                format!("{p}: {e}"),
            ))
        };
        let plugin = Plugin::launch(&resolved.found.executable, &self.options)
            .await
            .map_err(|e| failed(e.into()))?;
        let mut provider = GrpcProvider::new(plugin)
            .map_err(failed)?
            .with_schema(resolved.schema.clone());
        let prepared = provider
            .prepare_provider_config(&config)
            .await
            .map_err(failed)?;
        provider.configure(&prepared).await.map_err(failed)?;
        self.open.insert(p.clone(), provider);
        Ok(())
    }

    /// The configured provider for `p`, configuring it with an empty
    /// configuration if no `provider` block did.
    pub async fn get(&mut self, p: &ProviderRef) -> Result<&mut GrpcProvider, Diagnostics> {
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
