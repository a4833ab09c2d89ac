//! `clflow check` end to end: a copy of vadd, changed on purpose, against a
//! baseline recorded from the original.

mod common;

use common::{repo, Clflow};

use std::path::PathBuf;
use std::process::Output;

const VADD: &str = "kernels/vadd";

/// The suite of the vadd workspace.
const VADD_SUITE: &str = "manifests = [\"k/*.toml\"]\nops = \"arith\"\n[rules]\nW = \"exact\"\n";

/// A suite over kernels in `k/` of a fresh directory.
struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    /// A suite over one copy of vadd.
    fn new() -> Self {
        let ws = Workspace::with_suite(VADD_SUITE);
        for file in ["vadd.cl", "vadd.toml"] {
            std::fs::copy(repo().join(VADD).join(file), ws.path("k").join(file)).unwrap();
        }
        ws
    }

    /// `suite` as suite.toml and an empty `k/` for its kernels.
    fn with_suite(suite: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("k")).unwrap();
        let ws = Workspace { dir };
        ws.write("suite.toml", suite);
        ws
    }

    fn write(&self, file: &str, text: &str) {
        std::fs::write(self.path(file), text).unwrap();
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn check(&self, extra: &[&str]) -> Output {
        let suite = self.path("suite.toml");
        let args = [&["check", suite.to_str().unwrap()], extra].concat();
        Clflow::new().store(&self.path("history.sqlite")).run(&args)
    }

    fn edit(&self, file: &str, from: &str, to: &str) {
        let path = self.path(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{file} lacks {from:?}");
        std::fs::write(&path, text.replace(from, to)).unwrap();
    }

    fn results(&self, name: &str, seconds: f64) -> String {
        let path = self.path(name);
        std::fs::write(
            &path,
            format!(
                r#"{{"schema": 1, "runs": [{{"kernel": "vadd", "device": "pthread-cpu",
                   "time": {{"value": {seconds}, "unit": "seconds", "provenance": "measured"}},
                   "power_peak": {{"value": 20.0, "unit": "watts", "provenance": "measured"}}}}]}}"#
            ),
        )
        .unwrap();
        path.display().to_string()
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The table row of a metric, split into cells.
fn row(table: &str, metric: &str) -> Option<Vec<String>> {
    table
        .lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .find(|cells| cells.get(1).map(String::as_str) == Some(metric))
}

fn recorded(ws: &Workspace) {
    let out = ws.check(&["--update"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(ws.path("baseline.json").exists());
}

#[test]
fn an_unchanged_kernel_passes_and_the_baseline_is_readable() {
    let ws = Workspace::new();
    recorded(&ws);
    let baseline = std::fs::read_to_string(ws.path("baseline.json")).unwrap();
    assert!(baseline.contains("\"W.fp32\": 4096"), "{baseline}");
    assert!(baseline.contains("\"Q.accessed\": 49152"), "{baseline}");
    let out = ws.check(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("no change\n"), "{text}");
    assert!(text.contains("1 kernels"), "{text}");
    assert!(text.contains("0 regressions"), "{text}");
}

#[test]
fn an_extra_operation_is_a_w_regression_with_its_rows_in_junit_and_markdown() {
    let ws = Workspace::new();
    recorded(&ws);
    ws.edit(
        "k/vadd.cl",
        "c[i] = a[i] + b[i];",
        "c[i] = a[i] + b[i] + 1.0f;",
    );
    let junit = ws.path("junit.xml");
    let markdown = ws.path("comment.md");
    let out = ws.check(&[
        "--junit",
        junit.to_str().unwrap(),
        "--markdown",
        markdown.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("check failed: "), "{}", stderr(&out));
    let table = stdout(&out);
    let fp32 = row(&table, "W.fp32").expect(&table);
    assert_eq!(fp32[2..5], ["4096", "8192", "+4096"], "{table}");
    assert_eq!(fp32.last().unwrap(), "REGRESSION");
    assert_eq!(
        row(&table, "ops.OpFAdd.float").unwrap()[2..4],
        ["4096", "8192"]
    );
    assert!(
        row(&table, "Q.accessed").is_none(),
        "Q did not change: {table}"
    );

    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let case = |name: &str| {
        doc.descendants()
            .find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some(name))
            .unwrap_or_else(|| panic!("no test case {name}: {xml}"))
    };
    let failure = case("W")
        .children()
        .find(|n| n.has_tag_name("failure"))
        .expect("W must fail");
    assert!(
        failure.text().unwrap().contains("W.fp32  4096  8192"),
        "{xml}"
    );
    assert_eq!(case("W").attribute("classname"), Some("k/vadd.toml"));
    assert!(!case("Q").children().any(|n| n.has_tag_name("failure")));
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    assert_eq!(suite.attribute("failures"), Some("2")); // W and ops; I is reported, not judged

    let comment = std::fs::read_to_string(&markdown).unwrap();
    assert!(comment.contains("❌ failed"), "{comment}");
    assert!(
        comment.contains("| k/vadd.toml | W.fp32 | 4096 | 8192 |"),
        "{comment}"
    );
}

#[test]
fn reading_an_extra_buffer_is_a_q_regression() {
    let ws = Workspace::new();
    recorded(&ws);
    ws.edit(
        "k/vadd.cl",
        "__global float *c,",
        "__global float *c,\n                   __global const float *d,",
    );
    ws.edit(
        "k/vadd.cl",
        "c[i] = a[i] + b[i];",
        "c[i] = a[i] + b[i] + d[i];",
    );
    ws.edit(
        "k/vadd.toml",
        "[[arg]]\nname = \"n\"",
        "[[arg]]\nname = \"d\"\ntype = \"float\"\ncount = 4096\nrange = [0.0, 1.0]\naccess = \"ro\"\n\n[[arg]]\nname = \"n\"",
    );
    let out = ws.check(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let table = stdout(&out);
    assert_eq!(
        row(&table, "Q.load").expect(&table)[2..4],
        ["32768", "49152"]
    );
    assert_eq!(row(&table, "Q.accessed").unwrap()[2..4], ["49152", "65536"]);
    assert_eq!(
        row(&table, "Q.accessed").unwrap().last().unwrap(),
        "REGRESSION"
    );
}

#[test]
fn improvements_are_reported_and_never_fail() {
    let ws = Workspace::new();
    ws.edit(
        "k/vadd.cl",
        "c[i] = a[i] + b[i];",
        "c[i] = a[i] + b[i] + 1.0f;",
    );
    recorded(&ws);
    ws.edit(
        "k/vadd.cl",
        "c[i] = a[i] + b[i] + 1.0f;",
        "c[i] = a[i] + b[i];",
    );
    let out = ws.check(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let table = stdout(&out);
    let fp32 = row(&table, "W.fp32").expect(&table);
    assert_eq!(fp32[2..4], ["8192", "4096"]);
    assert_eq!(fp32.last().unwrap(), "improvement");
    assert!(table.contains("0 regressions"), "{table}");
}

#[test]
fn a_slower_recorded_run_beyond_the_spread_is_a_t_regression() {
    let ws = Workspace::new();
    // Three recorded runs: median 1 ms, spread (CV) 2 %, so ±6 % by default.
    let runs = [
        ws.results("r1.json", 0.00098),
        ws.results("r2.json", 0.001),
        ws.results("r3.json", 0.00102),
    ];
    let mut update = vec!["--update", "--results"];
    update.extend(runs.iter().map(String::as_str));
    let out = ws.check(&update);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let baseline = std::fs::read_to_string(ws.path("baseline.json")).unwrap();
    assert!(baseline.contains("\"pthread-cpu\""), "{baseline}");

    let within = ws.results("within.json", 0.00105);
    let out = ws.check(&["--results", &within]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );

    let slow = ws.results("slow.json", 0.0012);
    let out = ws.check(&["--results", &slow]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let table = stdout(&out);
    let t = row(&table, "T@pthread-cpu").expect(&table);
    assert_eq!(t[2..4], ["0.001", "0.0012"], "{table}");
    assert!(
        t.contains(&"(3×".to_string()),
        "the rule comes from the spread: {table}"
    );
    assert_eq!(t.last().unwrap(), "REGRESSION");
    assert_eq!(
        row(&table, "F@pthread-cpu").unwrap().last().unwrap(),
        "REGRESSION"
    );
    assert_eq!(
        row(&table, "E@pthread-cpu").unwrap().last().unwrap(),
        "REGRESSION"
    );

    let fast = ws.results("fast.json", 0.0008);
    let out = ws.check(&["--results", &fast]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        row(&stdout(&out), "T@pthread-cpu").unwrap().last().unwrap(),
        "improvement"
    );

    // A count-only check ignores the timings, and an update keeps them.
    assert_eq!(ws.check(&[]).status.code(), Some(0));
    assert_eq!(ws.check(&["--update"]).status.code(), Some(0));
    let kept = std::fs::read_to_string(ws.path("baseline.json")).unwrap();
    assert!(kept.contains("\"pthread-cpu\""), "{kept}");
}

/// `c[i] = a[i]` over 4096 floats, in 64-item work-groups.
const GATHER_CL: &str =
    "__kernel void gather(__global const float *a, __global float *c, const uint n)
{
    const size_t i = get_global_id(0);
    c[i] = a[i];
}
";

const GATHER_TOML: &str = r#"source = "gather.cl"
kernel = "gather"
global_size = [4096]
local_size = [64]

[[arg]]
name = "a"
type = "float"
count = 4096
random = { min = -1.0, max = 1.0, seed = 1 }
access = "ro"

[[arg]]
name = "c"
type = "float"
count = 4096
access = "wo"

[[arg]]
name = "n"
type = "uint"
value = 4096
"#;

#[test]
fn a_strided_index_is_a_dram_and_coalescing_regression_through_the_suites_cache() {
    // The new index costs a few integer operations; this test is about the
    // traffic, so W and the histogram are left out.
    let ws = Workspace::with_suite(
        "manifests = [\"k/*.toml\"]\ncache = \"4KiB/64\"\nignore = [\"W\", \"ops\"]\n",
    );
    ws.write("k/gather.cl", GATHER_CL);
    ws.write("k/gather.toml", GATHER_TOML);
    recorded(&ws);
    let baseline = std::fs::read_to_string(ws.path("baseline.json")).unwrap();
    assert!(baseline.contains("\"cache\": \"4KiB/64\""), "{baseline}");
    // a read once and c written back once, 16 KiB each; every access coalesces.
    assert!(baseline.contains("\"Q.dram\": 32768"), "{baseline}");
    assert!(baseline.contains("\"Q.uncoalesced\": 0"), "{baseline}");

    // Neighbouring work-items now read 64 bytes apart: the same loads, the
    // same lines, but each of a's 256 lines is read 16 times, 256 lines
    // apart, which a 64-line LRU cache never holds.
    ws.edit("k/gather.cl", "c[i] = a[i];", "c[i] = a[(i * 16) % n];");
    let out = ws.check(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("check failed: "), "{}", stderr(&out));
    let table = stdout(&out);
    let dram = row(&table, "Q.dram").expect(&table);
    assert_eq!(dram[2..4], ["32768", "278528"], "{table}");
    assert_eq!(dram.last().unwrap(), "REGRESSION");
    let uncoalesced = row(&table, "Q.uncoalesced").expect(&table);
    assert_eq!(uncoalesced[2..4], ["0", "16384"], "{table}");
    assert_eq!(uncoalesced.last().unwrap(), "REGRESSION");
    assert_eq!(
        row(&table, "I.dram").map(|r| r.last().unwrap().clone()),
        Some("changed".to_string()),
        "{table}"
    );
    for unchanged in ["Q.load", "Q.store", "Q.accessed", "Q.compulsory"] {
        assert!(row(&table, unchanged).is_none(), "{unchanged}: {table}");
    }
}

#[test]
fn a_baseline_recorded_without_the_suites_cache_is_refused_until_updated() {
    let ws = Workspace::new();
    recorded(&ws);
    ws.write(
        "suite.toml",
        &VADD_SUITE.replace("ops = ", "cache = \"32KiB/64\"\nops = "),
    );
    let out = ws.check(&[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("cache = none; the suite asks for ops = \"arith\", line_bytes = 64, cache = \"32KiB/64\""),
        "{err}"
    );
    assert!(err.contains("--update"), "{err}");

    recorded(&ws);
    let baseline = std::fs::read_to_string(ws.path("baseline.json")).unwrap();
    assert!(baseline.contains("\"cache\": \"32KiB/64\""), "{baseline}");
    // a, b and c stream through once: 48 KiB, coalesced; I.dram is
    // W.total (4096 adds and 16384 integer ops) per 48 KiB.
    assert!(baseline.contains("\"W.total\": 20480"), "{baseline}");
    assert!(baseline.contains("\"Q.dram\": 49152"), "{baseline}");
    assert!(baseline.contains("\"Q.uncoalesced\": 0"), "{baseline}");
    assert!(
        baseline.contains(&format!("\"I.dram\": {}", 20480.0 / 49152.0)),
        "{baseline}"
    );
    let out = ws.check(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("no change\n"), "{}", stdout(&out));
}

#[test]
fn a_broken_suite_or_baseline_exits_2_naming_file_and_line() {
    let ws = Workspace::new();
    std::fs::write(
        ws.path("suite.toml"),
        "manifests = [\"k/*.toml\"]\n\n[rules]\nW = \"roughly\"\n",
    )
    .unwrap();
    let out = ws.check(&[]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("suite.toml:4: rules: `roughly` for `W` is not a tolerance"),
        "{err}"
    );

    let ws = Workspace::new();
    std::fs::write(
        ws.path("baseline.json"),
        "{\n  \"schema\": 1,\n  \"ops\": [\n",
    )
    .unwrap();
    let out = ws.check(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("baseline.json:4:"),
        "{}",
        stderr(&out)
    );

    // A builtin counted as its base operations is refused as `--ops` refuses
    // it, not recorded as W = 0.
    let ws = Workspace::new();
    ws.write("suite.toml", "manifests = [\"k/*.toml\"]\nops = \"fma\"\n");
    let out = ws.check(&["--update"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("suite.toml: ops: `fma` is counted as its base operations (OpFAdd, OpFMul)"),
        "{}",
        stderr(&out)
    );
    assert!(!ws.path("baseline.json").exists());

    let ws = Workspace::new();
    let out = ws.check(&[]);
    assert_eq!(out.status.code(), Some(2), "no baseline yet");
    assert!(stderr(&out).contains("--update"), "{}", stderr(&out));
}

#[test]
fn the_projects_own_suite_matches_its_baseline() {
    let out = Clflow::new().run(&[
        "-q",
        "check",
        "ci/check-suite.toml",
        "--baseline",
        "ci/baseline.json",
        "--no-history",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    // Every corpus manifest but the large lookup3 launches the suite
    // excludes (each as published and with rotate()).
    let manifests = std::fs::read_dir(repo().join("kernels"))
        .unwrap()
        .flat_map(|case| {
            std::fs::read_dir(case.unwrap().path())
                .into_iter()
                .flatten()
        })
        .map(|f| f.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .count();
    let counted = format!("{} kernels", manifests - 4);
    assert!(stdout(&out).contains(&counted), "{}", stdout(&out));
}

/// Timed for real on the OpenCL device that is always present: a kernel
/// made hundreds of times slower (its result unchanged) is caught as a T
/// regression on PoCL beside its W regression.
#[test]
fn a_kernel_made_slower_on_pocl_is_a_t_regression() {
    let ws = Workspace::new();
    let out = ws.check(&["--update", "--devices", "portable computing"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let baseline = std::fs::read_to_string(ws.path("baseline.json")).unwrap();
    assert!(baseline.contains("pthread"), "{baseline}");

    // 2,000 dependent integer steps per work-item whose outcome never
    // changes c: the same output, far more time.
    ws.edit(
        "k/vadd.cl",
        "c[i] = a[i] + b[i];",
        "{ uint x = (uint)i; for (uint k = 0; k < 2000u; ++k) x = x * 1664525u + 1013904223u;
           c[i] = a[i] + b[i] + (x == 7u && i == 0 ? 1.0f : 0.0f); }",
    );
    let out = ws.check(&["--devices", "portable computing"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let table = stdout(&out);
    // Columns are two or more spaces apart; the device's name has spaces.
    let t: Vec<&str> = table
        .lines()
        .find(|l| l.contains("  T@") && l.contains("pthread"))
        .unwrap_or_else(|| panic!("no T row on PoCL: {table}"))
        .split("  ")
        .map(str::trim)
        .filter(|cell| !cell.is_empty())
        .collect();
    assert_eq!(t.last(), Some(&"REGRESSION"), "{table}");
    let (old, new): (f64, f64) = (t[2].parse().unwrap(), t[3].parse().unwrap());
    assert!(new > 10.0 * old, "T went from {old} to {new}: {table}");
    assert_eq!(
        row(&table, "W.int").map(|r| r.last().unwrap().clone()),
        Some("REGRESSION".to_string()),
        "{table}"
    );
}
