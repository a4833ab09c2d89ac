//! The paper's derived metrics (§3.2, eqs. 1–4, 7, 8) for one kernel on one
//! device, each a `Figure` whose provenance follows from its inputs.

use crate::figure::{Figure, Unit};
use crate::model::{Ceilings, DeviceProfile, Hotspots, KernelCounts, OpKind, ResultSet, Run};
use serde::{Deserialize, Serialize};

/// What limits the kernel on the device, judged from its intensity range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// The whole intensity range lies left of the ridge point.
    Memory,
    /// The whole intensity range lies at or right of the ridge point.
    Compute,
    /// The range straddles the ridge: the traffic the caches save decides.
    Either,
}

impl Bound {
    pub fn name(self) -> &'static str {
        match self {
            Bound::Memory => "memory",
            Bound::Compute => "compute",
            Bound::Either => "memory or compute",
        }
    }
}

/// Eq. 7 at one intensity: min(I·B, F).
pub fn attainable(intensity: f64, bandwidth: f64, peak: f64) -> f64 {
    (intensity * bandwidth).min(peak)
}

/// The intensity at which the bandwidth slope meets the compute ceiling: F/B.
pub fn ridge(peak: f64, bandwidth: f64) -> f64 {
    peak / bandwidth
}

/// Every metric of one kernel × device. Figures that need an input the
/// results lack (a run, a power reading, a ceiling) are `None`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub kernel: String,
    pub device: String,
    pub ops: OpKind,
    /// W.
    pub work: Figure,
    /// Q accessed and compulsory.
    pub traffic_accessed: Figure,
    pub traffic_compulsory: Option<Figure>,
    /// I at each level of the device's memory (W over the bytes crossing
    /// into it), nearest the core first: the hierarchical roofline.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<LevelPoint>,
    /// Where W and Q concentrate, from the count (the finding's levers).
    #[serde(default, skip_serializing_if = "Hotspots::is_empty")]
    pub hotspots: Hotspots,
    /// The lower of W/Q accessed and W/Q compulsory (eq. 1; its provenance
    /// says which): W/Q accessed where every byte is used, W/Q compulsory
    /// where whole lines move more than the kernel touches (scattered
    /// access).
    pub intensity_min: Option<Figure>,
    /// The higher of the two; equal to I_min where Q is one number.
    pub intensity_max: Option<Figure>,
    /// T.
    pub time: Option<Figure>,
    /// F = W/T (eq. 3).
    pub performance: Option<Figure>,
    /// P (peak over the kernel's launches) and the mean.
    pub power_peak: Option<Figure>,
    pub power_mean: Option<Figure>,
    /// R = F/P (eq. 4).
    pub perf_per_watt: Option<Figure>,
    /// E = T·P (eq. 2).
    pub energy: Option<Figure>,
    /// T times the mean power: the energy a peak-power E overestimates.
    pub energy_from_mean_power: Option<Figure>,
    /// Energy the sensor integrated itself.
    pub energy_measured: Option<Figure>,
    /// The ceilings the roofline uses: measured where known, else datasheet.
    pub compute_ceiling: Option<Figure>,
    pub bandwidth_ceiling: Option<Figure>,
    pub power_ceiling: Option<Figure>,
    /// F̂/B̂, in OPS/B.
    pub ridge: Option<Figure>,
    /// Eq. 7 at I_max (the upper bound on attainable performance) and at I_min.
    pub attainable: Option<Figure>,
    pub attainable_at_min_intensity: Option<Figure>,
    /// F / attainable.
    pub fraction_of_attainable: Option<Figure>,
    pub bound: Option<Bound>,
    /// Eq. 8 at I_max: min(I·B̂/P̂, F̂/P̂).
    pub attainable_per_watt: Option<Figure>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The ceiling the roofline uses for one figure: measured where known.
fn preferred<'a>(
    device: &'a DeviceProfile,
    pick: impl Fn(&'a Ceilings) -> Option<&'a Figure>,
) -> Option<&'a Figure> {
    pick(&device.measured).or_else(|| pick(&device.datasheet))
}

/// `numerator / denominator` as a derived figure, or `None` where the
/// denominator is missing or not positive.
fn ratio(
    numerator: &Figure,
    denominator: Option<&Figure>,
    unit: Unit,
    equation: &str,
) -> Option<Figure> {
    let denominator = denominator.filter(|d| d.value > 0.0)?;
    Some(Figure::derived(
        numerator.value / denominator.value,
        unit,
        &[numerator, denominator],
        equation,
    ))
}

fn product(a: Option<&Figure>, b: Option<&Figure>, unit: Unit, equation: &str) -> Option<Figure> {
    let (a, b) = (a?, b?);
    Some(Figure::derived(a.value * b.value, unit, &[a, b], equation))
}

/// Eq. 7 at an intensity, as a figure.
fn roof(intensity: &Figure, bandwidth: &Figure, peak: &Figure) -> Figure {
    Figure::derived(
        attainable(intensity.value, bandwidth.value, peak.value),
        Unit::OpsPerSecond,
        &[intensity, bandwidth, peak],
        "min(I·B̂, F̂) (eq. 7)",
    )
}

/// One point of the hierarchical roofline: I at a memory level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelPoint {
    pub level: String,
    pub intensity: Figure,
}

/// Derives every metric of `kernel` on `device` from the `run`, if any.
pub fn evaluate(kernel: &KernelCounts, device: &DeviceProfile, run: Option<&Run>) -> Metrics {
    let mut notes = run.map(|r| r.notes.clone()).unwrap_or_default();
    let work = &kernel.work;
    let intensity_accessed = ratio(
        work,
        Some(&kernel.traffic_accessed),
        Unit::OpsPerByte,
        "I = W/Q accessed (eq. 1)",
    );
    let intensity_compulsory = match &kernel.traffic_compulsory {
        Some(q) => ratio(
            work,
            Some(q),
            Unit::OpsPerByte,
            "I = W/Q compulsory (eq. 1)",
        ),
        None => intensity_accessed.clone(),
    };
    let (intensity_min, intensity_max) = match (intensity_accessed, intensity_compulsory) {
        (Some(a), Some(c)) if c.value < a.value => (Some(c), Some(a)),
        (a, c) => (a, c),
    };
    if intensity_max.is_none() {
        notes.push("Q is zero: the kernel moves no global memory, so I is unbounded".into());
    }

    let time = run.and_then(|r| r.time.clone());
    let power_peak = run.and_then(|r| r.power_peak.clone());
    let power_mean = run.and_then(|r| r.power_mean.clone());
    let performance = ratio(work, time.as_ref(), Unit::OpsPerSecond, "F = W/T (eq. 3)");
    let perf_per_watt = performance.as_ref().and_then(|f| {
        ratio(
            f,
            power_peak.as_ref(),
            Unit::OpsPerSecondPerWatt,
            "R = F/P (eq. 4)",
        )
    });
    let energy = product(
        time.as_ref(),
        power_peak.as_ref(),
        Unit::Joules,
        "E = T·P (eq. 2)",
    );
    let energy_from_mean_power = product(
        time.as_ref(),
        power_mean.as_ref(),
        Unit::Joules,
        "T · mean power",
    );

    let compute_ceiling = preferred(device, |c| c.compute(kernel.ops)).cloned();
    let bandwidth_ceiling = preferred(device, |c| c.bandwidth.as_ref()).cloned();
    let power_ceiling = preferred(device, |c| c.power.as_ref()).cloned();
    let ridge = compute_ceiling
        .as_ref()
        .and_then(|f| ratio(f, bandwidth_ceiling.as_ref(), Unit::OpsPerByte, "F̂/B̂"));

    let roof_at =
        |intensity: &Option<Figure>| match (intensity, &bandwidth_ceiling, &compute_ceiling) {
            (Some(i), Some(b), Some(f)) => Some(roof(i, b, f)),
            _ => None,
        };
    let attainable_fig = roof_at(&intensity_max);
    let attainable_at_min_intensity = roof_at(&intensity_min);
    let fraction_of_attainable = performance
        .as_ref()
        .and_then(|f| ratio(f, attainable_fig.as_ref(), Unit::Ratio, "F / attainable"));
    let bound = match (&ridge, &intensity_min, &intensity_max) {
        (Some(ridge), Some(low), Some(high)) => Some(if high.value < ridge.value {
            Bound::Memory
        } else if low.value >= ridge.value {
            Bound::Compute
        } else {
            Bound::Either
        }),
        _ => None,
    };
    let attainable_per_watt = attainable_fig.as_ref().and_then(|a| {
        ratio(
            a,
            power_ceiling.as_ref(),
            Unit::OpsPerSecondPerWatt,
            "min(I·B̂/P̂, F̂/P̂) (eq. 8)",
        )
    });
    if compute_ceiling.is_none() {
        notes.push(format!(
            "no {} compute ceiling for `{}`: attainable performance unknown",
            kernel.ops.name(),
            device.name
        ));
    }

    Metrics {
        kernel: kernel.kernel.clone(),
        device: device.name.clone(),
        ops: kernel.ops,
        work: work.clone(),
        traffic_accessed: kernel.traffic_accessed.clone(),
        traffic_compulsory: kernel.traffic_compulsory.clone(),
        hotspots: kernel.hotspots.clone(),
        levels: run
            .map(|r| r.levels.as_slice())
            .unwrap_or_default()
            .iter()
            .filter_map(|l| {
                Some(LevelPoint {
                    level: l.level.clone(),
                    intensity: ratio(
                        work,
                        Some(&l.traffic),
                        Unit::OpsPerByte,
                        &format!("I = W/Q at {}", l.level),
                    )?,
                })
            })
            .collect(),
        intensity_min,
        intensity_max,
        time,
        performance,
        power_peak,
        power_mean,
        perf_per_watt,
        energy,
        energy_from_mean_power,
        energy_measured: run.and_then(|r| r.energy_measured.clone()),
        compute_ceiling,
        bandwidth_ceiling,
        power_ceiling,
        ridge,
        attainable: attainable_fig,
        attainable_at_min_intensity,
        fraction_of_attainable,
        bound,
        attainable_per_watt,
        notes,
    }
}

impl ResultSet {
    /// The metrics of every kernel on every device, kernels in order, then
    /// devices in order. A pair with no run still gets its attainable
    /// performance: what the kernel could reach there.
    pub fn evaluate(&self) -> Vec<Metrics> {
        let mut all = Vec::new();
        for kernel in &self.kernels {
            for device in &self.devices {
                all.push(evaluate(
                    kernel,
                    device,
                    self.run(&kernel.kernel, &device.name),
                ));
            }
        }
        all
    }

    /// Runs naming a kernel or device the set does not describe: they cannot
    /// be evaluated (one line each, for the user).
    pub fn unmatched_runs(&self) -> Vec<String> {
        self.runs
            .iter()
            .filter_map(|run| {
                if self.kernel(&run.kernel).is_none() {
                    Some(format!(
                        "run of `{}` on `{}`: no counts (W, Q) for kernel `{}`",
                        run.kernel, run.device, run.kernel
                    ))
                } else if self.device(&run.device).is_none() {
                    Some(format!(
                        "run of `{}` on `{}`: no ceilings for device `{}`",
                        run.kernel, run.device, run.device
                    ))
                } else {
                    None
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::Provenance;

    fn kernel(w: f64, q_accessed: f64, q_compulsory: Option<f64>) -> KernelCounts {
        KernelCounts {
            kernel: "k".into(),
            ops: OpKind::Float,
            op_set: None,
            work: Figure::measured(w, Unit::Ops, "count"),
            traffic_accessed: Figure::measured(q_accessed, Unit::Bytes, "count"),
            traffic_compulsory: q_compulsory.map(|q| Figure::measured(q, Unit::Bytes, "count")),
            hotspots: Default::default(),
        }
    }

    fn device() -> DeviceProfile {
        DeviceProfile {
            name: "d".into(),
            kind: None,
            measured: Ceilings {
                float: Some(Figure::measured(100e9, Unit::OpsPerSecond, "bench")),
                bandwidth: Some(Figure::measured(10e9, Unit::BytesPerSecond, "bench")),
                ..Ceilings::default()
            },
            datasheet: Ceilings {
                power: Some(Figure::datasheet(50.0, Unit::Watts, "sheet")),
                ..Ceilings::default()
            },
        }
    }

    /// Scattered access: whole lines move more bytes than the kernel
    /// touches, so W/Q compulsory is the lower wall, and is named so.
    #[test]
    fn the_walls_are_ordered_and_keep_their_names() {
        let m = evaluate(&kernel(1e9, 1e8, Some(4e8)), &device(), None);
        let low = m.intensity_min.as_ref().unwrap();
        let high = m.intensity_max.as_ref().unwrap();
        assert_eq!((low.value, high.value), (2.5, 10.0));
        assert_eq!(low.source.as_deref(), Some("I = W/Q compulsory (eq. 1)"));
        assert_eq!(high.source.as_deref(), Some("I = W/Q accessed (eq. 1)"));
        // Memory-bound over the whole range: the ridge is 10.
        assert_eq!(m.bound, Some(Bound::Either));
        assert_eq!(m.attainable.as_ref().unwrap().value, 100e9);
    }

    #[test]
    fn an_intensity_range_across_the_ridge_is_either_bound() {
        // W = 1e9, Q 1e9..1e8 bytes: I from 1 to 10 OPS/B; ridge 100/10 = 10.
        let m = evaluate(&kernel(1e9, 1e9, Some(1e8)), &device(), None);
        assert_eq!(m.intensity_min.as_ref().unwrap().value, 1.0);
        assert_eq!(m.intensity_max.as_ref().unwrap().value, 10.0);
        assert_eq!(m.ridge.as_ref().unwrap().value, 10.0);
        assert_eq!(m.bound, Some(Bound::Either));
        assert_eq!(m.attainable.as_ref().unwrap().value, 100e9);
        assert_eq!(m.attainable_at_min_intensity.as_ref().unwrap().value, 10e9);
        // I from 10 to 20: at or right of the ridge throughout.
        let m = evaluate(&kernel(1e9, 1e8, Some(5e7)), &device(), None);
        assert_eq!(m.bound, Some(Bound::Compute));
        assert_eq!(m.attainable.as_ref().unwrap().value, 100e9);

        // I from 1 to 5: left of the ridge throughout.
        let m = evaluate(&kernel(1e9, 1e9, Some(2e8)), &device(), None);
        assert_eq!(m.bound, Some(Bound::Memory));
        assert_eq!(m.attainable.as_ref().unwrap().value, 50e9);
        // Eq. 8 divides by the datasheet power: the result is datasheet-grade.
        let per_watt = m.attainable_per_watt.unwrap();
        assert_eq!(per_watt.value, 1e9);
        assert_eq!(per_watt.provenance, Provenance::Datasheet);
        assert!(m.performance.is_none() && m.energy.is_none());
    }

    #[test]
    fn a_run_gives_performance_power_and_energy() {
        let mut run = Run::new("k", "d");
        run.time = Some(Figure::measured(0.5, Unit::Seconds, "events"));
        run.power_peak = Some(Figure::imported(40.0, Unit::Watts, "vendor tool"));
        run.power_mean = Some(Figure::imported(30.0, Unit::Watts, "vendor tool"));
        let m = evaluate(&kernel(1e9, 1e9, None), &device(), Some(&run));
        let f = m.performance.unwrap();
        assert_eq!(f.value, 2e9);
        assert_eq!(f.provenance, Provenance::Measured);
        let r = m.perf_per_watt.unwrap();
        assert_eq!(r.value, 2e9 / 40.0);
        assert_eq!(r.provenance, Provenance::Imported);
        assert_eq!(m.energy.unwrap().value, 20.0);
        assert_eq!(m.energy_from_mean_power.unwrap().value, 15.0);
        assert_eq!(m.bound, Some(Bound::Memory));
        assert_eq!(m.attainable.as_ref().unwrap().value, 10e9);
        assert!((m.fraction_of_attainable.unwrap().value - 0.2).abs() < 1e-12);
    }

    #[test]
    fn zero_traffic_and_missing_ceilings_are_noted_not_divided() {
        let mut d = device();
        d.measured.float = None;
        let m = evaluate(&kernel(1e9, 0.0, None), &d, None);
        assert!(m.intensity_min.is_none() && m.attainable.is_none() && m.bound.is_none());
        assert_eq!(m.notes.len(), 2, "{:?}", m.notes);
    }
}
