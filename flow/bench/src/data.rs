//! Pseudo-random buffer contents.
//!
//! Memory systems that compress (many GPUs do) move predictable data
//! faster than real data, so bandwidth buffers are filled from a seeded PCG
//! generator. Floating-point values are drawn in [1, 2): random mantissas
//! under a fixed exponent, never a NaN, infinity or denormal that would slow
//! the arithmetic of scale and triad.

use crate::catalog::Lane;
use rand_pcg::rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// `bytes` bytes of pseudo-random `lane` values (rounded down to whole values).
pub fn random_bytes(lane: Lane, bytes: u64, seed: u64) -> Vec<u8> {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let mut out = vec![0u8; bytes as usize];
    match lane {
        Lane::Uint => rng.fill_bytes(&mut out),
        Lane::Float => fill_words(&mut out, &mut rng, |r| {
            (0x3F80_0000 | (r as u32 & 0x007F_FFFF)).to_le_bytes()
        }),
        Lane::Double => fill_words(&mut out, &mut rng, |r| {
            (0x3FF0_0000_0000_0000 | (r & 0x000F_FFFF_FFFF_FFFF)).to_le_bytes()
        }),
        Lane::Half => fill_words(&mut out, &mut rng, |r| {
            (0x3C00 | (r as u16 & 0x03FF)).to_le_bytes()
        }),
    }
    out
}

/// Fills `out` with values of N bytes, as many per 64-bit draw of the
/// generator as fit (`value` takes the draw shifted to each value's bits).
fn fill_words<const N: usize>(out: &mut [u8], rng: &mut Pcg64Mcg, value: impl Fn(u64) -> [u8; N]) {
    let per_draw = 8 / N;
    for group in out.chunks_mut(N * per_draw) {
        let draw = rng.next_u64();
        for (i, chunk) in group.chunks_exact_mut(N).enumerate() {
            chunk.copy_from_slice(&value(draw >> (i * N * 8)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_lie_in_one_to_two_and_differ() {
        let bytes = random_bytes(Lane::Float, 4096, 7);
        let values: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(values.len(), 1024);
        assert!(values.iter().all(|v| (1.0..2.0).contains(v)));
        let mut distinct = values.clone();
        distinct.sort_by(f32::total_cmp);
        distinct.dedup();
        assert!(distinct.len() > 1000, "{} distinct", distinct.len());
    }

    #[test]
    fn doubles_and_halves_stay_normal() {
        let doubles = random_bytes(Lane::Double, 800, 1);
        assert!(doubles
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .all(|v| (1.0..2.0).contains(&v)));
        let halves = random_bytes(Lane::Half, 200, 1);
        // Sign 0, exponent 15 (the bias): 1.0 <= value < 2.0.
        assert!(halves
            .chunks_exact(2)
            .all(|c| u16::from_le_bytes([c[0], c[1]]) >> 10 == 0b001111));
    }

    #[test]
    fn the_same_seed_gives_the_same_bytes() {
        assert_eq!(
            random_bytes(Lane::Uint, 64, 3),
            random_bytes(Lane::Uint, 64, 3)
        );
        assert_ne!(
            random_bytes(Lane::Uint, 64, 3),
            random_bytes(Lane::Uint, 64, 4)
        );
    }
}
