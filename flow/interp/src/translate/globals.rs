//! Module scope: types, constants and program-scope variables, before any
//! function is translated.

use super::*;
use crate::memory;
use crate::types::check_supported;

impl<'m> Translator<'m> {
    pub(super) fn globals(&mut self) -> R<()> {
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

    pub(super) fn global(&mut self, inst: &Instruction) -> R<()> {
        let rid = inst.result_id.unwrap_or(0);
        match inst.class.opcode {
            // Decoded with the module (`clflow_spirv::types`); here only
            // whether the interpreter runs them.
            S::TypeVoid
            | S::TypeBool
            | S::TypeInt
            | S::TypeFloat
            | S::TypeVector
            | S::TypeArray
            | S::TypeRuntimeArray
            | S::TypeStruct
            | S::TypePointer
            | S::TypeFunction
            | S::TypeEvent
            | S::TypeOpaque
            | S::TypeImage
            | S::TypeSampler
            | S::TypeSampledImage => check_supported(&self.types, rid)?,
            S::ConstantSampler => self.constant_sampler(inst)?,
            S::TypeForwardPointer => {}
            S::Constant | S::SpecConstant => {
                let (rid, ty) = result(inst)?;
                let raw = literal(inst, 0)?;
                let (s, _) = self.types.lanes(ty)?;
                let value = match s {
                    SlotKind::Int(bits) => raw & crate::opencl_std::mask(bits),
                    _ => raw,
                };
                if let SlotKind::Int(_) = s {
                    self.regs.const_ints.insert(rid, value);
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
                let mut sources = Vec::new();
                for i in 0..inst.operands.len() {
                    let part = self.val(id(inst, i)?)?;
                    let n = self.types.slots(part.ty)?;
                    for k in 0..n {
                        values.push(self.init_value(part.slot + k));
                        sources.push(part.slot + k);
                    }
                }
                if values.len() as u32 != self.types.slots(ty)? {
                    return Err(TranslateError::malformed(
                        "composite constant of the wrong size",
                    ));
                }
                self.constant(rid, ty, values)?;
                let slot = self.val(rid)?.slot;
                self.carry_pointers(&sources, slot);
            }
            S::SpecConstantOp => self.spec_constant_op(inst)?,
            S::Variable => self.global_variable(inst)?,
            S::String | S::Line | S::NoLine | S::ExtInst => {}
            S::TypePipe => {
                return Err(TranslateError::unsupported(
                    format!("{} (pipes)", spirv_name(inst.class.opname)),
                    "clflow counts kernels over buffers and images",
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

    pub(super) fn init_value(&self, slot: Reg) -> u64 {
        self.regs
            .init
            .iter()
            .rev()
            .find(|(s, _)| *s == slot)
            .map(|(_, v)| *v)
            .unwrap_or(0)
    }

    pub(super) fn constant(&mut self, rid: Word, ty: Word, values: Vec<u64>) -> R<()> {
        let slot = self.alloc(values.len() as u32)?;
        for (i, v) in values.into_iter().enumerate() {
            self.regs.const_slots.insert(slot + i as u32, v);
            if v != 0 {
                self.regs.init.push((slot + i as u32, v));
            }
        }
        self.regs.values.insert(rid, Val { slot, ty });
        Ok(())
    }

    /// The bytes of a constant as laid out in memory.
    pub(super) fn constant_bytes(&self, cid: Word, ty: Word) -> R<Vec<u8>> {
        let Layout { size, .. } = self.types.layout(ty)?;
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

    pub(super) fn global_variable(&mut self, inst: &Instruction) -> R<()> {
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
                    B::WorkgroupSize => Builtin::LocalSize,
                    B::EnqueuedWorkgroupSize => Builtin::EnqueuedLocalSize,
                    B::NumWorkgroups => Builtin::NumGroups,
                    B::GlobalOffset => Builtin::GlobalOffset,
                    B::WorkDim => Builtin::WorkDim,
                    B::GlobalLinearId => Builtin::GlobalLinearId,
                    B::LocalInvocationIndex => Builtin::LocalLinearId,
                    B::SubgroupSize => Builtin::SubGroupSize,
                    B::SubgroupMaxSize => Builtin::SubGroupMaxSize,
                    B::NumSubgroups => Builtin::NumSubGroups,
                    B::NumEnqueuedSubgroups => Builtin::EnqueuedNumSubGroups,
                    B::SubgroupId => Builtin::SubGroupId,
                    B::SubgroupLocalInvocationId => Builtin::SubGroupLocalId,
                    other => {
                        return Err(TranslateError::unsupported(
                            format!("work-item builtin {other:?}"),
                            "this builtin is outside what clflow interprets",
                        ))
                    }
                };
                self.regs.builtins.insert(rid, which);
                return Ok(());
            }
            StorageClass::Workgroup => {
                let (size, align) =
                    self.bounded(pointee, "a program-scope __local variable", MAX_LOCAL_BYTES)?;
                self.storage.local_vars.push((
                    size,
                    align,
                    format!("program-scope variable `{label}`"),
                ));
                (memory::SPACE_LOCAL, self.storage.local_vars.len() - 1)
            }
            StorageClass::UniformConstant | StorageClass::CrossWorkgroup => {
                self.bounded(
                    pointee,
                    "a program-scope variable",
                    MAX_PROGRAM_BUFFER_BYTES,
                )?;
                let bytes = match initializer {
                    Some(c) => self.constant_bytes(c, pointee)?,
                    None => vec![0; self.types.layout(pointee)?.size as usize],
                };
                let space = if class == StorageClass::CrossWorkgroup {
                    "__global"
                } else {
                    "__constant"
                };
                self.storage.global_vars.push(ProgramBuffer {
                    bytes,
                    label: format!("program-scope variable `{label}`"),
                    space,
                });
                let index = self.storage.global_vars.len() - 1;
                if let Some(c) = initializer {
                    self.relocations_of(index, c, pointee)?;
                }
                (memory::SPACE_GLOBAL, index)
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
        self.storage
            .pending_globals
            .push((rid, pointer.0, pointer.1));
        Ok(())
    }
}
