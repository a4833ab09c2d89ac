//! `clflow count`: interpret the kernel on the manifest's NDRange and
//! inputs, and report operations W, memory traffic Q and intensity I.

use crate::failure::Failure;
use crate::output::{print_json, print_kernel_output, Verbosity};
use clap::Args;
use clflow_interp::counts::render_lines;
use clflow_interp::{OpSet, RunOptions, Sample, SampleReport, SampleSize, Tier};
use clflow_pipeline::capture;
use clflow_pipeline::count::{interpret, Watch};
use clflow_pipeline::detect::{self, Detect, Fault};
use clflow_pipeline::input::prepare_manifest;
use clflow_pipeline::traffic::{line_caches, parse_cache, render_text};
use clflow_pipeline::{Level, Observer, Session};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

const EXAMPLES: &str = "\
Examples:
  clflow count kernels/vadd/vadd.toml
      the Oclgrind-like histogram, then W, Q and I
  clflow count kernels/lookup3/lookup3.toml --ops add,xor,sub,shl,lshr,or,getelementptr,icmp,mul,and,div
      W over the paper's selection of operations (LLVM names are accepted)
  clflow count kernels/vadd/vadd.toml --ops work
      W of the algorithm's operations alone: 4,096 adds, not arith's index and bound ops
  clflow count kernels/sgemm/sgemm.toml --ops fp32 --json
      machine-readable: kernel, work_items, ops, W, W_by_role, Q, I, and per source line
  clflow count kernels/lookup3/lookup3.toml --lines
      the kernel's source with W, bytes loaded and stored and share of Q beside each
      line, the hottest lines first
  clflow count kernels/vadd/vadd.toml --detect access
      also watch for writes to read-only buffers and reads of write-only ones (each one
      reported with its source line; exit 1 where any is found)
  clflow count kernels/reduction/reduction.toml --detect all
      every checker: data races in __local and __global memory too, each reported with
      both accesses' work-items and source lines
  clflow count kernels/triad/triad.toml --line-bytes 128 --dump out/
      compulsory traffic at 128-byte lines; output buffers written to out/
  clflow count kernels/sgemm/sgemm.toml --cache 40MiB/128
      DRAM traffic through a 40 MiB cache of 128-byte lines, Q against the cache
      size, and how each load and store coalesces
  clflow count kernels/spmv/spmv.toml --cache nvidia-h100-sxm
      the same through an H100's L2 (its datasheet profile: 50 MiB, 32-byte sectors)
  clflow count kernels/lookup3/lookup3.toml --simd
      also how the work-items fill vectors of 8 to 64 lanes: lookup3's keys of random
      lengths leave about half of each 16-lane vector idle
  clflow count kernels/lookup3/lookup3-paper.toml --sample 2%
      2% of 8M keys' work-groups, chosen at random: W and Q extrapolated, each with its
      95% confidence interval (a count that will take long suggests this)
  clflow count captures/app
      every launch `clflow capture` recorded, each checked against the device's outputs,
      with totals per kernel and for the application

Op sets: work (default: every float operation and the integer operations whose role is the
algorithm's, not index arithmetic, loop counters or bound tests, and atomic updates such as a
histogram's increments), arith (int + fp32 + fp64 +
fp16, all arithmetic), int, fp32, fp64, fp16, or a comma list of classes, SPIR-V opcodes
(OpIAdd), OpenCL builtins (sqrt) and LLVM names (add, icmp, getelementptr). FMA and mad
count 2; vector operations count one per lane.

--cache runs the kernel's global accesses, work-group by work-group, through a fully
associative LRU cache (write-back, no read on a store miss): Q DRAM lies between the
compulsory traffic (each line once) and, for a tiny cache, the line-granular traffic of every
access. Sizes take B, KiB, MiB or GiB (K, M, G and KB, MB, GB mean the same); the line is 64
bytes unless given. Past its first 4,194,304 line touches (262,144 where the first 65,536
foretell a run of twice as many or more) the simulation follows a sample of the lines (chosen
by a hash of the address, fewer as the run goes on, never fewer than 4,096 in the cache asked
for) and says so: the figures there are estimates, those of a cache that holds every line stay
exact. From the limit, or from where a run is foretold so, the work-groups run compiled, one
work-item after another, but for a sample of them traced whole for the coalescing table (see
docs/count.md).

Faults: a work-item that accesses memory out of bounds, through a NULL, invalid or misaligned
pointer, or divides by zero is stopped there, and the count goes on without it. Each fault
gets one line with its source location, its first work-items and how many; the first fault
comes last, as the error. --dump is written all the same, and the exit status is 1. Barrier divergence, async copies the
work-group disagrees on and a kernel past --max-steps end the count at once.";

/// Interpret a kernel on its manifest's inputs and count W and Q.
#[derive(Args)]
#[command(
    long_about = "Run the kernel's SPIR-V in clflow's interpreter on the manifest's full NDRange \
    and inputs, and report what it did: executed operations per opcode and type (in vector \
    lanes), W for an op set, the bytes loaded and stored in global and constant memory \
    (Q accessed), the compulsory traffic at cache-line granularity, and I = W/Q. What the kernel \
    prints with printf comes first, in work-item order (on stderr with --json).",
    after_help = EXAMPLES
)]
pub struct CountArgs {
    /// The kernel manifest (.toml or Oclgrind .sim), or a capture (its directory or
    /// capture.toml).
    #[arg(value_name = "MANIFEST")]
    manifest: PathBuf,
    /// Print the report as JSON on stdout (with `lines`, W and bytes per source line).
    #[arg(long)]
    json: bool,
    /// Also print the kernel's source with W, bytes and share of Q beside each line,
    /// the hottest lines first (with --cache, each line's DRAM bytes and coalescing too).
    #[arg(long)]
    lines: bool,
    /// Which operations W counts: `arith` (every arithmetic operation), `work` (the
    /// algorithm's: every float operation and the integer operations whose role is work, not
    /// address or control, and atomic updates), `int`, `fp32`, `fp64`, `fp16`, or operations by name
    /// (add,xor,getelementptr; OpIAdd; sqrt), comma-separated.
    #[arg(long, value_name = "SET", default_value = "work")]
    ops: String,
    /// Cache-line size in bytes for compulsory traffic (a power of two).
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = super::line_size)]
    line_bytes: u64,
    /// Instructions one work-item may execute before it is stopped.
    #[arg(long, value_name = "N", default_value_t = RunOptions::default().max_steps)]
    max_steps: u64,
    /// Worker threads, 1 to 256 (default: every core).
    #[arg(long, value_name = "N", value_parser = super::thread_count)]
    threads: Option<usize>,
    /// Work-items per sub-group, for kernels using sub-groups (cl_khr_subgroups): devices
    /// differ (often 8 to 64), so state the one to model.
    #[arg(long, value_name = "N", default_value_t = clflow_interp::DEFAULT_SUB_GROUP_SIZE,
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    sub_group_size: u32,
    /// Write each output buffer (access wo or rw) to DIR/<name>.bin, raw little-endian.
    #[arg(long, value_name = "DIR")]
    dump: Option<PathBuf>,
    /// Simulate a cache of this size and line (e.g. 40MiB/128), or a datasheet profile's
    /// last-level cache (e.g. nvidia-h100-sxm): Q and I there, Q against the cache size, and
    /// the coalescing of each access.
    #[arg(long, value_name = "SIZE[/LINE]|PROFILE")]
    cache: Option<String>,
    /// Watch the run for faults beyond the ones always caught (bounds, null, alignment,
    /// division by zero, barrier divergence, the step limit), comma-separated, added to
    /// `aggregates`, which is on by default: `access` (a write to a read-only buffer, a read
    /// of a write-only one), `races` (two work-items' accesses to the same bytes, one a
    /// write, not both atomic, nothing to order them: no barrier that fences that memory
    /// between them, or in different work-groups; stores of the same value do not race;
    /// costs 28 bytes of shadow per byte touched), `uninit` (a value never written, from
    /// private or local memory or a `noinit` buffer, that decides a branch, makes an
    /// address, divides or is stored to global memory), `aggregates` (an index outside an
    /// array inside a private or local variable: a struct member's array, a row of a 2-D
    /// array), `all`, or `none` (not even `aggregates`). All but `aggregates` make the run
    /// interpreted and traced: several times slower. Faults found exit 1.
    #[arg(long, value_name = "LIST")]
    detect: Option<Detect>,
    /// List at most N faults, each once per instruction and kind with how many work-items or
    /// accesses made it (--json lists them all).
    #[arg(long, value_name = "N", default_value_t = 20,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_faults: u64,
    /// Count a uniform random sample of the work-groups and extrapolate W, Q and the
    /// histogram, with 95% confidence intervals on W and Q: a fraction (0.05), a percentage
    /// (5%) or a number of work-groups (200-groups) of the interior; the work-groups on the
    /// NDRange's boundary (first and last of each dimension) always run. For launches too
    /// large to count whole; the default counts every work-group. On a capture, each launch
    /// is sampled, and its outputs, then partial, are not compared with the device's.
    #[arg(long, value_name = "FRACTION|N-groups")]
    sample: Option<SampleSize>,
    /// Also say how the work-items would fill vectors of 8, 16, 32 and 64 lanes (a CPU's
    /// vector unit, a GPU's warp or wavefront): the share of issued lanes that do work, and
    /// of the work run in full vectors, where every work-item of the vector is at the same
    /// instruction (what a vectoriser that needs uniform control flow runs as vectors). With
    /// it, what a CPU core running the work-items one by one would meet: the chains of
    /// dependent operations the kernel's loops carry (nominal cycles; those that hold a float
    /// value across a kept call, which a CPU keeps on the stack meanwhile), the calls those
    /// loops make that the compiler keeps (to `noinline` functions, and in an -O2 build every
    /// call clang did not inline), and the
    /// branches a 2-bit counter per branch mispredicts (and how many of those lie inside the
    /// kernel's loops between barriers, the only ones a vectoriser that widens only outside
    /// loops leaves as jumps). And the lanes of loads and stores such a vectoriser gathers:
    /// where a row of work-items' addresses neither count up nor share one, where a scalar
    /// access's address was computed before a barrier (it keeps that value per work-item in
    /// memory across the barrier), and where a row shares one address under an `if`.
    #[arg(long)]
    simd: bool,
    /// Run every instruction in the interpreter. By default a launch of a kernel the compiled
    /// tier can run (no work-group functions, printf, images, async copies or atomics whose old
    /// value is used) is compiled to native code once it has run 10 ms with as long again left
    /// to run (and longer than the compile, about 50 µs a bytecode instruction, takes), and goes
    /// on several times faster with the same counts and outputs; -v says which ran and why.
    #[arg(long, conflicts_with = "compile")]
    interpret: bool,
    /// Compile the kernel before the launch starts, however short it is (to compare with
    /// --interpret).
    #[arg(long)]
    compile: bool,
    /// The seed that picks --sample's work-groups: the same seed, the same work-groups.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "sample")]
    sample_seed: u64,
    #[command(flatten)]
    build: super::ManifestBuildOptions,
}

/// `--json`: the count report, with the traffic where `--cache` simulated
/// it and the faults where `--detect` found some.
#[derive(serde::Serialize)]
struct CountJson {
    #[serde(flatten)]
    counts: clflow_interp::CountReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    traffic: Option<clflow_traffic::TrafficSummary>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    faults: Vec<Fault>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sample: Option<SampleReport>,
}

pub fn run(args: CountArgs, verbosity: Verbosity) -> crate::Result<()> {
    let session = Session::new(&verbosity).with_build_options(&args.build.options);
    let ops = clflow_pipeline::count::parse_ops(&args.ops)?;
    // The profiles are read only where --cache names one.
    let cache = match args.cache.as_deref() {
        Some(text) => Some(parse_cache(text, || session.catalog())?),
        None => None,
    };
    if args.sample.is_some() {
        let needs_all = [
            (args.cache.is_some(), "--cache"),
            (args.dump.is_some(), "--dump"),
            (args.detect.is_some(), "--detect"),
        ];
        if let Some((_, what)) = needs_all.iter().find(|(given, _)| *given) {
            return Err(Failure::input(format!(
                "--sample counts a part of the launch; {what} needs every work-group"
            )));
        }
    }
    if capture::is_capture(&args.manifest) {
        return count_capture(&args, &ops, &session, verbosity);
    }
    let (input, launch) = prepare_manifest(&args.manifest, "count", &session)?;
    if let Some(dir) = &args.dump {
        // Checked before the count spends its time.
        clflow_report::check_writable(dir, "--dump")?;
    }
    let kernel = launch.kernel.clone();
    let options = input.run_options(&run_options(&args, &ops));
    let spec = cache.as_ref().map(|c| c.spec);
    let watch = Watch::at_cache(spec).detect(args.detect.unwrap_or(Detect::BY_DEFAULT));
    let counted = interpret(
        &args.manifest,
        &input.module,
        Cow::Owned(launch),
        &options,
        watch,
        &verbosity,
    )?;
    let traffic = counted.at_cache(spec);
    let (result, faults) = (counted.run, counted.faults);
    if let Some(dir) = &args.dump {
        dump(dir, &result.buffers, verbosity)?;
    }
    if !result.printed.is_empty() {
        verbosity.detail(format!(
            "{} work-items printed (printf){}",
            result.printed.len(),
            if args.json { ", on stderr" } else { "" }
        ));
    }
    print_kernel_output(&result.printed_bytes(), args.json)?;
    let counts = result.counts.report(&ops);
    if args.json {
        print_json(&CountJson {
            counts,
            traffic,
            faults: faults.clone(),
            sample: result.sample.clone(),
        })?;
    } else {
        print!(
            "{}",
            clflow_interp::counts::render_text(&result.counts, &ops)
        );
        if let Some(sample) = &result.sample {
            print!("{}", render_sample(sample, &counts.w.set));
        }
        if let Some(traffic) = &traffic {
            let source = cache.as_ref().map_or("", |c| c.source.as_str());
            print!("{}", render_text(traffic, counts.w.total, source));
        }
        // A sample's outputs hold only what its work-groups wrote.
        if let (Some(manifest), None) = (&input.manifest, &result.sample) {
            print!("{}", dumped(manifest, &result.buffers));
        }
        if args.lines {
            let read = |file: &str| std::fs::read_to_string(file).ok();
            let caches = line_caches(traffic.as_ref());
            print!("\n{}", render_lines(&counts, &read, &caches));
        }
    }
    // Undefined behaviour the count went through, then every fault but
    // the first, which the failure says last; even -q shows them.
    let listed = |fails: bool| {
        let kernel = &kernel;
        faults
            .iter()
            .filter(move |f| f.fails() == fails)
            .map(move |f| f.describe(kernel))
    };
    list_faults(listed(false), args.max_faults, "warning");
    list_faults(listed(true).skip(1), args.max_faults - 1, "fault");
    match detect::failure(&kernel, &faults) {
        Some(failure) => Err(failure),
        None => Ok(()),
    }
}

/// How a sampled count was made, and the intervals on W and Q.
fn render_sample(sample: &SampleReport, set: &str) -> String {
    use clflow_interp::counts::group_digits;
    let percent = |n: u64, of: u64| 100.0 * n as f64 / of.max(1) as f64;
    let interval = |i: &clflow_interp::sample::Interval| {
        let half = (i.high - i.estimate).max(i.estimate - i.low);
        format!(
            "{} (from {} to {}, ±{:.2}%)",
            group_digits(i.estimate),
            group_digits(i.low),
            group_digits(i.high),
            percent(half, i.estimate)
        )
    };
    format!(
        "\nSampled {} of {} interior work-groups ({:.2}%, seed {}) and all {} on the NDRange's\n\
         boundary; the counts above are extrapolated. At {:.0}% confidence:\n  W ({set}): {} ops\n  Q accessed: {} bytes\n\
         The compulsory traffic is an estimate with no interval (the lines the sample touched,\n\
         scaled, at most each buffer's); the outputs and printf are the sampled work-groups' own.\n",
        group_digits(sample.sampled_groups),
        group_digits(sample.interior_groups),
        percent(sample.sampled_groups, sample.interior_groups),
        sample.seed,
        group_digits(sample.boundary_groups),
        sample.confidence * 100.0,
        interval(&sample.w),
        interval(&sample.q),
    )
}

/// The buffers the manifest asks to see (`dump`), after the run.
fn dumped(
    manifest: &clflow_manifest::CheckedManifest,
    buffers: &[clflow_interp::OutputBuffer],
) -> String {
    let mut text = String::new();
    for (index, arg) in manifest.args().iter().enumerate() {
        let clflow_manifest::ArgSpec::Buffer(buffer) = &arg.spec else {
            continue;
        };
        let (Some(format), Some(out)) = (buffer.dump, buffers.iter().find(|b| b.arg == index))
        else {
            continue;
        };
        let name = arg
            .display_name()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        let values = clflow_manifest::dump::render(buffer.ty, &out.bytes, format);
        text.push_str(&format!("\narg {index}{name} after the run: {values}\n"));
    }
    text
}

fn dump(
    dir: &Path,
    buffers: &[clflow_interp::OutputBuffer],
    verbosity: Verbosity,
) -> crate::Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::input(format!("--dump: cannot create {}: {e}", dir.display())))?;
    // The run returns the output buffers (access wo or rw) only.
    for buffer in buffers {
        let name = buffer
            .name
            .clone()
            .unwrap_or_else(|| format!("arg{}", buffer.arg));
        let path = dir.join(format!("{name}.bin"));
        std::fs::write(&path, &buffer.bytes)
            .map_err(|e| Failure::input(format!("--dump: cannot write {}: {e}", path.display())))?;
        verbosity.detail(format!(
            "wrote {} ({} bytes)",
            path.display(),
            buffer.bytes.len()
        ));
    }
    Ok(())
}

/// Every launch of a capture: one line each, then the totals per kernel
/// and for the application. A launch whose outputs differ from the
/// device's fails the command, after everything is printed.
fn count_capture(
    args: &CountArgs,
    ops: &OpSet,
    session: &Session,
    verbosity: Verbosity,
) -> crate::Result<()> {
    if args.cache.is_some() || args.dump.is_some() {
        return Err(Failure::input(
            "--cache and --dump take one manifest; give one of the capture's launch-*.toml",
        ));
    }
    let options = run_options(args, ops);
    let detect = args.detect.unwrap_or(Detect::BY_DEFAULT);
    let counted = capture::count_capture(&args.manifest, ops, &options, detect, session)?;
    // A sampled launch's outputs are partial: not compared. A launch with
    // undefined behaviour (gone through, or found on a second run) may
    // differ from the device.
    let (explained, wrong): (Vec<&capture::LaunchCount>, Vec<_>) = counted
        .launches
        .iter()
        .filter(|l| l.status.is_counted() && !l.outputs_match && l.sample.is_none())
        .partition(|l| !l.diagnosis.is_empty() || l.faults.iter().any(|f| !f.fails()));
    for launch in counted.not_counted() {
        verbosity.say(
            Level::Error,
            &format!(
                "clflow: error: {} (launch {}, {} #{}): {}",
                launch.manifest,
                launch.sequence,
                launch.kernel,
                launch.index,
                launch.error.as_deref().unwrap_or("not counted")
            ),
        );
    }
    for launch in &wrong {
        if let Some(difference) = &launch.difference {
            verbosity.say(
                Level::Error,
                &format!(
                    "clflow: error: {} (launch {}): {}: the interpreter or the device is wrong",
                    launch.manifest,
                    launch.sequence,
                    describe_difference(difference)
                ),
            );
        }
    }
    for launch in &explained {
        if let Some(difference) = &launch.difference {
            verbosity.note(format!(
                "clflow: warning: {} (launch {}): {}: the kernel's undefined behaviour (below) \
                 leaves the outputs to the device",
                launch.manifest,
                launch.sequence,
                describe_difference(difference)
            ));
        }
    }
    for launch in &counted.launches {
        print_kernel_output(&launch.printed, args.json)?;
    }
    if args.json {
        print_json(&counted)?;
    } else {
        print!("{}", render_capture(&counted));
    }
    let faulty = counted
        .launches
        .iter()
        .filter(|l| l.faults.iter().any(Fault::fails));
    let listed = |fails: bool| {
        counted.launches.iter().flat_map(move |launch| {
            let (manifest, sequence) = (&launch.manifest, launch.sequence);
            let diagnosis = launch.diagnosis.iter().filter(move |_| !fails);
            launch
                .faults
                .iter()
                .filter(move |f| f.fails() == fails)
                .chain(diagnosis)
                .map(move |f| {
                    format!(
                        "{manifest} (launch {sequence}): {}",
                        f.describe(&launch.kernel)
                    )
                })
        })
    };
    list_faults(listed(false), args.max_faults, "warning");
    list_faults(listed(true), args.max_faults, "fault");
    let launches = counted.launches.len();
    let not_counted = counted.not_counted().count();
    // A launch that faulted is expected to differ from the device.
    let failures = [
        (
            not_counted,
            "could not be counted (listed before the table)",
        ),
        (faulty.count(), "faulted (listed before this line)"),
        (wrong.len(), "computed outputs different from the device's"),
    ];
    let said: Vec<String> = failures
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} of {launches} launches {what}"))
        .collect();
    match said.is_empty() {
        true => Ok(()),
        false => Err(Failure::analysis(said.join("; "))),
    }
}

/// Writes the first `max` of `faults` to stderr, one line each after
/// `label` (even -q shows them), and how many more there were.
fn list_faults(faults: impl Iterator<Item = String>, max: u64, label: &str) {
    let mut left_out = 0;
    for (n, fault) in faults.enumerate() {
        if (n as u64) < max {
            eprintln!("clflow: {label}: {fault}");
        } else {
            left_out += 1;
        }
    }
    if left_out > 0 {
        eprintln!(
            "clflow: {label}: {} more not listed (--max-faults; --json lists them all)",
            clflow_interp::counts::group_digits(left_out)
        );
    }
}

/// `arg 1 (out) differs from the device's output at element 2: the
/// interpreter computed 4, the device 4.5 (1 of 256 elements differ;
/// tolerance 1e-4 relative)`.
fn describe_difference(m: &clflow_pipeline::outputs::Mismatch) -> String {
    if m.elements == 0 {
        return format!(
            "{} differs from the device's output in size: the interpreter wrote {}, the device {}",
            m.buffer, m.expected, m.got
        );
    }
    let lane = m.lane.map(|l| format!(" lane {l}")).unwrap_or_default();
    let tolerance = if m.tolerance.relative > 0.0 {
        format!("; tolerance {:e} relative", m.tolerance.relative)
    } else {
        String::new()
    };
    format!(
        "{} differs from the device's output at element {}{lane}: the interpreter computed {}, \
         the device {} ({} of {} elements differ{tolerance})",
        m.buffer, m.index, m.expected, m.got, m.differing, m.elements
    )
}

fn render_capture(counted: &capture::CaptureCount) -> String {
    use clflow_interp::counts::group_digits;
    let intensity = |i: Option<f64>| i.map_or("-".into(), |i| format!("{i:.3}"));
    let mut out = format!("Launches captured in {}:\n", counted.capture.display());
    // The kernel column as wide as its longest name (a library's may be long).
    let named: Vec<String> = (counted.launches.iter())
        .map(|l| format!("{} (#{})", l.kernel, l.index))
        .collect();
    let width = named.iter().map(String::len).max().unwrap_or(0).max(24);
    out.push_str(&format!(
        "  launch  {:<width$} {:>12} {:>15} {:>9}  outputs\n",
        "kernel (#)", "W", "Q", "I"
    ));
    for (l, name) in counted.launches.iter().zip(&named) {
        let (Some(w), Some(q)) = (&l.w, &l.q) else {
            let status = match l.status {
                capture::LaunchStatus::Refused => "REFUSED",
                _ => "FAILED",
            };
            let none = "-";
            out.push_str(&format!(
                "  {:>6}  {name:<width$} {none:>12} {none:>15} {none:>9}  {status}\n",
                l.sequence
            ));
            continue;
        };
        let i = (q.accessed > 0).then(|| w.total as f64 / q.accessed as f64);
        let outputs = match (&l.sample, l.outputs_match) {
            (Some(s), _) => format!(
                "sampled {} of {} groups",
                s.sampled_groups + s.boundary_groups,
                s.work_groups
            ),
            (None, true) => "match".into(),
            (None, false) => "DIFFER".into(),
        };
        out.push_str(&format!(
            "  {:>6}  {name:<width$} {:>12} {:>15} {:>9}  {outputs}\n",
            l.sequence,
            group_digits(w.total),
            group_digits(q.accessed),
            intensity(i),
        ));
    }
    out.push_str("\nPer kernel:\n");
    let width = (counted.totals.per_kernel.keys())
        .map(String::len)
        .max()
        .unwrap_or(0)
        .max(24);
    for (kernel, t) in &counted.totals.per_kernel {
        out.push_str(&format!(
            "  {kernel:<width$} {:>4} launches  W {:>14}  Q {:>14} bytes  I {}\n",
            t.launches,
            group_digits(t.w),
            group_digits(t.q.accessed),
            intensity(t.i)
        ));
    }
    let all = &counted.totals.all;
    // Sampled launches make W an estimate: its 95% interval's half-width.
    let interval = all.w_half_width.map_or(String::new(), |half| {
        format!(" (±{:.2}% at 95%)", 100.0 * half / all.w.max(1) as f64)
    });
    let not_counted = counted.not_counted().count();
    let left_out = match not_counted {
        0 => String::new(),
        n => format!(" ({n} more not counted)"),
    };
    out.push_str(&format!(
        "\nApplication: {} launches{left_out}, W {}{interval}, Q {} bytes, I {}\n",
        all.launches,
        group_digits(all.w),
        group_digits(all.q.accessed),
        intensity(all.i)
    ));
    out
}

/// How the interpreter runs, as the flags say; a sample's interval is on
/// W over `ops`.
fn run_options(args: &CountArgs, ops: &OpSet) -> RunOptions {
    RunOptions {
        max_steps: args.max_steps,
        line_bytes: args.line_bytes,
        threads: args.threads,
        progress: None,
        sub_group_size: args.sub_group_size,
        // A bad access stops its work-item; the count goes on, lists every
        // such fault and still writes --dump.
        keep_going: true,
        // Set by the pipeline where --detect asks for it.
        uninit: false,
        undefined: Vec::new(),
        sample: args
            .sample
            .map(|size| Sample { size, seed: args.sample_seed, ops: ops.clone() }),
        simd: args.simd,
        tier: if args.interpret {
            Tier::Interpret
        } else if args.compile {
            Tier::Compile
        } else {
            Tier::Auto
        },
        order: clflow_interp::ItemOrder::Lockstep,
        // Set by the pipeline from how the module was built.
        optimised: false,
    }
}
