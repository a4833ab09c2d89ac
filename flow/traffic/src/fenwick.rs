//! A Fenwick (binary indexed) tree of counts over positions 1..=n: adds
//! and prefix sums in O(log n); and a set of positions counted by one, a
//! bit each, with the tree over its 64-bit words.

#[derive(Debug, Clone)]
pub struct Fenwick {
    /// `tree[i]` sums positions (i - lowbit(i), i]; index 0 is unused.
    tree: Vec<u32>,
}

impl Fenwick {
    pub fn new(n: usize) -> Fenwick {
        Fenwick { tree: vec![0; n + 1] }
    }

    /// Positions 1..=ones hold 1, the rest 0; built in O(n).
    #[cfg(test)]
    pub fn with_ones(n: usize, ones: usize) -> Fenwick {
        let tree = (0..=n)
            .map(|i| {
                if i == 0 {
                    return 0;
                }
                // Ones in (i - lowbit(i), i].
                let low = i - (i & i.wrapping_neg());
                (i.min(ones).saturating_sub(low)) as u32
            })
            .collect();
        Fenwick { tree }
    }

    /// Adds `delta` at `at` (1-based).
    #[inline]
    pub fn add(&mut self, mut at: usize, delta: i32) {
        while at < self.tree.len() {
            self.tree[at] = self.tree[at].wrapping_add_signed(delta);
            at += at & at.wrapping_neg();
        }
    }

    /// The sum of positions 1..=at.
    #[inline]
    pub fn prefix(&self, mut at: usize) -> u32 {
        let mut sum = 0u32;
        while at > 0 {
            sum = sum.wrapping_add(self.tree[at]);
            at &= at - 1;
        }
        sum
    }
}

/// A set of positions 1..=n, one bit each, that counts its members up to
/// a position: a Fenwick tree over the words, a popcount within one. The
/// tree is 64 times smaller than one over the positions, so that a stack-
/// distance pass over millions of lines walks it in cache.
#[derive(Debug, Clone)]
pub struct BitCounts {
    words: Vec<u64>,
    /// Members per word; word `w` is the tree's position `w + 1`.
    tree: Fenwick,
}

impl BitCounts {
    pub fn new(n: usize) -> BitCounts {
        BitCounts {
            words: vec![0; (n + 1).div_ceil(64)],
            tree: Fenwick::new((n + 1).div_ceil(64)),
        }
    }

    /// Positions 1..=ones are members; built in O(n / 64).
    #[cfg(test)]
    pub fn with_ones(n: usize, ones: usize) -> BitCounts {
        let words = (n + 1).div_ceil(64);
        let mut bits = vec![0u64; words];
        for (w, word) in bits.iter_mut().enumerate() {
            // Members among positions 64w .. 64w + 63 (position 0 never is).
            let (low, high) = (64 * w, 64 * w + 63);
            if ones >= low.max(1) {
                let top = ones.min(high) - low;
                let mask = if top == 63 {
                    u64::MAX
                } else {
                    (1u64 << (top + 1)) - 1
                };
                *word = mask & !u64::from(w == 0);
            }
        }
        let mut tree = Fenwick::new(words);
        for (w, word) in bits.iter().enumerate() {
            if *word != 0 {
                tree.add(w + 1, word.count_ones() as i32);
            }
        }
        BitCounts { words: bits, tree }
    }

    #[inline]
    pub fn insert(&mut self, at: usize) {
        self.words[at / 64] |= 1 << (at % 64);
        self.tree.add(at / 64 + 1, 1);
    }

    #[cfg(test)]
    pub fn remove(&mut self, at: usize) {
        self.words[at / 64] &= !(1 << (at % 64));
        self.tree.add(at / 64 + 1, -1);
    }

    /// Members at positions 1..=at.
    #[inline]
    pub fn prefix(&self, at: usize) -> u32 {
        let within = self.words[at / 64] & (u64::MAX >> (63 - at % 64));
        self.tree.prefix(at / 64) + within.count_ones()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_sums_follow_adds() {
        let mut f = Fenwick::new(10);
        let mut plain = [0i64; 11];
        for (at, delta) in [(3, 1), (7, 1), (10, 1), (3, -1), (1, 1), (7, -1), (8, 1)] {
            f.add(at, delta);
            plain[at] += delta as i64;
            for i in 0..=10 {
                assert_eq!(f.prefix(i) as i64, plain[1..=i].iter().sum::<i64>());
            }
        }
    }

    #[test]
    fn built_ones_equal_added_ones() {
        for (n, ones) in [(1, 0), (1, 1), (13, 5), (16, 16), (33, 17)] {
            let built = Fenwick::with_ones(n, ones);
            let mut added = Fenwick::new(n);
            for i in 1..=ones {
                added.add(i, 1);
            }
            assert_eq!(built.tree, added.tree, "{n} positions, {ones} ones");
        }
    }

    #[test]
    fn bit_counts_count_as_the_tree_does() {
        for (n, ones) in [(1, 0), (1, 1), (63, 63), (64, 10), (200, 130), (300, 0)] {
            let mut bits = BitCounts::with_ones(n, ones);
            let mut tree = Fenwick::with_ones(n, ones);
            for (at, add) in [
                (ones.max(1), false),
                (n, true),
                (n / 2 + 1, true),
                (1, true),
            ] {
                let member = bits.prefix(at) > bits.prefix(at - 1);
                if add && !member {
                    bits.insert(at);
                    tree.add(at, 1);
                } else if !add && member {
                    bits.remove(at);
                    tree.add(at, -1);
                }
                for i in 0..=n {
                    assert_eq!(bits.prefix(i), tree.prefix(i), "{n}, {ones} at {i}");
                }
            }
        }
    }
}
