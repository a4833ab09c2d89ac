//! `clflow count --detect races`: kernels of our own, each with racy
//! variants that must be reported (both accesses: work-items, source lines,
//! buffer, offset) and a safe one that must not; and the corpus, whose
//! barrier-separated phases, private slots and atomics must pass.

mod common;
use common::{clflow, repo, text, variant};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A work-group sum in `__local` memory; `bad` leaves out the barrier
/// between filling the tile (line 5) and reading it (line 10).
const LOCAL_SUM: &str = "\
__kernel void local_sum(__global const float *in, __global float *out,
                        __local float *tile, const uint bad)
{
    size_t l = get_local_id(0);
    tile[l] = in[get_global_id(0)];
    if (!bad)
        barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (l < s)
            tile[l] += tile[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        out[get_group_id(0)] = tile[0];
}
";

/// Counts the positive inputs: `bad == 1` with a plain increment (line 8),
/// `bad == 2` with atomics (line 10) but a plain reset by each work-group's
/// first work-item (line 5); otherwise atomics alone.
const COUNT_POS: &str = "\
__kernel void count_pos(__global const int *in, __global int *count, const uint bad)
{
    int v = in[get_global_id(0)];
    if (bad == 2 && get_local_id(0) == 0)
        *count = 0;
    if (v > 0) {
        if (bad == 1)
            *count += 1;
        else
            atomic_inc(count);
    }
}
";

/// Doubles `a` in place; `bad` reads the next work-item's element (line 4)
/// before it is written (line 5).
const SHIFT: &str = "\
__kernel void shift(__global float *a, const uint bad)
{
    size_t i = get_global_id(0);
    float x = a[bad ? (i + 1) % get_global_size(0) : i];
    a[i] = x * 2.0f;
}
";

/// A global race behind a barrier that fences only local memory (`bad == 1`: work-item 0
/// overwrites, line 13, what every work-item read, line 4) and a local race behind one that
/// fences only global memory (`bad == 2`: line 14 reads a neighbour's line-5 write).
const FENCE: &str = "\
__kernel void fence(__global int *data, __global int *out, __local int *t, const uint bad)
{
    size_t l = get_local_id(0), base = get_group_id(0) * get_local_size(0);
    out[base + l] = data[base];
    t[l] = (int)l;
    if (bad == 1)
        barrier(CLK_LOCAL_MEM_FENCE);
    else if (bad == 2)
        barrier(CLK_GLOBAL_MEM_FENCE);
    else
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (l == 0)
        data[base] = -1;
    out[base + l] += t[(l + 1) % 64];
}
";

fn fence(dir: &Path, bad: u32) -> String {
    let args = "[[arg]]\nname = \"data\"\ntype = \"int\"\ncount = 256\n[[arg]]\nname = \"out\"\ntype = \"int\"\ncount = 256\n[[arg]]\nname = \"t\"\nlocal_bytes = 256\n";
    variant(dir, "fence", FENCE, args, bad)
}

/// Plain writes racing with async copies: into the local tile (`bad == 1`, line 5 against the
/// copy of line 6) and into the output (`bad == 2`, line 9 against the copy of line 10).
const COPY: &str = "\
__kernel void copy(__global const int *in, __global int *out, __local int *t, const uint bad)
{
    size_t l = get_local_id(0), base = get_group_id(0) * 64;
    if (bad == 1)
        t[l] = 0;
    event_t e = async_work_group_copy(t, in + base, 64, 0);
    wait_group_events(1, &e);
    if (bad == 2)
        out[base + l] = 1;
    event_t f = async_work_group_copy(out + base, t, 64, 0);
    wait_group_events(1, &f);
}
";

fn copy(dir: &Path, bad: u32) -> String {
    let args = "[[arg]]\nname = \"in\"\ntype = \"int\"\ncount = 256\nfill = 2\n[[arg]]\nname = \"out\"\ntype = \"int\"\ncount = 256\n[[arg]]\nname = \"t\"\nlocal_bytes = 256\n";
    variant(dir, "copy", COPY, args, bad)
}

/// An inter-group counter updated atomically (line 4), and reset (`bad == 1`, line 6) or read
/// (`bad == 2`, line 8) plainly.
const MIXED: &str = "\
__kernel void mixed(__global int *count, __global int *out, const uint bad)
{
    size_t i = get_global_id(0);
    atomic_inc(count);
    if (bad == 1 && get_local_id(0) == 0)
        count[0] = 0;
    if (bad == 2)
        out[i] = count[0];
}
";

fn mixed(dir: &Path, bad: u32) -> String {
    let args = "[[arg]]\nname = \"count\"\ntype = \"int\"\ncount = 1\n[[arg]]\nname = \"out\"\ntype = \"int\"\ncount = 256\n";
    variant(dir, "mixed", MIXED, args, bad)
}

/// Every work-item stores the same value to one flag (line 6) and the same vector argument to
/// one slot (line 7): no race; `bad == 1` stores each its own id (line 9).
const SAME: &str = "\
__kernel void same(__global const int *in, __global int *flag, __global float4 *last,
                   const float4 v, const uint bad)
{
    size_t i = get_global_id(0);
    if (in[i] >= 0)
        flag[0] = 1;
    last[0] = v;
    if (bad == 1)
        flag[1] = (int)i;
}
";

fn same(dir: &Path, bad: u32) -> String {
    let args = "[[arg]]\nname = \"in\"\ntype = \"int\"\ncount = 256\nfill = 1\n[[arg]]\nname = \"flag\"\ntype = \"int\"\ncount = 2\n[[arg]]\nname = \"last\"\ntype = \"float4\"\ncount = 1\n[[arg]]\nname = \"v\"\ntype = \"float4\"\nvalue = [1.0, 2.0, 3.0, 4.0]\n";
    variant(dir, "same", SAME, args, bad)
}

/// A compare-and-swap maximum in local memory (line 9), whose loop starts from a value it never
/// reads plainly; `bad == 1` overwrites the maximum plainly (line 15).
const CAS: &str = "\
__kernel void cas(__global const int *in, __global int *out, __local int *m, const uint bad)
{
    size_t l = get_local_id(0);
    if (l == 0)
        *m = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int v = in[get_global_id(0)], old = 0;
    while (old < v) {
        int seen = atomic_cmpxchg(m, old, v);
        if (seen == old)
            break;
        old = seen;
    }
    if (bad == 1)
        *m = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0)
        out[get_group_id(0)] = *m;
}
";

fn cas(dir: &Path, bad: u32) -> String {
    let args = "[[arg]]\nname = \"in\"\ntype = \"int\"\ncount = 256\nrange = [0, 1000]\n[[arg]]\nname = \"out\"\ntype = \"int\"\ncount = 4\n[[arg]]\nname = \"m\"\nlocal_bytes = 4\n";
    variant(dir, "cas", CAS, args, bad)
}

fn local_sum(dir: &Path, bad: u32) -> String {
    let args = "[[arg]]\nname = \"in\"\ntype = \"float\"\ncount = 256\nfill = 1.0\n\
                [[arg]]\nname = \"out\"\ntype = \"float\"\ncount = 4\naccess = \"wo\"\n\
                [[arg]]\nname = \"tile\"\nlocal_bytes = 256\n";
    variant(dir, "local_sum", LOCAL_SUM, args, bad)
}

fn count_pos(dir: &Path, bad: u32) -> String {
    let args = "[[arg]]\nname = \"in\"\ntype = \"int\"\ncount = 256\nrange = [-4, 4]\n\
                [[arg]]\nname = \"count\"\ntype = \"int\"\ncount = 1\n";
    variant(dir, "count_pos", COUNT_POS, args, bad)
}

fn shift(dir: &Path, bad: u32) -> String {
    let args = "[[arg]]\nname = \"a\"\ntype = \"float\"\ncount = 256\nfill = 1.0\n";
    variant(dir, "shift", SHIFT, args, bad)
}

/// `count --detect races --json`: the exit status and the faults listed.
fn faults(dir: &Path, manifest: &str) -> (Option<i32>, Vec<Value>, String) {
    let out = clflow(dir, &["count", manifest, "--detect", "races", "--json"]);
    let stderr = text(&out.stderr);
    let report: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let faults = report["faults"].as_array().cloned().unwrap_or_default();
    (out.status.code(), faults, stderr)
}

/// A fault's source line: `file.cl:LINE`.
fn line(location: &Value) -> String {
    let at = location.as_str().unwrap_or_default();
    let file = Path::new(at).file_name().unwrap().to_str().unwrap();
    file.rsplit_once(':').unwrap().0.to_string()
}

/// The fields a test checks, in the order the faults happened: what, how
/// the access went, its line, the other's work-item, how it went and its
/// line, and how many accesses.
fn summary(faults: &[Value]) -> Vec<String> {
    faults
        .iter()
        .map(|f| {
            let other = &f["other"];
            format!(
                "{} | {} {} | {} {} {} | {}",
                f["what"].as_str().unwrap(),
                f["access"].as_str().unwrap(),
                line(&f["location"]),
                other["work_item"],
                other["did"].as_str().unwrap(),
                if other["location"].is_null() {
                    "-".to_string()
                } else {
                    line(&other["location"])
                },
                f["count"]
            )
        })
        .collect()
}

#[test]
fn a_missing_barrier_in_local_memory_is_reported_with_both_accesses() {
    let dir = tempfile::tempdir().unwrap();
    let bad = local_sum(dir.path(), 1);
    let dump = dir.path().join("dump");
    let out = clflow(
        dir.path(),
        &[
            "count",
            &bad,
            "--detect",
            "races",
            "--dump",
            dump.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let source = dir.path().join("local_sum.cl");
    let source = source.display();
    // One fault: work-item 0 reads tile[32], which work-item 32 wrote with
    // no barrier between; 32 readers in each of the 4 work-groups.
    assert_eq!(stderr.matches("clflow: fault: ").count(), 0, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "clflow: error: {source}:10:24: kernel `local_sum`, work-item (0,0,0): OpLoad"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "data race within a work-group: reads 4 bytes at offset 128 of __local arg 2 \
             (tile), which work-item (32,0,0) wrote at {source}:5:13 (128 such accesses)"
        )),
        "{stderr}"
    );
    // The outputs are written all the same.
    assert_eq!(std::fs::metadata(dump.join("out.bin")).unwrap().len(), 16);

    let safe = local_sum(dir.path(), 0);
    let (status, found, stderr) = faults(dir.path(), &safe);
    assert_eq!((status, found.len()), (Some(0), 0), "{stderr}");
}

#[test]
fn plain_updates_race_within_and_across_work_groups_atomics_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let (status, found, stderr) = faults(dir.path(), &count_pos(dir.path(), 1));
    assert_eq!(status, Some(1), "{stderr}");
    // Work-items 0 and 1 hold no positive value: 2 and 3 are the first to
    // read and write; in the next work-groups every access races with the
    // first group's. Work-items reading the same count store the same
    // value, which alone would be no race: the race is with the reads. What
    // a work-group reads of the count (and so stores) hangs on how the
    // threads running the groups interleave, so which of its stores come
    // as a race of stores does too; the races with reads do not.
    let found = summary(&found);
    assert_eq!(
        found[1..3],
        [
            "data race within a work-group | writes count_pos.cl:8 | [2,0,0] read count_pos.cl:8 | 250",
            "data race across work-groups | reads count_pos.cl:8 | [2,0,0] wrote count_pos.cl:8 | 192",
        ],
        "{stderr}"
    );
    assert!(
        found[0].starts_with(
            "data race within a work-group | writes count_pos.cl:8 | null read count_pos.cl:8 | "
        ),
        "{stderr}"
    );
    assert!(
        found[3].starts_with("data race across work-groups | writes count_pos.cl:8 | "),
        "{stderr}"
    );
    let (_, faults_json, _) = faults(dir.path(), &count_pos(dir.path(), 1));
    assert_eq!(faults_json[0]["buffer"], "__global arg 1 (count)");
    assert_eq!(faults_json[0]["work_item"], serde_json::json!([2, 0, 0]));

    // Atomics mixed with a plain store race; atomics alone do not.
    let (status, found, stderr) = faults(dir.path(), &count_pos(dir.path(), 2));
    assert_eq!(status, Some(1), "{stderr}");
    assert_eq!(
        summary(&found),
        [
            // The first group's atomics after its first work-item's store.
            "data race within a work-group | atomically updates count_pos.cl:10 | [0,0,0] wrote count_pos.cl:5 | 251",
            // The next groups' stores after the first group's store and
            // atomics.
            "data race across work-groups | writes count_pos.cl:5 | [0,0,0] wrote count_pos.cl:5 | 1",
            // Their first work-item's own atomic, last of its group's:
            // the race there is reported at one more instruction.
            "data race within a work-group | atomically updates count_pos.cl:10 | null wrote count_pos.cl:5 | 3",
            "data race across work-groups | writes count_pos.cl:5 | [64,0,0] atomically updated count_pos.cl:10 | 2",
        ],
        "{stderr}"
    );
    let (status, found, stderr) = faults(dir.path(), &count_pos(dir.path(), 0));
    assert_eq!((status, found.len()), (Some(0), 0), "{stderr}");
}

#[test]
fn reading_a_neighbours_element_races_with_its_write() {
    let dir = tempfile::tempdir().unwrap();
    let (status, found, stderr) = faults(dir.path(), &shift(dir.path(), 1));
    assert_eq!(status, Some(1), "{stderr}");
    assert_eq!(
        summary(&found),
        [
            // Work-item 1 overwrites what work-item 0 read, and so on.
            "data race within a work-group | writes shift.cl:5 | [0,0,0] read shift.cl:4 | 252",
            // The first work-item of the next group overwrites what the
            // last of the group before read.
            "data race across work-groups | writes shift.cl:5 | [63,0,0] read shift.cl:4 | 3",
            // The last work-item reads what the first one wrote.
            "data race across work-groups | reads shift.cl:4 | [0,0,0] wrote shift.cl:5 | 1",
        ],
        "{stderr}"
    );
    assert_eq!(found[2]["work_item"], serde_json::json!([255, 0, 0]));
    assert_eq!(found[2]["offset"], 0);
    let (status, found, stderr) = faults(dir.path(), &shift(dir.path(), 0));
    assert_eq!((status, found.len()), (Some(0), 0), "{stderr}");
}

/// The corpus is race-free and uses no value it never wrote: barrier-separated phases in local
/// memory (reduction, sgemm-tiled, nbody), atomics (histogram), a slot per
/// work-item (the rest). Manifests whose data is not in git are left out.
#[test]
fn the_corpus_passes_every_checker() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for manifest in corpus_manifests() {
        let text_of = std::fs::read_to_string(&manifest).unwrap();
        if text_of.contains("data/1m/") || text_of.contains("data/paper/") {
            continue;
        }
        let path = manifest.to_str().unwrap();
        let out = clflow(dir.path(), &["count", path, "--detect", "all"]);
        assert_eq!(out.status.code(), Some(0), "{path}: {}", text(&out.stderr));
        checked += 1;
    }
    assert!(checked >= 14, "only {checked} corpus manifests");
}

fn corpus_manifests() -> Vec<PathBuf> {
    let mut found = Vec::new();
    for kernel in std::fs::read_dir(repo().join("kernels")).unwrap() {
        let kernel = kernel.unwrap().path();
        if !kernel.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&kernel).unwrap() {
            let file = file.unwrap().path();
            if file.extension().is_some_and(|e| e == "toml") {
                found.push(file);
            }
        }
    }
    found.sort();
    found
}

/// Local accesses go to the checker alone: the traffic a cache simulation
/// reports is the same with the race checker watching.
#[test]
fn the_race_checker_leaves_the_traffic_analysis_alone() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = "kernels/sgemm-tiled/sgemm-tiled.toml";
    let count = |detect: &[&str]| -> Value {
        let mut args = vec!["count", manifest, "--cache", "64KiB/64", "--json"];
        args.extend_from_slice(detect);
        let out = clflow(dir.path(), &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["traffic"].clone()
    };
    let plain = count(&[]);
    // Only the global accesses: the tiles in local memory are not traffic.
    assert_eq!(plain["accessed_bytes"], 20480, "{plain}");
    // (`aggregates` would add checks to the program, and renumber sites.)
    assert_eq!(count(&["--detect", "races,access,uninit"]), plain);
}

/// The races `count --detect races --json` finds in each variant of a
/// kernel (`summary`), for variants 0, 1 and 2.
fn variants(dir: &Path, make: fn(&Path, u32) -> String) -> [(Option<i32>, Vec<String>); 3] {
    std::array::from_fn(|bad| {
        let (status, found, stderr) = faults(dir, &make(dir, bad as u32));
        assert!(status.is_some(), "{stderr}");
        (status, summary(&found))
    })
}

#[test]
fn a_barrier_orders_only_the_memory_it_fences() {
    let dir = tempfile::tempdir().unwrap();
    let [safe, global, local] = variants(dir.path(), fence);
    assert_eq!(safe, (Some(0), vec![]));
    assert_eq!(
        global,
        (
            Some(1),
            vec![
                "data race within a work-group | writes fence.cl:13 | null read fence.cl:4 | 4"
                    .into()
            ]
        )
    );
    assert_eq!(
        local,
        (
            Some(1),
            vec!["data race within a work-group | reads fence.cl:14 | [2,0,0] wrote fence.cl:5 | 256"
                .into()]
        )
    );
}

#[test]
fn an_async_copy_races_with_plain_writes_to_where_it_copies() {
    let dir = tempfile::tempdir().unwrap();
    let [safe, into_local, into_global] = variants(dir.path(), copy);
    assert_eq!(safe, (Some(0), vec![]));
    let race = |copy: u32, write: u32| {
        format!("data race within a work-group | writes copy.cl:{copy} | [1,0,0] wrote copy.cl:{write} | 252")
    };
    assert_eq!(into_local, (Some(1), vec![race(6, 5)]));
    assert_eq!(into_global, (Some(1), vec![race(10, 9)]));
}

#[test]
fn a_plain_access_races_with_other_groups_atomics_on_the_same_counter() {
    let dir = tempfile::tempdir().unwrap();
    let [safe, reset, read] = variants(dir.path(), mixed);
    assert_eq!(safe, (Some(0), vec![]));
    assert_eq!(reset.0, Some(1));
    assert_eq!(
        reset.1[..2],
        [
            "data race within a work-group | writes mixed.cl:6 | null atomically updated mixed.cl:4 | 4",
            "data race across work-groups | atomically updates mixed.cl:4 | [0,0,0] wrote mixed.cl:6 | 3",
        ]
    );
    assert_eq!(read.0, Some(1));
    assert_eq!(
        read.1[1..],
        [
            "data race within a work-group | reads mixed.cl:8 | [0,0,0] atomically updated mixed.cl:4 | 252",
            "data race across work-groups | atomically updates mixed.cl:4 | [0,0,0] read mixed.cl:8 | 192",
        ]
    );
}

#[test]
fn stores_of_the_same_value_do_not_race() {
    let dir = tempfile::tempdir().unwrap();
    let [safe, ids, _] = variants(dir.path(), same);
    assert_eq!(safe, (Some(0), vec![]));
    assert_eq!(
        ids,
        (
            Some(1),
            vec![
                "data race within a work-group | writes same.cl:9 | [0,0,0] wrote same.cl:9 | 252"
                    .into(),
                "data race across work-groups | writes same.cl:9 | [0,0,0] wrote same.cl:9 | 3"
                    .into(),
            ]
        )
    );
}

#[test]
fn a_compare_and_swap_loop_races_only_with_plain_writes() {
    let dir = tempfile::tempdir().unwrap();
    let [safe, overwrite, _] = variants(dir.path(), cas);
    assert_eq!(safe, (Some(0), vec![]));
    assert_eq!(overwrite.0, Some(1));
    assert_eq!(
        overwrite.1[0],
        "data race within a work-group | writes cas.cl:15 | [1,0,0] atomically updated cas.cl:9 | 1"
    );
}
