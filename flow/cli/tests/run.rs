//! `clflow run` end to end on the PoCL device: timing, the output check
//! against the interpreter, and the errors a user meets.

use serde_json::Value;
mod common;

use common::{clflow, text, Clflow};
use std::path::{Path, PathBuf};

/// A kernel that computes `out[i] = 3i` for the interpreter (clang's SPIR
/// target defines `__SPIR__`) and, on a device build without it, gets
/// element 77 wrong, or fails to build with `broken`.
fn write_two_faced_kernel(dir: &Path, broken: bool) -> PathBuf {
    let device_side = if broken {
        "#error \"this kernel does not build on the device\""
    } else {
        "out[i] = (i == 77) ? 0u : (uint)i * 3u;"
    };
    std::fs::write(
        dir.join("two-faced.cl"),
        format!(
            "__kernel void fill(__global uint* out, uint n) {{\n\
             \x20   size_t i = get_global_id(0);\n\
             \x20   if (i >= n) return;\n\
             #if defined(__SPIR__)\n\
             \x20   out[i] = (uint)i * 3u;\n\
             #else\n\
             \x20   {device_side}\n\
             #endif\n\
             }}\n"
        ),
    )
    .unwrap();
    let manifest = dir.join("two-faced.toml");
    std::fs::write(
        &manifest,
        "source = \"two-faced.cl\"\nkernel = \"fill\"\nglobal_size = [256]\nlocal_size = [64]\n\n\
         [[arg]]\nname = \"out\"\ntype = \"uint\"\ncount = 256\naccess = \"wo\"\n\n\
         [[arg]]\nname = \"n\"\ntype = \"uint\"\nvalue = 256\n",
    )
    .unwrap();
    manifest
}

/// `clflow run MANIFEST` on device 0: it succeeds and the device's output
/// buffers equal the interpreter's; the comparison.
fn agreeing_outputs(data_dir: &Path, manifest: &Path) -> Value {
    let out = clflow(
        data_dir,
        &["run", manifest.to_str().unwrap(), "--device", "0", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(run["outputs"]["verdict"], "agree", "{}", run["outputs"]);
    run["outputs"].clone()
}

#[test]
fn vadd_is_timed_and_agrees_with_the_interpreter() {
    let data = tempfile::tempdir().unwrap();
    let out = clflow(
        data.path(),
        &[
            "run",
            "kernels/vadd/vadd.toml",
            "--device",
            "0",
            "--min-time",
            "0.05",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(run["kernel"], "vadd");
    assert_eq!(run["device_index"], 0);
    let t = &run["timing"];
    let launches = t["launches"].as_u64().unwrap();
    assert!(launches >= 5, "{t}");
    assert_eq!(t["times_ns"].as_array().unwrap().len() as u64, launches);
    let (median, min, max) = (
        t["median_s"].as_f64().unwrap(),
        t["min_s"].as_f64().unwrap(),
        t["max_s"].as_f64().unwrap(),
    );
    assert!(min > 0.0 && min <= median && median <= max, "{t}");
    assert!(t["cv"].as_f64().unwrap() >= 0.0, "{t}");
    // Enough launches to span the time asked for, unless the cap stopped it.
    let stopped = run["notes"].to_string().contains("stopped at");
    assert!(t["total_s"].as_f64().unwrap() >= 0.05 || stopped, "{t}");
    assert_eq!(run["outputs"]["verdict"], "agree", "{}", run["outputs"]);
    assert_eq!(run["outputs"]["elements"], 4096);
    assert_eq!(run["outputs"]["buffers"], 1);
}

#[test]
fn exact_repetitions_and_the_text_report() {
    let data = tempfile::tempdir().unwrap();
    let out = clflow(
        data.path(),
        &[
            "run",
            "kernels/vadd/vadd.toml",
            "-d",
            "pthread",
            "--repetitions",
            "7",
            "--no-history",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("median of 7 launches"), "{stdout}");
    assert!(
        stdout.contains("outputs agree with the interpreter (4096 elements in 1 buffer)"),
        "{stdout}"
    );
    assert!(!data.path().join("history.db").exists());
}

#[test]
fn a_device_that_computes_another_result_is_caught() {
    let data = tempfile::tempdir().unwrap();
    let manifest = write_two_faced_kernel(data.path(), false);
    let out = clflow(
        data.path(),
        &[
            "run",
            manifest.to_str().unwrap(),
            "--device",
            "0",
            "--repetitions",
            "3",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let outputs = &run["outputs"];
    assert_eq!(outputs["verdict"], "differ");
    assert_eq!(outputs["buffer"], "arg 0 (out)");
    assert_eq!(outputs["index"], 77);
    assert_eq!(outputs["expected"], "231");
    assert_eq!(outputs["got"], "0");
    assert_eq!(outputs["differing"], 1);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("computes a different result: WRONG RESULT: arg 0 (out) differs from the interpreter at element 77"),
        "{stderr}"
    );
}

#[test]
fn a_failed_device_build_shows_the_logs_first_error() {
    let data = tempfile::tempdir().unwrap();
    let manifest = write_two_faced_kernel(data.path(), true);
    let out = clflow(
        data.path(),
        &["run", manifest.to_str().unwrap(), "--device", "0"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let error_line = stderr
        .lines()
        .find(|l| l.starts_with("clflow: error:"))
        .unwrap_or_else(|| panic!("no error line: {stderr}"));
    assert!(error_line.contains("build failed on"), "{error_line}");
    assert!(
        error_line.contains("this kernel does not build on the device"),
        "{error_line}"
    );
    assert!(stderr.contains("build log:"), "{stderr}");
}

#[test]
fn a_bad_device_selector_lists_the_candidates() {
    let data = tempfile::tempdir().unwrap();
    let out = clflow(
        data.path(),
        &["run", "kernels/vadd/vadd.toml", "--device", "no-such-board"],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("device selector 'no-such-board' matches no device; devices: 0: "),
        "{stderr}"
    );
    let out = clflow(
        data.path(),
        &["run", "kernels/vadd/vadd.toml", "--device", "99"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is out of range"));
}

#[test]
fn run_needs_a_manifest() {
    let data = tempfile::tempdir().unwrap();
    let out = clflow(
        data.path(),
        &["run", "kernels/vadd/vadd.cl", "--device", "0"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("`clflow run` needs a manifest"));
}

#[test]
fn the_device_compilers_chatter_is_shown_only_with_v() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    // The device build warns (an unused value); the interpreter's does not
    // see that line.
    std::fs::write(
        dir.join("chatty.cl"),
        "__kernel void chatty(__global float* a) {\n\
         \x20   size_t i = get_global_id(0);\n\
         #if !defined(__SPIR__)\n\
         \x20   a[i];\n\
         #endif\n\
         \x20   a[i] = a[i] + 1.0f;\n\
         }\n",
    )
    .unwrap();
    let manifest = dir.join("chatty.toml");
    std::fs::write(
        &manifest,
        "source = \"chatty.cl\"\nkernel = \"chatty\"\nglobal_size = [64]\n\n\
         [[arg]]\ntype = \"float\"\ncount = 64\n",
    )
    .unwrap();
    let run = |verbose: bool| {
        let mut args = vec!["run", manifest.to_str().unwrap(), "--device", "0"];
        args.extend(["--min-time", "0.01", "--no-history"]);
        if verbose {
            args.insert(0, "-v");
        }
        // PoCL builds afresh each time, so that it has something to say.
        let out = Clflow::new()
            .data(dir)
            .env("POCL_KERNEL_CACHE", "0")
            .run(&args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stderr)
    };
    let quiet = run(false);
    assert!(!quiet.contains("warning generated"), "{quiet}");
    let verbose = run(true);
    assert!(
        verbose.contains("build output:\n1 warning generated."),
        "{verbose}"
    );
}

/// A `float4` chosen whole by one lane's compare (an erosion filter's `if
/// (cur.x < px.x) px = cur;`) becomes a vector select by a scalar
/// condition, which SPIR-V allows only from 1.4; the module is written so
/// that it validates, and the interpreter then computes what the device
/// does, lane for lane.
#[test]
fn a_vector_chosen_by_one_lanes_compare_agrees_with_the_device() {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(
        data.path().join("erode.cl"),
        "__kernel void erode(__global const float4 *in, __global float4 *out, float threshold) {\n\
         \x20   int i = get_global_id(0);\n\
         \x20   float4 px = in[i];\n\
         \x20   float4 limit = px - threshold;\n\
         \x20   if (limit.x < 0) limit.x = 0;\n\
         \x20   float4 cur = in[i + 1];\n\
         \x20   if (cur.x < px.x) px = cur;\n\
         \x20   if (limit.x > px.x) px = limit;\n\
         \x20   out[i] = px;\n\
         }\n",
    )
    .unwrap();
    let manifest = data.path().join("erode.toml");
    std::fs::write(
        &manifest,
        "source = \"erode.cl\"\nkernel = \"erode\"\nglobal_size = [256]\n\
         [[arg]]\ntype = \"float4\"\ncount = 257\nrandom = { min = 0, max = 1, seed = 3 }\n\
         [[arg]]\ntype = \"float4\"\ncount = 256\naccess = \"wo\"\n\
         [[arg]]\ntype = \"float\"\nvalue = 0.25\n",
    )
    .unwrap();
    let outputs = agreeing_outputs(data.path(), &manifest);
    // Every float4 of both buffers compared: 257 in, 256 out.
    assert_eq!(outputs["elements"], 257 + 256);
}

#[test]
fn an_explicit_mad_and_a_contracted_multiply_add_round_as_the_device_does() {
    let data = tempfile::tempdir().unwrap();
    // The results' bits, so that no float tolerance hides a rounding.
    std::fs::write(
        data.path().join("madd.cl"),
        "__kernel void madd(__global const float *in, __global uint *out) {\n\
         \x20   int i = get_global_id(0);\n\
         \x20   float a = in[3 * i], b = in[3 * i + 1], c = in[3 * i + 2];\n\
         \x20   out[2 * i] = as_uint(mad(a, b, c));\n\
         \x20   out[2 * i + 1] = as_uint(a * b + c);\n\
         }\n",
    )
    .unwrap();
    let manifest = data.path().join("madd.toml");
    std::fs::write(
        &manifest,
        "source = \"madd.cl\"\nkernel = \"madd\"\nglobal_size = [256]\n\
         [[arg]]\ntype = \"float\"\ncount = 768\nrandom = { min = 0, max = 1, seed = 3 }\n\
         [[arg]]\ntype = \"uint\"\ncount = 512\naccess = \"wo\"\n",
    )
    .unwrap();
    let outputs = agreeing_outputs(data.path(), &manifest);
    assert_eq!(outputs["elements"], 768 + 512);
    // Both are two operations a work-item, the explicit one a multiply and
    // an add of its own.
    let counted = clflow(
        data.path(),
        &[
            "count",
            manifest.to_str().unwrap(),
            "--ops",
            "fp32",
            "--json",
        ],
    );
    assert_eq!(counted.status.code(), Some(0), "{}", text(&counted.stderr));
    let counts: Value = serde_json::from_slice(&counted.stdout).unwrap();
    assert_eq!(counts["W"]["fp32"], 256 * 4, "{counts}");
    assert_eq!(counts["ops"]["OpFMul"]["float"], 256, "{counts}");
    assert_eq!(counts["ops"]["OpFAdd"]["float"], 256, "{counts}");
}
