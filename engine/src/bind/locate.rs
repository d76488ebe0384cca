//! Locating a declared instance's live object, in two looks.
//!
//! The first look runs for every instance of a block at once: the import
//! ID from configuration (the catalogue's template or lookup), or for a
//! generated ID the record's, then a read (by the object's own `id` where
//! its record keeps one, as terraform refreshes from state). The second
//! look is for an instance the first did not find: its record, then the
//! objects that carry its address marker (the tagging listing; for a type
//! the listing omits, the type's own listing when configuration cannot
//! name the object); an object it finds binds only if a read confirms it
//! carries this estate's marker for this very address. Nothing binds by a
//! guess that a read has not confirmed.

use super::aws::Lane;
use super::catalogue::{Family, Identity, Source};
use super::marker::{self, Owner};
use super::Held;
use crate::provider::{Provider, ProviderError, ResourceState};
use crate::record::Record;
use crate::value::Value;
use std::collections::BTreeSet;

/// How an instance's object was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The ID an `import` block gives.
    Import,
    /// The import ID composed from configuration.
    Configuration,
    /// This estate's record of the instance.
    Record,
    /// Its address marker, through a listing.
    Marker,
    /// Its configuration, in its parent's listing.
    Owner,
}

impl std::fmt::Display for Via {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Via::Import => "by its import block's ID",
            Via::Configuration => "by the import ID its configuration gives",
            Via::Record => "by its record",
            Via::Marker => "by its address marker, through the listing",
            Via::Owner => "by its configuration, in its parent's listing",
        })
    }
}

/// A first look's answer: the ID looked for (`None` while configuration
/// cannot give it yet and no record names it), how it was had, and the
/// object (`None` when there is none).
pub type Look = (Option<String>, Via, Option<ResourceState>);

/// The first look.
pub async fn first_look<P: Provider + Clone>(
    lane: &Lane<P>,
    ident: &Identity,
    config: &Value,
    record: Option<&Record>,
) -> Result<Look, ProviderError> {
    let (id, via) = match ident.source() {
        Source::Generated => match (record.and_then(|r| r.id.clone()), &ident.entry.under) {
            (Some(id), _) => (Some(id), Via::Record),
            (None, Some(under)) => (lane.under(ident, under, config).await?, Via::Owner),
            (None, None) => (None, Via::Record),
        },
        _ => (
            lane.id_from_config(ident, config).await?,
            Via::Configuration,
        ),
    };
    let Some(id) = id else {
        return Ok((None, via, None));
    };
    let found = match (via, record) {
        (Via::Record, Some(r)) => lane.refresh(ident, r).await?,
        (Via::Configuration, Some(r)) if r.object.is_some() => lane.reread(ident, r, &id).await?,
        _ => lane.read(&ident.type_name, &id).await?,
    };
    let recorded = record.is_some_and(|r| r.id.as_deref() == Some(id.as_str()));
    let found = found.filter(|s| !ident.absent(&s.value) && !ident.unadopted(&s.value, recorded));
    Ok((Some(id), via, found))
}

/// The second look, for an instance the first did not find: `tried` is
/// the ID the first look read, and `bound` what other instances bound.
/// Its configuration having changed what names it (a rename under
/// create_before_destroy, say), the old object is found by the record or
/// by its address marker, as terraform would hold it in state.
pub async fn second_look<P: Provider + Clone>(
    lane: &Lane<P>,
    ident: &Identity,
    address: &str,
    record: Option<&Record>,
    tried: Option<&str>,
    bound: &Held,
) -> Result<Option<(String, Via, ResourceState)>, ProviderError> {
    let mut ids: Vec<(String, Via)> = record
        .and_then(|r| r.id.clone())
        .map(|id| (id, Via::Record))
        .into_iter()
        .collect();
    // An adopted object is the one configuration names (the default ACL
    // of the VPC it names): a marked one elsewhere is an earlier VPC's.
    let by_marker = ident.is_tagged() && !ident.entry.adopts && !lane.estate().is_empty();
    if by_marker {
        let marked = lane.marked(ident, address).await?;
        ids.extend(marked.into_iter().map(|id| (id, Via::Marker)));
    }
    let mut seen = BTreeSet::new();
    for (id, via) in ids {
        if Some(id.as_str()) == tried
            || bound.contains(&ident.type_name, &id)
            || !seen.insert(id.clone())
        {
            continue;
        }
        let read = match (via, record) {
            (Via::Marker, _) => lane.read_taken(ident, &id).await?,
            (Via::Record, Some(r)) => lane.refresh(ident, r).await?,
            _ => lane.read(&ident.type_name, &id).await?,
        };
        let Some(state) = read else {
            continue;
        };
        if ident.absent(&state.value) || !is_ours(lane.estate(), ident, &state.value, Some(address))
        {
            continue;
        }
        return Ok(Some((id, via, state)));
    }
    if by_marker && tried.is_none() {
        // The type's own listing, each object read once a plan.
        let sharing = ident.listed_with();
        let skip = |id: &str| sharing.iter().any(|t| bound.contains(t, id)) || seen.contains(id);
        for m in lane.listed_objects(ident, &skip).await? {
            let at = matches!(
                marker::owner(&m.state.value),
                Owner::Estate { address: Some(ref a), .. } if a == address
            );
            if at {
                return Ok(Some((m.id, Via::Marker, m.state)));
            }
        }
    }
    Ok(None)
}

/// Whether an object's markers make it this estate's, at `address` when
/// one is given. A part or a record-only object carries no marker: its
/// record (or its parent) is what makes it the estate's.
pub fn is_ours(estate: &str, ident: &Identity, object: &Value, address: Option<&str>) -> bool {
    match marker::owner(object) {
        Owner::Estate {
            estate: e,
            address: marked,
        } => e == estate && address.is_none_or(|want| marked.as_deref() == Some(want)),
        Owner::Nobody => ident.family != Family::Tagged,
    }
}

/// The values that name an object this estate owns, for its parts to be
/// recognised by: its import ID, `id`, `arn`, and the attributes its
/// catalogue entry names it by.
pub fn handles(ident: &Identity, id: Option<&str>, v: &Value) -> Vec<String> {
    let mut attrs: Vec<&str> = vec!["id", "arn", "url", "name", "bucket"];
    if let Some(t) = &ident.entry.id {
        attrs.extend(t.fields());
    }
    let mut out: Vec<String> = attrs
        .into_iter()
        .filter_map(|a| v.get(a).and_then(Value::as_str).map(str::to_string))
        .collect();
    out.extend(id.map(str::to_string));
    out.retain(|h| !h.is_empty());
    out
}
