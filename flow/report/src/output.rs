//! Writing a report: everything is rendered into a staging directory inside
//! the output directory first, and only when all of it exists are the files
//! renamed into place. A failure leaves the earlier report as it was; files
//! the report does not write are never touched.

use crate::charts::{comparison_roofline, device_roofline, energy_bars, Roof};
use crate::error::ReportError;
use crate::html::{self, ChartFile};
use crate::perdome::PerdomePlot;
use crate::plot::{render_png, render_svg, Chart, Geometry, LogPlot};
use crate::tables::metrics_csv;
use clflow_metrics::{results_document, Metrics, ResultSet};
use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, DrawingBackend};
use std::path::{Path, PathBuf};

/// What a report wrote.
#[derive(Debug, Clone)]
pub struct Written {
    pub dir: PathBuf,
    /// File names, relative to `dir`, in page order.
    pub files: Vec<String>,
}

/// A file-name-safe form of a device name: `tesla-k20`.
fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        "device".into()
    } else {
        out
    }
}

struct Staging {
    dir: tempfile::TempDir,
    files: Vec<String>,
}

impl Staging {
    fn write(&mut self, name: &str, bytes: &[u8]) -> Result<(), ReportError> {
        let path = self.dir.path().join(name);
        std::fs::write(&path, bytes).map_err(|source| ReportError::Io { path, source })?;
        self.files.push(name.to_string());
        Ok(())
    }

    /// Renders a chart as SVG and PNG; returns it for the page.
    fn chart(
        &mut self,
        stem: String,
        caption: String,
        chart: &impl Chart,
    ) -> Result<ChartFile, ReportError> {
        let plot_error =
            |message: String| ReportError::Plot { chart: format!("{stem}.svg"), message };
        let (svg, _) = render_svg(chart).map_err(plot_error)?;
        self.write(&format!("{stem}.svg"), svg.as_bytes())?;
        let png = format!("{stem}.png");
        render_png(chart, &self.dir.path().join(&png))
            .map_err(|message| ReportError::Plot { chart: png.clone(), message })?;
        self.files.push(png);
        Ok(ChartFile { stem, caption, svg })
    }
}

/// The charts of a set, in the paper's order: Figures 3 and 4, then each
/// device's Figures 6–11, then Figure 12.
fn draw_charts(
    staging: &mut Staging,
    set: &ResultSet,
    metrics: &[Metrics],
) -> Result<Vec<ChartFile>, ReportError> {
    let mut charts = Vec::new();
    let roofs = [
        (Roof::Performance, "roofline", "Performance roofline"),
        (
            Roof::PerWatt,
            "perf-per-watt",
            "Performance-per-watt roofline (eq. 8)",
        ),
    ];
    for (roof, stem, what) in roofs {
        if let Some(plot) = comparison_roofline(roof, set, metrics) {
            let caption =
                format!("{what} of every device: integer peaks solid, floating-point dashed");
            charts.push(staging.chart(format!("{stem}-all"), caption, &plot)?);
        }
    }
    let mut stems: Vec<String> = Vec::new();
    for device in &set.devices {
        let mut stem = slug(&device.name);
        while stems.contains(&stem) {
            stem.push('x');
        }
        stems.push(stem.clone());
        let on_device: Vec<&Metrics> = metrics.iter().filter(|m| m.device == device.name).collect();
        for (roof, prefix, what) in roofs {
            if let Some(plot) = device_roofline(roof, device, &on_device) {
                let caption = format!(
                    "{what} of {}: measured ceilings dark, datasheet faint; each kernel's \
                     intensity wall and what it achieved",
                    device.name
                );
                charts.push(staging.chart(format!("{prefix}-{stem}"), caption, &plot)?);
            }
        }
    }
    if let Some(plot) = energy_bars(set, metrics) {
        let caption = "Energy of each kernel run, E = T·P (eq. 2)".to_string();
        charts.push(staging.chart("energy".into(), caption, &plot)?);
    }
    Ok(charts)
}

/// A part of the report beyond the result set (the predictions): a heading,
/// an HTML block, its charts, and a file of its own.
#[derive(Debug, Clone, Default)]
pub struct Section {
    pub heading: String,
    pub html: String,
    /// (file stem, caption, chart).
    pub charts: Vec<(String, String, LogPlot)>,
    /// (file name, contents), e.g. `predictions.json`.
    pub file: Option<(String, String)>,
}

/// A chart a [`ReportSection`] draws: a log-log plot, as most sections
/// have, or the PerDome heat map.
#[derive(Debug, Clone)]
pub enum SectionChart {
    Log(LogPlot),
    Perdome(PerdomePlot),
}

impl Chart for SectionChart {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<Option<Geometry>, String> {
        match self {
            SectionChart::Log(plot) => plot.draw(root),
            SectionChart::Perdome(plot) => plot.draw(root),
        }
    }
}

/// The general form of a [`Section`]: charts of any kind and any number of
/// files of its own. Everything it holds is written with the rest of the
/// report, all or nothing.
#[derive(Debug, Clone, Default)]
pub struct ReportSection {
    pub heading: String,
    pub html: String,
    /// (file stem, caption, chart): `<stem>.svg` and `<stem>.png`.
    pub charts: Vec<(String, String, SectionChart)>,
    /// (file name, contents), e.g. `split.json`.
    pub files: Vec<(String, String)>,
}

impl From<Section> for ReportSection {
    fn from(section: Section) -> Self {
        ReportSection {
            heading: section.heading,
            html: section.html,
            charts: section
                .charts
                .into_iter()
                .map(|(stem, caption, plot)| (stem, caption, SectionChart::Log(plot)))
                .collect(),
            files: section.file.into_iter().collect(),
        }
    }
}

/// Writes the whole report for `set` into `out` (created if missing).
pub fn write_report(set: &ResultSet, out: &Path) -> Result<Written, ReportError> {
    write_report_with(set, out, &[])
}

/// [`write_report`], with `sections` after the charts.
pub fn write_report_with(
    set: &ResultSet,
    out: &Path,
    sections: &[Section],
) -> Result<Written, ReportError> {
    let sections: Vec<ReportSection> = sections.iter().cloned().map(Into::into).collect();
    write_report_sections(set, out, &sections)
}

/// Checks, before any long work, that files can be written to `out`, the
/// directory `flag` names: it exists or can be made, and takes a new file.
/// Nothing is left behind but the directory.
pub fn check_writable(out: &Path, flag: &str) -> Result<(), ReportError> {
    let io = |source| ReportError::Unwritable {
        path: out.to_path_buf(),
        flag: flag.to_string(),
        source,
    };
    if out.exists() && !out.is_dir() {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "a file is where the directory goes",
        )));
    }
    std::fs::create_dir_all(out).map_err(io)?;
    tempfile::Builder::new()
        .prefix(".clflow-write-check")
        .tempfile_in(out)
        .map(drop)
        .map_err(io)
}

/// [`write_report_with`] for sections of any kind of chart.
pub fn write_report_sections(
    set: &ResultSet,
    out: &Path,
    sections: &[ReportSection],
) -> Result<Written, ReportError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ReportError::Io { path, source }
    };
    std::fs::create_dir_all(out).map_err(io(out))?;
    let dir = tempfile::Builder::new()
        .prefix(".clflow-report-")
        .tempdir_in(out)
        .map_err(io(out))?;
    let mut staging = Staging { dir, files: Vec::new() };

    let metrics = set.evaluate();
    let charts = draw_charts(&mut staging, set, &metrics)?;
    staging.write("metrics.csv", &metrics_csv(&metrics)?)?;
    let json = serde_json::to_string_pretty(&results_document(set, &metrics))
        .map_err(|e| ReportError::Encode { what: "results.json".into(), message: e.to_string() })?;
    staging.write("results.json", json.as_bytes())?;
    let mut parts = Vec::new();
    for section in sections {
        let mut files = Vec::new();
        for (stem, caption, plot) in &section.charts {
            files.push(staging.chart(stem.clone(), caption.clone(), plot)?);
        }
        for (name, text) in &section.files {
            staging.write(name, text.as_bytes())?;
        }
        parts.push(html::Part {
            heading: &section.heading,
            html: &section.html,
            charts: files,
        });
    }
    staging.write(
        "index.html",
        html::page(set, &metrics, &charts, &parts).as_bytes(),
    )?;

    // Everything is rendered: check every target can take its file before
    // moving any, so that an obstacle leaves the earlier report whole.
    for name in &staging.files {
        let target = out.join(name);
        if target.is_dir() {
            return Err(ReportError::Obstacle { path: target });
        }
    }
    for name in &staging.files {
        let target = out.join(name);
        std::fs::rename(staging.dir.path().join(name), &target).map_err(io(&target))?;
    }
    Ok(Written { dir: out.to_path_buf(), files: staging.files })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_writes_its_perdome_chart_and_files_with_the_report() {
        let dir = tempfile::tempdir().unwrap();
        let set = ResultSet { title: Some("split test".into()), ..ResultSet::default() };
        let section = ReportSection {
            heading: "CPU+GPU split (PerDome)".into(),
            html: "<p>bounds</p>\n".into(),
            charts: vec![(
                "perdome".into(),
                "The PerDome plot".into(),
                SectionChart::Perdome(crate::perdome::tests::plot()),
            )],
            files: vec![
                ("split.json".into(), "{\"fraction\": 0.5}".into()),
                ("notes.txt".into(), "two files".into()),
            ],
        };
        let written = write_report_sections(&set, dir.path(), &[section]).unwrap();
        for name in ["perdome.svg", "perdome.png", "split.json", "notes.txt"] {
            assert!(written.files.iter().any(|f| f == name), "{name} listed");
            assert!(dir.path().join(name).is_file(), "{name} written");
        }
        assert_eq!(
            std::fs::read_to_string(dir.path().join("split.json")).unwrap(),
            "{\"fraction\": 0.5}"
        );
        let page = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
        assert!(page.contains("<h2>CPU+GPU split (PerDome)</h2>\n<p>bounds</p>"));
        assert!(
            page.contains("<figure id=\"perdome\"><svg"),
            "the plot is inlined"
        );
        assert!(page.contains("p-DP: 120 GOPS/s"));
        // Nothing is left of the staging directory.
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(".clflow-report-")
            })
            .collect();
        assert!(left.is_empty());
    }

    #[test]
    fn a_plain_section_becomes_a_report_section_unchanged() {
        let section = Section {
            heading: "Predicted time".into(),
            html: "<table></table>".into(),
            charts: Vec::new(),
            file: Some(("predictions.json".into(), "[]".into())),
        };
        let general = ReportSection::from(section);
        assert_eq!(general.heading, "Predicted time");
        assert_eq!(general.html, "<table></table>");
        assert!(general.charts.is_empty());
        assert_eq!(
            general.files,
            vec![("predictions.json".to_string(), "[]".to_string())]
        );
    }

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(slug("Tesla K20"), "tesla-k20");
        assert_eq!(slug("Intel(R) Xeon Phi 5110P"), "intel-r-xeon-phi-5110p");
        assert_eq!(slug("***"), "device");
    }
}
