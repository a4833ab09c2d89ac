//! Bob Jenkins' lookup3 `hashlittle` (2006), as published, and the key
//! layout the corpus's lookup3 kernel reads.

/// Rotate left, as lookup3's `rot()`.
fn rot(x: u32, k: u32) -> u32 {
    x.rotate_left(k)
}

/// lookup3's `mix()`: mixes three 32-bit values reversibly.
fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c);
    *a ^= rot(*c, 4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= rot(*a, 6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= rot(*b, 8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c);
    *a ^= rot(*c, 16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= rot(*a, 19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= rot(*b, 4);
    *b = b.wrapping_add(*a);
}

/// lookup3's `final()`: final mixing of three 32-bit values into c.
fn final_mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c ^= *b;
    *c = c.wrapping_sub(rot(*b, 14));
    *a ^= *c;
    *a = a.wrapping_sub(rot(*c, 11));
    *b ^= *a;
    *b = b.wrapping_sub(rot(*a, 25));
    *c ^= *b;
    *c = c.wrapping_sub(rot(*b, 16));
    *a ^= *c;
    *a = a.wrapping_sub(rot(*c, 4));
    *b ^= *a;
    *b = b.wrapping_sub(rot(*a, 14));
    *c ^= *b;
    *c = c.wrapping_sub(rot(*b, 24));
}

fn word(bytes: &[u8]) -> u32 {
    u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// `hashlittle(key, length, initval)`: the hash of `key`'s bytes, reading
/// them as little-endian 32-bit words as the published code does.
pub fn hashlittle(key: &[u8], initval: u32) -> u32 {
    let init = 0xdead_beef_u32
        .wrapping_add(key.len() as u32)
        .wrapping_add(initval);
    let (mut a, mut b, mut c) = (init, init, init);

    let mut rest = key;
    while rest.len() > 12 {
        a = a.wrapping_add(word(&rest[0..4]));
        b = b.wrapping_add(word(&rest[4..8]));
        c = c.wrapping_add(word(&rest[8..12]));
        mix(&mut a, &mut b, &mut c);
        rest = &rest[12..];
    }
    if rest.is_empty() {
        // Only the empty key gets here: it skips the final mixing.
        return c;
    }
    // The tail's missing bytes count as zero, as the published code's masks.
    let mut tail = [0u8; 12];
    tail[..rest.len()].copy_from_slice(rest);
    a = a.wrapping_add(word(&tail[0..4]));
    b = b.wrapping_add(word(&tail[4..8]));
    c = c.wrapping_add(word(&tail[8..12]));
    final_mix(&mut a, &mut b, &mut c);
    c
}

/// Keys laid out as the lookup3 kernel reads them: every key starts on a
/// 4-byte boundary of `words` and is padded with zero bytes to a whole word.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeySet {
    /// The keys' bytes as little-endian words.
    pub words: Vec<u32>,
    /// Where each key starts in `words`.
    pub offsets: Vec<u32>,
    /// Each key's length in bytes.
    pub lengths: Vec<u32>,
}

/// Words a key of `length` bytes occupies.
pub fn words_for(length: u32) -> u32 {
    length.div_ceil(4)
}

impl KeySet {
    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// Appends a key (at most `u32::MAX` bytes; the words must stay
    /// addressable by `u32` offsets, which the caller checks).
    pub fn push(&mut self, key: &[u8]) {
        self.offsets.push(self.words.len() as u32);
        self.lengths.push(key.len() as u32);
        self.words.extend(pack_words(key));
    }

    /// The bytes of key `index`.
    pub fn key(&self, index: usize) -> Vec<u8> {
        let start = self.offsets[index] as usize;
        key_bytes(&self.words[start..], self.lengths[index])
    }
}

/// A key's bytes as zero-padded little-endian words.
pub fn pack_words(key: &[u8]) -> impl Iterator<Item = u32> + '_ {
    key.chunks(4).map(|chunk| {
        let mut raw = [0u8; 4];
        raw[..chunk.len()].copy_from_slice(chunk);
        u32::from_le_bytes(raw)
    })
}

/// The first `length` bytes of little-endian `words`.
pub fn key_bytes(words: &[u32], length: u32) -> Vec<u8> {
    words
        .iter()
        .take(words_for(length) as usize)
        .flat_map(|w| w.to_le_bytes())
        .take(length as usize)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FOUR_SCORE: &[u8] = b"Four score and seven years ago";

    #[test]
    fn published_test_vectors() {
        assert_eq!(hashlittle(b"", 0), 0xdead_beef);
        assert_eq!(hashlittle(FOUR_SCORE, 0), 0x1777_0551);
        assert_eq!(hashlittle(FOUR_SCORE, 1), 0xcd62_8161);
    }

    #[test]
    fn every_tail_length_depends_on_every_byte() {
        // A change in any byte of any length 1..=60 must change the hash:
        // catches a tail that drops or double-counts bytes.
        let base: Vec<u8> = (0..60u8)
            .map(|i| i.wrapping_mul(37).wrapping_add(11))
            .collect();
        for length in 1..=60 {
            let key = &base[..length];
            for position in 0..length {
                let mut changed = key.to_vec();
                changed[position] ^= 0x80;
                assert_ne!(
                    hashlittle(key, 7),
                    hashlittle(&changed, 7),
                    "length {length} byte {position}"
                );
            }
        }
    }

    #[test]
    fn keys_start_on_word_boundaries_and_round_trip() {
        let mut keys = KeySet::default();
        keys.push(b"abcde");
        keys.push(b"");
        keys.push(b"xyzw");
        assert_eq!(keys.offsets, vec![0, 2, 2]);
        assert_eq!(keys.lengths, vec![5, 0, 4]);
        assert_eq!(keys.words, vec![0x6463_6261, 0x0000_0065, 0x777a_7978]);
        assert_eq!(keys.key(0), b"abcde");
        assert_eq!(keys.key(1), b"");
        assert_eq!(keys.key(2), b"xyzw");
    }
}
