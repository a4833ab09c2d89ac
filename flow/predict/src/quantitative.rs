//! The quantitative roofline: the peak of the kernel's useful operation
//! type, scaled down by how much of the instruction stream does useful work
//! (E_instr) and how much of it is multiply-add (E_mix), against the memory
//! bandwidth. Equations (2)–(19) of its paper, with the profiler's metrics
//! replaced by the interpreter's exact counts:
//!
//! ```text
//! W_comp = W of K_type (a mad counts 2)          (2)
//! W_traf = DRAM bytes                            (3)
//! E_mix  = W_comp / (2 · I_ops), 50 % for int    (4)
//! D_ops = I_ops / I_total, D_ldst = M_ldst / I_total, D_other = 1 − both  (5)–(7)
//! W_op = T_SP / T_op, W_ldst = ½T_SP / T_ldst, W_other = ½T_SP / T_add    (11)–(13)
//! C_x = D_x · W_x;  E_instr = C_op / (C_op + C_ldst + C_other)           (14)–(17)
//! T'_op = E_mix · E_instr · T_op                 (18)
//! T = T'_op if W_comp / W_traf > T'_op / B_mem, else W_comp / W_traf · B_mem  (19)
//! time = W_comp / T
//! ```
//!
//! Instruction counts are lanes (a float4 add is 4), the same unit as the
//! device throughputs clflow's microbenchmarks measure.

use crate::device::{missing, DeviceRates};
use crate::json::{infinity_if_null, nan_if_null, op_class};
use crate::kernel::KernelFacts;
use crate::roofline::Bound;
use clflow_counts::OpClass;
use serde::{Deserialize, Serialize};

/// The kernel's side of the model (its Table 2).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct KernelParameters {
    #[serde(deserialize_with = "op_class")]
    pub k_type: OpClass,
    #[serde(deserialize_with = "nan_if_null")]
    pub w_comp: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub w_traf: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub e_mix: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub d_ops: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub d_ldst: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub d_other: f64,
}

impl KernelParameters {
    pub fn from_facts(facts: &KernelFacts) -> KernelParameters {
        let k_type = facts.dominant_class();
        let mix = &facts.instructions;
        let i_ops = mix.arithmetic.get(k_type) as f64;
        let i_total = mix.total().max(1) as f64;
        let w_comp = facts.work_by_class.get(k_type) as f64;
        KernelParameters {
            k_type,
            w_comp,
            w_traf: facts.traffic.dram().0 as f64,
            e_mix: mix_efficiency(k_type, w_comp, i_ops),
            d_ops: i_ops / i_total,
            d_ldst: mix.ldst as f64 / i_total,
            d_other: 1.0 - (i_ops + mix.ldst as f64) / i_total,
        }
    }
}

/// Eq. (4): the share of peak a float instruction mix can reach, 1 when
/// every instruction is a multiply-add, ½ when none is; ½ for integers.
/// Builtins that count more than two operations cannot lift it past 1.
pub fn mix_efficiency(k_type: OpClass, w_comp: f64, i_ops: f64) -> f64 {
    match k_type {
        OpClass::Int => 0.5,
        _ if i_ops == 0.0 => 0.5,
        _ => (w_comp / (2.0 * i_ops)).clamp(0.5, 1.0),
    }
}

/// The device's side (its Table 3), operations or lanes per second.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DeviceParameters {
    #[serde(deserialize_with = "nan_if_null")]
    pub t_sp: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub t_op: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub t_ldst: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub t_add: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub b_mem: f64,
}

impl DeviceParameters {
    pub fn of(device: &DeviceRates, k_type: OpClass) -> Result<DeviceParameters, String> {
        let need = |rate: Option<&crate::device::Rate>, what: &str| {
            rate.map(|r| r.value).ok_or_else(|| missing(what, device))
        };
        Ok(DeviceParameters {
            t_sp: need(
                device.mad.fp32.as_ref(),
                "fp32 multiply-add throughput (T_SP)",
            )?,
            t_op: need(
                device.mad.get(k_type),
                &format!("{} multiply-add throughput (T_op)", k_type.name()),
            )?,
            t_ldst: need(
                device.ldst.as_ref(),
                "local-memory load/store throughput (T_ldst)",
            )?,
            t_add: need(device.int_add.as_ref(), "integer add throughput (T_add)")?,
            b_mem: need(device.bandwidth.as_ref(), "memory bandwidth (B_mem)")?,
        })
    }
}

/// Every intermediate of the model, for the report.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Quantitative {
    pub kernel: KernelParameters,
    pub device: DeviceParameters,
    #[serde(deserialize_with = "nan_if_null")]
    pub w_op: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub w_ldst: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub w_other: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub e_instr: f64,
    /// T'_op, operations per second.
    #[serde(deserialize_with = "nan_if_null")]
    pub adjusted_peak: f64,
    /// O_krn and O_dev, operations per byte.
    #[serde(deserialize_with = "infinity_if_null")]
    pub kernel_intensity: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub device_intensity: f64,
    /// The predicted throughput (eq. 19), operations per second.
    #[serde(deserialize_with = "nan_if_null")]
    pub throughput: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub time_s: f64,
    pub bound: Bound,
}

/// Evaluates eq. (11)–(19).
pub fn predict(kernel: KernelParameters, device: DeviceParameters) -> Quantitative {
    let w_op = device.t_sp / device.t_op;
    let w_ldst = 0.5 * device.t_sp / device.t_ldst;
    let w_other = 0.5 * device.t_sp / device.t_add;
    let c_op = kernel.d_ops * w_op;
    let c_ldst = kernel.d_ldst * w_ldst;
    let c_other = kernel.d_other * w_other;
    let cost = c_op + c_ldst + c_other;
    let e_instr = if cost > 0.0 { c_op / cost } else { 0.0 };
    let adjusted_peak = kernel.e_mix * e_instr * device.t_op;
    let kernel_intensity = if kernel.w_traf > 0.0 {
        kernel.w_comp / kernel.w_traf
    } else {
        f64::INFINITY
    };
    let device_intensity = adjusted_peak / device.b_mem;
    let (throughput, bound) = if kernel_intensity > device_intensity {
        (adjusted_peak, Bound::Compute)
    } else {
        (kernel_intensity * device.b_mem, Bound::Memory)
    };
    Quantitative {
        kernel,
        device,
        w_op,
        w_ldst,
        w_other,
        e_instr,
        adjusted_peak,
        kernel_intensity,
        device_intensity,
        throughput,
        time_s: kernel.w_comp / throughput,
        bound,
    }
}

/// The model for a kernel on a device.
pub fn predict_kernel(facts: &KernelFacts, device: &DeviceRates) -> Result<Quantitative, String> {
    let kernel = KernelParameters::from_facts(facts);
    if kernel.w_comp == 0.0 {
        return Err(format!(
            "{} does no {} arithmetic: nothing for the model to time",
            facts.name,
            kernel.k_type.name()
        ));
    }
    Ok(predict(
        kernel,
        DeviceParameters::of(device, kernel.k_type)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::tests::sgemm_facts;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1e-30)
    }

    /// A GPU of the paper's kind: MAD peak 4 TFLOPS single, ¼ of it double,
    /// integer adds at half the MAD instruction rate, shared-memory
    /// load/stores at a quarter, 200 GB/s.
    fn gpu() -> DeviceParameters {
        DeviceParameters {
            t_sp: 4e12,
            t_op: 4e12,
            t_ldst: 0.5e12,
            t_add: 1e12,
            b_mem: 200e9,
        }
    }

    #[test]
    fn the_papers_metrics_give_its_kernel_parameters() {
        // Profiler metrics of an fp32 kernel: M_fp32 = 600 instructions of
        // which M_fma32 = 200 are FMAs, 1,000 warp instructions.
        let (m_fp32, m_fma32, m_ldst, m_inst) = (600.0, 200.0, 8_000.0, 1_000.0);
        // Eq. (2), (4), (5)–(9) with I_total = 32 · M_inst, I_ops = M_fp32.
        let w_comp = m_fp32 + m_fma32;
        let e_mix = mix_efficiency(OpClass::Fp32, w_comp, m_fp32);
        assert!(close(e_mix, 800.0 / 1200.0));
        let i_total = 32.0 * m_inst;
        let kernel = KernelParameters {
            k_type: OpClass::Fp32,
            w_comp,
            w_traf: 1.0,
            e_mix,
            d_ops: m_fp32 / i_total,
            d_ldst: m_ldst / i_total,
            d_other: 1.0 - (m_fp32 + m_ldst) / i_total,
        };
        assert!(close(kernel.d_other, 1.0 - 8600.0 / 32000.0));
        // Integer kernels are charged 50 %, whatever their mix.
        assert_eq!(mix_efficiency(OpClass::Int, 10.0, 1.0), 0.5);
        // All-FMA reaches 100 %, no FMA 50 %.
        assert_eq!(mix_efficiency(OpClass::Fp64, 20.0, 10.0), 1.0);
        assert_eq!(mix_efficiency(OpClass::Fp64, 10.0, 10.0), 0.5);
    }

    #[test]
    fn weights_costs_and_efficiencies_follow_eq_11_to_19() {
        let kernel = KernelParameters {
            k_type: OpClass::Fp32,
            w_comp: 1.2e9,
            w_traf: 0.4e9,
            e_mix: 0.75,
            d_ops: 0.5,
            d_ldst: 0.25,
            d_other: 0.25,
        };
        let q = predict(kernel, gpu());
        // (11)–(13): W_op = 1, W_ldst = 2e12 / 0.5e12 = 4, W_other = 2.
        assert_eq!((q.w_op, q.w_ldst, q.w_other), (1.0, 4.0, 2.0));
        // (14)–(17): C = 0.5, 1.0, 0.5; E_instr = 0.5 / 2 = 25 %.
        assert!(close(q.e_instr, 0.25));
        // (18): T'_op = 0.75 · 0.25 · 4 TFLOPS = 750 GFLOPS.
        assert!(close(q.adjusted_peak, 750e9));
        // O_krn = 3 flop/B < O_dev = 3.75: memory bound at 3 · 200 GB/s.
        assert!(close(q.device_intensity, 3.75));
        assert_eq!(q.bound, Bound::Memory);
        assert!(close(q.throughput, 600e9));
        assert!(close(q.time_s, 1.2e9 / 600e9));
        // With less traffic the adjusted peak sets the time.
        let compute = predict(KernelParameters { w_traf: 0.1e9, ..kernel }, gpu());
        assert_eq!(compute.bound, Bound::Compute);
        assert!(close(compute.time_s, 1.2e9 / 750e9));
    }

    #[test]
    fn double_kernels_weigh_their_slower_peak() {
        let kernel = KernelParameters {
            k_type: OpClass::Fp64,
            w_comp: 1.0,
            w_traf: 0.0,
            e_mix: 1.0,
            d_ops: 1.0,
            d_ldst: 0.0,
            d_other: 0.0,
        };
        let device = DeviceParameters { t_op: 1e12, ..gpu() };
        let q = predict(kernel, device);
        // W_op = T_SP / T_DP = 4; E_instr is 1 for a pure op stream.
        assert_eq!(q.w_op, 4.0);
        assert_eq!(q.e_instr, 1.0);
        assert_eq!(q.bound, Bound::Compute);
        assert!(close(q.throughput, 1e12));
    }

    #[test]
    fn sgemm_parameters_come_from_its_histogram() {
        let k = KernelParameters::from_facts(&sgemm_facts());
        assert_eq!(k.k_type, OpClass::Fp32);
        assert_eq!(k.w_comp, 65536.0);
        // Every fp32 instruction is a mad.
        assert_eq!(k.e_mix, 1.0);
        assert!(close(k.d_ops, 32768.0 / 504_832.0));
        assert!(close(k.d_ldst, 66560.0 / 504_832.0));
        assert_eq!(k.w_traf, 12288.0);
    }
}
