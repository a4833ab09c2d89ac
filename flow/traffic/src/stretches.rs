//! How many lines each work-item of the current work-group has moved on to
//! since the group's last barrier, and the most any work-item has (see
//! `crate::coalescing`).
//!
//! The work-items of a run ([`GlobalAccess::lanes`]) that access one line
//! and have moved as often move together: the first work-item's entry
//! holds them all, and a run of the same work-items on one line moves them
//! at once. Anything else parts them first.

use clflow_counts::GlobalAccess;

#[derive(Debug, Default)]
pub(crate) struct Stretches {
    phase: u16,
    /// Per work-item: the line of its last access, and the lines it moved
    /// on to in this stretch (for a work-item that moves with others, the
    /// first one's entry holds them).
    items: Vec<Stretch>,
    /// Per work-item: the first of the work-items it moves with and how
    /// many they are ([`ALONE`] where it moves on its own).
    rows: Vec<(u32, u8)>,
    longest: u64,
}

#[derive(Debug, Clone, Copy)]
struct Stretch {
    buffer: u32,
    line: u64,
    moves: u64,
}

const ALONE: (u32, u8) = (u32::MAX, 1);

impl Stretches {
    /// The most lines a work-item moved on to between two barriers.
    pub(crate) fn longest(&self) -> u64 {
        self.longest
    }

    pub(crate) fn restart(&mut self, phase: u16) {
        self.phase = phase;
        self.items.clear();
        self.rows.clear();
    }

    /// Each work-item's access of a run, lines of `1 << line_shift` bytes.
    pub(crate) fn add(&mut self, run: &GlobalAccess, line_shift: u32) {
        if run.runs > 1 {
            // Each run's work-items move together, or not, on their own.
            for one in run.each_run() {
                self.add(&one, line_shift);
            }
            return;
        }
        if run.phase != self.phase {
            self.restart(run.phase);
        }
        let (first, last) = (run.item as usize, run.last_item() as usize);
        if last >= self.items.len() {
            let none = Stretch { buffer: u32::MAX, line: u64::MAX, moves: 0 };
            self.items.resize(last + 1, none);
            self.rows.resize(last + 1, ALONE);
        }
        let buffer = u32::from(run.buffer);
        let line = run.offset >> line_shift;
        let end = run.offset + u64::from(run.lanes - 1) * run.stride();
        let one_line = end >> line_shift == line;
        if run.lanes > 1 && one_line && self.rows[first] == (run.item, run.lanes) {
            // They move together.
            self.move_to(first, buffer, line);
            return;
        }
        for item in first..=last {
            let (row, _) = self.rows[item];
            if row != ALONE.0 {
                self.part(row as usize);
            }
        }
        for (k, item) in (0..).zip(first..=last) {
            self.move_to(item, buffer, (run.offset + k * run.stride()) >> line_shift);
        }
        let moves = self.items[first].moves;
        if run.lanes > 1 && one_line && self.items[first..=last].iter().all(|s| s.moves == moves) {
            self.rows[first..=last].fill((run.item, run.lanes));
        }
    }

    /// Work-item `item`'s access of `buffer`'s `line`.
    #[inline]
    fn move_to(&mut self, item: usize, buffer: u32, line: u64) {
        let s = &mut self.items[item];
        if (s.buffer, s.line) != (buffer, line) {
            (s.buffer, s.line) = (buffer, line);
            s.moves += 1;
            self.longest = self.longest.max(s.moves);
        }
    }

    /// Has each work-item that moves with `first` move on its own again.
    fn part(&mut self, first: usize) {
        let (_, lanes) = self.rows[first];
        let stretch = self.items[first];
        for item in first..first + usize::from(lanes) {
            self.items[item] = stretch;
            self.rows[item] = ALONE;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clflow_counts::AccessKind;

    /// `lanes` work-items from `item` each reading 4 bytes, from `offset`
    /// on (`contiguous`) or all there.
    fn run(item: u32, lanes: u8, offset: u64, contiguous: bool) -> GlobalAccess {
        GlobalAccess {
            fenced: 0,
            offset,
            bytes: 4,
            site: 0,
            dispatch: 0,
            item,
            buffer: 0,
            phase: 0,
            kind: AccessKind::Load,
            atomic: false,
            lanes,
            contiguous,
            runs: 1,
            run_step: 0,
        }
    }

    /// The longest stretch after `runs`, at 64-byte lines; and after the
    /// same one work-item at a time.
    fn longest(runs: &[GlobalAccess]) -> (u64, u64) {
        let (mut together, mut each) = (Stretches::default(), Stretches::default());
        for r in runs {
            together.add(r, 6);
            for lane in r.each_lane() {
                each.add(&lane, 6);
            }
        }
        (together.longest(), each.longest())
    }

    #[test]
    fn a_row_parted_goes_on_from_where_it_moved_together() {
        // Four work-items read one line after another ten times, then the
        // last alone five more: 15 moves.
        let mut runs: Vec<GlobalAccess> = (0..10).map(|k| run(0, 4, 64 * k, false)).collect();
        runs.extend((100..105).map(|k| run(3, 1, 64 * k, false)));
        assert_eq!(longest(&runs), (15, 15));
    }

    #[test]
    fn work_items_that_moved_unlike_do_not_move_together() {
        // Work-item 1 moves six times alone, then both ten times: 16.
        let mut runs: Vec<GlobalAccess> = (50..56).map(|k| run(1, 1, 64 * k, false)).collect();
        runs.extend((0..10).map(|k| run(0, 2, 64 * k, false)));
        runs.push(run(1, 1, 64 * 99, false));
        assert_eq!(longest(&runs), (17, 17));
    }

    #[test]
    fn a_row_over_two_lines_moves_each_work_item_to_its_own() {
        // 32 work-items on line 0, then a row of their words over lines 1
        // and 2, then work-item 20 on line 2 again: no move.
        let runs = [
            run(0, 32, 0, false),
            run(0, 32, 64, true),
            run(20, 1, 128, false),
        ];
        assert_eq!(longest(&runs), (2, 2));
    }
}
