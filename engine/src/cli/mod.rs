//! The verbs of the `choudoufu` command line, one file each; `main.rs`
//! parses the arguments and dispatches.

pub mod console;
pub mod init;
pub mod migrate;
pub mod output;
pub mod plan;
pub mod providers;
pub mod records;
pub mod unlock;
pub mod validate;
