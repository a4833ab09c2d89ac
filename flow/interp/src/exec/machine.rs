//! What an op's handler works on (`Machine`): the active lanes' registers,
//! memory and per-lane state, and the macros the handlers (`ops`) are
//! written in.

use super::events::Events;
use super::gathers::RowLanes;
use super::launch::Predictor;
use super::mem::Mem;
use super::queue::Queue;
use super::{Frame, LaneFault, LaneState, Launched};
use crate::memory::Arena;
use clflow_bytecode::program::Program;

/// The batch as one stretch of `execute` runs it.
pub(super) struct Machine<'x, 'a> {
    pub launch: &'a Launched<'a>,
    pub program: &'a Program,
    pub group: [u64; 3],
    /// Lanes in use.
    pub batch_len: usize,
    pub mem: &'x mut Mem<'x, 'a>,
    pub private: &'x mut [Arena],
    pub local_id: &'x [[u64; 3]],
    pub state: &'x mut [LaneState],
    /// Where each lane waiting at a barrier goes on.
    pub lane_pc: &'x mut [u32],
    pub frames: &'x mut [Vec<Frame>],
    pub queue: &'x mut Queue,
    pub printed: &'x mut [Vec<u8>],
    pub events: &'x mut Events,
    /// What lanes did that OpenCL leaves undefined (`TrapKind::Undefined`).
    pub undefined: &'x mut Vec<LaneFault>,
    pub branches: &'x mut [Predictor],
    pub gathers: &'x mut [RowLanes],
    pub adjacent_span: &'a [u32],
}

/// The registers of the lanes running: what nearly every op reads and
/// writes, kept apart from the `Machine` so that `execute` holds these
/// fields in machine registers; inside it, they would be reloaded after
/// every store to `regs`.
pub(super) struct Rows<'x> {
    /// Register x of lane l at `x * width + l` (`r!`).
    pub regs: &'x mut [u64],
    /// Lanes the register file has room for.
    pub width: usize,
    /// The lanes running, and whether they are every lane in order (the
    /// common case: lanes run as a plain count, which the compiler can
    /// vectorise).
    pub active: &'x [u32],
    pub dense: bool,
}

/// Where control goes after a control op.
pub(super) enum Next {
    /// Every active lane to this pc.
    Goto(u32),
    /// The lanes are queued or stopped: the stretch ends.
    Stop,
}

/// `r!(m, l, x)`: register x of lane l.
macro_rules! r {
    ($m:expr, $l:expr, $x:expr) => {
        *$crate::exec::unsafe_reg($m.regs, ::clflow_bytecode::Reg::index($x) * $m.width + $l)
    };
}

/// Runs `$body` once for each active lane, `$l` naming it, in the order of
/// `active`.
macro_rules! lanes {
    ($m:expr, $l:ident => $body:expr) => {
        if $m.dense {
            for $l in 0..$m.width {
                $body;
            }
        } else {
            for &lane in $m.active {
                let $l = lane as usize;
                $body;
            }
        }
    };
}

/// `dst = f(a, b)` (`unary!`: `dst = f(a)`) in each active lane; in a dense
/// batch a few lanes at a time, all read before any is written, which the
/// compiler runs as vector operations.
macro_rules! binary {
    ($m:expr, $dst:expr, $a:expr, $b:expr, $f:expr) => {
        if $m.dense {
            $crate::exec::rows_binary($m.regs, $m.width, $dst, $a, $b, $f);
        } else {
            let f = $f;
            lanes!($m, l => r!($m, l, $dst) = f(r!($m, l, $a), r!($m, l, $b)));
        }
    };
}

macro_rules! unary {
    ($m:expr, $dst:expr, $a:expr, $f:expr) => {
        binary!($m, $dst, $a, $a, |x, _| ($f)(x))
    };
}

/// Whether a 32-bit load or store at the pointers in register `$ptr` was
/// traced a row at once (every lane running it, a sink that takes runs);
/// else each lane traces its own as it runs.
macro_rules! trace_row {
    ($m:expr, $rows:expr, $ptr:expr, $kind:expr) => {{
        let row = ::clflow_bytecode::Reg::index($ptr) * $rows.width;
        $rows.dense
            && $m.mem.trace_row(
                &$rows.regs[row..row + $rows.width],
                4,
                $kind,
                $m.local_id[0],
            )
    }};
}

/// Where the run measures SIMD use, the lanes of a load or store (of
/// `bytes` bytes a lane, `n` components; a member of an adjacent group,
/// the group's span) a vectoriser gathers, and all its lanes.
macro_rules! count_gathers {
    ($m:expr, $rows:expr, $at:expr, $ptr:expr, $bytes:expr, $n:expr) => {
        if let Some(count) = $m.gathers.get_mut($at) {
            let row = ::clflow_bytecode::Reg::index($ptr) * $rows.width;
            let addresses = &$rows.regs[row..row + $rows.width];
            let bytes = match $m.adjacent_span.get($at) {
                Some(&span) if span > 0 => u64::from(span),
                _ => $bytes,
            };
            let rows = $crate::exec::gathers::row_lanes(
                addresses,
                $m.local_id,
                $rows.active,
                bytes,
                $rows.dense,
            );
            let n = u64::from($n);
            *count += $crate::exec::gathers::RowLanes {
                gathered: n * rows.gathered,
                broadcast: n * rows.broadcast,
                all: n * rows.all,
            };
        }
    };
}
