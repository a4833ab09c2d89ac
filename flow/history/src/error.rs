//! What can go wrong with the history store, and whose fault it is.

use clflow_core::FailureKind;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The store was written by a newer clflow: reading it could misread it,
    /// writing it could corrupt it for that clflow.
    #[error("{path}: the history store has schema version {found}, newer than the {supported} this clflow knows")]
    NewerSchema {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("{path}: {message}")]
    Store { path: PathBuf, message: String },
    #[error("no history store location: set CLFLOW_STORE, CLFLOW_DATA_DIR, XDG_DATA_HOME or HOME, or pass --store")]
    NoLocation,
    #[error("cannot draw the trend: {0}")]
    Plot(String),
}

impl HistoryError {
    pub(crate) fn store(path: &std::path::Path, err: impl std::fmt::Display) -> Self {
        HistoryError::Store { path: path.to_path_buf(), message: err.to_string() }
    }
}
impl clflow_core::Diagnostic for HistoryError {
    fn kind(&self) -> FailureKind {
        match self {
            HistoryError::Plot(_) => FailureKind::Analysis,
            _ => FailureKind::Input,
        }
    }

    fn hint(&self) -> Option<String> {
        let hint: Option<&'static str> = match self {
            HistoryError::NewerSchema { .. } => Some(
                "upgrade clflow, or point --store (or CLFLOW_STORE) at another file to keep a separate history",
            ),
            HistoryError::Store { .. } => Some(
                "check that the directory is writable; --store PATH or CLFLOW_STORE picks another file",
            ),
            HistoryError::NoLocation => None,
            HistoryError::Plot(_) => None,
        };
        hint.map(str::to_string)
    }
}

pub type Result<T> = std::result::Result<T, HistoryError>;
