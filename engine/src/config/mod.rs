//! Configuration: a module's `.tf` and `.tf.json` files parsed into typed
//! blocks.
//!
//! `config` parses and checks structure (which blocks and arguments may
//! appear, duplicates, names, labels, meta-arguments) and never evaluates:
//! every expression is kept as written, with the file it came from, for
//! `eval` to evaluate later. [`load`] reads one directory; [`tree`] loads
//! a root with the local child modules its calls name.

mod body;
pub(crate) mod json;
pub mod manifest;
pub mod refs;
pub mod tree;
pub mod typeexpr;

use crate::addr::Mode;
use crate::diag::{Diagnostic, Diagnostics, Sources};
use crate::source::{Range, SourceFile};
pub use body::span_of;
use body::{header, Content};
use hcl_edit::expr::Expression;
use hcl_edit::structure::{Block, Body as HclBody};
use hcl_edit::Span;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// An expression as written, and the file it is in.
#[derive(Debug, Clone)]
pub struct Expr {
    pub expr: Expression,
    pub file: SourceFile,
}

impl Expr {
    pub fn new(expr: Expression, file: SourceFile) -> Expr {
        Expr { expr, file }
    }

    pub fn range(&self) -> Range {
        self.file.range(span_of(&self.expr))
    }

    /// The references the expression makes.
    pub fn references(&self) -> Vec<refs::Reference> {
        refs::references(self)
    }
}

/// A block's body kept for evaluation against a schema (a resource's or a
/// provider's own arguments), and the file it is in.
#[derive(Debug, Clone)]
pub struct Body {
    pub body: HclBody,
    pub file: SourceFile,
}

impl Body {
    /// Every reference made anywhere in the body, nested blocks included.
    pub fn references(&self) -> Vec<refs::Reference> {
        refs::body_references(&self.body, &self.file)
    }
}

/// A provider named by local name and optional alias (`aws`, `aws.west`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProviderRef {
    pub name: String,
    pub alias: Option<String>,
}

impl std::fmt::Display for ProviderRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.alias {
            Some(a) => write!(f, "provider.{}.{a}", self.name),
            None => write!(f, "provider.{}", self.name),
        }
    }
}

/// One entry of `required_providers`.
#[derive(Debug, Clone)]
pub struct RequiredProvider {
    pub source: Option<String>,
    pub version: Option<String>,
    pub range: Range,
}

/// A `provider` block.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    pub name: String,
    pub alias: Option<String>,
    pub config: Body,
    pub range: Range,
}

/// A `variable` block.
#[derive(Debug, Clone)]
pub struct Variable {
    pub name: String,
    pub constraint: typeexpr::Constraint,
    pub default: Option<Expr>,
    pub description: Option<String>,
    pub sensitive: bool,
    pub nullable: bool,
    pub validations: Vec<Check>,
    pub range: Range,
}

/// A `validation`, `precondition`, `postcondition` or `assert` block.
#[derive(Debug, Clone)]
pub struct Check {
    pub condition: Expr,
    pub error_message: Expr,
}

/// One local value.
#[derive(Debug, Clone)]
pub struct Local {
    pub name: String,
    pub expr: Expr,
    pub range: Range,
}

/// What `ignore_changes` names.
#[derive(Debug, Clone, Default)]
pub enum IgnoreChanges {
    #[default]
    None,
    All,
    /// Attribute paths as written (`tags["Name"]`, `redrive_policy`).
    Paths(Vec<Expr>),
}

/// A resource's `lifecycle` block.
#[derive(Debug, Clone, Default)]
pub struct Lifecycle {
    pub create_before_destroy: bool,
    pub prevent_destroy: bool,
    pub ignore_changes: IgnoreChanges,
    pub replace_triggered_by: Vec<Expr>,
    pub preconditions: Vec<Check>,
    pub postconditions: Vec<Check>,
}

/// The key of a resource block in its module: mode, type and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceKey {
    pub mode: Mode,
    pub type_name: String,
    pub name: String,
}

impl ResourceKey {
    /// The address of one instance of this block in the module instance
    /// `module`.
    pub fn instance(
        &self,
        module: &[crate::addr::ModuleStep],
        key: Option<crate::addr::InstanceKey>,
    ) -> crate::addr::ResourceInstanceAddr {
        crate::addr::ResourceInstanceAddr {
            module: module.to_vec(),
            mode: self.mode,
            type_name: self.type_name.clone(),
            name: self.name.clone(),
            key,
        }
    }
}

impl std::fmt::Display for ResourceKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.mode == Mode::Data {
            f.write_str("data.")?;
        }
        write!(f, "{}.{}", self.type_name, self.name)
    }
}

/// A `resource` or `data` block.
#[derive(Debug, Clone)]
pub struct Resource {
    pub key: ResourceKey,
    pub count: Option<Expr>,
    pub for_each: Option<Expr>,
    pub depends_on: Vec<Expr>,
    pub provider: Option<ProviderRef>,
    pub lifecycle: Lifecycle,
    /// The resource's own arguments and blocks (meta-arguments removed).
    pub config: Body,
    /// For a data source nested in a `check` block, that block's name:
    /// only its assertions may refer to the data source.
    pub check: Option<String>,
    /// The block's header: `resource "aws_sqs_queue" "q"`.
    pub range: Range,
}

impl Resource {
    /// The provider this resource uses: its `provider` argument, or the
    /// provider named by its type's prefix.
    pub fn provider_ref(&self) -> ProviderRef {
        self.provider.clone().unwrap_or_else(|| ProviderRef {
            name: implied_provider(&self.key.type_name),
            alias: None,
        })
    }
}

/// The provider local name a resource type implies (`aws_sqs_queue` ->
/// `aws`).
pub fn implied_provider(type_name: &str) -> String {
    type_name
        .split_once('_')
        .map_or(type_name, |(p, _)| p)
        .to_string()
}

/// A `module` block calling a child module.
#[derive(Debug, Clone)]
pub struct ModuleCall {
    pub name: String,
    pub source: String,
    /// Where `source` is written, for a diagnostic about it.
    pub source_range: Range,
    /// The `version` constraint of a registry source, as written.
    pub version: Option<String>,
    pub count: Option<Expr>,
    pub for_each: Option<Expr>,
    pub depends_on: Vec<Expr>,
    pub providers: Vec<(ProviderRef, ProviderRef)>,
    /// Input variable values by name.
    pub inputs: BTreeMap<String, Expr>,
    pub range: Range,
}

/// An `output` block.
#[derive(Debug, Clone)]
pub struct Output {
    pub name: String,
    pub value: Expr,
    pub sensitive: bool,
    pub depends_on: Vec<Expr>,
    pub preconditions: Vec<Check>,
    pub range: Range,
}

/// A `moved` block.
#[derive(Debug, Clone)]
pub struct Moved {
    pub from: Expr,
    pub to: Expr,
    pub range: Range,
}

/// An `import` block.
#[derive(Debug, Clone)]
pub struct Import {
    pub to: Expr,
    /// The resource `to` names an instance of.
    pub target: ConfigAddr,
    /// Where the `provider` argument is, when the block has one.
    pub provider_range: Option<Range>,
    pub id: Expr,
    pub provider: Option<ProviderRef>,
    pub for_each: Option<Expr>,
    pub range: Range,
}

/// A `provider_meta` block in a module's `terraform` block: what the
/// module tells a provider about itself with each call about its
/// resources. Its arguments are constants.
#[derive(Debug, Clone)]
pub struct ProviderMeta {
    pub config: Body,
    /// The block's header.
    pub range: Range,
}

/// A `check` block: assertions whose failures are warnings, never errors.
/// The data source a check block may hold is one of the module's
/// resources.
#[derive(Debug, Clone)]
pub struct CheckBlock {
    pub name: String,
    pub asserts: Vec<Check>,
    pub range: Range,
}

/// A resource of a module or of a module it calls (by call names, with
/// no instance keys), or a whole module call: what a `removed` block
/// names, and the resource an `import` block's `to` is an instance of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigAddr {
    pub module: Vec<String>,
    /// `None` when the target is the module call itself.
    pub resource: Option<ResourceKey>,
}

impl std::fmt::Display for ConfigAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let calls: Vec<String> = self.module.iter().map(|m| format!("module.{m}")).collect();
        let mut parts = calls;
        if let Some(r) = &self.resource {
            parts.push(r.to_string());
        }
        f.write_str(&parts.join("."))
    }
}

/// A `removed` block: an object that was declared and is no more, to be
/// destroyed (`destroy = true`, the default) or forgotten.
#[derive(Debug, Clone)]
pub struct Removed {
    pub from: ConfigAddr,
    pub destroy: bool,
    pub range: Range,
}

impl Import {
    /// The instance keys written in `to` (`aws_sqs_queue.q[each.key]`).
    pub fn keys(&self) -> Vec<Expr> {
        let Expression::Traversal(t) = &self.to.expr else {
            return Vec::new();
        };
        t.operators
            .iter()
            .filter_map(|o| match o.value() {
                hcl_edit::expr::TraversalOperator::Index(e) => {
                    Some(Expr::new(e.clone(), self.to.file.clone()))
                }
                _ => None,
            })
            .collect()
    }
}

/// One module's configuration.
#[derive(Debug, Clone, Default)]
pub struct Module {
    pub dir: PathBuf,
    pub sources: Sources,
    pub required_version: Vec<String>,
    pub required_providers: BTreeMap<String, RequiredProvider>,
    pub providers: BTreeMap<ProviderRef, ProviderConfig>,
    pub variables: BTreeMap<String, Variable>,
    pub locals: BTreeMap<String, Local>,
    pub resources: BTreeMap<ResourceKey, Resource>,
    pub module_calls: BTreeMap<String, ModuleCall>,
    pub outputs: BTreeMap<String, Output>,
    pub moved: Vec<Moved>,
    pub imports: Vec<Import>,
    pub removed: Vec<Removed>,
    pub checks: BTreeMap<String, CheckBlock>,
    /// `provider_meta` blocks by provider local name.
    pub provider_metas: BTreeMap<String, ProviderMeta>,
    /// The `backend` (its type) or `cloud` block of the `terraform` block,
    /// where state would go: the engine keeps none, and says so.
    pub backend: Option<(String, Range)>,
}

/// Reads every `.tf` and `.tf.json` file in `dir` (sorted by name, as terraform reads
/// them). The module is returned with every problem found; it is usable
/// only if the diagnostics hold no error.
pub fn load(dir: &Path) -> (Module, Diagnostics) {
    let mut diags = Diagnostics::default();
    let mut module = Module {
        dir: dir.to_path_buf(),
        ..Module::default()
    };
    let mut names: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file() && is_config_file(p))
            .collect(),
        Err(e) => {
            diags.push(Diagnostic::error(
                "Failed to read module directory",
                format!(
                    "Module directory {} does not exist or cannot be read: {e}.",
                    dir.display()
                ),
            ));
            return (module, diags);
        }
    };
    // terraform reads primary files first, then override files, each in
    // lexical order.
    names.sort_by_key(|p| (is_override(&p.to_string_lossy()), p.clone()));
    let mut primaries: Vec<(HclBody, SourceFile)> = Vec::new();
    let mut overrides: Vec<(HclBody, SourceFile)> = Vec::new();
    for path in names {
        let name = path
            .strip_prefix(dir)
            .unwrap_or(&path)
            .to_string_lossy()
            .to_string();
        let display = display_name(dir, &name);
        let text = match std::fs::read(&path) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(t) => t,
                Err(_) => {
                    diags.push(Diagnostic::error(
                        "Invalid character encoding",
                        format!("The file {display} is not valid UTF-8."),
                    ));
                    continue;
                }
            },
            Err(e) => {
                diags.push(Diagnostic::error(
                    "Failed to read file",
                    format!("The configuration file {display} could not be read: {e}."),
                ));
                continue;
            }
        };
        let file = SourceFile::new(display, text);
        module.sources.add(file.clone());
        let parsed = if file.is_json() {
            let (body, errors) = json::body(&file);
            diags.extend(errors);
            Ok(body)
        } else {
            hcl_edit::parser::parse_body(file.text()).map_err(|e| parse_error(&file, &e))
        };
        match parsed {
            Ok(body) if is_override(&name) => overrides.push((body, file)),
            Ok(body) => primaries.push((body, file)),
            Err(d) => diags.push(d),
        }
    }
    for (body, file) in &overrides {
        apply_override(&mut primaries, body, file, &mut diags);
    }
    for (body, file) in &primaries {
        module.add_file(body, file, &mut diags);
    }
    module.check_moved_and_providers(&mut diags);
    (module, diags)
}

fn is_config_file(p: &Path) -> bool {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    !name.starts_with('.')
        && !name.starts_with('#')
        && !name.ends_with('~')
        && (name.ends_with(".tf") || name.ends_with(".tf.json"))
}

fn is_override(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    ["override.tf", "override.tf.json"].contains(&name)
        || name.ends_with("_override.tf")
        || name.ends_with("_override.tf.json")
}

/// Merges an override file into the primary files' bodies, as terraform
/// does: each `provider`, `resource`, `data`, `variable`, `output` and
/// `module` block of the override replaces, in the primary block of the
/// same type, labels (and alias), its arguments one by one and its nested
/// blocks type by type; `locals` replace values of the same name. An
/// override of something no primary file declares is an error, except a
/// default provider configuration, which terraform takes as the whole
/// configuration of a provider the primary files leave unconfigured: it
/// joins the primaries, read from the override file.
fn apply_override(
    primaries: &mut Vec<(HclBody, SourceFile)>,
    over: &HclBody,
    file: &SourceFile,
    diags: &mut Diagnostics,
) {
    let alias = |b: &Block| {
        b.body
            .get_attribute("alias")
            .and_then(|a| literal(&a.value))
    };
    let mut added = HclBody::new();
    for ob in over.blocks() {
        let kind = ob.ident.as_str();
        if kind == "locals" {
            for attr in ob.body.attributes() {
                let mut found = false;
                for (body, _) in primaries.iter_mut() {
                    for pb in body.get_blocks_mut("locals") {
                        if pb.body.has_attribute(attr.key.as_str()) {
                            pb.body.remove_attribute(attr.key.as_str());
                            pb.body.push(attr.clone());
                            found = true;
                        }
                    }
                }
                if !found {
                    diags.push(
                        Diagnostic::error(
                            "Missing base local value definition to override",
                            format!("There is no local value named \"{}\". An override file can only override a local value that was already defined in a primary configuration file.", attr.key.as_str()),
                        )
                        .at(file.range(span_of(&attr.key))),
                    );
                }
            }
            continue;
        }
        if let "moved" | "import" = kind {
            let detail = if kind == "moved" {
                "Records of moved objects can appear only in normal files, not in override files."
            } else {
                "Import blocks can appear only in normal files, not in override files."
            };
            diags.push(
                Diagnostic::error(format!("Cannot override '{kind}' blocks"), detail)
                    .at(file.range(header(ob))),
            );
            continue;
        }
        if ![
            "provider", "resource", "data", "variable", "output", "module",
        ]
        .contains(&kind)
        {
            continue;
        }
        let labels: Vec<&str> = ob.labels.iter().map(|l| l.as_str()).collect();
        let mut found = false;
        for (body, _) in primaries.iter_mut() {
            for pb in body.get_blocks_mut(kind) {
                let same = pb
                    .labels
                    .iter()
                    .map(|l| l.as_str())
                    .eq(labels.iter().copied())
                    && (kind != "provider" || alias(pb) == alias(ob));
                if !same {
                    continue;
                }
                found = true;
                for attr in ob.body.attributes() {
                    pb.body.remove_attribute(attr.key.as_str());
                    pb.body.push(attr.clone());
                }
                let types: std::collections::BTreeSet<&str> =
                    ob.body.blocks().map(|b| b.ident.as_str()).collect();
                for t in types {
                    pb.body.remove_blocks(t);
                    for b in ob.body.get_blocks(t) {
                        pb.body.push(b.clone());
                    }
                }
            }
        }
        if found {
            continue;
        }
        let label = |i: usize| labels.get(i).copied().unwrap_or_default();
        let (summary, detail) = match kind {
            "provider" => match alias(ob) {
                None => {
                    added.push(ob.clone());
                    continue;
                }
                Some(a) => (
                    "Missing base provider configuration for override",
                    format!(
                        "There is no {} provider configuration with the alias {}. An override file can only override an aliased provider configuration that was already defined in a primary configuration file.",
                        label(0),
                        crate::value::go_quote(&match a {
                            crate::value::Kind::String(s) => s,
                            _ => String::new(),
                        })
                    ),
                ),
            },
            "resource" => (
                "Missing resource to override",
                format!("There is no {} resource named \"{}\". An override file can only override a resource block defined in a primary configuration file.", label(0), label(1)),
            ),
            "data" => (
                "Missing data resource to override",
                format!("There is no {} data resource named \"{}\". An override file can only override a data block defined in a primary configuration file.", label(0), label(1)),
            ),
            "variable" => (
                "Missing base variable declaration to override",
                format!("There is no variable named \"{}\". An override file can only override a variable that was already declared in a primary configuration file.", label(0)),
            ),
            "output" => (
                "Missing base output definition to override",
                format!("There is no output named \"{}\". An override file can only override an output that was already defined in a primary configuration file.", label(0)),
            ),
            _ => (
                "Missing module call to override",
                format!("There is no module call named \"{}\". An override file can only override a module call that was defined in a primary configuration file.", label(0)),
            ),
        };
        diags.push(Diagnostic::error(summary, detail).at(file.range(header(ob))));
    }
    if added.blocks().next().is_some() {
        primaries.push((added, file.clone()));
    }
}

/// terraform names files relative to the working directory's root: the
/// root's own files by bare name, a child's as `modules/x/main.tf`, or
/// `../shared/main.tf` for a module beside the root.
fn display_name(dir: &Path, name: &str) -> String {
    let rel = match std::env::current_dir() {
        Ok(cwd) if dir.is_absolute() => relative(dir, &cwd),
        _ => Some(dir.to_path_buf()),
    };
    match rel {
        Some(rel) if !rel.as_os_str().is_empty() => rel.join(name).to_string_lossy().to_string(),
        Some(_) => name.to_string(),
        None => dir.join(name).to_string_lossy().to_string(),
    }
}

/// `path` relative to `base` (both absolute and clean), when they share
/// more than the filesystem root.
fn relative(path: &Path, base: &Path) -> Option<PathBuf> {
    let p: Vec<_> = path.components().collect();
    let b: Vec<_> = base.components().collect();
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common < 2 {
        return None;
    }
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    out.extend(&p[common..]);
    Some(out)
}

pub(crate) fn parse_error(file: &SourceFile, e: &hcl_edit::parser::Error) -> Diagnostic {
    let rest_is_blank = {
        let lines: Vec<&str> = file.text().lines().collect();
        lines
            .iter()
            .skip(e.location().line())
            .all(|l| l.trim().is_empty())
            && lines
                .get(e.location().line().saturating_sub(1))
                .is_none_or(|l| l.trim().is_empty() || l.trim() == "}")
    };
    if rest_is_blank {
        if let Some(open) = unclosed_brace(file.text()) {
            return Diagnostic::error(
                "Unclosed configuration block",
                "There is no closing brace for this block before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.",
            )
            .at(file.range(open..open + 1));
        }
    }
    let loc = e.location();
    let line_start: usize = file
        .text()
        .split_inclusive('\n')
        .take(loc.line().saturating_sub(1))
        .map(str::len)
        .sum();
    let line = file.line(loc.line());
    let col_byte: usize = line
        .chars()
        .take(loc.column().saturating_sub(1))
        .map(char::len_utf8)
        .sum();
    let at = line_start + col_byte;
    let message = e.message().trim_end_matches('.');
    Diagnostic::error(
        "Invalid configuration syntax",
        format!("{}.", capitalise(message)),
    )
    .at(file.range(at..(at + 1).min(file.text().len())))
}

/// The byte offset of the first `{` never closed, skipping strings and
/// comments.
fn unclosed_brace(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut open = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'{' => open.push(i),
            b'}' => {
                open.pop();
            }
            _ => {}
        }
        i += 1;
    }
    open.first().copied()
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// A literal value written in configuration (strings, numbers, bools,
/// null, and templates with no interpolation), for the arguments terraform
/// requires to be literal.
pub fn literal(e: &Expression) -> Option<crate::value::Kind> {
    use crate::value::Kind;
    match e {
        Expression::String(s) => Some(Kind::String(s.value().clone())),
        Expression::Bool(b) => Some(Kind::Bool(*b.value())),
        Expression::StringTemplate(t) => {
            let mut out = String::new();
            for el in t.iter() {
                match el {
                    hcl_edit::template::Element::Literal(l) => out.push_str(l.value()),
                    _ => return None,
                }
            }
            Some(Kind::String(out))
        }
        Expression::Parenthesis(p) => literal(p.inner()),
        _ => None,
    }
}

/// A bare identifier or traversal of identifiers, as `provider = aws.west`
/// and `depends_on` entries are written.
pub(crate) fn keyword_path(e: &Expression) -> Option<Vec<String>> {
    match e {
        Expression::Variable(v) => Some(vec![v.as_str().to_string()]),
        Expression::Traversal(t) => {
            let mut out = keyword_path(&t.expr)?;
            for op in &t.operators {
                match op.value() {
                    hcl_edit::expr::TraversalOperator::GetAttr(a) => out.push(a.as_str().into()),
                    _ => return None,
                }
            }
            Some(out)
        }
        _ => None,
    }
}

fn valid_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_alphabetic() || f == '_')
        && c.all(|ch| ch.is_alphanumeric() || ch == '_' || ch == '-')
}

impl Module {
    fn add_file(&mut self, body: &HclBody, file: &SourceFile, diags: &mut Diagnostics) {
        let top = [
            "terraform",
            "provider",
            "variable",
            "locals",
            "output",
            "module",
            "resource",
            "data",
            "moved",
            "import",
            "check",
            "removed",
            "ephemeral",
        ];
        let content = Content::read(body, file, Some(&[]), &top, diags);
        for block in content.blocks {
            let kind = block.ident.as_str();
            let labels: Vec<&str> = block.labels.iter().map(|l| l.as_str()).collect();
            let want = match kind {
                "provider" | "variable" | "output" | "module" | "check" => 1,
                "resource" | "data" | "ephemeral" => 2,
                _ => 0,
            };
            if labels.len() != want {
                let what = match want {
                    0 => "No labels are expected for".to_string(),
                    _ => format!(
                        "All {kind} blocks must have {want} label{} ({}).",
                        if want == 1 { "" } else { "s" },
                        if want == 1 { "name" } else { "type, name" }
                    ),
                };
                let (summary, detail) = if labels.len() > want {
                    (
                        format!("Extraneous label for {kind}"),
                        if want == 0 {
                            format!("{what} {kind} blocks.")
                        } else {
                            format!(
                                "Only {want} labels (type, name) are expected for {kind} blocks."
                            )
                        },
                    )
                } else {
                    (format!("Missing name for {kind}"), what)
                };
                diags.push(Diagnostic::error(summary, detail).at(file.range(header(block))));
                continue;
            }
            for label in &labels {
                if !valid_name(label) && kind != "provider" {
                    let what = match kind {
                        "resource" | "data" | "ephemeral" => {
                            if label == &labels[0] {
                                "resource type"
                            } else {
                                "resource name"
                            }
                        }
                        "variable" => "variable name",
                        "output" => "output name",
                        "module" => "module instance name",
                        "check" => "check block name",
                        _ => "name",
                    };
                    diags.push(
                        Diagnostic::error(
                            format!("Invalid {what}"),
                            "A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.",
                        )
                        .at(file.range(header(block))),
                    );
                }
            }
            let context = Some(block_context(block));
            let before = diags.0.len();
            match kind {
                "terraform" => self.terraform_block(block, file, diags),
                "provider" => self.provider_block(block, labels[0], file, diags),
                "variable" => self.variable_block(block, labels[0], file, diags),
                "locals" => self.locals_block(block, file, diags),
                "output" => self.output_block(block, labels[0], file, diags),
                "module" => self.module_block(block, labels[0], file, diags),
                "resource" => self.resource_block(block, Mode::Managed, &labels, file, None, diags),
                "data" => self.resource_block(block, Mode::Data, &labels, file, None, diags),
                "moved" => self.moved_block(block, file, diags),
                "import" => self.import_block(block, file, diags),
                "check" => self.check_block(block, labels[0], file, diags),
                "removed" => self.removed_block(block, file, diags),
                "ephemeral" => diags.push(
                    Diagnostic::error(
                        "Unsupported block type",
                        format!("Blocks of type \"{kind}\" are not supported by this engine yet."),
                    )
                    .at(file.range(header(block))),
                ),
                _ => unreachable!("Content::read allows only top-level block types"),
            }
            for d in &mut diags.0[before..] {
                if d.context.is_none()
                    && kind != "terraform"
                    && d.subject
                        .as_ref()
                        .is_some_and(|r| r.start.line != file.pos(header(block).start).line)
                {
                    d.context = context.clone();
                }
            }
        }
    }

    fn terraform_block(&mut self, block: &Block, file: &SourceFile, diags: &mut Diagnostics) {
        let c = Content::read(
            &block.body,
            file,
            Some(&["required_version", "experiments"]),
            &["required_providers", "backend", "cloud", "provider_meta"],
            diags,
        );
        if let Some(v) = c.string("required_version", diags) {
            self.required_version.push(v);
        }
        for rp in c.blocks_of("required_providers") {
            for attr in rp.body.attributes() {
                let name = attr.key.as_str().to_string();
                let range = file.range(span_of(&attr.key));
                let (source, version) = match &attr.value {
                    Expression::Object(o) => {
                        let mut source = None;
                        let mut version = None;
                        for (k, v) in o.iter() {
                            let key = match k {
                                hcl_edit::expr::ObjectKey::Ident(i) => i.as_str().to_string(),
                                hcl_edit::expr::ObjectKey::Expression(e) => match literal(e) {
                                    Some(crate::value::Kind::String(s)) => s,
                                    _ => continue,
                                },
                            };
                            let text = match literal(v.expr()) {
                                Some(crate::value::Kind::String(s)) => Some(s),
                                _ => None,
                            };
                            match key.as_str() {
                                "source" => source = text,
                                "version" => version = text,
                                _ => {}
                            }
                        }
                        (source, version)
                    }
                    other => match literal(other) {
                        Some(crate::value::Kind::String(v)) => (None, Some(v)),
                        _ => {
                            diags.push(
                                Diagnostic::error(
                                    "Invalid required_providers object",
                                    "required_providers objects can only contain \"version\", \"source\" and \"configuration_aliases\" attributes. To configure a provider, use a \"provider\" block.",
                                )
                                .at(file.range(span_of(&attr.value))),
                            );
                            continue;
                        }
                    },
                };
                if let Some(first) = self.required_providers.get(&name) {
                    diags.push(
                        Diagnostic::error(
                            "Duplicate required provider",
                            format!("Provider {name} was already required at {}. Each provider may be required only once.", first.range),
                        )
                        .at(range),
                    );
                    continue;
                }
                self.required_providers.insert(
                    name,
                    RequiredProvider {
                        source,
                        version,
                        range,
                    },
                );
            }
        }
        for pm in c.blocks_of("provider_meta") {
            self.provider_meta_block(pm, file, diags);
        }
        for b in c.blocks_of("backend").chain(c.blocks_of("cloud")) {
            let kind = match b.labels.first() {
                Some(label) => label.as_str().to_string(),
                None => b.ident.as_str().to_string(),
            };
            self.backend = Some((kind, file.range(header(b))));
        }
    }

    /// A `provider_meta` block: one label, and only constant arguments.
    fn provider_meta_block(&mut self, block: &Block, file: &SourceFile, diags: &mut Diagnostics) {
        let [label] = block.labels.as_slice() else {
            let (summary, detail) = if block.labels.is_empty() {
                (
                    "Missing provider for provider_meta",
                    "All provider_meta blocks must have 1 labels (provider).",
                )
            } else {
                (
                    "Extraneous label for provider_meta",
                    "Only 1 labels (provider) are expected for provider_meta blocks.",
                )
            };
            diags.push(Diagnostic::error(summary, detail).at(file.range(header(block))));
            return;
        };
        let before = diags.0.len();
        for b in block.body.blocks() {
            diags.push(
                Diagnostic::error(
                    format!("Unexpected \"{}\" block", b.ident.as_str()),
                    "Blocks are not allowed here.",
                )
                .at(file.range(span_of(&b.ident))),
            );
        }
        if diags.0.len() > before {
            return;
        }
        for attr in block.body.attributes() {
            for d in refs::not_constant(&Expr::new(attr.value.clone(), file.clone())) {
                diags.push(d);
            }
        }
        let name = label.as_str().to_string();
        let range = file.range(header(block));
        if let Some(first) = self.provider_metas.get(&name) {
            diags.push(
                Diagnostic::error(
                    "Duplicate provider_meta block",
                    format!("A provider_meta block for provider \"{name}\" was already declared at {}. Providers may only have one provider_meta block per module.", first.range),
                )
                .at(range),
            );
            return;
        }
        self.provider_metas.insert(
            name,
            ProviderMeta {
                config: Body {
                    body: block.body.clone(),
                    file: file.clone(),
                },
                range,
            },
        );
    }

    fn provider_block(
        &mut self,
        block: &Block,
        name: &str,
        file: &SourceFile,
        diags: &mut Diagnostics,
    ) {
        let c = Content::read(&block.body, file, None, &[], diags);
        let alias = c.string("alias", diags);
        let key = ProviderRef {
            name: name.to_string(),
            alias: alias.clone(),
        };
        let range = file.range(header(block));
        if let Some(first) = self.providers.get(&key) {
            let (summary, detail) = match &alias {
                Some(a) => (
                    "Duplicate provider configuration".to_string(),
                    format!("A provider configuration for \"{name}\" with alias \"{a}\" was already given at {}. Each configuration for the same provider must have a distinct alias.", first.range),
                ),
                None => (
                    "Duplicate provider configuration".to_string(),
                    format!("A default (non-aliased) provider configuration for \"{name}\" was already given at {}. If multiple configurations are required, set the \"alias\" argument for alternative configurations.", first.range),
                ),
            };
            diags.push(Diagnostic::error(summary, detail).at(range));
            return;
        }
        let mut body = block.body.clone();
        body.remove_attribute("alias");
        body.remove_attribute("version");
        self.providers.insert(
            key,
            ProviderConfig {
                name: name.to_string(),
                alias,
                config: Body {
                    body,
                    file: file.clone(),
                },
                range,
            },
        );
    }

    fn variable_block(
        &mut self,
        block: &Block,
        name: &str,
        file: &SourceFile,
        diags: &mut Diagnostics,
    ) {
        let c = Content::read(
            &block.body,
            file,
            Some(&[
                "type",
                "default",
                "description",
                "sensitive",
                "nullable",
                "ephemeral",
            ]),
            &["validation"],
            diags,
        );
        let range = file.range(header(block));
        if let Some(first) = self.variables.get(name) {
            diags.push(
                Diagnostic::error(
                    "Duplicate variable declaration",
                    format!("A variable named \"{name}\" was already declared at {}. Variable names must be unique within a module.", first.range),
                )
                .at(range),
            );
            return;
        }
        if RESERVED_VARIABLES.contains(&name) {
            diags.push(
                Diagnostic::error(
                    "Invalid variable name",
                    format!("The variable name \"{name}\" is reserved due to its special meaning inside module blocks."),
                )
                .at(range.clone()),
            );
        }
        let constraint = match c.expr("type") {
            Some(t) => match typeexpr::parse(&t) {
                Ok(c) => c,
                Err(d) => {
                    diags.push(*d);
                    typeexpr::Constraint::any()
                }
            },
            None => typeexpr::Constraint::any(),
        };
        let validations = c
            .blocks_of("validation")
            .filter_map(|b| check_block_content(b, "condition", file, diags))
            .collect();
        self.variables.insert(
            name.to_string(),
            Variable {
                name: name.to_string(),
                constraint,
                default: c.expr("default"),
                description: c.string("description", diags),
                sensitive: c.bool("sensitive", diags).unwrap_or(false),
                nullable: c.bool("nullable", diags).unwrap_or(true),
                validations,
                range,
            },
        );
    }

    fn locals_block(&mut self, block: &Block, file: &SourceFile, diags: &mut Diagnostics) {
        let c = Content::read(&block.body, file, None, &[], diags);
        for b in &c.blocks {
            diags.push(
                Diagnostic::error(
                    "Unsupported block type",
                    format!(
                        "Blocks of type \"{}\" are not expected here.",
                        b.ident.as_str()
                    ),
                )
                .at(file.range(span_of(&b.ident))),
            );
        }
        for (name, attr) in &c.attrs {
            let range = file.range(span_of(&attr.key));
            if let Some(first) = self.locals.get(*name) {
                diags.push(
                    Diagnostic::error(
                        "Duplicate local value definition",
                        format!("A local value named \"{name}\" was already defined at {}. Local value names must be unique within a module.", first.range),
                    )
                    .at(range),
                );
                continue;
            }
            self.locals.insert(
                name.to_string(),
                Local {
                    name: name.to_string(),
                    expr: Expr::new(attr.value.clone(), file.clone()),
                    range,
                },
            );
        }
    }

    fn output_block(
        &mut self,
        block: &Block,
        name: &str,
        file: &SourceFile,
        diags: &mut Diagnostics,
    ) {
        let c = Content::read(
            &block.body,
            file,
            Some(&[
                "value",
                "description",
                "sensitive",
                "depends_on",
                "ephemeral",
            ]),
            &["precondition"],
            diags,
        );
        let range = file.range(header(block));
        if let Some(first) = self.outputs.get(name) {
            diags.push(
                Diagnostic::error(
                    "Duplicate output definition",
                    format!("An output named \"{name}\" was already defined at {}. Output names must be unique within a module.", first.range),
                )
                .at(range),
            );
            return;
        }
        let Some(value) = c.required("value", block, diags) else {
            return;
        };
        let _ = c.string("description", diags);
        let preconditions = c
            .blocks_of("precondition")
            .filter_map(|b| check_block_content(b, "condition", file, diags))
            .collect();
        self.outputs.insert(
            name.to_string(),
            Output {
                name: name.to_string(),
                value,
                sensitive: c.bool("sensitive", diags).unwrap_or(false),
                depends_on: depends_on(&c, diags),
                preconditions,
                range,
            },
        );
    }

    fn module_block(
        &mut self,
        block: &Block,
        name: &str,
        file: &SourceFile,
        diags: &mut Diagnostics,
    ) {
        let c = Content::read(&block.body, file, None, &[], diags);
        for b in &c.blocks {
            diags.push(
                Diagnostic::error(
                    "Unsupported block type",
                    format!(
                        "Blocks of type \"{}\" are not expected here.",
                        b.ident.as_str()
                    ),
                )
                .at(file.range(span_of(&b.ident))),
            );
        }
        let range = file.range(header(block));
        if let Some(first) = self.module_calls.get(name) {
            diags.push(
                Diagnostic::error(
                    "Duplicate module call",
                    format!("A module call named \"{name}\" was already defined at {}. Module calls must have unique names within a module.", first.range),
                )
                .at(range),
            );
            return;
        }
        let source = c
            .required("source", block, diags)
            .and(c.string("source", diags));
        if let (Some(src), Some(at)) = (&source, c.expr("source")) {
            let local = manifest::is_local(src);
            if local && c.attrs.contains_key("version") {
                diags.push(
                    Diagnostic::error(
                        "Invalid registry module source address",
                        format!("Failed to parse module registry address: can't use local directory {src:?} as a module registry address.\n\nTerraform assumed that you intended a module registry source address because you also set the argument \"version\", which applies only to registry modules."),
                    )
                    .at(at.range()),
                );
            }
        }
        let meta = [
            "source",
            "version",
            "count",
            "for_each",
            "depends_on",
            "providers",
        ];
        let inputs = c
            .attrs
            .iter()
            .filter(|(k, _)| !meta.contains(k))
            .map(|(k, a)| (k.to_string(), Expr::new(a.value.clone(), file.clone())))
            .collect();
        let mut providers = Vec::new();
        if let Some(p) = c.expr("providers") {
            if let Expression::Object(o) = &p.expr {
                for (k, v) in o.iter() {
                    let child = match k {
                        hcl_edit::expr::ObjectKey::Ident(i) => Some(vec![i.as_str().to_string()]),
                        hcl_edit::expr::ObjectKey::Expression(e) => keyword_path(e),
                    };
                    match (
                        child.and_then(provider_ref),
                        keyword_path(v.expr()).and_then(provider_ref),
                    ) {
                        (Some(c), Some(p)) => providers.push((c, p)),
                        _ => diags.push(invalid_provider_ref(p.file.range(span_of(v.expr())))),
                    }
                }
            } else {
                diags.push(
                    Diagnostic::error("Invalid providers argument", "The providers argument must be an object mapping a child module's provider names to this module's provider configurations.")
                        .at(p.range()),
                );
            }
        }
        let version = c.string("version", diags);
        if let (Some(source), Some(at)) = (source, c.expr("source")) {
            self.module_calls.insert(
                name.to_string(),
                ModuleCall {
                    name: name.to_string(),
                    source,
                    source_range: at.range(),
                    version,
                    count: c.expr("count"),
                    for_each: c.expr("for_each"),
                    depends_on: depends_on(&c, diags),
                    providers,
                    inputs,
                    range,
                },
            );
        }
        if c.attrs.contains_key("count") && c.attrs.contains_key("for_each") {
            diags.push(
                Diagnostic::error(
                    "Invalid combination of \"count\" and \"for_each\"",
                    "The \"count\" and \"for_each\" meta-arguments are mutually-exclusive, only one should be used to be explicit about the number of resources to be created.",
                )
                .at(file.range(span_of(&c.attrs["for_each"].key))),
            );
        }
    }

    /// A `resource` or `data` block; `in_check` names the `check` block a
    /// data block is nested in, which takes neither `count`, `for_each` nor
    /// a lifecycle.
    fn resource_block(
        &mut self,
        block: &Block,
        mode: Mode,
        labels: &[&str],
        file: &SourceFile,
        in_check: Option<&str>,
        diags: &mut Diagnostics,
    ) {
        let c = Content::read(&block.body, file, None, &[], diags);
        if in_check.is_some() {
            for meta in ["count", "for_each"] {
                if let Some(a) = c.attrs.get(meta) {
                    diags.push(
                        Diagnostic::error(
                            format!("Invalid \"{meta}\" attribute"),
                            "The \"count\" and \"for_each\" meta-arguments are not supported within nested data blocks.",
                        )
                        .at(file.range(span_of(&a.key))),
                    );
                }
            }
            if let Some(lc) = c.blocks_of("lifecycle").next() {
                diags.push(
                    Diagnostic::error(
                        "Invalid lifecycle block",
                        "Nested data blocks do not support \"lifecycle\" blocks as the lifecycle is managed by the containing block.",
                    )
                    .at(file.range(header(lc))),
                );
            }
        }
        let key = ResourceKey {
            mode,
            type_name: labels[0].to_string(),
            name: labels[1].to_string(),
        };
        let range = file.range(header(block));
        if let Some(first) = self.resources.get(&key) {
            let (summary, kind) = match mode {
                Mode::Managed => ("resource", "resource"),
                Mode::Data => ("data", "data resource"),
            };
            diags.push(
                Diagnostic::error(
                    format!("Duplicate {summary} \"{}\" configuration", key.type_name),
                    format!(
                        "A {} {kind} named \"{}\" was already declared at {}. Resource names must be unique per type in each module.",
                        key.type_name, key.name, first.range
                    ),
                )
                .at(range),
            );
            return;
        }
        if c.attrs.contains_key("count") && c.attrs.contains_key("for_each") {
            diags.push(
                Diagnostic::error(
                    "Invalid combination of \"count\" and \"for_each\"",
                    "The \"count\" and \"for_each\" meta-arguments are mutually-exclusive, only one should be used to be explicit about the number of resources to be created.",
                )
                .at(file.range(span_of(&c.attrs["for_each"].key))),
            );
        }
        let provider = c.expr("provider").and_then(|p| {
            let r = keyword_path(&p.expr).and_then(provider_ref);
            if r.is_none() {
                diags.push(invalid_provider_ref(p.range()));
            }
            r
        });
        let mut lifecycle = Lifecycle::default();
        let mut seen_lifecycle = false;
        for lc in c.blocks_of("lifecycle") {
            if seen_lifecycle {
                diags.push(
                    Diagnostic::error(
                        "Duplicate lifecycle block",
                        "This resource already has a lifecycle block.",
                    )
                    .at(file.range(span_of(&lc.ident))),
                );
                continue;
            }
            seen_lifecycle = true;
            let allowed: &[&str] = match mode {
                Mode::Managed => &[
                    "create_before_destroy",
                    "prevent_destroy",
                    "ignore_changes",
                    "replace_triggered_by",
                ],
                Mode::Data => &[],
            };
            let l = Content::read(
                &lc.body,
                file,
                Some(allowed),
                &["precondition", "postcondition"],
                diags,
            );
            lifecycle.create_before_destroy =
                l.bool("create_before_destroy", diags).unwrap_or(false);
            lifecycle.prevent_destroy = l.bool("prevent_destroy", diags).unwrap_or(false);
            if let Some(ic) = l.expr("ignore_changes") {
                lifecycle.ignore_changes = match &ic.expr {
                    Expression::Variable(v) if v.as_str() == "all" => IgnoreChanges::All,
                    Expression::Array(a) => IgnoreChanges::Paths(
                        a.iter()
                            .map(|e| Expr::new(e.clone(), file.clone()))
                            .collect(),
                    ),
                    _ => {
                        diags.push(
                            Diagnostic::error(
                                "Invalid ignore_changes wildcard",
                                "The ignore_changes argument must be a list of attribute references, or the keyword \"all\".",
                            )
                            .at(ic.range()),
                        );
                        IgnoreChanges::None
                    }
                };
            }
            if let Some(rt) = l.expr("replace_triggered_by") {
                match &rt.expr {
                    Expression::Array(a) => {
                        lifecycle.replace_triggered_by = a.iter().map(|e| Expr::new(e.clone(), file.clone())).collect()
                    }
                    _ => diags.push(
                        Diagnostic::error("Invalid replace_triggered_by expression", "The replace_triggered_by argument requires a list of resource references.")
                            .at(rt.range()),
                    ),
                }
            }
            lifecycle.preconditions = l
                .blocks_of("precondition")
                .filter_map(|b| check_block_content(b, "condition", file, diags))
                .collect();
            lifecycle.postconditions = l
                .blocks_of("postcondition")
                .filter_map(|b| check_block_content(b, "condition", file, diags))
                .collect();
        }
        let mut body = block.body.clone();
        for meta in ["count", "for_each", "depends_on", "provider"] {
            body.remove_attribute(meta);
        }
        body.remove_blocks("lifecycle");
        for kind in ["provisioner", "connection"] {
            if let Some(b) = c.blocks_of(kind).next() {
                diags.push(
                    Diagnostic::error(
                        "Unsupported block type",
                        format!("Blocks of type \"{kind}\" are not supported by this engine: provisioners run commands no live system records."),
                    )
                    .at(file.range(span_of(&b.ident))),
                );
            }
        }
        self.resources.insert(
            key.clone(),
            Resource {
                key,
                count: c.expr("count"),
                for_each: c.expr("for_each"),
                depends_on: depends_on(&c, diags),
                provider,
                lifecycle,
                config: Body {
                    body,
                    file: file.clone(),
                },
                check: in_check.map(str::to_string),
                range,
            },
        );
    }

    fn moved_block(&mut self, block: &Block, file: &SourceFile, diags: &mut Diagnostics) {
        let c = Content::read(&block.body, file, Some(&["from", "to"]), &[], diags);
        let from = c.required("from", block, diags);
        let to = c.required("to", block, diags);
        if let (Some(from), Some(to)) = (from, to) {
            self.moved.push(Moved {
                from,
                to,
                range: file.range(header(block)),
            });
        }
    }

    fn import_block(&mut self, block: &Block, file: &SourceFile, diags: &mut Diagnostics) {
        // terraform reads the target only from a block with no other error.
        let before = diags.0.len();
        let c = Content::read(
            &block.body,
            file,
            Some(&["to", "id", "provider", "for_each", "identity"]),
            &[],
            diags,
        );
        let to = c.required("to", block, diags);
        let id = c.required("id", block, diags);
        if diags.0.len() > before {
            return;
        }
        let (Some(to), Some(id)) = (to, id) else {
            return;
        };
        let attr_range = file.range(span_of(&c.attrs["to"].key).start..span_of(&to.expr).end);
        let Some(target) = import_target(&to, attr_range, diags) else {
            return;
        };
        if let Some(p) = c.attrs.get("provider") {
            if !target.module.is_empty() {
                diags.push(
                    Diagnostic::error(
                        "Invalid import provider argument",
                        "The provider argument can only be specified in import blocks that will generate configuration.\n\nUse the providers argument within the module block to configure providers for all resources within a module, including imported resources.",
                    )
                    .at(file.range(span_of(&p.key).start..span_of(&p.value).end)),
                );
            }
        }
        let range = file.range(header(block));
        if let Some(addr) = static_import_to(&to) {
            for first in self
                .imports
                .iter()
                .filter(|i| static_import_to(&i.to).as_ref() == Some(&addr))
            {
                diags.push(
                    Diagnostic::error(
                        format!("Duplicate import configuration for \"{target}\""),
                        format!("An import block for the resource \"{target}\" was already declared at {}. A resource can have only one import block.", first.range),
                    )
                    .at(to.range()),
                );
            }
        }
        let provider = c
            .expr("provider")
            .and_then(|p| keyword_path(&p.expr).and_then(provider_ref));
        let provider_range = c
            .attrs
            .get("provider")
            .map(|p| file.range(span_of(&p.key).start..span_of(&p.value).end));
        self.imports.push(Import {
            to,
            target,
            provider_range,
            id,
            provider,
            for_each: c.expr("for_each"),
            range,
        });
    }

    fn check_block(
        &mut self,
        block: &Block,
        name: &str,
        file: &SourceFile,
        diags: &mut Diagnostics,
    ) {
        let range = file.range(header(block));
        let c = Content::read(&block.body, file, Some(&[]), &["assert", "data"], diags);
        let mut data: Option<&Block> = None;
        for d in c.blocks_of("data") {
            if let Some(first) = data {
                diags.push(
                    Diagnostic::error(
                        "Multiple data resource blocks",
                        format!(
                            "This check block already has a data resource defined at {}.",
                            file.range(header(first))
                        ),
                    )
                    .at(file.range(header(d))),
                );
                continue;
            }
            let labels: Vec<&str> = d.labels.iter().map(|l| l.as_str()).collect();
            if labels.len() != 2 {
                let (summary, detail) = if labels.len() > 2 {
                    (
                        "Extraneous label for data".to_string(),
                        "Only 2 labels (type, name) are expected for data blocks.".to_string(),
                    )
                } else {
                    (
                        format!("Missing {} for data", ["type", "name"][labels.len()]),
                        "All data blocks must have 2 labels (type, name).".to_string(),
                    )
                };
                diags.push(Diagnostic::error(summary, detail).at(file.range(header(d))));
                continue;
            }
            // As in terraform, a data block with errors does not take the
            // check's one place.
            let before = diags.0.len();
            self.resource_block(d, Mode::Data, &labels, file, Some(name), diags);
            if !diags.0[before..].iter().any(|d| d.is_error()) {
                data = Some(d);
            }
        }
        let asserts: Vec<Check> = c
            .blocks_of("assert")
            .filter_map(|a| check_block_content(a, "condition", file, diags))
            .collect();
        if asserts.is_empty() {
            diags.push(
                Diagnostic::error(
                    "Zero assert blocks",
                    "Check blocks must have at least one assert block.",
                )
                .at(range.clone()),
            );
        }
        if let Some(first) = self.checks.get(name) {
            diags.push(
                Diagnostic::error(
                    format!("Duplicate check \"{name}\" configuration"),
                    format!("A check block named \"{name}\" was already declared at {}. Check blocks must be unique within each module.", first.range),
                )
                .at(range),
            );
            return;
        }
        self.checks.insert(
            name.to_string(),
            CheckBlock {
                name: name.to_string(),
                asserts,
                range,
            },
        );
    }

    fn removed_block(&mut self, block: &Block, file: &SourceFile, diags: &mut Diagnostics) {
        let c = Content::read(
            &block.body,
            file,
            Some(&["from"]),
            &["lifecycle", "connection", "provisioner"],
            diags,
        );
        let from = c
            .required("from", block, diags)
            .and_then(|e| remove_target(&e, diags));
        let managed = from
            .as_ref()
            .and_then(|f| f.resource.as_ref())
            .is_some_and(|r| r.mode == Mode::Managed);
        let mut destroy = true;
        for lc in c.blocks_of("lifecycle") {
            let l = Content::read(&lc.body, file, Some(&["destroy"]), &[], diags);
            if let Some(d) = l.bool("destroy", diags) {
                destroy = d;
            }
        }
        for kind in ["connection", "provisioner"] {
            if let Some(b) = c.blocks_of(kind).next() {
                let d = if managed {
                    Diagnostic::error(
                        "Unsupported block type",
                        format!("Blocks of type \"{kind}\" are not supported by this engine: provisioners run commands no live system records."),
                    )
                } else if kind == "connection" {
                    Diagnostic::error(
                        "Invalid connection block",
                        "Provisioner connection configuration is valid only when a removed block targets a managed resource.",
                    )
                } else {
                    Diagnostic::error(
                        "Invalid provisioner block",
                        "Provisioners are valid only when a removed block targets a managed resource.",
                    )
                };
                diags.push(d.at(file.range(header(b))));
            }
        }
        if let Some(from) = from {
            self.removed.push(Removed {
                from,
                destroy,
                range: file.range(header(block)),
            });
        }
    }

    /// Checks that need the whole module: every `provider` argument names a
    /// provider the module knows, and an `import` block into a resource of
    /// this module names no provider the resource block does not.
    fn check_moved_and_providers(&self, diags: &mut Diagnostics) {
        // terraform checks an import's provider once the module has loaded
        // with no error.
        let imports = if diags.has_errors() {
            &[][..]
        } else {
            &self.imports[..]
        };
        for i in imports {
            let (Some(at), Some(key)) = (&i.provider_range, &i.target.resource) else {
                continue;
            };
            let Some(r) = self
                .resources
                .get(key)
                .filter(|_| i.target.module.is_empty())
            else {
                continue;
            };
            if r.provider.is_none() || r.provider != i.provider {
                diags.push(
                    Diagnostic::error(
                        "Invalid import provider argument",
                        "The provider argument can only be specified in import blocks that will generate configuration.\n\nUse the provider argument in the target resource block to configure the provider for a resource with explicit provider configuration.",
                    )
                    .at(at.clone()),
                );
            }
        }
        for r in self.resources.values() {
            let p = r.provider_ref();
            if p.alias.is_some() && !self.providers.contains_key(&p) {
                diags.push(
                    Diagnostic::error(
                        "Provider configuration not present",
                        format!("To work with {} its original provider configuration at {p} is required, but it has been removed.", r.key),
                    )
                    .at(r.range.clone()),
                );
            }
        }
    }

    /// The module's source files, for diagnostics' snippets.
    pub fn sources(&self) -> &Sources {
        &self.sources
    }
}

/// Variable names terraform reserves for module meta-arguments.
const RESERVED_VARIABLES: [&str; 9] = [
    "source",
    "version",
    "providers",
    "count",
    "for_each",
    "lifecycle",
    "depends_on",
    "locals",
    "provider",
];

fn provider_ref(path: Vec<String>) -> Option<ProviderRef> {
    match path.as_slice() {
        [name] => Some(ProviderRef {
            name: name.clone(),
            alias: None,
        }),
        [name, alias] => Some(ProviderRef {
            name: name.clone(),
            alias: Some(alias.clone()),
        }),
        _ => None,
    }
}

fn invalid_provider_ref(range: Range) -> Diagnostic {
    Diagnostic::error(
        "Invalid provider reference",
        "Provider argument requires a provider name followed by an optional alias, like \"aws.foo\".",
    )
    .at(range)
}

fn depends_on(c: &Content<'_>, diags: &mut Diagnostics) -> Vec<Expr> {
    let Some(d) = c.expr("depends_on") else {
        return Vec::new();
    };
    match &d.expr {
        Expression::Array(a) => a
            .iter()
            .filter_map(|e| {
                if keyword_path(e).is_some() || matches!(e, Expression::Traversal(_)) {
                    Some(Expr::new(e.clone(), d.file.clone()))
                } else {
                    diags.push(
                        Diagnostic::error(
                            "Invalid expression",
                            "A single static variable reference is required: only attribute access and indexing with constant keys. No calculations, function calls, template expressions, etc are allowed here.",
                        )
                        .at(d.file.range(span_of(e))),
                    );
                    None
                }
            })
            .collect(),
        _ => {
            diags.push(
                Diagnostic::error(
                    "Invalid expression",
                    "A static list expression is required.",
                )
                .at(d.range()),
            );
            Vec::new()
        }
    }
}

/// A `validation`, `precondition`, `postcondition` or `assert` block,
/// whose condition must refer to something (else it checks nothing).
fn check_block_content(
    block: &Block,
    cond: &str,
    file: &SourceFile,
    diags: &mut Diagnostics,
) -> Option<Check> {
    let c = Content::read(
        &block.body,
        file,
        Some(&[cond, "error_message"]),
        &[],
        diags,
    );
    let condition = c.required(cond, block, diags);
    let error_message = c.required("error_message", block, diags);
    let condition = condition?;
    if condition.references().is_empty() {
        diags.push(
            Diagnostic::error(
                format!("Invalid {} expression", block.ident.as_str()),
                "The condition expression must refer to at least one object from elsewhere in the configuration, or else its result would not be checking anything.",
            )
            .at(condition.range()),
        );
        return None;
    }
    Some(Check {
        condition,
        error_message: error_message?,
    })
}

/// The resource an `import` block's `to` names (module calls by name,
/// instance keys left out, for they may be expressions), with terraform's
/// errors for anything else; `attr` is the whole `to = ...` argument.
fn import_target(to: &Expr, attr: Range, diags: &mut Diagnostics) -> Option<ConfigAddr> {
    use hcl_edit::expr::TraversalOperator;
    let mut names: Vec<&str> = Vec::new();
    let traversal = match &to.expr {
        Expression::Variable(v) => {
            names.push(v.as_str());
            true
        }
        Expression::Traversal(t) => match &t.expr {
            Expression::Variable(v) => {
                names.push(v.as_str());
                t.operators.iter().all(|o| match o.value() {
                    TraversalOperator::GetAttr(a) => {
                        names.push(a.as_str());
                        true
                    }
                    TraversalOperator::Index(_) | TraversalOperator::LegacyIndex(_) => true,
                    _ => false,
                })
            }
            _ => false,
        },
        _ => false,
    };
    let invalid_address = |detail: &str| {
        Diagnostic::error("Invalid import address", detail.to_string()).at(attr.clone())
    };
    if !traversal {
        diags.push(
            Diagnostic::error(
                "Invalid expression",
                "A single static variable reference is required: only attribute access and indexing with constant keys. No calculations, function calls, template expressions, etc are allowed here.",
            )
            .at(to.range()),
        );
        diags.push(invalid_address("Only managed resources can be imported."));
        return None;
    }
    let mut module = Vec::new();
    let mut rest = names.as_slice();
    while let ["module", call, tail @ ..] = rest {
        module.push(call.to_string());
        rest = tail;
    }
    match rest {
        ["data", ..] => {
            diags.push(invalid_address("Only managed resources can be imported."));
            None
        }
        [type_name, name] => Some(ConfigAddr {
            module,
            resource: Some(ResourceKey {
                mode: Mode::Managed,
                type_name: type_name.to_string(),
                name: name.to_string(),
            }),
        }),
        _ => {
            diags.push(
                Diagnostic::error(
                    "Invalid address",
                    "Resource specification must include a resource type and name.",
                )
                .at(to.range()),
            );
            diags.push(invalid_address("Only managed resources can be imported."));
            None
        }
    }
}

/// An `import` block's `to` as an instance address, when its keys are
/// constants.
pub fn static_import_to(to: &Expr) -> Option<crate::addr::ResourceInstanceAddr> {
    let text = to.file.text().get(span_of(&to.expr))?;
    text.trim().parse().ok()
}

/// The target of a `removed` block's `from`, with terraform's errors for
/// anything but a static address of a resource or module call.
fn remove_target(e: &Expr, diags: &mut Diagnostics) -> Option<ConfigAddr> {
    use hcl_edit::expr::TraversalOperator;
    let invalid =
        |detail: &str| Diagnostic::error("Invalid address", detail.to_string()).at(e.range());
    let (root, ops): (&str, Vec<&hcl_edit::Decorated<TraversalOperator>>) = match &e.expr {
        Expression::Variable(v) => (v.as_str(), Vec::new()),
        Expression::Traversal(t) => match &t.expr {
            Expression::Variable(v) => (v.as_str(), t.operators.iter().collect()),
            _ => ("", Vec::new()),
        },
        _ => ("", Vec::new()),
    };
    let static_op = |op: &TraversalOperator| match op {
        TraversalOperator::GetAttr(_) | TraversalOperator::LegacyIndex(_) => true,
        TraversalOperator::Index(i) => matches!(i, Expression::Number(_)) || literal(i).is_some(),
        _ => false,
    };
    if root.is_empty() || !ops.iter().all(|o| static_op(o.value())) {
        diags.push(
            Diagnostic::error(
                "Invalid expression",
                "A single static variable reference is required: only attribute access and indexing with constant keys. No calculations, function calls, template expressions, etc are allowed here.",
            )
            .at(e.range()),
        );
        return None;
    }
    let mut names: Vec<Option<&str>> = vec![Some(root)];
    names.extend(ops.iter().map(|o| match o.value() {
        TraversalOperator::GetAttr(a) => Some(a.as_str()),
        _ => None,
    }));
    let op_range = |i: usize| {
        ops.get(i.wrapping_sub(1))
            .and_then(|o| o.span())
            .map_or_else(|| e.range(), |s| e.file.range(s))
    };
    let mut module = Vec::new();
    let mut i = 0;
    while names.get(i) == Some(&Some("module")) {
        match names.get(i + 1) {
            Some(Some(call)) => module.push(call.to_string()),
            _ => {
                diags.push(
                    Diagnostic::error(
                        "Invalid address operator",
                        "Prefix \"module.\" must be followed by a module name.",
                    )
                    .at(e.range()),
                );
                return None;
            }
        }
        i += 2;
        if i < names.len() && names[i].is_none() {
            diags.push(
                Diagnostic::error(
                    "Module instance keys not allowed",
                    "Module address must be a module (e.g. \"module.foo\"), not a module instance (e.g. \"module.foo[1]\").",
                )
                .at(op_range(i)),
            );
            return None;
        }
    }
    if i == names.len() {
        return Some(ConfigAddr {
            module,
            resource: None,
        });
    }
    let mut mode = Mode::Managed;
    if names[i] == Some("data") {
        mode = Mode::Data;
        i += 1;
    }
    let (Some(Some(type_name)), Some(name)) = (names.get(i), names.get(i + 1)) else {
        diags.push(invalid(
            "Resource specification must include a resource type and name.",
        ));
        return None;
    };
    let Some(name) = name else {
        diags.push(invalid("A resource name is required."));
        return None;
    };
    if i + 2 < names.len() {
        diags.push(
            Diagnostic::error(
                "Resource instance keys not allowed",
                "Resource address must be a resource (e.g. \"test_instance.foo\"), not a resource instance (e.g. \"test_instance.foo[1]\").",
            )
            .at(op_range(i + 2)),
        );
        return None;
    }
    if mode == Mode::Data {
        diags.push(
            Diagnostic::error(
                "Data source address not allowed",
                "Data sources are never destroyed, so they are not valid targets of removed blocks. To remove the data source from state, remove the data source block from configuration.",
            )
            .at(e.range()),
        );
    }
    Some(ConfigAddr {
        module,
        resource: Some(ResourceKey {
            mode,
            type_name: type_name.to_string(),
            name: name.to_string(),
        }),
    })
}

/// The words terraform puts after "in" for a top-level block.
fn block_context(block: &Block) -> String {
    let mut s = block.ident.as_str().to_string();
    for l in &block.labels {
        s.push_str(&format!(" \"{}\"", l.as_str()));
    }
    s
}

impl Span for Expr {
    fn span(&self) -> Option<std::ops::Range<usize>> {
        self.expr.span()
    }
}
