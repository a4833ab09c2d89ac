//! Which lanes of a load or store a work-group vectoriser gathers or
//! scatters: those it cannot take as one vector access.
//!
//! Such a compiler runs a work-group's work-items in a loop over their
//! first local id, and widens an access into one vector load or store
//! where it sees the address count up by the access's size from one
//! work-item to the next (or stay the same, a broadcast). At run time that
//! shows as a row of work-items (the same second and third local ids)
//! whose addresses are one such progression; a row that is not (a table
//! looked up, a stride, an index built with `%` and `/` that runs on in
//! pieces) is gathered lane by lane.

use super::LaneBits;
use crate::memory::{self, SPACE_PRIVATE};

/// How the active lanes of loads and stores fall into rows of work-items.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowLanes {
    /// In rows whose addresses are neither one progression of the access's
    /// size along the first local id (up or down) nor all the same.
    pub gathered: u64,
    /// In rows of two lanes or more that share one address (a broadcast).
    pub broadcast: u64,
    pub all: u64,
}

impl std::ops::AddAssign for RowLanes {
    fn add_assign(&mut self, other: RowLanes) {
        self.gathered += other.gathered;
        self.broadcast += other.broadcast;
        self.all += other.all;
    }
}

/// The rows of one load or store of `bytes` bytes a lane (the span of its
/// group, for a member of a group of adjacent accesses that a device's
/// compiler makes one vector of: `translate::adjacent`). `addresses` is
/// the pointer register's row and `local_id` the batch's ids, both by lane
/// (a batch's lanes are its work-items in local-id order); `active` may
/// come in any order, and is every lane in order where `dense`. Private
/// memory, which a device keeps in registers, makes none.
pub(super) fn row_lanes(
    addresses: &[u64],
    local_id: &[[u64; 3]],
    active: &[u32],
    bytes: u64,
    dense: bool,
) -> RowLanes {
    let Some(&first) = active.first() else {
        return RowLanes::default();
    };
    if memory::decode(addresses[first as usize]).0 == SPACE_PRIVATE {
        return RowLanes::default();
    }
    let rows = Rows { addresses, local_id, steps: [0, bytes, bytes.wrapping_neg()] };
    let (gathered, broadcast) = if dense {
        rows.classify(0..addresses.len())
    } else {
        rows.classify(LaneBits::of(active, addresses.len()).lanes())
    };
    RowLanes { gathered, broadcast, all: active.len() as u64 }
}

/// What [`row_lanes`] reads, taken a row at a time.
struct Rows<'a> {
    addresses: &'a [u64],
    local_id: &'a [[u64; 3]],
    /// The progressions a row may follow: a broadcast, up, down.
    steps: [u64; 3],
}

impl Rows<'_> {
    /// The lanes of the rows that follow none of `steps`, and of those of
    /// two lanes or more that stay at one address, `lanes` coming in
    /// increasing order.
    fn classify(&self, lanes: impl Iterator<Item = usize>) -> (u64, u64) {
        let (addresses, local_id) = (self.addresses, self.local_id);
        let (mut gathered, mut broadcast) = (0, 0);
        // The row under way: its first lane, its lanes, and which of the
        // steps its addresses still follow.
        let mut row: Option<(usize, u64, [bool; 3])> = None;
        let mut close = |row: Option<(usize, u64, [bool; 3])>| match row {
            Some((_, lanes, follows)) if !follows.contains(&true) => gathered += lanes,
            Some((_, lanes, [true, ..])) if lanes > 1 => broadcast += lanes,
            _ => {}
        };
        for l in lanes {
            match &mut row {
                Some((base, lanes, follows)) if local_id[*base][1..] == local_id[l][1..] => {
                    let along = local_id[l][0].wrapping_sub(local_id[*base][0]);
                    let moved = addresses[l].wrapping_sub(addresses[*base]);
                    for (f, step) in follows.iter_mut().zip(self.steps) {
                        *f &= moved == along.wrapping_mul(step);
                    }
                    *lanes += 1;
                }
                _ => {
                    close(row);
                    row = Some((l, 1, [true; 3]));
                }
            }
        }
        close(row);
        (gathered, broadcast)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{encode, SPACE_GLOBAL, SPACE_LOCAL};

    fn at(space: u64, offsets: &[u64]) -> Vec<u64> {
        offsets.iter().map(|&o| encode(space, 1, o)).collect()
    }

    /// Local ids of a `width`-wide work-group's first lanes.
    fn ids(width: u64, lanes: u64) -> Vec<[u64; 3]> {
        (0..lanes).map(|l| [l % width, l / width, 0]).collect()
    }

    #[test]
    fn progressions_and_broadcasts_vectorise_the_rest_gather() {
        let (row, all) = (ids(4, 4), [0, 1, 2, 3]);
        let gathered = |space, offsets: &[u64], bytes| {
            row_lanes(&at(space, offsets), &row, &all, bytes, true).gathered
        };
        // Up, down, a float4 a lane, the same address.
        assert_eq!(gathered(SPACE_GLOBAL, &[0, 4, 8, 12], 4), 0);
        assert_eq!(gathered(SPACE_LOCAL, &[12, 8, 4, 0], 4), 0);
        assert_eq!(gathered(SPACE_GLOBAL, &[0, 16, 32, 48], 16), 0);
        assert_eq!(gathered(SPACE_GLOBAL, &[64, 64, 64, 64], 4), 0);
        let shared = row_lanes(&at(SPACE_GLOBAL, &[64; 4]), &row, &all, 4, true);
        assert_eq!((shared.broadcast, shared.all), (4, 4));
        // A stride of two elements; runs of two (an index made with `%`
        // and `/`); a lookup.
        assert_eq!(gathered(SPACE_LOCAL, &[0, 8, 16, 24], 4), 4);
        assert_eq!(gathered(SPACE_LOCAL, &[0, 4, 100, 104], 4), 4);
        assert_eq!(gathered(SPACE_GLOBAL, &[40, 4, 0, 12], 4), 4);
    }

    #[test]
    fn each_row_of_a_2d_group_is_one_progression() {
        // Two rows of two: each row counts up, the second far from the
        // first (a row of a matrix further on).
        let offsets = at(SPACE_GLOBAL, &[0, 4, 4096, 4100]);
        assert_eq!(
            row_lanes(&offsets, &ids(2, 4), &[0, 1, 2, 3], 4, true),
            RowLanes { gathered: 0, broadcast: 0, all: 4 }
        );
        // The same addresses in a group one row of four wide: gathered.
        assert_eq!(
            row_lanes(&offsets, &ids(4, 4), &[0, 1, 2, 3], 4, false),
            RowLanes { gathered: 4, broadcast: 0, all: 4 }
        );
    }

    #[test]
    fn inactive_lanes_keep_their_place_and_private_memory_makes_none() {
        let (row, offsets) = (ids(8, 8), at(SPACE_GLOBAL, &[0, 4, 8, 12, 16, 20, 24, 28]));
        // Every other lane, in any order: still one progression.
        assert_eq!(
            row_lanes(&offsets, &row, &[6, 0, 2, 4], 4, false),
            RowLanes { gathered: 0, broadcast: 0, all: 4 }
        );
        // A lane alone is one.
        assert_eq!(
            row_lanes(&offsets, &row, &[5], 4, false),
            RowLanes { gathered: 0, broadcast: 0, all: 1 }
        );
        let private: Vec<u64> = [0, 40, 80, 120]
            .iter()
            .map(|&o| encode(SPACE_PRIVATE, 0, o))
            .collect();
        assert_eq!(
            row_lanes(&private, &ids(4, 4), &[0, 1, 2, 3], 4, true),
            RowLanes::default()
        );
    }
}
