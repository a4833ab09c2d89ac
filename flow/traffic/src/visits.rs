//! How the lines a kernel brings in from DRAM meet their pages: in long
//! visits, a page's lines one after another as a stream reads them, or in
//! short ones, a few lines of a page before the stream moves on to others
//! and comes back much later, if ever.
//!
//! A core's prefetchers follow a stream within a page; a work-group that
//! walks down a matrix's column (a GEMV whose work-items each take a row's
//! few lines in turn, a transpose's other side) reads a few lines of each
//! row's page and moves on, and the next work-group reads the next few
//! lines of the same pages far later. Each such line waits on memory.
//!
//! Each line's first touch (in the order the simulation is fed, the
//! device's) joins its page's visit where that page had a first touch
//! among the last [`VISIT_GAP`] first touches, or opens a new visit. A
//! visit that ends with fewer lines than its page holds is short; its
//! lines count, by the visit's length, for the site whose touch opened
//! it.

/// The other lines' first touches after which a page's visit has ended.
pub const VISIT_GAP: u64 = 256;

/// The lengths of short visits are told in powers of two: 1, 2–3, 4–7,
/// 8–15, 16–31 and 32–63 lines (pages of 4 KiB hold 64 lines of 64 bytes).
pub const VISIT_BUCKETS: usize = 6;

/// Each bucket's lengths, as reports name them.
pub const VISIT_LENGTHS: [&str; VISIT_BUCKETS] = ["1", "2-3", "4-7", "8-15", "16-31", "32-63"];

/// Lines first touched in short visits, by the visit's length: bucket `b`
/// holds visits of `2^b` to `2^(b+1) - 1` lines.
pub type ShortVisits = [u64; VISIT_BUCKETS];

/// The visits under way, one per page.
#[derive(Debug, Default)]
pub(crate) struct PageVisits {
    /// Log2 of the lines a page holds; 0 where a line is a page or more
    /// (then no visit is short).
    page_shift: u32,
    /// Per page: the first touch that last joined its visit (counted from
    /// 1; 0 for none yet), the visit's lines, and the site that opened it.
    pages: Vec<(u64, u32, u32)>,
    /// First touches so far.
    touches: u64,
    /// Per site, the lines of its short visits.
    by_site: Vec<ShortVisits>,
}

impl PageVisits {
    /// Visits to pages of `page_bytes` over `lines` lines of `line_bytes`,
    /// whose buffers each start on a page.
    pub(crate) fn new(lines: u64, line_bytes: u64, page_bytes: u64) -> PageVisits {
        let page_shift = (page_bytes / line_bytes.min(page_bytes)).trailing_zeros();
        PageVisits {
            page_shift,
            pages: vec![(0, 0, 0); (lines >> page_shift) as usize + 1],
            touches: 0,
            by_site: Vec::new(),
        }
    }

    /// The first touch of `line` (global line index), made by `site`.
    pub(crate) fn first_touch(&mut self, line: u64, site: u32) {
        if self.page_shift == 0 {
            return;
        }
        self.touches += 1;
        let now = self.touches;
        let page = &mut self.pages[(line >> self.page_shift) as usize];
        if page.1 > 0 && now - page.0 <= VISIT_GAP {
            page.0 = now;
            page.1 += 1;
            return;
        }
        let ended = std::mem::replace(page, (now, 1, site));
        self.close(ended);
    }

    /// Counts a visit that ended, where it was short.
    fn close(&mut self, (_, lines, site): (u64, u32, u32)) {
        if lines == 0 || lines >= 1 << self.page_shift {
            return;
        }
        let bucket = (lines.ilog2() as usize).min(VISIT_BUCKETS - 1);
        let at = site as usize;
        if at >= self.by_site.len() {
            self.by_site.resize(at + 1, [0; VISIT_BUCKETS]);
        }
        self.by_site[at][bucket] += u64::from(lines);
    }

    /// Ends every visit: per site (those with any), its short visits' lines.
    pub(crate) fn finish(mut self) -> Vec<(u32, ShortVisits)> {
        for k in 0..self.pages.len() {
            let ended = std::mem::take(&mut self.pages[k]);
            self.close(ended);
        }
        self.by_site
            .into_iter()
            .enumerate()
            .filter(|(_, v)| v.iter().any(|&n| n > 0))
            .map(|(site, v)| (site as u32, v))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 64-byte lines, 4 KiB pages: 64 lines a page.
    fn visits(touches: &[(u64, u32)]) -> Vec<(u32, ShortVisits)> {
        let mut v = PageVisits::new(64 * 1024, 64, 4096);
        for &(line, site) in touches {
            v.first_touch(line, site);
        }
        v.finish()
    }

    #[test]
    fn a_stream_makes_no_short_visit() {
        let stream: Vec<(u64, u32)> = (0..64 * 16).map(|l| (l, 3)).collect();
        assert!(visits(&stream).is_empty());
    }

    /// A column walk: 4 lines of each of 300 pages, then the next 4 lines
    /// of each (after more than the gap): visits of 4 lines each.
    #[test]
    fn a_column_walk_visits_each_page_a_few_lines_at_a_time() {
        let mut walk = Vec::new();
        for chunk in 0..2u64 {
            for page in 0..300u64 {
                for l in 0..4 {
                    walk.push((page * 64 + chunk * 4 + l, 7));
                }
            }
        }
        assert_eq!(visits(&walk), vec![(7, [0, 0, 2400, 0, 0, 0])]);
    }

    /// Pages taken in turn a few lines at a time, but back within the gap
    /// (a work-group's rows, which the next group goes on along): one
    /// visit a page, whole.
    #[test]
    fn pages_taken_back_within_the_gap_are_one_visit() {
        let mut rows = Vec::new();
        for chunk in 0..16u64 {
            for page in 0..32u64 {
                for l in 0..4 {
                    rows.push((page * 64 + chunk * 4 + l, 1));
                }
            }
        }
        assert!(visits(&rows).is_empty());
        // Half of each page: one short visit of 32 lines a page, counted
        // for the site that opened it.
        let half: Vec<(u64, u32)> = rows
            .iter()
            .filter(|(line, _)| line % 64 < 32)
            .map(|&(line, _)| (line, if line % 64 == 0 { 2 } else { 1 }))
            .collect();
        assert_eq!(visits(&half), vec![(2, [0, 0, 0, 0, 0, 32 * 32])]);
    }

    /// Lines of a page or more: no visit is short.
    #[test]
    fn pages_of_one_line_have_no_short_visits() {
        let mut v = PageVisits::new(1024, 4096, 4096);
        v.first_touch(3, 0);
        v.first_touch(900, 0);
        assert!(v.finish().is_empty());
    }
}
