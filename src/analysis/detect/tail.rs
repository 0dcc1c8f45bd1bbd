//! What follows the last level: a curve that has flattened there (memory:
//! the level whose latency no larger buffer exceeds), one that climbs again
//! (translation cost, page walks once the TLBs no longer reach, or a
//! farther level: only the other page size tells, [`climb_cause`]), or one
//! that rose at its last size by a level's step (the sweep stopped before
//! memory). No latency makes a level memory: an L2 behind page walks on a
//! board without huge pages can read 60+ ns, tuned DRAM less.

use super::evidence::{EVIDENCE_STRONG, STRONG_POINTS};
use super::{CurvePoint, LEVEL_RATIO, Level};
use serde::{Deserialize, Serialize};

use crate::units::HumanBytes;

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

/// The climb's two ends measured again with another page size: the
/// latency where memory's plateau is and at the largest size, ns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PageTest {
    /// The other page size, bytes.
    pub page_bytes: u64,
    /// ns per load at memory's plateau, with that page.
    pub memory_ns: f64,
    /// ns per load at the largest size, with that page.
    pub largest_ns: f64,
}

/// Tells a climb past memory (from `memory_ns` to `largest_ns` with the
/// sweep's pages) by the same two sizes measured with another page size:
/// with smaller pages both ends pay the walks and the climb between them
/// flattens, with larger ones neither does; a farther tier climbs the same
/// whatever the page. The climb is translation when the other page's climb
/// is nearer none than this one.
pub fn climb_cause(memory_ns: f64, largest_ns: f64, other: &PageTest) -> ClimbCause {
    let here = (largest_ns / memory_ns).ln();
    let there = (other.largest_ns / other.memory_ns).ln();
    if there < here / 2.0 {
        ClimbCause::Translation
    } else {
        ClimbCause::Level
    }
}

impl super::Detection {
    /// Applies the page test of a climb past memory ([`climb_cause`]):
    /// the climb is translation when it vanished with the other page size,
    /// a farther tier (CXL memory, a remote node, a memory-side cache's
    /// misses) when it stayed. Says which in a note.
    pub fn apply_page_test(&mut self, test: &PageTest) {
        let (Some(t), Some(memory)) = (self.translation.as_mut(), self.levels.last()) else {
            return;
        };
        let cause = climb_cause(memory.latency_ns, t.latency_ns_at_largest, test);
        t.page_test = Some(*test);
        t.cause = Some(cause);
        let with = format!(
            "with {} pages the same two sizes read {:.1} and {:.1} ns",
            HumanBytes(test.page_bytes),
            test.memory_ns,
            test.largest_ns
        );
        self.notes.push(match cause {
            ClimbCause::Translation => format!(
                "the climb past memory moved with the page size ({with}): translation cost, confirmed"
            ),
            ClimbCause::Level => format!(
                "the climb past memory stayed when the page size changed ({with}): not translation but a farther tier (CXL memory, a remote NUMA node, a memory-side cache's misses); memory's figure is the nearer tier's, and the farther one reads {:.1} ns at the largest size",
                t.latency_ns_at_largest
            ),
        });
    }
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
        };
        assert_eq!(climb_cause(171.0, 210.0, &base), ClimbCause::Translation);
        // CXL behind local DRAM: 115 -> 190 ns, and with 4 KiB pages 140 -> 215.
        let cxl = PageTest {
            page_bytes: 4096,
            memory_ns: 140.0,
            largest_ns: 215.0,
        };
        assert_eq!(climb_cause(115.0, 190.0, &cxl), ClimbCause::Level);
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
