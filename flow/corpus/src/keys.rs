//! The lookup3 case's inputs: random keys of 0 to 60 random bytes,
//! generated deterministically from a seed.
//!
//! The stream is PCG-XSL-RR 128/64 (`rand_pcg::Pcg64`, a fixed published
//! algorithm) started with `Pcg64::new(seed, KEY_STREAM)`. Each key takes one
//! 64-bit draw for its length, `(draw >> 32) * 61 >> 32` (a multiply-shift
//! onto 0..=60 whose bias, under 61 / 2^32, is far below anything the
//! corpus measures), then ceil(length / 8) draws whose little-endian bytes,
//! cut to the length, are the key. The mapping is written out here rather
//! than taken from a distribution crate, so the keys for a seed never change
//! with crate versions.

use crate::lookup3::{pack_words, KeySet};
use rand_pcg::rand_core::Rng;
use rand_pcg::Pcg64;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Longest key, in bytes (the paper's keys are 0-60 bytes).
pub const MAX_KEY_BYTES: u32 = 60;

/// The PCG stream every key set uses ("lookup3_keys" in ASCII).
pub const KEY_STREAM: u128 = 0x6c6f_6f6b_7570_335f_6b65_7973;

/// The files a key set is written to, as the manifests name them.
pub const WORDS_FILE: &str = "words.bin";
pub const OFFSETS_FILE: &str = "offsets.bin";
pub const LENGTHS_FILE: &str = "lengths.bin";

/// Draws the keys of one seed, one after another.
pub struct KeyGenerator {
    rng: Pcg64,
}

impl KeyGenerator {
    pub fn new(seed: u64) -> Self {
        KeyGenerator { rng: Pcg64::new(u128::from(seed), KEY_STREAM) }
    }

    /// Replaces `key` with the next key's bytes.
    pub fn next_key(&mut self, key: &mut Vec<u8>) {
        let draw = self.rng.next_u64() >> 32;
        let length = ((draw * u64::from(MAX_KEY_BYTES + 1)) >> 32) as usize;
        key.clear();
        while key.len() < length {
            let bytes = self.rng.next_u64().to_le_bytes();
            let take = (length - key.len()).min(8);
            key.extend_from_slice(&bytes[..take]);
        }
    }
}

/// The first `keys` keys of `seed`, in memory.
pub fn generate(seed: u64, keys: usize) -> KeySet {
    let mut generator = KeyGenerator::new(seed);
    let mut set = KeySet::default();
    let mut key = Vec::new();
    for _ in 0..keys {
        generator.next_key(&mut key);
        set.push(&key);
    }
    set
}

#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{keys} keys need more than 2^32 words of key data; offsets are 32-bit: use fewer keys"
    )]
    TooManyKeys { keys: u64 },
}

/// What was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub keys: u64,
    pub words: u64,
    pub key_bytes: u64,
}

/// One output file, written through a buffer, that remembers its path.
struct Output {
    path: PathBuf,
    out: BufWriter<File>,
}

impl Output {
    fn create(dir: &Path, name: &str) -> Result<Self, GenerateError> {
        let path = dir.join(name);
        let file = File::create(&path)
            .map_err(|source| GenerateError::Write { path: path.clone(), source })?;
        Ok(Output { path, out: BufWriter::with_capacity(1 << 20, file) })
    }

    fn put(&mut self, value: u32) -> Result<(), GenerateError> {
        self.out
            .write_all(&value.to_le_bytes())
            .map_err(|source| self.failed(source))
    }

    fn finish(mut self) -> Result<(), GenerateError> {
        self.out.flush().map_err(|source| self.failed(source))
    }

    fn failed(&self, source: std::io::Error) -> GenerateError {
        GenerateError::Write { path: self.path.clone(), source }
    }
}

/// Writes the first `keys` keys of `seed` to `dir` (created if missing) as
/// raw little-endian `uint` files: `words.bin`, `offsets.bin` (in words)
/// and `lengths.bin` (in bytes). Streams: memory stays small at any size.
pub fn write_key_files(dir: &Path, seed: u64, keys: u64) -> Result<Written, GenerateError> {
    // The worst case of 15 words a key must keep offsets within u32.
    let worst_words = keys.saturating_mul(u64::from(MAX_KEY_BYTES.div_ceil(4)));
    if worst_words > u64::from(u32::MAX) {
        return Err(GenerateError::TooManyKeys { keys });
    }
    std::fs::create_dir_all(dir)
        .map_err(|source| GenerateError::Write { path: dir.to_path_buf(), source })?;
    let mut words_out = Output::create(dir, WORDS_FILE)?;
    let mut offsets_out = Output::create(dir, OFFSETS_FILE)?;
    let mut lengths_out = Output::create(dir, LENGTHS_FILE)?;

    let mut generator = KeyGenerator::new(seed);
    let mut key = Vec::new();
    let mut written = Written { keys, words: 0, key_bytes: 0 };
    for _ in 0..keys {
        generator.next_key(&mut key);
        offsets_out.put(written.words as u32)?;
        lengths_out.put(key.len() as u32)?;
        for word in pack_words(&key) {
            words_out.put(word)?;
            written.words += 1;
        }
        written.key_bytes += key.len() as u64;
    }
    words_out.finish()?;
    offsets_out.finish()?;
    lengths_out.finish()?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::from_bytes;

    #[test]
    fn seed_1_always_gives_the_same_keys() {
        let keys = generate(1, 3);
        // Pinned so that the generated inputs, and every count measured on
        // them, can never change silently.
        assert_eq!(keys.lengths, SEED_1_LENGTHS);
        assert_eq!(&keys.key(0)[..8], SEED_1_FIRST_BYTES);
        assert_eq!(generate(1, 3), keys);
        assert_ne!(generate(2, 3), keys);
    }

    // Computed by an independent implementation of PCG-XSL-RR 128/64 and
    // the mapping above, not by this code.
    const SEED_1_LENGTHS: [u32; 3] = [35, 45, 55];
    const SEED_1_FIRST_BYTES: &[u8] = &[143, 227, 185, 106, 57, 60, 235, 42];

    #[test]
    fn lengths_cover_0_to_60_uniformly() {
        let keys = generate(7, 61_000);
        let mut seen = [0u32; 61];
        for &length in &keys.lengths {
            assert!(length <= MAX_KEY_BYTES);
            seen[length as usize] += 1;
        }
        // 1000 expected per length; 5 standard deviations is about 160.
        for (length, &count) in seen.iter().enumerate() {
            assert!(
                (840..=1160).contains(&count),
                "length {length} drawn {count} times"
            );
        }
        // Key bytes are uniform too: their mean is near 127.5.
        let bytes: Vec<u8> = (0..keys.len()).flat_map(|k| keys.key(k)).collect();
        let mean = bytes.iter().map(|&b| f64::from(b)).sum::<f64>() / bytes.len() as f64;
        assert!((mean - 127.5).abs() < 1.0, "mean byte {mean}");
    }

    #[test]
    fn files_hold_the_same_keys_as_memory() {
        let dir = tempfile::tempdir().unwrap();
        let written = write_key_files(dir.path(), 3, 500).unwrap();
        let keys = generate(3, 500);
        let read = |name| from_bytes::<u32>(&std::fs::read(dir.path().join(name)).unwrap());
        assert_eq!(read(WORDS_FILE), keys.words);
        assert_eq!(read(OFFSETS_FILE), keys.offsets);
        assert_eq!(read(LENGTHS_FILE), keys.lengths);
        assert_eq!(written.words, keys.words.len() as u64);
        assert_eq!(
            written.key_bytes,
            keys.lengths.iter().map(|&l| u64::from(l)).sum::<u64>()
        );
    }

    #[test]
    fn refuses_more_keys_than_32_bit_offsets_reach() {
        let dir = tempfile::tempdir().unwrap();
        let error = write_key_files(dir.path(), 1, 1 << 30).unwrap_err();
        assert!(matches!(error, GenerateError::TooManyKeys { .. }));
    }
}
