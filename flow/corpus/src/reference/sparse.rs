//! CSR sparse matrix-vector product.

use super::{index, FloatOutput, F32_UNIT};
use crate::args::Args;
use crate::{Case, CheckError, ExpectedOutput};
use clflow_core::Launch;

/// y[row] = sum of values[j] x[col_idx[j]] over the row's non-zeros, in
/// order: as sgemm's dot products, (len + 1) F32_UNIT sum |v x| for a row
/// of len non-zeros.
pub fn spmv(launch: &Launch) -> Result<Vec<ExpectedOutput>, CheckError> {
    let args = Args::new(Case::Spmv, launch, 6)?;
    let rows = u64::from(args.scalar::<u32>(0)?);
    let row_ptr = args.buffer::<u32>(1)?;
    let col_idx = args.buffer::<u32>(2)?;
    let values = args.buffer::<f32>(3)?;
    let x = args.buffer::<f32>(4)?;
    let mut y = FloatOutput::new(&args, 5)?;

    let ids = args.global_ids(0);
    let active = ids.start.min(rows)..ids.end.min(rows);
    if active.end + 1 > row_ptr.len() as u64 && !active.is_empty() {
        return Err(args.bad(
            1,
            format!(
                "has {} entries but rows up to {} need {}",
                row_ptr.len(),
                active.end - 1,
                active.end + 1
            ),
        ));
    }
    if (y.len() as u64) < active.end {
        return Err(args.bad(
            5,
            format!("has {} elements for {} rows", y.len(), active.end),
        ));
    }
    for row in active.map(index) {
        let (start, end) = (row_ptr[row] as usize, row_ptr[row + 1] as usize);
        let entries = start..end.max(start);
        if entries.end > values.len() || entries.end > col_idx.len() {
            return Err(args.bad(
                1,
                format!(
                    "row {row} spans non-zeros {start}..{end}, beyond the {} values",
                    values.len().min(col_idx.len())
                ),
            ));
        }
        let (mut sum, mut magnitude) = (0.0f64, 0.0f64);
        for j in entries.clone() {
            let column = col_idx[j] as usize;
            let Some(&xj) = x.get(column) else {
                return Err(args.bad(
                    2,
                    format!(
                        "non-zero {j} (row {row}) names column {column}, x has {} elements",
                        x.len()
                    ),
                ));
            };
            let product = f64::from(values[j]) * f64::from(xj);
            sum += product;
            magnitude += product.abs();
        }
        y.set(row, sum, (entries.len() + 1) as f64 * F32_UNIT * magnitude);
    }
    Ok(vec![y.finish()])
}
