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
        vendor: vendor.into(),
        platform_vendor: vendor.into(),
        ..DeviceInfo::described(index, &format!("{vendor} platform"), name, kind)
    }
}
