//! Calls a module cannot make: to functions it declares but does not define.
//!
//! A helper declared C99 `inline` without `static` is only an inline
//! definition; where clang does not inline every call, the module calls a
//! function it imports and nothing provides.

use rspirv::dr::{Module, Operand};
use spirv::Op;
use std::collections::{BTreeSet, HashSet};

/// The names of the functions `module` calls but has no body for, sorted.
pub fn undefined_calls(module: &Module) -> Vec<String> {
    let bodiless: HashSet<u32> = module
        .functions
        .iter()
        .filter(|f| f.blocks.is_empty())
        .filter_map(|f| f.def.as_ref()?.result_id)
        .collect();
    let called: BTreeSet<u32> = module
        .functions
        .iter()
        .flat_map(|f| &f.blocks)
        .flat_map(|b| &b.instructions)
        .filter(|i| i.class.opcode == Op::FunctionCall)
        .filter_map(|i| match i.operands.first() {
            Some(Operand::IdRef(callee)) if bodiless.contains(callee) => Some(*callee),
            _ => None,
        })
        .collect();
    let mut names: Vec<String> = called.into_iter().map(|id| name_of(module, id)).collect();
    names.sort();
    names
}

fn name_of(module: &Module, id: u32) -> String {
    module
        .debug_names
        .iter()
        .find(|i| i.class.opcode == Op::Name && i.operands.first() == Some(&Operand::IdRef(id)))
        .and_then(|i| match i.operands.get(1) {
            Some(Operand::LiteralString(name)) => Some(name.clone()),
            _ => None,
        })
        .unwrap_or_else(|| format!("%{id}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_to_a_declared_function_is_named() {
        let (mut b, void, fn_type) = crate::test_modules::kernel_builder();
        let helper = b
            .begin_function(void, None, spirv::FunctionControl::NONE, fn_type)
            .unwrap();
        b.end_function().unwrap();
        b.name(helper, "square");
        let kernel = b
            .begin_function(void, None, spirv::FunctionControl::NONE, fn_type)
            .unwrap();
        b.begin_block(None).unwrap();
        b.function_call(void, None, helper, vec![]).unwrap();
        b.ret().unwrap();
        b.end_function().unwrap();
        b.entry_point(spirv::ExecutionModel::Kernel, kernel, "k", vec![]);
        let module = b.module();
        assert_eq!(undefined_calls(&module), vec!["square".to_string()]);
    }

    #[test]
    fn a_module_that_defines_what_it_calls_has_none() {
        let module = crate::load(&crate::test_modules::sample_module_bytes()).unwrap();
        assert!(undefined_calls(&module).is_empty());
    }
}
