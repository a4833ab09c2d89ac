//! A broken suite or baseline: always an input failure (exit 2), always
//! naming the file and, where there is one, the line.

use clflow_core::FailureKind;
use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub message: String,
    pub hint: Option<String>,
}

impl CheckError {
    pub fn new(file: &Path, line: Option<usize>, message: impl Into<String>) -> Self {
        CheckError {
            file: file.to_path_buf(),
            line,
            message: message.into(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}
impl clflow_core::Diagnostic for CheckError {
    fn hint(&self) -> Option<String> {
        self.hint.clone()
    }

    fn kind(&self) -> FailureKind {
        FailureKind::Input
    }
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for CheckError {}

/// The 1-based line of a byte offset in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

pub type Result<T> = std::result::Result<T, CheckError>;
