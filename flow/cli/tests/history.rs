//! `clflow history` end to end, and the store under two `clflow` processes
//! at once.

mod common;

use common::{repo, Clflow};

use std::path::Path;
use std::process::Output;

/// `clflow ARGS` writing its history to `store`.
fn run(store: &Path, args: &[&str]) -> Output {
    Clflow::new().store(store).run(args)
}

/// A suite over vadd and triad with its baseline, in `dir`.
fn suite(dir: &Path) -> String {
    let kernels = repo().join("kernels").canonicalize().unwrap();
    let path = dir.join("suite.toml");
    std::fs::write(
        &path,
        format!(
            "manifests = [\"{0}/vadd/vadd.toml\", \"{0}/triad/triad.toml\"]\n",
            kernels.display()
        ),
    )
    .unwrap();
    path.display().to_string()
}

#[test]
fn two_clflow_processes_checking_at_once_both_record() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let suite = suite(dir.path());
    let out = run(&store, &["-q", "check", &suite, "--update", "--no-history"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!store.exists(), "--no-history writes nothing");

    let children: Vec<_> = (0..2)
        .map(|_| {
            Clflow::new()
                .store(&store)
                .command(&["-q", "check", &suite])
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let out = run(&store, &["history", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kernels: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let entries = |name: &str| {
        kernels
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["kernel"] == name)
            .map(|k| k["entries"].as_u64().unwrap())
    };
    assert_eq!(entries("vadd"), Some(2), "{kernels}");
    assert_eq!(entries("triad"), Some(2), "{kernels}");
}

#[test]
fn the_trend_of_a_kernel_as_table_json_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    let suite = suite(dir.path());
    run(&store, &["-q", "check", &suite, "--update"]);
    run(&store, &["-q", "check", &suite]);

    let out = run(&store, &["history", "vadd"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    assert!(lines[0].contains("W.total"), "{table}");
    assert!(
        lines[1].contains("check") && lines[1].contains("(counts)"),
        "{table}"
    );
    assert!(
        lines[2].contains("20,480 ops") && lines[2].contains("49,152 bytes"),
        "{table}"
    );

    let out = run(&store, &["history", "vadd", "--json", "--limit", "1"]);
    let points: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let point = &points[0];
    assert_eq!(point["kernel"], "vadd");
    assert_eq!(point["op_set"], "arith");
    assert_eq!(point["source_sha256"].as_str().unwrap().len(), 64);
    let w = point["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "W.fp32")
        .unwrap();
    assert_eq!(w["value"], 4096.0);
    assert_eq!(w["unit"], "ops");

    let svg = dir.path().join("vadd.svg");
    let out = run(
        &store,
        &["-q", "history", "vadd", "--plot", svg.to_str().unwrap()],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let words: String = doc.descendants().filter_map(|n| n.text()).collect();
    assert!(words.contains("vadd: trend over 2 entries"), "{words}");
    assert!(words.contains("W.total (first: 20,480 ops)"), "{words}");

    let out = run(&store, &["history", "vadd", "--device", "nvidia"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("no entries for kernel `vadd` on a device matching `nvidia`"));
}

#[test]
fn a_store_from_a_newer_clflow_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history.sqlite");
    rusqlite::Connection::open(&store)
        .unwrap()
        .execute_batch("CREATE TABLE later (x); PRAGMA user_version = 99;")
        .unwrap();
    let out = run(&store, &["history"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("schema version 99, newer than the 2 this clflow knows"),
        "{err}"
    );
    assert!(err.contains("upgrade clflow"), "{err}");
}
