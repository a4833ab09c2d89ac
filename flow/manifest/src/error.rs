//! Manifest errors: each names the manifest file, the line, the argument at
//! fault, what is wrong and what would be right.

use clflow_core::FailureKind;
use std::fmt;
use std::path::{Path, PathBuf};

/// Which kernel argument an error is about, as messages write it:
/// `arg 2 (keys)`. Indices count from 0, as `clSetKernelArg` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgRef {
    pub index: usize,
    pub name: Option<String>,
}

impl fmt::Display for ArgRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(name) => write!(f, "arg {} ({name})", self.index),
            None => write!(f, "arg {}", self.index),
        }
    }
}

/// Something wrong with a manifest, or with the inputs it names.
///
/// Displays as one line: `kernels/x/x.toml:14: arg 1 (keys): what is wrong`;
/// its [`hint`](clflow_core::Diagnostic::hint) says what to do where a message alone does not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ManifestError(Box<Details>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Details {
    kind: FailureKind,
    file: PathBuf,
    line: Option<usize>,
    arg: Option<ArgRef>,
    message: String,
    hint: Option<String>,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let this = &self.0;
        write!(f, "{}", this.file.display())?;
        if let Some(line) = this.line {
            write!(f, ":{line}")?;
        }
        if let Some(arg) = &this.arg {
            write!(f, ": {arg}")?;
        }
        write!(f, ": {}", this.message)
    }
}

impl ManifestError {
    /// An input error (exit status 2): the user can fix the manifest or its files.
    pub(crate) fn input(file: &Path, message: impl Into<String>) -> Self {
        ManifestError(Box::new(Details {
            kind: FailureKind::Input,
            file: file.to_path_buf(),
            line: None,
            arg: None,
            message: message.into(),
            hint: None,
        }))
    }

    pub(crate) fn at_line(mut self, line: usize) -> Self {
        self.0.line = Some(line);
        self
    }

    pub(crate) fn for_arg(mut self, arg: ArgRef) -> Self {
        self.0.arg = Some(arg);
        self
    }

    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.0.hint = Some(hint.into());
        self
    }

    /// The manifest file at fault.
    pub fn file(&self) -> &Path {
        &self.0.file
    }

    /// The 1-based line in the manifest, where one applies.
    pub fn line(&self) -> Option<usize> {
        self.0.line
    }

    pub fn arg(&self) -> Option<&ArgRef> {
        self.0.arg.as_ref()
    }

    /// What is wrong, without the file, line and argument prefix.
    pub fn message(&self) -> &str {
        &self.0.message
    }
}
impl clflow_core::Diagnostic for ManifestError {
    fn kind(&self) -> FailureKind {
        self.0.kind
    }

    fn hint(&self) -> Option<String> {
        self.0.hint.clone()
    }
}

/// Turns byte offsets into 1-based line numbers.
#[derive(Debug, Clone)]
pub(crate) struct LineIndex {
    line_starts: Vec<usize>,
}

impl LineIndex {
    pub(crate) fn new(text: &str) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(at, _)| at + 1))
            .collect();
        LineIndex { line_starts }
    }

    pub(crate) fn line_of(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&start| start <= offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clflow_core::Diagnostic;

    #[test]
    fn renders_file_line_arg_and_message() {
        let error = ManifestError::input(Path::new("kernels/x/x.toml"), "file is short")
            .at_line(14)
            .for_arg(ArgRef { index: 1, name: Some("keys".into()) });
        assert_eq!(
            error.to_string(),
            "kernels/x/x.toml:14: arg 1 (keys): file is short"
        );
        assert_eq!(error.kind().exit_code(), 2);
    }

    #[test]
    fn offsets_map_to_lines() {
        let index = LineIndex::new("a = 1\nb = 2\n\nc = 3");
        assert_eq!(index.line_of(0), 1);
        assert_eq!(index.line_of(5), 1);
        assert_eq!(index.line_of(6), 2);
        assert_eq!(index.line_of(12), 3);
        assert_eq!(index.line_of(13), 4);
    }
}
