//! Reinterpretations, dynamic lane access, geometric functions and pointers.

use super::*;

#[inline(always)]
pub(in crate::exec) fn run(m: &mut Machine<'_, '_>, rows: &mut Rows<'_>, op: Op) {
    match op {
        Op::Bitcast { from, from_n, to, to_n, dst, src } => lanes!(rows, l => {
            let mut bytes = [0u8; 128];
            let fsize = from as usize / 8;
            for i in 0..from_n as usize {
                bytes[i * fsize..(i + 1) * fsize]
                    .copy_from_slice(&r!(rows, l, src + i as u32).to_le_bytes()[..fsize]);
            }
            let tsize = to as usize / 8;
            for i in 0..to_n as usize {
                let mut w = [0u8; 8];
                w[..tsize].copy_from_slice(&bytes[i * tsize..(i + 1) * tsize]);
                r!(rows, l, dst + i as u32) = u64::from_le_bytes(w);
            }
        }),
        Op::ExtractDyn { dst, base, index, index_bits, n } => lanes!(rows, l => {
            let i = r!(rows, l, index) & math::mask(index_bits);
            // Out-of-range lanes are undefined in SPIR-V: read as 0.
            r!(rows, l, dst) = if i < n as u64 { r!(rows, l, base + i as u32) } else { 0 };
        }),
        Op::InsertDyn { dst, base, value, index, index_bits, n } => lanes!(rows, l => {
            let i = r!(rows, l, index) & math::mask(index_bits);
            let v = r!(rows, l, value);
            copy_rows(rows.regs, rows.width, &[l as u32], dst, base, n as u32);
            if i < n as u64 {
                r!(rows, l, dst + i as u32) = v;
            }
        }),
        Op::Geometric { op, bits, n, dst, a, b } => lanes!(rows, l => {
            let (mut x, mut y, mut out) = ([0u64; 16], [0u64; 16], [0u64; 16]);
            for i in 0..n as usize {
                x[i] = r!(rows, l, a + i as u32);
                y[i] = r!(rows, l, b + i as u32);
            }
            let produced = geometric(op, bits, &x[..n as usize], &y[..n as usize], &mut out);
            for (i, v) in out[..produced].iter().enumerate() {
                r!(rows, l, dst + i as u32) = *v;
            }
        }),
        Op::Ptr { dst, base, disp, terms_start, terms_len } => {
            let terms =
                &m.program.terms[terms_start as usize..terms_start as usize + terms_len as usize];
            lanes!(rows, l => {
                let mut p = r!(rows, l, base).wrapping_add(disp as u64);
                for t in terms {
                    p = p.wrapping_add(
                        (math::sext(r!(rows, l, t.reg), t.bits) as u64)
                            .wrapping_mul(t.stride as u64),
                    );
                }
                r!(rows, l, dst) = p;
            });
        }
        Op::PtrDiff { dst, a, b, elem } => lanes!(rows, l => r!(rows, l, dst) =
            ((r!(rows, l, a).wrapping_sub(r!(rows, l, b)) as i64) / elem as i64) as u64),
        Op::CastToSpace { dst, src, space } => lanes!(rows, l => {
            let p = r!(rows, l, src);
            r!(rows, l, dst) = if crate::memory::decode(p).0 == space as u64 { p } else { 0 };
        }),
        _ => unreachable!("`execute` sends only this family here"),
    }
}
