//! IP network functions over IPv4 and IPv6 CIDR prefixes.

use super::{Func, Param};
use crate::value::number::Number;
use crate::value::{Type, Value};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

fn num(v: &Value) -> i128 {
    v.as_number()
        .and_then(Number::to_i64)
        .map(i128::from)
        .unwrap_or(-1)
}

/// A parsed prefix: its network address as a number, the address width in
/// bits and the prefix length.
struct Prefix {
    addr: u128,
    bits: u32,
    len: u32,
}

fn parse(s: &str) -> Result<Prefix, String> {
    let bad = || format!("invalid CIDR expression: invalid CIDR address: {s}");
    let (ip, len) = s.split_once('/').ok_or_else(bad)?;
    let len: u32 = len.parse().map_err(|_| bad())?;
    let (addr, bits) = match ip.parse::<IpAddr>().map_err(|_| bad())? {
        IpAddr::V4(a) => (u128::from(u32::from(a)), 32),
        IpAddr::V6(a) => (u128::from(a), 128),
    };
    if len > bits {
        return Err(bad());
    }
    let mask = mask(bits, len);
    Ok(Prefix {
        addr: addr & mask,
        bits,
        len,
    })
}

fn mask(bits: u32, len: u32) -> u128 {
    let all = if bits == 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    };
    if len == 0 {
        0
    } else {
        all & !((1u128 << (bits - len)) - 1).min(all)
    }
}

fn show(addr: u128, bits: u32) -> String {
    if bits == 32 {
        Ipv4Addr::from(addr as u32).to_string()
    } else {
        Ipv6Addr::from(addr).to_string()
    }
}

pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "cidrhost" => Func::new(
            vec![
                Param::new("prefix", Type::String),
                Param::new("hostnum", Type::Number),
            ],
            Type::String,
            |a| {
                let p = parse(a[0].as_str().unwrap_or_default())?;
                let host = num(&a[1]);
                let size = 1i128 << (p.bits - p.len).min(126);
                let off = if host < 0 { size + host } else { host };
                if off < 0 || off >= size {
                    return Err(format!(
                        "prefix of {} does not accommodate a host numbered {host}",
                        p.len
                    ));
                }
                Ok(Value::string(show(p.addr + off as u128, p.bits)))
            },
        ),
        "cidrnetmask" => Func::new(
            vec![Param::new("prefix", Type::String)],
            Type::String,
            |a| {
                let p = parse(a[0].as_str().unwrap_or_default())?;
                if p.bits != 32 {
                    return Err(String::from("only IPv4 networks have netmasks"));
                }
                Ok(Value::string(show(mask(32, p.len), 32)))
            },
        ),
        "cidrsubnet" => Func::new(
            vec![
                Param::new("prefix", Type::String),
                Param::new("newbits", Type::Number),
                Param::new("netnum", Type::Number),
            ],
            Type::String,
            |a| {
                let p = parse(a[0].as_str().unwrap_or_default())?;
                let (newbits, netnum) = (num(&a[1]), num(&a[2]));
                let len = p.len as i128 + newbits;
                if newbits < 0 || len > p.bits as i128 {
                    return Err(format!(
                        "insufficient address space to extend prefix of {} by {newbits}",
                        p.len
                    ));
                }
                if netnum < 0 || netnum >= (1i128 << newbits.min(126)) {
                    return Err(format!("prefix extension of {newbits} does not accommodate a subnet numbered {netnum}"));
                }
                let addr = p.addr | ((netnum as u128) << (p.bits as i128 - len));
                Ok(Value::string(format!("{}/{len}", show(addr, p.bits))))
            },
        ),
        "cidrsubnets" => Func::new(
            vec![Param::new("prefix", Type::String)],
            Type::list(Type::String),
            cidrsubnets,
        )
        .variadic(Param::new("newbits", Type::Number)),
        _ => return None,
    })
}

/// Consecutive subnets of `prefix`, each `newbits` longer than it, packed
/// in order as hashicorp/go-cidr's `NextSubnet` allocates them: each starts
/// after the previous one ends, aligned to its own size.
fn cidrsubnets(a: Vec<Value>) -> super::FuncResult {
    use super::arg_error;
    let p = parse(a[0].as_str().unwrap_or_default()).map_err(|e| arg_error("prefix", e))?;
    let all = mask(p.bits, p.bits);
    let host = |len: u32| all & !mask(p.bits, len);
    let mut out = Vec::new();
    // The subnet before the prefix, at the first requested length, so the
    // first subnet allocated is the prefix's first.
    let mut current: Option<(u128, u32)> = None;
    for n in &a[1..] {
        let newbits = n.as_number().and_then(Number::to_i64).ok_or_else(|| {
            arg_error(
                "newbits",
                "value must be a whole number, between -9223372036854775808 and 9223372036854775807",
            )
        })?;
        if newbits < 1 {
            return Err(arg_error(
                "newbits",
                "must extend prefix by at least one bit",
            ));
        }
        if newbits > 32 {
            return Err(arg_error(
                "newbits",
                "may not extend prefix by more than 32 bits",
            ));
        }
        let len = p.len + newbits as u32;
        if len > p.bits {
            let proto = if p.bits == 32 { "IPv4" } else { "IPv6" };
            return Err(arg_error(
                "newbits",
                format!(
                    "would extend prefix to {len} bits, which is too long for an {proto} address"
                ),
            ));
        }
        let (cur_addr, cur_len) =
            current.unwrap_or(((p.addr.wrapping_sub(1) & all) & mask(p.bits, len), len));
        let last = (cur_addr | host(cur_len)) & mask(p.bits, len) | host(len);
        let next = last.wrapping_add(1) & all;
        let rollover = next == 0;
        if rollover || next & mask(p.bits, p.len) != p.addr {
            return Err(arg_error(
                "newbits",
                format!(
                    "not enough remaining address space for a subnet with a prefix of {len} bits after {}/{cur_len}",
                    show(cur_addr, p.bits)
                ),
            ));
        }
        current = Some((next, len));
        out.push(Value::string(format!("{}/{len}", show(next, p.bits))));
    }
    Ok(Value::list(Type::String, out))
}
