//! Printing a value the way `terraform console` prints it.
//!
//! Strings are Go-quoted, or heredocs when they span lines; lists, sets and
//! maps are wrapped in `tolist(...)`, `toset(...)`, `tomap(...)`; objects and
//! tuples print bare; a typed null names its type; an unknown prints
//! `(known after apply)` and a sensitive value `(sensitive value)`.

use crate::value::{go_quote, Kind, Type, Value};

/// Formats `v` as the console would at the top level.
pub fn console(v: &Value) -> String {
    format_value(v, 0)
}

fn format_value(v: &Value, indent: usize) -> String {
    if !v.is_known() {
        return "(known after apply)".into();
    }
    if v.sensitive {
        return "(sensitive value)".into();
    }
    match &v.kind {
        Kind::Null(t) => match t {
            Type::Dynamic => "null".into(),
            Type::String => "tostring(null)".into(),
            Type::Number => "tonumber(null)".into(),
            Type::Bool => "tobool(null)".into(),
            Type::List(e) => format!("tolist(null) /* of {} */", e.friendly_name()),
            Type::Set(e) => format!("toset(null) /* of {} */", e.friendly_name()),
            Type::Map(e) => format!("tomap(null) /* of {} */", e.friendly_name()),
            t => format!("null /* {} */", t.friendly_name()),
        },
        Kind::Unknown(_) => unreachable!("unknowns return above"),
        Kind::String(s) => multiline(s, indent).unwrap_or_else(|| go_quote(s)),
        Kind::Number(n) => n.to_string_shortest(),
        Kind::Bool(b) => b.to_string(),
        Kind::Object(m) => mapping(m.iter(), indent),
        Kind::Map(_, m) => format!("tomap({})", mapping(m.iter(), indent)),
        Kind::Tuple(e) => sequence(e, indent),
        Kind::List(_, e) => format!("tolist({})", sequence(e, indent)),
        Kind::Set(_, e) => format!("toset({})", sequence(e, indent)),
    }
}

fn multiline(s: &str, indent: usize) -> Option<String> {
    let lines: Vec<&str> = s.split('\n').collect();
    if lines.len() < 2 {
        return None;
    }
    let op = if indent > 0 { "<<-" } else { "<<" };
    let mut delim = "EOT".to_string();
    while lines.iter().any(|l| l.trim() == delim) {
        delim.push('_');
    }
    let pad = " ".repeat(indent);
    let mut out = format!("{op}{delim}");
    for l in lines {
        out.push('\n');
        out.push_str(&pad);
        out.push_str(l);
    }
    out.push('\n');
    out.push_str(&pad);
    out.push_str(&delim);
    Some(out)
}

fn mapping<'a>(entries: impl Iterator<Item = (&'a String, &'a Value)>, indent: usize) -> String {
    let mut out = String::from("{");
    let inner = indent + 2;
    let mut count = 0;
    for (k, v) in entries {
        count += 1;
        out.push('\n');
        out.push_str(&" ".repeat(inner));
        out.push_str(&go_quote(k));
        out.push_str(" = ");
        out.push_str(&format_value(v, inner));
    }
    if count > 0 {
        out.push('\n');
        out.push_str(&" ".repeat(indent));
    }
    out.push('}');
    out
}

fn sequence(elems: &[Value], indent: usize) -> String {
    let mut out = String::from("[");
    let inner = indent + 2;
    for v in elems {
        out.push('\n');
        out.push_str(&" ".repeat(inner));
        out.push_str(&format_value(v, inner));
        out.push(',');
    }
    if !elems.is_empty() {
        out.push('\n');
        out.push_str(&" ".repeat(indent));
    }
    out.push(']');
    out
}
