//! Launches under Oclgrind, in the helper process, checked against counts
//! derived by hand. They need the oclgrind package (ci/test installs it).

mod common;

use clflow_ocl::oclgrind::MemoryOps;
use clflow_ocl::{run_under_oclgrind, OclgrindConfig, ProgramSource};
use common::*;
use std::path::PathBuf;

fn oclgrind() -> OclgrindConfig {
    OclgrindConfig::with_child(PathBuf::from(env!("CARGO_BIN_EXE_clflow-ocl-child")))
        .unwrap_or_else(|err| panic!("these tests need Oclgrind (Debian: oclgrind): {err}"))
}

#[test]
fn vadd_counts_match_the_hand_derivation() {
    let n = 1024;
    let source = ProgramSource::from_text("vadd.cl", VADD, "");
    let run = run_under_oclgrind(&oclgrind(), &source, &vadd_launch(n, Some(64))).unwrap();
    let h = &run.histogram;
    assert_eq!(h.kernel, "vadd");
    assert_eq!(h.count("fadd"), n as u64);
    assert_eq!(
        h.loads.global,
        MemoryOps { instructions: 2 * n as u64, bytes: 8 * n as u64 }
    );
    assert_eq!(
        h.stores.global,
        MemoryOps { instructions: n as u64, bytes: 4 * n as u64 }
    );
    assert_eq!(floats(run.outputs[2].as_ref().unwrap()), vadd_expected(n));
    assert_eq!(run.outputs[0], None);
    assert!(run.diagnostics.is_empty(), "{:?}", run.diagnostics);
}

const ROTATE: &str = "\
__kernel void rot(__global uint *x, const uint k)
{
    size_t i = get_global_id(0);
    uint v = x[i];
    x[i] = (v << k) | (v >> (32 - k));
}
";

fn rotate_launch() -> clflow_core::Launch {
    let mut launch = vadd_launch(64, None);
    launch.kernel = "rot".into();
    launch.args = vec![
        buffer(
            clflow_core::ScalarType::UInt,
            clflow_core::Access::ReadWrite,
            (0..64u32)
                .flat_map(|i| (i * 0x0102_0304).to_le_bytes())
                .collect(),
        ),
        scalar("k", 7u32.to_le_bytes().to_vec()),
    ];
    launch
}

#[test]
fn the_optimised_rotate_idiom_fails_in_oclgrind_and_says_how_to_avoid_it() {
    let source = ProgramSource::from_text("rot.cl", ROTATE, "");
    let err = run_under_oclgrind(&oclgrind(), &source, &rotate_launch()).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("Undefined external function: llvm.fshl.i32"),
        "{message}"
    );
    assert!(message.contains("-cl-opt-disable"), "{message}");
}

#[test]
fn the_rotate_idiom_runs_in_oclgrind_without_optimisation() {
    let source = ProgramSource::from_text("rot.cl", ROTATE, "-cl-opt-disable");
    let run = run_under_oclgrind(&oclgrind(), &source, &rotate_launch()).unwrap();
    let expected: Vec<u8> = (0..64u32)
        .flat_map(|i| (i * 0x0102_0304).rotate_left(7).to_le_bytes())
        .collect();
    assert_eq!(run.outputs[0].as_deref(), Some(&expected[..]));
    // Unoptimised code keeps locals in private memory, but global traffic
    // is the same: one 4-byte load and store per work-item.
    assert_eq!(
        run.histogram.loads.global,
        MemoryOps { instructions: 64, bytes: 256 }
    );
    assert_eq!(
        run.histogram.stores.global,
        MemoryOps { instructions: 64, bytes: 256 }
    );
    assert!(run.histogram.loads.private.bytes > 0);
    assert_eq!(
        (
            run.histogram.count("shl"),
            run.histogram.count("lshr"),
            run.histogram.count("or")
        ),
        (64, 64, 64)
    );
}

#[test]
fn invalid_accesses_come_back_as_diagnostics() {
    let source = "__kernel void shift(__global uint *x, const uint k) { size_t i = get_global_id(0); x[i] = x[i + k]; }";
    let mut launch = rotate_launch();
    launch.kernel = "shift".into();
    launch.args[1] = scalar("k", 1u32.to_le_bytes().to_vec());
    let run = run_under_oclgrind(
        &oclgrind(),
        &ProgramSource::from_text("shift.cl", source, ""),
        &launch,
    )
    .unwrap();
    assert!(
        run.diagnostics
            .iter()
            .any(|d| d.starts_with("Invalid read of size 4 at global memory address")),
        "{:?}",
        run.diagnostics
    );
    assert!(
        run.diagnostics.iter().any(|d| d.contains("Global(63,0,0)")),
        "{:?}",
        run.diagnostics
    );
    assert_eq!(
        run.histogram.loads.global,
        MemoryOps { instructions: 64, bytes: 256 }
    );
}

#[test]
fn helper_failures_are_clear_errors() {
    let config =
        OclgrindConfig::with_child(PathBuf::from("/nonexistent/clflow-ocl-child")).unwrap();
    let source = ProgramSource::from_text("vadd.cl", VADD, "");
    let err = run_under_oclgrind(&config, &source, &vadd_launch(4, None)).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("OpenCL helper process /nonexistent/clflow-ocl-child: could not start"),
        "{err}"
    );
}
