//! The plain-text report of a count.

use crate::{ByRole, Counts, OpSet, Role};

/// The Oclgrind-like text report.
pub fn render_text(counts: &Counts, set: &OpSet) -> String {
    use std::fmt::Write;
    let r = counts.report(set);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Lanes executed for kernel '{}' ({} work-items in {} work-groups):",
        r.kernel, r.work_items, r.work_groups
    );
    let width = counts
        .histogram
        .first()
        .map(|e| group_digits(e.lanes).len())
        .unwrap_or(1);
    for e in &counts.histogram {
        let _ = writeln!(
            out,
            "  {:>width$} - {} {}{}",
            group_digits(e.lanes),
            e.op,
            e.ty,
            role_mark(&e.by_role)
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "W ({}): {} ops   [int {}, fp32 {}, fp64 {}, fp16 {}]",
        r.w.set,
        group_digits(r.w.total),
        group_digits(r.w.int),
        group_digits(r.w.fp32),
        group_digits(r.w.fp64),
        group_digits(r.w.fp16)
    );
    let _ = writeln!(
        out,
        "Arithmetic by role: work {}, address {}, control {}",
        group_digits(r.arith_by_role.work),
        group_digits(r.arith_by_role.address),
        group_digits(r.arith_by_role.control)
    );
    // Constant traffic, where there is any, is told apart from global.
    let parts = match r.q.constant_load_bytes {
        0 => format!(
            "load {}, store {}",
            group_digits(r.q.load_bytes),
            group_digits(r.q.store_bytes)
        ),
        constant => format!(
            "global: load {}, store {}; constant: load {}",
            group_digits(r.q.global_load_bytes),
            group_digits(r.q.global_store_bytes),
            group_digits(constant)
        ),
    };
    let _ = writeln!(
        out,
        "Q accessed: {} bytes ({parts}); compulsory: {} bytes at {}-byte lines",
        group_digits(r.q.accessed),
        group_digits(r.q.compulsory),
        r.q.line_bytes
    );
    let show = |v: Option<f64>| {
        v.map(|x| format!("{} OPS/B", clflow_core::numbers::format_number(x)))
            .unwrap_or_else(|| "n/a (Q = 0)".into())
    };
    let _ = writeln!(out, "I: {}", intensity_text(&r.i, r.q.line_bytes, show));
    let _ = writeln!(
        out,
        "Local memory: load {} bytes, store {} bytes; private: load {} bytes, store {} bytes",
        group_digits(r.local.load_bytes),
        group_digits(r.local.store_bytes),
        group_digits(r.private.load_bytes),
        group_digits(r.private.store_bytes)
    );
    if !r.simd.is_empty() {
        let _ = writeln!(
            out,
            "SIMD use (work-items S at a time by local id):\n  {:>5}  {:>16}  {:>15}",
            "S", "issued lanes used", "in full vectors"
        );
        for s in &r.simd {
            let _ = writeln!(
                out,
                "  {:>5}  {:>16}  {:>15}",
                s.width,
                format!("{:.1}%", 100.0 * s.efficiency()),
                format!("{:.1}%", 100.0 * s.convergence())
            );
        }
    }
    if let Some(b) = r.branches.filter(|b| b.executed > 0) {
        let _ = writeln!(
            out,
            "Branches: {} passes, {} mispredicted ({:.1}%) by a 2-bit counter per branch, \
             {} of them inside loops between barriers",
            group_digits(b.executed),
            group_digits(b.mispredicted),
            100.0 * b.mispredicted as f64 / b.executed as f64,
            group_digits(b.loop_mispredicted)
        );
    }
    if let Some(chains) = r.chains.filter(|c| c.cycles > 0) {
        let _ = writeln!(
            out,
            "Loop-carried chains: {} cycles of dependent operations over {} steps ({:.2} per step)",
            group_digits(chains.cycles),
            group_digits(chains.steps),
            chains.cycles as f64 / chains.steps.max(1) as f64
        );
        if chains.spilled > 0 {
            let _ = writeln!(
                out,
                "  of which {} runs carry a float value across a call (a CPU keeps it on the stack meanwhile)",
                group_digits(chains.spilled)
            );
        }
    }
    if let Some(chains) = r.chains.filter(|c| c.calls > 0) {
        let _ = writeln!(
            out,
            "Kept calls: {} runs of calls the compiler keeps, inside loops between barriers",
            group_digits(chains.calls)
        );
    }
    if let Some(passes) = r.loop_barriers.filter(|&n| n > 0) {
        let _ = writeln!(
            out,
            "Loop barriers: {} work-item iterations of loops with a barrier begin without one (a CPU runtime adds one there)",
            group_digits(passes)
        );
    }
    if let Some(g) = r.gathers.filter(|g| g.lanes > 0) {
        let _ = writeln!(
            out,
            "Gathers: {} lanes of loads and stores whose row of work-items neither counts up nor shares an address, or whose address comes across a barrier ({}), or that share one under a mask ({}); {} inside loops between barriers",
            group_digits(g.lanes),
            group_digits(g.carried_lanes),
            group_digits(g.masked_lanes),
            group_digits(g.loop_lanes)
        );
    }
    out
}

/// A histogram line's roles: nothing for work alone, `[address]` or
/// `[control]` for one other role, each role's lanes where they mix.
fn role_mark(by: &ByRole) -> String {
    match by.only() {
        Some(Role::Work) => String::new(),
        Some(role) => format!("  [{role}]"),
        None => {
            let parts: Vec<String> = Role::ALL
                .into_iter()
                .filter(|r| by.get(*r) > 0)
                .map(|r| format!("{r} {}", group_digits(by.get(r))))
                .collect();
            format!("  [{}]", parts.join(", "))
        }
    }
}

/// The two walls, low to high, each named by its traffic.
fn intensity_text(
    i: &crate::IntensityReport,
    line_bytes: u64,
    show: impl Fn(Option<f64>) -> String,
) -> String {
    let accessed = format!("{} (W/Q accessed)", show(i.accessed));
    let compulsory = format!(
        "{} (W/Q compulsory, whole {line_bytes}-byte lines)",
        show(i.compulsory)
    );
    match (i.accessed, i.compulsory) {
        (Some(a), Some(c)) if a == c => {
            format!("{} (W/Q accessed = W/Q compulsory)", show(i.accessed))
        }
        (Some(a), Some(c)) if c < a => format!("{compulsory} to {accessed}"),
        _ => format!("{accessed} to {compulsory}"),
    }
}

pub use clflow_core::numbers::group_digits;
