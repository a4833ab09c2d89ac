//! Streaming kernels: vadd, triad, daxpy.

use super::{exact, index, FloatOutput, F32_UNIT};
use crate::args::Args;
use crate::{Case, CheckError, ExpectedOutput};
use clflow_core::{Launch, ScalarType};

/// The ids that pass a kernel's `if (i < n)` guard, checked against the
/// buffers they index.
fn guarded_ids(
    args: &Args,
    n: u64,
    buffers: &[(usize, usize)],
) -> Result<std::ops::Range<u64>, CheckError> {
    let ids = args.global_ids(0);
    let written = ids.start.min(n)..ids.end.min(n);
    for &(arg, len) in buffers {
        if (len as u64) < written.end {
            return Err(args.bad(
                arg,
                format!(
                    "has {len} elements but work-items up to {} read or write it",
                    written.end - 1
                ),
            ));
        }
    }
    Ok(written)
}

/// c[i] = a[i] + b[i]. An IEEE add is correctly rounded: within half an
/// ulp, i.e. F32_UNIT relative, of the exact sum.
pub fn vadd(launch: &Launch) -> Result<Vec<ExpectedOutput>, CheckError> {
    let args = Args::new(Case::Vadd, launch, 4)?;
    let (a, b) = (args.buffer::<f32>(0)?, args.buffer::<f32>(1)?);
    let n = u64::from(args.scalar::<u32>(3)?);
    let mut c = FloatOutput::new(&args, 2)?;
    for i in guarded_ids(&args, n, &[(0, a.len()), (1, b.len()), (2, c.len())])?.map(index) {
        let sum = f64::from(a[i]) + f64::from(b[i]);
        c.set(i, sum, F32_UNIT * sum.abs());
    }
    Ok(vec![c.finish()])
}

/// a[i] = b[i] + scalar * c[i] on float4 (four lanes per id). The compiler
/// may contract to an fma (one rounding) or keep a multiply and an add (two
/// roundings, each at most F32_UNIT of its operands' magnitude), so the
/// bound is 2 F32_UNIT (|b| + |scalar c|).
pub fn triad(launch: &Launch) -> Result<Vec<ExpectedOutput>, CheckError> {
    let args = Args::new(Case::Triad, launch, 4)?;
    let ids = args.global_ids(0);
    let lanes = ids.end * 4;
    let b = args.buffer_of_len::<f32>(1, lanes, "four floats a work-item")?;
    let c = args.buffer_of_len::<f32>(2, lanes, "four floats a work-item")?;
    let scalar = f64::from(args.scalar::<f32>(3)?);
    let mut a = FloatOutput::new(&args, 0)?;
    if (a.len() as u64) < lanes {
        return Err(args.bad(
            0,
            format!("has {} floats but the NDRange writes {lanes}", a.len()),
        ));
    }
    for lane in index(ids.start * 4)..index(lanes) {
        let product = scalar * f64::from(c[lane]);
        let value = f64::from(b[lane]) + product;
        a.set(
            lane,
            value,
            2.0 * F32_UNIT * (f64::from(b[lane]).abs() + product.abs()),
        );
    }
    Ok(vec![a.finish()])
}

/// y[i] = fma(alpha, x[i], y[i]) in double. OpenCL's fma is correctly
/// rounded, as Rust's `mul_add`: the result must match bit for bit.
pub fn daxpy(launch: &Launch) -> Result<Vec<ExpectedOutput>, CheckError> {
    let args = Args::new(Case::Daxpy, launch, 4)?;
    let alpha = args.scalar::<f64>(0)?;
    let x = args.buffer::<f64>(1)?;
    let mut y = args.buffer::<f64>(2)?;
    let n = u64::from(args.scalar::<u32>(3)?);
    for i in guarded_ids(&args, n, &[(1, x.len()), (2, y.len())])?.map(index) {
        y[i] = alpha.mul_add(x[i], y[i]);
    }
    Ok(vec![exact(2, ScalarType::Double, &y)])
}
