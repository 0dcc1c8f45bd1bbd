//! Where a cache level ends, and which sizes would place that better.
//!
//! **Capacity** (the definition memlat reports): the size at which the
//! fraction of loads the level serves falls to one half. A chase's loads
//! are serialised, so its latency at a size S between a level's plateau
//! t_k and the next level's t_k1 is the mix h t_k + (1 - h) t_k1 of the two,
//! h the fraction the level serves: h = (t_k1 - t) / (t_k1 - t_k), read
//! from the two plateaus the same run measured. h = 1/2 where the latency
//! is the plateaus' arithmetic mean; the size is interpolated between the
//! two measured sizes either side of that crossing (linear in latency, as h
//! is, and in log-size), which are its **bracket**. The definition holds
//! for any replacement policy: under LRU a cyclic walk loses the whole
//! level within a few per cent past its size (the crossing sits at the
//! step), under random replacement the level still serves half the loads
//! at about 1.4x its size, and a shared cache's share is where half of the
//! walk still hits it. Where sysfs lists a cache the curve does not
//! resolve, a pause too short to call a level (a shared cache's small
//! share between this level and memory) takes the place of the next
//! plateau, so that the missing level does not move this one's edge.
//! Beside it, the **largest size within 10%** of the plateau: where the
//! level starts to give way.

use serde::{Deserialize, Serialize};

use super::{CurvePoint, LEVEL_RATIO};
use crate::units::HumanBytes;

/// What a level certainly serves and certainly does not, from the repeats
/// themselves rather than from one crossing: on a shared cache whose edge
/// moves with other tenants these hold from run to run where the capacity
/// estimate does not (issue 27).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CapacityBounds {
    /// The largest measured size where every repeat read this level's
    /// latency; `None` when no size did.
    pub at_least_bytes: Option<u64>,
    /// The smallest measured size from which on every repeat (at it and at
    /// every larger size) read the next level's latency; `None` when the
    /// curve never got there.
    pub at_most_bytes: Option<u64>,
}

/// The latencies that decide, for one repeat, which of two levels served
/// it: at or below the first it read the faster level (at `from_ns`), at or
/// above the second the slower one (at `to_ns`).
///
/// A chase's loads are serialised, so a repeat's mean is the mix of the
/// latencies of the levels that served its loads; a load served by the
/// slower level cannot take less than its latency. Levels differ by at least
/// [`LEVEL_RATIO`] (the detector's premise), so a mean within that factor of
/// a level is that level's latency: within 1.5x of an L3 at 11 ns and memory
/// at 140, at most 1 load in 23 went to memory. Neither threshold passes the
/// geometric middle of the two, so no repeat reads both levels.
pub fn bound_thresholds(from_ns: f64, to_ns: f64) -> (f64, f64) {
    let middle = (from_ns * to_ns).sqrt();
    (
        (from_ns * LEVEL_RATIO).min(middle),
        (to_ns / LEVEL_RATIO).max(middle),
    )
}

/// What every repeat agrees a level serves: `points` by size (raw, with
/// each size's lowest and highest repeat), the level's plateau starting at
/// `start`, its latency `from_ns`, the next level's `to_ns`.
///
/// Interference only slows a load: a fast repeat proves the level served
/// that size, a slow one may be a neighbour's burst (on a 2-vCPU guest one
/// point's repeats all read the next level at 418 KiB while 476-683 KiB
/// still read L2). So the upper bound is the size after the last one at
/// which any repeat read faster than the next level: from there on every
/// repeat at every size read the next level's latency.
pub fn bounds(points: &[CurvePoint], start: usize, from_ns: f64, to_ns: f64) -> CapacityBounds {
    let (serves, beyond) = bound_thresholds(from_ns, to_ns);
    let after = &points[start.min(points.len())..];
    let last_served = after.iter().rposition(|p| p.ns_min < beyond);
    let at_most_bytes = match last_served {
        Some(i) => after.get(i + 1),
        None => after.first(),
    }
    .map(|p| p.size_bytes);
    let at_least_bytes = after
        .iter()
        .take_while(|p| at_most_bytes.is_none_or(|m| p.size_bytes < m))
        .filter(|p| p.ns_max <= serves)
        .last()
        .map(|p| p.size_bytes);
    CapacityBounds {
        at_least_bytes,
        at_most_bytes,
    }
}

impl CapacityBounds {
    /// What every repeat of every one of `all` agrees: the lowest
    /// `at_least`, the highest `at_most`; either `None` when any one's is
    /// (a sweep in which no size was served by every repeat, or whose
    /// curve never reached the next level, leaves that side unknown).
    pub fn pool(all: &[CapacityBounds]) -> CapacityBounds {
        let side = |f: fn(&CapacityBounds) -> Option<u64>, pick: fn(u64, u64) -> u64| {
            all.iter()
                .map(f)
                .collect::<Option<Vec<u64>>>()
                .and_then(|v| v.into_iter().reduce(pick))
        };
        CapacityBounds {
            at_least_bytes: side(|b| b.at_least_bytes, u64::min),
            at_most_bytes: side(|b| b.at_most_bytes, u64::max),
        }
    }
}

/// Pools each cache level's `capacity_bounds` in `detection` with the same
/// level in `history` (other sweeps of this machine): what every repeat of
/// every sweep read. A shared cache's edge moves with the other tenants from
/// minute to minute (this Zen 4 guest's L3 read at least 4.3 MiB in one
/// sweep and 9.5 MiB in the next, three minutes apart), so one sweep's
/// bounds describe that sweep's minutes; pooled, they describe the level
/// here and hold from sweep to sweep. A history level is the same level
/// when it has the same name and its latency and this one's are within
/// [`LEVEL_RATIO`] of the median of all of them (the detector's premise:
/// levels differ by more; a ramp stretch taken for the level does not, and
/// is left out, as is this sweep's level when it is such a stretch). The
/// level keeps its own bounds in `capacity_bounds_this_sweep` and the count
/// in `capacity_bounds_sweeps`, and a note says so.
pub fn pool_bounds(detection: &mut super::Detection, history: &[super::Detection]) {
    for level in detection.levels.iter_mut() {
        let Some(own) = level.capacity_bounds else {
            continue;
        };
        let others: Vec<(f64, CapacityBounds)> = history
            .iter()
            .filter_map(|d| d.levels.iter().find(|l| l.name == level.name))
            .filter_map(|l| Some((l.latency_ns, l.capacity_bounds?)))
            .collect();
        let mut latencies: Vec<f64> = others.iter().map(|(ns, _)| *ns).collect();
        latencies.push(level.latency_ns);
        let typical = super::median(&latencies);
        let alike = |ns: f64| super::same_level(ns, typical);
        if !alike(level.latency_ns) {
            continue;
        }
        let mut all = vec![own];
        all.extend(others.iter().filter(|(ns, _)| alike(*ns)).map(|(_, b)| *b));
        if all.len() < 2 {
            continue;
        }
        let pooled = CapacityBounds::pool(&all);
        let side = |v: Option<u64>| v.map_or("?".to_string(), |v| HumanBytes(v).to_string());
        level.notes.push(format!(
            "capacity bounds pooled over {} sweeps of this machine (this one and the remembered): {}..{}; this sweep alone read {}..{}",
            all.len(),
            side(pooled.at_least_bytes),
            side(pooled.at_most_bytes),
            side(own.at_least_bytes),
            side(own.at_most_bytes)
        ));
        level.capacity_bounds = Some(pooled);
        level.capacity_bounds_this_sweep = Some(own);
        level.capacity_bounds_sweeps = Some(all.len() as u32);
    }
}

/// Whether the edge between the bounds moved while it was measured: some
/// size between them whose repeats differ by [`super::UNSTABLE_RATIO`] or more
/// (one repeat served by this level, another mostly by the next: a cache
/// shared with other tenants whose share changed between repeats).
pub fn edge_moved(points: &[CurvePoint], bounds: &CapacityBounds) -> bool {
    let low = bounds.at_least_bytes.unwrap_or(0);
    let high = bounds.at_most_bytes.unwrap_or(u64::MAX);
    points
        .iter()
        .filter(|p| p.size_bytes > low && p.size_bytes < high)
        .any(super::clean::two_levels)
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
pub const CAPACITY_DEFINITION: &str = "the size at which the fraction of loads this level serves falls to one half: h = (t_next - t) / (t_next - t_level) from this level's plateau t_level and the next level's plateau t_next (or, where sysfs lists a cache the curve does not resolve, a pause before it), so where the latency is their arithmetic mean; interpolated linearly in latency and in log-size between the measured sizes either side (size_bracket_bytes); size_within_10pct_bytes is the largest measured size within 10% of the plateau; capacity_bounds.at_least_bytes is the largest measured size where every repeat read this level's latency (within 1.5x of it and below the geometric middle to the next level), at_most_bytes the smallest from which on every repeat at every size read the next level's; memlat sweep pools both with the same level of this machine's remembered sweeps (capacity_bounds_sweeps; capacity_bounds_this_sweep keeps its own)";

/// A bracket narrower than this (high / low) places the capacity well enough.
pub const PLACED: f64 = 1.05;

/// The latency at which a level at `from_ns` serves half the loads and the
/// next, at `to_ns`, the other half: their arithmetic mean (a chase's
/// latency is the mix of the latencies that served its loads).
pub fn leave_threshold(from_ns: f64, to_ns: f64) -> f64 {
    (from_ns + to_ns) / 2.0
}

/// Where the latency reaches `threshold` between two measured (size, ns)
/// points either side of it, bytes to 64 and between the two sizes:
/// linear in latency (the served fraction is) and in log-size (the sizes
/// are a geometric sequence); the geometric middle when the two read alike.
pub fn crossing_size(below: (u64, f64), above: (u64, f64), threshold: f64) -> u64 {
    let ((sp, np), (si, ni)) = (below, above);
    let t = if ni > np {
        ((threshold - np) / (ni - np)).clamp(0.0, 1.0)
    } else {
        0.5
    };
    let (lo, hi) = ((sp as f64).ln(), (si as f64).ln());
    let bytes = ((lo + t * (hi - lo)).exp() / 64.0).round() as u64 * 64;
    bytes.clamp(sp, si)
}

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
    let threshold = leave_threshold(from_ns, to_ns);
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
    let estimate = crossing_size(
        (at(prev), points[prev].ns),
        (at(crossing), points[crossing].ns),
        threshold,
    );
    Capacity {
        estimate,
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

    fn bounds_of(at_least: Option<u64>, at_most: Option<u64>) -> CapacityBounds {
        CapacityBounds {
            at_least_bytes: at_least,
            at_most_bytes: at_most,
        }
    }

    #[test]
    fn pooled_bounds_are_what_every_sweep_agrees() {
        const M: u64 = 1 << 20;
        // This Zen 4 guest's L3 in five sweeps minutes apart (batch 1).
        let all = [
            bounds_of(Some(56 * M / 10), Some(124 * M / 10)),
            bounds_of(Some(95 * M / 10), Some(141 * M / 10)),
            bounds_of(Some(53 * M / 10), Some(95 * M / 10)),
            bounds_of(Some(43 * M / 10), Some(73 * M / 10)),
        ];
        let pooled = CapacityBounds::pool(&all);
        assert_eq!(pooled, bounds_of(Some(43 * M / 10), Some(141 * M / 10)));
        // Every sweep's capacity lies inside the pooled bounds.
        for b in &all {
            assert!(b.at_least_bytes >= pooled.at_least_bytes);
            assert!(b.at_most_bytes <= pooled.at_most_bytes);
        }
        // A side one sweep could not bound stays unknown.
        let open = CapacityBounds::pool(&[all[0], bounds_of(Some(M), None)]);
        assert_eq!(open, bounds_of(Some(M), None));
        assert_eq!(CapacityBounds::pool(&[all[1]]), all[1]);
    }

    #[test]
    fn a_level_pools_with_the_same_level_of_other_sweeps_only() {
        use super::super::{DetectedLevel, Detection};
        const M: u64 = 1 << 20;
        let level = |name: &str, ns: f64, b: CapacityBounds| DetectedLevel {
            name: name.into(),
            latency_ns: ns,
            capacity_bounds: Some(b),
            ..Default::default()
        };
        let mut this = Detection {
            levels: vec![
                level("L2", 3.8, bounds_of(Some(M / 2), Some(3 * M / 2))),
                level("L3", 14.0, bounds_of(Some(9 * M), Some(14 * M))),
            ],
            ..Default::default()
        };
        let history = vec![
            Detection {
                levels: vec![level("L3", 14.5, bounds_of(Some(4 * M), Some(16 * M)))],
                ..Default::default()
            },
            // A ramp stretch read as L3 (latency 2x): not the same level.
            Detection {
                levels: vec![level("L3", 30.0, bounds_of(Some(M), Some(40 * M)))],
                ..Default::default()
            },
        ];
        pool_bounds(&mut this, &history);
        let l2 = &this.levels[0];
        assert_eq!(l2.capacity_bounds_sweeps, None, "no L2 in the history");
        assert_eq!(l2.capacity_bounds_this_sweep, None);
        let l3 = &this.levels[1];
        assert_eq!(
            l3.capacity_bounds,
            Some(bounds_of(Some(4 * M), Some(16 * M)))
        );
        assert_eq!(
            l3.capacity_bounds_this_sweep,
            Some(bounds_of(Some(9 * M), Some(14 * M)))
        );
        assert_eq!(l3.capacity_bounds_sweeps, Some(2));
        assert!(
            l3.notes[0].contains("pooled over 2 sweeps"),
            "{:?}",
            l3.notes
        );
    }

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
    fn a_gradual_end_is_placed_where_half_the_loads_are_served() {
        // Intel's 2 MiB L2 in a VM: flat to ~0.4 MiB, giving way gradually
        // (the guest's pages scattered over the host's sets); half its
        // loads served (20.7 ns, half-way from 4.65 to the L3's 36.8)
        // between 2.0 and 2.6 MiB.
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
        assert!((2 << 20..2400 << 10).contains(&cap.estimate), "{cap:?}");
        assert_eq!((cap.low, cap.high), (2064064, 2683328));
        assert_eq!(cap.within_10pct, 428096);
    }

    /// Points with their lowest and highest repeat.
    fn spread(points: &[(u64, f64, f64)]) -> Vec<CurvePoint> {
        points
            .iter()
            .map(|&(s, lo, hi)| CurvePoint {
                size_bytes: s,
                ns: (lo * hi).sqrt(),
                ns_min: lo,
                ns_max: hi,
                cycles: 0.0,
            })
            .collect()
    }

    #[test]
    fn bounds_hold_what_every_repeat_read() {
        // Zen 5's shared L3 (11.2 ns) and memory (139 ns): at 4.4 MiB one
        // repeat of ten read 25 ns, at 5.8-9.7 MiB the repeats read both
        // levels, from 12.6 MiB all read memory.
        let c = spread(&[
            (2 << 20, 9.7, 10.7),
            (3_487_808, 11.1, 12.2),
            (4_534_336, 11.5, 25.3),
            (5_894_848, 12.9, 28.5),
            (9_961_792, 14.7, 129.5),
            (12_949_952, 109.0, 110.9),
            (16_835_008, 115.3, 138.1),
        ]);
        let b = bounds(&c, 0, 11.2, 139.0);
        assert_eq!(b.at_least_bytes, Some(3_487_808));
        assert_eq!(b.at_most_bytes, Some(12_949_952));
        assert!(edge_moved(&c, &b));
        // A sharp step: the bounds are its two sizes, and nothing moved.
        let step = spread(&[(40384, 1.4, 1.5), (49216, 1.45, 1.5), (52544, 4.1, 4.2)]);
        let b = bounds(&step, 0, 1.45, 4.65);
        assert_eq!(
            (b.at_least_bytes, b.at_most_bytes),
            (Some(49216), Some(52544))
        );
        assert!(!edge_moved(&step, &b));
        // A curve that never reaches the next level has no upper bound.
        let b = bounds(&step[..2], 0, 1.45, 4.65);
        assert_eq!((b.at_least_bytes, b.at_most_bytes), (Some(49216), None));
        // A neighbour's burst slows every repeat of one size; larger sizes
        // still read L2, so the burst is no upper bound.
        let burst = spread(&[
            (321_700, 4.0, 4.0),
            (418_100, 10.4, 10.6),
            (683_400, 5.3, 5.4),
            (917_700, 9.2, 9.3),
            (1_587_776, 11.3, 12.3),
        ]);
        let b = bounds(&burst, 0, 3.83, 14.58);
        assert_eq!(
            (b.at_least_bytes, b.at_most_bytes),
            (Some(683_400), Some(1_587_776))
        );
    }

    #[test]
    fn close_levels_never_share_a_latency() {
        // 1.6x apart: 1.5x of the faster would pass the slower's 1.5x band.
        let (serves, beyond) = bound_thresholds(10.0, 16.0);
        assert!(serves <= beyond && serves > 10.0 && beyond < 16.0);
        assert_eq!(bound_thresholds(1.0, 100.0), (1.5, 100.0 / 1.5));
    }

    #[test]
    fn refinement_halves_wide_brackets_only() {
        let sizes = refinement_sizes(&[(40384, 52544), (1000, 1040)], &[], 64);
        assert_eq!(sizes, vec![46080]);
        assert!(refinement_sizes(&[(40384, 52544)], &[46080], 64).is_empty());
    }
}
