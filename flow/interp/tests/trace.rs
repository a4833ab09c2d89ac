//! The global access stream: every access, in work-group order, with the
//! counts and outputs of an untraced run.

mod common;
use clflow_interp::{AccessKind, AccessSink, GlobalAccess, RunOptions, TraceBuffer};
use common::*;

/// Keeps everything it is given.
#[derive(Default)]
struct Recording {
    buffers: Vec<TraceBuffer>,
    groups: Vec<(u64, Vec<GlobalAccess>)>,
}

impl AccessSink for Recording {
    fn buffers(&mut self, buffers: &[TraceBuffer]) {
        self.buffers = buffers.to_vec();
    }

    fn work_group(&mut self, group: u64, accesses: &[GlobalAccess]) {
        self.groups.push((group, accesses.to_vec()));
    }
}

const GATHER: &str = r#"
__kernel void gather(__global const float4 *in, __global const uint *index,
                     __global float *out, __global uint *hits) {
  size_t i = get_global_id(0);
  float4 v = in[index[i]];
  out[i] = v.x + v.y + v.z + v.w;
  if (get_local_id(0) == 0) atomic_inc(hits);
}"#;

/// `gather` over `n` float4s in groups of `local`, work-item i reading
/// `index(i)`.
fn gather_launch(n: u32, local: u64, index: impl Fn(u32) -> u32) -> clflow_core::Launch {
    let index: Vec<u32> = (0..n).map(index).collect();
    let input: Vec<f32> = (0..4 * n).map(|i| i as f32).collect();
    launch(
        "gather",
        &[n as u64],
        Some(&[local]),
        vec![
            f32s(&input),
            u32s(&index),
            f32s(&vec![0.0; n as usize]),
            u32s(&[0]),
        ],
    )
}

#[test]
fn every_access_arrives_in_work_group_order_with_its_work_item() {
    let n = 256u32;
    let launch = gather_launch(n, 32, |i| (i * 7) % n);
    let program = program(GATHER, "gather");
    let plain = program.run(&launch, &RunOptions::default()).unwrap();
    let mut recording = Recording::default();
    let options = RunOptions { threads: Some(3), ..RunOptions::default() };
    let traced = program
        .run_traced(&launch, &options, &mut recording)
        .unwrap();
    assert_eq!(traced.buffers, plain.buffers);
    assert_eq!(traced.counts.q_accessed(), plain.counts.q_accessed());

    assert_eq!(recording.buffers.len(), 4);
    assert_eq!(recording.buffers[0].bytes, 16 * n as u64);
    let order: Vec<u64> = recording.groups.iter().map(|(g, _)| *g).collect();
    assert_eq!(order, (0..8).collect::<Vec<_>>(), "work-groups in order");
    for (g, accesses) in &recording.groups {
        // Per work-item: index (load), the 16 bytes of in[index] (as one
        // float4 load or one per lane: the compiler decides), out (store);
        // and one atomic per group.
        let of = |b: u32| accesses.iter().filter(move |a| u32::from(a.buffer) == b);
        assert_eq!(
            of(1).count() + of(2).count() + of(3).count(),
            2 * 32 + 1,
            "group {g}"
        );
        let mut read = vec![0u64; 32];
        for a in of(0) {
            let i = (g * 32 + a.item as u64) as usize;
            let at = 16 * ((i as u32 * 7) % n) as u64;
            assert_eq!(a.kind, AccessKind::Load);
            assert!(
                a.offset >= at && a.offset + a.bytes as u64 <= at + 16,
                "{a:?}"
            );
            read[a.item as usize] += a.bytes as u64;
        }
        assert_eq!(read, vec![16; 32]);
        for a in accesses.iter().filter(|a| a.buffer == 2) {
            assert_eq!(a.kind, AccessKind::Store);
            assert_eq!(a.offset, 4 * (g * 32 + a.item as u64));
        }
        let atomics: Vec<_> = accesses.iter().filter(|a| a.buffer == 3).collect();
        assert_eq!(atomics.len(), 1);
        assert_eq!((atomics[0].kind, atomics[0].item), (AccessKind::Atomic, 0));
        // One instruction's accesses share a dispatch, and come before the
        // next instruction's.
        let loads_of_index: Vec<_> = accesses.iter().filter(|a| a.buffer == 1).collect();
        assert!(loads_of_index
            .iter()
            .all(|a| a.dispatch == loads_of_index[0].dispatch));
        let first_out = accesses.iter().position(|a| a.buffer == 2).unwrap();
        assert!(
            accesses[..first_out]
                .iter()
                .filter(|a| a.buffer == 1)
                .count()
                == 32
        );
    }
    let bytes: u64 = recording
        .groups
        .iter()
        .flat_map(|(_, a)| a)
        .map(|a| a.bytes as u64 * if a.kind == AccessKind::Atomic { 2 } else { 1 })
        .sum();
    assert_eq!(bytes, plain.counts.q_accessed());
}

#[test]
fn a_fault_stops_the_trace_with_the_work_item_at_fault() {
    const OOB: &str = r#"
__kernel void oob(__global float *a) {
  size_t i = get_global_id(0);
  a[i * 2] = 1.0f;
}"#;
    let launch = launch("oob", &[64], Some(&[8]), vec![f32s(&[0.0; 64])]);
    let program = program(OOB, "oob");
    // Work-groups 4 to 7 all write past the 64 floats; whichever thread
    // faults first, the error is always work-group 4's first work-item's.
    for threads in [1, 2, 3] {
        let options = RunOptions { threads: Some(threads), ..RunOptions::default() };
        for _ in 0..10 {
            let mut recording = Recording::default();
            let err = program
                .run_traced(&launch, &options, &mut recording)
                .unwrap_err();
            assert!(
                err.to_string().contains("(32,0,0)"),
                "{threads} threads: {err}"
            );
            assert!(recording.groups.iter().all(|(g, _)| *g < 4));
            let err = program.run(&launch, &options).unwrap_err();
            assert!(
                err.to_string().contains("(32,0,0)"),
                "{threads} threads: {err}"
            );
        }
    }
}

#[test]
fn a_work_group_with_a_million_accesses_arrives_in_chunks_of_whole_dispatches() {
    const SUM: &str = r#"
__kernel void sum(__global const float *a, __global float *out, uint n) {
  size_t i = get_global_id(0);
  float s = 0.0f;
  for (uint k = 0; k < n; k++)
    s += a[k * 64 + get_local_id(0)];
  out[i] = s;
}"#;
    // Two work-groups of 64, each reading 64 × 20,000 floats: 1,280,000
    // loads a group, more than one chunk holds.
    let n = 20_000u32;
    let a: Vec<f32> = (0..64 * n).map(|i| (i % 7) as f32).collect();
    let launch = launch(
        "sum",
        &[128],
        Some(&[64]),
        vec![f32s(&a), f32s(&[0.0; 128]), scalar(n.to_le_bytes())],
    );
    let program = program(SUM, "sum");
    let mut recording = Recording::default();
    let options = RunOptions { threads: Some(2), ..RunOptions::default() };
    let traced = program
        .run_traced(&launch, &options, &mut recording)
        .unwrap();
    let order: Vec<u64> = recording.groups.iter().map(|(g, _)| *g).collect();
    assert!(order.windows(2).all(|w| w[0] <= w[1]), "{order:?}");
    assert!(order.iter().filter(|g| **g == 0).count() >= 2, "{order:?}");
    for g in 0..2 {
        let chunks: Vec<&Vec<GlobalAccess>> = recording
            .groups
            .iter()
            .filter(|(group, _)| *group == g)
            .map(|(_, a)| a)
            .collect();
        let total: usize = chunks.iter().map(|c| c.len()).sum();
        assert_eq!(total, 64 * n as usize + 64, "group {g}");
        // A chunk ends where a dispatch ends.
        for pair in chunks.windows(2) {
            let (end, start) = (pair[0].last().unwrap(), pair[1].first().unwrap());
            assert_ne!(end.dispatch, start.dispatch);
        }
    }
    let bytes: u64 = recording
        .groups
        .iter()
        .flat_map(|(_, a)| a)
        .map(|a| a.bytes as u64)
        .sum();
    assert_eq!(bytes, traced.counts.q_accessed());
}

#[test]
fn a_run_counts_its_finished_work_groups_for_a_watcher() {
    let launch = gather_launch(256, 32, |i| i);
    let program = program(GATHER, "gather");
    let progress = std::sync::Arc::new(clflow_interp::Progress::default());
    assert_eq!((progress.total(), progress.done()), (0, 0));
    for threads in [1, 2] {
        let options = RunOptions {
            threads: Some(threads),
            progress: Some(progress.clone()),
            ..RunOptions::default()
        };
        program.run(&launch, &options).unwrap();
        // 256 work-items in groups of 32: every one of the 8 counted, once.
        assert_eq!((progress.total(), progress.done()), (8, 8));
    }
}

/// Wants `__local` accesses too.
#[derive(Default)]
struct LocalRecording(Recording);

impl AccessSink for LocalRecording {
    fn buffers(&mut self, buffers: &[TraceBuffer]) {
        self.0.buffers(buffers);
    }

    fn wants_local(&self) -> bool {
        true
    }

    fn work_group(&mut self, group: u64, accesses: &[GlobalAccess]) {
        self.0.work_group(group, accesses);
    }
}

const REVERSE: &str = r#"
__kernel void reverse(__global const uint *in, __global uint *out, __local uint *tile) {
  size_t l = get_local_id(0), n = get_local_size(0);
  tile[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = tile[n - 1 - l];
}"#;

#[test]
fn a_sink_that_asks_gets_local_accesses_with_the_barriers_passed() {
    let program = program(REVERSE, "reverse");
    let input: Vec<u32> = (0..64).collect();
    let launch = launch(
        "reverse",
        &[64],
        Some(&[16]),
        vec![u32s(&input), u32s(&[0; 64]), local(64)],
    );
    let mut plain = Recording::default();
    program
        .run_traced(&launch, &RunOptions::default(), &mut plain)
        .unwrap();
    assert!(plain
        .groups
        .iter()
        .all(|(_, a)| a.iter().all(|a| a.buffer < 3)));
    assert_eq!(plain.buffers.len(), 3);

    let mut with_local = LocalRecording::default();
    let result = program
        .run_traced(&launch, &RunOptions::default(), &mut with_local)
        .unwrap();
    let expected: Vec<u8> = (0..64u32)
        .map(|i| (i / 16) * 16 + 15 - i % 16)
        .flat_map(u32::to_le_bytes)
        .collect();
    assert_eq!(result.buffers[1].bytes, expected);
    // The local buffers follow the globals, one per argument (empty but
    // for `tile`'s) and one per local variable.
    let recording = with_local.0;
    let tile = recording
        .buffers
        .iter()
        .position(|b| b.space == "__local" && b.bytes == 64)
        .unwrap() as u32;
    assert!(tile >= 3);
    for (_, accesses) in &recording.groups {
        let local: Vec<_> = accesses
            .iter()
            .filter(|a| u32::from(a.buffer) == tile)
            .collect();
        // Each work-item stores its slot before the barrier, and loads its
        // mirror's after it.
        assert_eq!(local.len(), 32);
        for a in &local {
            let (phase, offset) = match a.kind {
                AccessKind::Store => (0, 4 * a.item as u64),
                _ => (1, 4 * (15 - a.item as u64)),
            };
            assert_eq!((a.phase, a.offset, a.atomic), (phase, offset, false));
        }
    }
    // The atomic flag: gather's one atomic_inc per group.
    let mut recording = Recording::default();
    program_gather_atomics(&mut recording);
    let atomics: Vec<_> = recording.groups[0]
        .1
        .iter()
        .filter(|a| a.buffer == 3)
        .collect();
    assert!(atomics
        .iter()
        .all(|a| a.atomic && a.kind == AccessKind::Atomic));
    assert_eq!(atomics.len(), 1);
}

fn program_gather_atomics(sink: &mut dyn AccessSink) {
    let program = program(GATHER, "gather");
    let launch = gather_launch(64, 32, |i| i);
    program
        .run_traced(&launch, &RunOptions::default(), sink)
        .unwrap();
}

/// Each work-item sums `steps` elements a group's size apart, then, past a
/// barrier, stores its sum: a GPU's block-stride loop.
const BLOCK_STRIDE: &str = r#"
__kernel void block_stride(__global const uint *in, __global uint *out, uint steps) {
  size_t l = get_local_id(0), n = get_local_size(0), base = get_group_id(0) * n * steps;
  uint sum = 0;
  for (uint k = 0; k < steps; ++k) sum += in[base + k * n + l];
  barrier(CLK_GLOBAL_MEM_FENCE);
  out[get_global_id(0)] = sum;
}"#;

/// The work-items whose accesses come one after another, each once for
/// its run of accesses.
fn runs_of_items(accesses: &[GlobalAccess]) -> Vec<u32> {
    let mut items: Vec<u32> = accesses.iter().map(|a| a.item).collect();
    items.dedup();
    items
}

#[test]
fn a_cpu_order_runs_each_work_item_up_to_its_barrier_before_the_next() {
    use clflow_interp::ItemOrder;
    let program = program(BLOCK_STRIDE, "block_stride");
    let (items, steps) = (8u32, 5u32);
    let input: Vec<u32> = (0..2 * items * steps).collect();
    let launch = launch(
        "block_stride",
        &[2 * items as u64],
        Some(&[items as u64]),
        vec![u32s(&input), u32s(&[0; 16]), scalar(steps.to_le_bytes())],
    );
    let traced = |order| {
        let mut recording = Recording::default();
        let options = RunOptions { order, ..RunOptions::default() };
        let result = program
            .run_traced(&launch, &options, &mut recording)
            .unwrap();
        (result, recording)
    };
    let (lockstep, in_lockstep) = traced(ItemOrder::Lockstep);
    let (one, one_at_a_time) = traced(ItemOrder::Vectors(1));
    let (four, four_at_a_time) = traced(ItemOrder::Vectors(4));
    assert_eq!(one.order, ItemOrder::Vectors(1));
    for result in [&one, &four] {
        assert_eq!(result.buffers, lockstep.buffers);
        assert_eq!(result.counts.q_accessed(), lockstep.counts.q_accessed());
    }
    let sums: Vec<u32> = (0..2 * items)
        .map(|i| {
            let (g, l) = (i / items, i % items);
            (0..steps).map(|k| g * items * steps + k * items + l).sum()
        })
        .collect();
    assert_eq!(as_u32(&lockstep.buffers[1].bytes), sums);

    let group = |recording: &Recording| recording.groups[1].1.clone();
    // In lockstep, each load is made for every work-item together.
    let lock = group(&in_lockstep);
    assert_eq!(
        &runs_of_items(&lock)[..2 * items as usize],
        &[0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7]
    );
    // One at a time: each work-item's five loads, then the next's; past
    // the barrier, the stores in the same order.
    let one = group(&one_at_a_time);
    let expected: Vec<u32> = (0..items).chain(0..items).collect();
    assert_eq!(runs_of_items(&one), expected);
    let first: Vec<(u64, u16)> = one[..steps as usize]
        .iter()
        .map(|a| (a.offset, a.phase))
        .collect();
    let base = 4 * (items * steps) as u64;
    let walk: Vec<(u64, u16)> = (0..steps as u64)
        .map(|k| (base + 4 * items as u64 * k, 0))
        .collect();
    assert_eq!(first, walk);
    assert!(one[(items * steps) as usize..]
        .iter()
        .all(|a| a.phase == 1 && a.kind == AccessKind::Store));
    // Four at a time: work-items 0-3 in lockstep through their loop, then
    // 4-7.
    let four = group(&four_at_a_time);
    let loads: Vec<u32> = four[..(4 * steps) as usize]
        .iter()
        .map(|a| a.item)
        .collect();
    assert_eq!(loads, [0, 1, 2, 3].repeat(steps as usize));
    assert!(four[(4 * steps) as usize..(8 * steps) as usize]
        .iter()
        .all(|a| a.item >= 4));
}

/// A sink that estimates once it has taken `exact` work-groups whole, and
/// then takes line touches of 64-byte lines.
#[derive(Default)]
struct Estimating {
    exact: u64,
    whole: Vec<(u64, Vec<GlobalAccess>, u64)>,
    lines: Vec<(u64, Vec<clflow_interp::LineTouch>, u64)>,
    /// The groups the sink had each time it heard that the run never
    /// reorders.
    told_never: Vec<usize>,
}

impl AccessSink for Estimating {
    fn buffers(&mut self, _: &[TraceBuffer]) {}

    fn work_group(&mut self, group: u64, accesses: &[GlobalAccess]) {
        self.whole.push((group, accesses.to_vec(), 1));
    }

    fn line_touches(&self) -> Option<u64> {
        Some(64)
    }

    fn reorders(&mut self) -> bool {
        self.whole.len() as u64 >= self.exact
    }

    fn never_reorders(&mut self) {
        self.told_never.push(self.whole.len());
    }

    fn take_lines(&mut self, group: u64, touches: Vec<clflow_interp::LineTouch>, bytes: u64) {
        self.lines.push((group, touches, bytes));
    }

    fn take_sample(&mut self, group: u64, accesses: Vec<GlobalAccess>, stands_for: u64) {
        self.whole.push((group, accesses, stands_for));
    }
}

/// A work-group's accesses as compiled code hands them over: each
/// work-item's in the order it made them, as the 64-byte lines they
/// touch, a touch of a line that holds its slot in the group's table of
/// recent lines folding into the touch there.
fn as_line_touches(accesses: &[GlobalAccess], items: u32) -> (Vec<clflow_interp::LineTouch>, u64) {
    use clflow_interp::LineTouch;
    let mut touches: Vec<LineTouch> = Vec::new();
    let mut table = vec![(u64::MAX, 0); LineTouch::SLOTS as usize];
    let mut bytes = 0;
    for item in 0..items {
        for a in accesses.iter().filter(|a| a.item == item) {
            let kind = match a.kind {
                AccessKind::Load => LineTouch::READS,
                AccessKind::Store => LineTouch::WRITES,
                AccessKind::Atomic => LineTouch::READS | LineTouch::WRITES,
            };
            bytes += a.bytes as u64 * if a.kind == AccessKind::Atomic { 2 } else { 1 };
            for line in a.offset / 64..=(a.offset + a.bytes as u64 - 1) / 64 {
                let key = LineTouch::key(a.buffer.into(), line);
                let slot = &mut table[LineTouch::slot(key) as usize];
                if slot.0 == key {
                    touches[slot.1].kind |= kind & LineTouch::WRITES;
                } else {
                    *slot = (key, touches.len());
                    touches.push(LineTouch { key, site: a.site, kind });
                }
            }
        }
    }
    (touches, bytes)
}

const UPDATE: &str = r#"
__kernel void update(__global float *a, __global float2 *b) {
  size_t i = get_global_id(0);
  a[i] = a[i] * 3.0f;
  if (i % 4 == 0) b[i / 4] = b[i / 4] * 0.5f;
}"#;

#[test]
fn once_the_sink_estimates_compiled_work_groups_hand_over_their_line_touches() {
    // 4,096 work-groups of 8: a few after the first 5, one in 63 is traced
    // whole and stands for itself and the 62 compiled after it (at least
    // 64 such samples).
    let n = 8 * 4096u32;
    let update = launch(
        "update",
        &[n as u64],
        Some(&[8]),
        vec![
            f32s(&vec![1.5; n as usize]),
            f32s(&vec![0.5; n as usize / 2]),
        ],
    );
    for (source, name, launch) in [
        (GATHER, "gather", gather_launch(n, 8, |i| i / 2)),
        (UPDATE, "update", update),
    ] {
        estimates_from_line_touches(&program(source, name), &launch);
    }
}

#[test]
fn a_launch_with_too_few_work_groups_left_to_sample_runs_none_compiled() {
    // 100 work-groups of 8: once the sink estimates, fewer than 128 are
    // left, and a sample of 64 traced whole would be every other one.
    let n = 8 * 100u32;
    let launch = gather_launch(n, 8, |i| i / 2);
    let mut estimating = Estimating { exact: 5, ..Estimating::default() };
    let options = RunOptions { threads: Some(3), ..RunOptions::default() };
    let run = program(GATHER, "gather")
        .run_traced(&launch, &options, &mut estimating)
        .unwrap();
    // Nor is the kernel compiled for nothing.
    match run.engine {
        clflow_interp::Engine::Interpreted(why) => assert!(why.contains("too few"), "{why}"),
        engine => panic!("{engine:?}"),
    }
    assert!(estimating.lines.is_empty());
    let groups: Vec<(u64, u64)> = estimating.whole.iter().map(|w| (w.0, w.2)).collect();
    assert_eq!(groups, (0..100).map(|g| (g, 1)).collect::<Vec<_>>());
    // The sink heard so before the first group.
    assert_eq!(estimating.told_never, [0]);
}

#[test]
fn a_sink_that_would_reorder_too_late_hears_that_the_run_never_does() {
    // 200 work-groups of 8: the sink would estimate after 150, when too
    // few are left to sample; at the start enough were.
    let launch = gather_launch(8 * 200, 8, |i| i / 2);
    let mut estimating = Estimating { exact: 150, ..Estimating::default() };
    let options = RunOptions { threads: Some(3), ..RunOptions::default() };
    program(GATHER, "gather")
        .run_traced(&launch, &options, &mut estimating)
        .unwrap();
    assert!(estimating.lines.is_empty());
    assert_eq!(estimating.whole.len(), 200);
    assert_eq!(estimating.told_never, [150]);
}

/// Runs `launch` traced whole, interpreted, and for a sink that
/// estimates after 5 work-groups: the same counts and outputs, and each
/// work-group's accesses, whole or as line touches, are what the
/// interpreter traced.
fn estimates_from_line_touches(program: &clflow_interp::Program, launch: &clflow_core::Launch) {
    let options = RunOptions { threads: Some(3), ..RunOptions::default() };
    let mut whole = Recording::default();
    let interpreted = RunOptions { tier: clflow_interp::Tier::Interpret, ..options.clone() };
    let plain = program
        .run_traced(launch, &interpreted, &mut whole)
        .unwrap();
    let mut estimating = Estimating { exact: 5, ..Estimating::default() };
    let run = program
        .run_traced(launch, &options, &mut estimating)
        .unwrap();
    assert!(estimating.told_never.is_empty());
    assert_eq!(run.buffers, plain.buffers);
    assert_eq!(run.counts, plain.counts);

    // Every group once, whole or as lines; the samples stand for all the
    // groups from the first that may run compiled.
    let mut groups: Vec<u64> = estimating.whole.iter().map(|w| w.0).collect();
    groups.extend(estimating.lines.iter().map(|l| l.0));
    groups.sort();
    assert_eq!(groups, (0..4096).collect::<Vec<_>>());
    let from = estimating.whole.iter().position(|w| w.2 != 1).unwrap() as u64;
    assert!((5..5 + 2 * 3 * 2).contains(&from), "from group {from}");
    let samples = &estimating.whole[from as usize..];
    let every = ((4096 - from) / 64).min(128);
    assert_eq!(samples[0].2, every);
    assert!(samples.windows(2).all(|w| w[1].0 - w[0].0 == every));
    let stood_for: u64 = samples.iter().map(|w| w.2).sum();
    assert_eq!(stood_for, 4096 - from);
    assert_eq!(
        estimating.lines.len() as u64,
        4096 - from - (4096 - from).div_ceil(every)
    );

    // A whole group is what the interpreter traced; a compiled one hands
    // over its work-items' touches and bytes exactly.
    for (group, accesses, _) in &estimating.whole {
        let expected = renumbered(&whole.groups[*group as usize].1);
        assert_eq!(renumbered(accesses), expected, "group {group}");
    }
    for (group, touches, bytes) in &estimating.lines {
        let expected = as_line_touches(&whole.groups[*group as usize].1, 8);
        assert_eq!(
            (touches, bytes),
            (&expected.0, &expected.1),
            "group {group}"
        );
    }
}

/// The cache simulation and the coalescing analysis of a run whose
/// work-groups run compiled once the simulation samples: what a cache that
/// holds everything moves and the bytes accessed stay exact; the
/// coalescing, from a sample of whole work-groups, comes within a few
/// percent of the whole run's.
#[test]
fn a_sampled_simulation_fed_by_compiled_work_groups_keeps_its_exact_ends() {
    let n = 8 * 4096u32;
    let launch = gather_launch(n, 8, |i| i / 2);
    let program = program(GATHER, "gather");
    let analyse = |tier| {
        let mut analysis = clflow_traffic::TrafficAnalysis::new(&[64]).sampling_after(20_000);
        let options = RunOptions { threads: Some(2), tier, ..RunOptions::default() };
        let run = program
            .run_traced(&launch, &options, &mut analysis)
            .unwrap();
        (run, analysis.finish())
    };
    let (whole_run, whole) = analyse(clflow_interp::Tier::Interpret);
    let (run, estimated) = analyse(clflow_interp::Tier::Auto);
    assert_eq!(run.counts, whole_run.counts);
    assert_eq!(run.buffers, whole_run.buffers);
    assert_eq!(run.engine, clflow_interp::Engine::Compiled);
    let (w, e) = (whole.curve(64).unwrap(), estimated.curve(64).unwrap());
    assert!(w.sampled_one_in() > 1 && e.sampled_one_in() > 1);
    assert_eq!(estimated.accessed_bytes, whole.accessed_bytes);
    assert_eq!(e.compulsory(), w.compulsory());
    assert_eq!(e.lines_touched(), w.lines_touched());
    let close = |a: u64, b: u64| (a as f64 - b as f64).abs() <= 0.05 * b as f64;
    let (we, ee) = (whole.coalescing.accesses(), estimated.coalescing.accesses());
    assert!(close(ee.total(), we.total()), "{ee:?} {we:?}");
    assert!(close(ee.coalesced(), we.coalesced()), "{ee:?} {we:?}");
    let lines = |r: &clflow_traffic::TrafficReport| -> u64 {
        r.coalescing.sites.iter().map(|s| s.lines).sum()
    };
    assert!(close(lines(&estimated), lines(&whole)));
}

/// Gives up (panics) when handed work-group `at`.
struct GivingUp {
    at: u64,
}

impl AccessSink for GivingUp {
    fn buffers(&mut self, _: &[TraceBuffer]) {}

    fn work_group(&mut self, group: u64, _: &[GlobalAccess]) {
        assert_ne!(group, self.at, "the sink gives up");
    }
}

#[test]
fn a_sink_that_panics_ends_the_run_rather_than_leave_its_workers_waiting() {
    let (sender, outcome) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let n = 4096u32;
        let launch = gather_launch(n, 32, |i| i);
        let program = program(GATHER, "gather");
        let options = RunOptions { threads: Some(2), ..RunOptions::default() };
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = program.run_traced(&launch, &options, &mut GivingUp { at: 2 });
        }));
        let _ = sender.send(run.is_err());
    });
    let panicked = outcome
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the run ends instead of waiting for ever");
    assert!(panicked, "the sink's panic reaches the caller");
}

/// Keeps everything it is given, taking runs.
#[derive(Default)]
struct RunRecording(Recording);

impl AccessSink for RunRecording {
    fn buffers(&mut self, buffers: &[TraceBuffer]) {
        self.0.buffers(buffers);
    }

    fn takes_runs(&self) -> bool {
        true
    }

    fn work_group(&mut self, group: u64, accesses: &[GlobalAccess]) {
        self.0.work_group(group, accesses);
    }
}

const PRODUCT: &str = r#"
__kernel void product(__global const float *a, __global const float *b,
                      __global float *c, uint n) {
  uint col = get_global_id(0), row = get_global_id(1);
  float sum = 0.0f;
  for (uint k = 0; k < n; k++)
    sum += a[row * n + k] * b[k * n + col];
  if (col % 5 != 3)
    c[row * n + col] = sum;
}"#;

#[test]
fn a_sink_that_takes_runs_gets_each_row_of_like_accesses_as_one_record() {
    // Rows of 16 work-items read one word of `a` and 16 words in a row of
    // `b`; the stores leave one work-item in five out.
    let n = 32u32;
    let matrix: Vec<f32> = (0..n * n).map(|i| i as f32).collect();
    let launch = launch(
        "product",
        &[n as u64, n as u64],
        Some(&[16, 8]),
        vec![
            f32s(&matrix),
            f32s(&matrix),
            f32s(&vec![0.0; (n * n) as usize]),
            scalar(n.to_le_bytes()),
        ],
    );
    let (each, runs, _) = each_and_in_runs(&program(PRODUCT, "product"), &launch);
    let records = |r: &Recording| r.groups.iter().map(|(_, a)| a.len()).sum::<usize>();
    let lanes = records(&each);
    let stored = (0..n).filter(|col| col % 5 != 3).count() as u32 * n;
    assert_eq!(lanes as u32, 2 * n * n * n + stored);
    // Per batch of 4 rows of 16 work-items: one record for a's loads (each
    // row reading one word, a row of a after the one before), one for b's
    // (each row the same row of b); the stores in rows broken where a
    // work-item leaves one out, rows of runs unlike each other.
    assert_eq!(records(&runs) as u32, 2 * n * n * n / 64 + 4 * n * 2);
}

/// `launch` traced for a sink that takes each access and for one that
/// takes runs, and the run: the runs are the accesses, each run of them
/// taken into one record (dispatches renumbered from 0 in each group).
fn each_and_in_runs(
    program: &clflow_interp::Program,
    launch: &clflow_core::Launch,
) -> (Recording, Recording, clflow_interp::RunResult) {
    let options = RunOptions { threads: Some(2), ..RunOptions::default() };
    each_and_in_runs_with(program, launch, &options)
}

fn each_and_in_runs_with(
    program: &clflow_interp::Program,
    launch: &clflow_core::Launch,
    options: &RunOptions,
) -> (Recording, Recording, clflow_interp::RunResult) {
    let options = options.clone();
    let mut each = Recording::default();
    program.run_traced(launch, &options, &mut each).unwrap();
    let mut runs = RunRecording::default();
    let run = program.run_traced(launch, &options, &mut runs).unwrap();
    let renumber = |r: &mut Recording| {
        for (_, accesses) in &mut r.groups {
            *accesses = renumbered(accesses);
        }
    };
    renumber(&mut each);
    renumber(&mut runs.0);
    for ((g, each), (h, runs)) in each.groups.iter().zip(&runs.0.groups) {
        assert_eq!(g, h);
        let expanded: Vec<GlobalAccess> = runs.iter().flat_map(GlobalAccess::each_lane).collect();
        let differs = expanded.iter().zip(each).position(|(a, b)| a != b);
        assert_eq!((expanded.len(), differs), (each.len(), None), "group {g}");
        let made = clflow_counts::access::runs(each.iter().copied());
        assert!(*runs == clflow_counts::access::joined(made), "group {g}");
    }
    (each, runs.0, run)
}

const HALF_OUT: &str = r#"
__kernel void half_out(__global const float *a, __global float *b) {
  size_t i = get_global_id(0);
  b[i] = a[i % 48 == 47 ? 4096 + i : i];
}"#;

#[test]
fn a_run_that_goes_on_after_a_work_item_faults_traces_each_access_once() {
    // Every 48th work-item reads past a: it stops there, and the others go
    // on (as a count does). Rows of the batch before it and after it.
    let n = 256u32;
    let words: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let launch = launch(
        "half_out",
        &[n as u64],
        Some(&[64]),
        vec![f32s(&words), f32s(&vec![0.0; n as usize])],
    );
    let options = RunOptions { threads: Some(2), keep_going: true, ..RunOptions::default() };
    let (each, runs, run) =
        each_and_in_runs_with(&program(HALF_OUT, "half_out"), &launch, &options);
    assert_eq!(run.faults.iter().map(|f| f.count).sum::<u64>(), 5);
    let loads = |r: &Recording| {
        let all = r.groups.iter().flat_map(|(_, a)| a);
        all.filter(|a| a.buffer == 0)
            .map(|a| u64::from(a.work_items()))
            .sum::<u64>()
    };
    // Each work-item's load once, the faulting ones' included.
    assert_eq!((loads(&each), loads(&runs)), (256, 256));
}

const SPREAD: &str = r#"
__kernel void spread(__global const float *a, __global const float *b,
                     __global float *c, __local float *tile) {
  size_t i = get_global_id(0), l = get_local_id(0);
  tile[l] = a[get_group_id(0)] + b[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  c[i] = tile[(l + 1) % get_local_size(0)] + b[i / 2];
}"#;

#[test]
fn runs_longer_than_a_record_holds_go_on_in_the_next() {
    // Work-groups of 600 run as one batch (a barrier): a's word is read by
    // all 600, b's in a row; b[i / 2] pairs work-items.
    let n = 1200u32;
    let words: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let launch = launch(
        "spread",
        &[n as u64],
        Some(&[600]),
        vec![f32s(&words), f32s(&words), f32s(&words), local(4 * 600)],
    );
    let (_, runs, run) = each_and_in_runs(&program(SPREAD, "spread"), &launch);
    assert_eq!(as_f32(&run.buffers[2].bytes)[5], 6.0 + 2.0);
    for (g, runs) in &runs.groups {
        let shapes: Vec<(u8, bool, u8, i32)> = runs
            .iter()
            .map(|r| (r.lanes, r.contiguous, r.runs, r.run_step))
            .collect();
        // a: 255 + 255 + 90 reading one word, the two runs of 255 one
        // record; b: the same in a row (the second run 1,020 bytes on);
        // b[i / 2]: 300 pairs, each a word after the one before, as many
        // as a record holds and the rest; c as b.
        assert_eq!(
            shapes,
            [
                (255, false, 2, 0),
                (90, false, 1, 0),
                (255, true, 2, 1020),
                (90, true, 1, 0),
                (2, false, 255, 4),
                (2, false, 45, 4),
                (255, true, 2, 1020),
                (90, true, 1, 0)
            ],
            "group {g}"
        );
    }
}

/// `accesses` with their dispatches numbered from 0 in order: dispatch
/// numbers count on per thread, and only their changes tell.
fn renumbered(accesses: &[GlobalAccess]) -> Vec<GlobalAccess> {
    let mut n = 0;
    let mut out = accesses.to_vec();
    for k in 0..out.len() {
        if k > 0 && accesses[k].dispatch != accesses[k - 1].dispatch {
            n += 1;
        }
        out[k].dispatch = n;
    }
    out
}
