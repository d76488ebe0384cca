//! Date and time functions: `timestamp`, `formatdate`, `timeadd` and
//! `timecmp`.
//!
//! Timestamps are RFC 3339 strings, parsed as cty parses them (Go's
//! `time.Parse` with the RFC 3339 layout plus cty's stricter checks) so
//! that a malformed timestamp is reported in cty's words. Durations are Go
//! duration strings (`1h30m`, `-1.5h`, `300ms`, `1µs`). Calendar arithmetic
//! is proleptic Gregorian over days since the Unix epoch; a timestamp keeps
//! the UTC offset it was written with.

use super::{arg_error, Func, Param};
use crate::value::{go_quote, Type, Value};

pub(super) fn lookup(name: &str) -> Option<Func> {
    let s = |n| Param::new(n, Type::String);
    Some(match name {
        "timestamp" => Func::new(vec![], Type::String, |_| Ok(Value::string(rfc3339_now()))),
        "formatdate" => Func::new(vec![s("format"), s("time")], Type::String, |a| {
            let t = parse_timestamp(text(&a[1])).map_err(|e| arg_error("time", e))?;
            Ok(Value::string(
                format_date(text(&a[0]), &t).map_err(|e| arg_error("format", e))?,
            ))
        }),
        "timeadd" => Func::new(vec![s("timestamp"), s("duration")], Type::String, |a| {
            // Unlike the other time functions, these blame no argument.
            let t = parse_timestamp(text(&a[0]))?;
            let d = parse_duration(text(&a[1]))?;
            Ok(Value::string(t.add(d).rfc3339()))
        }),
        "timecmp" => Func::new(
            vec![s("timestamp_a"), s("timestamp_b")],
            Type::Number,
            |a| {
                let x = parse_timestamp(text(&a[0])).map_err(|e| arg_error("timestamp_a", e))?;
                let y = parse_timestamp(text(&a[1])).map_err(|e| arg_error("timestamp_b", e))?;
                let order = (x.secs, x.nanos).cmp(&(y.secs, y.nanos)) as i64;
                Ok(Value::int(order))
            },
        ),
        _ => return None,
    })
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// An instant with the UTC offset it was written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Instant {
    /// Seconds since the Unix epoch, UTC.
    secs: i64,
    nanos: u32,
    /// Seconds east of UTC.
    offset: i32,
}

/// The wall clock of an instant in its own offset.
struct Civil {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    /// 0 is Sunday.
    weekday: u32,
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const WEEKDAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// `secs` since the Unix epoch in RFC 3339, UTC, as `timestamp()` prints
/// a time.
pub fn rfc3339_utc(secs: i64) -> String {
    Instant {
        secs,
        nanos: 0,
        offset: 0,
    }
    .rfc3339()
}

/// Now, to the second, as `timestamp()` prints it.
pub fn rfc3339_now() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    rfc3339_utc(now.as_secs() as i64)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// The date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

impl Instant {
    fn civil(&self) -> Civil {
        let local = self.secs + i64::from(self.offset);
        let days = local.div_euclid(86400);
        let rem = local.rem_euclid(86400) as u32;
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: rem / 3600,
            minute: rem / 60 % 60,
            second: rem % 60,
            weekday: (days + 4).rem_euclid(7) as u32,
        }
    }

    fn add(&self, nanos: i64) -> Instant {
        let total =
            i128::from(self.secs) * 1_000_000_000 + i128::from(self.nanos) + i128::from(nanos);
        Instant {
            secs: total.div_euclid(1_000_000_000) as i64,
            nanos: total.rem_euclid(1_000_000_000) as u32,
            offset: self.offset,
        }
    }

    /// Go's `Format(time.RFC3339)`: whole seconds, `Z` for a zero offset.
    fn rfc3339(&self) -> String {
        let c = self.civil();
        let year = if c.year < 0 {
            format!("-{:04}", -c.year)
        } else {
            format!("{:04}", c.year)
        };
        format!(
            "{year}-{:02}-{:02}T{:02}:{:02}:{:02}{}",
            c.month,
            c.day,
            c.hour,
            c.minute,
            c.second,
            self.zone(true, true)
        )
    }

    /// The offset as Go's `Z07:00` (`z` and `colon`), `-07:00` or `-0700`.
    fn zone(&self, z: bool, colon: bool) -> String {
        if z && self.offset == 0 {
            return "Z".to_string();
        }
        let sign = if self.offset < 0 { '-' } else { '+' };
        let m = self.offset.unsigned_abs() / 60;
        let sep = if colon { ":" } else { "" };
        format!("{sign}{:02}{sep}{:02}", m / 60, m % 60)
    }
}

/// Go's `time.ParseError` fields that cty rewords.
struct ParseError {
    layout_elem: &'static str,
    value_elem: String,
    message: &'static str,
}

fn perr(layout_elem: &'static str, value_elem: &str) -> ParseError {
    ParseError {
        layout_elem,
        value_elem: value_elem.to_string(),
        message: "",
    }
}

/// cty's `parseTimestamp`: an RFC 3339 timestamp, or cty's message.
fn parse_timestamp(s: &str) -> Result<Instant, String> {
    let e = match parse_rfc3339(s).and_then(|t| strict_rfc3339(s).map(|()| t)) {
        Ok(t) => return Ok(t),
        Err(e) => e,
    };
    let fail = |m: String| Err(format!("not a valid RFC3339 timestamp: {m}"));
    if e.layout_elem.is_empty() && e.value_elem.is_empty() && !e.message.is_empty() {
        return Err(format!("not a valid RFC3339 timestamp{}", e.message));
    }
    let what = match e.layout_elem {
        "2006" => "year",
        "01" => "month",
        "02" => "day of month",
        "15" => "hour",
        "04" => "minute",
        "05" => "second",
        "Z07:00" => "UTC offset",
        "T" => return fail("missing required time introducer 'T'".to_string()),
        l @ (":" | "-") => {
            return fail(if e.value_elem.is_empty() {
                format!("end of string where {} is expected", go_quote(l))
            } else {
                format!(
                    "found {} where {} is expected",
                    go_quote(&e.value_elem),
                    go_quote(l)
                )
            })
        }
        _ => "timestamp segment",
    };
    let v = &e.value_elem;
    fail(if v.is_empty() {
        format!("end of string before {what}")
    } else if what == "hour" && v.contains(':') {
        "hour must be between 0 and 23 inclusive".to_string()
    } else if what == "hour" && v.len() != 2 {
        "hour must have exactly two digits".to_string()
    } else if what == "minute" && v.len() != 2 {
        "minute must have exactly two digits".to_string()
    } else {
        format!("cannot use {} as {what}", go_quote(v))
    })
}

/// A number of exactly two digits at the start of `s` (Go's fixed
/// `getnum`), or of one or two digits when `fixed` is false.
fn getnum(s: &str, fixed: bool) -> Option<(u32, &str)> {
    let b = s.as_bytes();
    let digit = |i: usize| {
        b.get(i)
            .filter(|c| c.is_ascii_digit())
            .map(|c| u32::from(c - b'0'))
    };
    let first = digit(0)?;
    match digit(1) {
        Some(second) => Some((first * 10 + second, &s[2..])),
        None if fixed => None,
        None => Some((first, &s[1..])),
    }
}

/// Go's `time.Parse(time.RFC3339, s)`, element by element, with its errors.
fn parse_rfc3339(s: &str) -> Result<Instant, ParseError> {
    let mut v = s;
    let skip = |v: &str, c: char, elem: &'static str| -> Result<usize, ParseError> {
        if v.starts_with(c) {
            Ok(1)
        } else {
            Err(perr(elem, v))
        }
    };
    // 2006
    if v.len() < 4 || !v.as_bytes()[0].is_ascii_digit() {
        return Err(perr("2006", v));
    }
    let year: i64 = match v.get(..4) {
        Some(p) if p.bytes().all(|c| c.is_ascii_digit()) => p.parse().unwrap_or_default(),
        _ => return Err(perr("2006", v)),
    };
    v = &v[4..];
    v = &v[skip(v, '-', "-")?..];
    let (month, rest) = getnum(v, true).ok_or_else(|| perr("01", v))?;
    if !(1..=12).contains(&month) {
        return Err(range_err("01", rest));
    }
    v = rest;
    v = &v[skip(v, '-', "-")?..];
    let (day, rest) = getnum(v, true).ok_or_else(|| perr("02", v))?;
    v = rest;
    v = &v[skip(v, 'T', "T")?..];
    let (hour, rest) = getnum(v, false).ok_or_else(|| perr("15", v))?;
    if hour >= 24 {
        return Err(range_err("15", rest));
    }
    v = rest;
    v = &v[skip(v, ':', ":")?..];
    let (minute, rest) = getnum(v, true).ok_or_else(|| perr("04", v))?;
    if minute >= 60 {
        return Err(range_err("04", rest));
    }
    v = rest;
    v = &v[skip(v, ':', ":")?..];
    let (second, mut rest) = getnum(v, true).ok_or_else(|| perr("05", v))?;
    // A fractional second the layout does not spell out is still read.
    let mut nanos = 0u32;
    let b = rest.as_bytes();
    if b.len() >= 2 && (b[0] == b'.' || b[0] == b',') && b[1].is_ascii_digit() {
        let n = 1 + b[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        let digits = &rest[1..n.min(10)];
        let scale = 10u32.pow(9 - digits.len() as u32);
        nanos = digits.parse::<u32>().unwrap_or_default() * scale;
        rest = &rest[n..];
    }
    if second >= 60 {
        return Err(range_err("05", rest));
    }
    v = rest;
    let offset: i32 = if let Some(r) = v.strip_prefix('Z') {
        v = r;
        0
    } else {
        let b = v.as_bytes();
        if b.len() < 6 || b[3] != b':' {
            return Err(perr("Z07:00", v));
        }
        let two = |i: usize| {
            (b[i].is_ascii_digit() && b[i + 1].is_ascii_digit())
                .then(|| u32::from(b[i] - b'0') * 10 + u32::from(b[i + 1] - b'0'))
        };
        let (Some(h), Some(m)) = (two(1), two(4)) else {
            return Err(perr("Z07:00", v));
        };
        let sign = match b[0] {
            b'+' => 1,
            b'-' => -1,
            _ => return Err(perr("Z07:00", v)),
        };
        v = &v[6..];
        if h > 24 || m > 60 {
            return Err(range_err("Z07:00", v));
        }
        sign * (h * 3600 + m * 60) as i32
    };
    if !v.is_empty() {
        return Err(ParseError {
            layout_elem: "",
            value_elem: v.to_string(),
            message: ": extra text",
        });
    }
    if day < 1 || day > days_in_month(year, month) {
        return Err(ParseError {
            layout_elem: "",
            value_elem: String::new(),
            message: ": day out of range",
        });
    }
    let local =
        days_from_civil(year, month, day) * 86400 + i64::from(hour * 3600 + minute * 60 + second);
    Ok(Instant {
        secs: local - i64::from(offset),
        nanos,
        offset,
    })
}

fn range_err(layout_elem: &'static str, rest: &str) -> ParseError {
    ParseError {
        layout_elem,
        value_elem: rest.to_string(),
        message: ": out of range",
    }
}

/// cty's extra RFC 3339 checks on a timestamp Go's parser accepted.
fn strict_rfc3339(s: &str) -> Result<(), ParseError> {
    let b = s.as_bytes();
    let num2 = |i: usize| u32::from(b[i] - b'0') * 10 + u32::from(b[i + 1] - b'0');
    if b[12] == b':' {
        return Err(ParseError {
            layout_elem: "15",
            value_elem: s[11..12].to_string(),
            message: ": hour must have exactly two digits",
        });
    }
    if b[19] == b',' {
        return Err(ParseError {
            layout_elem: ".",
            value_elem: ",".to_string(),
            message: ": sub-second separator must be a period",
        });
    }
    if b[b.len() - 1] != b'Z' && (num2(b.len() - 5) >= 24 || num2(b.len() - 2) >= 60) {
        return Err(ParseError {
            layout_elem: "Z07:00",
            value_elem: s[s.len() - 6..].to_string(),
            message: ": timezone out of range",
        });
    }
    Ok(())
}

/// cty's `formatdate` over the wall clock of `t`.
fn format_date(format: &str, t: &Instant) -> Result<String, String> {
    let c = t.civil();
    let mut out = String::new();
    for tok in date_tokens(format) {
        let first = tok.chars().next().unwrap_or_default();
        if first == '\'' {
            if tok.len() < 2 || !tok.ends_with('\'') {
                return Err("unterminated literal '".to_string());
            }
            if tok.len() == 2 {
                out.push('\'');
            } else {
                out.push_str(&tok[1..tok.len() - 1].replace("''", "'"));
            }
            continue;
        }
        if !first.is_ascii_alphabetic() {
            out.push_str(tok);
            continue;
        }
        let bad = |why: &str| Err(format!("invalid date format verb {}{why}", go_quote(tok)));
        let num = |n: i64, out: &mut String| match tok.len() {
            1 => out.push_str(&n.to_string()),
            _ => out.push_str(&format!("{n:02}")),
        };
        match (first, tok.len()) {
            ('Y', 2) => out.push_str(&format!("{:02}", c.year % 100)),
            ('Y', 4) => out.push_str(&format!("{:04}", c.year)),
            ('Y', _) => return bad(": year must either be \"YY\" or \"YYYY\""),
            ('M', 1 | 2) => num(i64::from(c.month), &mut out),
            ('M', 3) => out.push_str(&MONTHS[c.month as usize - 1][..3]),
            ('M', 4) => out.push_str(MONTHS[c.month as usize - 1]),
            ('M', _) => return bad(": month must be \"M\", \"MM\", \"MMM\", or \"MMMM\""),
            ('D', 1 | 2) => num(i64::from(c.day), &mut out),
            ('D', _) => return bad(": day of month must either be \"D\" or \"DD\""),
            ('E', 3) => out.push_str(&WEEKDAYS[c.weekday as usize][..3]),
            ('E', 4) => out.push_str(WEEKDAYS[c.weekday as usize]),
            ('E', _) => return bad(": day of week must either be \"EEE\" or \"EEEE\""),
            ('h', 1 | 2) => num(i64::from(c.hour), &mut out),
            ('h', _) => return bad(": 24-hour must either be \"h\" or \"hh\""),
            ('H', 1 | 2) => num(i64::from((c.hour + 11) % 12 + 1), &mut out),
            ('H', _) => return bad(": 12-hour must either be \"H\" or \"HH\""),
            ('A' | 'a', 2) => {
                let pm = c.hour >= 12;
                out.push_str(match (first, pm) {
                    ('A', false) => "AM",
                    ('A', true) => "PM",
                    (_, false) => "am",
                    (_, true) => "pm",
                })
            }
            ('A' | 'a', _) => return bad(&format!(": must be \"{first}{first}\"")),
            ('m', 1 | 2) => num(i64::from(c.minute), &mut out),
            ('m', _) => return bad(": minute must either be \"m\" or \"mm\""),
            ('s', 1 | 2) => num(i64::from(c.second), &mut out),
            ('s', _) => return bad(": second must either be \"s\" or \"ss\""),
            ('Z', 1) => out.push_str(&t.zone(true, true)),
            ('Z', 3) if t.offset == 0 => out.push_str("UTC"),
            ('Z', 3 | 4) => out.push_str(&t.zone(false, false)),
            ('Z', 5) => out.push_str(&t.zone(false, true)),
            ('Z', _) => return bad(": timezone must be Z, ZZZZ, or ZZZZZ"),
            _ => return bad(""),
        }
    }
    Ok(out)
}

/// cty's date format tokens: a quoted literal (`''` inside is a quote),
/// a run of one repeated letter, or a run of other characters.
fn date_tokens(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if b[i] == b'\'' {
            if b.get(i + 1) == Some(&b'\'') {
                i += 2;
            } else {
                i += 1;
                loop {
                    match b.get(i) {
                        None => break,
                        Some(b'\'') if b.get(i + 1) == Some(&b'\'') => i += 2,
                        Some(b'\'') => {
                            i += 1;
                            break;
                        }
                        Some(_) => i += 1,
                    }
                }
            }
        } else if b[i].is_ascii_alphabetic() {
            let c = b[i];
            while i < b.len() && b[i] == c {
                i += 1;
            }
        } else {
            i += 1;
            while i < b.len() && b[i] != b'\'' && !b[i].is_ascii_alphabetic() {
                i += 1;
            }
        }
        out.push(&s[start..i]);
    }
    out
}

/// Go's `time.ParseDuration`, in nanoseconds, with Go's errors.
fn parse_duration(orig: &str) -> Result<i64, String> {
    const LIMIT: u64 = 1 << 63;
    let invalid = || format!("time: invalid duration {}", time_quote(orig));
    let mut s = orig;
    let mut neg = false;
    if let Some(c) = s.chars().next() {
        if c == '-' || c == '+' {
            neg = c == '-';
            s = &s[1..];
        }
    }
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: u64 = 0;
    while !s.is_empty() {
        let b = s.as_bytes();
        if !(b[0] == b'.' || b[0].is_ascii_digit()) {
            return Err(invalid());
        }
        let int_len = b.iter().take_while(|c| c.is_ascii_digit()).count();
        let mut v: u64 = 0;
        for c in &b[..int_len] {
            if v > LIMIT / 10 {
                return Err(invalid());
            }
            v = v * 10 + u64::from(c - b'0');
            if v > LIMIT {
                return Err(invalid());
            }
        }
        s = &s[int_len..];
        let (mut frac, mut scale, mut post) = (0u64, 1f64, false);
        if let Some(r) = s.strip_prefix('.') {
            let n = r.bytes().take_while(|c| c.is_ascii_digit()).count();
            let mut overflow = false;
            for c in r[..n].bytes() {
                if overflow {
                    continue;
                }
                if frac > (LIMIT - 1) / 10 {
                    overflow = true;
                    continue;
                }
                let y = frac * 10 + u64::from(c - b'0');
                if y > LIMIT {
                    overflow = true;
                    continue;
                }
                frac = y;
                scale *= 10.0;
            }
            post = n > 0;
            s = &r[n..];
        }
        if int_len == 0 && !post {
            return Err(invalid());
        }
        let unit_len = s
            .bytes()
            .take_while(|c| !(*c == b'.' || c.is_ascii_digit()))
            .count();
        if unit_len == 0 {
            return Err(format!(
                "time: missing unit in duration {}",
                time_quote(orig)
            ));
        }
        let unit_text = &s[..unit_len];
        s = &s[unit_len..];
        let unit: u64 = match unit_text {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    time_quote(unit_text),
                    time_quote(orig)
                ))
            }
        };
        if v > LIMIT / unit {
            return Err(invalid());
        }
        v *= unit;
        if frac > 0 {
            v += (frac as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return Err(invalid());
            }
        }
        total += v;
        if total > LIMIT {
            return Err(invalid());
        }
    }
    if neg {
        return Ok((total as i64).wrapping_neg());
    }
    i64::try_from(total).map_err(|_| invalid())
}

/// The quoting of Go's time package: bytes outside printable ASCII as
/// `\xNN`.
fn time_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if c.is_ascii() && c >= ' ' {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(f: &str, t: &str) -> Result<String, String> {
        format_date(f, &parse_timestamp(t).unwrap())
    }

    #[test]
    fn formatdate_tokens() {
        let t = "2024-03-05T17:08:09+05:30";
        assert_eq!(
            fmt("YYYY YY MMMM MMM MM M DD D EEEE EEE", t).unwrap(),
            "2024 24 March Mar 03 3 05 5 Tuesday Tue"
        );
        assert_eq!(
            fmt("hh h HH H AA aa mm m ss s", t).unwrap(),
            "17 17 05 5 PM pm 08 8 09 9"
        );
        assert_eq!(
            fmt("ZZZZZ ZZZZ ZZZ Z", t).unwrap(),
            "+05:30 +0530 +0530 +05:30"
        );
        assert_eq!(
            fmt("ZZZZZ ZZZZ ZZZ Z", "2024-03-05T17:08:09Z").unwrap(),
            "+00:00 +0000 UTC Z"
        );
        assert_eq!(fmt("H HH h", "2024-03-05T00:08:09Z").unwrap(), "12 12 0");
        assert_eq!(fmt("'it''s' '' h:mm", t).unwrap(), "it's ' 17:08");
        assert_eq!(fmt("'open", t).unwrap_err(), "unterminated literal '");
        assert_eq!(fmt("x", t).unwrap_err(), "invalid date format verb \"x\"");
        assert_eq!(fmt("EEEE", "0001-01-01T00:00:00Z").unwrap(), "Monday");
    }

    #[test]
    fn rfc3339_errors_are_worded_as_cty_words_them() {
        let e = |s: &str| parse_timestamp(s).unwrap_err();
        let p = "not a valid RFC3339 timestamp: ";
        assert_eq!(
            e("2024-03-05"),
            format!("{p}missing required time introducer 'T'")
        );
        assert_eq!(
            e("2024-03-05T07:08:09"),
            format!("{p}end of string before UTC offset")
        );
        assert_eq!(
            e("2024-13-05T07:08:09Z"),
            format!("{p}cannot use \"-05T07:08:09Z\" as month")
        );
        assert_eq!(e("2024-02-30T07:08:09Z"), format!("{p}day out of range"));
        assert_eq!(
            e("2024-03-05T7:08:09Z"),
            format!("{p}hour must have exactly two digits")
        );
        assert_eq!(
            e("2024-03-05T25:08:09Z"),
            format!("{p}hour must be between 0 and 23 inclusive")
        );
        assert_eq!(
            e("2024-03-05T07-08:09Z"),
            format!("{p}found \"-08:09Z\" where \":\" is expected")
        );
        assert_eq!(
            e("2024-03-05T07:08:09Zjunk"),
            format!("{p}cannot use \"junk\" as timestamp segment")
        );
        assert_eq!(e(""), format!("{p}end of string before year"));
    }

    #[test]
    fn go_durations() {
        assert_eq!(parse_duration("1h30m"), Ok(5_400_000_000_000));
        assert_eq!(parse_duration("-10s"), Ok(-10_000_000_000));
        assert_eq!(parse_duration("1.5h"), Ok(5_400_000_000_000));
        assert_eq!(parse_duration("300ms"), Ok(300_000_000));
        assert_eq!(parse_duration("1us"), Ok(1_000));
        assert_eq!(parse_duration("1µs"), Ok(1_000));
        assert_eq!(parse_duration("1ns"), Ok(1));
        assert_eq!(parse_duration(".5s"), Ok(500_000_000));
        assert_eq!(parse_duration("0"), Ok(0));
        assert_eq!(
            parse_duration("1"),
            Err("time: missing unit in duration \"1\"".into())
        );
        assert_eq!(
            parse_duration("1d"),
            Err("time: unknown unit \"d\" in duration \"1d\"".into())
        );
        assert_eq!(
            parse_duration(""),
            Err("time: invalid duration \"\"".into())
        );
        assert_eq!(
            parse_duration(".s"),
            Err("time: invalid duration \".s\"".into())
        );
        assert_eq!(
            parse_duration("9999999999h"),
            Err("time: invalid duration \"9999999999h\"".into())
        );
    }

    #[test]
    fn adding_crosses_days_and_keeps_the_offset() {
        let t = parse_timestamp("2024-02-28T23:30:00-05:00").unwrap();
        assert_eq!(
            t.add(3_600_000_000_000).rfc3339(),
            "2024-02-29T00:30:00-05:00"
        );
        let t = parse_timestamp("1970-01-01T00:00:00Z").unwrap();
        assert_eq!(t.add(-1_000_000_000).rfc3339(), "1969-12-31T23:59:59Z");
    }
}
