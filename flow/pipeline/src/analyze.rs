//! The main job (`clflow analyze`): compile and count each kernel, measure
//! every selected device that has no measured profile yet, run each kernel
//! on each device, predict and bound it, and write the report.

use crate::bench::Needs;
use crate::count::{interpret, kernel_counts, kernel_source, Watch};
use crate::detect::{Detect, Fault};
use crate::device::{missing_extensions, run_on_device, KernelOnDevice, TimingPlan};
use crate::history;
use crate::history::history_entry as run_history_entry;
use crate::input::{prepare_manifest, unique_name, KernelInput};
use crate::order::{device_order, traffic_in_device_order, OrderedDevice};
use crate::profile::{device_profile, measured_or_datasheet};
use crate::split::{self as split_stage, split, NamedDevice, SECTION_HEADING};
use crate::traffic::{
    describe, device_cache, facts_at, parse_cache_option, traffic_analysis, DeviceCache,
};
use crate::{Error, Observer, Session};
use clflow_bench::Mode;
use clflow_core::{FailureKind, Launch};
use clflow_counts::Summary;
use clflow_devices::{MeasuredProfile, ProfileCatalog};
use clflow_interp::{CountReport, ItemOrder, OpSet, OutputBuffer, RunOptions};
use clflow_metrics::{
    Figure, Hotspots, KernelCounts, LaunchInfo, LevelTraffic, Metrics, ResultSet, Run, RunDevice,
    RunInfo, Unit,
};
use clflow_ocl::{DeviceInfo, DeviceKind};
use clflow_report::source::KernelSource;
use clflow_report::traffic::KernelTraffic;
use clflow_report::ReportSection;
use clflow_split::Transfers;
use clflow_traffic::DeviceTraffic;
use std::borrow::Cow;
use std::path::PathBuf;

/// What one analysis covers, as `clflow analyze`'s flags give it.
#[derive(Debug, Clone)]
pub struct AnalyzeOptions {
    /// Kernel manifests (.toml or Oclgrind .sim).
    pub manifests: Vec<PathBuf>,
    /// `all`, or device selectors: indexes or parts of names.
    pub devices: Vec<String>,
    /// Which operations W counts.
    pub ops: OpSet,
    /// Where to write the report; `None` for `reports/<kernel source name>`.
    pub out: Option<PathBuf>,
    /// Seconds of kernel time to time on each device.
    pub min_time: f64,
    /// Benchmark unmeasured devices in quick mode.
    pub quick_bench: bool,
    /// Cache-line size in bytes for compulsory traffic (a power of two).
    pub line_bytes: u64,
    /// The history store to append to; `None` for the default one.
    pub store: Option<PathBuf>,
    /// Do not append to the history store.
    pub no_history: bool,
    /// The cache each kernel's Q is simulated through on every device.
    pub cache: Option<String>,
    /// The checkers that watch each kernel's count (`--detect`).
    pub detect: Detect,
    /// The command line, for the report's header.
    pub command: Vec<String>,
}

/// What an analysis produced: the report's results and where it went, and
/// the kernel runs that failed (each a note in the report too).
pub struct Analysis {
    pub set: ResultSet,
    pub metrics: Vec<Metrics>,
    /// Each kernel over its launches (an application's).
    pub kernels: Vec<clflow_report::launches::KernelLaunches>,
    pub out: PathBuf,
    pub files: Vec<String>,
    pub failures: Vec<Error>,
}

impl Analysis {
    /// The analysis's outcome: done, or its worst failure (an input error
    /// before an analysis one), saying that the report holds the rest.
    pub fn outcome(&self) -> crate::Result<()> {
        let Some(first) = self.failures.first() else {
            return Ok(());
        };
        let worst = self
            .failures
            .iter()
            .find(|f| f.kind == FailureKind::Input)
            .unwrap_or(first);
        let message = match self.failures.len() {
            1 => worst.message.clone(),
            n => format!(
                "{n} kernel runs failed or faulted; the first: {}",
                worst.message
            ),
        };
        Err(Error {
            kind: worst.kind,
            message,
            hint: Some(format!(
                "the report in {} holds every result that was measured, and these failures as notes",
                self.out.display()
            )),
            exit_status: None,
        })
    }
}

/// One kernel, counted and ready to run.
struct Counted {
    manifest: PathBuf,
    /// The name the report gives it (the kernel's, made unique).
    name: String,
    input: KernelInput,
    launch: Launch,
    report: CountReport,
    /// W, its mix, Q and D: what the record, the split and the facts
    /// below were made from.
    summary: Summary,
    /// W and Q as the report records them.
    record: KernelCounts,
    outputs: Vec<OutputBuffer>,
    /// The kernel as the CPU+GPU split bounds it (and its in-set W by
    /// kind of lane, which chooses the float ceiling).
    split: split_stage::Counted,
    /// What the prediction models read.
    facts: clflow_predict::KernelFacts,
    /// Q through each device's cache, for the devices that have one.
    traffic: Vec<DeviceTraffic>,
    /// Its lines and their text, for the report's source section.
    source: KernelSource,
    /// What the checkers found.
    faults: Vec<Fault>,
}

/// One selected device and what the report calls it.
struct Selected {
    info: DeviceInfo,
    name: String,
    /// Its cache, for the traffic simulation.
    cache: Option<DeviceCache>,
    /// The order it runs work-items in, where not the interpreter's.
    order: Option<ItemOrder>,
}

/// Compile, count, benchmark, run, and report: the whole flow. Runs that
/// fail on a device are noted in the report and returned in
/// [`Analysis::failures`]; the others go on.
pub fn analyze(args: &AnalyzeOptions, session: &Session) -> crate::Result<Analysis> {
    let observer = session.observer();
    let ops = &args.ops;
    crate::device::check_min_time(args.min_time)?;
    clflow_core::numbers::line_size(args.line_bytes).map_err(Error::input)?;
    let catalog = session.catalog();
    let chosen_cache = parse_cache_option(args.cache.as_deref(), || catalog)?;
    // Selections, manifests, kernels and the report's directory are all
    // checked before the count stage spends its time.
    let mut devices = select_devices(&args.devices, session)?;
    for device in &mut devices {
        let datasheet = catalog.match_name(&device.info.name).map(|m| m.profile);
        device.cache = device_cache(chosen_cache.as_ref(), &device.info, datasheet)
            .map(|c| c.with_host_levels(device.info.kind));
    }
    // A capture stands for its launches' manifests, in launch order.
    let manifests = crate::capture::expand(&args.manifests)?;
    let prepared = manifests
        .iter()
        .map(|manifest| prepare_manifest(manifest, "analyze", session))
        .collect::<crate::Result<Vec<_>>>()?;
    let out = args.out.clone().unwrap_or_else(|| default_out(&prepared));
    clflow_report::check_writable(&out, "--out")?;
    // Each device's rates, for the predictions and the order it runs
    // work-items in, and its measured profile, for the split.
    let all = session.device_infos();
    let mode = Mode::quick_if(args.quick_bench);
    let mut rates = Vec::new();
    let mut measured_profiles: Vec<Option<MeasuredProfile>> = Vec::new();
    for selected in &mut devices {
        let device = session.device_at(selected.info.index)?;
        let datasheet = catalog.match_name(&selected.info.name).map(|m| m.profile);
        // The costs only the model's predictions need: a quick plan's
        // where none are stored, which the report says.
        let needs = Needs { peaks: mode, costs: Some(Mode::Quick) };
        let measured = measured_or_datasheet(device, &all, datasheet, needs, observer);
        let device_rates = clflow_bench::device_rates(
            &selected.name,
            measured.as_ref(),
            datasheet,
            clflow_bench::simd_of(&selected.info),
        );
        selected.order = device_order(&device_rates);
        rates.push(device_rates);
        measured_profiles.push(measured);
    }
    if manifests.len() > LAUNCH_NOTES {
        observer.note(format!(
            "{} launches to count and run on {} device(s); -v says each",
            manifests.len(),
            devices.len()
        ));
    }
    let kernels = count_all(args, &manifests, prepared, &devices, observer)?;

    let mut set = ResultSet {
        title: Some(title(&kernels)),
        made: Some(run_info(args, &kernels, &devices)),
        ..ResultSet::default()
    };
    for kernel in &kernels {
        set.put_kernel(kernel.record.clone());
    }
    // The float peak every device's roofline shows, by the rule the split
    // and the metrics use.
    let float = kernels
        .iter()
        .map(|k| k.summary.mix)
        .sum::<clflow_counts::PerClass>()
        .float_ceiling();

    let plan = TimingPlan::lasting(args.min_time);
    // A kernel's faults fail the analysis (but undefined behaviour the
    // count went through, which it reports); its runs and report go on.
    let mut failures: Vec<Error> = kernels
        .iter()
        .flat_map(|k| {
            k.faults.iter().filter_map(|f| {
                let line = f.describe(&k.launch.kernel);
                if !f.fails() {
                    observer.note(format!("clflow: warning: {line}"));
                    return None;
                }
                observer.note(format!("clflow: fault: {line}"));
                Some(Error::analysis(line))
            })
        })
        .collect();
    // (kernel, device name, run) of every run that completed, for the history.
    let mut completed = Vec::new();
    for (selected, measured) in devices.iter().zip(&measured_profiles) {
        let device = session.device_at(selected.info.index)?;
        let datasheet = catalog.match_name(&selected.info.name).map(|m| m.profile);
        set.put_device(device_profile(
            &selected.name,
            &selected.info,
            measured.as_ref(),
            datasheet,
            float,
        ));

        for kernel in &kernels {
            let missing = missing_extensions(&kernel.input.module, &selected.info);
            if !missing.is_empty() {
                let note = format!(
                    "skipped: the device lacks {}, which `{}` needs",
                    missing.join(" and "),
                    kernel.launch.kernel
                );
                observer.note(format!(
                    "clflow: warning: {} on {}: {note}",
                    kernel.name,
                    selected.info.label()
                ));
                let mut run = Run::new(&kernel.name, &selected.name);
                run.notes.push(note);
                set.put_run(run);
                continue;
            }
            per_launch(
                observer,
                kernels.len(),
                format!("running {} on {}", kernel.name, selected.info.label()),
            );
            let outcome = run_on_device(
                session,
                device,
                &KernelOnDevice::new(&kernel.input, &kernel.launch, Some(&kernel.outputs)),
                &plan,
            );
            match outcome {
                Ok(device_run) => {
                    if device_run.outputs.is_wrong() {
                        let message = format!(
                            "{} on {}: {}",
                            kernel.name,
                            selected.info.label(),
                            device_run.outputs.summary()
                        );
                        observer.note(format!("clflow: error: {message}"));
                        failures.push(Error::analysis(message));
                    }
                    let mut run = device_run.to_metrics_run(&kernel.name, &selected.name);
                    run.levels = memory_levels(kernel, &selected.name);
                    set.put_run(run);
                    completed.push((kernel, selected.name.clone(), device_run));
                }
                Err(failure) => {
                    observer.note(format!(
                        "clflow: error: {} on {}: {}",
                        kernel.name,
                        selected.info.label(),
                        failure.message
                    ));
                    let mut run = Run::new(&kernel.name, &selected.name);
                    run.notes.push(format!("failed: {}", failure.message));
                    set.put_run(run);
                    failures.push(failure);
                }
            }
        }
    }

    let predictions: Vec<clflow_predict::Predictions> = completed
        .iter()
        .filter_map(|(kernel, device, device_run)| {
            let device_rates = rates.iter().find(|r| &r.name == device)?;
            let run = device_run.to_metrics_run(&kernel.name, device);
            let measured = clflow_predict::Measured {
                time_s: run.time.map(|f| f.value),
                energy_j: run.energy_measured.map(|f| f.value),
            };
            let kind = devices.iter().find(|d| &d.name == device)?.info.kind;
            let facts = match kernel.traffic.iter().find(|t| &t.device == device) {
                Some(traffic) => facts_at(&kernel.facts, traffic, kind),
                None => kernel.facts.clone(),
            };
            Some(clflow_predict::predict_all(&facts, device_rates, measured))
        })
        .collect();
    // The report notes each fault on the kernel's runs.
    for kernel in &kernels {
        let notes: Vec<String> = kernel
            .faults
            .iter()
            .map(|f| format!("fault: {}", f.describe(&kernel.launch.kernel)))
            .collect();
        for run in set.runs.iter_mut().filter(|r| r.kernel == kernel.name) {
            run.notes.extend(notes.iter().cloned());
        }
    }
    let traffic: Vec<KernelTraffic> = kernels
        .iter()
        .map(|k| KernelTraffic {
            kernel: k.name.clone(),
            work: k.report.w.total,
            devices: k.traffic.clone(),
        })
        .collect();
    let launches = kernel_launches(&kernels, &completed);
    let sources: Vec<KernelSource> = kernels.iter().map(|k| k.source.clone()).collect();
    // An application's kernels that matter come first.
    let mut sections: Vec<ReportSection> = clflow_report::launches::launches_section(&launches)
        .into_iter()
        .chain(clflow_report::traffic::traffic_section(&traffic))
        .chain(clflow_report::source::source_section(&sources))
        .chain([predictions_section(
            &predictions,
            &devices,
            &measured_profiles,
        )])
        .map(ReportSection::from)
        .collect();
    sections.extend(split_section(
        &kernels,
        &devices,
        &measured_profiles,
        catalog,
        observer,
    ));
    let written =
        clflow_report::write_report_sections(&set, &out, &sections).map_err(Error::from)?;
    let metrics = set.evaluate();
    if !args.no_history {
        let mut entries = count_entries(&kernels, ops);
        for (kernel, device, device_run) in &completed {
            let mut entry = run_history_entry(
                "analyze",
                &kernel.manifest,
                &kernel.input.source,
                device_run,
            );
            entry.op_set = Some(ops.to_string());
            if let Some(m) = metrics
                .iter()
                .find(|m| m.kernel == kernel.name && &m.device == device)
            {
                for (name, figure) in [
                    ("F", &m.performance),
                    ("R", &m.perf_per_watt),
                    ("E", &m.energy),
                ] {
                    if let Some(figure) = figure {
                        entry.metrics.push(history::metric(name, figure.value));
                    }
                }
            }
            entries.push(entry);
        }
        history::record(args.store.as_deref(), &entries, observer);
    }
    Ok(Analysis {
        set,
        metrics,
        kernels: launches,
        out,
        files: written.files,
        failures,
    })
}

/// The kernel's traffic at each memory level of a device whose cache was
/// simulated, as the result set records it.
fn memory_levels(kernel: &Counted, device: &str) -> Vec<LevelTraffic> {
    let Some(traffic) = kernel.traffic.iter().find(|t| t.device == device) else {
        return Vec::new();
    };
    traffic
        .levels
        .iter()
        .map(|l| LevelTraffic {
            level: l.level.clone(),
            traffic: Figure::measured(
                l.bytes as f64,
                Unit::Bytes,
                format!(
                    "clflow cache simulation (LRU, {}-byte lines; {})",
                    traffic.summary.cache.line_bytes, traffic.cache_source
                ),
            ),
        })
        .collect()
}

/// Each kernel over its launches (a captured application launches a kernel
/// many times): W and Q summed, and each device's median times summed.
fn kernel_launches(
    kernels: &[Counted],
    completed: &[(&Counted, String, crate::device::DeviceRun)],
) -> Vec<clflow_report::launches::KernelLaunches> {
    use clflow_report::launches::{DeviceTime, KernelLaunches};
    let mut out: Vec<KernelLaunches> = Vec::new();
    for k in kernels {
        let name = &k.launch.kernel;
        let i = match out.iter().position(|g| &g.kernel == name) {
            Some(i) => i,
            None => {
                out.push(KernelLaunches {
                    kernel: name.clone(),
                    launches: 0,
                    work: 0,
                    bytes: 0,
                    devices: Vec::new(),
                    runs: Vec::new(),
                });
                out.len() - 1
            }
        };
        let group = &mut out[i];
        group.launches += 1;
        group.runs.push(k.name.clone());
        group.work += k.summary.work;
        group.bytes += k.summary.accessed;
        for (_, device, run) in completed.iter().filter(|(c, _, _)| c.name == k.name) {
            match group.devices.iter_mut().find(|d| &d.device == device) {
                Some(d) => {
                    d.launches += 1;
                    d.time_s += run.timing.median_s;
                }
                None => group.devices.push(DeviceTime {
                    device: device.clone(),
                    launches: 1,
                    time_s: run.timing.median_s,
                }),
            }
        }
    }
    out
}

/// The devices `--device` names: `all`, or each selector's one device.
fn select_devices(selectors: &[String], session: &Session) -> crate::Result<Vec<Selected>> {
    let all = session.devices()?;
    let mut chosen: Vec<DeviceInfo> = Vec::new();
    if selectors.iter().any(|s| s.eq_ignore_ascii_case("all")) {
        if selectors.len() > 1 {
            return Err(Error::input(
                "--device: `all` already names every device; give it alone",
            ));
        }
        chosen = all.iter().map(|d| d.info.clone()).collect();
    } else {
        for text in selectors {
            let device = session.device(text)?;
            if !chosen.iter().any(|d| d.index == device.info.index) {
                chosen.push(device.info.clone());
            }
        }
    }
    // The report names devices by model; identical boards get their index.
    let names: Vec<String> = chosen.iter().map(|d| d.name.trim().to_string()).collect();
    Ok(chosen
        .into_iter()
        .zip(&names)
        .map(|(info, name)| {
            let twins = names.iter().filter(|n| *n == name).count();
            let name = if twins > 1 {
                format!("{name} #{}", info.index)
            } else {
                name.clone()
            };
            Selected { info, name, cache: None, order: None }
        })
        .collect())
}

/// The CPU+GPU split section, where the devices include a CPU and another
/// device: C the first CPU, G the first other device, each with the
/// ceilings the rest of the report has (its measured profile, else its
/// datasheet). A pair whose bounds cannot be had is a warning, never a
/// failure of the analysis.
fn split_section(
    kernels: &[Counted],
    devices: &[Selected],
    measured: &[Option<MeasuredProfile>],
    catalog: &ProfileCatalog,
    observer: &dyn Observer,
) -> Option<ReportSection> {
    let Some((c, g)) = cpu_gpu_pair(devices.iter().map(|d| d.info.kind)) else {
        let why = match devices {
            [one] => format!(
                "only device {} ({}) is analyzed",
                one.info.index,
                one.info.label()
            ),
            _ if devices.iter().all(|d| d.info.kind == DeviceKind::Cpu) => {
                "every device analyzed is a CPU".to_string()
            }
            _ => "no device analyzed is a CPU".to_string(),
        };
        observer.detail(format!(
            "no {SECTION_HEADING} section: it needs a CPU and another device, and {why}"
        ));
        return None;
    };
    let named = |i: usize| NamedDevice::OpenCl {
        name: devices[i].name.clone(),
        info: Box::new(devices[i].info.clone()),
        measured: measured.get(i).cloned().flatten().map(Box::new),
        datasheet: catalog
            .match_name(&devices[i].info.name)
            .map(|m| m.profile.clone()),
    };
    let application: Vec<split_stage::Counted> = kernels.iter().map(|k| k.split.clone()).collect();
    let section = split(
        &application,
        &named(c),
        &named(g),
        split_stage::TrafficKind::Compulsory,
        Transfers::Counted,
    )
    .and_then(|split| Ok(split.report_section(&pair_note(devices, c, g))?));
    match section {
        Ok(section) => Some(section),
        Err(failure) => {
            let hint = failure.hint.map(|h| format!(" ({h})")).unwrap_or_default();
            observer.note(format!(
                "clflow: warning: no {SECTION_HEADING} section: {}{hint}",
                failure.message
            ));
            None
        }
    }
}

/// The indexes of the first CPU and of the first other device, where the
/// kinds include both.
fn cpu_gpu_pair(kinds: impl IntoIterator<Item = DeviceKind>) -> Option<(usize, usize)> {
    let kinds: Vec<DeviceKind> = kinds.into_iter().collect();
    let c = kinds.iter().position(|k| *k == DeviceKind::Cpu)?;
    let g = kinds.iter().position(|k| *k != DeviceKind::Cpu)?;
    Some((c, g))
}

/// Which pair the split section bounds, where more devices were analyzed
/// (HTML); nothing for just the two.
fn pair_note(devices: &[Selected], c: usize, g: usize) -> String {
    if devices.len() <= 2 {
        return String::new();
    }
    let (c, g) = (&devices[c], &devices[g]);
    format!(
        "<p>Of the {} devices analyzed, C is the first CPU, {}, and G the first other device, \
         {}. <code>clflow split MANIFEST... --device {},{}</code> prints these bounds; other \
         indexes bound another pair.</p>\n",
        devices.len(),
        clflow_report::escape(&c.name),
        clflow_report::escape(&g.name),
        c.info.index,
        g.info.index
    )
}

/// Launches an analysis says each of as it goes; of more (an
/// application's), it says each with -v.
const LAUNCH_NOTES: usize = 16;

/// A line about one of `launches` launches: a note, or a detail where
/// there are many.
fn per_launch(observer: &dyn Observer, launches: usize, line: String) {
    match launches > LAUNCH_NOTES {
        true => observer.detail(line),
        false => observer.note(line),
    }
}

/// Compiles and counts every manifest.
fn count_all(
    args: &AnalyzeOptions,
    manifests: &[PathBuf],
    prepared: Vec<(KernelInput, Launch)>,
    devices: &[Selected],
    observer: &dyn Observer,
) -> crate::Result<Vec<Counted>> {
    let ops = &args.ops;
    let options = RunOptions {
        line_bytes: args.line_bytes,
        simd: true,
        ..RunOptions::default()
    };
    let mut kernels: Vec<Counted> = Vec::new();
    for (manifest, (input, launch)) in manifests.iter().zip(prepared) {
        let caches = devices.iter().map(|d| &d.cache);
        let watch = Watch::traffic(traffic_analysis(caches)).detect(args.detect);
        let run_options = input.run_options(&options);
        let launch_in = Cow::Borrowed(&launch);
        let counted = interpret(
            manifest,
            &input.module,
            launch_in,
            &run_options,
            watch,
            observer,
        );
        let (result, traffic_report, faults) = counted?.traced()?;
        let cached: Vec<OrderedDevice> = devices
            .iter()
            .filter_map(|d| {
                Some(OrderedDevice { name: &d.name, cache: d.cache.as_ref()?, order: d.order })
            })
            .collect();
        let traffic = traffic_in_device_order(
            manifest,
            &input.module,
            &launch,
            &input.run_options(&options),
            &traffic_report,
            &cached,
            observer,
        )?;
        drop(traffic_report);
        let report = result.counts.report(ops);
        per_launch(
            observer,
            manifests.len(),
            format!(
                "counted {}: W = {} ({ops}), Q = {} bytes accessed, I = {}",
                launch.kernel,
                report.w.total,
                report.q.accessed,
                report
                    .i
                    .min
                    .map_or("unbounded".into(), clflow_metrics::format_number)
            ),
        );
        for t in &traffic {
            let line = format!("  {}: {}", t.device, describe(t, report.w.total));
            per_launch(observer, manifests.len(), line);
        }
        let taken: Vec<&str> = kernels.iter().map(|k| k.name.as_str()).collect();
        let name = unique_name(&launch.kernel, manifest, &taken);
        let summary = Summary::of(&result.counts, ops, &launch);
        let facts = clflow_predict::KernelFacts::new(&name, &summary, &result.counts);
        // The split bounds compulsory traffic, as `clflow split` does by default.
        let split = split_stage::Counted::new(
            manifest,
            name.clone(),
            &summary,
            split_stage::TrafficKind::Compulsory,
        );
        let source = kernel_source(&name, &report);
        let mut record = kernel_counts(&name, &summary);
        record.hotspots = Hotspots {
            coalesced: traffic.first().and_then(|t| {
                let bytes = &t.summary.coalescing.bytes;
                (bytes.total() > 0).then(|| bytes.coalesced() as f64 / bytes.total() as f64)
            }),
            ..source.hotspots()
        };
        kernels.push(Counted {
            facts,
            traffic,
            source,
            faults,
            manifest: manifest.to_path_buf(),
            input,
            launch,
            report,
            outputs: result.buffers,
            record,
            summary,
            name,
            split,
        });
    }
    Ok(kernels)
}

/// `reports/<source stem>` (lookup3.cl gives reports/lookup3), or
/// `reports/analysis` when the kernels come from several sources.
fn default_out(prepared: &[(KernelInput, Launch)]) -> PathBuf {
    let stems: Vec<String> = prepared
        .iter()
        .filter_map(|(input, _)| input.source.file_stem())
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let name = match stems.first() {
        Some(first) if stems.iter().all(|s| s == first) => first.clone(),
        _ => "analysis".to_string(),
    };
    PathBuf::from("reports").join(name)
}

/// How this analysis was run, for the report's header.
fn run_info(args: &AnalyzeOptions, kernels: &[Counted], devices: &[Selected]) -> RunInfo {
    let dims = |values: &[u64; 3], n: u8| values[..n as usize].to_vec();
    RunInfo {
        date: clflow_devices::rfc3339_utc(std::time::SystemTime::now()),
        clflow_version: env!("CARGO_PKG_VERSION").to_string(),
        command: args.command.clone(),
        ops: args.ops.to_string(),
        launches: kernels
            .iter()
            .map(|k| LaunchInfo {
                kernel: k.name.clone(),
                manifest: k.manifest.display().to_string(),
                global_size: dims(&k.launch.range.global, k.launch.range.dims),
                local_size: k.launch.range.local.map(|l| dims(&l, k.launch.range.dims)),
                source_commit: source_commit(&k.input.source),
            })
            .collect(),
        devices: devices
            .iter()
            .map(|d| RunDevice {
                name: d.info.name.clone(),
                platform: d.info.platform_name.clone(),
                driver: d.info.driver_version.clone(),
            })
            .collect(),
    }
}

/// The git commit of the repository holding `source` (`-dirty` where the
/// file has uncommitted changes); `None` outside a repository or without
/// git.
fn source_commit(source: &std::path::Path) -> Option<String> {
    let dir = source
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
    };
    let head = git(&["rev-parse", "--short=12", "HEAD"]).filter(|o| o.status.success())?;
    let commit = String::from_utf8_lossy(&head.stdout).trim().to_string();
    let name = source.file_name()?.to_string_lossy().into_owned();
    let clean = git(&["diff", "--quiet", "HEAD", "--", &name]).is_some_and(|o| o.status.success());
    Some(if clean {
        commit
    } else {
        format!("{commit}-dirty")
    })
}

fn title(kernels: &[Counted]) -> String {
    let names: Vec<&str> = kernels.iter().map(|k| k.name.as_str()).collect();
    format!("clflow analysis of {}", names.join(", "))
}

/// One history entry per kernel: its counts, named as `check` names them.
fn count_entries(kernels: &[Counted], ops: &OpSet) -> Vec<clflow_history::Entry> {
    kernels
        .iter()
        .map(|kernel| {
            let mut entry = history::entry(
                "analyze",
                &kernel.launch.kernel,
                &kernel.manifest,
                &kernel.input.source,
            );
            entry.op_set = Some(ops.to_string());
            entry.metrics = clflow_check::count_metrics(&kernel.report, None)
                .iter()
                .map(|(name, value)| history::metric(name, value.as_f64()))
                .collect();
            entry
        })
        .collect()
}

/// The predictions' section, saying on which devices clflow's model took
/// its costs from a quick plan (measured by `analyze` where the store had
/// none) and how to measure them in full.
fn predictions_section(
    predictions: &[clflow_predict::Predictions],
    devices: &[Selected],
    measured: &[Option<MeasuredProfile>],
) -> clflow_report::Section {
    let mut section = clflow_report::prediction::report_section(predictions);
    let quick: Vec<String> = devices
        .iter()
        .zip(measured)
        .filter(|(_, m)| m.as_ref().and_then(|m| m.costs).is_some_and(|c| c.quick))
        .map(|(d, _)| format!("{} (`clflow bench --device {}`)", d.name, d.info.index))
        .collect();
    if !quick.is_empty() {
        let note = format!(
            "clflow's model took its costs beyond throughput from a quick plan (short launches, \
             small tables) on {}; measured in full, they make its predictions sharper.",
            quick.join(", ")
        );
        section.html = format!(
            "<p class=\"notes\">{}</p>\n{}",
            clflow_report::escape(&note),
            section.html
        );
    }
    section
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opencl_device(index: usize, name: &str, kind: DeviceKind) -> DeviceInfo {
        DeviceInfo::described(index, "Test Platform", name, kind)
    }

    #[test]
    fn the_split_pairs_the_first_cpu_with_the_first_other_device() {
        use DeviceKind::{Accelerator, Cpu, Gpu};
        assert_eq!(cpu_gpu_pair([Cpu, Gpu]), Some((0, 1)));
        assert_eq!(cpu_gpu_pair([Gpu, Accelerator, Cpu, Cpu]), Some((2, 0)));
        assert_eq!(cpu_gpu_pair([Cpu]), None);
        assert_eq!(cpu_gpu_pair([Cpu, Cpu]), None);
        assert_eq!(cpu_gpu_pair([Gpu, Accelerator]), None);
        assert_eq!(cpu_gpu_pair([]), None);
    }

    #[test]
    fn the_section_names_the_pair_only_among_more_devices() {
        let selected = |index, name: &str, kind| Selected {
            info: opencl_device(index, name, kind),
            name: name.to_string(),
            cache: None,
            order: None,
        };
        let devices = vec![
            selected(0, "NVIDIA A100 <SXM>", DeviceKind::Gpu),
            selected(1, "AMD EPYC 7763", DeviceKind::Cpu),
        ];
        assert_eq!(pair_note(&devices, 1, 0), "");
        let mut three = devices;
        three.push(selected(2, "Other CPU", DeviceKind::Cpu));
        let note = pair_note(&three, 1, 0);
        assert!(
            note.starts_with(
                "<p>Of the 3 devices analyzed, C is the first CPU, AMD EPYC 7763, and G the \
                 first other device, NVIDIA A100 &lt;SXM&gt;."
            ),
            "{note}"
        );
        assert!(note.contains("<code>clflow split MANIFEST... --device 1,0</code>"));
    }
}
