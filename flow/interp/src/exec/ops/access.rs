//! Loads, stores, copies and atomics: every access goes through `Mem`,
//! which counts, traces and checks it.

use super::*;

#[inline(always)]
pub(in crate::exec) fn run(
    m: &mut Machine<'_, '_>,
    rows: &mut Rows<'_>,
    at: usize,
    op: Op,
) -> Result<(), LaneFault> {
    match op {
        Op::CountAccess { ptr, bytes, store } => {
            m.mem.line = m.program.loc(at).line as usize;
            lanes!(rows, l => {
                m.mem.count(r!(rows, l, ptr), bytes as u64, store);
            })
        }
        // Scalar 32-bit global accesses, the commonest, go straight
        // to the word; anything else takes the general way, which
        // also reports what is wrong with an access.
        Op::Load { dst, ptr, size: 4, n: 1, align: 4 } => {
            m.mem.dispatch(at);
            count_gathers!(m, rows, at, ptr, 4, 1u8);
            let traced = trace_row!(m, rows, ptr, AccessKind::Load);
            lanes!(rows, l => {
                let p = r!(rows, l, ptr);
                if !traced {
                    m.mem.trace_pointer(p, 4, AccessKind::Load, m.local_id[l]);
                }
                r!(rows, l, dst) = match m.mem.global_word(p) {
                    Some((buffer, offset)) => buffer.read_word(offset) as u64,
                    None => {
                        let loc = m.mem.resolve(p, 4, 4).map_err(|kind| (at, l, kind))?;
                        m.mem.read(&m.private[l], loc, 0, 4)
                    }
                };
            })
        }
        Op::Store { src, ptr, size: 4, n: 1, align: 4 } => {
            m.mem.dispatch(at);
            count_gathers!(m, rows, at, ptr, 4, 1u8);
            let traced = trace_row!(m, rows, ptr, AccessKind::Store);
            lanes!(rows, l => {
                let (p, v) = (r!(rows, l, ptr), r!(rows, l, src));
                if !traced {
                    m.mem.trace_word_store(p, v, m.local_id[l]);
                }
                match m.mem.global_word(p) {
                    Some((buffer, offset)) => buffer.write_word(offset, v as u32),
                    None => {
                        let loc = m.mem.resolve(p, 4, 4).map_err(|kind| (at, l, kind))?;
                        m.mem.write(&mut m.private[l], loc, 0, 4, v);
                    }
                }
            })
        }
        Op::Load { dst, ptr, size, n, align } => {
            m.mem.dispatch(at);
            count_gathers!(m, rows, at, ptr, size as u64 * n as u64, n);
            lanes!(rows, l => {
                let loc = m.mem
                .access(r!(rows, l, ptr), size as u64 * n as u64, align as u64, AccessKind::Load, m.local_id[l])
                .map_err(|kind| (at, l, kind))?;
                for i in 0..n as u32 {
                    r!(rows, l, dst + i) =
                        m.mem.read(&m.private[l], loc, i as u64 * size as u64, size as u32);
                }
            })
        }
        Op::Store { src, ptr, size, n, align } => {
            m.mem.dispatch(at);
            count_gathers!(m, rows, at, ptr, size as u64 * n as u64, n);
            lanes!(rows, l => {
                let loc = m.mem
                .access(r!(rows, l, ptr), size as u64 * n as u64, align as u64, AccessKind::Store, m.local_id[l])
                .map_err(|kind| (at, l, kind))?;
                for i in 0..n as u32 {
                    let v = r!(rows, l, src + i);
                    m.mem.write(&mut m.private[l], loc, i as u64 * size as u64, size as u32, v);
                }
            })
        }
        Op::Atomic { op, bits, dst, ptr, a, b } => {
            m.mem.dispatch_atomic(at);
            let kind = match op {
                AtomicOp::Load => AccessKind::Load,
                AtomicOp::Store => AccessKind::Store,
                _ => AccessKind::Atomic,
            };
            let size = bits as u64 / 8;
            // A compare-exchange that fails writes nothing: it is traced
            // once its outcome is known, a failure as the atomic read it is.
            let exchange = op == AtomicOp::CompareExchange;
            lanes!(rows, l => {
                let p = r!(rows, l, ptr);
                let loc = if exchange {
                    m.mem.resolve(p, size, size)
                } else {
                    m.mem.access(p, size, size, kind, m.local_id[l])
                }
                .map_err(|kind| (at, l, kind))?;
                let old = m.mem.atomic(&mut m.private[l], loc, op, bits, r!(rows, l, a), r!(rows, l, b));
                if exchange {
                    let kind = if old == r!(rows, l, b) { AccessKind::Atomic } else { AccessKind::Load };
                    m.mem.trace_pointer(p, size, kind, m.local_id[l]);
                }
                r!(rows, l, dst) = old;
            })
        }
        _ => return run_composite(m, rows, at, op),
    }
    Ok(())
}

/// Aggregates, halves and copies: accesses of several parts.
#[inline(always)]
fn run_composite(
    m: &mut Machine<'_, '_>,
    rows: &mut Rows<'_>,
    at: usize,
    op: Op,
) -> Result<(), LaneFault> {
    match op {
        Op::LoadAgg { dst, ptr, layout } => {
            let leaves = &m.program.layouts[layout as usize];
            let span = span_of(leaves);
            m.mem.dispatch(at);
            lanes!(rows, l => {
                let loc = m.mem
                .access(r!(rows, l, ptr), span, 1, AccessKind::Load, m.local_id[l])
                .map_err(|kind| (at, l, kind))?;
                for (i, leaf) in leaves.iter().enumerate() {
                    r!(rows, l, dst + i as u32) =
                        m.mem.read(&m.private[l], loc, leaf.offset as u64, leaf.size as u32);
                }
            });
        }
        Op::StoreAgg { src, ptr, layout } => {
            let leaves = &m.program.layouts[layout as usize];
            let span = span_of(leaves);
            m.mem.dispatch(at);
            lanes!(rows, l => {
                let loc = m.mem
                .access(r!(rows, l, ptr), span, 1, AccessKind::Store, m.local_id[l])
                .map_err(|kind| (at, l, kind))?;
                for (i, leaf) in leaves.iter().enumerate() {
                    let v = r!(rows, l, src + i as u32);
                    m.mem.write(
                        &mut m.private[l],
                        loc,
                        leaf.offset as u64,
                        leaf.size as u32,
                        v,
                    );
                }
            });
        }
        Op::Copy { dst, src, bytes, bytes_reg } => {
            m.mem.dispatch(at);
            m.mem.line = m.program.loc(at).line as usize;
            lanes!(rows, l => {
                let bytes = match bytes_reg {
                    Some(reg) => {
                        let b = r!(rows, l, reg);
                        m.mem.count(r!(rows, l, src), b, false);
                        m.mem.count(r!(rows, l, dst), b, true);
                        b
                    }
                    None => bytes,
                };
                m.mem.trace_pointer(r!(rows, l, src), bytes, AccessKind::Load, m.local_id[l]);
                m.mem.trace_pointer(r!(rows, l, dst), bytes, AccessKind::Store, m.local_id[l]);
                m.mem.copy(&mut m.private[l], r!(rows, l, dst), r!(rows, l, src), bytes)
                    .map_err(|kind| (at, l, kind))?;
            })
        }
        Op::LoadHalf { dst, ptr, n } => {
            m.mem.dispatch(at);
            lanes!(rows, l => {
                let loc = m.mem
                .access(r!(rows, l, ptr), 2 * n as u64, 2, AccessKind::Load, m.local_id[l])
                .map_err(|kind| (at, l, kind))?;
                for i in 0..n as u32 {
                    let h = m.mem.read(&m.private[l], loc, 2 * i as u64, 2) as u16;
                    r!(rows, l, dst + i) = math::f16_to_f32(h).to_bits() as u64;
                }
            })
        }
        Op::StoreHalf { src, ptr, n, from, rounding } => {
            m.mem.dispatch(at);
            lanes!(rows, l => {
                let loc = m.mem
                .access(r!(rows, l, ptr), 2 * n as u64, 2, AccessKind::Store, m.local_id[l])
                .map_err(|kind| (at, l, kind))?;
                for i in 0..n as u32 {
                    let v = r!(rows, l, src + i);
                    let h = if from == 64 {
                        math::convert(ConvKind::FloatToFloat { rounding }, 64, 16, v)
                    } else {
                        math::f32_to_f16_rounded(f32::from_bits(v as u32), rounding) as u64
                    };
                    m.mem.write(&mut m.private[l], loc, 2 * i as u64, 2, h);
                }
            })
        }
        _ => unreachable!("`execute` sends only this family here"),
    }
    Ok(())
}

/// The bytes an aggregate of `leaves` spans: to its last leaf's end.
fn span_of(leaves: &[clflow_bytecode::layout::Leaf]) -> u64 {
    leaves
        .iter()
        .map(|l| l.offset as u64 + l.size as u64)
        .max()
        .unwrap_or(0)
}
