//! A launch on threads: the NDRange's geometry, what a launch fixes for
//! every work-group, and `run_groups`, which hands work-groups to threads
//! (each keeping one [`Runner`]) and merges what they counted.

use super::{Outlet, Runner};
use crate::counts::{SpaceBytes, SIMD_WIDTHS};
use crate::error::TrapKind;
use crate::memory::{ArenaLayout, GlobalMemory};
use crate::trace::{AccessSink, Arrivals, Delivery, QUEUED_PER_THREAD};
use clflow_bytecode::program::Program;
use std::collections::btree_map::{BTreeMap, Entry};
use std::sync::atomic::{AtomicU64, Ordering};

/// The NDRange as the builtins report it (unused dimensions hold 1 / 0).
#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    pub dims: u8,
    pub global: [u64; 3],
    /// The enqueued work-group size; the last group of a dimension is
    /// smaller where it does not divide the global size (OpenCL 2.0's
    /// non-uniform work-groups).
    pub local: [u64; 3],
    pub groups: [u64; 3],
    pub offset: [u64; 3],
    /// Work-items per sub-group: a work-group's linear ids cut in runs of
    /// this many, the last run shorter.
    pub sub_group: u64,
}

impl Geometry {
    /// The size of work-group `group`: the enqueued size, or what is left
    /// of the global size for a last, partial group.
    pub fn local_size_of(&self, group: [u64; 3]) -> [u64; 3] {
        std::array::from_fn(|d| self.local[d].min(self.global[d] - group[d] * self.local[d]))
    }

    /// The work-items of work-group `group`.
    pub fn group_items(&self, group: [u64; 3]) -> u64 {
        self.local_size_of(group).iter().product()
    }

    /// A work-item's linear id within its work-group.
    pub fn local_linear_id(&self, group: [u64; 3], lid: [u64; 3]) -> u64 {
        let size = self.local_size_of(group);
        (lid[2] * size[1] + lid[1]) * size[0] + lid[0]
    }

    pub fn group_of(&self, index: u64) -> [u64; 3] {
        let [gx, gy, _] = self.groups;
        [index % gx, (index / gx) % gy, index / (gx * gy)]
    }

    pub fn global_id(&self, group: [u64; 3], local: [u64; 3]) -> [u64; 3] {
        std::array::from_fn(|d| group[d] * self.local[d] + local[d] + self.offset[d])
    }
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
    pub traffic: SpaceBytes,
    /// The part of `traffic` each source line made, by line id (0 for no
    /// line; see `Loc`).
    pub line_traffic: Vec<SpaceBytes>,
    /// What work-items printed, with their work-group's linear index: in
    /// work-item order within a group, and groups in the order this thread
    /// ran them (ascending).
    pub printed: Vec<(u64, crate::Printed)>,
    /// The lines the compiled tier marked on this thread, as bits: for
    /// each global buffer its lines read, then its lines written. Added to
    /// the buffers' own line sets when the thread is done (`flush_lines`):
    /// threads setting bits in shared words would take turns at every
    /// cache line of them.
    pub lines: Vec<Vec<u64>>,
    /// Faults the run went on after, one per instruction and kind of fault.
    pub faults: BTreeMap<(usize, u8), Kept>,
    /// Where the selection asks (`Selection::tally`), each work-group's
    /// [W, Q]: in no particular order.
    pub tallies: Vec<[u64; 2]>,
    /// Where the launch measures SIMD use (`Launched::simd`), per block and
    /// per width of `SIMD_WIDTHS`: [vector groups issued, work-items in
    /// full groups], summed over the block's runs.
    pub simd: Vec<[[u64; 2]; SIMD_WIDTHS.len()]>,
    /// Where the launch measures SIMD use, per pc: each branch's
    /// predictor, fed each pass's work-items in local-id order and started
    /// afresh at each work-group.
    pub branches: Vec<Predictor>,
    /// Where the launch measures SIMD use, per pc: how the lanes of each
    /// load and store (of global, constant and local memory) fall into rows
    /// of work-items (`gathers::row_lanes`).
    pub gathers: Vec<super::gathers::RowLanes>,
}

/// One branch's predictor: a conditional branch's 2-bit saturating counter
/// (taken at 2 and 3, from 0), a switch's last target; and the work-items'
/// passes through it and the outcomes it did not predict.
#[derive(Debug, Clone, Copy, Default)]
pub struct Predictor {
    pub state: u32,
    pub executed: u64,
    pub mispredicted: u64,
}

impl Predictor {
    /// A conditional branch went `taken`.
    #[inline]
    pub fn branch(&mut self, taken: bool) {
        self.executed += 1;
        self.mispredicted += u64::from((self.state >= 2) != taken);
        self.state = if taken {
            (self.state + 1).min(3)
        } else {
            self.state.saturating_sub(1)
        };
    }

    /// A switch went to `target`.
    #[inline]
    pub fn switch(&mut self, target: u32) {
        self.executed += 1;
        self.mispredicted += u64::from(self.state != target);
        self.state = target;
    }
}

/// The work-items a fault names after its first.
pub const FIRST_ITEMS: usize = 4;

/// One instruction's faults of one kind: the first (its work-group's linear
/// index, the fault), how many, and the first few work-items (by group).
#[derive(Debug)]
pub struct Kept {
    pub group: u64,
    pub fault: Fault,
    pub count: u64,
    pub items: Vec<(u64, [u64; 3])>,
}

impl Kept {
    /// Keeps the [`FIRST_ITEMS`] lowest of `items` and `more`.
    fn join(&mut self, more: impl IntoIterator<Item = (u64, [u64; 3])>) {
        self.items.extend(more);
        self.items.sort_unstable();
        self.items.dedup();
        self.items.truncate(FIRST_ITEMS);
    }
}

impl Partial {
    /// Keeps a fault of work-group `group` the run went on after, made
    /// `count` times, by `fault.item` and (where known) the work-items
    /// `also`.
    pub fn keep_fault(&mut self, group: u64, fault: Fault, count: u64, also: &[[u64; 3]]) {
        let items = std::iter::once(fault.item)
            .chain(also.iter().copied())
            .map(|item| (group, item));
        match self.faults.entry((fault.pc, fault.kind.code())) {
            Entry::Occupied(mut slot) => {
                let kept = slot.get_mut();
                kept.count += count;
                kept.join(items);
            }
            Entry::Vacant(slot) => {
                let mut kept = Kept { group, fault, count, items: Vec::new() };
                kept.join(items);
                slot.insert(kept);
            }
        }
    }

    pub fn merge(mut self, other: Partial) -> Partial {
        if self.hits.len() < other.hits.len() {
            self.hits.resize(other.hits.len(), 0);
        }
        for (a, b) in self.hits.iter_mut().zip(other.hits) {
            *a += b;
        }
        self.traffic.scaled_add(&other.traffic, 1);
        if self.line_traffic.len() < other.line_traffic.len() {
            self.line_traffic
                .resize(other.line_traffic.len(), SpaceBytes::default());
        }
        for (a, b) in self.line_traffic.iter_mut().zip(&other.line_traffic) {
            a.scaled_add(b, 1);
        }
        self.printed.extend(other.printed);
        self.tallies.extend(other.tallies);
        if self.simd.len() < other.simd.len() {
            self.simd.resize(other.simd.len(), Default::default());
        }
        for (mine, theirs) in self.simd.iter_mut().zip(&other.simd) {
            for (a, b) in mine.iter_mut().zip(theirs) {
                a[0] += b[0];
                a[1] += b[1];
            }
        }
        if self.branches.len() < other.branches.len() {
            self.branches
                .resize(other.branches.len(), Predictor::default());
        }
        for (a, b) in self.branches.iter_mut().zip(&other.branches) {
            a.executed += b.executed;
            a.mispredicted += b.mispredicted;
        }
        if self.gathers.len() < other.gathers.len() {
            self.gathers.resize(other.gathers.len(), Default::default());
        }
        for (a, b) in self.gathers.iter_mut().zip(&other.gathers) {
            *a += *b;
        }
        for (key, other) in other.faults {
            match self.faults.entry(key) {
                Entry::Vacant(slot) => {
                    slot.insert(other);
                }
                Entry::Occupied(mut slot) => {
                    let kept = slot.get_mut();
                    kept.count += other.count;
                    kept.join(other.items);
                    // The first is the lowest work-group's, whatever the threads.
                    if other.group < kept.group {
                        (kept.group, kept.fault) = (other.group, other.fault);
                    }
                }
            }
        }
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
    /// Go on after a fault that stops one work-item (`TrapKind::stops_one`).
    pub keep_going: bool,
    /// Follow undefined values to their uses (`RunOptions::uninit`).
    pub uninit: bool,
    /// Measure how work-items fill vectors (`RunOptions::simd`).
    pub simd: bool,
    /// The order work-items run in (`RunOptions::order`).
    pub order: crate::ItemOrder,
    /// Where they are followed, the global buffers the launch leaves
    /// undefined (`RunOptions::undefined`).
    pub undefined: super::GlobalShadow,
    /// Whether and when the compiled tier takes the launch over.
    pub native: super::native::Tiering,
    /// Where a traced run's compiled work-groups hand over line touches:
    /// the lines' size, as a shift (`AccessSink::line_touches`).
    pub touch_shift: Option<u32>,
}

/// Which work-groups a run takes, and what it keeps of each.
#[derive(Default, Clone, Copy)]
pub struct Selection<'a> {
    /// The work-groups to run, by linear index, ascending; `None` runs
    /// them all.
    pub groups: Option<&'a [u64]>,
    /// Per block, the [W, Q] one execution of it adds: each work-group's
    /// sum, with the global and constant bytes its accesses through generic
    /// pointers and images moved, goes to `Partial::tallies`.
    pub tally: Option<&'a [[u64; 2]]>,
}

impl Selection<'_> {
    fn len(&self, launch: &Launched<'_>) -> u64 {
        match self.groups {
            Some(groups) => groups.len() as u64,
            None => launch.geometry.groups.iter().product(),
        }
    }

    /// The linear index of the `n`th work-group run.
    fn group(&self, n: u64) -> u64 {
        self.groups.map_or(n, |groups| groups[n as usize])
    }
}

/// One work-group's [W, Q]: the blocks it ran (hits now less `before`)
/// by their weights, and the global bytes moved beyond the blocks' own.
fn tally(weights: &[[u64; 2]], partial: &Partial, before: &(Vec<u64>, SpaceBytes)) -> [u64; 2] {
    let (hits, traffic) = before;
    let mut sum = [0, 0];
    for ((now, then), weight) in partial.hits.iter().zip(hits).zip(weights) {
        let ran = now - then;
        sum[0] += ran * weight[0];
        sum[1] += ran * weight[1];
    }
    sum[1] += partial.traffic.q() - traffic.q();
    sum
}

/// Stops a run's other threads when the thread holding it unwinds: workers
/// wait for the delivering thread and it for them, so a panic on either
/// side (a sink's, the code generator's) would leave the rest waiting for
/// ever. Every work-group after the first then counts as after a fault,
/// and the panic goes on once they have stopped.
struct StopOnPanic<'a>(&'a AtomicU64);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(0, Ordering::Relaxed);
        }
    }
}

/// Adds the lines a thread marked on its own (`Partial::lines`) to the
/// buffers' line sets.
fn flush_lines(mut partial: Partial, launch: &Launched<'_>) -> Partial {
    let sets = launch
        .global
        .buffers
        .iter()
        .flat_map(|b| [&b.read_lines, &b.written_lines]);
    for (set, lines) in sets.zip(std::mem::take(&mut partial.lines)) {
        set.add_words(&lines);
    }
    partial
}

/// Runs the work-groups `selection` names on `threads` threads, each
/// taking the next group not yet taken and keeping one `Runner`
/// throughout. Where work-items fault, the fault of the first such
/// work-group is returned. With a sink, every global access goes to it,
/// work-group by work-group in order, on the calling thread (see
/// [`crate::trace`]). `done` counts the work-groups finished.
pub fn run_groups(
    launch: &Launched<'_>,
    selection: Selection<'_>,
    threads: usize,
    sink: Option<&mut dyn AccessSink>,
    done: Option<&AtomicU64>,
) -> Result<Partial, Fault> {
    let groups = selection.len(launch);
    let next = AtomicU64::new(0);
    let finished = AtomicU64::new(0);
    // The lowest work-group that faulted so far. Groups above it are not
    // started; groups below it (all taken already: groups are taken in
    // order) still run, so that the fault reported is always the first
    // group's, however the threads interleave.
    let first_fault = AtomicU64::new(u64::MAX);
    let may_reorder = sink.as_ref().is_some_and(|s| s.line_touches().is_some());
    let delivery = Delivery::new(threads, groups, may_reorder);
    let locals = sink.as_ref().is_some_and(|s| s.wants_local());
    let pool = sink.as_ref().and_then(|s| s.pool());
    let runs = sink.as_ref().is_some_and(|s| s.takes_runs());
    let compares = !runs && sink.as_ref().is_some_and(|s| s.compares_stores());
    let work = |arrivals: Option<Arrivals>| -> Result<Partial, (u64, Fault)> {
        let _stop = StopOnPanic(&first_fault);
        let tracing = arrivals.is_some();
        let outlet = arrivals.map(|arrivals| Outlet {
            delivery: &delivery,
            arrivals,
            first_fault: &first_fault,
            pool: pool.clone(),
            runs,
            compares,
            batch: Vec::new(),
            batch_touches: 0,
        });
        let mut runner = Runner::new(launch, outlet, locals);
        let flush = |runner: &mut Runner<'_>| {
            if let Some(recorder) = &mut runner.trace {
                recorder.outlet.flush();
            }
        };
        loop {
            let g = next.fetch_add(1, Ordering::Relaxed);
            let after_fault = || g > first_fault.load(Ordering::Relaxed);
            if g >= groups || after_fault() {
                flush(&mut runner);
                return Ok(flush_lines(runner.partial, launch));
            }
            if tracing {
                delivery.wait_turn(g, &after_fault, &mut || flush(&mut runner));
                if after_fault() {
                    flush(&mut runner);
                    return Ok(flush_lines(runner.partial, launch));
                }
            }
            let before = selection
                .tally
                .map(|_| (runner.partial.hits.clone(), runner.partial.traffic));
            let traced = if tracing { delivery.traced(g) } else { None };
            runner
                .run_group(selection.group(g), traced)
                .map_err(|fault| {
                    first_fault.fetch_min(g, Ordering::Relaxed);
                    (g, fault)
                })?;
            if !tracing {
                // A traced run compiles once the sink estimates (below).
                let finished = finished.fetch_add(1, Ordering::Relaxed) + 1;
                let waiting = groups.saturating_sub(next.load(Ordering::Relaxed));
                launch.native.check(launch, finished, waiting);
            }
            if let (Some(weights), Some(before)) = (selection.tally, before) {
                let sum = tally(weights, &runner.partial, &before);
                runner.partial.tallies.push(sum);
            }
            if let Some(recorder) = &mut runner.trace {
                recorder.hand_over(true);
            }
            if let Some(done) = done {
                done.fetch_add(1, Ordering::Relaxed);
            }
        }
    };
    let outcomes: Vec<_> = match sink {
        None if threads <= 1 => vec![work(None)],
        sink => std::thread::scope(|scope| {
            let (sender, arrivals) =
                std::sync::mpsc::sync_channel(QUEUED_PER_THREAD * threads.max(1));
            let work = &work;
            let workers: Vec<_> = (0..threads.max(1))
                .map(|_| {
                    let sender = sink.is_some().then(|| sender.clone());
                    scope.spawn(move || work(sender))
                })
                .collect();
            drop(sender);
            if let Some(sink) = sink {
                let _stop = StopOnPanic(&first_fault);
                let compiled = || launch.native.now(launch).is_some();
                let compile_soon = || {
                    scope.spawn(|| launch.native.now(launch).is_some());
                };
                delivery.deliver(arrivals, sink, &compiled, &compile_soon);
            }
            workers
                .into_iter()
                .map(|w| {
                    w.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        }),
    };
    let mut total = Partial::default();
    let mut first_fault: Option<(u64, Fault)> = None;
    for outcome in outcomes {
        match outcome {
            Ok(partial) => total = total.merge(partial),
            Err((g, fault)) => {
                if first_fault.as_ref().is_none_or(|(f, _)| g < *f) {
                    first_fault = Some((g, fault));
                }
            }
        }
    }
    match first_fault {
        Some((_, fault)) => Err(fault),
        None => Ok(total),
    }
}

#[cfg(test)]
mod predictor_tests {
    use super::Predictor;

    /// A loop of four trips run twice: the counter learns "taken" after two
    /// and mispredicts each exit; a switch mispredicts each change of target.
    #[test]
    fn a_counter_learns_a_loop_and_a_switch_its_last_target() {
        let mut p = Predictor::default();
        for taken in [true, true, true, false, true, true, true, false] {
            p.branch(taken);
        }
        // From 0: T, T mispredicted (0 -> 1 -> 2), T right (3), F wrong
        // (2), T right (3), T, T right, F wrong.
        assert_eq!((p.executed, p.mispredicted), (8, 4));
        let mut s = Predictor::default();
        for target in [5, 5, 7, 7, 7, 5] {
            s.switch(target);
        }
        assert_eq!((s.executed, s.mispredicted), (6, 3));
    }
}
