//! `clflow count` end to end: the binary on the corpus manifests.

use std::path::PathBuf;
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn clflow(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clflow"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("clflow runs")
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = clflow(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn vadd_json_has_exact_w_q_and_i() {
    let v = json(&["count", "kernels/vadd/vadd.toml", "--json", "--ops", "fp32"]);
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
    let v = json(&[
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
    let out = clflow(&["count", "kernels/triad/triad.toml"]);
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
    for unit in ["W (arith):", "ops", "Q accessed:", "bytes", "ops/byte"] {
        assert!(text.contains(unit), "{unit} missing in {text}");
    }
}

#[test]
fn dump_writes_the_output_buffers() {
    let dir = tempfile::tempdir().unwrap();
    let out = clflow(&[
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
    let out = clflow(&["count", "kernels/vadd/vadd.cl"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("clflow: error: kernels/vadd/vadd.cl: `clflow count` needs a manifest"),
        "{err}"
    );
    let out = clflow(&["count", "kernels/vadd/vadd.toml", "--ops", "frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown operation `frobnicate`"));
    let out = clflow(&["count", "kernels/vadd/vadd.toml", "--line-bytes", "48"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("power of two"));
}

#[test]
fn a_runaway_kernel_stops_at_max_steps() {
    let out = clflow(&["count", "kernels/lookup3/lookup3.toml", "--max-steps", "20"]);
    assert_eq!(out.status.code(), Some(2));
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
        let launch = manifest.materialize().unwrap_or_else(|e| panic!("{e}"));
        let request =
            clflow_compile::CompileRequest::new(&manifest.source, &manifest.build_options);
        let spirv = compiler.compile(&request).unwrap().spirv;
        let module = clflow_interp::load(&spirv).unwrap();
        let program = clflow_interp::Program::translate(&module, &launch.kernel).unwrap();
        let ours = program
            .run(&launch, &clflow_interp::RunOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let source =
            clflow_ocl::ProgramSource::from_file(&manifest.source, &manifest.build_options)
                .unwrap();
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
