//! The curve as detection reads it: sorted by size, one point per size
//! (repeated sizes merged), disturbed repeats and impossible values set aside.

use super::{BOGUS_FRACTION, CurvePoint, UNSTABLE_RATIO};
use crate::analysis::stats::median;

/// Points sorted by size with one point per size and sane values.
pub(super) fn clean(curve: &[CurvePoint], notes: &mut Vec<String>) -> Vec<CurvePoint> {
    let mut points: Vec<CurvePoint> = curve
        .iter()
        .filter(|p| p.size_bytes > 0 && p.ns.is_finite() && p.ns > 0.0)
        .map(|p| CurvePoint {
            ns_min: if p.ns_min.is_finite() && p.ns_min >= BOGUS_FRACTION * p.ns {
                p.ns_min.min(p.ns)
            } else {
                p.ns
            },
            ns_max: if p.ns_max.is_finite() {
                p.ns_max.max(p.ns)
            } else {
                p.ns
            },
            ..*p
        })
        .collect();
    let bogus = curve
        .iter()
        .filter(|p| p.ns > 0.0 && (p.ns_min.is_nan() || p.ns_min < BOGUS_FRACTION * p.ns))
        .count();
    if bogus > 0 {
        notes.push(format!(
            "{bogus} point(s) had a repeat below a tenth of their median (a disturbed timing, not a latency); left out of the spreads"
        ));
    }
    let dropped = curve.len() - points.len();
    if dropped > 0 {
        notes.push(format!(
            "{dropped} point(s) without a positive latency were left out"
        ));
    }
    points.sort_by_key(|p| p.size_bytes);
    let mut merged: Vec<CurvePoint> = Vec::new();
    let mut i = 0;
    while i < points.len() {
        let same: Vec<CurvePoint> = points[i..]
            .iter()
            .take_while(|p| p.size_bytes == points[i].size_bytes)
            .copied()
            .collect();
        i += same.len();
        let ns: Vec<f64> = same.iter().map(|p| p.ns).collect();
        let cycles: Vec<f64> = same.iter().map(|p| p.cycles).collect();
        merged.push(CurvePoint {
            size_bytes: same[0].size_bytes,
            ns: median(&ns),
            ns_min: same.iter().map(|p| p.ns_min).fold(f64::INFINITY, f64::min),
            ns_max: same.iter().map(|p| p.ns_max).fold(0.0, f64::max),
            cycles: median(&cycles),
        });
    }
    merged
}

/// The latency each point's level gives it, for grouping. A point whose
/// repeats differ by [`UNSTABLE_RATIO`] or more read two levels (another
/// tenant evicted its lines in some repeats), and interference only slows a
/// load: where its median lies nearer its fastest repeat than its slowest
/// (in log), the faster level served most repeats, and the fastest is that
/// level's latency; the median is a mixture that depends on how many
/// repeats were disturbed, and three such points can break the plateau of
/// the level that serves them. A point that most repeats read slow keeps
/// its median (a level seen only in some runs is no plateau), as does every
/// stable point.
pub(super) fn undisturbed(points: &[CurvePoint]) -> Vec<CurvePoint> {
    points
        .iter()
        .map(|p| {
            let mostly_fast = p.ns * p.ns < p.ns_min * p.ns_max;
            CurvePoint {
                ns: if two_levels(p) && mostly_fast {
                    p.ns_min
                } else {
                    p.ns
                },
                ..*p
            }
        })
        .collect()
}

/// Whether `p`'s repeats read two levels (they differ by [`UNSTABLE_RATIO`]).
pub(super) fn two_levels(p: &CurvePoint) -> bool {
    p.ns_max >= UNSTABLE_RATIO * p.ns_min
}

/// Whether [`undisturbed`] read `p` at its fastest repeat: its repeats read
/// two levels and its latency is the faster one's. Its spread is then the
/// disturbance's (the slow repeats), not that of its reading.
pub(super) fn read_at_fastest(p: &CurvePoint) -> bool {
    two_levels(p) && p.ns <= p.ns_min
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(size_bytes: u64, ns: f64, ns_min: f64, ns_max: f64) -> CurvePoint {
        CurvePoint {
            size_bytes,
            ns,
            ns_min,
            ns_max,
            cycles: 0.0,
        }
    }

    #[test]
    fn a_point_read_by_two_levels_takes_its_fastest_repeat() {
        let points = [
            point(1 << 20, 13.0, 12.5, 14.0),
            point(2 << 20, 25.7, 14.3, 75.8),
            point(3 << 20, 61.0, 14.2, 96.0),
            point(4 << 20, 140.0, 75.0, 145.0),
        ];
        let ns: Vec<f64> = undisturbed(&points).iter().map(|p| p.ns).collect();
        // Stable (spread under 2x): the median stays, also at 75..145; at
        // 3 MiB most repeats were slow (61 is past the middle, 37 ns).
        assert_eq!(ns, [13.0, 14.3, 61.0, 140.0]);
    }
}
