//! `clflow analyze`: the main job. Compile and count each kernel, measure
//! every selected device that has no measured profile yet, run each kernel
//! on each device, and write the report.

use crate::output::{print_json, Verbosity};
use clap::Args;
use clflow_metrics::{results_document, Metrics};
use clflow_pipeline::analyze::{analyze, AnalyzeOptions};
use clflow_pipeline::detect::Detect;
use clflow_pipeline::device::TimingPlan;
use clflow_pipeline::Session;
use clflow_report::launches;
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  clflow analyze kernels/vadd/vadd.toml
      every OpenCL device; the report in reports/vadd/
  clflow analyze kernels/lookup3/lookup3-paper.toml --ops add,xor,sub,shl,lshr,or,getelementptr,icmp,mul,and,div
      the paper's case study, W over its selection of operations
  clflow analyze kernels/sgemm/sgemm.toml kernels/triad/triad.toml --device gpu,0 --out reports/mix
      two kernels on two devices, one report
  clflow analyze kernels/vadd/vadd.toml --quick-bench --min-time 0.1
      seconds rather than minutes: quick device benchmarks, short timing

A device with no measured profile is benchmarked first (`clflow bench`; the profile is
stored and reused). A device that cannot run a kernel (no cl_khr_fp64 for doubles, a
failed build) is noted in the report and the others go on; the exit status is then 1
(2 for a build failure), after the report is written.";

/// Compile, count, benchmark, run, and report: the whole flow.
#[derive(Args)]
#[command(
    long_about = "The paper's tool flow for one or more kernels: compile each manifest's kernel, \
    count W and Q with the interpreter, take each selected device's measured peaks (benchmarking \
    devices not yet measured) and datasheet peaks, time each kernel on each device with power \
    sampling and an output check, derive I, F, R, E, the attainable performance and the bound, \
    simulate each kernel's DRAM traffic through each device's last-level cache, predict its time \
    with five models, and write the report (rooflines, performance per watt, energy, metrics.csv, results.json, \
    index.html); where the devices include a CPU and another device, the report also bounds the kernels split \
    between the first CPU and the first other device (PerDome, as `clflow split` does).",
    after_help = EXAMPLES
)]
pub struct AnalyzeArgs {
    /// Kernel manifests (.toml or Oclgrind .sim), or captures (`clflow capture`), each
    /// standing for its launches.
    #[arg(value_name = "MANIFEST", required = true)]
    manifests: Vec<PathBuf>,
    /// `all`, or devices: indexes in `clflow devices` or parts of names; repeat the flag or
    /// separate them with commas (`-d 0,gpu`).
    #[arg(long = "device", short = 'd', visible_alias = "devices", value_name = "SEL",
          value_delimiter = ',', value_parser = super::selector, default_value = "all")]
    devices: Vec<String>,
    /// Which operations W counts (see `clflow count --help`).
    #[arg(long, value_name = "SET", default_value = "work")]
    ops: String,
    /// Where to write the report [default: reports/<kernel source name>].
    #[arg(short, long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the results and metrics (as results.json holds them) on stdout.
    #[arg(long)]
    json: bool,
    /// Seconds of kernel time to time on each device. A kernel of microseconds, whose launches
    /// cost the host far more, stops at ten times this in wall time (at least 2 s), and says so.
    #[arg(long, value_name = "SECS", default_value_t = TimingPlan::default().min_time_s)]
    min_time: f64,
    /// Benchmark unmeasured devices in quick mode (small buffers, few repetitions).
    #[arg(long)]
    quick_bench: bool,
    /// Cache-line size in bytes for compulsory traffic.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = super::line_size)]
    line_bytes: u64,
    /// The history store to append to (default: $CLFLOW_STORE, else the data directory).
    #[arg(long, value_name = "PATH")]
    store: Option<PathBuf>,
    /// Do not append to the history store.
    #[arg(long)]
    no_history: bool,
    /// The cache each kernel's Q is simulated through on every device: a size (40MiB/128) or a
    /// datasheet profile (nvidia-h100-sxm) [default: each device's last-level cache from its
    /// datasheet profile, else its driver].
    #[arg(long, value_name = "SIZE[/LINE]|PROFILE")]
    cache: Option<String>,
    /// Watch each kernel's count for faults (see `clflow count --help`): `access`, `races`,
    /// `uninit`, `aggregates`, `all` or `none`, comma-separated (none by default: the count
    /// `analyze` models is the plain one). Faults found are listed; the report is written and
    /// the exit status is 1.
    #[arg(long, value_name = "LIST")]
    detect: Option<Detect>,
    #[command(flatten)]
    build: super::ManifestBuildOptions,
}

pub fn run(args: AnalyzeArgs, verbosity: Verbosity) -> crate::Result<()> {
    let build_options = args.build.options;
    let options = AnalyzeOptions {
        ops: clflow_pipeline::count::parse_ops(&args.ops)?,
        manifests: args.manifests,
        devices: args.devices,
        out: args.out,
        min_time: args.min_time,
        quick_bench: args.quick_bench,
        line_bytes: args.line_bytes,
        store: args.store,
        no_history: args.no_history,
        cache: args.cache,
        detect: args.detect.unwrap_or(Detect::NONE),
        command: std::env::args().collect(),
    };
    let session = Session::new(&verbosity).with_build_options(&build_options);
    let analysis = analyze(&options, &session)?;
    verbosity.note(format!(
        "wrote {} files to {}; open {}",
        analysis.files.len(),
        analysis.out.display(),
        analysis.out.join("index.html").display()
    ));
    if args.json {
        print_json(&results_document(&analysis.set, &analysis.metrics))?;
    } else {
        print!("{}", summary(&analysis));
    }
    analysis.outcome()
}

/// Launch rows a terminal shows before it shows an application's kernels
/// alone, with where the rows are.
const MAX_RUN_ROWS: usize = 16;

/// What the terminal shows: an application's kernels ranked by what they
/// take of it, where it launched some more than once; each launch on each
/// device, where they are few; then the notes, and the findings.
fn summary(analysis: &clflow_pipeline::analyze::Analysis) -> String {
    let kernels = &analysis.kernels;
    let metrics = &analysis.metrics;
    let mut out = String::new();
    let mut shown: Vec<&Metrics> = metrics.iter().collect();
    if launches::worth_ranking(kernels) {
        out += &format!("{}\n", launches::lead(kernels).unwrap_or_default());
        out += &launches::text_table(kernels);
        // The longest launch of each kernel on each device stands for it in
        // the findings.
        let longest: Vec<&Metrics> = launches::ranked(kernels)
            .into_iter()
            .flat_map(|k| longest_runs(metrics, &k.runs))
            .collect();
        if metrics.len() > MAX_RUN_ROWS {
            shown = longest;
            out += &format!(
                "(each of the {} launches on each device: {}; below, each kernel's longest)\n",
                kernels.iter().map(|k| k.launches).sum::<u64>(),
                analysis.out.join("metrics.csv").display()
            );
        } else {
            out.push('\n');
            out += &run_table(&shown);
            shown = longest;
        }
    } else {
        out += &run_table(&shown);
    }
    out += &notes(metrics);
    for finding in shown.into_iter().filter_map(clflow_metrics::finding) {
        out += &format!("{finding}\n");
    }
    out
}

/// Of the runs named `runs`, the longest on each device.
fn longest_runs<'m>(metrics: &'m [Metrics], runs: &[String]) -> Vec<&'m Metrics> {
    let seconds = |m: &Metrics| m.time.as_ref().map_or(0.0, |t| t.value);
    let mut longest: Vec<&Metrics> = Vec::new();
    for m in metrics.iter().filter(|m| runs.contains(&m.kernel)) {
        match longest.iter_mut().find(|l| l.device == m.device) {
            Some(l) if seconds(m) > seconds(l) => *l = m,
            Some(_) => {}
            None => longest.push(m),
        }
    }
    longest
}

/// Each note once per device, with how many runs it was made of.
fn notes(metrics: &[Metrics]) -> String {
    let mut seen: Vec<(&str, &str, Vec<&str>)> = Vec::new();
    for m in metrics {
        for note in &m.notes {
            match seen
                .iter_mut()
                .find(|(d, n, _)| *d == m.device && n == note)
            {
                Some((_, _, kernels)) => kernels.push(&m.kernel),
                None => seen.push((&m.device, note, vec![&m.kernel])),
            }
        }
    }
    seen.iter()
        .map(|(device, note, kernels)| match kernels.len() {
            1 => format!("note: {} on {device}: {note}\n", kernels[0]),
            n => format!("note: {n} runs on {device}: {note}\n"),
        })
        .collect()
}

/// Kernel × device: the figures a reader looks for first.
fn run_table(metrics: &[&Metrics]) -> String {
    let show = |f: &Option<clflow_metrics::Figure>| f.as_ref().map_or("-".into(), |f| f.display());
    let rows: Vec<Vec<String>> = metrics
        .iter()
        .map(|m| {
            vec![
                m.kernel.clone(),
                m.device.clone(),
                show(&m.intensity_min),
                show(&m.time),
                show(&m.performance),
                show(&m.attainable),
                show(&m.fraction_of_attainable),
                m.bound.map_or("-".into(), |b| b.name().to_string()),
                show(&m.energy),
            ]
        })
        .collect();
    let header = [
        "KERNEL",
        "DEVICE",
        "I",
        "T",
        "F",
        "ATTAINABLE",
        "OF ATT.",
        "BOUND",
        "E",
    ];
    clflow_report::text::table(&header, rows)
}
