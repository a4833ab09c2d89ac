//! `clflow split` end to end: PerDome bounds for the corpus kernels on
//! devices named by their datasheet profiles (no OpenCL device needed).

mod common;

use common::Clflow;

use std::path::Path;

/// `clflow` reading the datasheet profiles in `dir`, where given.
fn with_profiles(dir: Option<&Path>) -> Clflow {
    match dir {
        Some(dir) => Clflow::new().env("CLFLOW_DEVICES_DIR", dir),
        None => Clflow::new(),
    }
}

fn close(value: &serde_json::Value, expected: f64) -> bool {
    let value = value.as_f64().unwrap();
    (value / expected - 1.0).abs() < 1e-9
}

fn partition<'a>(v: &'a serde_json::Value, model: &str) -> &'a serde_json::Value {
    v["analysis"]["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["model"] == model)
        .unwrap_or_else(|| panic!("no {model} partition"))
}

#[test]
fn vadd_on_two_profiles_gives_the_roofline_sum_for_the_data_partition() {
    let v = Clflow::new().json(&[
        "split",
        "kernels/vadd/vadd.toml",
        "--devices",
        "xeon-phi-5110p,tesla-k20",
        "--ops",
        "fp32",
        "--no-transfers",
        "--json",
    ]);
    assert_eq!(v["ceiling"], "fp32");
    // The profiles' [measured] figures (the tool-flow paper's Table 1).
    assert_eq!(v["devices"][0]["compute"]["value"], 1189e9);
    assert_eq!(v["devices"][0]["compute"]["provenance"], "imported");
    assert_eq!(v["devices"][1]["bandwidth"]["value"], 143e9);
    // vadd: 4096 adds over 3 × 16 KiB: I = 1/12, memory bound on both.
    assert_eq!(v["kernels"][0]["work"]["ops"], 4096.0);
    assert_eq!(v["kernels"][0]["work"]["bytes"], 49152.0);
    assert_eq!(v["kernels"][0]["work"]["transfer"], 49152.0);
    assert!(close(&v["analysis"]["intensity"], 1.0 / 12.0));
    let p_c = 119e9 / 12.0;
    let p_g = 143e9 / 12.0;
    let c_only = partition(&v, "c_only");
    assert!(close(&c_only["bound"]["performance"], p_c));
    assert_eq!(c_only["i_g"], 0.0);
    assert!(close(&partition(&v, "g_only")["bound"]["performance"], p_g));
    let p_dp = partition(&v, "perfect_data_partition");
    assert!(close(&p_dp["bound"]["performance"], p_c + p_g));
    assert!(close(&p_dp["c_share"], p_c / (p_c + p_g)));
    assert!(close(
        &p_dp["bound"]["time_c"],
        p_dp["bound"]["time_g"].as_f64().unwrap()
    ));
    // One kernel: no code partition.
    assert_eq!(v["analysis"]["partitions"].as_array().unwrap().len(), 3);
}

#[test]
fn a_cpu_holds_the_data_and_a_card_pays_for_its_link() {
    let v = Clflow::new().json(&[
        "split",
        "kernels/vadd/vadd.toml",
        "--devices",
        "amd-epyc-7763,nvidia-a100-sxm",
        "--ops",
        "fp32",
        "--json",
    ]);
    assert_eq!(v["analysis"]["transfers"], "counted");
    assert_eq!(v["devices"][0]["holds_data"], true);
    assert_eq!(v["devices"][1]["link"]["value"], 32e9);
    // C: 48 KiB at 204.8 GB/s; G: 48 KiB at 2039 GB/s plus 48 KiB over 32 GB/s.
    let t_c = 49152.0 / 204.8e9;
    let t_g = 49152.0 / 2039e9 + 49152.0 / 32e9;
    assert!(close(&partition(&v, "c_only")["bound"]["time"], t_c));
    assert!(close(&partition(&v, "g_only")["bound"]["time"], t_g));
    let p_dp = partition(&v, "perfect_data_partition");
    assert!(close(&p_dp["bound"]["time"], t_c * t_g / (t_c + t_g)));
    assert!(close(&p_dp["c_share"], t_g / (t_c + t_g)));
    // With the link the CPU takes most of the data; without it, little.
    let paper = Clflow::new().json(&[
        "split",
        "kernels/vadd/vadd.toml",
        "--devices",
        "amd-epyc-7763,nvidia-a100-sxm",
        "--ops",
        "fp32",
        "--no-transfers",
        "--json",
    ]);
    let share = |v: &serde_json::Value| partition(v, "perfect_data_partition")["c_share"].as_f64();
    assert!(share(&v).unwrap() > 0.8);
    assert!(share(&paper).unwrap() < 0.1);
}

#[test]
fn two_kernels_give_code_partitions_a_table_and_the_perdome_plot() {
    let out_dir = tempfile::tempdir().unwrap();
    let out_path = out_dir.path().join("split");
    let args = [
        "split",
        "kernels/vadd/vadd.toml",
        "kernels/triad/triad.toml",
        "--devices",
        "xeon-phi-5110p,tesla-k20",
        "--ops",
        "fp32",
        "--no-transfers",
    ];
    let v = Clflow::new().json(&[&args[..], &["--json"]].concat());
    let code: Vec<&serde_json::Value> = v["analysis"]["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["model"] == "code_partition")
        .collect();
    assert_eq!(code.len(), 2);
    // vadd (I = 1/12) on one side, triad (8192 ops / 48 KiB = 1/6) on the other.
    let triad_on_g = code.iter().find(|p| p["on_g"][0] == "triad").unwrap();
    assert_eq!(triad_on_g["on_c"][0], "vadd");
    assert!(close(&triad_on_g["i_c"], 1.0 / 12.0));
    assert!(close(&triad_on_g["i_g"], 1.0 / 6.0));
    // Both memory bound: C streams vadd's 48 KiB at 119 GB/s, G triad's at 143.
    assert!(close(&triad_on_g["bound"]["time"], 49152.0 / 119e9));
    assert!(close(&v["analysis"]["intensity"], 12288.0 / 98304.0));

    let out = Clflow::new().run(&[&args[..], &["--out", out_path.to_str().unwrap()]].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("2 kernels as one application"), "{text}");
    assert!(text.contains("perfect data partition"));
    assert!(
        text.lines().any(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            cells.starts_with(&["code", "partition", "vadd", "triad", "33.33%"])
        }),
        "{text}"
    );
    assert!(text.contains("best: perfect data partition"));
    let svg = std::fs::read_to_string(out_path.join("perdome.svg")).unwrap();
    assert!(svg.contains("C: Intel Xeon Phi 5110P") && svg.contains("G: NVIDIA Tesla K20"));
    assert!(svg.contains("G: triad"), "code partitions are named");
    let png = std::fs::read(out_path.join("perdome.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
}

/// `clflow ARGS` with the datasheet profiles in `profiles` where given
/// (else the repository's): its exit status and its one-line error.
fn failure(args: &[&str], profiles: Option<&Path>) -> (i32, String) {
    let out = with_profiles(profiles).run(args);
    assert!(out.stdout.is_empty());
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn bad_device_lists_are_input_errors_that_say_what_to_name() {
    let (code, err) = failure(
        &["split", "kernels/vadd/vadd.toml", "--devices", "tesla-k20"],
        None,
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("--device tesla-k20: name exactly two devices, C then G"),
        "{err}"
    );
    let (code, err) = failure(
        &[
            "split",
            "kernels/vadd/vadd.toml",
            "--devices",
            "tesla-k20,no-such-board",
        ],
        None,
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("`no-such-board` is neither a datasheet profile nor an OpenCL device"),
        "{err}"
    );
    assert!(
        err.contains("xeon-phi-5110p"),
        "the hint lists profiles: {err}"
    );
}

#[test]
fn a_profile_without_the_needed_peak_is_named_with_what_to_add() {
    // lookup3 is integer work; the EPYC profile states no int32 peak.
    let (code, err) = failure(
        &[
            "split",
            "kernels/lookup3/lookup3.toml",
            "--devices",
            "amd-epyc-7763,tesla-k20",
        ],
        None,
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("device `AMD EPYC 7763`: no int32 peak figure"),
        "{err}"
    );
    assert!(err.contains("add it to the profile amd-epyc-7763"), "{err}");

    // A user profile can supply it: the device is explored from its file.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("my-cpu.toml"),
        "model = \"My CPU\"\nvendor = \"Me\"\ntype = \"cpu\"\nmatch = [\"My CPU\"]\n\n\
         [datasheet]\nint32_gops = { value = 100, source = \"guess\" }\n\
         memory_bandwidth_gbs = { value = 50, source = \"guess\" }\n",
    )
    .unwrap();
    let out = with_profiles(Some(dir.path())).run(&[
        "split",
        "kernels/lookup3/lookup3.toml",
        "--devices",
        "my-cpu,tesla-k20",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ceiling"], "int32");
    assert_eq!(v["devices"][0]["compute"]["value"], 100e9);
    assert_eq!(v["devices"][0]["compute"]["provenance"], "datasheet");
    assert_eq!(v["devices"][1]["compute"]["value"], 585e9);
}

#[test]
fn an_opencl_device_uses_its_stored_bench_profile() {
    let data = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| Clflow::new().data(data.path()).run(args);
    let split = [
        "split",
        "kernels/vadd/vadd.toml",
        "--devices",
        "0,tesla-k20",
        "--ops",
        "fp32",
        "--json",
    ];
    // PoCL's CPU matches no datasheet profile: it must be measured first.
    let out = run(&split);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no fp32 peak figure"), "{err}");
    assert!(err.contains("`clflow bench --device 0`"), "{err}");

    let bench = run(&["-q", "bench", "--device", "0", "--quick", "--json"]);
    assert!(
        bench.status.success(),
        "{}",
        String::from_utf8_lossy(&bench.stderr)
    );
    let out = run(&split);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &v["devices"][0];
    assert_eq!(c["class"], "cpu");
    assert_eq!(c["holds_data"], true);
    assert_eq!(c["compute"]["provenance"], "measured");
    assert!(c["compute"]["source"]
        .as_str()
        .unwrap()
        .starts_with("clflow bench fp32"));
    // The bound uses the stored bandwidth: vadd is memory bound at I = 1/12.
    let bandwidth = c["bandwidth"]["value"].as_f64().unwrap();
    assert!(close(
        &partition(&v, "c_only")["bound"]["performance"],
        bandwidth / 12.0
    ));
}
