//! terraform's JSON configuration syntax (`*.tf.json`), read into the same
//! block structure a `.tf` file gives, so that everything after `config`
//! sees one kind of configuration.
//!
//! The file is parsed as JSON (with spans, and hcl's JSON parser's errors),
//! then written out as an HCL object expression of exactly the same layout:
//! every JSON string becomes the quoted template hcl would parse from it
//! (or, for a key that is an identifier, that bare identifier), padded to
//! its original length. Parsing that text once gives expressions whose byte
//! spans are the JSON file's own, so diagnostics point into the `.tf.json`
//! file. The object is then taken apart by terraform's block structure:
//! top-level keys are block types, label levels are nested keys, an array
//! of objects is several blocks, and `"//"` keys are comments. Strings that
//! terraform reads as references or types (`depends_on`, `provider`,
//! `ignore_changes`, a variable's `type`, ...) are parsed as expressions;
//! those it reads without evaluating (a variable's `default`,
//! `description`) stay literal.
//!
//! Which keys of a resource or provider body are nested blocks is the
//! provider schema's decision, made when the body is decoded:
//! [`split_blocks`] turns the arguments the schema calls blocks into
//! blocks. Never evaluates.

use crate::diag::{Diagnostic, Diagnostics};
use crate::source::SourceFile;
use hcl_edit::expr::{Expression, ObjectKey};
use hcl_edit::structure::{Attribute, Block, BlockLabel, Body};
use hcl_edit::{Decorated, Ident};
use std::collections::HashMap;
use std::ops::Range;

/// A JSON syntax error, in hcl's JSON parser's words.
#[derive(Debug, thiserror::Error)]
#[error("{summary}: {detail}")]
pub struct SyntaxError {
    summary: &'static str,
    detail: String,
    span: Range<usize>,
}

impl SyntaxError {
    fn new(summary: &'static str, detail: impl Into<String>, span: Range<usize>) -> SyntaxError {
        SyntaxError {
            summary,
            detail: detail.into(),
            span,
        }
    }

    fn diagnostic(&self, file: &SourceFile) -> Diagnostic {
        Diagnostic::error(self.summary, self.detail.clone()).at(file.range(self.span.clone()))
    }
}

/// A JSON value with the byte span it was written at.
#[derive(Debug)]
struct Node {
    kind: NodeKind,
    span: Range<usize>,
}

#[derive(Debug)]
enum NodeKind {
    /// What could not be parsed (the parser went on after it).
    Invalid,
    Scalar,
    String(String),
    Array(Vec<Node>),
    Object(Vec<(String, Range<usize>, Node)>),
}

struct Parser<'a> {
    b: &'a [u8],
    text: &'a str,
    pos: usize,
    /// Errors inside objects and arrays, each leaving an invalid value
    /// behind, as hcl's parser reports several and goes on.
    errors: Vec<SyntaxError>,
}

const VALUE_START: &str =
    "A JSON value must start with a brace, a bracket, a number, a string, or a keyword.";

impl Parser<'_> {
    fn ws(&mut self) {
        while self
            .b
            .get(self.pos)
            .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.pos).copied()
    }

    /// The span of the token at the cursor (one character, or the end).
    fn here(&self) -> Range<usize> {
        let len = self.text[self.pos..]
            .chars()
            .next()
            .map_or(0, char::len_utf8);
        self.pos..self.pos + len
    }

    fn value(&mut self, in_array: bool) -> Result<Node, SyntaxError> {
        match self.peek() {
            None => Err(SyntaxError::new(
                "Missing value",
                "The JSON data ends prematurely.",
                self.here(),
            )),
            Some(open @ (b'{' | b'[')) => {
                let start = self.pos;
                let parsed = if open == b'{' {
                    self.object()
                } else {
                    self.array()
                };
                Ok(parsed.unwrap_or_else(|e| {
                    self.errors.push(e);
                    Node {
                        kind: NodeKind::Invalid,
                        span: start..start + 1,
                    }
                }))
            }
            Some(b'"') => {
                let (s, span) = self.string()?;
                Ok(Node {
                    kind: NodeKind::String(s),
                    span,
                })
            }
            Some(c) if c == b'-' || c.is_ascii_digit() => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => self.keyword(),
            Some(b',' | b']' | b'}') => Err(SyntaxError::new(
                if in_array {
                    "Missing array element value"
                } else {
                    "Missing JSON value"
                },
                VALUE_START,
                self.here(),
            )),
            Some(_) => Err(SyntaxError::new(
                "Invalid start of value",
                VALUE_START,
                self.here(),
            )),
        }
    }

    fn object(&mut self) -> Result<Node, SyntaxError> {
        let start = self.pos;
        self.pos += 1;
        let mut props = Vec::new();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Node {
                kind: NodeKind::Object(props),
                span: start..self.pos,
            });
        }
        loop {
            match self.peek() {
                Some(b'"') => {}
                None => {
                    return Err(SyntaxError::new(
                        "Unclosed object",
                        "No closing brace was found for this JSON object.",
                        start..start + 1,
                    ))
                }
                Some(_) => {
                    return Err(SyntaxError::new(
                        "Invalid object property name",
                        "A JSON object property name must be a string",
                        self.here(),
                    ))
                }
            }
            let (name, name_span) = self.string()?;
            match self.peek() {
                Some(b':') => self.pos += 1,
                Some(b'=') => {
                    let at = self.here();
                    self.recover(b'{', b'}');
                    return Err(SyntaxError::new(
                        "Missing property value colon",
                        "JSON uses a colon as its name/value delimiter, not an equals sign.",
                        at,
                    ));
                }
                _ => {
                    let at = self.here();
                    self.recover(b'{', b'}');
                    return Err(SyntaxError::new(
                        "Missing property value colon",
                        "A colon must appear between an object property's name and its value.",
                        at,
                    ));
                }
            }
            let value = self.value(false)?;
            props.push((name, name_span, value));
            match self.peek() {
                Some(b',') => {
                    let comma = self.here();
                    self.pos += 1;
                    if self.peek() == Some(b'}') {
                        return Err(SyntaxError::new(
                            "Trailing comma in object",
                            "JSON does not permit a trailing comma after the final property in an object.",
                            comma,
                        ));
                    }
                }
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Node {
                        kind: NodeKind::Object(props),
                        span: start..self.pos,
                    });
                }
                Some(b']') => {
                    return Err(SyntaxError::new(
                        "Mismatched braces",
                        "A JSON object must be closed with a brace, not a bracket.",
                        self.here(),
                    ))
                }
                None => {
                    return Err(SyntaxError::new(
                        "Unclosed object",
                        "No closing brace was found for this JSON object.",
                        start..start + 1,
                    ))
                }
                Some(_) => {
                    self.recover(b'{', b'}');
                    self.ws();
                    return Err(SyntaxError::new(
                        "Missing attribute seperator comma",
                        "A comma must appear between each property definition in an object.",
                        self.here(),
                    ));
                }
            }
        }
    }

    fn array(&mut self) -> Result<Node, SyntaxError> {
        let start = self.pos;
        self.pos += 1;
        let mut values = Vec::new();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Node {
                kind: NodeKind::Array(values),
                span: start..self.pos,
            });
        }
        loop {
            if self.peek().is_none() {
                return Err(SyntaxError::new(
                    "Unclosed object",
                    "No closing bracket was found for this JSON array.",
                    start..start + 1,
                ));
            }
            values.push(self.value(true)?);
            match self.peek() {
                Some(b',') => {
                    let comma = self.here();
                    self.pos += 1;
                    if self.peek() == Some(b']') {
                        return Err(SyntaxError::new(
                            "Trailing comma in array",
                            "JSON does not permit a trailing comma after the final value in an array.",
                            comma,
                        ));
                    }
                }
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Node {
                        kind: NodeKind::Array(values),
                        span: start..self.pos,
                    });
                }
                Some(b':') => {
                    return Err(SyntaxError::new(
                        "Invalid array value",
                        "A colon is not used to introduce values in a JSON array.",
                        self.here(),
                    ))
                }
                Some(b'}') => {
                    return Err(SyntaxError::new(
                        "Mismatched brackets",
                        "A JSON array must be closed with a bracket, not a brace.",
                        self.here(),
                    ))
                }
                None => {
                    return Err(SyntaxError::new(
                        "Unclosed object",
                        "No closing bracket was found for this JSON array.",
                        start..start + 1,
                    ))
                }
                Some(_) => {
                    self.recover(b'[', b']');
                    self.ws();
                    return Err(SyntaxError::new(
                        "Missing attribute seperator comma",
                        "A comma must appear between each value in an array.",
                        self.here(),
                    ));
                }
            }
        }
    }

    /// Moves past the end of the object or array being read after an error
    /// at the cursor, as hcl's parser recovers: up to and including the
    /// first closing `close` not matched by an `open` met on the way.
    fn recover(&mut self, open: u8, close: u8) {
        let mut depth = 1;
        while let Some(c) = self.peek() {
            if c == b'"' {
                let _ = self.string();
                continue;
            }
            self.pos += 1;
            if c == open {
                depth += 1;
            } else if c == close {
                depth -= 1;
                if depth <= 1 {
                    return;
                }
            }
        }
    }

    /// A string token at the cursor: its decoded value and its span,
    /// quotes included.
    fn string(&mut self) -> Result<(String, Range<usize>), SyntaxError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        let bad = |at: usize| {
            SyntaxError::new(
                "Invalid JSON string",
                "There is a syntax error in the given JSON string.",
                start..at,
            )
        };
        loop {
            let Some(c) = self.text[self.pos..].chars().next() else {
                return Err(bad(self.pos));
            };
            self.pos += c.len_utf8();
            match c {
                '"' => return Ok((out, start..self.pos)),
                '\\' => {
                    let esc = self.b.get(self.pos).copied().ok_or_else(|| bad(self.pos))?;
                    self.pos += 1;
                    match esc {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4().ok_or_else(|| bad(self.pos))?;
                            let code = if (0xD800..0xDC00).contains(&hi)
                                && self.text[self.pos..].starts_with("\\u")
                            {
                                self.pos += 2;
                                let lo = self.hex4().ok_or_else(|| bad(self.pos))?;
                                0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF)
                            } else {
                                hi
                            };
                            out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                        }
                        _ => return Err(bad(self.pos)),
                    }
                }
                c if (c as u32) < 0x20 => return Err(bad(self.pos)),
                c => out.push(c),
            }
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.text.get(self.pos..self.pos + 4)?;
        let v = u32::from_str_radix(digits, 16).ok()?;
        self.pos += 4;
        Some(v)
    }

    fn number(&mut self) -> Result<Node, SyntaxError> {
        let start = self.pos;
        let digits = |p: &mut Self| {
            let s = p.pos;
            while p.b.get(p.pos).is_some_and(u8::is_ascii_digit) {
                p.pos += 1;
            }
            p.pos > s
        };
        if self.b[self.pos] == b'-' {
            self.pos += 1;
        }
        let int_start = self.pos;
        let mut ok = digits(self);
        ok &= !(self.b.get(int_start) == Some(&b'0') && self.pos - int_start > 1);
        if self.b.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            ok &= digits(self);
        }
        if matches!(self.b.get(self.pos), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.b.get(self.pos), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            ok &= digits(self);
        }
        while self
            .b
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'.')
        {
            self.pos += 1;
            ok = false;
        }
        if !ok {
            return Err(SyntaxError::new(
                "Invalid JSON number",
                "There is a syntax error in the given JSON number.",
                start..self.pos,
            ));
        }
        Ok(Node {
            kind: NodeKind::Scalar,
            span: start..self.pos,
        })
    }

    fn keyword(&mut self) -> Result<Node, SyntaxError> {
        let start = self.pos;
        while self
            .b
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            self.pos += 1;
        }
        let word = &self.text[start..self.pos];
        match word {
            "true" | "false" | "null" => Ok(Node {
                kind: NodeKind::Scalar,
                span: start..self.pos,
            }),
            "undefined" | "NaN" | "Infinity" => Err(SyntaxError::new(
                "Invalid JSON keyword",
                format!("The JavaScript identifier {word:?} cannot be used in JSON."),
                start..self.pos,
            )),
            _ => Err(SyntaxError::new(
                "Invalid JSON keyword",
                format!("{word:?} is not a valid JSON keyword."),
                start..self.pos,
            )),
        }
    }
}

/// Parses a JSON document, with the span of every value.
/// Parses a JSON document, with the span of every value, and every error
/// met (each leaving an invalid value behind).
fn parse_json(text: &str) -> (Node, Vec<SyntaxError>) {
    let mut p = Parser {
        b: text.as_bytes(),
        text,
        pos: 0,
        errors: Vec::new(),
    };
    let root = match p.value(false) {
        Ok(root) => root,
        Err(e) => {
            p.errors.push(e);
            Node {
                kind: NodeKind::Invalid,
                span: 0..0,
            }
        }
    };
    if p.errors.is_empty() && p.peek().is_some() {
        p.errors.push(SyntaxError::new(
            "Extraneous data after value",
            "Extra characters appear after the JSON value.",
            p.here(),
        ));
    }
    (root, p.errors)
}

/// The errors terraform adds for invalid values where blocks were
/// expected: a top-level block type's labels and contents.
fn invalid_blocks(root: &Node, file: &SourceFile, diags: &mut Diagnostics) {
    let NodeKind::Object(props) = &root.kind else {
        return;
    };
    for (name, _, value) in props {
        if let Some((labels, _)) = Kind::top(name) {
            invalid_block(name, value, labels, file, diags);
        }
    }
}

fn invalid_block(
    kind: &str,
    node: &Node,
    labels: usize,
    file: &SourceFile,
    diags: &mut Diagnostics,
) {
    let at = file.range(node.span.start..node.span.start + 1);
    match &node.kind {
        NodeKind::Invalid if labels > 0 => diags.push(
            Diagnostic::error(
                "Incorrect JSON value type",
                "Either a JSON object or JSON array of objects is required here, to specify block labels for this block.",
            )
            .at(at),
        ),
        NodeKind::Invalid => diags.push(
            Diagnostic::error(
                "Incorrect JSON value type",
                format!("Either a JSON object or a JSON array is required, representing the contents of one or more {kind:?} blocks."),
            )
            .at(at),
        ),
        NodeKind::Object(props) if labels > 0 => {
            for (_, _, v) in props {
                invalid_block(kind, v, labels - 1, file, diags);
            }
        }
        NodeKind::Array(items) if labels > 0 => {
            for item in items {
                invalid_block(kind, item, labels, file, diags);
            }
        }
        _ => {}
    }
}

/// Keys written as bare identifiers in the HCL rendering. Words that HCL's
/// object syntax reads specially stay quoted.
fn bare_key(name: &str) -> bool {
    Ident::try_new(name).is_ok() && !matches!(name, "for" | "true" | "false" | "null" | "if" | "in")
}

/// The HCL rendering of `node` written over `out` (the JSON text, same
/// length), and every string's decoded value by the offset of its quote.
fn render(node: &Node, out: &mut [u8], strings: &mut HashMap<usize, String>) {
    match &node.kind {
        NodeKind::Invalid | NodeKind::Scalar => {}
        NodeKind::String(s) => {
            place(out, node.span.clone(), &quoted_template(s));
            strings.insert(node.span.start, s.clone());
        }
        NodeKind::Array(items) => items.iter().for_each(|i| render(i, out, strings)),
        NodeKind::Object(props) => {
            for (name, span, value) in props {
                let text = if bare_key(name) {
                    format!(" {name}")
                } else {
                    quoted_template(name)
                };
                place(out, span.clone(), &text);
                strings.insert(span.start, name.clone());
                render(value, out, strings);
            }
        }
    }
}

/// Writes `text` at `span`, padded with spaces. A rendering is never longer
/// than the JSON it replaces: every character that needs an escape in HCL
/// needed one in JSON too, and interpolations are copied as decoded.
fn place(out: &mut [u8], span: Range<usize>, text: &str) {
    let slot = &mut out[span];
    slot.fill(b' ');
    slot[..text.len()].copy_from_slice(text.as_bytes());
}

/// A decoded JSON string as the HCL quoted template with the same value:
/// literal text escaped, `${...}` and `%{...}` sequences copied as they are.
fn quoted_template(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::from("\"");
    let mut i = 0;
    let mut lit_start = 0;
    let flush = |out: &mut String, lit: &str| {
        for c in lit.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c => out.push(c),
            }
        }
    };
    while i < b.len() {
        if b[i..].starts_with(b"$${") || b[i..].starts_with(b"%%{") {
            i += 3;
        } else if b[i..].starts_with(b"${") || b[i..].starts_with(b"%{") {
            flush(&mut out, &s[lit_start..i]);
            let end = sequence_end(b, i + 2);
            out.push_str(&s[i..end]);
            i = end;
            lit_start = i;
        } else {
            i += 1;
        }
    }
    flush(&mut out, &s[lit_start..]);
    out.push('"');
    out
}

/// The end of a `${` or `%{` sequence whose body starts at `i`: after its
/// matching brace, skipping quoted strings (and the templates in them).
fn sequence_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 1;
    while i < b.len() {
        match b[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    } else if b[i..].starts_with(b"${") || b[i..].starts_with(b"%{") {
                        i = sequence_end(b, i + 2) - 1;
                    }
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// What a JSON object stands for, which decides which of its keys are
/// nested blocks and which strings are read as expressions.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Terraform,
    Provider,
    Variable,
    Locals,
    Output,
    Module,
    Resource,
    Lifecycle,
    Check,
    Moved,
    Import,
    /// Only arguments (`validation`, `precondition`, `backend`, ...).
    Plain,
    /// A body decoded later against a schema: its arguments and nested
    /// blocks are told apart then; `dynamic` blocks are read now.
    Schema,
}

impl Kind {
    fn top(name: &str) -> Option<(usize, Kind)> {
        Some(match name {
            "terraform" => (0, Kind::Terraform),
            "provider" => (1, Kind::Provider),
            "variable" => (1, Kind::Variable),
            "locals" => (0, Kind::Locals),
            "output" => (1, Kind::Output),
            "module" => (1, Kind::Module),
            "resource" | "data" | "ephemeral" => (2, Kind::Resource),
            "moved" => (0, Kind::Moved),
            "import" => (0, Kind::Import),
            "check" => (1, Kind::Check),
            "removed" => (0, Kind::Plain),
            _ => return None,
        })
    }

    /// The nested block types of this kind of body: labels and kind.
    fn nested(self, name: &str) -> Option<(usize, Kind)> {
        Some(match (self, name) {
            (Kind::Terraform, "required_providers" | "cloud") => (0, Kind::Plain),
            (Kind::Terraform, "backend" | "provider_meta") => (1, Kind::Plain),
            (Kind::Variable, "validation") => (0, Kind::Plain),
            (Kind::Output, "precondition") => (0, Kind::Plain),
            (Kind::Resource, "lifecycle") => (0, Kind::Lifecycle),
            (Kind::Resource, "provisioner") => (1, Kind::Schema),
            (Kind::Resource, "connection") => (0, Kind::Plain),
            (Kind::Lifecycle, "precondition" | "postcondition") => (0, Kind::Plain),
            (Kind::Check, "assert") => (0, Kind::Plain),
            (Kind::Check, "data") => (2, Kind::Resource),
            _ => return None,
        })
    }

    /// How terraform reads a string given for argument `name`.
    fn reading(self, name: &str) -> Reading {
        match (self, name) {
            (Kind::Variable, "type") => Reading::Expression,
            (Kind::Variable, "default" | "description")
            | (Kind::Output | Kind::Module, "description" | "source" | "version")
            | (Kind::Provider, "alias" | "version")
            | (Kind::Terraform, "required_version") => Reading::Literal,
            (Kind::Resource | Kind::Output | Kind::Module, "depends_on")
            | (Kind::Lifecycle, "ignore_changes" | "replace_triggered_by") => Reading::Expressions,
            (Kind::Resource | Kind::Import, "provider") | (Kind::Moved, "from" | "to") => {
                Reading::Expression
            }
            (Kind::Import, "to") => Reading::Expression,
            (Kind::Module, "providers") => Reading::ExpressionMap,
            _ => Reading::Template,
        }
    }
}

/// How a JSON string is read.
enum Reading {
    /// As a string template (most arguments).
    Template,
    /// As the string it is, with no interpolation.
    Literal,
    /// As an expression (a reference, a type).
    Expression,
    /// An array (or single string) of expressions.
    Expressions,
    /// An object whose keys and values are expressions.
    ExpressionMap,
}

/// The translation of one file: its text, the decoded strings, the problems.
struct Translator<'a> {
    file: &'a SourceFile,
    strings: HashMap<usize, String>,
    diags: Diagnostics,
}

/// Reads a `.tf.json` file into a body of blocks. Errors are returned with
/// the body built from what could be read.
pub fn body(file: &SourceFile) -> (Body, Diagnostics) {
    let mut diags = Diagnostics::default();
    let (root, errors) = parse_json(file.text());
    if !errors.is_empty() {
        invalid_blocks(&root, file, &mut diags);
        for e in &errors {
            diags.push(e.diagnostic(file));
        }
        return (Body::new(), diags);
    }
    let mut hcl = file.text().as_bytes().to_vec();
    let mut strings = HashMap::new();
    render(&root, &mut hcl, &mut strings);
    let text = String::from_utf8(hcl).expect("renderings replace whole UTF-8 strings");
    let expr = match parse_at(&text[root.span.clone()], root.span.start) {
        Ok(e) => e,
        Err(d) => {
            diags.push(d.diagnostic(file));
            return (Body::new(), diags);
        }
    };
    let mut t = Translator {
        file,
        strings,
        diags,
    };
    let mut body = Body::new();
    for (key, value) in t.properties(expr, None) {
        let name = key_name(&key);
        if name == "//" {
            continue;
        }
        let Some((labels, kind)) = Kind::top(&name) else {
            t.extraneous(&key, &name);
            continue;
        };
        let Some(ident) = t.ident(key, &name) else {
            continue;
        };
        for block in t.blocks(&ident, value, labels, kind) {
            body.push(block);
        }
    }
    (body, t.diags)
}

/// Parses `src`, the text at byte `offset` of the file, as an HCL
/// expression whose spans are the file's. The parser takes no whitespace
/// around its input, so the expression is put in parentheses that start
/// the padding.
fn parse_at(src: &str, offset: usize) -> Result<Expression, SyntaxError> {
    if offset == 0 {
        return hcl_edit::parser::parse_expr(src).map_err(|e| syntax_error(src, &e));
    }
    let text = format!("({}{src})", " ".repeat(offset - 1));
    match hcl_edit::parser::parse_expr(&text) {
        Ok(Expression::Parenthesis(p)) => Ok(p.into_inner()),
        Ok(e) => Ok(e),
        Err(e) => Err(syntax_error(&text, &e)),
    }
}

/// An HCL syntax error (inside a JSON string) at its place in the file.
fn syntax_error(text: &str, e: &hcl_edit::parser::Error) -> SyntaxError {
    let loc = e.location();
    let line_start: usize = text
        .split_inclusive('\n')
        .take(loc.line().saturating_sub(1))
        .map(str::len)
        .sum();
    let at = line_start
        + text[line_start..]
            .chars()
            .take(loc.column().saturating_sub(1))
            .map(char::len_utf8)
            .sum::<usize>();
    let message = e.message().trim_end_matches('.');
    let mut c = message.chars();
    let message: String = c
        .next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default();
    SyntaxError::new("Invalid expression", format!("{message}."), at..at + 1)
}

fn key_name(key: &ObjectKey) -> String {
    match key {
        ObjectKey::Ident(i) => i.as_str().to_string(),
        ObjectKey::Expression(e) => super::literal(e)
            .and_then(|k| match k {
                crate::value::Kind::String(s) => Some(s),
                _ => None,
            })
            .unwrap_or_default(),
    }
}

fn key_span(key: &ObjectKey) -> Range<usize> {
    match key {
        ObjectKey::Ident(i) => super::span_of(i),
        ObjectKey::Expression(e) => super::span_of(e),
    }
}

impl Translator<'_> {
    /// The properties of an object, or of every object in an array of
    /// objects. `labels` names the label being read, for the errors.
    fn properties(
        &mut self,
        value: Expression,
        label: Option<&str>,
    ) -> Vec<(ObjectKey, Expression)> {
        let span = super::span_of(&value);
        match value {
            Expression::Null(_) => Vec::new(),
            Expression::Object(o) => o.into_iter().map(|(k, v)| (k, v.into_expr())).collect(),
            Expression::Array(a) => {
                let mut out = Vec::new();
                for item in a {
                    if matches!(item, Expression::Object(_)) {
                        out.extend(self.properties(item, label));
                    } else {
                        let detail = match label {
                            Some(l) => format!("A JSON object is required here, to specify {l} labels for this block."),
                            None => "A JSON object is required here, to define arguments and child blocks.".to_string(),
                        };
                        self.wrong_type(detail, super::span_of(&item));
                    }
                }
                out
            }
            _ => {
                let detail = match label {
                    Some(l) => format!("Either a JSON object or JSON array of objects is required here, to specify {l} labels for this block."),
                    None => "Either a JSON object or JSON array of objects is required here, to define arguments and child blocks.".to_string(),
                };
                self.wrong_type(detail, span);
                Vec::new()
            }
        }
    }

    fn wrong_type(&mut self, detail: String, span: Range<usize>) {
        self.diags.push(
            Diagnostic::error("Incorrect JSON value type", detail)
                .at(self.file.range(span.start..span.start + 1)),
        );
    }

    fn extraneous(&mut self, key: &ObjectKey, name: &str) {
        self.diags.push(
            Diagnostic::error(
                "Extraneous JSON object property",
                format!("No argument or block type is named {name:?}."),
            )
            .at(self.file.range(key_span(key))),
        );
    }

    /// A key as an identifier (a block type or an argument name).
    fn ident(&mut self, key: ObjectKey, name: &str) -> Option<Decorated<Ident>> {
        match key {
            ObjectKey::Ident(i) => Some(i),
            key => {
                self.extraneous(&key, name);
                None
            }
        }
    }

    /// The blocks of type `ident` a JSON value gives: `labels` levels of
    /// nested keys, then an object (one block) or an array of objects.
    fn blocks(
        &mut self,
        ident: &Decorated<Ident>,
        value: Expression,
        labels: usize,
        kind: Kind,
    ) -> Vec<Block> {
        let mut out = Vec::new();
        self.unpack(ident, value, labels, &mut Vec::new(), kind, &mut out);
        out
    }

    fn unpack(
        &mut self,
        ident: &Decorated<Ident>,
        value: Expression,
        labels_left: usize,
        labels: &mut Vec<BlockLabel>,
        kind: Kind,
        out: &mut Vec<Block>,
    ) {
        if labels_left > 0 {
            let span = super::span_of(&value);
            let props = self.properties(value, Some("block"));
            if props.is_empty() {
                self.diags.push(
                    Diagnostic::error(
                        "Missing block label",
                        format!(
                            "At least one object property is required, whose name represents the {} block's label.",
                            ident.as_str()
                        ),
                    )
                    .at(self.file.range(span.start..span.start + 1)),
                );
            }
            for (key, v) in props {
                labels.push(match key {
                    ObjectKey::Ident(i) => BlockLabel::Ident(i),
                    ObjectKey::Expression(Expression::String(s)) => BlockLabel::String(s),
                    key => BlockLabel::from(key_name(&key)),
                });
                self.unpack(ident, v, labels_left - 1, labels, kind, out);
                labels.pop();
            }
            return;
        }
        let items = match value {
            Expression::Null(_) => return,
            Expression::Array(a) => a.into_iter().collect(),
            Expression::Object(_) => vec![value],
            other => {
                let span = super::span_of(&other);
                self.wrong_type(
                    format!("Either a JSON object or a JSON array is required, representing the contents of one or more {:?} blocks.", ident.as_str()),
                    span,
                );
                return;
            }
        };
        for item in items {
            let body = self.body(item, kind);
            let mut block = Block::new(ident.clone());
            block.labels = labels.clone();
            block.body = body;
            out.push(block);
        }
    }

    /// A block body from a JSON object (or array of objects).
    fn body(&mut self, value: Expression, kind: Kind) -> Body {
        let mut body = Body::new();
        for (key, value) in self.properties(value, None) {
            let name = key_name(&key);
            if name == "//" {
                continue;
            }
            let Some(ident) = self.ident(key, &name) else {
                continue;
            };
            if let Some((labels, nested)) = kind.nested(&name) {
                for b in self.blocks(&ident, value, labels, nested) {
                    body.push(b);
                }
            } else if name == "dynamic"
                && matches!(kind, Kind::Resource | Kind::Provider | Kind::Schema)
            {
                for b in self.blocks(&ident, value, 1, Kind::Schema) {
                    body.push(dynamic_content(b, self));
                }
            } else {
                let value = self.read(value, kind.reading(&name));
                body.push(Attribute::new(ident, value));
            }
        }
        body
    }

    /// An argument's value read as terraform reads that argument.
    fn read(&mut self, value: Expression, reading: Reading) -> Expression {
        match reading {
            Reading::Template => value,
            Reading::Literal => self.literal(value),
            Reading::Expression => self.expression(value),
            Reading::Expressions => match value {
                Expression::Array(mut a) => {
                    for e in a.iter_mut() {
                        *e = self.expression(std::mem::replace(e, Expression::null()));
                    }
                    Expression::Array(a)
                }
                other => self.expression(other),
            },
            Reading::ExpressionMap => match value {
                Expression::Object(o) => {
                    let mut out = hcl_edit::expr::Object::new();
                    for (k, v) in o {
                        let k = match k {
                            ObjectKey::Expression(e) => ObjectKey::Expression(self.expression(e)),
                            ident => ident,
                        };
                        out.insert(
                            k,
                            hcl_edit::expr::ObjectValue::new(self.expression(v.into_expr())),
                        );
                    }
                    Expression::Object(out)
                }
                other => other,
            },
        }
    }

    /// A string with no interpolation: a template's text taken as written.
    fn literal(&mut self, value: Expression) -> Expression {
        match value {
            Expression::StringTemplate(t) => {
                let span = super::span_of(&t);
                match self.strings.get(&span.start) {
                    Some(s) => Expression::String(Decorated::new(s.clone())),
                    None => Expression::StringTemplate(t),
                }
            }
            Expression::Array(mut a) => {
                for e in a.iter_mut() {
                    *e = self.literal(std::mem::replace(e, Expression::null()));
                }
                Expression::Array(a)
            }
            Expression::Object(mut o) => {
                for (_, v) in o.iter_mut() {
                    let e = v.expr_mut();
                    *e = self.literal(std::mem::replace(e, Expression::null()));
                }
                Expression::Object(o)
            }
            other => other,
        }
    }

    /// A string read as an HCL expression, at the string's place in the
    /// file. Anything but a string is kept (and refused later as
    /// terraform refuses it).
    fn expression(&mut self, value: Expression) -> Expression {
        if !matches!(value, Expression::String(_) | Expression::StringTemplate(_)) {
            return value;
        }
        let span = super::span_of(&value);
        let Some(src) = self.strings.get(&span.start) else {
            return value;
        };
        match parse_at(src, span.start + 1) {
            Ok(e) => e,
            Err(e) => {
                self.diags.push(e.diagnostic(self.file));
                value
            }
        }
    }
}

/// A `dynamic` block read from JSON: its `content` argument is the block
/// that describes each generated block.
fn dynamic_content(mut block: Block, t: &mut Translator<'_>) -> Block {
    if let Some(content) = block.body.remove_attribute("content") {
        let ident = content.key.clone();
        for b in t.blocks(&ident, content.value, 0, Kind::Schema) {
            block.body.push(b);
        }
    }
    block
}

/// A JSON body decoded against a schema: each argument the schema calls a
/// nested block (`labels` is its label count: 1 for map nesting) becomes
/// the blocks its value gives; everything else stays an argument.
pub(crate) fn split_blocks(
    body: &Body,
    file: &SourceFile,
    block_labels: impl Fn(&str) -> Option<usize>,
    diags: &mut Diagnostics,
) -> Body {
    let mut t = Translator {
        file,
        strings: HashMap::new(),
        diags: Diagnostics::default(),
    };
    let mut out = Body::new();
    for s in body.iter() {
        match s {
            hcl_edit::structure::Structure::Attribute(a) => match block_labels(a.key.as_str()) {
                Some(labels) => {
                    for b in t.blocks(&a.key, a.value.clone(), labels, Kind::Schema) {
                        out.push(b);
                    }
                }
                None => out.push(a.clone()),
            },
            hcl_edit::structure::Structure::Block(b) => out.push(b.clone()),
        }
    }
    diags.extend(t.diags);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_render_as_templates_no_longer_than_the_json() {
        assert_eq!(quoted_template("a \"b\"\n"), r#""a \"b\"\n""#);
        assert_eq!(
            quoted_template(r#"${lookup(m, "k")} $${x}"#),
            r#""${lookup(m, "k")} $${x}""#
        );
    }

    #[test]
    fn dynamic_blocks_and_meta_arguments_are_read_from_json() {
        let file = SourceFile::new(
            "main.tf.json",
            r#"{"resource": {"aws_security_group": {"g": {
  "depends_on": ["aws_vpc.v"],
  "dynamic": {"ingress": {"for_each": "${var.ports}", "content": {"from_port": "${ingress.value}"}}}
}}}}"#,
        );
        let (body, diags) = body(&file);
        assert!(diags.is_empty(), "{diags:?}");
        let r = body.blocks().next().unwrap();
        assert_eq!(
            r.labels.iter().map(|l| l.as_str()).collect::<Vec<_>>(),
            ["aws_security_group", "g"]
        );
        let deps = r.body.get_attribute("depends_on").unwrap();
        assert!(
            matches!(&deps.value, Expression::Array(a) if matches!(a.get(0), Some(Expression::Traversal(_))))
        );
        let d = r.body.blocks().next().unwrap();
        assert_eq!(d.ident.as_str(), "dynamic");
        assert_eq!(d.labels[0].as_str(), "ingress");
        assert!(d.body.has_attribute("for_each"));
        let content = d.body.blocks().next().unwrap();
        assert_eq!(content.ident.as_str(), "content");
        assert_eq!(
            file.range(super::super::span_of(
                &content.body.get_attribute("from_port").unwrap().value
            ))
            .start
            .line,
            3
        );
    }
}
