//! The compiled tier: a launch's bytecode translated once to native code
//! (Cranelift) that runs one work-item from start to end, its registers in
//! machine registers, its loads and stores straight to the buffers.
//!
//! It counts what the interpreter counts, the same way: each block's hits
//! (from which W and the fixed-size traffic follow, `counts`), each
//! buffer's lines touched, each work-item's steps against the step limit.
//! It runs a kernel only where running work-items one after the other
//! cannot differ from running them together (`ineligible`): no work-group
//! functions, printf, images or async copies, no atomic function whose old
//! value is used, and only ops it compiles. At a barrier a work-item saves its registers and returns;
//! once every work-item of the group waits there, each goes on from where
//! it stopped (as the OpenCL CPU runtimes run kernels with barriers). Local memory is the work-group's (fresh for each
//! group), private memory the work-item's (fresh for each item, with the
//! by-value arguments copied in), as in the interpreter. Where a run needs more than
//! counts and outputs (a trace, `--detect`, SIMD use, going on after a
//! fault), the interpreter runs it. The interpreter stays the reference:
//! tests run every corpus kernel both ways and compare every count and
//! output byte.
//!
//! A fault stops the work-item where the interpreter would: the compiled
//! check is the interpreter's (bounds, alignment, null, step limit,
//! division by zero), and the interpreter's own code says what went wrong.

mod emit;
mod helpers;
mod live;
pub(crate) use live::{reads_writes, Spans};
mod provenance;

use super::recorder::Recorder;
use super::{Fault, Launched, Partial};
use crate::error::TrapKind;
use crate::memory::{ArenaLayout, BufferView};
use crate::trace::{LineTouch, CHUNK_ACCESSES};
use clflow_bytecode::{family, Op};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The compiled kernel: `(env, ids, hits, registers, resume)` runs one
/// work-item to its end or its next barrier; `ids` holds its global id,
/// local id and group id (3 each), `hits` is the thread's per-block count,
/// `registers` where it keeps its registers across a barrier. `resume` 0
/// starts it, k + 1 goes on after barrier site k. Returns 0 at its end, 1
/// after a fault kept in `env`, k + 2 at barrier site k.
type KernelFn = unsafe extern "C" fn(*mut Env, *const u64, *mut u64, *mut u64, u64) -> u64;

/// Where `helpers::new_touch` writes a traced work-group's line touches: into
/// the room its recorder's list has (`Recorder::lines`), a touch of a line
/// the group touched already folding into that one (`LineTouch`).
#[repr(C)]
struct TouchOut {
    /// Where the next touch goes, and the end of the room.
    next: *mut LineTouch,
    end: *mut LineTouch,
    /// The group's table of recent lines: per slot (`LineTouch::slot`), the
    /// key of the line that holds it (`u64::MAX`: none) and its touch.
    table: *mut Slot,
    /// Bytes accessed (an atomic's twice).
    accessed: u64,
}

/// Slots in a work-group's table of recent lines.
const SLOTS: usize = LineTouch::SLOTS as usize;

/// A slot of the table of recent lines.
#[derive(Clone, Copy)]
#[repr(C)]
struct Slot {
    key: u64,
    touch: *mut LineTouch,
}

/// An empty slot.
const NO_SLOT: Slot = Slot { key: u64::MAX, touch: std::ptr::null_mut() };

/// What compiled code and its helpers share for one work-item.
#[repr(C)]
pub(crate) struct Env<'a> {
    /// Nonzero once a fault is kept: compiled code reads it (at offset 0)
    /// after each call that may fault.
    faulted: u64,
    /// The work-group's local memory and the work-item's private memory.
    local: *mut u8,
    private: *mut u8,
    /// The thread's line sets (`Partial::lines`), read then written for
    /// each global buffer.
    lines: *const *mut u64,
    fault: Option<(usize, TrapKind)>,
    launch: &'a Launched<'a>,
    group: [u64; 3],
    local_id: [u64; 3],
    touches: TouchOut,
    /// The traced work-group's recorder (null where untraced), whose list
    /// `touches` writes into.
    recorder: *mut Recorder<'a>,
}

impl<'a> Env<'a> {
    /// Room for touches after the `recorder`'s list as it stands; where the
    /// list moves, the table's touches move with it.
    fn room(&mut self) {
        // SAFETY: `recorder` is the one `Native::run_group` was handed,
        // borrowed for the whole group; nothing else uses it meanwhile.
        let lines = unsafe { &mut (*self.recorder).lines };
        let was = lines.as_ptr();
        if lines.spare_capacity_mut().is_empty() {
            lines.reserve(lines.len().clamp(1024, CHUNK_ACCESSES));
        }
        let spare = lines.spare_capacity_mut().as_mut_ptr_range();
        self.touches.next = spare.start.cast();
        self.touches.end = spare.end.cast();
        let now = lines.as_mut_ptr();
        if now.cast_const() != was {
            for slot in self.table() {
                if !slot.touch.is_null() {
                    // The slot's touch lay in the list as it was: the moved
                    // list holds it at the same index.
                    let index = (slot.touch.addr() - was.addr()) / std::mem::size_of::<LineTouch>();
                    // SAFETY: the list holds the touches up to `next`, this
                    // one among them.
                    slot.touch = unsafe { now.add(index) };
                }
            }
        }
    }

    /// The group's table of recent lines.
    fn table(&mut self) -> &mut [Slot] {
        // SAFETY: `table` is the group's `LineTouch::SLOTS` slots
        // (`Native::run_group`), which only compiled code running for this
        // `Env` reads and writes otherwise.
        unsafe { std::slice::from_raw_parts_mut(self.touches.table, SLOTS) }
    }

    /// Takes the touches `helpers::new_touch` wrote into the recorder's list.
    fn keep_touches(&mut self) {
        if self.recorder.is_null() {
            return;
        }
        // SAFETY: as in `room`; `new_touch` wrote whole `LineTouch`es
        // from the list's end up to `next`, inside the room `room` gave.
        unsafe {
            let lines = &mut (*self.recorder).lines;
            let written = self
                .touches
                .next
                .offset_from(lines.as_ptr().add(lines.len()));
            lines.set_len(lines.len() + written as usize);
            (*self.recorder).accessed += std::mem::take(&mut self.touches.accessed);
        }
    }
}

impl Env<'_> {
    fn keep(&mut self, pc: u32, kind: TrapKind) {
        self.faulted = 1;
        self.fault.get_or_insert((pc as usize, kind));
    }
}

/// A launch's kernel, compiled.
pub struct Native {
    run: KernelFn,
    /// What compiled code reads of each global buffer and of the local
    /// and private arenas' layouts; it points here.
    _views: Box<[BufferView]>,
    _layouts: [Box<[u64]>; 2],
    /// The pc of each barrier the code may stop at, by site.
    barriers: Vec<u32>,
    _memory: Memory,
}

impl std::fmt::Debug for Native {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Native")
    }
}

/// Why a launch runs in the interpreter: the first thing the compiled tier
/// does not run, or `None` where it runs the launch.
pub fn ineligible(launch: &Launched<'_>) -> Option<String> {
    let program = launch.program;
    if let Some(op) = program.code.iter().find(|op| !compiles(op)) {
        return Some(format!("the compiled tier does not run {}", op_name(op)));
    }
    // An atomic's old value depends on the order work-items run in: the
    // tier runs atomics whose old value no op reads.
    let mut read = vec![false; launch.regs.len()];
    for op in &program.code {
        for (first, n) in live::reads_writes(op, program).0 {
            let span = first.index()..(first.index() + n as usize).min(read.len());
            read.get_mut(span)
                .into_iter()
                .flatten()
                .for_each(|r| *r = true);
        }
    }
    let used = program.code.iter().any(|op| {
        matches!(*op, Op::Atomic { dst, .. } if read.get(dst.index()).copied().unwrap_or(true))
    });
    used.then(|| "an atomic function's old value is used".to_string())
}

fn op_name(op: &Op) -> String {
    let text = format!("{op:?}");
    text.split([' ', '{', '('])
        .next()
        .unwrap_or_default()
        .to_string()
}

impl Native {
    /// Compiles `launch`'s kernel; an error says why it cannot be (the
    /// launch then runs in the interpreter).
    pub fn compile(launch: &Launched<'_>) -> Result<Native, String> {
        if let Some(why) = ineligible(launch) {
            return Err(why);
        }
        let views: Box<[BufferView]> = launch.global.buffers.iter().map(|b| b.view()).collect();
        let layout = |l: &ArenaLayout| -> Box<[u64]> {
            l.base
                .iter()
                .zip(&l.size)
                .flat_map(|(b, s)| [*b, *s])
                .collect()
        };
        let layouts = [
            layout(&launch.local_layout),
            layout(&launch.program.private),
        ];
        let arena = |i: usize, env_field: usize| emit::ArenaView {
            buffers: layouts[i].len() as u64 / 2,
            layout: layouts[i].as_ptr() as i64,
            env_field: env_field as i32,
        };
        let arenas = [
            arena(0, std::mem::offset_of!(Env, local)),
            arena(1, std::mem::offset_of!(Env, private)),
        ];
        let isa = cranelift_native::builder()
            .map_err(|e| format!("no native code generator for this CPU: {e}"))?;
        let mut flags = settings::builder();
        for (name, value) in [
            ("opt_level", "speed"),
            ("use_colocated_libcalls", "false"),
            ("is_pic", "false"),
            // The verifier checks the emitter's IR: a quarter of the time a
            // compile takes, spent where tests run, not where users count.
            (
                "enable_verifier",
                if cfg!(debug_assertions) {
                    "true"
                } else {
                    "false"
                },
            ),
        ] {
            flags.set(name, value).map_err(|e| e.to_string())?;
        }
        let isa = isa
            .finish(settings::Flags::new(flags))
            .map_err(|e| e.to_string())?;
        let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
        let mut context = module.make_context();
        let target = (
            module.target_config().pointer_type(),
            module.isa().default_call_conv(),
        );
        let lines = std::mem::offset_of!(Env, lines) as i32;
        let barriers = emit::kernel(&mut context.func, target, launch, &views, arenas, lines)?;
        let id = module
            .declare_function("kernel", Linkage::Local, &context.func.signature)
            .map_err(|e| e.to_string())?;
        module
            .define_function(id, &mut context)
            .map_err(|e| format!("{e:?}"))?;
        module.finalize_definitions().map_err(|e| e.to_string())?;
        let address = module.get_finalized_function(id);
        // SAFETY: `emit::kernel` built the function with the parameters and
        // result of `KernelFn`, in the host's default C convention.
        let run = unsafe { std::mem::transmute::<*const u8, KernelFn>(address) };
        Ok(Native {
            run,
            _views: views,
            _layouts: layouts,
            barriers,
            _memory: Memory(Some(module)),
        })
    }

    /// Runs work-group `index`, its work-items in the interpreter's lane
    /// order, adding to `partial` its block hits and, with
    /// `Launched::keep_going`, the faults that stop one work-item. With
    /// barriers, each runs to the next barrier in turn, and the group goes
    /// on once all wait at the same one (or have been stopped).
    ///
    /// With a `recorder`, each work-item's line touches go to its list.
    pub(super) fn run_group<'a>(
        &self,
        launch: &'a Launched<'a>,
        index: u64,
        partial: &mut Partial,
        recorder: Option<&mut Recorder<'a>>,
    ) -> Result<(), Fault> {
        let g = &launch.geometry;
        let group = g.group_of(index);
        let size = g.local_size_of(group);
        let items = size.iter().product::<u64>() as usize;
        let origin = g.global_id(group, [0; 3]);
        // Each work-item's ids once: global, local, group (as `KernelFn`
        // takes them), local ids counted on in the interpreter's order.
        let mut ids = Vec::with_capacity(items);
        for z in 0..size[2] {
            for y in 0..size[1] {
                for x in 0..size[0] {
                    let [ox, oy, oz] = origin;
                    let [gx, gy, gz] = group;
                    ids.push([ox + x, oy + y, oz + z, x, y, z, gx, gy, gz]);
                }
            }
        }
        // Fresh for each work-group and each work-item, as the
        // interpreter's arenas are; where work-items wait at barriers, each
        // keeps its own private memory and registers.
        let slots = if self.barriers.is_empty() { 1 } else { items };
        let private_bytes = launch.program.private.total() as usize;
        let state_words = launch.regs.len() + 1;
        let mut local = vec![0u8; launch.local_layout.total() as usize];
        let mut private = vec![0u8; private_bytes * slots];
        let mut state = vec![0u64; state_words * slots];
        if partial.lines.is_empty() {
            partial.lines = launch
                .global
                .buffers
                .iter()
                .flat_map(|b| {
                    [
                        vec![0; b.read_lines.words()],
                        vec![0; b.written_lines.words()],
                    ]
                })
                .collect();
        }
        let lines: Vec<*mut u64> = partial.lines.iter_mut().map(|l| l.as_mut_ptr()).collect();
        let mut table = [NO_SLOT; SLOTS];
        let mut env = Env {
            faulted: 0,
            local: local.as_mut_ptr(),
            private: private.as_mut_ptr(),
            lines: lines.as_ptr(),
            fault: None,
            launch,
            group,
            local_id: [0; 3],
            touches: TouchOut {
                next: std::ptr::null_mut(),
                end: std::ptr::null_mut(),
                table: table.as_mut_ptr(),
                accessed: 0,
            },
            recorder: recorder.map_or(std::ptr::null_mut(), |r| r as *mut Recorder<'a>),
        };
        if !env.recorder.is_null() {
            env.room();
        }
        let ran = self.run_items(
            &mut env,
            (&ids, slots),
            (&mut private, &mut state),
            partial,
            index,
        );
        env.keep_touches();
        ran
    }

    /// Runs a group's work-items (`Native::run_group`), each on from where
    /// it stopped, until all are done.
    fn run_items(
        &self,
        env: &mut Env<'_>,
        (ids, slots): (&[[u64; 9]], usize),
        (private, state): (&mut [u8], &mut [u64]),
        partial: &mut Partial,
        index: u64,
    ) -> Result<(), Fault> {
        let launch = env.launch;
        let items = ids.len();
        let private_bytes = launch.program.private.total() as usize;
        let state_words = launch.regs.len() + 1;
        let global_id = |item: usize| [ids[item][0], ids[item][1], ids[item][2]];
        let mut at = vec![Item::Start; items];
        loop {
            for (item, at) in at.iter_mut().enumerate() {
                let resume = match *at {
                    Item::Start => 0,
                    Item::After(site) => site as u64 + 1,
                    _ => continue,
                };
                let slot = item % slots;
                let these = &ids[item];
                env.local_id = [these[3], these[4], these[5]];
                let mine = &mut private[slot * private_bytes..(slot + 1) * private_bytes];
                if resume == 0 && !mine.is_empty() {
                    mine.fill(0);
                    for (at, bytes) in &launch.private_init {
                        mine[*at..*at + bytes.len()].copy_from_slice(bytes);
                    }
                }
                env.private = mine.as_mut_ptr();
                let hits = partial.hits.as_mut_ptr();
                let registers = state[slot * state_words..].as_mut_ptr();
                // SAFETY: `run` was compiled for this launch, whose
                // buffers (`_views`) outlive the call; `env` points at
                // arenas of the sizes its layouts (`_layouts`) give and
                // `registers` at the `regs.len() + 1` words it saves and
                // restores; `ids` holds the nine ids it reads and `hits`
                // one count per block of the program (every block index
                // it adds to).
                let status = unsafe { (self.run)(env, these.as_ptr(), hits, registers, resume) };
                *at = match status {
                    0 => Item::Done,
                    1 => {
                        let (pc, kind) = env.fault.take().unwrap_or((0, TrapKind::Unreachable));
                        env.faulted = 0;
                        let fault = Fault { pc, item: global_id(item), kind };
                        if !(launch.keep_going && fault.kind.stops_one()) {
                            return Err(fault);
                        }
                        partial.keep_fault(index, fault, 1, &[]);
                        Item::Stopped
                    }
                    k => Item::Waiting(k as usize - 2),
                };
            }
            if !self.release_barrier(launch, &mut at, global_id)? {
                return Ok(());
            }
        }
    }

    /// With every work-item waiting, stopped or done: lets the ones
    /// waiting go on if all wait at the same barrier, as the interpreter
    /// does (and fails as it does where they do not); false if none waits.
    fn release_barrier(
        &self,
        launch: &Launched<'_>,
        at: &mut [Item],
        global_id: impl Fn(usize) -> [u64; 3],
    ) -> Result<bool, Fault> {
        let waiting = |item: &Item| match item {
            Item::Waiting(site) => Some(self.barriers[*site] as usize),
            _ => None,
        };
        let Some(first) = at.iter().position(|i| waiting(i).is_some()) else {
            return Ok(false);
        };
        let barrier = waiting(&at[first]).unwrap_or_default();
        let name = |item: usize| {
            let [x, y, z] = global_id(item);
            format!("({x},{y},{z})")
        };
        for (item, state) in at.iter().enumerate() {
            let kind = match (state, waiting(state)) {
                (_, Some(pc)) if pc != barrier => (pc, item, format!(
                    "this work-item waits at a different barrier than work-item {} ({})",
                    name(first),
                    launch.program.site(barrier)
                )),
                (Item::Done, _) => (barrier, first, format!(
                    "this work-item waits at a barrier that work-item {} never reached (it returned)",
                    name(item)
                )),
                _ => continue,
            };
            let (pc, item, why) = kind;
            return Err(Fault {
                pc,
                item: global_id(item),
                kind: TrapKind::BarrierDivergence(why),
            });
        }
        for state in at.iter_mut() {
            if let Item::Waiting(site) = *state {
                *state = Item::After(site);
            }
        }
        Ok(true)
    }
}

/// Where a work-item of the group being run is.
#[derive(Clone, Copy)]
enum Item {
    Start,
    /// Stopped at barrier site k (`Native::barriers`).
    Waiting(usize),
    /// To go on after barrier site k.
    After(usize),
    Done,
    /// Stopped by a fault the run goes on after.
    Stopped,
}

/// Whether, and when, the compiled tier takes over a launch from the
/// interpreter. Work-groups are independent, so a launch may switch
/// between them: the interpreter starts, and once it has run for a while
/// the kernel is compiled and the groups left run compiled. A launch over
/// sooner, or so nearly over then that the interpreter would finish
/// before the compile, never pays for compiling.
pub struct Tiering {
    /// Compile once the launch has run this long, where the interpreter
    /// has as long again or more left to run; `None`: never (or already
    /// done).
    after: Option<Duration>,
    started: Instant,
    /// Whether a worker compiles: the others go on interpreting.
    claimed: AtomicBool,
    compiled: OnceLock<Result<Native, String>>,
}

impl Tiering {
    pub fn never() -> Tiering {
        Tiering {
            after: None,
            started: Instant::now(),
            claimed: AtomicBool::new(false),
            compiled: OnceLock::new(),
        }
    }

    /// Compiled already (or failed to be).
    pub fn done(compiled: Result<Native, String>) -> Tiering {
        let tiering = Tiering::never();
        let _ = tiering.compiled.set(compiled);
        tiering
    }

    pub fn after(after: Duration) -> Tiering {
        Tiering { after: Some(after), ..Tiering::never() }
    }

    /// The compiled kernel, once there is one.
    pub(super) fn native(&self) -> Option<&Native> {
        self.compiled.get().and_then(|c| c.as_ref().ok())
    }

    /// The compiled kernel, compiled now if the launch may run compiled
    /// and it is not yet (one thread compiles, the others wait for it).
    pub(crate) fn now(&self, launch: &Launched<'_>) -> Option<&Native> {
        if self.after.is_none() && self.compiled.get().is_none() {
            return None;
        }
        let compiled = self.compiled.get_or_init(|| Native::compile(launch));
        compiled.as_ref().ok()
    }

    /// Compiles `launch`'s kernel if it is time, `finished` of its
    /// work-groups being done and `waiting` not yet started (those could
    /// run compiled): one worker compiles, the others go on interpreting
    /// meanwhile.
    pub(super) fn check(&self, launch: &Launched<'_>, finished: u64, waiting: u64) {
        let Some(after) = self.after else {
            return;
        };
        if self.claimed.load(Ordering::Relaxed) || self.compiled.get().is_some() {
            return;
        }
        let compile = compile_estimate(launch.program.code.len());
        if !worth_compiling(self.started.elapsed(), after, compile, finished, waiting) {
            return;
        }
        if !self.claimed.swap(true, Ordering::AcqRel) {
            self.compiled.get_or_init(|| Native::compile(launch));
        }
    }

    /// What compiling came to, if the launch got that far.
    pub fn outcome(&self) -> Option<&Result<Native, String>> {
        self.compiled.get()
    }
}

/// What compiling a kernel takes per bytecode instruction, about: 30 to 45
/// µs for most of the corpus and of the launches captured from CLBlast and
/// pyopencl (20 instructions in 1 ms, lookup3's 214 in 8 ms, a GEMM's
/// 4,867 in 184 ms), a few up to twice that.
const COMPILE_PER_INSTRUCTION: Duration = Duration::from_micros(50);

/// How long compiling a kernel of `instructions` bytecode instructions
/// is taken to take.
pub(crate) fn compile_estimate(instructions: usize) -> Duration {
    COMPILE_PER_INSTRUCTION * instructions as u32
}

/// Whether a launch that has run `elapsed`, finished `finished` work-groups
/// and not yet started `waiting` is worth compiling, where the compile is
/// taken to take `compile`: it has run `after` or longer, and the
/// interpreter, at its pace so far, would take as long again or as long as
/// the compile, whichever is longer, over the groups waiting (those started
/// finish as they began).
fn worth_compiling(
    elapsed: Duration,
    after: Duration,
    compile: Duration,
    finished: u64,
    waiting: u64,
) -> bool {
    let left = waiting as f64 / finished.max(1) as f64;
    elapsed >= after && elapsed.mul_f64(left) >= after.max(compile)
}

/// The JIT module that owns the compiled code's memory.
struct Memory(Option<JITModule>);

// SAFETY: after `finalize_definitions` the module is only kept, never used,
// until `Drop` frees it with exclusive access: it holds the read-only,
// executable code `Native::run` points into. Calling that code from
// several threads at once is sound: each call reads and writes only what
// its caller hands it and the buffers, as the interpreter's threads do.
unsafe impl Send for Memory {}
unsafe impl Sync for Memory {}

impl Drop for Memory {
    fn drop(&mut self) {
        if let Some(module) = self.0.take() {
            // SAFETY: `Native` owns this and the function pointer together;
            // once it drops, nothing can call the code.
            unsafe { module.free_memory() };
        }
    }
}

/// Whether the compiled tier runs `op`.
pub(super) fn compiles(op: &Op) -> bool {
    match op {
        Op::Load { size, .. } | Op::Store { size, .. } => matches!(size, 1 | 2 | 4 | 8),
        // 32-bit read-modify-writes whose old value nobody reads (see
        // `ineligible`): memory ends the same in whatever order work-items
        // make them. (64-bit ones take a lock in the interpreter, which a
        // launch switching tiers would race against.)
        Op::Atomic { op, bits: 32, .. } => emit::rmw(*op).is_some(),
        family!(Block) | family!(Scalar) | family!(Fused) | family!(Float) => true,
        Op::Int { .. }
        | Op::IntUn { .. }
        | Op::IntTer { .. }
        | Op::Cmp { .. }
        | Op::Select { .. }
        | Op::Logic { .. }
        | Op::LNot { .. }
        | Op::Ptr { .. }
        | Op::Builtin { .. } => true,
        family!(Control) => !matches!(op, Op::Trap),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{compile_estimate, worth_compiling};
    use std::time::Duration;

    #[test]
    fn a_launch_compiles_after_10_ms_where_as_long_is_left() {
        let ms = Duration::from_millis;
        let after = ms(10);
        // A small kernel's compile: lookup3's 214 instructions, 10.7 ms.
        let small = compile_estimate(214);
        assert_eq!(small, Duration::from_micros(10_700));
        // Not before 10 ms, however much is left.
        assert!(!worth_compiling(ms(9), after, small, 1, 999));
        // At 12 ms with a fifth done: 48 ms left.
        assert!(worth_compiling(ms(12), after, small, 200, 800));
        // Half done at 11 ms: 11 ms left, as long as the compile is taken to be.
        assert!(worth_compiling(ms(11), after, small, 500, 500));
        // Three quarters done at 12 ms: 4 ms left, sooner over interpreted.
        assert!(!worth_compiling(ms(12), after, small, 750, 250));
        assert!(!worth_compiling(ms(50), after, small, 1000, 0));
        // One of four large groups done at 30 ms, one waiting: 30 ms left.
        assert!(worth_compiling(ms(30), after, small, 1, 1));
        // One of three done, the other two started: none could run compiled.
        assert!(!worth_compiling(ms(30), after, small, 1, 0));
    }

    #[test]
    fn a_large_kernel_compiles_only_where_its_compile_would_pay() {
        let ms = Duration::from_millis;
        // A GEMM of 4,867 instructions: about a quarter of a second.
        let large = compile_estimate(4_867);
        assert_eq!(large, ms(243) + Duration::from_micros(350));
        // A fifth done at 12 ms: 48 ms left, not worth it.
        assert!(!worth_compiling(ms(12), ms(10), large, 200, 800));
        // A hundredth done at 10 ms: 990 ms left.
        assert!(worth_compiling(ms(10), ms(10), large, 10, 990));
    }
}
