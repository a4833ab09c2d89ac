//! A number with its unit and its provenance: every figure clflow reports
//! says what it measures and where it comes from.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The unit of a figure. Values are always stored in these base units
/// (operations, bytes, seconds, watts, joules); prefixes are for display only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Ops,
    Bytes,
    Seconds,
    Watts,
    Joules,
    OpsPerSecond,
    BytesPerSecond,
    OpsPerByte,
    OpsPerSecondPerWatt,
    /// A dimensionless ratio (1.0 = 100 %).
    Ratio,
}

impl Unit {
    /// The symbol after an SI prefix: "OPS/s" in "585 GOPS/s".
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::Ops => "OPS",
            Unit::Bytes => "B",
            Unit::Seconds => "s",
            Unit::Watts => "W",
            Unit::Joules => "J",
            Unit::OpsPerSecond => "OPS/s",
            Unit::BytesPerSecond => "B/s",
            Unit::OpsPerByte => "OPS/B",
            Unit::OpsPerSecondPerWatt => "OPS/s/W",
            Unit::Ratio => "",
        }
    }

    /// The prefix every display of this unit uses, where the paper fixes one
    /// (rates in giga, as its Table 1 and figures do); `None` picks one per value.
    fn fixed_prefix(self) -> Option<(f64, &'static str)> {
        match self {
            Unit::OpsPerSecond | Unit::BytesPerSecond | Unit::OpsPerSecondPerWatt => {
                Some((1e9, "G"))
            }
            Unit::Watts | Unit::OpsPerByte | Unit::Ratio => Some((1.0, "")),
            Unit::Ops | Unit::Bytes | Unit::Seconds | Unit::Joules => None,
        }
    }

    /// The scale and full unit label a chart axis or table column uses for
    /// values of this unit: (1e9, "GOPS/s").
    pub fn display_scale(self) -> (f64, String) {
        let (scale, prefix) = self.fixed_prefix().unwrap_or((1.0, ""));
        (scale, format!("{prefix}{}", self.symbol()))
    }

    /// `value` (in base units) as text with a prefix: "585 GOPS/s", "9.682 ms".
    pub fn format(self, value: f64) -> String {
        if self == Unit::Ratio {
            return format!("{}%", format_number(value * 100.0));
        }
        let (scale, prefix) = self.fixed_prefix().unwrap_or_else(|| auto_prefix(value));
        format!("{} {prefix}{}", format_number(value / scale), self.symbol())
    }
}

const PREFIXES: [(f64, &str); 8] = [
    (1e-9, "n"),
    (1e-6, "µ"),
    (1e-3, "m"),
    (1.0, ""),
    (1e3, "k"),
    (1e6, "M"),
    (1e9, "G"),
    (1e12, "T"),
];

/// The smallest prefix that shows `value` below 10 000 (so "1224 MOPS", as the
/// paper writes W), or the largest that shows it at 1 or more for small values.
fn auto_prefix(value: f64) -> (f64, &'static str) {
    let magnitude = value.abs();
    if magnitude == 0.0 || !magnitude.is_finite() {
        return (1.0, "");
    }
    if magnitude >= 1.0 {
        PREFIXES[3..]
            .iter()
            .copied()
            .find(|(scale, _)| magnitude / scale < 10_000.0)
            .unwrap_or(PREFIXES[7])
    } else {
        PREFIXES[..3]
            .iter()
            .rev()
            .copied()
            .find(|(scale, _)| magnitude / scale >= 1.0)
            .unwrap_or(PREFIXES[0])
    }
}

pub use clflow_core::numbers::format_number;

/// Where a figure comes from.
///
/// Ordered from the most to the least direct: a figure derived from others
/// takes the least direct provenance among its inputs, so a performance
/// computed from an imported time is "imported", and an attainable
/// performance computed from datasheet peaks is "datasheet".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    /// Measured by clflow on this machine: counted by the interpreter, timed
    /// and sampled by the runner, or benchmarked.
    Measured,
    /// Measured elsewhere and brought in: another clflow's results, a CSV of
    /// vendor-tool measurements, a published figure.
    Imported,
    /// Stated by hand as part of a specification (a fixture, an assumption
    /// the user makes), neither measured nor from a datasheet.
    Spec,
    /// The vendor's theoretical figure (the paper's M̄).
    Datasheet,
}

impl Provenance {
    pub fn name(self) -> &'static str {
        match self {
            Provenance::Measured => "measured",
            Provenance::Imported => "imported",
            Provenance::Spec => "spec",
            Provenance::Datasheet => "datasheet",
        }
    }
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One reported number: value in base units, its unit, where it comes from,
/// and (where known) the tool, sensor, document or equation behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub value: f64,
    pub unit: Unit,
    pub provenance: Provenance,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Figure {
    pub fn new(value: f64, unit: Unit, provenance: Provenance, source: impl Into<String>) -> Self {
        Figure { value, unit, provenance, source: Some(source.into()) }
    }

    pub fn measured(value: f64, unit: Unit, source: impl Into<String>) -> Self {
        Figure::new(value, unit, Provenance::Measured, source)
    }

    pub fn imported(value: f64, unit: Unit, source: impl Into<String>) -> Self {
        Figure::new(value, unit, Provenance::Imported, source)
    }

    pub fn datasheet(value: f64, unit: Unit, source: impl Into<String>) -> Self {
        Figure::new(value, unit, Provenance::Datasheet, source)
    }

    /// A figure computed from `inputs` by `equation` (e.g. "F = W/T (eq. 3)"):
    /// it carries the least direct provenance among them.
    pub fn derived(value: f64, unit: Unit, inputs: &[&Figure], equation: &str) -> Self {
        let provenance = inputs
            .iter()
            .map(|f| f.provenance)
            .max()
            .unwrap_or(Provenance::Spec);
        Figure::new(value, unit, provenance, equation)
    }

    /// "585 GOPS/s".
    pub fn display(&self) -> String {
        self.unit.format(self.value)
    }
}

impl fmt::Display for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_four_significant_digits() {
        assert_eq!(format_number(585.0), "585");
        assert_eq!(format_number(2903.0), "2903");
        assert_eq!(format_number(476.19), "476.2");
        assert_eq!(format_number(1224.0 / 367.0), "3.335");
        assert_eq!(format_number(0.38), "0.38");
        assert_eq!(format_number(8.5), "8.5");
        assert_eq!(format_number(0.0), "0");
    }

    #[test]
    fn rates_use_the_papers_giga_units_and_counts_pick_a_prefix() {
        assert_eq!(Unit::OpsPerSecond.format(585e9), "585 GOPS/s");
        assert_eq!(Unit::BytesPerSecond.format(143e9), "143 GB/s");
        assert_eq!(Unit::OpsPerSecondPerWatt.format(0.38e9), "0.38 GOPS/s/W");
        assert_eq!(Unit::Ops.format(1224e6), "1224 MOPS");
        assert_eq!(Unit::Bytes.format(367e6), "367 MB");
        assert_eq!(Unit::Seconds.format(1224e6 / 126.42e9), "9.682 ms");
        assert_eq!(Unit::Joules.format(1.037), "1.037 J");
        assert_eq!(Unit::Ratio.format(0.265), "26.5%");
        assert_eq!(Unit::OpsPerSecond.display_scale(), (1e9, "GOPS/s".into()));
    }

    #[test]
    fn a_derived_figure_takes_the_least_direct_provenance() {
        let w = Figure::measured(10.0, Unit::Ops, "interpreter");
        let t = Figure::imported(2.0, Unit::Seconds, "fpga.csv:2");
        let f = Figure::derived(5.0, Unit::OpsPerSecond, &[&w, &t], "F = W/T (eq. 3)");
        assert_eq!(f.provenance, Provenance::Imported);
        let b = Figure::datasheet(1.0, Unit::BytesPerSecond, "sheet");
        let g = Figure::derived(1.0, Unit::OpsPerSecond, &[&f, &b], "x");
        assert_eq!(g.provenance, Provenance::Datasheet);
        assert_eq!(g.source.as_deref(), Some("x"));
    }
}
