//! async_work_group_copy and wait_group_events: every work-item of a group
//! must pass a copy the same arguments and wait for the same events, and
//! every copy must be waited for. Kernels of our own, one variant per
//! mistake.

mod common;
use common::{clflow, text, variant};
use std::path::Path;

/// Copies each group's 64 floats to local memory and doubles them. `bad`:
/// 1, work-item 3 copies from one element further (line 6); 2, work-item 5
/// copies fewer elements (line 6); 3, work-item 9 waits for the second
/// copy's event instead of the first's (line 10); 4, the second copy is
/// never waited for (line 8).
const KERNEL: &str = "\
__kernel void tiles(__global const float *in, __global float *out,
                    __local float *tile, __local float *spare, const uint bad)
{
    size_t l = get_local_id(0), g = get_group_id(0) * 64;
    event_t e = async_work_group_copy(tile, in + g + (bad == 1 && l == 3),
                                      64 - (bad == 2 && l == 5), 0);
    event_t f = async_work_group_copy(spare, in + g, 64, 0);
    if (bad != 4)
        wait_group_events(1, &f);
    wait_group_events(1, bad == 3 && l == 9 ? &f : &e);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[l] + spare[l];
}
";

fn manifest(dir: &Path, bad: u32) -> String {
    let args = "[[arg]]\nname = \"in\"\ntype = \"float\"\ncount = 256\nfill = 1.5\n\
                [[arg]]\nname = \"out\"\ntype = \"float\"\ncount = 256\naccess = \"wo\"\n\
                [[arg]]\nname = \"tile\"\nlocal_bytes = 256\n\
                [[arg]]\nname = \"spare\"\nlocal_bytes = 256\n";
    variant(dir, "tiles", KERNEL, args, bad)
}

/// `count`'s exit status and its error line.
fn count(dir: &Path, bad: u32) -> (Option<i32>, String) {
    let out = clflow(dir, &["count", &manifest(dir, bad)]);
    let stderr = text(&out.stderr);
    let error = stderr
        .lines()
        .find(|l| l.starts_with("clflow: error: "))
        .unwrap_or_default()
        .to_string();
    (out.status.code(), error)
}

#[test]
fn copies_waited_for_by_the_whole_group_pass() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dump");
    let out = clflow(
        dir.path(),
        &[
            "count",
            &manifest(dir.path(), 0),
            "--dump",
            dump.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bytes = std::fs::read(dump.join("out.bin")).unwrap();
    assert!(bytes
        .chunks(4)
        .all(|b| f32::from_le_bytes(b.try_into().unwrap()) == 3.0));
}

#[test]
fn work_items_passing_a_copy_other_arguments_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let (status, error) = count(dir.path(), 1);
    assert_eq!(status, Some(1), "{error}");
    assert!(error.contains("tiles.cl:5:"), "{error}");
    assert!(
        error.contains("work-item (3,0,0): OpGroupAsyncCopy "),
        "{error}"
    );
    assert!(
        error.contains(
            "async_work_group_copy: this work-item passes another source than work-item (0,0,0) \
             does; every work-item of the group must pass the same arguments"
        ),
        "{error}"
    );

    let (status, error) = count(dir.path(), 2);
    assert_eq!(status, Some(1), "{error}");
    assert!(error.contains("work-item (5,0,0)"), "{error}");
    assert!(
        error.contains("another element count than work-item (0,0,0)"),
        "{error}"
    );
}

#[test]
fn work_items_waiting_for_other_events_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let (status, error) = count(dir.path(), 3);
    assert_eq!(status, Some(1), "{error}");
    assert!(error.contains("tiles.cl:10:"), "{error}");
    assert!(
        error.contains(
            "work-item (9,0,0): OpGroupWaitEvents in `tiles`: wait_group_events: this work-item \
             waits for other events than work-item (0,0,0) does"
        ),
        "{error}"
    );
}

#[test]
fn a_copy_never_waited_for_is_a_fault() {
    let dir = tempfile::tempdir().unwrap();
    let (status, error) = count(dir.path(), 4);
    assert_eq!(status, Some(1), "{error}");
    assert!(error.contains("tiles.cl:7:"), "{error}");
    assert!(
        error.contains("work-item (0,0,0): OpGroupAsyncCopy "),
        "{error}"
    );
    assert!(
        error
            .contains("the work-group never waits for this async copy's event (wait_group_events)"),
        "{error}"
    );
}
