//! Paths into a value, as the plugin protocol names an attribute: what a
//! provider's diagnostic is about, and what forces a replacement.

use std::fmt;

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
    }
}
