//! clflow's report: from a result set, the paper's charts (SVG and PNG),
//! `metrics.csv`, `results.json` and a self-contained `index.html`, written
//! so that a failed run never leaves a torn report.

mod charts;
mod error;
mod font;
mod html;
pub mod launches;
mod output;
pub mod perdome;
pub mod plot;
pub mod prediction;
pub mod sections;
pub mod source;
pub mod split;
mod tables;
pub mod text;
pub mod traffic;

pub use charts::{comparison_roofline, device_roofline, energy_bars, Roof};
pub use error::ReportError;
pub use html::escape;
pub use output::{
    check_writable, write_report, write_report_sections, write_report_with, ReportSection, Section,
    SectionChart, Written,
};
pub use tables::metrics_csv;
