//! Running a launch: its arguments bound (`bind`), the tier chosen, the
//! work-groups run (`exec`), the counts tallied (`tally`).

mod bind;
mod tally;

use crate::memory::GlobalMemory;
use crate::{
    exec, sample, AccessSink, Engine, InterpError, ItemOrder, KeptFault, OutputBuffer, Program,
    RunOptions, RunResult, Tier, TraceBuffer, Trap, TIER_UP_AFTER,
};
use clflow_bytecode::program::{self, ParamSlot};
use clflow_core::{ArgValue, Launch};
use std::borrow::Cow;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

/// The launch a run takes: borrowed (its buffers copied) or owned (its
/// buffers taken over), from a `&Launch`, a `Launch` or a `Cow`.
pub struct LaunchInput<'l>(Cow<'l, Launch>);

impl<'l> From<&'l Launch> for LaunchInput<'l> {
    fn from(launch: &'l Launch) -> Self {
        LaunchInput(Cow::Borrowed(launch))
    }
}

impl From<Launch> for LaunchInput<'_> {
    fn from(launch: Launch) -> Self {
        LaunchInput(Cow::Owned(launch))
    }
}

impl<'l> From<Cow<'l, Launch>> for LaunchInput<'l> {
    fn from(launch: Cow<'l, Launch>) -> Self {
        LaunchInput(launch)
    }
}

impl Program {
    /// Runs the kernel. A borrowed launch is copied; an owned one
    /// (`Launch` or `Cow::Owned`) gives its buffers to the run, so that no
    /// buffer is held twice (inputs of hundreds of megabytes).
    pub fn run<'l>(
        &self,
        launch: impl Into<LaunchInput<'l>>,
        options: &RunOptions,
    ) -> Result<RunResult, InterpError> {
        self.run_with(launch.into(), options, None)
    }

    /// [`Program::run`], handing every global and constant access to
    /// `sink`, work-group by work-group in order (see [`crate::trace`]).
    /// Counts and outputs are those of [`Program::run`].
    pub fn run_traced<'l>(
        &self,
        launch: impl Into<LaunchInput<'l>>,
        options: &RunOptions,
        sink: &mut dyn AccessSink,
    ) -> Result<RunResult, InterpError> {
        self.run_with(launch.into(), options, Some(sink))
    }

    fn run_with(
        &self,
        launch: LaunchInput<'_>,
        options: &RunOptions,
        sink: Option<&mut dyn AccessSink>,
    ) -> Result<RunResult, InterpError> {
        match launch.0 {
            Cow::Borrowed(launch) => {
                self.run_taking(launch, vec![None; launch.args.len()], options, sink)
            }
            Cow::Owned(mut launch) => {
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
        }
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
        let launch_error =
            |message: String| InterpError::Launch { kernel: p.kernel.clone(), message };
        let bound = bind::bind(
            p,
            launch,
            &mut taken,
            options.line_bytes,
            options.sub_group_size,
        )
        .map_err(launch_error)?;
        let global = GlobalMemory {
            buffers: bound.buffers,
            images: bound.images,
            wide_atomics: Mutex::new(()),
        };
        let touch_shift = sink
            .as_ref()
            .and_then(|s| s.line_touches())
            .map(u64::trailing_zeros);
        let mut launched = exec::Launched {
            program: p,
            global: &global,
            geometry: bound.geometry,
            local_layout: bound.local_layout,
            regs: bound.regs,
            private_init: bound.private_init,
            max_steps: options.max_steps,
            keep_going: options.keep_going,
            uninit: options.uninit,
            simd: options.simd,
            order: item_order(p, options.order),
            undefined: undefined_bytes(&global, options),
            native: exec::native::Tiering::never(),
            touch_shift,
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
            self.announce(*sink, launch, &launched)
                .map_err(launch_error)?;
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
        let engine = engine(p, never, &launched);
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
        let counts = self.tally(&partial, &global, &launched.geometry, options, line_scale);
        // Threads took work-groups in any order; each kept its own in order.
        partial.printed.sort_by_key(|(group, _)| *group);
        Ok(RunResult {
            sample: sampled.map(|s| s.report(&counts)),
            counts,
            buffers: outputs(launch, &global),
            printed: partial.printed.into_iter().map(|(_, p)| p).collect(),
            faults,
            engine,
            order: launched.order,
        })
    }

    /// Tells a trace's sink the buffers it will see accesses to (the
    /// launch's, the program's, and `__local` ones where it asks) and how
    /// many work-groups.
    fn announce(
        &self,
        sink: &mut dyn AccessSink,
        launch: &Launch,
        launched: &exec::Launched<'_>,
    ) -> Result<(), String> {
        let mut buffers: Vec<TraceBuffer> = launched
            .global
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
            return Err(format!(
                "{} buffers are more than a trace can name ({})",
                buffers.len(),
                clflow_counts::access::MOST_TRACE_BUFFERS
            ));
        }
        sink.buffers(&buffers);
        sink.work_groups(launched.geometry.groups.iter().product());
        Ok(())
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
}

/// Work-group functions and copies take the whole group at once.
fn item_order(p: &program::Program, asked: ItemOrder) -> ItemOrder {
    let whole_group = |op: &clflow_bytecode::Op| {
        matches!(
            op,
            clflow_bytecode::Op::Collective { .. } | clflow_bytecode::Op::GroupCopy { .. }
        )
    };
    if p.code.iter().any(whole_group) {
        ItemOrder::Lockstep
    } else {
        asked
    }
}

/// The shadow of each buffer whose bytes start undefined, where the run
/// follows undefined values.
fn undefined_bytes(global: &GlobalMemory, options: &RunOptions) -> exec::GlobalShadow {
    global
        .buffers
        .iter()
        .enumerate()
        .map(|(i, b)| {
            (options.uninit && options.undefined.contains(&i))
                .then(|| (0..b.len).map(|_| AtomicU8::new(1)).collect())
        })
        .collect()
}

/// What ran the kernel, and why not the compiled tier where it did not.
fn engine(p: &program::Program, never: Option<String>, launched: &exec::Launched<'_>) -> Engine {
    match (never, launched.native.outcome()) {
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
    }
}

/// The bytes of the launch's output buffers and images, as the run left them.
fn outputs(launch: &Launch, global: &GlobalMemory) -> Vec<OutputBuffer> {
    launch
        .args
        .iter()
        .enumerate()
        .filter(|(_, a)| match &a.value {
            ArgValue::Buffer { access, .. } | ArgValue::Image { access, .. } => access.is_output(),
            _ => false,
        })
        .map(|(i, a)| OutputBuffer {
            arg: i,
            name: a.name.clone(),
            bytes: global.buffers[i].to_bytes(),
        })
        .collect()
}
