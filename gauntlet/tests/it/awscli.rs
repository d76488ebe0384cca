//! The kept-running AWS CLI answers as the `aws` command does.

use std::process::Command;

use gauntlet::awscli::Cli;
use gauntlet::clock::Clock;

use crate::{processes_in, workspace};

/// The provisioned CLI (`cargo run -p gauntlet -- provision`).
fn aws() -> std::path::PathBuf {
    let aws = workspace().join(".venv/bin/aws");
    assert!(
        aws.exists(),
        "{} is missing; run cargo run -p gauntlet -- provision",
        aws.display()
    );
    aws
}

const ENV: [(&str, &str); 5] = [
    ("AWS_ACCESS_KEY_ID", "test"),
    ("AWS_SECRET_ACCESS_KEY", "test"),
    ("AWS_DEFAULT_REGION", "us-east-1"),
    ("AWS_CONFIG_FILE", "/dev/null"),
    ("AWS_MAX_ATTEMPTS", "1"),
];

#[test]
fn answers_as_the_aws_command_does_and_stops_with_its_owner() {
    let dir = tempfile::tempdir().unwrap();
    let aws = aws();
    let clock = Clock::start();
    let cli = Cli::new(&clock, &aws, dir.path(), &ENV);
    // A free port nothing listens on: the call fails as it would against a
    // twin that is down.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let calls: [&[&str]; 3] = [
        &["--version"],
        &["sqs", "list-queues", "--endpoint-url", &endpoint],
        &["sqs", "no-such-operation"],
    ];
    for args in calls {
        let kept = cli.call("aws", args).unwrap();
        let once = Command::new(&aws)
            .args(args)
            .current_dir(dir.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .envs(ENV)
            .output()
            .unwrap();
        assert_eq!(Some(kept.code), once.status.code(), "{args:?}");
        assert_eq!(
            kept.stdout,
            String::from_utf8_lossy(&once.stdout),
            "{args:?}"
        );
        assert_eq!(
            kept.stderr,
            String::from_utf8_lossy(&once.stderr),
            "{args:?}"
        );
    }
    assert!(clock.breakdown().witness > std::time::Duration::ZERO);

    // Calls from two threads at once each get an answer, from two processes.
    std::thread::scope(|s| {
        let a = s.spawn(|| cli.call("aws", &["--version"]).unwrap());
        let b = s.spawn(|| cli.call("aws", &["--version"]).unwrap());
        assert_eq!(a.join().unwrap().code, 0);
        assert_eq!(b.join().unwrap().code, 0);
    });
    assert!(!processes_in(dir.path()).is_empty());
    drop(cli);
    assert!(
        processes_in(dir.path()).is_empty(),
        "the CLI's processes outlived it"
    );
}

/// The witness's out-of-band ingress rule, an undeclared object of the
/// running system: added by group name, read back, taken away and put
/// back, against a real moto server.
#[test]
fn an_ingress_rule_added_out_of_band_is_read_taken_away_and_put_back() {
    use gauntlet::substrate::{Side, Twin};
    use gauntlet::witness::Witness;

    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::start();
    let python = workspace().join(".venv/bin/python");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let twin = Twin::start(&clock, &python, Side::Estate, port, dir.path()).unwrap();
    let w = Witness::new(
        &clock,
        Side::Estate,
        &aws(),
        &twin.endpoint(),
        "us-east-1",
        dir.path(),
    )
    .unwrap();
    let cli = |args: &[&str]| {
        let out = Command::new(aws())
            .args(args)
            .args(["--output", "text", "--endpoint-url", &twin.endpoint()])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .envs(ENV)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let vpc = cli(&[
        "ec2",
        "create-vpc",
        "--cidr-block",
        "10.1.0.0/16",
        "--query",
        "Vpc.VpcId",
    ]);
    let group = cli(&[
        "ec2",
        "create-security-group",
        "--group-name",
        "app",
        "--description",
        "app",
        "--vpc-id",
        &vpc,
        "--query",
        "GroupId",
    ]);

    assert_eq!(w.security_group_id("app").unwrap(), Some(group));
    assert_eq!(w.security_group_id("none").unwrap(), None);
    assert_eq!(w.ingress_rule("app", "10.9.0.0/16", 9090).unwrap(), None);
    w.add_ingress_rule("app", "10.9.0.0/16", 9090, "scraper")
        .unwrap();
    let rule = w.ingress_rule("app", "10.9.0.0/16", 9090).unwrap();
    assert!(
        rule.as_deref().is_some_and(|r| r.starts_with("sgr-")),
        "{rule:?}"
    );
    // Another port or source is another rule.
    assert_eq!(w.ingress_rule("app", "10.9.0.0/16", 9091).unwrap(), None);
    assert_eq!(w.ingress_rule("app", "10.8.0.0/16", 9090).unwrap(), None);
    w.remove_ingress_rule("app", "10.9.0.0/16", 9090).unwrap();
    assert_eq!(w.ingress_rule("app", "10.9.0.0/16", 9090).unwrap(), None);
    // Taking away what is not there is no error; putting back is adding.
    w.remove_ingress_rule("app", "10.9.0.0/16", 9090).unwrap();
    w.add_ingress_rule("app", "10.9.0.0/16", 9090, "scraper")
        .unwrap();
    assert!(w
        .ingress_rule("app", "10.9.0.0/16", 9090)
        .unwrap()
        .is_some());
    assert_eq!(w.ingress_rule("gone", "10.9.0.0/16", 9090).unwrap(), None);
}
