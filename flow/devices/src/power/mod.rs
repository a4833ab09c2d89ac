//! Power sensors: one trait, several sources, chosen per device.
//!
//! Every power figure clflow reports carries its [`PowerSource`]: a reading
//! from NVML, RAPL or hwmon, an imported external measurement, or the
//! datasheet TDP (`spec`), which is no measurement at all. A missing sensor is
//! never an error: the chooser falls back and says why.

mod choose;
mod hwmon;
mod import;
mod nvml;
mod rapl;
mod sampler;
mod spec;
mod sysfs;

pub use choose::{choose_sensor, SensorChoice, SensorOptions, SYSFS_ROOT_ENV};
pub use hwmon::{discover as discover_hwmon, HwmonChip, HwmonSensor};
pub use import::{ImportSensor, ImportedPower, PowerImport};
pub use nvml::{pick_nvml_device, NvmlDeviceEntry, NvmlLibrary, NvmlSensor, NVML_LIB_ENV};
pub use rapl::{counter_delta, discover as discover_rapl, RaplCounters, RaplSensor, RaplZone};
pub use sampler::{trace_from_readings, Reading, DEFAULT_PERIOD};
pub use spec::SpecSensor;
pub use sysfs::SysRoot;

use serde::{Deserialize, Serialize};
use std::fmt;

/// Where a power figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PowerSource {
    /// NVIDIA's management library (instantaneous power, total energy).
    Nvml,
    /// Linux powercap RAPL energy counters (CPU package and DRAM).
    Rapl,
    /// Linux hwmon power and energy files (AMD GPUs and others).
    Hwmon,
    /// A CSV of power measured outside clflow (e.g. FPGA vendor tools).
    Import,
    /// The datasheet TDP: a specification, not a measurement.
    Spec,
}

impl fmt::Display for PowerSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PowerSource::Nvml => "nvml",
            PowerSource::Rapl => "rapl",
            PowerSource::Hwmon => "hwmon",
            PowerSource::Import => "import",
            PowerSource::Spec => "spec",
        })
    }
}

/// One power reading, `t_s` seconds after sampling started.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PowerSample {
    pub t_s: f64,
    pub watts: f64,
}

/// What a sensor saw between `start` and `stop`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerTrace {
    pub source: PowerSource,
    /// Which sensor exactly, e.g. "RAPL package-0 + dram".
    pub sensor: String,
    /// What ran while sampling (a kernel or benchmark name).
    pub kernel: String,
    /// Wall time between start and stop.
    pub duration_s: f64,
    pub samples: Vec<PowerSample>,
    /// The highest sample (the paper's P for a kernel).
    pub peak_w: Option<f64>,
    pub mean_w: Option<f64>,
    /// Energy counted by the source itself (RAPL, hwmon energy, NVML total
    /// energy); `None` where the source has no counter.
    pub energy_j: Option<f64>,
    #[serde(default)]
    pub notes: Vec<String>,
}

impl PowerTrace {
    /// Energy by the trapezoid rule over the samples, for sources without a
    /// counter; `None` with fewer than two samples.
    pub fn integrated_energy_j(&self) -> Option<f64> {
        if self.samples.len() < 2 {
            return None;
        }
        Some(
            self.samples
                .windows(2)
                .map(|w| (w[1].t_s - w[0].t_s) * (w[0].watts + w[1].watts) / 2.0)
                .sum(),
        )
    }
}

/// A failure while reading a sensor that was available when chosen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{sensor} power sensor: {message}")]
pub struct SensorError {
    pub sensor: PowerSource,
    pub message: String,
}

impl SensorError {
    pub(crate) fn new(sensor: PowerSource, message: impl Into<String>) -> Self {
        SensorError { sensor, message: message.into() }
    }
}

/// A power sensor for one device. `start` begins sampling (in a background
/// thread for live sources) and `stop` ends it and returns the trace.
pub trait PowerSensor: Send {
    fn source(&self) -> PowerSource;
    /// Which sensor, in words, e.g. "NVML device 0 (00000000:17:00.0), instantaneous power".
    fn describe(&self) -> String;
    fn start(&mut self, kernel: &str) -> Result<(), SensorError>;
    fn stop(&mut self) -> Result<PowerTrace, SensorError>;
}
