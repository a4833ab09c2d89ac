//! The PerDome model in its essential parameters {I, I_C, I_G} (eqs. 6–20):
//! which (I_C, I_G) pairs a kernel of intensity I can split into (Lemmas 1
//! and 2), how its flops and bytes then divide (eqs. 15–18), and the
//! performance upper bound of that split (eq. 19, and eq. 20 for I_C = I_G = I).
//!
//! The bound depends on the ratios alone, so every amount here is per byte
//! of the application's traffic (N_b = 1) or per flop (N_f = 1).

use crate::model::{System, Work};
use serde::Serialize;

/// A kernel's split into the part C runs and the part G runs, per byte of
/// the application's traffic (N_b = 1): eqs. 15–18.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Parts {
    /// Eq. 16: N_b-C / N_b = (I − I_G) / (I_C − I_G).
    pub bytes_c: f64,
    /// Eq. 15: N_b-G / N_b = (I − I_C) / (I_G − I_C).
    pub bytes_g: f64,
    /// Eq. 18: N_f-C / N_b = I_C·(I − I_G) / (I_C − I_G).
    pub ops_c: f64,
    /// Eq. 17: N_f-G / N_b = I_G·(I − I_C) / (I_G − I_C).
    pub ops_g: f64,
}

/// Lemma 2: a kernel of intensity I splits into two parts of intensities
/// I_C ≠ I_G only if they lie on opposite sides of I (both parts doing some
/// traffic). Pairs with both above or both below I do not exist; the
/// boundary I_C = I or I_G = I is Lemma 1's (the whole kernel on one side, or
/// both sides at I).
pub fn is_code_split(i: f64, i_c: f64, i_g: f64) -> bool {
    let positive = |v: f64| v.is_finite() && v >= 0.0;
    positive(i) && positive(i_c) && positive(i_g) && ((i_c < i && i < i_g) || (i_g < i && i < i_c))
}

/// Eqs. 15–18 (solving eqs. 12–14): how flops and bytes divide between C and
/// G for a split with intensities I_C, I_G of a kernel with intensity I;
/// `None` where Lemma 2 says no such split exists.
pub fn parts(i: f64, i_c: f64, i_g: f64) -> Option<Parts> {
    if !is_code_split(i, i_c, i_g) {
        return None;
    }
    // Eq. 14: N_b-C / N_b-G = (I_G − I)/(I − I_C), with N_b-C + N_b-G = N_b.
    let bytes_g = (i - i_c) / (i_g - i_c);
    let bytes_c = (i - i_g) / (i_c - i_g);
    Some(Parts { bytes_c, bytes_g, ops_c: i_c * bytes_c, ops_g: i_g * bytes_g })
}

impl Parts {
    /// The two parts as work, with `transfer_per_byte` bytes crossing the
    /// host link per byte of traffic (D / N_b of the application).
    pub fn work(&self, transfer_per_byte: f64) -> (Work, Work) {
        let part = |ops: f64, bytes: f64| Work { ops, bytes, transfer: bytes * transfer_per_byte };
        (
            part(self.ops_c, self.bytes_c),
            part(self.ops_g, self.bytes_g),
        )
    }
}

/// Eq. 19: the performance upper bound (flops/s) of a code split with
/// intensities I_C, I_G of a kernel of intensity I,
///
/// P = max{ t_f-C·I_C(I − I_G)/(I(I_C − I_G)), t_b-C·(I − I_G)/(I(I_C − I_G)),
///          t_f-G·I_G(I − I_C)/(I(I_G − I_C)), t_b-G·(I − I_C)/(I(I_G − I_C)) }⁻¹.
///
/// The printed equation has t_f-C in the third term; eq. 11, which it
/// rewrites, has N_f-G·t_f-G there, and so does this function. Transfers
/// are not part of the paper's model (see [`crate::surface`] for the bound
/// with them). `None` where Lemma 2 rules the split out.
pub fn code_split_bound(system: &System, i: f64, i_c: f64, i_g: f64) -> Option<f64> {
    if !is_code_split(i, i_c, i_g) {
        return None;
    }
    let (c, g) = (&system.c, &system.g);
    let per_flop_c = (i - i_g) / (i * (i_c - i_g));
    let per_flop_g = (i - i_c) / (i * (i_g - i_c));
    let slowest = (c.time_per_op() * i_c * per_flop_c)
        .max(c.time_per_byte() * per_flop_c)
        .max(g.time_per_op() * i_g * per_flop_g)
        .max(g.time_per_byte() * per_flop_g);
    Some(1.0 / slowest)
}

/// Eq. 20: the bound of a data partition (I_C = I_G = I) in which C does the
/// share `c_share` = N_f-C / N_f of the flops:
///
/// P = max{ r·t_f-C, r/I·t_b-C, (1 − r)·t_f-G, (1 − r)/I·t_b-G }⁻¹.
///
/// The printed fourth term reads (1 − N_f-C/(N_f·I))·t_b-G; N_b-G / N_f is
/// (1 − r)/I by eq. 9, as here. `c_share` = 1 is C alone, 0 is G alone (the
/// paper's I_G = 0 and I_C = 0 points).
pub fn data_split_bound(system: &System, i: f64, c_share: f64) -> f64 {
    let (c, g) = (&system.c, &system.g);
    let r = c_share.clamp(0.0, 1.0);
    let slowest = (r * c.time_per_op())
        .max(r / i * c.time_per_byte())
        .max((1.0 - r) * g.time_per_op())
        .max((1.0 - r) / i * g.time_per_byte());
    1.0 / slowest
}

/// The `c_share` that maximises eq. 20: each side's time is its share times
/// its whole-kernel time M, so both finish together at r = M_G / (M_C + M_G)
/// (the paper's perfect data partition, whose bound is P_C + P_G).
pub fn best_data_share(system: &System, i: f64) -> f64 {
    let whole = |p: &crate::model::Processor| p.time_per_op().max(p.time_per_byte() / i);
    let (m_c, m_g) = (whole(&system.c), whole(&system.g));
    m_g / (m_c + m_g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Processor, Transfers};

    fn system() -> System {
        System {
            c: Processor::new("c", 13.6e9, 15.2e9, None).unwrap(),
            g: Processor::new("g", 526e9, 67.6e9, None).unwrap(),
        }
    }

    #[test]
    fn lemma_2_admits_only_pairs_on_opposite_sides_of_i() {
        assert!(is_code_split(1.7, 0.1, 2.0));
        assert!(is_code_split(1.7, 2.0, 0.1));
        assert!(!is_code_split(1.7, 2.0, 3.0), "both above I");
        assert!(!is_code_split(1.7, 0.5, 1.0), "both below I");
        assert!(!is_code_split(1.7, 1.7, 1.7), "Lemma 1's data partition");
        assert!(!is_code_split(1.7, 1.7, 0.0), "Lemma 1's C-only");
        assert!(parts(1.7, 2.0, 3.0).is_none());
    }

    #[test]
    fn the_parts_add_up_to_the_kernel_and_keep_their_intensities() {
        let p = parts(4.4, 0.4, 5.4).unwrap();
        // Eq. 9 and eq. 8 with N_b = 1, N_f = I.
        assert!((p.bytes_c + p.bytes_g - 1.0).abs() < 1e-12);
        assert!((p.ops_c + p.ops_g - 4.4).abs() < 1e-12);
        // Eqs. 6 and 7.
        assert!((p.ops_c / p.bytes_c - 0.4).abs() < 1e-12);
        assert!((p.ops_g / p.bytes_g - 5.4).abs() < 1e-12);
        // Eq. 14.
        assert!((p.bytes_c / p.bytes_g - (5.4 - 4.4) / (4.4 - 0.4)).abs() < 1e-12);
        assert!((p.bytes_g - 0.8).abs() < 1e-12);
    }

    #[test]
    fn eq_19_is_eqs_4_and_5_on_the_parts_of_eqs_15_to_18() {
        let system = system();
        for (i, i_c, i_g) in [(1.7, 0.1, 2.0), (4.4, 9.2, 1.5), (0.3, 0.01, 40.0)] {
            let (on_c, on_g) = parts(i, i_c, i_g).unwrap().work(0.0);
            let direct = system.bound(&on_c, &on_g, Transfers::Ignored).performance;
            let eq19 = code_split_bound(&system, i, i_c, i_g).unwrap();
            assert!((eq19 / direct - 1.0).abs() < 1e-12, "{eq19} vs {direct}");
        }
    }

    #[test]
    fn eq_20_runs_from_one_device_alone_to_both_together() {
        let system = system();
        let i = 4.4;
        let whole = |p: &Processor| {
            let work = Work::new(i, 1.0, 0.0).unwrap();
            p.performance(&work, Transfers::Ignored)
        };
        let (p_c, p_g) = (whole(&system.c), whole(&system.g));
        assert!((data_split_bound(&system, i, 1.0) / p_c - 1.0).abs() < 1e-12);
        assert!((data_split_bound(&system, i, 0.0) / p_g - 1.0).abs() < 1e-12);
        // At the best share the bound is the sum of both bounds, and no
        // other share beats it.
        let best = best_data_share(&system, i);
        let at_best = data_split_bound(&system, i, best);
        assert!((at_best / (p_c + p_g) - 1.0).abs() < 1e-12);
        assert!((best - p_c / (p_c + p_g)).abs() < 1e-12);
        for r in [0.0, 0.01, best * 0.9, best * 1.1, 0.5, 1.0] {
            assert!(data_split_bound(&system, i, r) <= at_best * (1.0 + 1e-12));
        }
    }
}
