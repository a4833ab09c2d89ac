//! Running a `clflow_core::Launch` on one OpenCL device: buffers from the
//! launch's bytes, every argument set with its exact size, the NDRange
//! enqueued with profiling on, and the kernel's START→END time read back.

use crate::discovery::OclDevice;
use crate::error::{OclError, Result, Step};
use crate::program::{build_kernel, ProgramSource};
use crate::session::{Session, SharedBuffer};
use clflow_core::{
    Access, AddressMode, ArgValue, ChannelOrder, ChannelType, FilterMode, ImageDesc, ImageDim,
    ImageFormat, Launch, SamplerDesc,
};
use opencl3::command_queue::{enqueue_nd_range_kernel, CommandQueue};
use opencl3::context::Context;
use opencl3::error_codes::CL_INVALID_WORK_GROUP_SIZE;
use opencl3::event::Event;
use opencl3::kernel::{set_kernel_arg, Kernel};
use opencl3::memory::{
    Buffer, ClMem, Image, Sampler, CL_ADDRESS_CLAMP, CL_ADDRESS_CLAMP_TO_EDGE,
    CL_ADDRESS_MIRRORED_REPEAT, CL_ADDRESS_NONE, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR,
    CL_FILTER_NEAREST, CL_MEM_COPY_HOST_PTR, CL_MEM_OBJECT_IMAGE1D, CL_MEM_OBJECT_IMAGE1D_ARRAY,
    CL_MEM_OBJECT_IMAGE2D, CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_MEM_OBJECT_IMAGE3D, CL_MEM_READ_ONLY,
    CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY,
};
use opencl3::program::Program;
use opencl3::types::{
    cl_image_desc, cl_image_format, cl_mem, cl_mem_flags, cl_mem_object_type, cl_sampler,
    CL_BLOCKING,
};
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
    kernel: Kernel,
    /// One device buffer per argument that is a buffer of its own, in
    /// argument order (none for a [`SharedBuffer`]'s).
    buffers: Vec<Option<Buffer<u8>>>,
    /// One device image per argument that is an image, in argument order.
    images: Vec<Option<Image>>,
    /// Samplers, kept alive while the kernel holds them.
    _samplers: Vec<Sampler>,
    /// Host time of the program build.
    pub build_time: Duration,
    /// What the runtime printed on stderr while it built the program
    /// (warnings, progress), captured so that it is shown only on request.
    pub build_chatter: String,
    // Kept alive for the kernel's sake; dropped last.
    _program: Program,
    session: Held<'a>,
}

/// The session a launch runs in: its own, or one it shares.
enum Held<'a> {
    Own(Box<Session>),
    Shared(&'a Session),
}

impl<'a> Held<'a> {
    fn get(&self) -> &Session {
        match self {
            Held::Own(session) => session,
            Held::Shared(session) => session,
        }
    }
}

impl<'a> PreparedLaunch<'a> {
    /// `launch` in a session of its own on `device`.
    pub fn new(device: &OclDevice, source: &ProgramSource, launch: &'a Launch) -> Result<Self> {
        Self::prepare(
            Held::Own(Box::new(Session::new(device)?)),
            source,
            launch,
            &[],
        )
    }

    /// `launch` in `session`, each argument `shared` names taking that
    /// buffer in place of its own bytes (which should be empty).
    pub fn on(
        session: &'a Session,
        source: &ProgramSource,
        launch: &'a Launch,
        shared: &[(usize, &'a SharedBuffer)],
    ) -> Result<Self> {
        Self::prepare(Held::Shared(session), source, launch, shared)
    }

    fn prepare(
        session: Held<'a>,
        source: &ProgramSource,
        launch: &'a Launch,
        shared: &[(usize, &'a SharedBuffer)],
    ) -> Result<Self> {
        let kernel_name = launch.kernel.as_str();
        let (context, device) = (&session.get().context, &session.get().device);
        let started = Instant::now();
        let (program, kernel, build_chatter) = build_kernel(context, device, source, kernel_name)?;
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
        if let Some((index, _)) = shared.iter().find(|(index, _)| {
            !matches!(
                launch.args.get(*index).map(|a| &a.value),
                Some(ArgValue::Buffer { .. })
            )
        }) {
            return Err(OclError::Launch {
                kernel: kernel_name.to_string(),
                problem: format!("argument {index} is given a shared buffer but is no buffer"),
            });
        }

        let mut buffers = Vec::with_capacity(launch.args.len());
        let mut mems: Vec<cl_mem> = Vec::with_capacity(launch.args.len());
        let mut images = Vec::with_capacity(launch.args.len());
        let mut samplers = Vec::new();
        for (index, arg) in launch.args.iter().enumerate() {
            let given = shared
                .iter()
                .find(|(i, _)| *i == index)
                .map(|(_, b)| b.mem());
            let buffer = match &arg.value {
                ArgValue::Buffer { access, bytes, .. } if given.is_none() => {
                    Some(create_buffer(context, *access, bytes, || {
                        arg.describe(index)
                    })?)
                }
                _ => None,
            };
            let image = match &arg.value {
                ArgValue::Image { image, access, bytes } => Some({
                    check_image_format(context, image, *access).map_err(|problem| {
                        OclError::Launch {
                            kernel: kernel_name.to_string(),
                            problem: format!("{}: {problem}", arg.describe(index)),
                        }
                    })?;
                    create_image(context, image, *access, bytes).step(|| {
                        format!(
                            "creating the image of {} ({} {}×{}×{})",
                            arg.describe(index),
                            image.format,
                            image.width,
                            image.height,
                            image.depth
                        )
                    })?
                }),
                _ => None,
            };
            let sampler = match &arg.value {
                ArgValue::Sampler(sampler) => Some(
                    create_sampler(context, sampler)
                        .step(|| format!("creating the {sampler} of {}", arg.describe(index)))?,
                ),
                _ => None,
            };
            let mem = match (&arg.value, &buffer, &image) {
                (_, Some(b), _) => b.get(),
                (_, _, Some(i)) => i.get(),
                // An argument given an earlier one's buffer gets that cl_mem.
                (ArgValue::SameBuffer { arg: first }, ..) => {
                    mems.get(*first).copied().unwrap_or(std::ptr::null_mut())
                }
                _ => given.unwrap_or(std::ptr::null_mut()),
            };
            set_arg(&kernel, index, &arg.value, mem, sampler.as_ref())
                .step(|| format!("kernel '{kernel_name}': setting {}", arg.describe(index)))?;
            buffers.push(buffer);
            mems.push(mem);
            images.push(image);
            samplers.extend(sampler);
        }
        Ok(PreparedLaunch {
            launch,
            kernel,
            buffers,
            images,
            _samplers: samplers,
            build_time,
            build_chatter,
            _program: program,
            session,
        })
    }

    fn queue(&self) -> &CommandQueue {
        &self.session.get().queue
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
                self.queue().get(),
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
                _ => OclError::Cl { step: step(), code: err },
            }
        })?;
        let event = Event::new(event);
        let waited = || format!("running kernel '{kernel_name}'");
        event.wait().step(waited)?;
        let start = event.profiling_command_start().step(waited)?;
        let end = event.profiling_command_end().step(waited)?;
        Ok(end.saturating_sub(start))
    }

    /// The kernel it launches.
    pub fn kernel_name(&self) -> &str {
        &self.launch.kernel
    }

    /// Gives scalar argument `index` new bytes for the launches after, on
    /// the same build and buffers (a benchmark timed at the repetitions it
    /// calibrated).
    pub fn set_scalar(&mut self, index: usize, bytes: &[u8]) -> Result<()> {
        let value = ArgValue::Scalar { bytes: bytes.to_vec() };
        set_arg(&self.kernel, index, &value, std::ptr::null_mut(), None)
            .step(|| format!("kernel '{}': setting argument {index}", self.launch.kernel))
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
        for (index, ((arg, buffer), image)) in self
            .launch
            .args
            .iter()
            .zip(&self.buffers)
            .zip(&self.images)
            .enumerate()
        {
            let output = match (&arg.value, buffer, image) {
                (ArgValue::Image { image: desc, access, bytes }, _, Some(image))
                    if access.is_output() =>
                {
                    let mut data = vec![0u8; bytes.len()];
                    let (origin, region) = ([0usize; 3], region(desc));
                    unsafe {
                        self.queue().enqueue_read_image(
                            image,
                            CL_BLOCKING,
                            origin.as_ptr(),
                            region.as_ptr(),
                            0,
                            0,
                            data.as_mut_ptr() as *mut c_void,
                            &[],
                        )
                    }
                    .step(|| format!("reading back {}", arg.describe(index)))?;
                    Some(data)
                }
                (ArgValue::Buffer { access, bytes, .. }, Some(buffer), _) if access.is_output() => {
                    let mut data = vec![0u8; bytes.len()];
                    if !data.is_empty() {
                        unsafe {
                            self.queue()
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
        let queue = &self.session.get().queue;
        for (index, (arg, image)) in self.launch.args.iter().zip(&mut self.images).enumerate() {
            if let (
                ArgValue::Image { image: desc, access: Access::ReadWrite, bytes },
                Some(image),
            ) = (&arg.value, image)
            {
                let (origin, region) = ([0usize; 3], region(desc));
                unsafe {
                    queue.enqueue_write_image(
                        image,
                        CL_BLOCKING,
                        origin.as_ptr(),
                        region.as_ptr(),
                        0,
                        0,
                        bytes.as_ptr() as *mut c_void,
                        &[],
                    )
                }
                .step(|| format!("restoring {}", arg.describe(index)))?;
            }
        }
        for (index, (arg, buffer)) in self.launch.args.iter().zip(&mut self.buffers).enumerate() {
            if let (ArgValue::Buffer { access: Access::ReadWrite, bytes, .. }, Some(buffer)) =
                (&arg.value, buffer)
            {
                if !bytes.is_empty() {
                    unsafe { queue.enqueue_write_buffer(buffer, CL_BLOCKING, 0, bytes, &[]) }
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

/// The region of a whole image, as clEnqueueReadImage takes it: width,
/// then height or layers, then depth or layers; 1 where unused.
fn region(image: &ImageDesc) -> [usize; 3] {
    [image.width, image.height, image.depth].map(|n| n as usize)
}

fn image_type(image: &ImageDesc) -> cl_mem_object_type {
    match image.dim {
        ImageDim::Image1d => CL_MEM_OBJECT_IMAGE1D,
        ImageDim::Image2d => CL_MEM_OBJECT_IMAGE2D,
        ImageDim::Image3d => CL_MEM_OBJECT_IMAGE3D,
        ImageDim::Image1dArray => CL_MEM_OBJECT_IMAGE1D_ARRAY,
        ImageDim::Image2dArray => CL_MEM_OBJECT_IMAGE2D_ARRAY,
    }
}

fn mem_flags(access: Access) -> cl_mem_flags {
    match access {
        Access::ReadOnly => CL_MEM_READ_ONLY,
        Access::WriteOnly => CL_MEM_WRITE_ONLY,
        Access::ReadWrite => CL_MEM_READ_WRITE,
    }
}

/// Whether the device takes the image's format for its type and access
/// (runtimes answer an unsupported one with unhelpful codes).
fn check_image_format(
    context: &Context,
    image: &ImageDesc,
    access: Access,
) -> std::result::Result<(), String> {
    let Ok(formats) = context.get_supported_image_formats(mem_flags(access), image_type(image))
    else {
        // Let the creation itself say what is wrong.
        return Ok(());
    };
    let known = |f: &cl_image_format| match (
        ChannelOrder::from_cl(f.image_channel_order),
        ChannelType::from_cl(f.image_channel_data_type),
    ) {
        (Some(order), Some(ty)) => Some(ImageFormat { order, ty }),
        _ => None,
    };
    let supported: Vec<ImageFormat> = formats.iter().filter_map(known).collect();
    if supported.contains(&image.format) {
        return Ok(());
    }
    let mut names: Vec<String> = supported.iter().map(ToString::to_string).collect();
    names.sort();
    names.dedup();
    Err(format!(
        "the device does not support {} for a {} {} (it supports {})",
        image.format,
        clflow_core::access_qualifier(access),
        image.dim.name(),
        if names.is_empty() {
            "none of the formats clflow knows".to_string()
        } else {
            names.join(", ")
        }
    ))
}

fn create_image(
    context: &Context,
    image: &ImageDesc,
    access: Access,
    bytes: &[u8],
) -> std::result::Result<Image, opencl3::error_codes::ClError> {
    let flags = mem_flags(access);
    let format = cl_image_format {
        image_channel_order: image.format.order.cl_value(),
        image_channel_data_type: image.format.ty.cl_value(),
    };
    let (height, depth, array_size) = match image.dim {
        ImageDim::Image1d => (0, 0, 0),
        ImageDim::Image2d => (image.height, 0, 0),
        ImageDim::Image3d => (image.height, image.depth, 0),
        ImageDim::Image1dArray => (0, 0, image.height),
        ImageDim::Image2dArray => (image.height, 0, image.depth),
    };
    // SAFETY: a plain C struct, all zeros a valid value (no buffer).
    let mut desc: cl_image_desc = unsafe { std::mem::zeroed() };
    desc.image_type = image_type(image);
    desc.image_width = image.width as usize;
    desc.image_height = height as usize;
    desc.image_depth = depth as usize;
    desc.image_array_size = array_size as usize;
    // SAFETY: `bytes` holds the whole image, tightly packed (row pitch 0),
    // and is copied before the call returns.
    unsafe {
        Image::create(
            context,
            flags | CL_MEM_COPY_HOST_PTR,
            &format,
            &desc,
            bytes.as_ptr() as *mut c_void,
        )
    }
}

#[allow(deprecated)]
fn create_sampler(
    context: &Context,
    sampler: &SamplerDesc,
) -> std::result::Result<Sampler, opencl3::error_codes::ClError> {
    let address = match sampler.address {
        AddressMode::None => CL_ADDRESS_NONE,
        AddressMode::ClampToEdge => CL_ADDRESS_CLAMP_TO_EDGE,
        AddressMode::Clamp => CL_ADDRESS_CLAMP,
        AddressMode::Repeat => CL_ADDRESS_REPEAT,
        AddressMode::MirroredRepeat => CL_ADDRESS_MIRRORED_REPEAT,
    };
    let filter = match sampler.filter {
        FilterMode::Nearest => CL_FILTER_NEAREST,
        FilterMode::Linear => CL_FILTER_LINEAR,
    };
    Sampler::create(context, u32::from(sampler.normalized), address, filter)
}

/// Sets one kernel argument with exactly the size the launch gives; `mem`
/// is the argument's buffer or image (null for a NULL pointer).
fn set_arg(
    kernel: &Kernel,
    index: usize,
    value: &ArgValue,
    mem: cl_mem,
    sampler: Option<&Sampler>,
) -> std::result::Result<(), i32> {
    let index = index as u32;
    let sampler: cl_sampler = sampler.map_or(std::ptr::null_mut(), |s| s.get());
    unsafe {
        match value {
            ArgValue::Sampler(_) => set_kernel_arg(
                kernel.get(),
                index,
                std::mem::size_of::<cl_sampler>(),
                &sampler as *const cl_sampler as *const c_void,
            ),
            // A NULL pointer argument is a pointer to a null cl_mem.
            ArgValue::Buffer { .. }
            | ArgValue::SameBuffer { .. }
            | ArgValue::NullPointer
            | ArgValue::Image { .. } => set_kernel_arg(
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
        }
    }
}

fn duration_ns(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}
