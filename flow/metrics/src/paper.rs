//! The paper's case study as a result set: lookup3 (W = 1224 M OPS, Q = 367 MB,
//! §5.1) on the three devices of its Table 1, with the performance F and
//! performance per watt R it measured for each optimised kernel (§5.1.1–5.1.3).
//!
//! The paper reports F and R, not T and P; the runs here carry the T and P
//! those imply (T = W/F, P = F/R), so that clflow's own derivations give back
//! the published F and R and the energies of its Figure 12 (E = T·P = W/R).
//! The peak P implied is below each device's P̂ (107 W against the K20's
//! 225 W): the paper's R divides by the kernel's own peak power (eq. 4), not
//! by P̂.
//!
//! The Table 1 values also live in `devices/tesla-k20.toml`,
//! `devices/xeon-phi-5110p.toml` and `devices/adm-pcie-7v3.toml`; a test
//! keeps the two in agreement.

use crate::figure::{Figure, Unit};
use crate::model::{Ceilings, DeviceProfile, KernelCounts, OpKind, ResultSet, Run};

/// The kernel name, as the paper's Oclgrind output (Figure 5) names it.
pub const KERNEL: &str = "hash";

/// W: the operations the paper counts for 8 M random keys of 0–60 bytes.
pub const WORK_OPS: f64 = 1224e6;
/// Q: the global-memory traffic, bytes (one compulsory miss per key).
pub const TRAFFIC_BYTES: f64 = 367e6;

/// One row of Table 1 and the lookup3 result measured on that device.
#[derive(Debug, Clone, Copy)]
pub struct PaperDevice {
    pub name: &'static str,
    pub kind: &'static str,
    /// Theoretical peaks F̄_f, F̄_i (GOPS/s), B̄ (GB/s), P̄ (W).
    pub datasheet: [f64; 4],
    /// Measured peaks F̂_f, F̂_i (GOPS/s), B̂ (GB/s), P̂ (W).
    pub measured: [f64; 4],
    /// Where the measured peaks come from (Table 1 and its footnotes).
    pub measured_source: &'static str,
    /// The lookup3 performance F (GOPS/s) and performance per watt R
    /// (GOPS/s/W) the paper reports, and the section reporting them.
    pub performance_gops: f64,
    pub perf_per_watt_gops: f64,
    pub section: &'static str,
}

/// The three devices, in the order of §5.1.
pub const DEVICES: [PaperDevice; 3] = [
    PaperDevice {
        name: "Xeon Phi 5110P",
        kind: "accelerator",
        datasheet: [1988.0, 1988.0, 320.0, 245.0],
        measured: [1189.0, 946.0, 119.0, 245.0],
        measured_source: "paper Table 1 (SHOC L0, LINPACK, STREAM)",
        performance_gops: 66.70,
        perf_per_watt_gops: 0.38,
        section: "paper §5.1.1",
    },
    PaperDevice {
        name: "Tesla K20",
        kind: "gpu",
        datasheet: [3524.0, 587.0, 208.0, 225.0],
        measured: [2903.0, 585.0, 143.0, 225.0],
        measured_source: "paper Table 1 (SHOC L0, LINPACK, STREAM)",
        performance_gops: 126.42,
        perf_per_watt_gops: 1.18,
        section: "paper §5.1.2",
    },
    PaperDevice {
        name: "ADM-PCIE-7V3",
        kind: "fpga",
        datasheet: [738.0, 8880.0, 21.0, 25.0],
        measured: [200.0, 3032.0, 8.5, 25.0],
        measured_source:
            "paper Table 1 (F̂_f in-house microbenchmark; F̂_i 70% of LUTs/20 at 200 MHz; \
                          B̂ 40% DDR3 random-access efficiency)",
        performance_gops: 18.11,
        perf_per_watt_gops: 1.02,
        section: "paper §5.1.3",
    },
];

fn ceilings(values: [f64; 4], figure: impl Fn(f64, Unit) -> Figure) -> Ceilings {
    let [float, int, bandwidth, power] = values;
    Ceilings {
        float: Some(figure(float * 1e9, Unit::OpsPerSecond)),
        int: Some(figure(int * 1e9, Unit::OpsPerSecond)),
        bandwidth: Some(figure(bandwidth * 1e9, Unit::BytesPerSecond)),
        power: Some(figure(power, Unit::Watts)),
        caches: Vec::new(),
    }
}

/// The paper's lookup3 comparison (Figures 3, 4, 6–12) as clflow results.
pub fn lookup3() -> ResultSet {
    let mut set = ResultSet {
        title: Some("lookup3 on three accelerators: the tool-flow paper's case study".into()),
        ..ResultSet::default()
    };
    let counted = "paper §5.1: Oclgrind count, 8 M random keys of 0–60 bytes";
    set.put_kernel(KernelCounts {
        kernel: KERNEL.into(),
        ops: OpKind::Int,
        op_set: Some("add,xor,sub,shl,lshr,or,getelementptr,icmp,mul,and,div".into()),
        work: Figure::imported(WORK_OPS, Unit::Ops, counted),
        traffic_accessed: Figure::imported(TRAFFIC_BYTES, Unit::Bytes, counted),
        traffic_compulsory: None,
        hotspots: Default::default(),
    });
    for device in DEVICES {
        set.put_device(DeviceProfile {
            name: device.name.into(),
            kind: Some(device.kind.into()),
            measured: ceilings(device.measured, |v, u| {
                Figure::imported(v, u, device.measured_source)
            }),
            datasheet: ceilings(device.datasheet, |v, u| {
                Figure::datasheet(v, u, "paper Table 1")
            }),
        });
        let f = device.performance_gops * 1e9;
        let r = device.perf_per_watt_gops * 1e9;
        let mut run = Run::new(KERNEL, device.name);
        run.time = Some(Figure::imported(
            WORK_OPS / f,
            Unit::Seconds,
            format!(
                "{}: F = {} GOPS/s, T = W/F",
                device.section, device.performance_gops
            ),
        ));
        run.power_peak = Some(Figure::imported(
            f / r,
            Unit::Watts,
            format!(
                "{}: R = {} GOPS/s/W, P = F/R",
                device.section, device.perf_per_watt_gops
            ),
        ));
        set.put_run(run);
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derive::Bound;
    use crate::figure::Provenance;

    fn close(actual: f64, expected: f64, tolerance: f64) {
        assert!(
            (actual - expected).abs() <= tolerance,
            "{actual} is not {expected} ± {tolerance}"
        );
    }

    fn metrics_of(device: &str) -> crate::Metrics {
        lookup3()
            .evaluate()
            .into_iter()
            .find(|m| m.device == device)
            .unwrap()
    }

    #[test]
    fn the_intensity_is_the_papers() {
        let m = metrics_of("Tesla K20");
        let i = m.intensity_max.unwrap();
        close(i.value, 3.33, 0.01);
        assert_eq!(i.unit, Unit::OpsPerByte);
        assert_eq!(i.provenance, Provenance::Imported);
        assert_eq!(m.intensity_min.unwrap().value, i.value);
    }

    #[test]
    fn the_k20_is_memory_bound_at_476_gops() {
        let m = metrics_of("Tesla K20");
        // min(3.33 · 143, 585) with the paper's rounded I is 476.2 GOPS/s;
        // the exact I = 1224/367 gives 476.9.
        close(
            m.attainable.as_ref().unwrap().value / 1e9,
            3.335 * 143.0,
            0.1,
        );
        close(3.33 * 143.0, 476.2, 0.05);
        assert_eq!(m.bound, Some(Bound::Memory));
        close(m.ridge.as_ref().unwrap().value, 585.0 / 143.0, 1e-12);
        close(m.ridge.unwrap().value, 4.09, 0.005);
        assert_eq!(m.compute_ceiling.unwrap().value, 585e9);
        // Eq. 8: min(I·B̂/P̂, F̂/P̂) = 476.9/225.
        close(
            m.attainable_per_watt.unwrap().value / 1e9,
            3.335 * 143.0 / 225.0,
            0.01,
        );
    }

    #[test]
    fn every_device_gives_back_the_published_f_and_r() {
        for device in DEVICES {
            let m = metrics_of(device.name);
            let f = m.performance.as_ref().unwrap();
            close(f.value / 1e9, device.performance_gops, 1e-9);
            assert_eq!(f.provenance, Provenance::Imported);
            let r = m.perf_per_watt.as_ref().unwrap();
            close(r.value / 1e9, device.perf_per_watt_gops, 1e-9);
            // E = T·P = W/R (eq. 2 with eqs. 3 and 4).
            let e = m.energy.as_ref().unwrap().value;
            close(e, WORK_OPS / (device.perf_per_watt_gops * 1e9), 1e-9);
            // All three kernels are memory-bound (§5.1: "memory bound" on each).
            assert_eq!(m.bound, Some(Bound::Memory), "{}", device.name);
        }
    }

    #[test]
    fn the_papers_r_divides_by_the_kernels_power_not_the_peak() {
        let expected_power = [175.5, 107.1, 17.75];
        for (device, watts) in DEVICES.iter().zip(expected_power) {
            let m = metrics_of(device.name);
            let p = m.power_peak.unwrap().value;
            close(p, watts, 0.05);
            let p_hat = device.measured[3];
            assert!(
                p < p_hat,
                "{}: P {p} W is not below P̂ {p_hat} W",
                device.name
            );
            // F/P̂ is not what the paper reports as R.
            let with_peak = device.performance_gops / p_hat;
            assert!((with_peak - device.perf_per_watt_gops).abs() > 0.1);
        }
    }

    #[test]
    fn energy_and_fraction_of_attainable_per_device() {
        // Figure 12: E = W/R.
        let joules = [3.221, 1.037, 1.2];
        // F over min(I·B̂, F̂): the FPGA comes closest (§5.1.3, "close to attainable").
        let fractions = [0.168, 0.265, 0.639];
        for ((device, e), fraction) in DEVICES.iter().zip(joules).zip(fractions) {
            let m = metrics_of(device.name);
            close(m.energy.unwrap().value, e, 0.001);
            close(m.fraction_of_attainable.unwrap().value, fraction, 0.001);
        }
        close(
            metrics_of("ADM-PCIE-7V3").time.unwrap().value,
            1224e6 / 18.11e9,
            1e-12,
        );
    }

    /// The fixture agrees with the datasheet profiles under `devices/`.
    #[test]
    fn table_1_matches_the_device_profiles() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../devices");
        for (file, device) in ["xeon-phi-5110p.toml", "tesla-k20.toml", "adm-pcie-7v3.toml"]
            .iter()
            .zip(DEVICES)
        {
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            let profile: toml::Table = toml::from_str(&text).unwrap();
            let value = |table: &str, key: &str| -> f64 {
                let v = &profile[table][key]["value"];
                v.as_float()
                    .or_else(|| v.as_integer().map(|i| i as f64))
                    .unwrap()
            };
            let keys = ["fp32_gflops", "int32_gops", "memory_bandwidth_gbs"];
            for (index, key) in keys.iter().enumerate() {
                assert_eq!(
                    value("datasheet", key),
                    device.datasheet[index],
                    "{file} {key}"
                );
                assert_eq!(
                    value("measured", key),
                    device.measured[index],
                    "{file} {key}"
                );
            }
            assert_eq!(value("datasheet", "tdp_w"), device.datasheet[3], "{file}");
            assert_eq!(value("measured", "power_w"), device.measured[3], "{file}");
        }
    }
}
