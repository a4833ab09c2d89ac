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
use crate::sizing::{Mode, Plan};
use clflow_core::{Access, ArgValue, ElementType, Launch, LaunchArg, NdRange, ScalarType};
use clflow_devices::{
    BuiltinRates, CallWalkRates, GatherRate, LaneRates, LineWalkRate, OpCosts, VisitRate, WalkRate,
};
use clflow_ocl::{OclDevice, PreparedLaunch, ProgramSource};

const SOURCE: &str = include_str!("../../../kernels/bench/costs.cl");

/// Operations unrolled per trip of each timed loop.
pub const ROUNDS: u64 = 16;

/// Work-items per work-group (the kernels' local arrays hold 256).
const GROUP: u64 = 64;

/// The trips a calibration launch runs.
const CALIBRATION_TRIPS: u32 = 16;

/// The id that progress and errors name, and `--only` matches.
pub const ID: &str = "costs/chain,local-atomic,barrier,branch,cache-gather,call-chain,page-stride,\
     local-gather,builtins,line-walk,call-walk,column-walk";

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

/// The kernels, with the operations each runs per work-item and trip.
const KERNELS: [(&str, u64); 5] = [
    ("bench_chain", 2 * ROUNDS),
    ("bench_local_atomic", ROUNDS),
    ("bench_barrier", 2),
    ("bench_call_chain", 1),
    ("bench_local_gather", ROUNDS),
];

/// Times every cost kernel on the plan's compute work-items.
pub fn measure(device: &OclDevice, plan: &Plan) -> Result<OpCosts> {
    let (origin, text) = source("costs.cl", SOURCE)?;
    let program = ProgramSource::from_text(&origin, &text, &format!("-DROUNDS={ROUNDS}"));
    let work_items = plan.compute_work_items.next_multiple_of(GROUP);
    // The median time of `kernel` at `trips` trips (with its own arguments
    // after those), over `launches` launches.
    let median_ns = |kernel: &str, extra: &[LaunchArg], trips: u32, launches: usize| {
        let mut launch = cost_launch(kernel, work_items, trips);
        launch.args.extend_from_slice(extra);
        median_launch_ns(device, &program, plan, &launch, launches)
    };
    // Trips that make `kernel` last about a compute benchmark's time.
    let calibrated = |kernel: &str, extra: &[LaunchArg]| -> Result<u32> {
        let ns = median_ns(kernel, extra, CALIBRATION_TRIPS, 1)?;
        Ok((u64::from(CALIBRATION_TRIPS) * plan.compute_target_ns)
            .div_ceil(ns)
            .clamp(1, u64::from(u32::MAX / 2)) as u32)
    };
    let launches = plan.repetitions.max(3);
    // `kernel` calibrated and timed: its trips and median time.
    let timed = |kernel: &str, extra: &[LaunchArg]| {
        let trips = calibrated(kernel, extra)?;
        Ok::<(u32, u64), BenchError>((trips, median_ns(kernel, extra, trips, launches)?))
    };
    // Its operations of all work-items per second, `per_trip` a trip.
    let rate = |kernel: &str, extra: &[LaunchArg], per_trip: u64| {
        let (trips, ns) = timed(kernel, extra)?;
        Ok::<f64, BenchError>(per_second(work_items * u64::from(trips) * per_trip, ns))
    };
    let mut rates = [0.0; KERNELS.len()];
    for ((kernel, per_trip), r) in KERNELS.iter().zip(&mut rates) {
        *r = rate(kernel, &[], *per_trip)?;
    }
    let pattern = |p: u32| [uint_arg("pattern", p)];
    let trips = calibrated("bench_branch", &pattern(1))?;
    let random = median_ns("bench_branch", &pattern(1), trips, launches)?;
    let steady = median_ns("bench_branch", &pattern(0), trips, launches)?;
    let mispredicted = (work_items * u64::from(trips) * ROUNDS) as f64 / 2.0;
    // Tables of a quarter of the last-level cache, in a power of two, and
    // of a 4th, 16th and 64th of that.
    let largest_items = 1u64 << ((device.info.global_cache_bytes / 16).max(1024)).ilog2();
    let unmeasured = GatherRate {
        table_bytes: 0,
        per_s: 0.0,
    };
    let mut cache_gather_tables = [unmeasured; 4];
    for (k, table_rate) in cache_gather_tables.iter_mut().enumerate() {
        let items = (largest_items >> (2 * (3 - k))).max(1024);
        let table = [
            uint_table("table", items, Access::ReadOnly),
            uint_arg("mask", (items - 1) as u32),
        ];
        *table_rate = GatherRate {
            table_bytes: 4 * items,
            per_s: rate("bench_cache_gather", &table, ROUNDS)?,
        };
    }
    // Each work-item walks a table of `table_bytes` from its id on,
    // `steps` steps: the walk kernels' arguments, and their accesses per
    // second (`per_step` accesses a step).
    let walk = |table_bytes: u64, access: Access, steps: u32| {
        let items = table_bytes / 4;
        [
            uint_table("table", items, access),
            uint_arg("n", items as u32),
            uint_arg("step", (items / u64::from(steps)) as u32),
        ]
    };
    let walk_rate =
        |kernel: &str, args: &[LaunchArg], table_bytes: u64, steps: u32, per_step: u64| {
            let items = table_bytes / 4;
            let step = items / u64::from(steps);
            let steps_per_trip: u64 = (0..work_items.min(items))
                .map(|g| (items - g).div_ceil(step))
                .sum();
            let (trips, ns) = timed(kernel, args)?;
            Ok::<f64, BenchError>(per_second(u64::from(trips) * steps_per_trip * per_step, ns))
        };
    let walks = |table_bytes: u64, lengths: [u32; 4]| {
        let mut rates = lengths.map(|steps| WalkRate {
            steps,
            loads_per_s: 0.0,
            stores_per_s: 0.0,
            copies_per_s: 0.0,
        });
        for w in &mut rates {
            let steps = w.steps;
            let loads = walk(table_bytes, Access::ReadOnly, steps);
            w.loads_per_s = walk_rate("bench_page_stride", &loads, table_bytes, steps, 1)?;
            let stores = walk(table_bytes, Access::ReadWrite, steps);
            w.stores_per_s = walk_rate("bench_page_stride_store", &stores, table_bytes, steps, 1)?;
            let mut copy = loads.to_vec();
            copy.push(uint_table("copy", table_bytes / 4, Access::ReadWrite));
            w.copies_per_s = walk_rate("bench_page_stride_copy", &copy, table_bytes, steps, 2)?;
        }
        Ok::<[WalkRate; 4], BenchError>(rates)
    };
    let page_walks = walks(WALK_TABLE_BYTES, WALK_STEPS)?;
    let small_page_walks = walks(SMALL_WALK_TABLE_BYTES, SMALL_WALK_STEPS)?;
    let line_walks = line_walks(device, &program, plan)?;
    let column_walks = column_walks(device, &program, plan)?;
    // Calls per second of each math builtin, a lane each.
    let mut builtins = [LaneRates {
        vector_per_s: 0.0,
        scalar_per_s: 0.0,
        walk_per_s: None,
    }; 5];
    // A walk copying the large table, striding by the global size, with a
    // call a step: steps per second (over a 16th of it where quick).
    let walk_items = WALK_TABLE_BYTES / 4 / quick_share(plan);
    let called = [
        uint_table("table", walk_items, Access::ReadOnly),
        uint_arg("n", walk_items as u32),
        uint_table("copy", walk_items, Access::ReadWrite),
    ];
    let called_rate = |kernel: &str| {
        let (trips, ns) = timed(kernel, &called)?;
        Ok::<f64, BenchError>(per_second(walk_items * u64::from(trips), ns))
    };
    for (name, rates) in BuiltinRates::NAMES.iter().zip(&mut builtins) {
        *rates = LaneRates {
            vector_per_s: rate(&format!("bench_{name}_vector"), &[], ROUNDS)?,
            scalar_per_s: rate(&format!("bench_{name}_scalar"), &[], ROUNDS)?,
            walk_per_s: Some(called_rate(&format!("bench_{name}_walk"))?),
        };
    }
    // Walks of `float4` steps with a kept call a step, copying and storing
    // alone: a step a quarter of the table's items.
    let call_walks = CallWalkRates {
        copies_per_s: called_rate("bench_call_walk")? / 4.0,
        stores_per_s: called_rate("bench_call_store_walk")? / 4.0,
    };
    Ok(OpCosts {
        chain_ops_per_s: rates[0],
        local_atomics_per_s: rates[1],
        barriers_per_s: rates[2],
        // None where random outcomes cost nothing (a device that runs
        // both ways, as a GPU's diverged warp does, pays in issue instead).
        mispredicts_per_s: (random > steady)
            .then(|| mispredicted / ((random - steady) as f64 * 1e-9)),
        cache_gathers_per_s: Some(cache_gather_tables[3].per_s),
        cache_gather_tables: Some(cache_gather_tables),
        carried_calls_per_s: Some(rates[3]),
        page_strides_per_s: Some(page_walks[3].loads_per_s),
        page_walks: Some(page_walks),
        walk_table_bytes: Some(WALK_TABLE_BYTES),
        small_page_walks: Some(small_page_walks),
        small_walk_table_bytes: Some(SMALL_WALK_TABLE_BYTES),
        gathered_lanes_per_s: Some(rates[4]),
        builtins: Some(BuiltinRates::from_all(builtins)),
        line_walks: Some(line_walks),
        call_walks: Some(call_walks),
        column_walks: Some(column_walks),
    })
}

/// Lines per second of the column walks (`bench_column_walk`) whose
/// work-groups read [`COLUMN_VISIT_LINES`] lines of each row's page at a
/// time, each calibrated to run about as long as a compute benchmark.
fn column_walks(
    device: &OclDevice,
    program: &ProgramSource,
    plan: &Plan,
) -> Result<[VisitRate; 3]> {
    let rows = COLUMN_WALK_ROWS / quick_share(plan);
    let items = rows * COLUMN_WALK_WIDTH;
    let table = uint_table("table", items, Access::ReadOnly);
    let mut rates = COLUMN_VISIT_LINES.map(|lines| VisitRate { lines, per_s: 0.0 });
    for rate in &mut rates {
        let median_ns = |trips: u32, launches: usize| {
            let mut launch = cost_launch("bench_column_walk", COLUMN_WALK_WIDTH, trips);
            // A line holds 16 of the uints, one a work-item.
            launch.range.local = Some([u64::from(rate.lines) * 16, 1, 1]);
            launch
                .args
                .extend([table.clone(), uint_arg("rows", rows as u32)]);
            median_launch_ns(device, program, plan, &launch, launches)
        };
        let (trips, ns) = long_walk_timed(plan, median_ns)?;
        rate.per_s = per_second(items / 16 * u64::from(trips), ns);
    }
    Ok(rates)
}

/// Accesses per second of the line walks (`bench_line_walk`), each
/// calibrated to run about as long as a compute benchmark.
fn line_walks(
    device: &OclDevice,
    program: &ProgramSource,
    plan: &Plan,
) -> Result<[LineWalkRate; 4]> {
    let share = quick_share(plan);
    let items = LINE_WALK_TABLE_BYTES / 4 / share;
    let table = uint_table("table", items, Access::ReadOnly);
    let copy = uint_table("copy", items, Access::ReadWrite);
    let mut rates = LINE_WALK_BYTES.map(|walk_bytes| LineWalkRate {
        walk_bytes: walk_bytes / share,
        per_s: 0.0,
    });
    for rate in &mut rates {
        // A window's loads and stores together make the walk.
        let window = rate.walk_bytes / 8;
        let median_ns = |trips: u32, launches: usize| {
            let groups = items / window;
            let mut launch = cost_launch("bench_line_walk", groups * LINE_WALK_GROUP, trips);
            launch.range.local = Some([LINE_WALK_GROUP, 1, 1]);
            launch.args.extend([
                table.clone(),
                copy.clone(),
                uint_arg("window", window as u32),
            ]);
            median_launch_ns(device, program, plan, &launch, launches)
        };
        let (trips, ns) = long_walk_timed(plan, median_ns)?;
        rate.per_s = per_second(2 * items * u64::from(trips), ns);
    }
    Ok(rates)
}

/// A walk whose one trip runs long, timed by `median_ns(trips, launches)`:
/// trips that make it last about a compute benchmark's time (at most 64),
/// and its median time at those trips over the plan's repetitions.
fn long_walk_timed(
    plan: &Plan,
    median_ns: impl Fn(u32, usize) -> Result<u64>,
) -> Result<(u32, u64)> {
    let once = median_ns(1, 1)?;
    let trips = plan.compute_target_ns.div_ceil(once).clamp(1, 64) as u32;
    Ok((trips, median_ns(trips, plan.repetitions.max(3))?))
}

/// `count` operations in `ns` nanoseconds, per second.
fn per_second(count: u64, ns: u64) -> f64 {
    count as f64 / (ns as f64 * 1e-9)
}

/// The median time of `launch` over `launches` launches, after the plan's
/// warm-ups.
fn median_launch_ns(
    device: &OclDevice,
    program: &ProgramSource,
    plan: &Plan,
    launch: &Launch,
    launches: usize,
) -> Result<u64> {
    let ocl = |source| BenchError::Ocl {
        benchmark: format!("costs/{}", launch.kernel),
        source,
    };
    let mut prepared = PreparedLaunch::new(device, program, launch).map_err(ocl)?;
    prepared.time_repeated(plan.warmups.max(1)).map_err(ocl)?;
    let mut times = prepared.time_repeated(launches).map_err(ocl)?;
    times.sort_unstable();
    Ok(times[times.len() / 2].max(1))
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
        value: ArgValue::Scalar {
            bytes: value.to_le_bytes().to_vec(),
        },
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
