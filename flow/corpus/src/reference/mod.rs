//! One reference per corpus case: from a launch, the output buffers a
//! correct run of the kernel leaves. Each output starts from the buffer's
//! contents before the launch (so read-write buffers and elements no
//! work-item writes come out right) and is validated against the kernel's
//! actual bounds: a launch that would make the kernel read out of bounds is
//! a `BadLaunch` naming the argument, never a panic.

mod dense;
mod gram_schmidt;
mod histogram;
mod lookup3;
mod mc_pi;
mod nbody;
mod smith_waterman;
mod sparse;
mod stencil;
mod streaming;

use crate::args::{to_bytes, Args, Element};
use crate::{Case, CheckError, Expected, ExpectedOutput};
use clflow_core::{Launch, ScalarType};

/// The expected contents of every output buffer of `case` run on `launch`.
pub fn expected_outputs(case: Case, launch: &Launch) -> Result<Vec<ExpectedOutput>, CheckError> {
    if launch.kernel != case.kernel() {
        return Err(CheckError::BadLaunch {
            case: case.to_string(),
            arg: "kernel".into(),
            reason: format!(
                "the launch runs `{}`, the case's kernel is `{}`",
                launch.kernel,
                case.kernel()
            ),
        });
    }
    match case {
        Case::Lookup3 => lookup3::expected(launch),
        Case::Vadd => streaming::vadd(launch),
        Case::Triad => streaming::triad(launch),
        Case::Daxpy => streaming::daxpy(launch),
        Case::Sgemm => dense::sgemm(launch, Case::Sgemm),
        Case::SgemmTiled => dense::sgemm(launch, Case::SgemmTiled),
        Case::Reduction => dense::reduction(launch),
        Case::Spmv => sparse::spmv(launch),
        Case::Stencil => stencil::expected(launch),
        Case::Histogram => histogram::expected(launch),
        Case::Nbody => nbody::expected(launch),
        Case::SmithWaterman => smith_waterman::expected(launch),
        Case::McPi => mc_pi::expected(launch),
        Case::GramSchmidt => gram_schmidt::expected(launch),
    }
}

/// fp32 unit roundoff: an operation correctly rounded to nearest is off by
/// at most this much relative to its exact result (half an ulp).
pub(crate) const F32_UNIT: f64 = f32::EPSILON as f64 / 2.0;

/// Devices may flush subnormal fp32 results to zero (OpenCL C 1.2 makes
/// denormals optional for float), so every fp32 bound allows that much.
pub(crate) const F32_FLUSH: f64 = f32::MIN_POSITIVE as f64;

/// An fp32 output buffer under construction: starts as the buffer's
/// contents before the launch, each written element gets its reference
/// value (in f64) and the error bound the kernel's arithmetic allows.
pub(crate) struct FloatOutput {
    arg: usize,
    values: Vec<f64>,
    bounds: Vec<f64>,
}

impl FloatOutput {
    pub fn new(args: &Args, arg: usize) -> Result<Self, CheckError> {
        let initial = args.buffer::<f32>(arg)?;
        Ok(FloatOutput {
            arg,
            bounds: vec![0.0; initial.len()],
            values: initial.into_iter().map(f64::from).collect(),
        })
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Element `index` must come out within `bound` (plus the flush
    /// allowance) of `value`.
    pub fn set(&mut self, index: usize, value: f64, bound: f64) {
        self.values[index] = value;
        self.bounds[index] = bound + F32_FLUSH;
    }

    pub fn finish(self) -> ExpectedOutput {
        ExpectedOutput {
            arg: self.arg,
            expected: Expected::Within {
                scalar: ScalarType::Float,
                values: self.values,
                bounds: self.bounds,
            },
        }
    }
}

/// An output that must match exactly.
pub(crate) fn exact<T: Element>(arg: usize, scalar: ScalarType, values: &[T]) -> ExpectedOutput {
    ExpectedOutput {
        arg,
        expected: Expected::Exact { scalar, bytes: to_bytes(values) },
    }
}

/// Converts a global id to a buffer index; ids beyond memory are a launch
/// the checks before this refuse.
pub(crate) fn index(id: u64) -> usize {
    usize::try_from(id).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests;
