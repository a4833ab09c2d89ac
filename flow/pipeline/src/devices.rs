//! What `clflow devices` reports of each OpenCL device, joined from the
//! datasheet profiles, the measured-profile store, the power sensors and
//! the cache the traffic simulation would take.

use crate::traffic::device_cache;
use clflow_devices::power::{choose_sensor, PowerSource, SensorOptions};
use clflow_devices::{DeviceIdentity, MeasuredStore, ProfileCatalog};
use clflow_ocl::DeviceInfo;
use serde::Serialize;

#[derive(Serialize)]
pub struct DevicesJson<'a> {
    pub devices: Vec<DeviceReport<'a>>,
    pub profiles_dir: Option<String>,
    pub measured_dir: Option<String>,
}

#[derive(Serialize)]
pub struct DeviceReport<'a> {
    #[serde(flatten)]
    pub info: &'a DeviceInfo,
    pub profile: Option<ProfileRef>,
    pub measured: MeasuredRef,
    pub power: PowerRef,
    /// The cache `predict` and `analyze` simulate for it.
    pub simulated_cache: Option<CacheRef>,
}

#[derive(Serialize)]
pub struct CacheRef {
    pub bytes: u64,
    pub line_bytes: u64,
    pub source: String,
}

#[derive(Serialize)]
pub struct ProfileRef {
    pub id: String,
    pub model: String,
    /// The `match` pattern that chose it.
    pub pattern: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ties: Vec<String>,
}

#[derive(Serialize)]
pub struct MeasuredRef {
    pub exists: bool,
    pub path: Option<String>,
    pub measured_at: Option<String>,
    pub clflow_version: Option<String>,
    /// Why a stored profile could not be read.
    pub error: Option<String>,
}

#[derive(Serialize)]
pub struct PowerRef {
    /// `None`: no power figure for this device.
    pub source: Option<PowerSource>,
    pub sensor: String,
    pub notes: Vec<String>,
}

/// What `clflow devices` says of one device: the datasheet profile its
/// name matches, its measured profile, the power sensor that serves it and
/// the cache the traffic simulation takes for it.
pub fn describe<'a>(
    device: &'a DeviceInfo,
    all: &[DeviceInfo],
    catalog: &ProfileCatalog,
    store: Option<&MeasuredStore>,
    options: &SensorOptions,
) -> DeviceReport<'a> {
    let matched = catalog.match_name(&device.name);
    let profile = matched.as_ref().map(|m| m.profile);
    let choice = choose_sensor(device, all, profile, options);
    DeviceReport {
        info: device,
        profile: matched.map(|m| ProfileRef {
            id: m.profile.id.clone(),
            model: m.profile.model.clone(),
            pattern: m.pattern.to_string(),
            ties: m.ties.iter().map(|t| t.to_string()).collect(),
        }),
        measured: measured(device, store),
        power: PowerRef {
            source: choice.source,
            sensor: choice.description,
            notes: choice.notes,
        },
        simulated_cache: device_cache(None, device, profile).map(|c| CacheRef {
            bytes: c.spec.bytes,
            line_bytes: c.spec.line_bytes,
            source: c.source,
        }),
    }
}

fn measured(device: &DeviceInfo, store: Option<&MeasuredStore>) -> MeasuredRef {
    let mut out = MeasuredRef {
        exists: false,
        path: None,
        measured_at: None,
        clflow_version: None,
        error: None,
    };
    let Some(store) = store else {
        out.error = Some("no data directory (set CLFLOW_DATA_DIR or HOME)".into());
        return out;
    };
    let identity = DeviceIdentity::of(device);
    out.path = Some(store.path_for(&identity).display().to_string());
    match store.load(&identity) {
        Ok(Some(profile)) => {
            out.exists = true;
            out.measured_at = Some(profile.measured_at);
            out.clflow_version = Some(profile.clflow_version);
        }
        Ok(None) => {}
        Err(err) => out.error = Some(err.to_string()),
    }
    out
}
