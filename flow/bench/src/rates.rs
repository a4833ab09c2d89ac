//! A device's measured and datasheet profiles as the prediction models of
//! `clflow-predict` read them: each rate from the benchmark that measures
//! it, else the datasheet, with its source.

use crate::catalog::{ComputeOp, StreamKernel};
use clflow_devices::{
    is_gather, is_in_place, BandwidthPeak, ComputeType, DatasheetProfile, MeasuredProfile, Metric,
};
use clflow_ocl::{DeviceInfo, DeviceKind};
use clflow_predict::{
    fit, ClassRates, DeviceRates, IssueRates, LaunchCost, OpCostRates, Rate, Simd, SimdKind,
    WalkRates,
};

/// The best rate of the compute benchmark `op` on `data_type`.
fn compute(profile: &MeasuredProfile, data_type: ComputeType, op: ComputeOp) -> Option<Rate> {
    issue(profile, data_type, op, 0, 1.0)
}

/// The best rate of the bandwidth benchmarks `keep` accepts.
fn bandwidth(profile: &MeasuredProfile, keep: impl Fn(&str) -> bool) -> Option<Rate> {
    profile
        .bandwidth
        .iter()
        .filter(|b| keep(&b.kernel))
        .max_by(|a, b| a.bytes_per_s.best.total_cmp(&b.bytes_per_s.best))
        .map(|b| stream_rate(profile, b))
}

fn stream_rate(profile: &MeasuredProfile, b: &BandwidthPeak) -> Rate {
    Rate::new(
        b.bytes_per_s.best,
        format!(
            "clflow bench {} (width {}), {}",
            b.kernel, b.vector_width, profile.measured_at
        ),
    )
}

/// F̂ of a type as the profile chooses it (`MeasuredProfile::compute_peak`).
fn compute_peak(profile: &MeasuredProfile, data_type: ComputeType) -> Option<Rate> {
    profile.compute_peak(data_type).map(|c| {
        Rate::new(
            c.ops_per_s.best,
            format!(
                "clflow bench {}-chain (width {}), {}",
                c.kernel, c.vector_width, profile.measured_at
            ),
        )
    })
}

/// The rate of the compute benchmark `op` on `data_type` at `width` lanes
/// (width 0: the best of every width), per `per` operations: instructions
/// per second where an instruction does `per` of them.
fn issue(
    profile: &MeasuredProfile,
    data_type: ComputeType,
    op: ComputeOp,
    width: u32,
    per: f64,
) -> Option<Rate> {
    profile
        .compute
        .iter()
        .filter(|c| c.data_type == data_type && c.kernel == op.name())
        .filter(|c| width == 0 || c.vector_width == width)
        .max_by(|a, b| a.ops_per_s.best.total_cmp(&b.ops_per_s.best))
        .map(|c| {
            let per_instruction = if per == 1.0 {
                String::new()
            } else {
                format!(" / {per} ops an instruction")
            };
            Rate::new(
                c.ops_per_s.best / per,
                format!(
                    "clflow bench {}-chain (width {}){per_instruction}, {}",
                    op.name(),
                    c.vector_width,
                    profile.measured_at
                ),
            )
        })
}

/// Instruction rates per class at the best width and lane by lane: integer
/// adds (one operation each), float mads (two).
fn issue_rates(profile: &MeasuredProfile) -> IssueRates {
    IssueRates {
        vector: ClassRates {
            int: issue(profile, ComputeType::Int32, ComputeOp::Add, 0, 1.0),
            fp32: issue(profile, ComputeType::Fp32, ComputeOp::Mad, 0, 2.0),
            fp64: issue(profile, ComputeType::Fp64, ComputeOp::Mad, 0, 2.0),
            fp16: issue(profile, ComputeType::Fp16, ComputeOp::Mad, 0, 2.0),
        },
        // Lane by lane: the chains whose control flow the compiler cannot
        // take as uniform (a runtime that vectorises width-1 kernels
        // across work-items would otherwise give a vector rate here).
        scalar: ClassRates {
            int: issue(profile, ComputeType::Int32, ComputeOp::AddDiverged, 1, 1.0),
            fp32: issue(profile, ComputeType::Fp32, ComputeOp::MadDiverged, 1, 2.0),
            fp64: issue(profile, ComputeType::Fp64, ComputeOp::MadDiverged, 1, 2.0),
            fp16: None,
        },
    }
}

/// How much faster a width-1 chain in a uniform loop must run than the same
/// chain in a loop the compiler cannot prove uniform for the compiler to be
/// taken as vectorising across work-items inside loops: a vectoriser runs
/// it 4 to 16 times as fast; on a busy machine two quick runs of the same
/// code may differ by half.
const VECTORISED_LOOPS: f64 = 2.5;

/// Whether the device's compiler vectorises across work-items inside the
/// kernel's own uniform loops: the width-1 mad chain (a uniform loop) well
/// above the diverged one.
fn vectorises_loops(profile: &MeasuredProfile) -> bool {
    let at = |op| issue(profile, ComputeType::Fp32, op, 1, 2.0).map(|r| r.value);
    match (at(ComputeOp::Mad), at(ComputeOp::MadDiverged)) {
        (Some(uniform), Some(diverged)) => uniform > VECTORISED_LOOPS * diverged,
        _ => false,
    }
}

/// How `info`'s device runs work-items together: a CPU's OpenCL compiler
/// fills its native `float` lanes; a GPU runs warps of 32 (NVIDIA, Intel's
/// widest SIMD) or wavefronts of 64 (AMD). Other accelerators (FPGAs)
/// pipeline rather than vectorise: none.
pub fn simd_of(info: &DeviceInfo) -> Option<Simd> {
    match info.kind {
        DeviceKind::Cpu if info.native_float_lanes > 0 => Some(Simd {
            width: info.native_float_lanes,
            kind: SimdKind::WorkGroupVectoriser,
            // Known once measured (see `device_rates`).
            vectorises_loops: false,
        }),
        DeviceKind::Gpu => Some(Simd {
            width: if info.vendor.to_lowercase().contains("amd")
                || info.vendor.to_lowercase().contains("advanced micro")
            {
                64
            } else {
                32
            },
            kind: SimdKind::Simt,
            vectorises_loops: true,
        }),
        _ => None,
    }
}

/// The best bandwidth of the stream benchmarks at each share of written
/// bytes: `read` none, `add` and `triad` a third, `copy` and `scale` half,
/// `write` all.
fn bandwidth_by_writes(profile: &MeasuredProfile) -> Vec<(f64, Rate)> {
    use StreamKernel::{Add, Copy, Read, Scale, Triad, Write};
    let shares: [(f64, &[StreamKernel]); 4] = [
        (0.0, &[Read]),
        (1.0 / 3.0, &[Add, Triad]),
        (0.5, &[Copy, Scale]),
        (1.0, &[Write]),
    ];
    shares
        .into_iter()
        .filter_map(|(share, kernels)| {
            let of = |k: &str| {
                kernels
                    .iter()
                    .any(|s| k.starts_with(&format!("{}/", s.name())))
            };
            bandwidth(profile, of).map(|rate| (share, rate))
        })
        .collect()
}

/// The rates of one device. Peaks are the profile's F̂ and B̂, the rule
/// `analyze` reads too; the multiply-add throughputs (the quantitative
/// model's T_SP, T_DP and T_int) stand beside them; the uncoalesced bandwidth is the gather's; the
/// host link comes from the datasheet only; the energy coefficients are
/// fitted from the benchmarks' power samples.
pub fn device_rates(
    name: &str,
    measured: Option<&MeasuredProfile>,
    datasheet: Option<&DatasheetProfile>,
    simd: Option<Simd>,
) -> DeviceRates {
    let sheet = |metric: Metric| {
        datasheet.and_then(|d| {
            d.datasheet
                .quantity(metric)
                .map(|q| Rate::new(q.value, format!("{} datasheet", d.model)))
        })
    };
    let mad = |data_type: ComputeType, metric: Metric| {
        measured
            .and_then(|m| compute(m, data_type, ComputeOp::Mad))
            .or_else(|| sheet(metric))
    };
    let peak = |data_type: ComputeType, metric: Metric| {
        measured
            .and_then(|m| compute_peak(m, data_type))
            .or_else(|| sheet(metric))
    };
    let mut notes = Vec::new();
    let energy = match measured {
        None => {
            notes.push("not benchmarked: no energy fit".to_string());
            None
        }
        Some(m) if m.energy_samples.is_empty() => {
            notes.push(
                "no power sensor sampled the benchmarks: energy roofline skipped".to_string(),
            );
            None
        }
        Some(m) => {
            let samples: Vec<clflow_predict::PowerSample> = m
                .energy_samples
                .iter()
                .map(|s| clflow_predict::PowerSample {
                    benchmark: s.benchmark.clone(),
                    ops_per_s: s.ops_per_s,
                    bytes_per_s: s.bytes_per_s,
                    mean_w: s.mean_w,
                })
                .collect();
            let source = format!(
                "least squares over {} clflow bench runs ({}), {}",
                samples.len(),
                m.energy_samples[0].source,
                m.measured_at
            );
            match fit(&samples, &source) {
                Ok(coefficients) => Some(coefficients),
                Err(err) => {
                    notes.push(format!("energy fit: {err}"));
                    None
                }
            }
        }
    };
    if measured.is_some_and(|m| m.costs.is_none()) {
        notes.push(
            "the profile predates the cost benchmarks (clflow bench --refresh measures them): \
             clflow's model leaves out chains, branches, atomics, barriers and gathers from the \
             last cache"
                .to_string(),
        );
    }
    if measured.is_some_and(|m| {
        m.costs
            .is_some_and(|c| c.page_walks.is_some() && c.walk_table_bytes.is_none())
    }) {
        notes.push(
            "the profile's page walks stepped through a table of four last-level caches as the \
             driver reports them (clflow bench --refresh steps through 128 MiB): where a virtual \
             machine's driver reports the host's whole cache, their steps all fall in one cache \
             set and their rates are too slow"
                .to_string(),
        );
    }
    if measured.is_some_and(|m| m.costs.is_some_and(|c| c.page_walks.is_none())) {
        notes.push(
            "the profile predates the page walks of other lengths and of stores (clflow bench \
             --refresh measures them): clflow's model charges every page stride at its one walk's \
             load rate"
                .to_string(),
        );
    }
    if measured.is_some_and(|m| {
        m.costs.is_some_and(|c| {
            c.line_walks.is_none()
                || c.call_walks.is_none()
                || c.column_walks.is_none()
                || c.builtins
                    .is_some_and(|b| b.all().iter().any(|r| r.walk_per_s.is_none()))
        })
    }) {
        notes.push(
            "the profile predates the line walks, the page walks with a call a step or the column \
             walks (clflow bench --refresh measures them): clflow's model charges those it lacks"
                .to_string(),
        );
    }
    // The largest cache measured: its bandwidth and its window.
    let (cache_bandwidth, cache_window_bytes) = measured
        .and_then(|m| {
            let (level, window, rate) = m.cache_peaks().pop()?;
            let provenance = format!(
                "clflow bench resident reads of {} KiB ({level}), {}",
                window >> 10,
                m.measured_at
            );
            Some((Rate::new(rate, provenance), window))
        })
        .unzip();
    DeviceRates {
        name: name.to_string(),
        peak: ClassRates {
            int: peak(ComputeType::Int32, Metric::Int32),
            fp32: peak(ComputeType::Fp32, Metric::Fp32),
            fp64: peak(ComputeType::Fp64, Metric::Fp64),
            fp16: peak(ComputeType::Fp16, Metric::Fp16),
        },
        mad: ClassRates {
            int: mad(ComputeType::Int32, Metric::Int32),
            fp32: mad(ComputeType::Fp32, Metric::Fp32),
            fp64: mad(ComputeType::Fp64, Metric::Fp64),
            fp16: mad(ComputeType::Fp16, Metric::Fp16),
        },
        int_add: measured.and_then(|m| compute(m, ComputeType::Int32, ComputeOp::Add)),
        ldst: measured.and_then(|m| compute(m, ComputeType::Fp32, ComputeOp::Ldst)),
        bandwidth: measured
            .and_then(|m| m.bandwidth_peak().map(|b| stream_rate(m, b)))
            .or_else(|| sheet(Metric::MemoryBandwidth)),
        bandwidth_by_writes: measured.map(bandwidth_by_writes).unwrap_or_default(),
        cache_bandwidth,
        cache_window_bytes,
        uncoalesced_bandwidth: measured.and_then(|m| bandwidth(m, is_gather)),
        in_place_bandwidth: measured.and_then(|m| bandwidth(m, is_in_place)),
        host_link: sheet(Metric::HostLink),
        energy,
        issue: measured.map(issue_rates).unwrap_or_default(),
        launch: measured
            .and_then(|m| m.launch)
            .map(|l| LaunchCost { empty_s: l.empty_s, per_group_s: l.per_group_s }),
        costs: measured.and_then(|m| m.costs).map(|c| OpCostRates {
            chain_ops_per_s: c.chain_ops_per_s,
            atomics_per_s: c.local_atomics_per_s,
            barriers_per_s: c.barriers_per_s,
            mispredicts_per_s: c.mispredicts_per_s,
            cache_gathers_per_s: c.cache_gathers_per_s,
            cache_gather_tables: c
                .cache_gather_tables
                .map(|tables| tables.map(|t| (t.table_bytes, t.per_s))),
            carried_calls_per_s: c.carried_calls_per_s,
            page_strides_per_s: c.page_strides_per_s,
            page_walks: c.page_walks.map(walk_rates),
            walk_table_bytes: c.walk_table_bytes,
            small_page_walks: c.small_page_walks.map(walk_rates),
            small_walk_table_bytes: c.small_walk_table_bytes,
            gathered_lanes_per_s: c.gathered_lanes_per_s,
            builtins: c
                .builtins
                .map(|b| b.all().map(|r| (r.vector_per_s, r.scalar_per_s))),
            builtin_walks: c.builtins.and_then(|b| {
                let walks = b.all().map(|r| r.walk_per_s);
                walks
                    .iter()
                    .all(Option::is_some)
                    .then(|| walks.map(Option::unwrap_or_default))
            }),
            line_walks: c
                .line_walks
                .map(|walks| walks.map(|w| (w.walk_bytes, w.per_s))),
            call_walks: c.call_walks.map(|w| (w.copies_per_s, w.stores_per_s)),
            column_walks: c
                .column_walks
                .map(|walks| walks.map(|w| (w.lines, w.per_s))),
        }),
        simd: simd.map(|simd| Simd {
            vectorises_loops: simd.kind == SimdKind::Simt || measured.is_some_and(vectorises_loops),
            ..simd
        }),
        notes,
    }
}

/// A profile's walks as the models take them.
fn walk_rates(walks: [clflow_devices::WalkRate; 4]) -> [WalkRates; 4] {
    walks.map(|w| WalkRates {
        steps: w.steps,
        loads_per_s: w.loads_per_s,
        stores_per_s: w.stores_per_s,
        copies_per_s: w.copies_per_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clflow_devices::power::PowerSource;
    use clflow_devices::{
        BandwidthPeak, ComputePeak, DeviceIdentity, EnergySample, ProfileOrigin, Statistic,
    };

    fn stat(best: f64) -> Statistic {
        Statistic::of_rates(&[best]).unwrap()
    }

    fn profile() -> MeasuredProfile {
        let mut p = MeasuredProfile::new(
            DeviceIdentity {
                platform: "p".into(),
                device: "d".into(),
                driver_version: "1".into(),
            },
            "0.1.0",
        );
        let peak = |data_type, kernel: &str, width, best| ComputePeak {
            data_type,
            kernel: kernel.into(),
            vector_width: width,
            ops_per_s: stat(best),
        };
        p.compute = vec![
            peak(ComputeType::Fp32, "mad", 4, 40e9),
            peak(ComputeType::Fp32, "mad", 16, 90e9),
            peak(ComputeType::Fp32, "ldst", 4, 120e9),
            peak(ComputeType::Int32, "add", 8, 70e9),
            peak(ComputeType::Int32, "mad", 8, 30e9),
        ];
        let stream = |kernel: &str, best| BandwidthPeak {
            kernel: kernel.into(),
            vector_width: 1,
            bytes_per_s: stat(best),
        };
        p.bandwidth = vec![
            stream("triad/float", 20e9),
            stream("read/float", 25e9),
            stream("gather/float", 3e9),
            stream("update/float", 40e9),
        ];
        p
    }

    fn sheet() -> DatasheetProfile {
        DatasheetProfile::parse(
            "model = \"Test GPU\"\nvendor = \"Test\"\ntype = \"gpu\"\nmatch = [\"d\"]\n\
             [datasheet]\n\
             fp64_gflops = { value = 500, source = \"test\" }\n\
             host_link_gbs = { value = 16, source = \"test\" }\n\
             memory_bandwidth_gbs = { value = 900, source = \"test\" }\n",
            "test.toml",
            "test",
            ProfileOrigin::Embedded,
        )
        .unwrap()
    }

    #[test]
    fn each_rate_comes_from_its_benchmark_else_the_datasheet() {
        let rates = device_rates("dev", Some(&profile()), Some(&sheet()), None);
        // F̂ is the best arithmetic kernel, never the local copy: the fp32
        // mad, the integer add; the same figure `analyze` reads.
        let measured = profile();
        assert_eq!(rates.peak.fp32.as_ref().unwrap().value, 90e9);
        assert!(rates
            .peak
            .fp32
            .as_ref()
            .unwrap()
            .source
            .contains("mad-chain (width 16)"));
        assert_eq!(rates.peak.int.as_ref().unwrap().value, 70e9);
        assert_eq!(measured.peak_ops_per_s(ComputeType::Int32), Some(70e9));
        assert_eq!(measured.peak_bytes_per_s(), Some(25e9));
        // The quantitative model's T_int is the multiply-add's.
        assert_eq!(rates.mad.int.as_ref().unwrap().value, 30e9);
        assert_eq!(rates.mad.fp32.as_ref().unwrap().value, 90e9);
        // No fp64 benchmark: the datasheet's.
        let fp64 = rates.peak.fp64.as_ref().unwrap();
        assert_eq!(
            (fp64.value, fp64.source.as_str()),
            (500e9, "Test GPU datasheet")
        );
        assert_eq!(rates.int_add.as_ref().unwrap().value, 70e9);
        assert_eq!(rates.ldst.as_ref().unwrap().value, 120e9);
        assert_eq!(rates.bandwidth.as_ref().unwrap().value, 25e9);
        assert_eq!(rates.uncoalesced_bandwidth.as_ref().unwrap().value, 3e9);
        // The in-place update is its own rate, no peak.
        assert_eq!(rates.in_place_bandwidth.as_ref().unwrap().value, 40e9);
        // By written share: read none, triad a third; the gather and the
        // update are neither.
        let shares: Vec<(f64, f64)> = rates
            .bandwidth_by_writes
            .iter()
            .map(|(share, rate)| (*share, rate.value))
            .collect();
        assert_eq!(shares, [(0.0, 25e9), (1.0 / 3.0, 20e9)]);
        assert_eq!(rates.host_link.as_ref().unwrap().value, 16e9);
        assert!(rates.energy.is_none());
        assert!(rates.notes[0].contains("no power sensor"));
        // A profile from before the cost benchmarks: the model is told.
        assert!(rates.costs.is_none());
        assert!(
            rates.notes[1].contains("predates the cost benchmarks"),
            "{:?}",
            rates.notes
        );
        let mut costly = profile();
        costly.costs = Some(clflow_devices::OpCosts {
            chain_ops_per_s: 8e9,
            local_atomics_per_s: 4e8,
            barriers_per_s: 6e9,
            mispredicts_per_s: None,
            cache_gathers_per_s: Some(3e9),
            cache_gather_tables: Some([1, 4, 16, 64].map(|mib| clflow_devices::GatherRate {
                table_bytes: mib << 20,
                per_s: 12e9 / mib as f64,
            })),
            carried_calls_per_s: Some(2e8),
            page_strides_per_s: Some(3e8),
            walk_table_bytes: Some(128 << 20),
            page_walks: Some([64, 256, 1024, 4096].map(|steps| clflow_devices::WalkRate {
                steps,
                loads_per_s: 3e8 * 4096.0 / f64::from(steps),
                stores_per_s: 1.5e8,
                copies_per_s: 3e8,
            })),
            small_walk_table_bytes: Some(16 << 20),
            small_page_walks: Some([64, 256, 1024, 4096].map(|steps| clflow_devices::WalkRate {
                steps,
                loads_per_s: 6e8,
                stores_per_s: 3e8,
                copies_per_s: 5e8,
            })),
            gathered_lanes_per_s: Some(9e9),
            builtins: Some(clflow_devices::BuiltinRates::from_all(
                [1.0, 2.0, 3.0, 4.0, 5.0].map(|k| clflow_devices::LaneRates {
                    vector_per_s: k * 1e9,
                    scalar_per_s: k * 1e8,
                    walk_per_s: Some(k * 1e7),
                }),
            )),
            line_walks: Some([1, 4, 16, 64].map(|mib| clflow_devices::LineWalkRate {
                walk_bytes: mib << 20,
                per_s: 3e9 / mib as f64,
            })),
            call_walks: Some(clflow_devices::CallWalkRates {
                copies_per_s: 6e7,
                stores_per_s: 7e7,
            }),
            column_walks: Some(
                [1, 4, 16].map(|lines| clflow_devices::VisitRate {
                    lines,
                    per_s: 5e7 * f64::from(lines),
                }),
            ),
            quick: false,
        });
        let with_costs = device_rates("dev", Some(&costly), None, None);
        let costs = with_costs.costs.unwrap();
        assert_eq!((costs.chain_ops_per_s, costs.atomics_per_s), (8e9, 4e8));
        assert_eq!(costs.cache_gathers_per_s, Some(3e9));
        let tables = costs.cache_gather_tables.unwrap();
        assert_eq!(
            (tables[0], tables[3]),
            ((1 << 20, 12e9), (64 << 20, 12e9 / 64.0))
        );
        assert_eq!(costs.carried_calls_per_s, Some(2e8));
        assert_eq!(costs.page_strides_per_s, Some(3e8));
        let walks = costs.page_walks.unwrap();
        assert_eq!((walks[0].steps, walks[0].loads_per_s), (64, 3e8 * 64.0));
        assert_eq!((walks[3].stores_per_s, walks[3].copies_per_s), (1.5e8, 3e8));
        let small = costs.small_page_walks.unwrap();
        assert_eq!((small[2].steps, small[2].loads_per_s), (1024, 6e8));
        assert_eq!(
            (costs.walk_table_bytes, costs.small_walk_table_bytes),
            (Some(128 << 20), Some(16 << 20))
        );
        assert_eq!(costs.gathered_lanes_per_s, Some(9e9));
        // The builtins in the order the model names them.
        assert_eq!(
            clflow_devices::BuiltinRates::NAMES,
            clflow_predict::device::BUILTINS
        );
        assert_eq!(costs.builtins.unwrap()[4], (5e9, 5e8));
        assert_eq!(costs.builtin_walks.unwrap()[4], 5e7);
        assert_eq!(costs.call_walks, Some((6e7, 7e7)));
        assert_eq!(costs.column_walks.unwrap()[2], (16, 8e8));
        let lines = costs.line_walks.unwrap();
        assert_eq!(
            (lines[0], lines[3]),
            ((1 << 20, 3e9), (64 << 20, 3e9 / 64.0))
        );
        assert!(!with_costs
            .notes
            .iter()
            .any(|n| n.contains("cost benchmarks") || n.contains("page walks")));
        // Costs from before the line walks: told.
        let mut unlined = costly.clone();
        unlined.costs.as_mut().unwrap().line_walks = None;
        let unlined = device_rates("dev", Some(&unlined), None, None);
        assert!(unlined.costs.unwrap().line_walks.is_none());
        assert!(
            unlined
                .notes
                .iter()
                .any(|n| n.contains("predates the line walks")),
            "{:?}",
            unlined.notes
        );
        // And from before the walks with a kept call a step.
        let mut uncalled = costly.clone();
        uncalled.costs.as_mut().unwrap().call_walks = None;
        let uncalled = device_rates("dev", Some(&uncalled), None, None);
        assert!(uncalled.costs.unwrap().call_walks.is_none());
        assert!(
            uncalled
                .notes
                .iter()
                .any(|n| n.contains("page walks with a call a step")),
            "{:?}",
            uncalled.notes
        );
        // Walks timed over a table sized by the driver's cache: the model
        // is told.
        costly.costs.as_mut().unwrap().walk_table_bytes = None;
        let sized_by_cache = device_rates("dev", Some(&costly), None, None);
        assert!(
            sized_by_cache
                .notes
                .iter()
                .any(|n| n.contains("stepped through a table of four last-level caches")),
            "{:?}",
            sized_by_cache.notes
        );
        // Costs from before the walks of other lengths: told that instead.
        costly.costs.as_mut().unwrap().page_walks = None;
        let one_walk = device_rates("dev", Some(&costly), None, None);
        assert!(
            one_walk.notes.iter().any(|n| n.contains(
                "predates the page walks of other lengths and of stores (clflow bench --refresh"
            )),
            "{:?}",
            one_walk.notes
        );
        assert!(!one_walk
            .notes
            .iter()
            .any(|n| n.contains("four last-level caches")));
        // Unmeasured: datasheet figures only.
        let sheet_only = device_rates("dev", None, Some(&sheet()), None);
        assert_eq!(sheet_only.bandwidth.unwrap().value, 900e9);
        assert!(sheet_only.ldst.is_none());
    }

    #[test]
    fn power_samples_give_the_energy_fit() {
        let mut p = profile();
        let sample = |ops: f64, bytes: f64| EnergySample {
            benchmark: "b".into(),
            ops_per_s: ops,
            bytes_per_s: bytes,
            mean_w: 100e-12 * ops + 500e-12 * bytes + 40.0,
            source: PowerSource::Rapl,
        };
        p.energy_samples = vec![
            sample(90e9, 0.0),
            sample(30e9, 0.0),
            sample(5e9, 20e9),
            sample(0.0, 25e9),
        ];
        let rates = device_rates("dev", Some(&p), None, None);
        let e = rates.energy.unwrap();
        assert!((e.op_j - 100e-12).abs() < 1e-18);
        assert!((e.byte_j - 500e-12).abs() < 1e-18);
        assert!((e.constant_w - 40.0).abs() < 1e-6);
        assert!(e
            .source
            .starts_with("least squares over 4 clflow bench runs (rapl)"));
    }

    /// Issue rates are instructions: adds one operation each, mads two; the
    /// scalar ones come from the diverged chains. The compiler is taken to
    /// vectorise inside loops only where the uniform width-1 chain runs
    /// well above the diverged one.
    #[test]
    fn issue_rates_and_loop_vectorising_come_from_the_chains() {
        let peak = |data_type, kernel: &str, width, best| ComputePeak {
            data_type,
            kernel: kernel.into(),
            vector_width: width,
            ops_per_s: stat(best),
        };
        let mut p = profile();
        p.compute.extend([
            peak(ComputeType::Fp32, "mad", 1, 30e9),
            peak(ComputeType::Fp32, "mad-diverged", 1, 28e9),
            peak(ComputeType::Int32, "add-diverged", 1, 20e9),
        ]);
        let cpu = Some(Simd {
            width: 16,
            kind: SimdKind::WorkGroupVectoriser,
            vectorises_loops: false,
        });
        let rates = device_rates("dev", Some(&p), None, cpu);
        let value = |r: &Option<Rate>| r.as_ref().unwrap().value;
        assert_eq!(value(&rates.issue.vector.fp32), 45e9);
        assert_eq!(value(&rates.issue.vector.int), 70e9);
        assert_eq!(value(&rates.issue.scalar.fp32), 14e9);
        assert_eq!(value(&rates.issue.scalar.int), 20e9);
        assert!(rates.issue.scalar.fp64.is_none());
        assert!(!rates.simd.unwrap().vectorises_loops);
        // A runtime that vectorises width-1 chains in uniform loops.
        p.compute.push(peak(ComputeType::Fp32, "mad", 1, 80e9));
        let rates = device_rates("dev", Some(&p), None, cpu);
        assert!(rates.simd.unwrap().vectorises_loops);
        // A CPU's SIMD width is its native float lanes.
        let mut info = clflow_ocl::DeviceInfo::described(0, "p", "cpu", DeviceKind::Cpu);
        info.native_float_lanes = 16;
        assert_eq!(simd_of(&info), cpu);
        let gpu = clflow_ocl::DeviceInfo::described(0, "p", "gpu", DeviceKind::Gpu);
        assert_eq!(
            simd_of(&gpu).map(|s| (s.width, s.kind)),
            Some((32, SimdKind::Simt))
        );
    }
}
