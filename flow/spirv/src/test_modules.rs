//! Small kernel modules built in code for the unit tests, shaped the way
//! llvm-spirv writes them (an entry-point wrapper calling the body, names on
//! the wrapper's parameters, argument types kept as `OpString`s), so that the
//! tests need no compiler.

use rspirv::binary::Assemble;
use rspirv::dr::{Builder, Operand};
use spirv::{
    AddressingModel, Capability, Decoration, ExecutionModel, FunctionControl,
    FunctionParameterAttribute, MemoryModel, StorageClass, Word,
};

/// A builder for an OpenCL kernel module (Physical64, OpenCL memory
/// model), with `void` and a `void()` function type declared.
pub fn kernel_builder() -> (Builder, Word, Word) {
    let mut b = Builder::new();
    b.set_version(1, 0);
    b.capability(Capability::Addresses);
    b.capability(Capability::Kernel);
    b.memory_model(AddressingModel::Physical64, MemoryModel::OpenCL);
    let void = b.type_void();
    let fn_type = b.type_function(void, vec![]);
    (b, void, fn_type)
}

/// Ends the function `f` begun on `b`, makes it the kernel `k` and
/// assembles the module.
pub fn finish_kernel(mut b: Builder, f: Word) -> Vec<u8> {
    b.end_function().unwrap();
    b.entry_point(ExecutionModel::Kernel, f, "k", vec![]);
    b.module()
        .assemble()
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect()
}

/// What a kernel parameter is in the test module, and how it is decorated.
struct TestParam {
    name: Option<&'static str>,
    ty: Word,
    attribute: Option<FunctionParameterAttribute>,
}

/// Assembles a module with one kernel `name` taking `params`.
fn kernel_module(b: Builder, void: Word, name: &str, params: &[TestParam]) -> Vec<u8> {
    let mut b = b;
    let param_types: Vec<Word> = params.iter().map(|p| p.ty).collect();
    let fn_type = b.type_function(void, param_types.clone());

    // The body, which llvm-spirv names after the kernel.
    let body = b
        .begin_function(void, None, FunctionControl::NONE, fn_type)
        .unwrap();
    b.name(body, name);
    for ty in &param_types {
        b.function_parameter(*ty).unwrap();
    }
    b.begin_block(None).unwrap();
    b.ret().unwrap();
    b.end_function().unwrap();

    // The wrapper the entry point names.
    let wrapper = b
        .begin_function(void, None, FunctionControl::NONE, fn_type)
        .unwrap();
    let mut args = Vec::new();
    for param in params {
        let id = b.function_parameter(param.ty).unwrap();
        if let Some(param_name) = param.name {
            b.name(id, param_name);
        }
        if let Some(attribute) = param.attribute {
            b.decorate(
                id,
                Decoration::FuncParamAttr,
                [Operand::FunctionParameterAttribute(attribute)],
            );
        }
        args.push(id);
    }
    b.begin_block(None).unwrap();
    b.function_call(void, None, body, args).unwrap();
    b.ret().unwrap();
    b.end_function().unwrap();
    b.entry_point(ExecutionModel::Kernel, wrapper, name, []);

    let mut module = b.module();
    if let Some(header) = module.header.as_mut() {
        // LLVM/SPIR-V Translator, version 14.
        header.generator = 0x0006_000e;
    }
    module
        .assemble()
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect()
}

fn opencl_builder() -> Builder {
    let mut b = Builder::new();
    b.set_version(1, 0);
    for capability in [
        Capability::Addresses,
        Capability::Kernel,
        Capability::Int64,
        Capability::Int8,
    ] {
        b.capability(capability);
    }
    b.ext_inst_import("OpenCL.std");
    b.memory_model(AddressingModel::Physical64, MemoryModel::OpenCL);
    b
}

/// `__kernel void scale(__global const uint *in, __global float4 *out,
/// __local int *scratch, __constant float *coef, hash_t n, int m, char c,
/// S s, __global void *raw)` with `typedef uint hash_t` and
/// `typedef struct { float x; uchar c; float4 v; } S`.
pub fn sample_module_bytes() -> Vec<u8> {
    let mut b = opencl_builder();
    b.string("kernel_arg_type.scale.uint*,float4*,int*,float*,hash_t,int,char,S,void*,");
    b.string("kernel_arg_type_qual.scale.const,,,const,,,,,,");
    let void = b.type_void();
    let uint = b.type_int(32, 0);
    let uchar = b.type_int(8, 0);
    let float = b.type_float(32, None);
    let float4 = b.type_vector(float, 4);
    let s = b.type_struct([float, uchar, float4]);
    let params = [
        (
            "in",
            b.type_pointer(None, StorageClass::CrossWorkgroup, uint),
            None,
        ),
        (
            "out",
            b.type_pointer(None, StorageClass::CrossWorkgroup, float4),
            None,
        ),
        (
            "scratch",
            b.type_pointer(None, StorageClass::Workgroup, uint),
            None,
        ),
        (
            "coef",
            b.type_pointer(None, StorageClass::UniformConstant, float),
            None,
        ),
        ("n", uint, None),
        ("m", uint, None),
        ("c", uchar, Some(FunctionParameterAttribute::Sext)),
        (
            "s",
            b.type_pointer(None, StorageClass::Function, s),
            Some(FunctionParameterAttribute::ByVal),
        ),
        (
            "raw",
            b.type_pointer(None, StorageClass::CrossWorkgroup, uchar),
            None,
        ),
    ]
    .map(|(name, ty, attribute)| TestParam { name: Some(name), ty, attribute });
    kernel_module(b, void, "scale", &params)
}

/// `__kernel void plain(__global uint*, uint, char, __global uchar*)` with
/// no names and no recorded argument types.
pub fn untyped_module_bytes() -> Vec<u8> {
    let mut b = opencl_builder();
    let void = b.type_void();
    let uint = b.type_int(32, 0);
    let uchar = b.type_int(8, 0);
    let params = [
        (
            b.type_pointer(None, StorageClass::CrossWorkgroup, uint),
            None,
        ),
        (uint, None),
        (uchar, Some(FunctionParameterAttribute::Sext)),
        (
            b.type_pointer(None, StorageClass::CrossWorkgroup, uchar),
            None,
        ),
    ]
    .map(|(ty, attribute)| TestParam { name: None, ty, attribute });
    kernel_module(b, void, "plain", &params)
}

/// `__kernel void walk(__global Body *bodies, __global struct Node *nodes,
/// __global struct Fwd *fwd, __global struct Packed *packed, ...)` with
/// `typedef struct { float4 pos; float mass; int id; } Body` (clang's
/// padding member included), `struct Node { int key; uint next; float
/// weight; char tag[3]; }`, `struct Fwd` only declared and a packed
/// `struct Packed { char c; int i; }`; then three pointers a module from
/// opaque LLVM pointers would make `i8*`: `struct Node*` (declared above),
/// `struct Gone*` (declared nowhere) and `byte_t*` (a typedef of uchar).
/// With `spelled`, the argument types are recorded as clang spells them.
pub fn struct_module_bytes(spelled: bool) -> Vec<u8> {
    let mut b = opencl_builder();
    if spelled {
        b.string(
            "kernel_arg_type.walk.Body*,struct Node*,struct Fwd*,struct Packed*,\
             struct Node*,struct Gone*,byte_t*,",
        );
    }
    let void = b.type_void();
    let uint = b.type_int(32, 0);
    let ulong = b.type_int(64, 0);
    let uchar = b.type_int(8, 0);
    let float = b.type_float(32, None);
    let float4 = b.type_vector(float, 4);
    let eight = b.constant_bit64(ulong, 8);
    let three = b.constant_bit64(ulong, 3);
    let pad = b.type_array(uchar, eight);
    let tag = b.type_array(uchar, three);
    let body = b.type_struct([float4, float, uint, pad]);
    b.name(body, "struct.Body");
    let node = b.type_struct([uint, uint, float, tag]);
    b.name(node, "struct.Node");
    let fwd = b.type_opaque("struct.Fwd");
    b.name(fwd, "struct.Fwd");
    let packed = b.id();
    b.type_struct_id(Some(packed), [uchar, uint]);
    b.decorate(packed, Decoration::CPacked, []);
    b.name(packed, "struct.Packed.3");
    let global = |b: &mut Builder, ty| b.type_pointer(None, StorageClass::CrossWorkgroup, ty);
    let params = [
        ("bodies", global(&mut b, body)),
        ("nodes", global(&mut b, node)),
        ("fwd", global(&mut b, fwd)),
        ("packed", global(&mut b, packed)),
        ("opaque", global(&mut b, uchar)),
        ("lost", global(&mut b, uchar)),
        ("bytes", global(&mut b, uchar)),
    ]
    .map(|(name, ty)| TestParam { name: Some(name), ty, attribute: None });
    kernel_module(b, void, "walk", &params)
}
