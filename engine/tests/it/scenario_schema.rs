//! The in-memory provider's schema is the real one: this live test asks
//! the aws provider 5.100.0 binary for its schema, trims it to the types
//! the scenarios use (`scenarios::types_used`: their roots, live objects
//! and records, `aws.toml`'s shapes and the data sources binding reads)
//! with descriptions left out, and requires the committed fixture
//! `tests/fixtures/schema/aws-trimmed.json` to be exactly that.
//! `UPDATE_EXPECT=1` writes it instead: the fixture is generated, never
//! typed by hand. A data source binding reads that the provider does not
//! have is not in the fixture either.

use crate::memory_provider::fixture_schema_path;
use crate::scenarios::types_used;
use crate::support::aws_binary;
use engine::provider::load_schema;
use engine::provider::plugin::LaunchOptions;
use engine::provider::schema::{Block, ProviderSchema, Schema, SchemaMap};
use std::collections::BTreeSet;

/// The schema with only the wanted types, and no descriptions.
fn trimmed(
    full: &ProviderSchema,
    resources: &BTreeSet<String>,
    data: &BTreeSet<String>,
) -> ProviderSchema {
    let keep = |all: &SchemaMap, wanted: &BTreeSet<String>| {
        wanted
            .iter()
            .filter_map(|name| Some((name.clone(), without_descriptions(all.get(name)?))))
            .collect()
    };
    ProviderSchema {
        provider: without_descriptions(&full.provider),
        resources: keep(&full.resources, resources),
        data_sources: keep(&full.data_sources, data),
        ephemeral_resources: Default::default(),
        functions: Default::default(),
        provider_meta: full.provider_meta.as_ref().map(without_descriptions),
        capabilities: full.capabilities,
    }
}

fn without_descriptions(s: &Schema) -> Schema {
    Schema {
        version: s.version,
        block: block_without_descriptions(&s.block),
    }
}

fn block_without_descriptions(b: &Block) -> Block {
    let mut b = b.clone();
    b.description.clear();
    for a in b.attributes.values_mut() {
        a.description.clear();
        if let Some(n) = &mut a.nested_type {
            for inner in n.attributes.values_mut() {
                inner.description.clear();
            }
        }
    }
    for nested in b.block_types.values_mut() {
        nested.block = block_without_descriptions(&nested.block);
    }
    b
}

#[tokio::test(flavor = "current_thread")]
async fn the_trimmed_aws_schema_is_the_real_providers_own() {
    let full = load_schema(&aws_binary(), None, &LaunchOptions::default())
        .await
        .expect("the aws provider's schema");
    let (resources, data) = types_used();
    for r in &resources {
        assert!(
            full.resources.contains_key(r),
            "the scenarios use resource type {r}, which the aws provider 5.100.0 does not have"
        );
    }
    let schema = trimmed(&full, &resources, &data);
    let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
    let path = fixture_schema_path();
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "{} is not the aws provider's schema trimmed to the scenarios' types; rewrite it with UPDATE_EXPECT=1 cargo nextest run -p engine -E 'test(/^scenario_schema::/)'",
        path.display()
    );
}
