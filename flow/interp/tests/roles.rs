//! Roles on kernels whose work is known by hand: the algorithm's
//! operations are work, index arithmetic address, bound tests control.

mod common;
use clflow_interp::{Counts, OpSet, Role};
use common::*;

fn w(k: &Counts, set: &str, role: Role) -> u64 {
    k.w_by_role(&set.parse::<OpSet>().unwrap()).get(role)
}

/// Every lane of `op` (all types) has `role`.
fn all_lanes(k: &Counts, op: &str, role: Role) {
    let entries: Vec<_> = k.histogram.iter().filter(|e| e.op == op).collect();
    assert!(!entries.is_empty(), "no {op} in {:?}", k.histogram);
    for e in entries {
        assert_eq!(
            e.by_role.get(role),
            e.lanes,
            "{op} {}: {:?}",
            e.ty,
            e.by_role
        );
    }
}

#[test]
fn vadd_work_is_its_adds_indexes_are_address_the_guard_control() {
    let n = 4096usize;
    let r = run(
        include_str!("../../../kernels/vadd/vadd.cl"),
        "vadd",
        &[n as u64],
        Some(&[64]),
        vec![
            f32s(&vec![1.0; n]),
            f32s(&vec![2.0; n]),
            f32s(&vec![0.0; n]),
            scalar((n as u32).to_le_bytes()),
        ],
    )
    .unwrap();
    let k = &r.counts;
    let n = n as u64;
    assert_eq!(w(k, "arith", Role::Work), n);
    assert_eq!(w(k, "fp32", Role::Work), n);
    assert_eq!(w(k, "int", Role::Work), 0);
    // a[i], b[i], c[i]; and i < n.
    assert_eq!(w(k, "arith", Role::Address), 3 * n);
    assert_eq!(w(k, "arith", Role::Control), n);
    // The default W is unchanged: the roles only split it.
    assert_eq!(k.w(&OpSet::default()), 5 * n);
    assert_eq!(k.w(&"work".parse().unwrap()), n);
    all_lanes(k, "OpFAdd", Role::Work);
    all_lanes(k, "OpInBoundsPtrAccessChain", Role::Address);
    all_lanes(k, "OpULessThan", Role::Control);
    all_lanes(k, "OpBranchConditional", Role::Control);
    all_lanes(k, "OpLoad global", Role::Work);
    all_lanes(k, "OpStore global", Role::Work);
}

#[test]
fn sgemm_work_is_2n3_flops_and_its_loop_is_address_and_control() {
    let n = 32usize;
    let r = run(
        include_str!("../../../kernels/sgemm/sgemm.cl"),
        "sgemm",
        &[n as u64, n as u64],
        Some(&[16, 16]),
        vec![
            f32s(&vec![1.0; n * n]),
            f32s(&vec![2.0; n * n]),
            f32s(&vec![0.0; n * n]),
            scalar((n as u32).to_le_bytes()),
        ],
    )
    .unwrap();
    let k = &r.counts;
    let n3 = (n * n * n) as u64;
    assert_eq!(w(k, "arith", Role::Work), 2 * n3);
    assert_eq!(w(k, "fp32", Role::Work), 2 * n3);
    assert_eq!(w(k, "int", Role::Work), 0);
    assert_eq!(w(k, "fp32", Role::Address) + w(k, "fp32", Role::Control), 0);
    assert_eq!(k.w(&"work".parse().unwrap()), 2 * n3);
    // clang contracts the multiply-add: a mad, two operations of work.
    all_lanes(k, "mad", Role::Work);
    all_lanes(k, "OpBranchConditional", Role::Control);
    // The k-loop's counter is tested and indexes A and B: its increment is
    // address, its compare control.
    assert!(w(k, "add", Role::Address) >= n3);
    assert!(w(k, "icmp", Role::Control) >= n3);
    assert_eq!(w(k, "icmp", Role::Work) + w(k, "icmp", Role::Address), 0);
}

const HASH: &str = r#"
__kernel void hash(__global const uint *in, __global uint *out) {
  size_t i = get_global_id(0);
  uint h = in[i];
  h ^= h >> 16; h *= 0x45d9f3bu;
  h ^= h >> 16; h *= 0x45d9f3bu;
  h ^= h >> 16;
  out[i] = h;
}"#;

#[test]
fn a_hash_is_integer_work() {
    let n = 1024usize;
    let keys: Vec<u32> = (0..n as u32).collect();
    let r = run(
        HASH,
        "hash",
        &[n as u64],
        None,
        vec![u32s(&keys), u32s(&vec![0; n])],
    )
    .unwrap();
    let k = &r.counts;
    let n = n as u64;
    // Three shifts, three xors and two multiplies each.
    assert_eq!(w(k, "int", Role::Work), 8 * n);
    assert_eq!(w(k, "arith", Role::Work), 8 * n);
    assert_eq!(w(k, "arith", Role::Address), 2 * n);
    assert_eq!(w(k, "arith", Role::Control), 0);
    assert_eq!(k.w(&"work".parse().unwrap()), 8 * n);
    for op in ["OpShiftRightLogical", "OpBitwiseXor", "OpIMul"] {
        all_lanes(k, op, Role::Work);
    }
}

const GATHER: &str = r#"
__kernel void gather(__global const uint *idx, __global const float *x, __global float *y) {
  size_t i = get_global_id(0);
  y[i] = x[idx[i] * 2 + 1];
}"#;

#[test]
fn a_loaded_index_and_its_arithmetic_are_address() {
    let n = 256usize;
    let idx: Vec<u32> = (0..n as u32).rev().collect();
    let x: Vec<f32> = (0..2 * n).map(|v| v as f32).collect();
    let r = run(
        GATHER,
        "gather",
        &[n as u64],
        None,
        vec![u32s(&idx), f32s(&x), f32s(&vec![0.0; n])],
    )
    .unwrap();
    let k = &r.counts;
    assert_eq!(w(k, "arith", Role::Work), 0);
    assert_eq!(w(k, "arith", Role::Control), 0);
    let loads = k
        .histogram
        .iter()
        .find(|e| e.op == "OpLoad global" && e.ty == "uint")
        .unwrap();
    assert_eq!(loads.by_role.address, n as u64);
}

const NEWTON: &str = r#"
__kernel void newton(__global const float *a, __global float *root, int iters) {
  size_t i = get_global_id(0);
  float x = a[i];
  for (int k = 0; k < iters && x * x > a[i] + 0.5f; k++)
    x = 0.5f * (x + a[i] / x);
  root[i] = x;
}"#;

#[test]
fn work_counts_a_float_test_that_ends_a_loop_but_no_integer_control() {
    let n = 64usize;
    let a: Vec<f32> = (0..n).map(|v| 100.0 + v as f32).collect();
    let r = run(
        NEWTON,
        "newton",
        &[n as u64],
        None,
        vec![f32s(&a), f32s(&vec![0.0; n]), scalar(4i32.to_le_bytes())],
    )
    .unwrap();
    let k = &r.counts;
    let work = k.w(&"work".parse().unwrap());
    let fp32 = k.w(&"fp32".parse().unwrap());
    assert_eq!(work, fp32 + w(k, "int", Role::Work));
    assert!(w(k, "fp32", Role::Control) > 0, "{:?}", k.histogram);
    assert!(w(k, "int", Role::Control) > 0, "{:?}", k.histogram);
    assert_eq!(w(k, "int", Role::Work), 0);
}

const CALL: &str = r#"
__attribute__((noinline)) float at(__global const float *p, size_t k) { return p[k]; }
__kernel void pick(__global const float *x, __global float *y) {
  size_t i = get_global_id(0);
  y[i] = at(x, i * 3 + 1);
}"#;

#[test]
fn an_argument_has_the_role_of_its_parameter() {
    let n = 128usize;
    let x: Vec<f32> = (0..3 * n + 1).map(|v| v as f32).collect();
    let r = run(
        CALL,
        "pick",
        &[n as u64],
        None,
        vec![f32s(&x), f32s(&vec![0.0; n])],
    )
    .unwrap();
    assert_eq!(as_f32(&r.buffers[1].bytes)[5], 16.0);
    let k = &r.counts;
    let calls = k
        .histogram
        .iter()
        .find(|e| e.op == "OpFunctionCall" && e.ty == "float");
    assert_eq!(calls.map(|e| e.lanes), Some(n as u64), "the call is kept");
    // i * 3 + 1 only indexes x, inside the callee.
    assert_eq!(w(k, "arith", Role::Work), 0, "{:?}", k.histogram);
    assert!(w(k, "int", Role::Address) >= 4 * n as u64);
    all_lanes(k, "OpReturn", Role::Control);
}
