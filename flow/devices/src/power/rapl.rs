//! Linux powercap RAPL: the CPU package and DRAM energy counters.
//!
//! `sys/class/powercap/intel-rapl:N` is package N and `intel-rapl:N:M` its
//! sub-zones (`dram`, `core`, `uncore`); each has `name`, `energy_uj` (µJ,
//! wrapping at `max_energy_range_uj`). clflow sums the packages and the DRAM
//! zones: `core` and `uncore` are already inside the package figure. AMD Zen
//! processors expose the same zones. Kernels since 5.10 make `energy_uj`
//! readable by root only.

use super::sampler::{Probe, Reading, Sampler, DEFAULT_PERIOD};
use super::sysfs::{explain, SysRoot};
use super::{PowerSensor, PowerSource, PowerTrace, SensorError};
use std::path::PathBuf;

const POWERCAP: &str = "sys/class/powercap";

/// One RAPL zone clflow reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaplZone {
    /// `package-0`, `dram`, ...
    pub name: String,
    pub dir: PathBuf,
    pub max_energy_range_uj: u64,
}

impl RaplZone {
    fn energy_path(&self) -> PathBuf {
        self.dir.join("energy_uj")
    }
}

/// The package and DRAM zones under `root`, each checked readable; `Err`
/// says why there is no usable RAPL (absent, or not readable by this user).
pub fn discover(root: &SysRoot) -> Result<Vec<RaplZone>, String> {
    let mut zones = Vec::new();
    for (entry, dir) in root.list(POWERCAP) {
        // `intel-rapl` itself is the control type, `intel-rapl-mmio:*` a
        // second view of the same package counters.
        let Some(address) = entry.strip_prefix("intel-rapl:") else {
            continue;
        };
        let name = root
            .read(&dir.join("name"))
            .map_err(|e| explain(&dir.join("name"), &e))?;
        let is_package = !address.contains(':');
        if !(is_package || name == "dram") {
            continue;
        }
        let range_path = dir.join("max_energy_range_uj");
        let max_energy_range_uj = root
            .read_u64(&range_path)
            .map_err(|e| explain(&range_path, &e))?;
        let zone = RaplZone { name, dir, max_energy_range_uj };
        root.read_u64(&zone.energy_path())
            .map_err(|e| explain(&zone.energy_path(), &e))?;
        zones.push(zone);
    }
    if zones.is_empty() {
        return Err(format!(
            "no RAPL package zone under {}",
            root.path(POWERCAP).display()
        ));
    }
    Ok(zones)
}

/// Energy between two readings of a counter that wraps at `max_range`.
pub fn counter_delta(last: u64, now: u64, max_range: u64) -> u64 {
    if now >= last {
        now - last
    } else {
        // The counter passed max_range and restarted from zero.
        max_range.saturating_sub(last) + now
    }
}

/// The summed energy of the chosen zones, accumulated across wrap-arounds.
pub struct RaplCounters {
    root: SysRoot,
    zones: Vec<RaplZone>,
    last: Option<Vec<u64>>,
    total_uj: u128,
}

impl RaplCounters {
    pub fn open(root: &SysRoot) -> Result<Self, String> {
        Ok(RaplCounters {
            root: root.clone(),
            zones: discover(root)?,
            last: None,
            total_uj: 0,
        })
    }

    pub fn zones(&self) -> &[RaplZone] {
        &self.zones
    }

    /// Joules counted since the first read (which returns 0).
    pub fn read_total_j(&mut self) -> Result<f64, SensorError> {
        let mut now = Vec::with_capacity(self.zones.len());
        for zone in &self.zones {
            let path = zone.energy_path();
            let value = self
                .root
                .read_u64(&path)
                .map_err(|e| SensorError::new(PowerSource::Rapl, explain(&path, &e)))?;
            now.push(value);
        }
        if let Some(last) = &self.last {
            for ((zone, before), after) in self.zones.iter().zip(last).zip(&now) {
                self.total_uj +=
                    u128::from(counter_delta(*before, *after, zone.max_energy_range_uj));
            }
        }
        self.last = Some(now);
        Ok(self.total_uj as f64 * 1e-6)
    }
}

impl Probe for RaplCounters {
    fn read(&mut self) -> Result<Reading, SensorError> {
        Ok(Reading { watts: None, energy_j: Some(self.read_total_j()?) })
    }
}

/// Samples the summed RAPL package and DRAM energy.
pub struct RaplSensor {
    zones: Vec<RaplZone>,
    sampler: Sampler<RaplCounters>,
}

impl RaplSensor {
    /// The RAPL sensor of this machine (or fixture tree), or why there is none.
    pub fn open(root: &SysRoot) -> Result<Self, String> {
        let probe = RaplCounters::open(root)?;
        Ok(RaplSensor {
            zones: probe.zones().to_vec(),
            sampler: Sampler::new(PowerSource::Rapl, probe, DEFAULT_PERIOD),
        })
    }

    pub fn zones(&self) -> &[RaplZone] {
        &self.zones
    }
}

impl PowerSensor for RaplSensor {
    fn source(&self) -> PowerSource {
        PowerSource::Rapl
    }

    fn describe(&self) -> String {
        let names: Vec<&str> = self.zones.iter().map(|z| z.name.as_str()).collect();
        format!("RAPL energy counters ({})", names.join(" + "))
    }

    fn start(&mut self, kernel: &str) -> Result<(), SensorError> {
        self.sampler.start(kernel)
    }

    fn stop(&mut self) -> Result<PowerTrace, SensorError> {
        let sensor = self.describe();
        self.sampler.stop(sensor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_wrap_at_their_range() {
        assert_eq!(counter_delta(100, 350, 1000), 250);
        assert_eq!(counter_delta(900, 50, 1000), 150);
        assert_eq!(counter_delta(5, 5, 1000), 0);
    }
}
