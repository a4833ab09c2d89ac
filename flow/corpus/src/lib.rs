//! The kernel corpus's references: for each case in `kernels/`, a Rust
//! implementation that computes the output buffers a correct run of the
//! kernel leaves, from the same materialised launch every executor gets,
//! and a checker that compares an executor's outputs with them.
//!
//! ```text
//! check_outputs(Case::Lookup3, &launch, &produced)?;
//! ```
//!
//! Integer outputs must match bit for bit. Float outputs must lie within a
//! bound derived per kernel from the OpenCL C ULP limits of the operations
//! involved and from the kernel's summation order (see each reference).
//!
//! Also here: lookup3's `hashlittle` and the deterministic generator of the
//! lookup3 case's keys (`gen-lookup3-keys`).

pub mod args;
mod case;
mod check;
mod error;
mod expected;
pub mod keys;
pub mod lookup3;
mod reference;

pub use case::Case;
pub use check::check_outputs;
pub use error::{CheckError, Mismatch};
pub use expected::{Expected, ExpectedOutput};
pub use reference::expected_outputs;
