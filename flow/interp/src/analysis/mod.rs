//! Analyses over a kernel's bytecode that a prediction reads: the chains
//! its loops carry, and the addresses carried across barriers. Both take
//! an op's registers as the compiled tier does (`exec::native::Spans`).

pub(crate) mod carried;
pub(crate) mod chains;
