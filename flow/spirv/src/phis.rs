//! One `OpPhi` entry a predecessor. LLVM gives a phi one entry per edge, so
//! a switch whose cases share a target makes a phi that names the switch's
//! block once per case (all with one value, as LLVM requires);
//! llvm-spirv-15 writes them as they are, and spirv-val wants one entry per
//! predecessor block. Keeping the first of each changes nothing the module
//! computes.

use crate::SpirvError;
use rspirv::binary::Assemble;
use rspirv::dr::Operand;
use spirv::Op;

/// The module with each phi's repeated predecessors dropped, or `None`
/// when no phi repeats one (the bytes are then left as they are).
pub fn dedupe_phi_parents(bytes: &[u8]) -> Result<Option<Vec<u8>>, SpirvError> {
    let mut module = crate::load(bytes)?;
    let mut changed = false;
    let phis = module
        .functions
        .iter_mut()
        .flat_map(|f| f.blocks.iter_mut())
        .flat_map(|b| b.instructions.iter_mut())
        .filter(|i| i.class.opcode == Op::Phi);
    for phi in phis {
        let mut parents = Vec::new();
        let mut kept = Vec::with_capacity(phi.operands.len());
        for pair in phi.operands.chunks(2) {
            if let [_, Operand::IdRef(parent)] = pair {
                if parents.contains(parent) {
                    changed = true;
                    continue;
                }
                parents.push(*parent);
            }
            kept.extend_from_slice(pair);
        }
        phi.operands = kept;
    }
    if !changed {
        return Ok(None);
    }
    let words = module.assemble();
    Ok(Some(words.iter().flat_map(|w| w.to_le_bytes()).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use spirv::FunctionControl;

    /// A kernel whose switch sends two cases to one block, whose phi names
    /// the switch's block twice.
    fn with_repeated_parent() -> Vec<u8> {
        let (mut b, void, fn_ty) = crate::test_modules::kernel_builder();
        let uint = b.type_int(32, 0);
        let (zero, one) = (b.constant_bit32(uint, 0), b.constant_bit32(uint, 1));
        let f = b
            .begin_function(void, None, FunctionControl::NONE, fn_ty)
            .unwrap();
        b.name(f, "k");
        let (entry, other, join) = (b.id(), b.id(), b.id());
        b.begin_block(Some(entry)).unwrap();
        b.switch(zero, other, vec![(0u32.into(), join), (1u32.into(), join)])
            .unwrap();
        b.begin_block(Some(other)).unwrap();
        b.branch(join).unwrap();
        b.begin_block(Some(join)).unwrap();
        b.phi(uint, None, vec![(one, entry), (one, entry), (zero, other)])
            .unwrap();
        b.ret().unwrap();
        crate::test_modules::finish_kernel(b, f)
    }

    #[test]
    fn a_phi_names_each_predecessor_once() {
        let bytes = with_repeated_parent();
        let deduped = dedupe_phi_parents(&bytes).unwrap().expect("it repeats one");
        let module = crate::load(&deduped).unwrap();
        let phi = module.functions[0]
            .blocks
            .iter()
            .flat_map(|b| &b.instructions)
            .find(|i| i.class.opcode == Op::Phi)
            .unwrap();
        assert_eq!(phi.operands.len(), 4, "{:?}", phi.operands);
        assert_eq!(dedupe_phi_parents(&deduped).unwrap(), None, "none left");
    }
}
