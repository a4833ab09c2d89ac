//! `clflow devices` end to end: the binary, the PoCL device of this machine,
//! the built-in profiles, the measured store and the power-sensor choice.

mod common;

use clflow_devices::{DeviceIdentity, MeasuredProfile, MeasuredStore};
use common::{text, Clflow};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A private data directory and an empty sysfs, so that the host's measured
/// profiles and sensors do not leak into the results.
struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new() -> Self {
        let case = Case { dir: tempfile::tempdir().unwrap() };
        std::fs::create_dir_all(case.sysfs()).unwrap();
        case
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn sysfs(&self) -> PathBuf {
        self.dir.path().join("sysfs")
    }

    fn clflow(&self, args: &[&str], env: &[(&str, &Path)]) -> Output {
        let clflow = Clflow::new()
            .data(&self.data())
            .env("CLFLOW_SYSFS_ROOT", self.sysfs());
        env.iter()
            .fold(clflow, |clflow, (key, value)| clflow.env(key, value))
            .run(args)
    }
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

fn json(out: &Output) -> Value {
    serde_json::from_str(&ok(out)).unwrap()
}

#[test]
fn lists_the_pocl_device_with_its_facts() {
    let case = Case::new();
    let stdout = ok(&case.clflow(&["devices"], &[]));
    assert!(
        stdout.starts_with("1 OpenCL device on 1 platform\n"),
        "{stdout}"
    );
    let row = stdout
        .lines()
        .find(|l| l.starts_with("0  Portable Computing Language  pthread-"))
        .unwrap_or_else(|| panic!("no table row for the PoCL device:\n{stdout}"));
    let cells: Vec<&str> = row
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(cells.len(), 10, "{row}");
    assert_eq!(cells[3], "cpu");
    assert!(cells[5].ends_with(" MHz"), "{row}");
    assert_eq!(cells[7..], ["none", "no", "none"]);
    assert!(
        stdout.contains(&format!("  vendor, type   {}, cpu", cpu_vendor())),
        "{stdout}"
    );
    for line in [
        "  fp64, fp16     yes, no",
        "  profile        no datasheet profile matches this name",
        "  measured       not yet: `clflow bench --device 0` measures it",
        "  power          none",
        "                 (no datasheet profile, so no TDP to fall back on)",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in\n{stdout}");
    }
}

#[test]
fn json_has_every_fact_and_the_joins() {
    let case = Case::new();
    let report = json(&case.clflow(&["devices", "--json"], &[]));
    let devices = report["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 1);
    let d = &devices[0];
    assert_eq!(d["index"], 0);
    assert_eq!(d["platform_name"], "Portable Computing Language");
    assert!(d["name"].as_str().unwrap().starts_with("pthread-"));
    assert_eq!(d["kind"], "cpu");
    assert_eq!(d["vendor"], cpu_vendor().as_str());
    assert!(d["driver_version"].as_str().unwrap().starts_with("3."));
    assert!(d["opencl_c_version"]
        .as_str()
        .unwrap()
        .starts_with("OpenCL C 1.2"));
    for field in [
        "compute_units",
        "max_clock_mhz",
        "global_mem_bytes",
        "local_mem_bytes",
        "global_cache_bytes",
        "global_cacheline_bytes",
    ] {
        assert!(d[field].as_u64().unwrap() > 0, "{field}");
    }
    assert_eq!(d["fp64"], true);
    assert_eq!(d["fp16"], false);
    assert_eq!(d["profile"], Value::Null);
    assert_eq!(d["measured"]["exists"], false);
    let path = d["measured"]["path"].as_str().unwrap();
    assert!(
        path.starts_with(&case.data().join("measured").display().to_string()),
        "{path}"
    );
    assert_eq!(d["power"]["source"], Value::Null);
    // No datasheet profile: the cache simulated is the driver's.
    let cache = &d["simulated_cache"];
    assert_eq!(cache["bytes"], d["global_cache_bytes"]);
    assert_eq!(cache["line_bytes"], d["global_cacheline_bytes"]);
    assert!(cache["source"]
        .as_str()
        .unwrap()
        .contains("CL_DEVICE_GLOBAL_MEM_CACHE_SIZE"));
    assert_eq!(
        report["measured_dir"],
        case.data().join("measured").display().to_string()
    );
}

#[test]
fn a_stored_measurement_and_a_readable_rapl_show_up() {
    let case = Case::new();
    let info = clflow_ocl::discover().unwrap().remove(0);
    let store = MeasuredStore::at(case.data().join("measured"));
    store
        .save(&MeasuredProfile::new(DeviceIdentity::of(&info), "0.1.0"))
        .unwrap();
    let rapl = Path::new(env!("CARGO_MANIFEST_DIR")).join("../devices/tests/fixtures/sysfs-rapl");
    let report = json(&case.clflow(&["devices", "--json"], &[("CLFLOW_SYSFS_ROOT", &rapl)]));
    let d = &report["devices"][0];
    assert_eq!(d["measured"]["exists"], true);
    assert_eq!(d["measured"]["clflow_version"], "0.1.0");
    assert_eq!(d["power"]["source"], "rapl");
    assert_eq!(
        d["power"]["sensor"],
        "RAPL energy counters (package-0 + dram + package-1)"
    );
}

#[test]
fn profiles_lists_the_papers_devices_without_opencl() {
    let case = Case::new();
    let vendors = tempfile::tempdir().unwrap();
    let no_icd = [("OCL_ICD_VENDORS", vendors.path())];
    let stdout = ok(&case.clflow(&["devices", "--profiles"], &no_icd));
    let k20 = stdout
        .lines()
        .find(|l| l.starts_with("tesla-k20 "))
        .unwrap_or_else(|| panic!("no K20 row:\n{stdout}"));
    let cells: Vec<&str> = k20
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        cells,
        [
            "tesla-k20",
            "NVIDIA Tesla K20",
            "gpu",
            "3524",
            "1175",
            "587",
            "208",
            "225",
            "yes",
            "built in"
        ]
    );
    let report = json(&case.clflow(&["devices", "--profiles", "--json"], &no_icd));
    let profiles = report["profiles"].as_array().unwrap();
    let k20 = profiles.iter().find(|p| p["id"] == "tesla-k20").unwrap();
    assert_eq!(k20["datasheet"]["fp32_gflops"]["value"], 3524.0);
    assert_eq!(k20["measured"]["memory_bandwidth_gbs"]["value"], 143.0);
    assert_eq!(k20["match"][0], "Tesla K20");
}

#[test]
fn no_opencl_runtime_is_a_clear_error_with_exit_1() {
    let case = Case::new();
    let vendors = tempfile::tempdir().unwrap();
    let out = case.clflow(&["devices"], &[("OCL_ICD_VENDORS", vendors.path())]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "clflow: error: no OpenCL platform found (the OpenCL loader found no installed ICD): \
         install an ICD such as pocl-opencl-icd (ci/setup does)\n  \
         hint: `clflow devices --profiles` lists the datasheet profiles without OpenCL\n"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_broken_user_profile_is_an_input_error_naming_its_line() {
    let case = Case::new();
    let dir = case.dir.path().join("profiles");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("board.toml"),
        "model = \"Board\"\nvendor = \"V\"\ntype = \"gpu\"\nmatch = \"Board\"\n",
    )
    .unwrap();
    let out = case.clflow(
        &[
            "devices",
            "--profiles",
            "--profiles-dir",
            dir.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "clflow: error: {}:4: ",
            dir.join("board.toml").display()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("hint: see devices/README.md"), "{stderr}");
}

#[test]
fn help_teaches_by_example() {
    let out = Case::new().clflow(&["devices", "--help"], &[]);
    let stdout = ok(&out);
    assert!(stdout.contains("clflow devices --json"));
    assert!(stdout.contains("clflow devices --profiles"));
    assert!(stdout.contains("--device pthread"));
}

/// The CPU's vendor as the kernel reports it (PoCL's device vendor).
fn cpu_vendor() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("vendor_id"))
        .and_then(|l| l.split(':').nth(1))
        .map(|v| v.trim().to_string())
        .expect("/proc/cpuinfo names the vendor")
}
