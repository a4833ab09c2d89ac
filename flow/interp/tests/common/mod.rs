//! Helpers shared by the interpreter's end-to-end tests: compile OpenCL C
//! with the real toolchain once per source, build launches, run them.
#![allow(dead_code)]

use clflow_core::{Access, ArgValue, ElementType, Launch, LaunchArg, NdRange};
use clflow_interp::{InterpError, Program, RunOptions, RunResult};
use std::collections::HashMap;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// SPIR-V for `source` (OpenCL C 1.2), compiled once per test binary.
pub fn compile(source: &str) -> Vec<u8> {
    compile_std(source, "CL1.2")
}

/// SPIR-V for `source` under `-cl-std=STD`, compiled once per test binary.
pub fn compile_std(source: &str, std: &str) -> Vec<u8> {
    static CACHE: OnceLock<Mutex<HashMap<String, Vec<u8>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = format!("{std}\n{source}");
    if let Some(spv) = cache.lock().unwrap().get(&key) {
        return spv.clone();
    }
    let dir = tempfile::tempdir().unwrap();
    let cl = dir.path().join("k.cl");
    let bc = dir.path().join("k.bc");
    let spv = dir.path().join("k.spv");
    std::fs::write(&cl, source).unwrap();
    let out = Command::new("clang-15")
        .arg(format!("-cl-std={std}"))
        .args(["-target", "spir64", "-O2", "-emit-llvm", "-c"])
        .arg(&cl)
        .arg("-o")
        .arg(&bc)
        .output()
        .expect("clang-15 runs");
    assert!(
        out.status.success(),
        "clang-15 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new("llvm-spirv-15")
        .arg(&bc)
        .arg("-o")
        .arg(&spv)
        .output()
        .expect("llvm-spirv-15 runs");
    assert!(
        out.status.success(),
        "llvm-spirv-15 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&spv).unwrap();
    cache.lock().unwrap().insert(key, bytes.clone());
    bytes
}

pub fn program(source: &str, kernel: &str) -> Program {
    let module = clflow_interp::load(&compile(source)).unwrap();
    Program::translate(&module, kernel).unwrap_or_else(|e| panic!("{e}"))
}

pub fn launch(kernel: &str, global: &[u64], local: Option<&[u64]>, args: Vec<LaunchArg>) -> Launch {
    let mut g = [1u64; 3];
    g[..global.len()].copy_from_slice(global);
    let local = local.map(|l| {
        let mut x = [1u64; 3];
        x[..l.len()].copy_from_slice(l);
        x
    });
    Launch {
        kernel: kernel.to_string(),
        range: NdRange { dims: global.len() as u8, global: g, local, offset: [0; 3] },
        args,
    }
}

pub fn run(
    source: &str,
    kernel: &str,
    global: &[u64],
    local: Option<&[u64]>,
    args: Vec<LaunchArg>,
) -> Result<RunResult, InterpError> {
    program(source, kernel).run(launch(kernel, global, local, args), &RunOptions::default())
}

pub fn buffer(ty: &str, bytes: Vec<u8>) -> LaunchArg {
    let ty: ElementType = ty.parse().unwrap();
    LaunchArg {
        name: None,
        value: ArgValue::Buffer { ty, access: Access::ReadWrite, bytes },
    }
}

pub fn f32s(values: &[f32]) -> LaunchArg {
    buffer(
        "float",
        values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    )
}

pub fn u32s(values: &[u32]) -> LaunchArg {
    buffer(
        "uint",
        values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    )
}

pub fn u8s(values: &[u8]) -> LaunchArg {
    buffer("uchar", values.to_vec())
}

pub fn named(mut arg: LaunchArg, name: &str) -> LaunchArg {
    arg.name = Some(name.to_string());
    arg
}

pub fn scalar<const N: usize>(bytes: [u8; N]) -> LaunchArg {
    LaunchArg {
        name: None,
        value: ArgValue::Scalar { bytes: bytes.to_vec() },
    }
}

pub fn local(bytes: u64) -> LaunchArg {
    LaunchArg { name: None, value: ArgValue::Local { bytes } }
}

pub fn null() -> LaunchArg {
    LaunchArg { name: None, value: ArgValue::NullPointer }
}

pub fn as_f32(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn as_u32(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// `keys` keys of 0-60 pseudo-random bytes, laid out as the lookup3 kernel reads them.
pub fn lookup3_inputs(keys: usize) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut words, mut offsets, mut lengths) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..keys {
        let len = (next() % 61) as u32;
        offsets.push(words.len() as u32);
        lengths.push(len);
        for _ in 0..len.div_ceil(4) {
            words.push(next() as u32);
        }
    }
    (words, offsets, lengths)
}

/// Bob Jenkins' hashlittle on `key`, the reference for the lookup3 kernel.
pub fn hashlittle(key: &[u8], initval: u32) -> u32 {
    let rot = |x: u32, k: u32| x.rotate_left(k);
    let word = |b: &[u8]| u32::from_le_bytes(b[..4].try_into().unwrap());
    let mut a = 0xdeadbeefu32
        .wrapping_add(key.len() as u32)
        .wrapping_add(initval);
    let (mut b, mut c) = (a, a);
    let mut k = key;
    while k.len() > 12 {
        a = a.wrapping_add(word(&k[0..]));
        b = b.wrapping_add(word(&k[4..]));
        c = c.wrapping_add(word(&k[8..]));
        a = a.wrapping_sub(c);
        a ^= rot(c, 4);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= rot(a, 6);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= rot(b, 8);
        b = b.wrapping_add(a);
        a = a.wrapping_sub(c);
        a ^= rot(c, 16);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= rot(a, 19);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= rot(b, 4);
        b = b.wrapping_add(a);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    let mut tail = [0u8; 12];
    tail[..k.len()].copy_from_slice(k);
    a = a.wrapping_add(word(&tail[0..]));
    b = b.wrapping_add(word(&tail[4..]));
    c = c.wrapping_add(word(&tail[8..]));
    c ^= b;
    c = c.wrapping_sub(rot(b, 14));
    a ^= c;
    a = a.wrapping_sub(rot(c, 11));
    b ^= a;
    b = b.wrapping_sub(rot(a, 25));
    c ^= b;
    c = c.wrapping_sub(rot(b, 16));
    a ^= c;
    a = a.wrapping_sub(rot(c, 4));
    b ^= a;
    b = b.wrapping_sub(rot(a, 14));
    c ^= b;
    c = c.wrapping_sub(rot(b, 24));
    c
}
