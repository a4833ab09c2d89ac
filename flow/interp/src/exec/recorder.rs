//! Where a traced run's work-groups record their accesses, and hand them
//! over to the sink (see `crate::trace`).

use super::mem::Loc;
use crate::memory::{self, SPACE_GLOBAL, SPACE_LOCAL};
use crate::trace::{
    AccessKind, Arrival, Arrivals, Body, Delivery, GlobalAccess, LineTouch, BATCH_GROUPS,
    BATCH_TOUCHES, CHUNK_ACCESSES,
};
use clflow_bytecode::Fences;
use clflow_counts::access::{stored_fingerprint, AccessPool};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Where a tracing worker hands its accesses over.
pub(super) struct Outlet<'a> {
    pub(super) delivery: &'a Delivery,
    pub(super) arrivals: Arrivals,
    /// The lowest work-group that faulted (see `run_groups`).
    pub(super) first_fault: &'a AtomicU64,
    /// Where new access lists come from, where the sink gives them back.
    pub(super) pool: Option<Arc<AccessPool>>,
    /// Whether the sink takes runs ([`clflow_counts::AccessSink::takes_runs`]).
    pub(super) runs: bool,
    /// Whether what each plain store writes is taken down
    /// ([`clflow_counts::AccessSink::compares_stores`]).
    pub(super) compares: bool,
    /// Compiled work-groups held back, to be handed over together, and
    /// their line touches.
    pub(super) batch: Vec<Arrival>,
    pub(super) batch_touches: usize,
}

impl Outlet<'_> {
    /// Hands over the work-groups held back.
    pub(super) fn flush(&mut self) {
        if !self.batch.is_empty() {
            self.batch_touches = 0;
            // The sink side is gone only when this run is over anyway.
            let _ = self.arrivals.send(std::mem::take(&mut self.batch));
        }
    }
}

/// A plain store traced, as it is made: its record, and the bytes written
/// so far. It stays in place between stores (no copy of its bytes per
/// access).
pub(super) struct Pending {
    /// The store's record; `None` while no store is pending.
    record: Option<usize>,
    loc: Loc,
    bytes: u32,
    written: [u8; PENDING_BYTES],
    /// Which of `written` are known.
    known: u128,
}

impl Default for Pending {
    fn default() -> Self {
        Pending {
            record: None,
            loc: Loc::Private(0),
            bytes: 0,
            written: [0; PENDING_BYTES],
            known: 0,
        }
    }
}

/// Stores of at most this many bytes (a `long16`) are compared; what
/// larger ones wrote is not told.
pub(super) const PENDING_BYTES: usize = 128;

impl Pending {
    /// Starts taking down the store of `bytes` at `loc` whose record is
    /// `record`.
    pub(super) fn start(&mut self, record: usize, loc: Loc, bytes: u32) {
        *self = Pending { record: Some(record), loc, bytes, known: 0, ..*self };
    }

    /// A write of `size` bytes of `value` at `at` bytes into `loc`: taken
    /// down if it is part of the pending store.
    #[inline(always)]
    pub(super) fn capture(&mut self, loc: Loc, at: u64, size: u32, value: u64) {
        let (at, end) = (at as usize, at as usize + size as usize);
        if self.record.is_none() || loc != self.loc || end > self.bytes as usize {
            return;
        }
        self.written[at..end].copy_from_slice(&value.to_le_bytes()[..size as usize]);
        self.known |= ((1u128 << size) - 1) << at;
    }

    /// [`Pending::capture`] of the first 4 bytes, wherever they are.
    #[inline(always)]
    pub(super) fn capture_word(&mut self, value: u64) {
        self.capture(self.loc, 0, 4, value);
    }

    /// The fingerprint of what the store wrote, 0 where not all is known.
    fn fingerprint(&self) -> u64 {
        let n = self.bytes as usize;
        let all = if n == PENDING_BYTES {
            u128::MAX
        } else {
            (1u128 << n) - 1
        };
        match self.known & all == all {
            true => stored_fingerprint(&self.written[..n]),
            false => 0,
        }
    }
}

/// Collects a work-group's global accesses as they are made.
pub(super) struct Recorder<'a> {
    pub(super) accesses: Vec<GlobalAccess>,
    /// The work-group's linear index.
    pub(super) group: u64,
    /// The instruction being dispatched, and its dispatch number.
    pub(super) site: u32,
    pub(super) dispatch: u32,
    /// The work-group's size, for work-items' linear ids.
    pub(super) local: [u64; 3],
    /// Barriers the work-group has passed (see `GlobalAccess::phase`).
    pub(super) phase: u16,
    /// Of those, the ones that fence global memory, and local memory (see
    /// `GlobalAccess::fenced`).
    pub(super) fenced_global: u16,
    pub(super) fenced_local: u16,
    /// Whether the instruction being dispatched is an atomic function.
    pub(super) atomic: bool,
    /// Where `__local` accesses are traced too: the stream's index of the
    /// first local buffer (the global buffers come before).
    pub(super) local_base: Option<u32>,
    /// Whether the sink takes runs of accesses as one record
    /// ([`GlobalAccess::absorb`]).
    pub(super) runs: bool,
    /// The plain store traced last, where stores are compared: it is made
    /// after it is traced, its bytes taken down as it writes them, and its
    /// fingerprint put in `stored` when the next access is traced or the
    /// batch stops ([`Recorder::settle`]).
    pub(super) pending: Pending,
    /// Where stores are compared, one [`stored_fingerprint`] per record of
    /// `accesses` (0 but for a plain store whose bytes are known).
    pub(super) stored: Vec<u64>,
    /// Where the dispatch was traced a row at once: its first record, and
    /// its first work-item (see [`Recorder::stopped`]).
    pub(super) row: Option<(usize, u32)>,
    /// How many work-groups the one being traced whole stands for.
    pub(super) stands_for: u64,
    /// A compiled work-group's line touches (`native::helpers::new_touch` writes them,
    /// `native::TouchOut`), and the bytes its accesses moved; whether the
    /// group being run is one.
    pub(super) lines: Vec<LineTouch>,
    pub(super) accessed: u64,
    pub(super) compiled: bool,
    pub(super) outlet: Outlet<'a>,
}

impl Recorder<'_> {
    /// Starts the accesses of a memory instruction at `pc`; a large
    /// work-group hands over what it holds first.
    #[inline]
    pub(super) fn dispatch(&mut self, pc: usize) {
        if self.accesses.len() >= CHUNK_ACCESSES {
            self.hand_over(false);
        }
        self.site = pc as u32;
        self.dispatch = self.dispatch.wrapping_add(1);
        self.atomic = false;
        self.row = None;
    }

    /// Sends the accesses held: all that is left of the group (`complete`),
    /// or a chunk, once the group's turn has come. A chunk whose turn never
    /// comes (an earlier group faulted) is dropped: the run fails anyway.
    pub(super) fn hand_over(&mut self, complete: bool) {
        let touches = self.lines.len();
        let body = if self.compiled {
            let capacity = touches.min(CHUNK_ACCESSES);
            let lines = std::mem::replace(&mut self.lines, Vec::with_capacity(capacity));
            Body::Lines(lines, std::mem::take(&mut self.accessed))
        } else {
            if self.runs {
                self.join_last();
            }
            let capacity = self.accesses.len().min(CHUNK_ACCESSES);
            let fresh = match &self.outlet.pool {
                Some(pool) => pool.take(capacity),
                None => Vec::with_capacity(capacity),
            };
            let accesses = std::mem::replace(&mut self.accesses, fresh);
            let stored = std::mem::take(&mut self.stored);
            Body::Accesses(accesses, self.stands_for, stored)
        };
        let arrival = Arrival { group: self.group, body, complete };
        let out = &mut self.outlet;
        if complete && self.compiled {
            out.batch.push(arrival);
            out.batch_touches += touches;
            if out.batch.len() >= BATCH_GROUPS || out.batch_touches >= BATCH_TOUCHES {
                out.flush();
            }
            return;
        }
        // Whatever is held back comes first: a chunk waits for its turn,
        // which may be behind a group held back.
        out.flush();
        let group = self.group;
        let first_fault = out.first_fault;
        let stop = || group > first_fault.load(Ordering::Relaxed);
        if complete || out.delivery.wait_current(group, &stop) {
            // The sink side is gone only when this run is over anyway.
            let _ = out.arrivals.send(vec![arrival]);
        }
    }

    /// Tells what the store traced last wrote, now that it has been made:
    /// before the next access is traced (every write to global or local
    /// memory is traced before it is made) and before the work-group's
    /// accesses are handed over.
    #[inline(always)]
    pub(super) fn settle(&mut self) {
        let Some(record) = self.pending.record.take() else {
            return;
        };
        if let Some(stored) = self.stored.get_mut(record) {
            *stored = self.pending.fingerprint();
        }
    }

    /// Where stores are compared, starts taking down what the plain store
    /// just traced writes.
    #[inline(always)]
    pub(super) fn hold(&mut self, loc: Loc, bytes: u64, kind: AccessKind) {
        if !self.outlet.compares || kind != AccessKind::Store || self.atomic {
            return;
        }
        // The record the store just made (a local one is traced only where
        // local accesses are).
        let made = self
            .accesses
            .last()
            .is_some_and(|a| a.kind == kind && a.bytes as u64 == bytes);
        if matches!(loc, Loc::Private(_)) || !made || bytes as usize > PENDING_BYTES {
            return;
        }
        self.pending
            .start(self.accesses.len() - 1, loc, bytes as u32);
    }

    /// The work-group passes a barrier that fences `fences`.
    pub(super) fn pass(&mut self, fences: Fences) {
        self.phase = self.phase.wrapping_add(1);
        if fences.global {
            self.fenced_global = self.fenced_global.wrapping_add(1);
        }
        if fences.local {
            self.fenced_local = self.fenced_local.wrapping_add(1);
        }
    }

    /// A new work-group starts: no barrier passed yet.
    pub(super) fn start_group(&mut self) {
        self.phase = 0;
        self.fenced_global = 0;
        self.fenced_local = 0;
    }

    /// A work-item's linear id in its work-group.
    #[inline(always)]
    pub(super) fn linear(&self, item: [u64; 3]) -> u32 {
        let [lx, ly, _] = self.local;
        ((item[2] * ly + item[1]) * lx + item[0]) as u32
    }

    #[inline(always)]
    pub(super) fn record(
        &mut self,
        buffer: usize,
        offset: u64,
        bytes: u64,
        kind: AccessKind,
        item: [u64; 3],
    ) {
        let id = self.linear(item);
        self.record_id(buffer, offset, bytes, kind, id);
    }

    /// Work-item `id`'s access at the instruction being dispatched.
    #[inline(always)]
    fn access(
        &self,
        buffer: usize,
        offset: u64,
        bytes: u64,
        kind: AccessKind,
        id: u32,
    ) -> GlobalAccess {
        GlobalAccess {
            offset,
            // The trace names fewer buffers than that (`Program::launch`
            // refuses more).
            buffer: buffer as u16,
            bytes: bytes.min(u32::MAX as u64) as u32,
            site: self.site,
            dispatch: self.dispatch,
            item: id,
            kind,
            atomic: self.atomic,
            phase: self.phase,
            fenced: match self.local_base {
                Some(first) if buffer as u32 >= first => self.fenced_local,
                _ => self.fenced_global,
            },
            lanes: 1,
            contiguous: false,
            runs: 1,
            run_step: 0,
        }
    }

    /// [`Recorder::record`] of work-item `id`.
    #[inline(always)]
    fn record_id(&mut self, buffer: usize, offset: u64, bytes: u64, kind: AccessKind, id: u32) {
        let access = self.access(buffer, offset, bytes, kind, id);
        if self.runs {
            if let Some(run) = self.accesses.last_mut() {
                if run.absorb(&access) {
                    return;
                }
            }
            self.join_last();
        }
        self.accesses.push(access);
        if self.outlet.compares {
            self.stored.push(0);
        }
    }

    /// Takes the last run, where it has ended, into the record before it
    /// ([`GlobalAccess::join`]): whether traced a row at once or one
    /// work-item at a time, like runs end up in one record.
    fn join_last(&mut self) {
        if let [.., record, run] = &mut self.accesses[..] {
            if record.join(run) {
                self.accesses.pop();
            }
        }
    }

    /// Records a `__local` access, where they are traced: `buffer` is the
    /// local buffer's index in the work-group's arena layout.
    #[inline]
    pub(super) fn record_local(
        &mut self,
        buffer: usize,
        offset: u64,
        bytes: u64,
        kind: AccessKind,
        item: [u64; 3],
    ) {
        if let Some(base) = self.local_base {
            self.record(base as usize + buffer, offset, bytes, kind, item);
        }
    }

    /// Lane `lane` of the batch faulted at the instruction being dispatched,
    /// and stopped there while the others go on: a row traced at once keeps
    /// the accesses of the lanes up to it, as one by one it would have had
    /// (the lanes after it make theirs when they run it again).
    pub(super) fn stopped(&mut self, lane: usize) {
        let Some((start, first)) = self.row.take() else {
            return;
        };
        let last = first + lane as u32;
        let kept = self.accesses[start..]
            .iter()
            .take_while(|run| run.item <= last)
            .count();
        self.accesses.truncate(start + kept);
        let Some(record) = self.accesses[start..].last_mut() else {
            return;
        };
        // The work-items kept of the last record: its whole runs, and the
        // first lanes of the next as a run of its own.
        let items = (last - record.item + 1).min(record.work_items());
        let (whole, lanes) = (
            items / u32::from(record.lanes),
            items % u32::from(record.lanes),
        );
        let rest = record.run(whole.min(u32::from(record.runs) - 1) as u8);
        if whole > 0 {
            record.runs = whole as u8;
            if whole == 1 {
                record.run_step = 0;
            }
        }
        if lanes > 0 {
            let part = GlobalAccess {
                lanes: lanes as u8,
                contiguous: rest.contiguous && lanes > 1,
                ..rest
            };
            match whole {
                0 => *record = part,
                _ => self.accesses.push(part),
            }
        }
    }

    /// Records the access at `pointer`, if it is one the trace keeps (a
    /// global one, or a local one where they are traced): what
    /// `Mem::trace_pointer` does for one work-item.
    #[inline(always)]
    pub(super) fn record_pointer(&mut self, pointer: u64, bytes: u64, kind: AccessKind, id: u32) {
        match memory::decode(pointer) {
            (SPACE_GLOBAL, buffer, offset) => {
                self.record_id(buffer, offset as u64, bytes, kind, id)
            }
            // Out of bounds, it faults as the access is made.
            (SPACE_LOCAL, buffer, offset) if offset >= 0 => {
                if let Some(base) = self.local_base {
                    self.record_id(base as usize + buffer, offset as u64, bytes, kind, id);
                }
            }
            _ => {}
        }
    }

    /// Records a dispatch that every lane of a batch runs, work-item
    /// `first` and those after it, each accessing `bytes` at its pointer,
    /// for a sink that takes runs: the runs are found on the pointers
    /// alone, as [`GlobalAccess::absorb`] would take them one by one. A
    /// global pointer the one before plus 0 or `bytes` is in the same
    /// buffer: a buffer's offsets stay far below the buffer bits (but for a
    /// negative one, whose access faults, and whose work-group's trace is
    /// never handed over).
    pub(super) fn record_row(
        &mut self,
        pointers: &[u64],
        bytes: u64,
        kind: AccessKind,
        first: [u64; 3],
    ) {
        debug_assert!(self.runs && bytes > 0);
        let first = self.linear(first);
        self.row = Some((self.accesses.len(), first));
        let mut l = 0;
        while l < pointers.len() {
            let pointer = pointers[l];
            let id = first + l as u32;
            let (space, buffer, offset) = memory::decode(pointer);
            if space != SPACE_GLOBAL {
                self.record_pointer(pointer, bytes, kind, id);
                l += 1;
                continue;
            }
            let step = pointers.get(l + 1).map(|p| p.wrapping_sub(pointer));
            let mut end = l + 1;
            if let Some(step) = step.filter(|&s| s == 0 || s == bytes) {
                let most = pointers.len().min(l + usize::from(u8::MAX));
                while end < most && pointers[end].wrapping_sub(pointers[end - 1]) == step {
                    end += 1;
                }
            }
            let lanes = end - l;
            self.accesses.push(GlobalAccess {
                lanes: lanes as u8,
                contiguous: lanes > 1 && step == Some(bytes),
                ..self.access(buffer, offset as u64, bytes, kind, id)
            });
            // Rows of like runs (a 2-D group's) make one record.
            self.join_last();
            l = end;
        }
    }
}
