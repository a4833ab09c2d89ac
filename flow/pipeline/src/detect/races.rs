//! `races`: two accesses to the same bytes by different work-items, at least
//! one of them a write and not both atomic, with nothing to order them.
//! Within a work-group that means no barrier between them (in `__local` or
//! `__global` memory); across work-groups, in `__global` memory, it means
//! any time at all: work-groups cannot wait for each other within a launch.
//!
//! Shadow memory: every byte a work-group touches has a cell that remembers
//! its last write and its latest reads: who, where, and when. "When" is a
//! stamp, one per phase of a work-group (the stretch between two barriers),
//! handed out in stream order. Work-groups come in order, so a stamp says
//! at once whether an earlier access was made in this phase (the stamp now),
//! in an earlier phase of this work-group (at least the group's first), or
//! by another work-group (before it). Cells come in pages made as they are
//! first touched: 24 bytes per byte touched, in buffers the kernel writes
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
/// The work-item's linear id in its work-group.
const ITEM: u32 = NAMED_ATOMIC - 1;

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

/// The race checker.
#[derive(Debug, Default)]
pub struct RaceChecker {
    shadows: Vec<Shadow>,
    labels: Vec<String>,
    /// The work-group of each stamp (at `stamp - 1`).
    groups: Vec<u64>,
    /// The phase being stamped, and the first stamp of its work-group.
    phase: Option<(u64, u16)>,
    group_first: u32,
    found: BTreeMap<Key, (Origin, Counterpart)>,
    /// Accesses seen.
    seen: u64,
}

impl RaceChecker {
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

    fn check(&mut self, group: u64, a: &GlobalAccess) {
        let Some(shadow) = self.shadows.get_mut(a.buffer as usize) else {
            return;
        };
        if shadow.unwatched {
            if !a.kind.writes() {
                return;
            }
            shadow.unwatched = false;
        }
        let stamp = self.stamp(group, a.phase);
        let first = self.group_first;
        let shadow = &mut self.shadows[a.buffer as usize];
        let local = shadow.local;
        // What another work-group left in local memory is not this one's.
        let seen = |s: Side| {
            if local && s.stamp < first {
                Side::default()
            } else {
                s
            }
        };
        let at = Now { stamp, first, item: a.item, atomic: a.atomic, site: a.site };
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
        if let Some((how, other)) = clash {
            self.note(group, a, how, other);
        }
    }

    fn note(&mut self, group: u64, a: &GlobalAccess, how: Conflict, other: Side) {
        let stamp = self.groups.len() as u32;
        let first = self.group_first;
        // The side holds the access it conflicts with when that is another
        // work-item's in this phase, or another work-group's; otherwise all
        // it knows is that several work-items (`MANY`) or another group
        // (`GROUPS_*`) were there.
        let within = other.stamp == stamp && other.who & ITEM != a.item;
        let before = other.stamp < first;
        let across = before || (!within && other.who & MANY == 0);
        let access = (within || before).then(|| Raced {
            site: other.site,
            group: self.groups[other.stamp as usize - 1],
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
            .or_insert((Origin::of(self.seen, group, a), Counterpart { access, did }));
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
    clash: &mut Option<(Conflict, Side)>,
) {
    let (write, read) = (seen(cell.write), seen(cell.read));
    if clash.is_none() {
        *clash = if at.races(write) {
            let how = if kind.writes() {
                Conflict::WriteAfterWrite
            } else {
                Conflict::ReadAfterWrite
            };
            Some((how, write))
        } else if kind.writes() && at.races(read) {
            Some((Conflict::WriteAfterRead, read))
        } else {
            None
        };
    }
    // A read-modify-write is a write that conflicts with reads.
    if kind.writes() {
        cell.write = at.mark(write);
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
    site: u32,
}

impl Now {
    /// Whether an earlier side conflicts with this access (the caller has
    /// made sure one of them writes).
    #[inline]
    fn races(&self, side: Side) -> bool {
        if side.stamp == 0 {
            return false;
        }
        if side.who & GROUPS_PLAIN != 0 || (side.who & GROUPS_ATOMIC != 0 && !self.atomic) {
            return true;
        }
        if self.atomic && side.who & ATOMIC != 0 {
            return false;
        }
        side.stamp < self.first
            || (side.stamp == self.stamp && (side.who & MANY != 0 || side.who & ITEM != self.item))
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
            _ if before.who & ATOMIC != 0 => GROUPS_ATOMIC,
            _ => GROUPS_PLAIN,
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
        Side { stamp: self.stamp, who: named | many | atomic | groups, site }
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

    fn work_group(&mut self, group: u64, accesses: &[GlobalAccess]) {
        for a in accesses {
            self.seen += 1;
            debug_assert!(a.kind != AccessKind::Atomic || a.atomic);
            self.check(group, a);
        }
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
    fn a_buffer_the_kernel_only_reads_is_not_watched() {
        let mut checker = RaceChecker::default();
        checker.buffers(&[TraceBuffer { read_only: true, ..buffer("__global") }]);
        checker.work_group(0, &[access(0, 0, Load, 0), access(1, 0, Load, 0)]);
        assert!(checker.shadows[0].pages.is_empty());
    }
}
