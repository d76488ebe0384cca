//! A plan printed as `terraform plan` prints it (terraform 1.11), with or
//! without terraform's ANSI colours.
//!
//! As in terraform, the rendering works from the JSON plan form of each
//! change (`super::json`): values, where the unknowns are, where the
//! sensitive values are and which paths force a replacement. A change is
//! first diffed, guided by the schema, into a tree of [`Diff`]s, one per
//! block, attribute and element, each with its own action; the tree then
//! prints itself. Strings holding JSON print as `jsonencode(...)` diffs,
//! multi-line strings as heredocs, lists with the unchanged elements around
//! a change as context.
//!
//! Lines wrap as terraform wraps them when its output is not a terminal
//! (78 columns). Drift ("Objects have changed outside of Terraform") and
//! deferred changes are not rendered: the plan model does not hold them.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::json::{self as pj, ChangeJson};
use super::{Action, Plan, Reason, ResourceChange};
use crate::addr::Mode;
use crate::provider::schema::{Attribute, Block, NestedType, Nesting, ObjectNesting};
use crate::value::{go_quote, Type};

/// The width terraform wraps its sentences to when stdout is no terminal.
const COLUMNS: usize = 78;

/// The whole plan as `terraform plan` prints it after refreshing (and as
/// `terraform show PLANFILE` prints it), starting with its blank line.
/// `color` adds terraform's ANSI escapes; without it the text is plain,
/// as with `-no-color`.
pub fn human(plan: &Plan, color: bool) -> String {
    let c = Colorize(color);
    let mut out = String::new();

    let mut counts: BTreeMap<Act, usize> = BTreeMap::new();
    let mut shown: Vec<&ResourceChange> = Vec::new();
    for rc in pj::sorted_changes(plan) {
        let act = Act::of(rc.action);
        let moved = is_moved(rc);
        if act == Act::NoOp && !moved && rc.importing.is_none() {
            continue;
        }
        if act == Act::Delete && rc.addr.mode != Mode::Managed {
            continue;
        }
        shown.push(rc);
        if act != Act::NoOp {
            *counts.entry(act).or_default() += 1;
        }
    }

    let outputs = render_outputs(plan, &c);

    if shown.is_empty() && outputs.is_empty() {
        if plan.destroy {
            out.push_str(&c.color("\n[reset][bold][green]No changes.[reset][bold] No objects need to be destroyed.[reset]\n\n"));
            out.push_str(&word_wrap("Either you have not created any objects yet or the existing objects were already deleted outside of Terraform."));
        } else if plan.refresh_only {
            out.push_str(&c.color("\n[reset][bold][green]No changes.[reset][bold] Your infrastructure still matches the configuration.[reset]\n\n"));
            out.push_str(&word_wrap("Terraform has checked that the real remote objects still match the result of your most recent changes, and found no differences."));
        } else {
            out.push_str(&c.color("\n[reset][bold][green]No changes.[reset][bold] Your infrastructure matches the configuration.[reset]\n\n"));
            out.push_str(&word_wrap("Terraform has compared your real infrastructure against your configuration and found no differences, so no changes are needed."));
        }
        out.push('\n');
        return out;
    }

    if !counts.is_empty() {
        out.push_str(&word_wrap("\nTerraform used the selected providers to generate the following execution plan. Resource actions are indicated with the following symbols:"));
        out.push('\n');
        for act in [
            Act::Create,
            Act::Update,
            Act::Delete,
            Act::DeleteThenCreate,
            Act::CreateThenDelete,
            Act::Read,
        ] {
            if counts.contains_key(&act) {
                out.push_str(&c.color(act.description()));
                out.push('\n');
            }
        }
    }

    if !shown.is_empty() {
        out.push_str("\nTerraform will perform the following actions:\n");
        for rc in &shown {
            out.push('\n');
            out.push_str(&render_resource(rc, &c));
            out.push('\n');
        }
        out.push_str(&summary_with(plan, &c));
    }

    if !outputs.is_empty() {
        out.push_str("\nChanges to Outputs:\n");
        out.push_str(&outputs);
        out.push('\n');
        if counts.is_empty() {
            out.push_str(&word_wrap("\nYou can apply this plan to save these new output values to the Terraform state, without changing any real infrastructure."));
            out.push('\n');
        }
    }
    out
}

/// The summary line, `Plan: 1 to add, 0 to change, 0 to destroy.`, as
/// terraform counts: a replacement is an add and a destroy; data sources
/// read and moves alone are not counted.
pub fn summary(plan: &Plan) -> String {
    let (add, change, destroy) = plan.counts();
    format!(
        "Plan: {}{add} to add, {change} to change, {destroy} to destroy.",
        to_import(plan)
    )
}

/// `1 to import, ` when `import` blocks bring objects in, else nothing.
fn to_import(plan: &Plan) -> String {
    match plan.imports() {
        0 => String::new(),
        n => format!("{n} to import, "),
    }
}

/// The summary as `human` prints it: bold `Plan:`, a blank line before.
fn summary_with(plan: &Plan, c: &Colorize) -> String {
    let (add, change, destroy) = plan.counts();
    c.color(&format!(
        "\n[bold]Plan:[reset] {}{add} to add, {change} to change, {destroy} to destroy.\n",
        to_import(plan)
    ))
}

fn is_moved(rc: &ResourceChange) -> bool {
    rc.previous_addr.as_ref().is_some_and(|p| *p != rc.addr)
}

/// One instance: the comment lines, then the resource block's diff.
fn render_resource(rc: &ResourceChange, c: &Colorize) -> String {
    let act = Act::of(rc.action);
    // A forgotten object is shown as it stays: unchanged.
    let cj = match rc.action {
        Action::Forget => pj::resource_change(&ResourceChange {
            action: Action::NoOp,
            after: rc.before.clone(),
            ..rc.clone()
        }),
        _ => pj::resource_change(rc),
    };
    let change = Change::from_json(&cj);
    let diff = diff_block(change, &rc.schema.block);
    let mode = match rc.addr.mode {
        Mode::Managed => "resource",
        Mode::Data => "data",
    };
    let opts = Opts::new(c.0);
    format!(
        "{}{} {mode} \"{}\" \"{}\" {}",
        c.color(&comment(rc, act)),
        c.color(act.symbol()),
        rc.addr.type_name,
        rc.addr.name,
        diff.render(0, &opts)
    )
}

/// terraform's comment above a resource: what happens and why.
fn comment(rc: &ResourceChange, act: Act) -> String {
    let addr = match &rc.deposed {
        Some(key) => format!("{} (deposed object {key})", rc.addr),
        None => rc.addr.to_string(),
    };
    let mut s = String::new();
    let mut printed_moved = false;
    let mut printed_imported = false;
    match act {
        Act::Create => s.push_str(&format!("[bold]  # {addr}[reset] will be created")),
        Act::Read => {
            s.push_str(&format!("[bold]  # {addr}[reset] will be read during apply"));
            match rc.reason {
                Some(Reason::ReadBecauseConfigUnknown) => {
                    s.push_str("\n  # (config refers to values not yet known)")
                }
                Some(Reason::ReadBecauseDependencyPending) => {
                    s.push_str("\n  # (depends on a resource or a module with changes pending)")
                }
                _ => {}
            }
        }
        Act::Update => s.push_str(&format!("[bold]  # {addr}[reset] will be updated in-place")),
        Act::DeleteThenCreate | Act::CreateThenDelete => match rc.reason {
            Some(Reason::ReplaceByTriggers) => s.push_str(&format!(
                "[bold]  # {addr}[reset] will be [bold][red]replaced[reset] due to changes in replace_triggered_by"
            )),
            Some(Reason::ReplaceByRequest) => s.push_str(&format!(
                "[bold]  # {addr}[reset] will be [bold][red]replaced[reset], as requested"
            )),
            _ => s.push_str(&format!(
                "[bold]  # {addr}[reset] must be [bold][red]replaced[reset]"
            )),
        },
        Act::Delete => {
            s.push_str(&format!(
                "[bold]  # {addr}[reset] will be [bold][red]destroyed[reset]"
            ));
            let index = rc
                .addr
                .key
                .as_ref()
                .map(|k| pj::key_json(k).to_string())
                .unwrap_or_default();
            match rc.reason {
                Some(Reason::DeleteBecauseNoResourceConfig) => s.push_str(&format!(
                    "\n  # (because {}.{} is not in configuration)",
                    rc.addr.type_name, rc.addr.name
                )),
                Some(Reason::DeleteBecauseCountIndex) => s.push_str(&format!(
                    "\n  # (because index [{index}] is out of range for count)"
                )),
                Some(Reason::DeleteBecauseEachKey) => s.push_str(&format!(
                    "\n  # (because key [{index}] is not in for_each map)"
                )),
                Some(Reason::DeleteBecauseNoModule) => s.push_str(&format!(
                    "\n  # (because {} is not in configuration)",
                    crate::addr::module_text(&rc.addr.module)
                )),
                _ => {}
            }
            if rc.deposed.is_some() {
                s.push_str("\n  # (left over from a partially-failed replacement of this instance)");
            }
        }
        Act::Forget => {
            s.push_str(&format!(
                "[bold] # {addr}[reset] will no longer be managed by Terraform, but [bold][red]will not be destroyed[reset]"
            ));
            s.push_str("\n # (destroy = false is set in the configuration)");
        }
        Act::NoOp => {
            if let Some(prev) = rc.previous_addr.as_ref().filter(|p| **p != rc.addr) {
                s.push_str(&format!(
                    "[bold]  # {prev}[reset] has moved to [bold]{addr}[reset]"
                ));
                printed_moved = true;
            } else if rc.importing.is_some() {
                s.push_str(&format!("[bold]  # {addr}[reset] will be imported"));
                printed_imported = true;
            }
        }
    }
    s.push('\n');
    if let Some(prev) = rc.previous_addr.as_ref().filter(|p| **p != rc.addr) {
        if !printed_moved {
            s.push_str(&format!("  # [reset](moved from {prev})\n"));
        }
    }
    if let (Some(id), false) = (&rc.importing, printed_imported) {
        s.push_str(&format!("  # [reset](imported from \"{id}\")\n"));
        if matches!(act, Act::DeleteThenCreate | Act::CreateThenDelete) {
            s.push_str(
                "  # [reset][yellow]Warning: this will destroy the imported resource[reset]\n",
            );
        }
    }
    s
}

/// The changed outputs, one line each, names aligned over all outputs.
fn render_outputs(plan: &Plan, c: &Colorize) -> String {
    let mut outputs: Vec<_> = plan.outputs.iter().collect();
    outputs.sort_by(|a, b| a.name.cmp(&b.name));
    let width = outputs
        .iter()
        .map(|o| attribute_name(&o.name).len())
        .max()
        .unwrap_or(0);
    let opts = Opts::new(c.0);
    let mut lines = Vec::new();
    for o in outputs {
        let cj = pj::output_change(o);
        let diff = diff_output(Change::from_json(&cj));
        if diff.action == Act::NoOp {
            continue;
        }
        lines.push(format!(
            "{} {:<width$} = {}",
            c.color(diff.action.symbol()),
            attribute_name(&o.name),
            diff.render(0, &opts)
        ));
    }
    lines.join("\n")
}

/// terraform's word wrapping of its own sentences: lines starting with a
/// space are kept whole, others broken at spaces to fit.
fn word_wrap(s: &str) -> String {
    let limit = COLUMNS - 1;
    let mut out = Vec::new();
    for line in s.split('\n') {
        if line.starts_with(' ') {
            out.push(line.to_string());
            continue;
        }
        let mut wrapped = String::new();
        let mut current = String::new();
        for word in line.split(' ') {
            if current.is_empty() {
                current.push_str(word);
            } else if current.chars().count() + 1 + word.chars().count() > limit {
                wrapped.push_str(&current);
                wrapped.push('\n');
                current = word.to_string();
            } else {
                current.push(' ');
                current.push_str(word);
            }
        }
        wrapped.push_str(&current);
        out.push(wrapped);
    }
    out.join("\n")
}

/// terraform's colour markup (`[bold]`, `[red]`, ...): ANSI escapes, with
/// a reset after any text that held one, or nothing when colour is off.
struct Colorize(bool);

impl Colorize {
    fn color(&self, s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut colored = false;
        let mut rest = s;
        while let Some(open) = rest.find('[') {
            let after = &rest[open + 1..];
            let code = after.find(']').and_then(|close| {
                let name = &after[..close];
                color_code(name).map(|code| (close, code))
            });
            match code {
                Some((close, code)) => {
                    out.push_str(&rest[..open]);
                    colored = true;
                    if self.0 {
                        out.push_str(&format!("\x1b[{code}m"));
                    }
                    rest = &after[close + 1..];
                }
                None => {
                    out.push_str(&rest[..=open]);
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        if colored && self.0 {
            out.push_str("\x1b[0m");
        }
        out
    }
}

fn color_code(name: &str) -> Option<&'static str> {
    Some(match name {
        "reset" => "0",
        "bold" => "1",
        "red" => "31",
        "green" => "32",
        "yellow" => "33",
        "cyan" => "36",
        "dark_gray" => "90",
        _ => return None,
    })
}

/// An action as the renderer knows it: the plan's actions, with a
/// replacement split by its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Act {
    NoOp,
    Create,
    Read,
    Update,
    DeleteThenCreate,
    CreateThenDelete,
    Delete,
    Forget,
}

impl Act {
    fn of(a: Action) -> Act {
        match a {
            Action::NoOp => Act::NoOp,
            Action::Create => Act::Create,
            Action::Read => Act::Read,
            Action::Update => Act::Update,
            Action::Replace {
                create_before_destroy: false,
            } => Act::DeleteThenCreate,
            Action::Replace {
                create_before_destroy: true,
            } => Act::CreateThenDelete,
            Action::Delete => Act::Delete,
            Action::Forget => Act::Forget,
        }
    }

    /// Three printable characters, in colour markup.
    fn symbol(self) -> &'static str {
        match self {
            Act::DeleteThenCreate => "[red]-[reset]/[green]+[reset]",
            Act::CreateThenDelete => "[green]+[reset]/[red]-[reset]",
            Act::Create => "  [green]+[reset]",
            Act::Delete => "  [red]-[reset]",
            Act::Read => " [cyan]<=[reset]",
            Act::Update => "  [yellow]~[reset]",
            Act::NoOp => "   ",
            Act::Forget => " [bold].[reset]",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Act::Create => "  [green]+[reset] create",
            Act::Delete => "  [red]-[reset] destroy",
            Act::Update => "  [yellow]~[reset] update in-place",
            Act::CreateThenDelete => {
                "[green]+[reset]/[red]-[reset] create replacement and then destroy"
            }
            Act::DeleteThenCreate => {
                "[red]-[reset]/[green]+[reset] destroy and then create replacement"
            }
            Act::Read => " [cyan]<=[reset] read (data resources)",
            Act::NoOp | Act::Forget => "",
        }
    }
}

/// Two actions of siblings folded into their parent's: equal stays, any
/// difference is an update, a no-op changes nothing.
fn compare_actions(current: Act, next: Act) -> Act {
    if next == Act::NoOp {
        current
    } else if current != next {
        Act::Update
    } else {
        current
    }
}

// ---------------------------------------------------------------------
// Changes: one value's before and after, in the JSON plan's terms.

/// Paths whose change forces a replacement, followed down the value.
#[derive(Debug, Clone, Default)]
struct Replace(Vec<Vec<Json>>);

impl Replace {
    fn matches(&self) -> bool {
        self.0.iter().any(Vec::is_empty)
    }

    fn key(&self, key: &str) -> Replace {
        Replace(
            self.0
                .iter()
                .filter(|p| p.first().and_then(Json::as_str) == Some(key))
                .map(|p| p[1..].to_vec())
                .collect(),
        )
    }

    fn index(&self, index: usize) -> Replace {
        Replace(
            self.0
                .iter()
                .filter(|p| match p.first() {
                    Some(Json::Number(n)) => n.as_f64().map(|f| f as i64) == Some(index as i64),
                    Some(Json::String(s)) => {
                        s.parse::<f64>().ok().map(|f| f as i64) == Some(index as i64)
                    }
                    _ => false,
                })
                .map(|p| p[1..].to_vec())
                .collect(),
        )
    }
}

/// One value's change: before and after (JSON null standing for absent),
/// whether each was present at all, and the unknown, sensitive and
/// replace markers at this place.
#[derive(Debug, Clone, Default)]
struct Change {
    before_explicit: bool,
    after_explicit: bool,
    before: Json,
    after: Json,
    unknown: Json,
    before_sensitive: Json,
    after_sensitive: Json,
    replace: Replace,
    /// The schema uses features the legacy SDK cannot, so an empty
    /// string is not taken for null.
    non_legacy: bool,
}

impl Change {
    fn from_json(cj: &ChangeJson) -> Change {
        let paths = match &cj.replace_paths {
            Some(Json::Array(paths)) => {
                paths.iter().filter_map(|p| p.as_array().cloned()).collect()
            }
            _ => Vec::new(),
        };
        Change {
            before_explicit: false,
            after_explicit: false,
            before: cj.before.clone().unwrap_or(Json::Null),
            after: cj.after.clone().unwrap_or(Json::Null),
            unknown: cj.after_unknown.clone(),
            before_sensitive: cj.before_sensitive.clone(),
            after_sensitive: cj.after_sensitive.clone(),
            replace: Replace(paths),
            non_legacy: false,
        }
    }

    fn is_unknown(&self) -> bool {
        self.unknown == Json::Bool(true)
    }
    fn is_before_sensitive(&self) -> bool {
        self.before_sensitive == Json::Bool(true)
    }
    fn is_after_sensitive(&self) -> bool {
        self.after_sensitive == Json::Bool(true)
    }

    fn action(&self) -> Act {
        let before_missing = self.before.is_null() && !self.before_explicit;
        let after_missing = self.after.is_null() && !self.after_explicit;
        if before_missing && (!self.after.is_null() || self.after_explicit) {
            return Act::Create;
        }
        if after_missing && (!self.before.is_null() || self.before_explicit) {
            return Act::Delete;
        }
        if self.before == self.after
            && self.after_explicit == self.before_explicit
            && self.is_after_sensitive() == self.is_before_sensitive()
        {
            return Act::NoOp;
        }
        Act::Update
    }

    /// The starting action for a collection: create from nothing, delete
    /// to nothing, else a no-op its elements may change.
    fn iteration_action(&self) -> Act {
        match (self.before.is_null(), self.after.is_null()) {
            (true, true) => Act::NoOp,
            (true, false) => Act::Create,
            (false, true) => Act::Delete,
            (false, false) => Act::NoOp,
        }
    }

    fn as_delete(&self) -> Change {
        Change {
            before_explicit: self.before_explicit,
            after_explicit: false,
            before: self.before.clone(),
            after: Json::Null,
            unknown: Json::Null,
            before_sensitive: self.before_sensitive.clone(),
            after_sensitive: Json::Null,
            replace: self.replace.clone(),
            non_legacy: false,
        }
    }

    fn as_create(&self) -> Change {
        Change {
            before_explicit: false,
            after_explicit: self.after_explicit,
            before: Json::Null,
            after: self.after.clone(),
            unknown: self.unknown.clone(),
            before_sensitive: Json::Null,
            after_sensitive: self.after_sensitive.clone(),
            replace: self.replace.clone(),
            non_legacy: false,
        }
    }

    /// The child at `key` of an object or map change.
    fn key(&self, key: &str) -> Change {
        let get = |j: &Json| j.as_object().and_then(|m| m.get(key)).cloned();
        let before = get(&self.before);
        let after = get(&self.after);
        Change {
            before_explicit: before.is_some(),
            after_explicit: after.is_some(),
            before: before.unwrap_or(Json::Null),
            after: after.unwrap_or(Json::Null),
            unknown: get(&self.unknown).unwrap_or(Json::Null),
            before_sensitive: get(&self.before_sensitive).unwrap_or(Json::Null),
            after_sensitive: get(&self.after_sensitive).unwrap_or(Json::Null),
            replace: self.replace.key(key),
            non_legacy: self.non_legacy,
        }
    }

    /// The keys of an object or map change: before's and after's, and with
    /// `all`, the unknown and sensitive ones too.
    fn keys(&self, all: bool) -> Vec<String> {
        let mut keys: Vec<String> = Vec::new();
        let mut sources = vec![&self.before, &self.after];
        if all {
            sources.extend([&self.unknown, &self.after_sensitive, &self.before_sensitive]);
        }
        for j in sources {
            if let Some(m) = j.as_object() {
                for k in m.keys() {
                    if !keys.contains(k) {
                        keys.push(k.clone());
                    }
                }
            }
        }
        keys.sort();
        keys
    }

    /// The child pairing element `b` of before with element `a` of after
    /// in a sequence change (an index out of range is absent).
    fn index(&self, b: usize, a: usize) -> Change {
        let get = |j: &Json, i: usize| j.as_array().and_then(|v| v.get(i)).cloned();
        let before = get(&self.before, b);
        let after = get(&self.after, a);
        let relevant = if b < self.before_len() { b } else { a };
        Change {
            before_explicit: before.is_some(),
            after_explicit: after.is_some(),
            before: before.unwrap_or(Json::Null),
            after: after.unwrap_or(Json::Null),
            unknown: get(&self.unknown, a).unwrap_or(Json::Null),
            before_sensitive: get(&self.before_sensitive, b).unwrap_or(Json::Null),
            after_sensitive: get(&self.after_sensitive, a).unwrap_or(Json::Null),
            replace: self.replace.index(relevant),
            non_legacy: false,
        }
    }

    fn before_list(&self) -> Option<&Vec<Json>> {
        self.before.as_array()
    }
    fn after_list(&self) -> Option<&Vec<Json>> {
        self.after.as_array()
    }
    fn before_len(&self) -> usize {
        self.before_list().map_or(0, Vec::len)
    }
    fn after_len(&self) -> usize {
        self.after_list().map_or(0, Vec::len)
    }
}

// ---------------------------------------------------------------------
// Diffs: the tree a change becomes.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prim {
    String,
    Number,
    Bool,
    /// A JSON null of no type (in `jsonencode` and outputs).
    Nil,
}

#[derive(Debug, Clone)]
struct Diff {
    renderer: Renderer,
    action: Act,
    replace: bool,
}

#[derive(Debug, Clone)]
enum Renderer {
    Primitive {
        before: Json,
        after: Json,
        ty: Prim,
    },
    Object {
        attributes: BTreeMap<String, Diff>,
        override_null_suffix: bool,
    },
    Map {
        elements: BTreeMap<String, Diff>,
        override_null_suffix: bool,
        override_forces_replacement: bool,
        align_keys: bool,
    },
    List {
        elements: Vec<Diff>,
        display_context: bool,
    },
    Set {
        elements: Vec<Diff>,
        override_forces_replacement: bool,
    },
    Block {
        attributes: BTreeMap<String, Diff>,
        blocks: BTreeMap<String, BlockGroup>,
    },
    Sensitive {
        inner_action: Act,
        before: bool,
        after: bool,
    },
    SensitiveBlock {
        inner_action: Act,
        before: bool,
        after: bool,
    },
    TypeChange {
        before: Box<Diff>,
        after: Box<Diff>,
    },
    Unknown {
        before: Option<Box<Diff>>,
    },
    WriteOnly {
        sensitive: bool,
    },
}

/// The blocks of one nested block type, with what holds for all of them.
#[derive(Debug, Clone)]
struct BlockGroup {
    blocks: Blocks,
    replace: bool,
    before_sensitive: bool,
    after_sensitive: bool,
    unknown: bool,
}

#[derive(Debug, Clone)]
enum Blocks {
    Single(Box<Diff>),
    List(Vec<Diff>),
    Set(Vec<Diff>),
    Map(BTreeMap<String, Diff>),
}

impl Diff {
    fn new(renderer: Renderer, action: Act, replace: bool) -> Diff {
        Diff {
            renderer,
            action,
            replace,
        }
    }

    /// The diff of a primitive, its action from the change.
    fn primitive(change: &Change, ty: Prim) -> Diff {
        Diff::new(
            Renderer::Primitive {
                before: change.before.clone(),
                after: change.after.clone(),
                ty,
            },
            change.action(),
            change.replace.matches(),
        )
    }
}

/// A whole block (a resource's body, or a nested block).
fn diff_block(change: Change, block: &Block) -> Diff {
    if let Some(d) = check_sensitive(&change, |c| diff_block(c, block), true) {
        return d;
    }
    if let Some(d) = check_unknown(&change, block_attribute_names(block), |c| {
        diff_block(c, block)
    }) {
        return d;
    }
    let mut change = change;
    change.non_legacy = change.non_legacy || non_legacy_features(block);

    let mut current = change.iteration_action();
    let mut attributes = BTreeMap::new();
    for (key, attr) in &block.attributes {
        if attr.write_only {
            continue;
        }
        let mut child = change.key(key);
        child.before_explicit = false;
        child.after_explicit = false;
        let both_null = child.before.is_null() && child.after.is_null();
        let d = diff_attribute(child, attr);
        if d.action == Act::NoOp && both_null {
            continue;
        }
        current = compare_actions(current, d.action);
        attributes.insert(key.clone(), d);
    }

    let mut blocks = BTreeMap::new();
    for (key, nested) in &block.block_types {
        let child = change.key(key);
        let group_replace = child.replace.matches();
        let before_sensitive = child.is_before_sensitive();
        let after_sensitive = child.is_after_sensitive();
        let unknown = child.is_unknown();
        let both_null = child.before.is_null() && child.after.is_null();
        let (group, action) = match nested.nesting {
            Nesting::Set => {
                let (diffs, action) = collect_set(&child, |c| diff_block(c, &nested.block));
                (Blocks::Set(diffs), action)
            }
            Nesting::List => {
                let (diffs, action) = collect_nested_list(&child, |c| diff_block(c, &nested.block));
                (Blocks::List(diffs), action)
            }
            Nesting::Map => {
                let (diffs, action) = collect_map(&child, false, |c| diff_block(c, &nested.block));
                (Blocks::Map(diffs), action)
            }
            Nesting::Single | Nesting::Group => {
                let d = diff_block(child, &nested.block);
                let action = d.action;
                (Blocks::Single(Box::new(d)), action)
            }
        };
        if action == Act::NoOp && both_null && !unknown {
            continue;
        }
        current = compare_actions(current, action);
        blocks.insert(
            key.clone(),
            BlockGroup {
                blocks: group,
                replace: group_replace,
                before_sensitive,
                after_sensitive,
                unknown,
            },
        );
    }

    for (key, attr) in &block.attributes {
        if attr.write_only {
            let sensitive = change.is_before_sensitive() || change.is_after_sensitive();
            let action = if current == Act::Update {
                Act::NoOp
            } else {
                current
            };
            attributes.insert(
                key.clone(),
                Diff::new(
                    Renderer::WriteOnly { sensitive },
                    action,
                    change.replace.matches(),
                ),
            );
        }
    }

    Diff::new(
        Renderer::Block { attributes, blocks },
        current,
        change.replace.matches(),
    )
}

fn block_attribute_names(block: &Block) -> Vec<String> {
    block.attributes.keys().cloned().collect()
}

/// Whether a block uses what the legacy SDK could not declare (map and
/// group blocks, nested attributes, dynamic or structural types, nested
/// collections of non-primitives).
fn non_legacy_features(block: &Block) -> bool {
    if block
        .block_types
        .values()
        .any(|b| matches!(b.nesting, Nesting::Map | Nesting::Group))
    {
        return true;
    }
    block.attributes.values().any(|a| {
        if a.nested_type.is_some() {
            return true;
        }
        match &a.ty {
            t if t.has_dynamic() => true,
            Type::Tuple(_) | Type::Object { .. } => true,
            Type::List(e) | Type::Set(e) | Type::Map(e) => match e.element() {
                Some(inner) => !inner.is_primitive(),
                None => false,
            },
            _ => false,
        }
    })
}

fn diff_attribute(change: Change, attr: &Attribute) -> Diff {
    match &attr.nested_type {
        Some(nested) => diff_nested(change, nested),
        None => diff_type(change, &attr.ty),
    }
}

fn diff_nested(change: Change, nested: &NestedType) -> Diff {
    if let Some(d) = check_sensitive(&change, |c| diff_nested(c, nested), false) {
        return d;
    }
    let names: Vec<String> = nested.attributes.keys().cloned().collect();
    if let Some(d) = check_unknown(&change, names, |c| diff_nested(c, nested)) {
        return d;
    }
    let single = NestedType {
        nesting: ObjectNesting::Single,
        attributes: nested.attributes.clone(),
    };
    match nested.nesting {
        ObjectNesting::Single => diff_nested_object(change, &nested.attributes),
        ObjectNesting::Map => {
            let (elements, action) = collect_map(&change, false, |c| diff_nested(c, &single));
            Diff::new(
                Renderer::Map {
                    elements,
                    override_null_suffix: true,
                    override_forces_replacement: true,
                    align_keys: false,
                },
                action,
                change.replace.matches(),
            )
        }
        ObjectNesting::List => {
            let (elements, action) = collect_nested_list(&change, |c| diff_nested(c, &single));
            Diff::new(
                Renderer::List {
                    elements,
                    display_context: false,
                },
                action,
                change.replace.matches(),
            )
        }
        ObjectNesting::Set => {
            let (elements, action) = collect_set(&change, |c| diff_nested(c, &single));
            Diff::new(
                Renderer::Set {
                    elements,
                    override_forces_replacement: true,
                },
                action,
                change.replace.matches(),
            )
        }
    }
}

fn diff_nested_object(change: Change, attrs: &BTreeMap<String, Attribute>) -> Diff {
    let mut current = change.iteration_action();
    let mut attributes = BTreeMap::new();
    for (key, attr) in attrs.iter().filter(|(_, a)| !a.write_only) {
        let mut child = change.key(key);
        child.before_explicit = false;
        child.after_explicit = false;
        let both_null = child.before.is_null() && child.after.is_null();
        let d = diff_attribute(child, attr);
        if d.action == Act::NoOp && both_null {
            continue;
        }
        current = compare_actions(current, d.action);
        attributes.insert(key.clone(), d);
    }
    for (key, _) in attrs.iter().filter(|(_, a)| a.write_only) {
        let mut child = change.key(key);
        child.before_explicit = false;
        child.after_explicit = false;
        let sensitive = child.is_before_sensitive() || child.is_after_sensitive();
        let action = if current == Act::Update {
            Act::NoOp
        } else {
            current
        };
        attributes.insert(
            key.clone(),
            Diff::new(
                Renderer::WriteOnly { sensitive },
                action,
                child.replace.matches(),
            ),
        );
    }
    Diff::new(
        Renderer::Object {
            attributes,
            override_null_suffix: false,
        },
        current,
        change.replace.matches(),
    )
}

/// An attribute of a declared type.
fn diff_type(change: Change, ty: &Type) -> Diff {
    let mut change = change;
    if !change.non_legacy {
        // The legacy SDK cannot tell an empty string from null.
        if change.before.as_str() == Some("") {
            change.before = Json::Null;
        }
        if change.after.as_str() == Some("") {
            change.after = Json::Null;
        }
    }
    if let Some(d) = check_sensitive(&change, |c| diff_type(c, ty), false) {
        return d;
    }
    if let Some(d) = check_unknown(&change, Vec::new(), |c| diff_type(c, ty)) {
        return d;
    }
    let replace = change.replace.matches();
    match ty {
        Type::Dynamic => diff_output(change),
        Type::String => Diff::primitive(&change, Prim::String),
        Type::Number => Diff::primitive(&change, Prim::Number),
        Type::Bool => Diff::primitive(&change, Prim::Bool),
        Type::Object { attributes, .. } => {
            let mut current = change.iteration_action();
            let mut diffs = BTreeMap::new();
            for (key, at) in attributes {
                let mut child = change.key(key);
                child.before_explicit = false;
                child.after_explicit = false;
                let both_null = child.before.is_null() && child.after.is_null();
                let d = diff_type(child, at);
                if d.action == Act::NoOp && both_null {
                    continue;
                }
                current = compare_actions(current, d.action);
                diffs.insert(key.clone(), d);
            }
            Diff::new(
                Renderer::Object {
                    attributes: diffs,
                    override_null_suffix: true,
                },
                current,
                replace,
            )
        }
        Type::Map(et) => {
            let (elements, action) = collect_map(&change, true, |c| diff_type(c, et));
            Diff::new(
                Renderer::Map {
                    elements,
                    override_null_suffix: false,
                    override_forces_replacement: false,
                    align_keys: true,
                },
                action,
                replace,
            )
        }
        Type::List(et) => {
            let objects = matches!(**et, Type::Object { .. });
            let (elements, action) = transform_slice(&change, |_| objects, |c| diff_type(c, et));
            Diff::new(
                Renderer::List {
                    elements,
                    display_context: true,
                },
                action,
                replace,
            )
        }
        Type::Tuple(ets) => {
            let mut current = change.iteration_action();
            let mut elements = Vec::new();
            for (i, et) in ets.iter().enumerate() {
                let d = diff_type(change.index(i, i), et);
                current = compare_actions(current, d.action);
                elements.push(d);
            }
            Diff::new(
                Renderer::List {
                    elements,
                    display_context: true,
                },
                current,
                replace,
            )
        }
        Type::Set(et) => {
            let (elements, action) = collect_set(&change, |c| diff_type(c, et));
            Diff::new(
                Renderer::Set {
                    elements,
                    override_forces_replacement: false,
                },
                action,
                replace,
            )
        }
    }
}

/// A value of no declared type (an output, a `jsonencode`d string, a
/// dynamic attribute): diffed by the JSON's own shape.
fn diff_output(change: Change) -> Diff {
    if let Some(d) = check_sensitive(&change, diff_json, false) {
        return d;
    }
    if let Some(d) = check_unknown(&change, Vec::new(), diff_json) {
        return d;
    }
    diff_json(change)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JsonType {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

fn json_type(j: &Json) -> JsonType {
    match j {
        Json::Null => JsonType::Null,
        Json::Bool(_) => JsonType::Bool,
        Json::Number(_) => JsonType::Number,
        Json::String(_) => JsonType::String,
        Json::Array(_) => JsonType::Array,
        Json::Object(_) => JsonType::Object,
    }
}

/// A JSON value's change (terraform's jsondiff).
fn diff_json(change: Change) -> Diff {
    if let Some(d) = check_sensitive_json(&change) {
        return d;
    }
    if change.is_unknown() {
        let mut change = change;
        change.after_explicit = true;
        return if change.before.is_null() {
            Diff::new(Renderer::Unknown { before: None }, Act::Create, false)
        } else {
            let before = diff_json(change.as_delete());
            Diff::new(
                Renderer::Unknown {
                    before: Some(Box::new(before)),
                },
                Act::Update,
                false,
            )
        };
    }
    let bt = json_type(&change.before);
    let at = json_type(&change.after);
    let deleted = at == JsonType::Null && !change.after_explicit;
    let created = bt == JsonType::Null && !change.before_explicit;
    if bt == at || created || deleted {
        let target = if bt == JsonType::Null { at } else { bt };
        return json_update(change, target);
    }
    let b = json_update(change.as_delete(), bt);
    let a = json_update(change.as_create(), at);
    Diff::new(
        Renderer::TypeChange {
            before: Box::new(b),
            after: Box::new(a),
        },
        Act::Update,
        false,
    )
}

fn check_sensitive_json(change: &Change) -> Option<Diff> {
    let before = change.is_before_sensitive();
    let after = change.is_after_sensitive();
    if !before && !after {
        return None;
    }
    let inner = diff_json(unmarked(change));
    let action = sensitive_action(change, inner.action, before, after);
    Some(Diff::new(
        Renderer::Sensitive {
            inner_action: inner.action,
            before,
            after,
        },
        action,
        false,
    ))
}

fn json_update(change: Change, target: JsonType) -> Diff {
    match target {
        JsonType::Null => json_primitive(&change, Prim::Nil),
        JsonType::Bool => json_primitive(&change, Prim::Bool),
        JsonType::String => json_primitive(&change, Prim::String),
        JsonType::Number => json_primitive(&change, Prim::Number),
        JsonType::Object => {
            let (elements, action) = collect_map(&change, true, diff_json);
            Diff::new(
                Renderer::Object {
                    attributes: elements,
                    override_null_suffix: true,
                },
                action,
                false,
            )
        }
        JsonType::Array => {
            let (elements, action) =
                transform_slice(&change, |j| json_type(j) == JsonType::Object, diff_json);
            Diff::new(
                Renderer::List {
                    elements,
                    display_context: true,
                },
                action,
                false,
            )
        }
    }
}

fn json_primitive(change: &Change, ty: Prim) -> Diff {
    let before_missing = change.before.is_null() && !change.before_explicit;
    let after_missing = change.after.is_null() && !change.after_explicit;
    let action = if before_missing && !after_missing {
        Act::Create
    } else if !before_missing && after_missing {
        Act::Delete
    } else if change.before == change.after {
        Act::NoOp
    } else {
        Act::Update
    };
    Diff::new(
        Renderer::Primitive {
            before: change.before.clone(),
            after: change.after.clone(),
            ty,
        },
        action,
        false,
    )
}

/// The change with its own sensitive marks taken off (the children's
/// stay), as the inner change of a sensitive diff.
fn unmarked(change: &Change) -> Change {
    Change {
        before_sensitive: Json::Bool(false),
        after_sensitive: Json::Bool(false),
        non_legacy: false,
        ..change.clone()
    }
}

fn sensitive_action(change: &Change, inner: Act, before: bool, after: bool) -> Act {
    let null_noop = change.before.is_null()
        && !change.before_explicit
        && change.after.is_null()
        && !change.after_explicit;
    if inner == Act::NoOp && before != after && !null_noop {
        Act::Update
    } else {
        inner
    }
}

/// A sensitive value hides its content (a block says so in a comment).
fn check_sensitive(change: &Change, inner: impl Fn(Change) -> Diff, block: bool) -> Option<Diff> {
    let before = change.is_before_sensitive();
    let after = change.is_after_sensitive();
    if !before && !after {
        return None;
    }
    let inner = inner(unmarked(change));
    let action = sensitive_action(change, inner.action, before, after);
    let renderer = if block {
        Renderer::SensitiveBlock {
            inner_action: inner.action,
            before,
            after,
        }
    } else {
        Renderer::Sensitive {
            inner_action: inner.action,
            before,
            after,
        }
    };
    Some(Diff::new(renderer, action, change.replace.matches()))
}

/// An unknown value: `(known after apply)`, after what it was if it was
/// something. `children` are the attributes a block's old value shows as
/// becoming unknown rather than deleted.
fn check_unknown(
    change: &Change,
    children: Vec<String>,
    inner: impl Fn(Change) -> Diff,
) -> Option<Diff> {
    if !change.is_unknown() {
        return None;
    }
    let mut change = change.clone();
    change.after_explicit = true;
    let replace = change.replace.matches();
    if change.before.is_null() {
        return Some(Diff::new(
            Renderer::Unknown { before: None },
            change.action(),
            replace,
        ));
    }
    let mut before = change.as_delete();
    before.unknown = if children.is_empty() {
        Json::Null
    } else {
        Json::Object(
            children
                .into_iter()
                .map(|k| (k, Json::Bool(true)))
                .collect(),
        )
    };
    let before = inner(before);
    Some(Diff::new(
        Renderer::Unknown {
            before: Some(Box::new(before)),
        },
        change.action(),
        replace,
    ))
}

/// Elements of a map (or object of blocks) by key.
fn collect_map(
    change: &Change,
    all_keys: bool,
    f: impl Fn(Change) -> Diff,
) -> (BTreeMap<String, Diff>, Act) {
    let before = change.before.is_object();
    let after = change.after.is_object();
    let mut current = match (before, after) {
        (true, false) => Act::Delete,
        (false, true) => Act::Create,
        _ => Act::NoOp,
    };
    let mut elements = BTreeMap::new();
    for key in change.keys(all_keys) {
        let d = f(change.key(&key));
        current = compare_actions(current, d.action);
        elements.insert(key, d);
    }
    (elements, current)
}

/// Elements of a list of blocks or nested objects, index by index.
fn collect_nested_list(change: &Change, f: impl Fn(Change) -> Diff) -> (Vec<Diff>, Act) {
    let mut current = change.iteration_action();
    let mut elements = Vec::new();
    let n = change.before_len().max(change.after_len());
    for i in 0..n {
        let d = f(change.index(i, i));
        current = compare_actions(current, d.action);
        elements.push(d);
    }
    (elements, current)
}

/// Elements of a set: equal elements paired, the rest deleted (before's)
/// or created (after's).
fn collect_set(change: &Change, f: impl Fn(Change) -> Diff) -> (Vec<Diff>, Act) {
    let mut current = change.iteration_action();
    let nb = change.before_len();
    let na = change.after_len();
    let mut before_match: Vec<Option<usize>> = vec![None; nb];
    let mut after_match: Vec<Option<usize>> = vec![None; na];
    for (ix, slot) in before_match.iter_mut().enumerate() {
        for (jx, taken) in after_match.iter_mut().enumerate() {
            if taken.is_some() {
                continue;
            }
            let child = change.index(ix, jx);
            if child.before == child.after
                && child.is_before_sensitive() == child.is_after_sensitive()
                && !child.is_unknown()
            {
                *slot = Some(jx);
                *taken = Some(ix);
            }
        }
    }
    let mut elements = Vec::new();
    for (ix, m) in before_match.iter().enumerate() {
        let child = match m {
            Some(jx) => change.index(ix, *jx),
            None => change.index(ix, na),
        };
        let d = f(child);
        current = compare_actions(current, d.action);
        elements.push(d);
    }
    for (jx, m) in after_match.iter().enumerate() {
        if m.is_some() {
            continue;
        }
        let d = f(change.index(nb, jx));
        current = compare_actions(current, d.action);
        elements.push(d);
    }
    (elements, current)
}

/// Elements of a list, before and after lined up by their longest common
/// subsequence; objects that differ are paired as updates.
fn transform_slice(
    change: &Change,
    is_object: impl Fn(&Json) -> bool,
    f: impl Fn(Change) -> Diff,
) -> (Vec<Diff>, Act) {
    let mut current = match (
        change.before_list().is_some(),
        change.after_list().is_some(),
    ) {
        (true, false) => Act::Delete,
        (false, true) => Act::Create,
        _ => Act::NoOp,
    };
    let empty = Vec::new();
    let before = change.before_list().unwrap_or(&empty);
    let after = change.after_list().unwrap_or(&empty);
    let mut elements = Vec::new();
    process_slice(before, after, is_object, |b, a| {
        let d = f(change.index(b, a));
        current = compare_actions(current, d.action);
        elements.push(d);
    });
    (elements, current)
}

/// Walks two sequences in step: pairs of the longest common subsequence,
/// deletions and insertions between them (`len` of a side standing for
/// "absent").
fn process_slice<T: PartialEq>(
    before: &[T],
    after: &[T],
    is_object: impl Fn(&T) -> bool,
    mut process: impl FnMut(usize, usize),
) {
    if before.len() == after.len() && !is_reorder(before, after) {
        for i in 0..before.len() {
            process(i, i);
        }
        return;
    }
    let lcs = longest_common_subsequence(before, after);
    let (mut bi, mut ai, mut li) = (0, 0, 0);
    while bi < before.len() || ai < after.len() || li < lcs.len() {
        while bi < before.len() && (li >= lcs.len() || before[bi] != *lcs[li]) {
            let object_diff = is_object(&before[bi])
                && ai < after.len()
                && is_object(&after[ai])
                && (li >= lcs.len() || after[ai] != *lcs[li]);
            if object_diff {
                process(bi, ai);
                bi += 1;
                ai += 1;
                continue;
            }
            process(bi, after.len());
            bi += 1;
        }
        while ai < after.len() && (li >= lcs.len() || after[ai] != *lcs[li]) {
            process(before.len(), ai);
            ai += 1;
        }
        if li < lcs.len() {
            process(bi, ai);
            bi += 1;
            ai += 1;
            li += 1;
        }
    }
}

/// Whether two sequences of one length hold the same elements, every
/// element of before somewhere in after.
fn is_reorder<T: PartialEq>(before: &[T], after: &[T]) -> bool {
    before.len() == after.len() && before.iter().all(|b| after.contains(b))
}

/// The longest common subsequence, walking back from the end and
/// preferring to step along `after` on ties, as terraform does.
fn longest_common_subsequence<'a, T: PartialEq>(xs: &'a [T], ys: &[T]) -> Vec<&'a T> {
    if xs.is_empty() || ys.is_empty() {
        return Vec::new();
    }
    let w = xs.len();
    let mut c = vec![0usize; xs.len() * ys.len()];
    let mut eqs = vec![false; xs.len() * ys.len()];
    for y in 0..ys.len() {
        for x in 0..xs.len() {
            if xs[x] == ys[y] {
                eqs[w * y + x] = true;
                c[w * y + x] = if x == 0 || y == 0 {
                    1
                } else {
                    c[w * (y - 1) + (x - 1)] + 1
                };
            } else {
                let l = if x > 0 { c[w * y + (x - 1)] } else { 0 };
                let u = if y > 0 { c[w * (y - 1) + x] } else { 0 };
                c[w * y + x] = l.max(u);
            }
        }
    }
    let mut seq = Vec::with_capacity(c[c.len() - 1]);
    let (mut x, mut y) = (xs.len() as isize - 1, ys.len() as isize - 1);
    while x >= 0 && y >= 0 {
        let (xu, yu) = (x as usize, y as usize);
        if eqs[w * yu + xu] {
            seq.push(&xs[xu]);
            x -= 1;
            y -= 1;
        } else {
            let l = if x > 0 { c[w * yu + (xu - 1)] } else { 0 };
            let u = if y > 0 { c[w * (yu - 1) + xu] } else { 0 };
            if l > u {
                x -= 1;
            } else {
                y -= 1;
            }
        }
    }
    seq.reverse();
    seq
}

// ---------------------------------------------------------------------
// Printing a diff.

/// How a diff prints, passed down the tree. `force_replace` and
/// `forbid_replace` hold for one level only.
#[derive(Debug, Clone, Copy)]
struct Opts {
    color: bool,
    override_null_suffix: bool,
    force_replace: bool,
    forbid_replace: bool,
    show_unchanged: bool,
}

impl Opts {
    fn new(color: bool) -> Opts {
        Opts {
            color,
            override_null_suffix: false,
            force_replace: false,
            forbid_replace: false,
            show_unchanged: false,
        }
    }

    /// The options for the next level down.
    fn child(&self) -> Opts {
        Opts {
            force_replace: false,
            forbid_replace: false,
            ..*self
        }
    }

    fn c(&self, s: &str) -> String {
        Colorize(self.color).color(s)
    }

    fn null_suffix(&self, action: Act) -> String {
        if !self.override_null_suffix && action == Act::Delete {
            self.c(" [dark_gray]-> null[reset]")
        } else {
            String::new()
        }
    }

    fn forces_replacement(&self, replace: bool) -> String {
        if (replace || self.force_replace) && !self.forbid_replace {
            self.c(" [red]# forces replacement[reset]")
        } else {
            String::new()
        }
    }

    fn symbol(&self, action: Act) -> String {
        format!("{} ", self.c(action.symbol()))
    }

    fn unchanged(&self, keyword: &str, count: usize) -> String {
        let plural = if count == 1 { "" } else { "s" };
        self.c(&format!(
            "[dark_gray]# ({count} unchanged {keyword}{plural} hidden)[reset]"
        ))
    }

    fn arrow(&self) -> String {
        self.c("[yellow]->[reset]")
    }
}

fn indent(n: usize) -> String {
    "    ".repeat(n)
}

/// An attribute name as HCL would accept it, quoted when it is not an
/// identifier.
fn attribute_name(name: &str) -> String {
    let mut chars = name.chars();
    let valid = match chars.next() {
        Some(first) => {
            (first.is_alphabetic() || first == '_')
                && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        }
        None => false,
    };
    if valid {
        name.to_string()
    } else {
        go_quote(name)
    }
}

/// Attributes always shown, changed or not.
fn important(name: &str) -> bool {
    matches!(name, "id" | "name" | "tags")
}

impl Diff {
    fn render(&self, ind: usize, opts: &Opts) -> String {
        match &self.renderer {
            Renderer::Primitive { before, after, ty } => {
                self.render_primitive(before, after, *ty, ind, opts)
            }
            Renderer::Object {
                attributes,
                override_null_suffix,
            } => self.render_object(attributes, *override_null_suffix, ind, opts),
            Renderer::Map {
                elements,
                override_null_suffix,
                override_forces_replacement,
                align_keys,
            } => self.render_map(
                elements,
                *override_null_suffix,
                *override_forces_replacement,
                *align_keys,
                ind,
                opts,
            ),
            Renderer::List {
                elements,
                display_context,
            } => self.render_list(elements, *display_context, ind, opts),
            Renderer::Set {
                elements,
                override_forces_replacement,
            } => self.render_set(elements, *override_forces_replacement, ind, opts),
            Renderer::Block { attributes, blocks } => {
                self.render_block(attributes, blocks, ind, opts)
            }
            Renderer::Sensitive { .. } => format!(
                "(sensitive value){}{}",
                opts.null_suffix(self.action),
                opts.forces_replacement(self.replace)
            ),
            Renderer::SensitiveBlock { .. } => {
                let prefix = format!("{}{}", indent(ind), opts.symbol(Act::NoOp));
                format!(
                    "{{{}\n{prefix}  # At least one attribute in this block is (or was) sensitive,\n{prefix}  # so its contents will not be displayed.\n{prefix}}}",
                    opts.forces_replacement(self.replace)
                )
            }
            Renderer::TypeChange { before, after } => {
                let mut o = *opts;
                o.override_null_suffix = true;
                format!(
                    "{} {} {}",
                    before.render(ind, &o),
                    o.arrow(),
                    after.render(ind, &o)
                )
            }
            Renderer::Unknown { before } => match before {
                Some(b) if self.action != Act::Create => {
                    let mut o = opts.child();
                    o.override_null_suffix = true;
                    if self.replace {
                        o.forbid_replace = true;
                    }
                    format!(
                        "{} -> (known after apply){}",
                        b.render(ind, &o),
                        opts.forces_replacement(self.replace)
                    )
                }
                _ => format!(
                    "(known after apply){}",
                    opts.forces_replacement(self.replace)
                ),
            },
            Renderer::WriteOnly { sensitive } => format!(
                "{}{}{}",
                if *sensitive {
                    "(sensitive, write-only attribute)"
                } else {
                    "(write-only attribute)"
                },
                opts.null_suffix(self.action),
                opts.forces_replacement(self.replace)
            ),
        }
    }

    /// Warnings printed above the line: a value becoming, or ceasing to
    /// be, sensitive.
    fn warnings(&self, ind: usize, opts: &Opts) -> Vec<String> {
        let (inner, before, after, what) = match &self.renderer {
            Renderer::Sensitive {
                inner_action,
                before,
                after,
            } => (*inner_action, *before, *after, "attribute value"),
            Renderer::SensitiveBlock {
                inner_action,
                before,
                after,
            } => (*inner_action, *before, *after, "block"),
            _ => return Vec::new(),
        };
        if before == after || inner == Act::Create || inner == Act::Delete {
            return Vec::new();
        }
        let warning = if before {
            opts.c(&format!("  # [yellow]Warning[reset]: this {what} will no longer be marked as sensitive\n{}  # after applying this change.", indent(ind)))
        } else {
            opts.c(&format!("  # [yellow]Warning[reset]: this {what} will be marked as sensitive and will not\n{}  # display in UI output after applying this change.", indent(ind)))
        };
        if what == "attribute value" && inner == Act::NoOp {
            vec![format!("{warning} The value is unchanged.")]
        } else {
            vec![warning]
        }
    }

    fn render_primitive(
        &self,
        before: &Json,
        after: &Json,
        ty: Prim,
        ind: usize,
        opts: &Opts,
    ) -> String {
        if ty == Prim::String {
            return self.render_string(before, after, ind, opts);
        }
        let b = primitive_text(before, opts);
        let a = primitive_text(after, opts);
        let replace = opts.forces_replacement(self.replace);
        match self.action {
            Act::Create => format!("{a}{replace}"),
            Act::Delete => format!("{b}{}{replace}", opts.null_suffix(self.action)),
            Act::NoOp => format!("{b}{replace}"),
            _ => format!("{b} {} {a}{replace}", opts.arrow()),
        }
    }

    fn render_string(&self, before: &Json, after: &Json, ind: usize, opts: &Opts) -> String {
        let replace = opts.forces_replacement(self.replace);
        let noop_prefix = format!("{}{}", indent(ind + 1), opts.symbol(Act::NoOp));
        let heredoc_lines = |s: &str| -> Vec<String> {
            s.split('\n').map(|l| format!("{noop_prefix}{l}")).collect()
        };
        let lines: Vec<String> = match self.action {
            Act::Create | Act::NoOp => {
                let s = evaluate_string(after, opts);
                if s.json.is_some() {
                    return if self.action == Act::NoOp {
                        self.render_string_as_json(&s, &s, ind, opts)
                    } else {
                        self.render_string_as_json(&EvaluatedString::default(), &s, ind, opts)
                    };
                }
                if !s.multiline {
                    return format!("{}{replace}", s.simple());
                }
                heredoc_lines(&s.text)
            }
            Act::Delete => {
                let s = evaluate_string(before, opts);
                if s.null {
                    return format!("{}{replace}", s.simple());
                }
                if s.json.is_some() {
                    return self.render_string_as_json(&s, &EvaluatedString::default(), ind, opts);
                }
                if !s.multiline {
                    return format!("{}{}{replace}", s.simple(), opts.null_suffix(self.action));
                }
                heredoc_lines(&s.text)
            }
            _ => {
                let b = evaluate_string(before, opts);
                let a = evaluate_string(after, opts);
                if b.json.is_some() && a.json.is_some() {
                    return self.render_string_as_json(&b, &a, ind, opts);
                }
                if b.json.is_some() || a.json.is_some() {
                    let del = Diff::new(
                        Renderer::Primitive {
                            before: before.clone(),
                            after: Json::Null,
                            ty: Prim::String,
                        },
                        Act::Delete,
                        false,
                    );
                    let cre = Diff::new(
                        Renderer::Primitive {
                            before: Json::Null,
                            after: after.clone(),
                            ty: Prim::String,
                        },
                        Act::Create,
                        false,
                    );
                    return Diff::new(
                        Renderer::TypeChange {
                            before: Box::new(del),
                            after: Box::new(cre),
                        },
                        self.action,
                        self.replace,
                    )
                    .render(ind, opts);
                }
                if !b.multiline && !a.multiline {
                    return format!("{} {} {}{replace}", b.simple(), opts.arrow(), a.simple());
                }
                let bl: Vec<&str> = b.text.split('\n').collect();
                let al: Vec<&str> = a.text.split('\n').collect();
                let mut lines = Vec::new();
                let line =
                    |act: Act, text: &str| format!("{}{}{text}", indent(ind + 1), opts.symbol(act));
                process_slice(
                    &bl,
                    &al,
                    |_| false,
                    |bi, ai| {
                        if bi >= bl.len() {
                            lines.push(line(Act::Create, al[ai]));
                        } else if ai >= al.len() {
                            lines.push(line(Act::Delete, bl[bi]));
                        } else if bl[bi] != al[ai] {
                            lines.push(line(Act::Delete, bl[bi]));
                            lines.push(line(Act::Create, al[ai]));
                        } else {
                            lines.push(line(Act::NoOp, bl[bi]));
                        }
                    },
                );
                lines
            }
        };
        format!(
            "<<-EOT{replace}\n{}\n{}{}EOT{}",
            lines.join("\n"),
            indent(ind),
            opts.symbol(Act::NoOp),
            opts.null_suffix(self.action)
        )
    }

    fn render_string_as_json(
        &self,
        before: &EvaluatedString,
        after: &EvaluatedString,
        ind: usize,
        opts: &Opts,
    ) -> String {
        let change = Change {
            before_explicit: self.action != Act::Create,
            after_explicit: self.action != Act::Delete,
            before: before.json.clone().unwrap_or(Json::Null),
            after: after.json.clone().unwrap_or(Json::Null),
            unknown: Json::Bool(false),
            before_sensitive: Json::Bool(false),
            after_sensitive: Json::Bool(false),
            replace: Replace::default(),
            non_legacy: false,
        };
        let json_diff = diff_json(change);
        let mut action = self.action;
        let mut json_opts = opts.child();
        json_opts.override_null_suffix = true;
        let mut whitespace = "";
        let mut replace = String::new();
        if json_diff.action == Act::NoOp && self.action == Act::Update {
            whitespace = if self.replace {
                " # whitespace changes force replacement"
            } else {
                " # whitespace changes"
            };
            json_opts.show_unchanged = true;
            action = Act::NoOp;
        } else {
            replace = opts.forces_replacement(self.replace);
        }
        let rendered = json_diff.render(ind + 1, &json_opts);
        if self.action == Act::Create || self.action == Act::Delete {
            action = Act::NoOp;
        }
        if rendered.contains('\n') {
            format!(
                "jsonencode({whitespace}\n{}{}{rendered}{replace}\n{}{}){}",
                indent(ind + 1),
                opts.symbol(action),
                indent(ind),
                opts.symbol(Act::NoOp),
                opts.null_suffix(self.action)
            )
        } else {
            format!("jsonencode({rendered}){whitespace}{replace}")
        }
    }

    fn render_object(
        &self,
        attributes: &BTreeMap<String, Diff>,
        override_null_suffix: bool,
        ind: usize,
        opts: &Opts,
    ) -> String {
        if attributes.is_empty() {
            return format!(
                "{{}}{}{}",
                opts.null_suffix(self.action),
                opts.forces_replacement(self.replace)
            );
        }
        let mut attr_opts = opts.child();
        attr_opts.override_null_suffix = override_null_suffix;
        let width = attributes
            .keys()
            .map(|k| attribute_name(k).len())
            .max()
            .unwrap_or(0);
        let mut unchanged = 0;
        let mut buf = format!("{{{}\n", opts.forces_replacement(self.replace));
        for (key, attr) in attributes {
            let o = if important(key) {
                let mut o = attr_opts.child();
                o.show_unchanged = true;
                o
            } else {
                if attr.action == Act::NoOp && !opts.show_unchanged {
                    unchanged += 1;
                    continue;
                }
                attr_opts
            };
            let warn_opts = if important(key) { o } else { *opts };
            for w in attr.warnings(ind + 1, &warn_opts) {
                buf.push_str(&format!("{}{w}\n", indent(ind + 1)));
            }
            buf.push_str(&format!(
                "{}{}{:<width$} = {}\n",
                indent(ind + 1),
                o.symbol(attr.action),
                attribute_name(key),
                attr.render(ind + 1, &o)
            ));
        }
        if unchanged > 0 {
            buf.push_str(&format!(
                "{}{}{}\n",
                indent(ind + 1),
                opts.symbol(Act::NoOp),
                opts.unchanged("attribute", unchanged)
            ));
        }
        buf.push_str(&format!(
            "{}{}}}{}",
            indent(ind),
            opts.symbol(Act::NoOp),
            opts.null_suffix(self.action)
        ));
        buf
    }

    fn render_map(
        &self,
        elements: &BTreeMap<String, Diff>,
        override_null_suffix: bool,
        override_forces_replacement: bool,
        align_keys: bool,
        ind: usize,
        opts: &Opts,
    ) -> String {
        let replace_self = self.replace && !override_forces_replacement;
        let replace_children = self.replace && override_forces_replacement;
        if elements.is_empty() {
            return format!(
                "{{}}{}{}",
                opts.null_suffix(self.action),
                opts.forces_replacement(replace_self)
            );
        }
        let width = elements
            .keys()
            .map(|k| go_quote(k).len())
            .max()
            .unwrap_or(0);
        let mut el_opts = opts.child();
        el_opts.override_null_suffix = self.action == Act::Delete || override_null_suffix;
        el_opts.force_replace = replace_children;
        let mut unchanged = 0;
        let mut buf = format!("{{{}\n", opts.forces_replacement(replace_self));
        for (key, el) in elements {
            if el.action == Act::NoOp && !opts.show_unchanged {
                unchanged += 1;
                continue;
            }
            for w in el.warnings(ind + 1, opts) {
                buf.push_str(&format!("{}{w}\n", indent(ind + 1)));
            }
            let comma = if matches!(el.renderer, Renderer::Object { .. }) {
                ","
            } else {
                ""
            };
            let key = go_quote(key);
            let key = if align_keys {
                format!("{key:<width$}")
            } else {
                key
            };
            buf.push_str(&format!(
                "{}{}{key} = {}{comma}\n",
                indent(ind + 1),
                el_opts.symbol(el.action),
                el.render(ind + 1, &el_opts)
            ));
        }
        if unchanged > 0 {
            buf.push_str(&format!(
                "{}{}{}\n",
                indent(ind + 1),
                opts.symbol(Act::NoOp),
                opts.unchanged("element", unchanged)
            ));
        }
        buf.push_str(&format!(
            "{}{}}}{}",
            indent(ind),
            opts.symbol(Act::NoOp),
            opts.null_suffix(self.action)
        ));
        buf
    }

    fn render_list(
        &self,
        elements: &[Diff],
        display_context: bool,
        ind: usize,
        opts: &Opts,
    ) -> String {
        if elements.is_empty() {
            return format!(
                "[]{}{}",
                opts.null_suffix(self.action),
                opts.forces_replacement(self.replace)
            );
        }
        let mut el_opts = opts.child();
        el_opts.override_null_suffix = true;
        let mut unchanged_opts = opts.child();
        unchanged_opts.show_unchanged = true;

        let mut unchanged: Vec<&Diff> = Vec::new();
        let mut render_next = false;
        let mut buf = format!("[{}\n", opts.forces_replacement(self.replace));
        for el in elements {
            if el.action == Act::NoOp && !render_next && !opts.show_unchanged {
                unchanged.push(el);
                continue;
            }
            render_next = false;
            let mut o = el_opts;
            if display_context {
                if unchanged.len() > 1 {
                    buf.push_str(&format!(
                        "{}{}{}\n",
                        indent(ind + 1),
                        o.symbol(Act::NoOp),
                        o.unchanged("element", unchanged.len() - 1)
                    ));
                }
                if let Some(last) = unchanged.last() {
                    buf.push_str(&format!(
                        "{}{}{},\n",
                        indent(ind + 1),
                        unchanged_opts.symbol(last.action),
                        last.render(ind + 1, &unchanged_opts)
                    ));
                }
                unchanged.clear();
                if el.action == Act::NoOp {
                    o = unchanged_opts;
                } else {
                    render_next = true;
                }
            }
            for w in el.warnings(ind + 1, &o) {
                buf.push_str(&format!("{}{w}\n", indent(ind + 1)));
            }
            buf.push_str(&format!(
                "{}{}{},\n",
                indent(ind + 1),
                o.symbol(el.action),
                el.render(ind + 1, &o)
            ));
        }
        if !unchanged.is_empty() {
            buf.push_str(&format!(
                "{}{}{}\n",
                indent(ind + 1),
                opts.symbol(Act::NoOp),
                opts.unchanged("element", unchanged.len())
            ));
        }
        buf.push_str(&format!(
            "{}{}]{}",
            indent(ind),
            opts.symbol(Act::NoOp),
            opts.null_suffix(self.action)
        ));
        buf
    }

    fn render_set(
        &self,
        elements: &[Diff],
        override_forces_replacement: bool,
        ind: usize,
        opts: &Opts,
    ) -> String {
        let replace_self = self.replace && !override_forces_replacement;
        let replace_children = self.replace && override_forces_replacement;
        if elements.is_empty() {
            return format!(
                "[]{}{}",
                opts.null_suffix(self.action),
                opts.forces_replacement(replace_self)
            );
        }
        let mut el_opts = opts.child();
        el_opts.override_null_suffix = true;
        el_opts.force_replace = replace_children;
        let mut unchanged = 0;
        let mut buf = format!("[{}\n", opts.forces_replacement(replace_self));
        for el in elements {
            if el.action == Act::NoOp && !opts.show_unchanged {
                unchanged += 1;
                continue;
            }
            for w in el.warnings(ind + 1, opts) {
                buf.push_str(&format!("{}{w}\n", indent(ind + 1)));
            }
            buf.push_str(&format!(
                "{}{}{},\n",
                indent(ind + 1),
                el_opts.symbol(el.action),
                el.render(ind + 1, &el_opts)
            ));
        }
        if unchanged > 0 {
            buf.push_str(&format!(
                "{}{}{}\n",
                indent(ind + 1),
                opts.symbol(Act::NoOp),
                opts.unchanged("element", unchanged)
            ));
        }
        buf.push_str(&format!(
            "{}{}]{}",
            indent(ind),
            opts.symbol(Act::NoOp),
            opts.null_suffix(self.action)
        ));
        buf
    }

    fn render_block(
        &self,
        attributes: &BTreeMap<String, Diff>,
        blocks: &BTreeMap<String, BlockGroup>,
        ind: usize,
        opts: &Opts,
    ) -> String {
        if attributes.is_empty() && blocks.is_empty() {
            return format!("{{}}{}", opts.forces_replacement(self.replace));
        }
        let width = attributes
            .keys()
            .map(|k| attribute_name(k).len())
            .max()
            .unwrap_or(0);
        let mut important_opts = opts.child();
        important_opts.show_unchanged = true;
        let attr_opts = opts.child();

        let mut unchanged_attrs = 0;
        let mut unchanged_blocks = 0;
        let mut buf = format!("{{{}\n", opts.forces_replacement(self.replace));
        for (key, attr) in attributes {
            if important(key) {
                for w in attr.warnings(ind + 1, &important_opts) {
                    buf.push_str(&format!("{}{w}\n", indent(ind + 1)));
                }
                buf.push_str(&format!(
                    "{}{}{:<width$} = {}\n",
                    indent(ind + 1),
                    important_opts.symbol(attr.action),
                    key,
                    attr.render(ind + 1, &important_opts)
                ));
                continue;
            }
            if attr.action == Act::NoOp && !opts.show_unchanged {
                unchanged_attrs += 1;
                continue;
            }
            for w in attr.warnings(ind + 1, opts) {
                buf.push_str(&format!("{}{w}\n", indent(ind + 1)));
            }
            buf.push_str(&format!(
                "{}{}{:<width$} = {}\n",
                indent(ind + 1),
                attr_opts.symbol(attr.action),
                attribute_name(key),
                attr.render(ind + 1, &attr_opts)
            ));
        }
        if unchanged_attrs > 0 {
            buf.push_str(&format!(
                "{}{}{}\n",
                indent(ind + 1),
                opts.symbol(Act::NoOp),
                opts.unchanged("attribute", unchanged_attrs)
            ));
        }

        for (key, group) in blocks {
            let mut found_changed = false;
            let mut render_one = |diff: &Diff, map_key: &str, buf: &mut String| {
                let creating = diff.action == Act::Create && group.after_sensitive;
                let deleting = diff.action == Act::Delete && group.before_sensitive;
                let modifying = matches!(diff.action, Act::Update | Act::NoOp)
                    && (group.after_sensitive || group.before_sensitive);
                let owned;
                let diff = if creating || deleting || modifying {
                    let mut action = diff.action;
                    if diff.action == Act::NoOp && group.before_sensitive != group.after_sensitive {
                        action = Act::Update;
                    }
                    owned = Diff::new(
                        Renderer::SensitiveBlock {
                            inner_action: diff.action,
                            before: group.before_sensitive,
                            after: group.after_sensitive,
                        },
                        action,
                        diff.replace,
                    );
                    &owned
                } else {
                    diff
                };
                if diff.action == Act::NoOp && !opts.show_unchanged {
                    unchanged_blocks += 1;
                    return;
                }
                if !found_changed && !attributes.is_empty() {
                    buf.push('\n');
                    found_changed = true;
                }
                let mut block_opts = opts.child();
                block_opts.force_replace = group.replace;
                for w in diff.warnings(ind + 1, &block_opts) {
                    buf.push_str(&format!("{}{w}\n", indent(ind + 1)));
                }
                buf.push_str(&format!(
                    "{}{}{}{map_key} {}\n",
                    indent(ind + 1),
                    block_opts.symbol(diff.action),
                    attribute_name(key),
                    diff.render(ind + 1, &block_opts)
                ));
            };
            let unknown = Diff::new(Renderer::Unknown { before: None }, self.action, false);
            match &group.blocks {
                Blocks::Single(d) => render_one(d, "", &mut buf),
                Blocks::Map(m) => {
                    if group.unknown {
                        render_one(&unknown, "", &mut buf);
                    }
                    for (k, d) in m {
                        render_one(d, &format!(" {}", go_quote(k)), &mut buf);
                    }
                }
                Blocks::List(v) | Blocks::Set(v) => {
                    if group.unknown {
                        render_one(&unknown, "", &mut buf);
                    }
                    for d in v {
                        render_one(d, "", &mut buf);
                    }
                }
            }
        }
        if unchanged_blocks > 0 {
            buf.push_str(&format!(
                "\n{}{}{}\n",
                indent(ind + 1),
                opts.symbol(Act::NoOp),
                opts.unchanged("block", unchanged_blocks)
            ));
        }
        buf.push_str(&format!("{}{}}}", indent(ind), opts.symbol(Act::NoOp)));
        buf
    }
}

fn primitive_text(v: &Json, opts: &Opts) -> String {
    match v {
        Json::Null => opts.c("[dark_gray]null[reset]"),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

/// A string as the renderer sees it: JSON to diff as such, or text that
/// spans lines, or a plain string, or null.
#[derive(Debug, Default)]
struct EvaluatedString {
    text: String,
    json: Option<Json>,
    multiline: bool,
    null: bool,
}

impl EvaluatedString {
    fn simple(&self) -> String {
        if self.null {
            self.text.clone()
        } else {
            go_quote(&self.text)
        }
    }
}

fn evaluate_string(v: &Json, opts: &Opts) -> EvaluatedString {
    let Some(s) = v.as_str() else {
        return EvaluatedString {
            text: opts.c("[dark_gray]null[reset]"),
            null: true,
            ..EvaluatedString::default()
        };
    };
    if s.starts_with('{') || s.starts_with('[') {
        if let Ok(j) = serde_json::from_str::<Json>(s) {
            return EvaluatedString {
                text: s.to_string(),
                json: Some(j),
                ..EvaluatedString::default()
            };
        }
    }
    if s.contains('\n') {
        return EvaluatedString {
            text: s.trim().to_string(),
            multiline: true,
            ..EvaluatedString::default()
        };
    }
    EvaluatedString {
        text: s.to_string(),
        ..EvaluatedString::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn string_attr() -> Attribute {
        Attribute {
            ty: Type::String,
            nested_type: None,
            description: String::new(),
            description_kind: Default::default(),
            required: false,
            optional: true,
            computed: false,
            sensitive: false,
            deprecated: false,
            write_only: false,
        }
    }

    fn change(before: Json, after: Json) -> Change {
        Change {
            before,
            after,
            unknown: Json::Bool(false),
            before_sensitive: Json::Bool(false),
            after_sensitive: Json::Bool(false),
            ..Change::default()
        }
    }

    fn plain(d: &Diff) -> String {
        d.render(0, &Opts::new(false))
    }

    #[test]
    fn strings_update_with_an_arrow() {
        let d = diff_type(change(json!("a"), json!("b")), &Type::String);
        assert_eq!(d.action, Act::Update);
        assert_eq!(plain(&d), "\"a\" -> \"b\"");
    }

    #[test]
    fn removed_values_point_to_null() {
        let d = diff_type(change(json!(3), Json::Null), &Type::Number);
        assert_eq!(plain(&d), "3 -> null");
    }

    #[test]
    fn empty_legacy_strings_are_null() {
        let d = diff_type(change(json!(""), Json::Null), &Type::String);
        assert_eq!(d.action, Act::NoOp);
    }

    #[test]
    fn maps_diff_by_key_and_hide_the_unchanged() {
        let d = diff_type(
            change(
                json!({"a": "1", "b": "2"}),
                json!({"a": "1", "b": "3", "c": "4"}),
            ),
            &Type::map(Type::String),
        );
        assert_eq!(
            plain(&d),
            "{\n      ~ \"b\" = \"2\" -> \"3\"\n      + \"c\" = \"4\"\n        # (1 unchanged element hidden)\n    }"
        );
    }

    #[test]
    fn lists_show_context_around_a_change() {
        // Lists of one length pair elements by index.
        let d = diff_type(
            change(json!(["a", "b", "c", "d"]), json!(["a", "b", "x", "d"])),
            &Type::list(Type::String),
        );
        assert_eq!(
            plain(&d),
            "[\n        # (1 unchanged element hidden)\n        \"b\",\n      ~ \"c\" -> \"x\",\n        \"d\",\n    ]"
        );
        // Otherwise by their longest common subsequence.
        let d = diff_type(
            change(json!(["a", "b", "c"]), json!(["a", "x", "b", "c"])),
            &Type::list(Type::String),
        );
        assert_eq!(
            plain(&d),
            "[\n        \"a\",\n      + \"x\",\n        \"b\",\n        # (1 unchanged element hidden)\n    ]"
        );
    }

    #[test]
    fn json_strings_diff_as_jsonencode() {
        let d = diff_type(
            change(json!("{\"a\":1,\"b\":2}"), json!("{\"a\":1,\"b\":3}")),
            &Type::String,
        );
        assert_eq!(
            plain(&d),
            "jsonencode(\n      ~ {\n          ~ b = 2 -> 3\n            # (1 unchanged attribute hidden)\n        }\n    )"
        );
    }

    #[test]
    fn multiline_strings_are_heredocs() {
        let d = diff_type(change(Json::Null, json!("one\ntwo\n")), &Type::String);
        assert_eq!(plain(&d), "<<-EOT\n        one\n        two\n    EOT");
    }

    #[test]
    fn unknowns_are_known_after_apply() {
        let mut c = change(json!("a"), Json::Null);
        c.unknown = Json::Bool(true);
        let d = diff_type(c, &Type::String);
        assert_eq!(plain(&d), "\"a\" -> (known after apply)");
    }

    #[test]
    fn sensitive_values_are_hidden() {
        let mut c = change(json!("a"), json!("b"));
        c.before_sensitive = Json::Bool(true);
        c.after_sensitive = Json::Bool(true);
        let d = diff_type(c, &Type::String);
        assert_eq!(d.action, Act::Update);
        assert_eq!(plain(&d), "(sensitive value)");
    }

    #[test]
    fn blocks_align_attributes_and_mark_replacement() {
        let block = Block {
            attributes: [
                ("name".to_string(), string_attr()),
                ("description".to_string(), string_attr()),
                ("other".to_string(), string_attr()),
            ]
            .into(),
            ..Block::default()
        };
        let mut c = change(
            json!({"name": "a", "description": "d", "other": "o"}),
            json!({"name": "b", "description": "d", "other": "o"}),
        );
        c.replace = Replace(vec![vec![json!("name")]]);
        let d = diff_block(c, &block);
        assert_eq!(
            plain(&d),
            "{\n      ~ name        = \"a\" -> \"b\" # forces replacement\n        # (2 unchanged attributes hidden)\n    }"
        );
    }

    #[test]
    fn lcs_walks_back_along_after_on_ties() {
        let lcs = longest_common_subsequence(&["a", "b"], &["b", "a"]);
        assert_eq!(lcs, vec![&"b"]);
    }

    #[test]
    fn summary_counts_a_replacement_twice() {
        use crate::addr::ResourceInstanceAddr;
        use crate::provider::schema::Schema;
        use std::sync::Arc;
        let schema = Arc::new(Schema {
            version: 0,
            block: Block::default(),
        });
        let rc = |name: &str, action| ResourceChange {
            addr: ResourceInstanceAddr::managed("aws_sqs_queue", name),
            previous_addr: None,
            provider: "registry.terraform.io/hashicorp/aws".into(),
            action,
            reason: None,
            before: None,
            after: None,
            schema: schema.clone(),
            replace_paths: Vec::new(),
            deposed: None,
            importing: None,
        };
        let plan = Plan {
            changes: vec![
                rc("a", Action::Create),
                rc(
                    "b",
                    Action::Replace {
                        create_before_destroy: false,
                    },
                ),
                rc("c", Action::Update),
                rc("d", Action::NoOp),
            ],
            ..Plan::default()
        };
        assert_eq!(summary(&plan), "Plan: 2 to add, 1 to change, 1 to destroy.");
    }

    #[test]
    fn a_deposed_object_is_named_by_its_key() {
        use crate::addr::ResourceInstanceAddr;
        use crate::provider::schema::Schema;
        use crate::value::Value;
        use std::sync::Arc;
        let mut block = Block::default();
        block.attributes.insert(
            "id".into(),
            Attribute {
                computed: true,
                optional: false,
                ..string_attr()
            },
        );
        let rc = ResourceChange {
            addr: ResourceInstanceAddr::managed("test_instance", "example"),
            previous_addr: None,
            provider: "registry.terraform.io/hashicorp/test".into(),
            action: Action::Delete,
            reason: None,
            before: Some(Value::object(
                [("id".to_string(), Value::string("i-02ae66f368e8518a9"))].into(),
            )),
            after: None,
            schema: Arc::new(Schema { version: 0, block }),
            replace_paths: Vec::new(),
            deposed: Some("byebye".into()),
            importing: None,
        };
        // terraform's own expectation for this change (its renderer tests).
        assert_eq!(
            render_resource(&rc, &Colorize(false)),
            "  # test_instance.example (deposed object byebye) will be destroyed\n  # (left over from a partially-failed replacement of this instance)\n  - resource \"test_instance\" \"example\" {\n      - id = \"i-02ae66f368e8518a9\" -> null\n    }"
        );
    }

    #[test]
    fn no_changes_says_so_in_terraforms_words() {
        let text = human(&Plan::default(), false);
        assert_eq!(text, "\nNo changes. Your infrastructure matches the configuration.\n\nTerraform has compared your real infrastructure against your configuration\nand found no differences, so no changes are needed.\n");
        let destroy = Plan {
            destroy: true,
            ..Plan::default()
        };
        assert!(human(&destroy, false).contains("No objects need to be destroyed."));
        let refresh_only = Plan {
            refresh_only: true,
            ..Plan::default()
        };
        assert_eq!(human(&refresh_only, false), "\nNo changes. Your infrastructure still matches the configuration.\n\nTerraform has checked that the real remote objects still match the result of\nyour most recent changes, and found no differences.\n");
    }

    #[test]
    fn colour_markup_becomes_escapes() {
        assert_eq!(
            Colorize(true).color("[bold]x[reset] y"),
            "\x1b[1mx\x1b[0m y\x1b[0m"
        );
        assert_eq!(Colorize(false).color("[bold]x[reset] [y]"), "x [y]");
    }

    #[test]
    fn sentences_wrap_at_terraforms_width() {
        let w = word_wrap("\nTerraform used the selected providers to generate the following execution plan. Resource actions are indicated with the following symbols:");
        assert_eq!(w, "\nTerraform used the selected providers to generate the following execution\nplan. Resource actions are indicated with the following symbols:");
    }
}
