//! clflow's SPIR-V interpreter: runs an OpenCL kernel's SPIR-V on its real
//! NDRange and inputs, and counts what the kernel does, operations W per
//! type and class and global-memory traffic Q, exactly.
//!
//! Like a well-built WebAssembly engine it validates and translates a kernel
//! once into a compact register bytecode (`translate`, `bytecode`), then
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

mod bytecode;
mod carried;
mod chains;
pub mod counts;
mod error;
mod exec;
mod memory;
mod opencl_std;
mod program;
pub mod sample;
pub mod trace;
mod translate;
mod types;

pub use counts::{ByRole, CountReport, Counts, LaneType, OpClass, OpSet, ParseOpSetError, Role};
pub use error::{InterpError, TranslateError, Trap, TrapKind};
pub use sample::{Sample, SampleReport, SampleSize};
pub use trace::{AccessKind, AccessSink, GlobalAccess, LineTouch, TraceBuffer};

use clflow_core::{AddressSpace, ArgValue, Launch};
use counts::{LineCounts, Traffic, WorkKey};
use memory::{ArenaLayout, GlobalMemory, SharedBuffer};
use program::ParamSlot;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

/// Work-group size used in a dimension when the launch leaves it open: the
/// largest divisor of the global size not above this.
pub const DEFAULT_LOCAL_SIZE: u64 = 256;

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
    inner: program::Program,
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
        let p = &self.inner;
        p.code
            .iter()
            .enumerate()
            .map(|(pc, op)| format!("{pc:5}  {op:?}  ; {}\n", p.site(pc)))
            .collect()
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

    /// The source line of bytecode instruction `pc`, where the module says.
    pub fn source_line(&self, pc: u32) -> Option<&counts::SourceLine> {
        let line = self.inner.loc(pc as usize).line.checked_sub(1)?;
        self.inner.source_lines.get(line as usize)
    }

    /// Runs the kernel on a copy of the launch's buffers.
    pub fn run(&self, launch: &Launch, options: &RunOptions) -> Result<RunResult, InterpError> {
        self.run_taking(launch, vec![None; launch.args.len()], options, None)
    }

    /// Runs the kernel on a copy of the launch's buffers and hands every
    /// global and constant access to `sink`, work-group by work-group in
    /// order (see [`trace`]). Counts and outputs are those of [`Program::run`].
    pub fn run_traced(
        &self,
        launch: &Launch,
        options: &RunOptions,
        sink: &mut dyn AccessSink,
    ) -> Result<RunResult, InterpError> {
        self.run_taking(launch, vec![None; launch.args.len()], options, Some(sink))
    }

    /// Runs the kernel on the launch's own buffers, which it takes over, so
    /// that no buffer is held twice (inputs of hundreds of megabytes).
    pub fn run_owned(
        &self,
        launch: Launch,
        options: &RunOptions,
    ) -> Result<RunResult, InterpError> {
        self.run_owned_with(launch, options, None)
    }

    /// [`Program::run_owned`], handing every global access to `sink` as
    /// [`Program::run_traced`] does.
    pub fn run_owned_traced(
        &self,
        launch: Launch,
        options: &RunOptions,
        sink: &mut dyn AccessSink,
    ) -> Result<RunResult, InterpError> {
        self.run_owned_with(launch, options, Some(sink))
    }

    fn run_owned_with(
        &self,
        mut launch: Launch,
        options: &RunOptions,
        sink: Option<&mut dyn AccessSink>,
    ) -> Result<RunResult, InterpError> {
        let taken = launch
            .args
            .iter_mut()
            .map(|a| match &mut a.value {
                ArgValue::Buffer { bytes, .. } | ArgValue::Image { bytes, .. } => {
                    Some(std::mem::take(bytes))
                }
                _ => None,
            })
            .collect();
        self.run_taking(&launch, taken, options, sink)
    }

    /// Whether the kernel never writes buffer `index` of the launch: every
    /// parameter bound to it (itself, and the ones given as the same buffer)
    /// is marked as never written through. Program-scope variables and
    /// images may be written.
    fn never_written(&self, launch: &Launch, index: usize) -> bool {
        let bound = |i: usize| match &launch.args.get(i)?.value {
            ArgValue::Buffer { .. } => (i == index).then_some(i),
            ArgValue::SameBuffer { arg } => (*arg == index).then_some(i),
            _ => None,
        };
        let params = &self.inner.params;
        index < launch.args.len()
            && (0..params.len())
                .filter_map(bound)
                .all(|i| matches!(params[i], ParamSlot::Pointer { no_write: true, .. }))
    }

    /// `taken[i]`, where present, holds argument i's bytes instead of the launch.
    fn run_taking(
        &self,
        launch: &Launch,
        mut taken: Vec<Option<Vec<u8>>>,
        options: &RunOptions,
        mut sink: Option<&mut dyn AccessSink>,
    ) -> Result<RunResult, InterpError> {
        let p = &self.inner;
        let launch_error = |message: String| InterpError::Launch {
            kernel: p.kernel.clone(),
            message,
        };
        if !options.line_bytes.is_power_of_two() {
            return Err(launch_error(format!(
                "line size {} is not a power of two",
                options.line_bytes
            )));
        }
        let geometry = geometry(launch, options.sub_group_size).map_err(launch_error)?;
        if launch.args.len() != p.params.len() {
            return Err(launch_error(format!(
                "the kernel takes {} arguments, the launch gives {}",
                p.params.len(),
                launch.args.len()
            )));
        }
        let mut regs = p.init_regs.clone();
        let mut buffers = Vec::new();
        let mut images = Vec::new();
        let mut local_layout = ArenaLayout::default();
        let mut private_init = Vec::new();
        for (i, (param, arg)) in p.params.iter().zip(&launch.args).enumerate() {
            let label = arg.describe(i);
            let mut buffer = SharedBuffer::new(&[], label.clone(), "__global", options.line_bytes);
            let mut local = 0;
            let mut image_desc = None;
            match (param, &arg.value) {
                (
                    ParamSlot::Image { slot, dim },
                    ArgValue::Image {
                        image,
                        bytes,
                        access,
                    },
                ) if image.dim == *dim => {
                    let expected = image.size_bytes();
                    let len = taken
                        .get(i)
                        .and_then(|t| t.as_ref().map(Vec::len))
                        .unwrap_or(bytes.len());
                    if len as u64 != expected {
                        return Err(launch_error(format!(
                            "{label}: a {} {}×{}×{} image takes {expected} bytes of texels, the launch gives {len}",
                            image.format, image.width, image.height, image.depth
                        )));
                    }
                    let _ = access;
                    let name = "__global";
                    buffer = match taken.get_mut(i).and_then(Option::take) {
                        Some(owned) => {
                            SharedBuffer::from_vec(owned, label, name, options.line_bytes)
                        }
                        None => SharedBuffer::new(bytes, label, name, options.line_bytes),
                    };
                    image_desc = Some(*image);
                    regs[slot.index()] = memory::encode(memory::SPACE_GLOBAL, i, 0);
                }
                (ParamSlot::Sampler { slot }, ArgValue::Sampler(sampler)) => {
                    regs[slot.index()] = u64::from(sampler.bits());
                }
                (ParamSlot::Pointer { slot, space, .. }, ArgValue::Buffer { bytes, .. })
                    if matches!(space, AddressSpace::Global | AddressSpace::Constant) =>
                {
                    let name = if *space == AddressSpace::Constant {
                        "__constant"
                    } else {
                        "__global"
                    };
                    buffer = match taken.get_mut(i).and_then(Option::take) {
                        Some(owned) => {
                            SharedBuffer::from_vec(owned, label, name, options.line_bytes)
                        }
                        None => SharedBuffer::new(bytes, label, name, options.line_bytes),
                    };
                    regs[slot.index()] = memory::encode(memory::SPACE_GLOBAL, i, 0);
                }
                (ParamSlot::Pointer { slot, space, .. }, ArgValue::SameBuffer { arg: first })
                    if matches!(space, AddressSpace::Global | AddressSpace::Constant)
                        && *first < i
                        && matches!(launch.args[*first].value, ArgValue::Buffer { .. }) =>
                {
                    regs[slot.index()] = memory::encode(memory::SPACE_GLOBAL, *first, 0);
                }
                (ParamSlot::Pointer { slot, .. }, ArgValue::NullPointer) => regs[slot.index()] = 0,
                (
                    ParamSlot::Pointer {
                        slot,
                        space: AddressSpace::Local,
                        ..
                    },
                    ArgValue::Local { bytes },
                ) => {
                    local = *bytes;
                    regs[slot.index()] = memory::encode(memory::SPACE_LOCAL, i, 0);
                }
                (ParamSlot::Value { slot, leaves, size }, ArgValue::Scalar { bytes })
                    if bytes.len() as u64 == *size =>
                {
                    for (k, leaf) in leaves.iter().enumerate() {
                        let mut w = [0u8; 8];
                        let at = leaf.offset as usize;
                        w[..leaf.size as usize]
                            .copy_from_slice(&bytes[at..at + leaf.size as usize]);
                        regs[slot.index() + k] = u64::from_le_bytes(w);
                    }
                }
                (ParamSlot::ByVal { var, size, .. }, ArgValue::Scalar { bytes })
                    if bytes.len() as u64 == *size =>
                {
                    private_init.push((p.private.base[*var] as usize, bytes.clone()));
                }
                (param, value) => {
                    return Err(launch_error(format!(
                        "{label}: the kernel expects {}, the launch gives {}",
                        describe_param(param),
                        describe_value(value, taken.get(i).and_then(|t| t.as_ref().map(Vec::len)))
                    )))
                }
            }
            buffers.push(buffer);
            images.push(image_desc);
            local_layout.push(local, 128, label_for_local(&arg.describe(i)));
        }
        for var in &p.global_vars {
            buffers.push(SharedBuffer::new(
                &var.bytes,
                var.label.clone(),
                var.space,
                options.line_bytes,
            ));
        }
        for (size, align, label) in &p.local_vars {
            local_layout.push(*size, *align, label.clone());
        }
        // Work-items of a group with barriers are all alive at once.
        let group_items: u64 = geometry.local.iter().product();
        let item_bytes = 8 * p.init_regs.len() as u64 + p.private.total();
        if p.uses_barrier && group_items.saturating_mul(item_bytes) > translate::MAX_LOCAL_BYTES {
            return Err(launch_error(format!(
                "work-groups of {group_items} work-items with barriers would need {} bytes of state",
                group_items.saturating_mul(item_bytes)
            )));
        }
        if local_layout.total() > translate::MAX_LOCAL_BYTES {
            return Err(launch_error(format!(
                "{} bytes of __local memory per work-group (clflow's limit is {})",
                local_layout.total(),
                translate::MAX_LOCAL_BYTES
            )));
        }
        images.resize(buffers.len(), None);
        let global = GlobalMemory {
            buffers,
            images,
            wide_atomics: Mutex::new(()),
        };
        let mut launched = exec::Launched {
            program: p,
            global: &global,
            geometry,
            local_layout,
            regs,
            private_init,
            max_steps: options.max_steps,
            keep_going: options.keep_going,
            uninit: options.uninit,
            simd: options.simd,
            // Work-group functions and copies take the whole group at once.
            order: if p.code.iter().any(|op| {
                matches!(
                    op,
                    bytecode::Op::Collective { .. } | bytecode::Op::GroupCopy { .. }
                )
            }) {
                ItemOrder::Lockstep
            } else {
                options.order
            },
            undefined: global
                .buffers
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    (options.uninit && options.undefined.contains(&i))
                        .then(|| (0..b.len).map(|_| AtomicU8::new(1)).collect())
                })
                .collect(),
            native: exec::native::Tiering::never(),
            touch_shift: sink
                .as_ref()
                .and_then(|s| s.line_touches())
                .map(u64::trailing_zeros),
        };
        // A sink that takes line touches gets them from compiled code once
        // it estimates (see `trace`); others need every access in order.
        let traced_whole = sink.as_ref().is_some_and(|s| s.line_touches().is_none());
        let never = self
            .interpreter_because(options, traced_whole)
            .or_else(|| exec::native::ineligible(&launched));
        launched.native = match (&never, options.tier) {
            (Some(_), _) | (None, Tier::Interpret) => exec::native::Tiering::never(),
            (None, Tier::Auto) => exec::native::Tiering::after(TIER_UP_AFTER),
            (None, Tier::Compile) => {
                exec::native::Tiering::done(exec::native::Native::compile(&launched))
            }
        };
        let threads = options.threads.unwrap_or_else(rayon::current_num_threads);
        if threads == 0 {
            return Err(launch_error("0 threads cannot run a kernel".into()));
        }
        if let Some(sink) = sink.as_mut() {
            let mut buffers: Vec<TraceBuffer> = global
                .buffers
                .iter()
                .enumerate()
                .map(|(i, b)| TraceBuffer {
                    label: b.label.clone(),
                    space: b.space,
                    bytes: b.len,
                    read_only: b.space == "__constant" || self.never_written(launch, i),
                })
                .collect();
            if sink.wants_local() {
                let layout = &launched.local_layout;
                buffers.extend(layout.label.iter().zip(&layout.size).map(|(label, size)| {
                    TraceBuffer {
                        label: label.clone(),
                        space: "__local",
                        bytes: *size,
                        read_only: false,
                    }
                }));
            }
            if buffers.len() > clflow_counts::access::MOST_TRACE_BUFFERS {
                return Err(launch_error(format!(
                    "{} buffers are more than a trace can name ({})",
                    buffers.len(),
                    clflow_counts::access::MOST_TRACE_BUFFERS
                )));
            }
            sink.buffers(&buffers);
            sink.work_groups(launched.geometry.groups.iter().product());
        }
        let progress = options.progress.as_deref();
        if let Some(progress) = progress {
            let groups: u64 = launched.geometry.groups.iter().product();
            progress.total.store(groups, Ordering::Relaxed);
            progress.done.store(0, Ordering::Relaxed);
        }
        let done = progress.map(|p| &p.done);
        let mut sampled = None;
        let outcome = match (&options.sample, sink) {
            (None, sink) => exec::run_groups(&launched, Default::default(), threads, sink, done),
            (Some(sample), None) => {
                sample::run(&launched, sample, threads, progress).map(|(partial, made)| {
                    sampled = Some(made);
                    partial
                })
            }
            (Some(_), Some(_)) => {
                return Err(launch_error(
                    "a traced run takes every work-group: it cannot sample".into(),
                ))
            }
        };
        let engine = match (never, launched.native.outcome()) {
            (Some(why), _) => Engine::Interpreted(why),
            (None, Some(Ok(_))) => Engine::Compiled,
            (None, Some(Err(why))) => Engine::Interpreted(why.clone()),
            (None, None) if launched.touch_shift.is_some() => Engine::Interpreted(
                "the run traces its accesses in order: the cache simulation did not sample, its \
                 work-groups touch too many lines to be taken in another order, or too few were \
                 left once it sampled"
                    .into(),
            ),
            (None, None) => Engine::Interpreted(format!(
                "it ran in under {} ms, or had less left to run then than that or than \
                 compiling its {} bytecode instructions would take (about {} ms): too short to \
                 pay for compiling",
                TIER_UP_AFTER.as_millis(),
                clflow_core::numbers::group_digits(p.code.len() as u64),
                exec::native::compile_estimate(p.code.len())
                    .as_millis()
                    .max(1)
            )),
        };
        let trap = |f: exec::Fault| Trap {
            kernel: p.kernel.clone(),
            item: f.item,
            op: p.site(f.pc).to_string(),
            location: p.location(f.pc),
            kind: f.kind,
        };
        let mut partial = outcome.map_err(|f| InterpError::Trap(Box::new(trap(f))))?;
        let mut kept: Vec<_> = std::mem::take(&mut partial.faults).into_values().collect();
        kept.sort_by_key(|k| (k.group, k.fault.pc));
        let faults = kept
            .into_iter()
            .map(|k| KeptFault {
                count: k.count,
                work_items: k.items.iter().map(|(_, item)| *item).collect(),
                trap: trap(k.fault),
            })
            .collect();
        // A sample's distinct lines, scaled to the launch: lines are shared
        // between work-groups, so no more than each buffer holds.
        let line_scale = sampled.as_ref().map_or(1.0, |s| s.line_scale());
        let counts = self.tally(&partial, &global, &geometry, options, line_scale);
        let outputs = launch
            .args
            .iter()
            .enumerate()
            .filter(
                |(_, a)| matches!(&a.value, ArgValue::Buffer { access, .. } | ArgValue::Image { access, .. } if access.is_output()),
            )
            .map(|(i, a)| OutputBuffer {
                arg: i,
                name: a.name.clone(),
                bytes: global.buffers[i].to_bytes(),
            })
            .collect();
        // Threads took work-groups in any order; each kept its own in order.
        partial.printed.sort_by_key(|(group, _)| *group);
        Ok(RunResult {
            sample: sampled.map(|s| s.report(&counts)),
            counts,
            buffers: outputs,
            printed: partial.printed.into_iter().map(|(_, p)| p).collect(),
            faults,
            engine,
            order: launched.order,
        })
    }

    /// Why a run with `options` (and a trace, where `traced`) needs the
    /// interpreter whatever the kernel: what it watches or measures is
    /// done there alone.
    fn interpreter_because(&self, options: &RunOptions, traced_whole: bool) -> Option<String> {
        let why = if options.tier == Tier::Interpret {
            "asked to interpret"
        } else if traced_whole {
            "the run traces its accesses"
        } else if options.uninit {
            "the run follows undefined values"
        } else if options.simd {
            "the run measures SIMD use"
        } else {
            return None;
        };
        Some(why.to_string())
    }

    /// Block hits × each block's static counts.
    fn tally(
        &self,
        partial: &exec::Partial,
        global: &GlobalMemory,
        g: &exec::Geometry,
        options: &RunOptions,
        line_scale: f64,
    ) -> Counts {
        let p = &self.inner;
        let line_bytes = options.line_bytes;
        let mut hist = vec![0u64; p.hist_keys.len()];
        let mut work = vec![0u64; p.work_keys.len()];
        let mut traffic = partial.traffic;
        let mut line_traffic = partial.line_traffic.clone();
        line_traffic.resize(p.source_lines.len() + 1, Default::default());
        for (block, hits) in p.blocks.iter().zip(&partial.hits) {
            for (k, n) in &block.hist {
                hist[*k as usize] += n * hits;
            }
            for (k, n) in &block.work {
                work[*k as usize] += n * hits;
            }
            traffic.scaled_add(&block.traffic, *hits);
            for (line, t) in &block.line_traffic {
                line_traffic[*line as usize].scaled_add(t, *hits);
            }
        }
        let (block_steps, in_loop) = block_steps(p);
        let steps = block_steps
            .iter()
            .zip(&partial.hits)
            .map(|(n, hits)| n * hits)
            .sum();
        // One entry per opcode and type, its lanes split by role.
        let mut entries: BTreeMap<(&str, LaneType), counts::ByRole> = BTreeMap::new();
        for ((op, ty, role), lanes) in p.hist_keys.iter().zip(hist) {
            if lanes > 0 {
                entries.entry((op, *ty)).or_default().add(*role, lanes);
            }
        }
        let mut histogram: Vec<counts::HistogramEntry> = entries
            .into_iter()
            .map(|((op, ty), by_role)| counts::HistogramEntry {
                op: op.to_string(),
                ty: ty.to_string(),
                lanes: by_role.total(),
                by_role,
            })
            .collect();
        histogram.sort_by(|a, b| {
            b.lanes
                .cmp(&a.lanes)
                .then(a.op.cmp(&b.op))
                .then(a.ty.cmp(&b.ty))
        });
        Counts {
            kernel: p.kernel.clone(),
            work_items: g.global.iter().product(),
            work_groups: g.groups.iter().product(),
            local_size: g.local,
            histogram,
            lines: per_line(p, &work, line_traffic),
            work: merged(
                p.work_keys
                    .iter()
                    .map(|(k, _)| *k)
                    .zip(work.iter().copied()),
            ),
            traffic,
            line_bytes,
            simd: simd_use(&block_steps, &in_loop, partial),
            chains: (!partial.simd.is_empty())
                .then(|| loop_chains(p, options.optimised, &block_steps, partial)),
            loop_barriers: (!partial.simd.is_empty()).then(|| loop_barriers(p, partial)),
            gathers: (!partial.gathers.is_empty()).then(|| gathers(p, partial)),
            branches: (!partial.branches.is_empty()).then(|| branches(p, partial)),
            lines_read: global
                .buffers
                .iter()
                .map(|b| b.read_lines.scaled(line_scale))
                .sum(),
            lines_written: global
                .buffers
                .iter()
                .map(|b| b.written_lines.scaled(line_scale))
                .sum(),
            steps,
        }
    }
}

/// Each block's bytecode instructions, and whether it lies in one of the
/// kernel's loops.
fn block_steps(p: &program::Program) -> (Vec<u64>, Vec<bool>) {
    let looped = program::in_loops(&p.code, &p.cases);
    let (mut steps, mut in_loop) = (vec![0u64; p.blocks.len()], vec![false; p.blocks.len()]);
    for (pc, op) in p.code.iter().enumerate() {
        if let bytecode::Op::Block { block, steps: n } = op {
            steps[*block as usize] = u64::from(*n);
            in_loop[*block as usize] = looped[pc];
        }
    }
    (steps, in_loop)
}

/// The run's SIMD use at each width, each block's runs weighted by its
/// instructions (`steps`); none where the run did not measure it.
fn simd_use(steps: &[u64], in_loop: &[bool], partial: &exec::Partial) -> Vec<counts::SimdUse> {
    if partial.simd.is_empty() {
        return Vec::new();
    }
    counts::SIMD_WIDTHS
        .iter()
        .enumerate()
        .map(|(w, &width)| {
            let mut used = counts::SimdUse {
                width,
                ..Default::default()
            };
            let blocks = steps.iter().zip(in_loop).zip(&partial.hits);
            for (((n, looped), hits), per_width) in blocks.zip(&partial.simd) {
                let [groups, whole] = per_width[w];
                used.lane_steps += n * hits;
                used.issued_steps += n * groups * u64::from(width);
                used.converged_steps += n * whole;
                if *looped {
                    used.loop_steps += n * hits;
                    used.converged_loop_steps += n * whole;
                }
            }
            used
        })
        .collect()
}

/// Each block's carried chain times its runs, and those runs' steps; and
/// the runs of kept calls (every call, where the module is `optimised`)
/// inside the kernel's loops between barriers.
fn loop_chains(
    p: &program::Program,
    optimised: bool,
    steps: &[u64],
    partial: &exec::Partial,
) -> counts::LoopChains {
    let mut total = counts::LoopChains::default();
    let mut kept = p.kept_calls.clone();
    if optimised {
        kept.extend_from_slice(&p.other_calls);
        kept.sort_unstable();
    }
    total.calls = chains::looped_calls(p, &kept, &partial.hits);
    let chains = chains::block_chains(p, &kept);
    for ((chain, n), hits) in chains.iter().zip(steps).zip(&partial.hits) {
        if chain.cycles > 0 {
            total.cycles += u64::from(chain.cycles) * hits;
        }
        if chain.cycles > 0 || chain.under_loop_chain {
            total.steps += n * hits;
        }
        if chain.spilled {
            total.spilled += hits;
        }
    }
    total
}

/// The lanes of loads and stores a vectoriser gathers, and of those the
/// ones inside the kernel's loops between barriers: those whose addresses
/// do not count up, every lane of those whose address comes across a
/// barrier (`carried`), and the broadcast lanes of loads it must mask.
fn gathers(p: &program::Program, partial: &exec::Partial) -> counts::Gathers {
    let looped = program::in_loops_between_barriers(&p.code, &p.cases);
    let carried = carried::carried_addresses(p);
    let conditional = program::Conditional::new(&p.code, &p.cases, p.entry as usize);
    let mut total = counts::Gathers::default();
    let sites = partial.gathers.iter().zip(looped).zip(carried).enumerate();
    for (pc, ((rows, looped), carried)) in sites {
        let lanes = if carried {
            total.carried_lanes += rows.all - rows.gathered;
            rows.all
        } else if rows.broadcast > 0
            && matches!(p.code[pc], bytecode::Op::Load { .. })
            && conditional.at(pc)
        {
            total.masked_lanes += rows.broadcast;
            rows.gathered + rows.broadcast
        } else {
            rows.gathered
        };
        total.lanes += lanes;
        if looped {
            total.loop_lanes += lanes;
        }
    }
    total
}

/// Branches' passes and mispredictions, and of those the ones inside the
/// kernel's loops between barriers.
fn branches(p: &program::Program, partial: &exec::Partial) -> counts::Branches {
    let looped = program::in_loops_between_barriers(&p.code, &p.cases);
    let mut total = counts::Branches::default();
    for (predictor, looped) in partial.branches.iter().zip(looped) {
        total.executed += predictor.executed;
        total.mispredicted += predictor.mispredicted;
        if looped {
            total.loop_mispredicted += predictor.mispredicted;
        }
    }
    total
}

/// Work-items' runs of the headers of loops with a barrier that do not
/// begin at one (see `program::barrier_loop_headers`).
fn loop_barriers(p: &program::Program, partial: &exec::Partial) -> u64 {
    let headers = program::barrier_loop_headers(&p.code, &p.cases, p.entry as usize);
    p.code
        .iter()
        .zip(&headers)
        .filter_map(|(op, &header)| match op {
            bytecode::Op::Block { block, .. } if header => partial.hits.get(*block as usize),
            _ => None,
        })
        .sum()
}

fn label_for_local(label: &str) -> String {
    label.to_string()
}

fn describe_param(param: &ParamSlot) -> String {
    match param {
        ParamSlot::Pointer { space, .. } => format!("a {space} pointer"),
        ParamSlot::Value { size, .. } => format!("a {size}-byte value"),
        ParamSlot::ByVal { size, .. } => format!("a {size}-byte struct by value"),
        ParamSlot::Image { dim, .. } => format!("an {}", dim.name()),
        ParamSlot::Sampler { .. } => "a sampler".into(),
    }
}

/// `taken_len`: the size of a buffer whose bytes the run has taken over.
fn describe_value(value: &ArgValue, taken_len: Option<usize>) -> String {
    match value {
        ArgValue::Buffer { ty, bytes, .. } => {
            let len = taken_len.unwrap_or(bytes.len());
            format!(
                "a buffer of {} {ty} ({len} bytes)",
                len / ty.size_bytes().max(1)
            )
        }
        ArgValue::NullPointer => "NULL".into(),
        ArgValue::Scalar { bytes } => format!("a {}-byte value", bytes.len()),
        ArgValue::Local { bytes } => format!("{bytes} bytes of __local memory"),
        ArgValue::SameBuffer { arg } => format!("the buffer of arg {arg}"),
        ArgValue::Image { image, .. } => format!("an {} of {}", image.dim.name(), image.format),
        ArgValue::Sampler(_) => "a sampler".into(),
    }
}

/// Counts of the same key added up, in the order keys first appear;
/// zero counts left out.
fn merged(work: impl Iterator<Item = (WorkKey, u64)>) -> Vec<(WorkKey, u64)> {
    let mut out: Vec<(WorkKey, u64)> = Vec::new();
    let mut at: HashMap<WorkKey, usize> = HashMap::new();
    for (key, n) in work.filter(|(_, n)| *n > 0) {
        match at.get(&key) {
            Some(&i) => out[i].1 += n,
            None => {
                at.insert(key, out.len());
                out.push((key, n));
            }
        }
    }
    out
}

/// W and traffic per source line, lines in their order and what no line
/// names last; none where the module names no lines.
fn per_line(p: &program::Program, work: &[u64], traffic: Vec<Traffic>) -> Vec<LineCounts> {
    if p.source_lines.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<LineCounts> = traffic
        .into_iter()
        .enumerate()
        .map(|(id, traffic)| LineCounts {
            line: id.checked_sub(1).map(|i| p.source_lines[i].clone()),
            work: Vec::new(),
            traffic,
        })
        .collect();
    for ((key, line), n) in p.work_keys.iter().zip(work).filter(|(_, n)| **n > 0) {
        lines[*line as usize].work.push((*key, *n));
    }
    for line in &mut lines {
        line.work = merged(std::mem::take(&mut line.work).into_iter());
    }
    let unnamed = lines.remove(0);
    lines.sort_by(|a, b| a.line.cmp(&b.line));
    lines.push(unnamed);
    lines
}

fn geometry(launch: &Launch, sub_group: u32) -> Result<exec::Geometry, String> {
    let r = &launch.range;
    if !(1..=3).contains(&r.dims) {
        return Err(format!("{} dimensions (1 to 3 allowed)", r.dims));
    }
    let mut local = [1u64; 3];
    for d in 0..3 {
        if r.global[d] == 0 {
            return Err(format!("global size 0 in dimension {d}"));
        }
        local[d] = match r.local {
            Some(l) => l[d],
            None if d == 0 => (1..=DEFAULT_LOCAL_SIZE.min(r.global[0]))
                .rev()
                .find(|l| r.global[0].is_multiple_of(*l))
                .unwrap_or(1),
            None => 1,
        };
        if local[d] == 0 {
            return Err(format!("local size 0 in dimension {d}"));
        }
    }
    // A local size that does not divide the global size leaves a last,
    // smaller group (OpenCL 2.0); the manifest decides whether the kernel's
    // OpenCL version allows it.
    let groups = std::array::from_fn(|d| r.global[d].div_ceil(local[d]));
    if sub_group == 0 {
        return Err("a sub-group size of 0".into());
    }
    Ok(exec::Geometry {
        sub_group: sub_group as u64,
        dims: r.dims,
        global: r.global,
        local,
        groups,
        offset: r.offset,
    })
}
