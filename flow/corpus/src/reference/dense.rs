//! Dense kernels: sgemm (naive and tiled) and the work-group reduction.

use super::{index, FloatOutput, F32_UNIT};
use crate::args::Args;
use crate::{Case, CheckError, ExpectedOutput};
use clflow_core::Launch;

/// sgemm-tiled's tile edge (`TILE` in the kernel).
const TILE: u64 = 16;

/// C = A B for n x n row-major matrices; both kernels sum k = 0..n in
/// order with multiply-adds, fused or not. Each product is rounded at most
/// once and each partial sum once, and no partial sum exceeds
/// sum_k |a_ik b_kj|, so the error is at most (n + 1) F32_UNIT times that
/// (the classic recursive dot-product bound, with one unit to spare for
/// second-order terms).
pub fn sgemm(launch: &Launch, case: Case) -> Result<Vec<ExpectedOutput>, CheckError> {
    let args = Args::new(case, launch, 4)?;
    let n = u64::from(args.scalar::<u32>(3)?);
    if case == Case::SgemmTiled && n % TILE != 0 {
        return Err(args.bad(
            3,
            format!("n = {n} is not a multiple of the tile size {TILE}"),
        ));
    }
    let (cols, rows) = (args.global_ids(0), args.global_ids(1));
    if cols.end > n || rows.end > n {
        return Err(args.bad_range(format!(
            "work-items reach column {} and row {}, the matrices are {n} x {n} (the kernel has no bounds guard)",
            cols.end.saturating_sub(1),
            rows.end.saturating_sub(1)
        )));
    }
    let elements = n * n;
    let a = args.buffer_of_len::<f32>(0, elements, "an n x n matrix")?;
    let b = args.buffer_of_len::<f32>(1, elements, "an n x n matrix")?;
    let mut c = FloatOutput::new(&args, 2)?;
    if (c.len() as u64) < elements {
        return Err(args.bad(
            2,
            format!(
                "has {} elements but an n x n matrix needs {elements}",
                c.len()
            ),
        ));
    }
    let n = index(n);
    for row in rows.map(index) {
        for col in cols.clone().map(index) {
            let (mut sum, mut magnitude) = (0.0f64, 0.0f64);
            for k in 0..n {
                let product = f64::from(a[row * n + k]) * f64::from(b[k * n + col]);
                sum += product;
                magnitude += product.abs();
            }
            c.set(row * n + col, sum, (n + 1) as f64 * F32_UNIT * magnitude);
        }
    }
    Ok(vec![c.finish()])
}

/// partial[g] = sum of in[g L + lid] (0 past n) over the group's L
/// work-items, summed as a tree of depth log2 L: each element goes through
/// log2 L additions, so the error is at most log2 L F32_UNIT sum |x|.
pub fn reduction(launch: &Launch) -> Result<Vec<ExpectedOutput>, CheckError> {
    let args = Args::new(Case::Reduction, launch, 4)?;
    let input = args.buffer::<f32>(0)?;
    let n = u64::from(args.scalar::<u32>(1)?);
    let local = args.local_size(0, "the reduction sums one work-group at a time")?;
    if !local.is_power_of_two() {
        return Err(args.bad_range(format!(
            "local size {local} is not a power of two; the tree halves it each step"
        )));
    }
    let scratch = args.local_bytes(3)?;
    if scratch < local * 4 {
        return Err(args.bad(
            3,
            format!("{scratch} bytes cannot hold one float for each of {local} work-items"),
        ));
    }
    let ids = args.global_ids(0);
    let global = ids.end - ids.start;
    if global % local != 0 {
        return Err(args.bad_range(format!(
            "global size {global} is not a multiple of the local size {local}"
        )));
    }
    let read_end = ids.end.min(n);
    if (input.len() as u64) < read_end {
        return Err(args.bad(
            0,
            format!(
                "has {} elements but work-items up to {} read it",
                input.len(),
                read_end - 1
            ),
        ));
    }
    let groups = global / local;
    let mut partial = FloatOutput::new(&args, 2)?;
    if (partial.len() as u64) < groups {
        return Err(args.bad(
            2,
            format!("has {} elements for {groups} work-groups", partial.len()),
        ));
    }
    let depth = f64::from(local.trailing_zeros());
    for group in 0..groups {
        let first = ids.start + group * local;
        let values = (first..first + local)
            .filter(|&id| id < n)
            .map(|id| f64::from(input[index(id)]));
        let (sum, magnitude) = values.fold((0.0, 0.0), |(s, m), x| (s + x, m + x.abs()));
        partial.set(index(group), sum, depth * F32_UNIT * magnitude);
    }
    Ok(vec![partial.finish()])
}
