//! DRAM traffic of an access stream through a fully associative LRU cache,
//! at every cache size at once.
//!
//! An access to a line hits an LRU cache of C lines exactly when fewer than
//! C other lines were touched since the line's previous access (its *stack
//! distance*, Mattson et al. 1970). One pass that records each access's
//! distance therefore answers for every C. Each access hands out the next
//! stamp, and only each line's latest stamp stands: the distance is the
//! number of standing stamps after the line's own, i.e. the stamps handed
//! out since less those superseded since. The superseded ones are a set
//! (a bit each, a Fenwick tree over their words), so an access walks the
//! tree twice: once to count, once to supersede the line's old stamp (a
//! set of the standing stamps took a third walk, to add the new one).
//! Stamps are renumbered when they run out, so the tree stays about twice
//! the number of lines touched, however long the stream.
//!
//! The cache writes back and allocates on a store miss without reading the
//! line (as GPU last-level caches do): a load miss reads a line from DRAM;
//! a dirty line is written to DRAM when it is evicted, or when the kernel
//! ends. A line is dirty at its eviction exactly when every access since
//! its last store hit, i.e. when C exceeds the largest distance among those
//! accesses; so each eviction is a write-back for a range of C, recorded
//! as a difference array.
//!
//! A store that misses (with no load of the line in the same access) is
//! counted apart: a CPU's cache reads such a line before the store writes
//! part of it, where a line a load brought in is written in place.
//!
//! At cache sizes chosen before the run (*probes*) the pass also says which
//! instruction the traffic comes from: a load miss belongs to the load's
//! site, a write-back to the site of the store that last dirtied the line.
//!
//! A long stream is followed on a sample of its lines (spatial sampling,
//! Waldspurger et al., "Efficient MRC Construction with SHARDS", 2015):
//! after the first [`EXACT_TOUCHES`] line touches, only lines whose hash
//! falls below a threshold are followed, 1 in `2^k`, and the threshold
//! halves each time the touches seen double. Among followed lines a stack
//! distance `d` estimates `d * 2^k` lines, and each followed access stands
//! for `2^k`. A line the threshold leaves behind drops out of the pass;
//! the lines that stay stand for it from then on. The rate never falls so
//! low that the smallest probed cache holds fewer than [`RESOLVED_LINES`]
//! followed lines, and [`LruCurve::resolved_lines`] says from which size
//! the curve is worth reading. Every line's first touch, and whether it
//! was ever stored, is kept whether followed or not: the traffic of a
//! cache that holds every line stays exact, and the estimates at other
//! sizes count the first touches exactly too. Per-site traffic is the
//! followed lines' scaled (it need not add up to the total exactly).

use crate::coalescing::PAGE_BYTES;
use crate::fenwick::BitCounts;
use crate::visits::{PageVisits, ShortVisits};
use clflow_counts::access::{GlobalAccess, LineTouch};
use serde::{Deserialize, Serialize};

/// Line touches followed in full before the pass samples.
pub const EXACT_TOUCHES: u64 = 1 << 22;

/// A pass told to sample early ([`LruSimulator::sample_now`]) halves its
/// rate first after this share of the exact limit: 262,144 touches.
pub const EARLY_HALVING: u64 = 16;

/// The fewest followed lines the smallest probed cache may hold: the
/// rate stops halving there. A distance of `n` followed lines estimates
/// the true one within about `1/sqrt(n)`, so that a cache's traffic is
/// off where many reuses lie that close to its size (a sweep over as many
/// lines as it holds): 4,096 lines, 1.6 %.
pub const RESOLVED_LINES: u64 = 4096;

/// The fewest followed lines a cache size of the curve holds before its
/// figure is shown (`LruCurve::resolved_lines`): within about 6 %.
const SHOWN_LINES: u64 = 256;

/// How many times the lines a work-group touches a cache must hold before
/// the order of the group's accesses may change (`LruCurve::reordered`):
/// only reuses within that many lines of its size can go from hit to miss.
pub const REORDER_MARGIN: u64 = 16;

/// The highest sampling shift: 1 line in 65,536.
const MAX_SHIFT: u32 = 16;

/// A line's mark once it was touched.
const TOUCHED: u8 = 1;
/// A line's mark once it was stored to.
const STORED: u8 = 2;

/// Counts over every line, followed or not.
#[derive(Debug, Default, Clone, Copy)]
struct FirstTouches {
    /// Lines whose first access loaded (or was atomic).
    loads: u64,
    /// Lines whose first access stored without loading.
    stores: u64,
    /// Lines touched.
    lines: u64,
}

/// Not stored to since the start.
const NEVER_STORED: i32 = i32::MIN;
/// No stamp yet: the line was never touched.
const UNTOUCHED: u32 = 0;

#[derive(Debug, Clone, Copy)]
struct LineState {
    /// The line's latest stamp, or `UNTOUCHED`.
    stamp: u32,
    /// `NEVER_STORED`; -1 when the latest access stored; else the largest
    /// (estimated) distance of the accesses since the latest store.
    since_store: i32,
}

/// Feeds accesses, line by line, through the stack-distance pass.
#[derive(Debug)]
pub struct LruSimulator {
    line_shift: u32,
    /// Where each buffer's lines start in `lines`.
    first_line: Vec<u64>,
    lines: Vec<LineState>,
    /// The stamps superseded by a later access to their line.
    superseded: BitCounts,
    /// How many there are.
    superseded_count: u32,
    /// The line of each stamp still set (`u32::MAX` where cleared).
    owner: Vec<u32>,
    /// The next stamp to hand out.
    now: u32,
    /// Followed lines touched so far: the standing stamps.
    standing: u32,
    /// Line touches seen, followed or not.
    seen: u64,
    /// Every line's [`TOUCHED`] and [`STORED`] marks, kept for all lines
    /// however few the pass follows: the ends of the curve stay exact.
    marks: Vec<u8>,
    /// The exact counts those marks give.
    exact: FirstTouches,
    /// The rate next halves once `seen` passes this.
    next_halving: u64,
    /// The line touches followed whole, where the pass went on to sample.
    followed_whole: Option<u64>,
    /// Lines followed: 1 in `2^shift`, by their hash ([`follows`]).
    shift: u32,
    /// The highest `shift` the probes allow.
    max_shift: u32,
    /// The line accessed last: an access to it again has distance 0 and
    /// moves nothing.
    last_line: u32,
    /// Loads by (estimated) stack distance, each weighted by the lines it
    /// stands for; likewise below.
    load_distances: Vec<u64>,
    /// Stores (that do not also load) by stack distance.
    store_distances: Vec<u64>,
    /// Write-backs: +weight where a range of cache sizes starts, -weight
    /// after it ends.
    writeback_delta: Vec<i64>,
    /// Per-site traffic at chosen cache sizes (none unless asked for).
    probes: Vec<Probe>,
    /// The site of each line's latest store (kept only for probes).
    store_site: Vec<u32>,
    /// How lines' first touches meet their pages (every line, followed or
    /// not).
    visits: PageVisits,
}

/// Lines read and written back per access site at one cache size.
#[derive(Debug)]
struct Probe {
    lines: u64,
    /// Lines read and written back, indexed by site (a vector: a map's
    /// lookup on every access cost the pass a tenth of its time).
    by_site: Vec<(u64, u64)>,
}

impl Probe {
    fn site(&mut self, site: u32) -> &mut (u64, u64) {
        let at = site as usize;
        if at >= self.by_site.len() {
            self.by_site.resize(at + 1, (0, 0));
        }
        &mut self.by_site[at]
    }
}

impl LruSimulator {
    /// A simulator for buffers of `buffer_bytes` bytes and lines of
    /// `line_bytes` (a power of two).
    pub fn new(line_bytes: u64, buffer_bytes: &[u64]) -> LruSimulator {
        Self::with_stamps(line_bytes, buffer_bytes, 1 << 16, EXACT_TOUCHES)
    }

    /// A simulator that starts with room for `stamps` stamps and samples
    /// after `exact_touches` line touches.
    fn with_stamps(
        line_bytes: u64,
        buffer_bytes: &[u64],
        stamps: u32,
        exact_touches: u64,
    ) -> LruSimulator {
        assert!(line_bytes.is_power_of_two(), "line size {line_bytes}");
        let line_shift = line_bytes.trailing_zeros();
        // Each buffer starts on a page of its own, as a device allocates
        // large ones: a page's lines are one buffer's.
        let page_lines = (PAGE_BYTES / line_bytes).max(1);
        let mut first_line = Vec::with_capacity(buffer_bytes.len() + 1);
        let mut total = 0u64;
        for bytes in buffer_bytes {
            first_line.push(total);
            total = (total + bytes.div_ceil(line_bytes)).next_multiple_of(page_lines);
        }
        first_line.push(total);
        let state = LineState { stamp: UNTOUCHED, since_store: NEVER_STORED };
        LruSimulator {
            line_shift,
            first_line,
            lines: vec![state; total as usize],
            superseded: BitCounts::new(stamps as usize),
            superseded_count: 0,
            owner: vec![u32::MAX; stamps as usize + 1],
            now: 1,
            standing: 0,
            seen: 0,
            marks: vec![0; total as usize],
            exact: FirstTouches::default(),
            next_halving: exact_touches,
            followed_whole: None,
            shift: 0,
            max_shift: MAX_SHIFT,
            last_line: u32::MAX,
            load_distances: Vec::new(),
            store_distances: Vec::new(),
            writeback_delta: Vec::new(),
            probes: Vec::new(),
            store_site: Vec::new(),
            visits: PageVisits::new(total, line_bytes, PAGE_BYTES),
        }
    }

    /// Also tells, at each of these cache sizes (bytes), which site the
    /// DRAM traffic comes from ([`LruCurve::by_site`]), and keeps the
    /// sample fine enough to resolve them ([`LruSimulator::resolving`]).
    pub fn probing(mut self, cache_bytes: &[u64]) -> Self {
        for &bytes in cache_bytes {
            let lines = bytes >> self.line_shift;
            if !self.probes.iter().any(|p| p.lines == lines) {
                self.probes.push(Probe { lines, by_site: Vec::new() });
            }
        }
        self = self.resolving(cache_bytes);
        if !self.probes.is_empty() {
            self.store_site = vec![u32::MAX; self.lines.len()];
        }
        self
    }

    /// Keeps the sample fine enough to resolve caches of these sizes
    /// (bytes): each holds [`RESOLVED_LINES`] followed lines or more.
    pub fn resolving(mut self, cache_bytes: &[u64]) -> Self {
        self.max_shift = self.max_shift.min(max_shift(self.line_shift, cache_bytes));
        self
    }

    pub fn line_bytes(&self) -> u64 {
        1 << self.line_shift
    }

    /// Samples after `touches` line touches rather than [`EXACT_TOUCHES`].
    pub fn sampling_after(mut self, touches: u64) -> Self {
        self.next_halving = touches;
        self
    }

    /// Samples from the next line touch on, however few came so far (a
    /// run that will be long: see `TrafficAnalysis`), but halves the rate
    /// first no sooner than [`EARLY_HALVING`] of the way to the exact
    /// limit: the halvings that follow each double the touches seen, so an
    /// earlier first one would leave the curve's small caches unresolved.
    pub fn sample_now(&mut self) {
        let first = self.seen.max(self.next_halving / EARLY_HALVING);
        self.next_halving = self.next_halving.min(first);
    }

    /// One access of `bytes` bytes at `offset` in buffer `buffer`; every
    /// line it spans is accessed in turn. Accesses outside the buffers
    /// (which the interpreter never makes) are ignored.
    pub fn access(
        &mut self,
        buffer: u32,
        offset: u64,
        bytes: u32,
        (reads, writes): (bool, bool),
        site: u32,
    ) {
        let b = buffer as usize;
        if bytes == 0 || b + 1 >= self.first_line.len() {
            return;
        }
        let (base, end) = (self.first_line[b], self.first_line[b + 1]);
        let first = base + (offset >> self.line_shift);
        let last = base + ((offset + bytes as u64 - 1) >> self.line_shift);
        for line in first..=last.min(end.saturating_sub(1)) {
            self.line(line, reads, writes, site);
        }
    }

    /// A work-group's accesses in the order they were made (a record's,
    /// see [`GlobalAccess::lanes`] and [`GlobalAccess::runs`], each
    /// work-item's in turn), as
    /// [`LruSimulator::access`] takes each. A row of work-items reading or
    /// writing one line (a broadcast, a unit-stride dispatch) touches it
    /// again and again with nothing between: such runs are taken together
    /// (`LruSimulator::repeat`).
    pub fn accesses(&mut self, accesses: &[GlobalAccess]) {
        let mut run = Repeats::default();
        for record in accesses {
            let kind = (record.kind.reads(), record.kind.writes());
            let b = record.buffer as usize;
            if record.bytes == 0 || b + 1 >= self.first_line.len() {
                continue;
            }
            let (lanes, bytes) = (u64::from(record.lanes), u64::from(record.bytes));
            let shift = self.line_shift;
            for one in record.each_run() {
                let first = one.offset;
                if !one.contiguous {
                    // Every work-item accesses the first one's bytes.
                    self.accessed(&mut run, record, first, lanes, kind);
                } else if one.each_in_one_line(shift) {
                    // The work-items in each line, a line at a time.
                    let (mut offset, mut k) = (first, 0);
                    while k < lanes {
                        let next_line = ((offset >> shift) + 1) << shift;
                        let here = ((next_line - offset) >> bytes.trailing_zeros()).min(lanes - k);
                        self.accessed(&mut run, record, offset, here, kind);
                        offset += here * bytes;
                        k += here;
                    }
                } else {
                    for k in 0..lanes {
                        self.accessed(&mut run, record, first + k * bytes, 1, kind);
                    }
                }
            }
        }
        self.repeat_run(&mut run);
    }

    /// `times` accesses of `record`'s bytes at `offset`, one after another,
    /// after the touches `run` holds back.
    #[inline]
    fn accessed(
        &mut self,
        run: &mut Repeats,
        record: &GlobalAccess,
        offset: u64,
        times: u64,
        (reads, writes): (bool, bool),
    ) {
        let b = record.buffer as usize;
        let first = offset >> self.line_shift;
        let last = (offset + u64::from(record.bytes) - 1) >> self.line_shift;
        let line = self.first_line[b] + first;
        if first == last && line < self.first_line[b + 1] {
            let touch = (line, (reads, writes), record.site);
            if run.touch == Some(touch) {
                run.again += times;
                return;
            }
            self.repeat_run(run);
            run.touch = Some(touch);
            self.line(line, reads, writes, record.site);
            run.again = times - 1;
            return;
        }
        self.repeat_run(run);
        for _ in 0..times {
            self.access(b as u32, offset, record.bytes, (reads, writes), record.site);
        }
    }

    /// The touches `run` held back, as repeats of its line.
    fn repeat_run(&mut self, run: &mut Repeats) {
        if let Some((line, (reads, writes), site)) = run.touch.take() {
            self.repeat(line, reads, writes, site, std::mem::take(&mut run.again));
        }
    }

    /// `times` more touches of `line`, the line touched last: each a hit at
    /// distance 0 in every cache, taken together where no halving of the
    /// rate falls among them.
    fn repeat(&mut self, line: u64, reads: bool, writes: bool, site: u32, times: u64) {
        if times == 0 {
            return;
        }
        let bulk = self.seen + times <= self.next_halving
            && self.probes.iter().all(|p| p.lines > 0)
            && (!follows(line, self.shift) || self.last_line == line as u32);
        if !bulk {
            for _ in 0..times {
                self.line(line, reads, writes, site);
            }
            return;
        }
        self.seen += times;
        if writes {
            self.marks[line as usize] |= STORED;
        }
        if !follows(line, self.shift) {
            return;
        }
        let weight = times << self.shift;
        if writes && !self.probes.is_empty() {
            self.store_site[line as usize] = site;
        }
        if reads {
            bump(&mut self.load_distances, 0, weight);
        } else if writes {
            bump(&mut self.store_distances, 0, weight);
        }
        let state = &mut self.lines[line as usize];
        if state.since_store != NEVER_STORED {
            state.since_store = state.since_store.max(0);
        }
        if writes {
            state.since_store = -1;
        }
    }

    /// Line touches of a compiled work-group, one work-item's after
    /// another's, each at lines of `1 << touch_shift` bytes (no larger
    /// than this simulator's): each is a touch of the line holding it.
    pub fn touches(&mut self, touches: &[LineTouch], touch_shift: u32) {
        let down = self.line_shift - touch_shift;
        for t in touches {
            let b = t.buffer() as usize;
            if b + 1 >= self.first_line.len() {
                continue;
            }
            let line = self.first_line[b] + (t.line() >> down);
            if line < self.first_line[b + 1] {
                self.line(line, t.reads(), t.writes(), t.site);
            }
        }
    }

    /// Whether a pass at lines of `line_bytes` that resolves caches of
    /// these sizes ([`LruSimulator::resolving`]) samples a long stream:
    /// not where one of them holds too few lines to follow half.
    pub fn samples(line_bytes: u64, cache_bytes: &[u64]) -> bool {
        max_shift(line_bytes.trailing_zeros(), cache_bytes) > 0
    }

    /// One touch of `line` (an index into `lines`).
    #[inline]
    fn line(&mut self, line: u64, reads: bool, writes: bool, site: u32) {
        self.seen += 1;
        if self.seen > self.next_halving {
            self.halve_rate();
        }
        let marks = &mut self.marks[line as usize];
        if *marks == 0 {
            *marks = TOUCHED;
            self.exact.lines += 1;
            self.visits.first_touch(line, site);
            if reads {
                self.exact.loads += 1;
            } else if writes {
                self.exact.stores += 1;
            }
        }
        if writes {
            *marks |= STORED;
        }
        if follows(line, self.shift) {
            self.touch(line as u32, reads, writes, site);
        }
    }

    #[inline]
    fn touch(&mut self, line: u32, reads: bool, writes: bool, site: u32) {
        let distance = if line == self.last_line {
            Some(0)
        } else {
            self.last_line = line;
            self.restamp(line).map(|d| u64::from(d) << self.shift)
        };
        let weight = 1u64 << self.shift;
        if !self.probes.is_empty() {
            self.probe(line, distance, reads, writes, site, weight);
        }
        // First touches (no distance) are counted for every line in `exact`.
        if let Some(d) = distance {
            if reads {
                bump(&mut self.load_distances, d as usize, weight);
            } else if writes {
                bump(&mut self.store_distances, d as usize, weight);
            }
        }
        let state = &mut self.lines[line as usize];
        if let Some(d) = distance {
            if state.since_store != NEVER_STORED {
                // Evicted and dirty for C in [since_store + 1, d].
                let from = (state.since_store + 1).max(1) as usize;
                if from <= d as usize {
                    add_at(&mut self.writeback_delta, from, weight as i64);
                    add_at(&mut self.writeback_delta, d as usize + 1, -(weight as i64));
                }
                state.since_store = state.since_store.max(d.min(i32::MAX as u64) as i32);
            }
        }
        if writes {
            state.since_store = -1;
        }
    }

    /// Charges this access's misses and write-backs at each probed size to
    /// their sites, before the line's state moves on.
    #[cold]
    fn probe(
        &mut self,
        line: u32,
        distance: Option<u64>,
        reads: bool,
        writes: bool,
        site: u32,
        weight: u64,
    ) {
        let since_store = self.lines[line as usize].since_store;
        let stored_by = self.store_site[line as usize];
        for probe in &mut self.probes {
            let c = probe.lines;
            let miss = distance.is_none_or(|d| d >= c);
            if reads && miss {
                probe.site(site).0 += weight;
            }
            // Evicted dirty at this size: written back by the line's store.
            if miss
                && distance.is_some()
                && since_store != NEVER_STORED
                && (since_store as i64) < c as i64
            {
                probe.site(stored_by).1 += weight;
            }
        }
        if writes {
            self.store_site[line as usize] = site;
        }
    }

    /// Gives `line` the newest stamp; returns its stack distance, `None`
    /// on its first access.
    fn restamp(&mut self, line: u32) -> Option<u32> {
        if self.now as usize >= self.owner.len() {
            self.renumber();
        }
        let old = self.lines[line as usize].stamp;
        let distance = if old == UNTOUCHED {
            self.standing += 1;
            None
        } else {
            // Standing stamps after `old` (lines touched since): those
            // handed out since, less those superseded since.
            let handed = self.now - 1 - old;
            let superseded = self.superseded_count - self.superseded.prefix(old as usize);
            self.superseded.insert(old as usize);
            self.superseded_count += 1;
            self.owner[old as usize] = u32::MAX;
            Some(handed - superseded)
        };
        let stamp = self.now;
        self.now += 1;
        self.owner[stamp as usize] = line;
        self.lines[line as usize].stamp = stamp;
        distance
    }

    /// Follows half the lines from now on (unless the probes need them
    /// all): those the new threshold leaves behind drop out, their stamps
    /// superseded, and the rest stand for them.
    #[cold]
    fn halve_rate(&mut self) {
        if self.shift == self.max_shift {
            self.next_halving = u64::MAX;
            return;
        }
        self.followed_whole.get_or_insert(self.next_halving);
        self.shift += 1;
        self.next_halving = self.next_halving.saturating_mul(2);
        for stamp in 1..self.now as usize {
            let line = self.owner[stamp];
            if line == u32::MAX || follows(u64::from(line), self.shift) {
                continue;
            }
            self.superseded.insert(stamp);
            self.superseded_count += 1;
            self.owner[stamp] = u32::MAX;
            self.standing -= 1;
            self.lines[line as usize] = LineState { stamp: UNTOUCHED, since_store: NEVER_STORED };
        }
        self.last_line = u32::MAX;
    }

    /// Gives the touched lines stamps 1.. in their order, none superseded,
    /// with room for as many new stamps again. The owners move down in place:
    /// a fresh table each time had the system zero tens of megabytes of
    /// pages a renumbering, a tenth of a long pass.
    fn renumber(&mut self) {
        let standing = self.standing as usize;
        let capacity = (2 * standing + 1024).min(u32::MAX as usize - 1);
        let mut next = 1;
        for at in 0..self.owner.len() {
            let line = self.owner[at];
            if line != u32::MAX {
                // `next` never passes `at`: nothing unread is overwritten.
                self.owner[next] = line;
                self.lines[line as usize].stamp = next as u32;
                next += 1;
            }
        }
        debug_assert_eq!(next - 1, standing);
        self.owner.truncate(next);
        self.owner.resize(capacity + 1, u32::MAX);
        self.superseded = BitCounts::new(capacity);
        self.superseded_count = 0;
        self.now = next as u32;
    }

    /// The traffic at every cache size.
    pub fn finish(mut self) -> LruCurve {
        let line_bytes = 1 << self.line_shift;
        let weight = 1u64 << self.shift;
        let mut flush_from = Vec::new();
        let mut dirty_lines = 0u64;
        for (line, state) in self.lines.iter().enumerate() {
            if state.since_store != NEVER_STORED {
                dirty_lines += weight;
                bump(
                    &mut flush_from,
                    (state.since_store + 1).max(1) as usize,
                    weight,
                );
                // Still dirty at the end where the cache outlasted the
                // accesses since its store.
                for probe in &mut self.probes {
                    if (state.since_store as i64) < probe.lines as i64 {
                        let site = self.store_site[line];
                        probe.site(site).1 += weight;
                    }
                }
            }
        }
        let sizes = self
            .load_distances
            .len()
            .max(self.store_distances.len())
            .max(self.writeback_delta.len())
            .max(flush_from.len())
            + 1;
        // load_misses[c]: loads with distance ≥ c, plus the cold ones,
        // whose number the marks know exactly (as they do the lines a
        // cache that holds every line writes back).
        let exact = self.exact;
        let load_misses = misses(&self.load_distances, exact.loads, sizes);
        let store_misses = misses(&self.store_distances, exact.stores, sizes);
        let stored = self.marks.iter().filter(|&&m| m & STORED != 0).count() as i64;
        let mut writebacks = vec![0u64; sizes + 1];
        let (mut open, mut flushed) = (0i64, 0u64);
        for (c, slot) in writebacks.iter_mut().enumerate() {
            open += self.writeback_delta.get(c).copied().unwrap_or(0);
            flushed += flush_from.get(c).copied().unwrap_or(0);
            // A sample's estimate of the dirty lines, moved to the exact number.
            *slot = (open + flushed as i64 + stored - dirty_lines as i64).max(0) as u64;
        }
        debug_assert_eq!(writebacks[sizes], stored as u64);
        let by_site = self
            .probes
            .into_iter()
            .map(|p| {
                let sites = p
                    .by_site
                    .into_iter()
                    .enumerate()
                    .filter(|(_, lines)| *lines != (0, 0))
                    .map(|(site, (read, written))| {
                        let traffic = DramTraffic {
                            read_bytes: read * line_bytes,
                            written_bytes: written * line_bytes,
                            ..DramTraffic::default()
                        };
                        (site as u32, traffic)
                    })
                    .collect();
                (p.lines * line_bytes, sites)
            })
            .collect();
        LruCurve {
            line_bytes,
            lines_touched: exact.lines,
            short_visits: self.visits.finish(),
            sample_shift: self.shift,
            followed_whole: self.followed_whole,
            reordered_lines: 1,
            load_misses,
            store_misses,
            writebacks,
            by_site,
        }
    }
}

/// Per cache size `c` (in lines, up to `sizes`): the accesses of distance
/// `c` or more, and the `cold` ones.
fn misses(distances: &[u64], cold: u64, sizes: usize) -> Vec<u64> {
    let mut misses = vec![cold; sizes + 1];
    for c in (0..sizes).rev() {
        misses[c] = misses[c + 1] + distances.get(c).copied().unwrap_or(0);
    }
    misses
}

fn bump(counts: &mut Vec<u64>, at: usize, weight: u64) {
    if counts.len() <= at {
        counts.resize(at + 1, 0);
    }
    counts[at] += weight;
}

/// The highest sampling shift at which each cache of `cache_bytes` holds
/// [`RESOLVED_LINES`] followed lines of `1 << line_shift` bytes.
fn max_shift(line_shift: u32, cache_bytes: &[u64]) -> u32 {
    let mut shift = MAX_SHIFT;
    for &bytes in cache_bytes {
        let lines = bytes >> line_shift;
        while shift > 0 && lines >> shift < RESOLVED_LINES {
            shift -= 1;
        }
    }
    shift
}

/// Whether a pass that follows 1 line in `2^shift` follows `line`: the
/// top `shift` bits of its hash are clear, so that a line left behind by
/// a higher shift is never followed again.
#[inline]
fn follows(line: u64, shift: u32) -> bool {
    shift == 0 || mix(line) >> (64 - shift) == 0
}

/// A 64-bit mixer (splitmix64's finaliser), so that lines a stride apart
/// are sampled as if at random.
#[inline]
fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn add_at(counts: &mut Vec<i64>, at: usize, amount: i64) {
    if counts.len() <= at {
        counts.resize(at + 1, 0);
    }
    counts[at] += amount;
}

/// Bytes moved between the cache and DRAM.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DramTraffic {
    /// Lines read on load misses.
    pub read_bytes: u64,
    /// Dirty lines written back, on eviction or at the kernel's end.
    pub written_bytes: u64,
    /// Lines a store missed (a store that did not also load): a CPU reads
    /// them before writing (not part of `read_bytes`, and not kept per
    /// site).
    #[serde(default)]
    pub allocated_bytes: u64,
}

impl DramTraffic {
    pub fn total(&self) -> u64 {
        self.read_bytes + self.written_bytes
    }
}

/// DRAM traffic as a function of the cache size, for one line size.
#[derive(Debug, Clone)]
pub struct LruCurve {
    line_bytes: u64,
    lines_touched: u64,
    /// The pass ended following 1 line in `2^sample_shift`.
    sample_shift: u32,
    /// The line touches it followed whole, where it went on to sample.
    followed_whole: Option<u64>,
    /// The smallest cache (lines) the order of the accesses within a
    /// work-group cannot move, where work-groups came in another order
    /// (see [`LruCurve::reordered`]).
    reordered_lines: u64,
    /// Load misses at a cache of `c` lines (the last entry holds for every
    /// larger cache).
    load_misses: Vec<u64>,
    /// Store misses (stores that do not load) likewise.
    store_misses: Vec<u64>,
    /// Write-backs at a cache of `c` lines (likewise).
    writebacks: Vec<u64>,
    /// At each probed cache size (bytes): the traffic per access site.
    by_site: Vec<(u64, Vec<(u32, DramTraffic)>)>,
    /// Per access site, the lines it first touched in short visits to
    /// their pages (`crate::visits`).
    short_visits: Vec<(u32, ShortVisits)>,
}

impl LruCurve {
    pub fn line_bytes(&self) -> u64 {
        self.line_bytes
    }

    /// Distinct lines the kernel touched (estimated where the pass
    /// sampled): a cache this large (in lines) misses only the first time.
    pub fn lines_touched(&self) -> u64 {
        self.lines_touched
    }

    /// The smallest cache (in lines) whose traffic the pass's sample
    /// resolves: 1 where it followed every line; where it sampled 1 line
    /// in `2^k`, the size that holds 64 of the lines it followed.
    pub fn resolved_lines(&self) -> u64 {
        let sampled = if self.sample_shift == 0 {
            1
        } else {
            SHOWN_LINES << self.sample_shift
        };
        sampled.max(self.reordered_lines)
    }

    /// The curve of a run whose work-groups, from some point on, came in
    /// another order within each (compiled, one work-item after another)
    /// and touched up to `footprint` lines each: a reuse distance moved by
    /// at most that, so the curve is resolved from [`REORDER_MARGIN`]
    /// times it (rounded up to a power of two, as the curve's sizes are).
    pub fn reordered(mut self, footprint: u64) -> LruCurve {
        let lines = footprint.saturating_mul(REORDER_MARGIN).max(1);
        self.reordered_lines = lines.checked_next_power_of_two().unwrap_or(lines);
        self
    }

    /// The 1 line in how many the pass followed at its end: 1 where it
    /// followed every line, and its figures are exact.
    pub fn sampled_one_in(&self) -> u64 {
        1 << self.sample_shift
    }

    /// The line touches the pass followed whole before it sampled, where
    /// it did.
    pub fn followed_whole(&self) -> Option<u64> {
        self.followed_whole.filter(|_| self.sample_shift > 0)
    }

    /// The traffic through a cache of `lines` lines.
    pub fn at_lines(&self, lines: u64) -> DramTraffic {
        let at = |v: &Vec<u64>| v[(lines.min(v.len() as u64 - 1)) as usize];
        DramTraffic {
            read_bytes: at(&self.load_misses) * self.line_bytes,
            written_bytes: at(&self.writebacks) * self.line_bytes,
            allocated_bytes: at(&self.store_misses) * self.line_bytes,
        }
    }

    /// The traffic per access site through a cache of `bytes` bytes, where
    /// the simulation probed that size (sites that moved nothing left out).
    pub fn by_site(&self, bytes: u64) -> Option<&[(u32, DramTraffic)]> {
        let lines = bytes / self.line_bytes;
        self.by_site
            .iter()
            .find(|(at, _)| at / self.line_bytes == lines)
            .map(|(_, sites)| sites.as_slice())
    }

    /// Per access site (those with any), the lines it first touched in
    /// short visits to their pages, by the visits' lengths.
    pub fn short_visits(&self) -> &[(u32, ShortVisits)] {
        &self.short_visits
    }

    /// The traffic through a cache of `bytes` bytes (whole lines).
    pub fn at_bytes(&self, bytes: u64) -> DramTraffic {
        self.at_lines(bytes / self.line_bytes)
    }

    /// The traffic of a cache that holds every line: each line read once
    /// (if it is loaded before it is stored) and written once (if stored).
    pub fn compulsory(&self) -> DramTraffic {
        self.at_lines(u64::MAX)
    }
}

/// The line touched last and its kind and site, and the touches of it
/// since, held back to be taken together.
#[derive(Debug, Default)]
struct Repeats {
    touch: Option<(u64, (bool, bool), u32)>,
    again: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_pcg::Pcg64Mcg;
    use std::collections::BTreeMap;

    /// A plain LRU write-back cache, for comparison.
    struct Naive {
        capacity: usize,
        /// (line, dirty), most recent last.
        lines: Vec<(u64, bool)>,
        read: u64,
        written: u64,
    }

    impl Naive {
        fn access(&mut self, line: u64, reads: bool, writes: bool) {
            let dirty = match self.lines.iter().position(|(l, _)| *l == line) {
                Some(i) => self.lines.remove(i).1,
                None => {
                    if reads {
                        self.read += 1;
                    }
                    if self.lines.len() == self.capacity && self.lines.remove(0).1 {
                        self.written += 1;
                    }
                    false
                }
            };
            self.lines.push((line, dirty || writes));
        }

        fn end(&mut self) -> (u64, u64) {
            let dirty = self.lines.iter().filter(|(_, d)| *d).count() as u64;
            (self.read, self.written + dirty)
        }
    }

    fn random_stream(seed: u64, len: usize, lines: u64) -> Vec<(u64, bool, bool)> {
        use rand_core::Rng;
        let mut rng = Pcg64Mcg::new(seed as u128 | 1);
        (0..len)
            .map(|_| {
                // Mostly a small hot set, sometimes a cold line, so that every
                // distance occurs.
                let hot = !rng.next_u32().is_multiple_of(4);
                let line = if hot {
                    rng.next_u64() % 8
                } else {
                    rng.next_u64() % lines
                };
                let kind = rng.next_u32() % 5;
                (line, kind != 1, kind == 1 || kind == 2)
            })
            .collect()
    }

    /// Line touches of 32-byte lines, two buffers' worth, give a 64-byte
    /// pass what the accesses behind them give it, where each touch is the
    /// access's first (a touch stands for the accesses folded into it,
    /// which hit at every size).
    #[test]
    fn line_touches_count_as_the_accesses_they_stand_for() {
        let stream = random_stream(7, 4000, 250);
        let buffers = [150 * 64, 100 * 64];
        let mut by_access = LruSimulator::with_stamps(64, &buffers, 8, EXACT_TOUCHES);
        let mut by_touch = LruSimulator::with_stamps(64, &buffers, 8, EXACT_TOUCHES);
        let mut touches = Vec::new();
        for (k, &(line, reads, writes)) in stream.iter().enumerate() {
            let (buffer, line) = if line < 150 {
                (0, line)
            } else {
                (1, line - 150)
            };
            let site = k as u32 % 5;
            by_access.access(buffer, line * 64 + 40, 8, (reads, writes), site);
            let kind = u32::from(reads) * LineTouch::READS + u32::from(writes) * LineTouch::WRITES;
            // The second half of the 64-byte line: 32-byte line 2k + 1.
            let key = LineTouch::key(buffer, 2 * line + 1);
            touches.push(LineTouch { key, site, kind });
        }
        by_touch.touches(&touches, 5);
        let (a, t) = (by_access.finish(), by_touch.finish());
        for lines in [1, 2, 5, 17, 100, 250, 1000] {
            assert_eq!(a.at_lines(lines), t.at_lines(lines), "{lines} lines");
        }
        assert_eq!(a.lines_touched(), t.lines_touched());
    }

    /// Runs of accesses to one line (a dispatch's broadcast or unit-stride
    /// row), taken together, leave the pass as taken one by one: with
    /// probes, and where the rate halves in the middle of a run.
    #[test]
    fn runs_of_one_line_count_as_their_accesses() {
        use clflow_counts::access::AccessKind;
        use rand_core::Rng;
        let mut rng = Pcg64Mcg::new(11);
        let buffers = [300 * 64, 40 * 64];
        let mut accesses = Vec::new();
        for k in 0..3000u32 {
            let buffer = (rng.next_u32() % 2) as u16;
            let lines = buffers[buffer as usize] / 64;
            let line = rng.next_u64() % lines;
            let kind = [AccessKind::Load, AccessKind::Store, AccessKind::Atomic]
                [rng.next_u32() as usize % 3];
            // Now and then an access that spans two lines, or none.
            let (offset, bytes) = match rng.next_u32() % 8 {
                0 if line + 1 < lines => (line * 64 + 60, 8),
                1 => (line * 64, 0),
                _ => (line * 64 + 4 * u64::from(rng.next_u32() % 15), 4),
            };
            for _ in 0..1 + rng.next_u32() % 20 {
                accesses.push(GlobalAccess {
                    fenced: 0,
                    offset,
                    buffer,
                    bytes,
                    site: k % 7,
                    dispatch: k,
                    item: 0,
                    kind,
                    atomic: false,
                    phase: 0,
                    lanes: 1,
                    contiguous: false,
                    runs: 1,
                    run_step: 0,
                });
            }
        }
        // Probed and exact; sampled from the 1,000th touch.
        for (probes, exact) in [(&[64, 320, 4096][..], EXACT_TOUCHES), (&[], 1000)] {
            let make = || LruSimulator::with_stamps(64, &buffers, 8, exact).probing(probes);
            let (mut together, mut one_by_one) = (make(), make());
            together.accesses(&accesses);
            for a in &accesses {
                let kind = (a.kind.reads(), a.kind.writes());
                one_by_one.access(a.buffer.into(), a.offset, a.bytes, kind, a.site);
            }
            let (t, o) = (together.finish(), one_by_one.finish());
            assert!(o.followed_whole.is_some() || !o.by_site.is_empty());
            assert_eq!(format!("{t:?}"), format!("{o:?}"));
        }
    }

    #[test]
    fn every_cache_size_matches_a_plain_lru_cache() {
        for seed in 0..6 {
            let stream = random_stream(seed, 3000, 300);
            // Few stamps, so that renumbering happens many times.
            let mut sim = LruSimulator::with_stamps(64, &[300 * 64], 4, EXACT_TOUCHES);
            for &(line, reads, writes) in &stream {
                sim.access(0, line * 64 + 8, 4, (reads, writes), 0);
            }
            let curve = sim.finish();
            for capacity in [1, 2, 3, 5, 8, 9, 17, 64, 150, 299, 300, 1000] {
                let mut naive = Naive { capacity, lines: Vec::new(), read: 0, written: 0 };
                for &(line, reads, writes) in &stream {
                    naive.access(line, reads, writes);
                }
                let (read, written) = naive.end();
                let got = curve.at_lines(capacity as u64);
                assert_eq!(
                    (got.read_bytes, got.written_bytes),
                    (read * 64, written * 64),
                    "seed {seed}, {capacity} lines"
                );
            }
        }
    }

    /// The plain cache again, charging each read miss to the reading site
    /// and each write-back to the site of the line's latest store.
    fn naive_by_site(stream: &[(u64, bool, bool)], capacity: usize) -> BTreeMap<u32, (u64, u64)> {
        let mut by_site: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
        // (line, dirty, latest store's site), most recent last.
        let mut lines: Vec<(u64, bool, u32)> = Vec::new();
        for (i, &(line, reads, writes)) in stream.iter().enumerate() {
            let site = (i % 7) as u32;
            let (dirty, stored_by) = match lines.iter().position(|(l, _, _)| *l == line) {
                Some(at) => {
                    let (_, dirty, by) = lines.remove(at);
                    (dirty, by)
                }
                None => {
                    if reads {
                        by_site.entry(site).or_default().0 += 1;
                    }
                    if lines.len() == capacity {
                        let (_, dirty, by) = lines.remove(0);
                        if dirty {
                            by_site.entry(by).or_default().1 += 1;
                        }
                    }
                    (false, u32::MAX)
                }
            };
            let stored_by = if writes { site } else { stored_by };
            lines.push((line, dirty || writes, stored_by));
        }
        for (_, dirty, by) in lines {
            if dirty {
                by_site.entry(by).or_default().1 += 1;
            }
        }
        by_site
    }

    #[test]
    fn probed_sizes_charge_each_site_as_a_plain_lru_cache_does() {
        let capacities = [1u64, 3, 8, 17, 150, 1000];
        for seed in 0..4 {
            let stream = random_stream(seed, 3000, 300);
            let probes: Vec<u64> = capacities.iter().map(|c| c * 64).collect();
            let mut sim =
                LruSimulator::with_stamps(64, &[300 * 64], 4, EXACT_TOUCHES).probing(&probes);
            for (i, &(line, reads, writes)) in stream.iter().enumerate() {
                sim.access(0, line * 64 + 8, 4, (reads, writes), (i % 7) as u32);
            }
            let curve = sim.finish();
            for capacity in capacities {
                let got: BTreeMap<u32, (u64, u64)> = curve
                    .by_site(capacity * 64)
                    .unwrap()
                    .iter()
                    .map(|(site, t)| (*site, (t.read_bytes / 64, t.written_bytes / 64)))
                    .collect();
                let want = naive_by_site(&stream, capacity as usize);
                assert_eq!(got, want, "seed {seed}, {capacity} lines");
                // The sites add up to the whole.
                let total = curve.at_lines(capacity);
                let (read, written) = got.values().fold((0, 0), |(r, w), (a, b)| (r + a, w + b));
                assert_eq!(
                    (read * 64, written * 64),
                    (total.read_bytes, total.written_bytes)
                );
            }
        }
    }

    #[test]
    fn a_stream_twice_hits_only_where_it_fits() {
        // 100 lines read twice: a cache of 100 lines misses 100 times, one
        // of 99 misses all 200 (LRU's worst case).
        let mut sim = LruSimulator::new(64, &[6400]);
        for _ in 0..2 {
            for line in 0..100 {
                sim.access(0, line * 64, 64, (true, false), 0);
            }
        }
        let curve = sim.finish();
        assert_eq!(curve.at_lines(100).read_bytes, 100 * 64);
        assert_eq!(curve.at_lines(99).read_bytes, 200 * 64);
        assert_eq!(curve.at_bytes(6400), curve.compulsory());
        assert_eq!(curve.lines_touched(), 100);
        assert_eq!(curve.compulsory().written_bytes, 0);
    }

    #[test]
    fn accesses_span_lines_and_buffers_are_kept_apart() {
        let mut sim = LruSimulator::new(64, &[100, 64]);
        // Bytes 60..68 of buffer 0 touch its lines 0 and 1; buffer 1's line
        // 0 is another line.
        sim.access(0, 60, 8, (true, false), 0);
        sim.access(1, 0, 4, (false, true), 0);
        // Line 1 of buffer 0, loaded, is written in place; buffer 1's line
        // is one a store brought in.
        sim.access(0, 64, 4, (false, true), 0);
        let curve = sim.finish();
        assert_eq!(curve.lines_touched(), 3);
        assert_eq!(
            curve.compulsory(),
            DramTraffic { read_bytes: 128, written_bytes: 128, allocated_bytes: 64 }
        );
        // A cache of one line no longer holds line 1 of buffer 0 when the
        // store comes back to it: the store brings it in again.
        assert_eq!(curve.at_lines(1).allocated_bytes, 128);
        assert_eq!(curve.at_lines(1).read_bytes, 128);
    }

    #[test]
    fn renumbering_keeps_the_order_of_lines() {
        let mut sim = LruSimulator::with_stamps(64, &[64 * 1000], 2, EXACT_TOUCHES);
        for round in 0..3 {
            for line in 0..10 {
                sim.access(0, line * 64, 4, (true, round == 2), 0);
            }
        }
        let curve = sim.finish();
        assert_eq!(curve.at_lines(10).read_bytes, 10 * 64);
        assert_eq!(curve.at_lines(9).read_bytes, 30 * 64);
        assert_eq!(curve.at_lines(10).written_bytes, 10 * 64);
    }

    /// A stream with reuse at several distances: sweeps over 3,000 lines
    /// (stores every fourth pass), a hot set of 40 lines, and loads
    /// scattered over 60,000.
    fn mixed_stream(len: usize) -> Vec<(u64, bool, bool)> {
        use rand_core::Rng;
        let mut rng = Pcg64Mcg::new(7);
        (0..len)
            .map(|i| match i % 4 {
                0 | 1 => {
                    let pass = i / 6_000;
                    ((i / 2 % 3_000) as u64 + 100_000, true, pass % 4 == 3)
                }
                2 => (rng.next_u64() % 40 + 200_000, true, false),
                _ => (rng.next_u64() % 60_000, true, false),
            })
            .collect()
    }

    fn curve_of(stream: &[(u64, bool, bool)], exact_touches: u64, probes: &[u64]) -> LruCurve {
        let mut sim =
            LruSimulator::with_stamps(64, &[300_000 * 64], 1 << 16, exact_touches).probing(probes);
        for &(line, reads, writes) in stream {
            sim.access(0, line * 64, 4, (reads, writes), 0);
        }
        sim.finish()
    }

    #[test]
    fn a_long_stream_sampled_keeps_its_curve_and_its_ends_exact() {
        let stream = mixed_stream(2_000_000);
        let exact = curve_of(&stream, u64::MAX, &[]);
        let sampled = curve_of(&stream, 100_000, &[]);
        // 2,000,000 touches from 100,000 on: the rate halved five times.
        assert_eq!(exact.sampled_one_in(), 1);
        assert_eq!(sampled.sampled_one_in(), 32);
        assert_eq!(sampled.resolved_lines(), 256 * 32);
        // A cache that holds every line: exact, as are the lines touched.
        assert_eq!(sampled.compulsory(), exact.compulsory());
        assert_eq!(sampled.lines_touched(), exact.lines_touched());
        // Away from a cliff of the curve (the sweep's at 3,000 lines and
        // more, the scattered loads' at 60,000) a few percent off.
        for lines in [8_192u64, 30_000, 70_000] {
            let (want, got) = (
                exact.at_lines(lines).total(),
                sampled.at_lines(lines).total(),
            );
            let off = (got as f64 - want as f64).abs() / want as f64;
            assert!(off < 0.05, "{lines} lines: {got} against {want}");
        }
    }

    #[test]
    fn the_smallest_probe_holds_the_rate_up() {
        let stream = mixed_stream(2_000_000);
        // 1 MiB of 64-byte lines: 16,384 lines, at least 4,096 followed.
        let curve = curve_of(&stream, 100_000, &[1 << 20]);
        assert_eq!(curve.sampled_one_in(), 4);
        // A probe at the sweep's cliff: followed whole, exact there.
        let exact = curve_of(&stream, u64::MAX, &[]);
        let curve = curve_of(&stream, 100_000, &[3_100 * 64]);
        assert_eq!(curve.sampled_one_in(), 1);
        assert_eq!(curve.at_lines(3_100), exact.at_lines(3_100));
        // A short stream is followed whole.
        let curve = curve_of(&stream[..50_000], 100_000, &[]);
        assert_eq!(curve.sampled_one_in(), 1);
        assert_eq!(curve.resolved_lines(), 1);
    }
}
