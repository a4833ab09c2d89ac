//! `clflow compile` end to end: the binary, real kernels, the real toolchain.

mod common;

use common::{text, Clflow};
use std::path::PathBuf;
use std::process::Output;

struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new() -> Self {
        Case { dir: tempfile::tempdir().unwrap() }
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// `clflow <args>` with a private cache, run in the case's directory so
    /// that paths read as the user typed them.
    fn clflow(&self, args: &[&str]) -> Output {
        self.clflow_with(args, &[])
    }

    fn clflow_with(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let clflow = Clflow::new()
            .dir(self.dir.path())
            .env("CLFLOW_CACHE_DIR", self.dir.path().join("cache"));
        env.iter()
            .fold(clflow, |clflow, (key, value)| clflow.env(key, value))
            .run(args)
    }
}

const VADD: &str = "\
__kernel void vadd(__global const float *a, __global const float *b, __global float *c, uint n) {
  size_t i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
";

#[test]
fn summary_shows_signatures_version_size_and_cache() {
    let case = Case::new();
    case.write("vadd.cl", VADD);
    let first = case.clflow(&["compile", "vadd.cl"]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let stdout = text(&first.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "vadd.cl: 1 kernel");
    assert_eq!(
        lines[1],
        "  __kernel void vadd(__global const float* a, __global const float* b, __global float* c, uint n)"
    );
    assert!(
        lines.contains(&"SPIR-V       1.0 (LLVM/SPIR-V Translator 14)"),
        "{stdout}"
    );
    assert!(
        lines.contains(&"cache        miss (now cached)"),
        "{stdout}"
    );
    let size_line = lines.iter().find(|l| l.starts_with("size")).unwrap();
    let bytes: usize = size_line
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!(bytes > 20 && bytes.is_multiple_of(4), "{size_line}");

    let second = case.clflow(&["compile", "vadd.cl"]);
    assert!(text(&second.stdout)
        .lines()
        .any(|l| l == "cache        hit"));
}

#[test]
fn output_flag_writes_the_module() {
    let case = Case::new();
    case.write("vadd.cl", VADD);
    let run = case.clflow(&[
        "compile",
        "vadd.cl",
        "-o",
        "vadd.spv",
        "--build-options",
        "-D UNUSED=1 -cl-mad-enable",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert!(run.stdout.is_empty(), "-o without --json prints no summary");
    let module = std::fs::read(case.dir.path().join("vadd.spv")).unwrap();
    assert_eq!(&module[..4], &[0x03, 0x02, 0x23, 0x07]);
    assert_eq!(module.len() % 4, 0);
    assert!(text(&run.stderr).contains(&format!("wrote vadd.spv ({} bytes)", module.len())));
}

#[test]
fn json_summary_parses() {
    let case = Case::new();
    case.write("vadd.cl", VADD);
    let run = case.clflow(&["compile", "vadd.cl", "--json", "--no-cache"]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let json: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(json["source"], "vadd.cl");
    assert_eq!(json["module"]["spirv_version"], "1.0");
    assert_eq!(json["cache"]["used"], false);
    assert_eq!(json["fallback_used"], false);
    let kernel = &json["kernels"][0];
    assert_eq!(kernel["name"], "vadd");
    assert_eq!(kernel["params"].as_array().unwrap().len(), 4);
    assert_eq!(kernel["params"][0]["name"], "a");
    assert_eq!(kernel["params"][0]["kind"]["kind"], "pointer");
    assert_eq!(kernel["params"][0]["kind"]["space"], "global");
    assert_eq!(kernel["params"][3]["kind"]["ty"]["scalar"], "uint");
    assert_eq!(kernel["source_types"][0], "const float*");
    assert_eq!(
        json["module"]["size_bytes"].as_u64().unwrap() % 4,
        0,
        "size is whole words"
    );
}

#[test]
fn syntax_error_exits_2_naming_file_and_line() {
    let case = Case::new();
    case.write(
        "broken.cl",
        "__kernel void k(__global int *a) {\n  a[0] = 1\n}\n",
    );
    let run = case.clflow(&["compile", "broken.cl"]);
    assert_eq!(run.status.code(), Some(2));
    let stderr = text(&run.stderr);
    assert!(
        stderr.starts_with("broken.cl:2:11: error: expected ';' after expression"),
        "{stderr}"
    );
    assert!(
        stderr.contains("clflow: error: broken.cl:2:11: error: expected ';' after expression\n"),
        "{stderr}"
    );
    assert!(run.stdout.is_empty());
}

#[test]
fn missing_file_exits_2_with_one_line() {
    let case = Case::new();
    let run = case.clflow(&["compile", "missing.cl"]);
    assert_eq!(run.status.code(), Some(2));
    assert_eq!(
        text(&run.stderr),
        "clflow: error: cannot read kernel source `missing.cl`: No such file or directory\n"
    );
}

#[test]
fn bad_build_option_exits_2() {
    let case = Case::new();
    case.write("vadd.cl", VADD);
    let run = case.clflow(&["compile", "vadd.cl", "--build-options", "-O3"]);
    assert_eq!(run.status.code(), Some(2));
    assert!(text(&run.stderr).starts_with(
        "clflow: error: build option `-O3`: not an OpenCL build option clflow passes on to clang\n"
    ));
}

#[test]
fn missing_tool_names_tool_variable_and_setup() {
    let case = Case::new();
    case.write("vadd.cl", VADD);
    let run = case.clflow_with(
        &["compile", "vadd.cl"],
        &[("CLFLOW_CLANG", "/nonexistent/clang-15")],
    );
    assert_eq!(run.status.code(), Some(1));
    let stderr = text(&run.stderr);
    assert!(stderr.starts_with(
        "clflow: error: clang-15 not found (looked for `/nonexistent/clang-15` on PATH; set CLFLOW_CLANG to its path)\n"
    ));
    assert!(stderr.contains("run ci/setup (installs clang-15 llvm-spirv-15 llvm-15 spirv-tools)"));
}

#[test]
fn verbose_shows_commands_and_the_fallback() {
    let case = Case::new();
    case.write(
        "switch.cl",
        "__kernel void pick(__global uint *out) {
           uint v;
           switch (get_global_id(0) & 3) { case 0: v = 1; break; case 1: v = 7; break; case 2: v = 9; break; default: v = 4; }
           out[get_global_id(0)] = v;
         }",
    );
    let run = case.clflow(&["compile", "switch.cl", "-v"]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let stderr = text(&run.stderr);
    assert!(
        stderr.contains("-O1 -Xclang -disable-llvm-passes"),
        "{stderr}"
    );
    assert!(
        stderr.contains("built through the fallback, unoptimised clang and opt-15"),
        "{stderr}"
    );
    assert!(text(&run.stdout)
        .lines()
        .any(|l| l == "build        unoptimised clang + opt-15 fallback"));
}

#[test]
fn help_teaches_by_example() {
    let run = Clflow::new().run(&["compile", "--help"]);
    assert_eq!(run.status.code(), Some(0));
    let help = text(&run.stdout);
    assert!(help.contains("Examples:"), "{help}");
    assert!(
        help.contains("--build-options \"-D TILE=16 -cl-mad-enable\" -o sgemm.spv"),
        "{help}"
    );
}

const VADD_MANIFEST: &str = "\
source = \"vadd.cl\"
kernel = \"vadd\"
global_size = [16]
[[arg]]
name = \"a\"
type = \"float\"
range = [0.0, 1.0]
count = 16
access = \"ro\"
[[arg]]
type = \"float\"
fill = 2.0
count = 16
access = \"ro\"
[[arg]]
type = \"float\"
count = 16
access = \"wo\"
";

#[test]
fn a_manifest_is_compiled_and_checked_against_the_kernel() {
    let case = Case::new();
    case.write("vadd.cl", VADD);
    let good = format!("{VADD_MANIFEST}[[arg]]\ntype = \"uint\"\nvalue = 16\n");
    case.write("vadd.toml", &good);
    let out = case.clflow(&["compile", "vadd.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("vadd.cl: 1 kernel"));
    assert!(
        text(&out.stderr).contains("launches `vadd` over 16 work-items; its 4 arguments match"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_manifest_that_does_not_fit_the_kernel_is_an_input_error_naming_the_line() {
    let case = Case::new();
    case.write("vadd.cl", VADD);
    // Three [[arg]] entries for a kernel of four parameters.
    case.write("short.toml", VADD_MANIFEST);
    let out = case.clflow(&["compile", "short.toml"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("short.toml:")
            && stderr.contains("kernel `vadd` takes 4 parameters, the manifest gives 3"),
        "{stderr}"
    );

    // A float where the kernel takes a uint by value.
    let wrong = format!("{VADD_MANIFEST}[[arg]]\ntype = \"float\"\nvalue = 16.0\n");
    case.write("wrong.toml", &wrong);
    let out = case.clflow(&["compile", "wrong.toml"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("wrong.toml:19: arg 3 (n): the kernel declares `uint n`"),
        "{stderr}"
    );

    // A kernel name the source does not define.
    case.write("other.toml", &good_with_kernel("vsub"));
    let out = case.clflow(&["compile", "other.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("kernel `vsub` is not in vadd.cl (it has: vadd)"),
        "{}",
        text(&out.stderr)
    );
}

fn good_with_kernel(kernel: &str) -> String {
    format!("{VADD_MANIFEST}[[arg]]\ntype = \"uint\"\nvalue = 16\n")
        .replace("kernel = \"vadd\"", &format!("kernel = \"{kernel}\""))
}

/// A SPIR-V module is a kernel source like any other: compiled to itself,
/// and counted from a manifest that names it.
#[test]
fn a_spirv_module_is_taken_as_the_kernel() {
    let case = Case::new();
    case.write("vadd.cl", VADD);
    let built = case.clflow(&["compile", "vadd.cl", "-o", "vadd.spv"]);
    assert_eq!(built.status.code(), Some(0), "{}", text(&built.stderr));
    let summary = case.clflow(&["compile", "vadd.spv"]);
    assert_eq!(summary.status.code(), Some(0), "{}", text(&summary.stderr));
    let stdout = text(&summary.stdout);
    assert!(stdout.starts_with("vadd.spv: 1 kernel"), "{stdout}");
    assert!(stdout.contains("build        none: the file is a SPIR-V module, taken as it is"));
    case.write(
        "vadd.toml",
        "source = \"vadd.spv\"\nkernel = \"vadd\"\nglobal_size = [64]\n\
         [[arg]]\ntype = \"float\"\ncount = 64\nfill = 1.5\n\
         [[arg]]\ntype = \"float\"\ncount = 64\nfill = 2.0\n\
         [[arg]]\ntype = \"float\"\ncount = 64\naccess = \"wo\"\n\
         [[arg]]\ntype = \"uint\"\nvalue = 64\n",
    );
    let counted = case.clflow(&["count", "vadd.toml", "--json"]);
    assert_eq!(counted.status.code(), Some(0), "{}", text(&counted.stderr));
    let report: serde_json::Value = serde_json::from_slice(&counted.stdout).unwrap();
    assert_eq!(report["W"]["fp32"], 64);
    assert_eq!(report["Q"]["load_bytes"], 512);
    assert_eq!(report["Q"]["store_bytes"], 256);
}
