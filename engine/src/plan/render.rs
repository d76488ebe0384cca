//! A plan printed as terraform prints it.
