//! Source lines end to end: `clflow count --json`'s per-line records and
//! `--lines`' annotated source on kernels whose hot lines are known, and
//! fault messages that start with the source location.

mod common;
use clflow_core::numbers::group_digits;
use common::{clflow, text};
use serde_json::Value;

fn count_json(manifest: &str) -> Value {
    let data = tempfile::tempdir().unwrap();
    let out = clflow(data.path(), &["count", manifest, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// The record of `file`'s line `n`.
fn line<'a>(report: &'a Value, file: &str, n: u64) -> &'a Value {
    report["lines"]
        .as_array()
        .expect("per-line records")
        .iter()
        .find(|l| l["file"] == file && l["line"] == n)
        .unwrap_or_else(|| panic!("no record of {file}:{n}"))
}

/// vadd's one statement, `c[i] = a[i] + b[i];` on line 17, does all of it:
/// 4,096 float adds, 8 bytes loaded and 4 stored per work-item.
#[test]
fn vadd_does_all_its_work_on_line_17() {
    let report = count_json("kernels/vadd/vadd.toml");
    let hot = line(&report, "kernels/vadd/vadd.cl", 17);
    assert_eq!(hot["W"], 4096);
    assert_eq!(hot["fp32"], 4096);
    assert_eq!(hot["global_load_bytes"], 8 * 4096);
    assert_eq!(hot["global_store_bytes"], 4 * 4096);
    assert_eq!(hot["q_share"], 1.0);
    let index = line(&report, "kernels/vadd/vadd.cl", 15);
    assert_eq!(index["W"], 0, "get_global_id is no work");
    let total: u64 = report["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["W"].as_u64().unwrap())
        .sum();
    assert_eq!(total, report["W"]["total"].as_u64().unwrap());
}

/// lookup3 (kernels/README.md derives its W): line 68's `mix(a, b, c)` is
/// six rows of sub, xor, rotate (3) and add, 36 operations per 12-byte
/// block mixed; line 65's `a += k[0]` is one add and one 4-byte load per
/// block; line 91's `final(a, b, c)` is seven rows of xor, sub and rotate
/// (3), 35 operations per key that is not empty.
#[test]
fn lookup3s_hot_lines_are_mix_and_final() {
    let report = count_json("kernels/lookup3/lookup3.toml");
    let file = "kernels/lookup3/lookup3.cl";
    let blocks = line(&report, file, 65)["W"].as_u64().unwrap();
    assert!(blocks > 0);
    assert_eq!(line(&report, file, 65)["global_load_bytes"], 4 * blocks);
    assert_eq!(line(&report, file, 68)["W"], 36 * blocks);
    let finals = line(&report, file, 91)["W"].as_u64().unwrap();
    assert_eq!(finals % 35, 0);
    let keys = report["work_items"].as_u64().unwrap();
    assert!(finals / 35 <= keys && finals / 35 > keys * 9 / 10);

    let data = tempfile::tempdir().unwrap();
    let out = clflow(
        data.path(),
        &["count", "kernels/lookup3/lookup3.toml", "--lines"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    let hottest = shown
        .split("Hottest lines:\n")
        .nth(1)
        .expect("the hottest lines");
    let first = hottest.lines().nth(1).expect("a hottest line");
    assert!(first.trim_start().starts_with("lookup3.cl:68 "), "{first}");
    assert!(first.ends_with("mix(a, b, c);"), "{first}");
    // The annotated source: the line's number, its W and its text.
    let annotated = shown
        .lines()
        .find(|l| l.trim_start().starts_with("68 "))
        .expect("line 68 annotated");
    assert!(
        annotated.contains(&group_digits(36 * blocks)),
        "{annotated}"
    );
    assert!(annotated.ends_with("mix(a, b, c);"), "{annotated}");
}

/// With the cache simulation, each line's DRAM bytes: sgemm-128 through a
/// 16 KiB cache reads 1,048,576 bytes for line 25's loads and writes back
/// C's 65,536 bytes for line 26's store (kernels/README.md's 1,114,112),
/// and says how each line's accesses coalesce.
#[test]
fn lines_carry_their_dram_traffic_through_the_simulated_cache() {
    let data = tempfile::tempdir().unwrap();
    let count = |how: &str| {
        let manifest = "kernels/sgemm/sgemm-128.toml";
        let out = clflow(
            data.path(),
            &["count", manifest, "--cache", "16KiB/64", how],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        out
    };
    let shown = text(&count("--lines").stdout);
    let row = |n: &str| {
        shown
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{n} ")))
            .unwrap_or_else(|| panic!("line {n}: {shown}"))
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // LINE W W% LOADED STORED Q% DRAM PATTERN...
    assert_eq!(row("25")[6], "1,048,576");
    assert_eq!(row("26")[6], "65,536");
    assert_eq!(row("26")[7], "contiguous");

    let out = count("--json");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sites = report["traffic"]["coalescing"]["sites"].as_array().unwrap();
    let dram: u64 = sites
        .iter()
        .map(|s| {
            s["dram"]["read_bytes"].as_u64().unwrap() + s["dram"]["written_bytes"].as_u64().unwrap()
        })
        .sum();
    assert_eq!(dram, 1_114_112);
    assert!(sites
        .iter()
        .all(|s| s["line"]["file"] == "kernels/sgemm/sgemm.cl"));
}

/// A work-item that reads past its buffer is named with the line and
/// column of the read, before the rest of the message.
#[test]
fn a_fault_starts_with_its_source_location() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("oob.cl"),
        "__kernel void oob(__global const float *in,\n\
         \x20                 __global float *out)\n\
         {\n\
         \x20   size_t i = get_global_id(0);\n\
         \x20   float x = 2.0f;\n\
         \x20   out[i] = in[i + 1] * x;\n\
         }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("oob.toml"),
        "source = \"oob.cl\"\nkernel = \"oob\"\nglobal_size = [1024]\nlocal_size = [64]\n\
         [[arg]]\nname = \"in\"\ntype = \"float\"\ncount = 1024\nfill = 1.0\n\
         [[arg]]\nname = \"out\"\ntype = \"float\"\ncount = 1024\n",
    )
    .unwrap();
    let manifest = dir.path().join("oob.toml");
    let out = clflow(dir.path(), &["count", manifest.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let message = text(&out.stderr);
    let first = message.lines().next().unwrap();
    let source = dir.path().join("oob.cl");
    assert!(
        first.starts_with(&format!(
            "clflow: error: {}:6:14: kernel `oob`, work-item (1023,0,0): ",
            source.display()
        )),
        "{first}"
    );
    // Only the last work-item reads past the end; the others went on.
    assert!(
        first.ends_with(
            "out-of-bounds access to __global arg 0 (in): 4 bytes at offset 4096, buffer is \
             4096 bytes"
        ),
        "{first}"
    );
}
