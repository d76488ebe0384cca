//! The identity catalogue: what the engine knows of each resource type, as
//! data (`catalogue.toml`, one short entry a type), and the small
//! interpreter that reads it.
//!
//! The code knows *families*, never types. A type's family comes from its
//! entry and its schema ([`Identity::of`]):
//!
//! - **part** of a parent: the entry names a `parent`; the object carries
//!   no marker and is owned through its parent's (or this estate's record);
//! - **tagged**: the schema has `tags`: the object carries the markers;
//! - **record**: neither: only the record the apply wrote finds it.
//!
//! A type with no entry is still planned by the same rules; an entry makes
//! the import ID exact (a template over configuration, a lookup, an ARN
//! pattern) and says which live test proves it.
//!
//! Nothing here talks to a provider: templates are filled from whatever
//! the caller can answer (configuration, a read, an ARN, provider facts).

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The catalogue file, compiled in.
pub const SOURCE: &str = include_str!("catalogue.toml");

/// The provider facts a template may name besides attributes.
pub const FACTS: [&str; 3] = ["account", "region", "partition"];

/// A template such as `{role}/{policy_arn}` or
/// `arn:{partition}:ec2:{region}:{account}:vpc/{id}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    text: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Field(String),
}

impl Template {
    pub fn parse(text: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_string()));
            }
            let close = rest[open..]
                .find('}')
                .ok_or_else(|| format!("unclosed {{ in {text:?}"))?;
            let name = &rest[open + 1..open + close];
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!("bad placeholder {{{name}}} in {text:?}"));
            }
            parts.push(Part::Field(name.to_string()));
            rest = &rest[open + close + 1..];
        }
        if rest.contains('}') {
            return Err(format!("stray }} in {text:?}"));
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_string()));
        }
        Ok(Template {
            text: text.to_string(),
            parts,
        })
    }

    /// The names the template's placeholders use.
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Field(f) => Some(f.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// The template filled in; `None` when `get` cannot answer one of its
    /// placeholders (not known yet, not there, or empty: no import ID has
    /// an empty part, as [`Template::read`] holds).
    pub fn fill(&self, mut get: impl FnMut(&str) -> Option<String>) -> Option<String> {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Literal(l) => out.push_str(l),
                Part::Field(f) => out.push_str(&get(f).filter(|v| !v.is_empty())?),
            }
        }
        Some(out)
    }

    /// Reads the placeholders' values out of `text` written in this
    /// template's shape: literals match exactly, each placeholder as little
    /// as it can, the last one the rest. `None` when the shape differs.
    pub fn read(&self, text: &str) -> Option<BTreeMap<String, String>> {
        let mut out = BTreeMap::new();
        let mut rest = text;
        let mut parts = self.parts.iter().peekable();
        while let Some(p) = parts.next() {
            match p {
                Part::Literal(l) => rest = rest.strip_prefix(l.as_str())?,
                Part::Field(f) => {
                    let value = match parts.peek() {
                        None => std::mem::take(&mut rest),
                        Some(Part::Literal(next)) => {
                            // At least one character, up to the next literal.
                            let at = rest
                                .char_indices()
                                .skip(1)
                                .map(|(i, _)| i)
                                .find(|&i| rest[i..].starts_with(next.as_str()))?;
                            let (v, r) = rest.split_at(at);
                            rest = r;
                            v
                        }
                        // Two placeholders side by side: the first takes
                        // one character, which no sound template asks for.
                        Some(Part::Field(_)) => {
                            let n = rest.chars().next()?.len_utf8();
                            let (v, r) = rest.split_at(n);
                            rest = r;
                            v
                        }
                    };
                    if value.is_empty() {
                        return None;
                    }
                    out.insert(f.clone(), value.to_string());
                }
            }
        }
        rest.is_empty().then_some(out)
    }
}

impl std::fmt::Display for Template {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Template {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Template::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A data source whose answer is the import ID.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lookup {
    pub data_source: String,
    /// Its arguments, each a template.
    pub args: BTreeMap<String, Template>,
    /// The attribute of its answer that is the import ID.
    pub result: String,
}

/// A listing of every object of a type the tagging API omits: a data
/// source, or an aws API listing where the provider has none.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Listing {
    pub data_source: Option<String>,
    /// The aws API listing (`bind::aws_api`), and its arguments.
    pub api: Option<String>,
    #[serde(default)]
    pub args: BTreeMap<String, String>,
    /// The attribute of the data source's answer that holds the list, or
    /// the field of each element of the API's.
    pub result: String,
    /// The placeholder each element of the list fills.
    #[serde(rename = "as")]
    pub fills: String,
    /// Whether the data source's `tags` argument (or the EC2 API's `tag:`
    /// filter) filters by tag: the listing then names only objects
    /// carrying the estate's marker.
    #[serde(default)]
    pub by_marker: bool,
}

impl Listing {
    /// What is read, as a plan says it: `data.aws_eips` or
    /// `iam.ListPolicies`. Types naming the same one share its answer.
    pub fn source(&self) -> String {
        match (&self.data_source, &self.api) {
            (Some(d), _) => format!("data.{d}"),
            (None, Some(a)) => a.clone(),
            (None, None) => String::new(),
        }
    }
}

/// A listing under a part's parent that names the part, read with
/// arguments from configuration: a listing of the aws API
/// (`bind::aws_api`), or a list attribute of a data source's answer (a
/// VPC's CIDR block associations). The element matching the
/// configuration gives the import ID.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Under {
    /// The aws API listing, when the provider has no data source for it.
    pub api: Option<String>,
    /// Else the data source whose answer holds the list...
    pub data_source: Option<String>,
    /// ...in this attribute, a list of objects.
    pub list: Option<String>,
    pub args: BTreeMap<String, Template>,
    /// The element's fields and the configuration they must equal.
    #[serde(rename = "match")]
    pub matches: BTreeMap<String, Template>,
    /// The element's field that is the import ID.
    pub result: String,
}

/// The listing of a parent's parts, for the sweep of a parent no block
/// declares: a data source whose answer's list names each part, or an aws
/// API listing, read with arguments from the parent's object; each
/// element's fields, else the parent's attributes, fill `id`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parts {
    pub data_source: Option<String>,
    /// The attribute of the data source's answer holding the parts, a
    /// list of objects.
    pub list: Option<String>,
    pub api: Option<String>,
    /// Filled from the parent object's attributes.
    pub args: BTreeMap<String, Template>,
    /// The part's import ID.
    pub id: Template,
    /// Elements whose fields hold these values are not parts (a route
    /// table's main association).
    #[serde(default)]
    pub unless: BTreeMap<String, String>,
}

/// Where an [`Under`] listing is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnderFrom<'u> {
    Api(&'u str),
    DataSource { name: &'u str, list: &'u str },
}

impl<'u> UnderFrom<'u> {
    /// An API listing, or a data source and its list; `None` for neither,
    /// or both.
    fn of(
        api: &'u Option<String>,
        data_source: &'u Option<String>,
        list: &'u Option<String>,
    ) -> Option<UnderFrom<'u>> {
        match (api, data_source, list) {
            (Some(api), None, None) => Some(UnderFrom::Api(api)),
            (None, Some(name), Some(list)) => Some(UnderFrom::DataSource { name, list }),
            _ => None,
        }
    }
}

impl Under {
    /// Where the listing is read; `None` for an entry naming neither an
    /// API listing nor a data source and its list, or both.
    pub fn from(&self) -> Option<UnderFrom<'_>> {
        UnderFrom::of(&self.api, &self.data_source, &self.list)
    }
}

impl Parts {
    /// Where the listing is read, as [`Under::from`].
    pub fn from(&self) -> Option<UnderFrom<'_>> {
        UnderFrom::of(&self.api, &self.data_source, &self.list)
    }
}

impl std::fmt::Display for UnderFrom<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnderFrom::Api(api) => f.write_str(api),
            UnderFrom::DataSource { name, list } => write!(f, "data.{name}.{list}"),
        }
    }
}

/// A placeholder made of several attributes: the elements of each list
/// (or the value of each string) in order, and for each flag that is true
/// its word, joined by `sep`. Nothing at all fills nothing.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Join {
    pub of: Vec<String>,
    #[serde(default)]
    pub flags: BTreeMap<String, String>,
    pub sep: String,
}

impl Join {
    /// The joined text over `v`'s attributes; `None` while one is unknown,
    /// or when nothing is set.
    pub fn fill(&self, v: &crate::value::Value) -> Option<String> {
        let mut parts = Vec::new();
        for a in &self.of {
            let Some(x) = v.get(a) else { continue };
            if !x.is_known() {
                return None;
            }
            match x.elements() {
                Some(es) => {
                    for e in es {
                        parts.push(attr_text(e)?);
                    }
                }
                None => parts.extend(attr_text(x).filter(|t| !t.is_empty())),
            }
        }
        for (a, word) in &self.flags {
            match v.get(a) {
                Some(x) if !x.is_known() => return None,
                Some(x) if x.as_bool() == Some(true) => parts.push(word.clone()),
                _ => {}
            }
        }
        (!parts.is_empty()).then(|| parts.join(&self.sep))
    }
}

/// The parent a part belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parent {
    /// The attribute naming the parent (by its import ID or its ARN).
    pub attr: String,
    /// The parent's type.
    #[serde(rename = "type")]
    pub type_name: String,
}

/// A read that means "no object" although the provider returned one.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AbsentIf {
    /// A path such as `versioning_configuration.0.status`.
    pub attr: String,
    /// Values that mean absent, beside a missing or null one.
    #[serde(default)]
    pub values: Vec<String>,
}

/// One type's entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub id: Option<Template>,
    pub lookup: Option<Lookup>,
    pub arn: Option<Template>,
    #[serde(default)]
    pub defaults: BTreeMap<String, String>,
    pub list: Option<Listing>,
    /// Placeholders made of several attributes.
    #[serde(default)]
    pub joins: BTreeMap<String, Join>,
    /// A listing under the parent naming the object, for a part whose ID
    /// is generated.
    pub under: Option<Under>,
    /// For a part: every part of a parent, for the sweep.
    pub parts: Option<Parts>,
    pub parent: Option<Parent>,
    #[serde(default)]
    pub config_only: Vec<String>,
    pub absent_if: Option<AbsentIf>,
    /// The provider's create adopts an object that always exists (a VPC's
    /// default ACL): one with no marker that no record names is not the
    /// estate's yet, and is planned as a create, as terraform plans it.
    #[serde(default)]
    pub adopts: bool,
    /// For a type that `adopts`: the object the adopted one lives and dies
    /// with (a default ACL's VPC). Its destroy leaves the object in place,
    /// so with no record naming it the sweep takes it only beside that
    /// object's destroy.
    pub within: Option<Parent>,
    /// The round-trip root under `engine/tests/fixtures/catalogue/` whose
    /// live test proves the type.
    pub proven: Option<String>,
}

/// The whole catalogue, by type name.
#[derive(Debug)]
pub struct Catalogue {
    entries: BTreeMap<String, Entry>,
}

impl Catalogue {
    /// Parses a catalogue, refusing tables out of order.
    pub fn parse(text: &str) -> Result<Catalogue, String> {
        let entries: BTreeMap<String, Entry> = toml::from_str(text).map_err(|e| e.to_string())?;
        let order: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix('[')?.strip_suffix(']'))
            .collect();
        if let Some(w) = order.windows(2).find(|w| w[0] >= w[1]) {
            return Err(format!(
                "[{}] comes after [{}]: entries are sorted and unique",
                w[1], w[0]
            ));
        }
        if let Some((name, _)) = entries
            .iter()
            .find(|(_, e)| e.under.as_ref().is_some_and(|u| u.from().is_none()))
        {
            return Err(format!(
                "[{name}]: `under` names either `api`, or `data_source` and `list`"
            ));
        }
        if let Some((name, _)) = entries.iter().find(|(_, e)| {
            e.list
                .as_ref()
                .is_some_and(|l| l.data_source.is_some() == l.api.is_some())
        }) {
            return Err(format!(
                "[{name}]: `list` names either `data_source` or `api`"
            ));
        }
        if let Some((name, _)) = entries.iter().find(|(_, e)| {
            e.parts
                .as_ref()
                .is_some_and(|p| p.from().is_none() || e.parent.is_none())
        }) {
            return Err(format!(
                "[{name}]: `parts` names either `api`, or `data_source` and `list`, and needs a `parent`"
            ));
        }
        Ok(Catalogue { entries })
    }

    /// The catalogue compiled into the engine.
    pub fn builtin() -> &'static Catalogue {
        static BUILTIN: OnceLock<Catalogue> = OnceLock::new();
        BUILTIN.get_or_init(|| {
            Catalogue::parse(SOURCE).unwrap_or_else(|e| panic!("catalogue.toml: {e}"))
        })
    }

    pub fn get(&self, type_name: &str) -> Option<&Entry> {
        self.entries.get(type_name)
    }

    pub fn entries(&self) -> impl Iterator<Item = (&str, &Entry)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The part types listed under a parent of type `parent`.
    pub fn parts_of<'c>(&'c self, parent: &'c str) -> impl Iterator<Item = (&'c str, &'c Parts)> {
        self.entries().filter_map(move |(t, e)| {
            let parts = e.parts.as_ref()?;
            (e.parent.as_ref()?.type_name == parent).then_some((t, parts))
        })
    }

    /// The types with a listing of their own.
    pub fn listed(&self) -> impl Iterator<Item = &str> {
        self.entries()
            .filter(|(_, e)| e.list.is_some())
            .map(|(t, _)| t)
    }

    /// The types whose own listing names only the objects carrying the
    /// estate's marker.
    pub fn listed_by_marker(&self) -> impl Iterator<Item = &str> {
        self.entries()
            .filter(|(_, e)| e.list.as_ref().is_some_and(|l| l.by_marker))
            .map(|(t, _)| t)
    }
}

/// How a type's objects are owned and found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Family {
    /// The object carries the markers in its tags.
    Tagged,
    /// A part of a parent object, owned through the parent's marker.
    Part(Parent),
    /// Found only by the record the apply wrote.
    Record,
}

impl Family {
    pub fn name(&self) -> &'static str {
        match self {
            Family::Tagged => "tagged",
            Family::Part(_) => "part",
            Family::Record => "record",
        }
    }
}

/// Where a declared instance's import ID comes from.
#[derive(Debug, Clone, Copy)]
pub enum Source<'c> {
    /// A template over configuration attributes and provider facts.
    Template(&'c Template),
    /// A data source read with arguments from configuration.
    Lookup(&'c Lookup),
    /// Nothing in configuration: the ID is generated.
    Generated,
}

/// A type's identity: its family and its catalogue entry (an empty one
/// for a type the catalogue does not list).
#[derive(Debug, Clone)]
pub struct Identity {
    pub type_name: String,
    pub family: Family,
    pub entry: &'static Entry,
    /// Whether the catalogue lists the type.
    pub catalogued: bool,
}

impl Identity {
    /// The identity of `type_name`, whose schema has (or lacks) `tags`.
    pub fn of(type_name: &str, has_tags: bool) -> Identity {
        static EMPTY: OnceLock<Entry> = OnceLock::new();
        let found = Catalogue::builtin().get(type_name);
        let entry = found.unwrap_or_else(|| EMPTY.get_or_init(Entry::default));
        let family = match &entry.parent {
            Some(p) => Family::Part(p.clone()),
            None if has_tags => Family::Tagged,
            None => Family::Record,
        };
        Identity {
            type_name: type_name.to_string(),
            family,
            entry,
            catalogued: found.is_some(),
        }
    }

    /// The identity of a type as its schema gives it.
    pub fn for_schema(type_name: &str, schema: &crate::provider::schema::Schema) -> Identity {
        Identity::of(type_name, schema.block.attributes.contains_key("tags"))
    }

    pub fn is_tagged(&self) -> bool {
        self.family == Family::Tagged
    }

    /// Where a declared instance's import ID comes from.
    pub fn source(&self) -> Source<'static> {
        match (&self.entry.id, &self.entry.lookup) {
            (_, Some(l)) => Source::Lookup(l),
            (Some(t), None) => Source::Template(t),
            (None, None) => Source::Generated,
        }
    }

    /// Whether nothing but a record (or the listing, for a tagged type)
    /// finds the object.
    pub fn generated(&self) -> bool {
        matches!(self.source(), Source::Generated)
    }

    /// The arguments the provider cannot read back.
    pub fn config_only(&self) -> Vec<&'static str> {
        self.entry.config_only.iter().map(String::as_str).collect()
    }

    /// A placeholder's value from `get` (attributes), else the entry's
    /// default for it.
    pub fn field(&self, name: &str, get: impl Fn(&str) -> Option<String>) -> Option<String> {
        get(name).or_else(|| self.entry.defaults.get(name).cloned())
    }

    /// The import ID of an object from its state (after a create, or as a
    /// read left it): the `id` template over its attributes where they
    /// answer it, else its `id`.
    pub fn import_id(&self, state: &crate::value::Value) -> Option<String> {
        let text = self.text_of(state);
        if let Source::Template(t) = self.source() {
            if let Some(id) = t.fill(|f| self.field(f, &text)) {
                return Some(id);
            }
        }
        text("id")
    }

    /// The entry's joined placeholders over an object's (or a
    /// configuration's) attributes, those it can fill.
    pub fn joined(&self, v: &crate::value::Value) -> BTreeMap<String, String> {
        self.entry
            .joins
            .iter()
            .filter_map(|(name, j)| Some((name.clone(), j.fill(v)?)))
            .collect()
    }

    /// A placeholder's text over an object's (or a configuration's)
    /// attributes: a joined placeholder, else the attribute's own text.
    pub fn text_of<'v>(&self, v: &'v crate::value::Value) -> impl Fn(&str) -> Option<String> + 'v {
        let joined = self.joined(v);
        move |a: &str| {
            joined
                .get(a)
                .cloned()
                .or_else(|| v.get(a).and_then(attr_text))
        }
    }

    /// Placeholder values read out of an ARN listed for this type; `None`
    /// when the ARN is not of this type's shape. The ARN itself is `arn`.
    pub fn read_arn(&self, arn: &str) -> Option<BTreeMap<String, String>> {
        let mut fields = match &self.entry.arn {
            Some(pattern) => pattern.read(arn)?,
            None => BTreeMap::new(),
        };
        fields.insert("arn".into(), arn.to_string());
        Some(fields)
    }

    /// How a declared instance's object is found, in a few words.
    pub fn found_by(&self) -> String {
        let named = match self.source() {
            Source::Template(t) => Some(format!("import ID {t}")),
            Source::Lookup(l) => Some(format!(
                "data.{} ({}).{}",
                l.data_source,
                l.args
                    .iter()
                    .map(|(k, v)| format!("{k} = {v}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                l.result
            )),
            Source::Generated => self.entry.under.as_ref().map(|u| {
                format!(
                    "its parent's listing {} by {}",
                    u.from().map(|f| f.to_string()).unwrap_or_default(),
                    u.matches.keys().cloned().collect::<Vec<_>>().join(" and ")
                )
            }),
        };
        // An adopted object is only ever the one configuration names.
        let marked = match (&self.family, &self.entry.list) {
            _ if self.entry.adopts => None,
            (Family::Tagged, Some(l)) if l.by_marker => Some(format!(
                "its marker, listing {} by the estate's tag",
                l.source()
            )),
            (Family::Tagged, Some(l)) => Some(format!("its marker, listing {}", l.source())),
            (Family::Tagged, None) => Some("its marker, through the tagging listing".to_string()),
            _ => None,
        };
        match (named, marked) {
            (Some(n), _) if self.generated() => format!("its record; else {n}"),
            (Some(n), Some(m)) => format!("{n}; else {m}"),
            (Some(n), None) => format!("{n}; else its record"),
            (None, Some(m)) => format!("its record; else {m}"),
            (None, None) => "its record only".to_string(),
        }
    }

    /// Whether nothing but its record finds an object of the type: no
    /// marker it carries, and no import ID or lookup configuration gives.
    pub fn record_only(&self) -> bool {
        self.generated() && !self.is_tagged() && self.entry.under.is_none()
    }

    /// The types whose objects the type's own listing names (its own, and
    /// any other listed by the same data source: ingress and egress rules
    /// share one), so that an ID one of them bound is not read again.
    pub fn listed_with(&self) -> Vec<String> {
        let Some(listing) = &self.entry.list else {
            return vec![self.type_name.clone()];
        };
        Catalogue::builtin()
            .entries()
            .filter(|(_, e)| {
                e.list
                    .as_ref()
                    .is_some_and(|l| l.source() == listing.source())
            })
            .map(|(t, _)| t.to_string())
            .collect()
    }

    /// Whether an object configuration names is one the create of an
    /// adopting type still has to adopt: it carries no marker, and no
    /// record of this estate names it (`recorded`).
    pub fn unadopted(&self, v: &crate::value::Value, recorded: bool) -> bool {
        self.entry.adopts
            && !recorded
            && matches!(super::marker::owner(v), super::marker::Owner::Nobody)
    }

    /// Whether a read means "no object".
    pub fn absent(&self, v: &crate::value::Value) -> bool {
        let Some(rule) = &self.entry.absent_if else {
            return false;
        };
        let mut at = Some(v);
        for step in rule.attr.split('.') {
            at = at.and_then(|v| match step.parse::<usize>() {
                Ok(i) => v.elements().and_then(|e| e.get(i).copied()),
                Err(_) => v.get(step),
            });
        }
        match at {
            None => true,
            Some(v) if v.is_null() => true,
            Some(v) => v
                .as_str()
                .is_some_and(|s| rule.values.iter().any(|x| x == s)),
        }
    }
}

/// An attribute's value as template text: a known string, number or bool.
pub fn attr_text(v: &crate::value::Value) -> Option<String> {
    if !v.is_known() || v.is_null() {
        return None;
    }
    if let Some(s) = v.as_str() {
        return Some(s.to_string());
    }
    if let Some(n) = v.as_number() {
        return Some(n.to_string_shortest());
    }
    v.as_bool().map(|b| b.to_string())
}

/// The candidates for the import ID of an object of a type the catalogue
/// has no ARN pattern for, from its ARN: the ARN, its resource ID (after the
/// last `/`), and what follows the last `:`. Each is confirmed by a read.
pub fn id_candidates(arn: &str) -> Vec<String> {
    let mut out = vec![arn.to_string()];
    let resource = arn.splitn(6, ':').nth(5).unwrap_or(arn);
    for c in [
        resource.rsplit('/').next().unwrap_or(resource),
        resource.split_once('/').map_or(resource, |(_, r)| r),
        arn.rsplit(':').next().unwrap_or(arn),
    ] {
        if !c.is_empty() && !out.iter().any(|o| o == c) {
            out.push(c.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    fn t(s: &str) -> Template {
        Template::parse(s).unwrap()
    }

    #[test]
    fn templates_fill_from_what_answers_them() {
        let id = t("{role}/{policy_arn}");
        let got = id.fill(|f| match f {
            "role" => Some("r".into()),
            "policy_arn" => Some("arn:aws:iam::1:policy/p".into()),
            _ => None,
        });
        assert_eq!(got.as_deref(), Some("r/arn:aws:iam::1:policy/p"));
        assert_eq!(id.fill(|f| (f == "role").then(|| "r".into())), None);
        // An empty value names nothing: `rtb-1_` is no route's ID.
        let route = t("{route_table_id}_{destination}");
        assert_eq!(
            route.fill(|f| Some(if f == "destination" { "" } else { "rtb-1" }.into())),
            None
        );
        assert!(Template::parse("{unclosed").is_err());
        assert!(Template::parse("a}").is_err());
        assert!(Template::parse("{a b}").is_err());
    }

    #[test]
    fn arns_read_back_into_their_placeholders() {
        let vpc = t("arn:{partition}:ec2:{region}:{account}:vpc/{id}");
        let got = vpc
            .read("arn:aws:ec2:us-east-1:123456789012:vpc/vpc-0abc")
            .unwrap();
        assert_eq!(got["id"], "vpc-0abc");
        assert_eq!(got["region"], "us-east-1");
        assert_eq!(got["account"], "123456789012");
        // Another resource type's ARN of the same service is not this shape.
        assert!(vpc
            .read("arn:aws:ec2:us-east-1:123456789012:subnet/subnet-1")
            .is_none());
        let bucket = t("arn:{partition}:s3:::{bucket}");
        assert_eq!(
            bucket.read("arn:aws:s3:::b.x-y").unwrap()["bucket"],
            "b.x-y"
        );
        let param = t("arn:{partition}:ssm:{region}:{account}:parameter{name}");
        assert_eq!(
            param
                .read("arn:aws:ssm:us-east-1:1:parameter/app/shard/0")
                .unwrap()["name"],
            "/app/shard/0"
        );
        // The last placeholder takes the rest, slashes and all.
        let group = t("arn:{partition}:logs:{region}:{account}:log-group:{name}");
        assert_eq!(
            group
                .read("arn:aws:logs:us-east-1:1:log-group:/aws/x:y")
                .unwrap()["name"],
            "/aws/x:y"
        );
    }

    #[test]
    fn families_follow_the_entry_and_the_schema() {
        let cat = Catalogue::parse(
            "[aws_a]\nid = \"{name}\"\n\n[aws_b]\nparent = { attr = \"a\", type = \"aws_a\" }\nid = \"{a}\"\n",
        )
        .unwrap();
        assert!(cat.get("aws_a").unwrap().parent.is_none());
        assert_eq!(
            cat.get("aws_b").unwrap().parent,
            Some(Parent {
                attr: "a".into(),
                type_name: "aws_a".into()
            })
        );
        // Unknown types: tagged when they have tags, else record-only.
        assert_eq!(
            Identity::of("aws_not_catalogued", true).family,
            Family::Tagged
        );
        assert_eq!(
            Identity::of("aws_not_catalogued", false).family,
            Family::Record
        );
        assert!(!Identity::of("aws_not_catalogued", true).catalogued);
    }

    #[test]
    fn a_catalogue_out_of_order_or_with_unknown_keys_is_refused() {
        let e = Catalogue::parse("[aws_b]\n\n[aws_a]\n").unwrap_err();
        assert!(e.contains("[aws_a] comes after [aws_b]"), "{e}");
        let e = Catalogue::parse("[aws_a]\nidd = \"{x}\"\n").unwrap_err();
        assert!(e.contains("unknown field"), "{e}");
        let e = Catalogue::parse(
            "[aws_a]\nunder = { data_source = \"aws_b\", args = {}, match = {}, result = \"id\" }\n",
        )
        .unwrap_err();
        assert!(e.contains("[aws_a]: `under` names either"), "{e}");
        let e = Catalogue::parse(
            "[aws_a]\nlist = { data_source = \"aws_as\", api = \"iam.ListPolicies\", result = \"ids\", as = \"id\" }\n",
        )
        .unwrap_err();
        assert!(e.contains("[aws_a]: `list` names either"), "{e}");
        let e = Catalogue::parse(
            "[aws_a]\nparts = { data_source = \"aws_b\", list = \"xs\", args = {}, id = \"{x}\" }\n",
        )
        .unwrap_err();
        assert!(e.contains("needs a `parent`"), "{e}");
    }

    #[test]
    fn the_builtin_catalogue_parses() {
        let cat = Catalogue::builtin();
        assert!(cat.get("aws_s3_bucket").is_some());
        for (name, e) in cat.entries() {
            assert!(name.starts_with("aws_"), "{name}");
            if let Some(UnderFrom::Api(api)) = e.under.as_ref().and_then(Under::from) {
                assert!(
                    crate::bind::aws_api::is_listing(api),
                    "{name}: no listing {api}"
                );
            }
            let apis = [
                e.list.as_ref().and_then(|l| l.api.as_ref()),
                e.parts.as_ref().and_then(|p| p.api.as_ref()),
            ];
            for api in apis.into_iter().flatten() {
                assert!(
                    crate::bind::aws_api::is_listing(api),
                    "{name}: no listing {api}"
                );
            }
            if e.under.is_some() {
                assert!(e.parent.is_some(), "{name}: a listing under what?");
            }
            if let Some(p) = &e.parent {
                assert!(
                    cat.get(&p.type_name).is_some(),
                    "{name}: parent {} is not in the catalogue",
                    p.type_name
                );
            }
        }
    }

    #[test]
    fn import_ids_come_from_the_template_else_the_id() {
        let obj = |pairs: &[(&str, &str)]| {
            Value::object(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), Value::string(*v)))
                    .collect(),
            )
        };
        let attach = Identity::of("aws_iam_role_policy_attachment", false);
        let s = obj(&[("role", "r"), ("policy_arn", "p"), ("id", "r-2024")]);
        assert_eq!(attach.import_id(&s).as_deref(), Some("r/p"));
        let unknown = Identity::of("aws_not_catalogued", true);
        assert_eq!(unknown.import_id(&s).as_deref(), Some("r-2024"));
    }

    #[test]
    fn a_joined_placeholder_spells_out_every_source() {
        use crate::value::Type;
        let strings =
            |xs: &[&str]| Value::list(Type::String, xs.iter().map(|x| Value::string(*x)).collect());
        let rule = |cidrs: Value, self_: bool, group: Option<&str>, id: Option<&str>| {
            let mut attrs: BTreeMap<String, Value> = [
                ("security_group_id", Value::string("sg-1")),
                ("type", Value::string("ingress")),
                ("protocol", Value::string("tcp")),
                ("from_port", Value::int(443)),
                ("to_port", Value::int(443)),
                ("cidr_blocks", cidrs),
                ("ipv6_cidr_blocks", strings(&[])),
                ("prefix_list_ids", strings(&[])),
                (
                    "source_security_group_id",
                    group.map_or(Value::null(Type::String), Value::string),
                ),
                ("self", Value::bool(self_)),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
            if let Some(id) = id {
                attrs.insert("id".into(), Value::string(id));
            }
            Value::object(attrs)
        };
        let ident = Identity::of("aws_security_group_rule", false);
        let two = strings(&["10.0.0.0/16", "10.1.0.0/16"]);
        assert_eq!(
            ident.import_id(&rule(two, false, None, None)).as_deref(),
            Some("sg-1_ingress_tcp_443_443_10.0.0.0/16_10.1.0.0/16")
        );
        assert_eq!(
            ident
                .import_id(&rule(strings(&[]), true, Some("sg-2"), None))
                .as_deref(),
            Some("sg-1_ingress_tcp_443_443_sg-2_self")
        );
        // No source at all fills nothing: the object's own id stands.
        let bare = rule(strings(&[]), false, None, Some("sgrule-1"));
        assert_eq!(ident.import_id(&bare).as_deref(), Some("sgrule-1"));
        // An unknown source leaves the ID unknown.
        let unknown = rule(Value::unknown(Type::list(Type::String)), false, None, None);
        assert_eq!(ident.joined(&unknown).get("sources"), None);
    }

    #[test]
    fn types_listed_by_one_data_source_know_each_other() {
        let ingress = Identity::of("aws_vpc_security_group_ingress_rule", true);
        assert_eq!(
            ingress.listed_with(),
            [
                "aws_vpc_security_group_egress_rule",
                "aws_vpc_security_group_ingress_rule"
            ]
        );
        assert_eq!(Identity::of("aws_vpc", true).listed_with(), ["aws_vpc"]);
    }

    #[test]
    fn unknown_arns_give_their_candidates_in_order() {
        assert_eq!(
            id_candidates("arn:aws:ec2:us-east-1:1:vpc/vpc-1"),
            ["arn:aws:ec2:us-east-1:1:vpc/vpc-1", "vpc-1", "vpc/vpc-1"]
        );
        assert_eq!(
            id_candidates("arn:aws:logs:us-east-1:1:log-group:/a/b"),
            [
                "arn:aws:logs:us-east-1:1:log-group:/a/b",
                "b",
                "a/b",
                "/a/b"
            ]
        );
    }
}
