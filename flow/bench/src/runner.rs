//! Runs the benchmarks on one device: sizes them, fills their buffers,
//! warms up, times with profiling events, samples power, and summarises.

use crate::args::{compute_launch, stream_arrays, stream_launch, Array};
use crate::catalog::{all_benchmarks, Benchmark, Lane};
use crate::data::random_bytes;
use crate::error::{BenchError, Result};
use crate::progress::{Event, Step, Steps};
use crate::sizing::{Mode, Plan};
use crate::work::{Shape, Unit, Work};
use clflow_devices::power::{PowerSensor, PowerTrace};
use clflow_devices::Statistic;
use clflow_ocl::{DeviceInfo, OclDevice, OclError, PreparedLaunch, Session, SharedBuffer};
use serde::{Deserialize, Serialize};

/// Repetitions of the short launch that calibrates a compute benchmark.
const CALIBRATION_REPS: u32 = 4;
/// The argument of a compute kernel that takes its repetitions.
const REPS_ARG: usize = 3;
/// Bounds on a compute kernel's repetitions, whatever the calibration says.
const MAX_REPS: u64 = 1 << 20;

/// One benchmark's measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
    pub id: String,
    pub benchmark: Benchmark,
    pub unit: Unit,
    pub shape: Shape,
    /// What one launch moves and computes.
    pub work: Work,
    /// Kernel time of every timed launch, profiling START to END.
    pub times_ns: Vec<u64>,
    /// Bytes or operations per second over the timed launches.
    pub rate: Statistic,
    /// Power sampled during the timed launches, where a sensor serves the device.
    pub power: Option<PowerTrace>,
}

/// A benchmark the device cannot run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub id: String,
    pub reason: String,
}

/// Everything one run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub device: DeviceInfo,
    pub plan: Plan,
    pub results: Vec<BenchResult>,
    pub skipped: Vec<Skipped>,
    /// What went wrong with power sampling, if anything (never fatal).
    pub notes: Vec<String>,
    /// An empty kernel's cost, where measured (`crate::launch`).
    #[serde(default)]
    pub launch: Option<clflow_devices::LaunchOverhead>,
    /// What work-items pay beyond throughput, where measured (`crate::costs`).
    #[serde(default)]
    pub costs: Option<clflow_devices::OpCosts>,
}

/// The benchmarks `device` runs at the sizes `mode` asks for (those whose
/// id contains `only`, where given), and the ones it cannot run, with why.
fn selected(device: &DeviceInfo, mode: Mode, only: Option<&str>) -> (Vec<Benchmark>, Vec<Skipped>) {
    let (mut runnable, skipped) = split_supported(device, mode.widths());
    if let Some(only) = only {
        runnable.retain(|bench| bench.id().contains(only));
    }
    (runnable, skipped)
}

/// The steps [`run_benchmarks`] runs on `device` with `plan`: each
/// benchmark, then the empty kernel where wanted, with expected seconds.
pub fn steps(device: &DeviceInfo, plan: &Plan, only: Option<&str>) -> Vec<Step> {
    let (runnable, _) = selected(device, plan.mode, only);
    let mut filled: Option<Lane> = None;
    let mut steps: Vec<Step> = runnable
        .iter()
        .map(|bench| {
            // The first stream benchmark of a lane type makes its arrays.
            let fill = match bench {
                Benchmark::Bandwidth { data, .. } if filled != Some(data.lane) => {
                    filled = Some(data.lane);
                    (ARRAYS * plan.stream_bytes) as f64 / ARRAY_BYTES_PER_S
                }
                Benchmark::Bandwidth { .. } => 0.0,
                Benchmark::Compute { .. } => {
                    filled = None;
                    0.0
                }
            };
            Step::new(bench.id(), fill + expected_s(*bench, plan))
        })
        .collect();
    if only.is_none_or(|only| crate::launch::ID.contains(only)) {
        steps.push(Step::new(crate::launch::ID, crate::launch::EXPECTED_S));
    }
    steps
}

/// The seconds a runtime takes to build a benchmark's program.
const BUILD_S: f64 = 0.3;

/// Streamed bytes a second assumed before any are measured.
const ASSUMED_BYTES_PER_S: f64 = 10e9;

/// The stream arrays of a lane type, and the bytes a second they are made
/// and sent to the device at.
const ARRAYS: u64 = Array::ALL.len() as u64;
const ARRAY_BYTES_PER_S: f64 = 1e9;

/// A benchmark's expected seconds: its build, and its launches at the
/// plan's target time (compute) or streamed at an assumed bandwidth.
fn expected_s(bench: Benchmark, plan: &Plan) -> f64 {
    let launches = (plan.warmups + plan.repetitions) as f64;
    BUILD_S
        + match bench {
            Benchmark::Compute { .. } => (launches + 1.0) * plan.compute_target_ns as f64 * 1e-9,
            Benchmark::Bandwidth { data, .. } => {
                let elements = plan.stream_elements(data.bytes());
                let bytes = bench
                    .work(Shape::Stream { elements })
                    .map_or(0, |w| w.bytes);
                bytes as f64 * launches / ASSUMED_BYTES_PER_S
            }
        }
}

/// Runs every benchmark `device` supports at the sizes `mode` asks for
/// (only those whose id contains `only`, where given), sampling `sensor`
/// during the timed launches of each, and the empty kernel: the steps of
/// [`steps`], each told to `on_event`. The cost benchmarks run apart
/// ([`crate::costs::measure`]).
pub fn run_benchmarks<'s>(
    device: &OclDevice,
    mode: Mode,
    only: Option<&str>,
    sensor: Option<&'s mut (dyn PowerSensor + 's)>,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<Measurement> {
    let info = &device.info;
    let plan = Plan::for_device(info, mode).map_err(|small| BenchError::TooSmall {
        device: info.label(),
        needed: small.needed,
        available: small.available,
    })?;
    let (runnable, skipped) = selected(info, mode, only);
    let planned = steps(info, &plan, only);
    let mut runner = Runner {
        device,
        plan,
        sensor,
        notes: Vec::new(),
        results: Vec::with_capacity(runnable.len()),
    };
    let mut steps = Steps::new(&planned, on_event);
    runner.run_all(&runnable, &mut steps)?;
    let launch = match planned.last().is_some_and(|s| s.id == crate::launch::ID) {
        false => None,
        true => Some(steps.run(
            crate::launch::ID,
            || crate::launch::measure(device, &plan),
            |l| {
                format!(
                    "{:.1} µs empty, {:.3} µs a work-group",
                    l.empty_s * 1e6,
                    l.per_group_s * 1e6
                )
            },
        )?),
    };
    debug_assert!(steps.finished());
    Ok(Measurement {
        device: info.clone(),
        plan,
        results: runner.results,
        skipped,
        notes: runner.notes,
        launch,
        costs: None,
    })
}

/// The catalogue split into what `device` can run and what it cannot, with why.
fn split_supported(device: &DeviceInfo, widths: &[u8]) -> (Vec<Benchmark>, Vec<Skipped>) {
    let mut runnable = Vec::new();
    let mut skipped = Vec::new();
    for bench in all_benchmarks(widths) {
        match bench.data().lane.unsupported_on(device) {
            None => runnable.push(bench),
            Some(reason) => skipped.push(Skipped { id: bench.id(), reason: reason.to_string() }),
        }
    }
    (runnable, skipped)
}

struct Runner<'d, 's> {
    device: &'d OclDevice,
    plan: Plan,
    sensor: Option<&'s mut (dyn PowerSensor + 's)>,
    notes: Vec<String>,
    results: Vec<BenchResult>,
}

/// One lane type's stream arrays, made on the device once for every stream
/// benchmark of that type (making them costs more than timing a kernel).
struct StreamArrays {
    lane: Lane,
    session: Session,
    buffers: [SharedBuffer; 3],
}

impl StreamArrays {
    fn buffer(&self, array: Array) -> &SharedBuffer {
        &self.buffers[array as usize]
    }
}

impl Runner<'_, '_> {
    fn run_all(&mut self, benchmarks: &[Benchmark], steps: &mut Steps<'_, '_>) -> Result<()> {
        let mut arrays: Option<StreamArrays> = None;
        for &bench in benchmarks {
            let result = steps.run(
                &bench.id(),
                || self.run_one(bench, &mut arrays),
                |result| {
                    format!(
                        "{:.2} {} best, {:.2} median",
                        result.rate.best / Unit::SCALE,
                        result.unit.symbol(),
                        result.rate.median / Unit::SCALE
                    )
                },
            )?;
            self.results.push(result);
        }
        Ok(())
    }

    fn run_one(
        &mut self,
        bench: Benchmark,
        arrays: &mut Option<StreamArrays>,
    ) -> Result<BenchResult> {
        let ocl = |source| ocl_error(bench, source);
        let program = bench.program(self.plan.unroll)?;
        match bench {
            Benchmark::Bandwidth { kernel, data } => {
                if !matches!(&arrays, Some(made) if made.lane == data.lane) {
                    // Free the old arrays before making the new ones.
                    drop(arrays.take());
                    *arrays = Some(self.fill(data.lane).map_err(ocl)?);
                }
                let made = arrays.as_ref().expect("made just above");
                let elements = self.plan.stream_elements(data.bytes());
                let launch = stream_launch(kernel, data, Plan::stream_work_items(elements));
                let shared: Vec<(usize, &SharedBuffer)> = stream_arrays(&launch)
                    .into_iter()
                    .map(|(index, array)| (index, made.buffer(array)))
                    .collect();
                let prepared =
                    PreparedLaunch::on(&made.session, &program, &launch, &shared).map_err(ocl)?;
                let (times, power) = self.time(bench, prepared)?;
                self.summarise(bench, Shape::Stream { elements }, times, power)
            }
            Benchmark::Compute { op, data } => {
                // The stream arrays are done with: give their memory back.
                drop(arrays.take());
                let work_items = self.plan.compute_work_items;
                let launch = compute_launch(op, data, work_items, CALIBRATION_REPS);
                let mut prepared =
                    PreparedLaunch::new(self.device, &program, &launch).map_err(ocl)?;
                let reps = self.calibrate(&mut prepared).map_err(ocl)?;
                prepared
                    .set_scalar(REPS_ARG, &reps.to_le_bytes())
                    .map_err(ocl)?;
                let (times, power) = self.time(bench, prepared)?;
                let shape =
                    Shape::Compute { work_items, reps: u64::from(reps), unroll: self.plan.unroll };
                self.summarise(bench, shape, times, power)
            }
        }
    }

    /// Three arrays of pseudo-random `lane` values, one seed each, in a
    /// session of their own.
    fn fill(&self, lane: Lane) -> std::result::Result<StreamArrays, OclError> {
        let session = Session::new(self.device)?;
        let bytes = self.plan.stream_bytes;
        let made =
            |array: Array, seed| session.buffer(&random_bytes(lane, bytes, seed), array.name());
        let buffers = [made(Array::A, 1)?, made(Array::B, 2)?, made(Array::C, 3)?];
        Ok(StreamArrays { lane, session, buffers })
    }

    /// Repetitions that make one launch of a compute benchmark last about
    /// the plan's target time, from a short launch (of
    /// [`CALIBRATION_REPS`]) after a warm-up one.
    fn calibrate(&self, prepared: &mut PreparedLaunch<'_>) -> std::result::Result<u32, OclError> {
        // The first launch carries the runtime's compilation for the work-group size.
        prepared.launch()?;
        let ns = prepared.launch()?.max(1);
        let reps = (u64::from(CALIBRATION_REPS) * self.plan.compute_target_ns).div_ceil(ns);
        Ok(reps.clamp(1, MAX_REPS) as u32)
    }

    /// Warm-up launches, then the timed ones with the power sensor running.
    fn time(
        &mut self,
        bench: Benchmark,
        mut prepared: PreparedLaunch<'_>,
    ) -> Result<(Vec<u64>, Option<PowerTrace>)> {
        let ocl = |source| ocl_error(bench, source);
        prepared.time_repeated(self.plan.warmups).map_err(ocl)?;
        let sampling = self.start_sensor(&bench.id());
        let times = prepared.time_repeated(self.plan.repetitions);
        let power = if sampling { self.stop_sensor() } else { None };
        Ok((times.map_err(ocl)?, power))
    }

    fn start_sensor(&mut self, id: &str) -> bool {
        let Some(sensor) = self.sensor.as_deref_mut() else {
            return false;
        };
        match sensor.start(id) {
            Ok(()) => true,
            Err(err) => {
                self.sensor_failed(format!("{id}: {err}"));
                false
            }
        }
    }

    fn stop_sensor(&mut self) -> Option<PowerTrace> {
        let result = self.sensor.as_deref_mut()?.stop();
        match result {
            Ok(trace) => Some(trace),
            Err(err) => {
                self.sensor_failed(err.to_string());
                None
            }
        }
    }

    /// A sensor that fails once is not asked again in this run.
    fn sensor_failed(&mut self, message: String) {
        self.notes
            .push(format!("power sampling stopped: {message}"));
        self.sensor = None;
    }

    fn summarise(
        &self,
        bench: Benchmark,
        shape: Shape,
        times_ns: Vec<u64>,
        power: Option<PowerTrace>,
    ) -> Result<BenchResult> {
        let work = bench
            .work(shape)
            .expect("the runner pairs each benchmark with its own family's shape");
        let rate = rate_statistic(bench, work, &times_ns).ok_or_else(|| BenchError::NoTime {
            benchmark: bench.id(),
            resolution_ns: self.device.info.profiling_timer_resolution_ns,
        })?;
        Ok(BenchResult {
            id: bench.id(),
            benchmark: bench,
            unit: bench.unit(),
            shape,
            work,
            times_ns,
            rate,
            power,
        })
    }
}

/// Best, median and spread of the rates of launches of `work` that took
/// `times_ns` each; `None` when no launch took measurable time.
pub fn rate_statistic(bench: Benchmark, work: Work, times_ns: &[u64]) -> Option<Statistic> {
    let rates: Vec<f64> = times_ns
        .iter()
        .filter(|&&ns| ns > 0)
        .map(|&ns| bench.rate(work, ns as f64))
        .collect();
    Statistic::of_rates(&rates)
}

fn ocl_error(bench: Benchmark, source: OclError) -> BenchError {
    BenchError::Ocl { benchmark: bench.id(), source }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{DataType, StreamKernel};

    #[test]
    fn rates_summarise_a_fixed_sample_of_times() {
        let copy = Benchmark::Bandwidth {
            kernel: StreamKernel::Copy,
            data: DataType::new(Lane::Float, 4),
        };
        // 1e9 bytes in 100, 125, 200 and 250 ms: 10, 8, 5 and 4 GB/s.
        let work = Work { bytes: 1_000_000_000, ops: 0 };
        let times = [125_000_000, 250_000_000, 100_000_000, 200_000_000];
        let stat = rate_statistic(copy, work, &times).unwrap();
        assert!((stat.best - 10e9).abs() < 1.0);
        assert!((stat.median - 6.5e9).abs() < 1.0);
        assert!((stat.spread - 6.0 / 6.5).abs() < 1e-9);
        assert_eq!(stat.samples, 4);
        // A zero time says nothing; all zeros give no statistic.
        assert_eq!(
            rate_statistic(copy, work, &[0, 100_000_000])
                .unwrap()
                .samples,
            1
        );
        assert!(rate_statistic(copy, work, &[0, 0]).is_none());
    }

    #[test]
    fn unsupported_types_are_skipped_with_the_reason() {
        let mut info = crate::fake::device(1 << 32, 1 << 30, 1 << 20, 2);
        info.fp64 = false;
        info.fp16 = false;
        let (runnable, skipped) = split_supported(&info, &crate::catalog::WIDTHS);
        assert_eq!(skipped.len(), 11);
        assert!(skipped
            .iter()
            .any(|s| s.id == "mad-chain/double8" && s.reason == "the device lacks cl_khr_fp64"));
        assert!(skipped.iter().any(|s| s.id == "mad-chain/half"));
        assert_eq!(runnable.len() + skipped.len(), 112);
    }
}
