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
