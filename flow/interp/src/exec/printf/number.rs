//! One value converted as C's printf converts it: integers in every base,
//! floats in fixed, exponent, general and hexadecimal form, pointers, and
//! the padding of a field to its width.
//!
//! Decimal forms of floats come from Rust's formatting, which gives the
//! exact decimal value rounded once, ties to even, as glibc does; only
//! the spelling around the digits is C's.

use super::Spec;
use crate::opencl_std as math;

/// Pads `prefix` (sign, `0x`) and `body` to the field's width: with spaces
/// on the left, spaces on the right (`-`), or zeros between the two (`0`,
/// where `zeros` says the conversion takes them).
pub(super) fn pad(spec: &Spec, prefix: &[u8], body: &[u8], zeros: bool, out: &mut Vec<u8>) {
    let fill = spec.width.saturating_sub(prefix.len() + body.len());
    let filler = |c: u8, out: &mut Vec<u8>| out.extend(std::iter::repeat_n(c, fill));
    if spec.flags.minus {
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
        filler(b' ', out);
    } else if zeros && spec.flags.zero {
        out.extend_from_slice(prefix);
        filler(b'0', out);
        out.extend_from_slice(body);
    } else {
        filler(b' ', out);
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
    }
}

/// `d i o u x X` of `value`, an integer of `bits` (masked to them).
pub(super) fn integer(spec: &Spec, value: u64, bits: u8, out: &mut Vec<u8>) {
    let signed = matches!(spec.conv, b'd' | b'i');
    let (negative, magnitude) = if signed {
        let v = math::sext(value, bits);
        (v < 0, v.unsigned_abs())
    } else {
        (false, value)
    };
    let mut digits = match spec.conv {
        b'o' => format!("{magnitude:o}"),
        b'x' => format!("{magnitude:x}"),
        b'X' => format!("{magnitude:X}"),
        _ => magnitude.to_string(),
    };
    // The precision is the fewest digits; 0 prints nothing of a 0.
    if spec.precision == Some(0) && magnitude == 0 {
        digits.clear();
    }
    let least = spec.precision.unwrap_or(1);
    if digits.len() < least {
        digits.insert_str(0, &"0".repeat(least - digits.len()));
    }
    // `#o` makes the first digit a 0; `#x` prefixes 0x to what is not 0.
    if spec.conv == b'o' && spec.flags.hash && !digits.starts_with('0') {
        digits.insert(0, '0');
    }
    let mut prefix = sign(spec, negative, signed).to_vec();
    if spec.flags.hash && magnitude != 0 && matches!(spec.conv, b'x' | b'X') {
        prefix.extend_from_slice(if spec.conv == b'x' { b"0x" } else { b"0X" });
    }
    // With a precision, `0` is ignored.
    pad(
        spec,
        &prefix,
        digits.as_bytes(),
        spec.precision.is_none(),
        out,
    );
}

/// The sign a number is printed with: `-`, or `+` and ` ` by the flags
/// where the conversion is signed.
fn sign(spec: &Spec, negative: bool, signed: bool) -> &'static [u8] {
    match () {
        _ if negative => b"-",
        _ if signed && spec.flags.plus => b"+",
        _ if signed && spec.flags.space => b" ",
        _ => b"",
    }
}

/// `%p`: as glibc prints it, `0x` and the hexadecimal value (here clflow's
/// own encoding of the pointer), or `(nil)`.
pub(super) fn pointer(spec: &Spec, value: u64, out: &mut Vec<u8>) {
    if value == 0 {
        return pad(spec, b"", b"(nil)", false, out);
    }
    let mut digits = format!("{value:x}");
    let least = spec.precision.unwrap_or(1);
    if digits.len() < least {
        digits.insert_str(0, &"0".repeat(least - digits.len()));
    }
    let mut prefix = sign(spec, false, true).to_vec();
    prefix.extend_from_slice(b"0x");
    pad(
        spec,
        &prefix,
        digits.as_bytes(),
        spec.precision.is_none(),
        out,
    );
}

/// `f F e E g G a A` of `x`.
pub(super) fn float(spec: &Spec, x: f64, out: &mut Vec<u8>) {
    let upper = spec.conv.is_ascii_uppercase();
    let hash = spec.flags.hash;
    let mut prefix = sign(spec, x.is_sign_negative(), true).to_vec();
    if !x.is_finite() {
        let body = match (x.is_nan(), upper) {
            (true, false) => "nan",
            (true, true) => "NAN",
            (false, false) => "inf",
            (false, true) => "INF",
        };
        return pad(spec, &prefix, body.as_bytes(), false, out);
    }
    let a = x.abs();
    let body = match spec.conv.to_ascii_lowercase() {
        b'f' => fixed(a, spec.precision.unwrap_or(6), hash),
        b'e' => exponent(a, spec.precision.unwrap_or(6), hash, upper),
        b'g' => general(a, spec.precision, hash, upper),
        _ => {
            prefix.extend_from_slice(if upper { b"0X" } else { b"0x" });
            hex(a, spec.precision, hash, upper)
        }
    };
    pad(spec, &prefix, body.as_bytes(), true, out);
}

/// `%f`: `precision` digits after the point; `#` keeps the point.
fn fixed(a: f64, precision: usize, hash: bool) -> String {
    let mut s = format!("{a:.precision$}");
    if precision == 0 && hash {
        s.push('.');
    }
    s
}

/// The mantissa and the decimal exponent of `a` in `%e` form.
fn split_exponent(a: f64, precision: usize) -> (String, i32) {
    let s = format!("{a:.precision$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    (mantissa.to_string(), exp.parse().unwrap_or(0))
}

/// `%e`: one digit, the point and `precision` digits, then the exponent
/// signed and of two digits at least.
fn exponent(a: f64, precision: usize, hash: bool, upper: bool) -> String {
    let (mut mantissa, exp) = split_exponent(a, precision);
    if precision == 0 && hash {
        mantissa.push('.');
    }
    let e = if upper { 'E' } else { 'e' };
    let s = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}{e}{s}{:02}", exp.unsigned_abs())
}

/// `%g`: `%e` where the exponent X (after rounding to P significant digits)
/// is below -4 or at least P, else `%f` with P - 1 - X digits; trailing
/// zeros and a bare point dropped unless `#`.
fn general(a: f64, precision: Option<usize>, hash: bool, upper: bool) -> String {
    let p = match precision {
        None => 6,
        Some(0) => 1,
        Some(p) => p,
    };
    let (_, x) = split_exponent(a, p - 1);
    let mut s = if x < -4 || x >= p as i32 {
        exponent(a, p - 1, hash, upper)
    } else {
        fixed(a, (p as i32 - 1 - x) as usize, hash)
    };
    if !hash {
        let end = s.find(['e', 'E']).unwrap_or(s.len());
        if s[..end].contains('.') {
            let kept = s[..end].trim_end_matches('0').trim_end_matches('.').len();
            s.replace_range(kept..end, "");
        }
    }
    s
}

/// `%a` after the `0x`: the leading digit (0 for subnormals, whose exponent
/// is then -1022, as glibc prints them), the point and the hexadecimal
/// digits of the fraction, all of them that are not trailing zeros or
/// `precision` of them rounded to nearest, ties to even (a carry makes the
/// leading digit 2, as in glibc), then `p` and the binary exponent.
fn hex(a: f64, precision: Option<usize>, hash: bool, upper: bool) -> String {
    const FRACTION: usize = 13;
    let bits = a.to_bits();
    let biased = (bits >> 52) as i32;
    let fraction = bits & ((1 << 52) - 1);
    let (lead, exp) = match (biased, fraction) {
        (0, 0) => (0, 0),
        (0, _) => (0, -1022),
        _ => (1, biased - 1023),
    };
    let (lead, fraction, digits) = match precision {
        None => {
            let zeros = if fraction == 0 {
                FRACTION
            } else {
                (fraction.trailing_zeros() / 4) as usize
            };
            (lead, fraction >> (4 * zeros), FRACTION - zeros)
        }
        Some(p) if p >= FRACTION => (lead, fraction, FRACTION),
        Some(p) => {
            let dropped = 4 * (FRACTION - p) as u32;
            let whole = ((lead as u64) << 52) | fraction;
            let mut kept = whole >> dropped;
            let rest = whole & ((1 << dropped) - 1);
            let half = 1 << (dropped - 1);
            if rest > half || rest == half && kept & 1 == 1 {
                kept += 1;
            }
            let p4 = 4 * p as u32;
            ((kept >> p4) as i32, kept & math::mask(p4 as u8), p)
        }
    };
    let mut s = format!("{lead:x}");
    if digits > 0 || hash {
        s.push('.');
    }
    if digits > 0 {
        s.push_str(&format!("{fraction:0digits$x}"));
    }
    if let Some(p) = precision.filter(|&p| p > FRACTION) {
        s.push_str(&"0".repeat(p - FRACTION));
    }
    s.push_str(&format!(
        "p{}{}",
        if exp < 0 { '-' } else { '+' },
        exp.unsigned_abs()
    ));
    if upper {
        s.make_ascii_uppercase();
    }
    s
}
