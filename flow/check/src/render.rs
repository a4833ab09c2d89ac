//! The comparison for people and for CI: a terminal table, Markdown for a
//! pull-request comment, JUnit XML for CI test reports.

use crate::compare::{Comparison, Row, Verdict};
use clflow_metrics::format_number;
use std::collections::BTreeMap;

const HEADER: [&str; 7] = ["kernel", "metric", "old", "new", "delta", "rule", "verdict"];

fn cells(row: &Row) -> [String; 7] {
    let value = |v: Option<crate::Value>| v.map_or("-".to_string(), |v| v.to_string());
    let delta = match row.delta() {
        Some((d, Some(rel))) => format!(
            "{}{} ({:+.2}%)",
            sign(d),
            format_number(d.abs()),
            rel * 100.0
        ),
        Some((d, None)) => format!("{}{}", sign(d), format_number(d.abs())),
        None => row.note.clone().unwrap_or_default(),
    };
    [
        row.key.clone(),
        row.label(),
        value(row.old),
        value(row.new),
        delta,
        row.rule.clone(),
        row.verdict.name().to_string(),
    ]
}

fn sign(d: f64) -> &'static str {
    if d < 0.0 {
        "-"
    } else {
        "+"
    }
}

/// One line saying how the check went.
pub fn summary_line(comparison: &Comparison) -> String {
    let s = &comparison.summary;
    format!(
        "{} kernels, {} metrics compared: {} regressions, {} improvements, {} changed, {} new, {} missing, {} failed",
        s.kernels, s.compared, s.regressions, s.improvements, s.changed, s.new, s.missing, s.failed
    )
}

/// Rows as aligned text columns; `all` includes the passes.
pub fn table(comparison: &Comparison, all: bool) -> String {
    let rows: Vec<[String; 7]> = comparison
        .rows
        .iter()
        .filter(|r| all || r.verdict != Verdict::Pass)
        .map(cells)
        .collect();
    let mut out = String::new();
    if !rows.is_empty() {
        let mut widths = HEADER.map(str::len);
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let text: Vec<String> = cells
                .iter()
                .zip(widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            text.join("  ").trim_end().to_string() + "\n"
        };
        out += &line(&HEADER.map(String::from));
        for row in &rows {
            out += &line(row);
        }
    } else {
        out += "no change\n";
    }
    out += &summary_line(comparison);
    out.push('\n');
    out
}

/// A pull-request comment: the verdict, then the rows that changed.
pub fn markdown(comparison: &Comparison) -> String {
    let s = &comparison.summary;
    let mut out = String::from("### clflow check: ");
    out += if comparison.fails() {
        "❌ failed\n\n"
    } else {
        "✅ passed\n\n"
    };
    out += &summary_line(comparison);
    out += "\n\n";
    let changed: Vec<&Row> = comparison.changes().collect();
    if changed.is_empty() {
        out += &format!("No metric changed in the {} kernels.\n", s.kernels);
        return out;
    }
    out += &format!("| {} |\n", HEADER.join(" | "));
    out += &format!("|{}\n", "---|".repeat(HEADER.len()));
    for row in changed {
        let mut cells = cells(row);
        cells[6] = if row.verdict.fails() {
            format!("**{}**", row.verdict.name())
        } else {
            row.verdict.name().to_string()
        };
        let escaped: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
        out += &format!("| {} |\n", escaped.join(" | "));
    }
    out
}

fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out += "&amp;",
            '<' => out += "&lt;",
            '>' => out += "&gt;",
            '"' => out += "&quot;",
            '\'' => out += "&apos;",
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML: one test case per kernel × metric group (`W`, `Q`, `I`, `ops`,
/// `timing@DEVICE`, or `kernel` for a kernel that is new, missing or failed);
/// a failure's text is its table rows.
pub fn junit(comparison: &Comparison) -> String {
    let mut cases: BTreeMap<(String, String), Vec<&Row>> = BTreeMap::new();
    for row in &comparison.rows {
        cases
            .entry((row.key.clone(), row.case()))
            .or_default()
            .push(row);
    }
    let failures = cases
        .values()
        .filter(|rows| rows.iter().any(|r| r.verdict == Verdict::Regression))
        .count();
    let errors = cases
        .values()
        .filter(|rows| rows.iter().any(|r| r.verdict == Verdict::Failed))
        .count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out += &format!(
        "<testsuites name=\"clflow check\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\">\n",
        cases.len()
    );
    out += &format!(
        "  <testsuite name=\"clflow check\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\">\n",
        cases.len()
    );
    for ((key, case), rows) in &cases {
        out += &format!(
            "    <testcase classname=\"{}\" name=\"{}\"",
            xml_escape(key),
            xml_escape(case)
        );
        let text_of = |wanted: &dyn Fn(Verdict) -> bool| -> String {
            let mut text = String::new();
            for row in rows.iter().filter(|r| wanted(r.verdict)) {
                text += &cells(row).join("  ");
                text.push('\n');
            }
            text
        };
        let regressions = text_of(&|v| v == Verdict::Regression);
        let failed = text_of(&|v| v == Verdict::Failed);
        let other = text_of(&|v| !v.fails() && v != Verdict::Pass);
        if regressions.is_empty() && failed.is_empty() && other.is_empty() {
            out += " />\n";
            continue;
        }
        out += ">\n";
        if !failed.is_empty() {
            out += &format!(
                "      <error type=\"failed\" message=\"the kernel could not be measured\">{}</error>\n",
                xml_escape(&failed)
            );
        }
        if !regressions.is_empty() {
            let n = regressions.lines().count();
            out += &format!(
                "      <failure type=\"regression\" message=\"{n} metric(s) regressed\">{}{}</failure>\n",
                xml_escape(&(HEADER.join("  ") + "\n")),
                xml_escape(&regressions)
            );
        }
        if !other.is_empty() {
            out += &format!("      <system-out>{}</system-out>\n", xml_escape(&other));
        }
        out += "    </testcase>\n";
    }
    out += "  </testsuite>\n</testsuites>\n";
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{Row, Summary};
    use crate::metric::{Group, Value};

    fn row(metric: &str, old: u64, new: u64, verdict: Verdict) -> Row {
        Row {
            key: "k/<odd> & \"name\".toml".into(),
            kernel: "vadd".into(),
            group: Group::of(metric),
            metric: metric.into(),
            device: None,
            old: Some(Value::Count(old)),
            new: Some(Value::Count(new)),
            rule: "exact".into(),
            verdict,
            note: None,
        }
    }

    fn comparison(rows: Vec<Row>) -> Comparison {
        Comparison {
            summary: Summary {
                kernels: 1,
                compared: rows.len(),
                regressions: rows
                    .iter()
                    .filter(|r| r.verdict == Verdict::Regression)
                    .count(),
                ..Summary::default()
            },
            rows,
        }
    }

    #[test]
    fn junit_escapes_names_and_groups_rows_into_cases() {
        let c = comparison(vec![
            row("W.total", 10, 12, Verdict::Regression),
            row("W.int", 5, 5, Verdict::Pass),
            row("Q.load", 8, 8, Verdict::Pass),
        ]);
        let xml = junit(&c);
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let cases: Vec<_> = doc
            .descendants()
            .filter(|n| n.has_tag_name("testcase"))
            .collect();
        assert_eq!(cases.len(), 2);
        assert_eq!(
            cases[0].attribute("classname"),
            Some("k/<odd> & \"name\".toml")
        );
        assert_eq!(cases[0].attribute("name"), Some("Q"));
        let failure = cases[1]
            .children()
            .find(|n| n.has_tag_name("failure"))
            .unwrap();
        assert_eq!(failure.attribute("message"), Some("1 metric(s) regressed"));
        assert!(failure
            .text()
            .unwrap()
            .contains("W.total  10  12  +2 (+20.00%)"));
        assert!(!failure.text().unwrap().contains("W.int"));
    }

    #[test]
    fn the_table_and_markdown_show_only_changes_unless_asked() {
        let c = comparison(vec![
            row("W.total", 10, 9, Verdict::Improvement),
            row("Q.load", 8, 8, Verdict::Pass),
        ]);
        let text = table(&c, false);
        assert!(
            text.contains("W.total") && !text.contains("Q.load"),
            "{text}"
        );
        assert!(table(&c, true).contains("Q.load"));
        let md = markdown(&c);
        assert!(md.contains("✅ passed"), "{md}");
        assert!(
            md.contains("| W.total | 10 | 9 | -1 (-10.00%) | exact | improvement |"),
            "{md}"
        );
    }
}
