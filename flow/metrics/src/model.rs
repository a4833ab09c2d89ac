//! The inputs of an analysis, as `results.json` stores them: what each kernel
//! does (W, Q), what each device can do (its ceilings), and what each run of a
//! kernel on a device measured (T, P). Everything else is derived from these
//! (see `derive`), so merged inputs from several machines yield one consistent
//! set of metrics.

use crate::figure::Figure;
use serde::{Deserialize, Serialize};

/// The `results.json` format version this clflow reads and writes.
pub const SCHEMA: u32 = 1;

/// Which peak a kernel's operations meet: the paper's F_i or F_f.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    Int,
    Float,
}

impl OpKind {
    /// The kind most of the counted work is: integer unless floating-point
    /// operations outnumber integer ones.
    pub fn dominant(int_ops: u64, float_ops: u64) -> OpKind {
        if float_ops > int_ops {
            OpKind::Float
        } else {
            OpKind::Int
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            OpKind::Int => "int",
            OpKind::Float => "float",
        }
    }
}

/// The peak a class of work meets: integer ops F_i, every float type F_f.
impl From<clflow_counts::OpClass> for OpKind {
    fn from(class: clflow_counts::OpClass) -> OpKind {
        match class {
            clflow_counts::OpClass::Int => OpKind::Int,
            _ => OpKind::Float,
        }
    }
}

/// What the count stage found for one kernel launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelCounts {
    pub kernel: String,
    /// Which ceiling W is compared against.
    pub ops: OpKind,
    /// The op set W counts (e.g. "int" or "add,xor,sub"), as the user chose it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op_set: Option<String>,
    /// W, in operations.
    pub work: Figure,
    /// Q as the kernel accesses global memory (every load and store), in bytes.
    pub traffic_accessed: Figure,
    /// Q counting each byte once (a cold cache, no reuse misses); `None` where
    /// Q is one number, as in the paper.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic_compulsory: Option<Figure>,
    /// Where W and Q concentrate and how the accesses coalesce: the levers
    /// a finding names (none where the count did not say).
    #[serde(default, skip_serializing_if = "Hotspots::is_empty")]
    pub hotspots: Hotspots,
}

/// The source lines with the most W and the most Q, and the share of bytes
/// whose accesses coalesce.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Hotspots {
    /// `lookup3.cl:68`, and its share of W (0 to 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_line: Option<(String, f64)>,
    /// The line with the most Q, and its share of Q (0 to 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic_line: Option<(String, f64)>,
    /// Global bytes whose accesses coalesce, over all global bytes (0 to 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coalesced: Option<f64>,
}

impl Hotspots {
    pub fn is_empty(&self) -> bool {
        self == &Hotspots::default()
    }
}

/// A device's four ceilings from one origin (any may be unknown).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ceilings {
    /// F_f: floating-point operations per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub float: Option<Figure>,
    /// F_i: integer operations per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub int: Option<Figure>,
    /// B: global-memory bandwidth, bytes per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<Figure>,
    /// P: power, watts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<Figure>,
    /// Each cache level's bandwidth, nearest the core first: the
    /// hierarchical roofline's ceilings for its level points.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caches: Vec<CacheCeiling>,
}

/// A cache level's bandwidth, measured by reads within a window it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheCeiling {
    /// `L1`, `L2`: the level the window fits.
    pub level: String,
    pub window_bytes: u64,
    pub bandwidth: Figure,
}

impl Ceilings {
    /// The compute ceiling for a kind of operation.
    pub fn compute(&self, ops: OpKind) -> Option<&Figure> {
        match ops {
            OpKind::Int => self.int.as_ref(),
            OpKind::Float => self.float.as_ref(),
        }
    }

    /// Fills each unknown ceiling from `other`, or replaces every ceiling
    /// `other` knows (`prefer_other`).
    fn overlay(&mut self, other: &Ceilings, prefer_other: bool) {
        for (mine, theirs) in [
            (&mut self.float, &other.float),
            (&mut self.int, &other.int),
            (&mut self.bandwidth, &other.bandwidth),
            (&mut self.power, &other.power),
        ] {
            if theirs.is_some() && (prefer_other || mine.is_none()) {
                *mine = theirs.clone();
            }
        }
        if !other.caches.is_empty() && (prefer_other || self.caches.is_empty()) {
            self.caches = other.caches.clone();
        }
    }

    pub fn is_empty(&self) -> bool {
        self.float.is_none()
            && self.int.is_none()
            && self.bandwidth.is_none()
            && self.power.is_none()
            && self.caches.is_empty()
    }
}

/// One device: the paper's measured peaks (F̂_f, F̂_i, B̂, P̂) and datasheet
/// peaks (F̄_f, F̄_i, B̄, P̄).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceProfile {
    /// The name reports use and merges match on.
    pub name: String,
    /// "gpu", "cpu", "fpga", "accelerator", where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default)]
    pub measured: Ceilings,
    #[serde(default)]
    pub datasheet: Ceilings,
}

/// What one run of a kernel on a device measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub kernel: String,
    pub device: String,
    /// T: the kernel's execution time (the median launch, for repeated launches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<Figure>,
    /// P: the peak power sampled over the kernel's launches (the paper's P).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_peak: Option<Figure>,
    /// The mean power over the same launches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_mean: Option<Figure>,
    /// Energy integrated by the sensor itself over the kernel's time, where it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_measured: Option<Figure>,
    /// The kernel's traffic at each level of the device's memory, nearest
    /// the core first, from the cache simulation (the hierarchical
    /// roofline's points); none where no cache was simulated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<LevelTraffic>,
    /// Anything the reader must know: a failed run, a wrong result, a missing sensor.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The bytes that cross into one memory level: `L1`, every byte the kernel
/// loads and stores; `L2`, what misses a cache of L1's size; ... `DRAM`,
/// what misses the last-level cache.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelTraffic {
    pub level: String,
    pub traffic: Figure,
}

impl Run {
    pub fn new(kernel: impl Into<String>, device: impl Into<String>) -> Self {
        Run {
            kernel: kernel.into(),
            device: device.into(),
            time: None,
            power_peak: None,
            power_mean: None,
            energy_measured: None,
            levels: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// Everything one report shows: kernels, devices and runs, each named once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultSet {
    pub schema: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default)]
    pub kernels: Vec<KernelCounts>,
    #[serde(default)]
    pub devices: Vec<DeviceProfile>,
    #[serde(default)]
    pub runs: Vec<Run>,
    /// How the results were made (the report's header).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub made: Option<RunInfo>,
}

/// How an analysis was run: enough to reproduce it, or to tell two apart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// When it ran (RFC 3339, UTC).
    pub date: String,
    pub clflow_version: String,
    /// The command line, as given.
    pub command: Vec<String>,
    /// The op set W counted.
    pub ops: String,
    pub launches: Vec<LaunchInfo>,
    pub devices: Vec<RunDevice>,
}

/// One kernel launch analysed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchInfo {
    pub kernel: String,
    /// The manifest (or captured launch) it came from.
    pub manifest: String,
    pub global_size: Vec<u64>,
    /// `None` where the launch leaves it to the runtime.
    pub local_size: Option<Vec<u64>>,
    /// The git commit of the repository holding the kernel's source, with
    /// `-dirty` where it has uncommitted changes; `None` outside git.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_commit: Option<String>,
}

/// A device the kernels ran on, as its runtime names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunDevice {
    pub name: String,
    pub platform: String,
    pub driver: String,
}

impl Default for ResultSet {
    fn default() -> Self {
        ResultSet {
            schema: SCHEMA,
            title: None,
            kernels: Vec::new(),
            devices: Vec::new(),
            runs: Vec::new(),
            made: None,
        }
    }
}

impl ResultSet {
    pub fn kernel(&self, name: &str) -> Option<&KernelCounts> {
        self.kernels.iter().find(|k| k.kernel == name)
    }

    pub fn device(&self, name: &str) -> Option<&DeviceProfile> {
        self.devices.iter().find(|d| d.name == name)
    }

    pub fn run(&self, kernel: &str, device: &str) -> Option<&Run> {
        self.runs
            .iter()
            .find(|r| r.kernel == kernel && r.device == device)
    }

    /// Adds or replaces a kernel's counts; says whether it replaced one.
    pub fn put_kernel(&mut self, counts: KernelCounts) -> bool {
        match self.kernels.iter_mut().find(|k| k.kernel == counts.kernel) {
            Some(existing) => {
                *existing = counts;
                true
            }
            None => {
                self.kernels.push(counts);
                false
            }
        }
    }

    /// Adds a device, or lays the ceilings it knows over those already known
    /// for a device of the same name; says whether one was there.
    pub fn put_device(&mut self, device: DeviceProfile) -> bool {
        match self.devices.iter_mut().find(|d| d.name == device.name) {
            Some(existing) => {
                existing.measured.overlay(&device.measured, true);
                existing.datasheet.overlay(&device.datasheet, true);
                if device.kind.is_some() {
                    existing.kind = device.kind;
                }
                true
            }
            None => {
                self.devices.push(device);
                false
            }
        }
    }

    /// Adds or replaces a run; says whether it replaced one.
    pub fn put_run(&mut self, run: Run) -> bool {
        match self
            .runs
            .iter_mut()
            .find(|r| r.kernel == run.kernel && r.device == run.device)
        {
            Some(existing) => {
                *existing = run;
                true
            }
            None => {
                self.runs.push(run);
                false
            }
        }
    }

    /// Merges `other` into this set, `other` winning where both name the same
    /// kernel, device ceiling or run. Returns one line per replaced entry so
    /// the caller can say what an import overrode.
    pub fn merge(&mut self, other: ResultSet) -> Vec<String> {
        let mut replaced = Vec::new();
        if self.title.is_none() {
            self.title = other.title;
        }
        for kernel in other.kernels {
            let name = kernel.kernel.clone();
            if self.put_kernel(kernel) {
                replaced.push(format!("kernel `{name}`: counts replaced"));
            }
        }
        for device in other.devices {
            let name = device.name.clone();
            if self.put_device(device) {
                replaced.push(format!("device `{name}`: ceilings updated"));
            }
        }
        for run in other.runs {
            let key = format!("run of `{}` on `{}`: replaced", run.kernel, run.device);
            if self.put_run(run) {
                replaced.push(key);
            }
        }
        replaced
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::Unit;

    fn watts(value: f64, source: &str) -> Option<Figure> {
        Some(Figure::imported(value, Unit::Watts, source))
    }

    #[test]
    fn merging_overlays_device_ceilings_and_replaces_runs() {
        let mut base = ResultSet::default();
        base.put_device(DeviceProfile {
            name: "fpga".into(),
            kind: Some("fpga".into()),
            measured: Ceilings {
                bandwidth: Some(Figure::imported(8.5e9, Unit::BytesPerSecond, "a")),
                ..Ceilings::default()
            },
            datasheet: Ceilings::default(),
        });
        let mut run = Run::new("k", "fpga");
        run.power_peak = watts(20.0, "first");
        base.put_run(run);

        let mut other = ResultSet::default();
        other.put_device(DeviceProfile {
            name: "fpga".into(),
            kind: None,
            measured: Ceilings { power: watts(25.0, "b"), ..Ceilings::default() },
            datasheet: Ceilings::default(),
        });
        let mut run = Run::new("k", "fpga");
        run.power_peak = watts(18.0, "second");
        other.put_run(run);

        let replaced = base.merge(other);
        assert_eq!(replaced.len(), 2, "{replaced:?}");
        let device = base.device("fpga").unwrap();
        assert_eq!(device.measured.bandwidth.as_ref().unwrap().value, 8.5e9);
        assert_eq!(device.measured.power.as_ref().unwrap().value, 25.0);
        assert_eq!(device.kind.as_deref(), Some("fpga"));
        assert_eq!(base.runs.len(), 1);
        assert_eq!(
            base.run("k", "fpga")
                .unwrap()
                .power_peak
                .as_ref()
                .unwrap()
                .value,
            18.0
        );
    }

    #[test]
    fn the_dominant_kind_decides_the_ceiling() {
        assert_eq!(OpKind::dominant(10, 3), OpKind::Int);
        assert_eq!(OpKind::dominant(10, 30), OpKind::Float);
        assert_eq!(OpKind::dominant(0, 0), OpKind::Int);
    }
}
