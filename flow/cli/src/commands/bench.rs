//! `clflow bench`: a device's measured peaks (the paper's F̂_f, F̂_i, B̂, P̂),
//! measured once and kept in the measured-profile store until `--refresh`.

use crate::output::{print_json, Verbosity};
use clap::Args;
use clflow_bench::{render_table, Measurement, Mode};
use clflow_devices::MeasuredProfile;
use clflow_pipeline::bench::{self, Needs};
use clflow_pipeline::Session;
use serde::Serialize;
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  clflow bench --device 0
      measure device 0 once (minutes) and store its profile; later runs reuse it
  clflow bench --device pocl --quick
      seconds, not minutes: small buffers and few repetitions (never stands in for a full run)
  clflow bench --device gpu --only mad-chain/float -v
      one family of benchmarks, each figure shown; nothing is stored
  clflow bench --device 0 --refresh --json
      measure again, replacing the stored profile; print it and the measurements as JSON

F̂_f and F̂_i come from chains of multiply-adds at vector widths 1 to 16, B̂ from streaming
kernels (copy, scale, add, triad, read, write), P̂ from the device's power sensor (NVML, RAPL or
hwmon) while they run. For clflow's model, `update` scales an array in place (what a CPU's
write-backs of lines it read cost beside the reads; no peak), and `costs` times what throughput
does not cover: a chain of dependent operations, local atomics, barriers, mispredicted branches,
scattered loads from the last-level cache (tables of four sizes), a float sum carried across a
`noinline` call, loads, stores and copies a page apart in walks of 64 to 4,096 steps a
work-item, calls of sin, cos, exp, log and pow vectorised, lane by lane and one a step of a page
walk, a page walk with a kept call a step (storing alone and copying), work-groups that walk
windows of 1 to 64 MiB a line a step, and work-groups that walk down a table's columns 1, 4 and 16
lines of a row at a time (`--only costs` runs them alone).
A run says what it measures and about how long it will take, then shows how far it is. It stores
the peaks as soon as they are measured, then the costs: interrupted, a first run keeps its peaks
(the next run measures the costs alone), and a --refresh leaves the stored profile as it was.
Profiles are stored in $CLFLOW_DATA_DIR/measured (else ~/.local/share/clflow/measured);
`clflow devices` shows which devices have one.";

/// Stage 1: a device's peak throughput, bandwidth and power, measured.
#[derive(Args)]
#[command(
    long_about = "Measure one device's peaks with microbenchmarks (the paper's stage 1): float and \
    integer throughput F̂_f and F̂_i, global-memory bandwidth B̂, and peak power P̂ where a sensor \
    serves the device. The profile is stored and reused by analyze, predict and split until \
    --refresh measures again.",
    after_help = EXAMPLES
)]
pub struct BenchArgs {
    /// The device: its index in `clflow devices`, or a case-insensitive part
    /// of its platform and device name. Default: the first device.
    #[arg(long, short = 'd', value_name = "SEL", value_parser = super::selector)]
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
    let session = Session::new(&verbosity);
    let device = match &args.device {
        Some(selector) => session.device(selector)?,
        None => session.device_at(0)?,
    };
    let mode = Mode::quick_if(args.quick);
    // A broken user profile directory must not stop a measurement: the
    // datasheet only adds context (and the spec power of last resort).
    let datasheet = session
        .catalog()
        .match_name(&device.info.name)
        .map(|m| m.profile);
    let all = session.device_infos();
    let obtained = match &args.only {
        Some(only) => bench::measure_only(device, &all, datasheet, mode, only, &verbosity)?,
        None => bench::obtain(
            device,
            &all,
            datasheet,
            Needs::all(mode),
            args.refresh,
            &verbosity,
        )?,
    };
    if obtained.reused() {
        verbosity.note(format!(
            "device {}: {}: profile measured {} by clflow {} (--refresh measures again)",
            device.info.index,
            device.info.label(),
            obtained.profile.measured_at,
            obtained.profile.clflow_version
        ));
    }
    let output = BenchOutput {
        device: device.info.label(),
        device_index: device.info.index,
        reused: obtained.reused(),
        stored_at: obtained.stored_at.clone(),
        power_sensor: obtained.power_sensor.clone(),
        profile: &obtained.profile,
        measurement: obtained.measurement.as_ref(),
    };
    show(&output, args.json)
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
