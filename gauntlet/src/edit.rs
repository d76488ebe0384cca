//! Edits of a twin's private copy of the root, as a person makes them: a
//! resource block deleted or renamed, a `count` or another argument changed. Text in, text out; the
//! estate's own files are never touched.
//!
//! Blocks are found by their `resource "TYPE" "NAME" {` opening line and
//! closed by brace depth, which holds for roots written in terraform's
//! canonical layout (`terraform fmt`), as the estates are.

/// A block a person edits: a resource block or a module call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block<'a> {
    Resource { type_name: &'a str, name: &'a str },
    Call { name: &'a str },
}

impl<'a> Block<'a> {
    pub fn resource(type_name: &'a str, name: &'a str) -> Block<'a> {
        Block::Resource { type_name, name }
    }

    pub fn call(name: &'a str) -> Block<'a> {
        Block::Call { name }
    }

    /// The block's opening line, as terraform fmt writes it.
    fn opening(&self) -> String {
        match self {
            Block::Resource { type_name, name } => {
                format!("resource \"{type_name}\" \"{name}\" {{")
            }
            Block::Call { name } => format!("module \"{name}\" {{"),
        }
    }

    /// How an expression refers to it: `aws_sqs_queue.q`, `module.m`.
    pub fn traversal(&self) -> String {
        match self {
            Block::Resource { type_name, name } => format!("{type_name}.{name}"),
            Block::Call { name } => format!("module.{name}"),
        }
    }

    /// The same kind of block named `to`.
    pub fn renamed(&self, to: &'a str) -> Block<'a> {
        match *self {
            Block::Resource { type_name, .. } => Block::Resource {
                type_name,
                name: to,
            },
            Block::Call { .. } => Block::Call { name: to },
        }
    }

    /// Whether `text` holds the block's opening line.
    pub fn declared_in(&self, text: &str) -> bool {
        let opening = self.opening();
        text.lines().any(|l| l.trim_end() == opening)
    }
}

/// The lines `[start, end]` of `block`.
fn block_lines(lines: &[&str], block: &Block) -> Option<(usize, usize)> {
    let opening = block.opening();
    let start = lines.iter().position(|l| l.trim_end() == opening)?;
    closing(lines, start).map(|end| (start, end))
}

/// The line closing the block opened on line `start`, by brace depth.
fn closing(lines: &[&str], start: usize) -> Option<usize> {
    let mut depth = 0i64;
    for (i, l) in lines.iter().enumerate().skip(start) {
        depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
        if depth == 0 {
            return Some(i);
        }
    }
    None
}

/// The top-level blocks of `lines` whose opening line starts with
/// `keyword` (`output`, `moved`), as `[start, end]` line ranges.
fn top_blocks(lines: &[&str], keyword: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let opens = l.trim_end().ends_with('{') && !l.starts_with([' ', '\t', '#']);
        match opens.then(|| closing(lines, i)).flatten() {
            Some(end) => {
                let word = l.split([' ', '{']).next().unwrap_or_default();
                if word == keyword {
                    out.push((i, end));
                }
                i = end + 1;
            }
            None => i += 1,
        }
    }
    out
}

/// `lines` without the ranges `drop` (each with one blank line after it),
/// trailing blank lines trimmed.
fn without(lines: &[&str], drop: &[(usize, usize)]) -> String {
    let mut gone = vec![false; lines.len()];
    for &(start, mut end) in drop {
        if lines.get(end + 1).is_some_and(|l| l.trim().is_empty()) {
            end += 1;
        }
        gone[start..=end].iter_mut().for_each(|g| *g = true);
    }
    let mut out: Vec<&str> = lines
        .iter()
        .zip(gone)
        .filter(|(_, g)| !g)
        .map(|(l, _)| *l)
        .collect();
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    out.join("\n") + "\n"
}

/// `text` without `block` (and one blank line after it), or `None` when
/// the text holds no such block.
pub fn remove_block(text: &str, block: &Block) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let range = block_lines(&lines, block)?;
    Some(without(&lines, &[range]))
}

/// `text` without the `output` blocks that read `block`, as a person
/// removes them with what they read; `None` when none does.
pub fn remove_outputs_reading(text: &str, block: &Block) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let reading: Vec<(usize, usize)> = top_blocks(&lines, "output")
        .into_iter()
        .filter(|&(s, e)| refers_to(&lines[s..=e].join("\n"), block))
        .collect();
    (!reading.is_empty()).then(|| without(&lines, &reading))
}

/// Whether every reference to `block` in `text` lies in an `output` or a
/// `moved` block: what removing the block (and those outputs) leaves
/// valid.
pub fn only_outputs_read(text: &str, block: &Block) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    let mut spared = top_blocks(&lines, "output");
    spared.extend(top_blocks(&lines, "moved"));
    let rest: Vec<&str> = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| !spared.iter().any(|&(s, e)| (s..=e).contains(i)))
        .map(|(_, l)| *l)
        .collect();
    !refers_to(&rest.join("\n"), block)
}

/// The line of `block`'s top-level `count = N`, if it has one.
fn count_line(lines: &[&str], start: usize, end: usize) -> Option<usize> {
    (start + 1..end).find(|i| {
        let l = lines[*i].trim_start();
        l.strip_prefix("count")
            .is_some_and(|r| r.trim_start().starts_with('='))
    })
}

/// `text` with the block's top-level `count = N` set to `n`, or `None`
/// when the block or its count is not there.
pub fn set_count(text: &str, block: &Block, n: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let (start, end) = block_lines(&lines, block)?;
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    let at = count_line(&lines, start, end)?;
    let indent = &lines[at][..lines[at].len() - lines[at].trim_start().len()];
    out[at] = format!("{indent}count = {n}");
    Some(out.join("\n") + "\n")
}

/// `text` with `count = n` as the block's first argument, where terraform
/// fmt puts the meta-arguments, or its count set to `n` when it has one;
/// `None` when the block is not there.
pub fn add_count(text: &str, block: &Block, n: usize) -> Option<String> {
    if let Some(out) = set_count(text, block, n) {
        return Some(out);
    }
    let lines: Vec<&str> = text.lines().collect();
    let (start, _) = block_lines(&lines, block)?;
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    out.insert(start + 1, format!("  count = {n}\n"));
    Some(out.join("\n") + "\n")
}

/// `text` with every whole reference to `block` outside `moved` blocks
/// indexed by `[key]` (`module.m.out` becomes `module.m[0].out`), as a
/// person writes it after giving the block a count; `None` when nothing
/// changed.
pub fn index_references(text: &str, block: &Block, key: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let moved = top_blocks(&lines, "moved");
    let old = block.traversal();
    let mut changed = false;
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if moved.iter().any(|&(s, e)| (s..=e).contains(&i)) {
            out.push((*l).to_owned());
            continue;
        }
        let mut line = String::new();
        let mut rest = *l;
        while let Some(at) = rest.find(&old) {
            let before = rest[..at].chars().next_back();
            let after = rest[at + old.len()..].chars().next();
            line.push_str(&rest[..at + old.len()]);
            if !before.is_some_and(|c| ident(c) || c == '.')
                && !after.is_some_and(|c| ident(c) || c == '[')
            {
                line.push_str(&format!("[{key}]"));
                changed = true;
            }
            rest = &rest[at + old.len()..];
        }
        line.push_str(rest);
        out.push(line);
    }
    changed.then(|| out.join("\n") + "\n")
}
/// `text` with the block's top-level `attr = old` line set to
/// `attr = expr(old)`, or `None` when the block or that argument is not
/// there. The argument must fit on one line, as it does in the estates.
pub fn set_attribute(
    text: &str,
    block: &Block,
    attr: &str,
    expr: impl Fn(&str) -> String,
) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let (start, end) = block_lines(&lines, block)?;
    let mut depth = 0i64;
    let mut at = None;
    for (i, l) in lines.iter().enumerate().take(end).skip(start) {
        if depth == 1 {
            let t = l.trim_start();
            if t.strip_prefix(attr)
                .is_some_and(|r| r.trim_start().starts_with('='))
            {
                at = Some(i);
                break;
            }
        }
        depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
    }
    let at = at?;
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    let indent = &lines[at][..lines[at].len() - lines[at].trim_start().len()];
    let old = lines[at].split_once('=').map_or("", |(_, v)| v.trim());
    out[at] = format!("{indent}{attr} = {}", expr(old));
    Some(out.join("\n") + "\n")
}

/// `text` with the tag `key = "value"` added to the block's top-level
/// `tags`, as a person adds one: a line inside a multi-line map, a
/// `merge(...)` around a one-line expression, or a `tags` argument after
/// the opening line when the block has none; `None` when the block is not
/// there, or its `tags` is an expression spread over lines some other way.
pub fn add_tag(text: &str, block: &Block, key: &str, value: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let (start, end) = block_lines(&lines, block)?;
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    let indent_of = |l: &str| l[..l.len() - l.trim_start().len()].to_owned();
    let mut depth = 0i64;
    for (i, l) in lines.iter().enumerate().take(end).skip(start) {
        if depth == 1 {
            let t = l.trim_start();
            if let Some(rest) = t.strip_prefix("tags") {
                if let Some(expr) = rest.trim_start().strip_prefix('=') {
                    let expr = expr.trim();
                    let indent = indent_of(l);
                    let open = |o: char, c: char| {
                        expr.matches(o).count() as i64 - expr.matches(c).count() as i64
                    };
                    if expr.ends_with('{') {
                        // A map (or a merge's last map) opened on this line.
                        out.insert(i + 1, format!("{indent}  {key} = {value:?}"));
                    } else if open('{', '}') == 0 && open('(', ')') == 0 && open('[', ']') == 0 {
                        out[i] = format!("{indent}tags = merge({expr}, {{ {key} = {value:?} }})");
                    } else {
                        return None;
                    }
                    return Some(out.join("\n") + "\n");
                }
            }
        }
        depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
    }
    let indent = lines
        .get(start + 1)
        .filter(|_| start + 1 < end)
        .map(|l| indent_of(l))
        .unwrap_or_else(|| "  ".into());
    out.insert(start + 1, format!("{indent}tags = {{ {key} = {value:?} }}"));
    Some(out.join("\n") + "\n")
}

/// Whether `c` can continue a terraform identifier.
fn ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Whether `text` refers to `block`: the traversal, not a longer name
/// nor a data source's.
pub fn refers_to(text: &str, block: &Block) -> bool {
    let needle = block.traversal();
    text.match_indices(&needle).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + needle.len()..].chars().next();
        !before.is_some_and(|c| ident(c) || c == '.') && !after.is_some_and(ident)
    })
}

/// `text` with every reference to `block` (and its opening line, if this
/// text holds it) renamed to `to`, as a person renames a block; `None`
/// when the text mentions neither. The `moved` block is [`moved_block`]'s
/// to add.
pub fn rename_block(text: &str, block: &Block, to: &str) -> Option<String> {
    let header = block.opening();
    let new = block.renamed(to);
    let old = block.traversal();
    let mut changed = false;
    let mut out: Vec<String> = Vec::new();
    for l in text.lines() {
        if l.trim_end() == header {
            out.push(new.opening());
            changed = true;
            continue;
        }
        let mut line = String::new();
        let mut rest = l;
        while let Some(i) = rest.find(&old) {
            let before = rest[..i].chars().next_back();
            let after = rest[i + old.len()..].chars().next();
            let whole = !before.is_some_and(|c| ident(c) || c == '.') && !after.is_some_and(ident);
            line.push_str(&rest[..i]);
            if whole {
                line.push_str(&new.traversal());
                changed = true;
            } else {
                line.push_str(&old);
            }
            rest = &rest[i + old.len()..];
        }
        line.push_str(rest);
        out.push(line);
    }
    changed.then(|| out.join("\n") + "\n")
}

/// The `moved` block that records a move from the address `from` to
/// `to`, as terraform fmt lays it out.
pub fn moved_block(from: &str, to: &str) -> String {
    format!("\nmoved {{\n  from = {from}\n  to   = {to}\n}}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: &str = "resource \"aws_sqs_queue\" \"a\" {\n  name = \"a\"\n  tags = { x = \"${1}\" }\n}\n\n# The shards.\nresource \"aws_ssm_parameter\" \"shard\" {\n  count = 2\n\n  name = \"/s/${count.index}\"\n  lifecycle {\n    ignore_changes = [value]\n  }\n}\n\nresource \"aws_sns_topic\" \"t\" {\n  name = \"t\"\n}\n";

    #[test]
    fn a_tag_is_added_as_a_person_adds_it() {
        let multi = "resource \"aws_vpc\" \"v\" {\n  cidr_block = \"10.0.0.0/16\"\n  tags = {\n    Name = \"v\"\n  }\n}\n";
        assert_eq!(
            add_tag(multi, &Block::resource("aws_vpc", "v"), "reviewed", "yes").unwrap(),
            "resource \"aws_vpc\" \"v\" {\n  cidr_block = \"10.0.0.0/16\"\n  tags = {\n    reviewed = \"yes\"\n    Name = \"v\"\n  }\n}\n"
        );
        let one = add_tag(
            ROOT,
            &Block::resource("aws_sqs_queue", "a"),
            "reviewed",
            "yes",
        )
        .unwrap();
        assert!(one.contains("  tags = merge({ x = \"${1}\" }, { reviewed = \"yes\" })\n"));
        let none = add_tag(
            ROOT,
            &Block::resource("aws_sns_topic", "t"),
            "reviewed",
            "yes",
        )
        .unwrap();
        assert!(none.ends_with(
            "resource \"aws_sns_topic\" \"t\" {\n  tags = { reviewed = \"yes\" }\n  name = \"t\"\n}\n"
        ));
        // A nested block's tags are not the block's own.
        let nested = "resource \"aws_x\" \"n\" {\n  inner {\n    tags = {}\n  }\n}\n";
        assert!(add_tag(nested, &Block::resource("aws_x", "n"), "k", "v")
            .unwrap()
            .contains("resource \"aws_x\" \"n\" {\n  tags = { k = \"v\" }\n  inner {"));
        assert!(add_tag(ROOT, &Block::resource("aws_sqs_queue", "missing"), "k", "v").is_none());
        let merged =
            "resource \"aws_x\" \"m\" {\n  tags = merge(local.tags, {\n    Name = \"m\"\n  })\n}\n";
        assert!(add_tag(merged, &Block::resource("aws_x", "m"), "k", "v")
            .unwrap()
            .contains("merge(local.tags, {\n    k = \"v\"\n    Name"));
        let spread = "resource \"aws_x\" \"s\" {\n  tags = merge(\n    local.tags,\n  )\n}\n";
        assert!(add_tag(spread, &Block::resource("aws_x", "s"), "k", "v").is_none());
    }

    #[test]
    fn a_reference_is_the_traversal_not_a_longer_name() {
        let t = "subnet_id = aws_subnet.a.id\nx = [aws_vpc.main]\n";
        assert!(refers_to(t, &Block::resource("aws_subnet", "a")));
        assert!(refers_to(t, &Block::resource("aws_vpc", "main")));
        assert!(!refers_to(t, &Block::resource("aws_vpc", "mai")));
        assert!(!refers_to(
            "y = aws_subnet.ab.id",
            &Block::resource("aws_subnet", "a")
        ));
        assert!(!refers_to(
            "y = data.aws_subnet.a.id",
            &Block::resource("aws_subnet", "a")
        ));
        assert!(refers_to(
            "depends_on = [aws_subnet.a]",
            &Block::resource("aws_subnet", "a")
        ));
        assert!(!refers_to(
            "resource \"aws_subnet\" \"a\" {",
            &Block::resource("aws_subnet", "a")
        ));
    }

    #[test]
    fn removes_exactly_one_block() {
        let out = remove_block(ROOT, &Block::resource("aws_ssm_parameter", "shard")).unwrap();
        assert!(
            !out.contains("aws_ssm_parameter") && !out.contains("ignore_changes"),
            "{out}"
        );
        assert!(out.contains("resource \"aws_sqs_queue\" \"a\" {"));
        assert!(out.contains("# The shards.\nresource \"aws_sns_topic\" \"t\" {"));
        assert_eq!(
            remove_block(ROOT, &Block::resource("aws_ssm_parameter", "nope")),
            None
        );
        let out = remove_block(ROOT, &Block::resource("aws_sns_topic", "t")).unwrap();
        assert!(
            out.ends_with("}\n") && !out.contains("aws_sns_topic"),
            "{out:?}"
        );
    }

    #[test]
    fn sets_a_blocks_count() {
        let out = set_count(ROOT, &Block::resource("aws_ssm_parameter", "shard"), 1).unwrap();
        assert!(out.contains("  count = 1\n") && !out.contains("count = 2"));
        assert_eq!(
            set_count(ROOT, &Block::resource("aws_sqs_queue", "a"), 1),
            None
        );
    }

    #[test]
    fn sets_a_top_level_argument_only() {
        let out = set_attribute(
            ROOT,
            &Block::resource("aws_sqs_queue", "a"),
            "tags",
            |old| format!("merge({old}, {{ r = 1 }})"),
        )
        .unwrap();
        assert!(
            out.contains("  tags = merge({ x = \"${1}\" }, { r = 1 })\n"),
            "{out}"
        );
        // `ignore_changes` sits in a nested block, not at the top level.
        assert_eq!(
            set_attribute(
                ROOT,
                &Block::resource("aws_ssm_parameter", "shard"),
                "ignore_changes",
                |_| { "[]".into() }
            ),
            None
        );
        // `name` does not match `name_prefix`.
        let root = "resource \"aws_sqs_queue\" \"a\" {\n  name_prefix = \"x\"\n}\n";
        assert_eq!(
            set_attribute(root, &Block::resource("aws_sqs_queue", "a"), "name", |_| {
                "\"y\"".into()
            }),
            None
        );
    }

    #[test]
    fn renames_a_block_and_whole_references_only() {
        let root = "resource \"aws_sqs_queue\" \"jobs\" {\n  name = \"j\"\n}\n\nresource \"aws_sqs_queue\" \"jobs_dlq\" {\n  name = \"d\"\n}\n\nlocals {\n  a = [aws_sqs_queue.jobs_dlq.arn, aws_sqs_queue.jobs.arn, \"${aws_sqs_queue.jobs_dlq.url}\", data.aws_sqs_queue.jobs_dlq.arn]\n}\n";
        let out = rename_block(
            root,
            &Block::resource("aws_sqs_queue", "jobs_dlq"),
            "dead_letters",
        )
        .unwrap();
        assert!(
            out.contains("resource \"aws_sqs_queue\" \"dead_letters\" {"),
            "{out}"
        );
        assert!(
            out.contains("resource \"aws_sqs_queue\" \"jobs\" {"),
            "{out}"
        );
        assert!(
            out.contains("[aws_sqs_queue.dead_letters.arn, aws_sqs_queue.jobs.arn, \"${aws_sqs_queue.dead_letters.url}\", data.aws_sqs_queue.jobs_dlq.arn]"),
            "{out}"
        );
        assert_eq!(
            rename_block(
                "locals {}\n",
                &Block::resource("aws_sqs_queue", "jobs_dlq"),
                "x"
            ),
            None
        );
        assert_eq!(
            moved_block("aws_sqs_queue.a", "aws_sqs_queue.b"),
            "\nmoved {\n  from = aws_sqs_queue.a\n  to   = aws_sqs_queue.b\n}\n"
        );
    }

    #[test]
    fn a_module_call_is_edited_as_a_person_edits_it() {
        let root = "module \"vpc\" {\n  source = \"../../\"\n  tags   = local.tags\n}\n\nmodule \"endpoints\" {\n  source = \"./e\"\n  vpc_id = module.vpc.vpc_id\n}\n\noutput \"vpc_id\" {\n  value = module.vpc.vpc_id\n}\n\noutput \"n\" {\n  value = 1\n}\n\nmoved {\n  from = module.old\n  to   = module.vpc\n}\n";
        let call = Block::call("vpc");
        let endpoints = Block::call("endpoints");
        assert!(call.declared_in(root) && !Block::call("vp").declared_in(root));
        assert!(!only_outputs_read(root, &call), "another call reads it");
        assert!(only_outputs_read(root, &endpoints));
        assert!(only_outputs_read(
            &remove_block(root, &endpoints).unwrap(),
            &call
        ));

        let renamed = rename_block(root, &call, "vpc_renamed").unwrap();
        assert!(
            renamed.starts_with("module \"vpc_renamed\" {\n"),
            "{renamed}"
        );
        assert!(renamed.contains("vpc_id = module.vpc_renamed.vpc_id"));
        assert!(!renamed.contains("module.vpc.") && renamed.contains("module \"endpoints\""));
        assert_eq!(
            moved_block("module.vpc", "module.vpc_renamed"),
            "\nmoved {\n  from = module.vpc\n  to   = module.vpc_renamed\n}\n"
        );

        let counted = add_count(root, &call, 1).unwrap();
        assert!(
            counted.starts_with("module \"vpc\" {\n  count = 1\n\n  source"),
            "{counted}"
        );
        let indexed = index_references(&counted, &call, 0).unwrap();
        assert!(
            indexed.contains("vpc_id = module.vpc[0].vpc_id"),
            "{indexed}"
        );
        assert!(
            indexed.contains("value = module.vpc[0].vpc_id"),
            "{indexed}"
        );
        assert!(
            indexed.contains("  to   = module.vpc\n"),
            "a moved block is history"
        );
        assert_eq!(index_references(&indexed, &call, 0), None);
        let zero = set_count(&indexed, &call, 0).unwrap();
        assert!(zero.contains("  count = 0\n") && !zero.contains("count = 1"));
        assert_eq!(
            add_count(&indexed, &call, 2)
                .unwrap()
                .matches("count")
                .count(),
            1
        );

        let outputs = remove_outputs_reading(root, &call).unwrap();
        assert!(!outputs.contains("output \"vpc_id\""), "{outputs}");
        assert!(
            outputs.contains("output \"n\" {\n  value = 1\n}\n\nmoved {"),
            "{outputs}"
        );
        assert_eq!(remove_outputs_reading(root, &endpoints), None);
        let removed = remove_block(root, &endpoints).unwrap();
        assert!(!removed.contains("endpoints") && removed.contains("module \"vpc\" {"));

        let tagged = add_tag(root, &call, "reviewed", "yes").unwrap();
        assert!(
            tagged.contains("\n  tags = merge(local.tags, { reviewed = \"yes\" })\n"),
            "{tagged}"
        );
        let untagged = add_tag(root, &endpoints, "reviewed", "yes").unwrap();
        assert!(untagged.contains("module \"endpoints\" {\n  tags = { reviewed = \"yes\" }\n"));
    }
}
