//! `clflow count --detect uninit`: values from private or local memory
//! never written, followed to where they are used. Kernels of our own, a
//! faulty variant of each use (with its line) and a safe one.

mod common;
use common::{clflow, text, variant};
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
    let args = "[[arg]]\nname = \"in\"\ntype = \"int\"\ncount = 256\nrange = [0, 1]\n\
                [[arg]]\nname = \"out\"\ntype = \"int\"\ncount = 256\n\
                [[arg]]\nname = \"tile\"\nlocal_bytes = 512\n";
    variant(dir, "uses", KERNEL, args, bad)
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

/// Fills `tmp` (every other element where `bad`), then reads it back.
const STAGED: &str = "\
__kernel void staged(__global const int *in, __global int *tmp, __global int *out,
                     const uint bad)
{
    size_t i = get_global_id(0);
    if (bad == 0 || i % 2 == 0)
        tmp[i] = in[i] * 2;
    out[i] = 100 / (tmp[i] + 1);
}
";

#[test]
fn a_noinit_buffer_is_undefined_until_the_kernel_writes_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("staged.cl"), STAGED).unwrap();
    let toml = |bad: u32| {
        let path = dir.path().join(format!("staged-{bad}.toml"));
        std::fs::write(
            &path,
            format!(
                "source = \"staged.cl\"\nkernel = \"staged\"\nglobal_size = [256]\n\
                 local_size = [64]\n\
                 [[arg]]\nname = \"in\"\ntype = \"int\"\ncount = 256\nrange = [0, 1]\n\
                 [[arg]]\nname = \"tmp\"\ntype = \"int\"\ncount = 256\nnoinit = true\n\
                 [[arg]]\nname = \"out\"\ntype = \"int\"\ncount = 256\n\
                 [[arg]]\ntype = \"uint\"\nvalue = {bad}\n"
            ),
        )
        .unwrap();
        path
    };
    // The same launch as an Oclgrind `.sim` file, `noinit` in its header.
    let sim = dir.path().join("staged.sim");
    let ints = |f: &dyn Fn(u32) -> u32| (0..256).map(|i| f(i).to_string()).collect::<Vec<_>>();
    std::fs::write(
        &sim,
        format!(
            "staged.cl\nstaged\n256 1 1\n64 1 1\n<size=1024 int>\n{}\n<size=1024 int noinit>\n\
             <size=1024 int>\n{}\n<size=4 uint>\n1\n",
            ints(&|i| i).join(" "),
            ints(&|_| 0).join(" ")
        ),
    )
    .unwrap();
    let divides = |path: &Path| {
        let path = path.to_str().unwrap();
        let out = clflow(dir.path(), &["count", path, "--detect", "uninit"]);
        (out.status.code(), text(&out.stderr))
    };
    // Odd work-items read what no one wrote: 128 of them.
    for faulty in [toml(1), sim] {
        let (status, stderr) = divides(&faulty);
        assert_eq!(status, Some(1), "{stderr}");
        assert!(stderr.contains("staged.cl:7:"), "{stderr}");
        assert!(
            stderr.contains("kernel `staged`, work-item (1,0,0): "),
            "{stderr}"
        );
        assert!(
            stderr.contains("an uninitialised value divides (128 such uses: (1,0,0), (3,0,0), (5,0,0), (7,0,0), …)"),
            "{stderr}"
        );
    }
    let (status, stderr) = divides(&toml(0));
    assert_eq!(status, Some(0), "{stderr}");
    // Without `noinit` the buffer holds the zeros the manifest gives.
    let zeros = dir.path().join("zeros.toml");
    std::fs::write(
        &zeros,
        std::fs::read_to_string(toml(1))
            .unwrap()
            .replace("noinit = true\n", ""),
    )
    .unwrap();
    assert_eq!(divides(&zeros).0, Some(0));
}
