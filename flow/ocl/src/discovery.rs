//! Which OpenCL platforms and devices this machine has, with the facts later
//! stages need (peak figures, memory sizes, supported types), and a stable
//! way for a user to pick one.

use crate::error::{OclError, Result, Step};
use opencl3::device::{
    Device, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU,
    CL_DEVICE_TYPE_CUSTOM, CL_DEVICE_TYPE_GPU,
};
use opencl3::error_codes::{
    CL_DEVICE_NOT_FOUND, CL_PLATFORM_NOT_FOUND_KHR, DLOPEN_FUNCTION_NOT_AVAILABLE,
    DLOPEN_RUNTIME_LOAD_FAILED,
};
use opencl3::platform::{get_platforms, Platform};
use serde::{Deserialize, Serialize};
use std::sync::Mutex;

/// The kind of device, as `CL_DEVICE_TYPE` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    Cpu,
    Gpu,
    Accelerator,
    Custom,
    Other,
}

impl DeviceKind {
    fn from_bits(bits: u64) -> Self {
        if bits & CL_DEVICE_TYPE_GPU != 0 {
            DeviceKind::Gpu
        } else if bits & CL_DEVICE_TYPE_CPU != 0 {
            DeviceKind::Cpu
        } else if bits & CL_DEVICE_TYPE_ACCELERATOR != 0 {
            DeviceKind::Accelerator
        } else if bits & CL_DEVICE_TYPE_CUSTOM != 0 {
            DeviceKind::Custom
        } else {
            DeviceKind::Other
        }
    }
}

/// One device and the platform it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Position in the flat list of all devices of all platforms: the
    /// number a user passes to select it.
    pub index: usize,
    pub platform_name: String,
    pub platform_vendor: String,
    pub platform_version: String,
    pub name: String,
    pub vendor: String,
    pub kind: DeviceKind,
    pub driver_version: String,
    /// `CL_DEVICE_VERSION`, e.g. "OpenCL 3.0 PoCL ...".
    pub device_version: String,
    /// `CL_DEVICE_OPENCL_C_VERSION`, e.g. "OpenCL C 1.2 pocl".
    pub opencl_c_version: String,
    pub compute_units: u32,
    pub max_clock_mhz: u32,
    pub global_mem_bytes: u64,
    pub max_alloc_bytes: u64,
    pub local_mem_bytes: u64,
    pub global_cache_bytes: u64,
    pub global_cacheline_bytes: u32,
    /// `float` lanes the device's vector unit takes at once
    /// (CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT); 0 where a record predates it.
    #[serde(default)]
    pub native_float_lanes: u32,
    pub max_work_group_size: usize,
    pub max_work_item_sizes: Vec<usize>,
    pub fp64: bool,
    pub fp16: bool,
    /// `CL_DEVICE_IL_VERSION` ("SPIR-V_1.2 ..."); `None` where the device
    /// takes no intermediate language (PoCL 3.1 on CPU, OpenCL 1.x devices).
    pub il_version: Option<String>,
    /// Whether programs may be created from SPIR-V on this device.
    pub spirv: bool,
    pub profiling_timer_resolution_ns: usize,
    pub extensions: Vec<String>,
}

impl DeviceInfo {
    /// A device described by hand rather than discovered, with plausible
    /// figures (8 compute units at 1 GHz, 1 GiB of memory, a 1 MiB cache of
    /// 64-byte lines, fp64): for tests, and for reasoning about devices that
    /// are not here. Change the fields that matter with `..` syntax.
    pub fn described(index: usize, platform: &str, name: &str, kind: DeviceKind) -> DeviceInfo {
        DeviceInfo {
            index,
            platform_name: platform.into(),
            platform_vendor: String::new(),
            platform_version: "OpenCL 3.0".into(),
            name: name.into(),
            vendor: String::new(),
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
            native_float_lanes: 4,
            max_work_group_size: 1024,
            max_work_item_sizes: vec![1024; 3],
            fp64: true,
            fp16: false,
            il_version: None,
            spirv: false,
            profiling_timer_resolution_ns: 1,
            extensions: vec![],
        }
    }

    /// "platform name / device name": what selectors match against.
    pub fn label(&self) -> String {
        format!("{} / {}", self.platform_name, self.name)
    }
}

/// A device ready to run launches on.
#[derive(Debug, Clone)]
pub struct OclDevice {
    pub info: DeviceInfo,
    pub(crate) device: Device,
}

/// Lists every device of every platform, in platform order.
pub fn discover() -> Result<Vec<DeviceInfo>> {
    Ok(discover_devices()?.into_iter().map(|d| d.info).collect())
}

/// How a user names a device: its index in the flat list, or a
/// case-insensitive part of "platform name / device name".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSelector {
    Index(usize),
    Substring(String),
}

impl DeviceSelector {
    pub fn parse(text: &str) -> Self {
        let text = text.trim();
        match text.parse::<usize>() {
            Ok(index) => DeviceSelector::Index(index),
            Err(_) => DeviceSelector::Substring(text.to_string()),
        }
    }
}

impl std::fmt::Display for DeviceSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceSelector::Index(index) => write!(f, "{index}"),
            DeviceSelector::Substring(text) => f.write_str(text),
        }
    }
}

/// Opens every device of every platform, in platform order: what a run
/// lists once and then chooses from ([`choose_device`]).
pub fn open_devices() -> Result<Vec<OclDevice>> {
    discover_devices()
}

/// The one device of `devices` a selector names.
pub fn choose_device<'a>(
    selector: &DeviceSelector,
    devices: &'a [OclDevice],
) -> Result<&'a OclDevice> {
    let infos: Vec<&DeviceInfo> = devices.iter().map(|d| &d.info).collect();
    let index = choose(selector, &infos)?;
    Ok(&devices[index])
}

/// Opens the one device a selector names; `None` takes the first device.
pub fn select_device(selector: Option<&DeviceSelector>) -> Result<OclDevice> {
    let devices = discover_devices()?;
    let infos: Vec<&DeviceInfo> = devices.iter().map(|d| &d.info).collect();
    let index = match selector {
        None => 0,
        Some(selector) => choose(selector, &infos)?,
    };
    Ok(devices
        .into_iter()
        .nth(index)
        .expect("choose returns an index into the list it was given"))
}

/// The index of the device a selector names, or why there is none.
fn choose(selector: &DeviceSelector, devices: &[&DeviceInfo]) -> Result<usize> {
    let fail = |problem: String, candidates: Vec<&&DeviceInfo>| OclError::Selector {
        selector: selector.to_string(),
        problem,
        candidates: candidates
            .into_iter()
            .map(|d| format!("{}: {}", d.index, d.label()))
            .collect(),
    };
    match selector {
        DeviceSelector::Index(index) if *index < devices.len() => Ok(*index),
        DeviceSelector::Index(_) => Err(fail(
            format!("is out of range ({} devices)", devices.len()),
            devices.iter().collect(),
        )),
        DeviceSelector::Substring(text) => {
            let wanted = text.to_lowercase();
            let matches: Vec<&&DeviceInfo> = devices
                .iter()
                .filter(|d| d.label().to_lowercase().contains(&wanted))
                .collect();
            match matches.as_slice() {
                [only] => Ok(only.index),
                [] => Err(fail("matches no device".into(), devices.iter().collect())),
                _ => Err(fail(
                    format!("matches {} devices; be more specific", matches.len()),
                    matches,
                )),
            }
        }
    }
}

/// Serialises discovery within the process: PoCL 3.1 answers "no device"
/// to a thread that lists devices while another thread's first listing is
/// still initialising them.
static DISCOVERY: Mutex<()> = Mutex::new(());

fn discover_devices() -> Result<Vec<OclDevice>> {
    let _guard = DISCOVERY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let platforms = get_platforms().map_err(|err| no_platform(err.0))?;
    if platforms.is_empty() {
        return Err(OclError::NoPlatform { detail: "the OpenCL loader lists no platform".into() });
    }
    let mut devices = Vec::new();
    for platform in &platforms {
        let platform_name = platform
            .name()
            .step(|| "querying a platform's name".into())?;
        let ids = match platform.get_devices(CL_DEVICE_TYPE_ALL) {
            Ok(ids) => ids,
            // A platform with no device of any type says so this way.
            Err(err) if err.0 == CL_DEVICE_NOT_FOUND => Vec::new(),
            Err(err) => {
                return Err(OclError::Cl {
                    step: format!("listing the devices of platform '{platform_name}'"),
                    code: err.0,
                })
            }
        };
        for id in ids {
            let device = Device::new(id);
            let info = describe(devices.len(), platform, &platform_name, &device)?;
            devices.push(OclDevice { info, device });
        }
    }
    if devices.is_empty() {
        let names: Vec<String> = platforms.iter().filter_map(|p| p.name().ok()).collect();
        return Err(OclError::NoDevice { platforms: names.join(", ") });
    }
    Ok(devices)
}

fn no_platform(code: i32) -> OclError {
    let detail = match code {
        DLOPEN_RUNTIME_LOAD_FAILED => {
            "the OpenCL library libOpenCL.so.1 could not be loaded".into()
        }
        CL_PLATFORM_NOT_FOUND_KHR => "the OpenCL loader found no installed ICD".into(),
        DLOPEN_FUNCTION_NOT_AVAILABLE => {
            "the library loaded as OpenCL (see OPENCL_DYLIB_PATH) lacks clGetPlatformIDs".into()
        }
        other => format!(
            "listing platforms failed with {} ({other})",
            opencl3::error_codes::error_text(other)
        ),
    };
    OclError::NoPlatform { detail }
}

fn describe(
    index: usize,
    platform: &Platform,
    platform_name: &str,
    device: &Device,
) -> Result<DeviceInfo> {
    let name = device
        .name()
        .step(|| format!("querying the name of device {index}"))?;
    let at = |what: &str| format!("querying {what} of device {index} ({name})");
    let extensions: Vec<String> = device
        .extensions()
        .step(|| at("CL_DEVICE_EXTENSIONS"))?
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let has = |ext: &str| extensions.iter().any(|e| e == ext);
    // Devices without doubles may answer the config query with an error.
    let fp64 = has("cl_khr_fp64") || device.double_fp_config().is_ok_and(|c| c != 0);
    let il_version = device
        .il_version()
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty());
    let spirv =
        il_version.as_deref().is_some_and(|v| v.contains("SPIR-V")) || has("cl_khr_il_program");
    Ok(DeviceInfo {
        index,
        platform_name: platform_name.to_string(),
        platform_vendor: platform.vendor().step(|| at("CL_PLATFORM_VENDOR"))?,
        platform_version: platform.version().step(|| at("CL_PLATFORM_VERSION"))?,
        vendor: device.vendor().step(|| at("CL_DEVICE_VENDOR"))?,
        kind: DeviceKind::from_bits(device.dev_type().step(|| at("CL_DEVICE_TYPE"))?),
        driver_version: device.driver_version().step(|| at("CL_DRIVER_VERSION"))?,
        device_version: device.version().step(|| at("CL_DEVICE_VERSION"))?,
        opencl_c_version: device
            .opencl_c_version()
            .step(|| at("CL_DEVICE_OPENCL_C_VERSION"))?,
        compute_units: device
            .max_compute_units()
            .step(|| at("CL_DEVICE_MAX_COMPUTE_UNITS"))?,
        max_clock_mhz: device
            .max_clock_frequency()
            .step(|| at("CL_DEVICE_MAX_CLOCK_FREQUENCY"))?,
        global_mem_bytes: device
            .global_mem_size()
            .step(|| at("CL_DEVICE_GLOBAL_MEM_SIZE"))?,
        max_alloc_bytes: device
            .max_mem_alloc_size()
            .step(|| at("CL_DEVICE_MAX_MEM_ALLOC_SIZE"))?,
        local_mem_bytes: device
            .local_mem_size()
            .step(|| at("CL_DEVICE_LOCAL_MEM_SIZE"))?,
        global_cache_bytes: device
            .global_mem_cache_size()
            .step(|| at("CL_DEVICE_GLOBAL_MEM_CACHE_SIZE"))?,
        global_cacheline_bytes: device
            .global_mem_cacheline_size()
            .step(|| at("CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE"))?,
        native_float_lanes: device
            .native_vector_width_float()
            .step(|| at("CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT"))?,
        max_work_group_size: device
            .max_work_group_size()
            .step(|| at("CL_DEVICE_MAX_WORK_GROUP_SIZE"))?,
        max_work_item_sizes: device
            .max_work_item_sizes()
            .step(|| at("CL_DEVICE_MAX_WORK_ITEM_SIZES"))?,
        fp64,
        fp16: has("cl_khr_fp16"),
        il_version,
        spirv,
        profiling_timer_resolution_ns: device
            .profiling_timer_resolution()
            .step(|| at("CL_DEVICE_PROFILING_TIMER_RESOLUTION"))?,
        extensions,
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(index: usize, platform: &str, name: &str) -> DeviceInfo {
        DeviceInfo::described(index, platform, name, DeviceKind::Cpu)
    }

    fn list() -> Vec<DeviceInfo> {
        vec![
            device(0, "Portable Computing Language", "pthread-skylake"),
            device(1, "NVIDIA CUDA", "NVIDIA H100"),
            device(2, "NVIDIA CUDA", "NVIDIA A100"),
        ]
    }

    fn pick(selector: &str) -> Result<usize> {
        let list = list();
        let refs: Vec<&DeviceInfo> = list.iter().collect();
        choose(&DeviceSelector::parse(selector), &refs)
    }

    #[test]
    fn selects_by_index_and_by_case_insensitive_substring() {
        assert_eq!(pick("2").unwrap(), 2);
        assert_eq!(pick("h100").unwrap(), 1);
        assert_eq!(pick("portable computing language / PTHREAD").unwrap(), 0);
    }

    #[test]
    fn ambiguous_selector_lists_only_the_matching_devices() {
        let err = pick("nvidia").unwrap_err();
        assert_eq!(
            err.to_string(),
            "device selector 'nvidia' matches 2 devices; be more specific; \
             devices: 1: NVIDIA CUDA / NVIDIA H100; 2: NVIDIA CUDA / NVIDIA A100"
        );
    }

    #[test]
    fn unknown_selector_lists_every_device() {
        let err = pick("radeon").unwrap_err();
        let OclError::Selector { candidates, .. } = &err else {
            panic!("expected a selector error, got {err}");
        };
        assert_eq!(candidates.len(), 3);
        assert_eq!(
            candidates[0],
            "0: Portable Computing Language / pthread-skylake"
        );
        assert!(pick("3")
            .unwrap_err()
            .to_string()
            .contains("out of range (3 devices)"));
    }

    #[test]
    fn a_missing_runtime_says_what_to_install() {
        assert_eq!(
            no_platform(DLOPEN_RUNTIME_LOAD_FAILED).to_string(),
            "no OpenCL platform found (the OpenCL library libOpenCL.so.1 could not be loaded): \
             install an ICD such as pocl-opencl-icd (ci/setup does)"
        );
        assert!(no_platform(-9999)
            .to_string()
            .contains("UNKNOWN_ERROR (-9999)"));
    }

    #[test]
    fn device_types_map_from_their_bits() {
        assert_eq!(DeviceKind::from_bits(CL_DEVICE_TYPE_CPU), DeviceKind::Cpu);
        assert_eq!(
            DeviceKind::from_bits(CL_DEVICE_TYPE_GPU | 1),
            DeviceKind::Gpu
        );
        assert_eq!(DeviceKind::from_bits(0), DeviceKind::Other);
    }
}
