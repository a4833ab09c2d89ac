//! One datasheet profile: a device model's theoretical peaks (the paper's
//! F̄, B̄, P̄) and, where known, peaks measured elsewhere (F̂, B̂, P̂), each
//! figure with its source. The format is described in `devices/README.md`;
//! parsing is strict so that a typo in a field name is an error naming the
//! file and line, never a silently missing peak.

use crate::error::{line_of, DevicesError, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use toml::Spanned;

/// A figure a profile may state. The TOML key carries the unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Metric {
    Fp32,
    Fp64,
    Fp16,
    Int32,
    MemoryBandwidth,
    HostLink,
    /// Thermal design / maximum board power from the datasheet.
    Tdp,
    /// Peak power measured under load (the paper's P̂).
    Power,
    MemorySize,
    LastLevelCache,
    CacheLine,
    /// The unit a cache line is filled from memory in, where smaller than
    /// the line (NVIDIA's 32-byte sectors of 128-byte L2 lines).
    CacheSector,
    OnChipMemory,
}

/// The SI unit a figure converts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    OpsPerSecond,
    BytesPerSecond,
    Watts,
    Bytes,
}

impl Metric {
    pub const ALL: [Metric; 13] = [
        Metric::Fp32,
        Metric::Fp64,
        Metric::Fp16,
        Metric::Int32,
        Metric::MemoryBandwidth,
        Metric::HostLink,
        Metric::Tdp,
        Metric::Power,
        Metric::MemorySize,
        Metric::LastLevelCache,
        Metric::CacheLine,
        Metric::CacheSector,
        Metric::OnChipMemory,
    ];

    /// The TOML key, unit included.
    pub fn key(self) -> &'static str {
        match self {
            Metric::Fp32 => "fp32_gflops",
            Metric::Fp64 => "fp64_gflops",
            Metric::Fp16 => "fp16_gflops",
            Metric::Int32 => "int32_gops",
            Metric::MemoryBandwidth => "memory_bandwidth_gbs",
            Metric::HostLink => "host_link_gbs",
            Metric::Tdp => "tdp_w",
            Metric::Power => "power_w",
            Metric::MemorySize => "memory_gb",
            Metric::LastLevelCache => "last_level_cache_kib",
            Metric::CacheLine => "cache_line_bytes",
            Metric::CacheSector => "cache_sector_bytes",
            Metric::OnChipMemory => "on_chip_memory_kib",
        }
    }

    pub fn from_key(key: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.key() == key)
    }

    pub fn unit(self) -> Unit {
        match self {
            Metric::Fp32 | Metric::Fp64 | Metric::Fp16 | Metric::Int32 => Unit::OpsPerSecond,
            Metric::MemoryBandwidth | Metric::HostLink => Unit::BytesPerSecond,
            Metric::Tdp | Metric::Power => Unit::Watts,
            Metric::MemorySize
            | Metric::LastLevelCache
            | Metric::CacheLine
            | Metric::CacheSector
            | Metric::OnChipMemory => Unit::Bytes,
        }
    }

    /// What one unit of the value as written is in SI units.
    pub fn scale_to_si(self) -> f64 {
        match self {
            Metric::Fp32
            | Metric::Fp64
            | Metric::Fp16
            | Metric::Int32
            | Metric::MemoryBandwidth
            | Metric::HostLink
            | Metric::MemorySize => 1e9,
            Metric::LastLevelCache | Metric::OnChipMemory => 1024.0,
            Metric::Tdp | Metric::Power | Metric::CacheLine | Metric::CacheSector => 1.0,
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// A value in SI units, with its unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Quantity {
    pub value: f64,
    pub unit: Unit,
}

/// One stated figure: the value as written (in the key's unit) and where it
/// comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    pub value: f64,
    pub source: String,
}

/// The figures of one table (`[datasheet]` or `[measured]`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    figures: BTreeMap<Metric, Figure>,
}

impl Figures {
    pub fn get(&self, metric: Metric) -> Option<&Figure> {
        self.figures.get(&metric)
    }

    /// The figure in SI units (operations/s, bytes/s, watts, bytes).
    pub fn quantity(&self, metric: Metric) -> Option<Quantity> {
        self.get(metric).map(|figure| Quantity {
            value: figure.value * metric.scale_to_si(),
            unit: metric.unit(),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.figures.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (Metric, &Figure)> {
        self.figures.iter().map(|(m, f)| (*m, f))
    }

    /// Peak fp32 throughput in operations per second.
    pub fn fp32_ops_per_s(&self) -> Option<f64> {
        self.si(Metric::Fp32)
    }

    /// Peak fp64 throughput in operations per second.
    pub fn fp64_ops_per_s(&self) -> Option<f64> {
        self.si(Metric::Fp64)
    }

    /// Peak 32-bit integer throughput in operations per second.
    pub fn int32_ops_per_s(&self) -> Option<f64> {
        self.si(Metric::Int32)
    }

    /// Global-memory bandwidth in bytes per second.
    pub fn memory_bandwidth_bytes_per_s(&self) -> Option<f64> {
        self.si(Metric::MemoryBandwidth)
    }

    /// Datasheet power (TDP / maximum board power) in watts.
    pub fn tdp_watts(&self) -> Option<f64> {
        self.si(Metric::Tdp)
    }

    fn si(&self, metric: Metric) -> Option<f64> {
        self.quantity(metric).map(|q| q.value)
    }
}

impl Serialize for Figures {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.figures.len()))?;
        for (metric, figure) in &self.figures {
            map.serialize_entry(metric.key(), figure)?;
        }
        map.end()
    }
}

/// What kind of device a profile describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceClass {
    Gpu,
    Cpu,
    Fpga,
    Accelerator,
}

impl fmt::Display for DeviceClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceClass::Gpu => "gpu",
            DeviceClass::Cpu => "cpu",
            DeviceClass::Fpga => "fpga",
            DeviceClass::Accelerator => "accelerator",
        })
    }
}

/// Where a profile was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "path", rename_all = "lowercase")]
pub enum ProfileOrigin {
    /// Built into clflow from the `devices/` folder of its source tree.
    Embedded,
    /// A file in a user's profile directory.
    File(PathBuf),
}

/// One device model's datasheet profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DatasheetProfile {
    /// The file name without `.toml`: how users and overrides name it.
    pub id: String,
    pub origin: ProfileOrigin,
    pub model: String,
    pub vendor: String,
    #[serde(rename = "type")]
    pub class: DeviceClass,
    /// Case-insensitive substrings of the OpenCL device name.
    #[serde(rename = "match")]
    pub patterns: Vec<String>,
    pub datasheet: Figures,
    #[serde(skip_serializing_if = "Figures::is_empty")]
    pub measured: Figures,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    model: Spanned<String>,
    vendor: String,
    #[serde(rename = "type")]
    class: DeviceClass,
    #[serde(rename = "match")]
    patterns: Spanned<Vec<Spanned<String>>>,
    datasheet: BTreeMap<Spanned<String>, Spanned<RawFigure>>,
    #[serde(default)]
    measured: BTreeMap<Spanned<String>, Spanned<RawFigure>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFigure {
    value: f64,
    source: String,
}

impl DatasheetProfile {
    /// Parses one profile. `file` names it in errors; `id` is its file stem.
    pub fn parse(text: &str, file: &str, id: &str, origin: ProfileOrigin) -> Result<Self> {
        let at = |offset: usize, message: String| DevicesError::Profile {
            file: file.to_string(),
            line: line_of(text, offset),
            message,
        };
        let raw: RawProfile = toml::from_str(text).map_err(|err| {
            let offset = err.span().map_or(0, |span| span.start);
            at(offset, err.message().trim().to_string())
        })?;
        if raw.model.get_ref().trim().is_empty() {
            return Err(at(raw.model.span().start, "`model` is empty".into()));
        }
        if raw.patterns.get_ref().is_empty() {
            return Err(at(
                raw.patterns.span().start,
                "`match` lists no name pattern; add a part of the OpenCL device name".into(),
            ));
        }
        let mut patterns = Vec::new();
        for pattern in raw.patterns.get_ref() {
            if pattern.get_ref().trim().is_empty() {
                return Err(at(
                    pattern.span().start,
                    "a `match` pattern is empty".into(),
                ));
            }
            patterns.push(pattern.get_ref().trim().to_string());
        }
        let datasheet = figures(&raw.datasheet, "datasheet", &at)?;
        if datasheet.is_empty() {
            return Err(at(0, "`[datasheet]` states no figure".into()));
        }
        Ok(DatasheetProfile {
            id: id.to_string(),
            origin,
            model: raw.model.into_inner().trim().to_string(),
            vendor: raw.vendor,
            class: raw.class,
            patterns,
            datasheet,
            measured: figures(&raw.measured, "measured", &at)?,
        })
    }

    /// The paper's P̄ for the spec power fallback.
    pub fn tdp_watts(&self) -> Option<f64> {
        self.datasheet.tdp_watts()
    }
}

fn figures(
    raw: &BTreeMap<Spanned<String>, Spanned<RawFigure>>,
    table: &str,
    at: &dyn Fn(usize, String) -> DevicesError,
) -> Result<Figures> {
    let mut figures = BTreeMap::new();
    for (key, figure) in raw {
        let Some(metric) = Metric::from_key(key.get_ref()) else {
            let known: Vec<&str> = Metric::ALL.iter().map(|m| m.key()).collect();
            return Err(at(
                key.span().start,
                format!(
                    "unknown field `{}` in [{table}]; known fields: {}",
                    key.get_ref(),
                    known.join(", ")
                ),
            ));
        };
        let RawFigure { value, source } = figure.get_ref();
        if !value.is_finite() || *value <= 0.0 {
            return Err(at(
                figure.span().start,
                format!("`{metric}` must be a positive number, not {value}"),
            ));
        }
        if source.trim().is_empty() {
            return Err(at(
                figure.span().start,
                format!("`{metric}` has an empty `source`; say where the value comes from"),
            ));
        }
        figures.insert(
            metric,
            Figure { value: *value, source: source.trim().to_string() },
        );
    }
    Ok(Figures { figures })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<DatasheetProfile> {
        DatasheetProfile::parse(text, "devices/x.toml", "x", ProfileOrigin::Embedded)
    }

    const GOOD: &str = r#"model = "Board"
vendor = "V"
type = "gpu"
match = ["Board X"]

[datasheet]
fp32_gflops = { value = 1000, source = "sheet" }
last_level_cache_kib = { value = 1280, source = "sheet" }
"#;

    #[test]
    fn values_convert_to_si_units() {
        let profile = parse(GOOD).unwrap();
        assert_eq!(profile.datasheet.fp32_ops_per_s(), Some(1e12));
        assert_eq!(
            profile.datasheet.quantity(Metric::LastLevelCache),
            Some(Quantity { value: 1_310_720.0, unit: Unit::Bytes })
        );
        assert!(profile.measured.is_empty());
    }

    fn error_of(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn an_unknown_field_names_its_line_and_the_known_ones() {
        let text = GOOD.replace("last_level_cache_kib", "llc_mb");
        let err = error_of(&text);
        assert!(
            err.starts_with("devices/x.toml:8: unknown field `llc_mb` in [datasheet]; known fields: fp32_gflops"),
            "{err}"
        );
    }

    #[test]
    fn bad_values_and_missing_parts_name_their_line() {
        let negative = GOOD.replace("value = 1000", "value = -5");
        assert_eq!(
            error_of(&negative),
            "devices/x.toml:7: `fp32_gflops` must be a positive number, not -5"
        );
        let no_source = GOOD.replace("source = \"sheet\" }\nlast", "source = \" \" }\nlast");
        assert_eq!(
            error_of(&no_source),
            "devices/x.toml:7: `fp32_gflops` has an empty `source`; say where the value comes from"
        );
        let no_pattern = GOOD.replace("[\"Board X\"]", "[]");
        assert!(
            error_of(&no_pattern).starts_with("devices/x.toml:4: `match` lists no name pattern")
        );
        let bad_type = GOOD.replace("\"gpu\"", "\"tpu\"");
        let err = error_of(&bad_type);
        assert!(
            err.starts_with("devices/x.toml:3: unknown variant `tpu`"),
            "{err}"
        );
        let syntax = GOOD.replace("fp32_gflops = {", "fp32_gflops = ");
        assert!(error_of(&syntax).starts_with("devices/x.toml:7: "));
    }
}
