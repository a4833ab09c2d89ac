//! `clflow count --detect uninit`: values from private or local memory
//! never written, followed to where they are used. Kernels of our own, a
//! faulty variant of each use (with its line) and a safe one.

mod common;
use common::{clflow, text};
use serde_json::Value;
use std::path::Path;

/// `bad` picks the use: 1, a private array's unset element decides a
/// branch (line 9); 2, divides (line 11); 3, makes an address (line 13);
/// 4, local memory no work-item wrote (line 15) is stored to global memory
/// (at line 18: the compiler merges the two stores to `out[i]`).
/// An unset struct member copied whole (line 17) is no use.
const KERNEL: &str = "\
typedef struct { int a; int b; } pair;
__kernel void uses(__global const int *in, __global int *out, __local int *tile,
                   const uint bad)
{
    size_t i = get_global_id(0), l = get_local_id(0);
    int k[4];
    k[0] = 1; k[1] = 2;
    int j = in[i] & 3, x = 0;
    if (bad == 1 && k[j] > 1)
        out[i] = 7;
    if (bad == 2) x = 100 / k[j];
    tile[l] = in[i];
    if (bad == 3) x = out[k[j] & 255];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[i] = x + (bad == 4 ? tile[l + 64] : tile[l]);
    pair p; p.a = x;
    pair q = p;
    out[i] += q.a;
}
";

fn manifest(dir: &Path, bad: u32) -> String {
    std::fs::write(dir.join("uses.cl"), KERNEL).unwrap();
    let path = dir.join(format!("uses-{bad}.toml"));
    std::fs::write(
        &path,
        format!(
            "source = \"uses.cl\"\nkernel = \"uses\"\nglobal_size = [256]\nlocal_size = [64]\n\
             [[arg]]\nname = \"in\"\ntype = \"int\"\ncount = 256\nrange = [0, 1]\n\
             [[arg]]\nname = \"out\"\ntype = \"int\"\ncount = 256\n\
             [[arg]]\nname = \"tile\"\nlocal_bytes = 512\n\
             [[arg]]\ntype = \"uint\"\nvalue = {bad}\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

/// A fault found: what, line, first work-item, count.
type Found = (String, String, Value, u64);

/// `count`'s exit status and the faults it found.
fn uses(dir: &Path, bad: u32) -> (Option<i32>, Vec<Found>) {
    let out = clflow(
        dir,
        &["count", &manifest(dir, bad), "--detect", "uninit", "--json"],
    );
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    let faults = report["faults"].as_array().cloned().unwrap_or_default();
    let found = faults
        .iter()
        .map(|f| {
            let at = f["location"].as_str().unwrap();
            let file = Path::new(at).file_name().unwrap().to_str().unwrap();
            (
                f["what"].as_str().unwrap().to_string(),
                file.rsplit_once(':').unwrap().0.to_string(),
                f["work_item"].clone(),
                f["count"].as_u64().unwrap(),
            )
        })
        .collect();
    (out.status.code(), found)
}

#[test]
fn each_use_of_a_value_never_written_is_reported_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    // Work-items whose j is 2 or 3 read an unset element: half of them,
    // the first being work-item 2.
    let first = serde_json::json!([2, 0, 0]);
    for (bad, what, line) in [
        (1, "an uninitialised value decides a branch", "uses.cl:9"),
        (3, "an uninitialised value makes an address", "uses.cl:13"),
    ] {
        let (status, found) = uses(dir.path(), bad);
        assert_eq!(status, Some(1), "bad = {bad}");
        assert_eq!(
            found,
            [(what.to_string(), line.to_string(), first.clone(), 128)],
            "bad = {bad}"
        );
    }
    // The unset elements read as 0 here: the division also stops them.
    let (status, found) = uses(dir.path(), 2);
    assert_eq!(status, Some(1));
    let divides = |what: &str| {
        (
            what.to_string(),
            "uses.cl:11".to_string(),
            first.clone(),
            128,
        )
    };
    assert_eq!(
        found,
        [
            divides("integer division by zero"),
            divides("an uninitialised value divides")
        ]
    );
    // Each work-group wrote the first 64 ints of its tile, none of the rest.
    let (status, found) = uses(dir.path(), 4);
    assert_eq!(status, Some(1));
    assert_eq!(
        found,
        [(
            "an uninitialised value is stored to global memory".to_string(),
            "uses.cl:18".to_string(),
            serde_json::json!([0, 0, 0]),
            256
        )]
    );
}

#[test]
fn values_written_first_or_only_copied_pass() {
    let dir = tempfile::tempdir().unwrap();
    let (status, found) = uses(dir.path(), 0);
    assert_eq!((status, found.len()), (Some(0), 0), "{found:?}");
}
