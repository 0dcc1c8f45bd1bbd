//! What follows the memory level: a curve that has flattened at memory, one
//! that climbs again by less than a level's step (translation cost: page
//! walks once the TLBs no longer reach, not a cache), or one still rising
//! (the sweep stopped before memory).

use super::{CurvePoint, Level, MEMORY_FLOOR_NS};
use serde::{Deserialize, Serialize};

/// A climb past memory that is translation cost, not a level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Translation {
    /// The first size from which the latency stays above memory's by 10%.
    pub starts_bytes: u64,
    /// The latency at the largest size measured, ns.
    pub latency_ns_at_largest: f64,
}

/// Latencies this far above memory's, from some size to the end, are a climb.
pub const CLIMB_RATIO: f64 = 1.1;

/// The climb must hold for this many sizes (one high point is noise).
pub const CLIMB_POINTS: usize = 2;

/// Past memory, a climb of less than this factor is translation cost: a
/// page walk under nested paging (a VM) can cost more than one DRAM access,
/// and no cache level lies beyond memory on one node.
pub const TRANSLATION_RATIO: f64 = 2.5;

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
    })
}
