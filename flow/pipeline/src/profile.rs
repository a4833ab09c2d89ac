//! A device's ceilings for the roofline (paper §4.1): the measured peaks
//! F̂_f, F̂_i, B̂, P̂ from the measured-profile store, benchmarked first
//! where the store has none, and the datasheet peaks F̄, B̄, P̄ of the
//! profile its name matches.

use crate::bench::Needs;
use crate::Observer;
use clflow_counts::OpClass;
use clflow_devices::power::PowerSource;
use clflow_devices::{ComputeType, DatasheetProfile, MeasuredProfile, ProfileCatalog};
use clflow_metrics::{CacheCeiling, Ceilings, DeviceProfile, Figure, Provenance, Unit};
use clflow_ocl::{DeviceInfo, DeviceKind, OclDevice};

/// The datasheet profiles (built in, plus the user's); a broken user
/// directory costs its profiles, not the analysis.
pub fn catalog(observer: &dyn Observer) -> ProfileCatalog {
    ProfileCatalog::load(None).unwrap_or_else(|err| {
        observer.note(format!(
            "clflow: warning: datasheet profiles not read: {err}"
        ));
        ProfileCatalog::embedded().unwrap_or_default()
    })
}

/// The device's measured profile with what `needs` asks, for commands that
/// go on without one: the reuse of a stored profile is noted, and a failed
/// benchmark is a warning after which the datasheet stands alone.
pub fn measured_or_datasheet(
    device: &OclDevice,
    all: &[DeviceInfo],
    datasheet: Option<&DatasheetProfile>,
    needs: Needs,
    observer: &dyn Observer,
) -> Option<MeasuredProfile> {
    match crate::bench::obtain(device, all, datasheet, needs, false, observer) {
        Ok(obtained) => {
            if obtained.reused() {
                observer.note(format!(
                    "device {}: measured profile of {} reused",
                    device.info.label(),
                    obtained.profile.measured_at
                ));
            }
            Some(obtained.profile)
        }
        Err(failure) => {
            observer.note(format!(
                "clflow: warning: device {}: not benchmarked ({}); datasheet figures only",
                device.info.label(),
                failure.message
            ));
            None
        }
    }
}

/// The metrics crate's device: measured ceilings from `measured`, datasheet
/// ones from `datasheet`, each with its source.
pub fn device_profile(
    name: &str,
    info: &DeviceInfo,
    measured: Option<&MeasuredProfile>,
    datasheet: Option<&DatasheetProfile>,
    float: OpClass,
) -> DeviceProfile {
    DeviceProfile {
        name: name.to_string(),
        kind: Some(kind_name(info.kind, datasheet).to_string()),
        measured: measured
            .map(|m| measured_ceilings(m, float))
            .unwrap_or_default(),
        datasheet: datasheet
            .map(|d| datasheet_ceilings(d, float))
            .unwrap_or_default(),
    }
}

fn kind_name(kind: DeviceKind, datasheet: Option<&DatasheetProfile>) -> String {
    if let Some(d) = datasheet {
        return d.class.to_string();
    }
    match kind {
        DeviceKind::Cpu => "cpu",
        DeviceKind::Gpu => "gpu",
        DeviceKind::Accelerator => "accelerator",
        DeviceKind::Custom | DeviceKind::Other => "other",
    }
    .to_string()
}

fn measured_ceilings(profile: &MeasuredProfile, float: OpClass) -> Ceilings {
    let source = |what: &str| format!("clflow bench {what}, {}", profile.measured_at);
    let float_type = match float {
        OpClass::Fp64 => ComputeType::Fp64,
        _ => ComputeType::Fp32,
    };
    let power = profile.peak_power().map(|(watts, source_kind)| {
        let provenance = match source_kind {
            PowerSource::Spec => Provenance::Datasheet,
            PowerSource::Import => Provenance::Imported,
            _ => Provenance::Measured,
        };
        Figure::new(
            watts,
            Unit::Watts,
            provenance,
            format!(
                "clflow bench, peak power ({source_kind}), {}",
                profile.measured_at
            ),
        )
    });
    Ceilings {
        float: profile
            .peak_ops_per_s(float_type)
            .map(|v| Figure::measured(v, Unit::OpsPerSecond, source(float.name()))),
        int: profile
            .peak_ops_per_s(ComputeType::Int32)
            .map(|v| Figure::measured(v, Unit::OpsPerSecond, source("int32"))),
        bandwidth: profile
            .peak_bytes_per_s()
            .map(|v| Figure::measured(v, Unit::BytesPerSecond, source("bandwidth"))),
        power,
        caches: profile
            .cache_peaks()
            .into_iter()
            .map(|(level, window_bytes, v)| CacheCeiling {
                bandwidth: Figure::measured(
                    v,
                    Unit::BytesPerSecond,
                    source(&format!(
                        "{level} bandwidth, reads within {} KiB",
                        window_bytes >> 10
                    )),
                ),
                level,
                window_bytes,
            })
            .collect(),
    }
}

fn datasheet_ceilings(profile: &DatasheetProfile, float: OpClass) -> Ceilings {
    let figures = &profile.datasheet;
    let source = format!("{} datasheet", profile.model);
    let figure =
        |value: Option<f64>, unit: Unit| value.map(|v| Figure::datasheet(v, unit, &source));
    Ceilings {
        float: figure(
            match float {
                OpClass::Fp64 => figures.fp64_ops_per_s(),
                _ => figures.fp32_ops_per_s(),
            },
            Unit::OpsPerSecond,
        ),
        int: figure(figures.int32_ops_per_s(), Unit::OpsPerSecond),
        bandwidth: figure(figures.memory_bandwidth_bytes_per_s(), Unit::BytesPerSecond),
        power: figure(figures.tdp_watts(), Unit::Watts),
        caches: Vec::new(),
    }
}
