//! Moves and the scalar ops the translator makes direct (32-bit integer and
//! float arithmetic, widenings, address steps): the hottest, one op a lane.

use super::*;

#[inline(always)]
pub(in crate::exec) fn run(m: &mut Machine<'_, '_>, rows: &mut Rows<'_>, op: Op) {
    match op {
        Op::Mov { dst, src, n } => copy_rows(rows.regs, rows.width, rows.active, dst, src, n),
        Op::Moves { start, len } => {
            for mv in &m.program.moves[start as usize..(start + len) as usize] {
                copy_rows(rows.regs, rows.width, rows.active, mv.dst, mv.src, mv.n);
            }
        }
        Op::Splat { dst, src, n } => {
            for i in 0..n as u32 {
                lanes!(rows, l => r!(rows, l, dst + i) = r!(rows, l, src));
            }
        }
        Op::Add32 { dst, a, b } => {
            binary!(rows, dst, a, b, |x, y| (x as u32).wrapping_add(y as u32)
                as u64)
        }
        Op::Sub32 { dst, a, b } => {
            binary!(rows, dst, a, b, |x, y| (x as u32).wrapping_sub(y as u32)
                as u64)
        }
        Op::Mul32 { dst, a, b } => {
            binary!(rows, dst, a, b, |x, y| (x as u32).wrapping_mul(y as u32)
                as u64)
        }
        Op::Shl32 { dst, a, b } => {
            binary!(rows, dst, a, b, |x, y| ((x as u32) << (y % 32)) as u64)
        }
        Op::LShr32 { dst, a, b } => {
            binary!(rows, dst, a, b, |x, y| ((x as u32) >> (y % 32)) as u64)
        }
        Op::And { dst, a, b } => binary!(rows, dst, a, b, |x, y| x & y),
        Op::Or { dst, a, b } => binary!(rows, dst, a, b, |x, y| x | y),
        Op::Xor { dst, a, b } => binary!(rows, dst, a, b, |x, y| x ^ y),
        Op::Rotl32 { dst, a, b } => {
            binary!(
                rows,
                dst,
                a,
                b,
                |x, y| (x as u32).rotate_left(y as u32 % 32) as u64
            )
        }
        Op::FAdd32 { dst, a, b } => binary!(rows, dst, a, b, f32_add),
        Op::FSub32 { dst, a, b } => binary!(rows, dst, a, b, f32_sub),
        Op::FMul32 { dst, a, b } => binary!(rows, dst, a, b, f32_mul),
        Op::SExt32 { dst, src } => unary!(rows, dst, src, |x: u64| x as u32 as i32 as i64 as u64),
        Op::SubXorRotl32 { dst, a, b, k } => {
            lanes!(rows, l => {
                let (x, y) = (r!(rows, l, a) as u32, r!(rows, l, b) as u32);
                r!(rows, l, dst) = (x.wrapping_sub(y) ^ y.rotate_left(r!(rows, l, k) as u32 % 32)) as u64;
            });
        }
        Op::XorSubRotl32 { dst, a, b, k } => {
            lanes!(rows, l => {
                let (x, y) = (r!(rows, l, a) as u32, r!(rows, l, b) as u32);
                r!(rows, l, dst) = ((x ^ y).wrapping_sub(y.rotate_left(r!(rows, l, k) as u32 % 32))) as u64;
            });
        }
        Op::ZExt32 { dst, src } | Op::Trunc32 { dst, src } => {
            unary!(rows, dst, src, |x: u64| x as u32 as u64)
        }
        Op::Offset { dst, base, disp } => {
            unary!(rows, dst, base, |x: u64| x.wrapping_add(disp as u64))
        }
        Op::Index { dst, base, index, bits, stride, disp } => lanes!(rows, l => {
            let i = math::sext(r!(rows, l, index), bits) as u64;
            r!(rows, l, dst) = r!(rows, l, base)
                .wrapping_add(disp as i64 as u64)
                .wrapping_add(i.wrapping_mul(stride as i64 as u64));
        }),
        _ => unreachable!("`execute` sends only this family here"),
    }
}
