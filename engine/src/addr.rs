//! Typed resource addresses in terraform's own syntax.
//!
//! `aws_sqs_queue.jobs`, `aws_ssm_parameter.shard[1]`, `data.aws_iam_policy_document.p`,
//! `module.app["blue"].aws_s3_bucket.b`: parsed with [`str::parse`] and printed with
//! [`std::fmt::Display`], and the two round-trip. Nothing here knows about
//! configuration or live objects; an address is only a name.

use std::fmt;
use std::str::FromStr;

/// An instance key: the `[1]` of a `count` instance or the `["blue"]` of a
/// `for_each` instance.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InstanceKey {
    Int(u64),
    Str(String),
}

impl fmt::Display for InstanceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstanceKey::Int(i) => write!(f, "[{i}]"),
            InstanceKey::Str(s) => {
                // terraform quotes keys as HCL string literals.
                write!(f, "[{}]", serde_json::Value::String(s.clone()))
            }
        }
    }
}

/// Whether a block is a managed `resource` or a `data` source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    Managed,
    Data,
}

/// One step of a module path: `module.NAME[KEY]`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ModuleStep {
    pub name: String,
    pub key: Option<InstanceKey>,
}

impl fmt::Display for ModuleStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "module.{}", self.name)?;
        if let Some(k) = &self.key {
            write!(f, "{k}")?;
        }
        Ok(())
    }
}

/// terraform's text for a module instance path: `module.app["a"].module.q`
/// (empty for the root module).
pub fn module_text(path: &[ModuleStep]) -> String {
    path.iter()
        .map(ModuleStep::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

/// The call names of a module instance path (`module.app["a"]` is `app`).
pub fn call_names(path: &[ModuleStep]) -> Vec<String> {
    path.iter().map(|s| s.name.clone()).collect()
}

/// The address of one resource instance, such as `module.m.aws_sqs_queue.q[0]`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceInstanceAddr {
    pub module: Vec<ModuleStep>,
    pub mode: Mode,
    pub type_name: String,
    pub name: String,
    pub key: Option<InstanceKey>,
}

impl ResourceInstanceAddr {
    /// A managed resource in the root module with no instance key.
    pub fn managed(type_name: &str, name: &str) -> Self {
        ResourceInstanceAddr {
            module: Vec::new(),
            mode: Mode::Managed,
            type_name: type_name.to_owned(),
            name: name.to_owned(),
            key: None,
        }
    }

    /// The same address with an instance key.
    pub fn with_key(mut self, key: InstanceKey) -> Self {
        self.key = Some(key);
        self
    }
}

impl fmt::Display for ResourceInstanceAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for step in &self.module {
            write!(f, "{step}.")?;
        }
        if self.mode == Mode::Data {
            f.write_str("data.")?;
        }
        write!(f, "{}.{}", self.type_name, self.name)?;
        if let Some(k) = &self.key {
            write!(f, "{k}")?;
        }
        Ok(())
    }
}

/// Why a string is not a resource instance address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid resource address {input:?}: {reason}")]
pub struct AddrError {
    pub input: String,
    pub reason: &'static str,
}

impl FromStr for ResourceInstanceAddr {
    type Err = AddrError;

    fn from_str(input: &str) -> Result<Self, AddrError> {
        match input.parse::<Target>()? {
            Target::Resource(a) => Ok(a),
            Target::Module(_) => Err(AddrError {
                input: input.to_owned(),
                reason: "expected '.' after a module step",
            }),
        }
    }
}

/// What `-target` names: a resource or one of its instances, or a module
/// call (`module.app`, every instance of it) or one module instance
/// (`module.app["blue"]`), with everything in it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Target {
    Resource(ResourceInstanceAddr),
    Module(Vec<ModuleStep>),
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Resource(a) => a.fmt(f),
            Target::Module(path) => f.write_str(&module_text(path)),
        }
    }
}

impl FromStr for Target {
    type Err = AddrError;

    fn from_str(input: &str) -> Result<Self, AddrError> {
        let err = |reason| AddrError {
            input: input.to_owned(),
            reason,
        };
        let mut p = Parser { rest: input };
        let mut module = Vec::new();
        let mut mode = Mode::Managed;
        loop {
            let word = p.ident().ok_or_else(|| err("expected a name"))?;
            match word {
                "module" if mode == Mode::Managed => {
                    p.dot().ok_or_else(|| err("expected '.' after 'module'"))?;
                    let name = p.ident().ok_or_else(|| err("expected a module name"))?;
                    let key = p.key().map_err(err)?;
                    module.push(ModuleStep {
                        name: name.to_owned(),
                        key,
                    });
                    if p.rest.is_empty() {
                        return Ok(Target::Module(module));
                    }
                    p.dot()
                        .ok_or_else(|| err("expected '.' after a module step"))?;
                }
                "data" if mode == Mode::Managed => {
                    p.dot().ok_or_else(|| err("expected '.' after 'data'"))?;
                    mode = Mode::Data;
                }
                type_name => {
                    p.dot().ok_or_else(|| err("expected '.' after the type"))?;
                    let name = p.ident().ok_or_else(|| err("expected a resource name"))?;
                    let key = p.key().map_err(err)?;
                    if !p.rest.is_empty() {
                        return Err(err("unexpected text after the address"));
                    }
                    return Ok(Target::Resource(ResourceInstanceAddr {
                        module,
                        mode,
                        type_name: type_name.to_owned(),
                        name: name.to_owned(),
                        key,
                    }));
                }
            }
        }
    }
}

struct Parser<'a> {
    rest: &'a str,
}

impl<'a> Parser<'a> {
    fn ident(&mut self) -> Option<&'a str> {
        let end = self
            .rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(self.rest.len());
        let first = self.rest.chars().next()?;
        if end == 0 || !(first.is_ascii_alphabetic() || first == '_') {
            return None;
        }
        let (word, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(word)
    }

    fn dot(&mut self) -> Option<()> {
        self.rest = self.rest.strip_prefix('.')?;
        Some(())
    }

    fn key(&mut self) -> Result<Option<InstanceKey>, &'static str> {
        let Some(inner) = self.rest.strip_prefix('[') else {
            return Ok(None);
        };
        if inner.starts_with('"') {
            // A JSON string literal is an HCL string literal for the escapes
            // terraform prints in addresses.
            let mut stream = serde_json::Deserializer::from_str(inner).into_iter::<String>();
            let key = match stream.next() {
                Some(Ok(s)) => s,
                _ => return Err("unterminated string key"),
            };
            let after = &inner[stream.byte_offset()..];
            self.rest = after
                .strip_prefix(']')
                .ok_or("expected ']' after the key")?;
            Ok(Some(InstanceKey::Str(key)))
        } else {
            let end = inner.find(']').ok_or("expected ']' after the key")?;
            let n = inner[..end]
                .parse::<u64>()
                .map_err(|_| "an index must be a non-negative integer or a quoted string")?;
            self.rest = &inner[end + 1..];
            Ok(Some(InstanceKey::Int(n)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_terraform_syntax() {
        for s in [
            "aws_sqs_queue.jobs",
            "aws_ssm_parameter.shard[1]",
            "data.aws_iam_policy_document.p",
            "module.app[\"blue\"].aws_s3_bucket.b",
            "module.a.module.b[0].data.aws_caller_identity.me",
            "aws_s3_bucket.x[\"a \\\"q\\\" b\"]",
        ] {
            let a: ResourceInstanceAddr = s.parse().unwrap();
            assert_eq!(a.to_string(), s);
        }
    }

    #[test]
    fn parts_are_typed() {
        let a: ResourceInstanceAddr = "module.m[2].aws_ssm_parameter.shard[\"k\"]"
            .parse()
            .unwrap();
        assert_eq!(a.module[0].name, "m");
        assert_eq!(a.module[0].key, Some(InstanceKey::Int(2)));
        assert_eq!(a.type_name, "aws_ssm_parameter");
        assert_eq!(a.key, Some(InstanceKey::Str("k".into())));
        assert_eq!(
            ResourceInstanceAddr::managed("aws_sqs_queue", "q").with_key(InstanceKey::Int(0)),
            "aws_sqs_queue.q[0]".parse().unwrap()
        );
    }

    #[test]
    fn rejects_malformed() {
        for s in [
            "",
            "aws_sqs_queue",
            "aws_sqs_queue.",
            "aws_sqs_queue.q[",
            "aws_sqs_queue.q[-1]",
            "aws_sqs_queue.q[\"x]",
            "aws_sqs_queue.q.extra",
            "module.m",
            "1abc.q",
        ] {
            assert!(s.parse::<ResourceInstanceAddr>().is_err(), "{s} parsed");
        }
    }

    #[test]
    fn a_target_names_a_resource_or_a_module() {
        for s in [
            "module.each",
            "module.each[\"a\"]",
            "module.counted[1].module.param",
            "module.one.aws_sqs_queue.q",
            "aws_ssm_parameter.urls",
        ] {
            let t: Target = s.parse().unwrap();
            assert_eq!(t.to_string(), s);
        }
        assert_eq!(
            "module.a[0].module.b".parse::<Target>().unwrap(),
            Target::Module(vec![
                ModuleStep {
                    name: "a".into(),
                    key: Some(InstanceKey::Int(0)),
                },
                ModuleStep {
                    name: "b".into(),
                    key: None,
                },
            ])
        );
        for s in [
            "module",
            "module.",
            "module.m.",
            "module.m[x]",
            "module.m.data",
        ] {
            assert!(s.parse::<Target>().is_err(), "{s} parsed");
        }
    }
}
