//! No structured-control-flow declarations: `OpLoopMerge` and
//! `OpSelectionMerge` are for shaders; a kernel module needs none, and
//! llvm-spirv-15's can break spirv-val's rules (a block named the merge
//! block of two headers), as for a library's kernels built unoptimised.
//! Nothing reads them (the interpreter finds loops from the control flow
//! itself), so the compile stage drops them, which changes nothing the
//! module computes.

use crate::SpirvError;
use rspirv::binary::Assemble;
use spirv::Op;

fn is_merge(op: Op) -> bool {
    matches!(op, Op::LoopMerge | Op::SelectionMerge)
}

/// The module without merge declarations, or `None` when it has none (the
/// bytes are then left as they are).
pub fn strip_merges(bytes: &[u8]) -> Result<Option<Vec<u8>>, SpirvError> {
    let mut module = crate::load(bytes)?;
    let mut stripped = false;
    for block in module
        .functions
        .iter_mut()
        .flat_map(|f| f.blocks.iter_mut())
    {
        let before = block.instructions.len();
        block.instructions.retain(|i| !is_merge(i.class.opcode));
        stripped |= block.instructions.len() != before;
    }
    if !stripped {
        return Ok(None);
    }
    let words = module.assemble();
    Ok(Some(words.iter().flat_map(|w| w.to_le_bytes()).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use spirv::{FunctionControl, LoopControl, SelectionControl};

    /// A kernel whose loop and branch carry merge declarations.
    fn with_merges() -> Vec<u8> {
        let (mut b, void, fn_ty) = crate::test_modules::kernel_builder();
        let boolean = b.type_bool();
        let yes = b.constant_true(boolean);
        let f = b
            .begin_function(void, None, FunctionControl::NONE, fn_ty)
            .unwrap();
        b.name(f, "k");
        let (header, body, merge) = (b.id(), b.id(), b.id());
        b.begin_block(None).unwrap();
        b.branch(header).unwrap();
        b.begin_block(Some(header)).unwrap();
        b.loop_merge(merge, body, LoopControl::NONE, vec![])
            .unwrap();
        b.branch(body).unwrap();
        b.begin_block(Some(body)).unwrap();
        b.selection_merge(merge, SelectionControl::NONE).unwrap();
        b.branch_conditional(yes, merge, header, vec![]).unwrap();
        b.begin_block(Some(merge)).unwrap();
        b.ret().unwrap();
        crate::test_modules::finish_kernel(b, f)
    }

    #[test]
    fn merge_declarations_are_dropped_and_the_rest_kept() {
        let bytes = with_merges();
        let stripped = strip_merges(&bytes).unwrap().expect("it has merges");
        let module = crate::load(&stripped).unwrap();
        let ops: Vec<Op> = module.functions[0]
            .blocks
            .iter()
            .flat_map(|b| b.instructions.iter().map(|i| i.class.opcode))
            .collect();
        assert_eq!(
            ops,
            [Op::Branch, Op::Branch, Op::BranchConditional, Op::Return]
        );
        assert_eq!(strip_merges(&stripped).unwrap(), None, "none left");
    }
}
