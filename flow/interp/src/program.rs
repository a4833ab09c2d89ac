//! A kernel translated once: its bytecode and every table the machine needs.

use crate::bytecode::{Move, Op, Pc, PtrTerm, Reg};
use crate::counts::{LaneType, Traffic, WorkKey};
use crate::memory::ArenaLayout;
use crate::types::Leaf;
use clflow_core::AddressSpace;

/// What one basic block counts each time it runs.
#[derive(Debug, Clone, Default)]
pub struct BlockCounts {
    pub hist: Vec<(u32, u64)>,
    pub work: Vec<(u32, u64)>,
    pub traffic: Traffic,
}

/// How a kernel parameter is passed in.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamSlot {
    /// A pointer into `space`; `slot` gets the encoded pointer.
    Pointer { slot: Reg, space: AddressSpace },
    /// A value of `leaves` copied from the argument's bytes into `slot..`.
    Value {
        slot: Reg,
        leaves: Vec<Leaf>,
        size: u64,
    },
    /// A struct passed by value (`ByVal`): its bytes go to private variable
    /// `var`, and `slot` points there.
    ByVal { slot: Reg, var: usize, size: u64 },
}

/// A program-scope variable with storage in global or constant memory.
#[derive(Debug, Clone)]
pub struct ProgramBuffer {
    pub bytes: Vec<u8>,
    pub label: String,
    pub space: &'static str,
}

#[derive(Debug)]
pub struct Program {
    pub kernel: String,
    pub code: Vec<Op>,
    /// For each pc, the index of its SPIR-V instruction in `sites`.
    pub site_of: Vec<u32>,
    /// `OpLoad (%27 in vadd)`: how errors name an instruction.
    pub sites: Vec<String>,
    pub entry: Pc,
    /// The initial register file: constants in place, the rest zero.
    pub init_regs: Vec<u64>,
    pub params: Vec<ParamSlot>,
    pub moves: Vec<Move>,
    pub terms: Vec<PtrTerm>,
    pub cases: Vec<(u64, Pc)>,
    pub layouts: Vec<Vec<Leaf>>,
    pub blocks: Vec<BlockCounts>,
    pub hist_keys: Vec<(&'static str, LaneType)>,
    pub work_keys: Vec<WorkKey>,
    pub private: ArenaLayout,
    /// Program-scope `__local` variables; they follow the kernel's
    /// parameters in the local table.
    pub local_vars: Vec<(u64, u64, String)>,
    /// Program-scope global and constant variables; they follow the
    /// kernel's parameters in the global table.
    pub global_vars: Vec<ProgramBuffer>,
    pub uses_barrier: bool,
}

impl Program {
    pub fn site(&self, pc: usize) -> &str {
        self.site_of
            .get(pc)
            .and_then(|s| self.sites.get(*s as usize))
            .map(String::as_str)
            .unwrap_or("?")
    }
}
