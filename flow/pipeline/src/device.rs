//! The run stage on one device (paper §4.2, steps 3 and 4): build the kernel
//! from source on the device, check its first launch's outputs against the
//! interpreter's, warm up, then time repeated launches with profiling events
//! until their kernel time spans at least `min_time` (so that slow power
//! sensors see the kernel), sampling the device's power over them.

use crate::count::{interpret, Watch};
use crate::input::KernelInput;
use crate::outputs::{compare_outputs, OutputCheck};
use crate::{Counts, Observer, Phase};
use crate::{Error, Session};
use clflow_check::TimedRun;
use clflow_core::Launch;
use clflow_devices::power::{choose_sensor, PowerSource, PowerTrace, SensorOptions};
use clflow_interp::OutputBuffer;
use clflow_interp::RunOptions;
use clflow_metrics::{Figure, Provenance, Run, Unit};
use clflow_ocl::{DeviceInfo, OclDevice, OclError, PreparedLaunch, ProgramSource};
use clflow_spirv::Module;
use serde::Serialize;
use std::borrow::Cow;
use std::path::Path;
use std::time::Instant;

/// The `--min-time` argument: seconds of kernel time, finite and not negative.
pub fn check_min_time(seconds: f64) -> crate::Result<()> {
    if seconds.is_finite() && seconds >= 0.0 {
        Ok(())
    } else {
        Err(Error::input(format!(
            "--min-time {seconds}: give a number of seconds, 0 or more"
        )))
    }
}

/// How long and how often to time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimingPlan {
    /// Untimed launches after the first (which checks the outputs and
    /// absorbs the runtime's compilation).
    pub warmups: usize,
    /// Keep launching until the timed launches' kernel time reaches this.
    pub min_time_s: f64,
    /// At least this many timed launches, whatever their time.
    pub min_launches: usize,
    /// Exactly this many timed launches, overriding `min_time_s`.
    pub repetitions: Option<usize>,
    /// Stop at this many launches even short of `min_time_s` (tiny kernels
    /// whose launch overhead dwarfs them), and say so.
    pub max_launches: usize,
    /// Stop once the timing has taken this many times `min_time_s` of wall
    /// time (at least [`MIN_WALL_S`]), and say so: a kernel of microseconds
    /// may need tens of thousands of launches, each costing the host far
    /// more than the kernel.
    pub max_wall_factor: f64,
}

/// The wall time any timing may take, however small `min_time_s`.
pub const MIN_WALL_S: f64 = 2.0;

impl Default for TimingPlan {
    fn default() -> Self {
        TimingPlan {
            warmups: 2,
            min_time_s: 1.0,
            min_launches: 5,
            repetitions: None,
            max_launches: 100_000,
            max_wall_factor: 10.0,
        }
    }
}

impl TimingPlan {
    /// The default plan, timing until `min_time_s` of kernel time.
    pub fn lasting(min_time_s: f64) -> TimingPlan {
        TimingPlan { min_time_s, ..TimingPlan::default() }
    }
}

/// START→END times of the timed launches, summarised.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timing {
    pub launches: usize,
    /// The median launch: the T every metric uses.
    pub median_s: f64,
    pub min_s: f64,
    pub max_s: f64,
    pub mean_s: f64,
    /// Sample standard deviation over the mean; `None` for one launch.
    pub cv: Option<f64>,
    /// Kernel time of all timed launches together.
    pub total_s: f64,
    /// Host time of the program build on the device.
    pub build_s: f64,
    pub warmup_s: Vec<f64>,
    pub times_ns: Vec<u64>,
}

impl Timing {
    /// `None` for no launch.
    pub fn of(times_ns: Vec<u64>, warmup_ns: &[u64], build_s: f64) -> Option<Timing> {
        if times_ns.is_empty() {
            return None;
        }
        let seconds: Vec<f64> = times_ns.iter().map(|&t| t as f64 * 1e-9).collect();
        let mut sorted = seconds.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median_s = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        let total_s: f64 = seconds.iter().sum();
        let mean_s = total_s / n as f64;
        let cv = (n > 1 && mean_s > 0.0).then(|| {
            let variance =
                seconds.iter().map(|s| (s - mean_s).powi(2)).sum::<f64>() / (n - 1) as f64;
            variance.sqrt() / mean_s
        });
        Some(Timing {
            launches: n,
            median_s,
            min_s: sorted[0],
            max_s: sorted[n - 1],
            mean_s,
            cv,
            total_s,
            build_s,
            warmup_s: warmup_ns.iter().map(|&t| t as f64 * 1e-9).collect(),
            times_ns,
        })
    }
}

/// What the power sensor saw over the timed launches.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PowerReading {
    pub source: PowerSource,
    pub sensor: String,
    /// The paper's P: the highest sample over the kernel's launches.
    pub peak_w: Option<f64>,
    pub mean_w: Option<f64>,
    /// Energy the sensor counted over the whole sampled interval.
    pub energy_j: Option<f64>,
    pub duration_s: f64,
    pub samples: usize,
    pub notes: Vec<String>,
}

impl PowerReading {
    fn of(trace: PowerTrace) -> Self {
        PowerReading {
            source: trace.source,
            sensor: trace.sensor,
            peak_w: trace.peak_w,
            mean_w: trace.mean_w,
            energy_j: trace.energy_j,
            duration_s: trace.duration_s,
            samples: trace.samples.len(),
            notes: trace.notes,
        }
    }

    fn provenance(&self) -> Provenance {
        match self.source {
            PowerSource::Spec => Provenance::Datasheet,
            PowerSource::Import => Provenance::Imported,
            PowerSource::Nvml | PowerSource::Rapl | PowerSource::Hwmon => Provenance::Measured,
        }
    }
}

/// Everything one run of a kernel on a device measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceRun {
    pub device: String,
    pub device_index: usize,
    pub driver: String,
    pub kernel: String,
    pub outputs: OutputCheck,
    pub timing: Timing,
    /// `None` where no sensor serves the device (or it failed: see notes).
    pub power: Option<PowerReading>,
    pub notes: Vec<String>,
}

impl DeviceRun {
    /// The record the metrics crate derives F, R, E from.
    pub fn to_metrics_run(&self, kernel: &str, device: &str) -> Run {
        let t = &self.timing;
        let mut run = Run::new(kernel, device);
        let spread =
            t.cv.map(|cv| format!(", CV {:.1}%", cv * 100.0))
                .unwrap_or_default();
        run.time = Some(Figure::measured(
            t.median_s,
            Unit::Seconds,
            format!(
                "OpenCL profiling events, median of {} launches (min {}{spread})",
                t.launches,
                Unit::Seconds.format(t.min_s)
            ),
        ));
        if let Some(power) = &self.power {
            let provenance = power.provenance();
            let figure = |watts: f64, what: &str| {
                Figure::new(
                    watts,
                    Unit::Watts,
                    provenance,
                    format!("{} ({}), {what}", power.sensor, power.source),
                )
            };
            run.power_peak = power
                .peak_w
                .map(|w| figure(w, "peak over the timed launches"));
            run.power_mean = power
                .mean_w
                .map(|w| figure(w, "mean over the timed launches"));
            // The counter covers every launch and the gaps between them: its
            // mean power over that interval times one launch's T.
            run.energy_measured = power
                .energy_j
                .filter(|_| power.duration_s > 0.0)
                .map(|joules| {
                    Figure::new(
                        joules / power.duration_s * t.median_s,
                        Unit::Joules,
                        provenance,
                        format!(
                            "{} counter: {} over {} of launches, prorated to one launch",
                            power.source,
                            Unit::Joules.format(joules),
                            Unit::Seconds.format(power.duration_s)
                        ),
                    )
                });
        }
        run.notes = self.notes.clone();
        if self.outputs.is_wrong() {
            run.notes.insert(0, self.outputs.summary());
        }
        run
    }
}

/// The names the kernel's SPIR-V declares it needs (`Float64`, `Float16`)
/// that `device` lacks, as extension names.
pub fn missing_extensions(module: &Module, device: &DeviceInfo) -> Vec<&'static str> {
    let capabilities = clflow_spirv::summary(module).capabilities;
    let uses = |cap: &str| capabilities.iter().any(|c| c == cap);
    let mut missing = Vec::new();
    if uses("Float64") && !device.fp64 {
        missing.push("cl_khr_fp64");
    }
    if uses("Float16") && !device.fp16 {
        missing.push("cl_khr_fp16");
    }
    missing
}

/// What `run_on_device` needs to know about the kernel.
pub struct KernelOnDevice<'a> {
    pub source: &'a Path,
    pub build_options: &'a str,
    pub module: &'a Module,
    pub launch: &'a Launch,
    /// The interpreter's output buffers; `None` skips the comparison.
    pub reference: Option<&'a [OutputBuffer]>,
}

impl<'a> KernelOnDevice<'a> {
    /// The compiled kernel `input` holds, launched as `launch`.
    pub fn new(
        input: &'a KernelInput,
        launch: &'a Launch,
        reference: Option<&'a [OutputBuffer]>,
    ) -> Self {
        KernelOnDevice {
            source: &input.source,
            build_options: &input.build_options,
            module: &input.module,
            launch,
            reference,
        }
    }
}

/// Runs the kernel on `device` as the module doc says, as the `run` phase:
/// its progress in milliseconds of kernel time towards `min_time_s`. The
/// session gives every device (to pick the right sensor among identical
/// boards) and the datasheet the device's name matches (the spec power of
/// last resort).
pub fn run_on_device(
    session: &Session,
    device: &OclDevice,
    kernel: &KernelOnDevice<'_>,
    plan: &TimingPlan,
) -> crate::Result<DeviceRun> {
    let observer = session.observer();
    let all = session.device_infos();
    let datasheet = session
        .catalog()
        .match_name(&device.info.name)
        .map(|m| m.profile);
    let phase = observer.phase("run", Counts::Steps);
    let progress = &*phase;
    let info = &device.info;
    let missing = missing_extensions(kernel.module, info);
    if !missing.is_empty() {
        return Err(Error::input(format!(
            "{}: device {} lacks {}, which kernel `{}` needs",
            kernel.source.display(),
            info.label(),
            missing.join(" and "),
            kernel.launch.kernel
        ))
        .with_hint("pick a device whose `clflow devices` entry says fp64/fp16 yes"));
    }
    let source = ProgramSource::from_file(kernel.source, kernel.build_options)
        .map_err(|e| ocl_failure(e, observer))?;
    progress.set_message(&format!("building on {}", info.name));
    let mut prepared = PreparedLaunch::new(device, &source, kernel.launch).map_err(|e| {
        let mut failure = None;
        let mut e = Some(e);
        progress.suspend(&mut || failure = e.take().map(|e| ocl_failure(e, observer)));
        failure.expect("suspend runs its closure")
    })?;
    let build_s = prepared.build_time.as_secs_f64();
    let chatter = prepared.build_chatter.trim_end();
    if !chatter.is_empty() {
        progress
            .suspend(&mut || observer.detail(format!("{} build output:\n{chatter}", info.name)));
    }

    // The first launch computes on the manifest's inputs as they are (rw
    // buffers are restored only before later launches): its outputs are the
    // ones to compare.
    progress.set_message("first launch");
    let first_ns = prepared.launch().map_err(|e| ocl_failure(e, observer))?;
    let outputs = match kernel.reference {
        Some(reference) => {
            let got = prepared
                .read_outputs()
                .map_err(|e| ocl_failure(e, observer))?;
            compare_outputs(kernel.launch, reference, &got)
        }
        None => OutputCheck::NotCompared { reason: "no interpreter run to compare with".into() },
    };
    let mut warmup_ns = vec![first_ns];
    warmup_ns.extend(
        prepared
            .time_repeated(plan.warmups)
            .map_err(|e| ocl_failure(e, observer))?,
    );

    let mut choice = choose_sensor(info, &all, datasheet, &SensorOptions::from_env());
    let mut notes: Vec<String> = Vec::new();
    let mut sensor = choice.sensor.take();
    if let Some(s) = sensor.as_mut() {
        if let Err(e) = s.start(&kernel.launch.kernel) {
            notes.push(format!("power not sampled: {e}"));
            sensor = None;
        }
    } else {
        notes.push(format!("no power sensor: {}", choice.notes.join("; ")));
    }
    let times = timed_launches(&mut prepared, plan, &warmup_ns, progress, &mut notes);
    // Stop the sensor whatever the launches did, so its thread ends.
    let power = sensor.map(|mut s| s.stop());
    let times = times.map_err(|e| ocl_failure(e, observer))?;
    let power = match power {
        Some(Ok(trace)) => Some(PowerReading::of(trace)),
        Some(Err(e)) => {
            notes.push(format!("power not sampled: {e}"));
            None
        }
        None => None,
    };
    let timing = Timing::of(times, &warmup_ns, build_s).ok_or_else(|| {
        Error::analysis(format!(
            "kernel `{}` on {}: no timed launch",
            kernel.launch.kernel,
            info.label()
        ))
    })?;
    Ok(DeviceRun {
        device: info.label(),
        device_index: info.index,
        driver: info.driver_version.clone(),
        kernel: kernel.launch.kernel.clone(),
        outputs,
        timing,
        power,
        notes,
    })
}

/// Timed launches until the plan is met. Batches grow from what the
/// warm-up launches took, so that a fast kernel is not held up by one
/// progress update per launch.
fn timed_launches(
    prepared: &mut PreparedLaunch<'_>,
    plan: &TimingPlan,
    warmup_ns: &[u64],
    progress: &dyn Phase,
    notes: &mut Vec<String>,
) -> clflow_ocl::Result<Vec<u64>> {
    let target_ns = (plan.min_time_s.max(0.0) * 1e9) as u64;
    let (wanted, by_time) = match plan.repetitions {
        Some(n) => (n.max(1), false),
        None => (plan.min_launches.max(1), true),
    };
    if by_time {
        progress.set_length(target_ns / 1_000_000);
    } else {
        progress.set_length(wanted as u64);
    }
    progress.set_message("timing");
    let estimate_ns = warmup_ns.iter().copied().min().unwrap_or(0).max(1);
    let max_wall_s = (plan.min_time_s * plan.max_wall_factor).max(MIN_WALL_S);
    // What a launch takes on the wall, host included: known after the
    // first batch, which is kept small.
    let mut wall_per_launch_ns: Option<u64> = None;
    let mut times = Vec::new();
    let mut total_ns: u64 = 0;
    let started = Instant::now();
    loop {
        let remaining = if by_time {
            let by_count = wanted.saturating_sub(times.len());
            let by_duration = (target_ns.saturating_sub(total_ns) / estimate_ns) as usize;
            by_count.max(by_duration).max(1)
        } else {
            wanted - times.len()
        };
        // Batches of at most ~a tenth of a second keep the bar moving.
        let per_launch_ns = wall_per_launch_ns.unwrap_or(estimate_ns).max(estimate_ns);
        let batch = remaining
            .min((100_000_000 / per_launch_ns).max(1) as usize)
            .min(if wall_per_launch_ns.is_none() {
                16
            } else {
                usize::MAX
            })
            .min(plan.max_launches - times.len());
        let batch_started = Instant::now();
        let batch_times = prepared.time_repeated(batch)?;
        wall_per_launch_ns =
            Some((batch_started.elapsed().as_nanos() as u64 / batch as u64).max(1));
        total_ns += batch_times.iter().sum::<u64>();
        times.extend(batch_times);
        if by_time {
            progress.set_position((total_ns / 1_000_000).min(target_ns / 1_000_000));
        } else {
            progress.set_position(times.len() as u64);
        }
        let done = if by_time {
            total_ns >= target_ns && times.len() >= wanted
        } else {
            times.len() >= wanted
        };
        if done {
            break;
        }
        let out_of_time =
            by_time && times.len() >= wanted && started.elapsed().as_secs_f64() >= max_wall_s;
        if times.len() >= plan.max_launches || out_of_time {
            notes.push(format!(
                "stopped at {} launches ({} of kernel time in {:.1} s): short of the {} s asked for{}",
                times.len(),
                clflow_metrics::Unit::Seconds.format(total_ns as f64 * 1e-9),
                started.elapsed().as_secs_f64(),
                plan.min_time_s,
                if out_of_time {
                    "; each launch costs the host far more than the kernel takes"
                } else {
                    ""
                }
            ));
            break;
        }
    }
    Ok(times)
}

/// An OpenCL error as a failure; a failed build prints its whole log first.
pub fn ocl_failure(err: OclError, observer: &dyn Observer) -> Error {
    if let OclError::Build { log, .. } = &err {
        observer.note(format!("build log:\n{}", log.trim_end()));
    }
    let failure = Error::from_diagnostic(&err);
    match err {
        OclError::Selector { .. } => failure.with_hint(
            "pass --device an index or a part of a name listed above (`clflow devices`)",
        ),
        OclError::NoPlatform { .. } | OclError::NoDevice { .. } => {
            failure.with_hint("`clflow devices` lists what the OpenCL runtime sees")
        }
        OclError::Build { .. } => failure
            .with_hint("the device's compiler rejected the kernel; the build log is printed above"),
        _ => failure,
    }
}

/// The interpreter's output buffers, to compare the device's with.
pub fn reference_outputs(
    manifest: &Path,
    input: &KernelInput,
    launch: &Launch,
    observer: &dyn Observer,
) -> crate::Result<Vec<OutputBuffer>> {
    let options = RunOptions::default();
    let counted = interpret(
        manifest,
        &input.module,
        Cow::Borrowed(launch),
        &options,
        Watch::default(),
        observer,
    );
    Ok(counted?.run.buffers)
}

/// `check`'s device timer: each selector's device, timed with the default
/// plan; a wrong result fails the check.
pub fn time_for_check(
    input: &KernelInput,
    launch: &Launch,
    reference: &[OutputBuffer],
    selectors: &[String],
    session: &Session,
) -> crate::Result<Vec<TimedRun>> {
    let mut runs = Vec::new();
    for text in selectors {
        let device = session.device(text)?;
        let run = run_on_device(
            session,
            device,
            &KernelOnDevice::new(input, launch, Some(reference)),
            &TimingPlan::default(),
        )?;
        if run.outputs.is_wrong() {
            return Err(Error::analysis(format!(
                "kernel `{}` on {}: {}",
                run.kernel,
                run.device,
                run.outputs.summary()
            )));
        }
        runs.push(TimedRun {
            run: run.to_metrics_run(&run.kernel, &run.device),
            driver: Some(run.driver.clone()),
            time_spread: run.timing.cv,
        });
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_takes_the_median_min_and_sample_cv() {
        let t = Timing::of(vec![3_000, 1_000, 2_000, 2_000], &[9_000], 0.5).unwrap();
        assert_eq!(t.launches, 4);
        assert!((t.median_s - 2e-6).abs() < 1e-15);
        assert!((t.min_s - 1e-6).abs() < 1e-15);
        assert!((t.total_s - 8e-6).abs() < 1e-15);
        // sd of 3,1,2,2 (n-1) = sqrt(2/3); mean 2.
        assert!((t.cv.unwrap() - (2.0f64 / 3.0).sqrt() / 2.0).abs() < 1e-12);
        assert_eq!(Timing::of(vec![5], &[], 0.0).unwrap().cv, None);
        assert_eq!(Timing::of(vec![], &[], 0.0), None);
    }

    /// A kernel with doubles on a device without cl_khr_fp64 is refused by
    /// name before any build; the same device with fp64 takes it.
    #[test]
    fn doubles_need_a_device_with_fp64() {
        let daxpy =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernels/daxpy/daxpy.cl");
        let cache = tempfile::tempdir().unwrap();
        let compiled = clflow_compile::Compiler::discover()
            .expect("the compile toolchain (run ci/setup)")
            .with_cache_dir(Some(cache.path().to_path_buf()))
            .compile(&clflow_compile::CompileRequest::new(&daxpy, ""))
            .unwrap();
        let module = clflow_spirv::load(&compiled.spirv).unwrap();
        let mut device = clflow_ocl::discover()
            .expect("the PoCL device (ci/setup installs pocl-opencl-icd)")
            .remove(0);
        device.fp64 = true;
        assert!(missing_extensions(&module, &device).is_empty());
        device.fp64 = false;
        assert_eq!(missing_extensions(&module, &device), ["cl_khr_fp64"]);
    }
}
