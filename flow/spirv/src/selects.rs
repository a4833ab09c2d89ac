//! Whole vectors chosen by one condition. LLVM folds `if (c.x < p.x) p = c;`
//! on a `float4` into a `select` of the vector by one `i1`, which
//! llvm-spirv-15 writes as an `OpSelect` of a vector with a scalar
//! condition: legal only from SPIR-V 1.4, so spirv-val rejects it in the
//! 1.0 module the translator writes. The compile stage gives such a select
//! a vector of copies of its condition (`OpCompositeConstruct`), which
//! chooses the same lanes.

use crate::SpirvError;
use rspirv::binary::Assemble;
use rspirv::dr::{Instruction, Module, Operand};
use spirv::{Op, Word};
use std::collections::HashMap;

/// The module with every vector `OpSelect` by a scalar condition given a
/// vector condition, or `None` when it has none (the bytes are then left
/// as they are).
pub fn splat_select_conditions(bytes: &[u8]) -> Result<Option<Vec<u8>>, SpirvError> {
    let mut module = crate::load(bytes)?;
    let types = result_types(&module);
    let lanes_of = vector_lanes(&module);
    let is_bool = |id: Word| {
        module
            .types_global_values
            .iter()
            .any(|i| i.result_id == Some(id) && i.class.opcode == Op::TypeBool)
    };
    // (function, block, index of the select, lanes, its condition)
    let mut found = Vec::new();
    for (f, function) in module.functions.iter().enumerate() {
        for (b, block) in function.blocks.iter().enumerate() {
            for (k, inst) in block.instructions.iter().enumerate() {
                let Some(Operand::IdRef(condition)) = inst.operands.first() else {
                    continue;
                };
                let lanes = inst.result_type.and_then(|t| lanes_of.get(&t).copied());
                let scalar = types.get(condition).is_some_and(|t| is_bool(*t));
                if let (Op::Select, Some(lanes), true) = (inst.class.opcode, lanes, scalar) {
                    found.push((f, b, k, lanes, *condition));
                }
            }
        }
    }
    if found.is_empty() {
        return Ok(None);
    }
    let mut bool_vectors: HashMap<u32, Word> = HashMap::new();
    // Inserting shifts the later instructions of a block: go from the end.
    for &(f, b, k, lanes, condition) in found.iter().rev() {
        let vector = match bool_vectors.get(&lanes) {
            Some(&id) => id,
            None => {
                let id = bool_vector(&mut module, lanes);
                bool_vectors.insert(lanes, id);
                id
            }
        };
        let splat = next_id(&mut module);
        let copies = vec![Operand::IdRef(condition); lanes as usize];
        let construct = Instruction::new(Op::CompositeConstruct, Some(vector), Some(splat), copies);
        let block = &mut module.functions[f].blocks[b];
        block.instructions[k].operands[0] = Operand::IdRef(splat);
        block.instructions.insert(k, construct);
    }
    let words = module.assemble();
    Ok(Some(words.iter().flat_map(|w| w.to_le_bytes()).collect()))
}

/// The type of every id that has one.
fn result_types(module: &Module) -> HashMap<Word, Word> {
    let globals = module.types_global_values.iter();
    let functions = module.functions.iter().flat_map(|f| {
        let blocks = f.blocks.iter().flat_map(|b| b.instructions.iter());
        f.parameters.iter().chain(blocks)
    });
    globals
        .chain(functions)
        .filter_map(|i| Some((i.result_id?, i.result_type?)))
        .collect()
}

/// The lane count of every vector type.
fn vector_lanes(module: &Module) -> HashMap<Word, u32> {
    module
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::TypeVector)
        .filter_map(|i| match (i.result_id, i.operands.get(1)) {
            (Some(id), Some(Operand::LiteralBit32(lanes))) => Some((id, *lanes)),
            _ => None,
        })
        .collect()
}

/// The module's vector of `lanes` bools, declared after its bool where it
/// has none.
fn bool_vector(module: &mut Module, lanes: u32) -> Word {
    let bool_at = module
        .types_global_values
        .iter()
        .position(|i| i.class.opcode == Op::TypeBool)
        .expect("a select by a bool condition has a bool type");
    let bool_id = module.types_global_values[bool_at]
        .result_id
        .expect("a type has an id");
    let declared = module.types_global_values.iter().find(|i| {
        i.class.opcode == Op::TypeVector
            && i.operands.first() == Some(&Operand::IdRef(bool_id))
            && i.operands.get(1) == Some(&Operand::LiteralBit32(lanes))
    });
    if let Some(id) = declared.and_then(|i| i.result_id) {
        return id;
    }
    let id = next_id(module);
    let operands = vec![Operand::IdRef(bool_id), Operand::LiteralBit32(lanes)];
    let vector = Instruction::new(Op::TypeVector, None, Some(id), operands);
    module.types_global_values.insert(bool_at + 1, vector);
    id
}

/// A fresh id, the module's bound raised past it.
fn next_id(module: &mut Module) -> Word {
    let header = module
        .header
        .as_mut()
        .expect("a loaded module has a header");
    let id = header.bound;
    header.bound += 1;
    id
}

#[cfg(test)]
mod tests {
    use super::*;
    use spirv::FunctionControl;

    /// A kernel choosing one float4 of two by a scalar compare, as
    /// llvm-spirv-15 writes it.
    fn select_by_scalar() -> Vec<u8> {
        let (mut b, void, fn_ty) = crate::test_modules::kernel_builder();
        let float = b.type_float(32, None);
        let float4 = b.type_vector(float, 4);
        let boolean = b.type_bool();
        let (one, two) = (
            b.constant_bit32(float, 1.0f32.to_bits()),
            b.constant_bit32(float, 2.0f32.to_bits()),
        );
        let ones = b.constant_composite(float4, vec![one; 4]);
        let twos = b.constant_composite(float4, vec![two; 4]);
        let f = b
            .begin_function(void, None, FunctionControl::NONE, fn_ty)
            .unwrap();
        b.begin_block(None).unwrap();
        let less = b.f_ord_less_than(boolean, None, one, two).unwrap();
        b.select(float4, None, less, ones, twos).unwrap();
        b.ret().unwrap();
        crate::test_modules::finish_kernel(b, f)
    }

    #[test]
    fn a_vector_select_by_one_bool_takes_a_vector_of_it() {
        let fixed = splat_select_conditions(&select_by_scalar())
            .unwrap()
            .expect("the select's condition is scalar");
        let module = crate::load(&fixed).unwrap();
        let is_bool = |id: &Operand| {
            let bools = module.types_global_values.iter();
            let bools = bools.filter(|t| t.class.opcode == Op::TypeBool);
            matches!(id, Operand::IdRef(c) if bools.clone().any(|t| t.result_id == Some(*c)))
        };
        let bvec4 = module
            .types_global_values
            .iter()
            .find(|i| {
                i.class.opcode == Op::TypeVector
                    && i.operands[1] == Operand::LiteralBit32(4)
                    && is_bool(&i.operands[0])
            })
            .and_then(|i| i.result_id)
            .expect("a bool4 is declared");
        let body = &module.functions[0].blocks[0].instructions;
        let ops: Vec<Op> = body.iter().map(|i| i.class.opcode).collect();
        assert_eq!(
            ops,
            [
                Op::FOrdLessThan,
                Op::CompositeConstruct,
                Op::Select,
                Op::Return
            ]
        );
        let less = body[0].result_id.unwrap();
        assert_eq!(body[1].result_type, Some(bvec4));
        assert_eq!(body[1].operands, vec![Operand::IdRef(less); 4]);
        assert_eq!(
            body[2].operands[0],
            Operand::IdRef(body[1].result_id.unwrap())
        );
        // Fixed once, nothing is left to fix.
        assert_eq!(splat_select_conditions(&fixed).unwrap(), None);
    }
}
