//! An in-process aws provider for tests of the engine's own logic: the
//! planner, apply and binding driven through the [`Provider`] trait with
//! no process, no network and no emulator, in milliseconds.
//!
//! It serves a real schema, the aws provider 5.100.0's trimmed to the types
//! the scenarios use (`tests/fixtures/schema/aws-trimmed.json`, which
//! `scenario_schema` writes from the real binary), and keeps objects in
//! memory, shaped as aws shapes them: each type's generated ID, ARN and
//! other computed attributes, its import ID, the attributes that force a
//! replacement (the schema does not carry ForceNew), and whether the
//! tagging API lists it, all as data (`tests/scenarios/aws.toml`). It
//! answers the data sources the engine's binding reads (the tagging
//! listing with its tag filter, the caller identity, region and partition,
//! the IAM role listing, the SQS queue lookup) from the same objects; the
//! catalogue's `aws_iam_policies` is not among them, since the provider
//! 5.100.0 has no such data source.
//!
//! It stands in for the live system only in unit and scenario tests of
//! *our* logic. It never stands in for the real provider in a live test,
//! a gauntlet stage or a benchmark, and nothing it answers is evidence of
//! how aws or the provider behave: those are proven against the real
//! provider binary and moto.

use engine::bind::catalogue::Template;
use engine::diag::Diagnostic;
use engine::plan::objchange::same;
use engine::provider::discovery::FoundProvider;
use engine::provider::path::{AttributePath, PathStep};
use engine::provider::resolve::Resolved;
use engine::provider::schema::{Block, Nesting, ProviderSchema, Schema};
use engine::provider::{
    ImportedResource, PlannedChange, Provider, ProviderError, ResourceState, Stopper,
};
use engine::session::Launcher;
use engine::value::convert::convert;
use engine::value::{Kind, Type, Value};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// The account, region and partition every object lives in.
pub const ACCOUNT: &str = "123456789012";
pub const REGION: &str = "us-east-1";
pub const PARTITION: &str = "aws";

/// The trimmed schema of the aws provider 5.100.0.
pub fn schema() -> Arc<ProviderSchema> {
    let path = fixture_schema_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; write it with the scenario_schema test",
            path.display()
        )
    });
    Arc::new(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

pub fn fixture_schema_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schema/aws-trimmed.json")
}

/// How aws shapes one type's objects (an entry of `aws.toml`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shape {
    /// The `id` a create gives the object.
    pub id: Option<Template>,
    /// Other computed attributes a create fills in, each a template over
    /// the object's attributes (`id` included) and `{account}`,
    /// `{region}`, `{partition}`, `{serial}`.
    #[serde(default)]
    pub computed: BTreeMap<String, Template>,
    /// The import ID, when it is not the `id`.
    pub import: Option<Template>,
    /// Attributes whose change forces a replacement.
    #[serde(default)]
    pub force_new: Vec<String>,
    /// Whether the tagging API lists the type's objects.
    #[serde(default = "yes")]
    pub tagging: bool,
    /// The values the provider plans for arguments left unset.
    #[serde(default)]
    pub defaults: BTreeMap<String, String>,
}

fn yes() -> bool {
    true
}

/// Every type's shape, by type name.
pub type Shapes = BTreeMap<String, Shape>;

/// The shapes of `tests/scenarios/aws.toml`.
pub fn shapes() -> Shapes {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/aws.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The live system: every object, by type and ID, shared by every
/// provider handle a plan or apply opens.
#[derive(Clone)]
pub struct Memory {
    world: Arc<Mutex<World>>,
    schema: Arc<ProviderSchema>,
}

struct World {
    shapes: Shapes,
    objects: BTreeMap<(String, String), Value>,
    /// The last generated serial number.
    serial: u64,
    /// The imports and reads that reached the live system, by RPC and
    /// type, since they were last taken.
    calls: BTreeMap<(&'static str, String), u64>,
    /// Data source reads, by type, apart from `calls`, which the
    /// scenarios' transcripts count.
    data_reads: BTreeMap<String, u64>,
}

impl Memory {
    pub fn new(schema: Arc<ProviderSchema>, shapes: Shapes) -> Memory {
        Memory {
            world: Arc::new(Mutex::new(World {
                shapes,
                objects: BTreeMap::new(),
                serial: 0,
                calls: BTreeMap::new(),
                data_reads: BTreeMap::new(),
            })),
            schema,
        }
    }

    fn world(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn schema(&self) -> &Arc<ProviderSchema> {
        &self.schema
    }

    /// Changes the force_new attributes of a type.
    pub fn force_new(&self, type_name: &str, attrs: Vec<String>) {
        self.world()
            .shapes
            .entry(type_name.to_string())
            .or_default()
            .force_new = attrs;
    }

    /// Makes an object out of band, as a create would from `attrs`
    /// (arguments by name); `id` overrides the generated ID. Returns its ID.
    pub fn create(
        &self,
        type_name: &str,
        attrs: BTreeMap<String, Value>,
        id: Option<&str>,
    ) -> Result<String, String> {
        let schema = self.resource(type_name).map_err(|e| e.to_string())?;
        let config = convert(
            schema.block.value_with(attrs),
            &schema.block.implied_type().without_optional(),
        )
        .map_err(|e| format!("{type_name}: {}", e.message))?;
        let mut world = self.world();
        let config = with_defaults(world.shapes.get(type_name), &schema.block, &config);
        let mut planned = plan_create(&schema.block, &config);
        if let Some(id) = id {
            set_attr(&mut planned, "id", Value::string(id));
        }
        let v = world.fill(type_name, &schema.block, planned);
        let id = id_of(&v);
        if world
            .objects
            .contains_key(&(type_name.to_string(), id.clone()))
        {
            return Err(format!("{type_name} {id} already exists"));
        }
        world.objects.insert((type_name.to_string(), id.clone()), v);
        Ok(id)
    }

    /// Every object, by type and ID.
    pub fn objects(&self) -> Vec<(String, String, Value)> {
        self.world()
            .objects
            .iter()
            .map(|((t, id), v)| (t.clone(), id.clone(), v.clone()))
            .collect()
    }

    /// Sets one attribute of a live object out of band (`tags` sets
    /// `tags_all` too, as aws holds one set of tags).
    pub fn set(&self, type_name: &str, id: &str, attr: &str, value: Value) -> Result<(), String> {
        let mut world = self.world();
        let v = world
            .objects
            .get_mut(&(type_name.to_string(), id.to_string()))
            .ok_or_else(|| format!("no {type_name} {id}"))?;
        if attr == "tags" && v.get("tags_all").is_some() {
            set_attr(v, "tags_all", value.clone());
        }
        set_attr(v, attr, value);
        Ok(())
    }

    /// How many times the data source `type_name` was read.
    pub fn data_reads(&self, type_name: &str) -> u64 {
        self.world().data_reads.get(type_name).copied().unwrap_or(0)
    }

    /// The imports and reads made since the last take, by RPC and type.
    pub fn take_calls(&self) -> BTreeMap<(&'static str, String), u64> {
        std::mem::take(&mut self.world().calls)
    }

    fn count(&self, rpc: &'static str, type_name: &str) {
        *self
            .world()
            .calls
            .entry((rpc, type_name.to_string()))
            .or_default() += 1;
    }

    /// Deletes a live object out of band.
    pub fn delete(&self, type_name: &str, id: &str) -> Result<(), String> {
        self.world()
            .objects
            .remove(&(type_name.to_string(), id.to_string()))
            .map(|_| ())
            .ok_or_else(|| format!("no {type_name} {id}"))
    }

    /// The schema of a resource type, as the provider would refuse one it
    /// does not know.
    fn resource(&self, type_name: &str) -> Result<&Schema, ProviderError> {
        self.schema
            .resources
            .get(type_name)
            .ok_or_else(|| no_such(type_name, "resource type", "PlanResourceChange"))
    }

    /// The launcher that opens providers on this live system.
    pub fn launcher(&self) -> MemoryLauncher {
        MemoryLauncher(self.clone())
    }

    /// What the engine resolves for the root's provider `local_name`: the
    /// trimmed schema, and a binary that is never launched.
    pub fn resolved(&self, local_name: &str) -> Resolved {
        Resolved {
            local_name: local_name.to_string(),
            found: FoundProvider {
                source: "hashicorp/aws".parse().unwrap(),
                version: "5.100.0".parse().unwrap(),
                executable: PathBuf::from("/in-memory/terraform-provider-aws"),
                place: PathBuf::from("/in-memory"),
            },
            schema: self.schema.clone(),
        }
    }
}

impl World {
    /// A planned object made whole: unknowns filled as aws fills them on
    /// create (the shape's ID and computed attributes, `tags_all` from
    /// `tags`, anything else an empty value of its type).
    fn fill(&mut self, type_name: &str, block: &Block, planned: Value) -> Value {
        let shape = self.shapes.get(type_name).cloned().unwrap_or_default();
        let mut v = planned;
        let mut serial = None;
        let mut templates: Vec<(String, Template)> = shape.computed.into_iter().collect();
        if let Some(id) = shape.id {
            templates.insert(0, ("id".into(), id));
        }
        // Each template may read what an earlier one filled.
        for (attr, template) in templates {
            if v.get(&attr).is_some_and(|a| a.is_known() && !a.is_null()) {
                continue;
            }
            let filled = template.fill(|f| match f {
                "account" => Some(ACCOUNT.into()),
                "region" => Some(REGION.into()),
                "partition" => Some(PARTITION.into()),
                "serial" => Some(format!(
                    "{:012}",
                    *serial.get_or_insert_with(|| {
                        self.serial += 1;
                        self.serial
                    })
                )),
                _ => v.get(f).and_then(engine::bind::catalogue::attr_text),
            });
            let ty = block.attributes.get(&attr).map(|a| a.ty.without_optional());
            if let (Some(text), Some(ty)) = (filled, ty) {
                if let Ok(value) = convert(Value::string(text), &ty) {
                    set_attr(&mut v, &attr, value);
                }
            }
        }
        if block.attributes.contains_key("tags_all") {
            let tags = v.get("tags").filter(|t| !t.is_null()).cloned();
            set_attr(
                &mut v,
                "tags_all",
                tags.unwrap_or_else(|| Value::map(Type::String, BTreeMap::new())),
            );
        }
        known(v)
    }

    fn import_id(&self, type_name: &str, v: &Value) -> String {
        match self.shapes.get(type_name).and_then(|s| s.import.as_ref()) {
            Some(t) => t
                .fill(|f| v.get(f).and_then(engine::bind::catalogue::attr_text))
                .unwrap_or_default(),
            None => id_of(v),
        }
    }

    fn listed(&self, type_name: &str) -> bool {
        self.shapes.get(type_name).is_none_or(|s| s.tagging)
    }
}

/// The proposed object with the shape's defaults for arguments left null,
/// as the SDK plans a schema default.
fn with_defaults(shape: Option<&Shape>, block: &Block, proposed: &Value) -> Value {
    let mut v = proposed.clone();
    for (name, text) in shape.map(|s| &s.defaults).into_iter().flatten() {
        let (Some(a), Some(now)) = (block.attributes.get(name), proposed.get(name)) else {
            continue;
        };
        if now.is_null() {
            if let Ok(d) = convert(Value::string(text.as_str()), &a.ty.without_optional()) {
                set_attr(&mut v, name, d);
            }
        }
    }
    v
}

/// The planned object of a create: the proposed object with every
/// computed attribute it leaves null unknown, at every depth of nested
/// blocks held as single objects or lists.
fn plan_create(block: &Block, proposed: &Value) -> Value {
    let Kind::Object(attrs) = &proposed.kind else {
        return proposed.clone();
    };
    let mut out = attrs.clone();
    for (name, a) in &block.attributes {
        if a.computed && attrs.get(name).is_none_or(Value::is_null) {
            out.insert(name.clone(), Value::unknown(a.ty.without_optional()));
        }
    }
    for (name, nested) in &block.block_types {
        let Some(v) = attrs.get(name) else { continue };
        let planned = match (&nested.nesting, &v.kind) {
            (Nesting::Single | Nesting::Group, Kind::Object(_)) => plan_create(&nested.block, v),
            (Nesting::List, Kind::List(t, items)) => Value::list(
                t.clone(),
                items
                    .iter()
                    .map(|i| plan_create(&nested.block, i))
                    .collect(),
            ),
            _ => continue,
        };
        out.insert(name.clone(), planned);
    }
    Value::object(out).with_sensitive(proposed.sensitive)
}

/// Every unknown inside `v` replaced by an empty value of its type.
fn known(v: Value) -> Value {
    let sensitive = v.sensitive;
    let kind = match v.kind {
        Kind::Unknown(t) => return empty(&t).with_sensitive(sensitive),
        Kind::List(t, e) => Kind::List(t, e.into_iter().map(known).collect()),
        Kind::Set(t, e) => return Value::set(t, e.into_iter().map(known).collect()),
        Kind::Tuple(e) => Kind::Tuple(e.into_iter().map(known).collect()),
        Kind::Map(t, m) => Kind::Map(t, m.into_iter().map(|(k, v)| (k, known(v))).collect()),
        Kind::Object(m) => Kind::Object(m.into_iter().map(|(k, v)| (k, known(v))).collect()),
        k => k,
    };
    Value { kind, sensitive }
}

fn empty(t: &Type) -> Value {
    match t {
        Type::String => Value::string(""),
        Type::Number => Value::int(0),
        Type::Bool => Value::bool(false),
        Type::List(e) => Value::list((**e).clone(), vec![]),
        Type::Set(e) => Value::set((**e).clone(), vec![]),
        Type::Map(e) => Value::map((**e).clone(), BTreeMap::new()),
        other => Value::null(other.clone()),
    }
}

fn set_attr(v: &mut Value, name: &str, value: Value) {
    if let Kind::Object(attrs) = &mut v.kind {
        attrs.insert(name.to_string(), value);
    }
}

fn id_of(v: &Value) -> String {
    v.get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn error(
    method: &'static str,
    summary: impl Into<String>,
    detail: impl Into<String>,
) -> ProviderError {
    ProviderError::Diagnostics {
        binary: PathBuf::from("in-memory aws"),
        method,
        diagnostics: vec![Diagnostic::error(summary, detail)],
    }
}

fn no_such(name: &str, what: &'static str, method: &'static str) -> ProviderError {
    ProviderError::NoSuchType {
        binary: PathBuf::from("in-memory aws"),
        method,
        what,
        name: name.to_string(),
    }
}

/// Opens providers on a [`Memory`].
pub struct MemoryLauncher(pub Memory);

impl Launcher for MemoryLauncher {
    type Provider = MemoryProvider;

    async fn launch(&self, _resolved: &Resolved) -> Result<MemoryProvider, ProviderError> {
        Ok(MemoryProvider {
            memory: self.0.clone(),
        })
    }
}

/// One provider handle on the live system.
#[derive(Clone)]
pub struct MemoryProvider {
    memory: Memory,
}

/// Stop has nothing to cancel: every call returns at once.
#[derive(Clone)]
pub struct NothingToStop;

impl Stopper for NothingToStop {
    async fn stop(&self) -> Result<(), ProviderError> {
        Ok(())
    }
}

impl MemoryProvider {
    fn data_schema(&self, name: &str) -> Result<&Schema, ProviderError> {
        self.memory
            .schema
            .data_sources
            .get(name)
            .ok_or_else(|| no_such(name, "data source", "ReadDataSource"))
    }

    /// A data source's answer from `given`, the rest null.
    fn answer(&self, name: &str, given: BTreeMap<String, Value>) -> Result<Value, ProviderError> {
        let block = &self.data_schema(name)?.block;
        convert(
            block.value_with(given),
            &block.implied_type().without_optional(),
        )
        .map_err(|e| ProviderError::Decode {
            binary: PathBuf::from("in-memory aws"),
            method: "ReadDataSource",
            reason: format!("{name}: {}", e.message),
        })
    }

    /// The tagging API: every listed object carrying every tag filter.
    fn tagging(&self, config: &Value) -> Result<Value, ProviderError> {
        let filters: Vec<(String, Vec<String>)> = config
            .get("tag_filter")
            .and_then(Value::elements)
            .unwrap_or_default()
            .into_iter()
            .map(|f| {
                let key = f.get("key").and_then(Value::as_str).unwrap_or_default();
                let values = f
                    .get("values")
                    .and_then(Value::elements)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect();
                (key.to_string(), values)
            })
            .collect();
        let world = self.memory.world();
        let mut found: Vec<(String, Value)> = Vec::new();
        for ((type_name, _), v) in &world.objects {
            let Some(arn) = v.get("arn").and_then(Value::as_str) else {
                continue;
            };
            let Some(tags) = v.get("tags_all").or_else(|| v.get("tags")) else {
                continue;
            };
            if !world.listed(type_name) {
                continue;
            }
            let matches = filters.iter().all(|(key, values)| {
                tags.get(key)
                    .and_then(Value::as_str)
                    .is_some_and(|t| values.is_empty() || values.iter().any(|v| v == t))
            });
            if matches {
                found.push((arn.to_string(), tags.clone()));
            }
        }
        drop(world);
        found.sort_by(|a, b| a.0.cmp(&b.0));
        let block = &self
            .data_schema("aws_resourcegroupstaggingapi_resources")?
            .block;
        let Some(Type::List(element)) = block
            .attributes
            .get("resource_tag_mapping_list")
            .map(|a| a.ty.clone())
        else {
            return Err(error(
                "ReadDataSource",
                "unexpected schema",
                "resource_tag_mapping_list is not a list",
            ));
        };
        let compliance = match &*element {
            Type::Object { attributes, .. } => attributes["compliance_details"].clone(),
            _ => Type::Dynamic,
        };
        let compliance_element = compliance.element().cloned().unwrap_or(Type::Dynamic);
        let list = found
            .into_iter()
            .map(|(arn, tags)| {
                Value::object(BTreeMap::from([
                    (
                        "compliance_details".to_string(),
                        Value::list(compliance_element.clone(), vec![]),
                    ),
                    ("resource_arn".to_string(), Value::string(arn)),
                    ("tags".to_string(), tags),
                ]))
            })
            .collect();
        let mut given = match &config.kind {
            Kind::Object(m) => m.clone(),
            _ => BTreeMap::new(),
        };
        given.insert("id".into(), Value::string(REGION));
        given.insert(
            "resource_tag_mapping_list".into(),
            Value::list((*element).clone(), list),
        );
        self.answer("aws_resourcegroupstaggingapi_resources", given)
    }

    /// A listing of every object of a type the tagging API omits: its
    /// names and ARNs, filtered by `name_regex` when one is given.
    fn listing(&self, name: &str, type_name: &str, config: &Value) -> Result<Value, ProviderError> {
        let regex = match config.get("name_regex").and_then(Value::as_str) {
            Some(r) => Some(
                regex::Regex::new(r)
                    .map_err(|e| error("ReadDataSource", "invalid name_regex", e.to_string()))?,
            ),
            None => None,
        };
        let world = self.memory.world();
        let (mut names, mut arns) = (Vec::new(), Vec::new());
        for ((t, _), v) in &world.objects {
            let Some(n) = v.get("name").and_then(Value::as_str) else {
                continue;
            };
            if t != type_name || regex.as_ref().is_some_and(|r| !r.is_match(n)) {
                continue;
            }
            names.push(Value::string(n));
            arns.extend(v.get("arn").cloned());
        }
        drop(world);
        self.answer(
            name,
            BTreeMap::from([
                ("id".to_string(), Value::string(REGION)),
                ("names".to_string(), Value::set(Type::String, names)),
                ("arns".to_string(), Value::set(Type::String, arns)),
            ]),
        )
    }

    /// The SQS queue data source: a queue by name.
    fn queue(&self, config: &Value) -> Result<Value, ProviderError> {
        let name = config
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let world = self.memory.world();
        let queue = world
            .objects
            .iter()
            .find(|((t, _), v)| {
                t == "aws_sqs_queue" && v.get("name").and_then(Value::as_str) == Some(name)
            })
            .map(|(_, v)| v.clone());
        drop(world);
        let Some(q) = queue else {
            return Err(error(
                "ReadDataSource",
                format!("reading SQS Queue ({name}) URL"),
                "AWS.SimpleQueueService.NonExistentQueue: The specified queue does not exist.",
            ));
        };
        let pick = |a: &str| q.get(a).cloned().map(|v| (a.to_string(), v));
        let given = ["arn", "url", "name", "tags"]
            .into_iter()
            .filter_map(pick)
            .chain([(
                "id".to_string(),
                q.get("url").cloned().unwrap_or_else(|| Value::string("")),
            )])
            .collect();
        self.answer("aws_sqs_queue", given)
    }
}

impl Provider for MemoryProvider {
    type Stop = NothingToStop;

    fn stop_handle(&self) -> NothingToStop {
        NothingToStop
    }

    fn cached_schema(&self) -> Option<&Arc<ProviderSchema>> {
        Some(&self.memory.schema)
    }

    async fn shutdown(self) {}

    async fn schema(&mut self) -> Result<ProviderSchema, ProviderError> {
        Ok((*self.memory.schema).clone())
    }

    async fn configure(&mut self, _config: &Value) -> Result<(), ProviderError> {
        Ok(())
    }

    async fn import_resource_state(
        &mut self,
        type_name: &str,
        id: &str,
    ) -> Result<Vec<ImportedResource>, ProviderError> {
        let schema = self.memory.resource(type_name)?;
        self.memory.count("ImportResourceState", type_name);
        let world = self.memory.world();
        // As the SDK's passthrough importers: the ID is taken as given, and
        // the read that follows finds whether anything is there.
        let found = world
            .objects
            .iter()
            .find(|((t, _), v)| t == type_name && world.import_id(t, v) == id)
            .map(|((_, found), _)| found.clone())
            .unwrap_or_else(|| id.to_string());
        drop(world);
        let state = schema
            .block
            .value_with(BTreeMap::from([("id".to_string(), Value::string(found))]));
        Ok(vec![ImportedResource {
            type_name: type_name.to_string(),
            state: ResourceState {
                value: state,
                private: Vec::new(),
            },
        }])
    }

    async fn read_resource(
        &mut self,
        type_name: &str,
        current: &ResourceState,
    ) -> Result<Option<ResourceState>, ProviderError> {
        self.memory.resource(type_name)?;
        self.memory.count("ReadResource", type_name);
        let id = id_of(&current.value);
        Ok(self
            .memory
            .world()
            .objects
            .get(&(type_name.to_string(), id))
            .map(|v| ResourceState {
                value: v.clone(),
                private: Vec::new(),
            }))
    }

    async fn upgrade_resource_state(
        &mut self,
        type_name: &str,
        _version: i64,
        raw_json: &[u8],
    ) -> Result<Value, ProviderError> {
        let schema = self.memory.resource(type_name)?;
        let json: serde_json::Value = serde_json::from_slice(raw_json)
            .map_err(|e| error("UpgradeResourceState", "invalid state", e.to_string()))?;
        let ty = schema.block.implied_type().without_optional();
        let none = serde_json::Value::Null;
        engine::plan::json::value_from_json(&json, &ty, &none, &none)
            .map_err(|e| error("UpgradeResourceState", "invalid state", e.to_string()))
    }

    async fn prepare_provider_config(&mut self, config: &Value) -> Result<Value, ProviderError> {
        Ok(config.clone())
    }

    async fn validate_resource_config(
        &mut self,
        type_name: &str,
        _config: &Value,
    ) -> Result<(), ProviderError> {
        self.memory.resource(type_name).map(|_| ())
    }

    async fn validate_data_source_config(
        &mut self,
        type_name: &str,
        _config: &Value,
    ) -> Result<(), ProviderError> {
        self.data_schema(type_name).map(|_| ())
    }

    async fn plan_resource_change(
        &mut self,
        type_name: &str,
        prior: &ResourceState,
        proposed_new: &Value,
        _config: &Value,
    ) -> Result<PlannedChange, ProviderError> {
        let schema = self.memory.resource(type_name)?;
        let planned = |planned_state, requires_replace| PlannedChange {
            planned_state,
            requires_replace,
            planned_private: Vec::new(),
            legacy_type_system: true,
        };
        if proposed_new.is_null() {
            return Ok(planned(proposed_new.clone(), Vec::new()));
        }
        let proposed = {
            let world = self.memory.world();
            with_defaults(world.shapes.get(type_name), &schema.block, proposed_new)
        };
        let mut state = if prior.value.is_null() {
            plan_create(&schema.block, &proposed)
        } else {
            proposed
        };
        if schema.block.attributes.contains_key("tags_all") {
            match state.get("tags").cloned() {
                Some(t) if t.is_wholly_known() => {
                    let t = match t.is_null() {
                        true => Value::map(Type::String, BTreeMap::new()),
                        false => t,
                    };
                    set_attr(&mut state, "tags_all", t)
                }
                _ => set_attr(
                    &mut state,
                    "tags_all",
                    Value::unknown(Type::map(Type::String)),
                ),
            }
        }
        let mut replace = Vec::new();
        if !prior.value.is_null() {
            let world = self.memory.world();
            let forced = world
                .shapes
                .get(type_name)
                .map(|s| s.force_new.clone())
                .unwrap_or_default();
            for attr in forced {
                let (before, after) = (prior.value.get(&attr), state.get(&attr));
                let changed = match (before, after) {
                    (Some(b), Some(a)) => !a.is_known() || !same(b, a),
                    (None, None) => false,
                    _ => true,
                };
                if changed {
                    replace.push(AttributePath(vec![PathStep::Attribute(attr)]));
                }
            }
        }
        Ok(planned(state, replace))
    }

    async fn apply_resource_change(
        &mut self,
        type_name: &str,
        prior: &Value,
        planned: &PlannedChange,
        _config: &Value,
    ) -> Result<Option<ResourceState>, ProviderError> {
        let schema = self.memory.resource(type_name)?;
        let mut world = self.memory.world();
        if planned.planned_state.is_null() {
            world.objects.remove(&(type_name.to_string(), id_of(prior)));
            return Ok(None);
        }
        let v = world.fill(type_name, &schema.block, planned.planned_state.clone());
        let id = id_of(&v);
        let key = (type_name.to_string(), id.clone());
        if prior.is_null() && world.objects.contains_key(&key) {
            return Err(error(
                "ApplyResourceChange",
                format!("creating {type_name} ({id})"),
                "AlreadyExists: an object with this name already exists.",
            ));
        }
        if !prior.is_null() {
            world.objects.remove(&(type_name.to_string(), id_of(prior)));
        }
        world.objects.insert(key, v.clone());
        Ok(Some(ResourceState {
            value: v,
            private: Vec::new(),
        }))
    }

    async fn read_data_source(
        &mut self,
        type_name: &str,
        config: &Value,
    ) -> Result<Value, ProviderError> {
        *self
            .memory
            .world()
            .data_reads
            .entry(type_name.to_string())
            .or_default() += 1;
        let fact = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), Value::string(*v)))
                .collect::<BTreeMap<_, _>>()
        };
        match type_name {
            "aws_caller_identity" => self.answer(
                type_name,
                fact(&[
                    ("id", ACCOUNT),
                    ("account_id", ACCOUNT),
                    ("arn", "arn:aws:iam::123456789012:user/scenario"),
                    ("user_id", "AIDASCENARIO"),
                ]),
            ),
            "aws_region" => self.answer(
                type_name,
                fact(&[
                    ("id", REGION),
                    ("name", REGION),
                    ("description", "US East (N. Virginia)"),
                    ("endpoint", "ec2.us-east-1.amazonaws.com"),
                ]),
            ),
            "aws_partition" => self.answer(
                type_name,
                fact(&[
                    ("id", PARTITION),
                    ("partition", PARTITION),
                    ("dns_suffix", "amazonaws.com"),
                    ("reverse_dns_prefix", "com.amazonaws"),
                ]),
            ),
            "aws_resourcegroupstaggingapi_resources" => self.tagging(config),
            "aws_iam_roles" => self.listing(type_name, "aws_iam_role", config),
            "aws_sqs_queue" => self.queue(config),
            other => Err(no_such(
                other,
                "data source served in memory",
                "ReadDataSource",
            )),
        }
    }
}

mod tests {
    use super::*;

    fn memory() -> Memory {
        Memory::new(schema(), shapes())
    }

    fn strings(pairs: &[(&str, &str)]) -> BTreeMap<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Value::string(*v)))
            .collect()
    }

    #[test]
    fn the_fixture_schema_is_aws_and_every_shape_names_a_type_of_it() {
        let m = memory();
        assert!(m.schema().resources.contains_key("aws_sqs_queue"));
        for (type_name, shape) in shapes() {
            let schema = m.schema().resources.get(&type_name);
            let schema =
                schema.unwrap_or_else(|| panic!("aws.toml: {type_name} is not in the schema"));
            for attr in shape.computed.keys().chain(&shape.force_new) {
                assert!(
                    schema.block.attributes.contains_key(attr),
                    "aws.toml: {type_name} has no attribute {attr}"
                );
            }
        }
    }

    /// The lock and the record store each need the providers configured
    /// before the plan; the second asking evaluates and reads nothing
    /// again.
    #[tokio::test(flavor = "current_thread")]
    async fn providers_configured_once_read_their_data_sources_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("main.tf"),
            "data \"aws_region\" \"here\" {}\n\nprovider \"aws\" {\n  alias  = \"same\"\n  region = data.aws_region.here.name\n}\n",
        )
        .unwrap();
        let (tree, diags) = engine::config::tree::load_tree(dir.path());
        assert!(!diags.has_errors(), "{diags}");
        let m = memory();
        let resolved = BTreeMap::from([("aws".to_string(), m.resolved("aws"))]);
        let mut sessions = engine::session::Sessions::new(resolved, m.launcher());
        for _ in 0..2 {
            engine::planner::configure_providers(&tree.module, BTreeMap::new(), &mut sessions)
                .await
                .unwrap();
        }
        assert_eq!(m.data_reads("aws_region"), 1);
        sessions.close().await;
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_create_fills_ids_and_arns_as_aws_shapes_them() {
        let m = memory();
        let mut p = m.launcher().launch(&m.resolved("aws")).await.unwrap();
        let schema = m.schema().resources["aws_sqs_queue"].clone();
        let ty = schema.block.implied_type().without_optional();
        let config = convert(schema.block.value_with(strings(&[("name", "jobs")])), &ty).unwrap();
        let null = ResourceState {
            value: Value::null(ty),
            private: vec![],
        };
        let plan = p
            .plan_resource_change("aws_sqs_queue", &null, &config, &config)
            .await
            .unwrap();
        assert!(!plan.planned_state.get("arn").unwrap().is_known());
        let made = p
            .apply_resource_change("aws_sqs_queue", &null.value, &plan, &config)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            made.value.get("id").unwrap().as_str(),
            Some("https://sqs.us-east-1.amazonaws.com/123456789012/jobs")
        );
        assert_eq!(
            made.value.get("arn").unwrap().as_str(),
            Some("arn:aws:sqs:us-east-1:123456789012:jobs")
        );
        let read = engine::bind::import_read(
            &mut p,
            "aws_sqs_queue",
            made.value.get("id").unwrap().as_str().unwrap(),
        )
        .await
        .unwrap()
        .unwrap();
        assert!(same(&read.value, &made.value));
        // A name change forces a replacement, as the type's shape says.
        let mut renamed = made.value.clone();
        set_attr(&mut renamed, "name", Value::string("jobs2"));
        let plan = p
            .plan_resource_change("aws_sqs_queue", &made, &renamed, &renamed)
            .await
            .unwrap();
        assert_eq!(plan.requires_replace.len(), 1);
        assert!(
            engine::bind::import_read(&mut p, "aws_sqs_queue", "https://nowhere")
                .await
                .unwrap()
                .is_none()
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn the_tagging_listing_answers_the_tag_filter_and_omits_iam() {
        let m = memory();
        let marked = |estate: &str| {
            let mut attrs = strings(&[("assume_role_policy", "{}")]);
            attrs.insert(
                "tags".into(),
                Value::map(Type::String, strings(&[("tofu-estate", estate)])),
            );
            attrs
        };
        let mut queue = marked("shop");
        queue.insert("name".into(), Value::string("q"));
        queue.remove("assume_role_policy");
        m.create("aws_sqs_queue", queue, None).unwrap();
        let mut role = marked("shop");
        role.insert("name".into(), Value::string("r"));
        m.create("aws_iam_role", role, None).unwrap();
        let mut other = strings(&[("name", "other")]);
        other.insert(
            "tags".into(),
            Value::map(Type::String, strings(&[("tofu-estate", "else")])),
        );
        m.create("aws_sqs_queue", other, None).unwrap();
        let lane = engine::bind::aws::Lane::new(
            m.launcher().launch(&m.resolved("aws")).await.unwrap(),
            "shop",
            "registry.terraform.io/hashicorp/aws",
            None,
        );
        let listed = lane.tagged().await.unwrap();
        assert_eq!(
            listed.iter().map(|l| l.arn.as_str()).collect::<Vec<_>>(),
            ["arn:aws:sqs:us-east-1:123456789012:q"]
        );
        assert_eq!(
            lane.fact("account").await.unwrap().as_deref(),
            Some(ACCOUNT)
        );
    }
}
