//! One op at a time: what each op other than control flow computes, as
//! the interpreter computes it (see `exec`), on 64-bit register values.

use super::access::Touch;
use super::Emitter;
use crate::opencl_std as math;
use clflow_bytecode::{family, AtomicOp, Builtin, CmpOp, FloatTerOp, LogicOp, Op, Reg};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{F32, F64, I32, I64};
use cranelift_codegen::ir::{AtomicRmwOp, InstBuilder, MemFlags, Value};

impl Emitter<'_, '_> {
    /// Translates one op that is not control flow; returns the places it
    /// takes (a superinstruction stands for three).
    pub(super) fn op(&mut self, pc: usize, op: Op) -> usize {
        match op {
            Op::Block { block, steps } => self.block_op(pc, block, steps),
            family!(Fused) => {
                self.fused_op(op);
                return 3;
            }
            family!(Scalar) => self.scalar_op(op),
            family!(Int) => self.int_op(pc, op),
            family!(Float) => self.float_op(pc, op),
            family!(Vector) => self.vector_op(op),
            family!(Access) => self.access_op(pc, op),
            family!(Group) => self.group_op(pc, op),
            other => unreachable!("`compiles` admits only the ops translated here, not {other:?}"),
        }
        1
    }

    /// Moves and the 32-bit and address ops with direct forms.
    fn scalar_op(&mut self, op: Op) {
        match op {
            Op::Mov { dst, src, n } => self.copy(dst, src, n),
            Op::Moves { start, len } => self.moves(start, len),
            Op::Splat { dst, src, n } => {
                let v = self.get(src);
                for i in 0..n as u32 {
                    self.set(dst + i, v);
                }
            }
            Op::Add32 { dst, a, b } => self.int32(dst, a, b, |b, x, y| b.ins().iadd(x, y)),
            Op::Sub32 { dst, a, b } => self.int32(dst, a, b, |b, x, y| b.ins().isub(x, y)),
            Op::Mul32 { dst, a, b } => self.int32(dst, a, b, |b, x, y| b.ins().imul(x, y)),
            // 32-bit shifts and rotates take their amount modulo 32, as the
            // interpreter's do.
            Op::Shl32 { dst, a, b } => self.int32(dst, a, b, |b, x, y| b.ins().ishl(x, y)),
            Op::LShr32 { dst, a, b } => self.int32(dst, a, b, |b, x, y| b.ins().ushr(x, y)),
            Op::Rotl32 { dst, a, b } => self.int32(dst, a, b, |b, x, y| b.ins().rotl(x, y)),
            Op::And { dst, a, b } => {
                let (x, y) = (self.get(a), self.get(b));
                let v = self.b.ins().band(x, y);
                self.set(dst, v);
            }
            Op::Or { dst, a, b } => {
                let (x, y) = (self.get(a), self.get(b));
                let v = self.b.ins().bor(x, y);
                self.set(dst, v);
            }
            Op::Xor { dst, a, b } => {
                let (x, y) = (self.get(a), self.get(b));
                let v = self.b.ins().bxor(x, y);
                self.set(dst, v);
            }
            Op::FAdd32 { dst, a, b } => self.float32(dst, a, b, |b, x, y| b.ins().fadd(x, y)),
            Op::FSub32 { dst, a, b } => self.float32(dst, a, b, |b, x, y| b.ins().fsub(x, y)),
            Op::FMul32 { dst, a, b } => self.float32(dst, a, b, |b, x, y| b.ins().fmul(x, y)),
            Op::ZExt32 { dst, src } | Op::Trunc32 { dst, src } => {
                let v = self.get32(src);
                self.set32(dst, v);
            }
            Op::SExt32 { dst, src } => {
                let v = self.get32(src);
                let v = self.b.ins().sextend(I64, v);
                self.set(dst, v);
            }
            Op::Offset { dst, base, disp } => {
                let v = self.get(base);
                let v = self.b.ins().iadd_imm(v, disp);
                self.set(dst, v);
            }
            Op::Index { dst, base, index, bits, stride, disp } => {
                let i = self.get(index);
                let i = self.sext(i, bits);
                let scaled = self.b.ins().imul_imm(i, stride as i64);
                let v = self.get(base);
                let v = self.b.ins().iadd_imm(v, disp as i64);
                let v = self.b.ins().iadd(v, scaled);
                self.set(dst, v);
            }
            other => unreachable!("`compiles` admits only the ops translated here, not {other:?}"),
        }
    }

    /// A superinstruction: three ops in one.
    fn fused_op(&mut self, op: Op) {
        match op {
            Op::SubXorRotl32 { dst, a, b, k } => {
                let (x, y, k) = (self.get32(a), self.get32(b), self.get32(k));
                let difference = self.b.ins().isub(x, y);
                let rotated = self.b.ins().rotl(y, k);
                let v = self.b.ins().bxor(difference, rotated);
                self.set32(dst, v);
            }
            Op::XorSubRotl32 { dst, a, b, k } => {
                let (x, y, k) = (self.get32(a), self.get32(b), self.get32(k));
                let mixed = self.b.ins().bxor(x, y);
                let rotated = self.b.ins().rotl(y, k);
                let v = self.b.ins().isub(mixed, rotated);
                self.set32(dst, v);
            }
            other => unreachable!("`compiles` admits only the ops translated here, not {other:?}"),
        }
    }

    /// Integer, comparison, logic and select ops.
    fn int_op(&mut self, pc: usize, op: Op) {
        match op {
            Op::Cmp { op, bits, n, dst, a, b } => {
                for i in 0..n as u32 {
                    let (x, y) = (self.get(a + i), self.get(b + i));
                    let signed = matches!(op, CmpOp::SLt | CmpOp::SLe | CmpOp::SGt | CmpOp::SGe);
                    let (x, y) = if signed {
                        (self.sext(x, bits), self.sext(y, bits))
                    } else {
                        (x, y)
                    };
                    let v = self.b.ins().icmp(int_cc(op), x, y);
                    self.set_bool(dst + i, v);
                }
            }
            Op::Select { n, vector_cond, dst, cond, a, b } => {
                for i in 0..n as u32 {
                    let c = self.get(cond + if vector_cond { i } else { 0 });
                    let (x, y) = (self.get(a + i), self.get(b + i));
                    let v = self.b.ins().select(c, x, y);
                    self.set(dst + i, v);
                }
            }
            Op::Logic { op, n, dst, a, b } => {
                for i in 0..n as u32 {
                    let (x, y) = (self.get(a + i), self.get(b + i));
                    let x = self.b.ins().icmp_imm(IntCC::NotEqual, x, 0);
                    let y = self.b.ins().icmp_imm(IntCC::NotEqual, y, 0);
                    let v = match op {
                        LogicOp::And => self.b.ins().band(x, y),
                        LogicOp::Or => self.b.ins().bor(x, y),
                        LogicOp::Eq => self.b.ins().icmp(IntCC::Equal, x, y),
                        LogicOp::Ne => self.b.ins().icmp(IntCC::NotEqual, x, y),
                    };
                    self.set_bool(dst + i, v);
                }
            }
            Op::LNot { n, dst, a } => {
                for i in 0..n as u32 {
                    let x = self.get(a + i);
                    let v = self.b.ins().icmp_imm(IntCC::Equal, x, 0);
                    self.set_bool(dst + i, v);
                }
            }
            Op::Int { n, dst, a, b, .. } => self.lanes(pc, n, dst, [Some(a), Some(b), None], true),
            Op::IntUn { n, dst, a, .. } => self.lanes(pc, n, dst, [Some(a), None, None], false),
            Op::IntTer { n, dst, a, b, c, .. } => {
                self.lanes(pc, n, dst, [Some(a), Some(b), Some(c)], false)
            }
            other => unreachable!("`compiles` admits only the ops translated here, not {other:?}"),
        }
    }

    /// Float ops and conversions; a fused multiply-add rounds once.
    fn float_op(&mut self, pc: usize, op: Op) {
        match op {
            Op::FloatUn { n, dst, a, .. } | Op::FTest { n, dst, a, .. } => {
                self.lanes(pc, n, dst, [Some(a), None, None], false)
            }
            Op::Convert { n, dst, src, .. } => {
                self.lanes(pc, n, dst, [Some(src), None, None], false)
            }
            // A fused multiply-add rounds once, here as in the interpreter
            // (`mul_add`) at both widths.
            Op::FloatTer { op: FloatTerOp::Fma, bits: bits @ (32 | 64), n, dst, a, b, c } => {
                for i in 0..n as u32 {
                    let (ty, int) = if bits == 32 { (F32, I32) } else { (F64, I64) };
                    let flags = MemFlags::new();
                    let mut operand = |r: Reg| {
                        let v = self.get(r + i);
                        let v = if bits == 32 {
                            self.b.ins().ireduce(I32, v)
                        } else {
                            v
                        };
                        self.b.ins().bitcast(ty, flags, v)
                    };
                    let (x, y, z) = (operand(a), operand(b), operand(c));
                    let v = self.b.ins().fma(x, y, z);
                    let v = self.b.ins().bitcast(int, flags, v);
                    let v = if bits == 32 {
                        self.b.ins().uextend(I64, v)
                    } else {
                        v
                    };
                    self.set(dst + i, v);
                }
            }
            Op::FloatTer { n, dst, a, b, c, .. } => {
                self.lanes(pc, n, dst, [Some(a), Some(b), Some(c)], false)
            }
            Op::Float { n, dst, a, b, .. } | Op::FCmp { n, dst, a, b, .. } => {
                self.lanes(pc, n, dst, [Some(a), Some(b), None], false)
            }
            other => unreachable!("`compiles` admits only the ops translated here, not {other:?}"),
        }
    }

    /// Pointer arithmetic.
    fn vector_op(&mut self, op: Op) {
        match op {
            Op::Ptr { dst, base, disp, terms_start, terms_len } => {
                let program = self.program;
                let terms =
                    &program.terms[terms_start as usize..terms_start as usize + terms_len as usize];
                let v = self.get(base);
                let mut p = self.b.ins().iadd_imm(v, disp);
                for t in terms {
                    let i = self.get(t.reg);
                    let i = self.sext(i, t.bits);
                    let scaled = self.b.ins().imul_imm(i, t.stride);
                    p = self.b.ins().iadd(p, scaled);
                }
                self.set(dst, p);
            }
            other => unreachable!("`compiles` admits only the ops translated here, not {other:?}"),
        }
    }

    /// Loads, stores and atomics on global memory.
    fn access_op(&mut self, pc: usize, op: Op) {
        match op {
            Op::Load { dst, ptr, size, n, align } => {
                let address = self.access(pc, ptr, size, n, align, Touch::Read);
                for i in 0..n as u32 {
                    let at = i as i64 * size as i64;
                    let flags = MemFlags::trusted();
                    let at = at as i32;
                    let v = match size {
                        1 => self.b.ins().uload8(I64, flags, address, at),
                        2 => self.b.ins().uload16(I64, flags, address, at),
                        4 => self.b.ins().uload32(flags, address, at),
                        _ => self.b.ins().load(I64, flags, address, at),
                    };
                    self.set(dst + i, v);
                }
            }
            Op::Store { src, ptr, size, n, align } => {
                let address = self.access(pc, ptr, size, n, align, Touch::Write);
                for i in 0..n as u32 {
                    let at = i as i64 * size as i64;
                    let v = self.get(src + i);
                    let flags = MemFlags::trusted();
                    let at = at as i32;
                    match size {
                        1 => self.b.ins().istore8(flags, v, address, at),
                        2 => self.b.ins().istore16(flags, v, address, at),
                        4 => self.b.ins().istore32(flags, v, address, at),
                        _ => self.b.ins().store(flags, v, address, at),
                    };
                }
            }
            Op::Atomic { op, ptr, a, .. } => {
                let Some((rmw, operand)) = rmw(op) else {
                    unreachable!("`compiles` admits only read-modify-writes")
                };
                let address = self.access(pc, ptr, 4, 1, 4, Touch::Both);
                let v = match operand {
                    Some(k) => self.b.ins().iconst(I32, k),
                    None => self.get32(a),
                };
                self.b
                    .ins()
                    .atomic_rmw(I32, MemFlags::trusted(), rmw, address, v);
            }

            other => unreachable!("`compiles` admits only the ops translated here, not {other:?}"),
        }
    }

    /// Work-item builtins: the ids from the ids block, the rest by `helpers::eval`.
    fn group_op(&mut self, pc: usize, op: Op) {
        match op {
            Op::Builtin { which, dst, lanes, bits } => {
                let at = match which {
                    Builtin::GlobalId => Some(0),
                    Builtin::LocalId => Some(3),
                    Builtin::GroupId => Some(6),
                    _ => None,
                };
                for i in 0..lanes.min(3) as u32 {
                    let v = match at {
                        Some(at) => {
                            let offset = 8 * (at + i as i32);
                            let v = self
                                .b
                                .ins()
                                .load(I64, MemFlags::trusted(), self.ids, offset);
                            self.b.ins().band_imm(v, math::mask(bits) as i64)
                        }
                        None => self.eval(pc, i, [None; 3], false),
                    };
                    self.set(dst + i, v);
                }
            }
            other => unreachable!("`compiles` admits only the ops translated here, not {other:?}"),
        }
    }

    /// `n` lanes of the op at `pc` by `helpers::eval`.
    fn lanes(&mut self, pc: usize, n: u8, dst: Reg, operands: [Option<Reg>; 3], fallible: bool) {
        for i in 0..n as u32 {
            let v = self.eval(pc, i, operands, fallible);
            self.set(dst + i, v);
        }
    }

    /// Counts a block's run and charges its steps against the limit.
    fn block_op(&mut self, pc: usize, block: u32, steps: u32) {
        let flags = MemFlags::trusted();
        let at = 8 * block as i32;
        let hits = self.b.ins().load(I64, flags, self.hits, at);
        let hits = self.b.ins().iadd_imm(hits, 1);
        self.b.ins().store(flags, hits, self.hits, at);
        let run = self.b.use_var(self.steps);
        let run = self.b.ins().iadd_imm(run, steps as i64);
        self.b.def_var(self.steps, run);
        let over = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedGreaterThan, run, self.max_steps as i64);
        let zero = self.b.ins().iconst(I64, 0);
        // A step limit is a fault of no bytes.
        self.check(over, pc, [zero, zero, zero]);
    }

    /// `bits`-wide `v` sign-extended to 64 bits.
    fn sext(&mut self, v: Value, bits: u8) -> Value {
        if bits >= 64 {
            return v;
        }
        let shift = 64 - bits as i64;
        let v = self.b.ins().ishl_imm(v, shift);
        self.b.ins().sshr_imm(v, shift)
    }
}

/// The read-modify-write an atomic function makes, and the operand it
/// takes in place of its argument (`Inc` and `Dec` take none).
pub(in crate::exec::native) fn rmw(op: AtomicOp) -> Option<(AtomicRmwOp, Option<i64>)> {
    Some(match op {
        AtomicOp::Inc => (AtomicRmwOp::Add, Some(1)),
        AtomicOp::Dec => (AtomicRmwOp::Sub, Some(1)),
        AtomicOp::Add => (AtomicRmwOp::Add, None),
        AtomicOp::Sub => (AtomicRmwOp::Sub, None),
        AtomicOp::SMin => (AtomicRmwOp::Smin, None),
        AtomicOp::UMin => (AtomicRmwOp::Umin, None),
        AtomicOp::SMax => (AtomicRmwOp::Smax, None),
        AtomicOp::UMax => (AtomicRmwOp::Umax, None),
        AtomicOp::And => (AtomicRmwOp::And, None),
        AtomicOp::Or => (AtomicRmwOp::Or, None),
        AtomicOp::Xor => (AtomicRmwOp::Xor, None),
        AtomicOp::Load | AtomicOp::Store | AtomicOp::Exchange | AtomicOp::CompareExchange => {
            return None
        }
    })
}

fn int_cc(op: CmpOp) -> IntCC {
    match op {
        CmpOp::Eq => IntCC::Equal,
        CmpOp::Ne => IntCC::NotEqual,
        CmpOp::ULt => IntCC::UnsignedLessThan,
        CmpOp::ULe => IntCC::UnsignedLessThanOrEqual,
        CmpOp::UGt => IntCC::UnsignedGreaterThan,
        CmpOp::UGe => IntCC::UnsignedGreaterThanOrEqual,
        CmpOp::SLt => IntCC::SignedLessThan,
        CmpOp::SLe => IntCC::SignedLessThanOrEqual,
        CmpOp::SGt => IntCC::SignedGreaterThan,
        CmpOp::SGe => IntCC::SignedGreaterThanOrEqual,
    }
}
