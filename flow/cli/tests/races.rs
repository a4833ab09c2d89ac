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
    // first group's.
    assert_eq!(
        summary(&found),
        [
            "data race within a work-group | writes count_pos.cl:8 | null read - | 1",
            "data race within a work-group | writes count_pos.cl:8 | [2,0,0] wrote count_pos.cl:8 | 250",
            "data race across work-groups | reads count_pos.cl:8 | [2,0,0] wrote count_pos.cl:8 | 192",
            "data race across work-groups | writes count_pos.cl:8 | [2,0,0] wrote count_pos.cl:8 | 3",
        ],
        "{stderr}"
    );
    assert_eq!(found[0]["buffer"], "__global arg 1 (count)");
    assert_eq!(found[0]["work_item"], serde_json::json!([2, 0, 0]));

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
            "data race within a work-group | atomically updates count_pos.cl:10 | null wrote - | 3",
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
