//! Every command explains itself: `--help` has a description and examples.

mod common;

use common::Clflow;

#[test]
fn every_command_has_a_description_and_examples() {
    let top = Clflow::new().run(&["--help"]);
    let top = String::from_utf8_lossy(&top.stdout).into_owned();
    for command in [
        "compile", "count", "devices", "bench", "run", "analyze", "report", "check", "history",
        "split", "predict", "capture",
    ] {
        assert!(
            top.lines().any(|l| l.trim_start().starts_with(command)),
            "`clflow --help` does not list {command}:\n{top}"
        );
        let out = Clflow::new().run(&[command, "--help"]);
        assert_eq!(out.status.code(), Some(0), "{command}");
        let help = String::from_utf8_lossy(&out.stdout);
        let first = help.lines().next().unwrap_or_default();
        assert!(
            !first.is_empty() && !first.starts_with("Usage"),
            "{command} --help starts without a description:\n{help}"
        );
        assert!(
            help.contains("Examples:"),
            "{command} --help has no examples:\n{help}"
        );
        assert!(
            help.contains(&format!("clflow {command}")),
            "{command} --help's examples do not run it:\n{help}"
        );
    }
}

/// An empty device selector is a usage error naming the flag, on every
/// command that takes one, before any work.
#[test]
fn an_empty_device_selector_is_refused() {
    for args in [
        &["run", "kernels/vadd/vadd.toml", "--device", ""][..],
        &["bench", "--device", " "],
        &["predict", "kernels/vadd/vadd.toml", "--device", ""],
        &["history", "--device", ""],
    ] {
        let out = Clflow::new().run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("'--device <SEL>'") && stderr.contains("give a device index"),
            "{args:?}: {stderr}"
        );
    }
}
