//! The provider host over protocol 6, against a fake provider served over
//! real gRPC (`examples/fake_provider6.rs`, built here): handshake, schema
//! with nested attributes, the codec, a plan and apply, import, a data
//! source, write-only attributes and Stop.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use engine::provider::grpc::GrpcProvider;
use engine::provider::plugin::{LaunchOptions, Plugin};
use engine::provider::proposed::proposed_new;
use engine::provider::schema::{ObjectNesting, ProviderSchema, TerraformSchemas};
use engine::provider::{msgpack, PlannedChange, Provider, ProviderError, ResourceState, Stopper};
use engine::value::convert::convert;
use engine::value::number::Number;
use engine::value::{Type, Value};

/// The fake provider's executable, built once per test process with the
/// cargo that built the tests, into the same target directory.
fn fake_provider6() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            // <target>/<profile>/deps/it-<hash>
            let exe = std::env::current_exe().unwrap();
            let target = exe
                .ancestors()
                .nth(3)
                .expect("test binary in <target>/<profile>/deps");
            let cargo = option_env!("CARGO").unwrap_or("cargo");
            let output = Command::new(cargo)
                .args(["build", "--quiet", "--message-format=json"])
                .args([
                    "-p",
                    "engine",
                    "--example",
                    "fake_provider6",
                    "--target-dir",
                ])
                .arg(target)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .output()
                .expect("run cargo");
            assert!(
                output.status.success(),
                "building fake_provider6 failed:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            String::from_utf8_lossy(&output.stdout)
                .lines()
                .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
                .find(|m| m["target"]["name"] == "fake_provider6")
                .and_then(|m| m["executable"].as_str().map(PathBuf::from))
                .expect("cargo names the fake provider's executable")
        })
        .clone()
}

async fn launch() -> GrpcProvider {
    let options = LaunchOptions {
        tls: false,
        handshake_timeout: Duration::from_secs(10),
    };
    let plugin = Plugin::launch(&fake_provider6(), &options).await.unwrap();
    assert_eq!(plugin.protocol(), 6);
    let provider = GrpcProvider::new(plugin).unwrap();
    assert_eq!(provider.protocol(), 6);
    provider
}

fn obj(entries: impl IntoIterator<Item = (&'static str, Value)>) -> BTreeMap<String, Value> {
    entries
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

fn num(n: i64) -> Value {
    Value::number(Number::from_i64(n))
}

fn s(text: &str) -> Value {
    Value::string(text)
}

/// A `fake_server` configuration as an evaluator would hand it over:
/// written loosely, then converted to the schema's type (which fills the
/// optional attributes of the nested objects with nulls).
fn server_config(schema: &ProviderSchema, name: &str, extra: BTreeMap<String, Value>) -> Value {
    let block = &schema.resources["fake_server"].block;
    let port = |p: i64| Value::object(obj([("port", num(p))]));
    let mut given = obj([
        ("name", s(name)),
        ("password", s("hunter2")),
        ("disk", Value::object(obj([("size", num(10))]))),
        ("ports", Value::tuple(vec![port(80), port(443)])),
        (
            "tags",
            Value::tuple(vec![Value::object(obj([("key", s("blue"))]))]),
        ),
        (
            "labels",
            Value::object(obj([("tier", Value::object(obj([("value", s("web"))])))])),
        ),
    ]);
    given.extend(extra);
    let written = Value::object(
        block
            .attributes
            .iter()
            .map(|(n, a)| {
                let v = given
                    .remove(n)
                    .unwrap_or_else(|| Value::null(a.ty.without_optional()));
                (n.clone(), v)
            })
            .collect(),
    );
    convert(written, &block.implied_type()).unwrap()
}

async fn plan(
    provider: &mut GrpcProvider,
    schema: &ProviderSchema,
    prior: &ResourceState,
    config: &Value,
) -> Result<PlannedChange, ProviderError> {
    let block = &schema.resources["fake_server"].block;
    // A destroy proposes null, as terraform does.
    let proposed = if config.is_null() {
        config.clone()
    } else {
        proposed_new(block, &prior.value, config)
    };
    provider
        .plan_resource_change("fake_server", prior, &proposed, config)
        .await
}

fn nothing(schema: &ProviderSchema) -> ResourceState {
    ResourceState {
        value: Value::null(schema.resources["fake_server"].block.implied_type()),
        private: Vec::new(),
    }
}

#[tokio::test]
async fn protocol6_schema_has_nested_attributes_with_their_types() {
    let mut provider = launch().await;
    let schema = provider.schema().await.unwrap();
    provider.shutdown().await;

    let block = &schema.resources["fake_server"].block;
    let ports = &block.attributes["ports"];
    let nested = ports
        .nested_type
        .as_ref()
        .expect("ports is a nested attribute");
    assert_eq!(nested.nesting, ObjectNesting::List);
    assert!(nested.attributes["port"].required);
    assert!(nested.attributes["id"].computed);
    // Computed inner attributes are optional in the declared type.
    assert_eq!(
        ports.ty.to_json(),
        serde_json::json!(["list", ["object", {"id": "string", "port": "number"}, ["id"]]])
    );
    for (name, nesting) in [
        ("disk", "single"),
        ("ports", "list"),
        ("tags", "set"),
        ("labels", "map"),
    ] {
        let rendered = serde_json::to_value(TerraformSchemas::new([(
            "registry.terraform.io/example/fake".to_string(),
            &schema,
        )]))
        .unwrap();
        let attribute = &rendered["provider_schemas"]["registry.terraform.io/example/fake"]
            ["resource_schemas"]["fake_server"]["block"]["attributes"][name];
        assert_eq!(attribute["nested_type"]["nesting_mode"], nesting, "{name}");
        assert!(attribute.get("type").is_none(), "{name}: {attribute}");
    }
    assert!(block.attributes["password"].write_only);

    // A nested value survives the codec by the block's implied type.
    let config = server_config(&schema, "web", BTreeMap::new());
    let ty = block.implied_type();
    let bytes = msgpack::encode(&config, &ty).unwrap();
    assert_eq!(msgpack::decode(&bytes, &ty).unwrap(), config);
}

#[tokio::test]
async fn protocol6_plans_applies_reads_imports_and_destroys_a_nested_resource() {
    let mut provider = launch().await;
    let schema = provider.schema().await.unwrap();
    let provider_block = &schema.provider.block;
    let provider_config = provider_block.value_with(obj([("region", s("moon-1"))]));
    let prepared = provider
        .prepare_provider_config(&provider_config)
        .await
        .unwrap();
    assert_eq!(prepared, provider_config);
    provider.configure(&prepared).await.unwrap();

    let config = server_config(&schema, "web", BTreeMap::new());
    // Validation tells the provider write-only attributes may be set.
    provider
        .validate_resource_config("fake_server", &config)
        .await
        .unwrap();

    // Create.
    let planned = plan(&mut provider, &schema, &nothing(&schema), &config)
        .await
        .unwrap();
    let value = &planned.planned_state;
    assert_eq!(value.get("id"), Some(&Value::unknown(Type::String)));
    assert!(value.get("password").unwrap().is_null());
    assert_eq!(value.get("disk").unwrap().get("kind"), Some(&s("standard")));
    let ports = value.get("ports").unwrap().elements().unwrap();
    assert_eq!(ports[1].get("id"), Some(&Value::unknown(Type::String)));
    let created = provider
        .apply_resource_change("fake_server", &nothing(&schema).value, &planned, &config)
        .await
        .unwrap()
        .expect("created");
    assert_eq!(created.value.get("id"), Some(&s("srv-web")));
    assert_eq!(created.private, b"created");
    let ports = created.value.get("ports").unwrap().elements().unwrap();
    assert_eq!(ports[0].get("id"), Some(&s("port-80")));
    assert_eq!(ports[1].get("id"), Some(&s("port-443")));
    assert_eq!(
        created
            .value
            .get("labels")
            .unwrap()
            .get("tier")
            .unwrap()
            .get("value"),
        Some(&s("web"))
    );

    // Read gives it back.
    let read = provider
        .read_resource("fake_server", &created)
        .await
        .unwrap()
        .expect("still there");
    assert_eq!(read, created);

    // An update keeps the computed values the configuration leaves null:
    // the id, each port's id, the disk's default kind.
    let bigger = server_config(
        &schema,
        "web",
        obj([("disk", Value::object(obj([("size", num(20))])))]),
    );
    let updated = plan(&mut provider, &schema, &created, &bigger)
        .await
        .unwrap();
    assert!(updated.requires_replace.is_empty());
    let value = &updated.planned_state;
    assert_eq!(value.get("id"), Some(&s("srv-web")));
    assert_eq!(value.get("disk").unwrap().get("size"), Some(&num(20)));
    assert_eq!(value.get("disk").unwrap().get("kind"), Some(&s("standard")));
    let ports = value.get("ports").unwrap().elements().unwrap();
    assert_eq!(ports[0].get("id"), Some(&s("port-80")));

    // A new name replaces the server.
    let renamed = server_config(&schema, "api", BTreeMap::new());
    let replace = plan(&mut provider, &schema, &created, &renamed)
        .await
        .unwrap();
    assert_eq!(replace.requires_replace.len(), 1);
    assert_eq!(replace.requires_replace[0].to_string(), "name");

    // Import knows only the id.
    let imported = provider
        .import_resource_state("fake_server", "srv-old")
        .await
        .unwrap();
    assert_eq!(imported.len(), 1);
    assert_eq!(imported[0].state.value.get("id"), Some(&s("srv-old")));
    assert!(imported[0].state.value.get("ports").unwrap().is_null());

    // A data source.
    let echo_block = &schema.data_sources["fake_echo"].block;
    let echo_config = echo_block.value_with(obj([("input", s("hi"))]));
    provider
        .validate_data_source_config("fake_echo", &echo_config)
        .await
        .unwrap();
    let echoed = provider
        .read_data_source("fake_echo", &echo_config)
        .await
        .unwrap();
    assert_eq!(echoed.get("output"), Some(&s("echo: hi")));

    // Destroy.
    let null = Value::null(schema.resources["fake_server"].block.implied_type());
    let destroy = plan(&mut provider, &schema, &created, &null).await.unwrap();
    assert!(destroy.planned_state.is_null());
    let gone = provider
        .apply_resource_change("fake_server", &created.value, &destroy, &null)
        .await
        .unwrap();
    assert_eq!(gone, None);
    provider.shutdown().await;
}

#[tokio::test]
async fn protocol6_plan_holding_a_write_only_value_is_refused() {
    let mut provider = launch().await;
    let schema = provider.schema().await.unwrap();
    let config = server_config(&schema, "leaky", BTreeMap::new());
    let err = plan(&mut provider, &schema, &nothing(&schema), &config)
        .await
        .unwrap_err();
    provider.shutdown().await;
    assert!(
        matches!(&err, ProviderError::WriteOnlySet { paths, .. } if paths.len() == 1),
        "{err}"
    );
    let text = err.to_string();
    assert!(text.contains("password"), "{text}");
    assert!(text.contains("fake_provider6"), "{text}");
}

#[tokio::test]
async fn protocol6_stop_cancels_an_apply_in_flight() {
    let mut provider = launch().await;
    let schema = provider.schema().await.unwrap();
    let config = server_config(&schema, "stuck", obj([("hang", Value::bool(true))]));
    let planned = plan(&mut provider, &schema, &nothing(&schema), &config)
        .await
        .unwrap();
    let stop = provider.stop_handle();
    let prior = nothing(&schema).value;
    let apply = provider.apply_resource_change("fake_server", &prior, &planned, &config);
    // Stop only cancels what is in flight, so keep asking until the apply
    // has started and returned.
    let stopper = async {
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            stop.stop().await.unwrap();
        }
    };
    let result = tokio::time::timeout(Duration::from_secs(10), async {
        tokio::select! {
            result = apply => result,
            () = stopper => unreachable!(),
        }
    })
    .await
    .expect("the apply returned after Stop");
    let err = result.unwrap_err();
    assert!(err.to_string().contains("stopped"), "{err}");
    // The provider keeps serving after a Stop.
    provider.schema().await.unwrap();
    provider.shutdown().await;
}
