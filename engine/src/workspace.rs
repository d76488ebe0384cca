//! A root ready to plan: its configuration and the local modules it calls
//! loaded and checked, its estate settings, its input variables, its
//! providers found; then its record store opened. `plan`, `apply`,
//! `destroy`, `migrate` and `records` start here.

use crate::config::tree::{load_tree, Tree};
use crate::diag::{Diagnostic, Diagnostics, Sources};
use crate::eval::inputs::{self, CliInput};
use crate::graph::TreeGraph;
use crate::live::{self, Settings};
use crate::live::{RecordPlace, LOCAL_RECORDS};
use crate::provider::cache::SchemaCache;
use crate::provider::plugin::LaunchOptions;
use crate::provider::resolve;
use crate::record::local::LocalStore;
use crate::record::ssm::LiveStore;
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
        Ok(Workspace {
            tree,
            settings,
            vars,
            sessions: Sessions::new(resolved, Plugins(options)),
        })
    }

    /// Opens the estate's record store: in the live system (configuring
    /// the providers and reading the whole store once), or the folder
    /// `live.hcl` names. Records an earlier version left in the root's
    /// local folder are moved into the live store when the command may
    /// `write` (apply, destroy, migrate), and otherwise read beside it;
    /// `say` is told either way. A root that uses no aws provider has no
    /// account to keep records in, and keeps them in the local folder.
    pub async fn open_records(
        &mut self,
        root: &Path,
        write: bool,
        say: &mut dyn FnMut(String),
    ) -> Result<RecordStore, Diagnostics> {
        let estate = self.settings.estate.clone();
        let base = match &self.settings.record_store {
            RecordPlace::Local(base) => return Ok(RecordStore::open(base, &estate)),
            RecordPlace::Live => root.join(LOCAL_RECORDS),
        };
        if self.sessions.schema("aws").is_none() {
            return Ok(RecordStore::open(&base, &estate));
        }
        crate::planner::configure_providers(
            &self.tree.module,
            self.vars.clone(),
            &mut self.sessions,
        )
        .await?;
        let provider = self
            .sessions
            .get(&crate::bind::aws::default_provider())
            .await?
            .clone();
        let failed = |e: crate::record::RecordError| {
            Diagnostics::from(Diagnostic::error(
                "Failed to read the record store",
                format!("{e}."),
            ))
        };
        let live = LiveStore::open(&provider, &estate).await.map_err(failed)?;
        let earlier = LocalStore::open(&base, &estate);
        if !earlier.is_empty() {
            let shown = earlier
                .dir()
                .strip_prefix(root)
                .unwrap_or(earlier.dir())
                .display()
                .to_string();
            let taken = live.take_earlier(&earlier, write).await.map_err(failed)?;
            if write {
                let moved = earlier.dir().with_extension("moved");
                let _ = std::fs::remove_dir_all(&moved);
                std::fs::rename(earlier.dir(), &moved).map_err(|e| {
                    Diagnostics::from(Diagnostic::error(
                        "Failed to move the local record store",
                        format!("Its {taken} record(s) are in the live system now, but {shown} could not be renamed: {e}."),
                    ))
                })?;
                say(format!(
                    "Moved {taken} record(s) an earlier version left in {shown} into the live system ({}); the folder is kept as {}.",
                    live.place(),
                    moved.strip_prefix(root).unwrap_or(&moved).display()
                ));
            } else {
                say(format!(
                    "Warning: {taken} record(s) an earlier version left in {shown} are read beside the live system's ({}); the next apply moves them there.",
                    live.place()
                ));
            }
        }
        Ok(RecordStore::live(live))
    }
}
