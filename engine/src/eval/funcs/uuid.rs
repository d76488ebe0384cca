//! `uuid` (random, as hashicorp/go-uuid makes them: sixteen random bytes
//! with no version bits) and `uuidv5` (name-based, SHA-1, RFC 4122).

use super::{Func, Param};
use crate::value::{Type, Value};
use sha1::{Digest, Sha1};
use std::io::Read;

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "uuid" => Func::new(vec![], Type::String, |_| {
            let mut b = [0u8; 16];
            std::fs::File::open("/dev/urandom")
                .and_then(|mut f| f.read_exact(&mut b))
                .map_err(|e| format!("failed to read random bytes: {e}"))?;
            Ok(Value::string(show(&b)))
        }),
        "uuidv5" => Func::new(
            vec![
                Param::new("namespace", Type::String),
                Param::new("name", Type::String),
            ],
            Type::String,
            |a| {
                let ns = a[0].as_str().unwrap_or_default();
                let namespace = match ns {
                    "dns" => parse("6ba7b810-9dad-11d1-80b4-00c04fd430c8"),
                    "url" => parse("6ba7b811-9dad-11d1-80b4-00c04fd430c8"),
                    "oid" => parse("6ba7b812-9dad-11d1-80b4-00c04fd430c8"),
                    "x500" => parse("6ba7b814-9dad-11d1-80b4-00c04fd430c8"),
                    other => parse(other),
                }
                .map_err(|e| format!("uuidv5() doesn't support namespace {ns} ({e})"))?;
                let mut h = Sha1::new();
                h.update(namespace);
                h.update(a[1].as_str().unwrap_or_default().as_bytes());
                let mut b = [0u8; 16];
                b.copy_from_slice(&h.finalize()[..16]);
                b[6] = (b[6] & 0x0f) | 0x50;
                b[8] = (b[8] & 0x3f) | 0x80;
                Ok(Value::string(show(&b)))
            },
        ),
        _ => return None,
    })
}

fn show(b: &[u8; 16]) -> String {
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// google/uuid's `Parse`: the canonical form, with braces, with a
/// `urn:uuid:` prefix, or 32 bare hex digits; its errors.
fn parse(s: &str) -> Result<[u8; 16], String> {
    let b = s.as_bytes();
    let bad = || "invalid UUID format".to_string();
    let hex = |i: usize| -> Result<u8, String> {
        let d = |c: u8| (c as char).to_digit(16);
        match (d(b[i]), d(b[i + 1])) {
            (Some(x), Some(y)) => Ok((x * 16 + y) as u8),
            _ => Err(bad()),
        }
    };
    let mut out = [0u8; 16];
    let start = match b.len() {
        36 => 0,
        45 => {
            if !s.is_char_boundary(9) || !s[..9].eq_ignore_ascii_case("urn:uuid:") {
                return Err(format!(
                    "invalid urn prefix: {}",
                    crate::value::go_quote(&String::from_utf8_lossy(&b[..9]))
                ));
            }
            9
        }
        38 => 1,
        32 => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = hex(i * 2)?;
            }
            return Ok(out);
        }
        n => return Err(format!("invalid UUID length: {n}")),
    };
    if [8, 13, 18, 23].iter().any(|&i| b[start + i] != b'-') {
        return Err(bad());
    }
    let offsets = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
    for (o, off) in out.iter_mut().zip(offsets) {
        *o = hex(start + off)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_parse_in_every_form() {
        let canonical = parse("6ba7b810-9dad-11d1-80b4-00c04fd430c8").unwrap();
        assert_eq!(show(&canonical), "6ba7b810-9dad-11d1-80b4-00c04fd430c8");
        for form in [
            "6ba7b8109dad11d180b400c04fd430c8",
            "{6ba7b810-9dad-11d1-80b4-00c04fd430c8}",
            "URN:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8",
        ] {
            assert_eq!(parse(form), Ok(canonical), "{form}");
        }
        assert_eq!(parse("nope"), Err("invalid UUID length: 4".into()));
        assert_eq!(
            parse("6ba7b810-9dad-11d1-80b4-00c04fd430cg"),
            Err("invalid UUID format".into())
        );
    }
}
