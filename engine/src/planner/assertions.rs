//! `check` blocks and `provider_meta`, as terraform treats them at plan: a
//! check's failed assertion is a warning, never a refusal; a module's
//! `provider_meta` is checked against its provider's meta schema.

use super::Planner;
use crate::config::tree::Tree;
use crate::diag::{Diagnostic, Diagnostics};
use crate::eval::body::decode;
use crate::eval::module::Instance;
use crate::session::{Launcher, Sessions};

impl<P> Planner<'_, '_, P> {
    /// Every `check` block's assertions in each instance of its module,
    /// as terraform checks them at plan: a false one is a warning with
    /// its error message, an unknown one a warning that apply will know,
    /// and a check whose data source could not be read is not evaluated.
    pub(super) fn check_blocks(&mut self) {
        for (instance, values) in &self.values.instances {
            for c in self.req.tree.of_instance(instance).module.checks.values() {
                if self
                    .failed_checks
                    .contains(&(instance.clone(), c.name.clone()))
                {
                    continue;
                }
                let context = format!("check \"{}\"", c.name);
                for a in &c.asserts {
                    let found = match values.eval(&a.condition, &Instance::default()) {
                        Ok(v) if v.as_bool() == Some(false) => {
                            let message = values
                                .eval(&a.error_message, &Instance::default())
                                .ok()
                                .and_then(|m| m.as_str().map(str::to_string))
                                .unwrap_or_default();
                            vec![Diagnostic::warning("Check block assertion failed", message)
                                .at(a.condition.range())]
                        }
                        Ok(v) if !v.is_known() => vec![Diagnostic::warning(
                            "Check block assertion known after apply",
                            "The condition could not be evaluated at this time, a result will be known when this plan is applied.",
                        )
                        .at(a.condition.range())],
                        Ok(_) => Vec::new(),
                        Err(d) => d.0,
                    };
                    for mut w in found {
                        w.severity = crate::diag::Severity::Warning;
                        w.context = Some(context.clone());
                        self.diags.push(w);
                    }
                }
            }
        }
    }
}

/// Each module's `provider_meta` blocks checked against their provider's
/// meta schema, as terraform checks them for each resource of the module
/// that uses the provider. (With the aws provider's empty meta schema,
/// only an empty block is valid, and what it would send is nothing.)
pub(super) fn provider_metas<L: Launcher>(tree: &Tree, sessions: &Sessions<L>) -> Diagnostics {
    let mut diags = Diagnostics::default();
    for t in tree.modules() {
        for (name, meta) in &t.module.provider_metas {
            let Some(res) = t
                .module
                .resources
                .values()
                .find(|r| &r.provider_ref().name == name)
            else {
                continue;
            };
            let Some(schema) = sessions.schema(name) else {
                continue;
            };
            match &schema.provider_meta {
                Some(s) => {
                    if let Err(d) = decode(&meta.config, &s.block, &crate::eval::Scope::default()) {
                        for mut e in d.0 {
                            e.context.get_or_insert_with(|| "terraform".to_string());
                            diags.push(e);
                        }
                    }
                }
                None => diags.push(
                    Diagnostic::error(
                        format!(
                            "Provider {} doesn't support provider_meta",
                            sessions.source(name)
                        ),
                        format!(
                            "The resource {} belongs to a provider that doesn't support provider_meta blocks",
                            res.key
                        ),
                    )
                    .at(meta.range.clone()),
                ),
            }
        }
    }
    diags
}
