//! The figures of a clflow analysis: what each kernel does (W, Q), what each
//! device can do (F̂, B̂, P̂ and their datasheet values), what each run
//! measured (T, P), and everything the paper derives from them: I, F, R, E,
//! the attainable performance and performance per watt (eqs. 1–4, 7, 8), the
//! bound and the ridge point.
//!
//! [`ResultSet`] is the `results.json` document (`"schema": 1`); it merges
//! with results from other machines ([`read_results`]) and with CSV files of
//! measurements taken elsewhere ([`read_measurements_csv`]).

mod derive;
mod error;
mod figure;
mod finding;
mod import;
mod model;
pub mod paper;

pub use derive::{attainable, evaluate, ridge, Bound, LevelPoint, Metrics};
pub use error::MetricsError;
pub use figure::{format_number, Figure, Provenance, Unit};
pub use finding::finding;
pub use import::{read_input, read_measurements_csv, read_results, results_document, CSV_COLUMNS};
pub use model::{
    CacheCeiling, Ceilings, DeviceProfile, Hotspots, KernelCounts, LaunchInfo, LevelTraffic,
    OpKind, ResultSet, Run, RunDevice, RunInfo, SCHEMA,
};
