//! clflow's SPIR-V interpreter: runs an OpenCL kernel's SPIR-V on its real
//! NDRange and inputs, and counts what the kernel does, operations W per
//! type and class and global-memory traffic Q, exactly.
//!
//! Like a well-built WebAssembly engine it validates and translates a kernel
//! once into a compact register bytecode (`translate`, into the ops of `clflow_bytecode`), then
//! executes that (`exec`) over a store of buffers (`memory`): work-groups in
//! parallel, and a work-group's work-items together as a batch, each
//! instruction dispatched once for many work-items. Counting is per basic
//! block; see [`counts`] for the rules.
//!
//! Translation also does what makes interpretation cheap without changing
//! a count: one-block functions are inlined (their counts join the calling
//! block), integer ops on constants inside them are folded, a funnel-shift
//! rotate becomes one op, the hottest 32-bit integer ops and one-index
//! address computations have direct forms. Every register index is proven
//! in range before a program runs, so that no module, however malformed,
//! can make the machine misbehave.
//!
//! ```no_run
//! # fn demo(spirv: &[u8], launch: &clflow_core::Launch) -> Result<(), clflow_interp::InterpError> {
//! let module = clflow_interp::load(spirv)?;
//! let program = clflow_interp::Program::translate(&module, &launch.kernel)?;
//! let result = program.run(launch, &clflow_interp::RunOptions::default())?;
//! println!("W = {}", result.counts.w(&"arith".parse().unwrap()));
//! # Ok(()) }
//! ```

mod analysis;
pub mod counts;
mod error;
mod exec;
mod memory;
mod opencl_std;
mod run;
pub mod sample;
pub mod trace;
mod translate;
mod types;

pub use counts::{ByRole, CountReport, Counts, LaneType, OpClass, OpSet, ParseOpSetError, Role};
pub use error::{InterpError, TranslateError, Trap, TrapKind};
pub use run::LaunchInput;
pub use sample::{Sample, SampleReport, SampleSize};
pub use trace::{AccessKind, AccessSink, GlobalAccess, LineTouch, TraceBuffer};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Work-group size used in a dimension when the launch leaves it open: the
/// largest divisor of the global size not above this.
pub const DEFAULT_LOCAL_SIZE: u64 = 256;

/// The base operations W counts the OpenCL builtin `name` as (`fma` is
/// `OpFMul` and `OpFAdd`), where it is never counted under its own name:
/// an op set naming it would count nothing.
pub fn base_operations(name: &str) -> Option<Vec<&'static str>> {
    crate::translate::base_operations(name)
}

/// Reads a SPIR-V module, turning every malformation into an error.
pub fn load(bytes: &[u8]) -> Result<rspirv::dr::Module, InterpError> {
    // clflow-spirv checks the header and the framing of every instruction
    // before the module is parsed; the guard keeps even a reader bug from
    // taking clflow down.
    std::panic::catch_unwind(|| clflow_spirv::load(bytes))
        .map_err(|_| InterpError::Load("the SPIR-V reader failed on this module".into()))?
        .map_err(|e| InterpError::Load(e.to_string()))
}

#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Bytecode instructions one work-item may execute before it is
    /// stopped (a kernel that never ends); see `Counts::steps`.
    pub max_steps: u64,
    /// Cache-line size for compulsory traffic (a power of two).
    pub line_bytes: u64,
    /// Worker threads; `None` uses every core.
    pub threads: Option<usize>,
    /// Where the run counts its finished work-groups, for a watcher on
    /// another thread (a progress bar); `None` counts nothing.
    pub progress: Option<Arc<Progress>>,
    /// Work-items per sub-group (`cl_khr_subgroups`): devices differ, so
    /// the run states it.
    pub sub_group_size: u32,
    /// Go on after a fault that stops one work-item (a bad access, a
    /// division by zero: `TrapKind::stops_one`): the work-item stops, the
    /// rest run, and the faults come in `RunResult::faults`. Otherwise the
    /// first fault ends the run, as an error.
    pub keep_going: bool,
    /// Follow undefined values (private memory a work-item has not written,
    /// local memory its group has not) to where they are used: a branch,
    /// an address, a divisor, a store to global memory. Each use is a
    /// fault in `RunResult::faults`; the run goes on. Slower: a plain run
    /// follows nothing.
    pub uninit: bool,
    /// The buffer arguments whose contents are undefined (`noinit`): with
    /// `uninit`, their bytes are undefined until the kernel writes them.
    pub undefined: Vec<usize>,
    /// Count a uniform random sample of the work-groups and extrapolate
    /// (see [`sample`]); `None` counts every one. A traced run counts all.
    pub sample: Option<Sample>,
    /// Measure how the work-items would fill vectors of each of
    /// [`counts::SIMD_WIDTHS`] (`Counts::simd`): a little slower.
    pub simd: bool,
    /// What runs the kernel's instructions: the interpreter, or the
    /// compiled tier (`exec::native`) for the kernels it can run.
    pub tier: Tier,
    /// The order a work-group's work-items run in, which is the order a
    /// traced run hands their accesses over in. Counts and outputs do not
    /// hang on it (but for kernels whose work-items race).
    pub order: ItemOrder,
    /// The module was built optimised (clang's -O2): every call it still
    /// makes is one the device's compiler keeps too (it declined to
    /// inline the callee), not only those to functions marked
    /// `DontInline`. An unoptimised module calls every function it has.
    pub optimised: bool,
}

/// The order a work-group's work-items run in (`RunOptions::order`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ItemOrder {
    /// All of a batch together, in lockstep where their control flow
    /// agrees: each instruction's accesses for every lane that runs it,
    /// as a GPU's warps present them to its memory.
    #[default]
    Lockstep,
    /// As a CPU's OpenCL runtime runs a work-group: between two barriers,
    /// this many work-items at a time (a vector of them where its compiler
    /// vectorises the kernel's loops, else one), each set run up to the
    /// barrier or the end before the next starts. A work-item that walks
    /// far between barriers has done so before its neighbours start on the
    /// same lines, which a cache then no longer holds. A kernel with
    /// work-group or sub-group functions or async copies, which take the
    /// whole group at once, runs in lockstep.
    Vectors(u32),
}

/// What runs a launch (`RunOptions::tier`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tier {
    /// The interpreter, and the compiled tier once the launch has run for
    /// [`TIER_UP_AFTER`]: a short launch does not pay for compiling.
    #[default]
    Auto,
    /// The interpreter alone.
    Interpret,
    /// The compiled tier from the start, where it can run the kernel.
    Compile,
}

/// How long a launch runs in the interpreter before the compiled tier
/// takes it over (`Tier::Auto`), where the interpreter would take as long
/// again or more to finish it, and longer than the compile: compiling a
/// kernel takes a few milliseconds, a large one a fraction of a second.
pub const TIER_UP_AFTER: std::time::Duration = std::time::Duration::from_millis(10);

/// The sub-group size a run takes unless told another.
pub const DEFAULT_SUB_GROUP_SIZE: u32 = 32;

/// How far a run is: its work-groups, and how many have finished. Read
/// from any thread while the run goes on; it costs the run one atomic add
/// per work-group.
#[derive(Debug, Default)]
pub struct Progress {
    total: AtomicU64,
    done: AtomicU64,
}

impl Progress {
    /// The launch's work-groups; 0 until the run has started.
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// The work-groups finished so far.
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_steps: 100_000_000,
            line_bytes: 64,
            threads: None,
            progress: None,
            sub_group_size: DEFAULT_SUB_GROUP_SIZE,
            keep_going: false,
            uninit: false,
            undefined: Vec::new(),
            sample: None,
            simd: false,
            tier: Tier::Auto,
            order: ItemOrder::Lockstep,
            optimised: false,
        }
    }
}

/// A buffer argument's contents after the kernel ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputBuffer {
    pub arg: usize,
    pub name: Option<String>,
    pub bytes: Vec<u8>,
}

/// What one work-item printed with printf: all its calls' output, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Printed {
    /// The work-item's global id.
    pub item: [u64; 3],
    /// The bytes printed, as printf writes them (not necessarily UTF-8:
    /// `%c` and the format may hold any byte).
    pub bytes: Vec<u8>,
}

#[derive(Debug, Clone)]
pub struct RunResult {
    pub counts: Counts,
    /// Every output buffer argument (access `wo` or `rw`), in argument order.
    pub buffers: Vec<OutputBuffer>,
    /// What the kernel printed (printf), one entry per work-item that
    /// printed: work-groups in linear order, and within a group its
    /// work-items in linear local id order, whatever the threads.
    pub printed: Vec<Printed>,
    /// The faults the run went on after (with `RunOptions::keep_going`,
    /// those that stop a work-item; always, the undefined behaviour it went
    /// through, `TrapKind::Undefined`): one per instruction and kind of
    /// fault, its first work-item's (the lowest work-group's), with how
    /// many work-items it stopped or how often it was made; in the order of
    /// the work-groups they first stopped.
    pub faults: Vec<KeptFault>,
    /// Where `RunOptions::sample` asked for one, how the counts were
    /// extrapolated, and the intervals on W and Q.
    pub sample: Option<SampleReport>,
    /// What ran the kernel's instructions.
    pub engine: Engine,
    /// The order its work-items ran in: `RunOptions::order`, or lockstep
    /// where the kernel needs it.
    pub order: ItemOrder,
}

/// What runs a launch's instructions (`RunResult::engine`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Engine {
    /// The compiled tier: the kernel as native code (with `Tier::Auto`,
    /// after the interpreter ran the first work-groups).
    Compiled,
    /// The interpreter, and why the compiled tier did not run the launch.
    Interpreted(String),
}

/// A fault the run went on after (`RunResult::faults`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptFault {
    /// The first: its work-item's, in the lowest work-group.
    pub trap: Trap,
    /// How many work-items it stopped (or, for a use of an undefined
    /// value, how many times it was made).
    pub count: u64,
    /// The first few work-items (global ids), in work-group order.
    pub work_items: Vec<[u64; 3]>,
}

impl RunResult {
    /// Everything the kernel printed, in the order of [`RunResult::printed`].
    pub fn printed_bytes(&self) -> Vec<u8> {
        self.printed
            .iter()
            .flat_map(|p| p.bytes.iter().copied())
            .collect()
    }
}

/// A kernel translated to bytecode, ready to run any number of launches.
#[derive(Debug)]
pub struct Program {
    inner: clflow_bytecode::Program,
}

impl Program {
    pub fn translate(module: &rspirv::dr::Module, kernel: &str) -> Result<Program, InterpError> {
        Self::translate_checked(module, kernel, false)
    }

    /// [`Program::translate`]; with `check_indices`, every index into an
    /// array inside a private or local variable is checked against the
    /// array's length as the kernel runs (a fault that stops its
    /// work-item), not only the variable's bounds.
    pub fn translate_checked(
        module: &rspirv::dr::Module,
        kernel: &str,
        check_indices: bool,
    ) -> Result<Program, InterpError> {
        translate::translate_checked(module, kernel, check_indices)
            .map(|inner| Program { inner })
            .map_err(|error| InterpError::Translate {
                kernel: kernel.to_string(),
                error: Box::new(error),
            })
    }

    pub fn kernel(&self) -> &str {
        &self.inner.kernel
    }

    /// Bytecode instructions, for diagnostics.
    pub fn len(&self) -> usize {
        self.inner.code.len()
    }

    /// The bytecode, one instruction a line with the SPIR-V it came from.
    pub fn disassemble(&self) -> String {
        self.inner.disassemble()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.code.is_empty()
    }

    /// The SPIR-V instruction bytecode instruction `pc` came from (a
    /// traced access's `site`), as text.
    pub fn site(&self, pc: u32) -> &str {
        self.inner.site(pc as usize)
    }

    /// Where bytecode instruction `pc` stands in the kernel's source,
    /// `vadd.cl:17:16`, where the module says.
    pub fn location(&self, pc: u32) -> Option<String> {
        self.inner.location(pc as usize)
    }

    /// The bytecode instructions of the kernel's refill loads: a vector the
    /// compiler loads to store it back with some lanes replaced (a partial
    /// write), a read that is not the kernel's; ascending.
    pub fn refills(&self) -> Vec<u32> {
        let p = &self.inner;
        (0..p.code.len() as u32)
            .filter(|pc| p.refills.contains(&p.site_of[*pc as usize]))
            .collect()
    }

    /// The source line of bytecode instruction `pc`, where the module says.
    pub fn source_line(&self, pc: u32) -> Option<&counts::SourceLine> {
        let line = self.inner.loc(pc as usize).line.checked_sub(1)?;
        self.inner.source_lines.get(line as usize)
    }
}
