//! Where a cache level ends, and which sizes would place that better.
//!
//! **Capacity** (the definition memlat reports): the size at which the
//! latency leaves the level's plateau, that is reaches the geometric mean of
//! the plateau and the next level (half-way, in log) or twice the plateau,
//! whichever is lower; interpolated in log-size and log-latency between the
//! two measured sizes either side of the crossing, which are its
//! **bracket**. On a level that ends in a sharp step (LRU and a cyclic walk:
//! every load misses once the chain outgrows the cache) this is the step; on
//! one that ends gradually (a VM's pages scattered over the host's sets, a
//! shared cache) it is where the level has clearly given way. Twice the
//! plateau caps the threshold so that a level the curve does not resolve
//! (a pause between this level and a much slower one) cannot inflate it.
//! Beside it, the **largest size within 10%** of the plateau: where the
//! level starts to give way.

use serde::{Deserialize, Serialize};

use super::CurvePoint;

/// What a level certainly serves and certainly does not, from the repeats
/// themselves rather than from one crossing: on a shared cache whose edge
/// moves with other tenants these hold from run to run where the capacity
/// estimate does not (issue 27).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CapacityBounds {
    /// The largest measured size where every repeat read this level's
    /// latency; `None` when no size did.
    pub at_least_bytes: Option<u64>,
    /// The smallest measured size where every repeat read the next level's
    /// latency; `None` when the curve never got there.
    pub at_most_bytes: Option<u64>,
}

/// A level's capacity: the estimate, the measured sizes around it, and the
/// largest size still within 10% of the plateau.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Capacity {
    /// The crossing, bytes (a multiple of 64).
    pub estimate: u64,
    /// The measured size just before the crossing.
    pub low: u64,
    /// The measured size just after it.
    pub high: u64,
    /// The largest size whose latency is within 10% of the plateau.
    pub within_10pct: u64,
}

/// The definition of `size_bytes`, as the JSON states it.
pub const CAPACITY_DEFINITION: &str = "the size at which the latency leaves this level's plateau: reaches the geometric mean of the plateau and the next level, or twice the plateau if lower, interpolated in log-size and log-latency between the measured sizes either side (size_bracket_bytes); size_within_10pct_bytes is the largest measured size within 10% of the plateau";

/// A level is left at twice its latency at the latest.
pub const LEAVE_RATIO: f64 = 2.0;

/// A bracket narrower than this (high / low) places the capacity well enough.
pub const PLACED: f64 = 1.05;

/// The capacity of a plateau at `from_ns` whose last point is `last`, the
/// next level at `to_ns` starting at `next` (`points` smoothed, by size).
pub fn capacity(
    points: &[CurvePoint],
    start: usize,
    last: usize,
    next: usize,
    from_ns: f64,
    to_ns: f64,
) -> Capacity {
    let threshold = from_ns * (to_ns / from_ns).sqrt().min(LEAVE_RATIO);
    let at = |i: usize| points[i].size_bytes;
    let within_10pct = points[start..next]
        .iter()
        .take_while(|p| p.ns <= 1.1 * from_ns)
        .last()
        .map_or(at(last), |p| p.size_bytes);
    let crossing = (last + 1..=next)
        .find(|&i| points[i].ns >= threshold)
        .unwrap_or(next);
    let prev = crossing.saturating_sub(1).max(start);
    let (np, ni) = (points[prev].ns, points[crossing].ns);
    let t = if ni > np {
        ((threshold / np).ln() / (ni / np).ln()).clamp(0.0, 1.0)
    } else {
        0.5
    };
    let (sp, si) = (at(prev) as f64, at(crossing) as f64);
    let estimate = ((sp.ln() + t * (si.ln() - sp.ln())).exp() / 64.0).round() as u64 * 64;
    Capacity {
        estimate: estimate.clamp(at(prev), at(crossing)),
        low: at(prev),
        high: at(crossing),
        within_10pct,
    }
}

/// Sizes to measure next so that every bracket in `brackets` shrinks: the
/// geometric middle of each one wider than [`PLACED`], a multiple of
/// `unit`, not already measured (`known`).
pub fn refinement_sizes(brackets: &[(u64, u64)], known: &[u64], unit: u64) -> Vec<u64> {
    let unit = unit.max(8);
    let mut sizes: Vec<u64> = brackets
        .iter()
        .filter(|(low, high)| *high as f64 > *low as f64 * PLACED)
        .map(|&(low, high)| ((low as f64 * high as f64).sqrt() as u64).div_ceil(unit) * unit)
        .filter(|s| !known.contains(s))
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(points: &[(u64, f64)]) -> Vec<CurvePoint> {
        points
            .iter()
            .map(|&(s, ns)| CurvePoint {
                size_bytes: s,
                ns,
                ns_min: ns,
                ns_max: ns,
                cycles: 0.0,
            })
            .collect()
    }

    #[test]
    fn a_sharp_step_is_placed_between_its_two_sizes() {
        // Intel's 48 KiB L1: 1.45 ns at 39.4 KiB, 4.16 at 51.3 KiB.
        let c = curve(&[(31168, 1.45), (40384, 1.45), (52544, 4.16), (68416, 4.65)]);
        let cap = capacity(&c, 0, 1, 3, 1.45, 4.65);
        assert_eq!((cap.low, cap.high), (40384, 52544));
        let off = cap.estimate as f64 / 49152.0;
        assert!((0.9..1.1).contains(&off), "{cap:?}");
        assert_eq!(cap.within_10pct, 40384);
    }

    #[test]
    fn a_gradual_end_is_placed_where_the_latency_has_doubled() {
        // Intel's L2 in a VM: flat to ~0.4 MiB, twice its latency (9.3 ns)
        // between 1.2 and 1.5 MiB, half-way to L3 (13 ns) near 1.75 MiB.
        let c = curve(&[
            (329408, 4.7),
            (428096, 4.79),
            (556096, 5.26),
            (723136, 5.57),
            (939712, 6.0),
            (1221184, 8.0),
            (1587776, 10.07),
            (2064064, 16.3),
            (2683328, 29.3),
            (3487808, 36.0),
        ]);
        let cap = capacity(&c, 0, 1, 9, 4.65, 36.8);
        assert!((1 << 20..2 << 20).contains(&cap.estimate), "{cap:?}");
        assert_eq!((cap.low, cap.high), (1221184, 1587776));
        assert_eq!(cap.within_10pct, 428096);
    }

    #[test]
    fn refinement_halves_wide_brackets_only() {
        let sizes = refinement_sizes(&[(40384, 52544), (1000, 1040)], &[], 64);
        assert_eq!(sizes, vec![46080]);
        assert!(refinement_sizes(&[(40384, 52544)], &[46080], 64).is_empty());
    }
}
