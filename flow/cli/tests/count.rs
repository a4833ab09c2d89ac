//! `clflow count` end to end: the binary on the corpus manifests.

mod common;

use common::{kernel_in, repo, Clflow};
use std::path::PathBuf;

#[test]
fn vadd_json_has_exact_w_q_and_i() {
    let v = Clflow::new().json(&["count", "kernels/vadd/vadd.toml", "--json", "--ops", "fp32"]);
    assert_eq!(v["kernel"], "vadd");
    assert_eq!(v["work_items"], 4096);
    assert_eq!(v["ops"]["OpFAdd"]["float"], 4096);
    assert_eq!(v["W"]["fp32"], 4096);
    assert_eq!(v["W"]["total"], 4096);
    assert_eq!(v["Q"]["load_bytes"], 8 * 4096);
    assert_eq!(v["Q"]["store_bytes"], 4 * 4096);
    assert_eq!(v["Q"]["accessed"], 12 * 4096);
    assert_eq!(v["Q"]["compulsory"], 12 * 4096);
    assert_eq!(v["Q"]["line_bytes"], 64);
    let i_min = v["I"]["min"].as_f64().unwrap();
    assert!((i_min - 4096.0 / (12.0 * 4096.0)).abs() < 1e-12);
}

#[test]
fn the_papers_op_selection_and_line_size_are_accepted() {
    let paper = "add,xor,sub,shl,lshr,or,getelementptr,icmp,mul,and,div";
    let v = Clflow::new().json(&[
        "count",
        "kernels/lookup3/lookup3.toml",
        "--json",
        "--ops",
        paper,
        "--line-bytes",
        "128",
    ]);
    assert_eq!(v["W"]["set"], paper);
    let total = v["W"]["total"].as_u64().unwrap();
    let int = v["W"]["int"].as_u64().unwrap();
    assert!(total > 0 && total <= int, "W {total} of int {int}");
    assert_eq!(v["Q"]["line_bytes"], 128);
    // One 4-byte hash stored per key.
    assert_eq!(v["Q"]["store_bytes"], 4 * 4096);
}

#[test]
fn human_output_is_a_sorted_histogram_then_w_q_i() {
    let out = Clflow::new().run(&["count", "kernels/triad/triad.toml"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("Lanes executed for kernel 'triad'"),
        "{text}"
    );
    let counts: Vec<u64> = text
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| {
            l.split(" - ")
                .next()
                .unwrap()
                .trim()
                .replace(',', "")
                .parse()
                .unwrap()
        })
        .collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");
    for unit in ["W (work):", "ops", "Q accessed:", "bytes", "OPS/B"] {
        assert!(text.contains(unit), "{unit} missing in {text}");
    }
}

#[test]
fn dump_writes_the_output_buffers() {
    let dir = tempfile::tempdir().unwrap();
    let out = Clflow::new().run(&[
        "count",
        "kernels/vadd/vadd.toml",
        "--dump",
        dir.path().to_str().unwrap(),
        "-q",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = std::fs::read(dir.path().join("c.bin")).unwrap();
    assert_eq!(c.len(), 4 * 4096);
    // b is range = [0.0, 0.25]: b[i] = 0.25 i, and a is in [-1, 1].
    let c: Vec<f32> = c
        .chunks(4)
        .map(|w| f32::from_le_bytes(w.try_into().unwrap()))
        .collect();
    assert!((c[100] - 25.0).abs() <= 1.0, "c[100] = {}", c[100]);
    assert!(
        !dir.path().join("a.bin").exists(),
        "read-only buffers are not dumped"
    );
}

#[test]
fn bad_input_gets_one_line_and_exit_2() {
    let out = Clflow::new().run(&["count", "kernels/vadd/vadd.cl"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("clflow: error: kernels/vadd/vadd.cl: `clflow count` needs a manifest"),
        "{err}"
    );
    let out = Clflow::new().run(&["count", "kernels/vadd/vadd.toml", "--ops", "frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown operation `frobnicate`"));
    // The same words a check suite's `ops = "fma"` gets.
    let out = Clflow::new().run(&["count", "kernels/vadd/vadd.toml", "--ops", "fma"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(
        "--ops: `fma` is counted as its base operations (OpFAdd, OpFMul), never by its own name"
    ));
    let out = Clflow::new().run(&["count", "kernels/vadd/vadd.toml", "--line-bytes", "48"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("invalid value '48' for '--line-bytes <N>': line size 48 is not a power of two"));
    // An output directory that cannot be written is refused before the count.
    let blocker = tempfile::NamedTempFile::new().unwrap();
    let out = Clflow::new().run(&[
        "count",
        "kernels/vadd/vadd.toml",
        "--dump",
        blocker.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot write there: a file is where the directory goes"),
        "{err}"
    );
    assert!(
        err.contains("hint: choose a writable directory with --dump"),
        "{err}"
    );
    // A thread count the system cannot spawn is refused, not a crash.
    let out = Clflow::new().run(&["count", "kernels/vadd/vadd.toml", "--threads", "100000"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(
        "invalid value '100000' for '--threads <N>': give a number of threads from 1 to 256"
    ));
    for (cache, why) in [
        ("40MiB/96", "line size 96 is not a power of two"),
        ("forty", "`forty` is not a size"),
        ("32/64", "a 32-byte cache holds no 64-byte line"),
    ] {
        let out = Clflow::new().run(&["count", "kernels/vadd/vadd.toml", "--cache", cache]);
        assert_eq!(out.status.code(), Some(2), "--cache {cache}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with(&format!("clflow: error: --cache {cache}: {why}")),
            "{err}"
        );
    }
}

/// Q DRAM through a cache of `cache`, and the compulsory and accessed bytes.
fn traffic(manifest: &str, cache: &str) -> (u64, u64, u64, serde_json::Value) {
    let v = Clflow::new().json(&["count", manifest, "--cache", cache, "--json"]);
    let t = &v["traffic"];
    let q =
        t["dram"]["read_bytes"].as_u64().unwrap() + t["dram"]["written_bytes"].as_u64().unwrap();
    let compulsory = t["compulsory"]["read_bytes"].as_u64().unwrap()
        + t["compulsory"]["written_bytes"].as_u64().unwrap();
    (
        q,
        compulsory,
        t["accessed_bytes"].as_u64().unwrap(),
        t.clone(),
    )
}

#[test]
fn the_cache_simulation_shows_what_tiling_does_to_sgemm() {
    let n = 128u64;
    // Both read A and B and write C once where everything fits: 3 n² floats.
    let compulsory = 3 * n * n * 4;
    // Naive: each work-item reads a row of A and a column of B, 2n floats.
    let (naive, c, accessed, t) = traffic("kernels/sgemm/sgemm-128.toml", "1KiB/64");
    assert_eq!((c, accessed), (compulsory, 2 * n * n * n * 4 + n * n * 4));
    // Through 16 lines: a batch of 64 work-items (4 rows of 16 in the 16×16
    // work-group) keeps its 4 lines of A while it walks k, 16 floats a line,
    // but meets each of B's n lines (16 columns wide) once: per batch
    // 4·n/16 + n lines, for (n²/64) batches; C is written back once.
    let batches = n * n / 64;
    assert_eq!(naive, batches * (4 * n / 16 + n) * 64 + n * n * 4);
    // Tiled: 16×16 tiles of A and B go through __local memory, so each
    // global float is read n/16 times, whatever the cache.
    let (tiled, c_tiled, accessed_tiled, _) =
        traffic("kernels/sgemm-tiled/sgemm-tiled-128.toml", "1KiB/64");
    assert_eq!(c_tiled, compulsory);
    assert_eq!(accessed_tiled, 2 * n * n * n / 16 * 4 + n * n * 4);
    assert_eq!(tiled, accessed_tiled);
    assert!(naive > 2 * tiled, "naive {naive}, tiled {tiled}");
    // A cache that holds all three matrices leaves only compulsory traffic.
    assert_eq!(
        traffic("kernels/sgemm/sgemm-128.toml", "256KiB/64").0,
        compulsory
    );
    assert_eq!(
        traffic("kernels/sgemm-tiled/sgemm-tiled-128.toml", "256KiB").0,
        compulsory
    );
    // The curve falls from the 1 KiB figure to the compulsory traffic.
    let curve: Vec<u64> = t["curve"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["read_bytes"].as_u64().unwrap() + p["written_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(curve.first(), Some(&naive));
    assert_eq!(curve.last(), Some(&compulsory));
    assert!(curve.windows(2).all(|w| w[0] >= w[1]), "{curve:?}");
    // Naive sgemm's A loads are one address per row of work-items
    // (uniform), its B loads and C stores contiguous.
    let bytes = &t["coalescing"]["bytes"];
    assert_eq!(bytes["uniform"].as_u64(), Some(n * n * n * 4));
    assert_eq!(
        bytes["contiguous"].as_u64(),
        Some(n * n * n * 4 + n * n * 4)
    );
    assert_eq!(bytes["strided"].as_u64(), Some(0));
}

#[test]
fn csr_rows_one_per_work_item_are_strided_and_the_gather_scattered() {
    // spmv: 1024 rows of 8 non-zeros, one work-item a row. Neighbouring
    // work-items read values and col_idx 8 elements (32 bytes) apart, so
    // each load uses 4 of each 32 bytes; x[col_idx[j]] lands anywhere.
    let (_, _, accessed, t) = traffic("kernels/spmv/spmv.toml", "64KiB/64");
    let sites = t["coalescing"]["sites"].as_array().unwrap();
    let site = |buffer: &str| {
        sites
            .iter()
            .find(|s| {
                s["description"]
                    .as_str()
                    .unwrap()
                    .ends_with(&format!("({buffer})"))
            })
            .unwrap_or_else(|| panic!("no site on {buffer}: {sites:?}"))
    };
    for strided in ["values", "col_idx"] {
        let s = site(strided);
        assert_eq!(s["bytes"]["strided"].as_u64(), Some(8192 * 4), "{s}");
        assert_eq!(s["bytes"]["contiguous"].as_u64(), Some(0), "{s}");
    }
    let x = site("x");
    assert!(
        x["bytes"]["scattered"].as_u64().unwrap() > 8192 * 4 * 9 / 10,
        "{x}"
    );
    assert_eq!(site("y")["bytes"]["contiguous"].as_u64(), Some(1024 * 4));
    // Each work-item's own walk: its row, 4 bytes a step, and x anywhere,
    // 8 steps: no long walk.
    assert!(sites.iter().all(|s| s["page_strides"] == 0), "{sites:?}");
    let bytes = &t["coalescing"]["bytes"];
    let total: u64 = ["contiguous", "uniform", "strided", "scattered"]
        .iter()
        .map(|k| bytes[k].as_u64().unwrap())
        .sum();
    assert_eq!(total, accessed);
}

/// A grid-stride loop, as GPU code sums an array: 1,024 work-items, each
/// reading every 1,024th float of 81,920 from its id on, 4 KiB a step. Of
/// each work-item's 80 loads, the 78 after its first step keep the stride:
/// a long walk. Over 8,192 floats, each work-item's walk of 6 strides is
/// short, and counts nothing.
#[test]
fn a_loop_striding_by_the_global_size_makes_page_strides() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = kernel_in(
        dir.path(),
        "walk",
        "__kernel void walk(__global const float *in, __global float *out, uint n) {\n\
         \x20   float sum = 0.0f;\n\
         \x20   for (uint i = get_global_id(0); i < n; i += get_global_size(0))\n\
         \x20       sum += in[i];\n\
         \x20   out[get_global_id(0)] = sum;\n\
         }\n",
        "global_size = [1024]\nlocal_size = [64]\n\
         [[arg]]\nname = \"in\"\ntype = \"float\"\ncount = 81920\nfill = 1.0\n\
         [[arg]]\nname = \"out\"\ntype = \"float\"\ncount = 1024\naccess = \"wo\"\n\
         [[arg]]\nname = \"n\"\ntype = \"uint\"\nvalue = 81920\n",
    );
    let page_strides = |manifest: &std::path::Path| -> u64 {
        let (_, _, _, t) = traffic(manifest.to_str().unwrap(), "64KiB/64");
        let sites = t["coalescing"]["sites"].as_array().unwrap();
        sites
            .iter()
            .map(|s| s["page_strides"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(page_strides(&manifest), 1024 * 78);
    let (_, _, _, t) = traffic(manifest.to_str().unwrap(), "64KiB/64");
    assert_eq!(t["coalescing"]["page_walkers"].as_u64(), Some(1024), "{t}");
    let text = Clflow::new().stdout(&["count", manifest.to_str().unwrap(), "--cache", "64KiB/64"]);
    assert!(
        text.contains(
            "Page strides: 79,872 accesses a page or more past their work-item's last at the \
             site, in 1,024 walks of 64 or more"
        ),
        "{text}"
    );
    // One walk a work-item, 78 strides each.
    assert!(
        text.contains("work-item's walk alone: 78 strides a work-item between barriers)"),
        "{text}"
    );
    assert!(
        text.contains("  load             79,872      78 a walk  "),
        "{text}"
    );
    let short = dir.path().join("short.toml");
    let manifest_text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&short, manifest_text.replace("81920", "8192")).unwrap();
    assert_eq!(page_strides(&short), 0);
}

/// A column walk: each of 1,024 work-items sums its column of 512 rows of
/// 4 KiB (a page each), 16 rows between barriers. A work-group of 64 reads
/// 4 lines of each row's page and moves on; the next group reads the next
/// 4 a whole walk (2,048 first touches) later: every line of the 2 MiB is
/// first touched in a visit of 4 lines, and so is every line of the sums
/// each group stores after its walk.
#[test]
fn a_column_walk_reads_its_lines_in_short_page_visits() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = kernel_in(
        dir.path(),
        "columns",
        "__kernel void columns(__global const uint *a, __global uint *out, uint rows) {\n\
         \x20   uint acc = 0, width = get_global_size(0);\n\
         \x20   for (uint row = 0; row < rows; row += 16) {\n\
         \x20       barrier(CLK_LOCAL_MEM_FENCE);\n\
         \x20       for (uint k = 0; k < 16; k++)\n\
         \x20           acc ^= a[(row + k) * width + get_global_id(0)];\n\
         \x20   }\n\
         \x20   out[get_global_id(0)] = acc;\n\
         }\n",
        "global_size = [1024]\nlocal_size = [64]\n\
         [[arg]]\nname = \"a\"\ntype = \"uint\"\ncount = 524288\nfill = 1\n\
         [[arg]]\nname = \"out\"\ntype = \"uint\"\ncount = 1024\naccess = \"wo\"\n\
         [[arg]]\nname = \"rows\"\ntype = \"uint\"\nvalue = 512\n",
    );
    let manifest = manifest.to_str().unwrap();
    let (_, _, _, t) = traffic(manifest, "4MiB/64");
    let sites = t["coalescing"]["sites"].as_array().unwrap();
    let visits: Vec<u64> = (0..6)
        .map(|b| {
            sites
                .iter()
                .filter_map(|s| s["short_visits"].as_array())
                .map(|v| v[b].as_u64().unwrap())
                .sum()
        })
        .collect();
    assert_eq!(visits, [0, 0, 32768 + 64, 0, 0, 0], "{t}");
    let text = Clflow::new().stdout(&["count", manifest, "--cache", "4MiB/64"]);
    assert!(
        text.contains(
            "Short page visits: 32,832 lines first touched a few of their page at a time \
             (32,832 in visits of 4-7), 100.0% of the lines touched"
        ),
        "{text}"
    );
}

#[test]
fn a_runaway_kernel_stops_at_max_steps() {
    let out = Clflow::new().run(&["count", "kernels/lookup3/lookup3.toml", "--max-steps", "20"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("kernel `hash`, work-item (") && err.contains("20 steps"),
        "{err}"
    );
    assert!(
        err.contains("hint:") && err.contains("--max-steps"),
        "{err}"
    );
}

/// Every corpus kernel, interpreted and run on the OpenCL CPU device (PoCL):
/// the output buffers must agree, integers exactly and floats within a
/// relative 1e-5 of the element, or 1e-6 of the buffer's largest magnitude
/// for elements that are sums of larger terms (the interpreter's math is
/// correctly rounded or within OpenCL's ULP limits, the device's within
/// those limits, and the two may contract a*b+c differently).
#[test]
fn interpreter_outputs_equal_the_opencl_device_on_every_corpus_kernel() {
    use clflow_core::{ArgValue, ScalarType};
    let device = clflow_ocl::select_device(Some(&clflow_ocl::DeviceSelector::parse(
        "portable computing",
    )))
    .unwrap_or_else(|e| {
        panic!("this test needs the PoCL CPU device (ci/setup installs pocl-opencl-icd): {e}")
    });
    let compiler = clflow_compile::Compiler::discover().expect("the compile tools are installed");
    // Each case's default manifest, kernels/<case>/<case>.toml; the other
    // manifests are paper-scale launches whose inputs ci/demo generates.
    let mut manifests: Vec<PathBuf> = std::fs::read_dir(repo().join("kernels"))
        .unwrap()
        .map(|dir| dir.unwrap().path())
        .filter_map(|dir| {
            let name = dir.file_name()?.to_str()?.to_string();
            Some(dir.join(format!("{name}.toml")))
        })
        .filter(|p| p.exists())
        .collect();
    manifests.sort();
    let mut compared = 0;
    for path in &manifests {
        let manifest = clflow_manifest::Manifest::load(path).unwrap_or_else(|e| panic!("{e}"));
        let info = manifest.info().clone();
        let request = clflow_compile::CompileRequest::new(&info.source, &info.build_options);
        let spirv = compiler.compile(&request).unwrap().spirv;
        let module = clflow_interp::load(&spirv).unwrap();
        let kernels = clflow_spirv::reflect_kernels(&module).unwrap();
        let kernel = kernels
            .iter()
            .find(|k| k.signature.name == info.kernel)
            .unwrap_or_else(|| panic!("{}: no kernel `{}`", path.display(), info.kernel));
        let launch = manifest
            .check(&kernel.signature, clflow_manifest::IntegerSigns::Declared)
            .and_then(|checked| checked.materialize())
            .unwrap_or_else(|e| panic!("{e}"));
        let program = clflow_interp::Program::translate(&module, &launch.kernel).unwrap();
        let ours = program
            .run(&launch, &clflow_interp::RunOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let source =
            clflow_ocl::ProgramSource::from_file(&info.source, &info.build_options).unwrap();
        let theirs = clflow_ocl::run_launch(&device, &source, &launch)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for out in &ours.buffers {
            let ArgValue::Buffer { ty, .. } = &launch.args[out.arg].value else {
                unreachable!()
            };
            let device_bytes = theirs.outputs[out.arg]
                .as_ref()
                .expect("the device returns the buffer");
            assert_eq!(out.bytes.len(), device_bytes.len());
            let what = format!("{}: arg {}", path.display(), out.arg);
            match ty.scalar {
                ScalarType::Float => {
                    close(&what, &floats::<4>(&out.bytes), &floats::<4>(device_bytes))
                }
                ScalarType::Double => {
                    close(&what, &floats::<8>(&out.bytes), &floats::<8>(device_bytes))
                }
                _ => assert!(out.bytes == *device_bytes, "{what}: integer outputs differ"),
            }
        }
        compared += 1;
    }
    assert!(compared >= 13, "only {compared} corpus kernels compared");
}

fn floats<const N: usize>(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks(N)
        .map(|c| match N {
            4 => f32::from_le_bytes(c.try_into().unwrap()) as f64,
            _ => f64::from_le_bytes(c.try_into().unwrap()),
        })
        .collect()
}

fn close(what: &str, ours: &[f64], theirs: &[f64]) {
    let scale = theirs
        .iter()
        .filter(|x| x.is_finite())
        .fold(0.0f64, |m, x| m.max(x.abs()));
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        let tolerance = 1e-5 * a.abs().max(b.abs()) + 1e-6 * scale;
        let ok = a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= tolerance;
        assert!(ok, "{what}: element {i}: interpreter {a}, device {b}");
    }
}

#[test]
fn a_profiles_name_stands_for_its_last_level_cache() {
    // The H100's 50 MiB L2, in 32-byte sectors: vadd's 3 × 4096 floats move once.
    let (q, compulsory, _, t) = traffic("kernels/vadd/vadd.toml", "nvidia-h100-sxm");
    assert_eq!(t["cache"]["bytes"].as_u64(), Some(50 << 20));
    assert_eq!(t["cache"]["line_bytes"].as_u64(), Some(32));
    assert_eq!((q, compulsory), (3 * 4096 * 4, 3 * 4096 * 4));
    let text = String::from_utf8_lossy(
        &Clflow::new()
            .run(&[
                "count",
                "kernels/vadd/vadd.toml",
                "--cache",
                "nvidia-h100-sxm",
            ])
            .stdout,
    )
    .to_string();
    assert!(
        text.contains("Through a 50MiB LRU cache (fully associative, write-back; 32-byte lines; datasheet profile nvidia-h100-sxm, in 32-byte sectors)"),
        "{text}"
    );
}

/// A `.sim` file has no place for build options; `--build-options` gives
/// them (added to a TOML manifest's own), and without them the kernel does
/// not compile.
#[test]
fn build_options_reach_a_sim_launch() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("scale.cl"),
        "__kernel void scale(__global float *a) { a[get_global_id(0)] *= FACTOR; }\n",
    )
    .unwrap();
    let sim = dir.path().join("scale.sim");
    std::fs::write(
        &sim,
        "scale.cl\nscale\n4 1 1\n4 1 1\n<size=16 float dump>\n1 2 3 4\n",
    )
    .unwrap();
    let sim = sim.to_str().unwrap();
    let report = Clflow::new().json(&[
        "count",
        sim,
        "--build-options",
        "-D FACTOR=3.0f",
        "--ops",
        "arith",
        "--json",
    ]);
    assert_eq!(report["W"]["fp32"], 4);
    // 4 floats loaded and stored touch one 64-byte line: W = 8 (4 fp32, 4
    // address) over 32 bytes accessed but 128 compulsory. The walls are
    // named, and min and max ordered.
    assert_eq!(report["W"]["total"], 8);
    assert_eq!(report["I"]["accessed"], 0.25);
    assert_eq!(report["I"]["compulsory"], 0.0625);
    assert_eq!(report["I"]["min"], 0.0625);
    assert_eq!(report["I"]["max"], 0.25);
    let dumped = Clflow::new().run(&[
        "count",
        sim,
        "--build-options",
        "-DFACTOR=3.0f",
        "--ops",
        "arith",
    ]);
    assert!(String::from_utf8_lossy(&dumped.stdout).contains(
        "I: 0.0625 OPS/B (W/Q compulsory, whole 64-byte lines) to 0.25 OPS/B (W/Q accessed)"
    ));
    assert!(
        String::from_utf8_lossy(&dumped.stdout).contains("arg 0 (a) after the run: 3, 6, 9, 12"),
        "{}",
        String::from_utf8_lossy(&dumped.stdout)
    );
    let without = Clflow::new().run(&["count", sim]);
    assert_eq!(without.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&without.stderr).contains("FACTOR"));
}

/// A buffer of no elements (`count = 0`, `size=0`) is legal while the
/// kernel leaves it alone, here and on PoCL; touching it is a fault.
#[test]
fn a_zero_size_buffer_the_kernel_never_touches_is_legal() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    write(
        "pick.cl",
        "__kernel void pick(__global float *a, __global const float *spare, uint use_spare) {\n\
           size_t i = get_global_id(0);\n\
           a[i] = use_spare ? spare[i] : 2.0f * a[i];\n\
         }\n",
    );
    let sim = |use_spare: u32| {
        format!("pick.cl\npick\n4 1 1\n4 1 1\n<size=16 float dump>\n1 2 3 4\n<size=0 float>\n<size=4 uint>\n{use_spare}\n")
    };
    write("pick.sim", &sim(0));
    write("touch.sim", &sim(1));
    write(
        "pick.toml",
        "source = \"pick.cl\"\nkernel = \"pick\"\nglobal_size = [4]\n\
         [[arg]]\ntype = \"float\"\ncount = 4\nfill = 1.5\n\
         [[arg]]\ntype = \"float\"\ncount = 0\n\
         [[arg]]\ntype = \"uint\"\nvalue = 0\n",
    );
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let counted = Clflow::new().run(&["count", &path("pick.sim")]);
    assert_eq!(
        counted.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&counted.stderr)
    );
    assert!(
        String::from_utf8_lossy(&counted.stdout).contains("arg 0 (a) after the run: 2, 4, 6, 8")
    );
    let report = Clflow::new().json(&["count", &path("pick.toml"), "--json"]);
    assert_eq!(report["Q"]["load_bytes"], 16);
    let ran = Clflow::new().stdout(&[
        "run",
        &path("pick.toml"),
        "--device",
        "0",
        "--min-time",
        "0.01",
    ]);
    assert!(ran.contains("outputs agree with the interpreter"));
    let touched = Clflow::new().run(&["count", &path("touch.sim")]);
    assert_eq!(touched.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&touched.stderr).contains(
        "out-of-bounds access to __global arg 1 (spare): 4 bytes at offset 0, buffer is 0 bytes"
    ));
}

/// smith-waterman reads its scoring table from `__constant` memory: Q
/// keeps global and constant bytes together, and tells them apart. Per
/// query (32): 16 bases and 64 database bytes global, 64 table rows of one
/// byte each constant, a 2-byte score stored.
#[test]
fn constant_traffic_is_told_apart_from_global() {
    let v = Clflow::new().json(&[
        "count",
        "kernels/smith-waterman/smith-waterman.toml",
        "--json",
    ]);
    assert_eq!(v["Q"]["global_load_bytes"], 32 * (16 + 64));
    assert_eq!(v["Q"]["constant_load_bytes"], 32 * 64);
    assert_eq!(v["Q"]["load_bytes"], 32 * (16 + 64 + 64));
    assert_eq!(v["Q"]["global_store_bytes"], 32 * 2);
    let text = Clflow::new().run(&["count", "kernels/smith-waterman/smith-waterman.toml"]);
    assert!(String::from_utf8_lossy(&text.stdout)
        .contains("Q accessed: 4,672 bytes (global: load 2,560, store 64; constant: load 2,048)"));
}

/// OpenCL 2.0 lets the last work-group of a dimension be smaller: global
/// 10, local 4 runs groups of 4, 4 and 2, `get_local_size` says so and
/// `get_enqueued_local_size` gives the 4 asked for. An OpenCL 1.2 manifest
/// must still give whole groups, and a device without the feature says so.
#[test]
fn non_uniform_work_groups_run_under_opencl_2() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    write(
        "sizes.cl",
        "__kernel void sizes(__global uint *local_size, __global uint *enqueued, __global uint *linear) {\n\
           size_t i = get_global_id(0);\n\
           local_size[i] = get_local_size(0);\n\
           enqueued[i] = get_enqueued_local_size(0);\n\
           linear[i] = get_local_linear_id() + 100 * get_group_id(0);\n\
         }\n",
    );
    let manifest = |std: &str| {
        let out = "[[arg]]\ntype = \"uint\"\ncount = 10\naccess = \"wo\"\ndump = true\n";
        format!(
            "source = \"sizes.cl\"\nkernel = \"sizes\"\nbuild_options = \"-cl-std={std}\"\n\
             global_size = [10]\nlocal_size = [4]\n{out}{out}{out}"
        )
    };
    write("cl2.toml", &manifest("CL2.0"));
    write("cl12.toml", &manifest("CL1.2"));
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let stdout = Clflow::new().stdout(&["count", &path("cl2.toml")]);
    assert!(
        stdout.contains("arg 0 (local_size) after the run: 4, 4, 4, 4, 4, 4, 4, 4, 2, 2"),
        "{stdout}"
    );
    assert!(
        stdout.contains("arg 1 (enqueued) after the run: 4, 4, 4, 4, 4, 4, 4, 4, 4, 4"),
        "{stdout}"
    );
    assert!(
        stdout.contains("arg 2 (linear) after the run: 0, 1, 2, 3, 100, 101, 102, 103, 200, 201"),
        "{stdout}"
    );
    assert!(
        stdout.contains("(10 work-items in 3 work-groups)"),
        "{stdout}"
    );

    let refused = Clflow::new().run(&["count", &path("cl12.toml")]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr)
        .contains("local size 4 does not divide global size 10 in dimension 0"));

    // PoCL 3.1 takes no non-uniform work-groups.
    let ran = Clflow::new().run(&[
        "run",
        &path("cl2.toml"),
        "--device",
        "0",
        "--min-time",
        "0.01",
    ]);
    assert_ne!(ran.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&ran.stderr).contains("takes no non-uniform work-groups"));
}

/// `--sub-group-size` states the sub-group size a device would have.
#[test]
fn the_sub_group_size_is_stated() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sg.cl"),
        "#pragma OPENCL EXTENSION cl_khr_subgroups : enable\n\
         __kernel void sg(__global uint *out) { out[get_global_id(0)] = get_sub_group_size() * 10 + get_sub_group_id(); }\n",
    )
    .unwrap();
    let manifest = dir.path().join("sg.toml");
    std::fs::write(
        &manifest,
        "source = \"sg.cl\"\nkernel = \"sg\"\nbuild_options = \"-cl-std=CL2.0\"\nglobal_size = [8]\nlocal_size = [8]\n\
         [[arg]]\ntype = \"uint\"\ncount = 8\naccess = \"wo\"\ndump = true\n",
    )
    .unwrap();
    let manifest = manifest.to_str().unwrap();
    let out = Clflow::new().run(&["count", manifest, "--sub-group-size", "4"]);
    assert!(String::from_utf8_lossy(&out.stdout)
        .contains("after the run: 40, 40, 40, 40, 41, 41, 41, 41"));
    let out = Clflow::new().run(&["count", manifest]);
    assert!(String::from_utf8_lossy(&out.stdout)
        .contains("after the run: 80, 80, 80, 80, 80, 80, 80, 80"));
    let bad = Clflow::new().run(&["count", manifest, "--sub-group-size", "0"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// A helper declared C99 `inline` without `static`, called where clang
/// does not inline it (`-cl-opt-disable`): defined, run and counted.
#[test]
fn an_inline_helper_that_stays_a_call_runs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sq.cl"),
        "inline float sq(float x) { return x * x; }\n\
         __kernel void squares(__global float *a) { size_t i = get_global_id(0); a[i] = sq(a[i]) + 1.0f; }\n",
    )
    .unwrap();
    let sim = dir.path().join("sq.sim");
    std::fs::write(
        &sim,
        "sq.cl\nsquares\n4 1 1\n4 1 1\n<size=16 float dump>\n1 2 3 4\n",
    )
    .unwrap();
    let sim = sim.to_str().unwrap();
    for options in ["", "-cl-opt-disable"] {
        let stdout = Clflow::new().stdout(&["count", sim, "--build-options", options]);
        assert!(
            stdout.contains("arg 0 (a) after the run: 2, 5, 10, 17"),
            "{options}: {stdout}"
        );
        // A multiply and an add per work-item, fused or not.
        assert!(
            stdout.contains("fp32 8,") || stdout.contains("fp32 8 "),
            "{stdout}"
        );
    }
}

#[test]
fn vadd_splits_w_by_role_without_changing_it() {
    // The default W is the work: vadd's 4,096 adds. All arithmetic adds
    // the index and compare operations.
    let v = Clflow::new().json(&["count", "kernels/vadd/vadd.toml", "--json"]);
    assert_eq!(v["W"]["total"], 4096);
    let arith = Clflow::new().json(&[
        "count",
        "kernels/vadd/vadd.toml",
        "--ops",
        "arith",
        "--json",
    ]);
    assert_eq!(arith["W"]["total"], 5 * 4096);
    assert_eq!(v["W_by_role"]["work"], 4096);
    assert_eq!(arith["W_by_role"]["work"], 4096);
    assert_eq!(arith["W_by_role"]["address"], 3 * 4096);
    assert_eq!(arith["W_by_role"]["control"], 4096);
    assert_eq!(v["ops"]["OpFAdd"]["float"], 4096);
    assert_eq!(v["ops_by_role"]["OpFAdd"]["float"]["work"], 4096);
    assert_eq!(v["ops_by_role"]["OpULessThan"]["ulong"]["control"], 4096);
    let out = Clflow::new().run(&["count", "kernels/vadd/vadd.toml", "--ops", "arith"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Arithmetic by role: work 4,096, address 12,288, control 4,096"),
        "{text}"
    );
    assert!(
        text.contains("OpInBoundsPtrAccessChain ptr  [address]"),
        "{text}"
    );
    assert!(text.contains("- OpFAdd float\n"), "{text}");
}

#[test]
fn ops_work_is_the_algorithms_operations() {
    let v = Clflow::new().json(&["count", "kernels/vadd/vadd.toml", "--json", "--ops", "work"]);
    assert_eq!(v["W"]["set"], "work");
    assert_eq!(v["W"]["total"], 4096);
    let v = Clflow::new().json(&[
        "count",
        "kernels/sgemm/sgemm.toml",
        "--json",
        "--ops",
        "work",
    ]);
    assert_eq!(v["W"]["total"], 2 * 32 * 32 * 32);
}

/// The default W (`work`) is the W kernels/README.md derives by hand for
/// every case: the index arithmetic, loop counters and bound tests fall
/// away; a histogram's atomic increments stay.
#[test]
fn the_default_w_is_the_corpus_tables_hand_derived_w() {
    for (manifest, w) in [
        ("kernels/lookup3/lookup3.toml", 477_730),
        ("kernels/vadd/vadd.toml", 4_096),
        ("kernels/triad/triad.toml", 8_192),
        ("kernels/sgemm/sgemm.toml", 2 * 32 * 32 * 32),
        ("kernels/sgemm-tiled/sgemm-tiled.toml", 2 * 32 * 32 * 32),
        ("kernels/sgemm/sgemm-128.toml", 2 * 128 * 128 * 128),
        (
            "kernels/sgemm-tiled/sgemm-tiled-128.toml",
            2 * 128 * 128 * 128,
        ),
        ("kernels/stencil/stencil.toml", 6 * 62 * 62),
        ("kernels/histogram/histogram.toml", 16_384 + 16 * 256),
        ("kernels/reduction/reduction.toml", 32 * 127),
        ("kernels/spmv/spmv.toml", 2 * 1024 * 8),
        ("kernels/nbody/nbody.toml", 312_832),
        (
            "kernels/smith-waterman/smith-waterman.toml",
            7 * 32 * 16 * 64 + 32,
        ),
        ("kernels/daxpy/daxpy.toml", 2 * 2048),
        ("kernels/mc-pi/mc-pi.toml", 17 * 256 * 64 + 3 * 256),
        ("kernels/gram-schmidt/gram-schmidt.toml", 64 * 2_212),
    ] {
        let v = Clflow::new().json(&["count", manifest, "--json"]);
        assert_eq!(v["W"]["set"], "work", "{manifest}");
        assert_eq!(v["W"]["total"], w, "{manifest}");
        assert_eq!(v["W_by_role"]["work"], w, "{manifest}");
    }
}

/// Every corpus kernel counted with --compile (the compiled tier where it
/// runs the kernel) and with --interpret: the same report, byte for byte,
/// and the same output buffers; most kernels run compiled, and -v says
/// which.
#[test]
fn the_compiled_tier_and_the_interpreter_agree_on_every_corpus_kernel() {
    let mut manifests: Vec<String> = std::fs::read_dir(repo().join("kernels"))
        .unwrap()
        .filter_map(|dir| {
            let name = dir.unwrap().file_name().to_str()?.to_string();
            let manifest = format!("kernels/{name}/{name}.toml");
            repo().join(&manifest).exists().then_some(manifest)
        })
        .collect();
    manifests.sort();
    let mut compiled = 0;
    for manifest in &manifests {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let dump = |dir: &tempfile::TempDir| dir.path().to_str().unwrap().to_string();
        let default = Clflow::new().run(&[
            "count",
            manifest,
            "--json",
            "-v",
            "--compile",
            "--dump",
            &dump(&a),
        ]);
        let interpreted = Clflow::new().run(&[
            "count",
            manifest,
            "--json",
            "--interpret",
            "--dump",
            &dump(&b),
        ]);
        assert!(
            default.status.success(),
            "{manifest}: {}",
            String::from_utf8_lossy(&default.stderr)
        );
        assert_eq!(
            default.stdout, interpreted.stdout,
            "{manifest}: the reports differ"
        );
        let said = String::from_utf8_lossy(&default.stderr);
        compiled += said.contains("ran compiled:") as usize;
        assert!(
            said.contains("ran compiled:") || said.contains("interpreted ("),
            "{said}"
        );
        let files = |dir: &tempfile::TempDir| {
            let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|f| {
                    let f = f.unwrap();
                    (
                        f.file_name().to_string_lossy().into_owned(),
                        std::fs::read(f.path()).unwrap(),
                    )
                })
                .collect();
            files.sort();
            files
        };
        let outputs = files(&a);
        assert!(!outputs.is_empty(), "{manifest}: no output buffer dumped");
        assert_eq!(outputs, files(&b), "{manifest}: the outputs differ");
    }
    assert!(
        compiled >= 8,
        "{compiled} of {} corpus kernels ran compiled",
        manifests.len()
    );
}

/// A kernel of our own, `NAME.cl`, and its launch, `NAME.sim` (`launch` is
/// the `.sim` text after its first line, the source's name), in a new
/// directory: the directory (kept while it lives) and the launch's path.
fn own_kernel(name: &str, source: &str, launch: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(format!("{name}.cl")), source).unwrap();
    let sim = dir.path().join(format!("{name}.sim"));
    std::fs::write(&sim, format!("{name}.cl\n{launch}")).unwrap();
    let sim = sim.to_str().unwrap().to_string();
    (dir, sim)
}

/// A work-item's 4×4 register tile, accumulated over two nested loops and
/// stored after them: -O2's SLP vectoriser makes the tile one 16-wide
/// multiply-add and builds it a second time in the inner loop's exit, which
/// would count one more tile each time that loop ends (48 multiply-adds a
/// work-item here). The count is the source's:
/// 16 multiply-adds per step, 4 + 4 floats loaded, 16 stored.
#[test]
fn a_register_tiles_multiply_adds_are_the_sources_alone() {
    // T = 3 tiles of K = 5 steps; A and B hold 1..60.
    let values: Vec<String> = (1..=60).map(|v| v.to_string()).collect();
    let values = values.join(" ");
    let (_dir, sim) = own_kernel(
        "tile",
        "__kernel void tile(int K, int T, __global const float *A, __global const float *B,\n\
         \x20                  __global float *C) {\n\
         \x20 const int i = get_global_id(0), n = get_global_size(0);\n\
         \x20 float acc[4][4];\n\
         \x20 for (int a = 0; a < 4; a++) for (int b = 0; b < 4; b++) acc[a][b] = 0.0f;\n\
         \x20 for (int t = 0; t < T; t++)\n\
         \x20   for (int k = 0; k < K; k++) {\n\
         \x20     float ra[4], rb[4];\n\
         \x20     for (int a = 0; a < 4; a++) ra[a] = A[(t * K + k) * 4 + a];\n\
         \x20     for (int b = 0; b < 4; b++) rb[b] = B[(t * K + k) * 4 + b];\n\
         \x20     for (int a = 0; a < 4; a++) for (int b = 0; b < 4; b++) acc[a][b] += ra[a] * rb[b];\n\
         \x20   }\n\
         \x20 for (int a = 0; a < 4; a++) for (int b = 0; b < 4; b++) C[(a * 4 + b) * n + i] = acc[a][b];\n\
         }\n",
        &format!(
            "tile\n64 1 1\n16 1 1\n<size=4 int>\n5\n<size=4 int>\n3\n\
             <size=240 float>\n{values}\n<size=240 float>\n{values}\n<size=4096 float fill=0>\n"
        ),
    );
    let v = Clflow::new().json(&["count", &sim, "--json"]);
    let (work_items, steps) = (64, 3 * 5);
    let mads: u64 = v["ops"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(op, _)| op.contains("mad") || op.contains("fma"))
        .flat_map(|(_, types)| types.as_object().unwrap().values())
        .map(|lanes| lanes.as_u64().unwrap())
        .sum();
    assert_eq!(mads, work_items * steps * 16, "{}", v["ops"]);
    assert_eq!(v["W"]["fp32"], 2 * work_items * steps * 16);
    assert_eq!(v["Q"]["load_bytes"], work_items * steps * 8 * 4);
    assert_eq!(v["Q"]["store_bytes"], work_items * 16 * 4);
}

/// `x / w` and `x % w` together, which -O2 turns into a division, a multiply
/// and a subtraction on a frozen `x`: the freeze runs as a copy, the outputs
/// are right, and the count is that division's (no remainder left).
#[test]
fn a_division_and_its_remainder_count_and_compute_as_o2_makes_them() {
    let (_dir, sim) = own_kernel(
        "divmod",
        "__kernel void divmod(__global const uint *in, __global uint *out, uint w) {\n\
         \x20 uint i = get_global_id(0);\n\
         \x20 out[i] = (in[i] / w) * (in[i] % w);\n\
         }\n",
        "divmod\n8 1 1\n8 1 1\n<size=32 uint>\n3 7 12 19 24 26 40 58\n\
         <size=32 uint fill=0 dump>\n<size=4 uint>\n5\n",
    );
    let sim = sim.as_str();
    let stdout = Clflow::new().stdout(&["count", sim, "-v"]);
    assert!(
        stdout.contains("arg 1 (out) after the run: 0, 2, 4, 12, 16, 5, 0, 33"),
        "{stdout}"
    );
    let v = Clflow::new().json(&["count", sim, "--json", "--ops", "arith"]);
    let ops = &v["ops"];
    assert_eq!(ops["OpUDiv"]["uint"], 8, "{ops}");
    assert!(ops["OpUMod"].is_null(), "{ops}");
}

/// A switch on `len / 4`, which -O2 narrows to 30 bits (llvm-spirv-15
/// rejects the type) and whose three cases that only break reach the end
/// straight from the switch (a phi that names the switch's block three
/// times, which spirv-val rejects): widened and given one entry a
/// predecessor, the -O2 module builds and computes what the source says.
#[test]
fn a_switch_on_a_narrowed_value_keeps_the_o2_module() {
    let (dir, sim) = own_kernel(
        "tail",
        "__kernel void tail(__global const uint *len, __global uint *out) {\n\
         \x20 uint i = get_global_id(0), v = 9;\n\
         \x20 switch (len[i] / 4) {\n\
         \x20   case 0: v = 1; break;\n\
         \x20   case 1: v = 5;\n\
         \x20   case 2: v += 7; break;\n\
         \x20   case 3: case 4: case 6: break;\n\
         \x20   default: v = 2;\n\
         \x20 }\n\
         \x20 out[i] = v;\n\
         }\n",
        "tail\n8 1 1\n8 1 1\n<size=32 uint>\n0 4 8 12 16 20 24 40\n<size=32 uint fill=0 dump>\n",
    );
    let stdout = Clflow::new().stdout(&["count", &sim]);
    assert!(
        stdout.contains("arg 1 (out) after the run: 1, 12, 16, 9, 9, 2, 9, 2"),
        "{stdout}"
    );
    let source = dir.path().join("tail.cl");
    let compiled = Clflow::new().json(&["compile", source.to_str().unwrap(), "--json"]);
    assert_eq!(compiled["fallback_used"], false, "{compiled}");
}
