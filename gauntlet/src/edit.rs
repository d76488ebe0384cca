//! Edits of a twin's private copy of the root, as a person makes them: a
//! resource block deleted, a `count` changed. Text in, text out; the
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
}
