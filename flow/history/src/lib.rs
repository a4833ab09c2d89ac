//! clflow's history: every `run`, `analyze` and `check` appends what it
//! measured to an embedded SQLite store, so the trend of a kernel's work,
//! traffic, time and energy can be followed across commits, compilers and
//! drivers.
//!
//! ```no_run
//! # fn demo() -> clflow_history::Result<()> {
//! use clflow_history::{Entry, Metric, Store};
//! let mut store = Store::open(&clflow_history::store_path(None)?)?;
//! let mut entry = Entry::new("check", "vadd");
//! entry.metrics.push(Metric::new("W.total", 4096.0, Some("ops")));
//! store.record(&[entry])?;
//! # Ok(()) }
//! ```
//!
//! One entry is one kernel counted by the interpreter (`device` absent) or
//! measured on one device. The store is safe against concurrent writers and
//! killed processes (WAL, one transaction per append); its schema version is
//! `PRAGMA user_version`: older stores are migrated, newer ones refused.

mod error;
mod location;
pub mod plot;
mod schema;
mod store;

pub use error::{HistoryError, Result};
pub use location::{git_commit, now, store_path, DATA_DIR_ENV, FILE_NAME, STORE_ENV};
pub use schema::{V1 as SCHEMA_V1, VERSION as SCHEMA_VERSION};
pub use store::{value_text, Batch, Entry, KernelSummary, Metric, Point, Store, TrendQuery};

/// Appends `entries` to the store at `path` (see [`store_path`]) in one
/// transaction: the one call `run`, `analyze` and `check` need.
pub fn record(path: &std::path::Path, entries: &[Entry]) -> Result<Vec<i64>> {
    Store::open(path)?.record(entries)
}
