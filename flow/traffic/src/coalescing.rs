//! Whether neighbouring work-items touch neighbouring addresses.
//!
//! The accesses one instruction makes for the work-items of a batch (one
//! dispatch, see `clflow_interp::trace`) are put in work-item order, and
//! each is compared with its neighbours' (the previous and the next
//! work-item's):
//!
//! | pattern      | neighbour's address is …                                  |
//! |--------------|-----------------------------------------------------------|
//! | `contiguous` | right next to it (± the access's size): one wide access   |
//! | `uniform`    | the same: one access broadcast to all                     |
//! | `strided`    | a constant stride away, the same for the whole dispatch   |
//! | `scattered`  | anywhere else, in another buffer, or there is no neighbour|
//!
//! Either neighbour will do, in that order of preference: the first
//! work-item of a new row of a 2-D work-group rarely continues the row
//! before it in memory, but it does continue into the next work-item.
//!
//! Contiguous and uniform accesses coalesce; strided and scattered ones
//! do not. A work-item alone in its dispatch (`if (lid == 0) …`) is
//! scattered: it gets a memory transaction to itself. Each dispatch also
//! counts the distinct lines it touches, the memory transactions a GPU
//! would issue for it.
//!
//! Along the other axis, each work-item's own accesses at a site: those a
//! page or more from the work-item's access before, with no barrier
//! between (a loop that strides by the global size, as GPU code walks an
//! array, or a gather through a table that sends each step pages away),
//! are *page strides*, counted where the walk makes [`LONG_WALK`] of them
//! or more. A CPU runs such a loop one work-item after another: each
//! access lands on another page and another line, which no prefetcher
//! follows, and a long walk leaves none of them in the first-level TLB and
//! cache for the next work-item. The steps need not be equal: pyopencl's
//! `take` through indices `7919 * i % n` steps 8.9 MB back, then forward
//! by the array each 15th step, and costs what a constant stride does.
//! Across a barrier, every other work-item of the group made its accesses
//! in between. A step into the page the work-item's last access to the
//! same buffer touched (at another instruction: a register tile's loads
//! from one row) finds the page in the TLB and is no stride; the walk goes
//! on past it.
//!
//! Steps of a line or more but under a page (a loop over a work-group's
//! interval that strides by the group's size: each work-item takes one
//! element of each line) are *line strides*, counted where the walk makes
//! [`LONG_LINE_WALK`] of them or more. On a CPU each such walk passes more
//! lines than the first-level cache keeps, so the next work-item, which
//! takes the next element of the same lines, finds them further down.

use crate::stretches::Stretches;
use crate::walks::WorkItemWalks;
use clflow_counts::{AccessKind, GlobalAccess, SourceLine};
use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::RangeInclusive;

/// Accesses (or bytes) per pattern.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatternCounts {
    pub contiguous: u64,
    pub uniform: u64,
    pub strided: u64,
    pub scattered: u64,
}

impl PatternCounts {
    pub fn coalesced(&self) -> u64 {
        self.contiguous + self.uniform
    }

    pub fn uncoalesced(&self) -> u64 {
        self.strided + self.scattered
    }

    pub fn total(&self) -> u64 {
        self.coalesced() + self.uncoalesced()
    }

    /// How the counts read at a glance: the one pattern where there is one
    /// (`contiguous`), else the coalesced share and the largest uncoalesced
    /// pattern (`25% coalesced, strided`).
    pub fn describe(&self) -> String {
        let all = [
            ("contiguous", self.contiguous),
            ("uniform", self.uniform),
            ("strided", self.strided),
            ("scattered", self.scattered),
        ];
        if let Some((name, _)) = all.iter().find(|(_, n)| *n == self.total() && *n > 0) {
            return name.to_string();
        }
        let (worst, _) = all[2..]
            .iter()
            .max_by_key(|(_, n)| *n)
            .copied()
            .unwrap_or_default();
        let share = self.coalesced() as f64 / self.total().max(1) as f64;
        format!(
            "{} % coalesced, {worst}",
            clflow_core::numbers::format_number(100.0 * share)
        )
    }

    fn add(&mut self, pattern: Pattern, amount: u64) {
        *match pattern {
            Pattern::Contiguous => &mut self.contiguous,
            Pattern::Uniform => &mut self.uniform,
            Pattern::Strided => &mut self.strided,
            Pattern::Scattered => &mut self.scattered,
        } += amount;
    }

    pub fn merge(&mut self, other: &PatternCounts) {
        self.contiguous += other.contiguous;
        self.uniform += other.uniform;
        self.strided += other.strided;
        self.scattered += other.scattered;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pattern {
    Contiguous,
    Uniform,
    Strided,
    Scattered,
}

/// One instruction's global accesses over the whole launch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteCoalescing {
    /// The bytecode instruction (`clflow_interp::Program::site` names it).
    pub site: u32,
    /// The SPIR-V instruction it came from, where the caller named it
    /// (`TrafficReport::describe_sites`).
    pub description: String,
    /// The source line it stands on, where the caller said
    /// (`TrafficReport::locate_sites`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<SourceLine>,
    /// Its DRAM traffic through the cache the summary is at: the lines its
    /// loads missed, and those its stores dirtied that were written back
    /// (where the simulation probed that cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram: Option<crate::DramTraffic>,
    /// The lines it first touched in short visits to their pages, by the
    /// visits' lengths (see `crate::visits`), where the simulation ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_visits: Option<crate::visits::ShortVisits>,
    /// The buffers it accessed (indexes into the trace's buffers).
    pub buffers: Vec<u32>,
    /// `load`, `store` or `atomic`.
    pub kind: AccessSiteKind,
    pub dispatches: u64,
    pub accesses: PatternCounts,
    pub bytes: PatternCounts,
    /// Distinct lines touched, summed over dispatches: the transactions.
    pub lines: u64,
    /// Accesses [`PAGE_BYTES`] or more away from the same work-item's
    /// access at the site before, in walks of [`LONG_WALK`] such strides
    /// or more (see the module's text).
    #[serde(default)]
    pub page_strides: u64,
    /// The long walks those strides came in, one a work-item between two
    /// barriers where it walks the site once (what a CPU's TLB and caches
    /// see is all of a work-item's walks together:
    /// `CoalescingReport::page_walkers`).
    #[serde(default)]
    pub page_walks: u64,
    /// Accesses a line or more, but under a page, away from the same
    /// work-item's access at the site before, in walks of
    /// [`LONG_LINE_WALK`] such strides or more (see the module's text).
    #[serde(default)]
    pub line_strides: u64,
}

/// The stride from which a work-item's next access lands on another page.
pub const PAGE_BYTES: u64 = 4096;

/// The line strides from which a walk counts: 64 KiB of 64-byte lines,
/// more than a core's first-level cache holds (32 to 48 KiB), so that
/// the work-items after it find none of its lines there.
pub const LONG_LINE_WALK: u64 = 1024;

/// The page strides from which a walk counts: a shorter one touches no
/// more pages and lines than a core's first-level TLB and cache keep (64
/// entries and more), so the work-items after it find them there.
pub const LONG_WALK: u64 = 64;

impl SiteCoalescing {
    /// Bytes asked for per byte of the lines the dispatches touched, at
    /// most 1 (a broadcast asks for its bytes many times over).
    pub fn line_efficiency(&self, line_bytes: u64) -> f64 {
        let moved = self.lines * line_bytes;
        if moved == 0 {
            1.0
        } else {
            (self.bytes.total() as f64 / moved as f64).min(1.0)
        }
    }
}

/// What a site does to memory; written `load`, `store` or `atomic`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessSiteKind {
    Load,
    Store,
    Atomic,
}

impl AccessSiteKind {
    pub fn name(self) -> &'static str {
        match self {
            AccessSiteKind::Load => "load",
            AccessSiteKind::Store => "store",
            AccessSiteKind::Atomic => "atomic",
        }
    }
}

impl From<AccessKind> for AccessSiteKind {
    fn from(kind: AccessKind) -> AccessSiteKind {
        match kind {
            AccessKind::Load => AccessSiteKind::Load,
            AccessKind::Store => AccessSiteKind::Store,
            AccessKind::Atomic => AccessSiteKind::Atomic,
        }
    }
}

impl fmt::Display for AccessSiteKind {
    /// The name, padded as the format asks (tables align on it).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// Sorts a launch's accesses into patterns, dispatch by dispatch.
#[derive(Debug)]
pub struct CoalescingAnalyzer {
    line_shift: u32,
    sites: HashMap<(u32, AccessKind), SiteCoalescing>,
    /// One dispatch's accesses of one kind, reused.
    scratch: Vec<GlobalAccess>,
    lines: DistinctLines,
    /// Each (site, work-item)'s last access in the current work-group.
    walks: WorkItemWalks,
    /// The work-group whose accesses came last (a large one comes in
    /// several lists).
    group: Option<u64>,
    /// The work-groups it stands for (a sample's, see
    /// [`CoalescingAnalyzer::sample`]): what its counts are multiplied by.
    weight: u64,
    stretches: Stretches,
}

impl CoalescingAnalyzer {
    pub fn new(line_bytes: u64) -> CoalescingAnalyzer {
        assert!(line_bytes.is_power_of_two(), "line size {line_bytes}");
        CoalescingAnalyzer {
            line_shift: line_bytes.trailing_zeros(),
            sites: HashMap::default(),
            scratch: Vec::new(),
            lines: DistinctLines::default(),
            walks: WorkItemWalks::default(),
            group: None,
            weight: 1,
            stretches: Stretches::default(),
        }
    }

    /// Work-group `group`'s accesses, in the order they were made: all of
    /// them, or the next of the lists a large group comes in.
    pub fn work_group(&mut self, group: u64, accesses: &[GlobalAccess]) {
        self.sample(group, accesses, 1);
    }

    /// [`CoalescingAnalyzer::work_group`] for a work-group that stands for
    /// `stands_for` of them (itself and others like it, not traced): its
    /// counts are multiplied by that. The longest stretch stays a maximum.
    pub fn sample(&mut self, group: u64, accesses: &[GlobalAccess], stands_for: u64) {
        if self.group != Some(group) {
            self.group = Some(group);
            // The walks of the group before end with its own weight.
            self.walks.end_all(self.weight);
            self.weight = stands_for;
            self.walks.next_group();
            self.stretches.restart(0);
        }
        let mut rest = accesses;
        while let Some(first) = rest.first() {
            // The dispatch's accesses, and whether they are one kind, in
            // work-item order (as most are: taken as they are).
            self.stretches.add(first, self.line_shift);
            let mut len = 1;
            let mut plain = true;
            while let Some(a) = rest.get(len) {
                if a.dispatch != first.dispatch {
                    break;
                }
                self.stretches.add(a, self.line_shift);
                plain &= a.kind == first.kind && a.item >= rest[len - 1].last_item();
                len += 1;
            }
            let (dispatch, after) = rest.split_at(len);
            rest = after;
            if plain {
                self.dispatch(first.kind, dispatch);
                continue;
            }
            // A copy loads and stores in one dispatch: each kind on its own.
            let mut scratch = std::mem::take(&mut self.scratch);
            for kind in [AccessKind::Load, AccessKind::Store, AccessKind::Atomic] {
                scratch.clear();
                let lanes = dispatch.iter().filter(|a| a.kind == kind);
                scratch.extend(lanes.flat_map(GlobalAccess::each_lane));
                if !scratch.is_empty() {
                    scratch.sort_by_key(|a| a.item);
                    self.dispatch(kind, &scratch);
                }
            }
            self.scratch = scratch;
        }
    }

    /// One dispatch's accesses of one kind, in work-item order.
    fn dispatch(&mut self, kind: AccessKind, accesses: &[GlobalAccess]) {
        let site = accesses[0].site;
        let stats = self
            .sites
            .entry((site, kind))
            .or_insert_with(|| SiteCoalescing {
                site,
                description: String::new(),
                line: None,
                dram: None,
                short_visits: None,
                buffers: Vec::new(),
                kind: kind.into(),
                dispatches: 0,
                accesses: PatternCounts::default(),
                bytes: PatternCounts::default(),
                lines: 0,
                page_strides: 0,
                page_walks: 0,
                line_strides: 0,
            });
        let weight = self.weight;
        stats.dispatches += weight;
        self.walks
            .follow(site, accesses, weight, 1 << self.line_shift);
        if let Some((pattern, lanes)) = one_pattern(accesses) {
            // Every access has the same pattern: counted at once.
            let buffer = accesses[0].buffer.into();
            if !stats.buffers.contains(&buffer) {
                stats.buffers.push(buffer);
            }
            stats.accesses.add(pattern, lanes * weight);
            stats
                .bytes
                .add(pattern, lanes * accesses[0].bytes as u64 * weight);
            stats.lines += weight * distinct_lines(accesses, self.line_shift, &mut self.lines);
            return;
        }
        // How far run `k`'s last access is from the next run's first, where
        // in the same buffer (within a run: its stride).
        let gap = |k: usize| {
            let (run, next) = (&accesses[k], accesses.get(k + 1)?);
            (run.buffer == next.buffer).then(|| run.last_offset().abs_diff(next.offset))
        };
        // Whether every gap, and every run's stride, is one: asked only of a
        // work-item with neither neighbour next to it nor at its bytes.
        let regular = std::cell::OnceCell::new();
        let is_regular = || {
            let first_gap = match accesses[0].lanes {
                1 => gap(0),
                _ => Some(accesses[0].stride()),
            };
            first_gap.is_some()
                && (0..accesses.len() - 1).all(|k| gap(k) == first_gap)
                && accesses.iter().all(|a| {
                    a.lanes == 1
                        || Some(a.stride()) == first_gap
                            && (a.runs == 1 || Some(a.run_gap()) == first_gap)
                })
        };
        let mut buffer = None;
        for (k, run) in accesses.iter().enumerate() {
            let bytes = run.bytes as u64;
            let pattern = |before: Option<u64>, after: Option<u64>| {
                let next_to = |d: Option<u64>| d == Some(bytes);
                if next_to(before) || next_to(after) {
                    Pattern::Contiguous
                } else if before == Some(0) || after == Some(0) {
                    Pattern::Uniform
                } else if *regular.get_or_init(is_regular) {
                    Pattern::Strided
                } else {
                    Pattern::Scattered
                }
            };
            let before = k.checked_sub(1).and_then(gap);
            let after = gap(k);
            let mut add = |pattern: Pattern, lanes: u64| {
                stats.accesses.add(pattern, lanes * weight);
                stats.bytes.add(pattern, lanes * bytes * weight);
            };
            if run.lanes == 1 {
                add(pattern(before, after), 1);
            } else {
                // Each run's first and last work-items have a neighbour in
                // the run and one beyond it (in the run before or after);
                // those between, two in the run.
                let within = Some(run.stride());
                let runs = u64::from(run.runs);
                add(pattern(before, within), 1);
                add(pattern(within, within), (u64::from(run.lanes) - 2) * runs);
                if runs > 1 {
                    let between = Some(run.run_gap());
                    add(pattern(within, between), runs - 1);
                    add(pattern(between, within), runs - 1);
                }
                add(pattern(within, after), 1);
            }
            if buffer != Some(run.buffer) {
                buffer = Some(run.buffer);
                if !stats.buffers.contains(&run.buffer.into()) {
                    stats.buffers.push(run.buffer.into());
                }
            }
        }
        stats.lines += weight * distinct_lines(accesses, self.line_shift, &mut self.lines);
    }

    pub fn finish(mut self) -> CoalescingReport {
        self.walks.end_all(self.weight);
        let mut sites: Vec<SiteCoalescing> = self.sites.into_values().collect();
        for site in &mut sites {
            (site.page_strides, site.page_walks, site.line_strides) =
                self.walks.site_strides(site.site);
        }
        sites.sort_by(|a, b| {
            b.bytes
                .total()
                .cmp(&a.bytes.total())
                .then(a.site.cmp(&b.site))
        });
        CoalescingReport {
            sites,
            stretch_lines: self.stretches.longest(),
            page_walkers: self.walks.walkers(),
        }
    }
}

/// The pattern of every access of a dispatch (in work-item order), where
/// it is one, and the accesses: two or more accesses of one size in one
/// buffer, each the same distance from the next. Each then has a
/// neighbour that distance away, and the table above gives the same
/// pattern for all.
fn one_pattern(runs: &[GlobalAccess]) -> Option<(Pattern, u64)> {
    let first = runs.first()?;
    if runs.iter().any(|a| a.runs > 1) {
        // Rows of runs: their neighbours across a row are another matter.
        return None;
    }
    let gap = match (first.lanes, runs.get(1)) {
        (1, None) => return None,
        (1, Some(second)) => first.offset.abs_diff(second.offset),
        _ => first.stride(),
    };
    let alike = |a: &GlobalAccess| {
        a.buffer == first.buffer && a.bytes == first.bytes && (a.lanes == 1 || a.stride() == gap)
    };
    let steady = |w: &[GlobalAccess]| {
        let last = w[0].offset + u64::from(w[0].lanes - 1) * w[0].stride();
        last.abs_diff(w[1].offset) == gap
    };
    if !runs.iter().all(alike) || !runs.windows(2).all(steady) {
        return None;
    }
    let pattern = if gap == first.bytes as u64 {
        Pattern::Contiguous
    } else if gap == 0 {
        Pattern::Uniform
    } else {
        Pattern::Strided
    };
    Some((pattern, runs.iter().map(|a| u64::from(a.lanes)).sum()))
}

/// The distinct lines of a set of spans: kept in a list to be sorted and
/// deduplicated, past a small table of the lines pushed lately (rows of
/// work-items that read the same lines again come one after another, or
/// by turns with another row's: each goes in once).
#[derive(Debug)]
pub(crate) struct DistinctLines {
    lines: Vec<(u32, u64)>,
    recent: [(u32, u64); RECENT_LINES],
}

/// The lines a [`DistinctLines`] recalls: a small direct-mapped table.
const RECENT_LINES: usize = 64;

impl Default for DistinctLines {
    fn default() -> Self {
        DistinctLines {
            lines: Vec::new(),
            recent: [(u32::MAX, u64::MAX); RECENT_LINES],
        }
    }
}

impl DistinctLines {
    pub(crate) fn clear(&mut self) {
        self.lines.clear();
        self.recent.fill((u32::MAX, u64::MAX));
    }

    /// Adds `buffer`'s `lines`.
    pub(crate) fn push(&mut self, buffer: u32, lines: RangeInclusive<u64>) {
        for line in lines {
            let slot = &mut self.recent[(line ^ u64::from(buffer)) as usize % RECENT_LINES];
            if *slot != (buffer, line) {
                *slot = (buffer, line);
                self.lines.push((buffer, line));
            }
        }
    }

    /// How many distinct lines were added since the last clear.
    pub(crate) fn count(&mut self) -> u64 {
        self.lines.sort_unstable();
        self.lines.dedup();
        self.lines.len() as u64
    }
}

/// The lines a dispatch's accesses touch, each once.
fn distinct_lines(accesses: &[GlobalAccess], shift: u32, scratch: &mut DistinctLines) -> u64 {
    let spans = || {
        let runs = accesses.iter().filter(|a| a.bytes > 0);
        runs.flat_map(GlobalAccess::each_run).map(move |a| {
            let lines = a.lines(shift);
            (u32::from(a.buffer), *lines.start(), *lines.end())
        })
    };
    if let Some(count) = lines_in_order(spans()) {
        return count;
    }
    scratch.clear();
    for (buffer, first, last) in spans() {
        scratch.push(buffer, first..=last);
    }
    scratch.count()
}

/// The lines of spans (buffer, first line, last line) that come in address
/// order, each counted once, with no list to sort; `None` where a span
/// comes before the last line counted.
fn lines_in_order(spans: impl Iterator<Item = (u32, u64, u64)>) -> Option<u64> {
    let mut last: Option<(u32, u64)> = None;
    let mut count = 0;
    for (buffer, first, end) in spans {
        let from = match last {
            Some((b, line)) if b == buffer && first >= line => first.max(line + 1),
            Some((b, _)) if b >= buffer => return None,
            _ => first,
        };
        count += (end + 1).saturating_sub(from);
        last = Some((buffer, end));
    }
    Some(count)
}

/// Every access site's patterns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoalescingReport {
    /// The sites, those with the most bytes first.
    pub sites: Vec<SiteCoalescing>,
    /// The most lines one work-item moved on to between two of its
    /// group's barriers (or its start and end): how far a work-item walks
    /// before its neighbours start, where they run one after another.
    pub stretch_lines: u64,
    /// The work-items that made long walks of page strides, each counted
    /// once between two barriers: the page strides over them are the
    /// steps one work-item walks, over all its sites, as the TLB and
    /// caches see them.
    #[serde(default)]
    pub page_walkers: u64,
}

impl CoalescingReport {
    /// Bytes per pattern over all sites.
    pub fn bytes(&self) -> PatternCounts {
        let mut total = PatternCounts::default();
        for site in &self.sites {
            total.merge(&site.bytes);
        }
        total
    }

    /// Accesses per pattern over all sites.
    pub fn accesses(&self) -> PatternCounts {
        let mut total = PatternCounts::default();
        for site in &self.sites {
            total.merge(&site.accesses);
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(item: u32, offset: u64, bytes: u32, dispatch: u32) -> GlobalAccess {
        GlobalAccess {
            fenced: 0,
            offset,
            buffer: 0,
            bytes,
            site: dispatch % 2,
            dispatch,
            item,
            kind: AccessKind::Load,
            atomic: false,
            phase: 0,
            lanes: 1,
            contiguous: false,
            runs: 1,
            run_step: 0,
        }
    }

    fn analyse(groups: &[Vec<GlobalAccess>]) -> CoalescingReport {
        let mut a = CoalescingAnalyzer::new(64);
        for (g, accesses) in groups.iter().enumerate() {
            a.work_group(g as u64, accesses);
        }
        a.finish()
    }

    #[test]
    fn unit_stride_is_contiguous_and_a_row_walk_is_strided() {
        // Dispatch 1 (site 1): a[gid], 16 floats, one line. Dispatch 2
        // (site 0): b[gid * 256], each work-item in a line of its own.
        let group: Vec<_> = (0..16)
            .map(|i| access(i, 4 * i as u64, 4, 1))
            .chain((0..16).map(|i| access(i, 1024 * i as u64, 4, 2)))
            .collect();
        let report = analyse(&[group]);
        let by_site = |s: u32| report.sites.iter().find(|x| x.site == s).unwrap();
        assert_eq!(by_site(1).accesses.contiguous, 16);
        assert_eq!(by_site(1).lines, 1);
        assert_eq!(by_site(0).accesses.strided, 16);
        assert_eq!(by_site(0).lines, 16);
        assert_eq!(report.bytes().coalesced(), 64);
        assert_eq!(report.bytes().uncoalesced(), 64);
        assert!((by_site(1).line_efficiency(64) - 1.0).abs() < 1e-12);
        assert!((by_site(0).line_efficiency(64) - 1.0 / 16.0).abs() < 1e-12);
    }

    /// Each access's pattern as the module's table says, neighbour by
    /// neighbour: the analysis's counts, whether a dispatch is counted at
    /// once or access by access, are these.
    #[test]
    fn every_dispatch_counts_as_the_table_says() {
        use rand_core::Rng;
        let mut rng = rand_pcg::Pcg64Mcg::new(5);
        let mut dispatches = Vec::new();
        for d in 0..600u32 {
            let n = 1 + rng.next_u32() % 12;
            let bytes = [4, 8][rng.next_u32() as usize % 2];
            let gap = [0, u64::from(bytes), 16, 100][rng.next_u32() as usize % 4];
            let base = 4096 + 4 * u64::from(rng.next_u32() % 64);
            let dispatch: Vec<GlobalAccess> = (0..n)
                .map(|i| {
                    let mut a = access(i, base + u64::from(i) * gap, bytes, d);
                    a.site = d;
                    match rng.next_u32() % 10 {
                        // Now and then a neighbour elsewhere, in another
                        // buffer, or of another size.
                        0 => a.offset = u64::from(rng.next_u32() % 8192),
                        1 => a.buffer = 1,
                        2 => a.bytes = 16,
                        _ => {}
                    }
                    a
                })
                .collect();
            dispatches.push(dispatch);
        }
        let report = analyse(&[dispatches.concat()]);
        for dispatch in &dispatches {
            let (mut accesses, mut bytes) = (PatternCounts::default(), PatternCounts::default());
            for (k, a) in dispatch.iter().enumerate() {
                let gap =
                    |b: &GlobalAccess| (b.buffer == a.buffer).then(|| a.offset.abs_diff(b.offset));
                let before = k.checked_sub(1).and_then(|b| gap(&dispatch[b]));
                let after = dispatch.get(k + 1).and_then(gap);
                let gaps: Vec<_> = dispatch
                    .windows(2)
                    .map(|w| {
                        (w[0].buffer == w[1].buffer).then(|| w[0].offset.abs_diff(w[1].offset))
                    })
                    .collect();
                let regular =
                    gaps.first().is_some_and(Option::is_some) && gaps.iter().all(|g| *g == gaps[0]);
                let pattern = if [before, after].contains(&Some(a.bytes as u64)) {
                    Pattern::Contiguous
                } else if [before, after].contains(&Some(0)) {
                    Pattern::Uniform
                } else if regular {
                    Pattern::Strided
                } else {
                    Pattern::Scattered
                };
                accesses.add(pattern, 1);
                bytes.add(pattern, a.bytes as u64);
            }
            let site = report
                .sites
                .iter()
                .find(|s| s.site == dispatch[0].site)
                .unwrap();
            assert_eq!(
                (site.accesses, site.bytes),
                (accesses, bytes),
                "{dispatch:?}"
            );
        }
    }

    #[test]
    fn rows_of_runs_in_one_record_count_as_their_work_items_do() {
        // Dispatches of 64 work-items: pairs reading one word, each pair the
        // word after the one before (the pair's last has its next
        // neighbour right after it); rows of 16 reading one word a row
        // apart; rows of 16 reading the same row of words; rows of 255
        // words in a row; and the same with a lone work-item after.
        let shapes: [&dyn Fn(u32) -> u64; 4] = [
            &|i| 4 * u64::from(i / 2),
            &|i| 512 * u64::from(i / 16),
            &|i| 4 * u64::from(i % 16),
            &|i| 4 * u64::from(i),
        ];
        let mut each = Vec::new();
        let mut dispatch = 0;
        for lone in [false, true] {
            for (shape, items) in shapes.iter().zip([64, 64, 64, 600]) {
                dispatch += 2;
                each.extend((0..items).map(|i| access(i, shape(i), 4, dispatch)));
                if lone {
                    each.push(access(items + 7, 8000 + 4 * u64::from(items), 4, dispatch));
                }
            }
        }
        let records = clflow_counts::access::joined(clflow_counts::access::runs(each.clone()));
        assert!(records.iter().filter(|r| r.runs > 1).count() >= 8);
        assert_eq!(analyse(&[records]), analyse(&[each]));
    }

    #[test]
    fn broadcasts_lone_items_and_gathers() {
        // Same address for all; one work-item alone; an irregular gather
        // given out of work-item order.
        let same: Vec<_> = (0..8).map(|i| access(i, 40, 4, 1)).collect();
        let lone = vec![access(0, 8, 4, 3)];
        let gather = vec![
            access(2, 400, 4, 5),
            access(0, 12, 4, 5),
            access(1, 16, 4, 5),
            access(3, 4000, 4, 5),
        ];
        let report = analyse(&[same, lone, gather]);
        let total = report.accesses();
        assert_eq!(total.uniform, 8);
        // Work-items 0 and 1 of the gather are neighbours 4 bytes apart.
        assert_eq!(total.contiguous, 2);
        assert_eq!(total.scattered, 1 + 2);
        assert_eq!(total.strided, 0);
    }

    #[test]
    fn a_copy_sorts_its_loads_and_stores_apart() {
        let mut group = Vec::new();
        for i in 0..4u32 {
            group.push(access(i, 8 * i as u64, 8, 7));
            let mut store = access(i, 4096 + 8 * i as u64, 8, 7);
            store.kind = AccessKind::Store;
            group.push(store);
        }
        let report = analyse(&[group]);
        assert_eq!(report.sites.len(), 2);
        assert!(report.sites.iter().all(|s| s.accesses.contiguous == 4));
        let mut kinds: Vec<String> = report.sites.iter().map(|s| s.kind.to_string()).collect();
        kinds.sort();
        assert_eq!(kinds, ["load", "store"]);
        // Tables align on the kind's padded name.
        assert_eq!(format!("{:<6}|", AccessSiteKind::Atomic), "atomic|");
        assert_eq!(format!("{:<6}|", AccessSiteKind::Load), "load  |");
    }

    /// Counted in order or sorted, the distinct lines are the same.
    #[test]
    fn lines_in_order_are_counted_as_sorted_ones_are() {
        let sorted = |spans: &[(u32, u64, u64)]| {
            let mut lines: Vec<(u32, u64)> = spans
                .iter()
                .flat_map(|&(b, f, l)| (f..=l).map(move |line| (b, line)))
                .collect();
            lines.sort_unstable();
            lines.dedup();
            lines.len() as u64
        };
        let cases: [&[(u32, u64, u64)]; 5] = [
            &[(0, 0, 0), (0, 0, 1), (0, 1, 1), (0, 3, 4), (1, 0, 0)],
            &[(0, 5, 5), (0, 5, 5), (0, 5, 5)],
            &[(0, 0, 2), (0, 2, 2), (0, 2, 3), (2, 1, 1)],
            &[(0, 4, 4), (0, 2, 2)],
            &[(1, 0, 0), (0, 9, 9)],
        ];
        for spans in cases {
            let expected = sorted(spans);
            match lines_in_order(spans.iter().copied()) {
                Some(n) => assert_eq!(n, expected, "{spans:?}"),
                None => assert!(!spans.is_sorted(), "{spans:?} is in order"),
            }
        }
        assert_eq!(lines_in_order([(0, 4, 4), (0, 2, 2)].into_iter()), None);
    }

    /// A sample that stands for three work-groups counts as the three
    /// would, walks and transactions included; the longest stretch stays
    /// the longest.
    #[test]
    fn a_sample_counts_for_the_work_groups_it_stands_for() {
        let walk: Vec<GlobalAccess> = (0..70u64)
            .flat_map(|k| {
                (0..2).map(move |item| GlobalAccess {
                    dispatch: k as u32,
                    ..access(item, 4 * u64::from(item) + k * 32768, 4, 0)
                })
            })
            .collect();
        let rows: Vec<GlobalAccess> = (0..16).map(|i| access(i, 4 * i as u64, 4, 1)).collect();
        let mut sampled = CoalescingAnalyzer::new(64);
        sampled.work_group(0, &rows);
        sampled.sample(1, &walk, 3);
        sampled.sample(2, &rows, 2);
        let sampled = sampled.finish();
        let each = analyse(&[
            rows.clone(),
            walk.clone(),
            walk.clone(),
            walk,
            rows.clone(),
            rows,
        ]);
        assert_eq!(sampled, each);
        assert_eq!(sampled.page_walkers, 3 * 2);
        let rows_site = sampled.sites.iter().find(|s| s.site == 1).unwrap();
        assert_eq!(
            (rows_site.dispatches, rows_site.accesses.contiguous),
            (3, 3 * 16)
        );
    }

    /// `items` work-items each walk a site from their own float on,
    /// `stride` bytes a step, `steps` steps, a barrier before step
    /// `barrier`, if any.
    fn walk_of(items: u32, stride: u64, steps: u64, barrier: Option<u64>) -> Vec<GlobalAccess> {
        (0..steps)
            .flat_map(|k| {
                let phase = u16::from(barrier.is_some_and(|b| k >= b));
                (0..items).map(move |item| GlobalAccess {
                    site: 4,
                    dispatch: k as u32,
                    phase,
                    ..access(item, 4 * u64::from(item) + k * stride, 4, 0)
                })
            })
            .collect()
    }

    #[test]
    fn a_work_items_long_walk_a_line_a_step_is_counted() {
        // 16 work-items walk an interval striding by 16 floats, each taking
        // one of every line: steps of 64 bytes.
        let walk = |stride, steps, barrier| walk_of(16, stride, steps, barrier);
        let strides = |groups: &[Vec<GlobalAccess>]| -> (u64, u64) {
            let report = analyse(groups);
            let lines = report.sites.iter().map(|s| s.line_strides).sum();
            let pages = report.sites.iter().map(|s| s.page_strides).sum();
            (lines, pages)
        };
        // 1,500 steps: 1,499 line strides each, no page stride.
        assert_eq!(strides(&[walk(64, 1500, None)]), (16 * 1499, 0));
        // Each work-group walks afresh.
        assert_eq!(
            strides(&[walk(64, 1500, None), walk(256, 1500, None)]),
            (2 * 16 * 1499, 0)
        );
        // A walk the first-level cache keeps, a stride within a line, and
        // a walk of pages are none.
        assert_eq!(strides(&[walk(64, 1000, None)]).0, 0);
        assert_eq!(strides(&[walk(16, 5000, None)]).0, 0);
        assert_eq!(strides(&[walk(4096, 1500, None)]), (0, 16 * 1498));
        // A barrier splits a walk in two, each counted where it is long.
        assert_eq!(strides(&[walk(64, 3000, Some(1200))]).0, 16 * (1199 + 1799));
        assert_eq!(strides(&[walk(64, 3000, Some(2500))]).0, 16 * 2499);
    }

    /// Two work-items each walk a site 32 KiB at a time (a grid-stride
    /// loop): every step after the first that goes a page or more again is
    /// a page stride, counted where the walk is long, whether or not the
    /// steps are equal. A 2 KiB stride stays on the page every other step,
    /// and one such step in a walk ends it; a barrier, or a new
    /// work-group, starts every walk afresh.
    #[test]
    fn a_work_items_steps_of_a_page_or_more_are_counted() {
        let walk = |stride, steps, barrier| walk_of(2, stride, steps, barrier);
        let strides = |groups: &[Vec<GlobalAccess>]| -> u64 {
            analyse(groups).sites.iter().map(|s| s.page_strides).sum()
        };
        // Steps 2 to 69 of each work-item's walk keep its 32 KiB stride:
        // 68 page strides, a long walk.
        assert_eq!(strides(&[walk(32768, 70, None)]), 2 * 68);
        let walks = |groups: &[Vec<GlobalAccess>]| -> u64 {
            analyse(groups).sites.iter().map(|s| s.page_walks).sum()
        };
        assert_eq!(walks(&[walk(32768, 70, None)]), 2);
        // Each work-group walks afresh.
        assert_eq!(
            strides(&[walk(32768, 70, None), walk(32768, 70, None)]),
            2 * 2 * 68
        );
        assert_eq!(strides(&[walk(2048, 70, None)]), 0);
        // 38 page strides stay in a first-level TLB's reach.
        assert_eq!(strides(&[walk(32768, 40, None)]), 0);
        // A barrier before the 31st access: the 28 strides before it are a
        // short walk; after it, a walk of 70 accesses starts again.
        assert_eq!(strides(&[walk(32768, 100, Some(30))]), 2 * 68);
        assert_eq!(walks(&[walk(32768, 100, Some(30))]), 2);
        assert_eq!(walks(&[walk(32768, 200, None)]), 2);
        // Each work-item that walked, once between two barriers: the
        // steps one of them walks are the strides over them.
        let walkers = |groups: &[Vec<GlobalAccess>]| analyse(groups).page_walkers;
        assert_eq!(walkers(&[walk(32768, 70, None)]), 2);
        assert_eq!(walkers(&[walk(32768, 70, None), walk(32768, 70, None)]), 4);
        assert_eq!(walkers(&[walk(32768, 100, Some(30))]), 2);
        assert_eq!(walkers(&[walk(32768, 200, Some(100))]), 4);
        // Two sites walked side by side (x[i] and y[i] in one loop): two
        // walks, one walker, each work-item's steps both walks'.
        let both: Vec<GlobalAccess> = walk(32768, 70, None)
            .chunks(2)
            .flat_map(|x| {
                let y = x.iter().map(|a| GlobalAccess {
                    site: 5,
                    buffer: 1,
                    dispatch: a.dispatch + 1000,
                    ..*a
                });
                x.iter().copied().chain(y).collect::<Vec<_>>()
            })
            .collect();
        let report = analyse(&[both]);
        let steps: u64 = report.sites.iter().map(|s| s.page_strides).sum();
        assert_eq!(steps, 2 * 2 * 68);
        assert_eq!(report.sites.iter().map(|s| s.page_walks).sum::<u64>(), 4);
        assert_eq!(report.page_walkers, 2);
        // Two sites that load from one row a step (a register tile's
        // a[k][j] and a[k][j + 1]): the second finds the first's page, and
        // makes no stride.
        let tile: Vec<GlobalAccess> = walk(32768, 70, None)
            .chunks(2)
            .flat_map(|x| {
                let next = x.iter().map(|a| GlobalAccess {
                    site: 5,
                    offset: a.offset + 64,
                    dispatch: a.dispatch + 1000,
                    ..*a
                });
                x.iter().copied().chain(next).collect::<Vec<_>>()
            })
            .collect();
        let report = analyse(&[tile]);
        let strides_at = |site| {
            let at = report.sites.iter().find(|s| s.site == site).unwrap();
            (at.page_strides, at.page_walks)
        };
        assert_eq!(strides_at(4), (2 * 68, 2));
        assert_eq!(strides_at(5), (0, 0));
        let mut wandering = walk(32768, 70, None);
        for (k, a) in wandering.iter_mut().enumerate() {
            // Steps of 36, 44, 52 ... KiB: never the same twice.
            let step = k as u64 / 2;
            a.offset += step * step * 4096;
        }
        assert_eq!(strides(&[wandering]), 2 * 68);
        // Step 35 of each walk goes 2 KiB: 33 strides before it, 33 after,
        // two short walks.
        let mut broken = walk(32768, 70, None);
        for a in broken.iter_mut().filter(|a| a.dispatch >= 35) {
            a.offset -= 30 * 1024;
        }
        assert_eq!(strides(&[broken]), 0);
    }

    /// The stretch: the lines a work-item moves on to between barriers,
    /// over the lists a large work-group comes in, afresh after a barrier
    /// and in each work-group.
    #[test]
    fn a_work_items_stretch_counts_the_lines_it_moves_on_to_between_barriers() {
        // Work-items 0 and 1 each load `steps` floats `stride` bytes apart,
        // from their own start, before the barrier (and again after it
        // from step `barrier` on).
        let walk = |stride: u64, steps: u64, barrier: u64| -> Vec<GlobalAccess> {
            (0..steps)
                .flat_map(|k| {
                    (0..2).map(move |item| GlobalAccess {
                        phase: u16::from(k >= barrier),
                        ..access(item, 4 * u64::from(item) + k * stride, 4, k as u32)
                    })
                })
                .collect()
        };
        let longest = |groups: &[Vec<GlobalAccess>]| analyse(groups).stretch_lines;
        // A line a step, 100 steps.
        assert_eq!(longest(&[walk(64, 100, 100)]), 100);
        // Sixteen floats a line: 7 lines for 100 steps.
        assert_eq!(longest(&[walk(4, 100, 100)]), 7);
        // A barrier after 30 steps: the longer stretch is the 70 after it.
        assert_eq!(longest(&[walk(64, 100, 30)]), 70);
        // Two work-groups of 60: each walks afresh.
        assert_eq!(longest(&[walk(64, 60, 60), walk(64, 60, 60)]), 60);
        // One work-group that comes in two lists walks on over both.
        let whole = walk(64, 100, 100);
        let mut a = CoalescingAnalyzer::new(64);
        a.work_group(7, &whole[..80]);
        a.work_group(7, &whole[80..]);
        assert_eq!(a.finish().stretch_lines, 100);
    }
}
