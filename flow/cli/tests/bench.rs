//! `clflow bench` end to end on the PoCL device: quick sizes, real kernels,
//! a private measured-profile store.

mod common;

use common::{clflow, text, Clflow};
use serde_json::Value;
use std::process::Output;

fn json(output: &Output) -> Value {
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!("stdout is not JSON ({e}): {}", text(&output.stdout));
    })
}

/// Every best and median of `entries` (a profile's `bandwidth` or
/// `compute` list) under `field`, in units of 10⁹ per second.
fn figures(entries: &Value, field: &str) -> Vec<(String, f64, f64)> {
    entries
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let name = format!("{}/{}x{}", e["kernel"], e["data_type"], e["vector_width"]);
            let stat = &e[field];
            (
                name,
                stat["best"].as_f64().unwrap() / 1e9,
                stat["median"].as_f64().unwrap() / 1e9,
            )
        })
        .collect()
}

#[test]
fn quick_bench_measures_stores_and_reuses_a_profile() {
    let data = tempfile::tempdir().unwrap();
    let first = json(&clflow(
        data.path(),
        &["bench", "--device", "0", "--quick", "--json"],
    ));
    assert_eq!(first["reused"], false);
    assert_eq!(first["device_index"], 0);
    let profile = &first["profile"];
    assert_eq!(profile["clflow_version"], env!("CARGO_PKG_VERSION"));
    assert!(profile["measured_at"].as_str().unwrap().ends_with('Z'));
    assert!(!profile["identity"]["driver_version"]
        .as_str()
        .unwrap()
        .is_empty());

    // 6 stream kernels x {float, uint} x widths {1, 4}, the in-place update
    // on float at widths 1 and 4, and the scalar gather.
    let bandwidth = figures(&profile["bandwidth"], "bytes_per_s");
    assert_eq!(bandwidth.len(), 27);
    assert!(bandwidth.iter().any(|b| b.0.contains("update/float")));
    for (name, best, median) in &bandwidth {
        // Quick buffers sit in the cache: well above DRAM speed is expected,
        // above 10 TB/s would mean the kernel did not touch its data.
        assert!(*median > 0.0 && best >= median, "{name}: {best} / {median}");
        assert!(*best < 10_000.0, "{name}: {best} GB/s");
    }
    // mad and the local load/store on float (and double where supported),
    // add/mul/mad on uint, each at widths 1 and 4; the diverged mad on float
    // and add on uint at width 1.
    let compute = figures(&profile["compute"], "ops_per_s");
    let fp32: Vec<_> = compute.iter().filter(|c| c.0.contains("fp32")).collect();
    let int32: Vec<_> = compute.iter().filter(|c| c.0.contains("int32")).collect();
    assert_eq!((fp32.len(), int32.len()), (5, 7));
    // The launch's cost, from the empty kernel.
    let launch = &profile["launch"];
    assert!(launch["empty_s"].as_f64().unwrap() > 0.0, "{launch}");
    assert!(launch["per_group_s"].as_f64().unwrap() >= 0.0, "{launch}");
    // What work-items pay beyond throughput, from the cost kernels.
    let costs = &profile["costs"];
    for key in ["chain_ops_per_s", "local_atomics_per_s", "barriers_per_s"] {
        assert!(costs[key].as_f64().unwrap() > 0.0, "{key}: {costs}");
    }
    // Each math builtin's calls both ways, and scattered loads from four
    // tables.
    for name in ["sin", "cos", "exp", "log", "pow"] {
        for way in ["vector_per_s", "scalar_per_s"] {
            let rate = costs["builtins"][name][way].as_f64().unwrap();
            assert!(rate > 0.0, "{name} {way}: {costs}");
        }
    }
    let tables = costs["cache_gather_tables"].as_array().unwrap();
    assert_eq!(tables.len(), 4, "{costs}");
    for (name, best, median) in &compute {
        // Two CPU cores cannot exceed a few hundred G operations per second.
        assert!(*median > 0.0 && best >= median, "{name}: {best} / {median}");
        assert!(*best < 2_000.0, "{name}: {best} G/s");
    }

    // This run's detail: work per launch and the times it took.
    let results = first["measurement"]["results"].as_array().unwrap();
    let triad = results.iter().find(|r| r["id"] == "triad/float4").unwrap();
    let elements = triad["shape"]["stream"]["elements"].as_u64().unwrap();
    assert_eq!(triad["work"]["bytes"].as_u64().unwrap(), 3 * 16 * elements);
    assert_eq!(triad["work"]["ops"].as_u64().unwrap(), 2 * 4 * elements);
    assert_eq!(triad["times_ns"].as_array().unwrap().len(), 3);

    // Stored: the next run reuses it, --refresh measures again.
    let stored = first["stored_at"].as_str().unwrap();
    assert!(std::path::Path::new(stored).starts_with(data.path()));
    let again = json(&clflow(
        data.path(),
        &["bench", "-d", "0", "--quick", "--json"],
    ));
    assert_eq!(again["reused"], true);
    assert_eq!(again["profile"], first["profile"]);
    assert!(again.get("measurement").is_none());
    let table = clflow(data.path(), &["bench", "-d", "0", "--quick"]);
    let shown = text(&table.stdout);
    assert!(shown.starts_with("benchmark "), "{shown}");
    assert!(shown.contains("\ntriad/float4 "), "{shown}");
    assert!(shown.contains("\nF̂ fp32 "), "{shown}");
    assert!(shown.contains("\nin place "), "{shown}");
    assert!(text(&table.stderr).contains("--refresh measures again"));
    let refreshed = json(&clflow(
        data.path(),
        &["bench", "-d", "0", "--quick", "--refresh", "--json"],
    ));
    assert_eq!(refreshed["reused"], false);
    assert_eq!(refreshed["stored_at"], first["stored_at"]);
}

#[test]
fn a_selector_that_matches_nothing_lists_the_devices() {
    let data = tempfile::tempdir().unwrap();
    let out = clflow(
        data.path(),
        &["bench", "--device", "no-such-device", "--quick"],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(
            "clflow: error: device selector 'no-such-device' matches no device; devices: 0: "
        ),
        "{stderr}"
    );
    assert!(stderr.contains("hint: pass --device"), "{stderr}");
    assert!(out.stdout.is_empty());
    // Nothing was measured, so nothing was stored.
    assert!(!data.path().join("measured").exists());
}

/// `clflow bench ARGS -v`, interrupted (SIGINT, as Ctrl-C sends) once a
/// line of its stderr satisfies `at`.
fn interrupted(data_dir: &std::path::Path, args: &[&str], at: impl Fn(&str) -> bool) {
    use std::io::BufRead;
    let mut clflow = Clflow::new().data(data_dir);
    let mut child = clflow
        .command(args)
        .arg("-v")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = Vec::new();
    for line in stderr.lines() {
        let line = line.unwrap();
        let stop = at(&line);
        seen.push(line);
        if stop {
            break;
        }
    }
    assert!(seen.last().is_some_and(|l| at(l)), "{}", seen.join("\n"));
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) only sends a signal to the child this test spawned.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    assert!(!child.wait().unwrap().success(), "it ran to the end");
}

/// The one profile stored in `data_dir`.
fn stored_profile(data_dir: &std::path::Path) -> (std::path::PathBuf, Value) {
    let files: Vec<_> = std::fs::read_dir(data_dir.join("measured"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    let [file] = files.as_slice() else {
        panic!("one stored profile expected: {files:?}");
    };
    let profile = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    (file.clone(), profile)
}

#[test]
fn an_interrupted_run_keeps_what_was_stored_before() {
    let data = tempfile::tempdir().unwrap();
    let quick = ["bench", "-d", "0", "--quick"];
    // A first run stores its peaks before it times the cost kernels.
    interrupted(data.path(), &quick, |line| line.starts_with("  costs/"));
    let (file, peaks) = stored_profile(data.path());
    assert!(!peaks["compute"].as_array().unwrap().is_empty(), "{peaks}");
    assert!(peaks.get("costs").is_none(), "{peaks}");
    // The next run measures the costs alone and keeps the peaks.
    let next = json(&clflow(data.path(), &[&quick[..], &["--json"]].concat()));
    assert_eq!(next["reused"], false);
    assert_eq!(next["measurement"]["results"], serde_json::json!([]));
    assert!(
        next["profile"]["costs"]["chain_ops_per_s"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert_eq!(next["profile"]["compute"], peaks["compute"]);
    assert_eq!(next["profile"]["costs"]["quick"], true);
    let whole = std::fs::read(&file).unwrap();
    // A refresh interrupted while it measures leaves the profile as it was.
    interrupted(
        data.path(),
        &[&quick[..], &["--refresh"]].concat(),
        |line| line.starts_with("  copy/"),
    );
    assert_eq!(std::fs::read(&file).unwrap(), whole);
    assert_eq!(stored_profile(data.path()).0, file);
}

#[test]
fn an_only_that_matches_nothing_is_refused() {
    let data = tempfile::tempdir().unwrap();
    let out = clflow(
        data.path(),
        &["bench", "-d", "0", "--quick", "--only", "no-such-kernel"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("--only 'no-such-kernel' matches no benchmark"),
        "{stderr}"
    );
    assert!(!data.path().join("measured").exists());
}
