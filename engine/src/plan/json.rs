//! A plan in terraform's JSON plan format (`show -json`).
