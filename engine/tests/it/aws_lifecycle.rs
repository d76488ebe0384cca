//! The engine's Provider API against the real aws provider and a real moto:
//! objects made with the AWS CLI, imported and read through the provider.

use std::collections::BTreeMap;

use engine::provider::grpc::GrpcProvider;
use engine::provider::plugin::{LaunchOptions, Plugin};
use engine::provider::proposed::proposed_new;
use engine::provider::schema::ProviderSchema;
use engine::provider::{Provider, ResourceState};
use engine::value::convert::convert;
use engine::value::{Type, Value};

use crate::support::{aws_binary, Moto};

fn obj(entries: impl IntoIterator<Item = (&'static str, Value)>) -> BTreeMap<String, Value> {
    entries
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// The provider configuration every moto test uses: fake credentials,
/// the skip flags, and the endpoints pointed at moto.
fn moto_config(schema: &ProviderSchema, endpoint: &str) -> Value {
    let provider = &schema.provider.block;
    let endpoints =
        provider.block_types["endpoints"].block.value_with(obj(
            ["sqs", "sts", "iam", "s3"].map(|s| (s, Value::string(endpoint)))
        ));
    let written = provider.value_with(obj([
        ("region", Value::string("us-east-1")),
        ("access_key", Value::string("test")),
        ("secret_key", Value::string("test")),
        ("skip_credentials_validation", Value::bool(true)),
        // A string in this provider's schema, written as a bool as in HCL:
        // conversion to the schema's types makes it "true".
        ("skip_metadata_api_check", Value::bool(true)),
        ("skip_requesting_account_id", Value::bool(true)),
        ("s3_use_path_style", Value::bool(true)),
        ("endpoints", Value::list(endpoints.ty(), vec![endpoints])),
    ]));
    let config = convert(written, &provider.implied_type()).unwrap();
    assert_eq!(
        config.get("skip_metadata_api_check"),
        Some(&Value::string("true"))
    );
    config
}

#[tokio::test]
async fn import_and_read_an_sqs_queue_made_by_the_aws_cli() {
    let moto = Moto::start();
    let created = moto.aws(&[
        "sqs",
        "create-queue",
        "--queue-name",
        "imported-jobs",
        "--tags",
        "team=core",
    ]);
    let url = created["QueueUrl"].as_str().unwrap().to_string();

    let plugin = Plugin::launch(&aws_binary(), &LaunchOptions::default())
        .await
        .unwrap();
    let mut provider = GrpcProvider::new(plugin).unwrap();
    let schema = provider.schema().await.unwrap();
    provider
        .configure(&moto_config(&schema, &moto.endpoint))
        .await
        .unwrap();

    let imported = provider
        .import_resource_state("aws_sqs_queue", &url)
        .await
        .unwrap();
    assert_eq!(imported.len(), 1);
    assert_eq!(imported[0].type_name, "aws_sqs_queue");
    assert_eq!(
        imported[0].state.value.get("id"),
        Some(&Value::string(url.as_str()))
    );

    let read = provider
        .read_resource("aws_sqs_queue", &imported[0].state)
        .await
        .unwrap()
        .expect("the queue exists");
    let value = &read.value;
    assert_eq!(value.get("name"), Some(&Value::string("imported-jobs")));
    assert_eq!(
        value.get("arn"),
        Some(&Value::string(
            "arn:aws:sqs:us-east-1:123456789012:imported-jobs"
        ))
    );
    assert_eq!(
        value.get("tags"),
        Some(&Value::map(
            Type::String,
            obj([("team", Value::string("core"))])
        ))
    );
    assert_eq!(value.get("fifo_queue"), Some(&Value::bool(false)));
    assert_eq!(
        value.get("visibility_timeout_seconds"),
        Some(&Value::int(30))
    );

    // Reading again from the read state is stable.
    let again = provider
        .read_resource("aws_sqs_queue", &read)
        .await
        .unwrap()
        .expect("the queue still exists");
    assert_eq!(again.value, read.value);

    // Once the queue is gone, a read says so (after the provider's own
    // 20 s of retries for SQS's eventual consistency).
    moto.aws(&["sqs", "delete-queue", "--queue-url", &url]);
    let gone = provider
        .read_resource("aws_sqs_queue", &read)
        .await
        .unwrap();
    assert_eq!(gone, None);

    // Errors come back as diagnostics naming the call.
    let err = provider
        .import_resource_state("aws_no_such_thing", "x")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no resource type named \"aws_no_such_thing\""),
        "{err}"
    );

    provider.shutdown().await;
}

/// A configured provider against `moto`, through PrepareProviderConfig
/// and Configure as terraform calls them.
async fn configured_provider(moto: &Moto) -> (GrpcProvider, ProviderSchema) {
    let plugin = Plugin::launch(&aws_binary(), &LaunchOptions::default())
        .await
        .unwrap();
    let mut provider = GrpcProvider::new(plugin).unwrap();
    let schema = provider.schema().await.unwrap();
    let prepared = provider
        .prepare_provider_config(&moto_config(&schema, &moto.endpoint))
        .await
        .unwrap();
    provider.configure(&prepared).await.unwrap();
    (provider, schema)
}

fn bucket_tags(moto: &Moto, bucket: &str) -> serde_json::Value {
    moto.aws(&["s3api", "get-bucket-tagging", "--bucket", bucket])["TagSet"].clone()
}

fn bucket_names(moto: &Moto) -> Vec<String> {
    moto.aws(&["s3api", "list-buckets"])["Buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["Name"].as_str().unwrap().to_string())
        .collect()
}

/// Plans and applies one change as terraform does: validate, propose,
/// plan, apply. A null `config` destroys.
async fn plan_and_apply(
    provider: &mut GrpcProvider,
    schema: &ProviderSchema,
    prior: &ResourceState,
    config: &Value,
) -> Option<ResourceState> {
    let block = &schema.resources["aws_s3_bucket"].block;
    let proposed = if config.is_null() {
        config.clone()
    } else {
        provider
            .validate_resource_config("aws_s3_bucket", config)
            .await
            .unwrap();
        proposed_new(block, &prior.value, config)
    };
    let planned = provider
        .plan_resource_change("aws_s3_bucket", prior, &proposed, config)
        .await
        .unwrap();
    if prior.value.is_null() {
        // What only apply can know is unknown in a create's plan.
        assert_eq!(
            planned.planned_state.get("arn"),
            Some(&Value::unknown(Type::String))
        );
    }
    provider
        .apply_resource_change("aws_s3_bucket", &prior.value, &planned, config)
        .await
        .unwrap()
}

#[tokio::test]
async fn s3_bucket_import_read_create_update_and_delete() {
    let moto = Moto::start();
    let (mut provider, schema) = configured_provider(&moto).await;

    // Import and read a bucket the AWS CLI made.
    moto.aws(&["s3api", "create-bucket", "--bucket", "cli-made"]);
    let imported = provider
        .import_resource_state("aws_s3_bucket", "cli-made")
        .await
        .unwrap();
    assert_eq!(imported.len(), 1);
    let read = provider
        .read_resource("aws_s3_bucket", &imported[0].state)
        .await
        .unwrap()
        .expect("the bucket exists");
    assert_eq!(read.value.get("bucket"), Some(&Value::string("cli-made")));
    assert_eq!(
        read.value.get("arn"),
        Some(&Value::string("arn:aws:s3:::cli-made"))
    );

    // State stored as JSON (here only what terraform would need to find
    // the bucket) upgrades to the current schema and reads the same.
    let upgraded = provider
        .upgrade_resource_state(
            "aws_s3_bucket",
            schema.resources["aws_s3_bucket"].version,
            br#"{"id":"cli-made","bucket":"cli-made"}"#,
        )
        .await
        .unwrap();
    assert_eq!(upgraded.get("arn"), Some(&Value::null(Type::String)));
    let reread = provider
        .read_resource(
            "aws_s3_bucket",
            &ResourceState {
                value: upgraded,
                private: Vec::new(),
            },
        )
        .await
        .unwrap()
        .expect("the bucket exists");
    assert_eq!(reread.value, read.value);

    // A data source, on the same configured provider.
    let caller = provider
        .read_data_source(
            "aws_caller_identity",
            &schema.data_sources["aws_caller_identity"]
                .block
                .value_with(BTreeMap::new()),
        )
        .await
        .unwrap();
    assert_eq!(
        caller.get("account_id"),
        Some(&Value::string("123456789012"))
    );

    // Create.
    let block = &schema.resources["aws_s3_bucket"].block;
    let config = |env: &str| {
        block.value_with(obj([
            ("bucket", Value::string("engine-made")),
            (
                "tags",
                Value::map(Type::String, obj([("env", Value::string(env))])),
            ),
        ]))
    };
    let nothing = ResourceState {
        value: Value::null(block.implied_type()),
        private: Vec::new(),
    };
    let created = plan_and_apply(&mut provider, &schema, &nothing, &config("dev"))
        .await
        .expect("created");
    assert_eq!(created.value.get("id"), Some(&Value::string("engine-made")));
    assert!(bucket_names(&moto).contains(&"engine-made".to_string()));
    assert_eq!(
        bucket_tags(&moto, "engine-made"),
        serde_json::json!([{"Key": "env", "Value": "dev"}])
    );

    // Update a tag, from a fresh read as a plan would start.
    let current = provider
        .read_resource("aws_s3_bucket", &created)
        .await
        .unwrap()
        .expect("still there");
    let updated = plan_and_apply(&mut provider, &schema, &current, &config("prod"))
        .await
        .expect("updated");
    assert_eq!(
        updated.value.get("tags_all"),
        Some(&Value::map(
            Type::String,
            obj([("env", Value::string("prod"))])
        ))
    );
    assert_eq!(
        bucket_tags(&moto, "engine-made"),
        serde_json::json!([{"Key": "env", "Value": "prod"}])
    );

    // Delete.
    let gone = plan_and_apply(
        &mut provider,
        &schema,
        &updated,
        &Value::null(block.implied_type()),
    )
    .await;
    assert_eq!(gone, None);
    assert!(!bucket_names(&moto).contains(&"engine-made".to_string()));

    // Stop cancels what is in flight (here nothing) and is answered.
    provider.stop().await.unwrap();
    provider.shutdown().await;
}
