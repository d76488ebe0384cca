//! Source files and positions in them, as diagnostics report them.
//!
//! terraform counts lines and columns from 1 and columns in characters;
//! byte offsets count from 0. A [`SourceFile`] turns the byte spans the
//! parser records into those positions and keeps the text for snippets.

use std::fmt;
use std::ops::Range as Bytes;
use std::sync::{Arc, OnceLock};

/// One position in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
    pub byte: usize,
}

/// A range in one file, as terraform's JSON diagnostics carry it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    pub filename: Arc<str>,
    pub start: Pos,
    pub end: Pos,
}

impl fmt::Display for Range {
    /// terraform's short form: `main.tf:1,1-29`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{},{}-",
            self.filename, self.start.line, self.start.column
        )?;
        if self.end.line != self.start.line {
            write!(f, "{},", self.end.line)?;
        }
        write!(f, "{}", self.end.column)
    }
}

/// A configuration file's name (as the user sees it) and text.
#[derive(Debug, Clone)]
pub struct SourceFile {
    name: Arc<str>,
    text: Arc<str>,
    line_starts: Arc<[usize]>,
    /// Its top-level blocks, read when first asked.
    blocks: Arc<OnceLock<Vec<Header>>>,
}

/// A top-level block's byte span and header (its type and quoted labels).
type Header = (Bytes<usize>, String);

impl SourceFile {
    pub fn new(name: impl Into<Arc<str>>, text: impl Into<Arc<str>>) -> SourceFile {
        let text: Arc<str> = text.into();
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SourceFile {
            name: name.into(),
            text,
            line_starts,
            blocks: Arc::default(),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the file is in terraform's JSON syntax, which terraform
    /// decides by the name's extension.
    pub fn is_json(&self) -> bool {
        self.name.ends_with(".json")
    }

    /// The position of a byte offset (clamped to the text).
    pub fn pos(&self, byte: usize) -> Pos {
        let byte = byte.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= byte);
        let start = self.line_starts[line - 1];
        let column = self
            .text
            .get(start..byte)
            .map_or(byte - start, |s| s.chars().count())
            + 1;
        Pos { line, column, byte }
    }

    /// The range of a byte span.
    pub fn range(&self, span: Bytes<usize>) -> Range {
        Range {
            filename: self.name.clone(),
            start: self.pos(span.start),
            end: self.pos(span.end),
        }
    }

    /// The header of the top-level block that holds the byte `offset`
    /// (`resource "aws_sqs_queue" "q"`), as terraform names a diagnostic's
    /// context: hcl's `ContextString` at the byte before the subject, so a
    /// subject at the very start of a block has none. `None` outside every
    /// block, in a file that does not parse, and in a JSON file, whose
    /// diagnostics say their context themselves.
    pub fn context(&self, offset: usize) -> Option<&str> {
        let blocks = self.blocks.get_or_init(|| match self.is_json() {
            true => Vec::new(),
            false => top_level_blocks(&self.text),
        });
        blocks
            .iter()
            .find(|(span, _)| span.contains(&offset))
            .map(|(_, header)| header.as_str())
    }

    /// The text of line `line` (1-based), without its newline.
    pub fn line(&self, line: usize) -> &str {
        let Some(&start) = self.line_starts.get(line.wrapping_sub(1)) else {
            return "";
        };
        let end = self
            .line_starts
            .get(line)
            .map_or(self.text.len(), |&e| e.saturating_sub(1));
        self.text
            .get(start..end)
            .unwrap_or("")
            .trim_end_matches('\r')
    }
}

/// The spans and headers (type and quoted labels) of the top-level blocks
/// of a native-syntax file; none when it does not parse.
fn top_level_blocks(text: &str) -> Vec<Header> {
    use hcl_edit::Span;
    let Ok(body) = hcl_edit::parser::parse_body(text) else {
        return Vec::new();
    };
    body.into_iter()
        .filter_map(|structure| {
            let block = structure.as_block()?;
            let mut header = block.ident.as_str().to_string();
            for label in &block.labels {
                header.push_str(&format!(" {}", crate::value::go_quote(label.as_str())));
            }
            Some((block.span()?, header))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_lines_and_characters_from_one() {
        let f = SourceFile::new("main.tf", "ab\n  é = x\n");
        assert_eq!(
            f.pos(0),
            Pos {
                line: 1,
                column: 1,
                byte: 0
            }
        );
        let at_x = f.text().find('x').unwrap();
        assert_eq!(f.pos(at_x).line, 2);
        assert_eq!(f.pos(at_x).column, 7);
        assert_eq!(f.line(2), "  é = x");
        assert_eq!(f.line(3), "");
        let r = f.range(0..2);
        assert_eq!(r.to_string(), "main.tf:1,1-3");
    }

    #[test]
    fn the_context_is_the_top_level_block_holding_the_byte_before_the_subject() {
        let text = "# a queue\nresource \"aws_sqs_queue\" \"q\" {\n  name = x.y\n  policy {\n    a = 1\n  }\n}\n\nlocals {\n  n = 1\n}\n";
        let f = SourceFile::new("main.tf", text);
        let at = |s: &str| text.find(s).unwrap();
        let queue = Some("resource \"aws_sqs_queue\" \"q\"");
        assert_eq!(f.context(at("x.y") - 1), queue);
        assert_eq!(
            f.context(at("a = 1") - 1),
            queue,
            "the top-level block, not the nested one"
        );
        assert_eq!(
            f.context(at("\"q\"") - 1),
            queue,
            "a label is inside its block"
        );
        assert_eq!(
            f.context(at("resource") - 1),
            None,
            "a subject at the block's start has none"
        );
        assert_eq!(f.context(at("n = 1") - 1), Some("locals"));
        assert_eq!(f.context(0), None);
        let broken = SourceFile::new("main.tf", "resource \"a\" \"b\" {\n  x = \n");
        assert_eq!(
            broken.context(20),
            None,
            "a file that does not parse has no contexts"
        );
        let json = SourceFile::new("main.tf.json", "{\"resource\": {}}");
        assert_eq!(json.context(3), None);
    }
}
