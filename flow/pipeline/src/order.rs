//! The order a device runs a work-group's work-items in, and the second
//! traced run it asks for where that order changes what a cache holds.
//!
//! The interpreter runs a batch's work-items in lockstep, as a GPU's warps
//! do. A CPU's OpenCL runtime runs a work-group one work-item after another
//! between barriers (a vector of them at a time where its compiler
//! vectorises the kernel's loops): a work-item that loops over a long
//! stretch of memory has finished it before its neighbours start on the
//! same lines. Where a work-item walks that far, the cache sees other
//! misses in that order, and the device's traffic is simulated again in it
//! (the coalescing stays the lockstep run's: neighbours' addresses).

use crate::count::{interpret, Watch};
use crate::traffic::{device_traffic, traffic_analysis, DeviceCache};
use crate::Observer;
use clflow_core::Launch;
use clflow_interp::{ItemOrder, RunOptions};
use clflow_predict::{DeviceRates, SimdKind};
use clflow_spirv::Module;
use clflow_traffic::{format_size, DeviceTraffic, TrafficReport};
use std::borrow::Cow;
use std::path::Path;

/// The order `rates`' device runs a work-group's work-items in, where it is
/// not the interpreter's lockstep: a CPU's, a vector at a time where its
/// compiler vectorises the kernel's loops, else one at a time.
pub fn device_order(rates: &DeviceRates) -> Option<ItemOrder> {
    let simd = rates.simd.as_ref()?;
    (simd.kind == SimdKind::WorkGroupVectoriser).then_some(ItemOrder::Vectors(
        if simd.vectorises_loops { simd.width } else { 1 },
    ))
}

/// The share of a cache that one work-item's walk between barriers must
/// reach before the order of work-items can change what the cache holds:
/// a line a work-item shares with the next comes back after about one
/// walk, and a walk of a quarter of the cache leaves a margin for the
/// other work-groups running beside it.
const WALK_SHARE_OF_CACHE: u64 = 4;

/// Whether running the work-items in the device's own order could change
/// the traffic through `cache`: some work-item walks a quarter of its
/// size or more between two barriers.
pub fn order_matters(lockstep: &TrafficReport, cache: &DeviceCache) -> bool {
    WALK_SHARE_OF_CACHE * lockstep.stretch_bytes() >= cache.spec.bytes
}

/// `order` in words, for reports.
pub fn describe(order: ItemOrder) -> String {
    match order {
        ItemOrder::Lockstep => "work-items in lockstep".into(),
        ItemOrder::Vectors(1) => "work-items one at a time between barriers".into(),
        ItemOrder::Vectors(n) => format!("work-items {n} at a time between barriers"),
    }
}

/// A device's place in [`traffic_in_device_order`]: its name, its cache,
/// and the order it runs work-items in.
pub struct OrderedDevice<'a> {
    pub name: &'a str,
    pub cache: &'a DeviceCache,
    pub order: Option<ItemOrder>,
}

/// Each device's traffic through its cache: from `lockstep`, the run that
/// counted, or where the device's own order of work-items could change
/// it, from a second traced run in that order (one per order the devices
/// need).
pub fn traffic_in_device_order(
    manifest: &Path,
    module: &Module,
    launch: &Launch,
    options: &RunOptions,
    lockstep: &TrafficReport,
    devices: &[OrderedDevice<'_>],
    observer: &dyn Observer,
) -> crate::Result<Vec<DeviceTraffic>> {
    let reorder = |d: &OrderedDevice<'_>| d.order.filter(|_| order_matters(lockstep, d.cache));
    // Each order run in, and its report (none where the kernel ran in
    // lockstep all the same).
    let mut runs: Vec<(ItemOrder, Option<TrafficReport>)> = Vec::new();
    let mut traffic = Vec::new();
    for device in devices {
        let Some(order) = reorder(device) else {
            traffic.push(device_traffic(device.name, device.cache, lockstep));
            continue;
        };
        let run = match runs.iter().position(|(o, _)| *o == order) {
            Some(run) => run,
            None => {
                // One run serves every device that runs work-items so.
                let caches: Vec<Option<DeviceCache>> = devices
                    .iter()
                    .filter(|d| reorder(d) == Some(order))
                    .map(|d| Some(d.cache.clone()))
                    .collect();
                observer.note(format!(
                    "{}: a work-item walks {} between barriers: simulating its cache again \
                     with {}, as the device runs them",
                    device.name,
                    format_size(lockstep.stretch_bytes()),
                    describe(order)
                ));
                let (ran, report, _) = interpret(
                    manifest,
                    module,
                    Cow::Borrowed(launch),
                    &RunOptions { order, simd: false, ..options.clone() },
                    Watch::traffic(traffic_analysis(&caches).simulating_only()),
                    observer,
                )?
                .traced()?;
                // A kernel with work-group functions runs in lockstep.
                let report = (ran.order == order).then(|| lockstep.with_curves_of(report));
                runs.push((order, report));
                runs.len() - 1
            }
        };
        traffic.push(match &runs[run].1 {
            Some(report) => DeviceTraffic {
                order: Some(describe(order)),
                ..device_traffic(device.name, device.cache, report)
            },
            None => device_traffic(device.name, device.cache, lockstep),
        });
    }
    Ok(traffic)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clflow_counts::{AccessKind, AccessSink, GlobalAccess, TraceBuffer};
    use clflow_predict::Simd;
    use clflow_traffic::TrafficAnalysis;

    fn rates(kind: SimdKind, vectorises_loops: bool) -> DeviceRates {
        DeviceRates {
            simd: Some(Simd { width: 16, kind, vectorises_loops }),
            ..DeviceRates::default()
        }
    }

    #[test]
    fn a_cpu_runs_work_items_one_at_a_time_unless_it_vectorises_loops() {
        let cpu = rates(SimdKind::WorkGroupVectoriser, false);
        assert_eq!(device_order(&cpu), Some(ItemOrder::Vectors(1)));
        let vectorising = rates(SimdKind::WorkGroupVectoriser, true);
        assert_eq!(device_order(&vectorising), Some(ItemOrder::Vectors(16)));
        assert_eq!(device_order(&rates(SimdKind::Simt, true)), None);
        assert_eq!(device_order(&DeviceRates::default()), None);
        assert_eq!(
            describe(ItemOrder::Vectors(1)),
            "work-items one at a time between barriers"
        );
    }

    /// A work-item that walks `lines` lines of a buffer.
    fn walked(lines: u64) -> TrafficReport {
        let mut analysis = TrafficAnalysis::new(&[64]);
        analysis.buffers(&[TraceBuffer {
            label: "a".into(),
            space: "__global",
            bytes: 64 * lines,
            read_only: true,
        }]);
        let walk: Vec<GlobalAccess> = (0..lines)
            .map(|k| GlobalAccess {
                fenced: 0,
                offset: 64 * k,
                buffer: 0,
                bytes: 4,
                site: 0,
                dispatch: k as u32,
                item: 0,
                kind: AccessKind::Load,
                atomic: false,
                phase: 0,
                lanes: 1,
                contiguous: false,
                runs: 1,
                run_step: 0,
            })
            .collect();
        analysis.work_group(0, &walk);
        analysis.finish()
    }

    #[test]
    fn the_order_matters_from_a_walk_of_a_quarter_of_the_cache() {
        let cache = DeviceCache {
            spec: "64KiB/64".parse().unwrap(),
            source: "--cache".into(),
            upper: Vec::new(),
        };
        // 256 lines are 16 KiB, a quarter of the cache.
        assert!(order_matters(&walked(256), &cache));
        assert!(!order_matters(&walked(255), &cache));
    }
}
