//! How well a kernel's work-items would fill a vector unit: for a SIMD
//! width S (a GPU's warp or wavefront, a CPU's vector lanes), the batch's
//! work-items taken S at a time in the order of their local ids, as a
//! vector unit or a work-group vectoriser takes them.

use serde::Serialize;

/// The SIMD widths a count measures at once.
pub const SIMD_WIDTHS: [u32; 4] = [8, 16, 32, 64];

/// What S-wide vectors of work-items did over a launch, in bytecode
/// instruction steps (each basic block's instructions times the work-items
/// that ran it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SimdUse {
    pub width: u32,
    /// Instruction steps the work-items ran.
    pub lane_steps: u64,
    /// Vector instructions issued times S: every S-group with any work-item
    /// at an instruction issues it for all S lanes.
    pub issued_steps: u64,
    /// The steps run in a full S-group (every work-item of the group there):
    /// what a vectoriser that needs uniform control flow runs as vectors.
    pub converged_steps: u64,
    /// The steps in blocks inside the kernel's loops, and of those the
    /// ones run in full S-groups: what a vectoriser that takes work-items
    /// together only outside loops leaves to run lane by lane.
    pub loop_steps: u64,
    pub converged_loop_steps: u64,
}

impl SimdUse {
    /// The share of issued lanes that did work (a GPU's warp efficiency).
    pub fn efficiency(&self) -> f64 {
        ratio(self.lane_steps, self.issued_steps)
    }

    /// The share of steps run with the whole S-group together.
    pub fn convergence(&self) -> f64 {
        ratio(self.converged_steps, self.lane_steps)
    }

    /// The share of steps run with the whole S-group together outside
    /// the kernel's loops.
    pub fn convergence_outside_loops(&self) -> f64 {
        ratio(
            self.converged_steps - self.converged_loop_steps,
            self.lane_steps,
        )
    }
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        1.0
    } else {
        part as f64 / whole as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn efficiency_and_convergence_are_shares() {
        let used = SimdUse {
            width: 16,
            lane_steps: 600,
            issued_steps: 800,
            converged_steps: 480,
            loop_steps: 500,
            converged_loop_steps: 420,
        };
        assert_eq!(used.efficiency(), 0.75);
        assert_eq!(used.convergence(), 0.8);
        assert_eq!(used.convergence_outside_loops(), 0.1);
        assert_eq!(SimdUse::default().efficiency(), 1.0);
    }
}
