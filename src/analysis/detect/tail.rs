//! What follows the last level: a curve that has flattened there (memory:
//! the level whose latency no larger buffer exceeds), one that climbs again
//! (translation cost, page walks once the TLBs no longer reach, or a
//! farther level: only the other page size tells, [`climb_cause`]), or one
//! that rose at its last size by a level's step (the sweep stopped before
//! memory). Walks that cost a level's step make a plateau of their own: the
//! curve's last step is told the same way ([`step_cause`]). No latency makes a level memory: an L2 behind page walks on a
//! board without huge pages can read 60+ ns, tuned DRAM less.

use super::evidence::{EVIDENCE_STRONG, STRONG_POINTS};
use super::{CurvePoint, LEVEL_RATIO, Level};
use serde::{Deserialize, Serialize};

/// A climb past the last plateau: translation cost where the page test says
/// so ([`ClimbCause::Translation`]), a farther level where it says not;
/// undetermined (`cause` absent) from one curve alone.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Translation {
    /// The first size from which the latency stays above memory's by 10%.
    pub starts_bytes: u64,
    /// The latency at the largest size measured, ns.
    pub latency_ns_at_largest: f64,
    /// The climb's ends measured again with the other page size, where the
    /// sweep did ([`climb_cause`]); absent from one curve alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_test: Option<PageTest>,
    /// What the page test found the climb to be; absent without one:
    /// undetermined (one page size cannot tell page walks from a farther
    /// tier, both are a cost paid by a growing share of the loads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<ClimbCause>,
}

/// Latencies this far above the last level's, from some size to the end,
/// are a climb: about three times the 2-3% by which repeats of one size at
/// memory differ, so noise does not make one.
pub const CLIMB_RATIO: f64 = 1.1;

/// The climb must hold for this many sizes (one high point is noise).
pub const CLIMB_POINTS: usize = 2;

/// What a climb past memory is: translation moves with the page size (the
/// walks start where the TLBs stop reaching, a reach in pages), a farther
/// tier does not (CXL memory, a remote node, a memory-side cache's misses
/// start at a size in bytes). One curve cannot tell the two apart: they
/// have the same shape, memory plus a cost paid by a growing share of the
/// loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClimbCause {
    /// The climb vanished with the other page size: page walks.
    Translation,
    /// The climb stayed: a level beyond memory.
    Level,
}

/// The page test: the last step's and the climb's ends measured again with
/// another page size ([`crate::analysis::detect::detect_with_pages`] reads
/// it). ns per load, each at the size [`page_test_sizes`] names.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PageTest {
    /// The other page size, bytes.
    pub page_bytes: u64,
    /// ns per load at the first size of the last level's plateau, with that page.
    pub memory_ns: f64,
    /// ns per load at the largest size, with that page.
    pub largest_ns: f64,
    /// The last step's lower end: the measured size nearest the middle of
    /// the plateau below the last level (its first size in files written
    /// before), bytes; absent with one level, and in files written before
    /// the last step was tested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub below_bytes: Option<u64>,
    /// ns per load there, with that page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub below_ns: Option<f64>,
    /// ns per load there with the sweep's own page, measured beside it: the
    /// control that the level below still serves that size now (a shared
    /// level's share moves with its neighbours between the sweep and the test).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub below_here_ns: Option<f64>,
    /// ns per load at the last level's first size with the sweep's own
    /// page, measured beside `memory_ns`: the control that the last level
    /// still serves that size now (a shared level's share can grow over it
    /// between the sweep and the test, and the test then times the level
    /// below at both ends); absent in files written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_here_ns: Option<f64>,
}

/// What the page test measures again with the other page: the middle of
/// the plateau below the last level (the last step's lower end; `None`
/// with one level), the first size of the last level's plateau (the
/// step's upper end, and the lower end of a climb, which may begin on the
/// plateau itself) and the largest size (the climb's upper end). The
/// middle, not the first size, below: that plateau's first size lies at
/// the edge where a shared level's moving share lands (memory's first size
/// when the last "level" is page walks or a farther tier), and on a Zen 3
/// guest the share moved over it between the sweep and the test often
/// enough that the control voided the test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageSizes {
    /// The middle of the plateau below the last level, bytes.
    pub below: Option<u64>,
    /// The first size of the last level's plateau, bytes.
    pub memory: u64,
    /// The largest size, bytes.
    pub largest: u64,
}

/// The sizes the page test measures for detection `d` of `curve`; `None`
/// where the last level has no plateau (the curve was still rising:
/// nothing to test). The middle is the measured size nearest the
/// plateau's geometric middle, so the sweep's own reading of it is on the
/// curve.
pub fn page_test_sizes(d: &super::Detection, curve: &[CurvePoint]) -> Option<PageSizes> {
    let n = d.levels.len();
    let [memory, _] = d.levels.last()?.plateau_bytes?;
    let below = n
        .checked_sub(2)
        .and_then(|k| d.levels[k].plateau_bytes)
        .and_then(|plateau| middle(curve, plateau));
    Some(PageSizes {
        below,
        memory,
        largest: curve.iter().map(|p| p.size_bytes).max()?,
    })
}

/// The measured size within `[first, last]` nearest their geometric middle.
pub(super) fn middle(curve: &[CurvePoint], [first, last]: [u64; 2]) -> Option<u64> {
    let mid = ((first as f64).ln() + (last as f64).ln()) / 2.0;
    curve
        .iter()
        .map(|p| p.size_bytes)
        .filter(|s| (first..=last).contains(s))
        .min_by(|a, b| {
            let off = |s: &u64| ((*s as f64).ln() - mid).abs();
            off(a).total_cmp(&off(b))
        })
}

/// Tells a climb past memory (from `memory_ns` to `largest_ns` with the
/// sweep's pages) by the same two sizes measured with another page size.
/// A farther tier adds the same ns whatever the page (the loads it serves
/// pay its latency, and the walks both ends pay alike cancel). Translation
/// moves with the page: with smaller pages both ends pay the walks and the
/// climb flattens, or the small pages' walks begin between the two sizes
/// and it grows (a guest whose small pages walk through nested tables);
/// with larger ones neither end pays. The climb is translation when the
/// other page's climb, in ns, differs from this one by more than half of
/// it (nearer none or double than the same); a ratio of the ends would
/// not do: a walk both ends pay shrinks a tier's ratio, not its ns.
pub fn climb_cause(memory_ns: f64, largest_ns: f64, other: &PageTest) -> ClimbCause {
    let here = largest_ns - memory_ns;
    let there = other.largest_ns - other.memory_ns;
    if (there - here).abs() > here / 2.0 {
        ClimbCause::Translation
    } else {
        ClimbCause::Level
    }
}

/// Tells the curve's last step, from a level at `below_ns` to the last
/// level, by its two ends measured with another page size (`None` where
/// the test has no lower end). Translation only adds to a load's cost, and
/// a page whose walks both ends pay alike (smaller pages, which outgrow
/// their reach long before either) or neither pays (larger ones) leaves a
/// step that is translation alone at nothing, while a level's step keeps
/// its ns, the latency the next level adds. A level answers at least
/// [`LEVEL_RATIO`] slower than the one below it, and that one answers at
/// most the lesser reading of the lower end (each reading is the level
/// plus its translation): the step is a level when what stays of it, in
/// ns, on top of that reading reaches halfway to a level's step in log
/// scale (the square root of [`LEVEL_RATIO`]), nearer a level than none,
/// as [`climb_cause`] halves a climb. A log ratio of the ends would not do:
/// the walk both ends pay shrinks the ratio of a genuine step (an L3 at
/// 36 ns to memory at 170 plus a 150 ns walk reads 186 to 320 with small
/// pages, 1.7x; the step's 134 ns stay).
pub fn step_cause(below_ns: f64, other: &PageTest) -> Option<ClimbCause> {
    let lower = below_ns
        .min(other.below_ns?)
        .min(other.below_here_ns.unwrap_or(f64::INFINITY));
    let stays = other.memory_ns - other.below_ns?;
    Some(if lower + stays >= lower * LEVEL_RATIO.sqrt() {
        ClimbCause::Level
    } else {
        ClimbCause::Translation
    })
}

/// How the curve ends after its last level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tail {
    /// Flat at the last level (or no points after it).
    Flat,
    /// Climbing past the last plateau for [`CLIMB_POINTS`] sizes or more:
    /// the plateau is memory if the climb is translation cost, which the
    /// page test tells ([`climb_cause`]); until then undetermined.
    Translation(Translation),
    /// The last size alone rose by a level's step ([`LEVEL_RATIO`]) or
    /// more: the sweep stopped on the way to the next level.
    StillRising,
}

/// Reads the points after the last plateau `last_level`: `smoothed` for the
/// climb's shape, `points` for the figure at the largest size.
pub(super) fn read(points: &[CurvePoint], smoothed: &[CurvePoint], last_level: &Level) -> Tail {
    let last = points.len() - 1;
    let after = &smoothed[last_level.end..];
    if after.is_empty() {
        return Tail::Flat;
    }
    let lone_high =
        last_level.end <= last && points[last].ns_min > last_level.ns * super::MERGE_RATIO;
    // The first size from which every later point is above the level by 10%.
    let above = |p: &CurvePoint| p.ns > last_level.ns * CLIMB_RATIO;
    let held = after.iter().rev().take_while(|p| above(p)).count();
    if held < CLIMB_POINTS {
        // One high point: noise, unless every repeat of it rose by a level's step.
        return if lone_high && points[last].ns_min >= last_level.ns * LEVEL_RATIO {
            Tail::StillRising
        } else {
            Tail::Flat
        };
    }
    Tail::Translation(Translation {
        starts_bytes: after[after.len() - held].size_bytes,
        latency_ns_at_largest: points[last].ns,
        page_test: None,
        cause: None,
    })
}

/// The first plateau of the curve's last level (`m`, its index in
/// `plateaus`) when another plateau follows it within a level's step and it
/// lacks the strong evidence a level beyond the ordinary needs
/// ([`STRONG_POINTS`] points, [`EVIDENCE_STRONG`] against the ramp from the
/// plateau below to the next one): a noisy stretch of the climb to the last
/// level, which would otherwise be taken for it and the true last level for
/// a climb past it. (A true last plateau before a translation climb spans
/// many sizes.)
pub(super) fn ramp_memory(
    points: &[CurvePoint],
    plateaus: &[Level],
    m: usize,
    floor: f64,
) -> Option<usize> {
    if m == 0 || m + 1 >= plateaus.len() {
        return None;
    }
    let n = plateaus[m].end - plateaus[m].start;
    let e = super::evidence::against_ramp(
        points,
        &plateaus[m - 1],
        &plateaus[m],
        &plateaus[m + 1],
        floor,
    );
    (n < STRONG_POINTS && e < EVIDENCE_STRONG).then_some(m)
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

    fn level(points: &[CurvePoint], start: usize, end: usize) -> Level {
        Level::of(points, start, end, true)
    }

    #[test]
    fn a_climb_that_stays_with_the_page_is_a_tier() {
        // The Golden Cove guest's 2 MiB-page climb (171 -> 210 ns) with
        // 4 KiB pages: both ends pay walks, 230 and 236 ns: translation.
        let base = PageTest {
            page_bytes: 4096,
            memory_ns: 230.0,
            largest_ns: 236.0,
            below_bytes: None,
            below_ns: None,
            below_here_ns: None,
            memory_here_ns: None,
        };
        assert_eq!(climb_cause(171.0, 210.0, &base), ClimbCause::Translation);
        // CXL behind local DRAM: 115 -> 190 ns, and with 4 KiB pages 140 -> 215.
        let cxl = PageTest {
            page_bytes: 4096,
            memory_ns: 140.0,
            largest_ns: 215.0,
            below_bytes: None,
            below_ns: None,
            below_here_ns: None,
            memory_here_ns: None,
        };
        assert_eq!(climb_cause(115.0, 190.0, &cxl), ClimbCause::Level);
        // The same tier in a guest whose 4 KiB walks cost 300 ns at both
        // ends: the ratio shrinks (415 -> 490), the 75 ns stay.
        let nested = PageTest {
            memory_ns: 415.0,
            largest_ns: 490.0,
            ..cxl
        };
        assert_eq!(climb_cause(115.0, 190.0, &nested), ClimbCause::Level);
        // An AMD EPYC KVM guest swept to 256 MiB with THP (186 -> 235 ns):
        // with 4 KiB pages 176 -> 525, the walks begin between: translation.
        let grows = PageTest {
            memory_ns: 176.2,
            largest_ns: 524.7,
            ..cxl
        };
        assert_eq!(climb_cause(186.7, 234.6, &grows), ClimbCause::Translation);
    }

    #[test]
    fn a_last_step_is_told_by_what_stays_of_it() {
        let other = |below_ns, memory_ns| PageTest {
            page_bytes: 4096,
            memory_ns,
            largest_ns: memory_ns,
            below_bytes: Some(16 << 20),
            below_ns: Some(below_ns),
            below_here_ns: None,
            memory_here_ns: None,
        };
        // Memory at 168 ns, then a plateau of 150 ns walks at 307: with
        // small pages both ends pay the walk, 318 and 320.
        let walks = other(318.0, 320.0);
        assert_eq!(step_cause(168.0, &walks), Some(ClimbCause::Translation));
        // An L3 at 36 ns to memory at 170 plus the same walk, read 301: with
        // small pages 186 and 320, the step's 134 ns stay.
        let level = other(186.0, 320.0);
        assert_eq!(step_cause(36.0, &level), Some(ClimbCause::Level));
        // A remote node's plateau at 1.5x local (113 -> 170, 20 ns walks).
        let remote = other(133.0, 190.0);
        assert_eq!(step_cause(113.0, &remote), Some(ClimbCause::Level));
        // No lower end measured (a file from before the test): untold.
        let old = PageTest {
            below_ns: None,
            ..walks
        };
        assert_eq!(step_cause(168.0, &old), None);
    }

    #[test]
    fn a_stretch_on_the_climb_to_memory_is_not_memory() {
        // L3 14 ns, then 54, 89, 104 on the way to memory at 140: the
        // 89-104 pair with a third point is no better than the climb.
        let sizes = [
            3300, 4300, 5600, 7300, 9800, 11000, 12400, 16100, 20900, 27100, 35300, 45900,
        ];
        let ns = [
            14.0, 14.7, 15.6, 16.3, 54.0, 80.0, 89.0, 104.0, 129.0, 137.0, 141.0, 146.0,
        ];
        let points: Vec<CurvePoint> = sizes
            .iter()
            .zip(ns)
            .map(|(&s, v)| point(s << 10, v, 0.3))
            .collect();
        let levels = vec![
            level(&points, 0, 4),
            level(&points, 5, 8),
            level(&points, 8, 12),
        ];
        // Taken for the start of the last level, the 80-104 stretch goes.
        assert_eq!(ramp_memory(&points, &levels, 1, 0.05), Some(1));
        // A real memory plateau with a translation climb after it stays.
        let levels = vec![level(&points, 0, 4), level(&points, 8, 12)];
        assert_eq!(ramp_memory(&points, &levels, 1, 0.05), None);
    }
}
