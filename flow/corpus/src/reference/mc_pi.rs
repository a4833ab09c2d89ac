//! Monte Carlo pi with splitmix64.

use super::{exact, index};
use crate::args::Args;
use crate::{Case, CheckError, ExpectedOutput};
use clflow_core::{Launch, ScalarType};

const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// splitmix64 (Steele, Lea, Flood 2014), as the kernel's helper.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(GOLDEN_GAMMA);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The hits of work-item g: exact integer arithmetic, so exact output.
pub fn hits(seed: u64, samples: u32, g: u32) -> u32 {
    let mut state = seed.wrapping_add(u64::from(g).wrapping_mul(GOLDEN_GAMMA << 20));
    let mut inside = 0;
    for _ in 0..samples {
        let r = splitmix64(&mut state);
        let (x, y) = (r & 0x7fff_ffff, (r >> 32) & 0x7fff_ffff);
        if x * x + y * y < 1 << 62 {
            inside += 1;
        }
    }
    inside
}

pub fn expected(launch: &Launch) -> Result<Vec<ExpectedOutput>, CheckError> {
    let args = Args::new(Case::McPi, launch, 3)?;
    let seed = args.scalar::<u64>(0)?;
    let samples = args.scalar::<u32>(1)?;
    let ids = args.global_ids(0);
    let mut out = args.buffer_of_len::<u32>(2, ids.end, "one count per work-item")?;
    for g in ids {
        // The kernel keeps the id in a uint.
        out[index(g)] = hits(seed, samples, g as u32);
    }
    Ok(vec![exact(2, ScalarType::UInt, &out)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_its_published_first_outputs() {
        // Seed 1234567, as the reference implementation's test.
        let mut state = 1_234_567;
        let first: Vec<u64> = (0..3).map(|_| splitmix64(&mut state)).collect();
        assert_eq!(
            first,
            [
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423
            ]
        );
    }

    #[test]
    fn hits_estimate_pi() {
        let total: u32 = (0..64).map(|g| hits(42, 1000, g)).sum();
        let pi = 4.0 * f64::from(total) / 64_000.0;
        assert!((pi - std::f64::consts::PI).abs() < 0.03, "pi ~ {pi}");
    }
}
