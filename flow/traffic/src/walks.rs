//! Each work-item's walk at each site: the step from its access before,
//! and how long it has kept a step of a page or more (page strides) or of
//! a line or more under a page (line strides). See `crate::coalescing` for
//! what the long walks stand for.
//!
//! The work-items of a record (a run, [`GlobalAccess::lanes`], or rows of
//! runs, [`GlobalAccess::runs`]) that step alike walk together: one walk
//! holds them all, the first work-item's, the others at their places in
//! the record. A record of the same work-items and shape at the site takes
//! that walk a step at once; anything else parts it into each work-item's
//! own before it steps. Only walks a line a step or less go together: a
//! page stride's count hangs on each work-item's pages.

use crate::coalescing::{LONG_LINE_WALK, LONG_WALK, PAGE_BYTES};
use clflow_counts::GlobalAccess;
use rustc_hash::FxHashMap as HashMap;

/// Where each work-item's last access at each site was, the step that
/// brought it there, and how long its walk has kept that step; entries of
/// earlier work-groups are stale.
#[derive(Debug, Default)]
pub(crate) struct WorkItemWalks {
    /// Each site's row of work-items.
    rows: HashMap<u32, Row>,
    /// The current work-group, counted from 1.
    group: u32,
    /// The long walks that ended.
    credits: Credits,
    /// The (site, work-item) walks that made a stride in this work-group:
    /// the only ones its end has to close.
    running: Vec<(u32, u32)>,
    /// Per buffer, each work-item's work-group (counted from 1) and the
    /// page of its last access to that buffer ([`page_mark`]).
    pages: Vec<Vec<u64>>,
}

/// One site's walks, by work-item.
#[derive(Debug, Default)]
struct Row {
    walks: Vec<Walk>,
    /// Per work-item, the run it walks with, if any.
    together: Vec<Together>,
}

/// Where a work-item walks with others: `first`'s walk holds them all, the
/// ones of a record ([`GlobalAccess::runs`]) from `first` on: `runs` runs
/// of `lanes` work-items, each `stride` bytes after the one before, each
/// run's first `run_step` bytes after the run before's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Together {
    /// The first work-item; [`ALONE`] where it walks on its own.
    first: u32,
    lanes: u8,
    runs: u8,
    run_step: i32,
    stride: u64,
}

const ALONE: u32 = u32::MAX;

impl Default for Together {
    fn default() -> Self {
        Together { first: ALONE, lanes: 1, runs: 1, run_step: 0, stride: 0 }
    }
}

impl Together {
    /// The work-items of `record`, walking together.
    fn of(record: &GlobalAccess) -> Together {
        Together {
            first: record.item,
            lanes: record.lanes,
            runs: record.runs,
            run_step: record.run_step,
            stride: record.stride(),
        }
    }

    fn work_items(&self) -> u32 {
        u32::from(self.lanes) * u32::from(self.runs)
    }

    /// How far the `k`th work-item's access is from the first's.
    fn offset_of(&self, k: u32) -> i64 {
        let lanes = u32::from(self.lanes);
        i64::from(k / lanes) * i64::from(self.run_step) + i64::from(k % lanes) * self.stride as i64
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Walk {
    group: u32,
    /// The barriers the work-group had passed (`GlobalAccess::phase`).
    phase: u16,
    buffer: u32,
    offset: u64,
    /// The signed step from the access before, if any.
    step: Option<i64>,
    /// The page strides the walk has made so far.
    run: u64,
    /// The line strides it has made since its last other step.
    lines: u64,
}

/// Whether a step goes a page or more.
fn jumps(step: Option<i64>) -> bool {
    step.is_some_and(|s| s.unsigned_abs() >= PAGE_BYTES)
}

/// A work-group and the page at `offset`, as one word: a run's are
/// written for each of its work-items, and a word a work-item fills
/// faster than a pair. (A buffer of 2^32 pages, 16 TiB, is out of reach.)
fn page_mark(group: u32, offset: u64) -> u64 {
    u64::from(group) << 32 | (offset / PAGE_BYTES) & u64::from(u32::MAX)
}

impl WorkItemWalks {
    /// Starts the next work-group's walks.
    pub(crate) fn next_group(&mut self) {
        self.group += 1;
    }

    /// Follows a dispatch's accesses (one site's, in work-item order)
    /// along their work-items' walks; a long walk that ends counts
    /// `weight` times.
    pub(crate) fn follow(
        &mut self,
        site: u32,
        accesses: &[GlobalAccess],
        weight: u64,
        line_bytes: u64,
    ) {
        let row = self.rows.entry(site).or_default();
        // In work-item order: the last is the highest.
        let items = accesses.last().map_or(0, |a| a.last_item() as usize + 1);
        if items > row.walks.len() {
            row.walks.resize(items, Walk::default());
            row.together.resize(items, Together::default());
        }
        let mut at = Site {
            site,
            row,
            running: &mut self.running,
            credits: &mut self.credits,
            group: self.group,
            line_bytes,
            weight,
        };
        for run in accesses {
            let buffer = run.buffer as usize;
            if buffer >= self.pages.len() {
                self.pages.resize_with(buffer + 1, Vec::new);
            }
            let pages = &mut self.pages[buffer];
            if items > pages.len() {
                pages.resize(items, 0);
            }
            let pages = &mut pages[run.item as usize..=run.last_item() as usize];
            if !at.step_together(run, pages) {
                at.step_each(run, pages);
            }
        }
    }

    /// Ends every walk: at the end of a work-group (which stands for
    /// `weight`), and of the launch.
    pub(crate) fn end_all(&mut self, weight: u64) {
        for (site, item) in self.running.drain(..) {
            let Some(row) = self.rows.get_mut(&site) else {
                continue;
            };
            let at = item as usize;
            let together = row.together[at];
            if together.first != ALONE && together.first != item {
                // Its walk is the first work-item's, ended there.
                continue;
            }
            let walk = &mut row.walks[at];
            // Walks together make no page strides (see the module's text).
            self.credits.credit(site, item, walk, weight);
            let items = u64::from(together.work_items());
            self.credits.credit_lines(site, walk, weight * items);
            walk.run = 0;
            walk.lines = 0;
        }
    }

    /// The page strides of `site`'s long walks and their number, and its
    /// long line walks' strides.
    pub(crate) fn site_strides(&mut self, site: u32) -> (u64, u64, u64) {
        let credits = &mut self.credits;
        let (strides, walks) = credits.by_site.remove(&site).unwrap_or_default();
        let lines = credits.lines_by_site.remove(&site).unwrap_or_default();
        (strides, walks, lines)
    }

    /// The work-items that made long page walks, each counted once
    /// between two barriers.
    pub(crate) fn walkers(&self) -> u64 {
        self.credits.walkers
    }
}

/// One site's walks as a dispatch follows them.
struct Site<'a> {
    site: u32,
    row: &'a mut Row,
    running: &'a mut Vec<(u32, u32)>,
    credits: &'a mut Credits,
    group: u32,
    line_bytes: u64,
    weight: u64,
}

impl Site<'_> {
    /// The step from `walk`'s last access to `a`, where it goes on (in the
    /// same work-group, phase and buffer).
    fn step(&self, walk: &Walk, a: &GlobalAccess) -> Option<i64> {
        (walk.group == self.group && walk.phase == a.phase && walk.buffer == u32::from(a.buffer))
            .then(|| a.offset.wrapping_sub(walk.offset) as i64)
    }

    /// Whether `step` is a line stride: a line or more, under a page.
    fn line_stride(&self, step: Option<i64>) -> bool {
        step.is_some_and(|s| (self.line_bytes..PAGE_BYTES).contains(&s.unsigned_abs()))
    }

    /// Takes the walk `run`'s work-items make together a step at once,
    /// where they walk together as the record `run` is (the same work-items,
    /// stride and runs) and the step neither is a page stride nor ends a
    /// long walk; false, having changed nothing, where not.
    fn step_together(&mut self, run: &GlobalAccess, pages: &mut [u64]) -> bool {
        let first = run.item as usize;
        if run.lanes < 2 || self.row.together[first] != Together::of(run) {
            return false;
        }
        let walk = self.row.walks[first];
        let step = self.step(&walk, run);
        let line_stride = self.line_stride(step);
        let ends_long = walk.run >= LONG_WALK || (!line_stride && walk.lines >= LONG_LINE_WALK);
        if ends_long || (jumps(step) && jumps(walk.step)) {
            return false;
        }
        if line_stride && walk.lines == 0 && walk.run == 0 {
            self.running.push((self.site, run.item));
        }
        self.row.walks[first] = Walk {
            group: self.group,
            phase: run.phase,
            buffer: run.buffer.into(),
            offset: run.offset,
            step,
            run: 0,
            lines: if line_stride { walk.lines + 1 } else { 0 },
        };
        for (one, pages) in run.each_run().zip(pages.chunks_mut(run.lanes.into())) {
            if one.last_offset() / PAGE_BYTES == one.offset / PAGE_BYTES {
                // The common case, a run on one page: one mark for all.
                pages.fill(page_mark(self.group, one.offset));
            } else {
                for (k, page) in (0..).zip(pages) {
                    *page = page_mark(self.group, one.offset + k * one.stride());
                }
            }
        }
        true
    }

    /// Takes each work-item of `run` a step on its own walk (parting any
    /// walk it made with others first); where they then step alike, less
    /// than a page, they walk together from here on.
    fn step_each(&mut self, run: &GlobalAccess, pages: &mut [u64]) {
        for item in run.item..=run.last_item() {
            let first = self.row.together[item as usize].first;
            if first != ALONE {
                self.part(first);
            }
        }
        for (k, a) in run.each_lane().enumerate() {
            let mark = page_mark(self.group, a.offset);
            let warm = std::mem::replace(&mut pages[k], mark) == mark;
            let walk = self.row.walks[a.item as usize];
            let step = self.step(&walk, &a);
            let line_stride = self.line_stride(step);
            let run = if jumps(step) && jumps(walk.step) {
                if warm {
                    walk.run
                } else {
                    if walk.run == 0 && walk.lines == 0 {
                        self.running.push((self.site, a.item));
                    }
                    walk.run + 1
                }
            } else {
                self.credits.credit(self.site, a.item, &walk, self.weight);
                0
            };
            let lines = if line_stride {
                if walk.lines == 0 && walk.run == 0 {
                    self.running.push((self.site, a.item));
                }
                walk.lines + 1
            } else {
                self.credits.credit_lines(self.site, &walk, self.weight);
                0
            };
            self.row.walks[a.item as usize] = Walk {
                group: self.group,
                phase: a.phase,
                buffer: a.buffer.into(),
                offset: a.offset,
                step,
                run,
                lines,
            };
        }
        self.join(run);
    }

    /// Has `run`'s work-items walk together where their walks are alike
    /// and none made a page stride.
    fn join(&mut self, run: &GlobalAccess) {
        let items = run.item as usize..=run.last_item() as usize;
        let walks = &self.row.walks[items.clone()];
        let first = walks[0];
        if run.lanes < 2 || first.run > 0 || jumps(first.step) {
            return;
        }
        let alike = |w: &Walk| (w.step, w.run, w.lines) == (first.step, first.run, first.lines);
        if !walks.iter().all(alike) {
            return;
        }
        self.row.together[items].fill(Together::of(run));
    }

    /// Gives each work-item that walks with `first` its own walk again.
    fn part(&mut self, first: u32) {
        let at = first as usize;
        let together = self.row.together[at];
        let walk = self.row.walks[at];
        let striding = walk.run > 0 || walk.lines > 0;
        for k in 0..together.work_items() {
            let item = (at + k as usize, first + k);
            self.row.walks[item.0] = Walk {
                offset: walk.offset.wrapping_add_signed(together.offset_of(k)),
                ..walk
            };
            self.row.together[item.0] = Together::default();
            // The first is on the list already (see `running`).
            if striding && k > 0 {
                self.running.push((self.site, item.1));
            }
        }
    }
}

/// The long walks that ended: per site, their page strides and their
/// number; and the work-items that made them, each counted once between
/// two barriers however many walks it made there.
#[derive(Debug, Default)]
struct Credits {
    by_site: HashMap<u32, (u64, u64)>,
    /// Per site, the line strides of its long line walks.
    lines_by_site: HashMap<u32, u64>,
    walkers: u64,
    /// Each work-item's last (work-group, phase) counted among `walkers`.
    counted: Vec<(u32, u16)>,
}

impl Credits {
    /// Counts `walk`'s line strides at `site` where they were many,
    /// `weight` times.
    #[inline]
    fn credit_lines(&mut self, site: u32, walk: &Walk, weight: u64) {
        if walk.lines >= LONG_LINE_WALK {
            *self.lines_by_site.entry(site).or_default() += walk.lines * weight;
        }
    }

    /// Counts `item`'s walk at `site` where it was long, `weight` times.
    #[inline]
    fn credit(&mut self, site: u32, item: u32, walk: &Walk, weight: u64) {
        if walk.run >= LONG_WALK {
            self.credit_long(site, item, walk, weight);
        }
    }

    /// [`Credits::credit`] of a long walk (rare: out of line).
    #[inline(never)]
    fn credit_long(&mut self, site: u32, item: u32, walk: &Walk, weight: u64) {
        let (strides, walks) = self.by_site.entry(site).or_default();
        *strides += walk.run * weight;
        *walks += weight;
        let at = item as usize;
        if at >= self.counted.len() {
            self.counted.resize(at + 1, (0, 0));
        }
        // Work-groups count from 1: (0, 0) is no stretch.
        if self.counted[at] != (walk.group, walk.phase) {
            self.counted[at] = (walk.group, walk.phase);
            self.walkers += weight;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clflow_counts::access::{joined, runs};

    const ITEMS: u32 = 64;

    /// Each work-item's walk at `site`: where it is, its step, its page
    /// and line strides (a walk together's first work-item's, at each
    /// one's own place).
    fn each_walk(walks: &WorkItemWalks, site: u32) -> Vec<(u64, Option<i64>, u64, u64)> {
        let row = &walks.rows[&site];
        (0..ITEMS as usize)
            .map(|i| {
                let together = row.together[i];
                let (walk, offset) = match together.first {
                    ALONE => (row.walks[i], row.walks[i].offset),
                    first => {
                        let walk = row.walks[first as usize];
                        let k = i as u32 - first;
                        (walk, walk.offset.wrapping_add_signed(together.offset_of(k)))
                    }
                };
                (offset, walk.step, walk.run, walk.lines)
            })
            .collect()
    }

    /// Work-item `i`'s access at `site` in `dispatch`, 4 bytes at `offset`.
    fn load(site: u32, dispatch: u32, i: u32, offset: u64) -> GlobalAccess {
        GlobalAccess {
            offset,
            bytes: 4,
            site,
            dispatch,
            item: i,
            buffer: site as u16,
            ..GlobalAccess::default()
        }
    }

    #[test]
    fn rows_of_runs_walk_as_their_work_items_do() {
        // Four rows of 16 work-items each reading one word, a line further
        // each step: at site 0 the rows 100,000 bytes apart, then 200,000
        // (a record of another shape), and one work-item out a step later
        // on (the walk parts); at site 1 512 bytes apart throughout, a walk
        // together long enough to count.
        let row = |i: u32| u64::from(i / 16);
        let (mut one_by_one, mut in_rows) = (WorkItemWalks::default(), WorkItemWalks::default());
        one_by_one.next_group();
        in_rows.next_group();
        let mut dispatch = 0;
        for k in 0..1100u64 {
            for site in [0, 1] {
                dispatch += 1;
                let apart = match (site, k) {
                    (1, _) => 512,
                    (_, 0..500) => 100_000,
                    _ => 200_000,
                };
                let each: Vec<GlobalAccess> = (0..ITEMS)
                    .filter(|&i| site == 1 || k != 800 || i != 5)
                    .map(|i| load(site, dispatch, i, apart * row(i) + 64 * k))
                    .collect();
                let records = joined(runs(each.iter().copied()));
                assert!(site == 0 && k == 800 || records.len() == 1);
                one_by_one.follow(site, &each, 1, 64);
                in_rows.follow(site, &records, 1, 64);
                assert_eq!(
                    each_walk(&in_rows, site),
                    each_walk(&one_by_one, site),
                    "{k}"
                );
            }
        }
        one_by_one.end_all(1);
        in_rows.end_all(1);
        assert_eq!(in_rows.site_strides(0), one_by_one.site_strides(0));
        // Site 1's 64 work-items each made a long line walk of 1,099 steps.
        let lines = one_by_one.site_strides(1);
        assert_eq!(lines, (0, 0, 64 * 1099));
        assert_eq!(in_rows.site_strides(1), lines);
        assert_eq!(in_rows.walkers(), one_by_one.walkers());
    }
}
