//! SPIR-V → bytecode, once per kernel. Every type decision is made here:
//! register slots, strides, offsets, widths, branch targets and what each
//! basic block counts. Anything not understood is an error naming the
//! instruction and where it is, never a guess.

use crate::bytecode::*;
use crate::counts::{LaneType, Space, WorkKey};
use crate::error::TranslateError;
use crate::memory::{self, ArenaLayout};
use crate::program::{BlockCounts, ParamSlot, Program, ProgramBuffer};
use crate::types::{Leaf, Scalar, Ty, Types};
use clflow_core::{AddressSpace, ScalarType};
use rspirv::dr::{Function, Instruction, Module, Operand};
use rspirv::spirv::{
    self, Decoration, FPRoundingMode, Op as S, OpenclStd100Op as X, StorageClass, Word,
};
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

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

pub fn translate(module: &Module, kernel: &str) -> R<Program> {
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
    t.globals()?;
    t.program(entry_fn)
}

struct Translator<'m> {
    module: &'m Module,
    kernel: String,
    types: Types,
    names: HashMap<Word, String>,
    decorations: HashMap<Word, Vec<(Decoration, Vec<Operand>)>>,
    opencl_std: HashSet<Word>,
    values: HashMap<Word, Val>,
    /// Values of scalar integer constants, for folding indices.
    const_ints: HashMap<Word, u64>,
    builtins: HashMap<Word, Builtin>,
    init: Vec<(Reg, u64)>,
    next_reg: Reg,
    zero_slot: Option<Reg>,
    functions: HashMap<Word, &'m Function>,
    func_pc: HashMap<Word, Pc>,
    call_fixups: Vec<(usize, Word)>,
    code: Vec<Op>,
    site_of: Vec<u32>,
    sites: Vec<String>,
    current_site: u32,
    moves: Vec<Move>,
    terms: Vec<PtrTerm>,
    cases: Vec<(u64, Pc)>,
    layouts: Vec<Vec<Leaf>>,
    blocks: Vec<BlockCounts>,
    hist_keys: Vec<(&'static str, LaneType)>,
    hist_index: HashMap<(&'static str, LaneType), u32>,
    work_keys: Vec<WorkKey>,
    work_index: HashMap<WorkKey, u32>,
    private: ArenaLayout,
    local_vars: Vec<(u64, u64, String)>,
    global_vars: Vec<ProgramBuffer>,
    /// Kernel parameter count: program-scope buffers follow the arguments.
    nargs: usize,
    uses_barrier: bool,
    /// Program-scope variables: (id, space, index among its kind).
    pending_globals: Vec<(Word, u64, usize)>,
    inline_depth: u32,
    /// Counting is off while the body of a funnel-shift emulation is
    /// emitted: it is counted as the rotate it implements.
    silent: bool,
    /// Inside an inlined call: the callee's parameters bound to the
    /// caller's arguments, and results folded to constants.
    overrides: HashMap<Word, Val>,
    /// Slots that hold constants, and their values.
    const_slots: HashMap<Reg, u64>,
    // Per function being emitted:
    targets: Vec<Target>,
    phis: HashMap<Word, Vec<Phi>>,
    stubs: Vec<(Word, Word)>,
    current_label: Word,
    block: usize,
}

/// The largest power of two dividing `align` (at most 2^15), so that the
/// machine tests alignment with a mask.
fn power_of_two_align(align: u64) -> u16 {
    let lowest = align & align.wrapping_neg();
    lowest.clamp(1, 1 << 15) as u16
}

/// The SPIR-V spelling of an opcode (`OpIAdd`; the grammar table omits `Op`).
fn spirv_name(opname: &'static str) -> &'static str {
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

fn lane_type(s: Scalar, signed: bool) -> R<LaneType> {
    Ok(match s {
        Scalar::Bool => LaneType::Bool,
        Scalar::Ptr => LaneType::Pointer,
        Scalar::Int(bits) => {
            LaneType::Scalar(ScalarType::integer(bits as u32, signed).ok_or_else(|| {
                TranslateError::unsupported(
                    format!("{bits}-bit integers"),
                    "use 8, 16, 32 or 64-bit integers",
                )
            })?)
        }
        Scalar::Float(bits) => LaneType::Scalar(
            ScalarType::float(bits as u32)
                .ok_or_else(|| TranslateError::malformed(format!("{bits}-bit floats")))?,
        ),
    })
}

fn space_of(class: StorageClass) -> R<AddressSpace> {
    Ok(match class {
        StorageClass::CrossWorkgroup => AddressSpace::Global,
        StorageClass::UniformConstant => AddressSpace::Constant,
        StorageClass::Workgroup => AddressSpace::Local,
        StorageClass::Function | StorageClass::Input => AddressSpace::Private,
        StorageClass::Generic => AddressSpace::Generic,
        other => {
            return Err(TranslateError::unsupported(
                format!("storage class {other:?}"),
                "clflow runs OpenCL C kernels (global, constant, local and private memory)",
            ))
        }
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

fn load_name(space: Space, store: bool) -> &'static str {
    match (space, store) {
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
            types: Types::default(),
            names,
            decorations,
            opencl_std,
            values: HashMap::new(),
            const_ints: HashMap::new(),
            builtins: HashMap::new(),
            init: Vec::new(),
            next_reg: 0,
            zero_slot: None,
            functions,
            func_pc: HashMap::new(),
            call_fixups: Vec::new(),
            code: Vec::new(),
            site_of: Vec::new(),
            sites: Vec::new(),
            current_site: 0,
            moves: Vec::new(),
            terms: Vec::new(),
            cases: Vec::new(),
            layouts: Vec::new(),
            blocks: Vec::new(),
            hist_keys: Vec::new(),
            hist_index: HashMap::new(),
            work_keys: Vec::new(),
            work_index: HashMap::new(),
            private: ArenaLayout::default(),
            local_vars: Vec::new(),
            global_vars: Vec::new(),
            nargs: 0,
            uses_barrier: false,
            pending_globals: Vec::new(),
            inline_depth: 0,
            silent: false,
            overrides: HashMap::new(),
            const_slots: HashMap::new(),
            targets: Vec::new(),
            phis: HashMap::new(),
            stubs: Vec::new(),
            current_label: 0,
            block: 0,
        })
    }

    /// The layout of `ty`, refused beyond `limit` bytes (memory no device has).
    fn bounded(&self, ty: Word, what: &str, limit: u64) -> R<(u64, u64)> {
        let (size, align) = self.types.layout(ty)?;
        if size > limit {
            return Err(TranslateError::unsupported(
                format!("{what} of {size} bytes (clflow's limit is {limit})"),
                "use a smaller type or pass the data in a buffer",
            ));
        }
        Ok((size, align))
    }

    fn check_private(&self) -> R<()> {
        let total = self.private.total();
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
        let r = self.next_reg;
        self.next_reg = self
            .next_reg
            .checked_add(n)
            .filter(|r| *r < (1 << 26))
            .ok_or_else(|| {
                TranslateError::unsupported("a kernel this large", "split the kernel")
            })?;
        Ok(r)
    }

    fn val(&self, id: Word) -> R<Val> {
        self.overrides
            .get(&id)
            .or_else(|| self.values.get(&id))
            .copied()
            .ok_or_else(|| TranslateError::malformed(format!("%{id} is used but never defined")))
    }

    fn zero(&mut self) -> R<Reg> {
        if let Some(z) = self.zero_slot {
            return Ok(z);
        }
        let z = self.alloc(1)?;
        self.zero_slot = Some(z);
        Ok(z)
    }

    // ---- module-level: types, constants, variables --------------------------

    fn globals(&mut self) -> R<()> {
        for inst in &self.module.types_global_values {
            let site = || {
                format!(
                    "{} %{}",
                    spirv_name(inst.class.opname),
                    inst.result_id.unwrap_or(0)
                )
            };
            self.global(inst).map_err(|e| e.at(site))?;
        }
        Ok(())
    }

    fn global(&mut self, inst: &Instruction) -> R<()> {
        let rid = inst.result_id.unwrap_or(0);
        match inst.class.opcode {
            S::TypeVoid => self.types.insert(rid, Ty::Void),
            S::TypeBool => self.types.insert(rid, Ty::Scalar(Scalar::Bool)),
            S::TypeInt => {
                let bits = literal(inst, 0)?;
                if ![8, 16, 32, 64].contains(&bits) {
                    return Err(TranslateError::unsupported(
                        format!("{bits}-bit integers"),
                        "use 8, 16, 32 or 64-bit integer types",
                    ));
                }
                self.types.insert(rid, Ty::Scalar(Scalar::Int(bits as u8)));
            }
            S::TypeFloat => {
                let bits = literal(inst, 0)?;
                if ![16, 32, 64].contains(&bits) {
                    return Err(TranslateError::malformed(format!("{bits}-bit float type")));
                }
                self.types
                    .insert(rid, Ty::Scalar(Scalar::Float(bits as u8)));
            }
            S::TypeVector => {
                let (s, _) = self.types.lanes(id(inst, 0)?)?;
                let n = literal(inst, 1)?;
                if ![2, 3, 4, 8, 16].contains(&n) {
                    return Err(TranslateError::malformed(format!("vector of {n} lanes")));
                }
                self.types.insert(rid, Ty::Vector(s, n as u8));
            }
            S::TypeArray => {
                let len_id = id(inst, 1)?;
                let len = *self
                    .const_ints
                    .get(&len_id)
                    .ok_or_else(|| TranslateError::malformed("array length is not a constant"))?;
                self.types.insert(rid, Ty::Array(id(inst, 0)?, len));
            }
            S::TypeRuntimeArray => self.types.insert(rid, Ty::Array(id(inst, 0)?, 0)),
            S::TypeStruct => {
                let members = (0..inst.operands.len())
                    .map(|i| id(inst, i))
                    .collect::<R<Vec<_>>>()?;
                let packed = self.decorated(rid, Decoration::CPacked).is_some();
                self.types.insert(rid, Ty::Struct { members, packed });
            }
            S::TypePointer => {
                let class = match inst.operands.first() {
                    Some(Operand::StorageClass(c)) => *c,
                    _ => {
                        return Err(TranslateError::malformed(
                            "OpTypePointer without a storage class",
                        ))
                    }
                };
                let space = space_of(class)?;
                self.types.insert(
                    rid,
                    Ty::Pointer {
                        space,
                        pointee: id(inst, 1)?,
                    },
                );
            }
            S::TypeFunction => self.types.insert(rid, Ty::Function),
            S::TypeEvent => self.types.insert(rid, Ty::Event),
            S::TypeOpaque | S::TypeForwardPointer => self.types.insert(rid, Ty::Void),
            S::Constant | S::SpecConstant => {
                let (rid, ty) = result(inst)?;
                let raw = literal(inst, 0)?;
                let (s, _) = self.types.lanes(ty)?;
                let value = match s {
                    Scalar::Int(bits) => raw & crate::opencl_std::mask(bits),
                    _ => raw,
                };
                if let Scalar::Int(_) = s {
                    self.const_ints.insert(rid, value);
                }
                self.constant(rid, ty, vec![value])?;
            }
            S::ConstantTrue | S::ConstantFalse | S::SpecConstantTrue | S::SpecConstantFalse => {
                let (rid, ty) = result(inst)?;
                let v = matches!(inst.class.opcode, S::ConstantTrue | S::SpecConstantTrue) as u64;
                self.constant(rid, ty, vec![v])?;
            }
            S::ConstantNull | S::Undef => {
                let (rid, ty) = result(inst)?;
                let n = self.types.slots(ty)?;
                self.constant(rid, ty, vec![0; n as usize])?;
            }
            S::ConstantComposite | S::SpecConstantComposite => {
                let (rid, ty) = result(inst)?;
                let mut values = Vec::new();
                for i in 0..inst.operands.len() {
                    let part = self.val(id(inst, i)?)?;
                    let n = self.types.slots(part.ty)?;
                    for k in 0..n {
                        values.push(self.init_value(part.slot + k));
                    }
                }
                if values.len() as u32 != self.types.slots(ty)? {
                    return Err(TranslateError::malformed(
                        "composite constant of the wrong size",
                    ));
                }
                self.constant(rid, ty, values)?;
            }
            S::Variable => self.global_variable(inst)?,
            S::String | S::Line | S::NoLine | S::ExtInst => {}
            S::ConstantSampler
            | S::TypeSampler
            | S::TypeImage
            | S::TypeSampledImage
            | S::TypePipe => {
                return Err(TranslateError::unsupported(
                    format!(
                        "{} (images, samplers and pipes)",
                        spirv_name(inst.class.opname)
                    ),
                    "clflow counts kernels over buffers",
                ))
            }
            _ => {
                return Err(TranslateError::unsupported(
                    format!("{} at module scope", spirv_name(inst.class.opname)),
                    "this SPIR-V construct is outside what clflow interprets",
                ))
            }
        }
        Ok(())
    }

    fn init_value(&self, slot: Reg) -> u64 {
        self.init
            .iter()
            .rev()
            .find(|(s, _)| *s == slot)
            .map(|(_, v)| *v)
            .unwrap_or(0)
    }

    fn constant(&mut self, rid: Word, ty: Word, values: Vec<u64>) -> R<()> {
        let slot = self.alloc(values.len() as u32)?;
        for (i, v) in values.into_iter().enumerate() {
            self.const_slots.insert(slot + i as u32, v);
            if v != 0 {
                self.init.push((slot + i as u32, v));
            }
        }
        self.values.insert(rid, Val { slot, ty });
        Ok(())
    }

    /// The bytes of a constant as laid out in memory.
    fn constant_bytes(&self, cid: Word, ty: Word) -> R<Vec<u8>> {
        let (size, _) = self.types.layout(ty)?;
        let mut bytes = vec![0u8; size as usize];
        let v = self.val(cid)?;
        for (i, leaf) in self.types.leaves(ty)?.iter().enumerate() {
            let value = self.init_value(v.slot + i as u32);
            let at = leaf.offset as usize;
            bytes[at..at + leaf.size as usize]
                .copy_from_slice(&value.to_le_bytes()[..leaf.size as usize]);
        }
        Ok(bytes)
    }

    fn global_variable(&mut self, inst: &Instruction) -> R<()> {
        let (rid, ptr_ty) = result(inst)?;
        let (_, pointee) = self.types.pointee(ptr_ty)?;
        let class = match inst.operands.first() {
            Some(Operand::StorageClass(c)) => *c,
            _ => {
                return Err(TranslateError::malformed(
                    "OpVariable without a storage class",
                ))
            }
        };
        let label = self.name(rid);
        let initializer = inst.operands.get(1).map(|_| id(inst, 1)).transpose()?;
        let pointer = match class {
            StorageClass::Input => {
                let builtin = match self.decorated(rid, Decoration::BuiltIn) {
                    Some([Operand::BuiltIn(b), ..]) => *b,
                    _ => {
                        return Err(TranslateError::malformed(format!(
                            "Input variable {label} is not a builtin"
                        )))
                    }
                };
                use spirv::BuiltIn as B;
                let which = match builtin {
                    B::GlobalInvocationId => Builtin::GlobalId,
                    B::LocalInvocationId => Builtin::LocalId,
                    B::WorkgroupId => Builtin::GroupId,
                    B::GlobalSize => Builtin::GlobalSize,
                    B::WorkgroupSize | B::EnqueuedWorkgroupSize => Builtin::LocalSize,
                    B::NumWorkgroups => Builtin::NumGroups,
                    B::GlobalOffset => Builtin::GlobalOffset,
                    B::WorkDim => Builtin::WorkDim,
                    B::GlobalLinearId => Builtin::GlobalLinearId,
                    B::LocalInvocationIndex => Builtin::LocalLinearId,
                    other => {
                        return Err(TranslateError::unsupported(
                            format!("work-item builtin {other:?}"),
                            "sub-groups are not interpreted",
                        ))
                    }
                };
                self.builtins.insert(rid, which);
                return Ok(());
            }
            StorageClass::Workgroup => {
                let (size, align) =
                    self.bounded(pointee, "a program-scope __local variable", MAX_LOCAL_BYTES)?;
                self.local_vars
                    .push((size, align, format!("program-scope variable `{label}`")));
                (memory::SPACE_LOCAL, self.local_vars.len() - 1)
            }
            StorageClass::UniformConstant | StorageClass::CrossWorkgroup => {
                self.bounded(
                    pointee,
                    "a program-scope variable",
                    MAX_PROGRAM_BUFFER_BYTES,
                )?;
                let bytes = match initializer {
                    Some(c) => self.constant_bytes(c, pointee)?,
                    None => vec![0; self.types.layout(pointee)?.0 as usize],
                };
                let space = if class == StorageClass::CrossWorkgroup {
                    "__global"
                } else {
                    "__constant"
                };
                self.global_vars.push(ProgramBuffer {
                    bytes,
                    label: format!("program-scope variable `{label}`"),
                    space,
                });
                (memory::SPACE_GLOBAL, self.global_vars.len() - 1)
            }
            other => {
                return Err(TranslateError::unsupported(
                    format!("a program-scope variable in storage class {other:?}"),
                    "use __global, __constant or __local",
                ))
            }
        };
        // Program-scope buffers are numbered after the kernel's parameters,
        // which are known only once the entry point is; patched in `program`.
        self.constant(rid, ptr_ty, vec![0])?;
        self.pending_globals.push((rid, pointer.0, pointer.1));
        Ok(())
    }
}

// ---- functions ----------------------------------------------------------------

impl<'m> Translator<'m> {
    fn program(mut self, entry_fn: Word) -> R<Program> {
        let entry = *self
            .functions
            .get(&entry_fn)
            .ok_or_else(|| TranslateError::malformed("the entry point names no function"))?;
        self.nargs = entry.parameters.len();
        for (rid, space, index) in std::mem::take(&mut self.pending_globals) {
            let slot = self.val(rid)?.slot;
            let pointer = memory::encode(space, self.nargs + index, 0);
            self.init.push((slot, pointer));
            self.const_slots.insert(slot, pointer);
        }
        let order = self.reachable(entry_fn)?;
        for f in &order {
            let func = self.functions[f];
            let name = self.name(*f);
            self.allocate(func)
                .map_err(|e| e.at(|| format!("function `{name}`")))?;
        }
        let params = self.kernel_params(entry)?;
        for f in &order {
            self.func_pc.insert(*f, self.code.len() as Pc);
            let func = self.functions[f];
            self.emit_function(*f, func)?;
        }
        for (at, callee) in std::mem::take(&mut self.call_fixups) {
            if let Op::Call { target, .. } = &mut self.code[at] {
                *target = self.func_pc[&callee];
            }
        }
        self.check_code()?;
        let mut init_regs = vec![0u64; self.next_reg as usize];
        for (slot, v) in &self.init {
            init_regs[*slot as usize] = *v;
        }
        Ok(Program {
            rank: crate::program::schedule_ranks(&self.code, &self.cases, self.func_pc[&entry_fn]),
            kernel: self.kernel,
            code: self.code,
            site_of: self.site_of,
            sites: self.sites,
            entry: self.func_pc[&entry_fn],
            init_regs,
            params,
            moves: self.moves,
            terms: self.terms,
            cases: self.cases,
            layouts: self.layouts,
            blocks: self.blocks,
            hist_keys: self.hist_keys,
            work_keys: self.work_keys,
            private: self.private,
            local_vars: self.local_vars,
            global_vars: self.global_vars,
            uses_barrier: self.uses_barrier,
        })
    }

    /// Proves that no op touches a register, table entry or pc outside the
    /// program, so that a malformed module cannot make the machine fail.
    fn check_code(&self) -> R<()> {
        let nregs = self.next_reg as u64;
        let npc = self.code.len() as u64;
        let mut spans = Vec::new();
        for (pc, op) in self.code.iter().enumerate() {
            spans.clear();
            crate::bytecode::spans(op, &self.moves, &self.terms, &mut spans);
            let bad_reg = spans.iter().any(|(r, n)| r + n > nregs);
            let in_table =
                |start: u32, len: u32, table: usize| start as usize + len as usize <= table;
            let bad_ref = match *op {
                Op::Jump { target } => target as u64 >= npc,
                Op::Branch { then, other, .. } => then as u64 >= npc || other as u64 >= npc,
                Op::Switch {
                    cases_start,
                    cases_len,
                    default,
                    ..
                } => {
                    default as u64 >= npc
                        || !in_table(cases_start, cases_len, self.cases.len())
                        || self.cases[cases_start as usize..(cases_start + cases_len) as usize]
                            .iter()
                            .any(|(_, t)| *t as u64 >= npc)
                }
                Op::Call {
                    target,
                    moves_start,
                    moves_len,
                    ..
                } => target as u64 >= npc || !in_table(moves_start, moves_len, self.moves.len()),
                Op::Moves { start, len } => !in_table(start, len, self.moves.len()),
                Op::Ptr {
                    terms_start,
                    terms_len,
                    ..
                } => !in_table(terms_start, terms_len as u32, self.terms.len()),
                Op::LoadAgg { dst: r, layout, .. } | Op::StoreAgg { src: r, layout, .. } => self
                    .layouts
                    .get(layout as usize)
                    .is_none_or(|l| r as u64 + l.len() as u64 > nregs),
                Op::Bitcast {
                    from,
                    from_n,
                    to,
                    to_n,
                    ..
                } => {
                    from as u32 * from_n as u32 > 1024
                        || to as u32 * to_n as u32 > 1024
                        || from < 8
                        || to < 8
                }
                _ => false,
            };
            if bad_reg || bad_ref {
                return Err(TranslateError::malformed(format!(
                    "inconsistent types or operands ({})",
                    self.sites
                        .get(self.site_of[pc] as usize)
                        .map(String::as_str)
                        .unwrap_or("?")
                )));
            }
        }
        let last_is_exit = matches!(
            self.code.last(),
            Some(
                Op::Ret { .. } | Op::Jump { .. } | Op::Trap | Op::Switch { .. } | Op::Branch { .. }
            )
        );
        if !last_is_exit {
            return Err(TranslateError::malformed(
                "a function's last block does not end in a branch or return",
            ));
        }
        Ok(())
    }

    /// Functions reachable from the kernel, callees first; recursion (which
    /// OpenCL C forbids) and calls to undefined functions are errors.
    fn reachable(&self, entry: Word) -> R<Vec<Word>> {
        let mut order = Vec::new();
        let mut state: HashMap<Word, bool> = HashMap::new(); // false: visiting, true: done
        let mut stack = vec![(entry, false)];
        while let Some((f, expanded)) = stack.pop() {
            if expanded {
                state.insert(f, true);
                order.push(f);
                continue;
            }
            match state.get(&f) {
                Some(true) => continue,
                Some(false) => {
                    return Err(TranslateError::unsupported(
                        format!("recursion through function `{}`", self.name(f)),
                        "OpenCL C does not allow recursion",
                    ))
                }
                None => {}
            }
            let func = self.functions.get(&f).ok_or_else(|| {
                TranslateError::malformed(format!("call to %{f}, which is not a function"))
            })?;
            if func.blocks.is_empty() {
                return Err(TranslateError::unsupported(
                    format!(
                        "call to `{}`, which the module declares but does not define",
                        self.name(f)
                    ),
                    "link the function into the kernel's source",
                ));
            }
            state.insert(f, false);
            stack.push((f, true));
            for inst in func.blocks.iter().flat_map(|b| &b.instructions) {
                if inst.class.opcode == S::FunctionCall {
                    let callee = id(inst, 0)?;
                    if state.get(&callee) == Some(&false) {
                        return Err(TranslateError::unsupported(
                            format!("recursion through function `{}`", self.name(callee)),
                            "OpenCL C does not allow recursion",
                        ));
                    }
                    stack.push((callee, false));
                }
            }
        }
        Ok(order)
    }

    /// Gives every value of a function its register slots, and every
    /// private variable its place, before any code refers to them.
    fn allocate(&mut self, func: &Function) -> R<()> {
        for p in &func.parameters {
            let (rid, ty) = result(p)?;
            let slot = self.alloc(self.types.slots(ty)?)?;
            self.values.insert(rid, Val { slot, ty });
        }
        for inst in func.blocks.iter().flat_map(|b| &b.instructions) {
            let (Some(rid), Some(ty)) = (inst.result_id, inst.result_type) else {
                continue;
            };
            if inst.class.opcode == S::Variable {
                let (space, pointee) = self.types.pointee(ty)?;
                if space != AddressSpace::Private {
                    return Err(TranslateError::malformed(
                        "a function-scope variable outside private memory",
                    ));
                }
                let (size, align) =
                    self.bounded(pointee, "a private variable", MAX_PRIVATE_BYTES)?;
                let var = self.private.push(
                    size,
                    align,
                    format!("private variable `{}`", self.name(rid)),
                );
                self.check_private()?;
                self.constant(rid, ty, vec![memory::encode(memory::SPACE_PRIVATE, var, 0)])?;
                continue;
            }
            let slot = self.alloc(self.types.slots(ty)?)?;
            self.values.insert(rid, Val { slot, ty });
        }
        Ok(())
    }

    fn kernel_params(&mut self, entry: &Function) -> R<Vec<ParamSlot>> {
        let mut params = Vec::new();
        for p in &entry.parameters {
            let (rid, ty) = result(p)?;
            let slot = self.val(rid)?.slot;
            let byval = self.decorations.get(&rid).is_some_and(|ds| {
                ds.iter().any(|(d, ops)| {
                    *d == Decoration::FuncParamAttr
                        && matches!(
                            ops.first(),
                            Some(Operand::FunctionParameterAttribute(
                                spirv::FunctionParameterAttribute::ByVal
                            ))
                        )
                })
            });
            params.push(match self.types.get(ty)?.clone() {
                Ty::Pointer { space, pointee } if byval => {
                    let (size, align) =
                        self.bounded(pointee, "a by-value argument", MAX_PRIVATE_BYTES)?;
                    let var = self.private.push(
                        size,
                        align,
                        format!("by-value argument `{}`", self.name(rid)),
                    );
                    self.check_private()?;
                    self.init
                        .push((slot, memory::encode(memory::SPACE_PRIVATE, var, 0)));
                    let _ = space;
                    ParamSlot::ByVal { slot, var, size }
                }
                Ty::Pointer { space, .. } => ParamSlot::Pointer { slot, space },
                _ => ParamSlot::Value {
                    slot,
                    leaves: self.types.leaves(ty)?,
                    size: self.types.layout(ty)?.0,
                },
            });
        }
        Ok(params)
    }

    // ---- emission helpers ------------------------------------------------------

    fn emit(&mut self, op: Op) {
        self.code.push(op);
        self.site_of.push(self.current_site);
    }

    fn hist(&mut self, name: &'static str, ty: LaneType, lanes: u64) {
        if self.silent {
            return;
        }
        let next = self.hist_keys.len() as u32;
        let k = *self.hist_index.entry((name, ty)).or_insert(next);
        if k == next {
            self.hist_keys.push((name, ty));
        }
        let block = &mut self.blocks[self.block];
        match block.hist.iter_mut().find(|(e, _)| *e == k) {
            Some((_, n)) => *n += lanes,
            None => block.hist.push((k, lanes)),
        }
    }

    fn work(&mut self, op: &'static str, ty: LaneType, amount: u64, arith: bool) {
        if amount == 0 || self.silent {
            return;
        }
        let key = WorkKey { op, ty, arith };
        let next = self.work_keys.len() as u32;
        let k = *self.work_index.entry(key).or_insert(next);
        if k == next {
            self.work_keys.push(key);
        }
        let block = &mut self.blocks[self.block];
        match block.work.iter_mut().find(|(e, _)| *e == k) {
            Some((_, n)) => *n += amount,
            None => block.work.push((k, amount)),
        }
    }

    /// Counts an instruction that is one operation per lane, under its name.
    fn count(&mut self, name: &'static str, ty: LaneType, lanes: u64, arith: bool) {
        self.hist(name, ty, lanes);
        self.work(name, ty, lanes, arith);
    }

    fn traffic(&mut self, space: Space, store: bool, bytes: u64, ty: LaneType, lanes: u64) {
        self.blocks[self.block].traffic.add(space, store, bytes);
        self.hist(load_name(space, store), ty, lanes);
    }

    fn target(&mut self, label: Word) -> Pc {
        let t = if self.phis.contains_key(&label) {
            self.stubs.push((self.current_label, label));
            Target::Stub(self.stubs.len() - 1)
        } else {
            Target::Label(label)
        };
        self.targets.push(t);
        (self.targets.len() - 1) as Pc
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
        self.emit(Op::Splat {
            dst: tmp,
            src: v.slot,
            n,
        });
        Ok(tmp)
    }

    fn emit_function(&mut self, fid: Word, func: &'m Function) -> R<()> {
        let fname = self.name(fid);
        let start = self.code.len();
        let cases_start = self.cases.len();
        self.targets.clear();
        self.stubs.clear();
        self.phis.clear();
        for block in &func.blocks {
            let label = block.label.as_ref().and_then(|l| l.result_id).unwrap_or(0);
            for inst in block
                .instructions
                .iter()
                .filter(|i| i.class.opcode == S::Phi)
            {
                let (rid, _) = result(inst)?;
                let v = self.val(rid)?;
                let n = self.types.slots(v.ty)?;
                let mut pairs = Vec::new();
                for k in (0..inst.operands.len()).step_by(2) {
                    pairs.push((id(inst, k)?, id(inst, k + 1)?));
                }
                self.phis
                    .entry(label)
                    .or_default()
                    .push((v.slot, n, pairs, v.ty));
            }
        }
        let mut label_pc = HashMap::new();
        for block in &func.blocks {
            let label = block.label.as_ref().and_then(|l| l.result_id).unwrap_or(0);
            label_pc.insert(label, self.code.len() as Pc);
            self.current_label = label;
            self.blocks.push(BlockCounts::default());
            self.block = self.blocks.len() - 1;
            self.sites.push(format!("block %{label} in `{fname}`"));
            self.current_site = (self.sites.len() - 1) as u32;
            let block_at = self.code.len();
            self.emit(Op::Block {
                block: self.block as u32,
                steps: 0,
            });
            for (_, _, _, ty) in self.phis.get(&label).cloned().unwrap_or_default() {
                let lt = self.lane_type_of(ty, false);
                self.count("OpPhi", lt, 1, false);
            }
            for inst in &block.instructions {
                self.sites.push(format!(
                    "{}{} in `{fname}`",
                    spirv_name(inst.class.opname),
                    inst.result_id.map(|r| format!(" %{r}")).unwrap_or_default()
                ));
                self.current_site = (self.sites.len() - 1) as u32;
                self.instruction(inst).map_err(|e| {
                    e.at(|| {
                        format!(
                            "{}{} in function `{fname}`",
                            spirv_name(inst.class.opname),
                            inst.result_id.map(|r| format!(" %{r}")).unwrap_or_default()
                        )
                    })
                })?;
            }
            let steps = (self.code.len() - block_at) as u32;
            if let Op::Block { steps: s, .. } = &mut self.code[block_at] {
                *s = steps;
            }
        }
        // Phi edges: parallel copies, through temporaries where they overlap.
        let mut stub_pc = Vec::new();
        for (pred, succ) in self.stubs.clone() {
            self.sites.push(format!(
                "phi copies on the edge %{pred} -> %{succ} in `{fname}`"
            ));
            self.current_site = (self.sites.len() - 1) as u32;
            stub_pc.push(self.code.len() as Pc);
            let mut copies = Vec::new();
            for (dst, n, pairs, _) in self.phis.get(&succ).cloned().unwrap_or_default() {
                let value = pairs
                    .iter()
                    .find(|(_, p)| *p == pred)
                    .map(|(v, _)| *v)
                    .ok_or_else(|| {
                        TranslateError::malformed(format!(
                            "phi in %{succ} has no value for %{pred}"
                        ))
                    })?;
                copies.push(Move {
                    dst,
                    src: self.val(value)?.slot,
                    n,
                });
            }
            let overlaps = copies.iter().any(|c| {
                copies
                    .iter()
                    .any(|d| c.src < d.dst + d.n && d.dst < c.src + c.n)
            });
            if overlaps {
                let mut staged = Vec::new();
                for c in &copies {
                    let tmp = self.alloc(c.n)?;
                    self.moves.push(Move {
                        dst: tmp,
                        src: c.src,
                        n: c.n,
                    });
                    staged.push(Move {
                        dst: c.dst,
                        src: tmp,
                        n: c.n,
                    });
                }
                let start = self.moves.len() - copies.len();
                self.emit(Op::Moves {
                    start: start as u32,
                    len: copies.len() as u32,
                });
                copies = staged;
            }
            let start = self.moves.len();
            self.moves.extend(copies.iter().copied());
            self.emit(Op::Moves {
                start: start as u32,
                len: copies.len() as u32,
            });
            self.targets.push(Target::Label(succ));
            self.emit(Op::Jump {
                target: (self.targets.len() - 1) as Pc,
            });
        }
        let resolve = |t: Pc, targets: &[Target]| -> R<Pc> {
            match targets.get(t as usize) {
                Some(Target::Label(l)) => label_pc.get(l).copied().ok_or_else(|| {
                    TranslateError::malformed(format!("branch to %{l}, not a block of `{fname}`"))
                }),
                Some(Target::Stub(s)) => Ok(stub_pc[*s]),
                None => Err(TranslateError::malformed("bad branch target")),
            }
        };
        let targets = std::mem::take(&mut self.targets);
        for op in &mut self.code[start..] {
            match op {
                Op::Jump { target } => *target = resolve(*target, &targets)?,
                Op::Branch { then, other, .. } => {
                    *then = resolve(*then, &targets)?;
                    *other = resolve(*other, &targets)?;
                }
                Op::Switch { default, .. } => *default = resolve(*default, &targets)?,
                _ => {}
            }
        }
        for case in &mut self.cases[cases_start..] {
            case.1 = resolve(case.1, &targets)?;
        }
        Ok(())
    }
}

// ---- instructions ---------------------------------------------------------------

fn int_op(op: S) -> Option<(IntOp, bool)> {
    Some(match op {
        S::IAdd => (IntOp::Add, false),
        S::ISub => (IntOp::Sub, false),
        S::IMul => (IntOp::Mul, false),
        S::UDiv => (IntOp::UDiv, false),
        S::SDiv => (IntOp::SDiv, true),
        S::UMod => (IntOp::UMod, false),
        S::SRem => (IntOp::SRem, true),
        S::SMod => (IntOp::SMod, true),
        S::ShiftLeftLogical => (IntOp::Shl, false),
        S::ShiftRightLogical => (IntOp::LShr, false),
        S::ShiftRightArithmetic => (IntOp::AShr, true),
        S::BitwiseAnd => (IntOp::And, false),
        S::BitwiseOr => (IntOp::Or, false),
        S::BitwiseXor => (IntOp::Xor, false),
        _ => return None,
    })
}

fn cmp_op(op: S) -> Option<(CmpOp, bool)> {
    Some(match op {
        S::IEqual => (CmpOp::Eq, false),
        S::INotEqual => (CmpOp::Ne, false),
        S::ULessThan => (CmpOp::ULt, false),
        S::ULessThanEqual => (CmpOp::ULe, false),
        S::UGreaterThan => (CmpOp::UGt, false),
        S::UGreaterThanEqual => (CmpOp::UGe, false),
        S::SLessThan => (CmpOp::SLt, true),
        S::SLessThanEqual => (CmpOp::SLe, true),
        S::SGreaterThan => (CmpOp::SGt, true),
        S::SGreaterThanEqual => (CmpOp::SGe, true),
        S::PtrEqual => (CmpOp::Eq, false),
        S::PtrNotEqual => (CmpOp::Ne, false),
        _ => return None,
    })
}

fn fcmp_op(op: S) -> Option<(FCmpOp, bool)> {
    Some(match op {
        S::FOrdEqual => (FCmpOp::Eq, true),
        S::FUnordEqual => (FCmpOp::Eq, false),
        S::FOrdNotEqual => (FCmpOp::Ne, true),
        S::FUnordNotEqual => (FCmpOp::Ne, false),
        S::FOrdLessThan => (FCmpOp::Lt, true),
        S::FUnordLessThan => (FCmpOp::Lt, false),
        S::FOrdGreaterThan => (FCmpOp::Gt, true),
        S::FUnordGreaterThan => (FCmpOp::Gt, false),
        S::FOrdLessThanEqual => (FCmpOp::Le, true),
        S::FUnordLessThanEqual => (FCmpOp::Le, false),
        S::FOrdGreaterThanEqual => (FCmpOp::Ge, true),
        S::FUnordGreaterThanEqual => (FCmpOp::Ge, false),
        S::Ordered => (FCmpOp::Ord, true),
        S::Unordered => (FCmpOp::Ord, false),
        _ => return None,
    })
}

fn atomic_op(op: S) -> Option<AtomicOp> {
    Some(match op {
        S::AtomicLoad => AtomicOp::Load,
        S::AtomicStore => AtomicOp::Store,
        S::AtomicExchange => AtomicOp::Exchange,
        S::AtomicCompareExchange | S::AtomicCompareExchangeWeak => AtomicOp::CompareExchange,
        S::AtomicIIncrement => AtomicOp::Inc,
        S::AtomicIDecrement => AtomicOp::Dec,
        S::AtomicIAdd => AtomicOp::Add,
        S::AtomicISub => AtomicOp::Sub,
        S::AtomicSMin => AtomicOp::SMin,
        S::AtomicUMin => AtomicOp::UMin,
        S::AtomicSMax => AtomicOp::SMax,
        S::AtomicUMax => AtomicOp::UMax,
        S::AtomicAnd => AtomicOp::And,
        S::AtomicOr => AtomicOp::Or,
        S::AtomicXor => AtomicOp::Xor,
        _ => return None,
    })
}

impl<'m> Translator<'m> {
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

    fn int_bits(&self, s: Scalar) -> R<u8> {
        match s {
            Scalar::Int(b) => Ok(b),
            Scalar::Ptr => Ok(64),
            Scalar::Bool => Ok(1),
            Scalar::Float(_) => Err(TranslateError::malformed("an integer operation on floats")),
        }
    }

    fn float_bits(&self, s: Scalar) -> R<u8> {
        match s {
            Scalar::Float(b) => Ok(b),
            _ => Err(TranslateError::malformed(
                "a float operation on a non-float type",
            )),
        }
    }

    fn instruction(&mut self, inst: &Instruction) -> R<()> {
        let opcode = inst.class.opcode;
        let name = spirv_name(inst.class.opname);
        if let Some((op, signed)) = int_op(opcode) {
            let (rid, ty) = result(inst)?;
            let (s, n) = self.types.lanes(ty)?;
            let bits = self.int_bits(s)?;
            let (a, b) = (
                self.operand(id(inst, 0)?, n)?,
                self.operand(id(inst, 1)?, n)?,
            );
            if let Some(v) = self.fold(op, bits, n, a, b) {
                // Both operands are constants where this inlined body was
                // called (rotations by a constant): the value is known now.
                // It still counts as executed.
                let slot = self.alloc(1)?;
                self.const_slots.insert(slot, v);
                self.init.push((slot, v));
                self.overrides.insert(rid, Val { slot, ty });
            } else {
                let dst = self.val(rid)?.slot;
                self.emit(crate::bytecode::int_op(op, bits, n, dst, a, b));
            }
            self.count(name, lane_type(s, signed)?, n as u64, true);
            return Ok(());
        }
        if let Some((op, signed)) = cmp_op(opcode) {
            let (rid, _) = result(inst)?;
            let lhs = self.val(id(inst, 0)?)?;
            let (s, n) = self.types.lanes(lhs.ty)?;
            let bits = self.int_bits(s)?;
            let b = self.operand(id(inst, 1)?, n)?;
            let dst = self.val(rid)?.slot;
            self.emit(Op::Cmp {
                op,
                bits,
                n,
                dst,
                a: lhs.slot,
                b,
            });
            self.count(name, lane_type(s, signed)?, n as u64, true);
            return Ok(());
        }
        if let Some((op, ordered)) = fcmp_op(opcode) {
            let (rid, _) = result(inst)?;
            let lhs = self.val(id(inst, 0)?)?;
            let (s, n) = self.types.lanes(lhs.ty)?;
            let bits = self.float_bits(s)?;
            let b = self.operand(id(inst, 1)?, n)?;
            let dst = self.val(rid)?.slot;
            self.emit(Op::FCmp {
                op,
                ordered,
                bits,
                n,
                dst,
                a: lhs.slot,
                b,
            });
            self.count(name, lane_type(s, true)?, n as u64, true);
            return Ok(());
        }
        if let Some(op) = atomic_op(opcode) {
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
            | S::Label => {}
            S::Variable => {
                // The pointer is a constant (see `allocate`); an initializer is a store.
                if inst.operands.len() > 1 {
                    let (rid, ty) = result(inst)?;
                    let (_, pointee) = self.types.pointee(ty)?;
                    let ptr = self.val(rid)?.slot;
                    let src = self.val(id(inst, 1)?)?.slot;
                    self.store_value(ptr, src, pointee, AddressSpace::Private, None)?;
                }
            }
            S::Undef => {
                let (rid, ty) = result(inst)?;
                let n = self.types.slots(ty)?;
                let dst = self.val(rid)?.slot;
                let zero = self.zero()?;
                for k in 0..n {
                    self.emit(Op::Mov {
                        dst: dst + k,
                        src: zero,
                        n: 1,
                    });
                }
            }
            S::SNegate | S::Not | S::BitCount | S::BitReverse => {
                let (rid, ty) = result(inst)?;
                let (s, n) = self.types.lanes(ty)?;
                let bits = self.int_bits(s)?;
                let op = match opcode {
                    S::SNegate => IntUnOp::Neg,
                    S::Not => IntUnOp::Not,
                    S::BitCount => IntUnOp::BitCount,
                    _ => IntUnOp::BitReverse,
                };
                let a = self.operand(id(inst, 0)?, n)?;
                let dst = self.val(rid)?.slot;
                self.emit(Op::IntUn {
                    op,
                    bits,
                    n,
                    dst,
                    a,
                });
                self.count(name, lane_type(s, opcode == S::SNegate)?, n as u64, true);
            }
            S::FAdd | S::FSub | S::FMul | S::FDiv | S::FRem | S::FMod => {
                let op = match opcode {
                    S::FAdd => FloatOp::Add,
                    S::FSub => FloatOp::Sub,
                    S::FMul => FloatOp::Mul,
                    S::FDiv => FloatOp::Div,
                    S::FRem => FloatOp::Rem,
                    _ => FloatOp::Mod,
                };
                self.float_bin(inst, op, name, name)?;
            }
            S::FNegate => {
                let (rid, ty) = result(inst)?;
                let (s, n) = self.types.lanes(ty)?;
                let bits = self.float_bits(s)?;
                let a = self.operand(id(inst, 0)?, n)?;
                let dst = self.val(rid)?.slot;
                self.emit(Op::FloatUn {
                    op: FloatUnOp::Neg,
                    bits,
                    n,
                    dst,
                    a,
                });
                self.count(name, lane_type(s, true)?, n as u64, true);
            }
            S::VectorTimesScalar => {
                let (rid, ty) = result(inst)?;
                let (s, n) = self.types.lanes(ty)?;
                let bits = self.float_bits(s)?;
                let a = self.operand(id(inst, 0)?, n)?;
                let b = self.operand(id(inst, 1)?, n)?;
                let dst = self.val(rid)?.slot;
                self.emit(Op::Float {
                    op: FloatOp::Mul,
                    bits,
                    n,
                    dst,
                    a,
                    b,
                });
                let lt = lane_type(s, true)?;
                self.hist(name, lt, n as u64);
                self.work("OpFMul", lt, n as u64, true);
            }
            S::Dot => {
                let (rid, ty) = result(inst)?;
                let (s, _) = self.types.lanes(ty)?;
                let bits = self.float_bits(s)?;
                let a = self.val(id(inst, 0)?)?;
                let (_, n) = self.types.lanes(a.ty)?;
                let b = self.operand(id(inst, 1)?, n)?;
                let dst = self.val(rid)?.slot;
                self.emit(Op::Geometric {
                    op: Geometric::Dot,
                    bits,
                    n,
                    dst,
                    a: a.slot,
                    b,
                });
                let lt = lane_type(s, true)?;
                self.hist(name, lt, n as u64);
                self.work("OpFMul", lt, n as u64, true);
                self.work("OpFAdd", lt, n as u64 - 1, true);
            }
            S::IsNan | S::IsInf | S::IsFinite | S::IsNormal | S::SignBitSet => {
                let (rid, _) = result(inst)?;
                let a = self.val(id(inst, 0)?)?;
                let (s, n) = self.types.lanes(a.ty)?;
                let bits = self.float_bits(s)?;
                let op = match opcode {
                    S::IsNan => FTestOp::IsNan,
                    S::IsInf => FTestOp::IsInf,
                    S::IsFinite => FTestOp::IsFinite,
                    S::IsNormal => FTestOp::IsNormal,
                    _ => FTestOp::SignBitSet,
                };
                let dst = self.val(rid)?.slot;
                self.emit(Op::FTest {
                    op,
                    bits,
                    n,
                    dst,
                    a: a.slot,
                });
                self.count(name, lane_type(s, true)?, n as u64, true);
            }
            S::LogicalAnd | S::LogicalOr | S::LogicalEqual | S::LogicalNotEqual => {
                let (rid, ty) = result(inst)?;
                let (_, n) = self.types.lanes(ty)?;
                let op = match opcode {
                    S::LogicalAnd => LogicOp::And,
                    S::LogicalOr => LogicOp::Or,
                    S::LogicalEqual => LogicOp::Eq,
                    _ => LogicOp::Ne,
                };
                let (a, b) = (
                    self.operand(id(inst, 0)?, n)?,
                    self.operand(id(inst, 1)?, n)?,
                );
                let dst = self.val(rid)?.slot;
                self.emit(Op::Logic { op, n, dst, a, b });
                self.count(name, LaneType::Bool, n as u64, true);
            }
            S::LogicalNot => {
                let (rid, ty) = result(inst)?;
                let (_, n) = self.types.lanes(ty)?;
                let a = self.operand(id(inst, 0)?, n)?;
                let dst = self.val(rid)?.slot;
                self.emit(Op::LNot { n, dst, a });
                self.count(name, LaneType::Bool, n as u64, true);
            }
            S::Any | S::All => {
                let (rid, _) = result(inst)?;
                let a = self.val(id(inst, 0)?)?;
                let (_, n) = self.types.lanes(a.ty)?;
                let dst = self.val(rid)?.slot;
                self.emit(Op::AnyAll {
                    all: opcode == S::All,
                    n,
                    dst,
                    a: a.slot,
                });
                self.count(name, LaneType::Bool, n as u64, true);
            }
            S::Select => {
                let (rid, ty) = result(inst)?;
                let n = self.types.slots(ty)?;
                let cond = self.val(id(inst, 0)?)?;
                let (_, cn) = self.types.lanes(cond.ty)?;
                let (a, b) = (self.val(id(inst, 1)?)?.slot, self.val(id(inst, 2)?)?.slot);
                let dst = self.val(rid)?.slot;
                let n8 = u8::try_from(n).map_err(|_| {
                    TranslateError::unsupported(
                        "OpSelect of a large aggregate",
                        "select on scalars or vectors",
                    )
                })?;
                self.emit(Op::Select {
                    n: n8,
                    vector_cond: cn > 1,
                    dst,
                    cond: cond.slot,
                    a,
                    b,
                });
                let lt = self.lane_type_of(ty, false);
                self.count(name, lt, n as u64, false);
            }
            S::UConvert | S::SConvert | S::SatConvertSToU | S::SatConvertUToS => {
                let (rid, ty) = result(inst)?;
                let (ds, n) = self.types.lanes(ty)?;
                let src = self.val(id(inst, 0)?)?;
                let (ss, _) = self.types.lanes(src.ty)?;
                let saturate = self
                    .decorated(rid, Decoration::SaturatedConversion)
                    .is_some()
                    || matches!(opcode, S::SatConvertSToU | S::SatConvertUToS);
                let (signed_src, signed_dst) = match opcode {
                    S::UConvert => (false, false),
                    S::SConvert => (true, true),
                    S::SatConvertSToU => (true, false),
                    _ => (false, true),
                };
                let kind = ConvKind::IntToInt {
                    signed_src,
                    signed_dst,
                    saturate,
                };
                self.convert(rid, kind, ss, ds, n, src.slot, name, signed_dst)?;
            }
            S::ConvertFToU | S::ConvertFToS => {
                let (rid, ty) = result(inst)?;
                let (ds, n) = self.types.lanes(ty)?;
                let src = self.val(id(inst, 0)?)?;
                let (ss, _) = self.types.lanes(src.ty)?;
                let saturate = self
                    .decorated(rid, Decoration::SaturatedConversion)
                    .is_some();
                let rounding = self.rounding(rid, Rounding::TowardZero);
                let signed = opcode == S::ConvertFToS;
                self.convert(
                    rid,
                    ConvKind::FloatToInt {
                        signed,
                        saturate,
                        rounding,
                    },
                    ss,
                    ds,
                    n,
                    src.slot,
                    name,
                    signed,
                )?;
            }
            S::ConvertSToF | S::ConvertUToF => {
                let (rid, ty) = result(inst)?;
                let (ds, n) = self.types.lanes(ty)?;
                let src = self.val(id(inst, 0)?)?;
                let (ss, _) = self.types.lanes(src.ty)?;
                let signed = opcode == S::ConvertSToF;
                self.convert(
                    rid,
                    ConvKind::IntToFloat {
                        signed,
                        rounding: self.rounding(rid, Rounding::NearestEven),
                    },
                    ss,
                    ds,
                    n,
                    src.slot,
                    name,
                    true,
                )?;
            }
            S::FConvert => {
                let (rid, ty) = result(inst)?;
                let (ds, n) = self.types.lanes(ty)?;
                let src = self.val(id(inst, 0)?)?;
                let (ss, _) = self.types.lanes(src.ty)?;
                let rounding = self.rounding(rid, Rounding::NearestEven);
                self.convert(
                    rid,
                    ConvKind::FloatToFloat { rounding },
                    ss,
                    ds,
                    n,
                    src.slot,
                    name,
                    true,
                )?;
            }
            S::ConvertPtrToU | S::ConvertUToPtr => {
                let (rid, ty) = result(inst)?;
                let src = self.val(id(inst, 0)?)?;
                let (ss, _) = self.types.lanes(src.ty)?;
                let (ds, _) = self.types.lanes(ty)?;
                let kind = ConvKind::IntToInt {
                    signed_src: false,
                    signed_dst: false,
                    saturate: false,
                };
                self.convert(rid, kind, ss, ds, 1, src.slot, name, false)?;
            }
            S::Bitcast
            | S::PtrCastToGeneric
            | S::GenericCastToPtr
            | S::GenericCastToPtrExplicit
            | S::CopyObject => {
                self.bitcast(inst)?;
            }
            S::CompositeExtract => {
                let (rid, ty) = result(inst)?;
                let src = self.val(id(inst, 0)?)?;
                let mut slot = src.slot;
                let mut cur = src.ty;
                for k in 1..inst.operands.len() {
                    let index = literal(inst, k)?;
                    let (off, next) = self.member(cur, index)?;
                    slot += off;
                    cur = next;
                }
                let n = self.types.slots(ty)?;
                let dst = self.val(rid)?.slot;
                self.emit(Op::Mov { dst, src: slot, n });
            }
            S::CompositeInsert => {
                let (rid, ty) = result(inst)?;
                let part = self.val(id(inst, 0)?)?;
                let whole = self.val(id(inst, 1)?)?;
                let mut off = 0;
                let mut cur = ty;
                for k in 2..inst.operands.len() {
                    let (o, next) = self.member(cur, literal(inst, k)?)?;
                    off += o;
                    cur = next;
                }
                let dst = self.val(rid)?.slot;
                let n = self.types.slots(ty)?;
                self.emit(Op::Mov {
                    dst,
                    src: whole.slot,
                    n,
                });
                let pn = self.types.slots(part.ty)?;
                self.emit(Op::Mov {
                    dst: dst + off,
                    src: part.slot,
                    n: pn,
                });
            }
            S::CompositeConstruct => {
                let (rid, _) = result(inst)?;
                let dst = self.val(rid)?.slot;
                let start = self.moves.len();
                let mut off = 0;
                for k in 0..inst.operands.len() {
                    let part = self.val(id(inst, k)?)?;
                    let n = self.types.slots(part.ty)?;
                    self.moves.push(Move {
                        dst: dst + off,
                        src: part.slot,
                        n,
                    });
                    off += n;
                }
                self.emit(Op::Moves {
                    start: start as u32,
                    len: (self.moves.len() - start) as u32,
                });
            }
            S::VectorShuffle => {
                let (rid, _) = result(inst)?;
                let (a, b) = (self.val(id(inst, 0)?)?, self.val(id(inst, 1)?)?);
                let (_, an) = self.types.lanes(a.ty)?;
                let (_, bn) = self.types.lanes(b.ty)?;
                let dst = self.val(rid)?.slot;
                let start = self.moves.len();
                for k in 2..inst.operands.len() {
                    let lane = literal(inst, k)?;
                    let src = if lane == 0xFFFF_FFFF {
                        self.zero()?
                    } else if lane < an as u64 {
                        a.slot + lane as u32
                    } else if lane < (an + bn) as u64 {
                        b.slot + (lane - an as u64) as u32
                    } else {
                        return Err(TranslateError::malformed(format!(
                            "shuffle lane {lane} out of range"
                        )));
                    };
                    self.moves.push(Move {
                        dst: dst + (k - 2) as u32,
                        src,
                        n: 1,
                    });
                }
                self.emit(Op::Moves {
                    start: start as u32,
                    len: (self.moves.len() - start) as u32,
                });
            }
            S::VectorExtractDynamic | S::VectorInsertDynamic => {
                let (rid, _) = result(inst)?;
                let base = self.val(id(inst, 0)?)?;
                let (_, n) = self.types.lanes(base.ty)?;
                let dst = self.val(rid)?.slot;
                let index_at = if opcode == S::VectorExtractDynamic {
                    1
                } else {
                    2
                };
                let index = self.val(id(inst, index_at)?)?;
                let (is, _) = self.types.lanes(index.ty)?;
                let index_bits = self.int_bits(is)?;
                if opcode == S::VectorExtractDynamic {
                    self.emit(Op::ExtractDyn {
                        dst,
                        base: base.slot,
                        index: index.slot,
                        index_bits,
                        n,
                    });
                } else {
                    let value = self.val(id(inst, 1)?)?.slot;
                    self.emit(Op::InsertDyn {
                        dst,
                        base: base.slot,
                        value,
                        index: index.slot,
                        index_bits,
                        n,
                    });
                }
            }
            S::AccessChain
            | S::InBoundsAccessChain
            | S::PtrAccessChain
            | S::InBoundsPtrAccessChain => {
                self.access_chain(inst)?;
            }
            S::PtrDiff => {
                let (rid, _) = result(inst)?;
                let a = self.val(id(inst, 0)?)?;
                let (_, pointee) = self.types.pointee(a.ty)?;
                let elem = self.types.layout(pointee)?.0.max(1) as u32;
                let b = self.val(id(inst, 1)?)?.slot;
                let dst = self.val(rid)?.slot;
                self.emit(Op::PtrDiff {
                    dst,
                    a: a.slot,
                    b,
                    elem,
                });
                self.count(name, LaneType::Pointer, 1, true);
            }
            S::Load => {
                let (rid, ty) = result(inst)?;
                let pid = id(inst, 0)?;
                if let Some(which) = self.builtins.get(&pid).copied() {
                    let (s, lanes) = self.types.lanes(ty)?;
                    let bits = self.int_bits(s)?;
                    let dst = self.val(rid)?.slot;
                    self.emit(Op::Builtin {
                        which,
                        dst,
                        lanes,
                        bits,
                    });
                    return Ok(());
                }
                let ptr = self.val(pid)?;
                let (space, _) = self.types.pointee(ptr.ty)?;
                let dst = self.val(rid)?.slot;
                self.load_value(dst, ptr.slot, ty, space, aligned(inst, 1))?;
            }
            S::Store => {
                let ptr = self.val(id(inst, 0)?)?;
                let value = self.val(id(inst, 1)?)?;
                let (space, _) = self.types.pointee(ptr.ty)?;
                self.store_value(ptr.slot, value.slot, value.ty, space, aligned(inst, 2))?;
            }
            S::CopyMemory | S::CopyMemorySized => {
                let dst = self.val(id(inst, 0)?)?;
                let src = self.val(id(inst, 1)?)?;
                let (dspace, dpointee) = self.types.pointee(dst.ty)?;
                let (sspace, _) = self.types.pointee(src.ty)?;
                let (bytes, bytes_reg) = if opcode == S::CopyMemory {
                    (self.types.layout(dpointee)?.0, None)
                } else {
                    let size = id(inst, 2)?;
                    match self.const_ints.get(&size) {
                        Some(v) => (*v, None),
                        None => (0, Some(self.val(size)?.slot)),
                    }
                };
                self.emit(Op::Copy {
                    dst: dst.slot,
                    src: src.slot,
                    bytes,
                    bytes_reg,
                });
                let lt = LaneType::Scalar(ScalarType::UChar);
                if bytes_reg.is_none() {
                    self.traffic(traffic_space(sspace)?, false, bytes, lt, bytes);
                    self.traffic(traffic_space(dspace)?, true, bytes, lt, bytes);
                } else {
                    // Counted as it runs: the size is known only then.
                    traffic_space(sspace)?;
                    traffic_space(dspace)?;
                }
            }
            S::Branch => {
                let t = self.target(id(inst, 0)?);
                self.emit(Op::Jump { target: t });
                self.hist(name, self.result_lane_type(inst), 1);
            }
            S::BranchConditional => {
                let cond = self.val(id(inst, 0)?)?.slot;
                let then = self.target(id(inst, 1)?);
                let other = self.target(id(inst, 2)?);
                self.emit(Op::Branch { cond, then, other });
                // Typed by its condition (see `result_lane_type`).
                self.hist(name, LaneType::Bool, 1);
            }
            S::Switch => {
                let sel = self.val(id(inst, 0)?)?;
                let (s, _) = self.types.lanes(sel.ty)?;
                let bits = self.int_bits(s)?;
                let default = self.target(id(inst, 1)?);
                let cases_start = self.cases.len();
                for k in (2..inst.operands.len()).step_by(2) {
                    let value = literal(inst, k)? & crate::opencl_std::mask(bits);
                    let t = self.target(id(inst, k + 1)?);
                    self.cases.push((value, t));
                }
                let cases_len = (self.cases.len() - cases_start) as u32;
                self.emit(Op::Switch {
                    sel: sel.slot,
                    bits,
                    cases_start: cases_start as u32,
                    cases_len,
                    default,
                });
                self.hist(name, lane_type(s, false)?, 1);
            }
            S::Return => {
                self.emit(Op::Ret { src: 0, n: 0 });
                self.hist(name, self.result_lane_type(inst), 1);
            }
            S::ReturnValue => {
                let v = self.val(id(inst, 0)?)?;
                let n = self.types.slots(v.ty)?;
                self.emit(Op::Ret { src: v.slot, n });
                self.hist("OpReturn", self.result_lane_type(inst), 1);
            }
            S::Unreachable | S::Kill => self.emit(Op::Trap),
            S::FunctionCall => {
                let callee = id(inst, 0)?;
                let func = self.functions[&callee];
                let one_block = func.blocks.len() == 1
                    && func.blocks[0]
                        .instructions
                        .iter()
                        .all(|i| i.class.opcode != S::Phi)
                    && matches!(
                        func.blocks[0].instructions.last().map(|i| i.class.opcode),
                        Some(S::Return | S::ReturnValue)
                    );
                if one_block {
                    return self.inline_call(inst, callee, func);
                }
                let start = self.moves.len();
                for (k, p) in func.parameters.iter().enumerate() {
                    let (pid, pty) = result(p)?;
                    let dst = self.val(pid)?.slot;
                    let src = self.val(id(inst, k + 1)?)?.slot;
                    let n = self.types.slots(pty)?;
                    self.moves.push(Move { dst, src, n });
                }
                let (ret, ret_n) = match (inst.result_id, inst.result_type) {
                    (Some(r), Some(t)) => (self.val(r)?.slot, self.types.slots(t)?),
                    _ => (0, 0),
                };
                self.call_fixups.push((self.code.len(), callee));
                self.emit(Op::Call {
                    target: 0,
                    moves_start: start as u32,
                    moves_len: (self.moves.len() - start) as u32,
                    ret,
                    ret_n,
                });
                self.hist(name, self.result_lane_type(inst), 1);
            }
            S::ControlBarrier => {
                self.uses_barrier = true;
                self.emit(Op::Barrier);
                self.hist(name, self.result_lane_type(inst), 1);
            }
            S::GroupAsyncCopy => self.async_copy(inst)?,
            S::GroupWaitEvents => {
                self.uses_barrier = true;
                self.emit(Op::Barrier);
            }
            S::ExtInst => self.ext_inst(inst)?,
            _ => {
                return Err(TranslateError::unsupported(
                    format!("instruction {name}"),
                    "this instruction is outside what clflow interprets; please report the kernel",
                ))
            }
        }
        Ok(())
    }

    /// A call to a one-block function is emitted in place: the callee's
    /// registers are its own (no recursion), so its body runs unchanged
    /// and its counts join the calling block, which runs it once per call.
    fn inline_call(&mut self, inst: &Instruction, callee: Word, func: &'m Function) -> R<()> {
        let callee_name = self.name(callee);
        let call_site = self.current_site;
        // The callee reads its parameters through `val`: bind them to the
        // caller's values instead of copying.
        let saved = self.overrides.clone();
        for (k, p) in func.parameters.iter().enumerate() {
            let (pid, _) = result(p)?;
            let arg = self.val(id(inst, k + 1)?)?;
            self.overrides.insert(pid, arg);
        }
        // llvm-spirv emulates LLVM's funnel shifts (what clang makes of
        // `(x << k) | (x >> (32 - k))`) with a function of five operations;
        // they count as the rotate the source wrote: shl + lshr + or.
        let funnel = match callee_name.as_str() {
            n if n.starts_with("spirv.llvm_fshl") => Some("llvm.fshl"),
            n if n.starts_with("spirv.llvm_fshr") => Some("llvm.fshr"),
            _ => None,
        };
        let was_silent = self.silent;
        match (funnel, inst.result_type) {
            (Some(name), Some(ty)) => {
                let (s, n) = self.types.lanes(ty)?;
                let lt = lane_type(s, false)?;
                self.hist(name, lt, n as u64);
                for base in ["OpShiftLeftLogical", "OpShiftRightLogical", "OpBitwiseOr"] {
                    self.work(base, lt, n as u64, true);
                }
                self.silent = true;
            }
            _ => self.hist("OpFunctionCall", self.result_lane_type(inst), 1),
        }
        self.inline_depth += 1;
        if self.inline_depth > 16 {
            return Err(TranslateError::unsupported(
                "calls nested more than 16 deep",
                "flatten the call chain",
            ));
        }
        let body = &func.blocks[0].instructions;
        let body_start = self.code.len();
        for callee_inst in body {
            self.sites.push(format!(
                "{}{} in `{callee_name}`",
                spirv_name(callee_inst.class.opname),
                callee_inst
                    .result_id
                    .map(|r| format!(" %{r}"))
                    .unwrap_or_default()
            ));
            self.current_site = (self.sites.len() - 1) as u32;
            match callee_inst.class.opcode {
                S::Return => self.hist("OpReturn", self.result_lane_type(callee_inst), 1),
                S::ReturnValue => {
                    let v = self.val(id(callee_inst, 0)?)?;
                    let n = self.types.slots(v.ty)?;
                    if let Some(r) = inst.result_id {
                        let dst = self.val(r)?.slot;
                        // The body's last op computed the value: let it write
                        // the call's result directly (nothing in the body can
                        // read the value after its only definition).
                        let last = self.code.len().checked_sub(1).filter(|l| *l >= body_start);
                        let retargeted = last.is_some_and(|l| {
                            crate::bytecode::retarget(&mut self.code[l], v.slot, dst)
                        });
                        if !retargeted {
                            self.emit(Op::Mov {
                                dst,
                                src: v.slot,
                                n,
                            });
                        }
                    }
                    self.hist("OpReturn", self.result_lane_type(callee_inst), 1);
                }
                _ => self.instruction(callee_inst)?,
            }
        }
        if funnel.is_some() {
            self.fuse_rotate(body_start);
        }
        self.inline_depth -= 1;
        self.silent = was_silent;
        self.current_site = call_site;
        self.overrides = saved;
        Ok(())
    }

    /// A funnel shift of a value with itself by a constant, as emitted from
    /// `body_start` (`shl t1, x, k`; `lshr t2, x, 32-k`; `or r, t1, t2`),
    /// becomes one rotate; the temporaries are the callee's own and are
    /// read nowhere else.
    fn fuse_rotate(&mut self, body_start: usize) {
        let [.., Op::Shl32 {
            dst: t1,
            a: x,
            b: k,
        }, Op::LShr32 {
            dst: t2,
            a: y,
            b: j,
        }, Op::Or { dst, a, b }] = self.code[body_start..]
        else {
            return;
        };
        let amounts = (self.const_slots.get(&k), self.const_slots.get(&j));
        let complementary =
            matches!(amounts, (Some(k), Some(j)) if (k + j) % 32 == 0 && *k < 32 && *j <= 32);
        if x == y && a == t1 && b == t2 && complementary {
            let end = self.code.len();
            self.code.truncate(end - 3);
            self.site_of.truncate(end - 3);
            self.emit(Op::Rotl32 { dst, a: x, b: k });
        }
    }

    /// The value of a scalar integer op on constants, inside inlined bodies
    /// (elsewhere the compiler has folded what can be folded).
    fn fold(&self, op: IntOp, bits: u8, n: u8, a: Reg, b: Reg) -> Option<u64> {
        if self.inline_depth == 0 || n != 1 {
            return None;
        }
        let (x, y) = (self.const_slots.get(&a)?, self.const_slots.get(&b)?);
        crate::opencl_std::int_bin(op, bits, *x, *y).ok()
    }

    fn rounding(&self, rid: Word, default: Rounding) -> Rounding {
        match self.decorated(rid, Decoration::FPRoundingMode) {
            Some([Operand::FPRoundingMode(m), ..]) => rounding_of(*m),
            _ => default,
        }
    }

    /// Slot offset and type of member `index` of a composite type.
    fn member(&self, ty: Word, index: u64) -> R<(u32, Word)> {
        match self.types.get(ty)? {
            Ty::Vector(..) => {
                let scalar = self.vector_scalar_type(ty)?;
                let (_, n) = self.types.lanes(ty)?;
                if index >= n as u64 {
                    return Err(TranslateError::malformed(format!(
                        "lane {index} of a {n}-lane vector"
                    )));
                }
                Ok((index as u32, scalar))
            }
            _ => self.types.member_slot(ty, index),
        }
    }

    /// The type id of a vector's lanes (found among the module's types).
    fn vector_scalar_type(&self, ty: Word) -> R<Word> {
        let vec_inst = self
            .module
            .types_global_values
            .iter()
            .find(|i| i.result_id == Some(ty))
            .ok_or_else(|| TranslateError::malformed(format!("type %{ty} not found")))?;
        id(vec_inst, 0)
    }

    #[allow(clippy::too_many_arguments)]
    fn convert(
        &mut self,
        rid: Word,
        kind: ConvKind,
        from: Scalar,
        to: Scalar,
        n: u8,
        src: Reg,
        name: &'static str,
        signed: bool,
    ) -> R<()> {
        let dst = self.val(rid)?.slot;
        let (from_bits, to_bits) = (from.bits(), to.bits());
        self.emit(Op::Convert {
            kind,
            from: from_bits,
            to: to_bits,
            n,
            dst,
            src,
        });
        let lt = lane_type(to, signed)?;
        self.count(name, lt, n as u64, false);
        Ok(())
    }

    fn bitcast(&mut self, inst: &Instruction) -> R<()> {
        let (rid, ty) = result(inst)?;
        let src = self.val(id(inst, 0)?)?;
        let dst = self.val(rid)?.slot;
        let n = self.types.slots(ty)?;
        let same_shape = match (self.types.lanes(ty), self.types.lanes(src.ty)) {
            (Ok((a, an)), Ok((b, bn))) => {
                if a.bits() as u32 * an as u32 != b.bits() as u32 * bn as u32 {
                    return Err(TranslateError::malformed(
                        "OpBitcast between types of different sizes",
                    ));
                }
                if an == bn {
                    true
                } else {
                    self.emit(Op::Bitcast {
                        from: b.bits(),
                        from_n: bn,
                        to: a.bits(),
                        to_n: an,
                        dst,
                        src: src.slot,
                    });
                    false
                }
            }
            _ => true,
        };
        if same_shape {
            self.emit(Op::Mov {
                dst,
                src: src.slot,
                n,
            });
        }
        Ok(())
    }

    fn float_bin(
        &mut self,
        inst: &Instruction,
        op: FloatOp,
        hist_name: &'static str,
        work_name: &'static str,
    ) -> R<()> {
        let (rid, ty) = result(inst)?;
        let (s, n) = self.types.lanes(ty)?;
        let bits = self.float_bits(s)?;
        let (a, b) = (
            self.operand(id(inst, 0)?, n)?,
            self.operand(id(inst, 1)?, n)?,
        );
        let dst = self.val(rid)?.slot;
        self.emit(Op::Float {
            op,
            bits,
            n,
            dst,
            a,
            b,
        });
        let lt = lane_type(s, true)?;
        self.hist(hist_name, lt, n as u64);
        self.work(work_name, lt, n as u64, true);
        Ok(())
    }

    fn access_chain(&mut self, inst: &Instruction) -> R<()> {
        let (rid, _) = result(inst)?;
        let base = self.val(id(inst, 0)?)?;
        let (_, mut cur) = self.types.pointee(base.ty)?;
        let mut disp: i64 = 0;
        let terms_start = self.terms.len();
        let element_first = matches!(
            inst.class.opcode,
            S::PtrAccessChain | S::InBoundsPtrAccessChain
        );
        for k in 1..inst.operands.len() {
            let index_id = id(inst, k)?;
            let index = self.val(index_id)?;
            let (is, _) = self.types.lanes(index.ty)?;
            let bits = self.int_bits(is)?;
            let constant = self
                .const_ints
                .get(&index_id)
                .map(|v| crate::opencl_std::sext(*v, bits));
            let stride = if k == 1 && element_first {
                self.types.layout(cur)?.0 as i64
            } else {
                match self.types.get(cur)?.clone() {
                    Ty::Struct { .. } => {
                        let c = constant.ok_or_else(|| {
                            TranslateError::malformed("struct index is not a constant")
                        })?;
                        disp += self.types.member_offset(cur, c as u64)? as i64;
                        cur = self.types.member_slot(cur, c as u64)?.1;
                        continue;
                    }
                    Ty::Array(elem, _) => {
                        cur = elem;
                        self.types.layout(elem)?.0 as i64
                    }
                    Ty::Vector(s, _) => {
                        cur = self.vector_scalar_type(cur)?;
                        s.size() as i64
                    }
                    other => {
                        return Err(TranslateError::malformed(format!(
                            "indexing into {other:?}"
                        )))
                    }
                }
            };
            match constant {
                Some(c) => disp = disp.wrapping_add(c.wrapping_mul(stride)),
                None => self.terms.push(PtrTerm {
                    reg: index.slot,
                    bits,
                    stride,
                }),
            }
        }
        let dst = self.val(rid)?.slot;
        let terms_len = u16::try_from(self.terms.len() - terms_start)
            .map_err(|_| TranslateError::malformed("an access chain with too many indices"))?;
        let single = (terms_len == 1).then(|| self.terms[terms_start]);
        match single {
            // The common `base[i]`: one index, no table lookup.
            Some(t) if i32::try_from(t.stride).is_ok() && i32::try_from(disp).is_ok() => {
                self.terms.truncate(terms_start);
                self.emit(Op::Index {
                    dst,
                    base: base.slot,
                    index: t.reg,
                    bits: t.bits,
                    stride: t.stride as i32,
                    disp: disp as i32,
                });
            }
            _ if terms_len == 0 => self.emit(Op::Offset {
                dst,
                base: base.slot,
                disp,
            }),
            _ => self.emit(Op::Ptr {
                dst,
                base: base.slot,
                disp,
                terms_start: terms_start as u32,
                terms_len,
            }),
        }
        self.count(spirv_name(inst.class.opname), LaneType::Pointer, 1, true);
        Ok(())
    }

    /// Leaves of `ty` as a uniform run (`size`, `n`) if it is a scalar or vector.
    fn uniform(&self, ty: Word) -> R<Option<(u8, u8, LaneType)>> {
        Ok(match self.types.get(ty)? {
            Ty::Scalar(s) => Some((s.size() as u8, 1, lane_type(*s, false)?)),
            Ty::Pointer { .. } => Some((8, 1, LaneType::Pointer)),
            Ty::Vector(s, n) => Some((s.size() as u8, *n, lane_type(*s, false)?)),
            _ => None,
        })
    }

    fn load_value(
        &mut self,
        dst: Reg,
        ptr: Reg,
        ty: Word,
        space: AddressSpace,
        align: Option<u64>,
    ) -> R<()> {
        let space = traffic_space(space)?;
        let (size, natural) = self.types.layout(ty)?;
        let align = power_of_two_align(align.unwrap_or(natural));
        match self.uniform(ty)? {
            Some((size, n, lt)) => {
                self.emit(Op::Load {
                    dst,
                    ptr,
                    size,
                    n,
                    align,
                });
                self.traffic(space, false, size as u64 * n as u64, lt, n as u64);
            }
            None => {
                let leaves = self.types.leaves(ty)?;
                let bytes: u64 = leaves.iter().map(|l| l.size as u64).sum();
                self.layouts.push(leaves);
                self.emit(Op::LoadAgg {
                    dst,
                    ptr,
                    layout: (self.layouts.len() - 1) as u32,
                });
                let _ = size;
                self.traffic(
                    space,
                    false,
                    bytes,
                    LaneType::Scalar(ScalarType::UChar),
                    bytes,
                );
            }
        }
        Ok(())
    }

    fn store_value(
        &mut self,
        ptr: Reg,
        src: Reg,
        ty: Word,
        space: AddressSpace,
        align: Option<u64>,
    ) -> R<()> {
        let space = traffic_space(space)?;
        let (_, natural) = self.types.layout(ty)?;
        let align = power_of_two_align(align.unwrap_or(natural));
        match self.uniform(ty)? {
            Some((size, n, lt)) => {
                self.emit(Op::Store {
                    src,
                    ptr,
                    size,
                    n,
                    align,
                });
                self.traffic(space, true, size as u64 * n as u64, lt, n as u64);
            }
            None => {
                let leaves = self.types.leaves(ty)?;
                let bytes: u64 = leaves.iter().map(|l| l.size as u64).sum();
                self.layouts.push(leaves);
                self.emit(Op::StoreAgg {
                    src,
                    ptr,
                    layout: (self.layouts.len() - 1) as u32,
                });
                self.traffic(
                    space,
                    true,
                    bytes,
                    LaneType::Scalar(ScalarType::UChar),
                    bytes,
                );
            }
        }
        Ok(())
    }

    fn atomic(&mut self, inst: &Instruction, op: AtomicOp) -> R<()> {
        let ptr = self.val(id(inst, 0)?)?;
        let (space, pointee) = self.types.pointee(ptr.ty)?;
        let (s, _) = self.types.lanes(pointee)?;
        let bits = s.bits();
        if bits != 32 && bits != 64 {
            return Err(TranslateError::unsupported(
                format!("{bits}-bit atomics"),
                "use 32 or 64-bit atomics",
            ));
        }
        let space = traffic_space(space)?;
        let (a, b) = match op {
            AtomicOp::Load | AtomicOp::Inc | AtomicOp::Dec => (0, 0),
            AtomicOp::Store => (self.val(id(inst, 3)?)?.slot, 0),
            AtomicOp::CompareExchange => {
                (self.val(id(inst, 4)?)?.slot, self.val(id(inst, 5)?)?.slot)
            }
            _ => (self.val(id(inst, 3)?)?.slot, 0),
        };
        let dst = match inst.result_id {
            Some(r) => self.val(r)?.slot,
            None => self.zero()?,
        };
        // A store needs no result; give it a scratch slot so `dst` is never a constant.
        let dst = if inst.result_id.is_none() {
            self.alloc(1)?
        } else {
            dst
        };
        self.emit(Op::Atomic {
            op,
            bits,
            dst,
            ptr: ptr.slot,
            a,
            b,
        });
        let lt = lane_type(s, false)?;
        let bytes = bits as u64 / 8;
        if op != AtomicOp::Store {
            self.blocks[self.block].traffic.add(space, false, bytes);
        }
        if op != AtomicOp::Load {
            self.blocks[self.block].traffic.add(space, true, bytes);
        }
        self.count(spirv_name(inst.class.opname), lt, 1, false);
        Ok(())
    }

    fn async_copy(&mut self, inst: &Instruction) -> R<()> {
        // OpGroupAsyncCopy: scope, dst, src, num elements, stride, event.
        let (rid, _) = result(inst)?;
        let dst = self.val(id(inst, 1)?)?;
        let src = self.val(id(inst, 2)?)?;
        let (dspace, pointee) = self.types.pointee(dst.ty)?;
        let (sspace, _) = self.types.pointee(src.ty)?;
        traffic_space(dspace)?;
        traffic_space(sspace)?;
        let elem = u32::try_from(self.types.layout(pointee)?.0)
            .ok()
            .filter(|e| *e > 0)
            .ok_or_else(|| TranslateError::malformed("an async copy of elements without a size"))?;
        let elems = self.val(id(inst, 3)?)?.slot;
        let stride = self.val(id(inst, 4)?)?.slot;
        let event = self.val(id(inst, 5)?)?.slot;
        let out = self.val(rid)?.slot;
        // The copy is the group's: all work-items reach it, one performs it
        // once the others have arrived.
        self.uses_barrier = true;
        self.emit(Op::Barrier);
        self.emit(Op::GroupCopy {
            dst: dst.slot,
            src: src.slot,
            elems,
            stride,
            elem,
            event,
            out,
        });
        self.hist(
            spirv_name(inst.class.opname),
            self.result_lane_type(inst),
            1,
        );
        Ok(())
    }
}

// ---- OpenCL.std -----------------------------------------------------------------

/// How an extended instruction is executed and counted.
enum Ext {
    FUn(FloatUnOp),
    FBin(FloatOp),
    FTer(FloatTerOp),
    IUn(IntUnOp),
    IBin(IntOp),
    ITer(IntTerOp),
    Upsample,
    Bitselect,
    SelectMsb,
    Geometric(Geometric),
    /// A float builtin that also writes a second result through its last
    /// argument, a pointer: frexp, modf, fract, sincos, lgamma_r (unary),
    /// remquo (binary).
    SplitUn {
        value: FloatUnOp,
        out: FloatUnOp,
    },
    SplitBin {
        value: FloatOp,
        out: FloatOp,
    },
    /// A float argument, an int result: ilogb.
    FUnToInt(FloatUnOp),
    /// shuffle (one source vector) and shuffle2 (two).
    Shuffle {
        sources: u8,
    },
    VLoad,
    VStore,
    VLoadHalf {
        n_arg: bool,
        aligned: bool,
    },
    VStoreHalf {
        n_arg: bool,
        aligned: bool,
        rounding_arg: bool,
    },
    Nothing,
}

fn ext_of(op: X) -> Option<Ext> {
    use Ext::*;
    Some(match op {
        X::acos => FUn(FloatUnOp::Acos),
        X::acosh => FUn(FloatUnOp::Acosh),
        X::acospi => FUn(FloatUnOp::Acospi),
        X::asin => FUn(FloatUnOp::Asin),
        X::asinh => FUn(FloatUnOp::Asinh),
        X::asinpi => FUn(FloatUnOp::Asinpi),
        X::atan => FUn(FloatUnOp::Atan),
        X::atanh => FUn(FloatUnOp::Atanh),
        X::atanpi => FUn(FloatUnOp::Atanpi),
        X::cbrt => FUn(FloatUnOp::Cbrt),
        X::ceil => FUn(FloatUnOp::Ceil),
        X::cos | X::native_cos | X::half_cos => FUn(FloatUnOp::Cos),
        X::cosh => FUn(FloatUnOp::Cosh),
        X::cospi => FUn(FloatUnOp::Cospi),
        X::exp | X::native_exp | X::half_exp => FUn(FloatUnOp::Exp),
        X::exp2 | X::native_exp2 | X::half_exp2 => FUn(FloatUnOp::Exp2),
        X::exp10 | X::native_exp10 | X::half_exp10 => FUn(FloatUnOp::Exp10),
        X::expm1 => FUn(FloatUnOp::Expm1),
        X::fabs => FUn(FloatUnOp::Fabs),
        X::floor => FUn(FloatUnOp::Floor),
        X::log | X::native_log | X::half_log => FUn(FloatUnOp::Log),
        X::log2 | X::native_log2 | X::half_log2 => FUn(FloatUnOp::Log2),
        X::log10 | X::native_log10 | X::half_log10 => FUn(FloatUnOp::Log10),
        X::log1p => FUn(FloatUnOp::Log1p),
        X::logb => FUn(FloatUnOp::Logb),
        X::rint => FUn(FloatUnOp::Rint),
        X::round => FUn(FloatUnOp::Round),
        X::rsqrt | X::native_rsqrt | X::half_rsqrt => FUn(FloatUnOp::Rsqrt),
        X::sin | X::native_sin | X::half_sin => FUn(FloatUnOp::Sin),
        X::sinh => FUn(FloatUnOp::Sinh),
        X::sinpi => FUn(FloatUnOp::Sinpi),
        X::sqrt | X::native_sqrt | X::half_sqrt => FUn(FloatUnOp::Sqrt),
        X::tan | X::native_tan | X::half_tan => FUn(FloatUnOp::Tan),
        X::tanh => FUn(FloatUnOp::Tanh),
        X::tanpi => FUn(FloatUnOp::Tanpi),
        X::trunc => FUn(FloatUnOp::Trunc),
        X::native_recip | X::half_recip => FUn(FloatUnOp::Recip),
        X::degrees => FUn(FloatUnOp::Degrees),
        X::radians => FUn(FloatUnOp::Radians),
        X::sign => FUn(FloatUnOp::Sign),
        X::erf => FUn(FloatUnOp::Erf),
        X::erfc => FUn(FloatUnOp::Erfc),
        X::tgamma => FUn(FloatUnOp::Tgamma),
        X::lgamma => FUn(FloatUnOp::Lgamma),
        X::nan => FUn(FloatUnOp::Nan),
        X::ilogb => FUnToInt(FloatUnOp::Ilogb),
        X::frexp => SplitUn {
            value: FloatUnOp::FrexpMantissa,
            out: FloatUnOp::FrexpExponent,
        },
        X::modf => SplitUn {
            value: FloatUnOp::ModfFraction,
            out: FloatUnOp::Trunc,
        },
        X::fract => SplitUn {
            value: FloatUnOp::Fract,
            out: FloatUnOp::Floor,
        },
        X::sincos => SplitUn {
            value: FloatUnOp::Sin,
            out: FloatUnOp::Cos,
        },
        X::lgamma_r => SplitUn {
            value: FloatUnOp::Lgamma,
            out: FloatUnOp::LgammaSign,
        },
        X::remquo => SplitBin {
            value: FloatOp::Remainder,
            out: FloatOp::RemquoQuotient,
        },
        X::shuffle => Shuffle { sources: 1 },
        X::shuffle2 => Shuffle { sources: 2 },
        X::atan2 => FBin(FloatOp::Atan2),
        X::atan2pi => FBin(FloatOp::Atan2Pi),
        X::copysign => FBin(FloatOp::Copysign),
        X::fdim => FBin(FloatOp::Fdim),
        X::fmax | X::fmax_common => FBin(FloatOp::Fmax),
        X::fmin | X::fmin_common => FBin(FloatOp::Fmin),
        X::fmod => FBin(FloatOp::Rem),
        X::hypot => FBin(FloatOp::Hypot),
        X::nextafter => FBin(FloatOp::Nextafter),
        X::pow => FBin(FloatOp::Pow),
        X::powr | X::native_powr | X::half_powr => FBin(FloatOp::Powr),
        X::remainder => FBin(FloatOp::Remainder),
        X::maxmag => FBin(FloatOp::Maxmag),
        X::minmag => FBin(FloatOp::Minmag),
        X::step => FBin(FloatOp::Step),
        X::ldexp => FBin(FloatOp::Ldexp),
        X::pown => FBin(FloatOp::Pown),
        X::rootn => FBin(FloatOp::Rootn),
        X::native_divide | X::half_divide => FBin(FloatOp::Div),
        X::fma | X::mad => FTer(FloatTerOp::Fma),
        X::fclamp => FTer(FloatTerOp::Clamp),
        X::mix => FTer(FloatTerOp::Mix),
        X::smoothstep => FTer(FloatTerOp::Smoothstep),
        X::s_abs => IUn(IntUnOp::SAbs),
        X::u_abs => IUn(IntUnOp::UAbs),
        X::clz => IUn(IntUnOp::Clz),
        X::ctz => IUn(IntUnOp::Ctz),
        X::popcount => IUn(IntUnOp::BitCount),
        X::s_abs_diff => IBin(IntOp::SAbsDiff),
        X::u_abs_diff => IBin(IntOp::UAbsDiff),
        X::s_add_sat => IBin(IntOp::SAddSat),
        X::u_add_sat => IBin(IntOp::UAddSat),
        X::s_sub_sat => IBin(IntOp::SSubSat),
        X::u_sub_sat => IBin(IntOp::USubSat),
        X::s_hadd => IBin(IntOp::SHadd),
        X::u_hadd => IBin(IntOp::UHadd),
        X::s_rhadd => IBin(IntOp::SRhadd),
        X::u_rhadd => IBin(IntOp::URhadd),
        X::s_max => IBin(IntOp::SMax),
        X::u_max => IBin(IntOp::UMax),
        X::s_min => IBin(IntOp::SMin),
        X::u_min => IBin(IntOp::UMin),
        X::s_mul_hi => IBin(IntOp::SMulHi),
        X::u_mul_hi => IBin(IntOp::UMulHi),
        X::rotate => IBin(IntOp::Rotate),
        X::s_mul24 => IBin(IntOp::SMul24),
        X::u_mul24 => IBin(IntOp::UMul24),
        X::s_clamp => ITer(IntTerOp::SClamp),
        X::u_clamp => ITer(IntTerOp::UClamp),
        X::s_mad_hi => ITer(IntTerOp::SMadHi),
        X::u_mad_hi => ITer(IntTerOp::UMadHi),
        X::s_mad_sat => ITer(IntTerOp::SMadSat),
        X::u_mad_sat => ITer(IntTerOp::UMadSat),
        X::s_mad24 => ITer(IntTerOp::SMad24),
        X::u_mad24 => ITer(IntTerOp::UMad24),
        X::s_upsample | X::u_upsample => Upsample,
        X::bitselect => Bitselect,
        X::select => SelectMsb,
        X::cross => Geometric(crate::bytecode::Geometric::Cross),
        X::length | X::fast_length => Geometric(crate::bytecode::Geometric::Length),
        X::distance | X::fast_distance => Geometric(crate::bytecode::Geometric::Distance),
        X::normalize | X::fast_normalize => Geometric(crate::bytecode::Geometric::Normalize),
        X::vloadn => VLoad,
        X::vstoren => VStore,
        X::vload_half => VLoadHalf {
            n_arg: false,
            aligned: false,
        },
        X::vload_halfn => VLoadHalf {
            n_arg: true,
            aligned: false,
        },
        X::vloada_halfn => VLoadHalf {
            n_arg: true,
            aligned: true,
        },
        X::vstore_half => VStoreHalf {
            n_arg: false,
            aligned: false,
            rounding_arg: false,
        },
        X::vstore_half_r => VStoreHalf {
            n_arg: false,
            aligned: false,
            rounding_arg: true,
        },
        X::vstore_halfn => VStoreHalf {
            n_arg: true,
            aligned: false,
            rounding_arg: false,
        },
        X::vstore_halfn_r => VStoreHalf {
            n_arg: true,
            aligned: false,
            rounding_arg: true,
        },
        X::vstorea_halfn => VStoreHalf {
            n_arg: true,
            aligned: true,
            rounding_arg: false,
        },
        X::vstorea_halfn_r => VStoreHalf {
            n_arg: true,
            aligned: true,
            rounding_arg: true,
        },
        X::prefetch | X::printf => Nothing,
    })
}

/// Base operations of the builtins that are several operations (see `counts`).
fn expansion(op: X, int: bool) -> &'static [(&'static str, u64)] {
    match op {
        X::fma | X::mad => &[("OpFMul", 1), ("OpFAdd", 1)],
        X::s_mad24 | X::u_mad24 | X::s_mad_hi | X::u_mad_hi | X::s_mad_sat | X::u_mad_sat => {
            &[("OpIMul", 1), ("OpIAdd", 1)]
        }
        X::s_mul24 | X::u_mul24 | X::s_mul_hi | X::u_mul_hi => &[("OpIMul", 1)],
        X::rotate => &[
            ("OpShiftLeftLogical", 1),
            ("OpShiftRightLogical", 1),
            ("OpBitwiseOr", 1),
        ],
        X::mix => &[("OpFSub", 1), ("OpFMul", 1), ("OpFAdd", 1)],
        X::sincos => &[("sin", 1), ("cos", 1)],
        X::fclamp => &[("fmax", 1), ("fmin", 1)],
        X::s_clamp | X::u_clamp if int => &[("s_max", 1), ("s_min", 1)],
        X::native_divide | X::half_divide => &[("OpFDiv", 1)],
        X::popcount => &[("OpBitCount", 1)],
        _ => &[],
    }
}

impl<'m> Translator<'m> {
    fn ext_inst(&mut self, inst: &Instruction) -> R<()> {
        let set = id(inst, 0)?;
        if !self.opencl_std.contains(&set) {
            return Err(TranslateError::unsupported(
                "an extended instruction outside OpenCL.std",
                "only the OpenCL.std instruction set is interpreted",
            ));
        }
        let number = literal(inst, 1)? as u32;
        let op = X::from_u32(number).ok_or_else(|| {
            TranslateError::malformed(format!("unknown OpenCL.std instruction {number}"))
        })?;
        let ext_name: &'static str = rspirv::grammar::ext_inst_table("OpenCL.std")
            .and_then(|t| t.lookup_opcode(number))
            .map(|i| i.opname)
            .unwrap_or("OpExtInst");
        let kind = ext_of(op).ok_or_else(|| {
            TranslateError::unsupported(
                format!("OpenCL builtin `{ext_name}`"),
                "this builtin is not interpreted yet; please report the kernel",
            )
        })?;
        let arg = |k: usize| id(inst, 2 + k);
        match kind {
            Ext::Nothing => {
                if let (Some(r), Some(t)) = (inst.result_id, inst.result_type) {
                    if self.types.slots(t)? > 0 {
                        let dst = self.val(r)?.slot;
                        let zero = self.zero()?;
                        self.emit(Op::Mov {
                            dst,
                            src: zero,
                            n: 1,
                        });
                    }
                }
                self.hist(ext_name, self.result_lane_type(inst), 1);
                return Ok(());
            }
            Ext::VLoad | Ext::VStore => {
                return self.vload_vstore(inst, matches!(kind, Ext::VLoad), ext_name)
            }
            Ext::VLoadHalf { n_arg, aligned } => {
                return self.vload_half(inst, n_arg, aligned, ext_name)
            }
            Ext::VStoreHalf {
                n_arg,
                aligned,
                rounding_arg,
            } => return self.vstore_half(inst, n_arg, aligned, rounding_arg, ext_name),
            _ => {}
        }
        let (rid, ty) = result(inst)?;
        let (s, n) = self.types.lanes(ty)?;
        let dst = self.val(rid)?.slot;
        let signed = ext_name.starts_with("s_");
        let lt = lane_type(s, signed || s.bits() > 1 && matches!(s, Scalar::Float(_)))?;
        let lanes = n as u64;
        match kind {
            Ext::FUn(f) => {
                let bits = self.float_bits(s)?;
                let a = self.operand(arg(0)?, n)?;
                self.emit(Op::FloatUn {
                    op: f,
                    bits,
                    n,
                    dst,
                    a,
                });
            }
            Ext::FBin(f) => {
                let bits = self.float_bits(s)?;
                let (a, b) = (self.operand(arg(0)?, n)?, self.operand(arg(1)?, n)?);
                self.emit(Op::Float {
                    op: f,
                    bits,
                    n,
                    dst,
                    a,
                    b,
                });
            }
            Ext::FTer(f) => {
                let bits = self.float_bits(s)?;
                let a = self.operand(arg(0)?, n)?;
                let b = self.operand(arg(1)?, n)?;
                let c = self.operand(arg(2)?, n)?;
                self.emit(Op::FloatTer {
                    op: f,
                    bits,
                    n,
                    dst,
                    a,
                    b,
                    c,
                });
            }
            Ext::IUn(f) => {
                let bits = self.int_bits(s)?;
                let a = self.operand(arg(0)?, n)?;
                self.emit(Op::IntUn {
                    op: f,
                    bits,
                    n,
                    dst,
                    a,
                });
            }
            Ext::IBin(f) => {
                let bits = self.int_bits(s)?;
                let (a, b) = (self.operand(arg(0)?, n)?, self.operand(arg(1)?, n)?);
                self.emit(Op::Int {
                    op: f,
                    bits,
                    n,
                    dst,
                    a,
                    b,
                });
            }
            Ext::ITer(f) => {
                let bits = self.int_bits(s)?;
                let a = self.operand(arg(0)?, n)?;
                let b = self.operand(arg(1)?, n)?;
                let c = self.operand(arg(2)?, n)?;
                self.emit(Op::IntTer {
                    op: f,
                    bits,
                    n,
                    dst,
                    a,
                    b,
                    c,
                });
            }
            Ext::Bitselect => {
                let bits = s.bits();
                let a = self.operand(arg(0)?, n)?;
                let b = self.operand(arg(1)?, n)?;
                let c = self.operand(arg(2)?, n)?;
                self.emit(Op::IntTer {
                    op: IntTerOp::Bitselect,
                    bits,
                    n,
                    dst,
                    a,
                    b,
                    c,
                });
            }
            Ext::Upsample => {
                let hi = self.val(arg(0)?)?;
                let (hs, _) = self.types.lanes(hi.ty)?;
                let b = self.operand(arg(1)?, n)?;
                self.emit(Op::Upsample {
                    bits: hs.bits(),
                    n,
                    dst,
                    a: hi.slot,
                    b,
                });
            }
            Ext::SelectMsb => {
                let a = self.operand(arg(0)?, n)?;
                let b = self.operand(arg(1)?, n)?;
                let c = self.val(arg(2)?)?;
                let (cs, _) = self.types.lanes(c.ty)?;
                let c = self.operand(arg(2)?, n)?;
                self.emit(Op::SelectMsb {
                    n,
                    bits: cs.bits(),
                    msb: n > 1,
                    dst,
                    a,
                    b,
                    c,
                });
                self.count(ext_name, lt, lanes, false);
                return Ok(());
            }
            Ext::SplitUn { value, out } => {
                let bits = self.float_bits(s)?;
                let a = self.operand(arg(0)?, n)?;
                // The pointee first: `dst` may not be read after it is written.
                let tmp = self.alloc(n as u32)?;
                self.emit(Op::FloatUn {
                    op: out,
                    bits,
                    n,
                    dst: tmp,
                    a,
                });
                self.store_through(arg(1)?, tmp, n, ext_name)?;
                self.emit(Op::FloatUn {
                    op: value,
                    bits,
                    n,
                    dst,
                    a,
                });
            }
            Ext::SplitBin { value, out } => {
                let bits = self.float_bits(s)?;
                let (a, b) = (self.operand(arg(0)?, n)?, self.operand(arg(1)?, n)?);
                let tmp = self.alloc(n as u32)?;
                self.emit(Op::Float {
                    op: out,
                    bits,
                    n,
                    dst: tmp,
                    a,
                    b,
                });
                self.store_through(arg(2)?, tmp, n, ext_name)?;
                self.emit(Op::Float {
                    op: value,
                    bits,
                    n,
                    dst,
                    a,
                    b,
                });
            }
            Ext::FUnToInt(f) => {
                let x = self.val(arg(0)?)?;
                let (fs, _) = self.types.lanes(x.ty)?;
                let bits = self.float_bits(fs)?;
                let a = self.operand(arg(0)?, n)?;
                self.emit(Op::FloatUn {
                    op: f,
                    bits,
                    n,
                    dst,
                    a,
                });
                // Counted by its float argument's type.
                self.count(ext_name, lane_type(fs, true)?, lanes, true);
                return Ok(());
            }
            Ext::Shuffle { sources } => {
                return self.shuffle(inst, sources, dst, n, ext_name);
            }
            Ext::Geometric(g) => {
                let a = self.val(arg(0)?)?;
                let (fs, in_n) = self.types.lanes(a.ty)?;
                let bits = self.float_bits(fs)?;
                if g == Geometric::Cross && !(in_n == 3 || in_n == 4) || in_n > 4 {
                    return Err(TranslateError::malformed(format!(
                        "`{ext_name}` of {in_n} lanes"
                    )));
                }
                let b = match g {
                    Geometric::Cross | Geometric::Distance | Geometric::Dot => {
                        self.operand(arg(1)?, in_n)?
                    }
                    _ => a.slot,
                };
                self.emit(Op::Geometric {
                    op: g,
                    bits,
                    n: in_n,
                    dst,
                    a: a.slot,
                    b,
                });
                let m = in_n as u64;
                let lt = lane_type(fs, true)?;
                self.hist(ext_name, lt, m);
                let parts: Vec<(&'static str, u64)> = match g {
                    Geometric::Cross => vec![("OpFMul", 6), ("OpFSub", 3)],
                    Geometric::Length => vec![("OpFMul", m), ("OpFAdd", m - 1), ("sqrt", 1)],
                    Geometric::Distance => {
                        vec![("OpFSub", m), ("OpFMul", m), ("OpFAdd", m - 1), ("sqrt", 1)]
                    }
                    Geometric::Normalize => {
                        vec![("OpFMul", 2 * m), ("OpFAdd", m - 1), ("rsqrt", 1)]
                    }
                    Geometric::Dot => vec![("OpFMul", m), ("OpFAdd", m - 1)],
                };
                for (name, k) in parts {
                    self.work(name, lt, k, true);
                }
                return Ok(());
            }
            _ => unreachable!("memory builtins returned above"),
        }
        self.hist(ext_name, lt, lanes);
        let parts = expansion(op, matches!(s, Scalar::Int(_)));
        if parts.is_empty() {
            self.work(ext_name, lt, lanes, true);
        } else {
            for (name, k) in parts {
                let name = match *name {
                    "s_max" if !signed => "u_max",
                    "s_min" if !signed => "u_min",
                    other => other,
                };
                self.work(name, lt, lanes * k, true);
            }
        }
        Ok(())
    }

    /// Stores `n` lanes from `src` through the pointer `ptr`, the second
    /// result of a builtin such as frexp: traffic of the pointer's space.
    fn store_through(&mut self, ptr: Word, src: Reg, n: u8, name: &'static str) -> R<()> {
        let p = self.val(ptr)?;
        let (space, pointee) = self.types.pointee(p.ty)?;
        let (ps, pn) = self.types.lanes(pointee)?;
        if pn != n {
            return Err(TranslateError::malformed(format!(
                "`{name}` writes {n} lanes through a pointer to {pn}"
            )));
        }
        let size = ps.size();
        self.emit(Op::Store {
            src,
            ptr: p.slot,
            size: size as u8,
            n,
            align: size as u16,
        });
        let space = traffic_space(space)?;
        self.blocks[self.block]
            .traffic
            .add(space, true, size as u64 * n as u64);
        Ok(())
    }

    /// shuffle(x, mask) / shuffle2(x, y, mask): lane i of the result is
    /// lane `mask[i]` (modulo the source lanes) of x, or of x then y. Each
    /// lane is a dynamic extract from the sources laid side by side.
    fn shuffle(
        &mut self,
        inst: &Instruction,
        sources: u8,
        dst: Reg,
        n: u8,
        name: &'static str,
    ) -> R<()> {
        let arg = |k: usize| id(inst, 2 + k);
        let x = self.val(arg(0)?)?;
        let (xs, m) = self.types.lanes(x.ty)?;
        let mask = self.val(arg(sources as usize)?)?;
        let (ms, mn) = self.types.lanes(mask.ty)?;
        let total = m as u32 * sources as u32;
        if mn != n || !total.is_power_of_two() || total > 32 {
            return Err(TranslateError::malformed(format!(
                "`{name}` of {m}-lane sources with a {mn}-lane mask into {n} lanes"
            )));
        }
        let index_bits = self.int_bits(ms)?;
        let base = if sources == 1 {
            x.slot
        } else {
            let y = self.val(arg(1)?)?;
            let both = self.alloc(total)?;
            self.emit(Op::Mov {
                dst: both,
                src: x.slot,
                n: m as u32,
            });
            self.emit(Op::Mov {
                dst: both + m as u32,
                src: y.slot,
                n: m as u32,
            });
            both
        };
        // Only the low bits of each mask lane select (OpenCL 6.12.12).
        let low_bits = self.alloc(1)?;
        self.const_slots.insert(low_bits, (total - 1) as u64);
        self.init.push((low_bits, (total - 1) as u64));
        let index = self.alloc(n as u32)?;
        for i in 0..n as u32 {
            self.emit(Op::Int {
                op: IntOp::And,
                bits: index_bits,
                n: 1,
                dst: index + i,
                a: mask.slot + i,
                b: low_bits,
            });
        }
        // Into a scratch vector first: `dst` may share registers with a source.
        let out = self.alloc(n as u32)?;
        for i in 0..n as u32 {
            self.emit(Op::ExtractDyn {
                dst: out + i,
                base,
                index: index + i,
                index_bits,
                n: total as u8,
            });
        }
        self.emit(Op::Mov {
            dst,
            src: out,
            n: n as u32,
        });
        // A data movement, like OpVectorShuffle: counted, not arithmetic.
        self.count(name, lane_type(xs, false)?, n as u64, false);
        Ok(())
    }

    /// vloadn(offset, p) / vstoren(data, offset, p): p + offset*n elements.
    fn vload_vstore(&mut self, inst: &Instruction, load: bool, name: &'static str) -> R<()> {
        let arg = |k: usize| id(inst, 2 + k);
        let (data_ty, offset, ptr) = if load {
            (result(inst)?.1, arg(0)?, arg(1)?)
        } else {
            (self.val(arg(0)?)?.ty, arg(1)?, arg(2)?)
        };
        let (s, n) = self.types.lanes(data_ty)?;
        let size = s.size();
        let p = self.val(ptr)?;
        let (space, _) = self.types.pointee(p.ty)?;
        let space = traffic_space(space)?;
        let addr = self.scaled_pointer(p.slot, offset, size as i64 * n as i64)?;
        let lt = lane_type(s, false)?;
        if load {
            let dst = self.val(result(inst)?.0)?.slot;
            self.emit(Op::Load {
                dst,
                ptr: addr,
                size: size as u8,
                n,
                align: size as u16,
            });
        } else {
            let src = self.val(arg(0)?)?.slot;
            self.emit(Op::Store {
                src,
                ptr: addr,
                size: size as u8,
                n,
                align: size as u16,
            });
        }
        self.blocks[self.block]
            .traffic
            .add(space, !load, size as u64 * n as u64);
        self.hist(name, lt, n as u64);
        Ok(())
    }

    /// A pointer `base + offset * stride` computed into a fresh register.
    fn scaled_pointer(&mut self, base: Reg, offset: Word, stride: i64) -> R<Reg> {
        let off = self.val(offset)?;
        let (os, _) = self.types.lanes(off.ty)?;
        let bits = self.int_bits(os)?;
        let addr = self.alloc(1)?;
        let start = self.terms.len() as u32;
        self.terms.push(PtrTerm {
            reg: off.slot,
            bits,
            stride,
        });
        self.emit(Op::Ptr {
            dst: addr,
            base,
            disp: 0,
            terms_start: start,
            terms_len: 1,
        });
        Ok(addr)
    }

    fn vload_half(
        &mut self,
        inst: &Instruction,
        n_arg: bool,
        aligned: bool,
        name: &'static str,
    ) -> R<()> {
        let (rid, ty) = result(inst)?;
        let (s, n) = self.types.lanes(ty)?;
        if s != Scalar::Float(32) {
            return Err(TranslateError::unsupported(
                format!("`{name}` into {s:?}"),
                "load halves into float",
            ));
        }
        let _ = n_arg;
        let p = self.val(id(inst, 3)?)?;
        let (space, _) = self.types.pointee(p.ty)?;
        let space = traffic_space(space)?;
        let room = if aligned && n == 3 { 4 } else { n as i64 };
        let addr = self.scaled_pointer(p.slot, id(inst, 2)?, 2 * room)?;
        let dst = self.val(rid)?.slot;
        self.emit(Op::LoadHalf { dst, ptr: addr, n });
        self.blocks[self.block]
            .traffic
            .add(space, false, 2 * n as u64);
        self.hist(name, LaneType::Scalar(ScalarType::Half), n as u64);
        Ok(())
    }

    fn vstore_half(
        &mut self,
        inst: &Instruction,
        n_arg: bool,
        aligned: bool,
        rounding_arg: bool,
        name: &'static str,
    ) -> R<()> {
        let data = self.val(id(inst, 2)?)?;
        let (s, n) = self.types.lanes(data.ty)?;
        let from = self.float_bits(s)?;
        let _ = n_arg;
        let p = self.val(id(inst, 4)?)?;
        let (space, _) = self.types.pointee(p.ty)?;
        let space = traffic_space(space)?;
        let rounding = if rounding_arg {
            match literal(inst, 5)? {
                1 => Rounding::TowardZero,
                2 => Rounding::TowardPositive,
                3 => Rounding::TowardNegative,
                _ => Rounding::NearestEven,
            }
        } else {
            Rounding::NearestEven
        };
        let room = if aligned && n == 3 { 4 } else { n as i64 };
        let addr = self.scaled_pointer(p.slot, id(inst, 3)?, 2 * room)?;
        self.emit(Op::StoreHalf {
            src: data.slot,
            ptr: addr,
            n,
            from,
            rounding,
        });
        self.blocks[self.block]
            .traffic
            .add(space, true, 2 * n as u64);
        self.hist(name, LaneType::Scalar(ScalarType::Half), n as u64);
        Ok(())
    }
}
