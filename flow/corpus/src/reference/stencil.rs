//! The 5-point stencil.

use super::{index, FloatOutput, F32_UNIT};
use crate::args::Args;
use crate::{Case, CheckError, ExpectedOutput};
use clflow_core::Launch;

/// Interior: c0 centre + c1 ((north + south) + (west + east)); boundary:
/// copied. The neighbour sum is a tree of depth 2, then a multiply and a
/// possibly fused multiply-add: at most 5 roundings on the way, so the bound
/// is 5 F32_UNIT (|c0 centre| + |c1| sum |neighbour|). Copies are exact.
pub fn expected(launch: &Launch) -> Result<Vec<ExpectedOutput>, CheckError> {
    let args = Args::new(Case::Stencil, launch, 6)?;
    let nx = u64::from(args.scalar::<u32>(2)?);
    let ny = u64::from(args.scalar::<u32>(3)?);
    let c0 = f64::from(args.scalar::<f32>(4)?);
    let c1 = f64::from(args.scalar::<f32>(5)?);
    let input = args.buffer_of_len::<f32>(0, nx * ny, "an nx x ny grid")?;
    let mut out = FloatOutput::new(&args, 1)?;
    if (out.len() as u64) < nx * ny {
        return Err(args.bad(
            1,
            format!(
                "has {} elements but an nx x ny grid needs {}",
                out.len(),
                nx * ny
            ),
        ));
    }
    let at = |i: u64| f64::from(input[index(i)]);
    for y in args.global_ids(1).filter(|&y| y < ny) {
        for x in args.global_ids(0).filter(|&x| x < nx) {
            let i = y * nx + x;
            let interior = x > 0 && x < nx - 1 && y > 0 && y < ny - 1;
            if !interior {
                out.set(index(i), at(i), 0.0);
                continue;
            }
            let neighbours = [at(i - nx), at(i + nx), at(i - 1), at(i + 1)];
            let sum: f64 = neighbours.iter().sum();
            let magnitude =
                (c0 * at(i)).abs() + c1.abs() * neighbours.iter().map(|v| v.abs()).sum::<f64>();
            out.set(index(i), c0 * at(i) + c1 * sum, 5.0 * F32_UNIT * magnitude);
        }
    }
    Ok(vec![out.finish()])
}
