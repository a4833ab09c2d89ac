//! Running launches under Oclgrind, the OpenCL device simulator, to read
//! its instruction counts: the figures clflow's own counts are checked
//! against.
//!
//! Oclgrind serves as an OpenCL platform when its runtime library is loaded
//! in place of the ICD loader. That choice is made when the OpenCL library
//! loads, once per process, so the launch runs in the helper process with
//! `OPENCL_DYLIB_PATH` pointing at Oclgrind and `OCLGRIND_INST_COUNTS=1`,
//! which makes Oclgrind print its histogram when each kernel ends.

mod histogram;
mod paper_ops;

pub use histogram::{parse_histograms, InstructionHistogram, MemoryOps, SpaceTraffic};
pub use paper_ops::{PAPER_LLVM_OPS, PAPER_OPS};

use crate::child::ChildCommand;
use crate::error::{OclError, Result};
use crate::program::ProgramSource;
use clflow_core::Launch;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Where Debian's oclgrind package installs the runtime library.
pub const DEFAULT_LIBRARY: &str = "/usr/lib/oclgrind/liboclgrind-rt.so";

/// How to reach Oclgrind.
#[derive(Debug, Clone)]
pub struct OclgrindConfig {
    /// Oclgrind's runtime library (`liboclgrind-rt.so`).
    pub library: PathBuf,
    /// The helper process that hosts it.
    pub child: ChildCommand,
}

/// What a launch under Oclgrind gave back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OclgrindRun {
    pub histogram: InstructionHistogram,
    /// Output buffers, as [`crate::LaunchResult::outputs`].
    pub outputs: Vec<Option<Vec<u8>>>,
    /// Oclgrind's other messages (invalid accesses, data races ...); empty
    /// when the kernel ran cleanly.
    pub diagnostics: Vec<String>,
}

impl OclgrindConfig {
    /// The library from `$CLFLOW_OCLGRIND_LIB` or the Debian location, and
    /// the helper found as [`ChildCommand::locate`] does.
    pub fn locate() -> Result<Self> {
        Self::with_child(ChildCommand::locate()?.program)
    }

    /// The usual library, with the helper binary at `child`.
    pub fn with_child(child: PathBuf) -> Result<Self> {
        let library = std::env::var_os("CLFLOW_OCLGRIND_LIB")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(DEFAULT_LIBRARY));
        if !library.is_file() {
            return Err(OclError::OclgrindMissing { path: library.display().to_string() });
        }
        let env = vec![
            (
                "OPENCL_DYLIB_PATH".to_string(),
                library.display().to_string(),
            ),
            ("OCLGRIND_INST_COUNTS".to_string(), "1".to_string()),
            // Plain digits in the histogram, whatever the user's locale.
            ("LC_ALL".to_string(), "C".to_string()),
        ];
        Ok(OclgrindConfig { library, child: ChildCommand { program: child, env } })
    }
}

/// Runs `launch` on Oclgrind and returns its histogram and output buffers.
pub fn run_under_oclgrind(
    config: &OclgrindConfig,
    source: &ProgramSource,
    launch: &Launch,
) -> Result<OclgrindRun> {
    let run = config.child.run("oclgrind", source, launch)?;
    let output = format!("{}\n{}", run.stdout, run.stderr);
    let diagnostics = diagnostics(&output);
    let result = run
        .result
        .map_err(|err| explain_failure(config, err, &diagnostics))?;
    let mut histograms = parse_histograms(&output)?;
    if histograms.len() != 1 || histograms[0].kernel != launch.kernel {
        let printed: Vec<&str> = histograms.iter().map(|h| h.kernel.as_str()).collect();
        return Err(OclError::Child {
            program: config.child.program.display().to_string(),
            problem: format!(
                "expected one instruction histogram, for kernel '{}'; Oclgrind printed {printed:?}",
                launch.kernel
            ),
        });
    }
    Ok(OclgrindRun {
        histogram: histograms.remove(0),
        outputs: result.outputs,
        diagnostics,
    })
}

/// Puts what Oclgrind printed beside an error of the launch.
fn explain_failure(config: &OclgrindConfig, err: OclError, diagnostics: &[String]) -> OclError {
    let program = config.child.program.display().to_string();
    match err {
        // The loader falls back to the system's OpenCL when the library
        // does not load, so a missing Oclgrind device means exactly that.
        OclError::Selector { .. } | OclError::NoDevice { .. } | OclError::NoPlatform { .. } => {
            OclError::Child {
                program,
                problem: format!(
                    "Oclgrind's runtime did not load from {} ({err})",
                    config.library.display()
                ),
            }
        }
        OclError::Cl { step, code } if !diagnostics.is_empty() => {
            let mut said = diagnostics.join(" | ");
            if said.contains("Undefined external function: llvm.") {
                // Oclgrind 21.10 lacks intrinsics that LLVM's optimiser forms
                // from idioms (llvm.fshl/fshr for rotates, llvm.abs).
                said.push_str(
                    " (build with -cl-opt-disable to keep the optimiser from forming it)",
                );
            }
            OclError::Oclgrind { step, code, said }
        }
        other => other,
    }
}

/// Oclgrind's messages: every non-empty line outside a histogram.
fn diagnostics(output: &str) -> Vec<String> {
    let mut inside = false;
    let mut lines = Vec::new();
    for line in output.lines() {
        if line
            .trim_start()
            .starts_with("Instructions executed for kernel '")
        {
            inside = true;
        } else if line.trim().is_empty() {
            inside = false;
        } else if !inside {
            lines.push(line.to_string());
        }
    }
    lines
}
