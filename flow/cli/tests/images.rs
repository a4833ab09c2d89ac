//! Image kernels end to end: a manifest with images and a sampler, counted
//! by the interpreter (texel traffic, dumped texels) and run on PoCL, whose
//! output images and buffers agree with the interpreter's.

mod common;

use common::{clflow, text};
use std::path::{Path, PathBuf};

const KERNELS: &str = r#"
__constant sampler_t edge = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;

__kernel void blur(read_only image2d_t src, write_only image2d_t dst)
{
    int x = get_global_id(0), y = get_global_id(1);
    float4 s = 0.0f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            s += read_imagef(src, edge, (int2)(x + dx, y + dy));
    write_imagef(dst, (int2)(x, y), s / 9.0f);
}

__kernel void zoom(read_only image2d_t src, sampler_t s, write_only image2d_t dst)
{
    int x = get_global_id(0), y = get_global_id(1);
    float2 at = (float2)((x + 0.5f) / get_global_size(0), (y + 0.5f) / get_global_size(1));
    write_imagef(dst, (int2)(x, y), read_imagef(src, s, at));
}
"#;

const BLUR: &str = r#"source = "images.cl"
kernel = "blur"
global_size = [8, 6]
local_size = [4, 2]

[[arg]]
name = "src"
type = "image2d"
format = "RGBA/UNORM_INT8"
shape = [8, 6]
file = "in.rgba"

[[arg]]
name = "dst"
type = "image2d"
format = "RGBA/FLOAT"
shape = [8, 6]
access = "wo"
dump = true
"#;

const ZOOM: &str = r#"source = "images.cl"
kernel = "zoom"
global_size = [12, 9]

[[arg]]
name = "src"
type = "image2d"
format = "RGBA/UNORM_INT8"
shape = [8, 6]
file = "in.rgba"

[[arg]]
name = "s"
sampler = { normalized = true, address = "mirrored_repeat", filter = "linear" }

[[arg]]
name = "dst"
type = "image2d"
format = "BGRA/UNORM_INT8"
shape = [12, 9]
access = "wo"
"#;

fn texels() -> Vec<u8> {
    (0..8 * 6 * 4).map(|i| (i * 37 % 256) as u8).collect()
}

fn write_case(dir: &Path) -> (PathBuf, PathBuf) {
    std::fs::write(dir.join("images.cl"), KERNELS).unwrap();
    std::fs::write(dir.join("in.rgba"), texels()).unwrap();
    std::fs::write(dir.join("blur.toml"), BLUR).unwrap();
    std::fs::write(dir.join("zoom.toml"), ZOOM).unwrap();
    (dir.join("blur.toml"), dir.join("zoom.toml"))
}

#[test]
fn count_reports_texel_traffic_and_dumps_the_written_image() {
    let dir = tempfile::tempdir().unwrap();
    let (blur, _) = write_case(dir.path());
    let out = clflow(dir.path(), &["count", blur.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    // 48 pixels: 9 texels of 4 bytes read, one of 16 bytes written each.
    assert_eq!(v["Q"]["global_load_bytes"], 48 * 9 * 4);
    assert_eq!(v["Q"]["global_store_bytes"], 48 * 16);
    let dumped = dir.path().join("dump");
    let out = clflow(
        dir.path(),
        &[
            "count",
            blur.to_str().unwrap(),
            "--dump",
            dumped.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The corner pixel (0, 0): the clamped 3×3 block is texels (0,0) ×4,
    // (1,0) ×2, (0,1) ×2 and (1,1) once, in the kernel's order of sums.
    let t = texels();
    // A normalized channel reads as the integer times the rounded reciprocal.
    let at = |x: usize, y: usize, c: usize| t[(y * 8 + x) * 4 + c] as f32 * (1.0 / 255.0);
    let mut expected = [0f32; 4];
    for (c, e) in expected.iter_mut().enumerate() {
        let mut s = 0.0f32;
        for dy in -1i32..=1 {
            for dx in -1i32..=1 {
                s += at(dx.max(0) as usize, dy.max(0) as usize, c);
            }
        }
        *e = s / 9.0;
    }
    let report = text(&out.stdout);
    let shown = format!(
        "arg 1 (dst) after the run: ({}, {}, {}, {}),",
        expected[0], expected[1], expected[2], expected[3]
    );
    assert!(report.contains(&shown), "{shown}\n{report}");
    let files: Vec<_> = std::fs::read_dir(&dumped).unwrap().collect();
    assert_eq!(files.len(), 1);
    let bytes = std::fs::read(files[0].as_ref().unwrap().path()).unwrap();
    assert_eq!(bytes.len(), 48 * 16);
    let first: Vec<f32> = bytes[..16]
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(first, expected);
}

#[test]
fn pocl_computes_the_same_images() {
    let dir = tempfile::tempdir().unwrap();
    let (blur, zoom) = write_case(dir.path());
    for manifest in [blur, zoom] {
        let out = clflow(
            dir.path(),
            &[
                "run",
                manifest.to_str().unwrap(),
                "--device",
                "0",
                "--repetitions",
                "1",
                "--min-time",
                "0.001",
                "--no-history",
            ],
        );
        let stdout = text(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
        assert!(
            stdout.contains("outputs agree with the interpreter"),
            "{stdout}"
        );
    }
}

/// Every 8-bit normalized value read as a float, its bits written out: the
/// last bit is the runtime's to choose (OpenCL allows 1.5 ulp), and a
/// filter that rounds or truncates later shows it. The interpreter converts
/// as PoCL does (times the reciprocal; a division differs for 126 of the
/// 256), so the two agree on every bit.
#[test]
fn normalized_channels_convert_as_the_device_does() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("levels.cl"),
        "__constant sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_FILTER_NEAREST;\n\
         __kernel void levels(read_only image2d_t src, __global uint *out) {\n\
         \x20   int x = get_global_id(0);\n\
         \x20   float v = read_imagef(src, s, (int2)(x, 0)).x;\n\
         \x20   out[x] = as_uint(v);\n\
         }\n",
    )
    .unwrap();
    let values: Vec<u8> = (0..=255).collect();
    std::fs::write(dir.path().join("levels.r"), &values).unwrap();
    let manifest = dir.path().join("levels.toml");
    std::fs::write(
        &manifest,
        "source = \"levels.cl\"\nkernel = \"levels\"\nglobal_size = [256]\n\
         [[arg]]\ntype = \"image2d\"\nformat = \"R/UNORM_INT8\"\nshape = [256, 1]\nfile = \"levels.r\"\n\
         [[arg]]\ntype = \"uint\"\ncount = 256\naccess = \"wo\"\n",
    )
    .unwrap();
    let out = clflow(
        dir.path(),
        &["run", manifest.to_str().unwrap(), "--device", "0", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(run["outputs"]["verdict"], "agree", "{}", run["outputs"]);
}
