//! Superinstructions: the add-rotate-xor steps of hash functions (lookup3,
//! and the ARX family it belongs to: a value subtracted, xored with
//! another's rotation) fused into one op each, where the two values in
//! between are read nowhere else.
//!
//! The fused op takes the first of the three places and skips the other
//! two, which stay as they were: no pc moves, and each block's counts
//! (made before) are those of the three ops.

use clflow_bytecode::{Op, Operands, Reg, Tables};

/// Fuses what it can in `code`, in place.
pub(super) fn fuse(code: &mut [Op], tables: Tables<'_>) {
    let mentions = mentions(code, tables);
    // A value made by one op and read by one other: mentioned twice.
    let once = |r: Reg| mentions.get(r.index()) == Some(&2);
    for at in 0..code.len().saturating_sub(2) {
        if let Some(fused) = arx(&code[at..at + 3], once) {
            code[at] = fused;
        }
    }
}

/// How many times each register is named by an op (written or read).
fn mentions(code: &[Op], tables: Tables<'_>) -> Vec<u32> {
    let mut count = Vec::new();
    for op in code {
        for (first, n) in Operands::touched(op, tables) {
            let end = (first + n).index();
            if count.len() < end {
                count.resize(end, 0);
            }
            for c in &mut count[first.index()..end] {
                *c += 1;
            }
        }
    }
    count
}

/// `t = a - b; r = rotl(b, k); d = t ^ r` as `SubXorRotl32`, and
/// `t = a ^ b; r = rotl(b, k); d = t - r` (either xor operand rotated) as
/// `XorSubRotl32`, where `t` and `r` are read only there.
fn arx(three: &[Op], once: impl Fn(Reg) -> bool) -> Option<Op> {
    let [first, Op::Rotl32 { dst: r, a: rotated, b: k }, last] = *three else {
        return None;
    };
    let inner = |t: Reg, x: Reg, y: Reg| {
        once(t) && once(r) && [x, y].contains(&t) && [x, y].contains(&r) && t != r
    };
    match (first, last) {
        (Op::Sub32 { dst: t, a, b }, Op::Xor { dst, a: x, b: y })
            if b == rotated && inner(t, x, y) =>
        {
            Some(Op::SubXorRotl32 { dst, a, b, k })
        }
        (Op::Xor { dst: t, a, b }, Op::Sub32 { dst, a: x, b: y })
            if x == t && y == r && inner(t, x, y) =>
        {
            let (a, b) = match rotated {
                _ if rotated == b => (a, b),
                _ if rotated == a => (b, a),
                _ => return None,
            };
            Some(Op::XorSubRotl32 { dst, a, b, k })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(n: u32) -> Reg {
        Reg::new(n)
    }

    #[test]
    fn arx_steps_fuse_where_their_middle_values_are_read_once() {
        let mix = [
            Op::Sub32 { dst: reg(3), a: reg(1), b: reg(2) },
            Op::Rotl32 { dst: reg(4), a: reg(2), b: reg(9) },
            Op::Xor { dst: reg(5), a: reg(3), b: reg(4) },
        ];
        let mut code = mix.to_vec();
        fuse(&mut code, Tables::default());
        assert!(
            matches!(code[0], Op::SubXorRotl32 { dst, a, b, k } if (dst, a, b, k) == (reg(5), reg(1), reg(2), reg(9)))
        );
        assert!(matches!(code[1], Op::Rotl32 { .. }), "the rest stays");
        // The difference read again: no fusion.
        let mut code = mix.to_vec();
        code.push(Op::Add32 { dst: reg(6), a: reg(3), b: reg(1) });
        fuse(&mut code, Tables::default());
        assert!(matches!(code[0], Op::Sub32 { .. }));
        // lookup3's final: c ^= b; c -= rot(b, k), the xor's operands either way.
        for (x, y) in [(reg(1), reg(2)), (reg(2), reg(1))] {
            let mut code = vec![
                Op::Xor { dst: reg(3), a: x, b: y },
                Op::Rotl32 { dst: reg(4), a: reg(2), b: reg(9) },
                Op::Sub32 { dst: reg(5), a: reg(3), b: reg(4) },
            ];
            fuse(&mut code, Tables::default());
            assert!(
                matches!(code[0], Op::XorSubRotl32 { dst, a, b, k } if (dst, a, b, k) == (reg(5), reg(1), reg(2), reg(9)))
            );
        }
        // A subtraction the other way round is not the step.
        let mut code = vec![
            Op::Xor { dst: reg(3), a: reg(1), b: reg(2) },
            Op::Rotl32 { dst: reg(4), a: reg(2), b: reg(9) },
            Op::Sub32 { dst: reg(5), a: reg(4), b: reg(3) },
        ];
        fuse(&mut code, Tables::default());
        assert!(matches!(code[0], Op::Xor { .. }));
    }
}
