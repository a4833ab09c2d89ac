//! One sampler type: llvm-spirv-15 declares `OpTypeSampler` once for the
//! constant samplers of a module and again for `sampler_t` parameters, and
//! spirv-val rejects a module with two declarations of a non-aggregate
//! type. The compile stage merges them here (every use of a later one names
//! the first), which changes nothing the module computes.

use crate::SpirvError;
use rspirv::binary::Assemble;
use rspirv::dr::Operand;
use spirv::{Op, Word};

/// The module with one `OpTypeSampler`, or `None` when it has at most one
/// (the bytes are then left as they are).
pub fn merge_sampler_types(bytes: &[u8]) -> Result<Option<Vec<u8>>, SpirvError> {
    let mut module = crate::load(bytes)?;
    let samplers: Vec<Word> = module
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::TypeSampler)
        .filter_map(|i| i.result_id)
        .collect();
    let Some((&kept, merged)) = samplers.split_first() else {
        return Ok(None);
    };
    if merged.is_empty() {
        return Ok(None);
    }
    let merged = |id: Word| merged.contains(&id);
    module
        .types_global_values
        .retain(|i| !(i.class.opcode == Op::TypeSampler && i.result_id.is_some_and(merged)));
    // Names and decorations of the merged declarations go with them.
    let names_it = |i: &rspirv::dr::Instruction| matches!(i.operands.first(), Some(Operand::IdRef(id)) if merged(*id));
    module.debug_names.retain(|i| !names_it(i));
    module.annotations.retain(|i| !names_it(i));
    let rename = |i: &mut rspirv::dr::Instruction| {
        if i.result_type.is_some_and(merged) {
            i.result_type = Some(kept);
        }
        for operand in &mut i.operands {
            if let Operand::IdRef(id) = operand {
                if merged(*id) {
                    *id = kept;
                }
            }
        }
    };
    module.types_global_values.iter_mut().for_each(rename);
    for function in &mut module.functions {
        if let Some(def) = &mut function.def {
            rename(def);
        }
        function.parameters.iter_mut().for_each(rename);
        for block in &mut function.blocks {
            block.instructions.iter_mut().for_each(rename);
        }
    }
    let words = module.assemble();
    Ok(Some(words.iter().flat_map(|w| w.to_le_bytes()).collect()))
}
