//! The sections `clflow analyze` adds to a report, read back from the files
//! it writes beside results.json, so that `clflow report` draws them again.

use crate::launches::{launches_section, KernelLaunches};
use crate::source::{source_section, KernelSource};
use crate::split::{SplitReport, SECTION_HEADING};
use crate::traffic::{traffic_section, KernelTraffic};
use crate::{ReportError, ReportSection};
use clflow_predict::Predictions;
use serde::de::DeserializeOwned;
use std::fmt::Display;
use std::path::{Path, PathBuf};

/// The sections `clflow analyze` adds to its report, read back from the
/// files it writes beside results.json: "Traffic at a cache size" from
/// traffic.json, "Source lines" from lines.json, "Predicted time" from
/// predictions.json, "Kernels over
/// their launches" from launches.json and "CPU+GPU split (PerDome)" from
/// split.json. As for results, a later input's kernel on a device replaces
/// an earlier one's; a split is of one application on one pair of devices,
/// and launches sum one application's, so a later split.json or
/// launches.json replaces an earlier one whole.
#[derive(Debug, Default)]
pub struct ExtraSections {
    /// Present once some input had a traffic.json.
    traffic: Option<Vec<KernelTraffic>>,
    /// Present once some input had a lines.json.
    sources: Option<Vec<KernelSource>>,
    /// Present once some input had a predictions.json.
    predictions: Option<Vec<Predictions>>,
    /// The kernels over their launches, from the last launches.json.
    launches: Option<Vec<KernelLaunches>>,
    /// The split section drawn from the last split.json, and that file.
    split: Option<(PathBuf, ReportSection)>,
}

impl ExtraSections {
    /// Reads the section files beside `results` (those that exist) into
    /// what the earlier inputs gave; says in `notes` what it read and what
    /// it replaced.
    pub fn read_beside(
        &mut self,
        results: &Path,
        notes: &mut Vec<String>,
    ) -> Result<(), ReportError> {
        if let Some(kernels) = read_section_file(results, "traffic.json", notes)? {
            for replaced in merge_traffic(self.traffic.get_or_insert_default(), kernels) {
                notes.push(format!("{}: {replaced}", results.display()));
            }
        }
        if let Some(sources) = read_section_file::<Vec<KernelSource>>(results, "lines.json", notes)?
        {
            let into = self.sources.get_or_insert_default();
            for source in sources {
                if let Some(earlier) = into.iter_mut().find(|k| k.kernel == source.kernel) {
                    notes.push(format!(
                        "{}: the source lines of {}: replaced",
                        results.display(),
                        source.kernel
                    ));
                    *earlier = source;
                } else {
                    into.push(source);
                }
            }
        }
        if let Some(predictions) = read_section_file(results, "predictions.json", notes)? {
            for replaced in merge_predictions(self.predictions.get_or_insert_default(), predictions)
            {
                notes.push(format!("{}: {replaced}", results.display()));
            }
        }
        if let Some(launches) = read_section_file(results, "launches.json", notes)? {
            self.launches = Some(launches);
        }
        if let Some(report) = read_section_file::<SplitReport>(results, "split.json", notes)? {
            let path = results.with_file_name("split.json");
            // Drawn now, so that a document whose bounds cannot be drawn
            // is refused with its file's name.
            let split = report
                .split()
                .map_err(|e| not_written_by_analyze(path.display(), "split.json", e))?;
            // analyze's preface names the pair among the devices it
            // analyzed; split.json does not hold them.
            let section = split.report_section("")?;
            if let Some((earlier, _)) = self.split.replace((path.clone(), section)) {
                notes.push(format!(
                    "{}: the {SECTION_HEADING} section from {}: replaced",
                    path.display(),
                    earlier.display()
                ));
            }
        }
        Ok(())
    }

    /// The sections to write after the charts, in the order `clflow
    /// analyze` writes them.
    pub fn sections(self) -> Vec<ReportSection> {
        let traffic = self.traffic.as_deref().and_then(traffic_section);
        let sources = self.sources.as_deref().and_then(source_section);
        let predictions = self
            .predictions
            .as_deref()
            .map(crate::prediction::report_section);
        let launches = self.launches.as_deref().and_then(launches_section);
        launches
            .into_iter()
            .chain(traffic)
            .chain(sources)
            .chain(predictions)
            .map(ReportSection::from)
            .chain(self.split.map(|(_, section)| section))
            .collect()
    }
}

/// `name` in the directory of `results`, parsed; `None` where there is no
/// such file. A file that is there but does not parse is an input error.
fn read_section_file<T: DeserializeOwned>(
    results: &Path,
    name: &str,
    notes: &mut Vec<String>,
) -> Result<Option<T>, ReportError> {
    let path = results.with_file_name(name);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ReportError::SectionRead { path, source }),
    };
    let parsed = serde_json::from_str(&text).map_err(|e| {
        let at = format!("{}:{}:{}", path.display(), e.line(), e.column());
        not_written_by_analyze(at, name, e)
    })?;
    notes.push(format!("{}: read", path.display()));
    Ok(Some(parsed))
}

/// The section file `name` at `at` (its path, and line where known) is not
/// what `clflow analyze` writes, `why`.
fn not_written_by_analyze(at: impl Display, name: &str, why: impl Display) -> ReportError {
    ReportError::Section {
        at: at.to_string(),
        name: name.to_string(),
        why: why.to_string(),
    }
}

/// Adds `from`'s kernels to `into`: a device a kernel already has is
/// replaced, with the kernel's W. Says what was replaced.
fn merge_traffic(into: &mut Vec<KernelTraffic>, from: Vec<KernelTraffic>) -> Vec<String> {
    let mut replaced = Vec::new();
    for kernel in from {
        let Some(known) = into.iter_mut().find(|k| k.kernel == kernel.kernel) else {
            into.push(kernel);
            continue;
        };
        known.work = kernel.work;
        for device in kernel.devices {
            match known.devices.iter_mut().find(|d| d.device == device.device) {
                Some(slot) => {
                    replaced.push(format!(
                        "traffic of `{}` on `{}`: replaced",
                        kernel.kernel, device.device
                    ));
                    *slot = device;
                }
                None => known.devices.push(device),
            }
        }
    }
    replaced
}

/// Adds `from`'s predictions to `into`: one for a kernel and device `into`
/// has replaces it; a new one goes after its kernel's others, so that each
/// kernel's predictions stay together (the section draws one chart per
/// kernel from them). Says what was replaced.
fn merge_predictions(into: &mut Vec<Predictions>, from: Vec<Predictions>) -> Vec<String> {
    let mut replaced = Vec::new();
    for p in from {
        if let Some(slot) = into
            .iter_mut()
            .find(|q| q.kernel == p.kernel && q.device == p.device)
        {
            replaced.push(format!(
                "predictions of `{}` on `{}`: replaced",
                p.kernel, p.device
            ));
            *slot = p;
            continue;
        }
        let at = into
            .iter()
            .rposition(|q| q.kernel == p.kernel)
            .map_or(into.len(), |last| last + 1);
        into.insert(at, p);
    }
    replaced
}

#[cfg(test)]
mod tests {
    use super::*;
    use clflow_core::Diagnostic;
    use clflow_traffic::{
        CacheSpec, CoalescingSummary, DeviceTraffic, DramTraffic, PatternCounts, TrafficSummary,
    };

    fn device(name: &str, read_bytes: u64) -> DeviceTraffic {
        let dram = DramTraffic { read_bytes, ..DramTraffic::default() };
        DeviceTraffic {
            device: name.into(),
            cache_source: "test".into(),
            summary: TrafficSummary {
                cache: CacheSpec { bytes: 1 << 14, line_bytes: 64 },
                accessed_bytes: read_bytes,
                compulsory: dram,
                dram,
                curve: Vec::new(),
                sampled_one_in: None,
                sampled_after: None,
                coalescing: CoalescingSummary {
                    line_bytes: 64,
                    bytes: PatternCounts::default(),
                    accesses: PatternCounts::default(),
                    sites: Vec::new(),
                    stretch_lines: 0,
                    page_walkers: 0,
                    page_walk_bytes: 0,
                },
            },
            levels: Vec::new(),
            cache_gathers: None,
            cache_gather_table: None,
            order: None,
        }
    }

    fn kernel(name: &str, work: u64, devices: Vec<DeviceTraffic>) -> KernelTraffic {
        KernelTraffic { kernel: name.into(), work, devices }
    }

    /// Predictions with every model skipped, as predictions.json holds them.
    fn predictions(kernel: &str, device: &str, time_s: f64) -> Predictions {
        let skipped = serde_json::json!({ "skipped": "test" });
        serde_json::from_value(serde_json::json!({
            "kernel": kernel,
            "device": device,
            "measured": { "time_s": time_s, "energy_j": null },
            "roofline": skipped,
            "boat_hull": skipped,
            "quantitative": skipped,
            "energy": skipped,
        }))
        .unwrap()
    }

    #[test]
    fn later_traffic_replaces_a_kernels_device_and_adds_the_rest() {
        let mut into = vec![kernel("a", 10, vec![device("x", 1), device("y", 2)])];
        let replaced = merge_traffic(
            &mut into,
            vec![
                kernel("a", 20, vec![device("y", 3), device("z", 4)]),
                kernel("b", 30, vec![device("x", 5)]),
            ],
        );
        assert_eq!(replaced, ["traffic of `a` on `y`: replaced"]);
        assert_eq!(
            into,
            [
                kernel(
                    "a",
                    20,
                    vec![device("x", 1), device("y", 3), device("z", 4)]
                ),
                kernel("b", 30, vec![device("x", 5)]),
            ]
        );
    }

    #[test]
    fn later_predictions_replace_theirs_and_keep_each_kernel_together() {
        let mut into = vec![predictions("a", "x", 1.0), predictions("b", "x", 2.0)];
        let replaced = merge_predictions(
            &mut into,
            vec![
                predictions("b", "x", 3.0),
                predictions("a", "y", 4.0),
                predictions("c", "x", 5.0),
            ],
        );
        assert_eq!(replaced, ["predictions of `b` on `x`: replaced"]);
        let order: Vec<(&str, &str, Option<f64>)> = into
            .iter()
            .map(|p| (p.kernel.as_str(), p.device.as_str(), p.measured.time_s))
            .collect();
        assert_eq!(
            order,
            [
                ("a", "x", Some(1.0)),
                ("a", "y", Some(4.0)),
                ("b", "x", Some(3.0)),
                ("c", "x", Some(5.0)),
            ]
        );
    }

    #[test]
    fn a_section_file_that_does_not_parse_names_itself() {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("results.json");
        let none: Option<Vec<Predictions>> =
            read_section_file(&results, "predictions.json", &mut Vec::new()).unwrap();
        assert!(none.is_none(), "no file, no section");
        std::fs::write(dir.path().join("predictions.json"), "[{\"kernel\": 1}]").unwrap();
        let failure =
            read_section_file::<Vec<Predictions>>(&results, "predictions.json", &mut Vec::new())
                .unwrap_err();
        assert_eq!(Diagnostic::kind(&failure), clflow_core::FailureKind::Input);
        let path = dir.path().join("predictions.json");
        let message = failure.to_string();
        assert!(
            message.starts_with(&format!(
                "{}:1:13: not the predictions.json",
                path.display()
            )),
            "{message}"
        );
    }
}
