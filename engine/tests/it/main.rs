//! Integration tests of the `choudoufu` binary.

mod console_corpus;
