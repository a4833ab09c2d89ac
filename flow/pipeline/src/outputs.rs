//! Does the device compute what the interpreter computed? Each output
//! buffer (access `wo` or `rw`) of the device's first launch is compared,
//! element by element, with the interpreter's.
//!
//! Integers must match exactly. Floating-point values may differ within a
//! tolerance, because OpenCL C lets a correct device differ: builtins such
//! as `sqrt`, `exp` or `x/y` may be off by up to 2.5–4 ulp (OpenCL 1.2
//! §7.4), `a*b + c` may or may not be contracted into one fused rounding
//! (FP_CONTRACT is on by default), and a device may sum in another order.
//! Such differences grow with the number of terms accumulated: about k·ε
//! relative for k terms. [`Tolerance::for_type`] allows 1e-4 relative for
//! `float` (≈ 840 ulp: sums of ~1000 terms with contraction differences),
//! 1e-12 for `double` (≈ 4500 ulp) and 1e-2 for `half` (≈ 10 ulp at its
//! 10-bit mantissa). Relative to what: the larger of the two values and
//! the root-mean-square of the expected buffer, so that a value that
//! cancels to nearly zero is judged at the buffer's scale, where its
//! rounding error lives. NaN equals NaN; infinities must match exactly.

use clflow_core::{ArgValue, ElementType, Launch, ScalarType};
use clflow_interp::OutputBuffer;
use serde::Serialize;

/// The relative tolerance for one scalar type (0 for integers: exact).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Tolerance {
    pub relative: f64,
}

impl Tolerance {
    pub fn for_type(scalar: ScalarType) -> Tolerance {
        let relative = match scalar {
            ScalarType::Half => 1e-2,
            ScalarType::Float => 1e-4,
            ScalarType::Double => 1e-12,
            _ => 0.0,
        };
        Tolerance { relative }
    }
}

/// The outcome of comparing every output buffer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum OutputCheck {
    /// Every element agreed (floats within their tolerance).
    Agree {
        buffers: usize,
        elements: u64,
        /// The largest relative difference among floating-point elements.
        max_relative_difference: f64,
    },
    /// The device computed something else.
    Differ(Mismatch),
    /// Nothing to compare with (no reference run, or no output buffer).
    NotCompared { reason: String },
}

impl OutputCheck {
    pub fn is_wrong(&self) -> bool {
        matches!(self, OutputCheck::Differ(_))
    }

    /// One line for terminals and report notes.
    pub fn summary(&self) -> String {
        match self {
            OutputCheck::Agree { buffers, elements, .. } => format!(
                "outputs agree with the interpreter ({elements} elements in {buffers} buffer{})",
                if *buffers == 1 { "" } else { "s" }
            ),
            OutputCheck::Differ(m) => m.to_string(),
            OutputCheck::NotCompared { reason } => format!("outputs not compared: {reason}"),
        }
    }
}

/// Where the device first disagrees with the interpreter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    /// `arg 2 (c)`.
    pub buffer: String,
    /// Element index in the buffer (a vector element counts once).
    pub index: u64,
    /// The vector lane, for vector elements.
    pub lane: Option<u8>,
    pub expected: String,
    pub got: String,
    /// How many elements of this buffer differ in all.
    pub differing: u64,
    pub elements: u64,
    pub tolerance: Tolerance,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lane = self.lane.map(|l| format!(" lane {l}")).unwrap_or_default();
        write!(
            f,
            "WRONG RESULT: {} differs from the interpreter at element {}{lane}: expected {}, device gave {} ({} of {} elements differ",
            self.buffer, self.index, self.expected, self.got, self.differing, self.elements
        )?;
        if self.tolerance.relative > 0.0 {
            write!(f, "; tolerance {:e} relative", self.tolerance.relative)?;
        }
        f.write_str(")")
    }
}

/// Compares the device's buffers (`device[i]` for argument i, as
/// `PreparedLaunch::read_outputs` gives them) with the interpreter's.
pub fn compare_outputs(
    launch: &Launch,
    expected: &[OutputBuffer],
    device: &[Option<Vec<u8>>],
) -> OutputCheck {
    if expected.is_empty() {
        return OutputCheck::NotCompared {
            reason: "the launch has no output buffer (access wo or rw)".into(),
        };
    }
    let mut elements = 0;
    let mut max_relative = 0.0f64;
    for reference in expected {
        let arg = &launch.args[reference.arg];
        let label = arg.describe(reference.arg);
        let Some(ty) = output_type(&arg.value) else {
            continue;
        };
        let Some(Some(got)) = device.get(reference.arg) else {
            return OutputCheck::NotCompared {
                reason: format!("the device run returned no contents for {label}"),
            };
        };
        if got.len() != reference.bytes.len() {
            return OutputCheck::NotCompared {
                reason: format!(
                    "{label}: the device returned {} bytes, the interpreter {}",
                    got.len(),
                    reference.bytes.len()
                ),
            };
        }
        match compare_buffer(&label, ty, &reference.bytes, got) {
            Ok(agreed) => {
                elements += agreed.elements;
                max_relative = max_relative.max(agreed.max_relative);
            }
            Err(mismatch) => return OutputCheck::Differ(mismatch),
        }
    }
    OutputCheck::Agree {
        buffers: expected.len(),
        elements,
        max_relative_difference: max_relative,
    }
}

/// The type an output argument's bytes compare as: a buffer's elements,
/// an image's texel channels (uchar4, float ...); none for other values.
pub fn output_type(value: &ArgValue) -> Option<ElementType> {
    match value {
        ArgValue::Buffer { ty, .. } => Some(*ty),
        ArgValue::Image { image, .. } => Some(image.element()),
        _ => None,
    }
}

/// A buffer on which the interpreter and the device agree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agreed {
    pub elements: u64,
    /// The largest relative difference among floating-point elements.
    pub max_relative: f64,
}

/// One buffer of `ty` elements, the interpreter's bytes against the
/// device's (as many): integers exactly, floats within
/// [`Tolerance::for_type`]; `Err` says where they first differ.
pub fn compare_buffer(
    label: &str,
    ty: ElementType,
    interpreter: &[u8],
    device: &[u8],
) -> Result<Agreed, Mismatch> {
    let buffer = BufferComparison::run(ty.scalar, ty.lanes, interpreter, device);
    match buffer.first {
        None => Ok(Agreed { elements: buffer.elements, max_relative: buffer.max_relative }),
        Some((index, lane, expected, got)) => Err(Mismatch {
            buffer: label.to_string(),
            index,
            lane: (ty.lanes > 1).then_some(lane),
            expected,
            got,
            differing: buffer.differing,
            elements: buffer.elements,
            tolerance: Tolerance::for_type(ty.scalar),
        }),
    }
}

/// One buffer compared: its first difference, how many elements differ.
struct BufferComparison {
    elements: u64,
    differing: u64,
    max_relative: f64,
    /// (element, lane, expected, got) of the first difference.
    first: Option<(u64, u8, String, String)>,
}

impl BufferComparison {
    fn run(scalar: ScalarType, lanes: u8, expected: &[u8], got: &[u8]) -> Self {
        let size = scalar.size_bytes();
        // A 3-lane vector takes the room of four; the fourth is padding.
        let stored_lanes = if lanes == 3 { 4 } else { lanes as usize };
        let element_bytes = size * stored_lanes;
        let elements = (expected.len() / element_bytes) as u64;
        let tolerance = Tolerance::for_type(scalar);
        let scale = if scalar.is_float() {
            rms(expected.chunks_exact(size).map(|c| decode_float(scalar, c)))
        } else {
            0.0
        };
        let mut out = BufferComparison { elements, differing: 0, max_relative: 0.0, first: None };
        for element in 0..elements as usize {
            let mut element_differs = false;
            for lane in 0..lanes as usize {
                let at = element * element_bytes + lane * size;
                let (e, g) = (&expected[at..at + size], &got[at..at + size]);
                if e == g {
                    continue;
                }
                let agrees = if scalar.is_float() {
                    let (e, g) = (decode_float(scalar, e), decode_float(scalar, g));
                    match float_difference(e, g, scale) {
                        Some(relative) => {
                            out.max_relative = out.max_relative.max(relative);
                            relative <= tolerance.relative
                        }
                        None => false,
                    }
                } else {
                    false
                };
                if !agrees {
                    element_differs = true;
                    if out.first.is_none() {
                        out.first =
                            Some((element as u64, lane as u8, show(scalar, e), show(scalar, g)));
                    }
                }
            }
            out.differing += u64::from(element_differs);
        }
        out
    }
}

/// The relative difference of two floats at the buffer's scale, `None`
/// where they cannot agree (one NaN, or infinities that differ).
fn float_difference(expected: f64, got: f64, scale: f64) -> Option<f64> {
    if expected.is_nan() || got.is_nan() {
        return (expected.is_nan() && got.is_nan()).then_some(0.0);
    }
    if expected.is_infinite() || got.is_infinite() {
        return (expected == got).then_some(0.0);
    }
    let magnitude = expected.abs().max(got.abs()).max(scale);
    if magnitude == 0.0 {
        return Some(0.0);
    }
    Some((expected - got).abs() / magnitude)
}

fn rms(values: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut n) = (0.0, 0u64);
    for v in values.filter(|v| v.is_finite()) {
        sum += v * v;
        n += 1;
    }
    if n == 0 {
        0.0
    } else {
        (sum / n as f64).sqrt()
    }
}

fn decode_float(scalar: ScalarType, bytes: &[u8]) -> f64 {
    match scalar {
        ScalarType::Half => clflow_core::half::to_f64(u16::from_le_bytes([bytes[0], bytes[1]])),
        ScalarType::Float => f32::from_le_bytes(bytes.try_into().expect("4 bytes")) as f64,
        _ => f64::from_le_bytes(bytes.try_into().expect("8 bytes")),
    }
}

/// An element as its type reads it.
fn show(scalar: ScalarType, bytes: &[u8]) -> String {
    let mut wide = [0u8; 8];
    wide[..bytes.len()].copy_from_slice(bytes);
    let raw = u64::from_le_bytes(wide);
    let bits = 8 * bytes.len() as u32;
    match scalar {
        _ if scalar.is_float() => format!("{}", decode_float(scalar, bytes)),
        _ if scalar.is_signed() => {
            let shift = 64 - bits;
            format!("{}", ((raw << shift) as i64) >> shift)
        }
        _ => format!("{raw}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clflow_core::{Access, LaunchArg, NdRange};

    fn launch(ty: ElementType, bytes: Vec<u8>) -> Launch {
        Launch {
            kernel: "k".into(),
            range: NdRange { dims: 1, global: [1, 1, 1], local: None, offset: [0; 3] },
            args: vec![LaunchArg {
                name: Some("out".into()),
                value: ArgValue::Buffer { ty, access: Access::WriteOnly, bytes },
            }],
        }
    }

    fn reference(bytes: Vec<u8>) -> Vec<OutputBuffer> {
        vec![OutputBuffer { arg: 0, name: Some("out".into()), bytes }]
    }

    fn floats(values: &[f32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn a_doctored_integer_is_caught_at_its_index() {
        let good: Vec<u8> = (0u32..100).flat_map(|v| v.to_le_bytes()).collect();
        let mut bad = good.clone();
        bad[37 * 4] ^= 1;
        bad[90 * 4 + 3] = 0xff;
        let l = launch(ElementType::scalar(ScalarType::UInt), good.clone());
        match compare_outputs(&l, &reference(good), &[Some(bad)]) {
            OutputCheck::Differ(m) => {
                assert_eq!(m.buffer, "arg 0 (out)");
                assert_eq!(m.index, 37);
                assert_eq!(m.expected, "37");
                assert_eq!(m.got, "36");
                assert_eq!(m.differing, 2);
                assert_eq!(m.elements, 100);
                assert!(m.to_string().starts_with("WRONG RESULT: arg 0 (out)"));
            }
            other => panic!("not caught: {other:?}"),
        }
    }

    #[test]
    fn floats_agree_within_rounding_and_differ_beyond() {
        let expected = floats(&[1.0, 2.0, -3.5, 1e-30]);
        let l = launch(ElementType::scalar(ScalarType::Float), expected.clone());
        // One ulp off, and a tiny value judged at the buffer's scale.
        let close = floats(&[1.0 + f32::EPSILON, 2.0, -3.5, 0.0]);
        let check = compare_outputs(&l, &reference(expected.clone()), &[Some(close)]);
        assert!(
            matches!(check, OutputCheck::Agree { elements: 4, .. }),
            "{check:?}"
        );
        let far = floats(&[1.0, 2.001, -3.5, 1e-30]);
        match compare_outputs(&l, &reference(expected), &[Some(far)]) {
            OutputCheck::Differ(m) => {
                assert_eq!(m.index, 1);
                assert_eq!(m.expected, "2");
            }
            other => panic!("not caught: {other:?}"),
        }
    }

    #[test]
    fn nan_matches_nan_only_and_vector_lanes_are_named() {
        let ty = ElementType::vector(ScalarType::Float, 2).unwrap();
        let expected = floats(&[f32::NAN, 1.0, 2.0, 3.0]);
        let l = launch(ty, expected.clone());
        let same = floats(&[f32::NAN, 1.0, 2.0, 3.0]);
        assert!(!compare_outputs(&l, &reference(expected.clone()), &[Some(same)]).is_wrong());
        let got = floats(&[f32::NAN, 1.0, 2.0, f32::NAN]);
        match compare_outputs(&l, &reference(expected), &[Some(got)]) {
            OutputCheck::Differ(m) => assert_eq!((m.index, m.lane), (1, Some(1))),
            other => panic!("not caught: {other:?}"),
        }
    }

    #[test]
    fn three_lane_padding_is_ignored() {
        let ty = ElementType::vector(ScalarType::Int, 3).unwrap();
        let expected: Vec<u8> = [1i32, -2, 3, 0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut got = expected.clone();
        got[12] = 9; // the padding lane
        let l = launch(ty, expected.clone());
        assert!(
            !compare_outputs(&l, &reference(expected.clone()), &[Some(got.clone())]).is_wrong()
        );
        got[4] = 0xfd; // lane 1: -2 becomes -3
        match compare_outputs(&l, &reference(expected), &[Some(got)]) {
            OutputCheck::Differ(m) => {
                assert_eq!((m.index, m.lane), (0, Some(1)));
                assert_eq!((m.expected.as_str(), m.got.as_str()), ("-2", "-3"));
            }
            other => panic!("not caught: {other:?}"),
        }
    }
}
