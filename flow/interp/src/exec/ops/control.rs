//! Jumps, branches, calls and barriers: where the lanes go next (`Next`).

use super::*;

#[inline(always)]
pub(in crate::exec) fn run(
    m: &mut Machine<'_, '_>,
    rows: &mut Rows<'_>,
    at: usize,
    pc: usize,
    op: Op,
) -> Result<Next, LaneFault> {
    Ok(match op {
        Op::Jump { target } => Next::Goto(target),
        Op::Branch { cond, then, other } => {
            if let Some(predictor) = m.branches.get_mut(at) {
                lanes!(rows, l => predictor.branch(r!(rows, l, cond) != 0));
            }
            let mut taken = 0;
            lanes!(rows, l => taken += (r!(rows, l, cond) != 0) as usize);
            if taken == 0 || taken == rows.active.len() {
                Next::Goto(if taken != 0 { then } else { other })
            } else {
                let yes = m.queue.slot(&m.program.rank, then);
                let no = m.queue.slot(&m.program.rank, other);
                lanes!(rows, l => {
                    let way = if r!(rows, l, cond) != 0 { yes } else { no };
                    m.queue.waiting[way].2.push(l as u32);
                });
                Next::Stop
            }
        }
        Op::Switch { sel, bits, cases_start, cases_len, default } => {
            let cases = &m.program.cases[cases_start as usize..(cases_start + cases_len) as usize];
            let target_of = |v: u64| {
                let v = v & math::mask(bits);
                cases
                    .iter()
                    .find(|(c, _)| *c == v)
                    .map_or(default, |(_, t)| *t)
            };
            if let Some(predictor) = m.branches.get_mut(at) {
                lanes!(rows, l => predictor.switch(target_of(r!(rows, l, sel))));
            }
            let first = target_of(r!(rows, rows.active[0] as usize, sel));
            let mut uniform = true;
            lanes!(rows, l => uniform &= target_of(r!(rows, l, sel)) == first);
            if uniform {
                Next::Goto(first)
            } else {
                lanes!(rows, l => {
                    let way = m.queue.slot(&m.program.rank, target_of(r!(rows, l, sel)));
                    m.queue.waiting[way].2.push(l as u32);
                });
                Next::Stop
            }
        }
        Op::Call { target, moves_start, moves_len, ret, ret_n } => {
            for mv in &m.program.moves[moves_start as usize..(moves_start + moves_len) as usize] {
                copy_rows(rows.regs, rows.width, rows.active, mv.dst, mv.src, mv.n);
            }
            lanes!(rows, l => m.frames[l].push(Frame {
                ret_pc: pc as u32,
                ret,
                ret_n,
            }));
            Next::Goto(target)
        }
        Op::Ret { src, n } => {
            lanes!(rows, l => match m.frames[l].pop() {
                Some(frame) => {
                    let n = n.min(frame.ret_n);
                    copy_rows(rows.regs, rows.width, &[l as u32], frame.ret, src, n);
                    let way = m.queue.slot(&m.program.rank, frame.ret_pc);
                    m.queue.waiting[way].2.push(l as u32);
                }
                None => m.state[l] = LaneState::Done,
            });
            Next::Stop
        }
        Op::Barrier { .. } => {
            lanes!(rows, l => {
                m.state[l] = LaneState::AtBarrier;
                m.lane_pc[l] = pc as u32;
            });
            Next::Stop
        }
        Op::Trap => return Err((at, rows.active[0] as usize, TrapKind::Unreachable)),
        _ => unreachable!("`execute` sends only this family here"),
    })
}
