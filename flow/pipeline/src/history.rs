//! The entries `run`, `analyze` and `check` append to the history store.

use crate::device::DeviceRun;
use crate::Observer;
use clflow_history::{Entry, Metric};
use sha2::{Digest, Sha256};
use std::path::Path;

fn sha256_of(path: &Path) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|bytes| hex::encode(Sha256::digest(&bytes)))
}

/// An entry of `command` for `kernel`, stamped with the manifest and source
/// it came from (paths canonical, contents hashed) and the git commit.
pub fn entry(command: &str, kernel: &str, manifest: &Path, source: &Path) -> Entry {
    let mut entry = Entry::new(command, kernel);
    let path = std::fs::canonicalize(manifest).unwrap_or_else(|_| manifest.to_path_buf());
    entry.manifest_path = Some(path.display().to_string());
    entry.manifest_sha256 = sha256_of(manifest);
    entry.source_sha256 = sha256_of(source);
    entry.git_commit = commit_beside(manifest);
    entry
}

/// The git commit of the checkout a file is in, if it is in one.
pub fn commit_beside(file: &Path) -> Option<String> {
    let dir = file.parent()?;
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    clflow_history::git_commit(dir)
}

/// A metric named as `clflow check` names it (`W.total`, `T`, ...), with its unit.
pub fn metric(name: &str, value: f64) -> Metric {
    let unit = clflow_check::Group::of(name).map(clflow_check::Group::unit);
    Metric::new(name, value, unit)
}

/// Appends to the history store; a store that cannot be written costs the
/// history, not the command.
pub fn record(store: Option<&Path>, entries: &[Entry], observer: &dyn Observer) {
    if entries.is_empty() {
        return;
    }
    let outcome = clflow_history::store_path(store)
        .and_then(|path| clflow_history::record(&path, entries).map(|_| path));
    match outcome {
        Ok(path) => observer.detail(format!(
            "history: {} entries appended to {}",
            entries.len(),
            path.display()
        )),
        Err(e) => observer.note(format!("clflow: warning: history not recorded: {e}")),
    }
}

/// The device metrics of a run as `check` compares them, for the history.
pub fn history_entry(
    command: &str,
    manifest: &Path,
    source: &Path,
    run: &DeviceRun,
) -> clflow_history::Entry {
    let mut entry = entry(command, &run.kernel, manifest, source);
    entry.device = Some(run.device.clone());
    entry.driver = Some(run.driver.clone());
    entry.metrics.push(metric("T", run.timing.median_s));
    entry
}
