//! What the machine must provide, found or provisioned before a run starts.
//!
//! Stock terraform (PATH or `TERRAFORM`), the aws provider in a filesystem
//! mirror or plugin cache, and a virtualenv holding the emulator and the
//! witness at the versions pinned in `live/aws-lane.toml`. Each lookup that
//! fails says what it looked for, where, and what to install.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Command;

use engine::provider::discovery::{
    self, DiscoveryError, Places, ProviderSource, VersionConstraint,
};
use serde::Deserialize;

use crate::clock::{Category, Clock};
use crate::process;

/// A machine that cannot run the gauntlet, and what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    #[error("cannot read the lane pins {path}: {reason}")]
    Pins { path: PathBuf, reason: String },
    #[error("stock terraform was not found: {looked}. Install terraform {pin} on PATH, or set TERRAFORM to its path")]
    NoTerraform { looked: String, pin: String },
    #[error("{path} did not answer `terraform version -json`: {reason}")]
    BadTerraform { path: PathBuf, reason: String },
    #[error("the {provider} provider {version} for {platform} was not found in any filesystem mirror or plugin cache: {detail}\nPut it in one of them (`terraform providers mirror` writes one; the packed layout registry.terraform.io/hashicorp/aws/terraform-provider-aws_{version}_{platform}.zip or the unpacked registry.terraform.io/hashicorp/aws/{version}/{platform}/), or set GAUNTLET_PROVIDER_MIRROR to a directory that holds it")]
    NoProvider {
        provider: String,
        version: String,
        platform: String,
        detail: String,
    },
    #[error("python3 with the venv module is needed to install the emulator and the witness ({detail}). Install Python 3.9 or later with venv and pip (Debian: apt-get install python3 python3-venv python3-pip)")]
    NoPython { detail: String },
    #[error("installing {what} into {venv} failed:\n{output}")]
    Install {
        what: String,
        venv: PathBuf,
        output: String,
    },
    #[error("cannot read the CLI config {path} for its module registries: {reason}")]
    CliConfig { path: PathBuf, reason: String },
    #[error(transparent)]
    Process(#[from] process::ProcessError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> MachineError + '_ {
    move |source| MachineError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The pins of `live/aws-lane.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pins {
    pub emulator: PackagePin,
    pub witness: PackagePin,
    pub oracle: OraclePin,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackagePin {
    pub package: String,
    pub version: String,
}

impl PackagePin {
    /// The distribution name without extras: `moto[server]` is `moto`.
    pub fn dist(&self) -> &str {
        self.package.split('[').next().unwrap_or(&self.package)
    }

    fn requirement(&self) -> String {
        format!("{}=={}", self.package, self.version)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OraclePin {
    pub terraform: String,
    pub aws_provider: String,
    pub provider_mirrors: Vec<PathBuf>,
}

impl Pins {
    pub fn load(path: &Path) -> Result<Pins, MachineError> {
        let text = fs::read_to_string(path).map_err(|e| MachineError::Pins {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
        toml::from_str(&text).map_err(|e| MachineError::Pins {
            path: path.to_owned(),
            reason: e.to_string(),
        })
    }
}

/// Stock terraform, found and asked its version.
#[derive(Debug, Clone)]
pub struct Terraform {
    pub path: PathBuf,
    pub version: String,
}

impl Terraform {
    /// `TERRAFORM` if set, else the first `terraform` on PATH.
    pub fn find(clock: &Clock, pin: &str) -> Result<Terraform, MachineError> {
        let path = match std::env::var_os("TERRAFORM") {
            Some(p) => {
                let p = PathBuf::from(p);
                if !is_executable(&p) {
                    return Err(MachineError::NoTerraform {
                        looked: format!("TERRAFORM={} is not an executable file", p.display()),
                        pin: pin.to_owned(),
                    });
                }
                p
            }
            None => which("terraform").ok_or_else(|| MachineError::NoTerraform {
                looked: format!(
                    "no `terraform` on PATH ({})",
                    std::env::var("PATH").unwrap_or_default()
                ),
                pin: pin.to_owned(),
            })?,
        };
        let mut cmd = Command::new(&path);
        cmd.args(["version", "-json"])
            .env("CHECKPOINT_DISABLE", "1");
        let out = process::run(clock, Category::Terraform, "terraform version", cmd)?;
        let bad = |reason: String| MachineError::BadTerraform {
            path: path.clone(),
            reason,
        };
        if !out.status.success() {
            return Err(bad(String::from_utf8_lossy(&out.stderr).trim().to_owned()));
        }
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).map_err(|e| bad(e.to_string()))?;
        let version = v["terraform_version"]
            .as_str()
            .ok_or_else(|| bad("no terraform_version in its answer".into()))?
            .to_owned();
        Ok(Terraform { path, version })
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// A directory terraform can use as a `filesystem_mirror` for one provider.
#[derive(Debug, Clone)]
pub struct ProviderMirror {
    pub dir: PathBuf,
    /// The pinned version's executable, or its archive in a packed mirror.
    pub package: PathBuf,
}

/// Find `registry.terraform.io/hashicorp/aws` at `version` the way terraform
/// would, with the engine's discovery: `GAUNTLET_PROVIDER_MIRROR` alone if
/// set; otherwise the plugin cache, the CLI config's filesystem mirrors (or
/// terraform's implied local mirrors), then the pinned mirrors.
pub fn find_provider(
    root: &Path,
    version: &str,
    pinned: &[PathBuf],
) -> Result<ProviderMirror, MachineError> {
    let not_found = |detail: String| MachineError::NoProvider {
        provider: "registry.terraform.io/hashicorp/aws".into(),
        version: version.to_owned(),
        platform: discovery::current_target(),
        detail,
    };
    let places = match std::env::var_os("GAUNTLET_PROVIDER_MIRROR") {
        Some(dir) => Places::mirrors([PathBuf::from(dir)]),
        None => Places::for_root(root)
            .map_err(|e| not_found(e.to_string()))?
            .with_mirrors(pinned.iter().cloned()),
    };
    let source: ProviderSource = "hashicorp/aws"
        .parse()
        .map_err(|e: DiscoveryError| not_found(e.to_string()))?;
    let constraint: VersionConstraint = format!("= {version}")
        .parse()
        .map_err(|e: DiscoveryError| not_found(e.to_string()))?;
    let found = places
        .find(&source, &constraint)
        .map_err(|e| not_found(e.to_string()))?;
    Ok(ProviderMirror {
        dir: found.place,
        package: found.path,
    })
}

/// Write a CLI config that installs the aws provider from `mirror` only,
/// and reaches module registries as the user's own CLI config does: its
/// `host` and `credentials` blocks, when `user` holds one, copied in.
pub fn write_cli_config(
    path: &Path,
    mirror: &ProviderMirror,
    user: Option<&Path>,
) -> Result<(), MachineError> {
    let mut text = format!(
        "# Written by the gauntlet for one run.\nprovider_installation {{\n  filesystem_mirror {{\n    path    = {}\n    include = [\"registry.terraform.io/hashicorp/aws\"]\n  }}\n}}\n",
        serde_json::Value::String(mirror.dir.display().to_string())
    );
    if let Some(user) = user {
        let blocks = registry_blocks(user)?;
        if !blocks.is_empty() {
            text.push_str(&format!(
                "\n# The module registries of {}, as its user reaches them.\n{blocks}",
                user.display()
            ));
        }
    }
    fs::write(path, text).map_err(io(path))
}

/// The CLI config terraform would read for the user running the gauntlet:
/// `TF_CLI_CONFIG_FILE`, else `~/.terraformrc`, when there is one.
pub fn user_cli_config() -> Option<PathBuf> {
    let named = std::env::var_os("TF_CLI_CONFIG_FILE")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let home = std::env::var_os("HOME").map(|h| Path::new(&h).join(".terraformrc"));
    named.or(home).filter(|p| p.is_file())
}

/// The module registries' tokens given as terraform takes them from the
/// environment (`TF_TOKEN_<host>`), for both tools' commands, which
/// otherwise see only what the gauntlet sets.
pub fn registry_tokens() -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    std::env::vars_os()
        .filter(|(k, _)| k.to_string_lossy().starts_with("TF_TOKEN_"))
        .collect()
}

/// The `host` and `credentials` blocks of the CLI config at `path`, as HCL:
/// where a module registry answers, and the token it takes.
fn registry_blocks(path: &Path) -> Result<String, MachineError> {
    let text = fs::read_to_string(path).map_err(io(path))?;
    let body = hcl::parse(&text).map_err(|e| MachineError::CliConfig {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    let kept: hcl::Body = body
        .into_blocks()
        .filter(|b| matches!(b.identifier(), "host" | "credentials"))
        .collect();
    hcl::format::to_string(&kept).map_err(|e| MachineError::CliConfig {
        path: path.to_owned(),
        reason: e.to_string(),
    })
}

/// Everything a run needs from the machine.
#[derive(Debug, Clone)]
pub struct Machine {
    pub terraform: Terraform,
    pub mirror: ProviderMirror,
    pub venv: Venv,
}

impl Machine {
    /// Find terraform and the provider, and provision the virtualenv at
    /// `venv`, in that order, so the cheapest failure comes first.
    pub fn prepare(clock: &Clock, pins: &Pins, venv: &Path) -> Result<Machine, MachineError> {
        let terraform = Terraform::find(clock, &pins.oracle.terraform)?;
        let mirror = find_provider(
            &std::env::current_dir().unwrap_or_default(),
            &pins.oracle.aws_provider,
            &pins.oracle.provider_mirrors,
        )?;
        clock.say(&format!(
            "terraform {} at {}; aws provider {} at {}",
            terraform.version,
            terraform.path.display(),
            pins.oracle.aws_provider,
            mirror.package.display()
        ));
        let venv = Venv::provision(clock, venv, pins)?;
        Ok(Machine {
            terraform,
            mirror,
            venv,
        })
    }
}

/// The emulator and the witness, installed at their pins.
#[derive(Debug, Clone)]
pub struct Venv {
    pub dir: PathBuf,
    /// The python that runs moto's server (see `substrate`).
    pub python: PathBuf,
    pub aws: PathBuf,
    pub moto_version: String,
    pub awscli_version: String,
}

/// The installed version of a distribution, read from its dist-info folder.
fn installed_version(venv: &Path, dist: &str) -> Option<String> {
    let lib = venv.join("lib");
    let prefix = format!("{}-", dist.replace('-', "_"));
    for py in fs::read_dir(lib).ok()?.flatten() {
        let site = py.path().join("site-packages");
        for e in fs::read_dir(site).ok()?.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(rest) = name.strip_prefix(&prefix) {
                if let Some(v) = rest.strip_suffix(".dist-info") {
                    return Some(v.to_owned());
                }
            }
        }
    }
    None
}

impl Venv {
    /// The virtualenv at `dir` with the pinned emulator and witness,
    /// installing them first if they are missing or at other versions. A
    /// lock file serialises concurrent installs.
    pub fn provision(clock: &Clock, dir: &Path, pins: &Pins) -> Result<Venv, MachineError> {
        let ready = |dir: &Path| {
            installed_version(dir, pins.emulator.dist()).as_deref() == Some(&pins.emulator.version)
                && installed_version(dir, pins.witness.dist()).as_deref()
                    == Some(&pins.witness.version)
                && is_executable(&dir.join("bin/moto_server"))
                && is_executable(&dir.join("bin/aws"))
        };
        if !ready(dir) {
            let parent = dir.parent().unwrap_or(Path::new("."));
            fs::create_dir_all(parent).map_err(io(parent))?;
            let lock_path = parent.join(".venv.lock");
            let lock = File::create(&lock_path).map_err(io(&lock_path))?;
            clock
                .wait(Category::Provisioning, "the virtualenv lock", || {
                    lock.lock()
                })
                .map_err(io(&lock_path))?;
            if !ready(dir) {
                Self::install(clock, dir, pins)?;
            }
        }
        Ok(Venv {
            dir: dir.to_owned(),
            python: dir.join("bin/python"),
            aws: dir.join("bin/aws"),
            moto_version: pins.emulator.version.clone(),
            awscli_version: pins.witness.version.clone(),
        })
    }

    fn install(clock: &Clock, dir: &Path, pins: &Pins) -> Result<(), MachineError> {
        if !dir.join("bin/pip").exists() {
            clock.say(&format!("creating the virtualenv {}", dir.display()));
            let python = which("python3").ok_or_else(|| MachineError::NoPython {
                detail: "no python3 on PATH".into(),
            })?;
            let mut cmd = Command::new(python);
            cmd.arg("-m").arg("venv").arg(dir);
            let out = process::run(clock, Category::Provisioning, "python3 -m venv", cmd)?;
            if !out.status.success() {
                return Err(MachineError::NoPython {
                    detail: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
                });
            }
        }
        let what = format!(
            "{} and {}",
            pins.emulator.requirement(),
            pins.witness.requirement()
        );
        clock.say(&format!("installing {what} (once per machine)"));
        let mut cmd = Command::new(dir.join("bin/pip"));
        cmd.args(["install", "--quiet", "--disable-pip-version-check"])
            .arg(pins.emulator.requirement())
            .arg(pins.witness.requirement());
        let out = process::run(clock, Category::Provisioning, "pip install", cmd)?;
        if !out.status.success() {
            return Err(MachineError::Install {
                what,
                venv: dir.to_owned(),
                output: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_reaches_the_users_module_registries_and_nothing_else_of_their_config() {
        let d = tempfile::tempdir().unwrap();
        let user = d.path().join("user.tfrc");
        fs::write(
            &user,
            "plugin_cache_dir = \"/var/cache/tf\"\nprovider_installation {\n  direct {}\n}\nhost \"registry.corp.example\" {\n  services = {\n    \"modules.v1\" = \"http://127.0.0.1:9/v1/modules/\"\n  }\n}\ncredentials \"registry.corp.example\" {\n  token = \"t0k3n\"\n}\n",
        )
        .unwrap();
        let mirror = ProviderMirror {
            dir: d.path().join("mirror"),
            package: d.path().join("mirror/p"),
        };
        let out = d.path().join("terraform.rc");
        write_cli_config(&out, &mirror, Some(&user)).unwrap();
        let text = fs::read_to_string(&out).unwrap();
        let body = hcl::parse(&text).unwrap();
        let kinds: Vec<&str> = body.blocks().map(|b| b.identifier()).collect();
        assert_eq!(
            kinds,
            ["provider_installation", "host", "credentials"],
            "{text}"
        );
        assert!(text.contains("http://127.0.0.1:9/v1/modules/") && text.contains("t0k3n"));
        assert!(!text.contains("plugin_cache_dir") && !text.contains("direct"));

        // No user config: the mirror alone. A config terraform could not
        // read: refused, naming it.
        write_cli_config(&out, &mirror, None).unwrap();
        let kinds = hcl::parse(&fs::read_to_string(&out).unwrap())
            .unwrap()
            .blocks()
            .count();
        assert_eq!(kinds, 1);
        fs::write(&user, "host \"x\" {\n").unwrap();
        let e = write_cli_config(&out, &mirror, Some(&user)).unwrap_err();
        assert!(e.to_string().contains("user.tfrc"), "{e}");
    }

    #[test]
    fn the_pins_file_parses() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../live/aws-lane.toml");
        let pins = Pins::load(&root).unwrap();
        assert_eq!(pins.emulator.dist(), "moto");
        assert_eq!(
            pins.emulator.requirement(),
            format!("moto[server]=={}", pins.emulator.version)
        );
    }

    #[test]
    fn a_missing_provider_lists_every_place_looked() {
        let dir = tempfile::tempdir().unwrap();
        let err = find_provider(dir.path(), "0.0.1", &[dir.path().to_owned()]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("0.0.1"), "{msg}");
        assert!(msg.contains(&dir.path().display().to_string()), "{msg}");
        assert!(msg.contains("GAUNTLET_PROVIDER_MIRROR"), "{msg}");
    }
}
