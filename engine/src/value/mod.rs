//! The engine's one value model: terraform's cty types and values, shared
//! by the evaluator and the provider boundary.
//!
//! A [`Value`] is null, unknown (with a type), or known, and may carry the
//! sensitive mark. Known values are strings, [`Number`]s, bools, and the
//! collection (list, set, map) and structural (object, tuple) kinds. Sets are
//! kept in cty's canonical order. `number` is terraform's arithmetic,
//! `convert` cty's conversions and type unification. Expressions live in
//! `eval`, console printing in `eval::format`, the wire encoding in
//! `provider`.

pub mod convert;
pub mod number;
pub mod type_json;

use number::Number;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// A cty type. `Dynamic` is terraform's `any`: the type of a value whose
/// type is not yet decided, and the element type of `tolist([])`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Type {
    Dynamic,
    String,
    Number,
    Bool,
    List(Box<Type>),
    Set(Box<Type>),
    Map(Box<Type>),
    Object {
        attributes: BTreeMap<String, Type>,
        /// Attributes a conversion may leave out (they become null); a
        /// subset of `attributes`. Only types declared by a provider or a
        /// schema have any.
        optional: BTreeSet<String>,
    },
    Tuple(Vec<Type>),
}

impl Type {
    pub fn list(t: Type) -> Type {
        Type::List(Box::new(t))
    }
    pub fn set(t: Type) -> Type {
        Type::Set(Box::new(t))
    }
    pub fn map(t: Type) -> Type {
        Type::Map(Box::new(t))
    }
    /// An object type with no optional attributes.
    pub fn object(attributes: BTreeMap<String, Type>) -> Type {
        Type::Object {
            attributes,
            optional: BTreeSet::new(),
        }
    }

    pub fn is_primitive(&self) -> bool {
        matches!(self, Type::String | Type::Number | Type::Bool)
    }

    /// The element type of a list, set or map.
    pub fn element(&self) -> Option<&Type> {
        match self {
            Type::List(t) | Type::Set(t) | Type::Map(t) => Some(t),
            _ => None,
        }
    }

    /// Whether the type has `Dynamic` anywhere in it.
    pub fn has_dynamic(&self) -> bool {
        match self {
            Type::Dynamic => true,
            Type::List(t) | Type::Set(t) | Type::Map(t) => t.has_dynamic(),
            Type::Object { attributes, .. } => attributes.values().any(Type::has_dynamic),
            Type::Tuple(e) => e.iter().any(Type::has_dynamic),
            _ => false,
        }
    }

    /// The type with no optional attributes at any depth: the type of the
    /// values a conversion to this type makes (cty's
    /// `WithoutOptionalAttributesDeep`).
    pub fn without_optional(&self) -> Type {
        match self {
            Type::List(t) => Type::list(t.without_optional()),
            Type::Set(t) => Type::set(t.without_optional()),
            Type::Map(t) => Type::map(t.without_optional()),
            Type::Object { attributes, .. } => Type::object(
                attributes
                    .iter()
                    .map(|(k, t)| (k.clone(), t.without_optional()))
                    .collect(),
            ),
            Type::Tuple(ts) => Type::Tuple(ts.iter().map(Type::without_optional).collect()),
            t => t.clone(),
        }
    }

    /// cty's `FriendlyName`, as error messages and console comments use it.
    /// The name of this type as a conversion's target, as cty's
    /// `FriendlyNameForConstraint` gives it: a collection of dynamic
    /// elements is "of any single type".
    pub fn constraint_name(&self) -> String {
        match self {
            Type::Dynamic => "any type".into(),
            Type::List(t) | Type::Set(t) | Type::Map(t) => {
                let kind = match self {
                    Type::List(_) => "list",
                    Type::Set(_) => "set",
                    _ => "map",
                };
                match **t {
                    Type::Dynamic => format!("{kind} of any single type"),
                    ref e => format!("{kind} of {}", e.constraint_name()),
                }
            }
            t => t.friendly_name(),
        }
    }

    pub fn friendly_name(&self) -> String {
        match self {
            Type::Dynamic => "dynamic".into(),
            Type::String => "string".into(),
            Type::Number => "number".into(),
            Type::Bool => "bool".into(),
            Type::List(t) => format!("list of {}", t.friendly_name()),
            Type::Set(t) => format!("set of {}", t.friendly_name()),
            Type::Map(t) => format!("map of {}", t.friendly_name()),
            Type::Object { .. } => "object".into(),
            Type::Tuple(_) => "tuple".into(),
        }
    }
}

/// The known content of a value, or its absence.
#[derive(Clone, Debug)]
pub enum Kind {
    Null(Type),
    Unknown(Type),
    String(String),
    Number(Number),
    Bool(bool),
    List(Type, Vec<Value>),
    Set(Type, Vec<Value>),
    Map(Type, BTreeMap<String, Value>),
    Object(BTreeMap<String, Value>),
    Tuple(Vec<Value>),
}

/// A value with its sensitive mark.
#[derive(Clone, Debug)]
pub struct Value {
    pub kind: Kind,
    pub sensitive: bool,
}

impl From<Kind> for Value {
    fn from(kind: Kind) -> Value {
        Value {
            kind,
            sensitive: false,
        }
    }
}

impl Value {
    pub fn null(t: Type) -> Value {
        Kind::Null(t).into()
    }
    pub fn unknown(t: Type) -> Value {
        Kind::Unknown(t).into()
    }
    pub fn string(s: impl Into<String>) -> Value {
        Kind::String(s.into()).into()
    }
    pub fn number(n: Number) -> Value {
        Kind::Number(n).into()
    }
    pub fn int(i: i64) -> Value {
        Kind::Number(Number::from_i64(i)).into()
    }
    pub fn bool(b: bool) -> Value {
        Kind::Bool(b).into()
    }
    pub fn list(ety: Type, elems: Vec<Value>) -> Value {
        Kind::List(ety, elems).into()
    }
    pub fn map(ety: Type, elems: BTreeMap<String, Value>) -> Value {
        Kind::Map(ety, elems).into()
    }
    pub fn object(attrs: BTreeMap<String, Value>) -> Value {
        Kind::Object(attrs).into()
    }
    pub fn tuple(elems: Vec<Value>) -> Value {
        Kind::Tuple(elems).into()
    }

    /// A set: marks move from the elements to the set, duplicates collapse
    /// and elements take cty's order.
    pub fn set(ety: Type, elems: Vec<Value>) -> Value {
        let mut sensitive = false;
        let mut out: Vec<Value> = Vec::with_capacity(elems.len());
        for e in elems {
            sensitive |= e.has_sensitive();
            let e = e.unmark_deep();
            if !out.iter().any(|o| o.same_element(&e)) {
                out.push(e);
            }
        }
        out.sort_by(set_order);
        Value {
            kind: Kind::Set(ety, out),
            sensitive,
        }
    }

    pub fn with_sensitive(mut self, sensitive: bool) -> Value {
        self.sensitive |= sensitive;
        self
    }

    pub fn ty(&self) -> Type {
        match &self.kind {
            Kind::Null(t) | Kind::Unknown(t) => t.clone(),
            Kind::String(_) => Type::String,
            Kind::Number(_) => Type::Number,
            Kind::Bool(_) => Type::Bool,
            Kind::List(t, _) => Type::list(t.clone()),
            Kind::Set(t, _) => Type::set(t.clone()),
            Kind::Map(t, _) => Type::map(t.clone()),
            Kind::Object(a) => Type::object(a.iter().map(|(k, v)| (k.clone(), v.ty())).collect()),
            Kind::Tuple(e) => Type::Tuple(e.iter().map(Value::ty).collect()),
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.kind, Kind::Null(_))
    }

    pub fn is_known(&self) -> bool {
        !matches!(self.kind, Kind::Unknown(_))
    }

    /// Whether no unknown hides anywhere inside.
    pub fn is_wholly_known(&self) -> bool {
        match &self.kind {
            Kind::Unknown(_) => false,
            Kind::List(_, e) | Kind::Set(_, e) | Kind::Tuple(e) => {
                e.iter().all(Value::is_wholly_known)
            }
            Kind::Map(_, m) | Kind::Object(m) => m.values().all(Value::is_wholly_known),
            _ => true,
        }
    }

    /// Whether the value or anything inside it is sensitive.
    pub fn has_sensitive(&self) -> bool {
        self.sensitive
            || match &self.kind {
                Kind::List(_, e) | Kind::Set(_, e) | Kind::Tuple(e) => {
                    e.iter().any(Value::has_sensitive)
                }
                Kind::Map(_, m) | Kind::Object(m) => m.values().any(Value::has_sensitive),
                _ => false,
            }
    }

    /// The value with every sensitive mark removed, at every depth.
    pub fn unmark_deep(self) -> Value {
        let kind = match self.kind {
            Kind::List(t, e) => Kind::List(t, e.into_iter().map(Value::unmark_deep).collect()),
            Kind::Set(t, e) => Kind::Set(t, e.into_iter().map(Value::unmark_deep).collect()),
            Kind::Tuple(e) => Kind::Tuple(e.into_iter().map(Value::unmark_deep).collect()),
            Kind::Map(t, m) => Kind::Map(
                t,
                m.into_iter().map(|(k, v)| (k, v.unmark_deep())).collect(),
            ),
            Kind::Object(m) => {
                Kind::Object(m.into_iter().map(|(k, v)| (k, v.unmark_deep())).collect())
            }
            k => k,
        };
        Value {
            kind,
            sensitive: false,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_number(&self) -> Option<&Number> {
        match &self.kind {
            Kind::Number(n) => Some(n),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match &self.kind {
            Kind::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The value of an object's attribute, or of a map's element.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match &self.kind {
            Kind::Object(m) | Kind::Map(_, m) => m.get(key),
            _ => None,
        }
    }

    /// The elements of a list, set or tuple, or the values of a map or
    /// object in key order.
    pub fn elements(&self) -> Option<Vec<&Value>> {
        match &self.kind {
            Kind::List(_, e) | Kind::Set(_, e) | Kind::Tuple(e) => Some(e.iter().collect()),
            Kind::Map(_, m) | Kind::Object(m) => Some(m.values().collect()),
            _ => None,
        }
    }

    /// Structural equality of two known values, as cty's `RawEquals`
    /// would judge elements of a set.
    pub fn same_element(&self, other: &Value) -> bool {
        match (&self.kind, &other.kind) {
            (Kind::Null(a), Kind::Null(b)) => a == b,
            (Kind::Unknown(_), _) | (_, Kind::Unknown(_)) => false,
            (Kind::String(a), Kind::String(b)) => a == b,
            (Kind::Number(a), Kind::Number(b)) => a.equals(b),
            (Kind::Bool(a), Kind::Bool(b)) => a == b,
            (Kind::List(_, a), Kind::List(_, b))
            | (Kind::Set(_, a), Kind::Set(_, b))
            | (Kind::Tuple(a), Kind::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_element(y))
            }
            (Kind::Map(_, a), Kind::Map(_, b)) | (Kind::Object(a), Kind::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|((ka, va), (kb, vb))| ka == kb && va.same_element(vb))
            }
            _ => false,
        }
    }

    /// cty's set hash text, used to order sets of structural values.
    fn hash_text(&self, out: &mut String) {
        match &self.kind {
            Kind::Unknown(_) => out.push('?'),
            Kind::Null(_) => out.push('~'),
            Kind::Number(n) => out.push_str(&n.to_string_g10()),
            Kind::Bool(b) => out.push(if *b { 'T' } else { 'F' }),
            Kind::String(s) => out.push_str(&go_quote(s)),
            Kind::Map(_, m) => {
                out.push('{');
                for (k, v) in m {
                    out.push_str(&go_quote(k));
                    out.push(':');
                    v.hash_text(out);
                    out.push(';');
                }
                out.push('}');
            }
            Kind::List(_, e) | Kind::Set(_, e) => {
                out.push('[');
                for v in e {
                    v.hash_text(out);
                    out.push(';');
                }
                out.push(']');
            }
            Kind::Object(m) => {
                out.push('<');
                for v in m.values() {
                    v.hash_text(out);
                    out.push(';');
                }
                out.push('>');
            }
            Kind::Tuple(e) => {
                out.push('<');
                for v in e {
                    v.hash_text(out);
                    out.push(';');
                }
                out.push('>');
            }
        }
    }
}

/// cty's `RawEquals`: the same kind, type, content and marks; unknowns
/// of one type are equal, numbers compare by value.
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        self.sensitive == other.sensitive && self.kind == other.kind
    }
}

impl Eq for Value {}

impl PartialEq for Kind {
    fn eq(&self, other: &Kind) -> bool {
        match (self, other) {
            (Kind::Null(a), Kind::Null(b)) | (Kind::Unknown(a), Kind::Unknown(b)) => a == b,
            (Kind::String(a), Kind::String(b)) => a == b,
            (Kind::Number(a), Kind::Number(b)) => a.equals(b),
            (Kind::Bool(a), Kind::Bool(b)) => a == b,
            (Kind::List(ta, a), Kind::List(tb, b)) | (Kind::Set(ta, a), Kind::Set(tb, b)) => {
                ta == tb && a == b
            }
            (Kind::Map(ta, a), Kind::Map(tb, b)) => ta == tb && a == b,
            (Kind::Object(a), Kind::Object(b)) => a == b,
            (Kind::Tuple(a), Kind::Tuple(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Kind {}

/// The order cty gives set elements: known before unknown; strings by
/// bytes, numbers by value, false before true; anything else by hash text.
fn set_order(a: &Value, b: &Value) -> Ordering {
    match (a.is_known(), b.is_known()) {
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        (false, false) => return Ordering::Equal,
        _ => {}
    }
    match (&a.kind, &b.kind) {
        (Kind::String(x), Kind::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Kind::Number(x), Kind::Number(y)) => x.compare(y),
        (Kind::Bool(x), Kind::Bool(y)) => x.cmp(y),
        _ => {
            let (mut x, mut y) = (String::new(), String::new());
            a.hash_text(&mut x);
            b.hash_text(&mut y);
            x.as_bytes().cmp(y.as_bytes())
        }
    }
}

/// Go's `strconv.Quote`: double-quoted, with Go's escapes for control
/// characters and invalid text, printable unicode left as is.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if is_go_printable(c) => out.push(c),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// An approximation of Go's `unicode.IsPrint` that covers the control,
/// format and separator characters Go escapes (every space but U+0020).
fn is_go_printable(c: char) -> bool {
    let u = c as u32;
    !((0x80..=0xa0).contains(&u)
        || matches!(u, 0x1680 | 0x202f | 0x205f | 0x3000)
        || (0x600..=0x605).contains(&u)
        || matches!(u, 0x61c | 0x6dd | 0x70f | 0x180e)
        || u == 0xad
        || (0x2000..=0x200f).contains(&u)
        || (0x2028..=0x202e).contains(&u)
        || (0x2060..=0x206f).contains(&u)
        || u == 0xfeff
        || (0xfff9..=0xfffb).contains(&u)
        || (0xe000..=0xf8ff).contains(&u))
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.friendly_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_dedupe_and_order() {
        let s = Value::set(
            Type::String,
            vec![Value::string("b"), Value::string("a"), Value::string("b")],
        );
        let Kind::Set(_, e) = &s.kind else { panic!() };
        let got: Vec<_> = e.iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(got, ["a", "b"]);
    }

    #[test]
    fn set_elements_hand_their_mark_to_the_set() {
        let s = Value::set(Type::Number, vec![Value::int(1).with_sensitive(true)]);
        assert!(s.sensitive);
        let Kind::Set(_, e) = &s.kind else { panic!() };
        assert!(!e[0].sensitive);
    }

    #[test]
    fn go_quote_escapes_like_go() {
        assert_eq!(go_quote("a\"b\\\u{1}é\t"), "\"a\\\"b\\\\\\x01é\\t\"");
    }
}
