//! Every case of the corpus, end to end on the OpenCL device that is always
//! present: its default manifest loads and matches the kernel's compiled
//! signature, and PoCL's output buffers pass the case's Rust reference.
//! (`ci/test` installs PoCL and the compile toolchain.)

mod common;
use clflow_compile::Compiler;
use clflow_corpus::{check_outputs, Case};
use clflow_ocl::{DeviceSelector, ProgramSource};
use common::checked_launch;

#[test]
fn every_case_runs_on_pocl_and_matches_its_reference() {
    let cache = tempfile::tempdir().unwrap();
    let compiler = Compiler::discover()
        .expect("the compile toolchain (run ci/setup)")
        .with_cache_dir(Some(cache.path().to_path_buf()));
    let device = clflow_ocl::select_device(Some(&DeviceSelector::parse("portable computing")))
        .expect("the PoCL device (ci/setup installs pocl-opencl-icd)");

    let mut failures = Vec::new();
    for case in Case::ALL {
        let (manifest, launch, _) = checked_launch(case, &compiler);
        let info = manifest.info();
        let source = ProgramSource::from_file(&info.source, &info.build_options).unwrap();
        let result = clflow_ocl::run_launch(&device, &source, &launch)
            .unwrap_or_else(|e| panic!("{case} on PoCL: {e}"));
        assert!(result.kernel_ns > 0, "{case}: no kernel time");
        if let Err(mismatch) = check_outputs(case, &launch, &result.outputs) {
            failures.push(format!("{case}: {mismatch}"));
        }
        // The checker must catch a wrong result too: flip a bit in each byte
        // of an aligned 8-byte window, which reaches the exponent of any
        // float or double element in it.
        let mut corrupted = result.outputs.clone();
        let first_output = corrupted.iter_mut().flatten().next().unwrap();
        let len = first_output.len();
        let window = (len / 2) & !7;
        for byte in &mut first_output[window..(window + 8).min(len)] {
            *byte ^= 0x40;
        }
        assert!(
            check_outputs(case, &launch, &corrupted).is_err(),
            "{case}: a corrupted output passed the reference check"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
