//! Integration tests of the engine: the console corpus against `terraform
//! console`, and the provider host against fake plugins (shell scripts), a
//! fake protocol 6 provider served over real gRPC, and the real aws
//! provider and stock terraform; and the scenarios (`tests/scenarios/`),
//! which run the planner and apply in-process against the in-memory
//! provider.

mod aws_lifecycle;
mod catalogue;
mod console_corpus;
mod fake_plugins;
mod fake_provider6;
mod init;
mod json_config;
mod json_stream;
mod language;
mod live_provider;
mod lost_records;
mod memory_provider;
mod module_sources;
mod modules;
mod outputs;
mod plan_render;
mod record_store;
mod refresh_only;
mod roundtrip;
mod scenario_schema;
mod scenarios;
mod stateless;
mod support;
mod two_estates;
mod validate;
mod workspaces;
