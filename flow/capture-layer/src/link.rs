//! Separate compilation: `clCompileProgram` (options and embedded headers)
//! and `clLinkProgram` (a new program of its inputs), followed so that the
//! kernels of a linked program are captured like any other.
//!
//! Safety: as every wrapper of the layer, these are called by the loader
//! with the application's arguments, which the OpenCL API makes valid
//! (arrays of the counts given, NUL-terminated strings); they are read
//! only where not NULL, then passed on unchanged.

use crate::layer::{target, with_state};
use opencl_sys::*;
use std::ffi::{c_char, c_void, CStr};

type Notify = Option<unsafe extern "C" fn(program: cl_program, user_data: *mut c_void)>;

/// A NUL-terminated C string, or "" where NULL.
unsafe fn text(s: *const c_char) -> String {
    match s.is_null() {
        true => String::new(),
        false => CStr::from_ptr(s).to_string_lossy().into_owned(),
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "C" fn compile_program(
    program: cl_program,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    options: *const c_char,
    num_input_headers: cl_uint,
    input_headers: *const cl_program,
    header_include_names: *mut *const c_char,
    pfn_notify: Notify,
    user_data: *mut c_void,
) -> cl_int {
    let mut headers = Vec::new();
    if !input_headers.is_null() && !header_include_names.is_null() {
        for i in 0..num_input_headers as usize {
            let name = text(*header_include_names.add(i));
            headers.push((*input_headers.add(i) as usize, name));
        }
    }
    let compile_options = text(options);
    with_state(|state| state.compile_program(program as usize, compile_options, &headers));
    let forward = target().clCompileProgram.expect("the runtime has it");
    forward(
        program,
        num_devices,
        device_list,
        options,
        num_input_headers,
        input_headers,
        header_include_names,
        pfn_notify,
        user_data,
    )
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "C" fn link_program(
    context: cl_context,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    options: *const c_char,
    num_input_programs: cl_uint,
    input_programs: *const cl_program,
    pfn_notify: Notify,
    user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_program {
    let forward = target().clLinkProgram.expect("the runtime has it");
    let linked = forward(
        context,
        num_devices,
        device_list,
        options,
        num_input_programs,
        input_programs,
        pfn_notify,
        user_data,
        errcode_ret,
    );
    if !linked.is_null() && !input_programs.is_null() {
        let inputs: Vec<usize> = (0..num_input_programs as usize)
            .map(|i| *input_programs.add(i) as usize)
            .collect();
        with_state(|state| state.link_program(linked as usize, &inputs));
    }
    linked
}
