//! Source lines: each kernel's source with its W and Q beside each line,
//! heat-coloured by the line's larger share, the hottest lines named first.
//! `lines.json` keeps the lines and the text of the files they name, so
//! that `clflow report` draws the section again without the sources.

use crate::html::escape;
use crate::output::Section;
use clflow_counts::{group_digits, LineReport};
use clflow_metrics::{format_number, Hotspots};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// One kernel's lines, as `lines.json` holds them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelSource {
    pub kernel: String,
    /// W of the op set the lines count.
    #[serde(rename = "W")]
    pub work: u64,
    /// Q accessed: the bytes the lines' shares are of.
    #[serde(rename = "Q")]
    pub traffic: u64,
    pub lines: Vec<LineReport>,
    /// Each file the lines name, as it read when the kernel was counted
    /// (none where it could not be read).
    pub files: BTreeMap<String, String>,
}

/// Lines named before each kernel's table.
const HOTTEST: usize = 3;

impl KernelSource {
    fn share(&self, line: &LineReport) -> (f64, f64) {
        let of = |part: u64, whole: u64| match whole {
            0 => 0.0,
            _ => part as f64 / whole as f64,
        };
        (of(line.w, self.work), of(line.q(), self.traffic))
    }

    /// The lines doing most, by their larger share, hottest first.
    pub fn hottest(&self) -> Vec<&LineReport> {
        let heat = |l: &LineReport| {
            let (w, q) = self.share(l);
            w.max(q)
        };
        let mut lines: Vec<&LineReport> = self
            .lines
            .iter()
            .filter(|l| l.line.is_some() && heat(l) > 0.0)
            .collect();
        lines.sort_by(|a, b| heat(b).total_cmp(&heat(a)));
        lines
    }

    /// The line with the most W and the one with the most Q, with their
    /// shares, as a finding names them (the coalescing is not the lines'
    /// to say).
    pub fn hotspots(&self) -> Hotspots {
        // The first line of several alike.
        let most = |key: fn(&LineReport) -> u64| {
            self.lines
                .iter()
                .filter(|l| l.line.is_some() && key(l) > 0)
                .rev()
                .max_by_key(|l| key(l))
        };
        Hotspots {
            work_line: most(|l| l.w).map(|l| (l.place(), self.share(l).0)),
            traffic_line: most(LineReport::q).map(|l| (l.place(), self.share(l).1)),
            coalesced: None,
        }
    }

    /// "lookup3.cl:68 does 61.3 % of W; lookup3.cl:65 causes 18.2 % of Q".
    pub fn lever(&self) -> Option<String> {
        let h = self.hotspots();
        let w = h
            .work_line
            .map(|(line, share)| format!("{line} does {} % of W", format_number(100.0 * share)));
        let q = h
            .traffic_line
            .map(|(line, share)| format!("{line} causes {} % of Q", format_number(100.0 * share)));
        match (w, q) {
            (Some(w), Some(q)) => Some(format!("{w}; {q}")),
            (w, q) => w.or(q),
        }
    }
}

/// The section's page: per kernel, its hottest lines, then its source with
/// each line's figures, the row shaded by the line's larger share.
pub fn source_tables(kernels: &[KernelSource]) -> String {
    let mut page = String::from(
        "<p>Each line of the kernel's source with the operations counted in W and the global \
         and constant bytes (Q) its instructions made, from the module's line information; a \
         macro's or an inlined helper's belong to the line that uses it. A row is shaded by \
         the larger of its shares of W and Q.</p>\n",
    );
    for kernel in kernels {
        let _ = writeln!(page, "<h3>{}</h3>", escape(&kernel.kernel));
        if let Some(lever) = kernel.lever() {
            let _ = writeln!(page, "<p>{}.</p>", escape(&lever));
        }
        let _ = writeln!(page, "<ol class=\"hot\">");
        for line in kernel.hottest().into_iter().take(HOTTEST) {
            let (w, q) = kernel.share(line);
            let _ = writeln!(
                page,
                "<li>{}: {:.1} % of W, {:.1} % of Q: <code>{}</code></li>",
                escape(&line.place()),
                100.0 * w,
                100.0 * q,
                escape(text_of(kernel, line).trim())
            );
        }
        page.push_str("</ol>\n");
        let mut files: BTreeMap<&str, BTreeMap<u32, &LineReport>> = BTreeMap::new();
        for line in &kernel.lines {
            if let (Some(file), Some(n)) = (&line.file, line.line) {
                files.entry(file).or_default().insert(n, line);
            }
        }
        for (file, lines) in files {
            let (Some(&first), Some(&last)) = (lines.keys().next(), lines.keys().last()) else {
                continue;
            };
            let _ = writeln!(
                page,
                "<table class=\"source\"><caption>{}</caption><tr><th>Line</th><th>W</th>\
                 <th>W %</th><th>Loaded (B)</th><th>Stored (B)</th><th>Q %</th><th>Source</th></tr>",
                escape(file)
            );
            let text: Vec<&str> = kernel
                .files
                .get(file)
                .map_or(Vec::new(), |t| t.lines().collect());
            for n in first..=last {
                let code = escape(
                    (n as usize)
                        .checked_sub(1)
                        .and_then(|i| text.get(i))
                        .copied()
                        .unwrap_or(""),
                );
                let Some(line) = lines.get(&n).filter(|l| !l.is_idle()) else {
                    let _ = writeln!(
                        page,
                        "<tr><td>{n}</td><td></td><td></td><td></td><td></td><td></td><td class=\"code\">{code}</td></tr>"
                    );
                    continue;
                };
                let (w, q) = kernel.share(line);
                let _ = writeln!(
                    page,
                    "<tr style=\"background:{}\"><td>{n}</td><td>{}</td><td>{:.1}</td><td>{}</td>\
                     <td>{}</td><td>{:.1}</td><td class=\"code\">{code}</td></tr>",
                    heat(w.max(q)),
                    group_digits(line.w),
                    100.0 * w,
                    group_digits(line.global_load_bytes + line.constant_load_bytes),
                    group_digits(line.global_store_bytes),
                    100.0 * q,
                );
            }
            page.push_str("</table>\n");
        }
        if let Some(none) = kernel
            .lines
            .iter()
            .find(|l| l.line.is_none() && !l.is_idle())
        {
            let (w, q) = kernel.share(none);
            let _ = writeln!(
                page,
                "<p>On no line (instructions the compiler placed on none, such as one merged from \
                 several lines): {:.1} % of W, {:.1} % of Q.</p>",
                100.0 * w,
                100.0 * q
            );
        }
    }
    page
}

fn text_of<'a>(kernel: &'a KernelSource, line: &LineReport) -> &'a str {
    let (Some(file), Some(n)) = (&line.file, line.line) else {
        return "";
    };
    kernel
        .files
        .get(file)
        .and_then(|t| t.lines().nth((n as usize).checked_sub(1)?))
        .unwrap_or("")
}

/// A warm shade for a share from 0 to 1, light enough to read text on.
fn heat(share: f64) -> String {
    let alpha = 0.08 + 0.5 * share.clamp(0.0, 1.0).sqrt();
    format!("rgba(230,85,13,{alpha:.2})")
}

/// The whole section, with `lines.json` holding every figure and the text.
pub fn source_section(kernels: &[KernelSource]) -> Option<Section> {
    if kernels.iter().all(|k| k.lines.is_empty()) {
        return None;
    }
    Some(Section {
        heading: "Source lines".into(),
        html: source_tables(kernels),
        charts: Vec::new(),
        file: serde_json::to_string_pretty(kernels)
            .ok()
            .map(|text| ("lines.json".to_string(), text)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(n: Option<u32>, w: u64, loaded: u64) -> LineReport {
        LineReport {
            file: n.map(|_| "k/vadd.cl".to_string()),
            line: n,
            w,
            int: 0,
            fp32: w,
            fp64: 0,
            fp16: 0,
            global_load_bytes: loaded,
            global_store_bytes: 0,
            constant_load_bytes: 0,
            local_load_bytes: 0,
            local_store_bytes: 0,
            q_share: None,
        }
    }

    fn kernel() -> KernelSource {
        KernelSource {
            kernel: "vadd".into(),
            work: 100,
            traffic: 400,
            lines: vec![
                line(Some(2), 90, 100),
                line(Some(3), 10, 300),
                line(None, 0, 0),
            ],
            files: BTreeMap::from([(
                "k/vadd.cl".to_string(),
                "kernel void f() {\n  x = a + b;\n  y = c[i];\n}\n".to_string(),
            )]),
        }
    }

    #[test]
    fn the_lever_names_the_line_with_most_w_and_the_one_with_most_q() {
        assert_eq!(
            kernel().lever().unwrap(),
            "vadd.cl:2 does 90 % of W; vadd.cl:3 causes 75 % of Q"
        );
        let hottest: Vec<Option<u32>> = kernel().hottest().iter().map(|l| l.line).collect();
        assert_eq!(hottest, [Some(2), Some(3)]);
    }

    #[test]
    fn the_page_shows_each_line_with_its_text_and_shade() {
        let page = source_tables(&[kernel()]);
        assert!(
            page.contains("<td class=\"code\">  x = a + b;</td>"),
            "{page}"
        );
        assert!(
            page.contains("<td>90</td><td>90.0</td><td>100</td>"),
            "{page}"
        );
        assert!(page.contains(&heat(0.9)));
        let json = source_section(&[kernel()]).unwrap().file.unwrap();
        let back: Vec<KernelSource> = serde_json::from_str(&json.1).unwrap();
        assert_eq!(back, vec![kernel()]);
    }
}
