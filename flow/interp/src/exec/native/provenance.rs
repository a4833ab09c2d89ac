//! Which global buffer each pointer register points into, where every
//! value it can take comes from one buffer's argument: an access through it
//! then needs no decoding, only a bound. A flow-insensitive analysis over
//! the registers' definitions: a register defined by pointer arithmetic on
//! another takes that one's buffer; any other definition, or two buffers,
//! leaves it unknown. Compiled code still checks every access, and one
//! that leaves the buffer goes the general way (`emit::Emitter::access`).

use super::live::reads_writes;
use crate::memory::{self, SPACE_GLOBAL};
use clflow_bytecode::program::Program;
use clflow_bytecode::{Op, Reg};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Base {
    /// No definition seen yet.
    None,
    Buffer(u32),
    /// Several buffers, or a value from elsewhere.
    Any,
}

impl Base {
    fn join(self, other: Base) -> Base {
        match (self, other) {
            (Base::None, b) | (b, Base::None) => b,
            (a, b) if a == b => a,
            _ => Base::Any,
        }
    }
}

/// For each register, the global buffer all its values point into, where
/// there is one; `regs` is the launch's register file.
pub(super) fn global_buffers(program: &Program, regs: &[u64]) -> Vec<Option<u32>> {
    let mut written = vec![false; regs.len()];
    let mark = |r: Reg, n: u32, written: &mut Vec<bool>| {
        for k in 0..n as usize {
            if let Some(w) = written.get_mut(r.index() + k) {
                *w = true;
            }
        }
    };
    for op in &program.code {
        for (r, n) in reads_writes(op, program).1 {
            mark(r, n, &mut written);
        }
        // A call's result registers are written by the callee's `Ret`.
        if let Op::Call { ret, ret_n, .. } = *op {
            mark(ret, ret_n, &mut written);
        }
    }
    let mut base: Vec<Base> = regs
        .iter()
        .zip(&written)
        .map(|(value, written)| match (written, memory::decode(*value)) {
            (true, _) => Base::None,
            (false, (SPACE_GLOBAL, buffer, 0)) => Base::Buffer(buffer as u32),
            (false, _) => Base::Any,
        })
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        let mut set = |r: Reg, b: Base, base: &mut Vec<Base>| {
            if let Some(slot) = base.get_mut(r.index()) {
                let joined = slot.join(b);
                changed |= joined != *slot;
                *slot = joined;
            }
        };
        for op in &program.code {
            let of = |r: Reg, base: &Vec<Base>| base.get(r.index()).copied().unwrap_or(Base::Any);
            match *op {
                Op::Index { dst, base: from, .. }
                | Op::Offset { dst, base: from, .. }
                | Op::Ptr { dst, base: from, .. } => {
                    let b = of(from, &base);
                    set(dst, b, &mut base);
                }
                Op::Mov { dst, src, n } => {
                    for k in 0..n {
                        let b = of(src + k, &base);
                        set(dst + k, b, &mut base);
                    }
                }
                Op::Moves { start, len } | Op::Call { moves_start: start, moves_len: len, .. } => {
                    for m in &program.moves[start as usize..(start + len) as usize] {
                        for k in 0..m.n {
                            let b = of(m.src + k, &base);
                            set(m.dst + k, b, &mut base);
                        }
                    }
                    if let Op::Call { ret, ret_n, .. } = *op {
                        for k in 0..ret_n {
                            set(ret + k, Base::Any, &mut base);
                        }
                    }
                }
                _ => {
                    for (r, n) in reads_writes(op, program).1 {
                        for k in 0..n {
                            set(r + k, Base::Any, &mut base);
                        }
                    }
                }
            }
        }
    }
    base.into_iter()
        .map(|b| match b {
            Base::Buffer(b) => Some(b),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clflow_bytecode::Move;

    #[test]
    fn pointer_arithmetic_on_an_argument_keeps_its_buffer_and_a_loaded_pointer_does_not() {
        let r = Reg::new;
        // r0: buffer 2's argument; r1: an index. r2 = r0 + 4 r1, r3 = r2 + 8,
        // r4 is r2 or r3 (a phi), r5 is loaded, r6 is r4 or r5.
        let code = vec![
            Op::Index {
                dst: r(2),
                base: r(0),
                index: r(1),
                bits: 32,
                stride: 4,
                disp: 0,
            },
            Op::Offset { dst: r(3), base: r(2), disp: 8 },
            Op::Moves { start: 0, len: 2 },
            Op::Load { dst: r(5), ptr: r(4), size: 8, n: 1, align: 8 },
            Op::Moves { start: 2, len: 2 },
        ];
        let moves = [(4, 2), (4, 3), (6, 4), (6, 5)]
            .map(|(dst, src)| Move { dst: r(dst), src: r(src), n: 1 })
            .to_vec();
        let program = Program { code, moves, ..Program::default() };
        let mut regs = vec![0; 7];
        regs[0] = memory::encode(SPACE_GLOBAL, 2, 0);
        let known = global_buffers(&program, &regs);
        assert_eq!(known[..5], [Some(2), None, Some(2), Some(2), Some(2)]);
        assert_eq!(known[5..], [None, None]);
    }
}
