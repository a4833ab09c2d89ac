//! The translator: every kernel of any module that loads translates to
//! bytecode or gives an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(module) = clflow_interp::load(bytes) else {
        return;
    };
    let Ok(kernels) = clflow_spirv::reflect_kernels(&module) else {
        return;
    };
    for kernel in kernels {
        let _ = clflow_interp::Program::translate(&module, &kernel.signature.name);
    }
});
