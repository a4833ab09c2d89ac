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

mod builtins;
mod collective;
mod events;
pub(crate) mod gathers;
mod image;
mod launch;
mod mem;
pub mod native;
mod printf;
mod queue;
mod recorder;
mod shadow;

pub use launch::{run_groups, Fault, Geometry, Launched, Partial, Selection};
pub use shadow::{GlobalShadow, Use};

use crate::bytecode::*;
use crate::counts::{Traffic, SIMD_WIDTHS};
use crate::error::TrapKind;
use crate::memory::{self, Arena, SPACE_LOCAL};
use crate::opencl_std as math;
use crate::trace::{AccessKind, Traced};
use crate::ItemOrder;
use builtins::{builtin, geometric};
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
        let private = Arena {
            bytes: vec![0; launch.program.private.total() as usize],
        };
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
            local: Arena {
                bytes: vec![0; launch.local_layout.total() as usize],
            },
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
                traffic: Traffic::default(),
                line_traffic: vec![Traffic::default(); launch.program.source_lines.len() + 1],
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
                atomic: false,
                local_base: locals.then_some(launch.global.buffers.len() as u32),
                runs: outlet.runs,
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
            recorder.phase = 0;
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
            if let Some(shadow) = &mut self.shadow {
                for ((pc, how), (items, count)) in std::mem::take(&mut shadow.found) {
                    let kind = TrapKind::Uninit(how);
                    let fault = Fault {
                        pc,
                        item: items[0],
                        kind,
                    };
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
        if let Some(recorder) = &mut self.trace {
            recorder.phase = recorder.phase.wrapping_add(1);
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
    /// (where they should join them).
    /// `UNINIT`: follow undefined values too (`shadow`), before each op.
    fn execute<const UNINIT: bool>(&mut self, start: usize, waiting: u32) -> Result<(), LaneFault> {
        let launch = self.launch;
        let program = launch.program;
        let code = &program.code[..];
        let max_steps = launch.max_steps;
        let group = self.group;
        let hits = &mut self.partial.hits[..];
        let simd = &mut self.partial.simd[..];
        let branches = &mut self.partial.branches[..];
        let gathers = &mut self.partial.gathers[..];
        let adjacent_span = &program.adjacent_span[..];
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
        let undefined = &mut self.undefined;
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
        let width = *width;
        let batch_len = *batch_len;
        let regs = &mut regs[..];
        let active = &active[..];
        // Register indices were proven in range when the program was
        // translated (`check_code`), every lane index is below `width`, and
        // the file has `init_regs.len()` rows of `width` lanes.
        debug_assert_eq!(regs.len(), program.init_regs.len() * width);
        // `r!(l, x)`: register x of lane l.
        macro_rules! r {
            ($l:expr, $x:expr) => {
                *unsafe_reg(regs, Reg::index($x) * width + $l)
            };
        }
        // Every lane of the batch active, in order (the common case): lanes
        // run as a plain count, which the compiler can vectorise.
        let dense =
            active.len() == width && active.iter().enumerate().all(|(i, &l)| l as usize == i);
        // Runs `$body` once for each active lane, `$l` naming it, in the
        // order of `active`.
        macro_rules! lanes {
            ($l:ident => $body:expr) => {
                if dense {
                    for $l in 0..width {
                        $body;
                    }
                } else {
                    for &lane in active {
                        let $l = lane as usize;
                        $body;
                    }
                }
            };
        }
        // Whether a 32-bit load or store at the pointers in register `$ptr`
        // was traced a row at once (every lane running it, a sink that takes
        // runs); else each lane traces its own as it runs.
        macro_rules! trace_row {
            ($ptr:expr, $kind:expr) => {{
                let row = Reg::index($ptr) * width;
                dense && mem.trace_row(&regs[row..row + width], 4, $kind, local_id[0])
            }};
        }
        // Where the run measures SIMD use, the lanes of a load or store
        // (of `bytes` bytes a lane, `n` components; a member of an
        // adjacent group, the group's span) a vectoriser gathers, and all
        // its lanes.
        macro_rules! count_gathers {
            ($at:expr, $ptr:expr, $bytes:expr, $n:expr) => {
                if let Some(count) = gathers.get_mut($at) {
                    let row = Reg::index($ptr) * width;
                    let addresses = &regs[row..row + width];
                    let bytes = match adjacent_span.get($at) {
                        Some(&span) if span > 0 => u64::from(span),
                        _ => $bytes,
                    };
                    let rows = gathers::row_lanes(addresses, local_id, active, bytes, dense);
                    let n = u64::from($n);
                    *count += gathers::RowLanes {
                        gathered: n * rows.gathered,
                        broadcast: n * rows.broadcast,
                        all: n * rows.all,
                    };
                }
            };
        }
        // `dst = f(a, b)` (`unary!`: `dst = f(a)`) in each active lane; in
        // a dense batch a few lanes at a time, all read before any is
        // written, which the compiler runs as vector operations.
        macro_rules! binary {
            ($dst:expr, $a:expr, $b:expr, $f:expr) => {
                if dense {
                    rows_binary(regs, width, $dst, $a, $b, $f);
                } else {
                    let f = $f;
                    lanes!(l => r!(l, $dst) = f(r!(l, $a), r!(l, $b)));
                }
            };
        }
        macro_rules! unary {
            ($dst:expr, $a:expr, $f:expr) => {
                binary!($dst, $a, $a, |x, _| ($f)(x))
            };
        }
        // Every active lane goes to `target`; without the scheduler when
        // it comes before any pc where other lanes wait.
        macro_rules! goto_all {
            ($pc:ident, $target:expr) => {{
                let target = $target;
                if program.rank_of(target) < waiting {
                    $pc = target as usize;
                } else {
                    queue.push(&program.rank, target as u32, active);
                    break;
                }
            }};
        }
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
            if UNINIT && !std::mem::take(&mut carried) {
                if let Some(shadow) = shadow.as_deref_mut() {
                    let geometry = &launch.geometry;
                    let item = |l: usize| geometry.global_id(group, local_id[l]);
                    let batch = shadow::Batch {
                        program,
                        regs,
                        active,
                        frames,
                        local_id,
                        mem: &mem,
                        item: &item,
                    };
                    shadow::apply(shadow, &code[at], at, &batch);
                }
            }
            // Matching on the place, not a copy, lets each arm load only
            // the fields it uses.
            match code[at] {
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
                Op::Mov { dst, src, n } => copy_rows(regs, width, active, dst, src, n),
                Op::Moves { start, len } => {
                    for m in &program.moves[start as usize..(start + len) as usize] {
                        copy_rows(regs, width, active, m.dst, m.src, m.n);
                    }
                }
                Op::Splat { dst, src, n } => {
                    for i in 0..n as u32 {
                        lanes!(l => r!(l, dst + i) = r!(l, src));
                    }
                }
                Op::Add32 { dst, a, b } => {
                    binary!(dst, a, b, |x, y| (x as u32).wrapping_add(y as u32) as u64)
                }
                Op::Sub32 { dst, a, b } => {
                    binary!(dst, a, b, |x, y| (x as u32).wrapping_sub(y as u32) as u64)
                }
                Op::Mul32 { dst, a, b } => {
                    binary!(dst, a, b, |x, y| (x as u32).wrapping_mul(y as u32) as u64)
                }
                Op::Shl32 { dst, a, b } => {
                    binary!(dst, a, b, |x, y| ((x as u32) << (y % 32)) as u64)
                }
                Op::LShr32 { dst, a, b } => {
                    binary!(dst, a, b, |x, y| ((x as u32) >> (y % 32)) as u64)
                }
                Op::And { dst, a, b } => binary!(dst, a, b, |x, y| x & y),
                Op::Or { dst, a, b } => binary!(dst, a, b, |x, y| x | y),
                Op::Xor { dst, a, b } => binary!(dst, a, b, |x, y| x ^ y),
                Op::Rotl32 { dst, a, b } => {
                    binary!(dst, a, b, |x, y| (x as u32).rotate_left(y as u32 % 32)
                        as u64)
                }
                Op::FAdd32 { dst, a, b } => binary!(dst, a, b, f32_add),
                Op::FSub32 { dst, a, b } => binary!(dst, a, b, f32_sub),
                Op::FMul32 { dst, a, b } => binary!(dst, a, b, f32_mul),
                Op::SExt32 { dst, src } => unary!(dst, src, |x: u64| x as u32 as i32 as i64 as u64),
                Op::SubXorRotl32 { dst, a, b, k } => {
                    lanes!(l => {
                        let (x, y) = (r!(l, a) as u32, r!(l, b) as u32);
                        r!(l, dst) = (x.wrapping_sub(y) ^ y.rotate_left(r!(l, k) as u32 % 32)) as u64;
                    });
                    pc += 2;
                }
                Op::XorSubRotl32 { dst, a, b, k } => {
                    lanes!(l => {
                        let (x, y) = (r!(l, a) as u32, r!(l, b) as u32);
                        r!(l, dst) = ((x ^ y).wrapping_sub(y.rotate_left(r!(l, k) as u32 % 32))) as u64;
                    });
                    pc += 2;
                }
                Op::ZExt32 { dst, src } | Op::Trunc32 { dst, src } => {
                    unary!(dst, src, |x: u64| x as u32 as u64)
                }
                Op::Offset { dst, base, disp } => {
                    unary!(dst, base, |x: u64| x.wrapping_add(disp as u64))
                }
                Op::Index {
                    dst,
                    base,
                    index,
                    bits,
                    stride,
                    disp,
                } => lanes!(l => {
                    let i = math::sext(r!(l, index), bits) as u64;
                    r!(l, dst) = r!(l, base)
                        .wrapping_add(disp as i64 as u64)
                        .wrapping_add(i.wrapping_mul(stride as i64 as u64));
                }),
                Op::Int {
                    op,
                    bits,
                    n,
                    dst,
                    a,
                    b,
                } => {
                    for i in 0..n as u32 {
                        let (d, x, y) = (dst + i, a + i, b + i);
                        // The everyday 64-bit ops (a random generator's,
                        // an index's) without a call a lane; `int_bin`'s
                        // values.
                        match (op, bits) {
                            (IntOp::Add, 64) => binary!(d, x, y, u64::wrapping_add),
                            (IntOp::Sub, 64) => binary!(d, x, y, u64::wrapping_sub),
                            (IntOp::Mul, 64) => binary!(d, x, y, u64::wrapping_mul),
                            (IntOp::Shl, 64) => binary!(d, x, y, |x, y| x << (y % 64)),
                            (IntOp::LShr, 64) => binary!(d, x, y, |x, y| x >> (y % 64)),
                            (IntOp::AShr, 64) => {
                                binary!(d, x, y, |x, y| ((x as i64) >> (y % 64)) as u64)
                            }
                            _ => lanes!(l => r!(l, d) = math::int_bin(op, bits, r!(l, x), r!(l, y))
                                .map_err(|kind| (at, l, kind))?),
                        }
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
                        lanes!(l => r!(l, dst + i) = math::int_un(op, bits, r!(l, a + i)));
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
                        lanes!(l => r!(l, dst + i) =
                            math::int_ter(op, bits, r!(l, a + i), r!(l, b + i), r!(l, c + i)));
                    }
                }
                Op::Upsample { bits, n, dst, a, b } => {
                    for i in 0..n as u32 {
                        lanes!(l => r!(l, dst + i) = (r!(l, a + i) << bits) | r!(l, b + i));
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
                        lanes!(l => r!(l, dst + i) =
                            math::cmp(op, bits, r!(l, a + i), r!(l, b + i)) as u64);
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
                        let (d, x, y) = (dst + i, a + i, b + i);
                        // Vectors' arithmetic, division, and double
                        // precision's, without a call a lane; `float_bin`'s
                        // values (its f32 arithmetic through f64 rounds the
                        // same).
                        let f64_op = |f: fn(f64, f64) -> f64| {
                            move |x: u64, y: u64| f(f64::from_bits(x), f64::from_bits(y)).to_bits()
                        };
                        match (op, bits) {
                            (FloatOp::Add, 32) => binary!(d, x, y, f32_add),
                            (FloatOp::Sub, 32) => binary!(d, x, y, f32_sub),
                            (FloatOp::Mul, 32) => binary!(d, x, y, f32_mul),
                            (FloatOp::Div, 32) => binary!(d, x, y, f32_div),
                            (FloatOp::Add, 64) => binary!(d, x, y, f64_op(|x, y| x + y)),
                            (FloatOp::Sub, 64) => binary!(d, x, y, f64_op(|x, y| x - y)),
                            (FloatOp::Mul, 64) => binary!(d, x, y, f64_op(|x, y| x * y)),
                            (FloatOp::Div, 64) => binary!(d, x, y, f64_op(|x, y| x / y)),
                            _ => {
                                lanes!(l => r!(l, d) = math::float_bin(op, bits, r!(l, x), r!(l, y)))
                            }
                        }
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
                        let (d, x) = (dst + i, a + i);
                        // Square roots without a call a lane: `float_un`'s
                        // values, computed as it computes them.
                        let f32_via_f64 = |f: fn(f64) -> f64| {
                            move |x: u64| {
                                (f(f32::from_bits(x as u32) as f64) as f32).to_bits() as u64
                            }
                        };
                        match (op, bits) {
                            (FloatUnOp::Sqrt, 32) => unary!(d, x, f32_via_f64(f64::sqrt)),
                            (FloatUnOp::Rsqrt, 32) => unary!(d, x, f32_via_f64(|x| 1.0 / x.sqrt())),
                            _ => lanes!(l => r!(l, d) = math::float_un(op, bits, r!(l, x))),
                        }
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
                        let rows = [dst + i, a + i, b + i, c + i].map(|r| Reg::index(r) * width);
                        if !(dense && op == FloatTerOp::Fma && fma_rows(regs, bits, width, rows)) {
                            lanes!(l => r!(l, dst + i) = math::float_ter(
                                op, bits, r!(l, a + i), r!(l, b + i), r!(l, c + i)));
                        }
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
                        lanes!(l => r!(l, dst + i) =
                            math::fcmp(op, ordered, bits, r!(l, a + i), r!(l, b + i)) as u64);
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
                        lanes!(l => r!(l, dst + i) = math::ftest(op, bits, r!(l, a + i)) as u64);
                    }
                }
                Op::Logic { op, n, dst, a, b } => {
                    for i in 0..n as u32 {
                        lanes!(l => {
                            let (x, y) = (r!(l, a + i) != 0, r!(l, b + i) != 0);
                            r!(l, dst + i) = match op {
                                LogicOp::And => x && y,
                                LogicOp::Or => x || y,
                                LogicOp::Eq => x == y,
                                LogicOp::Ne => x != y,
                            } as u64;
                        });
                    }
                }
                Op::LNot { n, dst, a } => {
                    for i in 0..n as u32 {
                        lanes!(l => r!(l, dst + i) = (r!(l, a + i) == 0) as u64);
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
                        let c = cond + if vector_cond { i } else { 0 };
                        lanes!(l => r!(l, dst + i) =
                            if r!(l, c) != 0 { r!(l, a + i) } else { r!(l, b + i) });
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
                        lanes!(l => {
                            let cv = r!(l, c + i);
                            let pick_b = if msb {
                                (cv >> (bits - 1)) & 1 == 1
                            } else {
                                cv != 0
                            };
                            r!(l, dst + i) = if pick_b { r!(l, b + i) } else { r!(l, a + i) };
                        });
                    }
                }
                Op::AnyAll { all, n, dst, a } => lanes!(l => {
                    let mut set = 0;
                    for i in 0..n as u32 {
                        set += (r!(l, a + i) != 0) as u32;
                    }
                    r!(l, dst) = if all { set == n as u32 } else { set > 0 } as u64;
                }),
                Op::Convert {
                    kind,
                    from,
                    to,
                    n,
                    dst,
                    src,
                } => {
                    for i in 0..n as u32 {
                        lanes!(l => r!(l, dst + i) = math::convert(kind, from, to, r!(l, src + i)));
                    }
                }
                Op::Bitcast {
                    from,
                    from_n,
                    to,
                    to_n,
                    dst,
                    src,
                } => lanes!(l => {
                    let mut bytes = [0u8; 128];
                    let fsize = from as usize / 8;
                    for i in 0..from_n as usize {
                        bytes[i * fsize..(i + 1) * fsize]
                            .copy_from_slice(&r!(l, src + i as u32).to_le_bytes()[..fsize]);
                    }
                    let tsize = to as usize / 8;
                    for i in 0..to_n as usize {
                        let mut w = [0u8; 8];
                        w[..tsize].copy_from_slice(&bytes[i * tsize..(i + 1) * tsize]);
                        r!(l, dst + i as u32) = u64::from_le_bytes(w);
                    }
                }),
                Op::ExtractDyn {
                    dst,
                    base,
                    index,
                    index_bits,
                    n,
                } => lanes!(l => {
                    let i = r!(l, index) & math::mask(index_bits);
                    // Out-of-range lanes are undefined in SPIR-V: read as 0.
                    r!(l, dst) = if i < n as u64 { r!(l, base + i as u32) } else { 0 };
                }),
                Op::InsertDyn {
                    dst,
                    base,
                    value,
                    index,
                    index_bits,
                    n,
                } => lanes!(l => {
                    let i = r!(l, index) & math::mask(index_bits);
                    let v = r!(l, value);
                    copy_rows(regs, width, &[l as u32], dst, base, n as u32);
                    if i < n as u64 {
                        r!(l, dst + i as u32) = v;
                    }
                }),
                Op::Geometric {
                    op,
                    bits,
                    n,
                    dst,
                    a,
                    b,
                } => lanes!(l => {
                    let (mut x, mut y, mut out) = ([0u64; 16], [0u64; 16], [0u64; 16]);
                    for i in 0..n as usize {
                        x[i] = r!(l, a + i as u32);
                        y[i] = r!(l, b + i as u32);
                    }
                    let produced = geometric(op, bits, &x[..n as usize], &y[..n as usize], &mut out);
                    for (i, v) in out[..produced].iter().enumerate() {
                        r!(l, dst + i as u32) = *v;
                    }
                }),
                Op::Ptr {
                    dst,
                    base,
                    disp,
                    terms_start,
                    terms_len,
                } => {
                    let terms = &program.terms
                        [terms_start as usize..terms_start as usize + terms_len as usize];
                    lanes!(l => {
                        let mut p = r!(l, base).wrapping_add(disp as u64);
                        for t in terms {
                            p = p.wrapping_add(
                                (math::sext(r!(l, t.reg), t.bits) as u64)
                                    .wrapping_mul(t.stride as u64),
                            );
                        }
                        r!(l, dst) = p;
                    });
                }
                Op::PtrDiff { dst, a, b, elem } => lanes!(l => r!(l, dst) =
                    ((r!(l, a).wrapping_sub(r!(l, b)) as i64) / elem as i64) as u64),
                Op::Collective {
                    dst,
                    src,
                    index,
                    op,
                    bits,
                    sub,
                } => {
                    // It follows a barrier: every work-item of the group
                    // is here, at once.
                    let g = &launch.geometry;
                    let stopped = state[..batch_len]
                        .iter()
                        .filter(|&&s| s == LaneState::Stopped)
                        .count();
                    let items = g.group_items(group) as usize - stopped;
                    if active.len() != items {
                        return Err((
                            at,
                            active[0] as usize,
                            TrapKind::BarrierDivergence(format!(
                                "{} of the work-group's {items} work-items reach this work-group function together",
                                active.len()
                            )),
                        ));
                    }
                    let mut members: Vec<(u64, usize)> = active
                        .iter()
                        .map(|&l| (g.local_linear_id(group, local_id[l as usize]), l as usize))
                        .collect();
                    members.sort_unstable();
                    let size = if sub { g.sub_group as usize } else { items };
                    for set in members.chunks(size.max(1)) {
                        let values: Vec<u64> = set.iter().map(|&(_, l)| r!(l, src)).collect();
                        let indices: Vec<u64> = set.iter().map(|&(_, l)| r!(l, index)).collect();
                        let results = collective::combine(op, bits, &values, &indices)
                            .map_err(|kind| (at, set[0].1, kind))?;
                        for (&(_, l), value) in set.iter().zip(results) {
                            r!(l, dst) = value;
                        }
                    }
                }
                Op::CastToSpace { dst, src, space } => lanes!(l => {
                    let p = r!(l, src);
                    r!(l, dst) = if crate::memory::decode(p).0 == space as u64 { p } else { 0 };
                }),
                Op::CountAccess { ptr, bytes, store } => {
                    mem.line = program.loc(at).line as usize;
                    lanes!(l => {
                        mem.count(r!(l, ptr), bytes as u64, store);
                    })
                }
                // Scalar 32-bit global accesses, the commonest, go straight
                // to the word; anything else takes the general way, which
                // also reports what is wrong with an access.
                Op::Load {
                    dst,
                    ptr,
                    size: 4,
                    n: 1,
                    align: 4,
                } => {
                    mem.dispatch(at);
                    count_gathers!(at, ptr, 4, 1u8);
                    let traced = trace_row!(ptr, AccessKind::Load);
                    lanes!(l => {
                        let p = r!(l, ptr);
                        if !traced {
                            mem.trace_pointer(p, 4, AccessKind::Load, local_id[l]);
                        }
                        r!(l, dst) = match mem.global_word(p) {
                            Some((buffer, offset)) => buffer.read_word(offset) as u64,
                            None => {
                                let loc = mem.resolve(p, 4, 4).map_err(|kind| (at, l, kind))?;
                                mem.read(&private[l], loc, 0, 4)
                            }
                        };
                    })
                }
                Op::Store {
                    src,
                    ptr,
                    size: 4,
                    n: 1,
                    align: 4,
                } => {
                    mem.dispatch(at);
                    count_gathers!(at, ptr, 4, 1u8);
                    let traced = trace_row!(ptr, AccessKind::Store);
                    lanes!(l => {
                        let (p, v) = (r!(l, ptr), r!(l, src));
                        if !traced {
                            mem.trace_pointer(p, 4, AccessKind::Store, local_id[l]);
                        }
                        match mem.global_word(p) {
                            Some((buffer, offset)) => buffer.write_word(offset, v as u32),
                            None => {
                                let loc = mem.resolve(p, 4, 4).map_err(|kind| (at, l, kind))?;
                                mem.write(&mut private[l], loc, 0, 4, v);
                            }
                        }
                    })
                }
                Op::Load {
                    dst,
                    ptr,
                    size,
                    n,
                    align,
                } => {
                    mem.dispatch(at);
                    count_gathers!(at, ptr, size as u64 * n as u64, n);
                    lanes!(l => {
                        let loc = mem
                        .access(r!(l, ptr), size as u64 * n as u64, align as u64, AccessKind::Load, local_id[l])
                        .map_err(|kind| (at, l, kind))?;
                        for i in 0..n as u32 {
                            r!(l, dst + i) =
                                mem.read(&private[l], loc, i as u64 * size as u64, size as u32);
                        }
                    })
                }
                Op::Store {
                    src,
                    ptr,
                    size,
                    n,
                    align,
                } => {
                    mem.dispatch(at);
                    count_gathers!(at, ptr, size as u64 * n as u64, n);
                    lanes!(l => {
                        let loc = mem
                        .access(r!(l, ptr), size as u64 * n as u64, align as u64, AccessKind::Store, local_id[l])
                        .map_err(|kind| (at, l, kind))?;
                        for i in 0..n as u32 {
                            let v = r!(l, src + i);
                            mem.write(&mut private[l], loc, i as u64 * size as u64, size as u32, v);
                        }
                    })
                }
                Op::LoadAgg { dst, ptr, layout } => {
                    let leaves = &program.layouts[layout as usize];
                    let span = leaves
                        .iter()
                        .map(|l| l.offset as u64 + l.size as u64)
                        .max()
                        .unwrap_or(0);
                    mem.dispatch(at);
                    lanes!(l => {
                        let loc = mem
                        .access(r!(l, ptr), span, 1, AccessKind::Load, local_id[l])
                        .map_err(|kind| (at, l, kind))?;
                        for (i, leaf) in leaves.iter().enumerate() {
                            r!(l, dst + i as u32) =
                                mem.read(&private[l], loc, leaf.offset as u64, leaf.size as u32);
                        }
                    });
                }
                Op::StoreAgg { src, ptr, layout } => {
                    let leaves = &program.layouts[layout as usize];
                    let span = leaves
                        .iter()
                        .map(|l| l.offset as u64 + l.size as u64)
                        .max()
                        .unwrap_or(0);
                    mem.dispatch(at);
                    lanes!(l => {
                        let loc = mem
                        .access(r!(l, ptr), span, 1, AccessKind::Store, local_id[l])
                        .map_err(|kind| (at, l, kind))?;
                        for (i, leaf) in leaves.iter().enumerate() {
                            let v = r!(l, src + i as u32);
                            mem.write(
                                &mut private[l],
                                loc,
                                leaf.offset as u64,
                                leaf.size as u32,
                                v,
                            );
                        }
                    });
                }
                Op::Copy {
                    dst,
                    src,
                    bytes,
                    bytes_reg,
                } => {
                    mem.dispatch(at);
                    mem.line = program.loc(at).line as usize;
                    lanes!(l => {
                        let bytes = match bytes_reg {
                            Some(reg) => {
                                let b = r!(l, reg);
                                mem.count(r!(l, src), b, false);
                                mem.count(r!(l, dst), b, true);
                                b
                            }
                            None => bytes,
                        };
                        mem.trace_pointer(r!(l, src), bytes, AccessKind::Load, local_id[l]);
                        mem.trace_pointer(r!(l, dst), bytes, AccessKind::Store, local_id[l]);
                        mem.copy(&mut private[l], r!(l, dst), r!(l, src), bytes)
                            .map_err(|kind| (at, l, kind))?;
                    })
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
                    // Every work-item passes the same arguments: the first
                    // of the group makes the copy for all.
                    let first = active[0] as usize;
                    let args = [dst, src, elems, stride, event];
                    let want = args.map(|a| r!(first, a));
                    for &lane in active {
                        let l = lane as usize;
                        if let Some(i) = events::differs(&want, &args.map(|a| r!(l, a))) {
                            let name = |l: usize| {
                                let [x, y, z] = launch.geometry.global_id(group, local_id[l]);
                                format!("({x},{y},{z})")
                            };
                            return Err((
                                at,
                                l,
                                TrapKind::Collective(format!(
                                    "async_work_group_copy: this work-item passes another {} \
                                     than work-item {} does; every work-item of the group must \
                                     pass the same arguments",
                                    events::COPY_ARGUMENTS[i],
                                    name(first)
                                )),
                            ));
                        }
                    }
                    let copied = events.copy(at, want[4]);
                    mem.dispatch(at);
                    mem.line = program.loc(at).line as usize;
                    lanes!(l => {
                        if local_id[l] == [0, 0, 0] {
                            let (count, stride) = (r!(l, elems), r!(l, stride).max(1));
                            // Strided copies gather from (local→global: scatter to) every stride-th element.
                            let (dst, src) = (r!(l, dst), r!(l, src));
                            let local_dst = memory::decode(dst).0 == SPACE_LOCAL;
                            for i in 0..count {
                                let far = i * stride * elem as u64;
                                let near = i * elem as u64;
                                let (d, s) = if local_dst {
                                    (dst.wrapping_add(near), src.wrapping_add(far))
                                } else {
                                    (dst.wrapping_add(far), src.wrapping_add(near))
                                };
                                mem.count(s, elem as u64, false);
                                mem.count(d, elem as u64, true);
                                mem.trace_pointer(s, elem as u64, AccessKind::Load, local_id[l]);
                                mem.trace_pointer(d, elem as u64, AccessKind::Store, local_id[l]);
                                mem.copy(&mut private[l], d, s, elem as u64)
                                    .map_err(|kind| (at, l, kind))?;
                            }
                        }
                        r!(l, out) = copied;
                    })
                }
                Op::CheckIndex {
                    index,
                    bits,
                    len,
                    array,
                } => lanes!(l => {
                    let i = math::sext(r!(l, index), bits);
                    if !(0..len as i64).contains(&i) {
                        let array = program.arrays[array as usize].clone();
                        return Err((at, l, TrapKind::IndexOutOfBounds { index: i, array }));
                    }
                }),
                Op::WaitEvents { num, list } => {
                    // After its barrier: the group's work-items are all here.
                    let first = active[0] as usize;
                    let mut want = Vec::new();
                    for &lane in active {
                        let l = lane as usize;
                        let n = r!(l, num);
                        let loc = mem
                            .resolve(r!(l, list), n.saturating_mul(8), 8)
                            .map_err(|kind| (at, l, kind))?;
                        let waits: Vec<u64> = (0..n)
                            .map(|i| mem.read(&private[l], loc, 8 * i, 8))
                            .collect();
                        if l == first {
                            want = waits;
                        } else if waits != want {
                            let [x, y, z] = launch.geometry.global_id(group, local_id[first]);
                            return Err((
                                at,
                                l,
                                TrapKind::Collective(format!(
                                    "wait_group_events: this work-item waits for other events \
                                     than work-item ({x},{y},{z}) does; every work-item of the \
                                     group must wait for the same"
                                )),
                            ));
                        }
                    }
                    for event in want {
                        events.wait(event);
                    }
                }
                Op::LoadHalf { dst, ptr, n } => {
                    mem.dispatch(at);
                    lanes!(l => {
                        let loc = mem
                        .access(r!(l, ptr), 2 * n as u64, 2, AccessKind::Load, local_id[l])
                        .map_err(|kind| (at, l, kind))?;
                        for i in 0..n as u32 {
                            let h = mem.read(&private[l], loc, 2 * i as u64, 2) as u16;
                            r!(l, dst + i) = math::f16_to_f32(h).to_bits() as u64;
                        }
                    })
                }
                Op::StoreHalf {
                    src,
                    ptr,
                    n,
                    from,
                    rounding,
                } => {
                    mem.dispatch(at);
                    lanes!(l => {
                        let loc = mem
                        .access(r!(l, ptr), 2 * n as u64, 2, AccessKind::Store, local_id[l])
                        .map_err(|kind| (at, l, kind))?;
                        for i in 0..n as u32 {
                            let v = r!(l, src + i);
                            let h = if from == 64 {
                                math::convert(ConvKind::FloatToFloat { rounding }, 64, 16, v)
                            } else {
                                math::f32_to_f16_rounded(f32::from_bits(v as u32), rounding) as u64
                            };
                            mem.write(&mut private[l], loc, 2 * i as u64, 2, h);
                        }
                    })
                }
                Op::Atomic {
                    op,
                    bits,
                    dst,
                    ptr,
                    a,
                    b,
                } => {
                    mem.dispatch_atomic(at);
                    let kind = match op {
                        AtomicOp::Load => AccessKind::Load,
                        AtomicOp::Store => AccessKind::Store,
                        _ => AccessKind::Atomic,
                    };
                    let size = bits as u64 / 8;
                    lanes!(l => {
                        let loc = mem
                            .access(r!(l, ptr), size, size, kind, local_id[l])
                            .map_err(|kind| (at, l, kind))?;
                        r!(l, dst) = mem.atomic(&mut private[l], loc, op, bits, r!(l, a), r!(l, b));
                    })
                }
                Op::Builtin {
                    which: Builtin::GlobalId,
                    dst,
                    lanes,
                    bits,
                } => {
                    // The work-group's origin once, each lane's local id on it.
                    let origin = launch.geometry.global_id(group, [0; 3]);
                    lanes!(l => {
                        for i in 0..lanes.min(3) as u32 {
                            let d = i as usize;
                            r!(l, dst + i) = (origin[d] + local_id[l][d]) & math::mask(bits);
                        }
                    });
                }
                Op::Builtin {
                    which,
                    dst,
                    lanes,
                    bits,
                } => {
                    let g = &launch.geometry;
                    lanes!(l => {
                        let v = builtin(g, which, group, local_id[l]);
                        for i in 0..lanes.min(3) as u32 {
                            r!(l, dst + i) = v[i as usize] & math::mask(bits);
                        }
                    });
                }
                Op::Jump { target } => goto_all!(pc, target),
                Op::Branch { cond, then, other } => {
                    if let Some(predictor) = branches.get_mut(at) {
                        lanes!(l => predictor.branch(r!(l, cond) != 0));
                    }
                    let mut taken = 0;
                    lanes!(l => taken += (r!(l, cond) != 0) as usize);
                    if taken == 0 || taken == active.len() {
                        goto_all!(pc, if taken != 0 { then } else { other });
                    } else {
                        let yes = queue.slot(&program.rank, then);
                        let no = queue.slot(&program.rank, other);
                        lanes!(l => {
                            let way = if r!(l, cond) != 0 { yes } else { no };
                            queue.waiting[way].2.push(l as u32);
                        });
                        break;
                    }
                }
                Op::Switch {
                    sel,
                    bits,
                    cases_start,
                    cases_len,
                    default,
                } => {
                    let cases =
                        &program.cases[cases_start as usize..(cases_start + cases_len) as usize];
                    let target_of = |v: u64| {
                        let v = v & math::mask(bits);
                        cases
                            .iter()
                            .find(|(c, _)| *c == v)
                            .map_or(default, |(_, t)| *t)
                    };
                    if let Some(predictor) = branches.get_mut(at) {
                        lanes!(l => predictor.switch(target_of(r!(l, sel))));
                    }
                    let first = target_of(r!(active[0] as usize, sel));
                    let mut uniform = true;
                    lanes!(l => uniform &= target_of(r!(l, sel)) == first);
                    if uniform {
                        goto_all!(pc, first);
                    } else {
                        lanes!(l => {
                            let way = queue.slot(&program.rank, target_of(r!(l, sel)));
                            queue.waiting[way].2.push(l as u32);
                        });
                        break;
                    }
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
                        copy_rows(regs, width, active, m.dst, m.src, m.n);
                    }
                    lanes!(l => frames[l].push(Frame {
                        ret_pc: pc as u32,
                        ret,
                        ret_n,
                    }));
                    goto_all!(pc, target);
                }
                Op::Ret { src, n } => {
                    lanes!(l => match frames[l].pop() {
                        Some(frame) => {
                            let n = n.min(frame.ret_n);
                            copy_rows(regs, width, &[l as u32], frame.ret, src, n);
                            let way = queue.slot(&program.rank, frame.ret_pc);
                            queue.waiting[way].2.push(l as u32);
                        }
                        None => state[l] = LaneState::Done,
                    });
                    break;
                }
                Op::Barrier => {
                    lanes!(l => {
                        state[l] = LaneState::AtBarrier;
                        lane_pc[l] = pc as u32;
                    });
                    break;
                }
                Op::Trap => return Err((at, active[0] as usize, TrapKind::Unreachable)),
                Op::ImageRead {
                    dst,
                    image,
                    coord,
                    sampler,
                    form,
                } => {
                    mem.dispatch(at);
                    mem.line = program.loc(at).line as usize;
                    lanes!(l => {
                        let mut c = [0u64; 4];
                        for (k, v) in c.iter_mut().enumerate().take(form.coord_n as usize) {
                            *v = r!(l, coord + k as u32);
                        }
                        let texel = mem
                            .image_read(&private[l], r!(l, image), r!(l, sampler), c, form, local_id[l])
                            .map_err(|kind| (at, l, kind))?;
                        if let Some(kind) = mem.undefined.take() {
                            undefined.push((at, l, kind));
                        }
                        for (k, v) in texel.into_iter().enumerate() {
                            r!(l, dst + k as u32) = v;
                        }
                    })
                }
                Op::ImageWrite {
                    image,
                    coord,
                    src,
                    form,
                } => {
                    mem.dispatch(at);
                    mem.line = program.loc(at).line as usize;
                    lanes!(l => {
                        let mut c = [0u64; 4];
                        for (k, v) in c.iter_mut().enumerate().take(form.coord_n as usize) {
                            *v = r!(l, coord + k as u32);
                        }
                        let value = std::array::from_fn(|k| r!(l, src + k as u32));
                        mem.image_write(&mut private[l], r!(l, image), c, value, form, local_id[l])
                            .map_err(|kind| (at, l, kind))?;
                        if let Some(kind) = mem.undefined.take() {
                            undefined.push((at, l, kind));
                        }
                    })
                }
                Op::ImageQuery {
                    dst,
                    image,
                    query,
                    n,
                    bits,
                } => {
                    lanes!(l => {
                        let out = mem
                            .image_query(r!(l, image), query, n)
                            .map_err(|kind| (at, l, kind))?;
                        for k in 0..n as usize {
                            r!(l, dst + k as u32) = out.get(k).copied().unwrap_or(0) & math::mask(bits);
                        }
                    })
                }
                Op::Printf {
                    dst,
                    format,
                    args_start,
                    args_len,
                } => {
                    let args =
                        &program.printf_args[args_start as usize..(args_start + args_len) as usize];
                    let mut values = Vec::new();
                    lanes!(l => {
                        values.clear();
                        for a in args {
                            for i in 0..a.lanes as u32 {
                                values.push(r!(l, a.reg + i));
                            }
                        }
                        printf::call(&mem, r!(l, format), args, &values, &mut printed[l])
                            .map_err(|e| (at, l, TrapKind::Printf(e)))?;
                        r!(l, dst) = 0;
                    });
                }
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
fn unsafe_reg(regs: &mut [u64], index: usize) -> &mut u64 {
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
fn rows_binary(
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
