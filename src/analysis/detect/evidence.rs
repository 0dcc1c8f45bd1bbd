//! Whether each plateau is a level or a noisy stretch of the ramp between
//! two levels, and how many levels the data must show to overrule sysfs.
//!
//! On a shared machine the climb from one level to the next is uneven:
//! three points of it can sit within 20% of each other and pass for a
//! plateau. The test here weighs each candidate against the alternative
//! that it is part of the ramp: the straight line (in log size, log ns)
//! from the end of the plateau below it to the start of the plateau above.
//! With each point's own uncertainty (half the log-spread of its repeats,
//! never less than the curve's typical spread), the evidence is
//! `chi2(ramp) - chi2(plateau)`: how much better a flat level explains the
//! points than the ramp does. A level needs [`EVIDENCE_MIN`]; beyond the
//! number of data caches sysfs lists it needs [`EVIDENCE_STRONG`] and
//! [`STRONG_POINTS`] points, and the output says why it was kept.

use serde::{Deserialize, Serialize};

use super::confidence::half_log_spread;
use super::segment::{MIN_POINTS, MIN_SPAN, slope};
use super::unresolved::{Unresolved, set_aside};
use super::{CurvePoint, LEVEL_RATIO, Level, LoadSpread, clean, same_level};
use crate::units::HumanBytes;

/// A plateau must explain its points this much better than the ramp
/// (chi-square difference): about three standard errors for its one
/// parameter, its latency.
pub const EVIDENCE_MIN: f64 = 9.0;

/// A level beyond those sysfs lists needs this much evidence (about five
/// and a half standard errors: a claim against the hardware's own list)...
pub const EVIDENCE_STRONG: f64 = 30.0;

/// ...and this many points.
pub const STRONG_POINTS: usize = 4;

/// The smallest per-point uncertainty in log latency: repeats that agree
/// to the nanosecond still vary more than this (2%) from run to run.
const SIGMA_FLOOR: f64 = 0.02;

/// What stands behind one level: the test against a ramp, and how often its
/// points were measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// Independent passes over the level's points (2 when `memlat sweep`
    /// measured them again with fresh chains before deciding).
    pub passes: u32,
    /// Whether every pass found this level.
    pub agree: bool,
    /// Points of this level measured again with fresh chains.
    pub remeasured_points: u32,
    /// chi2(ramp) - chi2(plateau) for this level's points; null for the
    /// first level and memory, which have no ramp on both sides.
    #[serde(default)]
    pub against_ramp: Option<f64>,
}

impl Default for Evidence {
    fn default() -> Evidence {
        Evidence {
            passes: 1,
            agree: true,
            remeasured_points: 0,
            against_ramp: None,
        }
    }
}

/// Levels kept, stretches set aside, and why.
#[derive(Debug, Default)]
pub(super) struct Selection {
    /// Levels in size order, memory last.
    pub levels: Vec<Level>,
    /// The evidence against a ramp of each level (None: first level and memory).
    pub against_ramp: Vec<Option<f64>>,
    /// Plateaus set aside.
    pub unresolved: Vec<Unresolved>,
    /// What the reader should know about the choice.
    pub notes: Vec<String>,
}

/// The uncertainty of one point's log latency: half the log-spread of its
/// repeats, or, for a point read at its fastest repeat
/// ([`clean::read_at_fastest`]: the others were slowed to the next level by
/// interference), the curve's typical uncertainty: its spread says how far
/// the disturbance reached, not how well its one fast reading places the
/// level that served it. Without that, three such points of a shared L3
/// (15-17 ns fastest, 70-97 ns slowest) weighed nothing against a ramp, and
/// the L2 -> L3 mixture below them was taken for the L3 (Zen 4 guest).
fn sigma(p: &CurvePoint, floor: f64) -> f64 {
    let spread = if clean::read_at_fastest(p) {
        0.0
    } else {
        half_log_spread(p)
    };
    spread.max(floor).max(SIGMA_FLOOR)
}

/// `chi2(ramp) - chi2(plateau)` of `candidate` between `below` and `above`.
pub(super) fn against_ramp(
    points: &[CurvePoint],
    below: &Level,
    candidate: &Level,
    above: &Level,
    floor: f64,
) -> f64 {
    let x0 = (points[below.end - 1].size_bytes as f64).ln();
    let x1 = (points[above.start].size_bytes as f64).ln();
    let (y0, y1) = (below.ns.ln(), above.ns.ln());
    let flat = candidate.ns.ln();
    let mut chi_ramp = 0.0;
    let mut chi_flat = 0.0;
    for p in &points[candidate.start..candidate.end] {
        let x = (p.size_bytes as f64).ln();
        let t = if x1 > x0 {
            ((x - x0) / (x1 - x0)).clamp(0.0, 1.0)
        } else {
            0.5
        };
        let ramp = y0 + (y1 - y0) * t;
        let y = p.ns.ln();
        let s = sigma(p, floor);
        chi_ramp += ((y - ramp) / s).powi(2);
        chi_flat += ((y - flat) / s).powi(2);
    }
    chi_ramp - chi_flat
}

/// The evidence of every level against a ramp (None for the first and the last).
fn evidences(points: &[CurvePoint], levels: &[Level], floor: f64) -> Vec<Option<f64>> {
    (0..levels.len())
        .map(|k| {
            (k > 0 && k + 1 < levels.len())
                .then(|| against_ramp(points, &levels[k - 1], &levels[k], &levels[k + 1], floor))
        })
        .collect()
}

/// The cache level (not the first, not memory) with the least evidence.
fn weakest(evidence: &[Option<f64>]) -> Option<(usize, f64)> {
    evidence
        .iter()
        .enumerate()
        .filter_map(|(k, e)| e.map(|e| (k, e)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// A stretch taken as a level climbs at most this fraction of the pace of
/// the ramp it interrupts (log-log slopes). A level serves every load of its
/// stretch, so its latency is flat but for the erosion of a shared share by
/// other tenants; the loads of a ramp are a mixture of the levels either
/// side, whose latency climbs at the ramp's pace wherever it lies (just past
/// a level's edge it sits below the straight line and can stand off it as
/// far as a level). Half-way between flat and the ramp divides the two.
pub const RAMP_PACE: f64 = 0.5;

/// The log-log slope of `points[start..end]`.
fn pace(points: &[CurvePoint], start: usize, end: usize) -> f64 {
    let run = &points[start..end];
    let x: Vec<f64> = run.iter().map(|p| (p.size_bytes as f64).ln()).collect();
    let y: Vec<f64> = run.iter().map(|p| p.ns.ln()).collect();
    slope(&x, &y)
}

/// The slowest stretch between two levels that stands off their ramp and
/// is flatter than it: the index it would take among `levels`, the level,
/// and its evidence; None when no stretch of 3+ points spanning 1.2x in size
/// passes [`EVIDENCE_MIN`] and [`RAMP_PACE`]. A stretch spans less than a
/// level's step ([`LEVEL_RATIO`]): a level serves its loads at one latency,
/// and one rising into the next by less than a step is still itself
/// (POWER10's L3 region, whose edge runs into the L2's soft one, never lies
/// within 1.3x over three sizes). The slowest, because a mixture's latency
/// lies between the levels it mixes: of two stretches on one climb, the
/// faster can be the mixture of the level below and the slower, which is
/// then the level.
fn best_stretch(
    points: &[CurvePoint],
    smoothed: &[f64],
    levels: &[Level],
    floor: f64,
) -> Option<(usize, Level, f64)> {
    let mut best: Option<(usize, Level, f64)> = None;
    for k in 1..levels.len() {
        let (below, above) = (&levels[k - 1], &levels[k]);
        let ramp = (above.ns / below.ns).ln()
            / (points[above.start].size_bytes as f64 / points[below.end - 1].size_bytes as f64)
                .ln();
        for start in below.end..above.start {
            // A stretch more than a level's step wide spans two levels.
            let (mut lo, mut hi, mut end) = (smoothed[start], smoothed[start], start + 1);
            while end < above.start
                && hi.max(smoothed[end]) - lo.min(smoothed[end]) < LEVEL_RATIO.ln()
            {
                (lo, hi, end) = (lo.min(smoothed[end]), hi.max(smoothed[end]), end + 1);
            }
            // The longest stretch from `start` that passes: one disturbed
            // point at its end (smoothing hides it) must not sink the rest.
            let found = (start + MIN_POINTS..=end).rev().find_map(|end| {
                let span = points[end - 1].size_bytes as f64 / points[start].size_bytes as f64;
                let candidate = Level::of(points, start, end, true);
                // A level differs from both neighbours by a level's step.
                if span < MIN_SPAN
                    || same_level(candidate.ns, below.ns)
                    || same_level(candidate.ns, above.ns)
                    || pace(points, start, end) > RAMP_PACE * ramp
                {
                    return None;
                }
                let e = against_ramp(points, below, &candidate, above, floor);
                (e >= EVIDENCE_MIN).then_some((candidate, e))
            });
            if let Some((candidate, e)) = found
                && best.as_ref().is_none_or(|b| candidate.ns > b.1.ns)
            {
                best = Some((k, candidate, e));
            }
        }
    }
    best
}

/// Keeps the plateaus of `levels` (memory last) that the data support
/// against a ramp, and no more cache levels than `sysfs_count` (when
/// non-zero) unless the evidence is strong, nor fewer unless no stretch
/// between them stands off the ramp, after the loads timed one by one
/// (`spreads`) set aside what is no level. `smoothed` holds the running-median
/// log latencies; `floor` is the curve's typical per-point uncertainty.
pub(super) fn select(
    points: &[CurvePoint],
    smoothed: &[f64],
    mut levels: Vec<Level>,
    floor: f64,
    sysfs_count: usize,
    spreads: &[LoadSpread],
) -> Selection {
    let mut unresolved = Vec::new();
    let mut notes = Vec::new();
    // The ramp test, weakest first: removing one changes its neighbours' test.
    loop {
        let evidence = evidences(points, &levels, floor);
        match weakest(&evidence) {
            Some((k, e)) if e < EVIDENCE_MIN => set_aside(
                points,
                &mut levels,
                k,
                &format!(
                    "fits the ramp between its neighbours nearly as well as a plateau (evidence {e:.1} < {EVIDENCE_MIN})"
                ),
                &mut notes,
                &mut unresolved,
            ),
            _ => break,
        }
    }
    // Loads timed one by one tell a level from a stretch that is none,
    // before sysfs's count weighs in: where the curve shows one cache more
    // than sysfs lists, they say which is the impostor (the weakest by the
    // ramp test can be the real level: a shared L3 caught at three points).
    super::one_latency::drop_load_mixtures(
        points,
        &mut levels,
        spreads,
        sysfs_count,
        &mut notes,
        &mut unresolved,
    );
    let mut set_aside = |levels: &mut Vec<Level>, k: usize, why: String| {
        set_aside(points, levels, k, &why, &mut notes, &mut unresolved);
    };
    // sysfs's count as a prior: more cache levels need strong evidence.
    let caches = |levels: &[Level]| levels.len().saturating_sub(1);
    while sysfs_count > 0 && caches(&levels) > sysfs_count {
        let evidence = evidences(points, &levels, floor);
        let Some((k, e)) = weakest(&evidence) else {
            break;
        };
        let n = levels[k].end - levels[k].start;
        if e >= EVIDENCE_STRONG && n >= STRONG_POINTS {
            notes.push(format!(
                "the curve shows {} cache levels where sysfs lists {sysfs_count}: each of them is a plateau of {STRONG_POINTS}+ points that a ramp explains far worse (evidence {EVIDENCE_STRONG}+; the weakest {e:.0})",
                caches(&levels)
            ));
            break;
        }
        set_aside(
            &mut levels,
            k,
            format!(
                "is one plateau more than the {sysfs_count} data caches sysfs lists, without the strong evidence that would overrule it ({n} points, evidence {e:.1}; {EVIDENCE_STRONG} and {STRONG_POINTS} points needed)"
            ),
        );
    }
    // ...and fewer need evidence too: where sysfs lists more levels than
    // the plateaus show, the stretch that stands furthest off its ramp
    // (a shared cache's share often climbs too steadily to call flat) is
    // taken as a level when it passes the same test. Only on a curve that
    // ends on a plateau: on one still rising at its end, its last level may
    // be a cache, and the levels sysfs lists beyond the curve are not
    // missing from it.
    let reaches_memory = |levels: &[Level]| levels.last().is_some_and(|l| l.plateau);
    while caches(&levels) < sysfs_count && reaches_memory(&levels) {
        let Some((k, candidate, e)) = best_stretch(points, smoothed, &levels, floor) else {
            break;
        };
        unresolved.retain(|u| {
            !u.overlaps(
                points[candidate.start].size_bytes,
                points[candidate.end - 1].size_bytes,
            )
        });
        notes.push(format!(
            "{}..{} at {:.1} ns ({} points) rises too steadily to call flat, but sysfs lists {sysfs_count} data caches and it stands off the ramp between its neighbours (evidence {e:.1} >= {EVIDENCE_MIN}): taken as a level",
            HumanBytes(points[candidate.start].size_bytes),
            HumanBytes(points[candidate.end - 1].size_bytes),
            candidate.ns,
            candidate.end - candidate.start
        ));
        levels.insert(k, candidate);
    }
    unresolved.sort_by_key(|u| u.from_bytes);
    Selection {
        against_ramp: evidences(points, &levels, floor),
        levels,
        unresolved,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(size: u64, ns: f64, spread: f64) -> CurvePoint {
        CurvePoint {
            size_bytes: size,
            ns,
            ns_min: ns * (1.0 - spread),
            ns_max: ns * (1.0 + spread),
            cycles: 0.0,
        }
    }

    fn logs(points: &[CurvePoint]) -> Vec<f64> {
        points.iter().map(|p| p.ns.ln()).collect()
    }

    fn level(points: &[CurvePoint], start: usize, end: usize) -> Level {
        Level::of(points, start, end, true)
    }

    #[test]
    fn a_short_plateau_far_from_the_ramp_is_a_level() {
        // Intel's 3-8 MiB L3 share: flat at 36 ns between L2 (4.7) and memory (170).
        let ns = [
            4.7, 4.7, 4.8, 12.0, 35.8, 36.8, 37.7, 80.0, 168.0, 171.0, 170.0,
        ];
        let points: Vec<CurvePoint> = ns
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                point(
                    (512 << 10) * 3u64.pow(i as u32) / 2u64.pow(i as u32),
                    v,
                    0.03,
                )
            })
            .collect();
        let levels = vec![
            level(&points, 0, 3),
            level(&points, 4, 7),
            level(&points, 8, 11),
        ];
        let e = against_ramp(&points, &levels[0], &levels[1], &levels[2], 0.03);
        assert!(e > EVIDENCE_STRONG, "{e}");
        let s = select(&points, &logs(&points), levels, 0.03, 3, &[]);
        assert_eq!(s.levels.len(), 3);
        assert!(s.unresolved.is_empty());
    }

    #[test]
    fn three_noisy_points_on_a_ramp_are_unresolved() {
        // Zen 3's L2 -> L3 ramp: 4 ns to 16 ns with three points near 6 ns.
        let sizes = [
            160, 190, 230, 250, 330, 380, 430, 560, 720, 940, 1200, 1600, 2000,
        ];
        let ns = [
            4.0, 4.1, 4.0, 6.3, 7.0, 5.4, 9.0, 11.0, 14.6, 15.7, 15.4, 15.8, 16.4,
        ];
        let points: Vec<CurvePoint> = sizes
            .iter()
            .zip(ns)
            .map(|(&s, v)| point(s << 10, v, 0.15))
            .collect();
        let levels = vec![
            level(&points, 0, 3),
            level(&points, 3, 6),
            level(&points, 9, 13),
        ];
        let s = select(&points, &logs(&points), levels, 0.05, 0, &[]);
        assert_eq!(s.levels.len(), 2, "{:?}", s.notes);
        assert_eq!(s.unresolved.len(), 1);
        assert_eq!(s.unresolved[0].from_bytes, 250 << 10);
        assert!(s.notes[0].contains("ramp"), "{:?}", s.notes);
    }

    #[test]
    fn beyond_sysfs_only_strong_plateaus_stay() {
        // Four clean cache plateaus where sysfs lists three: the weakest is
        // strong (many tight points far off the ramp), so all stay, with a note.
        let ns = [
            1.0, 1.0, 1.0, 1.0, 4.0, 4.0, 4.0, 4.0, 15.0, 15.0, 15.0, 15.0,
        ];
        let mut ns = ns.to_vec();
        ns.extend([40.0, 40.0, 40.0, 40.0, 120.0, 120.0, 120.0, 120.0]);
        let points: Vec<CurvePoint> = ns
            .iter()
            .enumerate()
            .map(|(i, &v)| point(4096 << i, v, 0.01))
            .collect();
        let levels: Vec<Level> = (0..5).map(|k| level(&points, 4 * k, 4 * k + 4)).collect();
        let s = select(&points, &logs(&points), levels.clone(), 0.02, 3, &[]);
        assert_eq!(s.levels.len(), 5);
        assert!(
            s.notes.iter().any(|n| n.contains("sysfs lists 3")),
            "{:?}",
            s.notes
        );
        // The same fourth level on three noisy points gives way to the prior.
        let mut noisy = points.clone();
        for p in &mut noisy[12..16] {
            p.ns_min = p.ns * 0.86;
            p.ns_max = p.ns * 1.16;
        }
        let levels = vec![
            level(&noisy, 0, 4),
            level(&noisy, 4, 8),
            level(&noisy, 8, 12),
            level(&noisy, 13, 16),
            level(&noisy, 16, 20),
        ];
        let s = select(&noisy, &logs(&noisy), levels, 0.02, 3, &[]);
        assert_eq!(s.levels.len(), 4, "{:?}", s.notes);
        assert_eq!(s.unresolved.len(), 1);
        assert!(s.notes[0].contains("sysfs lists"), "{:?}", s.notes);
    }

    #[test]
    fn a_steady_climb_off_the_ramp_is_the_level_sysfs_lists() {
        // This Zen 4 guest's L3 share: 13.7 -> 17.1 ns over 2.6-5.9 MiB, too
        // steep for a plateau, far above the ramp from L2 (3.8) to memory (140).
        let sizes = [
            150, 230, 350, 520, 780, 1170, 1750, 2630, 3940, 5910, 8870, 13300, 19950, 29900,
        ];
        let ns = [
            3.8, 3.8, 4.2, 4.7, 6.8, 9.6, 11.9, 13.7, 14.8, 17.1, 23.6, 103.6, 110.0, 120.0,
        ];
        let points: Vec<CurvePoint> = sizes
            .iter()
            .zip(ns)
            .map(|(&s, v)| point(s << 10, v, 0.04))
            .collect();
        let levels = vec![level(&points, 0, 3), level(&points, 11, 14)];
        let s = select(&points, &logs(&points), levels.clone(), 0.03, 2, &[]);
        assert_eq!(s.levels.len(), 3, "{:?}", s.notes);
        assert!(s.notes[0].contains("taken as a level"), "{:?}", s.notes);
        assert!((13.0..18.0).contains(&s.levels[1].ns), "{}", s.levels[1].ns);
        // Without the prior (sysfs lists nothing), no level is invented.
        let s = select(&points, &logs(&points), levels, 0.03, 0, &[]);
        assert_eq!(s.levels.len(), 2);
    }

    #[test]
    fn the_level_sysfs_lists_is_the_slowest_stretch_not_the_ramp_below_it() {
        // A default sweep on a Zen 4 guest (L2 1 MiB, sysfs lists 3 levels):
        // 948 KiB-1.2 MiB at 8-10 ns, just past L2's edge and standing far
        // off the straight line to memory, is the L2 -> L3 mixture; the L3
        // share is 1.5-2.0 MiB at 11.7-13.6 ns, then memory.
        let sizes = [
            247, 321, 418, 543, 706, 917, 948, 979, 1046, 1192, 1550, 2015, 2082, 2152, 2298, 2620,
            3406, 4428, 5756, 7483, 9728,
        ];
        let ns = [
            (3.8, 3.8, 3.8),
            (4.1, 4.1, 4.1),
            (4.6, 4.6, 4.7),
            (5.0, 4.8, 5.2),
            (5.1, 5.1, 5.1),
            (5.1, 5.0, 5.3),
            (7.9, 7.9, 7.9),
            (7.9, 7.9, 7.9),
            (8.8, 8.5, 9.0),
            (10.3, 9.1, 11.8),
            (11.7, 11.6, 12.0),
            (13.5, 13.0, 14.9),
            (13.6, 12.9, 14.3),
            (77.3, 14.3, 102.8),
            (105.3, 19.0, 127.7),
            (100.7, 36.3, 116.5),
            (123.1, 122.6, 126.2),
            (134.4, 127.9, 138.9),
            (137.0, 128.3, 139.3),
            (139.4, 139.1, 139.7),
            (142.7, 142.0, 143.5),
        ];
        let points: Vec<CurvePoint> = sizes
            .iter()
            .zip(ns)
            .map(|(&s, (ns, ns_min, ns_max))| CurvePoint {
                size_bytes: s << 10,
                ns,
                ns_min,
                ns_max,
                cycles: 0.0,
            })
            .collect();
        let levels = vec![level(&points, 0, 6), level(&points, 16, 21)];
        let s = select(&points, &logs(&points), levels, 0.03, 2, &[]);
        assert_eq!(s.levels.len(), 3, "{:?}", s.notes);
        let l3 = &s.levels[1];
        assert_eq!(points[l3.start].size_bytes, 1550 << 10, "{:?}", s.notes);
        assert!((11.0..15.0).contains(&l3.ns), "{}", l3.ns);
    }

    #[test]
    fn a_stretch_climbing_at_the_ramps_pace_is_not_a_level() {
        // L2 at 3.8 ns to 148 KiB, then (sampled from 400 KiB) a finely
        // sampled climb, 12% a 10% step: a mixture of L2 and what lies
        // beyond, below the straight line to memory at 4 MiB.
        let mut points: Vec<CurvePoint> = (0..4)
            .map(|i| point((100 << 10) + (i << 14), 3.8, 0.01))
            .collect();
        let mut size = 400 << 10;
        let mut ns = 5.0;
        for _ in 0..4 {
            points.push(point(size, ns, 0.01));
            size = size * 11 / 10;
            ns *= 1.12;
        }
        for i in 0..4 {
            points.push(point((4 << 20) << i, 140.0, 0.01));
        }
        let levels = vec![level(&points, 0, 4), level(&points, 8, 12)];
        // It stands far off the straight line from L2 to memory...
        let stretch = level(&points, 4, 8);
        assert!(against_ramp(&points, &levels[0], &stretch, &levels[1], 0.03) > EVIDENCE_STRONG);
        // ...but climbs as the ramp does: no level, even where sysfs lists one.
        let s = select(&points, &logs(&points), levels, 0.03, 2, &[]);
        assert_eq!(s.levels.len(), 2, "{:?}", s.notes);
    }
}
