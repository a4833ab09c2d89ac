//! Buffers of structs end to end: a manifest names the struct as the
//! kernel's source does (`type = "Body"`), counts structs, and `clflow
//! count` sizes the buffer by the kernel's own layout of it.

mod common;

use common::{clflow, text};
use std::path::Path;

const KERNEL: &str = "\
typedef struct { float4 pos; float4 vel; float mass; int id; } Body;
__kernel void advance(__global Body *bodies, __global float *energy, float dt) {
  size_t i = get_global_id(0);
  float4 v = bodies[i].vel;
  bodies[i].pos += v * dt;
  energy[i] = 0.5f * bodies[i].mass * dot(v, v);
}
";

/// 64 bodies as the kernel lays them out, 48 bytes each: pos (i, 2i, 0, 1)
/// at 0, vel (1, 0.5, 0.25, 0) at 16, mass 2 at 32, id i at 36, and 8
/// bytes of padding, filled with 0xab to show nothing writes them.
fn bodies() -> Vec<u8> {
    let mut bytes = Vec::new();
    for i in 0..64u32 {
        let f = i as f32;
        for value in [f, 2.0 * f, 0.0, 1.0, 1.0, 0.5, 0.25, 0.0, 2.0] {
            bytes.extend_from_slice(&value.to_le_bytes());
        }
        bytes.extend_from_slice(&i.to_le_bytes());
        bytes.extend_from_slice(&[0xab; 8]);
    }
    bytes
}

fn manifest(dir: &Path, bodies_type: &str) -> String {
    std::fs::write(dir.join("bodies.cl"), KERNEL).unwrap();
    std::fs::write(dir.join("bodies.bin"), bodies()).unwrap();
    let text = format!(
        "source = \"bodies.cl\"\nkernel = \"advance\"\nglobal_size = [64]\n\
         [[arg]]\nname = \"bodies\"\ntype = \"{bodies_type}\"\ncount = 64\nfile = \"bodies.bin\"\naccess = \"rw\"\n\
         [[arg]]\nname = \"energy\"\ntype = \"float\"\ncount = 64\naccess = \"wo\"\n\
         [[arg]]\ntype = \"float\"\nvalue = 0.5\n"
    );
    let path = dir.join("bodies.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_buffer_of_structs_is_counted_and_updated_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest(dir.path(), "Body");
    let dump = dir.path().join("dump");
    let out = clflow(
        dir.path(),
        &[
            "count",
            &manifest,
            "--json",
            "--ops",
            "fp32",
            "--dump",
            dump.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Per body: pos += v * dt, 4 multiplies and 4 adds; dot(v, v), 4
    // multiplies and 3 adds; 0.5 * mass * that, 2 multiplies.
    assert_eq!(report["W"]["fp32"], 64 * 17);
    // Loads vel, pos (16 bytes each) and mass (4); stores pos and energy.
    assert_eq!(report["Q"]["load_bytes"], 64 * 36);
    assert_eq!(report["Q"]["store_bytes"], 64 * 20);

    // Each body moved by half its velocity; the rest, padding included,
    // is the file's.
    let mut expected = bodies();
    for (i, body) in expected.chunks_mut(48).enumerate() {
        let f = i as f32;
        for (lane, value) in [f + 0.5, 2.0 * f + 0.25, 0.125, 1.0].iter().enumerate() {
            body[4 * lane..4 * lane + 4].copy_from_slice(&value.to_le_bytes());
        }
    }
    assert_eq!(std::fs::read(dump.join("bodies.bin")).unwrap(), expected);
    // 0.5 * 2 * (1 + 0.25 + 0.0625) for every body.
    let energy = std::fs::read(dump.join("energy.bin")).unwrap();
    assert_eq!(energy, 1.3125f32.to_le_bytes().repeat(64));
}

#[test]
fn a_struct_the_kernel_does_not_take_is_one_line_naming_the_right_one() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest(dir.path(), "struct Body");
    let out = clflow(dir.path(), &["count", &manifest]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "bodies.toml:4: arg 0 (bodies): the kernel declares `__global Body* bodies`, the \
             manifest gives struct Body elements; make `type` \"Body\" as the kernel's source names it"
        ),
        "{err}"
    );
}
