//! Summaries of repeated measurements.

use serde::{Deserialize, Serialize};

/// Min, median, mean, max and coefficient of variation of some samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Smallest sample.
    pub min: f64,
    /// Middle sample (mean of the two middle ones for an even count).
    pub median: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Largest sample.
    pub max: f64,
    /// Standard deviation over mean (0 for a single sample).
    pub cv: f64,
}

impl Summary {
    /// Summarises `samples`; `None` when there are none.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let variance = sorted.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        let cv = if mean != 0.0 {
            variance.sqrt() / mean.abs()
        } else {
            0.0
        };
        Some(Summary {
            min: sorted[0],
            median,
            mean,
            max: sorted[n - 1],
            cv,
        })
    }

    /// (max - min) / median: the spread a reader sees in the min..max range.
    pub fn relative_spread(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            (self.max - self.min) / self.median
        }
    }

    /// Every field multiplied by `factor` (cv is unchanged).
    pub fn scaled(&self, factor: f64) -> Summary {
        Summary {
            min: self.min * factor,
            median: self.median * factor,
            mean: self.mean * factor,
            max: self.max * factor,
            cv: self.cv,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarises_odd_and_even_counts() {
        for v in [
            &[3.0, 1.0, 2.0][..],
            &[4.0, 1.0, 2.0, 3.0],
            &[5.0],
            &[2.0, 2.0, 1.0, 9.0, 9.0, 0.5],
        ] {
            assert_eq!(median_in_place(&mut v.to_vec()), median(v), "{v:?}");
        }
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.min, s.median, s.max, s.mean), (1.0, 2.0, 3.0, 2.0));
        let s = Summary::of(&[4.0, 1.0, 2.0, 3.0]).unwrap();
        assert_eq!(s.median, 2.5);
        assert!((s.cv - (1.25f64).sqrt() / 2.5).abs() < 1e-12);
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn spread_and_scaling() {
        let s = Summary::of(&[9.0, 10.0, 11.0]).unwrap();
        assert!((s.relative_spread() - 0.2).abs() < 1e-12);
        let t = s.scaled(2.0);
        assert_eq!((t.min, t.median, t.max), (18.0, 20.0, 22.0));
        assert_eq!(t.cv, s.cv);
    }
}

/// The ratio of two medians, `median(b) / median(a)`, with a 95% percentile
/// bootstrap interval: hyperfine's "1.23 ± 0.02 times" with an honest interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatioEstimate {
    /// median(b) / median(a).
    pub ratio: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
}

impl RatioEstimate {
    /// Whether the interval leaves out 1: the samples differ beyond their noise.
    pub fn significant(&self) -> bool {
        self.low > 1.0 || self.high < 1.0
    }
}

/// Median of a non-empty slice.
pub fn median(values: &[f64]) -> f64 {
    Summary::of(values).map_or(f64::NAN, |s| s.median)
}

/// Median of a non-empty slice, found in place (the slice is reordered)
/// in linear time, with no allocation: the bootstrap takes thousands a point.
pub fn median_in_place(values: &mut [f64]) -> f64 {
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    // A point's few repeats (a sweep's 2 to 6): sorted by insertion, several
    // times faster than selection's setup at this size; the same median.
    if n <= 16 {
        for k in 1..n {
            let mut j = k;
            while j > 0 && values[j - 1].total_cmp(&values[j]).is_gt() {
                values.swap(j - 1, j);
                j -= 1;
            }
        }
        return if n % 2 == 1 {
            values[n / 2]
        } else {
            (values[n / 2 - 1] + values[n / 2]) / 2.0
        };
    }
    let (below, &mut mid, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        mid
    } else {
        let lower = below.iter().copied().max_by(f64::total_cmp).unwrap_or(mid);
        (lower + mid) / 2.0
    }
}

/// Bootstrap resamples drawn for [`ratio_of_medians`].
pub const BOOTSTRAP_RESAMPLES: usize = 4000;

/// `median(b) / median(a)` with a 95% percentile-bootstrap interval: both
/// samples are resampled with replacement [`BOOTSTRAP_RESAMPLES`] times from a
/// fixed seed (the same inputs give the same interval). `None` when a sample
/// is empty or a median is not positive.
pub fn ratio_of_medians(a: &[f64], b: &[f64]) -> Option<RatioEstimate> {
    let (ma, mb) = (median(a), median(b));
    if a.is_empty() || b.is_empty() || ma.is_nan() || mb.is_nan() || ma <= 0.0 || mb <= 0.0 {
        return None;
    }
    let mut rng = crate::chain::SplitMix64::new(0x5EED_B007);
    let mut draw = |sample: &[f64], into: &mut Vec<f64>| {
        into.clear();
        into.extend((0..sample.len()).map(|_| sample[rng.below(sample.len() as u64) as usize]));
        median_in_place(into)
    };
    let (mut ra, mut rb) = (Vec::new(), Vec::new());
    let mut ratios: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| draw(b, &mut rb) / draw(a, &mut ra))
        .filter(|r| r.is_finite())
        .collect();
    if ratios.is_empty() {
        return None;
    }
    // The two quantiles selected, not the whole list sorted: a compare of
    // two 50,000-point sweeps bootstraps every point.
    let mut at = |q: f64| {
        let k = ((ratios.len() - 1) as f64 * q).round() as usize;
        *ratios.select_nth_unstable_by(k, f64::total_cmp).1
    };
    let (low, high) = (at(0.025), at(0.975));
    Some(RatioEstimate {
        ratio: mb / ma,
        low,
        high,
    })
}

/// The Mann-Whitney U test of `a` against `b`: U for `a` and the two-sided
/// p-value, exact (counting every ranking) when the samples are small and by
/// the normal approximation with a tie correction when they are not. With
/// three values a side no p-value can be below 0.1: say so rather than call a
/// difference significant.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    // U = pairs where a wins, ties counting half.
    let u: f64 = a
        .iter()
        .map(|x| {
            b.iter()
                .map(|y| match x.total_cmp(y) {
                    std::cmp::Ordering::Greater => 1.0,
                    std::cmp::Ordering::Equal => 0.5,
                    std::cmp::Ordering::Less => 0.0,
                })
                .sum::<f64>()
        })
        .sum();
    let mean = (n1 * n2) as f64 / 2.0;
    let tied = a.iter().any(|x| b.contains(x));
    let p = if n1 * n2 <= 400 && !tied {
        exact_u_p(n1, n2, u)
    } else {
        let mut all: Vec<f64> = a.iter().chain(b).copied().collect();
        all.sort_by(f64::total_cmp);
        let n = all.len() as f64;
        let mut ties = 0.0;
        let mut i = 0;
        while i < all.len() {
            let j = all[i..].iter().take_while(|v| **v == all[i]).count();
            ties += (j as f64).powi(3) - j as f64;
            i += j;
        }
        let variance = (n1 * n2) as f64 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
        if variance <= 0.0 {
            1.0
        } else {
            let z = ((u - mean).abs() - 0.5).max(0.0) / variance.sqrt();
            (2.0 * normal_upper_tail(z)).min(1.0)
        }
    };
    Some((u, p))
}

/// Exact two-sided p-value of U for samples of `n1` and `n2` without ties:
/// the share of all rankings whose U is at least as far from the mean.
fn exact_u_p(n1: usize, n2: usize, u: f64) -> f64 {
    // counts[k] = rankings of n1 + n2 values giving U = k (the classic recursion
    // on whether the largest value belongs to the first sample).
    let max = n1 * n2;
    let mut table = vec![vec![vec![0f64; max + 1]; n2 + 1]; n1 + 1];
    for i in 0..=n1 {
        for j in 0..=n2 {
            if i == 0 || j == 0 {
                table[i][j][0] = 1.0;
                continue;
            }
            for k in 0..=i * j {
                let from_a = if k >= j { table[i - 1][j][k - j] } else { 0.0 };
                let from_b = table[i][j - 1][k];
                table[i][j][k] = from_a + from_b;
            }
        }
    }
    let counts = &table[n1][n2];
    let total: f64 = counts.iter().sum();
    let mean = max as f64 / 2.0;
    let distance = (u - mean).abs();
    let extreme: f64 = counts
        .iter()
        .enumerate()
        .filter(|(k, _)| (*k as f64 - mean).abs() >= distance - 1e-9)
        .map(|(_, c)| c)
        .sum();
    (extreme / total).min(1.0)
}

/// P(Z > z) for a standard normal Z (Abramowitz and Stegun 7.1.26, error below 1.5e-7).
fn normal_upper_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    0.5 * poly * (-x * x).exp()
}

#[cfg(test)]
mod comparison_tests {
    use super::*;

    #[test]
    fn equal_samples_are_not_significant_and_doubled_ones_are() {
        let a = [10.0, 10.2, 9.9, 10.1, 10.05];
        let same = [10.1, 9.95, 10.0, 10.15, 9.9];
        let r = ratio_of_medians(&a, &same).unwrap();
        assert!(!r.significant(), "{r:?}");
        assert!(r.low <= 1.0 && r.high >= 1.0);
        let double: Vec<f64> = a.iter().map(|x| 2.0 * x).collect();
        let r = ratio_of_medians(&a, &double).unwrap();
        assert!((r.ratio - 2.0).abs() < 1e-12);
        assert!(r.significant() && r.low > 1.9 && r.high < 2.1, "{r:?}");
        assert!(ratio_of_medians(&[], &a).is_none());
        // The same inputs give the same interval.
        assert_eq!(ratio_of_medians(&a, &double), ratio_of_medians(&a, &double));
    }

    #[test]
    fn the_median_in_place_is_the_median_at_every_length() {
        let mut rng = crate::chain::SplitMix64::new(7);
        for n in 1..40 {
            let mut values: Vec<f64> = (0..n).map(|_| (rng.below(50) as f64) * 0.5).collect();
            let want = median(&values);
            assert_eq!(median_in_place(&mut values), want, "{n}");
        }
    }

    #[test]
    fn mann_whitney_matches_known_values() {
        // Complete separation, 3 against 3: U = 0, exact two-sided p = 2/20.
        let (u, p) = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert_eq!(u, 0.0);
        assert!((p - 0.1).abs() < 1e-12, "{p}");
        // 5 against 5, separated: 2/252.
        let (_, p) = mann_whitney(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).unwrap();
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
        // Interleaved: no evidence of a difference.
        let (u, p) = mann_whitney(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]).unwrap();
        assert_eq!(u, 6.0);
        assert!(p > 0.5, "{p}");
    }

    #[test]
    fn large_samples_use_the_normal_approximation() {
        let a: Vec<f64> = (0..30).map(|i| i as f64).collect();
        let b: Vec<f64> = (0..30).map(|i| i as f64 + 20.0).collect();
        let (_, p) = mann_whitney(&a, &b).unwrap();
        assert!(p < 1e-4, "{p}");
        assert!((normal_upper_tail(1.959_964) - 0.025).abs() < 1e-6);
        // Ties with the other sample: still a p-value in 0..1.
        let (_, p) = mann_whitney(&[1.0, 1.0, 2.0], &[1.0, 2.0, 2.0]).unwrap();
        assert!((0.0..=1.0).contains(&p));
    }
}
