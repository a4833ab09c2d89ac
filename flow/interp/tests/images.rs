//! Image kernels: reads through samplers (nearest and linear, every
//! addressing mode the tests name), writes, queries, the texel traffic
//! they count, the errors of what clflow does not run, and what OpenCL
//! leaves undefined run as PoCL runs it.

mod common;

use clflow_core::{
    Access, AddressMode, ArgValue, FilterMode, ImageDesc, ImageDim, ImageFormat, LaunchArg,
    SamplerDesc,
};
use clflow_interp::RunResult;
use common::*;

fn image(dim: ImageDim, format: &str, shape: &[u64], access: Access, bytes: Vec<u8>) -> LaunchArg {
    let image = ImageDesc::new(dim, ImageFormat::parse(format).unwrap(), shape).unwrap();
    assert_eq!(bytes.len() as u64, image.size_bytes());
    LaunchArg { name: None, value: ArgValue::Image { image, access, bytes } }
}

fn sampler(normalized: bool, address: AddressMode, filter: FilterMode) -> LaunchArg {
    LaunchArg {
        name: None,
        value: ArgValue::Sampler(SamplerDesc { normalized, address, filter }),
    }
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn output(result: &RunResult, arg: usize) -> &[u8] {
    &result.buffers.iter().find(|b| b.arg == arg).unwrap().bytes
}

const BLUR: &str = r#"
__constant sampler_t edge = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
__kernel void blur(read_only image2d_t src, write_only image2d_t dst) {
    int x = get_global_id(0), y = get_global_id(1);
    float4 s = 0.0f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            s += read_imagef(src, edge, (int2)(x + dx, y + dy));
    write_imagef(dst, (int2)(x, y), s / 9.0f);
}
"#;

#[test]
fn a_box_blur_clamps_to_the_edge() {
    let (w, h) = (6usize, 5usize);
    let texels: Vec<u8> = (0..w * h * 4).map(|i| (i * 37 % 256) as u8).collect();
    let result = run(
        BLUR,
        "blur",
        &[w as u64, h as u64],
        Some(&[2, 1]),
        vec![
            image(
                ImageDim::Image2d,
                "RGBA/UNORM_INT8",
                &[w as u64, h as u64],
                Access::ReadOnly,
                texels.clone(),
            ),
            image(
                ImageDim::Image2d,
                "RGBA/FLOAT",
                &[w as u64, h as u64],
                Access::WriteOnly,
                vec![0; w * h * 16],
            ),
        ],
    )
    .unwrap();
    // A Rust reference: the same sums, in the same order, in f32.
    let texel = |x: i64, y: i64, c: usize| {
        let (x, y) = (
            x.clamp(0, w as i64 - 1) as usize,
            y.clamp(0, h as i64 - 1) as usize,
        );
        texels[(y * w + x) * 4 + c] as f32 * (1.0 / 255.0)
    };
    let mut expected = Vec::new();
    for y in 0..h as i64 {
        for x in 0..w as i64 {
            for c in 0..4 {
                let mut s = 0.0f32;
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        s += texel(x + dx, y + dy, c);
                    }
                }
                expected.push(s / 9.0);
            }
        }
    }
    assert_eq!(floats(output(&result, 1)), expected);
    let counts = &result.counts;
    let pixels = (w * h) as u64;
    // 9 texels of 4 bytes read per pixel, one of 16 bytes written.
    assert_eq!(counts.q_load(), 9 * 4 * pixels);
    assert_eq!(counts.q_store(), 16 * pixels);
    assert_eq!(
        counts.lanes_of("OpImageSampleExplicitLod global"),
        9 * 4 * pixels
    );
    assert_eq!(counts.lanes_of("OpImageWrite global"), 4 * pixels);
}

const SAMPLE: &str = r#"
__kernel void sample(read_only image2d_t src, sampler_t s, __global const float2 *at, __global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(src, s, at[i]);
}
"#;

fn sample(sampler_arg: LaunchArg, at: &[(f32, f32)]) -> Vec<f32> {
    // A 4×4 R/FLOAT image holding x + 10·y: linear inside, so bilinear
    // samples are known exactly.
    let texels: Vec<u8> = (0..16)
        .flat_map(|i| ((i % 4) as f32 + 10.0 * (i / 4) as f32).to_le_bytes())
        .collect();
    let coords: Vec<f32> = at.iter().flat_map(|&(x, y)| [x, y]).collect();
    let result = run(
        SAMPLE,
        "sample",
        &[at.len() as u64],
        None,
        vec![
            image(
                ImageDim::Image2d,
                "R/FLOAT",
                &[4, 4],
                Access::ReadOnly,
                texels,
            ),
            sampler_arg,
            f32s(&coords),
            f32s(&vec![0.0; 4 * at.len()]),
        ],
    )
    .unwrap();
    floats(output(&result, 3)).to_vec()
}

#[test]
fn bilinear_sampling_weighs_the_four_nearest_texels() {
    let got = sample(
        sampler(false, AddressMode::ClampToEdge, FilterMode::Linear),
        &[(1.75, 3.0), (0.2, 0.2), (3.9, 0.5), (2.0, 2.0)],
    );
    // (1.75, 3.0): i0 = 1, a = 0.25; j0 = 2, b = 0.5 -> 1.25 + 25.
    // (0.2, 0.2): both axes clamp to texel 0 -> 0.
    // (3.9, 0.5): i0 = 3, i1 clamps to 3; j0 = 0 -> 3.
    // (2.0, 2.0): halfway between 1 and 2 on both axes -> 1.5 + 15.
    // R images read (r, 0, 0, 1).
    assert_eq!(
        got,
        [26.25, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 3.0, 0.0, 0.0, 1.0, 16.5, 0.0, 0.0, 1.0]
    );
}

#[test]
fn normalized_repeat_and_clamp_to_border() {
    let got = sample(
        sampler(true, AddressMode::Repeat, FilterMode::Nearest),
        &[(1.1, 0.3), (-0.1, 2.6)],
    );
    // (1.1, 0.3) repeats to (0.1, 0.3): texel (0, 1) = 10.
    // (-0.1, 2.6) repeats to (0.9, 0.6): texel (3, 2) = 23.
    assert_eq!(got[0], 10.0);
    assert_eq!(got[4], 23.0);
    let got = sample(
        sampler(false, AddressMode::Clamp, FilterMode::Nearest),
        &[(-0.5, 1.0), (2.5, 1.5)],
    );
    // Outside: the border colour of an image without alpha, (0, 0, 0, 1).
    assert_eq!(&got[..4], &[0.0, 0.0, 0.0, 1.0]);
    assert_eq!(&got[4..], &[12.0, 0.0, 0.0, 1.0]);
}

const INTS: &str = r#"
__kernel void ints(read_only image2d_t src, write_only image2d_t dst, __global int *info) {
    int x = get_global_id(0), y = get_global_id(1);
    uint4 v = read_imageui(src, (int2)(x, y));
    write_imageui(dst, (int2)(x, y), v * 100u);
    if (x == 0 && y == 0) {
        info[0] = get_image_width(src);
        info[1] = get_image_height(src);
        int2 d = get_image_dim(dst);
        info[2] = d.x * 1000 + d.y;
        info[3] = get_image_channel_data_type(src);
        info[4] = get_image_channel_order(src);
        info[5] = get_image_channel_order(dst);
    }
}
"#;

#[test]
fn integer_images_saturate_and_answer_queries() {
    let src: Vec<u8> = (0..3 * 2 * 2).map(|i| i as u8).collect();
    let result = run(
        INTS,
        "ints",
        &[3, 2],
        None,
        vec![
            image(
                ImageDim::Image2d,
                "RG/UNSIGNED_INT8",
                &[3, 2],
                Access::ReadOnly,
                src.clone(),
            ),
            image(
                ImageDim::Image2d,
                "BGRA/UNSIGNED_INT16",
                &[3, 2],
                Access::WriteOnly,
                vec![0; 3 * 2 * 8],
            ),
            u32s(&[0; 6]),
        ],
    )
    .unwrap();
    let dst: Vec<u16> = output(&result, 1)
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let mut expected = Vec::new();
    for t in 0..6 {
        let (r, g) = (src[2 * t] as u16 * 100, src[2 * t + 1] as u16 * 100);
        // (r, g, 0, 1) × 100 stored as b, g, r, a.
        expected.extend([0, g, r, 100]);
    }
    assert_eq!(dst, expected);
    let info: Vec<u32> = output(&result, 2)
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // CL_UNSIGNED_INT8 = 0x10DA, CL_RG = 0x10B2, CL_BGRA = 0x10B6.
    assert_eq!(info, [3, 2, 3002, 0x10DA, 0x10B2, 0x10B6]);
}

#[test]
fn reads_and_writes_outside_the_image_go_on_as_pocl_runs_them_and_are_kept() {
    // Work-item 3 reads past the edge (no sampler: CLK_ADDRESS_NONE);
    // work-items 2 and 3 write past it.
    let source = r#"
__kernel void past(read_only image1d_t src, write_only image1d_t dst, __global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(src, i + 1);
    write_imagef(dst, i + 2, (float4)(i));
}
"#;
    let texels: Vec<f32> = (0..16).map(|k| 1.0 + k as f32).collect();
    let result = run(
        source,
        "past",
        &[4],
        None,
        vec![
            image(
                ImageDim::Image1d,
                "RGBA/FLOAT",
                &[4],
                Access::ReadOnly,
                texels.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ),
            image(
                ImageDim::Image1d,
                "RGBA/FLOAT",
                &[4],
                Access::WriteOnly,
                vec![0; 64],
            ),
            f32s(&[0.0; 16]),
        ],
    )
    .unwrap();
    // The read outside is (0,0,0,0), alpha included, as PoCL reads it.
    let mut expected = texels[4..].to_vec();
    expected.extend([0.0; 4]);
    assert_eq!(floats(output(&result, 2)), expected);
    // The writes outside are dropped; texels 2 and 3 hold work-items 0, 1.
    let written = floats(output(&result, 1));
    let expected: Vec<f32> = [0.0; 12].into_iter().chain([1.0; 4]).collect();
    assert_eq!(written, expected);
    // Neither touches memory: 3 texels read, 2 written (16 bytes each),
    // beside the 4 float4 stores to `out`.
    assert_eq!(result.counts.traffic.bytes[0], [3 * 16, 4 * 16 + 2 * 16]);
    let faults: Vec<(String, u64, Vec<[u64; 3]>)> = result
        .faults
        .iter()
        .map(|f| (f.trap.kind.to_string(), f.count, f.work_items.clone()))
        .collect();
    assert_eq!(
        faults,
        [
            (
                "image read at (4) outside the 4 image with no address mode (CLK_ADDRESS_NONE), \
                 which OpenCL leaves undefined; read as (0,0,0,0), as PoCL does"
                    .to_string(),
                1,
                vec![[3, 0, 0]]
            ),
            (
                "image write at (4) outside the 4 image, which OpenCL leaves undefined; dropped, \
                 as PoCL does"
                    .to_string(),
                2,
                vec![[2, 0, 0], [3, 0, 0]]
            ),
        ]
    );
}

#[test]
fn a_linear_read_under_no_address_mode_weighs_texels_outside_as_zero() {
    // (3.75, 0.5): i0 = 3, i1 = 4 (outside), a = 0.25: 0.75 · 3 + 0.25 · 0,
    // and alpha 0.75 · 1 + 0.25 · 0, as PoCL computes it.
    let got = sample(
        sampler(false, AddressMode::None, FilterMode::Linear),
        &[(3.75, 0.5), (1.5, 2.5)],
    );
    assert_eq!(&got[..4], &[2.25, 0.0, 0.0, 0.75]);
    assert_eq!(&got[4..], &[21.0, 0.0, 0.0, 1.0]);
}

#[test]
fn three_d_images_and_arrays_address_their_layers() {
    let source = r#"
__constant sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
__kernel void layers(read_only image3d_t vol, read_only image2d_array_t arr, write_only image3d_t out, __global float *res) {
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    float4 v = read_imagef(vol, s, (int4)(x, y, z, 0));
    float4 a = read_imagef(arr, s, (float4)(x + 0.5f, y + 0.5f, z + 7.0f, 0.0f));
    write_imagef(out, (int4)(x, y, z, 0), v + a);
    if (x + y + z == 0) {
        res[0] = get_image_depth(vol);
        res[1] = get_image_array_size(arr);
    }
}
"#;
    let vol: Vec<u8> = (0..8u32).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let arr: Vec<u8> = (0..12u32)
        .flat_map(|i| (100.0 * i as f32).to_le_bytes())
        .collect();
    let result = run(
        source,
        "layers",
        &[2, 2, 2],
        None,
        vec![
            image(
                ImageDim::Image3d,
                "R/FLOAT",
                &[2, 2, 2],
                Access::ReadOnly,
                vol,
            ),
            image(
                ImageDim::Image2dArray,
                "R/FLOAT",
                &[2, 2, 3],
                Access::ReadOnly,
                arr,
            ),
            image(
                ImageDim::Image3d,
                "R/FLOAT",
                &[2, 2, 2],
                Access::WriteOnly,
                vec![0; 32],
            ),
            f32s(&[0.0; 2]),
        ],
    )
    .unwrap();
    // The array's layer z + 7 clamps to its last layer, 2.
    let expected: Vec<f32> = (0..8)
        .map(|i| i as f32 + 100.0 * (8 + i % 4) as f32)
        .collect();
    assert_eq!(floats(output(&result, 2)), expected);
    assert_eq!(floats(output(&result, 3)), [2.0, 3.0]);
}
