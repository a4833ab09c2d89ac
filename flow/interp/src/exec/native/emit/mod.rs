//! Bytecode to Cranelift IR: one function that runs one work-item.
//!
//! Each register is a variable (Cranelift builds the SSA form and its phis),
//! set at entry to its value in the launch's register file (constants and
//! arguments, so they fold into the code). Each op computes what its
//! interpreted form does, on the same 64-bit values (integers zero-extended
//! from their width, floats as bits); ops with involved semantics call the
//! interpreter's own functions (`helpers::eval`). Calls are inlined: a
//! callee's code is translated once per call site, in a *context* that
//! knows where its `Ret` goes. Kernels cannot recurse, so this ends.
//!
//! This module holds the function's frame and its control flow (blocks,
//! branches, calls, barriers); `ops` translates the other ops, `access`
//! the memory accesses.

mod access;
mod ops;

pub(in crate::exec::native) use ops::rmw;

use super::helpers;
use super::live::Live;
use super::provenance;
use crate::exec::Launched;
use crate::memory::BufferView;
use crate::opencl_std as math;
use clflow_bytecode::program::Program;
use clflow_bytecode::{Op, Reg};
use cranelift_codegen::ir::types::{F32, I32, I64};
use cranelift_codegen::ir::{
    AbiParam, Block, Function, InstBuilder, MemFlags, SigRef, Signature, Type, Value,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Switch, Variable};
use std::collections::HashMap;

/// Builds into `func` the function that runs one work-item of `launch`
/// to its end or its next barrier (see `KernelFn`), and returns the pc of
/// each barrier it may stop at; `views` are its global buffers, `arenas` its local
/// and private memory.
pub(super) fn kernel(
    func: &mut Function,
    (pointer, call_conv): (Type, CallConv),
    launch: &Launched<'_>,
    views: &[BufferView],
    arenas: [ArenaView; 2],
    lines_field: i32,
) -> Result<Vec<u32>, String> {
    let mut signature = Signature::new(call_conv);
    signature.params.extend([AbiParam::new(pointer); 4]);
    signature.params.push(AbiParam::new(I64));
    signature.returns.push(AbiParam::new(I64));
    func.signature = signature;
    let mut context = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(func, &mut context);
    let eval_sig = b.import_signature(helper_signature(call_conv, pointer, 6, true));
    let fault_sig = b.import_signature(helper_signature(call_conv, pointer, 5, false));
    let mut touch_sig = Signature::new(call_conv);
    touch_sig
        .params
        .extend([pointer, pointer, I64, I32, I32].map(AbiParam::new));
    let touch_sig = b.import_signature(touch_sig);

    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let vars: Vec<Variable> = launch.regs.iter().map(|_| b.declare_var(I64)).collect();
    for (var, value) in vars.iter().zip(&launch.regs) {
        let v = b.ins().iconst(I64, *value as i64);
        b.def_var(*var, v);
    }
    let steps = b.declare_var(I64);
    let zero = b.ins().iconst(I64, 0);
    b.def_var(steps, zero);
    // Bytes accessed since the call began, added to `Env`'s at each way
    // out: a counter in memory made every access wait for the last's store.
    let accessed = b.declare_var(I64);
    b.def_var(accessed, zero);
    let fail = b.create_block();

    let program = launch.program;
    let mut targets = vec![false; program.code.len() + 1];
    targets[program.entry as usize] = true;
    for (pc, op) in program.code.iter().enumerate() {
        for t in program.targets(op) {
            targets[t as usize] = true;
        }
        if let Op::Call { .. } = op {
            targets[pc + 1] = true;
        }
    }
    let mut e = Emitter {
        b,
        program,
        max_steps: launch.max_steps,
        vars,
        steps,
        accessed,
        env: params[0],
        ids: params[1],
        hits: params[2],
        state: params[3],
        pointer,
        views: views.as_ptr() as i64,
        nviews: views.len() as u64,
        line_shift: views.first().map_or(6, |v| v.line_shift),
        local: arenas[0],
        private: arenas[1],
        lines_field,
        known: provenance::global_buffers(program, &launch.regs),
        known_views: views.iter().map(|v| (v.base as u64, v.len)).collect(),
        eval_sig,
        fault_sig,
        touch_sig,
        touch_shift: launch.touch_shift,
        fail,
        targets,
        blocks: HashMap::new(),
        work: Vec::new(),
        contexts: vec![Context { parent: u32::MAX, ret_pc: 0, ret: Reg::UNUSED, ret_n: 0 }],
        context_of: HashMap::new(),
        barriers: Vec::new(),
        written: vec![false; launch.regs.len()],
    };
    // `resume` 0 starts the work-item; k + 1 goes on after barrier k.
    let (start, resume) = (e.block(0, program.entry), e.b.create_block());
    e.b.ins().brif(params[4], resume, &[], start, &[]);
    // Translate what the start reaches; then what each barrier met goes
    // on to, which may meet more.
    let mut entries = Vec::new();
    loop {
        while let Some((ctx, pc)) = e.work.pop() {
            let block = e.blocks[&(ctx, pc)];
            e.b.switch_to_block(block);
            e.translate(ctx, pc)?;
        }
        if entries.len() == e.barriers.len() {
            break;
        }
        for k in entries.len()..e.barriers.len() {
            let (ctx, pc) = e.barriers[k].0;
            entries.push((e.b.create_block(), e.block(ctx, pc + 1)));
        }
    }
    let live = (!entries.is_empty()).then(|| Live::of(program, launch.regs.len()));
    for (k, &(stop, go_on)) in entries.iter().enumerate() {
        let ((_, pc), save) = e.barriers[k];
        let kept = e.kept(|r| live.as_ref().is_some_and(|l| l.at(pc as usize + 1, r)));
        e.b.switch_to_block(save);
        for &(var, at) in &kept {
            let v = e.b.use_var(var);
            e.b.ins().store(MemFlags::trusted(), v, e.state, at);
        }
        e.keep_accessed();
        let stopped = e.b.ins().iconst(I64, k as i64 + 2);
        e.b.ins().return_(&[stopped]);
        e.b.switch_to_block(stop);
        for &(var, at) in &kept {
            let v = e.b.ins().load(I64, MemFlags::trusted(), e.state, at);
            e.b.def_var(var, v);
        }
        e.b.ins().jump(go_on, &[]);
    }
    let mut switch = Switch::new();
    for (k, (block, _)) in entries.into_iter().enumerate() {
        switch.set_entry(k as u128 + 1, block);
    }
    e.b.switch_to_block(resume);
    switch.emit(&mut e.b, params[4], fail);
    e.b.switch_to_block(fail);
    e.keep_accessed();
    let one = e.b.ins().iconst(I64, 1);
    e.b.ins().return_(&[one]);
    e.b.seal_all_blocks();
    let barriers = e.barriers.iter().map(|b| b.0 .1).collect();
    e.b.finalize();
    Ok(barriers)
}

fn helper_signature(call_conv: CallConv, pointer: Type, params: usize, returns: bool) -> Signature {
    let mut s = Signature::new(call_conv);
    s.params.push(AbiParam::new(pointer));
    s.params.push(AbiParam::new(I32));
    s.params.extend((2..params).map(|_| AbiParam::new(I64)));
    if params == 6 {
        // eval's lane index is a u32 too.
        s.params[2] = AbiParam::new(I32);
    }
    if returns {
        s.returns.push(AbiParam::new(I64));
    }
    s
}

/// A local or private arena as compiled code finds it.
#[derive(Clone, Copy)]
pub(super) struct ArenaView {
    /// Its buffers.
    pub buffers: u64,
    /// The address of its layout: (base, size) of each buffer, as `u64`s.
    pub layout: i64,
    /// Where `Env` holds the arena's address.
    pub env_field: i32,
}

/// Where a function's code runs: the call it was inlined at.
struct Context {
    /// The caller's context (`u32::MAX` for the kernel's own code).
    parent: u32,
    ret_pc: u32,
    ret: Reg,
    ret_n: u32,
}

struct Emitter<'a, 'f> {
    b: FunctionBuilder<'f>,
    program: &'a Program,
    max_steps: u64,
    vars: Vec<Variable>,
    steps: Variable,
    /// Bytes the traced work-item accessed since the call began.
    accessed: Variable,
    env: Value,
    ids: Value,
    hits: Value,
    pointer: Type,
    views: i64,
    nviews: u64,
    line_shift: u64,
    local: ArenaView,
    private: ArenaView,
    /// Where `Env` holds the thread's line sets.
    lines_field: i32,
    /// For each register, the global buffer all its values point into,
    /// where one is known (`provenance`); and each buffer's (address,
    /// length).
    known: Vec<Option<u32>>,
    known_views: Vec<(u64, u64)>,
    eval_sig: SigRef,
    fault_sig: SigRef,
    touch_sig: SigRef,
    /// Where the run is traced: global accesses are handed over as line
    /// touches, of lines of `1 << touch_shift` bytes (`access`).
    touch_shift: Option<u32>,
    /// Returns 1: a fault was kept.
    fail: Block,
    /// The pcs control goes to other than by falling through.
    targets: Vec<bool>,
    blocks: HashMap<(u32, u32), Block>,
    work: Vec<(u32, u32)>,
    contexts: Vec<Context>,
    context_of: HashMap<(u32, u32), u32>,
    /// Where the work-item keeps its registers and steps while it waits at
    /// a barrier (one `u64` each, the steps last).
    state: Value,
    /// The barriers met, by (context, pc), and the block that keeps the
    /// work-item's registers there: a work-item stops at barrier k
    /// returning k + 2, and goes on after it called with `resume` k + 1.
    barriers: Vec<((u32, u32), Block)>,
    /// The registers some op writes.
    written: Vec<bool>,
}

impl Emitter<'_, '_> {
    /// The block that runs `pc` in context `ctx`, queued to be translated.
    fn block(&mut self, ctx: u32, pc: u32) -> Block {
        if let Some(b) = self.blocks.get(&(ctx, pc)) {
            return *b;
        }
        let block = self.b.create_block();
        self.blocks.insert((ctx, pc), block);
        self.work.push((ctx, pc));
        block
    }

    fn get(&mut self, r: Reg) -> Value {
        self.b.use_var(self.vars[r.index()])
    }

    fn set(&mut self, r: Reg, v: Value) {
        self.written[r.index()] = true;
        self.b.def_var(self.vars[r.index()], v);
    }

    fn get32(&mut self, r: Reg) -> Value {
        let v = self.get(r);
        self.b.ins().ireduce(I32, v)
    }

    /// A 32-bit result, kept zero-extended as the interpreter keeps it.
    fn set32(&mut self, r: Reg, v: Value) {
        let wide = self.b.ins().uextend(I64, v);
        self.set(r, wide);
    }

    fn set_bool(&mut self, r: Reg, v: Value) {
        let wide = self.b.ins().uextend(I64, v);
        self.set(r, wide);
    }

    /// Copies `n` registers from `src` to `dst`, as a memmove would.
    fn copy(&mut self, dst: Reg, src: Reg, n: u32) {
        let values: Vec<Value> = (0..n).map(|i| self.get(src + i)).collect();
        for (i, v) in values.into_iter().enumerate() {
            self.set(dst + i as u32, v);
        }
    }

    fn int32(
        &mut self,
        dst: Reg,
        a: Reg,
        b: Reg,
        f: impl Fn(&mut FunctionBuilder, Value, Value) -> Value,
    ) {
        let (x, y) = (self.get32(a), self.get32(b));
        let v = f(&mut self.b, x, y);
        self.set32(dst, v);
    }

    fn float32(
        &mut self,
        dst: Reg,
        a: Reg,
        b: Reg,
        f: impl Fn(&mut FunctionBuilder, Value, Value) -> Value,
    ) {
        self.int32(dst, a, b, |b, x, y| {
            let flags = MemFlags::new();
            let x = b.ins().bitcast(F32, flags, x);
            let y = b.ins().bitcast(F32, flags, y);
            let v = f(b, x, y);
            b.ins().bitcast(I32, flags, v)
        });
    }

    /// Goes on in a new block when `bad` is false; when true, calls
    /// `fault` with `args` (after `env` and `pc`) and fails.
    fn check(&mut self, bad: Value, pc: usize, args: [Value; 3]) {
        let (cold, ok) = (self.b.create_block(), self.b.create_block());
        self.b.set_cold_block(cold);
        self.b.ins().brif(bad, cold, &[], ok, &[]);
        self.b.switch_to_block(cold);
        self.report_fault(pc, args);
        self.b.switch_to_block(ok);
    }

    /// Ends the current block: calls `fault` with `args` (after `env` and
    /// `pc`) and fails.
    fn report_fault(&mut self, pc: usize, args: [Value; 3]) {
        let pc = self.b.ins().iconst(I32, pc as i64);
        let callee = self.b.ins().iconst(
            self.pointer,
            helpers::fault as helpers::Fault as usize as i64,
        );
        let env = self.env;
        self.b.ins().call_indirect(
            self.fault_sig,
            callee,
            &[env, pc, args[0], args[1], args[2]],
        );
        self.b.ins().jump(self.fail, &[]);
    }

    /// Lane `lane` of the op at `pc`, by `helpers::eval`.
    fn eval(&mut self, pc: usize, lane: u32, operands: [Option<Reg>; 3], fallible: bool) -> Value {
        let mut args = vec![self.env];
        args.push(self.b.ins().iconst(I32, pc as i64));
        args.push(self.b.ins().iconst(I32, lane as i64));
        for r in operands {
            let v = match r {
                Some(r) => self.get(r + lane),
                None => self.b.ins().iconst(I64, 0),
            };
            args.push(v);
        }
        let callee = self
            .b
            .ins()
            .iconst(self.pointer, helpers::eval as helpers::Eval as usize as i64);
        let call = self.b.ins().call_indirect(self.eval_sig, callee, &args);
        let value = self.b.inst_results(call)[0];
        if fallible {
            let faulted = self.b.ins().load(I64, MemFlags::trusted(), self.env, 0);
            let (ok, env) = (self.b.create_block(), self.b.create_block());
            self.b.set_cold_block(env);
            self.b.ins().brif(faulted, env, &[], ok, &[]);
            self.b.switch_to_block(env);
            self.b.ins().jump(self.fail, &[]);
            self.b.switch_to_block(ok);
        }
        value
    }

    /// Translates from `pc` in context `ctx` to the end of its block.
    fn translate(&mut self, ctx: u32, start: u32) -> Result<(), String> {
        let mut pc = start as usize;
        loop {
            if pc != start as usize && self.targets[pc] {
                let next = self.block(ctx, pc as u32);
                self.b.ins().jump(next, &[]);
                return Ok(());
            }
            let Some(&op) = self.program.code.get(pc) else {
                return Err(format!("control runs past the end of the code at {pc}"));
            };
            match op {
                Op::Jump { target } => {
                    let t = self.block(ctx, target);
                    self.b.ins().jump(t, &[]);
                    return Ok(());
                }
                Op::Branch { cond, then, other } => {
                    let c = self.get(cond);
                    let (t, o) = (self.block(ctx, then), self.block(ctx, other));
                    self.b.ins().brif(c, t, &[], o, &[]);
                    return Ok(());
                }
                Op::Switch { sel, bits, cases_start, cases_len, default } => {
                    let v = self.get(sel);
                    let v = self.b.ins().band_imm(v, math::mask(bits) as i64);
                    let mut switch = Switch::new();
                    let cases = &self.program.cases
                        [cases_start as usize..(cases_start + cases_len) as usize];
                    for &(value, target) in cases {
                        // The interpreter takes a value's first case.
                        if !switch.entries().contains_key(&(value as u128)) {
                            let t = self.block(ctx, target);
                            switch.set_entry(value as u128, t);
                        }
                    }
                    let d = self.block(ctx, default);
                    switch.emit(&mut self.b, v, d);
                    return Ok(());
                }
                Op::Call { target, moves_start, moves_len, ret, ret_n } => {
                    self.moves(moves_start, moves_len);
                    let callee = match self.context_of.get(&(ctx, pc as u32)) {
                        Some(&callee) => callee,
                        None => {
                            self.contexts.push(Context {
                                parent: ctx,
                                ret_pc: pc as u32 + 1,
                                ret,
                                ret_n,
                            });
                            let callee = self.contexts.len() as u32 - 1;
                            self.context_of.insert((ctx, pc as u32), callee);
                            callee
                        }
                    };
                    let t = self.block(callee, target);
                    self.b.ins().jump(t, &[]);
                    return Ok(());
                }
                Op::Barrier { .. } => {
                    let at = (ctx, pc as u32);
                    let stop = match self.barriers.iter().find(|b| b.0 == at) {
                        Some(b) => b.1,
                        None => {
                            let stop = self.b.create_block();
                            self.barriers.push((at, stop));
                            stop
                        }
                    };
                    // Filled once every register written is known.
                    self.b.ins().jump(stop, &[]);
                    return Ok(());
                }
                Op::Ret { src, n } => {
                    let c = &self.contexts[ctx as usize];
                    let (parent, ret_pc, ret, n) = (c.parent, c.ret_pc, c.ret, n.min(c.ret_n));
                    if parent == u32::MAX {
                        self.keep_accessed();
                        let zero = self.b.ins().iconst(I64, 0);
                        self.b.ins().return_(&[zero]);
                        return Ok(());
                    }
                    self.copy(ret, src, n);
                    let t = self.block(parent, ret_pc);
                    self.b.ins().jump(t, &[]);
                    return Ok(());
                }
                _ => pc += self.op(pc, op),
            }
        }
    }

    /// The variables a work-item keeps across a barrier, and their places
    /// in its state: the registers some op writes that are `live` after
    /// it (the rest hold their constant from the entry on), and the steps
    /// last.
    fn kept(&self, live: impl Fn(usize) -> bool) -> Vec<(Variable, i32)> {
        let registers = self.vars.iter().zip(&self.written).enumerate();
        let kept = registers.filter(|(r, (_, w))| **w && live(*r));
        let kept = kept.map(|(r, (v, _))| (*v, 8 * r as i32));
        kept.chain([(self.steps, 8 * self.vars.len() as i32)])
            .collect()
    }

    fn moves(&mut self, start: u32, len: u32) {
        let program = self.program;
        for m in &program.moves[start as usize..(start + len) as usize] {
            self.copy(m.dst, m.src, m.n);
        }
    }
}
