//! Program-scope pointers: constants that point into program-scope buffers
//! (`global int *p = &table[1];` reaches SPIR-V as an `OpSpecConstantOp`
//! access chain on the variable). Those buffers are numbered after the
//! kernel's parameters, so such a pointer's value is known only once the
//! entry point is: until then it is a buffer and an offset, patched into
//! registers and initialisers by [`Translator::relocate`].

use super::access::ChainStep;
use super::*;
use crate::memory;

/// A pointer to write into a program-scope buffer's initial bytes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Relocation {
    /// The buffer (among `global_vars`) holding the pointer, and where.
    var: usize,
    at: usize,
    /// The buffer pointed into, and the byte offset in it.
    target: usize,
    offset: i64,
}

impl<'m> Translator<'m> {
    /// The buffer and offset a module-scope pointer constant names, if it
    /// names one.
    fn global_pointer(&self, rid: Word) -> Option<(usize, i64)> {
        let slot = self.regs.values.get(&rid)?.slot;
        if let Some(known) = self.storage.global_pointer_slots.get(&slot) {
            return Some(*known);
        }
        self.storage
            .pending_globals
            .iter()
            .find(|(var, space, _)| *var == rid && *space == memory::SPACE_GLOBAL)
            .map(|(_, _, index)| (*index, 0))
    }

    /// `OpSpecConstantOp` at module scope: the pointer operations a
    /// program-scope initialiser makes of another variable's address.
    pub(super) fn spec_constant_op(&mut self, inst: &Instruction) -> R<()> {
        let (rid, ty) = result(inst)?;
        let op = match inst.operands.first() {
            Some(Operand::LiteralSpecConstantOpInteger(op)) => *op,
            other => {
                return Err(TranslateError::malformed(format!(
                    "OpSpecConstantOp without an opcode ({other:?})"
                )))
            }
        };
        let base = id(inst, 1)?;
        let unsupported = || {
            TranslateError::unsupported(
                format!("OpSpecConstantOp {op:?} at module scope"),
                "clflow folds pointer offsets and casts of program-scope variables only",
            )
        };
        let (var, mut offset) = self.global_pointer(base).ok_or_else(unsupported)?;
        match op {
            S::Bitcast | S::PtrCastToGeneric | S::GenericCastToPtr => {}
            S::AccessChain
            | S::InBoundsAccessChain
            | S::PtrAccessChain
            | S::InBoundsPtrAccessChain => {
                let (_, mut cur) = self.types.pointee(self.val(base)?.ty)?;
                let element_first = matches!(op, S::PtrAccessChain | S::InBoundsPtrAccessChain);
                for k in 2..inst.operands.len() {
                    let index = id(inst, k)?;
                    let value = *self.regs.const_ints.get(&index).ok_or_else(unsupported)?;
                    let (is, _) = self.types.lanes(self.val(index)?.ty)?;
                    let value = crate::opencl_std::sext(value, self.int_bits(is)?);
                    let element = k == 2 && element_first;
                    let (disp, next) = match self.chain_step(cur, element, Some(value))? {
                        ChainStep::Member { disp, next } => (disp, next),
                        ChainStep::Stride { stride, next } => (value.wrapping_mul(stride), next),
                    };
                    offset = offset.wrapping_add(disp);
                    cur = next;
                }
            }
            _ => return Err(unsupported()),
        }
        self.constant(rid, ty, vec![0])?;
        let slot = self.val(rid)?.slot;
        self.storage
            .global_pointer_slots
            .insert(slot, (var, offset));
        Ok(())
    }

    /// A composite constant made of `sources` slots from `slot` on keeps
    /// the pointers among them.
    pub(super) fn carry_pointers(&mut self, sources: &[Reg], slot: Reg) {
        for (i, source) in sources.iter().enumerate() {
            if let Some(known) = self.storage.global_pointer_slots.get(source).copied() {
                self.storage
                    .global_pointer_slots
                    .insert(slot + i as u32, known);
            }
        }
    }

    /// The pointers in program-scope buffer `var`'s initialiser `cid`.
    pub(super) fn relocations_of(&mut self, var: usize, cid: Word, ty: Word) -> R<()> {
        let v = self.val(cid)?;
        for (i, leaf) in self.types.leaves(ty)?.iter().enumerate() {
            if let Some((target, offset)) =
                self.storage.global_pointer_slots.get(&(v.slot + i as u32))
            {
                self.storage.relocations.push(Relocation {
                    var,
                    at: leaf.offset as usize,
                    target: *target,
                    offset: *offset,
                });
            }
        }
        Ok(())
    }

    /// With the parameter count known: every pointer constant's value, and
    /// the pointers in program-scope buffers' initial bytes.
    pub(super) fn relocate(&mut self) {
        let pointer = |nargs: usize, target: usize, offset: i64| {
            memory::encode(memory::SPACE_GLOBAL, nargs + target, offset as u64)
        };
        for (slot, (target, offset)) in &self.storage.global_pointer_slots {
            let value = pointer(self.storage.nargs, *target, *offset);
            self.regs.init.push((*slot, value));
            self.regs.const_slots.insert(*slot, value);
        }
        for r in std::mem::take(&mut self.storage.relocations) {
            let value = pointer(self.storage.nargs, r.target, r.offset).to_le_bytes();
            let bytes = &mut self.storage.global_vars[r.var].bytes;
            if let Some(place) = bytes.get_mut(r.at..r.at + 8) {
                place.copy_from_slice(&value);
            }
        }
    }
}
