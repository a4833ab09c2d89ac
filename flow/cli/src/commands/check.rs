//! `clflow check`: count (and time) every kernel of a suite, compare with the
//! baseline, and fail on regressions, for CI.

use crate::failure::Failure;
use crate::output::{print_json, Verbosity};
use clap::Args;
use clflow_check::{compare, render, updated_baseline, Comparison};
use clflow_pipeline::{check, history, Session};
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
    let suite = check::load_suite(&args.suite)?;
    let baseline_path = args
        .baseline
        .clone()
        .unwrap_or_else(|| suite.baseline.clone());
    let baseline = check::load_baseline(&baseline_path, &suite, args.update)?;
    let devices = if args.devices.is_empty() {
        &suite.devices
    } else {
        &args.devices
    };
    let run = check::measure_suite(&suite, &args.suite, devices, &args.results, &session)?;
    if !args.no_history {
        history::record(args.store.as_deref(), &run.entries, &verbosity);
    }

    let comparison = compare(&suite, baseline.as_ref(), &run.measured);
    write_outputs(&args, &comparison)?;

    if let Some(message) = run.input_failure {
        return Err(Failure::input(message).with_hint("fix the manifest or kernel the suite names"));
    }
    if args.update {
        if comparison.summary.failed > 0 {
            return Err(Failure::analysis(format!(
                "{} kernel(s) could not be measured: baseline not updated",
                comparison.summary.failed
            )));
        }
        updated_baseline(&suite, baseline.as_ref(), &run.measured).save(&baseline_path)?;
        verbosity.note(format!(
            "baseline written: {} ({} kernels)",
            baseline_path.display(),
            run.measured.len()
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
