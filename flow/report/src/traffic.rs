//! Traffic at a cache size: the chart of Q against the cache size, one
//! curve per kernel with each device's cache marked on it, the table of Q
//! and I at each device's cache, and how each access site coalesces.

use crate::charts::color;
use crate::html::escape;
use crate::output::Section;
use crate::plot::{binary_size, decade_ceil, decade_floor, Axis, Line, LogPlot, Marker, Stroke};
use clflow_metrics::format_number;
use clflow_traffic::{DeviceTraffic, PatternCounts};
use serde::Deserialize;
use std::fmt::Write;

/// One kernel's traffic through the caches of the devices it was simulated
/// for (the first device's curve is the one drawn). `traffic.json` holds a
/// list of them, which reads back into `Vec<KernelTraffic>`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct KernelTraffic {
    pub kernel: String,
    /// W, for the intensity at each cache.
    #[serde(rename = "W")]
    pub work: u64,
    pub devices: Vec<DeviceTraffic>,
}

const MB: f64 = 1e6;

/// Q (MB) against the cache size (bytes, ticks in KiB, MiB ...), log-log: each kernel's simulated
/// DRAM traffic, its compulsory traffic dashed, its accessed bytes dotted,
/// and a point at each device's cache.
pub fn traffic_curve_chart(kernels: &[KernelTraffic]) -> Option<LogPlot> {
    let mut lines = Vec::new();
    let mut markers = Vec::new();
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for (k, kernel) in kernels.iter().enumerate() {
        let Some(first) = kernel.devices.first() else {
            continue;
        };
        let summary = &first.summary;
        let points: Vec<(f64, f64)> = summary
            .curve
            .iter()
            .filter(|p| p.total() > 0)
            .map(|p| (p.cache_bytes as f64, p.total() as f64 / MB))
            .collect();
        let (Some(lo), Some(hi)) = (points.first(), points.last()) else {
            continue;
        };
        let (x_lo, x_hi) = (lo.0, hi.0);
        let c = color(k);
        let level = |y: f64| vec![(x_lo, y), (x_hi, y)];
        let compulsory = summary.compulsory.total() as f64 / MB;
        let accessed = summary.accessed_bytes as f64 / MB;
        lines.push(Line {
            points: points.clone(),
            color: c,
            faint: false,
            stroke: Stroke::Solid,
            width: 2,
            legend: Some(format!(
                "{}: Q DRAM ({}-byte lines)",
                kernel.kernel, summary.cache.line_bytes
            )),
        });
        for (y, stroke, what) in [
            (compulsory, Stroke::Dashed, "compulsory"),
            (accessed, Stroke::Dotted, "accessed"),
        ] {
            if y > 0.0 {
                lines.push(Line {
                    points: level(y),
                    color: c,
                    faint: true,
                    stroke,
                    width: 1,
                    legend: Some(format!("{}: {what} {} MB", kernel.kernel, format_number(y))),
                });
                ys.push(y);
            }
        }
        for device in &kernel.devices {
            let at = &device.summary;
            let q = at.dram.total() as f64 / MB;
            if q > 0.0 {
                xs.push(at.cache.bytes as f64);
                markers.push(Marker {
                    at: (at.cache.bytes as f64, q),
                    color: c,
                    // The device's name last: a long one is cut at the legend's edge.
                    legend: Some(format!(
                        "{}: {} MB at {} ({})",
                        kernel.kernel,
                        format_number(q),
                        binary_size(at.cache.bytes as f64),
                        device.device
                    )),
                });
            }
        }
        xs.extend(points.iter().map(|p| p.0));
        ys.extend(points.iter().map(|p| p.1));
    }
    let range = |v: &[f64]| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(0.0, f64::max);
        (hi > 0.0).then(|| (decade_floor(lo), decade_ceil(hi * 1.5)))
    };
    let (x_range, y_range) = (range(&xs)?, range(&ys)?);
    Some(LogPlot {
        title: "DRAM traffic against cache size (LRU)".into(),
        x_label: "Cache size".into(),
        y_label: "Q (MB)".into(),
        x_range,
        y_range,
        x_axis: Axis::Bytes,
        lines,
        markers,
        tags: Vec::new(),
    })
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "–".into()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

fn pattern_cells(bytes: &PatternCounts) -> String {
    let all = bytes.total();
    [
        bytes.contiguous,
        bytes.uniform,
        bytes.strided,
        bytes.scattered,
    ]
    .iter()
    .map(|&b| format!("<td>{}</td>", percent(b, all)))
    .collect()
}

/// Access sites shown per kernel.
const SITES_SHOWN: usize = 12;

/// Q and I at each device's cache, then each kernel's access sites.
pub fn traffic_tables(kernels: &[KernelTraffic]) -> String {
    let mut page = String::from(
        "<p>Each kernel's global accesses, in work-group order, through a fully associative \
         LRU cache (write-back, no read on a store miss) of each device's last-level cache \
         size. Compulsory traffic reads and writes each line once; accessed traffic is every \
         load and store. Where a work-item walks far between barriers, a CPU's accesses are \
         taken in the order it runs work-items, as the From column says.</p>\n<table id=\"traffic\"><tr><th>Kernel</th><th>Device</th>\
         <th>Cache</th><th>From</th><th>Q DRAM (B)</th><th>Compulsory (B)</th>\
         <th>Accessed (B)</th><th>I at cache (OPS/B)</th><th>Coalesced</th></tr>\n",
    );
    for kernel in kernels {
        for device in &kernel.devices {
            let s = &device.summary;
            let q = s.dram.total();
            let from = match &device.order {
                Some(order) => format!("{}; {order}", device.cache_source),
                None => device.cache_source.clone(),
            };
            let intensity = if q == 0 {
                "–".to_string()
            } else {
                format_number(kernel.work as f64 / q as f64)
            };
            let _ = writeln!(
                page,
                "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{}</td>\
                 <td class=\"name\">{}</td><td>{q}</td><td>{}</td><td>{}</td><td>{intensity}</td>\
                 <td>{}</td></tr>",
                escape(&kernel.kernel),
                escape(&device.device),
                s.cache,
                escape(&from),
                s.compulsory.total(),
                s.accessed_bytes,
                percent(s.coalescing.bytes.coalesced(), s.coalescing.bytes.total()),
            );
        }
    }
    page.push_str("</table>\n");
    for kernel in kernels {
        let Some(first) = kernel.devices.first() else {
            continue;
        };
        let c = &first.summary.coalescing;
        let _ = writeln!(
            page,
            "<h3>Coalescing in {}</h3>\n<p>Bytes by how each access relates to its neighbouring \
             work-items' (contiguous and uniform coalesce; strided and scattered do not) and the \
             share of each {}-byte line touched that the site used.</p>\n<table class=\"sites\">\
             <tr><th>Instruction</th><th>Kind</th><th>Bytes</th><th>Contiguous</th><th>Uniform</th>\
             <th>Strided</th><th>Scattered</th><th>Line use</th></tr>",
            escape(&kernel.kernel),
            c.line_bytes
        );
        for site in c.sites.iter().take(SITES_SHOWN) {
            let _ = writeln!(
                page,
                "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{}</td>{}<td>{:.0}%</td></tr>",
                escape(&site.description),
                site.kind,
                site.bytes.total(),
                pattern_cells(&site.bytes),
                100.0 * site.line_efficiency(c.line_bytes)
            );
        }
        if c.sites.len() > SITES_SHOWN {
            let _ = writeln!(
                page,
                "<tr><td class=\"name\" colspan=\"8\">… {} more in traffic.json</td></tr>",
                c.sites.len() - SITES_SHOWN
            );
        }
        page.push_str("</table>\n");
    }
    page
}

/// The whole section, with `traffic.json` holding every figure.
pub fn traffic_section(kernels: &[KernelTraffic]) -> Option<Section> {
    if kernels.iter().all(|k| k.devices.is_empty()) {
        return None;
    }
    let charts = traffic_curve_chart(kernels)
        .map(|plot| {
            (
                "traffic-curve".to_string(),
                "DRAM traffic Q against the cache size, from an LRU simulation of each kernel's \
                 access stream; points at each device's last-level cache"
                    .to_string(),
                plot,
            )
        })
        .into_iter()
        .collect();
    let json: Vec<serde_json::Value> = kernels
        .iter()
        .map(|k| serde_json::json!({ "kernel": k.kernel, "W": k.work, "devices": k.devices }))
        .collect();
    Some(Section {
        heading: "Traffic at a cache size".into(),
        html: traffic_tables(kernels),
        charts,
        file: serde_json::to_string_pretty(&json)
            .ok()
            .map(|text| ("traffic.json".to_string(), text)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clflow_counts::{AccessKind, AccessSink, GlobalAccess, TraceBuffer};
    use clflow_traffic::{CacheSpec, TrafficAnalysis};

    /// A kernel that reads `lines` 64-byte lines twice, one work-item a word.
    fn traffic(lines: u64, caches: &[(&str, u64)]) -> Vec<DeviceTraffic> {
        let mut analysis = TrafficAnalysis::new(&[64]);
        analysis.buffers(&[TraceBuffer {
            label: "arg 0 (a)".into(),
            space: "__global",
            bytes: lines * 64,
            read_only: false,
        }]);
        let accesses: Vec<GlobalAccess> = (0..2 * lines * 16)
            .map(|i| GlobalAccess {
                fenced: 0,
                offset: 4 * (i % (lines * 16)),
                buffer: 0,
                bytes: 4,
                site: 3,
                dispatch: (i / 16) as u32,
                item: (i % 16) as u32,
                kind: AccessKind::Load,
                atomic: false,
                phase: 0,
                lanes: 1,
                contiguous: false,
                runs: 1,
                run_step: 0,
            })
            .collect();
        analysis.work_group(0, &accesses);
        let mut report = analysis.finish();
        report.describe_sites(|site| format!("OpLoad at {site}"));
        caches
            .iter()
            .map(|(device, bytes)| DeviceTraffic {
                device: device.to_string(),
                cache_source: "test".into(),
                summary: report.summary(CacheSpec { bytes: *bytes, line_bytes: 64 }),
                levels: Vec::new(),
                cache_gathers: None,
                cache_gather_table: None,
                order: None,
            })
            .collect()
    }

    #[test]
    fn the_curve_falls_to_the_compulsory_traffic_where_the_data_fits() {
        // 1024 lines (64 KiB) read twice: 128 KiB below 64 KiB, 64 KiB from there.
        let kernels = [KernelTraffic {
            kernel: "k".into(),
            work: 65536,
            devices: traffic(1024, &[("small", 16 << 10), ("large", 1 << 20)]),
        }];
        let plot = traffic_curve_chart(&kernels).unwrap();
        let curve = &plot.lines[0].points;
        // Cache sizes in bytes, on an axis of binary sizes.
        assert_eq!(plot.x_axis, Axis::Bytes);
        assert_eq!(curve.first(), Some(&(1024.0, 131072.0 / MB)));
        // The first device's curve ends where every line fits.
        assert_eq!(curve.last(), Some(&(65536.0, 65536.0 / MB)));
        let at: Vec<(f64, f64)> = plot.markers.iter().map(|m| m.at).collect();
        assert_eq!(at, [(16384.0, 131072.0 / MB), (1048576.0, 65536.0 / MB)]);
        assert!(plot.x_range.0 <= 1024.0 && plot.x_range.1 >= 1048576.0);
        let mut ordered = kernels.clone();
        ordered[0].devices[0].order = Some("work-items one at a time between barriers".into());
        assert!(traffic_tables(&ordered)
            .contains("<td class=\"name\">test; work-items one at a time between barriers</td>"));
        let html = traffic_tables(&kernels);
        // I at the large cache: 65536 ops / 65536 B.
        assert!(
            html.contains("<td>65536</td><td>65536</td><td>131072</td><td>1</td>"),
            "{html}"
        );
        assert!(html.contains("OpLoad at 3 on arg 0 (a)"));
        let section = traffic_section(&kernels).unwrap();
        assert_eq!(section.charts.len(), 1);
        assert!(section
            .file
            .unwrap()
            .1
            .contains("\"cache_source\": \"test\""));
    }

    #[test]
    fn traffic_json_reads_back_into_the_kernels_it_was_written_from() {
        let kernels = vec![
            KernelTraffic {
                kernel: "k".into(),
                work: 65536,
                devices: traffic(1024, &[("small", 16 << 10), ("large", 1 << 20)]),
            },
            KernelTraffic {
                kernel: "j".into(),
                work: 7,
                devices: traffic(3, &[("small", 1 << 10)]),
            },
        ];
        let (name, text) = traffic_section(&kernels).unwrap().file.unwrap();
        assert_eq!(name, "traffic.json");
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json[0]["W"], 65536);
        assert_eq!(
            json[1]["devices"][0]["coalescing"]["sites"][0]["kind"],
            "load"
        );
        let back: Vec<KernelTraffic> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, kernels);
    }

    #[test]
    fn no_simulated_device_means_no_section() {
        let kernels = [KernelTraffic { kernel: "k".into(), work: 1, devices: Vec::new() }];
        assert!(traffic_section(&kernels).is_none());
        assert!(traffic_curve_chart(&kernels).is_none());
    }
}
