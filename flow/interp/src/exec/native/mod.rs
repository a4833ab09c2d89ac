//! The compiled tier: a launch's bytecode translated once to native code
//! (Cranelift) that runs one work-item from start to end, its registers in
//! machine registers, its loads and stores straight to the buffers.
//!
//! It counts what the interpreter counts, the same way: each block's hits
//! (from which W and the fixed-size traffic follow, `counts`), each
//! buffer's lines touched, each work-item's steps against the step limit.
//! It runs a kernel only where running work-items one after the other
//! cannot differ from running them together (`eligible`): no barriers,
//! work-group functions, atomics, local or private memory, printf, images
//! or async copies, and only ops it compiles. Where a run needs more than
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

use super::{Fault, Launched, Partial};
use crate::bytecode::Op;
use crate::error::TrapKind;
use crate::memory::BufferView;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};

/// The compiled kernel: `(env, ids, hits)` runs one work-item; `ids` holds
/// its global id, local id and group id (3 each), `hits` is the thread's
/// per-block count. Returns 0, or 1 after a fault kept in `env`.
type KernelFn = unsafe extern "C" fn(*mut Env, *const u64, *mut u64) -> u64;

/// What compiled code and its helpers share for one work-item.
#[repr(C)]
pub(crate) struct Env<'a> {
    /// Nonzero once a fault is kept: compiled code reads it (at offset 0)
    /// after each call that may fault.
    faulted: u64,
    fault: Option<(usize, TrapKind)>,
    launch: &'a Launched<'a>,
    group: [u64; 3],
    local_id: [u64; 3],
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
    /// What compiled code reads of each global buffer; it points here.
    _views: Box<[BufferView]>,
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
    if program.uses_barrier {
        return Some("it has barriers".into());
    }
    if program.private.total() > 0 || launch.local_layout.total() > 0 {
        return Some("it has private or local memory".into());
    }
    if !launch.private_init.is_empty() {
        return Some("it takes arguments by value in private memory".into());
    }
    program
        .code
        .iter()
        .find(|op| !emit::compiles(op))
        .map(|op| format!("the compiled tier does not run {}", op_name(op)))
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
        let isa = cranelift_native::builder()
            .map_err(|e| format!("no native code generator for this CPU: {e}"))?;
        let mut flags = settings::builder();
        for (name, value) in [
            ("opt_level", "speed"),
            ("use_colocated_libcalls", "false"),
            ("is_pic", "false"),
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
        emit::kernel(&mut context.func, target, launch, &views)?;
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
            _memory: Memory(Some(module)),
        })
    }

    /// Runs work-group `index`, its work-items in the interpreter's lane
    /// order, adding to `partial` its block hits and, with
    /// `Launched::keep_going`, the faults that stop one work-item.
    pub(super) fn run_group(
        &self,
        launch: &Launched<'_>,
        index: u64,
        partial: &mut Partial,
    ) -> Result<(), Fault> {
        let g = &launch.geometry;
        let group = g.group_of(index);
        let size = g.local_size_of(group);
        let mut env = Env {
            faulted: 0,
            fault: None,
            launch,
            group,
            local_id: [0; 3],
        };
        let origin = g.global_id(group, [0; 3]);
        for z in 0..size[2] {
            for y in 0..size[1] {
                for x in 0..size[0] {
                    let lid = [x, y, z];
                    env.local_id = lid;
                    let ids = [
                        origin[0] + x,
                        origin[1] + y,
                        origin[2] + z,
                        x,
                        y,
                        z,
                        group[0],
                        group[1],
                        group[2],
                    ];
                    // SAFETY: `run` was compiled for this launch, whose
                    // buffers (`_views`) outlive the call; `ids` holds the
                    // nine ids it reads and `hits` one count per block of
                    // the program (every block index it adds to).
                    let hits = partial.hits.as_mut_ptr();
                    let status = unsafe { (self.run)(&mut env, ids.as_ptr(), hits) };
                    if status != 0 {
                        let (pc, kind) = env.fault.take().unwrap_or((0, TrapKind::Unreachable));
                        env.faulted = 0;
                        let fault = Fault {
                            pc,
                            item: [ids[0], ids[1], ids[2]],
                            kind,
                        };
                        if !(launch.keep_going && fault.kind.stops_one()) {
                            return Err(fault);
                        }
                        partial.keep_fault(index, fault, 1, &[]);
                    }
                }
            }
        }
        Ok(())
    }
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
