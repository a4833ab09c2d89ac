//! `races`: two accesses to the same bytes by different work-items, at least
//! one of them a write and not both atomic, with nothing to order them.
//! Within a work-group that means no barrier between them that fences their
//! memory (`__local` and `__global` memory each have phases of their own,
//! `GlobalAccess::fenced`); across work-groups, in `__global` memory, it
//! means any time at all: work-groups cannot wait for each other within a
//! launch. Two plain stores of the same value leave the same bytes whichever
//! comes last: no race (`AccessSink::stored`).
//!
//! Shadow memory: every byte a work-group touches has a cell that remembers
//! its last write and its latest reads: who, where, and when. "When" is a
//! stamp, one per phase of a work-group (the stretch between two barriers),
//! handed out in stream order. Work-groups come in order, so a stamp says
//! at once whether an earlier access was made in this phase (the stamp now),
//! in an earlier phase of this work-group (at least the group's first), or
//! by another work-group (before it). Cells come in pages made as they are
//! first touched: 28 bytes per byte touched, in buffers the kernel writes
//! (the module marks the parameters a kernel only reads).
//!
//! A side names one access and summarises the rest of its phase (several
//! work-items, all atomic or not), so one thing is approximate: where a
//! work-item mixes plain and atomic accesses to the same bytes in one phase
//! with other work-items' atomics, the race that is there may be reported
//! at more of its instructions than take part in it.

use super::{Counterpart, Found, Origin, Raced};
use clflow_counts::{AccessKind, AccessSink, GlobalAccess, TraceBuffer};
use std::collections::BTreeMap;

/// Cells per page.
const PAGE: u64 = 4096;

/// In `Side::who`: every access of the side was atomic.
const ATOMIC: u32 = 1 << 31;
/// Several work-items made the side's accesses in its phase.
const MANY: u32 = 1 << 30;
/// Another work-group made such an access before, plain or atomic; the side
/// no longer holds it, but it still conflicts with what comes.
const GROUPS_PLAIN: u32 = 1 << 29;
const GROUPS_ATOMIC: u32 = 1 << 28;
/// The access the side names (its work-item's, at its site) was atomic.
const NAMED_ATOMIC: u32 = 1 << 27;
/// The side's work-group made a plain access in an earlier phase: ordered
/// for its own work-items, a conflict for another group's atomics.
const PLAIN_BEFORE: u32 = 1 << 26;
/// The work-item's linear id in its work-group.
const ITEM: u32 = PLAIN_BEFORE - 1;

/// The last write, or the latest reads, of a byte.
#[derive(Debug, Clone, Copy, Default)]
struct Side {
    /// 0: none yet.
    stamp: u32,
    who: u32,
    site: u32,
}

#[derive(Debug, Clone, Copy, Default)]
struct Cell {
    write: Side,
    read: Side,
    /// What the last write stored: its fingerprint's low half
    /// (`AccessSink::stored`), 0 where not known.
    value: u32,
}

/// One buffer's cells.
#[derive(Debug, Default)]
struct Shadow {
    pages: Vec<Option<Box<[Cell]>>>,
    /// A work-group's own memory: what another group did there is stale.
    local: bool,
    /// Not watched: the kernel never writes it (`__constant`, or only read
    /// through its parameters), so no access to it can race. A write all
    /// the same (a module that says otherwise) starts the watch.
    unwatched: bool,
}

impl Shadow {
    /// The cells of bytes `byte..end` that lie on `byte`'s page.
    #[inline]
    fn cells(&mut self, byte: u64, end: u64) -> &mut [Cell] {
        let page = (byte / PAGE) as usize;
        if page >= self.pages.len() {
            self.pages.resize_with(page + 1, || None);
        }
        let cells = self.pages[page]
            .get_or_insert_with(|| vec![Cell::default(); PAGE as usize].into_boxed_slice());
        let first = (byte % PAGE) as usize;
        let last = (end - byte).min(PAGE - first as u64) as usize + first;
        &mut cells[first..last]
    }
}

/// How two accesses conflict, named for the later one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Conflict {
    /// It writes bytes another work-item wrote.
    WriteAfterWrite,
    /// It reads bytes another work-item wrote.
    ReadAfterWrite,
    /// It writes bytes another work-item read.
    WriteAfterRead,
}

/// One race: (site, the other's site, buffer, how, across work-groups).
type Key = (u32, Option<u32>, u32, Conflict, bool);

/// The stamps of one memory's phases: global and local memory are fenced
/// by different barriers, so each has phases of its own.
#[derive(Debug, Default)]
struct Stamps {
    /// The work-group of each stamp (at `stamp - 1`).
    groups: Vec<u64>,
    /// The phase being stamped, and the first stamp of its work-group.
    phase: Option<(u64, u16)>,
    group_first: u32,
}

impl Stamps {
    /// The stamp of `group`'s `phase`, a new one where it starts.
    fn stamp(&mut self, group: u64, phase: u16) -> u32 {
        if self.phase != Some((group, phase)) {
            if self.phase.is_none_or(|(g, _)| g != group) {
                self.group_first = self.groups.len() as u32 + 1;
            }
            self.phase = Some((group, phase));
            self.groups.push(group);
        }
        self.groups.len() as u32
    }
}

/// The race checker.
#[derive(Debug, Default)]
pub struct RaceChecker {
    shadows: Vec<Shadow>,
    labels: Vec<String>,
    /// Global memory's stamps, and local memory's.
    stamps: [Stamps; 2],
    found: BTreeMap<Key, (Origin, Counterpart)>,
    /// Accesses seen.
    seen: u64,
    /// What the next work-group call's stores stored (`AccessSink::stored`).
    stored: Vec<u64>,
}

impl RaceChecker {
    /// Checks access `a`, whose stored bytes' fingerprint is `stored` (0:
    /// not a plain store, or not known).
    fn check(&mut self, group: u64, a: &GlobalAccess, stored: u64) {
        let value = stored as u32;
        let Some(shadow) = self.shadows.get_mut(a.buffer as usize) else {
            return;
        };
        if shadow.unwatched {
            if !a.kind.writes() {
                return;
            }
            shadow.unwatched = false;
        }
        let local = shadow.local;
        let stamps = &mut self.stamps[usize::from(local)];
        let stamp = stamps.stamp(group, a.fenced);
        let first = stamps.group_first;
        let shadow = &mut self.shadows[a.buffer as usize];
        // What another work-group left in local memory is not this one's.
        let seen = |s: Side| {
            if local && s.stamp < first {
                Side::default()
            } else {
                s
            }
        };
        let at = Now {
            stamp,
            first,
            item: a.item,
            atomic: a.atomic,
            value,
            site: a.site,
        };
        let mut clash = None;
        let mut byte = a.offset;
        let end = a.offset + u64::from(a.bytes);
        while byte < end {
            // The cells of the access's bytes on this page, looked up once.
            let cells = shadow.cells(byte, end);
            byte += cells.len() as u64;
            for cell in cells {
                visit(cell, &at, a.kind, &seen, &mut clash);
            }
        }
        if let Some((how, other, across)) = clash {
            self.note(group, a, how, other, local, across);
        }
    }

    fn note(
        &mut self,
        group: u64,
        a: &GlobalAccess,
        how: Conflict,
        other: Side,
        local: bool,
        across: bool,
    ) {
        let stamps = &self.stamps[usize::from(local)];
        let stamp = stamps.groups.len() as u32;
        let first = stamps.group_first;
        // The side holds the access it conflicts with when that is another
        // work-item's in this phase, or another work-group's; otherwise all
        // it knows is that several work-items (`MANY`) or another group
        // (`GROUPS_*`) were there.
        let within = !across && other.stamp == stamp && other.who & ITEM != a.item;
        let before = across && other.stamp < first;
        // Several work-items of this phase, the one named this one itself.
        let like = (!across && !within && other.stamp == stamp).then_some(other.site);
        let access = (within || before).then(|| Raced {
            site: other.site,
            group: stamps.groups[other.stamp as usize - 1],
            item: other.who & ITEM,
        });
        // What the named access did, or where none is named, the others.
        let atomic = match access {
            Some(_) => NAMED_ATOMIC,
            None => ATOMIC,
        };
        let did = match how {
            Conflict::WriteAfterRead if other.who & atomic != 0 => "atomically read",
            Conflict::WriteAfterRead => "read",
            _ if other.who & atomic != 0 => "atomically updated",
            _ => "wrote",
        };
        let key = (
            a.site,
            access.map(|o| o.site),
            u32::from(a.buffer),
            how,
            across,
        );
        self.found
            .entry(key)
            .and_modify(|(f, _)| f.count += 1)
            .or_insert((
                Origin::of(self.seen, group, a),
                Counterpart { access, like, did },
            ));
    }

    /// What was found, in site order.
    pub(super) fn found(self) -> Vec<Found> {
        let labels = self.labels;
        self.found
            .into_iter()
            .map(|((site, _, buffer, _, across), (first, other))| Found {
                what: if across {
                    "data race across work-groups".into()
                } else {
                    "data race within a work-group".into()
                },
                buffer: labels.get(buffer as usize).cloned().unwrap_or_default(),
                site,
                first,
                other: Some(other),
            })
            .collect()
    }
}

/// Checks one byte's cell against the access `at` (the first clash found
/// is kept) and joins the access to it.
#[inline]
fn visit(
    cell: &mut Cell,
    at: &Now,
    kind: AccessKind,
    seen: &impl Fn(Side) -> Side,
    clash: &mut Option<(Conflict, Side, bool)>,
) {
    let (write, read) = (seen(cell.write), seen(cell.read));
    if clash.is_none() {
        // Two plain stores of the same value leave the same bytes, whichever
        // comes last.
        let same = kind.writes() && at.value != 0 && at.value == cell.value;
        let how = match kind.writes() {
            true => Conflict::WriteAfterWrite,
            false => Conflict::ReadAfterWrite,
        };
        *clash = match at.races(write) {
            Some(across) if !(same && write.who & ATOMIC == 0) => Some((how, write, across)),
            _ if kind.writes() => at
                .races(read)
                .map(|across| (Conflict::WriteAfterRead, read, across)),
            _ => None,
        };
    }
    // A read-modify-write is a write that conflicts with reads.
    if kind.writes() {
        cell.write = at.mark(write);
        cell.value = at.value;
    } else {
        cell.read = at.mark(read);
    }
}

/// The access being checked, as the cells see it.
struct Now {
    stamp: u32,
    first: u32,
    item: u32,
    atomic: bool,
    /// What a plain store stores (see `Cell::value`).
    value: u32,
    site: u32,
}

impl Now {
    /// Whether an earlier side conflicts with this access (the caller has
    /// made sure one of them writes), and if so whether across work-groups:
    /// within this phase first, the more telling.
    #[inline]
    fn races(&self, side: Side) -> Option<bool> {
        if side.stamp == 0 {
            return None;
        }
        let both_atomic = self.atomic && side.who & ATOMIC != 0;
        let this_phase =
            side.stamp == self.stamp && (side.who & MANY != 0 || side.who & ITEM != self.item);
        if this_phase && !both_atomic {
            return Some(false);
        }
        let other_group = side.stamp < self.first;
        if other_group && !(both_atomic && side.who & PLAIN_BEFORE == 0) {
            return Some(true);
        }
        let forgotten =
            side.who & GROUPS_PLAIN != 0 || (side.who & GROUPS_ATOMIC != 0 && !self.atomic);
        forgotten.then_some(true)
    }

    /// The side after this access joins it: the phase's set of accesses
    /// grows, an earlier phase's is replaced.
    #[inline]
    fn mark(&self, before: Side) -> Side {
        let same = before.stamp == self.stamp;
        let other_item = same && before.who & ITEM != self.item;
        let many = if same && (other_item || before.who & MANY != 0) {
            MANY
        } else {
            0
        };
        let atomic = if self.atomic && (!same || before.who & ATOMIC != 0) {
            ATOMIC
        } else {
            0
        };
        let forgotten = match before.stamp {
            0 => 0,
            s if s >= self.first => 0,
            _ if before.who & ATOMIC != 0 && before.who & PLAIN_BEFORE == 0 => GROUPS_ATOMIC,
            _ => GROUPS_PLAIN,
        };
        // This group's plain accesses of earlier phases, kept for the others.
        let plain_before = match before.stamp {
            0 => 0,
            s if s < self.first => 0,
            s if s != self.stamp && before.who & ATOMIC == 0 => PLAIN_BEFORE,
            _ => before.who & PLAIN_BEFORE,
        };
        let groups = before.who & (GROUPS_PLAIN | GROUPS_ATOMIC) | forgotten;
        // The phase's first other work-item stays the one a report names.
        let (named, site) = if other_item {
            (before.who & (ITEM | NAMED_ATOMIC), before.site)
        } else if self.atomic {
            (self.item | NAMED_ATOMIC, self.site)
        } else {
            (self.item, self.site)
        };
        Side {
            stamp: self.stamp,
            who: named | many | atomic | groups | plain_before,
            site,
        }
    }
}

impl AccessSink for RaceChecker {
    fn buffers(&mut self, buffers: &[TraceBuffer]) {
        self.labels = super::labels(buffers);
        self.shadows = buffers
            .iter()
            .map(|b| Shadow {
                pages: Vec::new(),
                local: b.space == "__local",
                unwatched: b.read_only,
            })
            .collect();
    }

    fn wants_local(&self) -> bool {
        true
    }

    fn compares_stores(&self) -> bool {
        true
    }

    fn stored(&mut self, fingerprints: &[u64]) {
        self.stored.clear();
        self.stored.extend_from_slice(fingerprints);
    }

    fn work_group(&mut self, group: u64, accesses: &[GlobalAccess]) {
        let stored = std::mem::take(&mut self.stored);
        for (k, a) in accesses.iter().enumerate() {
            self.seen += 1;
            debug_assert!(a.kind != AccessKind::Atomic || a.atomic);
            self.check(group, a, stored.get(k).copied().unwrap_or(0));
        }
        self.stored = stored;
        self.stored.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(space: &'static str) -> TraceBuffer {
        TraceBuffer { label: "b".into(), space, bytes: 1024, read_only: false }
    }

    /// An access of 4 bytes at `offset` by local work-item `item`.
    fn access(item: u32, offset: u64, kind: AccessKind, phase: u16) -> GlobalAccess {
        GlobalAccess {
            offset,
            buffer: 0,
            bytes: 4,
            site: item,
            dispatch: 0,
            item,
            atomic: kind == AccessKind::Atomic,
            kind,
            phase,
            fenced: phase,
            lanes: 1,
            contiguous: false,
            runs: 1,
            run_step: 0,
        }
    }

    /// The races found in `groups`' accesses to one buffer in `space`:
    /// (site, how, across).
    fn races(space: &'static str, groups: &[Vec<GlobalAccess>]) -> Vec<(u32, Conflict, bool)> {
        let mut checker = RaceChecker::default();
        checker.buffers(&[buffer(space)]);
        for (g, accesses) in groups.iter().enumerate() {
            checker.work_group(g as u64, accesses);
        }
        checker
            .found
            .keys()
            .map(|&(site, _, _, how, across)| (site, how, across))
            .collect()
    }

    use AccessKind::{Atomic, Load, Store};

    #[test]
    fn a_barrier_between_orders_the_accesses() {
        let phases = vec![access(0, 4, Store, 0), access(1, 4, Load, 1)];
        assert_eq!(races("__local", &[phases]), []);
        let together = vec![access(0, 4, Store, 0), access(1, 4, Load, 0)];
        assert_eq!(
            races("__local", &[together]),
            [(1, Conflict::ReadAfterWrite, false)]
        );
    }

    #[test]
    fn a_work_item_may_reuse_its_own_bytes() {
        let own = vec![
            access(0, 0, Load, 0),
            access(0, 0, Store, 0),
            access(1, 4, Load, 0),
            access(1, 4, Store, 0),
        ];
        assert_eq!(races("__global", &[own]), []);
    }

    #[test]
    fn atomics_race_only_with_plain_accesses() {
        let atomics = vec![access(0, 0, Atomic, 0), access(1, 0, Atomic, 0)];
        assert_eq!(races("__global", &[atomics.clone(), atomics]), []);
        let mixed = vec![access(0, 0, Atomic, 0), access(1, 0, Load, 0)];
        assert_eq!(
            races("__global", &[mixed]),
            [(1, Conflict::ReadAfterWrite, false)]
        );
    }

    #[test]
    fn work_groups_never_order_global_accesses_but_own_their_local_memory() {
        let write = vec![access(0, 8, Store, 0)];
        let read = vec![access(3, 8, Load, 5)];
        assert_eq!(
            races("__global", &[write.clone(), read.clone()]),
            [(3, Conflict::ReadAfterWrite, true)]
        );
        assert_eq!(races("__local", &[write, read]), []);
        // A read by one group, a write by a later one: the read is
        // remembered however many groups read since.
        let reads: Vec<_> = (0..4).map(|_| vec![access(2, 0, Load, 0)]).collect();
        let mut groups = reads;
        groups.push(vec![access(2, 0, Load, 0), access(2, 0, Store, 0)]);
        assert_eq!(
            races("__global", &groups),
            [(2, Conflict::WriteAfterRead, true)]
        );
    }

    #[test]
    fn a_barrier_that_fences_the_other_memory_orders_nothing_here() {
        // Work-item 0 writes global bytes and local ones; a barrier that
        // fences local memory alone (phase 1, global fence count still 0);
        // work-item 1 reads both.
        let mut checker = RaceChecker::default();
        checker.buffers(&[buffer("__global"), buffer("__local")]);
        let at = |item, buffer, kind, phase, fenced| GlobalAccess {
            buffer,
            phase,
            fenced,
            ..access(item, 0, kind, 0)
        };
        let accesses = [
            at(0, 0, Store, 0, 0),
            at(0, 1, Store, 0, 0),
            at(1, 1, Load, 1, 1),
            at(1, 0, Load, 1, 0),
        ];
        checker.work_group(0, &accesses);
        let found: Vec<_> = checker
            .found
            .keys()
            .map(|&(site, _, b, how, _)| (site, b, how))
            .collect();
        assert_eq!(found, [(1, 0, Conflict::ReadAfterWrite)]);
    }

    #[test]
    fn a_plain_write_before_a_barrier_races_with_other_groups_atomics() {
        // Work-item 0 resets the counter, the group passes a barrier, and
        // every work-item of both groups increments it atomically: each of
        // the second group's atomics races with the first group's reset.
        let first = vec![
            access(0, 0, Store, 0),
            access(0, 0, Atomic, 1),
            access(1, 0, Atomic, 1),
        ];
        let second = vec![access(4, 0, Atomic, 0), access(5, 0, Atomic, 0)];
        assert_eq!(
            races("__global", &[first.clone(), second]),
            [
                (4, Conflict::WriteAfterWrite, true),
                (5, Conflict::WriteAfterWrite, true)
            ]
        );
        // Without the reset, atomics alone.
        let atomics = first[1..].to_vec();
        assert_eq!(races("__global", &[atomics.clone(), atomics]), []);
    }

    #[test]
    fn stores_of_one_value_do_not_race_stores_of_two_do() {
        // Work-items 0 and 1 of one group and 4 of the next store to one
        // word what the fingerprints say (0: not known).
        let stores = |fingerprints: [u64; 3]| {
            let mut checker = RaceChecker::default();
            checker.buffers(&[buffer("__global")]);
            checker.stored(&fingerprints[..2]);
            checker.work_group(0, &[access(0, 0, Store, 0), access(1, 0, Store, 0)]);
            checker.stored(&fingerprints[2..]);
            checker.work_group(1, &[access(4, 0, Store, 0)]);
            checker
                .found
                .keys()
                .map(|&(site, _, _, how, across)| (site, how, across))
                .collect::<Vec<_>>()
        };
        assert_eq!(stores([7, 7, 7]), []);
        assert_eq!(stores([7, 8, 8]), [(1, Conflict::WriteAfterWrite, false)]);
        assert_eq!(stores([7, 7, 8]), [(4, Conflict::WriteAfterWrite, true)]);
        assert_eq!(stores([7, 7, 0]), [(4, Conflict::WriteAfterWrite, true)]);
        // A read of what another work-item stored races whatever the value.
        let mut checker = RaceChecker::default();
        checker.buffers(&[buffer("__global")]);
        checker.stored(&[7, 0]);
        checker.work_group(0, &[access(0, 0, Store, 0), access(1, 0, Load, 0)]);
        assert_eq!(checker.found.len(), 1);
    }

    #[test]
    fn a_buffer_the_kernel_only_reads_is_not_watched() {
        let mut checker = RaceChecker::default();
        checker.buffers(&[TraceBuffer { read_only: true, ..buffer("__global") }]);
        checker.work_group(0, &[access(0, 0, Load, 0), access(1, 0, Load, 0)]);
        assert!(checker.shadows[0].pages.is_empty());
    }
}
