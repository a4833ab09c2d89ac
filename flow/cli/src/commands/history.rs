//! `clflow history`: what the store recorded for a kernel, as a table, JSON
//! or a plot.

use crate::failure::Failure;
use crate::output::{print_json, Verbosity};
use clap::Args;
use clflow_history::{plot::TrendPlot, Point, Store, TrendQuery};
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  clflow history
      every kernel the store knows, with its number of entries
  clflow history vadd
      the trend of vadd: W, Q, I from the interpreter, T and E per device
  clflow history vadd --device nvidia --plot vadd.svg
      its entries on devices whose name contains `nvidia`, drawn relative to the first

The store: --store PATH, else $CLFLOW_STORE, else $CLFLOW_DATA_DIR/history.sqlite, else
$XDG_DATA_HOME/clflow/history.sqlite, else ~/.local/share/clflow/history.sqlite.";

/// The metrics shown unless --metric names others.
const DEFAULT_METRICS: [&str; 5] = ["W.total", "Q.accessed", "I.max", "T", "E"];

/// Show the recorded trend of a kernel's metrics.
#[derive(Args)]
#[command(after_help = EXAMPLES)]
pub struct HistoryArgs {
    /// The kernel (its name in the manifest); none lists every kernel.
    #[arg(value_name = "KERNEL")]
    kernel: Option<String>,
    /// Only entries measured on devices whose name contains SEL.
    #[arg(long, value_name = "SEL", value_parser = super::selector)]
    device: Option<String>,
    /// Metrics to show and plot (default: W.total Q.accessed I.max T E).
    #[arg(long, value_name = "NAME", num_args = 1..)]
    metric: Vec<String>,
    /// Only the most recent N entries.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Print the entries (every metric) as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Draw the trend to an SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// The history store (see below for the default).
    #[arg(long, value_name = "PATH")]
    store: Option<PathBuf>,
}

pub fn run(args: HistoryArgs, verbosity: Verbosity) -> crate::Result<()> {
    let path = clflow_history::store_path(args.store.as_deref())?;
    if !path.exists() {
        return Err(Failure::input(format!("{}: no history store here yet", path.display()))
            .with_hint("`clflow check` (and later run and analyze) record into it; --store PATH names another"));
    }
    verbosity.detail(format!("history store: {}", path.display()));
    let store = Store::open(&path)?;
    let Some(kernel) = args.kernel.clone() else {
        let kernels = store.kernels()?;
        if args.json {
            return print_json(&kernels);
        }
        for k in &kernels {
            let devices = if k.devices.is_empty() {
                "-".to_string()
            } else {
                k.devices.join(", ")
            };
            println!(
                "{:<24} {:>5} entries  last {}  devices: {devices}",
                k.kernel, k.entries, k.last_recorded
            );
        }
        return Ok(());
    };
    let points = store.trend(&TrendQuery {
        kernel: kernel.clone(),
        device: args.device.clone(),
        limit: args.limit,
    })?;
    if points.is_empty() {
        return Err(Failure::input(format!(
            "{}: no entries for kernel `{kernel}`{}",
            path.display(),
            args.device
                .as_ref()
                .map(|d| format!(" on a device matching `{d}`"))
                .unwrap_or_default()
        ))
        .with_hint("`clflow history` lists the kernels the store knows"));
    }
    let metrics: Vec<String> = if args.metric.is_empty() {
        DEFAULT_METRICS.iter().map(|m| m.to_string()).collect()
    } else {
        args.metric.clone()
    };
    if let Some(file) = &args.plot {
        let svg = TrendPlot::new(&kernel, &points, &metrics).to_svg()?;
        std::fs::write(file, svg)
            .map_err(|e| Failure::input(format!("--plot: cannot write {}: {e}", file.display())))?;
        verbosity.note(format!("wrote {}", file.display()));
    }
    if args.json {
        return print_json(&points);
    }
    print!("{}", table(&points, &metrics));
    Ok(())
}

fn table(points: &[Point], metrics: &[String]) -> String {
    let mut header = vec![
        "recorded".to_string(),
        "commit".into(),
        "command".into(),
        "device".into(),
    ];
    header.extend(metrics.iter().cloned());
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|p| {
            let e = &p.entry;
            let mut row = vec![
                p.recorded.clone(),
                e.git_commit
                    .as_deref()
                    .map_or("-", |c| &c[..c.len().min(10)])
                    .to_string(),
                e.command.clone(),
                e.device.clone().unwrap_or_else(|| "(counts)".into()),
            ];
            row.extend(
                metrics
                    .iter()
                    .map(|m| p.metric_text(m).unwrap_or_else(|| "-".into())),
            );
            row
        })
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    clflow_report::text::table(&header, rows)
}
