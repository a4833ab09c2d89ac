//! `clflow count --detect`: kernels of our own, each with a faulty variant
//! that must be reported (where, who, how often) and a safe one that must
//! not.

mod common;
use common::{clflow, text, variant};
use serde_json::Value;
use std::path::Path;

/// A kernel that, when `bad` is set, writes its read-only input (line 8)
/// and reads its write-only output (line 9).
const KERNEL: &str = "\
__kernel void scale(__global float *in,
                    __global float *out,
                    const uint bad)
{
    size_t i = get_global_id(0);
    float x = in[i] * 2.0f;
    if (bad) {
        in[i] = x;
        x += out[i];
    }
    out[i] = x;
}
";

/// The kernel and a manifest that declares `in` read-only and `out`
/// write-only, launching `bad` as given.
fn manifest(dir: &Path, bad: u32) -> String {
    let args =
        "[[arg]]\nname = \"in\"\ntype = \"float\"\ncount = 256\nfill = 1.0\naccess = \"ro\"\n\
                [[arg]]\nname = \"out\"\ntype = \"float\"\ncount = 256\naccess = \"wo\"\n";
    variant(dir, "scale", KERNEL, args, bad)
}

#[test]
fn access_faults_are_reported_with_their_lines_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let bad = manifest(dir.path(), 1);
    let dump = dir.path().join("dump");
    let out = clflow(
        dir.path(),
        &[
            "count",
            &bad,
            "--detect",
            "access",
            "--dump",
            dump.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    let source = dir.path().join("scale.cl");
    let source = source.display();
    assert!(
        lines[0].starts_with(&format!("clflow: fault: {source}:9:")),
        "{stderr}"
    );
    assert!(
        lines[0].ends_with(
            "read of write-only __global arg 1 (out): 4 bytes at offset 0 (256 such accesses)"
        ),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with(&format!("clflow: error: {source}:8:")),
        "{stderr}"
    );
    assert!(
        lines[1].contains("kernel `scale`, work-item (0,0,0): OpStore")
            && lines[1].contains("write to read-only __global arg 0 (in): 4 bytes at offset 0"),
        "{stderr}"
    );
    // The outputs are written all the same: 256 floats of `out`.
    assert_eq!(std::fs::metadata(dump.join("out.bin")).unwrap().len(), 1024);

    let out = clflow(dir.path(), &["count", &bad, "--detect", "all", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let faults = report["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 2);
    assert_eq!(faults[0]["what"], "write to read-only");
    assert_eq!(faults[0]["count"], 256);
    assert!(faults[0]["location"]
        .as_str()
        .unwrap()
        .contains("scale.cl:8:"));
    assert_eq!(faults[1]["what"], "read of write-only");
    // The count is whole: a multiply and an add per work-item.
    assert_eq!(report["W"]["total"], 256 * 2);
}

#[test]
fn a_kernel_that_keeps_to_its_declared_access_passes() {
    let dir = tempfile::tempdir().unwrap();
    let safe = manifest(dir.path(), 0);
    let out = clflow(dir.path(), &["count", &safe, "--detect", "access"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("fault"));
    // Without --detect nothing is watched: the faulty launch counts.
    let bad = manifest(dir.path(), 1);
    let out = clflow(dir.path(), &["count", &bad]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // A checker clflow does not have is a usage error.
    let out = clflow(dir.path(), &["count", &bad, "--detect", "leaks"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown checker `leaks`"));
}

/// `analyze --detect` lists the faults, writes the whole report with the
/// faults noted on the kernel's runs, and exits 1.
#[test]
fn analyze_reports_faults_and_writes_its_report() {
    let dir = tempfile::tempdir().unwrap();
    common::with_quick_profile(dir.path());
    let bad = manifest(dir.path(), 1);
    let out_dir = dir.path().join("report");
    let out = clflow(
        dir.path(),
        &[
            "analyze",
            &bad,
            "--detect",
            "access",
            "--device",
            "0",
            "--quick-bench",
            "--min-time",
            "0.02",
            "--out",
            out_dir.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.matches("clflow: fault: ").count(), 2, "{stderr}");
    let html = std::fs::read_to_string(out_dir.join("index.html")).unwrap();
    assert!(html.contains("fault: "), "no fault noted in the report");
    assert!(html.contains("write to read-only __global arg 0 (in)"));
}
