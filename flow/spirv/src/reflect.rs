//! Kernel entry points → kernel signatures.
//!
//! llvm-spirv makes each kernel's `OpEntryPoint` name a wrapper function that
//! calls the real body, so the kernel name comes from `OpEntryPoint` and the
//! parameters (with their `OpName`s) from the function it names.

use crate::arg_types::{spelled_types, SpelledType};
use crate::structs::pointee_struct;
use crate::types::{address_space, id_operand, Scalar, Type, Types};
use crate::SpirvError;
use clflow_core::{Access, ElementType, KernelParam, KernelSignature, ParamKind};
use rspirv::dr::{Function, Instruction, Module, Operand};
use spirv::{Decoration, ExecutionModel, FunctionParameterAttribute, Op, StorageClass, Word};
use std::collections::HashMap;

/// A kernel's signature together with the argument types as its source
/// spelled them (`hash_t`, `const uint*`), where the module keeps them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReflectedKernel {
    pub signature: KernelSignature,
    /// One entry per parameter: the source's spelling, or `None`.
    pub source_types: Vec<Option<String>>,
}

impl ReflectedKernel {
    /// The kernel's declaration as its source wrote it, with clflow's
    /// reading in a comment where the two differ:
    /// `__kernel void f(__global const uint* in, hash_t n /* uint */)`.
    pub fn declaration(&self) -> String {
        let params: Vec<String> = self
            .signature
            .params
            .iter()
            .zip(&self.source_types)
            .map(|(param, spelled)| {
                let reflected = param.kind.to_string();
                let written = match (&param.kind, spelled) {
                    (ParamKind::Pointer { space, .. }, Some(spelled)) => {
                        format!("{space} {spelled}")
                    }
                    (_, Some(spelled)) => spelled.clone(),
                    (_, None) => reflected.clone(),
                };
                let mut text = written.clone();
                if let Some(name) = &param.name {
                    text = format!("{text} {name}");
                }
                // An opaque pointer (a struct's without a name) reads as
                // `void*`; saying so would only contradict the source.
                let opaque = matches!(
                    param.kind,
                    ParamKind::Pointer { pointee: None, pointee_struct: None, .. }
                );
                if !opaque && !same_reading(&written, &reflected) {
                    text = format!("{text} /* {reflected} */");
                }
                text
            })
            .collect();
        format!(
            "__kernel void {}({})",
            self.signature.name,
            params.join(", ")
        )
    }
}

/// Whether a spelled declaration says the same as the reflected one, up to
/// qualifiers such as `const`.
fn same_reading(written: &str, reflected: &str) -> bool {
    let strip = |text: &str| {
        text.split_whitespace()
            .filter(|word| !matches!(*word, "const" | "volatile" | "restrict"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    strip(written) == strip(reflected)
}

/// Every kernel entry point's signature, in the module's order.
pub fn kernels(module: &Module) -> Result<Vec<KernelSignature>, SpirvError> {
    Ok(reflect_kernels(module)?
        .into_iter()
        .map(|kernel| kernel.signature)
        .collect())
}

/// Every kernel entry point, with the source's spelling of its types.
pub fn reflect_kernels(module: &Module) -> Result<Vec<ReflectedKernel>, SpirvError> {
    let reflector = Reflector::new(module);
    module
        .entry_points
        .iter()
        .filter(|inst| {
            matches!(
                inst.operands.first(),
                Some(Operand::ExecutionModel(ExecutionModel::Kernel))
            )
        })
        .map(|inst| reflector.entry_point(inst))
        .collect()
}

struct Reflector<'m> {
    module: &'m Module,
    types: Types,
    names: HashMap<Word, &'m str>,
    param_attributes: HashMap<Word, Vec<FunctionParameterAttribute>>,
    spelled: HashMap<String, Vec<SpelledType>>,
}

impl<'m> Reflector<'m> {
    fn new(module: &'m Module) -> Self {
        let names = module
            .debug_names
            .iter()
            .filter(|inst| inst.class.opcode == Op::Name)
            .filter_map(|inst| match (id_operand(inst, 0), inst.operands.get(1)) {
                (Some(id), Some(Operand::LiteralString(name))) => Some((id, name.as_str())),
                _ => None,
            })
            .collect();
        let mut param_attributes: HashMap<Word, Vec<FunctionParameterAttribute>> = HashMap::new();
        for inst in &module.annotations {
            if inst.class.opcode != Op::Decorate {
                continue;
            }
            if let (
                Some(target),
                Some(Operand::Decoration(Decoration::FuncParamAttr)),
                Some(Operand::FunctionParameterAttribute(attr)),
            ) = (
                id_operand(inst, 0),
                inst.operands.get(1),
                inst.operands.get(2),
            ) {
                param_attributes.entry(target).or_default().push(*attr);
            }
        }
        Reflector {
            module,
            types: Types::new(module),
            names,
            param_attributes,
            spelled: spelled_types(module),
        }
    }

    fn entry_point(&self, inst: &Instruction) -> Result<ReflectedKernel, SpirvError> {
        let name = match inst.operands.get(2) {
            Some(Operand::LiteralString(name)) => name.clone(),
            _ => return Err(SpirvError::reflection("?", "its OpEntryPoint has no name")),
        };
        let function_id = id_operand(inst, 1)
            .ok_or_else(|| SpirvError::reflection(&name, "its OpEntryPoint names no function"))?;
        let function = self.function(function_id).ok_or_else(|| {
            SpirvError::reflection(&name, format!("its OpEntryPoint names function %{function_id}, which the module does not define"))
        })?;
        let spelled = self.spelled.get(&name);
        if let Some(spelled) = spelled {
            if spelled.len() != function.parameters.len() {
                return Err(SpirvError::reflection(
                    &name,
                    format!(
                        "the module records {} argument types but the function has {} parameters",
                        spelled.len(),
                        function.parameters.len()
                    ),
                ));
            }
        }
        let mut params = Vec::with_capacity(function.parameters.len());
        for (index, parameter) in function.parameters.iter().enumerate() {
            let spelled = spelled.map(|types| &types[index]);
            params.push(self.parameter(&name, index, parameter, spelled)?);
        }
        let source_types = (0..params.len())
            .map(|index| spelled.map(|types| types[index].render()))
            .collect();
        Ok(ReflectedKernel { signature: KernelSignature { name, params }, source_types })
    }

    fn function(&self, id: Word) -> Option<&'m Function> {
        self.module
            .functions
            .iter()
            .find(|f| f.def.as_ref().and_then(|def| def.result_id) == Some(id))
    }

    fn parameter(
        &self,
        kernel: &str,
        index: usize,
        parameter: &Instruction,
        spelled: Option<&SpelledType>,
    ) -> Result<KernelParam, SpirvError> {
        let missing = || SpirvError::reflection(kernel, format!("parameter {index} has no type"));
        let type_id = parameter.result_type.ok_or_else(missing)?;
        let ty = self.types.get(type_id).map_err(|_| {
            SpirvError::reflection(
                kernel,
                format!("parameter {index} has type %{type_id}, which the module does not declare"),
            )
        })?;
        let attributes = parameter
            .result_id
            .and_then(|id| self.param_attributes.get(&id))
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let kind = match *ty {
            Type::Scalar(Scalar::Int(_) | Scalar::Float(_)) | Type::Vector(..) => {
                match self.value_type(type_id, attributes, spelled) {
                    Some(ty) => ParamKind::Scalar { ty },
                    None => ParamKind::Unsupported {
                        what: format!("a value of SPIR-V type {}", self.describe(type_id)),
                    },
                }
            }
            Type::Pointer { storage: StorageClass::Function, pointee }
                if attributes.contains(&FunctionParameterAttribute::ByVal) =>
            {
                // A struct passed by value arrives as a pointer to a copy.
                self.aggregate(pointee)
            }
            // Built-in inputs are no kernel's parameters.
            Type::Pointer { storage, pointee } => {
                match address_space(storage).filter(|_| storage != StorageClass::Input) {
                    Some(space) => {
                        let pointee_struct =
                            pointee_struct(&self.types, &self.names, pointee, spelled);
                        ParamKind::Pointer {
                            space,
                            pointee: match pointee_struct {
                                Some(_) => None,
                                None => self.pointee(pointee, spelled),
                            },
                            pointee_struct,
                        }
                    }
                    None => ParamKind::Unsupported {
                        what: format!("a pointer into {storage:?} storage"),
                    },
                }
            }
            Type::Struct { .. } | Type::Array { length: Some(_), .. } => self.aggregate(type_id),
            Type::Image(image) => match (image.dim, image.unsupported()) {
                (Some(dim), None) => {
                    ParamKind::Image { dim, access: image.access.unwrap_or(Access::ReadOnly) }
                }
                _ => unsupported(spelled, "an image"),
            },
            Type::Sampler => ParamKind::Sampler,
            Type::Pipe => unsupported(spelled, "a pipe"),
            Type::Queue => unsupported(spelled, "queue_t"),
            Type::Event => unsupported(spelled, "an event"),
            ref other => unsupported(spelled, &format!("SPIR-V {:?}", other.opcode())),
        };
        let name = parameter
            .result_id
            .and_then(|id| self.names.get(&id))
            .map(|name| name.to_string());
        Ok(KernelParam { name, kind })
    }

    /// A by-copy scalar or vector: the source's spelling where it agrees with
    /// the module, else the module's width with the sign the calling
    /// convention shows (sign/zero extension of char and short), else
    /// unsigned, as SPIR-V tools print it.
    fn value_type(
        &self,
        type_id: Word,
        attributes: &[FunctionParameterAttribute],
        spelled: Option<&SpelledType>,
    ) -> Option<ElementType> {
        let signed = attributes.contains(&FunctionParameterAttribute::Sext);
        let from_module = self.types.element(type_id, signed)?;
        Some(agreeing(spelled.filter(|s| !s.is_pointer), from_module))
    }

    fn pointee(&self, pointee: Word, spelled: Option<&SpelledType>) -> Option<ElementType> {
        let spelled = spelled.filter(|s| s.is_pointer);
        if spelled.is_some_and(SpelledType::is_void_pointer) {
            return None;
        }
        let from_module = self.types.element(pointee, false)?;
        Some(agreeing(spelled, from_module))
    }

    fn aggregate(&self, type_id: Word) -> ParamKind {
        // Sizes past the address space are no struct a kernel can take.
        match self
            .types
            .layout(type_id)
            .ok()
            .map(|layout| usize::try_from(layout.size))
        {
            Some(Ok(size_bytes)) => ParamKind::Aggregate { size_bytes },
            _ => ParamKind::Unsupported {
                what: format!("a value of SPIR-V type {}", self.describe(type_id)),
            },
        }
    }

    fn describe(&self, type_id: Word) -> String {
        match self.names.get(&type_id) {
            Some(name) => format!("%{type_id} ({name})"),
            None => format!("%{type_id}"),
        }
    }
}

/// The spelled element where it has the module's shape (same lanes, width
/// and float-ness: only the sign may differ), else the module's own.
fn agreeing(spelled: Option<&SpelledType>, from_module: ElementType) -> ElementType {
    match spelled.and_then(SpelledType::element) {
        Some(ty)
            if ty.lanes == from_module.lanes
                && ty.scalar.size_bytes() == from_module.scalar.size_bytes()
                && ty.scalar.is_float() == from_module.scalar.is_float() =>
        {
            ty
        }
        _ => from_module,
    }
}

fn unsupported(spelled: Option<&SpelledType>, fallback: &str) -> ParamKind {
    ParamKind::Unsupported {
        what: spelled
            .map(SpelledType::render)
            .unwrap_or_else(|| fallback.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_modules::{sample_module_bytes, struct_module_bytes, untyped_module_bytes};
    use clflow_core::{AddressSpace, ScalarType, StructType};

    fn element(text: &str) -> ElementType {
        text.parse().unwrap()
    }

    fn pointer(space: AddressSpace, pointee: Option<&str>) -> ParamKind {
        ParamKind::Pointer { space, pointee: pointee.map(element), pointee_struct: None }
    }

    fn param(name: &str, kind: ParamKind) -> KernelParam {
        KernelParam { name: Some(name.into()), kind }
    }

    #[test]
    fn reflects_exact_types_from_the_recorded_spelling() {
        let module = crate::load(&sample_module_bytes()).unwrap();
        let kernels = reflect_kernels(&module).unwrap();
        assert_eq!(kernels.len(), 1);
        let scale = &kernels[0];
        assert_eq!(
            scale.signature,
            KernelSignature {
                name: "scale".into(),
                params: vec![
                    param("in", pointer(AddressSpace::Global, Some("uint"))),
                    param("out", pointer(AddressSpace::Global, Some("float4"))),
                    param("scratch", pointer(AddressSpace::Local, Some("int"))),
                    param("coef", pointer(AddressSpace::Constant, Some("float"))),
                    param("n", ParamKind::Scalar { ty: element("uint") }),
                    param("m", ParamKind::Scalar { ty: element("int") }),
                    param("c", ParamKind::Scalar { ty: element("char") }),
                    param("s", ParamKind::Aggregate { size_bytes: 32 }),
                    param("raw", pointer(AddressSpace::Global, None)),
                ],
            }
        );
        assert_eq!(
            scale.declaration(),
            "__kernel void scale(__global const uint* in, __global float4* out, __local int* scratch, \
             __constant const float* coef, hash_t n /* uint */, int m, char c, S s /* struct (32 bytes) */, \
             __global void* raw)"
        );
    }

    #[test]
    fn without_recorded_spelling_integers_read_unsigned_unless_sign_extended() {
        let module = crate::load(&untyped_module_bytes()).unwrap();
        let kernels = kernels(&module).unwrap();
        let kinds: Vec<String> = kernels[0]
            .params
            .iter()
            .map(|p| p.kind.to_string())
            .collect();
        assert_eq!(kinds, ["__global uint*", "uint", "char", "__global uchar*"]);
        assert!(kernels[0].params.iter().all(|p| p.name.is_none()));
        assert_eq!(
            kernels[0].params[2].kind,
            ParamKind::Scalar { ty: ElementType::scalar(ScalarType::Char) }
        );
    }

    /// The struct of each pointer parameter of `walk`: name, size, and its
    /// members as `offset:type` (`None` where none is known).
    fn structs(spelled: bool) -> Vec<Option<(String, Option<usize>, String)>> {
        let module = crate::load(&struct_module_bytes(spelled)).unwrap();
        let kernels = reflect_kernels(&module).unwrap();
        kernels[0]
            .signature
            .params
            .iter()
            .map(|param| match &param.kind {
                ParamKind::Pointer {
                    pointee_struct: Some(StructType { name, size_bytes, members }),
                    pointee: None,
                    ..
                } => {
                    let members: Vec<String> = members.iter().map(|m| m.to_string()).collect();
                    Some((name.clone(), *size_bytes, members.join(", ")))
                }
                ParamKind::Pointer { pointee_struct: None, .. } => None,
                other => panic!("{other:?}"),
            })
            .collect()
    }

    fn laid_out(
        name: &str,
        size: Option<usize>,
        members: &str,
    ) -> Option<(String, Option<usize>, String)> {
        Some((name.to_string(), size, members.to_string()))
    }

    #[test]
    fn struct_pointers_carry_the_source_name_and_the_module_layout() {
        let body = "float4 @0, float @16, uint @20, uchar[8] @24";
        let node = "uint @0, uint @4, float @8, uchar[3] @12";
        assert_eq!(
            structs(true),
            [
                laid_out("Body", Some(32), body),
                laid_out("struct Node", Some(16), node),
                laid_out("struct Fwd", None, ""),
                laid_out("struct Packed", Some(5), "uchar @0, uint @1"),
                // An `i8*`: the struct's declaration elsewhere gives its size.
                laid_out("struct Node", Some(16), node),
                laid_out("struct Gone", None, ""),
                None,
            ]
        );
        let module = crate::load(&struct_module_bytes(true)).unwrap();
        let walk = &reflect_kernels(&module).unwrap()[0];
        // A typedef of a byte stays one.
        assert_eq!(walk.signature.params[6].kind.to_string(), "__global uchar*");
        assert!(walk.declaration().starts_with(
            "__kernel void walk(__global Body* bodies, __global struct Node* nodes, __global struct Fwd* fwd,"
        ));
    }

    #[test]
    fn without_recorded_spelling_structs_take_the_module_names() {
        let node = "uint @0, uint @4, float @8, uchar[3] @12";
        assert_eq!(
            structs(false)[..4],
            [
                laid_out(
                    "struct Body",
                    Some(32),
                    "float4 @0, float @16, uint @20, uchar[8] @24"
                ),
                laid_out("struct Node", Some(16), node),
                laid_out("struct Fwd", None, ""),
                laid_out("struct Packed", Some(5), "uchar @0, uint @1"),
            ]
        );
        // Byte pointers with no spelling are bytes.
        assert_eq!(structs(false)[4..], [None, None, None]);
    }
}
