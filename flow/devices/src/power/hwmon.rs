//! Linux hwmon power and energy files (AMD GPUs through `amdgpu`, Intel GPUs
//! through `i915`/`xe`, AMD CPUs through `amd_energy`, and others).
//!
//! `sys/class/hwmon/hwmonN/name` names the driver; `powerK_input` (instant)
//! and `powerK_average` are µW, `energyK_input` is µJ. clflow reads the
//! lowest-numbered channel of each kind: further channels are usually parts of
//! the first (a core inside a socket), and summing them would count twice.

use super::sampler::{Probe, Reading, Sampler, DEFAULT_PERIOD};
use super::sysfs::{explain, SysRoot};
use super::{PowerSensor, PowerSource, PowerTrace, SensorError};
use std::path::PathBuf;

const HWMON: &str = "sys/class/hwmon";

/// One hwmon chip with a power or energy file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HwmonChip {
    /// `hwmon3`
    pub entry: String,
    /// The driver's name: `amdgpu`, `amd_energy`, ...
    pub name: String,
    /// `power1_input` (preferred) or `power1_average`.
    pub power_file: Option<PathBuf>,
    pub energy_file: Option<PathBuf>,
}

/// Every chip under `root` with a power or energy file, in hwmonN order.
pub fn discover(root: &SysRoot) -> Vec<HwmonChip> {
    let mut chips = Vec::new();
    for (entry, dir) in root.list(HWMON) {
        let Ok(name) = root.read(&dir.join("name")) else {
            continue;
        };
        let files: Vec<String> = root
            .list(&format!("{HWMON}/{entry}"))
            .into_iter()
            .map(|(file, _)| file)
            .collect();
        // `list` sorts naturally, so the first match is the lowest channel.
        let first = |prefix: &str, suffix: &str| {
            files
                .iter()
                .find(|f| {
                    f.strip_prefix(prefix)
                        .and_then(|rest| rest.strip_suffix(suffix))
                        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
                })
                .map(|f| dir.join(f))
        };
        let power_file = first("power", "_input").or_else(|| first("power", "_average"));
        let energy_file = first("energy", "_input");
        if power_file.is_some() || energy_file.is_some() {
            chips.push(HwmonChip { entry, name, power_file, energy_file });
        }
    }
    chips
}

struct HwmonProbe {
    root: SysRoot,
    chip: HwmonChip,
}

impl HwmonProbe {
    fn read_file(&self, path: &std::path::Path) -> Result<f64, SensorError> {
        self.root
            .read_u64(path)
            .map(|v| v as f64 * 1e-6)
            .map_err(|e| SensorError::new(PowerSource::Hwmon, explain(path, &e)))
    }
}

impl Probe for HwmonProbe {
    fn read(&mut self) -> Result<Reading, SensorError> {
        let watts = match &self.chip.power_file {
            Some(path) => Some(self.read_file(path)?),
            None => None,
        };
        let energy_j = match &self.chip.energy_file {
            Some(path) => Some(self.read_file(path)?),
            None => None,
        };
        Ok(Reading { watts, energy_j })
    }
}

/// Samples one hwmon chip.
pub struct HwmonSensor {
    chip: HwmonChip,
    sampler: Sampler<HwmonProbe>,
}

impl HwmonSensor {
    /// Opens a chip after checking that its files can be read.
    pub fn open(root: &SysRoot, chip: HwmonChip) -> Result<Self, String> {
        let mut probe = HwmonProbe { root: root.clone(), chip: chip.clone() };
        probe.read().map_err(|e| e.message)?;
        Ok(HwmonSensor {
            chip,
            sampler: Sampler::new(PowerSource::Hwmon, probe, DEFAULT_PERIOD),
        })
    }

    pub fn chip(&self) -> &HwmonChip {
        &self.chip
    }
}

fn file_name(path: &Option<PathBuf>) -> Option<String> {
    path.as_ref()
        .and_then(|p| p.file_name())
        .map(|f| f.to_string_lossy().into_owned())
}

impl PowerSensor for HwmonSensor {
    fn source(&self) -> PowerSource {
        PowerSource::Hwmon
    }

    fn describe(&self) -> String {
        let files: Vec<String> = [
            file_name(&self.chip.power_file),
            file_name(&self.chip.energy_file),
        ]
        .into_iter()
        .flatten()
        .collect();
        format!(
            "hwmon {} ({}: {})",
            self.chip.name,
            self.chip.entry,
            files.join(", ")
        )
    }

    fn start(&mut self, kernel: &str) -> Result<(), SensorError> {
        self.sampler.start(kernel)
    }

    fn stop(&mut self) -> Result<PowerTrace, SensorError> {
        let sensor = self.describe();
        self.sampler.stop(sensor)
    }
}
