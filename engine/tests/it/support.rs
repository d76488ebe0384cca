//! What the integration tests share: where the real parts are, temporary
//! CLI configurations, and process inspection.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The filesystem mirror holding the aws provider at its pin:
/// `CHOUDOUFU_TEST_PLUGIN_MIRROR`, else the first of the pinned
/// `provider_mirrors` in `live/aws-lane.toml` that holds it.
pub fn plugin_mirror() -> PathBuf {
    let pins_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../live/aws-lane.toml");
    let pins: toml::Table = toml::from_str(&fs::read_to_string(&pins_path).unwrap()).unwrap();
    let oracle = &pins["oracle"];
    let version = oracle["aws_provider"].as_str().unwrap();
    assert_eq!(
        version, "5.100.0",
        "the tests expect the aws provider 5.100.0"
    );
    let candidates: Vec<PathBuf> = match std::env::var_os("CHOUDOUFU_TEST_PLUGIN_MIRROR") {
        Some(dir) => vec![dir.into()],
        None => oracle["provider_mirrors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| PathBuf::from(m.as_str().unwrap()))
            .collect(),
    };
    candidates
        .iter()
        .find(|dir| dir.join("registry.terraform.io/hashicorp/aws").join(version).is_dir())
        .unwrap_or_else(|| {
            panic!("the aws provider {version} is in none of {candidates:?}; set CHOUDOUFU_TEST_PLUGIN_MIRROR")
        })
        .clone()
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

/// A `provider "aws"` block pointing every service the tests use at the
/// emulator at `endpoint`, with fake credentials.
pub fn aws_provider(endpoint: &str) -> String {
    let services = [
        "acm",
        "dynamodb",
        "ec2",
        "iam",
        "kms",
        "lambda",
        "logs",
        "resourcegroupstaggingapi",
        "s3",
        "sns",
        "sqs",
        "ssm",
        "sts",
    ];
    let endpoints: String = services
        .iter()
        .map(|s| format!("    {s:<24} = \"{endpoint}\"\n"))
        .collect();
    format!(
        "provider \"aws\" {{\n  region                      = \"us-east-1\"\n  access_key                  = \"test\"\n  secret_key                  = \"test\"\n  skip_credentials_validation = true\n  skip_metadata_api_check     = true\n  skip_requesting_account_id  = true\n  s3_use_path_style           = true\n  endpoints {{\n{endpoints}  }}\n}}\n"
    )
}

/// Writes a `live.hcl` naming `estate`.
pub fn write_live(dir: &Path, estate: &str) {
    fs::write(
        dir.join("live.hcl"),
        format!("live {{\n  estate = \"{estate}\"\n}}\n"),
    )
    .unwrap();
}

/// A root's working directory, with its own home, schema cache and CLI
/// configuration (the provider mirror), for the engine and terraform alike.
pub struct Workdir {
    pub dir: tempfile::TempDir,
    pub home: tempfile::TempDir,
    pub tfrc: PathBuf,
}

impl Workdir {
    pub fn new() -> Workdir {
        let home = tempfile::tempdir().unwrap();
        let tfrc = cli_config(home.path(), &plugin_mirror());
        Workdir {
            dir: tempfile::tempdir().unwrap(),
            home,
            tfrc,
        }
    }

    /// `program` in the directory, with the directory's environment.
    pub fn command(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        c.current_dir(self.dir.path())
            .env("TF_CLI_CONFIG_FILE", &self.tfrc)
            .env("CHOUDOUFU_CACHE_DIR", self.home.path().join("cache"))
            .env("TF_IN_AUTOMATION", "1")
            .env("HOME", self.home.path());
        c
    }

    /// Runs `program` with `args` to completion.
    pub fn run(&self, program: &Path, args: &[&str]) -> Output {
        self.command(program).args(args).output().unwrap()
    }

    /// Runs the engine with `args` and `-no-color`.
    pub fn engine(&self, args: &[&str]) -> Output {
        let mut all = args.to_vec();
        all.push("-no-color");
        self.run(Path::new(env!("CARGO_BIN_EXE_choudoufu")), &all)
    }

    /// `choudoufu init`, as a user runs it once the root names its
    /// providers; panics with its output unless it succeeds.
    pub fn init(&self) {
        let out = self.engine(&["init", "-input=false"]);
        assert!(out.status.success(), "choudoufu init: {}", text(&out));
    }

    /// `apply` at `-parallelism=1`, the engine sending itself SIGTERM the
    /// instant the change of `addr` commits.
    pub fn apply_killed_after(&self, addr: &str) -> Output {
        self.command(Path::new(env!("CARGO_BIN_EXE_choudoufu")))
            .args(["apply", "-auto-approve", "-no-color", "-parallelism=1"])
            .env("CHOUDOUFU_TEST_SIGTERM_AFTER", addr)
            .output()
            .unwrap()
    }
}

/// Everything a command printed, stdout then stderr.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Text with every run of whitespace made one space, so sentences the
/// diagnostics wrap can be matched.
pub fn flat(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
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

/// The virtualenv holding moto and the AWS CLI (`CHOUDOUFU_TEST_VENV`,
/// default the workspace's `.venv`, where the gauntlet provisions them).
pub fn venv_bin(name: &str) -> PathBuf {
    let venv = std::env::var_os("CHOUDOUFU_TEST_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv"));
    let path = venv.join("bin").join(name);
    assert!(
        path.is_file(),
        "{} is missing; provision the virtualenv (cargo run -p gauntlet -- provision) or set CHOUDOUFU_TEST_VENV",
        path.display()
    );
    path
}

/// A moto server on a free loopback port, stopped (with its whole process
/// group) when dropped.
pub struct Moto {
    child: std::process::Child,
    pub endpoint: String,
    home: tempfile::TempDir,
}

impl Moto {
    pub fn start() -> Moto {
        use std::os::unix::process::CommandExt;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // The gauntlet's launcher: moto's server answering one request at a
        // time, as its backends need under concurrent requests.
        let server = include_str!("../../../gauntlet/src/moto_server.py");
        let child = std::process::Command::new(venv_bin("python"))
            .args(["-c", server, "-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let moto = Moto {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
            home: tempfile::tempdir().unwrap(),
        };
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "moto did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        moto
    }

    /// Runs the AWS CLI against this server with fake credentials and a
    /// clean environment, and returns its JSON output.
    pub fn aws(&self, args: &[&str]) -> serde_json::Value {
        let out = std::process::Command::new(venv_bin("aws"))
            .args(args)
            .args(["--endpoint-url", &self.endpoint, "--output", "json"])
            .env_clear()
            .env("HOME", self.home.path())
            .env("AWS_ACCESS_KEY_ID", "test")
            .env("AWS_SECRET_ACCESS_KEY", "test")
            .env("AWS_DEFAULT_REGION", "us-east-1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "aws {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if out.stdout.iter().all(u8::is_ascii_whitespace) {
            serde_json::Value::Null
        } else {
            serde_json::from_slice(&out.stdout).unwrap()
        }
    }
}

/// The parameter holding the record of `address` (or `root.outputs`) in
/// the live record store of `estate`.
pub fn record_parameter(estate: &str, address: &str) -> String {
    let name = match address {
        "root.outputs" => address.to_string(),
        _ => engine::record::ssm::key(address),
    };
    format!("{}/{name}", engine::record::ssm::path(estate))
}

impl Moto {
    /// The value of an SSM parameter, if it exists.
    pub fn parameter(&self, name: &str) -> Option<String> {
        let found = self.aws(&["ssm", "get-parameters", "--names", name]);
        found["Parameters"][0]["Value"].as_str().map(str::to_owned)
    }

    /// Writes an SSM parameter of type String, over any old value.
    pub fn put_parameter(&self, name: &str, value: &str) {
        self.aws(&[
            "ssm",
            "put-parameter",
            "--name",
            name,
            "--type",
            "String",
            "--overwrite",
            "--value",
            value,
        ]);
    }

    pub fn delete_parameter(&self, name: &str) {
        self.aws(&["ssm", "delete-parameter", "--name", name]);
    }

    /// The record of `address` in the live record store of `estate`, as
    /// JSON, read with the AWS CLI (its parts joined).
    pub fn record(&self, estate: &str, address: &str) -> Option<serde_json::Value> {
        let under = format!("{}/", engine::record::ssm::path(estate));
        let params = self
            .record_parameters(estate)
            .into_iter()
            .filter_map(|(n, v)| Some((n.strip_prefix(&under)?.to_string(), v)))
            .collect();
        let found = engine::record::ssm::Snapshot::decode(&params)
            .records()
            .into_iter()
            .find(|r| r.address == address)?;
        Some(serde_json::to_value(found).unwrap())
    }

    /// Every parameter of the live record store of `estate`, full name to
    /// value, in one paged read.
    pub fn record_parameters(&self, estate: &str) -> BTreeMap<String, String> {
        let found = self.aws(&[
            "ssm",
            "get-parameters-by-path",
            "--path",
            &engine::record::ssm::path(estate),
            "--recursive",
        ]);
        found["Parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| {
                Some((
                    p["Name"].as_str()?.to_owned(),
                    p["Value"].as_str()?.to_owned(),
                ))
            })
            .collect()
    }

    /// Deletes the whole live record store of `estate`.
    pub fn lose_records(&self, estate: &str) {
        for name in self.record_parameters(estate).into_keys() {
            self.delete_parameter(&name);
        }
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        use nix::sys::signal::{killpg, Signal};
        let group = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = killpg(group, Signal::SIGTERM);
        let start = Instant::now();
        while matches!(self.child.try_wait(), Ok(None)) {
            if start.elapsed() > Duration::from_secs(5) {
                let _ = killpg(group, Signal::SIGKILL);
                let _ = self.child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
