//! The aws lane's substrate: one moto server per twin.
//!
//! Each [`Twin`] is a moto process on its own loopback port with its own
//! in-memory data, owned by a [`Guard`] so it is stopped however the run
//! ends. moto's server runs through `moto_server.py`, which answers one
//! request at a time: moto's backends are not safe under concurrent
//! requests, and the provider and the witness make them. The twin also writes the provider override that points the aws
//! provider at it: endpoints for every service the estate uses, fake
//! credentials and the skip flags.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::clock::{Category, Clock};
use crate::process::{self, Guard};

/// moto's server, serializing its requests; run by the virtualenv's python.
pub const MOTO_SERVER: &str = include_str!("moto_server.py");

/// How long moto gets to answer its first request.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// Which side of the comparison a twin is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The twin the engine drives (stock terraform stands in until it can).
    Estate,
    /// The twin stock terraform drives as the oracle.
    Oracle,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::Estate => "estate",
            Side::Oracle => "oracle",
        }
    }
}

/// Run `f` for both sides at once and return (estate's, oracle's).
pub fn both_sides<T: Send>(f: impl Fn(Side) -> T + Sync) -> (T, T) {
    thread::scope(|s| {
        let h = s.spawn(|| f(Side::Estate));
        let o = f(Side::Oracle);
        (h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)), o)
    })
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} twin", self.name())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SubstrateError {
    #[error("port {port} on 127.0.0.1 is already in use; pass other ports with --ports, or leave --ports out to have free ones chosen")]
    PortTaken { port: u16 },
    #[error("no free loopback port could be found: {0}")]
    NoPort(std::io::Error),
    #[error("moto for the {side} exited before it answered ({status}); its log {log}:\n{tail}")]
    Exited {
        side: Side,
        status: String,
        log: PathBuf,
        tail: String,
    },
    #[error(
        "moto for the {side} did not answer on 127.0.0.1:{port} within {secs}s; its log is {log}"
    )]
    NotReady {
        side: Side,
        port: u16,
        secs: u64,
        log: PathBuf,
    },
    #[error(transparent)]
    Process(#[from] process::ProcessError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Ports for the two twins: chosen free, or given and checked.
pub fn choose_ports(given: Option<(u16, u16)>) -> Result<(u16, u16), SubstrateError> {
    match given {
        Some((a, b)) => {
            for port in [a, b] {
                TcpListener::bind((Ipv4Addr::LOCALHOST, port))
                    .map_err(|_| SubstrateError::PortTaken { port })?;
            }
            Ok((a, b))
        }
        None => {
            // Hold both listeners at once so the two ports differ.
            let a = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(SubstrateError::NoPort)?;
            let b = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(SubstrateError::NoPort)?;
            let port = |l: &TcpListener| l.local_addr().map(|a| a.port());
            Ok((
                port(&a).map_err(SubstrateError::NoPort)?,
                port(&b).map_err(SubstrateError::NoPort)?,
            ))
        }
    }
}

/// One running moto server.
pub struct Twin {
    pub side: Side,
    pub port: u16,
    /// moto's output, one line per request it served.
    pub log: PathBuf,
    guard: Guard,
}

impl Twin {
    /// Start moto on `port` and wait until it answers.
    pub fn start(
        clock: &Clock,
        python: &Path,
        side: Side,
        port: u16,
        work: &Path,
    ) -> Result<Twin, SubstrateError> {
        let log = work.join(format!("moto-{}.log", side.name()));
        let file = File::create(&log).map_err(|source| SubstrateError::Io {
            path: log.clone(),
            source,
        })?;
        let err_file = file.try_clone().map_err(|source| SubstrateError::Io {
            path: log.clone(),
            source,
        })?;
        let mut cmd = Command::new(python);
        cmd.args([
            "-c",
            MOTO_SERVER,
            "-H",
            "127.0.0.1",
            "-p",
            &port.to_string(),
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", work)
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err_file);
        let label = format!("moto on the {side}");
        let mut guard = Guard::spawn(cmd, &label)?;
        clock.say(&format!(
            "started moto_server (pid {}) for the {side} on 127.0.0.1:{port}",
            guard.pid()
        ));
        let deadline = Instant::now() + READY_TIMEOUT;
        clock.wait(
            Category::Emulator,
            &format!("moto on the {side} to answer"),
            || loop {
                if let Some(status) = guard.try_wait() {
                    return Err(SubstrateError::Exited {
                        side,
                        status: status.to_string(),
                        tail: tail(&log),
                        log: log.clone(),
                    });
                }
                if process::interrupted() {
                    return Err(process::ProcessError::Interrupted {
                        label: label.clone(),
                    }
                    .into());
                }
                if answers(port) {
                    return Ok(());
                }
                if Instant::now() > deadline {
                    return Err(SubstrateError::NotReady {
                        side,
                        port,
                        secs: READY_TIMEOUT.as_secs(),
                        log: log.clone(),
                    });
                }
                thread::sleep(Duration::from_millis(50));
            },
        )?;
        Ok(Twin {
            side,
            port,
            log,
            guard,
        })
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn pid(&self) -> u32 {
        self.guard.pid()
    }
}

/// Whether an HTTP server on the port answers a request.
fn answers(port: u16) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /moto-api/ HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut head = [0u8; 12];
    s.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.") && &head[9..12] == b"200"
}

/// How many requests a moto log records as served: lines such as
/// `127.0.0.1 - - [date] "POST / HTTP/1.1" 200 -`.
pub fn requests_served(log: &Path) -> std::io::Result<u64> {
    let served = |line: &str| {
        line.match_indices("\" ").any(|(i, _)| {
            let rest = &line.as_bytes()[i + 2..];
            rest.len() >= 4 && rest[..3].iter().all(u8::is_ascii_digit) && rest[3] == b' '
        })
    };
    let text = fs::read_to_string(log)?;
    Ok(text.lines().filter(|l| served(l)).count() as u64)
}

fn tail(log: &Path) -> String {
    let text = fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

/// The provider settings a twin's root needs beside its own `provider
/// "aws"` block: fake credentials, no calls to the instance metadata or
/// STS, path-style S3. The endpoint itself comes from `AWS_ENDPOINT_URL`
/// in terraform's and the engine's environment (see [`ENDPOINT_VAR`]), so
/// every service the provider knows reaches the twin's emulator.
pub const PROVIDER_SETTINGS: &str = "  access_key                  = \"test\"
  secret_key                  = \"test\"
  skip_credentials_validation = true
  skip_metadata_api_check     = true
  skip_requesting_account_id  = true
  s3_use_path_style           = true
";

/// The environment variable the aws provider reads its default endpoint
/// from, for every service.
pub const ENDPOINT_VAR: &str = "AWS_ENDPOINT_URL";

/// The gauntlet's `provider "aws"` settings: an override file for the
/// root's own block (terraform merges it in, so the root stays as
/// written), or the block itself for a root that declares none. `region`
/// when the root names none the gauntlet can read.
pub fn provider_override(region: Option<&str>) -> String {
    let region = region
        .map(|r| format!("  region                      = \"{r}\"\n"))
        .unwrap_or_default();
    format!(
        "# Written by the gauntlet: the aws provider's settings for an emulator, whose\n\
# endpoint AWS_ENDPOINT_URL names.\n\
provider \"aws\" {{\n{region}{PROVIDER_SETTINGS}}}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_override_is_hcl_with_the_emulator_settings() {
        let o = provider_override(Some("eu-west-1"));
        assert!(o.contains("region                      = \"eu-west-1\""));
        assert!(o.contains("skip_requesting_account_id  = true"));
        assert!(o.contains("s3_use_path_style           = true"));
        hcl::parse(&o).unwrap();
    }

    #[test]
    fn only_served_requests_count() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("moto.log");
        fs::write(
            &log,
            " * Running on http://127.0.0.1:5000\n\
             127.0.0.1 - - [04/Dec/2026 13:09:40] \"POST / HTTP/1.1\" 200 -\n\
             127.0.0.1 - - [04/Dec/2026 13:09:41] \"GET /b?tagging HTTP/1.1\" 404 -\n\
             Traceback (most recent call last):\n",
        )
        .unwrap();
        assert_eq!(requests_served(&log).unwrap(), 2);
        assert!(requests_served(&d.path().join("none.log")).is_err());
    }

    #[test]
    fn a_taken_port_is_refused_and_free_ones_differ() {
        let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let taken = l.local_addr().unwrap().port();
        let e = choose_ports(Some((taken, 1))).unwrap_err();
        assert!(e.to_string().contains(&format!("port {taken}")), "{e}");
        let (a, b) = choose_ports(None).unwrap();
        assert_ne!(a, b);
    }
}
