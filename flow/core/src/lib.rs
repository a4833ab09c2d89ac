//! The vocabulary every clflow stage shares.
//!
//! The compile stage reflects kernel signatures out of SPIR-V, the manifest
//! stage checks launches against them, the interpreter and the device runner
//! both lay out buffers by element type. They meet here so that none of them
//! depends on another just to name an `int4`.

pub mod half;
mod image;
mod launch;
pub mod numbers;
mod signature;
mod structs;
mod types;

pub use image::{
    AddressMode, ChannelClass, ChannelOrder, ChannelType, FilterMode, ImageDesc, ImageDim,
    ImageFormat, SamplerDesc,
};
pub use launch::{Access, ArgValue, Launch, LaunchArg, NdRange};
pub use signature::{access_qualifier, AddressSpace, KernelParam, KernelSignature, ParamKind};
pub use structs::{StructMember, StructType};
pub use types::{ElementType, ParseTypeError, ScalarType};

/// How a failure reaches the user: as the process exit status.
///
/// 2 means the user can fix their input (a bad flag, manifest, kernel or
/// file); 1 means the input was fine but the analysis could not finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    Input,
    Analysis,
}

/// An error that knows what kind of failure it is and, where it can, what
/// the user should do about it: every stage crate's error type implements
/// it, and the pipeline turns any of them into its one error type.
pub trait Diagnostic: std::error::Error {
    fn kind(&self) -> FailureKind;

    fn hint(&self) -> Option<String> {
        None
    }
}

impl FailureKind {
    pub fn exit_code(self) -> u8 {
        match self {
            FailureKind::Input => 2,
            FailureKind::Analysis => 1,
        }
    }
}
