//! The translator on small kernels built in code with rspirv's `Builder`
//! (as `clflow-spirv`'s `test_modules` builds them), so that these tests
//! need no compiler: each is run on a tiny launch and its counts checked.

use crate::counts::{LaneType, OpClass, Space};
use crate::{Program, RunOptions, RunResult};
use clflow_core::{Access, ArgValue, Launch, LaunchArg, NdRange, ScalarType};
use rspirv::binary::Assemble;
use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{
    AddressingModel, BuiltIn, Capability, Decoration, ExecutionModel, FunctionControl, MemoryModel,
    StorageClass, Word,
};

/// A module builder set up as llvm-spirv sets one up for OpenCL C.
fn opencl_builder() -> Builder {
    let mut b = Builder::new();
    b.set_version(1, 0);
    for capability in [Capability::Addresses, Capability::Kernel, Capability::Int64] {
        b.capability(capability);
    }
    b.ext_inst_import("OpenCL.std");
    b.memory_model(AddressingModel::Physical64, MemoryModel::OpenCL);
    b
}

/// The work-item's `get_global_id(0)`, loaded from the builtin variable `gid`.
fn global_id(b: &mut Builder, gid: Word) -> Word {
    let ulong = b.type_int(64, 0);
    let ulong3 = b.type_vector(ulong, 3);
    let ids = b.load(ulong3, None, gid, None, []).unwrap();
    b.composite_extract(ulong, None, ids, [0]).unwrap()
}

/// The `GlobalInvocationId` input variable.
fn global_id_variable(b: &mut Builder) -> Word {
    let ulong = b.type_int(64, 0);
    let ulong3 = b.type_vector(ulong, 3);
    let ptr = b.type_pointer(None, StorageClass::Input, ulong3);
    let gid = b.variable(ptr, None, StorageClass::Input, None);
    b.decorate(
        gid,
        Decoration::BuiltIn,
        [Operand::BuiltIn(BuiltIn::GlobalInvocationId)],
    );
    gid
}

/// Starts kernel `name` over global buffers of `elem`; returns the
/// parameters.
fn begin_kernel(b: &mut Builder, name: &str, elem: Word, buffers: usize) -> Vec<Word> {
    let void = b.type_void();
    let ptr = b.type_pointer(None, StorageClass::CrossWorkgroup, elem);
    let fn_type = b.type_function(void, vec![ptr; buffers]);
    let f = b
        .begin_function(void, None, FunctionControl::NONE, fn_type)
        .unwrap();
    b.entry_point(ExecutionModel::Kernel, f, name, []);
    let params = (0..buffers)
        .map(|_| b.function_parameter(ptr).unwrap())
        .collect();
    b.begin_block(None).unwrap();
    params
}

/// `&buffer[i]` for a buffer of `elem`.
fn element(b: &mut Builder, elem: Word, buffer: Word, i: Word) -> Word {
    let ptr = b.type_pointer(None, StorageClass::CrossWorkgroup, elem);
    b.in_bounds_ptr_access_chain(ptr, None, buffer, i, [])
        .unwrap()
}

fn end_kernel(b: &mut Builder) {
    b.ret().unwrap();
    b.end_function().unwrap();
}

/// The module as the interpreter reads it: assembled, then loaded.
fn load(b: Builder) -> rspirv::dr::Module {
    let bytes: Vec<u8> = b
        .module()
        .assemble()
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    crate::load(&bytes).unwrap()
}

/// Runs kernel `name` on `items` work-items in groups of `local`, each
/// buffer of 4-byte elements given by its bytes.
fn run(
    module: &rspirv::dr::Module,
    name: &str,
    items: u64,
    local: u64,
    buffers: Vec<Vec<u8>>,
) -> RunResult {
    let program = Program::translate(module, name).unwrap();
    let args = buffers
        .into_iter()
        .map(|bytes| LaunchArg {
            name: None,
            value: ArgValue::Buffer {
                ty: "uint".parse().unwrap(),
                access: Access::ReadWrite,
                bytes,
            },
        })
        .collect();
    let launch = Launch {
        kernel: name.to_string(),
        range: NdRange {
            dims: 1,
            global: [items, 1, 1],
            local: Some([local, 1, 1]),
            offset: [0; 3],
        },
        args,
    };
    program.run(&launch, &RunOptions::default()).unwrap()
}

fn bytes_of<T: Copy>(values: &[T], to_le: impl Fn(T) -> [u8; 4]) -> Vec<u8> {
    values.iter().flat_map(|v| to_le(*v)).collect()
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Lanes counted under histogram entry `op` of type `ty`.
fn lanes(r: &RunResult, op: &str, ty: &str) -> u64 {
    r.counts
        .histogram
        .iter()
        .filter(|e| e.op == op && e.ty == ty)
        .map(|e| e.lanes)
        .sum()
}

/// The disassembly of kernel `name`'s own code: callees come first, and
/// its one block last.
fn kernel_code(module: &rspirv::dr::Module, name: &str) -> String {
    let code = Program::translate(module, name).unwrap().disassemble();
    let start = code.rfind("Block {").unwrap();
    code[start..].to_string()
}

/// W counted under base operation `op`.
fn work(r: &RunResult, op: &str) -> u64 {
    r.counts
        .work
        .iter()
        .filter(|(k, _)| k.op == op)
        .map(|(_, n)| n)
        .sum()
}

const FLOAT: LaneType = LaneType::Scalar(ScalarType::Float);
const UINT: LaneType = LaneType::Scalar(ScalarType::UInt);

/// `c[i] = a[i] + b[i]`.
#[test]
fn a_float_add_per_work_item_counts_one_fadd_and_twelve_bytes() {
    let mut b = opencl_builder();
    let float = b.type_float(32, None);
    let gid = global_id_variable(&mut b);
    let p = begin_kernel(&mut b, "add", float, 3);
    let i = global_id(&mut b, gid);
    let (pa, pb, pc) = (
        element(&mut b, float, p[0], i),
        element(&mut b, float, p[1], i),
        element(&mut b, float, p[2], i),
    );
    let x = b.load(float, None, pa, None, []).unwrap();
    let y = b.load(float, None, pb, None, []).unwrap();
    let sum = b.f_add(float, None, x, y).unwrap();
    b.store(pc, sum, None, []).unwrap();
    end_kernel(&mut b);

    let a: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let c: Vec<f32> = (0..8).map(|i| 0.25 * i as f32).collect();
    let r = run(
        &load(b),
        "add",
        8,
        4,
        vec![
            bytes_of(&a, f32::to_le_bytes),
            bytes_of(&c, f32::to_le_bytes),
            vec![0; 32],
        ],
    );
    let out: Vec<f32> = words(&r.buffers[2].bytes)
        .into_iter()
        .map(f32::from_bits)
        .collect();
    let expected: Vec<f32> = a.iter().zip(&c).map(|(x, y)| x + y).collect();
    assert_eq!(out, expected);

    let k = &r.counts;
    assert_eq!((k.work_items, k.work_groups), (8, 2));
    assert_eq!(lanes(&r, "OpFAdd", "float"), 8);
    assert_eq!(lanes(&r, "OpLoad global", "float"), 16);
    assert_eq!(lanes(&r, "OpStore global", "float"), 8);
    assert_eq!(lanes(&r, "OpInBoundsPtrAccessChain", "ptr"), 24);
    assert_eq!(lanes(&r, "OpReturn", "void"), 8);
    assert_eq!(k.histogram.len(), 5);
    // W per class: the adds are fp32, the address computations integer.
    assert_eq!(k.w_class(OpClass::Fp32), 8);
    assert_eq!(k.w_class(OpClass::Int), 24);
    assert_eq!(k.w_class(OpClass::Fp64), 0);
    assert_eq!(
        (
            k.traffic.load(Space::Global),
            k.traffic.store(Space::Global)
        ),
        (64, 32)
    );
    assert_eq!(k.q_accessed(), 96);
    assert!(k
        .work
        .iter()
        .any(|(key, n)| key.op == "OpFAdd" && key.ty == FLOAT && key.arith && *n == 8));
}

/// `uint add(uint x, uint y) { return x + y; }` called on constants: the
/// inlined add is folded, and still counted once per call.
#[test]
fn an_integer_op_on_constants_in_an_inlined_body_is_folded() {
    let mut b = opencl_builder();
    let uint = b.type_int(32, 0);
    let adder_type = b.type_function(uint, vec![uint, uint]);
    let adder = b
        .begin_function(uint, None, FunctionControl::NONE, adder_type)
        .unwrap();
    let (x, y) = (
        b.function_parameter(uint).unwrap(),
        b.function_parameter(uint).unwrap(),
    );
    b.begin_block(None).unwrap();
    let sum = b.i_add(uint, None, x, y).unwrap();
    b.ret_value(sum).unwrap();
    b.end_function().unwrap();

    let gid = global_id_variable(&mut b);
    let three = b.constant_bit32(uint, 3);
    let four = b.constant_bit32(uint, 4);
    let p = begin_kernel(&mut b, "seven", uint, 1);
    let i = global_id(&mut b, gid);
    let out = element(&mut b, uint, p[0], i);
    let seven = b.function_call(uint, None, adder, [three, four]).unwrap();
    b.store(out, seven, None, []).unwrap();
    end_kernel(&mut b);

    let module = load(b);
    let code = kernel_code(&module, "seven");
    assert!(
        !code.contains("Add32") && !code.contains("Int {"),
        "the add is not folded:\n{code}"
    );
    let r = run(&module, "seven", 4, 4, vec![vec![0; 16]]);
    assert_eq!(words(&r.buffers[0].bytes), [7; 4]);
    assert_eq!(lanes(&r, "OpIAdd", "uint"), 4);
    assert_eq!(lanes(&r, "OpFunctionCall", "uint"), 4);
    assert_eq!(work(&r, "OpIAdd"), 4);
    assert_eq!(r.counts.w_class(OpClass::Int), 4 + 4);
}

/// llvm-spirv's funnel-shift emulation of `(x << 7) | (x >> 25)` runs as
/// one rotate and counts as the three operations the source wrote.
#[test]
fn a_funnel_shift_by_a_constant_becomes_one_rotate() {
    let mut b = opencl_builder();
    let uint = b.type_int(32, 0);
    let fshl_type = b.type_function(uint, vec![uint, uint, uint]);
    let bits = b.constant_bit32(uint, 32);
    let fshl = b
        .begin_function(uint, None, FunctionControl::NONE, fshl_type)
        .unwrap();
    b.name(fshl, "spirv.llvm_fshl_i32");
    let (hi, lo, k) = (
        b.function_parameter(uint).unwrap(),
        b.function_parameter(uint).unwrap(),
        b.function_parameter(uint).unwrap(),
    );
    b.begin_block(None).unwrap();
    let k = b.u_mod(uint, None, k, bits).unwrap();
    let left = b.shift_left_logical(uint, None, hi, k).unwrap();
    let back = b.i_sub(uint, None, bits, k).unwrap();
    let right = b.shift_right_logical(uint, None, lo, back).unwrap();
    let rotated = b.bitwise_or(uint, None, left, right).unwrap();
    b.ret_value(rotated).unwrap();
    b.end_function().unwrap();

    let gid = global_id_variable(&mut b);
    let seven = b.constant_bit32(uint, 7);
    let p = begin_kernel(&mut b, "rot", uint, 1);
    let i = global_id(&mut b, gid);
    let at = element(&mut b, uint, p[0], i);
    let v = b.load(uint, None, at, None, []).unwrap();
    let r = b.function_call(uint, None, fshl, [v, v, seven]).unwrap();
    b.store(at, r, None, []).unwrap();
    end_kernel(&mut b);

    let module = load(b);
    let code = kernel_code(&module, "rot");
    assert!(code.contains("Rotl32"), "no rotate:\n{code}");
    assert!(!code.contains("Shl32"), "the shifts are left:\n{code}");

    let input = [0x8000_0001u32, 0x1234_5678, 0, 0xFFFF_0000];
    let r = run(
        &module,
        "rot",
        4,
        2,
        vec![bytes_of(&input, u32::to_le_bytes)],
    );
    let expected: Vec<u32> = input.iter().map(|v| v.rotate_left(7)).collect();
    assert_eq!(words(&r.buffers[0].bytes), expected);
    assert_eq!(lanes(&r, "llvm.fshl", "uint"), 4);
    // The emulation's own operations are not counted.
    for hidden in ["OpUMod", "OpISub", "OpShiftLeftLogical", "OpFunctionCall"] {
        assert_eq!(r.counts.lanes_of(hidden), 0, "{hidden}");
    }
    for base in ["OpShiftLeftLogical", "OpShiftRightLogical", "OpBitwiseOr"] {
        assert!(r
            .counts
            .work
            .iter()
            .any(|(key, n)| key.op == base && key.ty == UINT && key.arith && *n == 4));
    }
    assert_eq!(work(&r, "OpUMod") + work(&r, "OpISub"), 0);
}

/// An instruction outside what is interpreted is an error that names it
/// and where it is, not a guess.
#[test]
fn an_unsupported_instruction_is_an_error_naming_it() {
    let mut b = opencl_builder();
    let uint = b.type_int(32, 0);
    let gid = global_id_variable(&mut b);
    let (one, two) = (b.constant_bit32(uint, 1), b.constant_bit32(uint, 2));
    let p = begin_kernel(&mut b, "bits", uint, 1);
    let i = global_id(&mut b, gid);
    let at = element(&mut b, uint, p[0], i);
    let v = b.load(uint, None, at, None, []).unwrap();
    let field = b.bit_field_u_extract(uint, None, v, one, two).unwrap();
    b.store(at, field, None, []).unwrap();
    end_kernel(&mut b);

    let error = super::translate_checked(&load(b), "bits", false).unwrap_err();
    assert!(!error.malformed);
    assert_eq!(error.what, "instruction OpBitFieldUExtract");
    let site = error.site.unwrap();
    assert!(
        site.starts_with(&format!("OpBitFieldUExtract %{field} in function")),
        "{site}"
    );
}

/// The counting rules the translator asks: names, base operations and
/// the arithmetic flag.
#[test]
fn the_rules_name_what_each_instruction_counts() {
    use super::rules::{self, Amount, Work};
    use rspirv::spirv::{Op as S, OpenclStd100Op as X};
    let rule = |op: S| rules::instruction(rspirv::grammar::INSTRUCTION_TABLE.get(op));
    assert_eq!(
        rule(S::IAdd).map(|r| (r.name, r.work)),
        Some(("OpIAdd", Work::Own { arith: true }))
    );
    assert_eq!(
        rule(S::SConvert).map(|r| r.work),
        Some(Work::Own { arith: false })
    );
    assert_eq!(rule(S::ReturnValue).map(|r| r.name), Some("OpReturn"));
    assert_eq!(rule(S::Branch).map(|r| r.work), Some(Work::HistogramOnly));
    assert_eq!(rule(S::CompositeExtract), None);
    assert_eq!(rule(S::Load), None);
    assert_eq!(Space::Local.access_name(true), "OpStore local");

    let parts = |rule: rules::Rule, lanes: u64| match rule.work {
        Work::Base(parts) => parts.iter().map(|(n, a)| (*n, a.of(lanes))).collect(),
        _ => vec![],
    };
    assert_eq!(
        parts(rules::builtin(X::normalize, "normalize", false), 4),
        [("OpFMul", 8), ("OpFAdd", 3), ("rsqrt", 1)]
    );
    assert_eq!(
        parts(rules::builtin(X::u_clamp, "u_clamp", true), 2),
        [("u_max", 2), ("u_min", 2)]
    );
    assert_eq!(
        rules::builtin(X::exp, "exp", false).work,
        Work::Own { arith: true }
    );
    assert_eq!(Amount::LanesLess1.of(1), 0);
    assert_eq!(
        rules::funnel("spirv.llvm_fshr_i64").map(|r| r.name),
        Some("llvm.fshr")
    );
    assert_eq!(rules::funnel("fshl"), None);
}

/// `out[i] = (a[i] + a[j]) * a[i] - a[j]`, `j = (int)(uint)i ^ 1` widened
/// with its sign and `k` without: scalar float add, sub and mul, 32-to-64
/// widening and 64-to-32 cutting run as direct forms, with the results and counts of the
/// general ones.
#[test]
fn scalar_float_ops_and_widening_have_direct_forms() {
    let mut b = opencl_builder();
    let (uint, float) = (b.type_int(32, 0), b.type_float(32, None));
    let ulong = b.type_int(64, 0);
    let one = b.constant_bit32(uint, 1);
    let gid = global_id_variable(&mut b);
    let p = begin_kernel(&mut b, "mix", float, 2);
    let i = global_id(&mut b, gid);
    let narrow = b.u_convert(uint, None, i).unwrap();
    let flipped = b.bitwise_xor(uint, None, narrow, one).unwrap();
    let j = b.s_convert(ulong, None, flipped).unwrap();
    let k = b.u_convert(ulong, None, narrow).unwrap();
    let x = element(&mut b, float, p[0], k);
    let y = element(&mut b, float, p[0], j);
    let (x, y) = (
        b.load(float, None, x, None, []).unwrap(),
        b.load(float, None, y, None, []).unwrap(),
    );
    let sum = b.f_add(float, None, x, y).unwrap();
    let product = b.f_mul(float, None, sum, x).unwrap();
    let result = b.f_sub(float, None, product, y).unwrap();
    let out = element(&mut b, float, p[1], i);
    b.store(out, result, None, []).unwrap();
    end_kernel(&mut b);

    let module = load(b);
    let code = kernel_code(&module, "mix");
    for op in ["FAdd32", "FMul32", "FSub32", "ZExt32", "SExt32", "Trunc32"] {
        assert!(code.contains(op), "no {op}:\n{code}");
    }
    assert!(
        !code.contains("Float {") && !code.contains("Convert {"),
        "{code}"
    );
    let input = [1.5f32, -2.25, 1e30, 3.0e-39];
    let r = run(
        &module,
        "mix",
        4,
        4,
        vec![bytes_of(&input, f32::to_le_bytes), vec![0; 16]],
    );
    let expected: Vec<u32> = (0..4)
        .map(|i| {
            let (x, y) = (input[i], input[i ^ 1]);
            ((x + y) * x - y).to_bits()
        })
        .collect();
    assert_eq!(words(&r.buffers[1].bytes), expected);
    for op in ["OpFAdd", "OpFMul", "OpFSub"] {
        assert_eq!(lanes(&r, op, "float"), 4);
    }
    assert_eq!(lanes(&r, "OpSConvert", "long"), 4);
    assert_eq!(lanes(&r, "OpUConvert", "ulong"), 4);
    assert_eq!(lanes(&r, "OpUConvert", "uint"), 4);
}
