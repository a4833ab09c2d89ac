//! Everything that can stop a count, each as one line naming what is at
//! fault, and whether the user's input (exit 2) or clflow (exit 1) is to blame.

use clflow_core::FailureKind;
use std::fmt;

/// Why a module or kernel could not be translated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranslateError {
    pub malformed: bool,
    pub what: String,
    pub hint: Option<String>,
    /// Where: `function foo, %23 = OpFoo`.
    pub site: Option<String>,
}

impl TranslateError {
    pub fn malformed(what: impl Into<String>) -> Self {
        TranslateError { malformed: true, what: what.into(), hint: None, site: None }
    }

    pub fn unsupported(what: impl Into<String>, hint: impl Into<String>) -> Self {
        TranslateError {
            malformed: false,
            what: what.into(),
            hint: Some(hint.into()),
            site: None,
        }
    }

    pub fn at(mut self, site: impl FnOnce() -> String) -> Self {
        if self.site.is_none() {
            self.site = Some(site());
        }
        self
    }
}

/// What went wrong while a work-item ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrapKind {
    OutOfBounds {
        space: &'static str,
        buffer: String,
        offset: i64,
        size: u32,
        buffer_bytes: u64,
    },
    NullPointer {
        size: u32,
    },
    BadPointer {
        value: u64,
    },
    Misaligned {
        space: &'static str,
        buffer: String,
        offset: i64,
        align: u32,
    },
    DivisionByZero,
    Unreachable,
    BarrierDivergence(String),
    StepLimit(u64),
    /// A printf whose format or arguments OpenCL C does not define, or
    /// that clflow does not print.
    Printf(String),
    /// A work-group or sub-group function OpenCL C leaves undefined here
    /// (a broadcast from a work-item the group does not have, work-items
    /// that pass an async copy different arguments).
    Collective(String),
    /// An image read or write OpenCL leaves undefined or clflow does not
    /// run (a format the read's type does not match, repeat addressing of
    /// unnormalized coordinates).
    Image(String),
    /// An async copy whose event the work-group never waited for.
    EventNotWaited,
    /// `--detect aggregates`: an index outside an array inside a variable.
    IndexOutOfBounds {
        index: i64,
        array: String,
    },
    /// An undefined value used (`RunOptions::uninit`): the work-item goes on.
    Uninit(Use),
    /// Undefined behaviour the run goes through as the device does (an
    /// image write outside the image is dropped, a read outside it under
    /// `CLK_ADDRESS_NONE` is (0,0,0,0)): the work-item goes on, and
    /// `RunResult::faults` reports it, as the bug in the kernel it is.
    Undefined(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InterpError {
    #[error("cannot read the SPIR-V module: {0}")]
    Load(String),
    #[error("kernel `{kernel}`: {}{}", error.what, error.site.as_ref().map(|s| format!(" (at {s})")).unwrap_or_default())]
    Translate {
        kernel: String,
        error: Box<TranslateError>,
    },
    #[error("kernel `{kernel}`: {message}")]
    Launch { kernel: String, message: String },
    #[error(
        "{}kernel `{}`, work-item ({},{},{}): {}: {}",
        .0.location.as_ref().map(|l| format!("{l}: ")).unwrap_or_default(),
        .0.kernel, .0.item[0], .0.item[1], .0.item[2], .0.op, .0.kind
    )]
    Trap(Box<Trap>),
}

/// A work-item stopped by a fault in the kernel: which, where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trap {
    pub kernel: String,
    /// The work-item's global id.
    pub item: [u64; 3],
    /// The SPIR-V instruction, as `OpStore %32 in `vadd``.
    pub op: String,
    /// Its place in the source, `vadd.cl:17:14`, where the module says.
    pub location: Option<String>,
    pub kind: TrapKind,
}

impl clflow_core::Diagnostic for InterpError {
    /// Malformed modules and bad launches are input errors (exit 2); a
    /// kernel that faults while it runs (out of bounds, division by zero,
    /// barrier divergence, the step limit) is a failed analysis (exit 1),
    /// as is an instruction clflow does not implement.
    fn kind(&self) -> FailureKind {
        match self {
            InterpError::Translate { error, .. } if !error.malformed => FailureKind::Analysis,
            InterpError::Trap(_) => FailureKind::Analysis,
            _ => FailureKind::Input,
        }
    }

    fn hint(&self) -> Option<String> {
        match self {
            InterpError::Load(_) => {
                Some("recompile the kernel with `clflow compile`; the file may be truncated".into())
            }
            InterpError::Translate { error, .. } => error.hint.clone(),
            InterpError::Launch { .. } => {
                Some("make the manifest's [[arg]] entries match the kernel's parameters".into())
            }
            InterpError::Trap(trap) if matches!(trap.kind, TrapKind::StepLimit(_)) => {
                Some("the kernel may never end; if it is just long, raise --max-steps".into())
            }
            InterpError::Trap(trap) if matches!(trap.kind, TrapKind::Printf(_)) => Some(
                "fix the printf call: OpenCL C 1.2 section 6.12.13 says what each conversion takes"
                    .into(),
            ),
            InterpError::Trap(_) => {
                Some("fix the kernel or the manifest's inputs for this work-item".into())
            }
        }
    }
}

impl TrapKind {
    /// Whether the fault is the work-item's alone, so that the rest of the
    /// launch may go on without it: a bad access or division (its store
    /// is not made, its load not used). A kernel that never ends, a barrier
    /// the group does not agree on, or undefined behaviour stop the run.
    pub fn stops_one(&self) -> bool {
        matches!(
            self,
            TrapKind::OutOfBounds { .. }
                | TrapKind::NullPointer { .. }
                | TrapKind::BadPointer { .. }
                | TrapKind::Misaligned { .. }
                | TrapKind::DivisionByZero
                | TrapKind::Printf(_)
                | TrapKind::Image(_)
                | TrapKind::IndexOutOfBounds { .. }
        )
    }

    /// The kind of fault, as a number: faults are counted by instruction
    /// and kind.
    pub fn code(&self) -> u8 {
        match self {
            TrapKind::OutOfBounds { .. } => 0,
            TrapKind::NullPointer { .. } => 1,
            TrapKind::BadPointer { .. } => 2,
            TrapKind::Misaligned { .. } => 3,
            TrapKind::DivisionByZero => 4,
            TrapKind::Unreachable => 5,
            TrapKind::BarrierDivergence(_) => 6,
            TrapKind::StepLimit(_) => 7,
            TrapKind::Printf(_) => 8,
            TrapKind::Collective(_) => 9,
            TrapKind::Image(_) => 10,
            TrapKind::EventNotWaited => 11,
            TrapKind::IndexOutOfBounds { .. } => 12,
            TrapKind::Undefined(_) => 13,
            TrapKind::Uninit(how) => 16 + *how as u8,
        }
    }
}

impl fmt::Display for TrapKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrapKind::OutOfBounds { space, buffer, offset, size, buffer_bytes } => write!(
                f,
                "out-of-bounds access to {space} {buffer}: {size} bytes at offset {offset}, buffer is {buffer_bytes} bytes"
            ),
            TrapKind::NullPointer { size } => write!(f, "{size}-byte access through a NULL pointer"),
            TrapKind::BadPointer { value } => write!(f, "access through an invalid pointer (0x{value:x})"),
            TrapKind::Misaligned { space, buffer, offset, align } => write!(
                f,
                "misaligned access to {space} {buffer}: offset {offset} is not a multiple of {align}"
            ),
            TrapKind::DivisionByZero => f.write_str("integer division by zero"),
            TrapKind::Unreachable => f.write_str("reached code the compiler marked unreachable (undefined behaviour)"),
            TrapKind::BarrierDivergence(what) => write!(f, "barrier divergence: {what}"),
            TrapKind::StepLimit(max) => write!(f, "still running after {max} steps (--max-steps)"),
            TrapKind::Printf(what) => write!(f, "printf: {what}"),
            TrapKind::Collective(what) => write!(f, "{what}"),
            TrapKind::EventNotWaited => f.write_str(
                "the work-group never waits for this async copy's event (wait_group_events): \
                 its data may not have arrived when it is used"
            ),
            TrapKind::Image(what) => write!(f, "image: {what}"),
            TrapKind::Undefined(what) => f.write_str(what),
            TrapKind::Uninit(how) => f.write_str(how.describe()),
            TrapKind::IndexOutOfBounds { index, array } => write!(
                f,
                "index {index} is outside {array} (the access would stay inside the variable, \
                 in another of its members or rows)"
            ),
        }
    }
}

/// How an undefined value was used, as the fault says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Use {
    Branch,
    Address,
    Divisor,
    Store,
}

impl Use {
    pub fn describe(self) -> &'static str {
        match self {
            Use::Branch => "an uninitialised value decides a branch",
            Use::Address => "an uninitialised value makes an address",
            Use::Divisor => "an uninitialised value divides",
            Use::Store => "an uninitialised value is stored to global memory",
        }
    }
}
