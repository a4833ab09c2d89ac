//! A kernel launched many times (an application captured with `clflow
//! capture`) as the report sums it: its launches, W and Q over them, I from
//! the sums, and on each device the launches' times summed and F from them.

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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceTime {
    pub device: String,
    /// Launches timed on it.
    pub launches: u64,
    pub time_s: f64,
}

/// The section, where some kernel was launched more than once; written
/// with `launches.json`.
pub fn launches_section(kernels: &[KernelLaunches]) -> Option<Section> {
    if kernels.iter().all(|k| k.launches < 2) {
        return None;
    }
    let mut devices: Vec<&str> = Vec::new();
    for k in kernels {
        for d in &k.devices {
            if !devices.contains(&d.device.as_str()) {
                devices.push(&d.device);
            }
        }
    }
    let mut html = String::from(
        "<p>Each kernel over all its launches: W and Q summed, I from the sums; on each device the \
         launches' median times summed, and F = W/T over the launches timed there.</p>\n\
         <table id=\"launches\">\n<tr><th>kernel</th><th>launches</th><th>W</th><th>Q</th><th>I</th>",
    );
    for d in &devices {
        let _ = write!(html, "<th>T on {0}</th><th>F on {0}</th>", escape(d));
    }
    html.push_str("</tr>\n");
    for k in kernels {
        let intensity = if k.bytes > 0 {
            format!("{} OPS/B", format_number(k.work as f64 / k.bytes as f64))
        } else {
            "-".into()
        };
        let _ = write!(
            html,
            "<tr><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            escape(&k.kernel),
            k.launches,
            Unit::Ops.format(k.work as f64),
            Unit::Bytes.format(k.bytes as f64),
            intensity
        );
        for d in &devices {
            match k.devices.iter().find(|t| t.device == *d) {
                Some(t) if t.time_s > 0.0 => {
                    // Only the launches timed there count toward F.
                    let work = k.work as f64 * t.launches as f64 / k.launches as f64;
                    let _ = write!(
                        html,
                        "<td>{}</td><td>{}</td>",
                        Unit::Seconds.format(t.time_s),
                        Unit::OpsPerSecond.format(work / t.time_s)
                    );
                }
                _ => html.push_str("<td>-</td><td>-</td>"),
            }
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table>\n");
    Some(Section {
        heading: "Kernels over their launches".into(),
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
            devices: vec![DeviceTime {
                device: "PoCL <cpu>".into(),
                launches,
                time_s,
            }],
        }
    }

    #[test]
    fn kernels_launched_once_need_no_section() {
        assert!(launches_section(&[square(1, 1e-6)]).is_none());
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
                "<td class=\"name\">square</td><td>2</td><td>2048 OPS</td><td>4096 B</td>\
                 <td>0.5 OPS/B</td><td>4 µs</td><td>0.512 GOPS/s</td>"
            ),
            "{}",
            section.html
        );
        let (name, json) = section.file.unwrap();
        assert_eq!(name, "launches.json");
        assert!(json.contains("\"launches\": 2"));
    }
}
