//! The loader-facing side: `clGetLayerInfo` and `clInitLayer`, and one
//! wrapper per OpenCL entry point the capture needs. Each wrapper calls the
//! runtime's entry (the target dispatch table) and records what it learnt;
//! recording never changes what the application sees.
//!
//! Safety: every wrapper receives exactly the arguments the application
//! passed to the OpenCL API, and the OpenCL specification makes them valid
//! for the call (`count` strings, `work_dim` sizes, `arg_size` bytes of an
//! argument value ...). The layer reads them only during the call and only
//! within those bounds: after the runtime accepted the call where it can
//! (sources, argument values), and otherwise only what the runtime reads
//! itself (an NDRange's sizes). Handles are kept as numbers and handed back
//! to the runtime, never dereferenced.

use crate::programs::ProgramText;
use crate::record::{ArgRecord, DeviceRecord, LaunchRecord};
use crate::state::{plain_arg, Image, RawArg, Recorded, Sampler, State};
use flate2::write::GzEncoder;
use flate2::Compression;
use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::cl_layer::{
    cl_layer_info, CL_LAYER_API_VERSION, CL_LAYER_API_VERSION_100, CL_LAYER_NAME,
};
use opencl_sys::*;
use sha2::Digest;
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr};
use std::io::Write;
use std::sync::{Mutex, OnceLock};

/// The runtime's entries, below the layer.
static TARGET: OnceLock<cl_icd_dispatch> = OnceLock::new();
/// The table the loader calls: the target's, with the wrappers in place.
static DISPATCH: OnceLock<cl_icd_dispatch> = OnceLock::new();
/// `None` where no capture directory is set: pure pass-through.
static STATE: Mutex<Option<State>> = Mutex::new(None);

const NAME: &[u8] = b"clflow capture\0";

pub(crate) fn target() -> &'static cl_icd_dispatch {
    TARGET
        .get()
        .expect("the loader initialises a layer before calling it")
}

/// Runs `f` on the capture state, if capturing; a panic inside is caught so
/// that it never unwinds into the application.
pub(crate) fn with_state(f: impl FnOnce(&mut State)) {
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut guard = STATE.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(state) = guard.as_mut() {
            f(state);
        }
    }));
}

/// # Safety
/// Called by the OpenCL loader with a writable `param_value` of
/// `param_value_size` bytes, or NULL.
#[no_mangle]
pub unsafe extern "C" fn clGetLayerInfo(
    param_name: cl_layer_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    let version = CL_LAYER_API_VERSION_100.to_ne_bytes();
    let answer: &[u8] = match param_name {
        CL_LAYER_API_VERSION => &version,
        CL_LAYER_NAME => NAME,
        _ => return CL_INVALID_VALUE,
    };
    if !param_value.is_null() {
        if param_value_size < answer.len() {
            return CL_INVALID_VALUE;
        }
        std::ptr::copy_nonoverlapping(answer.as_ptr(), param_value as *mut u8, answer.len());
    }
    if !param_value_size_ret.is_null() {
        *param_value_size_ret = answer.len();
    }
    CL_SUCCESS
}

/// # Safety
/// Called by the OpenCL loader with the target table of `num_entries`
/// entries and writable out-pointers.
#[no_mangle]
pub unsafe extern "C" fn clInitLayer(
    num_entries: cl_uint,
    target_dispatch: *const cl_icd_dispatch,
    num_entries_ret: *mut cl_uint,
    layer_dispatch_ret: *mut *const cl_icd_dispatch,
) -> cl_int {
    if target_dispatch.is_null() || num_entries_ret.is_null() || layer_dispatch_ret.is_null() {
        return CL_INVALID_VALUE;
    }
    let ours = std::mem::size_of::<cl_icd_dispatch>() / std::mem::size_of::<usize>();
    // The loader's table may be shorter than ours: copy what it has, and
    // leave the rest empty.
    // SAFETY: the table is plain function pointers, for which all-zero is
    // `None`; the copy reads the `num_entries` entries the loader vouches for.
    let mut table: cl_icd_dispatch = std::mem::zeroed();
    std::ptr::copy_nonoverlapping(
        target_dispatch as *const usize,
        &mut table as *mut cl_icd_dispatch as *mut usize,
        ours.min(num_entries as usize),
    );
    let _ = TARGET.set(table);
    let mut layer = table;
    layer.clCreateCommandQueue = Some(create_command_queue);
    layer.clCreateCommandQueueWithProperties = Some(create_command_queue_with_properties);
    layer.clCreateProgramWithSource = Some(create_program_with_source);
    layer.clCreateProgramWithBinary = Some(create_program_with_binary);
    layer.clCreateProgramWithIL = Some(create_program_with_il);
    layer.clBuildProgram = Some(build_program);
    layer.clCompileProgram = Some(crate::link::compile_program);
    layer.clLinkProgram = Some(crate::link::link_program);
    layer.clCreateKernel = Some(create_kernel);
    layer.clCreateKernelsInProgram = Some(create_kernels_in_program);
    layer.clCreateBuffer = Some(create_buffer);
    layer.clCreateSubBuffer = Some(create_sub_buffer);
    layer.clCreateImage = Some(create_image);
    layer.clCreateImage2D = Some(create_image_2d);
    layer.clCreateImage3D = Some(create_image_3d);
    layer.clCreateSampler = Some(create_sampler);
    layer.clCreateSamplerWithProperties = Some(create_sampler_with_properties);
    layer.clSetKernelArgSVMPointer = Some(set_kernel_arg_svm_pointer);
    layer.clSetKernelArg = Some(set_kernel_arg);
    layer.clEnqueueNDRangeKernel = Some(enqueue_nd_range_kernel);
    layer.clEnqueueWriteBuffer = Some(crate::writes::enqueue_write_buffer);
    layer.clEnqueueWriteBufferRect = Some(crate::writes::enqueue_write_buffer_rect);
    layer.clEnqueueFillBuffer = Some(crate::writes::enqueue_fill_buffer);
    layer.clEnqueueCopyBuffer = Some(crate::writes::enqueue_copy_buffer);
    layer.clEnqueueCopyBufferRect = Some(crate::writes::enqueue_copy_buffer_rect);
    layer.clEnqueueCopyImageToBuffer = Some(crate::writes::enqueue_copy_image_to_buffer);
    layer.clEnqueueMapBuffer = Some(crate::writes::enqueue_map_buffer);
    let layer = DISPATCH.get_or_init(|| layer);
    *STATE.lock().unwrap_or_else(|p| p.into_inner()) = State::from_env();
    *num_entries_ret = ours as cl_uint;
    *layer_dispatch_ret = layer;
    CL_SUCCESS
}

/// Whether a capture is on: queues then profile, for the launches' times.
fn capturing() -> bool {
    STATE.lock().map(|s| s.is_some()).unwrap_or(false)
}

unsafe extern "C" fn create_command_queue(
    context: cl_context,
    device: cl_device_id,
    properties: cl_command_queue_properties,
    errcode_ret: *mut cl_int,
) -> cl_command_queue {
    let forward = target().clCreateCommandQueue.expect("the runtime has it");
    let properties = if capturing() {
        properties | CL_QUEUE_PROFILING_ENABLE
    } else {
        properties
    };
    forward(context, device, properties, errcode_ret)
}

unsafe extern "C" fn create_command_queue_with_properties(
    context: cl_context,
    device: cl_device_id,
    properties: *const cl_queue_properties,
    errcode_ret: *mut cl_int,
) -> cl_command_queue {
    let forward = target()
        .clCreateCommandQueueWithProperties
        .expect("the runtime has it");
    if !capturing() {
        return forward(context, device, properties, errcode_ret);
    }
    // The same list with profiling added to CL_QUEUE_PROPERTIES (or that
    // entry added): pairs of name and value, ended by 0.
    let mut list: Vec<cl_queue_properties> = Vec::new();
    let mut found = false;
    let mut at = properties;
    while !at.is_null() && *at != 0 {
        let (name, mut value) = (*at, *at.add(1));
        if name == CL_QUEUE_PROPERTIES as cl_queue_properties {
            value |= CL_QUEUE_PROFILING_ENABLE as cl_queue_properties;
            found = true;
        }
        list.extend([name, value]);
        at = at.add(2);
    }
    if !found {
        list.extend([
            CL_QUEUE_PROPERTIES as cl_queue_properties,
            CL_QUEUE_PROFILING_ENABLE as cl_queue_properties,
        ]);
    }
    list.push(0);
    forward(context, device, list.as_ptr(), errcode_ret)
}

unsafe extern "C" fn create_program_with_source(
    context: cl_context,
    count: cl_uint,
    strings: *mut *const c_char,
    lengths: *const usize,
    errcode_ret: *mut cl_int,
) -> cl_program {
    let forward = target()
        .clCreateProgramWithSource
        .expect("the runtime has it");
    let program = forward(context, count, strings, lengths, errcode_ret);
    if !program.is_null() && !strings.is_null() {
        let mut source = String::new();
        for i in 0..count as usize {
            let s = *strings.add(i);
            if s.is_null() {
                continue;
            }
            let len = if lengths.is_null() {
                0
            } else {
                *lengths.add(i)
            };
            let bytes = if len == 0 {
                CStr::from_ptr(s).to_bytes()
            } else {
                std::slice::from_raw_parts(s as *const u8, len)
            };
            source.push_str(&String::from_utf8_lossy(bytes));
        }
        let text = ProgramText::OpenClC(source);
        with_state(|state| state.add_program(program as usize, Some(text), None));
    }
    program
}

unsafe extern "C" fn create_program_with_binary(
    context: cl_context,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    lengths: *const usize,
    binaries: *mut *const u8,
    binary_status: *mut cl_int,
    errcode_ret: *mut cl_int,
) -> cl_program {
    if std::env::var_os(crate::record::FROM_SOURCE_ENV).is_some() {
        return refuse_binary(num_devices, binary_status, errcode_ret);
    }
    let forward = target()
        .clCreateProgramWithBinary
        .expect("the runtime has it");
    let program = forward(
        context,
        num_devices,
        device_list,
        lengths,
        binaries,
        binary_status,
        errcode_ret,
    );
    if !program.is_null() {
        let why = "created from a device binary, which clflow cannot analyse \
                   (clflow capture --from-source asks the application to build from source)"
            .to_string();
        with_state(|state| state.add_program(program as usize, None, Some(why)));
    }
    program
}

/// Answers a program from device binaries as OpenCL does a binary that
/// does not suit the device, and notes it: a well-behaved application then
/// builds the program from its source.
unsafe fn refuse_binary(
    num_devices: cl_uint,
    binary_status: *mut cl_int,
    errcode_ret: *mut cl_int,
) -> cl_program {
    if !binary_status.is_null() {
        for d in 0..num_devices as usize {
            *binary_status.add(d) = CL_INVALID_BINARY;
        }
    }
    if !errcode_ret.is_null() {
        *errcode_ret = CL_INVALID_BINARY;
    }
    with_state(|state| state.refused_binary());
    std::ptr::null_mut()
}

unsafe extern "C" fn create_program_with_il(
    context: cl_context,
    il: *const c_void,
    length: usize,
    errcode_ret: *mut cl_int,
) -> cl_program {
    let forward = target().clCreateProgramWithIL.expect("the runtime has it");
    let program = forward(context, il, length, errcode_ret);
    if !program.is_null() && !il.is_null() {
        let module = std::slice::from_raw_parts(il as *const u8, length).to_vec();
        let text = ProgramText::Spirv(module);
        with_state(|state| state.add_program(program as usize, Some(text), None));
    }
    program
}

unsafe extern "C" fn build_program(
    program: cl_program,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    options: *const c_char,
    pfn_notify: Option<unsafe extern "C" fn(program: cl_program, user_data: *mut c_void)>,
    user_data: *mut c_void,
) -> cl_int {
    if !options.is_null() {
        let options = CStr::from_ptr(options).to_string_lossy().into_owned();
        with_state(|state| {
            if let Some(p) = state.programs.get_mut(&(program as usize)) {
                p.record.build_options = options;
            }
        });
    }
    let forward = target().clBuildProgram.expect("the runtime has it");
    forward(
        program,
        num_devices,
        device_list,
        options,
        pfn_notify,
        user_data,
    )
}

unsafe extern "C" fn create_kernel(
    program: cl_program,
    kernel_name: *const c_char,
    errcode_ret: *mut cl_int,
) -> cl_kernel {
    let forward = target().clCreateKernel.expect("the runtime has it");
    let kernel = forward(program, kernel_name, errcode_ret);
    if !kernel.is_null() && !kernel_name.is_null() {
        let name = CStr::from_ptr(kernel_name).to_string_lossy().into_owned();
        remember_kernel(kernel, program, name);
    }
    kernel
}

unsafe extern "C" fn create_kernels_in_program(
    program: cl_program,
    num_kernels: cl_uint,
    kernels: *mut cl_kernel,
    num_kernels_ret: *mut cl_uint,
) -> cl_int {
    let forward = target()
        .clCreateKernelsInProgram
        .expect("the runtime has it");
    let status = forward(program, num_kernels, kernels, num_kernels_ret);
    if status == CL_SUCCESS && !kernels.is_null() {
        for i in 0..num_kernels as usize {
            let kernel = *kernels.add(i);
            if let Some(name) = kernel_name(kernel) {
                remember_kernel(kernel, program, name);
            }
        }
    }
    status
}

/// A kernel's function name, asked of the runtime.
unsafe fn kernel_name(kernel: cl_kernel) -> Option<String> {
    let info = target().clGetKernelInfo?;
    if kernel.is_null() {
        return None;
    }
    let mut size = 0usize;
    if info(
        kernel,
        CL_KERNEL_FUNCTION_NAME,
        0,
        std::ptr::null_mut(),
        &mut size,
    ) != CL_SUCCESS
    {
        return None;
    }
    let mut name = vec![0u8; size];
    let status = info(
        kernel,
        CL_KERNEL_FUNCTION_NAME,
        size,
        name.as_mut_ptr() as *mut c_void,
        std::ptr::null_mut(),
    );
    (status == CL_SUCCESS).then(|| {
        CStr::from_bytes_until_nul(&name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    })
}

fn remember_kernel(kernel: cl_kernel, program: cl_program, name: String) {
    with_state(|state| {
        state.kernels.insert(
            kernel as usize,
            crate::state::Kernel { program: program as usize, name, args: Vec::new() },
        );
    });
}

unsafe extern "C" fn create_buffer(
    context: cl_context,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let forward = target().clCreateBuffer.expect("the runtime has it");
    let mem = forward(context, flags, size, host_ptr, errcode_ret);
    if !mem.is_null() {
        with_state(|state| {
            state.buffers.insert(
                mem as usize,
                crate::state::Buffer {
                    bytes: size as u64,
                    flags,
                    written: crate::writes::created_written(flags),
                },
            );
        });
    }
    mem
}

/// A sub-buffer is captured as a buffer of its own: its region's bytes,
/// with its parent's access where it states none.
unsafe extern "C" fn create_sub_buffer(
    buffer: cl_mem,
    flags: cl_mem_flags,
    buffer_create_type: cl_buffer_create_type,
    buffer_create_info: *const c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let forward = target().clCreateSubBuffer.expect("the runtime has it");
    let mem = forward(
        buffer,
        flags,
        buffer_create_type,
        buffer_create_info,
        errcode_ret,
    );
    if !mem.is_null()
        && buffer_create_type == CL_BUFFER_CREATE_TYPE_REGION
        && !buffer_create_info.is_null()
    {
        let region = &*(buffer_create_info as *const cl_buffer_region);
        let access = CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY | CL_MEM_READ_WRITE;
        with_state(|state| {
            let parent = state.buffers.get(&(buffer as usize)).map_or(0, |b| b.flags);
            let flags = if flags & access == 0 { parent } else { flags };
            state.buffers.insert(
                mem as usize,
                crate::state::Buffer {
                    bytes: region.size as u64,
                    flags,
                    // Its parent's data may be anywhere: never called
                    // undefined.
                    written: true,
                },
            );
        });
    }
    mem
}

/// Records an image the application made, or why clflow cannot capture it.
unsafe fn record_image(
    mem: cl_mem,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    mem_type: cl_mem_object_type,
    sizes: [u64; 4],
) {
    if mem.is_null() || format.is_null() {
        return;
    }
    let f = &*format;
    match Image::new(
        mem_type,
        f.image_channel_order,
        f.image_channel_data_type,
        flags,
        sizes,
    ) {
        Ok(image) => with_state(|state| {
            state.images.insert(mem as usize, image);
        }),
        Err(what) => opaque(mem as usize, what),
    }
}

/// Records an image or a sampler, to name it where a launch takes one.
fn opaque(handle: usize, what: &'static str) {
    if handle != 0 {
        with_state(|state| {
            state.opaque.insert(handle, what);
        });
    }
}

unsafe extern "C" fn create_image(
    context: cl_context,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_desc: *const cl_image_desc,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let forward = target().clCreateImage.expect("the runtime has it");
    let mem = forward(
        context,
        flags,
        image_format,
        image_desc,
        host_ptr,
        errcode_ret,
    );
    if !image_desc.is_null() {
        let d = &*image_desc;
        let sizes = [
            d.image_width,
            d.image_height,
            d.image_depth,
            d.image_array_size,
        ];
        record_image(
            mem,
            flags,
            image_format,
            d.image_type,
            sizes.map(|n| n as u64),
        );
    }
    mem
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn create_image_2d(
    context: cl_context,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    width: usize,
    height: usize,
    row_pitch: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let forward = target().clCreateImage2D.expect("the runtime has it");
    let mem = forward(
        context,
        flags,
        image_format,
        width,
        height,
        row_pitch,
        host_ptr,
        errcode_ret,
    );
    let sizes = [width as u64, height as u64, 1, 1];
    record_image(mem, flags, image_format, CL_MEM_OBJECT_IMAGE2D, sizes);
    mem
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn create_image_3d(
    context: cl_context,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    width: usize,
    height: usize,
    depth: usize,
    row_pitch: usize,
    slice_pitch: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let forward = target().clCreateImage3D.expect("the runtime has it");
    let mem = forward(
        context,
        flags,
        image_format,
        width,
        height,
        depth,
        row_pitch,
        slice_pitch,
        host_ptr,
        errcode_ret,
    );
    let sizes = [width as u64, height as u64, depth as u64, 1];
    record_image(mem, flags, image_format, CL_MEM_OBJECT_IMAGE3D, sizes);
    mem
}

unsafe extern "C" fn create_sampler(
    context: cl_context,
    normalized_coords: cl_bool,
    addressing_mode: cl_addressing_mode,
    filter_mode: cl_filter_mode,
    errcode_ret: *mut cl_int,
) -> cl_sampler {
    let forward = target().clCreateSampler.expect("the runtime has it");
    let sampler = forward(
        context,
        normalized_coords,
        addressing_mode,
        filter_mode,
        errcode_ret,
    );
    if !sampler.is_null() {
        let recorded = Sampler {
            normalized: normalized_coords != 0,
            addressing: addressing_mode,
            filter: filter_mode,
        };
        with_state(|state| {
            state.samplers.insert(sampler as usize, recorded);
        });
    }
    sampler
}

unsafe extern "C" fn create_sampler_with_properties(
    context: cl_context,
    properties: *const cl_sampler_properties,
    errcode_ret: *mut cl_int,
) -> cl_sampler {
    let forward = target()
        .clCreateSamplerWithProperties
        .expect("the runtime has it");
    let sampler = forward(context, properties, errcode_ret);
    if !sampler.is_null() {
        // OpenCL's defaults, then each (name, value) pair up to a 0 name.
        let mut recorded = Sampler {
            normalized: true,
            addressing: CL_ADDRESS_CLAMP,
            filter: CL_FILTER_NEAREST,
        };
        let mut at = properties;
        while !at.is_null() && *at != 0 {
            let value = *at.add(1);
            match *at as cl_uint {
                CL_SAMPLER_NORMALIZED_COORDS => recorded.normalized = value != 0,
                CL_SAMPLER_ADDRESSING_MODE => recorded.addressing = value as cl_uint,
                CL_SAMPLER_FILTER_MODE => recorded.filter = value as cl_uint,
                _ => {}
            }
            at = at.add(2);
        }
        with_state(|state| {
            state.samplers.insert(sampler as usize, recorded);
        });
    }
    sampler
}

unsafe extern "C" fn set_kernel_arg_svm_pointer(
    kernel: cl_kernel,
    arg_index: cl_uint,
    arg_value: *const c_void,
) -> cl_int {
    let forward = target()
        .clSetKernelArgSVMPointer
        .expect("the runtime has it");
    let status = forward(kernel, arg_index, arg_value);
    if status == CL_SUCCESS {
        record_arg(kernel, arg_index, RawArg::Svm);
    }
    status
}

/// Keeps the argument the application set, for the kernel's next launch.
fn record_arg(kernel: cl_kernel, arg_index: cl_uint, arg: RawArg) {
    with_state(|state| {
        if let Some(k) = state.kernels.get_mut(&(kernel as usize)) {
            let i = arg_index as usize;
            if k.args.len() <= i {
                k.args.resize(i + 1, RawArg::Unset);
            }
            k.args[i] = arg;
        }
    });
}

unsafe extern "C" fn set_kernel_arg(
    kernel: cl_kernel,
    arg_index: cl_uint,
    arg_size: usize,
    arg_value: *const c_void,
) -> cl_int {
    let forward = target().clSetKernelArg.expect("the runtime has it");
    let status = forward(kernel, arg_index, arg_size, arg_value);
    if status == CL_SUCCESS {
        let arg = if arg_value.is_null() {
            RawArg::Null(arg_size as u64)
        } else {
            RawArg::Bytes(std::slice::from_raw_parts(arg_value as *const u8, arg_size).to_vec())
        };
        record_arg(kernel, arg_index, arg);
    }
    status
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_nd_range_kernel(
    queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    local_work_size: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let forward = target().clEnqueueNDRangeKernel.expect("the runtime has it");
    let mut run = |event: *mut cl_event| {
        forward(
            queue,
            kernel,
            work_dim,
            global_work_offset,
            global_work_size,
            local_work_size,
            num_events_in_wait_list,
            event_wait_list,
            event,
        )
    };
    let Some(plan) = plan(kernel) else {
        let status = run(event);
        crate::writes::launched(kernel);
        return status;
    };
    let dims = |p: *const usize| -> Option<Vec<u64>> {
        (!p.is_null()).then(|| (0..work_dim as usize).map(|d| *p.add(d) as u64).collect())
    };
    let geometry = Geometry {
        global_offset: dims(global_work_offset).unwrap_or_else(|| vec![0; work_dim as usize]),
        global_size: dims(global_work_size).unwrap_or_default(),
        local_size: dims(local_work_size),
    };
    let waits = (num_events_in_wait_list, event_wait_list);
    let status = capture(queue, &plan, geometry, &mut run, event, waits);
    crate::writes::launched(kernel);
    status
}

/// What a selected launch's capture needs, taken under the lock so that the
/// runtime is then called without it (a runtime's callback thread may call
/// back into the API).
struct Plan {
    sequence: u64,
    index: u64,
    name: String,
    program: usize,
    dir: std::path::PathBuf,
    args: Vec<PlanArg>,
    /// What the launch counts against --max-bytes.
    bytes: u64,
}

enum PlanArg {
    Buffer {
        handle: usize,
        bytes: u64,
        flags: u64,
        /// Whether it held anyone's data before the launch.
        written: bool,
    },
    Image {
        handle: usize,
        image: Image,
    },
    Plain(ArgRecord),
}

struct Geometry {
    global_offset: Vec<u64>,
    global_size: Vec<u64>,
    local_size: Option<Vec<u64>>,
}

/// Numbers the launch and, where the selection takes it, plans its capture.
fn plan(kernel: cl_kernel) -> Option<Plan> {
    let mut plan = None;
    with_state(|state| {
        let Some(k) = state.kernels.get(&(kernel as usize)) else {
            // Never dropped silently: a launch of a kernel made in a way
            // the layer does not follow is listed.
            state.unknown_launch();
            return;
        };
        let (name, program, raw_args) = (k.name.clone(), k.program, k.args.clone());
        let (sequence, index, taken) = state.next_launch(&name);
        if !taken {
            return;
        }
        // Buffers are told apart from other 8-byte values by their handles.
        let args: Vec<PlanArg> = raw_args
            .iter()
            .map(|arg| {
                let handle = match arg {
                    RawArg::Bytes(b) if b.len() == std::mem::size_of::<usize>() => {
                        b.as_slice().try_into().ok().map(usize::from_ne_bytes)
                    }
                    _ => None,
                };
                if let Some(what) = handle.and_then(|h| state.opaque.get(&h)) {
                    return PlanArg::Plain(ArgRecord::Unsupported { what: what.to_string() });
                }
                if let Some((handle, image)) = handle.and_then(|h| Some((h, state.images.get(&h)?)))
                {
                    return PlanArg::Image { handle, image: image.clone() };
                }
                if let Some(sampler) = handle.and_then(|h| state.samplers.get(&h)) {
                    return PlanArg::Plain(ArgRecord::Sampler {
                        normalized: sampler.normalized,
                        addressing: sampler.addressing,
                        filter: sampler.filter,
                    });
                }
                match handle.and_then(|h| Some((h, state.buffers.get(&h)?))) {
                    Some((handle, buffer)) => PlanArg::Buffer {
                        handle,
                        bytes: buffer.bytes,
                        flags: buffer.flags,
                        written: buffer.written,
                    },
                    None => PlanArg::Plain(plain_arg(arg)),
                }
            })
            .collect();
        // A buffer passed to several arguments is one buffer: saved once,
        // the later arguments naming the first.
        let mut first_of: HashMap<usize, usize> = HashMap::new();
        let args: Vec<PlanArg> = args
            .into_iter()
            .enumerate()
            .map(|(k, arg)| match arg {
                PlanArg::Buffer { handle, .. } => match first_of.get(&handle) {
                    Some(&first) => PlanArg::Plain(ArgRecord::SameBuffer { arg: first }),
                    None => {
                        first_of.insert(handle, k);
                        arg
                    }
                },
                plain => plain,
            })
            .collect();
        // Every buffer before, and those the kernel may write after.
        let bytes: u64 = args
            .iter()
            .map(|a: &PlanArg| match a {
                PlanArg::Buffer { bytes, flags, .. } if flags & CL_MEM_READ_ONLY != 0 => *bytes,
                PlanArg::Buffer { bytes, .. } => 2 * bytes,
                PlanArg::Image { image, .. } if image.flags & CL_MEM_READ_ONLY != 0 => {
                    image.bytes()
                }
                PlanArg::Image { image, .. } => 2 * image.bytes(),
                PlanArg::Plain(_) => 0,
            })
            .sum();
        if !state.fits(sequence, &name, index, bytes) {
            return;
        }
        plan = Some(Plan {
            sequence,
            index,
            name,
            program,
            dir: state.dir.clone(),
            args,
            bytes,
        });
    });
    plan
}

/// Records the launch around `run` (the runtime's enqueue, given where to
/// put the launch's event): the buffers' contents once everything queued
/// before has completed, then the launch, then the contents it left.
/// Returns the enqueue's status.
unsafe fn capture(
    queue: cl_command_queue,
    plan: &Plan,
    geometry: Geometry,
    run: &mut dyn FnMut(*mut cl_event) -> cl_int,
    app_event: *mut cl_event,
    (waits, wait_list): (cl_uint, *const cl_event),
) -> cl_int {
    let t = target();
    if waits > 0 && !wait_list.is_null() {
        if let Some(wait) = t.clWaitForEvents {
            wait(waits, wait_list);
        }
    }
    if let Some(finish) = t.clFinish {
        finish(queue);
    }
    // Files are named by their contents: a buffer no launch changed is
    // stored once however many launches read it.
    let keep = |data: Vec<u8>| -> Option<String> {
        let digest = sha2::Sha256::digest(&data);
        let stem = format!("buffer-{}.bin", hex::encode(&digest[..12]));
        // Held before it is looked for, so that a launch replacing its
        // kernel's earlier one (`last`) cannot remove it meanwhile.
        with_state(|state| state.hold(&stem));
        let stored = [stem.clone(), format!("{stem}.gz")]
            .into_iter()
            .find(|name| plan.dir.join(name).exists());
        match stored {
            Some(name) => Some(name),
            None => store(&plan.dir, &stem, &data),
        }
    };
    let save = |handle: usize, bytes: u64, flags: cl_mem_flags| {
        keep(read_buffer(queue, handle, bytes, flags)?)
    };
    let save_image = |handle: usize, image: &Image| keep(read_image(queue, handle, image)?);
    let mut args = Vec::with_capacity(plan.args.len());
    for arg in &plan.args {
        args.push(match arg {
            PlanArg::Buffer { handle, bytes, flags, written } => {
                match save(*handle, *bytes, *flags) {
                    Some(file) => ArgRecord::Buffer {
                        bytes: *bytes,
                        file,
                        output_file: None,
                        read_only: flags & CL_MEM_READ_ONLY != 0,
                        write_only: flags & CL_MEM_WRITE_ONLY != 0,
                        never_written: !written,
                    },
                    None => ArgRecord::Unsupported {
                        what: "a buffer that could not be read or saved".into(),
                    },
                }
            }
            PlanArg::Image { handle, image } => match save_image(*handle, image) {
                Some(file) => ArgRecord::Image {
                    mem_type: image.mem_type,
                    order: image.order,
                    channel_type: image.channel_type,
                    shape: image.shape.clone(),
                    bytes: image.bytes(),
                    file,
                    output_file: None,
                    read_only: image.flags & CL_MEM_READ_ONLY != 0,
                },
                None => ArgRecord::Unsupported {
                    what: "an image that could not be read or saved".into(),
                },
            },
            PlanArg::Plain(record) => record.clone(),
        });
    }

    // The launch's event, for its device time: the application's where it
    // asked for one, else one of the layer's own, released after.
    let mut own_event: cl_event = std::ptr::null_mut();
    let event = if app_event.is_null() {
        &mut own_event as *mut cl_event
    } else {
        app_event
    };
    let status = run(event);
    if let Some(finish) = t.clFinish {
        finish(queue);
    }
    let device_ns = if status == CL_SUCCESS && !(*event).is_null() {
        profiled_ns(*event)
    } else {
        None
    };
    if !own_event.is_null() {
        if let Some(release) = t.clReleaseEvent {
            release(own_event);
        }
    }
    if status != CL_SUCCESS {
        return status;
    }
    for (k, arg) in plan.args.iter().enumerate() {
        if let PlanArg::Buffer { handle, bytes, flags, .. } = arg {
            if flags & CL_MEM_READ_ONLY != 0 {
                continue;
            }
            if let Some(name) = save(*handle, *bytes, *flags) {
                if let ArgRecord::Buffer { output_file, .. } = &mut args[k] {
                    *output_file = Some(name);
                }
            }
        }
        if let PlanArg::Image { handle, image } = arg {
            if image.flags & CL_MEM_READ_ONLY != 0 {
                continue;
            }
            if let Some(name) = save_image(*handle, image) {
                if let ArgRecord::Image { output_file, .. } = &mut args[k] {
                    *output_file = Some(name);
                }
            }
        }
    }
    let launch = LaunchRecord {
        sequence: plan.sequence,
        kernel: plan.name.clone(),
        index: plan.index,
        program: u32::MAX,
        global_offset: geometry.global_offset,
        global_size: geometry.global_size,
        local_size: geometry.local_size,
        args,
        device_ns,
        device: queue_device(queue),
    };
    let files: Vec<String> = launch
        .args
        .iter()
        .flat_map(|arg| match arg {
            ArgRecord::Buffer { file, output_file, .. }
            | ArgRecord::Image { file, output_file, .. } => std::iter::once(file.clone())
                .chain(output_file.clone())
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    with_state(|state| {
        let Ok(program) = state.write_program(plan.program) else {
            return;
        };
        if state
            .write_launch(&LaunchRecord { program, ..launch })
            .is_ok()
            && state.keeps_only_latest(&plan.name)
        {
            let recorded = Recorded { sequence: plan.sequence, files, bytes: plan.bytes };
            state.replace_latest(&plan.name, recorded);
        }
    });
    status
}

/// Buffers smaller than this are stored as they are: compressing them
/// saves little and costs a call.
const COMPRESS_FROM_BYTES: usize = 4096;

/// Writes a buffer's data as `stem`, or gzip-compressed as `stem.gz` where
/// that saves a quarter or more; the name it took. Written under another
/// name first, so that a crash never leaves half a file under the real one.
fn store(dir: &std::path::Path, stem: &str, data: &[u8]) -> Option<String> {
    let compressed = (data.len() >= COMPRESS_FROM_BYTES)
        .then(|| {
            let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
            encoder.write_all(data).ok()?;
            encoder.finish().ok()
        })
        .flatten()
        .filter(|packed| packed.len() * 4 <= data.len() * 3);
    let (name, bytes) = match &compressed {
        Some(packed) => (format!("{stem}.gz"), packed.as_slice()),
        None => (stem.to_string(), data),
    };
    let path = dir.join(&name);
    let partial = dir.join(format!("{name}.partial"));
    std::fs::write(&partial, bytes).ok()?;
    std::fs::rename(partial, &path).ok()?;
    Some(name)
}

/// The device `queue` runs on, as its runtime names it.
unsafe fn queue_device(queue: cl_command_queue) -> Option<DeviceRecord> {
    let t = target();
    let mut device: cl_device_id = std::ptr::null_mut();
    let status = t.clGetCommandQueueInfo?(
        queue,
        CL_QUEUE_DEVICE,
        std::mem::size_of::<cl_device_id>(),
        &mut device as *mut cl_device_id as *mut c_void,
        std::ptr::null_mut(),
    );
    if status != CL_SUCCESS || device.is_null() {
        return None;
    }
    let device_text = |what| {
        info_text(|size, value, size_ret| {
            t.clGetDeviceInfo.map_or(CL_INVALID_OPERATION, |get| {
                get(device, what, size, value, size_ret)
            })
        })
    };
    let mut platform: cl_platform_id = std::ptr::null_mut();
    let platform_name = t.clGetDeviceInfo.and_then(|get| {
        let status = get(
            device,
            CL_DEVICE_PLATFORM,
            std::mem::size_of::<cl_platform_id>(),
            &mut platform as *mut cl_platform_id as *mut c_void,
            std::ptr::null_mut(),
        );
        let get_platform = t.clGetPlatformInfo?;
        (status == CL_SUCCESS && !platform.is_null()).then(|| {
            info_text(|size, value, size_ret| {
                get_platform(platform, CL_PLATFORM_NAME, size, value, size_ret)
            })
        })?
    });
    Some(DeviceRecord {
        name: device_text(CL_DEVICE_NAME)?,
        platform: platform_name.unwrap_or_default(),
        driver: device_text(CL_DRIVER_VERSION).unwrap_or_default(),
        version: device_text(CL_DEVICE_VERSION).unwrap_or_default(),
    })
}

/// A string the runtime gives through the usual two calls (its size, then
/// its bytes): `get(size, value, size_ret)`.
fn info_text(get: impl Fn(usize, *mut c_void, *mut usize) -> cl_int) -> Option<String> {
    let mut size = 0usize;
    if get(0, std::ptr::null_mut(), &mut size) != CL_SUCCESS {
        return None;
    }
    let mut bytes = vec![0u8; size];
    if get(
        size,
        bytes.as_mut_ptr() as *mut c_void,
        std::ptr::null_mut(),
    ) != CL_SUCCESS
    {
        return None;
    }
    let text = String::from_utf8_lossy(&bytes);
    Some(text.trim_end_matches('\0').trim().to_string())
}

/// A buffer's contents, read once the queue is idle. A buffer the host may
/// not read (`CL_MEM_HOST_NO_ACCESS`, `CL_MEM_HOST_WRITE_ONLY`), or one a
/// read is refused for, is copied on the device into a scratch buffer the
/// host may read: OpenCL allows the copy where it forbids the read.
unsafe fn read_buffer(
    queue: cl_command_queue,
    handle: usize,
    bytes: u64,
    flags: cl_mem_flags,
) -> Option<Vec<u8>> {
    let hidden = flags & (CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_WRITE_ONLY) != 0;
    if !hidden {
        if let Some(data) = read_plain(queue, handle as cl_mem, bytes) {
            return Some(data);
        }
    }
    let copy = target().clEnqueueCopyBuffer?;
    read_through_scratch(queue, handle as cl_mem, bytes, |scratch| {
        copy(
            queue,
            handle as cl_mem,
            scratch,
            0,
            0,
            bytes as usize,
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        )
    })
}

/// `bytes` that `copy` puts in a scratch buffer of `mem`'s context, read
/// back by the host; the scratch is released either way.
unsafe fn read_through_scratch(
    queue: cl_command_queue,
    mem: cl_mem,
    bytes: u64,
    copy: impl FnOnce(cl_mem) -> cl_int,
) -> Option<Vec<u8>> {
    let t = target();
    let (info, create, release) = (
        t.clGetMemObjectInfo?,
        t.clCreateBuffer?,
        t.clReleaseMemObject?,
    );
    let mut context: cl_context = std::ptr::null_mut();
    let status = info(
        mem,
        CL_MEM_CONTEXT,
        std::mem::size_of::<cl_context>(),
        &mut context as *mut cl_context as *mut c_void,
        std::ptr::null_mut(),
    );
    if status != CL_SUCCESS {
        return None;
    }
    // The runtime's own call, not the layer's: the scratch is no buffer of
    // the application's.
    let mut created = CL_SUCCESS;
    let scratch = create(
        context,
        CL_MEM_READ_WRITE,
        bytes as usize,
        std::ptr::null_mut(),
        &mut created,
    );
    if created != CL_SUCCESS || scratch.is_null() {
        return None;
    }
    let data = match copy(scratch) {
        CL_SUCCESS => read_plain(queue, scratch, bytes),
        _ => None,
    };
    release(scratch);
    data
}

/// A buffer's contents by a blocking host read.
unsafe fn read_plain(queue: cl_command_queue, mem: cl_mem, bytes: u64) -> Option<Vec<u8>> {
    let read = target().clEnqueueReadBuffer?;
    let mut data = vec![0u8; bytes as usize];
    let status = read(
        queue,
        mem,
        CL_TRUE,
        0,
        data.len(),
        data.as_mut_ptr() as *mut c_void,
        0,
        std::ptr::null(),
        std::ptr::null_mut(),
    );
    (status == CL_SUCCESS).then_some(data)
}

/// An image's texels, tightly packed, read once the queue is idle. One the
/// host may not read (`CL_MEM_HOST_NO_ACCESS`, `CL_MEM_HOST_WRITE_ONLY`),
/// or one a read is refused for, is copied on the device into a scratch
/// buffer, which holds the texels packed the same way.
unsafe fn read_image(queue: cl_command_queue, handle: usize, image: &Image) -> Option<Vec<u8>> {
    let t = target();
    let (read, copy) = (t.clEnqueueReadImage?, t.clEnqueueCopyImageToBuffer?);
    let (origin, region) = ([0usize; 3], image.region());
    let hidden = image.flags & (CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_WRITE_ONLY) != 0;
    if !hidden {
        let mut data = vec![0u8; image.bytes() as usize];
        let status = read(
            queue,
            handle as cl_mem,
            CL_TRUE,
            origin.as_ptr(),
            region.as_ptr(),
            0,
            0,
            data.as_mut_ptr() as *mut c_void,
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        );
        if status == CL_SUCCESS {
            return Some(data);
        }
    }
    read_through_scratch(queue, handle as cl_mem, image.bytes(), |scratch| {
        copy(
            queue,
            handle as cl_mem,
            scratch,
            origin.as_ptr(),
            region.as_ptr(),
            0,
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        )
    })
}

/// The kernel time of a completed launch's event, where its queue profiles.
unsafe fn profiled_ns(event: cl_event) -> Option<u64> {
    let info = target().clGetEventProfilingInfo?;
    let at = |what| {
        let mut ns: cl_ulong = 0;
        let status = info(
            event,
            what,
            std::mem::size_of::<cl_ulong>(),
            &mut ns as *mut cl_ulong as *mut c_void,
            std::ptr::null_mut(),
        );
        (status == CL_SUCCESS).then_some(ns)
    };
    Some(at(CL_PROFILING_COMMAND_END)?.saturating_sub(at(CL_PROFILING_COMMAND_START)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the disk refuses the file (full, or gone), nothing is left
    /// under the real name: the launch is then recorded as not captured.
    #[test]
    fn a_buffer_that_cannot_be_written_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let data = vec![7u8; 3 * COMPRESS_FROM_BYTES];
        assert_eq!(
            store(dir.path(), "buffer-a.bin", &data).as_deref(),
            Some("buffer-a.bin.gz")
        );
        let noise: Vec<u8> = (0..64u32)
            .flat_map(|i| i.wrapping_mul(2654435761).to_le_bytes())
            .collect();
        assert_eq!(
            store(dir.path(), "buffer-b.bin", &noise).as_deref(),
            Some("buffer-b.bin")
        );
        let gone = dir.path().join("gone");
        assert_eq!(store(&gone, "buffer-c.bin", &data), None);
        assert!(!gone.exists());
    }
}
