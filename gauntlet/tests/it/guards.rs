//! Every process the gauntlet starts is stopped on panic and on Ctrl-C.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use crate::{assert_nothing_left, finish, moto_pids, Scratch, ESTATE};

#[test]
fn a_panic_with_both_twins_running_stops_them() {
    let s = Scratch::new();
    let out = finish(
        s.gauntlet(&["run", ESTATE])
            .env("GAUNTLET_TEST_PANIC", "substrate")
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, Some(101), "{}", out.stderr);
    assert!(out.stderr.contains("a deliberate panic"), "{}", out.stderr);
    assert_eq!(moto_pids(&out.stderr).len(), 2, "{}", out.stderr);
    assert_nothing_left(&out.stderr, &s);
}

#[test]
fn ctrl_c_during_terraform_apply_stops_everything_and_says_so() {
    let s = Scratch::new();
    let mut child = s
        .gauntlet(&["run", ESTATE])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            all.push_str(&line);
            all.push('\n');
            let _ = tx.send(line);
        }
        all
    });
    // Wait until terraform is applying on both twins.
    let mut applying = 0;
    while applying < 2 {
        let line = rx
            .recv_timeout(Duration::from_secs(300))
            .expect("the run never reached terraform apply");
        if line.contains("terraform plan and apply on the") {
            applying += 1;
        }
    }
    std::thread::sleep(Duration::from_secs(3));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    let stderr = reader.join().unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert_eq!(moto_pids(&stderr).len(), 2, "{stderr}");
    assert_nothing_left(&stderr, &s);
    let r = s.record(ESTATE);
    assert!(r["error"].as_str().unwrap().contains("interrupted"), "{r}");
    assert!(s.page(ESTATE).contains("Stopped."));
}
