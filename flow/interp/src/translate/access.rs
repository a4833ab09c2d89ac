//! Memory and pointers: access chains, loads and stores, memory copies,
//! atomics, async work-group copies, and the vload/vstore builtins.

use super::*;
use clflow_spirv::types::{Layout, Type};
pub(super) fn atomic_op(op: S) -> Option<AtomicOp> {
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
    /// OpVariable in a function: the pointer is a constant (see `allocate`); an initializer is a store.
    pub(super) fn variable(&mut self, inst: &Instruction) -> R<()> {
        // The pointer is a constant (see `allocate`); an initializer is a store.
        if inst.operands.len() > 1 {
            let (rid, ty) = result(inst)?;
            let (_, pointee) = self.types.pointee(ty)?;
            let ptr = self.val(rid)?.slot;
            let src = self.val(id(inst, 1)?)?.slot;
            self.store_value(ptr, src, pointee, AddressSpace::Private, None)?;
        }
        Ok(())
    }

    /// OpPtrDiff.
    pub(super) fn ptr_diff(&mut self, inst: &Instruction) -> R<()> {
        let (rid, _) = result(inst)?;
        let a = self.val(id(inst, 0)?)?;
        let (_, pointee) = self.types.pointee(a.ty)?;
        let elem = self.types.layout(pointee)?.size.max(1) as u32;
        let b = self.val(id(inst, 1)?)?.slot;
        let dst = self.val(rid)?.slot;
        self.emit(Op::PtrDiff { dst, a: a.slot, b, elem });
        self.count(inst, LaneType::Pointer, 1);
        Ok(())
    }

    /// OpLoad: of memory, or of a work-item builtin.
    pub(super) fn load(&mut self, inst: &Instruction) -> R<()> {
        let (rid, ty) = result(inst)?;
        let pid = id(inst, 0)?;
        if let Some(which) = self.regs.builtins.get(&pid).copied() {
            let (s, lanes) = self.types.lanes(ty)?;
            let bits = self.int_bits(s)?;
            let dst = self.val(rid)?.slot;
            self.emit(Op::Builtin { which, dst, lanes, bits });
            return Ok(());
        }
        let ptr = self.val(pid)?;
        let (space, _) = self.types.pointee(ptr.ty)?;
        let dst = self.val(rid)?.slot;
        if self.refill_loads.contains(&rid) {
            self.out.refills.push(self.sites.current_site);
        }
        self.load_value(dst, ptr.slot, ty, space, aligned(inst, 1))?;
        Ok(())
    }

    /// OpStore.
    pub(super) fn store(&mut self, inst: &Instruction) -> R<()> {
        let ptr = self.val(id(inst, 0)?)?;
        let value = self.val(id(inst, 1)?)?;
        let (space, _) = self.types.pointee(ptr.ty)?;
        self.store_value(ptr.slot, value.slot, value.ty, space, aligned(inst, 2))?;
        Ok(())
    }

    /// OpCopyMemory, OpCopyMemorySized.
    pub(super) fn copy_memory(&mut self, inst: &Instruction) -> R<()> {
        let opcode = inst.class.opcode;
        let dst = self.val(id(inst, 0)?)?;
        let src = self.val(id(inst, 1)?)?;
        let (dspace, dpointee) = self.types.pointee(dst.ty)?;
        let (sspace, _) = self.types.pointee(src.ty)?;
        let (bytes, bytes_reg) = if opcode == S::CopyMemory {
            (self.types.layout(dpointee)?.size, None)
        } else {
            let size = id(inst, 2)?;
            match self.regs.const_ints.get(&size) {
                Some(v) => (*v, None),
                None => (0, Some(self.val(size)?.slot)),
            }
        };
        self.emit(Op::Copy { dst: dst.slot, src: src.slot, bytes, bytes_reg });
        let lt = LaneType::Scalar(ScalarType::UChar);
        if bytes_reg.is_none() {
            self.traffic(traffic_space(sspace)?, false, bytes, lt, bytes);
            self.traffic(traffic_space(dspace)?, true, bytes, lt, bytes);
        } else {
            // Counted as it runs: the size is known only then.
            traffic_space(sspace)?;
            traffic_space(dspace)?;
        }
        Ok(())
    }

    /// One index of an access chain into a `cur`: the first of a pointer
    /// chain steps over whole `cur`s, a struct index (a constant) picks a
    /// member, an array or vector index steps over elements.
    pub(super) fn chain_step(
        &self,
        cur: Word,
        element: bool,
        constant: Option<i64>,
    ) -> R<ChainStep> {
        if element {
            let stride = self.types.layout(cur)?.size as i64;
            return Ok(ChainStep::Stride { stride, next: cur });
        }
        Ok(match *self.types.get(cur)? {
            Type::Struct { .. } => {
                let c = constant
                    .ok_or_else(|| TranslateError::malformed("struct index is not a constant"))?;
                ChainStep::Member {
                    disp: self.types.member_offset(cur, c as u64)? as i64,
                    next: self.types.member_slot(cur, c as u64)?.1,
                }
            }
            Type::Array { element, .. } => ChainStep::Stride {
                stride: self.types.layout(element)?.size as i64,
                next: element,
            },
            Type::Vector(s, _) => ChainStep::Stride {
                stride: SlotKind::from(s).size() as i64,
                next: self.vector_scalar_type(cur)?,
            },
            ref other => {
                return Err(TranslateError::malformed(format!(
                    "indexing into {other:?}"
                )))
            }
        })
    }

    pub(super) fn access_chain(&mut self, inst: &Instruction) -> R<()> {
        let (rid, _) = result(inst)?;
        let base = self.val(id(inst, 0)?)?;
        let (space, mut cur) = self.types.pointee(base.ty)?;
        let checked =
            self.out.check_indices && matches!(space, AddressSpace::Private | AddressSpace::Local);
        let mut disp: i64 = 0;
        let terms_start = self.out.terms.len();
        let mut trailing = false;
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
                .regs
                .const_ints
                .get(&index_id)
                .map(|v| crate::opencl_std::sext(*v, bits));
            let element = k == 1 && element_first;
            // A struct's last member that is an array of one element is C's
            // idiom for an array of any length: indexing past it is meant.
            let flexible = std::mem::take(&mut trailing)
                && matches!(*self.types.get(cur)?, Type::Array { length: Some(1), .. });
            if checked && !element && !flexible {
                self.check_index(inst, cur, index.slot, bits, constant)?;
            }
            let stride = match self.chain_step(cur, element, constant)? {
                ChainStep::Member { disp: member, next } => {
                    trailing = matches!(
                        self.types.get(cur)?,
                        Type::Struct { members, .. } if constant == Some(members.len() as i64 - 1)
                    );
                    disp += member;
                    cur = next;
                    continue;
                }
                ChainStep::Stride { stride, next } => {
                    cur = next;
                    stride
                }
            };
            match constant {
                Some(c) => disp = disp.wrapping_add(c.wrapping_mul(stride)),
                None => self
                    .out
                    .terms
                    .push(PtrTerm { reg: index.slot, bits, stride }),
            }
        }
        let dst = self.val(rid)?.slot;
        self.func
            .adjacent
            .chain(dst, base.slot, &self.out.terms[terms_start..], disp);
        let terms_len = u16::try_from(self.out.terms.len() - terms_start)
            .map_err(|_| TranslateError::malformed("an access chain with too many indices"))?;
        let single = (terms_len == 1).then(|| self.out.terms[terms_start]);
        match single {
            // The common `base[i]`: one index, no table lookup.
            Some(t) if i32::try_from(t.stride).is_ok() && i32::try_from(disp).is_ok() => {
                self.out.terms.truncate(terms_start);
                self.emit(Op::Index {
                    dst,
                    base: base.slot,
                    index: t.reg,
                    bits: t.bits,
                    stride: t.stride as i32,
                    disp: disp as i32,
                });
            }
            _ if terms_len == 0 => self.emit(Op::Offset { dst, base: base.slot, disp }),
            _ => self.emit(Op::Ptr {
                dst,
                base: base.slot,
                disp,
                terms_start: terms_start as u32,
                terms_len,
            }),
        }
        self.count(inst, LaneType::Pointer, 1);
        Ok(())
    }

    /// `--detect aggregates`: an index into the array `cur` must lie within
    /// it, not only within the variable (a struct member's array, a row of
    /// a 2-D array). Constant indices inside it need no check.
    fn check_index(
        &mut self,
        inst: &Instruction,
        cur: Word,
        index: Reg,
        bits: u8,
        constant: Option<i64>,
    ) -> R<()> {
        let Type::Array { length: Some(len), .. } = *self.types.get(cur)? else {
            return Ok(());
        };
        if constant.is_some_and(|c| (0..len as i64).contains(&c)) {
            return Ok(());
        }
        let len = u32::try_from(len)
            .map_err(|_| TranslateError::malformed("an array of over 2^32 elements"))?;
        let array = self.out.arrays.len() as u32;
        let (space, _) = self.types.pointee(self.val(id(inst, 0)?)?.ty)?;
        let variable = match self.name(id(inst, 0)?) {
            name if name.starts_with('%') => format!("a {} variable", space.qualifier()),
            name => format!("{} `{name}`", space.qualifier()),
        };
        self.out
            .arrays
            .push(format!("an array of {len} elements in {variable}"));
        self.emit(Op::CheckIndex { index, bits, len, array });
        Ok(())
    }

    /// Leaves of `ty` as a uniform run (`size`, `n`) if it is a scalar or vector.
    pub(super) fn uniform(&self, ty: Word) -> R<Option<(u8, u8, LaneType)>> {
        Ok(match self.types.get(ty)? {
            Type::Scalar(s) => {
                let s = SlotKind::from(*s);
                Some((s.size() as u8, 1, lane_type(s, false)?))
            }
            Type::Pointer { .. } => Some((8, 1, LaneType::Pointer)),
            Type::Vector(s, n) => {
                let s = SlotKind::from(*s);
                Some((s.size() as u8, *n as u8, lane_type(s, false)?))
            }
            _ => None,
        })
    }

    /// A value accessed through a generic pointer: scalars and vectors
    /// (aggregates through generic pointers are not interpreted).
    fn generic_uniform(&mut self, ty: Word) -> R<(u8, u8, LaneType)> {
        self.uniform(ty)?.ok_or_else(|| {
            TranslateError::unsupported(
                "a struct or array loaded or stored whole through a generic pointer",
                "access its members, or give the pointer an address space",
            )
        })
    }

    /// The load or store about to be emitted, for its adjacent group.
    fn adjacent_access(&mut self, store: bool, ptr: Reg, bytes: u64) {
        let pc = self.out.code.len() as Pc;
        self.func
            .adjacent
            .access(self.func.block, store, ptr, bytes, pc);
    }

    pub(super) fn load_value(
        &mut self,
        dst: Reg,
        ptr: Reg,
        ty: Word,
        space: AddressSpace,
        align: Option<u64>,
    ) -> R<()> {
        let Layout { size, align: natural } = self.types.layout(ty)?;
        let align = power_of_two_align(align.unwrap_or(natural));
        if space == AddressSpace::Generic {
            let (size, n, lt) = self.generic_uniform(ty)?;
            self.adjacent_access(false, ptr, size as u64 * n as u64);
            self.emit(Op::Load { dst, ptr, size, n, align });
            self.generic_traffic(ptr, false, size as u64 * n as u64, lt, n as u64);
            return Ok(());
        }
        let space = traffic_space(space)?;
        match self.uniform(ty)? {
            Some((size, n, lt)) => {
                self.adjacent_access(false, ptr, size as u64 * n as u64);
                self.emit(Op::Load { dst, ptr, size, n, align });
                self.traffic(space, false, size as u64 * n as u64, lt, n as u64);
            }
            None => {
                let leaves = self.types.leaves(ty)?;
                let bytes: u64 = leaves.iter().map(|l| l.size as u64).sum();
                self.out.layouts.push(leaves);
                self.emit(Op::LoadAgg { dst, ptr, layout: (self.out.layouts.len() - 1) as u32 });
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

    pub(super) fn store_value(
        &mut self,
        ptr: Reg,
        src: Reg,
        ty: Word,
        space: AddressSpace,
        align: Option<u64>,
    ) -> R<()> {
        let Layout { align: natural, .. } = self.types.layout(ty)?;
        let align = power_of_two_align(align.unwrap_or(natural));
        if space == AddressSpace::Generic {
            let (size, n, lt) = self.generic_uniform(ty)?;
            self.adjacent_access(true, ptr, size as u64 * n as u64);
            self.emit(Op::Store { src, ptr, size, n, align });
            self.generic_traffic(ptr, true, size as u64 * n as u64, lt, n as u64);
            return Ok(());
        }
        let space = traffic_space(space)?;
        match self.uniform(ty)? {
            Some((size, n, lt)) => {
                self.adjacent_access(true, ptr, size as u64 * n as u64);
                self.emit(Op::Store { src, ptr, size, n, align });
                self.traffic(space, true, size as u64 * n as u64, lt, n as u64);
            }
            None => {
                let leaves = self.types.leaves(ty)?;
                let bytes: u64 = leaves.iter().map(|l| l.size as u64).sum();
                self.out.layouts.push(leaves);
                self.emit(Op::StoreAgg { src, ptr, layout: (self.out.layouts.len() - 1) as u32 });
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

    pub(super) fn atomic(&mut self, inst: &Instruction, op: AtomicOp) -> R<()> {
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
            AtomicOp::Load | AtomicOp::Inc | AtomicOp::Dec => (Reg::UNUSED, Reg::UNUSED),
            AtomicOp::Store => (self.val(id(inst, 3)?)?.slot, Reg::UNUSED),
            AtomicOp::CompareExchange => {
                (self.val(id(inst, 4)?)?.slot, self.val(id(inst, 5)?)?.slot)
            }
            _ => (self.val(id(inst, 3)?)?.slot, Reg::UNUSED),
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
        self.emit(Op::Atomic { op, bits, dst, ptr: ptr.slot, a, b });
        let lt = lane_type(s, false)?;
        let bytes = bits as u64 / 8;
        if op != AtomicOp::Store {
            self.block_traffic(space, false, bytes);
        }
        if op != AtomicOp::Load {
            self.block_traffic(space, true, bytes);
        }
        self.count(inst, lt, 1);
        Ok(())
    }

    pub(super) fn async_copy(&mut self, inst: &Instruction) -> R<()> {
        // OpGroupAsyncCopy: scope, dst, src, num elements, stride, event.
        let (rid, _) = result(inst)?;
        let dst = self.val(id(inst, 1)?)?;
        let src = self.val(id(inst, 2)?)?;
        let (dspace, pointee) = self.types.pointee(dst.ty)?;
        let (sspace, _) = self.types.pointee(src.ty)?;
        traffic_space(dspace)?;
        traffic_space(sspace)?;
        let elem = u32::try_from(self.types.layout(pointee)?.size)
            .ok()
            .filter(|e| *e > 0)
            .ok_or_else(|| TranslateError::malformed("an async copy of elements without a size"))?;
        let elems = self.val(id(inst, 3)?)?.slot;
        let stride = self.val(id(inst, 4)?)?.slot;
        let event = self.val(id(inst, 5)?)?.slot;
        let out = self.val(rid)?.slot;
        // The copy is the group's: all work-items reach it, one performs it
        // once the others have arrived. That wait orders no memory: what
        // the work-items access before the copy, unfenced, races with it.
        self.out.uses_barrier = true;
        self.emit(Op::Barrier { fences: Fences::NONE });
        self.emit(Op::GroupCopy {
            dst: dst.slot,
            src: src.slot,
            elems,
            stride,
            elem,
            event,
            out,
        });
        self.count(inst, self.result_lane_type(inst), 1);
        Ok(())
    }

    /// Stores `n` lanes from `src` through the pointer `ptr`, the second
    /// result of a builtin such as frexp: traffic of the pointer's space.
    pub(super) fn store_through(
        &mut self,
        ptr: Word,
        src: Reg,
        n: u8,
        name: &'static str,
    ) -> R<()> {
        let p = self.val(ptr)?;
        let (space, pointee) = self.types.pointee(p.ty)?;
        let (ps, pn) = self.types.lanes(pointee)?;
        if pn != n {
            return Err(TranslateError::malformed(format!(
                "`{name}` writes {n} lanes through a pointer to {pn}"
            )));
        }
        let size = ps.size();
        self.emit(Op::Store { src, ptr: p.slot, size: size as u8, n, align: size as u16 });
        let space = traffic_space(space)?;
        self.block_traffic(space, true, size as u64 * n as u64);
        Ok(())
    }

    /// vloadn(offset, p) / vstoren(data, offset, p): p + offset*n elements.
    pub(super) fn vload_vstore(&mut self, inst: &Instruction, load: bool, rule: Rule) -> R<()> {
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
            self.emit(Op::Load { dst, ptr: addr, size: size as u8, n, align: size as u16 });
        } else {
            let src = self.val(arg(0)?)?.slot;
            self.emit(Op::Store { src, ptr: addr, size: size as u8, n, align: size as u16 });
        }
        self.block_traffic(space, !load, size as u64 * n as u64);
        self.counted(rule, lt, n as u64);
        Ok(())
    }

    /// A pointer `base + offset * stride` computed into a fresh register.
    pub(super) fn scaled_pointer(&mut self, base: Reg, offset: Word, stride: i64) -> R<Reg> {
        let off = self.val(offset)?;
        let (os, _) = self.types.lanes(off.ty)?;
        let bits = self.int_bits(os)?;
        let addr = self.alloc(1)?;
        let start = self.out.terms.len() as u32;
        self.out.terms.push(PtrTerm { reg: off.slot, bits, stride });
        self.emit(Op::Ptr { dst: addr, base, disp: 0, terms_start: start, terms_len: 1 });
        Ok(addr)
    }

    pub(super) fn vload_half(
        &mut self,
        inst: &Instruction,
        n_arg: bool,
        aligned: bool,
        rule: Rule,
    ) -> R<()> {
        let (rid, ty) = result(inst)?;
        let (s, n) = self.types.lanes(ty)?;
        if s != SlotKind::Float(32) {
            return Err(TranslateError::unsupported(
                format!("`{}` into {s:?}", rule.name),
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
        self.block_traffic(space, false, 2 * n as u64);
        self.counted(rule, LaneType::Scalar(ScalarType::Half), n as u64);
        Ok(())
    }

    pub(super) fn vstore_half(
        &mut self,
        inst: &Instruction,
        n_arg: bool,
        aligned: bool,
        rounding_arg: bool,
        rule: Rule,
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
        self.emit(Op::StoreHalf { src: data.slot, ptr: addr, n, from, rounding });
        self.block_traffic(space, true, 2 * n as u64);
        self.counted(rule, LaneType::Scalar(ScalarType::Half), n as u64);
        Ok(())
    }
}

/// What one index of an access chain does ([`Translator::chain_step`]).
pub(super) enum ChainStep {
    /// A struct member `disp` bytes in, of type `next`.
    Member { disp: i64, next: Word },
    /// Elements of type `next`, `stride` bytes apart.
    Stride { stride: i64, next: Word },
}
