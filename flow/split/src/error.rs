//! Why a split cannot be bounded, naming the device, amount or kernel at fault.

use clflow_core::FailureKind;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SplitError {
    #[error("device `{device}`: {what} is {value}; it must be a positive number")]
    Ceiling {
        device: String,
        what: &'static str,
        value: f64,
    },
    #[error("{what} is {value}; work amounts must be finite and not negative")]
    Work { what: &'static str, value: f64 },
    #[error("no kernel to bound")]
    NoKernels,
    #[error("the application does no work (W = 0): there is nothing to split")]
    NoWork,
    #[error(
        "{count} kernels give 2^{count} code partitions; at most {max} kernels can be enumerated"
    )]
    TooManyKernels { count: usize, max: usize },
}

impl clflow_core::Diagnostic for SplitError {
    fn kind(&self) -> FailureKind {
        FailureKind::Input
    }

    fn hint(&self) -> Option<String> {
        let hint: &'static str = match self {
            SplitError::Ceiling { .. } => {
                "measure the device with `clflow bench`, or give its figure in a datasheet profile"
            }
            SplitError::Work { .. } | SplitError::NoWork => {
                "check the kernel's manifest and the op set (--ops) W counts"
            }
            SplitError::NoKernels => "give at least one kernel manifest",
            SplitError::TooManyKernels { .. } => {
                "group the kernels into fewer manifests, or bound parts of the application separately"
            }
        };
        Some(hint.to_string())
    }
}
