//! A kernel translated once: its bytecode and every table the machine needs.

use crate::layout::ArenaLayout;
use crate::layout::Leaf;
use crate::{Move, Op, Pc, PrintfArg, PtrTerm, Reg};
use clflow_core::AddressSpace;
use clflow_counts::{LaneType, Role, SourceLine, SpaceBytes, WorkKey};

/// Where an instruction stands in the source: `line` indexes the
/// program's source lines from 1, 0 meaning no line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Loc {
    pub line: u32,
    pub column: u32,
}

/// What one basic block counts each time it runs.
#[derive(Debug, Clone, Default)]
pub struct BlockCounts {
    pub hist: Vec<(u32, u64)>,
    pub work: Vec<(u32, u64)>,
    pub traffic: SpaceBytes,
    /// `traffic` by source line (see [`Loc::line`]).
    pub line_traffic: Vec<(u32, SpaceBytes)>,
}

/// How a kernel parameter is passed in. `slot` is its register in a
/// one-lane file: what the launch code fills in.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamSlot {
    /// A pointer into `space`; `slot` gets the encoded pointer. `no_write`:
    /// the module says the kernel never writes through it (`FuncParamAttr
    /// NoWrite`, which the compiler infers for pointers only read).
    Pointer {
        slot: Reg,
        space: AddressSpace,
        no_write: bool,
    },
    /// A value of `leaves` copied from the argument's bytes into `slot..`.
    Value {
        slot: Reg,
        leaves: Vec<Leaf>,
        size: u64,
    },
    /// A struct passed by value (`ByVal`): its bytes go to private variable
    /// `var`, and `slot` points there.
    ByVal { slot: Reg, var: usize, size: u64 },
    /// An image: `slot` gets the handle, a global pointer to its texels.
    Image {
        slot: Reg,
        dim: clflow_core::ImageDim,
    },
    /// A sampler: `slot` gets its `CLK_*` bits.
    Sampler { slot: Reg },
}

/// A program-scope variable with storage in global or constant memory.
#[derive(Debug, Clone)]
pub struct ProgramBuffer {
    pub bytes: Vec<u8>,
    pub label: String,
    pub space: &'static str,
}

#[derive(Debug, Default)]
pub struct Program {
    pub kernel: String,
    pub code: Vec<Op>,
    /// For each pc, the index of its SPIR-V instruction in `sites`.
    pub site_of: Vec<u32>,
    /// `OpLoad (%27 in vadd)`: how errors name an instruction.
    pub sites: Vec<String>,
    pub entry: Pc,
    /// For each pc, its place in a reverse post-order of the code's control
    /// flow (`u32::MAX` where unreachable): the order in which the machine
    /// runs lanes waiting at different pcs, so that lanes that went
    /// different ways reach a join point before it runs.
    pub rank: Vec<u32>,
    /// The initial register file: constants in place, the rest zero.
    pub init_regs: Vec<u64>,
    pub params: Vec<ParamSlot>,
    pub moves: Vec<Move>,
    pub terms: Vec<PtrTerm>,
    /// The arguments of every printf call (`Op::Printf`).
    pub printf_args: Vec<PrintfArg>,
    pub cases: Vec<(u64, Pc)>,
    /// The calls the device's compiler keeps (the callee is marked
    /// `DontInline`), each as the code that stands for it: an inlined
    /// body's pcs, or the `Op::Call` alone. A value live across one lives
    /// across a real call on the device.
    pub kept_calls: Vec<(Pc, Pc)>,
    /// The module's other calls, listed alike: an optimised module's
    /// compiler declined to inline them, and so does the device's
    /// (`RunOptions::optimised`).
    pub other_calls: Vec<(Pc, Pc)>,
    pub layouts: Vec<Vec<Leaf>>,
    /// What each `Op::CheckIndex` checks: `an array of 4 elements in
    /// \`k\``.
    pub arrays: Vec<String>,
    pub blocks: Vec<BlockCounts>,
    pub hist_keys: Vec<(&'static str, LaneType, Role)>,
    /// Each operation counted in W, with the source line it stands on
    /// (see [`Loc::line`]).
    pub work_keys: Vec<(WorkKey, u32)>,
    /// The source lines the module names (`OpLine`), empty if none.
    pub source_lines: Vec<SourceLine>,
    /// For each entry of `sites`, where it stands in the source.
    pub site_locs: Vec<Loc>,
    pub private: ArenaLayout,
    /// Program-scope `__local` variables; they follow the kernel's
    /// parameters in the local table.
    pub local_vars: Vec<(u64, u64, String)>,
    /// Program-scope global and constant variables; they follow the
    /// kernel's parameters in the global table.
    pub global_vars: Vec<ProgramBuffer>,
    pub uses_barrier: bool,
    /// For each pc, the span of the group of adjacent accesses its load or
    /// store belongs to (the vector the device's SLP vectoriser makes of
    /// them, `translate::adjacent`), or 0.
    pub adjacent_span: Vec<u32>,
    /// The sites (indices of `sites`) of loads that are a partial write's
    /// refill: the compiler loads a vector to store it back with some lanes
    /// replaced, a read that is not the kernel's.
    pub refills: Vec<u32>,
}

impl Program {
    /// The pcs `op` sends control to other than the next one.
    pub fn targets(&self, op: &Op) -> Vec<u32> {
        match *op {
            Op::Jump { target } | Op::Call { target, .. } => vec![target],
            Op::Branch { then, other, .. } => vec![then, other],
            Op::Switch { cases_start, cases_len, default, .. } => {
                let cases = &self.cases[cases_start as usize..(cases_start + cases_len) as usize];
                cases.iter().map(|c| c.1).chain([default]).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The side tables its ops' operands are listed in.
    pub fn tables(&self) -> crate::Tables<'_> {
        crate::Tables {
            moves: &self.moves,
            terms: &self.terms,
            printf_args: &self.printf_args,
            layouts: &self.layouts,
        }
    }

    /// The scheduling rank of a pc (see `rank`).
    #[inline(always)]
    pub fn rank_of(&self, pc: u32) -> u32 {
        self.rank.get(pc as usize).copied().unwrap_or(u32::MAX)
    }

    /// The bytecode, one instruction a line (as its `Op` is declared) with
    /// the SPIR-V it came from.
    pub fn disassemble(&self) -> String {
        self.code
            .iter()
            .enumerate()
            .map(|(pc, op)| format!("{pc:5}  {op:?}  ; {}\n", self.site(pc)))
            .collect()
    }

    pub fn site(&self, pc: usize) -> &str {
        self.site_of
            .get(pc)
            .and_then(|s| self.sites.get(*s as usize))
            .map(String::as_str)
            .unwrap_or("?")
    }

    /// Where the instruction at `pc` stands in the source.
    pub fn loc(&self, pc: usize) -> Loc {
        self.site_of
            .get(pc)
            .and_then(|s| self.site_locs.get(*s as usize))
            .copied()
            .unwrap_or_default()
    }

    /// `file:line:column` of the instruction at `pc`, if the module says.
    pub fn location(&self, pc: usize) -> Option<String> {
        let loc = self.loc(pc);
        let line = self.source_lines.get(loc.line.checked_sub(1)? as usize)?;
        Some(match loc.column {
            0 => line.to_string(),
            column => format!("{line}:{column}"),
        })
    }
}

/// Ranks every pc by a reverse post-order of the bytecode's control flow
/// from `entry`: a block comes after every block that branches to it,
/// except along loops' back edges, and a called function's body before
/// the code that follows the call.
/// The pcs control can go to from `pc` (a call: the callee, then the pc
/// after the call), in reverse of the order they should run in: a reverse
/// post-order puts the successor visited last first.
pub fn successors(code: &[Op], cases: &[(u64, Pc)], pc: usize, out: &mut Vec<usize>) {
    out.clear();
    match code[pc] {
        Op::Jump { target } => out.push(target as usize),
        Op::Branch { then, other, .. } => out.extend([other as usize, then as usize]),
        Op::Switch { cases_start, cases_len, default, .. } => {
            out.push(default as usize);
            let table = cases
                .get(cases_start as usize..cases_start as usize + cases_len as usize)
                .unwrap_or(&[]);
            out.extend(table.iter().rev().map(|(_, t)| *t as usize));
        }
        Op::Call { target, .. } => out.extend([pc + 1, target as usize]),
        Op::Ret { .. } | Op::Trap => {}
        _ => out.push(pc + 1),
    }
    out.retain(|s| *s < code.len());
}

/// For each pc, whether it lies on a cycle of the control flow: inside one
/// of the kernel's loops.
pub fn in_loops(code: &[Op], cases: &[(u64, Pc)]) -> Vec<bool> {
    cycles(code, cases, false)
}

/// For each pc, whether it lies inside one of the kernel's loops between
/// barriers: on a cycle of the control flow that passes through no
/// barrier. A compiler that runs a work-group's work-items in a loop of its
/// own between barriers (a CPU's) puts that loop inside a kernel loop with
/// a barrier in it: no work-item's iteration waits on its last.
pub fn in_loops_between_barriers(code: &[Op], cases: &[(u64, Pc)]) -> Vec<bool> {
    cycles(code, cases, true)
}

/// Which pcs run on only some of the ways through their stretch between
/// barriers (from the kernel's entry, or a barrier, to the next barrier or
/// the end): the ones a compiler that runs each stretch as a loop over the
/// work-items, and vectorises it, must predicate with a mask.
pub struct Conditional<'a> {
    code: &'a [Op],
    cases: &'a [(u64, Pc)],
    entry: usize,
    /// The pcs after calls, where a return may go back to.
    returns: Vec<usize>,
    /// The entry function's returns: the kernel's ends.
    ends: Vec<bool>,
    preds: Vec<Vec<usize>>,
}

impl<'a> Conditional<'a> {
    pub fn new(code: &'a [Op], cases: &'a [(u64, Pc)], entry: usize) -> Conditional<'a> {
        let returns = (0..code.len())
            .filter(|&pc| matches!(code[pc], Op::Call { .. }) && pc + 1 < code.len())
            .map(|pc| pc + 1)
            .collect();
        // The entry function's own code: its calls taken as done at once.
        let mut ends = vec![false; code.len()];
        let mut seen = vec![false; code.len()];
        let (mut walk, mut next) = (vec![entry], Vec::new());
        while let Some(pc) = walk.pop() {
            if pc >= code.len() || std::mem::replace(&mut seen[pc], true) {
                continue;
            }
            ends[pc] = matches!(code[pc], Op::Ret { .. });
            match code[pc] {
                Op::Call { .. } => walk.push(pc + 1),
                _ => {
                    successors(code, cases, pc, &mut next);
                    walk.extend(&next);
                }
            }
        }
        let mut c = Conditional {
            code,
            cases,
            entry,
            returns,
            ends,
            preds: vec![Vec::new(); code.len()],
        };
        let mut next = Vec::new();
        for pc in 0..code.len() {
            c.next(pc, &mut next);
            for &s in &next {
                c.preds[s].push(pc);
            }
        }
        c
    }

    /// Where control goes after `pc`: a call into its callee only (the
    /// code after it runs once the callee returns), a return to after any
    /// call, the kernel's end nowhere.
    fn next(&self, pc: usize, out: &mut Vec<usize>) {
        match self.code[pc] {
            Op::Call { target, .. } => {
                out.clear();
                out.push(target as usize);
            }
            Op::Ret { .. } => {
                out.clear();
                if !self.ends[pc] {
                    out.extend(&self.returns);
                }
            }
            _ => successors(self.code, self.cases, pc, out),
        }
    }

    /// Whether some way from a start of `pc`'s stretch to its end passes
    /// `pc` by.
    pub fn at(&self, pc: usize) -> bool {
        let barrier = |q: usize| matches!(self.code[q], Op::Barrier { .. });
        // The stretch's starts that reach `pc`: back to the kernel's entry
        // or to just after a barrier.
        let mut starts = Vec::new();
        let mut seen = vec![false; self.code.len()];
        let mut walk = vec![pc];
        seen[pc] = true;
        while let Some(q) = walk.pop() {
            if q == self.entry {
                starts.push(q);
            }
            for &p in &self.preds[q] {
                if barrier(p) {
                    starts.push(q);
                } else if !seen[p] {
                    seen[p] = true;
                    walk.push(p);
                }
            }
        }
        // From each, an end reached without passing `pc`.
        let mut next = Vec::new();
        starts.into_iter().filter(|&s| s != pc).any(|start| {
            let mut seen = vec![false; self.code.len()];
            let mut walk = vec![start];
            seen[start] = true;
            while let Some(q) = walk.pop() {
                if barrier(q) {
                    return true;
                }
                self.next(q, &mut next);
                if next.is_empty() {
                    return true;
                }
                for &s in &next {
                    if s != pc && !seen[s] {
                        seen[s] = true;
                        walk.push(s);
                    }
                }
            }
            false
        })
    }
}

/// For each pc, whether it starts the header of a loop with a barrier in
/// it whose iterations do not begin with one. A CPU's runtime runs a
/// work-group's work-items in a loop of their own between barriers; it
/// runs a kernel loop with a barrier in it with a barrier of its own at the
/// start of each iteration too, so that every work-item has decided to go
/// round again before any starts, and each iteration then has a region of
/// work-items more than the kernel's own barriers make (none where the
/// iteration begins at a barrier already).
pub fn barrier_loop_headers(code: &[Op], cases: &[(u64, Pc)], entry: usize) -> Vec<bool> {
    let mut headers = vec![false; code.len()];
    for lp in natural_loops(code, cases, entry) {
        let barrier = lp
            .body
            .iter()
            .any(|&pc| matches!(code[pc], Op::Barrier { .. }));
        let starts_at_barrier = matches!(code[lp.header], Op::Barrier { .. })
            || matches!(
                (&code[lp.header], code.get(lp.header + 1)),
                (Op::Block { .. }, Some(Op::Barrier { .. }))
            );
        headers[lp.header] = barrier && !starts_at_barrier;
    }
    headers
}

/// A natural loop of the kernel's control flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NaturalLoop {
    /// The pc every iteration starts at.
    pub header: usize,
    /// Its pcs, the header's among them, in increasing order.
    pub body: Vec<usize>,
}

/// The kernel's natural loops, from its back edges (each an edge to a pc
/// that dominates the edge's source): each loop's header and body, the
/// loops that share a header taken as one. A loop nested in another is a
/// loop of its own, and part of the other's body.
pub fn natural_loops(code: &[Op], cases: &[(u64, Pc)], entry: usize) -> Vec<NaturalLoop> {
    let Some(dominators) = Dominators::of(code, cases, entry) else {
        return Vec::new();
    };
    let mut loops: Vec<NaturalLoop> = Vec::new();
    let mut out = Vec::new();
    let mut in_body = vec![false; code.len()];
    let mut stack = Vec::new();
    for from in 0..code.len() {
        successors(code, cases, from, &mut out);
        for &header in &out {
            if !dominators.dominates(header, from) {
                continue;
            }
            // What reaches the back edge without passing the header.
            let at = match loops.iter().position(|l| l.header == header) {
                Some(at) => at,
                None => {
                    loops.push(NaturalLoop { header, body: vec![header] });
                    loops.len() - 1
                }
            };
            in_body.fill(false);
            for &pc in &loops[at].body {
                in_body[pc] = true;
            }
            stack.clear();
            stack.push(from);
            while let Some(pc) = stack.pop() {
                if std::mem::replace(&mut in_body[pc], true) {
                    continue;
                }
                loops[at].body.push(pc);
                stack.extend(dominators.predecessors(pc).filter(|&q| !in_body[q]));
            }
            loops[at].body.sort_unstable();
        }
    }
    loops
}

/// The dominator tree of the pcs reachable from an entry (Cooper, Harvey
/// and Kennedy's iteration over the reverse postorder), and each pc's
/// predecessors.
struct Dominators {
    /// Each reachable pc's position in the reverse postorder.
    order: Vec<Option<usize>>,
    /// Each reachable pc's immediate dominator (the entry its own).
    idom: Vec<usize>,
    preds: Vec<Vec<usize>>,
}

impl Dominators {
    fn of(code: &[Op], cases: &[(u64, Pc)], entry: usize) -> Option<Dominators> {
        if entry >= code.len() {
            return None;
        }
        let mut succ: Vec<Vec<usize>> = vec![Vec::new(); code.len()];
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); code.len()];
        for (pc, out) in succ.iter_mut().enumerate() {
            successors(code, cases, pc, out);
            for &s in out.iter() {
                preds[s].push(pc);
            }
        }
        // Postorder by an explicit walk.
        let mut postorder = Vec::new();
        let mut seen = vec![false; code.len()];
        let mut walk = vec![(entry, 0usize)];
        seen[entry] = true;
        while let Some((pc, next)) = walk.last_mut() {
            let pc = *pc;
            if let Some(&s) = succ[pc].get(*next) {
                *next += 1;
                if !seen[s] {
                    seen[s] = true;
                    walk.push((s, 0));
                }
            } else {
                postorder.push(pc);
                walk.pop();
            }
        }
        let mut order = vec![None; code.len()];
        for (k, &pc) in postorder.iter().rev().enumerate() {
            order[pc] = Some(k);
        }
        let rpo: Vec<usize> = postorder.iter().rev().copied().collect();
        let mut idom = vec![usize::MAX; code.len()];
        idom[entry] = entry;
        let intersect = |idom: &[usize], mut a: usize, mut b: usize| {
            while a != b {
                while order[a] > order[b] {
                    a = idom[a];
                }
                while order[b] > order[a] {
                    b = idom[b];
                }
            }
            a
        };
        let mut changed = true;
        while changed {
            changed = false;
            for &pc in rpo.iter().skip(1) {
                let mut done = preds[pc].iter().copied().filter(|&q| idom[q] != usize::MAX);
                let Some(first) = done.next() else { continue };
                let new = done.fold(first, |d, q| intersect(&idom, d, q));
                if idom[pc] != new {
                    idom[pc] = new;
                    changed = true;
                }
            }
        }
        Some(Dominators { order, idom, preds })
    }

    /// Whether `a` dominates `b` (both reachable).
    fn dominates(&self, a: usize, mut b: usize) -> bool {
        if self.order[a].is_none() || self.order[b].is_none() {
            return false;
        }
        loop {
            if a == b {
                return true;
            }
            let up = self.idom[b];
            if up == b || up == usize::MAX {
                return false;
            }
            b = up;
        }
    }

    fn predecessors(&self, pc: usize) -> impl Iterator<Item = usize> + '_ {
        self.preds[pc]
            .iter()
            .copied()
            .filter(|&q| self.order[q].is_some())
    }
}

/// For each pc, whether it lies on a cycle of the control flow (through a
/// barrier too, unless `cut_at_barriers`). Tarjan's strongly connected
/// components, without recursion.
fn cycles(code: &[Op], cases: &[(u64, Pc)], cut_at_barriers: bool) -> Vec<bool> {
    let mut t = Tarjan {
        cut_at_barriers,
        index: vec![None; code.len()],
        low: vec![0; code.len()],
        on_stack: vec![false; code.len()],
        stack: Vec::new(),
        walk: Vec::new(),
        next: 0,
    };
    let mut looped = vec![false; code.len()];
    for root in 0..code.len() {
        if t.index[root].is_some() {
            continue;
        }
        t.enter(code, cases, root);
        while let Some((pc, succ, taken)) = t.walk.last_mut() {
            let pc = *pc;
            if let Some(&s) = succ.get(*taken) {
                *taken += 1;
                looped[pc] |= s == pc;
                match t.index[s] {
                    None => t.enter(code, cases, s),
                    Some(i) if t.on_stack[s] => t.low[pc] = t.low[pc].min(i),
                    Some(_) => {}
                }
                continue;
            }
            t.walk.pop();
            if let Some((parent, _, _)) = t.walk.last() {
                t.low[*parent] = t.low[*parent].min(t.low[pc]);
            }
            if Some(t.low[pc]) == t.index[pc] {
                let mut component = Vec::new();
                while let Some(top) = t.stack.pop() {
                    t.on_stack[top] = false;
                    component.push(top);
                    if top == pc {
                        break;
                    }
                }
                if component.len() > 1 {
                    for c in component {
                        looped[c] = true;
                    }
                }
            }
        }
    }
    looped
}

/// Tarjan's walk: each pc's visit order and lowest reachable order, the
/// component stack, and the pcs being walked with their successors.
struct Tarjan {
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    walk: Vec<(usize, Vec<usize>, usize)>,
    next: usize,
    /// A barrier leads nowhere: cycles through one are not loops.
    cut_at_barriers: bool,
}

impl Tarjan {
    fn enter(&mut self, code: &[Op], cases: &[(u64, Pc)], pc: usize) {
        self.index[pc] = Some(self.next);
        self.low[pc] = self.next;
        self.next += 1;
        self.stack.push(pc);
        self.on_stack[pc] = true;
        let mut out = Vec::new();
        if !(self.cut_at_barriers && matches!(code[pc], Op::Barrier { .. })) {
            successors(code, cases, pc, &mut out);
        }
        self.walk.push((pc, out, 0));
    }
}

pub fn schedule_ranks(code: &[Op], cases: &[(u64, Pc)], entry: Pc) -> Vec<u32> {
    let successors = |pc: usize, out: &mut Vec<usize>| successors(code, cases, pc, out);
    let mut seen = vec![false; code.len()];
    let mut post = Vec::with_capacity(code.len());
    // (pc, its successors, how many of them were visited)
    let mut stack: Vec<(usize, Vec<usize>, usize)> = Vec::new();
    if (entry as usize) < code.len() {
        seen[entry as usize] = true;
        let mut s = Vec::new();
        successors(entry as usize, &mut s);
        stack.push((entry as usize, s, 0));
    }
    while let Some((pc, succ, next)) = stack.last_mut() {
        match succ.get(*next).copied() {
            Some(s) => {
                *next += 1;
                if !seen[s] {
                    seen[s] = true;
                    let mut out = Vec::new();
                    successors(s, &mut out);
                    stack.push((s, out, 0));
                }
            }
            None => {
                post.push(*pc);
                stack.pop();
            }
        }
    }
    let mut rank = vec![u32::MAX; code.len()];
    for (i, pc) in post.iter().rev().enumerate() {
        rank[*pc] = i as u32;
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Reg;

    fn mov() -> Op {
        Op::Mov { dst: Reg::new(0), src: Reg::new(1), n: 1 }
    }

    #[test]
    fn a_block_under_an_if_is_conditional_in_its_stretch_between_barriers() {
        let block = |block| Op::Block { block, steps: 1 };
        let code = vec![
            block(0),
            Op::Branch { cond: Reg::new(0), then: 2, other: 4 },
            // 2, 3: the `if`'s body.
            block(1),
            mov(),
            // 4, 5: after it, then a barrier.
            block(2),
            mov(),
            Op::Barrier { fences: crate::Fences::ALL },
            // 7, 8: the stretch after the barrier, which always runs.
            mov(),
            Op::Ret { src: Reg::new(0), n: 0 },
        ];
        let conditional = Conditional::new(&code, &[], 0);
        let at: Vec<bool> = (0..code.len()).map(|pc| conditional.at(pc)).collect();
        assert_eq!(
            at,
            [false, false, true, true, false, false, false, false, false]
        );
    }

    #[test]
    fn a_join_ranks_after_both_ways_to_it() {
        let code = [
            Op::Branch { cond: Reg::new(0), then: 1, other: 3 },
            mov(),
            Op::Jump { target: 5 },
            mov(),
            Op::Jump { target: 5 },
            Op::Ret { src: Reg::new(0), n: 0 },
            mov(),
        ];
        let rank = schedule_ranks(&code, &[], 0);
        assert_eq!(rank[0], 0);
        assert!((1..5).all(|pc| rank[pc] < rank[5]), "{rank:?}");
        assert_eq!(rank[6], u32::MAX, "unreachable code has no rank");
    }

    #[test]
    fn a_loop_body_ranks_before_its_exit_and_calls_before_their_return() {
        let code = [
            Op::Call {
                target: 4,
                moves_start: 0,
                moves_len: 0,
                ret: Reg::new(0),
                ret_n: 0,
            },
            Op::Branch { cond: Reg::new(0), then: 1, other: 2 },
            mov(),
            Op::Ret { src: Reg::new(0), n: 0 },
            Op::Ret { src: Reg::new(0), n: 0 },
        ];
        let rank = schedule_ranks(&code, &[], 0);
        assert!(
            rank[4] < rank[1],
            "the callee runs before the code after the call: {rank:?}"
        );
        assert!(rank[1] < rank[2] && rank[2] < rank[3], "{rank:?}");
    }

    /// A loop's pcs, and none of the straight code around it.
    #[test]
    fn pcs_on_a_cycle_are_in_a_loop() {
        // 0: mov; 1: branch to 2 or 4; 2: mov; 3: jump 1; 4: ret
        let code = [
            mov(),
            Op::Branch { cond: Reg::new(0), then: 2, other: 4 },
            mov(),
            Op::Jump { target: 1 },
            Op::Ret { src: Reg::new(0), n: 0 },
        ];
        assert_eq!(in_loops(&code, &[]), [false, true, true, true, false]);
        assert_eq!(
            in_loops_between_barriers(&code, &[]),
            [false, true, true, true, false]
        );
        let straight = [mov(), mov(), Op::Jump { target: 3 }, mov()];
        assert_eq!(in_loops_between_barriers(&straight, &[]), [false; 4]);
        // The same loop with a barrier in its body: a loop, but none
        // between barriers.
        let mut barrier = code;
        barrier[2] = Op::Barrier { fences: crate::Fences::ALL };
        assert_eq!(in_loops(&barrier, &[]), [false, true, true, true, false]);
        assert_eq!(in_loops_between_barriers(&barrier, &[]), [false; 5]);
    }

    /// A loop whose iterations begin without a barrier and hold one has
    /// its header marked, whether its back edge jumps there itself or
    /// through an edge's copies placed after the code; one that begins at
    /// its barrier, and one with none, are not.
    #[test]
    fn loops_with_a_barrier_that_do_not_begin_at_one_have_their_headers_marked() {
        let block = |block| Op::Block { block, steps: 2 };
        let ret = Op::Ret { src: Reg::new(0), n: 0 };
        // 0-1: entry; 2-5: the loop, its header at 2; 6-7: after it; 8-9:
        // the back edge's copies.
        let code = |first: Op, second: Op, back: u32| {
            vec![
                block(0),
                Op::Jump { target: 2 },
                block(1),
                first,
                second,
                Op::Branch { cond: Reg::new(0), then: back, other: 6 },
                block(2),
                ret,
                mov(),
                Op::Jump { target: 2 },
            ]
        };
        let marked = |code: &[Op]| -> Vec<usize> {
            let headers = barrier_loop_headers(code, &[], 0);
            (0..code.len()).filter(|&pc| headers[pc]).collect()
        };
        assert_eq!(
            marked(&code(mov(), Op::Barrier { fences: crate::Fences::ALL }, 2)),
            [2]
        );
        assert_eq!(
            marked(&code(mov(), Op::Barrier { fences: crate::Fences::ALL }, 8)),
            [2]
        );
        assert_eq!(
            marked(&code(Op::Barrier { fences: crate::Fences::ALL }, mov(), 2)),
            Vec::<usize>::new()
        );
        assert_eq!(marked(&code(mov(), mov(), 8)), Vec::<usize>::new());
    }

    /// An inner loop is a loop of its own and part of the outer one's body.
    #[test]
    fn nested_loops_are_each_found_with_their_bodies() {
        let block = |block| Op::Block { block, steps: 1 };
        let branch = |then, other| Op::Branch { cond: Reg::new(0), then, other };
        // 0: entry; 1-2: the outer header; 3-4: the inner loop, back to 3
        // or on; 5-6: the outer latch, back to 1 or out; 7-8: after.
        let code = [
            block(0),
            block(1),
            mov(),
            block(2),
            branch(3, 5),
            block(3),
            branch(1, 7),
            block(4),
            Op::Ret { src: Reg::new(0), n: 0 },
        ];
        let loops = natural_loops(&code, &[], 0);
        let find = |header| {
            loops
                .iter()
                .find(|l| l.header == header)
                .map(|l| l.body.clone())
        };
        assert_eq!(loops.len(), 2);
        assert_eq!(find(3), Some(vec![3, 4]));
        assert_eq!(find(1), Some(vec![1, 2, 3, 4, 5, 6]));
    }
}
