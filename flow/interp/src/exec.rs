//! The machine: runs the bytecode of one work-group at a time.
//!
//! Each work-item has its own register file, allocated once and reused:
//! constants and kernel arguments are written into it when it is created
//! and never overwritten, every other slot is written before it is read.
//! Nothing is allocated per instruction. Kernels without barriers run each
//! work-item to completion in turn; with barriers, every work-item of the
//! group runs until it reaches the barrier, then the next, and all resume
//! together once all have arrived.

use crate::bytecode::*;
use crate::counts::{Space, Traffic};
use crate::error::TrapKind;
use crate::memory::{
    self, Arena, ArenaLayout, GlobalMemory, SPACE_GLOBAL, SPACE_LOCAL, SPACE_PRIVATE,
};
use crate::opencl_std as math;
use crate::program::Program;

/// The NDRange as the builtins report it (unused dimensions hold 1 / 0).
#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    pub dims: u8,
    pub global: [u64; 3],
    pub local: [u64; 3],
    pub groups: [u64; 3],
    pub offset: [u64; 3],
}

impl Geometry {
    pub fn group_of(&self, index: u64) -> [u64; 3] {
        let [gx, gy, _] = self.groups;
        [index % gx, (index / gx) % gy, index / (gx * gy)]
    }

    pub fn global_id(&self, group: [u64; 3], local: [u64; 3]) -> [u64; 3] {
        std::array::from_fn(|d| group[d] * self.local[d] + local[d] + self.offset[d])
    }
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    ret_pc: usize,
    ret: Reg,
    ret_n: u32,
}

/// One work-item's state.
#[derive(Debug, Clone)]
pub struct Item {
    regs: Vec<u64>,
    private: Arena,
    frames: Vec<Frame>,
    pc: usize,
    local_id: [u64; 3],
    steps: u64,
    done: bool,
}

enum Stop {
    Done,
    Barrier(usize),
}

/// A work-item stopped: where, who, why.
#[derive(Debug)]
pub struct Fault {
    pub pc: usize,
    pub item: [u64; 3],
    pub kind: TrapKind,
}

/// What a thread accumulates over the work-groups it runs.
#[derive(Debug, Default)]
pub struct Partial {
    pub hits: Vec<u64>,
    pub traffic: Traffic,
}

impl Partial {
    pub fn merge(mut self, other: Partial) -> Partial {
        if self.hits.len() < other.hits.len() {
            self.hits.resize(other.hits.len(), 0);
        }
        for (a, b) in self.hits.iter_mut().zip(other.hits) {
            *a += b;
        }
        self.traffic.scaled_add(&other.traffic, 1);
        self
    }
}

/// Everything a launch fixes for all work-groups.
pub struct Launched<'a> {
    pub program: &'a Program,
    pub global: &'a GlobalMemory,
    pub geometry: Geometry,
    pub local_layout: ArenaLayout,
    /// The register file with constants and kernel arguments in place.
    pub regs: Vec<u64>,
    /// By-value arguments: (private arena offset, bytes).
    pub private_init: Vec<(usize, Vec<u8>)>,
    pub max_steps: u64,
}

/// Runs work-groups on one thread, reusing its register files and arenas.
pub struct Runner<'a> {
    launch: &'a Launched<'a>,
    items: Vec<Item>,
    local: Arena,
    pub partial: Partial,
}

impl<'a> Runner<'a> {
    pub fn new(launch: &'a Launched<'a>) -> Self {
        Runner {
            launch,
            items: Vec::new(),
            local: Arena {
                bytes: vec![0; launch.local_layout.total() as usize],
            },
            partial: Partial {
                hits: vec![0; launch.program.blocks.len()],
                traffic: Traffic::default(),
            },
        }
    }

    fn fresh_item(&self) -> Item {
        Item {
            regs: self.launch.regs.clone(),
            private: Arena {
                bytes: vec![0; self.launch.program.private.total() as usize],
            },
            frames: Vec::new(),
            pc: 0,
            local_id: [0; 3],
            steps: 0,
            done: false,
        }
    }

    fn reset(&self, item: &mut Item, local_id: [u64; 3]) {
        item.private.bytes.fill(0);
        for (at, bytes) in &self.launch.private_init {
            item.private.bytes[*at..*at + bytes.len()].copy_from_slice(bytes);
        }
        item.frames.clear();
        item.pc = self.launch.program.entry as usize;
        item.local_id = local_id;
        item.steps = 0;
        item.done = false;
    }

    pub fn run_group(&mut self, index: u64) -> Result<(), Fault> {
        let g = &self.launch.geometry;
        let group = g.group_of(index);
        self.local.bytes.fill(0);
        let [lx, ly, lz] = g.local;
        let count = (lx * ly * lz) as usize;
        let local_of = |i: usize| {
            let i = i as u64;
            [i % lx, (i / lx) % ly, i / (lx * ly)]
        };
        let mut items = std::mem::take(&mut self.items);
        let result = if !self.launch.program.uses_barrier {
            if items.is_empty() {
                items.push(self.fresh_item());
            }
            let item = &mut items[0];
            let mut outcome = Ok(());
            for i in 0..count {
                self.reset(item, local_of(i));
                if let Err(f) = self.run(item, group) {
                    outcome = Err(f);
                    break;
                }
            }
            outcome
        } else {
            while items.len() < count {
                items.push(self.fresh_item());
            }
            for (i, item) in items.iter_mut().take(count).enumerate() {
                self.reset(item, local_of(i));
            }
            self.run_with_barriers(&mut items[..count], group)
        };
        self.items = items;
        result
    }

    fn run_with_barriers(&mut self, items: &mut [Item], group: [u64; 3]) -> Result<(), Fault> {
        let g = self.launch.geometry;
        loop {
            let mut at_barrier: Option<(usize, [u64; 3])> = None;
            let mut finished: Option<[u64; 3]> = None;
            for item in items.iter_mut() {
                let who = g.global_id(group, item.local_id);
                match self.run(item, group)? {
                    Stop::Done => {
                        item.done = true;
                        finished.get_or_insert(who);
                    }
                    Stop::Barrier(pc) => match at_barrier {
                        None => at_barrier = Some((pc, who)),
                        Some((first, other)) if first != pc => {
                            return Err(Fault {
                                pc,
                                item: who,
                                kind: TrapKind::BarrierDivergence(format!(
                                    "this work-item waits at a different barrier than work-item ({},{},{}) ({})",
                                    other[0],
                                    other[1],
                                    other[2],
                                    self.launch.program.site(first)
                                )),
                            });
                        }
                        Some(_) => {}
                    },
                }
            }
            match (at_barrier, finished) {
                (None, _) => return Ok(()),
                (Some(_), None) => continue,
                (Some((pc, who)), Some(done)) => {
                    return Err(Fault {
                        pc,
                        item: who,
                        kind: TrapKind::BarrierDivergence(format!(
                            "this work-item waits at a barrier that work-item ({},{},{}) never reached (it returned)",
                            done[0], done[1], done[2]
                        )),
                    })
                }
            }
        }
    }

    /// Runs one work-item until it returns or reaches a barrier.
    fn run(&mut self, item: &mut Item, group: [u64; 3]) -> Result<Stop, Fault> {
        let program = self.launch.program;
        let g = self.launch.geometry;
        let fault = |pc: usize, item: &Item, kind: TrapKind| Fault {
            pc,
            item: g.global_id(group, item.local_id),
            kind,
        };
        match self.execute(item, group) {
            Ok(stop) => Ok(stop),
            Err((pc, kind)) => {
                let _ = program;
                Err(fault(pc, item, kind))
            }
        }
    }

    #[inline(always)]
    fn execute(&mut self, item: &mut Item, group: [u64; 3]) -> Result<Stop, (usize, TrapKind)> {
        let launch = self.launch;
        let program = launch.program;
        let code = &program.code[..];
        let max_steps = launch.max_steps;
        let hits = &mut self.partial.hits[..];
        let mut mem = Mem {
            global: launch.global,
            local: &mut self.local,
            local_layout: &launch.local_layout,
            private_layout: &program.private,
            traffic: &mut self.partial.traffic,
        };
        let Item {
            regs,
            private,
            frames,
            pc: item_pc,
            local_id,
            steps,
            ..
        } = item;
        let regs = &mut regs[..];
        let mut pc = *item_pc;
        // Register indices were proven in range when the program was
        // translated (`check_code`), and every register file has exactly
        // `init_regs.len()` slots.
        debug_assert_eq!(regs.len(), program.init_regs.len());
        macro_rules! r {
            ($x:expr) => {
                *unsafe_reg(regs, $x as usize)
            };
        }
        loop {
            let at = pc;
            pc += 1;
            let trap = |kind: TrapKind| (at, kind);
            // Matching on the place, not a copy, lets each arm load only
            // the fields it uses.
            match code[at] {
                Op::Block { block, steps: n } => {
                    hits[block as usize] += 1;
                    *steps += n as u64;
                    if *steps > max_steps {
                        return Err(trap(TrapKind::StepLimit(max_steps)));
                    }
                }
                Op::Mov { dst, src, n } => {
                    if n == 1 {
                        r!(dst) = r!(src);
                    } else {
                        regs.copy_within(src as usize..(src + n) as usize, dst as usize);
                    }
                }
                Op::Moves { start, len } => {
                    for m in &program.moves[start as usize..(start + len) as usize] {
                        copy_regs(regs, m.dst, m.src, m.n);
                    }
                }
                Op::Splat { dst, src, n } => {
                    let v = r!(src);
                    regs[dst as usize..dst as usize + n as usize].fill(v);
                }
                Op::Add32 { dst, a, b } => {
                    r!(dst) = (r!(a) as u32).wrapping_add(r!(b) as u32) as u64
                }
                Op::Sub32 { dst, a, b } => {
                    r!(dst) = (r!(a) as u32).wrapping_sub(r!(b) as u32) as u64
                }
                Op::Mul32 { dst, a, b } => {
                    r!(dst) = (r!(a) as u32).wrapping_mul(r!(b) as u32) as u64
                }
                Op::Shl32 { dst, a, b } => r!(dst) = ((r!(a) as u32) << (r!(b) % 32)) as u64,
                Op::LShr32 { dst, a, b } => r!(dst) = ((r!(a) as u32) >> (r!(b) % 32)) as u64,
                Op::And { dst, a, b } => r!(dst) = r!(a) & r!(b),
                Op::Or { dst, a, b } => r!(dst) = r!(a) | r!(b),
                Op::Xor { dst, a, b } => r!(dst) = r!(a) ^ r!(b),
                Op::Rotl32 { dst, a, b } => {
                    r!(dst) = (r!(a) as u32).rotate_left(r!(b) as u32 % 32) as u64
                }
                Op::Offset { dst, base, disp } => r!(dst) = r!(base).wrapping_add(disp as u64),
                Op::Index {
                    dst,
                    base,
                    index,
                    bits,
                    stride,
                    disp,
                } => {
                    let i = math::sext(r!(index), bits) as u64;
                    r!(dst) = r!(base)
                        .wrapping_add(disp as i64 as u64)
                        .wrapping_add(i.wrapping_mul(stride as i64 as u64));
                }
                Op::Int {
                    op,
                    bits,
                    n: 1,
                    dst,
                    a,
                    b,
                } => {
                    // The common scalar case, without the lane loop.
                    let (x, y) = (r!(a), r!(b));
                    r!(dst) = match op {
                        IntOp::Add => x.wrapping_add(y) & math::mask(bits),
                        IntOp::Sub => x.wrapping_sub(y) & math::mask(bits),
                        IntOp::Xor => x ^ y,
                        IntOp::And => x & y,
                        IntOp::Or => x | y,
                        IntOp::Mul => x.wrapping_mul(y) & math::mask(bits),
                        IntOp::Shl => (x << (y % bits as u64)) & math::mask(bits),
                        IntOp::LShr => x >> (y % bits as u64),
                        IntOp::UMod if y != 0 => x % y,
                        IntOp::UDiv if y != 0 => x / y,
                        _ => math::int_bin(op, bits, x, y).map_err(trap)?,
                    };
                }
                Op::Int {
                    op,
                    bits,
                    n,
                    dst,
                    a,
                    b,
                } => {
                    for i in 0..n as u32 {
                        r!(dst + i) =
                            math::int_bin(op, bits, r!(a + i), r!(b + i)).map_err(trap)?;
                    }
                }
                Op::IntUn {
                    op,
                    bits,
                    n,
                    dst,
                    a,
                } => {
                    for i in 0..n as u32 {
                        r!(dst + i) = math::int_un(op, bits, r!(a + i));
                    }
                }
                Op::IntTer {
                    op,
                    bits,
                    n,
                    dst,
                    a,
                    b,
                    c,
                } => {
                    for i in 0..n as u32 {
                        r!(dst + i) = math::int_ter(op, bits, r!(a + i), r!(b + i), r!(c + i));
                    }
                }
                Op::Upsample { bits, n, dst, a, b } => {
                    for i in 0..n as u32 {
                        r!(dst + i) = (r!(a + i) << bits) | r!(b + i);
                    }
                }
                Op::Cmp {
                    op,
                    bits,
                    n,
                    dst,
                    a,
                    b,
                } => {
                    for i in 0..n as u32 {
                        r!(dst + i) = math::cmp(op, bits, r!(a + i), r!(b + i)) as u64;
                    }
                }
                Op::Float {
                    op,
                    bits,
                    n,
                    dst,
                    a,
                    b,
                } => {
                    for i in 0..n as u32 {
                        r!(dst + i) = math::float_bin(op, bits, r!(a + i), r!(b + i));
                    }
                }
                Op::FloatUn {
                    op,
                    bits,
                    n,
                    dst,
                    a,
                } => {
                    for i in 0..n as u32 {
                        r!(dst + i) = math::float_un(op, bits, r!(a + i));
                    }
                }
                Op::FloatTer {
                    op,
                    bits,
                    n,
                    dst,
                    a,
                    b,
                    c,
                } => {
                    for i in 0..n as u32 {
                        r!(dst + i) = math::float_ter(op, bits, r!(a + i), r!(b + i), r!(c + i));
                    }
                }
                Op::FCmp {
                    op,
                    ordered,
                    bits,
                    n,
                    dst,
                    a,
                    b,
                } => {
                    for i in 0..n as u32 {
                        r!(dst + i) = math::fcmp(op, ordered, bits, r!(a + i), r!(b + i)) as u64;
                    }
                }
                Op::FTest {
                    op,
                    bits,
                    n,
                    dst,
                    a,
                } => {
                    for i in 0..n as u32 {
                        r!(dst + i) = math::ftest(op, bits, r!(a + i)) as u64;
                    }
                }
                Op::Logic { op, n, dst, a, b } => {
                    for i in 0..n as u32 {
                        let (x, y) = (r!(a + i) != 0, r!(b + i) != 0);
                        r!(dst + i) = match op {
                            LogicOp::And => x && y,
                            LogicOp::Or => x || y,
                            LogicOp::Eq => x == y,
                            LogicOp::Ne => x != y,
                        } as u64;
                    }
                }
                Op::LNot { n, dst, a } => {
                    for i in 0..n as u32 {
                        r!(dst + i) = (r!(a + i) == 0) as u64;
                    }
                }
                Op::Select {
                    n,
                    vector_cond,
                    dst,
                    cond,
                    a,
                    b,
                } => {
                    for i in 0..n as u32 {
                        let c = r!(cond + if vector_cond { i } else { 0 });
                        r!(dst + i) = if c != 0 { r!(a + i) } else { r!(b + i) };
                    }
                }
                Op::SelectMsb {
                    n,
                    bits,
                    msb,
                    dst,
                    a,
                    b,
                    c,
                } => {
                    for i in 0..n as u32 {
                        let cv = r!(c + i);
                        let pick_b = if msb {
                            (cv >> (bits - 1)) & 1 == 1
                        } else {
                            cv != 0
                        };
                        r!(dst + i) = if pick_b { r!(b + i) } else { r!(a + i) };
                    }
                }
                Op::AnyAll { all, n, dst, a } => {
                    let lanes = &regs[a as usize..(a + n as u32) as usize];
                    let v = if all {
                        lanes.iter().all(|x| *x != 0)
                    } else {
                        lanes.iter().any(|x| *x != 0)
                    };
                    r!(dst) = v as u64;
                }
                Op::Convert {
                    kind,
                    from,
                    to,
                    n,
                    dst,
                    src,
                } => {
                    for i in 0..n as u32 {
                        r!(dst + i) = math::convert(kind, from, to, r!(src + i));
                    }
                }
                Op::Bitcast {
                    from,
                    from_n,
                    to,
                    to_n,
                    dst,
                    src,
                } => {
                    let mut bytes = [0u8; 128];
                    let fsize = from as usize / 8;
                    for i in 0..from_n as usize {
                        bytes[i * fsize..(i + 1) * fsize]
                            .copy_from_slice(&r!(src + i as u32).to_le_bytes()[..fsize]);
                    }
                    let tsize = to as usize / 8;
                    for i in 0..to_n as usize {
                        let mut w = [0u8; 8];
                        w[..tsize].copy_from_slice(&bytes[i * tsize..(i + 1) * tsize]);
                        r!(dst + i as u32) = u64::from_le_bytes(w);
                    }
                }
                Op::ExtractDyn {
                    dst,
                    base,
                    index,
                    index_bits,
                    n,
                } => {
                    let i = r!(index) & math::mask(index_bits);
                    // Out-of-range lanes are undefined in SPIR-V: read as 0.
                    r!(dst) = if i < n as u64 { r!(base + i as u32) } else { 0 };
                }
                Op::InsertDyn {
                    dst,
                    base,
                    value,
                    index,
                    index_bits,
                    n,
                } => {
                    regs.copy_within(base as usize..(base + n as u32) as usize, dst as usize);
                    let i = r!(index) & math::mask(index_bits);
                    if i < n as u64 {
                        r!(dst + i as u32) = r!(value);
                    }
                }
                Op::Geometric {
                    op,
                    bits,
                    n,
                    dst,
                    a,
                    b,
                } => geometric(regs, op, bits, n, dst, a, b),
                Op::Ptr {
                    dst,
                    base,
                    disp,
                    terms_start,
                    terms_len,
                } => {
                    let mut p = r!(base).wrapping_add(disp as u64);
                    for t in &program.terms
                        [terms_start as usize..terms_start as usize + terms_len as usize]
                    {
                        p = p.wrapping_add(
                            (math::sext(r!(t.reg), t.bits) as u64).wrapping_mul(t.stride as u64),
                        );
                    }
                    r!(dst) = p;
                }
                Op::PtrDiff { dst, a, b, elem } => {
                    r!(dst) = ((r!(a).wrapping_sub(r!(b)) as i64) / elem as i64) as u64;
                }
                Op::Load {
                    dst,
                    ptr,
                    size,
                    n,
                    align,
                } => {
                    let loc = mem
                        .resolve(r!(ptr), size as u64 * n as u64, align as u64)
                        .map_err(trap)?;
                    for i in 0..n as u32 {
                        r!(dst + i) = mem.read(private, loc, i as u64 * size as u64, size as u32);
                    }
                }
                Op::Store {
                    src,
                    ptr,
                    size,
                    n,
                    align,
                } => {
                    let loc = mem
                        .resolve(r!(ptr), size as u64 * n as u64, align as u64)
                        .map_err(trap)?;
                    for i in 0..n as u32 {
                        mem.write(
                            private,
                            loc,
                            i as u64 * size as u64,
                            size as u32,
                            r!(src + i),
                        );
                    }
                }
                Op::LoadAgg { dst, ptr, layout } => {
                    let leaves = &program.layouts[layout as usize];
                    let span = leaves
                        .iter()
                        .map(|l| l.offset as u64 + l.size as u64)
                        .max()
                        .unwrap_or(0);
                    let loc = mem.resolve(r!(ptr), span, 1).map_err(trap)?;
                    for (i, l) in leaves.iter().enumerate() {
                        r!(dst + i as u32) = mem.read(private, loc, l.offset as u64, l.size as u32);
                    }
                }
                Op::StoreAgg { src, ptr, layout } => {
                    let leaves = &program.layouts[layout as usize];
                    let span = leaves
                        .iter()
                        .map(|l| l.offset as u64 + l.size as u64)
                        .max()
                        .unwrap_or(0);
                    let loc = mem.resolve(r!(ptr), span, 1).map_err(trap)?;
                    for (i, l) in leaves.iter().enumerate() {
                        mem.write(
                            private,
                            loc,
                            l.offset as u64,
                            l.size as u32,
                            r!(src + i as u32),
                        );
                    }
                }
                Op::Copy {
                    dst,
                    src,
                    bytes,
                    bytes_reg,
                } => {
                    let bytes = match bytes_reg {
                        Some(reg) => {
                            let b = r!(reg);
                            mem.count(r!(src), b, false);
                            mem.count(r!(dst), b, true);
                            b
                        }
                        None => bytes,
                    };
                    mem.copy(private, r!(dst), r!(src), bytes).map_err(trap)?;
                }
                Op::GroupCopy {
                    dst,
                    src,
                    elems,
                    stride,
                    elem,
                    event,
                    out,
                } => {
                    if *local_id == [0, 0, 0] {
                        let (count, stride) = (r!(elems), r!(stride).max(1));
                        // Strided copies gather from (local→global: scatter to) every stride-th element.
                        let local_dst = memory::decode(r!(dst)).0 == SPACE_LOCAL;
                        for i in 0..count {
                            let far = i * stride * elem as u64;
                            let near = i * elem as u64;
                            let (d, s) = if local_dst {
                                (r!(dst).wrapping_add(near), r!(src).wrapping_add(far))
                            } else {
                                (r!(dst).wrapping_add(far), r!(src).wrapping_add(near))
                            };
                            mem.count(s, elem as u64, false);
                            mem.count(d, elem as u64, true);
                            mem.copy(private, d, s, elem as u64).map_err(trap)?;
                        }
                    }
                    r!(out) = r!(event);
                }
                Op::LoadHalf { dst, ptr, n } => {
                    let loc = mem.resolve(r!(ptr), 2 * n as u64, 2).map_err(trap)?;
                    for i in 0..n as u32 {
                        let h = mem.read(private, loc, 2 * i as u64, 2) as u16;
                        r!(dst + i) = math::f16_to_f32(h).to_bits() as u64;
                    }
                }
                Op::StoreHalf {
                    src,
                    ptr,
                    n,
                    from,
                    rounding,
                } => {
                    let loc = mem.resolve(r!(ptr), 2 * n as u64, 2).map_err(trap)?;
                    for i in 0..n as u32 {
                        let h = if from == 64 {
                            math::convert(ConvKind::FloatToFloat { rounding }, 64, 16, r!(src + i))
                        } else {
                            math::f32_to_f16_rounded(f32::from_bits(r!(src + i) as u32), rounding)
                                as u64
                        };
                        mem.write(private, loc, 2 * i as u64, 2, h);
                    }
                }
                Op::Atomic {
                    op,
                    bits,
                    dst,
                    ptr,
                    a,
                    b,
                } => {
                    let size = bits as u64 / 8;
                    let loc = mem.resolve(r!(ptr), size, size).map_err(trap)?;
                    r!(dst) = mem.atomic(private, loc, op, bits, r!(a), r!(b));
                }
                Op::Builtin {
                    which,
                    dst,
                    lanes,
                    bits,
                } => {
                    let m = math::mask(bits);
                    let lid = *local_id;
                    let gid = g_id(&launch.geometry, group, lid);
                    let g = &launch.geometry;
                    let v: [u64; 3] = match which {
                        Builtin::GlobalId => gid,
                        Builtin::LocalId => lid,
                        Builtin::GroupId => group,
                        Builtin::GlobalSize => g.global,
                        Builtin::LocalSize => g.local,
                        Builtin::NumGroups => g.groups,
                        Builtin::GlobalOffset => g.offset,
                        Builtin::WorkDim => [g.dims as u64; 3],
                        Builtin::GlobalLinearId => {
                            let [x, y, z] =
                                std::array::from_fn::<u64, 3, _>(|d| gid[d] - g.offset[d]);
                            [(z * g.global[1] + y) * g.global[0] + x; 3]
                        }
                        Builtin::LocalLinearId => {
                            [(lid[2] * g.local[1] + lid[1]) * g.local[0] + lid[0]; 3]
                        }
                    };
                    for i in 0..lanes.min(3) as u32 {
                        r!(dst + i) = v[i as usize] & m;
                    }
                }
                Op::Jump { target } => pc = target as usize,
                Op::Branch { cond, then, other } => {
                    pc = if r!(cond) != 0 { then } else { other } as usize;
                }
                Op::Switch {
                    sel,
                    bits,
                    cases_start,
                    cases_len,
                    default,
                } => {
                    let v = r!(sel) & math::mask(bits);
                    let cases =
                        &program.cases[cases_start as usize..(cases_start + cases_len) as usize];
                    pc = cases
                        .iter()
                        .find(|(c, _)| *c == v)
                        .map(|(_, t)| *t)
                        .unwrap_or(default) as usize;
                }
                Op::Call {
                    target,
                    moves_start,
                    moves_len,
                    ret,
                    ret_n,
                } => {
                    for m in
                        &program.moves[moves_start as usize..(moves_start + moves_len) as usize]
                    {
                        copy_regs(regs, m.dst, m.src, m.n);
                    }
                    frames.push(Frame {
                        ret_pc: pc,
                        ret,
                        ret_n,
                    });
                    pc = target as usize;
                }
                Op::Ret { src, n } => match frames.pop() {
                    Some(frame) => {
                        let n = n.min(frame.ret_n);
                        regs.copy_within(src as usize..(src + n) as usize, frame.ret as usize);
                        pc = frame.ret_pc;
                    }
                    None => {
                        *item_pc = pc;
                        return Ok(Stop::Done);
                    }
                },
                Op::Barrier => {
                    *item_pc = pc;
                    return Ok(Stop::Barrier(at));
                }
                Op::Trap => return Err(trap(TrapKind::Unreachable)),
            }
        }
    }
}

/// A register, unchecked: see `check_code` in `translate`, which proves
/// every op's register span lies inside the file.
#[inline(always)]
fn unsafe_reg(regs: &mut [u64], index: usize) -> &mut u64 {
    debug_assert!(index < regs.len());
    // SAFETY: `translate::check_code` rejects any program with an op whose
    // register span reaches past `init_regs.len()`, the length of `regs`.
    unsafe { regs.get_unchecked_mut(index) }
}

#[inline(always)]
fn copy_regs(regs: &mut [u64], dst: Reg, src: Reg, n: u32) {
    if n == 1 {
        regs[dst as usize] = regs[src as usize];
    } else {
        regs.copy_within(src as usize..(src + n) as usize, dst as usize);
    }
}

fn g_id(g: &Geometry, group: [u64; 3], local: [u64; 3]) -> [u64; 3] {
    g.global_id(group, local)
}

fn geometric(regs: &mut [u64], op: Geometric, bits: u8, n: u8, dst: Reg, a: Reg, b: Reg) {
    let f = |regs: &[u64], r: Reg, i: u32| math::to_f64(bits, regs[(r + i) as usize]);
    let n32 = n as u32;
    let dot =
        |regs: &[u64], x: Reg, y: Reg| (0..n32).map(|i| f(regs, x, i) * f(regs, y, i)).sum::<f64>();
    match op {
        Geometric::Dot => regs[dst as usize] = math::from_f64(bits, dot(regs, a, b)),
        Geometric::Length => regs[dst as usize] = math::from_f64(bits, dot(regs, a, a).sqrt()),
        Geometric::Distance => {
            let d: f64 = (0..n32)
                .map(|i| (f(regs, a, i) - f(regs, b, i)).powi(2))
                .sum();
            regs[dst as usize] = math::from_f64(bits, d.sqrt());
        }
        Geometric::Normalize => {
            let len = dot(regs, a, a).sqrt();
            for i in 0..n32 {
                let v = if len == 0.0 {
                    f(regs, a, i)
                } else {
                    f(regs, a, i) / len
                };
                regs[(dst + i) as usize] = math::from_f64(bits, v);
            }
        }
        Geometric::Cross => {
            let (x, y) = (|i| f(regs, a, i), |i| f(regs, b, i));
            let c = [
                x(1) * y(2) - x(2) * y(1),
                x(2) * y(0) - x(0) * y(2),
                x(0) * y(1) - x(1) * y(0),
            ];
            for (i, v) in c.iter().enumerate() {
                regs[dst as usize + i] = math::from_f64(bits, *v);
            }
            if n == 4 {
                regs[dst as usize + 3] = 0;
            }
        }
    }
}

/// A resolved, bounds-checked location.
#[derive(Clone, Copy)]
enum Loc {
    Global(usize, u64),
    Local(usize),
    Private(usize),
}

/// The memory one work-item sees.
struct Mem<'m> {
    global: &'m GlobalMemory,
    local: &'m mut Arena,
    local_layout: &'m ArenaLayout,
    private_layout: &'m ArenaLayout,
    traffic: &'m mut Traffic,
}

impl Mem<'_> {
    /// Checks that `bytes` at `pointer` lie inside one buffer and that the
    /// pointer is aligned to `align`.
    #[inline(always)]
    fn resolve(&self, pointer: u64, bytes: u64, align: u64) -> Result<Loc, TrapKind> {
        let (space, buffer, offset) = memory::decode(pointer);
        let (len, loc) = match space {
            SPACE_GLOBAL => match self.global.buffers.get(buffer) {
                Some(b) => (b.len, Loc::Global(buffer, offset as u64)),
                None => return Err(TrapKind::BadPointer { value: pointer }),
            },
            SPACE_LOCAL => match self.local_layout.size.get(buffer) {
                Some(size) => (
                    *size,
                    Loc::Local((self.local_layout.base[buffer] as i64 + offset) as usize),
                ),
                None => return Err(TrapKind::BadPointer { value: pointer }),
            },
            SPACE_PRIVATE => match self.private_layout.size.get(buffer) {
                Some(size) => (
                    *size,
                    Loc::Private((self.private_layout.base[buffer] as i64 + offset) as usize),
                ),
                None => return Err(TrapKind::BadPointer { value: pointer }),
            },
            _ => return Err(TrapKind::NullPointer { size: bytes as u32 }),
        };
        if offset < 0 || offset as u64 + bytes > len {
            let (space, buffer) = self.describe(space, buffer);
            return Err(TrapKind::OutOfBounds {
                space,
                buffer,
                offset,
                size: bytes as u32,
                buffer_bytes: len,
            });
        }
        if offset as u64 & (align - 1) != 0 {
            let (space, buffer) = self.describe(space, buffer);
            return Err(TrapKind::Misaligned {
                space,
                buffer,
                offset,
                align: align as u32,
            });
        }
        Ok(loc)
    }

    fn describe(&self, space: u64, buffer: usize) -> (&'static str, String) {
        match space {
            SPACE_GLOBAL => {
                let b = &self.global.buffers[buffer];
                (b.space, b.label.clone())
            }
            SPACE_LOCAL => ("__local", self.local_layout.label[buffer].clone()),
            _ => ("__private", self.private_layout.label[buffer].clone()),
        }
    }

    #[inline(always)]
    fn read(&self, private: &Arena, loc: Loc, at: u64, size: u32) -> u64 {
        match loc {
            Loc::Global(b, off) => self.global.buffers[b].read(off + at, size),
            Loc::Local(base) => self.local.read(base + at as usize, size),
            Loc::Private(base) => private.read(base + at as usize, size),
        }
    }

    #[inline]
    fn write(&mut self, private: &mut Arena, loc: Loc, at: u64, size: u32, value: u64) {
        match loc {
            Loc::Global(b, off) => self.global.buffers[b].write(off + at, size, value),
            Loc::Local(base) => self.local.write(base + at as usize, size, value),
            Loc::Private(base) => private.write(base + at as usize, size, value),
        }
    }

    /// Adds traffic whose size is known only at run time.
    fn count(&mut self, pointer: u64, bytes: u64, store: bool) {
        let space = match memory::decode(pointer) {
            (SPACE_GLOBAL, b, _)
                if self
                    .global
                    .buffers
                    .get(b)
                    .is_some_and(|b| b.space == "__constant") =>
            {
                Space::Constant
            }
            (SPACE_GLOBAL, _, _) => Space::Global,
            (SPACE_LOCAL, _, _) => Space::Local,
            _ => Space::Private,
        };
        self.traffic.add(space, store, bytes);
    }

    fn copy(
        &mut self,
        private: &mut Arena,
        dst: u64,
        src: u64,
        bytes: u64,
    ) -> Result<(), TrapKind> {
        if bytes == 0 {
            return Ok(());
        }
        let from = self.resolve(src, bytes, 1)?;
        let to = self.resolve(dst, bytes, 1)?;
        let mut at = 0;
        while at < bytes {
            let chunk = (bytes - at).min(8) as u32;
            let v = self.read(private, from, at, chunk);
            self.write(private, to, at, chunk, v);
            at += chunk as u64;
        }
        Ok(())
    }

    fn atomic(
        &mut self,
        private: &mut Arena,
        loc: Loc,
        op: AtomicOp,
        bits: u8,
        a: u64,
        b: u64,
    ) -> u64 {
        let m = math::mask(bits);
        let apply = |old: u64| -> u64 {
            let (so, sa) = (math::sext(old, bits), math::sext(a, bits));
            (match op {
                AtomicOp::Load => old,
                AtomicOp::Store | AtomicOp::Exchange => a,
                AtomicOp::CompareExchange => {
                    if old == b {
                        a
                    } else {
                        old
                    }
                }
                AtomicOp::Inc => old.wrapping_add(1),
                AtomicOp::Dec => old.wrapping_sub(1),
                AtomicOp::Add => old.wrapping_add(a),
                AtomicOp::Sub => old.wrapping_sub(a),
                AtomicOp::SMin => so.min(sa) as u64,
                AtomicOp::UMin => old.min(a),
                AtomicOp::SMax => so.max(sa) as u64,
                AtomicOp::UMax => old.max(a),
                AtomicOp::And => old & a,
                AtomicOp::Or => old | a,
                AtomicOp::Xor => old ^ a,
            }) & m
        };
        match loc {
            Loc::Global(buf, off) if bits == 32 => {
                self.global.buffers[buf].update32(off, |old| apply(old as u64) as u32) as u64
            }
            Loc::Global(buf, off) => {
                let _guard = self
                    .global
                    .wide_atomics
                    .lock()
                    .unwrap_or_else(|p| p.into_inner());
                let b = &self.global.buffers[buf];
                let old = b.read(off, 8);
                b.write(off, 8, apply(old));
                old
            }
            _ => {
                let size = bits as u32 / 8;
                let old = self.read(private, loc, 0, size);
                self.write(private, loc, 0, size, apply(old));
                old
            }
        }
    }
}
