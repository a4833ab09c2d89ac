//! `clflow count --lines`: the kernel's source with what each line did
//! beside it, the hottest lines first.

use crate::{group_digits, CountReport, LineReport, SourceLine};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Lines the summary lists.
const HOTTEST: usize = 5;

/// What the cache simulation says of one line, where it ran: how its
/// global accesses coalesce, and its DRAM bytes through the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineCache {
    pub pattern: String,
    pub dram_bytes: Option<u64>,
}

/// The annotated source of a count. `source` reads a file the module names
/// (`None` where it cannot: the columns are printed without the text);
/// `caches`, where the cache simulation ran, says how each line's global
/// accesses coalesce and what they cost in DRAM (PATTERN and DRAM columns).
pub fn render_lines(
    report: &CountReport,
    source: &dyn Fn(&str) -> Option<String>,
    caches: &BTreeMap<SourceLine, LineCache>,
) -> String {
    let mut out = String::new();
    if report.lines.is_empty() {
        out += "No source lines: the module names none (a SPIR-V module given without OpLine, \
                or a build that fell back without line tables; -v says which).\n";
        return out;
    }
    let (w, q) = (report.w.total, report.q.accessed);
    let share = |part: u64, whole: u64| match whole {
        0 => "-".to_string(),
        _ => format!("{:.1}", 100.0 * part as f64 / whole as f64),
    };
    let mut files: BTreeMap<&str, Vec<&LineReport>> = BTreeMap::new();
    for line in &report.lines {
        if let (Some(file), Some(_)) = (&line.file, line.line) {
            files.entry(file).or_default().push(line);
        }
    }
    let texts: BTreeMap<&str, Option<Vec<String>>> = files
        .keys()
        .map(|f| {
            (
                *f,
                source(f).map(|t| t.lines().map(str::to_string).collect()),
            )
        })
        .collect();
    let text_of = |l: &LineReport| -> String {
        let (Some(file), Some(n)) = (&l.file, l.line) else {
            return String::new();
        };
        texts
            .get(file.as_str())
            .and_then(|t| t.as_ref()?.get(n.checked_sub(1)? as usize).cloned())
            .unwrap_or_default()
    };

    let _ = writeln!(
        out,
        "Source lines: W ({}) {} ops, Q {} bytes (global and constant, loaded and stored)\n",
        report.w.set,
        group_digits(w),
        group_digits(q)
    );
    let mut hot: Vec<&LineReport> = report.lines.iter().filter(|l| !l.is_idle()).collect();
    let weight = |l: &LineReport| ratio(l.w, w) + ratio(l.q(), q);
    hot.sort_by(|a, b| weight(b).total_cmp(&weight(a)));
    // Columns as wide as the totals they add up to.
    let ww = group_digits(w).len().max(1);
    let qw = group_digits(q).len().max(6);
    let hottest: Vec<&LineReport> = hot.iter().take(HOTTEST).copied().collect();
    let pw = hottest
        .iter()
        .map(|l| l.place().len())
        .max()
        .unwrap_or(4)
        .max(4);
    let _ = writeln!(out, "Hottest lines:");
    let _ = writeln!(
        out,
        "  {:<pw$}  {:>ww$} {:>6}  {:>qw$} {:>6}  SOURCE",
        "LINE", "W", "W %", "Q", "Q %"
    );
    for l in hottest {
        let _ = writeln!(
            out,
            "  {:<pw$}  {:>ww$} {:>6}  {:>qw$} {:>6}  {}",
            l.place(),
            group_digits(l.w),
            share(l.w, w),
            group_digits(l.q()),
            share(l.q(), q),
            text_of(l).trim()
        );
    }

    // The pattern and DRAM columns, where the cache simulation ran.
    let cache_of = |file: &str, n: u32| caches.get(&SourceLine { file: file.to_string(), line: n });
    let pt = caches
        .values()
        .map(|c| c.pattern.len())
        .max()
        .map(|w| w.max(7));
    let dram = caches.values().any(|c| c.dram_bytes.is_some());
    for (file, lines) in &files {
        let _ = writeln!(out, "\n{file}");
        let mut pattern_header = pt.map_or(String::new(), |pt| format!("  {:<pt$}", "PATTERN"));
        if dram {
            pattern_header = format!("  {:>qw$}{pattern_header}", "DRAM");
        }
        let _ = writeln!(
            out,
            "  {:>5}  {:>ww$} {:>6}  {:>qw$} {:>qw$} {:>6}{pattern_header}  SOURCE",
            "LINE", "W", "W %", "LOADED", "STORED", "Q %"
        );
        let by_number: BTreeMap<u32, &LineReport> =
            lines.iter().filter_map(|l| Some((l.line?, *l))).collect();
        let first = by_number.keys().next().copied().unwrap_or(1);
        let last = by_number.keys().last().copied().unwrap_or(0);
        let text = texts.get(file).and_then(Option::as_ref);
        for n in first..=last {
            let code = text
                .and_then(|t| t.get((n as usize).checked_sub(1)?))
                .map_or("", String::as_str);
            let cells = match by_number.get(&n).filter(|l| !l.is_idle()) {
                Some(l) => [
                    group_digits(l.w),
                    share(l.w, w),
                    group_digits(l.global_load_bytes + l.constant_load_bytes),
                    group_digits(l.global_store_bytes),
                    share(l.q(), q),
                ],
                None => Default::default(),
            };
            let [lw, lws, loaded, stored, lqs] = cells;
            let cache = cache_of(file, n).filter(|_| !lw.is_empty());
            let mut pattern = pt.map_or(String::new(), |pt| {
                format!("  {:<pt$}", cache.map_or("", |c| c.pattern.as_str()))
            });
            if dram {
                let bytes = cache
                    .and_then(|c| c.dram_bytes)
                    .map_or(String::new(), group_digits);
                pattern = format!("  {bytes:>qw$}{pattern}");
            }
            let _ = writeln!(
                out,
                "  {n:>5}  {lw:>ww$} {lws:>6}  {loaded:>qw$} {stored:>qw$} {lqs:>6}{pattern}  {code}"
            );
        }
    }
    if let Some(l) = report
        .lines
        .iter()
        .find(|l| l.line.is_none() && !l.is_idle())
    {
        let _ = writeln!(
            out,
            "\nNo line: W {} ({} %), Q {} bytes ({} %): operations the module places on no line",
            group_digits(l.w),
            share(l.w, w),
            group_digits(l.q()),
            share(l.q(), q)
        );
    }
    out
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}
