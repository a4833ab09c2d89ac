//! What can go wrong reading results: always the input's fault, always
//! naming the file (and line) at fault.

use clflow_core::FailureKind;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}:{column}: not a clflow results file: {message}", path.display())]
    Json {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}: results schema {found}, but this clflow reads schema {expected}", path.display())]
    Schema {
        path: PathBuf,
        found: u32,
        expected: u32,
    },
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    #[error("{}:{line}: {message}", path.display())]
    Csv {
        path: PathBuf,
        line: u64,
        message: String,
    },
}

impl clflow_core::Diagnostic for MetricsError {
    fn kind(&self) -> FailureKind {
        FailureKind::Input
    }

    fn hint(&self) -> Option<String> {
        let hint: &'static str = match self {
            MetricsError::Read { .. } => "check the path; `clflow analyze` writes results.json into its --out directory",
            MetricsError::Json { .. } | MetricsError::Invalid { .. } => {
                "give a results.json written by clflow, or a measurements CSV (see `clflow report --help`)"
            }
            MetricsError::Schema { .. } => "re-run `clflow report` on it with the clflow that wrote it, or re-analyze",
            MetricsError::Csv { .. } => "see `clflow report --help` for the CSV columns and their units",
        };
        Some(hint.to_string())
    }
}
