//! clflow's OpenCL runtime layer: finds the platforms and devices of this
//! machine, runs a `clflow_core::Launch` on one of them with profiling, and
//! runs launches under Oclgrind to read its instruction counts.
//!
//! The OpenCL library is loaded at run time, so clflow builds and starts on
//! machines with no OpenCL installed; such machines get
//! [`OclError::NoPlatform`] rather than a crash.

pub mod child;
mod discovery;
mod error;
mod execute;
pub mod oclgrind;
mod program;
mod session;

pub use discovery::{
    choose_device, discover, open_devices, select_device, DeviceInfo, DeviceKind, DeviceSelector,
    OclDevice,
};
pub use error::{OclError, Result, INSTALL_HINT};
pub use execute::{run_launch, time_repeated, LaunchResult, PreparedLaunch, RepeatedTimings};
pub use oclgrind::{run_under_oclgrind, InstructionHistogram, OclgrindConfig, OclgrindRun};
pub use program::ProgramSource;
pub use session::{Session, SharedBuffer};
