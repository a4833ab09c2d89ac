//! Which operations W counts: the `--ops` argument.

use crate::{OpClass, Role, WorkKey};
use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

/// Which operations W counts (`--ops`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpSet {
    spelled: String,
    classes: BTreeSet<OpClass>,
    ops: BTreeSet<String>,
    /// `work`: the algorithm's operations, whatever their class.
    work: bool,
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
    /// The operations the set names one by one (`OpIAdd`, `sqrt` ...).
    pub fn named(&self) -> impl Iterator<Item = &str> {
        self.ops.iter().map(String::as_str)
    }

    pub fn contains(&self, key: &WorkKey) -> bool {
        let class = OpClass::of(key.ty);
        (key.arith && (self.classes.contains(&class) || self.work && is_work(class, key.role)))
            || (self.work && key.role == Role::Work && is_atomic_update(key.op))
            || self.ops.contains(key.op)
    }
}

/// An atomic that computes as it updates memory (an add, a min, a bitwise
/// operation): a histogram's increments are its algorithm's work. Atomic
/// loads, stores and exchanges only move data; no atomic is arithmetic
/// (`arith`), so `work` takes these by name, where their results are work.
fn is_atomic_update(op: &str) -> bool {
    matches!(
        op,
        "OpAtomicIIncrement"
            | "OpAtomicIDecrement"
            | "OpAtomicIAdd"
            | "OpAtomicISub"
            | "OpAtomicSMin"
            | "OpAtomicUMin"
            | "OpAtomicSMax"
            | "OpAtomicUMax"
            | "OpAtomicAnd"
            | "OpAtomicOr"
            | "OpAtomicXor"
    )
}

/// What `work` takes of the arithmetic: every float operation (a float
/// test that ends a loop is the algorithm's own, a convergence check), and
/// integer operations whose role is work, not indexing or loop control.
fn is_work(class: OpClass, role: Role) -> bool {
    class != OpClass::Int || role == Role::Work
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
#[error("unknown operation `{0}` in --ops (expected arith, work, int, fp32, fp64, fp16, an LLVM name such as add,xor,shl,icmp,getelementptr, a SPIR-V opcode such as OpIAdd, or an OpenCL builtin such as sqrt)")]
pub struct ParseOpSetError(pub String);

impl FromStr for OpSet {
    type Err = ParseOpSetError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut set = OpSet {
            spelled: text.trim().to_string(),
            classes: BTreeSet::new(),
            ops: BTreeSet::new(),
            work: false,
        };
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let lower = item.to_ascii_lowercase();
            match lower.as_str() {
                "arith" | "all" => set.classes.extend(OpClass::ALL),
                "work" => set.work = true,
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
        if set.classes.is_empty() && set.ops.is_empty() && !set.work {
            return Err(ParseOpSetError(text.to_string()));
        }
        Ok(set)
    }
}

/// A SPIR-V opcode (`OpIAdd`, `IAdd`, any case) or OpenCL.std builtin name.
fn opcode_name(item: &str) -> Option<String> {
    let bare = item.strip_prefix("Op").unwrap_or(item);
    let core = (0..=u16::MAX as u32)
        .filter_map(spirv::Op::from_u32)
        .map(|op| format!("{op:?}"))
        .find(|name| name.eq_ignore_ascii_case(bare))
        .map(|name| format!("Op{name}"));
    core.or_else(|| {
        (0..=u16::MAX as u32)
            .filter_map(spirv::OpenclStd100Op::from_u32)
            .map(|op| format!("{op:?}"))
            .find(|name| name.eq_ignore_ascii_case(item))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LaneType;
    use clflow_core::ScalarType;

    fn key(op: &'static str, ty: LaneType, arith: bool) -> WorkKey {
        WorkKey { op, ty, arith, role: crate::Role::Work }
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
    fn work_takes_floats_and_integer_work_only() {
        let set: OpSet = "work".parse().unwrap();
        let float = LaneType::Scalar(ScalarType::Float);
        let uint = LaneType::Scalar(ScalarType::UInt);
        let with = |op, ty, arith, role| WorkKey { op, ty, arith, role };
        assert!(set.contains(&with("OpIAdd", uint, true, Role::Work)));
        assert!(!set.contains(&with("OpIAdd", uint, true, Role::Address)));
        assert!(!set.contains(&with("OpULessThan", uint, true, Role::Control)));
        assert!(set.contains(&with("OpFOrdLessThan", float, true, Role::Control)));
        assert!(set.contains(&with("OpFMul", float, true, Role::Address)));
        assert!(!set.contains(&with("OpSelect", float, false, Role::Work)));
        assert_eq!(set.to_string(), "work");
        assert_ne!(set, OpSet::default());
    }
}
