//! The stage sequences several commands share, so that `count`, `check`,
//! `run` and `analyze` interpret, time and record a kernel the same way.
//!
//! - [`count`]: translate the kernel to bytecode, interpret it, count W and Q;
//! - [`traffic`]: the cache each device has, and the kernel's Q through it;
//! - [`outputs`]: compare a device's output buffers with the interpreter's;
//! - [`device`]: build on a device, time repeated launches, sample power;
//! - [`profile`]: a device's ceilings, measured (benchmarking it if need be)
//!   and from its datasheet;
//! - [`split`]: the PerDome bounds of kernels split between two devices,
//!   for `split` and `analyze`;
//! - [`history`]: the entries every command appends to the history store;
//! - [`progress`]: progress bars that stay out of pipes and `-q`.

pub mod count;
pub mod device;
pub mod history;
pub mod outputs;
pub mod profile;
pub mod progress;
pub mod split;
pub mod traffic;
