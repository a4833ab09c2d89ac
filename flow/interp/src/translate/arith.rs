//! Arithmetic: integer and float operations, comparisons, logic,
//! conversions and bitcasts, constant folding and rotate fusion.

use super::*;
pub(super) fn int_op(op: S) -> Option<(IntOp, bool)> {
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

pub(super) fn cmp_op(op: S) -> Option<(CmpOp, bool)> {
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

pub(super) fn fcmp_op(op: S) -> Option<(FCmpOp, bool)> {
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

impl<'m> Translator<'m> {
    /// Two-operand integer arithmetic (OpIAdd ...), folded on constants inside inlined bodies.
    pub(super) fn int_binary(&mut self, inst: &Instruction, op: IntOp, signed: bool) -> R<()> {
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
            self.regs.const_slots.insert(slot, v);
            self.regs.init.push((slot, v));
            self.regs.overrides.insert(rid, Val { slot, ty });
        } else {
            let dst = self.val(rid)?.slot;
            self.emit(clflow_bytecode::int_op(op, bits, n, dst, a, b));
        }
        self.count(inst, lane_type(s, signed)?, n as u64);
        Ok(())
    }

    /// Integer comparisons.
    pub(super) fn int_compare(&mut self, inst: &Instruction, op: CmpOp, signed: bool) -> R<()> {
        let (rid, _) = result(inst)?;
        let lhs = self.val(id(inst, 0)?)?;
        let (s, n) = self.types.lanes(lhs.ty)?;
        let bits = self.int_bits(s)?;
        let b = self.operand(id(inst, 1)?, n)?;
        let dst = self.val(rid)?.slot;
        self.emit(Op::Cmp { op, bits, n, dst, a: lhs.slot, b });
        self.count(inst, lane_type(s, signed)?, n as u64);
        Ok(())
    }

    /// Float comparisons.
    pub(super) fn float_compare(&mut self, inst: &Instruction, op: FCmpOp, ordered: bool) -> R<()> {
        let (rid, _) = result(inst)?;
        let lhs = self.val(id(inst, 0)?)?;
        let (s, n) = self.types.lanes(lhs.ty)?;
        let bits = self.float_bits(s)?;
        let b = self.operand(id(inst, 1)?, n)?;
        let dst = self.val(rid)?.slot;
        self.emit(Op::FCmp { op, ordered, bits, n, dst, a: lhs.slot, b });
        self.count(inst, lane_type(s, true)?, n as u64);
        Ok(())
    }

    /// OpSNegate, OpNot, OpBitCount, OpBitReverse.
    pub(super) fn int_unary(&mut self, inst: &Instruction) -> R<()> {
        let opcode = inst.class.opcode;
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
        self.emit(Op::IntUn { op, bits, n, dst, a });
        self.count(inst, lane_type(s, opcode == S::SNegate)?, n as u64);
        Ok(())
    }

    /// OpFAdd, OpFSub, OpFMul, OpFDiv, OpFRem, OpFMod.
    pub(super) fn float_arith(&mut self, inst: &Instruction) -> R<()> {
        let opcode = inst.class.opcode;
        let op = match opcode {
            S::FAdd => FloatOp::Add,
            S::FSub => FloatOp::Sub,
            S::FMul => FloatOp::Mul,
            S::FDiv => FloatOp::Div,
            S::FRem => FloatOp::Rem,
            _ => FloatOp::Mod,
        };
        let (rid, ty) = result(inst)?;
        let (s, n) = self.types.lanes(ty)?;
        let bits = self.float_bits(s)?;
        let (a, b) = (
            self.operand(id(inst, 0)?, n)?,
            self.operand(id(inst, 1)?, n)?,
        );
        let dst = self.val(rid)?.slot;
        self.emit(float_op(op, bits, n, dst, a, b));
        let lt = lane_type(s, true)?;
        self.count(inst, lt, n as u64);
        Ok(())
    }

    /// OpFNegate.
    pub(super) fn float_negate(&mut self, inst: &Instruction) -> R<()> {
        let (rid, ty) = result(inst)?;
        let (s, n) = self.types.lanes(ty)?;
        let bits = self.float_bits(s)?;
        let a = self.operand(id(inst, 0)?, n)?;
        let dst = self.val(rid)?.slot;
        self.emit(Op::FloatUn { op: FloatUnOp::Neg, bits, n, dst, a });
        self.count(inst, lane_type(s, true)?, n as u64);
        Ok(())
    }

    /// OpVectorTimesScalar.
    pub(super) fn vector_times_scalar(&mut self, inst: &Instruction) -> R<()> {
        let (rid, ty) = result(inst)?;
        let (s, n) = self.types.lanes(ty)?;
        let bits = self.float_bits(s)?;
        let a = self.operand(id(inst, 0)?, n)?;
        let b = self.operand(id(inst, 1)?, n)?;
        let dst = self.val(rid)?.slot;
        self.emit(float_op(FloatOp::Mul, bits, n, dst, a, b));
        let lt = lane_type(s, true)?;
        self.count(inst, lt, n as u64);
        Ok(())
    }

    /// OpDot.
    pub(super) fn dot(&mut self, inst: &Instruction) -> R<()> {
        let (rid, ty) = result(inst)?;
        let (s, _) = self.types.lanes(ty)?;
        let bits = self.float_bits(s)?;
        let a = self.val(id(inst, 0)?)?;
        let (_, n) = self.types.lanes(a.ty)?;
        let b = self.operand(id(inst, 1)?, n)?;
        let dst = self.val(rid)?.slot;
        self.emit(Op::Geometric { op: Geometric::Dot, bits, n, dst, a: a.slot, b });
        let lt = lane_type(s, true)?;
        self.count(inst, lt, n as u64);
        Ok(())
    }

    /// OpIsNan, OpIsInf, OpIsFinite, OpIsNormal, OpSignBitSet.
    pub(super) fn float_test(&mut self, inst: &Instruction) -> R<()> {
        let opcode = inst.class.opcode;
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
        self.emit(Op::FTest { op, bits, n, dst, a: a.slot });
        self.count(inst, lane_type(s, true)?, n as u64);
        Ok(())
    }

    /// OpLogicalAnd, OpLogicalOr, OpLogicalEqual, OpLogicalNotEqual.
    pub(super) fn logical(&mut self, inst: &Instruction) -> R<()> {
        let opcode = inst.class.opcode;
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
        self.count(inst, LaneType::Bool, n as u64);
        Ok(())
    }

    /// OpLogicalNot.
    pub(super) fn logical_not(&mut self, inst: &Instruction) -> R<()> {
        let (rid, ty) = result(inst)?;
        let (_, n) = self.types.lanes(ty)?;
        let a = self.operand(id(inst, 0)?, n)?;
        let dst = self.val(rid)?.slot;
        self.emit(Op::LNot { n, dst, a });
        self.count(inst, LaneType::Bool, n as u64);
        Ok(())
    }

    /// OpAny, OpAll.
    pub(super) fn any_all(&mut self, inst: &Instruction) -> R<()> {
        let opcode = inst.class.opcode;
        let (rid, _) = result(inst)?;
        let a = self.val(id(inst, 0)?)?;
        let (_, n) = self.types.lanes(a.ty)?;
        let dst = self.val(rid)?.slot;
        self.emit(Op::AnyAll { all: opcode == S::All, n, dst, a: a.slot });
        self.count(inst, LaneType::Bool, n as u64);
        Ok(())
    }

    /// OpSelect.
    pub(super) fn select(&mut self, inst: &Instruction) -> R<()> {
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
        self.emit(Op::Select { n: n8, vector_cond: cn > 1, dst, cond: cond.slot, a, b });
        let lt = self.lane_type_of(ty, false);
        self.count(inst, lt, n as u64);
        Ok(())
    }

    /// Integer to integer: OpUConvert, OpSConvert and the saturating forms.
    pub(super) fn int_convert(&mut self, inst: &Instruction) -> R<()> {
        let opcode = inst.class.opcode;
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
        let kind = ConvKind::IntToInt { signed_src, signed_dst, saturate };
        self.convert(inst, kind, ss, ds, n, src.slot, signed_dst)?;
        Ok(())
    }

    /// OpConvertFToU, OpConvertFToS.
    pub(super) fn float_to_int(&mut self, inst: &Instruction) -> R<()> {
        let opcode = inst.class.opcode;
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
            inst,
            ConvKind::FloatToInt { signed, saturate, rounding },
            ss,
            ds,
            n,
            src.slot,
            signed,
        )?;
        Ok(())
    }

    /// OpConvertSToF, OpConvertUToF.
    pub(super) fn int_to_float(&mut self, inst: &Instruction) -> R<()> {
        let opcode = inst.class.opcode;
        let (rid, ty) = result(inst)?;
        let (ds, n) = self.types.lanes(ty)?;
        let src = self.val(id(inst, 0)?)?;
        let (ss, _) = self.types.lanes(src.ty)?;
        let signed = opcode == S::ConvertSToF;
        self.convert(
            inst,
            ConvKind::IntToFloat { signed, rounding: self.rounding(rid, Rounding::NearestEven) },
            ss,
            ds,
            n,
            src.slot,
            true,
        )?;
        Ok(())
    }

    /// OpFConvert.
    pub(super) fn float_convert(&mut self, inst: &Instruction) -> R<()> {
        let (rid, ty) = result(inst)?;
        let (ds, n) = self.types.lanes(ty)?;
        let src = self.val(id(inst, 0)?)?;
        let (ss, _) = self.types.lanes(src.ty)?;
        let rounding = self.rounding(rid, Rounding::NearestEven);
        self.convert(
            inst,
            ConvKind::FloatToFloat { rounding },
            ss,
            ds,
            n,
            src.slot,
            true,
        )?;
        Ok(())
    }

    /// OpConvertPtrToU, OpConvertUToPtr.
    pub(super) fn pointer_convert(&mut self, inst: &Instruction) -> R<()> {
        let (_, ty) = result(inst)?;
        let src = self.val(id(inst, 0)?)?;
        let (ss, _) = self.types.lanes(src.ty)?;
        let (ds, _) = self.types.lanes(ty)?;
        let kind = ConvKind::IntToInt { signed_src: false, signed_dst: false, saturate: false };
        self.convert(inst, kind, ss, ds, 1, src.slot, false)?;
        Ok(())
    }

    /// A conversion of `n` lanes from `src` into `inst`'s result, counted
    /// by the type it makes (`signed` for the histogram).
    #[allow(clippy::too_many_arguments)]
    fn convert(
        &mut self,
        inst: &Instruction,
        kind: ConvKind,
        from: SlotKind,
        to: SlotKind,
        n: u8,
        src: Reg,
        signed: bool,
    ) -> R<()> {
        let dst = self.val(result(inst)?.0)?.slot;
        let (from_bits, to_bits) = (from.bits(), to.bits());
        self.emit(convert_op(kind, from_bits, to_bits, n, dst, src));
        let lt = lane_type(to, signed)?;
        self.count(inst, lt, n as u64);
        Ok(())
    }

    pub(super) fn bitcast(&mut self, inst: &Instruction) -> R<()> {
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
            self.emit(Op::Mov { dst, src: src.slot, n });
        }
        Ok(())
    }

    /// `to_global`, `to_local`, `to_private`: the pointer where it points
    /// into that space, else NULL.
    pub(super) fn cast_to_space(&mut self, inst: &Instruction) -> R<()> {
        let (rid, _) = result(inst)?;
        let src = self.val(id(inst, 0)?)?.slot;
        let dst = self.val(rid)?.slot;
        let space = match inst.operands.get(1) {
            Some(Operand::StorageClass(StorageClass::CrossWorkgroup)) => {
                crate::memory::SPACE_GLOBAL
            }
            Some(Operand::StorageClass(StorageClass::Workgroup)) => crate::memory::SPACE_LOCAL,
            Some(Operand::StorageClass(StorageClass::Function)) => crate::memory::SPACE_PRIVATE,
            other => {
                return Err(TranslateError::malformed(format!(
                    "OpGenericCastToPtrExplicit to {other:?}"
                )))
            }
        };
        self.emit(Op::CastToSpace { dst, src, space: space as u8 });
        Ok(())
    }

    /// The value of a scalar integer op on constants, inside inlined bodies
    /// (elsewhere the compiler has folded what can be folded).
    pub(super) fn fold(&self, op: IntOp, bits: u8, n: u8, a: Reg, b: Reg) -> Option<u64> {
        if self.calls.inline_depth == 0 || n != 1 {
            return None;
        }
        let (x, y) = (
            self.regs.const_slots.get(&a)?,
            self.regs.const_slots.get(&b)?,
        );
        crate::opencl_std::int_bin(op, bits, *x, *y).ok()
    }

    /// A funnel shift of a value with itself by a constant, as emitted from
    /// `body_start` (`shl t1, x, k`; `lshr t2, x, 32-k`; `or r, t1, t2`),
    /// becomes one rotate; the temporaries are the callee's own and are
    /// read nowhere else.
    pub(super) fn fuse_rotate(&mut self, body_start: usize) {
        let [.., Op::Shl32 { dst: t1, a: x, b: k }, Op::LShr32 { dst: t2, a: y, b: j }, Op::Or { dst, a, b }] =
            self.out.code[body_start..]
        else {
            return;
        };
        let amounts = (self.regs.const_slots.get(&k), self.regs.const_slots.get(&j));
        let complementary =
            matches!(amounts, (Some(k), Some(j)) if (k + j) % 32 == 0 && *k < 32 && *j <= 32);
        if x == y && a == t1 && b == t2 && complementary {
            let end = self.out.code.len();
            self.out.code.truncate(end - 3);
            self.sites.site_of.truncate(end - 3);
            self.emit(Op::Rotl32 { dst, a: x, b: k });
        }
    }

    pub(super) fn rounding(&self, rid: Word, default: Rounding) -> Rounding {
        match self.decorated(rid, Decoration::FPRoundingMode) {
            Some([Operand::FPRoundingMode(m), ..]) => rounding_of(*m),
            _ => default,
        }
    }
}
