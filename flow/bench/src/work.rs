//! Bytes moved and operations done by one launch of a benchmark, derived
//! from its parameters. This module is the only place that knows them:
//! rates, tables and profiles all come from [`Work`].

use crate::catalog::{Benchmark, ComputeOp, StreamKernel, Unroll, STREAM_PER_ITEM};
use serde::{Deserialize, Serialize};

/// The size of one launch: what the benchmark's arithmetic needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    /// A bandwidth kernel over `elements` vector elements per array.
    Stream { elements: u64 },
    /// A compute kernel: `work_items`, each running `reps` repetitions of
    /// the unrolled body.
    Compute {
        work_items: u64,
        reps: u64,
        unroll: Unroll,
    },
}

/// What one launch moves to and from global memory, and computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Work {
    pub bytes: u64,
    /// Arithmetic operations, vector lanes counted, a mad counted as 2.
    pub ops: u64,
}

/// What a benchmark's figure measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    /// 10⁹ bytes per second.
    #[serde(rename = "GB/s")]
    GigabytesPerSecond,
    /// 10⁹ floating-point operations per second.
    #[serde(rename = "GFLOP/s")]
    GigaflopsPerSecond,
    /// 10⁹ integer operations per second.
    #[serde(rename = "GIOP/s")]
    GigaopsPerSecond,
}

impl Unit {
    /// Every unit is 10⁹ of its base quantity per second.
    pub const SCALE: f64 = 1e9;

    pub fn symbol(self) -> &'static str {
        match self {
            Unit::GigabytesPerSecond => "GB/s",
            Unit::GigaflopsPerSecond => "GFLOP/s",
            Unit::GigaopsPerSecond => "GIOP/s",
        }
    }
}

impl Benchmark {
    /// What one launch of this benchmark at `shape` moves and computes.
    /// `None` when the shape is of the other family.
    pub fn work(self, shape: Shape) -> Option<Work> {
        match (self, shape) {
            (Benchmark::Bandwidth { kernel, data }, Shape::Stream { elements }) => {
                let (arrays, ops_per_lane_element) = stream_traffic(kernel);
                let ops = match kernel {
                    // The reductions add PER_ITEM elements with PER_ITEM - 1 adds.
                    StreamKernel::Read
                    | StreamKernel::Gather
                    | StreamKernel::Resident16K
                    | StreamKernel::Resident256K => {
                        (elements - elements / STREAM_PER_ITEM) * data.lanes()
                    }
                    _ => ops_per_lane_element * elements * data.lanes(),
                };
                Some(Work { bytes: arrays * data.bytes() * elements, ops })
            }
            (Benchmark::Compute { op, data }, Shape::Compute { work_items, reps, unroll }) => {
                Some(Work {
                    // Each work-item stores its sum once.
                    bytes: work_items * data.bytes(),
                    ops: work_items
                        * reps
                        * unroll.rounds
                        * unroll.chains
                        * data.lanes()
                        * ops_per_update(op),
                })
            }
            _ => None,
        }
    }

    /// The unit of this benchmark's figure.
    pub fn unit(self) -> Unit {
        match self {
            Benchmark::Bandwidth { .. } => Unit::GigabytesPerSecond,
            // Loads and stores are not floating-point operations.
            Benchmark::Compute { op: ComputeOp::Ldst, .. } => Unit::GigaopsPerSecond,
            Benchmark::Compute { data, .. } if data.lane.is_float() => Unit::GigaflopsPerSecond,
            Benchmark::Compute { .. } => Unit::GigaopsPerSecond,
        }
    }

    /// The rate, bytes or operations per second, of one launch of `work`
    /// that took `ns` nanoseconds.
    pub fn rate(self, work: Work, ns: f64) -> f64 {
        let amount = match self {
            Benchmark::Bandwidth { .. } => work.bytes,
            Benchmark::Compute { .. } => work.ops,
        };
        amount as f64 / (ns * 1e-9)
    }
}

/// Arrays each element of a stream kernel crosses (reads plus writes), and
/// arithmetic operations per lane and element.
fn stream_traffic(kernel: StreamKernel) -> (u64, u64) {
    match kernel {
        StreamKernel::Copy => (2, 0),
        StreamKernel::Scale | StreamKernel::Update => (2, 1),
        StreamKernel::Add => (3, 1),
        StreamKernel::Triad => (3, 2),
        StreamKernel::Read => (1, 1),
        StreamKernel::Write => (1, 0),
        StreamKernel::Gather | StreamKernel::Resident16K | StreamKernel::Resident256K => (1, 1),
    }
}

/// Operations one accumulator update counts.
fn ops_per_update(op: ComputeOp) -> u64 {
    match op {
        // A load and a store.
        ComputeOp::Mad | ComputeOp::MadDiverged | ComputeOp::Ldst => 2,
        ComputeOp::Add | ComputeOp::AddDiverged | ComputeOp::Mul => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{DataType, Lane};

    fn stream(kernel: StreamKernel, lane: Lane, width: u8, elements: u64) -> Work {
        Benchmark::Bandwidth { kernel, data: DataType::new(lane, width) }
            .work(Shape::Stream { elements })
            .unwrap()
    }

    #[test]
    fn triad_over_float4_moves_three_arrays_and_does_two_flops_a_lane() {
        let n = 1 << 20;
        let work = stream(StreamKernel::Triad, Lane::Float, 4, n);
        assert_eq!(work.bytes, 3 * 16 * n);
        assert_eq!(work.ops, 2 * 4 * n);
    }

    #[test]
    fn every_stream_kernel_counts_its_own_arrays() {
        let n = 4096;
        let bytes = |k| stream(k, Lane::Uint, 8, n).bytes;
        assert_eq!(bytes(StreamKernel::Copy), 2 * 32 * n);
        assert_eq!(bytes(StreamKernel::Scale), 2 * 32 * n);
        assert_eq!(bytes(StreamKernel::Add), 3 * 32 * n);
        assert_eq!(bytes(StreamKernel::Read), 32 * n);
        assert_eq!(bytes(StreamKernel::Write), 32 * n);
        assert_eq!(bytes(StreamKernel::Gather), 32 * n);
        assert_eq!(stream(StreamKernel::Copy, Lane::Float, 1, n).ops, 0);
        assert_eq!(stream(StreamKernel::Scale, Lane::Float, 2, n).ops, 2 * n);
        // 4096 elements in groups of 16: 256 groups of 15 adds, 8 lanes each.
        assert_eq!(
            stream(StreamKernel::Read, Lane::Uint, 8, n).ops,
            256 * 15 * 8
        );
    }

    #[test]
    fn compute_ops_multiply_items_reps_rounds_chains_and_lanes() {
        let unroll = Unroll { chains: 8, rounds: 16 };
        let shape = Shape::Compute { work_items: 1000, reps: 3, unroll };
        let mad = Benchmark::Compute { op: ComputeOp::Mad, data: DataType::new(Lane::Float, 16) };
        let work = mad.work(shape).unwrap();
        assert_eq!(work.ops, 1000 * 3 * 16 * 8 * 16 * 2);
        assert_eq!(work.bytes, 1000 * 64);
        let add = Benchmark::Compute { op: ComputeOp::Add, data: DataType::new(Lane::Uint, 2) };
        assert_eq!(add.work(shape).unwrap().ops, 1000 * 3 * 16 * 8 * 2);
        assert_eq!(add.unit(), Unit::GigaopsPerSecond);
        // A local copy counts its load and its store, lanes counted.
        let ldst = Benchmark::Compute { op: ComputeOp::Ldst, data: DataType::new(Lane::Float, 4) };
        assert_eq!(ldst.work(shape).unwrap().ops, 1000 * 3 * 16 * 8 * 4 * 2);
        assert_eq!(ldst.unit(), Unit::GigaopsPerSecond);
        assert_eq!(mad.unit(), Unit::GigaflopsPerSecond);
        assert!(mad.work(Shape::Stream { elements: 1 }).is_none());
    }

    #[test]
    fn rates_are_amounts_per_second() {
        let triad = Benchmark::Bandwidth {
            kernel: StreamKernel::Triad,
            data: DataType::new(Lane::Float, 1),
        };
        // 1.2e9 bytes in 0.1 s is 12 GB/s.
        let work = Work { bytes: 1_200_000_000, ops: 0 };
        assert!((triad.rate(work, 1e8) / Unit::SCALE - 12.0).abs() < 1e-9);
        assert_eq!(triad.unit().symbol(), "GB/s");
    }
}
