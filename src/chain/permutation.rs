//! A keyed bijection of `[0, n)` for any `n >= 1`, computed, not stored: a
//! Feistel network over the smallest power-of-two domain holding `n`, with
//! cycle-walking to stay inside `[0, n)`. Both directions cost a few
//! multiplications, so a chain of any length needs no order array: position
//! `k` of a random cycle is `f(k)` and the successor of node `p` is
//! `f(f⁻¹(p) + 1)`, so every node's link can be written in address order.
//!
//! The network splits a `b`-bit value into a high half of `b / 2` bits and a
//! low half of the rest, and alternates rounds that xor one half with a keyed
//! mix of the other: each round is its own inverse's mirror, so any width
//! works, odd ones included. Cycle-walking (apply again while the value is
//! `>= n`) is a bijection of `[0, n)` because it follows the network's own
//! cycles; with a domain below `2n` it takes fewer than two steps on average.

use super::SplitMix64;

/// Rounds of the network: four make a keyed permutation whose outputs
/// carry no trace of their inputs' order (Luby and Rackoff), which is all a
/// prefetcher could follow.
const ROUNDS: usize = 4;

/// A keyed permutation of `[0, n)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permutation {
    n: u64,
    high_bits: u32,
    low_bits: u32,
    keys: [u64; ROUNDS],
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

impl Permutation {
    /// The permutation of `[0, n)` that `seed` chooses (`n >= 1`).
    pub fn new(n: u64, seed: u64) -> Permutation {
        assert!(n >= 1, "a permutation of nothing");
        let bits = 64 - (n - 1).leading_zeros();
        let mut rng = SplitMix64::new(seed ^ 0x5EED_F00D_C4A1_0000);
        Permutation {
            n,
            high_bits: bits / 2,
            low_bits: bits - bits / 2,
            keys: std::array::from_fn(|_| rng.next_u64()),
        }
    }

    /// How many values it permutes.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Always false: a permutation has at least one value.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// One round's function: a multiply of the half by the key, its high
    /// bits folded down (cheap, and every input bit reaches the result).
    fn round(&self, half: u64, key: u64, bits: u32) -> u64 {
        let z = (half ^ key).wrapping_mul(0x9E37_79B9_7F4A_7C15 | 1);
        (z ^ (z >> 29) ^ (z >> 47)) & mask(bits)
    }

    fn forward(&self, x: u64) -> u64 {
        let (mut high, mut low) = (x >> self.low_bits, x & mask(self.low_bits));
        for (r, &key) in self.keys.iter().enumerate() {
            if r % 2 == 0 {
                high ^= self.round(low, key, self.high_bits);
            } else {
                low ^= self.round(high, key, self.low_bits);
            }
        }
        (high << self.low_bits) | low
    }

    fn backward(&self, y: u64) -> u64 {
        let (mut high, mut low) = (y >> self.low_bits, y & mask(self.low_bits));
        for (r, &key) in self.keys.iter().enumerate().rev() {
            if r % 2 == 0 {
                high ^= self.round(low, key, self.high_bits);
            } else {
                low ^= self.round(high, key, self.low_bits);
            }
        }
        (high << self.low_bits) | low
    }

    /// The image of `x` (`x < n`).
    pub fn apply(&self, x: u64) -> u64 {
        debug_assert!(x < self.n);
        let mut y = self.forward(x);
        while y >= self.n {
            y = self.forward(y);
        }
        y
    }

    /// The `x` whose image is `y` (`y < n`).
    pub fn invert(&self, y: u64) -> u64 {
        debug_assert!(y < self.n);
        let mut x = self.backward(y);
        while x >= self.n {
            x = self.backward(x);
        }
        x
    }
}

/// A permutation of `[0, n)` that keeps 0 in place: a cycle built from it
/// starts at the buffer's first node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZeroFirst {
    rest: Option<Permutation>,
}

impl ZeroFirst {
    /// The permutation of `[0, n)` with 0 first that `seed` chooses (`n >= 1`).
    pub fn new(n: u64, seed: u64) -> ZeroFirst {
        ZeroFirst {
            rest: (n > 1).then(|| Permutation::new(n - 1, seed)),
        }
    }

    /// The image of `x`.
    pub fn apply(&self, x: u64) -> u64 {
        match (&self.rest, x) {
            (_, 0) | (None, _) => 0,
            (Some(p), x) => 1 + p.apply(x - 1),
        }
    }

    /// The `x` whose image is `y`.
    pub fn invert(&self, y: u64) -> u64 {
        match (&self.rest, y) {
            (_, 0) | (None, _) => 0,
            (Some(p), y) => 1 + p.invert(y - 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_bijection(n: u64, seed: u64) -> bool {
        let p = Permutation::new(n, seed);
        let mut seen = vec![false; n as usize];
        for x in 0..n {
            let y = p.apply(x);
            if y >= n || seen[y as usize] || p.invert(y) != x {
                return false;
            }
            seen[y as usize] = true;
        }
        true
    }

    #[test]
    fn every_size_and_key_gives_a_bijection_and_its_inverse() {
        let mut sizes: Vec<u64> = vec![
            1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 97, 127, 128, 129, 1000, 4093,
        ];
        sizes.extend([65_521, 65_536, 65_537, 1 << 20, 999_983]);
        let mut rng = SplitMix64::new(42);
        sizes.extend((0..5).map(|_| 1 + rng.below(300_000)));
        for n in sizes {
            for seed in [0, 1, 2, 0xdead_beef, u64::MAX] {
                assert!(is_bijection(n, seed), "n {n} seed {seed}");
            }
        }
    }

    #[test]
    fn zero_stays_first() {
        for n in [1, 2, 3, 64, 1000] {
            let z = ZeroFirst::new(n, 7);
            assert_eq!(z.apply(0), 0);
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let y = z.apply(x);
                assert!(!seen[y as usize]);
                seen[y as usize] = true;
                assert_eq!(z.invert(y), x);
            }
        }
    }

    #[test]
    fn keys_choose_different_orders() {
        let a: Vec<u64> = (0..64).map(|x| Permutation::new(64, 1).apply(x)).collect();
        let b: Vec<u64> = (0..64).map(|x| Permutation::new(64, 2).apply(x)).collect();
        assert_ne!(a, b);
        assert_eq!(
            a,
            (0..64)
                .map(|x| Permutation::new(64, 1).apply(x))
                .collect::<Vec<_>>()
        );
    }
}
