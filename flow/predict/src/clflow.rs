//! clflow's own model: what the paper models cannot know, from the
//! interpreter and the microbenchmarks.
//!
//! Assumptions, each standing on a measurement and none fitted to the
//! kernels it predicts:
//!
//! 1. **Launch.** A launch costs what an empty kernel costs on one
//!    work-group, plus what each further work-group adds (`clflow bench`'s
//!    `launch/empty`, timed on 1 and on 1,024 work-groups).
//! 2. **Issue.** Every instruction the kernel executes takes an issue slot:
//!    its arithmetic in its class, loads and stores in the integer class;
//!    phis, moves and branches, which compiled code mostly folds away, take
//!    none. A class issues at its instruction rate: the add chain's for
//!    integers (one operation an instruction), half the mad chain's for
//!    floats (two).
//! 3. **Vectors.** On a CPU, whose OpenCL compiler vectorises a work-group's
//!    work-items where their control flow agrees, the steps the interpreter
//!    saw run in full vectors of the device's SIMD width (its native `float`
//!    lanes) issue at the best vector width's rate, the rest at the scalar
//!    rate (a chain whose loop the compiler cannot prove uniform). Where
//!    the microbenchmarks show that the compiler does not vectorise inside
//!    a kernel's own loops (a width-1 chain in a uniform loop runs no
//!    faster than the diverged one), steps inside loops run scalar too. On a GPU every step issues for its whole warp: the rate
//!    at the best width times the warp's efficiency (the share of its lanes
//!    that work).
//! 4. **Memory.** DRAM traffic (simulated at the device's cache, else
//!    compulsory) moves at the stream bandwidth. On a GPU, the share the
//!    coalescing analysis found uncoalesced moves at the gather bandwidth
//!    (a CPU's caches make whole lines of scattered accesses, which the
//!    cache simulation charged already).
//! 5. **Overlap.** Issue and memory overlap: the kernel takes the launch
//!    plus the longer of the two.

use crate::device::{missing, DeviceRates, Rate, SimdKind};
use crate::kernel::KernelFacts;
use crate::roofline::Bound;
use clflow_counts::OpClass;
use serde::{Deserialize, Serialize};

/// clflow's prediction, with every term.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Clflow {
    pub time_s: f64,
    pub launch_s: f64,
    pub issue_s: f64,
    pub memory_s: f64,
    /// The share of instruction steps issued as vectors (CPU), or the
    /// warp efficiency (GPU).
    pub vector_share: f64,
    pub simd_width: u32,
    pub bound: Bound,
}

pub fn predict_kernel(facts: &KernelFacts, device: &DeviceRates) -> Result<Clflow, String> {
    let simd = device
        .simd
        .as_ref()
        .ok_or_else(|| missing("SIMD width", device))?;
    let used = facts
        .simd
        .iter()
        .filter(|s| s.width <= simd.width.max(8))
        .max_by_key(|s| s.width)
        .ok_or_else(|| format!("{}: the count measured no SIMD use", facts.name))?;
    let launch = device
        .launch
        .ok_or_else(|| missing("launch overhead (clflow bench --refresh)", device))?;
    let groups = facts.work_groups.max(1) as f64;
    let launch_s = launch.empty_s + launch.per_group_s * (groups - 1.0);

    let a = &facts.instructions.arithmetic;
    let lanes = [
        (OpClass::Int, a.int + facts.instructions.ldst),
        (OpClass::Fp32, a.fp32),
        (OpClass::Fp64, a.fp64),
        (OpClass::Fp16, a.fp16),
    ];
    let (vector_share, scalar_share) = match simd.kind {
        SimdKind::WorkGroupVectoriser => {
            let share = if simd.vectorises_loops {
                used.convergence()
            } else {
                used.convergence_outside_loops()
            };
            (share, 1.0 - share)
        }
        SimdKind::Simt => (used.efficiency(), 0.0),
    };
    let mut issue_s = 0.0;
    for (class, n) in lanes.into_iter().filter(|(_, n)| *n > 0) {
        let rate = |rates: &Option<Rate>, what: &str| {
            rates
                .as_ref()
                .map(|r| r.value)
                .filter(|v| *v > 0.0)
                .ok_or_else(|| missing(&format!("{} {what}", class.name()), device))
        };
        let (vector, scalar) = device.instruction_rates(class);
        let vector = rate(vector, "vector instruction rate")?;
        let n = n as f64;
        issue_s += match simd.kind {
            SimdKind::WorkGroupVectoriser => {
                let scalar = rate(scalar, "scalar instruction rate")?;
                n * (vector_share / vector + scalar_share / scalar)
            }
            SimdKind::Simt => n / (vector * vector_share.max(1e-9)),
        };
    }

    let stream = device
        .bandwidth
        .as_ref()
        .ok_or_else(|| missing("memory bandwidth", device))?
        .value;
    let gather = device
        .uncoalesced_bandwidth
        .as_ref()
        .map_or(stream, |r| r.value);
    let (dram, _) = facts.traffic.dram();
    // A CPU's caches turn scattered accesses into whole lines, which the
    // cache simulation already charged: only a GPU pays per transaction.
    let coalesced = match (simd.kind, facts.coalescing) {
        (SimdKind::Simt, Some(c)) => c.coalesced_share(),
        _ => 1.0,
    };
    let memory_s = dram as f64 * (coalesced / stream + (1.0 - coalesced) / gather);

    let bound = if issue_s >= memory_s {
        Bound::Compute
    } else {
        Bound::Memory
    };
    Ok(Clflow {
        time_s: launch_s + issue_s.max(memory_s),
        launch_s,
        issue_s,
        memory_s,
        vector_share,
        simd_width: simd.width,
        bound,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{ClassRates, IssueRates, LaunchCost, Simd};
    use crate::kernel::tests::sgemm_facts;
    use clflow_counts::SimdUse;

    fn device(simd: Simd) -> DeviceRates {
        let rate = |v: f64| Some(Rate::new(v, "test"));
        DeviceRates {
            name: "test cpu".into(),
            bandwidth: rate(10e9),
            uncoalesced_bandwidth: rate(1e9),
            issue: IssueRates {
                vector: ClassRates {
                    int: rate(100e9),
                    fp32: rate(200e9),
                    ..ClassRates::default()
                },
                scalar: ClassRates {
                    int: rate(10e9),
                    fp32: rate(20e9),
                    ..ClassRates::default()
                },
            },
            launch: Some(LaunchCost {
                empty_s: 1e-6,
                per_group_s: 1e-8,
            }),
            simd: Some(simd),
            ..DeviceRates::default()
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs()
    }

    /// sgemm's 300,032 integer and load/store lanes and 32,768 fp32 lanes,
    /// 90% of its steps inside its loop, all converged: on a CPU that does
    /// not vectorise inside loops, 10% issue as vectors.
    #[test]
    fn issue_follows_how_the_work_items_fill_vectors() {
        let mut facts = sgemm_facts();
        facts.simd = vec![SimdUse {
            width: 16,
            lane_steps: 1000,
            issued_steps: 1000,
            converged_steps: 1000,
            loop_steps: 900,
            converged_loop_steps: 900,
        }];
        let cpu = Simd {
            width: 16,
            kind: SimdKind::WorkGroupVectoriser,
            vectorises_loops: false,
        };
        let p = predict_kernel(&facts, &device(cpu)).unwrap();
        assert!(close(p.vector_share, 0.1));
        assert!(close(p.launch_s, 1e-6 + 3.0 * 1e-8));
        let issue = 300_032.0 * (0.1 / 100e9 + 0.9 / 10e9) + 32_768.0 * (0.1 / 200e9 + 0.9 / 20e9);
        assert!(close(p.issue_s, issue), "{p:?}");
        assert!(close(p.memory_s, 12_288.0 / 10e9));
        assert!(close(p.time_s, p.launch_s + issue));
        assert_eq!(p.bound, Bound::Compute);
        // Vectorising inside loops too: every step as vectors.
        let loops = Simd {
            vectorises_loops: true,
            ..cpu
        };
        let p = predict_kernel(&facts, &device(loops)).unwrap();
        assert!(close(p.issue_s, 300_032.0 / 100e9 + 32_768.0 / 200e9));
        // No SIMD use measured, or no launch cost: no prediction, and why.
        facts.simd.clear();
        let why = predict_kernel(&facts, &device(cpu)).unwrap_err();
        assert!(why.contains("no SIMD use"), "{why}");
    }
}
