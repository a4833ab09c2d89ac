//! The store's tables, and the migrations from every older version.
//!
//! The version lives in `PRAGMA user_version`. Version 1 kept runs without
//! the command that made them, the op set or the device's driver, and
//! metrics without units; version 2 adds those and an index for trends.

use rusqlite::Transaction;

/// The schema this clflow reads and writes.
pub const VERSION: i64 = 2;

/// Version 1, kept so the migration from it can be tested.
pub const V1: &str = "
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    recorded_at INTEGER NOT NULL,
    kernel TEXT NOT NULL,
    manifest_path TEXT,
    manifest_sha256 TEXT,
    source_sha256 TEXT,
    device TEXT,
    clflow_version TEXT NOT NULL,
    git_commit TEXT
);
CREATE TABLE metrics (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (run_id, name)
) WITHOUT ROWID;
";

/// From version 1 to 2.
const V1_TO_V2: &str = "
ALTER TABLE runs ADD COLUMN command TEXT NOT NULL DEFAULT 'unknown';
ALTER TABLE runs ADD COLUMN op_set TEXT;
ALTER TABLE runs ADD COLUMN driver TEXT;
ALTER TABLE metrics ADD COLUMN unit TEXT;
CREATE INDEX runs_by_kernel ON runs(kernel, device, recorded_at);
";

/// Brings a store at `from` (0: empty) up to [`VERSION`], inside the
/// caller's transaction so a crash leaves the old version intact.
pub fn upgrade(tx: &Transaction, from: i64) -> rusqlite::Result<()> {
    if from == 0 {
        tx.execute_batch(V1)?;
    }
    if from <= 1 {
        tx.execute_batch(V1_TO_V2)?;
    }
    tx.pragma_update(None, "user_version", VERSION)
}
