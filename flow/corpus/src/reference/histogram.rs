//! The 256-bin byte histogram.

use super::{exact, index};
use crate::args::Args;
use crate::{Case, CheckError, ExpectedOutput};
use clflow_core::{Launch, ScalarType};

const BINS: usize = 256;

/// hist[b] += how often byte b occurs among data[0..n] that the work-items
/// visit (each id g visits g, g + global size, ... below n). Integer
/// atomics make the result exact whatever the interleaving.
pub fn expected(launch: &Launch) -> Result<Vec<ExpectedOutput>, CheckError> {
    let args = Args::new(Case::Histogram, launch, 3)?;
    let data = args.buffer::<u8>(0)?;
    let n = u64::from(args.scalar::<u32>(1)?);
    let mut hist = args.buffer::<u32>(2)?;
    if hist.len() < BINS {
        return Err(args.bad(
            2,
            format!("has {} bins, the kernel adds to {BINS}", hist.len()),
        ));
    }
    let ids = args.global_ids(0);
    let stride = (ids.end - ids.start).max(1);
    if ids.start < n && (data.len() as u64) < n {
        return Err(args.bad(0, format!("has {} bytes but n is {n}", data.len())));
    }
    for first in ids {
        for i in (first..n).step_by(index(stride)) {
            let bin = usize::from(data[index(i)]);
            hist[bin] = hist[bin].wrapping_add(1);
        }
    }
    Ok(vec![exact(2, ScalarType::UInt, &hist)])
}
