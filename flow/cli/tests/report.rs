//! `clflow report` end to end: the paper's comparison, merging a CSV of
//! FPGA measurements, redrawing a `clflow analyze` report with its traffic,
//! prediction and CPU+GPU split sections, and clear errors for bad inputs.

mod common;

use common::Clflow;
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// `clflow ARGS` run in `dir`, where the test's inputs and outputs lie.
fn in_dir(dir: &Path, args: &[&str]) -> Output {
    Clflow::new().dir(dir).run(args)
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn the_paper_is_reproduced_and_merges_with_a_csv() {
    let dir = tempfile::tempdir().unwrap();
    let output = in_dir(dir.path(), &["report", "--paper", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let out = dir.path().join("reports/paper");
    for name in [
        "index.html",
        "metrics.csv",
        "results.json",
        "roofline-all.svg",
        "energy.png",
    ] {
        assert!(out.join(name).is_file(), "{name} missing");
    }
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let k20 = json["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["device"] == "Tesla K20")
        .unwrap();
    assert!((k20["performance"]["value"].as_f64().unwrap() - 126.42e9).abs() < 1.0);
    assert_eq!(k20["bound"], "memory");

    // A second FPGA board measured with vendor tools, merged with the paper's results.
    std::fs::write(
        dir.path().join("u250.csv"),
        "kernel,device,time_s,power_peak_w,bandwidth_gbs,peak_int_gops,peak_power_w,device_kind\n\
         hash,Alveo U250,0.02,50,60,20000,75,fpga\n",
    )
    .unwrap();
    let output = in_dir(
        dir.path(),
        &[
            "report",
            "reports/paper/results.json",
            "u250.csv",
            "--out",
            "merged",
            "--json",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let metrics = json["metrics"].as_array().unwrap();
    assert_eq!(metrics.len(), 4);
    let u250 = metrics
        .iter()
        .find(|m| m["device"] == "Alveo U250")
        .unwrap();
    // F = 1224 M OPS / 0.02 s = 61.2 GOPS/s; R = F / 50 W; E = 0.02 s · 50 W.
    assert!((u250["performance"]["value"].as_f64().unwrap() - 61.2e9).abs() < 1.0);
    assert_eq!(u250["performance"]["provenance"], "imported");
    assert!((u250["perf_per_watt"]["value"].as_f64().unwrap() - 1.224e9).abs() < 1.0);
    assert!((u250["energy"]["value"].as_f64().unwrap() - 1.0).abs() < 1e-12);
    assert!(dir.path().join("merged/roofline-alveo-u250.png").is_file());
}

#[test]
fn bad_inputs_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let output = in_dir(dir.path(), &["report"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("clflow: error: no results to report"),
        "{}",
        stderr(&output)
    );

    std::fs::write(
        dir.path().join("bad.csv"),
        "kernel,device,time_s\nhash,K20,-1\n",
    )
    .unwrap();
    let output = in_dir(dir.path(), &["report", "--paper", "bad.csv"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output)
            .contains("clflow: error: bad.csv:2: column `time_s`: `-1` is not a number ≥ 0"),
        "{}",
        stderr(&output)
    );

    let output = in_dir(dir.path(), &["report", "missing.json"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("missing.json: cannot read"),
        "{}",
        stderr(&output)
    );
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_redrawn_analyze_report_keeps_its_traffic_source_and_prediction_sections() {
    let data = tempfile::tempdir().unwrap();
    common::with_quick_profile(data.path());
    let original = data.path().join("original");
    let output = common::clflow(
        data.path(),
        &[
            "analyze",
            "kernels/vadd/vadd.toml",
            "--devices",
            "0",
            "--quick-bench",
            "--min-time",
            "0.05",
            "--cache",
            "16KiB/128",
            "--out",
            original.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let redrawn = data.path().join("redrawn");
    let output = common::clflow(
        data.path(),
        &[
            "report",
            original.join("results.json").to_str().unwrap(),
            "--out",
            redrawn.to_str().unwrap(),
            "-v",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // -v says which section files were picked up.
    for name in ["traffic.json", "lines.json", "predictions.json"] {
        let read = format!("{}: read", original.join(name).display());
        assert!(stderr(&output).contains(&read), "{}", stderr(&output));
    }
    assert!(redrawn.join("traffic-curve.svg").is_file());
    for name in ["traffic.json", "lines.json", "predictions.json"] {
        let before = read_json(&original.join(name));
        assert!(!before.as_array().unwrap().is_empty(), "{name} is empty");
        assert_eq!(read_json(&redrawn.join(name)), before, "{name} differs");
    }
    // The cache the traffic went through, as analyze simulated it.
    let traffic = read_json(&redrawn.join("traffic.json"));
    assert_eq!(traffic[0]["kernel"], "vadd");
    assert_eq!(traffic[0]["devices"][0]["cache"]["bytes"], 16384);
    let html = std::fs::read_to_string(redrawn.join("index.html")).unwrap();
    for heading in [
        "<h2>Traffic at a cache size</h2>",
        "<h2>Source lines</h2>",
        "<h2>Predicted time</h2>",
    ] {
        assert!(
            html.contains(heading),
            "no `{heading}` in the redrawn index.html"
        );
    }
}

#[test]
fn a_corrupt_section_file_beside_results_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let output = in_dir(dir.path(), &["report", "--paper"]);
    assert!(output.status.success(), "{}", stderr(&output));
    std::fs::write(
        dir.path().join("reports/paper/traffic.json"),
        "[{\"kernel\": ",
    )
    .unwrap();
    let output = in_dir(
        dir.path(),
        &["report", "reports/paper/results.json", "--out", "redrawn"],
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(
            "clflow: error: reports/paper/traffic.json:1:12: not the traffic.json `clflow analyze` writes"
        ),
        "{}",
        stderr(&output)
    );
    assert!(
        !dir.path().join("redrawn").exists(),
        "no report on an input error"
    );
}

/// What `clflow split --json` prints for vadd on two datasheet profiles:
/// the document `clflow analyze` writes as split.json (the same type,
/// pretty-printed the same way), with no OpenCL device needed.
fn vadd_split_json(devices: &str) -> String {
    let output = Clflow::new().run(&[
        "split",
        "kernels/vadd/vadd.toml",
        "--devices",
        devices,
        "--json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    String::from_utf8(output.stdout).unwrap()
}

/// The paper's results.json in `dir/<name>` (written once per `dir`), with
/// `split` beside it.
fn results_with_split(dir: &Path, name: &str, split: &str) {
    let paper = dir.join("paper/results.json");
    if !paper.is_file() {
        let output = in_dir(dir, &["report", "--paper", "--out", "paper"]);
        assert!(output.status.success(), "{}", stderr(&output));
    }
    std::fs::create_dir_all(dir.join(name)).unwrap();
    std::fs::copy(&paper, dir.join(name).join("results.json")).unwrap();
    std::fs::write(dir.join(name).join("split.json"), split).unwrap();
}

#[test]
fn a_redrawn_report_keeps_its_split_section_and_the_last_split_wins() {
    let dir = tempfile::tempdir().unwrap();
    let phi_k20 = vadd_split_json("xeon-phi-5110p,tesla-k20");
    results_with_split(dir.path(), "A", &phi_k20);
    let output = in_dir(
        dir.path(),
        &["report", "A/results.json", "--out", "B", "-v"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("A/split.json: read"),
        "{}",
        stderr(&output)
    );
    let b = dir.path().join("B");
    for name in ["perdome.svg", "perdome.png", "split.json"] {
        assert!(b.join(name).is_file(), "{name} missing");
    }
    // The document is written again as it was read.
    assert_eq!(
        std::fs::read_to_string(b.join("split.json")).unwrap(),
        phi_k20.trim_end()
    );
    let html = std::fs::read_to_string(b.join("index.html")).unwrap();
    let heading = html
        .find("<h2>CPU+GPU split (PerDome)</h2>")
        .expect("no split section in the redrawn index.html");
    for name in [
        "<li>C: <b>Intel Xeon Phi 5110P</b>",
        "<li>G: <b>NVIDIA Tesla K20</b>",
        "perdome.svg",
    ] {
        let at = html.find(name).unwrap_or_else(|| panic!("no `{name}`"));
        assert!(at > heading, "`{name}` before the split heading");
    }

    // Two inputs with a split.json: the later one's split is drawn, here
    // the same pair the other way round.
    results_with_split(
        dir.path(),
        "C",
        &vadd_split_json("tesla-k20,xeon-phi-5110p"),
    );
    let output = in_dir(
        dir.path(),
        &[
            "report",
            "A/results.json",
            "C/results.json",
            "--out",
            "D",
            "-v",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(
            "C/split.json: the CPU+GPU split (PerDome) section from A/split.json: replaced"
        ),
        "{}",
        stderr(&output)
    );
    let html = std::fs::read_to_string(dir.path().join("D/index.html")).unwrap();
    assert_eq!(html.matches("<h2>CPU+GPU split (PerDome)</h2>").count(), 1);
    assert!(html.contains("<li>C: <b>NVIDIA Tesla K20</b>"), "{html}");
    assert!(!html.contains("<li>C: <b>Intel Xeon Phi 5110P</b>"));
}

#[test]
fn a_split_json_that_does_not_parse_or_cannot_be_drawn_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    results_with_split(dir.path(), "A", "{\"ceiling\": ");
    let output = in_dir(dir.path(), &["report", "A/results.json", "--out", "B"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(
            "clflow: error: A/split.json:1:12: not the split.json `clflow analyze` writes"
        ),
        "{}",
        stderr(&output)
    );
    assert!(
        !dir.path().join("B").exists(),
        "no report on an input error"
    );

    // Well-formed, but a device with no bandwidth bounds nothing.
    let mut split: Value =
        serde_json::from_str(&vadd_split_json("xeon-phi-5110p,tesla-k20")).unwrap();
    split["devices"][1]["bandwidth"]["value"] = 0.into();
    std::fs::write(dir.path().join("A/split.json"), split.to_string()).unwrap();
    let output = in_dir(dir.path(), &["report", "A/results.json", "--out", "B"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(
            "clflow: error: A/split.json: not the split.json `clflow analyze` writes: \
             device `NVIDIA Tesla K20`: memory bandwidth is 0; it must be a positive number"
        ),
        "{}",
        stderr(&output)
    );
    assert!(
        !dir.path().join("B").exists(),
        "no report on an input error"
    );
}

#[test]
fn help_teaches_by_example() {
    let dir = tempfile::tempdir().unwrap();
    let output = in_dir(dir.path(), &["report", "--help"]);
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    for text in [
        "clflow report --paper",
        "power_peak_w",
        "time_s",
        "fpga.csv",
    ] {
        assert!(help.contains(text), "no `{text}` in the help");
    }
}
