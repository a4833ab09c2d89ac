//! The program as a whole: which functions are reachable, their registers
//! and private variables, the kernel's parameters, and the final proof that
//! every op stays inside the program.

use super::*;
use crate::memory;
use clflow_bytecode::program::ParamSlot;
use clflow_bytecode::{Operands, Tables};
use clflow_spirv::types::Type;

impl<'m> Translator<'m> {
    pub(super) fn program(mut self, entry_fn: Word) -> R<Program> {
        let entry = *self
            .functions
            .get(&entry_fn)
            .ok_or_else(|| TranslateError::malformed("the entry point names no function"))?;
        self.storage.nargs = entry.parameters.len();
        for (rid, space, index) in std::mem::take(&mut self.storage.pending_globals) {
            let slot = self.val(rid)?.slot;
            let pointer = memory::encode(space, self.storage.nargs + index, 0);
            self.regs.init.push((slot, pointer));
            self.regs.const_slots.insert(slot, pointer);
        }
        self.relocate();
        let order = self.reachable(entry_fn)?;
        let mut params = roles::ParamRanks::new();
        for f in &order {
            roles::classify(
                self.functions[f],
                &self.opencl_std,
                &mut self.roles,
                &mut params,
            );
            refills::refills(self.functions[f], &self.types, &mut self.refill_loads);
        }
        for f in &order {
            let func = self.functions[f];
            let name = self.name(*f);
            self.allocate(func)
                .map_err(|e| e.at(|| format!("function `{name}`")))?;
        }
        let params = self.kernel_params(entry)?;
        for f in &order {
            self.calls.func_pc.insert(*f, self.out.code.len() as Pc);
            let func = self.functions[f];
            self.emit_function(*f, func)?;
        }
        for (at, callee) in std::mem::take(&mut self.calls.call_fixups) {
            if let Op::Call { target, .. } = &mut self.out.code[at] {
                *target = self.calls.func_pc[&callee];
            }
        }
        self.check_code()?;
        let tables = Tables {
            moves: &self.out.moves,
            terms: &self.out.terms,
            printf_args: &self.out.printf_args,
            layouts: &self.out.layouts,
        };
        fuse::fuse(&mut self.out.code, tables);
        let mut init_regs = vec![0u64; self.regs.next_reg as usize];
        for (slot, v) in &self.regs.init {
            init_regs[slot.index()] = *v;
        }
        let adjacent_span = std::mem::take(&mut self.func.adjacent).spans(self.out.code.len());
        Ok(Program {
            rank: clflow_bytecode::program::schedule_ranks(
                &self.out.code,
                &self.out.cases,
                self.calls.func_pc[&entry_fn],
            ),
            adjacent_span,
            kernel: self.kernel,
            code: self.out.code,
            site_of: self.sites.site_of,
            sites: self.sites.sites,
            source_lines: self.sites.lines.table,
            site_locs: self.sites.site_locs,
            entry: self.calls.func_pc[&entry_fn],
            init_regs,
            params,
            moves: self.out.moves,
            terms: self.out.terms,
            printf_args: self.out.printf_args,
            cases: self.out.cases,
            kept_calls: self.calls.kept_calls,
            other_calls: self.calls.other_calls,
            layouts: self.out.layouts,
            arrays: self.out.arrays,
            blocks: self.tally.blocks,
            hist_keys: self.tally.hist_keys,
            work_keys: self.tally.work_keys,
            private: self.storage.private,
            local_vars: self.storage.local_vars,
            global_vars: self.storage.global_vars,
            uses_barrier: self.out.uses_barrier,
            refills: self.out.refills,
        })
    }

    /// Proves that no op touches a register, table entry or pc outside the
    /// program, so that a malformed module cannot make the machine fail.
    pub(super) fn check_code(&self) -> R<()> {
        let nregs = self.regs.next_reg as u64;
        let npc = self.out.code.len() as u64;
        let tables = Tables {
            moves: &self.out.moves,
            terms: &self.out.terms,
            printf_args: &self.out.printf_args,
            layouts: &self.out.layouts,
        };
        for (pc, op) in self.out.code.iter().enumerate() {
            let bad_reg =
                Operands::touched(op, tables).any(|(r, n)| r.index() as u64 + n as u64 > nregs);
            let in_table =
                |start: u32, len: u32, table: usize| start as usize + len as usize <= table;
            let bad_ref = match *op {
                Op::Jump { target } => target as u64 >= npc,
                Op::Branch { then, other, .. } => then as u64 >= npc || other as u64 >= npc,
                Op::Switch { cases_start, cases_len, default, .. } => {
                    default as u64 >= npc
                        || !in_table(cases_start, cases_len, self.out.cases.len())
                        || self.out.cases[cases_start as usize..(cases_start + cases_len) as usize]
                            .iter()
                            .any(|(_, t)| *t as u64 >= npc)
                }
                Op::Call { target, moves_start, moves_len, .. } => {
                    target as u64 >= npc || !in_table(moves_start, moves_len, self.out.moves.len())
                }
                Op::Moves { start, len } => !in_table(start, len, self.out.moves.len()),
                Op::Printf { args_start, args_len, .. } => {
                    !in_table(args_start, args_len, self.out.printf_args.len())
                }
                Op::Ptr { terms_start, terms_len, .. } => {
                    !in_table(terms_start, terms_len as u32, self.out.terms.len())
                }
                Op::LoadAgg { dst: r, layout, .. } | Op::StoreAgg { src: r, layout, .. } => self
                    .out
                    .layouts
                    .get(layout as usize)
                    .is_none_or(|l| r.index() as u64 + l.len() as u64 > nregs),
                Op::Bitcast { from, from_n, to, to_n, .. } => {
                    from as u32 * from_n as u32 > 1024
                        || to as u32 * to_n as u32 > 1024
                        || from < 8
                        || to < 8
                }
                _ => false,
            };
            if bad_reg || bad_ref {
                return Err(TranslateError::malformed(format!(
                    "inconsistent types or operands ({})",
                    self.sites
                        .sites
                        .get(self.sites.site_of[pc] as usize)
                        .map(String::as_str)
                        .unwrap_or("?")
                )));
            }
        }
        let last_is_exit = matches!(
            self.out.code.last(),
            Some(
                Op::Ret { .. } | Op::Jump { .. } | Op::Trap | Op::Switch { .. } | Op::Branch { .. }
            )
        );
        if !last_is_exit {
            return Err(TranslateError::malformed(
                "a function's last block does not end in a branch or return",
            ));
        }
        Ok(())
    }

    /// Functions reachable from the kernel, callees first; recursion (which
    /// OpenCL C forbids) and calls to undefined functions are errors.
    pub(super) fn reachable(&self, entry: Word) -> R<Vec<Word>> {
        let mut order = Vec::new();
        let mut state: HashMap<Word, bool> = HashMap::new(); // false: visiting, true: done
        let mut stack = vec![(entry, false)];
        while let Some((f, expanded)) = stack.pop() {
            if expanded {
                state.insert(f, true);
                order.push(f);
                continue;
            }
            match state.get(&f) {
                Some(true) => continue,
                Some(false) => {
                    return Err(TranslateError::unsupported(
                        format!("recursion through function `{}`", self.name(f)),
                        "OpenCL C does not allow recursion",
                    ))
                }
                None => {}
            }
            let func = self.functions.get(&f).ok_or_else(|| {
                TranslateError::malformed(format!("call to %{f}, which is not a function"))
            })?;
            if func.blocks.is_empty() {
                return Err(TranslateError::unsupported(
                    format!(
                        "call to `{}`, which the module declares but does not define",
                        self.name(f)
                    ),
                    "link the function into the kernel's source",
                ));
            }
            state.insert(f, false);
            stack.push((f, true));
            for inst in func.blocks.iter().flat_map(|b| &b.instructions) {
                if inst.class.opcode == S::FunctionCall {
                    let callee = id(inst, 0)?;
                    if state.get(&callee) == Some(&false) {
                        return Err(TranslateError::unsupported(
                            format!("recursion through function `{}`", self.name(callee)),
                            "OpenCL C does not allow recursion",
                        ));
                    }
                    stack.push((callee, false));
                }
            }
        }
        Ok(order)
    }

    /// Gives every value of a function its register slots, and every
    /// private variable its place, before any code refers to them.
    pub(super) fn allocate(&mut self, func: &Function) -> R<()> {
        for p in &func.parameters {
            let (rid, ty) = result(p)?;
            let slot = self.alloc(self.types.slots(ty)?)?;
            self.regs.values.insert(rid, Val { slot, ty });
        }
        for inst in func.blocks.iter().flat_map(|b| &b.instructions) {
            let (Some(rid), Some(ty)) = (inst.result_id, inst.result_type) else {
                continue;
            };
            if inst.class.opcode == S::Variable {
                let (space, pointee) = self.types.pointee(ty)?;
                if space != AddressSpace::Private {
                    return Err(TranslateError::malformed(
                        "a function-scope variable outside private memory",
                    ));
                }
                let (size, align) =
                    self.bounded(pointee, "a private variable", MAX_PRIVATE_BYTES)?;
                let var = self.storage.private.push(
                    size,
                    align,
                    format!("private variable `{}`", self.name(rid)),
                );
                self.check_private()?;
                self.constant(rid, ty, vec![memory::encode(memory::SPACE_PRIVATE, var, 0)])?;
                continue;
            }
            let slot = self.alloc(self.types.slots(ty)?)?;
            self.regs.values.insert(rid, Val { slot, ty });
        }
        Ok(())
    }

    pub(super) fn kernel_params(&mut self, entry: &Function) -> R<Vec<ParamSlot>> {
        let mut params = Vec::new();
        for p in &entry.parameters {
            let (rid, ty) = result(p)?;
            let reg = self.val(rid)?.slot;
            // The launch code fills the file by index (see `ParamSlot`).
            let slot = reg;
            let has = |attribute| {
                self.decorations.get(&rid).is_some_and(|ds| {
                    ds.iter().any(|(d, ops)| {
                        *d == Decoration::FuncParamAttr
                            && ops.first() == Some(&Operand::FunctionParameterAttribute(attribute))
                    })
                })
            };
            let byval = has(spirv::FunctionParameterAttribute::ByVal);
            let no_write = has(spirv::FunctionParameterAttribute::NoWrite);
            params.push(match *self.types.get(ty)? {
                Type::Pointer { pointee, .. } if byval => {
                    let (size, align) =
                        self.bounded(pointee, "a by-value argument", MAX_PRIVATE_BYTES)?;
                    let var = self.storage.private.push(
                        size,
                        align,
                        format!("by-value argument `{}`", self.name(rid)),
                    );
                    self.check_private()?;
                    self.regs
                        .init
                        .push((reg, memory::encode(memory::SPACE_PRIVATE, var, 0)));
                    ParamSlot::ByVal { slot, var, size }
                }
                Type::Image(image) => ParamSlot::Image {
                    slot,
                    dim: image.dim.ok_or_else(|| {
                        TranslateError::unsupported("this image type", "use image1d/2d/3d")
                    })?,
                },
                Type::Sampler => ParamSlot::Sampler { slot },
                Type::Pointer { .. } => {
                    ParamSlot::Pointer { slot, space: self.types.pointee(ty)?.0, no_write }
                }
                _ => ParamSlot::Value {
                    slot,
                    leaves: self.types.leaves(ty)?,
                    size: self.types.layout(ty)?.size,
                },
            });
        }
        Ok(params)
    }
}
