//! Terraform's number: a binary floating-point value of arbitrary precision.
//!
//! Terraform keeps numbers as Go `big.Float`s: a literal is parsed with 512
//! bits of mantissa, an integer a function returns carries 64, a value that
//! went through a float64 (`pow`, `log`) carries 53. Results round to
//! nearest-even at the larger precision of their operands, and are printed
//! as the shortest decimal that reads back to the same value at the value's
//! own precision. That is why `0.1 + 0.2` is `0.3` and `1/3` prints 155
//! digits. This module reproduces that arithmetic exactly; it owns no other
//! part of the value model.

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{One, ToPrimitive, Zero};
use std::cmp::Ordering;

/// Precision of a number literal or of a number parsed from a string.
pub const PARSE_PREC: u32 = 512;
/// Precision of an integer produced by a function (`length`, `index`, ...).
pub const INT_PREC: u32 = 64;
/// Precision of a value that went through a 64-bit float.
pub const FLOAT_PREC: u32 = 53;

/// A finite or infinite number: `(-1)^neg * mant * 2^exp`, with at most
/// `prec` significant bits in `mant` and no trailing zero bits.
#[derive(Clone, Debug)]
pub struct Number {
    neg: bool,
    inf: bool,
    mant: BigUint,
    exp: i64,
    prec: u32,
}

/// A division of zero by zero or infinity by infinity: Go's `ErrNaN`.
#[derive(Debug, PartialEq, Eq)]
pub struct NotANumber;

impl Number {
    fn rounded(neg: bool, mant: BigUint, exp: i64, prec: u32, sticky: bool) -> Number {
        let bits = mant.bits();
        let (mut mant, mut exp) = (mant, exp);
        if bits > u64::from(prec) {
            let shift = bits - u64::from(prec);
            let half = mant.bit(shift - 1);
            let rest = sticky || (mant.trailing_zeros().unwrap_or(0) < shift - 1);
            let mut kept = &mant >> shift;
            if half && (rest || kept.bit(0)) {
                kept += 1u32;
            }
            mant = kept;
            exp += shift as i64;
        }
        if mant.is_zero() {
            return Number {
                neg,
                inf: false,
                mant,
                exp: 0,
                prec,
            };
        }
        let tz = mant.trailing_zeros().unwrap_or(0);
        if tz > 0 {
            mant >>= tz;
            exp += tz as i64;
        }
        Number {
            neg,
            inf: false,
            mant,
            exp,
            prec,
        }
    }

    /// An integer at the precision functions give their integer results.
    pub fn from_i64(v: i64) -> Number {
        Number::from_bigint(&BigInt::from(v), INT_PREC)
    }

    /// An integer of any size, at `prec` bits (at least 64, as Go's SetInt).
    pub fn from_bigint(v: &BigInt, prec: u32) -> Number {
        let prec = prec.max(INT_PREC).max(v.bits() as u32);
        Number::rounded(
            v.sign() == Sign::Minus,
            v.magnitude().clone(),
            0,
            prec,
            false,
        )
    }

    /// A float64, at 53 bits.
    pub fn from_f64(v: f64) -> Number {
        if v.is_infinite() {
            return Number::infinity(v < 0.0);
        }
        let neg = v.is_sign_negative();
        let a = v.abs();
        if a == 0.0 {
            return Number::rounded(neg, BigUint::zero(), 0, FLOAT_PREC, false);
        }
        let bits = a.to_bits();
        let raw_exp = ((bits >> 52) & 0x7ff) as i64;
        let frac = bits & ((1u64 << 52) - 1);
        let (m, e) = if raw_exp == 0 {
            (frac, -1074)
        } else {
            (frac | (1u64 << 52), raw_exp - 1075)
        };
        Number::rounded(neg, BigUint::from(m), e, FLOAT_PREC, false)
    }

    pub fn infinity(neg: bool) -> Number {
        Number {
            neg,
            inf: true,
            mant: BigUint::zero(),
            exp: 0,
            prec: 0,
        }
    }

    pub fn zero() -> Number {
        Number::from_i64(0)
    }

    /// Parses terraform's number syntax (`12`, `-1.5e3`, `0.1`) at 512 bits.
    pub fn parse(s: &str) -> Option<Number> {
        let (neg, body) = match s.as_bytes().first()? {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        match body {
            "Inf" | "inf" | "Infinity" => return Some(Number::infinity(neg)),
            _ => {}
        }
        let (mantissa, exp10) = match body.find(['e', 'E']) {
            Some(i) => (&body[..i], body[i + 1..].parse::<i64>().ok()?),
            None => (body, 0),
        };
        let (int_part, frac_part) = match mantissa.find('.') {
            Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
            None => (mantissa, ""),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return None;
        }
        if !int_part
            .bytes()
            .chain(frac_part.bytes())
            .all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let digits: BigUint = format!("{int_part}{frac_part}").parse().ok()?;
        let exp10 = exp10 - frac_part.len() as i64;
        Some(Number::from_ratio(neg, digits, exp10, PARSE_PREC))
    }

    /// `digits * 10^exp10`, correctly rounded to `prec` bits.
    fn from_ratio(neg: bool, digits: BigUint, exp10: i64, prec: u32) -> Number {
        if exp10 >= 0 {
            let ten = BigUint::from(10u32).pow(exp10 as u32);
            Number::rounded(neg, digits * ten, 0, prec, false)
        } else {
            let den = BigUint::from(10u32).pow((-exp10) as u32);
            Number::divide_exact(neg, digits, 0, den, 0, prec)
        }
    }

    /// `(n * 2^ne) / (d * 2^de)` rounded to `prec` bits.
    fn divide_exact(neg: bool, n: BigUint, ne: i64, d: BigUint, de: i64, prec: u32) -> Number {
        if n.is_zero() {
            return Number::rounded(neg, n, 0, prec, false);
        }
        let want = i64::from(prec) + 2;
        let shift = (want - (n.bits() as i64 - d.bits() as i64)).max(0) + 1;
        let (q, r) = (n << shift as u64).div_rem(&d);
        Number::rounded(neg, q, ne - de - shift, prec, !r.is_zero())
    }

    pub fn prec(&self) -> u32 {
        self.prec
    }

    pub fn is_zero(&self) -> bool {
        !self.inf && self.mant.is_zero()
    }

    pub fn is_infinite(&self) -> bool {
        self.inf
    }

    pub fn is_negative(&self) -> bool {
        self.neg && !self.is_zero()
    }

    /// Whether the value is a whole number (infinity is not).
    pub fn is_integer(&self) -> bool {
        !self.inf && (self.mant.is_zero() || self.exp >= 0)
    }

    fn max_prec(&self, other: &Number) -> u32 {
        self.prec.max(other.prec)
    }

    pub fn neg(&self) -> Number {
        let mut n = self.clone();
        n.neg = !n.neg;
        n
    }

    pub fn abs(&self) -> Number {
        let mut n = self.clone();
        n.neg = false;
        n
    }

    fn signed_mant(&self) -> BigInt {
        BigInt::from_biguint(
            if self.neg { Sign::Minus } else { Sign::Plus },
            self.mant.clone(),
        )
    }

    pub fn add(&self, other: &Number) -> Result<Number, NotANumber> {
        let prec = self.max_prec(other);
        match (self.inf, other.inf) {
            (true, true) if self.neg != other.neg => return Err(NotANumber),
            (true, _) => return Ok(Number::infinity(self.neg)),
            (_, true) => return Ok(Number::infinity(other.neg)),
            _ => {}
        }
        if self.is_zero() && other.is_zero() {
            return Ok(Number::rounded(
                self.neg && other.neg,
                BigUint::zero(),
                0,
                prec,
                false,
            ));
        }
        let e = self.exp.min(other.exp);
        let a = self.signed_mant() << (self.exp - e) as u64;
        let b = other.signed_mant() << (other.exp - e) as u64;
        let sum = a + b;
        Ok(Number::rounded(
            sum.sign() == Sign::Minus,
            sum.magnitude().clone(),
            e,
            prec,
            false,
        ))
    }

    pub fn sub(&self, other: &Number) -> Result<Number, NotANumber> {
        self.add(&other.neg())
    }

    pub fn mul(&self, other: &Number) -> Result<Number, NotANumber> {
        self.mul_at(other, self.max_prec(other))
    }

    fn mul_at(&self, other: &Number, prec: u32) -> Result<Number, NotANumber> {
        let neg = self.neg != other.neg;
        if self.inf || other.inf {
            if self.is_zero() || other.is_zero() {
                return Err(NotANumber);
            }
            return Ok(Number::infinity(neg));
        }
        let m = &self.mant * &other.mant;
        Ok(Number::rounded(neg, m, self.exp + other.exp, prec, false))
    }

    pub fn div(&self, other: &Number) -> Result<Number, NotANumber> {
        let prec = self.max_prec(other);
        let neg = self.neg != other.neg;
        match (self.inf, other.inf) {
            (true, true) => return Err(NotANumber),
            (true, false) => return Ok(Number::infinity(neg)),
            (false, true) => return Ok(Number::rounded(neg, BigUint::zero(), 0, prec, false)),
            _ => {}
        }
        if other.is_zero() {
            if self.is_zero() {
                return Err(NotANumber);
            }
            return Ok(Number::infinity(neg));
        }
        Ok(Number::divide_exact(
            neg,
            self.mant.clone(),
            self.exp,
            other.mant.clone(),
            other.exp,
            prec,
        ))
    }

    /// Terraform's `%`: `a - trunc(a/b)*b`, computed as cty computes it.
    pub fn rem(&self, other: &Number) -> Result<Number, NotANumber> {
        if self.inf {
            return self.mul(other);
        }
        if other.inf {
            return Ok(self.clone());
        }
        if other.is_zero() {
            return Ok(self.clone());
        }
        let q = self.div(other)?.trunc_bigint();
        let work_prec = (q.bits() as u32).max(INT_PREC);
        let work = Number::from_bigint(&q, work_prec).mul_at(other, work_prec)?;
        let diff = self.add(&work.neg())?;
        Ok(Number::rounded(
            diff.neg,
            diff.mant.clone(),
            diff.exp,
            work_prec,
            false,
        ))
    }

    /// The integer part, rounded toward zero (infinity must be excluded).
    pub fn trunc_bigint(&self) -> BigInt {
        let mag = if self.exp >= 0 {
            &self.mant << self.exp as u64
        } else {
            &self.mant >> (-self.exp) as u64
        };
        BigInt::from_biguint(if self.neg { Sign::Minus } else { Sign::Plus }, mag)
    }

    pub fn floor(&self) -> Number {
        if self.inf || self.is_integer() {
            return self.clone();
        }
        let mut t = self.trunc_bigint();
        if self.neg {
            t -= 1;
        }
        Number::from_bigint(&t, self.prec)
    }

    pub fn ceil(&self) -> Number {
        if self.inf || self.is_integer() {
            return self.clone();
        }
        let mut t = self.trunc_bigint();
        if !self.neg {
            t += 1;
        }
        Number::from_bigint(&t, self.prec)
    }

    pub fn to_i64(&self) -> Option<i64> {
        if self.inf || !self.is_integer() {
            return None;
        }
        self.trunc_bigint().to_i64()
    }

    pub fn to_f64(&self) -> f64 {
        if self.inf {
            return if self.neg {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
        }
        let r = Number::rounded(self.neg, self.mant.clone(), self.exp, FLOAT_PREC, false);
        let m = r.mant.to_f64().unwrap_or(0.0);
        let v = m * 2f64.powi(r.exp.clamp(-2000, 2000) as i32);
        if r.neg {
            -v
        } else {
            v
        }
    }

    /// Numeric comparison (zeroes of either sign are equal).
    pub fn compare(&self, other: &Number) -> Ordering {
        let sign = |n: &Number| -> i8 {
            if n.is_zero() {
                0
            } else if n.neg {
                -1
            } else {
                1
            }
        };
        let (sa, sb) = (sign(self), sign(other));
        if sa != sb || sa == 0 {
            return sa.cmp(&sb);
        }
        let mag = match (self.inf, other.inf) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => {
                let e = self.exp.min(other.exp);
                let a = &self.mant << (self.exp - e) as u64;
                let b = &other.mant << (other.exp - e) as u64;
                a.cmp(&b)
            }
        };
        if sa < 0 {
            mag.reverse()
        } else {
            mag
        }
    }

    /// Equality as cty defines it: integers exactly, fractions by their
    /// shortest decimal text.
    pub fn equals(&self, other: &Number) -> bool {
        if self.inf || other.inf {
            return self.inf == other.inf && self.neg == other.neg;
        }
        if self.is_integer() && other.is_integer() {
            return self.compare(other) == Ordering::Equal;
        }
        if self.is_integer() != other.is_integer() {
            return false;
        }
        self.to_string_shortest() == other.to_string_shortest()
    }

    /// The exact decimal digits and decimal-point position of `m * 2^e`.
    fn decimal(mant: &BigUint, exp: i64) -> Decimal {
        if mant.is_zero() {
            return Decimal {
                digits: Vec::new(),
                dp: 0,
            };
        }
        let (digits, dp) = if exp >= 0 {
            let s = (mant << exp as u64).to_str_radix(10);
            let len = s.len() as i64;
            (s, len)
        } else {
            let k = (-exp) as u32;
            let s = (mant * BigUint::from(5u32).pow(k)).to_str_radix(10);
            let len = s.len() as i64;
            (s, len - i64::from(k))
        };
        let mut digits = digits.into_bytes();
        while digits.last() == Some(&b'0') {
            digits.pop();
        }
        Decimal { digits, dp }
    }

    /// Go's `Text('f', -1)`: the shortest decimal that reads back to this
    /// value at its precision, never in exponent form.
    pub fn to_string_shortest(&self) -> String {
        let sign = if self.neg { "-" } else { "" };
        if self.inf {
            return format!("{}Inf", if self.neg { "-" } else { "+" });
        }
        let mut d = Number::decimal(&self.mant, self.exp);
        if !d.digits.is_empty() {
            self.round_shortest(&mut d);
        }
        format!("{sign}{}", d.fixed())
    }

    /// Go's `Text('g', 10)`, used only to order sets of structural values.
    pub fn to_string_g10(&self) -> String {
        let sign = if self.neg { "-" } else { "" };
        if self.inf {
            return format!("{}Inf", if self.neg { "-" } else { "+" });
        }
        let mut d = Number::decimal(&self.mant, self.exp);
        if d.digits.is_empty() {
            return format!("{sign}0");
        }
        d.round(10);
        let exp = d.dp - 1;
        if !(-4..10).contains(&exp) {
            let mut s = String::new();
            s.push(d.digits[0] as char);
            if d.digits.len() > 1 {
                s.push('.');
                s.extend(d.digits[1..].iter().map(|&b| b as char));
            }
            let (es, ev) = if exp < 0 { ('-', -exp) } else { ('+', exp) };
            format!("{sign}{s}e{es}{ev:02}")
        } else {
            format!("{sign}{}", d.fixed())
        }
    }

    fn round_shortest(&self, d: &mut Decimal) {
        let mut mant = self.mant.clone();
        let mut exp = self.exp;
        let s = mant.bits() as i64 - (i64::from(self.prec) + 1);
        if s < 0 {
            mant <<= (-s) as u64;
        } else if s > 0 {
            mant >>= s as u64;
        }
        exp += s;
        let lower = Number::decimal(&(&mant - BigUint::one()), exp);
        let upper = Number::decimal(&(&mant + BigUint::one()), exp);
        let inclusive = !mant.bit(1);
        for i in 0..d.digits.len() {
            let m = d.digits[i];
            let l = lower.at(i);
            let u = upper.at(i);
            let okdown = l != m || inclusive && i + 1 == lower.digits.len();
            let okup = m != u && (inclusive || m + 1 < u || i + 1 < upper.digits.len());
            match (okdown, okup) {
                (true, true) => return d.round(i + 1),
                (true, false) => return d.round_down(i + 1),
                (false, true) => return d.round_up(i + 1),
                _ => {}
            }
        }
    }
}

/// A decimal mantissa `0.digits * 10^dp`, as Go's `math/big` uses it.
struct Decimal {
    digits: Vec<u8>,
    dp: i64,
}

impl Decimal {
    fn at(&self, i: usize) -> u8 {
        self.digits.get(i).copied().unwrap_or(b'0')
    }

    /// Rounds to `n` digits, half to even.
    fn round(&mut self, n: usize) {
        if n >= self.digits.len() {
            return;
        }
        let up = if self.digits[n] == b'5' && n + 1 == self.digits.len() {
            n > 0 && (self.digits[n - 1] - b'0') % 2 == 1
        } else {
            self.digits[n] >= b'5'
        };
        if up {
            self.round_up(n)
        } else {
            self.round_down(n)
        }
    }

    fn round_down(&mut self, n: usize) {
        if n >= self.digits.len() {
            return;
        }
        self.digits.truncate(n);
        while self.digits.last() == Some(&b'0') {
            self.digits.pop();
        }
    }

    fn round_up(&mut self, n: usize) {
        if n >= self.digits.len() {
            return;
        }
        let mut n = n;
        while n > 0 && self.digits[n - 1] >= b'9' {
            n -= 1;
        }
        if n == 0 {
            self.digits = vec![b'1'];
            self.dp += 1;
            return;
        }
        self.digits[n - 1] += 1;
        self.digits.truncate(n);
    }

    /// `%f` with exactly as many fraction digits as there are.
    fn fixed(&self) -> String {
        let mut s = String::new();
        if self.dp > 0 {
            for i in 0..self.dp as usize {
                s.push(self.at(i) as char);
            }
        } else {
            s.push('0');
        }
        let frac = self.digits.len() as i64 - self.dp;
        if frac > 0 {
            s.push('.');
            for i in 0..frac {
                let idx = self.dp + i;
                s.push(if idx < 0 {
                    '0'
                } else {
                    self.at(idx as usize) as char
                });
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Number {
        Number::parse(s).unwrap()
    }

    #[test]
    fn literals_print_as_written() {
        for s in [
            "0",
            "1",
            "0.1",
            "2.5",
            "123456789012345678901234567890",
            "0.00000000015",
        ] {
            assert_eq!(p(s).to_string_shortest(), s);
        }
        assert_eq!(p("3.0").to_string_shortest(), "3");
        assert_eq!(p("1e21").to_string_shortest(), "1000000000000000000000");
    }

    /// Number text as go-cty reads and writes it (`ParseNumberVal`, then
    /// `Text('f', -1)`): normalised, never with an exponent; a negative
    /// zero keeps its sign, and a huge exponent is a number.
    #[test]
    fn texts_normalise_as_go_cty_does() {
        for (text, want) in [
            ("0", "0"),
            ("-0", "-0"),
            ("007", "7"),
            ("1.50", "1.5"),
            ("-0.250", "-0.25"),
            ("1e3", "1000"),
            ("1.5e-3", "0.0015"),
            (
                "12345678901234567890123456789",
                "12345678901234567890123456789",
            ),
            (".5", "0.5"),
        ] {
            assert_eq!(p(text).to_string_shortest(), want, "{text}");
        }
        assert_eq!(
            p("1e99999").to_string_shortest(),
            format!("1{}", "0".repeat(99999))
        );
        for bad in ["", "-", "1.2.3", "abc", "1e", "0x10"] {
            assert!(Number::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn arithmetic_rounds_at_512_bits() {
        assert_eq!(p("0.1").add(&p("0.2")).unwrap().to_string_shortest(), "0.3");
        let third = p("1").div(&p("3")).unwrap().to_string_shortest();
        assert_eq!(third.len(), 157);
        assert!(third.ends_with("35"));
        assert_eq!(
            p("2")
                .div(&p("3"))
                .unwrap()
                .mul(&p("3"))
                .unwrap()
                .to_string_shortest(),
            "2"
        );
    }

    #[test]
    fn float64_values_print_at_53_bits() {
        assert_eq!(
            Number::from_f64(2f64.powi(64)).to_string_shortest(),
            "18446744073709550000"
        );
        assert_eq!(Number::from_f64(0.1).to_string_shortest(), "0.1");
    }

    #[test]
    fn remainder_truncates_toward_zero() {
        assert_eq!(p("-5").rem(&p("3")).unwrap().to_string_shortest(), "-2");
        assert_eq!(p("5.5").rem(&p("2")).unwrap().to_string_shortest(), "1.5");
        assert_eq!(p("5").rem(&p("0")).unwrap().to_string_shortest(), "5");
    }

    #[test]
    fn division_by_zero_is_infinite_unless_nan() {
        assert_eq!(p("1").div(&p("0")).unwrap().to_string_shortest(), "+Inf");
        assert!(p("0").div(&p("0")).is_err());
    }
}
