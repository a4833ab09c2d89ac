//! Power measured outside clflow (an FPGA vendor's tools, a wall meter),
//! imported from CSV.
//!
//! The file has a header naming four columns, in any order:
//!
//! ```text
//! device,kernel,time_s,watts
//! ADM-PCIE-7V3,lookup3,0.00,17.9
//! ADM-PCIE-7V3,lookup3,0.10,24.6
//! ADM-PCIE-7V3,bandwidth,,25.0
//! ```
//!
//! `device` is a case-insensitive part of the OpenCL device name; `kernel`
//! a kernel or benchmark name, or `*` for any. Rows with a `time_s` (seconds,
//! non-decreasing within a device and kernel) form a trace; one row with an
//! empty `time_s` states a peak value. Lines starting with `#` are comments.

use super::{PowerSample, PowerSensor, PowerSource, PowerTrace, SensorError};
use crate::error::{DevicesError, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

const COLUMNS: [&str; 4] = ["device", "kernel", "time_s", "watts"];

/// The imported power of one device and kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedPower {
    pub device: String,
    pub kernel: String,
    /// Empty when the file states only a peak.
    pub samples: Vec<PowerSample>,
    pub peak_w: f64,
    /// The line of its first row.
    pub line: usize,
}

/// A parsed power CSV.
#[derive(Debug, Clone, PartialEq)]
pub struct PowerImport {
    pub file: PathBuf,
    pub entries: Vec<ImportedPower>,
}

impl PowerImport {
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| DevicesError::input_io(path.display(), &e))?;
        Self::parse(&text, path)
    }

    pub fn parse(text: &str, file: &Path) -> Result<Self> {
        let fail = |line: usize, message: String| DevicesError::PowerImport {
            file: file.display().to_string(),
            line,
            message,
        };
        let mut reader = csv::ReaderBuilder::new()
            .comment(Some(b'#'))
            .trim(csv::Trim::All)
            .from_reader(text.as_bytes());
        let headers = reader
            .headers()
            .map_err(|e| fail(1, format!("unreadable header: {e}")))?
            .clone();
        // The header is the first line that is neither blank nor a comment.
        let header_line = text
            .lines()
            .position(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map_or(1, |i| i + 1);
        let mut column = [0usize; 4];
        for (slot, wanted) in column.iter_mut().zip(COLUMNS) {
            *slot = headers.iter().position(|h| h == wanted).ok_or_else(|| {
                fail(
                    header_line,
                    format!(
                        "the header lacks the column `{wanted}` (it has: {})",
                        headers.iter().collect::<Vec<_>>().join(", ")
                    ),
                )
            })?;
        }
        if let Some(extra) = headers.iter().find(|h| !COLUMNS.contains(h)) {
            return Err(fail(
                header_line,
                format!(
                    "unknown column `{extra}`; the columns are {}",
                    COLUMNS.join(", ")
                ),
            ));
        }
        let mut entries: Vec<ImportedPower> = Vec::new();
        for record in reader.records() {
            let record = record.map_err(|e| {
                let line = e.position().map_or(0, |p| p.line() as usize);
                fail(line, e.to_string())
            })?;
            let line = record.position().map_or(0, |p| p.line() as usize);
            let field = |i: usize| record.get(column[i]).unwrap_or("");
            let (device, kernel) = (field(0), field(1));
            if device.is_empty() || kernel.is_empty() {
                return Err(fail(line, "`device` and `kernel` must not be empty".into()));
            }
            let watts = number(field(3)).filter(|w| *w >= 0.0).ok_or_else(|| {
                fail(
                    line,
                    format!("`watts` must be a number ≥ 0, not '{}'", field(3)),
                )
            })?;
            let time = match field(2) {
                "" => None,
                t => Some(number(t).filter(|t| *t >= 0.0).ok_or_else(|| {
                    fail(
                        line,
                        format!("`time_s` must be empty or a number ≥ 0, not '{t}'"),
                    )
                })?),
            };
            let existing = entries
                .iter_mut()
                .find(|e| e.device == device && e.kernel == kernel);
            match (existing, time) {
                (None, time) => entries.push(ImportedPower {
                    device: device.to_string(),
                    kernel: kernel.to_string(),
                    samples: time
                        .map(|t_s| vec![PowerSample { t_s, watts }])
                        .unwrap_or_default(),
                    peak_w: watts,
                    line,
                }),
                (Some(entry), Some(t_s)) if !entry.samples.is_empty() => {
                    let last = entry.samples.last().map_or(0.0, |s| s.t_s);
                    if t_s < last {
                        return Err(fail(
                            line,
                            format!("`time_s` {t_s} goes back in time (the previous row of {device}/{kernel} says {last})"),
                        ));
                    }
                    entry.samples.push(PowerSample { t_s, watts });
                    entry.peak_w = entry.peak_w.max(watts);
                }
                (Some(entry), _) => {
                    return Err(fail(
                        line,
                        format!(
                            "{device}/{kernel} already has {} on line {}; give either timed samples or one peak value",
                            if entry.samples.is_empty() { "a peak value" } else { "timed samples" },
                            entry.line
                        ),
                    ))
                }
            }
        }
        if entries.is_empty() {
            return Err(fail(header_line, "the file holds no power row".into()));
        }
        Ok(PowerImport { file: file.to_path_buf(), entries })
    }

    /// Whether any row names this OpenCL device.
    pub fn names_device(&self, device_name: &str) -> bool {
        self.entries.iter().any(|e| names(&e.device, device_name))
    }

    /// The power of a kernel on a device; an exact kernel row beats `*`.
    pub fn find(&self, device_name: &str, kernel: &str) -> Option<&ImportedPower> {
        let on_device = || {
            self.entries
                .iter()
                .filter(|e| names(&e.device, device_name))
        };
        on_device()
            .find(|e| e.kernel == kernel)
            .or_else(|| on_device().find(|e| e.kernel == "*"))
    }
}

fn number(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

fn names(pattern: &str, device_name: &str) -> bool {
    device_name.to_lowercase().contains(&pattern.to_lowercase())
}

/// Serves imported power for one device: `stop` returns the imported trace of
/// the kernel named at `start`. Its timestamps are the file's, not the run's.
pub struct ImportSensor {
    import: Arc<PowerImport>,
    device_name: String,
    running: Option<(String, Instant)>,
}

impl ImportSensor {
    pub fn new(import: Arc<PowerImport>, device_name: &str) -> Self {
        ImportSensor { import, device_name: device_name.to_string(), running: None }
    }
}

impl PowerSensor for ImportSensor {
    fn source(&self) -> PowerSource {
        PowerSource::Import
    }

    fn describe(&self) -> String {
        format!("imported from {}", self.import.file.display())
    }

    fn start(&mut self, kernel: &str) -> Result<(), SensorError> {
        if self.import.find(&self.device_name, kernel).is_none() {
            return Err(SensorError::new(
                PowerSource::Import,
                format!(
                    "{} has no row for device '{}' and kernel '{kernel}' (nor kernel '*')",
                    self.import.file.display(),
                    self.device_name
                ),
            ));
        }
        self.running = Some((kernel.to_string(), Instant::now()));
        Ok(())
    }

    fn stop(&mut self) -> Result<PowerTrace, SensorError> {
        let Some((kernel, started)) = self.running.take() else {
            return Err(SensorError::new(
                PowerSource::Import,
                "stopped without a start",
            ));
        };
        let entry = self
            .import
            .find(&self.device_name, &kernel)
            .ok_or_else(|| SensorError::new(PowerSource::Import, "the imported row vanished"))?;
        let mean_w = if entry.samples.is_empty() {
            None
        } else {
            Some(entry.samples.iter().map(|s| s.watts).sum::<f64>() / entry.samples.len() as f64)
        };
        Ok(PowerTrace {
            source: PowerSource::Import,
            sensor: format!("{} line {}", self.describe(), entry.line),
            kernel,
            duration_s: started.elapsed().as_secs_f64(),
            samples: entry.samples.clone(),
            peak_w: Some(entry.peak_w),
            mean_w,
            energy_j: None,
            notes: vec!["measured outside clflow; its timestamps are the file's".into()],
        })
    }
}
