//! Counting a launch too large to count whole: a uniform random sample of
//! its work-groups, extrapolated, with a confidence interval.
//!
//! The launch's work-groups fall in two strata. Those on the NDRange's
//! boundary, the first and the last of each dimension, are where kernels
//! differ (a stencil's edges, a partial last work-group the local size
//! leaves), and few, so every one of them runs and counts exactly. Of the
//! interior work-groups, `n` of `N` chosen uniformly without replacement
//! run; their counts (the histogram, W, Q, per source line) are scaled by
//! `N / n`. Each sampled work-group's W and Q are kept, and the interval on
//! each total is Student's t over them with the finite-population
//! correction: `± t(1 - (1 - c)/2, n - 1) · N · s / √n · √(1 - n/N)`,
//! centred on the //! extrapolated count. Work-groups do vary (lookup3's keys have random
//! lengths); a kernel whose work-groups all do the same gets a zero-width
//! interval, and an exact value.
//!
//! The compulsory traffic is estimated apart, with no interval: distinct
//! lines are not additive over work-groups (neighbours share lines), so
//! each buffer's lines touched are scaled by the launch's work-groups over
//! the ones run, and capped at the buffer's lines: right for work-groups
//! that touch lines of their own, and for ones that share a buffer
//! whole. Output buffers and printf hold what the sampled work-groups did.
//!
//! The same seed picks the same work-groups in every clflow version (the
//! generator is written here, not taken from a crate that may change it),
//! so a sampled count is as reproducible as an exact one.

use crate::counts::{Counts, OpSet};
use crate::exec::{self, Fault, Geometry, Launched, Partial, Selection};
use crate::Progress;
use std::collections::HashSet;
use std::sync::atomic::Ordering;

/// The confidence of a sampled count's intervals.
pub const CONFIDENCE: f64 = 0.95;

/// How much of a launch to count (`RunOptions::sample`).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub size: SampleSize,
    /// Picks the work-groups: the same seed, the same sample.
    pub seed: u64,
    /// The op set whose W the interval is on.
    pub ops: OpSet,
}

/// A sample's size: a fraction of the interior work-groups, or a number of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SampleSize {
    Fraction(f64),
    Groups(u64),
}

impl std::str::FromStr for SampleSize {
    type Err = String;

    /// `0.05`, `5%` or `200-groups`.
    fn from_str(text: &str) -> Result<SampleSize, String> {
        let fraction = |f: f64| {
            (f > 0.0 && f <= 1.0)
                .then_some(SampleSize::Fraction(f))
                .ok_or_else(|| format!("`{text}`: a fraction is above 0 and at most 1 (100%)"))
        };
        if let Some(groups) = text.strip_suffix("-groups") {
            return match groups.parse::<u64>() {
                Ok(n) if n >= 2 => Ok(SampleSize::Groups(n)),
                _ => Err(format!(
                    "`{text}`: N-groups takes a whole number of at least 2"
                )),
            };
        }
        let bad = || {
            format!("`{text}` is not a fraction (0.05), a percentage (5%) or N-groups (200-groups)")
        };
        match text.strip_suffix('%') {
            Some(percent) => fraction(percent.parse::<f64>().map_err(|_| bad())? / 100.0),
            None => fraction(text.parse::<f64>().map_err(|_| bad())?),
        }
    }
}

/// One total extrapolated from a sample: the estimate, and the interval
/// that holds the exact value at [`SampleReport::confidence`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Interval {
    pub estimate: u64,
    pub low: u64,
    pub high: u64,
}

/// How a sampled count was made (`RunResult::sample`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SampleReport {
    /// The launch's work-groups.
    pub work_groups: u64,
    /// Work-groups on the NDRange's boundary, all counted exactly.
    pub boundary_groups: u64,
    /// Interior work-groups counted, of `interior_groups`.
    pub sampled_groups: u64,
    pub interior_groups: u64,
    pub seed: u64,
    pub confidence: f64,
    /// W over the sample's op set (`Sample::ops`).
    #[serde(rename = "W")]
    pub w: Interval,
    /// Q accessed.
    #[serde(rename = "Q")]
    pub q: Interval,
}

/// The work-groups a sampled run takes, by linear index, ascending.
struct Plan {
    boundary: Vec<u64>,
    sampled: Vec<u64>,
    interior: u64,
}

fn plan(g: &Geometry, size: SampleSize, seed: u64) -> Plan {
    // The interior is a box: all but the first and last group of each
    // dimension that has more than one.
    let first: [u64; 3] = std::array::from_fn(|d| u64::from(g.groups[d] > 1));
    let span: [u64; 3] = std::array::from_fn(|d| g.groups[d].saturating_sub(2 * first[d]));
    let interior: u64 = span.iter().product();
    let total: u64 = g.groups.iter().product();
    let inside = |i: u64| {
        let at = g.group_of(i);
        (0..3).all(|d| at[d] >= first[d] && at[d] < first[d] + span[d])
    };
    let boundary = (0..total).filter(|&i| !inside(i)).collect();
    let n = match size {
        SampleSize::Fraction(f) => (f * interior as f64).ceil() as u64,
        SampleSize::Groups(n) => n,
    };
    let [sx, sy, _] = span;
    let [gx, gy, _] = g.groups;
    let mut sampled: Vec<u64> = choose(interior, n.clamp(interior.min(2), interior), seed)
        .into_iter()
        .map(|f| {
            let at = [f % sx, (f / sx) % sy, f / (sx * sy)];
            let [x, y, z]: [u64; 3] = std::array::from_fn(|d| at[d] + first[d]);
            x + gx * (y + gy * z)
        })
        .collect();
    sampled.sort_unstable();
    Plan { boundary, sampled, interior }
}

/// `n` distinct numbers below `population`, uniformly (Floyd's algorithm:
/// one draw each, however close `n` is to `population`).
fn choose(population: u64, n: u64, seed: u64) -> Vec<u64> {
    let mut random = SplitMix(seed);
    let mut chosen = HashSet::with_capacity(n as usize);
    for j in population - n..population {
        let t = random.below(j + 1);
        if !chosen.insert(t) {
            chosen.insert(j);
        }
    }
    chosen.into_iter().collect()
}

/// SplitMix64: small, fast, and fixed here, so that a seed's sample never
/// changes.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Below `bound` (> 0), by the high half of a 128-bit product: a bias
    /// of at most `bound / 2^64`.
    fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(bound)) >> 64) as u64
    }
}

/// What a sampled run leaves for the report once its counts are made.
pub(crate) struct Sampled {
    plan: Plan,
    seed: u64,
    ops: OpSet,
    /// Each sampled work-group's [W, Q].
    tallies: Vec<[u64; 2]>,
}

/// Runs the boundary work-groups and a sample of the interior ones, and returns
/// the counts extrapolated to the whole launch.
pub(crate) fn run(
    launch: &Launched<'_>,
    sample: &Sample,
    threads: usize,
    progress: Option<&Progress>,
) -> Result<(Partial, Sampled), Fault> {
    let plan = plan(&launch.geometry, sample.size, sample.seed);
    if let Some(progress) = progress {
        let runs = plan.boundary.len() + plan.sampled.len();
        progress.total.store(runs as u64, Ordering::Relaxed);
    }
    let done = progress.map(|p| &p.done);
    let weights = block_weights(launch, &sample.ops);
    let exact = exec::run_groups(
        launch,
        Selection { groups: Some(&plan.boundary), tally: None },
        threads,
        None,
        done,
    )?;
    let mut sampled = exec::run_groups(
        launch,
        Selection { groups: Some(&plan.sampled), tally: Some(&weights) },
        threads,
        None,
        done,
    )?;
    let tallies = std::mem::take(&mut sampled.tallies);
    let factor = plan.interior as f64 / plan.sampled.len().max(1) as f64;
    let partial = exact.merge(scaled(sampled, factor));
    let sampled = Sampled { plan, seed: sample.seed, ops: sample.ops.clone(), tallies };
    Ok((partial, sampled))
}

/// Per block, the W over `ops` and the Q one execution adds.
fn block_weights(launch: &Launched<'_>, ops: &OpSet) -> Vec<[u64; 2]> {
    let p = launch.program;
    p.blocks
        .iter()
        .map(|block| {
            let w = block
                .work
                .iter()
                .filter(|(k, _)| ops.contains(&p.work_keys[*k as usize].0))
                .map(|(_, n)| n)
                .sum();
            [w, block.traffic.q()]
        })
        .collect()
}

/// A sample's counts times `factor`, rounded per block.
fn scaled(mut partial: Partial, factor: f64) -> Partial {
    for hits in &mut partial.hits {
        *hits = (*hits as f64 * factor).round() as u64;
    }
    partial.traffic = partial.traffic.scaled(factor);
    for traffic in &mut partial.line_traffic {
        *traffic = traffic.scaled(factor);
    }
    for predictor in &mut partial.branches {
        predictor.executed = (predictor.executed as f64 * factor).round() as u64;
        predictor.mispredicted = (predictor.mispredicted as f64 * factor).round() as u64;
    }
    for per_width in &mut partial.simd {
        for n in per_width.iter_mut().flatten() {
            *n = (*n as f64 * factor).round() as u64;
        }
    }
    partial
}

impl Sampled {
    /// The launch's work-groups over the ones run.
    pub(crate) fn line_scale(&self) -> f64 {
        let plan = &self.plan;
        let ran = plan.boundary.len() + plan.sampled.len();
        (plan.boundary.len() as f64 + plan.interior as f64) / ran.max(1) as f64
    }

    /// The report, its intervals centred on the extrapolated `counts`.
    pub(crate) fn report(&self, counts: &Counts) -> SampleReport {
        let plan = &self.plan;
        let column = |i: usize| self.tallies.iter().map(|t| t[i] as f64).collect::<Vec<_>>();
        SampleReport {
            work_groups: plan.boundary.len() as u64 + plan.interior,
            boundary_groups: plan.boundary.len() as u64,
            sampled_groups: plan.sampled.len() as u64,
            interior_groups: plan.interior,
            seed: self.seed,
            confidence: CONFIDENCE,
            w: interval(counts.w(&self.ops), &column(0), plan.interior),
            q: interval(counts.q_accessed(), &column(1), plan.interior),
        }
    }
}

/// The interval on a total of `population` work-groups' values, of which
/// `values` is a uniform sample, centred on `estimate`.
fn interval(estimate: u64, values: &[f64], population: u64) -> Interval {
    let n = values.len() as f64;
    let half = if values.len() < 2 {
        0.0
    } else {
        let mean = values.iter().sum::<f64>() / n;
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let population = population as f64;
        let correction = (1.0 - n / population).max(0.0);
        let t = students_t(1.0 - (1.0 - CONFIDENCE) / 2.0, n - 1.0);
        t * population * (variance / n * correction).sqrt()
    };
    Interval {
        estimate,
        low: (estimate as f64 - half).floor().max(0.0) as u64,
        high: (estimate as f64 + half).ceil() as u64,
    }
}

/// The `p` quantile of Student's t with `df` degrees of freedom.
fn students_t(p: f64, df: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    StudentsT::new(0.0, 1.0, df)
        .map(|t| t.inverse_cdf(p))
        .unwrap_or(f64::INFINITY)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry(global: [u64; 3], local: [u64; 3]) -> Geometry {
        Geometry {
            dims: 3,
            global,
            local,
            groups: std::array::from_fn(|d| global[d].div_ceil(local[d])),
            offset: [0; 3],
            sub_group: 32,
        }
    }

    #[test]
    fn sizes_are_fractions_percentages_or_groups() {
        assert_eq!("0.05".parse(), Ok(SampleSize::Fraction(0.05)));
        assert_eq!("5%".parse(), Ok(SampleSize::Fraction(0.05)));
        assert_eq!("200-groups".parse(), Ok(SampleSize::Groups(200)));
        assert!("0".parse::<SampleSize>().is_err());
        assert!("150%".parse::<SampleSize>().is_err());
        assert!("1-groups".parse::<SampleSize>().is_err());
        let bad = "half".parse::<SampleSize>().unwrap_err();
        assert!(bad.contains("N-groups"), "{bad}");
    }

    #[test]
    fn a_seed_always_picks_the_same_distinct_groups() {
        let a = choose(1000, 100, 7);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 100);
        assert!(sorted.iter().all(|&x| x < 1000));
        let mut b = choose(1000, 100, 7);
        b.sort_unstable();
        assert_eq!(sorted, b);
        let mut c = choose(1000, 100, 8);
        c.sort_unstable();
        assert_ne!(sorted, c);
        // The generator is fixed: this seed's first pick never changes.
        assert_eq!(SplitMix(1).next(), 0x910a_2dec_8902_5cc1);
        let mut all = choose(10, 10, 3);
        all.sort_unstable();
        assert_eq!(all, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn picks_are_uniform() {
        // Each of 10 numbers is picked 3 times in 10 over 20,000 samples
        // of 3: within 5% of 6,000 (about 10 standard deviations).
        let mut seen = [0u32; 10];
        for seed in 0..20_000 {
            for x in choose(10, 3, seed) {
                seen[x as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n.abs_diff(6000) < 300), "{seen:?}");
    }

    #[test]
    fn boundary_groups_all_run_and_interior_ones_are_sampled() {
        // 10 × 4 groups of 4 × 4; the last column (x = 9) is 2 wide.
        let g = geometry([38, 16, 1], [4, 4, 1]);
        let half = plan(&g, SampleSize::Fraction(0.5), 1);
        let mut boundary: Vec<u64> = (0..10).chain(30..40).collect();
        boundary.extend([10, 19, 20, 29]);
        boundary.sort_unstable();
        assert_eq!(half.boundary, boundary);
        assert_eq!(half.interior, 16);
        assert_eq!(half.sampled.len(), 8);
        assert!(half
            .sampled
            .iter()
            .all(|i| (1..9).contains(&(i % 10)) && (1..3).contains(&(i / 10))));
        assert!(half.sampled.windows(2).all(|w| w[0] < w[1]));
        // A sample never holds fewer than 2 groups, nor more than there are.
        assert_eq!(plan_len(&g, SampleSize::Groups(2)), 2);
        assert_eq!(plan_len(&g, SampleSize::Fraction(0.001)), 2);
        assert_eq!(plan_len(&g, SampleSize::Groups(1000)), 16);
        // One dimension: its first and last group.
        let line = plan(
            &geometry([1024, 1, 1], [64, 1, 1]),
            SampleSize::Groups(3),
            1,
        );
        assert_eq!((line.boundary, line.interior), (vec![0, 15], 14));
        assert!(line.sampled.iter().all(|i| (1..15).contains(i)));
        // Two groups a dimension: all boundary.
        let small = plan(&geometry([8, 8, 1], [4, 4, 1]), SampleSize::Groups(2), 1);
        assert_eq!((small.boundary.len(), small.interior), (4, 0));
        assert!(small.sampled.is_empty());
    }

    fn plan_len(g: &Geometry, size: SampleSize) -> usize {
        plan(g, size, 1).sampled.len()
    }

    #[test]
    fn intervals_follow_students_t_with_the_population_correction() {
        // Values 1..=4 of 8: mean 2.5, s² = 5/3, t(0.975, 3) = 3.182446;
        // half = 3.182446 · 8 · √(5/3 / 4 · (1 - 4/8)) = 11.6208.
        let i = interval(20, &[1.0, 2.0, 3.0, 4.0], 8);
        assert_eq!((i.low, i.high), (8, 32));
        assert!((students_t(0.975, 3.0) - 3.182_446).abs() < 1e-5);
        // Every work-group sampled, or all alike: exact.
        let all = interval(20, &[5.0, 5.0, 5.0, 5.0], 4);
        assert_eq!((all.low, all.high), (20, 20));
        let alike = interval(500, &[5.0, 5.0, 5.0], 100);
        assert_eq!((alike.low, alike.high), (500, 500));
    }
}
