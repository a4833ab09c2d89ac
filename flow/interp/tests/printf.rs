//! printf end to end: kernels compiled by clang-15 + llvm-spirv-15 print
//! what a device prints, each work-group's output in work-item order and
//! the groups in order whatever the threads, and printf is counted as it
//! always was (once per call, in the histogram only).

mod common;
use clflow_interp::{InterpError, RunOptions, TrapKind};
use common::*;

const GREET: &str = r#"
__kernel void greet(__global const float *x, __global int *ret)
{
    size_t g = get_global_id(0);
    size_t l = get_local_id(0);
    if (l == 1)
        printf("late %d\n", (int)g);
    float4 v = (float4)(x[g], 0.5f, -1.0f, 2.0f);
    ret[g] = printf("g=%d group=%u x=%.2f v=%v4hlf %s\n", (int)g, (uint)get_group_id(0),
                    x[g], v, g % 2 ? "odd" : "even");
}
"#;

/// `groups` work-groups of 4 work-items, x[g] = g / 4.
fn greet(threads: usize, groups: u64) -> clflow_interp::RunResult {
    let n = 4 * groups;
    let xs: Vec<f32> = (0..n).map(|g| g as f32 / 4.0).collect();
    let launch = launch(
        "greet",
        &[n],
        Some(&[4]),
        vec![f32s(&xs), u32s(&vec![7; n as usize])],
    );
    let options = RunOptions { threads: Some(threads), ..RunOptions::default() };
    program(GREET, "greet")
        .run(&launch, &options)
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn work_items_print_in_order_each_its_calls_together() {
    let r = greet(1, 2);
    let text = String::from_utf8(r.printed_bytes()).unwrap();
    let v = |x: &str| format!("{x},0.500000,-1.000000,2.000000");
    let expected = [
        format!("g=0 group=0 x=0.00 v={} even\n", v("0.000000")),
        format!("late 1\ng=1 group=0 x=0.25 v={} odd\n", v("0.250000")),
        format!("g=2 group=0 x=0.50 v={} even\n", v("0.500000")),
        format!("g=3 group=0 x=0.75 v={} odd\n", v("0.750000")),
        format!("g=4 group=1 x=1.00 v={} even\n", v("1.000000")),
        format!("late 5\ng=5 group=1 x=1.25 v={} odd\n", v("1.250000")),
        format!("g=6 group=1 x=1.50 v={} even\n", v("1.500000")),
        format!("g=7 group=1 x=1.75 v={} odd\n", v("1.750000")),
    ];
    assert_eq!(text, expected.concat());
    // One entry per work-item, all its calls together, named by global id.
    assert_eq!(r.printed.len(), 8);
    for (g, p) in r.printed.iter().enumerate() {
        assert_eq!(p.item, [g as u64, 0, 0]);
        assert_eq!(String::from_utf8_lossy(&p.bytes), expected[g]);
    }
    // printf returns 0.
    assert_eq!(as_u32(&r.buffers[1].bytes), vec![0; 8]);
}

#[test]
fn the_order_is_the_same_on_any_number_of_threads() {
    let one = greet(1, 64);
    for threads in [2, 4, 7] {
        assert_eq!(greet(threads, 64).printed, one.printed, "{threads} threads");
    }
    assert_eq!(one.printed.len(), 256);
}

#[test]
fn printf_is_counted_once_per_call_and_does_no_work() {
    let r = greet(1, 2);
    let calls: u64 = r
        .counts
        .histogram
        .iter()
        .filter(|e| e.op == "printf")
        .map(|e| e.lanes)
        .sum();
    // Each of the 8 work-items calls it once; work-items 1 and 5 twice.
    assert_eq!(calls, 10);
    assert!(r.counts.work.iter().all(|(k, _)| k.op != "printf"));
    // What printf reads (its format, the literals) is no traffic of the kernel's:
    // Its strings are read without marking a line: only x's one line is read.
    assert_eq!(r.counts.q_load(), 8 * 4);
    assert_eq!(r.counts.lines_read, 1);
}

const AROUND_BARRIER: &str = r#"
__kernel void around(__local int *scratch)
{
    int l = get_local_id(0);
    printf("%d before\n", l);
    scratch[l] = l;
    barrier(CLK_LOCAL_MEM_FENCE);
    printf("%d after, next holds %d\n", l, scratch[(l + 1) % 3]);
}
"#;

#[test]
fn a_work_items_output_stays_together_across_barriers() {
    let r = run(AROUND_BARRIER, "around", &[3], Some(&[3]), vec![local(12)])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        String::from_utf8(r.printed_bytes()).unwrap(),
        "0 before\n0 after, next holds 1\n\
         1 before\n1 after, next holds 2\n\
         2 before\n2 after, next holds 0\n"
    );
}

const LONGS_AND_BYTES: &str = r#"
__kernel void raw(__global const uchar *b)
{
    long big = (long)b[0] << 40;
    printf("%ld %lx %c%c|%5.1s|%hhd %d\n", -big, big, b[1], b[2], "xyz", b[3], get_global_id(0));
}
"#;

#[test]
fn longs_chars_and_a_size_t_print_as_on_a_device() {
    let r = run(
        LONGS_AND_BYTES,
        "raw",
        &[1],
        None,
        vec![u8s(&[3, b'o', 0xe9, 0xff])],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // %c writes the byte as it is: 0xe9 is no UTF-8 on its own.
    assert_eq!(
        r.printed_bytes(),
        b"-3298534883328 30000000000 o\xe9|    x|-1 0\n".to_vec()
    );
}

fn trap(source: &str, kernel: &str, args: Vec<clflow_core::LaunchArg>) -> String {
    match run(source, kernel, &[1], None, args) {
        Err(InterpError::Trap(t)) => match t.kind {
            TrapKind::Printf(what) => {
                assert!(t.op.contains("OpExtInst"), "{}", t.op);
                what
            }
            other => panic!("{other}"),
        },
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_vector_without_its_length_modifier_stops_the_kernel_naming_it() {
    let e = trap(
        "__kernel void k(void) { printf(\"%v4f\\n\", (float4)(1.0f)); }",
        "k",
        vec![],
    );
    assert!(e.contains("`%v4f`") && e.contains("%v4hlf"), "{e}");
}

#[test]
fn percent_s_of_a_buffer_is_refused() {
    let e = trap(
        "__kernel void k(__global char *s) { printf(\"%s\\n\", s); }",
        "k",
        vec![u8s(b"hi\0")],
    );
    assert!(e.contains("`%s`") && e.contains("__global"), "{e}");
}
