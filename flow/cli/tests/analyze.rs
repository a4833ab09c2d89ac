//! `clflow analyze` end to end on the PoCL device: count, a quick bench of
//! the unmeasured device, the run, and the report's files and figures.

use serde_json::Value;
mod common;

use common::{clflow, text};

fn value(figure: &Value) -> f64 {
    figure["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("not a figure: {figure}"))
}

#[test]
fn vadd_is_analyzed_into_a_full_report() {
    let data = tempfile::tempdir().unwrap();
    let out_dir = data.path().join("report");
    let out = clflow(
        data.path(),
        &[
            "analyze",
            "kernels/vadd/vadd.toml",
            "--devices",
            "0",
            "--ops",
            "fp32",
            "--quick-bench",
            "--min-time",
            "0.05",
            "--out",
            out_dir.to_str().unwrap(),
            "--cache",
            "16KiB/128",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("no measured profile; benchmarking ")
            && stderr.contains(" (quick mode, about "),
        "{stderr}"
    );
    for file in [
        "index.html",
        "metrics.csv",
        "results.json",
        "roofline-all.svg",
        "traffic-curve.svg",
        "predictions.json",
        "lines.json",
    ] {
        assert!(out_dir.join(file).is_file(), "{file} missing");
    }
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("results.json")).unwrap())
            .unwrap();
    let m = &results["metrics"][0];
    assert_eq!(m["kernel"], "vadd");
    assert_eq!(m["ops"], "float");
    // W: 4096 fp32 adds; Q: two float inputs read, one written.
    assert_eq!(value(&m["work"]), 4096.0);
    assert_eq!(value(&m["traffic_accessed"]), 49152.0);
    let i = value(&m["intensity_min"]);
    assert!((i - 4096.0 / 49152.0).abs() < 1e-12);
    let t = value(&m["time"]);
    assert!(t > 0.0);
    assert_eq!(m["time"]["provenance"], "measured");
    assert!((value(&m["performance"]) - 4096.0 / t).abs() / (4096.0 / t) < 1e-9);
    // The ceilings come from the profile the quick bench stored.
    let device = &results["devices"][0];
    let b = value(&device["measured"]["bandwidth"]);
    let f = value(&device["measured"]["float"]);
    assert!(b > 0.0 && f > 0.0);
    assert!((value(&m["attainable"]) - (i * b).min(f)).abs() <= 1e-6 * f);
    let ridge = value(&m["ridge"]);
    assert!((ridge - f / b).abs() < 1e-9 * ridge);
    assert_eq!(m["bound"], if i < ridge { "memory" } else { "compute" });
    // The cache simulation at --cache: vadd streams 3 × 4096 floats, each
    // 128-byte line once, whatever the cache.
    let traffic: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("traffic.json")).unwrap())
            .unwrap();
    let on = &traffic[0]["devices"][0];
    assert_eq!(on["cache"]["bytes"], 16384);
    assert_eq!(on["cache_source"], "--cache");
    assert_eq!(on["dram"]["read_bytes"], 32768);
    assert_eq!(on["dram"]["written_bytes"], 16384);
    assert_eq!(on["coalescing"]["bytes"]["contiguous"], 49152);
    // The hierarchical roofline's levels: every byte into L1, the same
    // bytes (each used once) from DRAM.
    let levels = results["runs"][0]["levels"].as_array().expect("levels");
    let first = levels.first().unwrap();
    let last = levels.last().unwrap();
    assert_eq!(
        (&first["level"], value(&first["traffic"])),
        (&"L1".into(), 49152.0)
    );
    assert_eq!(
        (&last["level"], value(&last["traffic"])),
        (&"DRAM".into(), 49152.0)
    );
    assert_eq!(m["levels"].as_array().unwrap().len(), levels.len());
    let html = std::fs::read_to_string(out_dir.join("index.html")).unwrap();
    assert!(html.contains("Traffic at a cache size"));
    // The model's costs came from the quick plan, and the report says so.
    assert!(
        html.contains("clflow's model took its costs beyond throughput from a quick plan"),
        "{html}"
    );
    assert!(html.contains("traffic-curve.svg"));
    // How the results were made: version, command, launch, device.
    let made = &results["made"];
    assert_eq!(made["clflow_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(made["ops"], "fp32");
    assert!(made["command"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a == "kernels/vadd/vadd.toml"));
    let launch = &made["launches"][0];
    assert_eq!(launch["kernel"], "vadd");
    assert_eq!(launch["global_size"], serde_json::json!([4096]));
    // The corpus lives in this repository: its commit is named (where
    // git and the repository's history are at hand).
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(common::repo())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| text(&o.stdout).trim().to_string());
    match head {
        Some(head) => assert!(
            launch["source_commit"].as_str().unwrap().starts_with(&head),
            "{launch}"
        ),
        None => assert!(launch.get("source_commit").is_none(), "{launch}"),
    }
    assert_eq!(
        made["devices"][0]["platform"],
        "Portable Computing Language"
    );
    assert!(
        html.contains("<tr><th>Command</th><td><code>"),
        "the run's header"
    );
    assert!(html.contains("kernels/vadd/vadd.toml: global 4096, local"));
    let csv = std::fs::read_to_string(out_dir.join("metrics.csv")).unwrap();
    assert_eq!(csv.lines().count(), 2, "{csv}");
    assert!(csv.lines().nth(1).unwrap().starts_with("vadd,"), "{csv}");
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("KERNEL"), "{stdout}");
    // One sentence per kernel on a device, on stdout and in the page.
    let sentence = stdout
        .lines()
        .find(|l| l.starts_with("vadd on "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        sentence.contains("-bound at ") && sentence.contains("% of attainable"),
        "{sentence}"
    );
    // ... and it names vadd's one line: all of W, all of Q, every byte
    // contiguous.
    assert!(
        sentence.contains("vadd.cl:17 does 100 % of W")
            || sentence.contains("100 % of bytes coalesce; vadd.cl:17 causes 100 % of Q"),
        "{sentence}"
    );
    assert!(html.contains("<ul class=\"findings\"><li>vadd on "));
    // The source section: line 17 shaded, with its W and bytes.
    assert!(html.contains("<h2>Source lines</h2>"));
    assert!(
        html.contains("<td>17</td><td>4,096</td><td>100.0</td><td>32,768</td><td>16,384</td>"),
        "line 17 in the source section"
    );
    let lines: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("lines.json")).unwrap())
            .unwrap();
    assert_eq!(lines[0]["kernel"], "vadd");
    assert!(lines[0]["files"]["kernels/vadd/vadd.cl"]
        .as_str()
        .unwrap()
        .contains("c[i] = a[i] + b[i];"));
    assert!(data.path().join("history.db").is_file());
    assert!(
        std::fs::read_dir(data.path().join("measured"))
            .unwrap()
            .count()
            == 1
    );
}

#[test]
fn a_kernel_that_fails_on_the_device_loses_no_other_result() {
    let data = tempfile::tempdir().unwrap();
    common::with_quick_profile(data.path());
    std::fs::write(
        data.path().join("broken.cl"),
        "__kernel void broken(__global uint* out) {\n\
         #if defined(__SPIR__)\n    out[get_global_id(0)] = 1u;\n\
         #else\n#error \"no device build\"\n#endif\n}\n",
    )
    .unwrap();
    std::fs::write(
        data.path().join("broken.toml"),
        "source = \"broken.cl\"\nkernel = \"broken\"\nglobal_size = [64]\n\n\
         [[arg]]\nname = \"out\"\ntype = \"uint\"\ncount = 64\naccess = \"wo\"\n",
    )
    .unwrap();
    let out_dir = data.path().join("report");
    let broken = data.path().join("broken.toml");
    let out = clflow(
        data.path(),
        &[
            "analyze",
            "kernels/vadd/vadd.toml",
            broken.to_str().unwrap(),
            "--quick-bench",
            "--min-time",
            "0.02",
            "--out",
            out_dir.to_str().unwrap(),
            "--json",
            "--no-history",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let last = stderr
        .lines()
        .rfind(|l| l.starts_with("clflow: error:"))
        .unwrap();
    assert!(last.contains("no device build"), "{stderr}");
    let results: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = results["runs"].as_array().unwrap();
    let vadd = runs.iter().find(|r| r["kernel"] == "vadd").unwrap();
    assert!(value(&vadd["time"]) > 0.0);
    let failed = runs.iter().find(|r| r["kernel"] == "broken").unwrap();
    assert!(failed.get("time").is_none());
    assert!(failed["notes"][0]
        .as_str()
        .unwrap()
        .contains("build failed"));
    assert!(out_dir.join("index.html").is_file());
    assert!(!data.path().join("history.db").exists());
}

#[test]
fn bad_selections_fail_before_any_work() {
    let data = tempfile::tempdir().unwrap();
    let out = clflow(
        data.path(),
        &["analyze", "kernels/vadd/vadd.toml", "--devices", "quantum"],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("device selector 'quantum' matches no device; devices: 0: "),
        "{stderr}"
    );
    assert!(!stderr.contains("counted"), "{stderr}");
    // A report directory that cannot be written stops the analysis before
    // it counts, benchmarks or runs anything.
    let blocker = data.path().join("a-file");
    std::fs::write(&blocker, "").unwrap();
    let out = clflow(
        data.path(),
        &[
            "analyze",
            "kernels/vadd/vadd.toml",
            "--out",
            blocker.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("a-file: cannot write there"), "{stderr}");
    assert!(
        stderr.contains("hint: choose a writable directory with --out"),
        "{stderr}"
    );
    assert!(!stderr.contains("counted"), "{stderr}");
    let out = clflow(
        data.path(),
        &["analyze", "kernels/vadd/vadd.toml", "--devices", "all,0"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("`all` already names every device"));
    // A selector is never empty, and the flag takes one value an occurrence:
    // a manifest after it stays a manifest.
    let out = clflow(
        data.path(),
        &["analyze", "kernels/vadd/vadd.toml", "--device", ""],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("invalid value '' for '--device <SEL>'"),
        "{}",
        text(&out.stderr)
    );
    let out = clflow(
        data.path(),
        &["predict", "--devices", "quantum", "kernels/vadd/vadd.toml"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("device selector 'quantum' matches no device"),
        "{}",
        text(&out.stderr)
    );
    let out = clflow(
        data.path(),
        &["analyze", "kernels/vadd/vadd.toml", "--ops", "flops"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--ops: unknown operation `flops`"));
}

#[test]
fn one_device_gets_no_split_section() {
    let data = tempfile::tempdir().unwrap();
    common::with_quick_profile(data.path());
    let out_dir = data.path().join("report");
    let out = clflow(
        data.path(),
        &[
            "-v",
            "analyze",
            "kernels/vadd/vadd.toml",
            "kernels/triad/triad.toml",
            "--devices",
            "0",
            "--quick-bench",
            "--min-time",
            "0.02",
            "--out",
            out_dir.to_str().unwrap(),
            "--no-history",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    // -v says why; the CPU+GPU split needs two devices.
    assert!(
        stderr.contains(
            "no CPU+GPU split (PerDome) section: it needs a CPU and another device, and only device 0 ("
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("warning: no CPU+GPU split"), "{stderr}");
    assert!(out_dir.join("index.html").is_file());
    for file in ["perdome.svg", "perdome.png", "split.json"] {
        assert!(!out_dir.join(file).exists(), "{file} written");
    }
    let html = std::fs::read_to_string(out_dir.join("index.html")).unwrap();
    assert!(!html.contains("PerDome"), "a split section in the page");
    // The sections analyze always adds are still there.
    assert!(html.contains("<h2>Predicted time</h2>"));
}
