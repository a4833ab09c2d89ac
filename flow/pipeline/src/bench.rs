//! Stage 1's measurement of one device, in two parts: the peaks the
//! roofline needs (the catalogue and the empty kernel), then the costs
//! clflow's model needs. Each part is measured only when a command needs
//! it and the store lacks it, with progress and a time estimate, and
//! stored as soon as it is measured, so that an interrupted run keeps what
//! was stored before it.

use crate::{Counts, Error, Observer, Phase};
use clflow_bench::{costs, run_benchmarks, Event, Measurement, Mode, Plan, Step};
use clflow_devices::power::{choose_sensor, PowerSensor, SensorChoice, SensorOptions};
use clflow_devices::{DatasheetProfile, DeviceIdentity, MeasuredProfile, MeasuredStore, OpCosts};
use clflow_ocl::{DeviceInfo, OclDevice};
use std::path::PathBuf;

/// Marks a stored profile whose peaks were measured with `--quick`: a later
/// full run measures again rather than reuse it.
pub const QUICK_NOTE: &str = "quick run: small buffers and few repetitions; \
run `clflow bench` without --quick for figures to rely on";

pub fn is_quick(profile: &MeasuredProfile) -> bool {
    profile.notes.iter().any(|n| n == QUICK_NOTE)
}

/// What a command needs of a device's measured profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needs {
    /// The peaks' plan: quick peaks never stand in for full ones.
    pub peaks: Mode,
    /// The costs' plan, where the command needs them: `Quick` takes any
    /// stored costs and measures quick ones where there are none (what
    /// `analyze` does, its report saying so); `Full` takes only full ones.
    pub costs: Option<Mode>,
}

impl Needs {
    /// Everything at `mode`: what `bench` and `predict` need.
    pub fn all(mode: Mode) -> Needs {
        Needs { peaks: mode, costs: Some(mode) }
    }

    /// Whether `profile` serves for the peaks.
    fn peaks_served_by(self, profile: &MeasuredProfile) -> bool {
        self.peaks == Mode::Quick || !is_quick(profile)
    }

    /// Whether `costs` serve.
    fn costs_served_by(self, costs: Option<&OpCosts>) -> bool {
        match self.costs {
            None => true,
            Some(Mode::Quick) => costs.is_some(),
            Some(Mode::Full) => costs.is_some_and(|c| !c.quick),
        }
    }
}

/// A device's measured profile as a command got it.
pub struct Obtained {
    pub profile: MeasuredProfile,
    /// What this run measured of it (none where the store had it all; the
    /// costs alone leave `results` empty).
    pub measurement: Option<Measurement>,
    /// Where it is stored, where a store is configured and it was written.
    pub stored_at: Option<PathBuf>,
    /// The power sensor sampled, where one served and something was measured.
    pub power_sensor: Option<String>,
}

impl Obtained {
    /// Whether it was read from the store whole.
    pub fn reused(&self) -> bool {
        self.measurement.is_none()
    }
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

/// The device's profile in the measured store, if it holds one.
pub fn load_stored(
    store: &MeasuredStore,
    info: &DeviceInfo,
) -> crate::Result<Option<MeasuredProfile>> {
    use clflow_core::Diagnostic;
    store.load(&DeviceIdentity::of(info)).map_err(|e| {
        let hint = e
            .hint()
            .unwrap_or_else(|| "`clflow bench --refresh` measures again".into());
        Error::input(&e).with_hint(hint)
    })
}

/// The device's profile with what `needs` asks: the stored one where it
/// serves (unless `refresh`), else what it lacks measured now and stored.
pub fn obtain(
    device: &OclDevice,
    all: &[DeviceInfo],
    datasheet: Option<&DatasheetProfile>,
    needs: Needs,
    refresh: bool,
    observer: &dyn Observer,
) -> crate::Result<Obtained> {
    let store = MeasuredStore::from_env();
    let stored = match &store {
        Some(store) => load_stored(store, &device.info)?,
        None => None,
    }
    .filter(|p| needs.peaks_served_by(p));
    let reusable = stored.as_ref().filter(|_| !refresh);
    if let Some(profile) = reusable.filter(|p| needs.costs_served_by(p.costs.as_ref())) {
        return Ok(Obtained {
            profile: profile.clone(),
            measurement: None,
            stored_at: store.map(|s| s.path_for(&profile.identity)),
            power_sensor: None,
        });
    }
    // Here the peaks are measured, or the costs the stored peaks lack.
    let peaks = reusable.is_none();
    let peaks_plan = plan(device, needs.peaks)?;
    let costs_plan = needs.costs.map(|mode| plan(device, mode)).transpose()?;
    let mut choice = sensor_for(device, all, datasheet);
    let mut run = Run::new(
        device,
        peaks.then_some(&peaks_plan),
        costs_plan.as_ref(),
        None,
        observer,
    );
    let why = match reusable {
        None if stored.is_some() => "measuring again",
        None => "no measured profile",
        Some(p) if p.costs.is_none() => "the stored profile lacks the cost benchmarks",
        Some(_) => "the stored profile's cost benchmarks ran a quick plan",
    };
    let modes = match (peaks.then_some(needs.peaks), &costs_plan) {
        (Some(peaks), Some(costs)) if costs.mode != peaks => {
            format!("{} mode, costs {}", mode_name(peaks), mode_name(costs.mode))
        }
        (Some(mode), _) => format!("{} mode", mode_name(mode)),
        (None, costs) => format!(
            "{} mode",
            mode_name(costs.map_or(needs.peaks, |plan| plan.mode))
        ),
    };
    run.announce(why, &modes, &choice);
    let (mut profile, mut measurement) = match reusable {
        Some(profile) => (profile.clone(), None),
        None => {
            let measurement = run.peaks(device, needs.peaks, &mut choice)?;
            (
                to_profile(&measurement, datasheet, needs.peaks),
                Some(measurement),
            )
        }
    };
    // A first run keeps its peaks at once; a refresh keeps the profile it
    // replaces until the whole run is done.
    let mut stored_at = None;
    if peaks && store.is_some() && (stored.is_none() || costs_plan.is_none()) {
        stored_at = save(store.as_ref(), &profile, observer)?;
    }
    if let Some(plan) = &costs_plan {
        profile.costs = Some(run.costs(device, plan)?);
        stored_at = save(store.as_ref(), &profile, observer)?;
        let measured = measurement.get_or_insert_with(|| Measurement {
            device: device.info.clone(),
            plan: *plan,
            results: Vec::new(),
            skipped: Vec::new(),
            notes: Vec::new(),
            launch: None,
            costs: None,
        });
        measured.costs = profile.costs;
    }
    Ok(Obtained {
        profile,
        measurement,
        stored_at,
        power_sensor: choice.source.map(|_| choice.description.clone()),
    })
}

/// Runs the benchmarks whose id contains `only` (and the costs, where it
/// names them), storing nothing: for trying one family.
pub fn measure_only(
    device: &OclDevice,
    all: &[DeviceInfo],
    datasheet: Option<&DatasheetProfile>,
    mode: Mode,
    only: &str,
    observer: &dyn Observer,
) -> crate::Result<Obtained> {
    let plan = plan(device, mode)?;
    let costs = costs::wanted(Some(only), &costs::steps(&device.info, &plan));
    let mut choice = sensor_for(device, all, datasheet);
    let mut run = Run::new(
        device,
        Some(&plan),
        costs.then_some(&plan),
        Some(only),
        observer,
    );
    if run.peak_steps.is_empty() && run.cost_steps.is_empty() {
        return Err(Error::input(format!(
            "--only '{only}' matches no benchmark of {}",
            device.info.label()
        ))
        .with_hint(
            "ids read like triad/float4, mad-chain/uint, launch/empty and costs/page-walk/128MiB/64/loads \
             (`clflow bench -v` lists each)",
        ));
    }
    let modes = format!("{} mode", mode_name(mode));
    run.announce(
        &format!("benchmarks matching '{only}', not stored"),
        &modes,
        &choice,
    );
    let mut measurement = run.peaks(device, mode, &mut choice)?;
    if costs {
        measurement.costs = Some(run.costs(device, &plan)?);
    }
    let profile = measurement.to_profile(env!("CARGO_PKG_VERSION"));
    Ok(Obtained {
        profile,
        measurement: Some(measurement),
        stored_at: None,
        power_sensor: choice.source.map(|_| choice.description.clone()),
    })
}

fn plan(device: &OclDevice, mode: Mode) -> crate::Result<Plan> {
    Plan::for_device(&device.info, mode).map_err(|small| {
        Error::from(clflow_bench::BenchError::TooSmall {
            device: device.info.label(),
            needed: small.needed,
            available: small.available,
        })
    })
}

/// The measured profile of a run's peaks, with the datasheet's notes.
fn to_profile(
    measurement: &Measurement,
    datasheet: Option<&DatasheetProfile>,
    mode: Mode,
) -> MeasuredProfile {
    let mut profile = measurement.to_profile(env!("CARGO_PKG_VERSION"));
    if let Some(datasheet) = datasheet {
        profile
            .notes
            .extend(clflow_bench::datasheet_notes(&profile, datasheet));
    }
    if mode == Mode::Quick {
        profile.notes.push(QUICK_NOTE.to_string());
    }
    profile
}

fn save(
    store: Option<&MeasuredStore>,
    profile: &MeasuredProfile,
    observer: &dyn Observer,
) -> crate::Result<Option<PathBuf>> {
    match store {
        Some(store) => {
            let path = store.save(profile).map_err(|e| Error::input(&e))?;
            observer.detail(format!("measured profile stored: {}", path.display()));
            Ok(Some(path))
        }
        None => {
            observer.note("no data directory (set CLFLOW_DATA_DIR or HOME): profile not stored");
            Ok(None)
        }
    }
}

/// The part of a run an event comes from.
#[derive(Clone, Copy)]
enum Part {
    Peaks,
    Costs,
}

/// One measuring run's progress: a `bench` phase over every step it will
/// take, each step weighted by its expected seconds.
struct Run<'o> {
    label: String,
    peak_steps: Vec<Step>,
    cost_steps: Vec<Step>,
    only: Option<String>,
    phase: Box<dyn Phase + 'o>,
    observer: &'o dyn Observer,
    /// Expected seconds of the steps done, and their count.
    done_s: f64,
    done: usize,
}

impl<'o> Run<'o> {
    /// A run of the peaks at `peaks` and the costs at `costs`, each where given.
    fn new(
        device: &OclDevice,
        peaks: Option<&Plan>,
        costs: Option<&Plan>,
        only: Option<&str>,
        observer: &'o dyn Observer,
    ) -> Self {
        let peak_steps = peaks.map_or(Vec::new(), |plan| {
            clflow_bench::steps(&device.info, plan, only)
        });
        let cost_steps = costs.map_or(Vec::new(), |plan| costs::steps(&device.info, plan));
        let phase = observer.phase("bench", Counts::ExpectedMillis);
        phase.set_length(millis(total_s(&peak_steps, &cost_steps)));
        Run {
            label: device.info.label(),
            peak_steps,
            cost_steps,
            only: only.map(str::to_string),
            phase,
            observer,
            done_s: 0.0,
            done: 0,
        }
    }

    /// Says why the run measures, what, at which plan, and about how long
    /// it will take.
    fn announce(&self, why: &str, modes: &str, choice: &SensorChoice) {
        let mut parts = Vec::new();
        if !self.peak_steps.is_empty() {
            parts.push(format!("{} benchmarks", self.peak_steps.len()));
        }
        if !self.cost_steps.is_empty() {
            parts.push(format!("{} cost kernels", self.cost_steps.len()));
        }
        self.observer.note(format!(
            "device {}: {why}; benchmarking {} ({modes}, about {}; power: {})",
            self.label,
            parts.join(" and "),
            clflow_report::text::duration(total_s(&self.peak_steps, &self.cost_steps)),
            choice.description
        ));
        for note in &choice.notes {
            self.observer.detail(format!("  power: {note}"));
        }
    }

    fn peaks(
        &mut self,
        device: &OclDevice,
        mode: Mode,
        choice: &mut SensorChoice,
    ) -> crate::Result<Measurement> {
        let sensor = choice
            .sensor
            .as_deref_mut()
            .map(|s| s as &mut dyn PowerSensor);
        let only = self.only.clone();
        run_benchmarks(device, mode, only.as_deref(), sensor, &mut |e| {
            self.event(Part::Peaks, e)
        })
        .map_err(hinted)
    }

    fn costs(&mut self, device: &OclDevice, plan: &Plan) -> crate::Result<OpCosts> {
        costs::measure(device, plan, &mut |e| self.event(Part::Costs, e)).map_err(hinted)
    }

    fn event(&mut self, part: Part, event: Event<'_>) {
        let planned = match part {
            Part::Peaks => &self.peak_steps,
            Part::Costs => &self.cost_steps,
        };
        let total = self.peak_steps.len() + self.cost_steps.len();
        match event {
            Event::Starting { id, .. } => {
                self.phase
                    .set_message(&format!("{}/{total} {id}", self.done + 1));
            }
            Event::Finished { index, id, figure, .. } => {
                self.done_s += planned.get(index).map_or(0.0, |s| s.expected_s);
                self.done += 1;
                self.phase.set_position(millis(self.done_s));
                let observer = self.observer;
                self.phase
                    .suspend(&mut || observer.detail(format!("  {id}: {figure}")));
            }
        }
    }
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Full => "full",
        Mode::Quick => "quick",
    }
}

fn hinted(err: clflow_bench::BenchError) -> Error {
    Error::from(err)
        .with_hint("run with -v for each benchmark's figures; `clflow devices` shows the device")
}

fn total_s(peaks: &[Step], costs: &[Step]) -> f64 {
    clflow_bench::expected_s(peaks) + clflow_bench::expected_s(costs)
}

fn millis(seconds: f64) -> u64 {
    (seconds * 1e3).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_costs_serve_analyze_but_not_a_full_run() {
        let mut costs: OpCosts = serde_json::from_str(
            r#"{"chain_ops_per_s":1.0,"local_atomics_per_s":1.0,"barriers_per_s":1.0}"#,
        )
        .unwrap();
        let analyze = Needs { peaks: Mode::Full, costs: Some(Mode::Quick) };
        let full = Needs::all(Mode::Full);
        assert!(!analyze.costs_served_by(None));
        assert!(analyze.costs_served_by(Some(&costs)) && full.costs_served_by(Some(&costs)));
        costs.quick = true;
        assert!(analyze.costs_served_by(Some(&costs)));
        assert!(!full.costs_served_by(Some(&costs)));
        let peaks_only = Needs { peaks: Mode::Full, costs: None };
        assert!(peaks_only.costs_served_by(None));
    }
}
