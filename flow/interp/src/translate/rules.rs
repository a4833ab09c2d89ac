//! The counting policy as tables: per SPIR-V instruction and OpenCL.std
//! builtin, the name it has in the histogram, what it is in W (nothing,
//! one operation of its own per lane, or base operations × an amount) and
//! whether that is arithmetic. The rules these tables implement, and how a
//! histogram entry is typed, are specified in [`crate::counts`]; code
//! generation asks these tables and keeps no counting policy of its own,
//! only the lanes and the type of what it emits.

use rspirv::spirv::{Op as S, OpenclStd100Op as X};
use std::collections::HashMap;
use std::sync::OnceLock;

/// How many of a base operation one execution is, from its lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Amount {
    /// `k` per lane.
    PerLane(u64),
    /// One fewer than the lanes: the additions of a sum of products.
    LanesLess1,
    /// `k`, whatever the lanes.
    Fixed(u64),
}

impl Amount {
    pub(super) fn of(self, lanes: u64) -> u64 {
        match self {
            Amount::PerLane(k) => k * lanes,
            Amount::LanesLess1 => lanes.saturating_sub(1),
            Amount::Fixed(k) => k,
        }
    }
}

/// What an instruction is in W.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Work {
    /// Nothing: control flow, calls, memory access and data movement that
    /// W leaves out appear in the histogram only.
    HistogramOnly,
    /// One operation per lane under its own name; `arith` says whether it
    /// belongs to the arithmetic class.
    Own { arith: bool },
    /// These base operations (arithmetic all): what a builtin that is
    /// several operations amounts to.
    Base(&'static [(&'static str, Amount)]),
}

/// How an instruction is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Rule {
    /// Its histogram entry.
    pub name: &'static str,
    pub work: Work,
}

use Amount::{Fixed, LanesLess1, PerLane};

/// A sum of products: `dot` and `OpDot`.
const DOT: &[(&str, Amount)] = &[("OpFMul", PerLane(1)), ("OpFAdd", LanesLess1)];
/// A rotate is a shift each way and their union.
const ROTATE: &[(&str, Amount)] = &[
    ("OpShiftLeftLogical", PerLane(1)),
    ("OpShiftRightLogical", PerLane(1)),
    ("OpBitwiseOr", PerLane(1)),
];

/// A phi, counted at the entry of its block: a move, not arithmetic.
pub(super) const PHI: Rule = Rule { name: "OpPhi", work: Work::Own { arith: false } };

/// The SPIR-V spelling of an opcode (`OpIAdd`; the grammar table omits `Op`).
pub(super) fn spirv_name(opname: &'static str) -> &'static str {
    static NAMES: OnceLock<HashMap<&'static str, String>> = OnceLock::new();
    NAMES
        .get_or_init(|| {
            rspirv::grammar::INSTRUCTION_TABLE
                .iter()
                .map(|i| (i.opname, format!("Op{}", i.opname)))
                .collect()
        })
        .get(opname)
        .map(String::as_str)
        .unwrap_or(opname)
}

/// The rule of a core instruction; `None` for those not counted by their
/// own name: memory accesses (see `Space::access_name`), and moves, casts and
/// composites, which cost nothing on a device.
pub(super) fn instruction(class: &rspirv::grammar::Instruction<'static>) -> Option<Rule> {
    use Work::*;
    let work = match class.opcode {
        S::IAdd
        | S::ISub
        | S::IMul
        | S::UDiv
        | S::SDiv
        | S::UMod
        | S::SRem
        | S::SMod
        | S::ShiftLeftLogical
        | S::ShiftRightLogical
        | S::ShiftRightArithmetic
        | S::BitwiseAnd
        | S::BitwiseOr
        | S::BitwiseXor
        | S::SNegate
        | S::Not
        | S::BitCount
        | S::BitReverse
        | S::IEqual
        | S::INotEqual
        | S::ULessThan
        | S::ULessThanEqual
        | S::UGreaterThan
        | S::UGreaterThanEqual
        | S::SLessThan
        | S::SLessThanEqual
        | S::SGreaterThan
        | S::SGreaterThanEqual
        | S::PtrEqual
        | S::PtrNotEqual
        | S::FAdd
        | S::FSub
        | S::FMul
        | S::FDiv
        | S::FRem
        | S::FMod
        | S::FNegate
        | S::FOrdEqual
        | S::FUnordEqual
        | S::FOrdNotEqual
        | S::FUnordNotEqual
        | S::FOrdLessThan
        | S::FUnordLessThan
        | S::FOrdGreaterThan
        | S::FUnordGreaterThan
        | S::FOrdLessThanEqual
        | S::FUnordLessThanEqual
        | S::FOrdGreaterThanEqual
        | S::FUnordGreaterThanEqual
        | S::Ordered
        | S::Unordered
        | S::IsNan
        | S::IsInf
        | S::IsFinite
        | S::IsNormal
        | S::SignBitSet
        | S::LogicalAnd
        | S::LogicalOr
        | S::LogicalEqual
        | S::LogicalNotEqual
        | S::LogicalNot
        | S::Any
        | S::All
        | S::PtrDiff
        | S::AccessChain
        | S::InBoundsAccessChain
        | S::PtrAccessChain
        | S::InBoundsPtrAccessChain => Own { arith: true },
        S::VectorTimesScalar => Base(&[("OpFMul", PerLane(1))]),
        S::Dot => Base(DOT),
        S::Select
        | S::UConvert
        | S::SConvert
        | S::SatConvertSToU
        | S::SatConvertUToS
        | S::ConvertFToU
        | S::ConvertFToS
        | S::ConvertSToF
        | S::ConvertUToF
        | S::FConvert
        | S::ConvertPtrToU
        | S::ConvertUToPtr
        | S::AtomicLoad
        | S::AtomicStore
        | S::AtomicExchange
        | S::AtomicCompareExchange
        | S::AtomicCompareExchangeWeak
        | S::AtomicIIncrement
        | S::AtomicIDecrement
        | S::AtomicIAdd
        | S::AtomicISub
        | S::AtomicSMin
        | S::AtomicUMin
        | S::AtomicSMax
        | S::AtomicUMax
        | S::AtomicAnd
        | S::AtomicOr
        | S::AtomicXor => Own { arith: false },
        // A work-group function combines one value per work-item: one
        // operation each, of the combining kind; votes and broadcasts move
        // values only.
        S::GroupIAdd
        | S::GroupFAdd
        | S::GroupFMin
        | S::GroupFMax
        | S::GroupUMin
        | S::GroupUMax
        | S::GroupSMin
        | S::GroupSMax => Own { arith: true },
        S::GroupBroadcast | S::GroupAll | S::GroupAny => HistogramOnly,
        S::Phi => return Some(PHI),
        S::Branch
        | S::BranchConditional
        | S::Switch
        | S::Return
        | S::ReturnValue
        | S::FunctionCall
        | S::ControlBarrier
        | S::GroupAsyncCopy => HistogramOnly,
        _ => return None,
    };
    let name = match class.opcode {
        // A return is a return, with a value or without.
        S::ReturnValue => "OpReturn",
        _ => spirv_name(class.opname),
    };
    Some(Rule { name, work })
}

/// The rule of the OpenCL.std builtin `op`, spelt `name`; `int` when it
/// works on integers.
pub(super) fn builtin(op: X, name: &'static str, int: bool) -> Rule {
    use Work::*;
    let work = match op {
        X::fma | X::mad => Base(&[("OpFMul", PerLane(1)), ("OpFAdd", PerLane(1))]),
        X::s_mad24 | X::u_mad24 | X::s_mad_hi | X::u_mad_hi | X::s_mad_sat | X::u_mad_sat => {
            Base(&[("OpIMul", PerLane(1)), ("OpIAdd", PerLane(1))])
        }
        X::s_mul24 | X::u_mul24 | X::s_mul_hi | X::u_mul_hi => Base(&[("OpIMul", PerLane(1))]),
        X::rotate => Base(ROTATE),
        X::mix => Base(&[
            ("OpFSub", PerLane(1)),
            ("OpFMul", PerLane(1)),
            ("OpFAdd", PerLane(1)),
        ]),
        X::sincos => Base(&[("sin", PerLane(1)), ("cos", PerLane(1))]),
        X::fclamp => Base(&[("fmax", PerLane(1)), ("fmin", PerLane(1))]),
        X::s_clamp if int => Base(&[("s_max", PerLane(1)), ("s_min", PerLane(1))]),
        X::u_clamp if int => Base(&[("u_max", PerLane(1)), ("u_min", PerLane(1))]),
        X::native_divide | X::half_divide => Base(&[("OpFDiv", PerLane(1))]),
        X::popcount => Base(&[("OpBitCount", PerLane(1))]),
        // The geometric builtins, counted over their operands' lanes.
        X::cross => Base(&[("OpFMul", Fixed(6)), ("OpFSub", Fixed(3))]),
        X::length | X::fast_length => Base(&[
            ("OpFMul", PerLane(1)),
            ("OpFAdd", LanesLess1),
            ("sqrt", Fixed(1)),
        ]),
        X::distance | X::fast_distance => Base(&[
            ("OpFSub", PerLane(1)),
            ("OpFMul", PerLane(1)),
            ("OpFAdd", LanesLess1),
            ("sqrt", Fixed(1)),
        ]),
        X::normalize | X::fast_normalize => Base(&[
            ("OpFMul", PerLane(2)),
            ("OpFAdd", LanesLess1),
            ("rsqrt", Fixed(1)),
        ]),
        // Data movement, like OpSelect and OpVectorShuffle.
        X::select | X::shuffle | X::shuffle2 => Own { arith: false },
        // Memory access (their traffic is counted) and no-ops.
        X::vloadn
        | X::vstoren
        | X::vload_half
        | X::vload_halfn
        | X::vloada_halfn
        | X::vstore_half
        | X::vstore_half_r
        | X::vstore_halfn
        | X::vstore_halfn_r
        | X::vstorea_halfn
        | X::vstorea_halfn_r
        | X::prefetch
        | X::printf => HistogramOnly,
        _ => Own { arith: true },
    };
    Rule { name, work }
}

/// The rule of a call to llvm-spirv's emulation of an LLVM funnel shift
/// (what clang makes of `(x << k) | (x >> (32 - k))`): the rotate the
/// source wrote, not the five operations of the emulation.
pub(super) fn funnel(callee: &str) -> Option<Rule> {
    let name = match callee {
        n if n.starts_with("spirv.llvm_fshl") => "llvm.fshl",
        n if n.starts_with("spirv.llvm_fshr") => "llvm.fshr",
        _ => return None,
    };
    Some(Rule { name, work: Work::Base(ROTATE) })
}

/// The base operations W counts the OpenCL builtin `name` as, where it is
/// counted as several or as another (`fma` is `OpFMul` and `OpFAdd`);
/// `None` where it is counted under its own name, or is no builtin.
pub(crate) fn base_operations(name: &str) -> Option<Vec<&'static str>> {
    let op = (0..=u16::MAX as u32)
        .filter_map(X::from_u32)
        .find(|op| format!("{op:?}").eq_ignore_ascii_case(name))?;
    let mut names: Vec<&'static str> = Vec::new();
    for int in [false, true] {
        if let Work::Base(parts) = builtin(op, "", int).work {
            names.extend(parts.iter().map(|(n, _)| *n));
        }
    }
    names.sort_unstable();
    names.dedup();
    (!names.is_empty()).then_some(names)
}
