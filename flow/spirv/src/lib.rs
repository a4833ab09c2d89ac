//! The SPIR-V front end of clflow.
//!
//! Its jobs, one module each:
//! - [`load`]: bytes → [`Module`], with a typed error (never a panic) for
//!   anything that is not a well-formed little-endian SPIR-V module;
//! - [`kernels`]: every `Kernel` entry point → [`KernelSignature`], with
//!   exact OpenCL C types where the module keeps them, and the layout of
//!   every struct a parameter points to;
//! - [`summary`]: the facts a user wants to see about a module;
//! - [`order_blocks`]: every block after its dominator, as SPIR-V requires;
//! - [`types`]: the module's type declarations and their memory layout,
//!   shared with the interpreter.
//!
//! ```no_run
//! let bytes = std::fs::read("vadd.spv").unwrap();
//! let module = clflow_spirv::load(&bytes).unwrap();
//! for kernel in clflow_spirv::kernels(&module).unwrap() {
//!     println!("{kernel}");
//! }
//! ```

mod arg_types;
mod calls;
mod debug_info;
mod error;
mod load;
mod merges;
mod order;
mod phis;
mod reflect;
mod samplers;
mod selects;
mod structs;
mod summary;
pub mod types;

#[cfg(test)]
mod test_modules;

pub use calls::undefined_calls;
pub use clflow_core::KernelSignature;
pub use debug_info::{is_debug_set, strip_debug_info};
pub use error::SpirvError;
pub use load::{load, SPIRV_MAGIC};
pub use merges::strip_merges;
pub use order::order_blocks;
pub use phis::dedupe_phi_parents;
pub use reflect::{kernels, reflect_kernels, ReflectedKernel};
pub use rspirv::dr::Module;
pub use samplers::merge_sampler_types;
pub use selects::splat_select_conditions;
pub use summary::{summary, ModuleSummary};

/// The rspirv version this crate loads with, so that dependents name the
/// very same `Module` type.
pub use rspirv;
