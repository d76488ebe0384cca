//! Evaluation errors in terraform's shape: a one-line summary and a detail
//! sentence, worded as terraform words them.

use std::fmt;

/// One evaluation error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub summary: String,
    pub detail: String,
}

impl Diagnostic {
    pub fn new(summary: impl Into<String>, detail: impl Into<String>) -> Diagnostic {
        Diagnostic {
            summary: summary.into(),
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.summary, self.detail)
    }
}

impl std::error::Error for Diagnostic {}

pub type Result<T> = std::result::Result<T, Diagnostic>;
