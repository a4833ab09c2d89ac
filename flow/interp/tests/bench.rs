//! Throughput on the paper's case study (run with
//! `cargo test --release -p clflow-interp --test bench -- --ignored --nocapture`).

mod common;
use clflow_interp::{OpSet, RunOptions};
use common::*;
use std::time::Instant;

#[test]
#[ignore = "a benchmark; run in release mode"]
fn lookup3_throughput() {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../kernels/lookup3/lookup3.cl"
    ))
    .unwrap();
    let keys: usize = std::env::var("KEYS")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(1 << 20);
    let (words, offsets, lengths) = lookup3_inputs(keys);
    let p = program(&source, "hash");
    if std::env::var_os("DISASSEMBLE").is_some() {
        println!("{}", p.disassemble());
    }
    let args = vec![
        u32s(&words),
        u32s(&offsets),
        u32s(&lengths),
        scalar(0u32.to_le_bytes()),
        u32s(&vec![0; keys]),
    ];
    let l = launch("hash", &[keys as u64], Some(&[256]), args);
    let start = Instant::now();
    let r = p.run(&l, &RunOptions::default()).unwrap();
    let secs = start.elapsed().as_secs_f64();
    let paper: OpSet = "add,xor,sub,shl,lshr,or,getelementptr,icmp,mul,and,div"
        .parse()
        .unwrap();
    let k = &r.counts;
    println!(
        "lookup3 {keys} keys: {secs:.3} s, {} interpreter steps ({:.0} M steps/s), W(paper set) = {}, Q = {} bytes",
        k.steps,
        k.steps as f64 / secs / 1e6,
        k.w(&paper),
        k.q_accessed()
    );
    println!("{}", clflow_interp::counts::render_text(k, &paper));
}
