//! `index.html`: one page, readable offline, with the charts inlined as SVG
//! and the tables of metrics and device ceilings.

use crate::tables::{column, SUMMARY_COLUMNS};
use clflow_metrics::{Ceilings, Figure, Metrics, ResultSet};
use std::fmt::Write;

/// A chart ready for the page.
pub struct ChartFile {
    /// File name without extension: `roofline-tesla-k20`.
    pub stem: String,
    pub caption: String,
    pub svg: String,
}

pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:1200px;color:#222}\
table{border-collapse:collapse;margin:1em 0;font-size:14px}\
th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}\
th{background:#f2f2f2}td.name{text-align:left}\
.datasheet{color:#777}.imported{color:#1f4e99}.spec{color:#7a4b00}\
figure{margin:2em 0}figcaption{font-size:14px;color:#444}svg{max-width:100%;height:auto}\
.notes{color:#a00}table.run td{text-align:left}table.run th{text-align:left}\
td.code{text-align:left;font-family:monospace;white-space:pre}\
table.source caption{text-align:left;font-family:monospace;padding:4px 0}\
table.source th:last-child{text-align:left}";

/// A figure as a table cell: its value, and its provenance and source on hover.
fn cell(figure: Option<&Figure>) -> String {
    match figure {
        None => "<td>–</td>".into(),
        Some(f) => {
            let mut title = f.provenance.name().to_string();
            if let Some(source) = &f.source {
                let _ = write!(title, ": {source}");
            }
            format!(
                "<td class=\"{}\" title=\"{}\">{}</td>",
                f.provenance.name(),
                escape(&title),
                escape(&f.display())
            )
        }
    }
}

fn metrics_table(page: &mut String, metrics: &[Metrics]) {
    page.push_str("<table id=\"metrics\"><tr><th>Kernel</th><th>Device</th><th>W</th><th>Q</th>");
    for name in SUMMARY_COLUMNS {
        if let Some((_, header, _)) = column(name) {
            let _ = write!(page, "<th>{}</th>", escape(header));
        }
    }
    page.push_str("<th>Bound</th></tr>\n");
    for m in metrics {
        let _ = write!(
            page,
            "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td>{}{}",
            escape(&m.kernel),
            escape(&m.device),
            cell(Some(&m.work)),
            cell(Some(&m.traffic_accessed)),
        );
        for name in SUMMARY_COLUMNS {
            if let Some((_, _, pick)) = column(name) {
                page.push_str(&cell(pick(m)));
            }
        }
        let bound = m.bound.map(|b| b.name()).unwrap_or("–");
        let _ = writeln!(page, "<td class=\"name\">{bound}</td></tr>");
    }
    page.push_str("</table>\n");
}

fn ceilings_cells(page: &mut String, c: &Ceilings) {
    for figure in [&c.float, &c.int, &c.bandwidth, &c.power] {
        page.push_str(&cell(figure.as_ref()));
    }
}

fn devices_table(page: &mut String, set: &ResultSet) {
    page.push_str(
        "<table id=\"devices\"><tr><th rowspan=\"2\">Device</th><th colspan=\"4\">Measured peak</th>\
         <th colspan=\"4\">Datasheet peak</th></tr>\n<tr><th>F_f</th><th>F_i</th><th>B</th><th>P</th>\
         <th>F_f</th><th>F_i</th><th>B</th><th>P</th></tr>\n",
    );
    for device in &set.devices {
        let _ = write!(page, "<tr><td class=\"name\">{}</td>", escape(&device.name));
        ceilings_cells(page, &device.measured);
        ceilings_cells(page, &device.datasheet);
        page.push_str("</tr>\n");
    }
    page.push_str("</table>\n");
}

/// An SVG document as an element of the page: no XML prolog, no namespace
/// URL (HTML needs neither), so the page names no outside address.
fn inline_svg(svg: &str) -> String {
    let start = svg.find("<svg").unwrap_or(0);
    svg[start..].replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
}

/// A section after the charts, rendered.
pub struct Part<'a> {
    pub heading: &'a str,
    pub html: &'a str,
    pub charts: Vec<ChartFile>,
}

fn figure(page: &mut String, chart: &ChartFile) {
    let _ = writeln!(
        page,
        "<figure id=\"{}\">{}<figcaption>{} (<a href=\"{}.svg\">SVG</a>, <a href=\"{}.png\">PNG</a>)</figcaption></figure>",
        escape(&chart.stem),
        inline_svg(&chart.svg),
        escape(&chart.caption),
        escape(&chart.stem),
        escape(&chart.stem)
    );
}

/// How the results were made: date, version, command, launches, devices.
fn run_header(page: &mut String, made: &clflow_metrics::RunInfo) {
    let _ = write!(
        page,
        "<table class=\"run\"><tr><th>Made</th><td>{} by clflow {}</td></tr>\
         <tr><th>Command</th><td><code>{}</code></td></tr>\
         <tr><th>W counts</th><td>{}</td></tr>",
        escape(&made.date),
        escape(&made.clflow_version),
        escape(&made.command.join(" ")),
        escape(&made.ops)
    );
    for launch in &made.launches {
        let sizes = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(" × ");
        let local = launch
            .local_size
            .as_deref()
            .map_or("chosen by the runtime".to_string(), sizes);
        let commit = launch
            .source_commit
            .as_deref()
            .map(|c| format!(", source at commit {c}"))
            .unwrap_or_default();
        let _ = write!(
            page,
            "<tr><th>{}</th><td>{}: global {}, local {}{}</td></tr>",
            escape(&launch.kernel),
            escape(&launch.manifest),
            sizes(&launch.global_size),
            escape(&local),
            escape(&commit)
        );
    }
    for device in &made.devices {
        let _ = write!(
            page,
            "<tr><th>Device</th><td>{} ({}, driver {})</td></tr>",
            escape(&device.name),
            escape(&device.platform),
            escape(&device.driver)
        );
    }
    page.push_str("</table>\n");
}

pub fn page(
    set: &ResultSet,
    metrics: &[Metrics],
    charts: &[ChartFile],
    parts: &[Part<'_>],
) -> String {
    let title = set.title.clone().unwrap_or_else(|| {
        let kernels: Vec<&str> = set.kernels.iter().map(|k| k.kernel.as_str()).collect();
        format!("clflow report: {}", kernels.join(", "))
    });
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title)
    );
    if let Some(made) = &set.made {
        run_header(&mut page, made);
    }
    page.push_str(
        "<p>Rates are in 10<sup>9</sup> per second. Colour tells where a figure comes from: \
         black measured by clflow, <span class=\"imported\">blue imported</span>, \
         <span class=\"datasheet\">grey datasheet</span>, <span class=\"spec\">brown stated \
         by hand</span>; hover a value for its source. Derived figures take the least direct \
         provenance among their inputs.</p>\n<h2>Kernels on devices</h2>\n",
    );
    metrics_table(&mut page, metrics);
    let findings: Vec<String> = metrics.iter().filter_map(clflow_metrics::finding).collect();
    if !findings.is_empty() {
        page.push_str("<ul class=\"findings\">");
        for finding in findings {
            let _ = write!(page, "<li>{}</li>", escape(&finding));
        }
        page.push_str("</ul>\n");
    }
    let notes: Vec<String> = metrics
        .iter()
        .flat_map(|m| {
            m.notes
                .iter()
                .map(move |n| format!("{} on {}: {n}", m.kernel, m.device))
        })
        .collect();
    if !notes.is_empty() {
        page.push_str("<ul class=\"notes\">");
        for note in notes {
            let _ = write!(page, "<li>{}</li>", escape(&note));
        }
        page.push_str("</ul>\n");
    }
    page.push_str("<h2>Devices</h2>\n");
    devices_table(&mut page, set);
    page.push_str("<h2>Charts</h2>\n");
    for chart in charts {
        figure(&mut page, chart);
    }
    for part in parts {
        let _ = writeln!(page, "<h2>{}</h2>", escape(part.heading));
        page.push_str(part.html);
        for chart in &part.charts {
            figure(&mut page, chart);
        }
    }
    page.push_str(
        "<p>Files: metrics.csv (every figure, base units, with provenance), \
                   results.json (the inputs and metrics; <code>clflow report results.json</code> \
                   redraws this report).</p>\n</body></html>\n",
    );
    page
}
