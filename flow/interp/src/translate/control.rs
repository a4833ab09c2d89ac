//! Control flow: a function's blocks and their counts, branches and
//! switches, phi edges, calls, and the inlining of one-block callees.

use super::*;

impl<'m> Translator<'m> {
    pub(super) fn emit_function(&mut self, fid: Word, func: &'m Function) -> R<()> {
        let fname = self.name(fid);
        let start = self.out.code.len();
        let cases_start = self.out.cases.len();
        self.func.targets.clear();
        self.func.stubs.clear();
        self.func.phis.clear();
        for block in &func.blocks {
            let label = block.label.as_ref().and_then(|l| l.result_id).unwrap_or(0);
            for inst in block
                .instructions
                .iter()
                .filter(|i| i.class.opcode == S::Phi)
            {
                let (rid, _) = result(inst)?;
                let v = self.val(rid)?;
                let n = self.types.slots(v.ty)?;
                let mut pairs = Vec::new();
                for k in (0..inst.operands.len()).step_by(2) {
                    pairs.push((id(inst, k)?, id(inst, k + 1)?));
                }
                self.func
                    .phis
                    .entry(label)
                    .or_default()
                    .push((v.slot, n, pairs, v.ty));
            }
        }
        let mut label_pc = HashMap::new();
        for block in &func.blocks {
            let label = block.label.as_ref().and_then(|l| l.result_id).unwrap_or(0);
            label_pc.insert(label, self.out.code.len() as Pc);
            self.func.current_label = label;
            self.tally.blocks.push(BlockCounts::default());
            self.func.block = self.tally.blocks.len() - 1;
            // An OpLine holds to the end of its block.
            self.sites.lines.current = Loc::default();
            self.site(format!("block %{label} in `{fname}`"));
            let block_at = self.out.code.len();
            self.emit(Op::Block { block: self.func.block as u32, steps: 0 });
            for phi in block
                .instructions
                .iter()
                .filter(|i| i.class.opcode == S::Phi)
            {
                let (_, ty) = result(phi)?;
                let lt = self.lane_type_of(ty, false);
                self.tally.role = roles::of_instruction(phi, &self.roles);
                self.counted(rules::PHI, lt, 1);
            }
            for inst in &block.instructions {
                self.sites.lines.follow(inst);
                self.site(format!(
                    "{}{} in `{fname}`",
                    spirv_name(inst.class.opname),
                    inst.result_id.map(|r| format!(" %{r}")).unwrap_or_default()
                ));
                self.instruction(inst).map_err(|e| {
                    e.at(|| {
                        format!(
                            "{}{} in function `{fname}`",
                            spirv_name(inst.class.opname),
                            inst.result_id.map(|r| format!(" %{r}")).unwrap_or_default()
                        )
                    })
                })?;
            }
            let steps = (self.out.code.len() - block_at) as u32;
            if let Op::Block { steps: s, .. } = &mut self.out.code[block_at] {
                *s = steps;
            }
        }
        // Phi edges: parallel copies, through temporaries where they overlap.
        let mut stub_pc = Vec::new();
        for (pred, succ) in self.func.stubs.clone() {
            self.sites.lines.current = Loc::default();
            self.site(format!(
                "phi copies on the edge %{pred} -> %{succ} in `{fname}`"
            ));
            stub_pc.push(self.out.code.len() as Pc);
            let mut copies = Vec::new();
            for (dst, n, pairs, _) in self.func.phis.get(&succ).cloned().unwrap_or_default() {
                let value = pairs
                    .iter()
                    .find(|(_, p)| *p == pred)
                    .map(|(v, _)| *v)
                    .ok_or_else(|| {
                        TranslateError::malformed(format!(
                            "phi in %{succ} has no value for %{pred}"
                        ))
                    })?;
                copies.push(Move { dst, src: self.val(value)?.slot, n });
            }
            let overlaps = copies.iter().any(|c| {
                copies
                    .iter()
                    .any(|d| c.src < d.dst + d.n && d.dst < c.src + c.n)
            });
            if overlaps {
                let mut staged = Vec::new();
                for c in &copies {
                    let tmp = self.alloc(c.n)?;
                    self.out.moves.push(Move { dst: tmp, src: c.src, n: c.n });
                    staged.push(Move { dst: c.dst, src: tmp, n: c.n });
                }
                let start = self.out.moves.len() - copies.len();
                self.emit(Op::Moves { start: start as u32, len: copies.len() as u32 });
                copies = staged;
            }
            let start = self.out.moves.len();
            self.out.moves.extend(copies.iter().copied());
            self.emit(Op::Moves { start: start as u32, len: copies.len() as u32 });
            self.func.targets.push(Target::Label(succ));
            self.emit(Op::Jump { target: (self.func.targets.len() - 1) as Pc });
        }
        let resolve = |t: Pc, targets: &[Target]| -> R<Pc> {
            match targets.get(t as usize) {
                Some(Target::Label(l)) => label_pc.get(l).copied().ok_or_else(|| {
                    TranslateError::malformed(format!("branch to %{l}, not a block of `{fname}`"))
                }),
                Some(Target::Stub(s)) => Ok(stub_pc[*s]),
                None => Err(TranslateError::malformed("bad branch target")),
            }
        };
        let targets = std::mem::take(&mut self.func.targets);
        for op in &mut self.out.code[start..] {
            match op {
                Op::Jump { target } => *target = resolve(*target, &targets)?,
                Op::Branch { then, other, .. } => {
                    *then = resolve(*then, &targets)?;
                    *other = resolve(*other, &targets)?;
                }
                Op::Switch { default, .. } => *default = resolve(*default, &targets)?,
                _ => {}
            }
        }
        for case in &mut self.out.cases[cases_start..] {
            case.1 = resolve(case.1, &targets)?;
        }
        Ok(())
    }

    /// OpBranch.
    pub(super) fn branch(&mut self, inst: &Instruction) -> R<()> {
        let t = self.target(id(inst, 0)?);
        self.emit(Op::Jump { target: t });
        self.count(inst, self.result_lane_type(inst), 1);
        Ok(())
    }

    /// OpBranchConditional.
    pub(super) fn branch_conditional(&mut self, inst: &Instruction) -> R<()> {
        let cond = self.val(id(inst, 0)?)?.slot;
        let then = self.target(id(inst, 1)?);
        let other = self.target(id(inst, 2)?);
        self.emit(Op::Branch { cond, then, other });
        // Typed by its condition (see `result_lane_type`).
        self.count(inst, LaneType::Bool, 1);
        Ok(())
    }

    /// OpSwitch: its cases go to the program's case table.
    pub(super) fn switch(&mut self, inst: &Instruction) -> R<()> {
        let sel = self.val(id(inst, 0)?)?;
        let (s, _) = self.types.lanes(sel.ty)?;
        let bits = self.int_bits(s)?;
        let default = self.target(id(inst, 1)?);
        let cases_start = self.out.cases.len();
        for k in (2..inst.operands.len()).step_by(2) {
            let value = literal(inst, k)? & crate::opencl_std::mask(bits);
            let t = self.target(id(inst, k + 1)?);
            self.out.cases.push((value, t));
        }
        let cases_len = (self.out.cases.len() - cases_start) as u32;
        self.emit(Op::Switch {
            sel: sel.slot,
            bits,
            cases_start: cases_start as u32,
            cases_len,
            default,
        });
        self.count(inst, lane_type(s, false)?, 1);
        Ok(())
    }

    /// OpReturn.
    pub(super) fn ret(&mut self, inst: &Instruction) -> R<()> {
        self.emit(Op::Ret { src: Reg::UNUSED, n: 0 });
        self.count(inst, self.result_lane_type(inst), 1);
        Ok(())
    }

    /// OpReturnValue.
    pub(super) fn return_value(&mut self, inst: &Instruction) -> R<()> {
        let v = self.val(id(inst, 0)?)?;
        let n = self.types.slots(v.ty)?;
        self.emit(Op::Ret { src: v.slot, n });
        self.count(inst, self.result_lane_type(inst), 1);
        Ok(())
    }

    /// Where a call to `func` is listed: `Program::kept_calls` where the
    /// callee is marked `DontInline`, else `Program::other_calls`.
    fn calls_to(&mut self, func: &Function) -> &mut Vec<(Pc, Pc)> {
        if kept_call(func) {
            &mut self.calls.kept_calls
        } else {
            &mut self.calls.other_calls
        }
    }

    /// OpFunctionCall: one-block callees are inlined, others called.
    pub(super) fn call(&mut self, inst: &Instruction) -> R<()> {
        let callee = id(inst, 0)?;
        let func = self.functions[&callee];
        let one_block = func.blocks.len() == 1
            && func.blocks[0]
                .instructions
                .iter()
                .all(|i| i.class.opcode != S::Phi)
            && matches!(
                func.blocks[0].instructions.last().map(|i| i.class.opcode),
                Some(S::Return | S::ReturnValue)
            );
        let at = self.out.code.len() as Pc;
        if one_block {
            self.inline_call(inst, callee, func)?;
            let end = self.out.code.len() as Pc;
            self.calls_to(func).push((at, end));
            return Ok(());
        }
        self.calls_to(func).push((at, at + 1));
        let start = self.out.moves.len();
        for (k, p) in func.parameters.iter().enumerate() {
            let (pid, pty) = result(p)?;
            let dst = self.val(pid)?.slot;
            let src = self.val(id(inst, k + 1)?)?.slot;
            let n = self.types.slots(pty)?;
            self.out.moves.push(Move { dst, src, n });
        }
        let (ret, ret_n) = match (inst.result_id, inst.result_type) {
            (Some(r), Some(t)) => (self.val(r)?.slot, self.types.slots(t)?),
            _ => (Reg::UNUSED, 0),
        };
        self.calls.call_fixups.push((self.out.code.len(), callee));
        self.emit(Op::Call {
            target: 0,
            moves_start: start as u32,
            moves_len: (self.out.moves.len() - start) as u32,
            ret,
            ret_n,
        });
        self.count(inst, self.result_lane_type(inst), 1);
        Ok(())
    }

    /// OpControlBarrier (execution scope, memory scope, semantics): the
    /// memory it orders is the semantics' (both spaces where they are not
    /// a constant).
    pub(super) fn barrier(&mut self, inst: &Instruction) -> R<()> {
        let semantics = self.regs.const_ints.get(&id(inst, 2)?).copied();
        let fences = semantics.map_or(Fences::ALL, Fences::of_semantics);
        self.out.uses_barrier = true;
        self.emit(Op::Barrier { fences });
        self.count(inst, self.result_lane_type(inst), 1);
        Ok(())
    }

    /// OpGroupWaitEvents (scope, number of events, event list): the copies
    /// were made at their own barrier; this waits for the whole group, which
    /// then checks that its work-items wait for the same events.
    pub(super) fn wait_events(&mut self, inst: &Instruction) -> R<()> {
        let num = self.val(id(inst, 1)?)?.slot;
        let list = self.val(id(inst, 2)?)?.slot;
        self.out.uses_barrier = true;
        self.emit(Op::Barrier { fences: Fences::ALL });
        self.emit(Op::WaitEvents { num, list });
        Ok(())
    }

    /// A call to a one-block function is emitted in place: the callee's
    /// registers are its own (no recursion), so its body runs unchanged
    /// and its counts join the calling block, which runs it once per call.
    pub(super) fn inline_call(
        &mut self,
        inst: &Instruction,
        callee: Word,
        func: &'m Function,
    ) -> R<()> {
        let callee_name = self.name(callee);
        let call_site = self.sites.current_site;
        let call_loc = self.sites.lines.current;
        // The callee reads its parameters through `val`: bind them to the
        // caller's values instead of copying.
        let saved = self.regs.overrides.clone();
        for (k, p) in func.parameters.iter().enumerate() {
            let (pid, _) = result(p)?;
            let arg = self.val(id(inst, k + 1)?)?;
            self.regs.overrides.insert(pid, arg);
        }
        // llvm-spirv emulates LLVM's funnel shifts with a function of five
        // operations; its body runs uncounted, as the rotate it implements.
        let funnel = rules::funnel(&callee_name);
        let was_silent = self.tally.silent;
        match (funnel, inst.result_type) {
            (Some(rule), Some(ty)) => {
                let (s, n) = self.types.lanes(ty)?;
                self.counted(rule, lane_type(s, false)?, n as u64);
                self.tally.silent = true;
            }
            _ => self.count(inst, self.result_lane_type(inst), 1),
        }
        self.calls.inline_depth += 1;
        if self.calls.inline_depth > 16 {
            return Err(TranslateError::unsupported(
                "calls nested more than 16 deep",
                "flatten the call chain",
            ));
        }
        let body = &func.blocks[0].instructions;
        let body_start = self.out.code.len();
        for callee_inst in body {
            self.sites.lines.follow(callee_inst);
            self.site(format!(
                "{}{} in `{callee_name}`",
                spirv_name(callee_inst.class.opname),
                callee_inst
                    .result_id
                    .map(|r| format!(" %{r}"))
                    .unwrap_or_default()
            ));
            self.tally.role = roles::of_instruction(callee_inst, &self.roles);
            match callee_inst.class.opcode {
                S::Return => self.count(callee_inst, self.result_lane_type(callee_inst), 1),
                S::ReturnValue => {
                    let v = self.val(id(callee_inst, 0)?)?;
                    let n = self.types.slots(v.ty)?;
                    if let Some(r) = inst.result_id {
                        let dst = self.val(r)?.slot;
                        // The body's last op computed the value: let it write
                        // the call's result directly (nothing in the body can
                        // read the value after its only definition).
                        let last = self
                            .out
                            .code
                            .len()
                            .checked_sub(1)
                            .filter(|l| *l >= body_start);
                        let retargeted = last.is_some_and(|l| {
                            clflow_bytecode::retarget(&mut self.out.code[l], v.slot, dst)
                        });
                        if !retargeted {
                            self.emit(Op::Mov { dst, src: v.slot, n });
                        }
                    }
                    self.count(callee_inst, self.result_lane_type(callee_inst), 1);
                }
                _ => self.instruction(callee_inst)?,
            }
        }
        if funnel.is_some() {
            self.fuse_rotate(body_start);
        }
        self.calls.inline_depth -= 1;
        self.tally.silent = was_silent;
        self.sites.current_site = call_site;
        self.sites.lines.current = call_loc;
        self.regs.overrides = saved;
        Ok(())
    }
}

/// Whether the device's compiler keeps calls to `func` as calls: the
/// module marks it `DontInline` (OpenCL C's `noinline`).
fn kept_call(func: &Function) -> bool {
    func.def
        .as_ref()
        .and_then(|def| def.operands.first())
        .is_some_and(|operand| {
            matches!(operand, rspirv::dr::Operand::FunctionControl(control)
                if control.contains(spirv::FunctionControl::DONT_INLINE))
        })
}
