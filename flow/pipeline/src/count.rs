//! The count stage: translate → interpret → counts, with the interpreter's
//! failures turned into one line that names the manifest.

use crate::detect::{Checkers, Detect, Fault, Tee};
use crate::Error;
use crate::{Counts, Observer};
use clflow_core::Launch;
use clflow_counts::AccessSink;
use clflow_counts::{CountReport, OpSet, Summary};
use clflow_interp::{Engine, InterpError, Program, Progress, RunOptions, RunResult};
use clflow_metrics::{Figure, KernelCounts, Unit};
use clflow_spirv::Module;
use clflow_traffic::{CacheSpec, TrafficAnalysis, TrafficReport, TrafficSummary};
use std::borrow::Cow;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The `--ops` argument as an op set; a bad one is the user's to fix.
pub fn parse_ops(text: &str) -> crate::Result<OpSet> {
    parse_ops_in(text, "--ops")
}

/// An op set as every door takes it (the `--ops` flag, a check suite's
/// `ops`), `door` naming where it came from in the errors.
pub fn parse_ops_in(text: &str, door: &str) -> crate::Result<OpSet> {
    let set: OpSet = text
        .parse()
        .map_err(|e| Error::input(format!("{door}: {e}")))?;
    // A builtin W counts as its base operations never matches by name.
    for name in set.named() {
        if let Some(base) = clflow_interp::base_operations(name) {
            return Err(Error::input(format!(
                "{door}: `{name}` is counted as its base operations ({}), never by its own name",
                base.join(", ")
            ))
            .with_hint(format!(
                "select those ({}), or a class such as fp32",
                base.join(",")
            )));
        }
    }
    Ok(set)
}

/// What a count watches besides counting: the access stream through a
/// traffic analysis (cache simulations, coalescing), and the checkers
/// `detect` asks for (`--detect`).
#[derive(Default)]
pub struct Watch {
    pub traffic: Option<TrafficAnalysis>,
    pub detect: Detect,
}

impl Watch {
    /// The access stream through `analysis`.
    pub fn traffic(analysis: TrafficAnalysis) -> Watch {
        Watch { traffic: Some(analysis), ..Watch::default() }
    }

    /// The traffic through `cache` at its line size, where one is given
    /// ([`Interpreted::at_cache`] reads it).
    pub fn at_cache(cache: Option<CacheSpec>) -> Watch {
        let analysis = cache.map(|c| TrafficAnalysis::new(&[c.line_bytes]).probing(&[c]));
        Watch { traffic: analysis, ..Watch::default() }
    }

    /// With the checkers `detect` asks for watching too.
    pub fn detect(self, detect: Detect) -> Watch {
        Watch { detect, ..self }
    }
}

/// What a count found: the run, the traffic where it was watched (each
/// access site named by its SPIR-V instruction), and the faults: those
/// that stopped work-items first, then the checkers'.
pub struct Interpreted {
    pub run: RunResult,
    pub traffic: Option<TrafficReport>,
    pub faults: Vec<Fault>,
}

impl Interpreted {
    /// The run, its traffic report and faults, of a count that watched its
    /// traffic ([`Watch::traffic`]).
    pub fn traced(self) -> crate::Result<(RunResult, TrafficReport, Vec<Fault>)> {
        let report = self
            .traffic
            .ok_or_else(|| Error::analysis("the traced run reported no traffic"))?;
        Ok((self.run, report, self.faults))
    }

    /// The traffic through `cache`, of a count that watched it
    /// ([`Watch::at_cache`]).
    pub fn at_cache(&self, cache: Option<CacheSpec>) -> Option<TrafficSummary> {
        cache
            .zip(self.traffic.as_ref())
            .map(|(c, report)| report.summary(c))
    }
}

/// How often the count phase's progress is read.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// Interprets `launch` on the kernel it names, watching what `watch`
/// asks for. An owned launch gives its buffers to the interpreter (no copy
/// of inputs of hundreds of megabytes); a borrowed one is copied, for
/// callers that still need the inputs.
pub fn interpret(
    manifest: &Path,
    module: &Module,
    launch: Cow<'_, Launch>,
    options: &RunOptions,
    watch: Watch,
    observer: &dyn Observer,
) -> crate::Result<Interpreted> {
    let Watch { traffic: mut analysis, detect } = watch;
    let range = launch.range.clone();
    // `aggregates` is compiled into the program, `uninit` followed by the
    // interpreter, the rest watch the access stream.
    let program = Program::translate_checked(module, &launch.kernel, detect.aggregates)
        .map_err(|e| interp_failure(manifest, e))?;
    let mut checker = Checkers::new(detect, &launch, &program);
    observer.detail(format!(
        "translated `{}` into {} bytecode instructions",
        launch.kernel,
        program.len()
    ));
    let started = Instant::now();
    let phase = observer.phase("count", Counts::Steps);
    phase.set_message(&format!(
        "interpreting {} ({} work-items){}",
        launch.kernel,
        launch.range.work_items(),
        if analysis.is_some() {
            ", cache simulation"
        } else {
            ""
        }
    ));
    let progress = Arc::new(Progress::default());
    let options = RunOptions {
        progress: Some(progress.clone()),
        uninit: detect.uninit,
        ..options.clone()
    };
    let finished = AtomicBool::new(false);
    let result = std::thread::scope(|scope| {
        // The phase follows the work-groups finished, from a thread of its own.
        let watcher = scope.spawn(|| {
            let mut hinted = options.sample.is_some();
            while !finished.load(Ordering::Relaxed) {
                let (done, total) = (progress.done(), progress.total());
                phase.set_length(total);
                phase.set_position(done);
                if !hinted {
                    if let Some(hint) = long_count_hint(started.elapsed(), done, total) {
                        phase.suspend(&mut || observer.note(&hint));
                        hinted = true;
                    }
                }
                std::thread::park_timeout(PROGRESS_EVERY);
            }
        });
        let mut tee;
        let sink: Option<&mut dyn AccessSink> = match (analysis.as_mut(), checker.as_mut()) {
            (Some(keeper), Some(looker)) => {
                tee = Tee::new(keeper, looker);
                Some(&mut tee)
            }
            (Some(analysis), None) => Some(analysis),
            (None, Some(checker)) => Some(checker),
            (None, None) => None,
        };
        let result = match sink {
            None => program.run(launch, &options),
            Some(sink) => program.run_traced(launch, &options, sink),
        };
        // Woken, the watcher ends at once: a short count waits for no tick.
        finished.store(true, Ordering::Relaxed);
        watcher.thread().unpark();
        result
    });
    drop(phase);
    let result = result.map_err(|e| interp_failure(manifest, e))?;
    let report = analysis.map(|analysis| {
        let mut report = analysis.finish();
        report.describe_sites(|site| match program.location(site) {
            Some(at) => format!("{} at {at}", program.site(site)),
            None => program.site(site).to_string(),
        });
        report.locate_sites(|site| program.source_line(site).cloned());
        report
    });
    // The faults that stopped work-items first: the checkers' saw a run
    // without them.
    let mut faults: Vec<Fault> = result.faults.iter().map(Fault::stopped).collect();
    if let Some(checker) = checker {
        faults.extend(checker.faults(&range, result.counts.local_size, |site| {
            (program.site(site).to_string(), program.location(site))
        }));
    }
    let elapsed = started.elapsed().as_secs_f64();
    let how = match &result.engine {
        Engine::Compiled => "ran compiled".to_string(),
        Engine::Interpreted(why) => format!("interpreted ({why})"),
    };
    observer.detail(format!(
        "{how}: {} work-items in {elapsed:.3} s ({:.0} M instructions/s)",
        result.counts.work_items,
        result.counts.steps as f64 / elapsed.max(1e-9) / 1e6
    ));
    Ok(Interpreted { run: result, traffic: report, faults })
}

/// How long a count runs before it is judged by its rate.
const HINT_AFTER: Duration = Duration::from_secs(2);
/// A count expected to take longer than this is told how to sample.
const LONG_COUNT: Duration = Duration::from_secs(60);
/// What the hint's sample aims to take.
const SAMPLE_TIME: Duration = Duration::from_secs(10);

/// Once a count has run [`HINT_AFTER`] and, at its rate so far, will take
/// longer than [`LONG_COUNT`] in all: how long, and the sample that would
/// take about [`SAMPLE_TIME`] (a round fraction: 50%, 20%, 10%, 5%, ...).
fn long_count_hint(elapsed: Duration, done: u64, total: u64) -> Option<String> {
    if elapsed < HINT_AFTER || done == 0 || done >= total {
        return None;
    }
    let whole = elapsed.as_secs_f64() * total as f64 / done as f64;
    if whole < LONG_COUNT.as_secs_f64() {
        return None;
    }
    let wanted = SAMPLE_TIME.as_secs_f64() / whole;
    let percent = (0..6)
        .flat_map(|e| [50.0, 20.0, 10.0].map(|p| p / 10f64.powi(e)))
        .find(|p| p / 100.0 <= wanted)
        .unwrap_or(1e-4);
    let left = whole - elapsed.as_secs_f64();
    Some(format!(
        "count: this count will take about {} more ({} of {} work-groups in {:.0} s); \
         `clflow count --sample {percent}%` would count a uniform sample of the work-groups in \
         about {}, with a 95% confidence interval on W and Q",
        clflow_report::text::duration(left),
        clflow_counts::group_digits(done),
        clflow_counts::group_digits(total),
        elapsed.as_secs_f64(),
        clflow_report::text::duration(whole * percent / 100.0),
    ))
}

/// A kernel's lines for the report's source section, with the text of each
/// file they name as it reads now (a file that cannot be read is left out:
/// the section shows its lines without their text).
pub fn kernel_source(name: &str, report: &CountReport) -> clflow_report::source::KernelSource {
    let files = report
        .lines
        .iter()
        .filter_map(|l| l.file.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter_map(|file| Some((file.clone(), std::fs::read_to_string(&file).ok()?)))
        .collect();
    clflow_report::source::KernelSource {
        kernel: name.to_string(),
        work: report.w.total,
        traffic: report.q.accessed,
        lines: report.lines.clone(),
        files,
    }
}

/// The interpreter's error as a failure naming the manifest.
/// The interpreter's error, naming the manifest: first, or after a fault
/// that starts with its place in the source, as a compiler's would.
pub fn interp_failure(manifest: &Path, err: InterpError) -> Error {
    let mut failure = Error::from_diagnostic(&err);
    failure.message = match &err {
        InterpError::Trap(trap) if trap.location.is_some() => {
            format!("{err} (the launch of {})", manifest.display())
        }
        _ => format!("{}: {err}", manifest.display()),
    };
    failure
}

/// The metrics crate's record of what the interpreter counted: W over the op
/// set, compared with the integer or the float ceiling as
/// [`PerClass::ceiling`](clflow_counts::PerClass::ceiling) chooses; Q
/// accessed, and compulsory at the run's line size.
pub fn kernel_counts(name: &str, summary: &Summary) -> KernelCounts {
    let source = format!("clflow interpreter, op set {}", summary.op_set);
    KernelCounts {
        kernel: name.to_string(),
        ops: summary.mix.ceiling().into(),
        op_set: Some(summary.op_set.clone()),
        work: Figure::measured(summary.work as f64, Unit::Ops, &source),
        traffic_accessed: Figure::measured(
            summary.accessed as f64,
            Unit::Bytes,
            "clflow interpreter, every global and constant load and store",
        ),
        traffic_compulsory: Some(Figure::measured(
            summary.compulsory as f64,
            Unit::Bytes,
            format!(
                "clflow interpreter, each {}-byte line once (cold cache)",
                summary.line_bytes
            ),
        )),
        hotspots: Default::default(),
    }
}

#[cfg(test)]
mod op_set_tests {
    use super::*;

    /// A long count says so once it has a rate, with the sample that would
    /// take about ten seconds; a short one, or one too new to judge, does not.
    #[test]
    fn a_long_count_is_told_how_to_sample() {
        let secs = Duration::from_secs;
        // 1,000 of 100,000 groups in 4 s: 400 s in all, 396 s to go; 2%
        // takes 8 s.
        let hint = long_count_hint(secs(4), 1_000, 100_000).unwrap();
        assert_eq!(
            hint,
            "count: this count will take about 7 min more (1,000 of 100,000 work-groups in 4 s); \
             `clflow count --sample 2%` would count a uniform sample of the work-groups in about \
             8 s, with a 95% confidence interval on W and Q"
        );
        assert!(long_count_hint(secs(1), 10, 100_000).is_none());
        assert!(long_count_hint(secs(10), 50_000, 100_000).is_none());
        assert!(long_count_hint(secs(3), 0, 100_000).is_none());
        // Ten hours: a sample of 0.02%.
        let hint = long_count_hint(secs(36), 1, 1_000).unwrap();
        assert!(hint.contains("about 10.0 h more"), "{hint}");
        assert!(hint.contains("--sample 0.02%"), "{hint}");
    }

    /// `fma` and `mad` are counted as a multiply and an add: named alone
    /// they would select nothing, so the op set says how to select them.
    #[test]
    fn builtins_counted_as_base_operations_are_refused_by_name() {
        let error = parse_ops("fma").unwrap_err();
        assert_eq!(
            error.message,
            "--ops: `fma` is counted as its base operations (OpFAdd, OpFMul), never by its own name"
        );
        assert!(parse_ops("mad,add").is_err());
        assert!(parse_ops("sqrt,fadd,fp32").is_ok());
        assert!(parse_ops("rotate")
            .unwrap_err()
            .message
            .contains("OpShiftLeftLogical"));
    }
}
