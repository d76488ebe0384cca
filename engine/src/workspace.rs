//! A root ready to plan: its configuration and the local modules it calls
//! loaded and checked, its estate settings, its input variables, its
//! providers found and its record store opened. `plan`, `apply` and
//! `destroy` start here.

use crate::config::tree::{load_tree, Tree};
use crate::diag::{Diagnostic, Diagnostics, Sources};
use crate::eval::inputs::{self, CliInput};
use crate::graph::TreeGraph;
use crate::live::{self, Settings};
use crate::provider::cache::SchemaCache;
use crate::provider::plugin::LaunchOptions;
use crate::provider::resolve;
use crate::record::RecordStore;
use crate::session::{Plugins, Sessions};
use crate::value::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Everything a plan needs from the working directory.
pub struct Workspace {
    /// The root module and the modules it calls.
    pub tree: Tree,
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
        let (tree, diags) = load_tree(dir);
        let fail = |diagnostics: Diagnostics, tree: &Tree| OpenError {
            diagnostics,
            sources: tree.sources(),
        };
        if diags.has_errors() {
            return Err(fail(diags, &tree));
        }
        if let Err(d) = TreeGraph::of_tree(&tree) {
            return Err(fail(d, &tree));
        }
        let settings = match live::load(dir) {
            Ok(s) => s,
            Err(d) => return Err(fail(d, &tree)),
        };
        let vars = match inputs::collect(&tree.module, cli, env) {
            Ok(v) => v,
            Err(d) => return Err(fail(d, &tree)),
        };
        let cache = SchemaCache::from_env();
        let modules: Vec<_> = tree.modules().into_iter().map(|t| &t.module).collect();
        let resolved = match resolve::for_modules(&modules, dir, cache.as_ref(), &options).await {
            // A provider every module names alike is one plugin: a child
            // uses the configuration its caller passes or it inherits.
            Ok(per_module) => {
                let mut all = BTreeMap::new();
                for found in per_module {
                    for (name, r) in found {
                        all.entry(name).or_insert(r);
                    }
                }
                all
            }
            Err(e) => {
                if let Some((diagnostics, lock_file)) = e.lock_diagnostics() {
                    let mut sources = tree.sources();
                    sources.extend(&lock_file);
                    return Err(OpenError {
                        diagnostics,
                        sources,
                    });
                }
                return Err(fail(
                    Diagnostic::error("Failed to load plugin schemas", format!("{e}.")).into(),
                    &tree,
                ));
            }
        };
        let store = RecordStore::open(&settings.record_store, &settings.estate);
        Ok(Workspace {
            tree,
            settings,
            vars,
            sessions: Sessions::new(resolved, Plugins(options)),
            store,
        })
    }
}
