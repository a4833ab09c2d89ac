//! What the models know about a kernel, all of it from the interpreter's
//! counts of one real launch: work, traffic, the instruction mix, and the
//! bytes the host moves. No model reads `Counts` itself; they read
//! [`KernelFacts`], so a count from elsewhere (a cache simulation, a
//! coalescing analysis) plugs in by filling the optional fields.

use clflow_counts::{is_memory_op, Counts, OpClass, Space, Summary};
pub use clflow_counts::{HostTransfer, PerClass};
use serde::Serialize;

/// Executed instruction lanes sorted into the quantitative roofline's three
/// kinds (its eq. 5–7): arithmetic per class, loads and stores, and the rest.
///
/// Rules, applied to each histogram entry (opcode × type, in lanes):
/// * **ldst**: `OpLoad …` and `OpStore …` in any space (vload/vstore and
///   memcpy count there too) and atomics;
/// * **other**: control flow, and every instruction the interpreter counts
///   as not arithmetic (conversions, select, phi, register moves);
/// * **arithmetic**: the rest, in the class of its type (`float` → fp32,
///   `double` → fp64, `half` → fp16, anything else → int). A multi-operation
///   builtin (`mad`, `rotate`) is one instruction here, however many
///   operations W counts for it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct InstructionMix {
    pub arithmetic: PerClass,
    pub ldst: u64,
    /// Of `ldst`, the loads and stores of private memory, which a device
    /// compiler that unrolls their loops mostly keeps in registers.
    pub private_ldst: u64,
    pub other: u64,
}

impl InstructionMix {
    pub fn total(&self) -> u64 {
        let a = &self.arithmetic;
        a.int + a.fp32 + a.fp64 + a.fp16 + self.ldst + self.other
    }
}

/// Control-flow instructions: counted once per execution, never arithmetic.
const CONTROL: &[&str] = &[
    "OpBranch",
    "OpBranchConditional",
    "OpSwitch",
    "OpReturn",
    "OpReturnValue",
    "OpFunctionCall",
    "OpControlBarrier",
    "OpMemoryBarrier",
    "OpUnreachable",
    "OpKill",
];

/// The class of a histogram type name (`float`, `uint`, `ptr` …).
fn class_of_type(ty: &str) -> OpClass {
    match ty {
        "float" => OpClass::Fp32,
        "double" => OpClass::Fp64,
        "half" => OpClass::Fp16,
        _ => OpClass::Int,
    }
}

impl InstructionMix {
    /// Sorts a run's histogram by the rules above.
    pub fn of(counts: &Counts) -> InstructionMix {
        let mut mix = InstructionMix::default();
        for entry in &counts.histogram {
            let op = entry.op.as_str();
            let not_arithmetic = counts
                .work
                .iter()
                .any(|(key, _)| key.op == op && !key.arith);
            if is_memory_op(op) {
                mix.ldst += entry.lanes;
                if op.ends_with(" private") {
                    mix.private_ldst += entry.lanes;
                }
            } else if CONTROL.contains(&op) || not_arithmetic {
                mix.other += entry.lanes;
            } else {
                mix.arithmetic.add(class_of_type(&entry.ty), entry.lanes);
            }
        }
        mix
    }
}

/// How the kernel's global accesses coalesce: bytes whose neighbouring
/// work-items touch neighbouring addresses, and the rest. Produced by a
/// coalescing analysis; absent, the boat hull takes every access as
/// coalesced and says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Coalescing {
    pub coalesced_bytes: u64,
    pub uncoalesced_bytes: u64,
    /// Whether the device pays for uncoalesced accesses: a GPU or an
    /// accelerator issues a memory transaction per scattered work-item; a
    /// CPU runs each work-item's accesses through its core's caches, where
    /// a work-item's own next access finds the rest of the line.
    pub penalised: bool,
}

impl Coalescing {
    /// The share of bytes that coalesce, in [0, 1]; 1 for no traffic.
    pub fn coalesced_share(&self) -> f64 {
        let total = self.coalesced_bytes + self.uncoalesced_bytes;
        if total == 0 {
            1.0
        } else {
            self.coalesced_bytes as f64 / total as f64
        }
    }
}

/// Global-memory traffic in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Traffic {
    /// Every global and constant load and store (Q accessed).
    pub accessed: u64,
    /// Each line once (Q compulsory, a cold cache that holds everything).
    pub compulsory: u64,
    /// DRAM traffic at the device's cache size, from a cache simulation.
    pub simulated: Option<u64>,
    /// Of the compulsory traffic, the bytes written.
    #[serde(default)]
    pub compulsory_written: u64,
    /// Of the simulated traffic, the bytes written back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulated_written: Option<u64>,
    /// Of the simulated traffic's written lines, the bytes a store brought
    /// into the cache (rather than a load): a CPU reads them first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulated_allocated: Option<u64>,
    /// The size of the cache the simulation ran at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_bytes: Option<u64>,
}

impl Traffic {
    /// Of [`Traffic::dram`]'s bytes, the share written: 0 for none.
    pub fn dram_write_share(&self) -> f64 {
        let (total, _) = self.dram();
        let written = match self.simulated {
            Some(_) => self.simulated_written.unwrap_or(0),
            None => self.compulsory_written,
        };
        if total == 0 {
            0.0
        } else {
            (written as f64 / total as f64).min(1.0)
        }
    }

    /// Of [`Traffic::dram`]'s bytes, the share that a CPU's stores read
    /// before they write: lines a store, not a load, brought into the cache
    /// (a line loaded first is written in place). The written share where
    /// no simulation said.
    pub fn dram_allocated_share(&self) -> f64 {
        match (self.simulated, self.simulated_allocated) {
            (Some(total), Some(allocated)) if total > 0 => {
                (allocated as f64 / total as f64).min(1.0)
            }
            _ => self.dram_write_share(),
        }
    }

    /// Of [`Traffic::dram`]'s bytes, those written back to lines a load
    /// brought into the cache (an in-place update's, which a CPU's store
    /// writes without reading first); 0 where no simulation said.
    pub fn dram_written_in_place(&self) -> u64 {
        match (
            self.simulated,
            self.simulated_written,
            self.simulated_allocated,
        ) {
            (Some(_), Some(written), Some(allocated)) => written.saturating_sub(allocated),
            _ => 0,
        }
    }

    /// The bytes the models charge to memory: the simulated DRAM traffic
    /// where a simulation ran, else the compulsory traffic; and which.
    pub fn dram(&self) -> (u64, &'static str) {
        match self.simulated {
            Some(bytes) => (bytes, "DRAM traffic simulated at the device's cache size"),
            None => (
                self.compulsory,
                "compulsory traffic (each line once; no cache simulation)",
            ),
        }
    }
}

/// The lanes of the histogram's opcodes that `which` takes.
fn lanes_of(counts: &Counts, which: impl Fn(&str) -> bool) -> u64 {
    counts
        .histogram
        .iter()
        .filter(|e| which(&e.op))
        .map(|e| e.lanes)
        .sum()
}

/// Everything the models read about one kernel launch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelFacts {
    pub name: String,
    pub work_items: u64,
    pub work_groups: u64,
    /// W over the chosen op set.
    pub work: u64,
    /// W of the arithmetic operations of each class (a mad counts 2).
    pub work_by_class: PerClass,
    /// Of those, the address computations (`ptr` lanes), part of `int`.
    pub address_work: u64,
    pub instructions: InstructionMix,
    /// Lanes of global and constant loads: the elements the kernel reads.
    pub load_lanes: u64,
    pub traffic: Traffic,
    pub coalescing: Option<Coalescing>,
    pub host: HostTransfer,
    /// How the work-items fill vectors at each SIMD width, where the count
    /// measured it (`RunOptions::simd`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub simd: Vec<clflow_counts::SimdUse>,
    /// The chains the kernel's loops carry, measured with `simd`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chains: Option<clflow_counts::LoopChains>,
    /// Lanes of atomic functions (each a read-modify-write of memory).
    pub atomics: u64,
    /// Work-items' passes through work-group barriers.
    pub barriers: u64,
    /// Work-items' iterations of loops with a barrier that begin without
    /// one, where a CPU runtime adds one (measured with `simd`).
    #[serde(default)]
    pub loop_barriers: u64,
    /// How a core running the work-items one by one would predict the
    /// kernel's branches, measured with `simd`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branches: Option<clflow_counts::Branches>,
    /// The lanes of loads and stores a work-group vectoriser may gather,
    /// measured with `simd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gathers: Option<clflow_counts::Gathers>,
    /// Lines scattered loads miss in the level above the device's last
    /// cache and find in it, from a cache simulation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_gathers: Option<u64>,
    /// The bytes of the buffers they read: the table they scatter over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_gather_table: Option<u64>,
    /// Accesses a page or more past their work-item's own last at their
    /// instruction, in long walks (a loop striding by the global size),
    /// from the coalescing analysis; of those, the stores'; and the
    /// work-items that made them, each between two barriers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_strides: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_stride_stores: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_walkers: Option<u64>,
    /// The bytes of the buffers those walks step through, together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_walk_bytes: Option<u64>,
    /// Accesses a line or more but under a page past their work-item's
    /// last at their instruction, in long walks (a loop over a group's
    /// interval striding by the group's size), from the coalescing
    /// analysis; and the bytes of the lines the longest walk between two
    /// barriers moves on to, over all its instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_strides: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_walk_bytes: Option<u64>,
    /// The DRAM bytes of the instructions that make them, at the device's
    /// cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_walk_dram: Option<u64>,
    /// The lines first touched in short visits to their pages (a few lines
    /// of a page before the walk moves on to other pages), by the visits'
    /// lengths: 1, 2-3, 4-7, 8-15, 16-31 and 32-63 lines; from the cache
    /// simulation, over the instructions that make no long walk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_visits: Option<[u64; 6]>,
    /// The bytes of those visits' lines, the simulation's line size
    /// (absent: 64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_visit_line_bytes: Option<u64>,
    /// Lanes of float calls of each math builtin [`crate::device::BUILTINS`]
    /// names, in that order (part of `instructions`' fp32).
    #[serde(default)]
    pub builtin_lanes: [u64; 5],
}

impl KernelFacts {
    /// The facts of one interpreted launch: W, Q and D from its summary,
    /// the instruction mix from its counts. The cache simulation and
    /// coalescing analysis start empty: fill [`Traffic::simulated`] and
    /// [`KernelFacts::coalescing`] when they ran.
    pub fn new(name: &str, summary: &Summary, counts: &Counts) -> KernelFacts {
        let mut work_by_class = PerClass::default();
        for class in OpClass::ALL {
            work_by_class.add(class, counts.w_class(class));
        }
        let address_work = counts
            .work
            .iter()
            .filter(|(key, _)| key.arith && key.ty == clflow_counts::LaneType::Pointer)
            .map(|(_, n)| n)
            .sum();
        let load_lanes = counts.load_lanes(&[Space::Global, Space::Constant]);
        KernelFacts {
            name: name.to_string(),
            work_items: counts.work_items,
            work_groups: counts.work_groups,
            work: summary.work,
            work_by_class,
            address_work,
            instructions: InstructionMix::of(counts),
            load_lanes,
            traffic: Traffic {
                accessed: summary.accessed,
                compulsory: summary.compulsory,
                simulated: None,
                compulsory_written: counts.lines_written * counts.line_bytes,
                simulated_written: None,
                simulated_allocated: None,
                cache_bytes: None,
            },
            coalescing: None,
            host: summary.host,
            simd: counts.simd.clone(),
            chains: counts.chains,
            atomics: lanes_of(counts, |op| op.starts_with("OpAtomic")),
            barriers: lanes_of(counts, |op| op == "OpControlBarrier"),
            loop_barriers: counts.loop_barriers.unwrap_or(0),
            branches: counts.branches,
            gathers: counts.gathers,
            cache_gathers: None,
            cache_gather_table: None,
            page_strides: None,
            page_stride_stores: None,
            page_walkers: None,
            page_walk_bytes: None,
            line_strides: None,
            line_walk_bytes: None,
            line_walk_dram: None,
            short_visits: None,
            short_visit_line_bytes: None,
            builtin_lanes: crate::device::BUILTINS.map(|name| {
                counts
                    .histogram
                    .iter()
                    .filter(|e| e.op == name && e.ty == "float")
                    .map(|e| e.lanes)
                    .sum()
            }),
        }
    }

    /// The class whose operations do the kernel's useful work, by the
    /// quantitative roofline's rule (its §2.2, K_type): fp64 if it executes
    /// any double-precision arithmetic, else fp32 (or fp16) if any float
    /// arithmetic, else int.
    pub fn dominant_class(&self) -> OpClass {
        let a = &self.instructions.arithmetic;
        if a.fp64 > 0 {
            OpClass::Fp64
        } else if a.fp32 > 0 {
            OpClass::Fp32
        } else if a.fp16 > 0 {
            OpClass::Fp16
        } else {
            OpClass::Int
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use clflow_core::{Access, ArgValue, Launch};
    use clflow_core::{ElementType, LaunchArg, NdRange, ScalarType};
    use clflow_counts::LaneType;
    use clflow_counts::OpSet;
    use clflow_counts::{ByRole, HistogramEntry, Role, SpaceBytes, WorkKey};

    fn entry(op: &str, ty: &str, lanes: u64) -> HistogramEntry {
        HistogramEntry {
            op: op.into(),
            ty: ty.into(),
            lanes,
            by_role: ByRole { work: lanes, ..ByRole::default() },
        }
    }

    /// sgemm's counts as `clflow count kernels/sgemm/sgemm.toml` gives them
    /// (1024 work-items, 32×32 matrices).
    pub fn sgemm_counts() -> Counts {
        let float = LaneType::Scalar(ScalarType::Float);
        let uint = LaneType::Scalar(ScalarType::UInt);
        let key = |op, ty, arith| WorkKey { op, ty, arith, role: Role::Work };
        Counts {
            kernel: "sgemm".into(),
            work_items: 1024,
            work_groups: 4,
            local_size: [16, 16, 1],
            histogram: vec![
                entry("OpIAdd", "uint", 99328),
                entry("OpInBoundsPtrAccessChain", "ptr", 66560),
                entry("OpUConvert", "ulong", 66560),
                entry("OpLoad global", "float", 65536),
                entry("OpBranchConditional", "bool", 33792),
                entry("OpIMul", "uint", 33792),
                entry("OpPhi", "float", 33792),
                entry("OpPhi", "uint", 33792),
                entry("OpULessThan", "uint", 32768),
                entry("mad", "float", 32768),
                entry("OpReturn", "void", 2048),
                entry("OpBranch", "void", 1024),
                entry("OpFunctionCall", "void", 1024),
                entry("OpIEqual", "uint", 1024),
                entry("OpStore global", "float", 1024),
            ],
            work: vec![
                (key("OpIAdd", uint, true), 99328),
                (
                    key("OpInBoundsPtrAccessChain", LaneType::Pointer, true),
                    66560,
                ),
                (key("OpUConvert", uint, false), 66560),
                (key("OpIMul", uint, true), 33792),
                (key("OpPhi", float, false), 67584),
                (key("OpULessThan", uint, true), 32768),
                (key("OpFMul", float, true), 32768),
                (key("OpFAdd", float, true), 32768),
                (key("OpIEqual", uint, true), 1024),
            ],
            traffic: {
                let mut t = SpaceBytes::default();
                t.add(clflow_counts::Space::Global, false, 65536 * 4);
                t.add(clflow_counts::Space::Global, true, 1024 * 4);
                t
            },
            line_bytes: 64,
            lines_read: 2 * 1024 * 4 / 64,
            lines_written: 1024 * 4 / 64,
            steps: 0,
            lines: Vec::new(),
            simd: Vec::new(),
            chains: None,
            loop_barriers: None,
            branches: None,
            gathers: None,
        }
    }

    pub fn sgemm_launch() -> Launch {
        let float = ElementType { scalar: ScalarType::Float, lanes: 1 };
        let buffer = |access, n: usize| LaunchArg {
            name: None,
            value: ArgValue::Buffer { ty: float, access, bytes: vec![0; n * 4] },
        };
        Launch {
            kernel: "sgemm".into(),
            range: NdRange {
                dims: 2,
                global: [32, 32, 1],
                local: Some([16, 16, 1]),
                offset: [0; 3],
            },
            args: vec![
                buffer(Access::ReadOnly, 1024),
                buffer(Access::ReadOnly, 1024),
                buffer(Access::WriteOnly, 1024),
                buffer(Access::ReadWrite, 10),
            ],
        }
    }

    pub fn sgemm_facts() -> KernelFacts {
        let counts = sgemm_counts();
        let summary = Summary::of(&counts, &OpSet::default(), &sgemm_launch());
        KernelFacts::new("sgemm", &summary, &counts)
    }

    #[test]
    fn the_histogram_sorts_into_arithmetic_ldst_and_other() {
        let mix = sgemm_facts().instructions;
        // mad is one fp32 instruction per lane.
        assert_eq!(mix.arithmetic.fp32, 32768);
        // add, access chain, mul, less-than, equal.
        assert_eq!(mix.arithmetic.int, 99328 + 66560 + 33792 + 32768 + 1024);
        assert_eq!(mix.ldst, 65536 + 1024);
        assert_eq!(mix.private_ldst, 0, "all global");
        // A private array's loads and stores are ldst, and counted apart.
        let mut counts = sgemm_counts();
        counts.histogram.push(entry("OpLoad private", "float", 500));
        counts
            .histogram
            .push(entry("OpStore private", "float", 300));
        let private = InstructionMix::of(&counts);
        assert_eq!(private.ldst, 65536 + 1024 + 800);
        assert_eq!(private.private_ldst, 800);
        // convert, two phis, branches, returns, call.
        assert_eq!(mix.other, 66560 + 2 * 33792 + 33792 + 2048 + 1024 + 1024);
        assert_eq!(mix.total(), 504_832);
    }

    #[test]
    fn facts_carry_work_traffic_and_host_bytes() {
        let facts = sgemm_facts();
        assert_eq!(facts.work_by_class.fp32, 65536);
        assert_eq!(facts.work_by_class.int, 233_472);
        assert_eq!(facts.address_work, 66560);
        assert_eq!(facts.work, 233_472 + 65536);
        assert_eq!(facts.load_lanes, 65536);
        assert_eq!(facts.traffic.accessed, 66560 * 4);
        assert_eq!(facts.traffic.compulsory, 3 * 4096);
        assert_eq!(facts.traffic.dram().0, 3 * 4096);
        // Two inputs and the read-write buffer in; the output and it out.
        assert_eq!(facts.host.to_device, 2 * 4096 + 40);
        assert_eq!(facts.host.from_device, 4096 + 40);
        assert_eq!(facts.dominant_class(), OpClass::Fp32);
    }

    #[test]
    fn a_simulated_traffic_replaces_the_compulsory_one() {
        let mut traffic = Traffic {
            accessed: 100,
            compulsory: 10,
            simulated: Some(40),
            compulsory_written: 5,
            simulated_written: Some(10),
            simulated_allocated: Some(4),
            cache_bytes: Some(1 << 20),
        };
        assert_eq!(traffic.dram().0, 40);
        // The written share follows the traffic the models charge.
        assert_eq!(traffic.dram_write_share(), 0.25);
        // Of the 10 bytes written back, 4 are lines a store brought in.
        assert_eq!(traffic.dram_allocated_share(), 0.1);
        traffic.simulated = None;
        assert_eq!(traffic.dram_write_share(), 0.5);
        assert_eq!(traffic.dram_allocated_share(), 0.5);
        let share = Coalescing { coalesced_bytes: 30, uncoalesced_bytes: 10, penalised: true };
        assert_eq!(share.coalesced_share(), 0.75);
    }
}
