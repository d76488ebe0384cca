//! Hash functions over the UTF-8 bytes of a string, hex or base64 encoded,
//! and `bcrypt` (a random salt each call, as Go's x/crypto makes them).

use super::{Func, Param};
use crate::value::{Type, Value};
use base64::Engine;
use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha256, Sha512};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn st(v: &Value) -> &[u8] {
    v.as_str().unwrap_or_default().as_bytes()
}

pub(super) fn lookup(name: &str) -> Option<Func> {
    let f = |imp| Func::new(vec![Param::new("str", Type::String)], Type::String, imp);
    Some(match name {
        "md5" => f(|a| Ok(Value::string(hex(&Md5::digest(st(&a[0])))))),
        "sha1" => f(|a| Ok(Value::string(hex(&Sha1::digest(st(&a[0])))))),
        "sha256" => f(|a| Ok(Value::string(hex(&Sha256::digest(st(&a[0])))))),
        "sha512" => f(|a| Ok(Value::string(hex(&Sha512::digest(st(&a[0])))))),
        "base64sha256" => f(|a| Ok(Value::string(b64(&Sha256::digest(st(&a[0])))))),
        "base64sha512" => f(|a| Ok(Value::string(b64(&Sha512::digest(st(&a[0])))))),
        "bcrypt" => Func::new(vec![Param::new("str", Type::String)], Type::String, bcrypt)
            .variadic(Param::new("cost", Type::Number)),
        _ => return None,
    })
}

fn bcrypt(a: Vec<Value>) -> super::FuncResult {
    let mut cost: i64 = 10;
    if let Some(c) = a.get(1) {
        cost = c
            .as_number()
            .and_then(crate::value::number::Number::to_i64)
            .ok_or("value must be a whole number, between -9223372036854775808 and 9223372036854775807")?;
    }
    if a.len() > 2 {
        return Err("bcrypt() takes no more than two arguments".to_string());
    }
    // terraform's message, spelling included.
    let failed = |why: String| format!("error occured generating password {why}");
    let password = st(&a[0]);
    if password.len() > 72 {
        return Err(failed("bcrypt: password length exceeds 72 bytes".into()));
    }
    if cost < 4 {
        cost = 10;
    }
    if cost > 31 {
        return Err(failed(format!(
            "crypto/bcrypt: cost {cost} is outside allowed range (4,31)"
        )));
    }
    let parts =
        bcrypt::hash_with_result(password, cost as u32).map_err(|e| failed(e.to_string()))?;
    Ok(Value::string(
        parts.format_for_version(bcrypt::Version::TwoA),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bcrypt_hashes_in_gos_format() {
        let h = bcrypt(vec![Value::string("x"), Value::int(4)]).unwrap();
        let h = h.as_str().unwrap();
        assert!(h.starts_with("$2a$04$") && h.len() == 60, "{h}");
        assert!(::bcrypt::verify("x", h).unwrap());
        // A hash stock terraform made: the two must agree on the scheme.
        let theirs = "$2a$10$CtIOBhLFLRB5z249i0ujfO6XptR/yMF5XOgNYB4R6qZQlJkH1Q572";
        assert!(::bcrypt::verify("x", theirs).unwrap());
    }
}
