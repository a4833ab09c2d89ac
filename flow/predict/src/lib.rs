//! Predicted kernel time and energy from clflow's exact counts.
//!
//! Each model is a pure function from documented inputs to a prediction:
//!
//! - [`roofline`]: the bound max(W / F̂, Q / B̂);
//! - [`boat_hull`]: the boat hull model's compute and memory equations,
//!   floors and host transfer, class parameters from the interpretation;
//! - [`quantitative`]: the quantitative roofline's instruction densities,
//!   mix and instruction efficiencies, adjusted peak and predicted time;
//! - [`energy`]: the energy roofline, its coefficients fitted from power
//!   sampled during the microbenchmarks;
//! - [`clflow`]: clflow's own model, from what only the interpreter sees
//!   (how work-items fill vectors) and the microbenchmarks (scalar and
//!   vector rates, gather bandwidth, launch cost), its assumptions listed;
//! - [`ape`]: the absolute percentage error against a measurement.
//!
//! The models read a kernel as [`KernelFacts`] (built from the
//! interpreter's `Counts` and the launch) and a device as [`DeviceRates`];
//! [`predict_all`] runs every model and sets each beside the measurement.
//! [`Predictions`] read back from the JSON they are written as, so that a
//! report redraws from `predictions.json`; a non-finite number, which JSON
//! writes as `null`, reads back as the `json` module says.

pub mod all;
pub mod ape;
pub mod boat_hull;
pub mod clflow;
pub mod device;
pub mod energy;
mod json;
pub mod kernel;
pub mod quantitative;
pub mod roofline;

pub use all::{predict_all, Measured, Model, Outcome, Predictions, Row};
pub use device::{
    ClassRates, DeviceRates, IssueRates, LaunchCost, OpCostRates, Rate, Simd, SimdKind, WalkRates,
};
pub use energy::{fit, EnergyCoefficients, FitError, PowerSample};
pub use kernel::{Coalescing, HostTransfer, InstructionMix, KernelFacts, PerClass, Traffic};
pub use roofline::Bound;
