//! `clflow bench`: a device's measured peaks (the paper's F̂_f, F̂_i, B̂, P̂),
//! measured once and kept in the measured-profile store until `--refresh`.

use crate::failure::Failure;
use crate::output::{print_json, Verbosity};
use clap::Args;
use clflow_bench::{
    datasheet_notes, render_table, run_benchmarks, BenchError, Event, Measurement, Mode,
};
use clflow_core::FailureKind;
use clflow_devices::power::{choose_sensor, PowerSensor, SensorChoice, SensorOptions};
use clflow_devices::{
    DatasheetProfile, DevicesError, MeasuredProfile, MeasuredStore, ProfileCatalog,
};
use clflow_ocl::{discover, select_device, DeviceSelector, OclDevice, OclError};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Marks a stored profile measured with `--quick`: a later full run measures
/// again rather than reuse it.
pub(crate) const QUICK_NOTE: &str = "quick run: small buffers and few repetitions; \
run `clflow bench` without --quick for figures to rely on";

#[derive(Args)]
pub struct BenchArgs {
    /// The device: its index in `clflow devices`, or a case-insensitive part
    /// of its platform and device name. Default: the first device.
    #[arg(long, short = 'd', value_name = "SEL")]
    device: Option<String>,
    /// Print the profile (and this run's measurements) as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Measure again even if a profile of this device is stored.
    #[arg(long)]
    refresh: bool,
    /// Small buffers, widths 1 and 4 only, few repetitions: seconds, not
    /// minutes (for tests). Never stands in for a full profile.
    #[arg(long)]
    quick: bool,
    /// Run only the benchmarks whose name contains this (e.g. `triad/`,
    /// `mad-chain/float`); the figures are shown, not stored.
    #[arg(long, value_name = "TEXT")]
    only: Option<String>,
}

/// What `--json` prints.
#[derive(Serialize)]
struct BenchOutput<'a> {
    device: String,
    device_index: usize,
    /// Whether the profile was read from the store rather than measured now.
    reused: bool,
    /// Where the profile is stored; `null` where no store is configured.
    stored_at: Option<PathBuf>,
    power_sensor: Option<String>,
    profile: &'a MeasuredProfile,
    /// This run's measurements in full (times, sizes, power traces); absent
    /// when the profile was reused.
    #[serde(skip_serializing_if = "Option::is_none")]
    measurement: Option<&'a Measurement>,
}

pub fn run(args: BenchArgs, verbosity: Verbosity) -> crate::Result<()> {
    let selector = args.device.as_deref().map(DeviceSelector::parse);
    let device = select_device(selector.as_ref()).map_err(ocl_failure)?;
    let label = format!("{}: {}", device.info.index, device.info.label());
    let mode = if args.quick { Mode::Quick } else { Mode::Full };
    let store = MeasuredStore::from_env();
    let identity = clflow_devices::DeviceIdentity::of(&device.info);

    if !args.refresh && args.only.is_none() {
        if let Some(store) = &store {
            let stored = store.load(&identity).map_err(devices_failure)?;
            if let Some(profile) = stored.filter(|p| mode == Mode::Quick || !is_quick(p)) {
                verbosity.note(format!(
                    "device {label}: profile measured {} by clflow {} (--refresh measures again)",
                    profile.measured_at, profile.clflow_version
                ));
                let output = BenchOutput {
                    device: device.info.label(),
                    device_index: device.info.index,
                    reused: true,
                    stored_at: Some(store.path_for(&identity)),
                    power_sensor: None,
                    profile: &profile,
                    measurement: None,
                };
                return show(&output, args.json);
            }
        }
    }

    // A broken user profile directory must not stop a measurement: the
    // datasheet only adds context (and the spec power of last resort).
    let catalog = ProfileCatalog::load(None).unwrap_or_else(|err| {
        verbosity.note(format!("datasheet profiles not read: {err}"));
        ProfileCatalog::embedded().unwrap_or_default()
    });
    let datasheet = catalog.match_name(&device.info.name).map(|m| m.profile);
    let mut choice = sensor_for(&device, datasheet);
    verbosity.note(format!(
        "device {label}: measuring ({} mode); power: {}",
        if args.quick { "quick" } else { "full" },
        choice.description
    ));
    for note in &choice.notes {
        verbosity.detail(format!("  power: {note}"));
    }
    let measurement = measure(&device, mode, args.only.as_deref(), &mut choice, verbosity)?;
    let mut profile = measurement.to_profile(env!("CARGO_PKG_VERSION"));
    if let Some(datasheet) = datasheet {
        profile.notes.extend(datasheet_notes(&profile, datasheet));
    }
    if args.quick {
        profile.notes.push(QUICK_NOTE.to_string());
    }
    let stored_at = match &store {
        _ if args.only.is_some() => None,
        Some(store) => Some(store.save(&profile).map_err(devices_failure)?),
        None => {
            verbosity.note("no data directory (set CLFLOW_DATA_DIR or HOME): profile not stored");
            None
        }
    };
    let output = BenchOutput {
        device: device.info.label(),
        device_index: device.info.index,
        reused: false,
        stored_at,
        power_sensor: choice.source.map(|_| choice.description.clone()),
        profile: &profile,
        measurement: Some(&measurement),
    };
    show(&output, args.json)
}

pub(crate) fn is_quick(profile: &MeasuredProfile) -> bool {
    profile.notes.iter().any(|n| n == QUICK_NOTE)
}

/// The power sensor that serves the device; none is not an error.
pub(crate) fn sensor_for(device: &OclDevice, datasheet: Option<&DatasheetProfile>) -> SensorChoice {
    let all = discover().unwrap_or_default();
    choose_sensor(&device.info, &all, datasheet, &SensorOptions::from_env())
}

/// Runs the benchmarks with a progress bar on a terminal.
pub(crate) fn measure(
    device: &OclDevice,
    mode: Mode,
    only: Option<&str>,
    choice: &mut SensorChoice,
    verbosity: Verbosity,
) -> crate::Result<Measurement> {
    let bar = if verbosity >= Verbosity::Normal && std::io::stderr().is_terminal() {
        ProgressBar::new(0)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {msg}")
            .expect("the template is valid"),
    );
    let mut on_event = |event: Event<'_>| match event {
        Event::Starting { index, total, id } => {
            bar.set_length(total as u64);
            bar.set_position(index as u64);
            bar.set_message(id.to_string());
        }
        Event::Finished { result, .. } => {
            bar.inc(1);
            bar.suspend(|| {
                verbosity.detail(format!(
                    "  {}: {:.2} {} best, {:.2} median",
                    result.id,
                    result.rate.best / clflow_bench::Unit::SCALE,
                    result.unit.symbol(),
                    result.rate.median / clflow_bench::Unit::SCALE
                ))
            });
        }
    };
    let sensor = choice
        .sensor
        .as_deref_mut()
        .map(|s| s as &mut dyn PowerSensor);
    let result = run_benchmarks(device, mode, only, sensor, &mut on_event);
    bar.finish_and_clear();
    result.map_err(bench_failure)
}

fn show(output: &BenchOutput<'_>, json: bool) -> crate::Result<()> {
    if json {
        return print_json(output);
    }
    print!("{}", render_table(output.profile));
    if let Some(path) = &output.stored_at {
        println!("profile: {}", path.display());
    }
    Ok(())
}

/// A failure of the kind (input or analysis) the stage crate gave it.
fn failure_of(kind: FailureKind, message: impl std::fmt::Display) -> Failure {
    match kind {
        FailureKind::Input => Failure::input(message),
        FailureKind::Analysis => Failure::analysis(message),
    }
}

fn ocl_failure(err: OclError) -> Failure {
    let failure = failure_of(err.kind(), &err);
    match err {
        OclError::Selector { .. } => {
            failure.with_hint("pass --device with an index or a part of a name listed above")
        }
        OclError::NoPlatform { .. } | OclError::NoDevice { .. } => {
            failure.with_hint("`clflow devices` lists what the OpenCL runtime sees")
        }
        _ => failure,
    }
}

fn devices_failure(err: DevicesError) -> Failure {
    let hint = err.hint();
    let failure = failure_of(err.kind(), &err);
    match hint {
        Some(hint) => failure.with_hint(hint),
        None => failure,
    }
}

fn bench_failure(err: BenchError) -> Failure {
    failure_of(err.kind(), &err)
        .with_hint("run with -v for each benchmark's figures; `clflow devices` shows the device")
}
