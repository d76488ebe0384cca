//! The engine's Provider API against the real aws provider and a real moto:
//! objects made with the AWS CLI, imported and read through the provider.

use std::collections::BTreeMap;

use engine::provider::grpc::GrpcProvider;
use engine::provider::plugin::{LaunchOptions, Plugin};
use engine::provider::schema::ProviderSchema;
use engine::provider::value::Value;
use engine::provider::Provider;

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
            ["sqs", "sts", "iam", "s3"].map(|s| (s, endpoint.into()))
        ));
    provider.value_with(obj([
        ("region", "us-east-1".into()),
        ("access_key", "test".into()),
        ("secret_key", "test".into()),
        ("skip_credentials_validation", true.into()),
        // A string in this provider's schema, not a bool.
        ("skip_metadata_api_check", "true".into()),
        ("skip_requesting_account_id", true.into()),
        ("s3_use_path_style", true.into()),
        ("endpoints", Value::Set(vec![endpoints])),
    ]))
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
        Some(&Value::from(url.as_str()))
    );

    let read = provider
        .read_resource("aws_sqs_queue", &imported[0].state)
        .await
        .unwrap()
        .expect("the queue exists");
    let value = &read.value;
    assert_eq!(value.get("name"), Some(&Value::from("imported-jobs")));
    assert_eq!(
        value.get("arn"),
        Some(&Value::from(
            "arn:aws:sqs:us-east-1:123456789012:imported-jobs"
        ))
    );
    assert_eq!(
        value.get("tags"),
        Some(&Value::Map(obj([("team", "core".into())])))
    );
    assert_eq!(value.get("fifo_queue"), Some(&Value::from(false)));
    assert_eq!(
        value.get("visibility_timeout_seconds"),
        Some(&Value::from(30))
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

    provider.into_plugin().shutdown().await;
}
