//! What clflow measures: every benchmark by name, with the OpenCL source
//! and build options that make its kernel.

use crate::error::{BenchError, Result};
use clflow_ocl::{DeviceInfo, ProgramSource};
use serde::{Deserialize, Serialize};
use std::fmt;

const STREAM_SOURCE: &str = include_str!("../../../kernels/bench/stream.cl");
const COMPUTE_SOURCE: &str = include_str!("../../../kernels/bench/compute.cl");

/// A directory to read `stream.cl` and `compute.cl` from instead of the
/// copies built into clflow: for trying kernel changes without a rebuild.
pub const KERNELS_ENV: &str = "CLFLOW_BENCH_KERNELS";

/// The text of one of the benchmark sources and where it came from: the
/// built-in copy, or the file in `$CLFLOW_BENCH_KERNELS`.
pub(crate) fn source(file: &str, built_in: &str) -> Result<(String, String)> {
    match std::env::var_os(KERNELS_ENV).filter(|dir| !dir.is_empty()) {
        None => Ok((format!("kernels/bench/{file}"), built_in.to_string())),
        Some(dir) => {
            let path = std::path::Path::new(&dir).join(file);
            let text = std::fs::read_to_string(&path).map_err(|err| BenchError::KernelSource {
                path: path.display().to_string(),
                message: err.to_string(),
            })?;
            Ok((path.display().to_string(), text))
        }
    }
}

/// The vector widths every benchmark is run over.
pub const WIDTHS: [u8; 5] = [1, 2, 4, 8, 16];

/// The lane type of a benchmark's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lane {
    /// 32-bit integers, unsigned so that overflow wraps (signed overflow is
    /// undefined in OpenCL C and a compiler could exploit it).
    Uint,
    Half,
    Float,
    Double,
}

impl Lane {
    /// The OpenCL C spelling.
    pub fn name(self) -> &'static str {
        match self {
            Lane::Uint => "uint",
            Lane::Half => "half",
            Lane::Float => "float",
            Lane::Double => "double",
        }
    }

    pub fn bytes(self) -> u64 {
        match self {
            Lane::Half => 2,
            Lane::Uint | Lane::Float => 4,
            Lane::Double => 8,
        }
    }

    pub fn is_float(self) -> bool {
        !matches!(self, Lane::Uint)
    }

    /// Whether `device` can run kernels on this type, and if not, why.
    pub fn unsupported_on(self, device: &DeviceInfo) -> Option<&'static str> {
        match self {
            Lane::Double if !device.fp64 => Some("the device lacks cl_khr_fp64"),
            Lane::Half if !device.fp16 => Some("the device lacks cl_khr_fp16"),
            _ => None,
        }
    }

    /// The build option that enables the type's extension, if it needs one.
    fn extension_option(self) -> &'static str {
        match self {
            Lane::Double => " -DUSE_FP64",
            Lane::Half => " -DUSE_FP16",
            Lane::Uint | Lane::Float => "",
        }
    }

    /// A literal of this type in OpenCL C.
    fn literal(self, value: f64) -> String {
        match self {
            Lane::Uint => format!("{}u", value as u32),
            Lane::Half => format!("(half){value:?}"),
            Lane::Float => format!("{value:?}f"),
            Lane::Double => format!("{value:?}"),
        }
    }
}

/// A lane type at one vector width: `float4`, `uint`, `double16`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DataType {
    pub lane: Lane,
    pub width: u8,
}

impl DataType {
    pub fn new(lane: Lane, width: u8) -> Self {
        DataType { lane, width }
    }

    pub fn lanes(self) -> u64 {
        u64::from(self.width)
    }

    /// Bytes of one element (one vector).
    pub fn bytes(self) -> u64 {
        self.lane.bytes() * self.lanes()
    }

    /// `(float4)(0.0f,1.0f,2.0f,3.0f)`: a vector whose lanes all differ,
    /// spelled without spaces because it travels as one build option.
    fn lane_ramp(self) -> String {
        let lanes: Vec<String> = (0..self.width)
            .map(|lane| self.lane.literal(f64::from(lane)))
            .collect();
        format!("({self})({})", lanes.join(","))
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.lane.name())?;
        if self.width > 1 {
            write!(f, "{}", self.width)?;
        }
        Ok(())
    }
}

/// The global-memory kernels of `kernels/bench/stream.cl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamKernel {
    Copy,
    Scale,
    Add,
    Triad,
    Read,
    Write,
    /// Scales an array in place: lines read, then written back with no read
    /// before the write (not among the peaks: its write-backs cost a CPU
    /// less than its reads).
    Update,
    /// Reads like `read`, at scattered addresses: the uncoalesced bandwidth.
    Gather,
    /// Reads like `read` within 16 KiB, which an L1 cache holds: its bandwidth.
    #[serde(rename = "resident-16k")]
    Resident16K,
    /// Reads like `read` within 256 KiB, which an L2 cache holds (and no L1).
    #[serde(rename = "resident-256k")]
    Resident256K,
}

impl StreamKernel {
    pub const ALL: [StreamKernel; 6] = [
        StreamKernel::Copy,
        StreamKernel::Scale,
        StreamKernel::Add,
        StreamKernel::Triad,
        StreamKernel::Read,
        StreamKernel::Write,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StreamKernel::Copy => "copy",
            StreamKernel::Scale => "scale",
            StreamKernel::Add => "add",
            StreamKernel::Triad => "triad",
            StreamKernel::Read => "read",
            StreamKernel::Write => "write",
            StreamKernel::Update => clflow_devices::IN_PLACE_KERNEL,
            StreamKernel::Gather => clflow_devices::GATHER_KERNEL,
            StreamKernel::Resident16K => "resident-16k",
            StreamKernel::Resident256K => "resident-256k",
        }
    }

    /// The cache-resident reads, smallest window first.
    pub const RESIDENT: [StreamKernel; 2] = [StreamKernel::Resident16K, StreamKernel::Resident256K];

    /// The bytes a cache-resident read stays within; `None` for the others.
    pub fn window_bytes(self) -> Option<u64> {
        match self {
            StreamKernel::Resident16K => Some(16 << 10),
            StreamKernel::Resident256K => Some(256 << 10),
            _ => None,
        }
    }

    /// The cache level a resident read measures: `L1`, `L2`.
    pub fn cache_level(self) -> Option<&'static str> {
        match self {
            StreamKernel::Resident16K => Some("L1"),
            StreamKernel::Resident256K => Some("L2"),
            _ => None,
        }
    }
}

/// The operation a compute benchmark chains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ComputeOp {
    /// `x * y + b`: two operations, as the paper's Table 1 counts a mad.
    Mad,
    Add,
    Mul,
    /// `x = y` through local memory: one load and one store per update.
    Ldst,
    /// `Mad` and `Add` with a loop whose trip count the compiler must take
    /// as the work-item's own (`-DDIVERGE`): a runtime that vectorises
    /// across work-items only where their control flow agrees runs these
    /// lane by lane, giving the device's scalar rate.
    MadDiverged,
    AddDiverged,
}

impl ComputeOp {
    pub fn name(self) -> &'static str {
        match self {
            ComputeOp::Mad => "mad",
            ComputeOp::Add => "add",
            ComputeOp::Mul => "mul",
            ComputeOp::Ldst => clflow_devices::LOCAL_LDST_KERNEL,
            ComputeOp::MadDiverged => "mad-diverged",
            ComputeOp::AddDiverged => "add-diverged",
        }
    }

    fn define(self) -> &'static str {
        match self {
            ComputeOp::Mad => "-DOP_MAD",
            ComputeOp::Add => "-DOP_ADD",
            ComputeOp::Mul => "-DOP_MUL",
            ComputeOp::Ldst => "-DOP_LDST",
            ComputeOp::MadDiverged => "-DOP_MAD -DDIVERGE",
            ComputeOp::AddDiverged => "-DOP_ADD -DDIVERGE",
        }
    }
}

/// How compute kernels are unrolled: the same constants build the kernel
/// and count its operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unroll {
    /// Independent accumulators per work-item.
    pub chains: u64,
    /// Unrolled updates of every accumulator per repetition.
    pub rounds: u64,
}

/// Elements each bandwidth work-item moves (unrolled in the kernel).
pub const STREAM_PER_ITEM: u64 = 16;

/// The work-group size of the local-memory benchmark (its kernel requires it).
pub const LDST_GROUP: u64 = 64;

/// The widest vector the local-memory benchmark runs at: CHAINS slots of
/// every work-item of a group must fit a GPU's 32 KiB of local memory.
const LDST_MAX_WIDTH: u8 = 4;

/// One benchmark: a kernel at one data type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "lowercase")]
pub enum Benchmark {
    Bandwidth {
        kernel: StreamKernel,
        data: DataType,
    },
    Compute {
        op: ComputeOp,
        data: DataType,
    },
}

impl Benchmark {
    pub fn data(self) -> DataType {
        match self {
            Benchmark::Bandwidth { data, .. } | Benchmark::Compute { data, .. } => data,
        }
    }

    /// `triad/float4`, `mad-chain/double16`: how tables and JSON name it.
    /// Compute ids say `-chain` so that integer adds differ from STREAM's add.
    pub fn id(self) -> String {
        match self {
            Benchmark::Bandwidth { kernel, data } => stream_id(kernel.name(), data),
            Benchmark::Compute { op, data } => compute_id(op.name(), data),
        }
    }

    /// The OpenCL kernel function to run.
    pub fn kernel_name(self) -> String {
        match self {
            Benchmark::Bandwidth { kernel, .. } if kernel.window_bytes().is_some() => {
                "bench_resident".into()
            }
            Benchmark::Bandwidth { kernel, .. } => format!("bench_{}", kernel.name()),
            Benchmark::Compute { .. } => "bench_compute".into(),
        }
    }

    /// The program (source and build options) that holds the kernel.
    pub fn program(self, unroll: Unroll) -> Result<ProgramSource> {
        let data = self.data();
        let types = format!("-DVT={data} -DST={}", data.lane.name());
        Ok(match self {
            Benchmark::Bandwidth { kernel, .. } => {
                let (origin, text) = source("stream.cl", STREAM_SOURCE)?;
                // A resident read's window, in elements of its type.
                let window = kernel.window_bytes().map_or(String::new(), |bytes| {
                    format!(" -DWINDOW={}", bytes / data.bytes())
                });
                ProgramSource::from_text(
                    &origin,
                    &text,
                    &format!(
                        "{types} -DPER_ITEM={STREAM_PER_ITEM}{}{window}{}",
                        if data.width == 1 {
                            " -DSCALAR_ELEMENTS"
                        } else {
                            ""
                        },
                        data.lane.extension_option()
                    ),
                )
            }
            Benchmark::Compute { op, .. } => {
                // Floating-point starts are spread by a small step so that
                // they stay near the fixed point; integer starts by 2 so that
                // an odd seed keeps every start odd.
                let step = if data.lane.is_float() { 0.001 } else { 2.0 };
                let (origin, text) = source("compute.cl", COMPUTE_SOURCE)?;
                ProgramSource::from_text(
                    &origin,
                    &text,
                    &format!(
                        "{types} {} -DCHAINS={} -DROUNDS={} -DSTEP_SCALE={} \
                         -DLANE_RAMP={}{}",
                        op.define(),
                        unroll.chains,
                        unroll.rounds,
                        data.lane.literal(step),
                        data.lane_ramp(),
                        data.lane.extension_option()
                    ),
                )
            }
        })
    }
}

/// The id of a stream benchmark from its kernel's name and data type.
pub(crate) fn stream_id(kernel: &str, data: DataType) -> String {
    format!("{kernel}/{data}")
}

/// The id of a compute benchmark from its operation's name and data type.
pub(crate) fn compute_id(op: &str, data: DataType) -> String {
    format!("{op}-chain/{data}")
}

/// Every benchmark at `widths`, in the order they run: bandwidth first
/// (its power samples give the paper's P̂), then compute.
pub fn all_benchmarks(widths: &[u8]) -> Vec<Benchmark> {
    let mut list = Vec::new();
    for lane in [Lane::Float, Lane::Uint] {
        for kernel in StreamKernel::ALL {
            for &width in widths {
                list.push(Benchmark::Bandwidth { kernel, data: DataType::new(lane, width) });
            }
        }
    }
    // In-place updates, for the cost of a CPU's write-backs of lines it
    // read (clflow's model).
    for &width in widths {
        list.push(Benchmark::Bandwidth {
            kernel: StreamKernel::Update,
            data: DataType::new(Lane::Float, width),
        });
    }
    // Scattered accesses: one scalar run is all the boat hull needs.
    list.push(Benchmark::Bandwidth {
        kernel: StreamKernel::Gather,
        data: DataType::new(Lane::Float, 1),
    });
    // The caches' bandwidths, for the hierarchical roofline's ceilings.
    for kernel in StreamKernel::RESIDENT {
        for &width in widths {
            list.push(Benchmark::Bandwidth { kernel, data: DataType::new(Lane::Float, width) });
        }
    }
    let compute = [
        (ComputeOp::Mad, Lane::Float),
        (ComputeOp::Mad, Lane::Double),
        (ComputeOp::Mad, Lane::Half),
        (ComputeOp::Add, Lane::Uint),
        (ComputeOp::Mul, Lane::Uint),
        (ComputeOp::Mad, Lane::Uint),
        (ComputeOp::Ldst, Lane::Float),
    ];
    // The scalar rates: width 1 only.
    for (op, lane) in [
        (ComputeOp::MadDiverged, Lane::Float),
        (ComputeOp::MadDiverged, Lane::Double),
        (ComputeOp::AddDiverged, Lane::Uint),
    ] {
        if widths.contains(&1) {
            list.push(Benchmark::Compute { op, data: DataType::new(lane, 1) });
        }
    }
    for (op, lane) in compute {
        for &width in widths {
            if op == ComputeOp::Ldst && width > LDST_MAX_WIDTH {
                continue;
            }
            list.push(Benchmark::Compute { op, data: DataType::new(lane, width) });
        }
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_types_print_as_opencl_spells_them() {
        assert_eq!(DataType::new(Lane::Float, 1).to_string(), "float");
        assert_eq!(DataType::new(Lane::Uint, 16).to_string(), "uint16");
        assert_eq!(DataType::new(Lane::Double, 4).bytes(), 32);
        assert_eq!(DataType::new(Lane::Half, 8).bytes(), 16);
    }

    #[test]
    fn lane_ramps_give_every_lane_its_own_value() {
        assert_eq!(
            DataType::new(Lane::Float, 4).lane_ramp(),
            "(float4)(0.0f,1.0f,2.0f,3.0f)"
        );
        assert_eq!(DataType::new(Lane::Uint, 1).lane_ramp(), "(uint)(0u)");
        assert_eq!(
            DataType::new(Lane::Half, 2).lane_ramp(),
            "(half2)((half)0.0,(half)1.0)"
        );
    }

    #[test]
    fn scalar_stream_programs_say_so() {
        let read = |width| Benchmark::Bandwidth {
            kernel: StreamKernel::Read,
            data: DataType::new(Lane::Uint, width),
        };
        assert_eq!(
            read(1).program(UNROLL_FOR_TESTS).unwrap().build_options,
            "-DVT=uint -DST=uint -DPER_ITEM=16 -DSCALAR_ELEMENTS"
        );
        assert_eq!(
            read(8).program(UNROLL_FOR_TESTS).unwrap().build_options,
            "-DVT=uint8 -DST=uint -DPER_ITEM=16"
        );
    }

    const UNROLL_FOR_TESTS: Unroll = Unroll { chains: 8, rounds: 16 };

    #[test]
    fn compute_programs_carry_the_unroll_and_the_operation() {
        let bench = Benchmark::Compute { op: ComputeOp::Mad, data: DataType::new(Lane::Double, 2) };
        let program = bench.program(Unroll { chains: 8, rounds: 16 }).unwrap();
        assert_eq!(
            program.build_options,
            "-DVT=double2 -DST=double -DOP_MAD -DCHAINS=8 -DROUNDS=16 -DSTEP_SCALE=0.001 \
             -DLANE_RAMP=(double2)(0.0,1.0) -DUSE_FP64"
        );
        assert_eq!(bench.id(), "mad-chain/double2");
        assert_eq!(bench.kernel_name(), "bench_compute");
    }

    #[test]
    fn the_catalog_covers_every_kernel_type_and_width_once() {
        let all = all_benchmarks(&WIDTHS);
        // 6 stream kernels x 2 lane types + 6 compute kinds, 5 widths each;
        // the in-place update at 5 widths; one gather; 2 cache-resident
        // reads at 5 widths; the local load/store at widths 1, 2, 4; three
        // diverged chains at width 1.
        assert_eq!(all.len(), (6 * 2 + 6) * 5 + 5 + 1 + 2 * 5 + 3 + 3);
        assert!(all.iter().any(|b| b.id() == "gather/float"));
        assert!(all.iter().any(|b| b.id() == "update/float16"));
        assert!(!all.iter().any(|b| b.id() == "update/uint"));
        assert!(all.iter().any(|b| b.id() == "mad-diverged-chain/float"));
        assert!(!all.iter().any(|b| b.id() == "add-diverged-chain/uint2"));
        let resident = Benchmark::Bandwidth {
            kernel: StreamKernel::Resident256K,
            data: DataType::new(Lane::Float, 4),
        };
        assert_eq!(resident.id(), "resident-256k/float4");
        assert_eq!(resident.kernel_name(), "bench_resident");
        // A window of 256 KiB is 16,384 float4 elements.
        let options = resident.program(UNROLL_FOR_TESTS).unwrap().build_options;
        assert!(options.contains("-DWINDOW=16384"), "{options}");
        assert!(all.iter().any(|b| b.id() == "ldst-chain/float4"));
        assert!(!all.iter().any(|b| b.id() == "ldst-chain/float8"));
        let ids: std::collections::HashSet<String> = all.iter().map(|b| b.id()).collect();
        assert_eq!(ids.len(), all.len());
        assert!(ids.contains("triad/float4") && ids.contains("read/uint16"));
        assert!(ids.contains("add/uint4") && ids.contains("add-chain/uint4"));
        // Bandwidth comes first: P̂ is sampled there.
        assert!(matches!(all[0], Benchmark::Bandwidth { .. }));
        assert_eq!(all_benchmarks(&[4]).len(), 6 * 2 + 6 + 1 + 1 + 2 + 1);
    }
}
