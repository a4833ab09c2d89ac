//! Adjacent accesses, as the device's SLP vectoriser packs them.
//!
//! clflow's compile turns that vectoriser off (the copies it makes would
//! be counted), which leaves a work-item's `v.s0 ... v.s7` as eight scalar
//! loads at adjacent addresses where the device's code has one vector load.
//! A work-group vectoriser takes such a group as one access of the group's
//! size: its row of work-items counts up by the group's span, not by the
//! member's size. This finds the groups (accesses in one block, through
//! one base pointer and the same variable indices, whose constant
//! displacements follow one another by the access's size) and gives each
//! member its group's span ([`Program::adjacent_span`]), which the SIMD
//! analysis takes as the step a row of work-items counts up by.
//!
//! [`Program::adjacent_span`]: clflow_bytecode::program::Program::adjacent_span

use clflow_bytecode::{Pc, PtrTerm, Reg};
use std::collections::HashMap;

/// Where an access chain points, less its constant displacement: the
/// pointer it starts from and its variable indices (register, width,
/// stride).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Base {
    root: Reg,
    terms: Vec<(Reg, u8, i64)>,
}

/// One load or store of memory.
struct Member {
    block: usize,
    store: bool,
    base: Base,
    disp: i64,
    bytes: u64,
    pc: Pc,
}

/// Accesses that may make one group: one block's loads (or stores) of one
/// size through one base.
type GroupKey<'a> = (usize, bool, &'a Base, u64);

/// The access chains and accesses of a translation, gathered as it goes.
#[derive(Default)]
pub(super) struct Adjacent {
    chains: HashMap<Reg, (Base, i64)>,
    members: Vec<Member>,
}

impl Adjacent {
    /// `dst` = `base` + `terms` + `disp`; a chain built on a chain is
    /// taken back to the first one's pointer.
    pub(super) fn chain(&mut self, dst: Reg, base: Reg, terms: &[PtrTerm], disp: i64) {
        let (mut whole, start) = self.base_of(base);
        whole
            .terms
            .extend(terms.iter().map(|t| (t.reg, t.bits, t.stride)));
        self.chains.insert(dst, (whole, start.wrapping_add(disp)));
    }

    /// A load (or a store) of `bytes` through `ptr` at `pc`, in `block`.
    pub(super) fn access(&mut self, block: usize, store: bool, ptr: Reg, bytes: u64, pc: Pc) {
        let (base, disp) = self.base_of(ptr);
        self.members
            .push(Member { block, store, base, disp, bytes, pc });
    }

    fn base_of(&self, ptr: Reg) -> (Base, i64) {
        self.chains.get(&ptr).cloned().unwrap_or_else(|| {
            let base = Base { root: ptr, terms: Vec::new() };
            (base, 0)
        })
    }

    /// For each pc of `code_len`, the span of the adjacent group its access
    /// belongs to, or 0 (no access, or one alone).
    pub(super) fn spans(self, code_len: usize) -> Vec<u32> {
        let mut spans = vec![0u32; code_len];
        let mut groups: HashMap<GroupKey, Vec<(i64, Pc)>> = HashMap::new();
        for m in &self.members {
            groups
                .entry((m.block, m.store, &m.base, m.bytes))
                .or_default()
                .push((m.disp, m.pc));
        }
        for ((_, _, _, bytes), mut members) in groups {
            members.sort_unstable();
            let mut run_start = 0;
            for end in 1..=members.len() {
                let follows = end < members.len()
                    && members[end].0.wrapping_sub(members[end - 1].0) == bytes as i64;
                // The same address again (loaded twice) stays in the run.
                let repeats = end < members.len() && members[end].0 == members[end - 1].0;
                if follows || repeats {
                    continue;
                }
                let run = &members[run_start..end];
                let span = (run[run.len() - 1].0 - run[0].0) as u64 + bytes;
                if span > bytes {
                    for &(_, pc) in run {
                        spans[pc as usize] = u32::try_from(span).unwrap_or(0);
                    }
                }
                run_start = end;
            }
        }
        spans
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(reg: u32) -> PtrTerm {
        PtrTerm { reg: Reg::new(reg), bits: 64, stride: 32 }
    }

    #[test]
    fn a_vectors_components_loaded_one_by_one_make_one_group() {
        let mut adjacent = Adjacent::default();
        let (x, i) = (Reg::new(1), 2);
        // `x[i]` as a float8, then its components 0..8: component 0
        // through a chain on that chain, the rest straight from `x`.
        adjacent.chain(Reg::new(10), x, &[term(i)], 0);
        adjacent.chain(Reg::new(11), Reg::new(10), &[], 0);
        adjacent.access(0, false, Reg::new(11), 4, 0);
        for c in 1..8 {
            adjacent.chain(Reg::new(11 + c), x, &[term(i)], 4 * c as i64);
            adjacent.access(0, false, Reg::new(11 + c), 4, c);
        }
        // A load of `x[i].s1` in another block, one of another index, and
        // a store to `x[i].s2` beside the loads.
        adjacent.access(1, false, Reg::new(12), 4, 8);
        adjacent.chain(Reg::new(30), x, &[term(3)], 4);
        adjacent.access(0, false, Reg::new(30), 4, 9);
        adjacent.access(0, true, Reg::new(13), 4, 10);
        let spans = adjacent.spans(11);
        assert_eq!(spans, [32, 32, 32, 32, 32, 32, 32, 32, 0, 0, 0]);
    }

    #[test]
    fn a_gap_splits_a_group_and_an_access_alone_has_none() {
        let mut adjacent = Adjacent::default();
        let x = Reg::new(1);
        for (pc, disp) in [(0, 0), (1, 4), (2, 12), (3, 32)] {
            adjacent.chain(Reg::new(10 + pc), x, &[term(2)], disp);
            adjacent.access(0, false, Reg::new(10 + pc), 4, pc);
        }
        // 0 and 4 make 8 bytes; 12 and 32 stand alone.
        assert_eq!(adjacent.spans(4), [8, 8, 0, 0]);
    }
}
