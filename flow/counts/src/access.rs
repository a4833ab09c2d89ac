//! The global access stream: the vocabulary between the interpreter, which
//! makes the stream, and whatever listens (a cache simulation, a coalescing
//! analysis). `clflow_interp::trace` says in which order accesses come.

/// What an access does to memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessKind {
    Load,
    Store,
    /// A read-modify-write: a load and a store of the same bytes.
    Atomic,
}

impl AccessKind {
    pub fn reads(self) -> bool {
        matches!(self, AccessKind::Load | AccessKind::Atomic)
    }

    pub fn writes(self) -> bool {
        matches!(self, AccessKind::Store | AccessKind::Atomic)
    }
}

/// One work-item's access to a global or constant buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlobalAccess {
    /// Byte offset into the buffer.
    pub offset: u64,
    /// The buffer: the kernel argument's index, or for program-scope
    /// variables the index after the last argument (see [`TraceBuffer`]).
    pub buffer: u32,
    /// Bytes accessed together (a whole vector or struct).
    pub bytes: u32,
    /// The bytecode instruction that made it; `clflow_interp::Program::site`
    /// names its SPIR-V.
    pub site: u32,
    /// Accesses with the same dispatch number were made by one instruction
    /// run for several work-items together.
    pub dispatch: u32,
    /// The work-item's linear id within its work-group.
    pub item: u32,
    pub kind: AccessKind,
}

/// A buffer the trace's accesses refer to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceBuffer {
    pub label: String,
    /// `__global` or `__constant`.
    pub space: &'static str,
    pub bytes: u64,
}

/// Receives a launch's global accesses.
pub trait AccessSink {
    /// Called once, before any access, with the buffers by index.
    fn buffers(&mut self, buffers: &[TraceBuffer]);
    /// Called for every work-group in increasing order of its linear index
    /// (work-groups without global accesses included). A large work-group's
    /// accesses come in several calls, in order, each of whole dispatches.
    fn work_group(&mut self, group: u64, accesses: &[GlobalAccess]);

    /// [`AccessSink::work_group`] with the accesses given away: what the
    /// run calls. A sink that keeps them (to hand to other threads)
    /// overrides it and saves a copy.
    fn take_work_group(&mut self, group: u64, accesses: Vec<GlobalAccess>) {
        self.work_group(group, &accesses);
    }
}
