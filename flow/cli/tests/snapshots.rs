//! What a user reads, pinned whole: the terminal tables, JSON documents,
//! help and errors of commands that need no device, against the files in
//! `tests/snapshots/`. A change to any of them shows as a diff to review;
//! `INSTA_UPDATE=always cargo test --test snapshots` writes the new ones.

mod common;

use common::{text, Clflow};

#[test]
fn count_prints_the_histogram_w_q_and_i() {
    insta::assert_snapshot!(Clflow::new().stdout(&["count", "kernels/vadd/vadd.toml"]));
}

#[test]
fn count_json_of_the_case_study() {
    insta::assert_snapshot!(Clflow::new().stdout(&[
        "count",
        "kernels/lookup3/lookup3.toml",
        "--json"
    ]));
}

#[test]
fn split_prints_perdome_bounds_on_two_datasheet_devices() {
    let args = [
        "split",
        "kernels/vadd/vadd.toml",
        "--devices",
        "xeon-phi-5110p,tesla-k20",
    ];
    insta::assert_snapshot!(Clflow::new().stdout(&args));
}

#[test]
fn count_help_teaches_by_example() {
    // Help wraps at the terminal's width, which COLUMNS says.
    let help = Clflow::new()
        .env("COLUMNS", "100")
        .stdout(&["count", "--help"]);
    insta::assert_snapshot!(help);
}

#[test]
fn a_refused_op_selection_is_one_line_with_a_hint() {
    let out = Clflow::new().run(&["count", "kernels/vadd/vadd.toml", "--ops", "fma"]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(text(&out.stderr));
}
