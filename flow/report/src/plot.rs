//! Charts as data (`LogPlot`, `BarPlot`) and the one renderer that draws
//! them onto any plotters backend, so SVG and PNG show the same picture.

use crate::font::{ensure_registered, FAMILY};
use clflow_metrics::format_number;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

pub const WIDTH: u32 = 1120;
pub const HEIGHT: u32 = 660;
/// The strip right of a log plot that holds its legend.
const LEGEND_WIDTH: u32 = 340;
const TAG_SIZE: u32 = 15;

/// The power of ten at or below `v`.
pub fn decade_floor(v: f64) -> f64 {
    10f64.powf(v.log10().floor())
}

/// The power of ten at or above `v`.
pub fn decade_ceil(v: f64) -> f64 {
    10f64.powf(v.log10().ceil())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stroke {
    Solid,
    Dashed,
    Dotted,
}

/// A polyline in data coordinates, with its legend entry.
#[derive(Debug, Clone)]
pub struct Line {
    pub points: Vec<(f64, f64)>,
    pub color: RGBColor,
    /// Datasheet ceilings are drawn faint.
    pub faint: bool,
    pub stroke: Stroke,
    pub width: u32,
    pub legend: Option<String>,
}

/// Where a tag sits relative to its point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    AboveLeft,
    AboveRight,
    BelowLeft,
    BelowRight,
}

/// Text written inside the plot next to a point (a ceiling's value, a wall's I).
#[derive(Debug, Clone)]
pub struct Tag {
    pub text: String,
    pub at: (f64, f64),
    pub place: Place,
    pub color: RGBColor,
}

#[derive(Debug, Clone)]
pub struct Marker {
    pub at: (f64, f64),
    pub color: RGBColor,
    pub legend: Option<String>,
}

/// What a log axis's values are, which decides its ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Axis {
    /// Plain numbers: ticks at powers of ten.
    #[default]
    Number,
    /// Bytes: ticks at powers of two, written `16 KiB`, `4 MiB`.
    Bytes,
}

impl Axis {
    /// The bold ticks across `lo..hi` and the faint grid lines between them.
    fn key_points(self, (lo, hi): (f64, f64)) -> (Vec<f64>, Vec<f64>) {
        match self {
            Axis::Number => {
                let (mut bold, mut light) = (Vec::new(), Vec::new());
                let within = |v: f64| v >= lo * 0.999_999 && v <= hi * 1.000_001;
                for e in lo.log10().floor() as i32..=hi.log10().ceil() as i32 {
                    let decade = 10f64.powi(e);
                    bold.extend(Some(decade).filter(|v| within(*v)));
                    light.extend((2..10).map(|k| decade * k as f64).filter(|v| within(*v)));
                }
                (bold, light)
            }
            Axis::Bytes => {
                let (first, last) = (lo.log2().ceil() as i32, hi.log2().floor() as i32);
                // At most about ten ticks: every power of two, or of 4, 8 ...
                let step = ((last - first) / 10 + 1).max(1);
                let powers = |keep: &dyn Fn(i32) -> bool| {
                    (first..=last)
                        .filter(|p| keep(*p))
                        .map(|p| 2f64.powi(p))
                        .collect()
                };
                (powers(&|p| p % step == 0), powers(&|p| p % step != 0))
            }
        }
    }

    fn label(self, v: f64) -> String {
        match self {
            Axis::Number => format_number(v),
            Axis::Bytes => binary_size(v),
        }
    }
}

/// `512 B`, `16 KiB`, `1.5 MiB`: a byte count as an axis writes it.
pub fn binary_size(bytes: f64) -> String {
    let mut value = bytes;
    for unit in ["B", "KiB", "MiB", "GiB", "TiB"] {
        if value < 1024.0 || unit == "TiB" {
            return format!("{} {unit}", format_number(value));
        }
        value /= 1024.0;
    }
    unreachable!("TiB ends the loop")
}

/// A log-log chart: rooflines and what the kernels reached.
#[derive(Debug, Clone)]
pub struct LogPlot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_range: (f64, f64),
    pub y_range: (f64, f64),
    /// What the x values are (numbers, or bytes).
    pub x_axis: Axis,
    pub lines: Vec<Line>,
    pub markers: Vec<Marker>,
    pub tags: Vec<Tag>,
}

#[derive(Debug, Clone)]
pub struct Bar {
    pub name: String,
    pub value: f64,
    pub color: RGBColor,
    /// Written above the bar.
    pub text: String,
}

/// A bar chart on a linear axis from zero.
#[derive(Debug, Clone)]
pub struct BarPlot {
    pub title: String,
    pub y_label: String,
    pub bars: Vec<Bar>,
}

/// Where the plotting area of a rendered log plot lies, in pixels: what a
/// test needs to find a point in the image.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry {
    pub x_pixels: (i32, i32),
    pub y_pixels: (i32, i32),
    pub x_range: (f64, f64),
    pub y_range: (f64, f64),
}

impl Geometry {
    /// The pixel a data point maps to (log axes; y grows downwards).
    pub fn pixel(&self, (x, y): (f64, f64)) -> (f64, f64) {
        let fraction = |v: f64, (lo, hi): (f64, f64)| (v.ln() - lo.ln()) / (hi.ln() - lo.ln());
        let (x0, x1) = self.x_pixels;
        let (y0, y1) = self.y_pixels;
        (
            x0 as f64 + fraction(x, self.x_range) * (x1 - x0) as f64,
            y1 as f64 - fraction(y, self.y_range) * (y1 - y0) as f64,
        )
    }
}

/// Something the renderer can draw.
pub trait Chart {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<Option<Geometry>, String>;
}

/// Renders to SVG text.
pub fn render_svg(chart: &impl Chart) -> Result<(String, Option<Geometry>), String> {
    ensure_registered()?;
    let mut svg = String::new();
    let geometry = {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let geometry = chart.draw(&root)?;
        root.present().map_err(|e| e.to_string())?;
        geometry
    };
    Ok((svg, geometry))
}

/// Renders to a PNG file at `path`.
pub fn render_png(chart: &impl Chart, path: &Path) -> Result<(), String> {
    ensure_registered()?;
    let root = BitMapBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
    chart.draw(&root)?;
    root.present().map_err(|e| e.to_string())
}

fn font(size: u32) -> FontDesc<'static> {
    (FAMILY, size).into_font()
}

fn failed<E: std::fmt::Debug>(error: E) -> String {
    format!("{error:?}")
}

fn line_style(line: &Line) -> ShapeStyle {
    let color = if line.faint {
        line.color.mix(0.35)
    } else {
        line.color.to_rgba()
    };
    ShapeStyle { color, filled: false, stroke_width: line.width }
}

/// Draws a polyline in any coordinate system, solid or dashed.
fn draw_line<DB: DrawingBackend, CT: plotters::coord::CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    points: Vec<CT::From>,
    stroke: Stroke,
    style: ShapeStyle,
) -> Result<(), String>
where
    CT::From: Clone + 'static,
{
    match stroke {
        Stroke::Solid => area.draw(&PathElement::new(points, style)),
        Stroke::Dashed => area.draw(&plotters::element::DashedPathElement::new(
            points, 12, 7, style,
        )),
        Stroke::Dotted => area.draw(&plotters::element::DashedPathElement::new(
            points, 3, 5, style,
        )),
    }
    .map_err(failed)
}

impl Chart for LogPlot {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<Option<Geometry>, String> {
        root.fill(&WHITE).map_err(failed)?;
        let (plot_area, legend_area) = root.split_horizontally(WIDTH - LEGEND_WIDTH);
        let (x_lo, x_hi) = self.x_range;
        let (y_lo, y_hi) = self.y_range;
        let (bold, light) = self.x_axis.key_points(self.x_range);
        let x_coord = (x_lo..x_hi)
            .log_scale()
            .with_key_points(bold)
            .with_light_points(light);
        let mut chart = ChartBuilder::on(&plot_area)
            .caption(&self.title, font(22))
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size(78)
            .build_cartesian_2d(x_coord, (y_lo..y_hi).log_scale())
            .map_err(failed)?;
        let x_axis = self.x_axis;
        chart
            .configure_mesh()
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .x_label_formatter(&|v| x_axis.label(*v))
            .y_label_formatter(&|v| format_number(*v))
            .label_style(font(15))
            .axis_desc_style(font(17))
            .bold_line_style(RGBColor(214, 214, 214))
            .light_line_style(RGBColor(240, 240, 240))
            .draw()
            .map_err(failed)?;
        for line in &self.lines {
            draw_line(
                chart.plotting_area(),
                line.points.clone(),
                line.stroke,
                line_style(line),
            )?;
        }
        for marker in &self.markers {
            chart
                .plotting_area()
                .draw(&Circle::new(marker.at, 7, marker.color.filled()))
                .map_err(failed)?;
        }
        let (x_pixels, y_pixels) = chart.plotting_area().get_pixel_range();
        let bounds = (x_pixels.start, y_pixels.start, x_pixels.end, y_pixels.end);
        let mut placed = Vec::new();
        for tag in &self.tags {
            let anchor = chart.backend_coord(&tag.at);
            place_tag(root, tag, anchor, bounds, &mut placed)?;
        }
        draw_legend(&legend_area, &self.lines, &self.markers)?;
        Ok(Some(Geometry {
            x_pixels: (x_pixels.start, x_pixels.end),
            y_pixels: (y_pixels.start, y_pixels.end),
            x_range: self.x_range,
            y_range: self.y_range,
        }))
    }
}

type Rect = (i32, i32, i32, i32);

fn overlaps(a: Rect, b: Rect) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// Writes a tag next to its anchor, inside the plot, moving it up (then
/// down) a line at a time until it overlaps no tag written before.
fn place_tag<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    tag: &Tag,
    (ax, ay): (i32, i32),
    (left, top, right, bottom): Rect,
    placed: &mut Vec<Rect>,
) -> Result<(), String> {
    let style = font(TAG_SIZE).color(&tag.color);
    let (w, h) = root.estimate_text_size(&tag.text, &style).map_err(failed)?;
    let (w, h) = (w as i32, h as i32);
    let x = match tag.place {
        Place::AboveLeft | Place::BelowLeft => ax - w - 6,
        Place::AboveRight | Place::BelowRight => ax + 6,
    }
    .clamp(left + 2, (right - w - 2).max(left + 2));
    let y = match tag.place {
        Place::AboveLeft | Place::AboveRight => ay - h - 4,
        Place::BelowLeft | Place::BelowRight => ay + 5,
    };
    let start = y.clamp(top + 2, (bottom - h - 2).max(top + 2));
    let candidates = (0..12)
        .map(|step| start - step * (h + 3))
        .chain((1..12).map(|step| start + step * (h + 3)))
        .filter(|y| *y >= top + 2 && *y + h <= bottom - 2);
    let mut y = start;
    for candidate in candidates {
        if !placed
            .iter()
            .any(|r| overlaps(*r, (x, candidate, x + w, candidate + h)))
        {
            y = candidate;
            break;
        }
    }
    placed.push((x, y, x + w, y + h));
    root.draw(&Text::new(tag.text.clone(), (x, y), style))
        .map_err(failed)
}

/// The legend, in its own strip so it never covers the plot: a sample of
/// each line's colour and stroke, or the marker, and its text, wrapped to
/// the strip (long device names are never cut off).
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    lines: &[Line],
    markers: &[Marker],
) -> Result<(), String> {
    const ROW: i32 = 24;
    const TEXT_X: i32 = 60;
    let width = area.dim_in_pixel().0 as i32 - TEXT_X - 8;
    let mut y = 60;
    // Continuation lines come 17 pixels apart; the next entry a row
    // below the last.
    let entry = |y: &mut i32, text: &str| -> Result<(), String> {
        let top = *y;
        for (k, part) in wrap(area, text, width)?.into_iter().enumerate() {
            *y = top + 17 * k as i32;
            area.draw(&Text::new(part, (TEXT_X, *y), font(14)))
                .map_err(failed)?;
        }
        *y += ROW;
        Ok(())
    };
    for line in lines {
        let Some(text) = &line.legend else { continue };
        let sample = vec![(8, y + 9), (52, y + 9)];
        draw_line(area, sample, line.stroke, line_style(line))?;
        entry(&mut y, text)?;
    }
    for marker in markers {
        let Some(text) = &marker.legend else { continue };
        area.draw(&Circle::new((30, y + 9), 6, marker.color.filled()))
            .map_err(failed)?;
        entry(&mut y, text)?;
    }
    Ok(())
}

/// `text` cut at spaces into lines no wider than `width` pixels (a word
/// wider than that keeps a line of its own).
fn wrap<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    width: i32,
) -> Result<Vec<String>, String> {
    let style = font(14).into_text_style(area);
    let fits = |candidate: &str| -> Result<bool, String> {
        let (w, _) = area.estimate_text_size(candidate, &style).map_err(failed)?;
        Ok(w as i32 <= width)
    };
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(last) if fits(&format!("{last} {word}"))? => {
                last.push(' ');
                last.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    Ok(lines)
}

impl Chart for BarPlot {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<Option<Geometry>, String> {
        root.fill(&WHITE).map_err(failed)?;
        let count = self.bars.len() as u32;
        let top = self.bars.iter().map(|b| b.value).fold(0.0, f64::max);
        let y_hi = if top > 0.0 { top * 1.2 } else { 1.0 };
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, font(22))
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size(78)
            .build_cartesian_2d((0..count.saturating_sub(1)).into_segmented(), 0.0..y_hi)
            .map_err(failed)?;
        let names: Vec<String> = self.bars.iter().map(|b| b.name.clone()).collect();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(self.bars.len().max(1))
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => names.get(*i as usize).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .y_desc(&self.y_label)
            .y_label_formatter(&|v| format_number(*v))
            .label_style(font(15))
            .axis_desc_style(font(17))
            .bold_line_style(RGBColor(214, 214, 214))
            .light_line_style(RGBColor(240, 240, 240))
            .draw()
            .map_err(failed)?;
        for (index, bar) in self.bars.iter().enumerate() {
            let index = index as u32;
            let mut rectangle = Rectangle::new(
                [
                    (SegmentValue::Exact(index), 0.0),
                    (SegmentValue::Exact(index + 1), bar.value),
                ],
                bar.color.filled(),
            );
            rectangle.set_margin(0, 0, 30, 30);
            chart
                .draw_series(std::iter::once(rectangle))
                .map_err(failed)?;
            let (cx, cy) = chart.backend_coord(&(SegmentValue::CenterOf(index), bar.value));
            let style = font(16).into_text_style(root);
            let (w, h) = root.estimate_text_size(&bar.text, &style).map_err(failed)?;
            root.draw(&Text::new(
                bar.text.clone(),
                (cx - w as i32 / 2, cy - h as i32 - 6),
                style,
            ))
            .map_err(failed)?;
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_axes_tick_at_powers_of_two_written_in_binary_units() {
        let (bold, light) = Axis::Bytes.key_points((1024.0, 64.0 * 1024.0 * 1024.0));
        let labels: Vec<String> = bold.iter().map(|v| Axis::Bytes.label(*v)).collect();
        assert_eq!(
            labels,
            [
                "1 KiB", "4 KiB", "16 KiB", "64 KiB", "256 KiB", "1 MiB", "4 MiB", "16 MiB",
                "64 MiB"
            ]
        );
        assert!(light.contains(&2048.0));
        assert_eq!(binary_size(1.5 * 1024.0 * 1024.0), "1.5 MiB");
        let (decades, light) = Axis::Number.key_points((0.01, 10.0));
        let labels: Vec<String> = decades.iter().map(|v| Axis::Number.label(*v)).collect();
        assert_eq!(labels, ["0.01", "0.1", "1", "10"]);
        assert_eq!(light.len(), 3 * 8);
    }
}
