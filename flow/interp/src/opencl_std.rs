//! Lane-wise semantics of the arithmetic instructions and of the OpenCL.std
//! extended instructions: integers at every width held in `u64`, floats as
//! their bit patterns.
//!
//! Floats are computed in `f64` and rounded once to their width: exact for
//! `+ - * / sqrt` and fused multiply-add at 32 bits (f32 is evaluated with
//! `mul_add` itself), and within OpenCL's ULP limits for the transcendental
//! functions. Half precision goes through `f32`.

use crate::bytecode::*;
use crate::error::TrapKind;

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

pub fn f16_to_f32(h: u16) -> f32 {
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

/// f32 to f16, rounding to nearest even.
pub fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 255 {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 112;
    if e >= 31 {
        return sign | 0x7c00;
    }
    let (value, shift) = if e <= 0 {
        if e < -10 {
            return sign;
        }
        (man | 0x80_0000, (14 - e) as u32)
    } else {
        (((e as u32) << 23) | man, 13)
    };
    let kept = value >> shift;
    let rest = value & ((1 << shift) - 1);
    let halfway = 1 << (shift - 1);
    let rounded = if rest > halfway || (rest == halfway && kept & 1 == 1) {
        kept + 1
    } else {
        kept
    };
    sign | rounded as u16
}

/// f32 to f16 with an explicit rounding mode (vstore_half_rtz and friends).
pub fn f32_to_f16_rounded(x: f32, rounding: Rounding) -> u16 {
    let h = f32_to_f16(x);
    let back = f16_to_f32(h);
    if x.is_nan() || back == x || back.is_infinite() && rounding == Rounding::NearestEven {
        return h;
    }
    let toward_zero = |h: u16| if h & 0x7fff == 0 { h } else { h - 1 };
    let away = |h: u16| h + 1;
    let too_big = back.abs() > x.abs();
    match rounding {
        Rounding::NearestEven => h,
        Rounding::TowardZero => {
            if too_big {
                toward_zero(h)
            } else {
                h
            }
        }
        Rounding::TowardPositive if back < x => {
            if x > 0.0 {
                away(h)
            } else {
                toward_zero(h)
            }
        }
        Rounding::TowardNegative if back > x => {
            if x < 0.0 {
                away(h)
            } else {
                toward_zero(h)
            }
        }
        _ => h,
    }
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
        _ => f32_to_f16(x as f32) as u64,
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
        FloatOp::Remainder => x - (x / y).round_ties_even() * y,
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
        ConvKind::IntToInt {
            signed_src,
            signed_dst,
            saturate,
        } => {
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
        ConvKind::FloatToInt {
            signed,
            saturate,
            rounding,
        } => {
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
        ConvKind::IntToFloat { signed } => match to {
            64 => {
                if signed {
                    (sext(v, from) as f64).to_bits()
                } else {
                    (v as f64).to_bits()
                }
            }
            32 => {
                if signed {
                    (sext(v, from) as f32).to_bits() as u64
                } else {
                    (v as f32).to_bits() as u64
                }
            }
            _ => {
                let f = if signed {
                    sext(v, from) as f32
                } else {
                    v as f32
                };
                f32_to_f16(f) as u64
            }
        },
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
                _ => f32_to_f16_rounded(x as f32, rounding) as u64,
            }
        }
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
            assert_eq!(f16_to_f32(f32_to_f16(x)), x, "{x}");
        }
        assert_eq!(f32_to_f16(1.0 + 1.0 / 4096.0), 0x3c00);
        assert_eq!(f32_to_f16(1e6), 0x7c00);
        assert_eq!(
            f32_to_f16_rounded(1.0 + 3.0 / 4096.0, Rounding::TowardZero),
            0x3c00
        );
    }

    #[test]
    fn conversions_saturate_and_round() {
        let sat = ConvKind::IntToInt {
            signed_src: false,
            signed_dst: false,
            saturate: true,
        };
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
        let rtz = ConvKind::FloatToFloat {
            rounding: Rounding::TowardZero,
        };
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
}
