//! `clflow check`: count (and time) every kernel of a suite, compare with the
//! baseline, and fail on regressions, for CI.

use crate::failure::Failure;
use crate::output::{print_json, Verbosity};
use clap::Args;
use clflow_check::{
    compare, count_metrics, device_metrics, render, updated_baseline, Baseline, Comparison,
    Measurement, Suite, SuiteManifest, TimedRun,
};
use clflow_interp::{OpSet, RunOptions};
use clflow_pipeline::count::interpret_at_cache;
use clflow_pipeline::device::time_for_check;
use clflow_pipeline::history;
use clflow_pipeline::input as kernel_input;
use clflow_pipeline::Session;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const EXAMPLES: &str = "\
Examples:
  clflow check ci/check-suite.toml --baseline ci/baseline.json
      count every kernel of the suite and compare with the baseline (no device needed)
  clflow check suite.toml --update
      accept what the kernels measure now as the new baseline
  clflow check suite.toml --junit report.xml --markdown comment.md
      also write a JUnit report for CI and a pull-request comment
  clflow check suite.toml --results gpu-run1.json gpu-run2.json
      compare timings recorded by `clflow run`/`analyze` (results.json or CSV) too
  clflow check captures/app --update   then   clflow check captures/app
      gate a captured application's launches (baseline captures/app/baseline.json)

Exit status: 0 no regression (improvements never fail), 1 a regression or a kernel
that could not be measured, 2 a broken suite, baseline or manifest.
Every check appends its counts and timings to the history store (see `clflow history`).";

/// Compare counts and timings with a baseline, for CI.
#[derive(Args)]
#[command(
    long_about = "Count every kernel the suite names with clflow's interpreter (exact and \
    deterministic: no accelerator needed), optionally time it on devices, compare each metric \
    with the baseline under the suite's rules, print what changed, and exit 1 on any regression.",
    after_help = EXAMPLES
)]
pub struct CheckArgs {
    /// The suite file (TOML): manifests, rules, metrics to ignore, a cache to gate traffic
    /// through. Or a capture (its directory or capture.toml): its launches, every count
    /// exact, the baseline baseline.json in the capture's directory.
    #[arg(value_name = "SUITE|CAPTURE")]
    suite: PathBuf,
    /// The baseline (default: the suite's `baseline`, else baseline.json beside it).
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Write what the kernels measure now as the baseline (and exit 0 unless a kernel failed).
    #[arg(long)]
    update: bool,
    /// Also write the comparison as JUnit XML.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Also write the comparison as Markdown (a pull-request comment).
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// Time the kernels on these devices (overrides the suite's `devices`).
    /// Repeat the flag or separate them with commas (`-d 0,gpu`).
    #[arg(long = "device", short = 'd', visible_alias = "devices", value_name = "SEL",
          value_delimiter = ',', value_parser = super::selector)]
    devices: Vec<String>,
    /// Take timings from results recorded elsewhere (results.json or a measurements CSV).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    results: Vec<PathBuf>,
    /// Print the comparison as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// List every compared metric, not only the ones that changed.
    #[arg(long)]
    all: bool,
    /// The history store to append to (default: $CLFLOW_STORE, else the data directory).
    #[arg(long, value_name = "PATH")]
    store: Option<PathBuf>,
    /// Do not append to the history store.
    #[arg(long)]
    no_history: bool,
}

pub fn run(args: CheckArgs, verbosity: Verbosity) -> crate::Result<()> {
    let session = Session::new(&verbosity);
    let suite = if clflow_pipeline::capture::is_capture(&args.suite) {
        let (_, dir) = clflow_pipeline::capture::read_capture(&args.suite)?;
        let manifests = clflow_pipeline::capture::expand(std::slice::from_ref(&args.suite))?;
        Suite::of_capture(&dir, manifests)
    } else {
        Suite::load(&args.suite)?
    };
    let baseline_path = args
        .baseline
        .clone()
        .unwrap_or_else(|| suite.baseline.clone());
    let baseline = match Baseline::load(&baseline_path) {
        Ok(b) => Some(b),
        Err(_) if args.update && !baseline_path.exists() => None,
        Err(e) => return Err(e.into()),
    };
    if let Some(b) = baseline.as_ref().filter(|_| !args.update) {
        if b.ops != suite.ops
            || b.line_bytes != suite.line_bytes
            || !b.recorded_with_cache(suite.cache)
        {
            let suite_cache = suite.cache.map(|c| c.to_string());
            return Err(Failure::input(format!(
                "{}: recorded with ops = \"{}\", line_bytes = {}, cache = {}; the suite asks for ops = \"{}\", line_bytes = {}, cache = {}",
                baseline_path.display(),
                b.ops,
                b.line_bytes,
                quoted_or_none(b.cache.as_deref()),
                suite.ops,
                suite.line_bytes,
                quoted_or_none(suite_cache.as_deref())
            ))
            .with_hint("record the baseline again with --update"));
        }
    }
    let ops: OpSet = suite
        .ops
        .parse()
        .map_err(|e| Failure::input(format!("{}: ops: {e}", args.suite.display())))?;
    let devices = if args.devices.is_empty() {
        &suite.devices
    } else {
        &args.devices
    };
    let recorded = read_recorded(&args.results)?;
    let timing = !devices.is_empty() || !args.results.is_empty();

    let commit = clflow_pipeline::history::commit_beside(&args.suite);
    let mut measured = Vec::new();
    let mut entries = Vec::new();
    let mut worst_input_failure = None;
    for manifest in &suite.manifests {
        verbosity.note(format!("checking {}", manifest.key));
        let outcome = measure(manifest, &suite, &ops, devices, &recorded, &session);
        let (measurement, kernel_entries) = match outcome {
            Ok((m, e)) => (m, e),
            Err(failure) => {
                if failure.kind == clflow_core::FailureKind::Input {
                    worst_input_failure.get_or_insert(failure.message.clone());
                }
                let m = Measurement {
                    key: manifest.key.clone(),
                    kernel: String::new(),
                    counts: Err(failure.message),
                    devices: None,
                };
                (m, Vec::new())
            }
        };
        measured.push(Measurement {
            devices: measurement.devices.filter(|_| timing),
            ..measurement
        });
        entries.extend(
            kernel_entries
                .into_iter()
                .map(|mut e: clflow_history::Entry| {
                    e.op_set = Some(suite.ops.clone());
                    e.git_commit = commit.clone();
                    e
                }),
        );
    }

    if !args.no_history {
        history::record(args.store.as_deref(), &entries, &verbosity);
    }

    let comparison = compare(&suite, baseline.as_ref(), &measured);
    write_outputs(&args, &comparison)?;

    if let Some(message) = worst_input_failure {
        return Err(Failure::input(message).with_hint("fix the manifest or kernel the suite names"));
    }
    if args.update {
        if comparison.summary.failed > 0 {
            return Err(Failure::analysis(format!(
                "{} kernel(s) could not be measured: baseline not updated",
                comparison.summary.failed
            )));
        }
        updated_baseline(&suite, baseline.as_ref(), &measured).save(&baseline_path)?;
        verbosity.note(format!(
            "baseline written: {} ({} kernels)",
            baseline_path.display(),
            measured.len()
        ));
        return Ok(());
    }
    if comparison.fails() {
        let s = &comparison.summary;
        return Err(Failure::analysis(format!(
            "check failed: {} regression(s), {} kernel(s) not measured",
            s.regressions, s.failed
        ))
        .with_hint("if the change is intended, accept it with --update and commit the baseline"));
    }
    Ok(())
}

fn write_outputs(args: &CheckArgs, comparison: &Comparison) -> crate::Result<()> {
    let write = |path: &Path, text: String| {
        std::fs::write(path, text)
            .map_err(|e| Failure::input(format!("cannot write {}: {e}", path.display())))
    };
    if let Some(path) = &args.junit {
        write(path, render::junit(comparison))?;
    }
    if let Some(path) = &args.markdown {
        write(path, render::markdown(comparison))?;
    }
    if args.json {
        print_json(comparison)
    } else {
        print!("{}", render::table(comparison, args.all));
        Ok(())
    }
}

/// `"32KiB/64"`, or `none`.
fn quoted_or_none(text: Option<&str>) -> String {
    text.map_or("none".into(), |t| format!("\"{t}\""))
}

/// Counts one manifest (through the suite's cache, if it has one), gathers
/// its timings, and builds its history entries.
fn measure(
    manifest: &SuiteManifest,
    suite: &Suite,
    ops: &OpSet,
    devices: &[String],
    recorded: &[clflow_metrics::ResultSet],
    session: &Session,
) -> crate::Result<(Measurement, Vec<clflow_history::Entry>)> {
    let verbosity = session.observer();
    let input = kernel_input::prepare(&manifest.path, "", true, session)?;
    let launch = input
        .manifest
        .as_ref()
        .ok_or_else(|| Failure::input(format!("{}: not a manifest", manifest.path.display())))?
        .materialize()?;
    let options = RunOptions {
        line_bytes: suite.line_bytes,
        ..RunOptions::default()
    };
    // The launch is lent, not given: the device timer still needs its inputs.
    let (result, traffic) = interpret_at_cache(
        &manifest.path,
        &input.module,
        Cow::Borrowed(&launch),
        &options,
        suite.cache,
        verbosity,
    )?;
    let report = result.counts.report(ops);
    let counts = count_metrics(&report, traffic.as_ref());

    let mut runs: Vec<TimedRun> = recorded_runs(recorded, &launch.kernel);
    if !devices.is_empty() {
        runs.extend(time_for_check(
            &input,
            &launch,
            &result.buffers,
            devices,
            session,
        )?);
    }
    let mut by_device: BTreeMap<String, Vec<&TimedRun>> = BTreeMap::new();
    for run in &runs {
        by_device
            .entry(run.run.device.clone())
            .or_default()
            .push(run);
    }
    let device_metrics: BTreeMap<_, _> = by_device
        .iter()
        .map(|(device, runs)| (device.clone(), device_metrics(report.w.total, runs)))
        .collect();

    let base = history::entry("check", &launch.kernel, &manifest.path, &input.source);
    let mut entries = vec![clflow_history::Entry {
        metrics: counts
            .iter()
            .map(|(name, value)| history::metric(name, value.as_f64()))
            .collect(),
        ..base.clone()
    }];
    for (device, metrics) in &device_metrics {
        entries.push(clflow_history::Entry {
            device: Some(device.clone()),
            driver: by_device[device].iter().find_map(|r| r.driver.clone()),
            metrics: metrics
                .iter()
                .map(|(name, sampled)| history::metric(name, sampled.value))
                .collect(),
            ..base.clone()
        });
    }
    let measurement = Measurement {
        key: manifest.key.clone(),
        kernel: launch.kernel.clone(),
        counts: Ok(counts),
        devices: Some(device_metrics),
    };
    Ok((measurement, entries))
}

fn read_recorded(paths: &[PathBuf]) -> crate::Result<Vec<clflow_metrics::ResultSet>> {
    paths
        .iter()
        .map(|path| clflow_metrics::read_input(path).map_err(Failure::from))
        .collect()
}

/// Every recorded run of `kernel` that has a time.
fn recorded_runs(recorded: &[clflow_metrics::ResultSet], kernel: &str) -> Vec<TimedRun> {
    recorded
        .iter()
        .flat_map(|set| set.runs.iter())
        .filter(|run| run.kernel == kernel && run.time.is_some())
        .map(|run| TimedRun {
            run: run.clone(),
            driver: None,
            time_spread: None,
        })
        .collect()
}
