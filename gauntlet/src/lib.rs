//! The gauntlet: runs an estate through the stages of its life on twin
//! substrates, with stock terraform as the oracle and the AWS CLI as the
//! witness, and renders what it saw as evidence.
//!
//! Modules in the order a run flows: estate -> machine -> substrate ->
//! oracle -> witness -> stage and stages -> evidence -> history and report,
//! with the runner driving them and `process` and `clock` underneath. The
//! site (`site`, drawing with `chart`, looked at by `browser`) is rendered
//! from what the reports directory then holds.

pub mod awscli;
pub mod browser;
pub mod chart;
pub mod choudoufu;
pub mod clock;
pub mod conditions;
pub mod corpus;
pub mod edit;
pub mod estate;
pub mod evidence;
pub mod freshness;
pub mod history;
pub mod machine;
pub mod oracle;
pub mod process;
pub mod report;
pub mod runner;
pub mod site;
pub mod stage;
pub mod stages;
pub mod substrate;
pub mod tree;
pub mod witness;
