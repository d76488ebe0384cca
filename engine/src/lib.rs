//! choudoufu: a Terraform-compatible engine that keeps no state file.
//!
//! The live system is the state. Modules are declared in the order data flows
//! through the engine; see ARCHITECTURE.md for the map.

pub mod addr;
pub mod apply;
pub mod bind;
pub mod config;
pub mod diag;
pub mod eval;
pub mod graph;
pub mod init;
pub mod json_ui;
pub mod live;
pub mod lock;
pub mod migrate;
pub mod module_fetch;
pub mod module_install;
pub mod plan;
pub mod planner;
pub mod provider;
pub mod record;
pub mod saved;
pub mod session;
pub mod source;
pub mod validate;
pub mod value;
pub mod workspace;
pub mod workspaces;

/// The engine's version, as `choudoufu version` prints it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
