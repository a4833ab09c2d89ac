//! The module's type declarations, looked up by id: what OpenCL element a
//! SPIR-V type is, and how many bytes a struct passed by value occupies.

use clflow_core::{ElementType, ScalarType};
use rspirv::dr::{Instruction, Module, Operand};
use spirv::{Op, StorageClass, Word};
use std::collections::HashMap;

/// A SPIR-V type as reflection sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpirvType {
    /// An integer; SPIR-V kernels give no sign.
    Int {
        bits: u32,
    },
    Float {
        bits: u32,
    },
    Vector {
        component: Word,
        lanes: u32,
    },
    Pointer {
        storage: StorageClass,
        pointee: Word,
    },
    Struct,
    Array {
        element: Word,
        length: Word,
    },
    Image,
    Sampler,
    Pipe,
    Queue,
    Event,
    Other(Op),
}

/// How deeply aggregates may nest before a module counts as malformed.
const MAX_NESTING: usize = 64;

pub(crate) struct TypeTable<'m> {
    by_id: HashMap<Word, &'m Instruction>,
    packed: Vec<Word>,
}

impl<'m> TypeTable<'m> {
    pub fn new(module: &'m Module) -> Self {
        let by_id = module
            .types_global_values
            .iter()
            .filter_map(|inst| inst.result_id.map(|id| (id, inst)))
            .collect();
        let packed = module
            .annotations
            .iter()
            .filter(|inst| {
                inst.class.opcode == Op::Decorate
                    && matches!(
                        inst.operands.get(1),
                        Some(Operand::Decoration(spirv::Decoration::CPacked))
                    )
            })
            .filter_map(|inst| id_operand(inst, 0))
            .collect();
        TypeTable { by_id, packed }
    }

    pub fn get(&self, id: Word) -> Option<SpirvType> {
        let inst = self.by_id.get(&id)?;
        Some(match inst.class.opcode {
            Op::TypeInt => SpirvType::Int {
                bits: literal_operand(inst, 0)?,
            },
            Op::TypeFloat => SpirvType::Float {
                bits: literal_operand(inst, 0)?,
            },
            Op::TypeVector => SpirvType::Vector {
                component: id_operand(inst, 0)?,
                lanes: literal_operand(inst, 1)?,
            },
            Op::TypePointer => match inst.operands.first() {
                Some(Operand::StorageClass(storage)) => SpirvType::Pointer {
                    storage: *storage,
                    pointee: id_operand(inst, 1)?,
                },
                _ => return None,
            },
            Op::TypeStruct => SpirvType::Struct,
            Op::TypeArray => SpirvType::Array {
                element: id_operand(inst, 0)?,
                length: id_operand(inst, 1)?,
            },
            Op::TypeImage => SpirvType::Image,
            Op::TypeSampler => SpirvType::Sampler,
            Op::TypePipe => SpirvType::Pipe,
            Op::TypeQueue => SpirvType::Queue,
            Op::TypeEvent | Op::TypeDeviceEvent => SpirvType::Event,
            other => SpirvType::Other(other),
        })
    }

    /// The OpenCL element a scalar or vector type stands for; integers take
    /// the sign `signed`, since SPIR-V does not say.
    pub fn element(&self, id: Word, signed: bool) -> Option<ElementType> {
        // Not recursive: a malformed vector may name itself as component.
        let scalar = |id| match self.get(id)? {
            SpirvType::Int { bits } => ScalarType::integer(bits, signed),
            SpirvType::Float { bits } => ScalarType::float(bits),
            _ => None,
        };
        match self.get(id)? {
            SpirvType::Vector { component, lanes } => {
                ElementType::vector(scalar(component)?, u8::try_from(lanes).ok()?)
            }
            _ => Some(ElementType::scalar(scalar(id)?)),
        }
    }

    /// Size and alignment in bytes under OpenCL C's layout rules: natural
    /// alignment, 3-lane vectors padded to 4, packed structs unpadded.
    /// `None` for types with no fixed in-memory size (images, pointers into
    /// an unknown model).
    pub fn layout(&self, id: Word) -> Option<Layout> {
        self.layout_within(id, MAX_NESTING)
    }

    /// `depth` bounds the recursion: a malformed module may declare a type
    /// that contains itself.
    fn layout_within(&self, id: Word, depth: usize) -> Option<Layout> {
        let depth = depth.checked_sub(1)?;
        match self.get(id)? {
            SpirvType::Int { .. } | SpirvType::Float { .. } | SpirvType::Vector { .. } => {
                let size = self.element(id, false)?.size_bytes();
                Some(Layout { size, align: size })
            }
            // Kernels use the Physical64 (or Physical32) model; pointers in
            // structs are rare and take 8 bytes under spir64.
            SpirvType::Pointer { .. } => Some(Layout { size: 8, align: 8 }),
            SpirvType::Array { element, length } => {
                let inner = self.layout_within(element, depth)?;
                let count = self.constant_u64(length)?;
                Some(Layout {
                    size: inner.size.checked_mul(usize::try_from(count).ok()?)?,
                    align: inner.align,
                })
            }
            SpirvType::Struct => self.struct_layout(id, depth),
            _ => None,
        }
    }

    fn struct_layout(&self, id: Word, depth: usize) -> Option<Layout> {
        let inst = self.by_id.get(&id)?;
        let packed = self.packed.contains(&id);
        let mut size = 0usize;
        let mut align = 1usize;
        for member in inst.operands.iter() {
            let Operand::IdRef(member) = member else {
                return None;
            };
            let member = self.layout_within(*member, depth)?;
            let member_align = if packed { 1 } else { member.align };
            size = size.next_multiple_of(member_align) + member.size;
            align = align.max(member_align);
        }
        Some(Layout {
            size: size.next_multiple_of(align),
            align,
        })
    }

    fn constant_u64(&self, id: Word) -> Option<u64> {
        let inst = self.by_id.get(&id)?;
        if inst.class.opcode != Op::Constant {
            return None;
        }
        match inst.operands.first()? {
            Operand::LiteralBit32(v) => Some(u64::from(*v)),
            Operand::LiteralBit64(v) => Some(*v),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    pub size: usize,
    pub align: usize,
}

pub(crate) fn id_operand(inst: &Instruction, index: usize) -> Option<Word> {
    match inst.operands.get(index)? {
        Operand::IdRef(id) => Some(*id),
        _ => None,
    }
}

fn literal_operand(inst: &Instruction, index: usize) -> Option<u32> {
    match inst.operands.get(index)? {
        Operand::LiteralBit32(v) => Some(*v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rspirv::dr::Builder;

    #[test]
    fn struct_layout_follows_opencl_c_alignment() {
        let mut b = Builder::new();
        let float = b.type_float(32, None);
        let uchar = b.type_int(8, 0);
        let float4 = b.type_vector(float, 4);
        let float3 = b.type_vector(float, 3);
        let uint = b.type_int(32, 0);
        let three = b.constant_bit32(uint, 3);
        let array = b.type_array(uchar, three);
        // struct { float x; uchar c; float4 v; } is 4 + 1 + pad to 16 + 16.
        let s = b.type_struct([float, uchar, float4]);
        // struct { uchar c[3]; float3 v; } is 3 + pad to 16 + 16.
        let t = b.type_struct([array, float3]);
        let packed = b.type_struct([uchar, float, uchar]);
        b.decorate(packed, spirv::Decoration::CPacked, []);
        let module = b.module();
        let table = TypeTable::new(&module);
        assert_eq!(
            table.layout(s),
            Some(Layout {
                size: 32,
                align: 16
            })
        );
        assert_eq!(
            table.layout(t),
            Some(Layout {
                size: 32,
                align: 16
            })
        );
        assert_eq!(table.layout(packed), Some(Layout { size: 6, align: 1 }));
        assert_eq!(
            table.element(float3, false).map(|e| e.to_string()),
            Some("float3".into())
        );
        assert_eq!(
            table.element(uchar, true).map(|e| e.to_string()),
            Some("char".into())
        );
        assert_eq!(table.element(s, false), None);
    }

    #[test]
    fn self_containing_types_are_refused_not_followed_forever() {
        let mut b = Builder::new();
        let uint = b.type_int(32, 0);
        let one = b.constant_bit32(uint, 1);
        // An array whose element is itself, and a vector of itself.
        let array = b.id();
        b.type_array_id(Some(array), array, one);
        let vector = b.id();
        b.type_vector_id(Some(vector), vector, 4);
        let module = b.module();
        let table = TypeTable::new(&module);
        assert_eq!(table.layout(array), None);
        assert_eq!(table.element(vector, false), None);
        assert_eq!(table.layout(vector), None);
    }
}
