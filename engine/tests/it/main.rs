//! Integration tests of the engine: the console corpus against `terraform
//! console`, and the provider host against fake plugins (shell scripts), a
//! fake protocol 6 provider served over real gRPC, and the real aws
//! provider and stock terraform.

mod aws_lifecycle;
mod console_corpus;
mod fake_plugins;
mod fake_provider6;
mod json_config;
mod live_provider;
mod modules;
mod outputs;
mod plan_render;
mod stateless;
mod support;
mod two_estates;
mod validate;
