//! What can go wrong reading a SPIR-V module.

use clflow_core::FailureKind;

/// A SPIR-V module that cannot be loaded or understood. Byte offsets count
/// from the start of the module, so `spirv-dis --offsets` finds the place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpirvError {
    #[error("not a SPIR-V module: {bytes} bytes is shorter than the 20-byte SPIR-V header")]
    TooShort { bytes: usize },

    #[error("not a SPIR-V module: its size ({bytes} bytes) is not a whole number of 4-byte words")]
    NotWordAligned { bytes: usize },

    #[error("not a SPIR-V module: the first word is {found:#010x}, not the SPIR-V magic number 0x07230203")]
    WrongMagic { found: u32 },

    #[error("big-endian SPIR-V is not supported (the magic number is byte-swapped); convert the module to little-endian")]
    BigEndian,

    #[error("truncated SPIR-V module: instruction #{index} at byte {offset} declares {declared} words but only {available} remain")]
    Truncated {
        index: usize,
        offset: usize,
        declared: usize,
        available: usize,
    },

    #[error(
        "malformed SPIR-V module: instruction #{index} at byte {offset} has a word count of zero"
    )]
    ZeroWordCount { index: usize, offset: usize },

    #[error("SPIR-V module uses opcode {opcode} (instruction #{index} at byte {offset}), which clflow does not know")]
    UnknownOpcode {
        opcode: u16,
        index: usize,
        offset: usize,
    },

    #[error("malformed SPIR-V module: {detail}")]
    Malformed { detail: String },

    #[error("kernel `{kernel}`: {detail}")]
    Reflection { kernel: String, detail: String },
}

impl SpirvError {
    pub(crate) fn reflection(kernel: &str, detail: impl Into<String>) -> Self {
        SpirvError::Reflection { kernel: kernel.to_string(), detail: detail.into() }
    }
}
impl clflow_core::Diagnostic for SpirvError {
    fn kind(&self) -> FailureKind {
        match self {
            SpirvError::Reflection { .. } => FailureKind::Analysis,
            _ => FailureKind::Input,
        }
    }
}
