//! What compiled code calls back into: the ops it leaves to the
//! interpreter's own functions (one lane's value at a time, so that both
//! tiers compute with the same code), and the faults it reports.

use super::Env;
use crate::bytecode::Op;
use crate::error::TrapKind;
use crate::exec::builtins::builtin;
use crate::exec::mem::Mem;
use crate::memory::Arena;
use crate::opencl_std as math;
use crate::trace::CHUNK_ACCESSES;

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
        Op::FCmp {
            op, ordered, bits, ..
        } => Ok(math::fcmp(op, ordered, bits, a, b) as u64),
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

/// `more_touches(env)`: the room for line touches is full: compiled code
/// writes on into new room once this returns.
pub(super) type MoreTouches = extern "C" fn(*mut Env);

pub(super) extern "C" fn more_touches(env: *mut Env) {
    // SAFETY: as in `eval`.
    let env = unsafe { &mut *env };
    env.keep_touches();
    // SAFETY: compiled code calls this only where the group is traced,
    // with `recorder` the one `Native::run_group` was handed.
    let recorder = unsafe { &mut *env.recorder };
    if recorder.lines.len() >= CHUNK_ACCESSES {
        recorder.hand_over(false);
        // The touches handed over take no more folds: the next touch of
        // each line is a new one.
        env.table().fill(super::NO_SLOT);
    }
    env.room();
}
