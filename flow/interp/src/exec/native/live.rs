//! Which registers are live where a work-item stops at a barrier: the ones
//! it may read before writing them after it goes on. Only those are kept
//! across the barrier; keeping every register would keep every value alive
//! through the whole kernel, and cost a store and a load each.
//!
//! A backward analysis over the bytecode, context-insensitive: a `Ret`
//! may go back to after any call. Where it cannot tell, it takes a
//! register as live (more is kept, never less).

use super::compiles;
use clflow_bytecode::program::Program;
use clflow_bytecode::{Op, Operands, Reg, Span};

/// The registers live on entry to each pc, as bits.
pub(super) struct Live {
    words: usize,
    bits: Vec<u64>,
}

impl Live {
    pub(super) fn of(program: &Program, registers: usize) -> Live {
        let code = &program.code;
        let words = registers.div_ceil(64);
        let mut live = Live { words, bits: vec![0; words * (code.len() + 1)] };
        let returns: Vec<usize> = code
            .iter()
            .enumerate()
            .filter(|(_, op)| matches!(op, Op::Call { .. }))
            .map(|(pc, _)| pc + 1)
            .collect();
        let effects: Vec<(Spans, Spans)> =
            code.iter().map(|op| reads_writes(op, program)).collect();
        let mut changed = true;
        let mut row = vec![0u64; words];
        while changed {
            changed = false;
            for pc in (0..code.len()).rev() {
                row.fill(0);
                for next in successors(program, pc, &returns) {
                    let after = &live.bits[next * words..(next + 1) * words];
                    for (word, bits) in row.iter_mut().zip(after) {
                        *word |= bits;
                    }
                }
                let (reads, writes) = &effects[pc];
                for &(r, n) in writes {
                    for k in 0..n {
                        let i = (r + k).index();
                        row[i / 64] &= !(1 << (i % 64));
                    }
                }
                for &(r, n) in reads {
                    for k in 0..n {
                        let i = (r + k).index();
                        row[i / 64] |= 1 << (i % 64);
                    }
                }
                let at = &mut live.bits[pc * words..(pc + 1) * words];
                if at != row.as_slice() {
                    at.copy_from_slice(&row);
                    changed = true;
                }
            }
        }
        live
    }

    /// Whether register `r` is live on entry to `pc`.
    pub(super) fn at(&self, pc: usize, r: usize) -> bool {
        self.bits[pc * self.words + r / 64] & (1 << (r % 64)) != 0
    }
}

/// Where control may go after `pc`; `returns` are the pcs after calls.
fn successors(program: &Program, pc: usize, returns: &[usize]) -> Vec<usize> {
    let op = &program.code[pc];
    match op {
        Op::Jump { .. } | Op::Call { .. } | Op::Branch { .. } | Op::Switch { .. } => program
            .targets(op)
            .into_iter()
            .map(|t| t as usize)
            .collect(),
        Op::Ret { .. } => returns.to_vec(),
        // A superinstruction stands for itself and the two ops after it.
        Op::SubXorRotl32 { .. } | Op::XorSubRotl32 { .. } => vec![pc + 3],
        _ => vec![pc + 1],
    }
    .into_iter()
    .filter(|&next| next < program.code.len())
    .collect()
}

/// The register spans an op of the compiled tier reads and writes.
pub(crate) type Spans = Vec<Span>;

/// An op's operands as the compiled tier takes them ([`Operands`]): an op
/// not of the tier's kinds (`compiles`, at any size or width) never
/// reaches it, and counts as reading every register and writing none,
/// which keeps the liveness, and the chains that share this view, safe.
pub(crate) fn reads_writes(op: &Op, program: &Program) -> (Spans, Spans) {
    let of_tier =
        compiles(op) || matches!(op, Op::Load { .. } | Op::Store { .. } | Op::Atomic { .. });
    if of_tier {
        let Operands { reads, writes } = Operands::of(op, program.tables());
        (reads, writes)
    } else {
        (
            vec![(Reg::new(0), program.init_regs.len() as u32)],
            Vec::new(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clflow_bytecode::Op;

    fn program(code: Vec<Op>, registers: usize) -> Program {
        Program { code, init_regs: vec![0; registers], ..Program::default() }
    }

    #[test]
    fn a_register_is_live_from_its_write_to_its_last_read_and_a_loop_keeps_it() {
        let r = Reg::new;
        // 0: r1 = r0 + r0; 1: barrier; 2: r2 = r1 + r1; 3: store r2 at r0;
        // 4: branch on r3 back to 1 or on to 5: return.
        let code = vec![
            Op::Add32 { dst: r(1), a: r(0), b: r(0) },
            Op::Barrier { fences: clflow_bytecode::Fences::ALL },
            Op::Add32 { dst: r(2), a: r(1), b: r(1) },
            Op::Store { src: r(2), ptr: r(0), size: 4, n: 1, align: 4 },
            Op::Branch { cond: r(3), then: 1, other: 5 },
            Op::Ret { src: r(0), n: 0 },
        ];
        let live = Live::of(&program(code, 4), 4);
        // After the barrier r1 is read (and again on the way round); r2 is
        // written before it is read.
        assert!(live.at(2, 1) && live.at(2, 0) && live.at(2, 3));
        assert!(!live.at(2, 2));
        // r1 is written at 0: not live before it.
        assert!(!live.at(0, 1));
        assert!(!live.at(5, 1));
    }
}
