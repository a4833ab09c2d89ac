//! The store under stress: concurrent writers, a writer killed mid-write,
//! a store from an older schema (migrated) and from a newer one (refused).

use clflow_history::{Entry, HistoryError, Metric, Store, TrendQuery, SCHEMA_V1, SCHEMA_VERSION};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

fn entry(kernel: &str, device: Option<&str>, w: f64) -> Entry {
    let mut entry = Entry::new("check", kernel);
    entry.device = device.map(str::to_string);
    entry.op_set = Some("arith".into());
    entry.metrics = vec![
        Metric::new("W.total", w, Some("ops")),
        Metric::new("Q.accessed", 3.0 * w, Some("bytes")),
    ];
    entry
}

fn trend(store: &Store, kernel: &str) -> Vec<clflow_history::Point> {
    store
        .trend(&TrendQuery { kernel: kernel.into(), ..TrendQuery::default() })
        .unwrap()
}

#[test]
fn entries_come_back_in_order_with_every_metric() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/history.sqlite");
    let mut store = Store::open(&path).unwrap();
    let mut first = entry("vadd", None, 4096.0);
    first.recorded_at = 1_700_000_000;
    let mut second = entry("vadd", Some("pthread-cpu"), 4097.0);
    second.recorded_at = 1_700_000_060;
    second.driver = Some("PoCL 3.1".into());
    store.record(&[second.clone(), first.clone()]).unwrap();
    store.record(&[entry("triad", None, 1.0)]).unwrap();

    let points = trend(&store, "vadd");
    assert_eq!(points.len(), 2);
    assert_eq!(points[0].recorded, "2023-11-14T22:13:20Z");
    assert_eq!(points[0].entry.metrics.len(), 2);
    assert_eq!(points[0].metric("W.total"), Some(4096.0));
    assert_eq!(points[1].entry.device.as_deref(), Some("pthread-cpu"));
    assert_eq!(points[1].entry.driver.as_deref(), Some("PoCL 3.1"));
    assert_eq!(points[1].metric("Q.accessed"), Some(3.0 * 4097.0));

    let on_cpu = store
        .trend(&TrendQuery {
            kernel: "vadd".into(),
            device: Some("PTHREAD".into()),
            limit: None,
        })
        .unwrap();
    assert_eq!(on_cpu.len(), 1);
    let last = store
        .trend(&TrendQuery { kernel: "vadd".into(), device: None, limit: Some(1) })
        .unwrap();
    assert_eq!(last[0].metric("W.total"), Some(4097.0));

    let kernels = store.kernels().unwrap();
    assert_eq!(kernels.len(), 2);
    assert_eq!(kernels[1].kernel, "vadd");
    assert_eq!(kernels[1].entries, 2);
    assert_eq!(kernels[1].devices, vec!["pthread-cpu".to_string()]);
}

#[test]
fn concurrent_writers_on_separate_connections_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite");
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let path = path.clone();
            std::thread::spawn(move || {
                // Each thread opens (and so may create and migrate) on its own.
                let mut store = Store::open(&path).unwrap();
                for i in 0..25 {
                    store
                        .record(&[entry(&format!("k{w}"), None, i as f64)])
                        .unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    let store = Store::open(&path).unwrap();
    let counts = store.counts().unwrap();
    assert_eq!(counts.len(), 4);
    assert!(counts.values().all(|n| *n == 25), "{counts:?}");
    assert_eq!(store.integrity().unwrap(), "ok");
}

/// Run by `a_writer_killed_mid_transaction_leaves_the_store_consistent` in a
/// child process: adds entries inside a transaction, says so, and waits to be
/// killed before it commits.
#[test]
fn child_writer_that_never_commits() {
    let Some(path) = std::env::var_os("CLFLOW_HISTORY_TEST_CHILD_STORE") else {
        return; // only meaningful as the child of the test below
    };
    let mut store = Store::open(Path::new(&path)).unwrap();
    let mut batch = store.begin().unwrap();
    for i in 0..500 {
        batch.add(&entry("uncommitted", None, i as f64)).unwrap();
    }
    println!("inserted");
    std::thread::sleep(std::time::Duration::from_secs(60));
    batch.commit().unwrap();
}

#[test]
fn a_writer_killed_mid_transaction_leaves_the_store_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite");
    Store::open(&path)
        .unwrap()
        .record(&[entry("committed", None, 1.0)])
        .unwrap();

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_writer_that_never_commits", "--nocapture"])
        .env("CLFLOW_HISTORY_TEST_CHILD_STORE", &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let said_inserted = lines.any(|l| l.map(|l| l.contains("inserted")).unwrap_or(false));
    child.kill().unwrap(); // SIGKILL: no destructor, no rollback, no commit
    child.wait().unwrap();
    assert!(said_inserted, "the child never reached its insert");

    // The next writer sees the committed entry, none of the killed one's,
    // and can write.
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.integrity().unwrap(), "ok");
    assert_eq!(trend(&store, "committed").len(), 1);
    assert_eq!(trend(&store, "uncommitted").len(), 0);
    store.record(&[entry("after", None, 2.0)]).unwrap();
    assert_eq!(trend(&store, "after")[0].metric("W.total"), Some(2.0));
}

#[test]
fn a_version_1_store_is_migrated_and_keeps_its_entries() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(SCHEMA_V1).unwrap();
        conn.execute_batch(
            "INSERT INTO runs (id, recorded_at, kernel, device, clflow_version, git_commit)
             VALUES (7, 1600000000, 'vadd', NULL, '0.0.9', 'abc123');
             INSERT INTO metrics (run_id, name, value) VALUES (7, 'W.total', 4096);
             PRAGMA user_version = 1;",
        )
        .unwrap();
    }
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let old = trend(&store, "vadd");
    assert_eq!(old.len(), 1);
    assert_eq!(old[0].entry.command, "unknown");
    assert_eq!(old[0].entry.git_commit.as_deref(), Some("abc123"));
    assert_eq!(old[0].entry.metrics[0].unit, None);
    assert_eq!(old[0].metric("W.total"), Some(4096.0));
    // The new columns take new entries.
    let mut new = entry("vadd", Some("gpu"), 4100.0);
    new.driver = Some("535.1".into());
    store.record(&[new]).unwrap();
    let both = trend(&store, "vadd");
    assert_eq!(both[1].entry.driver.as_deref(), Some("535.1"));
    assert_eq!(both[1].entry.metrics[1].unit.as_deref(), Some("ops"));
}

#[test]
fn a_store_from_a_newer_clflow_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE future (x); PRAGMA user_version = 99;")
            .unwrap();
    }
    let err = Store::open(&path)
        .err()
        .expect("a newer store must be refused");
    assert!(matches!(
        err,
        HistoryError::NewerSchema { found: 99, supported: SCHEMA_VERSION, .. }
    ));
    let message = err.to_string();
    assert!(message.contains("schema version 99"), "{message}");
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(clflow_core::Diagnostic::hint(&err)
        .unwrap()
        .contains("upgrade clflow"));
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 99);
}
