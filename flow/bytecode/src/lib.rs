//! The interpreter's instruction set, stated once: what `clflow-interp`'s
//! translator emits, its executor and compiled tier run, and its analyses
//! read.
//!
//! - [`Op`] (in `op`): every instruction, its operand types, its family
//!   ([`family!`]) and the registers it reads and writes ([`Operands::of`]);
//! - [`program`]: a kernel translated once, its bytecode and every table the
//!   machine needs, and the control-flow facts over it (loops, ranks);
//! - [`pointer`]: the 64-bit encoding of a pointer;
//! - [`layout`]: where values and variables live in memory.

pub mod layout;
mod op;
pub mod pointer;
pub mod program;

pub use op::*;
pub use program::{Loc, Program};
