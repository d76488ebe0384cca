//! `yamlencode` and `yamldecode`, as terraform's go-cty-yaml has them.
//!
//! The encoder writes what that library's YAML emitter (libyaml's, ported
//! to Go) writes for a cty value: block style, two-space indentation, every
//! string double-quoted unless it spans lines (then a literal block where
//! YAML allows one), numbers in full precision, long quoted strings folded
//! at column 80, keys longer than 128 bytes or spanning lines as complex
//! keys, and `...` after a document left open (a bare scalar at the root).
//!
//! The decoder reads YAML 1.2 with the yaml-rust2 parser and gives each
//! node the type go-cty-yaml's implied-type conversion gives it: a mapping
//! is an object, a sequence a tuple, a quoted scalar a string, and a plain
//! scalar what its text resolves to (null, bool, number or string).

use super::{Func, Param};
use crate::value::convert::convert;
use crate::value::number::Number;
use crate::value::{Kind, Type, Value};
use regex::Regex;
use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;
use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::{Marker, ScanError, TScalarStyle};

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "yamlencode" => Func::new(
            vec![Param::new("value", Type::Dynamic).nullable()],
            Type::String,
            |a| Ok(Value::string(encode(&a[0]))),
        ),
        "yamldecode" => Func::new(vec![Param::new("src", Type::String)], Type::Dynamic, |a| {
            decode(a[0].as_str().unwrap_or_default())
        }),
        _ => return None,
    })
}

// ---- encoding ------------------------------------------------------------

const BEST_INDENT: usize = 2;
const BEST_WIDTH: usize = 80;
const SIMPLE_KEY_MAX: usize = 128;

/// How a scalar asks to be written.
#[derive(Clone, Copy, PartialEq)]
enum Style {
    Plain,
    DoubleQuoted,
    Literal,
}

/// Where a node sits, as the emitter tracks it.
#[derive(Clone, Copy, Default)]
struct Context {
    root: bool,
    mapping: bool,
    simple_key: bool,
}

/// The emitter's state: what it has written and where its cursor is.
struct Emitter {
    out: String,
    column: usize,
    /// The last character written was whitespace (or nothing yet).
    whitespace: bool,
    /// Only indentation is on the current line so far.
    indention: bool,
    /// The document needs `...` to close it.
    open_ended: bool,
    indent: Option<usize>,
    indents: Vec<Option<usize>>,
}

/// The text `yamlencode` gives a value.
pub(super) fn encode(v: &Value) -> String {
    let mut e = Emitter {
        out: String::new(),
        column: 0,
        whitespace: true,
        indention: true,
        open_ended: false,
        indent: None,
        indents: Vec::new(),
    };
    e.node(
        v,
        Context {
            root: true,
            ..Context::default()
        },
    );
    // Document end, then stream end.
    e.write_indent();
    if e.open_ended {
        e.indicator("...", true, false, false);
        e.write_indent();
    }
    e.out
}

impl Emitter {
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    fn write_indent(&mut self) {
        let indent = self.indent.unwrap_or(0);
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn indicator(
        &mut self,
        text: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        for c in text.chars() {
            self.put(c);
        }
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
        self.open_ended = false;
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        self.indent = Some(match self.indent {
            None => {
                if flow {
                    BEST_INDENT
                } else {
                    0
                }
            }
            Some(i) if !indentless => i + BEST_INDENT,
            Some(i) => i,
        });
    }

    fn decrease_indent(&mut self) {
        self.indent = self.indents.pop().flatten();
    }

    fn node(&mut self, v: &Value, ctx: Context) {
        match &v.kind {
            Kind::Null(_) | Kind::Unknown(_) => self.scalar("null", Style::Plain, ctx),
            Kind::Bool(b) => self.scalar(if *b { "true" } else { "false" }, Style::Plain, ctx),
            Kind::Number(n) => self.scalar(&n.to_string_shortest(), Style::Plain, ctx),
            Kind::String(s) => {
                let style = if s.contains('\n') {
                    Style::Literal
                } else {
                    Style::DoubleQuoted
                };
                self.scalar(s, style, ctx)
            }
            Kind::List(_, items) | Kind::Set(_, items) | Kind::Tuple(items) => {
                self.sequence(items, ctx)
            }
            Kind::Map(_, entries) | Kind::Object(entries) => self.mapping(entries),
        }
    }

    fn sequence(&mut self, items: &[Value], ctx: Context) {
        if items.is_empty() {
            return self.empty_flow("[", "]");
        }
        self.increase_indent(false, ctx.mapping && !self.indention);
        for item in items {
            self.write_indent();
            self.indicator("-", true, false, true);
            self.node(item, Context::default());
        }
        self.decrease_indent();
    }

    fn mapping(&mut self, entries: &BTreeMap<String, Value>) {
        if entries.is_empty() {
            return self.empty_flow("{", "}");
        }
        self.increase_indent(false, false);
        for (key, value) in entries {
            self.write_indent();
            let value_ctx = Context {
                mapping: true,
                ..Context::default()
            };
            if key.len() <= SIMPLE_KEY_MAX && !Analysis::of(key).multiline {
                let key_ctx = Context {
                    mapping: true,
                    simple_key: true,
                    ..Context::default()
                };
                self.node(&Value::string(key.as_str()), key_ctx);
                self.indicator(":", false, false, false);
            } else {
                self.indicator("?", true, false, true);
                self.node(&Value::string(key.as_str()), value_ctx);
                self.write_indent();
                self.indicator(":", true, false, true);
            }
            self.node(value, value_ctx);
        }
        self.decrease_indent();
    }

    fn empty_flow(&mut self, open: &str, close: &str) {
        self.indicator(open, true, true, false);
        self.increase_indent(true, false);
        self.decrease_indent();
        self.indicator(close, false, false, false);
    }

    fn scalar(&mut self, text: &str, requested: Style, ctx: Context) {
        let analysis = Analysis::of(text);
        let mut style = requested;
        if ctx.simple_key && analysis.multiline {
            style = Style::DoubleQuoted;
        }
        if style == Style::Literal && (!analysis.block_allowed || ctx.simple_key) {
            style = Style::DoubleQuoted;
        }
        self.increase_indent(true, false);
        match style {
            Style::Plain => self.plain(text, ctx.root),
            Style::DoubleQuoted => self.double_quoted(text, !ctx.simple_key),
            Style::Literal => self.literal(text),
        }
        self.decrease_indent();
    }

    fn plain(&mut self, text: &str, root: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        for c in text.chars() {
            self.put(c);
        }
        self.whitespace = false;
        self.indention = false;
        if root {
            self.open_ended = true;
        }
    }

    fn double_quoted(&mut self, text: &str, allow_breaks: bool) {
        self.indicator("\"", true, false, false);
        let chars: Vec<char> = text.chars().collect();
        let mut spaces = false;
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if !printable(c) || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                match c {
                    '\0' => self.put('0'),
                    '\u{7}' => self.put('a'),
                    '\u{8}' => self.put('b'),
                    '\t' => self.put('t'),
                    '\n' => self.put('n'),
                    '\u{b}' => self.put('v'),
                    '\u{c}' => self.put('f'),
                    '\r' => self.put('r'),
                    '\u{1b}' => self.put('e'),
                    '"' => self.put('"'),
                    '\\' => self.put('\\'),
                    '\u{85}' => self.put('N'),
                    '\u{2028}' => self.put('L'),
                    '\u{2029}' => self.put('P'),
                    _ => {
                        let code = u32::from(c);
                        let (tag, width) = match code {
                            0..=0xff => ('x', 2),
                            0x100..=0xffff => ('u', 4),
                            _ => ('U', 8),
                        };
                        self.put(tag);
                        for ch in format!("{code:0width$X}").chars() {
                            self.put(ch);
                        }
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i != 0
                    && i != chars.len() - 1
                {
                    self.write_indent();
                    if chars.get(i + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
            i += 1;
        }
        self.indicator("\"", false, false, false);
    }

    fn literal(&mut self, text: &str) {
        self.indicator("|", true, false, false);
        let first = text.chars().next();
        if first.is_some_and(|c| c == ' ' || is_break(c)) {
            self.indicator(&BEST_INDENT.to_string(), false, false, false);
        }
        let mut tail = text.chars().rev();
        let chomp = match (tail.next(), tail.next()) {
            (Some(last), _) if !is_break(last) => Some("-"),
            (Some(_), None) => Some("+"),
            (Some(_), Some(before)) if is_break(before) => Some("+"),
            (Some(_), Some(_)) => None,
            (None, _) => Some("-"),
        };
        if let Some(chomp) = chomp {
            self.indicator(chomp, false, false, false);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for c in text.chars() {
            if is_break(c) {
                if c == '\n' {
                    self.put_break();
                } else {
                    self.out.push(c);
                    self.column = 0;
                }
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                    breaks = false;
                }
                self.put(c);
                self.indention = false;
            }
        }
    }
}

/// What the emitter learns of a scalar before choosing how to write it.
struct Analysis {
    multiline: bool,
    block_allowed: bool,
}

impl Analysis {
    fn of(text: &str) -> Analysis {
        let chars: Vec<char> = text.chars().collect();
        let (mut special, mut multiline) = (false, false);
        let (mut trailing_space, mut space_break) = (false, false);
        let mut previous_space = false;
        for (i, &c) in chars.iter().enumerate() {
            let last = i + 1 == chars.len();
            special |= !printable(c);
            if is_break(c) {
                multiline = true;
                space_break |= previous_space;
            }
            trailing_space |= c == ' ' && last;
            previous_space = c == ' ';
        }
        Analysis {
            multiline,
            block_allowed: !(chars.is_empty() || trailing_space || space_break || special),
        }
    }
}

/// The characters libyaml writes as they are (U+FEFF, the byte order mark,
/// is not among them).
fn printable(c: char) -> bool {
    matches!(u32::from(c),
        0x0a | 0x20..=0x7e | 0xa0..=0xd7ff | 0xe000..=0xfefe | 0xff00..=0xfffd)
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

// ---- decoding ------------------------------------------------------------

const CORE: &str = "tag:yaml.org,2002:";

/// The value `yamldecode` gives a YAML document.
fn decode(src: &str) -> Result<Value, String> {
    let mut d = Decoder {
        src,
        parser: Parser::new_from_str(src),
        anchors: HashMap::new(),
    };
    let (mut event, mut mark) = d.next()?;
    if matches!(event, Event::StreamStart) {
        (event, mark) = d.next()?;
    }
    if !matches!(event, Event::DocumentStart) {
        return Err(at_line(mark.line().max(2), 0, "missing start of document"));
    }
    let (event, mark) = d.next()?;
    let value = d.node(event, mark)?;
    let (end, _) = d.next()?;
    let (event, mark) = d.next()?;
    if !matches!(end, Event::DocumentEnd) || !matches!(event, Event::StreamEnd) {
        return Err(at(&mark, "unexpected extra content after value"));
    }
    Ok(value)
}

/// An error at `mark`, worded as terraform words it: go-cty-yaml counts
/// lines from 0 and columns from 1, and names no place on the first line.
fn at(mark: &Marker, message: &str) -> String {
    at_line(mark.line(), mark.col(), message)
}

/// `at` for a parser line counted from 1 and a column counted from 0.
fn at_line(line: usize, col: usize, message: &str) -> String {
    match line.saturating_sub(1) {
        0 => message.to_string(),
        line => format!("on line {line}, column {}: {message}", col + 1),
    }
}

/// A parser error in libyaml's words where the two parsers say the same
/// thing differently.
fn parse_error(src: &str, e: &ScanError) -> String {
    let info = e.info();
    if info.ends_with("found unknown anchor") {
        let name: String = src
            .get(e.marker().index() + 1..)
            .unwrap_or_default()
            .chars()
            .take_while(|c| !c.is_whitespace() && !",[]{}".contains(*c))
            .collect();
        return format!("reference to undefined anchor {name:?}");
    }
    let problem = match info.split_once(", ") {
        Some((context, problem)) if context.starts_with("while ") => problem,
        _ => info,
    };
    let problem = match problem.strip_prefix("expected ") {
        Some(rest) => format!("did not find expected {rest}"),
        None => problem.to_string(),
    };
    at(e.marker(), &problem)
}

struct Decoder<'a> {
    src: &'a str,
    parser: Parser<std::str::Chars<'a>>,
    anchors: HashMap<usize, Value>,
}

impl Decoder<'_> {
    fn next(&mut self) -> Result<(Event, Marker), String> {
        let src = self.src;
        self.parser.next_token().map_err(|e| parse_error(src, &e))
    }

    fn node(&mut self, event: Event, mark: Marker) -> Result<Value, String> {
        let (value, anchor) = match event {
            Event::Alias(id) => {
                return self
                    .anchors
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| at(&mark, "reference to an undefined anchor"))
            }
            Event::Scalar(text, style, anchor, tag) => (scalar(&text, style, tag)?, anchor),
            Event::SequenceStart(anchor, tag) => {
                collection_tag(tag, "seq", "sequence")?;
                let mut items = Vec::new();
                loop {
                    let (event, mark) = self.next()?;
                    if matches!(event, Event::SequenceEnd) {
                        break;
                    }
                    items.push(self.node(event, mark)?);
                }
                (Value::tuple(items), anchor)
            }
            Event::MappingStart(anchor, tag) => {
                collection_tag(tag, "map", "mapping")?;
                (self.mapping()?, anchor)
            }
            other => return Err(format!("on line {}: unexpected {other:?}", mark.line())),
        };
        if anchor > 0 {
            self.anchors.insert(anchor, value.clone());
        }
        Ok(value)
    }

    fn mapping(&mut self) -> Result<Value, String> {
        let mut entries = BTreeMap::new();
        loop {
            let (event, mark) = self.next()?;
            if matches!(event, Event::MappingEnd) {
                break;
            }
            let merge =
                matches!(&event, Event::Scalar(t, TScalarStyle::Plain, _, None) if t == "<<");
            let key = match &event {
                Event::Scalar(..) | Event::Alias(_) => self.node(event, mark)?,
                _ => return Err("only strings are allowed as mapping keys".into()),
            };
            let (event, value_mark) = self.next()?;
            let value = self.node(event, value_mark)?;
            if merge {
                let Kind::Object(merged) = value.kind else {
                    let what = value.ty().friendly_name();
                    return Err(at(&mark, &format!("cannot merge {what} into mapping")));
                };
                entries.extend(merged);
                continue;
            }
            let key = match &key.kind {
                Kind::Null(_) => return Err(at(&mark, "mapping key cannot be null")),
                Kind::String(_) | Kind::Number(_) | Kind::Bool(_) => {
                    convert(key, &Type::String).map_err(|e| e.message)?
                }
                _ => return Err("only strings are allowed as mapping keys".into()),
            };
            entries.insert(key.as_str().unwrap_or_default().to_string(), value);
        }
        Ok(Value::object(entries))
    }
}

/// A tag's full name (`!!str` is `tag:yaml.org,2002:str`).
fn tag_name(tag: Tag) -> String {
    format!("{}{}", tag.handle, tag.suffix)
}

fn collection_tag(tag: Option<Tag>, core: &str, what: &str) -> Result<(), String> {
    match tag.map(tag_name) {
        None => Ok(()),
        Some(t) if t.strip_prefix(CORE) == Some(core) => Ok(()),
        Some(t) => Err(format!("can't interpret {what} as {t}")),
    }
}

/// A scalar's value: quoted text is a string; plain text resolves by its
/// tag, or without one by what it looks like.
fn scalar(text: &str, style: TScalarStyle, tag: Option<Tag>) -> Result<Value, String> {
    let tag = tag.map(tag_name);
    let core = match &tag {
        None => None,
        Some(t) => match t.strip_prefix(CORE) {
            Some(c @ ("str" | "null" | "bool" | "int" | "float" | "timestamp" | "binary")) => {
                Some(c)
            }
            _ => return Err(format!("unsupported tag {t:?}")),
        },
    };
    if style != TScalarStyle::Plain || core == Some("str") {
        return Ok(Value::string(text));
    }
    let cannot = |t: &str| format!("cannot parse {text:?} as {CORE}{t}");
    match core {
        None => resolve(text),
        Some("null") => Ok(Value::null(Type::Dynamic)),
        Some("binary") => super::encoding::base64_decode(text)
            .map(|_| Value::string(text))
            .map_err(|_| format!("{}: not valid base64", cannot("binary"))),
        Some("timestamp") => timestamp(text)
            .map(Value::string)
            .ok_or_else(|| cannot("timestamp")),
        // A bool, int or float tag takes whatever the text resolves to,
        // as long as that is not a string.
        Some(t) => match resolve(text)? {
            v if matches!(v.kind, Kind::String(_)) => Err(cannot(t)),
            v => Ok(v),
        },
    }
}

/// YAML 1.2's core-schema numbers, integers included.
static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$").expect("valid")
});

/// What untagged plain text means: YAML 1.1's booleans and nulls, YAML
/// 1.2's numbers, timestamps as RFC 3339 strings, and otherwise the text.
fn resolve(text: &str) -> Result<Value, String> {
    match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Ok(Value::bool(true))
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Ok(Value::bool(false))
        }
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Value::null(Type::Dynamic)),
        ".nan" | ".NaN" | ".NAN" => return Err("floating point NaN is not supported".into()),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Ok(Value::number(Number::infinity(false)))
        }
        "-.inf" | "-.Inf" | "-.INF" => return Ok(Value::number(Number::infinity(true))),
        _ => {}
    }
    if let Some(t) = timestamp(text) {
        return Ok(Value::string(t));
    }
    let radix = |digits: &str, radix: u32| {
        u64::from_str_radix(digits, radix)
            .ok()
            .and_then(|n| Number::parse(&n.to_string()))
            .map(Value::number)
            .ok_or_else(|| format!("cannot parse {text:?} as {CORE}int"))
    };
    if let Some(octal) = text.strip_prefix("0o").filter(|d| is_digits(d, 8)) {
        return radix(octal, 8);
    }
    if let Some(hex) = text.strip_prefix("0x").filter(|d| is_digits(d, 16)) {
        return radix(hex, 16);
    }
    if NUMBER.is_match(text) {
        if let Some(n) = Number::parse(text) {
            return Ok(Value::number(n));
        }
    }
    Ok(Value::string(text))
}

fn is_digits(s: &str, radix: u32) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_digit(radix))
}

/// A YAML timestamp in one of the forms terraform accepts, as RFC 3339.
fn timestamp(text: &str) -> Option<String> {
    let b = text.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return None;
    }
    let mut p = Cursor { b, i: 5 };
    let year: u32 = text[..4].parse().ok()?;
    let month = p.number()?;
    p.literal(b'-')?;
    let day = p.number()?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let date = format!("{year:04}-{month:02}-{day:02}");
    if p.done() {
        return Some(format!("{date}T00:00:00Z"));
    }
    let zoned = match p.next()? {
        b'T' | b't' => true,
        b' ' => false,
        _ => return None,
    };
    let hour = p.number()?;
    p.literal(b':')?;
    let minute = p.number()?;
    p.literal(b':')?;
    let second = p.number()?;
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    if p.peek() == Some(b'.') && p.b.get(p.i + 1).is_some_and(u8::is_ascii_digit) {
        p.i += 1;
        while p.peek().is_some_and(|c| c.is_ascii_digit()) {
            p.i += 1;
        }
    }
    let zone = if zoned {
        match p.next()? {
            b'Z' => String::from("Z"),
            sign @ (b'+' | b'-') => {
                let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
                let rest = p.b.get(p.i..p.i + 5)?;
                if !digits(&rest[..2]) || rest[2] != b':' || !digits(&rest[3..]) {
                    return None;
                }
                p.i += 5;
                let (h, m) = (&text[p.i - 5..p.i - 3], &text[p.i - 2..p.i]);
                if h == "00" && m == "00" {
                    String::from("Z")
                } else {
                    format!("{}{h}:{m}", sign as char)
                }
            }
            _ => return None,
        }
    } else {
        String::from("Z")
    };
    p.done()
        .then(|| format!("{date}T{hour:02}:{minute:02}:{second:02}{zone}"))
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }
    fn done(&self) -> bool {
        self.i == self.b.len()
    }
    fn literal(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }
    /// One or two digits, as Go's time layouts without a leading zero read them.
    fn number(&mut self) -> Option<u32> {
        let first = self.peek().filter(u8::is_ascii_digit)?;
        self.i += 1;
        let mut n = u32::from(first - b'0');
        if let Some(second) = self.peek().filter(u8::is_ascii_digit) {
            self.i += 1;
            n = n * 10 + u32::from(second - b'0');
        }
        Some(n)
    }
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nested_document_encodes_in_block_style() {
        let v = Value::object(BTreeMap::from([
            (
                "a".to_string(),
                Value::tuple(vec![Value::int(1), Value::string("x\ny")]),
            ),
            ("b".to_string(), Value::object(BTreeMap::new())),
        ]));
        assert_eq!(encode(&v), "\"a\":\n- 1\n- |-\n  x\n  y\n\"b\": {}\n");
        assert_eq!(encode(&Value::int(7)), "7\n...\n");
    }

    #[test]
    fn timestamps_read_as_go_reads_them() {
        assert_eq!(
            timestamp("2001-12-14t21:59:43.10-05:00").as_deref(),
            Some("2001-12-14T21:59:43-05:00")
        );
        assert_eq!(
            timestamp("2001-2-3").as_deref(),
            Some("2001-02-03T00:00:00Z")
        );
        assert_eq!(timestamp("2001-02-29"), None);
        assert_eq!(timestamp("2001-12-14 21:59:43.10 -5"), None);
    }

    #[test]
    fn plain_text_resolves_as_terraform_resolves_it() {
        let kind = |t: &str| resolve(t).unwrap().kind;
        assert!(matches!(kind("yes"), Kind::Bool(true)));
        assert!(matches!(kind("1_000"), Kind::String(_)));
        assert!(matches!(kind("0x1F"), Kind::Number(n) if n.to_i64() == Some(31)));
        assert!(resolve(".nan").is_err());
    }
}
