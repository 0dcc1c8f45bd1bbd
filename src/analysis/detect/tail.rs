//! What follows the memory level: a curve that has flattened at memory, one
//! that climbs again by less than a level's step (translation cost: page
//! walks once the TLBs no longer reach, not a cache), or one still rising
//! (the sweep stopped before memory).

use super::{CurvePoint, Level, MEMORY_FLOOR_NS};
use serde::{Deserialize, Serialize};

use crate::units::HumanBytes;

/// A climb past memory that is translation cost, not a level.
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
    /// What the page test found the climb to be; absent without one (a
    /// prior: translation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<ClimbCause>,
}

/// Latencies this far above memory's, from some size to the end, are a climb.
pub const CLIMB_RATIO: f64 = 1.1;

/// The climb must hold for this many sizes (one high point is noise).
pub const CLIMB_POINTS: usize = 2;

/// Past memory, a climb of less than this factor is taken for translation
/// cost when only one page size was measured (a page walk under nested
/// paging can cost more than one DRAM access): a prior, not a verdict. A
/// farther tier (CXL at 2.3-3.6x local, a remote node at 1.5-2x) climbs as
/// much; [`climb_cause`] tells them apart by the page size, and the
/// detector's note says the climb is untested until then.
pub const TRANSLATION_RATIO: f64 = 2.5;

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
    /// Climbing past memory by less than [`TRANSLATION_RATIO`].
    Translation(Translation),
    /// Rising: the last level is not memory, or memory is not reached.
    StillRising,
}

/// Removes the plateaus after the first memory-class one (at least
/// [`MEMORY_FLOOR_NS`]) that sit less than [`TRANSLATION_RATIO`] above it:
/// the steps of a translation climb, not levels.
pub(super) fn drop_translation_plateaus(levels: &mut Vec<Level>) {
    if let Some(memory) = levels.iter().position(|l| l.ns >= MEMORY_FLOOR_NS) {
        let limit = levels[memory].ns * TRANSLATION_RATIO;
        let mut k = memory + 1;
        while k < levels.len() && levels[k].ns < limit {
            k += 1;
        }
        if k == levels.len() {
            levels.truncate(memory + 1);
        }
    }
}

/// Reads the points after `memory` (the last plateau): `smoothed` for the
/// climb's shape, `points` for the figure at the largest size.
pub(super) fn read(points: &[CurvePoint], smoothed: &[CurvePoint], memory: &Level) -> Tail {
    let last = points.len() - 1;
    let after = &smoothed[memory.end..];
    let lone_high = memory.end <= last && points[last].ns_min > memory.ns * super::MERGE_RATIO;
    if after.is_empty() {
        return Tail::Flat;
    }
    let highest = after.iter().map(|p| p.ns).fold(0.0, f64::max);
    if memory.ns < MEMORY_FLOOR_NS {
        let rising = highest > memory.ns * super::MERGE_RATIO || lone_high;
        return if rising {
            Tail::StillRising
        } else {
            Tail::Flat
        };
    }
    // The first size from which every later point is above memory by 10%.
    let above = |p: &CurvePoint| p.ns > memory.ns * CLIMB_RATIO;
    let held = after.iter().rev().take_while(|p| above(p)).count();
    if held < CLIMB_POINTS {
        return if lone_high && points[last].ns >= memory.ns * TRANSLATION_RATIO {
            Tail::StillRising
        } else {
            Tail::Flat
        };
    }
    if highest >= memory.ns * TRANSLATION_RATIO {
        return Tail::StillRising;
    }
    Tail::Translation(Translation {
        starts_bytes: after[after.len() - held].size_bytes,
        latency_ns_at_largest: points[last].ns,
        page_test: None,
        cause: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
