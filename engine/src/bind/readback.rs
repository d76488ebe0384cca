//! What a provider cannot read back, learned rather than listed.
//!
//! Terraform keeps an argument the API never returns (a Lambda function's
//! `source_code_hash`, a password) in its state from the last apply. The
//! engine finds objects by import and read, which returns such an argument
//! null, so it must know which arguments those are and keep their values
//! in the record. The catalogue names some by hand (`config_only`); the
//! rest are learned here: after an object is applied (or migrated from a
//! stock state), the arguments it holds are compared with what an import
//! and read of it return, and every one set there and null here is lost.
//!
//! The learning is per class of object and remembered for the run: a
//! type's objects that set the same arguments (a security group rule from
//! CIDR blocks, another from a prefix list) are read back alike, so each
//! class costs one import and read while it shows arguments not yet tried.
//! Objects of one type that set different arguments may not be: the read
//! of a rule from a prefix list can lose the `description` the read of a
//! rule from CIDR blocks returns. Only arguments a
//! configuration may set (required or optional) and of primitive type are
//! tried. A sensitive one (a password, a certificate's private key) is
//! tried unless the strict profile refuses secrets; the record that keeps
//! it is written encrypted. An argument the provider defaulted counts too
//! (a default security group's `revoke_rules_on_delete`, `false` in state
//! and null after an import): a plan that changes anything else of the
//! object would otherwise show it set again.
//!
//! The catalogue's own lists are overrides, and each read checks them: an
//! argument a list names that the read returns as it was applied (a
//! string or a number: a flag may match by an importer's default) is logged
//! as a warning (a list naming more than the read loses keeps values it
//! need not, and hides their drift).

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::provider::schema::Block;
use crate::provider::{Provider, ProviderError};
use crate::value::Value;

/// Attributes never tried: the markers' home and the object's own ID are
/// read back by every type.
const ALWAYS_READ: [&str; 3] = ["id", "tags", "tags_all"];

/// What one read taught of an attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Learned {
    /// The read returns it empty where the object held it.
    Lost,
    /// The read returns what the object held.
    Kept,
    /// The object held its zero value (`""`, `false`, `0`) and the read
    /// returned the same: lost or not, an object holding something else
    /// will tell.
    KeptZero,
}

/// Per class of object ([`class`]), each attribute tried and what the
/// read taught of it.
#[derive(Debug, Default)]
pub struct Readback {
    tried: RefCell<BTreeMap<String, BTreeMap<String, Learned>>>,
    /// Whether a sensitive argument may be learned, and so kept.
    secrets: bool,
}

impl Readback {
    /// `secrets`: whether sensitive arguments are tried (and, lost, kept in
    /// the record), as they are unless the strict profile refuses secrets.
    pub fn new(secrets: bool) -> Readback {
        Readback {
            tried: RefCell::default(),
            secrets,
        }
    }

    /// The attributes `applied` sets that the read of `type_name` is known
    /// to lose.
    pub fn lost(&self, type_name: &str, block: &Block, applied: &Value) -> Vec<String> {
        let tried = self.tried.borrow();
        let Some(known) = tried.get(&class(type_name, block, applied)) else {
            return Vec::new();
        };
        candidates(block, applied, self.secrets)
            .into_iter()
            .filter(|n| known.get(n) == Some(&Learned::Lost))
            .collect()
    }

    /// Whether `applied` sets an attribute not yet tried for `type_name`.
    pub fn untried(&self, type_name: &str, block: &Block, applied: &Value) -> bool {
        let tried = self.tried.borrow();
        let known = tried.get(&class(type_name, block, applied));
        candidates(block, applied, self.secrets).iter().any(|n| {
            match known.and_then(|k| k.get(n)) {
                None => true,
                Some(Learned::KeptZero) => applied.get(n).is_some_and(|v| !is_empty(v)),
                Some(_) => false,
            }
        })
    }

    /// Import and read the object `id` names, and learn which of the
    /// attributes `applied` sets the read returns empty. `listed` are the
    /// catalogue's names for the type: one the read returns is logged.
    /// Returns what [`Readback::lost`] then says; an object the import
    /// cannot find teaches nothing.
    pub async fn learn<P: Provider>(
        &self,
        provider: &mut P,
        type_name: &str,
        id: &str,
        block: &Block,
        applied: &Value,
        listed: &[&str],
    ) -> Result<Vec<String>, ProviderError> {
        if let Some(read) = super::import_read(provider, type_name, id).await? {
            let mut tried = self.tried.borrow_mut();
            let known = tried.entry(class(type_name, block, applied)).or_default();
            for name in candidates(block, applied, self.secrets) {
                let held = applied.get(&name).is_some_and(|v| !is_empty(v));
                let learned = judge(held, read.value.get(&name));
                tracing::debug!(type_name, attribute = %name, ?learned, "read back");
                // A listed argument the read returns as it was applied: a
                // value of its own (an importer's default) is still lost,
                // and a flag that matches proves nothing (importers set
                // `skip_final_snapshot = true` whatever was applied).
                let same = || {
                    let json = |v: Option<&Value>| v.and_then(crate::record::to_json);
                    let read = json(read.value.get(&name));
                    !matches!(read, Some(serde_json::Value::Bool(_)))
                        && read == json(applied.get(&name))
                };
                if learned == Learned::Kept && listed.contains(&name.as_str()) && same() {
                    tracing::warn!(
                        type_name,
                        attribute = %name,
                        "the catalogue lists an argument as never read back, but the read returned it"
                    );
                }
                let was = known.entry(name).or_insert(learned);
                if *was == Learned::KeptZero {
                    *was = learned;
                }
            }
        }
        Ok(self.lost(type_name, block, applied))
    }
}

/// What a read returning `read` teaches of an argument the object held
/// (`held`: not empty) or held empty.
fn judge(held: bool, read: Option<&Value>) -> Learned {
    match read {
        None => Learned::Lost,
        Some(r) if r.is_null() => Learned::Lost,
        Some(r) if is_empty(r) && held => Learned::Lost,
        Some(_) if held => Learned::Kept,
        Some(_) => Learned::KeptZero,
    }
}

/// The class of an object for learning: its type and the arguments it
/// sets (known, not null, not empty).
fn class(type_name: &str, block: &Block, applied: &Value) -> String {
    let set: Vec<&str> = block
        .attributes
        .iter()
        .filter(|(name, a)| {
            (a.required || a.optional)
                && !ALWAYS_READ.contains(&name.as_str())
                && applied.get(name).is_some_and(|v| {
                    v.is_known() && !is_empty(v) && v.elements().is_none_or(|e| !e.is_empty())
                })
        })
        .map(|(name, _)| name.as_str())
        .collect();
    format!("{type_name}({})", set.join(","))
}

/// Whether a value is empty: null, or the zero value an SDK provider's
/// read leaves in a field the API did not fill (`""`, `false`, `0`).
fn is_empty(v: &Value) -> bool {
    use crate::value::Kind;
    match &v.kind {
        Kind::Null(_) => true,
        Kind::String(s) => s.is_empty(),
        Kind::Bool(b) => !b,
        Kind::Number(n) => n.to_string_shortest() == "0",
        _ => false,
    }
}

/// The attributes of `applied` worth trying: an argument (required or
/// optional), of a primitive type, known and not null, and sensitive only
/// when `secrets` allows.
fn candidates(block: &Block, applied: &Value, secrets: bool) -> Vec<String> {
    block
        .attributes
        .iter()
        .filter(|(name, a)| {
            (a.required || a.optional)
                && (secrets || !a.sensitive)
                && a.ty.is_primitive()
                && !ALWAYS_READ.contains(&name.as_str())
                && applied.get(name).is_some_and(|v| {
                    v.is_known() && !v.is_null() && (secrets || !v.has_sensitive())
                })
        })
        .map(|(name, _)| name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::schema::Attribute;
    use crate::value::Type;

    fn attr(ty: Type, optional: bool, sensitive: bool) -> Attribute {
        serde_json::from_value(serde_json::json!({
            "type": ty, "optional": optional, "computed": !optional, "sensitive": sensitive
        }))
        .unwrap()
    }

    #[test]
    fn only_primitive_arguments_an_object_holds_are_tried() {
        let mut block = Block::default();
        for (name, a) in [
            ("source_code_hash", attr(Type::String, true, false)),
            ("last_modified", attr(Type::String, false, false)),
            ("password", attr(Type::String, true, true)),
            ("tags", attr(Type::map(Type::String), true, false)),
            ("layers", attr(Type::list(Type::String), true, false)),
            ("publish", attr(Type::Bool, true, false)),
            ("revoke_rules_on_delete", attr(Type::Bool, true, false)),
            ("id", attr(Type::String, true, false)),
        ] {
            block.attributes.insert(name.into(), a);
        }
        let applied = Value::object(BTreeMap::from([
            ("source_code_hash".into(), Value::string("abc")),
            ("last_modified".into(), Value::string("now")),
            ("password".into(), Value::string("s3cret")),
            (
                "tags".into(),
                Value::map(
                    Type::String,
                    BTreeMap::from([("a".into(), Value::string("b"))]),
                ),
            ),
            ("layers".into(), Value::list(Type::String, vec![])),
            ("publish".into(), Value::null(Type::Bool)),
            ("revoke_rules_on_delete".into(), Value::bool(false)),
            ("id".into(), Value::string("f")),
        ]));
        assert_eq!(
            candidates(&block, &applied, false),
            ["revoke_rules_on_delete", "source_code_hash"]
        );
        // A secret is tried only where the record may keep it.
        assert_eq!(
            candidates(&block, &applied, true),
            ["password", "revoke_rules_on_delete", "source_code_hash"]
        );

        let rb = Readback::new(false);
        assert!(rb.untried("aws_lambda_function", &block, &applied));
        rb.tried.borrow_mut().insert(
            class("aws_lambda_function", &block, &applied),
            BTreeMap::from([
                ("source_code_hash".into(), Learned::Lost),
                ("revoke_rules_on_delete".into(), Learned::KeptZero),
            ]),
        );
        assert!(!rb.untried("aws_lambda_function", &block, &applied));
        // A zero value read back as zero decides nothing for an object
        // holding something else.
        let mut other = applied.clone();
        if let crate::value::Kind::Object(m) = &mut other.kind {
            m.insert("revoke_rules_on_delete".into(), Value::bool(true));
        }
        assert!(rb.untried("aws_lambda_function", &block, &other));
        assert_eq!(
            rb.lost("aws_lambda_function", &block, &applied),
            ["source_code_hash"]
        );
        assert!(rb.lost("aws_s3_bucket", &block, &applied).is_empty());
    }

    #[test]
    fn objects_setting_other_arguments_are_learned_apart() {
        let mut block = Block::default();
        for (name, a) in [
            ("description", attr(Type::String, true, false)),
            ("cidr_blocks", attr(Type::list(Type::String), true, false)),
            (
                "prefix_list_ids",
                attr(Type::list(Type::String), true, false),
            ),
        ] {
            block.attributes.insert(name.into(), a);
        }
        let rule = |list: &str| {
            let mut m = BTreeMap::from([
                ("description".to_string(), Value::string("HTTP")),
                ("cidr_blocks".to_string(), Value::list(Type::String, vec![])),
                (
                    "prefix_list_ids".to_string(),
                    Value::list(Type::String, vec![]),
                ),
            ]);
            m.insert(
                list.into(),
                Value::list(Type::String, vec![Value::string("x")]),
            );
            Value::object(m)
        };
        let (cidr, prefix) = (rule("cidr_blocks"), rule("prefix_list_ids"));
        assert_ne!(
            class("aws_security_group_rule", &block, &cidr),
            class("aws_security_group_rule", &block, &prefix)
        );
        let rb = Readback::new(true);
        rb.tried.borrow_mut().insert(
            class("aws_security_group_rule", &block, &cidr),
            BTreeMap::from([("description".into(), Learned::Kept)]),
        );
        assert!(!rb.untried("aws_security_group_rule", &block, &cidr));
        // What the read of a rule from CIDR blocks returned says nothing
        // of a rule from a prefix list.
        assert!(rb.untried("aws_security_group_rule", &block, &prefix));
    }

    #[test]
    fn a_read_returning_nothing_or_zero_for_what_was_held_loses_it() {
        let s = |v: &str| Value::string(v.to_string());
        assert_eq!(judge(true, None), Learned::Lost);
        assert_eq!(judge(true, Some(&Value::null(Type::String))), Learned::Lost);
        assert_eq!(judge(true, Some(&s(""))), Learned::Lost);
        assert_eq!(judge(true, Some(&s("other"))), Learned::Kept);
        assert_eq!(judge(false, Some(&Value::bool(false))), Learned::KeptZero);
        assert_eq!(judge(false, None), Learned::Lost);
    }
}
