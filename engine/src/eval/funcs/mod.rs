//! Terraform's built-in functions, grouped by family.
//!
//! Every function is declared with its parameters (name, type, whether null
//! and unknown arguments are accepted) and a plain implementation over known,
//! unmarked values. [`call`] does the rest the way cty's function machinery
//! does: it checks arity, refuses nulls, converts each argument to its
//! parameter type, returns an unknown of the declared result type when an
//! argument is unknown, and marks the result sensitive when any argument
//! carried the mark. `try` and `can` take expressions, so they live in
//! `expr`.

mod charset;
mod collection;
mod csv;
mod datetime;
pub use datetime::{rfc3339_now, rfc3339_utc};
mod encoding;
mod fs;
mod hash;
mod ipnet;
mod numeric;
mod rsa;
mod string;
mod template;
mod typeconv;
mod uuid;
mod yaml;

pub(crate) use fs::READS_FILES;

use super::error::{EvalError, Result};
use crate::value::convert::convert;
use crate::value::{Type, Value};

/// What an implementation returns on failure: the message terraform puts
/// after `Call to function "name" failed:`.
pub(crate) type FuncResult = std::result::Result<Value, String>;
pub(crate) type Impl = fn(Vec<Value>) -> FuncResult;

/// One parameter of a function.
pub(crate) struct Param {
    name: &'static str,
    ty: Type,
    allow_null: bool,
    allow_unknown: bool,
    /// Only an argument that is itself unknown makes the result unknown,
    /// as cty decides for every function: the implementation takes
    /// collections holding unknowns apart structurally.
    shallow_unknown: bool,
    allow_marked: bool,
}

impl Param {
    pub(crate) fn new(name: &'static str, ty: Type) -> Param {
        Param {
            name,
            ty,
            allow_null: false,
            allow_unknown: false,
            shallow_unknown: false,
            allow_marked: false,
        }
    }
    pub(crate) fn nullable(mut self) -> Param {
        self.allow_null = true;
        self
    }
    pub(crate) fn unknowns(mut self) -> Param {
        self.allow_unknown = true;
        self
    }
    /// A collection argument the implementation takes apart element by
    /// element, so unknown elements pass through (`lookup`, `concat`).
    pub(crate) fn structural(mut self) -> Param {
        self.shallow_unknown = true;
        self
    }
    /// The implementation sees the argument's sensitive marks and keeps
    /// them where they belong, instead of marking the whole result.
    pub(crate) fn marked(mut self) -> Param {
        self.allow_marked = true;
        self
    }
}

/// A function's signature and implementation.
pub(crate) struct Func {
    params: Vec<Param>,
    variadic: Option<Param>,
    ret: Type,
    imp: Impl,
}

impl Func {
    pub(crate) fn new(params: Vec<Param>, ret: Type, imp: Impl) -> Func {
        Func {
            params,
            variadic: None,
            ret,
            imp,
        }
    }
    pub(crate) fn variadic(mut self, p: Param) -> Func {
        self.variadic = Some(p);
        self
    }
}

fn lookup(name: &str) -> Option<Func> {
    string::lookup(name)
        .or_else(|| collection::lookup(name))
        .or_else(|| encoding::lookup(name))
        .or_else(|| charset::lookup(name))
        .or_else(|| numeric::lookup(name))
        .or_else(|| typeconv::lookup(name))
        .or_else(|| hash::lookup(name))
        .or_else(|| rsa::lookup(name))
        .or_else(|| ipnet::lookup(name))
        .or_else(|| fs::lookup(name))
        .or_else(|| datetime::lookup(name))
        .or_else(|| uuid::lookup(name))
        .or_else(|| template::lookup(name))
        .or_else(|| csv::lookup(name))
        .or_else(|| yaml::lookup(name))
}

/// When an expression is evaluated, which decides what the impure
/// functions answer, as terraform decides it per walk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Phase {
    /// `console`: every function known, and no `plantimestamp`.
    #[default]
    Console,
    /// `validate`: the impure functions and `plantimestamp` are unknown.
    Validate,
    /// A plan made at this RFC 3339 instant: the impure functions are
    /// unknown until apply, `plantimestamp` is the instant.
    Plan(String),
    /// The apply of a plan made at this instant: every function known.
    Apply(String),
}

impl Phase {
    /// Whether the impure functions must answer unknown (terraform's
    /// `PureOnly`), to be evaluated again at apply.
    fn pure_only(&self) -> bool {
        matches!(self, Phase::Validate | Phase::Plan(_))
    }
}

/// Functions whose answer differs from call to call; see [`Phase`].
const IMPURE: &[&str] = &["bcrypt", "timestamp", "uuid"];

/// Where a call sits in its source, for the errors of template files:
/// the name's bytes, the bytes from the name to the opening parenthesis,
/// and each argument's; and the phase it is evaluated in.
#[derive(Default)]
pub(crate) struct CallSite {
    pub(crate) name: Option<std::ops::Range<usize>>,
    pub(crate) call: Option<std::ops::Range<usize>>,
    pub(crate) args: Vec<Option<std::ops::Range<usize>>>,
    pub(crate) phase: Phase,
}

/// The names of every function this evaluator knows, for listings and tests.
pub const NAMES: &[&str] = &[
    "abs",
    "abspath",
    "alltrue",
    "anytrue",
    "base64decode",
    "base64encode",
    "base64sha256",
    "base64sha512",
    "basename",
    "bcrypt",
    "can",
    "ceil",
    "chomp",
    "chunklist",
    "cidrhost",
    "cidrnetmask",
    "cidrsubnet",
    "cidrsubnets",
    "coalesce",
    "coalescelist",
    "compact",
    "concat",
    "contains",
    "csvdecode",
    "dirname",
    "distinct",
    "element",
    "endswith",
    "ephemeralasnull",
    "file",
    "filebase64",
    "filebase64sha256",
    "filebase64sha512",
    "fileexists",
    "filemd5",
    "fileset",
    "filesha1",
    "filesha256",
    "filesha512",
    "flatten",
    "floor",
    "format",
    "formatdate",
    "formatlist",
    "indent",
    "index",
    "issensitive",
    "join",
    "jsondecode",
    "jsonencode",
    "keys",
    "length",
    "log",
    "lookup",
    "lower",
    "matchkeys",
    "max",
    "md5",
    "merge",
    "min",
    "nonsensitive",
    "one",
    "parseint",
    "pathexpand",
    "pow",
    "range",
    "regex",
    "regexall",
    "replace",
    "rsadecrypt",
    "reverse",
    "sensitive",
    "setintersection",
    "setproduct",
    "setsubtract",
    "setunion",
    "sha1",
    "sha256",
    "sha512",
    "signum",
    "slice",
    "sort",
    "split",
    "startswith",
    "strcontains",
    "strrev",
    "substr",
    "sum",
    "templatefile",
    "templatestring",
    "textdecodebase64",
    "textencodebase64",
    "timeadd",
    "timecmp",
    "timestamp",
    "title",
    "tobool",
    "tolist",
    "tomap",
    "tonumber",
    "toset",
    "tostring",
    "transpose",
    "trim",
    "trimprefix",
    "trimspace",
    "trimsuffix",
    "try",
    "upper",
    "urlencode",
    "uuid",
    "uuidv5",
    "values",
    "yamldecode",
    "yamlencode",
    "zipmap",
];

fn invalid_arg(param: &str, msg: &str) -> EvalError {
    EvalError::new(
        "Invalid function argument",
        format!("Invalid value for \"{param}\" parameter: {msg}."),
    )
}

/// Calls the built-in function `name`.
pub fn call(name: &str, args: Vec<Value>) -> Result<Value> {
    call_at(name, args, &CallSite::default())
}

/// Calls the built-in function `name`, blaming `site` in errors. A name in
/// the `core::` namespace is the built-in function of the same name.
pub(crate) fn call_at(name: &str, args: Vec<Value>, site: &CallSite) -> Result<Value> {
    let arg_at = |i: usize| site.args.get(i).cloned().flatten();
    let plain = name.strip_prefix("core::").unwrap_or(name);
    match plain {
        "sensitive" | "nonsensitive" => {
            return typeconv::marks(plain, args).map_err(|d| d.or_span(site.call.clone()))
        }
        _ => {}
    }
    // Only a plan and what follows it have a plan timestamp.
    let f = match (plain, &site.phase) {
        ("plantimestamp", Phase::Console) => None,
        ("plantimestamp", _) => Some(Func::new(vec![], Type::String, |_| {
            unreachable!("answered from the phase below")
        })),
        _ => lookup(plain),
    };
    let Some(f) = f else {
        if let Some((ns, _)) = name.split_once("::") {
            let detail = match name.split("::").collect::<Vec<_>>().as_slice() {
                ["provider", p, f] => format!("There is no function named \"{name}\". Ensure that provider name \"{p}\" is declared in this module's required_providers block, and that this provider offers a function named \"{f}\"."),
                _ => format!("The function namespace \"{ns}\" is not valid. Provider function calls must use the \"provider::\" namespace prefix."),
            };
            return Err(
                EvalError::new("Unknown provider function", detail).or_span(site.call.clone())
            );
        }
        return Err(EvalError::new(
            "Call to unknown function",
            format!("There is no function named \"{name}\"."),
        )
        .or_span(site.name.clone()));
    };
    let n = f.params.len();
    if args.len() < n {
        return Err(EvalError::new(
            "Not enough function arguments",
            format!(
                "Function \"{name}\" expects {n} argument(s). Missing value for \"{}\".",
                f.params[args.len()].name
            ),
        ));
    }
    if args.len() > n && f.variadic.is_none() {
        return Err(EvalError::new(
            "Too many function arguments",
            format!("Function \"{name}\" expects only {n} argument(s)."),
        ));
    }
    let mut sensitive = false;
    let mut unknown = false;
    let mut converted = Vec::with_capacity(args.len());
    for (i, arg) in args.into_iter().enumerate() {
        let p = f
            .params
            .get(i)
            .or(f.variadic.as_ref())
            .expect("arity checked above");
        if arg.is_null() && !p.allow_null {
            return Err(invalid_arg(p.name, "argument must not be null").or_span(arg_at(i)));
        }
        let arg = if p.allow_marked {
            arg
        } else {
            sensitive |= arg.has_sensitive();
            arg.unmark_deep()
        };
        let known = if p.shallow_unknown {
            arg.is_known()
        } else {
            arg.is_wholly_known()
        };
        if !known && !p.allow_unknown {
            unknown = true;
        }
        let arg =
            convert(arg, &p.ty).map_err(|e| invalid_arg(p.name, &e.message).or_span(arg_at(i)))?;
        converted.push(arg);
    }
    if unknown || (site.phase.pure_only() && IMPURE.contains(&plain)) {
        return Ok(Value::unknown(f.ret.clone()).with_sensitive(sensitive));
    }
    if plain == "plantimestamp" {
        return Ok(match &site.phase {
            Phase::Plan(at) | Phase::Apply(at) => Value::string(at.clone()),
            Phase::Console | Phase::Validate => Value::unknown(Type::String),
        });
    }
    match (f.imp)(converted) {
        Ok(v) => Ok(v.with_sensitive(sensitive)),
        Err(msg) if msg.starts_with(ARG_ERROR) => {
            let rest = &msg[ARG_ERROR.len()..];
            let (param, detail) = rest.split_once('\u{0}').unwrap_or(("", rest));
            let index = f.params.iter().position(|p| p.name == param);
            Err(invalid_arg(param, detail).or_span(index.and_then(arg_at)))
        }
        Err(msg) => Err(EvalError::new(
            "Error in function call",
            format!("Call to function \"{name}\" failed: {msg}."),
        )
        .or_span(site.call.clone())),
    }
}

/// Prefix of an implementation error that blames one argument, as cty's
/// `NewArgErrorf` does; built by [`arg_error`].
const ARG_ERROR: &str = "\u{0}arg:";

/// An error about the argument `param`, reported as an invalid argument.
pub(crate) fn arg_error(param: &str, msg: impl std::fmt::Display) -> String {
    format!("{ARG_ERROR}{param}\u{0}{msg}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_phase(phase: Phase, src: &str) -> Result<Value> {
        crate::eval::eval_str(&crate::eval::Scope::default().in_phase(phase), src)
    }

    #[test]
    fn a_plan_leaves_the_impure_functions_to_apply_and_knows_its_instant() {
        // As terraform: `plan` shows timestamp(), uuid() and bcrypt() as
        // known after apply, and plantimestamp() as the plan's instant.
        let at = "2026-12-04T11:57:21Z";
        for src in ["timestamp()", "uuid()", "bcrypt(\"x\")"] {
            let v = in_phase(Phase::Plan(at.into()), src).unwrap();
            assert!(!v.is_known(), "{src}");
            assert_eq!(v.ty(), Type::String);
            assert!(!in_phase(Phase::Validate, src).unwrap().is_known(), "{src}");
            assert!(
                in_phase(Phase::Apply(at.into()), src).unwrap().is_known(),
                "{src}"
            );
            assert!(in_phase(Phase::Console, src).unwrap().is_known(), "{src}");
        }
        // Arguments are still checked.
        let e = in_phase(Phase::Plan(at.into()), "uuid(1)").unwrap_err();
        assert_eq!(e.summary, "Too many function arguments");
        for phase in [Phase::Plan(at.into()), Phase::Apply(at.into())] {
            let v = in_phase(phase.clone(), "timeadd(plantimestamp(), \"1h\")").unwrap();
            assert_eq!(v.as_str(), Some("2026-12-04T12:57:21Z"));
            let e = in_phase(phase, "plantimestamp(1)").unwrap_err();
            assert_eq!(e.summary, "Too many function arguments");
        }
        assert!(!in_phase(Phase::Validate, "plantimestamp()")
            .unwrap()
            .is_known());
        // terraform console has no plantimestamp at all.
        let e = in_phase(Phase::Console, "plantimestamp()").unwrap_err();
        assert_eq!(e.detail, "There is no function named \"plantimestamp\".");
    }

    #[test]
    fn unknown_argument_gives_unknown_of_return_type() {
        let v = call("upper", vec![Value::unknown(Type::String)]).unwrap();
        assert!(!v.is_known());
        assert_eq!(v.ty(), Type::String);
    }

    #[test]
    fn sensitive_argument_marks_result() {
        let v = call("upper", vec![Value::string("a").with_sensitive(true)]).unwrap();
        assert!(v.sensitive);
        // A function that takes its argument apart keeps marks where they
        // are, as terraform does.
        let inner = Value::tuple(vec![Value::int(1).with_sensitive(true)]);
        assert!(!call("length", vec![inner.clone()]).unwrap().sensitive);
        assert!(
            call("length", vec![inner.with_sensitive(true)])
                .unwrap()
                .sensitive
        );
    }

    #[test]
    fn lookup_types_its_answer_as_terraform_does() {
        let one = |k: &str, v: Value| std::collections::BTreeMap::from([(k.to_string(), v)]);
        // An object's attribute comes back as it is, whatever the default.
        let object = Value::object(one("a", Value::int(1)));
        let got = call(
            "lookup",
            vec![object, Value::string("a"), Value::string("x")],
        )
        .unwrap();
        assert_eq!(got.as_number().and_then(|n| n.to_i64()), Some(1));
        // A map's default converts to the element type, or is refused.
        let map = Value::map(Type::Number, one("a", Value::int(1)));
        let got = call(
            "lookup",
            vec![map.clone(), Value::string("b"), Value::string("2")],
        )
        .unwrap();
        assert_eq!(got.as_number().and_then(|n| n.to_i64()), Some(2));
        let e = call("lookup", vec![map, Value::string("a"), Value::string("x")]).unwrap_err();
        assert!(
            format!("{e:?}")
                .contains("the default value must have the same type as the map elements"),
            "{e:?}"
        );
    }

    #[test]
    fn collections_holding_unknowns_are_taken_apart_as_cty_does() {
        let u = |t: Type| Value::unknown(t);
        let int = |v: &Value| v.as_number().and_then(|n| n.to_i64());
        let rule = Value::object(std::collections::BTreeMap::from([
            ("port".to_string(), Value::int(80)),
            ("source".to_string(), u(Type::String)),
        ]));
        let rules = Value::tuple(vec![rule.clone()]);
        // The count of a list holding unknowns is known, and so is an
        // element that is.
        assert_eq!(int(&call("length", vec![rules.clone()]).unwrap()), Some(1));
        let port = call("lookup", vec![rule.clone(), Value::string("port")]).unwrap();
        assert_eq!(int(&port), Some(80));
        let first = call("element", vec![rules.clone(), Value::int(0)]).unwrap();
        assert!(first.is_known() && !first.is_wholly_known());
        let both = call("concat", vec![rules.clone(), rules.clone()]).unwrap();
        assert_eq!(both.elements().map(|e| e.len()), Some(2));
        assert!(call("keys", vec![rule]).unwrap().is_wholly_known());
        // A tuple's length is its type's, known or not; a set's unknowns
        // may turn out equal, so its length waits.
        let pair = u(Type::Tuple(vec![Type::String, Type::Number]));
        assert_eq!(int(&call("length", vec![pair]).unwrap()), Some(2));
        let list = u(Type::list(Type::String));
        assert!(!call("length", vec![list]).unwrap().is_known());
        let set = Value::set(Type::String, vec![u(Type::String), Value::string("a")]);
        assert!(!call("length", vec![set]).unwrap().is_known());
        // Functions that read every element still wait for all of them.
        let parts = Value::tuple(vec![Value::string("a"), u(Type::String)]);
        let joined = call("join", vec![Value::string(","), parts]).unwrap();
        assert!(!joined.is_known());
    }

    #[test]
    fn null_argument_is_refused() {
        let e = call("upper", vec![Value::null(Type::Dynamic)]).unwrap_err();
        assert_eq!(
            e.detail,
            "Invalid value for \"str\" parameter: argument must not be null."
        );
    }

    #[test]
    fn every_listed_name_is_known() {
        for name in NAMES {
            assert!(
                lookup(name).is_some()
                    || matches!(*name, "try" | "can" | "sensitive" | "nonsensitive"),
                "{name}"
            );
        }
    }
}
