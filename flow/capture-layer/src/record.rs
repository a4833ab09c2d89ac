//! What the layer writes for each captured launch (`launch-NNNN.json` in
//! the capture's raw directory), and how `clflow capture` reads it back.
//! Buffers travel as raw files beside it.

use serde::{Deserialize, Serialize};

/// The environment variable naming the directory the layer writes to.
pub const DIR_ENV: &str = "CLFLOW_CAPTURE_DIR";
/// Kernel-name globs to capture, comma-separated (`*` and `?`); all when unset.
pub const KERNELS_ENV: &str = "CLFLOW_CAPTURE_KERNELS";
/// Which launches of each kernel to capture ([`LaunchSelection`]); all
/// when unset.
pub const LAUNCHES_ENV: &str = "CLFLOW_CAPTURE_LAUNCHES";
/// The most bytes of buffer contents a capture writes; unbounded when unset.
pub const MAX_BYTES_ENV: &str = "CLFLOW_CAPTURE_MAX_BYTES";
/// Set (to anything): programs made from device binaries are refused with
/// `CL_INVALID_BINARY`, so that an application with a kernel cache builds
/// them from source, which clflow can analyse.
pub const FROM_SOURCE_ENV: &str = "CLFLOW_CAPTURE_FROM_SOURCE";
/// The file in the raw directory the layer adds a line to for each program
/// from a device binary it refused.
pub const REFUSED_BINARIES_FILE: &str = "refused-binaries.txt";
/// The suffix of the note the layer leaves for a launch it did not record
/// (`launch-NNNNNN.skipped`), whose text says why.
pub const SKIPPED_SUFFIX: &str = "skipped";

/// One program the application built.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProgramRecord {
    pub id: u32,
    /// `program-N.cl` (all source strings, in order), `program-N.spv` (the
    /// SPIR-V module of a program made from IL), or `None` for a program
    /// made from a device binary, which clflow cannot analyse.
    pub source_file: Option<String>,
    /// Why the program cannot be analysed, where it cannot.
    pub not_analysable: Option<String>,
    pub build_options: String,
}

/// One kernel argument as the application set it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ArgRecord {
    /// A buffer: its contents before the launch in `file`, after it in
    /// `output_file`; its creation flags say how the kernel may use it.
    Buffer {
        bytes: u64,
        file: String,
        output_file: Option<String>,
        read_only: bool,
        write_only: bool,
        /// Neither the host nor an earlier launch gave it data: its
        /// contents are undefined to the kernel.
        #[serde(default)]
        never_written: bool,
    },
    /// The very buffer an earlier argument `arg` was given (in-place
    /// kernels take one buffer as input and output).
    SameBuffer { arg: usize },
    /// An image: its OpenCL object type (`CL_MEM_OBJECT_IMAGE2D` ...), its
    /// format as OpenCL numbers it, its shape (width, then height or
    /// layers, then depth or layers), and its texels, tightly packed,
    /// before the launch in `file` and after it in `output_file`.
    Image {
        mem_type: u32,
        order: u32,
        channel_type: u32,
        shape: Vec<u64>,
        bytes: u64,
        file: String,
        output_file: Option<String>,
        read_only: bool,
    },
    /// A sampler, as `clCreateSampler` took it (`CL_ADDRESS_*`, `CL_FILTER_*`).
    Sampler {
        normalized: bool,
        addressing: u32,
        filter: u32,
    },
    /// Bytes passed by value (a scalar, a vector, a struct).
    Value { bytes: Vec<u8> },
    /// A NULL value of this size: a `__local` block of `size` bytes, or a
    /// NULL buffer, as the kernel's signature tells.
    NullValue { size: u64 },
    /// Something clflow does not capture (an image, a sampler, SVM), by name.
    Unsupported { what: String },
    /// Never set by the application.
    Unset,
}

/// One captured launch.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LaunchRecord {
    /// The launch's number among all launches the application made (from 0).
    pub sequence: u64,
    pub kernel: String,
    /// The launch's number among this kernel's launches (from 0).
    pub index: u64,
    pub program: u32,
    pub global_offset: Vec<u64>,
    pub global_size: Vec<u64>,
    /// `None` where the application left it to the runtime.
    pub local_size: Option<Vec<u64>>,
    pub args: Vec<ArgRecord>,
    /// The kernel's device time from profiling events, where the queue
    /// profiles.
    pub device_ns: Option<u64>,
    /// The device the launch's queue runs on, where the runtime says.
    #[serde(default)]
    pub device: Option<DeviceRecord>,
}

/// A device as its runtime names it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct DeviceRecord {
    pub name: String,
    pub platform: String,
    /// `CL_DRIVER_VERSION`.
    pub driver: String,
    /// `CL_DEVICE_VERSION` (the OpenCL version it supports).
    pub version: String,
}
