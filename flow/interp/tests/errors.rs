//! Bad kernels and bad input: each stops with one line naming the kernel,
//! the work-item, the operation and the buffer at fault.

mod common;
use clflow_core::Diagnostic;
use clflow_interp::{InterpError, RunOptions, TrapKind};
use common::*;

fn trap(
    source: &str,
    kernel: &str,
    global: &[u64],
    local: Option<&[u64]>,
    args: Vec<clflow_core::LaunchArg>,
) -> (String, InterpError) {
    let err = run(source, kernel, global, local, args).expect_err("the kernel must fail");
    let line = err.to_string();
    assert!(!line.contains('\n'), "one line: {line}");
    assert!(line.contains(&format!("kernel `{kernel}`")), "{line}");
    (line, err)
}

#[test]
fn out_of_bounds_global_store_names_item_argument_offset_and_size() {
    let src = "__kernel void oob(__global const uint *in, __global uint *out) { size_t i = get_global_id(0); out[i + 1] = in[i]; }";
    let (line, err) = trap(
        src,
        "oob",
        &[16],
        Some(&[4]),
        vec![u32s(&[1; 16]), named(u32s(&[0; 16]), "out")],
    );
    assert!(line.contains("work-item (15,0,0)"), "{line}");
    assert!(line.contains("OpStore"), "{line}");
    assert!(line.contains("__global arg 1 (out)"), "{line}");
    assert!(
        line.contains("offset 64") && line.contains("buffer is 64 bytes"),
        "{line}"
    );
    assert_eq!(err.kind(), clflow_core::FailureKind::Analysis);
}

#[test]
fn out_of_bounds_local_and_private_accesses() {
    let src = r#"__kernel void loc(__global uint *out, __local uint *tmp) {
        size_t l = get_local_id(0); tmp[l * 2] = 1; barrier(CLK_LOCAL_MEM_FENCE); out[get_global_id(0)] = tmp[l]; }"#;
    let (line, _) = trap(src, "loc", &[8], Some(&[8]), vec![u32s(&[0; 8]), local(32)]);
    assert!(
        line.contains("__local arg 1") && line.contains("work-item (4,0,0)"),
        "{line}"
    );
    let src = r#"__kernel void priv(__global uint *out, uint k) {
        uint a[4] = {1, 2, 3, 4}; volatile uint *p = a; out[get_global_id(0)] = p[k]; }"#;
    let (line, _) = trap(
        src,
        "priv",
        &[2],
        None,
        vec![u32s(&[0; 2]), scalar(9u32.to_le_bytes())],
    );
    assert!(
        line.contains("__private") && line.contains("offset 36"),
        "{line}"
    );
}

#[test]
fn null_and_misaligned_pointers() {
    let src = "__kernel void np(__global uint *out, __global uint *maybe) { out[get_global_id(0)] = maybe[get_global_id(0)]; }";
    let (line, err) = trap(src, "np", &[4], None, vec![u32s(&[0; 4]), null()]);
    assert!(line.contains("NULL pointer"), "{line}");
    let InterpError::Trap(stopped) = err else {
        panic!("a trap, not {err}")
    };
    assert!(matches!(stopped.kind, TrapKind::NullPointer { .. }) && stopped.item == [0, 0, 0]);
    let src = "__kernel void mis(__global uchar *b, __global uint *out) { out[0] = *(__global uint *)(b + 1); }";
    let (line, _) = trap(src, "mis", &[1], None, vec![u8s(&[0; 16]), u32s(&[0])]);
    assert!(
        line.contains("misaligned") && line.contains("offset 1"),
        "{line}"
    );
}

#[test]
fn integer_division_by_zero() {
    let src =
        "__kernel void dz(__global uint *a) { size_t i = get_global_id(0); a[i] = 100 / a[i]; }";
    let (line, _) = trap(src, "dz", &[4], None, vec![u32s(&[5, 4, 0, 1])]);
    assert!(
        line.contains("work-item (2,0,0)") && line.contains("division by zero"),
        "{line}"
    );
}

#[test]
fn barrier_divergence() {
    let src = r#"__kernel void div(__global uint *a) {
        if (get_local_id(0) < 2) { barrier(CLK_GLOBAL_MEM_FENCE); } a[get_global_id(0)] = 1; }"#;
    let (line, _) = trap(src, "div", &[4], Some(&[4]), vec![u32s(&[0; 4])]);
    assert!(line.contains("barrier divergence"), "{line}");
}

#[test]
fn a_kernel_that_never_ends_hits_max_steps() {
    let src = "__kernel void spin(__global volatile uint *a) { while (a[0] == 0) { a[1]++; } }";
    let p = program(src, "spin");
    let options = RunOptions { max_steps: 10_000, ..RunOptions::default() };
    let err = p
        .run(launch("spin", &[1], None, vec![u32s(&[0, 0])]), &options)
        .unwrap_err();
    let line = err.to_string();
    assert!(
        line.contains("10000 steps") && line.contains("work-item (0,0,0)"),
        "{line}"
    );
    assert!(err.hint().unwrap().contains("--max-steps"));
}

#[test]
fn unsupported_constructs_are_named() {
    let src = "__kernel void img(read_only image2d_depth_t im, __global float *out) { out[0] = read_imagef(im, (int2)(0, 0)); }";
    let module = clflow_interp::load(&compile_std(src, "CL2.0")).unwrap();
    let err = clflow_interp::Program::translate(&module, "img").unwrap_err();
    assert!(err.to_string().contains("kernel `img`"), "{err}");
    assert!(err.to_string().contains("depth images"), "{err}");
    assert_eq!(err.kind(), clflow_core::FailureKind::Analysis);
}

#[test]
fn truncated_or_garbage_spirv_is_an_error_not_a_panic() {
    let spv = compile("__kernel void k(__global uint *a) { a[get_global_id(0)] *= 3; }");
    for cut in [0, 3, 20, spv.len() / 2 / 4 * 4, spv.len() - 4] {
        let loaded = clflow_interp::load(&spv[..cut]);
        if let Ok(module) = loaded {
            // A prefix may still parse; translating it must fail cleanly or succeed.
            let _ = clflow_interp::Program::translate(&module, "k");
        }
    }
    assert!(clflow_interp::load(&spv[..spv.len() / 2 / 4 * 4]).is_err());
    // Mutate a richer kernel's instruction operands (not its header) so
    // that many variants load, translate and run; none may panic.
    let rich = compile(
        r#"typedef struct { int n; float f[3]; } S;
        int twice(int x) { return x * 2; }
        __kernel void k(__global uint *a) {
          size_t i = get_global_id(0);
          S s = { (int)i, { 1.0f, 2.0f, 3.0f } };
          uint acc = 0;
          for (int j = 0; j < s.n + 2; j++) acc += rotate(a[i], (uint)j) ^ twice(j);
          float4 v = vload4(0, s.f) * 2.0f;
          a[i] = acc + (uint)v.x + (i % 3 == 0 ? a[0] / (a[1] + 1) : 7);
        }"#,
    );
    let mut rng = 0x2545F4914F6CDD1Du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let rounds: usize = std::env::var("FUZZ_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(300);
    let (mut translated, mut ran) = (0, 0);
    for round in 0..rounds {
        let base = if round % 2 == 0 { &spv } else { &rich };
        let mut bytes = base.clone();
        let words = bytes.len() / 4;
        for _ in 0..1 + round % 3 {
            let word = 5 + (next() as usize) % (words - 5);
            let value = match next() % 4 {
                0 => next() as u8 as u32,
                1 => {
                    u32::from_le_bytes(bytes[4 * word..4 * word + 4].try_into().unwrap())
                        ^ (1 << (next() % 32))
                }
                2 => (next() % 64) as u32,
                _ => next() as u32,
            };
            // Keep opcode words (low half: opcode, high half: word count) intact half the time.
            let at = if next() % 2 == 0 {
                4 * word + 2
            } else {
                4 * word
            };
            bytes[at..4 * word + 4].copy_from_slice(&value.to_le_bytes()[..4 * word + 4 - at]);
        }
        let Ok(module) = clflow_interp::load(&bytes) else {
            continue;
        };
        let Ok(p) = clflow_interp::Program::translate(&module, "k") else {
            continue;
        };
        translated += 1;
        let opts = RunOptions { max_steps: 10_000, threads: Some(1), ..RunOptions::default() };
        if p.run(launch("k", &[4], None, vec![u32s(&[1, 2, 3, 4])]), &opts)
            .is_ok()
        {
            ran += 1;
        }
    }
    eprintln!("{rounds} mutants: {translated} translated, {ran} ran to completion");
    assert!(translated > 0);
}

#[test]
fn launches_that_do_not_match_the_kernel() {
    let src = "__kernel void k(__global uint *a, uint n) { a[get_global_id(0)] = n; }";
    let p = program(src, "k");
    let err = p
        .run(
            launch("k", &[4], None, vec![u32s(&[0; 4])]),
            &RunOptions::default(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("takes 2 arguments"), "{err}");
    let err = p
        .run(
            launch("k", &[4], None, vec![u32s(&[0; 4]), scalar([1u8, 0])]),
            &RunOptions::default(),
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("arg 1") && err.to_string().contains("4-byte value"),
        "{err}"
    );
    // A local size that does not divide the global size leaves a last,
    // smaller group (the manifest decides whether the kernel allows it).
    let args = || vec![u32s(&[0; 6]), scalar([1u8, 0, 0, 0])];
    let partial = p
        .run(
            launch("k", &[6], Some(&[4]), args()),
            &RunOptions::default(),
        )
        .unwrap();
    assert_eq!(partial.counts.work_groups, 2);
    assert_eq!(partial.counts.work_items, 6);
    let err = p
        .run(
            launch("k", &[6], Some(&[0]), args()),
            &RunOptions::default(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("local size 0"), "{err}");
}
