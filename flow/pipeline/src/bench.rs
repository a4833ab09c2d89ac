//! Stage 1's measurement of one device: its power sensor and the
//! microbenchmarks, with their progress.

use crate::{Error, Observer};
use clflow_bench::{run_benchmarks, Event, Measurement, Mode};
use clflow_devices::power::{choose_sensor, PowerSensor, SensorChoice, SensorOptions};
use clflow_devices::{DatasheetProfile, MeasuredProfile};
use clflow_ocl::{DeviceInfo, OclDevice};

/// Marks a stored profile measured with `--quick`: a later full run measures
/// again rather than reuse it.
pub const QUICK_NOTE: &str = "quick run: small buffers and few repetitions; \
run `clflow bench` without --quick for figures to rely on";

pub fn is_quick(profile: &MeasuredProfile) -> bool {
    profile.notes.iter().any(|n| n == QUICK_NOTE)
}

/// The power sensor that serves the device; none is not an error. `all` is
/// every OpenCL device (a sensor may be matched by the device's position).
pub fn sensor_for(
    device: &OclDevice,
    all: &[DeviceInfo],
    datasheet: Option<&DatasheetProfile>,
) -> SensorChoice {
    choose_sensor(&device.info, all, datasheet, &SensorOptions::from_env())
}

/// Runs the benchmarks (those whose name contains `only`, or all), each
/// one a step of the `bench` phase.
pub fn measure(
    device: &OclDevice,
    mode: Mode,
    only: Option<&str>,
    choice: &mut SensorChoice,
    observer: &dyn Observer,
) -> crate::Result<Measurement> {
    let phase = observer.phase("bench");
    let mut on_event = |event: Event<'_>| match event {
        Event::Starting { index, total, id } => {
            phase.set_length(total as u64);
            phase.set_position(index as u64);
            phase.set_message(id);
        }
        Event::Finished { index, result, .. } => {
            phase.set_position(index as u64 + 1);
            phase.suspend(&mut || {
                observer.detail(format!(
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
    run_benchmarks(device, mode, only, sensor, &mut on_event).map_err(|err| {
        Error::from(err).with_hint(
            "run with -v for each benchmark's figures; `clflow devices` shows the device",
        )
    })
}
