//! Which registers are live where a work-item stops at a barrier: the ones
//! it may read before writing them after it goes on. Only those are kept
//! across the barrier; keeping every register would keep every value alive
//! through the whole kernel, and cost a store and a load each.
//!
//! A backward analysis over the bytecode, context-insensitive: a `Ret`
//! may go back to after any call. Where it cannot tell, it takes a
//! register as live (more is kept, never less).

use super::emit::jumps;
use crate::bytecode::{Op, Reg};
use crate::program::Program;

/// The registers live on entry to each pc, as bits.
pub(super) struct Live {
    words: usize,
    bits: Vec<u64>,
}

impl Live {
    pub(super) fn of(program: &Program, registers: usize) -> Live {
        let code = &program.code;
        let words = registers.div_ceil(64);
        let mut live = Live {
            words,
            bits: vec![0; words * (code.len() + 1)],
        };
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
        Op::Jump { .. } | Op::Call { .. } | Op::Branch { .. } | Op::Switch { .. } => {
            jumps(program, op).into_iter().map(|t| t as usize).collect()
        }
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
pub(crate) type Spans = Vec<(Reg, u32)>;

pub(crate) fn reads_writes(op: &Op, program: &Program) -> (Spans, Spans) {
    let one = |r: Reg| (r, 1);
    let moves = |start: u32, len: u32| {
        let moves = &program.moves[start as usize..(start + len) as usize];
        let reads = moves.iter().map(|m| (m.src, m.n)).collect();
        (reads, moves.iter().map(|m| (m.dst, m.n)).collect())
    };
    match *op {
        Op::Mov { dst, src, n } => (vec![(src, n)], vec![(dst, n)]),
        Op::Moves { start, len } => moves(start, len),
        Op::Call {
            moves_start,
            moves_len,
            ..
        } => moves(moves_start, moves_len),
        Op::Splat { dst, src, n } => (vec![one(src)], vec![(dst, n as u32)]),
        Op::Add32 { dst, a, b }
        | Op::Sub32 { dst, a, b }
        | Op::Mul32 { dst, a, b }
        | Op::Shl32 { dst, a, b }
        | Op::LShr32 { dst, a, b }
        | Op::Rotl32 { dst, a, b }
        | Op::And { dst, a, b }
        | Op::Or { dst, a, b }
        | Op::Xor { dst, a, b }
        | Op::FAdd32 { dst, a, b }
        | Op::FSub32 { dst, a, b }
        | Op::FMul32 { dst, a, b } => (vec![one(a), one(b)], vec![one(dst)]),
        Op::ZExt32 { dst, src } | Op::SExt32 { dst, src } | Op::Trunc32 { dst, src } => {
            (vec![one(src)], vec![one(dst)])
        }
        Op::SubXorRotl32 { dst, a, b, k } | Op::XorSubRotl32 { dst, a, b, k } => {
            (vec![one(a), one(b), one(k)], vec![one(dst)])
        }
        Op::Offset { dst, base, .. } => (vec![one(base)], vec![one(dst)]),
        Op::Index {
            dst, base, index, ..
        } => (vec![one(base), one(index)], vec![one(dst)]),
        Op::Ptr {
            dst,
            base,
            terms_start,
            terms_len,
            ..
        } => {
            let terms =
                &program.terms[terms_start as usize..(terms_start as usize + terms_len as usize)];
            let reads = [one(base)]
                .into_iter()
                .chain(terms.iter().map(|t| one(t.reg)));
            (reads.collect(), vec![one(dst)])
        }
        Op::Cmp { n, dst, a, b, .. }
        | Op::Float { n, dst, a, b, .. }
        | Op::FCmp { n, dst, a, b, .. }
        | Op::Logic { n, dst, a, b, .. }
        | Op::Int { n, dst, a, b, .. } => {
            let n = n as u32;
            (vec![(a, n), (b, n)], vec![(dst, n)])
        }
        Op::IntUn { n, dst, a, .. }
        | Op::FloatUn { n, dst, a, .. }
        | Op::FTest { n, dst, a, .. }
        | Op::LNot { n, dst, a }
        | Op::Convert { n, dst, src: a, .. } => (vec![(a, n as u32)], vec![(dst, n as u32)]),
        Op::IntTer {
            n, dst, a, b, c, ..
        }
        | Op::FloatTer {
            n, dst, a, b, c, ..
        } => {
            let n = n as u32;
            (vec![(a, n), (b, n), (c, n)], vec![(dst, n)])
        }
        Op::Select {
            n,
            vector_cond,
            dst,
            cond,
            a,
            b,
        } => {
            let n = n as u32;
            let c = if vector_cond { n } else { 1 };
            (vec![(cond, c), (a, n), (b, n)], vec![(dst, n)])
        }
        Op::Builtin { dst, lanes, .. } => (Vec::new(), vec![(dst, lanes.min(3) as u32)]),
        Op::Load { dst, ptr, n, .. } => (vec![one(ptr)], vec![(dst, n as u32)]),
        Op::Store { src, ptr, n, .. } => (vec![one(ptr), (src, n as u32)], Vec::new()),
        Op::Atomic { dst, ptr, a, b, .. } => (vec![one(ptr), one(a), one(b)], vec![one(dst)]),
        Op::Branch { cond, .. } => (vec![one(cond)], Vec::new()),
        Op::Switch { sel, .. } => (vec![one(sel)], Vec::new()),
        Op::Ret { src, n } => (vec![(src, n)], Vec::new()),
        Op::Block { .. } | Op::Jump { .. } | Op::Barrier => (Vec::new(), Vec::new()),
        // Ops the tier does not compile never reach it (`emit::compiles`);
        // were one here, every register would count as read.
        _ => (
            vec![(Reg::new(0), program.init_regs.len() as u32)],
            Vec::new(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytecode::Op;

    fn program(code: Vec<Op>, registers: usize) -> Program {
        Program {
            code,
            init_regs: vec![0; registers],
            ..Program::default()
        }
    }

    #[test]
    fn a_register_is_live_from_its_write_to_its_last_read_and_a_loop_keeps_it() {
        let r = Reg::new;
        // 0: r1 = r0 + r0; 1: barrier; 2: r2 = r1 + r1; 3: store r2 at r0;
        // 4: branch on r3 back to 1 or on to 5: return.
        let code = vec![
            Op::Add32 {
                dst: r(1),
                a: r(0),
                b: r(0),
            },
            Op::Barrier,
            Op::Add32 {
                dst: r(2),
                a: r(1),
                b: r(1),
            },
            Op::Store {
                src: r(2),
                ptr: r(0),
                size: 4,
                n: 1,
                align: 4,
            },
            Op::Branch {
                cond: r(3),
                then: 1,
                other: 5,
            },
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
