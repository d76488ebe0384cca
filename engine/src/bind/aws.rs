//! The aws family: the live system as one configuration of the aws provider
//! sees it, beyond any one object. The tagging API's listing of the
//! estate's objects, the provider's facts (account, region, partition),
//! lookups and listings through data sources, and the import IDs the
//! catalogue's templates and ARN patterns give: everything the engine knows
//! of aws as a whole is here, read through the provider itself.
//!
//! A [`Lane`] lives for one plan and reads each listing and fact at most
//! once, however many instances ask.

use super::aws_api;
use super::catalogue::{self, Identity, Listing, Source, Template, Under, UnderFrom};
use super::import_read;
use super::marker;
use crate::provider::schema::Schema;
use crate::provider::{Provider, ProviderError, ResourceState};
use crate::record::Record;
use crate::value::{Kind, Type, Value};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use tokio::sync::OnceCell;

/// The provider type name of the aws family.
pub const PROVIDER: &str = "aws";

/// Whether a provider source address (`registry.terraform.io/hashicorp/aws`)
/// is the aws provider.
pub fn is_aws(source: &str) -> bool {
    source == "hashicorp/aws" || source.ends_with("/hashicorp/aws")
}

/// One object the tagging API lists with the estate's marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub arn: String,
    /// Its `tofu-address` marker, if it carries one.
    pub address: Option<String>,
}

impl Listed {
    /// The resource type its address marker names.
    pub fn type_name(&self) -> Option<String> {
        self.address
            .as_deref()?
            .parse::<crate::addr::ResourceInstanceAddr>()
            .ok()
            .map(|a| a.type_name)
    }
}

/// One provider configuration's view of the live system, for a plan. For
/// a provider other than aws it knows no listing, facts or markers: its
/// types are all found by their records.
pub struct Lane<P> {
    provider: P,
    estate: String,
    aws: bool,
    facts: [OnceCell<Option<String>>; 3],
    tagged: OnceCell<Vec<Listed>>,
    lists: RefCell<BTreeMap<String, Rc<OnceCell<Vec<String>>>>>,
    reads: RefCell<BTreeMap<(String, String), Memo>>,
    /// The provider configuration, for the direct reads of the aws API.
    config: Option<Value>,
    api: OnceCell<Option<aws_api::Client>>,
    under: RefCell<BTreeMap<String, Rc<OnceCell<Vec<aws_api::Element>>>>>,
}

/// One object's read, shared by whoever asks for it in a plan.
type Memo = Rc<OnceCell<Option<ResourceState>>>;

/// An object a type's own listing named, as its read found it, with the
/// import ID it was read by.
#[derive(Debug, Clone)]
pub struct Marked {
    pub id: String,
    pub state: ResourceState,
}

impl<P: Provider + Clone> Lane<P> {
    /// The lane of a provider configuration; `source` is the provider's
    /// source address, `config` the configuration it was configured with.
    pub fn new(provider: P, estate: &str, source: &str, config: Option<Value>) -> Lane<P> {
        Lane {
            provider,
            estate: estate.to_string(),
            aws: is_aws(source),
            facts: Default::default(),
            tagged: OnceCell::new(),
            lists: RefCell::default(),
            reads: RefCell::default(),
            config,
            api: OnceCell::new(),
            under: RefCell::default(),
        }
    }

    /// A handle on the provider, for calls of one's own.
    pub fn provider(&self) -> P {
        self.provider.clone()
    }

    pub fn estate(&self) -> &str {
        &self.estate
    }

    /// The identity of a type of this provider.
    pub fn identity(&self, type_name: &str) -> Identity {
        let schema = self
            .provider
            .cached_schema()
            .and_then(|s| s.resources.get(type_name));
        identity(self.aws, type_name, schema)
    }

    /// Import then read, on a handle of its own.
    pub async fn read(
        &self,
        type_name: &str,
        id: &str,
    ) -> Result<Option<ResourceState>, ProviderError> {
        import_read(&mut self.provider(), type_name, id).await
    }

    /// Reads the object a record names, as terraform refreshes an object
    /// from its state: the provider's read of what the record keeps (its
    /// `id`, its arguments, the provider's private data). A record that
    /// holds only an import ID (a type whose template names it, and whose
    /// own `id` is that ID) is imported. The record of a type found by a
    /// lookup keeps the object's `id`, which its importer may not take (a
    /// default route table is imported by its VPC's ID), and one whose
    /// `id` differs from its import ID keeps it apart (`object`: a
    /// capacity provider's ARN, which an importer rebuilds only with the
    /// account ID): both are read as the record has them.
    pub async fn refresh(
        &self,
        ident: &Identity,
        record: &Record,
    ) -> Result<Option<ResourceState>, ProviderError> {
        let Some(id) = record.id.as_deref() else {
            return Ok(None);
        };
        if record.object.is_some() || !matches!(ident.source(), Source::Template(_)) {
            match self.read_recorded(ident, record).await {
                Some(Ok(found)) => return Ok(found),
                Some(Err(e)) if super::is_not_found(&e) => return Ok(None),
                Some(Err(e)) => {
                    tracing::debug!(type_name = %ident.type_name, id, "read from the record failed, importing: {e}");
                }
                None => {}
            }
        }
        self.read(&ident.type_name, id).await
    }

    /// Reads the object configuration names by `id` and its record knows
    /// by its own `id`, as terraform refreshes from state: one read, of
    /// what the record keeps, with no import's lookup first. The object
    /// counts only while its import ID is still `id`; otherwise, or when
    /// that read finds nothing, it is imported by `id`.
    pub async fn reread(
        &self,
        ident: &Identity,
        record: &Record,
        id: &str,
    ) -> Result<Option<ResourceState>, ProviderError> {
        if record.object.is_some() {
            match self.read_recorded(ident, record).await {
                Some(Ok(Some(s))) if ident.import_id(&s.value).as_deref() == Some(id) => {
                    return Ok(Some(s))
                }
                Some(Err(e)) => {
                    tracing::debug!(type_name = %ident.type_name, id, "read by the recorded id failed, importing: {e}");
                }
                _ => {}
            }
        }
        self.read(&ident.type_name, id).await
    }

    /// The provider's read of what a record keeps, as the prior state;
    /// `None` when the provider's schema lacks the type.
    async fn read_recorded(
        &self,
        ident: &Identity,
        record: &Record,
    ) -> Option<Result<Option<ResourceState>, ProviderError>> {
        let schema = self
            .provider
            .cached_schema()
            .and_then(|s| s.resources.get(&ident.type_name).cloned())?;
        let prior = ResourceState {
            value: record.prior(&schema.block),
            private: record.private_bytes(),
        };
        Some(
            self.provider()
                .read_resource(&ident.type_name, &prior)
                .await,
        )
    }

    /// Reads an object by an ID taken from its ARN or a listing. For a
    /// type the catalogue gives no ARN pattern, the ID is one of several
    /// guesses, and a read that fails only means the guess was wrong.
    pub async fn read_taken(
        &self,
        ident: &Identity,
        id: &str,
    ) -> Result<Option<ResourceState>, ProviderError> {
        match self.read(&ident.type_name, id).await {
            Err(e) if guesses(ident) => {
                tracing::debug!(type_name = %ident.type_name, id, "not this object: {e}");
                Ok(None)
            }
            other => other,
        }
    }

    /// A provider fact (`account`, `region`, `partition`), read once.
    pub async fn fact(&self, name: &str) -> Result<Option<String>, ProviderError> {
        let (i, data_source, attr) = match name {
            _ if !self.aws => return Ok(None),
            "account" => (0, "aws_caller_identity", "account_id"),
            "region" => (1, "aws_region", "name"),
            "partition" => (2, "aws_partition", "partition"),
            _ => return Ok(None),
        };
        self.facts[i]
            .get_or_try_init(|| async {
                let v = self.read_data(data_source, BTreeMap::new()).await?;
                Ok(v.and_then(|v| v.get(attr).and_then(Value::as_str).map(str::to_string)))
            })
            .await
            .cloned()
    }

    /// Reads a data source with the given arguments; `None` when the
    /// provider has no such data source, or it finds nothing.
    async fn read_data(
        &self,
        data_source: &str,
        args: BTreeMap<String, Value>,
    ) -> Result<Option<Value>, ProviderError> {
        let Some(schema) = self
            .provider
            .cached_schema()
            .and_then(|s| s.data_sources.get(data_source).cloned())
        else {
            return Ok(None);
        };
        let config = crate::value::convert::convert(
            schema.block.value_with(args),
            &schema.block.implied_type(),
        )
        .map_err(|e| ProviderError::Encode {
            binary: data_source.into(),
            method: "ReadDataSource",
            reason: e.message,
        })?;
        match self.provider().read_data_source(data_source, &config).await {
            Ok(v) => Ok(Some(v)),
            Err(e) if super::is_not_found(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The estate's objects as the tagging API lists them, read once.
    pub async fn tagged(&self) -> Result<&[Listed], ProviderError> {
        let listed = self
            .tagged
            .get_or_try_init(|| async {
                if !self.aws {
                    return Ok::<_, ProviderError>(Vec::new());
                }
                let filter = BTreeMap::from([
                    ("key".to_string(), Value::string(marker::ESTATE_TAG)),
                    (
                        "values".to_string(),
                        Value::set(Type::String, vec![Value::string(&self.estate)]),
                    ),
                ]);
                let Some(filter_block) = self.provider.cached_schema().and_then(|s| {
                    s.data_sources
                        .get(TAGGING)
                        .and_then(|d| d.block.block_types.get("tag_filter"))
                        .map(|b| b.block.value_with(filter.clone()))
                }) else {
                    return Ok(Vec::new());
                };
                let v = self
                    .read_data(
                        TAGGING,
                        BTreeMap::from([(
                            "tag_filter".to_string(),
                            Value::tuple(vec![filter_block]),
                        )]),
                    )
                    .await?;
                let mut out = Vec::new();
                for m in v
                    .as_ref()
                    .and_then(|v| v.get("resource_tag_mapping_list"))
                    .and_then(Value::elements)
                    .unwrap_or_default()
                {
                    if let Some(arn) = m.get("resource_arn").and_then(Value::as_str) {
                        let address = m
                            .get("tags")
                            .and_then(|t| t.get(marker::ADDRESS_TAG))
                            .and_then(Value::as_str)
                            .map(str::to_string);
                        out.push(Listed {
                            arn: arn.to_string(),
                            address,
                        });
                    }
                }
                Ok(out)
            })
            .await?;
        Ok(listed)
    }

    /// The tags a lookup filters by: the estate's marker, and the address
    /// marker when one is given.
    fn marker_filter(&self, address: Option<&str>) -> Value {
        let mut tags =
            BTreeMap::from([(marker::ESTATE_TAG.to_string(), Value::string(&self.estate))]);
        if let Some(a) = address {
            tags.insert(
                marker::ADDRESS_TAG.to_string(),
                Value::string(filter_pattern(a)),
            );
        }
        Value::map(Type::String, tags)
    }

    /// The objects of a type's own listing that carry this estate's
    /// marker, but those `skip` names by their import ID; each read at
    /// most once a plan.
    pub async fn listed_objects(
        &self,
        ident: &Identity,
        skip: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<Marked>, ProviderError> {
        let Some(listing) = &ident.entry.list else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for id in self.listing_ids(ident, listing).await? {
            if skip(&id) {
                continue;
            }
            let cell = self
                .reads
                .borrow_mut()
                .entry((ident.type_name.clone(), id.clone()))
                .or_default()
                .clone();
            let read = cell.get_or_try_init(|| self.read_taken(ident, &id)).await?;
            let Some(state) = read else { continue };
            let ours = matches!(
                marker::owner(&state.value),
                marker::Owner::Estate { ref estate, .. } if *estate == self.estate
            );
            if ours && !ident.absent(&state.value) {
                out.push(Marked {
                    id,
                    state: state.clone(),
                });
            }
        }
        Ok(out)
    }

    /// The import ID of a part its parent's listing names, matched by its
    /// configuration; `None` while configuration cannot say, when nothing
    /// matches, or when the listing cannot be read (the part is then left
    /// to its record, as for a type with no such listing).
    pub async fn under(
        &self,
        ident: &Identity,
        under: &Under,
        config: &Value,
    ) -> Result<Option<String>, ProviderError> {
        let get = |a: &str| config.get(a).and_then(catalogue::attr_text);
        let mut args = BTreeMap::new();
        for (k, t) in &under.args {
            match self.fill(ident, t, &get).await? {
                Some(v) => args.insert(k.clone(), v),
                None => return Ok(None),
            };
        }
        let mut want = BTreeMap::new();
        for (k, t) in &under.matches {
            match self.fill(ident, t, &get).await? {
                Some(v) => want.insert(k.clone(), v),
                None => return Ok(None),
            };
        }
        let Some(from) = under.from() else {
            return Ok(None);
        };
        let key = format!("{from} {args:?}");
        // One read per listing and arguments a plan.
        let cell = self.under.borrow_mut().entry(key).or_default().clone();
        let listed = cell.get_or_try_init(|| self.elements(from, args)).await?;
        Ok(listed
            .iter()
            .find(|e| want.iter().all(|(k, v)| e.get(k) == Some(v)))
            .and_then(|e| e.get(&under.result).cloned()))
    }

    /// The elements a listing under a parent answers: an aws API
    /// listing's, or those of a list in a data source's answer.
    async fn elements(
        &self,
        from: UnderFrom<'_>,
        args: BTreeMap<String, String>,
    ) -> Result<Vec<aws_api::Element>, ProviderError> {
        Ok(match from {
            UnderFrom::Api(api) => self.api_listing(api, args).await?,
            UnderFrom::DataSource { name, list } => {
                let args = args.into_iter().map(|(k, v)| (k, Value::string(v)));
                let answer = self.read_data(name, args.collect()).await?;
                list_elements(answer.as_ref().and_then(|v| v.get(list)))
            }
        })
    }

    /// An aws API listing's elements; none when the engine cannot read
    /// the API directly (credentials it cannot read: said as a warning
    /// once). A listing that fails is an error, as a data source's is: a
    /// plan missing an object would propose it again.
    async fn api_listing(
        &self,
        api: &str,
        args: BTreeMap<String, String>,
    ) -> Result<Vec<aws_api::Element>, ProviderError> {
        let Some(client) = self.api_client().await? else {
            return Ok(Vec::new());
        };
        let name = api.to_string();
        let answer = tokio::task::spawn_blocking(move || client.list(&name, &args)).await;
        let failed = |reason: String| ProviderError::Direct {
            call: api.to_string(),
            reason,
        };
        match answer {
            Ok(Ok(elements)) => Ok(elements),
            Ok(Err(e)) => Err(failed(e.to_string())),
            Err(e) => Err(failed(e.to_string())),
        }
    }

    /// The client of the aws API this lane's configuration implies, made
    /// once; `None` for another provider, or credentials it cannot read.
    async fn api_client(&self) -> Result<Option<aws_api::Client>, ProviderError> {
        let client = self
            .api
            .get_or_try_init(|| async {
                let Some(config) = self.config.as_ref().filter(|_| self.aws) else {
                    return Ok::<_, ProviderError>(None);
                };
                let region = self.fact("region").await?;
                Ok(match aws_api::Client::from_config(config, region) {
                    Ok(c) => Some(c),
                    Err(e) => {
                        tracing::warn!("no direct reads of the aws API: {e}");
                        None
                    }
                })
            })
            .await?;
        Ok(client.clone())
    }

    /// Every element a type's listing data source answers, read once.
    pub async fn listed(&self, listing: &Listing) -> Result<Vec<String>, ProviderError> {
        let cell = self
            .lists
            .borrow_mut()
            .entry(listing.source())
            .or_default()
            .clone();
        let out = cell
            .get_or_try_init(|| async {
                if let Some(api) = &listing.api {
                    let mut args: BTreeMap<String, String> = listing.args.clone();
                    if listing.by_marker {
                        args.insert(
                            "Filter.1.Name".into(),
                            format!("tag:{}", marker::ESTATE_TAG),
                        );
                        args.insert("Filter.1.Value.1".into(), filter_pattern(&self.estate));
                    }
                    let listed = self.api_listing(api, args).await?;
                    return Ok(listed
                        .into_iter()
                        .filter_map(|mut e| e.remove(&listing.result))
                        .collect());
                }
                let Some(data_source) = &listing.data_source else {
                    return Ok(Vec::new());
                };
                let args = match listing.by_marker {
                    true => BTreeMap::from([("tags".to_string(), self.marker_filter(None))]),
                    false => BTreeMap::new(),
                };
                let v = self.read_data(data_source, args).await?;
                Ok::<_, ProviderError>(
                    v.as_ref()
                        .and_then(|v| v.get(&listing.result))
                        .and_then(Value::elements)
                        .unwrap_or_default()
                        .into_iter()
                        .filter_map(|e| e.as_str().map(str::to_string))
                        .collect(),
                )
            })
            .await?;
        Ok(out.clone())
    }

    /// Fills a template from `get`, the provider's facts and the entry's
    /// defaults; `None` while something it needs is unknown.
    async fn fill(
        &self,
        ident: &Identity,
        template: &Template,
        get: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<String>, ProviderError> {
        let mut known = BTreeMap::new();
        for f in template.fields() {
            let v = match f {
                _ if catalogue::FACTS.contains(&f) => match get(f) {
                    Some(v) => Some(v),
                    None => self.fact(f).await?,
                },
                "arn" => match get("arn") {
                    Some(v) => Some(v),
                    None => match &ident.entry.arn {
                        Some(arn) => Box::pin(self.fill(ident, arn, get)).await?,
                        None => None,
                    },
                },
                _ => ident.field(f, get),
            };
            let Some(v) = v else { return Ok(None) };
            known.insert(f.to_string(), v);
        }
        Ok(template.fill(|f| known.get(f).cloned()))
    }

    /// The import ID of a declared instance from its configuration: the
    /// entry's template or lookup; `None` while it is unknown, or for a
    /// generated ID.
    pub async fn id_from_config(
        &self,
        ident: &Identity,
        config: &Value,
    ) -> Result<Option<String>, ProviderError> {
        let get = ident.text_of(config);
        self.id_from(ident, &get).await
    }

    /// The import ID from placeholder values (read out of an ARN, or an
    /// element of a listing): the template or lookup over them, else their
    /// `id`.
    pub async fn id_from_fields(
        &self,
        ident: &Identity,
        fields: &BTreeMap<String, String>,
    ) -> Result<Option<String>, ProviderError> {
        let get = |a: &str| fields.get(a).cloned();
        // An ID template the fields fill alone comes first: a secret is
        // looked up by its name from configuration, but its ARN is its ID.
        if let Some(id) = ident.entry.id.as_ref().and_then(|t| t.fill(get)) {
            return Ok(Some(id));
        }
        match ident.source() {
            Source::Generated => Ok(fields.get("id").cloned()),
            _ => self.id_from(ident, &get).await,
        }
    }

    async fn id_from(
        &self,
        ident: &Identity,
        get: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<String>, ProviderError> {
        match ident.source() {
            Source::Generated => Ok(None),
            Source::Template(t) => self.fill(ident, t, get).await,
            Source::Lookup(l) => {
                let mut args = BTreeMap::new();
                for (name, t) in &l.args {
                    match self.fill(ident, t, get).await? {
                        Some(v) => args.insert(name.clone(), Value::string(v)),
                        None => return Ok(None),
                    };
                }
                Ok(self
                    .read_data(&l.data_source, args)
                    .await?
                    .and_then(|v| v.get(&l.result).and_then(Value::as_str).map(str::to_string)))
            }
        }
    }

    /// The import IDs an ARN of the type may stand for: exactly one for a
    /// type whose entry has an ARN pattern (none if the ARN is not of its
    /// shape), or whose import ID the ARN alone gives; else the candidates
    /// [`catalogue::id_candidates`] gives, each to be confirmed by a read
    /// (a log group named by configuration, found by its marker when no
    /// block declares it any more).
    pub async fn ids_from_arn(
        &self,
        ident: &Identity,
        arn: &str,
    ) -> Result<Vec<String>, ProviderError> {
        let Some(fields) = ident.read_arn(arn) else {
            return Ok(Vec::new());
        };
        if let Some(id) = self.id_from_fields(ident, &fields).await? {
            return Ok(vec![id]);
        }
        Ok(match guesses(ident) {
            true => catalogue::id_candidates(arn),
            false => Vec::new(),
        })
    }

    /// The import IDs of the objects the tagging API lists with the
    /// marker of `address`; each is to be confirmed by a read.
    pub async fn marked(
        &self,
        ident: &Identity,
        address: &str,
    ) -> Result<Vec<String>, ProviderError> {
        let mut ids = Vec::new();
        for arn in self.marked_arns(address).await? {
            ids.extend(self.ids_from_arn(ident, &arn).await?);
        }
        Ok(ids)
    }

    /// The ARNs the tagging API lists with the address marker `address`.
    pub async fn marked_arns(&self, address: &str) -> Result<Vec<String>, ProviderError> {
        Ok(self
            .tagged()
            .await?
            .iter()
            .filter(|l| l.address.as_deref() == Some(address))
            .map(|l| l.arn.clone())
            .collect())
    }

    /// The import ID of every object a type's listing data source names.
    pub async fn listing_ids(
        &self,
        ident: &Identity,
        listing: &Listing,
    ) -> Result<Vec<String>, ProviderError> {
        let mut ids = Vec::new();
        for element in self.listed(listing).await? {
            let fields = BTreeMap::from([(listing.fills.clone(), element)]);
            ids.extend(self.id_from_fields(ident, &fields).await?);
        }
        Ok(ids)
    }

    /// The import IDs of the parts the parent object `parent` holds, by
    /// a part type's listing under its parent.
    pub async fn parts(
        &self,
        listing: &catalogue::Parts,
        parent: &Value,
    ) -> Result<Vec<String>, ProviderError> {
        let of_parent = |f: &str| parent.get(f).and_then(catalogue::attr_text);
        let mut args = BTreeMap::new();
        for (name, t) in &listing.args {
            let Some(v) = t.fill(of_parent) else {
                return Ok(Vec::new());
            };
            args.insert(name.clone(), v);
        }
        let Some(from) = listing.from() else {
            return Ok(Vec::new());
        };
        let elements = self.elements(from, args).await?;
        Ok(elements
            .into_iter()
            .filter(|e| {
                !listing
                    .unless
                    .iter()
                    .any(|(k, v)| e.get(k).is_some_and(|x| x == v))
            })
            .filter_map(|e| {
                listing
                    .id
                    .fill(|f| e.get(f).cloned().or_else(|| of_parent(f)))
            })
            .collect())
    }

    /// The estate whose marker a part's parent carries, the parent named
    /// by `handle` (its import ID, or its ARN).
    pub async fn parent_estate(
        &self,
        parent_type: &str,
        handle: &str,
    ) -> Result<Option<String>, ProviderError> {
        let parent = self.identity(parent_type);
        let ids = if handle.starts_with("arn:") {
            self.ids_from_arn(&parent, handle).await?
        } else {
            vec![handle.to_string()]
        };
        for id in ids.into_iter().filter(|i| !i.is_empty()) {
            if let Some(s) = self.read_taken(&parent, &id).await? {
                return Ok(match marker::owner(&s.value) {
                    marker::Owner::Estate { estate, .. } => Some(estate),
                    marker::Owner::Nobody => None,
                });
            }
        }
        Ok(None)
    }
}

/// The elements of a list of objects in a data source's answer, each as
/// its primitive fields' text.
fn list_elements(list: Option<&Value>) -> Vec<aws_api::Element> {
    let Some(elements) = list.and_then(Value::elements) else {
        return Vec::new();
    };
    elements
        .iter()
        .filter_map(|e| match &e.kind {
            Kind::Object(fields) => Some(
                fields
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), catalogue::attr_text(v)?)))
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

/// Whether the IDs an ARN gives a type may be guesses, each to be
/// confirmed by a read: the type's entry has no ARN pattern.
fn guesses(ident: &Identity) -> bool {
    ident.entry.arn.is_none()
}

/// The identity of a type of a provider, aws or not (`aws`), whose schema
/// is `schema`: only the aws family writes markers into `tags`.
pub fn identity(aws: bool, type_name: &str, schema: Option<&Schema>) -> Identity {
    let tags = aws && schema.is_some_and(|s| s.block.attributes.contains_key("tags"));
    Identity::of(type_name, tags)
}

/// The aws provider's default configuration: the one the estate's lock
/// (an SSM parameter in the live system) is taken through.
pub fn default_provider() -> crate::config::ProviderRef {
    crate::config::ProviderRef {
        name: "aws".into(),
        alias: None,
    }
}

/// An EC2 filter value matching exactly `text`: `*` and `?` are the
/// API's wildcards, escaped; brackets stand as `?`, one character, since
/// some implementations read them as a class. What else the looser
/// pattern matches, the read of the object's markers refuses.
fn filter_pattern(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '*' | '?' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '[' | ']' => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// The data source that reads the tagging API.
const TAGGING: &str = "aws_resourcegroupstaggingapi_resources";

/// A block that writes one tag of an object (`aws_dynamodb_tag`,
/// `aws_ec2_tag`) never sets a marker: that would hand the object to an
/// estate, or take it from one. The key it writes, if it is a marker's.
pub fn writes_marker(config: &Value) -> Option<&str> {
    config
        .get("key")
        .and_then(Value::as_str)
        .filter(|k| *k == marker::ESTATE_TAG || *k == marker::ADDRESS_TAG)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_patterns_escape_wildcards_and_loosen_brackets() {
        assert_eq!(
            filter_pattern(r#"module.e.aws_vpc_endpoint.g["s3"]"#),
            r#"module.e.aws_vpc_endpoint.g?"s3"?"#
        );
        assert_eq!(filter_pattern(r#"a.b["x*?\"]"#), r#"a.b?"x\*\?\\"?"#);
        assert_eq!(filter_pattern("aws_eip.nat"), "aws_eip.nat");
    }
}
