//! What `-target` reaches: the blocks the targets name and everything they
//! depend on, and within them the instances named.

use super::Planner;
use crate::addr::{call_names, ModuleStep, ResourceInstanceAddr, Target};
use crate::config::ResourceKey;
use crate::graph::{Node, TreeGraph, TreeNode};
use std::collections::BTreeSet;

impl<P> Planner<'_, '_, P> {
    /// Whether `-target` reaches a block: no targets, a target in it, or a
    /// target that depends on it.
    pub(super) fn targeted(&self, key: &ResourceKey) -> bool {
        self.needed.as_ref().is_none_or(|n| {
            n.contains(&TreeNode {
                module: call_names(&self.here),
                node: Node::Resource(key.clone()),
            })
        })
    }

    /// Whether `-target` reaches one instance: its block is a dependency of
    /// a target, or a target names the block or this instance.
    pub(super) fn targets_instance(&self, addr: &ResourceInstanceAddr) -> bool {
        let t = &self.req.targets;
        if t.is_empty() {
            return true;
        }
        // A target's module step with no key names every instance of the
        // call, as in terraform.
        let calls = |steps: &[ModuleStep]| {
            steps.len() <= addr.module.len()
                && steps
                    .iter()
                    .zip(&addr.module)
                    .all(|(t, m)| t.name == m.name)
        };
        let instances = |steps: &[ModuleStep]| {
            calls(steps)
                && steps
                    .iter()
                    .zip(&addr.module)
                    .all(|(t, m)| t.key.is_none() || t.key == m.key)
        };
        // The targets naming this block (the block itself, or a module
        // call around it); reached when one of them names this instance.
        let mut named = false;
        for x in t {
            match x {
                Target::Resource(x)
                    if x.module.len() == addr.module.len()
                        && calls(&x.module)
                        && x.mode == addr.mode
                        && x.type_name == addr.type_name
                        && x.name == addr.name =>
                {
                    named = true;
                    if instances(&x.module) && (x.key.is_none() || x.key == addr.key) {
                        return true;
                    }
                }
                Target::Module(steps) if calls(steps) => {
                    named = true;
                    if instances(steps) {
                        return true;
                    }
                }
                _ => {}
            }
        }
        !named
    }
}

/// The blocks `-target` addresses need: the targets' blocks and everything
/// they depend on; `None` without targets.
pub(super) fn needed(graph: &TreeGraph, targets: &[Target]) -> Option<BTreeSet<TreeNode>> {
    if targets.is_empty() {
        return None;
    }
    let mut todo: Vec<TreeNode> = Vec::new();
    for t in targets {
        match t {
            Target::Resource(t) => todo.push(TreeNode {
                module: call_names(&t.module),
                node: Node::Resource(ResourceKey {
                    mode: t.mode,
                    type_name: t.type_name.clone(),
                    name: t.name.clone(),
                }),
            }),
            // Every resource block in the call and the calls within it.
            Target::Module(steps) => {
                let within = call_names(steps);
                todo.extend(
                    graph
                        .nodes()
                        .filter(|n| {
                            matches!(n.node, Node::Resource(_)) && n.module.starts_with(&within)
                        })
                        .cloned(),
                );
            }
        }
    }
    let mut seen = BTreeSet::new();
    let mut out = BTreeSet::new();
    while let Some(n) = todo.pop() {
        if !seen.insert(n.clone()) {
            continue;
        }
        if let Node::Resource(_) = &n.node {
            out.insert(n.clone());
        }
        todo.extend(graph.deps(&n).cloned());
    }
    Some(out)
}
