//! clflow's regression check: a suite names kernel manifests and how each
//! metric is judged; a baseline holds what they measured when last
//! accepted; the comparison says, metric by metric, what changed and
//! whether it is a regression (fails the check), an improvement (never
//! fails), new or missing.
//!
//! Counts (W, Q, I, the op histogram) are deterministic and compared
//! exactly by default; timings (T, F, R, E, per device) within a tolerance
//! that defaults to three times the spread the baseline measured (see
//! [`compare`]). W, Q, the histogram, T and E going up are regressions; F
//! and R going down are; I = W/Q is reported when it changes but never
//! judged (W and Q carry the verdict). A suite with a `cache` adds the
//! DRAM traffic through it and the uncoalesced bytes (Q.dram,
//! Q.uncoalesced, lower is better) and I.dram (reported, never judged).
//!
//! The crate measures nothing itself: the caller counts each kernel
//! ([`count_metrics`], with the traffic summary where the suite has a
//! cache) and times it ([`device_metrics`]), then calls
//! [`compare()`] and renders the result ([`render`]).

mod baseline;
pub mod compare;
mod error;
mod metric;
pub mod render;
mod suite;

pub use baseline::{Baseline, KernelBaseline, BASELINE_SCHEMA};
pub use compare::{compare, judge, Comparison, Measurement, Row, Summary, Verdict};
pub use error::{CheckError, Result};
pub use metric::{count_metrics, device_metrics, Direction, Group, Sampled, TimedRun, Value};
pub use suite::{Rule, Selector, Suite, SuiteManifest, Tolerance};

/// The baseline `--update` writes: the measured kernels' counts, and their
/// timings on the devices measured now; timings on devices not measured
/// this time are kept from `previous`, so a count-only update keeps them.
pub fn updated_baseline(
    suite: &Suite,
    previous: Option<&Baseline>,
    measured: &[Measurement],
) -> Baseline {
    let mut baseline = Baseline::new(&suite.ops, suite.line_bytes, suite.cache);
    for m in measured {
        let Ok(counts) = &m.counts else { continue };
        let mut devices = previous
            .and_then(|p| p.kernels.get(&m.key))
            .map(|k| k.devices.clone())
            .unwrap_or_default();
        if let Some(now) = &m.devices {
            devices.extend(now.clone());
        }
        baseline.kernels.insert(
            m.key.clone(),
            KernelBaseline { kernel: m.kernel.clone(), counts: counts.clone(), devices },
        );
    }
    baseline
}
