//! Diagnostics in terraform's shape: severity, summary, detail and the
//! source range they are about, rendered as terraform renders them (the
//! boxed, coloured form, `-no-color`, and `-json`).

use crate::source::{Range, SourceFile};
use std::collections::BTreeMap;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    fn word(self) -> &'static str {
        match self {
            Severity::Error => "Error",
            Severity::Warning => "Warning",
        }
    }
}

/// One problem found in configuration or while evaluating it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub summary: String,
    pub detail: String,
    /// The source range the problem is about.
    pub subject: Option<Range>,
    /// The enclosing block, as terraform names it after "in": `locals`,
    /// `resource "aws_sqs_queue" "q"`.
    pub context: Option<String>,
    /// The resource instance a provider's diagnostic is about
    /// (`with aws_sqs_queue.q,`).
    pub address: Option<String>,
    /// The attribute of the object a provider's diagnostic is about.
    pub attribute: Option<crate::provider::path::AttributePath>,
}

impl Diagnostic {
    pub fn error(summary: impl Into<String>, detail: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            summary: summary.into(),
            detail: detail.into(),
            subject: None,
            context: None,
            address: None,
            attribute: None,
        }
    }

    pub fn warning(summary: impl Into<String>, detail: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(summary, detail)
        }
    }

    pub fn at(mut self, range: Range) -> Diagnostic {
        self.subject = Some(range);
        self
    }

    pub fn in_context(mut self, context: Option<String>) -> Diagnostic {
        self.context = context;
        self
    }

    pub fn about(mut self, address: impl Into<String>) -> Diagnostic {
        self.address = Some(address.into());
        self
    }

    /// The diagnostic as one line of a provider's answer:
    /// `Error: summary (at rule[0].id): detail`.
    pub fn provider_line(&self) -> String {
        let mut s = format!("{}: {}", self.severity.word(), self.summary);
        if let Some(path) = self.attribute.as_ref().filter(|p| !p.0.is_empty()) {
            s.push_str(&format!(" (at {path})"));
        }
        if !self.detail.is_empty() {
            s.push_str(&format!(": {}", self.detail));
        }
        s
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(r) = &self.subject {
            write!(f, "{}:{}: ", r.filename, r.start.line)?;
        }
        write!(f, "{}: {}", self.summary, self.detail)
    }
}

/// Many diagnostics at once: terraform reports every problem it can find,
/// not only the first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }

    pub fn extend(&mut self, other: Diagnostics) {
        self.0.extend(other.0);
    }

    pub fn has_errors(&self) -> bool {
        self.0.iter().any(Diagnostic::is_error)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter()
    }

    pub fn errors(&self) -> usize {
        self.0.iter().filter(|d| d.is_error()).count()
    }

    pub fn warnings(&self) -> usize {
        self.0.len() - self.errors()
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Self {
        Diagnostics(vec![d])
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// The files diagnostics point into, by name, for their snippets.
#[derive(Debug, Clone, Default)]
pub struct Sources(BTreeMap<String, SourceFile>);

impl Sources {
    pub fn add(&mut self, file: SourceFile) {
        self.0.insert(file.name().to_string(), file);
    }

    pub fn get(&self, name: &str) -> Option<&SourceFile> {
        self.0.get(name)
    }

    /// Adds every file of `other`.
    pub fn extend(&mut self, other: &Sources) {
        self.0
            .extend(other.0.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
}

/// How to draw diagnostics for a person.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
    /// How long a detail's lines may be, without colour: terraform wraps
    /// them one column short of the 78 it takes a stream that is not a
    /// terminal to have; the coloured box takes two more.
    pub width: usize,
}

impl Style {
    pub fn new(color: bool) -> Style {
        Style { color, width: 77 }
    }
}

/// The words after "in" that name where a diagnostic's subject is: in a
/// native-syntax file, the top-level block around it, found in the file
/// as terraform finds it; in a JSON file, what the diagnostic says.
fn context(d: &Diagnostic, sources: &Sources) -> Option<String> {
    let r = d.subject.as_ref()?;
    let file = sources.get(&r.filename)?;
    match file.is_json() {
        true => d.context.clone(),
        false => file
            .context(r.start.byte.checked_sub(1)?)
            .map(str::to_string),
    }
}

/// One diagnostic as terraform draws it on the terminal.
pub fn render(d: &Diagnostic, sources: &Sources, style: Style) -> String {
    let mut lines = vec![String::new()];
    if let Some(a) = &d.address {
        lines.push(format!("  with {a},"));
    }
    if let Some(r) = &d.subject {
        let mut on = format!("  on {} line {}", r.filename, r.start.line);
        if let Some(c) = context(d, sources) {
            on.push_str(&format!(", in {c}"));
        }
        on.push(':');
        lines.push(on);
        match sources.get(&r.filename) {
            Some(file) => {
                for n in r.start.line..=r.end.line.max(r.start.line) {
                    lines.push(format!("{n:>4}: {}", file.line(n)));
                }
            }
            None => lines.push("  (source code not available)".to_string()),
        }
        lines.push(String::new());
    }
    let width = if style.color {
        style.width - 2
    } else {
        style.width
    };
    if !d.detail.is_empty() {
        lines.extend(wrap(&d.detail, width));
    }
    let title = d.severity.word();
    if !style.color {
        let mut out = format!("\n{title}: {}\n", d.summary);
        for l in &lines {
            out.push_str(l);
            out.push('\n');
        }
        return out;
    }
    let tint = match d.severity {
        Severity::Error => "\x1b[31m",
        Severity::Warning => "\x1b[33m",
    };
    let bar = format!("{tint}│\x1b[0m \x1b[0m");
    let mut out = format!("{tint}{tint}╷\x1b[0m\x1b[0m\n");
    out.push_str(&format!(
        "{bar}\x1b[1m{tint}{title}: \x1b[0m\x1b[0m\x1b[1m{}\x1b[0m\n",
        d.summary
    ));
    for l in &lines {
        out.push_str(&format!("{bar}{l}\n"));
    }
    out.push_str(&format!("{tint}╵\x1b[0m\x1b[0m\n"));
    out
}

/// All diagnostics, errors and warnings, as terraform prints them.
pub fn render_all(diags: &Diagnostics, sources: &Sources, style: Style) -> String {
    diags.iter().map(|d| render(d, sources, style)).collect()
}

/// A diagnostic as terraform's JSON views write it (`validate -json`),
/// its fields in terraform's order.
#[derive(Debug, serde::Serialize)]
pub struct JsonDiagnostic {
    severity: &'static str,
    summary: String,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    address: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    range: Option<JsonRange>,
    #[serde(skip_serializing_if = "Option::is_none")]
    snippet: Option<JsonSnippet>,
}

#[derive(Debug, serde::Serialize)]
struct JsonRange {
    filename: String,
    start: JsonPos,
    end: JsonPos,
}

#[derive(Debug, serde::Serialize)]
struct JsonPos {
    line: usize,
    column: usize,
    byte: usize,
}

#[derive(Debug, serde::Serialize)]
struct JsonSnippet {
    context: Option<String>,
    code: String,
    start_line: usize,
    highlight_start_offset: usize,
    highlight_end_offset: usize,
    values: [(); 0],
}

/// `d` as terraform's JSON views write a diagnostic, with its snippet
/// when `sources` holds its file.
pub fn to_json(d: &Diagnostic, sources: &Sources) -> JsonDiagnostic {
    let pos = |p: &crate::source::Pos| JsonPos {
        line: p.line,
        column: p.column,
        byte: p.byte,
    };
    let range = d.subject.as_ref().map(|r| JsonRange {
        filename: r.filename.to_string(),
        start: pos(&r.start),
        end: pos(&r.end),
    });
    let snippet = d.subject.as_ref().and_then(|r| {
        let file = sources.get(&r.filename)?;
        let code = file.line(r.start.line);
        let line_start = r.start.byte + 1 - r.start.column.min(r.start.byte + 1);
        let highlight_end = if r.end.line == r.start.line {
            r.end.byte - line_start
        } else {
            code.len()
        };
        Some(JsonSnippet {
            context: context(d, sources),
            code: code.to_string(),
            start_line: r.start.line,
            highlight_start_offset: r.start.byte - line_start,
            highlight_end_offset: highlight_end,
            values: [],
        })
    });
    JsonDiagnostic {
        severity: match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        },
        summary: d.summary.clone(),
        detail: d.detail.clone(),
        address: d.address.clone(),
        range,
        snippet,
    }
}

/// Greedy word wrap of each line of `text` at `width` columns, as
/// terraform wraps diagnostic details; indented lines are left alone.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for para in text.split('\n') {
        if para.starts_with(' ') {
            lines.push(para.to_string());
            continue;
        }
        let mut cur = String::new();
        for word in para.split(' ') {
            if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > width {
                lines.push(std::mem::take(&mut cur));
            } else if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(word);
        }
        lines.push(cur);
    }
    lines
}

/// terraform's "Did you mean" hint: the closest declared name within an
/// edit distance of 2, if any.
pub fn suggest<'a>(given: &str, names: impl Iterator<Item = &'a String>) -> String {
    names
        .map(|n| (levenshtein(given, n), n))
        .filter(|(d, _)| *d < 3)
        .min()
        .map(|(_, n)| format!(" Did you mean \"{n}\"?"))
        .unwrap_or_default()
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_terraform_without_colour() {
        let file = SourceFile::new("main.tf", "locals {\n  x = var.nope\n}\n");
        let mut sources = Sources::default();
        sources.add(file.clone());
        let start = file.text().find("var").unwrap();
        let d = Diagnostic::error(
            "Reference to undeclared input variable",
            "An input variable with the name \"nope\" has not been declared. This variable can be declared with a variable \"nope\" {} block.",
        )
        .at(file.range(start..start + 8))
        .in_context(Some("locals".into()));
        let text = render(&d, &sources, Style::new(false));
        assert_eq!(
            text,
            "\nError: Reference to undeclared input variable\n\n  on main.tf line 2, in locals:\n   2:   x = var.nope\n\nAn input variable with the name \"nope\" has not been declared. This variable\ncan be declared with a variable \"nope\" {} block.\n"
        );
        let j = serde_json::to_value(to_json(&d, &sources)).unwrap();
        assert_eq!(j["range"]["start"]["column"], 7);
        assert_eq!(j["snippet"]["highlight_start_offset"], 6);
        assert_eq!(j["snippet"]["highlight_end_offset"], 14);
    }

    #[test]
    fn suggests_close_names() {
        let names = ["queue".to_string(), "bucket".to_string()];
        assert_eq!(suggest("quee", names.iter()), " Did you mean \"queue\"?");
        assert_eq!(suggest("zzz", names.iter()), "");
    }
}
