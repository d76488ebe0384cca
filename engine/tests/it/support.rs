//! What the integration tests share: where the real parts are, temporary
//! CLI configurations, and process inspection.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The filesystem mirror holding the aws provider
/// (`CHOUDOUFU_TEST_PLUGIN_MIRROR`, default `/opt/tf-plugins`).
pub fn plugin_mirror() -> PathBuf {
    let dir = std::env::var_os("CHOUDOUFU_TEST_PLUGIN_MIRROR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/tf-plugins"));
    assert!(
        dir.join("registry.terraform.io/hashicorp/aws/5.100.0")
            .is_dir(),
        "the aws provider 5.100.0 is not in the mirror {}; set CHOUDOUFU_TEST_PLUGIN_MIRROR",
        dir.display()
    );
    dir
}

/// Stock terraform (`TERRAFORM`, default `terraform` on PATH).
pub fn terraform() -> PathBuf {
    std::env::var_os("TERRAFORM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("terraform"))
}

/// Writes a CLI configuration that installs providers from `mirror` only,
/// and returns its path.
pub fn cli_config(dir: &Path, mirror: &Path) -> PathBuf {
    let path = dir.join("cli.tfrc");
    fs::write(
        &path,
        format!(
            "provider_installation {{\n  filesystem_mirror {{\n    path = \"{}\"\n  }}\n}}\n",
            mirror.display()
        ),
    )
    .unwrap();
    path
}

/// A root module requiring exactly the aws provider 5.100.0.
pub fn aws_root(dir: &Path) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    fs::write(
        dir.join("main.tf"),
        "terraform {\n  required_providers {\n    aws = {\n      source  = \"hashicorp/aws\"\n      version = \"5.100.0\"\n    }\n  }\n}\n",
    )
    .unwrap();
    dir.into()
}

/// The aws provider binary in the mirror.
pub fn aws_binary() -> PathBuf {
    plugin_mirror().join(
        "registry.terraform.io/hashicorp/aws/5.100.0/linux_amd64/terraform-provider-aws_v5.100.0_x5",
    )
}

/// Whether a process is still running (gone or a zombie counts as not).
pub fn alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
            !matches!(state.and_then(|s| s.chars().next()), Some('Z') | Some('X'))
        }
        Err(_) => false,
    }
}

/// Waits until no process in `pids` runs, or panics after `limit`.
pub fn wait_gone(pids: &[u32], limit: Duration) {
    let start = Instant::now();
    while pids.iter().any(|p| alive(*p)) {
        assert!(
            start.elapsed() < limit,
            "processes {:?} still running after {limit:?}",
            pids.iter().filter(|p| alive(**p)).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The running children of a process.
pub fn children(parent: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(parent) && alive(pid) {
            out.push(pid);
        }
    }
    out
}
