//! `init`'s module installer: every module call of the root and of the
//! modules it loads, depth first in call-name order as terraform walks
//! them, recorded in the module manifest ([`crate::config::manifest`]).
//!
//! A local source is recorded where it sits. A remote one is fetched into
//! `.terraform/modules/<key>`, as terraform's installer does: a git source
//! (`git::URL`, with `?ref=`, `?depth=` and a `//subdir`; the
//! `github.com/…` and `git@host:…` shorthands) cloned with the `git`
//! command; an HTTP archive downloaded and unpacked; a registry source
//! (`namespace/name/system`, with a host or the public registry's) at the
//! newest version its `version` constraint allows, fetched from where the
//! registry's download answer points ([`crate::module_fetch`]). A call
//! that the manifest already records from the same source, in a directory
//! that is still there and at a version its constraint allows, is kept
//! unless `-upgrade` asks for it again. Other sources (`s3::`, `gcs::`,
//! `hg::`) are refused, naming the call.

use std::path::Path;
use std::process::Command;

use crate::config::manifest::{is_local, normal_source, Entry, Manifest};
use crate::config::ModuleCall;
use crate::diag::{Diagnostic, Diagnostics};
use crate::module_fetch::{Client, Locate, Package};
use crate::provider::discovery::{Installation, VersionConstraint};

/// How a remote source is fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fetch {
    Git {
        url: String,
        reference: Option<String>,
        depth: Option<u32>,
    },
    /// A module registry's package.
    Registry(Package),
    /// An archive over HTTP(S).
    Http(String),
    /// A getter this installer does not have (`s3::`, `gcs::`, `hg::`).
    Unsupported,
}

/// A remote source: how to fetch its package, and the directory inside
/// the package the call loads.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Remote {
    fetch: Fetch,
    /// The source without its subdirectory, as terraform names what it
    /// downloads.
    package: String,
    subdir: Option<String>,
}

/// Reads a source that is not local.
fn remote(source: &str) -> Remote {
    let normal = normal_source(source);
    let (base, query) = match normal.split_once('?') {
        Some((b, q)) => (b.to_owned(), Some(q.to_owned())),
        None => (normal.clone(), None),
    };
    // The subdirectory: a `//` after the scheme's own.
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let (package_base, subdir) = match base[scheme_end..].find("//") {
        Some(i) => (
            base[..scheme_end + i].to_owned(),
            Some(base[scheme_end + i + 2..].to_owned()),
        ),
        None => (base.clone(), None),
    };
    let package = match &query {
        Some(q) => format!("{package_base}?{q}"),
        None => package_base.clone(),
    };
    let scp = |s: &str| {
        // `git@github.com:org/repo.git`, as git's own scp-like syntax.
        let (user_host, path) = s.split_once(':')?;
        (user_host.contains('@') && !path.starts_with("//"))
            .then(|| format!("ssh://{user_host}/{path}"))
    };
    let fetch = if let Some(url) = package_base.strip_prefix("git::") {
        let mut reference = None;
        let mut depth = None;
        let mut rest = Vec::new();
        for pair in query.iter().flat_map(|q| q.split('&')) {
            match pair.split_once('=') {
                Some(("ref", v)) => reference = Some(v.to_owned()),
                Some(("depth", v)) => depth = v.parse().ok(),
                _ => rest.push(pair),
            }
        }
        let url = scp(url).unwrap_or_else(|| url.to_owned());
        let url = if rest.is_empty() {
            url
        } else {
            format!("{url}?{}", rest.join("&"))
        };
        Fetch::Git {
            url,
            reference,
            depth,
        }
    } else if package_base.starts_with("git@") {
        return remote(&format!("git::{source}"));
    } else if package_base.starts_with("http://") || package_base.starts_with("https://") {
        Fetch::Http(package.clone())
    } else if let Some(p) = Package::parse(&package_base).filter(|_| !package_base.contains("::")) {
        Fetch::Registry(p)
    } else {
        Fetch::Unsupported
    };
    Remote {
        fetch,
        package,
        subdir,
    }
}

/// Installs every module call below the root in `root`; returns the
/// manifest's entries in terraform's order, the root's first.
pub fn install(
    root: &Path,
    upgrade: bool,
    say: &mut dyn FnMut(String),
) -> Result<Vec<Entry>, Diagnostics> {
    let previous = Manifest::read(root).map_err(|d| Diagnostics::from(*d))?;
    let hosts = Installation::for_root(root)
        .map_err(|e| {
            Diagnostics::from(Diagnostic::error(
                "Invalid CLI configuration",
                e.to_string(),
            ))
        })?
        .hosts;
    let mut out = vec![Entry {
        key: String::new(),
        source: String::new(),
        version: None,
        dir: ".".into(),
    }];
    let mut diags = Diagnostics::default();
    let mut walk = Walk {
        root,
        client: Client::new(hosts),
        previous: &previous,
        upgrade,
        say,
        out: &mut out,
        diags: &mut diags,
    };
    walk.below(".", &[]);
    if diags.has_errors() {
        return Err(diags);
    }
    Ok(out)
}

struct Walk<'a> {
    root: &'a Path,
    client: Client,
    previous: &'a Manifest,
    upgrade: bool,
    say: &'a mut dyn FnMut(String),
    out: &'a mut Vec<Entry>,
    diags: &'a mut Diagnostics,
}

impl Walk<'_> {
    /// The calls of the module in `dir` (relative to the root), whose key
    /// is `path`. The module's own errors are left to the loading after
    /// the install, which reports them with their sources.
    fn below(&mut self, dir: &str, path: &[String]) {
        let (module, _) = crate::config::load(&self.root.join(dir));
        for call in module.module_calls.values() {
            let mut key = path.to_vec();
            key.push(call.name.clone());
            let entry = if is_local(&call.source) {
                Entry {
                    key: key.join("."),
                    source: clean(&call.source, true),
                    version: None,
                    dir: clean(&format!("{dir}/{}", call.source), false),
                }
            } else {
                match self.remote(&key, call) {
                    Some(e) => e,
                    None => continue,
                }
            };
            (self.say)(format!("- {} in {}", entry.key, entry.dir));
            let child = entry.dir.clone();
            self.out.push(entry);
            if self.out.len() > 1000 {
                self.diags.push(Diagnostic::error(
                    "Module stack level too deep",
                    "This configuration has more than a thousand module calls, which a call leading back to its own module makes.",
                ));
                return;
            }
            self.below(&child, &key);
        }
    }

    /// The entry of a remote call: the one installed, or a new install.
    fn remote(&mut self, key: &[String], call: &ModuleCall) -> Option<Entry> {
        let joined = key.join(".");
        if !self.upgrade && self.previous.dir_of(key, call).is_ok() {
            return self.previous.get(&joined).cloned();
        }
        let r = remote(&call.source);
        let failed = |detail: String| {
            Diagnostic::error(
                "Failed to download module",
                format!(
                    "Could not download module \"{}\" ({}:{}) source code from \"{}\": {detail}",
                    call.name, call.range.filename, call.range.start.line, r.package
                ),
            )
            .at(call.range.clone())
        };
        let package = format!(".terraform/modules/{joined}");
        let dest = self.root.join(&package);
        let (version, inner) = match &r.fetch {
            Fetch::Registry(p) => {
                let wanted = match call
                    .version
                    .as_deref()
                    .unwrap_or("")
                    .parse::<VersionConstraint>()
                {
                    Ok(w) => w,
                    Err(e) => {
                        self.diags.push(failed(e.to_string()));
                        return None;
                    }
                };
                let found = self.client.locate(p, &wanted);
                let (v, location) = match found {
                    Ok(f) => f,
                    Err(e) => {
                        let at = format!("{}:{}", call.range.filename, call.range.start.line);
                        let d = match e {
                            Locate::Download(e) => failed(e),
                            Locate::Unreachable(e) => Diagnostic::error(
                                "Error accessing remote module registry",
                                format!(
                                    "Failed to retrieve available versions for module \"{}\" ({at}) from {}: {e}.",
                                    call.name, p.host
                                ),
                            ),
                            Locate::NotFound => Diagnostic::error(
                                "Module not found",
                                format!(
                                    "Module \"{}\" (from {at}) cannot be found in the module registry at {}.",
                                    call.name, p.host
                                ),
                            ),
                            Locate::NoMatch { newest } => Diagnostic::error(
                                "Unresolvable module version constraint",
                                format!(
                                    "There is no available version of module \"{}\" ({at}) which matches the given version constraint.{}",
                                    r.package,
                                    newest
                                        .map(|n| format!(" The newest available version is {n}."))
                                        .unwrap_or_default()
                                ),
                            ),
                        };
                        self.diags.push(d.at(call.range.clone()));
                        return None;
                    }
                };
                (self.say)(format!("Downloading {} {v} for {joined}...", r.package));
                let at = remote(&location);
                if let Err(e) = self.fetch(&at.fetch, &dest) {
                    self.diags.push(failed(format!("from {location}: {e}")));
                    return None;
                }
                (Some(v.to_string()), at.subdir)
            }
            f => {
                (self.say)(format!("Downloading {} for {joined}...", r.package));
                if let Err(e) = self.fetch(f, &dest) {
                    self.diags.push(failed(e));
                    return None;
                }
                (None, None)
            }
        };
        let dir = [inner, r.subdir.clone()]
            .into_iter()
            .flatten()
            .fold(package, |d, s| clean(&format!("{d}/{s}"), false));
        Some(Entry {
            key: joined,
            source: normal_source(&call.source),
            version,
            dir,
        })
    }

    /// Fetches a package into `dest`, emptied first; a fetch that fails
    /// leaves no folder behind, so nothing half-written looks installed.
    fn fetch(&self, fetch: &Fetch, dest: &Path) -> Result<(), String> {
        if dest.exists() {
            std::fs::remove_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
        }
        let fetched = self.fetch_into(fetch, dest);
        if fetched.is_err() && dest.exists() {
            let _ = std::fs::remove_dir_all(dest);
        }
        fetched
    }

    fn fetch_into(&self, fetch: &Fetch, dest: &Path) -> Result<(), String> {
        match fetch {
            Fetch::Git {
                url,
                reference,
                depth,
            } => clone(dest, url, reference.as_deref(), *depth),
            Fetch::Http(url) => self.client.archive(url, dest),
            Fetch::Registry(p) => Err(format!(
                "a registry's download location may not name another registry module ({p})"
            )),
            Fetch::Unsupported => Err(
                "this installer fetches modules from git, HTTP archives and module registries; run \"terraform init\" for this source, whose module manifest choudoufu then reads".into(),
            ),
        }
    }
}

/// `git clone` of `url` into `dest` (which `fetch` emptied), at `reference`, as
/// terraform's installer runs it: a shallow clone of the reference when a
/// depth is given, else a whole clone and a checkout of the reference.
fn clone(
    dest: &Path,
    url: &str,
    reference: Option<&str>,
    depth: Option<u32>,
) -> Result<(), String> {
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    let git = |args: &[&str], dir: Option<&Path>| -> Result<(), String> {
        let mut c = Command::new("git");
        c.args(args).env("GIT_TERMINAL_PROMPT", "0");
        if let Some(d) = dir {
            c.current_dir(d);
        }
        let out = c
            .output()
            .map_err(|e| format!("git could not be run: {e}"))?;
        if out.status.success() {
            return Ok(());
        }
        Err(format!(
            "error downloading '{url}': git {} exited with {}: {}",
            args.first().unwrap_or(&""),
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    };
    let dest_text = dest.to_string_lossy();
    match (depth, reference) {
        (Some(n), r) => {
            let n = n.to_string();
            let mut args = vec!["clone", "-q", "--depth", &n];
            if let Some(r) = r {
                args.extend(["--branch", r]);
            }
            args.extend(["--", url, &dest_text]);
            git(&args, None)?;
        }
        (None, r) => {
            git(&["clone", "-q", "--", url, &dest_text], None)?;
            if let Some(r) = r {
                git(&["checkout", "-q", r], Some(dest))?;
            }
        }
    }
    git(
        &["submodule", "update", "-q", "--init", "--recursive"],
        Some(dest),
    )
}

/// A slash path cleaned as Go's path.Clean does; a local source keeps its
/// leading `./`.
pub fn clean(path: &str, keep_dot: bool) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." if parts.last().is_some_and(|l| *l != "..") => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let joined = parts.join("/");
    if keep_dot && !joined.starts_with("..") {
        format!("./{joined}")
    } else if joined.is_empty() {
        ".".into()
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_sources_read_as_terraform_reads_them() {
        let r = remote("git::https://example.com/network.git//modules/vpc?ref=v1.2.0&depth=1");
        assert_eq!(
            r.fetch,
            Fetch::Git {
                url: "https://example.com/network.git".into(),
                reference: Some("v1.2.0".into()),
                depth: Some(1),
            }
        );
        assert_eq!(
            r.package,
            "git::https://example.com/network.git?ref=v1.2.0&depth=1"
        );
        assert_eq!(r.subdir.as_deref(), Some("modules/vpc"));

        let r = remote("github.com/hashicorp/example?ref=v2");
        assert_eq!(
            r.fetch,
            Fetch::Git {
                url: "https://github.com/hashicorp/example.git".into(),
                reference: Some("v2".into()),
                depth: None,
            }
        );
        let r = remote("git@github.com:org/repo.git//sub");
        assert_eq!(
            r.fetch,
            Fetch::Git {
                url: "ssh://git@github.com/org/repo.git".into(),
                reference: None,
                depth: None,
            }
        );
        assert_eq!(r.subdir.as_deref(), Some("sub"));
        let r = remote("git::file:///srv/sg.git//modules/http-80?ref=v5.3.1");
        assert_eq!(r.package, "git::file:///srv/sg.git?ref=v5.3.1");
        assert_eq!(r.subdir.as_deref(), Some("modules/http-80"));
    }

    #[test]
    fn registry_and_http_sources_are_told_apart() {
        assert_eq!(
            remote("terraform-aws-modules/vpc/aws").fetch,
            Fetch::Registry(Package::parse("terraform-aws-modules/vpc/aws").unwrap())
        );
        let r = remote("registry.acme.test/acme/net/aws//modules/inner");
        assert_eq!(r.package, "registry.acme.test/acme/net/aws");
        assert_eq!(r.subdir.as_deref(), Some("modules/inner"));
        assert_eq!(
            remote("https://example.com/vpc-module.zip").fetch,
            Fetch::Http("https://example.com/vpc-module.zip".into())
        );
        assert_eq!(
            remote("s3::https://s3.amazonaws.com/b/m.zip").fetch,
            Fetch::Unsupported
        );
    }

    #[test]
    fn cleans_paths_as_go_does() {
        assert_eq!(clean("./modules/app/", true), "./modules/app");
        assert_eq!(clean("../shared", true), "../shared");
        assert_eq!(clean("./modules/app/./inner", false), "modules/app/inner");
        assert_eq!(clean("./x/../y", false), "y");
        assert_eq!(clean("./.", false), ".");
    }
}
