//! A root ready to plan: its configuration loaded and checked, its estate
//! settings, its input variables, its providers found and its record store
//! opened. `plan`, `apply` and `destroy` start here.

use crate::config::{self, Module};
use crate::diag::{Diagnostic, Diagnostics, Sources};
use crate::eval::inputs::{self, CliInput};
use crate::graph::Graph;
use crate::live::{self, Settings};
use crate::provider::cache::SchemaCache;
use crate::provider::plugin::LaunchOptions;
use crate::provider::resolve;
use crate::record::RecordStore;
use crate::session::Sessions;
use crate::value::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Everything a plan needs from the working directory.
pub struct Workspace {
    pub module: Module,
    pub settings: Settings,
    pub vars: BTreeMap<String, Value>,
    pub sessions: Sessions,
    pub store: RecordStore,
}

/// Why a root could not be opened: its diagnostics, and the files they
/// point into.
pub struct OpenError {
    pub diagnostics: Diagnostics,
    pub sources: Sources,
}

impl Workspace {
    /// Opens the root in `dir`.
    pub async fn open(
        dir: &Path,
        cli: &[CliInput],
        env: &BTreeMap<String, String>,
        options: LaunchOptions,
    ) -> Result<Workspace, OpenError> {
        let (module, diags) = config::load(dir);
        let fail = |diagnostics: Diagnostics, module: &Module| OpenError {
            diagnostics,
            sources: module.sources().clone(),
        };
        if diags.has_errors() {
            return Err(fail(diags, &module));
        }
        let (_, refs) = Graph::build(&module);
        if refs.has_errors() {
            return Err(fail(refs, &module));
        }
        let settings = match live::load(dir) {
            Ok(s) => s,
            Err(d) => return Err(fail(d, &module)),
        };
        let vars = match inputs::collect(&module, cli, env) {
            Ok(v) => v,
            Err(d) => return Err(fail(d, &module)),
        };
        let cache = SchemaCache::from_env();
        let resolved = match resolve::for_module(&module, cache.as_ref(), &options).await {
            Ok(r) => r,
            Err(e) => {
                return Err(fail(
                    Diagnostic::error("Failed to load plugin schemas", format!("{e}.")).into(),
                    &module,
                ))
            }
        };
        let store = RecordStore::open(&settings.record_store, &settings.estate);
        Ok(Workspace {
            module,
            settings,
            vars,
            sessions: Sessions::new(resolved, options),
            store,
        })
    }
}
