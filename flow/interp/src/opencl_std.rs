//! Lane-wise semantics of the arithmetic instructions and of the OpenCL.std
//! extended instructions: integers at every width held in `u64`, floats as
//! their bit patterns.
//!
//! Floats are computed in `f64` and rounded once to their width: exact for
//! `+ - * / sqrt` and fused multiply-add at 32 bits (f32 is evaluated with
//! `mul_add` itself), and within OpenCL's ULP limits for the transcendental
//! functions (`libm`'s double-precision erf, erfc, tgamma, lgamma_r and
//! remquo, rounded once to the width). Results narrower than their
//! computation are rounded exactly once: `f64` straight to half, never
//! through `f32`.

use crate::error::TrapKind;
use clflow_bytecode::*;

#[inline]
pub fn mask(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

#[inline]
pub fn sext(value: u64, bits: u8) -> i64 {
    let shift = 64 - bits as u32;
    ((value << shift) as i64) >> shift
}

fn smin(bits: u8) -> i64 {
    if bits >= 64 {
        i64::MIN
    } else {
        -(1i64 << (bits - 1))
    }
}

fn smax(bits: u8) -> i64 {
    if bits >= 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    }
}

fn sat_signed(v: i128, bits: u8) -> u64 {
    (v.clamp(smin(bits) as i128, smax(bits) as i128) as i64 as u64) & mask(bits)
}

fn sat_unsigned(v: i128, bits: u8) -> u64 {
    v.clamp(0, mask(bits) as i128) as u64
}

#[inline]
pub fn int_bin(op: IntOp, bits: u8, a: u64, b: u64) -> Result<u64, TrapKind> {
    let m = mask(bits);
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    let shift = (b % bits as u64) as u32;
    let r = match op {
        IntOp::Add => a.wrapping_add(b),
        IntOp::Sub => a.wrapping_sub(b),
        IntOp::Mul => a.wrapping_mul(b),
        IntOp::And => a & b,
        IntOp::Or => a | b,
        IntOp::Xor => a ^ b,
        // Shifts count modulo the width, as OpenCL C defines them.
        IntOp::Shl => a << shift,
        IntOp::LShr => a >> shift,
        IntOp::AShr => (sa >> shift) as u64,
        IntOp::UDiv | IntOp::UMod | IntOp::SDiv | IntOp::SRem | IntOp::SMod if b == 0 => {
            return Err(TrapKind::DivisionByZero)
        }
        IntOp::UDiv => a / b,
        IntOp::UMod => a % b,
        IntOp::SDiv => sa.wrapping_div(sb) as u64,
        IntOp::SRem => sa.wrapping_rem(sb) as u64,
        IntOp::SMod => {
            let r = sa.wrapping_rem(sb);
            (if r != 0 && (r < 0) != (sb < 0) {
                r + sb
            } else {
                r
            }) as u64
        }
        IntOp::SAbsDiff => (sa as i128 - sb as i128).unsigned_abs() as u64,
        IntOp::UAbsDiff => a.abs_diff(b),
        IntOp::SAddSat => sat_signed(sa as i128 + sb as i128, bits),
        IntOp::UAddSat => sat_unsigned(a as i128 + b as i128, bits),
        IntOp::SSubSat => sat_signed(sa as i128 - sb as i128, bits),
        IntOp::USubSat => sat_unsigned(a as i128 - b as i128, bits),
        IntOp::SHadd => ((sa as i128 + sb as i128) >> 1) as u64,
        IntOp::UHadd => ((a as u128 + b as u128) >> 1) as u64,
        IntOp::SRhadd => ((sa as i128 + sb as i128 + 1) >> 1) as u64,
        IntOp::URhadd => ((a as u128 + b as u128 + 1) >> 1) as u64,
        IntOp::SMax => sa.max(sb) as u64,
        IntOp::UMax => a.max(b),
        IntOp::SMin => sa.min(sb) as u64,
        IntOp::UMin => a.min(b),
        IntOp::SMulHi => ((sa as i128 * sb as i128) >> bits) as u64,
        IntOp::UMulHi => ((a as u128 * b as u128) >> bits) as u64,
        IntOp::Rotate => {
            if shift == 0 {
                a
            } else {
                (a << shift) | (a >> (bits as u32 - shift))
            }
        }
        IntOp::SMul24 => (sext(a, 24).wrapping_mul(sext(b, 24))) as u64,
        IntOp::UMul24 => (a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF),
    };
    Ok(r & m)
}

#[inline]
pub fn int_un(op: IntUnOp, bits: u8, a: u64) -> u64 {
    let m = mask(bits);
    let r = match op {
        IntUnOp::Neg => a.wrapping_neg(),
        IntUnOp::Not => !a,
        IntUnOp::BitCount => a.count_ones() as u64,
        IntUnOp::BitReverse => a.reverse_bits() >> (64 - bits as u32),
        IntUnOp::SAbs => sext(a, bits).unsigned_abs(),
        IntUnOp::UAbs => a,
        IntUnOp::Clz => (a.leading_zeros() - (64 - bits as u32)) as u64,
        IntUnOp::Ctz => {
            if a == 0 {
                bits as u64
            } else {
                a.trailing_zeros() as u64
            }
        }
    };
    r & m
}

pub fn int_ter(op: IntTerOp, bits: u8, a: u64, b: u64, c: u64) -> u64 {
    let (sa, sb, sc) = (sext(a, bits), sext(b, bits), sext(c, bits));
    let r = match op {
        IntTerOp::SClamp => sa.max(sb).min(sc) as u64,
        IntTerOp::UClamp => a.max(b).min(c),
        IntTerOp::SMadHi => (((sa as i128 * sb as i128) >> bits) as u64).wrapping_add(c),
        IntTerOp::UMadHi => (((a as u128 * b as u128) >> bits) as u64).wrapping_add(c),
        IntTerOp::SMadSat => sat_signed(sa as i128 * sb as i128 + sc as i128, bits),
        IntTerOp::UMadSat => sat_unsigned(a as i128 * b as i128 + c as i128, bits),
        IntTerOp::SMad24 => sext(a, 24).wrapping_mul(sext(b, 24)).wrapping_add(sc) as u64,
        IntTerOp::UMad24 => (a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF).wrapping_add(c),
        IntTerOp::Bitselect => (a & !c) | (b & c),
    };
    r & mask(bits)
}

#[inline]
pub fn cmp(op: CmpOp, bits: u8, a: u64, b: u64) -> bool {
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::ULt => a < b,
        CmpOp::ULe => a <= b,
        CmpOp::UGt => a > b,
        CmpOp::UGe => a >= b,
        CmpOp::SLt => sa < sb,
        CmpOp::SLe => sa <= sb,
        CmpOp::SGt => sa > sb,
        CmpOp::SGe => sa >= sb,
    }
}

// ---- floats -------------------------------------------------------------

pub use clflow_core::half::{from_f64 as f64_to_f16, to_f32 as f16_to_f32};

/// f32 to f16 with an explicit rounding mode (vstore_half_rtz and friends).
pub fn f32_to_f16_rounded(x: f32, rounding: Rounding) -> u16 {
    f64_to_f16(x as f64, rounding)
}

#[inline]
pub fn to_f64(bits: u8, v: u64) -> f64 {
    match bits {
        64 => f64::from_bits(v),
        32 => f32::from_bits(v as u32) as f64,
        _ => f16_to_f32(v as u16) as f64,
    }
}

#[inline]
pub fn from_f64(bits: u8, x: f64) -> u64 {
    match bits {
        64 => x.to_bits(),
        32 => (x as f32).to_bits() as u64,
        _ => f64_to_f16(x, Rounding::NearestEven) as u64,
    }
}

#[inline]
pub fn float_bin(op: FloatOp, bits: u8, a: u64, b: u64) -> u64 {
    let (x, y) = (to_f64(bits, a), to_f64(bits, b));
    let r = match op {
        FloatOp::Add => x + y,
        FloatOp::Sub => x - y,
        FloatOp::Mul => x * y,
        FloatOp::Div => x / y,
        FloatOp::Rem => x % y,
        FloatOp::Mod => {
            let r = x % y;
            if r != 0.0 && (r < 0.0) != (y < 0.0) {
                r + y
            } else {
                r
            }
        }
        FloatOp::Atan2 => x.atan2(y),
        FloatOp::Atan2Pi => x.atan2(y) / std::f64::consts::PI,
        FloatOp::Copysign => x.copysign(y),
        FloatOp::Fdim => {
            if x > y {
                x - y
            } else if x.is_nan() || y.is_nan() {
                f64::NAN
            } else {
                0.0
            }
        }
        FloatOp::Fmax => x.max(y),
        FloatOp::Fmin => x.min(y),
        FloatOp::Hypot => x.hypot(y),
        FloatOp::Nextafter => return next_after(bits, a, b),
        FloatOp::Pow | FloatOp::Powr => x.powf(y),
        FloatOp::Remainder => libm::remainder(x, y),
        FloatOp::RemquoQuotient => return int_result(libm::remquo(x, y).1),
        FloatOp::Maxmag => {
            if x.abs() > y.abs() {
                x
            } else if y.abs() > x.abs() {
                y
            } else {
                x.max(y)
            }
        }
        FloatOp::Minmag => {
            if x.abs() < y.abs() {
                x
            } else if y.abs() < x.abs() {
                y
            } else {
                x.min(y)
            }
        }
        FloatOp::Step => {
            if y < x {
                0.0
            } else {
                1.0
            }
        }
        FloatOp::Ldexp => x * 2f64.powi(sext(b, 32).clamp(-2000, 2000) as i32),
        FloatOp::Pown => x.powi(sext(b, 32) as i32),
        FloatOp::Rootn => x.powf(1.0 / sext(b, 32) as f64),
    };
    from_f64(bits, r)
}

fn next_after(bits: u8, a: u64, b: u64) -> u64 {
    let (x, y) = (to_f64(bits, a), to_f64(bits, b));
    if x.is_nan() || y.is_nan() {
        return from_f64(bits, f64::NAN);
    }
    if x == y {
        return b;
    }
    let sign_bit = 1u64 << (bits - 1);
    if x == 0.0 {
        return if y > 0.0 { 1 } else { sign_bit | 1 };
    }
    let up = (y > x) == (x > 0.0);
    if up {
        a + 1
    } else {
        a - 1
    }
}

/// An OpenCL `int` result of a float builtin, as its register holds it.
fn int_result(v: i32) -> u64 {
    v as u32 as u64
}

/// Explicit mantissa bits of a float width.
fn mantissa_bits(bits: u8) -> u32 {
    match bits {
        64 => 52,
        32 => 23,
        _ => 10,
    }
}

/// nan(code): a quiet NaN whose payload is the code's low bits.
fn quiet_nan(bits: u8, code: u64) -> u64 {
    let m = mantissa_bits(bits);
    let exponent_and_quiet = mask(bits - 1) & !mask((m - 1) as u8);
    exponent_and_quiet | (code & mask((m - 1) as u8))
}

/// ilogb with OpenCL's FP_ILOGB0 (INT_MIN) and FP_ILOGBNAN (INT_MAX).
fn ilogb(x: f64) -> i32 {
    if x.is_nan() || x.is_infinite() {
        i32::MAX
    } else if x == 0.0 {
        i32::MIN
    } else {
        libm::ilogb(x)
    }
}

#[inline]
pub fn float_un(op: FloatUnOp, bits: u8, a: u64) -> u64 {
    use std::f64::consts::PI;
    let x = to_f64(bits, a);
    let r = match op {
        FloatUnOp::Neg => return a ^ (1u64 << (bits - 1)),
        FloatUnOp::Fabs => return a & !(1u64 << (bits - 1)),
        FloatUnOp::Acos => x.acos(),
        FloatUnOp::Acosh => x.acosh(),
        FloatUnOp::Acospi => x.acos() / PI,
        FloatUnOp::Asin => x.asin(),
        FloatUnOp::Asinh => x.asinh(),
        FloatUnOp::Asinpi => x.asin() / PI,
        FloatUnOp::Atan => x.atan(),
        FloatUnOp::Atanh => x.atanh(),
        FloatUnOp::Atanpi => x.atan() / PI,
        FloatUnOp::Cbrt => x.cbrt(),
        FloatUnOp::Ceil => x.ceil(),
        FloatUnOp::Cos => x.cos(),
        FloatUnOp::Cosh => x.cosh(),
        FloatUnOp::Cospi => (x * PI).cos(),
        FloatUnOp::Exp => x.exp(),
        FloatUnOp::Exp2 => x.exp2(),
        FloatUnOp::Exp10 => 10f64.powf(x),
        FloatUnOp::Expm1 => x.exp_m1(),
        FloatUnOp::Floor => x.floor(),
        FloatUnOp::Log => x.ln(),
        FloatUnOp::Log2 => x.log2(),
        FloatUnOp::Log10 => x.log10(),
        FloatUnOp::Log1p => x.ln_1p(),
        FloatUnOp::Logb => {
            if x == 0.0 {
                f64::NEG_INFINITY
            } else if x.is_finite() {
                x.abs().log2().floor()
            } else {
                x.abs()
            }
        }
        FloatUnOp::Rint => x.round_ties_even(),
        FloatUnOp::Round => x.round(),
        FloatUnOp::Rsqrt => 1.0 / x.sqrt(),
        FloatUnOp::Sin => x.sin(),
        FloatUnOp::Sinh => x.sinh(),
        FloatUnOp::Sinpi => (x * PI).sin(),
        FloatUnOp::Sqrt => x.sqrt(),
        FloatUnOp::Tan => x.tan(),
        FloatUnOp::Tanh => x.tanh(),
        FloatUnOp::Tanpi => (x * PI).tan(),
        FloatUnOp::Trunc => x.trunc(),
        FloatUnOp::Recip => 1.0 / x,
        FloatUnOp::Degrees => x * (180.0 / PI),
        FloatUnOp::Radians => x * (PI / 180.0),
        FloatUnOp::Erf => libm::erf(x),
        FloatUnOp::Erfc => libm::erfc(x),
        FloatUnOp::Tgamma => libm::tgamma(x),
        FloatUnOp::Lgamma => libm::lgamma_r(x).0,
        FloatUnOp::LgammaSign => return int_result(libm::lgamma_r(x).1),
        FloatUnOp::Nan => return quiet_nan(bits, a),
        FloatUnOp::Ilogb => return int_result(ilogb(x)),
        FloatUnOp::FrexpMantissa => libm::frexp(x).0,
        FloatUnOp::FrexpExponent => return int_result(libm::frexp(x).1),
        FloatUnOp::ModfFraction => {
            if x.is_infinite() {
                0f64.copysign(x)
            } else {
                (x - x.trunc()).copysign(x)
            }
        }
        FloatUnOp::Fract => {
            if x.is_infinite() {
                0f64.copysign(x)
            } else if x == 0.0 || x.is_nan() {
                x
            } else {
                // The largest value below 1 at this width.
                let below_one = 1.0 - 2f64.powi(-(mantissa_bits(bits) as i32 + 1));
                (x - x.floor()).min(below_one)
            }
        }
        FloatUnOp::Sign => {
            if x.is_nan() {
                0.0
            } else if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                x
            }
        }
    };
    from_f64(bits, r)
}

pub fn float_ter(op: FloatTerOp, bits: u8, a: u64, b: u64, c: u64) -> u64 {
    if op == FloatTerOp::Fma && bits == 32 {
        let f = |v: u64| f32::from_bits(v as u32);
        return f(a).mul_add(f(b), f(c)).to_bits() as u64;
    }
    let (x, y, z) = (to_f64(bits, a), to_f64(bits, b), to_f64(bits, c));
    let r = match op {
        FloatTerOp::Fma => x.mul_add(y, z),
        FloatTerOp::Clamp => x.max(y).min(z),
        FloatTerOp::Mix => x + (y - x) * z,
        FloatTerOp::Smoothstep => {
            let t = ((z - x) / (y - x)).clamp(0.0, 1.0);
            t * t * (3.0 - 2.0 * t)
        }
    };
    from_f64(bits, r)
}

#[inline]
pub fn fcmp(op: FCmpOp, ordered: bool, bits: u8, a: u64, b: u64) -> bool {
    let (x, y) = (to_f64(bits, a), to_f64(bits, b));
    if x.is_nan() || y.is_nan() {
        return !ordered;
    }
    match op {
        FCmpOp::Eq => x == y,
        FCmpOp::Ne => x != y,
        FCmpOp::Lt => x < y,
        FCmpOp::Le => x <= y,
        FCmpOp::Gt => x > y,
        FCmpOp::Ge => x >= y,
        FCmpOp::Ord => ordered,
    }
}

pub fn ftest(op: FTestOp, bits: u8, a: u64) -> bool {
    let x = to_f64(bits, a);
    match op {
        FTestOp::IsNan => x.is_nan(),
        FTestOp::IsInf => x.is_infinite(),
        FTestOp::IsFinite => x.is_finite(),
        FTestOp::IsNormal => match bits {
            32 => f32::from_bits(a as u32).is_normal(),
            64 => x.is_normal(),
            _ => {
                let exp = (a >> 10) & 0x1f;
                exp != 0 && exp != 31
            }
        },
        FTestOp::SignBitSet => a >> (bits - 1) & 1 == 1,
    }
}

fn round_f64(x: f64, rounding: Rounding) -> f64 {
    match rounding {
        Rounding::NearestEven => x.round_ties_even(),
        Rounding::TowardZero => x.trunc(),
        Rounding::TowardPositive => x.ceil(),
        Rounding::TowardNegative => x.floor(),
    }
}

/// Steps an f32 one ULP toward +inf (`up`) or -inf.
fn f32_step(r: f32, up: bool) -> f32 {
    if r.is_nan() || r.is_infinite() && (r > 0.0) == up {
        return r;
    }
    if r == 0.0 {
        let tiny = f32::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let bits = r.to_bits();
    let away = (r > 0.0) == up;
    f32::from_bits(if away { bits + 1 } else { bits - 1 })
}

pub fn convert(kind: ConvKind, from: u8, to: u8, v: u64) -> u64 {
    match kind {
        ConvKind::IntToInt { signed_src, signed_dst, saturate } => {
            let wide: i128 = if signed_src {
                sext(v, from) as i128
            } else {
                v as i128
            };
            match (saturate, signed_dst) {
                (false, _) => (wide as u64) & mask(to),
                (true, true) => sat_signed(wide, to),
                (true, false) => sat_unsigned(wide, to),
            }
        }
        ConvKind::FloatToInt { signed, saturate, rounding } => {
            let x = round_f64(to_f64(from, v), rounding);
            if x.is_nan() {
                return 0;
            }
            // Rust's float-to-int casts saturate; an out-of-range conversion
            // without _sat is undefined in OpenCL, so saturating is allowed.
            let _ = saturate;
            if signed {
                let i = (x as i128).clamp(smin(to) as i128, smax(to) as i128);
                (i as i64 as u64) & mask(to)
            } else {
                (x.max(0.0) as u128).min(mask(to) as u128) as u64
            }
        }
        ConvKind::IntToFloat { signed, rounding } => {
            let exact: i128 = if signed {
                sext(v, from) as i128
            } else {
                v as i128
            };
            int_to_float(exact, to, rounding)
        }
        ConvKind::FloatToFloat { rounding } => {
            let x = to_f64(from, v);
            match to {
                64 => x.to_bits(),
                32 => {
                    let mut r = x as f32;
                    let back = r as f64;
                    if back != x && !x.is_nan() {
                        r = match rounding {
                            Rounding::NearestEven => r,
                            Rounding::TowardZero if back.abs() > x.abs() => f32_step(r, r < 0.0),
                            Rounding::TowardPositive if back < x => f32_step(r, true),
                            Rounding::TowardNegative if back > x => f32_step(r, false),
                            _ => r,
                        };
                    }
                    r.to_bits() as u64
                }
                _ => f64_to_f16(x, rounding) as u64,
            }
        }
    }
}

/// An integer (of at most 64 bits) to a float of `to` bits, rounded once
/// in `rounding`: the nearest value, stepped one ULP where the mode wants
/// the other neighbour.
fn int_to_float(exact: i128, to: u8, rounding: Rounding) -> u64 {
    match to {
        64 => {
            let r = exact as f64;
            let back = r as i128;
            let step = |up: bool| {
                let bits = r.to_bits();
                f64::from_bits(if (r > 0.0) == up { bits + 1 } else { bits - 1 })
            };
            let rounded = match rounding {
                Rounding::TowardZero if back.abs() > exact.abs() => step(r < 0.0),
                Rounding::TowardPositive if back < exact => step(true),
                Rounding::TowardNegative if back > exact => step(false),
                _ => r,
            };
            rounded.to_bits()
        }
        32 => {
            let r = exact as f32;
            let back = r as i128;
            let rounded = match rounding {
                Rounding::TowardZero if back.abs() > exact.abs() => f32_step(r, r < 0.0),
                Rounding::TowardPositive if back < exact => f32_step(r, true),
                Rounding::TowardNegative if back > exact => f32_step(r, false),
                _ => r,
            };
            rounded.to_bits() as u64
        }
        // Every integer a half can hold short of overflow (|x| < 65520) is
        // exact in f64, so this is one rounding.
        _ => f64_to_f16(exact as f64, rounding) as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_ops_wrap_and_saturate_at_their_width() {
        assert_eq!(int_bin(IntOp::Add, 8, 250, 10).unwrap(), 4);
        assert_eq!(
            int_bin(IntOp::SDiv, 32, (-7i32) as u32 as u64, 2).unwrap(),
            (-3i32) as u32 as u64
        );
        assert_eq!(
            int_bin(IntOp::SMod, 32, (-7i32) as u32 as u64, 3).unwrap(),
            2
        );
        assert_eq!(int_bin(IntOp::Rotate, 32, 0x8000_0001, 4).unwrap(), 0x18);
        assert_eq!(int_bin(IntOp::SAddSat, 8, 100, 100).unwrap(), 127);
        assert_eq!(int_bin(IntOp::UMulHi, 32, 0xFFFF_FFFF, 2).unwrap(), 1);
        assert_eq!(
            int_bin(IntOp::UDiv, 32, 1, 0),
            Err(TrapKind::DivisionByZero)
        );
        assert_eq!(int_un(IntUnOp::Clz, 16, 1), 15);
        assert_eq!(int_un(IntUnOp::Neg, 8, 1), 255);
        assert_eq!(int_ter(IntTerOp::UMad24, 32, 3, 4, 5), 17);
    }

    #[test]
    fn half_conversions_round_to_nearest_even() {
        for x in [0.0f32, 1.0, -2.5, 65504.0, 6.1035156e-5, 5.9604645e-8] {
            assert_eq!(
                f16_to_f32(f32_to_f16_rounded(x, Rounding::NearestEven)),
                x,
                "{x}"
            );
        }
        assert_eq!(
            f32_to_f16_rounded(1.0 + 1.0 / 4096.0, Rounding::NearestEven),
            0x3c00
        );
        assert_eq!(f32_to_f16_rounded(1e6, Rounding::NearestEven), 0x7c00);
        assert_eq!(
            f32_to_f16_rounded(1.0 + 3.0 / 4096.0, Rounding::TowardZero),
            0x3c00
        );
    }

    #[test]
    fn conversions_saturate_and_round() {
        let sat = ConvKind::IntToInt { signed_src: false, signed_dst: false, saturate: true };
        assert_eq!(convert(sat, 32, 8, 300), 255);
        let f2i = ConvKind::FloatToInt {
            signed: true,
            saturate: false,
            rounding: Rounding::TowardZero,
        };
        assert_eq!(
            convert(f2i, 32, 32, (-2.7f32).to_bits() as u64),
            (-2i32) as u32 as u64
        );
        let rtz = ConvKind::FloatToFloat { rounding: Rounding::TowardZero };
        let third = (1.0f64 / 3.0).to_bits();
        assert!(f32::from_bits(convert(rtz, 64, 32, third) as u32) as f64 <= 1.0 / 3.0);
    }

    #[test]
    fn float_compares_handle_nan() {
        let nan = f32::NAN.to_bits() as u64;
        assert!(!fcmp(FCmpOp::Eq, true, 32, nan, nan));
        assert!(fcmp(FCmpOp::Eq, false, 32, nan, nan));
        assert_eq!(
            float_ter(
                FloatTerOp::Fma,
                32,
                2f32.to_bits() as u64,
                3f32.to_bits() as u64,
                1f32.to_bits() as u64
            ),
            7f32.to_bits() as u64
        );
    }

    fn f(x: f32) -> u64 {
        x.to_bits() as u64
    }

    fn un(op: FloatUnOp, x: f32) -> f32 {
        f32::from_bits(float_un(op, 32, f(x)) as u32)
    }

    fn un64(op: FloatUnOp, x: f64) -> f64 {
        f64::from_bits(float_un(op, 64, x.to_bits()))
    }

    /// |got - want| in ULPs of f32 at `want`.
    fn ulps(got: f32, want: f64) -> f64 {
        let w = want as f32;
        let ulp = (f32::from_bits(w.abs().to_bits() + 1) - w.abs()) as f64;
        (got as f64 - want).abs() / ulp
    }

    #[test]
    fn erf_erfc_tgamma_lgamma_are_within_opencl_limits() {
        // Reference values to 16 digits; OpenCL allows 16 ULP for each.
        let cases: [(FloatUnOp, f32, f64); 9] = [
            (FloatUnOp::Erf, 0.5, 0.520_499_877_813_046_5),
            (FloatUnOp::Erf, -2.0, -0.995_322_265_018_952_7),
            (FloatUnOp::Erfc, 0.5, 0.479_500_122_186_953_5),
            (FloatUnOp::Erfc, 5.0, 1.537_459_794_428_034_8e-12),
            (FloatUnOp::Tgamma, 5.0, 24.0),
            (FloatUnOp::Tgamma, 0.5, 1.772_453_850_905_516),
            (FloatUnOp::Tgamma, -0.5, -3.544_907_701_811_032),
            (FloatUnOp::Lgamma, 0.5, 0.572_364_942_924_700_1),
            (FloatUnOp::Lgamma, 100.0, 359.134_205_369_575_4),
        ];
        for (op, x, want) in cases {
            let got = un(op, x);
            assert!(ulps(got, want) <= 1.0, "{op:?}({x}) = {got}, want {want}");
        }
        assert!((un64(FloatUnOp::Erf, 0.5) - 0.520_499_877_813_046_5).abs() < 1e-16);
        assert_eq!(un64(FloatUnOp::Tgamma, 11.0), 3_628_800.0);
        // lgamma_r's sign: gamma(-0.5) < 0, gamma(-1.5) > 0.
        assert_eq!(
            float_un(FloatUnOp::LgammaSign, 32, f(-0.5)),
            (-1i32) as u32 as u64
        );
        assert_eq!(float_un(FloatUnOp::LgammaSign, 32, f(-1.5)), 1);
        assert!(ulps(un(FloatUnOp::Lgamma, -0.5), 1.265_512_123_484_645_4) <= 1.0);
    }

    #[test]
    fn frexp_modf_fract_split_exactly() {
        assert_eq!(un(FloatUnOp::FrexpMantissa, 12.0), 0.75);
        assert_eq!(float_un(FloatUnOp::FrexpExponent, 32, f(12.0)), 4);
        // A subnormal float: 2^-140 = 0.5 * 2^-139.
        let tiny = f32::from_bits(1 << 9);
        assert_eq!(un(FloatUnOp::FrexpMantissa, tiny), 0.5);
        assert_eq!(
            float_un(FloatUnOp::FrexpExponent, 32, f(tiny)),
            (-139i32) as u32 as u64
        );
        assert_eq!(float_un(FloatUnOp::FrexpExponent, 32, f(0.0)), 0);
        assert_eq!(un(FloatUnOp::ModfFraction, -2.5), -0.5);
        assert_eq!(un(FloatUnOp::Trunc, -2.5), -2.0);
        let whole = un(FloatUnOp::ModfFraction, -2.0);
        assert!(whole == 0.0 && whole.is_sign_negative());
        let inf = un(FloatUnOp::ModfFraction, f32::NEG_INFINITY);
        assert!(inf == 0.0 && inf.is_sign_negative());
        // fract never reaches 1: -1e-10 - floor(-1e-10) rounds to 1.0f.
        assert_eq!(un(FloatUnOp::Fract, -1e-10).to_bits(), 0x3f7f_ffff);
        assert_eq!(un(FloatUnOp::Floor, -1e-10), -1.0);
        assert_eq!(un(FloatUnOp::Fract, 2.25), 0.25);
        assert_eq!(un64(FloatUnOp::Fract, -1e-300), 1.0 - f64::EPSILON / 2.0);
        assert!(un(FloatUnOp::Fract, f32::NAN).is_nan());
    }

    #[test]
    fn remquo_gives_the_remainder_and_the_quotients_low_bits() {
        let rem =
            |x: f32, y: f32| f32::from_bits(float_bin(FloatOp::Remainder, 32, f(x), f(y)) as u32);
        let quo = |x: f32, y: f32| float_bin(FloatOp::RemquoQuotient, 32, f(x), f(y)) as u32 as i32;
        // 7/2 = 3.5 rounds to the even 4: 7 - 8 = -1.
        assert_eq!((rem(7.0, 2.0), quo(7.0, 2.0)), (-1.0, 4));
        assert_eq!((rem(-7.0, 2.0), quo(-7.0, 2.0) & 7), (1.0, -4 & 7));
        assert!(quo(-7.0, 2.0) < 0);
        // Exact even when x/y is far beyond 2^24 (1e30 mod 3 = 1 for this float).
        let x = 1e30f32;
        let want = libm::remainder(x as f64, 3.0) as f32;
        assert_eq!(rem(x, 3.0), want);
        assert!(want.abs() <= 1.5);
    }

    #[test]
    fn ilogb_and_nan_follow_opencl() {
        let ilogb = |x: f32| float_un(FloatUnOp::Ilogb, 32, f(x)) as u32 as i32;
        assert_eq!(ilogb(1.0), 0);
        assert_eq!(ilogb(-12.0), 3);
        assert_eq!(ilogb(1e-40), -133);
        assert_eq!(ilogb(0.0), i32::MIN);
        assert_eq!(ilogb(f32::INFINITY), i32::MAX);
        assert_eq!(ilogb(f32::NAN), i32::MAX);
        assert_eq!(float_un(FloatUnOp::Nan, 32, 5), 0x7fc0_0005);
        assert_eq!(float_un(FloatUnOp::Nan, 64, 5), 0x7ff8_0000_0000_0005);
        assert_eq!(float_un(FloatUnOp::Nan, 16, 5), 0x7e05);
        assert!(f32::from_bits(float_un(FloatUnOp::Nan, 32, u32::MAX as u64) as u32).is_nan());
    }

    #[test]
    fn sincos_parts_are_sin_and_cos() {
        assert!(ulps(un(FloatUnOp::Sin, 1.0), 0.841_470_984_807_896_5) <= 1.0);
        assert!(ulps(un(FloatUnOp::Cos, 1.0), 0.540_302_305_868_139_8) <= 1.0);
    }

    #[test]
    fn integers_convert_to_float_in_every_rounding_mode() {
        let to32 = |v: i64, signed: bool, rounding| {
            let kind = ConvKind::IntToFloat { signed, rounding };
            f32::from_bits(convert(kind, 64, 32, v as u64) as u32)
        };
        let odd = (1i64 << 24) + 1;
        assert_eq!(to32(odd, true, Rounding::NearestEven), 16_777_216.0);
        assert_eq!(to32(odd, true, Rounding::TowardZero), 16_777_216.0);
        assert_eq!(to32(odd, true, Rounding::TowardPositive), 16_777_218.0);
        assert_eq!(to32(odd, true, Rounding::TowardNegative), 16_777_216.0);
        assert_eq!(to32(-odd, true, Rounding::TowardZero), -16_777_216.0);
        assert_eq!(to32(-odd, true, Rounding::TowardNegative), -16_777_218.0);
        assert_eq!(to32(-odd, true, Rounding::TowardPositive), -16_777_216.0);
        // u64::MAX: nearest is 2^64, toward zero the float below it.
        assert_eq!(
            to32(-1, false, Rounding::NearestEven),
            18_446_744_073_709_551_616.0
        );
        assert_eq!(to32(-1, false, Rounding::TowardZero).to_bits(), 0x5f7f_ffff);
        // 32-bit int sources sign-extend from their width.
        let kind = ConvKind::IntToFloat { signed: true, rounding: Rounding::TowardZero };
        assert_eq!(
            f32::from_bits(convert(kind, 32, 32, 0xffff_ffff) as u32),
            -1.0
        );
        let to64 = |v: u64, rounding| {
            let kind = ConvKind::IntToFloat { signed: false, rounding };
            f64::from_bits(convert(kind, 64, 64, v))
        };
        let odd = (1u64 << 53) + 1;
        assert_eq!(to64(odd, Rounding::TowardPositive), 9_007_199_254_740_994.0);
        assert_eq!(to64(odd, Rounding::TowardZero), 9_007_199_254_740_992.0);
        let to16 = |v: u64, rounding| {
            let kind = ConvKind::IntToFloat { signed: false, rounding };
            convert(kind, 32, 16, v) as u16
        };
        // 2049 lies between the halves 2048 and 2050.
        assert_eq!(to16(2049, Rounding::TowardPositive), 0x6801);
        assert_eq!(to16(2049, Rounding::NearestEven), 0x6800);
        assert_eq!(to16(70_000, Rounding::TowardZero), 0x7bff);
        assert_eq!(to16(70_000, Rounding::NearestEven), 0x7c00);
    }

    #[test]
    fn doubles_round_to_half_once() {
        // Just above the midpoint of 1 and the next half: correct rounding
        // goes up; rounding to float first lands on the midpoint, then to
        // the even 1.0.
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(f64_to_f16(x, Rounding::NearestEven), 0x3c01);
        let via_float = ConvKind::FloatToFloat { rounding: Rounding::NearestEven };
        assert_eq!(convert(via_float, 64, 16, x.to_bits()), 0x3c01);
        assert_eq!(from_f64(16, x), 0x3c01);
        // Subnormals: half the smallest is a tie to even (0); rtp goes up.
        let tiny = 2f64.powi(-25);
        assert_eq!(f64_to_f16(tiny, Rounding::NearestEven), 0);
        assert_eq!(f64_to_f16(tiny, Rounding::TowardPositive), 1);
        assert_eq!(f64_to_f16(3.0 * 2f64.powi(-26), Rounding::NearestEven), 1);
        assert_eq!(f64_to_f16(-tiny, Rounding::TowardNegative), 0x8001);
        // The largest subnormal carries into the smallest normal.
        assert_eq!(
            f64_to_f16(2f64.powi(-14) - 2f64.powi(-26), Rounding::NearestEven),
            0x0400
        );
        // Overflow by mode.
        assert_eq!(f64_to_f16(65_519.0, Rounding::NearestEven), 0x7bff);
        assert_eq!(f64_to_f16(65_520.0, Rounding::NearestEven), 0x7c00);
        assert_eq!(f64_to_f16(1e6, Rounding::TowardZero), 0x7bff);
        assert_eq!(f64_to_f16(-1e6, Rounding::TowardNegative), 0xfc00);
        assert_eq!(f64_to_f16(-1e6, Rounding::TowardPositive), 0xfbff);
        assert_eq!(f64_to_f16(1e-300, Rounding::TowardPositive), 1);
        assert_eq!(f64_to_f16(f64::NEG_INFINITY, Rounding::TowardZero), 0xfc00);
        assert_eq!(f64_to_f16(f64::NAN, Rounding::NearestEven) & 0x7e00, 0x7e00);
        // Every half survives the round trip in every mode.
        for h in (0u16..0x7c00).step_by(7) {
            let x = f16_to_f32(h) as f64;
            for r in [
                Rounding::NearestEven,
                Rounding::TowardZero,
                Rounding::TowardPositive,
                Rounding::TowardNegative,
            ] {
                assert_eq!(f64_to_f16(x, r), h, "{h:#x} {r:?}");
            }
        }
    }
}
