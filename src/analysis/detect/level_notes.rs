//! The remarks on each level: its capacity and bounds, unstable sizes, a
//! last plateau that may not be memory, and a climb past it.

use super::capacity::{self, Capacity};
use super::confidence::crosses;
use super::{CapacityBounds, CurvePoint, LEVEL_RATIO, Level, PLACED, Translation};
use crate::platform::caches::CacheInfo;
use crate::units::HumanBytes;

/// The note on a level's capacity: the estimate, its bracket, and where the
/// plateau starts to give way.
pub(super) fn capacity_note(c: &Capacity) -> String {
    let mut note = if c.low == c.high {
        format!("capacity about {}", HumanBytes(c.estimate))
    } else {
        format!(
            "capacity {}: it serves half the loads between {} and {}",
            HumanBytes(c.estimate),
            HumanBytes(c.low),
            HumanBytes(c.high)
        )
    };
    if c.high as f64 > c.low as f64 * PLACED {
        note += &format!(
            " (bracket {:.0}% wide; `memlat sweep` refines it unless --no-refine)",
            (c.high as f64 / c.low as f64 - 1.0) * 100.0
        );
    }
    if c.within_10pct < c.low {
        note += &format!(
            "; within 10% of its plateau up to {}",
            HumanBytes(c.within_10pct)
        );
    }
    note
}

/// Bounds further apart than this factor span a whole power-of-two size
/// class: no one capacity figure describes the level, so the text says so.
pub const WIDE_BOUNDS: f64 = 2.0;

/// The note on a level's bounds, where they say more than its capacity: far
/// apart, missing, or with the edge moving between repeats.
pub(super) fn bounds_note(points: &[CurvePoint], b: &CapacityBounds) -> Option<String> {
    let moved = capacity::edge_moved(points, b);
    let text = match (b.at_least_bytes, b.at_most_bytes) {
        (Some(low), Some(high)) if moved || high as f64 > low as f64 * WIDE_BOUNDS => format!(
            "serves at least {} and at most {} here (every repeat read its latency up to {0}, and the next level's from {1} on)",
            HumanBytes(low),
            HumanBytes(high)
        ),
        (Some(_), Some(_)) => return None,
        (Some(low), None) => format!(
            "serves at least {} here (every repeat read its latency up to there); no size read the next level's latency in every repeat",
            HumanBytes(low)
        ),
        (None, Some(high)) => format!(
            "serves at most {} here; no size read its latency in every repeat",
            HumanBytes(high)
        ),
        (None, None) => {
            "no size read its latency, or the next level's, in every repeat: no bounds".into()
        }
    };
    Some(if moved {
        text + "; its edge moved between repeats (a cache shared with other tenants, or a disturbed run): repeats at one size read both levels"
    } else {
        text
    })
}

/// The notes of one level: unstable sizes.
pub(super) fn stability_notes(
    points: &[CurvePoint],
    level: &Level,
    neighbours: &[f64],
) -> Vec<String> {
    let mut notes = Vec::new();
    let run = &points[level.start..level.end];
    let unstable = run
        .iter()
        .filter(|p| neighbours.iter().any(|&nb| crosses(p, level.ns, nb)))
        .count();
    if level.plateau && unstable > 0 {
        notes.push(format!(
            "unstable: at {unstable} of its {} sizes some repeats reached half-way to a neighbouring level (repeats {:.1}..{:.1} ns); shared with other tenants or disturbed, its figures are uncertain",
            run.len(),
            level.spread.0,
            level.spread.1
        ));
    }
    notes
}

/// The note on a last level whose plateau ends within the largest cache
/// sysfs lists: a buffer that such a cache can hold may be served by it, so
/// the plateau may be that cache's and memory beyond the sweep.
pub(super) fn short_memory_note(
    points: &[CurvePoint],
    level: &Level,
    sysfs: &[CacheInfo],
) -> Option<String> {
    let largest = sysfs
        .iter()
        .filter(|c| c.holds_data())
        .max_by_key(|c| c.size_bytes)?;
    let end = points[level.end - 1].size_bytes;
    (level.plateau && end <= largest.size_bytes).then(|| {
        format!(
            "the last plateau ({:.1} ns) ends at {}, within the {} L{} sysfs lists: it may be that cache's and memory beyond the sweep; extend it to larger sizes",
            level.ns,
            HumanBytes(end),
            HumanBytes(largest.size_bytes),
            largest.level
        )
    })
}

/// What the undetermined-climb note advises: `memlat sweep`'s page test,
/// which a curve read alone has not had.
pub(super) const CLIMB_ADVICE_UNTESTED: &str = "`memlat sweep` measures the climb's ends again with the other page size and says which; from one curve, run its sizes again with --pages 4k";

/// The same advice after a page test that could not tell (its upper
/// control fired): the sweep's own test is what failed, so run it again.
pub(super) const CLIMB_ADVICE_VOIDED: &str = "this sweep's page test could not tell (see its note): run the sweep again, or its sizes with --pages 4k";

/// The note on a climb past the last plateau, before any page test, ending
/// in `advice` ([`CLIMB_ADVICE_UNTESTED`] or [`CLIMB_ADVICE_VOIDED`]).
pub(super) fn translation_note(t: &Translation, memory_ns: f64, advice: &str) -> String {
    let ratio = t.latency_ns_at_largest / memory_ns;
    let step = if ratio < LEVEL_RATIO {
        "less than a level's step"
    } else {
        "a level's step or more: the sweep may also have stopped on the way to a farther level"
    };
    format!(
        "translation cost beyond {} or a farther level, undetermined: the latency climbs again, to {:.1} ns at the largest size ({ratio:.2}x memory's {memory_ns:.1} ns, {step}). Page walks once the TLBs no longer reach move with the page size (smaller pages bring the climb to smaller sizes, huge pages push it out); a farther tier (CXL memory, a remote node) stays put. {advice}",
        HumanBytes(t.starts_bytes),
        t.latency_ns_at_largest,
    )
}
