//! The SQLite store: opening (with migration), appending, and reading back.
//!
//! Writers are safe to run side by side and to be killed: the store is in
//! WAL mode, every write is one transaction taken with `BEGIN IMMEDIATE`, and
//! a writer that finds the store locked waits (busy timeout) rather than
//! failing.

use crate::error::{HistoryError, Result};
use crate::schema;
use rusqlite::{params, Connection, Transaction, TransactionBehavior};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a writer waits for another to finish before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// One metric of a record, in base units (operations, bytes, seconds, ...).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metric {
    pub name: String,
    pub value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

impl Metric {
    pub fn new(name: impl Into<String>, value: f64, unit: Option<&str>) -> Self {
        Metric { name: name.into(), value, unit: unit.map(str::to_string) }
    }
}

/// What one `run`, `analyze` or `check` learnt about one kernel (on one
/// device, or counted by the interpreter when `device` is `None`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// The clflow command that made it: "check", "run", "analyze".
    pub command: String,
    pub kernel: String,
    /// Seconds since the Unix epoch.
    pub recorded_at: i64,
    pub manifest_path: Option<String>,
    pub manifest_sha256: Option<String>,
    pub source_sha256: Option<String>,
    pub op_set: Option<String>,
    pub device: Option<String>,
    pub driver: Option<String>,
    pub clflow_version: String,
    pub git_commit: Option<String>,
    pub metrics: Vec<Metric>,
}

impl Entry {
    /// An entry made now by this clflow; fill in what else is known.
    pub fn new(command: impl Into<String>, kernel: impl Into<String>) -> Self {
        Entry {
            command: command.into(),
            kernel: kernel.into(),
            recorded_at: crate::location::now(),
            manifest_path: None,
            manifest_sha256: None,
            source_sha256: None,
            op_set: None,
            device: None,
            driver: None,
            clflow_version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: None,
            metrics: Vec::new(),
        }
    }
}

/// A stored entry, as read back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    pub id: i64,
    /// ISO 8601, UTC.
    pub recorded: String,
    #[serde(flatten)]
    pub entry: Entry,
}

impl Point {
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.entry
            .metrics
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.value)
    }

    /// The metric as the reports write it: `802 ns`, `49,152 bytes`.
    pub fn metric_text(&self, name: &str) -> Option<String> {
        let metric = self.entry.metrics.iter().find(|m| m.name == name)?;
        Some(value_text(metric.value, metric.unit.as_deref()))
    }
}

/// A recorded value in its unit as the reports write it: counts with
/// thousands separators, times, energies and rates with SI prefixes.
pub fn value_text(value: f64, unit: Option<&str>) -> String {
    use clflow_metrics::Unit;
    let unit = match unit {
        Some("ops") | Some("bytes") if value.fract() == 0.0 && value >= 0.0 => {
            return format!(
                "{} {}",
                clflow_core::numbers::group_digits(value as u64),
                unit.unwrap_or_default()
            );
        }
        Some("s") => Unit::Seconds,
        Some("J") => Unit::Joules,
        Some("W") => Unit::Watts,
        Some("ops/s") => Unit::OpsPerSecond,
        Some("ops/s/W") => Unit::OpsPerSecondPerWatt,
        Some("OPS/B") => Unit::OpsPerByte,
        _ => return clflow_metrics::format_number(value),
    };
    unit.format(value)
}

/// One kernel the store knows, for the overview.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelSummary {
    pub kernel: String,
    pub entries: u64,
    pub devices: Vec<String>,
    pub last_recorded: String,
}

/// Which entries a trend shows.
#[derive(Debug, Clone, Default)]
pub struct TrendQuery {
    pub kernel: String,
    /// Devices whose name contains this (case-insensitive); `None`: all
    /// entries, interpreter counts included.
    pub device: Option<String>,
    /// The most recent this many, oldest first.
    pub limit: Option<usize>,
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// Why an open failed: the store was locked (worth another try), or not.
enum Opening {
    Locked(rusqlite::Error),
    Failed(HistoryError),
}

impl Opening {
    fn of(path: &Path, e: rusqlite::Error) -> Opening {
        use rusqlite::ErrorCode::{DatabaseBusy, DatabaseLocked};
        match e.sqlite_error_code() {
            Some(DatabaseBusy | DatabaseLocked) => Opening::Locked(e),
            _ => Opening::Failed(HistoryError::store(path, e)),
        }
    }
}

impl Store {
    /// Opens (creating it and its directory if needed) and migrates the
    /// store at `path`; refuses one from a newer clflow. Two processes
    /// opening a new store at once can find it locked where SQLite does not
    /// wait (switching a new file to WAL, upgrading a read lock): the opener
    /// that finds it so tries again, until the busy timeout.
    pub fn open(path: &Path) -> Result<Store> {
        let started = Instant::now();
        for attempt in 0u64.. {
            match Self::try_open(path) {
                Err(Opening::Locked(_)) if started.elapsed() < BUSY_TIMEOUT => {
                    // Apart in time from the other opener, whatever its rhythm.
                    let wait = 5 + (attempt * 7 + u64::from(std::process::id())) % 40;
                    std::thread::sleep(Duration::from_millis(wait));
                }
                Err(Opening::Locked(e)) => return Err(HistoryError::store(path, e)),
                Err(Opening::Failed(e)) => return Err(e),
                Ok(store) => return Ok(store),
            }
        }
        unreachable!("the attempts are endless")
    }

    fn try_open(path: &Path) -> std::result::Result<Store, Opening> {
        let fail = |e: &dyn std::fmt::Display| Opening::Failed(HistoryError::store(path, e));
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| fail(&format!("cannot create {}: {e}", dir.display())))?;
        }
        let sqlite = |e: rusqlite::Error| Opening::of(path, e);
        let mut conn = Connection::open(path).map_err(sqlite)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))
            .map_err(sqlite)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(fail(&format!(
                "cannot switch to WAL journaling (got {mode})"
            )));
        }
        conn.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
            .map_err(sqlite)?;
        Self::migrate(&mut conn, path)?;
        Ok(Store { conn, path: path.to_path_buf() })
    }

    fn migrate(conn: &mut Connection, path: &Path) -> std::result::Result<(), Opening> {
        let version = |conn: &Connection| -> std::result::Result<i64, Opening> {
            conn.query_row("PRAGMA user_version", [], |row| row.get(0))
                .map_err(|e| Opening::of(path, e))
        };
        let check = |found: i64| {
            if found > schema::VERSION {
                Err(Opening::Failed(HistoryError::NewerSchema {
                    path: path.to_path_buf(),
                    found,
                    supported: schema::VERSION,
                }))
            } else {
                Ok(found)
            }
        };
        if check(version(conn)?)? == schema::VERSION {
            return Ok(());
        }
        // Another process may be migrating too: decide again under the lock.
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| Opening::of(path, e))?;
        let found = check(version(&tx)?)?;
        if found < schema::VERSION {
            schema::upgrade(&tx, found).map_err(|e| {
                Opening::Failed(HistoryError::store(
                    path,
                    format!("migrating from schema {found}: {e}"),
                ))
            })?;
        }
        tx.commit().map_err(|e| Opening::of(path, e))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends entries in one transaction: all of them are stored, or none.
    pub fn record(&mut self, entries: &[Entry]) -> Result<Vec<i64>> {
        let mut batch = self.begin()?;
        let ids = entries
            .iter()
            .map(|entry| batch.add(entry))
            .collect::<Result<Vec<_>>>()?;
        batch.commit()?;
        Ok(ids)
    }

    /// Starts a write transaction; what is added is stored at `commit` and
    /// discarded if the batch is dropped (or the process dies) before.
    pub fn begin(&mut self) -> Result<Batch<'_>> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| HistoryError::store(&self.path, e))?;
        Ok(Batch { tx, path: &self.path })
    }

    /// Every kernel with entries, by name.
    pub fn kernels(&self) -> Result<Vec<KernelSummary>> {
        let fail = |e: rusqlite::Error| HistoryError::store(&self.path, e);
        let mut statement = self
            .conn
            .prepare(
                "SELECT kernel, COUNT(*), COALESCE(GROUP_CONCAT(DISTINCT device), ''),
                        strftime('%Y-%m-%dT%H:%M:%SZ', MAX(recorded_at), 'unixepoch')
                 FROM runs GROUP BY kernel ORDER BY kernel",
            )
            .map_err(fail)?;
        let rows = statement
            .query_map([], |row| {
                let devices: String = row.get(2)?;
                let mut devices: Vec<String> = devices
                    .split(',')
                    .filter(|d| !d.is_empty())
                    .map(str::to_string)
                    .collect();
                devices.sort();
                Ok(KernelSummary {
                    kernel: row.get(0)?,
                    entries: row.get::<_, i64>(1)? as u64,
                    devices,
                    last_recorded: row.get(3)?,
                })
            })
            .map_err(fail)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(fail)
    }

    /// A kernel's entries, oldest first.
    pub fn trend(&self, query: &TrendQuery) -> Result<Vec<Point>> {
        let fail = |e: rusqlite::Error| HistoryError::store(&self.path, e);
        let device_pattern = query
            .device
            .as_ref()
            .map(|d| format!("%{}%", d.to_lowercase()));
        let limit = query.limit.map_or(-1, |n| n as i64);
        let mut statement = self
            .conn
            .prepare(
                "SELECT id, strftime('%Y-%m-%dT%H:%M:%SZ', recorded_at, 'unixepoch'),
                        command, kernel, recorded_at, manifest_path, manifest_sha256,
                        source_sha256, op_set, device, driver, clflow_version, git_commit
                 FROM (SELECT * FROM runs
                       WHERE kernel = ?1 AND (?2 IS NULL OR LOWER(device) LIKE ?2)
                       ORDER BY recorded_at DESC, id DESC LIMIT ?3)
                 ORDER BY recorded_at, id",
            )
            .map_err(fail)?;
        let mut points = statement
            .query_map(params![query.kernel, device_pattern, limit], |row| {
                Ok(Point {
                    id: row.get(0)?,
                    recorded: row.get(1)?,
                    entry: Entry {
                        command: row.get(2)?,
                        kernel: row.get(3)?,
                        recorded_at: row.get(4)?,
                        manifest_path: row.get(5)?,
                        manifest_sha256: row.get(6)?,
                        source_sha256: row.get(7)?,
                        op_set: row.get(8)?,
                        device: row.get(9)?,
                        driver: row.get(10)?,
                        clflow_version: row.get(11)?,
                        git_commit: row.get(12)?,
                        metrics: Vec::new(),
                    },
                })
            })
            .map_err(fail)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(fail)?;
        let mut metrics = self
            .conn
            .prepare("SELECT name, value, unit FROM metrics WHERE run_id = ?1 ORDER BY name")
            .map_err(fail)?;
        for point in &mut points {
            point.entry.metrics = metrics
                .query_map([point.id], |row| {
                    Ok(Metric { name: row.get(0)?, value: row.get(1)?, unit: row.get(2)? })
                })
                .map_err(fail)?
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(fail)?;
        }
        Ok(points)
    }

    /// SQLite's own check of the file (`PRAGMA integrity_check`): "ok" when sound.
    pub fn integrity(&self) -> Result<String> {
        let fail = |e: rusqlite::Error| HistoryError::store(&self.path, e);
        let mut statement = self.conn.prepare("PRAGMA integrity_check").map_err(fail)?;
        let lines = statement
            .query_map([], |row| row.get::<_, String>(0))
            .map_err(fail)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(fail)?;
        Ok(lines.join("; "))
    }

    /// Entries per kernel, for a quick look at what is stored.
    pub fn counts(&self) -> Result<BTreeMap<String, u64>> {
        Ok(self
            .kernels()?
            .into_iter()
            .map(|k| (k.kernel, k.entries))
            .collect())
    }

    /// The schema version stored in the file.
    pub fn schema_version(&self) -> Result<i64> {
        self.conn
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .map_err(|e| HistoryError::store(&self.path, e))
    }
}

/// An open write transaction (see [`Store::begin`]).
pub struct Batch<'a> {
    tx: Transaction<'a>,
    path: &'a Path,
}

impl Batch<'_> {
    pub fn add(&mut self, entry: &Entry) -> Result<i64> {
        let fail = |e: rusqlite::Error| HistoryError::store(self.path, e);
        self.tx
            .execute(
                "INSERT INTO runs (recorded_at, command, kernel, manifest_path, manifest_sha256,
                                   source_sha256, op_set, device, driver, clflow_version, git_commit)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    entry.recorded_at,
                    entry.command,
                    entry.kernel,
                    entry.manifest_path,
                    entry.manifest_sha256,
                    entry.source_sha256,
                    entry.op_set,
                    entry.device,
                    entry.driver,
                    entry.clflow_version,
                    entry.git_commit,
                ],
            )
            .map_err(fail)?;
        let id = self.tx.last_insert_rowid();
        let mut insert = self
            .tx
            .prepare_cached(
                "INSERT INTO metrics (run_id, name, value, unit) VALUES (?1, ?2, ?3, ?4)",
            )
            .map_err(fail)?;
        for metric in &entry.metrics {
            insert
                .execute(params![id, metric.name, metric.value, metric.unit])
                .map_err(|e| {
                    HistoryError::store(self.path, format!("metric `{}`: {e}", metric.name))
                })?;
        }
        Ok(id)
    }

    pub fn commit(self) -> Result<()> {
        self.tx
            .commit()
            .map_err(|e| HistoryError::store(self.path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::value_text;

    #[test]
    fn recorded_values_read_in_their_units() {
        assert_eq!(value_text(8.02e-7, Some("s")), "802 ns");
        assert_eq!(value_text(49152.0, Some("bytes")), "49,152 bytes");
        assert_eq!(value_text(4096.0, Some("ops")), "4,096 ops");
        assert_eq!(value_text(1.386e10, Some("ops/s")), "13.86 GOPS/s");
        assert_eq!(value_text(0.0833, Some("OPS/B")), "0.0833 OPS/B");
        assert_eq!(value_text(2.5, None), "2.5");
    }
}
