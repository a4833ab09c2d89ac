//! From a run's measurements to the device's measured profile (the paper's
//! F̂_f, F̂_i, B̂ and P̂), and the profile as a table for people.

use crate::catalog::{compute_id, Benchmark, ComputeOp, DataType, Lane, StreamKernel};
use crate::runner::{BenchResult, Measurement};
use crate::work::Unit;
use clflow_devices::power::PowerTrace;
use clflow_devices::{
    is_in_place, BandwidthPeak, CachePeak, ComputePeak, ComputeType, DatasheetProfile,
    DeviceIdentity, EnergySample, MeasuredProfile, Metric, PowerPeak, Statistic,
};
use std::fmt::Write as _;

impl Lane {
    /// The profile's name for this lane type's peak.
    pub fn compute_type(self) -> ComputeType {
        match self {
            Lane::Uint => ComputeType::Int32,
            Lane::Half => ComputeType::Fp16,
            Lane::Float => ComputeType::Fp32,
            Lane::Double => ComputeType::Fp64,
        }
    }

    fn of_compute_type(data_type: ComputeType) -> Lane {
        match data_type {
            ComputeType::Int32 => Lane::Uint,
            ComputeType::Fp16 => Lane::Half,
            ComputeType::Fp32 => Lane::Float,
            ComputeType::Fp64 => Lane::Double,
        }
    }
}

impl Measurement {
    /// The measured profile of the device, stamped now with `clflow_version`.
    ///
    /// Bandwidth kernels are named `<kernel>/<lane>` (`triad/float`), their
    /// width apart; compute kernels by operation (`mad`) under their type.
    pub fn to_profile(&self, clflow_version: &str) -> MeasuredProfile {
        let mut profile = MeasuredProfile::new(DeviceIdentity::of(&self.device), clflow_version);
        for result in &self.results {
            match result.benchmark {
                Benchmark::Bandwidth { kernel, data } if kernel.window_bytes().is_some() => {
                    profile.cache_bandwidth.push(CachePeak {
                        level: kernel.cache_level().unwrap_or_default().to_string(),
                        window_bytes: kernel.window_bytes().unwrap_or_default(),
                        vector_width: u32::from(data.width),
                        bytes_per_s: result.rate,
                    })
                }
                Benchmark::Bandwidth { kernel, data } => profile.bandwidth.push(BandwidthPeak {
                    kernel: format!("{}/{}", kernel.name(), data.lane.name()),
                    vector_width: u32::from(data.width),
                    bytes_per_s: result.rate,
                }),
                Benchmark::Compute { op, data } => profile.compute.push(ComputePeak {
                    data_type: data.lane.compute_type(),
                    kernel: op.name().to_string(),
                    vector_width: u32::from(data.width),
                    ops_per_s: result.rate,
                }),
            }
        }
        let bandwidth = |r: &&BenchResult| matches!(r.benchmark, Benchmark::Bandwidth { .. });
        let (memory, compute): (Vec<&BenchResult>, Vec<&BenchResult>) =
            self.results.iter().partition(bandwidth);
        for (during, results) in [("bandwidth", memory), ("compute", compute)] {
            let traces: Vec<&PowerTrace> =
                results.iter().filter_map(|r| r.power.as_ref()).collect();
            profile.power.extend(power_peak(during, &traces));
        }
        profile.energy_samples = self.results.iter().filter_map(energy_sample).collect();
        profile.launch = self.launch;
        profile.costs = self.costs;
        profile.notes = self.notes.clone();
        profile.notes.extend(skipped_notes(self));
        profile
    }
}

/// One point of the energy-roofline fit: the benchmark's median rates and
/// its mean power. Only arithmetic and coalesced-stream benchmarks qualify:
/// the local-memory copy does no arithmetic and the gather moves whole
/// lines for the elements it counts.
fn energy_sample(result: &BenchResult) -> Option<EnergySample> {
    let qualifies = match result.benchmark {
        Benchmark::Bandwidth { kernel, .. } => {
            kernel != StreamKernel::Gather
                && kernel != StreamKernel::Update
                && kernel.window_bytes().is_none()
        }
        Benchmark::Compute { op, .. } => op != ComputeOp::Ldst,
    };
    let trace = result.power.as_ref()?;
    let mean_w = trace.mean_w?;
    if !qualifies {
        return None;
    }
    let (ops, bytes) = (result.work.ops as f64, result.work.bytes as f64);
    let (ops_per_s, bytes_per_s) = match result.benchmark {
        Benchmark::Bandwidth { .. } => (result.rate.median * ops / bytes, result.rate.median),
        Benchmark::Compute { .. } => (result.rate.median, result.rate.median * bytes / ops),
    };
    (ops_per_s.is_finite() && bytes_per_s.is_finite()).then(|| EnergySample {
        benchmark: result.id.clone(),
        ops_per_s,
        bytes_per_s,
        mean_w,
        source: trace.source,
    })
}

/// How each measured peak compares with the datasheet's, one note per
/// figure both have: the paper's F̂/F̄ and B̂/B̄. A measured peak above the
/// datasheet's says the benchmark or the datasheet is wrong, and says so.
pub fn datasheet_notes(profile: &MeasuredProfile, datasheet: &DatasheetProfile) -> Vec<String> {
    let figures = &datasheet.datasheet;
    let pairs = [
        (
            "B̂",
            profile.peak_bytes_per_s(),
            figures.memory_bandwidth_bytes_per_s(),
            Unit::GigabytesPerSecond,
        ),
        (
            "F̂ fp32",
            profile.peak_ops_per_s(ComputeType::Fp32),
            figures.fp32_ops_per_s(),
            Unit::GigaflopsPerSecond,
        ),
        (
            "F̂ fp64",
            profile.peak_ops_per_s(ComputeType::Fp64),
            figures.fp64_ops_per_s(),
            Unit::GigaflopsPerSecond,
        ),
        (
            "F̂ fp16",
            profile.peak_ops_per_s(ComputeType::Fp16),
            figures.quantity(Metric::Fp16).map(|q| q.value),
            Unit::GigaflopsPerSecond,
        ),
        (
            "F̂ int32",
            profile.peak_ops_per_s(ComputeType::Int32),
            figures.int32_ops_per_s(),
            Unit::GigaopsPerSecond,
        ),
    ];
    let mut notes = Vec::new();
    for (label, measured, sheet, unit) in pairs {
        let (Some(measured), Some(sheet)) = (measured, sheet) else {
            continue;
        };
        if sheet <= 0.0 {
            continue;
        }
        let share = measured / sheet;
        let verdict = if share > 1.0 {
            ": above the datasheet peak, so the benchmark or the datasheet is wrong"
        } else {
            ""
        };
        notes.push(format!(
            "{label} is {:.0}% of the {} datasheet's {:.1} {}{verdict}",
            share * 100.0,
            datasheet.model,
            sheet / Unit::SCALE,
            unit.symbol()
        ));
    }
    notes
}

/// The power of a group of benchmarks: the peak of each benchmark's trace,
/// summarised; the mean of their means; their energy, where every trace
/// counted one.
fn power_peak(during: &str, traces: &[&PowerTrace]) -> Option<PowerPeak> {
    let first = traces.first()?;
    let peaks: Vec<f64> = traces.iter().filter_map(|t| t.peak_w).collect();
    let means: Vec<f64> = traces.iter().filter_map(|t| t.mean_w).collect();
    let energies: Option<Vec<f64>> = traces.iter().map(|t| t.energy_j).collect();
    Some(PowerPeak {
        during: during.to_string(),
        source: first.source,
        peak_w: Statistic::of_rates(&peaks)?,
        mean_w: (!means.is_empty()).then(|| means.iter().sum::<f64>() / means.len() as f64),
        energy_j: energies.map(|e| e.iter().sum()),
    })
}

/// One note per type the device could not run, not one per width.
fn skipped_notes(measurement: &Measurement) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for skip in &measurement.skipped {
        let kind = skip.id.trim_end_matches(char::is_numeric);
        let note = format!("{kind}: not measured, {}", skip.reason);
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    notes
}

/// One row of the table: a benchmark and its rate.
struct Row {
    id: String,
    unit: Unit,
    rate: Statistic,
}

fn rows(profile: &MeasuredProfile) -> Vec<Row> {
    let width = |w: u32| u8::try_from(w).unwrap_or(u8::MAX);
    let bandwidth = profile.bandwidth.iter().map(|b| Row {
        // Stored as `triad/float` with its width apart: `triad/float4`.
        id: match b.kernel.split_once('/') {
            Some((kernel, lane)) if b.vector_width > 1 => {
                format!("{kernel}/{lane}{}", b.vector_width)
            }
            _ => b.kernel.clone(),
        },
        unit: Unit::GigabytesPerSecond,
        rate: b.bytes_per_s,
    });
    let caches = profile.cache_bandwidth.iter().map(|c| Row {
        id: format!(
            "resident-{}k/float{}",
            c.window_bytes >> 10,
            if c.vector_width > 1 {
                c.vector_width.to_string()
            } else {
                String::new()
            }
        ),
        unit: Unit::GigabytesPerSecond,
        rate: c.bytes_per_s,
    });
    let compute = profile.compute.iter().map(|c| {
        let lane = Lane::of_compute_type(c.data_type);
        Row {
            id: compute_id(&c.kernel, DataType::new(lane, width(c.vector_width))),
            unit: if lane.is_float() && c.kernel != ComputeOp::Ldst.name() {
                Unit::GigaflopsPerSecond
            } else {
                Unit::GigaopsPerSecond
            },
            rate: c.ops_per_s,
        }
    });
    bandwidth.chain(caches).chain(compute).collect()
}

/// The profile as a table (benchmark, best, median, spread, unit), then the
/// peaks the rooflines are drawn from and the notes.
pub fn render_table(profile: &MeasuredProfile) -> String {
    let rows = rows(profile);
    let id_width = rows.iter().map(|r| r.id.len()).max().unwrap_or(9).max(9);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<id_width$}  {:>10}  {:>10}  {:>7}  unit",
        "benchmark", "best", "median", "spread"
    );
    for row in &rows {
        let _ = writeln!(
            out,
            "{:<id_width$}  {:>10.2}  {:>10.2}  {:>6.1}%  {}",
            row.id,
            row.rate.best / Unit::SCALE,
            row.rate.median / Unit::SCALE,
            row.rate.spread * 100.0,
            row.unit.symbol()
        );
    }
    out.push('\n');
    for line in peak_lines(&rows, profile) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(launch) = &profile.launch {
        let _ = writeln!(
            out,
            "launch  {:.1} µs an empty kernel, +{:.3} µs a work-group",
            launch.empty_s * 1e6,
            launch.per_group_s * 1e6
        );
    }
    if let Some(costs) = &profile.costs {
        let _ = writeln!(
            out,
            "costs   {:.2} G dependent ops/s, {:.2} G local atomics/s, {:.2} G barrier passes/s, {}",
            costs.chain_ops_per_s / 1e9,
            costs.local_atomics_per_s / 1e9,
            costs.barriers_per_s / 1e9,
            costs.mispredicts_per_s.map_or("mispredicted branches cost nothing".into(), |r| {
                format!("{:.2} G mispredicted branches/s", r / 1e9)
            })
        );
        let more: Vec<String> = [
            costs.cache_gathers_per_s.map(|rate| {
                format!(
                    "{:.2} G scattered loads/s from the last-level cache",
                    rate / 1e9
                )
            }),
            costs.carried_calls_per_s.map(|rate| {
                format!(
                    "{:.2} G trips/s of a float sum carried across a call",
                    rate / 1e9
                )
            }),
            costs.page_strides_per_s.map(|rate| {
                format!(
                    "{:.2} G loads/s a page apart in a work-item's walk",
                    rate / 1e9
                )
            }),
            costs
                .gathered_lanes_per_s
                .map(|rate| format!("{:.2} G gathered local loads/s", rate / 1e9)),
        ]
        .into_iter()
        .flatten()
        .collect();
        for pair in more.chunks(2) {
            let _ = writeln!(out, "        {}", pair.join(", "));
        }
        let tables = [
            (costs.page_walks, costs.walk_table_bytes),
            (costs.small_page_walks, costs.small_walk_table_bytes),
        ];
        for (walks, table) in tables {
            let Some(walks) = walks else { continue };
            let column = |rate: fn(&clflow_devices::WalkRate) -> f64| {
                let rates: Vec<String> = walks
                    .iter()
                    .map(|w| format!("{:.2}", rate(w) / 1e9))
                    .collect();
                rates.join("/")
            };
            let through = table.map_or(String::new(), |bytes| {
                format!(" through {} MiB", bytes >> 20)
            });
            let _ = writeln!(
                out,
                "walks   {} steps a work-item, a page or more a step{through}: {} G loads/s,\n        \
                 {} G stores/s storing alone, {} G accesses/s copying",
                walks.map(|w| w.steps.to_string()).join("/"),
                column(|w| w.loads_per_s),
                column(|w| w.stores_per_s),
                column(|w| w.copies_per_s)
            );
        }
        if let Some(walks) = costs.line_walks {
            let _ = writeln!(
                out,
                "lines   {} MiB walks a work-item, a line a step: {} G accesses/s",
                walks.map(|w| (w.walk_bytes >> 20).to_string()).join("/"),
                walks.map(|w| format!("{:.2}", w.per_s / 1e9)).join("/")
            );
        }
        if let Some(builtins) = costs.builtins {
            let column = |rate: fn(&clflow_devices::LaneRates) -> f64| {
                builtins
                    .all()
                    .map(|r| format!("{:.2}", rate(&r) / 1e9))
                    .join("/")
            };
            let _ = writeln!(
                out,
                "math    {}: {} G lanes/s vectorised, {} G lanes/s lane by lane",
                clflow_devices::BuiltinRates::NAMES.join("/"),
                column(|r| r.vector_per_s),
                column(|r| r.scalar_per_s)
            );
            if builtins.all().iter().all(|r| r.walk_per_s.is_some()) {
                let _ = writeln!(
                    out,
                    "        {} G steps/s of a page walk copying with a call a step",
                    column(|r| r.walk_per_s.unwrap_or_default())
                );
            }
        }
        if let Some(walks) = costs.column_walks {
            let _ = writeln!(
                out,
                "columns {} lines of a page at a time: {} G lines/s",
                walks.map(|w| w.lines.to_string()).join("/"),
                walks.map(|w| format!("{:.2}", w.per_s / 1e9)).join("/")
            );
        }
        if let Some(walks) = costs.call_walks {
            let _ = writeln!(
                out,
                "calls   {:.3} G steps/s of a page walk copying with a kept call a step, \
                 {:.3} G storing alone",
                walks.copies_per_s / 1e9,
                walks.stores_per_s / 1e9
            );
        }
        if let Some(tables) = costs.cache_gather_tables {
            let size = |bytes: u64| match bytes >> 20 {
                0 => format!("{} KiB", bytes >> 10),
                mib => format!("{mib} MiB"),
            };
            let _ = writeln!(
                out,
                "gathers {} tables: {} G scattered loads/s from the last-level cache",
                tables.map(|t| size(t.table_bytes)).join("/"),
                tables.map(|t| format!("{:.2}", t.per_s / 1e9)).join("/")
            );
        }
    }
    for note in &profile.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// `B̂  29.10 GB/s  (read/float16)` and the like: the best row of each kind,
/// then the power peaks.
fn peak_lines(rows: &[Row], profile: &MeasuredProfile) -> Vec<String> {
    let best = |label: &str, keep: &dyn Fn(&Row) -> bool| {
        rows.iter()
            .filter(|r| keep(r))
            .max_by(|a, b| a.rate.best.total_cmp(&b.rate.best))
            .map(|r| peak_line(label, r.rate.best / Unit::SCALE, r.unit.symbol(), &r.id))
    };
    let computes = |lane: Lane| {
        let marker = format!("-chain/{}", lane.name());
        move |r: &Row| r.id.contains(&marker) && !r.id.starts_with("ldst-")
    };
    let stream = |r: &Row| {
        r.unit == Unit::GigabytesPerSecond
            && !r.id.starts_with("gather/")
            && !r.id.starts_with("resident-")
            && !is_in_place(&r.id)
    };
    let mut lines: Vec<String> = [
        best("B̂", &stream),
        best("B̂ scattered", &|r: &Row| r.id.starts_with("gather/")),
        best("in place", &|r: &Row| is_in_place(&r.id)),
        best("B̂ L1", &|r: &Row| r.id.starts_with("resident-16k/")),
        best("B̂ L2", &|r: &Row| r.id.starts_with("resident-256k/")),
        best("T ldst", &|r: &Row| r.id.starts_with("ldst-")),
        best("F̂ fp32", &computes(Lane::Float)),
        best("F̂ fp64", &computes(Lane::Double)),
        best("F̂ fp16", &computes(Lane::Half)),
        best("F̂ int32", &computes(Lane::Uint)),
    ]
    .into_iter()
    .flatten()
    .collect();
    for power in &profile.power {
        lines.push(peak_line(
            &format!("P̂ {}", power.during),
            power.peak_w.best,
            "W",
            &format!("peak, source {}", power.source),
        ));
    }
    if profile.power.is_empty() {
        lines.push("P̂: no power sensor serves this device".to_string());
    }
    lines
}

/// `label  value unit  (detail)`, aligned whatever combining marks the label has.
fn peak_line(label: &str, value: f64, unit: &str, detail: &str) -> String {
    let shown = label
        .chars()
        .filter(|c| !('\u{300}'..='\u{36f}').contains(c))
        .count();
    let pad = " ".repeat(12usize.saturating_sub(shown));
    format!("{label}{pad} {value:>10.2} {unit:<8} ({detail})")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{ComputeOp, StreamKernel};
    use crate::sizing::{Mode, Plan};
    use crate::work::Shape;
    use clflow_devices::power::PowerSource;

    fn stat(best: f64) -> Statistic {
        Statistic { best, median: best * 0.9, spread: 0.125, samples: 3 }
    }

    fn result(bench: Benchmark, best: f64, peak_w: Option<f64>) -> BenchResult {
        BenchResult {
            id: bench.id(),
            benchmark: bench,
            unit: bench.unit(),
            shape: Shape::Stream { elements: 1 },
            work: crate::work::Work { bytes: 1, ops: 1 },
            times_ns: vec![1, 1, 1],
            rate: stat(best),
            power: peak_w.map(|w| PowerTrace {
                source: PowerSource::Rapl,
                sensor: "rapl".into(),
                kernel: bench.id(),
                duration_s: 1.0,
                samples: vec![],
                peak_w: Some(w),
                mean_w: Some(w - 10.0),
                energy_j: Some(w - 10.0),
                notes: vec![],
            }),
        }
    }

    fn measurement() -> Measurement {
        let device = crate::fake::device(1 << 32, 1 << 30, 1 << 20, 2);
        let triad = Benchmark::Bandwidth {
            kernel: StreamKernel::Triad,
            data: DataType::new(Lane::Float, 4),
        };
        let read = Benchmark::Bandwidth {
            kernel: StreamKernel::Read,
            data: DataType::new(Lane::Uint, 16),
        };
        let mad = Benchmark::Compute { op: ComputeOp::Mad, data: DataType::new(Lane::Float, 16) };
        let add = Benchmark::Compute { op: ComputeOp::Add, data: DataType::new(Lane::Uint, 1) };
        Measurement {
            plan: Plan::for_device(&device, Mode::Quick).unwrap(),
            device,
            results: vec![
                result(triad, 20e9, Some(50.0)),
                result(read, 29e9, Some(60.0)),
                result(mad, 44e9, Some(70.0)),
                result(add, 12e9, None),
            ],
            skipped: vec![
                crate::runner::Skipped {
                    id: "mad-chain/half".into(),
                    reason: "the device lacks cl_khr_fp16".into(),
                },
                crate::runner::Skipped {
                    id: "mad-chain/half16".into(),
                    reason: "the device lacks cl_khr_fp16".into(),
                },
            ],
            notes: vec![],
            launch: Some(clflow_devices::LaunchOverhead { empty_s: 12e-6, per_group_s: 5e-9 }),
            costs: Some(clflow_devices::OpCosts {
                chain_ops_per_s: 8e9,
                local_atomics_per_s: 0.4e9,
                barriers_per_s: 6e9,
                mispredicts_per_s: Some(0.25e9),
                cache_gathers_per_s: Some(1.5e9),
                cache_gather_tables: Some(
                    [
                        (512 << 10, 9e9),
                        (2 << 20, 4e9),
                        (8 << 20, 2e9),
                        (32 << 20, 1.5e9),
                    ]
                    .map(|(table_bytes, per_s)| clflow_devices::GatherRate { table_bytes, per_s }),
                ),
                carried_calls_per_s: Some(2.5e8),
                page_strides_per_s: Some(3.5e8),
                walk_table_bytes: Some(128 << 20),
                page_walks: Some([(64, 9e8), (256, 6e8), (1024, 4.5e8), (4096, 3.5e8)].map(
                    |(steps, loads_per_s)| clflow_devices::WalkRate {
                        steps,
                        loads_per_s,
                        stores_per_s: loads_per_s / 2.0,
                        copies_per_s: loads_per_s,
                    },
                )),
                small_walk_table_bytes: Some(16 << 20),
                small_page_walks: Some([64, 256, 1024, 4096].map(|steps| {
                    clflow_devices::WalkRate {
                        steps,
                        loads_per_s: 1e9,
                        stores_per_s: 0.5e9,
                        copies_per_s: 0.8e9,
                    }
                })),
                gathered_lanes_per_s: Some(9e9),
                builtins: Some(clflow_devices::BuiltinRates::from_all(
                    [
                        (2e9, 0.1e9),
                        (2e9, 0.1e9),
                        (8e9, 0.5e9),
                        (4e9, 0.2e9),
                        (0.5e9, 0.02e9),
                    ]
                    .map(|(vector_per_s, scalar_per_s)| {
                        clflow_devices::LaneRates {
                            vector_per_s,
                            scalar_per_s,
                            walk_per_s: Some(scalar_per_s / 10.0),
                        }
                    }),
                )),
                line_walks: Some([(1, 2.5e9), (4, 0.8e9), (16, 0.75e9), (64, 0.6e9)].map(
                    |(mib, per_s)| clflow_devices::LineWalkRate { walk_bytes: mib << 20, per_s },
                )),
                call_walks: Some(clflow_devices::CallWalkRates {
                    copies_per_s: 0.058e9,
                    stores_per_s: 0.069e9,
                }),
                column_walks: Some(
                    [(1, 0.07e9), (4, 0.11e9), (16, 0.19e9)]
                        .map(|(lines, per_s)| clflow_devices::VisitRate { lines, per_s }),
                ),
                quick: false,
            }),
        }
    }

    #[test]
    fn the_profile_names_kernels_types_and_widths() {
        let profile = measurement().to_profile("0.1.0");
        assert_eq!(profile.clflow_version, "0.1.0");
        assert_eq!(profile.identity.device, "pthread-cpu");
        assert_eq!(profile.bandwidth.len(), 2);
        assert_eq!(profile.bandwidth[0].kernel, "triad/float");
        assert_eq!(profile.bandwidth[0].vector_width, 4);
        assert_eq!(profile.compute[0].data_type, ComputeType::Fp32);
        assert_eq!(profile.compute[1].data_type, ComputeType::Int32);
        assert_eq!(profile.peak_bytes_per_s(), Some(29e9));
        assert_eq!(profile.peak_ops_per_s(ComputeType::Fp32), Some(44e9));
        assert_eq!(
            profile.notes,
            ["mad-chain/half: not measured, the device lacks cl_khr_fp16"]
        );
    }

    #[test]
    fn power_is_summarised_per_group_bandwidth_first() {
        let profile = measurement().to_profile("0.1.0");
        assert_eq!(profile.power.len(), 2);
        let memory = &profile.power[0];
        assert_eq!(memory.during, "bandwidth");
        assert_eq!(memory.source, PowerSource::Rapl);
        assert_eq!(memory.peak_w.best, 60.0);
        assert_eq!(memory.mean_w, Some(45.0));
        assert_eq!(memory.energy_j, Some(90.0));
        // The paper's P̂ is the bandwidth group's peak.
        assert_eq!(profile.peak_power(), Some((60.0, PowerSource::Rapl)));
        assert_eq!(profile.power[1].peak_w.best, 70.0);
    }

    #[test]
    fn peaks_are_set_against_the_datasheet() {
        let sheet = clflow_devices::DatasheetProfile::parse(
            "model = \"Test CPU\"\nvendor = \"Test\"\ntype = \"cpu\"\nmatch = [\"pthread-cpu\"]\n\
             [datasheet]\n\
             fp32_gflops = { value = 40, source = \"test\" }\n\
             memory_bandwidth_gbs = { value = 58, source = \"test\" }\n",
            "test.toml",
            "test",
            clflow_devices::ProfileOrigin::Embedded,
        )
        .unwrap();
        let notes = datasheet_notes(&measurement().to_profile("0.1.0"), &sheet);
        assert_eq!(
            notes,
            [
                "B̂ is 50% of the Test CPU datasheet's 58.0 GB/s",
                "F̂ fp32 is 110% of the Test CPU datasheet's 40.0 GFLOP/s: above the datasheet \
                 peak, so the benchmark or the datasheet is wrong",
            ]
        );
    }

    #[test]
    fn the_table_shows_rows_in_units_and_the_peaks() {
        let table = render_table(&measurement().to_profile("0.1.0"));
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[0],
            "benchmark                best      median   spread  unit"
        );
        assert_eq!(
            lines[1],
            "triad/float4            20.00       18.00    12.5%  GB/s"
        );
        assert!(
            lines[3].starts_with("mad-chain/float16       44.00       39.60"),
            "{}",
            lines[3]
        );
        assert!(lines[4].ends_with("GIOP/s"), "{}", lines[4]);
        assert!(
            table.contains("\nB̂                 29.00 GB/s     (read/uint16)\n"),
            "{table}"
        );
        assert!(
            table.contains("\nF̂ fp32            44.00 GFLOP/s  (mad-chain/float16)\n"),
            "{table}"
        );
        assert!(
            table.contains("\nF̂ int32           12.00 GIOP/s   (add-chain/uint)\n"),
            "{table}"
        );
        assert!(
            table.contains("\nlaunch  12.0 µs an empty kernel, +0.005 µs a work-group\n"),
            "{table}"
        );
        assert!(
            table.contains(
                "\ncosts   8.00 G dependent ops/s, 0.40 G local atomics/s, \
                 6.00 G barrier passes/s, 0.25 G mispredicted branches/s\n        \
                 1.50 G scattered loads/s from the last-level cache, \
                 0.25 G trips/s of a float sum carried across a call\n        \
                 0.35 G loads/s a page apart in a work-item's walk, \
                 9.00 G gathered local loads/s\n\
                 walks   64/256/1024/4096 steps a work-item, a page or more a step through \
                 128 MiB: 0.90/0.60/0.45/0.35 G loads/s,\n        \
                 0.45/0.30/0.23/0.17 G stores/s storing alone, \
                 0.90/0.60/0.45/0.35 G accesses/s copying\n\
                 walks   64/256/1024/4096 steps a work-item, a page or more a step through \
                 16 MiB: 1.00/1.00/1.00/1.00 G loads/s,\n        \
                 0.50/0.50/0.50/0.50 G stores/s storing alone, \
                 0.80/0.80/0.80/0.80 G accesses/s copying\n\
                 lines   1/4/16/64 MiB walks a work-item, a line a step: \
                 2.50/0.80/0.75/0.60 G accesses/s\n\
                 math    sin/cos/exp/log/pow: 2.00/2.00/8.00/4.00/0.50 G lanes/s vectorised, \
                 0.10/0.10/0.50/0.20/0.02 G lanes/s lane by lane\n        \
                 0.01/0.01/0.05/0.02/0.00 G steps/s of a page walk copying with a call a step\n\
                 columns 1/4/16 lines of a page at a time: 0.07/0.11/0.19 G lines/s\n\
                 calls   0.058 G steps/s of a page walk copying with a kept call a step, \
                 0.069 G storing alone\n\
                 gathers 512 KiB/2 MiB/8 MiB/32 MiB tables: 9.00/4.00/2.00/1.50 G scattered \
                 loads/s from the last-level cache\n"
            ),
            "{table}"
        );
        assert!(!table.contains("fp64"));
        assert!(
            table.contains("\nP̂ bandwidth       60.00 W        (peak, source rapl)\n"),
            "{table}"
        );
        assert!(table.contains("note: mad-chain/half: not measured"));
    }

    #[test]
    fn energy_samples_pair_each_powered_run_with_its_rates() {
        let mut m = measurement();
        let gather = Benchmark::Bandwidth {
            kernel: StreamKernel::Gather,
            data: DataType::new(Lane::Float, 1),
        };
        m.results.push(result(gather, 2e9, Some(55.0)));
        m.results[0].work = crate::work::Work { bytes: 300, ops: 100 };
        let profile = m.to_profile("0.1.0");
        // triad, read and mad had a sensor; add had none; gather is left out.
        let ids: Vec<&str> = profile
            .energy_samples
            .iter()
            .map(|s| s.benchmark.as_str())
            .collect();
        assert_eq!(ids, ["triad/float4", "read/uint16", "mad-chain/float16"]);
        let triad = &profile.energy_samples[0];
        // Median 18 GB/s, a third as many ops as bytes, 40 W mean.
        assert_eq!(triad.bytes_per_s, 18e9);
        assert!((triad.ops_per_s - 6e9).abs() < 1.0);
        assert_eq!(triad.mean_w, 40.0);
        // The gather is a bandwidth of its own, not B̂.
        assert_eq!(profile.peak_bytes_per_s(), Some(29e9));
        let table = render_table(&profile);
        assert!(table.contains("B̂ scattered"), "{table}");
    }
}
