//! The global access stream: every global and constant load and store of a
//! launch, handed to an [`AccessSink`] one work-group at a time, in
//! work-group order, whatever order the threads ran them in.
//!
//! Within a work-group the accesses come in the order the batch ran them:
//! one instruction's accesses for all the lanes that ran it (one
//! *dispatch*), then the next instruction's. That is the order a GPU's
//! warps present a work-group's accesses to the memory system, and what a
//! cache simulation and a coalescing analysis need.
//!
//! Workers take work-groups in increasing order; a work-group whose
//! accesses wait for an earlier one is held, and no worker starts a group
//! more than a small window ahead of the last one delivered, so that the
//! held accesses stay bounded. A work-group that makes more than
//! [`CHUNK_ACCESSES`] accesses (a long loop over global memory) is not held
//! whole: its worker waits for the group's turn and hands it over in
//! chunks, each ending where a memory instruction's dispatch ends.

use std::collections::BTreeMap;
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

pub use clflow_counts::access::{AccessKind, AccessSink, GlobalAccess, TraceBuffer};

/// How many work-groups per worker may run ahead of the last delivered.
const WINDOW_PER_THREAD: u64 = 2;

/// Accesses a worker holds for one work-group before it hands them over
/// (32 MiB of them).
pub const CHUNK_ACCESSES: usize = 1 << 20;

/// What a worker sends: a work-group's accesses, all of them or (for the
/// group whose turn it is) the next chunk.
pub(crate) struct Arrival {
    pub group: u64,
    pub accesses: Vec<GlobalAccess>,
    /// The group's last accesses: the sink may go on to the next group.
    pub complete: bool,
}

/// The delivery side shared by the workers: they send finished
/// work-groups and wait while too far ahead.
pub(crate) struct Delivery {
    /// The next work-group the sink is waiting for.
    next: Mutex<u64>,
    moved: Condvar,
    window: u64,
}

impl Delivery {
    pub fn new(threads: usize) -> Self {
        Delivery {
            next: Mutex::new(0),
            moved: Condvar::new(),
            window: WINDOW_PER_THREAD * threads.max(1) as u64,
        }
    }

    /// Blocks a worker about to run `group` while it is too far ahead;
    /// `stop` is checked now and then so that a fault elsewhere ends it.
    pub fn wait_turn(&self, group: u64, stop: &dyn Fn() -> bool) {
        let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
        while group >= *next + self.window && !stop() {
            next = self
                .moved
                .wait_timeout(next, Duration::from_millis(5))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Blocks a worker until `group` is the one the sink takes, so that it
    /// may hand over a chunk; false if `stop` ended the wait first (an
    /// earlier group faulted, and this one's turn never comes).
    pub fn wait_current(&self, group: u64, stop: &dyn Fn() -> bool) -> bool {
        let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
        while *next != group {
            if stop() {
                return false;
            }
            next = self
                .moved
                .wait_timeout(next, Duration::from_millis(5))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        true
    }

    /// Hands every work-group that arrives to `sink` in order, until
    /// every sender is gone.
    pub fn deliver(&self, arrivals: Receiver<Arrival>, sink: &mut dyn AccessSink) {
        let mut held = BTreeMap::new();
        let mut next = 0;
        for arrival in arrivals {
            if !arrival.complete {
                // A chunk comes only when its group's turn has come.
                debug_assert_eq!(arrival.group, next);
                sink.take_work_group(arrival.group, arrival.accesses);
                continue;
            }
            held.insert(arrival.group, arrival.accesses);
            while let Some(accesses) = held.remove(&next) {
                sink.take_work_group(next, accesses);
                next += 1;
            }
            *self.next.lock().unwrap_or_else(|p| p.into_inner()) = next;
            self.moved.notify_all();
        }
    }
}

/// Where a worker sends its work-groups' accesses: a bounded queue, so
/// that workers wait for a slow sink rather than pile up accesses.
pub(crate) type Arrivals = SyncSender<Arrival>;

/// Arrivals the queue holds per worker.
pub(crate) const QUEUED_PER_THREAD: usize = 2;
