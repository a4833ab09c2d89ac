//! A Fenwick (binary indexed) tree of counts over positions 1..=n: adds
//! and prefix sums in O(log n).

#[derive(Debug, Clone)]
pub struct Fenwick {
    /// `tree[i]` sums positions (i - lowbit(i), i]; index 0 is unused.
    tree: Vec<u32>,
}

impl Fenwick {
    pub fn new(n: usize) -> Fenwick {
        Fenwick {
            tree: vec![0; n + 1],
        }
    }

    /// Positions 1..=ones hold 1, the rest 0; built in O(n).
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
}
