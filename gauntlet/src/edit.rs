//! Edits of a twin's private copy of the root, as a person makes them: a
//! resource block deleted or renamed, a `count` or another argument changed. Text in, text out; the
//! estate's own files are never touched.
//!
//! Blocks are found by their `resource "TYPE" "NAME" {` opening line and
//! closed by brace depth, which holds for roots written in terraform's
//! canonical layout (`terraform fmt`), as the estates are.

/// The lines `[start, end]` of the resource block `type_name.name`.
fn block_lines(lines: &[&str], type_name: &str, name: &str) -> Option<(usize, usize)> {
    let opening = format!("resource \"{type_name}\" \"{name}\" {{");
    let start = lines.iter().position(|l| l.trim_end() == opening)?;
    let mut depth = 0i64;
    for (i, l) in lines.iter().enumerate().skip(start) {
        depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
        if depth == 0 {
            return Some((start, i));
        }
    }
    None
}

/// `text` without the block `type_name.name` (and one blank line after it),
/// or `None` when the text holds no such block.
pub fn remove_block(text: &str, type_name: &str, name: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let (start, mut end) = block_lines(&lines, type_name, name)?;
    if lines.get(end + 1).is_some_and(|l| l.trim().is_empty()) {
        end += 1;
    }
    let mut out: Vec<&str> = lines[..start].to_vec();
    out.extend_from_slice(&lines[end + 1..]);
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    Some(out.join("\n") + "\n")
}

/// `text` with the block's top-level `count = N` set to `n`, or `None`
/// when the block or its count is not there.
pub fn set_count(text: &str, type_name: &str, name: &str, n: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let (start, end) = block_lines(&lines, type_name, name)?;
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    let at = (start + 1..end).find(|i| {
        let l = lines[*i].trim_start();
        l.strip_prefix("count")
            .is_some_and(|r| r.trim_start().starts_with('='))
    })?;
    let indent = &lines[at][..lines[at].len() - lines[at].trim_start().len()];
    out[at] = format!("{indent}count = {n}");
    Some(out.join("\n") + "\n")
}

/// `text` with the block's top-level `attr = old` line set to
/// `attr = expr(old)`, or `None` when the block or that argument is not
/// there. The argument must fit on one line, as it does in the estates.
pub fn set_attribute(
    text: &str,
    type_name: &str,
    name: &str,
    attr: &str,
    expr: impl Fn(&str) -> String,
) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let (start, end) = block_lines(&lines, type_name, name)?;
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
pub fn add_tag(text: &str, type_name: &str, name: &str, key: &str, value: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let (start, end) = block_lines(&lines, type_name, name)?;
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

/// Whether `text` refers to `type_name.name`: the traversal, not a longer
/// name nor a data source's.
pub fn refers_to(text: &str, type_name: &str, name: &str) -> bool {
    let needle = format!("{type_name}.{name}");
    text.match_indices(&needle).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + needle.len()..].chars().next();
        !before.is_some_and(|c| ident(c) || c == '.') && !after.is_some_and(ident)
    })
}

/// `text` with every reference to `type_name.from` (and its block header,
/// if this text holds it) renamed to `type_name.to`, as a person renames a
/// block; `None` when the text mentions neither. The `moved` block is
/// [`moved_block`]'s to add.
pub fn rename_block(text: &str, type_name: &str, from: &str, to: &str) -> Option<String> {
    let header = format!("resource \"{type_name}\" \"{from}\" {{");
    let mut changed = false;
    let mut out: Vec<String> = Vec::new();
    for l in text.lines() {
        if l.trim_end() == header {
            out.push(format!("resource \"{type_name}\" \"{to}\" {{"));
            changed = true;
            continue;
        }
        let old = format!("{type_name}.{from}");
        let mut line = String::new();
        let mut rest = l;
        while let Some(i) = rest.find(&old) {
            let before = rest[..i].chars().next_back();
            let after = rest[i + old.len()..].chars().next();
            let whole = !before.is_some_and(|c| ident(c) || c == '.') && !after.is_some_and(ident);
            line.push_str(&rest[..i]);
            if whole {
                line.push_str(&format!("{type_name}.{to}"));
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

/// The `moved` block that records a rename, as terraform fmt lays it out.
pub fn moved_block(type_name: &str, from: &str, to: &str) -> String {
    format!("\nmoved {{\n  from = {type_name}.{from}\n  to   = {type_name}.{to}\n}}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: &str = "resource \"aws_sqs_queue\" \"a\" {\n  name = \"a\"\n  tags = { x = \"${1}\" }\n}\n\n# The shards.\nresource \"aws_ssm_parameter\" \"shard\" {\n  count = 2\n\n  name = \"/s/${count.index}\"\n  lifecycle {\n    ignore_changes = [value]\n  }\n}\n\nresource \"aws_sns_topic\" \"t\" {\n  name = \"t\"\n}\n";

    #[test]
    fn a_tag_is_added_as_a_person_adds_it() {
        let multi = "resource \"aws_vpc\" \"v\" {\n  cidr_block = \"10.0.0.0/16\"\n  tags = {\n    Name = \"v\"\n  }\n}\n";
        assert_eq!(
            add_tag(multi, "aws_vpc", "v", "reviewed", "yes").unwrap(),
            "resource \"aws_vpc\" \"v\" {\n  cidr_block = \"10.0.0.0/16\"\n  tags = {\n    reviewed = \"yes\"\n    Name = \"v\"\n  }\n}\n"
        );
        let one = add_tag(ROOT, "aws_sqs_queue", "a", "reviewed", "yes").unwrap();
        assert!(one.contains("  tags = merge({ x = \"${1}\" }, { reviewed = \"yes\" })\n"));
        let none = add_tag(ROOT, "aws_sns_topic", "t", "reviewed", "yes").unwrap();
        assert!(none.ends_with(
            "resource \"aws_sns_topic\" \"t\" {\n  tags = { reviewed = \"yes\" }\n  name = \"t\"\n}\n"
        ));
        // A nested block's tags are not the block's own.
        let nested = "resource \"aws_x\" \"n\" {\n  inner {\n    tags = {}\n  }\n}\n";
        assert!(add_tag(nested, "aws_x", "n", "k", "v")
            .unwrap()
            .contains("resource \"aws_x\" \"n\" {\n  tags = { k = \"v\" }\n  inner {"));
        assert!(add_tag(ROOT, "aws_sqs_queue", "missing", "k", "v").is_none());
        let merged =
            "resource \"aws_x\" \"m\" {\n  tags = merge(local.tags, {\n    Name = \"m\"\n  })\n}\n";
        assert!(add_tag(merged, "aws_x", "m", "k", "v")
            .unwrap()
            .contains("merge(local.tags, {\n    k = \"v\"\n    Name"));
        let spread = "resource \"aws_x\" \"s\" {\n  tags = merge(\n    local.tags,\n  )\n}\n";
        assert!(add_tag(spread, "aws_x", "s", "k", "v").is_none());
    }

    #[test]
    fn a_reference_is_the_traversal_not_a_longer_name() {
        let t = "subnet_id = aws_subnet.a.id\nx = [aws_vpc.main]\n";
        assert!(refers_to(t, "aws_subnet", "a"));
        assert!(refers_to(t, "aws_vpc", "main"));
        assert!(!refers_to(t, "aws_vpc", "mai"));
        assert!(!refers_to("y = aws_subnet.ab.id", "aws_subnet", "a"));
        assert!(!refers_to("y = data.aws_subnet.a.id", "aws_subnet", "a"));
        assert!(refers_to("depends_on = [aws_subnet.a]", "aws_subnet", "a"));
        assert!(!refers_to(
            "resource \"aws_subnet\" \"a\" {",
            "aws_subnet",
            "a"
        ));
    }

    #[test]
    fn removes_exactly_one_block() {
        let out = remove_block(ROOT, "aws_ssm_parameter", "shard").unwrap();
        assert!(
            !out.contains("aws_ssm_parameter") && !out.contains("ignore_changes"),
            "{out}"
        );
        assert!(out.contains("resource \"aws_sqs_queue\" \"a\" {"));
        assert!(out.contains("# The shards.\nresource \"aws_sns_topic\" \"t\" {"));
        assert_eq!(remove_block(ROOT, "aws_ssm_parameter", "nope"), None);
        let out = remove_block(ROOT, "aws_sns_topic", "t").unwrap();
        assert!(
            out.ends_with("}\n") && !out.contains("aws_sns_topic"),
            "{out:?}"
        );
    }

    #[test]
    fn sets_a_blocks_count() {
        let out = set_count(ROOT, "aws_ssm_parameter", "shard", 1).unwrap();
        assert!(out.contains("  count = 1\n") && !out.contains("count = 2"));
        assert_eq!(set_count(ROOT, "aws_sqs_queue", "a", 1), None);
    }

    #[test]
    fn sets_a_top_level_argument_only() {
        let out = set_attribute(ROOT, "aws_sqs_queue", "a", "tags", |old| {
            format!("merge({old}, {{ r = 1 }})")
        })
        .unwrap();
        assert!(
            out.contains("  tags = merge({ x = \"${1}\" }, { r = 1 })\n"),
            "{out}"
        );
        // `ignore_changes` sits in a nested block, not at the top level.
        assert_eq!(
            set_attribute(ROOT, "aws_ssm_parameter", "shard", "ignore_changes", |_| {
                "[]".into()
            }),
            None
        );
        // `name` does not match `name_prefix`.
        let root = "resource \"aws_sqs_queue\" \"a\" {\n  name_prefix = \"x\"\n}\n";
        assert_eq!(
            set_attribute(root, "aws_sqs_queue", "a", "name", |_| "\"y\"".into()),
            None
        );
    }

    #[test]
    fn renames_a_block_and_whole_references_only() {
        let root = "resource \"aws_sqs_queue\" \"jobs\" {\n  name = \"j\"\n}\n\nresource \"aws_sqs_queue\" \"jobs_dlq\" {\n  name = \"d\"\n}\n\nlocals {\n  a = [aws_sqs_queue.jobs_dlq.arn, aws_sqs_queue.jobs.arn, \"${aws_sqs_queue.jobs_dlq.url}\", data.aws_sqs_queue.jobs_dlq.arn]\n}\n";
        let out = rename_block(root, "aws_sqs_queue", "jobs_dlq", "dead_letters").unwrap();
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
            rename_block("locals {}\n", "aws_sqs_queue", "jobs_dlq", "x"),
            None
        );
        assert_eq!(
            moved_block("aws_sqs_queue", "a", "b"),
            "\nmoved {\n  from = aws_sqs_queue.a\n  to   = aws_sqs_queue.b\n}\n"
        );
    }
}
