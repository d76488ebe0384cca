//! `choudoufu init`: a root's working directory made ready to plan, as
//! `terraform init` makes it, so that either tool can then plan it.
//!
//! In order: the configuration loads; the estate's settings (`live.hcl`)
//! are valid and its record store directory writable; module calls are
//! recorded in `.terraform/modules/modules.json` as terraform records them
//! (a remote call, which `terraform init` installed, keeps its entry); every provider the root and its modules require is installed into
//! `.terraform/providers` ([`crate::provider::install`]); the lock file is
//! written or updated ([`crate::provider::lockfile`]). Progress is printed
//! on terraform's lines; problems come back as diagnostics, and a failed
//! step writes no lock file.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::config::manifest::Entry;
use crate::config::tree::load_tree;
use crate::diag::{Diagnostic, Diagnostics, Sources};
use crate::provider::cache::SchemaCache;
use crate::provider::discovery::{Installation, ProviderSource, VersionConstraint};
use crate::provider::install::{Event, Installer};
use crate::provider::lockfile::{Locks, FILE};
use crate::provider::resolve::wanted;

/// `init`'s flags.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `-upgrade`: choose the newest allowed versions, whatever is locked.
    pub upgrade: bool,
    /// `-plugin-dir`: install only from these directories.
    pub plugin_dirs: Vec<PathBuf>,
    /// `-lockfile=readonly`: never change the lock file.
    pub lockfile_readonly: bool,
    pub color: bool,
}

/// What went wrong, and the files the diagnostics point into.
pub struct Failed {
    pub diagnostics: Diagnostics,
    pub sources: Sources,
}

impl From<Diagnostics> for Failed {
    fn from(diagnostics: Diagnostics) -> Failed {
        Failed {
            diagnostics,
            sources: Sources::default(),
        }
    }
}

/// Initialises the root in `root`, printing progress to `out`; returns the
/// warnings to show.
/// What a successful `init` warns of, with the files its warnings quote.
pub struct Warned {
    pub warnings: Diagnostics,
    pub sources: Sources,
}

pub fn init(root: &Path, options: &Options, out: &mut dyn Write) -> Result<Warned, Failed> {
    let bold = |s: &str| {
        if options.color {
            format!("\x1b[0m\x1b[1m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    };
    let mut say = |s: String| {
        // A reader that went away (`| head`) is not a failed init.
        let _ = writeln!(out, "{s}");
    };
    if options.upgrade && options.lockfile_readonly {
        return Err(Diagnostics::from(Diagnostic::error(
            "Invalid arguments",
            "The -upgrade flag conflicts with -lockfile=readonly.",
        ))
        .into());
    }
    let invalid = |diags: Diagnostics, sources: Sources| {
        let mut all = Diagnostics::from(Diagnostic::error(
            "Invalid configuration",
            "choudoufu encountered problems during initialisation, including problems with the configuration, described below.\n\nThe Terraform configuration must be valid before initialization so that choudoufu can determine which modules and providers need to be installed.",
        ));
        all.extend(diags);
        Failed {
            diagnostics: all,
            sources,
        }
    };
    let (root_module, diags) = crate::config::load(root);
    if diags.has_errors() {
        return Err(invalid(diags, root_module.sources().clone()));
    }

    say(bold("\nInitializing the estate..."));
    let settings = crate::live::load(root).map_err(|d| {
        let mut sources = Sources::default();
        if let Ok(text) = fs::read_to_string(root.join(crate::live::FILE)) {
            sources.add(crate::source::SourceFile::new(crate::live::FILE, text));
        }
        Failed {
            diagnostics: d,
            sources,
        }
    })?;
    match &settings.record_store {
        crate::live::RecordPlace::Local(base) => {
            let store = base.join(&settings.estate);
            writable(&store).map_err(|e| {
                Diagnostics::from(Diagnostic::error(
                    "Record store not writable",
                    format!(
                        "The record store of estate \"{}\" is {}, where nothing can be written: {e}. Set record_store in {} to a directory this user can write.",
                        settings.estate,
                        store.display(),
                        crate::live::FILE
                    ),
                ))
            })?;
            say(format!(
                "- Estate \"{}\", record store {}",
                settings.estate,
                store.strip_prefix(root).unwrap_or(&store).display()
            ));
        }
        crate::live::RecordPlace::Live => {
            say(format!(
                "- Estate \"{}\", records in the live system: {} (the default aws provider's account and region)",
                settings.estate,
                crate::record::ssm::place(&settings.estate)
            ));
            let earlier = crate::record::local::LocalStore::open(
                &root.join(crate::live::LOCAL_RECORDS),
                &settings.estate,
            );
            if !earlier.is_empty() {
                say(format!(
                    "- The records an earlier version left in {} move into the live system at the next apply",
                    earlier.dir().strip_prefix(root).unwrap_or(earlier.dir()).display()
                ));
            }
        }
    }

    if !root_module.module_calls.is_empty() {
        say(bold("Initializing modules..."));
        let entries = crate::module_install::install(root, options.upgrade, &mut say)?;
        write_modules_json(root, &entries).map_err(|e| {
            Diagnostics::from(Diagnostic::error(
                "Failed to update module manifest",
                format!("Unable to write the module manifest file: {e}"),
            ))
        })?;
    }
    let (tree, diags) = load_tree(root);
    if diags.has_errors() {
        return Err(invalid(diags, tree.sources()));
    }

    let mut required: BTreeMap<ProviderSource, VersionConstraint> = BTreeMap::new();
    for t in tree.modules() {
        let w = wanted(&t.module).map_err(|e| {
            Diagnostics::from(Diagnostic::error(
                "Invalid provider requirement",
                e.to_string(),
            ))
        })?;
        for (source, constraint) in w.into_values() {
            let combined = match required.remove(&source) {
                Some(c) => c.and(&constraint),
                None => constraint,
            };
            required.insert(source, combined);
        }
    }
    let mut warnings = Diagnostics::default();
    if let Some((kind, range)) = &root_module.backend {
        let what = match kind.as_str() {
            "cloud" => "HCP Terraform (the cloud block)".to_string(),
            k => format!("the \"{k}\" backend"),
        };
        warnings.push(
            Diagnostic::warning(
                "The live system is the state",
                format!("choudoufu keeps no state, so {what} is neither read nor written: each plan reads the live objects, and what they cannot tell is kept in the record store {} names. Stock terraform still uses this backend.", crate::live::FILE),
            )
            .at(range.clone()),
        );
    }
    let previous = match Locks::read(root) {
        Ok(Some((locks, lock_warnings))) => {
            warnings.extend(lock_warnings);
            locks
        }
        Ok(None) => Locks::default(),
        Err(invalid) => {
            return Err(Failed {
                diagnostics: invalid.diagnostics,
                sources: invalid.sources,
            })
        }
    };
    let installation = Installation::for_root(root).map_err(|e| {
        Diagnostics::from(Diagnostic::error(
            "Invalid CLI configuration",
            e.to_string(),
        ))
    })?;
    let installer = Installer::new(
        root,
        installation,
        &options.plugin_dirs,
        SchemaCache::from_env(),
    );
    say(bold("\nInitializing provider plugins..."));
    let (outcome, problems) = installer.ensure(&previous, &required, options.upgrade, &mut |e| {
        say(match e {
            Event::Finding {
                provider,
                constraints,
            } if constraints.is_empty() => {
                format!("- Finding latest version of {}...", provider.for_display())
            }
            Event::Finding {
                provider,
                constraints,
            } => format!(
                "- Finding {} versions matching \"{constraints}\"...",
                provider.for_display()
            ),
            Event::Reusing { provider } => format!(
                "- Reusing previous version of {} from the dependency lock file",
                provider.for_display()
            ),
            Event::AlreadyInstalled { provider, version } => format!(
                "- Using previously-installed {} v{version}",
                provider.for_display()
            ),
            Event::FromCache { provider, version } => format!(
                "- Using {} v{version} from the shared cache directory",
                provider.for_display()
            ),
            Event::Installing { provider, version } => {
                format!("- Installing {} v{version}...", provider.for_display())
            }
            Event::Installed { provider, version } => format!(
                "- Installed {} v{version} (unauthenticated)",
                provider.for_display()
            ),
        })
    });
    if !problems.is_empty() {
        let mut diags = Diagnostics::default();
        for p in problems {
            diags.push(Diagnostic::error(p.summary, p.detail));
        }
        return Err(diags.into());
    }
    if !same_selections(&outcome.locks, &previous) {
        if options.lockfile_readonly {
            if outcome.locks.providers.keys().ne(previous.providers.keys()) {
                return Err(Diagnostics::from(Diagnostic::error(
                    "Provider dependency changes detected",
                    "Changes to the required provider dependencies were detected, but the lock file is read-only. To use and record these requirements, run \"choudoufu init\" without the \"-lockfile=readonly\" flag.",
                ))
                .into());
            }
            warnings.push(Diagnostic::warning(
                "Provider lock file not updated",
                "Changes to the provider selections were detected, but not saved in the .terraform.lock.hcl file. To record these selections, run \"choudoufu init\" without the \"-lockfile=readonly\" flag.",
            ));
        } else {
            if !outcome.incomplete.is_empty() {
                let list: Vec<String> =
                    outcome.incomplete.iter().map(|p| p.for_display()).collect();
                warnings.push(Diagnostic::warning(
                    "Incomplete lock file information for providers",
                    format!("Due to your customized provider installation methods, Terraform was forced to calculate lock file checksums locally for the following providers:\n  - {}\n\nThe current .terraform.lock.hcl file only includes checksums for {}, so Terraform running on another platform will fail to install these providers.\n\nTo calculate additional checksums for another platform, run:\n  terraform providers lock -platform=linux_amd64\n(where linux_amd64 is the platform to generate)", list.join("\n  - "), crate::provider::discovery::current_target()),
                ));
            }
            if previous.providers.is_empty() {
                say(format!("Terraform has created a lock file {} to record the provider\nselections it made above. Include this file in your version control repository\nso that Terraform can guarantee to make the same selections by default when\nyou run \"terraform init\" in the future.", bold(FILE)));
            } else {
                say("Terraform has made some changes to the provider dependency selections recorded\nin the .terraform.lock.hcl file. Review those changes and commit them to your\nversion control system if they represent changes you intended to make.".into());
            }
            outcome.locks.write(root).map_err(|e| {
                Diagnostics::from(Diagnostic::error(
                    "Failed to update dependency lock file",
                    format!("Error while writing new dependency lock information to {FILE}: {e}."),
                ))
            })?;
        }
    }
    let done = "Terraform has been successfully initialized!";
    say(if options.color {
        format!("\n\x1b[0m\x1b[1m\x1b[32m{done}\x1b[0m\x1b[32m")
    } else {
        format!("\n{done}")
    });
    say("\nYou may now begin working with choudoufu. Try running \"choudoufu plan\" to see\nany changes that are required for your infrastructure. The same working\ndirectory also works with stock terraform.".into());
    if options.color {
        say("\x1b[0m".into());
    }
    Ok(Warned {
        warnings,
        sources: root_module.sources().clone(),
    })
}

/// Whether two lock files select the same versions with the same
/// checksums (terraform rewrites the file only then; constraints alone do
/// not count).
fn same_selections(a: &Locks, b: &Locks) -> bool {
    a.providers.len() == b.providers.len()
        && a.providers.iter().all(|(p, l)| {
            b.providers
                .get(p)
                .is_some_and(|o| o.version == l.version && o.hashes() == l.hashes())
        })
}

/// Whether a file can be created in `dir`, or in the nearest existing
/// directory above it (where `dir` would be created); nothing is left.
fn writable(dir: &Path) -> std::io::Result<()> {
    let mut at = dir;
    while !at.is_dir() {
        match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => at = p,
            _ => break,
        }
    }
    tempfile::tempfile_in(at).map(drop)
}

fn write_modules_json(root: &Path, entries: &[Entry]) -> std::io::Result<()> {
    let dir = root.join(".terraform").join("modules");
    fs::create_dir_all(&dir)?;
    // terraform's field order: Key, Source, Version (when there is one), Dir.
    let text = format!(
        "{{\"Modules\":[{}]}}",
        entries
            .iter()
            .map(|e| format!(
                "{{\"Key\":{},\"Source\":{},{}\"Dir\":{}}}",
                serde_json::Value::from(e.key.as_str()),
                serde_json::Value::from(e.source.as_str()),
                e.version
                    .as_deref()
                    .map(|v| format!("\"Version\":{},", serde_json::Value::from(v)))
                    .unwrap_or_default(),
                serde_json::Value::from(e.dir.as_str())
            ))
            .collect::<Vec<_>>()
            .join(",")
    );
    fs::write(dir.join("modules.json"), text)
}
