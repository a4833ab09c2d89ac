//! One handler per op family, each a match over its own ops: `execute`
//! sends each op to its family's `run`, inlined into its dispatch.

pub(super) mod access;
pub(super) mod control;
pub(super) mod float;
pub(super) mod group;
pub(super) mod int;
pub(super) mod io;
pub(super) mod scalar;
pub(super) mod vector;

use super::builtins::{builtin, geometric};
use super::machine::{Machine, Next, Rows};
use super::{collective, events, printf};
use super::{copy_rows, f32_add, f32_div, f32_mul, f32_sub, fma_rows, Frame, LaneFault, LaneState};
use crate::error::TrapKind;
use crate::memory::{self, SPACE_LOCAL};
use crate::opencl_std as math;
use crate::trace::AccessKind;
use clflow_bytecode::*;
