//! The vocabulary every clflow stage shares.
//!
//! The compile stage reflects kernel signatures out of SPIR-V, the manifest
//! stage checks launches against them, the interpreter and the device runner
//! both lay out buffers by element type. They meet here so that none of them
//! depends on another just to name an `int4`.

mod launch;
mod signature;
mod types;

pub use launch::{Access, ArgValue, Launch, LaunchArg, NdRange};
pub use signature::{AddressSpace, KernelParam, KernelSignature, ParamKind};
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

impl FailureKind {
    pub fn exit_code(self) -> u8 {
        match self {
            FailureKind::Input => 2,
            FailureKind::Analysis => 1,
        }
    }
}
