//! The prediction models' charts and table: the boat hull's time against
//! complexity, the quadrant split (devices as points in bandwidth ×
//! throughput, the kernel as a half-line of slope I), and the energy
//! roofline; and the table of predicted beside measured times with APE.

use crate::charts::color;
use crate::html::escape;
use crate::plot::{decade_ceil, decade_floor, Axis, Line, LogPlot, Marker, Place, Stroke, Tag};
use clflow_metrics::{format_number, Unit};
use clflow_predict::Predictions;
use plotters::style::RGBColor;
use std::fmt::Write;

const INK: RGBColor = RGBColor(30, 30, 30);
const GIGA: f64 = 1e9;

/// Log range holding every positive finite value, a decade of room.
fn range_of(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    (hi > 0.0).then(|| (decade_floor(lo / 2.0), decade_ceil(hi * 2.0)))
}

fn log_points(lo: f64, hi: f64, f: impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
    (0..=64)
        .map(|k| {
            let x = lo * (hi / lo).powf(k as f64 / 64.0);
            (x, f(x))
        })
        .collect()
}

fn line(points: Vec<(f64, f64)>, color: RGBColor, stroke: Stroke, legend: &str) -> Line {
    Line {
        points,
        color,
        faint: false,
        stroke,
        width: 2,
        legend: Some(legend.to_string()),
    }
}

/// The boat hull model's view (its Figures 2 and 7): predicted time against
/// the complexity f, compute equation and floor, memory equation and floor,
/// the totals with host transfer dashed, and the measured time as a point.
pub fn boat_hull_chart(p: &Predictions) -> Option<LogPlot> {
    let hull = p.boat_hull.prediction.as_ref()?;
    let params = hull.parameters;
    let compute = hull.device.p_compute.value;
    let f_kernel = params.f.max(1e-3);
    let (x_lo, x_hi) = (
        decade_floor(f_kernel / 100.0),
        decade_ceil(f_kernel * 100.0),
    );
    let c0 = |f: f64| params.compute_time(f, compute);
    let mut lines = vec![line(
        log_points(x_lo, x_hi, c0),
        color(0),
        Stroke::Solid,
        "c0 compute",
    )];
    if params.fma_floor {
        lines.push(line(
            log_points(x_lo, x_hi, |f| 2.0 * c0(f)),
            color(0),
            Stroke::Dotted,
            "c1 floor: no FMA",
        ));
    }
    lines.push(line(
        vec![(x_lo, hull.m0_s), (x_hi, hull.m0_s)],
        color(1),
        Stroke::Solid,
        "m0 memory",
    ));
    if let Some(m1) = hull.m1_s {
        lines.push(line(
            vec![(x_lo, m1), (x_hi, m1)],
            color(1),
            Stroke::Dotted,
            "m1 floor: scattered",
        ));
    }
    if let Some(t0) = hull.t0_s {
        lines.push(line(
            log_points(x_lo, x_hi, |f| c0(f).max(hull.m0_s) + t0),
            color(2),
            Stroke::Dashed,
            "max(c0, m0) + t0 host copies",
        ));
    }
    let mut markers = vec![Marker {
        at: (f_kernel, hull.time_s),
        color: INK,
        legend: Some(format!("predicted {}", Unit::Seconds.format(hull.time_s))),
    }];
    if let Some(t) = p.measured.time_s {
        markers.push(Marker {
            at: (f_kernel, t),
            color: RGBColor(214, 39, 40),
            legend: Some(format!("measured {}", Unit::Seconds.format(t))),
        });
    }
    let ys = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|(_, y)| *y))
        .chain(markers.iter().map(|m| m.at.1));
    let y_range = range_of(ys)?;
    Some(LogPlot {
        title: format!("Boat hull: {} on {}", p.kernel, p.device),
        x_label: "Complexity f (operations per element read)".into(),
        y_label: "Time (s)".into(),
        x_range: (x_lo, x_hi),
        y_range,
        x_axis: Axis::Number,
        lines,
        markers,
        tags: vec![Tag {
            text: format!(
                "w {}, m {}, o {}",
                format_number(params.w),
                format_number(params.m),
                format_number(params.o)
            ),
            at: (f_kernel, hull.time_s),
            place: Place::BelowRight,
            color: INK,
        }],
    })
}

/// A device as the quadrant split draws it.
#[derive(Debug, Clone, PartialEq)]
pub struct QuadrantDevice {
    pub name: String,
    pub bandwidth: f64,
    pub throughput: f64,
}

/// The quadrant split: each device a point at (bandwidth, throughput), the
/// kernel the half-line throughput = I · bandwidth. Devices above the line
/// run the kernel memory bound, those below compute bound; a dashed guide
/// from each device to the line ends at the kernel's roofline performance
/// there.
pub fn quadrant_split_chart(
    kernel: &str,
    intensity: f64,
    devices: &[QuadrantDevice],
) -> Option<LogPlot> {
    if !(intensity.is_finite() && intensity > 0.0) || devices.is_empty() {
        return None;
    }
    // Each device's bandwidth, and where a compute-bound one's guide ends.
    let xs: Vec<f64> = devices
        .iter()
        .flat_map(|d| {
            let b = d.bandwidth / GIGA;
            [b, (d.throughput / GIGA / intensity).min(b)]
        })
        .collect();
    let ys: Vec<f64> = devices.iter().map(|d| d.throughput / GIGA).collect();
    let (x_lo, x_hi) = range_of(xs.iter().copied())?;
    let (y_lo, y_hi) = range_of(
        ys.iter()
            .copied()
            .chain([intensity * x_lo, intensity * x_hi]),
    )?;
    // A straight line on log-log axes: its two ends draw it exactly.
    let half_line = line(
        vec![(x_lo, intensity * x_lo), (x_hi, intensity * x_hi)],
        INK,
        Stroke::Solid,
        &format!("{kernel}: slope I = {}", format_number(intensity)),
    );
    let mut lines = vec![half_line];
    let mut markers = Vec::new();
    let mut tags = Vec::new();
    for (k, d) in devices.iter().enumerate() {
        let at = (d.bandwidth / GIGA, d.throughput / GIGA);
        // Above the half-line the kernel is memory bound there and reaches
        // I·B, straight below; below it, compute bound at F, using F/I of
        // the bandwidth, straight left: the dashed guide ends at the
        // roofline's performance of the kernel on the device.
        let (bound, roof) = if at.1 / at.0 > intensity {
            ("memory bound", (at.0, intensity * at.0))
        } else {
            ("compute bound", (at.1 / intensity, at.1))
        };
        let text = format!("{}: {bound}, {} GOPS/s", d.name, format_number(roof.1));
        lines.push(Line {
            points: vec![at, roof],
            color: color(k),
            faint: false,
            stroke: Stroke::Dashed,
            width: 2,
            legend: None,
        });
        markers.push(Marker { at, color: color(k), legend: Some(text) });
        tags.push(Tag {
            text: d.name.clone(),
            at,
            place: Place::AboveRight,
            color: color(k),
        });
    }
    Some(LogPlot {
        title: format!("Quadrant split: {kernel}"),
        x_label: "Memory bandwidth (GB/s)".into(),
        y_label: "Throughput (GOPS/s)".into(),
        x_range: (x_lo, x_hi),
        y_range: (y_lo.min(decade_floor(y_hi / 1e4)), y_hi),
        x_axis: Axis::Number,
        lines,
        markers,
        tags,
    })
}

/// The energy roofline of every device with a fit: operations per joule
/// against intensity, the kernel's predicted (and measured) efficiency at
/// its intensity.
pub fn energy_roofline_chart(predictions: &[&Predictions]) -> Option<LogPlot> {
    let mut lines = Vec::new();
    let mut markers = Vec::new();
    let mut intensities = Vec::new();
    for (k, p) in predictions.iter().enumerate() {
        let (Some(energy), Some(roofline)) =
            (p.energy.prediction.as_ref(), p.roofline.prediction.as_ref())
        else {
            continue;
        };
        let intensity = roofline.work / roofline.bytes.max(1.0);
        intensities.push(intensity);
        let c = &energy.coefficients;
        let (peak, bandwidth) = (roofline.peak.value, roofline.bandwidth.value);
        lines.push(line(
            log_points(1e-3, 1e4, |i| c.efficiency_at(i, peak, bandwidth) / GIGA),
            color(k),
            Stroke::Solid,
            &format!(
                "{} (balance {} OPS/B)",
                p.device,
                format_number(c.balance())
            ),
        ));
        markers.push(Marker {
            at: (intensity, roofline.work / energy.energy_j / GIGA),
            color: color(k),
            legend: Some(format!("{} predicted on {}", p.kernel, p.device)),
        });
        if let Some(measured) = p.measured.energy_j {
            markers.push(Marker {
                at: (intensity, roofline.work / measured / GIGA),
                color: INK,
                legend: Some(format!("{} measured on {}", p.kernel, p.device)),
            });
        }
    }
    if lines.is_empty() {
        return None;
    }
    let ys = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|(_, y)| *y))
        .chain(markers.iter().map(|m| m.at.1));
    let y_range = range_of(ys)?;
    Some(LogPlot {
        title: "Energy roofline".into(),
        x_label: "Operational intensity I (OPS/B)".into(),
        y_label: "Energy efficiency (GOPS/J)".into(),
        x_range: (1e-3, 1e4),
        y_range,
        x_axis: Axis::Number,
        lines,
        markers,
        tags: Vec::new(),
    })
}

/// The table of every model's prediction beside the measurement, as HTML.
pub fn predictions_table(predictions: &[&Predictions]) -> String {
    let mut page = String::from(
        "<table id=\"predictions\"><tr><th>Kernel</th><th>Device</th><th>Model</th>\
         <th>Predicted</th><th>Measured</th><th>APE</th><th>Bound</th><th>Note</th></tr>\n",
    );
    for p in predictions {
        for row in p.rows() {
            let energy = row.model == clflow_predict::Model::Energy;
            let unit = if energy { Unit::Joules } else { Unit::Seconds };
            let measured = if energy {
                p.measured.energy_j
            } else {
                p.measured.time_s
            };
            let show = |v: Option<f64>| v.map_or("–".to_string(), |v| unit.format(v));
            let _ = writeln!(
                page,
                "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td class=\"name\">{}</td>\
                 <td>{}</td><td>{}</td><td>{}</td><td class=\"name\">{}</td><td class=\"name\">{}</td></tr>",
                escape(&p.kernel),
                escape(&p.device),
                row.model.label(),
                show(row.value),
                show(measured),
                row.ape
                    .map_or("–".to_string(), |a| format!("{:.1}%", a * 100.0)),
                row.bound.map_or("–", |b| b.name()),
                escape(row.skipped.as_deref().unwrap_or("")),
            );
        }
    }
    page.push_str("</table>\n");
    page
}

/// The predictions as a report section: their table, each device's boat
/// hull, the kernel's quadrant split over the devices, the energy roofline.
pub fn report_section(predictions: &[Predictions]) -> crate::Section {
    let refs: Vec<&Predictions> = predictions.iter().collect();
    let mut charts = Vec::new();
    for (k, p) in predictions.iter().enumerate() {
        if let Some(plot) = boat_hull_chart(p) {
            charts.push((
                format!("boat-hull-{k}"),
                format!(
                    "Boat hull model of {} on {}: predicted time against complexity, class \
                     parameters from the interpretation; the kernel's prediction and measurement",
                    p.kernel, p.device
                ),
                plot,
            ));
        }
    }
    let mut kernels: Vec<&str> = predictions.iter().map(|p| p.kernel.as_str()).collect();
    kernels.dedup();
    for (k, kernel) in kernels.iter().enumerate() {
        let on: Vec<&Predictions> = predictions.iter().filter(|p| p.kernel == *kernel).collect();
        let devices: Vec<QuadrantDevice> = on
            .iter()
            .filter_map(|p| {
                let q = p.quantitative.prediction.as_ref()?;
                Some(QuadrantDevice {
                    name: p.device.clone(),
                    bandwidth: q.device.b_mem,
                    throughput: q.adjusted_peak,
                })
            })
            .collect();
        let intensity = on
            .iter()
            .find_map(|p| p.quantitative.prediction.as_ref())
            .map(|q| q.kernel_intensity);
        if let Some(plot) = intensity.and_then(|i| quadrant_split_chart(kernel, i, &devices)) {
            charts.push((
                format!("quadrant-split-{k}"),
                format!(
                    "Quadrant split of {kernel}: each device at its bandwidth and adjusted \
                     throughput T'_op; devices above the kernel's line run it memory bound"
                ),
                plot,
            ));
        }
    }
    if let Some(plot) = energy_roofline_chart(&refs) {
        charts.push((
            "energy-roofline".into(),
            "Energy roofline: operations per joule against intensity, from ε_op, ε_mem and π₀ \
             fitted to the microbenchmarks' power"
                .into(),
            plot,
        ));
    }
    let file = serde_json::to_string_pretty(predictions)
        .ok()
        .map(|text| ("predictions.json".to_string(), text));
    crate::Section {
        heading: "Predicted time".into(),
        html: predictions_table(&refs),
        charts,
        file,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quadrant_split_puts_devices_on_either_side_of_the_kernel() {
        let devices = [
            QuadrantDevice { name: "gpu".into(), bandwidth: 900e9, throughput: 20e12 },
            QuadrantDevice { name: "cpu".into(), bandwidth: 100e9, throughput: 100e9 },
        ];
        let plot = quadrant_split_chart("k", 4.0, &devices).unwrap();
        // The GPU's balance (22 op/B) lies above I = 4, the CPU's (1) below.
        let legends: Vec<&str> = plot
            .markers
            .iter()
            .filter_map(|m| m.legend.as_deref())
            .collect();
        assert_eq!(
            legends,
            [
                "gpu: memory bound, 3600 GOPS/s",
                "cpu: compute bound, 100 GOPS/s"
            ]
        );
        assert_eq!(plot.markers[0].at, (900.0, 20000.0));
        // The guides end on the line: the GPU straight below at 4 · 900,
        // the CPU straight left at 100 / 4.
        assert_eq!(plot.lines[1].points, [(900.0, 20000.0), (900.0, 3600.0)]);
        assert_eq!(plot.lines[2].points, [(100.0, 100.0), (25.0, 100.0)]);
        // The half-line has slope I on linear axes: y = 4 x.
        for (x, y) in &plot.lines[0].points {
            assert!((y - 4.0 * x).abs() < 1e-9 * y);
        }
        assert!(plot.x_range.0 <= 25.0 && plot.x_range.1 >= 900.0);
        assert!(quadrant_split_chart("k", 0.0, &devices).is_none());
    }
}
