//! `check`'s job: load a suite (or a capture), hold it to its baseline's
//! settings, and measure every manifest it names: counts (through the
//! suite's cache, if it has one), timings on devices or from recorded
//! results, and the history entries of both.

use crate::count::{interpret, Watch};
use crate::device::time_for_check;
use crate::{capture, history, input, Error, Result, Session};
use clflow_check::{
    count_metrics, device_metrics, Baseline, Measurement, Suite, SuiteManifest, TimedRun,
};
use clflow_core::FailureKind;
use clflow_history::Entry;
use clflow_interp::{OpSet, RunOptions};
use clflow_metrics::ResultSet;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A suite file, or a capture taken as the suite of its launches.
pub fn load_suite(path: &Path) -> Result<Suite> {
    if capture::is_capture(path) {
        let (_, dir) = capture::read_capture(path)?;
        let manifests = capture::expand(std::slice::from_ref(&path.to_path_buf()))?;
        Ok(Suite::of_capture(&dir, manifests))
    } else {
        Ok(Suite::load(path)?)
    }
}

/// The baseline at `path`: `None` where `--update` is about to write the
/// first one. One recorded with other settings than the suite's is an
/// input error, since its numbers would not be comparable.
pub fn load_baseline(path: &Path, suite: &Suite, update: bool) -> Result<Option<Baseline>> {
    let baseline = match Baseline::load(path) {
        Ok(b) => b,
        Err(_) if update && !path.exists() => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let same = baseline.ops == suite.ops
        && baseline.line_bytes == suite.line_bytes
        && baseline.recorded_with_cache(suite.cache);
    if !update && !same {
        let suite_cache = suite.cache.map(|c| c.to_string());
        return Err(Error::input(format!(
            "{}: recorded with ops = \"{}\", line_bytes = {}, cache = {}; the suite asks for ops = \"{}\", line_bytes = {}, cache = {}",
            path.display(),
            baseline.ops,
            baseline.line_bytes,
            quoted_or_none(baseline.cache.as_deref()),
            suite.ops,
            suite.line_bytes,
            quoted_or_none(suite_cache.as_deref())
        ))
        .with_hint("record the baseline again with --update"));
    }
    Ok(Some(baseline))
}

/// `"32KiB/64"`, or `none`.
fn quoted_or_none(text: Option<&str>) -> String {
    text.map_or("none".into(), |t| format!("\"{t}\""))
}

/// What measuring a suite gave: one measurement per manifest (a failed one
/// carries its message), the history entries, and the first failure that
/// was the input's fault.
pub struct SuiteRun {
    pub measured: Vec<Measurement>,
    pub entries: Vec<Entry>,
    pub input_failure: Option<String>,
}

/// Measures every manifest of `suite` (read from `suite_path`): counts,
/// and timings where `devices` are named or `results` recorded.
pub fn measure_suite(
    suite: &Suite,
    suite_path: &Path,
    devices: &[String],
    results: &[PathBuf],
    session: &Session,
) -> Result<SuiteRun> {
    let door = format!("{}: ops", suite_path.display());
    let ops: OpSet = crate::count::parse_ops_in(&suite.ops, &door)?;
    let recorded = results
        .iter()
        .map(|path| clflow_metrics::read_input(path).map_err(Error::from))
        .collect::<Result<Vec<_>>>()?;
    let timing = !devices.is_empty() || !results.is_empty();
    let commit = history::commit_beside(suite_path);
    let mut run = SuiteRun {
        measured: Vec::new(),
        entries: Vec::new(),
        input_failure: None,
    };
    for manifest in &suite.manifests {
        session
            .observer()
            .note(format!("checking {}", manifest.key));
        match measure(manifest, suite, &ops, devices, &recorded, session) {
            Ok((measurement, entries)) => {
                run.measured.push(Measurement {
                    devices: measurement.devices.filter(|_| timing),
                    ..measurement
                });
                run.entries.extend(entries.into_iter().map(|mut e| {
                    e.op_set = Some(suite.ops.clone());
                    e.git_commit = commit.clone();
                    e
                }));
            }
            Err(failure) => {
                if failure.kind == FailureKind::Input {
                    run.input_failure.get_or_insert(failure.message.clone());
                }
                run.measured.push(Measurement {
                    key: manifest.key.clone(),
                    kernel: String::new(),
                    counts: Err(failure.message),
                    devices: None,
                });
            }
        }
    }
    Ok(run)
}

/// Counts one manifest (through the suite's cache, if it has one), gathers
/// its timings, and builds its history entries.
fn measure(
    manifest: &SuiteManifest,
    suite: &Suite,
    ops: &OpSet,
    devices: &[String],
    recorded: &[ResultSet],
    session: &Session,
) -> Result<(Measurement, Vec<Entry>)> {
    let input = input::prepare(
        &manifest.path,
        "",
        true,
        input::ClangWarnings::Note,
        session,
    )?;
    let launch = input
        .manifest
        .as_ref()
        .ok_or_else(|| Error::input(format!("{}: not a manifest", manifest.path.display())))?
        .materialize()?;
    let options =
        input.run_options(&RunOptions { line_bytes: suite.line_bytes, ..RunOptions::default() });
    // The launch is lent, not given: the device timer still needs its inputs.
    let counted = interpret(
        &manifest.path,
        &input.module,
        Cow::Borrowed(&launch),
        &options,
        Watch::at_cache(suite.cache),
        session.observer(),
    )?;
    let traffic = counted.at_cache(suite.cache);
    let result = counted.run;
    let report = result.counts.report(ops);
    let counts = count_metrics(&report, traffic.as_ref());

    let mut runs: Vec<TimedRun> = recorded_runs(recorded, &launch.kernel);
    if !devices.is_empty() {
        runs.extend(time_for_check(
            &input,
            &launch,
            &result.buffers,
            devices,
            session,
        )?);
    }
    let mut by_device: BTreeMap<String, Vec<&TimedRun>> = BTreeMap::new();
    for run in &runs {
        by_device
            .entry(run.run.device.clone())
            .or_default()
            .push(run);
    }
    let device_metrics: BTreeMap<_, _> = by_device
        .iter()
        .map(|(device, runs)| (device.clone(), device_metrics(report.w.total, runs)))
        .collect();

    let base = history::entry("check", &launch.kernel, &manifest.path, &input.source);
    let mut entries = vec![Entry {
        metrics: counts
            .iter()
            .map(|(name, value)| history::metric(name, value.as_f64()))
            .collect(),
        ..base.clone()
    }];
    for (device, metrics) in &device_metrics {
        entries.push(Entry {
            device: Some(device.clone()),
            driver: by_device[device].iter().find_map(|r| r.driver.clone()),
            metrics: metrics
                .iter()
                .map(|(name, sampled)| history::metric(name, sampled.value))
                .collect(),
            ..base.clone()
        });
    }
    let measurement = Measurement {
        key: manifest.key.clone(),
        kernel: launch.kernel.clone(),
        counts: Ok(counts),
        devices: Some(device_metrics),
    };
    Ok((measurement, entries))
}

/// Every recorded run of `kernel` that has a time.
fn recorded_runs(recorded: &[ResultSet], kernel: &str) -> Vec<TimedRun> {
    recorded
        .iter()
        .flat_map(|set| set.runs.iter())
        .filter(|run| run.kernel == kernel && run.time.is_some())
        .map(|run| TimedRun { run: run.clone(), driver: None, time_spread: None })
        .collect()
}
