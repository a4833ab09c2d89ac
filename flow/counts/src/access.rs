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

/// One work-item's access to a global or constant buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlobalAccess {
    /// Byte offset into the buffer.
    pub offset: u64,
    /// The buffer: the kernel argument's index, or for program-scope
    /// variables the index after the last argument (see [`TraceBuffer`]).
    pub buffer: u32,
    /// Bytes accessed together (a whole vector or struct).
    pub bytes: u32,
    /// The bytecode instruction that made it; `clflow_interp::Program::site`
    /// names its SPIR-V.
    pub site: u32,
    /// Accesses with the same dispatch number were made by one instruction
    /// run for several work-items together.
    pub dispatch: u32,
    /// The work-item's linear id within its work-group.
    pub item: u32,
    pub kind: AccessKind,
    /// Made by an atomic function (`atomic_add`, `atomic_load`, ...).
    pub atomic: bool,
    /// Barriers the work-group had passed, modulo 2^16: accesses of one
    /// work-group with the same phase had no barrier between them.
    pub phase: u16,
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
