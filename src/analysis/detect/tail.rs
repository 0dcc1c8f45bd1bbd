//! What follows the memory level: a curve that has flattened at memory, one
//! that climbs again by less than a level's step (translation cost: page
//! walks once the TLBs no longer reach, not a cache), or one still rising
//! (the sweep stopped before memory).

use super::{CurvePoint, LEVEL_RATIO, Level, MEMORY_FLOOR_NS};
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

/// How the curve ends after its last level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tail {
    /// Flat at the last level (or no points after it).
    Flat,
    /// Climbing past memory by less than [`LEVEL_RATIO`].
    Translation(Translation),
    /// Rising: the last level is not memory, or memory is not reached.
    StillRising,
}

/// Removes the plateaus after memory that sit less than [`LEVEL_RATIO`]
/// above the one before them (the second and later steps of a translation
/// climb): memory is at least [`MEMORY_FLOOR_NS`], and a cache beyond it
/// would be a whole level's step slower.
pub(super) fn drop_translation_plateaus(levels: &mut Vec<Level>) {
    while levels.len() >= 2 {
        let (prev, last) = (&levels[levels.len() - 2], &levels[levels.len() - 1]);
        if prev.ns >= MEMORY_FLOOR_NS && last.ns < prev.ns * LEVEL_RATIO {
            levels.pop();
        } else {
            break;
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
        return if lone_high && points[last].ns >= memory.ns * LEVEL_RATIO {
            Tail::StillRising
        } else {
            Tail::Flat
        };
    }
    if highest >= memory.ns * LEVEL_RATIO {
        return Tail::StillRising;
    }
    Tail::Translation(Translation {
        starts_bytes: after[after.len() - held].size_bytes,
        latency_ns_at_largest: points[last].ns,
    })
}
