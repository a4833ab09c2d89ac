//! What can go wrong when checking a kernel's outputs against its reference.

use clflow_core::FailureKind;
use std::fmt;

/// The first element where produced output and reference disagree.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// The corpus case, e.g. `lookup3`.
    pub case: String,
    /// How the argument is referred to, e.g. `arg 4 (hashes)`.
    pub arg: String,
    /// Element index within the buffer (in scalars: lane 2 of float4 element
    /// 5 is index 22).
    pub index: usize,
    pub expected: String,
    pub got: String,
    /// For floats: the largest difference allowed at this element.
    pub tolerance: Option<f64>,
    /// How many elements of this argument disagree in all.
    pub differing: usize,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} element {}: expected {}, got {}",
            self.case, self.arg, self.index, self.expected, self.got
        )?;
        if let Some(tolerance) = self.tolerance {
            write!(f, " (allowed difference {tolerance:.3e})")?;
        }
        if self.differing > 1 {
            write!(f, "; {} elements differ in all", self.differing)?;
        }
        Ok(())
    }
}

/// Why `check_outputs` did not accept the produced outputs.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CheckError {
    #[error("`{name}` is not a case of the kernel corpus (known: {known})")]
    UnknownCase { name: String, known: String },

    /// The launch does not fit the case's kernel: wrong argument kinds,
    /// buffers too small for the NDRange, scalars of the wrong size.
    #[error("{case}: {arg}: {reason}")]
    BadLaunch {
        case: String,
        arg: String,
        reason: String,
    },

    #[error("{case}: {arg} is an output but no bytes were produced for it")]
    MissingOutput { case: String, arg: String },

    #[error("{case}: {arg}: produced {got} bytes, the buffer has {expected}")]
    WrongSize {
        case: String,
        arg: String,
        expected: usize,
        got: usize,
    },

    #[error("{0}")]
    Mismatch(Box<Mismatch>),
}

impl clflow_core::Diagnostic for CheckError {
    fn kind(&self) -> FailureKind {
        match self {
            CheckError::UnknownCase { .. } | CheckError::BadLaunch { .. } => FailureKind::Input,
            CheckError::MissingOutput { .. }
            | CheckError::WrongSize { .. }
            | CheckError::Mismatch(_) => FailureKind::Analysis,
        }
    }
}
