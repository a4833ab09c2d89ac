//! `clflow history --plot`: a kernel's metrics over its recorded entries,
//! drawn with clflow-report's renderer (its embedded font, its SVG output).
//!
//! Metrics of different units share one axis by being drawn relative to
//! their first recorded value: 1.0 is "as first recorded", 1.1 is 10 % more.

use crate::error::{HistoryError, Result};
use crate::store::Point;
use clflow_report::plot::{render_svg, Chart, Geometry};
use plotters::coord::Shift;
use plotters::prelude::*;

/// The family clflow-report registers its embedded font under (`render_svg`
/// registers it before drawing).
const FONT: &str = "sans-serif";

/// One metric on one device (or the interpreter's counts), in entry order.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    /// The value of the first entry, the 1.0 of the plot, as text with its
    /// unit (`802 ns`).
    pub first: f64,
    pub first_text: String,
    /// (entry number, value / first).
    pub points: Vec<(f64, f64)>,
}

/// The chart `--plot` writes.
#[derive(Debug, Clone)]
pub struct TrendPlot {
    pub title: String,
    pub entries: usize,
    pub series: Vec<Series>,
}

impl TrendPlot {
    /// A series per metric in `metrics` and device (entries without a device
    /// are the interpreter's counts), over `points` in order. Metrics no
    /// entry has, or whose first value is zero, are left out.
    pub fn new(kernel: &str, points: &[Point], metrics: &[String]) -> TrendPlot {
        let mut series: Vec<Series> = Vec::new();
        for metric in metrics {
            let mut sources: Vec<Option<&str>> =
                points.iter().map(|p| p.entry.device.as_deref()).collect();
            sources.dedup();
            sources.sort();
            sources.dedup();
            for source in sources {
                let mine: Vec<(usize, &Point)> = points
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.entry.device.as_deref() == source)
                    .filter(|(_, p)| p.metric(metric).is_some())
                    .collect();
                let values: Vec<(f64, f64)> = mine
                    .iter()
                    .filter_map(|(i, p)| p.metric(metric).map(|v| ((i + 1) as f64, v)))
                    .collect();
                let Some(&(_, first)) = values.first() else {
                    continue;
                };
                let first_text = mine[0].1.metric_text(metric).unwrap_or_default();
                if first == 0.0 || !first.is_finite() {
                    continue;
                }
                let label = match source {
                    Some(device) => format!("{metric} on {device}"),
                    None => metric.clone(),
                };
                series.push(Series {
                    label,
                    first,
                    first_text,
                    points: values.into_iter().map(|(x, v)| (x, v / first)).collect(),
                });
            }
        }
        TrendPlot {
            title: format!("{kernel}: trend over {} entries", points.len()),
            entries: points.len(),
            series,
        }
    }

    pub fn to_svg(&self) -> Result<String> {
        if self.series.is_empty() {
            return Err(HistoryError::Plot(
                "none of the chosen metrics has a non-zero value in these entries".into(),
            ));
        }
        render_svg(self)
            .map(|(svg, _)| svg)
            .map_err(HistoryError::Plot)
    }

    fn y_range(&self) -> (f64, f64) {
        let values = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1));
        let (lo, hi) = values.fold((1.0f64, 1.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let pad = ((hi - lo) * 0.1).max(0.05);
        // Room above the data for the legend, a line per series.
        let legend = (hi - lo + 2.0 * pad) * 0.09 * (self.series.len() as f64 + 0.5);
        ((lo - pad).max(0.0), hi + pad + legend)
    }
}

fn failed<E: std::fmt::Debug>(error: E) -> String {
    format!("{error:?}")
}

impl Chart for TrendPlot {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> std::result::Result<Option<Geometry>, String> {
        root.fill(&WHITE).map_err(failed)?;
        let (y_lo, y_hi) = self.y_range();
        let x_hi = (self.entries.max(2)) as f64 + 0.5;
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, 22))
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size(78)
            .build_cartesian_2d(0.5..x_hi, y_lo..y_hi)
            .map_err(failed)?;
        chart
            .configure_mesh()
            .x_desc("entry (oldest first)")
            .y_desc("relative to the first entry")
            .x_labels(self.entries.max(2) + 2)
            // Entries are whole numbers: no tick between two.
            .x_label_formatter(&|v| {
                if (v - v.round()).abs() < 1e-6 {
                    format!("{v:.0}")
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|v| format!("{v:.2}"))
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 17))
            .draw()
            .map_err(failed)?;
        for (index, series) in self.series.iter().enumerate() {
            let color = Palette99::pick(index).to_rgba();
            let style = ShapeStyle { color, filled: true, stroke_width: 2 };
            chart
                .draw_series(LineSeries::new(series.points.clone(), style))
                .map_err(failed)?
                .label(format!("{} (first: {})", series.label, series.first_text))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
            chart
                .draw_series(
                    series
                        .points
                        .iter()
                        .map(|p| Circle::new(*p, 4, style.filled())),
                )
                .map_err(failed)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font((FONT, 14))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(failed)?;
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Entry, Metric};

    fn point(id: i64, device: Option<&str>, w: f64) -> Point {
        let mut entry = Entry::new("check", "vadd");
        entry.device = device.map(str::to_string);
        entry.metrics.push(Metric::new("W.total", w, None));
        Point { id, recorded: String::new(), entry }
    }

    #[test]
    fn series_are_relative_to_their_first_value_per_device() {
        let points = [
            point(1, None, 100.0),
            point(2, Some("gpu"), 50.0),
            point(3, None, 110.0),
        ];
        let plot = TrendPlot::new("vadd", &points, &["W.total".to_string()]);
        assert_eq!(plot.series.len(), 2);
        let counts = &plot.series[0];
        assert_eq!(counts.label, "W.total");
        assert_eq!(counts.points, vec![(1.0, 1.0), (3.0, 1.1)]);
        assert_eq!(plot.series[1].label, "W.total on gpu");
        assert_eq!(plot.series[1].points, vec![(2.0, 1.0)]);
    }

    #[test]
    fn the_svg_carries_the_title_and_legend() {
        let points = [point(1, None, 100.0), point(2, None, 120.0)];
        let svg = TrendPlot::new("vadd", &points, &["W.total".to_string()])
            .to_svg()
            .unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let text: String = doc
            .descendants()
            .filter_map(|n| n.text())
            .collect::<Vec<_>>()
            .join("|");
        assert!(text.contains("vadd: trend over 2 entries"), "{text}");
        assert!(text.contains("W.total (first: 100)"), "{text}");
    }
}
