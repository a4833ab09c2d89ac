//! `clflow run`: time a kernel on one device, sample its power, and check
//! that the device computes what the interpreter computes.

use crate::failure::Failure;
use crate::output::{print_json, Verbosity};
use clap::Args;
use clflow_metrics::Unit;
use clflow_pipeline::capture;
use clflow_pipeline::device::reference_outputs;
use clflow_pipeline::device::{run_on_device, DeviceRun, KernelOnDevice, TimingPlan};
use clflow_pipeline::history;
use clflow_pipeline::history::history_entry;
use clflow_pipeline::input::prepare_manifest;
use clflow_pipeline::Session;
use std::path::{Path, PathBuf};

const EXAMPLES: &str = "\
Examples:
  clflow run kernels/vadd/vadd.toml --device 0
      time vadd on device 0 for at least a second of kernel time; compare its outputs
  clflow run kernels/lookup3/lookup3.toml --device pocl --json
      the same on the device whose name contains `pocl`, as JSON
  clflow run kernels/sgemm/sgemm.toml --device gpu --repetitions 20
      exactly 20 timed launches
  clflow run captures/app --device 0 --min-time 0.1
      every launch `clflow capture` recorded, in turn, then the times summed per kernel

T is the median START->END time of the timed launches (OpenCL profiling events), after a
first launch whose outputs are compared with the interpreter's and a warm-up. P is the
highest power sample over the timed launches (the paper's definition). Exit status 1 when
the device computes a different result.";

/// Time a kernel on a device, sample its power, and check its outputs.
#[derive(Args)]
#[command(
    long_about = "Build the manifest's kernel from source on the device, run it once and compare \
    its output buffers with clflow's interpreter (integers exactly, floats within a tolerance), \
    warm up, then time repeated launches with OpenCL profiling events until their kernel time \
    spans --min-time, sampling the device's power sensor over them.",
    after_help = EXAMPLES
)]
pub struct RunArgs {
    /// The kernel manifest (.toml or Oclgrind .sim), or a capture (each of its launches).
    #[arg(value_name = "MANIFEST")]
    manifest: PathBuf,
    /// The device: its index in `clflow devices`, or a case-insensitive part of
    /// its platform and device name.
    #[arg(long, short = 'd', value_name = "SEL", value_parser = super::selector)]
    device: String,
    /// Print the run as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Launch until the timed launches' kernel time spans this many seconds. A kernel of microseconds, whose launches
    /// cost the host far more, stops at ten times this in wall time (at least 2 s), and says so.
    #[arg(long, value_name = "SECS", default_value_t = TimingPlan::default().min_time_s)]
    min_time: f64,
    /// Exactly this many timed launches (overrides --min-time).
    #[arg(long, value_name = "N")]
    repetitions: Option<usize>,
    /// Do not compare the outputs with the interpreter's (skips interpreting).
    #[arg(long)]
    no_compare: bool,
    /// The history store to append to (default: $CLFLOW_STORE, else the data directory).
    #[arg(long, value_name = "PATH")]
    store: Option<PathBuf>,
    /// Do not append to the history store.
    #[arg(long)]
    no_history: bool,
    #[command(flatten)]
    build: super::ManifestBuildOptions,
}

pub fn run(args: RunArgs, verbosity: Verbosity) -> crate::Result<()> {
    let session = Session::new(&verbosity).with_build_options(&args.build.options);
    clflow_pipeline::device::check_min_time(args.min_time)?;
    if args.repetitions == Some(0) {
        return Err(Failure::input("--repetitions 0: time at least one launch"));
    }
    let plan = TimingPlan {
        min_time_s: args.min_time,
        repetitions: args.repetitions,
        ..TimingPlan::default()
    };
    // A capture stands for its launches, each run in turn.
    let manifests = capture::expand(std::slice::from_ref(&args.manifest))?;
    let mut runs = Vec::new();
    for manifest in &manifests {
        runs.push((manifest, run_one(manifest, &args, &plan, &session)?));
    }
    if !args.no_history {
        let entries: Vec<_> = runs
            .iter()
            .map(|(manifest, (source, run))| history_entry("run", manifest, source, run))
            .collect();
        history::record(args.store.as_deref(), &entries, &verbosity);
    }
    let device_runs: Vec<&DeviceRun> = runs.iter().map(|(_, (_, run))| run).collect();
    if capture::is_capture(&args.manifest) {
        if args.json {
            print_json(&device_runs)?;
        } else {
            for run in &device_runs {
                print!("{}", render(run));
            }
            print!("{}", render_totals(&device_runs));
        }
    } else if args.json {
        print_json(device_runs[0])?;
    } else {
        print!("{}", render(device_runs[0]));
    }
    for (manifest, (_, run)) in &runs {
        if run.outputs.is_wrong() {
            return Err(Failure::analysis(format!(
                "{}: {} computes a different result: {}",
                manifest.display(),
                run.device,
                run.outputs.summary()
            ))
            .with_hint(
                "the device or its compiler disagrees with the OpenCL C semantics the interpreter \
                 follows; compare the dumped buffers of `clflow count --dump DIR`",
            ));
        }
    }
    Ok(())
}

/// Times one manifest's launch on the device, its outputs checked against
/// the interpreter's unless `--no-compare`; with the kernel's source.
fn run_one(
    manifest: &Path,
    args: &RunArgs,
    plan: &TimingPlan,
    session: &Session,
) -> crate::Result<(PathBuf, DeviceRun)> {
    let (input, launch) = prepare_manifest(manifest, "run", session)?;
    // The device is checked before the interpreter spends its time.
    let device = session.device(&args.device)?;
    let reference = if args.no_compare {
        None
    } else {
        Some(reference_outputs(
            manifest,
            &input,
            &launch,
            session.observer(),
        )?)
    };
    let run = run_on_device(
        session,
        device,
        &KernelOnDevice::new(&input, &launch, reference.as_deref()),
        plan,
    )?;
    Ok((input.source, run))
}

/// A capture's launches summed: each kernel's median times, and all.
fn render_totals(runs: &[&DeviceRun]) -> String {
    let mut per_kernel: std::collections::BTreeMap<&str, (usize, f64)> = Default::default();
    for run in runs {
        let total = per_kernel.entry(run.kernel.as_str()).or_default();
        total.0 += 1;
        total.1 += run.timing.median_s;
    }
    let s = |v: f64| Unit::Seconds.format(v);
    let mut out = String::from("\nPer kernel, the launches' median times summed:\n");
    for (kernel, (launches, time)) in &per_kernel {
        out.push_str(&format!(
            "  {kernel:<24} {launches:>4} launches  T {}\n",
            s(*time)
        ));
    }
    let all: f64 = per_kernel.values().map(|(_, t)| t).sum();
    out.push_str(&format!(
        "Application: {} launches, T {}\n",
        runs.len(),
        s(all)
    ));
    out
}

/// The run as a short table on stdout.
pub fn render(run: &DeviceRun) -> String {
    let t = &run.timing;
    let s = |v: f64| Unit::Seconds.format(v);
    let mut out = format!("kernel `{}` on {}\n", run.kernel, run.device);
    out.push_str(&format!(
        "  T        {} median of {} launches (min {}, max {}, CV {}); {} of kernel time\n",
        s(t.median_s),
        t.launches,
        s(t.min_s),
        s(t.max_s),
        t.cv.map(|cv| format!("{:.2}%", cv * 100.0))
            .unwrap_or_else(|| "n/a".into()),
        s(t.total_s)
    ));
    out.push_str(&format!(
        "  build    {} on the device; warm-up {}\n",
        s(t.build_s),
        t.warmup_s
            .iter()
            .map(|&w| s(w))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    match &run.power {
        Some(p) => {
            let w = |v: Option<f64>| v.map_or("n/a".into(), |v| Unit::Watts.format(v));
            out.push_str(&format!(
                "  P        {} peak, {} mean over {} samples ({}: {})\n",
                w(p.peak_w),
                w(p.mean_w),
                p.samples,
                p.source,
                p.sensor
            ));
            if let Some(e) = p.energy_j {
                out.push_str(&format!(
                    "  energy   {} counted over {} of launches\n",
                    Unit::Joules.format(e),
                    s(p.duration_s)
                ));
            }
        }
        None => out.push_str("  P        not available\n"),
    }
    out.push_str(&format!("  outputs  {}\n", run.outputs.summary()));
    for note in &run.notes {
        out.push_str(&format!("  note: {note}\n"));
    }
    out
}
