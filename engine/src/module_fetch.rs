//! Modules over HTTP, for `init`'s installer ([`crate::module_install`]):
//! the module registry protocol (the host's `modules.v1` service, from the
//! CLI configuration's `host` block or the host's
//! `/.well-known/terraform.json`; a module's versions; its download
//! location in `X-Terraform-Get`) and archives (`.zip`, `.tar.gz`, `.tgz`,
//! `.tar`, or named by `?archive=`), unpacked as terraform's installer
//! unpacks them. A CLI configuration's `credentials` block gives a host's
//! token, sent as a bearer token as terraform sends it.

use std::io::Read;
use std::path::Path;

use crate::provider::discovery::{Hosts, Version, VersionConstraint};

/// The public registry, which short sources name.
pub const PUBLIC: &str = "registry.terraform.io";

/// A client of module hosts and archive servers.
pub struct Client {
    hosts: Hosts,
    agent: ureq::Agent,
}

/// A module's address in a registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    pub host: String,
    pub namespace: String,
    pub name: String,
    pub system: String,
}

impl Package {
    /// `host/namespace/name/system` (the host as the source wrote it, or
    /// the public registry's), as terraform names it.
    pub fn parse(source: &str) -> Option<Package> {
        let parts: Vec<&str> = source.split('/').collect();
        let (host, rest) = match parts.len() {
            3 => (PUBLIC.to_owned(), &parts[..]),
            4 if parts[0].contains('.') => (parts[0].to_lowercase(), &parts[1..]),
            _ => return None,
        };
        Some(Package {
            host,
            namespace: rest[0].to_owned(),
            name: rest[1].to_owned(),
            system: rest[2].to_owned(),
        })
    }
}

impl std::fmt::Display for Package {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{}/{}/{}",
            self.host, self.namespace, self.name, self.system
        )
    }
}

/// Why a registry gave no package to fetch, as terraform's installer tells
/// the cases apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Locate {
    /// Its discovery or its versions could not be read.
    Unreachable(String),
    /// It holds no such module.
    NotFound,
    /// No version it holds is allowed; the newest it holds.
    NoMatch { newest: Option<Version> },
    /// The chosen version's download answer failed.
    Download(String),
}

/// The most an archive or a registry answer may hold.
const LIMIT: u64 = 512 * 1024 * 1024;

impl Client {
    pub fn new(hosts: Hosts) -> Client {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(std::time::Duration::from_secs(300)))
            .build()
            .into();
        Client { hosts, agent }
    }

    /// GET `url`, with `host`'s token when the configuration gives one.
    fn get(&self, url: &str) -> Result<ureq::http::Response<ureq::Body>, String> {
        let mut req = self.agent.get(url);
        if let Some(token) = host_of(url).and_then(|h| self.token(&h)) {
            req = req.header("Authorization", &format!("Bearer {token}"));
        }
        req.call().map_err(|e| format!("{url}: {e}"))
    }

    /// `host`'s token: its `credentials` block's, else `TF_TOKEN_<host>`
    /// (dots as `_`, dashes as `__`), as terraform reads them.
    fn token(&self, host: &str) -> Option<String> {
        self.hosts.tokens.get(host).cloned().or_else(|| {
            let var = format!("TF_TOKEN_{}", host.replace('-', "__").replace('.', "_"));
            std::env::var(var).ok().filter(|t| !t.is_empty())
        })
    }

    /// The base URL of `host`'s `modules.v1` service, ending in `/`.
    fn modules_base(&self, host: &str) -> Result<String, String> {
        if let Some(url) = self
            .hosts
            .services
            .get(host)
            .and_then(|s| s.get("modules.v1"))
        {
            return Ok(with_slash(url));
        }
        let discovery = format!("https://{host}/.well-known/terraform.json");
        let mut resp = self.get(&discovery)?;
        if resp.status() != 200 {
            return Err(format!(
                "failed to retrieve discovery document from {host}: {discovery} answered {}",
                resp.status()
            ));
        }
        let doc = json(&mut resp, &discovery)?;
        let service = doc["modules.v1"].as_str().ok_or_else(|| {
            format!("host {host} does not provide a module registry (no modules.v1 in {discovery})")
        })?;
        Ok(with_slash(&resolve(&discovery, service)))
    }

    /// The newest version of `package` that `wanted` allows, and where
    /// to fetch it from: the source address the registry's download answer
    /// names, resolved against it.
    pub fn locate(
        &self,
        package: &Package,
        wanted: &VersionConstraint,
    ) -> Result<(Version, String), Locate> {
        let base = format!(
            "{}{}/{}/{}",
            self.modules_base(&package.host)
                .map_err(Locate::Unreachable)?,
            package.namespace,
            package.name,
            package.system
        );
        let url = format!("{base}/versions");
        let mut resp = self.get(&url).map_err(Locate::Unreachable)?;
        match resp.status().as_u16() {
            200 => {}
            404 => return Err(Locate::NotFound),
            s => return Err(Locate::Unreachable(format!("{url} answered {s}"))),
        }
        let mut all: Vec<Version> = json(&mut resp, &url).map_err(Locate::Unreachable)?["modules"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|m| m["versions"].as_array().into_iter().flatten())
            .filter_map(|v| v["version"].as_str()?.parse().ok())
            .collect();
        all.sort();
        let newest = all.last().cloned();
        let version = all
            .into_iter()
            .rev()
            .find(|v| wanted.allows(v))
            .ok_or(Locate::NoMatch { newest })?;

        let url = format!("{base}/{version}/download");
        let resp = self.get(&url).map_err(Locate::Download)?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(Locate::Download(format!("{url} answered {status}")));
        }
        let location = resp
            .headers()
            .get("X-Terraform-Get")
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| Locate::Download(format!("{url} gave no X-Terraform-Get location")))?;
        Ok((version, resolve(&url, location)))
    }

    /// Fetches the archive at `url` (its kind named by `?archive=` or its
    /// extension) and unpacks it into `dest`.
    pub fn archive(&self, url: &str, dest: &Path) -> Result<(), String> {
        let kind = archive_kind(url).ok_or_else(|| {
            format!("{url} names no archive this installer unpacks (.zip, .tar.gz, .tgz, .tar, or ?archive=)")
        })?;
        let url = &without_archive_param(url);
        let mut resp = self.get(url)?;
        let status = resp.status().as_u16();
        if status != 200 {
            return Err(format!(
                "error downloading '{url}': bad response code: {status}"
            ));
        }
        let bytes = resp
            .body_mut()
            .with_config()
            .limit(LIMIT)
            .read_to_vec()
            .map_err(|e| format!("error downloading '{url}': {e}"))?;
        unpack(kind, &bytes, dest).map_err(|e| format!("error unpacking '{url}': {e}"))
    }
}

/// An archive's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Archive {
    Zip,
    TarGz,
    Tar,
}

/// The archive an HTTP URL names: by `?archive=`, else by its path's
/// extension, as terraform's installer decides.
fn archive_kind(url: &str) -> Option<Archive> {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let named = query.split('&').find_map(|kv| kv.strip_prefix("archive="));
    let of = |s: &str| match s {
        "zip" => Some(Archive::Zip),
        "tar.gz" | "tgz" => Some(Archive::TarGz),
        "tar" => Some(Archive::Tar),
        _ => None,
    };
    if let Some(n) = named {
        return of(n);
    }
    let path = path.to_lowercase();
    ["tar.gz", "tgz", "zip", "tar"]
        .into_iter()
        .find(|ext| path.ends_with(&format!(".{ext}")))
        .and_then(of)
}

/// The URL without the `archive` parameter, as it is requested.
fn without_archive_param(url: &str) -> String {
    let Some((path, query)) = url.split_once('?') else {
        return url.to_owned();
    };
    let rest: Vec<&str> = query
        .split('&')
        .filter(|kv| !kv.starts_with("archive="))
        .collect();
    match rest.is_empty() {
        true => path.to_owned(),
        false => format!("{path}?{}", rest.join("&")),
    }
}

/// Unpacks `bytes` into `dest`, refusing any entry that would land
/// outside it.
fn unpack(kind: Archive, bytes: &[u8], dest: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    match kind {
        Archive::Zip => {
            let mut zip =
                zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| e.to_string())?;
            zip.extract(dest).map_err(|e| e.to_string())
        }
        Archive::TarGz => {
            let mut inflated = Vec::new();
            flate2::read::GzDecoder::new(bytes)
                .read_to_end(&mut inflated)
                .map_err(|e| e.to_string())?;
            untar(&inflated, dest)
        }
        Archive::Tar => untar(bytes, dest),
    }
}

fn untar(bytes: &[u8], dest: &Path) -> Result<(), String> {
    let mut archive = tar::Archive::new(bytes);
    for entry in archive.entries().map_err(|e| e.to_string())? {
        let mut entry = entry.map_err(|e| e.to_string())?;
        // unpack_in skips a path that would climb out of `dest`: a package
        // holding one is refused whole.
        if !entry.unpack_in(dest).map_err(|e| e.to_string())? {
            let path = entry
                .path()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            return Err(format!("the entry {path:?} would land outside the package"));
        }
    }
    Ok(())
}

/// `reference` resolved against `base`, as a browser resolves a link:
/// absolute URLs and forced getters (`git::…`) as they are.
fn resolve(base: &str, reference: &str) -> String {
    if reference.contains("://") || reference.contains("::") {
        return reference.to_owned();
    }
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let origin_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    if reference.starts_with('/') {
        return format!("{}{reference}", &base[..origin_end]);
    }
    let base_path = base.split(['?', '#']).next().unwrap_or(base);
    let dir_end = base_path
        .rfind('/')
        .filter(|i| *i >= origin_end)
        .map_or(base_path.len(), |i| i + 1);
    let mut out = format!("{}{reference}", &base_path[..dir_end]);
    if !out[scheme_end..].contains('/') {
        out.insert(origin_end, '/');
    }
    out
}

/// A JSON answer's body.
fn json(
    resp: &mut ureq::http::Response<ureq::Body>,
    url: &str,
) -> Result<serde_json::Value, String> {
    let text = resp
        .body_mut()
        .with_config()
        .limit(LIMIT)
        .read_to_string()
        .map_err(|e| format!("{url}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{url}: {e}"))
}

fn with_slash(url: &str) -> String {
    match url.ends_with('/') {
        true => url.to_owned(),
        false => format!("{url}/"),
    }
}

/// The host of an HTTP URL.
fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?']).next()?;
    let host = authority.rsplit('@').next()?;
    Some(host.split(':').next()?.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_addresses_and_links_read_as_terraform_reads_them() {
        let p = Package::parse("terraform-aws-modules/vpc/aws").unwrap();
        assert_eq!(
            p.to_string(),
            "registry.terraform.io/terraform-aws-modules/vpc/aws"
        );
        let p = Package::parse("registry.acme.test/acme/net/aws").unwrap();
        assert_eq!(p.host, "registry.acme.test");
        assert!(Package::parse("./net").is_none());

        let dl = "http://127.0.0.1:5199/v1/modules/acme/net/aws/1.1.0/download";
        assert_eq!(
            resolve(dl, "/archives/net.tar.gz"),
            "http://127.0.0.1:5199/archives/net.tar.gz"
        );
        assert_eq!(
            resolve(dl, "net.zip"),
            "http://127.0.0.1:5199/v1/modules/acme/net/aws/1.1.0/net.zip"
        );
        assert_eq!(
            resolve(dl, "git::https://example.com/net.git?ref=v1.1.0"),
            "git::https://example.com/net.git?ref=v1.1.0"
        );
        assert_eq!(
            resolve(
                "https://registry.acme.test/.well-known/terraform.json",
                "/v1/modules/"
            ),
            "https://registry.acme.test/v1/modules/"
        );
        assert_eq!(
            host_of("https://user@Registry.acme.test:8443/x"),
            Some("registry.acme.test".into())
        );
    }

    #[test]
    fn archives_are_known_by_extension_or_by_name() {
        assert_eq!(
            archive_kind("https://x.test/m.tar.gz"),
            Some(Archive::TarGz)
        );
        assert_eq!(
            archive_kind("https://x.test/m.ZIP?sig=1"),
            Some(Archive::Zip)
        );
        assert_eq!(
            archive_kind("https://x.test/get?id=4&archive=tgz"),
            Some(Archive::TarGz)
        );
        assert_eq!(archive_kind("https://x.test/m"), None);
        assert_eq!(
            without_archive_param("https://x.test/get?id=4&archive=tgz"),
            "https://x.test/get?id=4"
        );
    }

    #[test]
    fn a_tar_entry_climbing_out_is_refused() {
        let mut b = tar::Builder::new(Vec::new());
        let data = b"x";
        let mut h = tar::Header::new_gnu();
        h.set_size(1);
        h.set_mode(0o644);
        // Write the raw name past tar's own path check.
        h.as_old_mut().name[..9].copy_from_slice(b"../out.tf");
        h.set_cksum();
        b.append(&h, &data[..]).unwrap();
        let bytes = b.into_inner().unwrap();
        let d = tempfile::tempdir().unwrap();
        let dest = d.path().join("pkg");
        let e = unpack(Archive::Tar, &bytes, &dest).unwrap_err();
        assert!(
            e.contains("\"../out.tf\" would land outside the package"),
            "{e}"
        );
        assert!(!d.path().join("out.tf").exists());
    }
}
