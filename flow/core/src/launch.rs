//! A kernel launch with its inputs materialised: what the manifest stage
//! hands to the interpreter and to every device runner alike, so that both
//! see byte-for-byte the same buffers.

use crate::{ElementType, ImageDesc, SamplerDesc};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The NDRange: 1 to 3 dimensions. Unused dimensions hold 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NdRange {
    pub dims: u8,
    pub global: [u64; 3],
    /// `None` lets the runtime choose (the interpreter then uses the whole
    /// range in one dimension up to a documented default).
    pub local: Option<[u64; 3]>,
    pub offset: [u64; 3],
}

impl NdRange {
    pub fn work_items(&self) -> u64 {
        self.global.iter().product()
    }
}

/// How the kernel may use a buffer, as the manifest declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Access {
    #[serde(rename = "ro")]
    ReadOnly,
    #[serde(rename = "wo")]
    WriteOnly,
    #[serde(rename = "rw")]
    ReadWrite,
}

impl Access {
    /// Whether the kernel's result lives in this buffer (what `--dump` keeps
    /// and what device results are compared on).
    pub fn is_output(self) -> bool {
        !matches!(self, Access::ReadOnly)
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::ReadOnly => "ro",
            Access::WriteOnly => "wo",
            Access::ReadWrite => "rw",
        })
    }
}

/// One kernel argument's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ArgValue {
    /// A `__global` or `__constant` buffer, little-endian bytes.
    Buffer {
        ty: ElementType,
        access: Access,
        bytes: Vec<u8>,
    },
    /// A NULL pointer passed for a pointer parameter.
    NullPointer,
    /// A value passed by copy, little-endian bytes of the parameter's size.
    Scalar { bytes: Vec<u8> },
    /// A `__local` pointer parameter: only its size is given.
    Local { bytes: u64 },
    /// The very buffer of the earlier argument `arg` (an in-place kernel
    /// given one buffer as input and output): writes through either
    /// argument are seen through the other.
    SameBuffer { arg: usize },
    /// An image: its texels, row-major and tightly packed
    /// (`image.size_bytes()` bytes).
    Image {
        image: ImageDesc,
        access: Access,
        bytes: Vec<u8>,
    },
    /// A `sampler_t` argument.
    Sampler(SamplerDesc),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchArg {
    /// The manifest's name for the argument, else the kernel's parameter name.
    pub name: Option<String>,
    pub value: ArgValue,
}

impl LaunchArg {
    /// How messages refer to this argument: `arg 2 (keys)`.
    pub fn describe(&self, index: usize) -> String {
        match &self.name {
            Some(name) => format!("arg {index} ({name})"),
            None => format!("arg {index}"),
        }
    }
}

/// Everything needed to run one kernel once, on any executor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Launch {
    pub kernel: String,
    pub range: NdRange,
    pub args: Vec<LaunchArg>,
}
