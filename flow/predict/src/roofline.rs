//! The roofline bound as a time: T = max(W / F̂, Q / B̂). The kernel can go
//! no faster than its operations at peak throughput, nor than its traffic
//! at peak bandwidth (the slides' T = f·t_f + m·t_m with full overlap).

use crate::json::nan_if_null;
use serde::{Deserialize, Serialize};

/// Which side of the ridge a kernel falls on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    Compute,
    Memory,
}

impl Bound {
    pub fn name(self) -> &'static str {
        match self {
            Bound::Compute => "compute",
            Bound::Memory => "memory",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RooflineTime {
    #[serde(deserialize_with = "nan_if_null")]
    pub compute_s: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub memory_s: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub time_s: f64,
    pub bound: Bound,
}

/// `work` operations at `peak` ops/s and `bytes` at `bandwidth` bytes/s.
pub fn roofline_time(work: f64, peak: f64, bytes: f64, bandwidth: f64) -> RooflineTime {
    let compute_s = work / peak;
    let memory_s = bytes / bandwidth;
    let bound = if compute_s >= memory_s {
        Bound::Compute
    } else {
        Bound::Memory
    };
    RooflineTime { compute_s, memory_s, time_s: compute_s.max(memory_s), bound }
}

/// The ridge: the intensity (ops/byte) where both bounds meet.
pub fn ridge(peak: f64, bandwidth: f64) -> f64 {
    peak / bandwidth
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quantitative_papers_xeon_ridge_is_3_39_flop_per_byte() {
        // Figure 1 of the quantitative-roofline paper: Xeon E7-8857 v2,
        // 12 cores × 3.0 GHz × 8 double flops per cycle = 288 GFLOPS over
        // 85 GB/s: memory bound up to 3.39 flop/byte.
        let ridge = ridge(12.0 * 3.0e9 * 8.0, 85e9);
        assert!((ridge - 3.39).abs() < 0.005, "{ridge}");
    }

    #[test]
    fn the_slower_side_sets_the_time() {
        // The slides' example: 14 flops and 24 bytes per point on a K40
        // (1.43 TFLOPS, 184 GB/s) is memory bound.
        let points = 1e8;
        let t = roofline_time(14.0 * points, 1.43e12, 24.0 * points, 184e9);
        assert_eq!(t.bound, Bound::Memory);
        assert!((t.time_s - 24.0 * points / 184e9).abs() < 1e-15);
        assert!((t.compute_s - 14.0 * points / 1.43e12).abs() < 1e-15);
        let compute = roofline_time(1e12, 1e12, 1e9, 1e12);
        assert_eq!(compute.bound, Bound::Compute);
        assert_eq!(compute.time_s, 1.0);
    }
}
