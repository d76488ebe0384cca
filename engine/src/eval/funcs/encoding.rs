//! Encoding functions: JSON, base64 and URL encoding. JSON numbers keep
//! their full precision in both directions.

use super::{Func, Param};
use crate::value::number::Number;
use crate::value::{Kind, Type, Value};
use base64::Engine;
use std::collections::BTreeMap;

fn st(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// Standard base64 decoded as terraform's functions decode it (Go's
/// `StdEncoding`): padding required, line breaks skipped, the unused bits
/// of the last symbol ignored. An error is the offset Go reports.
pub(super) fn base64_decode(text: &str) -> Result<Vec<u8>, usize> {
    fn symbol(b: u8) -> Option<u32> {
        Some(u32::from(match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        }))
    }
    let src = text.as_bytes();
    let newline = |b: u8| b == b'\n' || b == b'\r';
    let mut out = Vec::new();
    let mut si = 0;
    while si < src.len() {
        let mut quantum = [0u32; 4];
        let mut len = 4;
        let mut j = 0;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                return Err(si - j);
            }
            let b = src[si];
            si += 1;
            if let Some(v) = symbol(b) {
                quantum[j] = v;
                j += 1;
                continue;
            }
            if newline(b) {
                continue;
            }
            if b != b'=' || j < 2 {
                return Err(si - 1);
            }
            if j == 2 {
                while si < src.len() && newline(src[si]) {
                    si += 1;
                }
                if si == src.len() {
                    return Err(src.len());
                }
                if src[si] != b'=' {
                    return Err(si - 1);
                }
                si += 1;
            }
            while si < src.len() && newline(src[si]) {
                si += 1;
            }
            if si < src.len() {
                return Err(si);
            }
            len = j;
            break;
        }
        let n = quantum[0] << 18 | quantum[1] << 12 | quantum[2] << 6 | quantum[3];
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..len - 1]);
    }
    Ok(out)
}

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "jsonencode" => Func::new(
            vec![Param::new("val", Type::Dynamic).nullable()],
            Type::String,
            |a| Ok(Value::string(json_text(&a[0]))),
        ),
        "jsondecode" => Func::new(vec![Param::new("str", Type::String)], Type::Dynamic, |a| {
            let mut p = JsonParser {
                s: st(&a[0]).as_bytes(),
                i: 0,
            };
            p.ws();
            if p.i >= p.s.len() {
                return Err(String::from("EOF"));
            }
            let v = p.value()?;
            p.ws();
            if p.i < p.s.len() {
                return Err(String::from("extraneous data after JSON object"));
            }
            Ok(v)
        }),
        "base64encode" => Func::new(vec![Param::new("str", Type::String)], Type::String, |a| {
            Ok(Value::string(
                base64::engine::general_purpose::STANDARD.encode(st(&a[0])),
            ))
        }),
        "base64decode" => Func::new(vec![Param::new("str", Type::String)], Type::String, |a| {
            let bytes = base64_decode(st(&a[0]))
                .map_err(|_| format!("failed to decode base64 data {:?}", st(&a[0])))?;
            String::from_utf8(bytes).map(Value::string).map_err(|_| {
                String::from("the result of decoding the provided string is not valid UTF-8")
            })
        }),
        "urlencode" => Func::new(vec![Param::new("str", Type::String)], Type::String, |a| {
            let mut out = String::new();
            for b in st(&a[0]).bytes() {
                match b {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                        out.push(b as char)
                    }
                    b' ' => out.push('+'),
                    _ => out.push_str(&format!("%{b:02X}")),
                }
            }
            Ok(Value::string(out))
        }),
        _ => return None,
    })
}

/// The JSON text of a known value, as terraform's `jsonencode` writes it
/// (Go's encoder: keys sorted, `<`, `>` and `&` escaped).
pub(crate) fn json_text(v: &Value) -> String {
    let mut out = String::new();
    write_json(v, &mut out);
    out
}

fn write_json(v: &Value, out: &mut String) {
    match &v.kind {
        Kind::Null(_) | Kind::Unknown(_) => out.push_str("null"),
        Kind::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Kind::Number(n) => out.push_str(&n.to_string_shortest()),
        Kind::String(s) => json_string(s, out),
        Kind::List(_, e) | Kind::Set(_, e) | Kind::Tuple(e) => {
            out.push('[');
            for (i, x) in e.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(x, out);
            }
            out.push(']');
        }
        Kind::Map(_, m) | Kind::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(k, out);
                out.push(':');
                write_json(x, out);
            }
            out.push('}');
        }
    }
}

fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

struct JsonParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl JsonParser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn eat(&mut self, lit: &str) -> bool {
        if self.s[self.i..].starts_with(lit.as_bytes()) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        self.ws();
        let Some(&c) = self.s.get(self.i) else {
            return Err("EOF".into());
        };
        match c {
            b'{' => {
                self.i += 1;
                let mut m = BTreeMap::new();
                self.ws();
                if self.eat("}") {
                    return Ok(Value::object(m));
                }
                loop {
                    self.ws();
                    let k = self.string()?;
                    self.ws();
                    if !self.eat(":") {
                        return Err("invalid character after object key".into());
                    }
                    let v = self.value()?;
                    m.insert(k, v);
                    self.ws();
                    if self.eat("}") {
                        return Ok(Value::object(m));
                    }
                    if !self.eat(",") {
                        return Err("invalid character after object key:value pair".into());
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut e = Vec::new();
                self.ws();
                if self.eat("]") {
                    return Ok(Value::tuple(e));
                }
                loop {
                    e.push(self.value()?);
                    self.ws();
                    if self.eat("]") {
                        return Ok(Value::tuple(e));
                    }
                    if !self.eat(",") {
                        return Err("invalid character after array element".into());
                    }
                }
            }
            b'"' => Ok(Value::string(self.string()?)),
            b't' if self.eat("true") => Ok(Value::bool(true)),
            b'f' if self.eat("false") => Ok(Value::bool(false)),
            b'n' if self.eat("null") => Ok(Value::null(Type::Dynamic)),
            b'-' | b'0'..=b'9' => {
                let start = self.i;
                while self.i < self.s.len()
                    && matches!(
                        self.s[self.i],
                        b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
                    )
                {
                    self.i += 1;
                }
                let t = std::str::from_utf8(&self.s[start..self.i]).unwrap_or_default();
                Number::parse(t)
                    .map(Value::number)
                    .ok_or_else(|| format!("invalid number {t}"))
            }
            c => Err(format!(
                "invalid character '{}' looking for beginning of value",
                c as char
            )),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        if self.i >= self.s.len() {
            return Err("EOF".into());
        }
        if !self.eat("\"") {
            return Err("invalid character looking for beginning of object key string".into());
        }
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.i) else {
                return Err("EOF".into());
            };
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let Some(&e) = self.s.get(self.i) else {
                        return Err("EOF".into());
                    };
                    self.i += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let hex = std::str::from_utf8(
                                self.s.get(self.i..self.i + 4).unwrap_or_default(),
                            )
                            .unwrap_or("");
                            let cp = u32::from_str_radix(hex, 16)
                                .map_err(|_| "invalid escape".to_string())?;
                            self.i += 4;
                            let ch = char::from_u32(cp).unwrap_or('\u{fffd}');
                            out.extend(ch.to_string().as_bytes());
                        }
                        e => out.push(e),
                    }
                }
                c => out.push(c),
            }
        }
        String::from_utf8(out).map_err(|_| "invalid UTF-8 in string".into())
    }
}
