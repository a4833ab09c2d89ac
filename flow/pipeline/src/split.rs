//! The PerDome split of an application between two devices C and G, as
//! `clflow split` prints it and `clflow analyze` reports it: each device's
//! ceilings for the application's kind of work (from its measured profile,
//! its datasheet or a named profile), then the bounds (`clflow-split`).
//! The report of a split (text, HTML, plot, `split.json`) is
//! `clflow_report::split`.

use crate::profile::device_profile;
use crate::{Error, Session};
use clflow_counts::OpClass;
use clflow_devices::{
    DatasheetProfile, DeviceClass, Figures, MeasuredProfile, MeasuredStore, Metric,
};
use clflow_metrics::{Ceilings, DeviceProfile, Figure, OpKind, Provenance, Unit};
use clflow_ocl::{DeviceInfo, DeviceKind};
pub use clflow_report::split::{
    ceiling_name, ceiling_of, system, CeilingKind, Counted, Split, SplitDevice, SplitReport,
    TrafficKind, SECTION_HEADING,
};
use clflow_split::{analyze, Kernel, Transfers};

/// The profile figure that states a ceiling's peak.
fn metric_of(kind: CeilingKind) -> Metric {
    match kind {
        OpClass::Int => Metric::Int32,
        OpClass::Fp64 => Metric::Fp64,
        OpClass::Fp32 | OpClass::Fp16 => Metric::Fp32,
    }
}

/// A device before its ceilings are chosen: they depend on the kind of
/// work the application does.
pub enum NamedDevice {
    /// A datasheet profile by its file name.
    Profile(DatasheetProfile),
    /// An OpenCL device, with its measured profile and the datasheet
    /// profile its name matches.
    OpenCl {
        /// What the bounds call it.
        name: String,
        info: Box<DeviceInfo>,
        measured: Option<Box<MeasuredProfile>>,
        datasheet: Option<DatasheetProfile>,
    },
}

impl NamedDevice {
    /// The device `--device` names: a profile name wins over an OpenCL
    /// selector, so that naming a profile never needs an OpenCL runtime; an
    /// OpenCL device comes with its stored `clflow bench` profile.
    pub fn resolve(text: &str, session: &Session) -> crate::Result<Self> {
        let text = text.trim();
        let catalog = session.catalog();
        if let Some(profile) = catalog.get(text) {
            return Ok(NamedDevice::Profile(profile.clone()));
        }
        let device = session.device(text).map_err(|err| {
            let ids: Vec<&str> = catalog.profiles().iter().map(|p| p.id.as_str()).collect();
            session.observer().detail(format!("OpenCL: {err}"));
            Error::input(format!(
                "--device: `{text}` is neither a datasheet profile nor an OpenCL device ({err})"
            ))
            .with_hint(format!(
                "name a profile ({}) or a device `clflow devices` lists",
                ids.join(", ")
            ))
        })?;
        let datasheet = catalog
            .match_name(&device.info.name)
            .map(|m| m.profile.clone());
        let measured = stored_profile(&device.info)?;
        Ok(NamedDevice::OpenCl {
            name: device.info.name.trim().to_string(),
            info: Box::new(device.info.clone()),
            measured: measured.map(Box::new),
            datasheet,
        })
    }

    /// The device's ceilings for `kind`, each from the most direct source
    /// that states it.
    fn ceilings(&self, kind: CeilingKind) -> crate::Result<SplitDevice> {
        let (name, class, profile, holds_data) = match self {
            NamedDevice::Profile(p) => {
                let measured_source = format!("{} profile [measured]", p.id);
                let datasheet_source = format!("{} datasheet", p.model);
                let profile = DeviceProfile {
                    name: p.model.clone(),
                    kind: Some(p.class.to_string()),
                    measured: table_ceilings(
                        &p.measured,
                        kind,
                        Provenance::Imported,
                        &measured_source,
                    ),
                    datasheet: table_ceilings(
                        &p.datasheet,
                        kind,
                        Provenance::Datasheet,
                        &datasheet_source,
                    ),
                };
                let holds_data = p.class == DeviceClass::Cpu;
                (p.model.clone(), p.class.to_string(), profile, holds_data)
            }
            NamedDevice::OpenCl { name, info, measured, datasheet } => {
                let profile =
                    device_profile(name, info, measured.as_deref(), datasheet.as_ref(), kind);
                let class = profile.kind.clone().unwrap_or_default();
                (name.clone(), class, profile, info.kind == DeviceKind::Cpu)
            }
        };
        let pick = |choose: fn(&Ceilings) -> Option<&Figure>| {
            choose(&profile.measured)
                .or_else(|| choose(&profile.datasheet))
                .cloned()
        };
        let missing = |what: &str| {
            Error::input(format!(
                "device `{name}`: no {what} figure, measured or on a datasheet"
            ))
            .with_hint(match self {
                NamedDevice::Profile(p) => {
                    format!("add it to the profile {} (see devices/README.md)", p.id)
                }
                NamedDevice::OpenCl { info, .. } => {
                    format!(
                        "measure the device first: `clflow bench --device {}`",
                        info.index
                    )
                }
            })
        };
        let compute = match OpKind::from(kind) {
            OpKind::Int => pick(|c| c.int.as_ref()),
            OpKind::Float => pick(|c| c.float.as_ref()),
        }
        .ok_or_else(|| missing(&format!("{} peak", ceiling_name(kind))))?;
        let bandwidth = pick(|c| c.bandwidth.as_ref()).ok_or_else(|| missing("bandwidth"))?;
        // A CPU holds the data; any other device receives it over the link
        // its datasheet profile states.
        let link = if holds_data {
            None
        } else {
            match self {
                NamedDevice::Profile(p) => host_link(p),
                NamedDevice::OpenCl { datasheet, .. } => datasheet.as_ref().and_then(host_link),
            }
        };
        Ok(SplitDevice { name, class, compute, bandwidth, link, holds_data })
    }
}

/// The stored `clflow bench` profile of an OpenCL device, if any.
fn stored_profile(info: &DeviceInfo) -> crate::Result<Option<MeasuredProfile>> {
    let Some(store) = MeasuredStore::from_env() else {
        return Ok(None);
    };
    crate::bench::load_stored(&store, info)
}

/// One table of a datasheet profile as ceilings.
fn table_ceilings(
    figures: &Figures,
    kind: CeilingKind,
    provenance: Provenance,
    origin: &str,
) -> Ceilings {
    let figure = |metric: Metric, unit: Unit| {
        figures.get(metric).map(|f| {
            Figure::new(
                f.value * metric.scale_to_si(),
                unit,
                provenance,
                format!("{origin}: {}", f.source),
            )
        })
    };
    let compute = figure(metric_of(kind), Unit::OpsPerSecond);
    let (int, float) = match OpKind::from(kind) {
        OpKind::Int => (compute, None),
        OpKind::Float => (None, compute),
    };
    Ceilings {
        float,
        int,
        bandwidth: figure(Metric::MemoryBandwidth, Unit::BytesPerSecond),
        power: None,
        caches: Vec::new(),
    }
}

/// The host link a profile states.
fn host_link(profile: &DatasheetProfile) -> Option<Figure> {
    let figure = profile.datasheet.get(Metric::HostLink)?;
    Some(Figure::datasheet(
        figure.value * Metric::HostLink.scale_to_si(),
        Unit::BytesPerSecond,
        format!("{} datasheet: {}", profile.model, figure.source),
    ))
}

/// Bounds `kernels`, together one application, split between `c` and `g`:
/// the ceiling kind from the kernels' work, each device's ceilings for
/// it, then every partition.
pub fn split<'a>(
    kernels: &'a [Counted],
    c: &NamedDevice,
    g: &NamedDevice,
    traffic: TrafficKind,
    transfers: Transfers,
) -> crate::Result<Split<'a>> {
    let ceiling = ceiling_of(kernels);
    let devices = [c.ceilings(ceiling)?, g.ceilings(ceiling)?];
    let system = system(&devices)?;
    let parts: Vec<Kernel> = kernels.iter().map(|k| k.kernel.clone()).collect();
    let analysis = analyze(&parts, &system, transfers).map_err(Error::from)?;
    Ok(Split { kernels, ceiling, traffic, devices, system, analysis })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use clflow_counts::PerClass;
    use clflow_devices::ProfileCatalog;
    use clflow_report::perdome::PointKind;
    use clflow_report::split::PLOT_STEPS;
    use clflow_report::{ReportSection, SectionChart};
    use clflow_split::{Model, Partition, Work};
    use std::path::PathBuf;

    fn profile(id: &str) -> NamedDevice {
        let catalog = ProfileCatalog::embedded().unwrap();
        NamedDevice::Profile(catalog.get(id).unwrap().clone())
    }

    /// An OpenCL device as discovery describes it, for tests.
    pub(crate) fn opencl_device(index: usize, name: &str, kind: DeviceKind) -> DeviceInfo {
        DeviceInfo::described(index, "Test Platform", name, kind)
    }

    /// An unmeasured OpenCL device with the datasheet its name matches.
    fn unmeasured(index: usize, name: &str, kind: DeviceKind) -> NamedDevice {
        let catalog = ProfileCatalog::embedded().unwrap();
        NamedDevice::OpenCl {
            name: format!("{name} #{index}"),
            info: Box::new(opencl_device(index, name, kind)),
            measured: None,
            datasheet: catalog.match_name(name).map(|m| m.profile.clone()),
        }
    }

    /// A counted fp32 kernel: W adds over Q bytes, its buffers D = Q.
    fn fp32_kernel(name: &str, ops: f64, bytes: f64) -> Counted {
        Counted {
            manifest: PathBuf::from(format!("kernels/{name}/{name}.toml")),
            kernel: Kernel {
                name: name.into(),
                work: Work { ops, bytes, transfer: bytes },
            },
            mix: PerClass { fp32: ops as u64, ..PerClass::default() },
        }
    }

    /// vadd and triad as `clflow split` counts them: 4096 and 8192 fp32
    /// operations, each over three 16 KiB buffers.
    fn vadd() -> Counted {
        fp32_kernel("vadd", 4096.0, 49152.0)
    }

    fn triad() -> Counted {
        fp32_kernel("triad", 8192.0, 49152.0)
    }

    fn close(value: f64, expected: f64) -> bool {
        (value / expected - 1.0).abs() < 1e-9
    }

    fn partition<'a>(split: &'a Split, model: Model) -> &'a Partition {
        split.analysis.find(model).unwrap()
    }

    fn phi_and_k20(kernels: &[Counted]) -> Split<'_> {
        split(
            kernels,
            &profile("xeon-phi-5110p"),
            &profile("tesla-k20"),
            TrafficKind::Compulsory,
            Transfers::Ignored,
        )
        .unwrap()
    }

    #[test]
    fn vadd_on_the_phi_and_the_k20_gives_the_roofline_sum_for_the_data_partition() {
        let kernels = [vadd()];
        let split = phi_and_k20(&kernels);
        assert_eq!(split.ceiling, OpClass::Fp32);
        // The profiles' [measured] figures: the tool-flow paper's Table 1.
        assert_eq!(split.devices[0].compute.value, 1189e9);
        assert_eq!(split.devices[0].compute.provenance, Provenance::Imported);
        assert_eq!(split.devices[1].bandwidth.value, 143e9);
        assert!(close(split.analysis.intensity, 1.0 / 12.0));
        // Memory bound on both: B̂ × I.
        let (p_c, p_g) = (119e9 / 12.0, 143e9 / 12.0);
        let c_only = partition(&split, Model::COnly);
        assert!(close(c_only.bound.performance, p_c));
        assert_eq!(c_only.i_g, 0.0);
        assert!(close(
            partition(&split, Model::GOnly).bound.performance,
            p_g
        ));
        let p_dp = partition(&split, Model::PerfectDataPartition);
        assert!(close(p_dp.bound.performance, p_c + p_g));
        assert!(close(p_dp.c_share, p_c / (p_c + p_g)));
        assert!(close(p_dp.bound.time_c, p_dp.bound.time_g));
        assert_eq!(split.analysis.partitions.len(), 3, "no code partition");

        let text = split.text();
        assert!(
            text.starts_with("PerDome bounds: kernel vadd on two devices (fp32 ceilings)\n"),
            "{text}"
        );
        assert!(text.contains("  C: Intel Xeon Phi 5110P\n     F̂ 1189 GOPS/s (imported"));
        assert!(text.contains("  transfers ignored (the paper's model)\n\n"));
        assert!(text.contains("\nbest: perfect data partition"), "{text}");
        assert!(
            text.ends_with("code partitions need two kernels or more: give each part's manifest\n")
        );
    }

    #[test]
    fn two_kernels_give_code_partitions_and_a_plot_that_names_them() {
        let kernels = [vadd(), triad()];
        let split = phi_and_k20(&kernels);
        let code: Vec<&Partition> = split
            .analysis
            .partitions
            .iter()
            .filter(|p| p.model == Model::CodePartition)
            .collect();
        assert_eq!(code.len(), 2);
        let triad_on_g = code.iter().find(|p| p.on_g == ["triad"]).unwrap();
        assert_eq!(triad_on_g.on_c, ["vadd"]);
        assert!(close(triad_on_g.i_c, 1.0 / 12.0));
        assert!(close(triad_on_g.i_g, 1.0 / 6.0));
        // C streams vadd's 48 KiB at 119 GB/s, G triad's at 143.
        assert!(close(triad_on_g.bound.time, 49152.0 / 119e9));
        assert!(close(split.analysis.intensity, 12288.0 / 98304.0));

        let text = split.text();
        assert!(text.contains("2 kernels as one application"), "{text}");
        assert!(
            text.lines().any(|l| {
                let cells: Vec<&str> = l.split_whitespace().collect();
                cells.starts_with(&["code", "partition", "vadd", "triad", "33.33%"])
            }),
            "{text}"
        );
        assert!(!text.contains("code partitions need"));

        let plot = split.plot().unwrap();
        assert_eq!(plot.intensity, split.analysis.intensity);
        assert_eq!((plot.i_c.len(), plot.i_g.len()), (PLOT_STEPS, PLOT_STEPS));
        assert_eq!(plot.notes[0], "C: Intel Xeon Phi 5110P");
        assert_eq!(plot.notes[1], "G: NVIDIA Tesla K20");
        let named: Vec<&str> = plot.points.iter().map(|p| p.label.as_str()).collect();
        assert!(
            named.contains(&"G: triad") && named.contains(&"G: vadd"),
            "{named:?}"
        );
        let p_dp = plot
            .points
            .iter()
            .find(|p| p.kind == PointKind::DataPartition)
            .unwrap();
        // In GOPS/s: both memory bound at I = 1/8.
        assert!(close(p_dp.value, (119.0 + 143.0) / 8.0));
    }

    #[test]
    fn a_cpu_holds_the_data_and_a_card_pays_for_its_link() {
        let kernels = [vadd()];
        let split = split(
            &kernels,
            &profile("amd-epyc-7763"),
            &profile("nvidia-a100-sxm"),
            TrafficKind::Compulsory,
            Transfers::Counted,
        )
        .unwrap();
        assert!(split.devices[0].holds_data && split.devices[0].link.is_none());
        assert_eq!(split.devices[1].link.as_ref().unwrap().value, 32e9);
        let t_c = 49152.0 / 204.8e9;
        let t_g = 49152.0 / 2039e9 + 49152.0 / 32e9;
        assert!(close(partition(&split, Model::COnly).bound.time, t_c));
        assert!(close(partition(&split, Model::GOnly).bound.time, t_g));
        let p_dp = partition(&split, Model::PerfectDataPartition);
        assert!(close(p_dp.bound.time, t_c * t_g / (t_c + t_g)));
        assert!(close(p_dp.c_share, t_g / (t_c + t_g)));
        assert!(split.text().contains(
            "  transfers counted: a linked device's time includes D/L for its part \
             (--no-transfers: the paper's model)\n\n"
        ));
    }

    #[test]
    fn an_unmeasured_opencl_device_takes_its_datasheet_and_a_cpu_holds_the_data() {
        let kernels = [vadd()];
        let split = split(
            &kernels,
            &unmeasured(0, "AMD EPYC 7763 64-Core Processor", DeviceKind::Cpu),
            &unmeasured(1, "Tesla K20m", DeviceKind::Gpu),
            TrafficKind::Compulsory,
            Transfers::Counted,
        )
        .unwrap();
        let [c, g] = &split.devices;
        assert_eq!(c.name, "AMD EPYC 7763 64-Core Processor #0");
        assert!(c.holds_data && c.link.is_none());
        assert_eq!(c.bandwidth.value, 204.8e9);
        assert_eq!(c.bandwidth.provenance, Provenance::Datasheet);
        // No measured profile: the K20's datasheet (not its profile's
        // [measured] table, which describes another board), and its link.
        assert_eq!(g.compute.value, 3524e9);
        assert_eq!(g.bandwidth.value, 208e9);
        assert_eq!(g.link.as_ref().unwrap().value, 8e9);
        assert!(!g.holds_data);
        let t_g = 49152.0 / 208e9 + 49152.0 / 8e9;
        assert!(close(partition(&split, Model::GOnly).bound.time, t_g));
        // A device no datasheet describes must be measured first.
        let err = split_err(&kernels, unmeasured(2, "pthread-cpu", DeviceKind::Cpu));
        assert_eq!(
            err.message,
            "device `pthread-cpu #2`: no fp32 peak figure, measured or on a datasheet"
        );
        assert_eq!(
            err.hint.unwrap(),
            "measure the device first: `clflow bench --device 2`"
        );
    }

    fn split_err(kernels: &[Counted], c: NamedDevice) -> Error {
        split(
            kernels,
            &c,
            &profile("tesla-k20"),
            TrafficKind::Compulsory,
            Transfers::Counted,
        )
        .err()
        .unwrap()
    }

    #[test]
    fn the_ceiling_is_the_kind_most_of_the_work_is() {
        let mut int_kernel = vadd();
        int_kernel.mix = PerClass { int: 5000, fp32: 4096, ..PerClass::default() };
        assert_eq!(ceiling_of(&[int_kernel]), OpClass::Int);
        let mut fp64_kernel = vadd();
        fp64_kernel.mix = PerClass { int: 10, fp64: 3000, fp32: 1000, ..PerClass::default() };
        assert_eq!(
            ceiling_of(&[fp64_kernel, vadd()]),
            OpClass::Fp32,
            "3000 fp64 lanes against 5096 fp32"
        );
        // The EPYC profile states no int32 peak: the error names what to add.
        let mut lookup = vadd();
        lookup.mix = PerClass { int: 4096, ..PerClass::default() };
        let err = split_err(&[lookup], profile("amd-epyc-7763"));
        assert_eq!(
            err.message,
            "device `AMD EPYC 7763`: no int32 peak figure, measured or on a datasheet"
        );
        assert!(err
            .hint
            .unwrap()
            .contains("add it to the profile amd-epyc-7763"));
    }

    #[test]
    fn the_report_section_holds_the_table_the_plot_and_split_json() {
        let kernels = [vadd(), triad()];
        let split = phi_and_k20(&kernels);
        let section = split.report_section("<p>pair</p>\n").unwrap();
        assert_eq!(section.heading, "CPU+GPU split (PerDome)");
        let html = &section.html;
        assert!(
            html.starts_with("<p>pair</p>\n<p>PerDome bounds: 2 kernels"),
            "{html}"
        );
        assert!(
            html.contains("<li>C: <b>Intel Xeon Phi 5110P</b>: F̂ 1189 GOPS/s"),
            "{html}"
        );
        assert!(html.contains("<li>G: <b>NVIDIA Tesla K20</b>"), "{html}");
        assert!(
            html.contains("<tr><th>partition</th><th>C runs</th><th>G runs</th><th>C share</th>")
        );
        assert!(
            html.contains(
                "<tr><td class=\"name\">code partition</td><td class=\"name\">vadd</td>\
             <td class=\"name\">triad</td><td>33.33%</td>"
            ),
            "{html}"
        );
        assert_eq!(
            html.matches("<tr>").count(),
            1 + split.analysis.partitions.len()
        );
        assert_eq!(section.charts.len(), 1);
        let (stem, caption, chart) = &section.charts[0];
        assert_eq!(stem, "perdome");
        assert!(caption.contains("C (Intel Xeon Phi 5110P) and G (NVIDIA Tesla K20)"));
        assert!(matches!(chart, SectionChart::Perdome(plot) if plot.points.len() == 4));

        assert_eq!(section.files.len(), 1);
        let (name, json) = &section.files[0];
        assert_eq!(name, "split.json");
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(v["ceiling"], "fp32");
        assert_eq!(v["traffic"], "compulsory");
        assert_eq!(v["devices"][0]["name"], "Intel Xeon Phi 5110P");
        assert_eq!(v["kernels"][1]["name"], "triad");
        assert_eq!(v["kernels"][1]["manifest"], "kernels/triad/triad.toml");
        let p_dp = v["analysis"]["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["model"] == "perfect_data_partition")
            .unwrap();
        // Both memory bound at I = 1/8: the share is C's bandwidth's.
        assert!(close(
            p_dp["c_share"].as_f64().unwrap(),
            119.0 / (119.0 + 143.0)
        ));
    }

    /// The section drawn again from the split.json `section` holds.
    fn redrawn(section: &ReportSection, preface: &str) -> ReportSection {
        let report: SplitReport = serde_json::from_str(&section.files[0].1).unwrap();
        report.split().unwrap().report_section(preface).unwrap()
    }

    #[test]
    fn split_json_reads_back_into_the_same_section() {
        let kernels = [vadd(), triad()];
        let split = phi_and_k20(&kernels);
        let section = split.report_section("<p>pair</p>\n").unwrap();
        let again = redrawn(&section, "<p>pair</p>\n");
        assert_eq!(again.heading, SECTION_HEADING);
        assert_eq!(again.html, section.html);
        // split.json itself, to the byte: the format reads back unchanged.
        assert_eq!(again.files, section.files);
        assert_eq!(again.charts.len(), 1);
        let (stem, caption, SectionChart::Perdome(plot)) = &again.charts[0] else {
            panic!("not a PerDome chart");
        };
        assert_eq!(
            (stem, caption),
            (&section.charts[0].0, &section.charts[0].1)
        );
        // The plot is drawn from the devices' ceilings split.json holds:
        // the same grid, values, points and notes, to the bit.
        let original = split.plot().unwrap();
        assert_eq!(format!("{plot:?}"), format!("{original:?}"));
        assert_eq!(plot.notes[1], "G: NVIDIA Tesla K20");
        assert!(plot.points.iter().any(|p| p.label == "G: triad"));
        assert!(close(plot.points[0].value, (119.0 + 143.0) / 8.0));
    }

    #[test]
    fn split_json_without_traffic_reads_back_its_infinite_intensity() {
        let kernels = [fp32_kernel("private", 4096.0, 0.0)];
        let section = phi_and_k20(&kernels).report_section("").unwrap();
        let json: serde_json::Value = serde_json::from_str(&section.files[0].1).unwrap();
        assert_eq!(json["analysis"]["intensity"], serde_json::Value::Null);
        let again = redrawn(&section, "");
        assert_eq!(again.html, section.html);
        assert!(again.html.contains("<p>No PerDome plot: I = W/Q is"));
        assert!(again.charts.is_empty());
        assert_eq!(again.files, section.files);
    }

    #[test]
    fn a_split_json_that_cannot_be_drawn_says_why() {
        let kernels = [vadd()];
        let split = phi_and_k20(&kernels);
        let json = serde_json::to_value(split.report()).unwrap();
        let refused = |edit: &dyn Fn(&mut serde_json::Value)| {
            let mut doc = json.clone();
            edit(&mut doc);
            let report: SplitReport = serde_json::from_value(doc).unwrap();
            let failure = Error::from(report.split().err().unwrap());
            assert_eq!(failure.kind, clflow_core::FailureKind::Input);
            failure.message
        };
        assert_eq!(
            refused(&|doc| {
                doc["devices"].as_array_mut().unwrap().pop();
            }),
            "it names 1 device; a split has two, C then G"
        );
        assert_eq!(
            refused(&|doc| doc["devices"][1]["bandwidth"]["value"] = 0.into()),
            "device `NVIDIA Tesla K20`: memory bandwidth is 0; it must be a positive number"
        );
        assert_eq!(
            refused(&|doc| doc["analysis"]["partitions"] = serde_json::json!([])),
            "it holds no partition's bound"
        );
        assert_eq!(
            refused(&|doc| doc["kernels"] = serde_json::json!([])),
            "no kernel to bound"
        );
        let mut doc = json.clone();
        doc["ceiling"] = "fp16".into();
        let err = serde_json::from_value::<SplitReport>(doc).err().unwrap();
        assert_eq!(
            err.to_string(),
            "unknown ceiling `fp16`: expected int32, fp32 or fp64"
        );
    }

    #[test]
    fn work_without_traffic_gets_the_table_but_no_plot() {
        let kernels = [fp32_kernel("private", 4096.0, 0.0)];
        let split = phi_and_k20(&kernels);
        assert!(split.analysis.intensity.is_infinite());
        assert!(split.plot().is_none());
        let section = split.report_section("").unwrap();
        assert!(section.charts.is_empty());
        assert!(
            section.html.contains("<p>No PerDome plot: I = W/Q is"),
            "{}",
            section.html
        );
        // Compute bound on both: the data partition adds the peaks.
        let p_dp = partition(&split, Model::PerfectDataPartition);
        assert!(close(p_dp.bound.performance, 1189e9 + 2903e9));
    }
}
