//! The sweep: every live object that carries the estate's marker, or that
//! the estate's records name, and that no declared instance bound. Each is
//! read, and counts only if the read confirms it is the estate's; objects
//! with no marker (made by a controller, or by the provider) are never
//! swept.

use super::aws::Lane;
use super::catalogue::{Catalogue, Identity};
use super::locate::is_ours;
use super::marker::{self, Owner};
use super::Held;
use crate::provider::{Provider, ProviderError, ResourceState};
use crate::record::Record;
use crate::value::Value;
use std::collections::{BTreeMap, BTreeSet};

/// An object no declared instance bound.
#[derive(Debug, Clone)]
pub struct Orphan {
    pub type_name: String,
    pub id: String,
    pub state: ResourceState,
    /// The address its marker (or its record) names.
    pub address: Option<String>,
    pub ident: Identity,
}

/// What [`marked`] found, and the types whose listing failed where a
/// failure is allowed, each with why.
#[derive(Debug, Default)]
pub struct Marked {
    pub orphans: Vec<Orphan>,
    pub unlisted: BTreeMap<String, String>,
}

/// The objects the lane finds by the estate's marker that declared
/// instances did not bind (`bound`) and the sweep has not found yet
/// (`swept`): those the tagging API lists, and for each type in `scan`
/// whose objects the tagging API omits, every object of the type's own
/// listing. What it finds is added to `swept`. A listing of a type not in
/// `needed` may fail (no permission to list a service the root does not
/// use): the type is then named in [`Marked::unlisted`].
pub async fn marked<P: Provider + Clone>(
    lane: &Lane<P>,
    scan: &BTreeSet<String>,
    needed: &BTreeSet<String>,
    bound: &Held,
    swept: &mut Held,
) -> Result<Marked, ProviderError> {
    let taken = |s: &Held, ty: &str, h: &str| bound.contains(ty, h) || s.contains(ty, h);
    let mut candidates: Vec<(String, Vec<String>, Option<String>)> = Vec::new();
    for listed in lane.tagged().await?.to_vec() {
        // The address marker names the type; an object carrying none is
        // known by the first catalogue ARN pattern it fits.
        let type_name = listed.type_name().or_else(|| {
            Catalogue::builtin()
                .entries()
                .find(|(_, e)| {
                    e.arn
                        .as_ref()
                        .is_some_and(|p| p.read(&listed.arn).is_some())
                })
                .map(|(t, _)| t.to_string())
        });
        let Some(type_name) = type_name else { continue };
        let ident = lane.identity(&type_name);
        if !ident.is_tagged() || taken(swept, &type_name, &listed.arn) {
            continue;
        }
        let ids = lane.ids_from_arn(&ident, &listed.arn).await?;
        candidates.push((type_name, ids, listed.address.clone()));
    }
    // Every listing at once (one request or a few pages each); the loop
    // below takes them from the lane's memo.
    let idents: Vec<(&String, Identity)> = scan.iter().map(|t| (t, lane.identity(t))).collect();
    let listings = idents
        .iter()
        .filter(|(_, i)| i.is_tagged())
        .filter_map(|(t, i)| Some((*t, i.entry.list.as_ref()?)));
    let listed = futures_util::future::join_all(
        listings.map(|(t, l)| async move { (t, lane.listed(l).await) }),
    )
    .await;
    let mut unlisted = BTreeMap::new();
    for (type_name, result) in listed {
        match result {
            Ok(_) => {}
            Err(e) if needed.contains(type_name) => return Err(e),
            Err(e) => {
                unlisted.insert(type_name.clone(), why(&e));
            }
        }
    }
    let mut out = Vec::new();
    for (type_name, ident) in idents {
        if !ident.is_tagged() || unlisted.contains_key(type_name) {
            continue;
        }
        let sharing = ident.listed_with();
        let skip = |id: &str| sharing.iter().any(|t| taken(swept, t, id));
        for m in lane.listed_objects(&ident, &skip).await? {
            let Owner::Estate { address, .. } = marker::owner(&m.state.value) else {
                continue;
            };
            // One listing may name the objects of two types (ingress and
            // egress rules): the address marker says whose it is.
            let other_type = address
                .as_deref()
                .and_then(|a| a.parse::<crate::addr::ResourceInstanceAddr>().ok())
                .is_some_and(|a| a.type_name != *type_name);
            // Its ID the listing's skip already held against `swept`.
            let arn = m.state.value.get("arn").and_then(Value::as_str);
            if other_type || arn.is_some_and(|a| taken(swept, type_name, a)) {
                continue;
            }
            swept.hold(type_name, &m.id, &m.state.value);
            out.push(Orphan {
                type_name: type_name.clone(),
                id: m.id,
                state: m.state,
                address,
                ident: ident.clone(),
            });
        }
    }
    for (type_name, ids, listed_address) in candidates {
        if ids.iter().any(|id| taken(swept, &type_name, id)) {
            continue;
        }
        let ident = lane.identity(&type_name);
        for id in ids {
            let Some(state) = lane.read_taken(&ident, &id).await? else {
                continue;
            };
            let Owner::Estate { estate, address } = marker::owner(&state.value) else {
                continue;
            };
            let arn = state.value.get("arn").and_then(Value::as_str);
            if estate != lane.estate()
                || (listed_address.is_some() && address != listed_address)
                || arn.is_some_and(|a| taken(swept, &type_name, a))
            {
                continue;
            }
            swept.hold(&type_name, &id, &state.value);
            out.push(Orphan {
                type_name: type_name.clone(),
                id,
                state,
                address,
                ident: ident.clone(),
            });
            break;
        }
    }
    Ok(Marked {
        orphans: out,
        unlisted,
    })
}

/// Why a listing failed, in the provider's words (its diagnostics, not
/// the plugin's path).
fn why(e: &ProviderError) -> String {
    match e {
        ProviderError::Diagnostics { diagnostics, .. } => diagnostics
            .iter()
            .map(|d| d.provider_line())
            .collect::<Vec<_>>()
            .join("; "),
        e => e.to_string(),
    }
}

/// The parts the swept object `parent` holds that no declared instance
/// bound and the sweep has not found yet: a part carries no marker, and
/// its parent's is the proof it is the estate's (a route table's subnet
/// associations, which must go before it). Each is named in the parent's
/// module.
pub async fn parts<P: Provider + Clone>(
    lane: &Lane<P>,
    parent: &Orphan,
    bound: &Held,
    swept: &mut Held,
) -> Result<Vec<Orphan>, ProviderError> {
    let module = parent
        .address
        .as_deref()
        .and_then(|a| a.parse::<crate::addr::ResourceInstanceAddr>().ok())
        .map(|a| a.module)
        .unwrap_or_default();
    let mut out = Vec::new();
    for (type_name, listing) in Catalogue::builtin().parts_of(&parent.type_name) {
        let ident = lane.identity(type_name);
        for id in lane.parts(listing, &parent.state.value).await? {
            if bound.contains(type_name, &id) || swept.contains(type_name, &id) {
                continue;
            }
            let Some(state) = lane.read(type_name, &id).await? else {
                continue;
            };
            let own_id = state.value.get("id").and_then(Value::as_str).unwrap_or(&id);
            if ident.absent(&state.value)
                || bound.contains(type_name, own_id)
                || swept.contains(type_name, own_id)
            {
                continue;
            }
            swept.hold(type_name, &id, &state.value);
            let addr = crate::addr::ResourceInstanceAddr {
                module: module.clone(),
                ..crate::addr::ResourceInstanceAddr::managed(type_name, &orphan_name(&id))
            };
            out.push(Orphan {
                type_name: type_name.to_string(),
                id,
                state,
                address: Some(addr.to_string()),
                ident: ident.clone(),
            });
        }
    }
    Ok(out)
}

/// The name a swept object with no address of its own is planned under:
/// `orphan_` and the last segment of its ID.
pub fn orphan_name(id: &str) -> String {
    let tail = id.rsplit(['/', ':']).find(|s| !s.is_empty()).unwrap_or(id);
    let name: String = tail
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                true => c,
                false => '_',
            },
        )
        .collect();
    format!("orphan_{name}")
}

/// What a record of an instance no block declares comes to.
#[derive(Debug, Clone)]
pub enum Recorded {
    /// Its object is still there, and the estate's: an orphan.
    Orphan(Box<Orphan>),
    /// Another address binds its object now (a rename): the record is stale.
    Stale(String),
}

/// The objects records name whose instances no block declares, read and
/// confirmed: an object a declared instance bound (`bound`) makes its
/// record stale; one the sweep found already (`swept`) is left to that.
pub async fn recorded<P: Provider + Clone>(
    lane: &Lane<P>,
    records: Vec<Record>,
    bound: &Held,
    swept: &mut Held,
) -> Result<Vec<Recorded>, ProviderError> {
    let mut out = Vec::new();
    for r in records {
        let Some(id) = r.id.clone() else { continue };
        if bound.contains(&r.type_name, &id) {
            out.push(Recorded::Stale(r.address.clone()));
            continue;
        }
        if swept.contains(&r.type_name, &id) {
            continue;
        }
        let ident = lane.identity(&r.type_name);
        let Some(state) = lane.refresh(&ident, &r).await? else {
            continue;
        };
        if ident.absent(&state.value) || !is_ours(lane.estate(), &ident, &state.value, None) {
            continue;
        }
        swept.hold(&r.type_name, &id, &state.value);
        out.push(Recorded::Orphan(Box::new(Orphan {
            type_name: r.type_name.clone(),
            id,
            state,
            address: Some(r.address.clone()),
            ident,
        })));
    }
    Ok(out)
}
