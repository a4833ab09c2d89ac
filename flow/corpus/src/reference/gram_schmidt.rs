//! Batched QR by modified Gram-Schmidt.
//!
//! Its error depends on the data (how nearly dependent the columns are), so
//! no closed-form bound fits; the reference instead carries, beside each
//! value, a bound on how far the kernel's fp32 value may be from it, and
//! grows it operation by operation in the kernel's order (a running error
//! bound).

use super::{index, FloatOutput, F32_UNIT};
use crate::args::Args;
use crate::{Case, CheckError, ExpectedOutput};
use clflow_core::Launch;

/// A value, exact in f64, and a bound on the kernel's error in it.
#[derive(Debug, Clone, Copy)]
struct Tracked {
    value: f64,
    error: f64,
}

impl Tracked {
    fn exact(value: f32) -> Self {
        Tracked { value: f64::from(value), error: 0.0 }
    }

    /// The result of an operation rounded within `ulps` units in the last
    /// place (an ulp is at most 2 F32_UNIT of the value), plus what it
    /// inherited.
    fn rounded(value: f64, inherited: f64, ulps: f64) -> Self {
        Tracked {
            value,
            error: inherited + ulps * 2.0 * F32_UNIT * value.abs(),
        }
    }

    /// `self + other·sign`, correctly rounded.
    fn add(self, other: Tracked, sign: f64) -> Self {
        Tracked::rounded(
            self.value + sign * other.value,
            self.error + other.error,
            0.5,
        )
    }

    /// A product, correctly rounded (a fused multiply-add rounds less).
    fn mul(self, other: Tracked) -> Self {
        let inherited = self.value.abs() * other.error
            + other.value.abs() * self.error
            + self.error * other.error;
        Tracked::rounded(self.value * other.value, inherited, 0.5)
    }

    /// sqrt: 3 ulp in OpenCL C; |sqrt x' - sqrt x| <= |x' - x| / sqrt x.
    fn sqrt(self) -> Self {
        let value = self.value.max(0.0).sqrt();
        let inherited = if value > 0.0 {
            self.error / value
        } else {
            self.error.sqrt()
        };
        Tracked::rounded(value, inherited, 3.0)
    }

    /// Division: 2.5 ulp in OpenCL C. A divisor its error could make zero
    /// bounds nothing.
    fn div(self, divisor: Tracked) -> Self {
        let value = self.value / divisor.value;
        let margin = divisor.value.abs() - divisor.error;
        let inherited = if margin > 0.0 {
            (self.error + value.abs() * divisor.error) / margin
        } else {
            f64::INFINITY
        };
        Tracked::rounded(value, inherited, 2.5)
    }
}

/// Q (arg 0) holds `rows x cols` column-major matrices, one per work-item,
/// overwritten with their orthonormal factor; R (arg 1) gets the upper
/// triangle of each `cols x cols` row-major factor.
pub fn expected(launch: &Launch) -> Result<Vec<ExpectedOutput>, CheckError> {
    let args = Args::new(Case::GramSchmidt, launch, 4)?;
    let rows = u64::from(args.scalar::<u32>(2)?);
    let cols = u64::from(args.scalar::<u32>(3)?);
    let batch = args.global_ids(0);
    let q = args.buffer_of_len::<f32>(
        0,
        batch.end * rows * cols,
        "a rows x cols matrix for each work-item",
    )?;
    let mut q_out = FloatOutput::new(&args, 0)?;
    let mut r_out = FloatOutput::new(&args, 1)?;
    let r_needed = batch.end * cols * cols;
    if (r_out.len() as u64) < r_needed {
        return Err(args.bad(
            1,
            format!(
                "has {} elements but a cols x cols matrix for each work-item needs {r_needed}",
                r_out.len()
            ),
        ));
    }
    let (rows, cols) = (index(rows), index(cols));
    for b in batch.map(index) {
        let base = b * rows * cols;
        let mut a: Vec<Tracked> = q[base..base + rows * cols]
            .iter()
            .map(|&v| Tracked::exact(v))
            .collect();
        let r_base = b * cols * cols;
        for k in 0..cols {
            for j in 0..k {
                let mut dot = Tracked::exact(0.0);
                for i in 0..rows {
                    dot = dot.add(a[j * rows + i].mul(a[k * rows + i]), 1.0);
                }
                r_out.set(r_base + j * cols + k, dot.value, dot.error);
                for i in 0..rows {
                    a[k * rows + i] = a[k * rows + i].add(dot.mul(a[j * rows + i]), -1.0);
                }
            }
            let mut norm = Tracked::exact(0.0);
            for i in 0..rows {
                norm = norm.add(a[k * rows + i].mul(a[k * rows + i]), 1.0);
            }
            let norm = norm.sqrt();
            r_out.set(r_base + k * cols + k, norm.value, norm.error);
            for i in 0..rows {
                a[k * rows + i] = a[k * rows + i].div(norm);
            }
        }
        for (offset, element) in a.iter().enumerate() {
            q_out.set(base + offset, element.value, element.error);
        }
    }
    Ok(vec![q_out.finish(), r_out.finish()])
}
