//! Vectors and aggregates: extracting, inserting, constructing and
//! shuffling, all register moves.

use super::*;
use clflow_spirv::types::Type;

impl<'m> Translator<'m> {
    /// OpUndef inside a function: zero.
    pub(super) fn undef(&mut self, inst: &Instruction) -> R<()> {
        let (rid, ty) = result(inst)?;
        let n = self.types.slots(ty)?;
        let dst = self.val(rid)?.slot;
        let zero = self.zero()?;
        for k in 0..n {
            self.emit(Op::Mov { dst: dst + k, src: zero, n: 1 });
        }
        Ok(())
    }

    /// OpCompositeExtract.
    pub(super) fn composite_extract(&mut self, inst: &Instruction) -> R<()> {
        let (rid, ty) = result(inst)?;
        let src = self.val(id(inst, 0)?)?;
        let mut slot = src.slot;
        let mut cur = src.ty;
        for k in 1..inst.operands.len() {
            let index = literal(inst, k)?;
            let (off, next) = self.member(cur, index)?;
            slot = slot + off;
            cur = next;
        }
        let n = self.types.slots(ty)?;
        let dst = self.val(rid)?.slot;
        self.emit(Op::Mov { dst, src: slot, n });
        Ok(())
    }

    /// OpCompositeInsert.
    pub(super) fn composite_insert(&mut self, inst: &Instruction) -> R<()> {
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
        self.emit(Op::Mov { dst, src: whole.slot, n });
        let pn = self.types.slots(part.ty)?;
        self.emit(Op::Mov { dst: dst + off, src: part.slot, n: pn });
        Ok(())
    }

    /// OpCompositeConstruct.
    pub(super) fn composite_construct(&mut self, inst: &Instruction) -> R<()> {
        let (rid, _) = result(inst)?;
        let dst = self.val(rid)?.slot;
        let start = self.out.moves.len();
        let mut off = 0;
        for k in 0..inst.operands.len() {
            let part = self.val(id(inst, k)?)?;
            let n = self.types.slots(part.ty)?;
            self.out
                .moves
                .push(Move { dst: dst + off, src: part.slot, n });
            off += n;
        }
        self.emit(Op::Moves {
            start: start as u32,
            len: (self.out.moves.len() - start) as u32,
        });
        Ok(())
    }

    /// OpVectorShuffle.
    pub(super) fn vector_shuffle(&mut self, inst: &Instruction) -> R<()> {
        let (rid, _) = result(inst)?;
        let (a, b) = (self.val(id(inst, 0)?)?, self.val(id(inst, 1)?)?);
        let (_, an) = self.types.lanes(a.ty)?;
        let (_, bn) = self.types.lanes(b.ty)?;
        let dst = self.val(rid)?.slot;
        let start = self.out.moves.len();
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
            self.out
                .moves
                .push(Move { dst: dst + (k - 2) as u32, src, n: 1 });
        }
        self.emit(Op::Moves {
            start: start as u32,
            len: (self.out.moves.len() - start) as u32,
        });
        Ok(())
    }

    /// OpVectorExtractDynamic, OpVectorInsertDynamic.
    pub(super) fn vector_dynamic(&mut self, inst: &Instruction) -> R<()> {
        let opcode = inst.class.opcode;
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
            self.emit(Op::ExtractDyn { dst, base: base.slot, index: index.slot, index_bits, n });
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
        Ok(())
    }

    /// Slot offset and type of member `index` of a composite type.
    pub(super) fn member(&self, ty: Word, index: u64) -> R<(u32, Word)> {
        match self.types.get(ty)? {
            Type::Vector(..) => {
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
    pub(super) fn vector_scalar_type(&self, ty: Word) -> R<Word> {
        let vec_inst = self
            .module
            .types_global_values
            .iter()
            .find(|i| i.result_id == Some(ty))
            .ok_or_else(|| TranslateError::malformed(format!("type %{ty} not found")))?;
        id(vec_inst, 0)
    }
}
