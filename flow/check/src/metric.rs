//! The metrics a check compares: their names, groups, directions, and how
//! they are taken from the interpreter's counts and from device runs.
//!
//! Names are dotted paths: `W.int`, `W.fp32`, `W.fp64`, `W.fp16`, `W.total`
//! (the suite's op set), `Q.load`, `Q.store` (global and constant), `Q.constant`
//! (constant loads), `Q.accessed`, `Q.compulsory`,
//! `I.min`, `I.max`, `ops.<opcode>.<type>` (the histogram, in lanes), and on
//! devices `T` (s), `F` (OPS/s), `R` (OPS/s/W), `E` (J). Through a suite's
//! cache also `Q.dram` (bytes read from and written back to DRAM),
//! `Q.uncoalesced` (bytes of strided and scattered accesses) and `I.dram`
//! (W.total / Q.dram).

use clflow_counts::CountReport;
use clflow_metrics::{evaluate, DeviceProfile, Figure, KernelCounts, OpKind, Run, Unit};
use clflow_traffic::TrafficSummary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// A measured value: counts stay integers so the baseline shows them exactly.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Count(u64),
    Real(f64),
}

impl Value {
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Count(n) => n as f64,
            Value::Real(x) => x,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Count(n) => write!(f, "{n}"),
            Value::Real(x) => f.write_str(&clflow_metrics::format_number(*x)),
        }
    }
}

/// Which way is worse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// More is a regression (W, Q, ops, T, E).
    LowerIsBetter,
    /// Less is a regression (F, R).
    HigherIsBetter,
    /// Neither: I = W/Q moves whenever W or Q does, and those carry the
    /// verdict (I up from more work is no improvement), so a change in I is
    /// reported and never judged.
    Neutral,
}

/// The metric groups: a JUnit test case is one kernel × group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Group {
    W,
    Q,
    I,
    Ops,
    T,
    F,
    R,
    E,
}

impl Group {
    pub const COUNTS: [Group; 4] = [Group::W, Group::Q, Group::I, Group::Ops];
    pub const DEVICE: [Group; 4] = [Group::T, Group::F, Group::R, Group::E];

    pub fn name(self) -> &'static str {
        match self {
            Group::W => "W",
            Group::Q => "Q",
            Group::I => "I",
            Group::Ops => "ops",
            Group::T => "T",
            Group::F => "F",
            Group::R => "R",
            Group::E => "E",
        }
    }

    /// The group a metric name belongs to.
    pub fn of(metric: &str) -> Option<Group> {
        let head = metric.split('.').next()?;
        [Group::COUNTS, Group::DEVICE]
            .concat()
            .into_iter()
            .find(|g| g.name() == head)
    }

    pub fn is_device(self) -> bool {
        Group::DEVICE.contains(&self)
    }

    pub fn direction(self) -> Direction {
        match self {
            Group::F | Group::R => Direction::HigherIsBetter,
            Group::I => Direction::Neutral,
            _ => Direction::LowerIsBetter,
        }
    }

    /// The fixed metric names of a group (`ops` has open-ended names).
    pub fn members(self) -> &'static [&'static str] {
        match self {
            Group::W => &["W.int", "W.fp32", "W.fp64", "W.fp16", "W.total"],
            Group::Q => &[
                "Q.load",
                "Q.store",
                "Q.constant",
                "Q.accessed",
                "Q.compulsory",
                "Q.dram",
                "Q.uncoalesced",
            ],
            Group::I => &["I.min", "I.max", "I.dram"],
            Group::Ops => &[],
            Group::T => &["T"],
            Group::F => &["F"],
            Group::R => &["R"],
            Group::E => &["E"],
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            Group::W | Group::Ops => "ops",
            Group::Q => "bytes",
            Group::I => "OPS/B",
            Group::T => "s",
            Group::F => "ops/s",
            Group::R => "ops/s/W",
            Group::E => "J",
        }
    }
}

/// The interpreter's counts of one kernel, by metric name, with the traffic
/// through the suite's cache where the kernel ran through one.
pub fn count_metrics(
    report: &CountReport,
    traffic: Option<&TrafficSummary>,
) -> BTreeMap<String, Value> {
    let mut metrics = BTreeMap::new();
    let w = &report.w;
    let q = &report.q;
    for (name, value) in [
        ("W.int", w.int),
        ("W.fp32", w.fp32),
        ("W.fp64", w.fp64),
        ("W.fp16", w.fp16),
        ("W.total", w.total),
        ("Q.load", q.load_bytes),
        ("Q.store", q.store_bytes),
        ("Q.constant", q.constant_load_bytes),
        ("Q.accessed", q.accessed),
        ("Q.compulsory", q.compulsory),
    ] {
        metrics.insert(name.to_string(), Value::Count(value));
    }
    for (name, value) in [("I.min", report.i.min), ("I.max", report.i.max)] {
        if let Some(value) = value {
            metrics.insert(name.to_string(), Value::Real(value));
        }
    }
    if let Some(traffic) = traffic {
        let dram = traffic.dram.total();
        metrics.insert("Q.dram".into(), Value::Count(dram));
        metrics.insert(
            "Q.uncoalesced".into(),
            Value::Count(traffic.coalescing.bytes.uncoalesced()),
        );
        // No DRAM traffic, no intensity there (as I.min without Q).
        if dram > 0 {
            metrics.insert("I.dram".into(), Value::Real(w.total as f64 / dram as f64));
        }
    }
    for (op, types) in &report.ops {
        for (ty, lanes) in types {
            metrics.insert(format!("ops.{op}.{ty}"), Value::Count(*lanes));
        }
    }
    metrics
}

/// A device metric with the spread of its measurement (coefficient of
/// variation, 0.02 = 2 %), where known.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sampled {
    pub value: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<f64>,
}

/// One timed run of a kernel on a device, as `clflow run` or a recorded
/// `results.json` gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedRun {
    pub run: Run,
    pub driver: Option<String>,
    /// The coefficient of variation of the run's own repeated launches.
    pub time_spread: Option<f64>,
}

/// T, F, R and E of a kernel on one device from one or more runs: the
/// median of each, its spread the coefficient of variation across runs, or
/// (one run) the run's own time spread.
pub fn device_metrics(work: u64, runs: &[&TimedRun]) -> BTreeMap<String, Sampled> {
    let kernel = KernelCounts {
        kernel: String::new(),
        ops: OpKind::Int,
        op_set: None,
        work: Figure::measured(work as f64, Unit::Ops, "clflow interpreter"),
        traffic_accessed: Figure::measured(0.0, Unit::Bytes, "clflow interpreter"),
        traffic_compulsory: None,
        hotspots: Default::default(),
    };
    let device = DeviceProfile {
        name: String::new(),
        kind: None,
        measured: Default::default(),
        datasheet: Default::default(),
    };
    let mut samples: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for timed in runs {
        let m = evaluate(&kernel, &device, Some(&timed.run));
        for (name, figure) in [
            ("T", &m.time),
            ("F", &m.performance),
            ("R", &m.perf_per_watt),
            ("E", &m.energy),
        ] {
            if let Some(figure) = figure {
                samples.entry(name).or_default().push(figure.value);
            }
        }
    }
    let own_spread = match runs {
        [one] => one.time_spread,
        _ => None,
    };
    samples
        .into_iter()
        .map(|(name, values)| {
            let spread = if values.len() > 1 {
                coefficient_of_variation(&values)
            } else {
                own_spread
            };
            (name.to_string(), Sampled { value: median(&values), spread })
        })
        .collect()
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    } else {
        sorted[mid]
    }
}

fn coefficient_of_variation(values: &[f64]) -> Option<f64> {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if mean == 0.0 {
        return None;
    }
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(variance.sqrt() / mean.abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clflow_counts::{AccessKind, AccessSink, GlobalAccess, TraceBuffer};
    use clflow_traffic::TrafficAnalysis;

    fn timed(seconds: f64, watts: Option<f64>) -> TimedRun {
        let mut run = Run::new("vadd", "gpu");
        run.time = Some(Figure::measured(seconds, Unit::Seconds, "events"));
        run.power_peak = watts.map(|w| Figure::measured(w, Unit::Watts, "sensor"));
        TimedRun { run, driver: None, time_spread: Some(0.01) }
    }

    #[test]
    fn device_metrics_follow_the_papers_equations() {
        let run = timed(2e-3, Some(50.0));
        let m = device_metrics(4_000_000, &[&run]);
        assert_eq!(m["T"].value, 2e-3);
        assert_eq!(m["F"].value, 2e9);
        assert_eq!(m["R"].value, 2e9 / 50.0);
        assert!((m["E"].value - 0.1).abs() < 1e-12);
        assert_eq!(m["T"].spread, Some(0.01));
    }

    #[test]
    fn several_runs_give_the_median_and_their_spread() {
        let runs = [timed(1.0, None), timed(3.0, None), timed(2.0, None)];
        let m = device_metrics(10, &runs.iter().collect::<Vec<_>>());
        assert_eq!(m["T"].value, 2.0);
        assert_eq!(m["T"].spread, Some(0.5)); // sd 1, mean 2
        assert!(!m.contains_key("E"), "no power, no energy");
    }

    /// The interpreter's report of a kernel that did `w_total` ops and
    /// read `load_bytes`; only the fields `count_metrics` reads matter.
    fn count_report(w_total: u64, load_bytes: u64) -> CountReport {
        use clflow_counts::{IntensityReport, SpaceReport, TrafficReport, WorkReport};
        let none = SpaceReport { load_bytes: 0, store_bytes: 0 };
        CountReport {
            kernel: "k".into(),
            work_items: 2048,
            work_groups: 1,
            local_size: [2048, 1, 1],
            ops: BTreeMap::new(),
            w: WorkReport {
                set: "arith".into(),
                int: 0,
                fp32: w_total,
                fp64: 0,
                fp16: 0,
                total: w_total,
            },
            w_by_role: clflow_counts::ByRole { work: w_total, ..Default::default() },
            arith_by_role: clflow_counts::ByRole { work: w_total, ..Default::default() },
            ops_by_role: BTreeMap::new(),
            q: TrafficReport {
                load_bytes,
                store_bytes: 0,
                accessed: load_bytes,
                compulsory: load_bytes,
                compulsory_read: load_bytes,
                compulsory_written: 0,
                line_bytes: 64,
                global_load_bytes: load_bytes,
                global_store_bytes: 0,
                constant_load_bytes: 0,
            },
            i: IntensityReport::new(
                Some(w_total as f64 / load_bytes as f64),
                Some(w_total as f64 / load_bytes as f64),
            ),
            local: none.clone(),
            private: none,
            steps: 0,
            lines: Vec::new(),
            simd: Vec::new(),
            chains: None,
            loop_barriers: None,
            branches: None,
            gathers: None,
        }
    }

    /// `count` 4-byte loads from an 8 KiB buffer at offsets `stride` bytes
    /// apart, 16 work-items a dispatch, from dispatch `first` on.
    fn loads(site: u32, first: u32, stride: u64, count: u64) -> Vec<GlobalAccess> {
        (0..count)
            .map(|i| GlobalAccess {
                fenced: 0,
                offset: stride * i,
                buffer: 0,
                bytes: 4,
                site,
                dispatch: first + (i / 16) as u32,
                item: (i % 16) as u32,
                kind: AccessKind::Load,
                atomic: false,
                phase: 0,
                lanes: 1,
                contiguous: false,
                runs: 1,
                run_step: 0,
            })
            .collect()
    }

    fn traffic_of(accesses: &[GlobalAccess], cache: &str) -> TrafficSummary {
        let mut analysis = TrafficAnalysis::new(&[64]);
        analysis.buffers(&[TraceBuffer {
            label: "a".into(),
            space: "__global",
            bytes: 8192,
            read_only: false,
        }]);
        if !accesses.is_empty() {
            analysis.work_group(0, accesses);
        }
        analysis.finish().summary(cache.parse().unwrap())
    }

    #[test]
    fn count_metrics_add_the_traffic_through_the_cache() {
        // Every word once, in order (8 KiB, coalesced), then the first word
        // of each of the 128 lines (512 B, a 64-byte stride): through a
        // 4 KiB LRU cache (64 lines) the second pass misses every line again.
        let mut accesses = loads(0, 0, 4, 2048);
        accesses.extend(loads(1, 1000, 64, 128));
        let traffic = traffic_of(&accesses, "4KiB/64");
        let report = count_report(4096, 8192 + 512);

        let m = count_metrics(&report, Some(&traffic));
        assert_eq!(m["Q.dram"], Value::Count(8192 + 8192));
        assert_eq!(m["Q.uncoalesced"], Value::Count(512));
        assert_eq!(m["I.dram"], Value::Real(4096.0 / 16384.0));
        assert_eq!(m["Q.accessed"], Value::Count(8704));
        assert_eq!(m["W.total"], Value::Count(4096));

        // A cache that holds the buffer reads each line once.
        let fits = count_metrics(&report, Some(&traffic_of(&accesses, "8KiB/64")));
        assert_eq!(fits["Q.dram"], Value::Count(8192));
        assert_eq!(fits["Q.uncoalesced"], Value::Count(512));
        assert_eq!(fits["I.dram"], Value::Real(0.5));

        // Without a cache the metrics are the plain counts, nothing more.
        let plain = count_metrics(&report, None);
        assert!(m.keys().filter(|k| !plain.contains_key(*k)).eq([
            "I.dram",
            "Q.dram",
            "Q.uncoalesced"
        ]));
        for (name, value) in &plain {
            assert_eq!(m[name], *value, "{name}");
        }
    }

    #[test]
    fn no_dram_traffic_means_no_dram_intensity() {
        let m = count_metrics(&count_report(10, 4), Some(&traffic_of(&[], "4KiB/64")));
        assert_eq!(m["Q.dram"], Value::Count(0));
        assert_eq!(m["Q.uncoalesced"], Value::Count(0));
        assert!(!m.contains_key("I.dram"));
    }

    #[test]
    fn metric_names_know_their_group() {
        assert_eq!(Group::of("W.total"), Some(Group::W));
        assert_eq!(Group::of("ops.OpIAdd.uint"), Some(Group::Ops));
        assert_eq!(Group::of("T"), Some(Group::T));
        assert_eq!(Group::of("Q.dram"), Some(Group::Q));
        assert_eq!(Group::of("I.dram"), Some(Group::I));
        assert!(Group::Q.members().contains(&"Q.uncoalesced"));
        assert_eq!(Group::Q.direction(), Direction::LowerIsBetter);
        assert_eq!(Group::I.direction(), Direction::Neutral);
        assert_eq!(Group::of("X.y"), None);
        assert_eq!(Group::F.direction(), Direction::HigherIsBetter);
        assert_eq!(Group::E.direction(), Direction::LowerIsBetter);
    }
}
