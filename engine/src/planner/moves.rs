//! `moved` and `import` blocks: whether a marker's old address is a rename
//! this configuration declares, and the ID an `import` block names an
//! instance's object by.

use super::Planner;
use crate::addr::{ModuleStep, ResourceInstanceAddr, Target};
use crate::config::Module;
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::module::{expansion, Instance};
use hcl_edit::expr::{Expression, TraversalOperator};

impl<P> Planner<'_, '_, P> {
    /// The ID of the root's `import` block for `addr`, evaluated: `None`
    /// when no import block names it. Import blocks live in the root
    /// module and may name an instance inside a module call
    /// (`module.web.aws_security_group.this`); they are evaluated in the
    /// root's scope wherever the instance is planned.
    pub(super) fn import_id(
        &self,
        addr: &ResourceInstanceAddr,
    ) -> Result<Option<String>, Diagnostics> {
        let Some(root) = self.values.instances.get(&Vec::new()) else {
            return Ok(None);
        };
        for import in &self.req.tree.module.imports {
            let instances = match &import.for_each {
                None => vec![(None, Instance::default())],
                Some(_) => expansion(root, None, import.for_each.as_ref(), false)?.instances(),
            };
            for (_, instance) in instances {
                if self.import_to(root, &import.to, &instance)?.as_ref() != Some(addr) {
                    continue;
                }
                let id = root.eval(&import.id, &instance)?;
                return match id.as_str() {
                    Some(s) if id.is_known() && !s.is_empty() => Ok(Some(s.to_string())),
                    _ => Err(Diagnostic::error(
                        "Invalid import id argument",
                        "The import block \"id\" argument must be a non-empty string known before apply, from literals, variables and locals.",
                    )
                    .at(import.range.clone())
                    .about(addr.to_string())
                    .into()),
                };
            }
        }
        Ok(None)
    }

    /// The instance an import block's `to` names, its index expressions
    /// (`aws_ssm_parameter.p[each.key]`) evaluated for one instance of the
    /// block's `for_each`.
    fn import_to(
        &self,
        scope: &crate::eval::module::ModuleValues,
        to: &crate::config::Expr,
        instance: &Instance,
    ) -> Result<Option<ResourceInstanceAddr>, Diagnostics> {
        let Expression::Traversal(t) = &to.expr else {
            return Ok(expr_text(to).parse().ok());
        };
        let Expression::Variable(root) = &t.expr else {
            return Ok(None);
        };
        let mut text = root.as_str().to_string();
        for op in &t.operators {
            match op.value() {
                TraversalOperator::GetAttr(a) => {
                    text.push('.');
                    text.push_str(a.as_str());
                }
                TraversalOperator::LegacyIndex(n) => text.push_str(&format!("[{}]", n.value())),
                TraversalOperator::Index(e) => {
                    let key = crate::config::Expr {
                        expr: e.clone(),
                        file: to.file.clone(),
                    };
                    let v = scope.eval(&key, instance)?;
                    match (v.as_str(), v.as_number().and_then(|n| n.to_i64())) {
                        (Some(s), _) => text.push_str(&format!("[{}]", serde_json::json!(s))),
                        (_, Some(n)) => text.push_str(&format!("[{n}]")),
                        _ => return Ok(None),
                    }
                }
                _ => return Ok(None),
            }
        }
        Ok(text.parse().ok())
    }

    /// Whether a `moved` block renames `old` to `new`: one of this module's
    /// (its addresses within each instance of it), or one of the root's.
    pub(super) fn moved(&self, old: &ResourceInstanceAddr, new: &ResourceInstanceAddr) -> bool {
        self.moved_sources(new).contains(old)
    }

    /// The addresses `moved` blocks rename to `new`: where its object
    /// lived before, its record and marker still under that name.
    pub(super) fn moved_sources(&self, new: &ResourceInstanceAddr) -> Vec<ResourceInstanceAddr> {
        let mut sources = moved_to(self.module(), &self.here, new);
        if !self.here.is_empty() {
            sources.extend(moved_to(&self.req.tree.module, &[], new));
        }
        sources
    }
}

/// The addresses a `moved` block of `module` renames to `new` (whole
/// resources or single instances, whole module calls or single module
/// instances), its addresses taken within the module instance `within`.
fn moved_to(
    module: &Module,
    within: &[ModuleStep],
    new: &ResourceInstanceAddr,
) -> Vec<ResourceInstanceAddr> {
    let inside =
        |path: Vec<ModuleStep>| -> Vec<ModuleStep> { within.iter().cloned().chain(path).collect() };
    module
        .moved
        .iter()
        .filter_map(|m| {
            let (Ok(from), Ok(to)) = (
                expr_text(&m.from).parse::<Target>(),
                expr_text(&m.to).parse::<Target>(),
            ) else {
                return None;
            };
            match (from, to) {
                (Target::Resource(from), Target::Resource(to)) => {
                    let from = ResourceInstanceAddr {
                        module: inside(from.module),
                        ..from
                    };
                    let to = ResourceInstanceAddr {
                        module: inside(to.module),
                        ..to
                    };
                    let whole = ResourceInstanceAddr {
                        key: None,
                        ..new.clone()
                    };
                    if to == *new {
                        Some(from)
                    } else if from.key.is_none() && to.key.is_none() && to == whole {
                        Some(ResourceInstanceAddr {
                            key: new.key.clone(),
                            ..from
                        })
                    } else {
                        None
                    }
                }
                (Target::Module(from), Target::Module(to)) => {
                    let (from, to) = (inside(from), inside(to));
                    let n = to.len();
                    let (head, rest) = (new.module.get(..n)?, &new.module[n..]);
                    let mut old = from;
                    if head != to.as_slice() {
                        // A whole call's move keeps each instance's key.
                        let (last, to_last) = (old.last_mut()?, &to[n - 1]);
                        let same_call = head[..n - 1] == to[..n - 1]
                            && head[n - 1].name == to_last.name
                            && to_last.key.is_none()
                            && last.key.is_none();
                        if !same_call {
                            return None;
                        }
                        last.key = head[n - 1].key.clone();
                    }
                    old.extend(rest.iter().cloned());
                    Some(ResourceInstanceAddr {
                        module: old,
                        ..new.clone()
                    })
                }
                _ => None,
            }
        })
        .collect()
}

/// An expression as its source spells it: an address in a `moved` or
/// `import` block.
fn expr_text(e: &crate::config::Expr) -> String {
    let span = crate::config::span_of(&e.expr);
    e.file
        .text()
        .get(span)
        .unwrap_or_default()
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_block_in_a_module_renames_within_each_instance_of_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("main.tf"),
            "moved {\n  from = aws_sqs_queue.old\n  to   = aws_sqs_queue.new\n}\n",
        )
        .unwrap();
        let (module, d) = crate::config::load(dir.path());
        assert!(!d.has_errors(), "{d}");
        let addr = |s: &str| s.parse::<ResourceInstanceAddr>().unwrap();
        let within = addr("module.app[\"a\"].aws_sqs_queue.x").module;
        assert_eq!(
            moved_to(
                &module,
                &within,
                &addr("module.app[\"a\"].aws_sqs_queue.new")
            ),
            [addr("module.app[\"a\"].aws_sqs_queue.old")],
            "within the same module instance only"
        );
        assert!(moved_to(&module, &within, &addr("aws_sqs_queue.new")).is_empty());
        assert_eq!(
            moved_to(&module, &[], &addr("aws_sqs_queue.new[1]")),
            [addr("aws_sqs_queue.old[1]")],
            "a whole resource's move keeps each instance's key"
        );
    }

    #[test]
    fn a_moved_block_renames_a_module_call_and_everything_in_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("main.tf"),
            "moved {\n  from = module.old\n  to   = module.new\n}\nmoved {\n  from = module.one\n  to   = module.many[\"a\"]\n}\nmoved {\n  from = module.vpc\n  to   = module.networking.module.vpc\n}\n",
        )
        .unwrap();
        let (module, d) = crate::config::load(dir.path());
        assert!(!d.has_errors(), "{d}");
        let addr = |s: &str| s.parse::<ResourceInstanceAddr>().unwrap();
        for (new, old) in [
            ("module.new.aws_sqs_queue.q", "module.old.aws_sqs_queue.q"),
            (
                "module.new[\"k\"].module.inner.aws_sqs_queue.q[1]",
                "module.old[\"k\"].module.inner.aws_sqs_queue.q[1]",
            ),
            (
                "module.many[\"a\"].aws_sqs_queue.q",
                "module.one.aws_sqs_queue.q",
            ),
            (
                "module.networking.module.vpc.aws_vpc.this[0]",
                "module.vpc.aws_vpc.this[0]",
            ),
        ] {
            assert_eq!(moved_to(&module, &[], &addr(new)), [addr(old)], "{new}");
        }
        for unmoved in [
            "module.many[\"b\"].aws_sqs_queue.q",
            "module.newer.aws_sqs_queue.q",
            "aws_sqs_queue.q",
        ] {
            assert!(
                moved_to(&module, &[], &addr(unmoved)).is_empty(),
                "{unmoved}"
            );
        }
    }
}
