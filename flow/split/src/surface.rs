//! The PerDome plot (the paper's Figures 2 and 3): for an application of
//! intensity I, the performance upper bound of every code split (I_C, I_G)
//! on a grid spaced evenly in log2, as the paper's axes are. Pairs Lemma 2
//! rules out (both intensities above I, or both below) have no value.

use crate::intensity::parts;
use crate::model::{System, Transfers, Work};
use serde::Serialize;

/// The bound over a grid of (I_C, I_G).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Surface {
    /// I of the application the plot is for.
    pub intensity: f64,
    /// The grid's I_C values (columns) and I_G values (rows), ascending.
    pub i_c: Vec<f64>,
    pub i_g: Vec<f64>,
    /// `performance[row][column]`: flops/s at (I_C = i_c[column],
    /// I_G = i_g[row]); `None` where no split has those intensities.
    pub performance: Vec<Vec<Option<f64>>>,
}

/// Where the surface is highest.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Peak {
    pub i_c: f64,
    pub i_g: f64,
    pub performance: f64,
}

/// The bound of every split on a `steps` × `steps` grid spanning
/// I/`span`…I·`span` (`span` > 1) on both axes; an empty grid where I is 0
/// or infinite. With transfers counted, each side's
/// data over its link is in proportion to its traffic: D_side = N_b-side ·
/// D/N_b of `application` (the paper's surface is `Transfers::Ignored`, where
/// this is eq. 19 at every point).
pub fn surface(
    system: &System,
    application: &Work,
    transfers: Transfers,
    span: f64,
    steps: usize,
) -> Surface {
    let intensity = application.intensity();
    let transfer_per_byte = if application.bytes > 0.0 {
        application.transfer / application.bytes
    } else {
        0.0
    };
    // No plane to draw for an application without traffic (I infinite) or
    // without work (I = 0), nor for a span that does not widen.
    let axis = if intensity.is_finite() && intensity > 0.0 && span > 1.0 {
        log2_axis(intensity / span, intensity * span, steps)
    } else {
        Vec::new()
    };
    let performance = axis
        .iter()
        .map(|&i_g| {
            axis.iter()
                .map(|&i_c| {
                    let (on_c, on_g) = parts(intensity, i_c, i_g)?.work(transfer_per_byte);
                    Some(system.bound(&on_c, &on_g, transfers).performance)
                })
                .collect()
        })
        .collect();
    Surface { intensity, i_c: axis.clone(), i_g: axis, performance }
}

/// `steps` values from `lo` to `hi`, evenly spaced in log2.
fn log2_axis(lo: f64, hi: f64, steps: usize) -> Vec<f64> {
    let (a, b) = (lo.log2(), hi.log2());
    let last = steps.saturating_sub(1).max(1) as f64;
    (0..steps)
        .map(|k| (a + (b - a) * k as f64 / last).exp2())
        .collect()
}

impl Surface {
    /// The highest bound on the grid: the most any code split of this
    /// application can reach (approached as I_G nears I, where G takes
    /// nearly all the work).
    pub fn peak(&self) -> Option<Peak> {
        let mut peak: Option<Peak> = None;
        for (row, &i_g) in self.performance.iter().zip(&self.i_g) {
            for (value, &i_c) in row.iter().zip(&self.i_c) {
                if let Some(performance) = *value {
                    if !peak.is_some_and(|p| p.performance >= performance) {
                        peak = Some(Peak { i_c, i_g, performance });
                    }
                }
            }
        }
        peak
    }

    /// The highest and lowest value on the grid.
    pub fn range(&self) -> Option<(f64, f64)> {
        let values = self.performance.iter().flatten().flatten().copied();
        values.fold(None, |range, v| match range {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intensity::code_split_bound;
    use crate::model::Processor;

    fn system() -> System {
        System {
            c: Processor::new("c", 13.6e9, 15.2e9, None).unwrap(),
            g: Processor::new("g", 526e9, 67.6e9, Some(8e9)).unwrap(),
        }
    }

    #[test]
    fn the_papers_surface_is_eq_19_where_lemma_2_allows_and_empty_elsewhere() {
        let application = Work::new(4.4e9, 1e9, 0.0).unwrap();
        let s = surface(&system(), &application, Transfers::Ignored, 16.0, 33);
        assert_eq!(s.i_c.len(), 33);
        assert!((s.i_c[0] - 4.4 / 16.0).abs() < 1e-12);
        assert!((s.i_c[32] - 4.4 * 16.0).abs() < 1e-9);
        let (mut valued, mut empty) = (0, 0);
        for (row, &i_g) in s.performance.iter().zip(&s.i_g) {
            for (value, &i_c) in row.iter().zip(&s.i_c) {
                match (value, code_split_bound(&system(), 4.4, i_c, i_g)) {
                    (Some(v), Some(eq19)) => {
                        assert!((v / eq19 - 1.0).abs() < 1e-12);
                        valued += 1;
                    }
                    (None, None) => empty += 1,
                    other => panic!("({i_c}, {i_g}): {other:?}"),
                }
            }
        }
        // Two opposite quadrants of 16 × 16 cells each; the rest is empty.
        assert_eq!(valued, 2 * 16 * 16);
        assert_eq!(empty, 33 * 33 - valued);
    }

    #[test]
    fn the_surface_peaks_where_both_devices_finish_together() {
        let system = system();
        let application = Work::new(4.4e9, 1e9, 0.0).unwrap();
        let s = surface(&system, &application, Transfers::Ignored, 16.0, 129);
        let peak = s.peak().unwrap();
        let (on_c, on_g) = parts(4.4, peak.i_c, peak.i_g).unwrap().work(0.0);
        let bound = system.bound(&on_c, &on_g, Transfers::Ignored);
        // Grid steps are 2^(1/16) apart: the best cell is balanced to a few %.
        assert!((bound.time_c / bound.time_g - 1.0).abs() < 0.1, "{bound:?}");
        // C has bandwidth to spare but little compute: it takes the part
        // below I, G the part above, and together they beat the perfect
        // data partition (P_C + P_G = 13.6 + 297.4 GFLOPS).
        assert!(peak.i_c < 4.4 && peak.i_g > 4.4, "{peak:?}");
        assert!(peak.performance > 350e9, "{peak:?}");
        let (lo, hi) = s.range().unwrap();
        assert_eq!(hi, peak.performance);
        assert!(lo > 0.0 && lo < hi);
    }

    #[test]
    fn counted_transfers_lower_every_point_where_g_has_work() {
        let application = Work::new(4.4e9, 1e9, 2e8).unwrap();
        let ignored = surface(&system(), &application, Transfers::Ignored, 8.0, 17);
        let counted = surface(&system(), &application, Transfers::Counted, 8.0, 17);
        for (a, b) in ignored
            .performance
            .iter()
            .flatten()
            .zip(counted.performance.iter().flatten())
        {
            match (a, b) {
                (Some(a), Some(b)) => assert!(b <= a),
                (None, None) => {}
                other => panic!("{other:?}"),
            }
        }
        assert!(counted.peak().unwrap().performance < ignored.peak().unwrap().performance);
    }
}
