//! Numeric functions. `pow` and `log` go through a float64, as terraform's
//! do, and so give 53-bit results.

use super::{arg_error, Func, Param};
use crate::value::number::Number;
use crate::value::{Type, Value};
use num_bigint::BigInt;
use num_traits::Num;

fn n(name: &'static str) -> Param {
    Param::new(name, Type::Number)
}

fn num(v: &Value) -> Number {
    v.as_number().cloned().unwrap_or_else(Number::zero)
}

pub(super) fn lookup(name: &str) -> Option<Func> {
    let one = |imp| Func::new(vec![n("num")], Type::Number, imp);
    Some(match name {
        "abs" => one(|a| Ok(Value::number(num(&a[0]).abs()))),
        "ceil" => one(|a| Ok(Value::number(num(&a[0]).ceil()))),
        "floor" => one(|a| Ok(Value::number(num(&a[0]).floor()))),
        "signum" => one(|a| {
            let x = num(&a[0]);
            Ok(Value::int(if x.is_zero() {
                0
            } else if x.is_negative() {
                -1
            } else {
                1
            }))
        }),
        "max" | "min" => {
            let imp: super::Impl = if name == "max" {
                |a| extreme(a, std::cmp::Ordering::Greater)
            } else {
                |a| extreme(a, std::cmp::Ordering::Less)
            };
            Func::new(vec![], Type::Number, imp).variadic(n("numbers"))
        }
        "pow" => Func::new(vec![n("num"), n("power")], Type::Number, |a| {
            Ok(Value::number(Number::from_f64(
                num(&a[0]).to_f64().powf(num(&a[1]).to_f64()),
            )))
        }),
        "log" => Func::new(vec![n("num"), n("base")], Type::Number, |a| {
            Ok(Value::number(Number::from_f64(
                num(&a[0]).to_f64().ln() / num(&a[1]).to_f64().ln(),
            )))
        }),
        "parseint" => Func::new(
            vec![Param::new("number", Type::Dynamic), n("base")],
            Type::Number,
            |a| {
                let base = num(&a[1]).to_i64().unwrap_or(0);
                if !(2..=62).contains(&base) {
                    return Err(arg_error(
                        "base",
                        "base must be a whole number between 2 and 62 inclusive",
                    ));
                }
                let Some(t) = a[0].as_str() else {
                    return Err("first argument must be a string, not ".to_string()
                        + &a[0].ty().friendly_name());
                };
                let digits = t.strip_prefix('+').unwrap_or(t);
                BigInt::from_str_radix(digits, base as u32)
                    .map(|i| Value::number(Number::from_bigint(&i, 0)))
                    .map_err(|_| {
                        arg_error(
                            "number",
                            format!("cannot parse {t:?} as a base {base} integer"),
                        )
                    })
            },
        ),
        _ => return None,
    })
}

fn extreme(a: Vec<Value>, want: std::cmp::Ordering) -> super::FuncResult {
    let mut best: Option<Number> = None;
    for v in &a {
        let x = num(v);
        best = match best {
            Some(b) if b.compare(&x) != want.reverse() => Some(b),
            _ => Some(x),
        };
    }
    best.map(Value::number)
        .ok_or_else(|| String::from("must pass at least one number"))
}
