//! Integer, comparison, logic and select ops, at any width and lane count.

use super::*;

#[inline(always)]
pub(in crate::exec) fn run(rows: &mut Rows<'_>, at: usize, op: Op) -> Result<(), LaneFault> {
    match op {
        Op::Int { op, bits, n, dst, a, b } => {
            for i in 0..n as u32 {
                let (d, x, y) = (dst + i, a + i, b + i);
                // The everyday 64-bit ops (a random generator's,
                // an index's) without a call a lane; `int_bin`'s
                // values.
                match (op, bits) {
                    (IntOp::Add, 64) => binary!(rows, d, x, y, u64::wrapping_add),
                    (IntOp::Sub, 64) => binary!(rows, d, x, y, u64::wrapping_sub),
                    (IntOp::Mul, 64) => binary!(rows, d, x, y, u64::wrapping_mul),
                    (IntOp::Shl, 64) => binary!(rows, d, x, y, |x, y| x << (y % 64)),
                    (IntOp::LShr, 64) => binary!(rows, d, x, y, |x, y| x >> (y % 64)),
                    (IntOp::AShr, 64) => {
                        binary!(rows, d, x, y, |x, y| ((x as i64) >> (y % 64)) as u64)
                    }
                    _ => {
                        lanes!(rows, l => r!(rows, l, d) = math::int_bin(op, bits, r!(rows, l, x), r!(rows, l, y))
                        .map_err(|kind| (at, l, kind))?)
                    }
                }
            }
        }
        Op::IntUn { op, bits, n, dst, a } => {
            for i in 0..n as u32 {
                lanes!(rows, l => r!(rows, l, dst + i) = math::int_un(op, bits, r!(rows, l, a + i)));
            }
        }
        Op::IntTer { op, bits, n, dst, a, b, c } => {
            for i in 0..n as u32 {
                lanes!(rows, l => r!(rows, l, dst + i) =
                    math::int_ter(op, bits, r!(rows, l, a + i), r!(rows, l, b + i), r!(rows, l, c + i)));
            }
        }
        Op::Upsample { bits, n, dst, a, b } => {
            for i in 0..n as u32 {
                lanes!(rows, l => r!(rows, l, dst + i) = (r!(rows, l, a + i) << bits) | r!(rows, l, b + i));
            }
        }
        Op::Cmp { op, bits, n, dst, a, b } => {
            for i in 0..n as u32 {
                lanes!(rows, l => r!(rows, l, dst + i) =
                    math::cmp(op, bits, r!(rows, l, a + i), r!(rows, l, b + i)) as u64);
            }
        }
        Op::Logic { op, n, dst, a, b } => {
            for i in 0..n as u32 {
                lanes!(rows, l => {
                    let (x, y) = (r!(rows, l, a + i) != 0, r!(rows, l, b + i) != 0);
                    r!(rows, l, dst + i) = match op {
                        LogicOp::And => x && y,
                        LogicOp::Or => x || y,
                        LogicOp::Eq => x == y,
                        LogicOp::Ne => x != y,
                    } as u64;
                });
            }
        }
        Op::LNot { n, dst, a } => {
            for i in 0..n as u32 {
                lanes!(rows, l => r!(rows, l, dst + i) = (r!(rows, l, a + i) == 0) as u64);
            }
        }
        Op::Select { n, vector_cond, dst, cond, a, b } => {
            for i in 0..n as u32 {
                let c = cond + if vector_cond { i } else { 0 };
                lanes!(rows, l => r!(rows, l, dst + i) =
                    if r!(rows, l, c) != 0 { r!(rows, l, a + i) } else { r!(rows, l, b + i) });
            }
        }
        Op::SelectMsb { n, bits, msb, dst, a, b, c } => {
            for i in 0..n as u32 {
                lanes!(rows, l => {
                    let cv = r!(rows, l, c + i);
                    let pick_b = if msb {
                        (cv >> (bits - 1)) & 1 == 1
                    } else {
                        cv != 0
                    };
                    r!(rows, l, dst + i) = if pick_b { r!(rows, l, b + i) } else { r!(rows, l, a + i) };
                });
            }
        }
        Op::AnyAll { all, n, dst, a } => lanes!(rows, l => {
            let mut set = 0;
            for i in 0..n as u32 {
                set += (r!(rows, l, a + i) != 0) as u32;
            }
            r!(rows, l, dst) = if all { set == n as u32 } else { set > 0 } as u64;
        }),
        _ => unreachable!("`execute` sends only this family here"),
    }
    Ok(())
}
