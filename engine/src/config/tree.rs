//! A root module and the child modules its calls load, recursively.
//!
//! A local source (`./x`, `../x`) is loaded from its caller's directory;
//! any other source (registry, git, an archive) from the directory the
//! module manifest `terraform init` wrote names for it
//! ([`super::manifest`]), after terraform's checks that it is installed
//! and current. A call that leads back to a
//! module already being loaded on the way down is an error too, and so is
//! `count`, `for_each` or `depends_on` on a call to a module that configures
//! its own providers.

use super::manifest::{is_local, Manifest};
use super::{load, Module, ProviderRef};
use crate::diag::{Diagnostic, Diagnostics, Sources};
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// One module and, by call name, the modules its calls load.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    pub module: Module,
    /// The call names from the root to this module (empty for the root).
    pub path: Vec<String>,
    pub children: BTreeMap<String, Tree>,
}

impl Tree {
    /// terraform's name for this module: `module.app.module.queue`, or an
    /// empty string for the root.
    pub fn address(&self) -> String {
        self.path
            .iter()
            .map(|n| format!("module.{n}"))
            .collect::<Vec<_>>()
            .join(".")
    }

    /// This module and every module below it, parents before children.
    pub fn modules(&self) -> Vec<&Tree> {
        let mut out = vec![self];
        for child in self.children.values() {
            out.extend(child.modules());
        }
        out
    }

    /// The module of a module instance of this tree.
    pub fn of_instance(&self, instance: &[crate::addr::ModuleStep]) -> &Tree {
        self.at(&crate::addr::call_names(instance))
            .expect("module instances are of modules of the tree")
    }

    /// The module at `path` (call names from this module down).
    pub fn at(&self, path: &[String]) -> Option<&Tree> {
        match path.split_first() {
            None => Some(self),
            Some((call, rest)) => self.children.get(call)?.at(rest),
        }
    }

    /// The `removed` blocks of every module, checked before a plan as
    /// terraform checks them: what one names must no longer be declared.
    pub fn check_removed(&self) -> Diagnostics {
        let mut diags = Diagnostics::default();
        for t in self.modules() {
            for r in &t.module.removed {
                let target = t.at(&r.from.module);
                let (summary, still) = match &r.from.resource {
                    Some(key) => (
                        "Removed resource still exists",
                        target
                            .and_then(|m| m.module.resources.get(key))
                            .map(|res| res.range.clone()),
                    ),
                    None => (
                        "Removed module still exists",
                        r.from.module.split_last().and_then(|(call, up)| {
                            let parent = t.at(up)?;
                            parent.children.get(call)?;
                            Some(parent.module.module_calls.get(call)?.range.clone())
                        }),
                    ),
                };
                let within = |m: &str| match t.address() {
                    a if a.is_empty() => m.to_string(),
                    a => format!("{a}.{m}"),
                };
                let from = within(&r.from.to_string());
                if let Some(at) = still {
                    diags.push(
                        Diagnostic::error(
                            summary,
                            format!("This statement declares that {from} was removed, but it is still declared in configuration."),
                        )
                        .at(at),
                    );
                }
            }
        }
        diags
    }

    /// The configuration a block of the module at `path` uses when it names
    /// provider `local` there: each call on the way up maps it through its
    /// `providers` argument, and a configuration no call maps is inherited
    /// from the caller under the same name, as terraform passes default
    /// configurations down.
    pub fn provider_for(&self, path: &[String], local: ProviderRef) -> ProviderRef {
        let mut r = local;
        for depth in (0..path.len()).rev() {
            let Some(parent) = self.at(&path[..depth]) else {
                break;
            };
            if let Some(call) = parent.module.module_calls.get(&path[depth]) {
                if let Some((_, given)) = call.providers.iter().find(|(inner, _)| *inner == r) {
                    r = given.clone();
                }
            }
        }
        r
    }

    /// Every source file of every module, for diagnostics' snippets.
    pub fn sources(&self) -> Sources {
        let mut all = Sources::default();
        for t in self.modules() {
            all.extend(t.module.sources());
        }
        all
    }
}

/// Loads the root module in `dir` and every module it calls. The tree is
/// usable only if the diagnostics hold no error.
pub fn load_tree(dir: &Path) -> (Tree, Diagnostics) {
    let mut diags = Diagnostics::default();
    let manifest = Manifest::read(dir).unwrap_or_else(|d| {
        diags.push(*d);
        Manifest::default()
    });
    let tree = load_below(dir, Vec::new(), &mut Vec::new(), &manifest, &mut diags);
    (tree, diags)
}

fn load_below(
    dir: &Path,
    path: Vec<String>,
    loading: &mut Vec<PathBuf>,
    manifest: &Manifest,
    diags: &mut Diagnostics,
) -> Tree {
    let (module, d) = load(dir);
    diags.extend(d);
    loading.push(identity(dir));
    let mut children = BTreeMap::new();
    for call in module.module_calls.values() {
        let mut child_path = path.clone();
        child_path.push(call.name.clone());
        let child_dir = if is_local(&call.source) {
            clean(&module.dir.join(&call.source))
        } else {
            match manifest.dir_of(&child_path, call) {
                Ok(dir) => dir,
                Err(d) => {
                    diags.push(*d);
                    continue;
                }
            }
        };
        if loading.contains(&identity(&child_dir)) {
            diags.push(
                Diagnostic::error(
                    "Module call cycle",
                    format!(
                        "Module \"{}\" calls {:?}, a module that is already being loaded above it: a module cannot call itself, directly or through other modules.",
                        call.name, call.source
                    ),
                )
                .at(call.range.clone()),
            );
            continue;
        }
        if !child_dir.is_dir() {
            diags.push(
                Diagnostic::error(
                    "Unreadable module directory",
                    format!(
                        "The directory {} could not be read for module \"{}\" at {}.",
                        child_dir.display(),
                        call.name,
                        call.range
                    ),
                )
                .at(call.range.clone()),
            );
            continue;
        }
        let child = load_below(&child_dir, child_path, loading, manifest, diags);
        if let Some(import) = child.module.imports.first() {
            diags.push(
                Diagnostic::error(
                    "Invalid import configuration",
                    format!(
                        "An import block was detected in \"{}\". Import blocks are only allowed in the root module.",
                        child.address()
                    ),
                )
                .at(import.range.clone()),
            );
        }
        if !child.module.providers.is_empty() {
            let repeated = call
                .count
                .iter()
                .chain(&call.for_each)
                .chain(&call.depends_on);
            if let Some(meta) = repeated.into_iter().next() {
                diags.push(
                    Diagnostic::error(
                        "Module is incompatible with count, for_each, and depends_on",
                        format!(
                            "The module at {} is a legacy module which contains its own local provider configurations, and so calls to it may not use the count, for_each, or depends_on arguments.\n\nIf you also control the module {:?}, consider updating this module to instead expect provider configurations to be passed by its caller.",
                            child.address(),
                            call.source
                        ),
                    )
                    .at(meta.range())
                    .in_context(Some(format!("module \"{}\"", call.name))),
                );
            }
        }
        children.insert(call.name.clone(), child);
    }
    loading.pop();
    Tree {
        module,
        path,
        children,
    }
}

/// `path` with `.` and `..` components resolved lexically, as terraform
/// resolves a local source against its caller's directory.
fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// What makes two directories the same module: the real path when it can
/// be read, else the lexical one.
fn identity(dir: &Path) -> PathBuf {
    dir.canonicalize().unwrap_or_else(|_| clean(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_beside_the_root_is_named_from_the_working_directory() {
        let rel = |p: &str, b: &str| super::super::relative(Path::new(p), Path::new(b));
        assert_eq!(rel("/w/root", "/w/root"), Some(PathBuf::new()));
        assert_eq!(
            rel("/w/root/modules/q", "/w/root"),
            Some(PathBuf::from("modules/q"))
        );
        assert_eq!(
            rel("/w/shared", "/w/root"),
            Some(PathBuf::from("../shared"))
        );
        assert_eq!(rel("/tmp/x", "/w/root"), None);
    }

    fn write(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn a_removed_block_names_what_is_no_longer_declared() {
        let root = tempfile::tempdir().unwrap();
        write(
            root.path(),
            "main.tf",
            r#"resource "aws_sqs_queue" "kept" {
  name = "kept"
}
removed {
  from = aws_sqs_queue.kept
}
removed {
  from = aws_sqs_queue.gone
}
removed {
  from = module.app.aws_sqs_queue.q
}
removed {
  from = module.app
}
removed {
  from = module.app.aws_sns_topic.forgotten
  lifecycle {
    destroy = false
  }
}
module "app" {
  source = "./app"
}
"#,
        );
        write(
            root.path(),
            "app/main.tf",
            "resource \"aws_sqs_queue\" \"q\" {\n  name = \"q\"\n}\n",
        );
        let (tree, d) = load_tree(root.path());
        assert!(!d.has_errors(), "{d}");
        let found: Vec<(String, usize)> = tree
            .check_removed()
            .iter()
            .map(|d| (d.summary.clone(), d.subject.as_ref().unwrap().start.line))
            .collect();
        assert_eq!(
            found,
            [
                ("Removed resource still exists".to_string(), 1),
                ("Removed resource still exists".to_string(), 1),
                ("Removed module still exists".to_string(), 22),
            ]
        );
    }

    #[test]
    fn loads_local_calls_recursively_by_call_name() {
        let root = tempfile::tempdir().unwrap();
        write(
            root.path(),
            "main.tf",
            "module \"app\" {\n  source = \"./modules/app\"\n}\n",
        );
        write(
            root.path(),
            "modules/app/main.tf",
            "module \"queue\" {\n  source = \"../queue\"\n}\n",
        );
        write(
            root.path(),
            "modules/queue/main.tf",
            "variable \"name\" {}\n",
        );
        let (tree, d) = load_tree(root.path());
        assert!(!d.has_errors(), "{d}");
        let queue = &tree.children["app"].children["queue"];
        assert_eq!(queue.address(), "module.app.module.queue");
        assert_eq!(queue.module.dir, root.path().join("modules/queue"));
        assert!(queue.module.variables.contains_key("name"));
        assert_eq!(tree.modules().len(), 3);
    }

    #[test]
    fn a_child_uses_the_configuration_its_callers_pass_or_inherit() {
        let root = tempfile::tempdir().unwrap();
        write(
            root.path(),
            "main.tf",
            "provider \"aws\" {\n  alias = \"east\"\n}\nmodule \"app\" {\n  source = \"./app\"\n  providers = {\n    aws = aws.east\n  }\n}\nmodule \"plain\" {\n  source = \"./queue\"\n}\n",
        );
        write(
            root.path(),
            "app/main.tf",
            "module \"queue\" {\n  source = \"../queue\"\n}\n",
        );
        write(root.path(), "queue/main.tf", "variable \"name\" {}\n");
        let (tree, d) = load_tree(root.path());
        assert!(!d.has_errors(), "{d}");
        let aws = ProviderRef {
            name: "aws".into(),
            alias: None,
        };
        let path = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let east = tree.provider_for(&path(&["app", "queue"]), aws.clone());
        assert_eq!(east.to_string(), "provider.aws.east");
        assert_eq!(tree.provider_for(&path(&["plain"]), aws.clone()), aws);
        assert_eq!(tree.provider_for(&[], aws.clone()), aws);
        assert_eq!(
            tree.at(&path(&["app", "queue"])).unwrap().address(),
            "module.app.module.queue"
        );
        assert!(tree.at(&path(&["nope"])).is_none());
    }

    #[test]
    fn refuses_uninstalled_sources_missing_directories_and_cycles_at_the_call() {
        let root = tempfile::tempdir().unwrap();
        write(
            root.path(),
            "main.tf",
            "module \"vpc\" {\n  source = \"terraform-aws-modules/vpc/aws\"\n}\n\nmodule \"gone\" {\n  source = \"./gone\"\n}\n\nmodule \"loop\" {\n  source = \"./loop\"\n}\n",
        );
        write(
            root.path(),
            "loop/main.tf",
            "\nmodule \"again\" {\n  source = \"../loop\"\n}\n",
        );
        let (tree, d) = load_tree(root.path());
        let found: Vec<(&str, usize)> = d
            .iter()
            .map(|d| (d.summary.as_str(), d.subject.as_ref().unwrap().start.line))
            .collect();
        assert_eq!(
            found,
            [
                ("Unreadable module directory", 5),
                ("Module call cycle", 2),
                ("Module not installed", 1)
            ]
        );
        assert!(d.0[2]
            .detail
            .starts_with("This module is not yet installed. Run \"terraform init\""));
        assert!(tree.children["loop"].children.is_empty());
    }

    #[test]
    fn a_remote_source_loads_from_where_init_installed_it_and_its_own_calls_below_it() {
        let root = tempfile::tempdir().unwrap();
        write(
            root.path(),
            "main.tf",
            "module \"web\" {\n  source  = \"terraform-aws-modules/security-group/aws//modules/http-80\"\n  version = \"~> 5.3\"\n}\n",
        );
        let pkg = ".terraform/modules/web";
        write(
            root.path(),
            &format!("{pkg}/modules/http-80/main.tf"),
            "module \"sg\" {\n  source = \"../../\"\n}\n",
        );
        write(
            root.path(),
            &format!("{pkg}/main.tf"),
            "variable \"name\" {}\n",
        );
        write(
            root.path(),
            ".terraform/modules/modules.json",
            &format!(
                r#"{{"Modules":[{{"Key":"","Source":"","Dir":"."}},{{"Key":"web","Source":"registry.terraform.io/terraform-aws-modules/security-group/aws//modules/http-80","Version":"5.3.1","Dir":"{pkg}/modules/http-80"}},{{"Key":"web.sg","Source":"../../","Dir":"{pkg}"}}]}}"#
            ),
        );
        let (tree, d) = load_tree(root.path());
        assert!(!d.has_errors(), "{d}");
        let web = &tree.children["web"];
        assert_eq!(
            web.module.dir,
            root.path().join(pkg).join("modules/http-80")
        );
        let sg = &web.children["sg"];
        assert!(sg.module.variables.contains_key("name"));
        assert_eq!(sg.address(), "module.web.module.sg");
    }
}
