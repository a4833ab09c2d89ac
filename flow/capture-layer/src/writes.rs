//! Which buffers hold data: the host's (a buffer created from host memory,
//! written, filled, copied into or mapped for writing) or a kernel's (one
//! it was given and not told it may only read). A launch's buffer that none
//! of these reached has contents nobody defined; its capture says so
//! (`never_written`), for `--detect uninit`. A region written counts for
//! the whole buffer: the capture never calls defined bytes undefined.

use crate::layer::{target, with_state};
use crate::state::RawArg;
use opencl_sys::*;
use std::ffi::c_void;

/// Marks `buffer` as holding data, where the call that wrote it succeeded.
fn wrote(buffer: cl_mem, status: cl_int) {
    if status == CL_SUCCESS {
        with_state(|state| {
            if let Some(b) = state.buffers.get_mut(&(buffer as usize)) {
                b.written = true;
            }
        });
    }
}

/// Whether a buffer created with `flags` starts with the host's data.
pub fn created_written(flags: cl_mem_flags) -> bool {
    flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR) != 0
}

/// After a launch of `kernel`: every buffer it was given that it may
/// write holds data.
pub fn launched(kernel: cl_kernel) {
    with_state(|state| {
        let Some(k) = state.kernels.get(&(kernel as usize)) else {
            return;
        };
        let handles: Vec<usize> = k
            .args
            .iter()
            .filter_map(|arg| match arg {
                RawArg::Bytes(b) => b.as_slice().try_into().ok().map(usize::from_ne_bytes),
                _ => None,
            })
            .collect();
        for handle in handles {
            if let Some(b) = state.buffers.get_mut(&handle) {
                b.written |= b.flags & CL_MEM_READ_ONLY == 0;
            }
        }
    });
}

pub unsafe extern "C" fn enqueue_write_buffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    offset: usize,
    size: usize,
    ptr: *const c_void,
    waits: cl_uint,
    wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let forward = target().clEnqueueWriteBuffer.expect("the runtime has it");
    let status = forward(
        queue, buffer, blocking, offset, size, ptr, waits, wait_list, event,
    );
    wrote(buffer, status);
    status
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn enqueue_write_buffer_rect(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *const c_void,
    waits: cl_uint,
    wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let forward = target()
        .clEnqueueWriteBufferRect
        .expect("the runtime has it");
    let status = forward(
        queue,
        buffer,
        blocking,
        buffer_origin,
        host_origin,
        region,
        buffer_row_pitch,
        buffer_slice_pitch,
        host_row_pitch,
        host_slice_pitch,
        ptr,
        waits,
        wait_list,
        event,
    );
    wrote(buffer, status);
    status
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn enqueue_fill_buffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    pattern: *const c_void,
    pattern_size: usize,
    offset: usize,
    size: usize,
    waits: cl_uint,
    wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let forward = target().clEnqueueFillBuffer.expect("the runtime has it");
    let status = forward(
        queue,
        buffer,
        pattern,
        pattern_size,
        offset,
        size,
        waits,
        wait_list,
        event,
    );
    wrote(buffer, status);
    status
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn enqueue_copy_buffer(
    queue: cl_command_queue,
    src: cl_mem,
    dst: cl_mem,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    waits: cl_uint,
    wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let forward = target().clEnqueueCopyBuffer.expect("the runtime has it");
    let status = forward(
        queue, src, dst, src_offset, dst_offset, size, waits, wait_list, event,
    );
    wrote(dst, status);
    status
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn enqueue_copy_buffer_rect(
    queue: cl_command_queue,
    src: cl_mem,
    dst: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    src_row_pitch: usize,
    src_slice_pitch: usize,
    dst_row_pitch: usize,
    dst_slice_pitch: usize,
    waits: cl_uint,
    wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let forward = target()
        .clEnqueueCopyBufferRect
        .expect("the runtime has it");
    let status = forward(
        queue,
        src,
        dst,
        src_origin,
        dst_origin,
        region,
        src_row_pitch,
        src_slice_pitch,
        dst_row_pitch,
        dst_slice_pitch,
        waits,
        wait_list,
        event,
    );
    wrote(dst, status);
    status
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn enqueue_copy_image_to_buffer(
    queue: cl_command_queue,
    image: cl_mem,
    dst: cl_mem,
    origin: *const usize,
    region: *const usize,
    dst_offset: usize,
    waits: cl_uint,
    wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let forward = target()
        .clEnqueueCopyImageToBuffer
        .expect("the runtime has it");
    let status = forward(
        queue, image, dst, origin, region, dst_offset, waits, wait_list, event,
    );
    wrote(dst, status);
    status
}

/// A map for writing hands the host the buffer's memory: it holds the
/// host's data from then on.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn enqueue_map_buffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    map_flags: cl_map_flags,
    offset: usize,
    size: usize,
    waits: cl_uint,
    wait_list: *const cl_event,
    event: *mut cl_event,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    let forward = target().clEnqueueMapBuffer.expect("the runtime has it");
    let mapped = forward(
        queue,
        buffer,
        blocking,
        map_flags,
        offset,
        size,
        waits,
        wait_list,
        event,
        errcode_ret,
    );
    if !mapped.is_null() && map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0 {
        wrote(buffer, CL_SUCCESS);
    }
    mapped
}
