//! Errors of the OpenCL runtime layer.
//!
//! Every error names the step that failed and, for OpenCL calls, the error
//! code by name. The type is serialisable because the Oclgrind child process
//! hands its failures back to the parent unchanged.

use clflow_core::FailureKind;
use opencl3::error_codes as codes;
use serde::{Deserialize, Serialize};

pub type Result<T, E = OclError> = std::result::Result<T, E>;

/// What the user is told to do when no OpenCL runtime answers.
pub const INSTALL_HINT: &str = "install an ICD such as pocl-opencl-icd (ci/setup does)";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum OclError {
    /// The OpenCL library could not be loaded, or it lists no platform.
    #[error("no OpenCL platform found ({detail}): {INSTALL_HINT}")]
    NoPlatform { detail: String },

    /// Platforms exist but none of them has a device.
    #[error("no OpenCL device found on {platforms}: {INSTALL_HINT}")]
    NoDevice { platforms: String },

    /// The device selector matched no device, or more than one.
    #[error("device selector '{selector}' {problem}; devices: {}", candidates.join("; "))]
    Selector {
        selector: String,
        problem: String,
        candidates: Vec<String>,
    },

    /// An OpenCL call failed.
    #[error("{step}: {} ({code})", codes::error_text(*code))]
    Cl { step: String, code: i32 },

    /// The kernel source did not build on the device; `log` is the full build log.
    #[error("{origin}: build failed on {device}: {}", first_error_line(log))]
    Build {
        origin: String,
        device: String,
        code: i32,
        log: String,
    },

    /// The program holds no kernel of the requested name.
    #[error("{origin}: no kernel named '{kernel}' (the program has: {available})")]
    NoSuchKernel {
        origin: String,
        kernel: String,
        available: String,
    },

    /// The launch does not fit the kernel or the OpenCL API.
    #[error("kernel '{kernel}': {problem}")]
    Launch { kernel: String, problem: String },

    /// A file could not be read or written.
    #[error("{path}: {message}")]
    Io { path: String, message: String },

    /// Oclgrind is not installed where it is looked for.
    #[error("Oclgrind runtime {path} not found: install the oclgrind package or set CLFLOW_OCLGRIND_LIB")]
    OclgrindMissing { path: String },

    /// An OpenCL call failed under Oclgrind, which said why.
    #[error("{step}: {} ({code}) under Oclgrind, which says: {said}", codes::error_text(*code))]
    Oclgrind {
        step: String,
        code: i32,
        said: String,
    },

    /// The helper process that hosts a runtime failed outside of OpenCL.
    #[error("OpenCL helper process {program}: {problem}")]
    Child { program: String, problem: String },

    /// Oclgrind's instruction histogram could not be read.
    #[error("Oclgrind histogram line {line_number}: {problem}: '{line}'")]
    Histogram {
        line_number: usize,
        line: String,
        problem: String,
    },
}

impl OclError {
    pub(crate) fn io(path: impl std::fmt::Display, err: std::io::Error) -> Self {
        OclError::Io { path: path.to_string(), message: err.to_string() }
    }
}
impl clflow_core::Diagnostic for OclError {
    fn kind(&self) -> FailureKind {
        match self {
            OclError::Selector { .. }
            | OclError::Build { .. }
            | OclError::NoSuchKernel { .. }
            | OclError::Launch { .. }
            | OclError::Io { .. } => FailureKind::Input,
            OclError::Cl { code, .. } if is_input_code(*code) => FailureKind::Input,
            _ => FailureKind::Analysis,
        }
    }
}

/// Codes that come from what the user asked for (argument sizes, NDRange,
/// build options) rather than from the device or runtime.
fn is_input_code(code: i32) -> bool {
    matches!(
        code,
        codes::CL_INVALID_ARG_SIZE
            | codes::CL_INVALID_ARG_VALUE
            | codes::CL_INVALID_ARG_INDEX
            | codes::CL_INVALID_KERNEL_ARGS
            | codes::CL_INVALID_WORK_DIMENSION
            | codes::CL_INVALID_WORK_GROUP_SIZE
            | codes::CL_INVALID_WORK_ITEM_SIZE
            | codes::CL_INVALID_GLOBAL_OFFSET
            | codes::CL_INVALID_GLOBAL_WORK_SIZE
            | codes::CL_INVALID_BUILD_OPTIONS
            | codes::CL_INVALID_BUFFER_SIZE
    )
}

/// The line of a build log a user most needs: the first one that says
/// `error`, else the first non-empty one.
fn first_error_line(log: &str) -> &str {
    let mut lines = log.lines().map(str::trim).filter(|l| !l.is_empty());
    log.lines()
        .map(str::trim)
        .find(|l| l.contains("error"))
        .or_else(|| lines.next())
        .unwrap_or("the build log is empty")
}

/// Attaches the step to an OpenCL error code.
pub(crate) trait Step<T> {
    fn step(self, step: impl FnOnce() -> String) -> Result<T>;
}

impl<T> Step<T> for opencl3::Result<T> {
    fn step(self, step: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|err| OclError::Cl { step: step(), code: err.0 })
    }
}

impl<T> Step<T> for std::result::Result<T, i32> {
    fn step(self, step: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|code| OclError::Cl { step: step(), code })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clflow_core::Diagnostic;

    #[test]
    fn cl_errors_name_the_code_and_the_step() {
        let err = OclError::Cl {
            step: "enqueueing kernel 'vadd'".into(),
            code: codes::CL_OUT_OF_RESOURCES,
        };
        assert_eq!(
            err.to_string(),
            "enqueueing kernel 'vadd': CL_OUT_OF_RESOURCES (-5)"
        );
        assert_eq!(err.kind(), FailureKind::Analysis);
        let bad_size = OclError::Cl {
            step: "setting arg 2 (n)".into(),
            code: codes::CL_INVALID_ARG_SIZE,
        };
        assert_eq!(bad_size.kind(), FailureKind::Input);
    }

    #[test]
    fn build_errors_show_the_first_error_line() {
        let err = OclError::Build {
            origin: "k.cl".into(),
            device: "cpu".into(),
            code: codes::CL_BUILD_PROGRAM_FAILURE,
            log: "warning: x\n<source>:3:5: error: use of undeclared identifier 'y'\n  y = 1;\n"
                .into(),
        };
        assert_eq!(
            err.to_string(),
            "k.cl: build failed on cpu: <source>:3:5: error: use of undeclared identifier 'y'"
        );
        assert_eq!(err.kind(), FailureKind::Input);
    }

    #[test]
    fn errors_survive_the_trip_through_json() {
        let err = OclError::Selector {
            selector: "gpu".into(),
            problem: "matches no device".into(),
            candidates: vec!["0: Portable Computing Language / cpu".into()],
        };
        let json = serde_json::to_string(&err).unwrap();
        assert_eq!(serde_json::from_str::<OclError>(&json).unwrap(), err);
    }
}
