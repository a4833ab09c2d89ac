//! The global access stream: every global and constant load and store of a
//! launch, handed to an [`AccessSink`] one work-group at a time, in
//! work-group order, whatever order the threads ran them in.
//!
//! Within a work-group the accesses come in the order the batch ran them:
//! one instruction's accesses for all the lanes that ran it (one
//! *dispatch*), then the next instruction's. That is the order a GPU's
//! warps present a work-group's accesses to the memory system, and what a
//! cache simulation and a coalescing analysis need. A sink that takes runs
//! ([`AccessSink::takes_runs`]) gets a row of work-items in a dispatch
//! making one access, or each the bytes after the one before, as one record
//! ([`GlobalAccess::absorb`]), and rows of such runs alike and evenly apart
//! (a 2-D work-group's rows) as one record too ([`GlobalAccess::join`]).
//!
//! Workers take work-groups in increasing order; a work-group whose
//! accesses wait for an earlier one is held, and no worker starts a group
//! more than a small window ahead of the last one delivered, so that the
//! held accesses stay bounded. A work-group that makes more than
//! [`CHUNK_ACCESSES`] accesses (a long loop over global memory) is not held
//! whole: its worker waits for the group's turn and hands it over in
//! chunks, each ending where a memory instruction's dispatch ends.
//!
//! Where the sink estimates from some point on ([`AccessSink::reorders`]),
//! the work-groups from a little after that point run compiled, except one
//! in up to `MOST_EVERY`, which is traced whole and stands for the others
//! in the coalescing analysis; a compiled work-group hands over its line touches,
//! one work-item's after another's ([`AccessSink::take_lines`]). Which
//! work-group runs how depends on the stream alone, not on the threads'
//! timing: the point is the first group that no worker can have started
//! when the sink said so.

use std::collections::BTreeMap;
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

pub use clflow_counts::access::{AccessKind, AccessSink, GlobalAccess, LineTouch, TraceBuffer};
use std::sync::atomic::{AtomicU64, Ordering};

/// How many work-groups per worker may run ahead of the last delivered.
const WINDOW_PER_THREAD: u64 = 2;

/// Accesses a worker holds for one work-group before it hands them over
/// (32 MiB of them).
pub const CHUNK_ACCESSES: usize = 1 << 20;

/// Work-groups traced whole, at the least, of those after the sink began
/// to estimate (where there are as many).
const WHOLE_SAMPLES: u64 = 64;

/// One work-group in at most this many is traced whole then.
const MOST_EVERY: u64 = 128;

/// How much further workers may run ahead once work-groups run compiled:
/// their line touches are small, and a worker hands over up to
/// [`BATCH_GROUPS`] of them at once (the delivering thread woken for every
/// work-group cost more than the simulation).
const COMPILED_WINDOW: u64 = 32;

/// Compiled work-groups a worker hands over together.
pub(crate) const BATCH_GROUPS: usize = 64;

/// Line touches a worker holds back before it hands its compiled
/// work-groups over, however few they are.
pub(crate) const BATCH_TOUCHES: usize = 1 << 16;

/// What a worker sends: a work-group's accesses, all of them or (for the
/// group whose turn it is) the next chunk.
pub(crate) struct Arrival {
    pub group: u64,
    pub body: Body,
    /// The group's last accesses: the sink may go on to the next group.
    pub complete: bool,
}

/// A work-group's accesses as a run hands them over.
pub(crate) enum Body {
    /// Every access, in the order made; the group stands for `.1` groups
    /// (1 but where it is a sample, see [`AccessSink::take_sample`]); what
    /// each plain store wrote, where the sink compares stores
    /// ([`AccessSink::stored`]; empty otherwise).
    Accesses(Vec<GlobalAccess>, u64, Vec<u64>),
    /// A compiled group's line touches, and the bytes its accesses moved.
    Lines(Vec<LineTouch>, u64),
}

/// How a traced work-group runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Traced {
    /// Interpreted, every access handed over; it stands for this many
    /// work-groups.
    Whole(u64),
    /// Compiled, its line touches handed over.
    Lines,
}

/// The delivery side shared by the workers: they send finished
/// work-groups and wait while too far ahead.
pub(crate) struct Delivery {
    /// The next work-group the sink is waiting for.
    next: Mutex<u64>,
    moved: Condvar,
    window: u64,
    /// Whether the launch may hand over line touches (its kernel compiles
    /// and the sink takes them).
    may_reorder: bool,
    groups: u64,
    /// The first work-group that may run compiled (`u64::MAX`: none yet),
    /// and one in how many of those after it is traced whole.
    from: AtomicU64,
    every: AtomicU64,
}

impl Delivery {
    pub fn new(threads: usize, groups: u64, may_reorder: bool) -> Self {
        Delivery {
            next: Mutex::new(0),
            moved: Condvar::new(),
            window: WINDOW_PER_THREAD * threads.max(1) as u64,
            may_reorder,
            groups,
            from: AtomicU64::new(u64::MAX),
            every: AtomicU64::new(1),
        }
    }

    /// How work-group `group` runs, asked once its turn to start has come
    /// (`wait_turn`); `None`: as without a sink that reorders.
    pub fn traced(&self, group: u64) -> Option<Traced> {
        let from = self.from.load(Ordering::Acquire);
        if group < from {
            return None;
        }
        let every = self.every.load(Ordering::Acquire);
        Some(if (group - from).is_multiple_of(every) {
            Traced::Whole(every.min(self.groups - group))
        } else {
            Traced::Lines
        })
    }

    /// Once the sink estimates: the first group no worker can have
    /// started (every group below `next` plus the window may have), and
    /// how often a group is traced whole.
    fn start_reordering(&self, next: u64) {
        let from = next + self.window;
        let left = self.groups_after(next);
        let every = (left / WHOLE_SAMPLES).clamp(1, MOST_EVERY);
        self.every.store(every, Ordering::Release);
        self.from.store(from, Ordering::Release);
    }

    /// The work-groups that no worker can have started once the sink has
    /// had those before `next`.
    fn groups_after(&self, next: u64) -> u64 {
        self.groups.saturating_sub(next + self.window)
    }

    /// Whether, once the sink has had the groups before `next`, enough are
    /// left for some to run compiled and a sample of them traced whole: no
    /// group runs compiled otherwise, and the kernel is not compiled for
    /// nothing.
    fn leaves_a_sample(&self, next: u64) -> bool {
        self.groups_after(next) >= 2 * WHOLE_SAMPLES
    }

    /// Blocks a worker about to run `group` while it is too far ahead;
    /// `stop` is checked now and then so that a fault elsewhere ends it.
    /// Before it first waits, `flush` hands over what the worker holds
    /// back (the groups the sink waits for may be among them).
    pub fn wait_turn(&self, group: u64, stop: &dyn Fn() -> bool, flush: &mut dyn FnMut()) {
        let window = if group >= self.from.load(Ordering::Acquire) {
            self.window * COMPILED_WINDOW
        } else {
            self.window
        };
        let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
        if group >= *next + window {
            drop(next);
            flush();
            next = self.next.lock().unwrap_or_else(|p| p.into_inner());
        }
        while group >= *next + window && !stop() {
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
    /// `compiled` compiles the kernel once the sink estimates, and says
    /// whether it could: only then do work-groups run compiled.
    /// `compile_soon` starts that compile beside the run where the sink
    /// foresees estimating, so that the switch need not wait for it.
    pub fn deliver(
        &self,
        arrivals: Receiver<Vec<Arrival>>,
        sink: &mut dyn AccessSink,
        compiled: &dyn Fn() -> bool,
        compile_soon: &dyn Fn(),
    ) {
        let mut held = BTreeMap::new();
        let mut next = 0;
        let mut reordering = false;
        let mut foreseen = false;
        // The sink is asked first once it has the first group.
        let never = !self.may_reorder || !self.leaves_a_sample(1);
        if never {
            sink.never_reorders();
        }
        for arrivals in arrivals {
            for arrival in arrivals {
                if !arrival.complete {
                    // A chunk comes only when its group's turn has come.
                    debug_assert_eq!(arrival.group, next);
                    hand(sink, arrival.group, arrival.body);
                    continue;
                }
                held.insert(arrival.group, arrival.body);
                while let Some(body) = held.remove(&next) {
                    hand(sink, next, body);
                    next += 1;
                    if !self.may_reorder || reordering {
                        continue;
                    }
                    let worth = self.leaves_a_sample(next);
                    if sink.reorders() {
                        reordering = true;
                        if worth && compiled() {
                            // Before the workers hear of `next`: no group at
                            // or past the point has started.
                            self.start_reordering(next);
                        } else if !never {
                            sink.never_reorders();
                        }
                    } else if !foreseen && sink.foresees_reordering() {
                        foreseen = true;
                        if worth {
                            compile_soon();
                        }
                    }
                }
            }
            // Once a batch: the workers wake to every group it moved on.
            *self.next.lock().unwrap_or_else(|p| p.into_inner()) = next;
            self.moved.notify_all();
        }
    }
}

fn hand(sink: &mut dyn AccessSink, group: u64, body: Body) {
    match body {
        Body::Accesses(accesses, stands_for, stored) => {
            if !stored.is_empty() {
                sink.stored(&stored);
            }
            match stands_for {
                1 => sink.take_work_group(group, accesses),
                _ => sink.take_sample(group, accesses, stands_for),
            }
        }
        Body::Lines(touches, accessed_bytes) => sink.take_lines(group, touches, accessed_bytes),
    }
}

/// Where a worker sends its work-groups' accesses, one or (compiled groups)
/// several at a time: a bounded queue, so that workers wait for a slow
/// sink rather than pile up accesses.
pub(crate) type Arrivals = SyncSender<Vec<Arrival>>;

/// Arrivals the queue holds per worker.
pub(crate) const QUEUED_PER_THREAD: usize = 2;
