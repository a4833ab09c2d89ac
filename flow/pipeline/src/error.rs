//! What every step of the pipeline fails with: one line naming the file,
//! line, argument or work-item at fault, its kind (the exit status it
//! means) and, where we know it, what to do.

use clflow_core::{Diagnostic, FailureKind};
use std::fmt::{self, Display};

#[derive(Debug, Clone)]
pub struct Error {
    pub kind: FailureKind,
    pub message: String,
    pub hint: Option<String>,
    /// The exit status to leave with where it is not the kind's: a captured
    /// application's own.
    pub exit_status: Option<u8>,
}

impl Error {
    /// The user can fix it: a bad flag, manifest, kernel or file.
    pub fn input(message: impl Display) -> Self {
        Error {
            kind: FailureKind::Input,
            message: message.to_string(),
            hint: None,
            exit_status: None,
        }
    }

    /// The input was fine but the analysis could not finish.
    pub fn analysis(message: impl Display) -> Self {
        Error {
            kind: FailureKind::Analysis,
            message: message.to_string(),
            hint: None,
            exit_status: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Display) -> Self {
        self.hint = Some(hint.to_string());
        self
    }

    pub fn with_exit_status(mut self, status: u8) -> Self {
        self.exit_status = Some(status);
        self
    }

    /// The status to exit with: the one given, else the kind's.
    pub fn exit_code(&self) -> u8 {
        self.exit_status.unwrap_or(self.kind.exit_code())
    }

    /// A stage crate's error, its kind and hint kept.
    pub fn from_diagnostic(err: &(impl Diagnostic + ?Sized)) -> Self {
        Error {
            kind: err.kind(),
            message: err.to_string(),
            hint: err.hint(),
            exit_status: None,
        }
    }
}

impl Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl<E: Diagnostic> From<E> for Error {
    fn from(err: E) -> Self {
        Error::from_diagnostic(&err)
    }
}

pub type Result<T> = std::result::Result<T, Error>;
