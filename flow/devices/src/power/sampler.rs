//! The sampling thread every live sensor shares: it reads a probe at a fixed
//! period until stopped, then the readings become a [`PowerTrace`].

use super::{PowerSample, PowerSource, PowerTrace, SensorError};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// 20 Hz: above the 10 Hz the method needs, cheap for every source.
pub const DEFAULT_PERIOD: Duration = Duration::from_millis(50);

/// One reading of a probe. Either part may be missing: RAPL has only an
/// energy counter, some NVML devices only power.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Reading {
    /// Power at this instant, watts.
    pub watts: Option<f64>,
    /// Energy since an arbitrary origin, joules, never decreasing (the probe
    /// resolves counter wrap-around).
    pub energy_j: Option<f64>,
}

/// Reads one source once.
pub(crate) trait Probe: Send + 'static {
    fn read(&mut self) -> Result<Reading, SensorError>;
}

type Readings = Vec<(f64, Reading)>;

struct Running<P> {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<(P, Result<Readings, SensorError>)>,
    kernel: String,
    started: Instant,
}

/// A probe plus the thread that samples it.
pub(crate) struct Sampler<P: Probe> {
    source: PowerSource,
    period: Duration,
    idle: Option<P>,
    running: Option<Running<P>>,
}

impl<P: Probe> Sampler<P> {
    pub(crate) fn new(source: PowerSource, probe: P, period: Duration) -> Self {
        Sampler { source, period, idle: Some(probe), running: None }
    }

    pub(crate) fn start(&mut self, kernel: &str) -> Result<(), SensorError> {
        let Some(mut probe) = self.idle.take() else {
            return Err(SensorError::new(
                self.source,
                "started twice without a stop",
            ));
        };
        let stop = Arc::new(AtomicBool::new(false));
        let stop_flag = Arc::clone(&stop);
        let period = self.period;
        let started = Instant::now();
        let thread = std::thread::spawn(move || {
            let mut readings = Vec::new();
            let result = loop {
                // Read once more after the stop request, so the trace covers
                // the whole interval.
                let last = stop_flag.load(Ordering::Acquire);
                match probe.read() {
                    Ok(reading) => readings.push((started.elapsed().as_secs_f64(), reading)),
                    Err(err) => break Err(err),
                }
                if last {
                    break Ok(readings);
                }
                // Sleep to the next multiple of the period, so reads do
                // not drift; `stop` unparks the thread early.
                let elapsed = started.elapsed().as_nanos();
                let period_ns = period.as_nanos().max(1);
                let wait = period_ns - elapsed % period_ns;
                std::thread::park_timeout(Duration::from_nanos(wait as u64));
            };
            (probe, result)
        });
        self.running = Some(Running { stop, thread, kernel: kernel.to_string(), started });
        Ok(())
    }

    /// Ends sampling; `sensor` names the sensor in the trace.
    pub(crate) fn stop(&mut self, sensor: String) -> Result<PowerTrace, SensorError> {
        let Some(running) = self.running.take() else {
            return Err(SensorError::new(self.source, "stopped without a start"));
        };
        running.stop.store(true, Ordering::Release);
        running.thread.thread().unpark();
        let duration_s = running.started.elapsed().as_secs_f64();
        let (probe, result) = running
            .thread
            .join()
            .map_err(|_| SensorError::new(self.source, "the sampling thread panicked"))?;
        self.idle = Some(probe);
        let readings = result?;
        Ok(trace_from_readings(
            self.source,
            sensor,
            running.kernel,
            duration_s,
            &readings,
        ))
    }
}

/// Turns timed readings into a trace. Power samples are the instantaneous
/// readings where the source gives them, else the energy counter's rate
/// between consecutive readings (at the interval's midpoint). The mean is
/// energy over time where there is a counter, else the samples' average.
pub fn trace_from_readings(
    source: PowerSource,
    sensor: String,
    kernel: String,
    duration_s: f64,
    readings: &[(f64, Reading)],
) -> PowerTrace {
    let direct: Vec<PowerSample> = readings
        .iter()
        .filter_map(|(t, r)| r.watts.map(|watts| PowerSample { t_s: *t, watts }))
        .collect();
    let counted: Vec<(f64, f64)> = readings
        .iter()
        .filter_map(|(t, r)| r.energy_j.map(|e| (*t, e)))
        .collect();
    let samples = if direct.is_empty() {
        counted
            .windows(2)
            .filter(|w| w[1].0 > w[0].0)
            .map(|w| PowerSample {
                t_s: (w[0].0 + w[1].0) / 2.0,
                watts: (w[1].1 - w[0].1) / (w[1].0 - w[0].0),
            })
            .collect()
    } else {
        direct
    };
    let energy = match (counted.first(), counted.last()) {
        (Some(first), Some(last)) if counted.len() >= 2 => {
            Some((last.1 - first.1, last.0 - first.0))
        }
        _ => None,
    };
    let peak_w = samples.iter().map(|s| s.watts).max_by(f64::total_cmp);
    let mean_w = match energy {
        Some((joules, seconds)) if seconds > 0.0 => Some(joules / seconds),
        _ if !samples.is_empty() => {
            Some(samples.iter().map(|s| s.watts).sum::<f64>() / samples.len() as f64)
        }
        _ => None,
    };
    let mut notes = Vec::new();
    if samples.is_empty() {
        notes.push("the interval was too short for a power sample".to_string());
    }
    PowerTrace {
        source,
        sensor,
        kernel,
        duration_s,
        samples,
        peak_w,
        mean_w,
        energy_j: energy.map(|(joules, _)| joules),
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn energy(t: f64, j: f64) -> (f64, Reading) {
        (t, Reading { watts: None, energy_j: Some(j) })
    }

    #[test]
    fn energy_counters_become_power_samples() {
        let readings = [energy(0.0, 100.0), energy(0.5, 150.0), energy(1.0, 250.0)];
        let trace = trace_from_readings(PowerSource::Rapl, "x".into(), "k".into(), 1.0, &readings);
        assert_eq!(
            trace.samples,
            [
                PowerSample { t_s: 0.25, watts: 100.0 },
                PowerSample { t_s: 0.75, watts: 200.0 }
            ]
        );
        assert_eq!(trace.peak_w, Some(200.0));
        assert_eq!(trace.energy_j, Some(150.0));
        assert_eq!(trace.mean_w, Some(150.0));
        assert_eq!(trace.integrated_energy_j(), Some(75.0));
    }

    #[test]
    fn instantaneous_power_is_used_as_read() {
        let reading = |t: f64, w: f64, j: f64| (t, Reading { watts: Some(w), energy_j: Some(j) });
        let readings = [reading(0.0, 80.0, 0.0), reading(0.1, 120.0, 10.0)];
        let trace = trace_from_readings(PowerSource::Nvml, "x".into(), "k".into(), 0.1, &readings);
        assert_eq!(trace.samples.len(), 2);
        assert_eq!(trace.peak_w, Some(120.0));
        assert_eq!(trace.energy_j, Some(10.0));
        assert!((trace.mean_w.unwrap() - 100.0).abs() < 1e-9);
    }

    struct Counting(u32);
    impl Probe for Counting {
        fn read(&mut self) -> Result<Reading, SensorError> {
            self.0 += 1;
            Ok(Reading { watts: Some(f64::from(self.0)), energy_j: None })
        }
    }

    #[test]
    fn the_thread_samples_at_the_period_until_stopped() {
        let mut sampler = Sampler::new(PowerSource::Hwmon, Counting(0), Duration::from_millis(10));
        sampler.start("k").unwrap();
        std::thread::sleep(Duration::from_millis(120));
        let trace = sampler.stop("counting".into()).unwrap();
        // 100 Hz for 120 ms, plus the final read: about 13; allow a slow machine.
        assert!(trace.samples.len() >= 4, "{} samples", trace.samples.len());
        assert_eq!(trace.peak_w, Some(trace.samples.len() as f64));
        assert_eq!(trace.kernel, "k");
        // The probe comes back and can sample again.
        sampler.start("again").unwrap();
        assert!(!sampler.stop("counting".into()).unwrap().samples.is_empty());
        assert!(sampler.stop("counting".into()).is_err());
    }
}
