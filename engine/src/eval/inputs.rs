//! Input variable values: from their defaults, `TF_VAR_*`, `terraform.tfvars`,
//! `*.auto.tfvars`, `-var-file` and `-var`, in terraform's precedence, or
//! for a child module from its call's arguments; then given
//! optional-attribute defaults, converted to each variable's type and
//! checked against its `validation` rules.

use super::{EvalError, Scope};
use crate::config::typeexpr::Defaults;
use crate::config::{Expr, Module, ModuleCall, Variable};
use crate::diag::{suggest, Diagnostic, Diagnostics};
use crate::source::{Range, SourceFile};
use crate::value::convert::convert;
use crate::value::{Kind, Type, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One `-var` or `-var-file` argument, in command-line order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliInput {
    Var(String),
    VarFile(PathBuf),
}

/// Where a value came from, for messages.
#[derive(Debug, Clone)]
enum Origin {
    Default,
    Env,
    File(SourceFile, std::ops::Range<usize>),
    Cli,
    /// A module call's argument: the child's address and the argument's
    /// expression.
    Call(String, Range),
}

struct Raw {
    value: Value,
    origin: Origin,
}

/// The final value of every declared variable, or every problem found.
/// `env` is the process environment (passed in so tests need not set it).
pub fn collect(
    module: &Module,
    cli: &[CliInput],
    env: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, Value>, Diagnostics> {
    let mut diags = Diagnostics::default();
    let mut raw: BTreeMap<String, Raw> = BTreeMap::new();
    for (key, text) in env {
        let Some(name) = key.strip_prefix("TF_VAR_") else {
            continue;
        };
        // Undeclared TF_VAR_ values are ignored, as terraform does.
        if let Some(var) = module.variables.get(name) {
            match parse_text(var, text) {
                Ok(value) => {
                    raw.insert(
                        name.into(),
                        Raw {
                            value,
                            origin: Origin::Env,
                        },
                    );
                }
                Err(d) => diags.push(*d),
            }
        }
    }
    let mut files: Vec<PathBuf> = Vec::new();
    for auto in ["terraform.tfvars", "terraform.tfvars.json"] {
        let p = module.dir.join(auto);
        if p.is_file() {
            files.push(p);
        }
    }
    let mut autos: Vec<PathBuf> = std::fs::read_dir(&module.dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            n.ends_with(".auto.tfvars") || n.ends_with(".auto.tfvars.json")
        })
        .collect();
    autos.sort();
    files.extend(autos);
    for f in &files {
        read_file(module, f, false, &mut raw, &mut diags);
    }
    for input in cli {
        match input {
            CliInput::VarFile(f) => read_file(module, f, true, &mut raw, &mut diags),
            CliInput::Var(assign) => {
                let Some((name, text)) = assign.split_once('=') else {
                    diags.push(Diagnostic::error(
                        "Invalid -var option",
                        format!("The given -var option {assign:?} is not correctly specified. Must be a variable name and value separated by an equals sign, like -var=\"key=value\"."),
                    ));
                    continue;
                };
                let name = name.trim();
                match module.variables.get(name) {
                    Some(var) => match parse_text(var, text) {
                        Ok(value) => {
                            raw.insert(name.into(), Raw { value, origin: Origin::Cli });
                        }
                        Err(d) => diags.push(*d),
                    },
                    None => diags.push(Diagnostic::error(
                        "Value for undeclared variable",
                        format!("A variable named \"{name}\" was assigned on the command line, but the root module does not declare a variable of that name. To use this value, add a \"variable\" block to the configuration."),
                    )),
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    for (name, var) in &module.variables {
        let given = match raw.remove(name) {
            Some(r) => Some(r),
            None => match &var.default {
                Some(d) => match Scope::default().eval(&d.expr) {
                    Ok(value) => Some(Raw {
                        value,
                        origin: Origin::Default,
                    }),
                    Err(e) => {
                        diags.push(at_expr(
                            e,
                            &d.file,
                            d.range().start.byte..d.range().end.byte,
                        ));
                        continue;
                    }
                },
                None => None,
            },
        };
        let Some(given) = given else {
            diags.push(
                Diagnostic::error(
                    "No value for required variable",
                    format!("The root module input variable \"{name}\" is not set, and has no default value. Use a -var or -var-file command line argument to provide a value for this variable."),
                )
                .at(var.range.clone()),
            );
            continue;
        };
        match finalise(var, given, &mut diags) {
            Some(v) => {
                out.insert(name.clone(), v);
            }
            None => continue,
        }
    }
    if diags.has_errors() {
        Err(diags)
    } else {
        Ok(out)
    }
}

/// A child module's variables from one instance of its call: each
/// argument evaluated by `eval` in the caller's scope, checked against the
/// child's declarations (`child` is the module at `address`), given its
/// default when absent, converted to its type and validated.
pub fn from_call(
    call: &ModuleCall,
    child: &Module,
    address: &str,
    eval: impl Fn(&Expr) -> Result<Value, Diagnostics>,
) -> Result<BTreeMap<String, Value>, Diagnostics> {
    let mut diags = Diagnostics::default();
    for (name, expr) in &call.inputs {
        if !child.variables.contains_key(name) {
            diags.push(
                Diagnostic::error(
                    "Unsupported argument",
                    format!(
                        "An argument named \"{name}\" is not expected here.{}",
                        suggest(name, child.variables.keys())
                    ),
                )
                .at(expr.range()),
            );
        }
    }
    let mut out = BTreeMap::new();
    for (name, var) in &child.variables {
        let default = || match &var.default {
            Some(d) => match Scope::default().eval(&d.expr) {
                Ok(value) => Ok(Some(Raw {
                    value,
                    origin: Origin::Default,
                })),
                Err(e) => Err(Box::new(at_expr(
                    e,
                    &d.file,
                    d.range().start.byte..d.range().end.byte,
                ))),
            },
            None => Ok(None),
        };
        let given = match call.inputs.get(name) {
            Some(expr) => match eval(expr) {
                Ok(value) if value.is_null() && !var.nullable && var.default.is_some() => default(),
                Ok(value) => Ok(Some(Raw {
                    value,
                    origin: Origin::Call(address.to_string(), expr.range()),
                })),
                Err(d) => {
                    diags.extend(d);
                    continue;
                }
            },
            None => default(),
        };
        match given {
            Ok(Some(raw)) => {
                if let Some(v) = finalise(var, raw, &mut diags) {
                    out.insert(name.clone(), v);
                }
            }
            Ok(None) => diags.push(
                Diagnostic::error(
                    "Missing required argument",
                    format!("The argument \"{name}\" is required, but no definition was found."),
                )
                .at(call.range.clone()),
            ),
            Err(d) => diags.push(*d),
        }
    }
    if diags.has_errors() {
        Err(diags)
    } else {
        Ok(out)
    }
}

/// Every variable's default checked against its type, as `validate`
/// checks them.
pub fn check_defaults(module: &Module) -> Diagnostics {
    let mut diags = Diagnostics::default();
    for var in module.variables.values() {
        let Some(d) = &var.default else { continue };
        match Scope::default().eval(&d.expr) {
            Ok(value) => {
                let mut found = Diagnostics::default();
                finalise(
                    var,
                    Raw {
                        value,
                        origin: Origin::Default,
                    },
                    &mut found,
                );
                for d in found.0 {
                    diags.push(d.in_context(Some(format!("variable \"{}\"", var.name))));
                }
            }
            Err(e) => diags.push(at_expr(
                e,
                &d.file,
                d.range().start.byte..d.range().end.byte,
            )),
        }
    }
    diags
}

/// Unknown values of every variable's type: what `validate` checks with.
pub fn unknowns(module: &Module) -> BTreeMap<String, Value> {
    module
        .variables
        .iter()
        .map(|(n, v)| {
            let ty = v.constraint.ty.without_optional();
            (n.clone(), Value::unknown(ty).with_sensitive(v.sensitive))
        })
        .collect()
}

fn finalise(var: &Variable, given: Raw, diags: &mut Diagnostics) -> Option<Value> {
    let name = &var.name;
    if given.value.is_null() && !var.nullable {
        if let Origin::Call(address, range) = &given.origin {
            diags.push(
                Diagnostic::error(
                    "Invalid value for input variable",
                    format!("The given value is not suitable for {address}.var.{name} declared at {}: required variable may not be set to null.", var.range),
                )
                .at(range.clone()),
            );
            return None;
        }
        diags.push(
            Diagnostic::error(
                "Required variable not set",
                format!("Unsuitable value for var.{name} set from outside of the configuration: required variable may not be set to null."),
            )
            .at(var.range.clone()),
        );
        return None;
    }
    let with_defaults = apply_defaults(given.value, &var.constraint.defaults, &var.constraint.ty);
    let value = match convert(with_defaults, &var.constraint.ty) {
        Ok(v) => v,
        Err(e) => {
            let mut msg = e.message.clone();
            if !e.path.is_empty() {
                msg = format!("{}: {msg}", e.path.trim_start_matches('.'));
            }
            let d = match &given.origin {
                Origin::Default => Diagnostic::error(
                    "Invalid default value for variable",
                    format!("This default value is not compatible with the variable's type constraint: {msg}."),
                )
                .at(var.default.as_ref().map_or(var.range.clone(), |d| d.range())),
                Origin::File(f, span) => Diagnostic::error(
                    "Invalid value for input variable",
                    format!("The given value is not suitable for var.{name} declared at {}: {msg}.", var.range),
                )
                .at(f.range(span.clone())),
                // A sensitive variable's error points at its declaration,
                // not at the value, so the value is not shown.
                Origin::Call(address, range) if var.sensitive => Diagnostic::error(
                    "Invalid value for input variable",
                    format!("The given value is not suitable for {address}.var.{name}, which is sensitive: {msg}. Invalid value defined at {range}."),
                )
                .at(var.range.clone()),
                Origin::Call(address, range) => Diagnostic::error(
                    "Invalid value for input variable",
                    format!("The given value is not suitable for {address}.var.{name} declared at {}: {msg}.", var.range),
                )
                .at(range.clone()),
                Origin::Env | Origin::Cli => Diagnostic::error(
                    "Invalid value for input variable",
                    format!("Unsuitable value for var.{name} set from outside of the configuration: {msg}."),
                ),
            };
            diags.push(d);
            return None;
        }
    };
    let sensitive = var.sensitive || value.sensitive;
    let value = value.with_sensitive(sensitive);
    let scope = Scope::default().with(
        "var",
        Value::object(BTreeMap::from([(name.clone(), value.clone())])),
    );
    for rule in &var.validations {
        match scope.eval(&rule.condition.expr) {
            Ok(v) if v.as_bool() == Some(false) => {
                let message = scope
                    .eval(&rule.error_message.expr)
                    .ok()
                    .and_then(|m| m.as_str().map(str::to_string))
                    .unwrap_or_default();
                diags.push(
                    Diagnostic::error(
                        "Invalid value for variable",
                        format!(
                            "{message}\n\nThis was checked by the validation rule at {}.",
                            rule.condition.range()
                        ),
                    )
                    .at(match &given.origin {
                        Origin::Call(_, argument) => argument.clone(),
                        _ => var.range.clone(),
                    }),
                );
            }
            Ok(_) => {}
            Err(e) => diags.push(at_expr(
                e,
                &rule.condition.file,
                rule.condition.range().start.byte..rule.condition.range().end.byte,
            )),
        }
    }
    Some(value)
}

/// Fills in `optional(T, default)` attributes the value leaves out or null,
/// through nested objects and collections, before conversion.
pub fn apply_defaults(v: Value, defaults: &Defaults, ty: &Type) -> Value {
    if defaults.is_empty() || v.is_null() || !v.is_known() {
        return v;
    }
    let sensitive = v.sensitive;
    let out = match (v.kind, ty) {
        (Kind::Object(mut attrs), Type::Object { attributes, .. }) => {
            for (name, expr) in &defaults.attrs {
                if attrs.get(name).is_none_or(Value::is_null) {
                    if let Ok(d) = Scope::default().eval(&expr.expr) {
                        let d = attributes
                            .get(name)
                            .and_then(|t| convert(d.clone(), t).ok())
                            .unwrap_or(d);
                        attrs.insert(name.clone(), d);
                    }
                }
            }
            for (name, child) in &defaults.children {
                if let (Some(val), Some(t)) = (attrs.remove(name), attributes.get(name)) {
                    attrs.insert(name.clone(), apply_defaults(val, child, t));
                }
            }
            Value::object(attrs)
        }
        (kind, Type::List(el) | Type::Set(el) | Type::Map(el)) => {
            let Some(child) = defaults.children.get("") else {
                return Value { kind, sensitive };
            };
            match kind {
                Kind::Tuple(items) => Value::tuple(
                    items
                        .into_iter()
                        .map(|i| apply_defaults(i, child, el))
                        .collect(),
                ),
                Kind::List(t, items) => Value::list(
                    t,
                    items
                        .into_iter()
                        .map(|i| apply_defaults(i, child, el))
                        .collect(),
                ),
                Kind::Set(t, items) => Value::set(
                    t,
                    items
                        .into_iter()
                        .map(|i| apply_defaults(i, child, el))
                        .collect(),
                ),
                Kind::Object(attrs) => Value::object(
                    attrs
                        .into_iter()
                        .map(|(k, i)| (k, apply_defaults(i, child, el)))
                        .collect(),
                ),
                Kind::Map(t, items) => Value::map(
                    t,
                    items
                        .into_iter()
                        .map(|(k, i)| (k, apply_defaults(i, child, el)))
                        .collect(),
                ),
                other => Value::from(other),
            }
        }
        (kind, _) => Value::from(kind),
    };
    out.with_sensitive(sensitive)
}

/// A `-var` or `TF_VAR_` string: taken literally for a primitive or
/// unconstrained variable, parsed as an expression otherwise.
fn parse_text(var: &Variable, text: &str) -> Result<Value, Box<Diagnostic>> {
    let ty = &var.constraint.ty;
    if ty.is_primitive() || *ty == Type::Dynamic {
        return Ok(Value::string(text));
    }
    let file = SourceFile::new(format!("<value for var.{}>", var.name), text.to_string());
    let expr = hcl_edit::parser::parse_expr(text).map_err(|e| {
        Box::new(
            Diagnostic::error(
                "Invalid expression",
                format!("{}.", e.message().trim_end_matches('.')),
            )
            .at(file.range(0..text.len())),
        )
    })?;
    Scope::default()
        .eval(&expr)
        .map_err(|e| Box::new(at_expr(e, &file, 0..text.len())))
}

fn read_file(
    module: &Module,
    path: &Path,
    explicit: bool,
    raw: &mut BTreeMap<String, Raw>,
    diags: &mut Diagnostics,
) {
    let display = path
        .strip_prefix(&module.dir)
        .unwrap_or(path)
        .to_string_lossy()
        .to_string();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            diags.push(Diagnostic::error(
                "Failed to read variables file",
                format!("Given variables file {display} does not exist: {e}."),
            ));
            return;
        }
    };
    let file = SourceFile::new(display.clone(), text);
    let mut values: Vec<(String, Value, std::ops::Range<usize>)> = Vec::new();
    if display.ends_with(".json") {
        match super::funcs::call("jsondecode", vec![Value::string(file.text())]) {
            Ok(v) => match v.kind {
                Kind::Object(attrs) => {
                    for (k, v) in attrs {
                        values.push((k, v, 0..0));
                    }
                }
                _ => diags.push(Diagnostic::error(
                    "Invalid variables file",
                    format!("The root value in {display} must be an object."),
                )),
            },
            Err(e) => diags.push(Diagnostic::error(
                "Invalid variables file",
                format!("{display}: {}", e.detail),
            )),
        }
    } else {
        let body = match hcl_edit::parser::parse_body(file.text()) {
            Ok(b) => b,
            Err(e) => {
                diags.push(Diagnostic::error(
                    "Invalid variables file",
                    format!("{display}:{}: {}", e.location().line(), e.message()),
                ));
                return;
            }
        };
        for b in body.blocks() {
            diags.push(
                Diagnostic::error("Unexpected \"block\" block", "Blocks are not allowed here.")
                    .at(file.range(crate::config::span_of(&b.ident))),
            );
        }
        for attr in body.attributes() {
            use hcl_edit::Span;
            let span = attr.value.span().unwrap_or(0..0);
            match Scope::default().eval(&attr.value) {
                Ok(v) => values.push((attr.key.as_str().to_string(), v, span)),
                Err(e) => diags.push(at_expr(e, &file, span)),
            }
        }
    }
    for (name, value, span) in values {
        if !module.variables.contains_key(&name) {
            let d = if explicit {
                Diagnostic::error(
                    "Value for undeclared variable",
                    format!("The root module does not declare a variable named \"{name}\" but a value was found in file \"{display}\". To use this value, add a \"variable\" block to the configuration."),
                )
            } else {
                Diagnostic::warning(
                    "Value for undeclared variable",
                    format!("The root module does not declare a variable named \"{name}\" but a value was found in file \"{display}\". If you meant to use this value, add a \"variable\" block to the configuration.\n\nTo silence these warnings, use TF_VAR_... environment variables to provide certain \"global\" settings to all configurations in your organization. To reduce the verbosity of these warnings, use the -compact-warnings option."),
                )
            };
            diags.push(if span.is_empty() {
                d
            } else {
                d.at(file.range(span))
            });
            continue;
        }
        raw.insert(
            name,
            Raw {
                value,
                origin: Origin::File(file.clone(), span),
            },
        );
    }
}

/// An evaluator error placed in a file: at the failing sub-expression when
/// the evaluator knows it, else at `fallback`.
pub fn at_expr(e: EvalError, file: &SourceFile, fallback: std::ops::Range<usize>) -> Diagnostic {
    let span = e.span.clone().unwrap_or(fallback);
    Diagnostic::error(e.summary, e.detail).at(file.range(span))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(files: &[(&str, &str)]) -> (tempfile::TempDir, Module) {
        let dir = tempfile::tempdir().unwrap();
        for (n, t) in files {
            std::fs::write(dir.path().join(n), t).unwrap();
        }
        let (m, d) = crate::config::load(dir.path());
        assert!(!d.has_errors(), "{d}");
        (dir, m)
    }

    fn show(v: &Value) -> String {
        super::super::format::console(v)
    }

    #[test]
    fn precedence_is_terraforms() {
        let (dir, m) = root(&[
            (
                "main.tf",
                "variable \"a\" { default = \"default\" }\nvariable \"b\" { default = \"default\" }\nvariable \"c\" { default = \"default\" }\nvariable \"d\" { default = \"default\" }\nvariable \"e\" { default = \"default\" }\n",
            ),
            ("terraform.tfvars", "b = \"tfvars\"\nc = \"tfvars\"\nd = \"tfvars\"\n"),
            ("x.auto.tfvars", "c = \"auto\"\nd = \"auto\"\n"),
            ("extra.tfvars", "d = \"file\"\n"),
        ]);
        let env = BTreeMap::from([
            ("TF_VAR_a".to_string(), "env".to_string()),
            ("TF_VAR_b".to_string(), "env".to_string()),
        ]);
        let cli = [
            CliInput::VarFile(dir.path().join("extra.tfvars")),
            CliInput::Var("e=cli".into()),
        ];
        let v = collect(&m, &cli, &env).unwrap();
        let got: Vec<String> = v.values().map(show).collect();
        assert_eq!(
            got,
            ["\"env\"", "\"tfvars\"", "\"auto\"", "\"file\"", "\"cli\""]
        );
    }

    #[test]
    fn types_defaults_and_validation() {
        let (_dir, m) = root(&[(
            "main.tf",
            r#"
variable "cfg" {
  type = object({ name = string, size = optional(number, 3) })
}
variable "n" {
  type = number
  validation {
    condition     = var.n > 0
    error_message = "n must be positive."
  }
}
"#,
        )]);
        let cli = [
            CliInput::Var("cfg={name=\"x\"}".into()),
            CliInput::Var("n=5".into()),
        ];
        let v = collect(&m, &cli, &BTreeMap::new()).unwrap();
        assert_eq!(show(&v["cfg"]), "{\n  \"name\" = \"x\"\n  \"size\" = 3\n}");
        assert_eq!(show(&v["n"]), "5");
        let bad = [
            CliInput::Var("cfg={name=\"x\"}".into()),
            CliInput::Var("n=-1".into()),
        ];
        let d = collect(&m, &bad, &BTreeMap::new()).unwrap_err();
        assert!(d.to_string().contains("n must be positive."), "{d}");
        let d = collect(&m, &[CliInput::Var("n=abc".into())], &BTreeMap::new()).unwrap_err();
        let text = d.to_string();
        assert!(text.contains("No value for required variable"), "{text}");
        assert!(text.contains("a number is required"), "{text}");
    }

    #[test]
    fn a_call_sets_its_childs_variables() {
        let (_dir, child) = root(&[(
            "main.tf",
            r#"
variable "name" { type = string }
variable "size" {
  type     = number
  default  = 3
  nullable = false
}
variable "cfg" {
  type    = object({ team = optional(string, "platform") })
  default = {}
}
"#,
        )]);
        let (_caller_dir, caller) = root(&[(
            "main.tf",
            "module \"q\" {\n  source = \"./q\"\n  name   = 7\n  size   = null\n}\n",
        )]);
        let call = &caller.module_calls["q"];
        let eval = |e: &Expr| {
            Scope::default()
                .eval(&e.expr)
                .map_err(|d| at_expr(d, &e.file, 0..0).into())
        };
        let v = from_call(call, &child, "module.q", eval).unwrap();
        let got: Vec<String> = v.values().map(show).collect();
        // name converted to its type, size null on a non-nullable variable
        // takes its default, cfg absent takes its default with the optional
        // attribute's default filled in.
        assert_eq!(got, ["{\n  \"team\" = \"platform\"\n}", "\"7\"", "3"]);
    }
}
