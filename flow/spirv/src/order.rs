//! Block order: every block after its dominator.
//!
//! SPIR-V requires each block of a function to appear after the blocks that
//! dominate it. llvm-spirv-15 breaks the rule for some loop nests (a loop
//! behind a guard, a triangular loop nest) and spirv-val then rejects a
//! module of a valid kernel. Order does not change what a module computes:
//! branches name their targets and `OpPhi` its parents. So the compile stage
//! restores the rule here, moving as few blocks as it can, and validates the
//! result.

use crate::load::{words_of, HEADER_WORDS};
use crate::SpirvError;
use petgraph::algo::dominators;
use petgraph::graphmap::DiGraphMap;
use rspirv::dr::{Function, Operand};
use spirv::Op;
use std::collections::{HashMap, HashSet};

/// The module with every function's blocks after their dominators, or
/// `None` when it already is so (the bytes are then left as they are).
pub fn order_blocks(bytes: &[u8]) -> Result<Option<Vec<u8>>, SpirvError> {
    let module = crate::load(bytes)?;
    let orders: Vec<Option<Vec<u32>>> = module.functions.iter().map(dominance_order).collect();
    if orders.iter().all(Option::is_none) {
        return Ok(None);
    }
    let words = words_of(bytes)?;
    Ok(Some(rewrite(&words, &orders)))
}

/// The labels of `function`'s blocks in an order where each follows its
/// immediate dominator, or `None` when the present order already does.
///
/// Blocks keep their places except those that come before their immediate
/// dominator: each of these waits, and follows that dominator (with anything
/// waiting on it in turn) as soon as it is placed.
fn dominance_order(function: &Function) -> Option<Vec<u32>> {
    let labels: Vec<u32> = function
        .blocks
        .iter()
        .filter_map(|b| b.label.as_ref()?.result_id)
        .collect();
    let entry = *labels.first()?;
    let mut graph = DiGraphMap::<u32, ()>::new();
    for (block, &label) in function.blocks.iter().zip(&labels) {
        graph.add_node(label);
        for target in block
            .instructions
            .last()
            .map(successors)
            .unwrap_or_default()
        {
            graph.add_edge(label, target, ());
        }
    }
    let tree = dominators::simple_fast(&graph, entry);
    let idom = |label: u32| tree.immediate_dominator(label);

    let mut placed = HashSet::new();
    let mut waiting: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut order = Vec::with_capacity(labels.len());
    for &label in &labels {
        match idom(label) {
            Some(dominator) if !placed.contains(&dominator) => {
                waiting.entry(dominator).or_default().push(label)
            }
            _ => place(label, &mut placed, &mut waiting, &mut order),
        }
    }
    (order != labels).then_some(order)
}

/// Places `label`, then whatever waited on it, depth first.
fn place(
    label: u32,
    placed: &mut HashSet<u32>,
    waiting: &mut HashMap<u32, Vec<u32>>,
    order: &mut Vec<u32>,
) {
    placed.insert(label);
    order.push(label);
    for next in waiting.remove(&label).unwrap_or_default() {
        place(next, placed, waiting, order);
    }
}

/// The blocks a terminator may branch to.
fn successors(terminator: &rspirv::dr::Instruction) -> Vec<u32> {
    let ids = terminator
        .operands
        .iter()
        .filter_map(|operand| match operand {
            Operand::IdRef(id) => Some(*id),
            _ => None,
        });
    match terminator.class.opcode {
        Op::Branch => ids.collect(),
        // The first id is the condition or the selector.
        Op::BranchConditional | Op::Switch => ids.skip(1).collect(),
        _ => Vec::new(),
    }
}

/// The module's words with each function's blocks moved to `orders`'
/// order; everything else, byte for byte, as it was.
fn rewrite(words: &[u32], orders: &[Option<Vec<u32>>]) -> Vec<u8> {
    let mut out: Vec<u32> = words[..HEADER_WORDS].to_vec();
    let mut function = 0;
    // The blocks of the function being copied: label → its words.
    let mut blocks: Vec<(u32, Vec<u32>)> = Vec::new();
    let mut at = HEADER_WORDS;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        let instruction = &words[at..at + count];
        let opcode = words[at] & 0xffff;
        if opcode == Op::Label as u32 {
            blocks.push((instruction[1], Vec::new()));
        }
        if opcode == Op::FunctionEnd as u32 {
            let order = orders.get(function).cloned().flatten();
            emit_blocks(&mut out, std::mem::take(&mut blocks), order);
            function += 1;
        }
        match blocks.last_mut() {
            Some((_, body)) => body.extend_from_slice(instruction),
            None => out.extend_from_slice(instruction),
        }
        at += count;
    }
    out.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn emit_blocks(out: &mut Vec<u32>, blocks: Vec<(u32, Vec<u32>)>, order: Option<Vec<u32>>) {
    let Some(order) = order else {
        blocks.iter().for_each(|(_, body)| out.extend(body));
        return;
    };
    let mut by_label: HashMap<u32, Vec<u32>> = blocks.into_iter().collect();
    for label in order {
        if let Some(body) = by_label.remove(&label) {
            out.extend(body);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel-style function whose blocks are written entry, C, B, where
    /// B branches to C: C comes before its dominator B.
    fn out_of_order_module() -> Vec<u8> {
        let (mut b, void, fn_type) = crate::test_modules::kernel_builder();
        let f = b
            .begin_function(void, None, spirv::FunctionControl::NONE, fn_type)
            .unwrap();
        let entry = b.id();
        let later = b.id();
        let middle = b.id();
        b.begin_block(Some(entry)).unwrap();
        b.branch(middle).unwrap();
        b.begin_block(Some(later)).unwrap();
        b.ret().unwrap();
        b.begin_block(Some(middle)).unwrap();
        b.branch(later).unwrap();
        crate::test_modules::finish_kernel(b, f)
    }

    fn block_labels(bytes: &[u8]) -> Vec<u32> {
        let module = crate::load(bytes).unwrap();
        module.functions[0]
            .blocks
            .iter()
            .map(|b| b.label.as_ref().unwrap().result_id.unwrap())
            .collect()
    }

    #[test]
    fn a_block_before_its_dominator_moves_after_it() {
        let bytes = out_of_order_module();
        let before = block_labels(&bytes);
        let fixed = order_blocks(&bytes).unwrap().expect("the order is wrong");
        let after = block_labels(&fixed);
        assert_eq!(after, vec![before[0], before[2], before[1]]);
        assert_eq!(fixed.len(), bytes.len());
        // Fixed once, it stays as it is.
        assert_eq!(order_blocks(&fixed).unwrap(), None);
    }

    #[test]
    fn a_module_in_order_is_left_alone() {
        let bytes = crate::test_modules::sample_module_bytes();
        assert_eq!(order_blocks(&bytes).unwrap(), None);
    }
}
