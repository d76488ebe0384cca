//! Type conversion functions (`tostring`, `tolist`, ...) and the functions
//! that add, remove and test marks (`sensitive`, `nonsensitive`,
//! `issensitive`, `ephemeralasnull`).

use super::{arg_error, Func, Param};
use crate::eval::error::{EvalError, Result};
use crate::value::convert::convert;
use crate::value::{go_quote, Type, Value};

fn to(want: Type, v: Value) -> super::FuncResult {
    let got = v.ty();
    convert(v.clone(), &want).map_err(|e| {
        let msg = match (&got, &want) {
            (Type::String, Type::Bool) => format!(
                "cannot convert {} to bool; only the strings \"true\" or \"false\" are allowed",
                go_quote(v.as_str().unwrap_or_default())
            ),
            (Type::String, Type::Number) => format!(
                "cannot convert {} to number; given string must be a decimal representation of a number",
                go_quote(v.as_str().unwrap_or_default())
            ),
            _ if e.message.starts_with("cannot convert") => e.message,
            _ => format!("cannot convert {} to {}", got.friendly_name(), want.constraint_name()),
        };
        arg_error("v", msg)
    })
}

pub(super) fn lookup(name: &str) -> Option<Func> {
    let f = |imp| {
        Func::new(
            vec![Param::new("v", Type::Dynamic)
                .nullable()
                .unknowns()
                .marked()],
            Type::Dynamic,
            imp,
        )
    };
    Some(match name {
        "tostring" => f(|a| to(Type::String, a.into_iter().next().expect("one argument"))),
        "tonumber" => f(|a| to(Type::Number, a.into_iter().next().expect("one argument"))),
        "tobool" => f(|a| to(Type::Bool, a.into_iter().next().expect("one argument"))),
        "tolist" => f(|a| {
            to(
                Type::list(Type::Dynamic),
                a.into_iter().next().expect("one argument"),
            )
        }),
        "toset" => f(|a| {
            to(
                Type::set(Type::Dynamic),
                a.into_iter().next().expect("one argument"),
            )
        }),
        "tomap" => f(|a| {
            to(
                Type::map(Type::Dynamic),
                a.into_iter().next().expect("one argument"),
            )
        }),
        // Whether the value itself carries the mark; marks inside it do not
        // count, and an unknown value's mark is known.
        "issensitive" => Func::new(
            vec![Param::new("value", Type::Dynamic)
                .nullable()
                .unknowns()
                .marked()],
            Type::Bool,
            |a| Ok(Value::bool(a[0].sensitive)),
        ),
        // Nothing this evaluator computes is ephemeral, so every value
        // passes through unchanged.
        "ephemeralasnull" => Func::new(
            vec![Param::new("value", Type::Dynamic)
                .nullable()
                .unknowns()
                .marked()],
            Type::Dynamic,
            |a| Ok(a.into_iter().next().expect("one argument")),
        ),
        _ => return None,
    })
}

/// `sensitive(v)` and `nonsensitive(v)`, which act on the mark itself.
pub(super) fn marks(name: &str, args: Vec<Value>) -> Result<Value> {
    let [v]: [Value; 1] = args.try_into().map_err(|a: Vec<Value>| {
        if a.is_empty() {
            EvalError::new(
                "Not enough function arguments",
                format!("Function \"{name}\" expects 1 argument(s). Missing value for \"value\"."),
            )
        } else {
            EvalError::new(
                "Too many function arguments",
                format!("Function \"{name}\" expects only 1 argument(s)."),
            )
        }
    })?;
    Ok(if name == "sensitive" {
        v.with_sensitive(true)
    } else {
        Value {
            sensitive: false,
            ..v
        }
    })
}
