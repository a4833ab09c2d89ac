//! The dependence chains a kernel's loops carry from one iteration to the
//! next: for each basic block inside a loop, the longest chain of dependent
//! operations from a register the block reads on entry to the value it
//! leaves in that same register for its next run (an accumulator, a hash
//! state), in nominal cycles.
//!
//! An out-of-order core overlaps whatever does not wait on the iteration
//! before (address arithmetic, the next iteration's loads, independent
//! work), but an iteration cannot start its chain before the last one
//! finished it: a loop runs no faster than one chain per iteration, however
//! wide the core. A dot product's loop is bound by its additions' latency,
//! not by its loads.
//!
//! Latencies are a current x86 core's, in cycles (an integer add 1, a
//! multiply 3, a float add or multiply 3, a fused multiply-add 4, a float
//! maximum or minimum 5 (with its NaN rules), a load
//! from the first-level cache 5, a square root 15, a division 11 to 14, a
//! transcendental about 40); a device's measured rate of dependent integer
//! adds turns them into seconds (`clflow_predict`). A chain that carries a
//! float value across a call is marked *spilled*: a CPU's calling
//! convention keeps no float or vector register across a call (x86-64's
//! keeps a few integer ones), so the value goes to the stack and back, a
//! round trip whose time the device's benchmark of such a loop measures
//! (`clflow bench`'s `costs`). A value kept in global or local memory at an
//! address the loop does not change, or in a private variable in a block
//! with a kept call (which may take its address), carries its chain through
//! the store and the next load; any other private variable is a register to
//! the device's compiler, and passes its value on at no cost. The
//! analysis is per block, and for an innermost loop whose body is several
//! blocks (a branch in it) along each way round the body too; a chain
//! through an inner loop is not followed. A loop with a barrier in it
//! carries no chain: between a work-item's iterations every other
//! work-item of its group runs its own, so none waits on its last.

use crate::exec::native::{reads_writes, Spans};
use crate::memory;
use clflow_bytecode::program::{
    in_loops_between_barriers, natural_loops, successors, NaturalLoop, Program,
};
use clflow_bytecode::*;
use std::collections::HashSet;

/// No dependence on the register followed.
const NONE: i64 = i64::MIN;

/// A block's carried chain.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Chain {
    /// The longest chain's nominal cycles.
    pub cycles: u32,
    /// Whether a chain carries a float value across a call.
    pub spilled: bool,
    /// Whether the block runs under a chain its loop's header carries
    /// through several blocks (see [`block_chains`]).
    pub under_loop_chain: bool,
}

impl Chain {
    fn max(self, other: Chain) -> Chain {
        Chain {
            cycles: self.cycles.max(other.cycles),
            spilled: self.spilled || other.spilled,
            under_loop_chain: false,
        }
    }
}

/// The most ways round a loop's body the analysis follows; a loop with
/// more keeps its blocks' own chains.
const MAX_PATHS: usize = 64;

/// The runs of `calls` (their (start, end) pcs) made inside the kernel's
/// loops between barriers: each call's block's `hits`.
pub fn looped_calls(p: &Program, calls: &[(Pc, Pc)], hits: &[u64]) -> u64 {
    let looped = in_loops_between_barriers(&p.code, &p.cases);
    let block_at = |pc: usize| {
        p.code[..=pc].iter().rev().find_map(|op| match op {
            Op::Block { block, .. } => Some(*block as usize),
            _ => None,
        })
    };
    calls
        .iter()
        .map(|&(start, _)| start as usize)
        .filter(|&start| looped[start])
        .filter_map(block_at)
        .map(|block| hits[block])
        .sum()
}

/// Each block's carried chain: none outside loops, and in blocks that
/// carry nothing. A loop whose body is several blocks (a branch in it, as
/// `acc = isnan(x) ? acc + x : fmax(acc, x)` compiles to) may carry a chain
/// through them that no one block holds: along each way round from its
/// header back to it, the chain is followed, and where the longest is
/// longer than every block's own, the header carries it and the other
/// blocks run under it. Only innermost loops are followed so.
pub fn block_chains(p: &Program, kept_calls: &[(Pc, Pc)]) -> Vec<Chain> {
    let looped = in_loops_between_barriers(&p.code, &p.cases);
    let private = private_pointers(p);
    let mut chains = vec![Chain::default(); p.blocks.len()];
    // A register's slot, then the memory each pointer register points at.
    let mut ready = vec![NONE; 2 * p.init_regs.len()];
    let mut pc = 0;
    while pc < p.code.len() {
        let Op::Block { block, .. } = p.code[pc] else {
            pc += 1;
            continue;
        };
        let end = (pc + 1..p.code.len())
            .find(|&at| matches!(p.code[at], Op::Block { .. }))
            .unwrap_or(p.code.len());
        if looped[pc] {
            // The phis' copies may sit on the edge out of the block, in
            // code of their own: each way out is a chain's possible end.
            let body = &p.code[pc + 1..end];
            let calls = kept_calls
                .iter()
                .any(|&(start, stop)| pc < start as usize && stop as usize <= end);
            let mut longest = carried(p, body, (calls, &private), &mut ready);
            for edge in edges(p, body.last()) {
                let ops: Vec<Op> = body.iter().chain(edge).copied().collect();
                longest = longest.max(carried(p, &ops, (calls, &private), &mut ready));
            }
            chains[block as usize] = longest;
        }
        pc = end;
    }
    let loops = natural_loops(&p.code, &p.cases, p.entry as usize);
    let headers: HashSet<usize> = loops.iter().map(|l| l.header).collect();
    for lp in &loops {
        let innermost = lp
            .body
            .iter()
            .all(|pc| *pc == lp.header || !headers.contains(pc));
        if looped[lp.header] && innermost {
            through_loop(p, lp, (kept_calls, &private), &mut chains, &mut ready);
        }
    }
    chains
}

/// The chain an innermost loop carries round its body of several blocks,
/// where longer than each block's own (see [`block_chains`]).
fn through_loop(
    p: &Program,
    lp: &NaturalLoop,
    (kept_calls, private): (&[(Pc, Pc)], &[bool]),
    chains: &mut [Chain],
    ready: &mut [i64],
) {
    let code = &p.code;
    let block_of = |pc: usize| match code.get(pc) {
        Some(&Op::Block { block, .. }) => Some(block as usize),
        _ => None,
    };
    let blocks: Vec<usize> = lp
        .body
        .iter()
        .copied()
        .filter(|&pc| block_of(pc).is_some())
        .collect();
    let Some(header) = block_of(lp.header) else {
        return;
    };
    if blocks.len() < 2 {
        return;
    }
    let in_body = |pc: usize| lp.body.binary_search(&pc).is_ok();
    let calls = kept_calls.iter().any(|&(start, _)| in_body(start as usize));
    // Depth first over the ways round: (block pc, ops so far, blocks on
    // the way).
    let mut longest = Chain::default();
    let mut ways = 0;
    let mut walk = vec![(lp.header, Vec::new(), vec![lp.header])];
    let mut out = Vec::new();
    while let Some((pc, mut ops, on_way)) = walk.pop() {
        let Some(end) = (pc + 1..code.len()).find(|&at| {
            matches!(
                code[at],
                Op::Jump { .. } | Op::Branch { .. } | Op::Switch { .. } | Op::Ret { .. } | Op::Trap
            )
        }) else {
            continue;
        };
        ops.extend_from_slice(&code[pc + 1..=end]);
        successors(code, &p.cases, end, &mut out);
        for &target in &out {
            if !in_body(target) {
                continue;
            }
            let Some((edge, next)) = edge_to(code, target) else {
                continue;
            };
            ways += 1;
            if ways > MAX_PATHS {
                return;
            }
            let mut way = ops.clone();
            way.extend_from_slice(edge);
            if next == lp.header {
                longest = longest.max(carried(p, &way, (calls, private), ready));
            } else if in_body(next) && !on_way.contains(&next) {
                let mut on = on_way.clone();
                on.push(next);
                walk.push((next, way, on));
            }
        }
    }
    let own = blocks
        .iter()
        .filter_map(|&pc| block_of(pc))
        .map(|b| chains[b].cycles)
        .max()
        .unwrap_or(0);
    if longest.cycles > own {
        for b in blocks.iter().filter_map(|&pc| block_of(pc)) {
            chains[b] = Chain { under_loop_chain: true, ..Chain::default() };
        }
        chains[header] = longest;
    }
}

/// The code on the edges a block's last op takes that are not blocks of
/// their own (the copies into the phis of the block it goes to), each up
/// to its jump.
fn edges<'p>(p: &'p Program, last: Option<&Op>) -> Vec<&'p [Op]> {
    let targets = match last {
        Some(&Op::Jump { target }) => vec![target],
        Some(&Op::Branch { then, other, .. }) => vec![then, other],
        _ => Vec::new(),
    };
    targets
        .into_iter()
        .filter_map(|t| edge_to(&p.code, t as usize))
        .map(|(copies, _)| copies)
        .filter(|copies| !copies.is_empty())
        .collect()
}

/// Where an edge to `target` leads: the copies into the phis of the block
/// it goes to, where they sit at `target` in code of their own (none where
/// `target` is that block), and that block's pc.
fn edge_to(code: &[Op], target: usize) -> Option<(&[Op], usize)> {
    if let Op::Block { .. } = code.get(target)? {
        return Some((&[], target));
    }
    let jump =
        (target..code.len()).find(|&at| matches!(code[at], Op::Jump { .. } | Op::Block { .. }))?;
    match code[jump] {
        Op::Jump { target: next } => Some((&code[target..jump], next as usize)),
        _ => None,
    }
}

/// The longest chain in `ops` from a register read before it is written
/// to that register's last value, and whether any such chain carries a
/// float value through a block with kept `calls` in it: from one run to
/// the next, the value lives across them. A value kept in a private
/// variable (`private`: the registers that point at one) passes through it
/// at no cost where no call is kept: the device's compiler keeps it in a
/// register, as it keeps private arrays (`counts.rs`). `ready` is all
/// `NONE`, and is left so.
fn carried(p: &Program, ops: &[Op], (calls, private): (bool, &[bool]), ready: &mut [i64]) -> Chain {
    let in_register = |op: &Op| match *op {
        Op::Load { ptr, .. } | Op::Store { ptr, .. } => {
            !calls && private.get(ptr.index()).copied().unwrap_or(false)
        }
        _ => false,
    };
    let mut effects: Vec<_> = ops.iter().map(|op| reads_writes(op, p)).collect();
    // Memory through a pointer the block never changes is the same memory
    // on every run: a slot of its own after the registers.
    let changed: HashSet<usize> = effects
        .iter()
        .flat_map(|(_, writes)| writes.iter())
        .flat_map(|&(r, n)| r.index()..r.index() + n as usize)
        .collect();
    let cell = |ptr: Reg| Reg::new((p.init_regs.len() + ptr.index()) as u32);
    for (op, (reads, writes)) in ops.iter().zip(&mut effects) {
        match *op {
            Op::Load { ptr, .. } if !changed.contains(&ptr.index()) => {
                reads.push((cell(ptr), 1));
            }
            Op::Store { ptr, .. } if !changed.contains(&ptr.index()) => {
                writes.push((cell(ptr), 1));
            }
            _ => {}
        }
    }
    // Registers read on entry that the block writes again: candidates.
    let mut written = HashSet::new();
    let mut candidates = Vec::new();
    for (reads, writes) in &effects {
        for &(r, n) in reads {
            for slot in r.index()..r.index() + n as usize {
                if !written.contains(&slot) && !candidates.contains(&slot) {
                    candidates.push(slot);
                }
            }
        }
        for &(r, n) in writes {
            written.extend(r.index()..r.index() + n as usize);
        }
    }
    candidates.retain(|slot| written.contains(slot) && *slot < ready.len());
    let floats = float_slots(p, ops, &effects);
    let mut longest = 0i64;
    let mut spilled = false;
    let mut touched = Vec::new();
    for &start in &candidates {
        ready[start] = 0;
        touched.push(start);
        for (op, (reads, writes)) in ops.iter().zip(&effects) {
            let from = reads
                .iter()
                .flat_map(|&(r, n)| r.index()..r.index() + n as usize)
                .filter_map(|slot| ready.get(slot).copied())
                .max()
                .unwrap_or(NONE);
            if let Op::Moves { start: at, len } = *op {
                // Parallel copies: each destination takes its source's time.
                let moves = &p.moves[at as usize..(at + len) as usize];
                let times: Vec<Vec<i64>> = moves
                    .iter()
                    .map(|m| (0..m.n).map(|k| slot_time(ready, m.src + k)).collect())
                    .collect();
                for (m, times) in moves.iter().zip(times) {
                    for (k, t) in times.into_iter().enumerate() {
                        set(ready, &mut touched, (m.dst + k as u32).index(), t);
                    }
                }
                continue;
            }
            let t = if from == NONE {
                NONE
            } else if in_register(op) {
                from
            } else {
                from + i64::from(latency(op))
            };
            for &(r, n) in writes {
                for slot in r.index()..r.index() + n as usize {
                    set(ready, &mut touched, slot, t);
                }
            }
        }
        longest = longest.max(ready[start]);
        // A float value the loop carries lives across any call in it.
        spilled |= calls && ready[start] != NONE && floats.contains(&start);
        for slot in touched.drain(..) {
            ready[slot] = NONE;
        }
    }
    Chain {
        cycles: longest.clamp(0, i64::from(u32::MAX)) as u32,
        spilled,
        under_loop_chain: false,
    }
}

/// The registers that only ever point into private memory: the private
/// variables' constant addresses and whatever address arithmetic computes
/// or a copy takes from them alone (the largest such set, so that a pointer
/// a loop steps, a phi of itself, stays in it).
fn private_pointers(p: &Program) -> Vec<bool> {
    let regs = p.init_regs.len();
    let constant = |r: usize| memory::decode(p.init_regs[r]).0 == memory::SPACE_PRIVATE;
    // What each register is written from: the register a pointer derives
    // from, or `None` for anything else.
    let mut sources: Vec<Vec<Option<usize>>> = vec![Vec::new(); regs];
    let mut write = |dst: usize, src: Option<usize>| {
        if let Some(s) = sources.get_mut(dst) {
            s.push(src);
        }
    };
    for op in &p.code {
        match *op {
            Op::Ptr { dst, base, .. }
            | Op::Offset { dst, base, .. }
            | Op::Index { dst, base, .. } => write(dst.index(), Some(base.index())),
            Op::Moves { start, len } => {
                for m in &p.moves[start as usize..(start + len) as usize] {
                    for k in 0..m.n as usize {
                        write(m.dst.index() + k, Some(m.src.index() + k));
                    }
                }
            }
            _ => {
                for (r, n) in reads_writes(op, p).1 {
                    (r.index()..r.index() + n as usize).for_each(|slot| write(slot, None));
                }
            }
        }
    }
    let mut private: Vec<bool> = (0..regs)
        .map(|r| !sources[r].is_empty() || constant(r))
        .collect();
    loop {
        let mut changed = false;
        for r in 0..regs {
            if !private[r] || sources[r].is_empty() {
                continue;
            }
            let derived = sources[r]
                .iter()
                .all(|s| s.is_some_and(|s| private.get(s) == Some(&true)));
            if !derived {
                private[r] = false;
                changed = true;
            }
        }
        if !changed {
            return private;
        }
    }
}

/// The slots that hold float values in `ops`: those float arithmetic reads
/// or writes, and the copies of them either way.
fn float_slots(p: &Program, ops: &[Op], effects: &[(Spans, Spans)]) -> HashSet<usize> {
    let mut floats = HashSet::new();
    for (op, (reads, writes)) in ops.iter().zip(effects) {
        let (reads_float, writes_float) = match op {
            Op::FAdd32 { .. }
            | Op::FSub32 { .. }
            | Op::FMul32 { .. }
            | Op::Float { .. }
            | Op::FloatUn { .. }
            | Op::FloatTer { .. }
            | Op::Geometric { .. } => (true, true),
            Op::FCmp { .. } => (true, false),
            Op::Convert { kind, .. } => match kind {
                ConvKind::IntToInt { .. } => (false, false),
                ConvKind::FloatToInt { .. } => (true, false),
                ConvKind::IntToFloat { .. } => (false, true),
                ConvKind::FloatToFloat { .. } => (true, true),
            },
            _ => (false, false),
        };
        let spans = [(reads_float, reads), (writes_float, writes)];
        for (_, spans) in spans.iter().filter(|(yes, _)| *yes) {
            floats.extend(
                spans
                    .iter()
                    .flat_map(|&(r, n)| r.index()..r.index() + n as usize),
            );
        }
    }
    // A phi's value reaches its float use through copies.
    let copies: Vec<(usize, usize)> = ops
        .iter()
        .flat_map(|op| match *op {
            Op::Mov { dst, src, n } => vec![(dst, src, n)],
            Op::Moves { start, len } => p.moves[start as usize..(start + len) as usize]
                .iter()
                .map(|m| (m.dst, m.src, m.n))
                .collect(),
            _ => Vec::new(),
        })
        .flat_map(|(dst, src, n)| (0..n as usize).map(move |k| (dst.index() + k, src.index() + k)))
        .collect();
    loop {
        let before = floats.len();
        for &(dst, src) in &copies {
            if floats.contains(&dst) || floats.contains(&src) {
                floats.extend([dst, src]);
            }
        }
        if floats.len() == before {
            return floats;
        }
    }
}

fn slot_time(ready: &[i64], r: Reg) -> i64 {
    ready.get(r.index()).copied().unwrap_or(NONE)
}

fn set(ready: &mut [i64], touched: &mut Vec<usize>, slot: usize, t: i64) {
    if let Some(at) = ready.get_mut(slot) {
        if *at == NONE && t != NONE {
            touched.push(slot);
        }
        *at = t;
    }
}

/// An op's latency in cycles, from its inputs to its result.
pub fn latency(op: &Op) -> u32 {
    match *op {
        Op::Block { .. }
        | Op::Mov { .. }
        | Op::Moves { .. }
        | Op::Splat { .. }
        | Op::Bitcast { .. }
        | Op::CastToSpace { .. }
        | Op::ZExt32 { .. }
        | Op::Trunc32 { .. }
        | Op::Builtin { .. } => 0,
        Op::Mul32 { .. } => 3,
        Op::SubXorRotl32 { .. } | Op::XorSubRotl32 { .. } => 2,
        Op::Int { op, .. } => match op {
            IntOp::Mul | IntOp::SMul24 | IntOp::UMul24 => 3,
            IntOp::SMulHi | IntOp::UMulHi => 4,
            IntOp::UDiv | IntOp::SDiv | IntOp::UMod | IntOp::SRem | IntOp::SMod => 14,
            _ => 1,
        },
        Op::IntTer { op, .. } => match op {
            IntTerOp::SClamp | IntTerOp::UClamp | IntTerOp::Bitselect => 2,
            _ => 4,
        },
        Op::FAdd32 { .. } | Op::FSub32 { .. } | Op::FMul32 { .. } | Op::FCmp { .. } => 3,
        Op::Float { op, .. } => match op {
            FloatOp::Add | FloatOp::Sub | FloatOp::Mul => 3,
            // x86 has no maximum that keeps OpenCL's rules for NaN: the
            // compiler follows its max with a compare and a blend.
            FloatOp::Fmax | FloatOp::Fmin | FloatOp::Fdim | FloatOp::Maxmag | FloatOp::Minmag => 5,
            FloatOp::Copysign | FloatOp::Step => 1,
            FloatOp::Div => 11,
            _ => 40,
        },
        Op::FloatUn { op, .. } => match op {
            FloatUnOp::Neg | FloatUnOp::Fabs => 1,
            FloatUnOp::Ceil
            | FloatUnOp::Floor
            | FloatUnOp::Rint
            | FloatUnOp::Round
            | FloatUnOp::Trunc
            | FloatUnOp::Degrees
            | FloatUnOp::Radians => 3,
            FloatUnOp::Recip => 11,
            FloatUnOp::Sqrt => 15,
            FloatUnOp::Rsqrt => 20,
            _ => 40,
        },
        Op::FloatTer { op, .. } => match op {
            FloatTerOp::Fma => 4,
            FloatTerOp::Clamp => 2,
            FloatTerOp::Mix => 7,
            FloatTerOp::Smoothstep => 15,
        },
        Op::Convert { kind, .. } => match kind {
            ConvKind::IntToInt { .. } => 1,
            _ => 4,
        },
        Op::Geometric { .. } => 10,
        Op::Load { .. } | Op::LoadAgg { .. } | Op::LoadHalf { .. } => 5,
        Op::Atomic { .. } => 20,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clflow_bytecode::program::BlockCounts;
    use clflow_bytecode::Op;

    fn r(slot: u32) -> Reg {
        Reg::new(slot)
    }

    /// A dot product's loop: the sum's add waits on the add before; the
    /// loads, the multiply and the counter do not wait on the sum.
    #[test]
    fn a_dot_products_loop_carries_its_additions_and_not_its_loads() {
        // r1 counter, r2 sum (carried); r3, r4 loaded; r5 product; r6 new
        // sum; r7 new counter; r8 the loop's test.
        let code = vec![
            Op::Block { block: 0, steps: 0 },
            Op::Jump { target: 2 },
            Op::Block { block: 1, steps: 7 },
            Op::Load { dst: r(3), ptr: r(1), size: 4, n: 1, align: 4 },
            Op::Load { dst: r(4), ptr: r(1), size: 4, n: 1, align: 4 },
            Op::FMul32 { dst: r(5), a: r(3), b: r(4) },
            Op::FAdd32 { dst: r(6), a: r(2), b: r(5) },
            Op::Add32 { dst: r(7), a: r(1), b: r(0) },
            Op::Moves { start: 0, len: 2 },
            Op::Branch { cond: r(8), then: 2, other: 10 },
            Op::Block { block: 2, steps: 1 },
            Op::Ret { src: r(2), n: 1 },
        ];
        let program = Program {
            code,
            init_regs: vec![0; 9],
            moves: vec![
                Move { dst: r(2), src: r(6), n: 1 },
                Move { dst: r(1), src: r(7), n: 1 },
            ],
            blocks: vec![BlockCounts::default(); 3],
            ..Program::default()
        };
        // The sum: one float add (3); the counter: one add (1). The path
        // counter -> load -> multiply -> add ends in the sum, not in the
        // counter, so it is no chain.
        assert_eq!(
            block_chains(&program, &program.kept_calls)
                .iter()
                .map(|c| c.cycles)
                .collect::<Vec<_>>(),
            [0, 3, 0]
        );
    }

    #[test]
    fn a_chain_through_a_hash_state_adds_its_steps() {
        // r1 = (r1 ^ r2) + r3, twice: four dependent 1-cycle ops.
        let mut code = vec![Op::Block { block: 0, steps: 4 }];
        for _ in 0..2 {
            code.push(Op::Xor { dst: r(4), a: r(1), b: r(2) });
            code.push(Op::Add32 { dst: r(1), a: r(4), b: r(3) });
        }
        code.push(Op::Branch { cond: r(5), then: 0, other: 6 });
        code.push(Op::Ret { src: r(1), n: 1 });
        let program = Program {
            code,
            init_regs: vec![0; 6],
            blocks: vec![BlockCounts::default()],
            ..Program::default()
        };
        assert_eq!(
            block_chains(&program, &program.kept_calls),
            [Chain { cycles: 4, ..Chain::default() }]
        );
    }

    /// A loop that adds a kept call's result to a sum: `acc = acc + f(x)`.
    /// A float sum lives across the call from one iteration to the next,
    /// whether the call comes before or after the add; an integer one does
    /// too, but a CPU keeps integers in registers a call preserves. The
    /// same code inlined (no kept call) holds nothing across a call.
    #[test]
    fn a_float_sum_carried_through_a_kept_call_is_spilled() {
        let program = |call: Op, add: Op, call_first: bool| {
            let (first, second) = if call_first { (call, add) } else { (add, call) };
            Program {
                code: vec![
                    Op::Block { block: 0, steps: 3 },
                    first,
                    second,
                    Op::Branch { cond: r(5), then: 0, other: 4 },
                    Op::Ret { src: r(2), n: 1 },
                ],
                init_regs: vec![0; 6],
                blocks: vec![BlockCounts::default()],
                kept_calls: vec![if call_first { (1, 2) } else { (2, 3) }],
                ..Program::default()
            }
        };
        let fcall = Op::FMul32 { dst: r(3), a: r(1), b: r(1) };
        let fadd = Op::FAdd32 { dst: r(2), a: r(2), b: r(3) };
        let chain = |cycles, spilled| vec![Chain { cycles, spilled, ..Chain::default() }];
        let chains = |p: &Program| block_chains(p, &p.kept_calls);
        assert_eq!(chains(&program(fcall, fadd, true)), chain(3, true));
        assert_eq!(chains(&program(fcall, fadd, false)), chain(3, true));
        let mut inlined = program(fcall, fadd, true);
        inlined.kept_calls.clear();
        assert_eq!(chains(&inlined), chain(3, false));
        let icall = Op::Mul32 { dst: r(3), a: r(1), b: r(1) };
        let iadd = Op::Add32 { dst: r(2), a: r(2), b: r(3) };
        assert_eq!(chains(&program(icall, iadd, true)), chain(1, false));
    }

    /// `acc += x` with `acc` in a variable the loop reads and writes at one
    /// address: in private memory the device's compiler keeps it in a
    /// register, and the chain is the add alone; in global memory it waits
    /// on the store and the load as well; with a kept call in the loop,
    /// which may take the private variable's address, so does it.
    #[test]
    fn a_sum_kept_in_a_private_variable_passes_through_a_register() {
        let program = |space: u64, kept_call: bool| Program {
            code: vec![
                Op::Block { block: 0, steps: 1 },
                // The variable's address, computed once before the loop.
                Op::Offset { dst: r(2), base: r(1), disp: 4 },
                Op::Jump { target: 3 },
                Op::Block { block: 1, steps: 3 },
                Op::Load { dst: r(3), ptr: r(2), size: 4, n: 1, align: 4 },
                Op::FAdd32 { dst: r(4), a: r(3), b: r(5) },
                Op::Store { src: r(4), ptr: r(2), size: 4, n: 1, align: 4 },
                Op::Branch { cond: r(6), then: 3, other: 8 },
                Op::Block { block: 2, steps: 1 },
                Op::Ret { src: r(4), n: 1 },
            ],
            init_regs: vec![0, memory::encode(space, 1, 0), 0, 0, 0, 0, 0],
            blocks: vec![BlockCounts::default(); 3],
            kept_calls: if kept_call { vec![(5, 6)] } else { vec![] },
            ..Program::default()
        };
        let cycles = |p: &Program| {
            block_chains(p, &p.kept_calls)
                .iter()
                .map(|c| c.cycles)
                .collect::<Vec<_>>()
        };
        assert_eq!(cycles(&program(memory::SPACE_PRIVATE, false)), [0, 3, 0]);
        // A load (5), the add (3) and the store (1).
        assert_eq!(cycles(&program(memory::SPACE_GLOBAL, false)), [0, 9, 0]);
        assert_eq!(cycles(&program(memory::SPACE_PRIVATE, true)), [0, 9, 0]);
    }
}
