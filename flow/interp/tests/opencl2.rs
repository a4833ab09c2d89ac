//! OpenCL 2.0 kernels (`-cl-std=CL2.0`): generic pointers and the casts out
//! of them, and program-scope variables whose initialisers point into
//! other program-scope variables. Outputs checked against values worked
//! out here; traffic counted in the space each access really touches.

mod common;
use clflow_core::{Access, ArgValue, LaunchArg};
use clflow_interp::{ItemOrder, Program, RunOptions};
use common::*;

fn run_cl2(
    source: &str,
    kernel: &str,
    global: &[u64],
    local: Option<&[u64]>,
    args: Vec<LaunchArg>,
) -> clflow_interp::RunResult {
    let module = clflow_interp::load(&compile_std(source, "CL2.0")).unwrap();
    let program = Program::translate(&module, kernel).unwrap_or_else(|e| panic!("{e}"));
    program
        .run(launch(kernel, global, local, args), &RunOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

const GENERIC: &str = r#"
__attribute__((noinline)) void bump(int *p) { *p += 1; }
__kernel void gen(__global int *out, __local int *scratch) {
  size_t i = get_global_id(0), l = get_local_id(0);
  int mine = (int)i;
  bump(&mine);
  bump(&out[i]);
  scratch[l] = mine;
  bump(&scratch[l]);
  barrier(CLK_LOCAL_MEM_FENCE);
  int *g = &out[i];
  out[i] += scratch[l] + (to_global(g) != 0) + 2 * (to_local(g) == 0) + 4 * (to_private(g) == 0);
}"#;

/// `bump` takes a generic pointer and is called with a private, a global
/// and a local one: each access lands, and is counted, where it points.
#[test]
fn generic_pointers_reach_every_space_and_cast_back() {
    let r = run_cl2(
        GENERIC,
        "gen",
        &[8],
        Some(&[4]),
        vec![
            i32s(&[5; 8]),
            LaunchArg { name: None, value: ArgValue::Local { bytes: 16 } },
        ],
    );
    // out = 5 + 1 (bumped) + (i + 2) (scratch) + 1 + 2 + 4 (the casts).
    let expected: Vec<i32> = (0..8).map(|i| 5 + 1 + (i + 2) + 7).collect();
    assert_eq!(as_i32(&r.buffers[0].bytes), expected);
    let report = r.counts.report(&Default::default());
    // Per work-item, 4-byte ints in each space: global, a load and a store
    // through `bump`, then a load and a store of out[i]; local, a store,
    // bump's load and store, then a load; private, `mine` stored, bump's
    // load and store, then a load.
    assert_eq!(report.q.global_load_bytes, 8 * 8);
    assert_eq!(report.q.global_store_bytes, 8 * 8);
    assert_eq!(report.local.load_bytes, 8 * 8);
    assert_eq!(report.local.store_bytes, 8 * 8);
    assert_eq!(report.private.load_bytes, 8 * 8);
    assert_eq!(report.private.store_bytes, 8 * 8);
    let generic_loads: u64 = r
        .counts
        .histogram
        .iter()
        .filter(|e| e.op == "OpLoad generic")
        .map(|e| e.lanes)
        .sum();
    assert_eq!(generic_loads, 3 * 8, "bump's load, once per call");
}

const PROGRAM_SCOPE: &str = r#"
global int table[4] = {10, 20, 30, 40};
global int *second = &table[1];
global int *ends[2] = {&table[0], &table[3]};
__kernel void scoped(__global int *out) {
  size_t i = get_global_id(0);
  out[i] = table[i % 4] + *second + *ends[i % 2];
}"#;

/// Pointer initialisers (`OpSpecConstantOp` access chains on a variable)
/// point where the source says, alone and inside an array.
#[test]
fn program_scope_pointers_point_into_program_scope_buffers() {
    let r = run_cl2(PROGRAM_SCOPE, "scoped", &[4], None, vec![i32s(&[0; 4])]);
    let expected: Vec<i32> = (0..4)
        .map(|i| [10, 20, 30, 40][i] + 20 + if i % 2 == 0 { 10 } else { 40 })
        .collect();
    assert_eq!(as_i32(&r.buffers[0].bytes), expected);
}

fn i32s(values: &[i32]) -> LaunchArg {
    let mut arg = u32s(&values.iter().map(|v| *v as u32).collect::<Vec<_>>());
    if let ArgValue::Buffer { ty, access, .. } = &mut arg.value {
        *ty = "int".parse().unwrap();
        *access = Access::ReadWrite;
    }
    arg
}

fn as_i32(bytes: &[u8]) -> Vec<i32> {
    bytes
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

const GROUPS: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
__kernel void groups(__global uint *out, __global float *f, __global uint *ids) {
  size_t i = get_global_id(0);
  uint lid = get_sub_group_local_id();
  ids[i] = get_sub_group_id() * 1000 + lid * 100 + get_sub_group_size() * 10 + get_num_sub_groups();
  out[i] = sub_group_reduce_add((uint)i) + 1000 * sub_group_scan_inclusive_add(lid)
         + 100000 * sub_group_broadcast((uint)i, 1) + 10000000 * sub_group_all(i % 2 == 0)
         + 100000000 * work_group_scan_exclusive_add(1u);
  f[i] = work_group_reduce_max(f[i]) + sub_group_reduce_min(f[i]);
}"#;

/// Sub-groups of a stated size (4) cut each work-group of 6 into 4 + 2;
/// work-group functions span the whole group. Every value worked out here.
#[test]
fn sub_groups_of_a_stated_size_and_work_group_functions() {
    let module = clflow_interp::load(&compile_std(GROUPS, "CL2.0")).unwrap();
    let program = Program::translate(&module, "groups").unwrap_or_else(|e| panic!("{e}"));
    let floats: Vec<f32> = (0..12).map(|i| ((i * 7) % 5) as f32 - 1.5).collect();
    let args = vec![u32s(&[0; 12]), f32s(&floats), u32s(&[0; 12])];
    let options = RunOptions { sub_group_size: 4, ..RunOptions::default() };
    let r = program
        .run(launch("groups", &[12], Some(&[6]), args), &options)
        .unwrap_or_else(|e| panic!("{e}"));
    let words = |k: usize| -> Vec<u32> {
        r.buffers[k]
            .bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let (mut out, mut f, mut ids) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..12u32 {
        let (group, lin) = (i / 6, i % 6);
        let (sub, lid) = (lin / 4, lin % 4);
        let first = group * 6 + sub * 4;
        let members: Vec<u32> = (first..(group * 6 + 6).min(first + 4)).collect();
        let size = members.len() as u32;
        ids.push(sub * 1000 + lid * 100 + size * 10 + 2);
        let sum: u32 = members.iter().sum();
        let scan = lid * (lid + 1) / 2;
        let all_even = members.iter().all(|m| m % 2 == 0) as u32;
        out.push(sum + 1000 * scan + 100000 * members[1] + 10000000 * all_even + 100000000 * lin);
        let group_max = floats[group as usize * 6..][..6]
            .iter()
            .cloned()
            .fold(f32::MIN, f32::max);
        let sub_min = members
            .iter()
            .map(|m| floats[*m as usize])
            .fold(f32::MAX, f32::min);
        f.push(group_max + sub_min);
    }
    assert_eq!(words(2), ids);
    assert_eq!(words(0), out);
    let got: Vec<f32> = words(1).iter().map(|b| f32::from_bits(*b)).collect();
    assert_eq!(got, f);
    // Asked to run one work-item at a time, as a CPU does, the kernel runs
    // in lockstep all the same: its group functions take the whole group.
    let one_at_a_time = RunOptions { order: ItemOrder::Vectors(1), ..options };
    let args = vec![u32s(&[0; 12]), f32s(&floats), u32s(&[0; 12])];
    let again = program
        .run(launch("groups", &[12], Some(&[6]), args), &one_at_a_time)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.order, ItemOrder::Lockstep);
    assert_eq!(again.buffers, r.buffers);
}
