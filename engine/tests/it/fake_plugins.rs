//! Plugins that misbehave, played by shell scripts: each must give a clear
//! error naming the binary, within seconds, with no process left.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use engine::provider::plugin::{LaunchError, LaunchOptions, Plugin};

use crate::support::wait_gone;

/// Writes an executable script that records its pid and a background
/// child's pid in `pids`, then runs `body`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    let pids = dir.join(format!("{name}.pids"));
    fs::write(
        &path,
        format!(
            "#!/bin/sh\necho $$ > {pids}\nsleep 60 &\necho $! >> {pids}\n{body}\n",
            pids = pids.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn pids(binary: &Path) -> Vec<u32> {
    let file = PathBuf::from(format!("{}.pids", binary.display()));
    fs::read_to_string(file)
        .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// Launches `binary`, expects an error, and checks it came fast, names the
/// binary, and left no process behind.
async fn launch_fails(binary: &Path) -> LaunchError {
    let options = LaunchOptions {
        handshake_timeout: Duration::from_secs(3),
        ..LaunchOptions::default()
    };
    let start = Instant::now();
    let err = match Plugin::launch(binary, &options).await {
        Ok(_) => panic!("{} launched", binary.display()),
        Err(err) => err,
    };
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "took {:?}",
        start.elapsed()
    );
    let text = err.to_string();
    assert!(
        text.contains(&binary.display().to_string()),
        "error does not name the binary: {text}"
    );
    wait_gone(&pids(binary), Duration::from_secs(2));
    err
}

#[tokio::test]
async fn missing_binary() {
    let dir = tempfile::tempdir().unwrap();
    let err = launch_fails(&dir.path().join("terraform-provider-nope")).await;
    assert!(matches!(err, LaunchError::Missing { .. }), "{err}");
}

#[tokio::test]
async fn not_executable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("terraform-provider-plain");
    fs::write(&path, "#!/bin/sh\n").unwrap();
    let err = launch_fails(&path).await;
    assert!(matches!(err, LaunchError::NotExecutable { .. }), "{err}");
    let err = launch_fails(dir.path()).await;
    assert!(matches!(err, LaunchError::NotExecutable { .. }), "{err}");
}

#[tokio::test]
async fn crash_during_handshake() {
    let dir = tempfile::tempdir().unwrap();
    let binary = script(
        dir.path(),
        "terraform-provider-crash",
        "echo 'panic: something broke' >&2\nexit 2",
    );
    let err = launch_fails(&binary).await;
    let text = err.to_string();
    assert!(matches!(err, LaunchError::Exited { .. }), "{text}");
    assert!(text.contains("exit status 2"), "{text}");
    assert!(text.contains("panic: something broke"), "{text}");
}

#[tokio::test]
async fn malformed_handshake_line() {
    let dir = tempfile::tempdir().unwrap();
    let binary = script(
        dir.path(),
        "terraform-provider-chatty",
        "echo 'This binary is a plugin. These are not meant to be executed directly.'\nwait",
    );
    let err = launch_fails(&binary).await;
    let text = err.to_string();
    assert!(matches!(err, LaunchError::Handshake { .. }), "{text}");
    assert!(text.contains("malformed handshake line"), "{text}");
}

#[tokio::test]
async fn unsupported_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let binary = script(
        dir.path(),
        "terraform-provider-old",
        "echo '1|4|unix|/tmp/none|grpc|'\nwait",
    );
    let err = launch_fails(&binary).await;
    let text = err.to_string();
    assert!(
        text.contains("plugin protocol 4 is not supported"),
        "{text}"
    );
}

#[tokio::test]
async fn silent_plugin_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let binary = script(dir.path(), "terraform-provider-silent", "wait");
    let err = launch_fails(&binary).await;
    assert!(matches!(err, LaunchError::Timeout { .. }), "{err}");
}

#[tokio::test]
async fn socket_that_is_not_there() {
    let dir = tempfile::tempdir().unwrap();
    let binary = script(
        dir.path(),
        "terraform-provider-liar",
        "echo '1|5|unix|/nonexistent/plugin.sock|grpc|'\nwait",
    );
    let err = launch_fails(&binary).await;
    let text = err.to_string();
    assert!(matches!(err, LaunchError::Connect { .. }), "{text}");
    assert!(text.contains("/nonexistent/plugin.sock"), "{text}");
}
