//! The providers a loaded module needs, found and with their schemas: the
//! `required_providers` entries, and the `hashicorp/<name>` provider
//! terraform implies for any other local name a resource or provider block
//! uses. Each binary is the one `init` installed and the lock file vouches
//! for ([`super::locked`]); a root with no lock file has none to use.

use super::cache::SchemaCache;
use super::discovery::{FoundProvider, ProviderSource, VersionConstraint};
use super::locked::{self, LockError};
use super::plugin::LaunchOptions;
use super::schema::ProviderSchema;
use super::{load_schema, SchemasError};
use crate::config::Module;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One provider a module uses, by its local name.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub local_name: String,
    pub found: FoundProvider,
    pub schema: Arc<ProviderSchema>,
}

/// Every provider `module` uses, by local name.
pub async fn for_module(
    module: &Module,
    cache: Option<&SchemaCache>,
    options: &LaunchOptions,
) -> Result<BTreeMap<String, Resolved>, SchemasError> {
    let mut all = for_modules(&[module], &module.dir, cache, options).await?;
    Ok(all.pop().unwrap_or_default())
}

/// Every provider each of `modules` uses, by local name (one map per
/// module, in order), found from the root module in `root`. A provider
/// several modules use has its schema loaded once.
pub async fn for_modules(
    modules: &[&Module],
    root: &Path,
    cache: Option<&SchemaCache>,
    options: &LaunchOptions,
) -> Result<Vec<BTreeMap<String, Resolved>>, SchemasError> {
    let wanted: Vec<_> = modules
        .iter()
        .map(|m| wanted(m))
        .collect::<Result<_, _>>()?;
    let mut required: BTreeMap<ProviderSource, VersionConstraint> = BTreeMap::new();
    for (source, constraint) in wanted.iter().flat_map(|w| w.values()) {
        let combined = match required.remove(source) {
            Some(c) => c.and(constraint),
            None => constraint.clone(),
        };
        required.insert(source.clone(), combined);
    }
    let locked = locked::selections(root, &required, cache).map_err(SchemasError::Locked)?;
    let mut schemas: BTreeMap<PathBuf, Arc<ProviderSchema>> = BTreeMap::new();
    let mut out = Vec::with_capacity(modules.len());
    for wanted in wanted {
        let mut resolved = BTreeMap::new();
        for (name, (source, _)) in wanted {
            let found = selected(&locked, &source)?;
            let schema = match schemas.get(&found.executable) {
                Some(s) => s.clone(),
                None => {
                    let s = Arc::new(load_schema(&found.executable, cache, options).await?);
                    schemas.insert(found.executable.clone(), s.clone());
                    s
                }
            };
            resolved.insert(
                name.clone(),
                Resolved {
                    local_name: name,
                    found,
                    schema,
                },
            );
        }
        out.push(resolved);
    }
    Ok(out)
}

/// The locked binary of `source`, which [`locked::selections`] checked
/// every required provider has.
pub(super) fn selected(
    locked: &BTreeMap<ProviderSource, FoundProvider>,
    source: &ProviderSource,
) -> Result<FoundProvider, SchemasError> {
    locked
        .get(source)
        .cloned()
        .ok_or_else(|| SchemasError::Locked(LockError::unselected(source, locked.is_empty())))
}

/// The source and version constraint of every provider `module` names.
pub fn wanted(
    module: &Module,
) -> Result<BTreeMap<String, (ProviderSource, VersionConstraint)>, SchemasError> {
    let mut wanted: BTreeMap<String, (ProviderSource, VersionConstraint)> = BTreeMap::new();
    let invalid = |name: &str, e: &dyn std::fmt::Display| SchemasError::Config {
        reason: format!("required provider {name:?}: {e}"),
    };
    for (name, rp) in &module.required_providers {
        let source: ProviderSource = rp
            .source
            .as_deref()
            .unwrap_or(name)
            .parse()
            .map_err(|e| invalid(name, &e))?;
        let constraint = match &rp.version {
            Some(v) => v.parse().map_err(|e| invalid(name, &e))?,
            None => VersionConstraint::default(),
        };
        wanted.insert(name.clone(), (source, constraint));
    }
    let used = module
        .resources
        .values()
        .map(|r| r.provider_ref().name)
        .chain(module.providers.keys().map(|p| p.name.clone()));
    for name in used {
        if let std::collections::btree_map::Entry::Vacant(slot) = wanted.entry(name.clone()) {
            let source: ProviderSource = name.parse().map_err(|e| invalid(&name, &e))?;
            slot.insert((source, VersionConstraint::default()));
        }
    }
    Ok(wanted)
}
