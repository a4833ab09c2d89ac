//! The lanes of a batch waiting to run, by the pc they wait at, the one
//! ranked first run next (see the module docs of `exec`).

/// Runnable lanes waiting to run, grouped by the pc they wait at. There are
/// few such pcs at any time (the ways a batch's lanes went), so a list
/// searched end to end serves.
#[derive(Debug, Default)]
pub(super) struct Queue {
    /// (rank, pc, lanes) of each pc some lane waits at.
    pub(super) waiting: Vec<(u32, u32, Vec<u32>)>,
    /// Emptied lane lists, kept for reuse.
    pub(super) spare: Vec<Vec<u32>>,
}

impl Queue {
    /// The index of the group waiting at `pc`, made if there is none;
    /// `ranks` is `Program::rank`.
    #[inline]
    pub(super) fn slot(&mut self, ranks: &[u32], pc: u32) -> usize {
        match self.waiting.iter().position(|w| w.1 == pc) {
            Some(i) => i,
            None => {
                let lanes = self.spare.pop().unwrap_or_default();
                let rank = ranks.get(pc as usize).copied().unwrap_or(u32::MAX);
                self.waiting.push((rank, pc, lanes));
                self.waiting.len() - 1
            }
        }
    }

    /// Queues `lanes` to go on at `pc`, in the middle of a block: they rank
    /// as the block does (a pc inside one has no rank of its own).
    pub(super) fn push_inside(&mut self, ranks: &[u32], pc: u32, lanes: &[u32]) {
        if lanes.is_empty() {
            return;
        }
        let rank = ranks[..=(pc as usize).min(ranks.len().saturating_sub(1))]
            .iter()
            .rev()
            .find(|&&r| r != u32::MAX)
            .copied()
            .unwrap_or(u32::MAX);
        let i = self.slot(ranks, pc);
        self.waiting[i].0 = rank;
        self.waiting[i].2.extend_from_slice(lanes);
    }

    #[inline]
    pub(super) fn push(&mut self, ranks: &[u32], pc: u32, lanes: &[u32]) {
        let i = self.slot(ranks, pc);
        self.waiting[i].2.extend_from_slice(lanes);
    }

    /// The lowest rank any lane waits at (`u32::MAX` when none waits).
    pub(super) fn first_rank(&self) -> u32 {
        self.waiting.iter().map(|w| w.0).min().unwrap_or(u32::MAX)
    }

    /// Moves the lanes waiting at the lowest-ranked pc into `active` and
    /// returns that pc.
    pub(super) fn pop(&mut self, active: &mut Vec<u32>) -> Option<u32> {
        let (i, _) = self.waiting.iter().enumerate().min_by_key(|(_, w)| w.0)?;
        let (_, pc, lanes) = self.waiting.swap_remove(i);
        let mut done = std::mem::replace(active, lanes);
        done.clear();
        self.spare.push(done);
        Some(pc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn the_queue_joins_lanes_at_one_pc_and_runs_the_earliest_first() {
        // pc 7 comes before pc 3.
        let ranks = [9, 9, 9, 5, 9, 9, 9, 0];
        let mut q = Queue::default();
        for (pc, lane) in [(3, 0), (7, 1), (3, 2), (7, 3)] {
            let i = q.slot(&ranks, pc);
            q.waiting[i].2.push(lane);
        }
        assert_eq!(q.first_rank(), 0);
        let mut active = Vec::new();
        assert_eq!(q.pop(&mut active), Some(7));
        assert_eq!(active, [1, 3]);
        assert_eq!(q.first_rank(), 5);
        assert_eq!(q.pop(&mut active), Some(3));
        assert_eq!(active, [0, 2]);
        assert_eq!(q.pop(&mut active), None);
        assert_eq!(q.spare.len(), 2, "emptied lane lists are kept for reuse");
    }
}
