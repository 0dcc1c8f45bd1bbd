//! Stretches of the curve set aside, never reported as levels: what looked
//! like a plateau but a ramp explains as well, a mixture of two levels, a
//! pause; each with the note that says why.

use serde::{Deserialize, Serialize};

use super::{CurvePoint, Level};
use crate::units::HumanBytes;

/// A stretch of the curve that looked like a plateau but could not be told
/// from the ramp between two levels: reported as it is, never as a level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Unresolved {
    /// Smallest size of the stretch, bytes.
    pub from_bytes: u64,
    /// Largest size of the stretch, bytes.
    pub to_bytes: u64,
    /// Lowest latency (point median) in the stretch, ns.
    pub ns_min: f64,
    /// Highest latency (point median) in the stretch, ns.
    pub ns_max: f64,
}

/// What a note says of a stretch on the climb to memory that a ramp
/// explains nearly as well as a plateau.
pub(super) const ON_RAMP: &str =
    "fits the climb to memory nearly as well as a plateau; not taken for memory";

/// Notes each of `stretches` (`unresolved: A..B at X..Y ns` and `why`) and
/// adds it to `unresolved`.
pub(super) fn note_unresolved(
    notes: &mut Vec<String>,
    unresolved: &mut Vec<Unresolved>,
    stretches: Vec<Unresolved>,
    why: &str,
) {
    for stretch in stretches {
        notes.push(format!(
            "unresolved: {}..{} at {:.1}..{:.1} ns {why}",
            HumanBytes(stretch.from_bytes),
            HumanBytes(stretch.to_bytes),
            stretch.ns_min,
            stretch.ns_max
        ));
        unresolved.push(stretch);
    }
}

impl Unresolved {
    /// The stretch of `points[start..end]`.
    pub(super) fn of(points: &[CurvePoint], start: usize, end: usize) -> Unresolved {
        let run = &points[start..end];
        Unresolved {
            from_bytes: run[0].size_bytes,
            to_bytes: run[run.len() - 1].size_bytes,
            ns_min: run.iter().map(|p| p.ns).fold(f64::INFINITY, f64::min),
            ns_max: run.iter().map(|p| p.ns).fold(0.0, f64::max),
        }
    }

    /// Whether the stretch overlaps `from..=to` (bytes).
    pub fn overlaps(&self, from: u64, to: u64) -> bool {
        self.from_bytes <= to && from <= self.to_bytes
    }
}

/// Takes `levels[k]` out as an unresolved stretch, with the note
/// `unresolved: A..B at X..Y ns (N points) {why}; not reported as a level`.
pub(super) fn set_aside(
    points: &[CurvePoint],
    levels: &mut Vec<Level>,
    k: usize,
    why: &str,
    notes: &mut Vec<String>,
    unresolved: &mut Vec<Unresolved>,
) {
    let l = levels.remove(k);
    let stretch = Unresolved::of(points, l.start, l.end);
    notes.push(format!(
        "unresolved: {}..{} at {:.1}..{:.1} ns ({} points) {why}; not reported as a level",
        HumanBytes(stretch.from_bytes),
        HumanBytes(stretch.to_bytes),
        stretch.ns_min,
        stretch.ns_max,
        l.end - l.start
    ));
    unresolved.push(stretch);
}
