//! `clflow count --simd`: how work-items would fill vectors of 8 to 64 lanes.

mod common;

use common::{clflow, kernel_in, repo, text, variant};
use serde_json::Value;
use std::path::Path;

/// Writes kernel `name` (`NAME.cl`, `source`) and its manifest (`NAME.toml`:
/// the kernel and `launch`, its sizes and `[[arg]]` tables) and counts it
/// with --simd: the manifest's path and the JSON report.
fn count_simd(dir: &Path, name: &str, source: &str, launch: &str) -> (String, Value) {
    let manifest = kernel_in(dir, name, source, launch);
    let manifest = manifest.to_str().unwrap().to_string();
    let out = clflow(dir, &["count", &manifest, "--simd", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    (manifest, serde_json::from_slice(&out.stdout).unwrap())
}

/// A quarter of each 16 work-items (local ids 0-3 of each 16) takes a
/// branch the rest skip. At S = 8 the branch's block issues one vector of
/// 8 for 4 work-items; at S = 16, 32 and 64 one vector of S for every 4
/// of 16. The rest of the kernel runs in full vectors at every S. With T
/// the branch's instruction steps per work-item that runs it: waste at
/// S = 8 is 4 lanes a vector (64 T over 256 work-items) and at S >= 16,
/// 12 of every 16 (192 T); the steps in full vectors are all but the
/// branch's (64 T).
#[test]
fn a_quarter_branch_fills_vectors_as_counted() {
    let dir = tempfile::tempdir().unwrap();
    let source = "__kernel void quarter(__global uint *out, uint bad) {\n\
                  \x20   uint i = get_global_id(0);\n\
                  \x20   if (i % 16 < 4)\n\
                  \x20       out[i] = i * 3 + bad;\n\
                  }\n";
    let args = "[[arg]]\nname = \"out\"\ntype = \"uint\"\ncount = 256\naccess = \"wo\"\n";
    let manifest = variant(dir.path(), "quarter", source, args, 1);
    let out = clflow(dir.path(), &["count", &manifest, "--simd", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let simd = report["simd"].as_array().unwrap();
    let at = |s: usize, key: &str| simd[s][key].as_u64().unwrap();
    let widths: Vec<u64> = (0..4).map(|s| at(s, "width")).collect();
    assert_eq!(widths, [8, 16, 32, 64]);
    let lane = at(0, "lane_steps");
    let waste8 = at(0, "issued_steps") - lane;
    assert!(waste8 > 0 && waste8 % 64 == 0, "{simd:?}");
    for (s, width) in widths.iter().enumerate() {
        if s > 0 {
            assert_eq!(at(s, "lane_steps"), lane);
            assert_eq!(at(s, "issued_steps") - lane, 3 * waste8, "S = {width}");
        }
        assert_eq!(at(s, "converged_steps"), lane - waste8, "S = {width}");
        assert_eq!(at(s, "loop_steps"), 0, "no loop");
    }
    // In text, the shares.
    let out = clflow(dir.path(), &["count", &manifest, "--simd"]);
    let report = text(&out.stdout);
    assert!(
        report.contains("SIMD use (work-items S at a time by local id):"),
        "{report}"
    );
    // vadd, uniform: every share 100%.
    let out = clflow(
        dir.path(),
        &["count", "kernels/vadd/vadd.toml", "--simd", "--json"],
    );
    let vadd: Value = serde_json::from_slice(&out.stdout).unwrap();
    for s in vadd["simd"].as_array().unwrap() {
        assert_eq!(s["issued_steps"], s["lane_steps"]);
        assert_eq!(s["converged_steps"], s["lane_steps"]);
    }

    // A loop every work-item runs the same number of times: its steps are
    // loop steps, all in full vectors.
    let source = "__kernel void summed(__global uint *out, uint bad) {\n\
                  \x20   uint i = get_global_id(0), acc = 0;\n\
                  \x20   for (uint k = 0; k < bad * 8; k++)\n\
                  \x20       acc += k ^ i;\n\
                  \x20   out[i] = acc;\n\
                  }\n";
    let manifest = variant(dir.path(), "summed", source, args, 3);
    let out = clflow(dir.path(), &["count", &manifest, "--simd", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let s16 = &report["simd"][1];
    let (lane, looped) = (
        s16["lane_steps"].as_u64().unwrap(),
        s16["loop_steps"].as_u64().unwrap(),
    );
    assert!(looped > lane / 2 && looped < lane, "{s16}");
    assert_eq!(s16["converged_loop_steps"], s16["loop_steps"]);
    assert_eq!(s16["converged_steps"], s16["lane_steps"]);
}

/// sgemm's loop carries its sum: one fused multiply-add (4 cycles) per
/// iteration, n iterations for each of the n² work-items; its loads and
/// counter do not wait on the sum. A store every third work-item makes (by
/// global id, i % 3 == 0) is a branch a 2-bit counter that starts at "not
/// taken" mispredicts each time it is taken, and never otherwise.
#[test]
fn loops_carry_chains_and_branches_mispredict_as_counted() {
    let dir = tempfile::tempdir().unwrap();
    let out = clflow(
        dir.path(),
        &["count", "kernels/sgemm/sgemm.toml", "--simd", "--json"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sgemm: Value = serde_json::from_slice(&out.stdout).unwrap();
    let n = 32u64;
    assert_eq!(
        sgemm["chains"]["cycles"],
        4 * n * n * n,
        "{}",
        sgemm["chains"]
    );
    let steps = sgemm["chains"]["steps"].as_u64().unwrap();
    assert_eq!(steps % (n * n * n), 0, "whole iterations: {steps}");
    assert_eq!(sgemm["chains"]["spilled"], 0, "sgemm calls nothing");
    // Its loop's exit, once a batch of work-items, mispredicts: a branch
    // inside a loop between barriers, which a CPU runs item by item.
    let branches = &sgemm["branches"];
    assert!(branches["mispredicted"].as_u64().unwrap() > 0, "{branches}");
    assert_eq!(branches["loop_mispredicted"], branches["mispredicted"]);

    // n-body's sum of accelerations is read after every call of its
    // `noinline` force function: each of the n² interactions holds a float
    // value across a kept call. Made inlinable, the same kernel holds none.
    let out = clflow(
        dir.path(),
        &["count", "kernels/nbody/nbody.toml", "--simd", "--json"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let nbody: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(nbody["chains"]["spilled"], 128 * 128, "{}", nbody["chains"]);
    assert_eq!(nbody["chains"]["calls"], 128 * 128, "{}", nbody["chains"]);
    let inlined = std::fs::read_to_string(repo().join("kernels/nbody/nbody.cl"))
        .unwrap()
        .replace("__attribute__((noinline)) ", "");
    std::fs::write(dir.path().join("inlined.cl"), inlined).unwrap();
    let manifest = dir.path().join("inlined.toml");
    std::fs::write(
        &manifest,
        std::fs::read_to_string(repo().join("kernels/nbody/nbody.toml"))
            .unwrap()
            .replace("source = \"nbody.cl\"", "source = \"inlined.cl\""),
    )
    .unwrap();
    let manifest = manifest.to_str().unwrap();
    let out = clflow(dir.path(), &["count", manifest, "--simd", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["chains"]["spilled"], 0, "{}", report["chains"]);
    assert_eq!(report["chains"]["calls"], 0, "{}", report["chains"]);
    assert!(report["chains"]["cycles"].as_u64().unwrap() > 0);

    let source = "__kernel void thirds(__global uint *out, uint bad) {\n\
                  \x20   uint i = get_global_id(0);\n\
                  \x20   if (i % 3 == 0)\n\
                  \x20       out[i] = i + bad;\n\
                  }\n";
    let args = "[[arg]]\nname = \"out\"\ntype = \"uint\"\ncount = 256\naccess = \"wo\"\n";
    let manifest = variant(dir.path(), "thirds", source, args, 1);
    let out = clflow(dir.path(), &["count", &manifest, "--simd", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["branches"]["executed"], 256,
        "{}",
        report["branches"]
    );
    assert_eq!(report["branches"]["mispredicted"], 86, "0, 3, ... 255");
    // No loop: a vectoriser makes a mask of the branch.
    assert_eq!(report["branches"]["loop_mispredicted"], 0);
    assert!(report.get("chains").is_some_and(|c| c["cycles"] == 0));
    // The text says both; a count without --simd measures neither.
    let out = clflow(dir.path(), &["count", &manifest, "--simd"]);
    let shown = text(&out.stdout);
    assert!(
        shown.contains(
            "Branches: 256 passes, 86 mispredicted (33.6%) by a 2-bit counter per branch, \
             0 of them inside loops between barriers"
        ),
        "{shown}"
    );
    let out = clflow(dir.path(), &["count", &manifest, "--json"]);
    let plain: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(plain.get("branches").is_none() && plain.get("chains").is_none());
}

/// A kernel whose -O2 module llvm-spirv cannot take (a switch on two bits
/// of a 64-bit value, which the compile does not widen) is built through
/// the fallback. Its helper, a call in the module, is one
/// the device's compiler inlines: the sum the loop carries is held across
/// no kept call, as at -O2. The source's own `noinline` still keeps it, and
/// the sum then waits on the stack on each of the 256 x 16 calls.
#[test]
fn a_fallback_builds_helpers_the_device_inlines_as_inlined() {
    let dir = tempfile::tempdir().unwrap();
    let source = |mark: &str| {
        format!(
            "{mark}float weight(ulong k) {{\n\
             \x20   switch (k & 3) {{ case 0: return 1.0f; case 1: return 7.0f; \
             case 2: return 9.0f; default: return 4.0f; }}\n\
             }}\n\
             __kernel void weighted(__global const float *x, __global float *out, uint n) {{\n\
             \x20   uint i = get_global_id(0);\n\
             \x20   float acc = 0.0f;\n\
             \x20   for (uint k = 0; k < n; k++)\n\
             \x20       acc += weight(k + i) * x[k];\n\
             \x20   out[i] = acc;\n\
             }}\n"
        )
    };
    let args = "[[arg]]\nname = \"x\"\ntype = \"float\"\ncount = 16\nfill = 1.0\naccess = \"ro\"\n\
                [[arg]]\nname = \"out\"\ntype = \"float\"\ncount = 256\naccess = \"wo\"\n";
    let chains = |mark: &str| {
        let manifest = variant(dir.path(), "weighted", &source(mark), args, 16);
        let out = clflow(dir.path(), &["count", &manifest, "--simd", "--json", "-v"]);
        let said = text(&out.stderr);
        assert!(out.status.success(), "{said}");
        assert!(said.contains("built through the fallback"), "{said}");
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        report["chains"].clone()
    };
    let inlined = chains("");
    assert_eq!(inlined["spilled"], 0, "{inlined}");
    assert_eq!(inlined["calls"], 0, "{inlined}");
    assert!(inlined["cycles"].as_u64().unwrap() > 0, "{inlined}");
    let kept = chains("__attribute__((noinline)) ");
    assert_eq!(kept["spilled"], 256 * 16, "{kept}");
    assert_eq!(kept["calls"], 256 * 16, "{kept}");
}

/// A generator's loop that calls its own function a step, which clang's
/// -O2 does not inline (ten unrolled rounds, called from two places), as
/// pyopencl's Philox calls its `gen_bits`: the module still makes the call,
/// and so does the device's code. Each of the 256 work-items calls it 15
/// times in its loop and once after it; only the loop's calls count.
#[test]
fn a_call_the_optimised_build_keeps_is_a_kept_call() {
    let dir = tempfile::tempdir().unwrap();
    let source = "uint4 rounds(uint4 *ctr, uint key) {\n\
                  \x20   uint4 c = *ctr;\n\
                  \x20   ctr->x += 1u;\n\
                  #pragma unroll\n\
                  \x20   for (int r = 0; r < 10; r++) {\n\
                  \x20       uint hi0 = mul_hi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;\n\
                  \x20       uint hi1 = mul_hi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;\n\
                  \x20       c = (uint4)(hi1 ^ c.y ^ key, lo1, hi0 ^ c.w ^ key, lo0);\n\
                  \x20       key += 0x9E3779B9u;\n\
                  \x20   }\n\
                  \x20   return c;\n\
                  }\n\
                  __kernel void gen(__global uint4 *out, const uint n) {\n\
                  \x20   uint4 ctr = (uint4)((uint)get_global_id(0), 1u, 2u, 3u);\n\
                  \x20   uint i = get_global_id(0);\n\
                  \x20   for (; i + get_global_size(0) < n; i += get_global_size(0))\n\
                  \x20       out[i] = rounds(&ctr, 7u);\n\
                  \x20   out[i] = rounds(&ctr, 9u);\n\
                  }\n";
    let launch = "global_size = [256]\nlocal_size = [64]\n\
                  [[arg]]\nname = \"out\"\ntype = \"uint4\"\ncount = 4096\naccess = \"wo\"\n\
                  [[arg]]\nname = \"n\"\ntype = \"uint\"\nvalue = 4096\n";
    let (manifest, report) = count_simd(dir.path(), "gen", source, launch);
    assert_eq!(report["chains"]["calls"], 256 * 15, "{}", report["chains"]);
    let out = clflow(dir.path(), &["count", &manifest, "--simd"]);
    let shown = text(&out.stdout);
    assert!(
        shown.contains(
            "Kept calls: 3,840 runs of calls the compiler keeps, inside loops between barriers"
        ),
        "{shown}"
    );
}

/// The reduction's tree loop has its barrier at the end of each iteration:
/// a CPU runtime adds one at the start of each, seven iterations (halving
/// 128 down to one) for each of the 4,096 work-items. The kernel's own
/// barriers are one before the loop, and one each iteration.
#[test]
fn iterations_of_a_loop_with_a_barrier_that_begin_without_one_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let out = clflow(
        dir.path(),
        &[
            "count",
            "kernels/reduction/reduction.toml",
            "--simd",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["loop_barriers"], 7 * 4096);
    // The tree's `lid < s` tests mispredict where the halves meet, inside
    // a loop with a barrier: between its barriers a CPU's runtime loops
    // over the work-items, which its vectoriser takes together.
    let branches = &report["branches"];
    assert!(branches["mispredicted"].as_u64().unwrap() > 0, "{branches}");
    assert_eq!(branches["loop_mispredicted"], 0, "{branches}");
    assert_eq!(
        report["ops_by_role"]["OpControlBarrier"]["void"]["work"],
        8 * 4096
    );
    let out = clflow(
        dir.path(),
        &["count", "kernels/reduction/reduction.toml", "--simd"],
    );
    assert!(text(&out.stdout).contains("Loop barriers: 28,672 work-item iterations"));
    // Without --simd, nothing is measured.
    let out = clflow(
        dir.path(),
        &["count", "kernels/reduction/reduction.toml", "--json"],
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report.get("loop_barriers").is_none());
}

/// A maximum that keeps a NaN: each iteration branches on it, so the
/// maximum's chain runs through several blocks of the loop's body, a float
/// maximum (5 cycles, with its NaN rules) or add (3) on each way round. Per
/// block, only the loop's counter (1 cycle) would be seen.
#[test]
fn a_chain_through_a_loops_branches_is_followed_round_it() {
    let dir = tempfile::tempdir().unwrap();
    let source = "__kernel void maxes(__global const float *in, __global float *out, uint bad) {\n\
                  \x20   size_t i = get_global_id(0);\n\
                  \x20   float acc = -INFINITY;\n\
                  \x20   for (uint k = 0; k < 64; ++k) {\n\
                  \x20       float x = in[i * 64 + k];\n\
                  \x20       acc = (isnan(acc) || isnan(x)) ? acc + x : fmax(acc, x);\n\
                  \x20   }\n\
                  \x20   out[i] = acc + bad;\n\
                  }\n";
    let args = "[[arg]]\nname = \"in\"\ntype = \"float\"\ncount = 16384\n\
                random = { min = -1.0, max = 1.0, seed = 4 }\naccess = \"ro\"\n\
                [[arg]]\nname = \"out\"\ntype = \"float\"\ncount = 256\naccess = \"wo\"\n";
    let manifest = variant(dir.path(), "maxes", source, args, 0);
    let out = clflow(dir.path(), &["count", &manifest, "--simd", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["chains"]["cycles"],
        5 * 64 * 256,
        "{}",
        report["chains"]
    );
    // The whole body runs under the chain.
    let steps = report["chains"]["steps"].as_u64().unwrap();
    let loop_steps = report["simd"][0]["loop_steps"].as_u64().unwrap();
    assert!(steps * 10 >= loop_steps * 9, "{steps} of {loop_steps}");
}

/// In 8 × 8 work-groups, a transposed read (`in[x * n + y]`) strides along
/// each row of eight work-items: a vectoriser gathers its 256 lanes. A read
/// the whole row shares (`in[y]`) and the store along the row
/// (`out[y * n + x]`) are one vector access each. The loop's own strided
/// reads (four a work-item) are counted apart, as lanes inside loops.
#[test]
fn lanes_whose_row_neither_counts_up_nor_shares_an_address_are_gathers() {
    let dir = tempfile::tempdir().unwrap();
    let (manifest, report) = count_simd(
        dir.path(),
        "transpose",
        "__kernel void transpose(__global const float *in, __global float *out, uint n) {\n\
         \x20   uint x = get_global_id(0), y = get_global_id(1);\n\
         \x20   float sum = in[x * n + y] + in[y];\n\
         \x20   for (uint k = 0; k < n; k += 4)\n\
         \x20       sum += in[x * n + k];\n\
         \x20   out[y * n + x] = sum;\n\
         }\n",
        "global_size = [16, 16]\nlocal_size = [8, 8]\n\
         [[arg]]\nname = \"in\"\ntype = \"float\"\ncount = 256\nfill = 1.0\naccess = \"ro\"\n\
         [[arg]]\nname = \"out\"\ntype = \"float\"\ncount = 256\naccess = \"wo\"\n\
         [[arg]]\nname = \"n\"\ntype = \"uint\"\nvalue = 16\n",
    );
    let manifest = manifest.as_str();
    assert_eq!(report["gathers"]["lanes"], 256 + 4 * 256);
    assert_eq!(report["gathers"]["loop_lanes"], 4 * 256);
    let out = clflow(dir.path(), &["count", manifest, "--simd"]);
    assert!(
        text(&out.stdout).contains("Gathers: 1,280 lanes of loads and stores whose row"),
        "{}",
        text(&out.stdout)
    );
    // Without --simd, nothing is measured.
    let out = clflow(dir.path(), &["count", manifest, "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report.get("gathers").is_none());
}

/// A value computed before a barrier comes back from the array a CPU's
/// compiler keeps it in, one entry per work-item, and the vectoriser cannot
/// see the addresses built from it count up: `c[i]` (`i` read before the
/// barrier) and `s[lid]` (its address taken there for the store) are
/// gathered, though they count up. `b[group * 8 + lid]`, built after it
/// from the local id the loop over the work-items reads anew, and `a[i]`,
/// before it, are vector accesses.
#[test]
fn addresses_computed_before_a_barrier_are_gathered_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let (manifest, report) = count_simd(
        dir.path(),
        "carry",
        "__kernel void carry(__global const float *a, __global const float *b,\n\
         \x20                   __global float *c, __local float *s) {\n\
         \x20   size_t i = get_global_id(0);\n\
         \x20   s[get_local_id(0)] = a[i];\n\
         \x20   barrier(CLK_LOCAL_MEM_FENCE);\n\
         \x20   c[i] = s[get_local_id(0)] + b[get_group_id(0) * 8 + get_local_id(0)];\n\
         }\n",
        "global_size = [32]\nlocal_size = [8]\n\
         [[arg]]\nname = \"a\"\ntype = \"float\"\ncount = 32\nfill = 1.0\naccess = \"ro\"\n\
         [[arg]]\nname = \"b\"\ntype = \"float\"\ncount = 32\nfill = 2.0\naccess = \"ro\"\n\
         [[arg]]\nname = \"c\"\ntype = \"float\"\ncount = 32\naccess = \"wo\"\n\
         [[arg]]\nname = \"s\"\nlocal_bytes = 32\n",
    );
    assert_eq!(report["gathers"]["lanes"], 2 * 32);
    assert_eq!(report["gathers"]["carried_lanes"], 2 * 32);
    assert_eq!(report["gathers"]["loop_lanes"], 0);
    let out = clflow(dir.path(), &["count", &manifest, "--simd"]);
    assert!(
        text(&out.stdout).contains("or whose address comes across a barrier (64), or that share"),
        "{}",
        text(&out.stdout)
    );
}

/// A load every work-item of a row makes at one address is one broadcast
/// where it always runs (`s[1]`), but under an `if` (`s[0]`) the compiler
/// masks it and gathers the one address lane by lane: 24 of the 32
/// work-items pass the test, in rows of eight.
#[test]
fn a_shared_load_under_an_if_is_gathered() {
    let dir = tempfile::tempdir().unwrap();
    let (_, report) = count_simd(
        dir.path(),
        "scale",
        "__kernel void scale(__global const float *a, __global const float *s,\n\
         \x20                   __global float *out, uint n) {\n\
         \x20   size_t i = get_global_id(0);\n\
         \x20   out[i] = s[1];\n\
         \x20   if (i < n)\n\
         \x20       out[i + 32] = a[i] * s[0];\n\
         }\n",
        "global_size = [32]\nlocal_size = [8]\n\
         [[arg]]\nname = \"a\"\ntype = \"float\"\ncount = 32\nfill = 1.0\naccess = \"ro\"\n\
         [[arg]]\nname = \"s\"\ntype = \"float\"\ncount = 2\nfill = 2.0\naccess = \"ro\"\n\
         [[arg]]\nname = \"out\"\ntype = \"float\"\ncount = 64\naccess = \"wo\"\n\
         [[arg]]\nname = \"n\"\ntype = \"uint\"\nvalue = 24\n",
    );
    assert_eq!(report["gathers"]["masked_lanes"], 24);
    assert_eq!(report["gathers"]["lanes"], 24);
    assert_eq!(report["gathers"]["carried_lanes"], 0);
}

/// A `float8` a work-item read one component at a time, as the source
/// writes it (`v.s0 * a`, ..., `v.s7 * a`): compiled without the SLP
/// vectoriser that packs them, the eight scalar loads stride 32 bytes along
/// the row, but together they are the vector the device's compiler makes,
/// and the row counts up by it: nothing gathered. A stride with no
/// neighbours beside it (`w[2 * i]` alone) still is.
#[test]
fn a_vectors_components_read_one_by_one_are_one_vector_access() {
    let dir = tempfile::tempdir().unwrap();
    let (_, report) = count_simd(
        dir.path(),
        "scale8",
        "__kernel void scale8(__global float8 *x, __global const float *w, __global float *y,\n\
         \x20                     float a) {\n\
         \x20   size_t i = get_global_id(0);\n\
         \x20   float8 v = x[i];\n\
         \x20   float8 r;\n\
         \x20   r.s0 = v.s0 * a; r.s1 = v.s1 * a; r.s2 = v.s2 * a; r.s3 = v.s3 * a;\n\
         \x20   r.s4 = v.s4 * a; r.s5 = v.s5 * a; r.s6 = v.s6 * a; r.s7 = v.s7 * a;\n\
         \x20   x[i] = r;\n\
         \x20   y[i] = w[2 * i];\n\
         }\n",
        "global_size = [64]\nlocal_size = [16]\n\
         [[arg]]\nname = \"x\"\ntype = \"float8\"\ncount = 64\nfill = 1.0\naccess = \"rw\"\n\
         [[arg]]\nname = \"w\"\ntype = \"float\"\ncount = 128\nfill = 2.0\naccess = \"ro\"\n\
         [[arg]]\nname = \"y\"\ntype = \"float\"\ncount = 64\naccess = \"wo\"\n\
         [[arg]]\nname = \"a\"\ntype = \"float\"\nvalue = 3.0\n",
    );
    assert_eq!(
        report["ops"]["OpLoad global"]["float"],
        8 * 64 + 64,
        "{}",
        report["ops"]
    );
    assert_eq!(report["gathers"]["lanes"], 64, "{}", report["gathers"]);
}
