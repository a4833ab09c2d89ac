//! What the models know about a device: rates with their sources. Each is
//! optional; a model that lacks one it needs says which and predicts
//! nothing. Who fills them (microbenchmarks, datasheets) is the caller's
//! business: `clflow-bench` maps a measured profile onto them.

use crate::energy::EnergyCoefficients;
use crate::json::nan_if_null;
use clflow_counts::OpClass;
use serde::{Deserialize, Serialize};

/// A rate (operations/s, bytes/s) and where it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    #[serde(deserialize_with = "nan_if_null")]
    pub value: f64,
    pub source: String,
}

impl Rate {
    pub fn new(value: f64, source: impl Into<String>) -> Rate {
        Rate { value, source: source.into() }
    }
}

/// Peak throughput of each arithmetic class, multiply-add counted as 2
/// operations (the quantitative roofline's T_SP, T_DP, T_int).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassRates {
    pub int: Option<Rate>,
    pub fp32: Option<Rate>,
    pub fp64: Option<Rate>,
    pub fp16: Option<Rate>,
}

impl ClassRates {
    /// The class's rate, as stored.
    pub fn slot(&self, class: OpClass) -> &Option<Rate> {
        match class {
            OpClass::Int => &self.int,
            OpClass::Fp32 => &self.fp32,
            OpClass::Fp64 => &self.fp64,
            OpClass::Fp16 => &self.fp16,
        }
    }

    pub fn get(&self, class: OpClass) -> Option<&Rate> {
        self.slot(class).as_ref()
    }
}

/// One device's rates, as the models read them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceRates {
    pub name: String,
    /// F̂ per class (ops/s): the best arithmetic benchmark, as `analyze`'s
    /// roofline reads it; the bound of the roofline and boat-hull models.
    pub peak: ClassRates,
    /// Multiply-add throughput per class (ops/s): the quantitative model's
    /// T_SP and T_op.
    #[serde(default)]
    pub mad: ClassRates,
    /// Integer addition throughput (T_add, ops/s).
    pub int_add: Option<Rate>,
    /// Load/store instruction throughput on local memory (T_ldst, lanes/s).
    pub ldst: Option<Rate>,
    /// Global-memory bandwidth of neighbouring accesses (B̂, P_coalesced).
    pub bandwidth: Option<Rate>,
    /// Global-memory bandwidth of neighbouring accesses by the share of
    /// the bytes that are written (reads only, a copy's half, pure
    /// writes ...), in increasing share: a CPU's store first reads its line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bandwidth_by_writes: Vec<(f64, Rate)>,
    /// Reads within a window the device's largest measured cache holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_bandwidth: Option<Rate>,
    /// That window's bytes: the most a kernel's lines may take to move at
    /// `cache_bandwidth`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_window_bytes: Option<u64>,
    /// Global-memory bandwidth of scattered accesses (P_uncoalesced).
    pub uncoalesced_bandwidth: Option<Rate>,
    /// Global-memory bandwidth of an array updated in place, its bytes read
    /// and written counted: each line read, then written back with no read
    /// before the write (clflow's model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_bandwidth: Option<Rate>,
    /// Host-to-device link bandwidth (B_bus).
    pub host_link: Option<Rate>,
    /// The energy roofline's coefficients, fitted from power sampled
    /// during the microbenchmarks.
    pub energy: Option<EnergyCoefficients>,
    /// Instructions issued per second per class (lanes/s): at the best
    /// vector width and at width 1 (clflow's model).
    #[serde(default)]
    pub issue: IssueRates,
    /// What a launch costs before any work.
    #[serde(default)]
    pub launch: Option<LaunchCost>,
    /// What work-items pay beyond throughput.
    #[serde(default)]
    pub costs: Option<OpCostRates>,
    /// How the device runs work-items together.
    #[serde(default)]
    pub simd: Option<Simd>,
    /// Why a rate is missing, when it is (no sensor, not measured).
    pub notes: Vec<String>,
}

/// Instruction issue rates per class, lanes per second.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IssueRates {
    pub vector: ClassRates,
    pub scalar: ClassRates,
}

/// An empty kernel's time on one work-group, and each further group's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LaunchCost {
    pub empty_s: f64,
    pub per_group_s: f64,
}

/// Rates over all work-items of what throughput does not cover: operations
/// of dependent chains (one chain per work-item, one operation a cycle of
/// latency), atomic updates of local memory, passes through a barrier,
/// mispredicted branches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct OpCostRates {
    pub chain_ops_per_s: f64,
    pub atomics_per_s: f64,
    pub barriers_per_s: f64,
    /// Mispredicted branches' extra time, as a rate; none where they
    /// cost nothing measurable.
    #[serde(default)]
    pub mispredicts_per_s: Option<f64>,
    /// Scattered loads the last-level cache serves.
    #[serde(default)]
    pub cache_gathers_per_s: Option<f64>,
    /// The same from tables of other sizes: (bytes, loads per second),
    /// smallest first.
    #[serde(default)]
    pub cache_gather_tables: Option<[(u64, f64); 4]>,
    /// Trips of a loop whose float sum is carried across a kept call.
    #[serde(default)]
    pub carried_calls_per_s: Option<f64>,
    /// Loads a page or more apart in a work-item's own walk.
    #[serde(default)]
    pub page_strides_per_s: Option<f64>,
    /// The same walk at other lengths, shortest first.
    #[serde(default)]
    pub page_walks: Option<[WalkRates; 4]>,
    /// The bytes of the table those walks stepped through.
    #[serde(default)]
    pub walk_table_bytes: Option<u64>,
    /// The same walks through a table the last-level cache keeps, and its
    /// bytes (smaller than `walk_table_bytes`).
    #[serde(default)]
    pub small_page_walks: Option<[WalkRates; 4]>,
    #[serde(default)]
    pub small_walk_table_bytes: Option<u64>,
    /// Lanes of loads and stores a vectoriser gathers one at a time.
    #[serde(default)]
    pub gathered_lanes_per_s: Option<f64>,
    /// Lanes per second of calls of the float math builtins [`BUILTINS`]
    /// names, in that order: (work-items vectorised, lane by lane).
    #[serde(default)]
    pub builtins: Option<[(f64, f64); 5]>,
    /// Steps per second of a page walk copying, with a call of each of
    /// those builtins on each step's value, lane by lane.
    #[serde(default)]
    pub builtin_walks: Option<[f64; 5]>,
    /// Accesses a line apart in each work-item's walk of a window its
    /// work-group shares: (bytes a work-item walks, accesses per second),
    /// shortest first.
    #[serde(default)]
    pub line_walks: Option<[(u64, f64); 4]>,
    /// Steps per second of a page walk with a call the compiler keeps on
    /// each step: (copying, storing alone).
    #[serde(default)]
    pub call_walks: Option<(f64, f64)>,
    /// Lines per second of column walks whose work-groups read a few lines
    /// of each row's page at a time: (lines a visit, lines per second),
    /// fewest first.
    #[serde(default)]
    pub column_walks: Option<[(u32, f64); 3]>,
}

/// The math builtins whose calls the benchmarks time, by their OpenCL
/// names (`clflow bench`'s `costs`).
pub const BUILTINS: [&str; 5] = ["sin", "cos", "exp", "log", "pow"];

/// A page-stride walk of `steps` steps a work-item: accesses per second
/// loading, storing alone, and copying (a load and a store a step, so
/// `2 * steps` page strides a work-item).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WalkRates {
    pub steps: u32,
    pub loads_per_s: f64,
    pub stores_per_s: f64,
    pub copies_per_s: f64,
}

impl OpCostRates {
    /// Scattered loads per second the last-level cache serves from a table
    /// of `table_bytes`: time per load interpolated between the measured
    /// tables in the logarithm of the size (the smallest's rate below it,
    /// the largest's above). Where the profile timed one table, or the
    /// table is not known, that one's rate.
    pub fn cache_gathers_at(&self, table_bytes: Option<u64>) -> Option<f64> {
        match (self.cache_gather_tables, table_bytes) {
            (Some(tables), Some(bytes)) if bytes > 0 => {
                let points = tables.map(|(size, rate)| ((size.max(1) as f64).log2(), rate));
                rate_at(&points, (bytes as f64).log2())
            }
            _ => self.cache_gathers_per_s,
        }
    }

    /// Lines per second read in visits of `lines` lines to their pages:
    /// the column walks' rates, interpolated in the logarithm of the
    /// length (the shortest's below it), and towards `stream_lines_per_s`
    /// at a whole page of `page_lines`.
    pub fn visits_at(&self, lines: f64, page_lines: f64, stream_lines_per_s: f64) -> Option<f64> {
        let walks = self.column_walks?;
        let mut points: Vec<(f64, f64)> = walks
            .iter()
            .map(|&(lines, rate)| (f64::from(lines.max(1)).log2(), rate))
            .collect();
        points.push((page_lines.max(1.0).log2(), stream_lines_per_s));
        rate_at(&points, lines.max(1.0).log2())
    }

    /// Accesses a line apart per second where each work-item walks
    /// `walk_bytes` of lines: time per access interpolated between the
    /// measured walks in the logarithm of the length (the shortest's rate
    /// below it, the longest's above).
    pub fn line_walks_at(&self, walk_bytes: u64) -> Option<f64> {
        let points = self
            .line_walks?
            .map(|(bytes, rate)| ((bytes.max(1) as f64).log2(), rate));
        rate_at(&points, (walk_bytes.max(1) as f64).log2())
    }

    /// Page-strided accesses per second where a work-item makes `steps`
    /// of them between two barriers, `store_share` of them stores, over
    /// buffers of `walked_bytes` in all. The loads', the stores' and the
    /// copy's rates are each interpolated at `steps` between the walks of
    /// as many page strides a work-item (in the logarithm of the length;
    /// the longest's rate beyond it, the shortest's below it), then by the
    /// share of stores: time per access between the loads (none), the copy
    /// (half) and the stores (all). Where the profile timed the walks
    /// through a table the last-level cache keeps too, time per access is
    /// interpolated between the two tables in the logarithm of
    /// `walked_bytes` (the small table's rate below it, the large one's
    /// above). A profile with one walk of loads gives its rate for every
    /// walk.
    pub fn page_strides_at(
        &self,
        steps: f64,
        store_share: f64,
        walked_bytes: Option<u64>,
    ) -> Option<f64> {
        let Some(walks) = self.page_walks else {
            return self.page_strides_per_s;
        };
        let large = walk_rate(&walks, steps, store_share)?;
        match (
            self.small_page_walks,
            self.small_walk_table_bytes,
            self.walk_table_bytes,
            walked_bytes,
        ) {
            (Some(small), Some(small_bytes), Some(large_bytes), Some(walked))
                if small_bytes < large_bytes =>
            {
                let small = walk_rate(&small, steps, store_share)?;
                let points = [
                    ((small_bytes as f64).log2(), small),
                    ((large_bytes as f64).log2(), large),
                ];
                rate_at(&points, (walked.max(1) as f64).log2())
            }
            _ => Some(large),
        }
    }
}

/// The rate of page-strided accesses in walks of `steps` steps a
/// work-item, `store_share` of them stores, from one table's walks (see
/// [`OpCostRates::page_strides_at`]).
fn walk_rate(walks: &[WalkRates; 4], steps: f64, store_share: f64) -> Option<f64> {
    let length = steps.max(1.0).log2();
    let along = |per_step: f64, rate: fn(&WalkRates) -> f64| {
        let points = walks.map(|w| ((f64::from(w.steps) * per_step).log2(), rate(&w)));
        rate_at(&points, length)
    };
    let points = [
        (0.0, along(1.0, |w| w.loads_per_s)?),
        (0.5, along(2.0, |w| w.copies_per_s)?),
        (1.0, along(1.0, |w| w.stores_per_s)?),
    ];
    rate_at(&points, store_share)
}

/// How a device runs work-items together: `width` at a time, in a vector
/// unit its compiler fills (`WorkGroupVectoriser`: a CPU) or in hardware
/// warps (`Simt`: a GPU).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Simd {
    pub width: u32,
    pub kind: SimdKind,
    /// Whether the compiler takes work-items together inside the kernel's
    /// own (uniform) loops too: measured, a width-1 chain in a uniform loop
    /// running well above the same chain whose loop it cannot prove uniform.
    #[serde(default)]
    pub vectorises_loops: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SimdKind {
    WorkGroupVectoriser,
    Simt,
}

impl DeviceRates {
    /// The bandwidth of traffic of which `write_share` is written: the
    /// time per byte interpolated between the stream benchmarks of the
    /// nearest shares; the coalesced bandwidth where none was measured.
    pub fn bandwidth_at(&self, write_share: f64) -> Option<f64> {
        let points: Vec<(f64, f64)> = self
            .bandwidth_by_writes
            .iter()
            .map(|(share, rate)| (*share, rate.value))
            .collect();
        rate_at(&points, write_share).or_else(|| self.bandwidth.as_ref().map(|r| r.value))
    }

    /// A class's instruction rates: at the best vector width, at width 1.
    pub fn instruction_rates(&self, class: OpClass) -> (&Option<Rate>, &Option<Rate>) {
        (self.issue.vector.slot(class), self.issue.scalar.slot(class))
    }
}

/// The rate at `share` of rates measured at shares in ascending order: the
/// time per unit interpolated between the nearest two, the end's rate
/// beyond either end; none where none was measured.
pub fn rate_at(points: &[(f64, f64)], share: f64) -> Option<f64> {
    let mut below = points.first()?;
    for point in points {
        if point.0 >= share {
            if point.0 <= below.0 {
                return Some(point.1);
            }
            let t = (share - below.0) / (point.0 - below.0);
            let per_unit = (1.0 - t) / below.1 + t / point.1;
            return Some(1.0 / per_unit);
        }
        below = point;
    }
    Some(below.1)
}

/// A model could not predict: it names the input it lacked.
pub fn missing(what: &str, device: &DeviceRates) -> String {
    format!("{} has no {what}", device.name)
}
