//! Counts against Oclgrind's `--inst-counts` on the same kernel and inputs:
//! global load and store bytes must be equal, W over the paper's op
//! selection close (the IR differs: Oclgrind compiles the kernel itself
//! without optimisation, clflow runs clang -O2 + llvm-spirv output).
//! Fails, saying so, where `oclgrind-kernel` is not installed.

mod common;
use clflow_ocl::oclgrind::{PAPER_LLVM_OPS, PAPER_OPS};
use common::*;
use std::collections::HashMap;
use std::process::Command;

/// Oclgrind's histogram: instruction → count, and global bytes loaded/stored.
fn oclgrind_counts(dir: &std::path::Path, sim: &str) -> (HashMap<String, u64>, u64, u64) {
    let path = dir.join("k.sim");
    std::fs::write(&path, sim).unwrap();
    let out = Command::new("oclgrind-kernel")
        .args(["--build-options", "-cl-opt-disable", "--inst-counts"])
        .arg(&path)
        .current_dir(dir)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let (mut ops, mut load, mut store) = (HashMap::new(), 0, 0);
    for line in text.lines() {
        let Some((count, what)) = line.trim().split_once(" - ") else {
            continue;
        };
        let Ok(count) = count.trim().parse::<u64>() else {
            continue;
        };
        let bytes = || {
            what.split('(')
                .nth(1)
                .and_then(|b| b.split(' ').next())
                .and_then(|b| b.parse().ok())
                .unwrap()
        };
        match what {
            w if w.starts_with("load global") => load = bytes(),
            w if w.starts_with("store global") => store = bytes(),
            w => {
                ops.insert(w.to_string(), count);
            }
        }
    }
    assert!(!ops.is_empty(), "no counts from oclgrind-kernel:\n{text}");
    (ops, load, store)
}

#[test]
fn lookup3_traffic_equals_oclgrind_and_w_is_within_five_percent() {
    if let Err(e) = Command::new("oclgrind-kernel").arg("--version").output() {
        panic!("this test needs oclgrind-kernel (ci/setup installs the oclgrind package): {e}");
    }
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../kernels/lookup3/lookup3.cl"
    ))
    .unwrap();
    let keys = 1024;
    let (words, offsets, lengths) = lookup3_inputs(keys);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lookup3.cl"), &source).unwrap();
    let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(" ");
    let sim = format!(
        "lookup3.cl\nhash\n{keys} 1 1\n64 1 1\n<size={} uint ro>\n{}\n<size={} uint ro>\n{}\n<size={} uint ro>\n{}\n<size=4 uint>\n0\n<size={} fill=0 uint wo>\n",
        4 * words.len(),
        list(&words),
        4 * keys,
        list(&offsets),
        4 * keys,
        list(&lengths),
        4 * keys
    );
    let (ops, load, store) = oclgrind_counts(dir.path(), &sim);

    let args = vec![
        u32s(&words),
        u32s(&offsets),
        u32s(&lengths),
        scalar(0u32.to_le_bytes()),
        u32s(&vec![0; keys]),
    ];
    let r = run(&source, "hash", &[keys as u64], Some(&[64]), args).unwrap();
    assert_eq!(r.counts.q_load(), load, "global bytes loaded");
    assert_eq!(r.counts.q_store(), store, "global bytes stored");

    let theirs: u64 = PAPER_LLVM_OPS
        .iter()
        .map(|op| ops.get(*op).copied().unwrap_or(0))
        .sum();
    let ours = r.counts.w(&PAPER_OPS.parse().unwrap());
    let off = (ours as f64 - theirs as f64).abs() / theirs as f64;
    assert!(
        off < 0.05,
        "W: clflow {ours}, Oclgrind {theirs} ({:.1}% apart)",
        off * 100.0
    );
    // The mixing arithmetic itself is the same instruction for instruction.
    for (op, spirv) in [
        ("xor", "OpBitwiseXor"),
        ("shl", "llvm.fshl"),
        ("udiv", "OpUDiv"),
        ("and", "OpBitwiseAnd"),
    ] {
        assert_eq!(r.counts.lanes_of(spirv), ops[op], "{op}");
    }
}
