//! `clflow capture`: record an unmodified OpenCL application's kernel
//! launches as manifests the other commands take.

use crate::failure::Failure;
use crate::output::Verbosity;
use clap::Args;
use clflow_pipeline::capture::{capture, CaptureOptions};
use clflow_pipeline::Session;
use std::ffi::OsString;
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  clflow capture --out captures/app -- ./app --size 1024
      every launch of every kernel ./app makes, each as captures/app/launch-NNNNNN.toml
  clflow capture --kernel 'gemm*' --launches first -- python3 script.py
      only the first launch of each kernel whose name starts with gemm
  clflow capture --launches 'bfs_step:0,5-9' --launches 'reduce*:last' --launches every:100 -- ./app
      launches 0 and 5 to 9 of bfs_step, the last of each reduce* kernel, and every
      100th launch of every other kernel
  clflow count captures/app
      every launch counted on its captured inputs, checked against the device's outputs,
      with totals per kernel and for the application
  clflow count captures/app/launch-000003.toml --cache 40MiB/128
      one captured launch, like any manifest
  clflow analyze captures/app --device 0
      the whole flow over every captured launch

The application runs unchanged under an OpenCL loader layer (OPENCL_LAYERS, honoured by the
ICD loader), whether it links libOpenCL or opens it at run time. For each selected launch the
layer waits for the work queued before it, saves every buffer argument, runs the launch, and
saves the buffers it may have written (the expected outputs, listed in capture.toml). Only
selected launches cost more than a pass-through; for `last`, each launch of the kernel is
captured and replaces the one before, so one launch's files stay on disk. Buffer files are
named by their contents, so a buffer no launch changed is stored once, and gzip-compressed
(.bin.gz) where that saves a quarter or more. Manifests type each argument from the kernel's
signature: a buffer of structs as the source names the struct (type = \"struct Node\",
count in structs), or as uchar bytes where it holds no whole number of them. Queues profile,
so capture.toml has each launch's device time and device. Programs made from IL are kept as
their SPIR-V module; those built from device binaries are recorded and named as not
analysable (pyopencl and OpenCV are asked to build from source: PYOPENCL_NO_CACHE=1,
OPENCV_OPENCL_CACHE_ENABLE=0). Another application with a kernel cache of its own (hashcat)
loads such binaries once it has run: --from-source gives it an empty cache directory and
refuses the binaries it still loads, so that it builds from source as on its first run. The
exit status is the application's.";

/// Record an application's kernel launches as manifests.
#[derive(Args)]
#[command(after_help = EXAMPLES)]
pub struct CaptureArgs {
    /// Where the capture goes: capture.toml, one manifest per launch, and raw/.
    #[arg(short, long, value_name = "DIR", default_value = "capture")]
    out: PathBuf,
    /// Capture only kernels whose name matches (`*` and `?`); repeat or separate with commas.
    #[arg(long, value_name = "GLOB", value_delimiter = ',')]
    kernel: Vec<String>,
    /// Which launches of each kernel: all, first, last, every:N, or indexes and ranges
    /// (0,5-9), for every kernel or, as GLOB:SPEC, for the kernels GLOB matches; repeat
    /// for several rules (the first whose GLOB matches decides). Default: all.
    #[arg(long, value_name = "[GLOB:]SPEC")]
    launches: Vec<String>,
    /// Write at most this many bytes of buffers (e.g. 2GiB); later launches run
    /// uncaptured and are listed in capture.toml.
    #[arg(long, value_name = "SIZE", value_parser = byte_size)]
    max_bytes: Option<u64>,
    /// Make the application build its kernels from source, which clflow can analyse, where
    /// it would load them from its kernel cache: it runs with an empty cache directory
    /// (XDG_CACHE_HOME, where hashcat, OpenCV and PoCL keep theirs), and programs it still
    /// makes from device binaries are refused, as OpenCL refuses a binary that does not suit
    /// the device (most applications then build from source).
    #[arg(long)]
    from_source: bool,
    /// The application and its arguments, after `--`.
    #[arg(value_name = "APP", trailing_var_arg = true, required = true, num_args = 1..)]
    app: Vec<OsString>,
}

pub fn run(args: CaptureArgs, verbosity: Verbosity) -> crate::Result<()> {
    let session = Session::new(&verbosity);
    let options = CaptureOptions {
        out: args.out,
        kernels: args.kernel,
        launches: args.launches,
        max_bytes: args.max_bytes,
        from_source: args.from_source,
        app: args.app,
    };
    let captured = capture(&options, &session)?;
    for why in &captured.skipped {
        verbosity.note(format!("clflow: warning: left out: {why}"));
    }
    if captured.refused_binaries > 0 {
        verbosity.note(format!(
            "refused {} program(s) from device binaries (--from-source); what the application \
             built from source instead is captured",
            captured.refused_binaries
        ));
    }
    let kernels: std::collections::BTreeSet<&str> = captured
        .launches
        .iter()
        .map(|l| l.kernel.as_str())
        .collect();
    let count =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let devices: Vec<String> = captured
        .devices
        .iter()
        .map(|d| format!("{} ({}, driver {})", d.name, d.platform, d.driver))
        .collect();
    let on = match devices.is_empty() {
        true => String::new(),
        false => format!(" on {}", devices.join(" and ")),
    };
    verbosity.note(format!(
        "captured {} of {}{on} to {}; list: {}",
        count(captured.launches.len(), "launch", "launches"),
        count(kernels.len(), "kernel", "kernels"),
        options.out.display(),
        options.out.join("capture.toml").display()
    ));
    let app = options.app[0].to_string_lossy();
    if !captured.status.success() {
        return Err(Failure::analysis(format!(
            "{app} exited with {}; the capture holds the launches recorded before",
            captured.status
        ))
        .with_exit_status(exit_status_of(captured.status)));
    }
    // The application succeeded, so capture does: what it left out is said.
    if captured.launches.is_empty() {
        let why = match captured.skipped.len() {
            0 => format!(
                "{app} launched no kernel the selection takes (check --kernel and --launches; \
                 an application that makes no OpenCL calls captures nothing)"
            ),
            n => format!(
                "none of the {n} launches recorded could become a manifest (the warnings above \
                 say why)"
            ),
        };
        verbosity.note(format!("clflow: warning: {why}"));
    }
    Ok(())
}

/// The status a shell gives a command that ended so: its own exit code, or
/// 128 plus the signal that killed it.
fn exit_status_of(status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code).unwrap_or(1).max(1),
        (None, Some(signal)) => u8::try_from(128 + signal).unwrap_or(1),
        (None, None) => 1,
    }
}

/// `--max-bytes`: a size with an optional unit.
fn byte_size(text: &str) -> Result<u64, String> {
    clflow_traffic::parse_size(text)
}
