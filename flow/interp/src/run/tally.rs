//! A run's counts from what its work-groups tallied: block hits times each
//! block's static counts, traffic, lines, SIMD use, chains, branches.

use crate::analysis::{carried, chains};
use crate::counts::{self, Counts, LaneType, LineCounts, SpaceBytes, WorkKey};
use crate::memory::GlobalMemory;
use crate::{exec, RunOptions};
use clflow_bytecode::{self as bytecode, program};
use std::collections::{BTreeMap, HashMap};

impl crate::Program {
    /// Block hits × each block's static counts.
    pub(super) fn tally(
        &self,
        partial: &exec::Partial,
        global: &GlobalMemory,
        g: &exec::Geometry,
        options: &RunOptions,
        line_scale: f64,
    ) -> Counts {
        let p = &self.inner;
        let line_bytes = options.line_bytes;
        let mut hist = vec![0u64; p.hist_keys.len()];
        let mut work = vec![0u64; p.work_keys.len()];
        let mut traffic = partial.traffic;
        let mut line_traffic = partial.line_traffic.clone();
        line_traffic.resize(p.source_lines.len() + 1, Default::default());
        for (block, hits) in p.blocks.iter().zip(&partial.hits) {
            for (k, n) in &block.hist {
                hist[*k as usize] += n * hits;
            }
            for (k, n) in &block.work {
                work[*k as usize] += n * hits;
            }
            traffic.scaled_add(&block.traffic, *hits);
            for (line, t) in &block.line_traffic {
                line_traffic[*line as usize].scaled_add(t, *hits);
            }
        }
        let (block_steps, in_loop) = block_steps(p);
        let steps = block_steps
            .iter()
            .zip(&partial.hits)
            .map(|(n, hits)| n * hits)
            .sum();
        // One entry per opcode and type, its lanes split by role.
        let mut entries: BTreeMap<(&str, LaneType), counts::ByRole> = BTreeMap::new();
        for ((op, ty, role), lanes) in p.hist_keys.iter().zip(hist) {
            if lanes > 0 {
                entries.entry((op, *ty)).or_default().add(*role, lanes);
            }
        }
        let mut histogram: Vec<counts::HistogramEntry> = entries
            .into_iter()
            .map(|((op, ty), by_role)| counts::HistogramEntry {
                op: op.to_string(),
                ty: ty.to_string(),
                lanes: by_role.total(),
                by_role,
            })
            .collect();
        histogram.sort_by(|a, b| {
            b.lanes
                .cmp(&a.lanes)
                .then(a.op.cmp(&b.op))
                .then(a.ty.cmp(&b.ty))
        });
        Counts {
            kernel: p.kernel.clone(),
            work_items: g.global.iter().product(),
            work_groups: g.groups.iter().product(),
            local_size: g.local,
            histogram,
            lines: per_line(p, &work, line_traffic),
            work: merged(
                p.work_keys
                    .iter()
                    .map(|(k, _)| *k)
                    .zip(work.iter().copied()),
            ),
            traffic,
            line_bytes,
            simd: simd_use(&block_steps, &in_loop, partial),
            chains: (!partial.simd.is_empty())
                .then(|| loop_chains(p, options.optimised, &block_steps, partial)),
            loop_barriers: (!partial.simd.is_empty()).then(|| loop_barriers(p, partial)),
            gathers: (!partial.gathers.is_empty()).then(|| gathers(p, partial)),
            branches: (!partial.branches.is_empty()).then(|| branches(p, partial)),
            lines_read: global
                .buffers
                .iter()
                .map(|b| b.read_lines.scaled(line_scale))
                .sum(),
            lines_written: global
                .buffers
                .iter()
                .map(|b| b.written_lines.scaled(line_scale))
                .sum(),
            steps,
        }
    }
}

/// Each block's bytecode instructions, and whether it lies in one of the
/// kernel's loops.
fn block_steps(p: &program::Program) -> (Vec<u64>, Vec<bool>) {
    let looped = program::in_loops(&p.code, &p.cases);
    let (mut steps, mut in_loop) = (vec![0u64; p.blocks.len()], vec![false; p.blocks.len()]);
    for (pc, op) in p.code.iter().enumerate() {
        if let bytecode::Op::Block { block, steps: n } = op {
            steps[*block as usize] = u64::from(*n);
            in_loop[*block as usize] = looped[pc];
        }
    }
    (steps, in_loop)
}

/// The run's SIMD use at each width, each block's runs weighted by its
/// instructions (`steps`); none where the run did not measure it.
fn simd_use(steps: &[u64], in_loop: &[bool], partial: &exec::Partial) -> Vec<counts::SimdUse> {
    if partial.simd.is_empty() {
        return Vec::new();
    }
    counts::SIMD_WIDTHS
        .iter()
        .enumerate()
        .map(|(w, &width)| {
            let mut used = counts::SimdUse { width, ..Default::default() };
            let blocks = steps.iter().zip(in_loop).zip(&partial.hits);
            for (((n, looped), hits), per_width) in blocks.zip(&partial.simd) {
                let [groups, whole] = per_width[w];
                used.lane_steps += n * hits;
                used.issued_steps += n * groups * u64::from(width);
                used.converged_steps += n * whole;
                if *looped {
                    used.loop_steps += n * hits;
                    used.converged_loop_steps += n * whole;
                }
            }
            used
        })
        .collect()
}

/// Each block's carried chain times its runs, and those runs' steps; and
/// the runs of kept calls (every call, where the module is `optimised`)
/// inside the kernel's loops between barriers.
fn loop_chains(
    p: &program::Program,
    optimised: bool,
    steps: &[u64],
    partial: &exec::Partial,
) -> counts::LoopChains {
    let mut total = counts::LoopChains::default();
    let mut kept = p.kept_calls.clone();
    if optimised {
        kept.extend_from_slice(&p.other_calls);
        kept.sort_unstable();
    }
    total.calls = chains::looped_calls(p, &kept, &partial.hits);
    let chains = chains::block_chains(p, &kept);
    for ((chain, n), hits) in chains.iter().zip(steps).zip(&partial.hits) {
        if chain.cycles > 0 {
            total.cycles += u64::from(chain.cycles) * hits;
        }
        if chain.cycles > 0 || chain.under_loop_chain {
            total.steps += n * hits;
        }
        if chain.spilled {
            total.spilled += hits;
        }
    }
    total
}

/// The lanes of loads and stores a vectoriser gathers, and of those the
/// ones inside the kernel's loops between barriers: those whose addresses
/// do not count up, every lane of those whose address comes across a
/// barrier (`carried`), and the broadcast lanes of loads it must mask.
fn gathers(p: &program::Program, partial: &exec::Partial) -> counts::Gathers {
    let looped = program::in_loops_between_barriers(&p.code, &p.cases);
    let carried = carried::carried_addresses(p);
    let conditional = program::Conditional::new(&p.code, &p.cases, p.entry as usize);
    let mut total = counts::Gathers::default();
    let sites = partial.gathers.iter().zip(looped).zip(carried).enumerate();
    for (pc, ((rows, looped), carried)) in sites {
        let lanes = if carried {
            total.carried_lanes += rows.all - rows.gathered;
            rows.all
        } else if rows.broadcast > 0
            && matches!(p.code[pc], bytecode::Op::Load { .. })
            && conditional.at(pc)
        {
            total.masked_lanes += rows.broadcast;
            rows.gathered + rows.broadcast
        } else {
            rows.gathered
        };
        total.lanes += lanes;
        if looped {
            total.loop_lanes += lanes;
        }
    }
    total
}

/// Branches' passes and mispredictions, and of those the ones inside the
/// kernel's loops between barriers.
fn branches(p: &program::Program, partial: &exec::Partial) -> counts::Branches {
    let looped = program::in_loops_between_barriers(&p.code, &p.cases);
    let mut total = counts::Branches::default();
    for (predictor, looped) in partial.branches.iter().zip(looped) {
        total.executed += predictor.executed;
        total.mispredicted += predictor.mispredicted;
        if looped {
            total.loop_mispredicted += predictor.mispredicted;
        }
    }
    total
}

/// Work-items' runs of the headers of loops with a barrier that do not
/// begin at one (see `program::barrier_loop_headers`).
fn loop_barriers(p: &program::Program, partial: &exec::Partial) -> u64 {
    let headers = program::barrier_loop_headers(&p.code, &p.cases, p.entry as usize);
    p.code
        .iter()
        .zip(&headers)
        .filter_map(|(op, &header)| match op {
            bytecode::Op::Block { block, .. } if header => partial.hits.get(*block as usize),
            _ => None,
        })
        .sum()
}

/// Counts of the same key added up, in the order keys first appear;
/// zero counts left out.
fn merged(work: impl Iterator<Item = (WorkKey, u64)>) -> Vec<(WorkKey, u64)> {
    let mut out: Vec<(WorkKey, u64)> = Vec::new();
    let mut at: HashMap<WorkKey, usize> = HashMap::new();
    for (key, n) in work.filter(|(_, n)| *n > 0) {
        match at.get(&key) {
            Some(&i) => out[i].1 += n,
            None => {
                at.insert(key, out.len());
                out.push((key, n));
            }
        }
    }
    out
}

/// W and traffic per source line, lines in their order and what no line
/// names last; none where the module names no lines.
fn per_line(p: &program::Program, work: &[u64], traffic: Vec<SpaceBytes>) -> Vec<LineCounts> {
    if p.source_lines.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<LineCounts> = traffic
        .into_iter()
        .enumerate()
        .map(|(id, traffic)| LineCounts {
            line: id.checked_sub(1).map(|i| p.source_lines[i].clone()),
            work: Vec::new(),
            traffic,
        })
        .collect();
    for ((key, line), n) in p.work_keys.iter().zip(work).filter(|(_, n)| **n > 0) {
        lines[*line as usize].work.push((*key, *n));
    }
    for line in &mut lines {
        line.work = merged(std::mem::take(&mut line.work).into_iter());
    }
    let unnamed = lines.remove(0);
    lines.sort_by(|a, b| a.line.cmp(&b.line));
    lines.push(unnamed);
    lines
}
