//! The metrics as rows: `metrics.csv` (base units, one row per kernel ×
//! device, each figure followed by its provenance) and the HTML tables.

use crate::error::ReportError;
use clflow_metrics::{Figure, Metrics};

type Pick = fn(&Metrics) -> Option<&Figure>;

/// Every figure column: CSV header (unit in the name), HTML header, value.
pub const FIGURE_COLUMNS: &[(&str, &str, Pick)] = &[
    ("W_ops", "W", |m| Some(&m.work)),
    ("Q_accessed_bytes", "Q accessed", |m| {
        Some(&m.traffic_accessed)
    }),
    ("Q_compulsory_bytes", "Q compulsory", |m| {
        m.traffic_compulsory.as_ref()
    }),
    ("I_min_ops_per_byte", "I min", |m| m.intensity_min.as_ref()),
    ("I_max_ops_per_byte", "I max", |m| m.intensity_max.as_ref()),
    ("T_s", "T", |m| m.time.as_ref()),
    ("F_ops_per_s", "F = W/T", |m| m.performance.as_ref()),
    ("P_peak_W", "P peak", |m| m.power_peak.as_ref()),
    ("P_mean_W", "P mean", |m| m.power_mean.as_ref()),
    ("R_ops_per_s_per_W", "R = F/P", |m| m.perf_per_watt.as_ref()),
    ("E_J", "E = T·P", |m| m.energy.as_ref()),
    ("E_mean_power_J", "T · P mean", |m| {
        m.energy_from_mean_power.as_ref()
    }),
    ("E_measured_J", "E measured", |m| m.energy_measured.as_ref()),
    ("compute_ceiling_ops_per_s", "compute ceiling", |m| {
        m.compute_ceiling.as_ref()
    }),
    ("bandwidth_ceiling_bytes_per_s", "bandwidth ceiling", |m| {
        m.bandwidth_ceiling.as_ref()
    }),
    ("power_ceiling_W", "power ceiling", |m| {
        m.power_ceiling.as_ref()
    }),
    ("ridge_ops_per_byte", "ridge", |m| m.ridge.as_ref()),
    ("attainable_ops_per_s", "attainable", |m| {
        m.attainable.as_ref()
    }),
    (
        "attainable_at_I_min_ops_per_s",
        "attainable at I min",
        |m| m.attainable_at_min_intensity.as_ref(),
    ),
    ("fraction_of_attainable", "of attainable", |m| {
        m.fraction_of_attainable.as_ref()
    }),
    (
        "attainable_per_watt_ops_per_s_per_W",
        "attainable per watt",
        |m| m.attainable_per_watt.as_ref(),
    ),
];

/// The columns the HTML summary shows, by CSV header.
pub const SUMMARY_COLUMNS: &[&str] = &[
    "I_max_ops_per_byte",
    "T_s",
    "F_ops_per_s",
    "P_peak_W",
    "R_ops_per_s_per_W",
    "E_J",
    "attainable_ops_per_s",
    "fraction_of_attainable",
    "ridge_ops_per_byte",
];

pub fn column(name: &str) -> Option<&'static (&'static str, &'static str, Pick)> {
    FIGURE_COLUMNS.iter().find(|(csv, _, _)| *csv == name)
}

/// `metrics.csv`: kernel, device, ops, then each figure in base units and its
/// provenance, then the bound and any notes.
pub fn metrics_csv(metrics: &[Metrics]) -> Result<Vec<u8>, ReportError> {
    let encode =
        |e: csv::Error| ReportError::Encode { what: "metrics.csv".into(), message: e.to_string() };
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["kernel".to_string(), "device".into(), "ops".into()];
    for (name, _, _) in FIGURE_COLUMNS {
        header.push(name.to_string());
        header.push(format!("{name}_provenance"));
    }
    header.extend(["bound".into(), "notes".into()]);
    writer.write_record(&header).map_err(encode)?;
    for m in metrics {
        let mut row = vec![m.kernel.clone(), m.device.clone(), m.ops.name().to_string()];
        for (_, _, pick) in FIGURE_COLUMNS {
            match pick(m) {
                Some(f) => {
                    row.push(f.value.to_string());
                    row.push(f.provenance.name().to_string());
                }
                None => row.extend([String::new(), String::new()]),
            }
        }
        row.push(m.bound.map(|b| b.name().to_string()).unwrap_or_default());
        row.push(m.notes.join("; "));
        writer.write_record(&row).map_err(encode)?;
    }
    writer
        .into_inner()
        .map_err(|e| ReportError::Encode { what: "metrics.csv".into(), message: e.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_per_kernel_and_device_in_base_units() {
        let metrics = clflow_metrics::paper::lookup3().evaluate();
        let bytes = metrics_csv(&metrics).unwrap();
        let mut reader = csv::Reader::from_reader(bytes.as_slice());
        let headers = reader.headers().unwrap().clone();
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 3);
        let k20 = rows.iter().find(|r| &r[1] == "Tesla K20").unwrap();
        let at = |name: &str| headers.iter().position(|h| h == name).unwrap();
        let f: f64 = k20[at("F_ops_per_s")].parse().unwrap();
        assert!((f - 126.42e9).abs() < 1.0);
        assert_eq!(&k20[at("F_ops_per_s_provenance")], "imported");
        assert_eq!(&k20[at("compute_ceiling_ops_per_s")], "585000000000");
        assert_eq!(&k20[at("bound")], "memory");
        assert_eq!(&k20[at("Q_compulsory_bytes")], "");
    }
}
