//! clflow's own model: what the paper models cannot know, from the
//! interpreter and the microbenchmarks.
//!
//! Assumptions, each standing on a measurement and none fitted to the
//! kernels it predicts:
//!
//! 1. **Launch.** A launch costs what an empty kernel costs on one
//!    work-group, plus what each further work-group adds (`clflow bench`'s
//!    `launch/empty`, timed on 1 and on 1,024 work-groups).
//! 2. **Issue.** Every instruction the kernel executes takes an issue slot:
//!    its arithmetic in its class, loads and stores in the integer class;
//!    phis, moves and branches, which compiled code mostly folds away, take
//!    none, nor do loads and stores of private memory, which the device's
//!    compiler keeps in registers once it has unrolled their loops (a
//!    library's register tile). A class issues at its instruction rate:
//!    the add chain's for integers (one operation an instruction), half the
//!    mad chain's for floats (two). Vector instructions of every class share
//!    the vector pipes and add up; on a CPU, scalar integer and float
//!    instructions issue on pipes of their own, side by side, and take the
//!    longest class's time. On a CPU, a float call of `sin`, `cos`, `exp`,
//!    `log` or `pow` (which the count takes for one operation) costs what
//!    the benchmark's calls of it cost a lane: with the work-items run
//!    together by the vectoriser for the share of steps run as vectors,
//!    lane by lane for the rest (PoCL widens `exp`, but calls `sin` lane by
//!    lane either way, about 12 ns a call).
//! 3. **Vectors.** On a CPU, whose OpenCL compiler vectorises a work-group's
//!    work-items where their control flow agrees, the steps the interpreter
//!    saw run in full vectors of the device's SIMD width (its native `float`
//!    lanes) issue at the best vector width's rate, the rest at the scalar
//!    rate (a chain whose loop the compiler cannot prove uniform). Where
//!    the microbenchmarks show that the compiler does not vectorise inside
//!    a kernel's own loops (a width-1 chain in a uniform loop runs no
//!    faster than the diverged one), steps inside loops run scalar too,
//!    and in a kernel without barriers that has a loop, every step does:
//!    such a compiler widens only innermost loops, and the loop over the
//!    work-items it wraps around the kernel's own loop is not one (PoCL's
//!    code for lookup3, n-body and spmv has no vector instruction at all).
//!    Where a CPU's steps run as vectors, a load or store whose row of
//!    work-items (along the first local id) neither counts up by its size
//!    (a group of adjacent scalar accesses, by the group's: the vector the
//!    device's SLP vectoriser packs them into) nor shares one address (a
//!    table lookup, a stride, an index built with `%` and `/`) is gathered
//!    or scattered lane by lane: each such lane
//!    costs what one of the benchmark's gathered local loads costs, on top
//!    of its issue. So is a scalar one whose address comes from a value
//!    computed before a barrier (the count's `carried_lanes`): the
//!    compiler keeps that value per work-item in an array across the
//!    barrier and cannot see the addresses built from it count up (PoCL's
//!    code gathers `b[i]` and scatters `c[i]` after `x = a[i]; barrier`),
//!    and a load a row makes at one address under an `if`, which the
//!    compiler masks and gathers (`masked_lanes`). The stretches between
//!    the barriers of a loop with a
//!    barrier in it run as loops over the work-items of their own, which
//!    the compiler vectorises (their gathers count) even where it does not
//!    vectorise the kernel's own loops; their issue is still taken as
//!    scalar, as a tree reduction's measured time bears out. On a GPU
//!    every step issues for its whole warp: the rate at the best width
//!    times the warp's efficiency (the share of its lanes that work).
//! 4. **Memory.** DRAM traffic (simulated at the device's cache, else
//!    compulsory, in the order the device runs work-items: on a CPU one
//!    work-item after another between barriers, where a work-item walks
//!    far enough for that to matter) moves at the stream bandwidth of its
//!    share of written bytes: the microbenchmarks' `read` (none written),
//!    `add`/`triad` (a third), `copy`/`scale` (half) and `write` (all),
//!    time per byte interpolated between them. Their stores write lines
//!    they never read, which a CPU's store reads first; so on a CPU the
//!    share is that of the lines a store brought into the cache, and a
//!    line a load brought in is written back in place (`y = a * x + y`
//!    moves its reads at the `read` benchmark's rate, not `triad`'s). Such
//!    write-backs cost what the `update` benchmark, which scales an array
//!    in place, takes beyond the `read` benchmark's time for its reads:
//!    next to nothing on one 2-core machine (55 GB/s counting both ways,
//!    where reads alone move 28; likely because its cores keep only so
//!    many reads in flight, and a write-back needs none). Where the
//!    profile predates the benchmark, as a read. On a GPU, the share the coalescing analysis found uncoalesced moves at
//!    the gather bandwidth (a CPU's caches make whole lines of scattered
//!    accesses, which the cache simulation charged already). Launched
//!    again and again, as the timing does, a kernel whose lines all fit the
//!    largest cache the microbenchmarks measured (the window of their
//!    resident reads) finds them there: each line it touches moves once at
//!    that cache's bandwidth instead. Not where they fit only the
//!    last-level cache the driver reports: a virtual machine's driver
//!    reports the host's whole shared cache (480 MiB on one that reads
//!    128 MiB and more no faster than memory). On a CPU, which runs a
//!    loop one work-item after another, each access that lands a page or
//!    more from its work-item's last at that instruction, in a walk of 64
//!    such strides or more (the coalescing analysis's page strides: a loop
//!    striding by the global size, as GPU code walks an array, or a gather
//!    whose every step goes pages away, equal steps or not), costs what
//!    such loads cost in the benchmark whose work-items walk a table that
//!    way, in walks as long as the steps one of the kernel's work-items
//!    walks between two barriers over all its walks (timed at 64 to 4,096
//!    steps a work-item, interpolated in the logarithm of the length: the
//!    longer the walk, the fewer of its pages and lines the TLB and caches
//!    keep for the work-items after it, 0.6 to 2.7 ns a load here), and at
//!    its share of stores (each walk storing alone costs more than twice
//!    as much, copying about as much); a walk shorter than 64 leaves its
//!    lines in the first-level cache and TLB for the work-items after it.
//!    The benchmark's table is 128 MiB, which no cache keeps; where the
//!    profile also timed the walks through a 16 MiB table, which the
//!    last-level cache keeps from walk to walk (a GEMM's walks down 4 MiB
//!    matrices), the time per access lies between the two tables' in the
//!    logarithm of the bytes of the buffers the kernel walks. A walk whose
//!    step calls a math builtin on its load (`b[i] = sin(a[i])` in a loop
//!    striding by the global size) leaves the core no room for the next
//!    steps' loads while the call runs: each waits on its page in turn.
//!    Such steps, a call of a builtin the benchmarks time for each load
//!    the walk makes (and a store, where it makes as many), cost what a
//!    walk copying with a call of that builtin a step costs (their
//!    calls, loads and stores charged there alone: about 100 ns a step on
//!    each core here for `sin`, where the walk alone takes 30 and the call
//!    10). So does a call the compiler keeps inside a loop (a function of
//!    the kernel's own that an optimised build did not inline, or one
//!    marked `noinline`; the count's kept calls): each goes with a step
//!    left, a load and its store where the walk loads, else a store, and
//!    costs what a walk copying, or storing alone, with such a call a step
//!    costs, its call's own instructions issuing as before (a generator
//!    that calls its function a step and stores each call's numbers a
//!    global size further on, as pyopencl's Philox does: 8 M float4
//!    stores took 46 ms alone and 121 ms with a kept call a step that does
//!    next to nothing).
//!    Steps of a line or more but under a page (the coalescing analysis's
//!    line strides: a loop over a work-group's interval that strides by
//!    the group's size, so that each work-item takes one element of every
//!    line), in a walk of 1,024 or more, pass more lines than a core's
//!    first-level cache keeps: the next work-item walks the same lines
//!    and finds them further down. Each such access costs what they cost
//!    in the benchmark whose work-groups of 16 walk windows of their own
//!    so, at the length of the kernel's longest walk between barriers
//!    (the lines its work-item moves on to over all its accesses, timed at
//!    1 to 64 MiB a work-item, interpolated in the logarithm of the
//!    length: 0.4 to 1.7 ns an access here, by which cache the walk fits),
//!    and their instructions' DRAM traffic nothing more: the benchmark's
//!    walks move their lines from wherever they are.
//!    Lines the kernel first touches a few of a page at a time (the cache
//!    simulation's short visits: work-groups that each read a few lines
//!    of every row's page in turn and come back for the next ones a whole
//!    walk later, as a GEMV down a transposed matrix or a transpose's
//!    other side does) each wait on memory, which no prefetcher follows:
//!    they cost what the column walks' lines cost at the visits' length
//!    (timed at 1, 4 and 16 lines a visit, interpolated in the logarithm
//!    of the length and towards the `read` benchmark's rate at a page's
//!    64 lines), in place of the stream; not where every line fits the
//!    measured cache, nor the lines of instructions that walk pages or
//!    lines (charged above).
//! 5. **Chains.** On a CPU, a block inside a loop runs no faster than the
//!    chain of dependent operations it carries from one iteration to the
//!    next (the count's `chains`, in nominal cycles of latency), at the
//!    device's measured rate of dependent operations (`clflow bench`'s
//!    `costs`, one chain per work-item); per vector of work-items where the
//!    compiler vectorises loops. Those blocks take the longer of their
//!    issue and their chains. A chain that holds a float value across a
//!    call the compiler keeps (the count's `spilled` runs; a CPU's calling
//!    convention keeps no float register across a call) makes a round trip
//!    through the stack on each run: it costs what a benchmark loop whose
//!    float sum is carried across such a call takes a trip beyond its own
//!    add. A GPU hides a warp's chains behind the other warps' work, so
//!    none is charged there.
//! 6. **Atomics, barriers, branches.** Each lane of an atomic function,
//!    each work-item's pass through a barrier and, on a CPU, each branch
//!    the count's predictor mispredicted where the work-items run one by
//!    one (inside the kernel's loops between barriers, for a compiler that
//!    vectorises only outside loops; everywhere in a kernel that runs all
//!    scalar; elsewhere the vectoriser makes masks of branches, as PoCL's
//!    code for a scan's conditional store shows: a masked scatter, no
//!    jump) costs what the microbenchmarks measured (local-memory atomic
//!    increments spread over 256 counters; a barrier with a few operations
//!    between; a random branch against one that always goes one way), on
//!    top of the issue time: an atomic waits for its cache line, a barrier
//!    for the whole group, a mispredicted branch for the pipeline to
//!    refill. On a CPU, each iteration of a loop with a barrier in it that
//!    does not begin at one passes one barrier more (the count's
//!    `loop_barriers`): the runtime runs the loop's condition for every
//!    work-item in a region of its own, as the benchmark's own barriers
//!    (its loop begins at one) each make one.
//! 7. **Overlap.** Issue and memory overlap: the kernel takes the launch
//!    plus the longer of the two. A CPU's gathered lanes take their time on
//!    top: each is a load the core issues on its own, which neither hides
//!    under the memory stream nor lets the stream run meanwhile (with a
//!    barrier that makes PoCL gather `b[i]` and scatter `c[i]`,
//!    `c[i] = 2 * a[i] + b[i]` over 32 M floats runs 25 ms instead of 8.8).

use crate::device::{missing, DeviceRates, OpCostRates, Rate, SimdKind};
use crate::kernel::{KernelFacts, Traffic};
use crate::roofline::Bound;
use clflow_counts::{Gathers, OpClass};
use serde::{Deserialize, Serialize};

/// The nominal cycles of the call benchmark's own chain: its float add
/// (`clflow_interp`'s latency table), which the round trip comes on top of.
const CALL_BENCH_ADD_CYCLES: f64 = 3.0;

/// clflow's prediction, with every term.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Clflow {
    pub time_s: f64,
    pub launch_s: f64,
    /// Issue, chains, branches, atomics and barriers together.
    pub issue_s: f64,
    /// The loops' carried chains alone, where charged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain_s: Option<f64>,
    /// Of the chains, the round trips through the stack of float values
    /// held across calls, where measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trips_s: Option<f64>,
    /// Atomics and barriers, where the device's costs are measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomics_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub barriers_s: Option<f64>,
    /// Mispredicted branches, on a CPU where measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branches_s: Option<f64>,
    /// Calls of the math builtins the benchmarks time, on a CPU where
    /// measured (part of `issue_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtins_s: Option<f64>,
    /// Lanes of loads and stores a CPU's vectoriser gathers, where
    /// measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gathers_s: Option<f64>,
    /// Scattered loads the last-level cache serves, on a CPU where
    /// measured (part of `memory_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_gathers_s: Option<f64>,
    /// Accesses a page apart in each work-item's own walk, on a CPU where
    /// measured (part of `memory_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_strides_s: Option<f64>,
    /// Steps of page walks with a call of a timed math builtin, or one the
    /// compiler keeps, on each, on a CPU where measured (part of
    /// `memory_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walked_calls_s: Option<f64>,
    /// Accesses a line apart in each work-item's long walk down lines its
    /// neighbours walk too, on a CPU where measured (part of `memory_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_walks_s: Option<f64>,
    /// Lines first touched a few of a page at a time, on a CPU where the
    /// column walks were timed (part of `memory_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_visits_s: Option<f64>,
    /// Write-backs of lines a load brought in, on a CPU where the in-place
    /// update was timed (part of `memory_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_backs_s: Option<f64>,
    /// The DRAM traffic (the cache's, where every line fits it) and the
    /// cache gathers together.
    pub memory_s: f64,
    /// The share of instruction steps issued as vectors (CPU), or the
    /// warp efficiency (GPU).
    pub vector_share: f64,
    pub simd_width: u32,
    pub bound: Bound,
}

pub fn predict_kernel(facts: &KernelFacts, device: &DeviceRates) -> Result<Clflow, String> {
    let simd = device
        .simd
        .as_ref()
        .ok_or_else(|| missing("SIMD width", device))?;
    let used = facts
        .simd
        .iter()
        .filter(|s| s.width <= simd.width.max(8))
        .max_by_key(|s| s.width)
        .ok_or_else(|| format!("{}: the count measured no SIMD use", facts.name))?;
    let launch = device
        .launch
        .ok_or_else(|| missing("launch overhead (clflow bench --refresh)", device))?;
    let groups = facts.work_groups.max(1) as f64;
    let launch_s = launch.empty_s + launch.per_group_s * (groups - 1.0);

    // A vectoriser that widens only innermost loops cannot widen the loop
    // over the work-items around a kernel's own loop: in a kernel without
    // barriers that has one, nothing runs as vectors.
    let all_scalar = simd.kind == SimdKind::WorkGroupVectoriser
        && !simd.vectorises_loops
        && used.loop_steps > 0
        && facts.barriers == 0;
    let (vector_share, scalar_share) = match simd.kind {
        SimdKind::WorkGroupVectoriser => {
            let share = if simd.vectorises_loops {
                used.convergence()
            } else if all_scalar {
                0.0
            } else {
                used.convergence_outside_loops()
            };
            (share, 1.0 - share)
        }
        SimdKind::Simt => (used.efficiency(), 0.0),
    };
    // The costs only a CPU pays (chains, branches, last-cache gathers,
    // math builtins), where the device's are measured; atomics and
    // barriers cost any device.
    let costs = device
        .costs
        .filter(|_| simd.kind == SimdKind::WorkGroupVectoriser);
    let shares = (vector_share, scalar_share);
    // Calls on the steps of a page walk go with the walk (assumption 4);
    // the rest issue as calls.
    let walked = costs.and_then(|c| walked_calls(facts, c));
    let (walked_lanes, walked_strides, walked_calls_s) = match walked {
        Some((lanes, strides, s)) => (lanes, strides, Some(s)),
        None => ([0; 5], 0, None),
    };
    let called: [u64; 5] = std::array::from_fn(|b| facts.builtin_lanes[b] - walked_lanes[b]);
    let builtins = costs.and_then(|c| builtin_time(&called, c, shares));
    let (builtin_s, builtin_lanes) = builtins.unwrap_or_default();
    let builtin_lanes = builtin_lanes + walked_lanes.iter().sum::<u64>();
    let mut issue_s = issue_time(facts, device, simd.kind, shares, builtin_lanes)? + builtin_s;
    // Blocks that carry a chain take the longer of their issue and it.
    let mut round_trips_s = None;
    let chain_s = match (facts.chains, costs) {
        (Some(chains), Some(costs)) if chains.cycles > 0 => {
            let per_vector = if simd.vectorises_loops {
                f64::from(simd.width.max(1))
            } else {
                1.0
            };
            let share = (chains.steps as f64 / used.lane_steps.max(1) as f64).min(1.0);
            let round_trip_s = costs.carried_calls_per_s.map_or(0.0, |rate| {
                (1.0 / rate - CALL_BENCH_ADD_CYCLES / costs.chain_ops_per_s).max(0.0)
            });
            let trips_s = chains.spilled as f64 * round_trip_s / per_vector;
            round_trips_s = Some(trips_s).filter(|s| *s > 0.0);
            let chain_s = chains.cycles as f64 / costs.chain_ops_per_s / per_vector + trips_s;
            issue_s = issue_s * (1.0 - share) + (issue_s * share).max(chain_s);
            Some(chain_s)
        }
        _ => None,
    };
    // A CPU throws away the work it began on the wrong way; a GPU's warp
    // runs both ways, which its issue efficiency already charged. A
    // vectoriser that takes work-items together only outside loops makes
    // masks of the branches there: only the loops' branches (every branch,
    // where nothing runs as vectors) jump.
    let branches_s = match (facts.branches, costs) {
        (Some(b), Some(c)) => c.mispredicts_per_s.map(|rate| {
            let mispredicted = if simd.vectorises_loops {
                b.mispredicted as f64 * scalar_share
            } else if all_scalar {
                b.mispredicted as f64
            } else {
                b.loop_mispredicted as f64
            };
            mispredicted / rate
        }),
        _ => None,
    };
    let gathers_s = match (facts.gathers, costs) {
        (Some(g), Some(c)) if !all_scalar => gather_time(g, c, simd.vectorises_loops),
        _ => None,
    };
    let atomics_s = device.costs.map(|c| facts.atomics as f64 / c.atomics_per_s);
    let barriers_s = device
        .costs
        .map(|c| barrier_passes(facts, simd.kind) as f64 / c.barriers_per_s);
    issue_s += [branches_s, gathers_s, atomics_s, barriers_s]
        .iter()
        .flatten()
        .sum::<f64>();

    // Each work-item's walk a line a step past what its core's first cache
    // keeps, down the lines the work-item before it walked.
    let line_walks_s = match (facts.line_strides, costs) {
        (Some(strides), Some(c)) if strides > 0 => c
            .line_walks_at(facts.line_walk_bytes.unwrap_or(0))
            .map(|rate| strides as f64 / rate),
        _ => None,
    };
    let (mut memory_s, mut write_backs_s) = memory_time(facts, device, simd.kind)?;
    // Lines a kernel brings in a few of a page at a time wait on memory
    // each, at the column walks' rate; where its lines all come from the
    // measured cache, none does.
    let short_visits = match (facts.short_visits, costs) {
        (Some(visits), Some(c)) if cache_rate(&facts.traffic, device).is_none() => {
            let line_bytes = facts.short_visit_line_bytes.unwrap_or(LINE_BYTES);
            short_visit_time(visits, line_bytes, c, device)
        }
        _ => None,
    };
    let short_visits_s = short_visits.map(|(s, _)| s);
    // Those walks' and visits' lines move within their benchmarks' time:
    // the rest of the traffic moves as it would.
    let walked = line_walks_s.and(facts.line_walk_dram).unwrap_or(0);
    let visited = short_visits.map_or(0, |(_, bytes)| bytes);
    if walked + visited > 0 {
        let (dram, _) = facts.traffic.dram();
        let rest = 1.0 - (walked + visited).min(dram) as f64 / dram.max(1) as f64;
        memory_s *= rest;
        write_backs_s = write_backs_s.map(|s| s * rest);
    }
    // On a CPU, scattered loads the last level serves wait on it each.
    let cache_gathers_s = match (facts.cache_gathers, costs) {
        (Some(lines), Some(c)) => c
            .cache_gathers_at(facts.cache_gather_table)
            .map(|rate| lines as f64 / rate),
        _ => None,
    };
    // A CPU's core walks each work-item's stride alone, page by page.
    let page_strides_s = match (facts.page_strides, costs) {
        (Some(strides), Some(c)) if strides > 0 => {
            let stores = facts.page_stride_stores.unwrap_or(0).min(strides);
            // Steps a work-item walks: its strides and the access it
            // starts from, over all the walks it makes together (the TLB
            // and caches see them all).
            let walkers = facts.page_walkers.unwrap_or(0).max(1);
            let steps = strides as f64 / walkers as f64 + 1.0;
            // Less the loads and stores whose steps went with their calls.
            let rest = strides - walked_strides;
            c.page_strides_at(steps, stores as f64 / strides as f64, facts.page_walk_bytes)
                .map(|rate| rest as f64 / rate)
        }
        _ => None,
    };
    memory_s += [
        cache_gathers_s,
        page_strides_s,
        walked_calls_s,
        line_walks_s,
        short_visits_s,
    ]
    .iter()
    .flatten()
    .sum::<f64>();

    let bound = if issue_s >= memory_s {
        Bound::Compute
    } else {
        Bound::Memory
    };
    let gathered_s = gathers_s.unwrap_or(0.0);
    Ok(Clflow {
        time_s: launch_s + (issue_s - gathered_s).max(memory_s) + gathered_s,
        launch_s,
        issue_s,
        chain_s,
        round_trips_s,
        atomics_s,
        barriers_s,
        branches_s,
        gathers_s,
        builtins_s: builtins.map(|(s, _)| s),
        cache_gathers_s,
        page_strides_s,
        walked_calls_s,
        line_walks_s,
        short_visits_s,
        write_backs_s,
        memory_s,
        vector_share,
        simd_width: simd.width,
        bound,
    })
}

/// Every class's instructions at its vector and scalar rates, the
/// `(vector, scalar)` shares of the steps each way (assumptions 2 and 3),
/// but for `timed_fp32` float lanes charged apart (the math builtins the
/// benchmarks time).
fn issue_time(
    facts: &KernelFacts,
    device: &DeviceRates,
    kind: SimdKind,
    (vector_share, scalar_share): (f64, f64),
    timed_fp32: u64,
) -> Result<f64, String> {
    let a = &facts.instructions.arithmetic;
    let lanes = [
        (
            OpClass::Int,
            a.int + facts.instructions.ldst - facts.instructions.private_ldst,
        ),
        (OpClass::Fp32, a.fp32.saturating_sub(timed_fp32)),
        (OpClass::Fp64, a.fp64),
        (OpClass::Fp16, a.fp16),
    ];
    // Vector instructions of every class share the vector pipes; scalar
    // integer and float instructions issue on pipes of their own, side by
    // side, so the scalar part takes its longest class.
    let (mut vector_s, mut scalar_s) = (0.0f64, 0.0f64);
    for (class, n) in lanes.into_iter().filter(|(_, n)| *n > 0) {
        let rate = |rates: &Option<Rate>, what: &str| {
            rates
                .as_ref()
                .map(|r| r.value)
                .filter(|v| *v > 0.0)
                .ok_or_else(|| missing(&format!("{} {what}", class.name()), device))
        };
        let (vector, scalar) = device.instruction_rates(class);
        let vector = rate(vector, "vector instruction rate")?;
        let n = n as f64;
        match kind {
            SimdKind::WorkGroupVectoriser => {
                let scalar = rate(scalar, "scalar instruction rate")?;
                vector_s += n * vector_share / vector;
                scalar_s = scalar_s.max(n * scalar_share / scalar);
            }
            SimdKind::Simt => vector_s += n / (vector * vector_share.max(1e-9)),
        }
    }
    Ok(vector_s + scalar_s)
}

/// The calls of the math builtins the benchmarks timed, each lane at its
/// builtin's rate as a vector and lane by lane by the `(vector, scalar)`
/// shares of the steps (assumption 2); and the lanes so charged. None
/// where the profile timed none or the kernel calls none of them.
fn builtin_time(
    lanes: &[u64; 5],
    costs: OpCostRates,
    (vector_share, scalar_share): (f64, f64),
) -> Option<(f64, u64)> {
    let rates = costs.builtins?;
    let timed: u64 = lanes.iter().sum();
    (timed > 0).then(|| {
        let s = lanes
            .iter()
            .zip(rates)
            .map(|(&n, (vector, scalar))| {
                n as f64 * (vector_share / vector + scalar_share / scalar)
            })
            .sum();
        (s, timed)
    })
}

/// The calls of each timed builtin that go with a page walk's steps, one a
/// load (and its store, where the walk stores), the strides they take, and
/// the time of those steps at the benchmark's rate of a walk copying with
/// a call a step; then the kept calls inside loops that go with the steps
/// left, at the rate of a walk copying with such a call a step (one that
/// loads), or storing alone with it (assumption 4). None where nothing
/// walks or calls.
fn walked_calls(facts: &KernelFacts, costs: OpCostRates) -> Option<([u64; 5], u64, f64)> {
    let strides = facts.page_strides.filter(|&s| s > 0)?;
    let mut stores = facts.page_stride_stores.unwrap_or(0).min(strides);
    let mut loads = strides - stores;
    let mut lanes = [0; 5];
    let mut time = 0.0;
    if let Some(rates) = costs.builtin_walks {
        for ((&n, rate), taken) in facts.builtin_lanes.iter().zip(rates).zip(&mut lanes) {
            if rate > 0.0 {
                *taken = n.min(loads);
                loads -= *taken;
                time += *taken as f64 / rate;
            }
        }
    }
    // A step is a load and, where the walk stores as much, a store.
    let steps: u64 = lanes.iter().sum();
    let stored = steps.min(stores);
    stores -= stored;
    let mut taken = steps + stored;
    let calls = facts.chains.map_or(0, |c| c.calls);
    if let Some((copies, stores_alone)) = costs.call_walks.filter(|_| calls > 0) {
        // A walk that loads copies; one that stores alone, stores.
        let (steps, strides, rate) = if loads > 0 {
            let steps = calls.min(loads);
            (steps, steps + steps.min(stores), copies)
        } else {
            let steps = calls.min(stores);
            (steps, steps, stores_alone)
        };
        if steps > 0 && rate > 0.0 {
            taken += strides;
            time += steps as f64 / rate;
        }
    }
    (taken > 0).then_some((lanes, taken, time))
}

/// The lanes a CPU's vectoriser gathers one at a time, at the benchmark's
/// rate (assumption 3); in loops between barriers only where the compiler
/// vectorises loops.
fn gather_time(g: Gathers, costs: OpCostRates, vectorises_loops: bool) -> Option<f64> {
    let lanes = if vectorises_loops {
        g.lanes
    } else {
        g.lanes - g.loop_lanes
    };
    Some(lanes as f64 / costs.gathered_lanes_per_s?)
}

/// Work-items' passes through barriers: the kernel's own, and on a CPU
/// the one its runtime adds at the start of each iteration of a loop with
/// a barrier in it that does not begin at one (assumption 6).
fn barrier_passes(facts: &KernelFacts, kind: SimdKind) -> u64 {
    match kind {
        SimdKind::WorkGroupVectoriser => facts.barriers + facts.loop_barriers,
        SimdKind::Simt => facts.barriers,
    }
}

/// The DRAM traffic's time (assumption 4), or the cache's where every line
/// fits it; and of it, the in-place write-backs', where charged apart.
fn memory_time(
    facts: &KernelFacts,
    device: &DeviceRates,
    kind: SimdKind,
) -> Result<(f64, Option<f64>), String> {
    let traffic = &facts.traffic;
    if let Some(rate) = cache_rate(traffic, device) {
        return Ok((traffic.compulsory as f64 / rate, None));
    }
    // The stream benchmarks' stores all write lines they did not read: on
    // a CPU, whose store reads its line first, what they measured per
    // written byte holds for the lines a store brought into the cache; a
    // line a load brought in is written in place, at what the in-place
    // update's write-backs cost beside its reads.
    if kind == SimdKind::WorkGroupVectoriser {
        if let Some((time, write_backs)) = in_place_time(traffic, device) {
            return Ok((time, Some(write_backs)));
        }
    }
    let share = match kind {
        SimdKind::WorkGroupVectoriser => traffic.dram_allocated_share(),
        SimdKind::Simt => traffic.dram_write_share(),
    };
    let stream = device
        .bandwidth_at(share)
        .ok_or_else(|| missing("memory bandwidth", device))?;
    let gather = device
        .uncoalesced_bandwidth
        .as_ref()
        .map_or(stream, |r| r.value);
    let (dram, _) = traffic.dram();
    // A CPU's caches turn scattered accesses into whole lines, which the
    // cache simulation already charged: only a GPU pays per transaction.
    let coalesced = match (kind, facts.coalescing) {
        (SimdKind::Simt, Some(c)) => c.coalesced_share(),
        _ => 1.0,
    };
    let time = dram as f64 * (coalesced / stream + (1.0 - coalesced) / gather);
    Ok((time, None))
}

/// The measured cache's bandwidth where every line the kernel touches fits
/// it (and the simulated one): launched again and again, as the timing
/// does, the kernel finds them there.
fn cache_rate(traffic: &Traffic, device: &DeviceRates) -> Option<f64> {
    let cache = traffic.cache_bytes?;
    let window = device.cache_window_bytes?;
    let rate = device.cache_bandwidth.as_ref()?.value;
    (traffic.compulsory <= cache.min(window) && rate > 0.0).then_some(rate)
}

/// The lines a page holds, and the bytes of a line, as the column walks
/// time them (pages of 4 KiB, lines of 64 bytes).
const PAGE_LINES: f64 = 64.0;
const LINE_BYTES: u64 = 64;

/// The time of the lines first touched in short visits to their pages
/// (assumption 4), lines of `line_bytes` (the simulation's): each length's
/// lines at the column walks' rate for it, interpolated towards the `read`
/// benchmark's at a whole page, in the walks' 64-byte lines; and their
/// bytes. None where the profile lacks the walks or no visit was short.
fn short_visit_time(
    visits: [u64; 6],
    line_bytes: u64,
    costs: OpCostRates,
    device: &DeviceRates,
) -> Option<(f64, u64)> {
    let lines: u64 = visits.iter().sum();
    if lines == 0 {
        return None;
    }
    // The walks' lines in one of the simulation's.
    let walk_lines = line_bytes as f64 / LINE_BYTES as f64;
    let stream = device.bandwidth_at(0.0)? / LINE_BYTES as f64;
    let mut time = 0.0;
    for (bucket, &n) in visits.iter().enumerate() {
        // The mean of the lengths the bucket holds: 1, 2.5, 5.5 ...
        let length = if bucket == 0 {
            1.0
        } else {
            (3.0 * (1u64 << bucket) as f64 - 1.0) / 2.0
        };
        let rate = costs.visits_at(length * walk_lines, PAGE_LINES, stream)?;
        time += n as f64 * walk_lines / rate;
    }
    Some((time, lines * line_bytes))
}

/// On a CPU, the DRAM traffic's time where some of it is written back in
/// place and the profile timed the in-place update: those write-backs at
/// the update's time less the `read` benchmark's for its reads, per byte;
/// the rest at the stream bandwidth of its share of lines a store brought
/// in. `None` where either is missing. With the write-backs' own time.
fn in_place_time(traffic: &Traffic, device: &DeviceRates) -> Option<(f64, f64)> {
    let (dram, _) = traffic.dram();
    let in_place = traffic.dram_written_in_place().min(dram);
    let update = device.in_place_bandwidth.as_ref()?.value;
    if in_place == 0 || update <= 0.0 {
        return None;
    }
    let read = device.bandwidth_at(0.0)?;
    // The update reads N bytes and writes N back: 2N / update seconds, of
    // which N / read are its reads.
    let per_write_back = (2.0 / update - 1.0 / read).max(0.0);
    let rest = dram - in_place;
    let allocated = traffic.simulated_allocated.unwrap_or(0);
    let share = if rest == 0 {
        0.0
    } else {
        (allocated as f64 / rest as f64).min(1.0)
    };
    let stream = device.bandwidth_at(share)?;
    let write_backs = in_place as f64 * per_write_back;
    Some((rest as f64 / stream + write_backs, write_backs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{ClassRates, IssueRates, LaunchCost, OpCostRates, Simd, WalkRates};
    use crate::kernel::tests::sgemm_facts;
    use clflow_counts::SimdUse;

    fn device(simd: Simd) -> DeviceRates {
        let rate = |v: f64| Some(Rate::new(v, "test"));
        DeviceRates {
            name: "test cpu".into(),
            bandwidth: rate(10e9),
            uncoalesced_bandwidth: rate(1e9),
            issue: IssueRates {
                vector: ClassRates { int: rate(100e9), fp32: rate(200e9), ..ClassRates::default() },
                scalar: ClassRates { int: rate(10e9), fp32: rate(20e9), ..ClassRates::default() },
            },
            launch: Some(LaunchCost { empty_s: 1e-6, per_group_s: 1e-8 }),
            simd: Some(simd),
            ..DeviceRates::default()
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs()
    }

    /// sgemm's facts with 90% of its steps inside its loop, all converged.
    fn looped_sgemm() -> KernelFacts {
        let mut facts = sgemm_facts();
        facts.simd = vec![SimdUse {
            width: 16,
            lane_steps: 1000,
            issued_steps: 1000,
            converged_steps: 1000,
            loop_steps: 900,
            converged_loop_steps: 900,
        }];
        facts
    }

    /// A CPU of 16 lanes whose compiler does not vectorise inside loops.
    const CPU: Simd = Simd {
        width: 16,
        kind: SimdKind::WorkGroupVectoriser,
        vectorises_loops: false,
    };

    /// sgemm's 300,032 integer and load/store lanes and 32,768 fp32 lanes,
    /// 90% of its steps inside its loop, all converged: on a CPU that does
    /// not vectorise inside loops, 10% issue as vectors where the kernel
    /// has barriers (the stretches between them without a loop run as
    /// vectors), none where it has none.
    #[test]
    fn issue_follows_how_the_work_items_fill_vectors() {
        let mut facts = looped_sgemm();
        let alone = predict_kernel(&facts, &device(CPU)).unwrap();
        assert_eq!(alone.vector_share, 0.0);
        let scalar = (300_032.0f64 / 10e9).max(32_768.0 / 20e9);
        assert!(close(alone.issue_s, scalar), "{alone:?}");
        facts.barriers = 1024;
        let p = predict_kernel(&facts, &device(CPU)).unwrap();
        assert!(close(p.vector_share, 0.1));
        assert!(close(p.launch_s, 1e-6 + 3.0 * 1e-8));
        // Vectors of both classes add up; the scalar integer and float
        // instructions run side by side, the integers the longer.
        let issue = 300_032.0 * 0.1 / 100e9
            + 32_768.0 * 0.1 / 200e9
            + (300_032.0f64 * 0.9 / 10e9).max(32_768.0 * 0.9 / 20e9);
        assert!(
            close(p.issue_s - p.barriers_s.unwrap_or(0.0), issue),
            "{p:?}"
        );
        assert!(close(p.memory_s, 12_288.0 / 10e9));
        assert!(close(p.time_s, p.launch_s + p.issue_s));
        assert_eq!(p.bound, Bound::Compute);
        // Vectorising inside loops too: every step as vectors.
        let loops = Simd { vectorises_loops: true, ..CPU };
        let p = predict_kernel(&facts, &device(loops)).unwrap();
        assert!(close(p.issue_s, 300_032.0 / 100e9 + 32_768.0 / 200e9));
        // No SIMD use measured, or no launch cost: no prediction, and why.
        facts.simd.clear();
        let why = predict_kernel(&facts, &device(CPU)).unwrap_err();
        assert!(why.contains("no SIMD use"), "{why}");
    }

    /// The same loop, now carrying a chain over 90% of its steps, with
    /// a float value held across a call on 100 of its runs, atomics,
    /// barriers, mispredicted branches, lanes a vectoriser gathers, gathers
    /// from the last cache, page strides, and a third of its traffic
    /// written, on a device that measured what each costs.
    #[test]
    fn chains_atomics_barriers_branches_and_writes_cost_what_was_measured() {
        let mut facts = looped_sgemm();
        facts.chains = Some(clflow_counts::LoopChains {
            cycles: 1_000_000,
            steps: 900,
            spilled: 100,
            calls: 0,
        });
        facts.atomics = 1000;
        facts.barriers = 2000;
        // A loop with a barrier whose iterations begin without one: a CPU
        // runtime's own barrier there costs as much again.
        facts.loop_barriers = 1000;
        facts.cache_gathers = Some(1000);
        facts.page_strides = Some(300);
        // A register tile's private loads and stores: no issue slot.
        facts.instructions.ldst += 50_000;
        facts.instructions.private_ldst = 50_000;
        // 500 branches mispredicted, 300 of them in loops between barriers.
        facts.branches = Some(clflow_counts::Branches {
            executed: 5000,
            mispredicted: 500,
            loop_mispredicted: 300,
        });
        // 3,000 lanes gathered, 1,000 of them in loops (which run scalar).
        facts.gathers = Some(Gathers {
            lanes: 3000,
            loop_lanes: 1000,
            carried_lanes: 0,
            masked_lanes: 0,
        });
        let mut rates = device(CPU);
        rates.costs = Some(OpCostRates {
            chain_ops_per_s: 1e9,
            atomics_per_s: 1e8,
            barriers_per_s: 1e9,
            mispredicts_per_s: Some(1e8),
            cache_gathers_per_s: Some(1e8),
            cache_gather_tables: None,
            // 100 ns a trip, of which the add's 3 cycles take 3 ns.
            carried_calls_per_s: Some(1e7),
            page_strides_per_s: Some(1e8),
            page_walks: None,
            walk_table_bytes: None,
            small_page_walks: None,
            small_walk_table_bytes: None,
            gathered_lanes_per_s: Some(1e9),
            builtins: None,
            builtin_walks: None,
            line_walks: None,
            call_walks: None,
            column_walks: None,
        });
        let rate = |v: f64| Rate::new(v, "test");
        rates.bandwidth_by_writes = vec![
            (0.0, rate(10e9)),
            (1.0 / 3.0, rate(9e9)),
            (0.5, rate(8e9)),
            (1.0, rate(5e9)),
        ];
        let p = predict_kernel(&facts, &rates).unwrap();
        let issue = 300_032.0 * 0.1 / 100e9
            + 32_768.0 * 0.1 / 200e9
            + (300_032.0f64 * 0.9 / 10e9).max(32_768.0 * 0.9 / 20e9);
        // The chain (1 ms, and 97 ns for each round trip through the
        // stack) outlasts the 90% of issue it overlaps.
        let chain = 1e-3 + 100.0 * 97e-9;
        assert!(close(p.chain_s.unwrap(), chain), "{p:?}");
        assert!(close(p.round_trips_s.unwrap(), 100.0 * 97e-9), "{p:?}");
        // Only the loops' branches jump: the rest are masks in vectors.
        assert!(close(p.branches_s.unwrap(), 300.0 / 1e8), "{p:?}");
        assert!(close(p.atomics_s.unwrap(), 1e-5) && close(p.barriers_s.unwrap(), 3e-6));
        assert!(close(p.gathers_s.unwrap(), 2e-6), "{p:?}");
        let total = issue * 0.1 + chain + 300.0 / 1e8 + 2e-6 + 1e-5 + 3e-6;
        assert!(close(p.issue_s, total), "{p:?}");
        assert_eq!(p.builtins_s, None);
        // A profile that timed the math builtins: 1,000 of the float lanes
        // are `sin` calls, 10 ns a lane as vectors and 100 ns lane by lane,
        // charged by the shares of steps (a tenth as vectors) apart from
        // the float issue.
        let mut timed = rates.clone();
        timed.costs.as_mut().unwrap().builtins = Some([(1e8, 1e7); 5]);
        let sines = KernelFacts { builtin_lanes: [1000, 0, 0, 0, 0], ..facts.clone() };
        let p = predict_kernel(&sines, &timed).unwrap();
        let builtins = 1000.0 * (0.1 / 1e8 + 0.9 / 1e7);
        assert!(close(p.builtins_s.unwrap(), builtins), "{p:?}");
        let rest = 300_032.0 * 0.1 / 100e9
            + 31_768.0 * 0.1 / 200e9
            + (300_032.0f64 * 0.9 / 10e9).max(31_768.0 * 0.9 / 20e9);
        let total = (rest + builtins) * 0.1 + chain + 300.0 / 1e8 + 2e-6 + 1e-5 + 3e-6;
        assert!(close(p.issue_s, total), "{p:?}");
        // Without timed builtins in the profile, a sine is one operation.
        assert_eq!(predict_kernel(&sines, &rates).unwrap().builtins_s, None);
        // With the walk with a call a step timed too, 300 of the calls go
        // with the 300 loads of the page walk, at its rate, and take them
        // from the page strides; the other 700 are calls as before.
        let mut walking = timed.clone();
        walking.costs.as_mut().unwrap().builtin_walks = Some([1e6; 5]);
        let p = predict_kernel(&sines, &walking).unwrap();
        assert!(close(p.walked_calls_s.unwrap(), 300.0 / 1e6), "{p:?}");
        let called = 700.0 * (0.1 / 1e8 + 0.9 / 1e7);
        assert!(close(p.builtins_s.unwrap(), called), "{p:?}");
        assert_eq!(p.page_strides_s, Some(0.0));
        assert!(
            close(p.memory_s, 12_288.0 / 9e9 + 1e-5 + 300.0 / 1e6),
            "{p:?}"
        );
        // A walk of stores alone takes no call; one that copies, a load
        // and a store a step, takes a call a step with both.
        let stored = KernelFacts { page_stride_stores: Some(300), ..sines.clone() };
        let p = predict_kernel(&stored, &walking).unwrap();
        assert_eq!(p.walked_calls_s, None);
        assert!(close(p.builtins_s.unwrap(), builtins), "{p:?}");
        let copying = KernelFacts {
            page_strides: Some(400),
            page_stride_stores: Some(150),
            ..sines.clone()
        };
        let p = predict_kernel(&copying, &walking).unwrap();
        assert!(close(p.walked_calls_s.unwrap(), 250.0 / 1e6), "{p:?}");
        assert!(close(
            p.builtins_s.unwrap(),
            750.0 * (0.1 / 1e8 + 0.9 / 1e7)
        ));
        // The 400 strides' rate (150 of them stores) for the 0 loads and
        // 0 stores left: nothing.
        assert_eq!(p.page_strides_s, Some(0.0));
        // Kept calls inside loops go with the steps left: 100 calls on a
        // walk that loads take 100 loads and 100 stores at the copying
        // walk's rate; the other 200 strides are page strides.
        let calling = |stores: u64, calls: u64| KernelFacts {
            page_strides: Some(400),
            page_stride_stores: Some(stores),
            chains: facts
                .chains
                .map(|c| clflow_counts::LoopChains { calls, ..c }),
            ..facts.clone()
        };
        let mut kept = walking.clone();
        kept.costs.as_mut().unwrap().call_walks = Some((1e5, 2e5));
        let p = predict_kernel(&calling(150, 100), &kept).unwrap();
        assert!(close(p.walked_calls_s.unwrap(), 100.0 / 1e5), "{p:?}");
        assert!(close(p.page_strides_s.unwrap(), 200.0 / 1e8), "{p:?}");
        // A walk of stores alone with a call on each of its 400 steps:
        // the rate of storing alone, no stride left.
        let p = predict_kernel(&calling(400, 1000), &kept).unwrap();
        assert!(close(p.walked_calls_s.unwrap(), 400.0 / 2e5), "{p:?}");
        assert_eq!(p.page_strides_s, Some(0.0));
        // Unmeasured, or no call: the walk alone.
        assert_eq!(
            predict_kernel(&calling(150, 100), &walking)
                .unwrap()
                .walked_calls_s,
            None
        );
        assert_eq!(
            predict_kernel(&calling(150, 0), &kept)
                .unwrap()
                .walked_calls_s,
            None
        );
        // Vectorising loops too, every gathered lane counts.
        let in_loops = DeviceRates {
            simd: rates.simd.map(|s| Simd { vectorises_loops: true, ..s }),
            ..rates.clone()
        };
        let p = predict_kernel(&facts, &in_loops).unwrap();
        assert!(close(p.gathers_s.unwrap(), 3e-6), "{p:?}");
        // Without barriers, the kernel's loop keeps every step scalar:
        // nothing is gathered.
        let alone = KernelFacts { barriers: 0, loop_barriers: 0, ..facts.clone() };
        let scalar = predict_kernel(&alone, &rates).unwrap();
        assert_eq!(scalar.gathers_s, None);
        // ... and every branch jumps.
        assert!(close(scalar.branches_s.unwrap(), 500.0 / 1e8), "{scalar:?}");
        // A third of the 12,288 bytes written: the add and triad kernels'
        // rate; 1,000 lines gathered from the last-level cache, and 300
        // loads that continue a work-item's stride of a page or more.
        assert_eq!(p.cache_gathers_s, Some(1e-5));
        assert_eq!(p.page_strides_s, Some(3e-6));
        assert!(close(p.memory_s, 12_288.0 / 9e9 + 1e-5 + 3e-6), "{p:?}");
        // Gathers timed from tables of 1 to 64 MiB: a kernel's table takes
        // its size's rate, time per load interpolated in the logarithm of
        // the size between two, the end's rate beyond either end; an
        // unknown table the profile's one rate.
        let mut tabled = in_loops.clone();
        tabled.costs.as_mut().unwrap().cache_gather_tables = Some([
            (1 << 20, 2e9),
            (4 << 20, 1e9),
            (16 << 20, 4e8),
            (64 << 20, 2e8),
        ]);
        let gathering = |table: Option<u64>| {
            let facts = KernelFacts { cache_gather_table: table, ..facts.clone() };
            predict_kernel(&facts, &tabled)
                .unwrap()
                .cache_gathers_s
                .unwrap()
        };
        assert!(close(gathering(Some(16 << 20)), 1000.0 / 4e8));
        assert!(close(
            gathering(Some(8 << 20)),
            1000.0 * (0.5 / 1e9 + 0.5 / 4e8)
        ));
        assert!(close(gathering(Some(64 << 10)), 1000.0 / 2e9));
        assert!(close(gathering(Some(1 << 30)), 1000.0 / 2e8));
        assert!(close(gathering(None), 1000.0 / 1e8));
        // Walks a line a step: 2,000 accesses of a walk of 8 MiB a
        // work-item lie between the 4 and 16 MiB walks in the logarithm of
        // the length, on top of the rest of the memory time; none where
        // the profile timed no such walk.
        let mut lined = in_loops.clone();
        lined.costs.as_mut().unwrap().line_walks = Some([
            (1 << 20, 4e9),
            (4 << 20, 1e9),
            (16 << 20, 5e8),
            (64 << 20, 2.5e8),
        ]);
        let walking = KernelFacts {
            line_strides: Some(2000),
            line_walk_bytes: Some(8 << 20),
            ..facts.clone()
        };
        let p = predict_kernel(&walking, &lined).unwrap();
        let lines = 2000.0 * (0.5 / 1e9 + 0.5 / 5e8);
        assert!(close(p.line_walks_s.unwrap(), lines), "{p:?}");
        assert!(
            close(p.memory_s, 12_288.0 / 9e9 + 1e-5 + 3e-6 + lines),
            "{p:?}"
        );
        // A quarter of the DRAM traffic is the walks' own: the rest moves.
        let own = KernelFacts { line_walk_dram: Some(3072), ..walking.clone() };
        let p = predict_kernel(&own, &lined).unwrap();
        assert!(
            close(p.memory_s, 9216.0 / 9e9 + 1e-5 + 3e-6 + lines),
            "{p:?}"
        );
        let untimed = predict_kernel(&walking, &in_loops).unwrap();
        assert_eq!(untimed.line_walks_s, None);
        // A profile that timed one walk of loads charges stores alike.
        let with_stores = KernelFacts { page_stride_stores: Some(300), ..facts.clone() };
        let p = predict_kernel(&with_stores, &rates).unwrap();
        assert_eq!(p.page_strides_s, Some(3e-6));
        // One that timed walks of several lengths, loading, storing and
        // copying: 300 strides by 4 work-items, 76 a work-item, fall
        // between the walks of 64 and 256 loads (or stores) in the
        // logarithm of the length, and below the shortest copy's 128
        // accesses; a third of them stores lie two thirds of the way from
        // the loads' time per access to the copy's, all of them at the
        // stores'.
        let mut walked = rates.clone();
        walked.costs.as_mut().unwrap().page_walks =
            Some([(64, 4e8), (256, 2e8), (1024, 1.5e8), (4096, 1e8)].map(
                |(steps, loads): (u32, f64)| WalkRates {
                    steps,
                    loads_per_s: loads,
                    stores_per_s: loads / 4.0,
                    copies_per_s: loads * 1.25,
                },
            ));
        let strides_by = |walkers: u64, stores: u64| {
            let facts = KernelFacts {
                page_walkers: Some(walkers),
                page_stride_stores: Some(stores),
                ..facts.clone()
            };
            predict_kernel(&facts, &walked)
                .unwrap()
                .page_strides_s
                .unwrap()
        };
        let t = (76f64.log2() - 6.0) / 2.0;
        let between = |short: f64, long: f64| 300.0 * ((1.0 - t) / short + t / long);
        assert!(close(strides_by(4, 0), between(4e8, 2e8)));
        assert!(close(strides_by(4, 300), between(1e8, 0.5e8)));
        let loads = between(4e8, 2e8) / 300.0;
        let third = 300.0 * (loads / 3.0 + 2.0 / 3.0 / (4e8 * 1.25));
        assert!(close(strides_by(4, 100), third), "{}", strides_by(4, 100));
        // One work-item's 301 steps: between the walks of 256 and 1,024.
        let t = (301f64.log2() - 8.0) / 2.0;
        let over_large = 300.0 * ((1.0 - t) / 2e8 + t / 1.5e8);
        assert!(close(strides_by(1, 0), over_large));
        // Walks timed through a small table too: a kernel walking as many
        // bytes takes their rate (4e8 at every length), one walking more
        // than the large table the large one's, one between them the time
        // per access between, in the logarithm of the bytes.
        let costs = walked.costs.as_mut().unwrap();
        costs.walk_table_bytes = Some(128 << 20);
        costs.small_walk_table_bytes = Some(8 << 20);
        costs.small_page_walks = Some([64, 256, 1024, 4096].map(|steps| WalkRates {
            steps,
            loads_per_s: 4e8,
            stores_per_s: 1e8,
            copies_per_s: 5e8,
        }));
        let walking = |bytes: u64| {
            let facts = KernelFacts {
                page_walkers: Some(1),
                page_stride_stores: Some(0),
                page_walk_bytes: Some(bytes),
                ..facts.clone()
            };
            predict_kernel(&facts, &walked)
                .unwrap()
                .page_strides_s
                .unwrap()
        };
        assert!(close(walking(4 << 20), 300.0 / 4e8));
        assert!(close(walking(8 << 20), 300.0 / 4e8));
        assert!(close(walking(1 << 30), over_large));
        // 32 MiB: half way from 8 to 128 MiB in the logarithm.
        let half = 0.5 * 300.0 / 4e8 + 0.5 * over_large;
        assert!(close(walking(32 << 20), half), "{}", walking(32 << 20));
        // Unknown bytes: the large table's rate, as before.
        let facts_unknown = KernelFacts {
            page_walkers: Some(1),
            page_stride_stores: Some(0),
            ..facts.clone()
        };
        let unknown = predict_kernel(&facts_unknown, &walked).unwrap();
        assert!(close(unknown.page_strides_s.unwrap(), over_large));
        // Between two measured shares, the time per byte is interpolated.
        let quarter = 1.0 / (0.25 / 10e9 + 0.75 / 9e9);
        assert!(close(rates.bandwidth_at(0.25).unwrap(), quarter));
        assert_eq!(rates.bandwidth_at(1.0), Some(5e9));
        // Simulated, the same bytes with their writes all in place (lines
        // a load brought in): the read rate on a CPU.
        facts.traffic.simulated = Some(12_288);
        facts.traffic.simulated_written = Some(4096);
        facts.traffic.simulated_allocated = Some(0);
        let p = predict_kernel(&facts, &rates).unwrap();
        assert!(close(p.memory_s, 12_288.0 / 10e9 + 1e-5 + 3e-6), "{p:?}");
        // Bound by memory (4 ms at the read rate), the gathered lanes still
        // take their 2 µs on top.
        facts.traffic.simulated = Some(40_000_000);
        let p = predict_kernel(&facts, &rates).unwrap();
        assert_eq!(p.bound, Bound::Memory);
        assert!(close(p.memory_s, 4e-3 + 1e-5 + 3e-6), "{p:?}");
        assert!(close(p.time_s, p.launch_s + p.memory_s + 2e-6), "{p:?}");
        facts.traffic.simulated = Some(12_288);
        // A GPU charges the written share, and no barrier of its own.
        facts.traffic.simulated_allocated = Some(4096);
        let gpu = device(Simd { width: 32, kind: SimdKind::Simt, vectorises_loops: true });
        let gpu = DeviceRates {
            costs: rates.costs,
            bandwidth_by_writes: rates.bandwidth_by_writes.clone(),
            ..gpu
        };
        assert_eq!(barrier_passes(&facts, SimdKind::Simt), 2000);
        assert_eq!(barrier_passes(&facts, SimdKind::WorkGroupVectoriser), 3000);
        let p = predict_kernel(&facts, &gpu).unwrap();
        assert!(close(p.barriers_s.unwrap(), 2e-6), "{p:?}");
        // A GPU's warp takes scattered addresses in one instruction.
        assert_eq!(p.gathers_s, None);
    }

    /// On a CPU, the bytes written back to lines a load brought in cost
    /// what the in-place update's write-backs add to its reads; the rest
    /// moves at the stream rate of its share of lines a store brought in.
    #[test]
    fn in_place_write_backs_cost_what_the_update_adds_to_its_reads() {
        let mut facts = sgemm_facts();
        // 3 MB read, 1 MB written back in place, 1 MB written to lines
        // stores brought in.
        facts.traffic.simulated = Some(5_000_000);
        facts.traffic.simulated_written = Some(2_000_000);
        facts.traffic.simulated_allocated = Some(1_000_000);
        assert_eq!(facts.traffic.dram_written_in_place(), 1_000_000);
        let mut rates = device(CPU);
        rates.bandwidth_by_writes = vec![
            (0.0, Rate::new(10e9, "read")),
            (0.5, Rate::new(8e9, "copy")),
        ];
        let memory = |rates: &DeviceRates, kind| memory_time(&facts, rates, kind).unwrap().0;
        let cpu = SimdKind::WorkGroupVectoriser;
        // No update timed: all 5 MB at the share of a fifth.
        let all = 5e6 * (0.6 / 10e9 + 0.4 / 8e9);
        assert!(close(memory(&rates, cpu), all));
        // The update moves 16 GB/s counting both ways: 0.125 ns a byte
        // read and written back, of which a read takes 0.1 ns.
        rates.in_place_bandwidth = Some(Rate::new(16e9, "update"));
        let split = 4e6 * (0.5 / 10e9 + 0.5 / 8e9) + 1e6 * (2.0 / 16e9 - 1.0 / 10e9);
        assert!(close(memory(&rates, cpu), split), "{}", memory(&rates, cpu));
        let (_, write_backs) = memory_time(&facts, &rates, cpu).unwrap();
        assert!(close(write_backs.unwrap(), 1e6 * (2.0 / 16e9 - 1.0 / 10e9)));
        // An update no slower than its reads: the write-backs cost nothing.
        rates.in_place_bandwidth = Some(Rate::new(25e9, "update"));
        assert!(close(memory(&rates, cpu), 4e6 * (0.5 / 10e9 + 0.5 / 8e9)));
        // A GPU charges the written share, as before.
        let gpu = memory(&rates, SimdKind::Simt);
        assert!(close(gpu, 5e6 * (0.2 / 10e9 + 0.8 / 8e9)), "{gpu}");
        // Without a simulation, nothing is known to be written in place.
        facts.traffic.simulated_allocated = None;
        assert_eq!(facts.traffic.dram_written_in_place(), 0);
    }

    /// Lines first touched a few of a page at a time cost the column
    /// walks' rate at their visits' length, in place of the stream, which
    /// moves the rest; not where every line fits the measured cache, nor
    /// where the profile lacks the walks.
    #[test]
    fn lines_read_a_few_of_a_page_at_a_time_cost_the_column_walks_rate() {
        let mut facts = looped_sgemm();
        facts.traffic.compulsory = 6_400_000;
        facts.traffic.simulated = Some(6_400_000);
        facts.traffic.simulated_written = Some(0);
        facts.traffic.simulated_allocated = Some(0);
        facts.traffic.cache_bytes = Some(480 << 20);
        // 10,000 lines in visits of one line, 20,000 in visits of 4 to 7
        // (5.5 on average): 1.92 MB of the 6.4.
        facts.short_visits = Some([10_000, 0, 20_000, 0, 0, 0]);
        let mut rates = device(CPU);
        rates.costs = Some(OpCostRates {
            chain_ops_per_s: 1e9,
            atomics_per_s: 1e8,
            barriers_per_s: 1e9,
            column_walks: Some([(1, 1e7), (4, 2e7), (16, 4e7)]),
            ..OpCostRates::default()
        });
        let p = predict_kernel(&facts, &rates).unwrap();
        let t = ((5.5f64).log2() - 2.0) / 2.0;
        let visits = 10_000.0 / 1e7 + 20_000.0 * ((1.0 - t) / 2e7 + t / 4e7);
        assert!(close(p.short_visits_s.unwrap(), visits), "{p:?}");
        let stream = 6.4e6 * 0.7 / 10e9;
        assert!(close(p.memory_s, stream + visits), "{p:?}");
        // Past 16 lines, towards the stream's rate at 64 (10 GB/s of
        // 64-byte lines).
        facts.short_visits = Some([0, 0, 0, 0, 0, 1000]);
        let p = predict_kernel(&facts, &rates).unwrap();
        let t = (47.5f64.log2() - 4.0) / 2.0;
        let line = (1.0 - t) / 4e7 + t * 64.0 / 10e9;
        assert!(close(p.short_visits_s.unwrap(), 1000.0 * line), "{p:?}");
        // The same visits simulated in 128-byte lines: twice the bytes, each
        // visit twice as many of the walks' lines (10,000 lines in visits of
        // 2, 20,000 in visits of 11).
        facts.short_visits = Some([10_000, 0, 20_000, 0, 0, 0]);
        facts.short_visit_line_bytes = Some(128);
        let p = predict_kernel(&facts, &rates).unwrap();
        let t = (11f64.log2() - 2.0) / 2.0;
        let visits = 2.0 * (10_000.0 * (0.5 / 1e7 + 0.5 / 2e7))
            + 2.0 * 20_000.0 * ((1.0 - t) / 2e7 + t / 4e7);
        assert!(close(p.short_visits_s.unwrap(), visits), "{p:?}");
        let stream = (6.4e6 - 30_000.0 * 128.0) / 10e9;
        assert!(close(p.memory_s, stream + visits), "{p:?}");
        facts.short_visit_line_bytes = None;
        facts.short_visits = Some([0, 0, 0, 0, 0, 1000]);
        // Every line in the measured cache: no visit waits on memory.
        let mut cached = rates.clone();
        cached.cache_bandwidth = Some(Rate::new(100e9, "test"));
        cached.cache_window_bytes = Some(8 << 20);
        assert_eq!(
            predict_kernel(&facts, &cached).unwrap().short_visits_s,
            None
        );
        // A profile without the walks: the stream moves every line.
        rates.costs.as_mut().unwrap().column_walks = None;
        let p = predict_kernel(&facts, &rates).unwrap();
        assert_eq!(p.short_visits_s, None);
        assert!(close(p.memory_s, 6.4e6 / 10e9), "{p:?}");
    }

    /// Launched again and again, a kernel whose lines fit the measured
    /// cache's window moves them at that cache's bandwidth; one that fits
    /// only the (simulated) last-level cache, as the host's whole cache
    /// that a virtual machine's driver reports, moves them at memory's.
    #[test]
    fn only_lines_that_fit_the_measured_cache_move_at_its_bandwidth() {
        let mut facts = sgemm_facts();
        facts.traffic.compulsory = 1 << 20;
        facts.traffic.simulated = Some(1 << 20);
        facts.traffic.cache_bytes = Some(480 << 20);
        let mut rates = device(CPU);
        rates.cache_bandwidth = Some(Rate::new(100e9, "test"));
        let memory = |rates: &DeviceRates, facts: &KernelFacts| {
            memory_time(facts, rates, SimdKind::WorkGroupVectoriser)
                .unwrap()
                .0
        };
        // No window measured: the stream's rate.
        assert!(close(memory(&rates, &facts), f64::from(1 << 20) / 10e9));
        rates.cache_window_bytes = Some(4 << 20);
        assert!(close(memory(&rates, &facts), f64::from(1 << 20) / 100e9));
        rates.cache_window_bytes = Some(256 << 10);
        assert!(close(memory(&rates, &facts), f64::from(1 << 20) / 10e9));
        // Nor where the simulated cache is smaller than the window.
        rates.cache_window_bytes = Some(4 << 20);
        facts.traffic.cache_bytes = Some(512 << 10);
        assert!(close(memory(&rates, &facts), f64::from(1 << 20) / 10e9));
    }
}
