//! choudoufu: a Terraform-compatible engine that keeps no state file.
//!
//! The live system is the state. Modules are declared in the order data flows
//! through the engine; see ARCHITECTURE.md for the map.

pub mod addr;
pub mod config;
pub mod diag;
pub mod eval;
pub mod graph;
pub mod plan;
pub mod provider;
pub mod source;
pub mod validate;
pub mod value;

/// The engine's version, as `choudoufu version` prints it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
