//! Line size from a spacing sweep, as pure estimation; `commands::linesize` measures.
//!
//! Loads `s` bytes apart over a buffer beyond L1 touch a new line every
//! `line / s` loads while `s` is below the line, and on every load once it is
//! not: the latency grows with `s` up to the line size, then stops growing.
//! The estimate fits `ns(s) = a + b * min(s, L) / L` for each candidate `L`
//! among the spacings (all but the largest, which must show the flat part)
//! and keeps the `L` with the least squared error.
//!
//! Two orders are measured: seed 004's stride chain (loads in address order,
//! which prefetchers follow: they hide the misses up to their reach, so its
//! knee may be the prefetcher's, e.g. 128 bytes for adjacent-line prefetch),
//! and a page-random chain (the loads of each 4 KiB page in random order, so
//! each line's first load still misses): the estimate comes from the latter.

use serde::{Deserialize, Serialize};

/// The latency must grow at least this much (relative) for an estimate.
pub const MIN_GROWTH: f64 = 0.2;

/// One measured stride.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StridePoint {
    /// Stride, bytes.
    pub stride: u64,
    /// Median latency per load, ns.
    pub ns: f64,
}

/// The line size read from a stride sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineEstimate {
    /// Estimated line size in bytes; `None` when the latency does not grow.
    pub line_bytes: Option<u64>,
    /// Latency growth from the smallest stride to the plateau, relative.
    pub growth: f64,
    /// What to keep in mind.
    pub notes: Vec<String>,
}

/// Least-squares error of `ns = a + b * min(s, L) / L`.
fn fit(points: &[StridePoint], l: u64) -> f64 {
    let f: Vec<f64> = points
        .iter()
        .map(|p| p.stride.min(l) as f64 / l as f64)
        .collect();
    let y: Vec<f64> = points.iter().map(|p| p.ns).collect();
    let n = f.len() as f64;
    let (mf, my) = (f.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let sff: f64 = f.iter().map(|v| (v - mf).powi(2)).sum();
    let sfy: f64 = f.iter().zip(&y).map(|(a, b)| (a - mf) * (b - my)).sum();
    let b = if sff > 0.0 { sfy / sff } else { 0.0 };
    let a = my - b * mf;
    f.iter()
        .zip(&y)
        .map(|(fv, yv)| (yv - a - b * fv).powi(2))
        .sum()
}

/// Estimates the line size from latencies at several strides.
pub fn estimate(points: &[StridePoint]) -> LineEstimate {
    let mut sorted = points.to_vec();
    sorted.sort_by_key(|p| p.stride);
    sorted.dedup_by_key(|p| p.stride);
    let mut notes = Vec::new();
    if sorted.len() < 3 {
        notes.push("at least three strides are needed".into());
        return LineEstimate {
            line_bytes: None,
            growth: 0.0,
            notes,
        };
    }
    let candidates = &sorted[1..sorted.len() - 1];
    let best = candidates
        .iter()
        .map(|c| (c.stride, fit(&sorted, c.stride)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let (line, _) = best.expect("at least one candidate");
    let at_line = sorted
        .iter()
        .find(|p| p.stride == line)
        .map_or(0.0, |p| p.ns);
    let growth = at_line / sorted[0].ns - 1.0;
    if growth < MIN_GROWTH {
        notes.push(format!(
            "the latency grows only {:.0}% with the spacing: prefetchers (or a buffer that fits a faster level) hide the misses; try --prefetchers off or a larger -n/--size",
            growth * 100.0
        ));
        return LineEstimate {
            line_bytes: None,
            growth,
            notes,
        };
    }
    let last = sorted[sorted.len() - 1];
    if last.ns > at_line * 1.15 {
        notes.push(format!(
            "the latency still grows beyond {line} bytes ({:.2} -> {:.2} ns at {} bytes): the line may be larger, or a prefetcher fetches pairs of lines",
            at_line, last.ns, last.stride
        ));
    }
    LineEstimate {
        line_bytes: Some(line),
        growth,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep(line: u64, hit: f64, miss: f64, noise: f64) -> Vec<StridePoint> {
        [8u64, 16, 32, 64, 128, 256]
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let frac = s.min(line) as f64 / line as f64;
                let jitter = 1.0 + noise * if i.is_multiple_of(2) { 1.0 } else { -1.0 };
                StridePoint {
                    stride: s,
                    ns: (hit + (miss - hit) * frac) * jitter,
                }
            })
            .collect()
    }

    #[test]
    fn finds_64_and_128_byte_lines() {
        assert_eq!(estimate(&sweep(64, 1.1, 4.0, 0.02)).line_bytes, Some(64));
        assert_eq!(estimate(&sweep(128, 1.1, 4.0, 0.02)).line_bytes, Some(128));
        assert_eq!(estimate(&sweep(32, 1.1, 4.0, 0.0)).line_bytes, Some(32));
    }

    #[test]
    fn this_machines_page_random_sweeps_give_64() {
        let at = |ns: [f64; 6]| -> Vec<StridePoint> {
            [8u64, 16, 32, 64, 128, 256]
                .iter()
                .zip(ns)
                .map(|(&stride, ns)| StridePoint { stride, ns })
                .collect()
        };
        // 8 MiB (memory here): doubling up to 64 bytes, then a region prefetch dip.
        let e = estimate(&at([11.0, 22.05, 42.3, 92.1, 38.6, 74.5]));
        assert_eq!(e.line_bytes, Some(64), "{e:?}");
        assert!(e.growth > 5.0);
        // 128 KiB (L2): a smaller contrast.
        let e = estimate(&at([1.373, 1.464, 1.978, 2.665, 2.324, 2.670]));
        assert_eq!(e.line_bytes, Some(64), "{e:?}");
    }

    #[test]
    fn flat_latency_gives_no_estimate() {
        let e = estimate(&sweep(64, 1.1, 1.15, 0.01));
        assert_eq!(e.line_bytes, None);
        assert!(e.notes[0].contains("prefetchers"));
    }

    #[test]
    fn still_growing_is_said() {
        let e = estimate(&sweep(512, 1.1, 20.0, 0.0));
        assert_eq!(e.line_bytes, Some(128));
        assert!(e.notes[0].contains("still grows"));
        assert_eq!(estimate(&sweep(64, 1.0, 2.0, 0.0)[..2]).line_bytes, None);
    }
}
