//! The loader and reflection: any bytes give a module or an error, never a
//! panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(module) = clflow_spirv::load(bytes) {
        let _ = clflow_spirv::reflect_kernels(&module);
    }
});
