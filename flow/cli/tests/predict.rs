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

/// A GPU's block-stride loop: each of a group's 16 work-items walks the
/// group's part of `in` and `out`, a line a step. A CPU runs the group one
/// work-item after another, so where a walk outgrows the cache each
/// work-item reads and writes every line again: 16 times the traffic of
/// the lockstep order, which predict simulates for a CPU device.
#[test]
fn a_cpu_devices_cache_sees_its_work_items_one_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    common::with_quick_profile(dir.path());
    std::fs::write(
        dir.path().join("walk.cl"),
        "__kernel void walk(__global const float *in, __global float *out, uint steps) {\n\
         \x20   size_t l = get_local_id(0), base = get_group_id(0) * 16 * steps;\n\
         \x20   for (uint k = 0; k < steps; ++k)\n\
         \x20       out[base + 16 * k + l] = 2.0f * in[base + 16 * k + l];\n\
         }\n",
    )
    .unwrap();
    let manifest = |steps: u32| {
        let path = dir.path().join(format!("walk-{steps}.toml"));
        let floats = 2 * 16 * steps;
        std::fs::write(
            &path,
            format!(
                "source = \"walk.cl\"\nkernel = \"walk\"\nglobal_size = [32]\nlocal_size = [16]\n\
                 [[arg]]\nname = \"in\"\ntype = \"float\"\ncount = {floats}\n\
                 random = {{ min = 0.0, max = 1.0, seed = 1 }}\naccess = \"ro\"\n\
                 [[arg]]\nname = \"out\"\ntype = \"float\"\ncount = {floats}\naccess = \"wo\"\n\
                 [[arg]]\nname = \"steps\"\ntype = \"uint\"\nvalue = {steps}\n"
            ),
        )
        .unwrap();
        path.to_str().unwrap().to_string()
    };
    let traffic = |steps: u32| -> Value {
        let out = clflow(
            dir.path(),
            &[
                "predict",
                &manifest(steps),
                "--device",
                "0",
                "--quick-bench",
                "--no-run",
                "--cache",
                "64KiB",
                "--json",
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["traffic"][0].clone()
    };
    // 2,048 steps: each work-item walks 256 KiB of lines, over a quarter
    // of the 64 KiB cache.
    let long = traffic(2048);
    assert_eq!(
        long["order"], "work-items one at a time between barriers",
        "{long}"
    );
    let compulsory = long["compulsory"]["read_bytes"].as_u64().unwrap();
    assert_eq!(compulsory, 2 * 16 * 2048 * 4);
    assert_eq!(
        long["dram"]["read_bytes"].as_u64().unwrap(),
        16 * compulsory
    );
    assert_eq!(
        long["dram"]["written_bytes"].as_u64().unwrap(),
        16 * compulsory
    );
    // 64 steps: 8 KiB walks; the lockstep order's traffic, the compulsory.
    let short = traffic(64);
    assert!(short.get("order").is_none(), "{short}");
    assert_eq!(short["dram"], short["compulsory"]);
}
