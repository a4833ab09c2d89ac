//! The machine: runs the bytecode of a work-group's work-items together, as
//! a batch.
//!
//! A batch holds up to `width` work-items (lanes). Its register file is
//! lane-major: slot `r` of lane `l` lives at `r * width + l`, so one
//! instruction is dispatched once and applied to every lane that runs it
//! in a tight loop over consecutive words. Constants and kernel arguments
//! are written into every lane once, when the batch is created, and never
//! overwritten; every other slot is written before it is read. Nothing is
//! allocated per instruction.
//!
//! Lanes diverge at branches. Lanes waiting to run are queued by the pc they
//! wait at, and the queue always runs next the lanes at the pc that comes
//! first in a reverse post-order of the control flow (`Program::rank`,
//! decided by translation): a join point ranks after every way to it, so
//! lanes that went different ways meet again there and run on together.
//! A stretch of code runs without the queue for as long as the lanes take
//! the same way and no other lane waits at an earlier pc. A stretch's steps
//! are charged to its lanes when it ends, and checked against `max_steps`
//! at every block on the way.
//!
//! Kernels without barriers run a work-group as consecutive batches of at
//! most [`BATCH_LANES`] work-items (fewer where a work-item's registers and
//! private memory are large, see [`BATCH_BYTES`]); kernels with barriers
//! run the whole group as one batch, every lane stopping at a barrier until
//! all have arrived. Each thread keeps one batch and takes work-groups one
//! after the other (`run_groups`).
//!
//! The dispatch loop (`Runner::execute`) stays one function, for speed;
//! `mem` owns the memory a work-item sees (resolving, reading, writing,
//! copying, atomics), `builtins` the work-item and geometric builtins,
//! `printf` OpenCL's printf, `queue` the waiting lanes, `recorder` a traced
//! run's accesses, `events` async copies, `shadow` the undefined values
//! `--detect uninit` follows (in an instance of the loop of its own). What
//! work-items print is kept per work-item and handed over in work-item order
//! once their batch is done.
//!
//! A fault that is one work-item's alone (`TrapKind::stops_one`) may stop
//! that work-item only (`RunOptions::keep_going`): the lanes that ran the
//! faulting instruction before it go on after it, the rest at it, and the
//! group's barriers and work-group functions no longer wait for it.

#[macro_use]
mod machine;
mod builtins;
mod collective;
mod events;
pub(crate) mod gathers;
mod image;
mod launch;
mod mem;
pub mod native;
mod ops;
mod printf;
mod queue;
mod recorder;
mod shadow;

pub use launch::{run_groups, Fault, Geometry, Launched, Partial, Selection};
pub use shadow::GlobalShadow;

use crate::counts::{SpaceBytes, SIMD_WIDTHS};
use crate::error::TrapKind;
use crate::memory::Arena;
use crate::trace::Traced;
use crate::ItemOrder;
use clflow_bytecode::*;
use machine::{Machine, Next, Rows};
use mem::Mem;
use queue::Queue;
use recorder::{Outlet, Recorder};

/// Work-items per batch in kernels without barriers: enough to pay for a
/// dispatch many times over, few enough that a batch's registers stay in
/// the core's caches.
pub const BATCH_LANES: usize = 64;

/// The most memory a batch's registers and private memory may take where
/// the kernel leaves the batch's size open (no barriers): kernels with
/// large private arrays or many registers run in smaller batches.
pub const BATCH_BYTES: u64 = 32 << 20;

#[derive(Debug, Clone, Copy)]
struct Frame {
    ret_pc: u32,
    ret: Reg,
    ret_n: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LaneState {
    /// Running, or waiting in the queue to run.
    Runnable,
    /// Waiting at the barrier just before its `pc`.
    AtBarrier,
    Done,
    /// Stopped by a fault the run goes on after (`RunOptions::keep_going`):
    /// the rest of the group no longer waits for it.
    Stopped,
}

/// The work-items of one batch: registers lane-major, the rest per lane.
#[derive(Debug)]
struct Batch {
    /// Lanes the register file has room for.
    width: usize,
    /// Lanes in use by the current batch.
    len: usize,
    regs: Vec<u64>,
    queue: Queue,
    /// Where each lane waiting at a barrier goes on.
    pc: Vec<u32>,
    state: Vec<LaneState>,
    steps: Vec<u64>,
    local_id: Vec<[u64; 3]>,
    frames: Vec<Vec<Frame>>,
    private: Vec<Arena>,
    /// The lanes being run now.
    active: Vec<u32>,
    /// What each lane printed (printf), in the order it printed it.
    printed: Vec<Vec<u8>>,
    /// The async copies the batch's work-group made.
    events: events::Events,
    /// Where the work-items run a few at a time (`ItemOrder::Vectors`):
    /// the lanes that have not yet started on the current stretch between
    /// barriers, the last to start first, and the pc they start at.
    parked: Vec<u32>,
    parked_pc: u32,
}

/// A lane stopped: (pc, lane, why).
type LaneFault = (usize, usize, TrapKind);

/// Runs work-groups on one thread, reusing its batch and arenas.
pub struct Runner<'a> {
    launch: &'a Launched<'a>,
    batch: Batch,
    /// The work-group being run (and its linear index), and its size.
    group: [u64; 3],
    index: u64,
    group_size: [u64; 3],
    local: Arena,
    pub partial: Partial,
    /// The work-group's global accesses, where they are traced.
    trace: Option<Recorder<'a>>,
    /// Undefined values, where they are followed (`RunOptions::uninit`).
    shadow: Option<Box<shadow::Shadow<'a>>>,
    /// Where lanes go on at an instruction whose shadows they have
    /// carried already (the rest of a dispatch a stopped lane cut short).
    resume_at: Option<usize>,
    /// What lanes did that OpenCL leaves undefined and the run went
    /// through (`TrapKind::Undefined`), kept after each stretch.
    undefined: Vec<LaneFault>,
}

impl<'a> Runner<'a> {
    /// A runner; one with an outlet traces every global access to it, and
    /// with `locals` every `__local` access too.
    fn new(launch: &'a Launched<'a>, outlet: Option<Outlet<'a>>, locals: bool) -> Self {
        let group_items = launch.geometry.local.iter().product::<u64>() as usize;
        let item_bytes = 8 * launch.regs.len() as u64 + launch.program.private.total();
        let width = if launch.program.uses_barrier {
            group_items
        } else {
            let fits = (BATCH_BYTES / item_bytes.max(1)).max(1) as usize;
            group_items.min(BATCH_LANES).min(fits)
        };
        let mut regs = vec![0; launch.regs.len() * width];
        for (row, value) in regs.chunks_exact_mut(width).zip(&launch.regs) {
            row.fill(*value);
        }
        let private = Arena { bytes: vec![0; launch.program.private.total() as usize] };
        Runner {
            launch,
            batch: Batch {
                width,
                len: 0,
                regs,
                queue: Queue::default(),
                pc: vec![0; width],
                state: vec![LaneState::Done; width],
                steps: vec![0; width],
                local_id: vec![[0; 3]; width],
                frames: vec![Vec::new(); width],
                private: vec![private; width],
                active: Vec::with_capacity(width),
                printed: vec![Vec::new(); width],
                events: events::Events::default(),
                parked: Vec::new(),
                parked_pc: 0,
            },
            group: [0; 3],
            index: 0,
            group_size: launch.geometry.local,
            local: Arena { bytes: vec![0; launch.local_layout.total() as usize] },
            partial: Partial {
                hits: vec![0; launch.program.blocks.len()],
                simd: if launch.simd {
                    vec![Default::default(); launch.program.blocks.len()]
                } else {
                    Vec::new()
                },
                branches: if launch.simd {
                    vec![Default::default(); launch.program.code.len()]
                } else {
                    Vec::new()
                },
                gathers: if launch.simd {
                    vec![gathers::RowLanes::default(); launch.program.code.len()]
                } else {
                    Vec::new()
                },
                traffic: SpaceBytes::default(),
                line_traffic: vec![SpaceBytes::default(); launch.program.source_lines.len() + 1],
                ..Partial::default()
            },
            shadow: launch.uninit.then(|| {
                Box::new(shadow::Shadow::new(
                    launch.program,
                    width,
                    (launch.program.private.total(), launch.local_layout.total()),
                    &launch.undefined,
                ))
            }),
            resume_at: None,
            undefined: Vec::new(),
            trace: outlet.map(|outlet| Recorder {
                accesses: Vec::new(),
                group: 0,
                site: 0,
                dispatch: 0,
                local: launch.geometry.local,
                phase: 0,
                fenced_global: 0,
                fenced_local: 0,
                atomic: false,
                local_base: locals.then_some(launch.global.buffers.len() as u32),
                runs: outlet.runs,
                pending: Default::default(),
                stored: Vec::new(),
                row: None,
                stands_for: 1,
                lines: Vec::new(),
                accessed: 0,
                compiled: false,
                outlet,
            }),
        }
    }

    /// Runs work-group `index`; where its accesses are traced, as
    /// `traced` says (`None`: interpreted, each access handed over).
    pub(crate) fn run_group(&mut self, index: u64, traced: Option<Traced>) -> Result<(), Fault> {
        let g = self.launch.geometry;
        let group = g.group_of(index);
        let native = self.launch.native.native();
        match (&mut self.trace, native) {
            (Some(recorder), native) => {
                recorder.group = index;
                recorder.stands_for = match traced {
                    Some(Traced::Whole(n)) => n,
                    _ => 1,
                };
                recorder.compiled = traced == Some(Traced::Lines) && native.is_some();
                if let (true, Some(native)) = (recorder.compiled, native) {
                    return native.run_group(self.launch, index, &mut self.partial, Some(recorder));
                }
            }
            (None, Some(native)) => {
                return native.run_group(self.launch, index, &mut self.partial, None);
            }
            (None, None) => {}
        }
        self.group = group;
        self.index = index;
        reset_arena(&mut self.local);
        // Each work-group starts its predictors afresh, so that what they
        // count does not hang on which thread ran the group before.
        for predictor in &mut self.partial.branches {
            predictor.state = 0;
        }
        if let Some(shadow) = &mut self.shadow {
            shadow.start_group();
        }
        let size = g.local_size_of(group);
        self.group_size = size;
        if let Some(recorder) = &mut self.trace {
            recorder.local = size;
            recorder.start_group();
        }
        let count = size.iter().product::<u64>() as usize;
        let width = self.batch.width;
        for first in (0..count).step_by(width.max(1)) {
            self.start_batch(first, count.min(first + width) - first);
            self.run_batch().map_err(|(pc, lane, kind)| Fault {
                pc,
                item: g.global_id(group, self.batch.local_id[lane]),
                kind,
            })?;
            if let Some(recorder) = &mut self.trace {
                recorder.settle();
            }
            if let Some(shadow) = &mut self.shadow {
                for ((pc, how), (items, count)) in std::mem::take(&mut shadow.found) {
                    let kind = TrapKind::Uninit(how);
                    let fault = Fault { pc, item: items[0], kind };
                    self.partial.keep_fault(index, fault, count, &items[1..]);
                }
            }
            if let Some(pc) = self.batch.events.unwaited() {
                return Err(Fault {
                    pc,
                    item: g.global_id(group, [0; 3]),
                    kind: TrapKind::EventNotWaited,
                });
            }
            // Lanes are the batch's work-items in order.
            let b = &mut self.batch;
            for (text, lid) in b.printed[..b.len].iter_mut().zip(&b.local_id) {
                if !text.is_empty() {
                    let printed = crate::Printed {
                        item: g.global_id(group, *lid),
                        bytes: std::mem::take(text),
                    };
                    self.partial.printed.push((index, printed));
                }
            }
        }
        Ok(())
    }

    /// Readies lanes 0..len for work-items first.. of the group, all
    /// waiting at the kernel's entry.
    fn start_batch(&mut self, first: usize, len: usize) {
        let [lx, ly, _] = self.group_size;
        let b = &mut self.batch;
        b.len = len;
        // The first lane's id by division, the rest by counting on (a
        // division per lane and dimension costs more than the lane's run
        // of a small kernel).
        let i = first as u64;
        let mut at = [i % lx, (i / lx) % ly, i / (lx * ly)];
        for id in &mut b.local_id[..len] {
            *id = at;
            at[0] += 1;
            if at[0] == lx {
                at[0] = 0;
                at[1] += 1;
                if at[1] == ly {
                    at[1] = 0;
                    at[2] += 1;
                }
            }
        }
        b.state[..len].fill(LaneState::Runnable);
        b.steps[..len].fill(0);
        b.events.clear();
        for lane in 0..len {
            b.frames[lane].clear();
            // A faulted batch may have left text behind.
            b.printed[lane].clear();
            reset_arena(&mut b.private[lane]);
            let private = &mut b.private[lane].bytes;
            for (at, bytes) in &self.launch.private_init {
                private[*at..*at + bytes.len()].copy_from_slice(bytes);
            }
            if let Some(shadow) = &mut self.shadow {
                shadow.start_item(lane, &self.launch.private_init);
            }
        }
        let entry = self.launch.program.entry;
        self.start_stretch(entry, 0..len as u32);
    }

    /// Sets `lanes` (in order) to go on from `pc`: all at once, or in the
    /// order `ItemOrder::Vectors` asks for, a few at a time.
    fn start_stretch(&mut self, pc: u32, lanes: impl Iterator<Item = u32>) {
        let b = &mut self.batch;
        match self.launch.order {
            ItemOrder::Lockstep => {
                let slot = b.queue.slot(&self.launch.program.rank, pc);
                b.queue.waiting[slot].2.extend(lanes);
            }
            ItemOrder::Vectors(_) => {
                b.parked.clear();
                b.parked.extend(lanes);
                b.parked.reverse();
                b.parked_pc = pc;
            }
        }
    }

    /// Starts the next few parked lanes (`ItemOrder::Vectors`), if any wait.
    fn unpark(&mut self) -> bool {
        let ItemOrder::Vectors(width) = self.launch.order else {
            return false;
        };
        let b = &mut self.batch;
        let take = b.parked.len().min(width.max(1) as usize);
        if take == 0 {
            return false;
        }
        let slot = b.queue.slot(&self.launch.program.rank, b.parked_pc);
        let from = b.parked.len() - take;
        b.queue.waiting[slot].2.extend(b.parked.drain(from..).rev());
        true
    }

    /// Runs the batch until every lane has returned.
    fn run_batch(&mut self) -> Result<(), LaneFault> {
        loop {
            let b = &mut self.batch;
            match b.queue.pop(&mut b.active) {
                Some(pc) => {
                    let waiting = b.queue.first_rank();
                    let ran = match self.shadow {
                        Some(_) => self.execute::<true>(pc as usize, waiting),
                        None => self.execute::<false>(pc as usize, waiting),
                    };
                    self.keep_undefined();
                    match ran {
                        Ok(()) => {}
                        Err(fault) if self.launch.keep_going && fault.2.stops_one() => {
                            self.stop_lane(fault)
                        }
                        Err(fault) => {
                            // Leave no lane behind for the next batch.
                            self.batch.parked.clear();
                            let q = &mut self.batch.queue;
                            for (_, _, mut lanes) in q.waiting.drain(..) {
                                lanes.clear();
                                q.spare.push(lanes);
                            }
                            return Err(fault);
                        }
                    }
                }
                None if self.unpark() => {}
                None if self.release_barrier()? => {}
                None => return Ok(()),
            }
        }
    }

    /// Keeps what lanes did that OpenCL leaves undefined (they went on).
    fn keep_undefined(&mut self) {
        let g = self.launch.geometry;
        for (pc, lane, kind) in self.undefined.drain(..) {
            let item = g.global_id(self.group, self.batch.local_id[lane]);
            self.partial
                .keep_fault(self.index, Fault { pc, item, kind }, 1, &[]);
        }
    }

    /// Keeps the fault of one lane and stops it; the lanes that ran the
    /// faulting instruction before it go on after it, the ones after it go
    /// on at it. (The stretch's steps are not charged: the step limit is
    /// the looser for it, the counts, made of block hits, are not.)
    fn stop_lane(&mut self, (pc, lane, kind): LaneFault) {
        if let Some(recorder) = &mut self.trace {
            recorder.stopped(lane);
        }
        let g = self.launch.geometry;
        let b = &mut self.batch;
        let item = g.global_id(self.group, b.local_id[lane]);
        self.partial
            .keep_fault(self.index, Fault { pc, item, kind }, 1, &[]);
        b.state[lane] = LaneState::Stopped;
        let ranks = &self.launch.program.rank;
        let at = b
            .active
            .iter()
            .position(|&l| l as usize == lane)
            .unwrap_or(0);
        let (done, rest) = b.active.split_at(at);
        b.queue.push_inside(ranks, pc as u32 + 1, done);
        b.queue
            .push_inside(ranks, pc as u32, rest.get(1..).unwrap_or_default());
        self.resume_at = Some(pc);
    }

    /// With no lane runnable: lets the lanes waiting at a barrier go on,
    /// if all are waiting at the same one; false if none waits.
    fn release_barrier(&mut self) -> Result<bool, LaneFault> {
        let b = &mut self.batch;
        let Some(first) = (0..b.len).find(|&l| b.state[l] == LaneState::AtBarrier) else {
            return Ok(false);
        };
        let barrier = b.pc[first] as usize - 1;
        let name = |lane: usize| {
            let [x, y, z] = self.launch.geometry.global_id(self.group, b.local_id[lane]);
            format!("({x},{y},{z})")
        };
        for l in 0..b.len {
            match b.state[l] {
                LaneState::AtBarrier if b.pc[l] as usize - 1 != barrier => {
                    return Err((
                        b.pc[l] as usize - 1,
                        l,
                        TrapKind::BarrierDivergence(format!(
                            "this work-item waits at a different barrier than work-item {} ({})",
                            name(first),
                            self.launch.program.site(barrier)
                        )),
                    ));
                }
                LaneState::Done => {
                    return Err((
                        barrier,
                        first,
                        TrapKind::BarrierDivergence(format!(
                            "this work-item waits at a barrier that work-item {} never reached (it returned)",
                            name(l)
                        )),
                    ));
                }
                _ => {}
            }
        }
        for state in &mut b.state[..b.len] {
            if *state == LaneState::AtBarrier {
                *state = LaneState::Runnable;
            }
        }
        if let (Some(recorder), Op::Barrier { fences }) =
            (&mut self.trace, self.launch.program.code[barrier])
        {
            recorder.pass(fences);
        }
        let state = std::mem::take(&mut b.state);
        let runnable = (0..b.len as u32).filter(|&l| state[l as usize] == LaneState::Runnable);
        self.start_stretch(barrier as u32 + 1, runnable);
        self.batch.state = state;
        Ok(true)
    }
}

impl Runner<'_> {
    /// Runs the active lanes from `start` until they need the scheduler:
    /// they took different ways, reached a barrier or returned, or went to
    /// a pc ranked at or after `waiting`, the first pc other lanes wait at
    /// (where they should join them). Each op goes to the handler of its
    /// family (`ops`); the hot ones inline, as one dispatch.
    /// `UNINIT`: follow undefined values too (`shadow`), before each op.
    fn execute<const UNINIT: bool>(&mut self, start: usize, waiting: u32) -> Result<(), LaneFault> {
        let launch = self.launch;
        let program = launch.program;
        let code = &program.code[..];
        let max_steps = launch.max_steps;
        let hits = &mut self.partial.hits[..];
        let simd = &mut self.partial.simd[..];
        let Batch {
            width,
            len: batch_len,
            regs,
            queue,
            pc: lane_pc,
            state,
            steps,
            local_id,
            frames,
            private,
            active,
            printed,
            events,
            ..
        } = &mut self.batch;
        let (width, batch_len, active) = (*width, *batch_len, &active[..]);
        // Register indices were proven in range when the program was
        // translated (`check_code`), every lane index is below `width`, and
        // the file has `init_regs.len()` rows of `width` lanes.
        debug_assert_eq!(regs.len(), program.init_regs.len() * width);
        let mut mem = Mem {
            global: launch.global,
            local: &mut self.local,
            local_layout: &launch.local_layout,
            private_layout: &program.private,
            traffic: &mut self.partial.traffic,
            line_traffic: &mut self.partial.line_traffic,
            line: 0,
            trace: self.trace.as_mut(),
            undefined: None,
        };
        let mut rows = Rows {
            regs: &mut regs[..],
            width,
            active,
            dense: active.len() == width
                && active.iter().enumerate().all(|(i, &l)| l as usize == i),
        };
        let mut m = Machine {
            launch,
            program,
            group: self.group,
            batch_len,
            mem: &mut mem,
            private: &mut private[..],
            local_id: &local_id[..],
            state: &mut state[..],
            lane_pc: &mut lane_pc[..],
            frames: &mut frames[..],
            queue,
            printed: &mut printed[..],
            events,
            undefined: &mut self.undefined,
            branches: &mut self.partial.branches[..],
            gathers: &mut self.partial.gathers[..],
            adjacent_span: &program.adjacent_span[..],
        };
        // Every active lane runs the same blocks until this returns: their
        // steps are charged at the end, and checked on the way against the
        // lane that had run the most.
        let most = active.iter().map(|&l| steps[l as usize]).max().unwrap_or(0);
        let mut run: u64 = 0;
        let mut pc = start;
        let mut shadow = self.shadow.as_deref_mut();
        let mut carried = UNINIT && self.resume_at == Some(start);
        if carried {
            self.resume_at = None;
        }
        loop {
            let at = pc;
            pc += 1;
            let op = &code[at];
            if UNINIT && !std::mem::take(&mut carried) {
                // Carries the undefined-value shadows through `op`, before
                // it runs. The batch copies the machine's fields: taking
                // the machine's address would keep them all in memory.
                if let Some(shadow) = shadow.as_deref_mut() {
                    let (group, local_id) = (m.group, m.local_id);
                    let item = |l: usize| launch.geometry.global_id(group, local_id[l]);
                    let batch = shadow::Batch {
                        program,
                        regs: rows.regs,
                        active: rows.active,
                        frames: m.frames,
                        local_id,
                        mem: m.mem,
                        item: &item,
                    };
                    shadow::apply(shadow, op, at, &batch);
                }
            }
            match *op {
                Op::Block { block, steps: n } => {
                    hits[block as usize] += active.len() as u64;
                    if let Some(per_block) = simd.get_mut(block as usize) {
                        simd_use(per_block, active, batch_len);
                    }
                    run += n as u64;
                    if most + run > max_steps {
                        let lane = active
                            .iter()
                            .find(|&&l| steps[l as usize] + run > max_steps)
                            .map_or(0, |&l| l as usize);
                        return Err((at, lane, TrapKind::StepLimit(max_steps)));
                    }
                }
                family!(Scalar) => ops::scalar::run(&mut m, &mut rows, *op),
                // A superinstruction stands in the place of three ops.
                family!(Fused) => {
                    ops::scalar::run(&mut m, &mut rows, *op);
                    pc += 2;
                }
                family!(Int) => ops::int::run(&mut rows, at, *op)?,
                family!(Float) => ops::float::run(&mut rows, *op),
                family!(Vector) => ops::vector::run(&mut m, &mut rows, *op),
                family!(Access) => ops::access::run(&mut m, &mut rows, at, *op)?,
                family!(Group) => ops::group::run(&mut m, &mut rows, at, *op)?,
                family!(Io) => ops::io::run(&mut m, &mut rows, at, *op)?,
                family!(Control) => match ops::control::run(&mut m, &mut rows, at, pc, *op)? {
                    // Without the scheduler where the target comes before
                    // any pc other lanes wait at.
                    Next::Goto(target) if program.rank_of(target) < waiting => pc = target as usize,
                    Next::Goto(target) => {
                        m.queue.push(&program.rank, target, active);
                        break;
                    }
                    Next::Stop => break,
                },
            }
        }
        for &l in active {
            steps[l as usize] += run;
        }
        Ok(())
    }
}

/// Zeroes an arena. Most kernels have no private or local variables, and
/// clearing an empty buffer is not free: the vectorised memset can stall
/// on the dangling pointer of an empty allocation.
#[inline(always)]
fn reset_arena(arena: &mut Arena) {
    if !arena.bytes.is_empty() {
        arena.bytes.fill(0);
    }
}

/// `dst = a * b + c`, rounded once, over `width` lanes of four register
/// rows (`[dst, a, b, c]`, each row's first index) of 32- or 64-bit
/// floats, with the processor's fused multiply-add; false, doing nothing,
/// where it has none (or the floats are of another width). The same value
/// as `opencl_std::float_ter`, whose `mul_add` is a call into libm
/// without the instruction: a GEMM's interpreted run spent a seventh of
/// its time there.
#[inline]
fn fma_rows(regs: &mut [u64], bits: u8, width: usize, rows: [usize; 4]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if matches!(bits, 32 | 64) && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the processor has the instructions `fma_rows_x86` is
        // compiled for, checked just above.
        unsafe { fma_rows_x86(regs, bits, width, rows) };
        return true;
    }
    let _ = (regs, bits, width, rows);
    false
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn fma_rows_x86(regs: &mut [u64], bits: u8, width: usize, [dst, a, b, c]: [usize; 4]) {
    for l in 0..width {
        let (x, y, z) = (
            *unsafe_reg(regs, a + l),
            *unsafe_reg(regs, b + l),
            *unsafe_reg(regs, c + l),
        );
        *unsafe_reg(regs, dst + l) = if bits == 32 {
            let f = |v: u64| f32::from_bits(v as u32);
            f(x).mul_add(f(y), f(z)).to_bits() as u64
        } else {
            f64::from_bits(x)
                .mul_add(f64::from_bits(y), f64::from_bits(z))
                .to_bits()
        };
    }
}

/// A register, unchecked: see `check_code` in `translate::function`, which proves
/// every op's register span lies inside the file.
#[inline(always)]
pub(crate) fn unsafe_reg(regs: &mut [u64], index: usize) -> &mut u64 {
    debug_assert!(index < regs.len());
    // SAFETY: `translate::function::check_code` rejects any program with an op whose
    // register span reaches past `init_regs.len()`; the file holds that
    // many rows of `width` lanes and every lane index is below `width`.
    unsafe { regs.get_unchecked_mut(index) }
}

/// A batch's active lanes as bits, 64 a word, lane 0 the lowest bit: on
/// the stack for batches of up to 1,024 lanes.
struct LaneBits {
    small: [u64; 16],
    large: Vec<u64>,
    words: usize,
}

impl LaneBits {
    /// `active` (lane ids, in any order) of a batch of `len` lanes.
    fn of(active: &[u32], len: usize) -> LaneBits {
        let words = len.div_ceil(64);
        let mut bits = LaneBits {
            small: [0; 16],
            large: if words > 16 {
                vec![0; words]
            } else {
                Vec::new()
            },
            words,
        };
        let target = if words > 16 {
            &mut bits.large[..]
        } else {
            &mut bits.small[..words]
        };
        for &l in active {
            target[l as usize / 64] |= 1 << (l % 64);
        }
        bits
    }

    fn words(&self) -> &[u64] {
        if self.words > 16 {
            &self.large
        } else {
            &self.small[..self.words]
        }
    }

    /// The active lanes, in increasing order.
    fn lanes(&self) -> impl Iterator<Item = usize> + '_ {
        self.words().iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let l = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    l
                })
            })
        })
    }
}

/// Adds one run of a block by `active` (lane ids of a batch of `len`, in
/// any order) to its SIMD use at each of `SIMD_WIDTHS`: the groups of S
/// lanes with a work-item there, and the work-items in groups that are
/// whole.
fn simd_use(per_block: &mut [[u64; 2]; SIMD_WIDTHS.len()], active: &[u32], len: usize) {
    let lanes = LaneBits::of(active, len);
    let words = lanes.words();
    for (width, slot) in SIMD_WIDTHS.iter().zip(per_block.iter_mut()) {
        let width = *width as usize;
        let mask = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        for first in (0..len).step_by(width) {
            let bits = (words[first / 64] >> (first % 64)) & mask;
            let run = bits.count_ones() as usize;
            if run == 0 {
                continue;
            }
            slot[0] += 1;
            if run == width.min(len - first) {
                slot[1] += run as u64;
            }
        }
    }
}

/// A scalar `float` operation on two registers' low 32 bits.
#[inline(always)]
fn f32_op(x: u64, y: u64, f: impl Fn(f32, f32) -> f32) -> u64 {
    f(f32::from_bits(x as u32), f32::from_bits(y as u32)).to_bits() as u64
}

/// `float` arithmetic on registers, for the direct forms and the row loops.
#[inline(always)]
fn f32_add(x: u64, y: u64) -> u64 {
    f32_op(x, y, |x, y| x + y)
}

#[inline(always)]
fn f32_sub(x: u64, y: u64) -> u64 {
    f32_op(x, y, |x, y| x - y)
}

#[inline(always)]
fn f32_mul(x: u64, y: u64) -> u64 {
    f32_op(x, y, |x, y| x * y)
}

#[inline(always)]
fn f32_div(x: u64, y: u64) -> u64 {
    f32_op(x, y, |x, y| x / y)
}

/// Lanes of a dense batch taken together by [`rows_binary`].
const CHUNK: usize = 8;

/// `dst = f(a, b)` in lanes `0..width`, [`CHUNK`] lanes at a time, each
/// chunk's operands read before its results are written (so that `dst`
/// may be `a` or `b`). The rows were proven inside the file
/// (`check_code`), as `unsafe_reg` requires.
#[inline(always)]
pub(crate) fn rows_binary(
    regs: &mut [u64],
    width: usize,
    dst: Reg,
    a: Reg,
    b: Reg,
    f: impl Fn(u64, u64) -> u64,
) {
    let (d, x, y) = (dst.index() * width, a.index() * width, b.index() * width);
    let mut l = 0;
    while l + CHUNK <= width {
        let xs: [u64; CHUNK] = std::array::from_fn(|i| *unsafe_reg(regs, x + l + i));
        let ys: [u64; CHUNK] = std::array::from_fn(|i| *unsafe_reg(regs, y + l + i));
        for i in 0..CHUNK {
            *unsafe_reg(regs, d + l + i) = f(xs[i], ys[i]);
        }
        l += CHUNK;
    }
    for l in l..width {
        *unsafe_reg(regs, d + l) = f(*unsafe_reg(regs, x + l), *unsafe_reg(regs, y + l));
    }
}

/// Copies registers `src..src+n` to `dst..dst+n` in each of `lanes`, as a
/// memmove would where the spans overlap. Both spans were proven inside
/// the file (`check_code`), as `unsafe_reg` requires.
#[inline(always)]
fn copy_rows(regs: &mut [u64], width: usize, lanes: &[u32], dst: Reg, src: Reg, n: u32) {
    let row = |i: u32, r: Reg| (r + i).index() * width;
    let mut one = |i: u32| {
        let (d, s) = (row(i, dst), row(i, src));
        for &l in lanes {
            *unsafe_reg(regs, d + l as usize) = *unsafe_reg(regs, s + l as usize);
        }
    };
    if dst <= src {
        (0..n).for_each(&mut one);
    } else {
        (0..n).rev().for_each(&mut one);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opencl_std as math;

    /// The processor's fused multiply-add gives `float_ter`'s bits, for
    /// ordinary values, a product that cancels the addend, subnormals,
    /// infinities and NaN.
    #[test]
    fn fused_rows_round_as_the_reference_does() {
        let f32s: [f32; 8] = [
            1.5,
            -3.25e7,
            1.0e-40,
            f32::INFINITY,
            f32::NAN,
            0.1,
            -0.0,
            3.0,
        ];
        let f64s: [f64; 8] = [
            1.5,
            -3.25e300,
            4.9e-324,
            f64::NEG_INFINITY,
            f64::NAN,
            0.1,
            0.0,
            -3.0,
        ];
        let f32_bits = f32s.map(|v| v.to_bits() as u64);
        let f64_bits = f64s.map(f64::to_bits);
        for (bits, values) in [(32u8, f32_bits), (64, f64_bits)] {
            let width = values.len();
            // Rows: dst, a, b, c; b and c rotate a so that every pair meets.
            let mut regs = vec![0u64; 4 * width];
            for l in 0..width {
                regs[width + l] = values[l];
                regs[2 * width + l] = values[(l + 3) % width];
                regs[3 * width + l] = values[(l + 5) % width];
            }
            if !fma_rows(&mut regs, bits, width, [0, width, 2 * width, 3 * width]) {
                // No fused multiply-add on this processor: nothing to compare.
                return;
            }
            for l in 0..width {
                let (a, b, c) = (regs[width + l], regs[2 * width + l], regs[3 * width + l]);
                let want = math::float_ter(FloatTerOp::Fma, bits, a, b, c);
                let got = regs[l];
                let nan = |v: u64| match bits {
                    32 => f32::from_bits(v as u32).is_nan(),
                    _ => f64::from_bits(v).is_nan(),
                };
                assert!(
                    got == want || (nan(got) && nan(want)),
                    "{bits} bits, lane {l}"
                );
            }
        }
        // 16-bit floats take the reference path.
        assert!(!fma_rows(&mut [0; 4], 16, 1, [0, 1, 2, 3]));
    }
}
