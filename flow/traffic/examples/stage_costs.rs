//! What the two analysis stages cost a record: the stack-distance pass
//! (`LruSimulator`) and the coalescing analysis, each alone on one thread,
//! best of 15, on the stream the interpreter hands over for sgemm at 128³
//! (`kernels/sgemm/sgemm-128.toml`: 64 work-groups of 16 × 16, batches of
//! 64 work-items, so that each load makes 4 runs of 16 a dispatch, rows of
//! runs that one record holds), and on the same stream a run a record.
//!
//! `cargo run --release -p clflow-traffic --example stage_costs`

use clflow_counts::access::{joined, runs};
use clflow_counts::{AccessKind, GlobalAccess};
use clflow_traffic::{CoalescingAnalyzer, LruSimulator};
use std::time::Instant;

const N: u64 = 128;
const SITE_A: u32 = 44;
const SITE_B: u32 = 49;
const SITE_C: u32 = 60;

fn main() {
    let in_runs = sgemm_runs();
    let in_rows: Vec<Vec<GlobalAccess>> = in_runs.iter().map(|g| joined(g.clone())).collect();
    println!(
        "{:<27} {:>7} {:>15} {:>11}",
        "stream", "records", "stack distance", "coalescing"
    );
    report("rows of runs (handed over)", &in_rows);
    report("a run a record", &in_runs);
}

/// Each work-group's accesses of sgemm at 128³, in runs.
fn sgemm_runs() -> Vec<Vec<GlobalAccess>> {
    let mut groups = Vec::new();
    for (gy, gx) in (0..N / 16).flat_map(|gy| (0..N / 16).map(move |gx| (gy, gx))) {
        let mut list = Vec::new();
        let mut dispatch = 0;
        for batch in 0..4 {
            // Work-item (linear id, row, column) of each of the batch's lanes.
            let lanes: Vec<(u32, u64, u64)> = (0..64)
                .map(|l| {
                    let (ly, lx) = (4 * batch + l / 16, l % 16);
                    ((lx + 16 * ly) as u32, 16 * gy + ly, 16 * gx + lx)
                })
                .collect();
            let mut dispatch_at = |site, buffer, kind, at: &dyn Fn(u64, u64) -> u64| {
                dispatch += 1;
                for &(item, row, col) in &lanes {
                    list.push(GlobalAccess {
                        offset: at(row, col),
                        bytes: 4,
                        site,
                        dispatch,
                        item,
                        buffer,
                        kind,
                        ..GlobalAccess::default()
                    });
                }
            };
            for k in 0..N {
                dispatch_at(SITE_A, 0, AccessKind::Load, &|row, _| 4 * (row * N + k));
                dispatch_at(SITE_B, 1, AccessKind::Load, &|_, col| 4 * (k * N + col));
            }
            dispatch_at(SITE_C, 2, AccessKind::Store, &|row, col| {
                4 * (row * N + col)
            });
        }
        groups.push(runs(list));
    }
    groups
}

fn report(name: &str, stream: &[Vec<GlobalAccess>]) {
    let records: usize = stream.iter().map(Vec::len).sum();
    let buffers = [4 * N * N; 3];
    let lru = best_of(15, || {
        let mut sim = LruSimulator::new(128, &buffers).probing(&[40 << 20]);
        for group in stream {
            sim.accesses(group);
        }
        sim.finish();
    });
    let coalescing = best_of(15, || {
        let mut analyzer = CoalescingAnalyzer::new(128);
        for (g, group) in stream.iter().enumerate() {
            analyzer.work_group(g as u64, group);
        }
        analyzer.finish();
    });
    println!("{name:<27} {records:>7} {lru:>12.2} ms {coalescing:>8.2} ms");
}

/// The fastest of `times` runs of `work`, in milliseconds.
fn best_of(times: usize, mut work: impl FnMut()) -> f64 {
    (0..times)
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::MAX, f64::min)
}
