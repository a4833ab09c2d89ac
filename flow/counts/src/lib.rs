//! The vocabulary of a count, shared by every stage that reads one: what an
//! interpreted launch counted ([`Counts`]: operations per opcode and type,
//! bytes per memory space), which operations W takes ([`OpSet`], the
//! `--ops` argument), the arithmetic classes ([`OpClass`]), what each operation is for
//! ([`Role`]: work, address or control), what each source line did
//! ([`LineCounts`]), the global
//! access stream a cache simulation listens to ([`access`]), and what the
//! later stages read of a launch, summarised once ([`Summary`]).
//!
//! It depends on no interpreter and no SPIR-V reader, so that the
//! prediction, report, history and check stages read counts without
//! building either. The rules by which the interpreter counts are written
//! as a spec in `clflow_interp::counts`.

pub mod access;
mod annotate;
mod counts;
mod lines;
mod op_set;
mod role;
pub mod simd;
mod summary;
mod text;

pub use access::{AccessKind, AccessSink, GlobalAccess, TraceBuffer};
pub use annotate::{render_lines, LineCache};
pub use counts::{
    is_memory_op, CountReport, Counts, HistogramEntry, IntensityReport, LaneType, OpClass, Space,
    SpaceBytes, SpaceReport, TrafficReport, WorkKey, WorkReport,
};
pub use lines::{LineCounts, LineReport, SourceLine};
pub use op_set::{OpSet, ParseOpSetError};
pub use role::{ByRole, Role};
pub use simd::{Branches, Gathers, LoopChains, SimdUse, SIMD_WIDTHS};
pub use summary::{HostTransfer, PerClass, Summary};
pub use text::{group_digits, render_text};
