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

use super::helpers;
use super::live::Live;
use super::provenance;
use crate::bytecode::{AtomicOp, Builtin, CmpOp, FloatTerOp, LogicOp, Op, Reg};
use crate::exec::Launched;
use crate::memory::{BufferView, SPACE_GLOBAL, SPACE_LOCAL, SPACE_PRIVATE};
use crate::opencl_std as math;
use crate::program::Program;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{F32, F64, I32, I64};
use cranelift_codegen::ir::{
    AbiParam, AtomicRmwOp, Block, BlockArg, Function, InstBuilder, MemFlags, SigRef, Signature,
    Type, Value,
};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Switch, Variable};
use std::collections::HashMap;

/// Whether the compiled tier runs `op`.
pub(super) fn compiles(op: &Op) -> bool {
    match op {
        Op::Load { size, .. } | Op::Store { size, .. } => matches!(size, 1 | 2 | 4 | 8),
        // 32-bit read-modify-writes whose old value nobody reads (see
        // `ineligible`): memory ends the same in whatever order work-items
        // make them. (64-bit ones take a lock in the interpreter, which a
        // launch switching tiers would race against.)
        Op::Atomic { op, bits: 32, .. } => rmw(*op).is_some(),
        Op::Block { .. }
        | Op::Mov { .. }
        | Op::Moves { .. }
        | Op::Splat { .. }
        | Op::Add32 { .. }
        | Op::Sub32 { .. }
        | Op::Mul32 { .. }
        | Op::Shl32 { .. }
        | Op::LShr32 { .. }
        | Op::Rotl32 { .. }
        | Op::And { .. }
        | Op::Or { .. }
        | Op::Xor { .. }
        | Op::FAdd32 { .. }
        | Op::FSub32 { .. }
        | Op::FMul32 { .. }
        | Op::ZExt32 { .. }
        | Op::SExt32 { .. }
        | Op::Trunc32 { .. }
        | Op::SubXorRotl32 { .. }
        | Op::XorSubRotl32 { .. }
        | Op::Offset { .. }
        | Op::Index { .. }
        | Op::Ptr { .. }
        | Op::Cmp { .. }
        | Op::Select { .. }
        | Op::Logic { .. }
        | Op::LNot { .. }
        | Op::Int { .. }
        | Op::IntUn { .. }
        | Op::IntTer { .. }
        | Op::Float { .. }
        | Op::FloatUn { .. }
        | Op::FloatTer { .. }
        | Op::FCmp { .. }
        | Op::FTest { .. }
        | Op::Convert { .. }
        | Op::Builtin { .. }
        | Op::Jump { .. }
        | Op::Branch { .. }
        | Op::Switch { .. }
        | Op::Call { .. }
        | Op::Ret { .. }
        | Op::Barrier => true,
        _ => false,
    }
}

/// Builds into `func` the function that runs one work-item of `launch`
/// to its end or its next barrier (see `KernelFn`), and returns the pc of
/// each barrier it may stop at; `views` are its global buffers, `arenas` its local
/// and private memory.
pub(super) fn kernel(
    func: &mut Function,
    (pointer, call_conv): (Type, CallConv),
    launch: &Launched<'_>,
    views: &[BufferView],
    arenas: [Arena; 2],
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
    let fail = b.create_block();

    let program = launch.program;
    let mut targets = vec![false; program.code.len() + 1];
    targets[program.entry as usize] = true;
    for (pc, op) in program.code.iter().enumerate() {
        for t in jumps(program, op) {
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
        fail,
        targets,
        blocks: HashMap::new(),
        work: Vec::new(),
        contexts: vec![Context {
            parent: u32::MAX,
            ret_pc: 0,
            ret: Reg::UNUSED,
            ret_n: 0,
        }],
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

/// The pcs `op` sends control to other than the next one.
pub(super) fn jumps(program: &Program, op: &Op) -> Vec<u32> {
    match *op {
        Op::Jump { target } | Op::Call { target, .. } => vec![target],
        Op::Branch { then, other, .. } => vec![then, other],
        Op::Switch {
            cases_start,
            cases_len,
            default,
            ..
        } => {
            let cases = &program.cases[cases_start as usize..(cases_start + cases_len) as usize];
            cases.iter().map(|c| c.1).chain([default]).collect()
        }
        _ => Vec::new(),
    }
}

/// A local or private arena as compiled code finds it.
#[derive(Clone, Copy)]
pub(super) struct Arena {
    /// Its buffers.
    pub buffers: u64,
    /// The address of its layout: (base, size) of each buffer, as `u64`s.
    pub layout: i64,
    /// Where `Env` holds the arena's address.
    pub env_field: i32,
}

/// The lines an access touches: read, written, or both (an atomic).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Touch {
    Read,
    Write,
    Both,
}

/// An access being compiled: its pointer taken apart, and where it goes.
struct Access {
    buffer: Value,
    offset: Value,
    bytes: i64,
    align: u16,
    /// Calls `fault` and fails.
    fault: Block,
    /// Takes the address of the data.
    done: Block,
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
    env: Value,
    ids: Value,
    hits: Value,
    pointer: Type,
    views: i64,
    nviews: u64,
    line_shift: u64,
    local: Arena,
    private: Arena,
    /// Where `Env` holds the thread's line sets.
    lines_field: i32,
    /// For each register, the global buffer all its values point into,
    /// where one is known (`provenance`); and each buffer's (address,
    /// length).
    known: Vec<Option<u32>>,
    known_views: Vec<(u64, u64)>,
    eval_sig: SigRef,
    fault_sig: SigRef,
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

/// Loads of what does not change while the kernel runs (views, layouts,
/// the arenas' addresses): the code generator may move and merge them.
const FIXED: MemFlags = MemFlags::trusted().with_readonly().with_can_move();

/// `BufferView`'s fields, by offset.
const VIEW_BYTES: i64 = std::mem::size_of::<BufferView>() as i64;
const VIEW_BASE: i32 = std::mem::offset_of!(BufferView, base) as i32;
const VIEW_LEN: i32 = std::mem::offset_of!(BufferView, len) as i32;

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
        let (x, y) = (self.get32(a), self.get32(b));
        let flags = MemFlags::new();
        let x = self.b.ins().bitcast(F32, flags, x);
        let y = self.b.ins().bitcast(F32, flags, y);
        let v = f(&mut self.b, x, y);
        let v = self.b.ins().bitcast(I32, flags, v);
        self.set32(dst, v);
    }

    /// Goes on in a new block when `bad` is false; when true, calls
    /// `fault` with `args` (after `env` and `pc`) and fails.
    fn check(&mut self, bad: Value, pc: usize, args: [Value; 3]) {
        let (cold, ok) = (self.b.create_block(), self.b.create_block());
        self.b.set_cold_block(cold);
        self.b.ins().brif(bad, cold, &[], ok, &[]);
        self.b.switch_to_block(cold);
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
        self.b.switch_to_block(ok);
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
                Op::Switch {
                    sel,
                    bits,
                    cases_start,
                    cases_len,
                    default,
                } => {
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
                Op::Call {
                    target,
                    moves_start,
                    moves_len,
                    ret,
                    ret_n,
                } => {
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
                Op::Barrier => {
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

    /// Translates one op that is not control flow; returns the places it
    /// takes (a superinstruction stands for three).
    fn op(&mut self, pc: usize, op: Op) -> usize {
        match op {
            Op::Block { block, steps } => self.block_op(pc, block, steps),
            Op::Mov { dst, src, n } => self.copy(dst, src, n),
            Op::Moves { start, len } => self.moves(start, len),
            Op::Splat { dst, src, n } => {
                let v = self.get(src);
                for i in 0..n as u32 {
                    self.set(dst + i, v);
                }
            }
            Op::Add32 { dst, a, b } => self.int32(dst, a, b, |b, x, y| b.ins().iadd(x, y)),
            Op::Sub32 { dst, a, b } => self.int32(dst, a, b, |b, x, y| b.ins().isub(x, y)),
            Op::Mul32 { dst, a, b } => self.int32(dst, a, b, |b, x, y| b.ins().imul(x, y)),
            // 32-bit shifts and rotates take their amount modulo 32, as the
            // interpreter's do.
            Op::Shl32 { dst, a, b } => self.int32(dst, a, b, |b, x, y| b.ins().ishl(x, y)),
            Op::LShr32 { dst, a, b } => self.int32(dst, a, b, |b, x, y| b.ins().ushr(x, y)),
            Op::Rotl32 { dst, a, b } => self.int32(dst, a, b, |b, x, y| b.ins().rotl(x, y)),
            Op::And { dst, a, b } => {
                let (x, y) = (self.get(a), self.get(b));
                let v = self.b.ins().band(x, y);
                self.set(dst, v);
            }
            Op::Or { dst, a, b } => {
                let (x, y) = (self.get(a), self.get(b));
                let v = self.b.ins().bor(x, y);
                self.set(dst, v);
            }
            Op::Xor { dst, a, b } => {
                let (x, y) = (self.get(a), self.get(b));
                let v = self.b.ins().bxor(x, y);
                self.set(dst, v);
            }
            Op::FAdd32 { dst, a, b } => self.float32(dst, a, b, |b, x, y| b.ins().fadd(x, y)),
            Op::FSub32 { dst, a, b } => self.float32(dst, a, b, |b, x, y| b.ins().fsub(x, y)),
            Op::FMul32 { dst, a, b } => self.float32(dst, a, b, |b, x, y| b.ins().fmul(x, y)),
            Op::ZExt32 { dst, src } | Op::Trunc32 { dst, src } => {
                let v = self.get32(src);
                self.set32(dst, v);
            }
            Op::SExt32 { dst, src } => {
                let v = self.get32(src);
                let v = self.b.ins().sextend(I64, v);
                self.set(dst, v);
            }
            Op::SubXorRotl32 { dst, a, b, k } => {
                let (x, y, k) = (self.get32(a), self.get32(b), self.get32(k));
                let difference = self.b.ins().isub(x, y);
                let rotated = self.b.ins().rotl(y, k);
                let v = self.b.ins().bxor(difference, rotated);
                self.set32(dst, v);
                return 3;
            }
            Op::XorSubRotl32 { dst, a, b, k } => {
                let (x, y, k) = (self.get32(a), self.get32(b), self.get32(k));
                let mixed = self.b.ins().bxor(x, y);
                let rotated = self.b.ins().rotl(y, k);
                let v = self.b.ins().isub(mixed, rotated);
                self.set32(dst, v);
                return 3;
            }
            Op::Offset { dst, base, disp } => {
                let v = self.get(base);
                let v = self.b.ins().iadd_imm(v, disp);
                self.set(dst, v);
            }
            Op::Index {
                dst,
                base,
                index,
                bits,
                stride,
                disp,
            } => {
                let i = self.get(index);
                let i = self.sext(i, bits);
                let scaled = self.b.ins().imul_imm(i, stride as i64);
                let v = self.get(base);
                let v = self.b.ins().iadd_imm(v, disp as i64);
                let v = self.b.ins().iadd(v, scaled);
                self.set(dst, v);
            }
            Op::Ptr {
                dst,
                base,
                disp,
                terms_start,
                terms_len,
            } => {
                let program = self.program;
                let terms =
                    &program.terms[terms_start as usize..terms_start as usize + terms_len as usize];
                let v = self.get(base);
                let mut p = self.b.ins().iadd_imm(v, disp);
                for t in terms {
                    let i = self.get(t.reg);
                    let i = self.sext(i, t.bits);
                    let scaled = self.b.ins().imul_imm(i, t.stride);
                    p = self.b.ins().iadd(p, scaled);
                }
                self.set(dst, p);
            }
            Op::Cmp {
                op,
                bits,
                n,
                dst,
                a,
                b,
            } => {
                for i in 0..n as u32 {
                    let (x, y) = (self.get(a + i), self.get(b + i));
                    let signed = matches!(op, CmpOp::SLt | CmpOp::SLe | CmpOp::SGt | CmpOp::SGe);
                    let (x, y) = if signed {
                        (self.sext(x, bits), self.sext(y, bits))
                    } else {
                        (x, y)
                    };
                    let v = self.b.ins().icmp(int_cc(op), x, y);
                    self.set_bool(dst + i, v);
                }
            }
            Op::Select {
                n,
                vector_cond,
                dst,
                cond,
                a,
                b,
            } => {
                for i in 0..n as u32 {
                    let c = self.get(cond + if vector_cond { i } else { 0 });
                    let (x, y) = (self.get(a + i), self.get(b + i));
                    let v = self.b.ins().select(c, x, y);
                    self.set(dst + i, v);
                }
            }
            Op::Logic { op, n, dst, a, b } => {
                for i in 0..n as u32 {
                    let (x, y) = (self.get(a + i), self.get(b + i));
                    let x = self.b.ins().icmp_imm(IntCC::NotEqual, x, 0);
                    let y = self.b.ins().icmp_imm(IntCC::NotEqual, y, 0);
                    let v = match op {
                        LogicOp::And => self.b.ins().band(x, y),
                        LogicOp::Or => self.b.ins().bor(x, y),
                        LogicOp::Eq => self.b.ins().icmp(IntCC::Equal, x, y),
                        LogicOp::Ne => self.b.ins().icmp(IntCC::NotEqual, x, y),
                    };
                    self.set_bool(dst + i, v);
                }
            }
            Op::LNot { n, dst, a } => {
                for i in 0..n as u32 {
                    let x = self.get(a + i);
                    let v = self.b.ins().icmp_imm(IntCC::Equal, x, 0);
                    self.set_bool(dst + i, v);
                }
            }
            Op::Int { n, dst, a, b, .. } => self.lanes(pc, n, dst, [Some(a), Some(b), None], true),
            Op::IntUn { n, dst, a, .. }
            | Op::FloatUn { n, dst, a, .. }
            | Op::FTest { n, dst, a, .. } => self.lanes(pc, n, dst, [Some(a), None, None], false),
            Op::Convert { n, dst, src, .. } => {
                self.lanes(pc, n, dst, [Some(src), None, None], false)
            }
            // A fused multiply-add rounds once, here as in the interpreter
            // (`mul_add`) at both widths.
            Op::FloatTer {
                op: FloatTerOp::Fma,
                bits: bits @ (32 | 64),
                n,
                dst,
                a,
                b,
                c,
            } => {
                for i in 0..n as u32 {
                    let (ty, int) = if bits == 32 { (F32, I32) } else { (F64, I64) };
                    let flags = MemFlags::new();
                    let mut operand = |r: Reg| {
                        let v = self.get(r + i);
                        let v = if bits == 32 {
                            self.b.ins().ireduce(I32, v)
                        } else {
                            v
                        };
                        self.b.ins().bitcast(ty, flags, v)
                    };
                    let (x, y, z) = (operand(a), operand(b), operand(c));
                    let v = self.b.ins().fma(x, y, z);
                    let v = self.b.ins().bitcast(int, flags, v);
                    let v = if bits == 32 {
                        self.b.ins().uextend(I64, v)
                    } else {
                        v
                    };
                    self.set(dst + i, v);
                }
            }
            Op::IntTer {
                n, dst, a, b, c, ..
            }
            | Op::FloatTer {
                n, dst, a, b, c, ..
            } => self.lanes(pc, n, dst, [Some(a), Some(b), Some(c)], false),
            Op::Float { n, dst, a, b, .. } | Op::FCmp { n, dst, a, b, .. } => {
                self.lanes(pc, n, dst, [Some(a), Some(b), None], false)
            }
            Op::Builtin {
                which,
                dst,
                lanes,
                bits,
            } => {
                let at = match which {
                    Builtin::GlobalId => Some(0),
                    Builtin::LocalId => Some(3),
                    Builtin::GroupId => Some(6),
                    _ => None,
                };
                for i in 0..lanes.min(3) as u32 {
                    let v = match at {
                        Some(at) => {
                            let offset = 8 * (at + i as i32);
                            let v = self
                                .b
                                .ins()
                                .load(I64, MemFlags::trusted(), self.ids, offset);
                            self.b.ins().band_imm(v, math::mask(bits) as i64)
                        }
                        None => self.eval(pc, i, [None; 3], false),
                    };
                    self.set(dst + i, v);
                }
            }
            Op::Load {
                dst,
                ptr,
                size,
                n,
                align,
            } => {
                let address = self.access(pc, ptr, size, n, align, Touch::Read);
                for i in 0..n as u32 {
                    let at = i as i64 * size as i64;
                    let flags = MemFlags::trusted();
                    let at = at as i32;
                    let v = match size {
                        1 => self.b.ins().uload8(I64, flags, address, at),
                        2 => self.b.ins().uload16(I64, flags, address, at),
                        4 => self.b.ins().uload32(flags, address, at),
                        _ => self.b.ins().load(I64, flags, address, at),
                    };
                    self.set(dst + i, v);
                }
            }
            Op::Store {
                src,
                ptr,
                size,
                n,
                align,
            } => {
                let address = self.access(pc, ptr, size, n, align, Touch::Write);
                for i in 0..n as u32 {
                    let at = i as i64 * size as i64;
                    let v = self.get(src + i);
                    let flags = MemFlags::trusted();
                    let at = at as i32;
                    match size {
                        1 => self.b.ins().istore8(flags, v, address, at),
                        2 => self.b.ins().istore16(flags, v, address, at),
                        4 => self.b.ins().istore32(flags, v, address, at),
                        _ => self.b.ins().store(flags, v, address, at),
                    };
                }
            }
            Op::Atomic { op, ptr, a, .. } => {
                let Some((rmw, operand)) = rmw(op) else {
                    unreachable!("`compiles` admits only read-modify-writes")
                };
                let address = self.access(pc, ptr, 4, 1, 4, Touch::Both);
                let v = match operand {
                    Some(k) => self.b.ins().iconst(I32, k),
                    None => self.get32(a),
                };
                self.b
                    .ins()
                    .atomic_rmw(I32, MemFlags::trusted(), rmw, address, v);
            }
            other => unreachable!("`compiles` admits only the ops translated here, not {other:?}"),
        }
        1
    }

    /// `n` lanes of the op at `pc` by `helpers::eval`.
    fn lanes(&mut self, pc: usize, n: u8, dst: Reg, operands: [Option<Reg>; 3], fallible: bool) {
        for i in 0..n as u32 {
            let v = self.eval(pc, i, operands, fallible);
            self.set(dst + i, v);
        }
    }

    /// Counts a block's run and charges its steps against the limit.
    fn block_op(&mut self, pc: usize, block: u32, steps: u32) {
        let flags = MemFlags::trusted();
        let at = 8 * block as i32;
        let hits = self.b.ins().load(I64, flags, self.hits, at);
        let hits = self.b.ins().iadd_imm(hits, 1);
        self.b.ins().store(flags, hits, self.hits, at);
        let run = self.b.use_var(self.steps);
        let run = self.b.ins().iadd_imm(run, steps as i64);
        self.b.def_var(self.steps, run);
        let over = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedGreaterThan, run, self.max_steps as i64);
        let zero = self.b.ins().iconst(I64, 0);
        // A step limit is a fault of no bytes.
        self.check(over, pc, [zero, zero, zero]);
    }

    /// `bits`-wide `v` sign-extended to 64 bits.
    fn sext(&mut self, v: Value, bits: u8) -> Value {
        if bits >= 64 {
            return v;
        }
        let shift = 64 - bits as i64;
        let v = self.b.ins().ishl_imm(v, shift);
        self.b.ins().sshr_imm(v, shift)
    }

    /// Checks the access of `n` elements of `size` bytes at register `ptr`
    /// as the interpreter does (a buffer of its space, in bounds, aligned),
    /// marks the global lines it touches, and returns the address of its
    /// data.
    fn access(&mut self, pc: usize, ptr: Reg, size: u8, n: u8, align: u16, touch: Touch) -> Value {
        let bytes = size as i64 * n as i64;
        let p = self.get(ptr);
        let fault = self.b.create_block();
        self.b.set_cold_block(fault);
        let done = self.b.create_block();
        self.b.append_block_param(done, self.pointer);
        if let Some(buffer) = self.known.get(ptr.index()).copied().flatten() {
            self.known_access(p, buffer, (size, n, align, touch), done);
        }
        let space = self.b.ins().ushr_imm(p, 62);
        let buffer = self.b.ins().ushr_imm(p, 40);
        let buffer = self.b.ins().band_imm(buffer, (1 << 22) - 1);
        let offset = self.b.ins().ishl_imm(p, 24);
        let offset = self.b.ins().sshr_imm(offset, 24);
        let at = Access {
            buffer,
            offset,
            bytes,
            align,
            fault,
            done,
        };
        let mut next = self.b.create_block();
        let is = |e: &mut Self, s: u64| e.b.ins().icmp_imm(IntCC::Equal, space, s as i64);
        let global = is(self, SPACE_GLOBAL);
        let global_block = self.b.create_block();
        self.b.ins().brif(global, global_block, &[], next, &[]);
        self.b.switch_to_block(global_block);
        self.global_access(&at, size, n, touch);
        for (space_id, arena) in [(SPACE_LOCAL, self.local), (SPACE_PRIVATE, self.private)] {
            if arena.buffers == 0 {
                continue;
            }
            self.b.switch_to_block(next);
            next = self.b.create_block();
            let here = is(self, space_id);
            let block = self.b.create_block();
            self.b.ins().brif(here, block, &[], next, &[]);
            self.b.switch_to_block(block);
            self.arena_access(&at, arena);
        }
        self.b.switch_to_block(next);
        self.b.ins().jump(fault, &[]);

        self.b.switch_to_block(fault);
        let pc = self.b.ins().iconst(I32, pc as i64);
        let callee = self.b.ins().iconst(
            self.pointer,
            helpers::fault as helpers::Fault as usize as i64,
        );
        let (bytes, align) = (
            self.b.ins().iconst(I64, bytes),
            self.b.ins().iconst(I64, align as i64),
        );
        let env = self.env;
        self.b
            .ins()
            .call_indirect(self.fault_sig, callee, &[env, pc, p, bytes, align]);
        self.b.ins().jump(self.fail, &[]);
        self.b.switch_to_block(done);
        self.b.block_params(done)[0]
    }

    /// The access at pointer value `p` into global buffer `buffer`, where
    /// every value of its register points into that buffer
    /// (`provenance`): in bounds and aligned, its offset is `p` less the
    /// buffer's own pointer, which decoding would give too; it goes on to
    /// `done` with its address. Otherwise it leaves for the general way
    /// (the block it leaves the builder in), which says what is wrong.
    fn known_access(
        &mut self,
        p: Value,
        buffer: u32,
        (size, n, align, touch): (u8, u8, u16, Touch),
        done: Block,
    ) {
        let (address, len) = self.known_views[buffer as usize];
        let bytes = size as u64 * n as u64;
        let general = self.b.create_block();
        if len < bytes {
            self.b.ins().jump(general, &[]);
            self.b.switch_to_block(general);
            return;
        }
        let start = crate::memory::encode(SPACE_GLOBAL, buffer as usize, 0);
        let offset = self.b.ins().iadd_imm(p, (start as i64).wrapping_neg());
        let inside =
            self.b
                .ins()
                .icmp_imm(IntCC::UnsignedLessThanOrEqual, offset, (len - bytes) as i64);
        let misaligned = self.b.ins().band_imm(offset, align as i64 - 1);
        let aligned = self.b.ins().icmp_imm(IntCC::Equal, misaligned, 0);
        let ok = self.b.ins().band(inside, aligned);
        let pass = self.b.create_block();
        self.b.ins().brif(ok, pass, &[], general, &[]);
        self.b.switch_to_block(pass);
        let index = self.b.ins().iconst(I64, buffer as i64);
        for i in 0..n as i64 {
            for written in [false, true] {
                if touch == Touch::Both || (touch == Touch::Write) == written {
                    self.mark(index, written, offset, i * size as i64, size, align);
                }
            }
        }
        let address = self.b.ins().iadd_imm(offset, address as i64);
        self.b.ins().jump(done, &[BlockArg::Value(address)]);
        self.b.set_cold_block(general);
        self.b.switch_to_block(general);
    }

    /// Whether `at` lies inside `len` bytes and is aligned: an `I8`.
    fn fits(&mut self, at: &Access, len: Value) -> Value {
        // A negative offset reads as a huge one and fails the bound.
        let inside = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThanOrEqual, at.offset, len);
        let left = self.b.ins().isub(len, at.offset);
        let fits = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedGreaterThanOrEqual, left, at.bytes);
        let misaligned = self.b.ins().band_imm(at.offset, at.align as i64 - 1);
        let aligned = self.b.ins().icmp_imm(IntCC::Equal, misaligned, 0);
        let ok = self.b.ins().band(inside, fits);
        self.b.ins().band(ok, aligned)
    }

    /// `at` into a global buffer: checked against its view, its lines
    /// marked, on to `at.done` with its address.
    fn global_access(&mut self, at: &Access, size: u8, n: u8, touch: Touch) {
        if self.nviews == 0 {
            self.b.ins().jump(at.fault, &[]);
            return;
        }
        let known = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedLessThan, at.buffer, self.nviews as i64);
        let zero = self.b.ins().iconst(I64, 0);
        // Read buffer 0's view for a pointer into no buffer: the access
        // fails its check all the same.
        let index = self.b.ins().select(known, at.buffer, zero);
        let scaled = self.b.ins().imul_imm(index, VIEW_BYTES);
        let view = self.b.ins().iadd_imm(scaled, self.views);
        let len = self.b.ins().load(I64, FIXED, view, VIEW_LEN);
        let fits = self.fits(at, len);
        let ok = self.b.ins().band(fits, known);
        let pass = self.b.create_block();
        self.b.ins().brif(ok, pass, &[], at.fault, &[]);
        self.b.switch_to_block(pass);
        for i in 0..n as i64 {
            for written in [false, true] {
                if touch == Touch::Both || (touch == Touch::Write) == written {
                    let at_element = i * size as i64;
                    self.mark(at.buffer, written, at.offset, at_element, size, at.align);
                }
            }
        }
        let base = self.b.ins().load(self.pointer, FIXED, view, VIEW_BASE);
        let address = self.b.ins().iadd(base, at.offset);
        self.b.ins().jump(at.done, &[BlockArg::Value(address)]);
    }

    /// `at` into a local or private buffer: checked against the arena's
    /// layout, on to `at.done` with its address.
    fn arena_access(&mut self, at: &Access, arena: Arena) {
        let known = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedLessThan, at.buffer, arena.buffers as i64);
        let zero = self.b.ins().iconst(I64, 0);
        let index = self.b.ins().select(known, at.buffer, zero);
        // (base, size) of each buffer, 16 bytes a buffer.
        let scaled = self.b.ins().imul_imm(index, 16);
        let entry = self.b.ins().iadd_imm(scaled, arena.layout);
        let len = self.b.ins().load(I64, FIXED, entry, 8);
        let fits = self.fits(at, len);
        let ok = self.b.ins().band(fits, known);
        let pass = self.b.create_block();
        self.b.ins().brif(ok, pass, &[], at.fault, &[]);
        self.b.switch_to_block(pass);
        let base = self.b.ins().load(I64, FIXED, entry, 0);
        let memory = self
            .b
            .ins()
            .load(self.pointer, FIXED, self.env, arena.env_field);
        let address = self.b.ins().iadd(memory, base);
        let address = self.b.ins().iadd(address, at.offset);
        self.b.ins().jump(at.done, &[BlockArg::Value(address)]);
    }

    /// Marks the lines that `size` bytes at `offset + at` touch in the
    /// view's line set at `field` (read or written).
    fn mark(&mut self, buffer: Value, written: bool, offset: Value, at: i64, size: u8, align: u16) {
        // The thread's own line sets (`Env::lines`): two a buffer, read
        // then written.
        let table = self
            .b
            .ins()
            .load(self.pointer, FIXED, self.env, self.lines_field);
        let entry = self.b.ins().imul_imm(buffer, 16);
        let entry = self.b.ins().iadd(table, entry);
        let bits = self
            .b
            .ins()
            .load(self.pointer, FIXED, entry, if written { 8 } else { 0 });
        let first = self.b.ins().iadd_imm(offset, at);
        let first_line = self.b.ins().ushr_imm(first, self.line_shift as i64);
        self.mark_line(bits, first_line);
        // An element aligned to its size (a power of two) never straddles
        // two lines no smaller than it; others may.
        let aligned = align.is_multiple_of(size as u16) && (1u64 << self.line_shift) >= size as u64;
        if size > 1 && !aligned {
            let last = self.b.ins().iadd_imm(offset, at + size as i64 - 1);
            let last_line = self.b.ins().ushr_imm(last, self.line_shift as i64);
            self.mark_line(bits, last_line);
        }
    }

    /// Sets `line`'s bit in the line set at `bits`, which this thread
    /// alone writes.
    fn mark_line(&mut self, bits: Value, line: Value) {
        let flags = MemFlags::trusted();
        let word = self.b.ins().ushr_imm(line, 6);
        let word = self.b.ins().imul_imm(word, 8);
        let word = self.b.ins().iadd(bits, word);
        let one = self.b.ins().iconst(I64, 1);
        let bit = self.b.ins().ishl(one, line);
        let old = self.b.ins().load(I64, flags, word, 0);
        let new = self.b.ins().bor(old, bit);
        self.b.ins().store(flags, new, word, 0);
    }
}

/// The read-modify-write an atomic function makes, and the operand it
/// takes in place of its argument (`Inc` and `Dec` take none).
pub(super) fn rmw(op: AtomicOp) -> Option<(AtomicRmwOp, Option<i64>)> {
    Some(match op {
        AtomicOp::Inc => (AtomicRmwOp::Add, Some(1)),
        AtomicOp::Dec => (AtomicRmwOp::Sub, Some(1)),
        AtomicOp::Add => (AtomicRmwOp::Add, None),
        AtomicOp::Sub => (AtomicRmwOp::Sub, None),
        AtomicOp::SMin => (AtomicRmwOp::Smin, None),
        AtomicOp::UMin => (AtomicRmwOp::Umin, None),
        AtomicOp::SMax => (AtomicRmwOp::Smax, None),
        AtomicOp::UMax => (AtomicRmwOp::Umax, None),
        AtomicOp::And => (AtomicRmwOp::And, None),
        AtomicOp::Or => (AtomicRmwOp::Or, None),
        AtomicOp::Xor => (AtomicRmwOp::Xor, None),
        AtomicOp::Load | AtomicOp::Store | AtomicOp::Exchange | AtomicOp::CompareExchange => {
            return None
        }
    })
}

fn int_cc(op: CmpOp) -> IntCC {
    match op {
        CmpOp::Eq => IntCC::Equal,
        CmpOp::Ne => IntCC::NotEqual,
        CmpOp::ULt => IntCC::UnsignedLessThan,
        CmpOp::ULe => IntCC::UnsignedLessThanOrEqual,
        CmpOp::UGt => IntCC::UnsignedGreaterThan,
        CmpOp::UGe => IntCC::UnsignedGreaterThanOrEqual,
        CmpOp::SLt => IntCC::SignedLessThan,
        CmpOp::SLe => IntCC::SignedLessThanOrEqual,
        CmpOp::SGt => IntCC::SignedGreaterThan,
        CmpOp::SGe => IntCC::SignedGreaterThanOrEqual,
    }
}
