//! Reading one block's body: which arguments and nested blocks it may hold,
//! with terraform's errors for anything else.

use super::Expr;
use crate::diag::{Diagnostic, Diagnostics};
use crate::source::SourceFile;
use hcl_edit::structure::{Attribute, Block, Body};
use hcl_edit::Span;
use std::collections::BTreeMap;

/// A body split into the arguments and blocks a block type allows.
pub(crate) struct Content<'a> {
    pub attrs: BTreeMap<&'a str, &'a Attribute>,
    pub blocks: Vec<&'a Block>,
    file: &'a SourceFile,
}

impl<'a> Content<'a> {
    /// Reads `body`, reporting arguments not in `attrs`, blocks not in
    /// `blocks` and arguments set twice. `None` in `attrs` allows any
    /// argument (a resource's own arguments are checked against its schema
    /// later).
    pub fn read(
        body: &'a Body,
        file: &'a SourceFile,
        attrs: Option<&[&str]>,
        blocks: &[&str],
        diags: &mut Diagnostics,
    ) -> Content<'a> {
        let mut out = Content {
            attrs: BTreeMap::new(),
            blocks: Vec::new(),
            file,
        };
        for attr in body.attributes() {
            let key = attr.key.as_str();
            if let Some(first) = out.attrs.get(key) {
                diags.push(
                    Diagnostic::error(
                        "Attribute redefined",
                        format!(
                            "The argument \"{key}\" was already set at {}. Each argument may be set only once.",
                            file.range(span_of(&first.key))
                        ),
                    )
                    .at(file.range(span_of(&attr.key))),
                );
                continue;
            }
            if let Some(allowed) = attrs {
                if !allowed.contains(&key) {
                    diags.push(
                        Diagnostic::error(
                            "Unsupported argument",
                            format!("An argument named \"{key}\" is not expected here."),
                        )
                        .at(file.range(span_of(&attr.key))),
                    );
                    continue;
                }
            }
            out.attrs.insert(key, attr);
        }
        for block in body.blocks() {
            let ident = block.ident.as_str();
            if attrs.is_some() && !blocks.contains(&ident) {
                diags.push(
                    Diagnostic::error(
                        "Unsupported block type",
                        format!("Blocks of type \"{ident}\" are not expected here."),
                    )
                    .at(file.range(span_of(&block.ident))),
                );
                continue;
            }
            out.blocks.push(block);
        }
        out
    }

    pub fn expr(&self, key: &str) -> Option<Expr> {
        self.attrs
            .get(key)
            .map(|a| Expr::new(a.value.clone(), self.file.clone()))
    }

    /// A required argument, or the error terraform gives without it.
    pub fn required(&self, key: &str, block: &Block, diags: &mut Diagnostics) -> Option<Expr> {
        let e = self.expr(key);
        if e.is_none() {
            diags.push(
                Diagnostic::error(
                    "Missing required argument",
                    format!("The argument \"{key}\" is required, but no definition was found."),
                )
                .at(self.file.range(body_open(block))),
            );
        }
        e
    }

    /// A literal string argument (`description`, `source`).
    pub fn string(&self, key: &str, diags: &mut Diagnostics) -> Option<String> {
        let e = self.expr(key)?;
        match super::literal(&e.expr) {
            Some(crate::value::Kind::String(s)) => Some(s),
            _ => {
                diags.push(
                    Diagnostic::error(
                        "Invalid value",
                        format!("The \"{key}\" argument must be a literal string."),
                    )
                    .at(e.range()),
                );
                None
            }
        }
    }

    /// A literal bool argument (`sensitive`, `prevent_destroy`).
    pub fn bool(&self, key: &str, diags: &mut Diagnostics) -> Option<bool> {
        let e = self.expr(key)?;
        match super::literal(&e.expr) {
            Some(crate::value::Kind::Bool(b)) => Some(b),
            _ => {
                diags.push(
                    Diagnostic::error(
                        "Unsuitable value type",
                        "Unsuitable value: a bool is required",
                    )
                    .at(e.range()),
                );
                None
            }
        }
    }

    pub fn blocks_of(&self, ident: &str) -> impl Iterator<Item = &'a Block> + '_ {
        let ident = ident.to_string();
        self.blocks
            .iter()
            .copied()
            .filter(move |b| b.ident.as_str() == ident)
    }
}

/// The byte span of a parsed node (empty for nodes built in code).
pub fn span_of(s: &impl Span) -> std::ops::Range<usize> {
    s.span().unwrap_or(0..0)
}

/// The span terraform points at for a block: its header, from the type
/// keyword to the opening brace.
pub(crate) fn header(block: &Block) -> std::ops::Range<usize> {
    let start = span_of(&block.ident).start;
    let end = block
        .labels
        .last()
        .map(|l| match l {
            hcl_edit::structure::BlockLabel::Ident(i) => span_of(i).end,
            hcl_edit::structure::BlockLabel::String(s) => span_of(s).end,
        })
        .unwrap_or(span_of(&block.ident).end);
    start..end
}

/// Where a missing argument is reported: the block's opening brace.
fn body_open(block: &Block) -> std::ops::Range<usize> {
    let h = header(block);
    let end = span_of(block).end;
    h.end..end.min(h.end + 3).max(h.end)
}
