//! What each value of a function is for (see "Roles" in [`crate::counts`]):
//! a backward fixpoint over the def-use graph, once per function, before
//! any code is emitted.

use super::*;
use crate::counts::Role;
use rspirv::spirv::OpenclStd100Op as X;

/// Ranks of the lattice a value climbs as its uses are seen: no use yet,
/// control, address, work. A use of a higher rank wins, so mixed address
/// and control uses (a loop counter tested and indexed) make address.
const UNUSED: u8 = 0;
const CONTROL: u8 = 1;
const ADDRESS: u8 = 2;
const WORK: u8 = 3;

/// How an instruction uses an operand.
#[derive(Clone, Copy)]
enum Use {
    /// Always this rank (a store's value is work, a load's pointer address).
    Fixed(u8),
    /// Whatever the instruction's own result is for (arithmetic, moves).
    AsResult,
}

/// What a function's parameters are for, as its calls' arguments use them.
pub(super) type ParamRanks = HashMap<Word, Vec<u8>>;

/// The roles of every result `func` defines, added to `roles`; its
/// parameters' ranks go to `params` for its callers, which are classified
/// after it (callees first).
pub(super) fn classify(
    func: &Function,
    opencl_std: &HashSet<Word>,
    roles: &mut HashMap<Word, Role>,
    params: &mut ParamRanks,
) {
    let insts: Vec<&Instruction> = func.blocks.iter().flat_map(|b| &b.instructions).collect();
    let mut rank: HashMap<Word, u8> = HashMap::new();
    for p in &func.parameters {
        if let Some(r) = p.result_id {
            rank.insert(r, UNUSED);
        }
    }
    for inst in &insts {
        if let Some(r) = inst.result_id {
            rank.insert(r, UNUSED);
        }
    }
    // Each pass can only raise ranks, and there are three levels.
    let mut changed = true;
    while changed {
        changed = false;
        for inst in insts.iter().rev() {
            let own = inst.result_id.map_or(UNUSED, |r| rank[&r]);
            for (k, operand) in inst.operands.iter().enumerate() {
                let Operand::IdRef(v) = operand else { continue };
                let Some(current) = rank.get(v).copied() else {
                    continue;
                };
                let r = match use_of(inst, k, opencl_std, params) {
                    Use::Fixed(r) => r,
                    Use::AsResult => own,
                };
                if r > current {
                    rank.insert(*v, r);
                    changed = true;
                }
            }
        }
    }
    let fid = func.def.as_ref().and_then(|d| d.result_id).unwrap_or(0);
    let ranks = func
        .parameters
        .iter()
        .map(|p| p.result_id.map_or(WORK, |r| rank[&r]))
        .collect();
    params.insert(fid, ranks);
    for (v, r) in rank {
        roles.insert(v, role(r));
    }
}

/// A value nothing reads is work, like anything not shown to be otherwise.
fn role(rank: u8) -> Role {
    match rank {
        CONTROL => Role::Control,
        ADDRESS => Role::Address,
        _ => Role::Work,
    }
}

/// The role an instruction is counted in: its result's, or for one without
/// a result, control for branches and returns (a returned value is work,
/// the return itself control flow), work for the rest (stores, barriers).
pub(super) fn of_instruction(inst: &Instruction, roles: &HashMap<Word, Role>) -> Role {
    match inst.result_id.and_then(|r| roles.get(&r)) {
        Some(role) => *role,
        None => match inst.class.opcode {
            S::Branch | S::BranchConditional | S::Switch | S::Return | S::ReturnValue => {
                Role::Control
            }
            _ => Role::Work,
        },
    }
}

/// How operand `k` of `inst` is used.
fn use_of(inst: &Instruction, k: usize, opencl_std: &HashSet<Word>, params: &ParamRanks) -> Use {
    use Use::*;
    match inst.class.opcode {
        S::Load => Fixed(ADDRESS),
        // (pointer, value)
        S::Store => Fixed(if k == 0 { ADDRESS } else { WORK }),
        S::CopyMemory | S::CopyMemorySized | S::GroupAsyncCopy => Fixed(ADDRESS),
        S::BranchConditional | S::Switch => Fixed(CONTROL),
        S::ReturnValue => Fixed(WORK),
        // An argument is what the callee uses its parameter for (a pointer
        // it only dereferences is address); one it never reads is work.
        S::FunctionCall => {
            let callee = id(inst, 0).ok().and_then(|f| params.get(&f));
            match callee.and_then(|ranks| ranks.get(k.wrapping_sub(1))) {
                Some(&r) if r != UNUSED => Fixed(r),
                _ => Fixed(WORK),
            }
        }
        // (image, coordinate, texel ...)
        S::ImageRead | S::ImageSampleExplicitLod => Fixed(ADDRESS),
        S::ImageWrite => Fixed(if k < 2 { ADDRESS } else { WORK }),
        op if access::atomic_op(op).is_some() => Fixed(if k == 0 { ADDRESS } else { WORK }),
        S::ExtInst => ext_use(inst, k, opencl_std),
        _ => AsResult,
    }
}

/// OpenCL.std builtins compute from their arguments, except those that
/// move memory: their offsets and pointers locate it, what they store is
/// work (operands 0 and 1 are the set and the instruction).
fn ext_use(inst: &Instruction, k: usize, opencl_std: &HashSet<Word>) -> Use {
    let builtin = match (id(inst, 0), literal(inst, 1)) {
        (Ok(set), Ok(n)) if opencl_std.contains(&set) => X::from_u32(n as u32),
        _ => None,
    };
    match builtin {
        Some(X::vloadn | X::vload_half | X::vload_halfn | X::vloada_halfn | X::prefetch) => {
            Use::Fixed(ADDRESS)
        }
        Some(
            X::vstoren
            | X::vstore_half
            | X::vstore_half_r
            | X::vstore_halfn
            | X::vstore_halfn_r
            | X::vstorea_halfn
            | X::vstorea_halfn_r,
        ) => Use::Fixed(if k == 2 { WORK } else { ADDRESS }),
        Some(X::printf) => Use::Fixed(WORK),
        _ => Use::AsResult,
    }
}
