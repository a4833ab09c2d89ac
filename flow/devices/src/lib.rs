//! clflow's device knowledge for the paper's stage 1 (§4.1): datasheet
//! profiles and the OpenCL devices they match, the store of measured peaks,
//! and the power sensors that serve each device.
//!
//! - [`ProfileCatalog`]: the profiles of `devices/` (built in) plus a user
//!   directory; [`ProfileCatalog::match_name`] finds a device's profile.
//! - [`MeasuredStore`] / [`MeasuredProfile`]: what `clflow bench` measured,
//!   one JSON file per device identity.
//! - [`power`]: the [`power::PowerSensor`] trait, its NVML, RAPL, hwmon,
//!   CSV-import and spec implementations, and [`power::choose_sensor`].

pub mod caches;
mod catalog;
mod error;
mod measured;
pub mod power;
mod profile;

pub use catalog::{ProfileCatalog, ProfileMatch, PROFILES_DIR_ENV};
pub use error::{DevicesError, Result};
pub use measured::{
    is_gather, is_in_place, rfc3339_utc, BandwidthPeak, BuiltinRates, CachePeak, CallWalkRates,
    ComputePeak, ComputeType, DeviceIdentity, EnergySample, GatherRate, LaneRates, LaunchOverhead,
    LineWalkRate, MeasuredProfile, MeasuredStore, OpCosts, PowerPeak, Statistic, VisitRate,
    WalkRate, DATA_DIR_ENV, GATHER_KERNEL, IN_PLACE_KERNEL, LOCAL_LDST_KERNEL, MEASURED_SCHEMA,
};
pub use profile::{
    DatasheetProfile, DeviceClass, Figure, Figures, Metric, ProfileOrigin, Quantity, Unit,
};
