//! `rsadecrypt`: RSA PKCS #1 v1.5 decryption with a PEM private key, as
//! terraform does it (Go's `ssh.ParseRawPrivateKey`, then
//! `rsa.DecryptPKCS1v15`), on aws-lc's RSA.
//!
//! Keys are read from PEM blocks of type `RSA PRIVATE KEY` (PKCS #1) and
//! `PRIVATE KEY` (PKCS #8); a PKCS #1 key is wrapped in a PKCS #8 document
//! for aws-lc. Left out: OpenSSH-format keys and keys under 2048 bits,
//! which aws-lc refuses and Go reads.

use super::encoding::base64_decode;
use super::{arg_error, Func, Param};
use crate::value::{go_quote, Type, Value};
use aws_lc_rs::rsa::{Pkcs1PrivateDecryptingKey, PrivateDecryptingKey};

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "rsadecrypt" => Func::new(
            vec![
                Param::new("ciphertext", Type::String),
                Param::new("privatekey", Type::String),
            ],
            Type::String,
            rsadecrypt,
        ),
        _ => return None,
    })
}

fn rsadecrypt(a: Vec<Value>) -> super::FuncResult {
    let text = a[0].as_str().unwrap_or_default();
    let ciphertext = base64_decode(text).map_err(|_| {
        arg_error(
            "ciphertext",
            format!(
                "failed to decode input {}: cipher text must be base64-encoded",
                go_quote(text)
            ),
        )
    })?;
    let key =
        private_key(a[1].as_str().unwrap_or_default()).map_err(|e| arg_error("privatekey", e))?;
    let key = Pkcs1PrivateDecryptingKey::new(key).map_err(|_| DECRYPT_ERROR)?;
    let mut out = vec![0; key.min_output_size()];
    let plain = key
        .decrypt(&ciphertext, &mut out)
        .map_err(|_| DECRYPT_ERROR)?;
    Ok(Value::string(String::from_utf8_lossy(plain).into_owned()))
}

/// Go's `rsa.DecryptPKCS1v15` says no more than this, by design.
const DECRYPT_ERROR: &str = "failed to decrypt: crypto/rsa: decryption error";

/// The RSA key in the first PEM block of `text`, or terraform's reason.
fn private_key(text: &str) -> Result<PrivateDecryptingKey, String> {
    let invalid = |why: &str| format!("invalid private key: {why}");
    let block = pem_decode(text).ok_or_else(|| invalid("ssh: no key found"))?;
    if block
        .headers
        .iter()
        .any(|(k, v)| k == "Proc-Type" && v.contains("ENCRYPTED"))
    {
        return Err(invalid("ssh: this private key is passphrase protected"));
    }
    let pkcs8 = match block.kind.as_str() {
        "RSA PRIVATE KEY" => pkcs8_of_pkcs1(&block.bytes),
        "PRIVATE KEY" => block.bytes,
        "EC PRIVATE KEY" | "DSA PRIVATE KEY" => {
            return Err("invalid private key type: not an RSA key".into())
        }
        other => {
            return Err(invalid(&format!(
                "ssh: unsupported key type {}",
                go_quote(other)
            )))
        }
    };
    PrivateDecryptingKey::from_pkcs8(&pkcs8).map_err(|e| invalid(&format!("{e}")))
}

/// One PEM block: its type, headers and decoded bytes.
struct Block {
    kind: String,
    headers: Vec<(String, String)>,
    bytes: Vec<u8>,
}

/// The first well-formed PEM block in `text`, by Go's `pem.Decode` rules: a
/// `-----BEGIN TYPE-----` line at the start or after a line break, optional
/// `Key: value` headers, standard base64, and `-----END TYPE-----` on a line
/// of its own. A malformed block is skipped for the next one.
fn pem_decode(text: &str) -> Option<Block> {
    let mut rest = text;
    loop {
        rest = if let Some(r) = rest.strip_prefix("-----BEGIN ") {
            r
        } else {
            &rest[rest.find("\n-----BEGIN ")? + "\n-----BEGIN ".len()..]
        };
        let (type_line, mut body) = line(rest);
        rest = body;
        let Some(kind) = type_line.strip_suffix("-----") else {
            continue;
        };
        let mut headers = Vec::new();
        loop {
            if body.is_empty() {
                return None;
            }
            let (l, next) = line(body);
            let Some((k, v)) = l.split_once(':') else {
                break;
            };
            headers.push((k.trim().to_string(), v.trim().to_string()));
            body = next;
        }
        let (end, trailer) = if headers.is_empty() && body.starts_with("-----END ") {
            (0, "-----END ".len())
        } else {
            match body.find("\n-----END ") {
                Some(i) => (i, i + "\n-----END ".len()),
                None => continue,
            }
        };
        let Some(after) = body[trailer..].strip_prefix(kind) else {
            continue;
        };
        let Some(after) = after.strip_prefix("-----") else {
            continue;
        };
        if !line(after).0.is_empty() {
            continue;
        }
        let data: String = body[..end]
            .chars()
            .filter(|c| *c != ' ' && *c != '\t')
            .collect();
        let Ok(bytes) = base64_decode(&data) else {
            continue;
        };
        return Some(Block {
            kind: kind.to_string(),
            headers,
            bytes,
        });
    }
}

/// The first line of `s` without its line break and trailing blanks, and the
/// rest after the break.
fn line(s: &str) -> (&str, &str) {
    let (l, rest) = s.split_once('\n').unwrap_or((s, ""));
    (l.trim_end_matches('\r').trim_end_matches([' ', '\t']), rest)
}

/// A PKCS #1 RSAPrivateKey wrapped in a PKCS #8 PrivateKeyInfo.
fn pkcs8_of_pkcs1(pkcs1: &[u8]) -> Vec<u8> {
    // version 0, then AlgorithmIdentifier { rsaEncryption, NULL }.
    const HEAD: &[u8] = &[
        0x02, 0x01, 0x00, 0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01,
        0x01, 0x05, 0x00,
    ];
    let mut octets = vec![0x04];
    octets.extend(der_len(pkcs1.len()));
    octets.extend(pkcs1);
    let mut out = vec![0x30];
    out.extend(der_len(HEAD.len() + octets.len()));
    out.extend(HEAD);
    out.extend(octets);
    out
}

/// A DER length: short form under 128, else the long form's bytes.
fn der_len(n: usize) -> Vec<u8> {
    if n < 0x80 {
        return vec![n as u8];
    }
    let bytes: Vec<u8> = n
        .to_be_bytes()
        .into_iter()
        .skip_while(|b| *b == 0)
        .collect();
    let mut out = vec![0x80 | bytes.len() as u8];
    out.extend(bytes);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_blocks_are_found_as_go_finds_them() {
        let b = pem_decode("junk\n-----BEGIN X-----\nAQID\n-----END X-----\n").unwrap();
        assert_eq!((b.kind.as_str(), b.bytes), ("X", vec![1, 2, 3]));
        let b = pem_decode("-----BEGIN X-----\nProc-Type: 4,ENCRYPTED\n\nAQID\n-----END X-----")
            .unwrap();
        assert_eq!(b.headers, vec![("Proc-Type".into(), "4,ENCRYPTED".into())]);
        // A block whose end names another type is skipped for the next.
        let b = pem_decode(
            "-----BEGIN X-----\nAQID\n-----END Y-----\n-----BEGIN Z-----\nBA==\n-----END Z-----",
        )
        .unwrap();
        assert_eq!((b.kind.as_str(), b.bytes), ("Z", vec![4]));
        assert!(pem_decode("no key here").is_none());
        assert!(pem_decode("-----BEGIN X-----\nAQID\n").is_none());
    }

    #[test]
    fn der_lengths() {
        assert_eq!(der_len(5), vec![5]);
        assert_eq!(der_len(0x80), vec![0x81, 0x80]);
        assert_eq!(der_len(1190), vec![0x82, 0x04, 0xa6]);
    }
}
