//! Buffer initialisers and the bytes they produce.
//!
//! Every initialiser writes its buffer straight into one allocation of the
//! final size: the paper-scale inputs run to hundreds of megabytes.

use crate::npy;
use crate::number::{push_scalar, Number};
use clflow_core::ElementType;
use rand_core::Rng;
use rand_pcg::Pcg64;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

/// The PCG stream every `random` initialiser draws from: the default stream
/// of the PCG reference implementation.
pub const RANDOM_STREAM: u128 = 0x0a02_bdbf_7bb3_c0a7_ac28_fa16_a64a_bf96;

/// How a buffer's contents are made.
#[derive(Debug, Clone, PartialEq)]
pub enum Initialiser {
    /// All bytes zero (no initialiser).
    Zeros,
    /// Every element holds these bytes (one element's worth).
    Fill { element: Vec<u8> },
    /// Lane k (counting lanes in memory order, padding lanes excluded) holds
    /// `start + k·step`. Integers are exact; floats are computed in f64 and
    /// rounded once, as `numpy.arange` does, unless `accumulate` is set: then
    /// each value is the previous one plus `step`, added in the element's own
    /// precision, as Oclgrind's `.sim` `range=` computes it.
    Range {
        start: Number,
        step: Number,
        accumulate: bool,
    },
    /// Lanes drawn from PCG64 seeded with `seed` (see the crate docs for the
    /// exact mapping from draws to values).
    Random { min: Number, max: Number, seed: u64 },
    /// The contents of a file: raw little-endian bytes, or a `.npy` array.
    File {
        path: PathBuf,
        /// The path as the manifest wrote it, for messages.
        shown: String,
        layout: FileLayout,
    },
    /// Bytes given in the manifest itself (`.sim` inline data).
    Inline { bytes: Vec<u8> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileLayout {
    /// The file is the buffer's exact image.
    Raw,
    /// A `.npy` array: data from `data_offset`; `pad_to_four_lanes` when its
    /// last dimension is 3 and the buffer's 3-lane vectors take 4 lanes.
    Npy {
        data_offset: u64,
        pad_to_four_lanes: bool,
    },
}

/// Produces `count` elements of `ty` as `init` describes them.
pub(crate) fn generate(ty: ElementType, count: u64, init: &Initialiser) -> Result<Vec<u8>, String> {
    let total = count
        .checked_mul(ty.size_bytes() as u64)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| format!("{count} {ty} elements do not fit in memory"))?;
    if let Initialiser::File { path, shown, layout } = init {
        return read_file(path, *layout, total, ty.scalar.size_bytes())
            .map_err(|why| format!("file {shown}: {why}"));
    }
    let mut out = allocate(total)?;
    match init {
        Initialiser::Zeros => out.resize(total, 0),
        Initialiser::Fill { element } => {
            for _ in 0..count {
                out.extend_from_slice(element);
            }
        }
        Initialiser::Inline { bytes } => out.extend_from_slice(bytes),
        Initialiser::Range { start, step, accumulate } => by_lane(
            ty,
            count,
            &mut out,
            range_lanes(ty, *start, *step, *accumulate),
        ),
        Initialiser::Random { min, max, seed } => {
            let mut draw = RandomLanes::new(*seed, *min, *max);
            by_lane(ty, count, &mut out, move || draw.next());
        }
        Initialiser::File { .. } => unreachable!("files are read above"),
    }
    Ok(out)
}

/// An empty vector with room for exactly `total` bytes, or a message
/// (rather than an abort) when the machine has not got them.
fn allocate(total: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    out.try_reserve_exact(total)
        .map_err(|_| format!("{total} bytes cannot be allocated"))?;
    huge_pages(&mut out);
    Ok(out)
}

/// Asks the kernel to back a large buffer with huge pages where it allows
/// them on request: filling hundreds of megabytes then takes a page fault
/// per 2 MiB, not per 4 KiB (a count of lookup3's 330 MB of keys spent
/// more time faulting in its inputs than running the kernel). Only a hint:
/// where it is refused, nothing changes.
fn huge_pages(buffer: &mut Vec<u8>) {
    const HUGE: usize = 2 << 20;
    #[cfg(target_os = "linux")]
    if buffer.capacity() >= 4 * HUGE {
        let start = buffer.as_mut_ptr() as usize;
        let first = start.next_multiple_of(HUGE);
        let end = (start + buffer.capacity()) / HUGE * HUGE;
        // SAFETY: [first, end) lies inside the vector's allocation, which
        // this process owns; MADV_HUGEPAGE changes how it is backed, never
        // its contents.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
}

/// Appends `count` elements, asking `next` for each value lane in turn.
fn by_lane(ty: ElementType, count: u64, out: &mut Vec<u8>, mut next: impl FnMut() -> Number) {
    let padding = ty.size_bytes() - ty.lanes as usize * ty.scalar.size_bytes();
    for _ in 0..count {
        for _ in 0..ty.lanes {
            push_scalar(ty.scalar, next(), out);
        }
        out.resize(out.len() + padding, 0);
    }
}

fn range_lanes(
    ty: ElementType,
    start: Number,
    step: Number,
    accumulate: bool,
) -> impl FnMut() -> Number {
    // A u64 count and the bounds as floats once: an i128's conversion to
    // f64 is a call, which took a fifth of a large float range's count.
    let mut index: u64 = 0;
    let (start_f, step_f) = (start.as_f64(), step.as_f64());
    // The running value for `accumulate`, kept in the element's precision.
    let mut running = start_f;
    let single = ty.scalar == clflow_core::ScalarType::Float;
    move || {
        let value = match (start, step) {
            (Number::Int(start), Number::Int(step)) => Number::Int(start + index as i128 * step),
            _ if accumulate => {
                let value = running;
                running = if single {
                    (running as f32 + step_f as f32) as f64
                } else {
                    running + step_f
                };
                Number::Float(value)
            }
            _ => Number::Float(start_f + index as f64 * step_f),
        };
        index += 1;
        value
    }
}

/// Uniform lanes from PCG64. Integers in `[min, max]` by rejection (no
/// modulo bias); floats as `min + u·(max − min)` with `u` the top 53 bits of
/// a draw over 2⁵³.
pub(crate) struct RandomLanes {
    rng: Pcg64,
    min: Number,
    max: Number,
}

impl RandomLanes {
    pub(crate) fn new(seed: u64, min: Number, max: Number) -> Self {
        RandomLanes { rng: Pcg64::new(seed as u128, RANDOM_STREAM), min, max }
    }

    pub(crate) fn next(&mut self) -> Number {
        match (self.min, self.max) {
            (Number::Int(min), Number::Int(max)) => {
                let span = (max - min + 1) as u128;
                if span > u64::MAX as u128 {
                    return Number::Int(min + self.rng.next_u64() as i128);
                }
                // Reject the top partial copy of [0, span) so every value is equally likely.
                let zone = (1u128 << 64) - (1u128 << 64) % span;
                loop {
                    let draw = self.rng.next_u64() as u128;
                    if draw < zone {
                        return Number::Int(min + (draw % span) as i128);
                    }
                }
            }
            (Number::Float(min), Number::Float(max)) => {
                let unit = (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
                Number::Float(min + unit * (max - min))
            }
            (min, max) => {
                let unit = (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
                Number::Float(min.as_f64() + unit * (max.as_f64() - min.as_f64()))
            }
        }
    }
}

fn read_file(
    path: &PathBuf,
    layout: FileLayout,
    total: usize,
    lane: usize,
) -> Result<Vec<u8>, String> {
    if layout == FileLayout::Raw && crate::data_file::is_compressed(path) {
        let bytes = crate::data_file::read(path).map_err(|e| format!("cannot be read: {e}"))?;
        return match bytes.len() == total {
            true => Ok(bytes),
            false => Err(format!(
                "now holds {} bytes of data, not the {total} it held when the manifest was loaded",
                bytes.len()
            )),
        };
    }
    let mut file = File::open(path).map_err(|e| format!("cannot be opened: {e}"))?;
    let (offset, pad) = match layout {
        FileLayout::Raw => (0, false),
        FileLayout::Npy { data_offset, pad_to_four_lanes } => (data_offset, pad_to_four_lanes),
    };
    file.seek(SeekFrom::Start(offset))
        .map_err(|e| e.to_string())?;
    let stored = if pad { total / 4 * 3 } else { total };
    let mut bytes = allocate(stored)?;
    file.read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read: {e}"))?;
    if bytes.len() != stored {
        return Err(format!(
            "now holds {} bytes of data, not the {stored} it held when the manifest was loaded",
            bytes.len()
        ));
    }
    if !pad {
        return Ok(bytes);
    }
    // Three lanes on disk, four in the buffer: widen each element once.
    Ok(pad_three_lanes(&bytes, lane))
}

/// Widens packed 3-lane elements (lanes of `lane` bytes) to the 4-lane room
/// OpenCL gives them.
fn pad_three_lanes(packed: &[u8], lane: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(packed.len() / 3 * 4);
    for element in packed.chunks_exact(3 * lane) {
        out.extend_from_slice(element);
        out.resize(out.len() + lane, 0);
    }
    out
}

/// Reads a `.npy` header from `path` (for load-time checks).
pub(crate) fn npy_header(path: &PathBuf) -> Result<npy::NpyHeader, String> {
    let mut file = File::open(path).map_err(|e| format!("cannot be opened: {e}"))?;
    npy::read_header(&mut file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clflow_core::ScalarType;

    fn ty(text: &str) -> ElementType {
        text.parse().unwrap()
    }

    fn words(bytes: &[u8]) -> Vec<u32> {
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    fn floats(bytes: &[u8]) -> Vec<f32> {
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    #[test]
    fn zeros_and_fill() {
        assert_eq!(
            generate(ty("ushort"), 3, &Initialiser::Zeros).unwrap(),
            [0; 6]
        );
        let element = 7u16.to_le_bytes().to_vec();
        assert_eq!(
            generate(ty("ushort"), 3, &Initialiser::Fill { element }).unwrap(),
            [7, 0, 7, 0, 7, 0]
        );
    }

    #[test]
    fn integer_range_counts_lanes() {
        let init = Initialiser::Range {
            start: Number::Int(10),
            step: Number::Int(-3),
            accumulate: false,
        };
        let bytes = generate(ty("int2"), 2, &init).unwrap();
        let values: Vec<i32> = words(&bytes).into_iter().map(|w| w as i32).collect();
        assert_eq!(values, [10, 7, 4, 1]);
    }

    #[test]
    fn float_range_skips_padding_lanes() {
        let init = Initialiser::Range {
            start: Number::Float(0.5),
            step: Number::Float(0.25),
            accumulate: false,
        };
        let values = floats(&generate(ty("float3"), 2, &init).unwrap());
        assert_eq!(values, [0.5, 0.75, 1.0, 0.0, 1.25, 1.5, 1.75, 0.0]);
    }

    #[test]
    fn accumulated_float_range_adds_in_single_precision() {
        let init = Initialiser::Range {
            start: Number::Float(0.0),
            step: Number::Float(0.1),
            accumulate: true,
        };
        let values = floats(&generate(ty("float"), 4, &init).unwrap());
        let mut expected = vec![0.0f32];
        for _ in 0..3 {
            expected.push(expected.last().unwrap() + 0.1f32);
        }
        assert_eq!(values, expected);
    }

    // The seed-to-bytes mapping is a promise: these values must never change.
    #[test]
    fn random_integers_are_reproducible() {
        let init = Initialiser::Random { min: Number::Int(0), max: Number::Int(60), seed: 1 };
        let values = words(&generate(ty("uint"), 8, &init).unwrap());
        assert_eq!(values, RANDOM_UINT_0_60_SEED_1);
        assert!(values.iter().all(|&v| v <= 60));
        let again = words(&generate(ty("uint"), 8, &init).unwrap());
        assert_eq!(values, again);
    }

    #[test]
    fn random_floats_are_reproducible() {
        let init =
            Initialiser::Random { min: Number::Float(-1.0), max: Number::Float(1.0), seed: 42 };
        let values = floats(&generate(ty("float"), 4, &init).unwrap());
        let bits: Vec<u32> = values.iter().map(|v| v.to_bits()).collect();
        assert_eq!(bits, RANDOM_FLOAT_M1_1_SEED_42);
    }

    #[test]
    fn pcg64_first_draw_matches_the_reference_generator() {
        // pcg64 (XSL-RR 128/64) seeded with state 42 on the reference default stream.
        let mut rng = Pcg64::new(42, RANDOM_STREAM);
        assert_eq!(rng.next_u64(), PCG64_SEED_42_FIRST);
    }

    #[test]
    fn full_width_random_uses_the_whole_draw() {
        let init = Initialiser::Random {
            min: Number::Int(0),
            max: Number::Int(u64::MAX as i128),
            seed: 42,
        };
        let bytes = generate(ty("ulong"), 1, &init).unwrap();
        assert_eq!(
            u64::from_le_bytes(bytes.try_into().unwrap()),
            PCG64_SEED_42_FIRST
        );
    }

    #[test]
    fn three_lane_npy_data_is_padded() {
        let packed: Vec<u8> = (1..=6).flat_map(|v: u16| v.to_le_bytes()).collect();
        let padded = pad_three_lanes(&packed, ScalarType::UShort.size_bytes());
        assert_eq!(padded, [1, 0, 2, 0, 3, 0, 0, 0, 4, 0, 5, 0, 6, 0, 0, 0]);
    }

    /// Paper-scale inputs (8M keys, a 300 MB byte buffer), built once each:
    /// `cargo test --release -p clflow-manifest -- --ignored paper_scale`.
    #[test]
    #[ignore]
    fn paper_scale_buffers() {
        let started = std::time::Instant::now();
        let offsets = Initialiser::Range {
            start: Number::Int(0),
            step: Number::Int(36),
            accumulate: false,
        };
        let bytes = generate(ty("uint"), 8_388_608, &offsets).unwrap();
        assert_eq!(bytes.len(), 8_388_608 * 4);
        assert_eq!(bytes.capacity(), bytes.len());
        let random = Initialiser::Random { min: Number::Int(0), max: Number::Int(255), seed: 7 };
        let bytes = generate(ty("uchar"), 300_000_000, &random).unwrap();
        assert_eq!(bytes.len(), 300_000_000);
        assert_eq!(bytes.capacity(), bytes.len());
        eprintln!("paper-scale buffers built in {:?}", started.elapsed());
    }

    // Computed independently from the PCG reference algorithm (pcg64 with
    // pcg_setseq_128_srandom_r seeding) and the mapping in the crate docs.
    const RANDOM_UINT_0_60_SEED_1: [u32; 8] = [1, 39, 15, 20, 53, 30, 29, 39];
    /// f32 bit patterns of -0.0051725688, 0.110508025, 0.061306104, -0.43079323.
    const RANDOM_FLOAT_M1_1_SEED_42: [u32; 4] =
        [0xbba9_7ea7, 0x3de2_5208, 0x3d7b_1c1c, 0xbedc_90ee];
    const PCG64_SEED_42_FIRST: u64 = 0x7f56_8159_6e68_84d6;
}
