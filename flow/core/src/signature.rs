//! Kernel signatures: what a kernel takes, as reflected from its SPIR-V.

use crate::{Access, ElementType, ImageDim, StructType};
use serde::{Deserialize, Serialize};
use std::fmt;

/// OpenCL address spaces, as SPIR-V storage classes map onto them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AddressSpace {
    Private,
    Global,
    Constant,
    Local,
    Generic,
}

impl AddressSpace {
    /// The OpenCL C qualifier, as a user writes it.
    pub fn qualifier(self) -> &'static str {
        match self {
            AddressSpace::Private => "__private",
            AddressSpace::Global => "__global",
            AddressSpace::Constant => "__constant",
            AddressSpace::Local => "__local",
            AddressSpace::Generic => "__generic",
        }
    }
}

impl fmt::Display for AddressSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.qualifier())
    }
}

/// What one kernel parameter is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ParamKind {
    /// A value passed by copy: `uint n`, `float4 scale`.
    Scalar { ty: ElementType },
    /// A pointer into an address space. `pointee` is the element where the
    /// pointee is a scalar or vector, `pointee_struct` the struct where the
    /// source declares a pointer to one; both are `None` for `void*`.
    Pointer {
        space: AddressSpace,
        pointee: Option<ElementType>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pointee_struct: Option<StructType>,
    },
    /// A struct passed by value; only its size is known.
    Aggregate { size_bytes: usize },
    /// An image (`read_only image2d_t`); `access` is the kernel's qualifier.
    Image { dim: ImageDim, access: Access },
    /// A `sampler_t`.
    Sampler,
    /// Pipes, queues, and images clflow does not run: clflow does not launch these.
    Unsupported { what: String },
}

impl fmt::Display for ParamKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamKind::Scalar { ty } => write!(f, "{ty}"),
            ParamKind::Pointer { space, pointee: Some(ty), .. } => write!(f, "{space} {ty}*"),
            ParamKind::Pointer { space, pointee_struct: Some(record), .. } => {
                write!(f, "{space} {}*", record.name)
            }
            ParamKind::Pointer { space, .. } => write!(f, "{space} void*"),
            ParamKind::Aggregate { size_bytes } => write!(f, "struct ({size_bytes} bytes)"),
            ParamKind::Image { dim, access } => write!(f, "{} {dim}", access_qualifier(*access)),
            ParamKind::Sampler => f.write_str("sampler_t"),
            ParamKind::Unsupported { what } => f.write_str(what),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelParam {
    /// The parameter's name where the module keeps it (`OpName`).
    pub name: Option<String>,
    pub kind: ParamKind,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelSignature {
    pub name: String,
    pub params: Vec<KernelParam>,
}

impl fmt::Display for KernelSignature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "__kernel void {}(", self.name)?;
        for (index, param) in self.params.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", param.kind)?;
            if let Some(name) = &param.name {
                write!(f, " {name}")?;
            }
        }
        f.write_str(")")
    }
}

/// The OpenCL C access qualifier of an image parameter.
pub fn access_qualifier(access: Access) -> &'static str {
    match access {
        Access::ReadOnly => "read_only",
        Access::WriteOnly => "write_only",
        Access::ReadWrite => "read_write",
    }
}
