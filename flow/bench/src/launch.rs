//! What a launch costs before any work: an empty kernel (`kernels/bench/
//! launch.cl`) timed on one work-group and on [`MANY_GROUPS`], each time
//! from its profiling events, median of the plan's repetitions.

use crate::catalog::source;
use crate::error::{BenchError, Result};
use crate::sizing::Plan;
use clflow_core::{Launch, NdRange};
use clflow_devices::LaunchOverhead;
use clflow_ocl::{OclDevice, PreparedLaunch, ProgramSource};

const SOURCE: &str = include_str!("../../../kernels/bench/launch.cl");

/// Work-items per work-group, and the work-groups of the larger launch.
const GROUP: u64 = 64;
pub const MANY_GROUPS: u64 = 1024;

/// The empty kernel's id, as progress and errors name it.
pub const ID: &str = "launch/empty";

/// Its expected seconds: two builds and launches that take next to nothing.
pub const EXPECTED_S: f64 = 1.0;

/// Times the empty kernel; the per-group cost is the difference between
/// the two launches over the extra groups (0 where the larger was no
/// slower).
pub fn measure(device: &OclDevice, plan: &Plan) -> Result<LaunchOverhead> {
    let (origin, text) = source("launch.cl", SOURCE)?;
    let program = ProgramSource::from_text(&origin, &text, "");
    let median_s = |groups: u64| -> Result<f64> {
        let launch = Launch {
            kernel: "bench_empty".into(),
            range: NdRange {
                dims: 1,
                global: [groups * GROUP, 1, 1],
                local: Some([GROUP, 1, 1]),
                offset: [0; 3],
            },
            args: Vec::new(),
        };
        let ocl = |source| BenchError::Ocl { benchmark: ID.to_string(), source };
        let mut prepared = PreparedLaunch::new(device, &program, &launch).map_err(ocl)?;
        prepared.time_repeated(plan.warmups.max(1)).map_err(ocl)?;
        // More launches than a benchmark's: each is short and noisy.
        let mut times = prepared
            .time_repeated(plan.repetitions.max(5) * 4)
            .map_err(ocl)?;
        times.sort_unstable();
        Ok(times[times.len() / 2] as f64 * 1e-9)
    };
    let one = median_s(1)?;
    let many = median_s(MANY_GROUPS)?;
    Ok(LaunchOverhead {
        empty_s: one,
        per_group_s: ((many - one) / (MANY_GROUPS - 1) as f64).max(0.0),
    })
}
