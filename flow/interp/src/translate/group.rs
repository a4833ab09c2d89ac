//! Work-group and sub-group functions (`work_group_reduce_add`,
//! `sub_group_broadcast`, `sub_group_all` ...): a barrier, so that every
//! work-item of the group has its value ready, then one collective that
//! combines them (`exec::collective`). A sub-group function waits for the
//! whole work-group: every sub-group must reach it, as every work-item must
//! reach a barrier.

use super::*;
use clflow_bytecode::{Collective, GroupOp};
use spirv::{GroupOperation, Scope};

impl<'m> Translator<'m> {
    pub(super) fn group_function(&mut self, inst: &Instruction) -> R<()> {
        let (rid, ty) = result(inst)?;
        let scope = self.regs.const_ints.get(&id(inst, 0)?).copied();
        let sub = match scope {
            Some(s) if s == Scope::Subgroup as u64 => true,
            Some(s) if s == Scope::Workgroup as u64 => false,
            _ => {
                return Err(TranslateError::unsupported(
                    format!("{} of scope {scope:?}", spirv_name(inst.class.opname)),
                    "work-group and sub-group functions are interpreted",
                ))
            }
        };
        let (slot, n) = self.types.lanes(ty)?;
        if n != 1 {
            return Err(TranslateError::unsupported(
                format!("{} on vectors", spirv_name(inst.class.opname)),
                "OpenCL C's work-group functions take scalars",
            ));
        }
        let bits = match slot {
            SlotKind::Int(bits) | SlotKind::Float(bits) => bits,
            SlotKind::Bool => 1,
            SlotKind::Ptr => 64,
        };
        let (op, src, index) = match inst.class.opcode {
            S::GroupAll | S::GroupAny => {
                let all = inst.class.opcode == S::GroupAll;
                let op = if all {
                    Collective::All
                } else {
                    Collective::Any
                };
                let src = self.val(id(inst, 1)?)?.slot;
                (op, src, src)
            }
            S::GroupBroadcast => {
                let index = self.val(id(inst, 2)?)?;
                if self.types.lanes(index.ty)?.1 != 1 {
                    return Err(TranslateError::unsupported(
                        "a broadcast from a 2- or 3-dimensional local id",
                        "broadcast from a linear local id",
                    ));
                }
                (
                    Collective::Broadcast,
                    self.val(id(inst, 1)?)?.slot,
                    index.slot,
                )
            }
            opcode => {
                let combine = group_op(opcode)?;
                let operation = match inst.operands.get(1) {
                    Some(Operand::GroupOperation(g)) => *g,
                    other => {
                        return Err(TranslateError::malformed(format!(
                            "a group operation, found {other:?}"
                        )))
                    }
                };
                let op = match operation {
                    GroupOperation::Reduce => Collective::Reduce(combine),
                    GroupOperation::InclusiveScan => Collective::InclusiveScan(combine),
                    GroupOperation::ExclusiveScan => Collective::ExclusiveScan(combine),
                    other => {
                        return Err(TranslateError::unsupported(
                            format!("group operation {other:?}"),
                            "reductions and scans are interpreted",
                        ))
                    }
                };
                let src = self.val(id(inst, 2)?)?.slot;
                (op, src, src)
            }
        };
        self.out.uses_barrier = true;
        self.emit(Op::Barrier { fences: Fences::ALL });
        let dst = self.val(rid)?.slot;
        self.emit(Op::Collective { dst, src, index, op, bits, sub });
        self.count(inst, self.result_lane_type(inst), 1);
        Ok(())
    }
}

fn group_op(opcode: S) -> R<GroupOp> {
    Ok(match opcode {
        S::GroupIAdd => GroupOp::IAdd,
        S::GroupFAdd => GroupOp::FAdd,
        S::GroupFMin => GroupOp::FMin,
        S::GroupFMax => GroupOp::FMax,
        S::GroupUMin => GroupOp::UMin,
        S::GroupUMax => GroupOp::UMax,
        S::GroupSMin => GroupOp::SMin,
        S::GroupSMax => GroupOp::SMax,
        other => {
            return Err(TranslateError::malformed(format!(
                "{other:?} is not a group function"
            )))
        }
    })
}
