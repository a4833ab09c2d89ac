//! The OpenCL builtins that return a second result through a pointer
//! (frexp, modf, fract, sincos, lgamma_r, remquo), ilogb, nan, shuffle and
//! shuffle2, integer-to-float conversions in every rounding mode and
//! double-to-half stores, end to end: compiled by clang-15 + llvm-spirv-15,
//! translated and run, outputs against known values, counts by rule.

mod common;
use clflow_core::{Access, ArgValue, LaunchArg};
use common::*;

const SPLITS: &str = r#"
__kernel void splits(__global const float *x, __global float *f, __global int *i)
{
    size_t g = get_global_id(0);
    float v = x[g];
    int e;      f[8 * g + 0] = frexp(v, &e);       i[4 * g + 0] = e;
    float w;    f[8 * g + 1] = modf(v, &w);        f[8 * g + 2] = w;
    float fl;   f[8 * g + 3] = fract(v, &fl);      f[8 * g + 4] = fl;
    float c;    f[8 * g + 5] = sincos(v, &c);      f[8 * g + 6] = c;
    int s;      f[8 * g + 7] = lgamma_r(v, &s);    i[4 * g + 1] = s;
    int q;      float r = remquo(v, 2.0f, &q);     i[4 * g + 2] = q;
    i[4 * g + 3] = ilogb(v) + (int)r;
}
"#;

#[test]
fn pointer_results_reach_private_memory_and_come_back() {
    let xs = [12.0f32, -2.5, 7.0];
    let n = xs.len();
    let r = run(
        SPLITS,
        "splits",
        &[n as u64],
        Some(&[1]),
        vec![f32s(&xs), f32s(&vec![0.0; 8 * n]), u32s(&vec![0; 4 * n])],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let f = as_f32(&r.buffers[1].bytes);
    let i: Vec<i32> = as_u32(&r.buffers[2].bytes)
        .iter()
        .map(|&v| v as i32)
        .collect();
    // 12 = 0.75 * 2^4; modf 12 = 0 + 12; fract 12 = 0, floor 12.
    assert_eq!(&f[0..5], &[0.75, 0.0, 12.0, 0.0, 12.0]);
    assert_eq!(i[0], 4);
    // lgamma(12) = ln(11!) = ln 39916800, gamma positive.
    assert!((f[7] - 17.502_308).abs() < 1e-5, "{}", f[7]);
    assert_eq!(i[1], 1);
    // remquo(12, 2) = 0, quotient 6; ilogb(12) = 3.
    assert_eq!((i[2], i[3]), (6, 3));
    // -2.5: frexp -0.625 * 2^2; modf -0.5, -2; fract 0.5, floor -3.
    assert_eq!(&f[8..13], &[-0.625, -0.5, -2.0, 0.5, -3.0]);
    assert_eq!(i[4], 2);
    // gamma(-2.5) = -0.9453087...: negative; ln|.| = -0.05624371649767405.
    assert_eq!(i[5], -1);
    assert!((f[15] - -0.056_243_716).abs() < 1e-6, "{}", f[15]);
    // remquo(-2.5, 2): -1.25 rounds to -1, remainder -0.5.
    assert_eq!(i[6] & 7, 7, "-1 in the low bits");
    assert!(i[6] < 0);
    // sincos(7)
    assert!((f[21] - 7f32.sin()).abs() < 1e-6 && (f[22] - 7f32.cos()).abs() < 1e-6);
    // remquo(7, 2) = -1, quotient 4; ilogb(7) + (int)-1 = 1.
    assert_eq!((i[10], i[11]), (4, 1));

    // Each builtin is one operation per lane under its name, sincos two;
    // every pointer result is a private store.
    let c = &r.counts;
    for name in [
        "frexp", "modf", "fract", "lgamma_r", "remquo", "ilogb", "sincos",
    ] {
        assert_eq!(c.lanes_of(name), n as u64, "{name}");
    }
    let w = |ops: &str| c.w(&ops.parse().unwrap());
    assert_eq!(w("sin") + w("cos"), 2 * n as u64);
    assert_eq!(w("frexp,ilogb"), 2 * n as u64);
    let report = c.report(&"arith".parse().unwrap());
    assert!(report.private.store_bytes >= 6 * 4 * n as u64);
}

const SHUFFLES: &str = r#"
__kernel void shuffles(__global const float4 *x, __global const uint4 *m, __global float4 *out)
{
    out[0] = shuffle(x[0], m[0]);
    out[1] = shuffle2(x[0], x[1], m[1]);
    out[2] = shuffle(x[1], m[0] + (uint4)(4));
}
"#;

#[test]
fn shuffles_pick_lanes_by_the_masks_low_bits() {
    let x = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    let masks = [3u32, 0, 2, 1, 7, 4, 0, 10];
    let r = run(
        SHUFFLES,
        "shuffles",
        &[1],
        None,
        vec![f32s(&x), u32s(&masks), f32s(&[0.0; 12])],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let out = as_f32(&r.buffers[2].bytes);
    assert_eq!(&out[0..4], &[4.0, 1.0, 3.0, 2.0]);
    // shuffle2 selects from x then y, 10 & 7 = 2.
    assert_eq!(&out[4..8], &[8.0, 5.0, 1.0, 3.0]);
    // Only the low 2 bits of 7, 4, 6, 5 count for a 4-lane source.
    assert_eq!(&out[8..12], &[8.0, 5.0, 7.0, 6.0]);
    assert_eq!(r.counts.lanes_of("shuffle"), 8);
    assert_eq!(r.counts.lanes_of("shuffle2"), 4);
    assert_eq!(
        r.counts.w(&"arith".parse().unwrap()) - r.counts.lanes_of("OpIAdd"),
        r.counts.w(&"arith".parse().unwrap()) - 4
    );
}

const CONVERSIONS: &str = r#"
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void conversions(__global const int *i, __global const ulong *u, __global float *f,
                          __global const double *d, __global half *h)
{
    f[0] = convert_float_rtz(i[0]);
    f[1] = convert_float_rtp(i[0]);
    f[2] = convert_float_rtn(i[1]);
    f[3] = convert_float(i[0]);
    f[4] = convert_float_rtz(u[0]);
    f[5] = nan((uint)i[2]);
    vstore_half(d[0], 0, h);
    vstore_half_rtz(d[1], 1, h);
    vstore_half_rtp(d[1], 2, h);
}
"#;

#[test]
fn conversions_honour_rounding_modes_and_doubles_round_to_half_once() {
    let odd = (1i32 << 24) + 1;
    let ints = [odd, -odd, 5];
    let above_midpoint = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    let buffer = |ty: &str, bytes: Vec<u8>| LaunchArg {
        name: None,
        value: ArgValue::Buffer { ty: ty.parse().unwrap(), access: Access::ReadWrite, bytes },
    };
    let r = run(
        CONVERSIONS,
        "conversions",
        &[1],
        None,
        vec![
            u32s(&ints.map(|v| v as u32)),
            buffer("ulong", u64::MAX.to_le_bytes().to_vec()),
            f32s(&[0.0; 6]),
            buffer(
                "double",
                [above_midpoint, 1.0 + 3.0 * 2f64.powi(-12)]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
            ),
            buffer("half", vec![0; 6]),
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let f = as_f32(&r.buffers[2].bytes);
    assert_eq!(f[0], 16_777_216.0);
    assert_eq!(f[1], 16_777_218.0);
    assert_eq!(f[2], -16_777_218.0);
    assert_eq!(f[3], 16_777_216.0);
    assert_eq!(f[4].to_bits(), 0x5f7f_ffff);
    assert_eq!(f[5].to_bits(), 0x7fc0_0005);
    let h: Vec<u16> = r.buffers[4]
        .bytes
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    // Rounded once: above the midpoint goes up (via float it would tie to 1.0).
    assert_eq!(h[0], 0x3c01);
    // 1 + 3·2^-12 lies between 1 (0x3c00) and 1 + 2^-10 (0x3c01).
    assert_eq!(h[1], 0x3c00);
    assert_eq!(h[2], 0x3c01);
}
