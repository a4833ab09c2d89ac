//! The measured profile store: what `clflow bench` measured on one device
//! (the paper's F̂_f, F̂_i, B̂, P̂), kept per device so later runs reuse it.
//!
//! One JSON file per device under `$CLFLOW_DATA_DIR/measured/`, else
//! `$XDG_DATA_HOME/clflow/measured/`, else `~/.local/share/clflow/measured/`.
//! A file is keyed by the device's identity (platform, device name, driver
//! version): a driver update makes a new identity, so stale peaks are never
//! reused silently. Files are written atomically (a temporary file in the same
//! directory, then a rename), so a crash never leaves half a profile.

use crate::error::{DevicesError, Result};
use crate::power::PowerSource;
use clflow_ocl::DeviceInfo;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Bumped when the file format changes incompatibly.
pub const MEASURED_SCHEMA: u32 = 1;

/// Overrides the data directory (the store lives in its `measured/`).
pub const DATA_DIR_ENV: &str = "CLFLOW_DATA_DIR";

/// What makes two measurements comparable: same platform, device and driver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceIdentity {
    pub platform: String,
    pub device: String,
    pub driver_version: String,
}

impl DeviceIdentity {
    pub fn of(info: &DeviceInfo) -> Self {
        DeviceIdentity {
            platform: info.platform_name.trim().to_string(),
            device: info.name.trim().to_string(),
            driver_version: info.driver_version.trim().to_string(),
        }
    }

    /// The file stem: a readable slug of the device name and a hash of the
    /// whole identity, e.g. `pthread-skylake-avx512-intel-r-xeon-r-processor-3f9a1c0d2b7e`.
    pub fn key(&self) -> String {
        let mut hasher = Sha256::new();
        for part in [&self.platform, &self.device, &self.driver_version] {
            hasher.update(part.as_bytes());
            hasher.update([0u8]);
        }
        let digest = hex::encode(hasher.finalize());
        format!("{}-{}", slug(&self.device), &digest[..12])
    }
}

fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let trimmed = out.trim_end_matches('-');
    let short: String = trimmed.chars().take(60).collect();
    if short.is_empty() {
        "device".into()
    } else {
        short
    }
}

/// Best, median and spread of repeated measurements of one quantity.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Statistic {
    /// The highest rate measured (rates: higher is better).
    pub best: f64,
    pub median: f64,
    /// (max − min) / median: 0.02 means the runs lay within 2 % of the median.
    pub spread: f64,
    pub samples: u32,
}

impl Statistic {
    /// Summarises repeated rate measurements (operations/s, bytes/s, watts),
    /// where the highest is the best. `None` for no finite sample.
    pub fn of_rates(samples: &[f64]) -> Option<Self> {
        let mut sorted: Vec<f64> = samples.iter().copied().filter(|v| v.is_finite()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        let (min, max) = (sorted[0], sorted[n - 1]);
        let spread = if median > 0.0 {
            (max - min) / median
        } else {
            0.0
        };
        Some(Statistic { best: max, median, spread, samples: n as u32 })
    }
}

/// The data types whose peak throughput is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ComputeType {
    Fp32,
    Fp64,
    Fp16,
    Int32,
}

/// One compute microbenchmark's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComputePeak {
    pub data_type: ComputeType,
    /// The operation measured: "mad", "add", "mul" (a mad counts 2 operations).
    pub kernel: String,
    pub vector_width: u32,
    pub ops_per_s: Statistic,
}

/// One bandwidth microbenchmark's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandwidthPeak {
    /// "copy", "scale", "add", "triad", "read", "write".
    pub kernel: String,
    pub vector_width: u32,
    pub bytes_per_s: Statistic,
}

/// A cache's bandwidth: reads that stay within a window the cache holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachePeak {
    /// The cache the window fits: "L1", "L2".
    pub level: String,
    pub window_bytes: u64,
    pub vector_width: u32,
    pub bytes_per_s: Statistic,
}

/// Power sampled while a group of benchmarks ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerPeak {
    /// What ran: "bandwidth" (the paper's P̂, §3.1) or "compute".
    pub during: String,
    pub source: PowerSource,
    /// The peak power of each repetition, summarised.
    pub peak_w: Statistic,
    pub mean_w: Option<f64>,
    /// Energy over the sampled interval, where the source counts it.
    pub energy_j: Option<f64>,
}

/// The compute kernel that times local-memory loads and stores: a
/// throughput of the quantitative roofline, not an arithmetic peak.
pub const LOCAL_LDST_KERNEL: &str = "ldst";

/// Whether a bandwidth benchmark (`update/float4`) updates its array in
/// place: what a CPU's write-backs of lines it read cost, for clflow's
/// model; no peak, as those write-backs cost a CPU less than its reads.
pub fn is_in_place(kernel: &str) -> bool {
    kernel.split('/').next() == Some(IN_PLACE_KERNEL)
}

/// The bandwidth benchmark that updates its array in place.
pub const IN_PLACE_KERNEL: &str = "update";

/// Whether a bandwidth benchmark (`gather/float`) reads scattered
/// addresses: the uncoalesced bandwidth, no peak.
pub fn is_gather(kernel: &str) -> bool {
    kernel.split('/').next() == Some(GATHER_KERNEL)
}

/// The bandwidth benchmark of scattered reads.
pub const GATHER_KERNEL: &str = "gather";

/// Mean power while one benchmark ran, beside the rates it ran at: one
/// point of the energy-roofline fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnergySample {
    pub benchmark: String,
    pub ops_per_s: f64,
    pub bytes_per_s: f64,
    pub mean_w: f64,
    pub source: PowerSource,
}

/// Everything measured on one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredProfile {
    pub schema: u32,
    pub identity: DeviceIdentity,
    /// When it was measured, UTC, RFC 3339.
    pub measured_at: String,
    pub clflow_version: String,
    pub compute: Vec<ComputePeak>,
    pub bandwidth: Vec<BandwidthPeak>,
    /// Each cache level's bandwidth (the hierarchical roofline's ceilings);
    /// apart from `bandwidth`, which is global memory's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_bandwidth: Vec<CachePeak>,
    pub power: Vec<PowerPeak>,
    /// Per-benchmark power, where a sensor served the device.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub energy_samples: Vec<EnergySample>,
    /// What a launch costs before any work, where measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<LaunchOverhead>,
    /// What a work-item pays beyond throughput, where measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub costs: Option<OpCosts>,
    #[serde(default)]
    pub notes: Vec<String>,
}

/// An empty kernel's time (one work-group), and what each further
/// work-group adds, from profiling events (medians).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LaunchOverhead {
    pub empty_s: f64,
    pub per_group_s: f64,
}

/// What work-items pay beyond throughput, as rates over all of them
/// (`kernels/bench/costs.cl`): operations of chains of dependent integer
/// operations (one chain per work-item), atomic increments of local
/// memory, each work-item's passes through a work-group barrier,
/// mispredicted branches (none where random outcomes cost no time),
/// scattered loads served by the last-level cache, trips of a loop whose
/// float sum is carried across a call the compiler keeps, and loads a page
/// apart in a work-item's own walk.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OpCosts {
    pub chain_ops_per_s: f64,
    pub local_atomics_per_s: f64,
    pub barriers_per_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mispredicts_per_s: Option<f64>,
    /// Scattered loads the last-level cache serves (a table of a quarter
    /// of it, read at hashed places).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_gathers_per_s: Option<f64>,
    /// The same loads from tables of other sizes, smallest first, the
    /// last that of `cache_gathers_per_s`: the caches above the last level
    /// and the TLB hold more of a smaller one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_gather_tables: Option<[GatherRate; 4]>,
    /// Trips of a loop that adds a `noinline` helper's result to a float
    /// sum, one call a trip.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried_calls_per_s: Option<f64>,
    /// Loads a page or more apart in each work-item's own walk, as a loop
    /// striding by the global size makes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_strides_per_s: Option<f64>,
    /// The same walk at other lengths, shortest first (the walk of
    /// `page_strides_per_s` the longest), loading, storing and copying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_walks: Option<[WalkRate; 4]>,
    /// The bytes of the table the walks stepped through; `None` in a
    /// profile that sized it by the driver's last-level cache (four of
    /// them), as clflow did before its table was fixed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walk_table_bytes: Option<u64>,
    /// The same walks through a table the last-level cache keeps between
    /// walks and launches (`small_walk_table_bytes`), at the same lengths.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub small_page_walks: Option<[WalkRate; 4]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub small_walk_table_bytes: Option<u64>,
    /// Local loads between a loop's barriers at addresses that do not count
    /// up along the work-items (a vectoriser gathers them lane by lane).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gathered_lanes_per_s: Option<f64>,
    /// Calls of float math builtins, per lane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtins: Option<BuiltinRates>,
    /// Accesses a line apart in walks that work-groups make over windows
    /// of their own, each work-item taking one element of every line, at
    /// four walk lengths, shortest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_walks: Option<[LineWalkRate; 4]>,
    /// Steps of a page walk, a loop striding by the global size, with a
    /// call the compiler keeps on each step: copying the page walks' table
    /// (a load, a call and a store a step), and storing alone (a call and
    /// a store).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_walks: Option<CallWalkRates>,
    /// Lines per second of column walks whose work-groups read 1, 4 and 16
    /// lines of each row's page at a time before moving on to the next
    /// row, the next work-group coming back for the next lines a whole
    /// walk later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column_walks: Option<[VisitRate; 3]>,
    /// Measured at a quick plan (shorter launches, smaller tables), as
    /// `analyze` does where a profile has no costs yet; `clflow bench`
    /// measures them in full.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quick: bool,
}

/// Lines per second read in visits of `lines` lines to their pages.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct VisitRate {
    pub lines: u32,
    pub per_s: f64,
}

/// Steps per second of page walks with a kept call a step (`OpCosts::call_walks`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CallWalkRates {
    pub copies_per_s: f64,
    pub stores_per_s: f64,
}

/// Accesses per second where each work-item walks `walk_bytes` of lines
/// (its loads' and stores' together), a line a step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LineWalkRate {
    pub walk_bytes: u64,
    pub per_s: f64,
}

/// Lanes per second of calls of float math builtins (each fed back
/// through one add or multiply-add): with the work-items run together, as
/// a work-group vectoriser runs them (which may widen the call or make it
/// lane by lane), and lane by lane.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BuiltinRates {
    pub sin: LaneRates,
    pub cos: LaneRates,
    pub exp: LaneRates,
    pub log: LaneRates,
    pub pow: LaneRates,
}

impl BuiltinRates {
    /// The builtins timed, by their OpenCL names, in the order of
    /// [`BuiltinRates::all`].
    pub const NAMES: [&'static str; 5] = ["sin", "cos", "exp", "log", "pow"];

    pub fn all(&self) -> [LaneRates; 5] {
        [self.sin, self.cos, self.exp, self.log, self.pow]
    }

    /// The rates in the order of [`BuiltinRates::NAMES`].
    pub fn from_all([sin, cos, exp, log, pow]: [LaneRates; 5]) -> BuiltinRates {
        BuiltinRates { sin, cos, exp, log, pow }
    }
}

/// Lanes per second of one builtin's calls.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LaneRates {
    pub vector_per_s: f64,
    pub scalar_per_s: f64,
    /// Steps of a page walk copying the page walks' table, a loop striding
    /// by the global size, with a call on each step's value, lane by lane:
    /// a load, a call and a store a step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walk_per_s: Option<f64>,
}

/// Scattered loads per second from a table of `table_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GatherRate {
    pub table_bytes: u64,
    pub per_s: f64,
}

/// Accesses per second of a walk of `steps` page strides a work-item:
/// loading a table, storing to it alone, and copying it to another (a
/// load and a store a step, two accesses).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WalkRate {
    pub steps: u32,
    pub loads_per_s: f64,
    pub stores_per_s: f64,
    pub copies_per_s: f64,
}

impl MeasuredProfile {
    /// An empty profile stamped with the current time and this clflow's version.
    pub fn new(identity: DeviceIdentity, clflow_version: &str) -> Self {
        MeasuredProfile {
            schema: MEASURED_SCHEMA,
            identity,
            measured_at: rfc3339_utc(SystemTime::now()),
            clflow_version: clflow_version.to_string(),
            compute: Vec::new(),
            bandwidth: Vec::new(),
            cache_bandwidth: Vec::new(),
            power: Vec::new(),
            energy_samples: Vec::new(),
            launch: None,
            costs: None,
            notes: Vec::new(),
        }
    }

    /// F̂ of a type: the compute benchmark of the best throughput, any
    /// arithmetic kernel at any width (never the local load/store kernel).
    /// The one rule for a device's compute peak: the roofline of `analyze`
    /// and the bound of `predict` both read it.
    pub fn compute_peak(&self, data_type: ComputeType) -> Option<&ComputePeak> {
        self.compute
            .iter()
            .filter(|c| c.data_type == data_type && c.kernel != LOCAL_LDST_KERNEL)
            .filter(|c| c.ops_per_s.best.is_finite())
            .max_by(|a, b| a.ops_per_s.best.total_cmp(&b.ops_per_s.best))
    }

    /// B̂: the bandwidth benchmark of the best throughput among the
    /// neighbouring (coalesced) streams: neither the gather, whose accesses
    /// are scattered, nor the in-place update ([`is_in_place`]).
    pub fn bandwidth_peak(&self) -> Option<&BandwidthPeak> {
        self.bandwidth
            .iter()
            .filter(|b| !is_in_place(&b.kernel) && !is_gather(&b.kernel))
            .filter(|b| b.bytes_per_s.best.is_finite())
            .max_by(|a, b| a.bytes_per_s.best.total_cmp(&b.bytes_per_s.best))
    }

    /// F̂ of a type, operations per second ([`Self::compute_peak`]).
    pub fn peak_ops_per_s(&self, data_type: ComputeType) -> Option<f64> {
        self.compute_peak(data_type).map(|c| c.ops_per_s.best)
    }

    /// B̂, bytes per second ([`Self::bandwidth_peak`]).
    pub fn peak_bytes_per_s(&self) -> Option<f64> {
        self.bandwidth_peak().map(|b| b.bytes_per_s.best)
    }

    /// Each cache level's best bandwidth, bytes per second, nearest the
    /// core first: (level, window bytes, bandwidth).
    pub fn cache_peaks(&self) -> Vec<(String, u64, f64)> {
        let mut levels: Vec<(String, u64, f64)> = Vec::new();
        for peak in &self.cache_bandwidth {
            let best = peak.bytes_per_s.best;
            match levels.iter_mut().find(|(level, _, _)| *level == peak.level) {
                Some(entry) if entry.2 < best => entry.2 = best,
                Some(_) => {}
                None => levels.push((peak.level.clone(), peak.window_bytes, best)),
            }
        }
        levels.sort_by_key(|(_, window, _)| *window);
        levels
    }

    /// P̂: the peak power during the bandwidth benchmark (paper §3.1), else
    /// the highest peak measured, with its source.
    pub fn peak_power(&self) -> Option<(f64, PowerSource)> {
        let pick = |peaks: Vec<&PowerPeak>| {
            peaks
                .into_iter()
                .max_by(|a, b| a.peak_w.best.total_cmp(&b.peak_w.best))
                .map(|p| (p.peak_w.best, p.source))
        };
        pick(
            self.power
                .iter()
                .filter(|p| p.during == "bandwidth")
                .collect(),
        )
        .or_else(|| pick(self.power.iter().collect()))
    }
}

/// Where measured profiles are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeasuredStore {
    dir: PathBuf,
}

impl MeasuredStore {
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        MeasuredStore { dir: dir.into() }
    }

    /// The user's store: `$CLFLOW_DATA_DIR/measured`, else
    /// `$XDG_DATA_HOME/clflow/measured`, else `$HOME/.local/share/clflow/measured`;
    /// `None` when none of these is set.
    pub fn from_env() -> Option<Self> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let data = var(DATA_DIR_ENV)
            .map(PathBuf::from)
            .or_else(|| var("XDG_DATA_HOME").map(|d| PathBuf::from(d).join("clflow")))
            .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".local/share/clflow")))?;
        Some(MeasuredStore::at(data.join("measured")))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path_for(&self, identity: &DeviceIdentity) -> PathBuf {
        self.dir.join(format!("{}.json", identity.key()))
    }

    /// The stored profile of a device, `None` if it was never measured.
    pub fn load(&self, identity: &DeviceIdentity) -> Result<Option<MeasuredProfile>> {
        let path = self.path_for(identity);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(DevicesError::store_io(path.display(), &err)),
        };
        let corrupt =
            |message: String| DevicesError::Measured { path: path.display().to_string(), message };
        // Check the schema before the shape, so an old file says so.
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| corrupt(format!("not valid JSON: {e}")))?;
        let schema = value.get("schema").and_then(|s| s.as_u64());
        if schema != Some(u64::from(MEASURED_SCHEMA)) {
            return Err(corrupt(format!(
                "has schema {}, this clflow reads schema {MEASURED_SCHEMA}",
                schema.map_or("(none)".to_string(), |s| s.to_string())
            )));
        }
        let profile: MeasuredProfile =
            serde_json::from_value(value).map_err(|e| corrupt(e.to_string()))?;
        if &profile.identity != identity {
            return Err(corrupt(format!(
                "belongs to '{}' (driver {}), not to '{}' (driver {})",
                profile.identity.device,
                profile.identity.driver_version,
                identity.device,
                identity.driver_version
            )));
        }
        Ok(Some(profile))
    }

    /// Writes a profile atomically, replacing any earlier one; returns its path.
    pub fn save(&self, profile: &MeasuredProfile) -> Result<PathBuf> {
        let path = self.path_for(&profile.identity);
        let io = |err: std::io::Error| DevicesError::store_io(self.dir.display(), &err);
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        let json = serde_json::to_string_pretty(profile).map_err(|e| DevicesError::Measured {
            path: path.display().to_string(),
            message: format!("cannot encode: {e}"),
        })?;
        let mut temp = tempfile::NamedTempFile::new_in(&self.dir).map_err(io)?;
        temp.write_all(json.as_bytes()).map_err(io)?;
        temp.write_all(b"\n").map_err(io)?;
        temp.as_file().sync_all().map_err(io)?;
        temp.persist(&path)
            .map_err(|e| DevicesError::store_io(path.display(), &e.error))?;
        Ok(path)
    }
}

/// `2024-05-01T12:34:56Z` for a point in time (UTC, whole seconds).
pub fn rfc3339_utc(time: SystemTime) -> String {
    let secs = time
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Proleptic Gregorian date of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn statistics_of_rates() {
        let s = Statistic::of_rates(&[10.0, 12.0, 11.0, 9.0]).unwrap();
        assert_eq!(s.best, 12.0);
        assert_eq!(s.median, 10.5);
        assert!((s.spread - 3.0 / 10.5).abs() < 1e-12);
        assert_eq!(s.samples, 4);
        assert_eq!(Statistic::of_rates(&[f64::NAN]), None);
    }

    #[test]
    fn dates_are_utc_rfc3339() {
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_709_210_096); // a leap day
        assert_eq!(rfc3339_utc(t), "2024-02-29T12:34:56Z");
    }

    #[test]
    fn keys_are_readable_and_tell_drivers_apart() {
        let id = DeviceIdentity {
            platform: "Portable Computing Language".into(),
            device: "pthread-skylake-avx512-Intel(R) Xeon(R) Processor".into(),
            driver_version: "3.1+debian".into(),
        };
        let key = id.key();
        assert!(key.starts_with("pthread-skylake-avx512-intel-r-xeon-r-processor-"));
        assert_eq!(
            key.len(),
            "pthread-skylake-avx512-intel-r-xeon-r-processor-".len() + 12
        );
        let newer = DeviceIdentity { driver_version: "4.0".into(), ..id.clone() };
        assert_ne!(newer.key(), key);
    }
}
