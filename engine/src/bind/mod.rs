//! Binding: each declared instance found in the live system by identity,
//! its markers checked; and the sweep, which finds what carries the
//! estate's marker and no block declares.

pub mod identity;
pub mod marker;
