//! The measured profile store: round trip, atomic replacement, refusal of
//! files that do not belong to the device asked for.

mod common;

use clflow_devices::power::PowerSource;
use clflow_devices::{
    BandwidthPeak, ComputePeak, ComputeType, DeviceIdentity, DevicesError, MeasuredProfile,
    MeasuredStore, PowerPeak, Statistic,
};
use clflow_ocl::DeviceKind;
use common::device;

fn stat(samples: &[f64]) -> Statistic {
    Statistic::of_rates(samples).unwrap()
}

fn profile() -> MeasuredProfile {
    let info = device(
        0,
        "pthread-skylake-avx512-Intel(R) Xeon(R) Processor",
        "GenuineIntel",
        DeviceKind::Cpu,
    );
    let mut p = MeasuredProfile::new(DeviceIdentity::of(&info), "0.1.0");
    p.compute.push(ComputePeak {
        data_type: ComputeType::Fp32,
        kernel: "mad".into(),
        vector_width: 16,
        ops_per_s: stat(&[44.1e9, 45.3e9, 44.8e9]),
    });
    p.compute.push(ComputePeak {
        data_type: ComputeType::Int32,
        kernel: "add".into(),
        vector_width: 16,
        ops_per_s: stat(&[60e9, 61e9]),
    });
    p.bandwidth.push(BandwidthPeak {
        kernel: "triad".into(),
        vector_width: 4,
        bytes_per_s: stat(&[28.9e9, 29.4e9, 29.1e9]),
    });
    p.bandwidth.push(BandwidthPeak {
        kernel: "copy".into(),
        vector_width: 4,
        bytes_per_s: stat(&[27.0e9]),
    });
    p.power.push(PowerPeak {
        during: "compute".into(),
        source: PowerSource::Rapl,
        peak_w: stat(&[80.0, 82.0]),
        mean_w: Some(75.0),
        energy_j: Some(300.0),
    });
    p.power.push(PowerPeak {
        during: "bandwidth".into(),
        source: PowerSource::Rapl,
        peak_w: stat(&[70.0, 71.5]),
        mean_w: Some(66.0),
        energy_j: None,
    });
    p
}

#[test]
fn a_saved_profile_loads_back_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let store = MeasuredStore::at(dir.path().join("measured"));
    let p = profile();
    assert_eq!(store.load(&p.identity).unwrap(), None);
    let path = store.save(&p).unwrap();
    assert_eq!(path, store.path_for(&p.identity));
    assert!(path.starts_with(dir.path().join("measured")));
    let back = store.load(&p.identity).unwrap().unwrap();
    assert_eq!(back, p);
    assert_eq!(back.peak_ops_per_s(ComputeType::Fp32), Some(45.3e9));
    assert_eq!(back.peak_ops_per_s(ComputeType::Fp64), None);
    assert_eq!(back.peak_bytes_per_s(), Some(29.4e9));
    // An in-place update, counted both ways, is no peak: a CPU's write-backs
    // of lines it read cost it less than reads.
    let mut updated = back.clone();
    updated.bandwidth.push(BandwidthPeak {
        kernel: "update/float16".into(),
        vector_width: 16,
        bytes_per_s: stat(&[46e9]),
    });
    assert_eq!(updated.peak_bytes_per_s(), Some(29.4e9));
    // P̂ is the bandwidth benchmark's peak (paper §3.1), not the higher compute one.
    assert_eq!(back.peak_power(), Some((71.5, PowerSource::Rapl)));
    assert_eq!(back.schema, 1);
    assert_eq!(back.measured_at.len(), "2026-01-01T00:00:00Z".len());
}

#[test]
fn saving_replaces_atomically_and_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = MeasuredStore::at(dir.path());
    let mut p = profile();
    store.save(&p).unwrap();
    p.notes.push("second run".into());
    let path = store.save(&p).unwrap();
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files, [path.file_name().unwrap().to_owned()]);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with("}\n"));
    assert_eq!(
        store.load(&p.identity).unwrap().unwrap().notes,
        ["second run"]
    );
}

#[test]
fn files_of_another_device_or_schema_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = MeasuredStore::at(dir.path());
    let p = profile();
    let path = store.save(&p).unwrap();
    // A file copied under another device's name.
    let other = DeviceIdentity { driver_version: "4.0".into(), ..p.identity.clone() };
    std::fs::copy(&path, store.path_for(&other)).unwrap();
    let err = store.load(&other).unwrap_err();
    assert!(matches!(err, DevicesError::Measured { .. }));
    assert!(err.to_string().ends_with("belongs to 'pthread-skylake-avx512-Intel(R) Xeon(R) Processor' (driver 1.0), not to 'pthread-skylake-avx512-Intel(R) Xeon(R) Processor' (driver 4.0)"), "{err}");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\"schema\": 1", "\"schema\": 0");
    std::fs::write(&path, text).unwrap();
    let err = store.load(&p.identity).unwrap_err().to_string();
    assert!(
        err.ends_with("has schema 0, this clflow reads schema 1"),
        "{err}"
    );
    std::fs::write(&path, "{ not json").unwrap();
    assert!(store
        .load(&p.identity)
        .unwrap_err()
        .to_string()
        .contains("not valid JSON"));
}
