//! Helpers shared by the integration tests.
#![allow(dead_code)]

use clflow_ocl::{DeviceInfo, DeviceKind};
use std::path::{Path, PathBuf};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A copy of a fixture tree that a test may change.
pub fn copy_fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture(name), dir.path());
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

pub fn write(path: &Path, text: &str) {
    std::fs::write(path, format!("{text}\n")).unwrap();
}

/// An OpenCL device as discovery reports it, with the facts tests care about.
pub fn device(index: usize, name: &str, vendor: &str, kind: DeviceKind) -> DeviceInfo {
    DeviceInfo {
        index,
        platform_name: format!("{vendor} platform"),
        platform_vendor: vendor.into(),
        platform_version: "OpenCL 3.0".into(),
        name: name.into(),
        vendor: vendor.into(),
        kind,
        driver_version: "1.0".into(),
        device_version: "OpenCL 3.0".into(),
        opencl_c_version: "OpenCL C 1.2".into(),
        compute_units: 8,
        max_clock_mhz: 1000,
        global_mem_bytes: 1 << 30,
        max_alloc_bytes: 1 << 28,
        local_mem_bytes: 1 << 16,
        global_cache_bytes: 1 << 20,
        global_cacheline_bytes: 64,
        max_work_group_size: 1024,
        max_work_item_sizes: vec![1024, 1024, 1024],
        fp64: true,
        fp16: false,
        il_version: None,
        spirv: false,
        profiling_timer_resolution_ns: 1,
        extensions: vec![],
    }
}
