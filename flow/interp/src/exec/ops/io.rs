//! Images and printf: ops on the runtime's objects.

use super::*;

#[inline(always)]
pub(in crate::exec) fn run(
    m: &mut Machine<'_, '_>,
    rows: &mut Rows<'_>,
    at: usize,
    op: Op,
) -> Result<(), LaneFault> {
    match op {
        Op::ImageRead { dst, image, coord, sampler, form } => {
            m.mem.dispatch(at);
            m.mem.line = m.program.loc(at).line as usize;
            lanes!(rows, l => {
                let mut c = [0u64; 4];
                for (k, v) in c.iter_mut().enumerate().take(form.coord_n as usize) {
                    *v = r!(rows, l, coord + k as u32);
                }
                let texel = m.mem
                    .image_read(&m.private[l], r!(rows, l, image), r!(rows, l, sampler), c, form, m.local_id[l])
                    .map_err(|kind| (at, l, kind))?;
                if let Some(kind) = m.mem.undefined.take() {
                    m.undefined.push((at, l, kind));
                }
                for (k, v) in texel.into_iter().enumerate() {
                    r!(rows, l, dst + k as u32) = v;
                }
            })
        }
        Op::ImageWrite { image, coord, src, form } => {
            m.mem.dispatch(at);
            m.mem.line = m.program.loc(at).line as usize;
            lanes!(rows, l => {
                let mut c = [0u64; 4];
                for (k, v) in c.iter_mut().enumerate().take(form.coord_n as usize) {
                    *v = r!(rows, l, coord + k as u32);
                }
                let value = std::array::from_fn(|k| r!(rows, l, src + k as u32));
                m.mem.image_write(&mut m.private[l], r!(rows, l, image), c, value, form, m.local_id[l])
                    .map_err(|kind| (at, l, kind))?;
                if let Some(kind) = m.mem.undefined.take() {
                    m.undefined.push((at, l, kind));
                }
            })
        }
        Op::ImageQuery { dst, image, query, n, bits } => {
            lanes!(rows, l => {
                let out = m.mem
                    .image_query(r!(rows, l, image), query, n)
                    .map_err(|kind| (at, l, kind))?;
                for k in 0..n as usize {
                    r!(rows, l, dst + k as u32) = out.get(k).copied().unwrap_or(0) & math::mask(bits);
                }
            })
        }
        Op::Printf { dst, format, args_start, args_len } => {
            let args =
                &m.program.printf_args[args_start as usize..(args_start + args_len) as usize];
            let mut values = Vec::new();
            lanes!(rows, l => {
                values.clear();
                for a in args {
                    for i in 0..a.lanes as u32 {
                        values.push(r!(rows, l, a.reg + i));
                    }
                }
                printf::call(m.mem, r!(rows, l, format), args, &values, &mut m.printed[l])
                    .map_err(|e| (at, l, TrapKind::Printf(e)))?;
                r!(rows, l, dst) = 0;
            });
        }
        _ => unreachable!("`execute` sends only this family here"),
    }
    Ok(())
}
