//! NVIDIA GPUs through NVML (`libnvidia-ml.so.1`, loaded at run time).
//!
//! Power: the instantaneous field `NVML_FI_DEV_POWER_INSTANT` (186, mW) where
//! the driver has it; `nvmlDeviceGetPowerUsage` (mW, a one-second average on
//! Ampere and newer) otherwise. Energy: `nvmlDeviceGetTotalEnergyConsumption`
//! (mJ since the driver loaded, Volta and newer). A machine without NVML simply
//! has no NVML sensor.

use super::sampler::{Probe, Reading, Sampler, DEFAULT_PERIOD};
use super::{PowerSensor, PowerSource, PowerTrace, SensorError};
use nvml_wrapper::enums::device::SampleValue;
use nvml_wrapper::struct_wrappers::device::FieldValueSample;
use nvml_wrapper::structs::device::FieldId;
use nvml_wrapper::Nvml;
use std::ffi::{OsStr, OsString};
use std::sync::{Arc, Mutex};

/// Overrides where the NVML library is loaded from.
pub const NVML_LIB_ENV: &str = "CLFLOW_NVML_LIB";

/// `NVML_FI_DEV_POWER_INSTANT` in nvml.h: instantaneous power, mW.
const FIELD_POWER_INSTANT: u32 = 186;

/// A loaded NVML, shared by the sensors of all NVIDIA devices.
#[derive(Clone)]
pub struct NvmlLibrary {
    nvml: Arc<Nvml>,
}

/// One GPU as NVML lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvmlDeviceEntry {
    pub index: u32,
    pub name: String,
    /// `00000000:17:00.0`
    pub pci_bus_id: String,
}

impl NvmlLibrary {
    /// Loads NVML from `CLFLOW_NVML_LIB`, else `libnvidia-ml.so.1`; `Err`
    /// says why it is unavailable (no driver, no library).
    pub fn open() -> Result<Self, String> {
        let path = std::env::var_os(NVML_LIB_ENV).filter(|p| !p.is_empty());
        Self::open_at(path.as_deref())
    }

    /// Loads NVML from a given library path (`None`: the default name).
    /// Each process loads it once; later calls share that library.
    pub fn open_at(path: Option<&OsStr>) -> Result<Self, String> {
        // Loading is slow and NVML counts its users: load each library once.
        type Loaded = Vec<(Option<OsString>, Arc<Nvml>)>;
        static LOADED: Mutex<Loaded> = Mutex::new(Vec::new());
        let mut loaded = LOADED.lock().unwrap_or_else(|p| p.into_inner());
        let key = path.map(OsStr::to_os_string);
        if let Some((_, nvml)) = loaded.iter().find(|(k, _)| *k == key) {
            return Ok(NvmlLibrary { nvml: Arc::clone(nvml) });
        }
        let mut builder = Nvml::builder();
        if let Some(path) = path {
            builder.lib_path(path);
        }
        let nvml = builder.init().map_err(|err| {
            let lib = path.map_or("libnvidia-ml.so.1".into(), |p| {
                p.to_string_lossy().into_owned()
            });
            format!("NVML could not be loaded from {lib} ({err}); is the NVIDIA driver installed?")
        })?;
        let nvml = Arc::new(nvml);
        loaded.push((key, Arc::clone(&nvml)));
        Ok(NvmlLibrary { nvml })
    }

    /// Every GPU NVML sees.
    pub fn devices(&self) -> Result<Vec<NvmlDeviceEntry>, String> {
        let count = self
            .nvml
            .device_count()
            .map_err(|e| format!("NVML lists no devices: {e}"))?;
        let mut out = Vec::new();
        for index in 0..count {
            let device = self
                .nvml
                .device_by_index(index)
                .map_err(|e| format!("NVML device {index}: {e}"))?;
            out.push(NvmlDeviceEntry {
                index,
                name: device.name().unwrap_or_default(),
                pci_bus_id: device.pci_info().map(|p| p.bus_id).unwrap_or_default(),
            });
        }
        Ok(out)
    }
}

/// The NVML device behind an OpenCL device. With a PCI bus id (from
/// `cl_nv_device_attribute_query`) the match is exact. Otherwise the name
/// decides, and among several boards of the same name the `ordinal`-th (the
/// OpenCL device's rank among same-named devices): NVIDIA's OpenCL lists
/// identical boards in PCI order, as NVML does.
pub fn pick_nvml_device<'a>(
    entries: &'a [NvmlDeviceEntry],
    opencl_name: &str,
    ordinal: usize,
    pci_bus_id: Option<&str>,
) -> Option<&'a NvmlDeviceEntry> {
    if let Some(bus) = pci_bus_id {
        let wanted = normalise_bus_id(bus);
        return entries
            .iter()
            .find(|e| normalise_bus_id(&e.pci_bus_id) == wanted);
    }
    let name = opencl_name.trim().to_lowercase();
    let same_name: Vec<&NvmlDeviceEntry> = entries
        .iter()
        .filter(|e| e.name.trim().to_lowercase() == name)
        .collect();
    same_name.get(ordinal).copied()
}

/// NVML writes an 8-digit domain (`00000000:17:00.0`), other tools four.
fn normalise_bus_id(id: &str) -> String {
    let id = id.trim().to_lowercase();
    match id.split_once(':') {
        Some((domain, rest)) if rest.contains(':') => {
            let domain = u32::from_str_radix(domain, 16).unwrap_or(0);
            format!("{domain:08x}:{rest}")
        }
        _ => format!("00000000:{id}"),
    }
}

struct NvmlProbe {
    library: NvmlLibrary,
    index: u32,
    /// Learned on the first read: whether the instant field answers.
    instant: Option<bool>,
    energy: Option<bool>,
}

impl NvmlProbe {
    fn error(&self, what: &str, err: impl std::fmt::Display) -> SensorError {
        SensorError::new(
            PowerSource::Nvml,
            format!("device {}: {what}: {err}", self.index),
        )
    }
}

fn milliwatts(sample: &FieldValueSample) -> Option<f64> {
    match sample.value.as_ref().ok()? {
        SampleValue::F64(v) => Some(*v),
        SampleValue::U32(v) => Some(f64::from(*v)),
        SampleValue::U64(v) => Some(*v as f64),
        SampleValue::I64(v) => Some(*v as f64),
    }
}

impl Probe for NvmlProbe {
    fn read(&mut self) -> Result<Reading, SensorError> {
        let device = self
            .library
            .nvml
            .device_by_index(self.index)
            .map_err(|e| self.error("opening", e))?;
        let mut watts = None;
        if self.instant != Some(false) {
            let instant = device
                .field_values_for(&[FieldId(FIELD_POWER_INSTANT)])
                .ok()
                .and_then(|values| values.into_iter().next())
                .and_then(|value| value.ok())
                .and_then(|sample| milliwatts(&sample))
                .filter(|mw| *mw > 0.0);
            self.instant = Some(instant.is_some());
            watts = instant.map(|mw| mw / 1000.0);
        }
        if watts.is_none() {
            let mw = device
                .power_usage()
                .map_err(|e| self.error("reading power", e))?;
            watts = Some(f64::from(mw) / 1000.0);
        }
        let mut energy_j = None;
        if self.energy != Some(false) {
            let total = device.total_energy_consumption().ok();
            self.energy = Some(total.is_some());
            energy_j = total.map(|mj| mj as f64 / 1000.0);
        }
        Ok(Reading { watts, energy_j })
    }
}

/// Samples one NVIDIA GPU.
pub struct NvmlSensor {
    entry: NvmlDeviceEntry,
    instant: bool,
    energy: bool,
    sampler: Sampler<NvmlProbe>,
}

impl NvmlSensor {
    /// Opens a GPU after one trial read, which also learns what it supports.
    pub fn open(library: &NvmlLibrary, entry: NvmlDeviceEntry) -> Result<Self, String> {
        let mut probe = NvmlProbe {
            library: library.clone(),
            index: entry.index,
            instant: None,
            energy: None,
        };
        probe.read().map_err(|e| e.message)?;
        Ok(NvmlSensor {
            instant: probe.instant == Some(true),
            energy: probe.energy == Some(true),
            entry,
            sampler: Sampler::new(PowerSource::Nvml, probe, DEFAULT_PERIOD),
        })
    }
}

impl PowerSensor for NvmlSensor {
    fn source(&self) -> PowerSource {
        PowerSource::Nvml
    }

    fn describe(&self) -> String {
        let power = if self.instant {
            "instantaneous power"
        } else {
            "averaged power (no instantaneous field on this driver)"
        };
        let energy = if self.energy {
            ", total-energy counter"
        } else {
            ""
        };
        format!(
            "NVML device {} {} ({}), {power}{energy}",
            self.entry.index, self.entry.name, self.entry.pci_bus_id
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

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(index: u32, name: &str, bus: &str) -> NvmlDeviceEntry {
        NvmlDeviceEntry { index, name: name.into(), pci_bus_id: bus.into() }
    }

    #[test]
    fn opencl_devices_find_their_nvml_handle() {
        let entries = [
            entry(0, "NVIDIA H100 PCIe", "00000000:17:00.0"),
            entry(1, "NVIDIA A100-SXM4-80GB", "00000000:31:00.0"),
            entry(2, "NVIDIA H100 PCIe", "00000000:B1:00.0"),
        ];
        let pick =
            |name, ordinal, bus| pick_nvml_device(&entries, name, ordinal, bus).map(|e| e.index);
        assert_eq!(pick("NVIDIA H100 PCIe", 0, None), Some(0));
        assert_eq!(pick("nvidia h100 pcie", 1, None), Some(2));
        assert_eq!(pick("NVIDIA H100 PCIe", 2, None), None);
        assert_eq!(pick("NVIDIA A100-SXM4-80GB", 0, None), Some(1));
        assert_eq!(pick("Tesla K20c", 0, None), None);
        assert_eq!(pick("whatever", 0, Some("0000:b1:00.0")), Some(2));
        assert_eq!(pick("whatever", 0, Some("31:00.0")), Some(1));
    }

    #[test]
    fn a_missing_library_is_unavailable_not_an_error() {
        let reason = NvmlLibrary::open_at(Some(OsStr::new("/nonexistent/libnvidia-ml.so.1")))
            .err()
            .expect("no NVML at a path that does not exist");
        assert!(
            reason.starts_with("NVML could not be loaded from /nonexistent/libnvidia-ml.so.1"),
            "{reason}"
        );
    }
}
