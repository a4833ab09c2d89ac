//! Which loads and stores take their address from a value that depends on
//! the work-item's id and was computed before a barrier the work-item has
//! since passed.
//!
//! A CPU's OpenCL compiler runs a work-group's work-items in a loop of
//! their own between barriers, and keeps each value that lives across a
//! barrier in an array, one entry per work-item. Its vectoriser then reads
//! the value back from that array and cannot see the addresses built from
//! it counting up along the work-items: it gathers and scatters them. PoCL's
//! code for `x = a[i]; barrier(...); c[i] = x + b[i]` loads `a[i]` as a
//! vector but gathers `b[i]` and scatters `c[i]`, and runs three times as
//! long as without the barrier; the same holds for a reduction's
//! `scratch[lid]` in its loop with a barrier, whose address was taken for
//! the store before the loop.
//!
//! A work-item id read again after a barrier counts as carried as well,
//! once the same id was read before one: the compiler merges the second
//! read with the first (and hoists a read out of a loop with a barrier in
//! it), so `c[get_global_id(0)]` after the barrier is the same gather. The
//! local id itself is the exception: it is the counter of the loop over the
//! work-items, read afresh in each, so `c[get_group_id(0) * 256 +
//! get_local_id(0)]` after a barrier counts up (PoCL's code stores it as a
//! vector), and so does a cast of it (`(int)get_local_id(0)`), while
//! anything else computed from it before the barrier (`&s[lid]`, `lid + 1`)
//! is carried.
//!
//! A forward analysis over the bytecode, context-insensitive over calls (a
//! return may go back to after any call), that may say carried where a
//! value is carried along some way to the access. It follows values through
//! registers and through private variables (the fallback compile keeps
//! locals there); a value loaded from other memory depends on the id where
//! its address does, as a compiler's uniformity analysis takes it.

use crate::exec::native::Spans;
use crate::memory::{self, SPACE_PRIVATE};
use clflow_bytecode::program::{successors, Program};
use clflow_bytecode::{Builtin, ConvKind, Op, Operands, Reg};

/// For each pc, whether it is a scalar load or store whose address may
/// carry a work-item's id across a barrier. A vector load or store (a
/// `float4`) makes none: a vectoriser that meets one leaves the work-items
/// one by one (PoCL's code for CLBlast's `Xgemm` has no loop over them
/// vectorised: "instruction return type cannot be vectorized").
pub(crate) fn carried_addresses(p: &Program) -> Vec<bool> {
    let registers = p.init_regs.len();
    let effects: Vec<(Spans, Spans)> = p
        .code
        .iter()
        .map(|op| {
            let Operands { reads, writes } = Operands::of(op, p.tables());
            (reads, writes)
        })
        .collect();
    let mut written = vec![false; registers];
    for (_, writes) in &effects {
        for &(r, n) in writes {
            for k in 0..n as usize {
                if let Some(w) = written.get_mut(r.index() + k) {
                    *w = true;
                }
            }
        }
    }
    // A private variable's pointer is a constant register (see the
    // translator's `allocate`): its variable is followed as a register is.
    let variable: Vec<bool> = (0..registers)
        .map(|r| !written[r] && memory::decode(p.init_regs[r]).0 == SPACE_PRIVATE)
        .collect();
    let calls: Vec<(usize, (Reg, u32))> = (0..p.code.len())
        .filter_map(|pc| match p.code[pc] {
            Op::Call { ret, ret_n, .. } => Some((pc + 1, (ret, ret_n))),
            _ => None,
        })
        .collect();
    let returns: Vec<usize> = calls.iter().map(|&(after, _)| after).collect();
    let next_of = |pc: usize, next: &mut Vec<usize>| {
        successors(&p.code, &p.cases, pc, next);
        if matches!(p.code[pc], Op::Ret { .. }) {
            next.extend(returns.iter().filter(|&&r| r < p.code.len()));
        }
    };
    // The pcs control may reach other than by falling through to them.
    let mut joins = vec![false; p.code.len()];
    let mut next = Vec::new();
    for pc in 0..p.code.len() {
        next_of(pc, &mut next);
        for &s in &next {
            joins[s] |= s != pc + 1;
        }
    }

    let mut carried = vec![false; p.code.len()];
    let mut entry: Vec<Option<State>> = vec![None; p.code.len()];
    let mut work = vec![p.entry as usize];
    entry[p.entry as usize] = Some(State::new(registers));
    while let Some(start) = work.pop() {
        let mut state = entry[start].clone().expect("queued with a state");
        let mut pc = start;
        loop {
            state.step(&p.code[pc], &effects[pc], &variable, &mut carried[pc]);
            if let Op::Ret { src, n } = p.code[pc] {
                // The value goes back to whichever call made this one.
                let value = state.regs.any(&[(src, n)]);
                for &(_, ret) in &calls {
                    state.regs.set(ret, value);
                }
            }
            next_of(pc, &mut next);
            // Straight on while the next pc is reached from here alone.
            if let [only] = next[..] {
                if only == pc + 1 && !joins[only] {
                    pc = only;
                    continue;
                }
            }
            for &s in &next {
                let changed = match &mut entry[s] {
                    Some(e) => e.join(&state),
                    slot => {
                        *slot = Some(state.clone());
                        true
                    }
                };
                if changed {
                    work.push(s);
                }
            }
            break;
        }
    }
    carried
}

/// The work-item ids, one bit each; every other builtin (sizes, the group's
/// id) is the same for the whole group.
fn id_bit(which: Builtin) -> u32 {
    match which {
        Builtin::GlobalId => 1,
        Builtin::LocalId => 2,
        Builtin::GlobalLinearId => 4,
        Builtin::LocalLinearId => 8,
        Builtin::SubGroupLocalId => 16,
        Builtin::SubGroupId => 32,
        _ => 0,
    }
}

/// What holds a value that depends on the work-item's id (`varying`),
/// which of those are the local id itself (`fresh`: read again in each loop
/// over the work-items) and which crossed a barrier (`carried`): a bit per
/// register, and per private variable (by its pointer's register) in
/// `held`.
#[derive(Clone, PartialEq)]
struct State {
    regs: Values,
    held: Values,
    /// The ids read so far, and those read before a barrier.
    ids_read: u32,
    ids_carried: u32,
}

impl State {
    fn new(registers: usize) -> State {
        State {
            regs: Values::new(registers),
            held: Values::new(registers),
            ids_read: 0,
            ids_carried: 0,
        }
    }

    /// Adds `other`'s values; whether anything was added.
    fn join(&mut self, other: &State) -> bool {
        let before = (self.ids_read, self.ids_carried);
        self.ids_read |= other.ids_read;
        self.ids_carried |= other.ids_carried;
        let changed = before != (self.ids_read, self.ids_carried);
        self.regs.join(&other.regs) | self.held.join(&other.held) | changed
    }

    /// Runs `op` on the state; marks `access` where it is a load or store
    /// through a carried address.
    fn step(
        &mut self,
        op: &Op,
        (reads, writes): &(Spans, Spans),
        variable: &[bool],
        access: &mut bool,
    ) {
        match *op {
            Op::Barrier { .. } => {
                self.regs.cross_barrier();
                self.held.cross_barrier();
                self.ids_carried |= self.ids_read;
            }
            Op::Builtin { which, dst, lanes, .. } => {
                let bit = id_bit(which);
                let value = Value {
                    varying: bit != 0,
                    fresh: which == Builtin::LocalId,
                    carried: self.ids_carried & bit != 0 && which != Builtin::LocalId,
                };
                self.ids_read |= bit;
                self.regs.set((dst, u32::from(lanes.min(3))), value);
            }
            Op::Load { dst, ptr, n, .. } => {
                *access |= n == 1 && self.regs.get(ptr).carried;
                let value = if variable[ptr.index()] {
                    self.held.get(ptr)
                } else {
                    // Data, which varies where its address does.
                    Value { varying: self.regs.get(ptr).varying, ..Value::default() }
                };
                self.regs.set((dst, u32::from(n)), value);
            }
            Op::Store { src, ptr, n, .. } => {
                *access |= n == 1 && self.regs.get(ptr).carried;
                if variable[ptr.index()] {
                    let value = self.regs.any(&[(src, u32::from(n))]);
                    self.held.set((ptr, 1), value);
                }
            }
            // Copies keep each lane's own.
            Op::Mov { .. } | Op::Moves { .. } | Op::Call { .. } => {
                for (&(src, n), &(dst, _)) in reads.iter().zip(writes) {
                    for k in 0..n {
                        let value = self.regs.get(src + k);
                        self.regs.set((dst + k, 1), value);
                    }
                }
            }
            _ => {
                let value = self.regs.any(reads);
                let value = Value { fresh: value.fresh && is_cast(op), ..value };
                for &span in writes {
                    self.regs.set(span, value);
                }
            }
        }
    }
}

/// An integer cast: `(int)get_local_id(0)` is still the local id to a
/// compiler that builds each work-group size apart (PoCL does), and knows
/// the id fits (CLBlast's `tile[k][lid]` stores count up in PoCL's code).
fn is_cast(op: &Op) -> bool {
    matches!(
        op,
        Op::Trunc32 { .. }
            | Op::ZExt32 { .. }
            | Op::SExt32 { .. }
            | Op::Convert { kind: ConvKind::IntToInt { saturate: false, .. }, .. }
    )
}

/// What one register or variable holds.
#[derive(Clone, Copy, Default)]
struct Value {
    varying: bool,
    fresh: bool,
    carried: bool,
}

/// A bit per register (or variable) for each side of a [`Value`].
#[derive(Clone, PartialEq)]
struct Values {
    varying: Bits,
    fresh: Bits,
    carried: Bits,
}

impl Values {
    fn new(n: usize) -> Values {
        Values {
            varying: Bits::new(n),
            fresh: Bits::new(n),
            carried: Bits::new(n),
        }
    }

    fn get(&self, r: Reg) -> Value {
        Value {
            varying: self.varying.get(r),
            fresh: self.fresh.get(r),
            carried: self.carried.get(r),
        }
    }

    fn set(&mut self, (r, n): (Reg, u32), value: Value) {
        for k in 0..n {
            self.varying.put(r + k, value.varying);
            self.fresh.put(r + k, value.fresh);
            self.carried.put(r + k, value.carried);
        }
    }

    /// What a value computed from `spans` holds: fresh only where every
    /// lane is (a copy), the rest where any lane is.
    fn any(&self, spans: &[(Reg, u32)]) -> Value {
        let lanes = || spans.iter().flat_map(|&(r, n)| (0..n).map(move |k| r + k));
        Value {
            varying: lanes().any(|r| self.varying.get(r)),
            fresh: lanes().next().is_some() && lanes().all(|r| self.fresh.get(r)),
            carried: lanes().any(|r| self.carried.get(r)),
        }
    }

    /// At a barrier every value that depends on the id is carried, but the
    /// local id itself, which the next loop over the work-items reads anew.
    fn cross_barrier(&mut self) {
        for ((c, v), f) in self
            .carried
            .0
            .iter_mut()
            .zip(&self.varying.0)
            .zip(&self.fresh.0)
        {
            *c |= v & !f;
        }
    }

    /// Adds `other`'s values; whether anything was added. A value fresh
    /// one way and not the other is not fresh.
    fn join(&mut self, other: &Values) -> bool {
        let fresh_before = self.fresh.clone();
        for (a, b) in self.fresh.0.iter_mut().zip(&other.fresh.0) {
            *a &= b;
        }
        let changed = self.varying.union(&other.varying) | self.carried.union(&other.carried);
        changed | (fresh_before != self.fresh)
    }
}

/// A register's bit, or a private variable's.
#[derive(Clone, PartialEq)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }

    fn get(&self, r: Reg) -> bool {
        let i = r.index();
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    fn put(&mut self, r: Reg, on: bool) {
        let i = r.index();
        if let Some(w) = self.0.get_mut(i / 64) {
            if on {
                *w |= 1 << (i % 64);
            } else {
                *w &= !(1 << (i % 64));
            }
        }
    }

    /// Adds `other`'s bits; whether any was new.
    fn union(&mut self, other: &Bits) -> bool {
        let mut changed = false;
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            changed |= *b & !*a != 0;
            *a |= b;
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{encode, SPACE_GLOBAL};

    const BASE: Reg = Reg::new(9);
    const VARIABLE: Reg = Reg::new(10);

    /// `code` with a global buffer's pointer in `BASE` and a private
    /// variable's in `VARIABLE`.
    fn carried(code: Vec<Op>) -> Vec<bool> {
        let mut init_regs = vec![0; 16];
        init_regs[BASE.index()] = encode(SPACE_GLOBAL, 0, 0);
        init_regs[VARIABLE.index()] = encode(SPACE_PRIVATE, 0, 0);
        carried_addresses(&Program { code, init_regs, ..Program::default() })
    }

    /// Asserts that the accesses at `pcs`, and no others, are carried.
    fn assert_carried(code: Vec<Op>, pcs: &[usize]) {
        let flags = carried(code);
        let found: Vec<usize> = (0..flags.len()).filter(|&pc| flags[pc]).collect();
        assert_eq!(found, pcs);
    }

    fn id(which: Builtin, dst: u32) -> Op {
        Op::Builtin { which, dst: Reg::new(dst), lanes: 1, bits: 64 }
    }

    fn index(dst: u32, index: u32) -> Op {
        Op::Index {
            dst: Reg::new(dst),
            base: BASE,
            index: Reg::new(index),
            bits: 64,
            stride: 4,
            disp: 0,
        }
    }

    fn load(dst: u32, ptr: Reg) -> Op {
        Op::Load { dst: Reg::new(dst), ptr, size: 4, n: 1, align: 4 }
    }

    fn store(src: u32, ptr: Reg) -> Op {
        Op::Store { src: Reg::new(src), ptr, size: 4, n: 1, align: 4 }
    }

    #[test]
    fn an_id_computed_before_a_barrier_carries_its_addresses_after_it() {
        let r = Reg::new;
        let code = vec![
            id(Builtin::GlobalId, 0),
            index(1, 0),
            load(2, r(1)),
            Op::Barrier { fences: clflow_bytecode::Fences::ALL },
            store(2, r(1)),
            // The id read again after the barrier: the same value.
            id(Builtin::GlobalId, 3),
            index(4, 3),
            load(5, r(4)),
            // The group's id is the same for every work-item.
            id(Builtin::GroupId, 6),
            index(7, 6),
            load(8, r(7)),
            Op::Ret { src: r(0), n: 0 },
        ];
        assert_carried(code, &[4, 7]);
    }

    #[test]
    fn a_private_variable_carries_an_id_and_a_loop_brings_it_round() {
        let r = Reg::new;
        let code = vec![
            Op::Block { block: 0, steps: 3 },
            id(Builtin::LocalId, 0),
            // `lid + lid`, kept in a private variable.
            Op::Int {
                op: clflow_bytecode::IntOp::Add,
                bits: 64,
                n: 1,
                dst: r(4),
                a: r(0),
                b: r(0),
            },
            store(4, VARIABLE),
            // 4: the loop's header, then an access through the variable.
            Op::Block { block: 1, steps: 4 },
            load(1, VARIABLE),
            index(2, 1),
            load(3, r(2)),
            Op::Barrier { fences: clflow_bytecode::Fences::ALL },
            Op::Branch { cond: r(3), then: 4, other: 10 },
            Op::Ret { src: r(0), n: 0 },
        ];
        // The first time round nothing is carried yet, but the barrier at
        // the end of the loop carries the id into the next iteration.
        assert_carried(code, &[7]);
    }

    #[test]
    fn the_local_id_itself_is_read_anew_after_a_barrier() {
        let r = Reg::new;
        let code = vec![
            id(Builtin::LocalId, 0),
            id(Builtin::GroupId, 1),
            // `&s[lid]`, computed before the barrier and used on both sides.
            index(2, 0),
            store(3, r(2)),
            Op::Barrier { fences: clflow_bytecode::Fences::ALL },
            load(4, r(2)),
            // `c[group * 256 + (int)lid]`, computed after it.
            Op::Trunc32 { dst: r(7), src: r(0) },
            Op::Int {
                op: clflow_bytecode::IntOp::Add,
                bits: 64,
                n: 1,
                dst: r(5),
                a: r(1),
                b: r(7),
            },
            index(6, 5),
            store(4, r(6)),
            Op::Ret { src: r(0), n: 0 },
        ];
        assert_carried(code, &[5]);
    }

    #[test]
    fn without_a_barrier_nothing_is_carried() {
        let r = Reg::new;
        let code = vec![
            id(Builtin::GlobalId, 0),
            store(0, VARIABLE),
            load(1, VARIABLE),
            index(2, 1),
            load(3, r(2)),
            store(3, r(2)),
            Op::Ret { src: r(0), n: 0 },
        ];
        assert_carried(code, &[]);
    }
}
