//! IEEE 754 binary16 (OpenCL's `half`), the one codec every stage uses:
//! manifests writing `half` inputs, the interpreter's conversions and
//! `vload_half`/`vstore_half` (in any rounding mode, which general-purpose
//! half-float crates do not offer), benchmark constants, and output dumps.

/// How a conversion to a narrower float rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    NearestEven,
    TowardZero,
    TowardPositive,
    TowardNegative,
}

/// The value of half-precision bits (exact in f32).
pub fn to_f32(h: u16) -> f32 {
    let sign = ((h & 0x8000) as u32) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    match exp {
        0 => {
            let v = man as f32 * (2f32).powi(-24);
            if sign != 0 {
                -v
            } else {
                v
            }
        }
        31 => f32::from_bits(sign | 0x7f80_0000 | (man << 13)),
        _ => f32::from_bits(sign | ((exp + 112) << 23) | (man << 13)),
    }
}

/// The value of half-precision bits.
pub fn to_f64(h: u16) -> f64 {
    f64::from(to_f32(h))
}

/// `x` as half-precision bits in one rounding, in any mode: the magnitude
/// is scaled to an integer count of the half-precision quantum at its
/// exponent (exact, a power-of-two scaling), rounded, and re-assembled; a
/// carry into the next binade or out of the subnormals falls out of the
/// same sum.
pub fn from_f64(x: f64, rounding: Rounding) -> u16 {
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    if x.is_nan() {
        // A quiet NaN keeping the top payload bits.
        return sign | 0x7e00 | ((x.to_bits() >> 42) & 0x1ff) as u16;
    }
    let a = x.abs();
    // Rounding the magnitude: up for modes rounding away from this sign.
    let up = match rounding {
        Rounding::TowardPositive => sign == 0,
        Rounding::TowardNegative => sign != 0,
        _ => false,
    };
    let overflow = || {
        if rounding == Rounding::NearestEven || up {
            sign | 0x7c00
        } else {
            sign | 0x7bff
        }
    };
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    let exponent = (((a.to_bits() >> 52) & 0x7ff) as i32 - 1023).max(-14);
    if exponent > 15 {
        return overflow();
    }
    let quantum = 2f64.powi(exponent - 10);
    let m = a / quantum;
    let k = match rounding {
        Rounding::NearestEven => m.round_ties_even(),
        _ if up => m.ceil(),
        _ => m.trunc(),
    } as u32;
    let bits = (((exponent + 15) as u32) << 10) + k - 1024;
    if bits >= 0x7c00 {
        return overflow();
    }
    sign | bits as u16
}

/// `x` as half-precision bits, rounded to nearest, ties to even (an f32
/// widens to f64 exactly, so this rounds once).
pub fn from_f32(x: f32) -> u16 {
    from_f64(f64::from(x), Rounding::NearestEven)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_even_rounds_once_and_saturates() {
        let near = |x: f64| from_f64(x, Rounding::NearestEven);
        assert_eq!(near(1.0), 0x3c00);
        assert_eq!(near(-2.0), 0xc000);
        assert_eq!(near(3.0), 0x4200);
        assert_eq!(near(65504.0), 0x7bff);
        assert_eq!(near(65520.0), 0x7c00); // rounds up to infinity
        assert_eq!(near(1e6), 0x7c00);
        assert_eq!(near(0.1), 0x2e66);
        assert_eq!(from_f32(0.1), 0x2e66);
        assert_eq!(near(1.0 + 2f64.powi(-11)), 0x3c00); // tie, to even
        assert_eq!(near(1.0 + 3.0 * 2f64.powi(-11)), 0x3c02); // tie, to even
        assert_eq!(near(2f64.powi(-24)), 0x0001); // smallest subnormal
        assert_eq!(near(2f64.powi(-26)), 0x0000);
        assert_eq!(near(f64::NAN) & 0x7e00, 0x7e00);
    }

    #[test]
    fn directed_modes_round_toward_their_side() {
        let x = 1.0 + 2f64.powi(-12); // between 0x3c00 and 0x3c01
        assert_eq!(from_f64(x, Rounding::TowardZero), 0x3c00);
        assert_eq!(from_f64(x, Rounding::TowardPositive), 0x3c01);
        assert_eq!(from_f64(-x, Rounding::TowardPositive), 0xbc00);
        assert_eq!(from_f64(-x, Rounding::TowardNegative), 0xbc01);
        // Overflow saturates to the largest finite value toward zero.
        assert_eq!(from_f64(1e6, Rounding::TowardZero), 0x7bff);
    }

    #[test]
    fn halves_decode() {
        assert_eq!(to_f64(0x3c00), 1.0);
        assert_eq!(to_f64(0xc000), -2.0);
        assert_eq!(to_f64(0x0001), 2f64.powi(-24));
        assert_eq!(to_f32(0x7bff), 65504.0);
        assert!(to_f64(0x7e00).is_nan());
        assert_eq!(to_f64(0xfc00), f64::NEG_INFINITY);
    }
}
