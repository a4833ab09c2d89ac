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

/// The dependence chains the kernel's loops carry from one iteration to the
/// next, over a launch: each run of a block inside a loop charged its
/// longest carried chain, in nominal cycles (see `clflow_interp`'s
/// `chains`). An out-of-order core runs such a block no faster than its
/// chain, however few instructions it has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LoopChains {
    /// Σ over work-items' runs of blocks that carry a chain, of the chain.
    pub cycles: u64,
    /// The instruction steps of those runs.
    pub steps: u64,
    /// Of those runs, the ones whose chain holds a float value across a
    /// call, which a CPU keeps on the stack meanwhile.
    pub spilled: u64,
    /// Work-items' runs of calls the device's compiler keeps, inside the
    /// kernel's loops between barriers: each a call and return on a CPU,
    /// where the loop walks on meanwhile.
    pub calls: u64,
}

/// The kernel's conditional branches and switches as a core would predict
/// them: a 2-bit saturating counter per branch, the last target per
/// switch, over the outcomes in the order the interpreter meets them (each
/// pass's work-items by local id; a loop's pass for all of a batch, then
/// its next), started afresh at each work-group so that the count is the
/// same on any number of threads. A short loop every work-item runs alike
/// mispredicts once a batch, as a core's history predictor would not at
/// all; a loop whose trip count varies, once at each exit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Branches {
    /// Work-items' passes through a branch or switch.
    pub executed: u64,
    /// Of those, the outcomes the predictor got wrong.
    pub mispredicted: u64,
    /// Of those, the ones at branches inside the kernel's loops between
    /// barriers. A vectoriser that takes work-items together only outside
    /// loops runs those loops work-item by work-item, branch and all;
    /// elsewhere it turns a branch into masked operations, as PoCL's code
    /// for a conditional store shows (a masked scatter, no jump).
    pub loop_mispredicted: u64,
}

/// The lanes of loads and stores (of global, constant and local memory,
/// vector components counted) that a work-group vectoriser gathers or
/// scatters one at a time, where it vectorises: those of an instruction
/// run by a row of work-items (the same second and third local ids) whose
/// addresses neither count up (or down) by the access's size along the
/// first local id nor stay the same; every lane of a scalar load or
/// store whose address comes from a value computed before a barrier
/// (`carried_lanes`; see `clflow_interp`'s `carried`); and the lanes of a
/// masked load that shares one address (`masked_lanes`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Gathers {
    pub lanes: u64,
    /// Of those, the ones at instructions inside the kernel's loops between
    /// barriers, which a vectoriser that takes work-items together only
    /// outside loops runs lane by lane anyway. (A loop with a barrier in it
    /// runs each stretch between its barriers as a loop over the work-items
    /// of its own, which such a vectoriser takes together.)
    pub loop_lanes: u64,
    /// Of `lanes`, the ones whose addresses count up (or stay the same) but
    /// come from a value computed before a barrier: a CPU's compiler keeps
    /// such a value per work-item across the barrier, and cannot see the
    /// addresses built from it counting up (PoCL's code gathers and
    /// scatters them). A vector load or store makes none: a compiler that
    /// meets one does not vectorise across the work-items at all.
    pub carried_lanes: u64,
    /// Of `lanes`, the ones of loads that a row of work-items makes at one
    /// address, in a block that runs on only some ways through its stretch
    /// between barriers (under an `if`): one broadcast load where it always
    /// runs, but the compiler must mask it, and gathers the one address
    /// lane by lane (PoCL's code for CLBlast's `Xger` does, for the `y` its
    /// bounds test guards).
    pub masked_lanes: u64,
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
