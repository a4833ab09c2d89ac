//! Smith-Waterman local alignment scores.

use super::{exact, index};
use crate::args::Args;
use crate::{Case, CheckError, ExpectedOutput};
use clflow_core::{Launch, ScalarType};

/// The kernel's `MAX_QUERY`: longer queries are cut to this length.
const MAX_QUERY: usize = 64;
const GAP: i16 = 3;
/// The kernel's table: +5 match, -1 transition (A-G, C-T), -4 transversion.
const SUBSTITUTION: [[i16; 4]; 4] = [
    [5, -4, -1, -4],
    [-4, 5, -4, -1],
    [-1, -4, 5, -4],
    [-4, -1, -4, 5],
];

/// The best local alignment score of `query` against `database` (bases
/// 0-3), with a linear gap penalty, as the kernel computes it.
pub fn score(query: &[u8], database: &[u8]) -> u16 {
    let mut column = vec![0i16; query.len() + 1];
    let mut best = 0i16;
    for &base in database {
        let (mut diagonal, mut above) = (0i16, 0i16);
        for (i, &q) in query.iter().enumerate() {
            let left = column[i + 1];
            let h = (diagonal + SUBSTITUTION[usize::from(q)][usize::from(base)])
                .max(above - GAP)
                .max(left - GAP)
                .max(0);
            diagonal = left;
            column[i + 1] = h;
            above = h;
            best = best.max(h);
        }
    }
    best as u16
}

pub fn expected(launch: &Launch) -> Result<Vec<ExpectedOutput>, CheckError> {
    let args = Args::new(Case::SmithWaterman, launch, 5)?;
    let queries = args.buffer::<u8>(0)?;
    let query_len = args.scalar::<u32>(1)? as usize;
    let database = args.buffer::<u8>(2)?;
    let db_len = args.scalar::<u32>(3)? as usize;
    let ids = args.global_ids(0);
    let mut scores = args.buffer_of_len::<u16>(4, ids.end, "one score per work-item")?;

    let len = query_len.min(MAX_QUERY);
    if len > 0 && db_len > 0 {
        if database.len() < db_len {
            return Err(args.bad(
                2,
                format!("has {} bases but db_len is {db_len}", database.len()),
            ));
        }
        let needed = (ids.end as usize - 1) * query_len + len;
        if queries.len() < needed {
            return Err(args.bad(
                0,
                format!(
                    "has {} bases but {} queries of {query_len} need {needed}",
                    queries.len(),
                    ids.end
                ),
            ));
        }
        // Codes past 3 would index past the kernel's private table.
        let bad_base = |bases: &[u8]| bases.iter().position(|&b| b > 3);
        if let Some(at) = bad_base(&database[..db_len]) {
            return Err(args.bad(
                2,
                format!("base {at} is {}; bases are coded 0-3", database[at]),
            ));
        }
        for q in ids.clone().map(index) {
            let query = &queries[q * query_len..q * query_len + len];
            if let Some(at) = bad_base(query) {
                return Err(args.bad(
                    0,
                    format!("query {q} base {at} is {}; bases are coded 0-3", query[at]),
                ));
            }
        }
    }
    for q in ids.map(index) {
        scores[q] = if len == 0 || db_len == 0 {
            0
        } else {
            score(
                &queries[q * query_len..q * query_len + len],
                &database[..db_len],
            )
        };
    }
    Ok(vec![exact(4, ScalarType::UShort, &scores)])
}

#[cfg(test)]
mod tests {
    use super::*;

    // A = 0, C = 1, G = 2, T = 3.
    #[test]
    fn scores_worked_examples() {
        // Identical sequences: 5 per base.
        assert_eq!(score(&[0, 1, 2, 3], &[0, 1, 2, 3]), 20);
        // ACGT in TTACGTTT: the same local alignment.
        assert_eq!(score(&[0, 1, 2, 3], &[3, 3, 0, 1, 2, 3, 3, 3]), 20);
        // AC-GT against ACGGT... with a one-base gap in the query:
        // AC (10) gap (-3) GT (10) = 17 beats any ungapped run.
        assert_eq!(score(&[0, 1, 2, 3], &[0, 1, 1, 2, 3]), 17);
        // A transition mismatch in the middle: A C [A/G] T = 5 + 5 - 1 + 5.
        assert_eq!(score(&[0, 1, 0, 3], &[0, 1, 2, 3]), 14);
        // Nothing in common: the best local score is one... no: zero.
        assert_eq!(score(&[0, 0], &[1, 1]), 0);
    }
}
