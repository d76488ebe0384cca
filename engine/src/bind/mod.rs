//! Binding: each declared instance found in the live system by identity,
//! its markers checked; and the sweep, which finds what carries the
//! estate's marker and no block declares.
//!
//! - [`catalogue`] is the per-type knowledge, as data, and the families;
//! - [`marker`] reads and writes the markers;
//! - [`aws`] is the aws family's view of the live system: the tagging
//!   listing, provider facts, lookups (a second provider family would sit
//!   beside it), and [`aws_api`] its direct reads of the aws API, for the
//!   listings the provider has no data source for;
//! - [`locate`] finds a declared instance's object, [`sweep`] the objects
//!   no instance bound;
//! - [`readback`] learns which arguments a type's read cannot return, so
//!   records keep them.
//!
//! Not here: deciding what to change (the planner), changing anything
//! (apply). Binding only reads.

pub mod aws;
pub mod aws_api;
pub mod catalogue;
pub mod locate;
pub mod marker;
pub mod readback;
pub mod sweep;

use crate::provider::{Provider, ProviderError, ResourceState};
use crate::value::Value;
use std::collections::BTreeSet;

/// Objects remembered by type and handle (import ID or ARN): objects of
/// different types share IDs (a queue and its policy are both imported by
/// the queue URL, a bucket and its versioning by the bucket's name).
#[derive(Debug, Clone, Default)]
pub struct Held(BTreeSet<(String, String)>);

impl Held {
    pub fn insert(&mut self, type_name: &str, handle: &str) {
        self.0.insert((type_name.to_string(), handle.to_string()));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, type_name: &str, handle: &str) -> bool {
        self.0
            .contains(&(type_name.to_string(), handle.to_string()))
    }

    /// Remembers an object by its import ID, its own `id` (which differs
    /// for a default route table, imported by its VPC's ID) and its ARN.
    pub fn hold(&mut self, type_name: &str, id: &str, object: &Value) {
        self.insert(type_name, id);
        for attr in ["id", "arn"] {
            if let Some(handle) = object.get(attr).and_then(Value::as_str) {
                self.insert(type_name, handle);
            }
        }
    }
}

/// Import then read: the object `id` names, as its provider reads it;
/// `None` when there is no such object.
pub async fn import_read<P: Provider>(
    provider: &mut P,
    type_name: &str,
    id: &str,
) -> Result<Option<ResourceState>, ProviderError> {
    let imported = match provider.import_resource_state(type_name, id).await {
        Ok(i) => i,
        Err(e) if is_not_found(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    let Some(first) = imported.into_iter().find(|i| i.type_name == type_name) else {
        return Ok(None);
    };
    match provider.read_resource(type_name, &first.state).await {
        Ok(s) => Ok(s),
        Err(e) if is_not_found(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether a provider error says the object is not there.
pub fn is_not_found(e: &ProviderError) -> bool {
    let ProviderError::Diagnostics { diagnostics, .. } = e else {
        return false;
    };
    diagnostics.iter().any(|d| {
        let text = format!("{} {}", d.summary, d.detail).to_lowercase();
        [
            "not found",
            "notfound",
            "does not exist",
            "nosuch",
            "non-existent",
            "couldn't find",
            "no matching",
            "empty result",
            "doesnotexist",
        ]
        .iter()
        .any(|p| text.contains(p))
            || says_none_found(&text)
    })
}

/// Whether a message says "no <thing> found" ("No association found
/// between route table ID … and target ID …").
fn says_none_found(text: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .windows(3)
        .any(|w| w[0] == "no" && w[2].trim_end_matches(['.', ',', ':']) == "found")
}

#[cfg(test)]
mod tests {
    use super::says_none_found;

    #[test]
    fn a_message_saying_none_was_found_means_no_object() {
        assert!(says_none_found(
            "no association found between route table id rtb-1 and target id subnet-2"
        ));
        assert!(says_none_found("error: no route found."));
        assert!(!says_none_found("no changes were found in 3 objects"));
        assert!(!says_none_found("found no problem"));
    }
}
