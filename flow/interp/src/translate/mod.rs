//! SPIR-V → bytecode, once per kernel. Every type decision is made here:
//! register slots, strides, offsets, widths, branch targets and what each
//! basic block counts. Anything not understood is an error naming the
//! instruction and where it is, never a guess.
//!
//! This module owns the `Translator`, its setup and the emission helpers,
//! and dispatches each instruction to the handler of its family:
//! `globals` (module-scope types, constants, variables), `function` (the
//! program, reachability, register allocation, the final check),
//! `control` (blocks, branches, phis, calls and inlining), `arith`
//! (arithmetic, comparisons, conversions), `composite` (vectors and
//! aggregates), `access` (pointers, loads, stores, atomics, copies) and
//! `ext` (OpenCL.std). How each instruction counts is decided by the
//! tables of `rules`, not by the handlers.

mod access;
mod adjacent;
mod arith;
mod composite;
mod control;
mod ext;
mod function;
mod fuse;
mod globals;
mod group;
mod image;
mod lines;
mod refills;
mod relocate;
mod roles;
mod rules;
pub(crate) use rules::base_operations;
#[cfg(test)]
mod tests;

use crate::counts::{LaneType, Role, Space, SpaceBytes, WorkKey};
use crate::error::TranslateError;
use crate::memory::ArenaLayout;
use crate::types::{RegisterTypes, SlotKind};
use clflow_bytecode::layout::Leaf;
pub use clflow_bytecode::program::Loc;
use clflow_bytecode::program::{BlockCounts, Program, ProgramBuffer};
use clflow_bytecode::*;
use clflow_core::{AddressSpace, ScalarType};
use clflow_spirv::types::{Layout, Types};
use lines::Lines;
use rspirv::dr::{Function, Instruction, Module, Operand};
use rspirv::spirv::{self, Decoration, FPRoundingMode, Op as S, StorageClass, Word};
use rules::{spirv_name, Rule, Work};
use std::collections::{HashMap, HashSet};

type R<T> = Result<T, TranslateError>;

#[derive(Debug, Clone, Copy)]
struct Val {
    slot: Reg,
    ty: Word,
}

/// Private memory one work-item may have: far beyond any device's.
pub const MAX_PRIVATE_BYTES: u64 = 16 << 20;
/// Program-scope and `__local` storage clflow allocates at most.
pub const MAX_PROGRAM_BUFFER_BYTES: u64 = 1 << 30;
pub const MAX_LOCAL_BYTES: u64 = 1 << 30;

/// A phi of a block: its slots, width, (value, predecessor) pairs and type.
type Phi = (Reg, u32, Vec<(Word, Word)>, Word);

/// A branch target before its pc is known.
#[derive(Debug, Clone, Copy)]
enum Target {
    Label(Word),
    Stub(usize),
}

/// Translates `kernel`; with `check_indices`, every index into an array
/// inside a private or local variable is checked against the array's
/// length.
pub fn translate_checked(module: &Module, kernel: &str, check_indices: bool) -> R<Program> {
    let entry = module
        .entry_points
        .iter()
        .find(|e| matches!(e.operands.get(2), Some(Operand::LiteralString(n)) if n == kernel))
        .ok_or_else(|| {
            let names: Vec<String> = module
                .entry_points
                .iter()
                .filter_map(|e| match e.operands.get(2) {
                    Some(Operand::LiteralString(n)) => Some(n.clone()),
                    _ => None,
                })
                .collect();
            TranslateError {
                malformed: true,
                what: format!(
                    "the module has no kernel `{kernel}` (it has: {})",
                    names.join(", ")
                ),
                hint: Some("check `kernel =` in the manifest".into()),
                site: None,
            }
        })?;
    let entry_fn = match entry.operands.get(1) {
        Some(Operand::IdRef(id)) => *id,
        _ => return Err(TranslateError::malformed("OpEntryPoint without a function")),
    };
    let mut t = Translator::new(module, kernel)?;
    t.out.check_indices = check_indices;
    t.globals()?;
    t.program(entry_fn)
}

/// The translation of one kernel in progress. The module's facts come
/// first; what is built is grouped by what it is for.
struct Translator<'m> {
    module: &'m Module,
    kernel: String,
    types: Types,
    names: HashMap<Word, String>,
    decorations: HashMap<Word, Vec<(Decoration, Vec<Operand>)>>,
    opencl_std: HashSet<Word>,
    functions: HashMap<Word, &'m Function>,
    /// What every value of the reachable functions is for (see `roles`).
    roles: HashMap<Word, Role>,
    /// The vector loads that are a partial write's refill (see `refills`).
    refill_loads: HashSet<Word>,
    regs: Registers,
    calls: Calls,
    sites: Sites,
    out: Emitted,
    tally: Tally,
    storage: Storage,
    /// State of the function being emitted.
    func: PerFunction,
}

/// Where each SPIR-V value lives, and the register file's initial state.
#[derive(Default)]
struct Registers {
    values: HashMap<Word, Val>,
    /// Values of scalar integer constants, for folding indices.
    const_ints: HashMap<Word, u64>,
    builtins: HashMap<Word, Builtin>,
    init: Vec<(Reg, u64)>,
    /// Register slots allocated so far.
    next_reg: u32,
    zero_slot: Option<Reg>,
    /// Slots that hold constants, and their values.
    const_slots: HashMap<Reg, u64>,
    /// Inside an inlined call: the callee's parameters bound to the
    /// caller's arguments, and results folded to constants.
    overrides: HashMap<Word, Val>,
}

/// Functions placed in the code and the calls to them.
#[derive(Default)]
struct Calls {
    func_pc: HashMap<Word, Pc>,
    call_fixups: Vec<(usize, Word)>,
    /// See `Program::kept_calls` and `Program::other_calls`.
    kept_calls: Vec<(Pc, Pc)>,
    other_calls: Vec<(Pc, Pc)>,
    inline_depth: u32,
}

/// Which SPIR-V instruction, and which source line, each op came from.
#[derive(Default)]
struct Sites {
    site_of: Vec<u32>,
    sites: Vec<String>,
    current_site: u32,
    /// The source lines, and the one in force.
    lines: Lines,
    /// For each site, where it stands in the source.
    site_locs: Vec<Loc>,
}

/// The bytecode and the tables its ops index.
#[derive(Default)]
struct Emitted {
    code: Vec<Op>,
    moves: Vec<Move>,
    terms: Vec<PtrTerm>,
    printf_args: Vec<PrintfArg>,
    cases: Vec<(u64, Pc)>,
    layouts: Vec<Vec<Leaf>>,
    /// Whether indices into arrays inside private and local variables are
    /// checked (`Op::CheckIndex`), and what each check names.
    check_indices: bool,
    arrays: Vec<String>,
    uses_barrier: bool,
    /// See `Program::refills`.
    refills: Vec<u32>,
}

/// What each block counts when it runs.
struct Tally {
    blocks: Vec<BlockCounts>,
    hist_keys: Vec<(&'static str, LaneType, Role)>,
    hist_index: HashMap<(&'static str, LaneType, Role), u32>,
    work_keys: Vec<(WorkKey, u32)>,
    work_index: HashMap<(WorkKey, u32), u32>,
    /// The role of the instruction being emitted: every count it makes
    /// carries it.
    role: Role,
    /// Counting is off while the body of a funnel-shift emulation is
    /// emitted: it is counted as the rotate it implements.
    silent: bool,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            blocks: Vec::new(),
            hist_keys: Vec::new(),
            hist_index: HashMap::new(),
            work_keys: Vec::new(),
            work_index: HashMap::new(),
            role: Role::Work,
            silent: false,
        }
    }
}

/// Private, local and program-scope memory, and the pointers into it.
#[derive(Default)]
struct Storage {
    private: ArenaLayout,
    local_vars: Vec<(u64, u64, String)>,
    global_vars: Vec<ProgramBuffer>,
    /// Kernel parameter count: program-scope buffers follow the arguments.
    nargs: usize,
    /// Program-scope variables: (id, space, index among its kind).
    pending_globals: Vec<(Word, u64, usize)>,
    /// Constant slots that point into program-scope buffers: (buffer,
    /// offset), valued by `relocate`.
    global_pointer_slots: HashMap<Reg, (usize, i64)>,
    relocations: Vec<relocate::Relocation>,
}

/// The function being emitted: its branch targets, phis and blocks.
#[derive(Default)]
struct PerFunction {
    targets: Vec<Target>,
    phis: HashMap<Word, Vec<Phi>>,
    stubs: Vec<(Word, Word)>,
    current_label: Word,
    block: usize,
    /// The access chains and accesses, for the groups of adjacent ones.
    adjacent: adjacent::Adjacent,
}

/// The largest power of two dividing `align` (at most 2^15), so that the
/// machine tests alignment with a mask.
fn power_of_two_align(align: u64) -> u16 {
    let lowest = align & align.wrapping_neg();
    lowest.clamp(1, 1 << 15) as u16
}

fn lane_type(s: SlotKind, signed: bool) -> R<LaneType> {
    Ok(match s {
        SlotKind::Bool => LaneType::Bool,
        SlotKind::Ptr => LaneType::Pointer,
        SlotKind::Int(bits) => {
            LaneType::Scalar(ScalarType::integer(bits as u32, signed).ok_or_else(|| {
                TranslateError::unsupported(
                    format!("{bits}-bit integers"),
                    "use 8, 16, 32 or 64-bit integers",
                )
            })?)
        }
        SlotKind::Float(bits) => LaneType::Scalar(
            ScalarType::float(bits as u32)
                .ok_or_else(|| TranslateError::malformed(format!("{bits}-bit floats")))?,
        ),
    })
}

fn traffic_space(space: AddressSpace) -> R<Space> {
    Ok(match space {
        AddressSpace::Global => Space::Global,
        AddressSpace::Constant => Space::Constant,
        AddressSpace::Local => Space::Local,
        AddressSpace::Private => Space::Private,
        AddressSpace::Generic => {
            return Err(TranslateError::unsupported(
                "memory access through a generic (OpenCL 2.0) pointer",
                "compile with -cl-std=CL1.2 or give the pointer an address space",
            ))
        }
    })
}

fn rounding_of(mode: FPRoundingMode) -> Rounding {
    match mode {
        FPRoundingMode::RTZ => Rounding::TowardZero,
        FPRoundingMode::RTP => Rounding::TowardPositive,
        FPRoundingMode::RTN => Rounding::TowardNegative,
        _ => Rounding::NearestEven,
    }
}

fn id(inst: &Instruction, index: usize) -> R<Word> {
    match inst.operands.get(index) {
        Some(Operand::IdRef(w))
        | Some(Operand::IdScope(w))
        | Some(Operand::IdMemorySemantics(w)) => Ok(*w),
        other => Err(TranslateError::malformed(format!(
            "{} operand {index} should be an id, found {other:?}",
            spirv_name(inst.class.opname)
        ))),
    }
}

fn literal(inst: &Instruction, index: usize) -> R<u64> {
    match inst.operands.get(index) {
        Some(Operand::LiteralBit32(v)) => Ok(*v as u64),
        Some(Operand::LiteralBit64(v)) => Ok(*v),
        Some(Operand::LiteralExtInstInteger(v)) => Ok(*v as u64),
        // OpenCL.std literals arrive as ids (see TOOLCHAIN-NOTES).
        Some(Operand::IdRef(v)) => Ok(*v as u64),
        other => Err(TranslateError::malformed(format!(
            "{} operand {index} should be a literal, found {other:?}",
            spirv_name(inst.class.opname)
        ))),
    }
}

fn result(inst: &Instruction) -> R<(Word, Word)> {
    match (inst.result_id, inst.result_type) {
        (Some(r), Some(t)) => Ok((r, t)),
        _ => Err(TranslateError::malformed(format!(
            "{} without a result",
            spirv_name(inst.class.opname)
        ))),
    }
}

/// The alignment in an OpLoad/OpStore memory-access operand, if any.
fn aligned(inst: &Instruction, from: usize) -> Option<u64> {
    match (inst.operands.get(from), inst.operands.get(from + 1)) {
        (Some(Operand::MemoryAccess(m)), Some(Operand::LiteralBit32(a)))
            if m.contains(spirv::MemoryAccess::ALIGNED) =>
        {
            Some(*a as u64)
        }
        _ => None,
    }
}

impl<'m> Translator<'m> {
    fn new(module: &'m Module, kernel: &str) -> R<Self> {
        if let Some(mm) = &module.memory_model {
            if let Some(Operand::AddressingModel(am)) = mm.operands.first() {
                if *am != spirv::AddressingModel::Physical64 {
                    return Err(TranslateError::unsupported(
                        format!("addressing model {am:?}"),
                        "compile for a 64-bit device (-target spir64)",
                    ));
                }
            }
        }
        let mut names = HashMap::new();
        for inst in &module.debug_names {
            if let (S::Name, Some(Operand::IdRef(target)), Some(Operand::LiteralString(n))) = (
                inst.class.opcode,
                inst.operands.first(),
                inst.operands.get(1),
            ) {
                names.insert(*target, n.clone());
            }
        }
        let mut decorations: HashMap<Word, Vec<(Decoration, Vec<Operand>)>> = HashMap::new();
        for inst in &module.annotations {
            if let (S::Decorate, Some(Operand::IdRef(target)), Some(Operand::Decoration(d))) = (
                inst.class.opcode,
                inst.operands.first(),
                inst.operands.get(1),
            ) {
                decorations
                    .entry(*target)
                    .or_default()
                    .push((*d, inst.operands[2..].to_vec()));
            }
        }
        let mut opencl_std = HashSet::new();
        for inst in &module.ext_inst_imports {
            if let (Some(r), Some(Operand::LiteralString(n))) =
                (inst.result_id, inst.operands.first())
            {
                if n == "OpenCL.std" {
                    opencl_std.insert(r);
                }
            }
        }
        let mut functions = HashMap::new();
        for f in &module.functions {
            if let Some(id) = f.def.as_ref().and_then(|d| d.result_id) {
                functions.insert(id, f);
            }
        }
        Ok(Translator {
            module,
            kernel: kernel.to_string(),
            types: Types::new(module),
            names,
            decorations,
            opencl_std,
            functions,
            roles: HashMap::new(),
            refill_loads: HashSet::new(),
            regs: Registers::default(),
            calls: Calls::default(),
            sites: Sites { lines: Lines::new(module), ..Sites::default() },
            out: Emitted::default(),
            tally: Tally::default(),
            storage: Storage::default(),
            func: PerFunction::default(),
        })
    }

    /// The layout of `ty`, refused beyond `limit` bytes (memory no device has).
    fn bounded(&self, ty: Word, what: &str, limit: u64) -> R<(u64, u64)> {
        let Layout { size, align } = self.types.layout(ty)?;
        if size > limit {
            return Err(TranslateError::unsupported(
                format!("{what} of {size} bytes (clflow's limit is {limit})"),
                "use a smaller type or pass the data in a buffer",
            ));
        }
        Ok((size, align))
    }

    fn check_private(&self) -> R<()> {
        let total = self.storage.private.total();
        if total > MAX_PRIVATE_BYTES {
            return Err(TranslateError::unsupported(
                format!("{total} bytes of private memory per work-item (clflow's limit is {MAX_PRIVATE_BYTES})"),
                "move large arrays to __global or __local memory",
            ));
        }
        Ok(())
    }

    fn decorated(&self, id: Word, d: Decoration) -> Option<&[Operand]> {
        self.decorations
            .get(&id)?
            .iter()
            .find(|(x, _)| *x == d)
            .map(|(_, ops)| ops.as_slice())
    }

    fn name(&self, id: Word) -> String {
        self.names
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("%{id}"))
    }

    fn alloc(&mut self, n: u32) -> R<Reg> {
        let r = self.regs.next_reg;
        self.regs.next_reg = self
            .regs
            .next_reg
            .checked_add(n)
            .filter(|r| *r < (1 << 26))
            .ok_or_else(|| {
                TranslateError::unsupported("a kernel this large", "split the kernel")
            })?;
        Ok(Reg::new(r))
    }

    fn val(&self, id: Word) -> R<Val> {
        self.regs
            .overrides
            .get(&id)
            .or_else(|| self.regs.values.get(&id))
            .copied()
            .ok_or_else(|| TranslateError::malformed(format!("%{id} is used but never defined")))
    }

    fn zero(&mut self) -> R<Reg> {
        if let Some(z) = self.regs.zero_slot {
            return Ok(z);
        }
        let z = self.alloc(1)?;
        self.regs.zero_slot = Some(z);
        Ok(z)
    }

    // ---- emission helpers ------------------------------------------------------

    fn emit(&mut self, op: Op) {
        self.out.code.push(op);
        self.sites.site_of.push(self.sites.current_site);
    }

    /// Starts a site (what errors and faults name) at the current line.
    fn site(&mut self, name: String) {
        self.sites.sites.push(name);
        self.sites.site_locs.push(self.sites.lines.current);
        self.sites.current_site = (self.sites.sites.len() - 1) as u32;
    }

    /// Adds bytes this block moves each time it runs, to its line too.
    fn block_traffic(&mut self, space: Space, store: bool, bytes: u64) {
        let line = self.sites.lines.current.line;
        let block = &mut self.tally.blocks[self.func.block];
        block.traffic.add(space, store, bytes);
        match block.line_traffic.iter_mut().find(|(l, _)| *l == line) {
            Some((_, t)) => t.add(space, store, bytes),
            None => {
                let mut t = SpaceBytes::default();
                t.add(space, store, bytes);
                block.line_traffic.push((line, t));
            }
        }
    }

    fn hist(&mut self, name: &'static str, ty: LaneType, lanes: u64) {
        if self.tally.silent {
            return;
        }
        let key = (name, ty, self.tally.role);
        let next = self.tally.hist_keys.len() as u32;
        let k = *self.tally.hist_index.entry(key).or_insert(next);
        if k == next {
            self.tally.hist_keys.push(key);
        }
        let block = &mut self.tally.blocks[self.func.block];
        match block.hist.iter_mut().find(|(e, _)| *e == k) {
            Some((_, n)) => *n += lanes,
            None => block.hist.push((k, lanes)),
        }
    }

    fn work(&mut self, op: &'static str, ty: LaneType, amount: u64, arith: bool) {
        if amount == 0 || self.tally.silent {
            return;
        }
        let key = (
            WorkKey { op, ty, arith, role: self.tally.role },
            self.sites.lines.current.line,
        );
        let next = self.tally.work_keys.len() as u32;
        let k = *self.tally.work_index.entry(key).or_insert(next);
        if k == next {
            self.tally.work_keys.push(key);
        }
        let block = &mut self.tally.blocks[self.func.block];
        match block.work.iter_mut().find(|(e, _)| *e == k) {
            Some((_, n)) => *n += amount,
            None => block.work.push((k, amount)),
        }
    }

    /// Counts one execution of `lanes` lanes of type `ty` by `rule`.
    fn counted(&mut self, rule: Rule, ty: LaneType, lanes: u64) {
        self.hist(rule.name, ty, lanes);
        match rule.work {
            Work::HistogramOnly => {}
            Work::Own { arith } => self.work(rule.name, ty, lanes, arith),
            Work::Base(parts) => {
                for &(name, amount) in parts {
                    self.work(name, ty, amount.of(lanes), true);
                }
            }
        }
    }

    /// Counts `inst` by its rule (see `rules::instruction`).
    fn count(&mut self, inst: &Instruction, ty: LaneType, lanes: u64) {
        if let Some(rule) = rules::instruction(inst.class) {
            self.counted(rule, ty, lanes);
        }
    }

    fn traffic(&mut self, space: Space, store: bool, bytes: u64, ty: LaneType, lanes: u64) {
        self.block_traffic(space, store, bytes);
        self.hist(space.access_name(store), ty, lanes);
    }

    /// An access through a generic pointer: its space is its value's, so
    /// its bytes are counted as it runs, in that space; the histogram names
    /// it generic.
    fn generic_traffic(&mut self, ptr: Reg, store: bool, bytes: u64, ty: LaneType, lanes: u64) {
        let name = if store {
            "OpStore generic"
        } else {
            "OpLoad generic"
        };
        self.hist(name, ty, lanes);
        self.emit(Op::CountAccess { ptr, bytes: bytes as u32, store });
    }

    fn target(&mut self, label: Word) -> Pc {
        let t = if self.func.phis.contains_key(&label) {
            self.func.stubs.push((self.func.current_label, label));
            Target::Stub(self.func.stubs.len() - 1)
        } else {
            Target::Label(label)
        };
        self.func.targets.push(t);
        (self.func.targets.len() - 1) as Pc
    }

    /// An operand with `n` lanes: a scalar operand of a vector op is splat.
    fn operand(&mut self, vid: Word, n: u8) -> R<Reg> {
        let v = self.val(vid)?;
        let (_, k) = self.types.lanes(v.ty)?;
        if k == n {
            return Ok(v.slot);
        }
        if k != 1 {
            return Err(TranslateError::malformed(format!(
                "operand %{vid} has {k} lanes where {n} are expected"
            )));
        }
        let tmp = self.alloc(n as u32)?;
        self.emit(Op::Splat { dst: tmp, src: v.slot, n });
        Ok(tmp)
    }

    /// The histogram type of an instruction counted once per execution
    /// rather than per lane (control flow, calls, barriers, builtins run for
    /// their effect). The rule for every histogram entry: an instruction is
    /// typed by the element of the value it produces, and is `void` when it
    /// produces none (`OpBranch`, `OpReturn`, `OpControlBarrier`, a call of a
    /// void function) or only an opaque handle (an async copy's event). An
    /// instruction without a result that is about one value is typed by that
    /// value instead: a store by what it stores (`OpStore global float`),
    /// `OpSwitch` by its selector, `OpBranchConditional` by its `bool`
    /// condition.
    fn result_lane_type(&self, inst: &Instruction) -> LaneType {
        match inst.result_type.map(|ty| self.types.lanes(ty)) {
            Some(Ok((s, _))) => lane_type(s, false).unwrap_or(LaneType::Void),
            _ => LaneType::Void,
        }
    }

    fn lane_type_of(&self, ty: Word, signed: bool) -> LaneType {
        match self.types.lanes(ty) {
            Ok((s, _)) => lane_type(s, signed).unwrap_or(LaneType::Pointer),
            Err(_) => LaneType::Pointer,
        }
    }

    fn int_bits(&self, s: SlotKind) -> R<u8> {
        match s {
            SlotKind::Int(b) => Ok(b),
            SlotKind::Ptr => Ok(64),
            SlotKind::Bool => Ok(1),
            SlotKind::Float(_) => Err(TranslateError::malformed("an integer operation on floats")),
        }
    }

    fn float_bits(&self, s: SlotKind) -> R<u8> {
        match s {
            SlotKind::Float(b) => Ok(b),
            _ => Err(TranslateError::malformed(
                "a float operation on a non-float type",
            )),
        }
    }

    /// Translates one instruction by handing it to the handler of its family.
    fn instruction(&mut self, inst: &Instruction) -> R<()> {
        self.tally.role = roles::of_instruction(inst, &self.roles);
        let opcode = inst.class.opcode;
        if let Some((op, signed)) = arith::int_op(opcode) {
            return self.int_binary(inst, op, signed);
        }
        if let Some((op, signed)) = arith::cmp_op(opcode) {
            return self.int_compare(inst, op, signed);
        }
        if let Some((op, ordered)) = arith::fcmp_op(opcode) {
            return self.float_compare(inst, op, ordered);
        }
        if let Some(op) = access::atomic_op(opcode) {
            return self.atomic(inst, op);
        }
        match opcode {
            S::Nop
            | S::Line
            | S::NoLine
            | S::SelectionMerge
            | S::LoopMerge
            | S::LifetimeStart
            | S::LifetimeStop
            | S::MemoryBarrier
            | S::Phi
            | S::Label => Ok(()),
            S::Variable => self.variable(inst),
            S::Undef => self.undef(inst),
            S::SNegate | S::Not | S::BitCount | S::BitReverse => self.int_unary(inst),
            S::FAdd | S::FSub | S::FMul | S::FDiv | S::FRem | S::FMod => self.float_arith(inst),
            S::FNegate => self.float_negate(inst),
            S::VectorTimesScalar => self.vector_times_scalar(inst),
            S::Dot => self.dot(inst),
            S::IsNan | S::IsInf | S::IsFinite | S::IsNormal | S::SignBitSet => {
                self.float_test(inst)
            }
            S::LogicalAnd | S::LogicalOr | S::LogicalEqual | S::LogicalNotEqual => {
                self.logical(inst)
            }
            S::LogicalNot => self.logical_not(inst),
            S::Any | S::All => self.any_all(inst),
            S::Select => self.select(inst),
            S::UConvert | S::SConvert | S::SatConvertSToU | S::SatConvertUToS => {
                self.int_convert(inst)
            }
            S::ConvertFToU | S::ConvertFToS => self.float_to_int(inst),
            S::ConvertSToF | S::ConvertUToF => self.int_to_float(inst),
            S::FConvert => self.float_convert(inst),
            S::ConvertPtrToU | S::ConvertUToPtr => self.pointer_convert(inst),
            S::Bitcast | S::PtrCastToGeneric | S::GenericCastToPtr | S::CopyObject => {
                self.bitcast(inst)
            }
            S::GenericCastToPtrExplicit => self.cast_to_space(inst),
            S::CompositeExtract => self.composite_extract(inst),
            S::CompositeInsert => self.composite_insert(inst),
            S::CompositeConstruct => self.composite_construct(inst),
            S::VectorShuffle => self.vector_shuffle(inst),
            S::VectorExtractDynamic | S::VectorInsertDynamic => self.vector_dynamic(inst),
            S::AccessChain
            | S::InBoundsAccessChain
            | S::PtrAccessChain
            | S::InBoundsPtrAccessChain => self.access_chain(inst),
            S::PtrDiff => self.ptr_diff(inst),
            S::Load => self.load(inst),
            S::Store => self.store(inst),
            S::CopyMemory | S::CopyMemorySized => self.copy_memory(inst),
            S::Branch => self.branch(inst),
            S::BranchConditional => self.branch_conditional(inst),
            S::Switch => self.switch(inst),
            S::Return => self.ret(inst),
            S::ReturnValue => self.return_value(inst),
            S::Unreachable | S::Kill => {
                self.emit(Op::Trap);
                Ok(())
            }
            S::FunctionCall => self.call(inst),
            S::ControlBarrier => self.barrier(inst),
            S::GroupIAdd
            | S::GroupFAdd
            | S::GroupFMin
            | S::GroupFMax
            | S::GroupUMin
            | S::GroupUMax
            | S::GroupSMin
            | S::GroupSMax
            | S::GroupBroadcast
            | S::GroupAll
            | S::GroupAny => self.group_function(inst),
            S::GroupAsyncCopy => self.async_copy(inst),
            S::GroupWaitEvents => self.wait_events(inst),
            S::ExtInst => self.ext_inst(inst),
            S::SampledImage => self.sampled_image(inst),
            S::ImageRead | S::ImageSampleExplicitLod => self.image_read(inst),
            S::ImageWrite => self.image_write(inst),
            S::ImageQuerySize | S::ImageQuerySizeLod | S::ImageQueryFormat | S::ImageQueryOrder => {
                self.image_query(inst)
            }
            _ => Err(TranslateError::unsupported(
                format!("instruction {}", spirv_name(inst.class.opname)),
                "this instruction is outside what clflow interprets; please report the kernel",
            )),
        }
    }
}
