//! `clflow report`: merge results and measurements into one result set and
//! write its report (charts, tables, metrics.csv, results.json, index.html).

use crate::failure::Failure;
use crate::output::{print_json, Verbosity};
use clap::Args;
use clflow_metrics::{paper, read_input, results_document, ResultSet, CSV_COLUMNS};
use clflow_pipeline::split::{SplitReport, SECTION_HEADING};
use clflow_predict::Predictions;
use clflow_report::traffic::{traffic_section, KernelTraffic};
use clflow_report::ReportSection;
use serde::de::DeserializeOwned;
use std::fmt::Display;
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
            extra.read_beside(path, verbosity)?;
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

/// The sections `clflow analyze` adds to its report, read back from the
/// files it writes beside results.json: "Traffic at a cache size" from
/// traffic.json, "Predicted time" from predictions.json and "CPU+GPU split
/// (PerDome)" from split.json. As for results, a later input's kernel on a
/// device replaces an earlier one's; a split is of one application on one
/// pair of devices, so a later split.json replaces an earlier one whole.
#[derive(Debug, Default)]
struct ExtraSections {
    /// Present once some input had a traffic.json.
    traffic: Option<Vec<KernelTraffic>>,
    /// Present once some input had a predictions.json.
    predictions: Option<Vec<Predictions>>,
    /// The split section drawn from the last split.json, and that file.
    split: Option<(PathBuf, ReportSection)>,
}

impl ExtraSections {
    /// Reads the section files beside `results` (those that exist) into
    /// what the earlier inputs gave.
    fn read_beside(&mut self, results: &Path, verbosity: Verbosity) -> crate::Result<()> {
        if let Some(kernels) = read_section_file(results, "traffic.json", verbosity)? {
            for replaced in merge_traffic(self.traffic.get_or_insert_default(), kernels) {
                verbosity.detail(format!("{}: {replaced}", results.display()));
            }
        }
        if let Some(predictions) = read_section_file(results, "predictions.json", verbosity)? {
            for replaced in merge_predictions(self.predictions.get_or_insert_default(), predictions)
            {
                verbosity.detail(format!("{}: {replaced}", results.display()));
            }
        }
        if let Some(report) = read_section_file::<SplitReport>(results, "split.json", verbosity)? {
            let path = results.with_file_name("split.json");
            // Drawn now, so that a document whose bounds cannot be drawn
            // is refused with its file's name.
            let split = report
                .split()
                .map_err(|f| not_written_by_analyze(path.display(), "split.json", f.message))?;
            // analyze's preface names the pair among the devices it
            // analyzed; split.json does not hold them.
            let section = split.report_section("")?;
            if let Some((earlier, _)) = self.split.replace((path.clone(), section)) {
                verbosity.detail(format!(
                    "{}: the {SECTION_HEADING} section from {}: replaced",
                    path.display(),
                    earlier.display()
                ));
            }
        }
        Ok(())
    }

    /// The sections to write after the charts, in the order `clflow
    /// analyze` writes them.
    fn sections(self) -> Vec<ReportSection> {
        let traffic = self.traffic.as_deref().and_then(traffic_section);
        let predictions = self
            .predictions
            .as_deref()
            .map(clflow_report::prediction::report_section);
        traffic
            .into_iter()
            .chain(predictions)
            .map(ReportSection::from)
            .chain(self.split.map(|(_, section)| section))
            .collect()
    }
}

/// `name` in the directory of `results`, parsed; `None` where there is no
/// such file. A file that is there but does not parse is an input error.
fn read_section_file<T: DeserializeOwned>(
    results: &Path,
    name: &str,
    verbosity: Verbosity,
) -> crate::Result<Option<T>> {
    let path = results.with_file_name(name);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(
                Failure::input(format!("{}: cannot read: {e}", path.display())).with_hint(
                    "check its permissions, or move it away to redraw the report without it",
                ),
            )
        }
    };
    let parsed = serde_json::from_str(&text).map_err(|e| {
        let at = format!("{}:{}:{}", path.display(), e.line(), e.column());
        not_written_by_analyze(at, name, e)
    })?;
    verbosity.detail(format!("{}: read", path.display()));
    Ok(Some(parsed))
}

/// The section file `name` at `at` (its path, and line where known) is not
/// what `clflow analyze` writes, `why`.
fn not_written_by_analyze(at: impl Display, name: &str, why: impl Display) -> Failure {
    Failure::input(format!(
        "{at}: not the {name} `clflow analyze` writes: {why}"
    ))
    .with_hint(format!(
        "re-run `clflow analyze`, or move {name} away to redraw the report without its section"
    ))
}

/// Adds `from`'s kernels to `into`: a device a kernel already has is
/// replaced, with the kernel's W. Says what was replaced.
fn merge_traffic(into: &mut Vec<KernelTraffic>, from: Vec<KernelTraffic>) -> Vec<String> {
    let mut replaced = Vec::new();
    for kernel in from {
        let Some(known) = into.iter_mut().find(|k| k.kernel == kernel.kernel) else {
            into.push(kernel);
            continue;
        };
        known.work = kernel.work;
        for device in kernel.devices {
            match known.devices.iter_mut().find(|d| d.device == device.device) {
                Some(slot) => {
                    replaced.push(format!(
                        "traffic of `{}` on `{}`: replaced",
                        kernel.kernel, device.device
                    ));
                    *slot = device;
                }
                None => known.devices.push(device),
            }
        }
    }
    replaced
}

/// Adds `from`'s predictions to `into`: one for a kernel and device `into`
/// has replaces it; a new one goes after its kernel's others, so that each
/// kernel's predictions stay together (the section draws one chart per
/// kernel from them). Says what was replaced.
fn merge_predictions(into: &mut Vec<Predictions>, from: Vec<Predictions>) -> Vec<String> {
    let mut replaced = Vec::new();
    for p in from {
        if let Some(slot) = into
            .iter_mut()
            .find(|q| q.kernel == p.kernel && q.device == p.device)
        {
            replaced.push(format!(
                "predictions of `{}` on `{}`: replaced",
                p.kernel, p.device
            ));
            *slot = p;
            continue;
        }
        let at = into
            .iter()
            .rposition(|q| q.kernel == p.kernel)
            .map_or(into.len(), |last| last + 1);
        into.insert(at, p);
    }
    replaced
}

#[cfg(test)]
mod tests {
    use super::*;
    use clflow_traffic::{
        CacheSpec, CoalescingSummary, DeviceTraffic, DramTraffic, PatternCounts, TrafficSummary,
    };

    fn device(name: &str, read_bytes: u64) -> DeviceTraffic {
        let dram = DramTraffic {
            read_bytes,
            written_bytes: 0,
        };
        DeviceTraffic {
            device: name.into(),
            cache_source: "test".into(),
            summary: TrafficSummary {
                cache: CacheSpec {
                    bytes: 1 << 14,
                    line_bytes: 64,
                },
                accessed_bytes: read_bytes,
                compulsory: dram,
                dram,
                curve: Vec::new(),
                coalescing: CoalescingSummary {
                    line_bytes: 64,
                    bytes: PatternCounts::default(),
                    accesses: PatternCounts::default(),
                    sites: Vec::new(),
                },
            },
        }
    }

    fn kernel(name: &str, work: u64, devices: Vec<DeviceTraffic>) -> KernelTraffic {
        KernelTraffic {
            kernel: name.into(),
            work,
            devices,
        }
    }

    /// Predictions with every model skipped, as predictions.json holds them.
    fn predictions(kernel: &str, device: &str, time_s: f64) -> Predictions {
        let skipped = serde_json::json!({ "skipped": "test" });
        serde_json::from_value(serde_json::json!({
            "kernel": kernel,
            "device": device,
            "measured": { "time_s": time_s, "energy_j": null },
            "roofline": skipped,
            "boat_hull": skipped,
            "quantitative": skipped,
            "energy": skipped,
        }))
        .unwrap()
    }

    #[test]
    fn later_traffic_replaces_a_kernels_device_and_adds_the_rest() {
        let mut into = vec![kernel("a", 10, vec![device("x", 1), device("y", 2)])];
        let replaced = merge_traffic(
            &mut into,
            vec![
                kernel("a", 20, vec![device("y", 3), device("z", 4)]),
                kernel("b", 30, vec![device("x", 5)]),
            ],
        );
        assert_eq!(replaced, ["traffic of `a` on `y`: replaced"]);
        assert_eq!(
            into,
            [
                kernel(
                    "a",
                    20,
                    vec![device("x", 1), device("y", 3), device("z", 4)]
                ),
                kernel("b", 30, vec![device("x", 5)]),
            ]
        );
    }

    #[test]
    fn later_predictions_replace_theirs_and_keep_each_kernel_together() {
        let mut into = vec![predictions("a", "x", 1.0), predictions("b", "x", 2.0)];
        let replaced = merge_predictions(
            &mut into,
            vec![
                predictions("b", "x", 3.0),
                predictions("a", "y", 4.0),
                predictions("c", "x", 5.0),
            ],
        );
        assert_eq!(replaced, ["predictions of `b` on `x`: replaced"]);
        let order: Vec<(&str, &str, Option<f64>)> = into
            .iter()
            .map(|p| (p.kernel.as_str(), p.device.as_str(), p.measured.time_s))
            .collect();
        assert_eq!(
            order,
            [
                ("a", "x", Some(1.0)),
                ("a", "y", Some(4.0)),
                ("b", "x", Some(3.0)),
                ("c", "x", Some(5.0)),
            ]
        );
    }

    #[test]
    fn a_section_file_that_does_not_parse_names_itself() {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("results.json");
        let none: Option<Vec<Predictions>> =
            read_section_file(&results, "predictions.json", Verbosity::Quiet).unwrap();
        assert!(none.is_none(), "no file, no section");
        std::fs::write(dir.path().join("predictions.json"), "[{\"kernel\": 1}]").unwrap();
        let failure =
            read_section_file::<Vec<Predictions>>(&results, "predictions.json", Verbosity::Quiet)
                .unwrap_err();
        assert_eq!(failure.kind, clflow_core::FailureKind::Input);
        let path = dir.path().join("predictions.json");
        assert!(
            failure.message.starts_with(&format!(
                "{}:1:13: not the predictions.json",
                path.display()
            )),
            "{}",
            failure.message
        );
    }
}
