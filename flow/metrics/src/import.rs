//! Reading results: `results.json` from any clflow, and CSV files of T and P
//! measured elsewhere (an FPGA run with vendor tools, a machine clflow cannot
//! reach), merged by the caller into one `ResultSet`.

use crate::derive::Metrics;
use crate::error::MetricsError;
use crate::figure::{Figure, Unit};
use crate::model::{Ceilings, DeviceProfile, KernelCounts, OpKind, ResultSet, Run, SCHEMA};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The columns a measurements CSV may have, with their meaning and unit.
/// `kernel`, `device` and `time_s` are required; an empty cell is unknown.
/// Lines starting with `#` are comments.
pub const CSV_COLUMNS: &[(&str, &str)] = &[
    ("kernel", "kernel name, as clflow count names it (required)"),
    (
        "device",
        "device name; rows and other inputs naming the same device merge (required)",
    ),
    ("time_s", "T, kernel execution time in seconds (required)"),
    ("power_peak_w", "P, peak power over the kernel's run, watts"),
    ("power_mean_w", "mean power over the kernel's run, watts"),
    (
        "energy_j",
        "energy the power tool integrated over the kernel, joules",
    ),
    (
        "work_ops",
        "W, operations (with ops and q_accessed_bytes), if no results.json gives it",
    ),
    ("ops", "int or float: the ceiling W meets"),
    ("q_accessed_bytes", "Q, global-memory bytes accessed"),
    ("q_compulsory_bytes", "Q counting each byte once"),
    ("peak_int_gops", "measured integer peak F̂_i, 1e9 OPS/s"),
    (
        "peak_float_gops",
        "measured floating-point peak F̂_f, 1e9 OPS/s",
    ),
    ("bandwidth_gbs", "measured memory bandwidth B̂, 1e9 bytes/s"),
    ("peak_power_w", "measured peak power P̂, watts"),
    (
        "datasheet_int_gops",
        "datasheet integer peak F̄_i, 1e9 OPS/s",
    ),
    (
        "datasheet_float_gops",
        "datasheet floating-point peak F̄_f, 1e9 OPS/s",
    ),
    (
        "datasheet_bandwidth_gbs",
        "datasheet memory bandwidth B̄, 1e9 bytes/s",
    ),
    ("datasheet_power_w", "datasheet power P̄, watts"),
    ("device_kind", "gpu, cpu, fpga or accelerator"),
    (
        "source",
        "where the row's figures come from (default: FILE:LINE)",
    ),
];

const MEASURED_COLUMNS: [&str; 4] = [
    "peak_float_gops",
    "peak_int_gops",
    "bandwidth_gbs",
    "peak_power_w",
];
const DATASHEET_COLUMNS: [&str; 4] = [
    "datasheet_float_gops",
    "datasheet_int_gops",
    "datasheet_bandwidth_gbs",
    "datasheet_power_w",
];

/// The `results.json` a report writes: the inputs, and the metrics derived
/// from them for readers that do not run clflow. Reading ignores `metrics`
/// and derives them afresh.
#[derive(Serialize)]
pub struct ResultsDocument<'a> {
    #[serde(flatten)]
    pub set: &'a ResultSet,
    pub metrics: &'a [Metrics],
}

pub fn results_document<'a>(set: &'a ResultSet, metrics: &'a [Metrics]) -> ResultsDocument<'a> {
    ResultsDocument { set, metrics }
}

fn read_text(path: &Path) -> Result<String, MetricsError> {
    std::fs::read_to_string(path)
        .map_err(|source| MetricsError::Read { path: path.to_path_buf(), source })
}

/// Reads a results file or a measurements CSV, by extension (else by content).
pub fn read_input(path: &Path) -> Result<ResultSet, MetricsError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("json") => read_results(path),
        Some(e) if e.eq_ignore_ascii_case("csv") => read_measurements_csv(path),
        _ if read_text(path)?.trim_start().starts_with('{') => read_results(path),
        _ => read_measurements_csv(path),
    }
}

/// Reads a `results.json` written by any clflow of this schema.
pub fn read_results(path: &Path) -> Result<ResultSet, MetricsError> {
    let text = read_text(path)?;
    let json_error = |e: serde_json::Error| MetricsError::Json {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    };
    #[derive(Deserialize)]
    struct Version {
        schema: Option<u32>,
    }
    let version: Version = serde_json::from_str(&text).map_err(json_error)?;
    match version.schema {
        Some(SCHEMA) => {}
        Some(found) => {
            return Err(MetricsError::Schema { path: path.to_path_buf(), found, expected: SCHEMA })
        }
        None => {
            return Err(MetricsError::Invalid {
                path: path.to_path_buf(),
                message: "no \"schema\" field: not a clflow results file".into(),
            })
        }
    }
    let set: ResultSet = serde_json::from_str(&text).map_err(json_error)?;
    validate(&set)
        .map_err(|message| MetricsError::Invalid { path: path.to_path_buf(), message })?;
    Ok(set)
}

/// Checks that a figure has the unit its place implies and a sane value.
fn check(figure: &Figure, unit: Unit, what: &str) -> Result<(), String> {
    if figure.unit != unit {
        return Err(format!(
            "{what} is in {:?}, expected {:?}",
            figure.unit, unit
        ));
    }
    if !figure.value.is_finite() || figure.value < 0.0 {
        return Err(format!(
            "{what} is {}, expected a finite number ≥ 0",
            figure.value
        ));
    }
    Ok(())
}

fn check_ceilings(ceilings: &Ceilings, what: &str) -> Result<(), String> {
    let rate = Unit::OpsPerSecond;
    for (figure, unit, name) in [
        (&ceilings.float, rate, "float"),
        (&ceilings.int, rate, "int"),
        (&ceilings.bandwidth, Unit::BytesPerSecond, "bandwidth"),
        (&ceilings.power, Unit::Watts, "power"),
    ] {
        if let Some(figure) = figure {
            check(figure, unit, &format!("{what}.{name}"))?;
        }
    }
    Ok(())
}

/// Every figure of a set in its expected unit, finite and not negative.
fn validate(set: &ResultSet) -> Result<(), String> {
    for k in &set.kernels {
        let what = format!("kernel `{}`", k.kernel);
        check(&k.work, Unit::Ops, &format!("{what} work"))?;
        check(
            &k.traffic_accessed,
            Unit::Bytes,
            &format!("{what} traffic_accessed"),
        )?;
        if let Some(q) = &k.traffic_compulsory {
            check(q, Unit::Bytes, &format!("{what} traffic_compulsory"))?;
        }
    }
    for d in &set.devices {
        check_ceilings(&d.measured, &format!("device `{}` measured", d.name))?;
        check_ceilings(&d.datasheet, &format!("device `{}` datasheet", d.name))?;
    }
    for r in &set.runs {
        let what = format!("run of `{}` on `{}`", r.kernel, r.device);
        for (figure, unit, name) in [
            (&r.time, Unit::Seconds, "time"),
            (&r.power_peak, Unit::Watts, "power_peak"),
            (&r.power_mean, Unit::Watts, "power_mean"),
            (&r.energy_measured, Unit::Joules, "energy_measured"),
        ] {
            if let Some(figure) = figure {
                check(figure, unit, &format!("{what} {name}"))?;
            }
        }
    }
    Ok(())
}

/// One CSV row being read: its cells by column name, and where it is.
struct Row<'a> {
    headers: &'a csv::StringRecord,
    record: &'a csv::StringRecord,
    path: &'a Path,
    line: u64,
    source: String,
}

impl Row<'_> {
    fn error(&self, message: impl Into<String>) -> MetricsError {
        MetricsError::Csv {
            path: self.path.to_path_buf(),
            line: self.line,
            message: message.into(),
        }
    }

    fn text(&self, column: &str) -> Option<&str> {
        let index = self.headers.iter().position(|h| h == column)?;
        self.record.get(index).filter(|cell| !cell.is_empty())
    }

    fn required(&self, column: &str) -> Result<&str, MetricsError> {
        self.text(column)
            .ok_or_else(|| self.error(format!("column `{column}` is empty; it is required")))
    }

    /// A non-negative number times `scale`, as an imported figure.
    fn figure(&self, column: &str, unit: Unit, scale: f64) -> Result<Option<Figure>, MetricsError> {
        let Some(cell) = self.text(column) else {
            return Ok(None);
        };
        let value: f64 = cell
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| {
                self.error(format!("column `{column}`: `{cell}` is not a number ≥ 0"))
            })?;
        Ok(Some(Figure::imported(
            value * scale,
            unit,
            self.source.clone(),
        )))
    }

    /// One origin's ceilings from its four columns: F_f, F_i (1e9 OPS/s),
    /// B (1e9 bytes/s), P (watts).
    fn ceilings(
        &self,
        [float, int, bandwidth, power]: [&str; 4],
    ) -> Result<Ceilings, MetricsError> {
        Ok(Ceilings {
            float: self.figure(float, Unit::OpsPerSecond, 1e9)?,
            int: self.figure(int, Unit::OpsPerSecond, 1e9)?,
            bandwidth: self.figure(bandwidth, Unit::BytesPerSecond, 1e9)?,
            power: self.figure(power, Unit::Watts, 1.0)?,
            caches: Vec::new(),
        })
    }

    fn kernel_counts(&self, kernel: &str) -> Result<Option<KernelCounts>, MetricsError> {
        let Some(work) = self.figure("work_ops", Unit::Ops, 1.0)? else {
            return Ok(None);
        };
        let ops = match self.text("ops") {
            Some("int") => OpKind::Int,
            Some("float") => OpKind::Float,
            Some(other) => {
                return Err(self.error(format!("column `ops`: `{other}` is neither int nor float")))
            }
            None => {
                return Err(self.error("work_ops needs `ops` (int or float) to pick its ceiling"))
            }
        };
        let traffic_accessed = self
            .figure("q_accessed_bytes", Unit::Bytes, 1.0)?
            .ok_or_else(|| self.error("work_ops needs `q_accessed_bytes` for its intensity"))?;
        Ok(Some(KernelCounts {
            kernel: kernel.to_string(),
            ops,
            op_set: None,
            work,
            traffic_accessed,
            traffic_compulsory: self.figure("q_compulsory_bytes", Unit::Bytes, 1.0)?,
            hotspots: Default::default(),
        }))
    }
}

/// Reads a CSV of measurements (see [`CSV_COLUMNS`]): one run per row, plus
/// the kernel counts and device ceilings the row gives. Every figure is
/// imported; its source is the `source` cell, else `FILE:LINE`.
pub fn read_measurements_csv(path: &Path) -> Result<ResultSet, MetricsError> {
    let csv_error = |line: u64, e: csv::Error| MetricsError::Csv {
        path: path.to_path_buf(),
        line: e.position().map(|p| p.line()).unwrap_or(line),
        message: e.to_string(),
    };
    let text = read_text(path)?;
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(text.as_bytes());
    let headers = reader.headers().map_err(|e| csv_error(1, e))?.clone();
    let header_line = headers.position().map_or(1, |p| p.line());
    for header in headers.iter() {
        if !CSV_COLUMNS.iter().any(|(name, _)| *name == header) {
            let known: Vec<&str> = CSV_COLUMNS.iter().map(|(n, _)| *n).collect();
            return Err(MetricsError::Csv {
                path: path.to_path_buf(),
                line: header_line,
                message: format!(
                    "unknown column `{header}`; the columns are {}",
                    known.join(", ")
                ),
            });
        }
    }
    for required in ["kernel", "device", "time_s"] {
        if !headers.iter().any(|h| h == required) {
            return Err(MetricsError::Csv {
                path: path.to_path_buf(),
                line: header_line,
                message: format!("no `{required}` column; kernel, device and time_s are required"),
            });
        }
    }

    let mut set = ResultSet::default();
    for record in reader.records() {
        let record = record.map_err(|e| csv_error(0, e))?;
        let line = record.position().map(|p| p.line()).unwrap_or(0);
        let mut row = Row {
            headers: &headers,
            record: &record,
            path,
            line,
            source: String::new(),
        };
        row.source = row
            .text("source")
            .map(str::to_string)
            .unwrap_or_else(|| format!("{}:{line}", path.display()));
        let kernel = row.required("kernel")?.to_string();
        let device = row.required("device")?.to_string();
        let mut run = Run::new(&kernel, &device);
        run.time = row.figure("time_s", Unit::Seconds, 1.0)?;
        if run.time.as_ref().is_some_and(|t| t.value == 0.0) {
            return Err(
                row.error("column `time_s`: a kernel time of 0 s cannot give a performance")
            );
        }
        run.power_peak = row.figure("power_peak_w", Unit::Watts, 1.0)?;
        run.power_mean = row.figure("power_mean_w", Unit::Watts, 1.0)?;
        run.energy_measured = row.figure("energy_j", Unit::Joules, 1.0)?;

        let profile = DeviceProfile {
            name: device.clone(),
            kind: row.text("device_kind").map(str::to_string),
            measured: row.ceilings(MEASURED_COLUMNS)?,
            datasheet: row.ceilings(DATASHEET_COLUMNS)?,
        };
        // A device row with no ceilings still names the device, so that a
        // merge with results giving its ceilings matches it.
        set.put_device(profile);
        if let Some(counts) = row.kernel_counts(&kernel)? {
            set.put_kernel(counts);
        }
        if set.put_run(run) {
            return Err(row.error(format!(
                "a second row for kernel `{kernel}` on device `{device}`; give each pair once"
            )));
        }
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::Provenance;
    use std::io::Write;

    fn file(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::File::create(&path)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        (dir, path)
    }

    #[test]
    fn a_csv_row_gives_a_run_its_device_and_its_counts() {
        let (_dir, path) = file(
            "fpga.csv",
            "# measured with vendor tools\n\
             kernel,device,time_s,power_peak_w,work_ops,ops,q_accessed_bytes,bandwidth_gbs,peak_int_gops,device_kind\n\
             hash, ADM-PCIE-7V3 ,0.0676,17.75,1224e6,int,367e6,8.5,3032,fpga\n",
        );
        let set = read_measurements_csv(&path).unwrap();
        let run = set.run("hash", "ADM-PCIE-7V3").unwrap();
        let time = run.time.as_ref().unwrap();
        assert_eq!(time.value, 0.0676);
        assert_eq!(time.provenance, Provenance::Imported);
        assert_eq!(
            time.source.as_deref(),
            Some(format!("{}:3", path.display()).as_str())
        );
        assert_eq!(run.power_peak.as_ref().unwrap().value, 17.75);
        let device = set.device("ADM-PCIE-7V3").unwrap();
        assert_eq!(device.measured.int.as_ref().unwrap().value, 3032e9);
        assert_eq!(device.measured.bandwidth.as_ref().unwrap().value, 8.5e9);
        assert_eq!(device.kind.as_deref(), Some("fpga"));
        let kernel = set.kernel("hash").unwrap();
        assert_eq!(kernel.work.value, 1224e6);
        assert_eq!(kernel.ops, OpKind::Int);
    }

    #[test]
    fn csv_errors_name_the_file_and_line() {
        let (_dir, path) = file("m.csv", "kernel,device,time_s\nk,d,0.5\nk,e,fast\n");
        let err = read_measurements_csv(&path).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "{}:3: column `time_s`: `fast` is not a number ≥ 0",
                path.display()
            )
        );

        let (_dir, path) = file("m.csv", "kernel,device,time_s,watts\n");
        let err = read_measurements_csv(&path).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{}:1: unknown column `watts`", path.display())),
            "{err}"
        );

        let (_dir, path) = file("m.csv", "kernel,device,time_s\nk,d,1\nk,d,2\n");
        let err = read_measurements_csv(&path).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{}:3: a second row", path.display())),
            "{err}"
        );

        let (_dir, path) = file("m.csv", "kernel,device,time_s,work_ops\nk,d,1,5\n");
        let err = read_measurements_csv(&path).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{}:2: work_ops needs `ops`", path.display())),
            "{err}"
        );
    }

    #[test]
    fn results_round_trip_and_other_schemas_are_refused() {
        let set = crate::paper::lookup3();
        let metrics = set.evaluate();
        let text = serde_json::to_string(&results_document(&set, &metrics)).unwrap();
        let (_dir, path) = file("results.json", &text);
        assert_eq!(read_input(&path).unwrap(), set);

        let (_dir, path) = file("r.json", &text.replacen("\"schema\":1", "\"schema\":7", 1));
        let err = read_results(&path).unwrap_err().to_string();
        assert!(
            err.ends_with("results schema 7, but this clflow reads schema 1"),
            "{err}"
        );

        let (_dir, path) = file("r.json", "{\"schema\": 1,\n \"kernels\": [}");
        let err = read_results(&path).unwrap_err().to_string();
        assert!(err.starts_with(&format!("{}:2:", path.display())), "{err}");
    }
}
