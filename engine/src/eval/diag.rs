//! Evaluation errors in terraform's shape: a one-line summary and a detail
//! sentence, worded as terraform words them.

use std::fmt;

/// One evaluation error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub summary: String,
    pub detail: String,
    /// The byte span of the innermost expression that failed, in the text
    /// the expression was parsed from (configuration files keep spans).
    pub span: Option<std::ops::Range<usize>>,
}

impl Diagnostic {
    pub fn new(summary: impl Into<String>, detail: impl Into<String>) -> Diagnostic {
        Diagnostic {
            summary: summary.into(),
            detail: detail.into(),
            span: None,
        }
    }

    /// Records where the failure is, unless an inner expression already did.
    pub fn or_span(mut self, span: Option<std::ops::Range<usize>>) -> Diagnostic {
        if self.span.is_none() {
            self.span = span;
        }
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.summary, self.detail)
    }
}

impl std::error::Error for Diagnostic {}

pub type Result<T> = std::result::Result<T, Diagnostic>;
