//! Work-group and sub-group functions: reductions, scans, broadcasts and
//! votes over one group's values, given in the order of the work-items'
//! local linear ids. Floats combine in that order (a device may pair
//! them otherwise, and round differently).

use crate::error::TrapKind;
use crate::opencl_std as math;
use clflow_bytecode::{Collective, GroupOp};

/// Each work-item's result, from every work-item's `values` (and, for a
/// broadcast, `indices`: the local id whose value it wants).
pub(super) fn combine(
    op: Collective,
    bits: u8,
    values: &[u64],
    indices: &[u64],
) -> Result<Vec<u64>, TrapKind> {
    let n = values.len();
    Ok(match op {
        Collective::Reduce(g) => {
            let total = values
                .iter()
                .skip(1)
                .fold(values[0], |acc, v| apply(g, bits, acc, *v));
            vec![total; n]
        }
        Collective::InclusiveScan(g) => scan(g, bits, values, true),
        Collective::ExclusiveScan(g) => scan(g, bits, values, false),
        Collective::All => vec![values.iter().all(|v| *v != 0) as u64; n],
        Collective::Any => vec![values.iter().any(|v| *v != 0) as u64; n],
        Collective::Broadcast => {
            let from = indices[0];
            if indices.iter().any(|i| *i != from) {
                return Err(TrapKind::Collective(
                    "broadcast: the work-items name different work-items to broadcast from".into(),
                ));
            }
            let value = values.get(from as usize).copied().ok_or_else(|| {
                TrapKind::Collective(format!("broadcast from work-item {from} of a group of {n}"))
            })?;
            vec![value; n]
        }
    })
}

fn scan(g: GroupOp, bits: u8, values: &[u64], inclusive: bool) -> Vec<u64> {
    let mut acc = identity(g, bits);
    values
        .iter()
        .map(|v| {
            let before = acc;
            acc = apply(g, bits, acc, *v);
            if inclusive {
                acc
            } else {
                before
            }
        })
        .collect()
}

/// The value that leaves any other unchanged: what an exclusive scan's
/// first work-item gets.
fn identity(g: GroupOp, bits: u8) -> u64 {
    let mask = math::mask(bits);
    match g {
        GroupOp::IAdd | GroupOp::UMax => 0,
        GroupOp::UMin => mask,
        GroupOp::SMin => mask >> 1,
        GroupOp::SMax => (mask >> 1) + 1,
        GroupOp::FAdd => math::from_f64(bits, 0.0),
        GroupOp::FMin => math::from_f64(bits, f64::INFINITY),
        GroupOp::FMax => math::from_f64(bits, f64::NEG_INFINITY),
    }
}

fn apply(g: GroupOp, bits: u8, a: u64, b: u64) -> u64 {
    let mask = math::mask(bits);
    let (sa, sb) = (math::sext(a, bits), math::sext(b, bits));
    let (fa, fb) = (math::to_f64(bits, a), math::to_f64(bits, b));
    match g {
        GroupOp::IAdd => a.wrapping_add(b) & mask,
        GroupOp::UMin => (a & mask).min(b & mask),
        GroupOp::UMax => (a & mask).max(b & mask),
        GroupOp::SMin => (sa.min(sb) as u64) & mask,
        GroupOp::SMax => (sa.max(sb) as u64) & mask,
        // Exact in f64 for floats of 32 bits or fewer, then rounded once
        // to the type, as the device's add rounds.
        GroupOp::FAdd => math::from_f64(bits, fa + fb),
        GroupOp::FMin => math::from_f64(bits, fa.min(fb)),
        GroupOp::FMax => math::from_f64(bits, fa.max(fb)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reductions_scans_votes_and_broadcasts() {
        let ints = [3u64, (-5i64 as u64) & 0xffff_ffff, 7, 1];
        let none = [0u64; 4];
        let all = |op| combine(op, 32, &ints, &none).unwrap();
        assert_eq!(all(Collective::Reduce(GroupOp::IAdd)), vec![6; 4]);
        assert_eq!(
            all(Collective::Reduce(GroupOp::SMin)),
            vec![(-5i64 as u64) & 0xffff_ffff; 4]
        );
        assert_eq!(all(Collective::Reduce(GroupOp::UMin)), vec![1; 4]);
        assert_eq!(
            all(Collective::InclusiveScan(GroupOp::IAdd)),
            vec![3, 0xffff_fffe, 5, 6]
        );
        assert_eq!(
            all(Collective::ExclusiveScan(GroupOp::SMax)),
            vec![0x8000_0000, 3, 3, 7]
        );
        assert_eq!(all(Collective::All), vec![1; 4]);
        assert_eq!(
            combine(Collective::Any, 32, &[0, 0], &[0, 0]).unwrap(),
            vec![0, 0]
        );
        assert_eq!(
            combine(Collective::Broadcast, 32, &ints, &[2; 4]).unwrap(),
            vec![7; 4]
        );
        assert!(combine(Collective::Broadcast, 32, &ints, &[9; 4]).is_err());
        let floats: Vec<u64> = [1.5f32, -2.0, 0.25]
            .iter()
            .map(|f| f.to_bits() as u64)
            .collect();
        let f = |op| -> Vec<f32> {
            combine(op, 32, &floats, &[0; 3])
                .unwrap()
                .iter()
                .map(|b| f32::from_bits(*b as u32))
                .collect()
        };
        assert_eq!(f(Collective::Reduce(GroupOp::FAdd)), vec![-0.25; 3]);
        assert_eq!(
            f(Collective::ExclusiveScan(GroupOp::FMin)),
            vec![f32::INFINITY, 1.5, -2.0]
        );
        assert_eq!(
            f(Collective::InclusiveScan(GroupOp::FMax)),
            vec![1.5, 1.5, 1.5]
        );
    }
}
