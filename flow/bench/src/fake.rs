//! A device description for tests, shaped like PoCL's on this project's CPUs.

use clflow_ocl::{DeviceInfo, DeviceKind};

/// A CPU device with the given memory sizes (bytes) and compute units.
pub fn device(global: u64, max_alloc: u64, cache: u64, compute_units: u32) -> DeviceInfo {
    DeviceInfo {
        index: 0,
        platform_name: "Portable Computing Language".into(),
        platform_vendor: String::new(),
        platform_version: String::new(),
        name: "pthread-cpu".into(),
        vendor: String::new(),
        kind: DeviceKind::Cpu,
        driver_version: "3.1".into(),
        device_version: String::new(),
        opencl_c_version: String::new(),
        compute_units,
        max_clock_mhz: 2300,
        global_mem_bytes: global,
        max_alloc_bytes: max_alloc,
        local_mem_bytes: 0,
        global_cache_bytes: cache,
        global_cacheline_bytes: 64,
        max_work_group_size: 4096,
        max_work_item_sizes: vec![4096; 3],
        fp64: true,
        fp16: false,
        il_version: None,
        spirv: false,
        profiling_timer_resolution_ns: 1,
        extensions: vec![],
    }
}
