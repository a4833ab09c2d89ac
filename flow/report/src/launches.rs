//! An application's kernels (captured with `clflow capture`), each over
//! its launches, ranked by what they take of the application: W and Q
//! summed with their shares, I from the sums, and on each device the
//! launches' times summed, their share of the kernel time, and F.

use crate::{escape, Section};
use clflow_metrics::{format_number, Unit};
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// One kernel over all its launches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelLaunches {
    pub kernel: String,
    pub launches: u64,
    #[serde(rename = "W")]
    pub work: u64,
    /// Q accessed, summed.
    #[serde(rename = "Q")]
    pub bytes: u64,
    /// Each device's summed kernel time, over the launches that ran there.
    pub devices: Vec<DeviceTime>,
    /// The report's names of its launches (`hash (launch-000003)`), in
    /// launch order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceTime {
    pub device: String,
    /// Launches timed on it.
    pub launches: u64,
    pub time_s: f64,
}

impl KernelLaunches {
    fn time_on(&self, device: &str) -> Option<&DeviceTime> {
        self.devices
            .iter()
            .find(|t| t.device == device && t.time_s > 0.0)
    }
}

/// The devices kernels were timed on, in the order first seen.
fn timed_devices(kernels: &[KernelLaunches]) -> Vec<&str> {
    let mut devices: Vec<&str> = Vec::new();
    for d in kernels.iter().flat_map(|k| &k.devices) {
        if !devices.contains(&d.device.as_str()) {
            devices.push(&d.device);
        }
    }
    devices
}

/// Whether the kernels were launched more than once between them: an
/// application's, whose kernels are worth ranking.
pub fn worth_ranking(kernels: &[KernelLaunches]) -> bool {
    kernels.iter().map(|k| k.launches).sum::<u64>() > 1 && kernels.iter().any(|k| k.launches > 1)
}

/// The kernels, the ones that matter first: by time on the first device
/// they were timed on, then by W.
pub fn ranked(kernels: &[KernelLaunches]) -> Vec<&KernelLaunches> {
    let first = timed_devices(kernels).first().copied();
    let time = |k: &KernelLaunches| first.and_then(|d| k.time_on(d)).map_or(0.0, |t| t.time_s);
    let mut ranked: Vec<&KernelLaunches> = kernels.iter().collect();
    ranked.sort_by(|a, b| {
        time(b)
            .total_cmp(&time(a))
            .then(b.work.cmp(&a.work))
            .then(a.kernel.cmp(&b.kernel))
    });
    ranked
}

/// `part` of `whole` as a share: `88.01%`, `-` where the whole is nothing.
fn share(part: f64, whole: f64) -> String {
    match whole > 0.0 {
        true => Unit::Ratio.format(part / whole),
        false => "-".into(),
    }
}

/// What a reader wants first of an application's kernels: on the first
/// device timed, the fewest kernels that take nine tenths of the kernel
/// time, with their shares; and which does the most W and moves the most Q.
pub fn lead(kernels: &[KernelLaunches]) -> Option<String> {
    let ranked = ranked(kernels);
    let work: u64 = kernels.iter().map(|k| k.work).sum();
    let bytes: u64 = kernels.iter().map(|k| k.bytes).sum();
    let most = |key: fn(&KernelLaunches) -> u64| kernels.iter().max_by_key(|k| key(k));
    let mut text = String::new();
    if let Some(device) = timed_devices(kernels).first() {
        let time = |k: &KernelLaunches| k.time_on(device).map_or(0.0, |t| t.time_s);
        let total: f64 = kernels.iter().map(time).sum();
        let mut taken = 0.0;
        let mut named = Vec::new();
        for k in &ranked {
            if taken >= 0.9 * total || time(k) == 0.0 {
                break;
            }
            taken += time(k);
            named.push(format!("{} {}", k.kernel, share(time(k), total)));
        }
        let _ = write!(
            text,
            "On {device}, {} of {} kernels take {} of the kernel time ({}).",
            named.len(),
            kernels.len(),
            share(taken, total),
            named.join(", ")
        );
    }
    if let (Some(w), Some(q)) = (most(|k| k.work), most(|k| k.bytes)) {
        let space = if text.is_empty() { "" } else { " " };
        let (w_share, q_share) = (
            share(w.work as f64, work as f64),
            share(q.bytes as f64, bytes as f64),
        );
        let _ = match w.kernel == q.kernel {
            true => write!(
                text,
                "{space}{} does {w_share} of W and moves {q_share} of Q.",
                w.kernel
            ),
            false => write!(
                text,
                "{space}{} does {w_share} of W; {} moves {q_share} of Q.",
                w.kernel, q.kernel
            ),
        };
    }
    (!text.is_empty()).then_some(text)
}

/// W and its share, Q and its share, and I of kernel `k` of `kernels`.
fn count_cells(kernels: &[KernelLaunches], k: &KernelLaunches) -> [String; 5] {
    let work: u64 = kernels.iter().map(|k| k.work).sum();
    let bytes: u64 = kernels.iter().map(|k| k.bytes).sum();
    let intensity = match k.bytes > 0 {
        true => format!("{} OPS/B", format_number(k.work as f64 / k.bytes as f64)),
        false => "-".into(),
    };
    [
        Unit::Ops.format(k.work as f64),
        share(k.work as f64, work as f64),
        Unit::Bytes.format(k.bytes as f64),
        share(k.bytes as f64, bytes as f64),
        intensity,
    ]
}

/// T, its share of the kernels' time on `device`, and F of kernel `k`
/// there (F over the launches timed there alone); `-` where not timed.
fn device_cells(kernels: &[KernelLaunches], k: &KernelLaunches, device: &str) -> [String; 3] {
    let Some(t) = k.time_on(device) else {
        return ["-".into(), "-".into(), "-".into()];
    };
    let total: f64 = kernels
        .iter()
        .filter_map(|k| k.time_on(device))
        .map(|t| t.time_s)
        .sum();
    let work = k.work as f64 * t.launches as f64 / k.launches as f64;
    [
        Unit::Seconds.format(t.time_s),
        share(t.time_s, total),
        Unit::OpsPerSecond.format(work / t.time_s),
    ]
}

/// The kernels for a terminal, the ones that matter first: per kernel and
/// device timed, its launches, T and its share, F, W and Q with their
/// shares, and I.
pub fn text_table(kernels: &[KernelLaunches]) -> String {
    let header = [
        "KERNEL", "DEVICE", "LAUNCHES", "T", "OF T", "F", "W", "OF W", "Q", "OF Q", "I",
    ];
    let devices = timed_devices(kernels);
    let mut rows: Vec<Vec<String>> = Vec::new();
    for k in ranked(kernels) {
        let on: Vec<(&str, [String; 3])> = match devices.is_empty() {
            true => vec![("-", ["-".into(), "-".into(), "-".into()])],
            false => devices
                .iter()
                .map(|d| (*d, device_cells(kernels, k, d)))
                .collect(),
        };
        for (device, timed) in on {
            let mut row = vec![k.kernel.clone(), device.to_string(), k.launches.to_string()];
            row.extend(timed);
            row.extend(count_cells(kernels, k));
            rows.push(row);
        }
    }
    crate::text::table(&header, rows)
}

/// The section, where the kernels are worth ranking ([`worth_ranking`]);
/// written with `launches.json`.
pub fn launches_section(kernels: &[KernelLaunches]) -> Option<Section> {
    if !worth_ranking(kernels) {
        return None;
    }
    let devices = timed_devices(kernels);
    let mut html = format!(
        "<p>{}</p>\n<p>Each kernel over all its launches, the ones that matter first: W and Q \
         summed, with their shares of the application's, I from the sums; on each device the \
         launches' median times summed, their share of the kernel time there, and F = W/T over \
         the launches timed there.</p>\n\
         <table id=\"launches\">\n<tr><th>kernel</th><th>launches</th><th>W</th><th>of W</th>\
         <th>Q</th><th>of Q</th><th>I</th>",
        escape(&lead(kernels).unwrap_or_default())
    );
    for d in &devices {
        let _ = write!(
            html,
            "<th>T on {0}</th><th>of T</th><th>F on {0}</th>",
            escape(d)
        );
    }
    html.push_str("</tr>\n");
    for k in ranked(kernels) {
        let _ = write!(
            html,
            "<tr><td class=\"name\">{}</td><td>{}</td>",
            escape(&k.kernel),
            k.launches
        );
        let cells = count_cells(kernels, k)
            .into_iter()
            .chain(devices.iter().flat_map(|d| device_cells(kernels, k, d)));
        for cell in cells {
            let _ = write!(html, "<td>{cell}</td>");
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table>\n");
    Some(Section {
        heading: "Kernels that matter".into(),
        html,
        charts: Vec::new(),
        file: serde_json::to_string_pretty(kernels)
            .ok()
            .map(|text| ("launches.json".to_string(), text)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(launches: u64, time_s: f64) -> KernelLaunches {
        KernelLaunches {
            kernel: "square".into(),
            launches,
            work: 1024 * launches,
            bytes: 2048 * launches,
            devices: vec![DeviceTime { device: "PoCL <cpu>".into(), launches, time_s }],
            runs: Vec::new(),
        }
    }

    fn kernel(name: &str, launches: u64, work: u64, bytes: u64, time_s: f64) -> KernelLaunches {
        KernelLaunches {
            kernel: name.into(),
            launches,
            work,
            bytes,
            devices: vec![DeviceTime { device: "PoCL <cpu>".into(), launches, time_s }],
            runs: Vec::new(),
        }
    }

    #[test]
    fn kernels_launched_once_need_no_section() {
        assert!(launches_section(&[square(1, 1e-6)]).is_none());
        assert!(launches_section(&[square(1, 1e-6), kernel("b", 1, 1, 1, 1e-6)]).is_none());
    }

    #[test]
    fn the_section_sums_launches_and_escapes_names() {
        let section = launches_section(&[square(2, 4e-6)]).unwrap();
        assert!(
            section.html.contains("<th>T on PoCL &lt;cpu&gt;</th>"),
            "{}",
            section.html
        );
        // 2,048 ops over 4,096 bytes; 2,048 ops in 4 µs.
        assert!(
            section.html.contains(
                "<td class=\"name\">square</td><td>2</td><td>2048 OPS</td><td>100%</td>\
                 <td>4096 B</td><td>100%</td><td>0.5 OPS/B</td><td>4 µs</td><td>100%</td>\
                 <td>0.512 GOPS/s</td>"
            ),
            "{}",
            section.html
        );
        let (name, json) = section.file.unwrap();
        assert_eq!(name, "launches.json");
        assert!(json.contains("\"launches\": 2"));
    }

    /// An application's three kernels: `hash` takes most of the time,
    /// `zero` moves most of the bytes, `tail` does little of either.
    fn application() -> Vec<KernelLaunches> {
        vec![
            kernel("zero", 19, 0, 7_000_000, 0.002),
            kernel("hash", 17, 43_000_000, 1_200_000, 0.046),
            kernel("tail", 1, 1_000, 3_000, 0.002),
        ]
    }

    #[test]
    fn the_kernels_that_take_the_time_come_first_and_the_lead_names_them() {
        let kernels = application();
        let order: Vec<&str> = ranked(&kernels).iter().map(|k| k.kernel.as_str()).collect();
        assert_eq!(order, ["hash", "tail", "zero"]);
        // 46 of 50 ms is 92%: hash alone.
        assert_eq!(
            lead(&kernels).unwrap(),
            "On PoCL <cpu>, 1 of 3 kernels take 92% of the kernel time (hash 92%). hash does \
             100% of W; zero moves 85.33% of Q."
        );
        let section = launches_section(&kernels).unwrap();
        assert!(
            section.html.contains("<p>On PoCL &lt;cpu&gt;, 1 of 3"),
            "{}",
            section.html
        );
    }

    #[test]
    fn the_terminal_table_ranks_kernels_with_their_shares() {
        let text = text_table(&application());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(lines[0].starts_with("KERNEL  DEVICE"), "{text}");
        let cells: Vec<&str> = lines[1]
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(
            cells,
            [
                "hash",
                "PoCL <cpu>",
                "17",
                "46 ms",
                "92%",
                "0.9348 GOPS/s",
                "43 MOPS",
                "100%",
                "1200 kB",
                "14.63%",
                "35.83 OPS/B"
            ]
        );
        assert!(lines[3].starts_with("zero "), "{text}");
    }
}
