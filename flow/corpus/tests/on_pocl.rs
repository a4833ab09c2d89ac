//! Every case of the corpus, end to end on the OpenCL device that is always
//! present: its default manifest loads and matches the kernel's compiled
//! signature, and PoCL's output buffers pass the case's Rust reference.
//! (`ci/test` installs PoCL and the compile toolchain.)

use clflow_compile::{CompileRequest, Compiler};
use clflow_core::Launch;
use clflow_corpus::{check_outputs, Case};
use clflow_manifest::{CheckedManifest, IntegerSigns, Manifest};
use clflow_ocl::{DeviceSelector, ProgramSource};
use std::path::PathBuf;

fn kernels_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../kernels")
}

/// The case's default manifest, checked against its kernel as compiled to
/// SPIR-V, and materialised.
fn checked_launch(case: Case, compiler: &Compiler) -> (CheckedManifest, Launch) {
    let path = kernels_dir()
        .join(case.name())
        .join(format!("{}.toml", case.name()));
    let manifest = Manifest::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let compiled = compiler
        .compile(&CompileRequest::new(
            &manifest.info().source,
            &manifest.info().build_options,
        ))
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    let module = clflow_spirv::load(&compiled.spirv).unwrap();
    let kernels = clflow_spirv::reflect_kernels(&module).unwrap();
    let kernel = kernels
        .iter()
        .find(|k| k.signature.name == case.kernel())
        .unwrap_or_else(|| panic!("{case}: kernel `{}` not in the module", case.kernel()));
    let manifest = manifest
        .check(&kernel.signature, IntegerSigns::Declared)
        .unwrap_or_else(|e| panic!("{e}"));
    let launch = manifest.materialize().unwrap_or_else(|e| panic!("{e}"));
    (manifest, launch)
}

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
        let (manifest, launch) = checked_launch(case, &compiler);
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
