//! The capture layer: an OpenCL loader layer (`OPENCL_LAYERS`, the
//! `cl_loader_layers` mechanism) that `clflow capture` puts under an
//! unmodified application. It passes every call through to the runtime and,
//! for each kernel launch the selection takes, writes what clflow needs to
//! analyse it again: the program's sources and build options, the NDRange,
//! every argument (scalar bytes, buffer contents at the moment of the
//! enqueue, `__local` sizes), and the buffers' contents after the launch.
//!
//! The layer writes a raw record ([`record`]); `clflow capture` turns it
//! into manifests once the application has ended, when it can compile the
//! programs and read the kernels' signatures.

pub mod record;
pub mod select;

mod layer;
mod link;
mod programs;
mod state;
mod writes;
