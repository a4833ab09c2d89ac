//! `clflow predict` end to end on the PoCL device: a quick bench of the
//! unmeasured device, the run, every model's prediction and its error, and
//! the charts.

use serde_json::Value;
mod common;

use common::{clflow, text};

#[test]
fn triad_is_predicted_by_every_model_beside_its_run() {
    let data = tempfile::tempdir().unwrap();
    let charts = data.path().join("charts");
    let out = clflow(
        data.path(),
        &[
            "predict",
            "kernels/triad/triad.toml",
            "--device",
            "0",
            "--quick-bench",
            "--min-time",
            "0.05",
            "--json",
            "--charts",
            charts.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let kernel = &doc["kernel"];
    assert_eq!(kernel["name"], "triad");
    let work_items = kernel["work_items"].as_f64().unwrap();
    let p = &doc["predictions"][0];
    let measured = p["measured"]["time_s"].as_f64().unwrap();
    assert!(measured > 0.0);
    // Each timing model predicts, and its APE is |predicted - measured| / measured.
    for model in ["roofline", "boat_hull", "quantitative"] {
        let outcome = &p[model];
        let predicted = outcome["value"]
            .as_f64()
            .unwrap_or_else(|| panic!("{model}: {outcome}"));
        let ape = outcome["ape"].as_f64().unwrap();
        assert!(
            (ape - (predicted - measured).abs() / measured).abs() < 1e-9,
            "{model}"
        );
    }
    // The roofline bound's inputs: W and the compulsory bytes over the
    // device's rates.
    let roofline = &p["roofline"]["prediction"];
    let bound = (roofline["work"].as_f64().unwrap() / roofline["peak"]["value"].as_f64().unwrap())
        .max(
            roofline["bytes"].as_f64().unwrap() / roofline["bandwidth"]["value"].as_f64().unwrap(),
        );
    assert!((p["roofline"]["value"].as_f64().unwrap() - bound).abs() <= 1e-12 * bound);
    // Q is the DRAM traffic simulated through the device's cache: triad's
    // 48 bytes per float4 each move once, 64-byte lines being whole.
    let traffic = &doc["traffic"][0];
    assert!(traffic["cache_source"]
        .as_str()
        .unwrap()
        .contains("CACHE_SIZE"));
    let dram = traffic["dram"]["read_bytes"].as_f64().unwrap()
        + traffic["dram"]["written_bytes"].as_f64().unwrap();
    assert_eq!(dram, 49_152.0);
    assert_eq!(roofline["bytes"].as_f64().unwrap(), dram);
    // Boat hull parameters come from the interpretation; triad's float4
    // accesses are all contiguous, so all of Q is coalesced.
    let hull = &p["boat_hull"]["prediction"];
    assert_eq!(hull["parameters"]["w"].as_f64().unwrap(), work_items);
    assert_eq!(hull["parameters"]["c"].as_f64().unwrap(), dram);
    assert_eq!(hull["parameters"]["u"].as_f64().unwrap(), 0.0);
    assert_eq!(
        traffic["coalescing"]["bytes"]["contiguous"].as_f64(),
        Some(dram)
    );
    // The quick bench measured the scattered bandwidth and T_ldst.
    assert!(hull["device"]["p_uncoalesced"]["source"]
        .as_str()
        .unwrap()
        .contains("gather/float"));
    let q = &p["quantitative"]["prediction"];
    assert_eq!(q["kernel"]["k_type"], "fp32");
    let densities = q["kernel"]["d_ops"].as_f64().unwrap()
        + q["kernel"]["d_ldst"].as_f64().unwrap()
        + q["kernel"]["d_other"].as_f64().unwrap();
    assert!((densities - 1.0).abs() < 1e-12);
    // PoCL has no power sensor here: the energy model says so.
    if p["energy"]["prediction"].is_null() {
        assert!(p["energy"]["skipped"]
            .as_str()
            .unwrap()
            .contains("no energy fit"));
    }
    for file in [
        "boat-hull-0.svg",
        "quadrant-split-0.png",
        "predictions.json",
        "index.html",
    ] {
        assert!(charts.join(file).is_file(), "{file} missing");
    }
    let page = std::fs::read_to_string(charts.join("index.html")).unwrap();
    assert!(page.contains("id=\"predictions\""));
    // In text, clflow's model term by term.
    let out = clflow(
        data.path(),
        &[
            "predict",
            "kernels/triad/triad.toml",
            "--device",
            "0",
            "--quick-bench",
            "--no-run",
        ],
    );
    let shown = text(&out.stdout);
    let line = shown
        .lines()
        .find(|l| l.starts_with("  clflow: launch "))
        .unwrap_or_else(|| panic!("no clflow terms in {shown}"));
    assert!(
        line.contains(", issue ") && line.contains(", memory "),
        "{line}"
    );
    // No work-item of triad diverges: every step in full vectors.
    assert!(
        line.contains("; 100% of steps in ") && line.ends_with("-lane vectors"),
        "{line}"
    );
}

#[test]
fn bad_input_fails_with_exit_2() {
    let data = tempfile::tempdir().unwrap();
    let no_device = clflow(data.path(), &["predict", "kernels/triad/triad.toml"]);
    assert_eq!(no_device.status.code(), Some(2));
    let unknown = clflow(
        data.path(),
        &[
            "predict",
            "kernels/triad/triad.toml",
            "--device",
            "no-such-device-anywhere",
            "--no-run",
        ],
    );
    assert_eq!(unknown.status.code(), Some(2), "{}", text(&unknown.stderr));
    assert!(text(&unknown.stderr).contains("matches no device"));
    let ops = clflow(
        data.path(),
        &[
            "predict",
            "kernels/triad/triad.toml",
            "--device",
            "0",
            "--ops",
            "frobnicate",
        ],
    );
    assert_eq!(ops.status.code(), Some(2));
}
