//! `clflow devices`: the OpenCL platforms and devices at hand, the datasheet
//! profile each matches, whether it has been measured, and which power
//! sensor serves it; `--profiles` lists the datasheet profiles themselves.

use crate::failure::Failure;
use crate::output::{print_json, Verbosity};
use clap::Args;
use clflow_devices::power::{PowerImport, SensorOptions};
use clflow_devices::{DatasheetProfile, MeasuredStore, Metric, ProfileCatalog, ProfileOrigin};
use clflow_ocl::{DeviceKind, OclError};
use clflow_pipeline::devices::{describe, DeviceReport, DevicesJson};
use clflow_report::text::{binary_size, table};
use clflow_traffic::format_size;
use std::path::PathBuf;
use std::sync::Arc;

const EXAMPLES: &str = "\
Examples:
  clflow devices
      every platform and device: type, driver, compute units, clock, memory, caches,
      fp64/fp16, the datasheet profile it matches, measured or not, its power sensor
  clflow devices --json | jq '.devices[0].name'
      the same as JSON, for scripts
  clflow devices --profiles
      the datasheet profiles clflow knows (built in from devices/), with key peaks
  clflow devices --profiles-dir ./my-devices
      add profiles from a directory; a file named like a built-in one replaces it
  clflow devices --power-import board-power.csv
      let externally measured power (CSV: device,kernel,time_s,watts) serve the
      devices it names

Other commands pick a device by its number here or by a case-insensitive part of
\"platform / device\" name: `--device 0`, `--device pthread`, `--device h100`.

Profiles: built in, plus CLFLOW_DEVICES_DIR or --profiles-dir. Measured profiles (from
`clflow bench`): $CLFLOW_DATA_DIR/measured, else $XDG_DATA_HOME/clflow/measured, else
~/.local/share/clflow/measured. Power sources: nvml (NVIDIA), rapl (CPU), hwmon (AMD and
Intel GPUs), import (CSV), spec (datasheet TDP: not a measurement).

Exit status: 0 listed; 1 no OpenCL runtime or device (the message says what to install);
2 a bad profile directory or power CSV.";

/// List OpenCL devices with their datasheet profiles and power sensors.
#[derive(Args)]
#[command(
    long_about = "List every OpenCL platform and device with the facts the analysis needs, the \
    datasheet profile each matches (by a case-insensitive part of its name), whether a measured \
    profile from `clflow bench` exists, and which power sensor serves it.",
    after_help = EXAMPLES
)]
pub struct DevicesArgs {
    /// Print as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// List the known datasheet profiles instead of the devices (needs no OpenCL).
    #[arg(long)]
    profiles: bool,
    /// Also read datasheet profiles from DIR (default: $CLFLOW_DEVICES_DIR).
    #[arg(long, value_name = "DIR")]
    profiles_dir: Option<PathBuf>,
    /// Power measured outside clflow, as CSV with columns device,kernel,time_s,watts.
    #[arg(long, value_name = "CSV")]
    power_import: Option<PathBuf>,
}

pub fn run(args: DevicesArgs, verbosity: Verbosity) -> crate::Result<()> {
    let catalog = ProfileCatalog::load(args.profiles_dir.as_deref())?;
    if let Some(dir) = catalog.user_dir() {
        verbosity.detail(format!("profiles: built in, plus {}", dir.display()));
    }
    if args.profiles {
        return list_profiles(&catalog, args.json);
    }
    let import = match &args.power_import {
        Some(path) => Some(Arc::new(PowerImport::load(path)?)),
        None => None,
    };
    let devices = clflow_ocl::discover().map_err(|err| {
        let hint = matches!(err, OclError::NoPlatform { .. } | OclError::NoDevice { .. });
        let failure = Failure::from(err);
        if hint {
            failure.with_hint(
                "`clflow devices --profiles` lists the datasheet profiles without OpenCL",
            )
        } else {
            failure
        }
    })?;
    let store = MeasuredStore::from_env();
    let mut options = SensorOptions::from_env();
    options.import = import;
    let reports: Vec<DeviceReport> = devices
        .iter()
        .map(|device| describe(device, &devices, &catalog, store.as_ref(), &options))
        .collect();
    if args.json {
        return print_json(&DevicesJson {
            devices: reports,
            profiles_dir: catalog.user_dir().map(|d| d.display().to_string()),
            measured_dir: store.map(|s| s.dir().display().to_string()),
        });
    }
    print!("{}", render_devices(&reports));
    Ok(())
}

fn render_devices(reports: &[DeviceReport]) -> String {
    let platforms = {
        let mut names: Vec<&str> = reports
            .iter()
            .map(|r| r.info.platform_name.as_str())
            .collect();
        names.dedup();
        names.len()
    };
    let mut out = format!(
        "{} OpenCL device{} on {platforms} platform{}\n\n",
        reports.len(),
        plural(reports.len()),
        plural(platforms)
    );
    let rows = reports
        .iter()
        .map(|r| {
            vec![
                r.info.index.to_string(),
                r.info.platform_name.clone(),
                r.info.name.clone(),
                kind(r.info.kind).to_string(),
                r.info.compute_units.to_string(),
                format!("{} MHz", r.info.max_clock_mhz),
                binary_size(r.info.global_mem_bytes),
                r.profile.as_ref().map_or("none".into(), |p| p.id.clone()),
                yes_no(r.measured.exists).to_string(),
                r.power.source.map_or("none".into(), |s| s.to_string()),
            ]
        })
        .collect();
    out += &table(
        &[
            "#", "PLATFORM", "DEVICE", "TYPE", "CU", "CLOCK", "MEMORY", "PROFILE", "MEASURED",
            "POWER",
        ],
        rows,
    );
    for r in reports {
        out += &format!("\nDevice {}: {}\n", r.info.index, r.info.name);
        out += &indent(&table(&[], detail_rows(r)));
    }
    out
}

fn detail_rows(r: &DeviceReport) -> Vec<Vec<String>> {
    let d = r.info;
    let row = |key: &str, value: String| vec![key.to_string(), value];
    let mut rows = vec![
        row(
            "platform",
            format!(
                "{} ({}), {}",
                d.platform_name,
                d.platform_vendor,
                d.platform_version.trim()
            ),
        ),
        row("vendor, type", format!("{}, {}", d.vendor, kind(d.kind))),
        row("driver", d.driver_version.clone()),
        row(
            "OpenCL",
            format!("{}; {}", d.device_version.trim(), d.opencl_c_version.trim()),
        ),
        row(
            "compute units",
            format!("{} at up to {} MHz", d.compute_units, d.max_clock_mhz),
        ),
        row(
            "global memory",
            format!(
                "{} (largest buffer {})",
                binary_size(d.global_mem_bytes),
                binary_size(d.max_alloc_bytes)
            ),
        ),
        row("local memory", binary_size(d.local_mem_bytes)),
        row(
            "global cache",
            format!(
                "{}, {}-byte lines",
                binary_size(d.global_cache_bytes),
                d.global_cacheline_bytes
            ),
        ),
        row(
            "fp64, fp16",
            format!("{}, {}", yes_no(d.fp64), yes_no(d.fp16)),
        ),
        row(
            "SPIR-V",
            d.il_version
                .clone()
                .filter(|_| d.spirv)
                .unwrap_or_else(|| "no (programs build from OpenCL C source)".into()),
        ),
    ];
    rows.push(row(
        "profile",
        match &r.profile {
            Some(p) if p.ties.is_empty() => {
                format!("{} ({}), matched by \"{}\"", p.id, p.model, p.pattern)
            }
            Some(p) => format!(
                "{} ({}), matched by \"{}\"; as specific: {}",
                p.id,
                p.model,
                p.pattern,
                p.ties.join(", ")
            ),
            None => "no datasheet profile matches this name".into(),
        },
    ));
    let m = &r.measured;
    rows.push(row(
        "measured",
        match (&m.error, m.exists) {
            (Some(err), _) => format!("unusable: {err}"),
            (None, true) => format!(
                "{} by clflow {} ({})",
                m.measured_at.as_deref().unwrap_or("?"),
                m.clflow_version.as_deref().unwrap_or("?"),
                m.path.as_deref().unwrap_or("?")
            ),
            (None, false) => format!("not yet: `clflow bench --device {}` measures it", d.index),
        },
    ));
    rows.push(row(
        "cache model",
        match &r.simulated_cache {
            Some(c) => format!(
                "{} LRU, {}-byte lines, from the {} (what predict and analyze simulate)",
                format_size(c.bytes),
                c.line_bytes,
                c.source.strip_prefix("the ").unwrap_or(&c.source)
            ),
            None => "none known: predict and analyze take the compulsory traffic".into(),
        },
    ));
    let power = match r.power.source {
        Some(source) => format!("{source}: {}", r.power.sensor),
        None => "none".to_string(),
    };
    rows.push(row("power", power));
    for note in &r.power.notes {
        rows.push(row("", format!("({note})")));
    }
    rows
}

fn list_profiles(catalog: &ProfileCatalog, json: bool) -> crate::Result<()> {
    if json {
        return print_json(&serde_json::json!({
            "profiles": catalog.profiles(),
            "profiles_dir": catalog.user_dir().map(|d| d.display().to_string()),
        }));
    }
    let figure = |p: &DatasheetProfile, metric: Metric| {
        p.datasheet
            .get(metric)
            .map_or("-".to_string(), |f| format!("{}", f.value))
    };
    let rows = catalog
        .profiles()
        .iter()
        .map(|p| {
            vec![
                p.id.clone(),
                p.model.clone(),
                p.class.to_string(),
                figure(p, Metric::Fp32),
                figure(p, Metric::Fp64),
                figure(p, Metric::Int32),
                figure(p, Metric::MemoryBandwidth),
                figure(p, Metric::Tdp),
                yes_no(!p.measured.is_empty()).to_string(),
                match &p.origin {
                    ProfileOrigin::Embedded => "built in".to_string(),
                    ProfileOrigin::File(path) => path.display().to_string(),
                },
            ]
        })
        .collect();
    print!(
        "{} datasheet profiles (peaks as the datasheet states them; MEASURED: the profile also \
         carries published measured peaks)\n\n{}",
        catalog.profiles().len(),
        table(
            &[
                "PROFILE",
                "MODEL",
                "TYPE",
                "FP32 GFLOP/S",
                "FP64 GFLOP/S",
                "INT32 GOP/S",
                "BW GB/S",
                "TDP W",
                "MEASURED",
                "FROM",
            ],
            rows,
        )
    );
    Ok(())
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

fn kind(kind: DeviceKind) -> &'static str {
    match kind {
        DeviceKind::Cpu => "cpu",
        DeviceKind::Gpu => "gpu",
        DeviceKind::Accelerator => "accelerator",
        DeviceKind::Custom => "custom",
        DeviceKind::Other => "other",
    }
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
