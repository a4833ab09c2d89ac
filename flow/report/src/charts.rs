//! The report's charts, built from a result set: per device a performance
//! roofline (paper Figures 6, 8, 10) and a performance-per-watt roofline
//! (eq. 8; Figures 7, 9, 11); every device on one chart (Figures 3, 4); and
//! the energy of each run (Figure 12).

use crate::plot::{
    decade_ceil, decade_floor, Axis, Bar, BarPlot, Line, LogPlot, Marker, Place, Stroke, Tag,
};
use clflow_metrics::{format_number, ridge, Ceilings, DeviceProfile, Metrics, ResultSet, Unit};
use plotters::style::RGBColor;

/// Which roofline: operations per second (eq. 7) or per second per watt (eq. 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Roof {
    Performance,
    PerWatt,
}

impl Roof {
    fn unit(self) -> Unit {
        match self {
            Roof::Performance => Unit::OpsPerSecond,
            Roof::PerWatt => Unit::OpsPerSecondPerWatt,
        }
    }

    /// The axis label, unit included.
    fn y_label(self) -> String {
        let (_, unit) = self.unit().display_scale();
        match self {
            Roof::Performance => format!("Performance F ({unit})"),
            Roof::PerWatt => format!("Performance per watt R ({unit})"),
        }
    }

    /// What a kernel reached on this roofline: F or R.
    fn achieved(self, m: &Metrics) -> Option<f64> {
        match self {
            Roof::Performance => m.performance.as_ref().map(|f| f.value),
            Roof::PerWatt => m.perf_per_watt.as_ref().map(|r| r.value),
        }
    }
}

const INTENSITY_LABEL: &str = "Operational intensity I (OPS/B)";
const GIGA: f64 = 1e9;
const INK: RGBColor = RGBColor(30, 30, 30);
/// Colours for devices (comparison charts) and kernels (device charts).
const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

pub fn color(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

/// A device's roofline in plot units (giga): bandwidth slope and compute
/// ceilings, divided by power for the per-watt roofline.
#[derive(Debug, Clone, Copy)]
struct RoofValues {
    slope: f64,
    int: Option<f64>,
    float: Option<f64>,
}

fn roof_values(ceilings: &Ceilings, roof: Roof) -> Option<RoofValues> {
    let divisor = match roof {
        Roof::Performance => 1.0,
        Roof::PerWatt => ceilings
            .power
            .as_ref()
            .map(|p| p.value)
            .filter(|p| *p > 0.0)?,
    };
    let scaled = |f: &Option<clflow_metrics::Figure>| f.as_ref().map(|f| f.value / divisor / GIGA);
    let values = RoofValues {
        slope: scaled(&ceilings.bandwidth)?,
        int: scaled(&ceilings.int),
        float: scaled(&ceilings.float),
    };
    (values.int.is_some() || values.float.is_some()).then_some(values)
}

/// The caches' bandwidth slopes of `ceilings` in plot units, per watt for
/// the per-watt roofline.
fn cache_slopes(ceilings: &Ceilings, roof: Roof) -> Vec<(String, f64, u64)> {
    let divisor = match roof {
        Roof::Performance => 1.0,
        Roof::PerWatt => match ceilings.power.as_ref().map(|p| p.value) {
            Some(p) if p > 0.0 => p,
            _ => return Vec::new(),
        },
    };
    ceilings
        .caches
        .iter()
        .map(|c| {
            (
                c.level.clone(),
                c.bandwidth.value / divisor / GIGA,
                c.window_bytes,
            )
        })
        .collect()
}

/// One roofline to draw: whose, in what colour, how prominent.
struct RoofSpec {
    /// "measured", "datasheet", or a device name.
    name: String,
    values: RoofValues,
    /// The caches' bandwidth slopes (plot units), nearest the core first:
    /// the hierarchical roofline's ceilings, with what measured them.
    caches: Vec<(String, f64, u64)>,
    color: RGBColor,
    faint: bool,
    /// Write the values inside the plot (device charts) or only in the legend.
    tagged: bool,
}

/// One kernel's wall(s) and what it reached.
struct KernelSpec {
    label: String,
    intensity_min: f64,
    intensity_max: f64,
    /// What each wall is: `I accessed`, `I compulsory`.
    names: (&'static str, &'static str),
    achieved: Option<f64>,
    /// The roof where the achieved point stands: at the DRAM level's
    /// intensity where the memory levels are known, else at `intensity_max`.
    attainable: Option<f64>,
    /// I at each memory level (`L1` ... `DRAM`), nearest the core first:
    /// the hierarchical roofline's points, all at the achieved value.
    levels: Vec<(String, f64)>,
    color: RGBColor,
}

impl KernelSpec {
    /// Where the achieved point stands: the DRAM traffic's intensity where
    /// the cache simulation gave one, else the higher wall.
    fn point(&self) -> f64 {
        self.levels
            .last()
            .map_or(self.intensity_max, |(_, intensity)| *intensity)
    }
}

/// A wall's name from the intensity's equation: W over which Q.
fn wall_name(intensity: &clflow_metrics::Figure) -> &'static str {
    match intensity.source.as_deref().unwrap_or("") {
        s if s.contains("compulsory") => "I compulsory",
        s if s.contains("accessed") => "I accessed",
        _ => "I",
    }
}

fn value_text(value: f64, roof: Roof) -> String {
    format!("{} {}", format_number(value), roof.unit().display_scale().1)
}

fn slope_text(slope: f64, roof: Roof) -> String {
    match roof {
        Roof::Performance => format!("{} GB/s", format_number(slope)),
        Roof::PerWatt => format!("{} GB/s/W", format_number(slope)),
    }
}

/// Lays out the rooflines and kernels on log axes that hold every ridge,
/// wall, ceiling and achieved value (and the `points` to be marked) with
/// room to spare.
fn layout(
    title: String,
    roof: Roof,
    roofs: &[RoofSpec],
    kernels: &[KernelSpec],
    points: &[(f64, f64)],
) -> LogPlot {
    let mut xs: Vec<f64> = Vec::new();
    let mut ys: Vec<f64> = Vec::new();
    for r in roofs {
        for peak in [r.values.int, r.values.float].into_iter().flatten() {
            xs.push(ridge(peak, r.values.slope));
            ys.push(peak);
        }
    }
    for k in kernels {
        xs.extend([k.intensity_min, k.intensity_max]);
        xs.extend(k.levels.iter().map(|(_, i)| *i));
        ys.extend(k.achieved);
    }
    for (x, y) in points {
        xs.push(*x);
        ys.push(*y);
    }
    let finite = |v: &f64| v.is_finite() && *v > 0.0;
    let x_lo = decade_floor(xs.iter().copied().filter(finite).fold(1.0, f64::min) / 3.0);
    let x_hi = decade_ceil(xs.iter().copied().filter(finite).fold(1.0, f64::max) * 2.0);
    let floor_values = roofs
        .iter()
        .map(|r| r.values.slope * x_lo)
        .chain(kernels.iter().filter_map(|k| k.achieved))
        .chain(points.iter().map(|(_, y)| *y));
    let y_lo = decade_floor(
        floor_values
            .filter(finite)
            .fold(f64::INFINITY, f64::min)
            .min(1.0),
    );
    let y_hi = decade_ceil(
        ys.iter()
            .copied()
            .filter(finite)
            .fold(y_lo * 10.0, f64::max)
            * 2.5,
    );

    let mut plot = LogPlot {
        title,
        x_label: INTENSITY_LABEL.into(),
        y_label: roof.y_label(),
        x_range: (x_lo, x_hi),
        y_range: (y_lo, y_hi),
        x_axis: Axis::Number,
        lines: Vec::new(),
        markers: Vec::new(),
        tags: Vec::new(),
    };
    for r in roofs {
        add_roof(&mut plot, roof, r);
    }
    for k in kernels {
        add_kernel(&mut plot, roof, k);
    }
    plot
}

fn add_roof(plot: &mut LogPlot, roof: Roof, spec: &RoofSpec) {
    let (x_lo, x_hi) = plot.x_range;
    let v = spec.values;
    let width = if spec.faint { 2 } else { 3 };
    let top = [v.int, v.float].into_iter().flatten().fold(0.0, f64::max);
    let slope_end = ridge(top, v.slope);
    plot.lines.push(Line {
        points: vec![(x_lo, v.slope * x_lo), (slope_end, top)],
        color: spec.color,
        faint: spec.faint,
        stroke: Stroke::Solid,
        width,
        legend: Some(format!(
            "{} bandwidth {}",
            spec.name,
            slope_text(v.slope, roof)
        )),
    });
    if spec.tagged {
        // On the slope, a third of the way in on the log scale.
        let x = x_lo * (slope_end / x_lo).powf(0.3);
        plot.tags.push(Tag {
            text: format!("{} {}", spec.name, slope_text(v.slope, roof)),
            at: (x, v.slope * x),
            place: if spec.faint {
                Place::AboveLeft
            } else {
                Place::BelowRight
            },
            color: spec.color,
        });
    }
    // Each cache's slope up to the highest peak, thinner: a level point
    // reads against its own level's bandwidth.
    for (level, slope, window) in &spec.caches {
        let end = ridge(top, *slope);
        plot.lines.push(Line {
            points: vec![(x_lo, slope * x_lo), (end, top)],
            color: spec.color,
            faint: true,
            stroke: Stroke::Solid,
            width: 2,
            legend: Some(format!(
                "{} {level} bandwidth {} (reads within {} KiB)",
                spec.name,
                slope_text(*slope, roof),
                window >> 10
            )),
        });
        let x = x_lo * (end / x_lo).powf(0.15);
        plot.tags.push(Tag {
            text: format!("{level} {}", slope_text(*slope, roof)),
            at: (x, slope * x),
            place: Place::AboveLeft,
            color: spec.color,
        });
    }
    // The ridge: where the slope meets the highest peak, the intensity a
    // kernel needs to be compute-bound.
    if spec.tagged && top > 0.0 {
        plot.markers
            .push(Marker { at: (slope_end, top), color: spec.color, legend: None });
        plot.tags.push(Tag {
            text: format!("ridge {} OPS/B", format_number(slope_end)),
            at: (slope_end, top),
            place: Place::BelowRight,
            color: spec.color,
        });
    }
    // Each ceiling its own stroke, so that the legend tells them apart.
    for (kind, peak, stroke) in [
        ("int", v.int, Stroke::Dotted),
        ("float", v.float, Stroke::Dashed),
    ] {
        let Some(peak) = peak else { continue };
        plot.lines.push(Line {
            points: vec![(ridge(peak, v.slope), peak), (x_hi, peak)],
            color: spec.color,
            faint: spec.faint,
            stroke,
            width,
            legend: Some(format!(
                "{} {kind} peak {}",
                spec.name,
                value_text(peak, roof)
            )),
        });
        if spec.tagged {
            plot.tags.push(Tag {
                text: format!("{} {kind} {}", spec.name, value_text(peak, roof)),
                at: (x_hi, peak),
                place: if spec.faint {
                    Place::AboveLeft
                } else {
                    Place::BelowLeft
                },
                color: spec.color,
            });
        }
    }
}

fn add_kernel(plot: &mut LogPlot, roof: Roof, k: &KernelSpec) {
    let (x_lo, x_hi) = plot.x_range;
    let (y_lo, y_hi) = plot.y_range;
    let ranged = k.intensity_min < k.intensity_max;
    let mut walls = vec![(k.intensity_max, Stroke::Solid, "I")];
    if ranged {
        walls[0].2 = k.names.1;
        walls.push((k.intensity_min, Stroke::Dotted, k.names.0));
    }
    for (intensity, stroke, name) in walls {
        let text = format!("{} {name} = {} OPS/B", k.label, format_number(intensity));
        plot.lines.push(Line {
            points: vec![(intensity, y_lo), (intensity, y_hi)],
            color: k.color,
            faint: false,
            stroke,
            width: 2,
            legend: Some(format!("{text} (wall)")),
        });
        plot.tags.push(Tag {
            text,
            at: (intensity, y_hi / 1.6),
            place: Place::AboveRight,
            color: k.color,
        });
    }
    if let (Some(achieved), true) = (k.achieved, k.levels.len() > 1) {
        // The hierarchical roofline: a point per memory level, joined, each
        // named; the DRAM one is the achieved point itself (below).
        plot.lines.push(Line {
            points: k.levels.iter().map(|(_, i)| (*i, achieved)).collect(),
            color: k.color,
            faint: false,
            stroke: Stroke::Solid,
            width: 1,
            legend: None,
        });
        for (level, intensity) in &k.levels[..k.levels.len() - 1] {
            plot.markers
                .push(Marker { at: (*intensity, achieved), color: k.color, legend: None });
            plot.tags.push(Tag {
                text: level.clone(),
                at: (*intensity, achieved),
                place: Place::AboveLeft,
                color: k.color,
            });
        }
    }
    if let Some(achieved) = k.achieved {
        let point = k.point();
        let text = match k.levels.last() {
            Some((level, _)) => format!(
                "{} achieved {} ({level})",
                k.label,
                value_text(achieved, roof)
            ),
            None => format!("{} achieved {}", k.label, value_text(achieved, roof)),
        };
        plot.lines.push(Line {
            points: vec![(x_lo, achieved), (x_hi, achieved)],
            color: k.color,
            faint: true,
            stroke: Stroke::Dashed,
            width: 2,
            legend: None,
        });
        plot.markers.push(Marker {
            at: (point, achieved),
            color: k.color,
            legend: Some(text.clone()),
        });
        // Beside its point, under the roof: clear of the bandwidth slope.
        plot.tags.push(Tag {
            text,
            at: (point, achieved),
            place: Place::BelowRight,
            color: k.color,
        });
        // The gap to the roof above the point, and how much of it is used.
        if let Some(roof_at) = k.attainable.filter(|a| *a > achieved) {
            // A broad faint band over the wall, so that it shows on it.
            plot.lines.push(Line {
                points: vec![(point, achieved), (point, roof_at)],
                color: k.color,
                faint: true,
                stroke: Stroke::Solid,
                width: 10,
                legend: None,
            });
            plot.tags.push(Tag {
                text: format!(
                    "{} % of attainable",
                    format_number(100.0 * achieved / roof_at)
                ),
                at: (point, (achieved * roof_at).sqrt()),
                place: Place::AboveRight,
                color: k.color,
            });
        }
    }
}

/// A kernel as a chart draws it; `device`, the roof of the chart's one
/// device, places it at its memory levels (comparison charts have none).
fn kernel_spec(
    m: &Metrics,
    roof: Roof,
    label: String,
    color: RGBColor,
    device: Option<RoofValues>,
) -> Option<KernelSpec> {
    let (min, max) = (m.intensity_min.as_ref()?, m.intensity_max.as_ref()?);
    let attainable = match roof {
        Roof::Performance => m.attainable.as_ref(),
        Roof::PerWatt => m.attainable_per_watt.as_ref(),
    };
    let levels: Vec<(String, f64)> = match device {
        Some(_) => m
            .levels
            .iter()
            .map(|l| (l.level.clone(), l.intensity.value))
            .collect(),
        None => Vec::new(),
    };
    // The roof at the DRAM point, where the memory levels place it.
    let peak = device.and_then(|v| match m.ops {
        clflow_metrics::OpKind::Int => v.int,
        clflow_metrics::OpKind::Float => v.float,
    });
    let attainable = match (levels.last(), device, peak) {
        (Some((_, i)), Some(v), Some(peak)) => Some((i * v.slope).min(peak)),
        _ => attainable.map(|a| a.value / GIGA),
    };
    Some(KernelSpec {
        label,
        intensity_min: min.value,
        intensity_max: max.value,
        names: (wall_name(min), wall_name(max)),
        achieved: roof.achieved(m).map(|v| v / GIGA),
        attainable,
        levels,
        color,
    })
}

/// The roofline of one device (Figures 6–11): measured ceilings strong,
/// datasheet ceilings faint, each kernel's wall and achieved value; where
/// the device's caches were simulated, hierarchical: the kernel's point at
/// each memory level (L1 ... DRAM), the achieved one at DRAM's.
pub fn device_roofline(
    roof: Roof,
    device: &DeviceProfile,
    metrics: &[&Metrics],
) -> Option<LogPlot> {
    let mut roofs = Vec::new();
    if let Some(values) = roof_values(&device.measured, roof) {
        roofs.push(RoofSpec {
            name: "measured".into(),
            caches: cache_slopes(&device.measured, roof),
            values,
            color: INK,
            faint: false,
            tagged: true,
        });
    }
    if let Some(values) = roof_values(&device.datasheet, roof) {
        roofs.push(RoofSpec {
            name: "datasheet".into(),
            caches: Vec::new(),
            values,
            color: INK,
            faint: true,
            tagged: true,
        });
    }
    if roofs.is_empty() {
        return None;
    }
    // The roof the points are read against: measured where there is one.
    let device_roof = Some(roofs[0].values);
    let kernels: Vec<KernelSpec> = metrics
        .iter()
        .enumerate()
        .filter_map(|(i, m)| kernel_spec(m, roof, m.kernel.clone(), color(i), device_roof))
        .collect();
    let what = match roof {
        Roof::Performance => "Performance roofline",
        Roof::PerWatt => "Performance-per-watt roofline",
    };
    Some(layout(
        format!("{what} – {}", device.name),
        roof,
        &roofs,
        &kernels,
        &[],
    ))
}

/// Every device's measured roofline on one chart (Figures 3, 4): integer
/// ceilings solid, floating-point dashed, one colour per device, and each
/// kernel's wall with what it reached on each device.
pub fn comparison_roofline(roof: Roof, set: &ResultSet, metrics: &[Metrics]) -> Option<LogPlot> {
    let mut roofs = Vec::new();
    for (index, device) in set.devices.iter().enumerate() {
        let values =
            roof_values(&device.measured, roof).or_else(|| roof_values(&device.datasheet, roof));
        if let Some(values) = values {
            roofs.push(RoofSpec {
                name: device.name.clone(),
                caches: Vec::new(),
                values,
                color: color(index),
                faint: false,
                tagged: false,
            });
        }
    }
    if roofs.is_empty() {
        return None;
    }
    // A kernel's wall is the same on every device: drawn once, in grey.
    let mut walls: Vec<KernelSpec> = Vec::new();
    for kernel in &set.kernels {
        let first = metrics.iter().find(|m| m.kernel == kernel.kernel);
        let grey = RGBColor(110, 110, 110);
        if let Some(mut spec) =
            first.and_then(|m| kernel_spec(m, roof, kernel.kernel.clone(), grey, None))
        {
            spec.achieved = None;
            walls.push(spec);
        }
    }
    // What each kernel reached on each device: a marker on its wall.
    let several_kernels = set.kernels.len() > 1;
    let mut reached = Vec::new();
    for m in metrics {
        let (Some(achieved), Some(intensity)) = (roof.achieved(m), m.intensity_max.as_ref()) else {
            continue;
        };
        let index = set
            .devices
            .iter()
            .position(|d| d.name == m.device)
            .unwrap_or(0);
        let who = if several_kernels {
            format!("{} on {}", m.kernel, m.device)
        } else {
            m.device.clone()
        };
        reached.push(Marker {
            at: (intensity.value, achieved / GIGA),
            color: color(index),
            legend: Some(format!(
                "{who} achieved {}",
                value_text(achieved / GIGA, roof)
            )),
        });
    }
    let what = match roof {
        Roof::Performance => "Performance roofline, all devices",
        Roof::PerWatt => "Performance per watt, all devices",
    };
    let points: Vec<(f64, f64)> = reached.iter().map(|m| m.at).collect();
    let mut plot = layout(what.into(), roof, &roofs, &walls, &points);
    plot.markers.extend(reached);
    Some(plot)
}

/// The energy of every run with a time and a power (Figure 12).
pub fn energy_bars(set: &ResultSet, metrics: &[Metrics]) -> Option<BarPlot> {
    let several_kernels = set.kernels.len() > 1;
    let bars: Vec<Bar> = metrics
        .iter()
        .filter_map(|m| {
            let energy = m.energy.as_ref()?;
            let index = set
                .devices
                .iter()
                .position(|d| d.name == m.device)
                .unwrap_or(0);
            Some(Bar {
                name: if several_kernels {
                    format!("{} / {}", m.kernel, m.device)
                } else {
                    m.device.clone()
                },
                value: energy.value,
                color: color(index),
                text: energy.display(),
            })
        })
        .collect();
    if bars.is_empty() {
        return None;
    }
    let kernels: Vec<&str> = set.kernels.iter().map(|k| k.kernel.as_str()).collect();
    Some(BarPlot {
        title: format!("Energy per kernel run, E = T·P ({})", kernels.join(", ")),
        y_label: "Energy E (J)".into(),
        bars,
    })
}
