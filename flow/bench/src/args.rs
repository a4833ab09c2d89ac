//! The launches of every benchmark: its buffers and scalar arguments in
//! kernel order, as `kernels/bench/*.cl` declares them.

use crate::catalog::{Benchmark, ComputeOp, DataType, Lane, StreamKernel, LDST_GROUP};
use clflow_core::{Access, ArgValue, ElementType, Launch, LaunchArg, NdRange, ScalarType};

/// The scalar factor of scale and triad.
const STREAM_FACTOR: f64 = 3.0;
/// A sum the read kernel's data can never give for floats (they lie in
/// [1, 2)), and practically never for wrapping integer sums.
const READ_SENTINEL: f64 = 4_294_967_295.0;
/// Compute kernels start near 0.1 and add 0.1 each mad: x = x*y + 0.1 with
/// x, y near 0.11 stays there. Integer starts are odd (seed 1) and integer
/// mads add an even constant, so products stay odd.
const FLOAT_SEED: f64 = 0.1;
const FLOAT_ADDEND: f64 = 0.1;
const INT_SEED: f64 = 1.0;
const INT_ADDEND: f64 = 2_654_435_768.0;
/// Seed of the write kernel's hash.
const WRITE_SEED: u32 = 0x5EED_1234;

impl Lane {
    fn scalar_type(self) -> ScalarType {
        match self {
            Lane::Uint => ScalarType::UInt,
            Lane::Half => ScalarType::Half,
            Lane::Float => ScalarType::Float,
            Lane::Double => ScalarType::Double,
        }
    }

    /// `value` as a kernel argument of this type (little-endian bytes).
    fn scalar_arg(self, value: f64) -> ArgValue {
        let bytes = match self {
            Lane::Uint => (value as u32).to_le_bytes().to_vec(),
            Lane::Half => clflow_core::half::from_f32(value as f32)
                .to_le_bytes()
                .to_vec(),
            Lane::Float => (value as f32).to_le_bytes().to_vec(),
            Lane::Double => value.to_le_bytes().to_vec(),
        };
        ArgValue::Scalar { bytes }
    }
}

impl DataType {
    fn element_type(self) -> ElementType {
        ElementType { scalar: self.lane.scalar_type(), lanes: self.width }
    }

    fn buffer(self, access: Access, bytes: Vec<u8>) -> ArgValue {
        ArgValue::Buffer { ty: self.element_type(), access, bytes }
    }
}

/// The three arrays a stream kernel may use, in STREAM's names. One fill
/// of pseudo-random data on the device serves every stream benchmark of a
/// lane type: a launch names them and leaves its own bytes empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Array {
    A,
    B,
    C,
}

impl Array {
    pub const ALL: [Array; 3] = [Array::A, Array::B, Array::C];

    pub fn name(self) -> &'static str {
        match self {
            Array::A => "a",
            Array::B => "b",
            Array::C => "c",
        }
    }
}

/// A one-dimensional range of `work_items`, work-group size left to the runtime.
fn range(work_items: u64) -> NdRange {
    NdRange {
        dims: 1,
        global: [work_items, 1, 1],
        local: None,
        offset: [0; 3],
    }
}

fn arg(name: &str, value: ArgValue) -> LaunchArg {
    LaunchArg { name: Some(name.to_string()), value }
}

/// The launch of a stream kernel over `work_items`, its arrays' bytes
/// left empty for the shared ones ([`stream_arrays`]).
pub fn stream_launch(kernel: StreamKernel, data: DataType, work_items: u64) -> Launch {
    let array = |array: Array, access| arg(array.name(), data.buffer(access, Vec::new()));
    let (ro, wo) = (Access::ReadOnly, Access::WriteOnly);
    let factor = || data.lane.scalar_arg(STREAM_FACTOR);
    let args = match kernel {
        StreamKernel::Copy => vec![array(Array::A, ro), array(Array::C, wo)],
        StreamKernel::Scale => vec![array(Array::C, ro), array(Array::B, wo), arg("q", factor())],
        StreamKernel::Add => vec![
            array(Array::A, ro),
            array(Array::B, ro),
            array(Array::C, wo),
        ],
        StreamKernel::Triad => vec![
            array(Array::B, ro),
            array(Array::C, ro),
            array(Array::A, wo),
            arg("q", factor()),
        ],
        StreamKernel::Update => vec![array(Array::A, Access::ReadWrite), arg("q", factor())],
        StreamKernel::Read
        | StreamKernel::Gather
        | StreamKernel::Resident16K
        | StreamKernel::Resident256K => vec![
            array(Array::A, ro),
            arg("out", data.buffer(wo, vec![0; data.bytes() as usize])),
            arg("sentinel", data.lane.scalar_arg(READ_SENTINEL)),
        ],
        StreamKernel::Write => vec![
            array(Array::C, wo),
            arg(
                "seed",
                ArgValue::Scalar { bytes: WRITE_SEED.to_le_bytes().to_vec() },
            ),
        ],
    };
    Launch {
        kernel: Benchmark::Bandwidth { kernel, data }.kernel_name(),
        range: range(work_items),
        args,
    }
}

/// Which arguments of a stream launch are which shared array.
pub fn stream_arrays(launch: &Launch) -> Vec<(usize, Array)> {
    launch
        .args
        .iter()
        .enumerate()
        .filter_map(|(index, arg)| {
            let named = Array::ALL
                .into_iter()
                .find(|array| arg.name.as_deref() == Some(array.name()));
            named.map(|array| (index, array))
        })
        .collect()
}

/// The launch of the compute kernel of `op` at `data` over `work_items`,
/// each running `reps` repetitions. The local-memory kernel requires its
/// work-group size; the others leave it to the runtime.
pub fn compute_launch(op: ComputeOp, data: DataType, work_items: u64, reps: u32) -> Launch {
    let (seed, addend) = if data.lane.is_float() {
        (FLOAT_SEED, FLOAT_ADDEND)
    } else {
        (INT_SEED, INT_ADDEND)
    };
    let out = vec![0u8; (work_items * data.bytes()) as usize];
    let mut range = range(work_items);
    if op == ComputeOp::Ldst {
        range.local = Some([LDST_GROUP, 1, 1]);
    }
    Launch {
        kernel: "bench_compute".into(),
        range,
        args: vec![
            arg("out", data.buffer(Access::WriteOnly, out)),
            arg("seed", data.lane.scalar_arg(seed)),
            arg("b", data.lane.scalar_arg(addend)),
            arg(
                "reps",
                ArgValue::Scalar { bytes: reps.to_le_bytes().to_vec() },
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triad_reads_b_and_c_and_writes_a_all_shared() {
        let data = DataType::new(Lane::Float, 4);
        let launch = stream_launch(StreamKernel::Triad, data, 1);
        assert_eq!(launch.kernel, "bench_triad");
        let accesses: Vec<Option<Access>> = launch
            .args
            .iter()
            .map(|a| match &a.value {
                ArgValue::Buffer { access, ty, bytes } => {
                    assert_eq!(ty.to_string(), "float4");
                    assert!(bytes.is_empty(), "the shared array is made once, apart");
                    Some(*access)
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            accesses,
            [
                Some(Access::ReadOnly),
                Some(Access::ReadOnly),
                Some(Access::WriteOnly),
                None
            ]
        );
        assert_eq!(
            launch.args[3].value,
            ArgValue::Scalar { bytes: 3.0f32.to_le_bytes().to_vec() }
        );
        assert_eq!(
            stream_arrays(&launch),
            [(0, Array::B), (1, Array::C), (2, Array::A)]
        );
    }

    #[test]
    fn a_read_keeps_its_own_output_beside_the_shared_array() {
        let launch = stream_launch(StreamKernel::Read, DataType::new(Lane::Uint, 2), 8);
        assert_eq!(stream_arrays(&launch), [(0, Array::A)]);
        let ArgValue::Buffer { bytes, .. } = &launch.args[1].value else {
            panic!("out is a buffer");
        };
        assert_eq!(bytes.len(), 8);
    }

    #[test]
    fn compute_launches_pass_reps_as_a_uint_and_size_the_output() {
        let launch = compute_launch(ComputeOp::Mad, DataType::new(Lane::Double, 2), 100, 7);
        assert_eq!(launch.range.global, [100, 1, 1]);
        assert_eq!(launch.range.local, None);
        let local = compute_launch(ComputeOp::Ldst, DataType::new(Lane::Float, 1), 128, 1);
        assert_eq!(local.range.local, Some([LDST_GROUP, 1, 1]));
        let ArgValue::Buffer { bytes, .. } = &launch.args[0].value else {
            panic!("out is a buffer");
        };
        assert_eq!(bytes.len(), 100 * 16);
        assert_eq!(
            launch.args[1].value,
            ArgValue::Scalar { bytes: 0.1f64.to_le_bytes().to_vec() }
        );
        assert_eq!(
            launch.args[3].value,
            ArgValue::Scalar { bytes: 7u32.to_le_bytes().to_vec() }
        );
    }
}
