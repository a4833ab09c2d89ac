//! clflow's main job as a library: every step a command runs, from a
//! manifest to a written report, without a terminal. The `clflow` binary
//! only parses flags, hands them here and prints what comes back.
//!
//! - [`input`]: load a manifest, compile its kernel, check the launch;
//! - [`count`]: translate the kernel to bytecode, interpret it, count W and Q;
//! - [`traffic`]: the cache each device has, and the kernel's Q through it;
//! - [`order`]: the order a device runs work-items in, where it changes Q;
//! - [`detect`]: kernel checkers watching the run (`--detect`);
//! - [`outputs`]: compare a device's output buffers with the interpreter's;
//! - [`device`]: build on a device, time repeated launches, sample power;
//! - [`devices`]: what `clflow devices` joins for each device;
//! - [`bench`] and [`profile`]: a device's ceilings, measured (benchmarking
//!   it if need be) and from its datasheet;
//! - [`split`]: the PerDome bounds of kernels split between two devices;
//! - [`history`]: the entries every command appends to the history store;
//! - [`check`]: a regression suite's counts and timings, measured;
//! - [`analyze`]: the main job, all of the above for kernels × devices;
//! - [`capture`]: an unmodified application's launches, recorded as manifests.
//!
//! A [`Session`] finds once what every step needs from the machine (the
//! profiles, the OpenCL devices, the compiler tools); every step reports
//! through an [`Observer`] (notes, detail, the progress of long phases) and
//! fails with one [`Error`] (a kind and a hint).

pub mod analyze;
pub mod bench;
pub mod capture;
pub mod check;
pub mod count;
pub mod detect;
pub mod device;
pub mod devices;
mod error;
pub mod history;
pub mod input;
mod observe;
pub mod order;
pub mod outputs;
pub mod profile;
mod session;
pub mod split;
pub mod traffic;

pub use error::{Error, Result};
pub use observe::{Counts, Level, Observer, Phase, Recorder, Silent};
pub use session::{Session, Tools};
