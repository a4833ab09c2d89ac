//! SPIR-V types in registers: which scalar kind a slot holds, how many slots
//! a value takes, where each slot's bytes lie in memory, and what the
//! interpreter accepts. What the types are, and how OpenCL C lays them out,
//! is `clflow_spirv::types`, shared with reflection.

use crate::error::TranslateError;
use clflow_bytecode::layout::Leaf;
use clflow_core::AddressSpace;
use clflow_spirv::types::{address_space, Scalar, Type, TypeError, Types};
use rspirv::spirv::{StorageClass, Word};

/// The scalar kind of one register slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SlotKind {
    Bool,
    Int(u8),
    Float(u8),
    Ptr,
}

impl SlotKind {
    /// Bytes the scalar occupies in memory.
    pub fn size(self) -> u32 {
        match self {
            SlotKind::Bool => 1,
            SlotKind::Int(bits) | SlotKind::Float(bits) => bits as u32 / 8,
            SlotKind::Ptr => 8,
        }
    }

    pub fn bits(self) -> u8 {
        match self {
            SlotKind::Bool => 1,
            SlotKind::Int(bits) | SlotKind::Float(bits) => bits,
            SlotKind::Ptr => 64,
        }
    }
}

impl From<Scalar> for SlotKind {
    /// Widths past a byte are refused when their type is declared; one that
    /// slips through stays too wide to pass for a real one.
    fn from(scalar: Scalar) -> Self {
        let bits = |bits: u32| u8::try_from(bits).unwrap_or(u8::MAX);
        match scalar {
            Scalar::Bool => SlotKind::Bool,
            Scalar::Int(b) => SlotKind::Int(bits(b)),
            Scalar::Float(b) => SlotKind::Float(bits(b)),
        }
    }
}

impl From<TypeError> for TranslateError {
    fn from(error: TypeError) -> Self {
        TranslateError::malformed(error.to_string())
    }
}

/// Values larger than this many slots are not kept in registers.
pub const MAX_VALUE_SLOTS: u64 = 4096;

/// How deeply aggregates may nest, as `clflow_spirv::types` bounds layout.
const MAX_NESTING: u32 = 64;

/// The address space the interpreter gives a storage class.
pub fn space_of(class: StorageClass) -> Result<AddressSpace, TranslateError> {
    address_space(class).ok_or_else(|| {
        TranslateError::unsupported(
            format!("storage class {class:?}"),
            "clflow runs OpenCL C kernels (global, constant, local and private memory)",
        )
    })
}

/// Whether the interpreter runs values of type `id`: the integer and float
/// widths, vector lengths and storage classes of OpenCL C.
pub fn check_supported(types: &Types, id: Word) -> Result<(), TranslateError> {
    match *types.get(id)? {
        Type::Scalar(Scalar::Int(bits)) if ![8, 16, 32, 64].contains(&bits) => {
            Err(TranslateError::unsupported(
                format!("{bits}-bit integers"),
                "use 8, 16, 32 or 64-bit integer types",
            ))
        }
        Type::Scalar(Scalar::Float(bits)) if ![16, 32, 64].contains(&bits) => {
            Err(TranslateError::malformed(format!("{bits}-bit float type")))
        }
        Type::Vector(_, n) if ![2, 3, 4, 8, 16].contains(&n) => {
            Err(TranslateError::malformed(format!("vector of {n} lanes")))
        }
        Type::Pointer { storage, .. } => space_of(storage).map(drop),
        Type::Image(image) => match image.unsupported() {
            Some(what) => Err(TranslateError::unsupported(
                what,
                "clflow runs 1D, 2D and 3D images and 1D/2D image arrays, without mipmaps",
            )),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// What registers make of the module's types.
pub trait RegisterTypes {
    /// The scalar kind and lane count of a scalar, vector or pointer type.
    fn lanes(&self, id: Word) -> Result<(SlotKind, u8), TranslateError>;
    /// Register slots a value of this type takes: one per scalar leaf.
    fn slots(&self, id: Word) -> Result<u32, TranslateError>;
    /// The scalar leaves of a value of this type in memory, in slot order.
    fn leaves(&self, id: Word) -> Result<Vec<Leaf>, TranslateError>;
    /// Slot index of member/element `index` inside a composite value of
    /// type `id`, and the member's type.
    fn member_slot(&self, id: Word, index: u64) -> Result<(u32, Word), TranslateError>;
    /// The pointee and address space of pointer type `id`.
    fn pointee(&self, id: Word) -> Result<(AddressSpace, Word), TranslateError>;
}

impl RegisterTypes for Types {
    fn lanes(&self, id: Word) -> Result<(SlotKind, u8), TranslateError> {
        match self.get(id)? {
            Type::Scalar(s) => Ok(((*s).into(), 1)),
            // Lane counts past 16 are refused when the type is declared.
            Type::Vector(s, n) => Ok(((*s).into(), *n as u8)),
            Type::Pointer { .. } => Ok((SlotKind::Ptr, 1)),
            // A handle: an image's buffer as a global pointer, a sampler's
            // `CLK_*` bits.
            Type::Image(_) | Type::Sampler => Ok((SlotKind::Int(64), 1)),
            other => Err(TranslateError::malformed(format!(
                "%{id} is {other:?}, expected a scalar or vector type"
            ))),
        }
    }

    fn slots(&self, id: Word) -> Result<u32, TranslateError> {
        let n = slots_wide(self, id, 0)?;
        if n > MAX_VALUE_SLOTS {
            return Err(TranslateError::unsupported(
                format!("a value of {n} scalars (type %{id}) held in registers"),
                "copy large arrays and structs through memory",
            ));
        }
        Ok(n as u32)
    }

    fn leaves(&self, id: Word) -> Result<Vec<Leaf>, TranslateError> {
        let mut out = Vec::new();
        push_leaves(self, id, 0, &mut out, 0)?;
        Ok(out)
    }

    fn member_slot(&self, id: Word, index: u64) -> Result<(u32, Word), TranslateError> {
        match self.get(id)? {
            Type::Vector(..) => Err(TranslateError::malformed(
                "vector member lookup needs the scalar type id",
            )),
            Type::Array { element, length } => {
                if index >= length.unwrap_or(0) {
                    return Err(TranslateError::malformed(format!(
                        "index {index} past array %{id}"
                    )));
                }
                Ok((self.slots(*element)? * index as u32, *element))
            }
            Type::Struct { members, .. } => {
                let mut slot = 0;
                for (i, m) in members.iter().enumerate() {
                    if i as u64 == index {
                        return Ok((slot, *m));
                    }
                    slot += self.slots(*m)?;
                }
                Err(TypeError::NoMember { id, index }.into())
            }
            other => Err(TranslateError::malformed(format!(
                "%{id} ({other:?}) is not a composite"
            ))),
        }
    }

    fn pointee(&self, id: Word) -> Result<(AddressSpace, Word), TranslateError> {
        match self.get(id)? {
            Type::Pointer { storage, pointee } => Ok((space_of(*storage)?, *pointee)),
            other => Err(TranslateError::malformed(format!(
                "%{id} ({other:?}) is not a pointer type"
            ))),
        }
    }
}

fn slots_wide(types: &Types, id: Word, depth: u32) -> Result<u64, TranslateError> {
    if depth > MAX_NESTING {
        return Err(TypeError::TooDeep { id }.into());
    }
    Ok(match types.get(id)? {
        Type::Scalar(_) | Type::Pointer { .. } | Type::Event | Type::Image(_) | Type::Sampler => 1,
        // The image, then the sampler.
        Type::SampledImage { .. } => 2,
        Type::Vector(_, n) => u64::from(*n),
        Type::Array { element, length } => {
            slots_wide(types, *element, depth + 1)?.saturating_mul(length.unwrap_or(0))
        }
        Type::Struct { members, .. } => {
            let mut total = 0u64;
            for m in members {
                total = total.saturating_add(slots_wide(types, *m, depth + 1)?);
            }
            total
        }
        // Nothing to hold; the kinds the interpreter refuses never get here.
        _ => 0,
    })
}

fn push_leaves(
    types: &Types,
    id: Word,
    base: u64,
    out: &mut Vec<Leaf>,
    depth: u32,
) -> Result<(), TranslateError> {
    if depth > MAX_NESTING || out.len() as u64 > MAX_VALUE_SLOTS {
        return Err(TranslateError::unsupported(
            format!("loading or storing type %{id} as one value"),
            "copy large arrays and structs element by element",
        ));
    }
    let leaf = |offset: u64, size: u32| -> Result<Leaf, TranslateError> {
        Ok(Leaf {
            offset: u32::try_from(offset)
                .map_err(|_| TranslateError::malformed(format!("type %{id} is too large")))?,
            size: size as u8,
        })
    };
    match types.get(id)? {
        Type::Scalar(s) => out.push(leaf(base, SlotKind::from(*s).size())?),
        Type::Pointer { .. } | Type::Event | Type::Image(_) | Type::Sampler => {
            out.push(leaf(base, 8)?)
        }
        Type::Vector(s, n) => {
            let size = SlotKind::from(*s).size();
            for lane in 0..u64::from(*n) {
                out.push(leaf(base + lane * u64::from(size), size)?);
            }
        }
        Type::Array { element, length } => {
            let size = types.layout(*element)?.size;
            for i in 0..length.unwrap_or(0) {
                push_leaves(types, *element, base + i * size, out, depth + 1)?;
            }
        }
        Type::Struct { members, .. } => {
            for (i, m) in members.iter().enumerate() {
                let offset = types.member_offset(id, i as u64)?;
                push_leaves(types, *m, base + offset, out, depth + 1)?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rspirv::dr::Builder;

    #[test]
    fn a_struct_value_takes_a_slot_per_scalar_at_its_padded_offsets() {
        let mut b = Builder::new();
        let uchar = b.type_int(8, 0);
        let float = b.type_float(32, None);
        let float3 = b.type_vector(float, 3);
        // struct { uchar a; float3 v; uchar b; }: v at 16, b at 32.
        let s = b.type_struct([uchar, float3, uchar]);
        let module = b.module();
        let types = Types::new(&module);
        let leaves = types.leaves(s).unwrap();
        assert_eq!(leaves.len(), 5);
        assert_eq!(leaves[1], Leaf { offset: 16, size: 4 });
        assert_eq!(leaves[4], Leaf { offset: 32, size: 1 });
        assert_eq!(types.slots(s).unwrap(), 5);
        assert_eq!(types.member_slot(s, 2).unwrap(), (4, uchar));
        assert_eq!(types.lanes(float3).unwrap(), (SlotKind::Float(32), 3));
    }
}
