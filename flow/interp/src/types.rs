//! SPIR-V types as the interpreter sees them: how many register slots a value
//! takes, and how it is laid out in memory (OpenCL C's natural layout on a
//! 64-bit device: every scalar and vector aligned to its size, 3-lane vectors
//! taking the room of 4, structs padded C-style unless `CPacked`).

use crate::error::TranslateError;
use clflow_core::AddressSpace;
use rspirv::spirv::Word;
use std::collections::HashMap;

/// The scalar kind of one register slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scalar {
    Bool,
    Int(u8),
    Float(u8),
    Ptr,
}

impl Scalar {
    /// Bytes the scalar occupies in memory.
    pub fn size(self) -> u32 {
        match self {
            Scalar::Bool => 1,
            Scalar::Int(bits) | Scalar::Float(bits) => bits as u32 / 8,
            Scalar::Ptr => 8,
        }
    }

    pub fn bits(self) -> u8 {
        match self {
            Scalar::Bool => 1,
            Scalar::Int(bits) | Scalar::Float(bits) => bits,
            Scalar::Ptr => 64,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ty {
    Void,
    Scalar(Scalar),
    Vector(Scalar, u8),
    Array(Word, u64),
    Struct { members: Vec<Word>, packed: bool },
    Pointer { space: AddressSpace, pointee: Word },
    Function,
    Event,
}

/// One scalar piece of a value in memory: at `offset`, `size` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leaf {
    pub offset: u32,
    pub size: u8,
}

/// Values larger than this many slots are not kept in registers.
pub const MAX_VALUE_SLOTS: u64 = 4096;

#[derive(Default)]
pub struct Types {
    map: HashMap<Word, Ty>,
}

impl Types {
    pub fn insert(&mut self, id: Word, ty: Ty) {
        self.map.insert(id, ty);
    }

    pub fn get(&self, id: Word) -> Result<&Ty, TranslateError> {
        self.map.get(&id).ok_or_else(|| {
            TranslateError::malformed(format!("%{id} is used as a type but is not one"))
        })
    }

    /// The scalar kind and lane count of a scalar or vector type.
    pub fn lanes(&self, id: Word) -> Result<(Scalar, u8), TranslateError> {
        match self.get(id)? {
            Ty::Scalar(s) => Ok((*s, 1)),
            Ty::Vector(s, n) => Ok((*s, *n)),
            Ty::Pointer { .. } => Ok((Scalar::Ptr, 1)),
            other => Err(TranslateError::malformed(format!(
                "%{id} is {other:?}, expected a scalar or vector type"
            ))),
        }
    }

    /// Register slots a value of this type takes: one per scalar leaf.
    pub fn slots(&self, id: Word) -> Result<u32, TranslateError> {
        let n = self.slots_wide(id, 0)?;
        if n > MAX_VALUE_SLOTS {
            return Err(TranslateError::unsupported(
                format!("a value of {n} scalars (type %{id}) held in registers"),
                "copy large arrays and structs through memory",
            ));
        }
        Ok(n as u32)
    }

    fn slots_wide(&self, id: Word, depth: u32) -> Result<u64, TranslateError> {
        if depth > 64 {
            return Err(TranslateError::malformed(format!(
                "type %{id} nests too deeply"
            )));
        }
        Ok(match self.get(id)? {
            Ty::Void | Ty::Function => 0,
            Ty::Scalar(_) | Ty::Pointer { .. } | Ty::Event => 1,
            Ty::Vector(_, n) => *n as u64,
            Ty::Array(elem, len) => self.slots_wide(*elem, depth + 1)?.saturating_mul(*len),
            Ty::Struct { members, .. } => {
                let mut total = 0u64;
                for m in members {
                    total = total.saturating_add(self.slots_wide(*m, depth + 1)?);
                }
                total
            }
        })
    }

    /// (size, alignment) in bytes.
    pub fn layout(&self, id: Word) -> Result<(u64, u64), TranslateError> {
        self.layout_at(id, 0)
    }

    fn layout_at(&self, id: Word, depth: u32) -> Result<(u64, u64), TranslateError> {
        if depth > 64 {
            return Err(TranslateError::malformed(format!(
                "type %{id} nests too deeply"
            )));
        }
        Ok(match self.get(id)? {
            Ty::Void | Ty::Function => (0, 1),
            Ty::Scalar(s) => (s.size() as u64, s.size() as u64),
            Ty::Pointer { .. } | Ty::Event => (8, 8),
            Ty::Vector(s, n) => {
                let room = if *n == 3 { 4 } else { *n as u64 };
                let size = s.size() as u64 * room;
                (size, size)
            }
            Ty::Array(elem, len) => {
                let (size, align) = self.layout_at(*elem, depth + 1)?;
                let total = size.checked_mul(*len).ok_or_else(|| {
                    TranslateError::malformed(format!("array type %{id} is too large"))
                })?;
                (total, align)
            }
            Ty::Struct { members, packed } => {
                let (mut offset, mut max_align) = (0u64, 1u64);
                for m in members {
                    let (size, align) = self.layout_at(*m, depth + 1)?;
                    let align = if *packed { 1 } else { align };
                    offset = offset.next_multiple_of(align).saturating_add(size);
                    max_align = max_align.max(align);
                }
                (offset.next_multiple_of(max_align), max_align)
            }
        })
    }

    /// Byte offset of member `index` of struct `id`.
    pub fn member_offset(&self, id: Word, index: u64) -> Result<u64, TranslateError> {
        let Ty::Struct { members, packed } = self.get(id)? else {
            return Err(TranslateError::malformed(format!(
                "%{id} is not a struct type"
            )));
        };
        let mut offset = 0u64;
        for (i, m) in members.iter().enumerate() {
            let (size, align) = self.layout(*m)?;
            offset = offset.next_multiple_of(if *packed { 1 } else { align });
            if i as u64 == index {
                return Ok(offset);
            }
            offset += size;
        }
        Err(TranslateError::malformed(format!(
            "struct %{id} has no member {index}"
        )))
    }

    /// The scalar leaves of a value of this type in memory, in slot order.
    pub fn leaves(&self, id: Word) -> Result<Vec<Leaf>, TranslateError> {
        let mut out = Vec::new();
        self.push_leaves(id, 0, &mut out, 0)?;
        Ok(out)
    }

    fn push_leaves(
        &self,
        id: Word,
        base: u64,
        out: &mut Vec<Leaf>,
        depth: u32,
    ) -> Result<(), TranslateError> {
        if depth > 64 || out.len() as u64 > MAX_VALUE_SLOTS {
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
        match self.get(id)? {
            Ty::Scalar(s) => out.push(leaf(base, s.size())?),
            Ty::Pointer { .. } | Ty::Event => out.push(leaf(base, 8)?),
            Ty::Vector(s, n) => {
                for lane in 0..*n as u64 {
                    out.push(leaf(base + lane * s.size() as u64, s.size())?);
                }
            }
            Ty::Array(elem, len) => {
                let (size, _) = self.layout(*elem)?;
                for i in 0..*len {
                    self.push_leaves(*elem, base + i * size, out, depth + 1)?;
                }
            }
            Ty::Struct { members, .. } => {
                for (i, m) in members.clone().iter().enumerate() {
                    let offset = self.member_offset(id, i as u64)?;
                    self.push_leaves(*m, base + offset, out, depth + 1)?;
                }
            }
            Ty::Void | Ty::Function => {}
        }
        Ok(())
    }

    /// Slot index of member/element `index` inside a composite value of type
    /// `id`, and the member's type.
    pub fn member_slot(&self, id: Word, index: u64) -> Result<(u32, Word), TranslateError> {
        match self.get(id)? {
            Ty::Vector(..) => Err(TranslateError::malformed(
                "vector member lookup needs the scalar type id",
            )),
            Ty::Array(elem, len) => {
                if index >= *len {
                    return Err(TranslateError::malformed(format!(
                        "index {index} past array %{id}"
                    )));
                }
                Ok((self.slots(*elem)? * index as u32, *elem))
            }
            Ty::Struct { members, .. } => {
                let mut slot = 0;
                for (i, m) in members.iter().enumerate() {
                    if i as u64 == index {
                        return Ok((slot, *m));
                    }
                    slot += self.slots(*m)?;
                }
                Err(TranslateError::malformed(format!(
                    "struct %{id} has no member {index}"
                )))
            }
            other => Err(TranslateError::malformed(format!(
                "%{id} ({other:?}) is not a composite"
            ))),
        }
    }

    /// The pointee and address space of pointer type `id`.
    pub fn pointee(&self, id: Word) -> Result<(AddressSpace, Word), TranslateError> {
        match self.get(id)? {
            Ty::Pointer { space, pointee } => Ok((*space, *pointee)),
            other => Err(TranslateError::malformed(format!(
                "%{id} ({other:?}) is not a pointer type"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_layout_pads_like_opencl_c() {
        let mut t = Types::default();
        t.insert(1, Ty::Scalar(Scalar::Int(8)));
        t.insert(2, Ty::Vector(Scalar::Float(32), 3));
        t.insert(
            3,
            Ty::Struct {
                members: vec![1, 2, 1],
                packed: false,
            },
        );
        t.insert(
            4,
            Ty::Struct {
                members: vec![1, 2, 1],
                packed: true,
            },
        );
        assert_eq!(t.layout(2).unwrap(), (16, 16));
        assert_eq!(t.layout(3).unwrap(), (48, 16));
        assert_eq!(t.member_offset(3, 1).unwrap(), 16);
        assert_eq!(t.layout(4).unwrap(), (18, 1));
        let leaves = t.leaves(3).unwrap();
        assert_eq!(leaves.len(), 5);
        assert_eq!(
            leaves[4],
            Leaf {
                offset: 32,
                size: 1
            }
        );
        assert_eq!(t.slots(3).unwrap(), 5);
    }
}
