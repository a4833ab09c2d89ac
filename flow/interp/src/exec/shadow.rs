//! `--detect uninit`: which values are undefined, and where one is used.
//!
//! Private memory is undefined when a work-item starts (but for its by-value
//! arguments), local memory when a work-group starts; global memory is what
//! the launch gives, but for the buffers it says are undefined (`noinit`). Each register slot of each lane and each byte of
//! private and local memory has a shadow byte (1: undefined), and every
//! instruction, before it runs, carries its operands' shadows to its
//! results: a copy keeps them, arithmetic joins them, a load takes its
//! bytes', a store gives them. An undefined value is *used* where it
//! decides a branch, makes an address, divides, or is stored to global
//! memory; copying one about is no fault (a struct's unset member may be
//! copied whole).
//!
//! The analysis runs only where asked (`Runner::execute::<true>`): a plain
//! run compiles none of it in.

use super::mem::{Loc, Mem};
use super::Frame;
use crate::error::Use;
use clflow_bytecode::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU8, Ordering};

/// By global buffer: its bytes' shadows where the launch leaves it
/// undefined, shared by the runners (a byte's shadow is only ever set).
pub type GlobalShadow = Vec<Option<Box<[AtomicU8]>>>;

/// One instruction's uses of one kind: the first few work-items that made
/// them, and how many there were.
pub(super) type Uses = (Vec<[u64; 3]>, u64);

/// How definedness passes through an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    /// Plainly, to one slot from at most three one-slot operands (the
    /// first `n` of `reads`): the commonest, its registers at hand.
    Scalar { dst: Reg, reads: [Reg; 3], n: u8 },
    /// Plainly, at any width: builtins (which read nothing) and ops that
    /// write nothing among them.
    Lanes,
    /// By a rule of its own (`apply`).
    Special,
    /// Not at all: it writes no register and uses no value.
    Nothing,
}

impl Flow {
    fn of(op: &Op, operands: &Operands) -> Flow {
        let special = match *op {
            Op::Int { op, .. } => matches!(
                op,
                IntOp::UDiv | IntOp::SDiv | IntOp::UMod | IntOp::SRem | IntOp::SMod
            ),
            Op::Logic { op, .. } => matches!(op, LogicOp::And | LogicOp::Or),
            family!(Access) | family!(Io) => !matches!(*op, Op::CountAccess { .. }),
            Op::Moves { .. }
            | Op::Call { .. }
            | Op::And { .. }
            | Op::Or { .. }
            | Op::Select { .. }
            | Op::Bitcast { .. }
            | Op::Geometric { .. }
            | Op::GroupCopy { .. }
            | Op::Branch { .. }
            | Op::Switch { .. }
            | Op::Ret { .. } => true,
            _ => false,
        };
        let one_slot = |spans: &[Span]| spans.iter().all(|&(_, n)| n == 1);
        match operands.writes[..] {
            _ if special => Flow::Special,
            [] => Flow::Nothing,
            [(dst, 1)] if one_slot(&operands.reads) && operands.reads.len() <= 3 => {
                let mut reads = [Reg::UNUSED; 3];
                for (slot, &(r, _)) in reads.iter_mut().zip(&operands.reads) {
                    *slot = r;
                }
                let n = operands.reads.len() as u8;
                Flow::Scalar { dst, reads, n }
            }
            _ => Flow::Lanes,
        }
    }
}

/// The shadows of one runner's batch.
#[derive(Debug)]
pub(super) struct Shadow<'a> {
    width: usize,
    /// By register slot and lane, as the register file is laid out.
    regs: Vec<u8>,
    /// By lane, each byte of its private memory.
    private: Vec<Vec<u8>>,
    local: Vec<u8>,
    global: &'a GlobalShadow,
    /// By pc, its op's operands, and how definedness passes through it.
    operands: Vec<Operands>,
    flows: Vec<Flow>,
    /// A result's shadows, made before any is written.
    scratch: Vec<u8>,
    /// The uses found, by (pc, how).
    pub found: BTreeMap<(usize, Use), Uses>,
}

impl<'a> Shadow<'a> {
    pub fn new(
        program: &clflow_bytecode::program::Program,
        width: usize,
        (private_bytes, local_bytes): (u64, u64),
        global: &'a GlobalShadow,
    ) -> Self {
        let slots = program.init_regs.len();
        let operands: Vec<Operands> = program
            .code
            .iter()
            .map(|op| Operands::of(op, program.tables()))
            .collect();
        Shadow {
            flows: program
                .code
                .iter()
                .zip(&operands)
                .map(|(op, operands)| Flow::of(op, operands))
                .collect(),
            operands,
            scratch: Vec::new(),
            width,
            regs: vec![0; slots * width],
            private: vec![vec![1; private_bytes as usize]; width],
            local: vec![1; local_bytes as usize],
            global,
            found: BTreeMap::new(),
        }
    }

    /// A new work-group: its local memory is undefined.
    pub fn start_group(&mut self) {
        // An empty fill is not free (see `reset_arena`), and most kernels
        // have no local or private memory.
        if !self.local.is_empty() {
            self.local.fill(1);
        }
    }

    /// A lane starts a work-item: private memory undefined but for the
    /// by-value arguments at `defined`.
    pub fn start_item(&mut self, lane: usize, defined: &[(usize, Vec<u8>)]) {
        let private = &mut self.private[lane];
        if private.is_empty() {
            return;
        }
        private.fill(1);
        for (at, bytes) in defined {
            private[*at..*at + bytes.len()].fill(0);
        }
    }

    #[inline]
    fn get(&self, r: Reg, lane: usize) -> u8 {
        self.regs[r.index() * self.width + lane]
    }

    #[inline]
    fn set(&mut self, r: Reg, lane: usize, v: u8) {
        self.regs[r.index() * self.width + lane] = v;
    }

    /// Whether any of `n` slots from `r` is undefined in `lane`.
    fn any(&self, r: Reg, n: u32, lane: usize) -> u8 {
        (0..n).fold(0, |u, i| u | self.get(r + i, lane))
    }

    /// `n` slots from `src` to `dst`, as a memmove.
    fn copy(&mut self, lane: usize, dst: Reg, src: Reg, n: u32) {
        let mut one = |i: u32| {
            let v = self.get(src + i, lane);
            self.set(dst + i, lane, v);
        };
        if dst <= src {
            (0..n).for_each(&mut one);
        } else {
            (0..n).rev().for_each(&mut one);
        }
    }

    /// The plain flow of the op at `pc`: slot i of each result joins slot
    /// i of each read as wide, the one slot of a one-slot read, and every
    /// slot of a read of another width.
    fn flow(&mut self, lane: usize, pc: usize) {
        let Shadow { width, regs, operands, scratch, .. } = self;
        let at = |r: Reg| r.index() * *width + lane;
        let ops = &operands[pc];
        for &(dst, n) in &ops.writes {
            scratch.clear();
            for i in 0..n {
                let u = ops.reads.iter().fold(0, |u, &(r, k)| {
                    u | match k {
                        _ if k == n => regs[at(r + i)],
                        1 => regs[at(r)],
                        _ => (0..k).fold(0, |u, j| u | regs[at(r + j)]),
                    }
                });
                scratch.push(u);
            }
            for (i, &u) in scratch.iter().enumerate() {
                regs[at(dst + i as u32)] = u;
            }
        }
    }

    /// Every slot of `dst` (`n` of them) joins every slot of `srcs`.
    fn mix(&mut self, lane: usize, dst: Reg, n: u32, srcs: &[(Reg, u32)]) {
        let u = srcs.iter().fold(0, |u, &(s, k)| u | self.any(s, k, lane));
        for i in 0..n {
            self.set(dst + i, lane, u);
        }
    }

    fn define(&mut self, lane: usize, dst: Reg, n: u32) {
        for i in 0..n {
            self.set(dst + i, lane, 0);
        }
    }

    fn note(&mut self, at: usize, how: Use, item: [u64; 3]) {
        let (items, count) = self.found.entry((at, how)).or_default();
        if items.len() < super::launch::FIRST_ITEMS {
            items.push(item);
        }
        *count += 1;
    }

    /// The shadow bytes of private or local memory at `loc`.
    fn arena(&mut self, lane: usize, loc: Loc) -> Option<&mut [u8]> {
        match loc {
            Loc::Global(..) => None,
            Loc::Local(at) => self.local.get_mut(at..),
            Loc::Private(at) => self.private[lane].get_mut(at..),
        }
    }

    /// A global buffer's shadows where the launch left it undefined.
    fn buffer(&self, loc: Loc) -> Option<(&'a [AtomicU8], usize)> {
        match loc {
            Loc::Global(b, off) => Some((self.global.get(b)?.as_deref()?, off as usize)),
            _ => None,
        }
    }

    /// The shadows of `size` bytes at `loc` + `offset` (global memory the
    /// launch defined reads as defined).
    fn read(&mut self, lane: usize, loc: Loc, offset: u64, size: u64) -> Vec<u8> {
        let (at, size) = (offset as usize, size as usize);
        if let Some((g, base)) = self.buffer(loc) {
            let bytes = g.get(base + at..base + at + size).unwrap_or_default();
            return bytes.iter().map(|b| b.load(Ordering::Relaxed)).collect();
        }
        match self.arena(lane, loc) {
            Some(b) => b.get(at..at + size).map_or_else(Vec::new, <[u8]>::to_vec),
            None => vec![0; size],
        }
    }

    /// Whether any of `size` bytes at `loc` + `offset` is undefined.
    fn load(&mut self, lane: usize, loc: Loc, offset: u64, size: u64) -> u8 {
        let (at, size) = (offset as usize, size as usize);
        if let Some((g, base)) = self.buffer(loc) {
            let bytes = g.get(base + at..base + at + size).unwrap_or_default();
            return bytes.iter().fold(0, |u, b| u | b.load(Ordering::Relaxed));
        }
        self.arena(lane, loc)
            .and_then(|b| b.get(at..at + size))
            .map_or(0, |b| b.iter().fold(0, |u, &x| u | x))
    }

    /// Sets the shadows of bytes at `loc` + `offset` to `bytes`.
    fn write(&mut self, lane: usize, loc: Loc, offset: u64, bytes: &[u8]) {
        let at = offset as usize;
        if let Some((g, base)) = self.buffer(loc) {
            if let Some(g) = g.get(base + at..base + at + bytes.len()) {
                for (d, s) in g.iter().zip(bytes) {
                    d.store(*s, Ordering::Relaxed);
                }
            }
        } else if let Some(b) = self.arena(lane, loc) {
            if let Some(b) = b.get_mut(at..at + bytes.len()) {
                b.copy_from_slice(bytes);
            }
        }
    }

    /// Sets the shadows of `size` bytes at `loc` + `offset` to `u`.
    fn store(&mut self, lane: usize, loc: Loc, offset: u64, size: u64, u: u8) {
        let (at, size) = (offset as usize, size as usize);
        if let Some((g, base)) = self.buffer(loc) {
            for b in g.get(base + at..base + at + size).unwrap_or_default() {
                b.store(u, Ordering::Relaxed);
            }
        } else if let Some(b) = self.arena(lane, loc).and_then(|b| b.get_mut(at..at + size)) {
            b.fill(u);
        }
    }

    /// Copies `bytes` of shadow from `from` to `to`.
    fn copy_bytes(&mut self, lane: usize, to: Loc, from: Loc, bytes: u64) {
        let source = self.read(lane, from, 0, bytes);
        self.write(lane, to, 0, &source);
    }
}

/// What `apply` reads of the running batch.
pub(super) struct Batch<'a, 'm, 'r> {
    pub program: &'a clflow_bytecode::program::Program,
    pub regs: &'a [u64],
    pub active: &'a [u32],
    pub frames: &'a [Vec<Frame>],
    pub local_id: &'a [[u64; 3]],
    pub mem: &'a Mem<'m, 'r>,
    /// A lane's work-item's global id.
    pub item: &'a dyn Fn(usize) -> [u64; 3],
}

/// Carries the shadows of the operands of `op` (at `at`) to its results for
/// every active lane, and notes each use of an undefined value; before the
/// op runs, so that its operands are still there.
pub(super) fn apply(sh: &mut Shadow, op: &Op, at: usize, b: &Batch<'_, '_, '_>) {
    let width = sh.width;
    match sh.flows[at] {
        // The commonest: one slot from one-slot operands, lanes inside.
        Flow::Scalar { dst, reads, n } => {
            let row = |r: Reg| r.index() * width;
            let (d, [x, y, z]) = (row(dst), reads.map(row));
            let (regs, active) = (&mut sh.regs[..], b.active);
            match n {
                0 => join(regs, d, [], active),
                1 => join(regs, d, [x], active),
                2 => join(regs, d, [x, y], active),
                _ => join(regs, d, [x, y, z], active),
            }
        }
        Flow::Lanes => {
            for &lane in b.active {
                sh.flow(lane as usize, at);
            }
        }
        Flow::Nothing => {}
        Flow::Special => {
            for &lane in b.active {
                let lane = Lane { b, at, l: lane as usize, width };
                special(sh, op, &lane);
            }
        }
    }
}

/// Each active lane's row `d` becomes the join of its rows `srcs` (the
/// count a constant, so that the loop is unrolled).
#[inline(always)]
fn join<const N: usize>(regs: &mut [u8], d: usize, srcs: [usize; N], active: &[u32]) {
    for &lane in active {
        let l = lane as usize;
        regs[d + l] = srcs.iter().fold(0, |u, &s| u | regs[s + l]);
    }
}

/// One lane of the batch an op with its own rule runs in.
struct Lane<'x, 'a, 'm, 'r> {
    b: &'x Batch<'a, 'm, 'r>,
    at: usize,
    l: usize,
    width: usize,
}

impl Lane<'_, '_, '_, '_> {
    /// Register r's value in this lane.
    fn value(&self, r: Reg) -> u64 {
        self.b.regs[r.index() * self.width + self.l]
    }

    /// Checks a use: notes it where the value is undefined.
    fn check(&self, sh: &mut Shadow, u: u8, how: Use) {
        if u != 0 {
            sh.note(self.at, how, (self.b.item)(self.l));
        }
    }

    fn resolve(&self, p: u64, bytes: u64) -> Option<Loc> {
        self.b.mem.resolve(p, bytes, 1).ok()
    }
}

/// The ops whose shadows follow a rule of their own (`Flow::Special`).
fn special(sh: &mut Shadow, op: &Op, x: &Lane<'_, '_, '_, '_>) {
    match *op {
        Op::Int { .. } | Op::And { .. } | Op::Or { .. } | Op::Logic { .. } | Op::Select { .. } => {
            deciding(sh, op, x)
        }
        family!(Access) | Op::GroupCopy { .. } => memory(sh, op, x),
        Op::Moves { .. }
        | Op::Call { .. }
        | Op::Branch { .. }
        | Op::Switch { .. }
        | Op::Ret { .. } => control(sh, op, x),
        family!(Io) => io(sh, op, x),
        // Each result lane of these comes of every operand lane.
        Op::Bitcast { to_n, dst, src, from_n, .. } => {
            sh.mix(x.l, dst, to_n as u32, &[(src, from_n as u32)])
        }
        Op::Geometric { n, dst, a, b: c, .. } => {
            let out = sh.operands[x.at].writes[0].1;
            sh.mix(x.l, dst, out, &[(a, n as u32), (c, n as u32)]);
        }
        // Carried by `apply`.
        _ => {}
    }
}

/// Divisions, which use their divisor, and the ops a defined operand can
/// decide alone: an and's false or 0, an or's true or all ones, a select's
/// condition.
fn deciding(sh: &mut Shadow, op: &Op, x: &Lane<'_, '_, '_, '_>) {
    let l = x.l;
    match *op {
        Op::Int { op, n, b: d, .. } => {
            if matches!(
                op,
                IntOp::UDiv | IntOp::SDiv | IntOp::UMod | IntOp::SRem | IntOp::SMod
            ) {
                let u = sh.any(d, n as u32, l);
                x.check(sh, u, Use::Divisor);
            }
            sh.flow(l, x.at);
        }
        Op::And { dst, a, b: c } => {
            let decides = |r: Reg| sh.get(r, l) == 0 && x.value(r) as u32 == 0;
            let u = if decides(a) || decides(c) {
                0
            } else {
                sh.get(a, l) | sh.get(c, l)
            };
            sh.set(dst, l, u);
        }
        Op::Or { dst, a, b: c } => {
            let decides = |r: Reg| sh.get(r, l) == 0 && x.value(r) as u32 == u32::MAX;
            let u = if decides(a) || decides(c) {
                0
            } else {
                sh.get(a, l) | sh.get(c, l)
            };
            sh.set(dst, l, u);
        }
        Op::Logic { op: op @ (LogicOp::And | LogicOp::Or), n, dst, a, b: c } => {
            let deciding = u64::from(op == LogicOp::Or);
            for i in 0..n as u32 {
                let decides =
                    |r: Reg| sh.get(r + i, l) == 0 && u64::from(x.value(r + i) != 0) == deciding;
                let u = if decides(a) || decides(c) {
                    0
                } else {
                    sh.get(a + i, l) | sh.get(c + i, l)
                };
                sh.set(dst + i, l, u);
            }
        }
        Op::Select { n, vector_cond, dst, cond, a, b: c } => {
            // The chosen operand's, and the condition's.
            for i in 0..n as u32 {
                let k = cond + if vector_cond { i } else { 0 };
                let chosen = if x.value(k) != 0 { a + i } else { c + i };
                let u = sh.get(k, l) | sh.get(chosen, l);
                sh.set(dst + i, l, u);
            }
        }
        _ => {}
    }
}

/// Loads, stores, copies and atomics: shadows between registers and the
/// memory's, an undefined address or stored value noted.
fn memory(sh: &mut Shadow, op: &Op, x: &Lane<'_, '_, '_, '_>) {
    let l = x.l;
    match *op {
        Op::Load { .. }
        | Op::LoadHalf { .. }
        | Op::LoadAgg { .. }
        | Op::Store { .. }
        | Op::StoreHalf { .. }
        | Op::StoreAgg { .. } => {
            if let Some(t) = Transfer::of(op, x.b.program) {
                t.carry(sh, x, x.value(t.ptr));
            }
        }
        Op::Copy { dst, src, bytes, bytes_reg } => {
            let mut u = sh.get(dst, l) | sh.get(src, l);
            let bytes = match bytes_reg {
                Some(r) => {
                    u |= sh.get(r, l);
                    x.value(r)
                }
                None => bytes,
            };
            x.check(sh, u, Use::Address);
            if let (Some(to), Some(from)) = (
                x.resolve(x.value(dst), bytes),
                x.resolve(x.value(src), bytes),
            ) {
                sh.copy_bytes(l, to, from, bytes);
            }
        }
        Op::GroupCopy { dst, src, elems, stride, elem, out, .. } => {
            if x.b.local_id[l] == [0, 0, 0] {
                let u = sh.any(dst, 1, l) | sh.get(src, l) | sh.get(elems, l) | sh.get(stride, l);
                x.check(sh, u, Use::Address);
                let (count, step) = (x.value(elems), x.value(stride).max(1));
                let (d, s) = (x.value(dst), x.value(src));
                let local_dst = crate::memory::decode(d).0 == crate::memory::SPACE_LOCAL;
                for i in 0..count {
                    let (far, near) = (i * step * elem as u64, i * elem as u64);
                    let (to, from) = if local_dst {
                        (d.wrapping_add(near), s.wrapping_add(far))
                    } else {
                        (d.wrapping_add(far), s.wrapping_add(near))
                    };
                    let e = elem as u64;
                    if let (Some(to), Some(from)) = (x.resolve(to, e), x.resolve(from, e)) {
                        sh.copy_bytes(l, to, from, e);
                    }
                }
            }
            sh.define(l, out, 1);
        }
        Op::Atomic { op, bits, dst, ptr, a, b: c } => {
            x.check(sh, sh.get(ptr, l), Use::Address);
            let size = bits as u64 / 8;
            let Some(loc) = x.resolve(x.value(ptr), size) else {
                return;
            };
            let old = sh.load(l, loc, 0, size);
            let new = match op {
                AtomicOp::Load => old,
                AtomicOp::Store | AtomicOp::Exchange => sh.get(a, l),
                AtomicOp::CompareExchange => old | sh.get(a, l) | sh.get(c, l),
                _ => old | sh.get(a, l),
            };
            if matches!(loc, Loc::Global(..)) && op != AtomicOp::Load {
                x.check(sh, new, Use::Store);
            }
            sh.store(l, loc, 0, size, new);
            sh.set(dst, l, old);
        }
        _ => {}
    }
}

/// Moves, calls and returns carry shadows between frames; a branch uses
/// its condition.
fn control(sh: &mut Shadow, op: &Op, x: &Lane<'_, '_, '_, '_>) {
    let l = x.l;
    match *op {
        Op::Moves { start, len } | Op::Call { moves_start: start, moves_len: len, .. } => {
            for m in &x.b.program.moves[start as usize..(start + len) as usize] {
                sh.copy(l, m.dst, m.src, m.n);
            }
        }
        Op::Branch { cond, .. } => x.check(sh, sh.get(cond, l), Use::Branch),
        Op::Switch { sel, .. } => x.check(sh, sh.get(sel, l), Use::Branch),
        Op::Ret { src, n } => {
            if let Some(frame) = x.b.frames[l].last() {
                sh.copy(l, frame.ret, src, n.min(frame.ret_n));
            }
        }
        _ => {}
    }
}

/// Images use their coordinates; what the machine makes (a texel read, a
/// query, printf's count) is defined.
fn io(sh: &mut Shadow, op: &Op, x: &Lane<'_, '_, '_, '_>) {
    let l = x.l;
    match *op {
        Op::ImageRead { dst, coord, form, .. } => {
            let u = sh.any(coord, form.coord_n as u32, l);
            x.check(sh, u, Use::Address);
            sh.define(l, dst, 4);
        }
        Op::ImageWrite { coord, src, form, .. } => {
            let u = sh.any(coord, form.coord_n as u32, l);
            x.check(sh, u, Use::Address);
            let texel = sh.any(src, 4, l);
            x.check(sh, texel, Use::Store);
        }
        Op::ImageQuery { dst, n, .. } => sh.define(l, dst, n as u32),
        Op::Printf { dst, .. } => sh.define(l, dst, 1),
        _ => {}
    }
}

/// A load or a store: `n` parts (part i at `parts.at(i)`) between memory
/// at `ptr` and the registers from `regs`.
struct Transfer<'p> {
    ptr: Reg,
    regs: Reg,
    parts: Parts<'p>,
    n: u32,
    store: bool,
}

/// Where a transfer's parts lie: a run of equal parts (a scalar, a vector)
/// or a struct's leaves.
#[derive(Clone, Copy)]
enum Parts<'p> {
    Run(u64),
    Leaves(&'p [clflow_bytecode::layout::Leaf]),
}

impl Parts<'_> {
    /// Part i's offset and size.
    fn at(self, i: u64) -> (u64, u64) {
        match self {
            Parts::Run(size) => (i * size, size),
            Parts::Leaves(leaves) => {
                let leaf = &leaves[i as usize];
                (leaf.offset as u64, leaf.size as u64)
            }
        }
    }
}

impl<'p> Transfer<'p> {
    fn of(op: &Op, program: &'p clflow_bytecode::program::Program) -> Option<Transfer<'p>> {
        let leaves = |layout: u32| {
            let leaves = &program.layouts[layout as usize];
            (Parts::Leaves(leaves), leaves.len() as u32)
        };
        let (ptr, regs, (parts, n), store) = match *op {
            Op::Load { dst, ptr, size, n, .. } => {
                (ptr, dst, (Parts::Run(size as u64), n as u32), false)
            }
            Op::LoadHalf { dst, ptr, n } => (ptr, dst, (Parts::Run(2), n as u32), false),
            Op::LoadAgg { dst, ptr, layout } => (ptr, dst, leaves(layout), false),
            Op::Store { src, ptr, size, n, .. } => {
                (ptr, src, (Parts::Run(size as u64), n as u32), true)
            }
            Op::StoreHalf { src, ptr, n, .. } => (ptr, src, (Parts::Run(2), n as u32), true),
            Op::StoreAgg { src, ptr, layout } => (ptr, src, leaves(layout), true),
            _ => return None,
        };
        Some(Transfer { ptr, regs, parts, n, store })
    }

    /// Carries lane `l`'s shadows through the transfer (its pointer's value
    /// `p`). Stored to global memory, a scalar must be defined, and a
    /// vector or struct in part: its unused parts (a vector's padding, a
    /// struct's unset member) may not be.
    fn carry(&self, sh: &mut Shadow<'_>, x: &Lane<'_, '_, '_, '_>, p: u64) {
        let l = x.l;
        x.check(sh, sh.get(self.ptr, l), Use::Address);
        let span = (0..u64::from(self.n))
            .map(|i| self.parts.at(i))
            .map(|(o, s)| o + s)
            .max()
            .unwrap_or(0);
        let Some(loc) = x.resolve(p, span) else {
            return;
        };
        if self.store && matches!(loc, Loc::Global(..)) {
            let n = self.n;
            let undefined = (0..n).filter(|&i| sh.get(self.regs + i, l) != 0).count();
            let used = if n == 1 {
                undefined > 0
            } else {
                undefined == n as usize
            };
            x.check(sh, u8::from(used), Use::Store);
        }
        for i in 0..self.n {
            let (offset, size) = self.parts.at(i as u64);
            let reg = self.regs + i;
            if self.store {
                let u = sh.get(reg, l);
                sh.store(l, loc, offset, size, u);
            } else {
                let u = sh.load(l, loc, offset, size);
                sh.set(reg, l, u);
            }
        }
    }
}
