//! A provider's schema as the engine uses it, and its rendering in
//! terraform's `providers schema -json` format.
//!
//! The model is filled from the plugin protocol by [`super::grpc`] (the only
//! place that sees wire types) and stored by [`super::cache`]; everything
//! else in the engine reads schemas through these types.
//!
//! Protocol 6's nested attributes keep their [`NestedType`] beside the
//! type it implies, so code that only needs types reads `Attribute::ty`
//! whatever the protocol. Write-only attributes are flagged, and
//! [`Block::non_null_write_only`] finds values a provider must not return.

use std::collections::BTreeMap;

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use super::path::{AttributePath, PathStep};
pub use super::schema_map::SchemaMap;
use crate::value::{Kind, Type, Value};

/// Everything a provider declares about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderSchema {
    /// The provider's own configuration block.
    pub provider: Schema,
    pub resources: SchemaMap,
    pub data_sources: SchemaMap,
    pub ephemeral_resources: SchemaMap,
    /// Functions the provider contributes to expressions.
    pub functions: BTreeMap<String, Function>,
    /// The schema of `provider_meta` blocks, when the provider has one.
    pub provider_meta: Option<Schema>,
    pub capabilities: Capabilities,
}

/// Optional protocol features the provider announces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// The provider expects PlanResourceChange before a destroy.
    pub plan_destroy: bool,
    /// The schema may be cached instead of asked for in every process.
    pub get_provider_schema_optional: bool,
    pub move_resource_state: bool,
}

/// A versioned block: the schema of a resource, data source, or provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Schema {
    /// Resource state schema version, for UpgradeResourceState.
    pub version: i64,
    pub block: Block,
}

/// A configuration block: attributes and nested block types.
// Stored form (the schema cache): fields at their default are left out,
// which keeps the aws provider's entry to a third of its full size.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Block {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, Attribute>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub block_types: BTreeMap<String, NestedBlock>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "DescriptionKind::is_plain")]
    pub description_kind: DescriptionKind,
    #[serde(default, skip_serializing_if = "is_false")]
    pub deprecated: bool,
}

/// An attribute. Its values have type `ty`; for a nested attribute
/// (protocol 6) `ty` is the type `nested_type` implies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attribute {
    #[serde(rename = "type")]
    pub ty: Type,
    /// The attributes of the objects a nested attribute holds, and how
    /// they nest; `None` for an attribute declared by its type alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nested_type: Option<NestedType>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "DescriptionKind::is_plain")]
    pub description_kind: DescriptionKind,
    #[serde(default, skip_serializing_if = "is_false")]
    pub required: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub optional: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub computed: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub sensitive: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub deprecated: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub write_only: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The objects a nested attribute holds (protocol 6): their attributes,
/// and whether the attribute is one object or a list, set or map of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NestedType {
    pub nesting: ObjectNesting,
    pub attributes: BTreeMap<String, Attribute>,
}

/// How a nested attribute holds its objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ObjectNesting {
    Single,
    List,
    Set,
    Map,
}

impl ObjectNesting {
    fn as_str(self) -> &'static str {
        match self {
            ObjectNesting::Single => "single",
            ObjectNesting::List => "list",
            ObjectNesting::Set => "set",
            ObjectNesting::Map => "map",
        }
    }
}

impl NestedType {
    /// The type of the attribute's values, as terraform's configschema
    /// declares it: an object (a list, set or map of objects for those
    /// nestings) whose optional and computed attributes are optional, so
    /// configuration may leave them out.
    pub fn implied_type(&self) -> Type {
        let attributes = self
            .attributes
            .iter()
            .map(|(name, a)| (name.clone(), a.ty.clone()))
            .collect();
        let optional = self
            .attributes
            .iter()
            .filter(|(_, a)| a.optional || a.computed)
            .map(|(name, _)| name.clone())
            .collect();
        let object = Type::Object {
            attributes,
            optional,
        };
        match self.nesting {
            ObjectNesting::Single => object,
            ObjectNesting::List => Type::list(object),
            ObjectNesting::Set => Type::set(object),
            ObjectNesting::Map => Type::map(object),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NestedBlock {
    pub nesting: Nesting,
    pub block: Block,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_items: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_items: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// How a nested block type repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Nesting {
    /// At most one block; an object or null.
    Single,
    /// Exactly one block, an object even when absent from configuration.
    Group,
    List,
    Set,
    /// Blocks with one label each, keyed by it.
    Map,
}

impl Nesting {
    fn as_str(self) -> &'static str {
        match self {
            Nesting::Single => "single",
            Nesting::Group => "group",
            Nesting::List => "list",
            Nesting::Set => "set",
            Nesting::Map => "map",
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DescriptionKind {
    #[default]
    Plain,
    Markdown,
}

impl DescriptionKind {
    fn is_plain(&self) -> bool {
        *self == DescriptionKind::Plain
    }

    fn as_str(self) -> &'static str {
        match self {
            DescriptionKind::Plain => "plain",
            DescriptionKind::Markdown => "markdown",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Function {
    pub parameters: Vec<Parameter>,
    pub variadic_parameter: Option<Parameter>,
    pub return_type: Type,
    pub summary: String,
    pub description: String,
    pub description_kind: DescriptionKind,
    pub deprecation_message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Parameter {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: Type,
    pub allow_null_value: bool,
    pub allow_unknown_values: bool,
    pub description: String,
    pub description_kind: DescriptionKind,
}

impl Block {
    /// The type of this block's values: an object of its attributes and
    /// one attribute per nested block type (a list, set or map of the
    /// nested object, or the object itself for single and group). As in
    /// terraform, a list or map of blocks holding a `dynamic` attribute is
    /// itself `dynamic`.
    pub fn implied_type(&self) -> Type {
        let mut attributes: BTreeMap<String, Type> = self
            .attributes
            .iter()
            .map(|(name, a)| (name.clone(), a.ty.clone()))
            .collect();
        for (name, nested) in &self.block_types {
            let inner = nested.block.implied_type();
            let ty = match nested.nesting {
                Nesting::Single | Nesting::Group => inner,
                Nesting::List | Nesting::Map if inner.has_dynamic() => Type::Dynamic,
                Nesting::List => Type::List(Box::new(inner)),
                Nesting::Set => Type::Set(Box::new(inner)),
                Nesting::Map => Type::Map(Box::new(inner)),
            };
            attributes.insert(name.clone(), ty);
        }
        Type::Object {
            attributes,
            optional: Default::default(),
        }
    }

    /// A value of this block holding `given` (attributes and nested block
    /// values by name), with every other attribute null and every other
    /// nested block type absent as terraform writes it: null for single,
    /// an empty block for group, an empty collection otherwise.
    /// A list or map of blocks whose type is `dynamic` is empty as an
    /// empty tuple or object, as terraform writes it.
    pub fn value_with(&self, mut given: BTreeMap<String, Value>) -> Value {
        for (name, a) in &self.attributes {
            given
                .entry(name.clone())
                .or_insert_with(|| Value::null(a.ty.without_optional()));
        }
        for (name, nested) in &self.block_types {
            given.entry(name.clone()).or_insert_with(|| {
                let inner = nested.block.implied_type().without_optional();
                match nested.nesting {
                    Nesting::Single => Value::null(inner),
                    Nesting::Group => nested.block.value_with(BTreeMap::new()),
                    Nesting::List if inner.has_dynamic() => Value::tuple(vec![]),
                    Nesting::Map if inner.has_dynamic() => Value::object(BTreeMap::new()),
                    Nesting::List => Value::list(inner, vec![]),
                    Nesting::Set => Value::set(inner, vec![]),
                    Nesting::Map => Value::map(inner, BTreeMap::new()),
                }
            });
        }
        Value::object(given)
    }
}

impl Block {
    /// The paths in `value` (an object of this block) where a write-only
    /// attribute holds something other than null: what a provider must
    /// never return in a plan or a state.
    pub fn non_null_write_only(&self, value: &Value) -> Vec<AttributePath> {
        let mut found = Vec::new();
        write_only_in_block(self, value, &mut Vec::new(), &mut found);
        found
    }
}

fn write_only_in_block(
    block: &Block,
    value: &Value,
    path: &mut Vec<PathStep>,
    found: &mut Vec<AttributePath>,
) {
    write_only_in_attributes(&block.attributes, value, path, found);
    for (name, nested) in &block.block_types {
        if let Some(v) = value.get(name) {
            path.push(PathStep::Attribute(name.clone()));
            for_each_element(v, path, &mut |element, path| {
                write_only_in_block(&nested.block, element, path, found)
            });
            path.pop();
        }
    }
}

fn write_only_in_attributes(
    attributes: &BTreeMap<String, Attribute>,
    value: &Value,
    path: &mut Vec<PathStep>,
    found: &mut Vec<AttributePath>,
) {
    for (name, attribute) in attributes {
        let Some(v) = value.get(name).filter(|v| !v.is_null()) else {
            continue;
        };
        path.push(PathStep::Attribute(name.clone()));
        if attribute.write_only {
            found.push(AttributePath(path.clone()));
        } else if let Some(nested) = &attribute.nested_type {
            for_each_element(v, path, &mut |element, path| {
                write_only_in_attributes(&nested.attributes, element, path, found)
            });
        }
        path.pop();
    }
}

/// Calls `f` with each object a nested block or attribute value holds:
/// the value itself, or each element with its index or key in the path.
fn for_each_element(
    value: &Value,
    path: &mut Vec<PathStep>,
    f: &mut dyn FnMut(&Value, &mut Vec<PathStep>),
) {
    match &value.kind {
        Kind::Object(_) => f(value, path),
        Kind::List(_, items) | Kind::Set(_, items) | Kind::Tuple(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(PathStep::Index(i as i64));
                f(item, path);
                path.pop();
            }
        }
        Kind::Map(_, items) => {
            for (k, item) in items {
                path.push(PathStep::Key(k.clone()));
                f(item, path);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Terraform's `providers schema -json` document for the given providers
/// (keyed by full source address), as terraform 1.11 writes it: empty
/// collections and false or empty fields are left out, as Go's `omitempty`
/// leaves them out. It serializes straight from the model, without an
/// intermediate JSON tree (the aws provider's document is 13 MB).
pub struct TerraformSchemas<'a> {
    providers: Vec<(String, &'a ProviderSchema)>,
}

impl<'a> TerraformSchemas<'a> {
    pub fn new(providers: impl IntoIterator<Item = (String, &'a ProviderSchema)>) -> Self {
        TerraformSchemas {
            providers: providers.into_iter().collect(),
        }
    }
}

impl Serialize for TerraformSchemas<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("format_version", "1.0")?;
        if !self.providers.is_empty() {
            map.serialize_entry(
                "provider_schemas",
                &Entries(self.providers.iter().map(|(a, p)| (a, ProviderJson(p)))),
            )?;
        }
        map.end()
    }
}

/// Serializes an iterator of pairs as a JSON object.
struct Entries<I>(I);

impl<K: Serialize, V: Serialize, I: Iterator<Item = (K, V)> + Clone> Serialize for Entries<I> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.clone())
    }
}

struct ProviderJson<'a>(&'a ProviderSchema);

impl Serialize for ProviderJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = self.0;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("provider", &SchemaJson(&p.provider))?;
        for (key, schemas) in [
            ("resource_schemas", &p.resources),
            ("data_source_schemas", &p.data_sources),
            ("ephemeral_resource_schemas", &p.ephemeral_resources),
        ] {
            if !schemas.is_empty() {
                map.serialize_entry(
                    key,
                    &Entries(schemas.iter().map(|(n, s)| (n, SchemaJson(s)))),
                )?;
            }
        }
        if !p.functions.is_empty() {
            map.serialize_entry(
                "functions",
                &Entries(p.functions.iter().map(|(n, f)| (n, FunctionJson(f)))),
            )?;
        }
        map.end()
    }
}

struct SchemaJson<'a>(&'a Schema);

impl Serialize for SchemaJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("version", &self.0.version)?;
        map.serialize_entry("block", &BlockJson(&self.0.block))?;
        map.end()
    }
}

struct BlockJson<'a>(&'a Block);

impl Serialize for BlockJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let b = self.0;
        let mut map = s.serialize_map(None)?;
        if !b.attributes.is_empty() {
            map.serialize_entry(
                "attributes",
                &Entries(b.attributes.iter().map(|(n, a)| (n, AttributeJson(a)))),
            )?;
        }
        if !b.block_types.is_empty() {
            map.serialize_entry(
                "block_types",
                &Entries(b.block_types.iter().map(|(n, nb)| (n, NestedBlockJson(nb)))),
            )?;
        }
        if !b.description.is_empty() {
            map.serialize_entry("description", &b.description)?;
        }
        map.serialize_entry("description_kind", b.description_kind.as_str())?;
        if b.deprecated {
            map.serialize_entry("deprecated", &true)?;
        }
        map.end()
    }
}

struct NestedBlockJson<'a>(&'a NestedBlock);

impl Serialize for NestedBlockJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let nb = self.0;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("nesting_mode", nb.nesting.as_str())?;
        map.serialize_entry("block", &BlockJson(&nb.block))?;
        if nb.min_items > 0 {
            map.serialize_entry("min_items", &nb.min_items)?;
        }
        if nb.max_items > 0 {
            map.serialize_entry("max_items", &nb.max_items)?;
        }
        map.end()
    }
}

struct AttributeJson<'a>(&'a Attribute);

impl Serialize for AttributeJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let a = self.0;
        let mut map = s.serialize_map(None)?;
        // A nested attribute shows its nested type instead of its type.
        match &a.nested_type {
            None => map.serialize_entry("type", &a.ty)?,
            Some(nested) => map.serialize_entry("nested_type", &NestedTypeJson(nested))?,
        }
        if !a.description.is_empty() {
            map.serialize_entry("description", &a.description)?;
        }
        map.serialize_entry("description_kind", a.description_kind.as_str())?;
        for (key, set) in [
            ("deprecated", a.deprecated),
            ("required", a.required),
            ("optional", a.optional),
            ("computed", a.computed),
            ("sensitive", a.sensitive),
            ("write_only", a.write_only),
        ] {
            if set {
                map.serialize_entry(key, &true)?;
            }
        }
        map.end()
    }
}

struct NestedTypeJson<'a>(&'a NestedType);

impl Serialize for NestedTypeJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = self.0;
        let mut map = s.serialize_map(None)?;
        if !n.attributes.is_empty() {
            map.serialize_entry(
                "attributes",
                &Entries(n.attributes.iter().map(|(k, a)| (k, AttributeJson(a)))),
            )?;
        }
        map.serialize_entry("nesting_mode", n.nesting.as_str())?;
        map.end()
    }
}

struct FunctionJson<'a>(&'a Function);

impl Serialize for FunctionJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = self.0;
        let mut map = s.serialize_map(None)?;
        for (key, text) in [
            ("description", &f.description),
            ("summary", &f.summary),
            ("deprecation_message", &f.deprecation_message),
        ] {
            if !text.is_empty() {
                map.serialize_entry(key, text)?;
            }
        }
        map.serialize_entry("return_type", &f.return_type)?;
        if !f.parameters.is_empty() {
            let params: Vec<_> = f.parameters.iter().map(ParameterJson).collect();
            map.serialize_entry("parameters", &params)?;
        }
        if let Some(variadic) = &f.variadic_parameter {
            map.serialize_entry("variadic_parameter", &ParameterJson(variadic))?;
        }
        map.end()
    }
}

struct ParameterJson<'a>(&'a Parameter);

impl Serialize for ParameterJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = self.0;
        let mut map = s.serialize_map(None)?;
        if !p.name.is_empty() {
            map.serialize_entry("name", &p.name)?;
        }
        if !p.description.is_empty() {
            map.serialize_entry("description", &p.description)?;
        }
        if p.allow_null_value {
            map.serialize_entry("is_nullable", &true)?;
        }
        map.serialize_entry("type", &p.ty)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn attr(ty: Type) -> Attribute {
        Attribute {
            ty,
            nested_type: None,
            description: String::new(),
            description_kind: DescriptionKind::Plain,
            required: false,
            optional: true,
            computed: false,
            sensitive: false,
            deprecated: false,
            write_only: false,
        }
    }

    #[test]
    fn terraform_json_leaves_out_empty_and_false() {
        let mut inner = Block::default();
        inner.attributes.insert("k".into(), attr(Type::String));
        let mut block = Block::default();
        block.attributes.insert("name".into(), attr(Type::String));
        block.block_types.insert(
            "rule".into(),
            NestedBlock {
                nesting: Nesting::List,
                block: inner,
                min_items: 0,
                max_items: 1,
            },
        );
        let schema = ProviderSchema {
            provider: Schema {
                version: 0,
                block: Block::default(),
            },
            resources: [("x_thing".to_string(), Schema { version: 2, block })].into(),
            data_sources: SchemaMap::default(),
            ephemeral_resources: SchemaMap::default(),
            functions: BTreeMap::new(),
            provider_meta: None,
            capabilities: Capabilities::default(),
        };
        let got = serde_json::to_value(TerraformSchemas::new([(
            "registry.terraform.io/x/x".to_string(),
            &schema,
        )]))
        .unwrap();
        let want = json!({
            "format_version": "1.0",
            "provider_schemas": {
                "registry.terraform.io/x/x": {
                    "provider": {"version": 0, "block": {"description_kind": "plain"}},
                    "resource_schemas": {
                        "x_thing": {"version": 2, "block": {
                            "attributes": {"name": {"type": "string", "description_kind": "plain", "optional": true}},
                            "block_types": {"rule": {"nesting_mode": "list", "max_items": 1, "block": {
                                "attributes": {"k": {"type": "string", "description_kind": "plain", "optional": true}},
                                "description_kind": "plain"
                            }}},
                            "description_kind": "plain"
                        }}
                    }
                }
            }
        });
        assert_eq!(got, want);
    }

    #[test]
    fn functions_render_like_terraform() {
        let f = Function {
            parameters: vec![Parameter {
                name: "arn".into(),
                ty: Type::String,
                allow_null_value: false,
                allow_unknown_values: false,
                description: "An ARN".into(),
                description_kind: DescriptionKind::Plain,
            }],
            variadic_parameter: None,
            return_type: Type::Bool,
            summary: "s".into(),
            description: String::new(),
            description_kind: DescriptionKind::Plain,
            deprecation_message: String::new(),
        };
        assert_eq!(
            serde_json::to_value(FunctionJson(&f)).unwrap(),
            json!({"summary": "s", "return_type": "bool",
                   "parameters": [{"name": "arn", "description": "An ARN", "type": "string"}]})
        );
    }
    #[test]
    fn nested_attributes_imply_object_types_and_render_like_terraform() {
        let mut inner = attr(Type::String);
        inner.required = true;
        inner.optional = false;
        let nested = NestedType {
            nesting: ObjectNesting::List,
            attributes: [
                ("name".to_string(), inner),
                ("size".to_string(), attr(Type::Number)),
            ]
            .into(),
        };
        let ty = nested.implied_type();
        assert_eq!(
            ty.to_json(),
            json!(["list", ["object", {"name": "string", "size": "number"}, ["size"]]])
        );
        let a = Attribute {
            ty,
            nested_type: Some(nested),
            ..attr(Type::Dynamic)
        };
        assert_eq!(
            serde_json::to_value(AttributeJson(&a)).unwrap(),
            json!({
                "nested_type": {
                    "attributes": {
                        "name": {"type": "string", "description_kind": "plain", "required": true},
                        "size": {"type": "number", "description_kind": "plain", "optional": true}
                    },
                    "nesting_mode": "list"
                },
                "description_kind": "plain",
                "optional": true
            })
        );
        // The stored form keeps the nested type.
        let stored: Attribute = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
        assert_eq!(stored, a);
    }
    #[test]
    fn write_only_values_are_found_at_any_depth() {
        let mut password = attr(Type::String);
        password.write_only = true;
        let nested = NestedType {
            nesting: ObjectNesting::Map,
            attributes: [("secret".to_string(), password.clone())].into(),
        };
        let mut block = Block::default();
        block.attributes.insert("password".into(), password);
        block.attributes.insert(
            "users".into(),
            Attribute {
                ty: nested.implied_type(),
                nested_type: Some(nested),
                ..attr(Type::Dynamic)
            },
        );
        let users = |secret: Value| {
            let t = Type::object([("secret".to_string(), Type::String)].into());
            Value::map(
                t,
                [(
                    "ann".to_string(),
                    Value::object([("secret".to_string(), secret)].into()),
                )]
                .into(),
            )
        };
        let value = |password: Value, secret: Value| {
            Value::object(
                [
                    ("password".to_string(), password),
                    ("users".to_string(), users(secret)),
                ]
                .into(),
            )
        };
        let null = Value::null(Type::String);
        assert!(block
            .non_null_write_only(&value(null.clone(), null.clone()))
            .is_empty());
        let found = block.non_null_write_only(&value(
            Value::unknown(Type::String),
            Value::string("s3cret"),
        ));
        let shown: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["password", "users[\"ann\"].secret"]);
    }
}
