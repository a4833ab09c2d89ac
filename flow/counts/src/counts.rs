//! What one run counted ([`Counts`]) and the `--json` document of a count
//! ([`CountReport`]).

use crate::lines::{work_of, LineCounts, LineReport};
use crate::{ByRole, OpSet, Role};
use clflow_core::ScalarType;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// The type a count is attributed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LaneType {
    Scalar(ScalarType),
    Bool,
    Pointer,
    /// No value: control flow, barriers, calls of void functions.
    Void,
}

impl fmt::Display for LaneType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaneType::Scalar(s) => f.write_str(s.name()),
            LaneType::Bool => f.write_str("bool"),
            LaneType::Pointer => f.write_str("ptr"),
            LaneType::Void => f.write_str("void"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OpClass {
    Int,
    Fp32,
    Fp64,
    Fp16,
}

impl OpClass {
    pub const ALL: [OpClass; 4] = [OpClass::Int, OpClass::Fp32, OpClass::Fp64, OpClass::Fp16];

    pub fn name(self) -> &'static str {
        match self {
            OpClass::Int => "int",
            OpClass::Fp32 => "fp32",
            OpClass::Fp64 => "fp64",
            OpClass::Fp16 => "fp16",
        }
    }

    pub fn of(ty: LaneType) -> OpClass {
        match ty {
            LaneType::Scalar(ScalarType::Float) => OpClass::Fp32,
            LaneType::Scalar(ScalarType::Double) => OpClass::Fp64,
            LaneType::Scalar(ScalarType::Half) => OpClass::Fp16,
            _ => OpClass::Int,
        }
    }
}

/// A base operation W is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkKey {
    pub op: &'static str,
    pub ty: LaneType,
    /// Part of the arithmetic classes (else only selectable by name).
    pub arith: bool,
    /// What its result is for.
    pub role: Role,
}

/// Memory spaces traffic is reported for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    Global = 0,
    Constant = 1,
    Local = 2,
    Private = 3,
}

impl Space {
    /// The histogram's name for a load or store in this space: accesses
    /// are counted by the memory they touch, not by their opcode.
    pub fn access_name(self, store: bool) -> &'static str {
        match (self, store) {
            (Space::Global, false) => "OpLoad global",
            (Space::Constant, false) => "OpLoad constant",
            (Space::Local, false) => "OpLoad local",
            (Space::Private, false) => "OpLoad private",
            (Space::Global, true) => "OpStore global",
            (Space::Constant, true) => "OpStore constant",
            (Space::Local, true) => "OpStore local",
            (Space::Private, true) => "OpStore private",
        }
    }
}

/// Whether a histogram entry moves memory: a load, a store (in any space,
/// vload/vstore and memcpy included) or an atomic.
pub fn is_memory_op(op: &str) -> bool {
    op.starts_with("OpLoad") || op.starts_with("OpStore") || op.starts_with("OpAtomic")
}

/// Bytes moved, per space and direction (0 load, 1 store).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpaceBytes {
    pub bytes: [[u64; 2]; 4],
}

impl SpaceBytes {
    pub fn add(&mut self, space: Space, store: bool, bytes: u64) {
        self.bytes[space as usize][store as usize] += bytes;
    }

    pub fn scaled_add(&mut self, other: &SpaceBytes, times: u64) {
        for (mine, theirs) in self.bytes.iter_mut().zip(other.bytes.iter()) {
            mine[0] += theirs[0] * times;
            mine[1] += theirs[1] * times;
        }
    }

    /// Every field times `factor`, rounded: a sample's traffic extrapolated.
    pub fn scaled(&self, factor: f64) -> SpaceBytes {
        let scale = |n: u64| (n as f64 * factor).round() as u64;
        SpaceBytes {
            bytes: self.bytes.map(|[load, store]| [scale(load), scale(store)]),
        }
    }

    /// Q accessed: the global and constant bytes loaded and stored.
    pub fn q(&self) -> u64 {
        [Space::Global, Space::Constant]
            .iter()
            .map(|s| self.load(*s) + self.store(*s))
            .sum()
    }

    pub fn load(&self, space: Space) -> u64 {
        self.bytes[space as usize][0]
    }

    pub fn store(&self, space: Space) -> u64 {
        self.bytes[space as usize][1]
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HistogramEntry {
    pub op: String,
    pub ty: String,
    pub lanes: u64,
    /// `lanes` split by what the results are for.
    pub by_role: ByRole,
}

/// Everything one run counted.
#[derive(Debug, Clone, PartialEq)]
pub struct Counts {
    pub kernel: String,
    pub work_items: u64,
    pub work_groups: u64,
    pub local_size: [u64; 3],
    /// Sorted by lanes, largest first.
    pub histogram: Vec<HistogramEntry>,
    pub work: Vec<(WorkKey, u64)>,
    pub traffic: SpaceBytes,
    pub line_bytes: u64,
    pub lines_read: u64,
    pub lines_written: u64,
    /// Interpreter instructions executed (a measure of interpretation cost).
    pub steps: u64,
    /// `work` and `traffic` per source line, in the order of the lines
    /// (what no line names last); empty where the module has no `OpLine`.
    pub lines: Vec<LineCounts>,
    /// How work-items would fill vectors of each of [`crate::SIMD_WIDTHS`],
    /// where the run measured it (`RunOptions::simd`).
    pub simd: Vec<crate::SimdUse>,
    /// The chains the kernel's loops carry, measured with `simd`.
    pub chains: Option<crate::LoopChains>,
    /// Work-items' iterations of loops with a barrier in them that do not
    /// begin at one, measured with `simd`: a CPU's runtime adds a barrier
    /// there (`clflow_interp`'s `barrier_loop_headers`).
    pub loop_barriers: Option<u64>,
    /// How its branches would be predicted, measured with `simd`.
    pub branches: Option<crate::Branches>,
    /// The lanes of loads and stores a vectoriser gathers, measured with
    /// `simd`.
    pub gathers: Option<crate::Gathers>,
}

impl Counts {
    /// W for an op set.
    pub fn w(&self, set: &OpSet) -> u64 {
        work_of(&self.work, |k| set.contains(k))
    }

    /// W of an op set, split by role.
    pub fn w_by_role(&self, set: &OpSet) -> ByRole {
        let mut by = ByRole::default();
        for (k, n) in self.work.iter().filter(|(k, _)| set.contains(k)) {
            by.add(k.role, *n);
        }
        by
    }

    /// W of the arithmetic ops of each class.
    pub fn w_class(&self, class: OpClass) -> u64 {
        work_of(&self.work, |k| k.arith && OpClass::of(k.ty) == class)
    }

    pub fn q_load(&self) -> u64 {
        self.traffic.load(Space::Global) + self.traffic.load(Space::Constant)
    }

    pub fn q_store(&self) -> u64 {
        self.traffic.store(Space::Global) + self.traffic.store(Space::Constant)
    }

    pub fn q_accessed(&self) -> u64 {
        self.traffic.q()
    }

    pub fn q_compulsory(&self) -> u64 {
        (self.lines_read + self.lines_written) * self.line_bytes
    }

    /// Lanes loaded from `spaces` (elements read, all types).
    pub fn load_lanes(&self, spaces: &[Space]) -> u64 {
        spaces
            .iter()
            .map(|space| self.lanes_of(space.access_name(false)))
            .sum()
    }

    /// Lanes executed of one opcode (all types), for tests and summaries.
    pub fn lanes_of(&self, op: &str) -> u64 {
        self.histogram
            .iter()
            .filter(|e| e.op == op)
            .map(|e| e.lanes)
            .sum()
    }

    pub fn report(&self, set: &OpSet) -> CountReport {
        let mut ops: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        let mut ops_by_role: BTreeMap<String, BTreeMap<String, ByRole>> = BTreeMap::new();
        for e in &self.histogram {
            *ops.entry(e.op.clone())
                .or_default()
                .entry(e.ty.clone())
                .or_default() += e.lanes;
            let by = ops_by_role
                .entry(e.op.clone())
                .or_default()
                .entry(e.ty.clone())
                .or_default();
            for role in Role::ALL {
                by.add(role, e.by_role.get(role));
            }
        }
        let total = self.w(set);
        let ratio = |q: u64| (q > 0).then(|| total as f64 / q as f64);
        CountReport {
            kernel: self.kernel.clone(),
            work_items: self.work_items,
            work_groups: self.work_groups,
            local_size: self.local_size,
            ops,
            w: WorkReport {
                set: set.to_string(),
                int: self.w_class(OpClass::Int),
                fp32: self.w_class(OpClass::Fp32),
                fp64: self.w_class(OpClass::Fp64),
                fp16: self.w_class(OpClass::Fp16),
                total,
            },
            w_by_role: self.w_by_role(set),
            arith_by_role: self.w_by_role(&OpSet::default()),
            ops_by_role,
            q: TrafficReport {
                load_bytes: self.q_load(),
                store_bytes: self.q_store(),
                accessed: self.q_accessed(),
                compulsory: self.q_compulsory(),
                compulsory_read: self.lines_read * self.line_bytes,
                compulsory_written: self.lines_written * self.line_bytes,
                line_bytes: self.line_bytes,
                global_load_bytes: self.traffic.load(Space::Global),
                global_store_bytes: self.traffic.store(Space::Global),
                constant_load_bytes: self.traffic.load(Space::Constant),
            },
            i: IntensityReport::new(ratio(self.q_accessed()), ratio(self.q_compulsory())),
            local: SpaceReport {
                load_bytes: self.traffic.load(Space::Local),
                store_bytes: self.traffic.store(Space::Local),
            },
            private: SpaceReport {
                load_bytes: self.traffic.load(Space::Private),
                store_bytes: self.traffic.store(Space::Private),
            },
            steps: self.steps,
            lines: self
                .lines
                .iter()
                .map(|l| l.report(set, self.q_accessed()))
                .collect(),
            simd: self.simd.clone(),
            chains: self.chains,
            loop_barriers: self.loop_barriers,
            branches: self.branches,
            gathers: self.gathers,
        }
    }
}

/// The `--json` document of `clflow count`.
#[derive(Debug, Clone, Serialize)]
pub struct CountReport {
    pub kernel: String,
    pub work_items: u64,
    pub work_groups: u64,
    pub local_size: [u64; 3],
    /// opcode → type → lanes executed.
    pub ops: BTreeMap<String, BTreeMap<String, u64>>,
    #[serde(rename = "W")]
    pub w: WorkReport,
    /// W of the selected set split by what the operations are for.
    #[serde(rename = "W_by_role")]
    pub w_by_role: ByRole,
    /// Every arithmetic operation split by role, whatever the op set: how
    /// much of the arithmetic is the algorithm's work.
    pub arith_by_role: ByRole,
    /// `ops` split by role: opcode → type → lanes per role.
    pub ops_by_role: BTreeMap<String, BTreeMap<String, ByRole>>,
    #[serde(rename = "Q")]
    pub q: TrafficReport,
    #[serde(rename = "I")]
    pub i: IntensityReport,
    pub local: SpaceReport,
    pub private: SpaceReport,
    pub steps: u64,
    /// W and bytes per source line (see [`LineReport`]); absent where the
    /// module names no lines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<LineReport>,
    /// How the work-items fill vectors at each SIMD width, where measured.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub simd: Vec<crate::SimdUse>,
    /// The chains the kernel's loops carry, where measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chains: Option<crate::LoopChains>,
    /// Iterations of loops with a barrier that begin without one, where
    /// measured (see `Counts::loop_barriers`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loop_barriers: Option<u64>,
    /// How its branches would be predicted, where measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branches: Option<crate::Branches>,
    /// The lanes of loads and stores a vectoriser gathers, where measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gathers: Option<crate::Gathers>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WorkReport {
    pub set: String,
    pub int: u64,
    pub fp32: u64,
    pub fp64: u64,
    pub fp16: u64,
    pub total: u64,
}

/// Q: the kernel's global and constant traffic. `load_bytes` and
/// `store_bytes` (and so Q accessed) are their sum, as Q is defined; the
/// `global_*` and `constant_*` fields tell them apart (other tools count
/// global bytes alone; a device caches constant reads).
#[derive(Debug, Clone, Serialize)]
pub struct TrafficReport {
    pub load_bytes: u64,
    pub store_bytes: u64,
    pub accessed: u64,
    pub compulsory: u64,
    pub compulsory_read: u64,
    pub compulsory_written: u64,
    pub line_bytes: u64,
    pub global_load_bytes: u64,
    pub global_store_bytes: u64,
    pub constant_load_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct IntensityReport {
    /// W / Q accessed: every byte the kernel loads and stores.
    pub accessed: Option<f64>,
    /// W / Q compulsory: the whole lines those bytes lie in, each once.
    pub compulsory: Option<f64>,
    /// The lower and the higher of the two. Compulsory traffic is the lower
    /// Q where lines are reused, the higher where access is scattered.
    pub min: Option<f64>,
    pub max: Option<f64>,
}

impl IntensityReport {
    pub fn new(accessed: Option<f64>, compulsory: Option<f64>) -> Self {
        let (min, max) = match (accessed, compulsory) {
            (Some(a), Some(c)) => (Some(a.min(c)), Some(a.max(c))),
            (a, c) => (a.or(c), c.or(a)),
        };
        IntensityReport { accessed, compulsory, min, max }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct SpaceReport {
    pub load_bytes: u64,
    pub store_bytes: u64,
}
