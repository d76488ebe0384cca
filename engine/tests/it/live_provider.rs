//! The real aws provider 5.100.0, driven by the engine, and compared with
//! stock terraform.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use engine::provider::cache::SchemaCache;
use engine::provider::grpc::GrpcProvider;
use engine::provider::plugin::{LaunchOptions, Plugin};
use engine::provider::schema::Nesting;
use engine::provider::{load_schema, Provider};
use engine::value::Type;
use serde_json::Value as Json;

use crate::support::{
    alive, aws_binary, aws_root, children, cli_config, plugin_mirror, terraform, wait_gone,
};

async fn launch_and_read_schema(options: &LaunchOptions) {
    let start = Instant::now();
    let plugin = Plugin::launch(&aws_binary(), options).await.unwrap();
    let launched = start.elapsed();
    assert_eq!(plugin.protocol(), 5);
    let pid = plugin.pid().unwrap();
    let mut provider = GrpcProvider::new(plugin).unwrap();
    let schema = provider.schema().await.unwrap();
    let schema_time = start.elapsed() - launched;
    eprintln!(
        "tls={} launch+handshake {launched:?}, GetSchema {schema_time:?}",
        options.tls
    );

    assert_eq!(schema.resources.len(), 1526);
    assert_eq!(schema.data_sources.len(), 608);
    assert_eq!(schema.ephemeral_resources.len(), 7);
    assert_eq!(
        schema.functions.keys().collect::<Vec<_>>(),
        ["arn_build", "arn_parse", "trim_iam_role_path"]
    );
    assert!(schema.capabilities.plan_destroy);
    assert!(schema.capabilities.get_provider_schema_optional);
    let queue = &schema.resources["aws_sqs_queue"].block;
    assert_eq!(queue.attributes["name"].ty, Type::String);
    assert!(queue.attributes["arn"].computed);
    assert_eq!(
        queue.attributes["tags"].ty,
        Type::Map(Box::new(Type::String))
    );
    let provider_block = &schema.provider.block;
    assert_eq!(
        provider_block.block_types["endpoints"].nesting,
        Nesting::Set
    );
    assert_eq!(
        provider_block.attributes["skip_metadata_api_check"].ty,
        Type::String
    );

    provider.shutdown().await;
    assert!(!alive(pid), "provider still running after shutdown");
}

#[tokio::test]
async fn mtls_launch_and_get_schema() {
    launch_and_read_schema(&LaunchOptions::default()).await;
}

#[tokio::test]
async fn plaintext_launch_and_get_schema() {
    let options = LaunchOptions {
        tls: false,
        ..LaunchOptions::default()
    };
    launch_and_read_schema(&options).await;
}

#[tokio::test]
async fn dropped_plugin_is_shut_down() {
    let plugin = Plugin::launch(&aws_binary(), &LaunchOptions::default())
        .await
        .unwrap();
    let pid = plugin.pid().unwrap();
    drop(plugin);
    let start = Instant::now();
    while alive(pid) {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "provider still running"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn schema_cache_skips_the_provider() {
    let dir = tempfile::tempdir().unwrap();
    let cache = SchemaCache::new(dir.path());
    let options = LaunchOptions::default();
    let start = Instant::now();
    let cold = load_schema(&aws_binary(), Some(&cache), &options)
        .await
        .unwrap();
    let cold_time = start.elapsed();
    let hash = cache.binary_hash(&aws_binary()).unwrap();
    assert_eq!(
        hash.as_str(),
        "8cb98768bcea942df561a918d65a8751f787ab348f7498bdfe6667dffcebd528"
    );
    assert_eq!(cache.load(&hash).as_ref(), Some(&cold));

    // A launch could not succeed with a zero handshake timeout, so the
    // second answer can only come from the cache.
    let no_launch = LaunchOptions {
        handshake_timeout: Duration::ZERO,
        ..LaunchOptions::default()
    };
    let start = Instant::now();
    let cached = load_schema(&aws_binary(), Some(&cache), &no_launch)
        .await
        .unwrap();
    eprintln!("cold {cold_time:?}, cached {:?}", start.elapsed());
    assert_eq!(cached, cold);
}

/// Runs a command in `dir` with the given CLI configuration and returns its
/// stdout, panicking with its stderr on failure.
fn run(mut command: Command, what: &str) -> (Vec<u8>, Duration) {
    let start = Instant::now();
    let out = command.output().unwrap();
    let elapsed = start.elapsed();
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (out.stdout, elapsed)
}

/// The first few paths where two JSON documents differ.
fn differences(ours: &Json, theirs: &Json, path: &str, out: &mut Vec<String>) {
    if out.len() >= 10 {
        return;
    }
    match (ours, theirs) {
        (Json::Object(a), Json::Object(b)) => {
            for key in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                let here = format!("{path}/{key}");
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => differences(x, y, &here, out),
                    (Some(_), None) => out.push(format!("{here}: only in ours")),
                    (None, _) => out.push(format!("{here}: only in terraform's")),
                }
            }
        }
        (Json::Array(a), Json::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                differences(x, y, &format!("{path}[{i}]"), out);
            }
        }
        _ if ours != theirs => out.push(format!("{path}: ours {ours}, terraform's {theirs}")),
        _ => {}
    }
}

#[test]
fn providers_schema_json_matches_terraform() {
    let dir = tempfile::tempdir().unwrap();
    let config = cli_config(dir.path(), &plugin_mirror());
    let tf_root = aws_root(&dir.path().join("terraform"));
    let our_root = aws_root(&dir.path().join("choudoufu"));
    crate::support::write_live(&our_root, "schema");
    let cache = dir.path().join("cache");

    let terraform_in = |args: &[&str]| {
        let mut c = Command::new(terraform());
        c.args(args)
            .current_dir(&tf_root)
            .env("TF_CLI_CONFIG_FILE", &config)
            .env("CHECKPOINT_DISABLE", "1")
            .env_remove("TF_PLUGIN_CACHE_DIR");
        c
    };
    run(
        terraform_in(&["init", "-input=false", "-no-color"]),
        "terraform init",
    );
    let (theirs, tf_time) = run(
        terraform_in(&["providers", "schema", "-json"]),
        "terraform providers schema -json",
    );

    let ours_in = |args: &[&str]| {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("choudoufu"));
        c.args(args)
            .current_dir(&our_root)
            .env("TF_CLI_CONFIG_FILE", &config)
            .env("CHOUDOUFU_CACHE_DIR", &cache)
            .env_remove("TF_PLUGIN_CACHE_DIR");
        c
    };
    run(
        ours_in(&["init", "-input=false", "-no-color"]),
        "choudoufu init",
    );
    let schema = ["providers", "schema", "-json"];
    let (ours, cold_time) = run(ours_in(&schema), "choudoufu providers schema -json");
    let (ours_cached, cached_time) = run(
        ours_in(&schema),
        "choudoufu providers schema -json (cached)",
    );
    eprintln!("terraform {tf_time:?}; choudoufu cold {cold_time:?}, cached {cached_time:?}");

    let text = theirs;
    let theirs: Json = serde_json::from_slice(&text).unwrap();
    for output in [ours, ours_cached] {
        let ours: Json = serde_json::from_slice(&output).unwrap();
        let mut diffs = Vec::new();
        differences(&ours, &theirs, "", &mut diffs);
        assert!(diffs.is_empty(), "schemas differ:\n{}", diffs.join("\n"));
        // Byte for byte too: key order, and Go's escapes of <, > and &.
        assert!(output == text, "same schemas, printed differently");
    }
}

/// SIGKILL the engine while it waits for GetSchema: the provider must die
/// with it, and no socket file may remain.
#[test]
fn killed_engine_leaves_no_provider_and_no_socket() {
    let dir = tempfile::tempdir().unwrap();
    let config = cli_config(dir.path(), &plugin_mirror());
    let root = aws_root(&dir.path().join("root"));
    crate::support::write_live(&root, "killed");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();

    run(
        {
            let mut c = Command::new(assert_cmd::cargo::cargo_bin("choudoufu"));
            c.args(["init", "-input=false", "-no-color"])
                .current_dir(&root)
                .env("TF_CLI_CONFIG_FILE", &config)
                .env("CHOUDOUFU_CACHE_DIR", dir.path().join("cache"));
            c
        },
        "choudoufu init",
    );
    let mut engine = Command::new(assert_cmd::cargo::cargo_bin("choudoufu"))
        .args(["providers", "schema", "-json"])
        .current_dir(&root)
        .env("TF_CLI_CONFIG_FILE", &config)
        .env("CHOUDOUFU_CACHE_DIR", dir.path().join("cache"))
        .env("CHOUDOUFU_LOG", "debug")
        .env("TMPDIR", &tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(engine.stderr.take().unwrap());
    let mut lines = stderr.lines();
    let connected = lines
        .by_ref()
        .map_while(Result::ok)
        .any(|line| line.contains("connected to plugin"));
    assert!(connected, "the engine never connected to the provider");
    let providers = children(engine.id());
    assert_eq!(providers.len(), 1, "expected one provider process");

    engine.kill().unwrap();
    engine.wait().unwrap();
    // Keep draining so the provider's logging cannot block on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    wait_gone(&providers, Duration::from_secs(5));
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}

/// A root that names no `required_providers` uses `hashicorp/aws` all the
/// same, as terraform implies it from the resource type: `providers schema`
/// lists it, as stock's does.
#[test]
fn providers_schema_lists_a_provider_only_implied_by_a_resource() {
    let w = crate::support::Workdir::new();
    std::fs::write(
        w.dir.path().join("main.tf"),
        "resource \"aws_sqs_queue\" \"q\" {\n  name = \"implied\"\n}\n",
    )
    .unwrap();
    crate::support::write_live(w.dir.path(), "implied");
    let sources = |program: &std::path::Path| {
        let init = w.run(program, &["init", "-input=false", "-no-color"]);
        assert!(init.status.success(), "{}", crate::support::text(&init));
        let out = w.run(program, &["providers", "schema", "-json"]);
        assert!(out.status.success(), "{}", crate::support::text(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["provider_schemas"]
            .as_object()
            .map(|m| m.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let ours = sources(&assert_cmd::cargo::cargo_bin("choudoufu"));
    assert_eq!(ours, ["registry.terraform.io/hashicorp/aws"]);
    assert_eq!(ours, sources(&terraform()));
}
