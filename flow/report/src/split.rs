//! The CPU+GPU split (PerDome) as the report shows it: the counted kernels
//! and the two devices' figures the bounds were made from, the bounds' text
//! and HTML, the PerDome plot, the report section and `split.json`, which
//! `clflow report` reads back to draw the section again.

use crate::perdome::{PerdomePlot, PerdomePoint, PointKind};
use crate::{escape, ReportError, ReportSection, SectionChart};
use clflow_counts::{OpClass, PerClass, Summary};
use clflow_metrics::{format_number, Figure, Unit};
use clflow_split::{
    surface, Analysis, Kernel, Model, Partition, Processor, SplitError, System, Transfers, Work,
};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Grid cells per axis of the PerDome plot.
pub const PLOT_STEPS: usize = 65;

/// The heading of the report section.
pub const SECTION_HEADING: &str = "CPU+GPU split (PerDome)";

/// The traffic figure the bounds use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrafficKind {
    /// Each cache line once (a cache that holds everything): the least
    /// traffic, so the highest bound.
    Compulsory,
    /// Every global load and store (no cache).
    Accessed,
}

impl TrafficKind {
    pub const ALL: [TrafficKind; 2] = [TrafficKind::Compulsory, TrafficKind::Accessed];

    pub fn name(self) -> &'static str {
        match self {
            TrafficKind::Compulsory => "compulsory",
            TrafficKind::Accessed => "accessed",
        }
    }
}

impl std::str::FromStr for TrafficKind {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        TrafficKind::ALL
            .into_iter()
            .find(|t| t.name() == text)
            .ok_or_else(|| format!("`{text}` is not a traffic figure (compulsory, accessed)"))
    }
}

/// One kernel of the application, counted.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Counted {
    pub manifest: PathBuf,
    #[serde(flatten)]
    pub kernel: Kernel,
    #[serde(skip)]
    pub mix: PerClass,
}

impl Counted {
    /// The kernel `name` as the split sees it: W, Q as `traffic` bounds
    /// it, and D, the bytes its buffers move to a device and back.
    pub fn new(manifest: &Path, name: String, summary: &Summary, traffic: TrafficKind) -> Counted {
        let bytes = match traffic {
            TrafficKind::Compulsory => summary.compulsory,
            TrafficKind::Accessed => summary.accessed,
        };
        // Counts are finite and never negative: all that `Work::new` checks.
        let work = Work {
            ops: summary.work as f64,
            bytes: bytes as f64,
            transfer: summary.host.total() as f64,
        };
        Counted {
            manifest: manifest.to_path_buf(),
            kernel: Kernel { name, work },
            mix: summary.mix,
        }
    }
}

/// The compute peak the application meets ([`PerClass::ceiling`] of all
/// its kernels' in-set work): `Int`, `Fp32` or `Fp64`. split.json holds it
/// by name (int32, fp32, fp64).
pub type CeilingKind = OpClass;

/// The ceiling of an application of `kernels`.
pub fn ceiling_of(kernels: &[Counted]) -> CeilingKind {
    kernels.iter().map(|k| k.mix).sum::<PerClass>().ceiling()
}

/// A ceiling's name in text and in split.json.
pub fn ceiling_name(kind: CeilingKind) -> &'static str {
    match kind {
        OpClass::Int => "int32",
        OpClass::Fp64 => "fp64",
        OpClass::Fp32 | OpClass::Fp16 => "fp32",
    }
}

/// split.json's `ceiling`, by name.
mod ceiling_json {
    use super::{ceiling_name, CeilingKind};
    use clflow_counts::OpClass;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(kind: &CeilingKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(ceiling_name(*kind))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<CeilingKind, D::Error> {
        let name = String::deserialize(d)?;
        [OpClass::Int, OpClass::Fp32, OpClass::Fp64]
            .into_iter()
            .find(|kind| ceiling_name(*kind) == name)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "unknown ceiling `{name}`: expected int32, fp32 or fp64"
                ))
            })
    }
}

/// One of the two devices with the figures the bounds use.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SplitDevice {
    pub name: String,
    pub class: String,
    /// F̂: the compute peak for the application's kind of operations.
    pub compute: Figure,
    /// B̂.
    pub bandwidth: Figure,
    /// The host link its data crosses; `None` for a CPU (it holds the data)
    /// or a device whose profile states no link.
    pub link: Option<Figure>,
    pub holds_data: bool,
}

impl SplitDevice {
    fn processor(&self) -> Result<Processor, SplitError> {
        Processor::new(
            self.name.clone(),
            self.compute.value,
            self.bandwidth.value,
            self.link.as_ref().map(|l| l.value),
        )
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

/// An application split between two devices: the bounds of every
/// partition and what shows them.
pub struct Split<'a> {
    pub kernels: &'a [Counted],
    pub ceiling: CeilingKind,
    pub traffic: TrafficKind,
    /// C, then G.
    pub devices: [SplitDevice; 2],
    pub system: System,
    pub analysis: Analysis,
}

/// What `clflow split --json` prints and the report's `split.json` holds:
/// borrowed from a [`Split`] when written, owned when read back (`clflow
/// report` redraws the section from it).
#[derive(Serialize, Deserialize)]
pub struct SplitReport<'a> {
    /// The peak the devices' compute ceilings are: int32, fp32 or fp64.
    #[serde(with = "ceiling_json")]
    ceiling: CeilingKind,
    traffic: TrafficKind,
    /// C, then G.
    devices: Cow<'a, [SplitDevice]>,
    kernels: Cow<'a, [Counted]>,
    analysis: Cow<'a, Analysis>,
}

impl SplitReport<'_> {
    /// The split this document holds, to draw again: its bounds as they
    /// were written, its devices' ceilings checked as [`split`] checks
    /// them (the PerDome plot is drawn from them).
    pub fn split(&self) -> Result<Split<'_>, ReportError> {
        let devices: [SplitDevice; 2] =
            self.devices
                .to_vec()
                .try_into()
                .map_err(|devices: Vec<SplitDevice>| {
                    let n = devices.len();
                    let s = if n == 1 { "" } else { "s" };
                    ReportError::Document(format!(
                        "it names {n} device{s}; a split has two, C then G"
                    ))
                })?;
        if self.kernels.is_empty() {
            return Err(ReportError::Document(SplitError::NoKernels.to_string()));
        }
        // C only, G only and the data partition are always there: a
        // document without partitions has lost its bounds.
        if self.analysis.partitions.is_empty() {
            return Err(ReportError::Document(
                "it holds no partition's bound".into(),
            ));
        }
        Ok(Split {
            kernels: &self.kernels,
            ceiling: self.ceiling,
            traffic: self.traffic,
            system: system(&devices).map_err(|e| ReportError::Document(e.to_string()))?,
            devices,
            analysis: self.analysis.as_ref().clone(),
        })
    }
}

/// The two devices as the model sees them, their ceilings checked.
pub fn system([c, g]: &[SplitDevice; 2]) -> Result<System, SplitError> {
    Ok(System { c: c.processor()?, g: g.processor()? })
}

const TABLE_HEADER: [&str; 9] = [
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

impl Split<'_> {
    pub fn report(&self) -> SplitReport<'_> {
        SplitReport {
            ceiling: self.ceiling,
            traffic: self.traffic,
            devices: Cow::Borrowed(&self.devices),
            kernels: Cow::Borrowed(self.kernels),
            analysis: Cow::Borrowed(&self.analysis),
        }
    }

    fn title(&self) -> String {
        format!(
            "PerDome bounds: {} on two devices ({} ceilings)",
            match self.kernels {
                [one] => format!("kernel {}", one.kernel.name),
                all => format!("{} kernels as one application", all.len()),
            },
            ceiling_name(self.ceiling)
        )
    }

    fn application(&self) -> String {
        let app = &self.analysis.application;
        format!(
            "application: W = {}, Q = {} ({}), I = {} OPS/B, D = {} (buffers in and out)",
            Unit::Ops.format(app.ops),
            Unit::Bytes.format(app.bytes),
            self.traffic.name(),
            format_number(self.analysis.intensity),
            Unit::Bytes.format(app.transfer),
        )
    }

    /// What the bounds assume of transfers, and how to get the other model.
    fn transfers(&self) -> (&'static str, &'static str) {
        match self.analysis.transfers {
            Transfers::Counted => (
                "transfers counted: a linked device's time includes D/L for its part",
                "--no-transfers: the paper's model",
            ),
            Transfers::Ignored => ("transfers ignored (the paper's model)", ""),
        }
    }

    /// The header and one row per partition.
    fn table(&self) -> Vec<[String; 9]> {
        let mut rows = vec![TABLE_HEADER.map(String::from)];
        for partition in &self.analysis.partitions {
            rows.push(row(partition, self.kernels.len()));
        }
        rows
    }

    fn best(&self) -> String {
        let best = self.analysis.best();
        let mut out = format!(
            "best: {} at {}",
            best.model.name(),
            Unit::OpsPerSecond.format(best.bound.performance)
        );
        if best.model == Model::PerfectDataPartition {
            let _ = write!(
                out,
                ", C taking {} of the data",
                Unit::Ratio.format(best.c_share)
            );
        }
        if best.model == Model::CodePartition {
            let _ = write!(
                out,
                ": {} on C, {} on G",
                best.on_c.join(", "),
                best.on_g.join(", ")
            );
        }
        out
    }

    fn single_kernel_note(&self) -> Option<&'static str> {
        (self.kernels.len() == 1)
            .then_some("code partitions need two kernels or more: give each part's manifest")
    }

    /// The text report: the devices, the application, one row per partition.
    pub fn text(&self) -> String {
        let mut out = format!("{}\n", self.title());
        for (role, device) in ["C", "G"].iter().zip(&self.devices) {
            let _ = write!(
                out,
                "  {role}: {}\n     F̂ {}\n     B̂ {}\n     {}\n",
                device.name,
                SplitDevice::describe(&device.compute),
                SplitDevice::describe(&device.bandwidth),
                device.link_text()
            );
        }
        let _ = writeln!(out, "  {}", self.application());
        match self.transfers() {
            (what, "") => {
                let _ = writeln!(out, "  {what}\n");
            }
            (what, other) => {
                let _ = writeln!(out, "  {what} ({other})\n");
            }
        }
        let rows = self.table();
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
            let _ = writeln!(out, "  {}", cells.join("  ").trim_end());
        }
        let _ = writeln!(out, "\n{}", self.best());
        if let Some(note) = self.single_kernel_note() {
            let _ = writeln!(out, "{note}");
        }
        out
    }

    /// The text report as HTML: the same lines and table.
    pub fn html(&self) -> String {
        let mut out = format!("<p>{}</p>\n<ul>\n", escape(&self.title()));
        for (role, device) in ["C", "G"].iter().zip(&self.devices) {
            let _ = writeln!(
                out,
                "<li>{role}: <b>{}</b>: F̂ {}; B̂ {}; {}</li>",
                escape(&device.name),
                escape(&SplitDevice::describe(&device.compute)),
                escape(&SplitDevice::describe(&device.bandwidth)),
                escape(&device.link_text())
            );
        }
        let _ = writeln!(out, "</ul>\n<p>{}</p>", escape(&self.application()));
        match self.transfers() {
            (what, "") => {
                let _ = writeln!(out, "<p>{}</p>", escape(what));
            }
            (what, other) => {
                let _ = writeln!(
                    out,
                    "<p>{} (<code>clflow split</code> {})</p>",
                    escape(what),
                    escape(other)
                );
            }
        }
        let rows = self.table();
        out.push_str("<table id=\"split\">\n");
        for (r, cells) in rows.iter().enumerate() {
            out.push_str("<tr>");
            for (c, cell) in cells.iter().enumerate() {
                let cell = escape(cell);
                match (r, c) {
                    (0, _) => {
                        let _ = write!(out, "<th>{cell}</th>");
                    }
                    (_, 0..=2) => {
                        let _ = write!(out, "<td class=\"name\">{cell}</td>");
                    }
                    _ => {
                        let _ = write!(out, "<td>{cell}</td>");
                    }
                }
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
        let _ = writeln!(out, "<p>{}</p>", escape(&self.best()));
        if let Some(note) = self.single_kernel_note() {
            let _ = writeln!(out, "<p>{}</p>", escape(note));
        }
        out
    }

    /// The PerDome plot: the surface around the application's I, wide
    /// enough to hold every code partition. `None` where I is not a
    /// positive number (Q = 0: no intensity to centre on).
    pub fn plot(&self) -> Option<PerdomePlot> {
        let analysis = &self.analysis;
        let i = analysis.intensity;
        if !(i.is_finite() && i > 0.0) {
            return None;
        }
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
            &self.system,
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
            format!("C: {}", self.devices[0].name),
            format!("G: {}", self.devices[1].name),
            format!("I = {} OPS/B", format_number(i)),
            format!("C only: {}", value(Model::COnly)),
            format!("G only: {}", value(Model::GOnly)),
            format!("p-DP: {}", value(Model::PerfectDataPartition)),
        ];
        notes.push(match analysis.transfers {
            Transfers::Counted => "host-link transfers counted".into(),
            Transfers::Ignored => "transfers ignored (paper)".into(),
        });
        Some(PerdomePlot {
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
        })
    }

    /// The report section: `preface` (HTML, e.g. which pair of devices was
    /// taken) before the bounds table, the PerDome plot as `perdome.svg`
    /// and `.png`, and `split.json` holding what `clflow split --json`
    /// prints.
    pub fn report_section(&self, preface: &str) -> Result<ReportSection, ReportError> {
        let json = serde_json::to_string_pretty(&self.report()).map_err(|e| {
            ReportError::Encode { what: "split.json".into(), message: e.to_string() }
        })?;
        let mut html = format!("{preface}{}", self.html());
        let charts = match self.plot() {
            Some(plot) => vec![(
                "perdome".to_string(),
                format!(
                    "PerDome plot: the bound of each split of the work between C ({}) and G \
                     ({}) over the intensities of their parts, I_C and I_G; the perfect data \
                     partition, the highest bound and the code partitions marked",
                    self.devices[0].name, self.devices[1].name
                ),
                SectionChart::Perdome(plot),
            )],
            None => {
                let _ = writeln!(
                    html,
                    "<p>No PerDome plot: I = W/Q is {} (the kernels move no global memory).</p>",
                    format_number(self.analysis.intensity)
                );
                Vec::new()
            }
        };
        Ok(ReportSection {
            heading: SECTION_HEADING.to_string(),
            html,
            charts,
            files: vec![("split.json".to_string(), json)],
        })
    }
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
