//! What a count measures, and how W, Q and I come out of it.
//!
//! # Counting rules
//!
//! * **Histogram.** Every executed instruction is counted per SPIR-V opcode
//!   (OpenCL.std builtins by their own name: `mad`, `sqrt`, `rotate`) and per
//!   element type, in *lanes*: a `float4` add counts 4. Integers are named
//!   unsigned (`uint`) unless the operation is signed (`OpSDiv` on `int`).
//!   Comparisons are typed by their operands, boolean logic is `bool`,
//!   address computations (`OpInBoundsPtrAccessChain` ...) are `ptr`.
//!   Control flow (`OpBranch`, `OpSwitch`, `OpReturn`, `OpFunctionCall`) and
//!   `OpPhi` are counted once per execution. An instruction without a
//!   result is `void` (`OpBranch`, `OpReturn`, `OpControlBarrier`, a call of
//!   a void function), unless it is about one value: stores are typed by
//!   the value stored, `OpSwitch` by its selector, `OpBranchConditional`
//!   by its `bool` condition. Counting is per basic block: a
//!   block's static counts times the number of times it ran.
//! * **Operations (W)** count each instruction in its *base form*, lanes
//!   times operations per lane:
//!   `fma`, `mad` = mul + add (2); `mad24`, `mad_hi`, `mad_sat` = mul + add
//!   (2); `rotate` = shl + lshr + or (3); `mix` = sub + mul + add (3);
//!   `clamp`, `fclamp` = max + min (2); `OpDot` of n lanes = n mul + (n-1)
//!   add; `length` = n mul + (n-1) add + sqrt; `distance` = n sub + n mul +
//!   (n-1) add + sqrt; `normalize` = n mul + (n-1) add + rsqrt + n mul;
//!   `cross` = 6 mul + 3 sub; llvm-spirv's emulation of LLVM's funnel
//!   shifts (`spirv.llvm_fshl_*`, what clang makes of the rotate idiom
//!   `(x << k) | (x >> (32 - k))`), listed as `llvm.fshl`, = shl + lshr + or
//!   (3), not the five operations of the emulation.
//!   Every other arithmetic instruction or builtin
//!   is one operation per lane under its own name. A multi-operation
//!   builtin is selected through its base operations (`--ops mul` counts the
//!   multiply of every `mad`), never by its own name.
//! * **Op classes.** `int`: integer and boolean arithmetic, bitwise ops,
//!   shifts, comparisons and address computations (Oclgrind's
//!   `getelementptr`, which the paper counts); `fp32`, `fp64`, `fp16`: float
//!   arithmetic, comparisons and math builtins by width; `arith`: all four.
//!   Loads, stores, conversions, `OpSelect`, `OpPhi`, atomics, control flow
//!   and register moves are not arithmetic; conversions, select, phi and
//!   atomics can still be selected by name.
//! * **Op lists.** `--ops add,xor,...` selects base operations by SPIR-V
//!   name (`OpIAdd`, `IAdd`), OpenCL.std name (`sqrt`) or LLVM/Oclgrind alias:
//!   add sub mul udiv sdiv urem srem div rem shl lshr ashr and or xor icmp
//!   fadd fsub fmul fdiv frem fneg fcmp getelementptr zext sext trunc fpext
//!   fptrunc fptoui fptosi uitofp sitofp select phi. `zext` and `trunc` both
//!   name `OpUConvert` (SPIR-V does not tell them apart).
//! * **Q.** Bytes loaded and stored in `__global` and `__constant` memory
//!   (atomics count as one load and one store of their width; `vload`,
//!   `vstore`, memcpy and async work-group copies by the bytes they move).
//!   `compulsory` is the number of distinct `line_bytes` lines read plus the
//!   number written, times `line_bytes`: the traffic of a cold cache large
//!   enough to hold the working set. `__local` and `__private` traffic is
//!   reported apart and is not part of Q.
//! * **I.** `min` = W / Q accessed, `max` = W / Q compulsory (§4.2's walls).

use clflow_core::ScalarType;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

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
}

/// Memory spaces traffic is reported for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    Global = 0,
    Constant = 1,
    Local = 2,
    Private = 3,
}

/// Bytes moved, per space and direction (0 load, 1 store).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traffic {
    pub bytes: [[u64; 2]; 4],
}

impl Traffic {
    pub fn add(&mut self, space: Space, store: bool, bytes: u64) {
        self.bytes[space as usize][store as usize] += bytes;
    }

    pub fn scaled_add(&mut self, other: &Traffic, times: u64) {
        for (mine, theirs) in self.bytes.iter_mut().zip(other.bytes.iter()) {
            mine[0] += theirs[0] * times;
            mine[1] += theirs[1] * times;
        }
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
    pub traffic: Traffic,
    pub line_bytes: u64,
    pub lines_read: u64,
    pub lines_written: u64,
    /// Interpreter instructions executed (a measure of interpretation cost).
    pub steps: u64,
}

impl Counts {
    /// W for an op set.
    pub fn w(&self, set: &OpSet) -> u64 {
        self.work
            .iter()
            .filter(|(k, _)| set.contains(k))
            .map(|(_, n)| n)
            .sum()
    }

    /// W of the arithmetic ops of each class.
    pub fn w_class(&self, class: OpClass) -> u64 {
        self.work
            .iter()
            .filter(|(k, _)| k.arith && OpClass::of(k.ty) == class)
            .map(|(_, n)| n)
            .sum()
    }

    pub fn q_load(&self) -> u64 {
        self.traffic.load(Space::Global) + self.traffic.load(Space::Constant)
    }

    pub fn q_store(&self) -> u64 {
        self.traffic.store(Space::Global) + self.traffic.store(Space::Constant)
    }

    pub fn q_accessed(&self) -> u64 {
        self.q_load() + self.q_store()
    }

    pub fn q_compulsory(&self) -> u64 {
        (self.lines_read + self.lines_written) * self.line_bytes
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
        for e in &self.histogram {
            *ops.entry(e.op.clone())
                .or_default()
                .entry(e.ty.clone())
                .or_default() += e.lanes;
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
            q: TrafficReport {
                load_bytes: self.q_load(),
                store_bytes: self.q_store(),
                accessed: self.q_accessed(),
                compulsory: self.q_compulsory(),
                compulsory_read: self.lines_read * self.line_bytes,
                compulsory_written: self.lines_written * self.line_bytes,
                line_bytes: self.line_bytes,
                constant_load_bytes: self.traffic.load(Space::Constant),
            },
            i: IntensityReport {
                min: ratio(self.q_accessed()),
                max: ratio(self.q_compulsory()),
            },
            local: SpaceReport {
                load_bytes: self.traffic.load(Space::Local),
                store_bytes: self.traffic.store(Space::Local),
            },
            private: SpaceReport {
                load_bytes: self.traffic.load(Space::Private),
                store_bytes: self.traffic.store(Space::Private),
            },
            steps: self.steps,
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
    #[serde(rename = "Q")]
    pub q: TrafficReport,
    #[serde(rename = "I")]
    pub i: IntensityReport,
    pub local: SpaceReport,
    pub private: SpaceReport,
    pub steps: u64,
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

#[derive(Debug, Clone, Serialize)]
pub struct TrafficReport {
    pub load_bytes: u64,
    pub store_bytes: u64,
    pub accessed: u64,
    pub compulsory: u64,
    pub compulsory_read: u64,
    pub compulsory_written: u64,
    pub line_bytes: u64,
    pub constant_load_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct IntensityReport {
    pub min: Option<f64>,
    pub max: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SpaceReport {
    pub load_bytes: u64,
    pub store_bytes: u64,
}

/// Which operations W counts (`--ops`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpSet {
    spelled: String,
    classes: BTreeSet<OpClass>,
    ops: BTreeSet<String>,
}

impl Default for OpSet {
    fn default() -> Self {
        "arith".parse().expect("`arith` is a valid op set")
    }
}

impl fmt::Display for OpSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.spelled)
    }
}

impl OpSet {
    pub fn contains(&self, key: &WorkKey) -> bool {
        (key.arith && self.classes.contains(&OpClass::of(key.ty))) || self.ops.contains(key.op)
    }
}

/// LLVM instruction names (as Oclgrind prints them) and what they mean here.
const ALIASES: &[(&str, &[&str])] = &[
    ("add", &["OpIAdd"]),
    ("sub", &["OpISub"]),
    ("mul", &["OpIMul"]),
    ("udiv", &["OpUDiv"]),
    ("sdiv", &["OpSDiv"]),
    ("div", &["OpUDiv", "OpSDiv", "OpFDiv"]),
    ("urem", &["OpUMod"]),
    ("srem", &["OpSRem", "OpSMod"]),
    ("rem", &["OpUMod", "OpSRem", "OpSMod", "OpFRem", "OpFMod"]),
    ("shl", &["OpShiftLeftLogical"]),
    ("lshr", &["OpShiftRightLogical"]),
    ("ashr", &["OpShiftRightArithmetic"]),
    ("and", &["OpBitwiseAnd", "OpLogicalAnd"]),
    ("or", &["OpBitwiseOr", "OpLogicalOr"]),
    ("xor", &["OpBitwiseXor", "OpLogicalNotEqual"]),
    ("not", &["OpNot", "OpLogicalNot"]),
    (
        "icmp",
        &[
            "OpIEqual",
            "OpINotEqual",
            "OpULessThan",
            "OpULessThanEqual",
            "OpUGreaterThan",
            "OpUGreaterThanEqual",
            "OpSLessThan",
            "OpSLessThanEqual",
            "OpSGreaterThan",
            "OpSGreaterThanEqual",
            "OpLogicalEqual",
        ],
    ),
    ("fadd", &["OpFAdd"]),
    ("fsub", &["OpFSub"]),
    ("fmul", &["OpFMul"]),
    ("fdiv", &["OpFDiv"]),
    ("frem", &["OpFRem", "OpFMod"]),
    ("fneg", &["OpFNegate"]),
    (
        "fcmp",
        &[
            "OpFOrdEqual",
            "OpFUnordEqual",
            "OpFOrdNotEqual",
            "OpFUnordNotEqual",
            "OpFOrdLessThan",
            "OpFUnordLessThan",
            "OpFOrdGreaterThan",
            "OpFUnordGreaterThan",
            "OpFOrdLessThanEqual",
            "OpFUnordLessThanEqual",
            "OpFOrdGreaterThanEqual",
            "OpFUnordGreaterThanEqual",
            "OpOrdered",
            "OpUnordered",
        ],
    ),
    (
        "getelementptr",
        &[
            "OpAccessChain",
            "OpInBoundsAccessChain",
            "OpPtrAccessChain",
            "OpInBoundsPtrAccessChain",
        ],
    ),
    ("zext", &["OpUConvert"]),
    ("trunc", &["OpUConvert", "OpSConvert"]),
    ("sext", &["OpSConvert"]),
    ("fpext", &["OpFConvert"]),
    ("fptrunc", &["OpFConvert"]),
    ("fptoui", &["OpConvertFToU"]),
    ("fptosi", &["OpConvertFToS"]),
    ("uitofp", &["OpConvertUToF"]),
    ("sitofp", &["OpConvertSToF"]),
    ("select", &["OpSelect"]),
    ("phi", &["OpPhi"]),
];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown operation `{0}` in --ops (expected arith, int, fp32, fp64, fp16, an LLVM name such as add,xor,shl,icmp,getelementptr, a SPIR-V opcode such as OpIAdd, or an OpenCL builtin such as mad)")]
pub struct ParseOpSetError(pub String);

impl FromStr for OpSet {
    type Err = ParseOpSetError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut set = OpSet {
            spelled: text.trim().to_string(),
            classes: BTreeSet::new(),
            ops: BTreeSet::new(),
        };
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let lower = item.to_ascii_lowercase();
            match lower.as_str() {
                "arith" | "all" => set.classes.extend(OpClass::ALL),
                "int" => {
                    set.classes.insert(OpClass::Int);
                }
                "fp32" => {
                    set.classes.insert(OpClass::Fp32);
                }
                "fp64" => {
                    set.classes.insert(OpClass::Fp64);
                }
                "fp16" => {
                    set.classes.insert(OpClass::Fp16);
                }
                _ => {
                    if let Some((_, names)) = ALIASES.iter().find(|(alias, _)| *alias == lower) {
                        set.ops.extend(names.iter().map(|n| n.to_string()));
                    } else if let Some(name) = opcode_name(item) {
                        set.ops.insert(name);
                    } else {
                        return Err(ParseOpSetError(item.to_string()));
                    }
                }
            }
        }
        if set.classes.is_empty() && set.ops.is_empty() {
            return Err(ParseOpSetError(text.to_string()));
        }
        Ok(set)
    }
}

/// A SPIR-V opcode (`OpIAdd`, `IAdd`, any case) or OpenCL.std builtin name.
fn opcode_name(item: &str) -> Option<String> {
    let bare = item.strip_prefix("Op").unwrap_or(item);
    let core = rspirv::grammar::INSTRUCTION_TABLE
        .iter()
        .find(|i| i.opname.eq_ignore_ascii_case(bare))
        .map(|i| format!("Op{}", i.opname));
    core.or_else(|| {
        rspirv::grammar::ext_inst_table("OpenCL.std")?
            .iter()
            .find(|i| i.opname.eq_ignore_ascii_case(item))
            .map(|i| i.opname.to_string())
    })
}

/// The Oclgrind-like text report.
pub fn render_text(counts: &Counts, set: &OpSet) -> String {
    use std::fmt::Write;
    let r = counts.report(set);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Lanes executed for kernel '{}' ({} work-items in {} work-groups):",
        r.kernel, r.work_items, r.work_groups
    );
    let width = counts
        .histogram
        .first()
        .map(|e| group_digits(e.lanes).len())
        .unwrap_or(1);
    for e in &counts.histogram {
        let _ = writeln!(
            out,
            "  {:>width$} - {} {}",
            group_digits(e.lanes),
            e.op,
            e.ty
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "W ({}): {} ops   [int {}, fp32 {}, fp64 {}, fp16 {}]",
        r.w.set,
        group_digits(r.w.total),
        group_digits(r.w.int),
        group_digits(r.w.fp32),
        group_digits(r.w.fp64),
        group_digits(r.w.fp16)
    );
    let _ = writeln!(
        out,
        "Q accessed: {} bytes (load {}, store {}); compulsory: {} bytes at {}-byte lines",
        group_digits(r.q.accessed),
        group_digits(r.q.load_bytes),
        group_digits(r.q.store_bytes),
        group_digits(r.q.compulsory),
        r.q.line_bytes
    );
    let show = |v: Option<f64>| {
        v.map(|x| format!("{x:.3} ops/byte"))
            .unwrap_or_else(|| "n/a (Q = 0)".into())
    };
    let _ = writeln!(
        out,
        "I: min {} (W/Q accessed), max {} (W/Q compulsory)",
        show(r.i.min),
        show(r.i.max)
    );
    let _ = writeln!(
        out,
        "Local memory: load {} bytes, store {} bytes; private: load {} bytes, store {} bytes",
        group_digits(r.local.load_bytes),
        group_digits(r.local.store_bytes),
        group_digits(r.private.load_bytes),
        group_digits(r.private.store_bytes)
    );
    out
}

/// `1234567` as `1,234,567`.
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(op: &'static str, ty: LaneType, arith: bool) -> WorkKey {
        WorkKey { op, ty, arith }
    }

    #[test]
    fn the_papers_selection_parses() {
        let set: OpSet = "add,xor,sub,shl,lshr,or,getelementptr,icmp,mul,and,div"
            .parse()
            .unwrap();
        let uint = LaneType::Scalar(ScalarType::UInt);
        assert!(set.contains(&key("OpIAdd", uint, true)));
        assert!(set.contains(&key("OpInBoundsPtrAccessChain", LaneType::Pointer, true)));
        assert!(set.contains(&key("OpUDiv", uint, true)));
        assert!(!set.contains(&key("OpPhi", uint, false)));
        assert!(!set.contains(&key("OpFAdd", LaneType::Scalar(ScalarType::Float), true)));
    }

    #[test]
    fn classes_select_by_type_and_arith_only() {
        let set: OpSet = "fp32".parse().unwrap();
        let float = LaneType::Scalar(ScalarType::Float);
        assert!(set.contains(&key("OpFAdd", float, true)));
        assert!(!set.contains(&key("OpSelect", float, false)));
        assert!(!set.contains(&key("OpIAdd", LaneType::Scalar(ScalarType::UInt), true)));
        let by_name: OpSet = "OpSelect,IAdd,sqrt".parse().unwrap();
        assert!(by_name.contains(&key("OpSelect", float, false)));
        assert!(by_name.contains(&key("OpIAdd", float, true)));
        assert!(by_name.contains(&key("sqrt", float, true)));
        assert!("frobnicate".parse::<OpSet>().is_err());
        assert!("".parse::<OpSet>().is_err());
    }

    #[test]
    fn digits_group_by_thousands() {
        assert_eq!(group_digits(1234567), "1,234,567");
        assert_eq!(group_digits(12), "12");
    }
}
