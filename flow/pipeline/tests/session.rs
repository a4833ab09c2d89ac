//! The pipeline as a library: a session over a recording observer runs
//! the count stage on a corpus kernel and says what it did, with no
//! terminal.

use clflow_interp::RunOptions;
use clflow_pipeline::count::{interpret, kernel_counts, Watch};
use clflow_pipeline::input::prepare_manifest;
use clflow_pipeline::{Recorder, Session};
use std::borrow::Cow;
use std::path::Path;

fn manifest(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

#[test]
fn a_session_counts_vadd_and_the_observer_hears_each_step() {
    let recorder = Recorder::default();
    let session = Session::new(&recorder);
    let path = manifest("kernels/vadd/vadd.toml");
    let (input, launch) = prepare_manifest(&path, "count", &session).unwrap();
    let result = interpret(
        &path,
        &input.module,
        Cow::Borrowed(&launch),
        &RunOptions::default(),
        Watch::default(),
        &recorder,
    )
    .unwrap()
    .run;
    let ops = "fp32".parse().unwrap();
    let summary = clflow_counts::Summary::of(&result.counts, &ops, &launch);
    // vadd: one float add per work-item over 4,096 items, three 16 KiB
    // buffers, two read and one written.
    assert_eq!(summary.work, 4096);
    assert_eq!(summary.mix.fp32, 4096);
    assert_eq!(summary.accessed, 49_152);
    assert_eq!(summary.host.to_device, 2 * 16_384);
    assert_eq!(summary.host.from_device, 16_384);
    let record = kernel_counts("vadd", &summary);
    assert_eq!(record.work.value, 4096.0);
    assert_eq!(record.ops, clflow_metrics::OpKind::Float);

    let events = recorder.events();
    let said = |prefix: &str| events.iter().any(|e| e.starts_with(prefix));
    assert!(said("Detail: manifest: "), "{events:#?}");
    assert!(said("Detail: manifest matches "), "{events:#?}");
    // Which ran it, the interpreter or (had the run lasted) the compiled
    // tier, and how many work-items.
    assert!(
        events
            .iter()
            .any(|e| (e.starts_with("Detail: interpreted (")
                || e.starts_with("Detail: ran compiled:"))
                && e.contains(": 4096 work-items in ")),
        "{events:#?}"
    );
    // The compiler was found once and reused: a second manifest adds no
    // second discovery, only its own compile.
    let again = session.tools().unwrap() as *const _;
    prepare_manifest(&manifest("kernels/triad/triad.toml"), "count", &session).unwrap();
    assert_eq!(session.tools().unwrap() as *const _, again);
}

#[test]
fn a_bad_manifest_is_an_input_error_naming_it() {
    let recorder = Recorder::default();
    let session = Session::new(&recorder);
    let Err(err) = prepare_manifest(Path::new("kernels/vadd/vadd.cl"), "count", &session) else {
        panic!("an OpenCL C file is not a manifest");
    };
    assert_eq!(err.kind, clflow_core::FailureKind::Input);
    assert_eq!(
        err.message,
        "kernels/vadd/vadd.cl: `clflow count` needs a manifest (.toml or .sim), which gives the kernel's inputs"
    );
    assert!(recorder.events().is_empty());
}
