//! A stream handed over in runs ([`GlobalAccess::lanes`]) is analysed as
//! the same stream one work-item's access at a time: the same curves, the
//! same coalescing, the same point where the simulations start to sample.

use clflow_counts::access::{joined, runs};
use clflow_counts::{AccessKind, AccessSink, GlobalAccess, TraceBuffer};
use clflow_traffic::{CacheSpec, TrafficAnalysis, TrafficReport};
use rand_core::Rng;
use rand_pcg::Pcg64Mcg;

const BUFFER_BYTES: u64 = 4 << 20;
const BUFFERS: u16 = 3;

/// Makes a work-group's accesses one work-item's at a time, dispatch by
/// dispatch, as the interpreter's batches make them.
struct Group {
    accesses: Vec<GlobalAccess>,
    dispatch: u32,
    phase: u16,
}

impl Group {
    /// A dispatch at `site`: each work-item of `items` accesses `bytes`
    /// where `at` says, with `kind`.
    fn dispatch(
        &mut self,
        site: u32,
        kind: AccessKind,
        bytes: u32,
        items: impl Iterator<Item = u32>,
        at: impl Fn(u32) -> (u16, u64),
    ) {
        self.dispatch += 1;
        for item in items {
            let (buffer, offset) = at(item);
            self.accesses.push(GlobalAccess {
                fenced: 0,
                offset: offset % (BUFFER_BYTES - 128),
                bytes,
                site,
                dispatch: self.dispatch,
                item,
                buffer,
                phase: self.phase,
                kind,
                atomic: kind == AccessKind::Atomic,
                lanes: 1,
                contiguous: false,
                runs: 1,
                run_step: 0,
            });
        }
    }
}

/// A work-group of 128 work-items in batches of 64 looping `steps` times
/// over dispatches of every shape: rows reading one word (as a matrix
/// product reads its left operand), rows of words in a row, unaligned and
/// spanning lines, strided walks a line or a page a step, scattered
/// gathers, copies that load and store in one dispatch, accesses of no
/// bytes, work-items left out, and (where asked) barriers now and then.
fn group(rng: &mut Pcg64Mcg, steps: u64, barriers: bool) -> Vec<GlobalAccess> {
    let mut g = Group { accesses: Vec::new(), dispatch: 0, phase: 0 };
    // Low enough that the walk a line a step never wraps round.
    // Word-aligned, so that a row of words runs over a line's end.
    let base = (rng.next_u64() % (BUFFER_BYTES / 4)) & !3;
    for k in 0..steps {
        if barriers && rng.next_u32().is_multiple_of(200) {
            g.phase += 1;
        }
        for batch in [0..64u32, 64..128] {
            let row = move |i: u32| u64::from(i / 16);
            g.dispatch(0, AccessKind::Load, 4, batch.clone(), |i| {
                (0, base + 512 * row(i) + 4 * k)
            });
            // Halfway, one work-item leaves a row out, and the rest walk on
            // without it.
            let row_of_b = batch.clone().filter(|i| k != steps / 2 || i % 64 != 5);
            g.dispatch(1, AccessKind::Load, 4, row_of_b, |i| {
                (1, base + 512 * k + 4 * u64::from(i % 16))
            });
            // Twelve-byte structs from an unaligned start: some span lines.
            g.dispatch(2, AccessKind::Load, 12, batch.clone(), |i| {
                (2, base + 20 + 12 * u64::from(i) + 4096 * k)
            });
            // One work-item in three, a line apart, walking a page a step.
            let sparse = batch.clone().filter(|i| i % 3 != 1);
            g.dispatch(3, AccessKind::Load, 8, sparse, |i| {
                (0, 64 * u64::from(i) + 8192 * k)
            });
            let scattered = rng.next_u64();
            g.dispatch(4, AccessKind::Atomic, 4, batch.clone(), |i| {
                let at = scattered.wrapping_mul(u64::from(i) + 1) >> 40;
                (1, 4 * at)
            });
            // A copy: each work-item loads and stores in one dispatch.
            g.dispatch += 1;
            for i in batch.clone() {
                for (kind, buffer) in [(AccessKind::Load, 0), (AccessKind::Store, 2)] {
                    g.accesses.push(GlobalAccess {
                        fenced: 0,
                        offset: 64 * k + 4 * u64::from(i),
                        bytes: 4,
                        site: 5,
                        dispatch: g.dispatch,
                        item: i,
                        buffer,
                        phase: g.phase,
                        kind,
                        atomic: false,
                        lanes: 1,
                        contiguous: false,
                        runs: 1,
                        run_step: 0,
                    });
                }
            }
            g.dispatch(6, AccessKind::Store, 0, batch.clone(), |i| {
                (2, 4 * u64::from(i))
            });
            g.dispatch(7, AccessKind::Load, 16, batch, |i| {
                (1, 60 + 64 * u64::from(i / 32))
            });
        }
    }
    g.accesses
}

/// The report of `groups`, handed over as they are.
fn report(groups: &[Vec<GlobalAccess>], sample_after: Option<u64>) -> TrafficReport {
    let cache: CacheSpec = "4MiB/64".parse().unwrap();
    let mut analysis = TrafficAnalysis::new(&[64, 128]).probing(&[cache]);
    if let Some(touches) = sample_after {
        analysis = analysis.sampling_after(touches);
    }
    let buffers: Vec<TraceBuffer> = (0..BUFFERS)
        .map(|b| TraceBuffer {
            label: format!("b{b}"),
            space: "__global",
            bytes: BUFFER_BYTES,
            read_only: false,
        })
        .collect();
    analysis.buffers(&buffers);
    analysis.work_groups(groups.len() as u64);
    for (g, accesses) in groups.iter().enumerate() {
        analysis.take_work_group(g as u64, accesses.clone());
    }
    analysis.finish()
}

fn assert_same(one_by_one: &TrafficReport, in_runs: &TrafficReport) {
    assert_eq!(in_runs.accessed_bytes, one_by_one.accessed_bytes);
    assert_eq!(in_runs.coalescing, one_by_one.coalescing);
    for line in [64, 128] {
        assert_eq!(in_runs.sweep(line, &[]), one_by_one.sweep(line, &[]));
    }
    for cache in ["16KiB/64", "4MiB/64", "1MiB/128"] {
        let cache: CacheSpec = cache.parse().unwrap();
        assert_eq!(in_runs.summary(cache), one_by_one.summary(cache));
    }
}

#[test]
fn a_stream_in_runs_reports_as_it_does_one_access_at_a_time() {
    let mut rng = Pcg64Mcg::new(0x5eed);
    // Long enough for walks of 64 page strides and of 1,024 line strides.
    let groups: Vec<Vec<GlobalAccess>> = (0..3).map(|g| group(&mut rng, 1100, g == 1)).collect();
    let in_runs: Vec<Vec<GlobalAccess>> = groups.iter().map(|g| runs(g.iter().copied())).collect();
    let shaped = |contiguous: bool| {
        let mut all = in_runs.iter().flatten();
        all.any(|r| r.lanes > 2 && r.contiguous == contiguous)
    };
    assert!(shaped(true) && shaped(false), "both kinds of run formed");
    // And rows of like runs taken into one record.
    let in_rows: Vec<Vec<GlobalAccess>> =
        in_runs.iter().map(|g| joined(g.iter().copied())).collect();
    let rows = |contiguous: bool, step: i32| {
        let mut all = in_rows.iter().flatten();
        all.any(|r| r.runs == 4 && r.contiguous == contiguous && r.run_step == step)
    };
    assert!(
        rows(false, 512) && rows(true, 0),
        "rows of both kinds joined"
    );

    let (one_by_one, runs) = (report(&groups, None), report(&in_runs, None));
    assert_same(&one_by_one, &runs);
    assert_same(&one_by_one, &report(&in_rows, None));
    // The stream has long walks of each kind, so that their counts are
    // compared too.
    let sites = &one_by_one.coalescing.sites;
    assert!(sites.iter().any(|s| s.page_strides > 0), "page walks");
    assert!(sites.iter().any(|s| s.line_strides > 0), "line walks");
    assert!(one_by_one.coalescing.stretch_lines > 0);

    // Sampling from the same touch on.
    let (one_by_one, runs) = (
        report(&groups, Some(50_000)),
        report(&in_runs, Some(50_000)),
    );
    assert_same(&one_by_one, &report(&in_rows, Some(50_000)));
    let summary = one_by_one.summary("16KiB/64".parse().unwrap());
    assert!(
        summary.sampled_after.is_some(),
        "{:?} {:?}",
        summary.sampled_after,
        summary.sampled_one_in
    );
    assert_same(&one_by_one, &runs);
}
