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
}

impl clflow_core::Diagnostic for ReportError {
    fn kind(&self) -> FailureKind {
        match self {
            ReportError::Io { .. } | ReportError::Obstacle { .. } => FailureKind::Input,
            ReportError::Plot { .. } | ReportError::Encode { .. } => FailureKind::Analysis,
        }
    }

    fn hint(&self) -> Option<String> {
        let hint: &'static str = {
            match self {
                ReportError::Io { .. } => "choose a writable directory with --out",
                ReportError::Obstacle { .. } => "move that directory away, or choose another --out",
                ReportError::Plot { .. } | ReportError::Encode { .. } => {
                    "this is a clflow bug; the inputs are fine, please report it with them"
                }
            }
        };
        Some(hint.to_string())
    }
}
