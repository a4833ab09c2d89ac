//! What the models know about a device: rates with their sources. Each is
//! optional; a model that lacks one it needs says which and predicts
//! nothing. Who fills them (microbenchmarks, datasheets) is the caller's
//! business: `clflow-bench` maps a measured profile onto them.

use crate::energy::EnergyCoefficients;
use crate::json::nan_if_null;
use clflow_counts::OpClass;
use serde::{Deserialize, Serialize};

/// A rate (operations/s, bytes/s) and where it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    #[serde(deserialize_with = "nan_if_null")]
    pub value: f64,
    pub source: String,
}

impl Rate {
    pub fn new(value: f64, source: impl Into<String>) -> Rate {
        Rate {
            value,
            source: source.into(),
        }
    }
}

/// Peak throughput of each arithmetic class, multiply-add counted as 2
/// operations (the quantitative roofline's T_SP, T_DP, T_int).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassRates {
    pub int: Option<Rate>,
    pub fp32: Option<Rate>,
    pub fp64: Option<Rate>,
    pub fp16: Option<Rate>,
}

impl ClassRates {
    pub fn get(&self, class: OpClass) -> Option<&Rate> {
        match class {
            OpClass::Int => self.int.as_ref(),
            OpClass::Fp32 => self.fp32.as_ref(),
            OpClass::Fp64 => self.fp64.as_ref(),
            OpClass::Fp16 => self.fp16.as_ref(),
        }
    }
}

/// One device's rates, as the models read them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceRates {
    pub name: String,
    /// Peak multiply-add throughput per class (ops/s).
    pub peak: ClassRates,
    /// Integer addition throughput (T_add, ops/s).
    pub int_add: Option<Rate>,
    /// Load/store instruction throughput on local memory (T_ldst, lanes/s).
    pub ldst: Option<Rate>,
    /// Global-memory bandwidth of neighbouring accesses (B̂, P_coalesced).
    pub bandwidth: Option<Rate>,
    /// Global-memory bandwidth of scattered accesses (P_uncoalesced).
    pub uncoalesced_bandwidth: Option<Rate>,
    /// Host-to-device link bandwidth (B_bus).
    pub host_link: Option<Rate>,
    /// The energy roofline's coefficients, fitted from power sampled
    /// during the microbenchmarks.
    pub energy: Option<EnergyCoefficients>,
    /// Why a rate is missing, when it is (no sensor, not measured).
    pub notes: Vec<String>,
}

/// A model could not predict: it names the input it lacked.
pub fn missing(what: &str, device: &DeviceRates) -> String {
    format!("{} has no {what}", device.name)
}
