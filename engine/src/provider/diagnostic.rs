//! What a provider says about a request: errors and warnings, each with an
//! optional path to the attribute it is about.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One diagnostic from a provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub summary: String,
    pub detail: String,
    pub attribute: Option<AttributePath>,
}

/// A path into a value, outermost step first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AttributePath(pub Vec<PathStep>);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathStep {
    /// An attribute of an object.
    Attribute(String),
    /// An element of a map, by key.
    Key(String),
    /// An element of a list or tuple, by index.
    Index(i64),
}

impl fmt::Display for AttributePath {
    /// Terraform's traversal syntax: `tags["env"]`, `rule[0].id`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            match step {
                PathStep::Attribute(name) if i == 0 => write!(f, "{name}")?,
                PathStep::Attribute(name) => write!(f, ".{name}")?,
                PathStep::Key(key) => write!(f, "[{key:?}]")?,
                PathStep::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Error => "Error",
            Severity::Warning => "Warning",
        };
        write!(f, "{severity}: {}", self.summary)?;
        if let Some(path) = self.attribute.as_ref().filter(|p| !p.0.is_empty()) {
            write!(f, " (at {path})")?;
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_print_as_traversals() {
        let path = AttributePath(vec![
            PathStep::Attribute("rule".into()),
            PathStep::Index(0),
            PathStep::Attribute("tags".into()),
            PathStep::Key("env".into()),
        ]);
        assert_eq!(path.to_string(), r#"rule[0].tags["env"]"#);
        let d = Diagnostic {
            severity: Severity::Error,
            summary: "Incorrect attribute value type".into(),
            detail: "string is required".into(),
            attribute: Some(path),
        };
        assert_eq!(
            d.to_string(),
            r#"Error: Incorrect attribute value type (at rule[0].tags["env"]): string is required"#
        );
    }
}
