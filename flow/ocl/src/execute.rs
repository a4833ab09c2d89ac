//! Running a `clflow_core::Launch` on one OpenCL device: buffers from the
//! launch's bytes, every argument set with its exact size, the NDRange
//! enqueued with profiling on, and the kernel's START→END time read back.

use crate::discovery::OclDevice;
use crate::error::{OclError, Result, Step};
use crate::program::{build_kernel, ProgramSource};
use clflow_core::{Access, ArgValue, Launch};
use opencl3::command_queue::{enqueue_nd_range_kernel, CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::error_codes::CL_INVALID_WORK_GROUP_SIZE;
use opencl3::event::Event;
use opencl3::kernel::{set_kernel_arg, Kernel};
use opencl3::memory::{
    Buffer, ClMem, CL_MEM_COPY_HOST_PTR, CL_MEM_READ_ONLY, CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY,
};
use opencl3::program::Program;
use opencl3::types::{cl_mem, CL_BLOCKING};
use serde::{Deserialize, Serialize};
use std::ffi::c_void;
use std::time::{Duration, Instant};

/// What one launch produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchResult {
    /// The bytes of every buffer the kernel may write (access `wo`/`rw`),
    /// in argument order; `None` for read-only buffers and non-buffer args.
    pub outputs: Vec<Option<Vec<u8>>>,
    /// Kernel execution time, profiling START to END, in nanoseconds.
    pub kernel_ns: u64,
    /// Host time spent building the program (the runtime's compiler).
    pub build_ns: u64,
}

/// Kernel times of repeated launches on the same buffers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatedTimings {
    pub build_ns: u64,
    /// The untimed-for-statistics launches that absorb JIT and cache warm-up.
    pub warmup_ns: Vec<u64>,
    pub runs_ns: Vec<u64>,
}

/// Builds `source`, runs `launch` once on `device`, and reads its outputs back.
pub fn run_launch(
    device: &OclDevice,
    source: &ProgramSource,
    launch: &Launch,
) -> Result<LaunchResult> {
    let mut prepared = PreparedLaunch::new(device, source, launch)?;
    let kernel_ns = prepared.launch()?;
    Ok(LaunchResult {
        outputs: prepared.read_outputs()?,
        kernel_ns,
        build_ns: duration_ns(prepared.build_time),
    })
}

/// Builds `source` and launches it `warmup` times, then `runs` timed times.
pub fn time_repeated(
    device: &OclDevice,
    source: &ProgramSource,
    launch: &Launch,
    warmup: usize,
    runs: usize,
) -> Result<RepeatedTimings> {
    let mut prepared = PreparedLaunch::new(device, source, launch)?;
    let warmup_ns = prepared.time_repeated(warmup)?;
    let runs_ns = prepared.time_repeated(runs)?;
    Ok(RepeatedTimings {
        build_ns: duration_ns(prepared.build_time),
        warmup_ns,
        runs_ns,
    })
}

/// A launch whose program is built and whose buffers and arguments are in
/// place on the device, ready to be enqueued any number of times.
pub struct PreparedLaunch<'a> {
    launch: &'a Launch,
    queue: CommandQueue,
    kernel: Kernel,
    /// One device buffer per argument that is a buffer, in argument order.
    buffers: Vec<Option<Buffer<u8>>>,
    /// Host time of the program build.
    pub build_time: Duration,
    /// What the runtime printed on stderr while it built the program
    /// (warnings, progress), captured so that it is shown only on request.
    pub build_chatter: String,
    // Kept alive for the kernel's sake; dropped last.
    _program: Program,
    _context: Context,
}

impl<'a> PreparedLaunch<'a> {
    pub fn new(device: &OclDevice, source: &ProgramSource, launch: &'a Launch) -> Result<Self> {
        let kernel_name = launch.kernel.as_str();
        let context = Context::from_device(&device.device)
            .step(|| format!("creating a context on {}", device.info.label()))?;
        // clCreateCommandQueue (OpenCL 1.x) is the call every runtime has,
        // Oclgrind's 1.2 included.
        let queue = unsafe {
            CommandQueue::create(&context, device.device.id(), CL_QUEUE_PROFILING_ENABLE)
        }
        .step(|| format!("creating a profiling queue on {}", device.info.label()))?;

        let started = Instant::now();
        let (program, kernel, build_chatter) = build_kernel(&context, device, source, kernel_name)?;
        let build_time = started.elapsed();

        let wanted = kernel
            .num_args()
            .step(|| format!("querying the arguments of kernel '{kernel_name}'"))?;
        if wanted as usize != launch.args.len() {
            return Err(OclError::Launch {
                kernel: kernel_name.to_string(),
                problem: format!(
                    "takes {wanted} arguments but the launch gives {}",
                    launch.args.len()
                ),
            });
        }

        let mut buffers = Vec::with_capacity(launch.args.len());
        for (index, arg) in launch.args.iter().enumerate() {
            let buffer = match &arg.value {
                ArgValue::Buffer { access, bytes, .. } => {
                    Some(create_buffer(&context, *access, bytes, || {
                        arg.describe(index)
                    })?)
                }
                _ => None,
            };
            set_arg(&kernel, index, &arg.value, buffer.as_ref())
                .step(|| format!("kernel '{kernel_name}': setting {}", arg.describe(index)))?;
            buffers.push(buffer);
        }
        Ok(PreparedLaunch {
            launch,
            queue,
            kernel,
            buffers,
            build_time,
            build_chatter,
            _program: program,
            _context: context,
        })
    }

    /// Enqueues the kernel once and waits for it; returns its START→END
    /// time in nanoseconds.
    pub fn launch(&mut self) -> Result<u64> {
        let range = &self.launch.range;
        let kernel_name = &self.launch.kernel;
        let dims = range.dims as usize;
        if !(1..=3).contains(&dims) {
            return Err(OclError::Launch {
                kernel: kernel_name.clone(),
                problem: format!("the NDRange has {dims} dimensions; OpenCL takes 1 to 3"),
            });
        }
        let sizes = |what: &str, values: &[u64; 3]| -> Result<[usize; 3]> {
            let mut out = [1usize; 3];
            for (o, v) in out.iter_mut().zip(values) {
                *o = usize::try_from(*v).map_err(|_| OclError::Launch {
                    kernel: kernel_name.clone(),
                    problem: format!("{what} {values:?} does not fit this host's size_t"),
                })?;
            }
            Ok(out)
        };
        let global = sizes("global size", &range.global)?;
        let offset = sizes("global offset", &range.offset)?;
        let local = range
            .local
            .as_ref()
            .map(|l| sizes("local size", l))
            .transpose()?;
        let step = || {
            let local = match &range.local {
                Some(l) => format!("{:?}", &l[..dims]),
                None => "chosen by the runtime".into(),
            };
            format!(
                "enqueueing kernel '{kernel_name}' (global {:?}, local {local}, offset {:?})",
                &range.global[..dims],
                &range.offset[..dims]
            )
        };
        let event = unsafe {
            enqueue_nd_range_kernel(
                self.queue.get(),
                self.kernel.get(),
                dims as u32,
                offset.as_ptr(),
                global.as_ptr(),
                local.as_ref().map_or(std::ptr::null(), |l| l.as_ptr()),
                0,
                std::ptr::null(),
            )
        }
        .map_err(|err| {
            let partial = range
                .local
                .is_some_and(|l| (0..dims).any(|d| !range.global[d].is_multiple_of(l[d].max(1))));
            match err {
                CL_INVALID_WORK_GROUP_SIZE if partial => OclError::Launch {
                    kernel: kernel_name.clone(),
                    problem: format!(
                        "the local size {:?} leaves a last, smaller work-group of global size \
                         {:?}, and this device takes no non-uniform work-groups (an OpenCL \
                         2.0 feature, optional in 3.0)",
                        &range.local.unwrap_or_default()[..dims],
                        &range.global[..dims]
                    ),
                },
                _ => OclError::Cl {
                    step: step(),
                    code: err,
                },
            }
        })?;
        let event = Event::new(event);
        let waited = || format!("running kernel '{kernel_name}'");
        event.wait().step(waited)?;
        let start = event.profiling_command_start().step(waited)?;
        let end = event.profiling_command_end().step(waited)?;
        Ok(end.saturating_sub(start))
    }

    /// Launches `count` times, restoring `rw` buffers to the launch's bytes
    /// before each so that every launch computes on the same inputs.
    pub fn time_repeated(&mut self, count: usize) -> Result<Vec<u64>> {
        let mut times = Vec::with_capacity(count);
        for _ in 0..count {
            self.restore_inputs()?;
            times.push(self.launch()?);
        }
        Ok(times)
    }

    /// The current bytes of every buffer the kernel may write, in argument order.
    pub fn read_outputs(&self) -> Result<Vec<Option<Vec<u8>>>> {
        let mut outputs = Vec::with_capacity(self.buffers.len());
        for (index, (arg, buffer)) in self.launch.args.iter().zip(&self.buffers).enumerate() {
            let output = match (&arg.value, buffer) {
                (ArgValue::Buffer { access, bytes, .. }, Some(buffer)) if access.is_output() => {
                    let mut data = vec![0u8; bytes.len()];
                    if !data.is_empty() {
                        unsafe {
                            self.queue
                                .enqueue_read_buffer(buffer, CL_BLOCKING, 0, &mut data, &[])
                        }
                        .step(|| format!("reading back {}", arg.describe(index)))?;
                    }
                    Some(data)
                }
                _ => None,
            };
            outputs.push(output);
        }
        Ok(outputs)
    }

    fn restore_inputs(&mut self) -> Result<()> {
        for (index, (arg, buffer)) in self.launch.args.iter().zip(&mut self.buffers).enumerate() {
            if let (
                ArgValue::Buffer {
                    access: Access::ReadWrite,
                    bytes,
                    ..
                },
                Some(buffer),
            ) = (&arg.value, buffer)
            {
                if !bytes.is_empty() {
                    unsafe {
                        self.queue
                            .enqueue_write_buffer(buffer, CL_BLOCKING, 0, bytes, &[])
                    }
                    .step(|| format!("restoring {}", arg.describe(index)))?;
                }
            }
        }
        Ok(())
    }
}

fn create_buffer(
    context: &Context,
    access: Access,
    bytes: &[u8],
    describe: impl Fn() -> String,
) -> Result<Buffer<u8>> {
    let flags = match access {
        Access::ReadOnly => CL_MEM_READ_ONLY,
        Access::WriteOnly => CL_MEM_WRITE_ONLY,
        Access::ReadWrite => CL_MEM_READ_WRITE,
    };
    // OpenCL has no zero-size buffers; an empty one gets a byte of room that
    // the kernel may not touch, and reads back as empty.
    let buffer = if bytes.is_empty() {
        unsafe { Buffer::<u8>::create(context, flags, 1, std::ptr::null_mut()) }
    } else {
        unsafe {
            Buffer::<u8>::create(
                context,
                flags | CL_MEM_COPY_HOST_PTR,
                bytes.len(),
                bytes.as_ptr() as *mut c_void,
            )
        }
    };
    buffer.step(|| {
        format!(
            "creating the buffer of {} ({} bytes)",
            describe(),
            bytes.len()
        )
    })
}

/// Sets one kernel argument with exactly the size the launch gives.
fn set_arg(
    kernel: &Kernel,
    index: usize,
    value: &ArgValue,
    buffer: Option<&Buffer<u8>>,
) -> std::result::Result<(), i32> {
    let index = index as u32;
    // A NULL pointer argument is a pointer to a null cl_mem.
    let mem: cl_mem = buffer.map_or(std::ptr::null_mut(), |b| b.get());
    unsafe {
        match value {
            ArgValue::Buffer { .. } | ArgValue::NullPointer => set_kernel_arg(
                kernel.get(),
                index,
                std::mem::size_of::<cl_mem>(),
                &mem as *const cl_mem as *const c_void,
            ),
            ArgValue::Scalar { bytes } => set_kernel_arg(
                kernel.get(),
                index,
                bytes.len(),
                bytes.as_ptr() as *const c_void,
            ),
            ArgValue::Local { bytes } => {
                set_kernel_arg(kernel.get(), index, *bytes as usize, std::ptr::null())
            }
            // CL_INVALID_ARG_VALUE until images reach devices.
            ArgValue::Image { .. } | ArgValue::Sampler(_) => Err(-50),
        }
    }
}

fn duration_ns(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}
