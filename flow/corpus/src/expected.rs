//! A reference's expected output buffers and how produced bytes are
//! compared with them: integers exactly, floats within per-element bounds.

use crate::{CheckError, Mismatch};
use clflow_core::ScalarType;

/// What one output buffer must hold after the launch.
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    /// Every element bit for bit (integers; floats computed exactly).
    Exact { scalar: ScalarType, bytes: Vec<u8> },
    /// Floats (`Float` or `Double`): element k within `bounds[k]` of
    /// `values[k]`, which the reference computes in f64.
    Within {
        scalar: ScalarType,
        values: Vec<f64>,
        bounds: Vec<f64>,
    },
}

/// The expected contents of the output buffer at argument `arg`.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedOutput {
    pub arg: usize,
    pub expected: Expected,
}

impl Expected {
    pub fn exact_bytes(&self) -> Option<&[u8]> {
        match self {
            Expected::Exact { bytes, .. } => Some(bytes),
            Expected::Within { .. } => None,
        }
    }

    fn len_bytes(&self) -> usize {
        match self {
            Expected::Exact { bytes, .. } => bytes.len(),
            Expected::Within { scalar, values, .. } => values.len() * scalar.size_bytes(),
        }
    }

    /// Compares `produced` with the expectation; on disagreement describes
    /// the first differing element and counts the others.
    pub(crate) fn compare(&self, produced: &[u8], at: Location<'_>) -> Result<(), CheckError> {
        if produced.len() != self.len_bytes() {
            return Err(CheckError::WrongSize {
                case: at.case.to_string(),
                arg: at.arg.to_string(),
                expected: self.len_bytes(),
                got: produced.len(),
            });
        }
        let mut first: Option<Mismatch> = None;
        let mut differing = 0;
        let mut note = |index: usize, expected: String, got: String, tolerance: Option<f64>| {
            differing += 1;
            first.get_or_insert(Mismatch {
                case: at.case.to_string(),
                arg: at.arg.to_string(),
                index,
                expected,
                got,
                tolerance,
                differing: 0,
            });
        };
        match self {
            Expected::Exact { scalar, bytes } => {
                let size = scalar.size_bytes();
                let pairs = bytes.chunks_exact(size).zip(produced.chunks_exact(size));
                for (index, (want, have)) in pairs.enumerate() {
                    if want != have {
                        note(index, show(*scalar, want), show(*scalar, have), None);
                    }
                }
            }
            Expected::Within { scalar, values, bounds } => {
                let size = scalar.size_bytes();
                let produced = produced
                    .chunks_exact(size)
                    .map(|raw| float_value(*scalar, raw));
                for (index, ((want, bound), have)) in
                    values.iter().zip(bounds).zip(produced).enumerate()
                {
                    let close = (have - want).abs() <= *bound;
                    // A NaN on either side is never close.
                    if !close {
                        note(
                            index,
                            format!("{want:e}"),
                            format!("{have:e}"),
                            Some(*bound),
                        );
                    }
                }
            }
        }
        match first {
            None => Ok(()),
            Some(mismatch) => Err(CheckError::Mismatch(Box::new(Mismatch {
                differing,
                ..mismatch
            }))),
        }
    }
}

/// Which case and argument a comparison is about, for its messages.
pub(crate) struct Location<'a> {
    pub case: &'a str,
    pub arg: &'a str,
}

fn float_value(scalar: ScalarType, raw: &[u8]) -> f64 {
    match scalar {
        ScalarType::Double => f64::from_le_bytes(raw.try_into().expect("8-byte chunk")),
        _ => f32::from_le_bytes(raw.try_into().expect("4-byte chunk")) as f64,
    }
}

/// One element as a person reads it: integers in decimal with their hex
/// bit pattern (hashes are read in hex), floats in scientific notation.
fn show(scalar: ScalarType, raw: &[u8]) -> String {
    let mut wide = [0u8; 8];
    wide[..raw.len()].copy_from_slice(raw);
    let bits = u64::from_le_bytes(wide);
    let hex_digits = raw.len() * 2;
    let shift = 64 - 8 * raw.len() as u32;
    let signed = ((bits << shift) as i64) >> shift;
    match scalar {
        ScalarType::Float => format!("{:e} (0x{bits:08x})", f32::from_bits(bits as u32)),
        ScalarType::Double => format!("{:e} (0x{bits:016x})", f64::from_bits(bits)),
        ScalarType::Half => format!("half 0x{bits:04x}"),
        s if s.is_signed() => format!("{signed} (0x{bits:0hex_digits$x})"),
        _ => format!("{bits} (0x{bits:0hex_digits$x})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: Location<'static> = Location { case: "vadd", arg: "arg 2 (c)" };

    #[test]
    fn exact_buffers_name_the_first_differing_element_and_count_the_rest() {
        let expected = Expected::Exact {
            scalar: ScalarType::UInt,
            bytes: crate::args::to_bytes(&[1u32, 2, 3, 4]),
        };
        assert_eq!(
            expected.compare(&crate::args::to_bytes(&[1u32, 2, 3, 4]), AT),
            Ok(())
        );
        let error = expected
            .compare(&crate::args::to_bytes(&[1u32, 9, 3, 7]), AT)
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "vadd: arg 2 (c) element 1: expected 2 (0x00000002), got 9 (0x00000009); 2 elements differ in all"
        );
    }

    #[test]
    fn signed_elements_show_their_sign() {
        assert_eq!(
            show(ScalarType::Short, &(-3i16).to_le_bytes()),
            "-3 (0xfffd)"
        );
        assert_eq!(
            show(ScalarType::UShort, &65533u16.to_le_bytes()),
            "65533 (0xfffd)"
        );
    }

    #[test]
    fn floats_pass_within_their_bound_and_fail_beyond_it_or_on_nan() {
        let expected = Expected::Within {
            scalar: ScalarType::Float,
            values: vec![1.0, 2.0],
            bounds: vec![1e-6, 1e-6],
        };
        let close = crate::args::to_bytes(&[1.0f32 + 5e-7, 2.0]);
        assert_eq!(expected.compare(&close, AT), Ok(()));
        let far = crate::args::to_bytes(&[1.0f32, 2.001]);
        let error = expected.compare(&far, AT).unwrap_err();
        assert!(
            matches!(&error, CheckError::Mismatch(m) if m.index == 1 && m.tolerance == Some(1e-6))
        );
        let nan = crate::args::to_bytes(&[f32::NAN, 2.0]);
        assert!(expected.compare(&nan, AT).is_err());
    }

    #[test]
    fn a_buffer_of_the_wrong_size_is_refused() {
        let expected = Expected::Exact { scalar: ScalarType::UChar, bytes: vec![0; 4] };
        let error = expected.compare(&[0; 3], AT).unwrap_err();
        assert_eq!(
            error.to_string(),
            "vadd: arg 2 (c): produced 3 bytes, the buffer has 4"
        );
    }
}
