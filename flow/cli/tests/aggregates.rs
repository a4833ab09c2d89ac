//! `clflow count`'s `aggregates` checker, on by default: an index outside an array inside a
//! private or local variable, which stays inside the variable and so
//! passes the bounds check every run makes. A kernel of our own with a
//! faulty variant of each and a safe one.

mod common;
use common::{clflow, text, variant};
use std::path::Path;

/// `bad == 1` reads `r.a[4]`, which is `r.b` (line 10); `bad == 2` writes
/// one element past each row of `grid` (line 11): the next row's first,
/// but for the last row, past the variable.
const KERNEL: &str = "\
typedef struct { int a[4]; int b; } rec;
__kernel void agg(__global const int *in, __global int *out, const uint bad)
{
    size_t i = get_global_id(0), l = get_local_id(0);
    __local int grid[4][16];
    rec r;
    r.b = (int)i;
    for (int k = 0; k < 4; k++) r.a[k] = in[i] + k;
    int j = (in[i] & 3) + (bad == 1);
    int x = r.a[j] + r.b;
    grid[l / 16][l % 16 + (bad == 2)] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[i] = grid[l / 16][l % 16];
}
";

fn manifest(dir: &Path, bad: u32) -> String {
    let args = "[[arg]]\nname = \"in\"\ntype = \"int\"\ncount = 256\nrange = [0, 1]\n\
                [[arg]]\nname = \"out\"\ntype = \"int\"\ncount = 256\n";
    variant(dir, "agg", KERNEL, args, bad)
}

/// `count`'s exit status and stderr, with `args` after the manifest.
fn count(dir: &Path, bad: u32, args: &[&str]) -> (Option<i32>, String) {
    let manifest = manifest(dir, bad);
    let mut all = vec!["count", manifest.as_str()];
    all.extend_from_slice(args);
    let out = clflow(dir, &all);
    (out.status.code(), text(&out.stderr))
}

#[test]
fn an_index_past_a_struct_members_array_is_caught_unless_told_not_to() {
    let dir = tempfile::tempdir().unwrap();
    // Without the checker the read lands in `r.b`, inside `r`: no fault.
    assert_eq!(count(dir.path(), 1, &["--detect", "none"]).0, Some(0));
    // It is on by default.
    let (status, stderr) = count(dir.path(), 1, &[]);
    assert_eq!(status, Some(1), "{stderr}");
    // Work-items with in[i] & 3 == 3 read a[4]: 3, 7, ..., 64 of them.
    assert!(stderr.contains("agg.cl:10:"), "{stderr}");
    assert!(
        stderr.contains("kernel `agg`, work-item (3,0,0): OpInBoundsPtrAccessChain ")
            && stderr.contains(
                "in `agg`: index 4 is outside an array of 4 elements in a __private variable (the \
             access would stay inside the variable, in another of its members or rows)"
            ),
        "{stderr}"
    );
    assert!(
        stderr.contains("(64 work-items stopped here: (3,0,0), (7,0,0), (11,0,0), (15,0,0), …)"),
        "{stderr}"
    );
}

#[test]
fn an_index_past_a_row_is_caught_where_the_variables_bound_sees_only_the_last() {
    let dir = tempfile::tempdir().unwrap();
    // The bounds check sees the last row's overflow alone: 4 work-items.
    let (status, stderr) = count(dir.path(), 2, &["--detect", "none"]);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(
        stderr.contains("out-of-bounds access to __local"),
        "{stderr}"
    );
    assert!(
        stderr.contains("(4 work-items stopped here: (63,0,0), (127,0,0), (191,0,0), (255,0,0))"),
        "{stderr}"
    );
    // Every row's: the 16 work-items with l % 16 == 15.
    let (status, stderr) = count(dir.path(), 2, &["--detect", "aggregates"]);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(stderr.contains("agg.cl:11:"), "{stderr}");
    assert!(
        stderr.contains("work-item (15,0,0): OpInBoundsPtrAccessChain ")
            && stderr.contains(
                "in `agg`: index 16 is outside an array of 16 elements in __local `agg.grid`"
            ),
        "{stderr}"
    );
    assert!(
        stderr.contains("(16 work-items stopped here: (15,0,0), (31,0,0), (47,0,0), (63,0,0), …)"),
        "{stderr}"
    );
}

#[test]
fn indices_inside_their_arrays_pass() {
    let dir = tempfile::tempdir().unwrap();
    let (status, stderr) = count(dir.path(), 0, &["--detect", "aggregates"]);
    assert_eq!(status, Some(0), "{stderr}");
}
