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

/// One distance of the dependent-pair measurement: slot X then X + d.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairPoint {
    /// Distance from the first load to the second, bytes.
    pub distance: u64,
    /// Mean latency of the two loads, ns.
    pub pair_ns: f64,
    /// The second load's latency: twice the mean less a lone miss, ns.
    pub second_ns: f64,
}

impl PairPoint {
    /// A pair measured at `pair_ns` per load where a lone load takes `miss_ns`.
    pub fn of(distance: u64, pair_ns: f64, miss_ns: f64) -> PairPoint {
        PairPoint {
            distance,
            pair_ns,
            second_ns: 2.0 * pair_ns - miss_ns,
        }
    }
}

/// The line from dependent pairs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairReading {
    /// The smallest distance whose second load no longer hits X's line.
    pub line_bytes: Option<u64>,
    /// What to keep in mind.
    pub notes: Vec<String>,
}

/// The step in second-load latency at the line must be at least this
/// fraction of the way from a hit to a lone miss...
pub const HIT_FRACTION: f64 = 0.05;

/// ...and at least this many ns.
pub const MIN_STEP_NS: f64 = 0.3;

/// Reads dependent pairs (the smallest distance must lie within the line:
/// its second load is a hit) against a lone load of `lone_ns`. The line is
/// where the second load's latency steps up most: the largest gap between
/// the slowest second load below a distance and the fastest one from it on.
/// A step, not a threshold on one point: the second load is twice a pair's
/// mean less a lone load, so each figure carries both their noise.
pub fn read_pairs(points: &[PairPoint], lone_ns: f64) -> PairReading {
    let mut sorted = points.to_vec();
    sorted.sort_by_key(|p| p.distance);
    let mut notes = Vec::new();
    let Some(first) = sorted.first().map(|p| p.second_ns.max(0.1)) else {
        return PairReading {
            line_bytes: None,
            notes: vec!["no pairs measured".into()],
        };
    };
    if lone_ns < 4.0 * first {
        notes.push(format!(
            "a lone load ({lone_ns:.1} ns) is not clearly slower than a second load in its line ({first:.1} ns): the buffer may fit a fast level; give a larger -n/--size"
        ));
        return PairReading {
            line_bytes: None,
            notes,
        };
    }
    // From distance k on: its own second load and the median of the rest
    // must stand above every one before it (one cheap outlier beyond the
    // line, a buddy line prefetched in time, cannot hide the step).
    let step = (1..sorted.len())
        .map(|k| {
            let below = sorted[..k]
                .iter()
                .map(|p| p.second_ns)
                .fold(f64::MIN, f64::max);
            let rest: Vec<f64> = sorted[k..].iter().map(|p| p.second_ns).collect();
            let above = sorted[k]
                .second_ns
                .min(crate::analysis::stats::median(&rest));
            (k, above - below)
        })
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let hits: Vec<f64> = step.map_or(vec![first], |(k, _)| {
        sorted[..k].iter().map(|p| p.second_ns).collect()
    });
    let hit_ns = crate::analysis::stats::median(&hits).max(0.1);
    let needed = (HIT_FRACTION * (lone_ns - hit_ns)).max(MIN_STEP_NS);
    let line_bytes = step
        .filter(|&(_, gap)| gap >= needed)
        .map(|(k, _)| sorted[k].distance);
    match line_bytes {
        None => notes.push(format!(
            "no second load up to {} bytes away stood clearly ({needed:.1} ns) above those before it: the line is larger than that, or the machine too noisy",
            sorted.last().map_or(0, |p| p.distance)
        )),
        Some(line) => {
            let beyond: Vec<f64> = sorted
                .iter()
                .filter(|p| p.distance >= line)
                .map(|p| p.second_ns)
                .collect();
            let lo = beyond.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = beyond.iter().copied().fold(0.0, f64::max);
            if hi < 0.75 * lone_ns {
                notes.push(format!(
                    "a second load {line} or more bytes away took {lo:.1}..{hi:.1} ns against {lone_ns:.1} for a lone load: nearby lines come cheaper (prefetched with the first, or an open DRAM page), but not as hits"
                ));
            }
        }
    }
    PairReading { line_bytes, notes }
}

/// The unit a miss brings in: where the page-random spacing curve stops
/// growing (`spacing_knee`), when that is beyond the line: below it, lines
/// arrive with their neighbours (adjacent-line or pair prefetch), so a new
/// line a load costs less than one a fetch unit apart.
pub fn fetch_bytes(line: Option<u64>, spacing_knee: Option<u64>) -> Option<u64> {
    match (line, spacing_knee) {
        (Some(l), Some(k)) => Some(l.max(k)),
        (l, k) => l.or(k),
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

    fn pairs(second: [f64; 6], miss: f64) -> Vec<PairPoint> {
        [8u64, 16, 32, 64, 128, 256]
            .iter()
            .zip(second)
            .map(|(&d, s)| PairPoint::of(d, (miss + s) / 2.0, miss))
            .collect()
    }

    #[test]
    fn pairs_find_the_line_and_the_spacing_knee_the_fetch_unit() {
        // This Golden Cove guest at 512 MiB: hits within the line, 17..29 ns
        // for a second load beyond it, 182 ns alone.
        let r = read_pairs(&pairs([0.65, 4.16, -0.16, 28.6, 16.9, 21.1], 182.0), 182.0);
        assert_eq!(r.line_bytes, Some(64), "{r:?}");
        assert!(r.notes[0].contains("come cheaper"), "{r:?}");
        // And at 4 MiB (L3 here).
        let r = read_pairs(&pairs([1.86, 2.6, 2.5, 39.7, 32.3, 35.5], 45.2), 45.2);
        assert_eq!(r.line_bytes, Some(64), "{r:?}");
        // A 128-byte line.
        let r = read_pairs(&pairs([1.3, 1.3, 1.3, 1.4, 36.0, 37.0], 36.0), 36.0);
        assert_eq!(r.line_bytes, Some(128));
        // This Zen 4 guest at 2 MiB (its L3), where one threshold read 128
        // from a noisy hit reference: the step is at 64 either way.
        for second in [
            [0.96, 0.71, 1.05, 2.75, 4.34, 3.12],
            [1.18, 1.19, 0.94, 2.63, 4.57, 3.22],
            [1.46, 1.35, 1.11, 3.23, 4.85, 5.80],
            // A 256-byte second load that came as cheap as a hit.
            [1.59, 1.80, 1.69, 3.19, 3.46, 0.50],
            [1.11, 1.04, 1.22, 2.76, 4.39, 0.86],
        ] {
            let r = read_pairs(&pairs(second, 17.0), 17.0);
            assert_eq!(r.line_bytes, Some(64), "{second:?}: {r:?}");
        }
        // No contrast: no reading.
        let r = read_pairs(&pairs([1.3; 6], 1.4), 1.4);
        assert_eq!(r.line_bytes, None);
        assert!(r.notes[0].contains("larger -n"));
        // 64-byte lines, page-random latency growing to 128: fetched in pairs.
        assert_eq!(fetch_bytes(Some(64), Some(128)), Some(128));
        assert_eq!(fetch_bytes(Some(64), Some(32)), Some(64));
        assert_eq!(fetch_bytes(None, Some(128)), Some(128));
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
