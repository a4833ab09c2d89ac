//! `clflow capture` end to end: a small OpenCL application of our own,
//! unaware of clflow, runs under the capture layer on PoCL; every launch
//! becomes a manifest whose interpretation gives exactly the outputs the
//! device computed.

mod common;

use common::{clflow, repo, text, Clflow};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A host program of the capture layer's tests (`tests/hosts/NAME.c`), built.
fn host(dir: &Path, name: &str) -> PathBuf {
    host_linked(dir, name, &[])
}

/// [`host`], linked with `libraries` too.
fn host_linked(dir: &Path, name: &str, libraries: &[&str]) -> PathBuf {
    let source = repo().join(format!("flow/capture-layer/tests/hosts/{name}.c"));
    let app = dir.join(name);
    let out = Command::new("gcc")
        .args(["-O1", "-o"])
        .arg(&app)
        .arg(&source)
        .args(libraries)
        .arg("-lOpenCL")
        .output()
        .expect("gcc (ci/setup installs it)");
    assert!(out.status.success(), "{}", text(&out.stderr));
    app
}

/// `clflow capture --out DIR FLAGS... -- COMMAND...` in `data`: the
/// capture's directory and what the command did.
fn capture(data: &Path, flags: &[&str], command: &[&str]) -> (PathBuf, Output) {
    let out_dir = data.join("capture");
    let mut args = vec!["capture", "--out", out_dir.to_str().unwrap()];
    args.extend(flags);
    args.push("--");
    args.extend(command);
    let out = clflow(data, &args);
    (out_dir, out)
}

/// [`capture`] of the pipeline host with `app_args`.
fn capture_pipeline(data: &Path, flags: &[&str], app_args: &[&str]) -> (PathBuf, Output) {
    let app = host(data, "pipeline");
    let mut command = vec![app.to_str().unwrap()];
    command.extend(app_args);
    capture(data, flags, &command)
}

/// `clflow count DIR FLAGS... --json` of a capture, which must succeed.
fn count_json(data: &Path, dir: &Path, flags: &[&str]) -> serde_json::Value {
    let mut args = vec!["count", dir.to_str().unwrap(), "--json"];
    args.extend(flags);
    let counted = clflow(data, &args);
    assert_eq!(counted.status.code(), Some(0), "{}", text(&counted.stderr));
    serde_json::from_slice(&counted.stdout).unwrap()
}

/// [`capture`] of one of the capture layer's Python hosts
/// (`tests/hosts/NAME.py`) under Debian's python3.
fn capture_python(data: &Path, name: &str) -> (PathBuf, Output) {
    let script = repo().join(format!("flow/capture-layer/tests/hosts/{name}.py"));
    capture(data, &[], &["/usr/bin/python3", script.to_str().unwrap()])
}

/// The launches of [`count_json`] with `--ops fp32`, each of which must
/// reproduce the device's outputs.
fn launches_reproducing(data: &Path, dir: &Path) -> Vec<serde_json::Value> {
    let counted = count_json(data, dir, &["--ops", "fp32"]);
    let launches = counted["launches"].as_array().unwrap().clone();
    for launch in &launches {
        assert_eq!(launch["outputs_match"], true, "{launch}");
    }
    launches
}

/// The first launch of `kernel`.
fn launch_of<'a>(launches: &'a [serde_json::Value], kernel: &str) -> &'a serde_json::Value {
    launches
        .iter()
        .find(|l| l["kernel"] == kernel)
        .unwrap_or_else(|| panic!("no {kernel} among {launches:?}"))
}

/// The `file =` of argument `k` in a manifest.
fn arg_file(manifest: &Path, k: usize) -> String {
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(manifest).unwrap()).unwrap();
    manifest["arg"][k]["file"].as_str().unwrap().to_string()
}

fn layer_is_built() {
    // clflow's own search: cargo leaves the layer in deps/ when it was built
    // only as a dependency, as under `cargo test`.
    let bin = Path::new(env!("CARGO_BIN_EXE_clflow"));
    let dir = bin.parent().unwrap();
    let found = [dir.to_path_buf(), dir.join("deps")]
        .iter()
        .any(|d| d.join("libclflow_capture.so").is_file());
    assert!(
        found,
        "libclflow_capture.so is in neither {} nor its deps/: cargo test -p clflow builds it",
        dir.display()
    );
}

#[test]
fn every_launch_of_an_application_becomes_a_manifest_that_reproduces_its_outputs() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    let (out_dir, out) = capture_pipeline(data.path(), &[], &["2"]);
    let plain = Command::new(data.path().join("pipeline"))
        .arg("2")
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // The application is unharmed: the same result.
    assert_eq!(text(&out.stdout), text(&plain.stdout));
    assert!(text(&out.stdout).contains("2 iterations"));
    assert!(
        stderr.contains("captured 4 launches of 2 kernels"),
        "{stderr}"
    );

    let index: toml::Value =
        toml::from_str(&std::fs::read_to_string(out_dir.join("capture.toml")).unwrap()).unwrap();
    assert_eq!(index["exit_status"].as_integer(), Some(0));
    assert_eq!(index["complete"].as_bool(), Some(true));
    let launches = index["launch"].as_array().unwrap();
    let kernels: Vec<&str> = launches
        .iter()
        .map(|l| l["kernel"].as_str().unwrap())
        .collect();
    assert_eq!(kernels, ["square", "accumulate", "square", "accumulate"]);
    // square runs with a NULL local size, accumulate with 64.
    assert!(launches[0].get("local_size").is_none());
    assert_eq!(launches[1]["local_size"][0].as_integer(), Some(64));
    // The device, as its runtime names it, once, and by name per launch.
    let devices = index["device"].as_array().unwrap();
    assert_eq!(devices.len(), 1);
    assert_eq!(
        devices[0]["platform"].as_str(),
        Some("Portable Computing Language")
    );
    assert!(devices[0]["driver"]
        .as_str()
        .unwrap()
        .starts_with(char::is_numeric));
    for launch in launches {
        assert_eq!(launch["device"], devices[0]["name"]);
        assert!(launch["device_ns"].as_integer().unwrap() > 0, "{launch}");
        let manifest = out_dir.join(launch["manifest"].as_str().unwrap());
        let dump = data.path().join(format!("dump-{}", launch["sequence"]));
        let counted = clflow(
            data.path(),
            &[
                "count",
                manifest.to_str().unwrap(),
                "--json",
                "--dump",
                dump.to_str().unwrap(),
            ],
        );
        assert_eq!(counted.status.code(), Some(0), "{}", text(&counted.stderr));
        let report: serde_json::Value = serde_json::from_slice(&counted.stdout).unwrap();
        // 256 work-items: square 2 fp32 multiplies each, accumulate 2 adds.
        assert_eq!(report["W"]["fp32"], 512, "{manifest:?}");
        let names = if launch["kernel"].as_str() == Some("square") {
            ["in", "out"]
        } else {
            ["acc", "x"]
        };
        for expected in launch["expected"].as_array().unwrap() {
            let arg = expected["arg"].as_integer().unwrap() as usize;
            let device = std::fs::read(out_dir.join(expected["file"].as_str().unwrap())).unwrap();
            let interpreted = std::fs::read(dump.join(format!("{}.bin", names[arg]))).unwrap();
            assert_eq!(device, interpreted, "{manifest:?} arg {arg}");
        }
    }
    // The whole capture at once: every launch, with totals per kernel.
    let whole = clflow(data.path(), &["count", out_dir.to_str().unwrap(), "--json"]);
    assert_eq!(whole.status.code(), Some(0), "{}", text(&whole.stderr));
    let whole: serde_json::Value = serde_json::from_slice(&whole.stdout).unwrap();
    assert_eq!(whole["launches"].as_array().unwrap().len(), 4);
    assert!(whole["launches"]
        .as_array()
        .unwrap()
        .iter()
        .all(|l| l["outputs_match"] == true));
    let square = &whole["totals"]["per_kernel"]["square"];
    assert_eq!(square["launches"], 2);
    // Each square launch loads and stores 256 floats.
    assert_eq!(square["Q"]["load_bytes"], 2 * 1024);
    assert_eq!(square["Q"]["store_bytes"], 2 * 1024);
    assert_eq!(whole["totals"]["launches"], 4);
    assert_eq!(
        whole["totals"]["W"],
        whole["launches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["W"]["total"].as_u64().unwrap())
            .sum::<u64>()
    );

    // The second iteration's inputs are the first's outputs: the very same
    // file, since files are named by their contents.
    let first_out = launches[1]["expected"][0]["file"].as_str().unwrap();
    let second_in = arg_file(&out_dir.join("launch-000002.toml"), 0);
    assert_eq!(first_out, second_in);

    // A float a rounding apart from the interpreter's is within OpenCL's
    // latitude; one off by an exponent bit is a difference, said loudly.
    let first_out = out_dir.join(first_out);
    let right = std::fs::read(&first_out).unwrap();
    let mut rounded = right.clone();
    rounded[8] ^= 1;
    std::fs::write(&first_out, &rounded).unwrap();
    let close = clflow(data.path(), &["count", out_dir.to_str().unwrap()]);
    assert_eq!(close.status.code(), Some(0), "{}", text(&close.stderr));
    let mut wrong = right;
    wrong[11] ^= 0x01;
    std::fs::write(&first_out, wrong).unwrap();
    let differs = clflow(data.path(), &["count", out_dir.to_str().unwrap()]);
    assert_eq!(differs.status.code(), Some(1));
    let err = text(&differs.stderr);
    assert!(
        err.contains("launch-000001.toml (launch 1): arg 0 (")
            && err.contains(
                ") differs from the device's output at element 2: the interpreter computed "
            ),
        "{err}"
    );
    // That file is the input of launches 2 and 3 too (the square of the
    // sum, and the sum again), so they differ as well.
    assert!(
        err.contains("3 of 4 launches computed outputs different"),
        "{err}"
    );
    assert!(text(&differs.stdout).contains("DIFFER"));
}

#[test]
fn a_selection_takes_only_the_launches_it_names() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    // A first capture of every launch, which the second replaces whole.
    let (_, first) = capture_pipeline(data.path(), &[], &["3"]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let (out_dir, out) = capture_pipeline(
        data.path(),
        &["--kernel", "acc*", "--launches", "1-5"],
        &["3"],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("replacing the earlier capture in"),
        "{stderr}"
    );
    let manifests = std::fs::read_dir(&out_dir)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("launch-")
        })
        .count();
    assert_eq!(manifests, 2, "the first capture's manifests are gone");
    let index: toml::Value =
        toml::from_str(&std::fs::read_to_string(out_dir.join("capture.toml")).unwrap()).unwrap();
    let taken: Vec<(i64, i64)> = index["launch"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            assert_eq!(l["kernel"].as_str(), Some("accumulate"));
            (
                l["index"].as_integer().unwrap(),
                l["sequence"].as_integer().unwrap(),
            )
        })
        .collect();
    // accumulate's launches 1 and 2 of 0-2: the application's 4th and 6th.
    assert_eq!(taken, [(1, 3), (2, 5)]);
}

/// Rules per kernel: the last launch of one, the first of the other. Each
/// launch of `square` replaces the one before, files and all.
#[test]
fn rules_per_kernel_take_the_last_launch_and_the_first() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    let (out_dir, out) = capture_pipeline(
        data.path(),
        &["--launches", "square:last", "--launches", "first"],
        &["4"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let index: toml::Value =
        toml::from_str(&std::fs::read_to_string(out_dir.join("capture.toml")).unwrap()).unwrap();
    let taken: Vec<(String, i64, i64)> = index["launch"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["kernel"].as_str().unwrap().to_string(),
                l["index"].as_integer().unwrap(),
                l["sequence"].as_integer().unwrap(),
            )
        })
        .collect();
    // Launches alternate square, accumulate: square #3 is the 7th.
    assert_eq!(
        taken,
        [
            ("accumulate".to_string(), 0, 1),
            ("square".to_string(), 3, 6)
        ]
    );
    // Only the files the two records name are left.
    let raw = out_dir.join("raw");
    let mut named = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(&raw).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with("launch-") && name.ends_with(".json") {
            let record: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            for arg in record["args"].as_array().unwrap() {
                for key in ["file", "output_file"] {
                    if let Some(file) = arg[key].as_str() {
                        named.insert(file.to_string());
                    }
                }
            }
        }
    }
    let stored: std::collections::BTreeSet<String> = std::fs::read_dir(&raw)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with("buffer-"))
        .collect();
    assert_eq!(stored, named);
    let counted = count_json(data.path(), &out_dir, &[]);
    for launch in counted["launches"].as_array().unwrap() {
        assert_eq!(launch["outputs_match"], true, "{launch}");
    }
}

#[test]
fn bad_applications_and_selections_say_what_is_wrong() {
    let data = tempfile::tempdir().unwrap();
    let out_dir = data.path().join("capture");
    let out_flag = out_dir.to_str().unwrap();
    let missing = clflow(
        data.path(),
        &["capture", "--out", out_flag, "--", "/no/such/app"],
    );
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        text(&missing.stderr).contains("/no/such/app: cannot run it"),
        "{}",
        text(&missing.stderr)
    );
    let bad = clflow(
        data.path(),
        &[
            "capture",
            "--out",
            out_flag,
            "--launches",
            "5-1",
            "--",
            "true",
        ],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("--launches `5-1`: a range runs from low to high"));
    // An application that makes no OpenCL calls captures nothing, and says so.
    layer_is_built();
    // The application's status is capture's: nothing captured is a warning.
    let idle = clflow(data.path(), &["capture", "--out", out_flag, "--", "true"]);
    assert_eq!(idle.status.code(), Some(0));
    assert!(
        text(&idle.stderr).contains("launched no kernel the selection takes"),
        "{}",
        text(&idle.stderr)
    );
    // An application that fails: its status, and the capture kept.
    let failing = clflow(data.path(), &["capture", "--out", out_flag, "--", "false"]);
    assert_eq!(failing.status.code(), Some(1));
    let three = ["capture", "--out", out_flag, "--", "sh", "-c", "exit 3"];
    assert_eq!(clflow(data.path(), &three).status.code(), Some(3));
    assert!(text(&failing.stderr).contains("false exited with exit status: 1"));
    assert!(out_dir.join("capture.toml").is_file());
}

#[test]
fn a_pyopencl_script_is_captured_and_counted() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    let script = repo().join("flow/capture-layer/tests/hosts/axpy.py");
    // Debian's python3, which has pyopencl (ci/setup installs it).
    let (out_dir, out) = capture(
        data.path(),
        &[],
        &["/usr/bin/python3", script.to_str().unwrap()],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(text(&out.stdout).contains("axpy checksum 2998000.0"));
    let counted = count_json(data.path(), &out_dir, &[]);
    let launches = counted["launches"].as_array().unwrap();
    assert_eq!(launches.len(), 3);
    for launch in launches {
        assert_eq!(launch["kernel"], "axpy");
        // 1,000 work-items, one multiply and one add each.
        assert_eq!(launch["W"]["fp32"], 2000);
        assert_eq!(launch["Q"]["load_bytes"], 8000);
        assert_eq!(launch["Q"]["store_bytes"], 4000);
        assert_eq!(launch["outputs_match"], true);
    }
}

/// `blas_sgemm ARGS` (a 256×192×128 GEMM through CLBlast) captured into
/// `data` and counted for fp32: the capture's directory, the whole count,
/// the GEMM kernel's launch in it (there is one), and that launch counted
/// alone (`--json`, every op).
struct BlasGemm {
    out_dir: PathBuf,
    counted: serde_json::Value,
    gemm: serde_json::Value,
    alone: serde_json::Value,
}

const GEMM_SIZE: (u64, u64, u64) = (256, 192, 128);

fn capture_blas_gemm(data: &Path, args: &[&str]) -> BlasGemm {
    layer_is_built();
    let app = host_linked(data, "blas_sgemm", &["-lclblast"]);
    let mut command = vec![app.to_str().unwrap()];
    command.extend(args);
    let (out_dir, out) = capture(data, &[], &command);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("sgemm 256x192x128: checksum"),
        "{}",
        text(&out.stdout)
    );
    let counted = count_json(data, &out_dir, &["--ops", "fp32"]);
    let launches = counted["launches"].as_array().unwrap();
    assert!(!launches.is_empty());
    for launch in launches {
        assert_eq!(launch["outputs_match"], true, "{launch}");
    }
    let gemm: Vec<&serde_json::Value> = launches
        .iter()
        .filter(|l| l["kernel"].as_str().unwrap().contains("gemm"))
        .collect();
    assert_eq!(gemm.len(), 1, "{launches:?}");
    let gemm = gemm[0].clone();
    let manifest = out_dir.join(gemm["manifest"].as_str().unwrap());
    let alone = clflow(data, &["count", manifest.to_str().unwrap(), "--json"]);
    assert_eq!(alone.status.code(), Some(0), "{}", text(&alone.stderr));
    let alone = serde_json::from_slice(&alone.stdout).unwrap();
    BlasGemm { out_dir, counted, gemm, alone }
}

/// The route CLBlast's tuning picks for a small GEMM on this device (its
/// direct kernel on some): whichever it is, the GEMM kernel's multiply-adds
/// are m·n·k, as its source makes them.
#[test]
fn a_blas_librarys_own_gemm_route_counts_the_sources_multiply_adds() {
    let data = tempfile::tempdir().unwrap();
    let captured = capture_blas_gemm(data.path(), &[]);
    let (m, n, k) = GEMM_SIZE;
    assert_eq!(
        captured.alone["ops"]["mad"]["float"],
        m * n * k,
        "{}",
        captured.gemm["kernel"]
    );
}

/// A real library's own kernels, which the application never sees: CLBlast
/// (Debian's libclblast-dev, which ci/setup installs) picks, builds and
/// launches its GEMM kernel; the capture counts it and reproduces C. The
/// host asks for CLBlast's indirect GEMM (`--indirect`): which route a
/// small GEMM takes, and whether its helper kernels scale by alpha, is the
/// library's tuning for each device.
#[test]
fn a_blas_librarys_gemm_is_captured_and_counts_its_flops() {
    let data = tempfile::tempdir().unwrap();
    let BlasGemm { out_dir, counted, gemm, alone } =
        capture_blas_gemm(data.path(), &["--indirect"]);
    let launches = counted["launches"].as_array().unwrap();
    let (m, n, k) = GEMM_SIZE;
    // The product's multiply-adds are mnk (2mnk operations); the store of
    // each element of C multiplies it by alpha once, after a `beta == 0`
    // test that chooses not to read C (made once per element or once per
    // work-item, as the tuning's tile has it).
    let ops = &alone["ops"];
    assert_eq!(ops["mad"]["float"], m * n * k, "{ops}");
    assert_eq!(ops["OpFMul"]["float"], m * n, "{ops}");
    let tests = ops["OpFOrdEqual"]["float"].as_u64().unwrap();
    assert!(tests > 0 && tests <= m * n, "{ops}");
    let fp32 = gemm["W"]["fp32"].as_u64().unwrap();
    assert_eq!(fp32, 2 * m * n * k + m * n + tests);
    // Helper kernels (padding, transposes) scale each element by alpha at
    // most once, if at all.
    let total = counted["totals"]["W"].as_u64().unwrap();
    assert!(
        total >= fp32 && total - fp32 <= m * k + k * n + m * n,
        "{launches:?}"
    );
    // CLBlast's kernels through the compiled tier (compiled before each
    // launch starts): the same counts, and C reproduced again.
    let dir = out_dir.to_str().unwrap();
    let out = clflow(
        data.path(),
        &["count", dir, "--json", "--ops", "fp32", "--compile", "-v"],
    );
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let compiled: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(compiled["launches"], counted["launches"]);
    let ran: Vec<&str> = said
        .lines()
        .filter(|l| l.contains(" work-items in "))
        .collect();
    assert!(
        !ran.is_empty() && ran.iter().all(|l| l.starts_with("ran compiled:")),
        "{said}"
    );
    // Sampled, half of each launch's interior work-groups: the GEMM's tiles
    // all do the same work, so W comes out exact, its interval without
    // width; the outputs, partial, are not compared (and fail nothing).
    let sampled = count_json(data.path(), &out_dir, &["--ops", "fp32", "--sample", "50%"]);
    assert_eq!(sampled["totals"]["W"], total);
    for launch in sampled["launches"].as_array().unwrap() {
        let sample = &launch["sample"];
        assert_eq!(sample["W"]["low"], sample["W"]["high"], "{launch}");
        assert_eq!(launch["outputs_match"], false);
    }
    let text_out = clflow(
        data.path(),
        &["count", out_dir.to_str().unwrap(), "--sample", "50%"],
    );
    assert!(
        text(&text_out.stdout).contains("sampled "),
        "{}",
        text(&text_out.stdout)
    );
    // A, B and C hold repeating patterns: every buffer file pays to
    // compress, and was (count read them back above).
    let buffers: Vec<String> = std::fs::read_dir(out_dir.join("raw"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with("buffer-"))
        .collect();
    assert!(buffers.len() >= 4, "{buffers:?}");
    assert!(
        buffers.iter().all(|n| n.ends_with(".bin.gz")),
        "{buffers:?}"
    );
    // C is written once, element by element.
    assert_eq!(gemm["Q"]["store_bytes"], 4 * m * n);
}

/// clCompileProgram with a header given as a program of its own, then
/// clLinkProgram: the linked program's kernel is captured with its
/// inputs' sources, the helper's options, and the header where the source
/// includes it.
#[test]
fn a_linked_program_is_captured_with_its_header() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    let app = host(data.path(), "separate");
    let (out_dir, out) = capture(data.path(), &[], &[app.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("separate: checksum 6080.0"));
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(out_dir.join("launch-000000.toml")).unwrap())
            .unwrap();
    let source = manifest["source"].as_str().unwrap();
    assert!(
        source.starts_with("raw/program-") && source.ends_with(".cl"),
        "{source}"
    );
    assert_eq!(manifest["build_options"].as_str(), Some("-DOFFSET=0.5f"));
    let header = out_dir
        .join(source)
        .parent()
        .unwrap()
        .join("params/scale.h");
    assert_eq!(
        std::fs::read_to_string(header).unwrap(),
        "#define SCALE 3.0f\n"
    );
    let counted = count_json(data.path(), &out_dir, &["--ops", "fp32"]);
    let launch = &counted["launches"][0];
    assert_eq!(launch["kernel"], "apply");
    // 64 work-items, one multiply-add each (3x + 0.5).
    assert_eq!(launch["W"]["fp32"], 128);
    assert_eq!(launch["outputs_match"], true);
}

/// pyopencl's library kernels (reductions, an in-place scan, an elementwise
/// kernel): a buffer passed to two arguments at once stays one buffer
/// (`same_as`), so the in-place scan reproduces the device's outputs.
#[test]
fn a_librarys_in_place_kernels_keep_one_buffer_for_two_arguments() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    let (out_dir, out) = capture_python(data.path(), "arrays");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("sum 39985.0 max 16.0 dot 439825.0 scan 10000 line [1. 3. 5.]"),
        "{}",
        text(&out.stdout)
    );
    let launches = launches_reproducing(data.path(), &out_dir);
    for kernel in ["reduce_kernel_stage1", "scan_lev1", "scan_final_update"] {
        launch_of(&launches, kernel);
    }
    let lev2 = launch_of(&launches, "scan_lev2");
    let manifest =
        std::fs::read_to_string(out_dir.join(lev2["manifest"].as_str().unwrap())).unwrap();
    assert!(
        manifest.contains("same_as = 0") && manifest.contains("same_as = 2"),
        "{manifest}"
    );
    // 5,000 work-items of one multiply-add each, a float read and written.
    let line = launch_of(&launches, "line");
    assert_eq!(line["W"]["fp32"], 10_000);
    assert_eq!(line["Q"]["load_bytes"], 20_000);
    assert_eq!(line["Q"]["store_bytes"], 20_000);
}

/// The rest of a real BLAS library's level-1 and level-2 routines
/// (CLBlast's swap, scal, copy, had, nrm2, asum, sum, amax, gemv
/// transposed, symv, trmv, syr, syr2 and a transposing copy): every launch
/// reproduces the device's outputs.
#[test]
fn a_blas_librarys_other_routines_reproduce_the_device() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    let app = host_linked(data.path(), "blas_routines", &["-lclblast"]);
    let (out_dir, out) = capture(data.path(), &[], &[app.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(
            "blas routines at n 65536, m 256: nrm2 6.270646e+01, asum 2.978827e+04, \
             sum 6.255527e+03, amax at 32768"
        ),
        "{}",
        text(&out.stdout)
    );
    let launches = launches_reproducing(data.path(), &out_dir);
    let kernel = |name: &str| launch_of(&launches, name);
    let n = 65_536u64;
    // x = alpha x: a multiply a float, read and written.
    assert_eq!(kernel("XscalFast")["W"]["fp32"], n);
    assert_eq!(kernel("XscalFast")["Q"]["load_bytes"], 4 * n);
    assert_eq!(kernel("XscalFast")["Q"]["store_bytes"], 4 * n);
    // z = alpha x y + beta z: three multiplies and an add a float.
    assert_eq!(kernel("XhadFastest")["W"]["fp32"], 4 * n);
    // A swap reads and writes both vectors, and does no arithmetic.
    assert_eq!(kernel("XswapFast")["W"]["fp32"], 0);
    assert_eq!(kernel("XswapFast")["Q"]["load_bytes"], 8 * n);
    assert_eq!(kernel("XswapFast")["Q"]["store_bytes"], 8 * n);
    for name in [
        "XcopyFast",
        "Xnrm2",
        "Xasum",
        "Xamax",
        "Xgemv",
        "Xher",
        "Xher2",
    ] {
        kernel(name);
    }
}

/// More of pyopencl's generated kernels: math builtins (whose last bits a
/// device may round otherwise), a gather, its Philox generator, a stream
/// compaction and a float64 dot product, each reproducing the device.
#[test]
fn a_librarys_math_random_and_compaction_kernels_reproduce_the_device() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    let (out_dir, out) = capture_python(data.path(), "array_ops");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("uniform mean 0.5 kept 1176 dot 439825.0"),
        "{}",
        text(&out.stdout)
    );
    let launches = launches_reproducing(data.path(), &out_dir);
    let kernel = |name: &str| launch_of(&launches, name);
    // One builtin call a float.
    for name in ["exp_kernel", "sqrt_kernel", "sin_kernel"] {
        assert_eq!(kernel(name)["W"]["fp32"], 5_000, "{name}");
    }
    // take: an index and the value it picks read, the value written.
    assert_eq!(kernel("take")["Q"]["load_bytes"], 2 * 4 * 5_000);
    assert_eq!(kernel("take")["Q"]["store_bytes"], 4 * 5_000);
    kernel("rng_gen_philox4x32_uniform");
    kernel("scan_lev1");
}

#[test]
fn a_sub_buffer_is_captured_as_its_region_and_an_image_with_its_sampler() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    let app = host(data.path(), "regions");
    let (out_dir, out) = capture(data.path(), &[], &[app.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let floats = |name: &str| -> Vec<f32> {
        std::fs::read(out_dir.join(name))
            .unwrap()
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    // The sub-buffer is the upper half of 0..512, doubled by the launch.
    let index: toml::Value =
        toml::from_str(&std::fs::read_to_string(out_dir.join("capture.toml")).unwrap()).unwrap();
    let before = floats(&arg_file(&out_dir.join("launch-000000.toml"), 0));
    let after = floats(index["launch"][0]["expected"][0]["file"].as_str().unwrap());
    assert_eq!(before, (256..512).map(|i| i as f32).collect::<Vec<_>>());
    assert_eq!(
        after,
        (256..512).map(|i| 2.0 * i as f32).collect::<Vec<_>>()
    );
    // The image (16×1 R/FLOAT holding 0..16) and its sampler.
    assert_eq!(index["launch"].as_array().unwrap().len(), 2);
    assert!(index
        .get("not_analysable")
        .is_none_or(|n| n.as_array().unwrap().is_empty()));
    let sample: toml::Value =
        toml::from_str(&std::fs::read_to_string(out_dir.join("launch-000001.toml")).unwrap())
            .unwrap();
    let image = &sample["arg"][0];
    assert_eq!(image["type"].as_str(), Some("image2d"));
    assert_eq!(image["format"].as_str(), Some("R/FLOAT"));
    assert_eq!(image["shape"].as_array().unwrap().len(), 2);
    assert_eq!(image["access"].as_str(), Some("ro"));
    assert_eq!(
        floats(&arg_file(&out_dir.join("launch-000001.toml"), 0)),
        (0..16).map(|i| i as f32).collect::<Vec<_>>()
    );
    let sampler = &sample["arg"][1]["sampler"];
    assert_eq!(sampler["normalized"].as_bool(), Some(false));
    assert_eq!(sampler["address"].as_str(), Some("clamp_to_edge"));
    assert_eq!(sampler["filter"].as_str(), Some("nearest"));
    // Both launches counted on their inputs, the device's outputs matched.
    let counted = count_json(data.path(), &out_dir, &[]);
    for launch in counted["launches"].as_array().unwrap() {
        assert_eq!(launch["outputs_match"], true, "{launch}");
    }
}

#[test]
fn max_bytes_bounds_what_a_capture_writes_and_says_what_it_left_out() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    let (out_dir, out) = capture_pipeline(data.path(), &["--max-bytes", "5KiB"], &["2"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // Each launch may write 4 KiB (two 1 KiB buffers, before and after):
    // one fits in 5 KiB, the other three are passed through and listed.
    let index: toml::Value =
        toml::from_str(&std::fs::read_to_string(out_dir.join("capture.toml")).unwrap()).unwrap();
    assert_eq!(index["launch"].as_array().unwrap().len(), 1);
    let left_out = index["not_analysable"].as_array().unwrap();
    assert_eq!(left_out.len(), 3);
    assert_eq!(
        left_out[0].as_str().unwrap(),
        "accumulate #0 (launch 1): its 4096 bytes of buffers would take the capture past --max-bytes 5120"
    );
    let written: u64 = std::fs::read_dir(out_dir.join("raw"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().starts_with("buffer-"))
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert!(written <= 5 * 1024, "{written} bytes of buffers written");
}

/// A capture is a check suite of its launches: a baseline is taken, the
/// same counts pass, a count that moved fails.
#[test]
fn check_gates_a_capture_against_its_baseline() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    let (out_dir, out) = capture_pipeline(data.path(), &[], &["2"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let dir = out_dir.to_str().unwrap();
    let update = clflow(data.path(), &["check", dir, "--update", "--no-history"]);
    assert_eq!(update.status.code(), Some(0), "{}", text(&update.stderr));
    let baseline_path = out_dir.join("baseline.json");
    let mut baseline: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&baseline_path).unwrap()).unwrap();
    let kernels = baseline["kernels"].as_object().unwrap();
    let keys: Vec<&String> = kernels.keys().collect();
    assert_eq!(
        keys,
        [
            "launch-000000.toml",
            "launch-000001.toml",
            "launch-000002.toml",
            "launch-000003.toml"
        ]
    );
    // 256 work-items, two fp32 operations each, in every launch.
    for kernel in kernels.values() {
        assert_eq!(kernel["counts"]["W.fp32"], 512);
    }
    let same = clflow(data.path(), &["check", dir, "--no-history"]);
    assert_eq!(same.status.code(), Some(0), "{}", text(&same.stderr));
    assert!(
        text(&same.stdout).contains("4 kernels") && text(&same.stdout).contains("0 regressions"),
        "{}",
        text(&same.stdout)
    );
    baseline["kernels"]["launch-000001.toml"]["counts"]["W.fp32"] = 500.into();
    std::fs::write(&baseline_path, baseline.to_string()).unwrap();
    let moved = clflow(
        data.path(),
        &["check", &format!("{dir}/capture.toml"), "--no-history"],
    );
    assert_eq!(moved.status.code(), Some(1), "{}", text(&moved.stdout));
    assert!(text(&moved.stdout).contains("launch-000001.toml"));
}

#[test]
fn analyze_run_and_predict_take_a_capture_as_its_launches() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    common::with_quick_profile(data.path());
    let (out_dir, out) = capture_pipeline(data.path(), &[], &["2"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report = data.path().join("report");
    let analyzed = clflow(
        data.path(),
        &[
            "analyze",
            out_dir.to_str().unwrap(),
            "--device",
            "0",
            "--quick-bench",
            "--min-time",
            "0.01",
            "--no-history",
            "--out",
            report.to_str().unwrap(),
        ],
    );
    assert_eq!(
        analyzed.status.code(),
        Some(0),
        "{}",
        text(&analyzed.stderr)
    );
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("results.json")).unwrap())
            .unwrap();
    let kernels: Vec<&str> = results["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kernel"].as_str().unwrap())
        .collect();
    assert_eq!(
        kernels,
        [
            "square",
            "accumulate",
            "square (launch-000002)",
            "accumulate (launch-000003)"
        ]
    );
    assert_eq!(results["runs"].as_array().unwrap().len(), 4);
    assert!(report.join("index.html").is_file());
    // Each kernel over its two launches.
    let launches: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("launches.json")).unwrap())
            .unwrap();
    let square = launches
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kernel"] == "square")
        .unwrap();
    assert_eq!(square["launches"], 2);
    assert_eq!(square["Q"], 2 * 2048);
    assert_eq!(square["devices"][0]["launches"], 2);
    assert_eq!(
        square["runs"],
        serde_json::json!(["square", "square (launch-000002)"])
    );
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(html.contains("Kernels that matter"));
    assert!(html.contains("kernels take"), "{html}");
    // `clflow report` draws the section again from launches.json.
    let redrawn = data.path().join("redrawn");
    let again = clflow(
        data.path(),
        &[
            "report",
            report.join("results.json").to_str().unwrap(),
            "--out",
            redrawn.to_str().unwrap(),
        ],
    );
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    let html = std::fs::read_to_string(redrawn.join("index.html")).unwrap();
    assert!(html.contains("Kernels that matter"));
    // On a terminal: the kernels ranked, each launch, each kernel's finding
    // once (its longest launch's).
    let stdout = text(&analyzed.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("On ") && lines[0].contains(" of 2 kernels take "),
        "{stdout}"
    );
    assert!(
        lines[1].starts_with("KERNEL") && lines[1].contains("LAUNCHES"),
        "{stdout}"
    );
    let ranked: Vec<&str> = lines[2..4]
        .iter()
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert!(
        ranked.contains(&"square") && ranked.contains(&"accumulate"),
        "{stdout}"
    );
    assert!(stdout.contains("square (launch-000002)"), "{stdout}");
    let findings = lines.iter().filter(|l| l.contains("-bound")).count();
    assert_eq!(findings, 2, "{stdout}");

    // `run` times each launch in turn, and sums them per kernel.
    let run = |json: bool| {
        let mut args = vec!["run", out_dir.to_str().unwrap(), "--device", "0"];
        args.extend(["--min-time", "0.01", "--no-history"]);
        if json {
            args.push("--json");
        }
        let out = clflow(data.path(), &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        out.stdout
    };
    let runs: serde_json::Value = serde_json::from_slice(&run(true)).unwrap();
    let kernels: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["outputs"]["verdict"], "agree", "{r}");
            r["kernel"].as_str().unwrap()
        })
        .collect();
    assert_eq!(kernels, ["square", "accumulate", "square", "accumulate"]);
    let table = text(&run(false));
    assert!(
        table.contains("square                      2 launches  T "),
        "{table}"
    );
    assert!(table.contains("Application: 4 launches, T "), "{table}");
}

#[test]
fn a_crashing_application_leaves_the_launches_it_made() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    let (out_dir, out) = capture_pipeline(data.path(), &[], &["1", "crash"]);
    let stderr = text(&out.stderr);
    // As a shell says of a command SIGABRT killed: 128 + 6.
    assert_eq!(out.status.code(), Some(134), "{stderr}");
    assert!(
        stderr.contains("exited with signal: 6 (SIGABRT)"),
        "{stderr}"
    );
    assert!(stderr.contains("the capture holds the launches recorded before"));
    let index: toml::Value =
        toml::from_str(&std::fs::read_to_string(out_dir.join("capture.toml")).unwrap()).unwrap();
    assert_eq!(index["complete"].as_bool(), Some(false));
    assert!(index.get("exit_status").is_none());
    assert_eq!(index["launch"].as_array().unwrap().len(), 2);
    let counted = clflow(data.path(), &["count", out_dir.to_str().unwrap()]);
    assert_eq!(counted.status.code(), Some(0), "{}", text(&counted.stderr));
}

/// An array of structs, launched on two queues (one the application made
/// with profiling and reads itself, one without): each manifest names the
/// struct as the kernel's source does, and counts as the device computed.
#[test]
fn buffers_of_structs_are_captured_as_their_structs() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    let app = host(data.path(), "particles");
    let (out_dir, out) = capture(data.path(), &[], &[app.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // x goes i → i + 0.5 → i + 0.75 as the velocity halves; the
    // application's own profiling still works.
    assert!(
        text(&out.stdout)
            .contains("particles: 2 steps, sum of x 32832.000, 512 particle steps, timed yes"),
        "{}",
        text(&out.stdout)
    );
    let index: toml::Value =
        toml::from_str(&std::fs::read_to_string(out_dir.join("capture.toml")).unwrap()).unwrap();
    let launches = index["launch"].as_array().unwrap();
    let kernels: Vec<&str> = launches
        .iter()
        .map(|l| l["kernel"].as_str().unwrap())
        .collect();
    assert_eq!(kernels, ["advance", "damp", "advance", "damp"]);
    for launch in launches {
        // Both queues are timed, the one made without profiling too.
        assert!(launch["device_ns"].as_integer().unwrap() > 0, "{launch}");
        let manifest: toml::Value = toml::from_str(
            &std::fs::read_to_string(out_dir.join(launch["manifest"].as_str().unwrap())).unwrap(),
        )
        .unwrap();
        let particles = &manifest["arg"][0];
        // 256 particles of 48 bytes: float4 pos, float4 vel, uint steps, padding.
        let name = match launch["kernel"].as_str() {
            Some("advance") => "struct Particle",
            _ => "particle_t",
        };
        assert_eq!(particles["type"].as_str(), Some(name), "{manifest}");
        assert_eq!(particles["count"].as_integer(), Some(256), "{manifest}");
        let file = out_dir.join(particles["file"].as_str().unwrap());
        // Stored compressed where that pays; its data is the buffer.
        assert_eq!(
            clflow_manifest::data_file::read(&file).unwrap().len(),
            256 * 48
        );
    }

    let counted = count_json(data.path(), &out_dir, &["--ops", "arith"]);
    let launches = counted["launches"].as_array().unwrap();
    assert_eq!(launches.len(), 4);
    for launch in launches {
        assert_eq!(launch["outputs_match"], true, "{launch}");
        let (fp32, int, loaded, stored) = match launch["kernel"].as_str() {
            // pos += vel * dt: a mad of 4 lanes (8 operations); steps + 1
            // and the addresses of pos, vel and steps; it reads pos, vel
            // and steps (16 + 16 + 4 bytes) and writes pos and steps.
            Some("advance") => (256 * 8, 256 * 4, 256 * 36, 256 * 20),
            // vel *= factor: 4 multiplies and vel's address; vel read and
            // written.
            _ => (256 * 4, 256, 256 * 16, 256 * 16),
        };
        assert_eq!(launch["W"]["fp32"], fp32, "{launch}");
        assert_eq!(launch["W"]["int"], int, "{launch}");
        assert_eq!(launch["W"]["total"], fp32 + int, "{launch}");
        assert_eq!(launch["Q"]["load_bytes"], loaded, "{launch}");
        assert_eq!(launch["Q"]["store_bytes"], stored, "{launch}");
    }
    assert_eq!(counted["totals"]["per_kernel"]["advance"]["launches"], 2);
}

/// An application that writes the buffer it created CL_MEM_READ_ONLY (a
/// device forgives it): the capture keeps the flag, and `--detect access`
/// finds the write at its line in the captured source, for the 52 of 128
/// work-items whose value is negative.
#[test]
fn a_captured_write_to_a_read_only_buffer_is_found() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    let app = host_linked(data.path(), "readonly", &[]);
    let (out_dir, out) = capture(data.path(), &[], &[app.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Without the checker the launch counts as ever.
    count_json(data.path(), &out_dir, &[]);
    let counted = clflow(
        data.path(),
        &["count", out_dir.to_str().unwrap(), "--detect", "access"],
    );
    assert_eq!(counted.status.code(), Some(1), "{}", text(&counted.stderr));
    let stderr = text(&counted.stderr);
    assert!(
        stderr.contains("raw/program-0.cl:4:")
            && stderr.contains("write to read-only __global arg 0 (in)")
            && stderr.contains("(52 such accesses)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("clflow: error: 1 of 1 launches faulted"),
        "{stderr}"
    );
}

/// An application whose kernel reads a scratch buffer nobody wrote: the
/// capture marks it `noinit` (the host never wrote, filled or mapped it,
/// nor did an earlier launch), and `--detect uninit` finds the read's use
/// at its line for the 32 odd work-items; the same kernel on a buffer the
/// host filled first passes.
#[test]
fn a_captured_buffer_nobody_wrote_is_undefined_to_the_kernel() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    let app = host_linked(data.path(), "staged", &[]);
    let (out_dir, out) = capture(data.path(), &[], &[app.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let manifest =
        |n: u32| std::fs::read_to_string(out_dir.join(format!("launch-{n:06}.toml"))).unwrap();
    // `tmp`, and the output, which the first launch then writes.
    assert_eq!(
        manifest(0).matches("noinit = true").count(),
        2,
        "{}",
        manifest(0)
    );
    assert!(!manifest(1).contains("noinit"), "{}", manifest(1));
    // Without the checker both launches count, their outputs the device's.
    count_json(data.path(), &out_dir, &[]);
    let counted = clflow(
        data.path(),
        &["count", out_dir.to_str().unwrap(), "--detect", "uninit"],
    );
    assert_eq!(counted.status.code(), Some(1), "{}", text(&counted.stderr));
    let stderr = text(&counted.stderr);
    let faults: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("clflow: fault: "))
        .collect();
    // The division by the undefined value, and its result stored.
    assert_eq!(faults.len(), 2, "{stderr}");
    for fault in &faults {
        assert!(
            fault.contains("(launch 0)")
                && fault.contains("raw/program-0.cl:4:")
                && fault.contains("kernel `stage`, work-item (1,0,0)")
                && fault.contains("(32 such uses: (1,0,0), (3,0,0), (5,0,0), (7,0,0), …)"),
            "{stderr}"
        );
    }
    assert!(
        faults[0].contains("an uninitialised value divides"),
        "{stderr}"
    );
    assert!(
        faults[1].contains("an uninitialised value is stored to global memory"),
        "{stderr}"
    );
    assert!(
        stderr.contains("clflow: error: 1 of 2 launches faulted"),
        "{stderr}"
    );
}

/// What real applications do and OpenCL allows: filter weights in a buffer
/// the host may not read (`CL_MEM_HOST_NO_ACCESS`), an optional buffer left
/// out by a null `cl_mem` passed by value, a buffer of no whole number of
/// the kernel's `uint4`. Each launch is captured, counted and reproduces
/// the device. A launch whose data is lost is then reported on its own line
/// while the others are still counted, and the count fails at the end.
#[test]
fn host_no_access_memory_a_null_cl_mem_and_an_uneven_buffer_are_captured() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    let app = host(data.path(), "quirks");
    let (out_dir, out) = capture(data.path(), &[], &[app.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Weights summing to 1 keep the sum 8 x (0 + ... + 7); 0.5 x (0 + ... +
    // 63); the 12 bytes past the last whole uint4 are left alone; 64 x 255
    // - 3 x (0 + ... + 63).
    assert!(
        text(&out.stdout)
            .contains("quirks: blurred 224.00, offsets 1008.00, 12 bytes left, inverse 10272"),
        "{}",
        text(&out.stdout)
    );
    let sequence = |kernel: &str| {
        ["blur", "offset", "bzero4", "invert"]
            .iter()
            .position(|k| *k == kernel)
    };
    let manifest =
        |kernel: &str| out_dir.join(format!("launch-{:06}.toml", sequence(kernel).unwrap()));
    let read = |kernel: &str| -> toml::Value {
        toml::from_str(&std::fs::read_to_string(manifest(kernel)).unwrap()).unwrap()
    };
    assert_eq!(read("offset")["arg"][1]["null"].as_bool(), Some(true));
    assert_eq!(read("bzero4")["arg"][0]["type"].as_str(), Some("uchar"));

    let counted = count_json(data.path(), &out_dir, &["--ops", "all"]);
    let launches = counted["launches"].as_array().unwrap();
    let kernels: Vec<&str> = launches
        .iter()
        .map(|l| l["kernel"].as_str().unwrap())
        .collect();
    assert_eq!(kernels, ["blur", "offset", "bzero4", "invert"]);
    for launch in launches {
        assert_eq!(launch["status"], "counted", "{launch}");
        assert_eq!(launch["outputs_match"], true, "{launch}");
    }
    // blur: 64 work-items load 3 weights (__constant) and 3 inputs and store
    // one float; offset stores one float and loads no bias; bzero4 stores
    // 1,536 uint4.
    let q = |k: usize, what: &str| launches[k]["Q"][what].as_u64().unwrap();
    assert_eq!(q(0, "constant_load_bytes"), 64 * 3 * 4);
    assert_eq!(q(0, "load_bytes"), 64 * 6 * 4);
    assert_eq!(q(0, "store_bytes"), 64 * 4);
    assert_eq!((q(1, "load_bytes"), q(1, "store_bytes")), (0, 64 * 4));
    assert_eq!((q(2, "load_bytes"), q(2, "store_bytes")), (0, 24_576));

    // blur's input is lost: that launch alone is refused, saying why.
    let input = out_dir.join(arg_file(&manifest("blur"), 0));
    std::fs::remove_file(&input).unwrap();
    let damaged = clflow(
        data.path(),
        &["count", out_dir.to_str().unwrap(), "--json", "--ops", "all"],
    );
    let stderr = text(&damaged.stderr);
    assert_eq!(damaged.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("launch-000000.toml (launch 0, blur #0): ")
            && stderr.contains("1 of 4 launches could not be counted"),
        "{stderr}"
    );
    let counted: serde_json::Value = serde_json::from_slice(&damaged.stdout).unwrap();
    let launches = counted["launches"].as_array().unwrap();
    assert_eq!(launches[0]["status"], "refused");
    assert!(
        launches[0]["error"]
            .as_str()
            .unwrap()
            .contains("cannot be read"),
        "{}",
        launches[0]
    );
    assert!(launches[0].get("W").is_none());
    assert_eq!(launches[1]["status"], "counted");
    assert_eq!(launches[2]["status"], "counted");
    assert_eq!(launches[3]["status"], "counted");
    assert_eq!(counted["totals"]["launches"], 3);
    assert_eq!(counted["totals"]["Q"]["store_bytes"], 2 * 64 * 4 + 24_576);
}

/// Image writes past the edge of an NDRange rounded up, and reads outside
/// an image with no address mode: OpenCL leaves both undefined. The count
/// goes through them as PoCL does (writes dropped, reads (0,0,0,0)), so its
/// outputs equal the device's, reports each with its source line and
/// work-items, and does not fail; nor does a difference from the device
/// that a read of memory no work-item wrote explains.
#[test]
fn undefined_image_accesses_are_reported_and_the_count_goes_on() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    let app = host(data.path(), "edges");
    let (out_dir, out) = capture(data.path(), &[], &[app.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // 60 texels of (10, 20, 30, 40) + (x + y) each; 42 of 60 mask reads
    // inside, alpha 1.
    assert!(
        text(&out.stdout).contains("edges: padded 7680, blended 4200"),
        "{}",
        text(&out.stdout)
    );
    let counted = clflow(data.path(), &["count", out_dir.to_str().unwrap()]);
    let stderr = text(&counted.stderr);
    assert_eq!(counted.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "program-0.cl:3:3: kernel `pad`, work-item (0,6,0): OpImageWrite in `pad`: image write \
             at (0, 6) outside the 10×6 image, which OpenCL leaves undefined; dropped, as PoCL \
             does (68 work-items did so: (0,6,0), (0,7,0), (1,6,0), (1,7,0), …)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "program-0.cl:8:18: kernel `blend`, work-item (0,0,0): OpImageSampleExplicitLod"
        ) && stderr.contains(
            "image read at (-3, 0) outside the 10×6 image with no address mode \
             (CLK_ADDRESS_NONE), which OpenCL leaves undefined; read as (0,0,0,0), as PoCL does \
             (18 work-items did so"
        ),
        "{stderr}"
    );
    let counted = count_json(data.path(), &out_dir, &["--ops", "all"]);
    let launches = counted["launches"].as_array().unwrap();
    for launch in launches {
        assert_eq!(launch["status"], "counted", "{launch}");
        assert_eq!(launch["outputs_match"], true, "{launch}");
    }
    assert_eq!(launches[0]["faults"][0]["kind"], "undefined");
    assert_eq!(launches[1]["faults"][0]["kind"], "undefined");
    // pad: 128 work-items add 5 lanes each, 60 of them store a 4-byte
    // texel; blend: 60 work-items subtract the offset (2 lanes), index
    // (multiply, add), scale and convert, 42 texels read, 60 uints stored.
    let wq = |k: usize| {
        let l = &launches[k];
        (
            l["W"]["total"].as_u64().unwrap(),
            l["Q"]["load_bytes"].as_u64().unwrap(),
            l["Q"]["store_bytes"].as_u64().unwrap(),
        )
    };
    assert_eq!(wq(0), (640, 0, 60 * 4));
    assert_eq!(wq(1), (60 * 6, 42 * 4, 60 * 4));

    // `ridge` reads a local element no work-item wrote: the device's
    // answer there is whatever its local memory held. Where it differs
    // from the interpreter's (here: set so), a second run finds the bug,
    // and the difference is left to the device, not called wrong.
    let index: toml::Value =
        toml::from_str(&std::fs::read_to_string(out_dir.join("capture.toml")).unwrap()).unwrap();
    let expected = |kernel: &str| {
        let launch = index["launch"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["kernel"].as_str() == Some(kernel))
            .unwrap();
        out_dir.join(launch["expected"][0]["file"].as_str().unwrap())
    };
    let set_element = |file: &Path, at: usize, value: u32| {
        assert_eq!(file.extension().unwrap(), "bin", "{}", file.display());
        let mut bytes = std::fs::read(file).unwrap();
        bytes[4 * at..4 * at + 4].copy_from_slice(&value.to_le_bytes());
        std::fs::write(file, bytes).unwrap();
    };
    set_element(&expected("ridge"), 7, 999);
    let counted = clflow(data.path(), &["count", out_dir.to_str().unwrap()]);
    let stderr = text(&counted.stderr);
    assert_eq!(counted.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "(launch 2): arg 1 (out) differs from the device's output at element 7: the \
             interpreter computed 5, the device 999"
        ) && stderr
            .contains("the kernel's undefined behaviour (below) leaves the outputs to the device"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "program-0.cl:16:10: kernel `ridge`, work-item (7,0,0): OpStore in `ridge`: an \
             uninitialised value is stored to global memory (4 such uses"
        ),
        "{stderr}"
    );
}

/// An application with a kernel cache of its own makes its program from a
/// device binary, which holds no source: its launch is left out, saying
/// how to get it. `--from-source` refuses the binary as a device refuses
/// one that does not suit it; the application builds from source, and the
/// launch is captured and reproduces the device.
#[test]
fn from_source_makes_an_application_with_a_kernel_cache_build_from_source() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    let app = host(data.path(), "cached");
    let (_, out) = capture(data.path(), &[], &[app.to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("cache: loaded the binary"), "{stdout}");
    assert!(
        stderr.contains("created from a device binary")
            && stderr.contains("clflow capture --from-source"),
        "{stderr}"
    );

    let (out_dir, out) = capture(data.path(), &["--from-source"], &[app.to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // CL_INVALID_BINARY is -42.
    assert!(
        stdout.contains("cache: binary refused (-42), building from source")
            && stdout.contains("cache: sum of squares 10416"),
        "{stdout}"
    );
    assert!(
        stderr.contains("refused 1 program(s) from device binaries"),
        "{stderr}"
    );
    let counted = count_json(data.path(), &out_dir, &["--ops", "all"]);
    let launches = counted["launches"].as_array().unwrap();
    assert_eq!(launches.len(), 1);
    assert_eq!(launches[0]["outputs_match"], true, "{}", launches[0]);
    assert_eq!(launches[0]["Q"]["store_bytes"], 32 * 4);
}

/// An application that trusts its kernel cache (kept under XDG_CACHE_HOME,
/// else ~/.cache) gives up when the binary is refused. `--from-source`
/// runs it with an empty cache directory instead, so it builds from source
/// and its launch is captured; its own cache is left as it was.
#[test]
fn from_source_gives_an_application_that_trusts_its_cache_an_empty_one() {
    layer_is_built();
    let data = tempfile::tempdir().unwrap();
    let app = host(data.path(), "strict_cache");
    let home = data.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let cached = home.join(".cache/strict_cache/cube.bin");
    // As a user would run clflow: HOME theirs, no XDG_CACHE_HOME of its own.
    let run = |args: &[&str]| {
        Clflow::new()
            .dir(data.path())
            .data(data.path())
            .env("HOME", &home)
            .env_remove("XDG_CACHE_HOME")
            .run(args)
    };
    let out_dir = data.path().join("capture");
    let out_text = out_dir.to_str().unwrap();
    let app_text = app.to_str().unwrap();
    // 0 + 1 + 8 + ... + 15^3 = (15 * 16 / 2)^2.
    let first = run(&["capture", "--out", out_text, "--", app_text]);
    assert!(
        text(&first.stdout).contains("strict_cache: built from source, binary kept")
            && text(&first.stdout).contains("sum of cubes 14400"),
        "{}",
        text(&first.stdout)
    );
    assert!(cached.is_file());
    let kept = std::fs::read(&cached).unwrap();

    let second = run(&["capture", "--out", out_text, "--", app_text]);
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    assert!(text(&second.stdout).contains("loaded the cached binary"));
    assert!(
        text(&second.stderr).contains("created from a device binary"),
        "{}",
        text(&second.stderr)
    );

    let fresh = run(&[
        "capture",
        "--from-source",
        "--out",
        out_text,
        "--",
        app_text,
    ]);
    assert_eq!(fresh.status.code(), Some(0), "{}", text(&fresh.stderr));
    assert!(
        text(&fresh.stdout).contains("built from source, binary kept"),
        "{}",
        text(&fresh.stdout)
    );
    assert_eq!(std::fs::read(&cached).unwrap(), kept);
    let counted = count_json(data.path(), &out_dir, &["--ops", "all"]);
    let launches = counted["launches"].as_array().unwrap();
    assert_eq!(launches.len(), 1);
    assert_eq!(launches[0]["outputs_match"], true, "{}", launches[0]);
    // 16 work-items: two multiplies and an address each (--ops all), one
    // load and one store of a uint.
    assert_eq!(launches[0]["W"]["total"], 16 * 3);
    assert_eq!(launches[0]["Q"]["accessed"], 16 * 8);
}
