//! The witness's reads as data (`reads.toml`): for a type with no row of
//! its own in [`super::Kind`], how the AWS CLI lists its live objects when
//! the tagging API cannot.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

/// How the witness lists one resource type's live objects.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Read {
    /// The resource type, the table's key.
    #[serde(skip)]
    pub type_name: String,
    /// The AWS CLI call printing every live object's identity.
    pub list: Vec<String>,
    /// The state attribute naming an object as `list` prints it.
    pub identity: String,
    /// The call describing one object, `{id}` its identity.
    pub describe: Option<Vec<String>>,
    /// The call printing whether one listed object, `{id}` its identity,
    /// is live (`true`): for a type whose listing keeps an object that is
    /// going (a KMS key pending deletion).
    pub alive: Option<Vec<String>>,
    /// The classes of the tagging API's ARNs for this type.
    #[serde(default)]
    pub arn_classes: Vec<String>,
    /// Whether its objects carry tags.
    pub tagged: bool,
}

impl PartialEq for Read {
    fn eq(&self, other: &Read) -> bool {
        self.type_name == other.type_name
    }
}

impl Eq for Read {}

impl PartialOrd for Read {
    fn partial_cmp(&self, other: &Read) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Read {
    fn cmp(&self, other: &Read) -> std::cmp::Ordering {
        self.type_name.cmp(&other.type_name)
    }
}

impl std::hash::Hash for Read {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.type_name.hash(state)
    }
}

/// Every read of `reads.toml`, parsed once.
pub fn all() -> &'static [Read] {
    static READS: OnceLock<Vec<Read>> = OnceLock::new();
    READS.get_or_init(|| {
        let table: BTreeMap<String, Read> = toml::from_str(include_str!("reads.toml"))
            .unwrap_or_else(|e| panic!("gauntlet/src/witness/reads.toml: {e}"));
        table
            .into_iter()
            .map(|(type_name, r)| Read { type_name, ..r })
            .collect()
    })
}

/// The read of a resource type, if `reads.toml` has one.
pub fn of_type(type_name: &str) -> Option<&'static Read> {
    all().iter().find(|r| r.type_name == type_name)
}

/// The read whose objects the tagging API names with ARNs of `class`.
pub fn of_arn_class(class: &str) -> Option<&'static Read> {
    all()
        .iter()
        .find(|r| r.arn_classes.iter().any(|c| c == class))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_read_lists_and_names_its_objects() {
        assert!(!all().is_empty());
        for r in all() {
            assert!(r.type_name.starts_with("aws_"), "{}", r.type_name);
            assert!(
                r.list.iter().any(|a| a == "--query"),
                "{}: list picks identities with --query",
                r.type_name
            );
            for call in [&r.describe, &r.alive].into_iter().flatten() {
                assert!(call.iter().any(|a| a.contains("{id}")), "{}", r.type_name);
            }
            assert!(
                r.arn_classes.iter().all(|c| c.contains(':')),
                "{}",
                r.type_name
            );
        }
        let pl = of_type("aws_ec2_managed_prefix_list").unwrap();
        assert_eq!(of_arn_class("ec2:managed-prefix-lists"), Some(pl));
    }
}
