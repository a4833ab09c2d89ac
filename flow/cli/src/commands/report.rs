//! `clflow report`: merge results and measurements into one result set and
//! write its report (charts, tables, metrics.csv, results.json, index.html).

use crate::failure::Failure;
use crate::output::{print_json, Verbosity};
use clap::Args;
use clflow_metrics::{paper, read_input, results_document, ResultSet, CSV_COLUMNS};
use clflow_report::sections::ExtraSections;
use std::path::{Path, PathBuf};

const EXAMPLES: &str = "\
Examples:
  clflow report --paper
      reproduce the paper's lookup3 comparison (Table 1, §5.1) in reports/paper/:
      Figures 3 and 4 (roofline-all, perf-per-watt-all), 6-11 (per device), 12 (energy)
  clflow report reports/hash/results.json --out /tmp/hash
      redraw a report written by `clflow analyze` (with its traffic, prediction and CPU+GPU
      split sections, from the traffic.json, predictions.json and split.json beside results.json)
  clflow report gpu/results.json fpga.csv --out reports/gpu-vs-fpga
      merge a GPU run with an FPGA run measured with vendor tools
  clflow report --paper my-fpga.csv --json
      add your own board to the paper's comparison; print the metrics as JSON

Inputs merge in order; where two name the same kernel, run or device ceiling, the later
one wins (-v says which). Every kernel is evaluated on every device: a pair with no run
still shows what the kernel could attain there.

A measurements CSV has a header row; lines starting with # are comments; empty cells
are unknown. Its columns:";

fn after_help() -> String {
    let mut text = EXAMPLES.to_string();
    for (name, meaning) in CSV_COLUMNS {
        text.push_str(&format!("\n  {name:<24} {meaning}"));
    }
    text.push_str(
        "\nFor example:\n  kernel,device,time_s,power_peak_w,bandwidth_gbs,peak_int_gops,device_kind\n  \
         hash,ADM-PCIE-7V3,0.0676,17.75,8.5,3032,fpga",
    );
    text
}

/// Write the report of one or more result sets.
#[derive(Args)]
#[command(
    long_about = "Merge results.json files (from `clflow analyze` or `clflow report`) and CSV files \
    of measured time and power into one result set, derive the paper's metrics (I, F, R, E, \
    attainable performance, bound, ridge point) and write the report: per device a performance \
    and a performance-per-watt roofline, every device on one chart, an energy comparison, \
    metrics.csv, results.json and a self-contained index.html. Charts come as SVG and PNG.",
    after_help = after_help()
)]
pub struct ReportArgs {
    /// Results to merge: results.json files and measurement CSVs.
    #[arg(value_name = "RESULTS.json|MEASUREMENTS.csv")]
    inputs: Vec<PathBuf>,
    /// Start from the paper's case study: lookup3 (W = 1224 M OPS, Q = 367 MB) on the Xeon Phi
    /// 5110P, Tesla K20 and ADM-PCIE-7V3 with the Table 1 peaks and the published F and R.
    #[arg(long)]
    paper: bool,
    /// Where to write the report [default: reports/paper with --paper, else reports/<kernel>].
    #[arg(short, long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the inputs and derived metrics (as results.json holds them) on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(args: ReportArgs, verbosity: Verbosity) -> crate::Result<()> {
    if args.inputs.is_empty() && !args.paper {
        return Err(Failure::input("no results to report").with_hint(
            "give results.json or measurement CSV files, or --paper for the paper's case study",
        ));
    }
    let mut set = if args.paper {
        paper::lookup3()
    } else {
        ResultSet::default()
    };
    let mut extra = ExtraSections::default();
    for path in &args.inputs {
        let input = read_input(path).map_err(Failure::from)?;
        verbosity.detail(format!(
            "{}: {} kernels, {} devices, {} runs",
            path.display(),
            input.kernels.len(),
            input.devices.len(),
            input.runs.len()
        ));
        for replaced in set.merge(input) {
            verbosity.detail(format!("{}: {replaced}", path.display()));
        }
        if is_results_json(path) {
            let mut notes = Vec::new();
            extra.read_beside(path, &mut notes)?;
            for note in notes {
                verbosity.detail(note);
            }
        }
    }
    for unmatched in set.unmatched_runs() {
        verbosity.note(format!(
            "clflow: warning: {unmatched}; it is left out of the report"
        ));
    }
    let Some(first_kernel) = set.kernels.first().map(|k| k.kernel.clone()) else {
        return Err(Failure::input("the inputs hold no kernel counts (W and Q) to report on")
            .with_hint("add the results.json of `clflow analyze`, or work_ops, ops and q_accessed_bytes columns to the CSV"));
    };
    if set.devices.is_empty() {
        return Err(Failure::input("the inputs name no device to report on")
            .with_hint("add a results.json with device ceilings, or a CSV row per device"));
    }
    let out = args.out.unwrap_or_else(|| {
        let name = if args.paper && args.inputs.is_empty() {
            "paper".to_string()
        } else {
            first_kernel
        };
        PathBuf::from("reports").join(name)
    });
    let written = clflow_report::write_report_sections(&set, &out, &extra.sections())
        .map_err(Failure::from)?;
    verbosity.note(format!(
        "wrote {} files to {}; open {}",
        written.files.len(),
        out.display(),
        out.join("index.html").display()
    ));
    for file in &written.files {
        verbosity.detail(format!("  {}", out.join(file).display()));
    }
    if args.json {
        let metrics = set.evaluate();
        print_json(&results_document(&set, &metrics))?;
    }
    Ok(())
}

/// Whether an input is a results.json, beside which `clflow analyze` leaves
/// the files of its extra sections.
fn is_results_json(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
}
