//! The go-plugin handshake line, parsed and checked.
//!
//! A plugin started by a host prints one line on stdout,
//! `CORE|APP|NETWORK|ADDRESS|PROTOCOL|SERVERCERT`, and then serves gRPC on
//! the address it names. This module turns that line into a [`Handshake`]
//! or says exactly why it cannot; it starts no process and opens no socket
//! (that is [`super::plugin`]).

use std::path::PathBuf;

use base64::Engine as _;

/// The go-plugin core protocol version every plugin we speak to must print.
pub const CORE_PROTOCOL_VERSION: u32 = 1;

/// Plugin protocol versions the engine offers, highest last, as terraform
/// offers them in `PLUGIN_PROTOCOL_VERSIONS`.
pub const OFFERED_PROTOCOLS: [u32; 2] = [5, 6];

/// go-plugin treats the sixth field as a certificate only when it is longer
/// than this; shorter text is ignored as it is by go-plugin's own client.
const MIN_CERT_FIELD_LEN: usize = 50;

/// A checked handshake: the plugin serves `protocol` over gRPC on the unix
/// socket at `socket`, with TLS when it sent a certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handshake {
    /// The application protocol the plugin chose, one of [`OFFERED_PROTOCOLS`].
    pub protocol: u32,
    /// Path of the unix socket the plugin listens on.
    pub socket: PathBuf,
    /// The plugin's server certificate (DER) when it runs AutoMTLS.
    pub server_cert: Option<Vec<u8>>,
}

/// Why a handshake line was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HandshakeError {
    #[error(
        "malformed handshake line {line:?}: expected CORE|APP|NETWORK|ADDRESS|PROTOCOL[|CERT]"
    )]
    Malformed { line: String },
    #[error("handshake line {line:?} has a non-numeric {field} version")]
    NotANumber { line: String, field: &'static str },
    #[error("go-plugin core protocol {got} is not supported (need {CORE_PROTOCOL_VERSION})")]
    CoreVersion { got: u32 },
    #[error("plugin protocol {got} is not supported (offered {offered:?})", offered = OFFERED_PROTOCOLS)]
    UnsupportedProtocol { got: u32 },
    #[error("network {got:?} is not supported (need \"unix\")")]
    Network { got: String },
    #[error("RPC protocol {got:?} is not supported (need \"grpc\")")]
    RpcProtocol { got: String },
    #[error("server certificate in the handshake is not valid base64: {reason}")]
    Certificate { reason: String },
}

/// Parses one handshake line (without or with its trailing newline).
pub fn parse(line: &str) -> Result<Handshake, HandshakeError> {
    let line = line.trim_end_matches(['\n', '\r']);
    let fields: Vec<&str> = line.split('|').collect();
    // go-plugin's client accepts four fields (RPC protocol defaults to
    // net/rpc), but we only speak gRPC, which needs the fifth.
    if fields.len() < 5 {
        return Err(HandshakeError::Malformed { line: line.into() });
    }
    let number = |index: usize, field: &'static str| {
        fields[index]
            .parse::<u32>()
            .map_err(|_| HandshakeError::NotANumber {
                line: line.into(),
                field,
            })
    };
    let core = number(0, "core protocol")?;
    if core != CORE_PROTOCOL_VERSION {
        return Err(HandshakeError::CoreVersion { got: core });
    }
    let protocol = number(1, "plugin protocol")?;
    if !OFFERED_PROTOCOLS.contains(&protocol) {
        return Err(HandshakeError::UnsupportedProtocol { got: protocol });
    }
    if fields[2] != "unix" {
        return Err(HandshakeError::Network {
            got: fields[2].into(),
        });
    }
    if fields[3].is_empty() {
        return Err(HandshakeError::Malformed { line: line.into() });
    }
    if fields[4] != "grpc" {
        return Err(HandshakeError::RpcProtocol {
            got: fields[4].into(),
        });
    }
    let server_cert = match fields.get(5) {
        Some(cert) if cert.len() > MIN_CERT_FIELD_LEN => Some(decode_cert(cert)?),
        _ => None,
    };
    Ok(Handshake {
        protocol,
        socket: PathBuf::from(fields[3]),
        server_cert,
    })
}

/// go-plugin writes the DER certificate in unpadded standard base64; accept
/// padding too, since it costs nothing.
fn decode_cert(text: &str) -> Result<Vec<u8>, HandshakeError> {
    base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(text.trim_end_matches('='))
        .map_err(|e| HandshakeError::Certificate {
            reason: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plaintext_line() {
        let h = parse("1|5|unix|/tmp/x/plugin2434558152|grpc|\n").unwrap();
        assert_eq!(h.protocol, 5);
        assert_eq!(h.socket, PathBuf::from("/tmp/x/plugin2434558152"));
        assert_eq!(h.server_cert, None);
    }

    #[test]
    fn five_fields_are_enough() {
        let h = parse("1|6|unix|/s|grpc").unwrap();
        assert_eq!((h.protocol, h.server_cert), (6, None));
    }

    #[test]
    fn certificate_is_unpadded_base64_der() {
        let der: Vec<u8> = (0..=255u8).cycle().take(100).collect();
        let text = base64::engine::general_purpose::STANDARD_NO_PAD.encode(&der);
        assert!(!text.ends_with('='));
        let h = parse(&format!("1|5|unix|/s|grpc|{text}")).unwrap();
        assert_eq!(h.server_cert, Some(der.clone()));
        let padded = base64::engine::general_purpose::STANDARD.encode(&der);
        let h = parse(&format!("1|5|unix|/s|grpc|{padded}")).unwrap();
        assert_eq!(h.server_cert, Some(der));
    }

    #[test]
    fn short_sixth_field_is_not_a_certificate() {
        let h = parse("1|5|unix|/s|grpc|short").unwrap();
        assert_eq!(h.server_cert, None);
    }

    #[test]
    fn refusals() {
        use HandshakeError::*;
        let cases: &[(&str, HandshakeError)] = &[
            (
                "This binary is a plugin.",
                Malformed {
                    line: "This binary is a plugin.".into(),
                },
            ),
            ("", Malformed { line: "".into() }),
            (
                "1|5|unix|/s",
                Malformed {
                    line: "1|5|unix|/s".into(),
                },
            ),
            (
                "1|5|unix||grpc|",
                Malformed {
                    line: "1|5|unix||grpc|".into(),
                },
            ),
            (
                "x|5|unix|/s|grpc|",
                NotANumber {
                    line: "x|5|unix|/s|grpc|".into(),
                    field: "core protocol",
                },
            ),
            ("2|5|unix|/s|grpc|", CoreVersion { got: 2 }),
            ("1|4|unix|/s|grpc|", UnsupportedProtocol { got: 4 }),
            ("1|7|unix|/s|grpc|", UnsupportedProtocol { got: 7 }),
            (
                "1|5|tcp|127.0.0.1:1234|grpc|",
                Network { got: "tcp".into() },
            ),
            (
                "1|5|unix|/s|netrpc|",
                RpcProtocol {
                    got: "netrpc".into(),
                },
            ),
        ];
        for (line, want) in cases {
            assert_eq!(parse(line).as_ref(), Err(want), "line {line:?}");
        }
        let bad_cert = format!("1|5|unix|/s|grpc|{}", "!".repeat(60));
        assert!(matches!(parse(&bad_cert), Err(Certificate { .. })));
    }
}
