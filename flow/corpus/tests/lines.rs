//! Source lines change no count: every corpus case counts the same with the
//! module's `OpLine`s and without them, and with them every operation and
//! byte belongs to one line (or to none), so the lines add up to the totals.

mod common;
use clflow_compile::Compiler;
use clflow_corpus::Case;
use clflow_interp::{OpSet, Program, RunOptions};
use common::checked_launch;

fn compiler(lines: bool, cache: &std::path::Path) -> Compiler {
    Compiler::discover()
        .expect("the compile toolchain (run ci/setup)")
        .with_cache_dir(Some(cache.to_path_buf()))
        .with_lines(lines)
}

#[test]
fn every_case_counts_the_same_with_and_without_lines() {
    let cache = tempfile::tempdir().unwrap();
    let (with, without) = (compiler(true, cache.path()), compiler(false, cache.path()));
    let sets: Vec<OpSet> = [
        "work",
        "arith",
        "add,xor,sub,shl,lshr,or,getelementptr,icmp,mul,and,div",
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect();
    for case in Case::ALL {
        let count = |compiler: &Compiler| {
            let (_, launch, module) = checked_launch(case, compiler);
            let program = Program::translate(&module, case.kernel()).unwrap();
            program
                .run(&launch, &RunOptions::default())
                .unwrap_or_else(|e| panic!("{case}: {e}"))
                .counts
        };
        let (lined, plain) = (count(&with), count(&without));
        assert!(plain.lines.is_empty(), "{case}: lines without line tables");
        assert!(
            lined.lines.iter().any(|l| l.line.is_some()),
            "{case}: no source line with line tables"
        );
        assert_eq!(lined.histogram, plain.histogram, "{case}: histogram");
        assert_eq!(lined.traffic, plain.traffic, "{case}: traffic");
        assert_eq!(
            (lined.lines_read, lined.lines_written, lined.steps),
            (plain.lines_read, plain.lines_written, plain.steps),
            "{case}: cache lines and steps"
        );
        for set in &sets {
            assert_eq!(lined.w(set), plain.w(set), "{case}: W ({set})");
            let per_line: u64 = lined.lines.iter().map(|l| l.w(set)).sum();
            assert_eq!(per_line, lined.w(set), "{case}: W ({set}) over its lines");
        }
        let mut q = clflow_interp::counts::SpaceBytes::default();
        for line in &lined.lines {
            q.scaled_add(&line.traffic, 1);
        }
        assert_eq!(q, lined.traffic, "{case}: traffic over its lines");
    }
}
