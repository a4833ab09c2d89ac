//! `clflow predict`: each model's predicted kernel time (and energy) beside
//! the measured one, with the absolute percentage error.

use crate::failure::Failure;
use crate::output::{print_json, Verbosity};
use clap::Args;
use clflow_bench::{device_rates, Mode};
use clflow_interp::{OpSet, RunOptions};
use clflow_metrics::Unit;
use clflow_ocl::OclDevice;
use clflow_pipeline::bench::Needs;
use clflow_pipeline::capture;
use clflow_pipeline::count::{interpret, Watch};
use clflow_pipeline::device::{run_on_device, KernelOnDevice, TimingPlan};
use clflow_pipeline::input::prepare_manifest;
use clflow_pipeline::order::{device_order, traffic_in_device_order, OrderedDevice};
use clflow_pipeline::profile::measured_or_datasheet;
use clflow_pipeline::traffic::{
    describe, device_cache, facts_at, parse_cache_option, traffic_analysis, DeviceCache,
};
use clflow_pipeline::Session;
use clflow_predict::{predict_all, KernelFacts, Measured, Model, Predictions};
use clflow_traffic::DeviceTraffic;
use serde::Serialize;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

const EXAMPLES: &str = "\
Examples:
  clflow predict kernels/triad/triad.toml --device pocl
      every model's time for triad on the PoCL device, beside the measured time
  clflow predict kernels/sgemm/sgemm.toml --device 0,1 --json
      two devices, as JSON (the kernel's facts, each model's inputs and outputs)
  clflow predict kernels/vadd/vadd.toml --device gpu --no-run
      predictions only

Models: the roofline bound max(W/F̂, Q/B̂); the boat hull (class parameters w, m, o, c, u, d
from the interpretation; compute and memory equations, no-FMA and scattered floors, host
transfer d/B_bus); the quantitative roofline (instruction densities, E_mix, E_instr, T'_op);
the energy roofline (ε_op, ε_mem, π₀ fitted from power sampled during `clflow bench`; skipped
without a power sensor); clflow's own model (the launch cost, every instruction lane issued at
the vector rate where the interpreter saw work-items run in full vectors of the device's SIMD
width and at the scalar rate elsewhere; on a CPU, loop chains, mispredicted branches and the
lanes a vectoriser gathers at the benchmarks' rates; atomics and barriers; DRAM traffic at the
stream bandwidth; the text shows each term; see `clflow count --simd`). Device rates come from
the measured profile (benchmarking a device that has none) and its datasheet. APE = |predicted
− measured| / measured.

Q is the DRAM traffic through each device's last-level cache (its datasheet profile, else its
driver, or --cache), simulated as a fully associative LRU cache over the kernel's access
stream in work-group order; the boat hull's c and u split it by how neighbouring work-items'
accesses coalesce. A CPU runs a work-group's work-items one after another between barriers:
where one work-item walks a quarter of the cache or more before the next starts, the kernel is
interpreted a second time in that order for the CPU's Q (the text says `work-items one at a
time between barriers`).";

/// Predict a kernel's time on devices with five models; compare with a run.
#[derive(Args)]
#[command(after_help = EXAMPLES)]
pub struct PredictArgs {
    /// The kernel manifest (.toml or Oclgrind .sim), or a capture (each of its launches).
    #[arg(value_name = "MANIFEST")]
    manifest: PathBuf,
    /// Devices: indexes in `clflow devices` or parts of names; repeat the flag or separate
    /// them with commas (`-d 0,gpu`).
    #[arg(long = "device", short = 'd', visible_alias = "devices", value_name = "SEL",
          value_delimiter = ',', value_parser = super::selector, required = true)]
    device: Vec<String>,
    /// Print every prediction and its inputs as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Do not run the kernel: predictions without measurements.
    #[arg(long)]
    no_run: bool,
    /// Which operations W counts (see `clflow count --help`).
    #[arg(long, value_name = "SET", default_value = "work")]
    ops: String,
    /// Seconds of kernel time to time on each device. A kernel of microseconds, whose launches
    /// cost the host far more, stops at ten times this in wall time (at least 2 s), and says so.
    #[arg(long, value_name = "SECS", default_value_t = TimingPlan::default().min_time_s)]
    min_time: f64,
    /// Benchmark unmeasured devices in quick mode.
    #[arg(long)]
    quick_bench: bool,
    /// Also write the charts (boat hull, quadrant split, energy roofline) here.
    #[arg(long, value_name = "DIR")]
    charts: Option<PathBuf>,
    /// The cache the models' Q goes through on every device: a size (40MiB/128) or a datasheet
    /// profile (nvidia-h100-sxm) [default: each device's last-level cache from its datasheet
    /// profile, else from its driver].
    #[arg(long, value_name = "SIZE[/LINE]|PROFILE")]
    cache: Option<String>,
    #[command(flatten)]
    build: super::ManifestBuildOptions,
}

/// The `--json` document.
#[derive(Serialize)]
struct Document {
    kernel: KernelFacts,
    predictions: Vec<Predictions>,
    /// The cache simulation for each device that has a cache.
    traffic: Vec<DeviceTraffic>,
}

pub fn run(args: PredictArgs, verbosity: Verbosity) -> crate::Result<()> {
    let session = Session::new(&verbosity).with_build_options(&args.build.options);
    let ops = clflow_pipeline::count::parse_ops(&args.ops)?;
    clflow_pipeline::device::check_min_time(args.min_time)?;
    let chosen_cache = parse_cache_option(args.cache.as_deref(), || session.catalog())?;
    // A capture stands for its launches, each predicted in turn.
    let manifests = capture::expand(std::slice::from_ref(&args.manifest))?;
    if let Some(dir) = &args.charts {
        clflow_report::check_writable(dir, "--charts")?;
    }
    let devices = args
        .device
        .iter()
        .map(|text| session.device(text))
        .collect::<crate::Result<Vec<_>>>()?;
    let caches: Vec<Option<DeviceCache>> = devices
        .iter()
        .map(|d| {
            let datasheet = session
                .catalog()
                .match_name(&d.info.name)
                .map(|m| m.profile);
            device_cache(chosen_cache.as_ref(), &d.info, datasheet)
                .map(|c| c.with_host_levels(d.info.kind))
        })
        .collect();
    let mut launches = Vec::new();
    for manifest in &manifests {
        launches.push(predict_one(
            manifest, &args, &ops, &devices, &caches, &session,
        )?);
    }

    if let Some(dir) = &args.charts {
        let all: Vec<Predictions> = launches
            .iter()
            .flat_map(|l| l.predictions.iter().cloned())
            .collect();
        let section = clflow_report::prediction::report_section(&all);
        let written = clflow_report::write_report_with(
            &clflow_metrics::ResultSet::default(),
            dir,
            &[section],
        )
        .map_err(Failure::from)?;
        verbosity.note(format!(
            "wrote {} files to {}",
            written.files.len(),
            dir.display()
        ));
    }
    if args.json {
        if capture::is_capture(&args.manifest) {
            print_json(&launches)
        } else {
            print_json(&launches[0])
        }
    } else {
        let texts: Vec<String> = launches
            .iter()
            .map(|l| render(&l.kernel, &l.predictions, &l.traffic))
            .collect();
        print!("{}", texts.join("\n"));
        Ok(())
    }
}

/// Counts one manifest's launch through each device's cache, and predicts
/// (and, unless `--no-run`, times) it on each device.
fn predict_one(
    manifest: &Path,
    args: &PredictArgs,
    ops: &OpSet,
    devices: &[&OclDevice],
    caches: &[Option<DeviceCache>],
    session: &Session,
) -> crate::Result<Document> {
    let observer = session.observer();
    let (input, launch) = prepare_manifest(manifest, "predict", session)?;
    let options = input.run_options(&RunOptions {
        // clflow's model reads how work-items fill vectors.
        simd: true,
        ..RunOptions::default()
    });
    let watch = Watch::traffic(traffic_analysis(caches));
    let counted = interpret(
        manifest,
        &input.module,
        Cow::Borrowed(&launch),
        &options,
        watch,
        observer,
    );
    let (counted, traffic_report, _) = counted?.traced()?;
    let summary = clflow_counts::Summary::of(&counted.counts, ops, &launch);
    let facts = KernelFacts::new(&launch.kernel, &summary, &counted.counts);
    let all = session.device_infos();
    let mode = Mode::quick_if(args.quick_bench);
    let plan = TimingPlan::lasting(args.min_time);
    let mut rates = Vec::new();
    for device in devices {
        let name = device.info.name.trim().to_string();
        let datasheet = session
            .catalog()
            .match_name(&device.info.name)
            .map(|m| m.profile);
        let measured = measured_or_datasheet(device, &all, datasheet, Needs::all(mode), observer);
        let device_rates = device_rates(
            &name,
            measured.as_ref(),
            datasheet,
            clflow_bench::simd_of(&device.info),
        );
        for note in &device_rates.notes {
            observer.note(format!("{name}: {note}"));
        }
        rates.push(device_rates);
    }
    let cached: Vec<OrderedDevice> = caches
        .iter()
        .zip(&rates)
        .filter_map(|(cache, rates)| {
            Some(OrderedDevice {
                name: &rates.name,
                cache: cache.as_ref()?,
                order: device_order(rates),
            })
        })
        .collect();
    let mut traffic = traffic_in_device_order(
        manifest,
        &input.module,
        &launch,
        &options,
        &traffic_report,
        &cached,
        observer,
    )?
    .into_iter();
    let mut predictions = Vec::new();
    let mut kept = Vec::new();
    for ((device, cache), rates) in devices.iter().zip(caches).zip(&rates) {
        let name = &rates.name;
        let facts = match cache.as_ref().and_then(|_| traffic.next()) {
            Some(at) => {
                let facts = facts_at(&facts, &at, device.info.kind);
                kept.push(at);
                facts
            }
            None => {
                observer.note(format!(
                    "{name}: no cache size known (no datasheet profile, none from the driver): \
                     the models take the compulsory traffic; give one with --cache"
                ));
                facts.clone()
            }
        };
        let measurement = if args.no_run {
            Measured::default()
        } else {
            let outcome = run_on_device(
                session,
                device,
                &KernelOnDevice::new(&input, &launch, Some(&counted.buffers)),
                &plan,
            );
            let run = outcome?.to_metrics_run(&launch.kernel, name);
            Measured {
                time_s: run.time.map(|f| f.value),
                energy_j: run.energy_measured.map(|f| f.value),
            }
        };
        predictions.push(predict_all(&facts, rates, measurement));
    }
    Ok(Document { kernel: facts, predictions, traffic: kept })
}

/// Per device: each model's prediction, the measurement and the APE.
fn render(facts: &KernelFacts, predictions: &[Predictions], traffic: &[DeviceTraffic]) -> String {
    let s = |v: f64| Unit::Seconds.format(v);
    let mut out = format!(
        "kernel `{}`: W = {}, Q = {} bytes accessed, {} compulsory, {} work-items\n",
        facts.name, facts.work, facts.traffic.accessed, facts.traffic.compulsory, facts.work_items
    );
    for p in predictions {
        out.push_str(&format!("\non {}\n", p.device));
        match traffic.iter().find(|t| t.device == p.device) {
            Some(t) => out.push_str(&format!("  {}\n", describe(t, facts.work))),
            None => out.push_str(&format!(
                "  Q {} bytes: {}\n",
                facts.traffic.dram().0,
                facts.traffic.dram().1
            )),
        }
        out.push_str(&format!(
            "  {:<22} {:>12} {:>12} {:>8}  {}\n",
            "MODEL", "PREDICTED", "MEASURED", "APE", "BOUND"
        ));
        for row in p.rows() {
            let (measured, show): (Option<f64>, &dyn Fn(f64) -> String) =
                if row.model == Model::Energy {
                    (p.measured.energy_j, &|v| Unit::Joules.format(v))
                } else {
                    (p.measured.time_s, &s)
                };
            let cell = |v: Option<f64>| v.map_or("-".to_string(), show);
            match &row.skipped {
                Some(reason) => {
                    out.push_str(&format!("  {:<22} skipped: {reason}\n", row.model.label()))
                }
                None => out.push_str(&format!(
                    "  {:<22} {:>12} {:>12} {:>8}  {}\n",
                    row.model.label(),
                    cell(row.value),
                    cell(measured),
                    row.ape.map_or("-".into(), |a| format!("{:.1}%", a * 100.0)),
                    row.bound.map_or("-", |b| b.name())
                )),
            }
        }
        if let Some(hull) = &p.boat_hull.prediction {
            let range = format!("{} .. {}", s(hull.low_s), s(hull.high_s));
            let transfer = hull
                .t0_s
                .map_or("t0 n/a".to_string(), |t| format!("t0 {}", s(t)));
            out.push_str(&format!(
                "  boat hull: range {range}, {transfer}; w {}, m {:.2}, f {:.3}, o {:.2}\n",
                hull.parameters.w, hull.parameters.m, hull.parameters.f, hull.parameters.o
            ));
            for note in &hull.notes {
                out.push_str(&format!("  note: boat hull: {note}\n"));
            }
        }
        if let Some(q) = &p.quantitative.prediction {
            out.push_str(&format!(
                "  quantitative: K_type {}, E_mix {:.1}%, E_instr {:.1}%, D_ops {:.1}%, D_ldst {:.1}%\n",
                q.kernel.k_type.name(),
                q.kernel.e_mix * 100.0,
                q.e_instr * 100.0,
                q.kernel.d_ops * 100.0,
                q.kernel.d_ldst * 100.0
            ));
        }
        if let Some(c) = &p.clflow.prediction {
            out.push_str(&clflow_terms(c, &s));
        }
    }
    out
}

/// clflow's model term by term: what its prediction is made of.
fn clflow_terms(c: &clflow_predict::clflow::Clflow, s: &dyn Fn(f64) -> String) -> String {
    // Terms under a thousandth of the prediction say nothing.
    let part = |name: &str, value: Option<f64>| {
        value
            .filter(|v| *v > c.time_s * 1e-3)
            .map(|v| format!("{name} {}", s(v)))
    };
    // The terms inside a total, in brackets after it.
    let within = |parts: Vec<Option<String>>| {
        let parts: Vec<String> = parts.into_iter().flatten().collect();
        if parts.is_empty() {
            String::new()
        } else {
            format!(" ({})", parts.join(", "))
        }
    };
    let issue = within(vec![
        part("chains", c.chain_s),
        part(
            "of which floats held on the stack across calls",
            c.round_trips_s,
        ),
        part("mispredicted branches", c.branches_s),
        part("math builtins", c.builtins_s),
        part("gathers", c.gathers_s),
        part("atomics", c.atomics_s),
        part("barriers", c.barriers_s),
    ]);
    let memory = within(vec![
        part("last-cache gathers", c.cache_gathers_s),
        part("page strides", c.page_strides_s),
        part("walks with a call a step", c.walked_calls_s),
        part("line walks", c.line_walks_s),
        part("lines a few a page", c.short_visits_s),
        part("write-backs in place", c.write_backs_s),
    ]);
    format!(
        "  clflow: launch {}, issue {}{issue}, memory {}{memory}; {:.0}% of steps in {}-lane vectors\n",
        s(c.launch_s),
        s(c.issue_s),
        s(c.memory_s),
        c.vector_share * 100.0,
        c.simd_width
    )
}
