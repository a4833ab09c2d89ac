//! Exact W and Q on kernels whose counts can be derived by hand, with
//! outputs checked against values computed here.

mod common;
use clflow_interp::OpSet;
use common::*;

const VADD: &str = r#"
__kernel void vadd(__global const float *a, __global const float *b, __global float *c, uint n) {
  size_t i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}"#;

#[test]
fn vadd_counts_n_adds_and_12n_bytes() {
    let n = 1000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 0.5 * i as f32).collect();
    // 1024 work-items, 24 of them beyond n do nothing.
    let r = run(
        VADD,
        "vadd",
        &[1024],
        Some(&[64]),
        vec![
            f32s(&a),
            f32s(&b),
            f32s(&vec![0.0; n]),
            scalar((n as u32).to_le_bytes()),
        ],
    )
    .unwrap();
    let c = as_f32(&r.buffers[2].bytes);
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i]);
    }
    let k = &r.counts;
    assert_eq!(k.work_items, 1024);
    assert_eq!(k.w(&"fp32".parse().unwrap()), n as u64);
    assert_eq!(k.lanes_of("OpFAdd"), n as u64);
    assert_eq!(k.q_load(), 8 * n as u64);
    assert_eq!(k.q_store(), 4 * n as u64);
    assert_eq!(k.q_accessed(), 12 * n as u64);
    // 4000-byte buffers: 63 lines of 64 bytes each, read twice, written once.
    assert_eq!(k.lines_read, 2 * 63);
    assert_eq!(k.lines_written, 63);
    assert_eq!(k.q_compulsory(), 3 * 63 * 64);
    // 1024 compares; n adds; 3n address computations.
    let int: OpSet = "icmp".parse().unwrap();
    assert_eq!(k.w(&int), 1024);
    assert_eq!(k.w(&"getelementptr".parse().unwrap()), 3 * n as u64);
}

const TRIAD: &str = r#"
__kernel void triad(__global const float4 *a, __global const float4 *b, __global float4 *c, float s) {
  size_t i = get_global_id(0);
  c[i] = a[i] + s * b[i];
}"#;

#[test]
fn float4_triad_counts_lanes_and_mad_as_two() {
    let n = 256usize;
    let a: Vec<f32> = (0..4 * n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..4 * n).map(|i| 1.0 + (i % 7) as f32).collect();
    let s = 3.0f32;
    let r = run(
        TRIAD,
        "triad",
        &[n as u64],
        None,
        vec![
            f32s(&a),
            f32s(&b),
            f32s(&vec![0.0; 4 * n]),
            scalar(s.to_le_bytes()),
        ],
    )
    .unwrap();
    let c = as_f32(&r.buffers[2].bytes);
    for i in 0..4 * n {
        assert_eq!(c[i], s.mul_add(b[i], a[i]), "lane {i}");
    }
    let k = &r.counts;
    // clang contracts a + s*b into mad: 4 lanes, 2 operations each.
    assert_eq!(k.lanes_of("mad"), 4 * n as u64);
    assert_eq!(k.w(&"fp32".parse().unwrap()), 8 * n as u64);
    assert_eq!(k.w(&"fmul".parse().unwrap()), 4 * n as u64);
    assert_eq!(k.q_accessed(), 48 * n as u64);
    assert_eq!(k.q_compulsory(), 48 * n as u64);
}

const SGEMM: &str = r#"
__kernel void sgemm(__global const float *A, __global const float *B, __global float *C, int n) {
  int r = get_global_id(1), col = get_global_id(0);
  float acc = 0.0f;
  for (int k = 0; k < n; k++) acc += A[r*n+k] * B[k*n+col];
  C[r*n+col] = acc;
}"#;

#[test]
fn sgemm_counts_two_n_cubed_flops() {
    let n = 16usize;
    let a: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 - 2.0).collect();
    let b: Vec<f32> = (0..n * n).map(|i| (i % 3) as f32 * 0.5).collect();
    let r = run(
        SGEMM,
        "sgemm",
        &[n as u64, n as u64],
        Some(&[8, 4]),
        vec![
            f32s(&a),
            f32s(&b),
            f32s(&vec![0.0; n * n]),
            scalar((n as i32).to_le_bytes()),
        ],
    )
    .unwrap();
    let c = as_f32(&r.buffers[2].bytes);
    for row in 0..n {
        for col in 0..n {
            let mut acc = 0.0f32;
            for k in 0..n {
                acc = a[row * n + k].mul_add(b[k * n + col], acc);
            }
            assert_eq!(c[row * n + col], acc);
        }
    }
    let k = &r.counts;
    assert_eq!(k.w(&"fp32".parse().unwrap()), 2 * (n as u64).pow(3));
    assert_eq!(k.q_load(), 8 * (n as u64).pow(3));
    assert_eq!(k.q_store(), 4 * (n as u64).pow(2));
    // Every byte of A, B and C is touched: 3 n² floats of compulsory traffic.
    assert_eq!(k.q_compulsory(), 3 * 4 * (n as u64).pow(2));
}

const COLLATZ: &str = r#"
__kernel void steps(__global const uint *start, __global uint *count) {
  size_t i = get_global_id(0);
  uint x = start[i], s = 0;
  while (x != 1) { x = (x & 1) ? 3 * x + 1 : x / 2; s++; }
  count[i] = s;
}"#;

#[test]
fn data_dependent_loop_runs_to_each_items_trip_count() {
    let starts: Vec<u32> = (1..=64).collect();
    let r = run(
        COLLATZ,
        "steps",
        &[64],
        Some(&[16]),
        vec![u32s(&starts), u32s(&[0; 64])],
    )
    .unwrap();
    let expected: Vec<u32> = starts
        .iter()
        .map(|&s| {
            let (mut x, mut n) = (s, 0);
            while x != 1 {
                x = if x & 1 == 1 { 3 * x + 1 } else { x / 2 };
                n += 1;
            }
            n
        })
        .collect();
    assert_eq!(as_u32(&r.buffers[1].bytes), expected);
    let total: u64 = expected.iter().map(|&n| n as u64).sum();
    // One `s++` per iteration, whatever shape the compiler gave the loop.
    let k = &r.counts;
    assert!(
        k.lanes_of("OpIAdd") >= total,
        "{} adds for {total} iterations",
        k.lanes_of("OpIAdd")
    );
    assert_eq!(k.q_accessed(), 64 * 8);
}

const REDUCE: &str = r#"
__kernel void reduce(__global const int *in, __global int *out, __local int *tmp) {
  size_t l = get_local_id(0);
  tmp[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (l < s) tmp[l] += tmp[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) out[get_group_id(0)] = tmp[0];
}"#;

#[test]
fn work_group_reduction_with_barriers_and_local_memory() {
    let input: Vec<u32> = (0..512u32).map(|i| i * 3 % 17).collect();
    let r = run(
        REDUCE,
        "reduce",
        &[512],
        Some(&[64]),
        vec![u32s(&input), u32s(&[0; 8]), local(64 * 4)],
    )
    .unwrap();
    let sums: Vec<u32> = input.chunks(64).map(|c| c.iter().sum()).collect();
    assert_eq!(as_u32(&r.buffers[1].bytes), sums);
    let k = &r.counts;
    assert_eq!(k.q_load(), 512 * 4);
    assert_eq!(k.q_store(), 8 * 4);
    // Local: 512 stores, then 32+16+...+1 = 63 adds per group, each two
    // loads and a store; the final read of tmp[0] per group.
    let report = k.report(&Default::default());
    assert_eq!(report.local.store_bytes, 4 * (512 + 8 * 63));
    assert_eq!(report.local.load_bytes, 4 * (8 * 63 * 2 + 8));
}

/// The histogram's types of `op`, in the order counted.
fn types_of<'c>(counts: &'c clflow_interp::Counts, op: &str) -> Vec<(&'c str, u64)> {
    counts
        .histogram
        .iter()
        .filter(|e| e.op == op)
        .map(|e| (e.ty.as_str(), e.lanes))
        .collect()
}

#[test]
fn instructions_without_a_value_are_void_and_a_branch_is_typed_by_its_condition() {
    const SHIFT: &str = r#"
__kernel void shift(__global const uint *in, __global uint *out, __local uint *tile) {
  size_t l = get_local_id(0);
  tile[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l > 0) out[get_global_id(0)] = tile[l - 1];
}"#;
    let n = 256usize;
    let input: Vec<u32> = (0..n as u32).map(|i| 3 * i + 1).collect();
    let r = run(
        SHIFT,
        "shift",
        &[n as u64],
        Some(&[64]),
        vec![u32s(&input), u32s(&vec![0; n]), local(64 * 4)],
    )
    .unwrap();
    let out = as_u32(&r.buffers[1].bytes);
    for i in 0..n {
        let expected = if i % 64 == 0 { 0 } else { input[i - 1] };
        assert_eq!(out[i], expected, "out[{i}]");
    }
    let k = &r.counts;
    assert_eq!(types_of(k, "OpControlBarrier"), [("void", n as u64)]);
    assert_eq!(types_of(k, "OpBranchConditional"), [("bool", n as u64)]);
    assert!(
        types_of(k, "OpReturn").iter().all(|(ty, _)| *ty == "void"),
        "{:?}",
        types_of(k, "OpReturn")
    );
    assert!(k.lanes_of("OpReturn") >= n as u64);
    // A store is typed by the value it stores; the first item of each
    // work-group skips it.
    assert_eq!(
        types_of(k, "OpStore global"),
        [("uint", (n - n / 64) as u64)]
    );
}
