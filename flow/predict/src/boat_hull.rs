//! The boat hull model: execution time from class parameters (w, m, o, c,
//! u, d) and four device figures (P_compute, P_coalesced, P_uncoalesced,
//! B_bus). The model's paper reads the parameters from a hand-made
//! algorithm classification; here they come from the interpretation.
//!
//! ```text
//! c0 = w · (f · m + o) / P_compute        compute equation
//! m0 = c / P_coalesced + u / P_uncoalesced memory equation
//! c1 = 2 · c0                             floor: no fused multiply-add (half the peak)
//! m1 = (c + u) / P_uncoalesced            floor: every access scattered
//! t0 = d / B_bus                          host-accelerator transfer
//! ```
//!
//! Parameters from the counts (see [`ClassParameters::from_facts`]):
//! * `w`: work-items (the paper's work-units, one thread each);
//! * `m`: global elements each work-item reads (load lanes / w, at least 1):
//!   1 for element-wise classes, U·V for a tile, N·M for a neighbourhood;
//! * `f`: the complexity, useful operations per element read: W of the
//!   dominant class (address computations excluded) / (w · m);
//! * `o`: the offset, every other arithmetic operation per work-item
//!   (index and address computations, work of the other classes);
//! * `c`, `u`: the compulsory (or cache-simulated) traffic split by the
//!   coalescing analysis; without one, or on a CPU (whose cores serve a
//!   work-item's scattered accesses from their caches), all of it is
//!   coalesced (`u` = 0) and the prediction says so;
//! * `d`: the bytes the host copies in and out.
//!
//! The no-FMA floor applies when the kernel's useful instructions are not
//! all multiply-adds. The prediction is the range from max(c0, m0) to
//! max(c1, m0) (floor applied) and its midpoint, as the paper's Table 5
//! compares measurements with the average of the predicted range.

use crate::device::{missing, DeviceRates, Rate};
use crate::json::nan_if_null;
use crate::kernel::KernelFacts;
use crate::roofline::Bound;
use clflow_counts::OpClass;
use serde::{Deserialize, Serialize};

/// The class parameters of the boat hull model, traffic in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClassParameters {
    #[serde(deserialize_with = "nan_if_null")]
    pub w: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub m: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub o: f64,
    /// The kernel's complexity f (operations per element read).
    #[serde(deserialize_with = "nan_if_null")]
    pub f: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub c: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub u: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub d: f64,
    /// Whether the no-FMA floor applies.
    pub fma_floor: bool,
}

impl ClassParameters {
    /// Derives the parameters from an interpretation (see the module doc);
    /// the second value says what was assumed.
    pub fn from_facts(facts: &KernelFacts) -> (ClassParameters, Vec<String>) {
        let mut notes = Vec::new();
        let class = facts.dominant_class();
        let mut useful = facts.work_by_class.get(class);
        if class == OpClass::Int {
            useful = useful.saturating_sub(facts.address_work);
        }
        let all_arith = {
            let a = &facts.work_by_class;
            a.int + a.fp32 + a.fp64 + a.fp16
        };
        let w = facts.work_items.max(1) as f64;
        let m = (facts.load_lanes as f64 / w).max(1.0);
        let f = useful as f64 / (w * m);
        let o = all_arith.saturating_sub(useful) as f64 / w;
        let (dram, _) = facts.traffic.dram();
        let (c, u) = match facts.coalescing {
            Some(share) if share.penalised => {
                let c = (dram as f64 * share.coalesced_share()).round();
                (c, dram as f64 - c)
            }
            Some(share) => {
                notes.push(format!(
                    "a CPU device: its uncoalesced accesses ({:.0}% of bytes) run through each \
                     core's caches, so all of the traffic is charged at P_coalesced (u = 0)",
                    100.0 * (1.0 - share.coalesced_share())
                ));
                (dram as f64, 0.0)
            }
            None => {
                notes.push(
                    "no coalescing analysis: every access taken as coalesced (u = 0)".to_string(),
                );
                (dram as f64, 0.0)
            }
        };
        let instructions = facts.instructions.arithmetic.get(class);
        let fma_floor = instructions > 0 && useful < 2 * instructions;
        (
            ClassParameters { w, m, o, f, c, u, d: facts.host.total() as f64, fma_floor },
            notes,
        )
    }

    /// c0 at complexity `f`.
    pub fn compute_time(&self, f: f64, p_compute: f64) -> f64 {
        self.w * (f * self.m + self.o) / p_compute
    }

    /// m0, or `None` when uncoalesced bytes meet no uncoalesced bandwidth.
    pub fn memory_time(&self, p_coalesced: f64, p_uncoalesced: Option<f64>) -> Option<f64> {
        let scattered = match (self.u > 0.0, p_uncoalesced) {
            (false, _) => 0.0,
            (true, Some(p)) => self.u / p,
            (true, None) => return None,
        };
        Some(self.c / p_coalesced + scattered)
    }

    /// m1: every access scattered.
    pub fn scattered_floor(&self, p_uncoalesced: f64) -> f64 {
        (self.c + self.u) / p_uncoalesced
    }

    /// t0: the host copies.
    pub fn transfer_time(&self, b_bus: f64) -> f64 {
        self.d / b_bus
    }
}

/// The device figures the model reads, with their sources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HullDevice {
    pub p_compute: Rate,
    pub p_coalesced: Rate,
    pub p_uncoalesced: Option<Rate>,
    pub b_bus: Option<Rate>,
}

impl HullDevice {
    /// The figures for a kernel whose useful work is of `class`.
    pub fn of(device: &DeviceRates, class: OpClass) -> Result<HullDevice, String> {
        Ok(HullDevice {
            p_compute: device
                .peak
                .get(class)
                .cloned()
                .ok_or_else(|| missing(&format!("{} peak throughput", class.name()), device))?,
            p_coalesced: device
                .bandwidth
                .clone()
                .ok_or_else(|| missing("memory bandwidth", device))?,
            p_uncoalesced: device.uncoalesced_bandwidth.clone(),
            b_bus: device.host_link.clone(),
        })
    }
}

/// The model's prediction for one kernel on one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoatHull {
    pub parameters: ClassParameters,
    pub device: HullDevice,
    #[serde(deserialize_with = "nan_if_null")]
    pub c0_s: f64,
    /// The no-FMA floor, where it applies.
    pub c1_s: Option<f64>,
    #[serde(deserialize_with = "nan_if_null")]
    pub m0_s: f64,
    /// The scattered floor, where P_uncoalesced is known.
    pub m1_s: Option<f64>,
    /// Host copies, where B_bus is known.
    pub t0_s: Option<f64>,
    /// The predicted kernel time: [low, high] and the midpoint.
    #[serde(deserialize_with = "nan_if_null")]
    pub low_s: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub high_s: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub time_s: f64,
    pub bound: Bound,
    pub notes: Vec<String>,
}

/// Evaluates the model.
pub fn predict(
    parameters: ClassParameters,
    device: HullDevice,
    mut notes: Vec<String>,
) -> Result<BoatHull, String> {
    let p_uncoalesced = device.p_uncoalesced.as_ref().map(|r| r.value);
    let c0 = parameters.compute_time(parameters.f, device.p_compute.value);
    let m0 = parameters
        .memory_time(device.p_coalesced.value, p_uncoalesced)
        .ok_or("uncoalesced bytes but no uncoalesced bandwidth")?;
    let c1 = parameters.fma_floor.then_some(2.0 * c0);
    let low = c0.max(m0);
    let high = c1.unwrap_or(c0).max(m0);
    let t0 = device
        .b_bus
        .as_ref()
        .map(|b| parameters.transfer_time(b.value));
    if t0.is_none() {
        notes.push("no host-link bandwidth: transfer time t0 not predicted".into());
    }
    Ok(BoatHull {
        parameters,
        c0_s: c0,
        c1_s: c1,
        m0_s: m0,
        m1_s: p_uncoalesced.map(|p| parameters.scattered_floor(p)),
        t0_s: t0,
        low_s: low,
        high_s: high,
        time_s: (low + high) / 2.0,
        bound: if c0 >= m0 {
            Bound::Compute
        } else {
            Bound::Memory
        },
        device,
        notes,
    })
}

/// The model for a kernel on a device, parameters derived from its facts.
pub fn predict_kernel(facts: &KernelFacts, device: &DeviceRates) -> Result<BoatHull, String> {
    let (parameters, notes) = ClassParameters::from_facts(facts);
    let hull = HullDevice::of(device, facts.dominant_class())?;
    predict(parameters, hull, notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::tests::sgemm_facts;
    use crate::kernel::Coalescing;

    /// Table 2 of the boat hull paper: the GeForce GTX470.
    fn gtx470() -> HullDevice {
        HullDevice {
            p_compute: Rate::new(1089e9, "Table 2"),
            p_coalesced: Rate::new(95e9, "Table 2"),
            p_uncoalesced: Some(Rate::new(5.9e9, "Table 2")),
            b_bus: Some(Rate::new(5.1e9, "Table 2")),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1e-30)
    }

    #[test]
    fn table_1_element_class_on_the_gtx470() {
        // '2048x2048|element -> 2048x2048|element': w = A·B, m = 1, o = 16,
        // d = c = 2·A·B elements of 4 bytes, u = 0 (Table 1, first row).
        let ab = 2048.0 * 2048.0;
        let params = ClassParameters {
            w: ab,
            m: 1.0,
            o: 16.0,
            f: 2.0,
            c: 2.0 * ab * 4.0,
            u: 0.0,
            d: 2.0 * ab * 4.0,
            fma_floor: true,
        };
        let hull = predict(params, gtx470(), Vec::new()).unwrap();
        // §4.1: memory 2·K·4 / P_coalesced, compute K·(2 + offset) / P_compute.
        assert!(close(hull.m0_s, 2.0 * ab * 4.0 / 95e9));
        assert!(close(hull.c0_s, ab * 18.0 / 1089e9));
        assert!((hull.m0_s - 0.3532e-3).abs() < 1e-7);
        assert!((hull.c0_s - 0.0693e-3).abs() < 1e-7);
        // At complexity 2 the class is memory bound: 0.35 ms either way.
        assert_eq!(hull.bound, Bound::Memory);
        assert!(close(hull.low_s, hull.m0_s) && close(hull.high_s, hull.m0_s));
        // The compute equation crosses the memory one at f = 8·1089/95 − 16.
        let crossing = 8.0 * 1089.0 / 95.0 - 16.0;
        assert!(close(params.compute_time(crossing, 1089e9), hull.m0_s));
        // Host copies of the 32 MiB over PCIe at 5.1 GB/s: 6.58 ms.
        assert!((hull.t0_s.unwrap() - 6.579e-3).abs() < 1e-6);
        // The scattered floor: 16× slower than coalesced.
        assert!(close(hull.m1_s.unwrap(), 2.0 * ab * 4.0 / 5.9e9));
    }

    #[test]
    fn table_1_sum_class_mixes_coalesced_and_scattered_accesses() {
        // §4.1's second snippet: K elements read coalesced, 1 written
        // uncoalesced: K·4 / P_coalesced + 1·4 / P_uncoalesced.
        let k = 1e6;
        let params = ClassParameters {
            w: k,
            m: 1.0,
            o: 16.0,
            f: 1.0,
            c: k * 4.0,
            u: 4.0,
            d: k * 4.0 + 4.0,
            fma_floor: true,
        };
        let hull = predict(params, gtx470(), Vec::new()).unwrap();
        assert!(close(hull.m0_s, k * 4.0 / 95e9 + 4.0 / 5.9e9));
        assert!(close(hull.c0_s, k * 17.0 / 1089e9));
        // Without an uncoalesced bandwidth the scattered bytes cannot be timed.
        let mut blind = gtx470();
        blind.p_uncoalesced = None;
        assert!(predict(params, blind, Vec::new()).is_err());
    }

    #[test]
    fn a_compute_bound_kernel_spans_the_fma_floor() {
        let params = ClassParameters {
            w: 1e6,
            m: 1.0,
            o: 16.0,
            f: 1000.0,
            c: 8e6,
            u: 0.0,
            d: 8e6,
            fma_floor: true,
        };
        let hull = predict(params, gtx470(), Vec::new()).unwrap();
        let c0 = 1e6 * 1016.0 / 1089e9;
        assert_eq!(hull.bound, Bound::Compute);
        assert!(close(hull.low_s, c0) && close(hull.high_s, 2.0 * c0));
        assert!(close(hull.time_s, 1.5 * c0));
    }

    #[test]
    fn parameters_come_from_the_interpretation() {
        let mut facts = sgemm_facts();
        let (p, notes) = ClassParameters::from_facts(&facts);
        assert_eq!(p.w, 1024.0);
        // Each work-item reads a row of A and a column of B: 64 elements.
        assert_eq!(p.m, 64.0);
        // 32 mads (64 flops) per work-item over 64 elements: f = 1.
        assert_eq!(p.f, 1.0);
        // The integer work (233,472 ops) is the offset: 228 per work-item.
        assert_eq!(p.o, 228.0);
        assert_eq!(p.c, 3.0 * 4096.0);
        assert_eq!(p.u, 0.0);
        assert_eq!(p.d, (3 * 4096 + 80) as f64);
        // Every fp32 instruction is a mad: no floor.
        assert!(!p.fma_floor);
        assert!(notes[0].contains("every access taken as coalesced"));
        facts.coalescing =
            Some(Coalescing { coalesced_bytes: 3, uncoalesced_bytes: 1, penalised: true });
        let (p, notes) = ClassParameters::from_facts(&facts);
        assert_eq!((p.c, p.u), (9216.0, 3072.0));
        assert!(notes.is_empty());
        // A CPU charges everything at P_coalesced, and says why.
        facts.coalescing =
            Some(Coalescing { coalesced_bytes: 3, uncoalesced_bytes: 1, penalised: false });
        let (p, notes) = ClassParameters::from_facts(&facts);
        assert_eq!((p.c, p.u), (12288.0, 0.0));
        assert!(notes[0].contains("a CPU device: its uncoalesced accesses (25% of bytes)"));
    }
}
