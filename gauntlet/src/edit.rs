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

/// Whether `c` can continue a terraform identifier.
fn ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
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
