//! What can go wrong compiling a kernel, and whose fault it is.

use clflow_core::FailureKind;
use std::path::PathBuf;

/// The set-up command that installs every tool the compile stage runs.
pub const SETUP_HINT: &str = "run ci/setup (installs clang-15 llvm-spirv-15 llvm-15 spirv-tools)";

#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("cannot read kernel source `{}`: {reason}", path.display())]
    SourceUnreadable { path: PathBuf, reason: String },

    #[error("`{}` is {reason}", path.display())]
    NotAKernel { path: PathBuf, reason: String },

    #[error("build option `{option}`: {reason}")]
    BadBuildOption { option: String, reason: String },

    /// The compiler rejected the kernel. `first_error` is clang's first
    /// `file:line:col: error: ...` line; `diagnostics` all it said.
    #[error("{first_error}")]
    Diagnostics {
        first_error: String,
        diagnostics: String,
    },

    #[error("{tool} not found (looked for `{looked_for}` on PATH; set {variable} to its path)")]
    ToolMissing {
        tool: &'static str,
        looked_for: String,
        variable: &'static str,
    },

    #[error("{tool} failed ({status}) on `{}`: {message}", kernel.display())]
    ToolFailed {
        tool: String,
        status: String,
        kernel: PathBuf,
        message: String,
    },

    #[error("the SPIR-V compiled from `{}` does not validate: {message}", kernel.display())]
    Invalid { kernel: PathBuf, message: String },

    #[error("`{}` calls `{}`, which it declares but never defines", kernel.display(), functions.join("`, `"))]
    Undefined {
        kernel: PathBuf,
        functions: Vec<String>,
    },

    #[error("{what}: {reason}")]
    Io { what: String, reason: String },
}

impl CompileError {
    /// The fallback build's failure, saying also why the -O2 build was
    /// abandoned: both are needed to report the toolchain problem.
    pub(crate) fn after_failed_primary(self, primary: &CompileError) -> CompileError {
        let both =
            |message: String| format!("{message} (the -O2 build had failed first: {primary})");
        match self {
            CompileError::ToolFailed { tool, status, kernel, message } => {
                CompileError::ToolFailed { tool, status, kernel, message: both(message) }
            }
            CompileError::Invalid { kernel, message } => {
                CompileError::Invalid { kernel, message: both(message) }
            }
            other => other,
        }
    }
}
impl clflow_core::Diagnostic for CompileError {
    fn kind(&self) -> FailureKind {
        match self {
            CompileError::SourceUnreadable { .. }
            | CompileError::NotAKernel { .. }
            | CompileError::BadBuildOption { .. }
            | CompileError::Diagnostics { .. }
            | CompileError::Undefined { .. } => FailureKind::Input,
            CompileError::ToolMissing { .. }
            | CompileError::ToolFailed { .. }
            | CompileError::Invalid { .. }
            | CompileError::Io { .. } => FailureKind::Analysis,
        }
    }

    fn hint(&self) -> Option<String> {
        match self {
            // The message says all: which file, and why it cannot be read.
            CompileError::SourceUnreadable { .. } => None,
            CompileError::NotAKernel { .. } => Some(
                "give OpenCL C source (any file name) or a SPIR-V module (clang -c -target \
                 spir64 -emit-llvm, then llvm-spirv)"
                    .into(),
            ),
            CompileError::BadBuildOption { .. } => Some(
                "build options take the OpenCL forms -D NAME[=VALUE], -I DIR, -cl-std=CLx.y, -cl-<math option>, -w, -Werror"
                    .into(),
            ),
            CompileError::Diagnostics { .. } => Some("fix the kernel source; the compiler's full diagnostics are above".into()),
            CompileError::ToolMissing { .. } => Some(SETUP_HINT.into()),
            CompileError::ToolFailed { .. } | CompileError::Invalid { .. } => {
                Some("run with -v to see each command; `--no-cache` rebuilds from scratch".into())
            }
            CompileError::Undefined { .. } => Some(
                "define each function in the kernel's source (its #included headers count), \
                 or declare the helper `static inline`"
                    .into(),
            ),
            CompileError::Io { .. } => None,
        }
    }
}
