//! The global access stream: the vocabulary between the interpreter, which
//! makes the stream, and whatever listens (a cache simulation, a coalescing
//! analysis, a race checker). `clflow_interp::trace` says in which order
//! accesses come. A listener that asks for them ([`AccessSink::wants_local`])
//! gets `__local` accesses too, in buffers after the global ones.

use std::sync::{Arc, Mutex};

/// What an access does to memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessKind {
    Load,
    Store,
    /// A read-modify-write: a load and a store of the same bytes.
    Atomic,
}

impl AccessKind {
    pub fn reads(self) -> bool {
        matches!(self, AccessKind::Load | AccessKind::Atomic)
    }

    pub fn writes(self) -> bool {
        matches!(self, AccessKind::Store | AccessKind::Atomic)
    }
}

/// One work-item's access to a global or constant buffer, or where the
/// sink takes runs ([`AccessSink::takes_runs`]) a run of them: `lanes`
/// work-items in a row making the same access, each at the bytes the one
/// before accessed or right after them; or `runs` such runs of the work-items
/// after them, each `run_step` bytes from the one before (a batch's rows of
/// a 2-D work-group: each row reading one place, or the same row of words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlobalAccess {
    /// Byte offset into the buffer (of the record's first work-item).
    pub offset: u64,
    /// Bytes accessed together (a whole vector or struct).
    pub bytes: u32,
    /// The bytecode instruction that made it; `clflow_interp::Program::site`
    /// names its SPIR-V.
    pub site: u32,
    /// Accesses with the same dispatch number were made by one instruction
    /// run for several work-items together.
    pub dispatch: u32,
    /// The work-item's linear id within its work-group (the run's first).
    pub item: u32,
    /// The buffer: the kernel argument's index, or for program-scope
    /// variables the index after the last argument (see [`TraceBuffer`]).
    pub buffer: u16,
    /// Barriers the work-group had passed, modulo 2^16: accesses of one
    /// work-group with the same phase had no barrier between them.
    pub phase: u16,
    /// Barriers the work-group had passed that fence this access's memory
    /// (`CLK_GLOBAL_MEM_FENCE` for a global buffer, `CLK_LOCAL_MEM_FENCE`
    /// for a local one), modulo 2^16: accesses of one work-group with the
    /// same `fenced` are unordered, whatever barriers of the other space lie
    /// between them.
    pub fenced: u16,
    pub kind: AccessKind,
    /// Made by an atomic function (`atomic_add`, `atomic_load`, ...).
    pub atomic: bool,
    /// The work-items of the run: `item` and those after it (1: one
    /// work-item's access, as every access is where the sink takes no
    /// runs).
    pub lanes: u8,
    /// Whether each work-item of the run accesses the bytes right after the
    /// previous one's, rather than the same bytes.
    pub contiguous: bool,
    /// The runs the record holds (1: one run, as every record is where the
    /// sink takes no runs); each of `lanes` work-items, the work-items after
    /// the run before.
    pub runs: u8,
    /// How far each run's first access is from the one before's (0 where
    /// `runs` is 1).
    pub run_step: i32,
}

/// Work-item 0's load of no bytes at the start of buffer 0: what a
/// record's fields are where not given.
impl Default for GlobalAccess {
    fn default() -> Self {
        GlobalAccess {
            offset: 0,
            bytes: 0,
            site: 0,
            dispatch: 0,
            item: 0,
            buffer: 0,
            phase: 0,
            fenced: 0,
            kind: AccessKind::Load,
            atomic: false,
            lanes: 1,
            contiguous: false,
            runs: 1,
            run_step: 0,
        }
    }
}

/// The most buffers a trace names: [`GlobalAccess::buffer`]'s range.
pub const MOST_TRACE_BUFFERS: usize = u16::MAX as usize + 1;

impl GlobalAccess {
    /// How far each work-item of the run accesses from the one before.
    pub fn stride(&self) -> u64 {
        if self.contiguous {
            u64::from(self.bytes)
        } else {
            0
        }
    }

    /// The work-items of the record: `lanes` in each of its `runs`.
    pub fn work_items(&self) -> u32 {
        u32::from(self.lanes) * u32::from(self.runs)
    }

    /// The record's last work-item.
    pub fn last_item(&self) -> u32 {
        self.item + self.work_items() - 1
    }

    /// Where the record's last work-item accesses.
    pub fn last_offset(&self) -> u64 {
        self.run(self.runs - 1).offset + u64::from(self.lanes - 1) * self.stride()
    }

    /// How far a run's last access is from the next run's first.
    pub fn run_gap(&self) -> u64 {
        let last = i64::from(self.lanes - 1) * self.stride() as i64;
        i64::from(self.run_step).abs_diff(last)
    }

    /// The record's `r`th run alone.
    pub fn run(&self, r: u8) -> GlobalAccess {
        GlobalAccess {
            offset: self
                .offset
                .wrapping_add_signed(i64::from(r) * i64::from(self.run_step)),
            item: self.item + u32::from(r) * u32::from(self.lanes),
            runs: 1,
            run_step: 0,
            ..*self
        }
    }

    /// Each of the record's runs alone, in order.
    pub fn each_run(&self) -> impl Iterator<Item = GlobalAccess> + '_ {
        (0..self.runs).map(|r| self.run(r))
    }

    /// The access of the record's `k`th work-item alone.
    pub fn lane(&self, k: u32) -> GlobalAccess {
        let lanes = u32::from(self.lanes);
        let run = self.run((k / lanes) as u8);
        GlobalAccess {
            offset: run.offset + u64::from(k % lanes) * self.stride(),
            item: self.item + k,
            lanes: 1,
            contiguous: false,
            ..run
        }
    }

    /// Each work-item's access alone, in order.
    pub fn each_lane(&self) -> impl Iterator<Item = GlobalAccess> + '_ {
        (0..self.work_items()).map(|k| self.lane(k))
    }

    /// Takes `next` into the run, where it is the next work-item's access
    /// at the same instruction, the same size, at the bytes the run's last
    /// work-item accessed or right after them; false where it is not (or
    /// the run is full).
    #[inline(always)]
    pub fn absorb(&mut self, next: &GlobalAccess) -> bool {
        if next.dispatch != self.dispatch
            || next.item != self.item + u32::from(self.lanes)
            || next.buffer != self.buffer
            || next.bytes != self.bytes
            || next.kind != self.kind
            || self.lanes == u8::MAX
            || self.runs > 1
        {
            return false;
        }
        // (One dispatch is one instruction between two barriers: its site,
        // atomicity and phase are the run's.)
        let last = self.offset + u64::from(self.lanes - 1) * self.stride();
        if self.lanes == 1 && next.offset == last + u64::from(self.bytes) && self.bytes > 0 {
            self.contiguous = true;
        } else if next.offset != last + self.stride() {
            return false;
        }
        self.lanes += 1;
        true
    }

    /// Takes the run `next` into the record as its next run, where it is
    /// the next work-items' at the same instruction, of as many work-items
    /// (two or more) and the same shape, as far from the last run as each
    /// run from the one before; false where it is not (or the record is
    /// full).
    pub fn join(&mut self, next: &GlobalAccess) -> bool {
        if next.dispatch != self.dispatch
            || next.item != self.item + self.work_items()
            || (next.buffer, next.bytes, next.kind) != (self.buffer, self.bytes, self.kind)
            || (next.lanes, next.contiguous, next.runs) != (self.lanes, self.contiguous, 1)
            || self.lanes < 2
            || self.runs == u8::MAX
        {
            return false;
        }
        let step = next.offset.wrapping_sub(self.offset) as i64;
        if self.runs == 1 {
            let Ok(step) = i32::try_from(step) else {
                return false;
            };
            self.run_step = step;
        } else if step != i64::from(self.runs) * i64::from(self.run_step) {
            return false;
        }
        self.runs += 1;
        true
    }

    /// The lines (of `1 << shift` bytes) one run's accesses touch, first to
    /// last: all of them, for a contiguous run. Not for 0 bytes, nor a
    /// record of several runs (see [`GlobalAccess::each_run`]).
    pub fn lines(&self, shift: u32) -> std::ops::RangeInclusive<u64> {
        debug_assert_eq!(self.runs, 1);
        let end = self.offset + u64::from(self.lanes - 1) * self.stride() + u64::from(self.bytes);
        (self.offset >> shift)..=((end - 1) >> shift)
    }

    /// Whether each work-item's access of a contiguous run lies in one line
    /// (of `1 << shift` bytes): accesses of a power of two bytes, no larger
    /// than a line, aligned to their size.
    pub fn each_in_one_line(&self, shift: u32) -> bool {
        let bytes = u64::from(self.bytes);
        bytes.is_power_of_two() && bytes <= 1 << shift && self.offset.is_multiple_of(bytes)
    }

    /// The line touches of the record's work-items, each touching every
    /// line its own access spans.
    pub fn line_touches(&self, shift: u32) -> u64 {
        if self.runs > 1 {
            // Runs a multiple of the bytes apart keep the first's alignment.
            if self.each_in_one_line(shift) && self.run_step % self.bytes as i32 == 0 {
                return u64::from(self.work_items());
            }
            return self.each_run().map(|run| run.line_touches(shift)).sum();
        }
        if self.bytes == 0 {
            return 0;
        }
        let lanes = u64::from(self.lanes);
        if !self.contiguous {
            let lines = self.lines(shift);
            return (lines.end() - lines.start() + 1) * lanes;
        }
        if self.each_in_one_line(shift) {
            return lanes;
        }
        self.each_lane()
            .map(|a| {
                let lines = a.lines(shift);
                lines.end() - lines.start() + 1
            })
            .sum()
    }
}

/// `accesses` (each one work-item's, in the order made) with each run of
/// like accesses taken into one record, as a run hands them to a sink that
/// takes runs ([`GlobalAccess::absorb`]).
pub fn runs(accesses: impl IntoIterator<Item = GlobalAccess>) -> Vec<GlobalAccess> {
    taken_together(accesses, GlobalAccess::absorb)
}

/// `runs` (as [`runs`] makes them) with each row of like runs taken into
/// one record ([`GlobalAccess::join`]), as a batch's dispatch traced at
/// once is handed over.
pub fn joined(runs: impl IntoIterator<Item = GlobalAccess>) -> Vec<GlobalAccess> {
    taken_together(runs, GlobalAccess::join)
}

/// `records` with each taken into the one before where `take` takes it.
fn taken_together(
    records: impl IntoIterator<Item = GlobalAccess>,
    take: fn(&mut GlobalAccess, &GlobalAccess) -> bool,
) -> Vec<GlobalAccess> {
    let mut together: Vec<GlobalAccess> = Vec::new();
    for record in records {
        if !together.last_mut().is_some_and(|last| take(last, &record)) {
            together.push(record);
        }
    }
    together
}

/// A buffer the trace's accesses refer to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceBuffer {
    pub label: String,
    /// `__global`, `__constant`, or `__local` (a work-group's own, where
    /// the sink wants local accesses).
    pub space: &'static str,
    pub bytes: u64,
    /// The kernel never writes it: `__constant`, or every parameter bound
    /// to it is one the module marks as never written through.
    pub read_only: bool,
}

/// Receives a launch's global accesses.
pub trait AccessSink {
    /// Called once, before any access, with the buffers by index.
    fn buffers(&mut self, buffers: &[TraceBuffer]);

    /// Called once, before any access, with how many work-groups the
    /// launch runs.
    fn work_groups(&mut self, groups: u64) {
        let _ = groups;
    }

    /// Whether `__local` accesses come too (a race checker's need; each
    /// costs the run a record, so the rest say no).
    fn wants_local(&self) -> bool {
        false
    }
    /// Whether the sink takes a run of work-items' like accesses as one
    /// record ([`GlobalAccess::lanes`]): a row of work-items reading one
    /// address, or each the word after the one before, makes one record
    /// rather than one each; and rows of like runs, each as far from the
    /// one before, one record too ([`GlobalAccess::runs`]).
    fn takes_runs(&self) -> bool {
        false
    }

    /// Whether the sink is told what each plain store wrote
    /// ([`AccessSink::stored`]): a race checker's need (two work-items
    /// storing the same value do not race), which costs the run a copy of
    /// each store's bytes, so the rest say no. Only a sink that takes no
    /// runs is told.
    fn compares_stores(&self) -> bool {
        false
    }

    /// Where the sink compares stores, called before each `work_group` call
    /// with one [`stored_fingerprint`] per access of that call: of the bytes
    /// a plain store wrote, 0 for any other access.
    fn stored(&mut self, _fingerprints: &[u64]) {}

    /// Called for every work-group in increasing order of its linear index
    /// (work-groups without global accesses included). A large work-group's
    /// accesses come in several calls, in order, each of whole dispatches.
    fn work_group(&mut self, group: u64, accesses: &[GlobalAccess]);

    /// [`AccessSink::work_group`] with the accesses given away: what the
    /// run calls. A sink that keeps them (to hand to other threads)
    /// overrides it and saves a copy.
    fn take_work_group(&mut self, group: u64, accesses: Vec<GlobalAccess>) {
        self.work_group(group, &accesses);
    }

    /// Where the run takes its access lists from, if the sink gives them
    /// back there once done with them (see [`AccessPool`]).
    fn pool(&self) -> Option<Arc<AccessPool>> {
        None
    }

    /// The line size (bytes) at which the sink can take a work-group's
    /// accesses as [`LineTouch`]es, where it can: what a compiled
    /// work-group hands over, one work-item's touches after another's
    /// (see [`AccessSink::reorders`]). `None`: every access, in order.
    fn line_touches(&self) -> Option<u64> {
        None
    }

    /// Asked after each work-group: whether, from here on, the sink
    /// estimates what it finds, so that an order of accesses within a
    /// work-group other than the batch's and a sample of whole traces do as
    /// well. The run then hands most work-groups over as line touches
    /// ([`AccessSink::take_lines`]) and traces a sample of them whole
    /// ([`AccessSink::take_sample`]). Once true, it stays so.
    fn reorders(&mut self) -> bool {
        false
    }

    /// Called where the run will hand no work-group over in another order,
    /// whatever `reorders` says: before the first access, where too few
    /// work-groups are left for a sample of them, or once `reorders` said
    /// yes and the run could not (too few left then, or no compiled
    /// kernel). A sink need not prepare for reordering then, nor report it.
    fn never_reorders(&mut self) {}

    /// Asked after each work-group until the sink reorders: whether it
    /// expects to, so that the run may compile the kernel meanwhile rather
    /// than have the switch to compiled work-groups wait for the compile.
    /// A hint only: which work-group runs how still hangs on `reorders`.
    fn foresees_reordering(&mut self) -> bool {
        false
    }

    /// A compiled work-group's line touches (a large one's in several
    /// calls), and the bytes its accesses moved (an atomic's twice).
    fn take_lines(&mut self, group: u64, touches: Vec<LineTouch>, accessed_bytes: u64) {
        let _ = (group, touches, accessed_bytes);
        unreachable!("a run hands over line touches only where the sink takes them")
    }

    /// A work-group traced whole after the sink began to estimate
    /// ([`AccessSink::reorders`]): it stands for `stands_for` work-groups
    /// (itself and those after it handed over as line touches), or for
    /// none but itself where it is 0 (it ran interpreted for another
    /// reason).
    fn take_sample(&mut self, group: u64, accesses: Vec<GlobalAccess>, stands_for: u64) {
        let _ = stands_for;
        self.take_work_group(group, accesses);
    }
}

/// Touches of one cache line by a work-group: what compiled code hands
/// over instead of each access (see [`AccessSink::line_touches`]). A
/// work-group's touches come one work-item's after another's; a touch of a
/// line the group touched already folds into that touch, where the line
/// still holds its slot in the group's table of recent lines
/// ([`LineTouch::slot`]: a line that lost its slot to another gets a new
/// touch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct LineTouch {
    /// The buffer (the top [`LineTouch::BUFFER_BITS`]) and the line in it.
    pub key: u64,
    /// The instruction that touched the line first in the group.
    pub site: u32,
    /// [`LineTouch::READS`] where the first touch read, and
    /// [`LineTouch::WRITES`] where any wrote.
    pub kind: u32,
}

impl LineTouch {
    pub const BUFFER_BITS: u32 = 22;
    pub const LINE_BITS: u32 = 64 - Self::BUFFER_BITS;
    pub const READS: u32 = 1;
    pub const WRITES: u32 = 2;
    /// Slots of a work-group's table of recent lines.
    pub const SLOTS: u64 = 256;
    /// The multiplier of [`LineTouch::slot`]'s hash (Fibonacci hashing).
    pub const SLOT_HASH: u64 = 0x9e37_79b9_7f4a_7c15;

    /// The slot of the line `key` names in a work-group's table of recent
    /// lines: the top bits of `key * SLOT_HASH`.
    pub fn slot(key: u64) -> u64 {
        key.wrapping_mul(Self::SLOT_HASH) >> (64 - Self::SLOTS.trailing_zeros())
    }

    pub fn key(buffer: u32, line: u64) -> u64 {
        (u64::from(buffer) << Self::LINE_BITS) | line
    }

    pub fn buffer(&self) -> u32 {
        (self.key >> Self::LINE_BITS) as u32
    }

    pub fn line(&self) -> u64 {
        self.key & ((1 << Self::LINE_BITS) - 1)
    }

    pub fn reads(&self) -> bool {
        self.kind & Self::READS != 0
    }

    pub fn writes(&self) -> bool {
        self.kind & Self::WRITES != 0
    }
}

/// Emptied access lists, kept for reuse. A traced run hands over a list a
/// work-group, hundreds of thousands of them: allocating each afresh costs
/// the system more in zeroed pages than filling it costs the run.
#[derive(Debug, Default)]
pub struct AccessPool(Mutex<Vec<Vec<GlobalAccess>>>);

/// Lists an [`AccessPool`] keeps at most: about what the sink's queues
/// hold at once, where they batch small work-groups' lists by the score.
const POOL_LISTS: usize = 256;

impl AccessPool {
    /// An empty list with room for `capacity` accesses.
    pub fn take(&self, capacity: usize) -> Vec<GlobalAccess> {
        let kept = self.0.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut list = kept.unwrap_or_default();
        list.reserve(capacity);
        list
    }

    /// Keeps `list`, emptied, for [`AccessPool::take`].
    pub fn give(&self, mut list: Vec<GlobalAccess>) {
        list.clear();
        let mut lists = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if lists.len() < POOL_LISTS {
            lists.push(list);
        }
    }
}

/// A list of accesses that goes back to its pool when dropped.
#[derive(Debug)]
pub struct Pooled {
    list: Vec<GlobalAccess>,
    pool: Arc<AccessPool>,
}

impl Pooled {
    pub fn new(list: Vec<GlobalAccess>, pool: Arc<AccessPool>) -> Pooled {
        Pooled { list, pool }
    }
}

impl std::ops::Deref for Pooled {
    type Target = [GlobalAccess];

    fn deref(&self) -> &[GlobalAccess] {
        &self.list
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        self.pool.give(std::mem::take(&mut self.list));
    }
}

#[cfg(test)]
mod run_tests {
    use super::*;

    /// Work-item `item`'s load of 4 bytes at `offset` in dispatch
    /// `dispatch`.
    fn load(item: u32, offset: u64, dispatch: u32) -> GlobalAccess {
        GlobalAccess {
            offset,
            bytes: 4,
            site: 7,
            dispatch,
            item,
            buffer: 1,
            ..GlobalAccess::default()
        }
    }

    #[test]
    fn a_run_takes_the_next_work_items_like_access_and_gives_each_back() {
        // Four work-items reading one word, four reading words in a row, one
        // a word further on (no run), and one row split by a new dispatch.
        let mut lanes: Vec<GlobalAccess> = (0..4).map(|i| load(i, 64, 0)).collect();
        lanes.extend((4..8).map(|i| load(i, 4 * u64::from(i), 0)));
        lanes.push(load(8, 40, 0));
        lanes.extend((9..11).map(|i| load(i, 4 * u64::from(i), 1)));
        let runs = runs(lanes.iter().copied());
        let shapes: Vec<(u32, u8, bool)> = runs
            .iter()
            .map(|r| (r.item, r.lanes, r.contiguous))
            .collect();
        assert_eq!(
            shapes,
            [(0, 4, false), (4, 4, true), (8, 1, false), (9, 2, true)]
        );
        assert_eq!(runs[1].last_item(), 7);
        let back: Vec<GlobalAccess> = runs.iter().flat_map(GlobalAccess::each_lane).collect();
        assert_eq!(back, lanes);
    }

    #[test]
    fn a_run_stops_at_another_size_kind_buffer_item_or_its_longest() {
        let first = load(0, 0, 0);
        let others = [
            GlobalAccess { bytes: 8, ..load(1, 4, 0) },
            GlobalAccess { kind: AccessKind::Store, ..load(1, 4, 0) },
            GlobalAccess { buffer: 2, ..load(1, 4, 0) },
            load(2, 4, 0),
            load(1, 8, 0),
        ];
        for other in others {
            let mut run = first;
            assert!(!run.absorb(&other), "{other:?}");
        }
        let row = runs((0..600).map(|i| load(i, 0, 0)));
        let lanes: Vec<u8> = row.iter().map(|r| r.lanes).collect();
        assert_eq!(lanes, [255, 255, 90]);
        // An access of no bytes repeats, and never runs on contiguously.
        let empty = GlobalAccess { bytes: 0, ..load(0, 0, 0) };
        let row = runs((0..3).map(|i| GlobalAccess { item: i, ..empty }));
        assert_eq!((row.len(), row[0].lanes, row[0].contiguous), (1, 3, false));
    }

    #[test]
    fn rows_of_like_runs_join_into_one_record_and_give_each_back() {
        // Three rows of 16 reading one word a row (512 bytes) apart, two
        // rows of 16 words reading the same words, a row a word short of
        // its row, then a row of 16 words 64 bytes on.
        let mut lanes: Vec<GlobalAccess> = (0..48)
            .map(|i| load(i, 512 * u64::from(i / 16), 0))
            .collect();
        lanes.extend((48..80).map(|i| load(i, 4 * u64::from(i % 16), 1)));
        lanes.extend((80..95).map(|i| load(i, 4 * u64::from(i % 16), 1)));
        lanes.extend((95..111).map(|i| load(i, 64 + 4 * u64::from(i - 95), 1)));
        let records = joined(runs(lanes.iter().copied()));
        let shapes: Vec<(u32, u8, bool, u8, i32)> = records
            .iter()
            .map(|r| (r.item, r.lanes, r.contiguous, r.runs, r.run_step))
            .collect();
        assert_eq!(
            shapes,
            [
                (0, 16, false, 3, 512),
                (48, 16, true, 2, 0),
                (80, 15, true, 1, 0),
                (95, 16, true, 1, 0)
            ]
        );
        let back: Vec<GlobalAccess> = records.iter().flat_map(GlobalAccess::each_lane).collect();
        assert_eq!(back, lanes);
        assert_eq!(
            (records[0].last_item(), records[0].last_offset()),
            (47, 1024)
        );
        // A run's last access to the next run's first: 512 bytes for the
        // first, back 60 for the second.
        assert_eq!((records[0].run_gap(), records[1].run_gap()), (512, 60));
        assert_eq!(records[0].line_touches(6), 48);
        // A record of runs takes no more work-items one at a time, and a
        // lone work-item joins no run.
        let mut first = records[0];
        assert!(!first.absorb(&load(48, 1536, 0)));
        let mut lone = load(0, 0, 0);
        assert!(!lone.join(&load(1, 512, 0)));
    }

    #[test]
    fn a_runs_line_touches_are_its_work_items() {
        // Every size from 1 to 96 bytes, at every offset in a line, in
        // contiguous runs and in rows reading one place.
        for bytes in 1..=96u32 {
            for offset in 0..64u64 {
                for contiguous in [false, true] {
                    let run = GlobalAccess {
                        bytes,
                        offset,
                        lanes: 9,
                        contiguous,
                        runs: 1,
                        run_step: 0,
                        ..load(0, 0, 0)
                    };
                    let each: u64 = run
                        .each_lane()
                        .map(|a| a.lines(6).end() - a.lines(6).start() + 1)
                        .sum();
                    assert_eq!(run.line_touches(6), each, "{run:?}");
                    let first = run.lane(0).lines(6);
                    let last = run.lane(8).lines(6);
                    assert_eq!(run.lines(6), *first.start()..=*last.end());
                    // And three such runs, at steps that keep or break
                    // their alignment.
                    for run_step in [0, 8, 12, -100, 4096] {
                        let record =
                            GlobalAccess { offset: offset + 1000, runs: 3, run_step, ..run };
                        let each: u64 = record
                            .each_lane()
                            .map(|a| a.lines(6).end() - a.lines(6).start() + 1)
                            .sum();
                        assert_eq!(record.line_touches(6), each, "{record:?}");
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod pool_tests {
    use super::*;

    #[test]
    fn a_pooled_list_goes_back_emptied_and_is_taken_again() {
        let pool = Arc::new(AccessPool::default());
        let mut list = pool.take(100);
        assert!(list.capacity() >= 100);
        list.push(GlobalAccess {
            offset: 0,
            buffer: 0,
            bytes: 4,
            site: 0,
            dispatch: 0,
            item: 0,
            kind: AccessKind::Load,
            atomic: false,
            phase: 0,
            fenced: 0,
            lanes: 1,
            contiguous: false,
            runs: 1,
            run_step: 0,
        });
        let at = list.as_ptr();
        let pooled = Pooled::new(list, Arc::clone(&pool));
        assert_eq!(pooled.len(), 1);
        drop(pooled);
        let again = pool.take(10);
        assert!(again.is_empty());
        assert_eq!(again.as_ptr(), at, "the same allocation, reused");
    }
}

/// A store's bytes as [`AccessSink::stored`] tells them: a 64-bit FNV-1a
/// hash, never 0 (0 is "not a plain store, or its bytes not known").
pub fn stored_fingerprint(bytes: &[u8]) -> u64 {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    hash.max(1)
}
