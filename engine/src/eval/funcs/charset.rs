//! `textencodebase64` and `textdecodebase64`: a string in another
//! character encoding, named as the IANA character set registry names it
//! (its name or any alias, in any case), as terraform's functions take it.
//! Messages name the encoding by its registry name, as terraform's do.

use super::{arg_error, Func, Param};
use crate::value::{Type, Value};
use base64::Engine;

/// How a character set is encoded and decoded.
#[derive(Debug, Clone, Copy)]
enum Codec {
    Utf8,
    /// UTF-16 in one byte order; `bom` writes a byte order mark and
    /// honours one when decoding (big-endian without one).
    Utf16 {
        big: bool,
        bom: bool,
    },
    Ascii,
    Latin1,
    /// A legacy encoding as encoding_rs implements it.
    Legacy(&'static encoding_rs::Encoding),
}

/// One registered character set: its registry name, aliases and codec.
struct Charset {
    name: &'static str,
    aliases: &'static [&'static str],
    codec: Codec,
}

const CHARSETS: &[Charset] = &[
    Charset {
        name: "UTF-8",
        aliases: &["csUTF8"],
        codec: Codec::Utf8,
    },
    Charset {
        name: "UTF-16BE",
        aliases: &["csUTF16BE"],
        codec: Codec::Utf16 {
            big: true,
            bom: false,
        },
    },
    Charset {
        name: "UTF-16LE",
        aliases: &["csUTF16LE"],
        codec: Codec::Utf16 {
            big: false,
            bom: false,
        },
    },
    Charset {
        name: "UTF-16",
        aliases: &["csUTF16"],
        codec: Codec::Utf16 {
            big: true,
            bom: true,
        },
    },
    Charset {
        name: "US-ASCII",
        aliases: &[
            "iso-ir-6",
            "ANSI_X3.4-1968",
            "ANSI_X3.4-1986",
            "ISO_646.irv:1991",
            "ISO646-US",
            "us",
            "IBM367",
            "cp367",
            "csASCII",
        ],
        codec: Codec::Ascii,
    },
    Charset {
        name: "ISO_8859-1:1987",
        aliases: &[
            "iso-ir-100",
            "ISO_8859-1",
            "ISO-8859-1",
            "latin1",
            "l1",
            "IBM819",
            "CP819",
            "csISOLatin1",
        ],
        codec: Codec::Latin1,
    },
    Charset {
        name: "ISO_8859-2:1987",
        aliases: &[
            "iso-ir-101",
            "ISO_8859-2",
            "ISO-8859-2",
            "latin2",
            "l2",
            "csISOLatin2",
        ],
        codec: Codec::Legacy(encoding_rs::ISO_8859_2),
    },
    Charset {
        name: "ISO_8859-5:1988",
        aliases: &[
            "iso-ir-144",
            "ISO_8859-5",
            "ISO-8859-5",
            "cyrillic",
            "csISOLatinCyrillic",
        ],
        codec: Codec::Legacy(encoding_rs::ISO_8859_5),
    },
    Charset {
        name: "ISO-8859-15",
        aliases: &["ISO_8859-15", "Latin-9", "csISO885915"],
        codec: Codec::Legacy(encoding_rs::ISO_8859_15),
    },
    Charset {
        name: "windows-1250",
        aliases: &["cswindows1250"],
        codec: Codec::Legacy(encoding_rs::WINDOWS_1250),
    },
    Charset {
        name: "windows-1251",
        aliases: &["cswindows1251"],
        codec: Codec::Legacy(encoding_rs::WINDOWS_1251),
    },
    Charset {
        name: "windows-1252",
        aliases: &["cswindows1252"],
        codec: Codec::Legacy(encoding_rs::WINDOWS_1252),
    },
    Charset {
        name: "KOI8-R",
        aliases: &["csKOI8R"],
        codec: Codec::Legacy(encoding_rs::KOI8_R),
    },
    Charset {
        name: "KOI8-U",
        aliases: &["csKOI8U"],
        codec: Codec::Legacy(encoding_rs::KOI8_U),
    },
    Charset {
        name: "Shift_JIS",
        aliases: &["MS_Kanji", "csShiftJIS"],
        codec: Codec::Legacy(encoding_rs::SHIFT_JIS),
    },
    Charset {
        name: "EUC-KR",
        aliases: &["csEUCKR"],
        codec: Codec::Legacy(encoding_rs::EUC_KR),
    },
    Charset {
        name: "GBK",
        aliases: &["CP936", "MS936", "windows-936", "csGBK"],
        codec: Codec::Legacy(encoding_rs::GBK),
    },
    Charset {
        name: "GB18030",
        aliases: &["csGB18030"],
        codec: Codec::Legacy(encoding_rs::GB18030),
    },
    Charset {
        name: "Big5",
        aliases: &["csBig5"],
        codec: Codec::Legacy(encoding_rs::BIG5),
    },
];

/// The character set a name or alias names, in any case.
fn charset(name: &str) -> Result<&'static Charset, String> {
    CHARSETS
        .iter()
        .find(|c| {
            c.name.eq_ignore_ascii_case(name) || c.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
        })
        .ok_or_else(|| {
            arg_error(
                "encoding",
                format!("{name:?} is not a supported IANA encoding name or alias in this Terraform version"),
            )
        })
}

/// A Windows code page: where the WHATWG tables encoding_rs follows give a
/// byte the Windows page leaves undefined a C1 control's code point,
/// terraform's tables define nothing.
fn windows(enc: &'static encoding_rs::Encoding) -> bool {
    enc.name().starts_with("windows-")
}

fn is_c1(c: char) -> bool {
    ('\u{80}'..='\u{9f}').contains(&c)
}

/// `text` in the character set, or `None` where it holds a character
/// the set cannot represent.
fn encode(codec: Codec, text: &str) -> Option<Vec<u8>> {
    match codec {
        Codec::Utf8 => Some(text.as_bytes().to_vec()),
        Codec::Utf16 { big, bom } => {
            let mut out = Vec::new();
            let mut units: Vec<u16> = Vec::new();
            if bom {
                units.push(0xFEFF);
            }
            units.extend(text.encode_utf16());
            for u in units {
                out.extend(if big {
                    u.to_be_bytes()
                } else {
                    u.to_le_bytes()
                });
            }
            Some(out)
        }
        Codec::Ascii => text.is_ascii().then(|| text.as_bytes().to_vec()),
        Codec::Latin1 => text
            .chars()
            .map(|c| u8::try_from(u32::from(c)).ok())
            .collect(),
        Codec::Legacy(enc) => {
            let (bytes, _, unmappable) = enc.encode(text);
            let c1 = windows(enc) && text.chars().any(is_c1);
            (!unmappable && !c1).then(|| bytes.into_owned())
        }
    }
}

/// `bytes` read in the character set, or `None` where they hold a symbol
/// the set does not define.
fn decode(codec: Codec, bytes: &[u8]) -> Option<String> {
    let text = match codec {
        Codec::Utf8 => String::from_utf8_lossy(bytes).into_owned(),
        Codec::Utf16 { big, bom } => {
            if !bytes.len().is_multiple_of(2) {
                return None;
            }
            let (mut big, mut body) = (big, bytes);
            if bom {
                match bytes {
                    [0xFE, 0xFF, rest @ ..] => body = rest,
                    [0xFF, 0xFE, rest @ ..] => (big, body) = (false, rest),
                    _ => {}
                }
            }
            let units = body.chunks(2).map(|p| {
                let pair = [p[0], p[1]];
                if big {
                    u16::from_be_bytes(pair)
                } else {
                    u16::from_le_bytes(pair)
                }
            });
            char::decode_utf16(units)
                .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
                .collect()
        }
        Codec::Ascii => bytes
            .iter()
            .map(|b| {
                if b.is_ascii() {
                    char::from(*b)
                } else {
                    char::REPLACEMENT_CHARACTER
                }
            })
            .collect(),
        Codec::Latin1 => bytes.iter().map(|b| char::from(*b)).collect(),
        Codec::Legacy(enc) => {
            let text = enc.decode_without_bom_handling(bytes).0;
            if windows(enc) {
                text.chars()
                    .map(|c| {
                        if is_c1(c) {
                            char::REPLACEMENT_CHARACTER
                        } else {
                            c
                        }
                    })
                    .collect()
            } else {
                text.into_owned()
            }
        }
    };
    // Terraform counts a replacement character in the result as a symbol
    // the encoding does not define, wherever it came from.
    (!text.contains(char::REPLACEMENT_CHARACTER)).then_some(text)
}

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "textencodebase64" => Func::new(
            vec![
                Param::new("string", Type::String),
                Param::new("encoding", Type::String),
            ],
            Type::String,
            |a| {
                let set = charset(a[1].as_str().unwrap_or_default())?;
                let bytes =
                    encode(set.codec, a[0].as_str().unwrap_or_default()).ok_or_else(|| {
                        arg_error(
                            "string",
                            format!(
                            "the given string contains characters that cannot be represented in {}",
                            set.name
                        ),
                        )
                    })?;
                Ok(Value::string(
                    base64::engine::general_purpose::STANDARD.encode(bytes),
                ))
            },
        ),
        "textdecodebase64" => Func::new(
            vec![
                Param::new("source", Type::String),
                Param::new("encoding", Type::String),
            ],
            Type::String,
            |a| {
                let set = charset(a[1].as_str().unwrap_or_default())?;
                let bytes = super::encoding::base64_decode(a[0].as_str().unwrap_or_default())
                    .map_err(|offset| {
                        arg_error(
                            "source",
                            format!("the given value is has an invalid base64 symbol at offset {offset}"),
                        )
                    })?;
                decode(set.codec, &bytes).map(Value::string).ok_or_else(|| {
                    arg_error(
                        "source",
                        format!(
                            "the given string contains symbols that are not defined for {}",
                            set.name
                        ),
                    )
                })
            },
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(s: &str, e: &str) -> Option<String> {
        let set = charset(e).ok()?;
        encode(set.codec, s).map(|b| base64::engine::general_purpose::STANDARD.encode(b))
    }

    #[test]
    fn names_and_aliases_match_in_any_case() {
        assert_eq!(charset("utf-8").unwrap().name, "UTF-8");
        assert_eq!(charset("LATIN1").unwrap().name, "ISO_8859-1:1987");
        assert!(charset("UTF8").is_err());
        assert!(charset("UTF-32").is_err());
    }

    #[test]
    fn encodings_write_the_bytes_terraform_writes() {
        assert_eq!(
            enc("Hello World", "UTF-16LE").as_deref(),
            Some("SABlAGwAbABvACAAVwBvAHIAbABkAA==")
        );
        assert_eq!(enc("Hello", "UTF-16").as_deref(), Some("/v8ASABlAGwAbABv"));
        assert_eq!(
            enc("Hello", "UTF-16BE").as_deref(),
            Some("AEgAZQBsAGwAbw==")
        );
        assert_eq!(enc("héllo", "ISO-8859-1").as_deref(), Some("aOlsbG8="));
        assert_eq!(enc("日本", "Shift_JIS").as_deref(), Some("k/qWew=="));
        assert_eq!(enc("€", "ISO-8859-1"), None);
        assert_eq!(enc("é", "US-ASCII"), None);
    }

    #[test]
    fn decoding_refuses_undefined_symbols() {
        assert_eq!(decode(Codec::Utf8, &[0xFF]), None);
        let utf16 = charset("UTF-16").unwrap().codec;
        assert_eq!(decode(utf16, &[0x00, 0xFF, 0x00]), None);
        assert_eq!(
            decode(utf16, &[0xFF, 0xFE, b'h', 0, b'i', 0]).as_deref(),
            Some("hi")
        );
    }
}
