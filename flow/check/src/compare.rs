//! The comparison engine: each metric of each kernel, old against new,
//! judged by its rule and its direction.

use crate::baseline::{Baseline, KernelBaseline};
use crate::metric::{Direction, Group, Sampled, Value};
use crate::suite::{Suite, Tolerance, REAL_EPSILON};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Timing tolerance when the suite sets none: this many times the
/// baseline's spread...
pub const SPREAD_FACTOR: f64 = 3.0;
/// ...but never tighter than this,
pub const MIN_TIMING_TOLERANCE: f64 = 0.02;
/// and this when the baseline knows no spread.
pub const DEFAULT_TIMING_TOLERANCE: f64 = 0.10;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Improvement,
    /// Beyond tolerance in a metric with no better direction (I).
    Changed,
    New,
    Missing,
    Regression,
    /// The kernel could not be measured at all.
    Failed,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Improvement => "improvement",
            Verdict::Changed => "changed",
            Verdict::New => "new",
            Verdict::Missing => "missing",
            Verdict::Regression => "REGRESSION",
            Verdict::Failed => "FAILED",
        }
    }

    pub fn fails(self) -> bool {
        matches!(self, Verdict::Regression | Verdict::Failed)
    }
}

/// What one kernel measured now.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// The manifest's key in the suite and baseline.
    pub key: String,
    pub kernel: String,
    /// The counts, or why the kernel could not be counted.
    pub counts: Result<BTreeMap<String, Value>, String>,
    /// Device → T, F, R, E; `None` when this check timed nothing.
    pub devices: Option<BTreeMap<String, BTreeMap<String, Sampled>>>,
}

/// One line of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub key: String,
    pub kernel: String,
    /// `None`: the row is about the kernel as a whole (new, missing, failed).
    #[serde(serialize_with = "group_name")]
    pub group: Option<Group>,
    pub metric: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    pub old: Option<Value>,
    pub new: Option<Value>,
    pub rule: String,
    pub verdict: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn group_name<S: serde::Serializer>(group: &Option<Group>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(group.map_or("kernel", Group::name))
}

impl Row {
    /// "W.total", or "T@pocl-cpu" for a device metric.
    pub fn label(&self) -> String {
        match &self.device {
            Some(device) => format!("{}@{device}", self.metric),
            None => self.metric.clone(),
        }
    }

    /// new − old and the relative change, where both exist.
    pub fn delta(&self) -> Option<(f64, Option<f64>)> {
        let (old, new) = (self.old?.as_f64(), self.new?.as_f64());
        let relative = (old != 0.0).then(|| (new - old) / old.abs());
        Some((new - old, relative))
    }

    /// The JUnit test case the row belongs to.
    pub fn case(&self) -> String {
        match (self.group, &self.device) {
            (None, _) => "kernel".into(),
            (Some(_), Some(device)) => format!("timing@{device}"),
            (Some(group), None) => group.name().into(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    pub kernels: usize,
    pub compared: usize,
    pub regressions: usize,
    pub improvements: usize,
    pub changed: usize,
    pub new: usize,
    pub missing: usize,
    pub failed: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub summary: Summary,
    /// Every compared metric, passes included, by kernel then metric.
    pub rows: Vec<Row>,
}

impl Comparison {
    pub fn fails(&self) -> bool {
        self.rows.iter().any(|r| r.verdict.fails())
    }

    /// Rows that are not a plain pass.
    pub fn changes(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.verdict != Verdict::Pass)
    }
}

/// Compares `measured` against `baseline` under the suite's rules.
pub fn compare(suite: &Suite, baseline: Option<&Baseline>, measured: &[Measurement]) -> Comparison {
    let mut rows = Vec::new();
    let whole = |m_key: &str, kernel: &str, verdict, note: String| Row {
        key: m_key.to_string(),
        kernel: kernel.to_string(),
        group: None,
        metric: "kernel".into(),
        device: None,
        old: None,
        new: None,
        rule: String::new(),
        verdict,
        note: Some(note),
    };
    for m in measured {
        let counts = match &m.counts {
            Ok(counts) => counts,
            Err(why) => {
                rows.push(whole(&m.key, &m.kernel, Verdict::Failed, why.clone()));
                continue;
            }
        };
        let Some(old) = baseline.and_then(|b| b.kernels.get(&m.key)) else {
            rows.push(whole(
                &m.key,
                &m.kernel,
                Verdict::New,
                "not in the baseline".into(),
            ));
            continue;
        };
        compare_counts(suite, m, old, counts, &mut rows);
        if let Some(devices) = &m.devices {
            compare_devices(suite, m, old, devices, &mut rows);
        }
    }
    if let Some(baseline) = baseline {
        for (key, old) in &baseline.kernels {
            if !measured.iter().any(|m| &m.key == key) {
                rows.push(whole(
                    key,
                    &old.kernel,
                    Verdict::Missing,
                    "in the baseline, not in the suite".into(),
                ));
            }
        }
    }
    let count = |v: Verdict| rows.iter().filter(|r| r.verdict == v).count();
    let summary = Summary {
        kernels: measured.len(),
        compared: rows.iter().filter(|r| r.group.is_some()).count(),
        regressions: count(Verdict::Regression),
        improvements: count(Verdict::Improvement),
        changed: count(Verdict::Changed),
        new: count(Verdict::New),
        missing: count(Verdict::Missing),
        failed: count(Verdict::Failed),
    };
    Comparison { summary, rows }
}

fn compare_counts(
    suite: &Suite,
    m: &Measurement,
    old: &KernelBaseline,
    new: &BTreeMap<String, Value>,
    rows: &mut Vec<Row>,
) {
    let names: BTreeSet<&String> = old.counts.keys().chain(new.keys()).collect();
    for name in names {
        let Some(group) = Group::of(name) else {
            continue;
        };
        if suite.ignores(name, None) {
            continue;
        }
        // An opcode the kernel no longer (or newly) executes ran 0 times.
        let absent = (group == Group::Ops).then_some(Value::Count(0));
        let before = old.counts.get(name).copied().or(absent);
        let after = new.get(name).copied().or(absent);
        let tolerance = suite
            .rule_for(name, None)
            .map_or(Tolerance::Exact, |r| r.tolerance);
        rows.push(Row {
            key: m.key.clone(),
            kernel: m.kernel.clone(),
            group: Some(group),
            metric: name.clone(),
            device: None,
            old: before,
            new: after,
            rule: tolerance.describe(),
            verdict: judge(before, after, tolerance, group.direction()),
            note: None,
        });
    }
}

fn compare_devices(
    suite: &Suite,
    m: &Measurement,
    old: &KernelBaseline,
    new: &BTreeMap<String, BTreeMap<String, Sampled>>,
    rows: &mut Vec<Row>,
) {
    let devices: BTreeSet<&String> = old.devices.keys().chain(new.keys()).collect();
    let empty = BTreeMap::new();
    for device in devices {
        let before_all = old.devices.get(device).unwrap_or(&empty);
        let after_all = new.get(device).unwrap_or(&empty);
        let names: BTreeSet<&String> = before_all.keys().chain(after_all.keys()).collect();
        for name in names {
            let Some(group) = Group::of(name) else {
                continue;
            };
            if suite.ignores(name, Some(device)) {
                continue;
            }
            let before = before_all.get(name);
            let after = after_all.get(name);
            let (tolerance, rule) = match suite.rule_for(name, Some(device)) {
                Some(rule) => (rule.tolerance, rule.tolerance.describe()),
                None => spread_tolerance(before.and_then(|b| b.spread)),
            };
            let value = |s: Option<&Sampled>| s.map(|s| Value::Real(s.value));
            rows.push(Row {
                key: m.key.clone(),
                kernel: m.kernel.clone(),
                group: Some(group),
                metric: name.clone(),
                device: Some(device.clone()),
                old: value(before),
                new: value(after),
                rule,
                verdict: judge(value(before), value(after), tolerance, group.direction()),
                note: None,
            });
        }
    }
}

/// The default timing tolerance from the baseline's measured spread.
fn spread_tolerance(spread: Option<f64>) -> (Tolerance, String) {
    match spread {
        Some(spread) => {
            let relative = (SPREAD_FACTOR * spread).max(MIN_TIMING_TOLERANCE);
            (
                Tolerance::Relative(relative),
                format!("{} (3× spread)", Tolerance::Relative(relative).describe()),
            )
        }
        None => (
            Tolerance::Relative(DEFAULT_TIMING_TOLERANCE),
            format!(
                "{} (default)",
                Tolerance::Relative(DEFAULT_TIMING_TOLERANCE).describe()
            ),
        ),
    }
}

/// The verdict on one metric.
pub fn judge(
    old: Option<Value>,
    new: Option<Value>,
    tolerance: Tolerance,
    direction: Direction,
) -> Verdict {
    let (old, new) = match (old, new) {
        (Some(old), Some(new)) => (old, new),
        (None, Some(_)) => return Verdict::New,
        (Some(_), None) => return Verdict::Missing,
        (None, None) => return Verdict::Pass,
    };
    let within = match (tolerance, old, new) {
        (Tolerance::Exact, Value::Count(a), Value::Count(b)) => a == b,
        (Tolerance::Exact, a, b) => {
            (b.as_f64() - a.as_f64()).abs()
                <= REAL_EPSILON * a.as_f64().abs().max(f64::MIN_POSITIVE)
        }
        (Tolerance::Relative(r), a, b) => (b.as_f64() - a.as_f64()).abs() <= r * a.as_f64().abs(),
    };
    if within {
        return Verdict::Pass;
    }
    let grew = new.as_f64() > old.as_f64();
    match (direction, grew) {
        (Direction::Neutral, _) => Verdict::Changed,
        (Direction::LowerIsBetter, true) | (Direction::HigherIsBetter, false) => {
            Verdict::Regression
        }
        _ => Verdict::Improvement,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOWER: Direction = Direction::LowerIsBetter;
    const HIGHER: Direction = Direction::HigherIsBetter;

    #[test]
    fn direction_decides_regression_or_improvement() {
        let c = |n| Some(Value::Count(n));
        assert_eq!(
            judge(c(100), c(100), Tolerance::Exact, LOWER),
            Verdict::Pass
        );
        assert_eq!(
            judge(c(100), c(101), Tolerance::Exact, LOWER),
            Verdict::Regression
        );
        assert_eq!(
            judge(c(100), c(99), Tolerance::Exact, LOWER),
            Verdict::Improvement
        );
        assert_eq!(
            judge(c(100), c(105), Tolerance::Relative(0.05), LOWER),
            Verdict::Pass
        );
        assert_eq!(
            judge(c(100), c(106), Tolerance::Relative(0.05), LOWER),
            Verdict::Regression
        );
        let r = |x| Some(Value::Real(x));
        assert_eq!(
            judge(r(2e9), r(1.5e9), Tolerance::Relative(0.1), HIGHER),
            Verdict::Regression
        );
        assert_eq!(
            judge(r(2e9), r(2.5e9), Tolerance::Relative(0.1), HIGHER),
            Verdict::Improvement
        );
        assert_eq!(
            judge(r(0.1), r(0.1 + 1e-12), Tolerance::Exact, HIGHER),
            Verdict::Pass
        );
        assert_eq!(
            judge(r(0.4), r(0.8), Tolerance::Exact, Direction::Neutral),
            Verdict::Changed
        );
        assert_eq!(judge(None, c(1), Tolerance::Exact, LOWER), Verdict::New);
        assert_eq!(judge(c(1), None, Tolerance::Exact, LOWER), Verdict::Missing);
    }

    #[test]
    fn the_default_timing_tolerance_follows_the_spread() {
        assert_eq!(spread_tolerance(Some(0.04)).0, Tolerance::Relative(0.12));
        assert_eq!(
            spread_tolerance(Some(0.001)).0,
            Tolerance::Relative(MIN_TIMING_TOLERANCE)
        );
        assert_eq!(
            spread_tolerance(None).0,
            Tolerance::Relative(DEFAULT_TIMING_TOLERANCE)
        );
        assert_eq!(spread_tolerance(Some(0.04)).1, "±12% (3× spread)");
    }
}
