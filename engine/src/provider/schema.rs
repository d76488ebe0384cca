//! A provider's schema as the engine uses it, and its rendering in
//! terraform's `providers schema -json` format.
//!
//! The model is filled from the plugin protocol by [`super::grpc`] (the only
//! place that sees wire types) and stored by [`super::cache`]; everything
//! else in the engine reads schemas through these types.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value as Json};

use super::types::Type;
use super::value::Value;

/// Everything a provider declares about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderSchema {
    /// The provider's own configuration block.
    pub provider: Schema,
    pub resources: BTreeMap<String, Schema>,
    pub data_sources: BTreeMap<String, Schema>,
    pub ephemeral_resources: BTreeMap<String, Schema>,
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attribute {
    #[serde(rename = "type")]
    pub ty: Type,
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
                Nesting::List | Nesting::Map if has_dynamic(&inner) => Type::Dynamic,
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
    pub fn value_with(&self, mut given: BTreeMap<String, Value>) -> Value {
        for name in self.attributes.keys() {
            given.entry(name.clone()).or_insert(Value::Null);
        }
        for (name, nested) in &self.block_types {
            given
                .entry(name.clone())
                .or_insert_with(|| match nested.nesting {
                    Nesting::Single => Value::Null,
                    Nesting::Group => nested.block.value_with(BTreeMap::new()),
                    Nesting::List => Value::List(vec![]),
                    Nesting::Set => Value::Set(vec![]),
                    Nesting::Map => Value::Map(BTreeMap::new()),
                });
        }
        Value::Object(given)
    }
}

fn has_dynamic(ty: &Type) -> bool {
    match ty {
        Type::Dynamic => true,
        Type::String | Type::Number | Type::Bool => false,
        Type::List(t) | Type::Set(t) | Type::Map(t) => has_dynamic(t),
        Type::Object { attributes, .. } => attributes.values().any(has_dynamic),
        Type::Tuple(ts) => ts.iter().any(has_dynamic),
    }
}

impl ProviderSchema {
    /// This provider's entry in terraform's `providers schema -json`
    /// output, as terraform 1.11 writes it: empty collections and false or
    /// empty fields are left out, as Go's `omitempty` leaves them out.
    pub fn to_terraform_json(&self) -> Json {
        let mut out = Map::new();
        out.insert("provider".into(), schema_json(&self.provider));
        for (key, schemas) in [
            ("resource_schemas", &self.resources),
            ("data_source_schemas", &self.data_sources),
            ("ephemeral_resource_schemas", &self.ephemeral_resources),
        ] {
            if !schemas.is_empty() {
                let map = schemas
                    .iter()
                    .map(|(name, s)| (name.clone(), schema_json(s)))
                    .collect();
                out.insert(key.into(), Json::Object(map));
            }
        }
        if !self.functions.is_empty() {
            let map = self
                .functions
                .iter()
                .map(|(name, f)| (name.clone(), function_json(f)))
                .collect();
            out.insert("functions".into(), Json::Object(map));
        }
        Json::Object(out)
    }
}

/// Terraform's whole `providers schema -json` document for the given
/// providers, keyed by their full source address.
pub fn terraform_json<'a>(
    providers: impl IntoIterator<Item = (String, &'a ProviderSchema)>,
) -> Json {
    let schemas: Map<String, Json> = providers
        .into_iter()
        .map(|(address, schema)| (address, schema.to_terraform_json()))
        .collect();
    let mut out = Map::new();
    out.insert("format_version".into(), json!("1.0"));
    if !schemas.is_empty() {
        out.insert("provider_schemas".into(), Json::Object(schemas));
    }
    Json::Object(out)
}

fn schema_json(schema: &Schema) -> Json {
    json!({ "version": schema.version, "block": block_json(&schema.block) })
}

fn block_json(block: &Block) -> Json {
    let mut out = Map::new();
    if !block.attributes.is_empty() {
        let attrs = block
            .attributes
            .iter()
            .map(|(name, a)| (name.clone(), attribute_json(a)))
            .collect();
        out.insert("attributes".into(), Json::Object(attrs));
    }
    if !block.block_types.is_empty() {
        let types = block
            .block_types
            .iter()
            .map(|(name, nb)| (name.clone(), nested_block_json(nb)))
            .collect();
        out.insert("block_types".into(), Json::Object(types));
    }
    put_str(&mut out, "description", &block.description);
    out.insert(
        "description_kind".into(),
        block.description_kind.as_str().into(),
    );
    put_true(&mut out, "deprecated", block.deprecated);
    Json::Object(out)
}

fn nested_block_json(nested: &NestedBlock) -> Json {
    let mut out = Map::new();
    out.insert("nesting_mode".into(), nested.nesting.as_str().into());
    out.insert("block".into(), block_json(&nested.block));
    if nested.min_items > 0 {
        out.insert("min_items".into(), nested.min_items.into());
    }
    if nested.max_items > 0 {
        out.insert("max_items".into(), nested.max_items.into());
    }
    Json::Object(out)
}

fn attribute_json(attr: &Attribute) -> Json {
    let mut out = Map::new();
    out.insert("type".into(), attr.ty.to_json());
    put_str(&mut out, "description", &attr.description);
    out.insert(
        "description_kind".into(),
        attr.description_kind.as_str().into(),
    );
    put_true(&mut out, "deprecated", attr.deprecated);
    put_true(&mut out, "required", attr.required);
    put_true(&mut out, "optional", attr.optional);
    put_true(&mut out, "computed", attr.computed);
    put_true(&mut out, "sensitive", attr.sensitive);
    put_true(&mut out, "write_only", attr.write_only);
    Json::Object(out)
}

fn function_json(function: &Function) -> Json {
    let mut out = Map::new();
    put_str(&mut out, "description", &function.description);
    put_str(&mut out, "summary", &function.summary);
    put_str(
        &mut out,
        "deprecation_message",
        &function.deprecation_message,
    );
    out.insert("return_type".into(), function.return_type.to_json());
    if !function.parameters.is_empty() {
        let params = function.parameters.iter().map(parameter_json).collect();
        out.insert("parameters".into(), Json::Array(params));
    }
    if let Some(variadic) = &function.variadic_parameter {
        out.insert("variadic_parameter".into(), parameter_json(variadic));
    }
    Json::Object(out)
}

fn parameter_json(param: &Parameter) -> Json {
    let mut out = Map::new();
    put_str(&mut out, "name", &param.name);
    put_str(&mut out, "description", &param.description);
    put_true(&mut out, "is_nullable", param.allow_null_value);
    out.insert("type".into(), param.ty.to_json());
    Json::Object(out)
}

fn put_str(out: &mut Map<String, Json>, key: &str, value: &str) {
    if !value.is_empty() {
        out.insert(key.into(), value.into());
    }
}

fn put_true(out: &mut Map<String, Json>, key: &str, value: bool) {
    if value {
        out.insert(key.into(), true.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(ty: Type) -> Attribute {
        Attribute {
            ty,
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
            data_sources: BTreeMap::new(),
            ephemeral_resources: BTreeMap::new(),
            functions: BTreeMap::new(),
            provider_meta: None,
            capabilities: Capabilities::default(),
        };
        let got = terraform_json([("registry.terraform.io/x/x".to_string(), &schema)]);
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
            function_json(&f),
            json!({"summary": "s", "return_type": "bool",
                   "parameters": [{"name": "arn", "description": "An ARN", "type": "string"}]})
        );
    }
}
