//! What concerns the whole work-group: collectives, async copies and
//! their events, work-item ids; and `--detect aggregates`' index check.

use super::*;

#[inline(always)]
pub(in crate::exec) fn run(
    m: &mut Machine<'_, '_>,
    rows: &mut Rows<'_>,
    at: usize,
    op: Op,
) -> Result<(), LaneFault> {
    match op {
        Op::Collective { dst, src, index, op, bits, sub } => {
            // It follows a barrier: every work-item of the group
            // is here, at once.
            let g = &m.launch.geometry;
            let stopped = m.state[..m.batch_len]
                .iter()
                .filter(|&&s| s == LaneState::Stopped)
                .count();
            let items = g.group_items(m.group) as usize - stopped;
            if rows.active.len() != items {
                return Err((
                    at,
                    rows.active[0] as usize,
                    TrapKind::BarrierDivergence(format!(
                        "{} of the work-group's {items} work-items reach this work-group function together",
                        rows.active.len()
                    )),
                ));
            }
            let mut members: Vec<(u64, usize)> = rows
                .active
                .iter()
                .map(|&l| {
                    (
                        g.local_linear_id(m.group, m.local_id[l as usize]),
                        l as usize,
                    )
                })
                .collect();
            members.sort_unstable();
            let size = if sub { g.sub_group as usize } else { items };
            for set in members.chunks(size.max(1)) {
                let values: Vec<u64> = set.iter().map(|&(_, l)| r!(rows, l, src)).collect();
                let indices: Vec<u64> = set.iter().map(|&(_, l)| r!(rows, l, index)).collect();
                let results = collective::combine(op, bits, &values, &indices)
                    .map_err(|kind| (at, set[0].1, kind))?;
                for (&(_, l), value) in set.iter().zip(results) {
                    r!(rows, l, dst) = value;
                }
            }
        }
        Op::GroupCopy { dst, src, elems, stride, elem, event, out } => {
            // Every work-item passes the same arguments: the first
            // of the group makes the copy for all.
            let first = rows.active[0] as usize;
            let args = [dst, src, elems, stride, event];
            let want = args.map(|a| r!(rows, first, a));
            for &lane in rows.active {
                let l = lane as usize;
                if let Some(i) = events::differs(&want, &args.map(|a| r!(rows, l, a))) {
                    let name = |l: usize| {
                        let [x, y, z] = m.launch.geometry.global_id(m.group, m.local_id[l]);
                        format!("({x},{y},{z})")
                    };
                    return Err((
                        at,
                        l,
                        TrapKind::Collective(format!(
                            "async_work_group_copy: this work-item passes another {} \
                             than work-item {} does; every work-item of the group must \
                             pass the same arguments",
                            events::COPY_ARGUMENTS[i],
                            name(first)
                        )),
                    ));
                }
            }
            let copied = m.events.copy(at, want[4]);
            m.mem.dispatch(at);
            m.mem.line = m.program.loc(at).line as usize;
            lanes!(rows, l => {
                if m.local_id[l] == [0, 0, 0] {
                    let (count, stride) = (r!(rows, l, elems), r!(rows, l, stride).max(1));
                    // Strided copies gather from (local→global: scatter to) every stride-th element.
                    let (dst, src) = (r!(rows, l, dst), r!(rows, l, src));
                    let local_dst = memory::decode(dst).0 == SPACE_LOCAL;
                    for i in 0..count {
                        let far = i * stride * elem as u64;
                        let near = i * elem as u64;
                        let (d, s) = if local_dst {
                            (dst.wrapping_add(near), src.wrapping_add(far))
                        } else {
                            (dst.wrapping_add(far), src.wrapping_add(near))
                        };
                        m.mem.count(s, elem as u64, false);
                        m.mem.count(d, elem as u64, true);
                        m.mem.trace_pointer(s, elem as u64, AccessKind::Load, m.local_id[l]);
                        m.mem.trace_pointer(d, elem as u64, AccessKind::Store, m.local_id[l]);
                        if let Err(kind) = m.mem.copy(&mut m.private[l], d, s, elem as u64) {
                            // Not made: the fault is the copy's, not a wait's.
                            m.events.forget(copied);
                            return Err((at, l, kind));
                        }
                    }
                }
                r!(rows, l, out) = copied;
            })
        }
        Op::CheckIndex { index, bits, len, array } => lanes!(rows, l => {
            let i = math::sext(r!(rows, l, index), bits);
            if !(0..len as i64).contains(&i) {
                let array = m.program.arrays[array as usize].clone();
                return Err((at, l, TrapKind::IndexOutOfBounds { index: i, array }));
            }
        }),
        Op::WaitEvents { num, list } => {
            // After its barrier: the group's work-items are all here.
            let first = rows.active[0] as usize;
            let mut want = Vec::new();
            for &lane in rows.active {
                let l = lane as usize;
                let n = r!(rows, l, num);
                let loc = m
                    .mem
                    .resolve(r!(rows, l, list), n.saturating_mul(8), 8)
                    .map_err(|kind| (at, l, kind))?;
                let waits: Vec<u64> = (0..n)
                    .map(|i| m.mem.read(&m.private[l], loc, 8 * i, 8))
                    .collect();
                if l == first {
                    want = waits;
                } else if waits != want {
                    let [x, y, z] = m.launch.geometry.global_id(m.group, m.local_id[first]);
                    return Err((
                        at,
                        l,
                        TrapKind::Collective(format!(
                            "wait_group_events: this work-item waits for other events \
                             than work-item ({x},{y},{z}) does; every work-item of the \
                             group must wait for the same"
                        )),
                    ));
                }
            }
            for event in want {
                if !m.events.wait(event) {
                    return Err((
                        at,
                        first,
                        TrapKind::Collective(format!(
                            "wait_group_events: waits for an event no async copy of this \
                             work-group returned ({event:#x}); wait for the events \
                             async_work_group_copy returns"
                        )),
                    ));
                }
            }
        }
        Op::Builtin { which: Builtin::GlobalId, dst, lanes, bits } => {
            // The work-group's origin once, each lane's local id on it.
            let origin = m.launch.geometry.global_id(m.group, [0; 3]);
            lanes!(rows, l => {
                for i in 0..lanes.min(3) as u32 {
                    let d = i as usize;
                    r!(rows, l, dst + i) = (origin[d] + m.local_id[l][d]) & math::mask(bits);
                }
            });
        }
        Op::Builtin { which, dst, lanes, bits } => {
            let g = &m.launch.geometry;
            lanes!(rows, l => {
                let v = builtin(g, which, m.group, m.local_id[l]);
                for i in 0..lanes.min(3) as u32 {
                    r!(rows, l, dst + i) = v[i as usize] & math::mask(bits);
                }
            });
        }
        _ => unreachable!("`execute` sends only this family here"),
    }
    Ok(())
}
