//! Why a report could not be written, naming the file at fault.

use clflow_core::FailureKind;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{}: cannot write the report: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: is a directory where the report writes a file; the earlier report is left as it was", path.display())]
    Obstacle { path: PathBuf },
    #[error("cannot draw {chart}: {message}")]
    Plot { chart: String, message: String },
    #[error("cannot encode {what}: {message}")]
    Encode { what: String, message: String },
    /// A document read back (split.json ...) that holds what no report
    /// could have written.
    #[error("{0}")]
    Document(String),
    #[error("{}: cannot write there: {source}", path.display())]
    Unwritable {
        path: PathBuf,
        flag: String,
        source: std::io::Error,
    },
    #[error("{}: cannot read: {source}", path.display())]
    SectionRead {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{at}: not the {name} `clflow analyze` writes: {why}")]
    Section {
        at: String,
        name: String,
        why: String,
    },
}

impl clflow_core::Diagnostic for ReportError {
    fn kind(&self) -> FailureKind {
        match self {
            ReportError::Io { .. }
            | ReportError::Obstacle { .. }
            | ReportError::Document(_)
            | ReportError::Unwritable { .. }
            | ReportError::SectionRead { .. }
            | ReportError::Section { .. } => FailureKind::Input,
            ReportError::Plot { .. } | ReportError::Encode { .. } => FailureKind::Analysis,
        }
    }

    fn hint(&self) -> Option<String> {
        let hint = match self {
            ReportError::Io { .. } => "choose a writable directory with --out",
            ReportError::Obstacle { .. } => "move that directory away, or choose another --out",
            ReportError::Plot { .. } | ReportError::Encode { .. } => {
                "this is a clflow bug; the inputs are fine, please report it with them"
            }
            ReportError::Document(_) => "re-run the command that wrote it",
            ReportError::SectionRead { .. } => {
                "check its permissions, or move it away to redraw the report without it"
            }
            ReportError::Unwritable { flag, .. } => {
                return Some(format!("choose a writable directory with {flag}"))
            }
            ReportError::Section { name, .. } => {
                return Some(format!(
                    "re-run `clflow analyze`, or move {name} away to redraw the report without its section"
                ))
            }
        };
        Some(hint.to_string())
    }
}
