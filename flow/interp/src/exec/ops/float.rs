//! Float arithmetic, comparisons, tests and conversions.

use super::*;

#[inline(always)]
pub(in crate::exec) fn run(rows: &mut Rows<'_>, op: Op) {
    match op {
        Op::Float { op, bits, n, dst, a, b } => {
            for i in 0..n as u32 {
                let (d, x, y) = (dst + i, a + i, b + i);
                // Vectors' arithmetic, division, and double
                // precision's, without a call a lane; `float_bin`'s
                // values (its f32 arithmetic through f64 rounds the
                // same).
                let f64_op = |f: fn(f64, f64) -> f64| {
                    move |x: u64, y: u64| f(f64::from_bits(x), f64::from_bits(y)).to_bits()
                };
                match (op, bits) {
                    (FloatOp::Add, 32) => binary!(rows, d, x, y, f32_add),
                    (FloatOp::Sub, 32) => binary!(rows, d, x, y, f32_sub),
                    (FloatOp::Mul, 32) => binary!(rows, d, x, y, f32_mul),
                    (FloatOp::Div, 32) => binary!(rows, d, x, y, f32_div),
                    (FloatOp::Add, 64) => binary!(rows, d, x, y, f64_op(|x, y| x + y)),
                    (FloatOp::Sub, 64) => binary!(rows, d, x, y, f64_op(|x, y| x - y)),
                    (FloatOp::Mul, 64) => binary!(rows, d, x, y, f64_op(|x, y| x * y)),
                    (FloatOp::Div, 64) => binary!(rows, d, x, y, f64_op(|x, y| x / y)),
                    _ => {
                        lanes!(rows, l => r!(rows, l, d) = math::float_bin(op, bits, r!(rows, l, x), r!(rows, l, y)))
                    }
                }
            }
        }
        Op::FloatUn { op, bits, n, dst, a } => {
            for i in 0..n as u32 {
                let (d, x) = (dst + i, a + i);
                // Square roots without a call a lane: `float_un`'s
                // values, computed as it computes them.
                let f32_via_f64 = |f: fn(f64) -> f64| {
                    move |x: u64| (f(f32::from_bits(x as u32) as f64) as f32).to_bits() as u64
                };
                match (op, bits) {
                    (FloatUnOp::Sqrt, 32) => unary!(rows, d, x, f32_via_f64(f64::sqrt)),
                    (FloatUnOp::Rsqrt, 32) => unary!(rows, d, x, f32_via_f64(|x| 1.0 / x.sqrt())),
                    _ => {
                        lanes!(rows, l => r!(rows, l, d) = math::float_un(op, bits, r!(rows, l, x)))
                    }
                }
            }
        }
        Op::FloatTer { op, bits, n, dst, a, b, c } => {
            for i in 0..n as u32 {
                let starts = [dst + i, a + i, b + i, c + i].map(|r| Reg::index(r) * rows.width);
                if !(rows.dense
                    && op == FloatTerOp::Fma
                    && fma_rows(rows.regs, bits, rows.width, starts))
                {
                    lanes!(rows, l => r!(rows, l, dst + i) = math::float_ter(
                        op, bits, r!(rows, l, a + i), r!(rows, l, b + i), r!(rows, l, c + i)));
                }
            }
        }
        Op::FCmp { op, ordered, bits, n, dst, a, b } => {
            for i in 0..n as u32 {
                lanes!(rows, l => r!(rows, l, dst + i) =
                    math::fcmp(op, ordered, bits, r!(rows, l, a + i), r!(rows, l, b + i)) as u64);
            }
        }
        Op::FTest { op, bits, n, dst, a } => {
            for i in 0..n as u32 {
                lanes!(rows, l => r!(rows, l, dst + i) = math::ftest(op, bits, r!(rows, l, a + i)) as u64);
            }
        }
        Op::Convert { kind, from, to, n, dst, src } => {
            for i in 0..n as u32 {
                lanes!(rows, l => r!(rows, l, dst + i) = math::convert(kind, from, to, r!(rows, l, src + i)));
            }
        }
        _ => unreachable!("`execute` sends only this family here"),
    }
}
