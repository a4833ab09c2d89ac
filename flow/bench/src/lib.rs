//! clflow's stage 1 measurements (paper §3.1, §4.1): microbenchmarks that
//! give a device's peak global-memory bandwidth B̂, peak arithmetic
//! throughput F̂ per data type (fp32, fp64, fp16, int32), and, through a
//! power sensor from `clflow-devices`, the peak power P̂ during them.
//!
//! - [`catalog`]: every benchmark, its kernel in `kernels/bench/` and build options;
//! - [`Benchmark::work`]: bytes and operations per launch, from its parameters;
//! - [`Plan`]: sizes from the device (buffers, work-items, repetitions);
//! - [`run_benchmarks`]: warm-up, timed launches, power, statistics, each
//!   benchmark a [`Step`] of the run told as an [`Event`]; [`costs::measure`]
//!   the same for what work-items pay beyond throughput;
//! - [`Measurement::to_profile`] and [`render_table`]: the measured profile
//!   the store keeps, and its table;
//! - [`device_rates`]: a device's profiles as the prediction models read them.

mod args;
pub mod catalog;
pub mod costs;
mod data;
mod error;
#[cfg(test)]
mod fake;
pub mod launch;
mod profile;
mod progress;
mod rates;
mod runner;
mod sizing;
mod work;

pub use catalog::{Benchmark, ComputeOp, DataType, Lane, StreamKernel, Unroll};
pub use error::{BenchError, Result};
pub use profile::{datasheet_notes, render_table};
pub use progress::{expected_s, Event, Step};
pub use rates::{device_rates, simd_of};
pub use runner::{rate_statistic, run_benchmarks, steps, BenchResult, Measurement, Skipped};
pub use sizing::{Mode, Plan};
pub use work::{Shape, Unit, Work};
