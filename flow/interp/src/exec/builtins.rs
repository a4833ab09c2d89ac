//! The work-item builtins and the geometric builtins, one work-item's
//! value at a time.

use super::Geometry;
use crate::opencl_std as math;
use clflow_bytecode::{Builtin, Geometric};

/// The value of a work-item builtin, for all three dimensions.
pub(super) fn builtin(g: &Geometry, which: Builtin, group: [u64; 3], lid: [u64; 3]) -> [u64; 3] {
    let gid = g.global_id(group, lid);
    match which {
        Builtin::GlobalId => gid,
        Builtin::LocalId => lid,
        Builtin::GroupId => group,
        Builtin::GlobalSize => g.global,
        Builtin::LocalSize => g.local_size_of(group),
        Builtin::EnqueuedLocalSize => g.local,
        Builtin::NumGroups => g.groups,
        Builtin::GlobalOffset => g.offset,
        Builtin::WorkDim => [g.dims as u64; 3],
        Builtin::GlobalLinearId => {
            let [x, y, z] = std::array::from_fn::<u64, 3, _>(|d| gid[d] - g.offset[d]);
            [(z * g.global[1] + y) * g.global[0] + x; 3]
        }
        Builtin::LocalLinearId => [g.local_linear_id(group, lid); 3],
        Builtin::SubGroupSize => {
            let (first, items) = (
                g.local_linear_id(group, lid) / g.sub_group * g.sub_group,
                g.group_items(group),
            );
            [g.sub_group.min(items - first); 3]
        }
        Builtin::SubGroupMaxSize => [g.sub_group.min(g.local.iter().product()); 3],
        Builtin::NumSubGroups => [g.group_items(group).div_ceil(g.sub_group); 3],
        Builtin::EnqueuedNumSubGroups => [g.local.iter().product::<u64>().div_ceil(g.sub_group); 3],
        Builtin::SubGroupId => [g.local_linear_id(group, lid) / g.sub_group; 3],
        Builtin::SubGroupLocalId => [g.local_linear_id(group, lid) % g.sub_group; 3],
    }
}

/// A geometric builtin on one work-item's operands; returns how many lanes
/// of `out` it wrote.
pub(super) fn geometric(
    op: Geometric,
    bits: u8,
    a: &[u64],
    b: &[u64],
    out: &mut [u64; 16],
) -> usize {
    let f = |v: &[u64], i: usize| math::to_f64(bits, v[i]);
    let n = a.len();
    let dot = |x: &[u64], y: &[u64]| (0..n).map(|i| f(x, i) * f(y, i)).sum::<f64>();
    match op {
        Geometric::Dot => out[0] = math::from_f64(bits, dot(a, b)),
        Geometric::Length => out[0] = math::from_f64(bits, dot(a, a).sqrt()),
        Geometric::Distance => {
            let d: f64 = (0..n).map(|i| (f(a, i) - f(b, i)).powi(2)).sum();
            out[0] = math::from_f64(bits, d.sqrt());
        }
        Geometric::Normalize => {
            let len = dot(a, a).sqrt();
            for (i, o) in out[..n].iter_mut().enumerate() {
                let v = if len == 0.0 { f(a, i) } else { f(a, i) / len };
                *o = math::from_f64(bits, v);
            }
            return n;
        }
        Geometric::Cross => {
            let (x, y) = (|i| f(a, i), |i| f(b, i));
            let c = [
                x(1) * y(2) - x(2) * y(1),
                x(2) * y(0) - x(0) * y(2),
                x(0) * y(1) - x(1) * y(0),
            ];
            for (o, v) in out.iter_mut().zip(c) {
                *o = math::from_f64(bits, v);
            }
            // A 4-lane cross product has 0 in its last lane.
            out[3] = 0;
            return n;
        }
    }
    1
}
