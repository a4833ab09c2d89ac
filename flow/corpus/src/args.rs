//! Typed access to a materialised launch's arguments, for the references:
//! every accessor checks what it reads and names the argument when the
//! launch does not fit.

use crate::{Case, CheckError};
use clflow_core::{ArgValue, Launch};

/// A scalar type the references read from and write to little-endian bytes.
pub trait Element: Copy {
    const SIZE: usize;
    fn from_le(bytes: &[u8]) -> Self;
    fn write_le(self, out: &mut Vec<u8>);
}

macro_rules! element {
    ($($ty:ty),*) => {$(
        impl Element for $ty {
            const SIZE: usize = std::mem::size_of::<$ty>();
            fn from_le(bytes: &[u8]) -> Self {
                let mut raw = [0u8; std::mem::size_of::<$ty>()];
                raw.copy_from_slice(bytes);
                <$ty>::from_le_bytes(raw)
            }
            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
element!(u8, u16, u32, u64, f32, f64);

/// Little-endian bytes of a slice of elements.
pub fn to_bytes<T: Element>(values: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * T::SIZE);
    for value in values {
        value.write_le(&mut out);
    }
    out
}

/// Elements of little-endian bytes whose length is a multiple of the size.
pub fn from_bytes<T: Element>(bytes: &[u8]) -> Vec<T> {
    bytes.chunks_exact(T::SIZE).map(T::from_le).collect()
}

/// A case's launch, read argument by argument.
pub struct Args<'a> {
    pub case: Case,
    pub launch: &'a Launch,
}

impl<'a> Args<'a> {
    /// Checks the argument count up front so that later lookups cannot miss.
    pub fn new(case: Case, launch: &'a Launch, count: usize) -> Result<Self, CheckError> {
        let args = Args { case, launch };
        if launch.args.len() != count {
            return Err(args.bad(
                launch.args.len(),
                format!(
                    "the launch has {} arguments, kernel `{}` takes {count}",
                    launch.args.len(),
                    case.kernel()
                ),
            ));
        }
        Ok(args)
    }

    /// How messages name argument `index`.
    pub fn describe(&self, index: usize) -> String {
        match self.launch.args.get(index) {
            Some(arg) => arg.describe(index),
            None => format!("arg {index}"),
        }
    }

    pub fn bad(&self, index: usize, reason: impl Into<String>) -> CheckError {
        CheckError::BadLaunch {
            case: self.case.to_string(),
            arg: self.describe(index),
            reason: reason.into(),
        }
    }

    fn value(&self, index: usize) -> &'a ArgValue {
        &self.launch.args[index].value
    }

    /// The raw bytes of a buffer argument.
    pub fn buffer_bytes(&self, index: usize) -> Result<&'a [u8], CheckError> {
        match self.value(index) {
            ArgValue::Buffer { bytes, .. } => Ok(bytes),
            other => Err(self.bad(index, format!("expected a buffer, got {}", kind(other)))),
        }
    }

    /// A buffer argument as elements of `T`.
    pub fn buffer<T: Element>(&self, index: usize) -> Result<Vec<T>, CheckError> {
        let bytes = self.buffer_bytes(index)?;
        if bytes.len() % T::SIZE != 0 {
            return Err(self.bad(
                index,
                format!(
                    "{} bytes is not a whole number of {}-byte elements",
                    bytes.len(),
                    T::SIZE
                ),
            ));
        }
        Ok(from_bytes(bytes))
    }

    /// A buffer argument that must hold at least `needed` elements of `T`.
    pub fn buffer_of_len<T: Element>(
        &self,
        index: usize,
        needed: u64,
        why: &str,
    ) -> Result<Vec<T>, CheckError> {
        let values = self.buffer::<T>(index)?;
        if (values.len() as u64) < needed {
            return Err(self.bad(
                index,
                format!("has {} elements but {why} needs {needed}", values.len()),
            ));
        }
        Ok(values)
    }

    /// A by-value scalar argument of type `T`.
    pub fn scalar<T: Element>(&self, index: usize) -> Result<T, CheckError> {
        match self.value(index) {
            ArgValue::Scalar { bytes } if bytes.len() == T::SIZE => Ok(T::from_le(bytes)),
            ArgValue::Scalar { bytes } => Err(self.bad(
                index,
                format!(
                    "a {}-byte scalar where the kernel takes {} bytes",
                    bytes.len(),
                    T::SIZE
                ),
            )),
            other => Err(self.bad(
                index,
                format!("expected a scalar value, got {}", kind(other)),
            )),
        }
    }

    /// The size of a `__local` pointer argument.
    pub fn local_bytes(&self, index: usize) -> Result<u64, CheckError> {
        match self.value(index) {
            ArgValue::Local { bytes } => Ok(*bytes),
            other => Err(self.bad(index, format!("expected local_bytes, got {}", kind(other)))),
        }
    }

    /// The global ids of dimension `dim`: offset .. offset + global size.
    pub fn global_ids(&self, dim: usize) -> std::ops::Range<u64> {
        let range = &self.launch.range;
        range.offset[dim]..range.offset[dim] + range.global[dim]
    }

    /// The work-group size of dimension `dim`, which the case requires.
    pub fn local_size(&self, dim: usize, why: &str) -> Result<u64, CheckError> {
        match self.launch.range.local {
            Some(local) if local[dim] > 0 => Ok(local[dim]),
            _ => Err(CheckError::BadLaunch {
                case: self.case.to_string(),
                arg: "local_size".into(),
                reason: format!("must be given: {why}"),
            }),
        }
    }

    /// The launch's NDRange, for a message about its shape.
    pub fn bad_range(&self, reason: impl Into<String>) -> CheckError {
        CheckError::BadLaunch {
            case: self.case.to_string(),
            arg: "global_size".into(),
            reason: reason.into(),
        }
    }
}

fn kind(value: &ArgValue) -> &'static str {
    match value {
        ArgValue::Buffer { .. } => "a buffer",
        ArgValue::NullPointer => "a null pointer",
        ArgValue::Scalar { .. } => "a scalar value",
        ArgValue::Local { .. } => "local_bytes",
        ArgValue::SameBuffer { .. } => "another argument's buffer",
        ArgValue::Image { .. } => "an image",
        ArgValue::Sampler(_) => "a sampler",
    }
}
