//! `clflow split`: the PerDome upper bounds for an application (one kernel
//! or a suite of them) split between two devices: each device alone, the
//! perfect data partition and its fraction, every code partition, and the
//! PerDome plot over (I_C, I_G). The model lives in `clflow-split`; this
//! command counts the kernels, finds the two devices' ceilings and reports.

use crate::commands::run::prepare_manifest;
use crate::failure::Failure;
use crate::output::{print_json, Verbosity};
use crate::stages::count::interpret;
use crate::stages::profile::{self, device_profile, FloatCeiling};
use clap::{Args, ValueEnum};
use clflow_core::{Access, ArgValue, Launch};
use clflow_devices::{
    DatasheetProfile, DeviceClass, DeviceIdentity, Figures, MeasuredStore, Metric, ProfileCatalog,
};
use clflow_interp::{OpClass, OpSet, RunOptions};
use clflow_metrics::{format_number, Ceilings, DeviceProfile, Figure, OpKind, Provenance, Unit};
use clflow_ocl::{select_device, DeviceKind, DeviceSelector};
use clflow_report::perdome::{write_perdome, PerdomePlot, PerdomePoint, PointKind};
use clflow_split::{
    analyze, surface, Analysis, Kernel, Model, Partition, Processor, System, Transfers, Work,
};
use serde::Serialize;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

const EXAMPLES: &str = "\
Examples:
  clflow split kernels/sgemm/sgemm.toml --devices xeon-phi-5110p,tesla-k20
      one kernel on two devices from their datasheet profiles (no OpenCL device needed)
  clflow split kernels/sgemm/sgemm.toml kernels/triad/triad.toml --devices 0,nvidia-h100-pcie --out reports/split
      two kernels as one application: OpenCL device 0 (its stored `clflow bench` profile)
      as C and an H100 as G; every code partition, and the PerDome plot in reports/split/
  clflow split kernels/vadd/vadd.toml --devices amd-epyc-7763,nvidia-a100-sxm --no-transfers --json
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
    #[arg(long, value_name = "C,G", value_delimiter = ',', required = true)]
    devices: Vec<String>,
    /// Which operations W counts (see `clflow count --help`).
    #[arg(long, value_name = "SET", default_value = "arith")]
    ops: String,
    /// Which Q bounds the traffic.
    #[arg(long, value_enum, default_value_t = Traffic::Compulsory)]
    traffic: Traffic,
    /// Leave host-link transfers out, as the paper does.
    #[arg(long)]
    no_transfers: bool,
    /// Cache-line size in bytes for compulsory traffic.
    #[arg(long, value_name = "N", default_value_t = 64)]
    line_bytes: u64,
    /// Write the PerDome plot (perdome.svg, perdome.png) into DIR.
    #[arg(short, long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the bounds as JSON on stdout.
    #[arg(long)]
    json: bool,
}

/// The traffic figure the bounds use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
enum Traffic {
    /// Each cache line once (a cache that holds everything): the least
    /// traffic, so the highest bound.
    Compulsory,
    /// Every global load and store (no cache).
    Accessed,
}

/// Grid cells per axis of the PerDome plot.
const PLOT_STEPS: usize = 65;

pub fn run(args: SplitArgs, verbosity: Verbosity) -> crate::Result<()> {
    let ops = crate::stages::count::parse_ops(&args.ops)?;
    if args.devices.len() != 2 {
        return Err(Failure::input(format!(
            "--devices {}: name exactly two devices, C then G",
            args.devices.join(",")
        ))
        .with_hint(
            "e.g. --devices xeon-phi-5110p,tesla-k20; `clflow devices --profiles` lists the names",
        ));
    }
    if !args.line_bytes.is_power_of_two() {
        return Err(Failure::input(format!(
            "--line-bytes {}: give a power of two",
            args.line_bytes
        )));
    }
    // Names are checked before the count stage spends its time.
    let catalog = profile::catalog(verbosity);
    let named: Vec<NamedDevice> = args
        .devices
        .iter()
        .map(|text| NamedDevice::resolve(text, &catalog, verbosity))
        .collect::<crate::Result<_>>()?;

    let counted = count_all(&args, &ops, verbosity)?;
    let ceiling = CeilingKind::of(&counted);
    let devices: Vec<SplitDevice> = named
        .iter()
        .map(|d| d.ceilings(ceiling))
        .collect::<crate::Result<_>>()?;
    let system = System {
        c: devices[0].processor()?,
        g: devices[1].processor()?,
    };
    let transfers = if args.no_transfers {
        Transfers::Ignored
    } else {
        Transfers::Counted
    };
    let kernels: Vec<Kernel> = counted.iter().map(|k| k.kernel.clone()).collect();
    let analysis = analyze(&kernels, &system, transfers).map_err(split_failure)?;

    if let Some(dir) = &args.out {
        if !(analysis.intensity.is_finite() && analysis.intensity > 0.0) {
            return Err(Failure::input(format!(
                "--out: the PerDome plot needs a finite intensity, and I = W/Q is {}",
                format_number(analysis.intensity)
            ))
            .with_hint(
                "the kernels move no global memory (Q = 0); the bounds above need no plot",
            ));
        }
        let plot = perdome_plot(&analysis, &system, &devices);
        let files = write_perdome(&plot, dir, "perdome")
            .map_err(|e| Failure::input(&e).with_hint(e.hint()))?;
        for file in files {
            verbosity.note(format!("wrote {}", file.display()));
        }
    }
    if args.json {
        print_json(&SplitReport {
            ceiling: ceiling.name(),
            traffic: args.traffic,
            devices: &devices,
            kernels: &counted,
            analysis: &analysis,
        })
    } else {
        print!(
            "{}",
            render(&analysis, &devices, &counted, ceiling, args.traffic)
        );
        Ok(())
    }
}

fn split_failure(err: clflow_split::SplitError) -> Failure {
    Failure {
        kind: err.kind(),
        message: err.to_string(),
        hint: None,
    }
    .with_hint(err.hint())
}

/// What `--json` prints.
#[derive(Serialize)]
struct SplitReport<'a> {
    /// The peak the devices' compute ceilings are: int32, fp32 or fp64.
    ceiling: &'static str,
    traffic: Traffic,
    devices: &'a [SplitDevice],
    kernels: &'a [Counted],
    analysis: &'a Analysis,
}

/// One kernel, counted.
#[derive(Serialize)]
struct Counted {
    manifest: PathBuf,
    #[serde(flatten)]
    kernel: Kernel,
    /// In-set W by kind of lane, to choose the compute ceiling.
    #[serde(skip)]
    int_work: u64,
    #[serde(skip)]
    fp64_work: u64,
    #[serde(skip)]
    other_float_work: u64,
}

/// Counts every manifest's kernel: W over the op set, Q, and D, the bytes
/// its buffers move to a device and back.
fn count_all(args: &SplitArgs, ops: &OpSet, verbosity: Verbosity) -> crate::Result<Vec<Counted>> {
    let options = RunOptions {
        line_bytes: args.line_bytes,
        ..RunOptions::default()
    };
    let mut counted: Vec<Counted> = Vec::new();
    for manifest in &args.manifests {
        let (input, launch) = prepare_manifest(manifest, "split", verbosity)?;
        let transfer = transfer_bytes(&launch);
        let name = launch.kernel.clone();
        let result = interpret(
            manifest,
            &input.module,
            Cow::Owned(launch),
            &options,
            verbosity,
        )?;
        let counts = &result.counts;
        let (mut int_work, mut fp64_work, mut other_float_work) = (0, 0, 0);
        for (key, lanes) in counts.work.iter().filter(|(k, _)| ops.contains(k)) {
            match OpClass::of(key.ty) {
                OpClass::Int => int_work += lanes,
                OpClass::Fp64 => fp64_work += lanes,
                OpClass::Fp32 | OpClass::Fp16 => other_float_work += lanes,
            }
        }
        let traffic = match args.traffic {
            Traffic::Compulsory => counts.q_compulsory(),
            Traffic::Accessed => counts.q_accessed(),
        };
        let work = Work::new(counts.w(ops) as f64, traffic as f64, transfer as f64)
            .map_err(split_failure)?;
        verbosity.note(format!(
            "counted {name}: W = {} ({ops}), Q = {} bytes ({}), D = {} bytes",
            work.ops,
            work.bytes,
            args.traffic.name(),
            work.transfer
        ));
        let name = unique_name(&name, manifest, &counted);
        counted.push(Counted {
            manifest: manifest.clone(),
            kernel: Kernel { name, work },
            int_work,
            fp64_work,
            other_float_work,
        });
    }
    Ok(counted)
}

impl Traffic {
    fn name(self) -> &'static str {
        match self {
            Traffic::Compulsory => "compulsory",
            Traffic::Accessed => "accessed",
        }
    }
}

/// D: what a device that does not hold the data must receive and send
/// back: the buffers the kernel reads (ro, rw) in, those it writes (wo,
/// rw) out.
fn transfer_bytes(launch: &Launch) -> u64 {
    launch
        .args
        .iter()
        .map(|arg| match &arg.value {
            ArgValue::Buffer { access, bytes, .. } => {
                let size = bytes.len() as u64;
                match access {
                    Access::ReadWrite => 2 * size,
                    Access::ReadOnly | Access::WriteOnly => size,
                }
            }
            _ => 0,
        })
        .sum()
}

/// The kernel's name, with its manifest's stem where an earlier manifest
/// launched a kernel of that name.
fn unique_name(kernel: &str, manifest: &Path, earlier: &[Counted]) -> String {
    let taken = |name: &str| earlier.iter().any(|k| k.kernel.name == name);
    if !taken(kernel) {
        return kernel.to_string();
    }
    let stem = manifest
        .file_stem()
        .map_or_else(|| "manifest".into(), |s| s.to_string_lossy().into_owned());
    let mut name = format!("{kernel} ({stem})");
    let mut n = 2;
    while taken(&name) {
        name = format!("{kernel} ({stem} {n})");
        n += 1;
    }
    name
}

/// The compute peak the application meets: the kind most of its in-set
/// work is, over all its kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CeilingKind {
    Int32,
    Float(FloatCeiling),
}

impl CeilingKind {
    fn of(kernels: &[Counted]) -> CeilingKind {
        let int: u64 = kernels.iter().map(|k| k.int_work).sum();
        let fp64: u64 = kernels.iter().map(|k| k.fp64_work).sum();
        let other: u64 = kernels.iter().map(|k| k.other_float_work).sum();
        match OpKind::dominant(int, fp64 + other) {
            OpKind::Int => CeilingKind::Int32,
            OpKind::Float if fp64 > other => CeilingKind::Float(FloatCeiling::Fp64),
            OpKind::Float => CeilingKind::Float(FloatCeiling::Fp32),
        }
    }

    fn ops(self) -> OpKind {
        match self {
            CeilingKind::Int32 => OpKind::Int,
            CeilingKind::Float(_) => OpKind::Float,
        }
    }

    fn float(self) -> FloatCeiling {
        match self {
            CeilingKind::Float(float) => float,
            CeilingKind::Int32 => FloatCeiling::Fp32,
        }
    }

    fn metric(self) -> Metric {
        match self {
            CeilingKind::Int32 => Metric::Int32,
            CeilingKind::Float(FloatCeiling::Fp32) => Metric::Fp32,
            CeilingKind::Float(FloatCeiling::Fp64) => Metric::Fp64,
        }
    }

    fn name(self) -> &'static str {
        match self {
            CeilingKind::Int32 => "int32",
            CeilingKind::Float(FloatCeiling::Fp32) => "fp32",
            CeilingKind::Float(FloatCeiling::Fp64) => "fp64",
        }
    }
}

/// A device as `--devices` named it, before its ceilings are chosen.
enum NamedDevice {
    /// A datasheet profile by its file name.
    Profile(DatasheetProfile),
    /// An OpenCL device, with the profile its name matches.
    OpenCl {
        info: Box<clflow_ocl::DeviceInfo>,
        datasheet: Option<DatasheetProfile>,
    },
}

impl NamedDevice {
    /// A profile name wins over an OpenCL selector, so that naming a
    /// profile never needs an OpenCL runtime.
    fn resolve(text: &str, catalog: &ProfileCatalog, verbosity: Verbosity) -> crate::Result<Self> {
        let text = text.trim();
        if let Some(profile) = catalog.get(text) {
            return Ok(NamedDevice::Profile(profile.clone()));
        }
        let device = select_device(Some(&DeviceSelector::parse(text))).map_err(|err| {
            let ids: Vec<&str> = catalog.profiles().iter().map(|p| p.id.as_str()).collect();
            verbosity.detail(format!("OpenCL: {err}"));
            Failure::input(format!(
                "--devices: `{text}` is neither a datasheet profile nor an OpenCL device ({err})"
            ))
            .with_hint(format!(
                "name a profile ({}) or a device `clflow devices` lists",
                ids.join(", ")
            ))
        })?;
        let datasheet = catalog
            .match_name(&device.info.name)
            .map(|m| m.profile.clone());
        Ok(NamedDevice::OpenCl {
            info: Box::new(device.info),
            datasheet,
        })
    }

    /// The device's ceilings for `kind`, each from the most direct source
    /// that states it.
    fn ceilings(&self, kind: CeilingKind) -> crate::Result<SplitDevice> {
        let (name, class, profile, holds_data) = match self {
            NamedDevice::Profile(p) => {
                let measured_source = format!("{} profile [measured]", p.id);
                let datasheet_source = format!("{} datasheet", p.model);
                let profile = DeviceProfile {
                    name: p.model.clone(),
                    kind: Some(p.class.to_string()),
                    measured: table_ceilings(
                        &p.measured,
                        kind,
                        Provenance::Imported,
                        &measured_source,
                    ),
                    datasheet: table_ceilings(
                        &p.datasheet,
                        kind,
                        Provenance::Datasheet,
                        &datasheet_source,
                    ),
                };
                let holds_data = p.class == DeviceClass::Cpu;
                (p.model.clone(), p.class.to_string(), profile, holds_data)
            }
            NamedDevice::OpenCl { info, datasheet } => {
                let stored = stored_profile(info)?;
                let name = info.name.trim().to_string();
                let profile = device_profile(
                    &name,
                    info,
                    stored.as_ref(),
                    datasheet.as_ref(),
                    kind.float(),
                );
                let class = profile.kind.clone().unwrap_or_default();
                (name, class, profile, info.kind == DeviceKind::Cpu)
            }
        };
        let pick = |choose: fn(&Ceilings) -> Option<&Figure>| {
            choose(&profile.measured)
                .or_else(|| choose(&profile.datasheet))
                .cloned()
        };
        let missing = |what: &str| {
            Failure::input(format!(
                "device `{name}`: no {what} figure, measured or on a datasheet"
            ))
            .with_hint(match self {
                NamedDevice::Profile(p) => {
                    format!("add it to the profile {} (see devices/README.md)", p.id)
                }
                NamedDevice::OpenCl { info, .. } => {
                    format!(
                        "measure the device first: `clflow bench --device {}`",
                        info.index
                    )
                }
            })
        };
        let compute = match kind.ops() {
            OpKind::Int => pick(|c| c.int.as_ref()),
            OpKind::Float => pick(|c| c.float.as_ref()),
        }
        .ok_or_else(|| missing(&format!("{} peak", kind.name())))?;
        let bandwidth = pick(|c| c.bandwidth.as_ref()).ok_or_else(|| missing("bandwidth"))?;
        // A CPU holds the data; any other device receives it over the link
        // its datasheet profile states.
        let link = if holds_data {
            None
        } else {
            match self {
                NamedDevice::Profile(p) => host_link(p),
                NamedDevice::OpenCl { datasheet, .. } => datasheet.as_ref().and_then(host_link),
            }
        };
        Ok(SplitDevice {
            name,
            class,
            compute,
            bandwidth,
            link,
            holds_data,
        })
    }
}

/// The stored `clflow bench` profile of an OpenCL device, if any.
fn stored_profile(
    info: &clflow_ocl::DeviceInfo,
) -> crate::Result<Option<clflow_devices::MeasuredProfile>> {
    let Some(store) = MeasuredStore::from_env() else {
        return Ok(None);
    };
    store.load(&DeviceIdentity::of(info)).map_err(|e| {
        Failure::input(&e).with_hint(
            e.hint()
                .unwrap_or("`clflow bench --refresh` measures again"),
        )
    })
}

/// One table of a datasheet profile as ceilings.
fn table_ceilings(
    figures: &Figures,
    kind: CeilingKind,
    provenance: Provenance,
    origin: &str,
) -> Ceilings {
    let figure = |metric: Metric, unit: Unit| {
        figures.get(metric).map(|f| {
            Figure::new(
                f.value * metric.scale_to_si(),
                unit,
                provenance,
                format!("{origin}: {}", f.source),
            )
        })
    };
    let compute = figure(kind.metric(), Unit::OpsPerSecond);
    let (int, float) = match kind.ops() {
        OpKind::Int => (compute, None),
        OpKind::Float => (None, compute),
    };
    Ceilings {
        float,
        int,
        bandwidth: figure(Metric::MemoryBandwidth, Unit::BytesPerSecond),
        power: None,
    }
}

/// The host link a profile states.
fn host_link(profile: &DatasheetProfile) -> Option<Figure> {
    let figure = profile.datasheet.get(Metric::HostLink)?;
    Some(Figure::datasheet(
        figure.value * Metric::HostLink.scale_to_si(),
        Unit::BytesPerSecond,
        format!("{} datasheet: {}", profile.model, figure.source),
    ))
}

/// One of the two devices with the figures the bounds use.
#[derive(Debug, Clone, Serialize)]
struct SplitDevice {
    name: String,
    class: String,
    /// F̂: the compute peak for the application's kind of operations.
    compute: Figure,
    /// B̂.
    bandwidth: Figure,
    /// The host link its data crosses; `None` for a CPU (it holds the data)
    /// or a device whose profile states no link.
    link: Option<Figure>,
    holds_data: bool,
}

impl SplitDevice {
    fn processor(&self) -> crate::Result<Processor> {
        Processor::new(
            self.name.clone(),
            self.compute.value,
            self.bandwidth.value,
            self.link.as_ref().map(|l| l.value),
        )
        .map_err(split_failure)
    }

    /// "1189 GOPS/s (imported: xeon-phi-5110p profile [measured]: paper Table 1)".
    fn describe(figure: &Figure) -> String {
        match &figure.source {
            Some(source) => format!(
                "{} ({}: {source})",
                figure.display(),
                figure.provenance.name()
            ),
            None => format!("{} ({})", figure.display(), figure.provenance.name()),
        }
    }

    fn link_text(&self) -> String {
        match (&self.link, self.holds_data) {
            (Some(link), _) => format!("host link {}", Self::describe(link)),
            (None, true) => "holds the data (a CPU: no transfers)".into(),
            (None, false) => "no host link stated: transfers not counted".into(),
        }
    }
}

/// The text report: the devices, the application, one row per partition.
fn render(
    analysis: &Analysis,
    devices: &[SplitDevice],
    kernels: &[Counted],
    ceiling: CeilingKind,
    traffic: Traffic,
) -> String {
    let mut out = String::new();
    let app = &analysis.application;
    out.push_str(&format!(
        "PerDome bounds: {} on two devices ({} ceilings)\n",
        match kernels.len() {
            1 => format!("kernel {}", kernels[0].kernel.name),
            n => format!("{n} kernels as one application"),
        },
        ceiling.name()
    ));
    for (role, device) in ["C", "G"].iter().zip(devices) {
        out.push_str(&format!(
            "  {role}: {}\n     F̂ {}\n     B̂ {}\n     {}\n",
            device.name,
            SplitDevice::describe(&device.compute),
            SplitDevice::describe(&device.bandwidth),
            device.link_text()
        ));
    }
    out.push_str(&format!(
        "  application: W = {}, Q = {} ({traffic}), I = {} OPS/B, D = {} (buffers in and out)\n",
        Unit::Ops.format(app.ops),
        Unit::Bytes.format(app.bytes),
        format_number(analysis.intensity),
        Unit::Bytes.format(app.transfer),
        traffic = traffic.name(),
    ));
    out.push_str(match analysis.transfers {
        Transfers::Counted => {
            "  transfers counted: a linked device's time includes D/L for its part (--no-transfers: the paper's model)\n\n"
        }
        Transfers::Ignored => "  transfers ignored (the paper's model)\n\n",
    });
    let header = [
        "partition",
        "C runs",
        "G runs",
        "C share",
        "I_C",
        "I_G",
        "T_C",
        "T_G",
        "bound",
    ];
    let mut rows: Vec<[String; 9]> = vec![header.map(String::from)];
    for partition in &analysis.partitions {
        rows.push(row(partition, kernels.len()));
    }
    let widths: Vec<usize> = (0..9)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, w))| {
                if c < 3 {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        out.push_str(&format!("  {}\n", cells.join("  ").trim_end()));
    }
    let best = analysis.best();
    out.push_str(&format!(
        "\nbest: {} at {}",
        best.model.name(),
        Unit::OpsPerSecond.format(best.bound.performance)
    ));
    if best.model == Model::PerfectDataPartition {
        out.push_str(&format!(
            ", C taking {} of the data",
            Unit::Ratio.format(best.c_share)
        ));
    }
    if best.model == Model::CodePartition {
        out.push_str(&format!(
            ": {} on C, {} on G",
            best.on_c.join(", "),
            best.on_g.join(", ")
        ));
    }
    out.push('\n');
    if kernels.len() == 1 {
        out.push_str("code partitions need two kernels or more: give each part's manifest\n");
    }
    out
}

fn row(p: &Partition, kernel_count: usize) -> [String; 9] {
    let side = |names: &[String], share: f64| match p.model {
        Model::PerfectDataPartition => format!("{} of the data", Unit::Ratio.format(share)),
        _ if names.is_empty() => "-".into(),
        _ if names.len() == kernel_count && kernel_count > 1 => "all".into(),
        _ => names.join(", "),
    };
    let time = |t: f64| {
        if t > 0.0 {
            Unit::Seconds.format(t)
        } else {
            "-".into()
        }
    };
    [
        p.model.name().to_string(),
        side(&p.on_c, p.c_share),
        side(&p.on_g, 1.0 - p.c_share),
        Unit::Ratio.format(p.c_share),
        format_number(p.i_c),
        format_number(p.i_g),
        time(p.bound.time_c),
        time(p.bound.time_g),
        Unit::OpsPerSecond.format(p.bound.performance),
    ]
}

/// The PerDome plot of an analysis: the surface around the application's
/// I, wide enough to hold every code partition.
fn perdome_plot(analysis: &Analysis, system: &System, devices: &[SplitDevice]) -> PerdomePlot {
    let i = analysis.intensity;
    let code: Vec<&Partition> = analysis
        .partitions
        .iter()
        .filter(|p| p.model == Model::CodePartition)
        .collect();
    // At least 2^4 either side of I; as far as the code partitions reach,
    // up to 2^12.
    let reach = code
        .iter()
        .flat_map(|p| [p.i_c, p.i_g])
        .filter(|v| v.is_finite() && *v > 0.0)
        .map(|v| (v / i).log2().abs() + 0.5)
        .fold(4.0f64, f64::max)
        .min(12.0)
        .ceil();
    let grid = surface(
        system,
        &analysis.application,
        analysis.transfers,
        reach.exp2(),
        PLOT_STEPS,
    );
    let (scale, unit) = Unit::OpsPerSecond.display_scale();
    let mut points = Vec::new();
    if let Some(p_dp) = analysis.find(Model::PerfectDataPartition) {
        points.push(PerdomePoint {
            label: format!("p-DP, C {}", Unit::Ratio.format(p_dp.c_share)),
            at: (i, i),
            value: p_dp.bound.performance / scale,
            kind: PointKind::DataPartition,
        });
    }
    if let Some(peak) = grid.peak() {
        points.push(PerdomePoint {
            label: "highest".into(),
            at: (peak.i_c, peak.i_g),
            value: peak.performance / scale,
            kind: PointKind::Peak,
        });
    }
    for p in &code {
        points.push(PerdomePoint {
            label: format!("G: {}", p.on_g.join(", ")),
            at: (p.i_c, p.i_g),
            value: p.bound.performance / scale,
            kind: PointKind::CodePartition,
        });
    }
    let value = |model| {
        analysis.find(model).map_or("-".into(), |p: &Partition| {
            format!("{} {unit}", format_number(p.bound.performance / scale))
        })
    };
    let mut notes = vec![
        format!("C: {}", devices[0].name),
        format!("G: {}", devices[1].name),
        format!("I = {} OPS/B", format_number(i)),
        format!("C only: {}", value(Model::COnly)),
        format!("G only: {}", value(Model::GOnly)),
        format!("p-DP: {}", value(Model::PerfectDataPartition)),
    ];
    notes.push(match analysis.transfers {
        Transfers::Counted => "host-link transfers counted".into(),
        Transfers::Ignored => "transfers ignored (paper)".into(),
    });
    PerdomePlot {
        title: format!(
            "PerDome: the bound of each split of the work, I = {} OPS/B",
            format_number(i)
        ),
        intensity: i,
        i_c: grid.i_c.clone(),
        i_g: grid.i_g.clone(),
        values: grid
            .performance
            .iter()
            .map(|row| row.iter().map(|v| v.map(|v| v / scale)).collect())
            .collect(),
        unit,
        points,
        notes,
    }
}
