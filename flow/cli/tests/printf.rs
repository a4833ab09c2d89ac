//! A kernel's printf end to end: `clflow count` prints what the kernel
//! prints (on stdout before the report, on stderr with `--json`), each
//! work-group's output in work-item order, and the same lines as PoCL.

mod common;

use common::{clflow, text};
use std::path::{Path, PathBuf};

/// Every work-item prints ints, floats three ways, a float4, a string
/// literal chosen at run time, a char and a hex number. (No `%5.1s`: PoCL
/// 3.1 prints it as one space where C prints `    x`; the interpreter's
/// unit tests hold C's answer.)
const HELLO: &str = r#"
__kernel void hello(__global const float *x, __global int *out)
{
    int g = get_global_id(0);
    float4 v = (float4)(x[g], x[g] * 2.0f, -x[g], 0.125f);
    out[g] = printf("item %d (group %d, local %d): x=%f %e %g v=%v4hlf %s|%-3c|%#x\n",
                    g, (int)get_group_id(0), (int)get_local_id(0), x[g], x[g], x[g], v,
                    g & 1 ? "odd" : "even", 'A' + g, g * 255);
}
"#;

/// Two work-groups of four; x = -1.5, -0.75, 0, ... 3.75.
const MANIFEST: &str = r#"source = "hello.cl"
kernel = "hello"
global_size = [8]
local_size = [4]

[[arg]]
name = "x"
type = "float"
count = 8
range = [-1.5, 0.75]
access = "ro"

[[arg]]
name = "out"
type = "int"
count = 8
fill = 7
access = "wo"
dump = true
"#;

fn write_hello(dir: &Path) -> PathBuf {
    std::fs::write(dir.join("hello.cl"), HELLO).unwrap();
    let manifest = dir.join("hello.toml");
    std::fs::write(&manifest, MANIFEST).unwrap();
    manifest
}

/// What the kernel prints, in work-item order.
const PRINTED: [&str; 8] = [
    "item 0 (group 0, local 0): x=-1.500000 -1.500000e+00 -1.5 v=-1.500000,-3.000000,1.500000,0.125000 even|A  |0",
    "item 1 (group 0, local 1): x=-0.750000 -7.500000e-01 -0.75 v=-0.750000,-1.500000,0.750000,0.125000 odd|B  |0xff",
    "item 2 (group 0, local 2): x=0.000000 0.000000e+00 0 v=0.000000,0.000000,-0.000000,0.125000 even|C  |0x1fe",
    "item 3 (group 0, local 3): x=0.750000 7.500000e-01 0.75 v=0.750000,1.500000,-0.750000,0.125000 odd|D  |0x2fd",
    "item 4 (group 1, local 0): x=1.500000 1.500000e+00 1.5 v=1.500000,3.000000,-1.500000,0.125000 even|E  |0x3fc",
    "item 5 (group 1, local 1): x=2.250000 2.250000e+00 2.25 v=2.250000,4.500000,-2.250000,0.125000 odd|F  |0x4fb",
    "item 6 (group 1, local 2): x=3.000000 3.000000e+00 3 v=3.000000,6.000000,-3.000000,0.125000 even|G  |0x5fa",
    "item 7 (group 1, local 3): x=3.750000 3.750000e+00 3.75 v=3.750000,7.500000,-3.750000,0.125000 odd|H  |0x6f9",
];

fn printed() -> String {
    PRINTED.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn count_prints_the_kernels_output_then_its_report() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_hello(dir.path());
    for threads in ["1", "2"] {
        let out = clflow(
            dir.path(),
            &["count", manifest.to_str().unwrap(), "--threads", threads],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        let report = stdout
            .strip_prefix(&printed())
            .unwrap_or_else(|| panic!("{threads} threads:\n{stdout}"));
        assert!(
            report.starts_with("Lanes executed for kernel 'hello' (8 work-items in 2 work-groups)"),
            "{report}"
        );
        // Counted as always: one call per work-item, no work in W.
        assert!(report.contains("   8 - printf uint\n"), "{report}");
        // printf returned 0 everywhere.
        assert!(
            report.contains("arg 1 (out) after the run: 0, 0, 0, 0, 0, 0, 0, 0\n"),
            "{report}"
        );
    }
}

#[test]
fn with_json_the_kernels_output_goes_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_hello(dir.path());
    let out = clflow(dir.path(), &["count", manifest.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(v["ops"]["printf"]["uint"], 8);
    assert!(
        text(&out.stderr).starts_with(&printed()),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_conversion_opencl_c_leaves_undefined_fails_the_count_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.cl"), HELLO.replace("%v4hlf", "%v4f")).unwrap();
    let manifest = dir.path().join("hello.toml");
    std::fs::write(&manifest, MANIFEST).unwrap();
    let out = clflow(dir.path(), &["count", manifest.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("work-item (0,0,0)")
            && stderr.contains("printf: `%v4f`: a vector needs a length modifier"),
        "{stderr}"
    );
}

#[test]
fn pocl_prints_the_same_lines() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_hello(dir.path());
    let out = clflow(
        dir.path(),
        &[
            "run",
            manifest.to_str().unwrap(),
            "--device",
            "0",
            "--repetitions",
            "1",
            "--no-history",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // PoCL writes to the process's stdout, once per launch (the output
    // check, the warm-ups, the timed launch), and promises no order across
    // work-items: compare sorted lines, each of ours printed as often.
    let mut device: Vec<String> = text(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("item "))
        .map(String::from)
        .collect();
    device.sort();
    let launches = device.len() / PRINTED.len();
    assert!(
        launches >= 1 && device.len().is_multiple_of(PRINTED.len()),
        "{device:?}"
    );
    let mut ours: Vec<String> = PRINTED
        .iter()
        .flat_map(|l| std::iter::repeat_n(l.to_string(), launches))
        .collect();
    ours.sort();
    assert_eq!(device, ours);
}
