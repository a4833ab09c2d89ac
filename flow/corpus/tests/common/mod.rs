//! What the corpus tests share: each case's default manifest, compiled and
//! checked against its kernel's signature.

use clflow_compile::{CompileRequest, Compiler};
use clflow_core::Launch;
use clflow_corpus::Case;
use clflow_manifest::{CheckedManifest, IntegerSigns, Manifest};
use clflow_spirv::Module;
use std::path::PathBuf;

pub fn kernels_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../kernels")
}

/// The case's default manifest, checked against its kernel as compiled to
/// SPIR-V, and materialised; with the module.
pub fn checked_launch(case: Case, compiler: &Compiler) -> (CheckedManifest, Launch, Module) {
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
    let module = clflow_spirv::load(&compiled.spirv).unwrap_or_else(|e| panic!("{case}: {e}"));
    let kernels = clflow_spirv::reflect_kernels(&module).unwrap_or_else(|e| panic!("{case}: {e}"));
    let kernel = kernels
        .iter()
        .find(|k| k.signature.name == case.kernel())
        .unwrap_or_else(|| panic!("{case}: kernel `{}` not in the module", case.kernel()));
    let manifest = manifest
        .check(&kernel.signature, IntegerSigns::Declared)
        .unwrap_or_else(|e| panic!("{e}"));
    let launch = manifest.materialize().unwrap_or_else(|e| panic!("{e}"));
    (manifest, launch, module)
}
