//! String functions: case, trimming, splitting, searching, regular
//! expressions and `format`. Lengths and offsets count grapheme clusters,
//! as terraform does.

use super::{arg_error, Func, FuncResult, Param};
use crate::value::convert::convert;
use crate::value::number::Number;
use crate::value::{Kind, Type, Value};
use regex::Regex;
use std::collections::BTreeMap;
use unicode_segmentation::UnicodeSegmentation;

fn s(name: &'static str) -> Param {
    Param::new(name, Type::String)
}

fn st(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

fn num(v: &Value) -> Number {
    v.as_number().cloned().unwrap_or_else(Number::zero)
}

pub(super) fn lookup(name: &str) -> Option<Func> {
    let str1 = |imp| Func::new(vec![s("str")], Type::String, imp);
    Some(match name {
        "lower" => str1(|a| {
            Ok(Value::string(
                st(&a[0]).chars().map(go_lower).collect::<String>(),
            ))
        }),
        "upper" => str1(|a| {
            Ok(Value::string(
                st(&a[0]).chars().map(go_upper).collect::<String>(),
            ))
        }),
        "title" => str1(|a| Ok(Value::string(title(st(&a[0]))))),
        "trimspace" => str1(|a| Ok(Value::string(st(&a[0]).trim()))),
        "chomp" => str1(|a| {
            let mut t = st(&a[0]);
            while let Some(r) = t.strip_suffix("\r\n").or_else(|| t.strip_suffix('\n')) {
                t = r;
            }
            Ok(Value::string(t))
        }),
        "strrev" => str1(|a| {
            Ok(Value::string(
                st(&a[0]).graphemes(true).rev().collect::<String>(),
            ))
        }),
        "trim" => Func::new(vec![s("str"), s("cutset")], Type::String, |a| {
            let cut: Vec<char> = st(&a[1]).chars().collect();
            Ok(Value::string(st(&a[0]).trim_matches(|c| cut.contains(&c))))
        }),
        "trimprefix" => Func::new(vec![s("str"), s("prefix")], Type::String, |a| {
            Ok(Value::string(
                st(&a[0]).strip_prefix(st(&a[1])).unwrap_or(st(&a[0])),
            ))
        }),
        "trimsuffix" => Func::new(vec![s("str"), s("suffix")], Type::String, |a| {
            Ok(Value::string(
                st(&a[0]).strip_suffix(st(&a[1])).unwrap_or(st(&a[0])),
            ))
        }),
        "startswith" => Func::new(vec![s("str"), s("prefix")], Type::Bool, |a| {
            Ok(Value::bool(st(&a[0]).starts_with(st(&a[1]))))
        }),
        "endswith" => Func::new(vec![s("str"), s("suffix")], Type::Bool, |a| {
            Ok(Value::bool(st(&a[0]).ends_with(st(&a[1]))))
        }),
        "strcontains" => Func::new(vec![s("str"), s("substr")], Type::Bool, |a| {
            Ok(Value::bool(st(&a[0]).contains(st(&a[1]))))
        }),
        "indent" => Func::new(
            vec![Param::new("spaces", Type::Number), s("str")],
            Type::String,
            |a| {
                let n = num(&a[0]).to_i64().unwrap_or(0).max(0) as usize;
                let pad = " ".repeat(n);
                Ok(Value::string(st(&a[1]).replace('\n', &format!("\n{pad}"))))
            },
        ),
        "split" => Func::new(
            vec![s("separator"), s("str")],
            Type::list(Type::String),
            |a| {
                let (sep, t) = (st(&a[0]), st(&a[1]));
                let parts: Vec<Value> = if t.is_empty() {
                    vec![Value::string("")]
                } else if sep.is_empty() {
                    t.chars().map(|c| Value::string(c.to_string())).collect()
                } else {
                    t.split(sep).map(Value::string).collect()
                };
                Ok(Value::list(Type::String, parts))
            },
        ),
        "join" => Func::new(vec![s("separator")], Type::String, |a| {
            if a.len() < 2 {
                return Err(String::from("at least one list is required"));
            }
            let mut items = Vec::new();
            for l in &a[1..] {
                for e in l.elements().unwrap_or_default() {
                    if e.is_null() {
                        return Err(String::from(
                            "element 0 is null; cannot concatenate null values",
                        ));
                    }
                    items.push(st(e).to_string());
                }
            }
            Ok(Value::string(items.join(st(&a[0]))))
        })
        .variadic(Param::new("lists", Type::list(Type::String))),
        "replace" => Func::new(
            vec![s("str"), s("substr"), s("replace")],
            Type::String,
            |a| {
                let (t, sub, rep) = (st(&a[0]), st(&a[1]), st(&a[2]));
                if sub.len() > 1 && sub.starts_with('/') && sub.ends_with('/') {
                    let re = compile(&sub[1..sub.len() - 1])?;
                    return Ok(Value::string(re.replace_all(t, rep).into_owned()));
                }
                Ok(Value::string(t.replace(sub, rep)))
            },
        ),
        "substr" => Func::new(
            vec![
                s("str"),
                Param::new("offset", Type::Number),
                Param::new("length", Type::Number),
            ],
            Type::String,
            |a| {
                let g: Vec<&str> = st(&a[0]).graphemes(true).collect();
                let len = g.len() as i64;
                let mut off = num(&a[1]).to_i64().unwrap_or(0);
                let n = num(&a[2]).to_i64().unwrap_or(0);
                if off < 0 {
                    off += len;
                    if off < 0 {
                        return Err(String::from(
                            "offset cannot be larger than the length of the string",
                        ));
                    }
                }
                if off > len {
                    return Ok(Value::string(""));
                }
                let end = if n < 0 || off + n > len { len } else { off + n };
                Ok(Value::string(g[off as usize..end as usize].concat()))
            },
        ),
        "regex" => Func::new(vec![s("pattern"), s("string")], Type::Dynamic, |a| {
            let re = compile(st(&a[0]))?;
            let caps = re
                .captures(st(&a[1]))
                .ok_or_else(|| "pattern did not match any part of the given string".to_string())?;
            Ok(captures(&re, &caps))
        }),
        "regexall" => Func::new(vec![s("pattern"), s("string")], Type::Dynamic, |a| {
            let re = compile(st(&a[0]))?;
            let all: Vec<Value> = re
                .captures_iter(st(&a[1]))
                .map(|c| captures(&re, &c))
                .collect();
            let ety = all
                .first()
                .map(Value::ty)
                .unwrap_or_else(|| capture_type(&re));
            Ok(Value::list(ety, all))
        }),
        "format" => Func::new(vec![s("format")], Type::String, |a| {
            Ok(Value::string(format(st(&a[0]), &a[1..])?))
        })
        .variadic(Param::new("args", Type::Dynamic).nullable()),
        "formatlist" => Func::new(vec![s("format")], Type::list(Type::String), formatlist)
            .variadic(Param::new("args", Type::Dynamic).nullable()),
        _ => return None,
    })
}

/// Go's `strings.Title`, as terraform's `title` is: a letter after a
/// separator takes its title case. A separator is any ASCII character but a
/// letter, digit or underscore, and beyond ASCII only white space (so
/// `«élan»` keeps its `é`).
fn title(t: &str) -> String {
    let mut prev = ' ';
    t.chars()
        .map(|c| {
            let out = if is_separator(prev) { go_title(c) } else { c };
            prev = c;
            out
        })
        .collect()
}

fn is_separator(c: char) -> bool {
    if c.is_ascii() {
        return !(c.is_ascii_alphanumeric() || c == '_');
    }
    // A letter or digit never is white space.
    c.is_whitespace()
}

/// Go's `unicode.ToUpper`: Unicode's simple mapping, one character to one
/// (`ß` and `ﬁ` stay, where Rust's full mapping writes `SS` and `FI`).
fn go_upper(c: char) -> char {
    match c as u32 {
        // The Greek letters with iota subscript take the capital with
        // prosgegrammeni, where the full mapping writes two letters.
        0x1F80..=0x1F87 | 0x1F90..=0x1F97 | 0x1FA0..=0x1FA7 => {
            char::from_u32(c as u32 + 8).unwrap_or(c)
        }
        0x1FB3 => '\u{1FBC}',
        0x1FC3 => '\u{1FCC}',
        0x1FF3 => '\u{1FFC}',
        _ => {
            let mut u = c.to_uppercase();
            match (u.next(), u.next()) {
                (Some(one), None) => one,
                _ => c,
            }
        }
    }
}

/// Go's `unicode.ToLower`: the simple mapping (`İ` to `i`, with no
/// combining dot).
fn go_lower(c: char) -> char {
    if c == '\u{130}' {
        return 'i';
    }
    let mut l = c.to_lowercase();
    match (l.next(), l.next()) {
        (Some(one), None) => one,
        _ => c,
    }
}

/// Go's `unicode.ToTitle`: the upper case but for the four digraphs,
/// whose title case is their own letter (`ǆ` to `ǅ`).
fn go_title(c: char) -> char {
    match c {
        '\u{1C4}'..='\u{1C6}' => '\u{1C5}',
        '\u{1C7}'..='\u{1C9}' => '\u{1C8}',
        '\u{1CA}'..='\u{1CC}' => '\u{1CB}',
        '\u{1F1}'..='\u{1F3}' => '\u{1F2}',
        _ => go_upper(c),
    }
}

fn compile(pattern: &str) -> Result<Regex, String> {
    Regex::new(pattern).map_err(|e| format!("invalid regular expression pattern: {e}"))
}

fn capture_type(re: &Regex) -> Type {
    let names: Vec<_> = re.capture_names().skip(1).collect();
    if names.is_empty() {
        Type::String
    } else if names.iter().all(Option::is_some) {
        Type::object(
            names
                .into_iter()
                .flatten()
                .map(|n| (n.to_string(), Type::String))
                .collect(),
        )
    } else {
        Type::Tuple(vec![Type::String; names.len()])
    }
}

fn captures(re: &Regex, caps: &regex::Captures) -> Value {
    let names: Vec<_> = re.capture_names().skip(1).collect();
    let get = |i: usize| {
        caps.get(i)
            .map(|m| Value::string(m.as_str()))
            .unwrap_or_else(|| Value::null(Type::String))
    };
    if names.is_empty() {
        return Value::string(caps.get(0).map(|m| m.as_str()).unwrap_or_default());
    }
    if names.iter().all(Option::is_some) {
        let m: BTreeMap<String, Value> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.unwrap_or_default().to_string(), get(i + 1)))
            .collect();
        return Value::object(m);
    }
    Value::tuple((1..=names.len()).map(get).collect())
}

fn formatlist(a: Vec<Value>) -> FuncResult {
    let fmt = st(&a[0]).to_string();
    let args = &a[1..];
    let mut n: Option<usize> = None;
    for (i, v) in args.iter().enumerate() {
        if let Kind::List(_, e) | Kind::Tuple(e) | Kind::Set(_, e) = &v.kind {
            match n {
                Some(m) if m != e.len() => {
                    return Err(arg_error(
                        "args",
                        format!("argument {} has length {}, which is inconsistent with argument 1 of length {m}", i + 1, e.len()),
                    ))
                }
                _ => n = Some(e.len()),
            }
        }
    }
    let n = n.unwrap_or(1);
    let mut out = Vec::with_capacity(n);
    for row in 0..n {
        let row_args: Vec<Value> = args
            .iter()
            .map(|v| match &v.kind {
                Kind::List(_, e) | Kind::Tuple(e) | Kind::Set(_, e) => e[row].clone(),
                _ => v.clone(),
            })
            .collect();
        out.push(Value::string(
            format(&fmt, &row_args).map_err(|e| format!("error on format iteration {row}: {e}"))?,
        ));
    }
    Ok(Value::list(Type::String, out))
}

/// terraform's `format`: Go-style verbs over cty values.
fn format(fmt: &str, args: &[Value]) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    let total = fmt.chars().count();
    let mut next = 0usize;
    while let Some(c) = chars.next() {
        let at = total - chars.clone().count() - 1;
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        let mut flags = String::new();
        while let Some(&f) = chars.peek() {
            if "+-# 0".contains(f) {
                flags.push(f);
                chars.next();
            } else {
                break;
            }
        }
        let mut width = String::new();
        while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
            width.push(d);
            chars.next();
        }
        let mut prec: Option<usize> = None;
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut p = String::new();
            while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                p.push(d);
                chars.next();
            }
            prec = Some(p.parse().unwrap_or(0));
        }
        let verb = chars
            .next()
            .ok_or_else(|| "unrecognized format character '%' at offset 0".to_string())?;
        let arg = args.get(next).ok_or_else(|| {
            format!(
                "not enough arguments for \"%{verb}\" at {at}: need index {} but have {} total",
                next + 1,
                args.len()
            )
        })?;
        next += 1;
        let body =
            verb_text(verb, arg, &flags, prec).map_err(|e| e.replace("{at}", &at.to_string()))?;
        let w: usize = width.parse().unwrap_or(0);
        let len = body.chars().count();
        if len < w {
            let pad = w - len;
            if flags.contains('-') {
                out.push_str(&body);
                out.push_str(&" ".repeat(pad));
            } else if flags.contains('0') && verb != 's' && verb != 'q' {
                let (sign, digits) = match body.strip_prefix('-') {
                    Some(d) => ("-", d.to_string()),
                    None => ("", body.clone()),
                };
                out.push_str(sign);
                out.push_str(&"0".repeat(pad));
                out.push_str(&digits);
            } else {
                out.push_str(&" ".repeat(pad));
                out.push_str(&body);
            }
        } else {
            out.push_str(&body);
        }
    }
    if next < args.len() {
        return Err(arg_error(
            "args",
            format!("too many arguments; only {next} used by format string"),
        ));
    }
    Ok(out)
}

fn verb_text(verb: char, arg: &Value, flags: &str, prec: Option<usize>) -> Result<String, String> {
    let want = |t: &Type| {
        convert(arg.clone(), t)
            .map_err(|e| format!("unsupported value for \"%{verb}\": {}", e.message))
    };
    if arg.is_null() && verb != 'v' {
        return Err(format!(
            "unsupported value for \"%{verb}\" at 0: null value cannot be formatted"
        ));
    }
    Ok(match verb {
        's' => {
            let v = want(&Type::String)?;
            let t = st(&v);
            match prec {
                Some(p) => t.chars().take(p).collect(),
                None => t.to_string(),
            }
        }
        'q' => crate::value::go_quote(st(&want(&Type::String)?)),
        'v' => match &arg.kind {
            Kind::Null(_) => "null".into(),
            Kind::String(t) => t.clone(),
            Kind::Number(n) => n.to_string_shortest(),
            Kind::Bool(b) => b.to_string(),
            _ => super::encoding::json_text(arg),
        },
        't' => want(&Type::Bool)?.as_bool().unwrap_or_default().to_string(),
        'd' => {
            let n = num(&want(&Type::Number)?);
            if !n.is_integer() {
                return Err(format!(
                    "unsupported value for \"%{verb}\" at {{at}}: an integer is required"
                ));
            }
            let t = n.trunc_bigint().to_string();
            if flags.contains('+') && !t.starts_with('-') {
                format!("+{t}")
            } else {
                t
            }
        }
        'x' | 'X' | 'o' | 'b' => {
            let v = want(&Type::Number)?;
            let i = num(&v).trunc_bigint();
            match verb {
                'x' => i.to_str_radix(16),
                'X' => i.to_str_radix(16).to_uppercase(),
                'o' => i.to_str_radix(8),
                _ => i.to_str_radix(2),
            }
        }
        'f' | 'e' | 'g' => {
            let f = num(&want(&Type::Number)?).to_f64();
            match verb {
                'f' => format!("{f:.*}", prec.unwrap_or(6)),
                'e' => go_exp(f, prec.unwrap_or(6)),
                _ => Number::from_f64(f).to_string_shortest(),
            }
        }
        c => return Err(format!("unsupported format verb {c:?}")),
    })
}

fn go_exp(f: f64, prec: usize) -> String {
    let t = format!("{f:.prec$e}");
    match t.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            format!("{m}e{sign}{digits:0>2}")
        }
        None => t,
    }
}
