//! The evaluator's error: a one-line summary and a detail sentence,
//! worded as terraform words them, and the byte span of the expression
//! that failed. It knows no file; where an expression came from turns it
//! into a `diag::Diagnostic` with its range.

use std::fmt;

/// One evaluation error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalError {
    pub summary: String,
    pub detail: String,
    /// The byte span of the innermost expression that failed, in the text
    /// the expression was parsed from (configuration files keep spans).
    pub span: Option<std::ops::Range<usize>>,
}

impl EvalError {
    pub fn new(summary: impl Into<String>, detail: impl Into<String>) -> EvalError {
        EvalError {
            summary: summary.into(),
            detail: detail.into(),
            span: None,
        }
    }

    /// Records where the failure is, unless an inner expression already did.
    pub fn or_span(mut self, span: Option<std::ops::Range<usize>>) -> EvalError {
        if self.span.is_none() {
            self.span = span;
        }
        self
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.summary, self.detail)
    }
}

impl std::error::Error for EvalError {}

pub type Result<T> = std::result::Result<T, EvalError>;
