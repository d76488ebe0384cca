//! Integration tests of the engine: the console corpus against `terraform
//! console`, and the provider host against fake plugins (shell scripts) and
//! against the real aws provider and stock terraform.

mod aws_lifecycle;
mod console_corpus;
mod fake_plugins;
mod live_provider;
mod support;
mod validate;
