//! Hash functions over the UTF-8 bytes of a string, hex or base64 encoded.

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
        _ => return None,
    })
}
