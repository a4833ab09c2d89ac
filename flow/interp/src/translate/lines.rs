//! Source lines: the `OpLine` in force at each instruction, so that counts,
//! traffic and faults name the line of the kernel's source they come from.
//! An `OpLine` holds until the next `OpLine`, an `OpNoLine` or the end of
//! its block.

use crate::counts::SourceLine;
use clflow_bytecode::program::Loc;
use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Op as S, Word};
use std::collections::HashMap;

/// The lines a module names, and the one in force while translating.
#[derive(Debug, Default)]
pub(super) struct Lines {
    /// `OpString`s: the file names `OpLine` refers to.
    strings: HashMap<Word, String>,
    pub(super) table: Vec<SourceLine>,
    index: HashMap<(Word, u32), u32>,
    pub(super) current: Loc,
}

impl Lines {
    pub(super) fn new(module: &Module) -> Self {
        let strings = module
            .debug_string_source
            .iter()
            .filter(|i| i.class.opcode == S::String)
            .filter_map(|i| match (i.result_id, i.operands.first()) {
                // The compile stage names files from where clflow runs.
                (Some(id), Some(Operand::LiteralString(s))) => {
                    Some((id, s.strip_prefix("./").unwrap_or(s).to_string()))
                }
                _ => None,
            })
            .collect();
        Lines { strings, ..Lines::default() }
    }

    /// Follows `OpLine` and `OpNoLine`; other instructions leave the line
    /// as it is.
    pub(super) fn follow(&mut self, inst: &Instruction) {
        match (inst.class.opcode, &inst.operands[..]) {
            // Line 0 is the compiler's own code, which no line holds.
            (
                S::Line,
                [Operand::IdRef(file), Operand::LiteralBit32(line @ 1..), Operand::LiteralBit32(column), ..],
            ) => {
                let next = self.table.len() as u32 + 1;
                let id = *self.index.entry((*file, *line)).or_insert(next);
                if id == next {
                    let file = self.strings.get(file).cloned().unwrap_or_default();
                    self.table.push(SourceLine { file, line: *line });
                }
                self.current = Loc { line: id, column: *column };
            }
            (S::NoLine | S::Line, _) => self.current = Loc::default(),
            _ => {}
        }
    }
}
