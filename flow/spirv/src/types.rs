//! The one model of a module's SPIR-V types, shared by reflection and the
//! interpreter: every `OpType*` declaration decoded once (with its `CPacked`
//! decoration and its array length resolved), looked up by id, and laid out
//! in memory by OpenCL C's rules.

use clflow_core::{Access, AddressSpace, ElementType, ImageDim, ScalarType};
use rspirv::dr::{Instruction, Module, Operand};
use spirv::{Decoration, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

/// A scalar as SPIR-V declares it; kernels give integers no sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scalar {
    Bool,
    Int(u32),
    Float(u32),
}

impl Scalar {
    /// The OpenCL scalar, where the width is one OpenCL C has.
    pub fn opencl(self, signed: bool) -> Option<ScalarType> {
        match self {
            Scalar::Bool => None,
            Scalar::Int(bits) => ScalarType::integer(bits, signed),
            Scalar::Float(bits) => ScalarType::float(bits),
        }
    }

    /// Bytes in memory, where the width is one OpenCL C has.
    fn size(self) -> Option<u64> {
        match self {
            Scalar::Bool => Some(1),
            _ => self.opencl(false).map(|s| s.size_bytes() as u64),
        }
    }
}

/// One decoded type declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    Void,
    Scalar(Scalar),
    Vector(Scalar, u32),
    /// `length` is `None` for an `OpTypeRuntimeArray`.
    Array {
        element: Word,
        length: Option<u64>,
    },
    Struct {
        members: Vec<Word>,
        packed: bool,
    },
    Pointer {
        storage: StorageClass,
        pointee: Word,
    },
    Function,
    /// `OpTypeEvent` or `OpTypeDeviceEvent`.
    Event,
    /// An `OpTypeOpaque`: a struct whose body the module does not give.
    Opaque,
    Image(ImageType),
    Sampler,
    /// An `OpTypeSampledImage` of the image type `image`.
    SampledImage {
        image: Word,
    },
    Pipe,
    Queue,
    /// Any other `OpType*`.
    Other(Op),
}

impl Type {
    /// The opcode that declares this kind of type, for messages.
    pub fn opcode(&self) -> Op {
        match self {
            Type::Void => Op::TypeVoid,
            Type::Scalar(Scalar::Bool) => Op::TypeBool,
            Type::Scalar(Scalar::Int(_)) => Op::TypeInt,
            Type::Scalar(Scalar::Float(_)) => Op::TypeFloat,
            Type::Vector(..) => Op::TypeVector,
            Type::Array { length: None, .. } => Op::TypeRuntimeArray,
            Type::Array { .. } => Op::TypeArray,
            Type::Struct { .. } => Op::TypeStruct,
            Type::Pointer { .. } => Op::TypePointer,
            Type::Function => Op::TypeFunction,
            Type::Event => Op::TypeEvent,
            Type::Opaque => Op::TypeOpaque,
            Type::Image(_) => Op::TypeImage,
            Type::Sampler => Op::TypeSampler,
            Type::SampledImage { .. } => Op::TypeSampledImage,
            Type::Pipe => Op::TypePipe,
            Type::Queue => Op::TypeQueue,
            Type::Other(op) => *op,
        }
    }
}

/// What an `OpTypeImage` declares, as far as OpenCL C kernels use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageType {
    /// `None` for a dimensionality OpenCL C images do not have (cube,
    /// rect, subpass) or an image buffer.
    pub dim: Option<ImageDim>,
    /// A depth image (`image2d_depth_t`).
    pub depth: bool,
    /// Multisampled (`image2d_msaa_t`).
    pub multisampled: bool,
    /// The access qualifier; `None` where the module gives none.
    pub access: Option<Access>,
}

impl ImageType {
    fn decode(inst: &Instruction) -> ImageType {
        let literal = |k: usize| match inst.operands.get(k) {
            Some(Operand::LiteralBit32(v)) => *v,
            _ => 0,
        };
        let arrayed = literal(3) == 1;
        let dim = match inst.operands.get(1) {
            Some(Operand::Dim(d)) => match (d, arrayed) {
                (spirv::Dim::Dim1D, false) => Some(ImageDim::Image1d),
                (spirv::Dim::Dim1D, true) => Some(ImageDim::Image1dArray),
                (spirv::Dim::Dim2D, false) => Some(ImageDim::Image2d),
                (spirv::Dim::Dim2D, true) => Some(ImageDim::Image2dArray),
                (spirv::Dim::Dim3D, false) => Some(ImageDim::Image3d),
                _ => None,
            },
            _ => None,
        };
        let access = match inst.operands.get(7) {
            Some(Operand::AccessQualifier(q)) => Some(match q {
                spirv::AccessQualifier::ReadOnly => Access::ReadOnly,
                spirv::AccessQualifier::WriteOnly => Access::WriteOnly,
                spirv::AccessQualifier::ReadWrite => Access::ReadWrite,
            }),
            _ => None,
        };
        ImageType {
            dim,
            depth: literal(2) == 1,
            multisampled: literal(4) == 1,
            access,
        }
    }

    /// Why the interpreter cannot run this image type, if it cannot.
    pub fn unsupported(&self) -> Option<&'static str> {
        if self.dim.is_none() {
            Some("image buffers and image dimensionalities other than 1D, 2D, 3D and 1D/2D arrays")
        } else if self.depth {
            Some("depth images")
        } else if self.multisampled {
            Some("multisampled (msaa) images")
        } else {
            None
        }
    }
}

/// Size and alignment in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub size: u64,
    pub align: u64,
}

/// A type the module declares badly, or uses where it has no meaning.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypeError {
    #[error("%{id} is used as a type but is not one")]
    NotAType { id: Word },
    #[error("%{id} is {found}, expected a scalar or vector type")]
    NotAScalar { id: Word, found: String },
    #[error("{op:?} %{id} operand {index} is missing or of the wrong kind")]
    Operand { op: Op, id: Word, index: usize },
    #[error("array length is not a constant")]
    LengthNotConstant,
    #[error("type %{id} nests too deeply")]
    TooDeep { id: Word },
    #[error("array type %{id} is too large")]
    TooLarge { id: Word },
    #[error("type %{id} has no size in memory")]
    Unsized { id: Word },
    #[error("%{id} is not a struct type")]
    NotAStruct { id: Word },
    #[error("struct %{id} has no member {index}")]
    NoMember { id: Word, index: u64 },
}

/// How deeply aggregates may nest: a malformed module may declare a type
/// that contains itself.
const MAX_NESTING: u32 = 64;

/// Every type the module declares, by id.
#[derive(Debug, Default)]
pub struct Types {
    /// By id, not a vector indexed by id: a damaged module may use any id.
    by_id: HashMap<Word, Result<Type, TypeError>>,
}

impl Types {
    /// Decodes the module's declarations in order, as SPIR-V requires them
    /// to be declared before use (a vector's component, an array's length).
    pub fn new(module: &Module) -> Self {
        let packed: HashSet<Word> = module
            .annotations
            .iter()
            .filter(|inst| {
                inst.class.opcode == Op::Decorate
                    && matches!(
                        inst.operands.get(1),
                        Some(Operand::Decoration(Decoration::CPacked))
                    )
            })
            .filter_map(|inst| id_operand(inst, 0))
            .collect();
        let mut types = Types::default();
        // Integer constants, for array lengths.
        let mut lengths: HashMap<Word, u64> = HashMap::new();
        for inst in &module.types_global_values {
            let Some(id) = inst.result_id else { continue };
            if matches!(inst.class.opcode, Op::Constant | Op::SpecConstant) {
                if let Some(value) = types.int_constant(inst) {
                    lengths.insert(id, value);
                }
                continue;
            }
            if !inst.class.opname.starts_with("Type") {
                continue;
            }
            let decl = types.decode(inst, id, packed.contains(&id), &lengths);
            types.by_id.insert(id, decl);
        }
        types
    }

    fn decode(
        &self,
        inst: &Instruction,
        id: Word,
        packed: bool,
        lengths: &HashMap<Word, u64>,
    ) -> Result<Type, TypeError> {
        let op = inst.class.opcode;
        let operand = |index| TypeError::Operand { op, id, index };
        let word = |index| id_operand(inst, index).ok_or_else(|| operand(index));
        let literal = |index| literal_operand(inst, index).ok_or_else(|| operand(index));
        Ok(match op {
            Op::TypeVoid => Type::Void,
            Op::TypeBool => Type::Scalar(Scalar::Bool),
            Op::TypeInt => Type::Scalar(Scalar::Int(literal(0)?)),
            Op::TypeFloat => Type::Scalar(Scalar::Float(literal(0)?)),
            Op::TypeVector => {
                let component = word(0)?;
                match self.get(component)? {
                    Type::Scalar(scalar) => Type::Vector(*scalar, literal(1)?),
                    other => {
                        return Err(TypeError::NotAScalar {
                            id: component,
                            found: format!("{other:?}"),
                        })
                    }
                }
            }
            Op::TypeArray => Type::Array {
                element: word(0)?,
                length: Some(*lengths.get(&word(1)?).ok_or(TypeError::LengthNotConstant)?),
            },
            Op::TypeRuntimeArray => Type::Array { element: word(0)?, length: None },
            Op::TypeStruct => Type::Struct {
                members: (0..inst.operands.len())
                    .map(word)
                    .collect::<Result<_, _>>()?,
                packed,
            },
            Op::TypePointer => match inst.operands.first() {
                Some(Operand::StorageClass(storage)) => {
                    Type::Pointer { storage: *storage, pointee: word(1)? }
                }
                _ => return Err(operand(0)),
            },
            Op::TypeFunction => Type::Function,
            Op::TypeEvent | Op::TypeDeviceEvent => Type::Event,
            Op::TypeOpaque => Type::Opaque,
            Op::TypeImage => Type::Image(ImageType::decode(inst)),
            Op::TypeSampler => Type::Sampler,
            Op::TypeSampledImage => Type::SampledImage { image: word(0)? },
            Op::TypePipe => Type::Pipe,
            Op::TypeQueue => Type::Queue,
            _ => Type::Other(op),
        })
    }

    /// The value of an integer `OpConstant`, cut to its type's width.
    fn int_constant(&self, inst: &Instruction) -> Option<u64> {
        let Ok(Type::Scalar(Scalar::Int(bits))) = self.get(inst.result_type?) else {
            return None;
        };
        let raw = match inst.operands.first()? {
            Operand::LiteralBit32(v) => u64::from(*v),
            Operand::LiteralBit64(v) => *v,
            _ => return None,
        };
        Some(match 1u64.checked_shl(*bits) {
            Some(limit) => raw & (limit - 1),
            None => raw,
        })
    }

    pub fn get(&self, id: Word) -> Result<&Type, TypeError> {
        match self.by_id.get(&id) {
            Some(decl) => decl.as_ref().map_err(Clone::clone),
            None => Err(TypeError::NotAType { id }),
        }
    }

    /// The OpenCL element a scalar or vector type stands for; integers take
    /// the sign `signed`, since SPIR-V does not say.
    pub fn element(&self, id: Word, signed: bool) -> Option<ElementType> {
        match *self.get(id).ok()? {
            Type::Scalar(scalar) => Some(ElementType::scalar(scalar.opencl(signed)?)),
            Type::Vector(scalar, lanes) => {
                ElementType::vector(scalar.opencl(signed)?, u8::try_from(lanes).ok()?)
            }
            _ => None,
        }
    }

    /// Size and alignment under OpenCL C's rules on a 64-bit device: natural
    /// alignment, 3-lane vectors taking the room of 4, structs padded C-style
    /// unless `CPacked`, pointers and events 8 bytes.
    pub fn layout(&self, id: Word) -> Result<Layout, TypeError> {
        self.layout_at(id, 0)
    }

    fn layout_at(&self, id: Word, depth: u32) -> Result<Layout, TypeError> {
        if depth > MAX_NESTING {
            return Err(TypeError::TooDeep { id });
        }
        let no_size = || TypeError::Unsized { id };
        let natural = |size| Layout { size, align: size };
        Ok(match self.get(id)? {
            Type::Void | Type::Function | Type::Opaque => Layout { size: 0, align: 1 },
            Type::Scalar(scalar) => natural(scalar.size().ok_or_else(no_size)?),
            Type::Pointer { .. } | Type::Event => natural(8),
            Type::Vector(scalar, lanes) => {
                let room = match lanes {
                    3 => 4,
                    2 | 4 | 8 | 16 => u64::from(*lanes),
                    _ => return Err(no_size()),
                };
                natural(scalar.size().ok_or_else(no_size)? * room)
            }
            Type::Array { element, length } => {
                let inner = self.layout_at(*element, depth + 1)?;
                Layout {
                    size: inner
                        .size
                        .checked_mul(length.unwrap_or(0))
                        .ok_or(TypeError::TooLarge { id })?,
                    align: inner.align,
                }
            }
            Type::Struct { members, packed } => {
                let (mut offset, mut max_align) = (0u64, 1u64);
                for member in members {
                    let Layout { size, align } = self.layout_at(*member, depth + 1)?;
                    let align = if *packed { 1 } else { align };
                    offset = offset.next_multiple_of(align).saturating_add(size);
                    max_align = max_align.max(align);
                }
                Layout { size: offset.next_multiple_of(max_align), align: max_align }
            }
            Type::Image(_)
            | Type::Sampler
            | Type::SampledImage { .. }
            | Type::Pipe
            | Type::Queue
            | Type::Other(_) => return Err(no_size()),
        })
    }

    /// Byte offset of member `index` of struct `id`.
    pub fn member_offset(&self, id: Word, index: u64) -> Result<u64, TypeError> {
        let Type::Struct { members, packed } = self.get(id)? else {
            return Err(TypeError::NotAStruct { id });
        };
        let mut offset = 0u64;
        for (i, member) in members.iter().enumerate() {
            let Layout { size, align } = self.layout(*member)?;
            offset = offset.next_multiple_of(if *packed { 1 } else { align });
            if i as u64 == index {
                return Ok(offset);
            }
            offset += size;
        }
        Err(TypeError::NoMember { id, index })
    }
}

/// The OpenCL address space of a storage class; `Input` holds the built-in
/// variables, private to each work-item.
pub fn address_space(storage: StorageClass) -> Option<AddressSpace> {
    Some(match storage {
        StorageClass::CrossWorkgroup => AddressSpace::Global,
        StorageClass::UniformConstant => AddressSpace::Constant,
        StorageClass::Workgroup => AddressSpace::Local,
        StorageClass::Function | StorageClass::Input => AddressSpace::Private,
        StorageClass::Generic => AddressSpace::Generic,
        _ => return None,
    })
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

    fn layout(size: u64, align: u64) -> Result<Layout, TypeError> {
        Ok(Layout { size, align })
    }

    #[test]
    fn layout_follows_opencl_c_alignment_packed_or_not() {
        let mut b = Builder::new();
        let float = b.type_float(32, None);
        let uchar = b.type_int(8, 0);
        let float4 = b.type_vector(float, 4);
        let float3 = b.type_vector(float, 3);
        let uint = b.type_int(32, 0);
        let three = b.constant_bit32(uint, 3);
        let bytes = b.type_array(uchar, three);
        // struct { float x; uchar c; float4 v; } is 4 + 1 + pad to 16 + 16.
        let s = b.type_struct([float, uchar, float4]);
        // struct { uchar c[3]; float3 v; uchar d; } is 3 + pad to 16 + 16 + 1
        // + pad to 48; packed, 3 + 16 + 1.
        let unpacked = b.type_struct([bytes, float3, uchar]);
        // The builder shares equal declarations: the packed one needs its own id.
        let packed = b.id();
        b.type_struct_id(Some(packed), [bytes, float3, uchar]);
        b.decorate(packed, Decoration::CPacked, []);
        let module = b.module();
        let types = Types::new(&module);
        assert_eq!(types.layout(float3), layout(16, 16));
        assert_eq!(types.layout(bytes), layout(3, 1));
        assert_eq!(types.layout(s), layout(32, 16));
        assert_eq!(types.layout(unpacked), layout(48, 16));
        assert_eq!(types.member_offset(unpacked, 1), Ok(16));
        assert_eq!(types.member_offset(unpacked, 2), Ok(32));
        assert_eq!(types.layout(packed), layout(20, 1));
        assert_eq!(types.member_offset(packed, 2), Ok(19));
        assert_eq!(
            types.member_offset(packed, 3),
            Err(TypeError::NoMember { id: packed, index: 3 })
        );
        assert_eq!(
            types.get(bytes),
            Ok(&Type::Array { element: uchar, length: Some(3) })
        );
        assert_eq!(
            types.element(float3, false).map(|e| e.to_string()),
            Some("float3".into())
        );
        assert_eq!(
            types.element(uchar, true).map(|e| e.to_string()),
            Some("char".into())
        );
        assert_eq!(types.element(s, false), None);
    }

    #[test]
    fn self_containing_types_are_errors_not_followed_forever() {
        let mut b = Builder::new();
        let uint = b.type_int(32, 0);
        let one = b.constant_bit32(uint, 1);
        // An array whose element is itself, a struct holding itself, and a
        // vector of itself.
        let array = b.id();
        b.type_array_id(Some(array), array, one);
        let looped = b.id();
        b.type_struct_id(Some(looped), [uint, looped]);
        let vector = b.id();
        b.type_vector_id(Some(vector), vector, 4);
        let module = b.module();
        let types = Types::new(&module);
        assert_eq!(types.layout(array), Err(TypeError::TooDeep { id: array }));
        assert!(matches!(
            types.layout(looped),
            Err(TypeError::TooDeep { .. })
        ));
        assert_eq!(types.element(vector, false), None);
        assert_eq!(
            types.layout(vector),
            Err(TypeError::NotAType { id: vector })
        );
    }
}
