//! Which power sensor serves a device. In order:
//!
//! 1. an imported CSV that names the device (the user supplied it on purpose);
//! 2. NVML for NVIDIA GPUs;
//! 3. hwmon for other GPUs (`amdgpu`; `i915` or `xe` for Intel);
//! 4. RAPL (package + DRAM) for CPU devices. CPU hwmon drivers are not used:
//!    `amd_energy` lists per-core channels before the socket ones, and AMD
//!    processors expose the same counters through RAPL;
//! 5. the datasheet TDP of the matched profile, labelled `spec`;
//! 6. nothing: power figures are then unavailable, which is not an error.
//!
//! The choice always says which sensor it took and why earlier ones were not.

use super::hwmon::{self, HwmonSensor};
use super::import::{ImportSensor, PowerImport};
use super::nvml::{pick_nvml_device, NvmlLibrary, NvmlSensor};
use super::rapl::RaplSensor;
use super::spec::SpecSensor;
use super::sysfs::SysRoot;
use super::{PowerSensor, PowerSource};
use crate::profile::DatasheetProfile;
use clflow_ocl::{DeviceInfo, DeviceKind};
use serde::Serialize;
use std::sync::Arc;

/// Overrides the root below which `sys/class/...` is read (tests, containers).
pub const SYSFS_ROOT_ENV: &str = "CLFLOW_SYSFS_ROOT";

/// Where the chooser looks.
#[derive(Clone)]
pub struct SensorOptions {
    pub sys_root: SysRoot,
    pub import: Option<Arc<PowerImport>>,
    /// Whether to try NVML at all.
    pub nvml: bool,
}

impl SensorOptions {
    /// The live system (or `CLFLOW_SYSFS_ROOT`), NVML on, no import.
    pub fn from_env() -> Self {
        let root = std::env::var_os(SYSFS_ROOT_ENV)
            .filter(|v| !v.is_empty())
            .map_or_else(SysRoot::system, SysRoot::new);
        SensorOptions { sys_root: root, import: None, nvml: true }
    }
}

/// The sensor chosen for a device, described for the user.
#[derive(Serialize)]
pub struct SensorChoice {
    /// `None`: no power figure is available for this device.
    pub source: Option<PowerSource>,
    pub description: String,
    /// Why the sources before this one were passed over.
    pub notes: Vec<String>,
    #[serde(skip)]
    pub sensor: Option<Box<dyn PowerSensor>>,
}

impl std::fmt::Debug for SensorChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SensorChoice")
            .field("source", &self.source)
            .field("description", &self.description)
            .field("notes", &self.notes)
            .finish()
    }
}

impl SensorChoice {
    fn take(sensor: Box<dyn PowerSensor>, notes: Vec<String>) -> Self {
        SensorChoice {
            source: Some(sensor.source()),
            description: sensor.describe(),
            notes,
            sensor: Some(sensor),
        }
    }
}

enum Vendor {
    Nvidia,
    Amd,
    Intel,
    Other,
}

fn vendor_of(device: &DeviceInfo) -> Vendor {
    let text = format!("{} {}", device.vendor, device.platform_vendor).to_lowercase();
    if text.contains("nvidia") {
        Vendor::Nvidia
    } else if text.contains("advanced micro devices") || text.contains("amd") {
        Vendor::Amd
    } else if text.contains("intel") {
        Vendor::Intel
    } else {
        Vendor::Other
    }
}

/// Picks the best available sensor for `device`; `all` is the full device
/// list (to tell identical boards apart), `profile` its datasheet profile.
pub fn choose_sensor(
    device: &DeviceInfo,
    all: &[DeviceInfo],
    profile: Option<&DatasheetProfile>,
    options: &SensorOptions,
) -> SensorChoice {
    let mut notes = Vec::new();
    if let Some(import) = &options.import {
        if import.names_device(&device.name) {
            let sensor = ImportSensor::new(Arc::clone(import), &device.name);
            return SensorChoice::take(Box::new(sensor), notes);
        }
        notes.push(format!(
            "{} names no part of '{}'",
            import.file.display(),
            device.name
        ));
    }
    let live = match (device.kind, vendor_of(device)) {
        (DeviceKind::Gpu, Vendor::Nvidia) if options.nvml => nvml_sensor(device, all),
        (DeviceKind::Gpu, Vendor::Nvidia) => Err("NVML is switched off".to_string()),
        (DeviceKind::Gpu, Vendor::Amd) => hwmon_sensor(&options.sys_root, &["amdgpu"], &mut notes),
        (DeviceKind::Gpu, Vendor::Intel) => {
            hwmon_sensor(&options.sys_root, &["i915", "xe"], &mut notes)
        }
        (DeviceKind::Cpu, _) => {
            RaplSensor::open(&options.sys_root).map(|s| Box::new(s) as Box<dyn PowerSensor>)
        }
        _ => Err(format!(
            "no live sensor is known for a {} device of vendor '{}'",
            kind_name(device.kind),
            device.vendor
        )),
    };
    match live {
        Ok(sensor) => return SensorChoice::take(sensor, notes),
        Err(reason) => notes.push(reason),
    }
    match profile.and_then(|p| p.tdp_watts().map(|tdp| (p, tdp))) {
        Some((profile, tdp)) => {
            SensorChoice::take(Box::new(SpecSensor::new(tdp, &profile.model)), notes)
        }
        None => {
            notes.push(match profile {
                Some(p) => format!("profile {} states no TDP", p.id),
                None => "no datasheet profile, so no TDP to fall back on".to_string(),
            });
            SensorChoice {
                source: None,
                description: "no power sensor".into(),
                notes,
                sensor: None,
            }
        }
    }
}

fn kind_name(kind: DeviceKind) -> &'static str {
    match kind {
        DeviceKind::Cpu => "cpu",
        DeviceKind::Gpu => "gpu",
        DeviceKind::Accelerator => "accelerator",
        DeviceKind::Custom => "custom",
        DeviceKind::Other => "other",
    }
}

fn nvml_sensor(device: &DeviceInfo, all: &[DeviceInfo]) -> Result<Box<dyn PowerSensor>, String> {
    let library = NvmlLibrary::open()?;
    let entries = library.devices()?;
    let ordinal = all
        .iter()
        .filter(|d| d.index < device.index && d.name == device.name)
        .count();
    let entry = pick_nvml_device(&entries, &device.name, ordinal, None).ok_or_else(|| {
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        format!(
            "NVML lists no device named '{}' (it lists: {})",
            device.name,
            names.join(", ")
        )
    })?;
    Ok(Box::new(NvmlSensor::open(&library, entry.clone())?))
}

fn hwmon_sensor(
    root: &SysRoot,
    names: &[&str],
    notes: &mut Vec<String>,
) -> Result<Box<dyn PowerSensor>, String> {
    let chips: Vec<_> = hwmon::discover(root)
        .into_iter()
        .filter(|c| names.contains(&c.name.as_str()))
        .collect();
    let Some(chip) = chips.first().cloned() else {
        return Err(format!(
            "no hwmon chip named {} with power or energy files",
            names.join(" or ")
        ));
    };
    if chips.len() > 1 {
        // OpenCL gives no PCI address here to tie a device to its chip.
        notes.push(format!(
            "{} {} chips: took {}, the first; another may belong to this device",
            chips.len(),
            chip.name,
            chip.entry
        ));
    }
    HwmonSensor::open(root, chip).map(|s| Box::new(s) as Box<dyn PowerSensor>)
}
