//! Errors of the device-profile layer. Each names the file (and line, where
//! there is one) at fault and says whether the user can fix it in their input
//! (exit 2) or the analysis itself could not finish (exit 1).

use clflow_core::FailureKind;

pub type Result<T, E = DevicesError> = std::result::Result<T, E>;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DevicesError {
    /// A datasheet profile is not valid TOML or breaks the profile format.
    #[error("{file}:{line}: {message}")]
    Profile {
        file: String,
        line: usize,
        message: String,
    },

    /// A profile directory could not be listed.
    #[error("profile directory {dir}: {message}")]
    ProfileDir { dir: String, message: String },

    /// The power CSV does not follow the documented columns.
    #[error("{file}:{line}: {message}")]
    PowerImport {
        file: String,
        line: usize,
        message: String,
    },

    /// A stored measured profile cannot be used as it is.
    #[error("measured profile {path}: {message}")]
    Measured { path: String, message: String },

    /// A file could not be read or written.
    #[error("{path}: {message}")]
    Io {
        path: String,
        message: String,
        kind: FailureKind,
    },
}

impl DevicesError {
    /// A file the user named (input) could not be read.
    pub(crate) fn input_io(path: impl std::fmt::Display, err: &std::io::Error) -> Self {
        DevicesError::Io {
            path: path.to_string(),
            message: err.to_string(),
            kind: FailureKind::Input,
        }
    }

    /// A file clflow keeps for itself could not be read or written.
    pub(crate) fn store_io(path: impl std::fmt::Display, err: &std::io::Error) -> Self {
        DevicesError::Io {
            path: path.to_string(),
            message: err.to_string(),
            kind: FailureKind::Analysis,
        }
    }
}
impl clflow_core::Diagnostic for DevicesError {
    fn kind(&self) -> FailureKind {
        match self {
            DevicesError::Profile { .. }
            | DevicesError::ProfileDir { .. }
            | DevicesError::PowerImport { .. }
            | DevicesError::Measured { .. } => FailureKind::Input,
            DevicesError::Io { kind, .. } => *kind,
        }
    }

    fn hint(&self) -> Option<String> {
        let hint: Option<&'static str> = match self {
            DevicesError::Profile { .. } => {
                Some("see devices/README.md for the profile format and the known fields")
            }
            DevicesError::PowerImport { .. } => {
                Some("the CSV needs the header `device,kernel,time_s,watts`; see devices/README.md")
            }
            DevicesError::Measured { .. } => {
                Some("re-measure with `clflow bench --device SEL --refresh`, which replaces it")
            }
            _ => None,
        };
        hint.map(str::to_string)
    }
}

/// The 1-based line of a byte offset in a text.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_count_from_one() {
        let text = "a\nbb\nccc";
        assert_eq!(line_of(text, 0), 1);
        assert_eq!(line_of(text, 2), 2);
        assert_eq!(line_of(text, 5), 3);
        assert_eq!(line_of(text, 999), 3);
    }
}
