//! All-pairs n-body step.

use super::{index, FloatOutput, F32_UNIT};
use crate::args::Args;
use crate::{Case, CheckError, ExpectedOutput};
use clflow_core::Launch;

/// Floats in one body: pos (x, y, z, mass) and vel (x, y, z, unused).
const BODY_FLOATS: usize = 8;

/// Relative error of one interaction r m / d^3, in units of F32_UNIT:
/// r's subtraction 1, d^2's three fused steps 3 (halved by the square root
/// that follows, then cubed: 4.5), rsqrt at most 4 ulp = 8 (cubed: 24),
/// the three multiplies into the strength 3, the final r * strength 1.
/// About 34; 40 leaves room.
const INTERACTION_UNITS: f64 = 40.0;

/// Work-item i: a = sum_j m_j r_ij (|r_ij|^2 + softening2)^(-3/2), then
/// v' = mad(a, dt, v), p' = mad(v', dt, p). Bounds, per component:
/// a within (40 + n) F32_UNIT sum_j |term_j| (each term's own error, then
/// n recursive additions); each mad adds at most two roundings (fused or
/// not) of its operands' magnitude, and carries dt times the error before.
/// Mass is copied and vel.w is written as 0: both exact.
pub fn expected(launch: &Launch) -> Result<Vec<ExpectedOutput>, CheckError> {
    let args = Args::new(Case::Nbody, launch, 5)?;
    let bodies = args.buffer::<f32>(0)?;
    let count = bodies.len() / BODY_FLOATS;
    let n = args.scalar::<u32>(2)? as usize;
    let dt = f64::from(args.scalar::<f32>(3)?);
    let softening2 = f64::from(args.scalar::<f32>(4)?);
    if n == 0 || n > count {
        return Err(args.bad(2, format!("n = {n}, but the bodies buffer holds {count} bodies and the kernel needs at least one")));
    }
    let ids = args.global_ids(0);
    if ids.end > count as u64 {
        return Err(args.bad(
            0,
            format!(
                "holds {count} bodies but work-items reach body {}",
                ids.end - 1
            ),
        ));
    }
    let mut moved = FloatOutput::new(&args, 1)?;
    if (moved.len() as u64) < ids.end * BODY_FLOATS as u64 {
        return Err(args.bad(
            1,
            format!(
                "holds {} bodies but work-items reach body {}",
                moved.len() / BODY_FLOATS,
                ids.end - 1
            ),
        ));
    }
    let body = |j: usize| -> [f64; BODY_FLOATS] {
        std::array::from_fn(|k| f64::from(bodies[j * BODY_FLOATS + k]))
    };
    for i in ids.map(index) {
        let me = body(i);
        let mut acceleration = [0.0f64; 3];
        let mut magnitude = [0.0f64; 3];
        for j in 0..n {
            let other = body(j);
            let r: [f64; 3] = std::array::from_fn(|k| other[k] - me[k]);
            let distance2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + softening2;
            let strength = other[3] / (distance2 * distance2.sqrt());
            for k in 0..3 {
                acceleration[k] += r[k] * strength;
                magnitude[k] += (r[k] * strength).abs();
            }
        }
        let at = i * BODY_FLOATS;
        for k in 0..3 {
            let acceleration_error = (INTERACTION_UNITS + n as f64) * F32_UNIT * magnitude[k];
            let velocity = acceleration[k] * dt + me[4 + k];
            let velocity_error = dt.abs() * acceleration_error
                + 2.0 * F32_UNIT * ((acceleration[k] * dt).abs() + me[4 + k].abs());
            let position = velocity * dt + me[k];
            let position_error =
                dt.abs() * velocity_error + 2.0 * F32_UNIT * ((velocity * dt).abs() + me[k].abs());
            moved.set(at + k, position, position_error);
            moved.set(at + 4 + k, velocity, velocity_error);
        }
        moved.set(at + 3, me[3], 0.0);
        moved.set(at + 7, 0.0, 0.0);
    }
    Ok(vec![moved.finish()])
}
