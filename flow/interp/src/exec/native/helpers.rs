//! What compiled code calls back into: the ops it leaves to the
//! interpreter's own functions (one lane's value at a time, so that both
//! tiers compute with the same code), and the faults it reports.

use super::{Env, Slot};
use crate::error::TrapKind;
use crate::exec::builtins::builtin;
use crate::exec::mem::Mem;
use crate::memory::Arena;
use crate::opencl_std as math;
use crate::trace::{LineTouch, CHUNK_ACCESSES};
use clflow_bytecode::Op;

/// `eval(env, pc, lane, a, b, c)`: lane `lane` of the op at `pc` on its
/// operands' values in that lane; a fault (an integer division by zero)
/// is kept in `env` and 0 returned.
pub(super) type Eval = extern "C" fn(*mut Env, u32, u32, u64, u64, u64) -> u64;

/// `fault(env, pc, pointer, bytes, align)`: the access at `pc` failed the
/// compiled check: keep why (a step limit where `bytes` is 0).
pub(super) type Fault = extern "C" fn(*mut Env, u32, u64, u64, u64);

pub(super) extern "C" fn eval(env: *mut Env, pc: u32, lane: u32, a: u64, b: u64, c: u64) -> u64 {
    // SAFETY: compiled code passes the `Env` its caller handed it, which
    // lives, unaliased, for the whole call (`Native::run_item`).
    let env = unsafe { &mut *env };
    let i = lane as usize;
    let value = match env.launch.program.code[pc as usize] {
        Op::Int { op, bits, .. } => math::int_bin(op, bits, a, b),
        Op::IntUn { op, bits, .. } => Ok(math::int_un(op, bits, a)),
        Op::IntTer { op, bits, .. } => Ok(math::int_ter(op, bits, a, b, c)),
        Op::Float { op, bits, .. } => Ok(math::float_bin(op, bits, a, b)),
        Op::FloatUn { op, bits, .. } => Ok(math::float_un(op, bits, a)),
        Op::FloatTer { op, bits, .. } => Ok(math::float_ter(op, bits, a, b, c)),
        Op::FCmp { op, ordered, bits, .. } => Ok(math::fcmp(op, ordered, bits, a, b) as u64),
        Op::FTest { op, bits, .. } => Ok(math::ftest(op, bits, a) as u64),
        Op::Convert { kind, from, to, .. } => Ok(math::convert(kind, from, to, a)),
        Op::Builtin { which, bits, .. } => {
            let g = &env.launch.geometry;
            Ok(builtin(g, which, env.group, env.local_id)[i] & math::mask(bits))
        }
        ref op => {
            unreachable!("the compiled tier calls eval only for ops it leaves to it, not {op:?}")
        }
    };
    value.unwrap_or_else(|kind| {
        env.keep(pc, kind);
        0
    })
}

pub(super) extern "C" fn fault(env: *mut Env, pc: u32, pointer: u64, bytes: u64, align: u64) {
    // SAFETY: as in `eval`.
    let env = unsafe { &mut *env };
    let launch = env.launch;
    if bytes == 0 {
        env.keep(pc, TrapKind::StepLimit(launch.max_steps));
        return;
    }
    // The interpreter's own check says what is wrong with the access.
    let (mut local, mut traffic) = (Arena { bytes: Vec::new() }, Default::default());
    let mem = Mem {
        global: launch.global,
        local: &mut local,
        local_layout: &launch.local_layout,
        private_layout: &launch.program.private,
        traffic: &mut traffic,
        line_traffic: &mut [],
        line: 0,
        trace: None,
        undefined: None,
    };
    let kind = match mem.resolve(pointer, bytes, align) {
        Err(kind) => kind,
        // Compiled code takes every global access that is in bounds and
        // aligned, and runs kernels with no local or private memory: no
        // access that fails its check is valid.
        Ok(_) => TrapKind::BadPointer { value: pointer },
    };
    env.keep(pc, kind);
}

/// `new_touch(env, slot, key, site, kind)`: a touch of the line `key`
/// names that does not hold its `slot` in the group's table of recent
/// lines: written after the group's touches so far, and given the slot.
pub(super) type NewTouch = extern "C" fn(*mut Env, *mut Slot, u64, u32, u32);

pub(super) extern "C" fn new_touch(env: *mut Env, slot: *mut Slot, key: u64, site: u32, kind: u32) {
    // SAFETY: as in `eval`.
    let env = unsafe { &mut *env };
    if env.touches.next == env.touches.end {
        more_room(env);
    }
    let touch = env.touches.next;
    // SAFETY: `room` gave `next` up to `end` inside the list's spare
    // capacity, and `next` is short of `end`; `slot` is one of the group's
    // table, which compiled code found by `LineTouch::slot` and which
    // `more_room` may empty but never moves.
    unsafe {
        touch.write(LineTouch { key, site, kind });
        env.touches.next = touch.add(1);
        *slot = Slot { key, touch };
    }
}

/// The room for line touches is full: where the list holds a chunk, it is
/// handed over (and the table emptied), and there is room again.
fn more_room(env: &mut Env) {
    env.keep_touches();
    // SAFETY: compiled code calls `new_touch` only where the group is
    // traced, with `recorder` the one `Native::run_group` was handed.
    let recorder = unsafe { &mut *env.recorder };
    if recorder.lines.len() >= CHUNK_ACCESSES {
        recorder.hand_over(false);
        // The touches handed over take no more folds: the next touch of
        // each line is a new one.
        env.table().fill(super::NO_SLOT);
    }
    env.room();
}
