//! A machine with no OpenCL runtime gets a clear error, not a crash. The
//! helper process runs with the ICD loader pointed at an empty vendor
//! directory, which is what such a machine looks like to clflow.

mod common;

use clflow_ocl::child::ChildCommand;
use clflow_ocl::{OclError, ProgramSource};
use common::*;
use std::path::PathBuf;

#[test]
fn no_installed_icd_means_no_platform_with_the_install_hint() {
    let vendors = tempfile::tempdir().unwrap();
    let child = ChildCommand {
        program: PathBuf::from(env!("CARGO_BIN_EXE_clflow-ocl-child")),
        env: vec![(
            "OCL_ICD_VENDORS".into(),
            vendors.path().display().to_string(),
        )],
    };
    let source = ProgramSource::from_text("vadd.cl", VADD, "");
    let run = child.run("0", &source, &vadd_launch(4, None)).unwrap();
    let err = run.result.unwrap_err();
    assert!(matches!(err, OclError::NoPlatform { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "no OpenCL platform found (the OpenCL loader found no installed ICD): \
         install an ICD such as pocl-opencl-icd (ci/setup does)"
    );
}
