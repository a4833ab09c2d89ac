//! `clflow split`: the PerDome upper bounds for an application (one kernel
//! or a suite of them) split between two devices: each device alone, the
//! perfect data partition and its fraction, every code partition, and the
//! PerDome plot over (I_C, I_G). The model lives in `clflow-split` and the
//! bounds' ceilings, text and plot in `clflow_pipeline::split` (`analyze` reports
//! them too); this command names the devices, counts the kernels and prints.

use crate::failure::Failure;
use crate::output::{print_json, Verbosity};
use clap::Args;
use clflow_interp::{OpSet, RunOptions};
use clflow_metrics::format_number;
use clflow_pipeline::count::{interpret, Watch};
use clflow_pipeline::input::{prepare_manifest, unique_name};
use clflow_pipeline::split::{split, Counted, NamedDevice, TrafficKind};
use clflow_pipeline::Session;
use clflow_report::perdome::write_perdome;
use clflow_split::Transfers;
use std::borrow::Cow;
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  clflow split kernels/sgemm/sgemm.toml --device xeon-phi-5110p,tesla-k20
      one kernel on two devices from their datasheet profiles (no OpenCL device needed)
  clflow split kernels/sgemm/sgemm.toml kernels/triad/triad.toml --device 0,nvidia-h100-pcie --out reports/split
      two kernels as one application: OpenCL device 0 (its stored `clflow bench` profile)
      as C and an H100 as G; every code partition, and the PerDome plot in reports/split/
  clflow split kernels/vadd/vadd.toml --device amd-epyc-7763,nvidia-a100-sxm --no-transfers --json
      the paper's bounds (data already on both sides), machine-readable

Devices: the first is C, the second G. Each is a datasheet profile's name (`clflow devices
--profiles` lists them; add your own with CLFLOW_DEVICES_DIR), so devices you do not have
can be explored, or an OpenCL device (index or part of its name in `clflow devices`). A
profile uses its [measured] figures where it states them, else its datasheet; an OpenCL
device uses its stored `clflow bench` profile, else the datasheet profile its name matches.
A CPU holds the data; any other device first receives its part over its host link
(host_link_gbs), which adds D/L to its time unless --no-transfers is given.";

/// PerDome upper bounds for splitting kernels between two devices.
#[derive(Args)]
#[command(
    long_about = "Bound the performance of an application split between two devices C and G \
    (the PerDome model): count each kernel's operations W and traffic Q with the interpreter, \
    take the devices' peak throughput and bandwidth, and report the upper bound of running \
    everything on C, everything on G, the perfect data partition (the share of the data each \
    device takes so that both finish together), and, for two kernels or more, every code \
    partition (which kernel runs where). --out writes the PerDome plot: the bound over the \
    intensities (I_C, I_G) of the two devices' parts.",
    after_help = EXAMPLES
)]
pub struct SplitArgs {
    /// Kernel manifests (.toml or Oclgrind .sim): together, one application.
    #[arg(value_name = "MANIFEST", required = true)]
    manifests: Vec<PathBuf>,
    /// The two devices, C then G: datasheet profile names or OpenCL selectors.
    #[arg(long = "device", short = 'd', visible_alias = "devices", value_name = "C,G",
          value_delimiter = ',', value_parser = super::selector, required = true)]
    devices: Vec<String>,
    /// Which operations W counts (see `clflow count --help`).
    #[arg(long, value_name = "SET", default_value = "work")]
    ops: String,
    /// Which Q bounds the traffic.
    #[arg(long, default_value = "compulsory", value_parser = traffic_figure())]
    traffic: TrafficKind,
    /// Leave host-link transfers out, as the paper does.
    #[arg(long)]
    no_transfers: bool,
    /// Cache-line size in bytes for compulsory traffic.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = super::line_size)]
    line_bytes: u64,
    /// Write the PerDome plot (perdome.svg, perdome.png) into DIR.
    #[arg(short, long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the bounds as JSON on stdout.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    build: super::ManifestBuildOptions,
}

pub fn run(args: SplitArgs, verbosity: Verbosity) -> crate::Result<()> {
    let session = Session::new(&verbosity).with_build_options(&args.build.options);
    let ops = clflow_pipeline::count::parse_ops(&args.ops)?;
    if args.devices.len() != 2 {
        return Err(Failure::input(format!(
            "--device {}: name exactly two devices, C then G",
            args.devices.join(",")
        ))
        .with_hint(
            "e.g. --device xeon-phi-5110p,tesla-k20; `clflow devices --profiles` lists the names",
        ));
    }
    // Names are checked before the count stage spends its time.
    let named: Vec<NamedDevice> = args
        .devices
        .iter()
        .map(|text| NamedDevice::resolve(text, &session))
        .collect::<crate::Result<_>>()?;
    if let Some(dir) = &args.out {
        clflow_report::check_writable(dir, "--out")?;
    }

    let counted = count_all(&args, &ops, &session)?;
    let transfers = if args.no_transfers {
        Transfers::Ignored
    } else {
        Transfers::Counted
    };
    let split = split(&counted, &named[0], &named[1], args.traffic, transfers)?;

    if let Some(dir) = &args.out {
        let plot = split.plot().ok_or_else(|| {
            Failure::input(format!(
                "--out: the PerDome plot needs a finite intensity, and I = W/Q is {}",
                format_number(split.analysis.intensity)
            ))
            .with_hint("the kernels move no global memory (Q = 0); the bounds above need no plot")
        })?;
        let files = write_perdome(&plot, dir, "perdome").map_err(Failure::from)?;
        for file in files {
            verbosity.note(format!("wrote {}", file.display()));
        }
    }
    if args.json {
        print_json(&split.report())
    } else {
        print!("{}", split.text());
        Ok(())
    }
}

/// Counts every manifest's kernel: W over the op set, Q, and D, the bytes
/// its buffers move to a device and back.
fn count_all(args: &SplitArgs, ops: &OpSet, session: &Session) -> crate::Result<Vec<Counted>> {
    let verbosity = session.observer();
    let options = RunOptions { line_bytes: args.line_bytes, ..RunOptions::default() };
    let mut counted: Vec<Counted> = Vec::new();
    for manifest in &args.manifests {
        let (input, launch) = prepare_manifest(manifest, "split", session)?;
        let result = interpret(
            manifest,
            &input.module,
            Cow::Borrowed(&launch),
            &options,
            Watch::default(),
            verbosity,
        )?
        .run;
        let taken: Vec<&str> = counted.iter().map(|k| k.kernel.name.as_str()).collect();
        let name = unique_name(&launch.kernel, manifest, &taken);
        let summary = clflow_counts::Summary::of(&result.counts, ops, &launch);
        let kernel = Counted::new(manifest, name, &summary, args.traffic);
        let work = &kernel.kernel.work;
        verbosity.note(format!(
            "counted {}: W = {} ({ops}), Q = {} bytes ({}), D = {} bytes",
            launch.kernel,
            work.ops,
            work.bytes,
            args.traffic.name(),
            work.transfer
        ));
        counted.push(kernel);
    }
    Ok(counted)
}

/// `--traffic`: the figures the bounds can use, listed in `--help`.
fn traffic_figure() -> impl clap::builder::TypedValueParser<Value = TrafficKind> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(TrafficKind::ALL.map(TrafficKind::name))
        .try_map(|text| text.parse::<TrafficKind>())
}
