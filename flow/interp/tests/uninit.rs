//! `RunOptions::uninit`: following undefined values changes nothing the run
//! computes or counts, and finds each use where it is made.

mod common;
use clflow_interp::{RunOptions, TrapKind};
use common::*;

/// A private histogram cleared (`clear`) or not, a helper call, local
/// memory across a barrier.
const SOURCE: &str = r#"
uint bucket(uint v) { return v % 8; }
__kernel void hist(__global const uint *in, __global uint *out, __local uint *sum,
                   const uint clear) {
  uint h[8];
  if (clear)
    for (int k = 0; k < 8; k++) h[k] = 0;
  size_t l = get_local_id(0);
  for (int k = 0; k < 16; k++) h[bucket(in[get_global_id(0) * 16 + k])]++;
  sum[l] = h[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  uint top = 0;
  for (size_t k = 0; k < get_local_size(0); k++) top = max(top, sum[k]);
  if (top > 3) out[get_global_id(0)] = h[1];
}"#;

fn run(clear: u32, uninit: bool) -> clflow_interp::RunResult {
    let input: Vec<u32> = (0..64 * 16).map(|i| (i * 7 + i / 5) % 11).collect();
    let launch = launch(
        "hist",
        &[64],
        Some(&[16]),
        vec![
            u32s(&input),
            u32s(&[0; 64]),
            local(64),
            scalar(clear.to_le_bytes()),
        ],
    );
    let options = RunOptions { uninit, keep_going: true, ..RunOptions::default() };
    program(SOURCE, "hist").run(&launch, &options).unwrap()
}

#[test]
fn following_undefined_values_changes_no_count_or_output() {
    for clear in [0, 1] {
        let (plain, followed) = (run(clear, false), run(clear, true));
        assert_eq!(followed.counts, plain.counts, "clear = {clear}");
        assert_eq!(followed.buffers, plain.buffers, "clear = {clear}");
        assert!(plain.faults.is_empty());
    }
}

#[test]
fn a_histogram_never_cleared_is_used_at_its_branch() {
    assert!(run(1, true).faults.is_empty());
    let faults = run(0, true).faults;
    // `top` comes from every work-item's undefined h[0]: its test is the
    // first use; the 16 increments themselves are copies, and the store
    // of h[1] follows an undefined branch it is part of.
    let kinds: Vec<String> = faults.iter().map(|f| f.trap.kind.to_string()).collect();
    assert!(
        matches!(faults[0].trap.kind, TrapKind::Uninit(_)),
        "{kinds:?}"
    );
    assert_eq!(
        kinds[0], "an uninitialised value decides a branch",
        "{kinds:?}"
    );
    assert_eq!(faults[0].count, 64, "every work-item: {kinds:?}");
    // The first few, in work-group order.
    assert_eq!(
        faults[0].work_items,
        [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]]
    );
}
