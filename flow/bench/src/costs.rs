//! What a work-item pays beyond throughput (`kernels/bench/costs.cl`): an
//! operation of a chain of dependent ones, an atomic update of local
//! memory, a work-group barrier, a mispredicted branch. Each kernel is
//! calibrated to run about as long as a compute benchmark, then timed from
//! its profiling events, median of the plan's repetitions; the rate is
//! operations of all work-items per second. A mispredicted branch's is
//! the branch kernel's extra time with random outcomes (half of them
//! mispredicted) over the same kernel whose branches always go one way.
//! Scattered loads from the last-level cache read a table of a quarter of
//! it (the cache the driver reports), where the caches above it hold
//! little, and tables of a 4th, 16th and 64th of that, of which the
//! caches above and the TLB hold more. A loop whose float sum is carried
//! across a kept call gives the rate of such trips. Loads a page apart in
//! each work-item's own walk stride over a 128 MiB table, in walks of 64
//! to 4,096 steps a work-item (a short walk's pages and lines stay in the
//! TLB and caches for the work-items after it); the same walks storing
//! alone, and copying one such table to another, give the rates of its
//! stores (a CPU pays more for a walk of stores alone). All of them again
//! over a 16 MiB table, which the last-level cache keeps. Loads from a
//! local table between a loop's barriers, at addresses that do not count
//! up along the work-items, give the rate of the lanes a vectoriser
//! gathers. Calls of `sin`, `cos`, `exp`, `log` and `pow` between barriers
//! (which a work-group vectoriser runs with the work-items together) and
//! in a loop of each work-item's own give each builtin's rate both ways,
//! and a page walk copying the table (a loop striding by the global size),
//! with a call of it on each step's value, the rate of such steps; the
//! same walk with a call the compiler keeps a step (copying, and storing
//! alone), the rate of a loop that calls a function of its own a step.
//! Work-groups of 16, 64 and 256 work-items that each walk down columns of
//! a 256 MiB table of 32 KiB rows, 16 rows between barriers, give the rate
//! of lines read in visits of 1, 4 and 16 lines to their pages.
//! Work-groups of 16 work-items that each walk a window of their own, every
//! work-item copying one element of each line, give the rate of accesses a
//! line apart in walks of 1 to 64 MiB a work-item.

use crate::catalog::source;
use crate::error::{BenchError, Result};
use crate::progress::{Event, Step, Steps};
use crate::sizing::{Mode, Plan};
use clflow_core::{Access, ArgValue, ElementType, Launch, LaunchArg, NdRange, ScalarType};
use clflow_devices::{
    BuiltinRates, CallWalkRates, GatherRate, LaneRates, LineWalkRate, OpCosts, VisitRate, WalkRate,
};
use clflow_ocl::{DeviceInfo, OclDevice, PreparedLaunch, ProgramSource};

const SOURCE: &str = include_str!("../../../kernels/bench/costs.cl");

/// Operations unrolled per trip of each timed loop.
pub const ROUNDS: u64 = 16;

/// Work-items per work-group (the kernels' local arrays hold 256).
const GROUP: u64 = 64;

/// The trips a calibration launch runs.
const CALIBRATION_TRIPS: u32 = 16;

/// The walk lengths the page-stride kernels are timed at, in steps a
/// work-item: from what a first-level TLB keeps to far beyond it. The
/// longest is the walk of `OpCosts::page_strides_per_s`.
pub const WALK_STEPS: [u32; 4] = [64, 256, 1024, 4096];

/// The walk lengths through the small table: from where a walk leaves the
/// first-level caches to past the second-level TLB's reach (2,048 pages on
/// the machine these were chosen on, where the rate falls by half between
/// 2,048 and 3,072 steps). Shorter walks take the 256 steps' rate.
pub const SMALL_WALK_STEPS: [u32; 4] = [256, 1024, 2048, 4096];

/// The table the walks step through: 128 MiB, an input of the size that
/// kernels walk page by page, far beyond any core's own caches, its
/// longest walk stepping 32 KiB (8 pages, as a loop over 8,192 work-items'
/// floats does). Not sized by the last-level cache: a virtual machine's
/// driver reports the host's whole shared cache (480 MiB on one), of
/// which it has a share, and a table four times that steps 256 KiB, whose
/// lines all fall in one set of a core's caches, as no kernel's walk does
/// (0.15 G loads/s at 4,096 steps there, against 0.20 G/s over 128 MiB and
/// the 0.19 G/s a pyopencl elementwise kernel's walk runs at).
const WALK_TABLE_BYTES: u64 = 128 << 20;

/// The same walks through 16 MiB ([`SMALL_WALK_STEPS`] long), which the
/// last-level cache keeps from one work-item's walk to the next and from
/// launch to launch, as a GEMM's walks down 4 MiB matrices find them
/// (0.58 and 0.47 G loads/s at 1,024 and 2,048 steps here, against 0.30
/// G/s at 1,024 over 128 MiB). The longest walk steps a page (4,096 steps
/// of 4 KiB).
const SMALL_WALK_TABLE_BYTES: u64 = 16 << 20;

/// The bytes each work-item of the line walks moves on to (its loads' and
/// stores' lines): from what a core's second-level cache keeps to what no
/// last-level cache does.
pub const LINE_WALK_BYTES: [u64; 4] = [1 << 20, 4 << 20, 16 << 20, 64 << 20];

/// The column walks' table: rows of 8,192 `uint`s (32 KiB, the work-items
/// of a launch), 8,192 of them (256 MiB, the size of a GEMV's matrix of
/// 8,192 x 8,192 floats).
const COLUMN_WALK_WIDTH: u64 = 8192;
const COLUMN_WALK_ROWS: u64 = 8192;

/// The lines of a row's page each work-group of the column walks reads at
/// a time: work-groups of 16, 64 and 256 work-items.
const COLUMN_VISIT_LINES: [u32; 3] = [1, 4, 16];

/// The line walks' tables: 128 MiB each, 32 windows of the longest walk.
const LINE_WALK_TABLE_BYTES: u64 = 128 << 20;

/// Work-items per work-group of the line walks: one per `uint` of a
/// 64-byte line.
const LINE_WALK_GROUP: u64 = 16;

/// The kernels, with the id of their step and the operations each runs per
/// work-item and trip.
const KERNELS: [(&str, &str, u64); 5] = [
    ("bench_chain", "chain", 2 * ROUNDS),
    ("bench_local_atomic", "local-atomic", ROUNDS),
    ("bench_barrier", "barrier", 2),
    ("bench_call_chain", "call-chain", 1),
    ("bench_local_gather", "local-gather", ROUNDS),
];

/// What a page walk does a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    Loads,
    Stores,
    Copies,
}

/// How a builtin is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    /// Between barriers, the work-items together.
    Vector,
    /// In a loop of each work-item's own.
    Scalar,
    /// A call a step of a page walk copying the table.
    Walk,
}

/// One timed kernel of the cost benchmarks: a step of the run, whose rate
/// becomes one figure of [`OpCosts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    /// One of [`KERNELS`]: its operations of all work-items a second.
    Kernel(usize),
    /// The branch kernel with random outcomes, then steady ones.
    Branch,
    /// Scattered loads from a table of `items` uints.
    CacheGather { items: u64 },
    PageWalk {
        table_bytes: u64,
        steps: u32,
        walk: Walk,
    },
    /// Work-groups walking windows, a work-item's loads and stores
    /// `walk_bytes` together.
    LineWalk { walk_bytes: u64 },
    /// Column walks reading `lines` lines of a row's page at a time.
    ColumnWalk { lines: u32 },
    /// A builtin of [`BuiltinRates::NAMES`] by index.
    Builtin { name: usize, call: Call },
    /// A page walk with a kept call a step, storing alone or copying.
    CallWalk { stores: bool },
}

impl Probe {
    /// The step's id, as progress and errors name it.
    fn id(self) -> String {
        match self {
            Probe::Kernel(k) => format!("costs/{}", KERNELS[k].1),
            Probe::Branch => "costs/branch".into(),
            Probe::CacheGather { items } => format!("costs/cache-gather/{}", size(4 * items)),
            Probe::PageWalk { table_bytes, steps, walk } => format!(
                "costs/page-walk/{}/{steps}/{}",
                size(table_bytes),
                match walk {
                    Walk::Loads => "loads",
                    Walk::Stores => "stores",
                    Walk::Copies => "copies",
                }
            ),
            Probe::LineWalk { walk_bytes } => format!("costs/line-walk/{}", size(walk_bytes)),
            Probe::ColumnWalk { lines } => format!("costs/column-walk/{lines}"),
            Probe::Builtin { name, call } => format!(
                "costs/builtin/{}/{}",
                BuiltinRates::NAMES[name],
                match call {
                    Call::Vector => "vector",
                    Call::Scalar => "scalar",
                    Call::Walk => "walk",
                }
            ),
            Probe::CallWalk { stores } => {
                format!(
                    "costs/call-walk/{}",
                    if stores { "stores" } else { "copies" }
                )
            }
        }
    }

    /// The bytes of the tables it reads and writes.
    fn table_bytes(self, plan: &Plan) -> u64 {
        match self {
            Probe::Kernel(_) | Probe::Branch => 0,
            Probe::CacheGather { items } => 4 * items,
            Probe::PageWalk { table_bytes, walk, .. } => {
                table_bytes * if walk == Walk::Copies { 2 } else { 1 }
            }
            Probe::LineWalk { .. } => 2 * LINE_WALK_TABLE_BYTES / quick_share(plan),
            Probe::ColumnWalk { .. } => {
                4 * COLUMN_WALK_WIDTH * COLUMN_WALK_ROWS / quick_share(plan)
            }
            Probe::Builtin { call, .. } => match call {
                Call::Walk => 2 * WALK_TABLE_BYTES / quick_share(plan),
                Call::Vector | Call::Scalar => 0,
            },
            Probe::CallWalk { .. } => 2 * WALK_TABLE_BYTES / quick_share(plan),
        }
    }

    /// Its expected seconds: the launches it makes at the plan's target
    /// time (the branch kernel's two timings), and its tables made, sent
    /// and restored before each launch.
    fn expected_s(self, plan: &Plan) -> f64 {
        let launches = (CALIBRATION_LAUNCHES + plan.warmups.max(1) + timed_launches(plan)) as f64;
        let timings = if self == Probe::Branch { 2.0 } else { 1.0 };
        let target_s = plan.compute_target_ns as f64 * 1e-9;
        let tables_s = self.table_bytes(plan) as f64 * TABLE_S_PER_BYTE * (2.0 + launches);
        launches * timings * target_s + tables_s
    }
}

/// Seconds a byte of a table takes to make, send or restore (4 GB/s).
const TABLE_S_PER_BYTE: f64 = 0.25e-9;

/// `2MiB`, `128MiB`, `16KiB`: a table's or walk's size in an id.
fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{}MiB", bytes >> 20)
    } else {
        format!("{}KiB", bytes >> 10)
    }
}

/// Launches a calibration makes: one trip, and where that was short, the
/// calibration trips.
const CALIBRATION_LAUNCHES: usize = 2;

/// Launches timed at the calibrated trips.
fn timed_launches(plan: &Plan) -> usize {
    plan.repetitions.max(MIN_LAUNCHES)
}

/// The fewest launches a median is taken over.
const MIN_LAUNCHES: usize = 3;

/// A launch whose one trip lasts this many target times or more is long.
const LONG_LAUNCH_TARGETS: u64 = 4;

/// A launch's trips as calibrated, and whether one trip is long.
#[derive(Debug, Clone, Copy)]
struct Calibrated {
    trips: u32,
    long: bool,
}

/// Every timing the cost benchmarks make on `device`, in the order they run.
fn probes(device: &DeviceInfo, plan: &Plan) -> Vec<Probe> {
    let mut probes: Vec<Probe> = (0..KERNELS.len()).map(Probe::Kernel).collect();
    probes.push(Probe::Branch);
    probes.extend(cache_gather_items(device).map(|items| Probe::CacheGather { items }));
    for (table_bytes, lengths) in [
        (WALK_TABLE_BYTES, WALK_STEPS),
        (SMALL_WALK_TABLE_BYTES, SMALL_WALK_STEPS),
    ] {
        for steps in lengths {
            for walk in [Walk::Loads, Walk::Stores, Walk::Copies] {
                probes.push(Probe::PageWalk { table_bytes, steps, walk });
            }
        }
    }
    probes.extend(
        LINE_WALK_BYTES.map(|bytes| Probe::LineWalk { walk_bytes: bytes / quick_share(plan) }),
    );
    probes.extend(COLUMN_VISIT_LINES.map(|lines| Probe::ColumnWalk { lines }));
    for name in 0..BuiltinRates::NAMES.len() {
        for call in [Call::Vector, Call::Scalar, Call::Walk] {
            probes.push(Probe::Builtin { name, call });
        }
    }
    probes.extend([false, true].map(|stores| Probe::CallWalk { stores }));
    probes
}

/// Tables of a quarter of the last-level cache, in a power of two, and of
/// a 4th, 16th and 64th of that, smallest first: their uints.
fn cache_gather_items(device: &DeviceInfo) -> [u64; 4] {
    let largest = 1u64 << ((device.global_cache_bytes / 16).max(1024)).ilog2();
    [3, 2, 1, 0].map(|k| (largest >> (2 * k)).max(1024))
}

/// The steps [`measure`] runs on `device`, with their expected seconds.
pub fn steps(device: &DeviceInfo, plan: &Plan) -> Vec<Step> {
    probes(device, plan)
        .into_iter()
        .map(|p| Step::new(p.id(), p.expected_s(plan)))
        .collect()
}

/// Whether a run limited to benchmarks whose id contains `only` takes the
/// cost benchmarks (all of them: the model takes their figures together).
pub fn wanted(only: Option<&str>, steps: &[Step]) -> bool {
    only.is_none_or(|only| "costs".contains(only) || steps.iter().any(|s| s.id.contains(only)))
}

/// Times every cost kernel on the plan's compute work-items, one step a
/// timing.
pub fn measure(
    device: &OclDevice,
    plan: &Plan,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<OpCosts> {
    let (origin, text) = source("costs.cl", SOURCE)?;
    let timer = Timer {
        device,
        program: ProgramSource::from_text(&origin, &text, &format!("-DROUNDS={ROUNDS}")),
        plan,
        work_items: plan.compute_work_items.next_multiple_of(GROUP),
    };
    let probes = probes(&device.info, plan);
    let planned = steps(&device.info, plan);
    let mut steps = Steps::new(&planned, on_event);
    let mut rates = Vec::with_capacity(probes.len());
    for probe in &probes {
        let rate = steps.run(
            &probe.id(),
            || timer.rate(*probe),
            |rate| match rate {
                Some(rate) => format!("{:.3} G/s", rate * 1e-9),
                None => "costs nothing".into(),
            },
        )?;
        rates.push((*probe, rate));
    }
    debug_assert!(steps.finished());
    Ok(assemble(&rates, plan))
}

/// The profile's costs from each probe's rate.
fn assemble(rates: &[(Probe, Option<f64>)], plan: &Plan) -> OpCosts {
    let optional = |probe: Probe| {
        rates
            .iter()
            .find(|(p, _)| *p == probe)
            .and_then(|(_, rate)| *rate)
    };
    let rate = |probe: Probe| optional(probe).unwrap_or_default();
    let walks = |table_bytes: u64, lengths: [u32; 4]| {
        lengths.map(|steps| {
            let walk = |walk| rate(Probe::PageWalk { table_bytes, steps, walk });
            WalkRate {
                steps,
                loads_per_s: walk(Walk::Loads),
                stores_per_s: walk(Walk::Stores),
                copies_per_s: walk(Walk::Copies),
            }
        })
    };
    let page_walks = walks(WALK_TABLE_BYTES, WALK_STEPS);
    let cache_gather_tables = rates.iter().filter_map(|(probe, rate)| match probe {
        Probe::CacheGather { items } => {
            Some(GatherRate { table_bytes: 4 * items, per_s: rate.unwrap_or_default() })
        }
        _ => None,
    });
    let cache_gather_tables: [GatherRate; 4] = cache_gather_tables
        .collect::<Vec<_>>()
        .try_into()
        .expect("four gather tables are probed");
    let builtin = |name| {
        let call = |call| rate(Probe::Builtin { name, call });
        LaneRates {
            vector_per_s: call(Call::Vector),
            scalar_per_s: call(Call::Scalar),
            walk_per_s: Some(call(Call::Walk)),
        }
    };
    OpCosts {
        chain_ops_per_s: rate(Probe::Kernel(0)),
        local_atomics_per_s: rate(Probe::Kernel(1)),
        barriers_per_s: rate(Probe::Kernel(2)),
        mispredicts_per_s: optional(Probe::Branch),
        cache_gathers_per_s: Some(cache_gather_tables[3].per_s),
        cache_gather_tables: Some(cache_gather_tables),
        carried_calls_per_s: Some(rate(Probe::Kernel(3))),
        page_strides_per_s: Some(page_walks[3].loads_per_s),
        page_walks: Some(page_walks),
        walk_table_bytes: Some(WALK_TABLE_BYTES),
        small_page_walks: Some(walks(SMALL_WALK_TABLE_BYTES, SMALL_WALK_STEPS)),
        small_walk_table_bytes: Some(SMALL_WALK_TABLE_BYTES),
        gathered_lanes_per_s: Some(rate(Probe::Kernel(4))),
        builtins: Some(BuiltinRates::from_all([0, 1, 2, 3, 4].map(builtin))),
        line_walks: Some(LINE_WALK_BYTES.map(|bytes| {
            let walk_bytes = bytes / quick_share(plan);
            LineWalkRate { walk_bytes, per_s: rate(Probe::LineWalk { walk_bytes }) }
        })),
        call_walks: Some(CallWalkRates {
            copies_per_s: rate(Probe::CallWalk { stores: false }),
            stores_per_s: rate(Probe::CallWalk { stores: true }),
        }),
        column_walks: Some(
            COLUMN_VISIT_LINES
                .map(|lines| VisitRate { lines, per_s: rate(Probe::ColumnWalk { lines }) }),
        ),
        quick: plan.mode == Mode::Quick,
    }
}

/// Times the cost kernels of one program on one device.
struct Timer<'a> {
    device: &'a OclDevice,
    program: ProgramSource,
    plan: &'a Plan,
    /// Work-items of every launch but the line and column walks'.
    work_items: u64,
}

impl Timer<'_> {
    /// The probe's rate: operations, accesses, steps or lines a second;
    /// `None` for a branch whose random outcomes cost nothing (a device that
    /// runs both ways, as a GPU's diverged warp does, pays in issue instead).
    fn rate(&self, probe: Probe) -> Result<Option<f64>> {
        let work_items = self.work_items;
        let per_trip_rate = |kernel: &str, extra: Vec<LaunchArg>, per_trip: u64| {
            let (trips, ns) = self.timed(self.launch(kernel, work_items, extra))?;
            Ok::<f64, BenchError>(per_second(work_items * u64::from(trips) * per_trip, ns))
        };
        Ok(Some(match probe {
            Probe::Kernel(k) => per_trip_rate(KERNELS[k].0, vec![], KERNELS[k].2)?,
            Probe::Branch => return self.mispredicts(),
            Probe::CacheGather { items } => {
                let table = vec![
                    uint_table("table", items, Access::ReadOnly),
                    uint_arg("mask", (items - 1) as u32),
                ];
                per_trip_rate("bench_cache_gather", table, ROUNDS)?
            }
            Probe::PageWalk { table_bytes, steps, walk } => {
                self.page_walk(table_bytes, steps, walk)?
            }
            Probe::LineWalk { walk_bytes } => self.line_walk(walk_bytes)?,
            Probe::ColumnWalk { lines } => self.column_walk(lines)?,
            Probe::Builtin { name, call } => {
                let name = BuiltinRates::NAMES[name];
                match call {
                    Call::Vector => per_trip_rate(&format!("bench_{name}_vector"), vec![], ROUNDS)?,
                    Call::Scalar => per_trip_rate(&format!("bench_{name}_scalar"), vec![], ROUNDS)?,
                    Call::Walk => self.called_walk(&format!("bench_{name}_walk"))?,
                }
            }
            // Walks of `float4` steps: a step a quarter of the table's items.
            Probe::CallWalk { stores } => {
                let kernel = if stores {
                    "bench_call_store_walk"
                } else {
                    "bench_call_walk"
                };
                self.called_walk(kernel)? / 4.0
            }
        }))
    }

    /// `kernel` over `work_items` in groups of [`GROUP`], with `extra`
    /// arguments after the output and the trips.
    fn launch(&self, kernel: &str, work_items: u64, extra: Vec<LaunchArg>) -> Launch {
        let mut launch = cost_launch(kernel, work_items, 1);
        launch.args.extend(extra);
        launch
    }

    /// Mispredicted branches a second: the branch kernel's extra time with
    /// random outcomes (half of them mispredicted) over steady ones.
    fn mispredicts(&self) -> Result<Option<f64>> {
        let launch = self.launch(
            "bench_branch",
            self.work_items,
            vec![uint_arg("pattern", 1)],
        );
        let mut prepared = self.prepare(&launch)?;
        let calibrated = self.calibrate(&mut prepared)?;
        let random = self.median_ns(&mut prepared, calibrated)?;
        prepared
            .set_scalar(PATTERN_ARG, &0u32.to_le_bytes())
            .map_err(|e| self.ocl(&launch.kernel, e))?;
        let steady = self.median_ns(&mut prepared, calibrated)?;
        let mispredicted = (self.work_items * u64::from(calibrated.trips) * ROUNDS) as f64 / 2.0;
        Ok((random > steady).then(|| mispredicted / ((random - steady) as f64 * 1e-9)))
    }

    /// Accesses a second of each work-item walking a table of
    /// `table_bytes` from its id on, `steps` steps.
    fn page_walk(&self, table_bytes: u64, steps: u32, walk: Walk) -> Result<f64> {
        let items = table_bytes / 4;
        let step = items / u64::from(steps);
        let access = match walk {
            Walk::Loads => Access::ReadOnly,
            Walk::Stores | Walk::Copies => Access::ReadWrite,
        };
        let mut args = vec![
            uint_table("table", items, access),
            uint_arg("n", items as u32),
            uint_arg("step", step as u32),
        ];
        let (kernel, per_step) = match walk {
            Walk::Loads => ("bench_page_stride", 1),
            Walk::Stores => ("bench_page_stride_store", 1),
            Walk::Copies => {
                args.push(uint_table("copy", items, Access::ReadWrite));
                ("bench_page_stride_copy", 2)
            }
        };
        let steps_per_trip: u64 = (0..self.work_items.min(items))
            .map(|g| (items - g).div_ceil(step))
            .sum();
        let (trips, ns) = self.timed(self.launch(kernel, self.work_items, args))?;
        Ok(per_second(u64::from(trips) * steps_per_trip * per_step, ns))
    }

    /// Steps a second of a walk copying the large table (a 16th of it where
    /// quick), striding by the global size, with a call of `kernel`'s a step.
    fn called_walk(&self, kernel: &str) -> Result<f64> {
        let items = WALK_TABLE_BYTES / 4 / quick_share(self.plan);
        let args = vec![
            uint_table("table", items, Access::ReadOnly),
            uint_arg("n", items as u32),
            uint_table("copy", items, Access::ReadWrite),
        ];
        let (trips, ns) = self.timed(self.launch(kernel, self.work_items, args))?;
        Ok(per_second(items * u64::from(trips), ns))
    }

    /// Accesses a second of work-groups of [`LINE_WALK_GROUP`] walking
    /// windows of their own, `walk_bytes` of loads and stores a work-item.
    fn line_walk(&self, walk_bytes: u64) -> Result<f64> {
        let items = LINE_WALK_TABLE_BYTES / 4 / quick_share(self.plan);
        // A window's loads and stores together make the walk.
        let window = walk_bytes / 8;
        let args = vec![
            uint_table("table", items, Access::ReadOnly),
            uint_table("copy", items, Access::ReadWrite),
            uint_arg("window", window as u32),
        ];
        let mut launch = self.launch("bench_line_walk", items / window * LINE_WALK_GROUP, args);
        launch.range.local = Some([LINE_WALK_GROUP, 1, 1]);
        let (trips, ns) = self.timed(launch)?;
        Ok(per_second(2 * items * u64::from(trips), ns))
    }

    /// Lines a second of column walks whose work-groups read `lines` lines
    /// of each row's page at a time.
    fn column_walk(&self, lines: u32) -> Result<f64> {
        let rows = COLUMN_WALK_ROWS / quick_share(self.plan);
        let items = rows * COLUMN_WALK_WIDTH;
        let args = vec![
            uint_table("table", items, Access::ReadOnly),
            uint_arg("rows", rows as u32),
        ];
        let mut launch = self.launch("bench_column_walk", COLUMN_WALK_WIDTH, args);
        // A line holds 16 of the uints, one a work-item.
        launch.range.local = Some([u64::from(lines) * 16, 1, 1]);
        let (trips, ns) = self.timed(launch)?;
        Ok(per_second(items / 16 * u64::from(trips), ns))
    }

    /// `launch` built once, its trips calibrated, then timed: the trips and
    /// the median time at them.
    fn timed(&self, launch: Launch) -> Result<(u32, u64)> {
        let mut prepared = self.prepare(&launch)?;
        let calibrated = self.calibrate(&mut prepared)?;
        Ok((calibrated.trips, self.median_ns(&mut prepared, calibrated)?))
    }

    /// Built, its buffers made, warmed up at one trip.
    fn prepare<'l>(&self, launch: &'l Launch) -> Result<PreparedLaunch<'l>> {
        let mut prepared = PreparedLaunch::new(self.device, &self.program, launch)
            .map_err(|e| self.ocl(&launch.kernel, e))?;
        prepared
            .time_repeated(self.plan.warmups.max(1))
            .map_err(|e| self.ocl(&launch.kernel, e))?;
        Ok(prepared)
    }

    /// Sets the trips that make a launch last about a compute benchmark's
    /// time: from one trip where that lasts a [`CALIBRATION_TRIPS`]th of it
    /// or more, else from that many trips (a short trip's time is mostly
    /// the launch's own).
    fn calibrate(&self, prepared: &mut PreparedLaunch<'_>) -> Result<Calibrated> {
        let target = self.plan.compute_target_ns;
        let once = self.launch_ns(prepared, 1)?;
        let (trips, ns) = if once.saturating_mul(u64::from(CALIBRATION_TRIPS)) >= target {
            (1, once)
        } else {
            (
                CALIBRATION_TRIPS,
                self.launch_ns(prepared, CALIBRATION_TRIPS)?,
            )
        };
        let trips = (u64::from(trips) * target)
            .div_ceil(ns)
            .clamp(1, u64::from(u32::MAX / 2)) as u32;
        self.set_trips(prepared, trips)?;
        Ok(Calibrated { trips, long: once >= LONG_LAUNCH_TARGETS * target })
    }

    /// One launch at `trips` trips: its time.
    fn launch_ns(&self, prepared: &mut PreparedLaunch<'_>, trips: u32) -> Result<u64> {
        self.set_trips(prepared, trips)?;
        let times = prepared
            .time_repeated(1)
            .map_err(|e| self.ocl(prepared.kernel_name(), e))?;
        Ok(times[0].max(1))
    }

    fn set_trips(&self, prepared: &mut PreparedLaunch<'_>, trips: u32) -> Result<()> {
        prepared
            .set_scalar(TRIPS_ARG, &trips.to_le_bytes())
            .map_err(|e| self.ocl(prepared.kernel_name(), e))
    }

    /// The median time over the timed launches: the fewest where one trip
    /// lasts many target times (a builtin's call a step of a 128 MiB walk,
    /// seconds a launch), whose times vary little.
    fn median_ns(&self, prepared: &mut PreparedLaunch<'_>, calibrated: Calibrated) -> Result<u64> {
        let launches = match calibrated.long {
            true => MIN_LAUNCHES,
            false => timed_launches(self.plan),
        };
        let mut times = prepared
            .time_repeated(launches)
            .map_err(|e| self.ocl(prepared.kernel_name(), e))?;
        times.sort_unstable();
        Ok(times[times.len() / 2].max(1))
    }

    fn ocl(&self, kernel: &str, source: clflow_ocl::OclError) -> BenchError {
        BenchError::Ocl { benchmark: format!("costs/{kernel}"), source }
    }
}

/// The argument indexes of the trips and the branch kernel's pattern
/// (after the output).
const TRIPS_ARG: usize = 1;
const PATTERN_ARG: usize = 2;

/// `count` operations in `ns` nanoseconds, per second.
fn per_second(count: u64, ns: u64) -> f64 {
    count as f64 / (ns as f64 * 1e-9)
}

/// The share of their tables the slowest walks take where the plan is
/// quick (seconds, not minutes): a 16th.
fn quick_share(plan: &Plan) -> u64 {
    match plan.mode {
        Mode::Quick => 16,
        Mode::Full => 1,
    }
}

/// A `uint` buffer holding 0, 1, 2 ... `items - 1`.
fn uint_table(name: &str, items: u64, access: Access) -> LaunchArg {
    LaunchArg {
        name: Some(name.into()),
        value: ArgValue::Buffer {
            ty: ElementType::scalar(ScalarType::UInt),
            access,
            bytes: (0..items as u32).flat_map(u32::to_le_bytes).collect(),
        },
    }
}

/// A `uint` argument.
fn uint_arg(name: &str, value: u32) -> LaunchArg {
    LaunchArg {
        name: Some(name.into()),
        value: ArgValue::Scalar { bytes: value.to_le_bytes().to_vec() },
    }
}

/// `kernel` over `work_items` in groups of [`GROUP`], `trips` trips each.
fn cost_launch(kernel: &str, work_items: u64, trips: u32) -> Launch {
    let out_items = work_items.max(256);
    Launch {
        kernel: kernel.into(),
        range: NdRange {
            dims: 1,
            global: [work_items, 1, 1],
            local: Some([GROUP, 1, 1]),
            offset: [0; 3],
        },
        args: vec![
            LaunchArg {
                name: Some("out".into()),
                value: ArgValue::Buffer {
                    ty: ElementType::scalar(ScalarType::UInt),
                    access: Access::ReadWrite,
                    bytes: vec![0; (out_items * 4) as usize],
                },
            },
            uint_arg("reps", trips),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::device;
    use std::collections::HashSet;

    const MIB: u64 = 1 << 20;

    #[test]
    fn every_probe_is_a_step_of_its_own() {
        // This machine's PoCL device: its driver reports a 480 MiB cache.
        let pocl = device(4 << 30, 1 << 30, 480 * MIB, 2);
        let plan = Plan::for_device(&pocl, Mode::Full).unwrap();
        let planned = steps(&pocl, &plan);
        let ids: HashSet<&str> = planned.iter().map(|s| s.id.as_str()).collect();
        assert_eq!((planned.len(), ids.len()), (58, 58));
        assert_eq!(planned[0].id, "costs/chain");
        for id in [
            "costs/branch",
            "costs/cache-gather/1MiB",
            "costs/cache-gather/64MiB",
            "costs/page-walk/128MiB/4096/copies",
            "costs/page-walk/16MiB/256/loads",
            "costs/line-walk/64MiB",
            "costs/column-walk/16",
            "costs/builtin/pow/walk",
            "costs/call-walk/stores",
        ] {
            assert!(ids.contains(id), "{id} not among {ids:?}");
        }
        // Each step at least launches its warm-up, calibration and timed
        // launches at the target time.
        let least = 9.0 * plan.compute_target_ns as f64 * 1e-9;
        assert!(planned.iter().all(|s| s.expected_s >= least), "{planned:?}");
        // A quick plan walks a 16th of the line walks' windows.
        let quick = Plan::for_device(&pocl, Mode::Quick).unwrap();
        let quick_ids: Vec<String> = steps(&pocl, &quick).into_iter().map(|s| s.id).collect();
        assert!(quick_ids.iter().any(|id| id == "costs/line-walk/64KiB"));
        assert_eq!(quick_ids.len(), 58);
    }

    #[test]
    fn only_a_cost_kernel_or_costs_selects_the_cost_benchmarks() {
        let pocl = device(4 << 30, 1 << 30, 480 * MIB, 2);
        let planned = steps(&pocl, &Plan::for_device(&pocl, Mode::Quick).unwrap());
        for only in [
            None,
            Some("costs"),
            Some("cost"),
            Some("page-walk"),
            Some("builtin/sin"),
        ] {
            assert!(wanted(only, &planned), "{only:?}");
        }
        for only in ["triad/", "mad-chain/float", "launch"] {
            assert!(!wanted(Some(only), &planned), "{only}");
        }
    }

    #[test]
    fn each_probe_rate_lands_in_its_own_figure() {
        let pocl = device(4 << 30, 1 << 30, 480 * MIB, 2);
        let plan = Plan::for_device(&pocl, Mode::Quick).unwrap();
        // Rate k + 1 for the k-th probe; the branch's costs nothing.
        let rates: Vec<(Probe, Option<f64>)> = probes(&pocl, &plan)
            .into_iter()
            .enumerate()
            .map(|(k, p)| (p, (p != Probe::Branch).then_some(k as f64 + 1.0)))
            .collect();
        let costs = assemble(&rates, &plan);
        assert_eq!(
            (
                costs.chain_ops_per_s,
                costs.local_atomics_per_s,
                costs.barriers_per_s
            ),
            (1.0, 2.0, 3.0)
        );
        assert_eq!(costs.carried_calls_per_s, Some(4.0));
        assert_eq!(costs.gathered_lanes_per_s, Some(5.0));
        assert_eq!(costs.mispredicts_per_s, None);
        let tables = costs.cache_gather_tables.unwrap();
        assert_eq!(tables.map(|t| t.per_s), [7.0, 8.0, 9.0, 10.0]);
        assert_eq!(tables[0].table_bytes, MIB);
        assert_eq!(costs.cache_gathers_per_s, Some(10.0));
        // Page walks: loads, stores, copies at each length, the large table first.
        let walks = costs.page_walks.unwrap();
        assert_eq!(
            (
                walks[0].loads_per_s,
                walks[0].stores_per_s,
                walks[0].copies_per_s
            ),
            (11.0, 12.0, 13.0)
        );
        assert_eq!(costs.page_strides_per_s, Some(walks[3].loads_per_s));
        assert_eq!(costs.small_page_walks.unwrap()[3].copies_per_s, 34.0);
        let lines = costs.line_walks.unwrap();
        assert_eq!((lines[0].walk_bytes, lines[0].per_s), (MIB / 16, 35.0));
        assert_eq!(
            costs.column_walks.unwrap().map(|c| c.per_s),
            [39.0, 40.0, 41.0]
        );
        let sin = costs.builtins.unwrap().all()[0];
        assert_eq!(
            (sin.vector_per_s, sin.scalar_per_s, sin.walk_per_s),
            (42.0, 43.0, Some(44.0))
        );
        let calls = costs.call_walks.unwrap();
        assert_eq!((calls.copies_per_s, calls.stores_per_s), (57.0, 58.0));
        assert!(costs.quick);
    }
}
