//! Kernels exercising what llvm-spirv-15 emits for OpenCL C 1.2, outputs
//! checked against values computed here.

mod common;
use common::*;

const INTS: &str = r#"
uint rot(uint x, uint k) { return (x << k) | (x >> (32 - k)); }
__kernel void ints(__global uint *p, __global uchar *q, __global long *w, __global short *s) {
  size_t i = get_global_id(0);
  uint x = p[i];
  uint y;
  switch (x) { case 0: y = 3; break; case 1: y = 7; break; case 2: y = 64; break; default: y = clz(x) + popcount(x); }
  p[i] = y + rot(x, i % 31 + 1) + rotate(x, (uint)i) + mul_hi(x, 0x9E3779B9u) + mad24(x, 3u, 1u) + hadd(x, ~x);
  q[i] = convert_uchar_sat(x) + convert_uchar_sat((int)x - 200);
  w[i] = (long)(int)x * -3 + upsample((uint)i, x) / 7 - (w[i] >> 2);
  s[i] = (short)(x * 1000) / (short)(i + 1) + abs_diff((short)i, (short)-5) + add_sat((short)x, (short)32000);
}"#;

fn rotl(x: u32, k: u32) -> u32 {
    x.rotate_left(k % 32)
}

#[test]
fn integer_builtins_conversions_and_switch() {
    let n = 64usize;
    let p: Vec<u32> = (0..n as u32)
        .map(|i| if i < 4 { i } else { i.wrapping_mul(2654435761) })
        .collect();
    let w: Vec<i64> = (0..n as i64).map(|i| i * 1_000_000_007 - 5).collect();
    let w_bytes: Vec<u8> = w.iter().flat_map(|v| v.to_le_bytes()).collect();
    let args = vec![
        u32s(&p),
        u8s(&vec![0; n]),
        common_buffer("long", w_bytes),
        common_buffer("short", vec![0; 2 * n]),
    ];
    let r = run(INTS, "ints", &[n as u64], Some(&[16]), args).unwrap();
    let out_p = as_u32(&r.buffers[0].bytes);
    let out_q = &r.buffers[1].bytes;
    let out_w: Vec<i64> = r.buffers[2]
        .bytes
        .chunks(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let out_s: Vec<i16> = r.buffers[3]
        .bytes
        .chunks(2)
        .map(|c| i16::from_le_bytes(c.try_into().unwrap()))
        .collect();
    for i in 0..n {
        let x = p[i];
        let y = match x {
            0 => 3,
            1 => 7,
            2 => 64,
            _ => x.leading_zeros() + x.count_ones(),
        };
        let mul_hi = ((x as u64 * 0x9E3779B9u64) >> 32) as u32;
        let mad24 = (x & 0xFF_FFFF).wrapping_mul(3).wrapping_add(1);
        let hadd = ((x as u64 + (!x) as u64) >> 1) as u32;
        let expect = y
            .wrapping_add(rotl(x, i as u32 % 31 + 1))
            .wrapping_add(rotl(x, i as u32))
            .wrapping_add(mul_hi)
            .wrapping_add(mad24)
            .wrapping_add(hadd);
        assert_eq!(out_p[i], expect, "p[{i}]");
        let sat_u = x.min(255) as u8;
        let sat_i = ((x as i32) - 200).clamp(0, 255) as u8;
        assert_eq!(out_q[i], sat_u.wrapping_add(sat_i), "q[{i}]");
        let up = (((i as u64) << 32) | x as u64) as i64;
        assert_eq!(
            out_w[i],
            (x as i32 as i64) * -3 + up / 7 - (w[i] >> 2),
            "w[{i}]"
        );
        let s = ((x.wrapping_mul(1000)) as i16 as i32 / (i as i16 + 1) as i32) as i16;
        let d = (i as i32 - -5i32).unsigned_abs() as u16 as i16;
        let sat = ((x as i16) as i32 + 32000).clamp(-32768, 32767) as i16;
        assert_eq!(out_s[i], s.wrapping_add(d).wrapping_add(sat), "s[{i}]");
    }
    // rotate() counts as shl + lshr + or in base form.
    let k = &r.counts;
    assert_eq!(k.lanes_of("rotate"), n as u64);
}

fn common_buffer(ty: &str, bytes: Vec<u8>) -> clflow_core::LaunchArg {
    clflow_core::LaunchArg {
        name: None,
        value: clflow_core::ArgValue::Buffer {
            ty: ty.parse().unwrap(),
            access: clflow_core::Access::ReadWrite,
            bytes,
        },
    }
}

const STRUCTS: &str = r#"
typedef struct { float x; int tag; float4 v; } particle;
float weigh(particle p, int k) { return p.x * k + p.v.y; }
__kernel void structs(__global particle *ps, __global float *out, __constant float *coef) {
  size_t i = get_global_id(0);
  float hist[8];
  for (int k = 0; k < 8; k++) hist[k] = coef[k] * (float)(i + k);
  particle p = ps[i];
  p.tag += (int)i;
  p.v = p.v * 2.0f + (float4)(1.0f, 2.0f, 3.0f, 4.0f);
  ps[i] = p;
  int idx = p.tag & 7;
  out[i] = weigh(p, idx) + hist[idx] + dot(p.v, p.v) + sqrt(fabs(p.x)) + fmax(p.x, 0.5f);
}"#;

#[test]
fn structs_private_arrays_calls_constants_and_math() {
    let n = 32usize;
    let mut bytes = Vec::new();
    for i in 0..n {
        let x = i as f32 - 10.0;
        bytes.extend(x.to_le_bytes());
        bytes.extend((i as i32 * 5).to_le_bytes());
        bytes.extend([0u8; 8]); // padding: float4 is 16-byte aligned
        for l in 0..4 {
            bytes.extend((l as f32 + i as f32 * 0.25).to_le_bytes());
        }
    }
    let coef: Vec<f32> = (0..8).map(|k| 0.5 + k as f32).collect();
    let ps = common_buffer("uchar", bytes.clone());
    let r = run(
        STRUCTS,
        "structs",
        &[n as u64],
        Some(&[8]),
        vec![ps, f32s(&vec![0.0; n]), f32s(&coef)],
    )
    .unwrap();
    let out = as_f32(&r.buffers[1].bytes);
    let after = &r.buffers[0].bytes;
    for i in 0..n {
        let x = i as f32 - 10.0;
        let tag = i as i32 * 5 + i as i32;
        let v: Vec<f32> = (0..4)
            .map(|l| (l as f32 + i as f32 * 0.25) * 2.0 + (l + 1) as f32)
            .collect();
        let rec = &after[i * 32..(i + 1) * 32];
        assert_eq!(i32::from_le_bytes(rec[4..8].try_into().unwrap()), tag);
        assert_eq!(f32::from_le_bytes(rec[20..24].try_into().unwrap()), v[1]);
        let idx = (tag & 7) as usize;
        let hist = coef[idx] * (i + idx) as f32;
        let dot: f32 = v.iter().map(|a| a * a).sum();
        let expect = x * idx as f32 + v[1] + hist + dot + x.abs().sqrt() + x.max(0.5);
        let got = out[i];
        assert!(
            (got - expect).abs() <= expect.abs() * 1e-6,
            "out[{i}] = {got}, expected {expect}"
        );
    }
    assert!(r.counts.report(&Default::default()).q.constant_load_bytes > 0);
}

const MEMORY: &str = r#"
__kernel void memory(__global float *f, __global uint *counter, __global const uchar *bytes, __global uint *words) {
  size_t i = get_global_id(0);
  float4 v = vload4(i, f);
  vstore4(v * 2.0f, i, f);
  atomic_add(counter, 1u);
  atomic_max(counter + 1, (uint)i);
  uchar4 b = vload4(i, bytes);
  words[i] = as_uint(b) ^ (uint)b.x;
}"#;

#[test]
fn vload_vstore_atomics_and_bitcasts() {
    let n = 128usize;
    let f: Vec<f32> = (0..4 * n).map(|i| i as f32 * 0.5).collect();
    let bytes: Vec<u8> = (0..4 * n).map(|i| (i * 7 % 251) as u8).collect();
    let r = run(
        MEMORY,
        "memory",
        &[n as u64],
        Some(&[32]),
        vec![f32s(&f), u32s(&[0, 0]), u8s(&bytes), u32s(&vec![0; n])],
    )
    .unwrap();
    let out = as_f32(&r.buffers[0].bytes);
    for i in 0..4 * n {
        assert_eq!(out[i], f[i] * 2.0);
    }
    assert_eq!(as_u32(&r.buffers[1].bytes), vec![n as u32, n as u32 - 1]);
    let words = as_u32(&r.buffers[3].bytes);
    for i in 0..n {
        let w = u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap());
        assert_eq!(words[i], w ^ bytes[4 * i] as u32);
    }
    // vload4 + vstore4 of floats, two 4-byte atomics (load + store each),
    // one uchar4 load and one uint store per work-item.
    let k = &r.counts;
    assert_eq!(k.q_load(), n as u64 * (16 + 4 + 4 + 4));
    assert_eq!(k.q_store(), n as u64 * (16 + 4 + 4 + 4));
}

const DOUBLES: &str = r#"
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void doubles(__global double *d, __global float *f, __global int *i32) {
  size_t i = get_global_id(0);
  double x = d[i];
  d[i] = x * x - 1.0 / (x + 3.0);
  f[i] = (float)x + convert_float(i32[i]);
  i32[i] = convert_int_sat(x * 1e9) + (int)floor(-x);
}"#;

#[test]
fn doubles_and_float_conversions() {
    let n = 16usize;
    let d: Vec<f64> = (0..n).map(|i| i as f64 * 1.37 - 4.0).collect();
    let ints: Vec<u32> = (0..n).map(|i| (i as i32 * -12345) as u32).collect();
    let dbytes: Vec<u8> = d.iter().flat_map(|v| v.to_le_bytes()).collect();
    let r = run(
        DOUBLES,
        "doubles",
        &[n as u64],
        None,
        vec![
            common_buffer("double", dbytes),
            f32s(&vec![0.0; n]),
            u32s(&ints),
        ],
    )
    .unwrap();
    let out_d: Vec<f64> = r.buffers[0]
        .bytes
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let out_f = as_f32(&r.buffers[1].bytes);
    let out_i = as_u32(&r.buffers[2].bytes);
    for i in 0..n {
        let x = d[i];
        // clang may contract x*x - y into a fused multiply-add.
        let (plain, fused) = (x * x - 1.0 / (x + 3.0), x.mul_add(x, -1.0 / (x + 3.0)));
        assert!(
            out_d[i] == plain || out_d[i] == fused,
            "d[{i}] = {}",
            out_d[i]
        );
        assert_eq!(out_f[i], x as f32 + ints[i] as i32 as f32);
        let sat = (x * 1e9).clamp(i32::MIN as f64, i32::MAX as f64) as i32;
        assert_eq!(out_i[i] as i32, sat.wrapping_add((-x).floor() as i32));
    }
    assert!(r.counts.w(&"fp64".parse().unwrap()) >= 4 * n as u64);
}

#[test]
fn lookup3_hashes_equal_the_reference_hashlittle() {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../kernels/lookup3/lookup3.cl"
    ))
    .unwrap();
    let keys = 2048;
    let (words, offsets, lengths) = lookup3_inputs(keys);
    let initval = 0x1234_5678u32;
    let args = vec![
        u32s(&words),
        u32s(&offsets),
        u32s(&lengths),
        scalar(initval.to_le_bytes()),
        u32s(&vec![0; keys]),
    ];
    let r = run(&source, "hash", &[keys as u64], Some(&[64]), args).unwrap();
    let hashes = as_u32(&r.buffers.iter().find(|b| b.arg == 4).unwrap().bytes);
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    for k in 0..keys {
        let at = 4 * offsets[k] as usize;
        let key = &bytes[at..at + lengths[k] as usize];
        assert_eq!(
            hashes[k],
            hashlittle(key, initval),
            "key {k} ({} bytes)",
            key.len()
        );
    }
    // Q: every key's bytes are read as whole words once (lengths and
    // offsets once per key), one hash stored per key.
    let words_read: u64 = lengths.iter().map(|&l| l.div_ceil(4) as u64).sum();
    assert_eq!(r.counts.q_load(), 4 * (words_read + 2 * keys as u64));
    assert_eq!(r.counts.q_store(), 4 * keys as u64);
}

const VECTORS: &str = r#"
__constant int table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
__kernel void vectors(__global const float8 *x, __global float8 *y, __global char16 *c, __global half *h, __global uint *dims) {
  size_t i = get_global_id(0) + get_global_id(1) * get_global_size(0);
  __local int scratch[16];
  float8 v = x[i];
  float8 w = v.s76543210 * (float8)(2.0f) - v;
  int8 m = isgreater(w, v);
  y[i] = select(w, v, m) + (float8)(table[i % 8]);
  char16 k = c[i];
  char16 r = rotate(k, (char16)(1)) + add_sat(k, (char16)(100)) - (k >> 2);
  c[i] = r.sfedcba9876543210;
  scratch[get_local_id(0) + 4 * get_local_id(1)] = (int)i;
  barrier(CLK_LOCAL_MEM_FENCE);
  float f = vload_half(i, h);
  vstore_half_rtz(exp(f) + log(f + 1.0f) + sin(f) * cos(f), i, h);
  if (i == 0) {
    dims[0] = get_work_dim(); dims[1] = get_global_size(1); dims[2] = get_num_groups(0);
    dims[3] = get_local_size(1); dims[4] = scratch[5];
    dims[5] = atomic_cmpxchg(&dims[6], 7u, 11u);
  }
}"#;

fn f16_of(x: f32) -> u16 {
    // Round-to-nearest-even through the interpreter's own conversion is what
    // is under test elsewhere; here exact small values only.
    let bits = x.to_bits();
    let exp = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    (((bits >> 16) & 0x8000) | ((exp as u32) << 10) | ((bits >> 13) & 0x3ff)) as u16
}

#[test]
fn wide_vectors_2d_ranges_constant_tables_halves_and_cmpxchg() {
    let (gx, gy) = (4u64, 4u64);
    let n = (gx * gy) as usize;
    let x: Vec<f32> = (0..8 * n).map(|i| (i % 13) as f32 - 6.0).collect();
    let c: Vec<u8> = (0..16 * n).map(|i| (i * 37 % 256) as u8).collect();
    let halves: Vec<u8> = (0..n)
        .flat_map(|i| f16_of(0.5 + i as f32 * 0.25).to_le_bytes())
        .collect();
    let args = vec![
        f32s(&x),
        f32s(&vec![0.0; 8 * n]),
        u8s(&c),
        u8s(&halves),
        u32s(&[0, 0, 0, 0, 0, 0, 7]),
    ];
    let r = run(VECTORS, "vectors", &[gx, gy], Some(&[4, 2]), args).unwrap();
    let y = as_f32(&r.buffers[1].bytes);
    let table = [3.0f32, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0];
    for i in 0..n {
        for l in 0..8 {
            let v = x[8 * i + l];
            let w = x[8 * i + 7 - l] * 2.0 - v;
            let pick = if w > v { v } else { w };
            assert_eq!(y[8 * i + l], pick + table[i % 8], "y[{i}].s{l}");
        }
    }
    let out_c = &r.buffers[2].bytes;
    for i in 0..n {
        for l in 0..16 {
            let k = c[16 * i + 15 - l] as i8;
            let rot = (k as u8).rotate_left(1) as i8;
            let sat = (k as i16 + 100).clamp(-128, 127) as i8;
            let expect = rot.wrapping_add(sat).wrapping_sub(k >> 2);
            assert_eq!(out_c[16 * i + l] as i8, expect, "c[{i}].s{l}");
        }
    }
    let h = &r.buffers[3].bytes;
    for i in 0..n {
        let f = 0.5 + i as f32 * 0.25;
        let expect = f.exp() + (f + 1.0).ln() + f.sin() * f.cos();
        let got = u16::from_le_bytes([h[2 * i], h[2 * i + 1]]);
        // Rounded toward zero to half: at most one half-ULP step below.
        let back = half_to_f32(got);
        assert!(
            back <= expect * 1.0001 && back >= expect * (1.0 - 2.0 / 1024.0),
            "h[{i}] = {back}, expected about {expect}"
        );
    }
    let dims = as_u32(&r.buffers[4].bytes);
    // scratch[1 + 4*1] was written by the work-item at local (1,1) of group (0,0): i = 1 + 4.
    assert_eq!(dims, vec![2, gy as u32, 1, 2, 5, 7, 11]);
}

fn half_to_f32(h: u16) -> f32 {
    let exp = ((h >> 10) & 0x1f) as i32;
    let man = (h & 0x3ff) as f32;
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    if exp == 0 {
        sign * man * 2f32.powi(-24)
    } else {
        sign * (1.0 + man / 1024.0) * 2f32.powi(exp - 15)
    }
}

const ASYNC: &str = r#"
__kernel void tiles(__global const uint *in, __global uint *out, __global uint *hist) {
  __local uint tile[32];
  __local uint bins[4];
  size_t l = get_local_id(0);
  if (l < 4) bins[l] = 0;
  event_t e = async_work_group_copy(tile, in + get_group_id(0) * 32, 32, 0);
  wait_group_events(1, &e);
  atomic_inc(&bins[tile[l] % 4]);
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = tile[31 - l] * 2;
  if (l < 4) atomic_add(&hist[l], bins[l]);
}"#;

#[test]
fn async_copies_and_local_and_global_atomics() {
    let input: Vec<u32> = (0..128u32).map(|i| i * i % 23).collect();
    let r = run(
        ASYNC,
        "tiles",
        &[128],
        Some(&[32]),
        vec![u32s(&input), u32s(&[0; 128]), u32s(&[0; 4])],
    )
    .unwrap();
    let out = as_u32(&r.buffers[1].bytes);
    for g in 0..4 {
        for l in 0..32 {
            assert_eq!(out[g * 32 + l], input[g * 32 + 31 - l] * 2);
        }
    }
    let mut hist = [0u32; 4];
    for v in &input {
        hist[(*v % 4) as usize] += 1;
    }
    assert_eq!(as_u32(&r.buffers[2].bytes), hist.to_vec());
    // The copies read every input word once (counted as they ran); 16
    // global atomic adds each load and store 4 bytes; 128 words stored.
    assert_eq!(r.counts.q_load(), 128 * 4 + 16 * 4);
    assert_eq!(r.counts.q_store(), 128 * 4 + 16 * 4);
}
