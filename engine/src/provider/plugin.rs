//! Starting a plugin binary and holding its process and gRPC channel.
//!
//! [`Plugin::launch`] does what go-plugin's host does for terraform: it sets
//! the magic cookie and the offered protocol versions, asks for AutoMTLS
//! with a fresh client certificate (plaintext only when
//! `TF_DISABLE_PLUGIN_TLS` is set, as in terraform), reads and checks the
//! handshake line, and opens a gRPC channel over the plugin's unix socket.
//! The plugin's stderr, its later stdout, and the go-plugin stdio stream are
//! drained into the log (target `provider`, level debug).
//!
//! Nothing is left behind:
//! - The socket lives in a private directory (`PLUGIN_UNIX_SOCKET_DIR`),
//!   removed as soon as the channel is connected; the connection stays open
//!   and the plugin never needs the path again. An engine killed before it
//!   connected leaves its directory; the next launch removes it, knowing it
//!   by the dead engine's pid in its name.
//! - The child runs in its own process group, with a parent-death signal
//!   (SIGKILL) armed before exec, so it dies with the engine even if the
//!   engine is killed outright. Linux delivers that signal when the *thread*
//!   that spawned the child exits, so a plugin must be launched from a thread
//!   that outlives it: a tokio runtime's worker or the thread running
//!   `block_on`, never a `spawn_blocking` thread.
//! - [`Plugin::shutdown`] asks the controller to stop, waits briefly, then
//!   kills the group; dropping a [`Plugin`] does the same in the background,
//!   or kills the group at once when no runtime is running.
//!
//! This module knows nothing of terraform's provider protocol beyond the
//! handshake; the provider RPCs are in [`super::grpc`].

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyper_util::rt::TokioIo;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::net::UnixStream;
use tokio::process::{Child, Command};
use tonic::transport::{Channel, Endpoint, Uri};

use super::handshake::{self, Handshake, HandshakeError, OFFERED_PROTOCOLS};
use super::tls::{ClientIdentity, TlsError};

mod pb {
    tonic::include_proto!("plugin");
}

/// The cookie terraform's plugins expect, as go-plugin's `MagicCookieKey`
/// and `MagicCookieValue`; without it a plugin refuses to start.
const MAGIC_COOKIE_KEY: &str = "TF_PLUGIN_MAGIC_COOKIE";
const MAGIC_COOKIE_VALUE: &str = "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";

/// How long a plugin gets to exit after the controller's Shutdown before
/// it is killed; go-plugin's host waits two seconds too.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Socket directories are named `choudoufu-plugin-<engine pid>-<random>`.
const SOCKET_DIR_PREFIX: &str = "choudoufu-plugin-";

/// How many of the plugin's last stderr lines an error quotes.
const STDERR_TAIL: usize = 20;

/// The largest gRPC message the engine accepts from a plugin. The aws
/// provider's schema alone is 4.9 MB; go-plugin's host allows `MaxInt32`.
pub const MAX_MESSAGE_SIZE: usize = i32::MAX as usize;

/// How a plugin is started.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// Run AutoMTLS (the default) or plaintext gRPC.
    pub tls: bool,
    /// How long to wait for the handshake line.
    pub handshake_timeout: Duration,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        LaunchOptions {
            tls: true,
            handshake_timeout: Duration::from_secs(60),
        }
    }
}

impl LaunchOptions {
    /// Defaults, with plaintext when `TF_DISABLE_PLUGIN_TLS` is set to
    /// anything non-empty, as terraform reads it.
    pub fn from_env() -> Self {
        let disabled = std::env::var_os("TF_DISABLE_PLUGIN_TLS").is_some_and(|v| !v.is_empty());
        LaunchOptions {
            tls: !disabled,
            ..LaunchOptions::default()
        }
    }
}

/// Why a plugin could not be started. Every variant names the binary.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    #[error("plugin {}: no such file", binary.display())]
    Missing { binary: PathBuf },
    #[error("plugin {}: not an executable file", binary.display())]
    NotExecutable { binary: PathBuf },
    #[error("plugin {}: could not start it: {source}", binary.display())]
    Spawn { binary: PathBuf, source: io::Error },
    #[error("plugin {}: could not prepare its socket directory: {source}", binary.display())]
    SocketDir { binary: PathBuf, source: io::Error },
    #[error("plugin {}: {source}", binary.display())]
    Tls { binary: PathBuf, source: TlsError },
    #[error("plugin {}: exited during the handshake ({status}){}", binary.display(), quote(stderr))]
    Exited {
        binary: PathBuf,
        status: String,
        stderr: Vec<String>,
    },
    #[error("plugin {}: printed no handshake line within {}s{}", binary.display(), timeout.as_secs(), quote(stderr))]
    Timeout {
        binary: PathBuf,
        timeout: Duration,
        stderr: Vec<String>,
    },
    #[error("plugin {}: {source}{}", binary.display(), quote(stderr))]
    Handshake {
        binary: PathBuf,
        source: HandshakeError,
        stderr: Vec<String>,
    },
    #[error("plugin {}: could not connect to its socket {}: {reason}", binary.display(), socket.display())]
    Connect {
        binary: PathBuf,
        socket: PathBuf,
        reason: String,
    },
}

fn quote(stderr: &[String]) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; its stderr ended with:\n  {}", stderr.join("\n  "))
    }
}

/// A running plugin: its process group and the gRPC channel to it.
pub struct Plugin {
    binary: PathBuf,
    protocol: u32,
    channel: Channel,
    child: Option<Child>,
    group: Pid,
}

impl Plugin {
    /// Starts `binary` and completes the handshake. On any failure the
    /// process group is killed and reaped before the error is returned.
    pub async fn launch(binary: &Path, options: &LaunchOptions) -> Result<Plugin, LaunchError> {
        let started = Instant::now();
        check_executable(binary)?;
        sweep_stale_socket_dirs(&std::env::temp_dir());
        let socket_dir = tempfile::Builder::new()
            .prefix(&format!("{SOCKET_DIR_PREFIX}{}-", std::process::id()))
            .tempdir()
            .map_err(|source| LaunchError::SocketDir {
                binary: binary.into(),
                source,
            })?;
        let identity = if options.tls {
            Some(
                ClientIdentity::generate().map_err(|source| LaunchError::Tls {
                    binary: binary.into(),
                    source,
                })?,
            )
        } else {
            None
        };

        let mut command = Command::new(binary);
        command
            .env(MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE)
            .env("PLUGIN_PROTOCOL_VERSIONS", offered_protocols())
            .env("PLUGIN_UNIX_SOCKET_DIR", socket_dir.path())
            .env_remove("PLUGIN_MULTIPLEX_GRPC")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        match &identity {
            Some(identity) => command.env("PLUGIN_CLIENT_CERT", identity.pem()),
            None => command.env_remove("PLUGIN_CLIENT_CERT"),
        };
        die_with_parent(&mut command);
        let mut child = command.spawn().map_err(|source| LaunchError::Spawn {
            binary: binary.into(),
            source,
        })?;
        let group = Pid::from_raw(child.id().expect("a child just spawned has a pid") as i32);
        let name = display_name(binary);
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(drain(stderr, name.clone(), Some(stderr_tail.clone())));
        }
        let stdout = child.stdout.take().expect("stdout is piped");

        match handshake_and_connect(binary, stdout, &mut child, identity, options, &stderr_tail)
            .await
        {
            Ok((handshake, channel)) => {
                // Connected: the socket path is no longer needed, and with
                // it gone a killed plugin leaves nothing on disk.
                drop(socket_dir);
                tokio::spawn(drain_stdio(channel.clone(), name.clone()));
                tracing::debug!(
                    plugin = %name,
                    protocol = handshake.protocol,
                    tls = handshake.server_cert.is_some(),
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "connected to plugin"
                );
                Ok(Plugin {
                    binary: binary.into(),
                    protocol: handshake.protocol,
                    channel,
                    child: Some(child),
                    group,
                })
            }
            Err(err) => {
                kill_group(&mut child, group).await;
                Err(err)
            }
        }
    }

    /// The binary this plugin runs.
    pub fn binary(&self) -> &Path {
        &self.binary
    }

    /// The plugin protocol the plugin chose in the handshake (5 or 6).
    pub fn protocol(&self) -> u32 {
        self.protocol
    }

    /// The gRPC channel to the plugin. Clients built on it should raise
    /// their decode limit to [`MAX_MESSAGE_SIZE`].
    pub fn channel(&self) -> Channel {
        self.channel.clone()
    }

    /// The plugin's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// Stops the plugin: the controller's Shutdown, a short wait, then a
    /// kill of its process group. Returns once the process is reaped.
    pub async fn shutdown(mut self) {
        if let Some(child) = self.child.take() {
            stop(self.channel.clone(), child, self.group).await;
        }
    }
}

impl Drop for Plugin {
    fn drop(&mut self) {
        let Some(child) = self.child.take() else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            // If the runtime ends before this task does, dropping the child
            // kills it (kill_on_drop).
            Ok(runtime) => {
                runtime.spawn(stop(self.channel.clone(), child, self.group));
            }
            Err(_) => {
                let _ = killpg(self.group, Signal::SIGKILL);
            }
        }
    }
}

async fn stop(channel: Channel, mut child: Child, group: Pid) {
    let started = Instant::now();
    let mut controller = pb::grpc_controller_client::GrpcControllerClient::new(channel);
    // The plugin stops serving before it answers, so this usually fails
    // with UNAVAILABLE; what counts is that the process exits.
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, controller.shutdown(pb::Empty {})).await;
    let answered_ms = started.elapsed().as_millis() as u64;
    match tokio::time::timeout(SHUTDOWN_GRACE, child.wait()).await {
        Ok(Ok(status)) => tracing::debug!(
            %status,
            answered_ms,
            exited_ms = started.elapsed().as_millis() as u64,
            "plugin exited"
        ),
        _ => kill_group(&mut child, group).await,
    }
}

/// Kills the child's whole process group and reaps the child.
async fn kill_group(child: &mut Child, group: Pid) {
    // The child leads its own group (process_group(0)). Its pid names the
    // group even after the child is reaped, and cannot be reused while any
    // member (a child it left behind) still runs.
    let _ = killpg(group, Signal::SIGKILL);
    let _ = child.wait().await;
}

async fn handshake_and_connect(
    binary: &Path,
    stdout: impl AsyncRead + Unpin + Send + 'static,
    child: &mut Child,
    identity: Option<ClientIdentity>,
    options: &LaunchOptions,
    stderr_tail: &Arc<Mutex<VecDeque<String>>>,
) -> Result<(Handshake, Channel), LaunchError> {
    let mut stdout = BufReader::new(stdout);
    let mut line = String::new();
    let tail = |tail: &Arc<Mutex<VecDeque<String>>>| -> Vec<String> {
        tail.lock()
            .expect("stderr tail lock")
            .iter()
            .cloned()
            .collect()
    };
    // The line, the plugin's exit (its children may hold stdout open after
    // it died), or the timeout, whichever comes first.
    let exited = |status: String| LaunchError::Exited {
        binary: binary.into(),
        status,
        stderr: Vec::new(),
    };
    let outcome = tokio::select! {
        read = stdout.read_line(&mut line) => match read {
            Ok(n) if n > 0 => Ok(()),
            _ => Err(exited(exit_status(child).await)),
        },
        status = child.wait() => Err(exited(match status {
            Ok(status) => describe(status),
            Err(e) => e.to_string(),
        })),
        _ = tokio::time::sleep(options.handshake_timeout) => Err(LaunchError::Timeout {
            binary: binary.into(),
            timeout: options.handshake_timeout,
            stderr: Vec::new(),
        }),
    };
    if let Err(mut err) = outcome {
        // Give the stderr drain a moment to take the last lines.
        tokio::time::sleep(Duration::from_millis(50)).await;
        if let LaunchError::Exited { stderr, .. } | LaunchError::Timeout { stderr, .. } = &mut err {
            *stderr = tail(stderr_tail);
        }
        return Err(err);
    }
    let handshake = handshake::parse(&line).map_err(|source| LaunchError::Handshake {
        binary: binary.into(),
        source,
        stderr: tail(stderr_tail),
    })?;
    tokio::spawn(drain(stdout, display_name(binary), None));

    let connect_error = |reason: String| LaunchError::Connect {
        binary: binary.into(),
        socket: handshake.socket.clone(),
        reason,
    };
    let tls =
        match (&identity, &handshake.server_cert) {
            (Some(identity), Some(cert)) => Some(identity.client_config(cert).map_err(
                |source| LaunchError::Tls {
                    binary: binary.into(),
                    source,
                },
            )?),
            (Some(_), None) => {
                // A plugin built without AutoMTLS support; go-plugin's
                // host carries on in plaintext too.
                tracing::debug!("plugin sent no certificate; using plaintext");
                None
            }
            (None, _) => None,
        };
    let channel = connect(&handshake.socket, tls)
        .await
        .map_err(|e| connect_error(error_chain(&*e)))?;
    Ok((handshake, channel))
}

/// Opens an HTTP/2 channel over the unix socket, through TLS when given a
/// client configuration.
async fn connect(
    socket: &Path,
    tls: Option<rustls::ClientConfig>,
) -> Result<Channel, Box<dyn std::error::Error + Send + Sync>> {
    // The URI only names the HTTP/2 authority; the connector ignores it.
    let endpoint =
        Endpoint::from_static("http://localhost").connect_timeout(Duration::from_secs(10));
    let socket = socket.to_path_buf();
    let channel = match tls {
        None => endpoint
            .connect_with_connector(tower::service_fn(move |_: Uri| {
                let socket = socket.clone();
                async move { Ok::<_, io::Error>(TokioIo::new(UnixStream::connect(socket).await?)) }
            }))
            .await?,
        Some(config) => {
            let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
            endpoint
                .connect_with_connector(tower::service_fn(move |_: Uri| {
                    let socket = socket.clone();
                    let connector = connector.clone();
                    async move {
                        let stream = UnixStream::connect(socket).await?;
                        let name = rustls::pki_types::ServerName::try_from("localhost")
                            .expect("localhost is a valid server name");
                        let stream = connector.connect(name, stream).await?;
                        if stream.get_ref().1.alpn_protocol() != Some(b"h2") {
                            return Err(io::Error::other(
                                "the plugin did not agree to HTTP/2 (ALPN h2)",
                            ));
                        }
                        Ok::<_, io::Error>(TokioIo::new(stream))
                    }
                }))
                .await?
        }
    };
    Ok(channel)
}

/// Logs one line a plugin wrote. Providers write hclog JSON lines
/// (`{"@level":"trace","@message":...}`) at every level and leave filtering
/// to the host, as terraform filters them by `TF_LOG`; the line is logged at
/// its own level (plain text at debug), so `CHOUDOUFU_LOG` filters it.
fn log_plugin_line(name: &str, line: &str) {
    let level = serde_json::from_str::<serde_json::Value>(line)
        .ok()
        .and_then(|v| v.get("@level")?.as_str().map(str::to_owned));
    match level.as_deref() {
        Some("trace") => tracing::trace!(target: "provider", plugin = %name, "{line}"),
        Some("info") => tracing::info!(target: "provider", plugin = %name, "{line}"),
        Some("warn") => tracing::warn!(target: "provider", plugin = %name, "{line}"),
        Some("error") => tracing::error!(target: "provider", plugin = %name, "{line}"),
        _ => tracing::debug!(target: "provider", plugin = %name, "{line}"),
    }
}

/// Reads the go-plugin stdio stream (what the plugin writes to its stdout
/// and stderr after the handshake) into the log. go-plugin feeds it through
/// unbuffered channels, so it must be read for the plugin not to block.
async fn drain_stdio(channel: Channel, name: String) {
    let mut client = pb::grpc_stdio_client::GrpcStdioClient::new(channel);
    let Ok(response) = client.stream_stdio(()).await else {
        return;
    };
    let mut stream = response.into_inner();
    while let Ok(Some(chunk)) = stream.message().await {
        for line in String::from_utf8_lossy(&chunk.data).lines() {
            log_plugin_line(&name, line);
        }
    }
}

/// Logs every line of a pipe until it closes, keeping the last few lines in
/// `tail` when given one.
async fn drain(
    pipe: impl AsyncRead + Unpin,
    name: String,
    tail: Option<Arc<Mutex<VecDeque<String>>>>,
) {
    let mut lines = BufReader::new(pipe).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        log_plugin_line(&name, &line);
        if let Some(tail) = &tail {
            let mut tail = tail.lock().expect("stderr tail lock");
            if tail.len() == STDERR_TAIL {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    }
}

async fn exit_status(child: &mut Child) -> String {
    match tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
        Ok(Ok(status)) => describe(status),
        _ => "closed its stdout".into(),
    }
}

fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => status.to_string(),
    }
}

fn check_executable(binary: &Path) -> Result<(), LaunchError> {
    match std::fs::metadata(binary) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(LaunchError::Missing {
            binary: binary.into(),
        }),
        Err(source) => Err(LaunchError::Spawn {
            binary: binary.into(),
            source,
        }),
        Ok(meta) if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 => {
            Err(LaunchError::NotExecutable {
                binary: binary.into(),
            })
        }
        Ok(_) => Ok(()),
    }
}

fn offered_protocols() -> String {
    OFFERED_PROTOCOLS.map(|v| v.to_string()).join(",")
}

fn display_name(binary: &Path) -> String {
    binary
        .file_name()
        .unwrap_or(OsStr::new("plugin"))
        .to_string_lossy()
        .into_owned()
}

/// Renders an error and its sources on one line.
pub(crate) fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Removes socket directories left by engines that died between starting
/// a plugin and connecting to it (the only window in which one can be
/// left), recognised by the pid in their name no longer running.
fn sweep_stale_socket_dirs(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(SOCKET_DIR_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let dead = matches!(
            nix::sys::signal::kill(Pid::from_raw(pid), None),
            Err(nix::errno::Errno::ESRCH)
        );
        if dead {
            tracing::debug!(
                "removing stale plugin socket directory {}",
                entry.path().display()
            );
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Arms SIGKILL as the child's parent-death signal, so the plugin cannot
/// outlive the engine, and refuses to exec if the engine already died
/// between fork and the prctl.
#[allow(unsafe_code)]
fn die_with_parent(command: &mut Command) {
    let parent = nix::unistd::getpid();
    // SAFETY: the hook runs in the forked child before exec. It allocates
    // nothing and makes only async-signal-safe system calls (prctl, getppid);
    // the error it may return is built from a raw errno.
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            if nix::unistd::getppid() != parent {
                return Err(nix::errno::Errno::ESRCH.into());
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps_only_directories_of_dead_engines() {
        let parent = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = parent.path().join(format!("{SOCKET_DIR_PREFIX}{dead}-abc"));
        let live = parent
            .path()
            .join(format!("{SOCKET_DIR_PREFIX}{}-def", std::process::id()));
        let other = parent.path().join("unrelated-123");
        for dir in [&stale, &live, &other] {
            std::fs::create_dir(dir).unwrap();
        }
        std::fs::write(stale.join("plugin123"), "").unwrap();
        sweep_stale_socket_dirs(parent.path());
        assert!(!stale.exists());
        assert!(live.exists() && other.exists());
    }
}
