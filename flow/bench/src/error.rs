//! Why a benchmark run could not finish.

use clflow_core::FailureKind;
use clflow_ocl::OclError;

pub type Result<T, E = BenchError> = std::result::Result<T, E>;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BenchError {
    /// An OpenCL step of one benchmark failed.
    #[error("benchmark {benchmark}: {source}")]
    Ocl {
        benchmark: String,
        #[source]
        source: OclError,
    },

    /// The device has too little memory for the smallest bandwidth buffers.
    #[error(
        "device '{device}' has {available} bytes of global memory; \
         the bandwidth benchmarks need at least {needed}"
    )]
    TooSmall {
        device: String,
        needed: u64,
        available: u64,
    },

    /// A benchmark source under `$CLFLOW_BENCH_KERNELS` could not be read.
    #[error("{path}: {message} (read because CLFLOW_BENCH_KERNELS is set)")]
    KernelSource { path: String, message: String },

    /// The profiling timer gave zero or no times for a benchmark.
    #[error(
        "benchmark {benchmark}: the device reported zero kernel time for every \
         repetition (profiling timer resolution {resolution_ns} ns)"
    )]
    NoTime {
        benchmark: String,
        resolution_ns: usize,
    },
}

impl clflow_core::Diagnostic for BenchError {
    fn kind(&self) -> FailureKind {
        match self {
            BenchError::KernelSource { .. } => FailureKind::Input,
            _ => FailureKind::Analysis,
        }
    }
}
