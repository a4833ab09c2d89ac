//! Power sensors on fixture trees in the real sysfs formats, the CSV import,
//! the spec fallback and the chooser.

mod common;

use clflow_core::Diagnostic;
use clflow_core::FailureKind;
use clflow_devices::power::{
    choose_sensor, discover_hwmon, discover_rapl, HwmonSensor, PowerImport, PowerSensor,
    PowerSource, RaplCounters, RaplSensor, SensorOptions, SysRoot,
};
use clflow_devices::{DevicesError, ProfileCatalog};
use clflow_ocl::DeviceKind;
use common::*;
use std::path::Path;
use std::sync::Arc;

const ZONES: &str = "sys/class/powercap";

#[test]
fn rapl_sums_packages_and_dram_across_a_wrap_around() {
    let tree = copy_fixture("sysfs-rapl");
    let root = SysRoot::new(tree.path());
    let zones = discover_rapl(&root).unwrap();
    let names: Vec<&str> = zones.iter().map(|z| z.name.as_str()).collect();
    assert_eq!(names, ["package-0", "dram", "package-1"]);
    assert_eq!(zones[1].max_energy_range_uj, 65_712_999_613);

    let mut counters = RaplCounters::open(&root).unwrap();
    assert_eq!(counters.read_total_j().unwrap(), 0.0);
    let zone = |z: &str| tree.path().join(ZONES).join(z).join("energy_uj");
    // Package 0 passes its wrap point (262143328850 µJ): 328850 + 1000000 µJ.
    write(&zone("intel-rapl:0"), "1000000");
    write(&zone("intel-rapl:0:1"), "14000000"); // dram: +2 J
    write(&zone("intel-rapl:1"), "903000000"); // package 1: +3 J
    write(&zone("intel-rapl:0:0"), "99000000"); // core: inside package 0, not added
    let total = counters.read_total_j().unwrap();
    assert!((total - 6.328850).abs() < 1e-9, "{total}");
    // A further read adds nothing when the counters stand still.
    assert!((counters.read_total_j().unwrap() - 6.328850).abs() < 1e-9);
}

#[test]
fn a_rapl_sensor_samples_and_says_which_zones() {
    let root = SysRoot::new(fixture("sysfs-rapl"));
    let mut sensor = RaplSensor::open(&root).unwrap();
    assert_eq!(sensor.source(), PowerSource::Rapl);
    assert_eq!(
        sensor.describe(),
        "RAPL energy counters (package-0 + dram + package-1)"
    );
    sensor.start("triad").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(120));
    let trace = sensor.stop().unwrap();
    assert_eq!(trace.kernel, "triad");
    // The fixture's counters stand still: zero energy, zero power.
    assert_eq!(trace.energy_j, Some(0.0));
    assert!(!trace.samples.is_empty());
    assert_eq!(trace.peak_w, Some(0.0));
}

/// What an unprivileged user sees on kernels since 5.10 (root reads anything,
/// so the denial is reproduced by the reader).
fn energy_denied(tree: &Path) -> SysRoot {
    SysRoot::with_reader(tree, |path: &Path| {
        if path.ends_with("energy_uj") {
            Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied))
        } else {
            std::fs::read_to_string(path)
        }
    })
}

#[test]
fn unreadable_rapl_counters_make_rapl_unavailable_with_a_note() {
    let tree = fixture("sysfs-rapl");
    let reason = RaplSensor::open(&energy_denied(&tree)).err().unwrap();
    let expected_path = tree.join(ZONES).join("intel-rapl:0/energy_uj");
    assert_eq!(
        reason,
        format!(
            "{} is not readable by this user (permission denied); read it as root or grant read access (e.g. `chmod a+r`)",
            expected_path.display()
        )
    );
    let empty = tempfile::tempdir().unwrap();
    let none = RaplSensor::open(&SysRoot::new(empty.path())).err().unwrap();
    assert!(none.starts_with("no RAPL package zone under "), "{none}");
}

#[test]
fn hwmon_chips_prefer_instant_power_and_read_energy() {
    let root = SysRoot::new(fixture("sysfs-hwmon"));
    let chips = discover_hwmon(&root);
    let summary: Vec<(&str, &str, Option<String>, Option<String>)> = chips
        .iter()
        .map(|c| {
            let file = |p: &Option<std::path::PathBuf>| {
                p.as_ref()
                    .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            };
            (
                c.entry.as_str(),
                c.name.as_str(),
                file(&c.power_file),
                file(&c.energy_file),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("hwmon2", "amdgpu", Some("power1_average".into()), None),
            (
                "hwmon10",
                "amdgpu",
                Some("power1_input".into()),
                Some("energy1_input".into())
            ),
        ]
    );
    let mut sensor = HwmonSensor::open(&root, chips[1].clone()).unwrap();
    assert_eq!(
        sensor.describe(),
        "hwmon amdgpu (hwmon10: power1_input, energy1_input)"
    );
    sensor.start("copy").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(60));
    let trace = sensor.stop().unwrap();
    assert!(
        trace.samples.iter().all(|s| s.watts == 143.5),
        "{:?}",
        trace.samples
    );
    assert_eq!(trace.peak_w, Some(143.5));
    assert_eq!(trace.energy_j, Some(0.0));
}

#[test]
fn the_power_csv_imports_traces_and_peaks() {
    let import = PowerImport::load(&fixture("power.csv")).unwrap();
    assert_eq!(import.entries.len(), 3);
    let trace = import.find("ADM-PCIE-7V3 (Virtex-7)", "lookup3").unwrap();
    assert_eq!(trace.samples.len(), 3);
    assert_eq!(trace.samples[1].t_s, 0.10);
    assert_eq!(trace.peak_w, 24.6);
    assert_eq!(trace.line, 3);
    // No row for this kernel: the `*` row's peak serves it.
    let any = import.find("adm-pcie-7v3", "triad").unwrap();
    assert!(any.samples.is_empty());
    assert_eq!(any.peak_w, 25.0);
    assert_eq!(
        import
            .find("xilinx_u250_gen3x16", "triad")
            .map(|e| e.peak_w),
        None
    );
    assert_eq!(
        import.find("Alveo U250", "triad").map(|e| e.peak_w),
        Some(81.5)
    );
    assert!(!import.names_device("Tesla K20c"));
}

fn import_error(text: &str) -> String {
    let err = PowerImport::parse(text, Path::new("p.csv")).unwrap_err();
    assert!(matches!(err, DevicesError::PowerImport { .. }));
    assert_eq!(err.kind(), FailureKind::Input);
    err.to_string()
}

#[test]
fn power_csv_errors_name_the_line() {
    assert_eq!(
        import_error("device,kernel,watts\nx,k,1\n"),
        "p.csv:1: the header lacks the column `time_s` (it has: device, kernel, watts)"
    );
    assert_eq!(
        import_error("device,kernel,time_s,watts,volts\nx,k,,1,12\n"),
        "p.csv:1: unknown column `volts`; the columns are device, kernel, time_s, watts"
    );
    assert_eq!(
        import_error("device,kernel,time_s,watts\nx,k,0,10\nx,k,0.1,ten\n"),
        "p.csv:3: `watts` must be a number ≥ 0, not 'ten'"
    );
    assert_eq!(
        import_error("device,kernel,time_s,watts\nx,k,0.2,10\nx,k,0.1,11\n"),
        "p.csv:3: `time_s` 0.1 goes back in time (the previous row of x/k says 0.2)"
    );
    assert_eq!(
        import_error("device,kernel,time_s,watts\nx,k,0,10\nx,k,,30\n"),
        "p.csv:3: x/k already has timed samples on line 2; give either timed samples or one peak value"
    );
    assert_eq!(
        import_error("# nothing\ndevice,kernel,time_s,watts\n"),
        "p.csv:2: the file holds no power row"
    );
}

fn options(root: SysRoot) -> SensorOptions {
    SensorOptions { sys_root: root, import: None, nvml: true }
}

#[test]
fn cpu_devices_get_rapl_else_the_labelled_spec_power() {
    let catalog = ProfileCatalog::embedded().unwrap();
    let epyc = device(
        0,
        "AMD EPYC 7763 64-Core Processor",
        "AuthenticAMD",
        DeviceKind::Cpu,
    );
    let profile = catalog.match_name(&epyc.name).map(|m| m.profile);
    assert_eq!(profile.map(|p| p.id.as_str()), Some("amd-epyc-7763"));
    let all = [epyc.clone()];

    let tree = fixture("sysfs-rapl");
    let rapl = choose_sensor(&epyc, &all, profile, &options(SysRoot::new(&tree)));
    assert_eq!(rapl.source, Some(PowerSource::Rapl));
    assert!(rapl.notes.is_empty());

    let denied = choose_sensor(&epyc, &all, profile, &options(energy_denied(&tree)));
    assert_eq!(denied.source, Some(PowerSource::Spec));
    assert_eq!(
        denied.description,
        "datasheet TDP of the AMD EPYC 7763 (280 W), not a measurement"
    );
    assert!(
        denied.notes[0].contains("permission denied"),
        "{:?}",
        denied.notes
    );
    let mut spec = denied.sensor.unwrap();
    spec.start("triad").unwrap();
    let trace = spec.stop().unwrap();
    assert_eq!(
        (trace.source, trace.peak_w),
        (PowerSource::Spec, Some(280.0))
    );

    // The PoCL device of this machine: no profile and, in a VM, no RAPL.
    let pocl = device(
        0,
        "pthread-skylake-avx512-Intel(R) Xeon(R) Processor",
        "GenuineIntel",
        DeviceKind::Cpu,
    );
    let empty = tempfile::tempdir().unwrap();
    let none = choose_sensor(
        &pocl,
        std::slice::from_ref(&pocl),
        None,
        &options(SysRoot::new(empty.path())),
    );
    assert_eq!(none.source, None);
    assert!(none.sensor.is_none());
    assert_eq!(
        none.notes.last().unwrap(),
        "no datasheet profile, so no TDP to fall back on"
    );
}

#[test]
fn nvidia_gpus_without_nvml_fall_back_to_spec() {
    // Here NVML is absent; on a GPU machine NVML has no board of this name.
    // Either way the chooser answers with a labelled fallback, not an error.
    let catalog = ProfileCatalog::embedded().unwrap();
    let k20 = device(0, "Tesla K20c", "NVIDIA Corporation", DeviceKind::Gpu);
    let profile = catalog.match_name(&k20.name).map(|m| m.profile);
    let choice = choose_sensor(
        &k20,
        std::slice::from_ref(&k20),
        profile,
        &options(SysRoot::system()),
    );
    assert_eq!(choice.source, Some(PowerSource::Spec));
    assert!(choice.notes[0].contains("NVML"), "{:?}", choice.notes);
    assert_eq!(
        choice.description,
        "datasheet TDP of the NVIDIA Tesla K20 (225 W), not a measurement"
    );
}

#[test]
fn amd_gpus_take_the_first_amdgpu_chip_and_say_so() {
    let gpu = device(
        0,
        "gfx90a:sramecc+:xnack-",
        "Advanced Micro Devices, Inc.",
        DeviceKind::Gpu,
    );
    let choice = choose_sensor(
        &gpu,
        std::slice::from_ref(&gpu),
        None,
        &options(SysRoot::new(fixture("sysfs-hwmon"))),
    );
    assert_eq!(choice.source, Some(PowerSource::Hwmon));
    assert_eq!(choice.description, "hwmon amdgpu (hwmon2: power1_average)");
    assert_eq!(
        choice.notes,
        ["2 amdgpu chips: took hwmon2, the first; another may belong to this device"]
    );
}

#[test]
fn an_import_naming_the_device_wins() {
    let import = Arc::new(PowerImport::load(&fixture("power.csv")).unwrap());
    let fpga = device(
        0,
        "xilinx ADM-PCIE-7V3 : xilinx_adm-pcie-7v3_1ddr",
        "Xilinx",
        DeviceKind::Accelerator,
    );
    let mut opts = options(SysRoot::new(fixture("sysfs-rapl")));
    opts.import = Some(import);
    let choice = choose_sensor(&fpga, std::slice::from_ref(&fpga), None, &opts);
    assert_eq!(choice.source, Some(PowerSource::Import));
    let mut sensor = choice.sensor.unwrap();
    sensor.start("lookup3").unwrap();
    let trace = sensor.stop().unwrap();
    assert_eq!(trace.peak_w, Some(24.6));
    assert_eq!(trace.samples.len(), 3);
    assert!(
        trace.sensor.ends_with("power.csv line 3"),
        "{}",
        trace.sensor
    );
    let err = {
        let other = device(0, "Alveo U250", "Xilinx", DeviceKind::Accelerator);
        let mut s = choose_sensor(&other, std::slice::from_ref(&other), None, &opts)
            .sensor
            .unwrap();
        s.start("lookup3").unwrap_err()
    };
    assert!(
        err.to_string()
            .contains("has no row for device 'Alveo U250' and kernel 'lookup3'"),
        "{err}"
    );
}
