//! PerDome (Tang, Hu, Barrett, SpringSim-HPC 2015): upper bounds on the
//! performance of an application whose work is split between two devices,
//! built on the roofline model. For an application of W operations and Q
//! bytes of traffic (I = W/Q), on devices C and G with peaks F̂ and B̂, it
//! bounds:
//!
//! - C only and G only (eq. 2 on one device; eq. 20 at r = 1 and r = 0);
//! - the perfect data partition: the share of the data sets each device
//!   takes so that both finish together, and its bound P_C + P_G (eq. 20);
//! - every code partition of a suite of kernels: which kernel runs where,
//!   its (I_C, I_G) (eqs. 6–7) and its bound (eqs. 4–5, equal to eq. 19);
//! - the PerDome plot: eq. 19 over a grid of (I_C, I_G) ([`surface`]).
//!
//! clflow adds what the paper leaves out: the host link. A device that does
//! not hold the data (a PCIe card) first receives its part of it: D/L is
//! added to its time ([`Transfers::Counted`]); [`Transfers::Ignored`] gives
//! the paper's bounds. The functions are pure: counts and ceilings in,
//! bounds out. [`paper`] holds the paper's Table 1 and 2, and its tests the
//! numbers the paper reports.

mod error;
pub mod intensity;
mod model;
pub mod paper;
mod partition;
pub mod surface;

pub use error::SplitError;
pub use model::{Bound, Processor, System, Transfers, Work};
pub use partition::{
    analyze, code_partitions, perfect_data_partition, Analysis, Kernel, Model, Partition,
    MAX_KERNELS,
};
pub use surface::{surface, Peak, Surface};
