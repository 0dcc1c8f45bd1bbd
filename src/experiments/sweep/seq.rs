//! The sizes of a sweep: seed 004's `seq(a, b, r, u, prime)`.
//!
//! A geometric sequence a, ar, ar^2, ... up to b, each term rounded up to a
//! multiple of `u` (the line size) and then up to a *prime* multiple of it.
//! Then for any stride that is a multiple of `u` but of no large prime,
//! gcd(size, stride) = u, so a stride chain touches every block of the buffer
//! (seed 004 section 2: "GCD(size, stride) is always 64, ensuring all 64-byte
//! blocks are accessed").

/// Whether `x` is prime (trial division; sizes / line are at most a few billion).
pub fn is_prime(x: u64) -> bool {
    if x < 2 {
        return false;
    }
    let mut d = 2;
    while d * d <= x {
        if x.is_multiple_of(d) {
            return false;
        }
        d += 1;
    }
    true
}

/// The smallest prime >= `a`.
pub fn next_prime(a: u64) -> u64 {
    (a.max(2)..)
        .find(|&x| is_prime(x))
        .expect("primes are unbounded")
}

/// Seed 004's `seq(a, b, r, u, prime)`: terms of a geometric sequence of ratio
/// `r` from `a` up to `b`, each made a multiple of `u` (a prime multiple when
/// `prime`), sorted, without duplicates, none above `b`.
///
/// The arithmetic is the notebook's (a float `x` multiplied by `r` each step,
/// truncated), so the sizes match its Python output exactly.
pub fn seq(a: u64, b: u64, r: f64, u: u64, prime: bool) -> Vec<u64> {
    assert!(
        r > 1.0 && u > 0,
        "seq needs a ratio above 1 and a non-zero unit"
    );
    let mut terms = Vec::new();
    let mut x = a as f64;
    while x <= b as f64 {
        let y = (x as u64).div_ceil(u);
        let z = if prime { next_prime(y) } else { y };
        if z * u <= b {
            terms.push(z * u);
        }
        x *= r;
    }
    terms.sort_unstable();
    terms.dedup();
    terms
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `python3 -c 'seq(2 ** 10, 2 ** 20, 1.3, 64, 1)'` with seed 004's functions.
    const SEED_004_1K_TO_1M: [u64; 27] = [
        1088, 1472, 1856, 2368, 3008, 3904, 5056, 6464, 8384, 11072, 14272, 18752, 23872, 31168,
        40384, 52544, 68416, 89536, 115264, 149824, 194624, 253888, 329408, 428096, 556096, 723136,
        939712,
    ];

    #[test]
    fn matches_seed_004s_python() {
        assert_eq!(seq(1 << 10, 1 << 20, 1.3, 64, true), SEED_004_1K_TO_1M);
        // seq(2 ** 10, 2 ** 28, 1.3, 64, 1): 48 terms, the last 232080448.
        let long = seq(1 << 10, 1 << 28, 1.3, 64, true);
        assert_eq!(long.len(), 48);
        assert_eq!(long.last(), Some(&232_080_448));
    }

    #[test]
    fn every_term_is_a_prime_multiple_so_strides_touch_every_block() {
        for size in seq(1 << 10, 1 << 26, 1.3, 64, true) {
            assert_eq!(size % 64, 0);
            assert!(is_prime(size / 64), "{size}");
            for stride in [64u64, 128, 4096, 1 << 20] {
                let mut g = (size, stride);
                while g.1 != 0 {
                    g = (g.1, g.0 % g.1);
                }
                assert_eq!(g.0, 64, "gcd({size}, {stride})");
            }
        }
    }

    #[test]
    fn plain_multiples_without_prime() {
        assert_eq!(seq(1000, 5000, 2.0, 64, false), [1024, 2048, 4032]);
        assert_eq!(seq(64, 64, 1.3, 64, true), Vec::<u64>::new());
        assert_eq!(seq(128, 128, 1.3, 64, true), [128]);
    }

    #[test]
    fn primes() {
        let small: Vec<u64> = (0..30).filter(|&x| is_prime(x)).collect();
        assert_eq!(small, [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]);
        assert_eq!(next_prime(0), 2);
        assert_eq!(next_prime(24), 29);
        assert_eq!(next_prime(29), 29);
    }
}
