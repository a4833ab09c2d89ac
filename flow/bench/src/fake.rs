//! A device description for tests, shaped like PoCL's on this project's CPUs.

use clflow_ocl::{DeviceInfo, DeviceKind};

/// A CPU device with the given memory sizes (bytes) and compute units.
pub fn device(global: u64, max_alloc: u64, cache: u64, compute_units: u32) -> DeviceInfo {
    DeviceInfo {
        driver_version: "3.1".into(),
        compute_units,
        max_clock_mhz: 2300,
        global_mem_bytes: global,
        max_alloc_bytes: max_alloc,
        local_mem_bytes: 0,
        global_cache_bytes: cache,
        max_work_group_size: 4096,
        max_work_item_sizes: vec![4096; 3],
        ..DeviceInfo::described(
            0,
            "Portable Computing Language",
            "pthread-cpu",
            DeviceKind::Cpu,
        )
    }
}
