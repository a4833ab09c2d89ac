//! Faults that stop one work-item (a bad access, a division by zero): the
//! count goes on without it, lists every such fault once per instruction
//! with how many work-items it stopped, writes `--dump`, and exits 1.

mod common;
use common::{clflow, text};
use serde_json::Value;
use std::path::Path;

/// Work-items from `n` on read past the end of `in` (line 4); the ones
/// whose `d` is 0 divide by zero (line 5). Each work-group sums its
/// results in local memory across barriers (lines 7-12).
const KERNEL: &str = "\
__kernel void faulty(__global const int *in, __global const int *d, __global int *out,
                     __local int *tile, const uint n)
{
    size_t i = get_global_id(0), l = get_local_id(0);
    int x = in[i < n ? i : i + 1000] / d[i];
    tile[l] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[i] = tile[l] + tile[(l + 1) % get_local_size(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
}
";

/// `faulty` with `n`; `zeros` puts a 0 in `d` for every 50th work-item
/// from 7 on.
fn manifest(dir: &Path, n: u32, zeros: bool) -> String {
    std::fs::write(dir.join("faulty.cl"), KERNEL).unwrap();
    let d: Vec<u8> = (0..256)
        .flat_map(|i| i32::from(!(zeros && i % 50 == 7)).to_le_bytes())
        .collect();
    std::fs::write(dir.join("d.bin"), d).unwrap();
    let path = dir.join("faulty.toml");
    std::fs::write(
        &path,
        format!(
            "source = \"faulty.cl\"\nkernel = \"faulty\"\nglobal_size = [256]\nlocal_size = [64]\n\
             [[arg]]\nname = \"in\"\ntype = \"int\"\ncount = 256\nfill = 3\n\
             [[arg]]\nname = \"d\"\ntype = \"int\"\nfile = \"d.bin\"\n\
             [[arg]]\nname = \"out\"\ntype = \"int\"\ncount = 256\naccess = \"wo\"\n\
             [[arg]]\nname = \"tile\"\nlocal_bytes = 256\n\
             [[arg]]\ntype = \"uint\"\nvalue = {n}\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn every_fault_is_listed_once_with_the_work_items_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let faulty = manifest(dir.path(), 200, true);
    let dump = dir.path().join("dump");
    let out = clflow(
        dir.path(),
        &["count", &faulty, "--json", "--dump", dump.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let faults = report["faults"].as_array().unwrap();
    // Work-items 7, 57, 107 and 157 divide by zero; 200 to 255 read past
    // the end (207 and 257 too, but the read stops them first).
    let seen: Vec<(&str, u64, Value)> = faults
        .iter()
        .map(|f| {
            (
                f["what"].as_str().unwrap(),
                f["count"].as_u64().unwrap(),
                f["work_item"].clone(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("integer division by zero", 4, serde_json::json!([7, 0, 0])),
            (
                "out-of-bounds access to __global arg 0 (in): 4 bytes at offset 4800, buffer is 1024 bytes",
                56,
                serde_json::json!([200, 0, 0])
            ),
        ],
        "{stderr}"
    );
    assert!(faults.iter().all(|f| f["kind"] == "stop"));
    assert!(faults
        .iter()
        .all(|f| f["location"].as_str().unwrap().contains("faulty.cl:5:")));
    assert!(
        stderr.contains(
            "(56 work-items stopped here: (200,0,0), (201,0,0), (202,0,0), (203,0,0), …)"
        ),
        "{stderr}"
    );
    // The rest went on across both barriers, the stopped ones not waited
    // for: 3 / 1 from each of two neighbours where both ran, else 0s.
    let bytes = std::fs::read(dump.join("out.bin")).unwrap();
    let out: Vec<i32> = bytes
        .chunks(4)
        .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let ran = |i: usize| i < 200 && i % 50 != 7;
    for (i, v) in out.iter().enumerate() {
        let next = i / 64 * 64 + (i % 64 + 1) % 64;
        let expected = if ran(i) {
            3 + if ran(next) { 3 } else { 0 }
        } else {
            0
        };
        assert_eq!(*v, expected, "out[{i}]");
    }
}

#[test]
fn a_run_without_faults_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let safe = manifest(dir.path(), 256, false);
    let out = clflow(dir.path(), &["count", &safe, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report.get("faults").is_none());
}

#[test]
fn max_faults_caps_the_listing_and_json_keeps_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let faulty = manifest(dir.path(), 200, true);
    let out = clflow(dir.path(), &["count", &faulty, "--max-faults", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines[0], "clflow: fault: 1 more not listed (--max-faults; --json lists them all)",
        "{stderr}"
    );
    assert!(lines[1].starts_with("clflow: error: "), "{stderr}");
    assert!(
        lines[1].ends_with(
            "integer division by zero (4 work-items stopped here: (7,0,0), (57,0,0), (107,0,0), \
             (157,0,0)) (the first of 2 faults)"
        ),
        "{stderr}"
    );
    let out = clflow(dir.path(), &["count", &faulty, "--max-faults", "0"]);
    assert_eq!(out.status.code(), Some(2));
}
