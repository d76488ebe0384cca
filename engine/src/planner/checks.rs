//! The planner's refusals: a bound object this estate does not own (the
//! estate boundary), the strict profile's toggles, and `prevent_destroy`.
//! Each names the instance and its block.

use super::managed::refusal;
use super::{provider_failed, Planner};
use crate::addr::ResourceInstanceAddr;
use crate::bind::aws::Lane;
use crate::bind::catalogue::{Family, Identity};
use crate::bind::marker::{self, Owner};
use crate::config::Resource;
use crate::diag::Diagnostics;
use crate::provider::schema::Schema;
use crate::provider::Provider;
use crate::record::Record;
use crate::value::Value;

impl<P: Provider + Clone> Planner<'_, '_, P> {
    /// Whether this estate owns the object an instance bound: its marker
    /// (tagged), its parent's marker or this estate's record of it (a
    /// part), or its record (record only).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn check_owner(
        &self,
        lane: &Lane<P>,
        res: &Resource,
        addr: &ResourceInstanceAddr,
        ident: &Identity,
        id: &str,
        live: &Value,
        config: &Value,
        record: Option<&Record>,
    ) -> Result<(), Diagnostics> {
        let estate = &self.req.settings.estate;
        let recorded = record.is_some_and(|r| r.id.as_deref() == Some(id));
        match &ident.family {
            Family::Tagged => match marker::owner(live) {
                Owner::Estate { estate: e, .. } if &e == estate => Ok(()),
                Owner::Estate { estate: other, .. } => Err(refusal(
                    res,
                    addr,
                    "Object owned by another estate",
                    format!(
                        "{addr} would bind to the live object {id}, which carries the marker of estate \"{other}\". One estate never adopts, writes or destroys another estate's objects: give this block's object another name, or remove the block."
                    ),
                )),
                Owner::Nobody => Err(refusal(
                    res,
                    addr,
                    "Object not owned by this estate",
                    format!(
                        "{addr} would bind to the live object {id}, which carries no {} marker: something outside estate \"{estate}\" made it. It is never adopted silently. To bring it into the estate, add an import block for it (to = {addr}, id = \"{id}\"), or run choudoufu migrate with a terraform state that holds it; otherwise give this block's object another name.",
                        marker::ESTATE_TAG
                    ),
                )),
            },
            Family::Part(parent) => {
                let handle = config
                    .get(&parent.attr)
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                // A part of this estate's object, or a part this estate's
                // own record names (a part of another estate's object).
                if recorded || self.owned.contains(handle) {
                    return Ok(());
                }
                let attr = &parent.attr;
                match lane.parent_estate(&parent.type_name, handle).await {
                    Ok(Some(other)) if &other != estate => Err(refusal(
                        res,
                        addr,
                        "Object owned by another estate",
                        format!(
                            "{addr} would bind to the live object {id}, part of {handle} ({attr}), which carries the marker of estate \"{other}\". A part of another estate's object is this estate's only when this estate's record names it, and none does: it is never adopted or written silently. If this estate made it and lost its record, add an import block for it (to = {addr}, id = \"{id}\"); otherwise remove the block."
                        ),
                    )),
                    Ok(_) => Err(refusal(
                        res,
                        addr,
                        "Object not owned by this estate",
                        format!(
                            "{addr} would bind to the live object {id}, but {} carries no marker and its parent {handle} ({attr}) is not an object of estate \"{estate}\". It is never adopted silently.",
                            res.key.type_name
                        ),
                    )),
                    Err(e) => Err(provider_failed(res, addr, e)),
                }
            }
            Family::Record if recorded => Ok(()),
            Family::Record => Err(refusal(
                res,
                addr,
                "Object not owned by this estate",
                format!(
                    "{addr} would bind to the live object {id}, but {} carries no marker and no record of estate \"{estate}\" names it. It is never adopted silently. To bring it into the estate, add an import block for it (to = {addr}, id = \"{id}\").",
                    res.key.type_name
                ),
            )),
        }
    }

    /// The strict profile's `marker_repair = "never"`: an object whose
    /// address marker names another address (other than by a moved block)
    /// is refused instead of re-marked.
    pub(super) fn check_strict_markers(
        &self,
        res: &Resource,
        addr: &ResourceInstanceAddr,
        ident: &Identity,
        id: &str,
        live: &Value,
        moved: bool,
    ) -> Result<(), Diagnostics> {
        if !self.req.settings.strict.never_repair_markers || !ident.is_tagged() || moved {
            return Ok(());
        }
        let address = match marker::owner(live) {
            Owner::Estate { address, .. } => address,
            Owner::Nobody => return Ok(()),
        };
        if address.as_deref() == Some(addr.to_string().as_str()) {
            return Ok(());
        }
        Err(refusal(
            res,
            addr,
            "Strict profile: marker repair refused",
            format!(
                "{addr} binds the live object {id}, whose {} marker says {}. The strict profile (marker_repair = \"never\") does not rewrite markers: add a moved block if the block was renamed, or fix the marker by hand.",
                marker::ADDRESS_TAG,
                address.map_or("nothing".to_string(), |a| format!("\"{a}\""))
            ),
        ))
    }

    /// The strict profile's `secrets = "refuse"`: a block whose sensitive
    /// values would have to be kept in the record store is refused.
    /// `kept`: the arguments its record keeps, or would (the catalogue's,
    /// and those an earlier apply learned).
    pub(super) fn check_strict_secrets(
        &self,
        res: &Resource,
        addr: &ResourceInstanceAddr,
        kept: &[&str],
        schema: &Schema,
        config: &Value,
    ) -> Result<(), Diagnostics> {
        if !self.req.settings.strict.refuse_secrets {
            return Ok(());
        }
        for &name in kept {
            let Some(v) = config.get(name).filter(|v| !v.is_null()) else {
                continue;
            };
            let declared = schema
                .block
                .attributes
                .get(name)
                .is_some_and(|a| a.sensitive);
            if declared || v.sensitive || v.has_sensitive() {
                return Err(refusal(
                    res,
                    addr,
                    "Strict profile: secret refused",
                    format!("{addr} sets {name}, a sensitive value the provider cannot read back, so the record store would have to keep it. The strict profile (secrets = \"refuse\") stores no secrets."),
                ));
            }
        }
        Ok(())
    }

    /// The strict profile's `no_source_create = "refuse"`: no object is
    /// created that only the record store could find again.
    pub(super) fn check_strict_create(
        &self,
        res: &Resource,
        addr: &ResourceInstanceAddr,
        ident: &Identity,
    ) -> Result<(), Diagnostics> {
        if !self.req.settings.strict.refuse_no_source_create || !ident.record_only() {
            return Ok(());
        }
        Err(refusal(
            res,
            addr,
            "Strict profile: create refused",
            format!(
                "{addr} would create a {} object, which nothing in the live system or the configuration names: only the record store could find it again. The strict profile (no_source_create = \"refuse\") refuses such creates.",
                res.key.type_name
            ),
        ))
    }

    pub(super) fn check_prevent_destroy(
        &self,
        res: &Resource,
        addr: &ResourceInstanceAddr,
    ) -> Result<(), Diagnostics> {
        if res.lifecycle.prevent_destroy {
            return Err(crate::diag::Diagnostic::error(
                "Instance cannot be destroyed",
                format!("Resource {addr} has lifecycle.prevent_destroy set, but the plan calls for this resource to be destroyed. To avoid this error and continue with the plan, either disable lifecycle.prevent_destroy or reduce the scope of the plan using the -target option."),
            )
            .at(res.range.clone())
            .into());
        }
        Ok(())
    }
}
