//! The PerDome plot (Tang, Hu, Barrett: Figures 2 and 3) as a heat map:
//! the performance upper bound of every split of an application between
//! two devices C and G, over the intensities of C's part (x, I_C) and G's
//! part (y, I_G) on log2 axes. Splits that cannot exist (both parts above
//! or both below the application's I) are grey; the partitions an analysis
//! found are marked and named, and the figures for C alone, G alone and
//! the perfect data partition are listed beside the plot.

use crate::error::ReportError;
use crate::font::FAMILY;
use crate::plot::{render_png, render_svg, Chart, Geometry};
use clflow_metrics::format_number;
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// Left of the colour bar: the plot and its axes.
const PLOT_WIDTH: u32 = 690;
/// The colour bar's strip.
const BAR_WIDTH: u32 = 110;
/// Partitions named in the plot; the rest are dots (a suite of n kernels
/// has 2^n − 2 code partitions).
const NAMED_POINTS: usize = 6;
const INK: RGBColor = RGBColor(30, 30, 30);
const NO_SPLIT: RGBColor = RGBColor(226, 226, 226);

/// What a marked point is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointKind {
    /// The perfect data partition, at (I, I).
    DataPartition,
    /// A code partition the analysis enumerated.
    CodePartition,
    /// The highest bound on the grid.
    Peak,
}

/// A partition placed on the plot.
#[derive(Debug, Clone)]
pub struct PerdomePoint {
    pub label: String,
    /// (I_C, I_G).
    pub at: (f64, f64),
    /// Its bound, in the plot's unit.
    pub value: f64,
    pub kind: PointKind,
}

/// The plot as data: the bound on a grid and what to mark.
#[derive(Debug, Clone)]
pub struct PerdomePlot {
    pub title: String,
    /// The application's I: the lines I_C = I and I_G = I split the plane.
    pub intensity: f64,
    /// Cell centres, ascending and evenly spaced in log2.
    pub i_c: Vec<f64>,
    pub i_g: Vec<f64>,
    /// `values[row][column]` at (i_c[column], i_g[row]), in `unit`; `None`
    /// where no split exists.
    pub values: Vec<Vec<Option<f64>>>,
    /// The unit of the values, e.g. "GOPS/s".
    pub unit: String,
    /// Code partitions best first, so the best are the ones named.
    pub points: Vec<PerdomePoint>,
    /// Lines of text beside the plot: the devices, the one-device bounds.
    pub notes: Vec<String>,
}

/// Writes `<stem>.svg` and `<stem>.png` into `dir`; returns their paths.
pub fn write_perdome(
    plot: &PerdomePlot,
    dir: &Path,
    stem: &str,
) -> Result<Vec<PathBuf>, ReportError> {
    std::fs::create_dir_all(dir)
        .map_err(|source| ReportError::Io { path: dir.to_path_buf(), source })?;
    let plot_error = |file: &Path| {
        let chart = file.display().to_string();
        move |message: String| ReportError::Plot { chart, message }
    };
    let svg_path = dir.join(format!("{stem}.svg"));
    let (svg, _) = render_svg(plot).map_err(plot_error(&svg_path))?;
    std::fs::write(&svg_path, svg)
        .map_err(|source| ReportError::Io { path: svg_path.clone(), source })?;
    let png_path = dir.join(format!("{stem}.png"));
    render_png(plot, &png_path).map_err(plot_error(&png_path))?;
    Ok(vec![svg_path, png_path])
}

fn font(size: u32) -> FontDesc<'static> {
    (FAMILY, size).into_font()
}

fn failed<E: std::fmt::Debug>(error: E) -> String {
    format!("{error:?}")
}

/// Viridis at nine stops: dark blue (low) through green to yellow (high),
/// readable in grey and by most colour-blind readers.
const VIRIDIS: [(u8, u8, u8); 9] = [
    (68, 1, 84),
    (71, 44, 122),
    (59, 81, 139),
    (44, 113, 142),
    (33, 144, 141),
    (39, 173, 129),
    (92, 200, 99),
    (170, 220, 50),
    (253, 231, 37),
];

/// The colour of `t` in 0..=1 on the viridis scale.
pub fn shade(t: f64) -> RGBColor {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let scaled = t * (VIRIDIS.len() - 1) as f64;
    let k = (scaled.floor() as usize).min(VIRIDIS.len() - 2);
    let f = scaled - k as f64;
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (a, b) = (VIRIDIS[k], VIRIDIS[k + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

impl PerdomePlot {
    /// The lowest and highest value on the grid (or of the points, for an
    /// empty grid), and never an empty range.
    fn value_range(&self) -> (f64, f64) {
        let grid = self.values.iter().flatten().flatten().copied();
        let points = self.points.iter().map(|p| p.value);
        let (lo, hi) = grid
            .chain(points)
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
        if lo > hi {
            (0.0, 1.0)
        } else if hi - lo < hi.abs() * 1e-9 + f64::MIN_POSITIVE {
            (lo * 0.9, hi * 1.1 + f64::MIN_POSITIVE)
        } else {
            (lo, hi)
        }
    }

    /// The cells' edges on one axis, in log2: half a step either side of
    /// each centre.
    fn edges(centres: &[f64]) -> Vec<f64> {
        let logs: Vec<f64> = centres.iter().map(|v| v.log2()).collect();
        let step = if logs.len() > 1 {
            (logs[logs.len() - 1] - logs[0]) / (logs.len() - 1) as f64
        } else {
            1.0
        };
        let mut edges: Vec<f64> = logs.iter().map(|l| l - step / 2.0).collect();
        edges.push(logs.last().copied().unwrap_or(0.0) + step / 2.0);
        edges
    }
}

impl Chart for PerdomePlot {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<Option<Geometry>, String> {
        root.fill(&WHITE).map_err(failed)?;
        let (plot_area, rest) = root.split_horizontally(PLOT_WIDTH);
        let (bar_area, notes_area) = rest.split_horizontally(BAR_WIDTH);
        let x_edges = Self::edges(&self.i_c);
        let y_edges = Self::edges(&self.i_g);
        let (x_lo, x_hi) = (x_edges[0], x_edges[x_edges.len() - 1]);
        let (y_lo, y_hi) = (y_edges[0], y_edges[y_edges.len() - 1]);
        let mut chart = ChartBuilder::on(&plot_area)
            .caption(&self.title, font(20))
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size(70)
            .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)
            .map_err(failed)?;
        let power_of_two = |v: &f64| format_number(v.exp2());
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(12)
            .y_labels(12)
            .x_label_formatter(&power_of_two)
            .y_label_formatter(&power_of_two)
            .x_desc("I_C: intensity of C's part (OPS/B, log2 axis)")
            .y_desc("I_G: intensity of G's part (OPS/B, log2 axis)")
            .label_style(font(14))
            .axis_desc_style(font(16))
            .draw()
            .map_err(failed)?;

        let (lo, hi) = self.value_range();
        let area = chart.plotting_area();
        area.draw(&Rectangle::new(
            [(x_lo, y_lo), (x_hi, y_hi)],
            NO_SPLIT.filled(),
        ))
        .map_err(failed)?;
        for (row, values) in self.values.iter().enumerate() {
            for (column, value) in values.iter().enumerate() {
                let Some(value) = value else { continue };
                let color = shade((value - lo) / (hi - lo));
                area.draw(&Rectangle::new(
                    [
                        (x_edges[column], y_edges[row]),
                        (x_edges[column + 1], y_edges[row + 1]),
                    ],
                    color.filled(),
                ))
                .map_err(failed)?;
            }
        }
        // The lines I_C = I and I_G = I: Lemma 2's borders.
        let i = self.intensity.log2();
        let guide = ShapeStyle { color: INK.mix(0.55), filled: false, stroke_width: 1 };
        for points in [vec![(i, y_lo), (i, y_hi)], vec![(x_lo, i), (x_hi, i)]] {
            area.draw(&plotters::element::DashedPathElement::new(
                points, 6, 5, guide,
            ))
            .map_err(failed)?;
        }
        let quadrant_note = "no split: both parts above I (Lemma 2)";
        let below_note = "no split: both parts below I";
        let note_style = font(14).color(&INK.mix(0.7));
        let corner = |x: f64, y: f64| chart.backend_coord(&(x, y));
        let (right, top) = corner(x_hi, y_hi);
        let (left, bottom) = corner(x_lo, y_lo);
        let (ix, iy) = corner(i, i);
        if right - ix > 200 && iy - top > 30 {
            root.draw(&Text::new(
                quadrant_note,
                (ix + 8, top + 8),
                note_style.clone(),
            ))
            .map_err(failed)?;
        }
        if ix - left > 170 && bottom - iy > 30 {
            root.draw(&Text::new(below_note, (left + 8, bottom - 24), note_style))
                .map_err(failed)?;
        }

        let inside = |(x, y): (f64, f64)| {
            x.is_finite() && y.is_finite() && x > 0.0 && y > 0.0 && {
                let (lx, ly) = (x.log2(), y.log2());
                (x_lo..=x_hi).contains(&lx) && (y_lo..=y_hi).contains(&ly)
            }
        };
        // Every point not a code partition is named, and the best code
        // partitions (they come best first); the rest are dots beneath.
        let mut code_partitions = 0;
        let (named, dots): (Vec<&PerdomePoint>, Vec<&PerdomePoint>) =
            self.points.iter().partition(|p| {
                p.kind != PointKind::CodePartition || {
                    code_partitions += 1;
                    code_partitions <= NAMED_POINTS
                }
            });
        for point in dots.iter().filter(|p| inside(p.at)) {
            let at = (point.at.0.log2(), point.at.1.log2());
            area.draw(&Circle::new(at, 3, WHITE.mix(0.9).filled()))
                .map_err(failed)?;
        }
        let named: Vec<&PerdomePoint> = named.into_iter().filter(|p| inside(p.at)).collect();
        // Labels keep clear of every named marker, not only of each other.
        let mut placed: Vec<Rect> = named
            .iter()
            .map(|p| {
                let (x, y) = chart.backend_coord(&(p.at.0.log2(), p.at.1.log2()));
                (x - 11, y - 11, x + 11, y + 11)
            })
            .collect();
        // Labels first, in order of importance (the data partition, the
        // peak, the best code partitions), so those sit nearest their marker;
        // markers after, the data partition last, on top of the rest.
        let mut by_importance = named.clone();
        by_importance.sort_by_key(|p| match p.kind {
            PointKind::DataPartition => 0,
            PointKind::Peak => 1,
            PointKind::CodePartition => 2,
        });
        for point in &by_importance {
            let anchor = chart.backend_coord(&(point.at.0.log2(), point.at.1.log2()));
            let text = format!(
                "{}: {} {}",
                point.label,
                format_number(point.value),
                self.unit
            );
            label(root, &text, anchor, (left, top, right, bottom), &mut placed)?;
        }
        for point in by_importance.iter().rev() {
            draw_marker(area, (point.at.0.log2(), point.at.1.log2()), point.kind)?;
        }

        draw_color_bar(&bar_area, (lo, hi), &self.unit, (top, bottom))?;
        draw_notes(&notes_area, &self.notes, top)?;
        let (x_pixels, y_pixels) = chart.plotting_area().get_pixel_range();
        Ok(Some(Geometry {
            x_pixels: (x_pixels.start, x_pixels.end),
            y_pixels: (y_pixels.start, y_pixels.end),
            x_range: (x_lo.exp2(), x_hi.exp2()),
            y_range: (y_lo.exp2(), y_hi.exp2()),
        }))
    }
}

/// A marker by kind: a diamond for the data partition, a triangle for the
/// grid's peak, a ring for a code partition; white-edged so it shows on any
/// shade.
fn draw_marker<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    at: CT::From,
    kind: PointKind,
) -> Result<(), String>
where
    CT::From: Clone + 'static,
{
    let edge = ShapeStyle { color: WHITE.to_rgba(), filled: false, stroke_width: 2 };
    match kind {
        PointKind::DataPartition => {
            let diamond = vec![(0, -10), (10, 0), (0, 10), (-10, 0)];
            area.draw(
                &(EmptyElement::at(at.clone()) + Polygon::new(diamond.clone(), RED.filled())),
            )
            .map_err(failed)?;
            let mut outline = diamond;
            outline.push((0, -10));
            area.draw(&(EmptyElement::at(at) + PathElement::new(outline, edge)))
                .map_err(failed)
        }
        PointKind::Peak => {
            let triangle = vec![(0, -10), (9, 6), (-9, 6)];
            area.draw(
                &(EmptyElement::at(at.clone()) + Polygon::new(triangle.clone(), WHITE.filled())),
            )
            .map_err(failed)?;
            let mut outline = triangle;
            outline.push((0, -10));
            let ink = ShapeStyle { color: INK.to_rgba(), filled: false, stroke_width: 2 };
            area.draw(&(EmptyElement::at(at) + PathElement::new(outline, ink)))
                .map_err(failed)
        }
        PointKind::CodePartition => {
            area.draw(&Circle::new(at.clone(), 7, RGBColor(255, 127, 14).filled()))
                .map_err(failed)?;
            area.draw(&Circle::new(at, 7, edge)).map_err(failed)
        }
    }
}

type Rect = (i32, i32, i32, i32);

fn overlaps(a: Rect, b: Rect) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// Writes a label on a white box next to its marker at the first place
/// that overlaps no marker or earlier label and stays inside the plot.
fn label<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    text: &str,
    (ax, ay): (i32, i32),
    (left, top, right, bottom): Rect,
    placed: &mut Vec<Rect>,
) -> Result<(), String> {
    let style = font(14).color(&INK);
    let (w, h) = root.estimate_text_size(text, &style).map_err(failed)?;
    let (w, h) = (w as i32 + 8, h as i32 + 4);
    // Right of the marker, then left, each at its height first and then a
    // row up or down at a time; then centred above or below.
    let rows = [0, -1, 1, -2, 2, -3, 3];
    let candidates: Vec<(i32, i32)> = [ax + 13, ax - 13 - w]
        .iter()
        .flat_map(|&x| rows.iter().map(move |&r| (x, ay - h / 2 + r * (h + 2))))
        .chain([(ax - w / 2, ay - 14 - h), (ax - w / 2, ay + 14)])
        .collect();
    let fits = |(x, y): (i32, i32)| {
        let rect = (x, y, x + w, y + h);
        x >= left
            && x + w <= right
            && y >= top
            && y + h <= bottom
            && !placed.iter().any(|r| overlaps(*r, rect))
    };
    let (x, y) = candidates.iter().copied().find(|c| fits(*c)).unwrap_or((
        (ax + 13).clamp(left, (right - w).max(left)),
        (ay - h / 2).clamp(top, (bottom - h).max(top)),
    ));
    placed.push((x, y, x + w, y + h));
    // A label moved off its marker's side gets a leader line to it.
    if (x, y) != candidates[0] {
        let nearest = (ax.clamp(x, x + w), ay.clamp(y, y + h));
        root.draw(&PathElement::new(vec![(ax, ay), nearest], INK.mix(0.6)))
            .map_err(failed)?;
    }
    root.draw(&Rectangle::new(
        [(x, y), (x + w, y + h)],
        WHITE.mix(0.85).filled(),
    ))
    .map_err(failed)?;
    root.draw(&Text::new(text.to_string(), (x + 4, y + 2), style))
        .map_err(failed)
}

/// The value scale: a vertical viridis bar from `lo` (bottom) to `hi`
/// (top), level with the plot, with five labelled ticks.
fn draw_color_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (lo, hi): (f64, f64),
    unit: &str,
    (top, bottom): (i32, i32),
) -> Result<(), String> {
    let (x0, x1) = (12, 36);
    let steps = (bottom - top).max(1);
    for k in 0..steps {
        let t = 1.0 - k as f64 / steps as f64;
        area.draw(&Rectangle::new(
            [(x0, top + k), (x1, top + k + 1)],
            shade(t).filled(),
        ))
        .map_err(failed)?;
    }
    area.draw(&Rectangle::new(
        [(x0, top), (x1, bottom)],
        INK.stroke_width(1),
    ))
    .map_err(failed)?;
    for k in 0..5 {
        let t = k as f64 / 4.0;
        let y = bottom - (t * (bottom - top) as f64).round() as i32;
        area.draw(&PathElement::new(vec![(x1, y), (x1 + 5, y)], INK))
            .map_err(failed)?;
        area.draw(&Text::new(
            format_number(lo + t * (hi - lo)),
            (x1 + 8, y - 7),
            font(13).color(&INK),
        ))
        .map_err(failed)?;
    }
    area.draw(&Text::new(
        format!("bound ({unit})"),
        (4, top - 26),
        font(14).color(&INK),
    ))
    .map_err(failed)
}

/// `text`, cut short with an ellipsis where it is wider than `width` pixels.
fn fit<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    width: i32,
) -> Result<String, String> {
    let style = font(14).into_text_style(area);
    let wide = |t: &str| -> Result<bool, String> {
        let (w, _) = area.estimate_text_size(t, &style).map_err(failed)?;
        Ok(w as i32 > width)
    };
    if !wide(text)? {
        return Ok(text.to_string());
    }
    let mut chars: Vec<char> = text.chars().collect();
    while !chars.is_empty() {
        chars.pop();
        let shorter = format!("{}…", chars.iter().collect::<String>().trim_end());
        if !wide(&shorter)? {
            return Ok(shorter);
        }
    }
    Ok(String::new())
}

/// The notes beside the plot, one line each, with the marker legend.
fn draw_notes<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    notes: &[String],
    top: i32,
) -> Result<(), String> {
    let mut y = top;
    let row = 21;
    let width = area.dim_in_pixel().0 as i32 - 12;
    for note in notes {
        let text = fit(area, note, width)?;
        area.draw(&Text::new(text, (6, y), font(14).color(&INK)))
            .map_err(failed)?;
        y += row;
    }
    y += row / 2;
    let legend = [
        (PointKind::DataPartition, "perfect data partition (I, I)"),
        (PointKind::CodePartition, "code partition"),
        (PointKind::Peak, "highest bound of any split"),
    ];
    for (kind, text) in legend {
        draw_marker(area, (20, y + 9), kind)?;
        area.draw(&Text::new(text, (40, y), font(14).color(&INK)))
            .map_err(failed)?;
        y += row + 4;
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::plot::{HEIGHT, WIDTH};

    /// A small plot: 9 × 9 cells around I = 2, the lower-right and
    /// upper-left quadrants valued.
    pub(crate) fn plot() -> PerdomePlot {
        let axis: Vec<f64> = (-4..=4).map(|k| 2f64 * 2f64.powf(k as f64 / 2.0)).collect();
        let values = axis
            .iter()
            .map(|&i_g| {
                axis.iter()
                    .map(|&i_c| {
                        ((i_c < 2.0 && i_g > 2.0) || (i_c > 2.0 && i_g < 2.0))
                            .then(|| 100.0 + 10.0 * (i_g / i_c).log2())
                    })
                    .collect()
            })
            .collect();
        PerdomePlot {
            title: "PerDome test".into(),
            intensity: 2.0,
            i_c: axis.clone(),
            i_g: axis,
            values,
            unit: "GOPS/s".into(),
            points: vec![
                PerdomePoint {
                    label: "p-DP".into(),
                    at: (2.0, 2.0),
                    value: 120.0,
                    kind: PointKind::DataPartition,
                },
                PerdomePoint {
                    label: "CP {a | b}".into(),
                    at: (0.5, 4.0),
                    value: 140.0,
                    kind: PointKind::CodePartition,
                },
            ],
            notes: vec!["C: cpu".into(), "G: gpu".into()],
        }
    }

    #[test]
    fn the_scale_runs_from_dark_to_yellow() {
        assert_eq!(shade(0.0), RGBColor(68, 1, 84));
        assert_eq!(shade(1.0), RGBColor(253, 231, 37));
        assert_eq!(shade(f64::NAN), shade(0.0));
        assert_eq!(shade(0.5), RGBColor(33, 144, 141));
    }

    #[test]
    fn the_svg_names_the_partitions_and_the_png_shades_the_valued_cells() {
        let dir = tempfile::tempdir().unwrap();
        let plot = plot();
        let files = write_perdome(&plot, dir.path(), "perdome").unwrap();
        assert_eq!(files.len(), 2);
        let svg = std::fs::read_to_string(&files[0]).unwrap();
        roxmltree::Document::parse(&svg).unwrap();
        assert!(svg.contains("p-DP: 120 GOPS/s"), "marker label");
        assert!(svg.contains("CP {a | b}: 140 GOPS/s"));
        assert!(svg.contains("no split: both parts above I"));

        let (_, geometry) = render_svg(&plot).unwrap();
        let geometry = geometry.unwrap();
        let decoder = png::Decoder::new(std::fs::File::open(&files[1]).unwrap());
        let mut reader = decoder.read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut pixels).unwrap();
        assert_eq!((info.width, info.height), (WIDTH, HEIGHT));
        let channels = info.line_size / info.width as usize;
        let at = |point: (f64, f64)| {
            let (x, y) = geometry.pixel(point);
            let offset = y as usize * info.line_size + x as usize * channels;
            RGBColor(pixels[offset], pixels[offset + 1], pixels[offset + 2])
        };
        // Both parts above I: grey. A valued cell away from the markers: a shade.
        assert_eq!(at((7.0, 7.0)), NO_SPLIT);
        let valued = at((5.5, 0.6));
        assert_ne!(valued, NO_SPLIT);
        assert_ne!(valued, WHITE);
    }
}
