//! Runs a manifest's launch under Oclgrind with `--inst-counts`, through
//! its OpenCL runtime in clflow's helper process, and prints what the
//! benchmark script (`ci/bench-count`) compares with `clflow count`:
//!
//! ```text
//! seconds=81.2 load_bytes=... store_bytes=... w_paper=...
//! ```
//!
//! `w_paper` sums the paper's selection of LLVM instructions
//! (`clflow_ocl::oclgrind::PAPER_LLVM_OPS`, what `--ops` with
//! `PAPER_OPS` counts in clflow). The kernel is built with the manifest's
//! options, at Oclgrind's default optimisation or, with `--opt-disable`,
//! with `-cl-opt-disable` too (Oclgrind 21.10 cannot run the `llvm.fshl`
//! intrinsic the optimiser makes of rotations written as shifts).
//! Usage: `oclgrind_count MANIFEST CHILD [--opt-disable]`, CHILD being the
//! path of `clflow-ocl-child`.

use clflow_ocl::oclgrind::PAPER_LLVM_OPS;
use clflow_ocl::{run_under_oclgrind, OclgrindConfig, ProgramSource};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (manifest, child, opt_disable) = match args.as_slice() {
        [manifest, child] => (manifest, child, false),
        [manifest, child, flag] if flag == "--opt-disable" => (manifest, child, true),
        _ => {
            eprintln!("usage: oclgrind_count MANIFEST CLFLOW_OCL_CHILD [--opt-disable]");
            return ExitCode::from(2);
        }
    };
    match run(manifest, child, opt_disable) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("oclgrind_count: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(manifest: &str, child: &str, opt_disable: bool) -> Result<String, String> {
    let manifest =
        clflow_manifest::Manifest::load(manifest).map_err(|e| format!("{manifest}: {e}"))?;
    // No compiled kernel here to check against (Oclgrind builds its own), so
    // the manifest's arguments go as it types them: TOML manifests only.
    let manifest = manifest.check_typed().map_err(|e| e.to_string())?;
    let launch = manifest.materialize().map_err(|e| e.to_string())?;
    let level = if opt_disable { "-cl-opt-disable" } else { "" };
    let options = format!("{level} {}", manifest.info().build_options);
    let source = ProgramSource::from_file(&manifest.info().source, options.trim())
        .map_err(|e| e.to_string())?;
    let config = OclgrindConfig::with_child(PathBuf::from(child)).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let run = run_under_oclgrind(&config, &source, &launch).map_err(|e| e.to_string())?;
    let seconds = started.elapsed().as_secs_f64();
    let h = &run.histogram;
    let w: u64 = PAPER_LLVM_OPS.iter().map(|op| h.count(op)).sum();
    Ok(format!(
        "seconds={seconds:.3} load_bytes={} store_bytes={} w_paper={w}",
        h.loads.global.bytes + h.loads.constant.bytes,
        h.stores.global.bytes + h.stores.constant.bytes
    ))
}
