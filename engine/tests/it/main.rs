//! Integration tests of the engine: the provider host against fake plugins
//! (shell scripts) and against the real aws provider and stock terraform.

mod aws_lifecycle;
mod fake_plugins;
mod live_provider;
mod support;
