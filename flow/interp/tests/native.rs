//! The compiled tier against the interpreter: the same launch run both ways
//! gives the same counts, the same output bytes and the same faults, on
//! kernels that reach every kind of op the tier compiles.

mod common;
use clflow_core::LaunchArg;
use clflow_interp::{Engine, InterpError, RunOptions, RunResult, Tier};
use common::*;

/// Runs `kernel` compiled and interpreted; asserts which ran and that the
/// two agree on everything a run reports, and returns the compiled run.
fn both(
    source: &str,
    kernel: &str,
    global: &[u64],
    local: Option<&[u64]>,
    args: Vec<LaunchArg>,
    options: RunOptions,
) -> Result<RunResult, InterpError> {
    let program = program(source, kernel);
    let launch = launch(kernel, global, local, args);
    let compiled = program.run(
        &launch,
        &RunOptions { tier: Tier::Compile, ..options.clone() },
    );
    let interpreted = program.run(&launch, &RunOptions { tier: Tier::Interpret, ..options });
    match (&compiled, &interpreted) {
        (Ok(c), Ok(i)) => {
            assert_eq!(
                c.engine,
                Engine::Compiled,
                "the compiled tier runs {kernel}"
            );
            assert!(matches!(i.engine, Engine::Interpreted(_)));
            assert_eq!(c.counts, i.counts, "counts of {kernel}");
            assert_eq!(c.buffers, i.buffers, "outputs of {kernel}");
            assert_eq!(c.faults, i.faults, "faults {kernel} went on after");
        }
        (Err(c), Err(i)) => assert_eq!(c.to_string(), i.to_string(), "the fault of {kernel}"),
        _ => panic!("{kernel}: compiled {compiled:?}, interpreted {interpreted:?}"),
    }
    compiled
}

fn i64s(values: &[i64]) -> LaunchArg {
    buffer(
        "long",
        values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    )
}

fn f64s(values: &[f64]) -> LaunchArg {
    buffer(
        "double",
        values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    )
}

const MIXED: &str = r#"
__attribute__((noinline)) int weigh(int x, int k) {
  switch (x & 255) {
    case 0: return x * k;
    case 1: return x - k;
    case 3: return x / (k | 1);
    case 6: return x % 5;
    default: return x ^ k;
  }
}
__kernel void mixed(__global uchar *bytes, __global short *shorts, __global long *longs,
                    __global double *doubles, __global float4 *vectors, __global int *out,
                    int k) {
  size_t i = get_global_id(0);
  int x = (int)bytes[i] - 100;
  long l = longs[i] * (long)x + (long)get_local_id(0) * get_group_id(0);
  double d = fma(doubles[i], (double)x, 0.5) / 3.0;
  float4 v = vectors[i];
  v = v * (float)x + (float4)(1.0f, -2.0f, 3.5f, (float)get_local_size(0));
  int w = weigh(x, k) + (x < -50 ? 7 : -3) + (int)(get_num_groups(0) * 11);
  for (int j = 0; j < (x & 3); j++) w = (w << 1) ^ (int)(l >> j);
  bytes[i] = (uchar)(w + 1);
  shorts[i] = (short)(shorts[i] + w);
  longs[i] = l ^ (long)w;
  doubles[i] = d + (double)v.w;
  vectors[i] = v;
  out[i] = w + (int)(d > 0.0) + (int)isnan(d) + (int)convert_int_sat(v.x);
}"#;

/// Every kind of load and store, a call, a switch, a data-dependent loop,
/// integer, long, float, double and vector arithmetic, conversions and
/// the work-item builtins, on a launch whose last work-group is partial.
#[test]
fn a_kernel_of_every_kind_of_op_runs_the_same_compiled() {
    let n = 50;
    let bytes: Vec<u8> = (0..n).map(|i| (i * 37 % 251) as u8).collect();
    let shorts: Vec<u8> = (0..n)
        .flat_map(|i| ((i * 1009 - 20000) as i16).to_le_bytes())
        .collect();
    let longs: Vec<i64> = (0..n as i64).map(|i| i * 0x1_0000_0001 - 77).collect();
    let doubles: Vec<f64> = (0..n).map(|i| i as f64 * 0.75 - 10.0).collect();
    let vectors: Vec<f32> = (0..4 * n).map(|i| i as f32 * 0.125 - 3.0).collect();
    let r = both(
        MIXED,
        "mixed",
        &[n as u64],
        Some(&[16]),
        vec![
            u8s(&bytes),
            buffer("short", shorts),
            i64s(&longs),
            f64s(&doubles),
            buffer(
                "float4",
                vectors.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ),
            u32s(&[0; 50]),
            scalar(5i32.to_le_bytes()),
        ],
        RunOptions::default(),
    )
    .unwrap();
    // Work-item 0, by hand: x = -100; weigh takes its default case
    // (-100 & 255 = 156): -100 ^ 5 = -103; x < -50 adds 7 and 4 work-groups add
    // 44: w = -52, and the loop runs -100 & 3 = 0 times. d = (1000.5) / 3 > 0;
    // v.x = -3 * -100 + 1 = 301.
    let out = as_u32(&r.buffers[5].bytes);
    assert_eq!(out[0] as i32, -52 + 1 + 301);
    assert_eq!(r.buffers[0].bytes[0], (-51i32) as u8);
    let doubles = r.buffers[3].bytes[..8].try_into().unwrap();
    // d + v.w, v.w = -2.625 * -100 + 16 (the local size).
    assert_eq!(f64::from_le_bytes(doubles), 1000.5 / 3.0 + 278.5);
}

/// 64-bit integer arithmetic and shifts, float vectors' arithmetic, square
/// roots, float and double division: the interpreter runs these a row of
/// lanes at a time; every lane's value as Rust computes it, compiled and
/// interpreted. A kernel of straight-line code, so that -O2 keeps each op
/// apart.
#[test]
fn long_arithmetic_and_divisions_compute_the_same_both_ways() {
    const SOURCE: &str = r#"
__kernel void wide(__global ulong *u, __global float *f, __global double *d,
                   __global float4 *v) {
  size_t i = get_global_id(0);
  ulong x = u[i], y = u[i + 64];
  uint s = (uint)y & 63;
  u[i] = (x * y + (x << s)) ^ ((x >> s) - y) ^ (ulong)((long)x >> s);
  float a = f[i], b = f[i + 64];
  f[i] = a / b;
  f[i + 64] = sqrt(fabs(a)) + rsqrt(fabs(b));
  d[i] = d[i] / d[i + 64] + d[i] * d[i + 64] - d[i + 64];
  float4 p = v[i], q = v[i + 64];
  v[i] = (p + q) / (p - q);
  v[i + 64] = p * q;
}"#;
    let n = 64;
    let us: Vec<u64> = (0..2 * n as u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 40))
        .collect();
    let fs: Vec<f32> = (0..2 * n).map(|i| (i as f32 - 60.0) * 0.37).collect();
    let ds: Vec<f64> = (0..2 * n).map(|i| (i as f64 - 70.0) * 1.3e-5).collect();
    let vs: Vec<f32> = (0..8 * n).map(|i| (i as f32 - 200.0) * 0.61).collect();
    let u64s = |v: &[u64]| buffer("ulong", v.iter().flat_map(|x| x.to_le_bytes()).collect());
    let vector = |v: &[f32]| buffer("float4", v.iter().flat_map(|x| x.to_le_bytes()).collect());
    let r = both(
        SOURCE,
        "wide",
        &[n as u64],
        Some(&[n as u64]),
        vec![u64s(&us), f32s(&fs), f64s(&ds), vector(&vs)],
        RunOptions::default(),
    )
    .unwrap();
    let word = |b: &[u8], i: usize| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap());
    let floats = as_f32(&r.buffers[1].bytes);
    for i in 0..n {
        let (x, y) = (us[i], us[i + n]);
        let s = (y & 63) as u32;
        let want = (x.wrapping_mul(y).wrapping_add(x << s))
            ^ (x >> s).wrapping_sub(y)
            ^ ((x as i64) >> s) as u64;
        assert_eq!(word(&r.buffers[0].bytes, i), want, "ulong lane {i}");
        let (a, b) = (fs[i], fs[i + n]);
        assert_eq!(floats[i].to_bits(), (a / b).to_bits(), "float lane {i}");
        let rsqrt = (1.0 / (b.abs() as f64).sqrt()) as f32;
        let roots = a.abs().sqrt() + rsqrt;
        assert_eq!(floats[i + n].to_bits(), roots.to_bits(), "roots, lane {i}");
        let vectors = as_f32(&r.buffers[3].bytes);
        for c in 0..4 {
            let (p, q) = (vs[4 * i + c], vs[4 * (i + n) + c]);
            let (sum, product) = (vectors[4 * i + c], vectors[4 * (i + n) + c]);
            assert_eq!(
                sum.to_bits(),
                ((p + q) / (p - q)).to_bits(),
                "float4 lane {i}.{c}"
            );
            assert_eq!(product.to_bits(), (p * q).to_bits(), "float4 lane {i}.{c}");
        }
        let (a, b) = (ds[i], ds[i + n]);
        let double = f64::from_bits(word(&r.buffers[2].bytes, i));
        assert_eq!(
            double.to_bits(),
            (a / b + a * b - b).to_bits(),
            "double lane {i}"
        );
    }
}

const FAULTY: &str = r#"
__kernel void faulty(__global int *data, int bad, int divisor) {
  size_t i = get_global_id(0);
  int v = data[i];
  if (i == (size_t)bad) v += data[i + 1000];
  data[i] = v / (i == 7 ? divisor : 1);
}"#;

fn faulty(bad: i32, divisor: i32, keep_going: bool) -> Result<RunResult, InterpError> {
    both(
        FAULTY,
        "faulty",
        &[16],
        Some(&[4]),
        vec![
            u32s(&(0..16).collect::<Vec<_>>()),
            scalar(bad.to_le_bytes()),
            scalar(divisor.to_le_bytes()),
        ],
        RunOptions { keep_going, ..RunOptions::default() },
    )
}

/// An access out of bounds and a division by zero stop the same
/// work-item at the same instruction, with the same report, whether the
/// run ends there or goes on after.
#[test]
fn faults_stop_the_same_work_item_at_the_same_instruction() {
    let err = faulty(5, 1, false).unwrap_err().to_string();
    assert!(
        err.contains("(5,0,0)") && err.contains("out-of-bounds"),
        "{err}"
    );
    let err = faulty(-1, 0, false).unwrap_err().to_string();
    assert!(
        err.contains("(7,0,0)") && err.contains("division by zero"),
        "{err}"
    );
    let r = faulty(5, 0, true).unwrap();
    assert_eq!(r.faults.len(), 2, "{:?}", r.faults);
    // The work-items that did not fault wrote their values.
    assert_eq!(as_u32(&r.buffers[0].bytes)[3], 3);
}

/// A work-item that never ends is stopped after the same number of steps.
#[test]
fn the_step_limit_stops_a_compiled_loop() {
    let source = r#"
__kernel void spin(__global int *out, int step) {
  int i = 0;
  while (out[0] >= 0) { i += step; out[1] = i; }
}"#;
    let err = both(
        source,
        "spin",
        &[1],
        None,
        vec![u32s(&[0, 0]), scalar(1i32.to_le_bytes())],
        RunOptions { max_steps: 10_000, ..RunOptions::default() },
    )
    .unwrap_err();
    assert!(err.to_string().contains("10000"), "{err}");
}

/// A private array indexed at run time: each work-item's own, fresh.
#[test]
fn private_arrays_are_each_work_items_own() {
    let source = r#"
__kernel void table(__global int *out, int k) {
  int t[16];
  size_t i = get_global_id(0);
  for (int j = 0; j < 16; j++) t[j] = j * (int)i + k;
  int sum = 0;
  for (int j = 0; j < 16; j += 1 + (int)(i % 3)) sum += t[(j * 7 + (int)i) % 16];
  out[i] = sum;
}"#;
    let r = both(
        source,
        "table",
        &[24],
        Some(&[8]),
        vec![u32s(&[0; 24]), scalar(3i32.to_le_bytes())],
        RunOptions::default(),
    )
    .unwrap();
    // Work-item 0 sums t[0], t[7], t[14], ... = 16 entries of k = 3.
    assert_eq!(as_u32(&r.buffers[0].bytes)[0], 48);
}

const TREE: &str = r#"
__kernel void tree(__global const int *in, __global int *out, __local int *part) {
  size_t l = get_local_id(0), n = get_local_size(0);
  part[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t s = n / 2; s > 0; s /= 2) {
    if (l < s) part[l] += part[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) out[get_group_id(0)] = part[0];
}"#;

/// A reduction through local memory with barriers in a loop: every
/// work-item of a group stops at each barrier and goes on with its own
/// registers.
#[test]
fn a_reduction_with_barriers_in_a_loop_runs_compiled() {
    let input: Vec<u32> = (1..=256).collect();
    let r = both(
        TREE,
        "tree",
        &[256],
        Some(&[64]),
        vec![u32s(&input), u32s(&[0; 4]), local(256)],
        RunOptions::default(),
    )
    .unwrap();
    let sums: Vec<u32> = (0..4).map(|g| (64 * g + 1..=64 * g + 64).sum()).collect();
    assert_eq!(as_u32(&r.buffers[1].bytes), sums);
}

/// Work-items that miss a barrier the others wait at, or wait at
/// different ones, fail as they fail in the interpreter.
#[test]
fn barrier_divergence_fails_the_same_way() {
    let returns = r#"
__kernel void early(__global int *data, __local int *tmp) {
  size_t l = get_local_id(0);
  if (l == 3) return;
  tmp[l] = data[l];
  barrier(CLK_LOCAL_MEM_FENCE);
  data[l] = tmp[(l + 1) % 4];
}"#;
    let err = both(
        returns,
        "early",
        &[4],
        Some(&[4]),
        vec![u32s(&[1, 2, 3, 4]), local(16)],
        RunOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("never reached"), "{err}");
    let differs = r#"
__kernel void apart(__global int *data) {
  size_t l = get_local_id(0);
  if (l < 2) {
    barrier(CLK_GLOBAL_MEM_FENCE);
    data[l] += 1;
  } else {
    data[l] *= 3;
    barrier(CLK_GLOBAL_MEM_FENCE);
    data[l] += 2;
  }
}"#;
    let err = both(
        differs,
        "apart",
        &[4],
        Some(&[4]),
        vec![u32s(&[1, 2, 3, 4])],
        RunOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("different barrier"), "{err}");
}

/// Atomic updates whose old value nobody reads leave memory the same in any
/// order: a histogram in local memory, merged into global bins.
#[test]
fn atomic_updates_whose_old_value_is_unused_run_compiled() {
    let source = r#"
__kernel void hist(__global const uint *data, __global uint *bins, __local uint *part) {
  size_t l = get_local_id(0);
  if (l < 4) part[l] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_inc(&part[data[get_global_id(0)] % 4]);
  atomic_max(&bins[4], data[get_global_id(0)]);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l < 4) atomic_add(&bins[l], part[l]);
}"#;
    let data: Vec<u32> = (0..64).map(|i| i * 7 % 13).collect();
    let r = both(
        source,
        "hist",
        &[64],
        Some(&[16]),
        vec![u32s(&data), u32s(&[0; 5]), local(16)],
        RunOptions::default(),
    )
    .unwrap();
    let mut bins = [0u32; 5];
    for d in &data {
        bins[(d % 4) as usize] += 1;
    }
    bins[4] = 12;
    assert_eq!(as_u32(&r.buffers[1].bytes), bins);
}

/// A kernel the tier does not run says why, and is interpreted: here an
/// atomic's old value picks where each work-item writes, which depends on
/// the order work-items run in.
#[test]
fn a_kernel_that_reads_an_atomics_old_value_is_interpreted_and_says_why() {
    let source = r#"
__kernel void compact(__global const int *data, __global int *out, __global int *n) {
  int v = data[get_global_id(0)];
  if (v > 0) out[atomic_inc(n)] = v;
}"#;
    let r = run(
        source,
        "compact",
        &[8],
        // One work-group: groups on different threads would take slots in
        // any order.
        Some(&[8]),
        vec![u32s(&[0, 5, 0, 7, 9, 0, 0, 1]), u32s(&[0; 8]), u32s(&[0])],
    )
    .unwrap();
    assert_eq!(
        r.engine,
        Engine::Interpreted("an atomic function's old value is used".into())
    );
    // The interpreter runs work-items in order.
    assert_eq!(as_u32(&r.buffers[1].bytes)[..4], [5, 7, 9, 1]);
    assert_eq!(as_u32(&r.buffers[2].bytes), [4]);
}
