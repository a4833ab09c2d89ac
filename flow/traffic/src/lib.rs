//! What a kernel's global accesses do to a device's memory system, from the
//! interpreter's access stream (`clflow_interp::Program::run_traced`):
//!
//! * [`lru`]: the DRAM traffic Q through an LRU cache of any size, from one
//!   pass (stack distances), between the compulsory traffic (a cache that
//!   holds everything) and the line-granular traffic of no cache at all;
//! * [`coalescing`]: per access site, whether neighbouring work-items touch
//!   neighbouring addresses, and the lines each dispatch touches.
//!
//! ```no_run
//! # fn demo(program: &clflow_interp::Program, launch: &clflow_core::Launch) -> Result<(), Box<dyn std::error::Error>> {
//! let cache: clflow_traffic::CacheSpec = "40MiB/128".parse()?;
//! let mut analysis = clflow_traffic::TrafficAnalysis::new(&[cache.line_bytes]);
//! program.run_traced(launch, &Default::default(), &mut analysis)?;
//! let report = analysis.finish();
//! println!("Q at 40 MiB: {} B", report.at(cache).dram.total());
//! # Ok(()) }
//! ```

pub mod coalescing;
mod fenwick;
pub mod lru;
mod stretches;
pub mod visits;
mod walks;

pub use coalescing::{
    AccessSiteKind, CoalescingAnalyzer, CoalescingReport, PatternCounts, SiteCoalescing, LONG_WALK,
};
pub use lru::{DramTraffic, LruCurve, LruSimulator};

use clflow_counts::access::{AccessPool, LineTouch, Pooled};
use clflow_counts::{AccessSink, GlobalAccess, SourceLine, TraceBuffer};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A cache's size and line, as `--cache 40MiB/128` gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheSpec {
    pub bytes: u64,
    pub line_bytes: u64,
}

/// The line size where none is given.
pub const DEFAULT_LINE_BYTES: u64 = 64;

impl FromStr for CacheSpec {
    type Err = String;

    /// `SIZE[/LINE]`: a size with an optional unit (`B`, `K`/`KB`/`KiB`,
    /// `M`/`MB`/`MiB`, `G`/`GB`/`GiB`, all powers of 1024 as cache sizes
    /// are), and a line size in bytes, a power of two (64 if left out).
    fn from_str(text: &str) -> Result<Self, String> {
        let (size, line) = match text.split_once('/') {
            Some((size, line)) => (size, Some(line)),
            None => (text, None),
        };
        let bytes = parse_size(size)?;
        let line_bytes = match line {
            Some(line) => parse_size(line)?,
            None => DEFAULT_LINE_BYTES,
        };
        let line_bytes = clflow_core::numbers::line_size(line_bytes)?;
        if bytes < line_bytes {
            return Err(format!(
                "a {bytes}-byte cache holds no {line_bytes}-byte line"
            ));
        }
        Ok(CacheSpec { bytes, line_bytes })
    }
}

impl fmt::Display for CacheSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", format_size(self.bytes), self.line_bytes)
    }
}

/// A byte size with an optional unit (`B`, `K`/`KB`/`KiB`, `M`/`MB`/`MiB`,
/// `G`/`GB`/`GiB`, all powers of 1024).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let not_a_size = || format!("`{text}` is not a size (e.g. 40MiB, 512KiB, 128)");
    if number.is_empty() {
        return Err(not_a_size());
    }
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        other => {
            return Err(format!(
                "unknown size unit `{other}` in `{text}` (use B, KiB, MiB or GiB)"
            ))
        }
    };
    let value: f64 = number.parse().map_err(|_| not_a_size())?;
    let bytes = value * scale as f64;
    if !(1.0..=(1u64 << 50) as f64).contains(&bytes) || bytes.fract() != 0.0 {
        return Err(format!(
            "`{text}` is not a whole number of bytes from 1 B to 1 PiB"
        ));
    }
    Ok(bytes as u64)
}

/// `40MiB`, `1.5MiB`, `48KiB`, `100B`.
pub fn format_size(bytes: u64) -> String {
    for (unit, scale) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if bytes >= scale {
            let value = bytes as f64 / scale as f64;
            return if value.fract() == 0.0 {
                format!("{value}{unit}")
            } else {
                format!("{value:.2}{unit}")
            };
        }
    }
    format!("{bytes}B")
}

/// A run is judged once a simulation has seen this share of the exact
/// limit ([`lru::EXACT_TOUCHES`]): whether it will be long.
const EARLY_SHARE: u64 = 64;

/// A run foretold to make this many times the exact limit of line touches
/// or more samples from the moment it is judged ([`EARLY_SHARE`]).
const LONG_RUN: u64 = 2;

/// Once a simulation has seen this share of the exact limit, a run
/// foretold to reach the limit is foreseen to sample, and the kernel may
/// compile meanwhile ([`AccessSink::foresees_reordering`]).
const FORESIGHT_SHARE: u64 = 256;

/// Batches a stage may have queued before the run waits for it.
const STAGE_QUEUE: usize = 4;

/// Accesses a batch gathers before it goes to the stages: handing over
/// every work-group alone cost a thread wake-up per group and stage, a
/// fifth of a traced run's time where groups are small.
const BATCH_ACCESSES: usize = 1 << 13;

/// Work-groups' accesses, in order, handed to the stages together.
type Batch = Arc<Vec<Delivered>>;

/// What the run handed over of a work-group (or of part of a large one).
#[derive(Debug)]
enum Delivered {
    /// Its accesses, in the order they were made; it stands for
    /// `stands_for` work-groups in the coalescing analysis.
    Accesses {
        group: u64,
        list: Pooled,
        stands_for: u64,
    },
    /// A compiled work-group's line touches, at lines of
    /// `1 << touch_shift` bytes.
    Lines {
        touches: Vec<LineTouch>,
        touch_shift: u32,
    },
    /// The simulations sample from here on.
    SampleNow,
}

/// A simulation running on a thread of its own, fed work-group by
/// work-group in order.
#[derive(Debug)]
struct Stage<R> {
    queue: SyncSender<Batch>,
    worker: JoinHandle<R>,
}

impl<R: Send + 'static> Stage<R> {
    fn spawn<S: Send + 'static>(
        mut state: S,
        feed: fn(&mut S, &Delivered),
        done: fn(S) -> R,
    ) -> Stage<R> {
        let (queue, batches) = sync_channel::<Batch>(STAGE_QUEUE);
        let worker = std::thread::spawn(move || {
            for batch in batches {
                for delivered in batch.iter() {
                    feed(&mut state, delivered);
                }
            }
            done(state)
        });
        Stage { queue, worker }
    }

    fn send(&self, batch: &Batch) {
        // A stage stops early only by panicking, which `finish` passes on.
        let _ = self.queue.send(Arc::clone(batch));
    }

    fn finish(self) -> R {
        drop(self.queue);
        self.worker
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }
}

fn simulate(sim: &mut LruSimulator, delivered: &Delivered) {
    match delivered {
        Delivered::Accesses { list, .. } => sim.accesses(list),
        Delivered::Lines { touches, touch_shift } => sim.touches(touches, *touch_shift),
        Delivered::SampleNow => sim.sample_now(),
    }
}

fn coalesce(analyzer: &mut CoalescingAnalyzer, delivered: &Delivered) {
    if let Delivered::Accesses { group, list, stands_for } = delivered {
        analyzer.sample(*group, list, *stands_for);
    }
}

/// The access sink: an LRU simulation per line size and the coalescing
/// analysis (at the first line size), each on a thread of its own, so that
/// they run beside each other and beside the interpreter.
#[derive(Debug)]
pub struct TrafficAnalysis {
    line_sizes: Vec<u64>,
    /// Cache sizes at which each site's DRAM traffic is kept.
    probes: Vec<u64>,
    /// Cache sizes whose traffic a sampling simulation must resolve.
    resolved: Vec<u64>,
    simulations: Vec<Stage<LruCurve>>,
    /// Whether the coalescing analysis runs (`TrafficAnalysis::simulating_only`).
    coalesce: bool,
    coalescing: Option<Stage<CoalescingReport>>,
    /// Whether the run has named its buffers (and the stages started).
    started: bool,
    buffers: Vec<TraceBuffer>,
    accessed_bytes: u64,
    /// Where the run takes its access lists, and the stages give them back.
    pool: Arc<AccessPool>,
    /// Work-groups not yet handed to the stages, and their accesses.
    pending: Vec<Delivered>,
    pending_accesses: usize,
    /// Line touches the largest line size's simulation has seen, counted
    /// until `exact_limit`, from where the simulations sample
    /// ([`lru::EXACT_TOUCHES`] unless a test asks for fewer).
    exact_touches: u64,
    exact_limit: u64,
    /// The launch's work-groups, and whether the run was judged (see
    /// [`EARLY_SHARE`]) once the simulations had seen a share of the limit.
    groups: u64,
    judged: bool,
    /// Whether the run, by the time it was judged, was foretold to reach
    /// the limit.
    foreseen: bool,
    /// Whether the simulations sample: past the limit, or the run judged
    /// long.
    sampling: bool,
    /// The most lines (of the largest size) a work-group touched: the run
    /// hands over line touches, in another order, only where every cache
    /// the simulations resolve, and the smallest a sample resolves, holds
    /// [`lru::REORDER_MARGIN`] times as many.
    footprint: u64,
    /// Whether it does.
    reordering: bool,
    /// Whether the run may reorder at all ([`AccessSink::never_reorders`]).
    may_reorder: bool,
    /// The most lines a work-group may touch for that: none where the
    /// simulations may not sample.
    most_footprint: u64,
    /// Scratch for counting a work-group's lines.
    group_lines: coalescing::DistinctLines,
}

impl TrafficAnalysis {
    /// An analysis for these line sizes (powers of two; duplicates are
    /// dropped; none means the default line).
    pub fn new(line_sizes: &[u64]) -> TrafficAnalysis {
        let mut sizes: Vec<u64> = Vec::new();
        for &line in line_sizes {
            if !sizes.contains(&line) {
                sizes.push(line);
            }
        }
        if sizes.is_empty() {
            sizes.push(DEFAULT_LINE_BYTES);
        }
        TrafficAnalysis {
            line_sizes: sizes,
            probes: Vec::new(),
            resolved: Vec::new(),
            simulations: Vec::new(),
            coalesce: true,
            coalescing: None,
            started: false,
            buffers: Vec::new(),
            accessed_bytes: 0,
            pool: Arc::default(),
            pending: Vec::new(),
            pending_accesses: 0,
            exact_touches: 0,
            exact_limit: lru::EXACT_TOUCHES,
            groups: 0,
            judged: false,
            foreseen: false,
            footprint: 0,
            reordering: false,
            may_reorder: true,
            most_footprint: 0,
            group_lines: Default::default(),
            sampling: false,
        }
    }

    /// The largest and the smallest line size simulated.
    fn largest_line(&self) -> u64 {
        self.line_sizes
            .iter()
            .max()
            .copied()
            .unwrap_or(DEFAULT_LINE_BYTES)
    }

    fn smallest_line(&self) -> u64 {
        self.line_sizes
            .iter()
            .min()
            .copied()
            .unwrap_or(DEFAULT_LINE_BYTES)
    }

    /// Takes a list of accesses that stands for `stands_for` work-groups.
    fn take(&mut self, group: u64, accesses: Vec<GlobalAccess>, stands_for: u64) {
        let shift = self.largest_line().trailing_zeros();
        // Counted until the run reorders, or may not.
        let watch = self.may_reorder
            && !self.reordering
            && self.most_footprint > 0
            && self.footprint <= self.most_footprint;
        self.group_lines.clear();
        for a in &accesses {
            // An atomic reads and writes its bytes.
            let times = if a.kind.reads() && a.kind.writes() {
                2
            } else {
                1
            };
            self.accessed_bytes += a.bytes as u64 * u64::from(a.work_items()) * times;
            if a.bytes == 0 {
                continue;
            }
            if !self.sampling {
                self.exact_touches += a.line_touches(shift);
            }
            if watch {
                for run in a.each_run() {
                    self.group_lines.push(run.buffer.into(), run.lines(shift));
                }
            }
        }
        if watch {
            self.footprint = self.footprint.max(self.group_lines.count());
        }
        self.pending_accesses += accesses.len();
        self.pending.push(Delivered::Accesses {
            group,
            list: Pooled::new(accesses, Arc::clone(&self.pool)),
            stands_for,
        });
        if !self.judged && self.exact_touches >= self.exact_limit / FORESIGHT_SHARE {
            self.foreseen |= self.foretold(group) >= self.exact_limit as f64;
            if self.exact_touches >= self.exact_limit / EARLY_SHARE {
                self.judged = true;
                self.sample_if_long(group);
            }
        }
        if self.pending_accesses >= BATCH_ACCESSES {
            self.flush();
        }
    }

    /// After work-group `group`: where the touches so far, over the groups
    /// so far, foretell a run of [`LONG_RUN`] times the exact limit or
    /// more, the simulations sample from here on. The whole run is an
    /// estimate then anyway, and its exact prefix, interpreted and compared
    /// whole, would cost as much as the rest.
    fn sample_if_long(&mut self, group: u64) {
        if self.foretold(group) >= (LONG_RUN * self.exact_limit) as f64
            && self.line_touches().is_some()
        {
            self.pending.push(Delivered::SampleNow);
            self.sampling = true;
        }
    }

    /// The touches the whole run will make, foretold from those of the
    /// work-groups up to `group`.
    fn foretold(&self, group: u64) -> f64 {
        self.exact_touches as f64 * self.groups as f64 / (group + 1) as f64
    }

    /// Hands the pending work-groups to every stage; the last stage done
    /// with a group's list gives it back to the pool.
    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let batch: Batch = Arc::new(std::mem::take(&mut self.pending));
        self.pending_accesses = 0;
        for stage in &self.simulations {
            stage.send(&batch);
        }
        if let Some(stage) = &self.coalescing {
            stage.send(&batch);
        }
    }

    /// Also keeps which site the DRAM traffic comes from at these caches
    /// (`TrafficSummary` at one of them then has each site's `dram`).
    pub fn probing(mut self, caches: &[CacheSpec]) -> Self {
        self.probes = caches.iter().map(|c| c.bytes).collect();
        self
    }

    /// Keeps a long run's simulations fine enough to resolve caches of
    /// these sizes too (bytes), as the probed ones are (see
    /// [`LruSimulator::resolving`]).
    pub fn resolving(mut self, cache_bytes: &[u64]) -> Self {
        self.resolved = cache_bytes.to_vec();
        self
    }

    /// Samples after `touches` line touches rather than
    /// [`lru::EXACT_TOUCHES`] (a test's short run reaches it).
    pub fn sampling_after(mut self, touches: u64) -> Self {
        self.exact_limit = touches;
        self
    }

    /// Runs the cache simulations alone, without the coalescing analysis,
    /// whose findings stay empty: for a second run in another order of
    /// work-items, whose curves [`TrafficReport::with_curves_of`] takes.
    pub fn simulating_only(mut self) -> Self {
        self.coalesce = false;
        self
    }

    /// Waits for the simulations to drain, and gathers what they found.
    pub fn finish(mut self) -> TrafficReport {
        if !self.started {
            // No run reached the sink: empty results for every line size.
            self.buffers(&[]);
        }
        self.flush();
        let coalescing = match self.coalescing.take() {
            Some(stage) => stage.finish(),
            None => CoalescingReport::default(),
        };
        // The footprint in bytes, where work-groups came in another order.
        let reordered = self
            .reordering
            .then(|| self.footprint * self.largest_line());
        TrafficReport {
            accessed_bytes: self.accessed_bytes,
            buffers: self.buffers,
            curves: self
                .simulations
                .into_iter()
                .map(Stage::finish)
                .map(|curve| match reordered {
                    Some(bytes) => {
                        let lines = bytes / curve.line_bytes();
                        curve.reordered(lines)
                    }
                    None => curve,
                })
                .collect(),
            coalescing_line_bytes: self.line_sizes[0],
            coalescing,
        }
    }
}

impl AccessSink for TrafficAnalysis {
    fn buffers(&mut self, buffers: &[TraceBuffer]) {
        let sizes: Vec<u64> = buffers.iter().map(|b| b.bytes).collect();
        let smallest_cache = self.probes.iter().chain(&self.resolved).min().copied();
        // No larger than the smallest cache a first halving of the rate
        // resolves, so that the curve starts where sampling alone lets it.
        let resolved = smallest_cache.map_or(u64::MAX, |bytes| bytes / self.largest_line());
        let lines = resolved.min(2 * lru::RESOLVED_LINES);
        self.most_footprint = match self.line_touches() {
            Some(_) => lines / lru::REORDER_MARGIN,
            None => 0,
        };
        self.simulations = self
            .line_sizes
            .iter()
            .map(|&line| {
                let sim = LruSimulator::new(line, &sizes)
                    .probing(&self.probes)
                    .resolving(&self.resolved)
                    .sampling_after(self.exact_limit);
                Stage::spawn(sim, simulate, LruSimulator::finish)
            })
            .collect();
        self.coalescing = self.coalesce.then(|| {
            Stage::spawn(
                CoalescingAnalyzer::new(self.line_sizes[0]),
                coalesce,
                CoalescingAnalyzer::finish,
            )
        });
        self.buffers = buffers.to_vec();
        self.started = true;
    }

    fn work_group(&mut self, group: u64, accesses: &[GlobalAccess]) {
        self.take_work_group(group, accesses.to_vec());
    }

    fn take_work_group(&mut self, group: u64, accesses: Vec<GlobalAccess>) {
        self.take(group, accesses, 1);
    }

    fn pool(&self) -> Option<Arc<AccessPool>> {
        Some(Arc::clone(&self.pool))
    }

    fn takes_runs(&self) -> bool {
        true
    }

    fn line_touches(&self) -> Option<u64> {
        let caches: Vec<u64> = self.probes.iter().chain(&self.resolved).copied().collect();
        let samples = |&line: &u64| LruSimulator::samples(line, &caches);
        self.line_sizes
            .iter()
            .all(samples)
            .then(|| self.smallest_line())
    }

    fn work_groups(&mut self, groups: u64) {
        self.groups = groups;
    }

    fn foresees_reordering(&mut self) -> bool {
        // As `reorders` asks, but of the run foretold.
        self.may_reorder
            && self.foreseen
            && self.footprint <= self.most_footprint
            && self.line_touches().is_some()
    }

    fn never_reorders(&mut self) {
        self.may_reorder = false;
        self.reordering = false;
    }

    fn reorders(&mut self) -> bool {
        if !self.sampling && self.exact_touches >= self.exact_limit && self.line_touches().is_some()
        {
            self.sampling = true;
        }
        self.reordering |=
            self.may_reorder && self.sampling && self.footprint <= self.most_footprint;
        self.reordering
    }

    fn take_lines(&mut self, _group: u64, touches: Vec<LineTouch>, accessed_bytes: u64) {
        self.accessed_bytes += accessed_bytes;
        // Its touches are its lines at the smallest size, or more.
        let smallest = self.smallest_line();
        let lines = (touches.len() as u64 * smallest).div_ceil(self.largest_line());
        self.footprint = self.footprint.max(lines);
        self.pending_accesses += touches.len();
        self.pending
            .push(Delivered::Lines { touches, touch_shift: smallest.trailing_zeros() });
        if self.pending_accesses >= BATCH_ACCESSES {
            self.flush();
        }
    }

    fn take_sample(&mut self, group: u64, accesses: Vec<GlobalAccess>, stands_for: u64) {
        self.take(group, accesses, stands_for);
    }
}

/// What the analysis found.
#[derive(Debug, Clone)]
pub struct TrafficReport {
    /// Bytes of every global access (an atomic counts its load and store):
    /// the traffic without a cache, counted in bytes rather than lines.
    pub accessed_bytes: u64,
    pub buffers: Vec<TraceBuffer>,
    curves: Vec<LruCurve>,
    coalescing_line_bytes: u64,
    pub coalescing: CoalescingReport,
}

/// Q at one cache size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrafficAtCache {
    pub cache: CacheSpec,
    /// DRAM traffic through an LRU cache of that size.
    pub dram: DramTraffic,
    /// With a cache that holds every line.
    pub compulsory: DramTraffic,
    /// Every access's bytes.
    pub accessed_bytes: u64,
}

/// Q at one cache size with the curve and the coalescing around it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrafficSummary {
    pub cache: CacheSpec,
    pub accessed_bytes: u64,
    pub compulsory: DramTraffic,
    /// Through an LRU cache of `cache`'s size and line.
    pub dram: DramTraffic,
    /// Q against the cache size, at `cache`'s line size.
    pub curve: Vec<CurvePoint>,
    /// Where the simulation sampled a long stream, the 1 line in how many
    /// it followed at the end (its figures are estimates; see
    /// [`lru`]); absent where it followed every line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled_one_in: Option<u64>,
    /// The line touches followed whole before it sampled (4,194,304, or
    /// fewer where the first foretold a long run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled_after: Option<u64>,
    pub coalescing: CoalescingSummary,
}

/// A kernel's traffic through one device's cache.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceTraffic {
    pub device: String,
    /// Where the cache's size and line come from.
    pub cache_source: String,
    #[serde(flatten)]
    pub summary: TrafficSummary,
    /// The bytes crossing into each level of the device's memory, nearest
    /// the core first (see [`TrafficReport::levels`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<LevelBytes>,
    /// Lines that scattered loads miss in the level above this cache and
    /// find in it (see [`TrafficReport::cache_gathers`]), where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_gathers: Option<u64>,
    /// The bytes of the buffers they read (see
    /// [`TrafficReport::cache_gather_table`]), where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_gather_table: Option<u64>,
    /// The order of work-items the cache was simulated in, where not the
    /// interpreter's lockstep (the device's own: see
    /// `clflow_interp::ItemOrder`), in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
}

/// The bytes that cross into one memory level (`L1`, `L2` ... `DRAM`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelBytes {
    pub level: String,
    pub bytes: u64,
}

/// How the accesses coalesce, over all sites and per site.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoalescingSummary {
    /// The line size the sites' `lines` count in.
    pub line_bytes: u64,
    pub bytes: PatternCounts,
    pub accesses: PatternCounts,
    pub sites: Vec<SiteCoalescing>,
    /// The most lines one work-item moved on to between two barriers
    /// (see `CoalescingReport::stretch_lines`).
    #[serde(default)]
    pub stretch_lines: u64,
    /// The work-items that made long walks of page strides, each once
    /// between two barriers (see `CoalescingReport::page_walkers`).
    #[serde(default)]
    pub page_walkers: u64,
    /// The bytes of the buffers the sites with page strides access,
    /// together: how much memory the walks step through.
    #[serde(default)]
    pub page_walk_bytes: u64,
}

impl CoalescingSummary {
    /// Accesses a page or more past their work-item's last at their site,
    /// in long walks, over all sites (see `SiteCoalescing::page_strides`).
    pub fn page_strides(&self) -> u64 {
        self.sites.iter().map(|s| s.page_strides).sum()
    }

    /// Accesses a line or more, but under a page, past their work-item's
    /// last at their site, in long walks, over all sites (see
    /// `SiteCoalescing::line_strides`).
    pub fn line_strides(&self) -> u64 {
        self.sites.iter().map(|s| s.line_strides).sum()
    }

    /// The lines first touched in short visits to their pages, by the
    /// visits' lengths, over the sites that make neither page nor line
    /// strides (their walks are charged as such).
    pub fn short_visits(&self) -> visits::ShortVisits {
        let mut total = [0; visits::VISIT_BUCKETS];
        let sites = self
            .sites
            .iter()
            .filter(|s| s.page_strides == 0 && s.line_strides == 0);
        for visits in sites.filter_map(|s| s.short_visits) {
            for (t, n) in total.iter_mut().zip(visits) {
                *t += n;
            }
        }
        total
    }

    /// The DRAM bytes of the sites that make line strides, where the
    /// simulation kept each site's at the summary's cache.
    pub fn line_walk_dram(&self) -> u64 {
        self.sites
            .iter()
            .filter(|s| s.line_strides > 0)
            .filter_map(|s| s.dram.as_ref().map(|d| d.total()))
            .sum()
    }

    /// The long walks the page strides came in, over all sites.
    pub fn page_walks(&self) -> u64 {
        self.sites.iter().map(|s| s.page_walks).sum()
    }

    /// Of the page strides, those of stores and atomics (which take their
    /// line as a store does).
    pub fn page_stride_stores(&self) -> u64 {
        self.sites
            .iter()
            .filter(|s| s.kind != AccessSiteKind::Load)
            .map(|s| s.page_strides)
            .sum()
    }

    /// Bytes per pattern of the sites on each source line, and their DRAM
    /// bytes where the simulation kept them per site.
    pub fn by_line(&self) -> BTreeMap<SourceLine, (PatternCounts, Option<u64>)> {
        let mut lines: BTreeMap<SourceLine, (PatternCounts, Option<u64>)> = BTreeMap::new();
        for site in &self.sites {
            if let Some(line) = &site.line {
                let entry = lines.entry(line.clone()).or_default();
                entry.0.merge(&site.bytes);
                if let Some(dram) = site.dram {
                    *entry.1.get_or_insert(0) += dram.total();
                }
            }
        }
        lines
    }
}

/// One point of the Q-against-cache-size curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CurvePoint {
    pub cache_bytes: u64,
    pub read_bytes: u64,
    pub written_bytes: u64,
}

impl CurvePoint {
    pub fn total(&self) -> u64 {
        self.read_bytes + self.written_bytes
    }
}

impl TrafficReport {
    /// The curve for a line size the analysis ran with.
    pub fn curve(&self, line_bytes: u64) -> Option<&LruCurve> {
        self.curves.iter().find(|c| c.line_bytes() == line_bytes)
    }

    /// This run's report with the cache simulations of `other`, a run of
    /// the same launch in another order of work-items (see
    /// `clflow_interp::ItemOrder`), at the line sizes `other` simulated:
    /// how a CPU's caches fare with the same accesses, where the coalescing
    /// stays that of neighbouring work-items run together.
    pub fn with_curves_of(&self, other: TrafficReport) -> TrafficReport {
        let theirs = other.line_sizes();
        let mut curves = other.curves;
        curves.extend(
            self.curves
                .iter()
                .filter(|c| !theirs.contains(&c.line_bytes()))
                .cloned(),
        );
        TrafficReport {
            accessed_bytes: self.accessed_bytes,
            buffers: self.buffers.clone(),
            curves,
            coalescing_line_bytes: self.coalescing_line_bytes,
            coalescing: self.coalescing.clone(),
        }
    }

    /// How far one work-item walked between two barriers, at most: the
    /// lines it moved on to (`CoalescingReport::stretch_lines`), in bytes.
    pub fn stretch_bytes(&self) -> u64 {
        self.coalescing.stretch_lines * self.coalescing_line_bytes
    }

    /// The line sizes simulated.
    pub fn line_sizes(&self) -> Vec<u64> {
        self.curves.iter().map(LruCurve::line_bytes).collect()
    }

    /// Names every access site, e.g. with `clflow_interp::Program::site`.
    /// The buffers each site accessed follow the name.
    pub fn describe_sites(&mut self, describe: impl Fn(u32) -> String) {
        for site in &mut self.coalescing.sites {
            let buffers: Vec<&str> = site
                .buffers
                .iter()
                .filter_map(|&b| self.buffers.get(b as usize))
                .map(|b| b.label.as_str())
                .collect();
            site.description = format!("{} on {}", describe(site.site), buffers.join(", "));
        }
    }

    /// Gives every access site its source line, e.g. with
    /// `clflow_interp::Program::source_line`.
    pub fn locate_sites(&mut self, locate: impl Fn(u32) -> Option<SourceLine>) {
        for site in &mut self.coalescing.sites {
            site.line = locate(site.site);
        }
    }

    /// Everything about one cache size, for reports: Q there, the bounds,
    /// the curve at its line size (through it), and the coalescing.
    pub fn summary(&self, cache: CacheSpec) -> TrafficSummary {
        let at = self.at(cache);
        let mut sites = self.coalescing.sites.clone();
        // Each site's DRAM traffic, where the simulation probed this cache.
        if let Some(by_site) = self
            .curve(cache.line_bytes)
            .and_then(|curve| curve.by_site(cache.bytes))
        {
            for site in &mut sites {
                site.dram = Some(
                    by_site
                        .iter()
                        .find(|(s, _)| *s == site.site)
                        .map_or(DramTraffic::default(), |(_, t)| *t),
                );
            }
        }
        // And the lines it first touched in short visits to their pages.
        if let Some(curve) = self.curve(cache.line_bytes) {
            for site in &mut sites {
                site.short_visits = Some(
                    curve
                        .short_visits()
                        .iter()
                        .find(|(s, _)| *s == site.site)
                        .map_or([0; visits::VISIT_BUCKETS], |(_, v)| *v),
                );
            }
        }
        TrafficSummary {
            cache,
            accessed_bytes: at.accessed_bytes,
            compulsory: at.compulsory,
            dram: at.dram,
            curve: self.sweep(cache.line_bytes, &[cache.bytes]),
            sampled_one_in: self
                .curve(cache.line_bytes)
                .map(LruCurve::sampled_one_in)
                .filter(|&n| n > 1),
            sampled_after: self
                .curve(cache.line_bytes)
                .and_then(LruCurve::followed_whole),
            coalescing: CoalescingSummary {
                line_bytes: self.coalescing_line_bytes,
                bytes: self.coalescing.bytes(),
                accesses: self.coalescing.accesses(),
                sites,
                stretch_lines: self.coalescing.stretch_lines,
                page_walkers: self.coalescing.page_walkers,
                page_walk_bytes: self.page_walk_bytes(),
            },
        }
    }

    /// The bytes of the buffers that sites with page strides access, each
    /// buffer once.
    pub fn page_walk_bytes(&self) -> u64 {
        self.buffer_bytes(self.coalescing.sites.iter().filter(|s| s.page_strides > 0))
    }

    /// The bytes of the buffers these sites access, each buffer once.
    fn buffer_bytes<'a>(&self, sites: impl Iterator<Item = &'a SiteCoalescing>) -> u64 {
        let mut accessed: Vec<u32> = sites.flat_map(|s| s.buffers.iter().copied()).collect();
        accessed.sort_unstable();
        accessed.dedup();
        accessed
            .iter()
            .filter_map(|&b| self.buffers.get(b as usize))
            .map(|b| b.bytes)
            .sum()
    }

    /// The hierarchical roofline's traffic through `cache` (the last level
    /// before DRAM) and the `upper` caches nearer the core, each named and
    /// smaller than the one after it: into the first level go the bytes
    /// the kernel accesses, into each next level what misses a cache of
    /// the level before's size, into DRAM what misses `cache`. With no
    /// upper caches: `L1` (accessed) and `DRAM`.
    pub fn levels(&self, cache: CacheSpec, upper: &[(String, u64)]) -> Vec<LevelBytes> {
        let at = |bytes: u64| {
            let q = self.at(CacheSpec { bytes, ..cache }).dram;
            q.read_bytes + q.written_bytes
        };
        let upper: Vec<&(String, u64)> = upper.iter().filter(|(_, b)| *b < cache.bytes).collect();
        let first = upper
            .first()
            .map_or("L1".to_string(), |(name, _)| name.clone());
        let mut levels = vec![LevelBytes { level: first, bytes: self.accessed_bytes }];
        for (k, (_, bytes)) in upper.iter().enumerate() {
            let next = upper
                .get(k + 1)
                .map_or_else(|| format!("L{}", upper.len() + 1), |(name, _)| name.clone());
            levels.push(LevelBytes { level: next, bytes: at(*bytes) });
        }
        levels.push(LevelBytes { level: "DRAM".into(), bytes: at(cache.bytes) });
        levels
    }

    /// Lines that scattered loads (of sites whose bytes are mostly
    /// scattered) miss in a cache of `above` bytes and find in `cache`:
    /// loads that each wait on the last level, as a sparse matrix's
    /// gathers from a vector that only it holds do. None unless the
    /// simulation probed both sizes.
    pub fn cache_gathers(&self, cache: CacheSpec, above: u64) -> Option<u64> {
        let bytes: u64 = self
            .gathering_sites(cache, above)?
            .iter()
            .map(|(_, bytes)| bytes)
            .sum();
        Some(bytes / cache.line_bytes)
    }

    /// The bytes of the buffers those gathers read, each buffer once: the
    /// table they are scattered over (a sparse matrix's vector). None
    /// where the simulation did not probe both sizes, 0 where nothing
    /// gathers.
    pub fn cache_gather_table(&self, cache: CacheSpec, above: u64) -> Option<u64> {
        let sites = self.gathering_sites(cache, above)?;
        let gathering = sites.iter().filter(|(_, bytes)| *bytes > 0);
        Some(self.buffer_bytes(gathering.map(|(site, _)| *site)))
    }

    /// The mostly scattered sites and the bytes each reads that miss at
    /// `above` and hit in `cache`.
    fn gathering_sites(&self, cache: CacheSpec, above: u64) -> Option<Vec<(&SiteCoalescing, u64)>> {
        let curve = self.curve(cache.line_bytes)?;
        let (upper, last) = (curve.by_site(above)?, curve.by_site(cache.bytes)?);
        let read = |sites: &[(u32, DramTraffic)], site: u32| {
            sites
                .iter()
                .find(|(s, _)| *s == site)
                .map_or(0, |(_, t)| t.read_bytes)
        };
        Some(
            self.coalescing
                .sites
                .iter()
                .filter(|s| 2 * s.bytes.scattered > s.bytes.total())
                .map(|s| (s, read(upper, s.site).saturating_sub(read(last, s.site))))
                .collect(),
        )
    }

    /// Q at `cache`, whose line size must be one the analysis ran with.
    pub fn at(&self, cache: CacheSpec) -> TrafficAtCache {
        let curve = self
            .curve(cache.line_bytes)
            .unwrap_or_else(|| panic!("no simulation with {}-byte lines", cache.line_bytes));
        TrafficAtCache {
            cache,
            dram: curve.at_bytes(cache.bytes),
            compulsory: curve.compulsory(),
            accessed_bytes: self.accessed_bytes,
        }
    }

    /// Q at cache sizes from one line, doubling, to the first size that
    /// holds every line the kernel touched, with `extra` sizes among them.
    pub fn sweep(&self, line_bytes: u64, extra: &[u64]) -> Vec<CurvePoint> {
        let Some(curve) = self.curve(line_bytes) else {
            return Vec::new();
        };
        let all = curve.lines_touched().max(1) * line_bytes;
        // From the smallest size the simulation resolves.
        let first = line_bytes
            .max(1024)
            .max(curve.resolved_lines() * line_bytes);
        let mut sizes: Vec<u64> =
            std::iter::successors(Some(first), |s| (*s < all).then(|| s.saturating_mul(2)))
                .collect();
        sizes.extend(extra.iter().copied().filter(|&s| s >= line_bytes));
        sizes.sort_unstable();
        sizes.dedup();
        sizes
            .into_iter()
            .map(|cache_bytes| {
                let dram = curve.at_bytes(cache_bytes);
                CurvePoint {
                    cache_bytes,
                    read_bytes: dram.read_bytes,
                    written_bytes: dram.written_bytes,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_specs_parse_with_units_and_lines() {
        let spec = |t: &str| t.parse::<CacheSpec>();
        assert_eq!(
            spec("40MiB/128"),
            Ok(CacheSpec { bytes: 40 << 20, line_bytes: 128 })
        );
        assert_eq!(spec("512k").unwrap().bytes, 512 << 10);
        assert_eq!(spec("1.5MB").unwrap().bytes, 3 << 19);
        assert_eq!(spec("32768").unwrap().line_bytes, 64);
        assert_eq!(spec("40MiB/128").unwrap().to_string(), "40MiB/128");
        assert!(spec("40MiB/96").unwrap_err().contains("power of two"));
        assert!(spec("40 furlongs")
            .unwrap_err()
            .contains("unknown size unit"));
        assert!(spec("32/64").unwrap_err().contains("holds no"));
        assert!(spec("0.3").is_err());
    }

    /// A load of word `w` of buffer 0, by work-item `w % 64` of dispatch
    /// `w / 64` (64 work-items reading words in order).
    fn word_load(w: u64) -> GlobalAccess {
        GlobalAccess {
            fenced: 0,
            offset: 4 * w,
            buffer: 0,
            bytes: 4,
            site: 0,
            dispatch: (w / 64) as u32,
            item: (w % 64) as u32,
            kind: clflow_counts::AccessKind::Load,
            atomic: false,
            phase: 0,
            lanes: 1,
            contiguous: false,
            runs: 1,
            run_step: 0,
        }
    }

    fn report_of(groups: &[Vec<GlobalAccess>], buffer_bytes: u64) -> TrafficReport {
        let mut analysis = TrafficAnalysis::new(&[64, 128, 64]);
        analysis.buffers(&[TraceBuffer {
            label: "a".into(),
            space: "__global",
            bytes: buffer_bytes,
            read_only: false,
        }]);
        for (g, accesses) in groups.iter().enumerate() {
            analysis.work_group(g as u64, accesses);
        }
        analysis.finish()
    }

    #[test]
    fn a_report_answers_at_any_size_and_sweeps_to_the_compulsory_traffic() {
        // Two work-groups each read the same 8 KiB (128 lines of 64 B).
        let group: Vec<GlobalAccess> = (0..2048).map(word_load).collect();
        let report = report_of(&[group.clone(), group], 8192);
        assert_eq!(report.line_sizes(), [64, 128]);
        assert_eq!(report.accessed_bytes, 16384);
        let small = report.at("4KiB/64".parse().unwrap());
        assert_eq!(small.dram.read_bytes, 16384, "too small: read twice");
        let fits = report.at("8KiB/64".parse().unwrap());
        assert_eq!(fits.dram.read_bytes, 8192);
        assert_eq!(fits.compulsory, fits.dram);
        let sweep = report.sweep(64, &[5000]);
        let sizes: Vec<u64> = sweep.iter().map(|p| p.cache_bytes).collect();
        assert_eq!(sizes, [1024, 2048, 4096, 5000, 8192]);
        assert_eq!(sweep.last().unwrap().total(), 8192);
        assert_eq!(report.coalescing.bytes().contiguous, 16384);
        // The hierarchy's levels: into L1 every byte, into L2 what misses a
        // 4 KiB L1 (both reads), into L3 what misses an 8 KiB L2 (one),
        // into DRAM what misses the 32 KiB last level.
        let names = |levels: Vec<LevelBytes>| -> Vec<(String, u64)> {
            levels.into_iter().map(|l| (l.level, l.bytes)).collect()
        };
        let upper = [("L1".to_string(), 4096), ("L2".to_string(), 8192)];
        assert_eq!(
            names(report.levels("32KiB/64".parse().unwrap(), &upper)),
            [
                ("L1".to_string(), 16384),
                ("L2".to_string(), 16384),
                ("L3".to_string(), 8192),
                ("DRAM".to_string(), 8192)
            ]
        );
        // Upper levels no smaller than the last are not above it.
        assert_eq!(
            names(report.levels("4KiB/64".parse().unwrap(), &upper)),
            [("L1".to_string(), 16384), ("DRAM".to_string(), 16384)]
        );
    }

    /// The bytes the page walks step through: the buffers of the sites
    /// that made page strides, each once, not those of the others.
    #[test]
    fn the_walks_bytes_are_their_buffers() {
        let mut analysis = TrafficAnalysis::new(&[64]);
        let buffer = |label: &str, bytes: u64| TraceBuffer {
            label: label.into(),
            space: "__global",
            bytes,
            read_only: false,
        };
        analysis.buffers(&[buffer("walked", 8 << 20), buffer("streamed", 1 << 20)]);
        // Two work-items each walk 100 steps of 32 KiB through buffer 0
        // and store one word of buffer 1.
        let access = |site: u32, buffer: u16, offset: u64, item: u32, dispatch: u32| GlobalAccess {
            fenced: 0,
            offset,
            buffer,
            bytes: 4,
            site,
            dispatch,
            item,
            kind: clflow_counts::AccessKind::Load,
            atomic: false,
            phase: 0,
            lanes: 1,
            contiguous: false,
            runs: 1,
            run_step: 0,
        };
        let mut accesses = Vec::new();
        for k in 0..100u64 {
            for item in 0..2u32 {
                accesses.push(access(
                    0,
                    0,
                    k * 32768 + 4 * u64::from(item),
                    item,
                    k as u32,
                ));
            }
        }
        for item in 0..2u32 {
            accesses.push(GlobalAccess {
                kind: clflow_counts::AccessKind::Store,
                ..access(7, 1, 4 * u64::from(item), item, 1000)
            });
        }
        analysis.work_group(0, &accesses);
        let summary = analysis.finish().summary("1MiB/64".parse().unwrap());
        assert!(summary.coalescing.page_strides() > 0);
        assert_eq!(summary.coalescing.page_walk_bytes, 8 << 20);
    }

    /// A run whose first sixty-fourth of the exact limit, over its first
    /// work-groups, foretells twice the limit or more samples from there,
    /// and may hand over line touches; a shorter one is followed whole.
    #[test]
    fn a_run_foretold_long_samples_early() {
        let run = |groups: u64| run_of_groups(groups, 16, None);
        // 64 touches after 4 groups of 1,000: 16,000 foretold; foreseen
        // after 16 touches, so that the kernel compiles meanwhile.
        let (from, long, foreseen) = run(1000);
        assert_eq!(from, Some(3));
        assert_eq!(foreseen, Some(0));
        let curve = long.curve(64).unwrap();
        assert!(curve.sampled_one_in() > 1);
        assert_eq!(curve.compulsory().read_bytes, 64 * 16 * 1000);
        // Resolved where the order within a group of 16 lines cannot tell.
        assert!(curve.resolved_lines() >= 16 * 16 && curve.resolved_lines().is_power_of_two());
        // 1,600 foretold of 100 groups: followed whole to the end.
        let (from, short, foreseen) = run(100);
        assert_eq!((from, foreseen), (None, None));
        assert_eq!(short.curve(64).unwrap().sampled_one_in(), 1);
        // 300 groups: 4,800 touches, past the limit but not foretold long;
        // foreseen after 16 touches all the same, for it samples at the limit.
        let (from, _, foreseen) = run(300);
        assert_eq!((from, foreseen), (Some(255), Some(0)));
        // A 512 KiB cache probed (8,192 lines, the fewest that let the pass
        // sample): groups of 512 lines may come in another order, groups
        // of 513 may not, and are traced whole.
        let probe = CacheSpec { bytes: 512 << 10, line_bytes: 64 };
        let (from, reordered, _) = run_of_groups(100, 512, Some(probe));
        assert_eq!(from, Some(0));
        // Resolved from 16 times a group's 512 lines.
        assert_eq!(reordered.curve(64).unwrap().resolved_lines(), 8192);
        let (from, sampled, foreseen) = run_of_groups(100, 513, Some(probe));
        // Its first group takes more lines than may come in another order.
        assert_eq!((from, foreseen), (None, None));
        assert!(sampled.curve(64).unwrap().sampled_one_in() > 1);
    }

    /// A run that could not reorder when the analysis would have (too few
    /// work-groups left) says so: the curve is resolved where the sample
    /// alone lets it, not where a reordering would.
    #[test]
    fn a_run_that_never_reorders_resolves_its_curve_by_the_sample_alone() {
        let probe = CacheSpec { bytes: 512 << 10, line_bytes: 64 };
        let mut analysis = grouped_analysis(100, 512, Some(probe));
        for g in 0..100 {
            analysis.take_work_group(g, group_of_lines(g, 512));
            if g == 0 {
                assert!(analysis.reorders());
                analysis.never_reorders();
            }
        }
        let report = analysis.finish();
        let curve = report.curve(64).unwrap();
        assert!(curve.sampled_one_in() > 1);
        assert_eq!(curve.resolved_lines(), 256 * curve.sampled_one_in());
        assert!(curve.resolved_lines() < 8192);
        // And told so before the first access, it never says it does.
        let mut analysis = grouped_analysis(100, 512, Some(probe));
        analysis.never_reorders();
        for g in 0..100 {
            analysis.take_work_group(g, group_of_lines(g, 512));
            assert!(!analysis.reorders() && !analysis.foresees_reordering());
        }
    }

    /// An analysis of `groups` work-groups of `lines` lines each that
    /// samples after 4,096 touches (probing `probe`).
    fn grouped_analysis(groups: u64, lines: u64, probe: Option<CacheSpec>) -> TrafficAnalysis {
        let mut analysis = TrafficAnalysis::new(&[64])
            .probing(&probe.into_iter().collect::<Vec<_>>())
            .sampling_after(4096);
        analysis.buffers(&[TraceBuffer {
            label: "a".into(),
            space: "__global",
            bytes: 64 * lines * groups,
            read_only: false,
        }]);
        analysis.work_groups(groups);
        analysis
    }

    /// Work-group `g`'s loads of a word from each of its `lines` lines.
    fn group_of_lines(g: u64, lines: u64) -> Vec<GlobalAccess> {
        (0..lines)
            .map(|k| word_load(16 * (lines * g + k)))
            .collect()
    }

    /// `groups` work-groups that each load a word from `lines` lines of
    /// their own, through an analysis that samples after 4,096 touches
    /// (probing `probe`): the group after which it reorders, what it
    /// found, and the group after which it foresaw reordering.
    fn run_of_groups(
        groups: u64,
        lines: u64,
        probe: Option<CacheSpec>,
    ) -> (Option<u64>, TrafficReport, Option<u64>) {
        let mut analysis = grouped_analysis(groups, lines, probe);
        let (mut from, mut foreseen) = (None, None);
        for g in 0..groups {
            analysis.take_work_group(g, group_of_lines(g, lines));
            if from.is_none() && analysis.reorders() {
                from = Some(g);
            }
            if foreseen.is_none() && from.is_none() && analysis.foresees_reordering() {
                foreseen = Some(g);
            }
        }
        (from, analysis.finish(), foreseen)
    }

    /// A run past the exact stretch of the simulation: its summary says
    /// it sampled, and the curve starts where the sample resolves it.
    #[test]
    fn a_long_runs_summary_says_it_sampled_and_sweeps_from_where_it_resolves() {
        const WORDS: u64 = 4 << 20;
        let mut analysis = TrafficAnalysis::new(&[64]).simulating_only();
        analysis.buffers(&[TraceBuffer {
            label: "a".into(),
            space: "__global",
            bytes: 4 * WORDS,
            read_only: true,
        }]);
        // Every word of 16 MiB once, then the first quarter again:
        // 5,242,880 touches, past the 4,194,304 followed whole.
        let words = (0..WORDS).chain(0..WORDS / 4);
        let all: Vec<GlobalAccess> = words.map(word_load).collect();
        for (group, accesses) in all.chunks(1 << 16).enumerate() {
            analysis.work_group(group as u64, accesses);
        }
        let report = analysis.finish();
        let summary = report.summary("32MiB/64".parse().unwrap());
        assert_eq!(summary.sampled_one_in, Some(2));
        // 256 followed lines of 1 in 2: from 32 KiB.
        assert_eq!(summary.curve[0].cache_bytes, 32 << 10);
        // The ends exact: every line read once where all fit...
        assert_eq!(summary.compulsory.read_bytes, 16 << 20);
        assert_eq!(summary.dram, summary.compulsory);
        // ...and where none is kept, the quarter read again: its 65,536
        // lines estimated from the 1 in 2 followed.
        let again = report.at("1MiB/64".parse().unwrap()).dram.read_bytes - (16 << 20);
        assert!(again.abs_diff(4 << 20) < (4 << 20) / 100, "{again}");
    }

    /// A second run in another order of work-items gives its curves to
    /// the first run's report, which keeps its own coalescing.
    #[test]
    fn a_report_takes_the_curves_of_a_run_in_another_order() {
        // Two work-items each read 64 lines, a float a line, each line's
        // first float for work-item 0 and its second for work-item 1.
        let load = |item: u64, k: u64, dispatch: u32| GlobalAccess {
            fenced: 0,
            offset: 64 * k + 4 * item,
            buffer: 0,
            bytes: 4,
            site: 0,
            dispatch,
            item: item as u32,
            kind: clflow_counts::AccessKind::Load,
            atomic: false,
            phase: 0,
            lanes: 1,
            contiguous: false,
            runs: 1,
            run_step: 0,
        };
        let lockstep: Vec<GlobalAccess> = (0..64)
            .flat_map(|k| (0..2).map(move |item| load(item, k, k as u32)))
            .collect();
        let one_at_a_time: Vec<GlobalAccess> = (0..2)
            .flat_map(|item| (0..64).map(move |k| load(item, k, (64 * item + k) as u32)))
            .collect();
        let lockstep = report_of(&[lockstep], 4096);
        let mut analysis = TrafficAnalysis::new(&[64]).simulating_only();
        analysis.buffers(&report_of(&[], 4096).buffers);
        analysis.work_group(0, &one_at_a_time);
        let serial = analysis.finish();
        assert!(serial.coalescing.sites.is_empty());
        // A 2 KiB cache holds 32 lines: in lockstep each line is read once,
        // one work-item after the other reads all 64 twice.
        let cache: CacheSpec = "2KiB/64".parse().unwrap();
        assert_eq!(lockstep.at(cache).dram.read_bytes, 4096);
        assert_eq!(serial.at(cache).dram.read_bytes, 8192);
        let merged = lockstep.with_curves_of(serial);
        assert_eq!(merged.at(cache).dram.read_bytes, 8192);
        assert_eq!(merged.line_sizes(), [64, 128]);
        assert_eq!(
            merged.at("2KiB/128".parse().unwrap()),
            lockstep.at("2KiB/128".parse().unwrap())
        );
        assert_eq!(merged.coalescing, lockstep.coalescing);
        assert_eq!(merged.stretch_bytes(), 64 * 64);
    }

    #[test]
    fn a_device_traffic_reads_back_from_the_json_it_writes() {
        // A work-group loads 4 KiB contiguously, stores it with a stride,
        // and bumps one counter atomically: every site kind, every field.
        let access =
            |i: u64, offset: u64, site: u32, kind: clflow_counts::AccessKind| GlobalAccess {
                fenced: 0,
                offset,
                buffer: 0,
                bytes: 4,
                site,
                dispatch: site,
                item: i as u32,
                kind,
                atomic: false,
                phase: 0,
                lanes: 1,
                contiguous: false,
                runs: 1,
                run_step: 0,
            };
        use clflow_counts::AccessKind::{Atomic, Load, Store};
        let group: Vec<GlobalAccess> = (0..1024)
            .map(|i| access(i, 4 * i, 0, Load))
            .chain((0..1024).map(|i| access(i, 4096 + 64 * i, 1, Store)))
            .chain((0..4).map(|i| access(i, 8, 2, Atomic)))
            .collect();
        let mut report = report_of(&[group], 4096 + 64 * 1024);
        report.describe_sites(|site| format!("site {site}"));
        let traffic = DeviceTraffic {
            device: "dev".into(),
            cache_source: "--cache".into(),
            summary: report.summary("16KiB/128".parse().unwrap()),
            levels: Vec::new(),
            cache_gathers: None,
            cache_gather_table: None,
            order: None,
        };
        let json = serde_json::to_value(&traffic).unwrap();
        // The summary is flattened into the device's object, the cache is
        // a struct and the kinds are their names.
        assert_eq!(
            json["cache"],
            serde_json::json!({ "bytes": 16384, "line_bytes": 128 })
        );
        // An atomic's bytes count twice.
        assert_eq!(json["accessed_bytes"], 4096 + 4096 + 4 * 4 * 2);
        let kinds: Vec<&str> = json["coalescing"]["sites"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["load", "store", "atomic"]);
        let back: DeviceTraffic = serde_json::from_value(json).unwrap();
        assert_eq!(back, traffic);
        let text = serde_json::to_string_pretty(&traffic).unwrap();
        assert_eq!(
            serde_json::from_str::<DeviceTraffic>(&text).unwrap(),
            traffic
        );
        assert_eq!(serde_json::to_string_pretty(&back).unwrap(), text);
    }

    #[test]
    fn sizes_print_in_binary_units() {
        assert_eq!(format_size(40 << 20), "40MiB");
        assert_eq!(format_size(3 << 19), "1.50MiB");
        assert_eq!(format_size(100), "100B");
    }

    /// A scattered load reads 256 lines twice, in a permutation each time,
    /// and a contiguous one reads 256 others twice in order: at 4 KiB (64
    /// lines) each second pass misses again, at 32 KiB it hits. The last
    /// level serves the scattered site's second pass, 256 lines; the
    /// contiguous site's do not count.
    #[test]
    fn cache_gathers_count_the_scattered_loads_the_last_level_serves() {
        // Each site reads a buffer of its own.
        let access = |site: u32, item: u64, line: u64, dispatch: u32| GlobalAccess {
            fenced: 0,
            offset: 64 * line,
            buffer: site as u16,
            bytes: 4,
            site,
            dispatch,
            item: item as u32,
            kind: clflow_counts::AccessKind::Load,
            atomic: false,
            phase: 0,
            lanes: 1,
            contiguous: false,
            runs: 1,
            run_step: 0,
        };
        let mut group = Vec::new();
        for pass in 0..2 {
            group.extend((0..256).map(|i| access(0, i, (i * 97) % 256, pass)));
            group.extend((0..256).map(|i| access(1, i, 256 + i, 2 + pass)));
        }
        let (small, large): (CacheSpec, CacheSpec) =
            ("4KiB/64".parse().unwrap(), "32KiB/64".parse().unwrap());
        let mut analysis = TrafficAnalysis::new(&[64]).probing(&[small, large]);
        let buffer = |label: &str, bytes: u64| TraceBuffer {
            label: label.into(),
            space: "__global",
            bytes,
            read_only: true,
        };
        analysis.buffers(&[buffer("a", 64 * 512), buffer("b", 64 * 1024)]);
        analysis.work_group(0, &group);
        let report = analysis.finish();
        assert_eq!(report.cache_gathers(large, small.bytes), Some(256));
        // They gather from `a` alone, 32 KiB.
        assert_eq!(
            report.cache_gather_table(large, small.bytes),
            Some(64 * 512)
        );
        // Without a probe at the level above, no answer.
        assert_eq!(report.cache_gathers(large, 8192), None);
        assert_eq!(report.cache_gather_table(large, 8192), None);
    }
}
