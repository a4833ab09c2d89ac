//! The checkers on bug families beyond races (see `races.rs`): kernels of
//! our own, each with a faulty variant that must be reported with its source
//! line and a safe one that must not.

mod common;
use common::{clflow, kernel_in, text, variant};
use std::path::Path;

/// `count MANIFEST ARGS...`: the exit status and stderr.
fn count(dir: &Path, manifest: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["count", manifest.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = clflow(dir, &all);
    (out.status.code(), text(&out.stderr))
}

const LAUNCH: &str = "global_size = [256]\nlocal_size = [64]\n";
const WRITE_ONLY_FLOAT4: &str =
    "[[arg]]\nname = \"out\"\ntype = \"float4\"\ncount = 256\naccess = \"wo\"\n";

#[test]
fn writing_some_lanes_of_a_vector_is_no_read_of_a_write_only_buffer() {
    let dir = tempfile::tempdir().unwrap();
    // Unoptimised, the compiler loads the vector, replaces two lanes and
    // stores it back: its read, not the kernel's.
    let lanes = "__kernel void lanes(__global float4 *out)\n{\n    out[get_global_id(0)].zw = (float2)(1.0f, 2.0f);\n}\n";
    for options in ["", "build_options = \"-cl-opt-disable\"\n"] {
        let launch = format!("{options}{LAUNCH}{WRITE_ONLY_FLOAT4}");
        let manifest = kernel_in(dir.path(), "lanes", lanes, &launch);
        let (status, stderr) = count(dir.path(), &manifest, &["--detect", "access"]);
        assert_eq!(status, Some(0), "{options}: {stderr}");
    }
    // A lane the kernel reads is its read (the compiler loads the vector
    // once, for line 4's lanes and line 5's read).
    let reads = "__kernel void reads(__global float4 *out)\n{\n    size_t i = get_global_id(0);\n    out[i].zw = (float2)(1.0f, 2.0f);\n    out[i].x = out[i].y;\n}\n";
    let manifest = kernel_in(
        dir.path(),
        "reads",
        reads,
        &format!("{LAUNCH}{WRITE_ONLY_FLOAT4}"),
    );
    let (status, stderr) = count(dir.path(), &manifest, &["--detect", "access"]);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(stderr.contains("reads.cl:4:"), "{stderr}");
    assert!(
        stderr.contains("read of write-only __global arg 0 (out): 16 bytes at offset 0"),
        "{stderr}"
    );
}

/// An async copy of each group's 64 elements into its local tile; `bad`
/// starts it half a group on (line 4), so the last group's reads past the
/// input, or waits also for an event no copy returned (line 7).
const COPY_IN: &str = "\
__kernel void copy_in(__global const int *in, __global int *out, __local int *t, const uint bad)
{
    size_t l = get_local_id(0), from = get_group_id(0) * 64 + (bad == 1 ? 32 : 0);
    event_t e = async_work_group_copy(t, in + from, 64, 0);
    event_t none = 0;
    if (bad == 2)
        wait_group_events(1, &none);
    wait_group_events(1, &e);
    out[get_global_id(0)] = t[l];
}
";

fn copy_in(dir: &Path, bad: u32) -> (Option<i32>, String) {
    let args = "[[arg]]\nname = \"in\"\ntype = \"int\"\ncount = 256\n\
                [[arg]]\nname = \"out\"\ntype = \"int\"\ncount = 256\n\
                [[arg]]\nname = \"t\"\nlocal_bytes = 256\n";
    let manifest = variant(dir, "copy_in", COPY_IN, args, bad);
    count(dir, Path::new(&manifest), &[])
}

#[test]
fn an_async_copy_past_its_buffer_is_out_of_bounds_and_a_foreign_event_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (status, stderr) = copy_in(dir.path(), 0);
    assert_eq!(status, Some(0), "{stderr}");
    let (status, stderr) = copy_in(dir.path(), 1);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(
        stderr.contains("copy_in.cl:4:17: kernel `copy_in`, work-item (192,0,0): OpGroupAsyncCopy")
            && stderr.contains(
                "out-of-bounds access to __global arg 0 (in): 4 bytes at offset 1024, buffer is 1024 bytes"
            ),
        "{stderr}"
    );
    assert!(!stderr.contains("never waited"), "{stderr}");
    let (status, stderr) = copy_in(dir.path(), 2);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(
        stderr.contains("copy_in.cl:7:9: kernel `copy_in`, work-item (0,0,0): OpGroupWaitEvents")
            && stderr.contains("waits for an event no async copy of this work-group returned"),
        "{stderr}"
    );
}

/// A packet whose last member is a one-element array the kernel indexes
/// past, as C's flexible-array idiom does, inside the variable; `bad`
/// reads past the variable (line 9).
const PACKET: &str = "\
typedef struct { int n; int data[1]; } packet;
__kernel void packet_read(__global int *out, const uint bad)
{
    packet p[2];
    int *raw = (int *)p;
    for (int k = 0; k < 4; k++)
        raw[k] = k;
    int i = (int)(get_global_id(0) % 2) + 1;
    out[get_global_id(0)] = bad ? p[0].data[i + 2] : p[0].data[i];
}
";

#[test]
fn an_index_past_a_trailing_one_element_array_is_checked_against_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    let args = "[[arg]]\nname = \"out\"\ntype = \"int\"\ncount = 256\n";
    let safe = variant(dir.path(), "packet_read", PACKET, args, 0);
    let (status, stderr) = count(dir.path(), Path::new(&safe), &["--detect", "all"]);
    assert_eq!(status, Some(0), "{stderr}");
    let bad = variant(dir.path(), "packet_read", PACKET, args, 1);
    let (status, stderr) = count(dir.path(), Path::new(&bad), &[]);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(
        stderr.contains("packet_read.cl:9:")
            && stderr.contains("out-of-bounds access to __private private variable")
            && stderr.contains("4 bytes at offset 16, buffer is 16 bytes"),
        "{stderr}"
    );
}

#[test]
fn a_sim_file_asking_for_opencl_2_may_have_a_smaller_last_work_group() {
    let dir = tempfile::tempdir().unwrap();
    let source = "kernel void sizes(global int *out)\n{\n    out[get_global_id(0)] = (int)get_local_size(0);\n}\n";
    std::fs::write(dir.path().join("sizes.cl"), source).unwrap();
    let sim = |name: &str, options: &str| {
        let path = dir.path().join(name);
        std::fs::write(
            &path,
            format!("sizes.cl\nsizes\n3 1 1\n2 1 1\n{options}\n<size=12 fill=0 dump>\n"),
        )
        .unwrap();
        path
    };
    let dump = dir.path().join("dump");
    let dump_arg = dump.to_str().unwrap();
    let (status, stderr) = count(
        dir.path(),
        &sim("cl2.sim", "-cl-std=CL2.0"),
        &["--dump", dump_arg],
    );
    assert_eq!(status, Some(0), "{stderr}");
    let out = std::fs::read(dump.join("out.bin")).unwrap();
    let sizes: Vec<i32> = out
        .chunks(4)
        .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(sizes, [2, 2, 1]);
    // OpenCL 1.2 wants whole work-groups, unless the command line builds
    // with OpenCL 2.0.
    let plain = sim("cl12.sim", "");
    let (status, stderr) = count(dir.path(), &plain, &[]);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(
        stderr.contains("cl12.sim:4: local size 2 does not divide global size 3"),
        "{stderr}"
    );
    let (status, stderr) = count(dir.path(), &plain, &["--build-options", "-cl-std=CL2.0"]);
    assert_eq!(status, Some(0), "{stderr}");
}

/// Private arrays overflowed by their own kernel: through a `char` pointer
/// to an `int` array (`bad == 1`, line 8) and past an array of padded
/// structs (`bad == 2`, line 11).
const PRIVATE: &str = "\
typedef struct { char c; int n; } padded;
__kernel void private_arrays(__global int *out, const uint bad)
{
    size_t i = get_global_id(0);
    int a[4];
    for (int k = 0; k < 4; k++) a[k] = k;
    char *bytes = (char *)a;
    out[i] = bytes[i % 16 + (bad == 1 ? 4 : 0)];
    padded p[2];
    p[0].n = 1; p[1].n = 2; p[0].c = 3; p[1].c = 4;
    out[i] += p[(i % 2) + (bad == 2 ? 1 : 0)].n;
}
";

#[test]
fn a_private_array_overflowed_through_a_cast_or_a_padded_struct_is_out_of_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let args = "[[arg]]\nname = \"out\"\ntype = \"int\"\ncount = 256\n";
    let run = |bad: u32| {
        let manifest = variant(dir.path(), "private_arrays", PRIVATE, args, bad);
        count(dir.path(), Path::new(&manifest), &["--detect", "none"])
    };
    let (status, stderr) = run(0);
    assert_eq!(status, Some(0), "{stderr}");
    let (status, stderr) = run(1);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(
        stderr.contains("private_arrays.cl:8:")
            && stderr.contains("1 bytes at offset 16, buffer is 16 bytes"),
        "{stderr}"
    );
    let (status, stderr) = run(2);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(
        stderr.contains("private_arrays.cl:11:")
            && stderr.contains("4 bytes at offset 20, buffer is 16 bytes"),
        "{stderr}"
    );
}

/// `fract` writes the whole part of its argument through its pointer: one
/// `float` of a `float2` the kernel reads whole; `bad` leaves the other
/// lane unwritten (line 6) and stores it (line 8).
const FRACT: &str = "\
__kernel void whole(__global const float *in, __global float *out, const uint bad)
{
    size_t i = get_global_id(0);
    float2 whole;
    if (!bad)
        whole.y = 1.0f;
    float f = fract(in[i], (float *)&whole);
    out[i] = f + whole.x + whole.y;
}
";

#[test]
fn a_lane_fract_leaves_unwritten_is_an_uninitialised_value() {
    let dir = tempfile::tempdir().unwrap();
    let args = "[[arg]]\nname = \"in\"\ntype = \"float\"\ncount = 256\nrange = [0, 100]\n\
                [[arg]]\nname = \"out\"\ntype = \"float\"\ncount = 256\n";
    let run = |bad: u32| {
        let manifest = variant(dir.path(), "whole", FRACT, args, bad);
        count(dir.path(), Path::new(&manifest), &["--detect", "uninit"])
    };
    let (status, stderr) = run(0);
    assert_eq!(status, Some(0), "{stderr}");
    let (status, stderr) = run(1);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(
        stderr.contains("whole.cl:8:")
            && stderr.contains("an uninitialised value is stored to global memory"),
        "{stderr}"
    );
}
