//! Numbers as manifests write them, and their little-endian bytes in an
//! OpenCL scalar type, with the range checks that keep 300 out of a `uchar`.

use clflow_core::half::Rounding;
use clflow_core::{ElementType, ScalarType};
use std::fmt;

/// A number from a manifest: integers stay exact (i128 holds every `long`
/// and `ulong`), floats are kept as f64.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(i128),
    Float(f64),
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Int(value) => write!(f, "{value}"),
            Number::Float(value) => write!(f, "{value}"),
        }
    }
}

impl Number {
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Number::Int(value) => int_as_f64(value),
            Number::Float(value) => value,
        }
    }
}

/// An i128 as f64, out of line: inlined, the compiler computed it (a call
/// into the runtime) for every float a generator wrote and kept the float
/// when there was one, a sixth of a large float input's count.
#[cold]
#[inline(never)]
fn int_as_f64(value: i128) -> f64 {
    value as f64
}

/// The values an integer type holds, as i128 bounds.
pub(crate) fn integer_bounds(scalar: ScalarType) -> (i128, i128) {
    let bits = 8 * scalar.size_bytes() as u32;
    if scalar.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// The largest finite value of a float type.
fn float_max(scalar: ScalarType) -> f64 {
    match scalar {
        ScalarType::Half => 65504.0,
        ScalarType::Float => f32::MAX as f64,
        _ => f64::MAX,
    }
}

fn range_text(scalar: ScalarType) -> String {
    if scalar.is_float() {
        let max = float_max(scalar);
        format!("-{max:e} to {max:e}")
    } else {
        let (low, high) = integer_bounds(scalar);
        format!("{low} to {high}")
    }
}

/// Checks that `number` fits `scalar`, so that encoding it cannot fail.
/// The message says what the type holds.
pub(crate) fn check_fits(scalar: ScalarType, number: Number) -> Result<(), String> {
    match (scalar.is_float(), number) {
        (false, Number::Float(value)) => Err(format!(
            "{value} is not an integer, and {scalar} holds integers only"
        )),
        (false, Number::Int(value)) => {
            let (low, high) = integer_bounds(scalar);
            if value < low || value > high {
                Err(format!(
                    "{value} is out of range for {scalar} ({})",
                    range_text(scalar)
                ))
            } else {
                Ok(())
            }
        }
        (true, number) => {
            let value = number.as_f64();
            if value.is_finite() && value.abs() > float_max(scalar) {
                Err(format!(
                    "{value} is out of range for {scalar} ({})",
                    range_text(scalar)
                ))
            } else {
                Ok(())
            }
        }
    }
}

/// Appends the little-endian bytes of `number` as `scalar`. The caller has
/// checked the range ([`check_fits`]); integers that do not fit wrap as
/// two's complement, floats round to nearest.
pub(crate) fn push_scalar(scalar: ScalarType, number: Number, out: &mut Vec<u8>) {
    match scalar {
        ScalarType::Half => out.extend_from_slice(
            &clflow_core::half::from_f64(number.as_f64(), Rounding::NearestEven).to_le_bytes(),
        ),
        ScalarType::Float => out.extend_from_slice(&(number.as_f64() as f32).to_le_bytes()),
        ScalarType::Double => out.extend_from_slice(&number.as_f64().to_le_bytes()),
        integer => {
            let value = match number {
                Number::Int(value) => value,
                Number::Float(value) => value as i128,
            };
            out.extend_from_slice(&value.to_le_bytes()[..integer.size_bytes()]);
        }
    }
}

/// The bytes of one element of `ty` whose lanes hold `lanes` (one value per
/// lane; a 3-lane vector gets a zero fourth lane, as OpenCL lays it out).
pub(crate) fn element_bytes(ty: ElementType, lanes: &[Number]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(ty.size_bytes());
    for &lane in lanes {
        push_scalar(ty.scalar, lane, &mut bytes);
    }
    bytes.resize(ty.size_bytes(), 0);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_encode_little_endian_in_their_width() {
        let mut out = Vec::new();
        push_scalar(ScalarType::UInt, Number::Int(0x0102_0304), &mut out);
        push_scalar(ScalarType::Short, Number::Int(-2), &mut out);
        push_scalar(ScalarType::ULong, Number::Int(u64::MAX as i128), &mut out);
        assert_eq!(
            out,
            [4, 3, 2, 1, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
    }

    #[test]
    fn floats_encode_as_ieee() {
        let mut out = Vec::new();
        push_scalar(ScalarType::Float, Number::Float(1.5), &mut out);
        push_scalar(ScalarType::Double, Number::Int(2), &mut out);
        assert_eq!(&out[..4], &1.5f32.to_le_bytes());
        assert_eq!(&out[4..], &2.0f64.to_le_bytes());
    }

    #[test]
    fn range_checks_name_the_bounds() {
        assert_eq!(
            check_fits(ScalarType::UChar, Number::Int(300)).unwrap_err(),
            "300 is out of range for uchar (0 to 255)"
        );
        assert!(check_fits(ScalarType::Char, Number::Int(-128)).is_ok());
        assert!(check_fits(ScalarType::Char, Number::Int(128)).is_err());
        assert!(check_fits(ScalarType::Long, Number::Int(i64::MIN as i128)).is_ok());
        assert!(check_fits(ScalarType::UInt, Number::Float(1.0)).is_err());
        assert!(check_fits(ScalarType::Half, Number::Float(70000.0)).is_err());
        assert!(check_fits(ScalarType::Float, Number::Float(1e39)).is_err());
        assert!(check_fits(ScalarType::Double, Number::Float(1e39)).is_ok());
    }

    #[test]
    fn three_lane_elements_pad_a_fourth_lane() {
        let ty: ElementType = "short3".parse().unwrap();
        let bytes = element_bytes(ty, &[Number::Int(1), Number::Int(2), Number::Int(3)]);
        assert_eq!(bytes, [1, 0, 2, 0, 3, 0, 0, 0]);
    }
}
