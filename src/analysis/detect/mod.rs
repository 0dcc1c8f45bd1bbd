//! Finds cache levels from a measured latency curve alone: plateaus and the
//! transitions between them (seed 004, Problem 1). sysfs claims are only
//! shown beside the result, never used to find it.
//!
//! The method, in order:
//! - [`clean`] sorts the points, merges repeated sizes and sets disturbed
//!   repeats aside, and reads a point whose repeats read two levels at its
//!   fastest repeat (interference only slows a load);
//! - [`segment`] groups the points into plateaus (3+ points flat relative to
//!   their neighbours, however short) and transitions;
//! - neighbouring plateaus less than [`LEVEL_RATIO`] apart are one level (a
//!   wobble, not a step);
//! - the first plateau of at least [`MEMORY_FLOOR_NS`] is memory; a climb
//!   after it (of less than 2.5x) is translation cost, not a level ([`tail`]);
//! - each level's latency is the median of its points, its spread the lowest
//!   and highest repeat seen on it; its capacity is where the curve leaves
//!   the plateau (half-way, in log, to the next level, or twice the plateau),
//!   with the measured sizes either side as its bracket ([`capacity`]);
//! - a confidence in 0..1 per level from the points behind it, its contrast
//!   with its neighbours, how stable its repeats are and how wide its bracket
//!   is ([`confidence`]).

mod capacity;
mod clean;
mod confidence;
mod evidence;
mod notes;
mod segment;
pub mod tail;
#[cfg(test)]
mod tests;

pub use capacity::{
    CAPACITY_DEFINITION, CapacityBounds, PLACED, crossing_size, leave_threshold, pool_bounds,
    refinement_sizes,
};
pub use evidence::{EVIDENCE_MIN, EVIDENCE_STRONG, Evidence, Unresolved};
pub use notes::ratio;
use notes::{compare_with_sysfs, describe_transitions, sysfs_level};
pub use tail::Translation;

use serde::{Deserialize, Serialize};

use crate::platform::caches::CacheInfo;
use crate::units::HumanBytes;
use capacity::Capacity;
use confidence::{confidence, crosses, half_log_spread};
use segment::{MAX_BAND, MERGE_RATIO, median};
use tail::Tail;

/// One point of a latency curve: working-set size and its latency.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Working-set size in bytes.
    pub size_bytes: u64,
    /// Representative latency per load (median over repeats), ns.
    pub ns: f64,
    /// Lowest latency over repeats, ns.
    pub ns_min: f64,
    /// Highest latency over repeats, ns.
    pub ns_max: f64,
    /// Representative latency in core cycles (0 or NaN when unknown).
    pub cycles: f64,
}

/// One level found in the curve.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DetectedLevel {
    /// `L1`, `L2`, `L3`... in the order found, and `memory` last.
    pub name: String,
    /// Estimated capacity in bytes (see [`CAPACITY_DEFINITION`]); `None` for memory.
    pub size_bytes: Option<u64>,
    /// The measured sizes either side of the capacity: `[low, high]`.
    #[serde(default)]
    pub size_bracket_bytes: Option<[u64; 2]>,
    /// The largest measured size whose latency is within 10% of the plateau.
    #[serde(default)]
    pub size_within_10pct_bytes: Option<u64>,
    /// The smallest and largest measured sizes on the plateau itself: where
    /// commands place a size inside this level (its middle, in log scale).
    #[serde(default)]
    pub plateau_bytes: Option<[u64; 2]>,
    /// What every repeat agrees this level serves and does not serve
    /// (`None` for memory, and in files written before memlat 0.2).
    #[serde(default)]
    pub capacity_bounds: Option<CapacityBounds>,
    /// This sweep's own bounds where `capacity_bounds` pools them with
    /// other sweeps of this machine ([`capacity::pool_bounds`]); absent
    /// when they are this sweep's alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_bounds_this_sweep: Option<CapacityBounds>,
    /// How many sweeps `capacity_bounds` pools, this one included; absent
    /// when one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_bounds_sweeps: Option<u32>,
    /// Plateau latency (median of its points), ns.
    pub latency_ns: f64,
    /// Plateau latency in core cycles (median of its points; 0 when unknown).
    pub latency_cycles: f64,
    /// 0..1: how clearly the data support this level.
    pub confidence: f64,
    /// What sysfs claims for the data cache of this level number, if any.
    pub sysfs_size_bytes: Option<u64>,
    /// Lowest and highest repeat seen on the plateau, ns.
    pub spread_ns: (f64, f64),
    /// What stands behind the level: its test against a ramp, the passes over its points.
    #[serde(default)]
    pub evidence: Evidence,
    /// Remarks: capacity bounds, instability, disagreement with sysfs.
    pub notes: Vec<String>,
}

/// The result of detection.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Detection {
    /// Levels found, smallest first, memory last (empty only without points).
    pub levels: Vec<DetectedLevel>,
    /// Stretches that looked like plateaus but could not be told from the
    /// ramp between two levels (or were one more than sysfs lists, without
    /// strong evidence): never reported as levels.
    #[serde(default)]
    pub unresolved: Vec<Unresolved>,
    /// A climb past memory that is translation cost, not a level.
    #[serde(default)]
    pub translation: Option<Translation>,
    /// How `size_bytes` is defined.
    #[serde(default)]
    pub capacity_definition: String,
    /// Remarks on the whole curve: transitions, unstable sizes, what sysfs lists that the data do not show.
    pub notes: Vec<String>,
}

impl Detection {
    /// Fills each level's `evidence` from a sweep that measured
    /// `remeasured` sizes again: how many of its plateau's points were, and
    /// whether the first pass (`first_pass`: plateaus as `(from, to, ns)`)
    /// found a level there too (overlapping sizes, latency within [`LEVEL_RATIO`]).
    pub fn record_passes(&mut self, remeasured: &[u64], first_pass: &[(u64, u64, f64)]) {
        if remeasured.is_empty() {
            return;
        }
        for level in &mut self.levels {
            let Some([from, to]) = level.plateau_bytes else {
                continue;
            };
            let count = remeasured
                .iter()
                .filter(|&&s| (from..=to).contains(&s))
                .count() as u32;
            if count == 0 {
                continue;
            }
            level.evidence.remeasured_points = count;
            level.evidence.passes = 2;
            level.evidence.agree = first_pass
                .iter()
                .any(|&(a, b, ns)| a <= to && from <= b && same_level(ns, level.latency_ns));
        }
    }

    /// The plateaus found, as `(from_bytes, to_bytes, ns)`.
    pub fn plateaus(&self) -> Vec<(u64, u64, f64)> {
        self.levels
            .iter()
            .filter_map(|l| l.plateau_bytes.map(|[a, b]| (a, b, l.latency_ns)))
            .collect()
    }
}

/// A repeat below this fraction of its point's median is a disturbed timing.
pub const BOGUS_FRACTION: f64 = 0.1;

/// Repeats at one size that differ by this factor or more disagree about the level serving it.
pub const UNSTABLE_RATIO: f64 = 2.0;

/// sysfs and measured capacities further apart than this factor disagree.
pub const DISAGREE_RATIO: f64 = 1.5;

/// Two levels differ in latency by at least this factor: plateaus closer
/// than this are one level (or memory and a translation climb after it).
pub const LEVEL_RATIO: f64 = 1.5;

/// Whether two latencies can be one level's: within [`LEVEL_RATIO`] of
/// each other.
pub fn same_level(a_ns: f64, b_ns: f64) -> bool {
    a_ns.max(b_ns) < a_ns.min(b_ns) * LEVEL_RATIO
}

/// Memory is at least this slow: every cache level memlat has met is faster
/// (L3s are 10-45 ns), every DRAM slower (80+ ns).
pub const MEMORY_FLOOR_NS: f64 = 60.0;

/// A level before naming: a point range and its figures.
#[derive(Debug, Clone)]
struct Level {
    start: usize,
    end: usize,
    plateau: bool,
    ns: f64,
    cycles: f64,
    spread: (f64, f64),
}

impl Level {
    fn of(points: &[CurvePoint], start: usize, end: usize, plateau: bool) -> Level {
        let run = &points[start..end];
        let ns: Vec<f64> = run.iter().map(|p| p.ns).collect();
        let cycles: Vec<f64> = run
            .iter()
            .map(|p| p.cycles)
            .filter(|c| c.is_finite() && *c > 0.0)
            .collect();
        Level {
            start,
            end,
            plateau,
            ns: median(&ns),
            cycles: if cycles.is_empty() {
                0.0
            } else {
                median(&cycles)
            },
            spread: (
                run.iter().map(|p| p.ns_min).fold(f64::INFINITY, f64::min),
                run.iter().map(|p| p.ns_max).fold(0.0, f64::max),
            ),
        }
    }
}

/// The curve with each latency replaced by its running median of three: for
/// grouping, capacities and the end of the curve; levels report raw medians.
fn smoothed(points: &[CurvePoint]) -> Vec<CurvePoint> {
    let raw: Vec<f64> = points.iter().map(|p| p.ns.ln()).collect();
    points
        .iter()
        .zip(segment::smooth(&raw))
        .map(|(p, y)| CurvePoint { ns: y.exp(), ..*p })
        .collect()
}

/// The plateaus of the curve as levels, neighbours closer than
/// [`LEVEL_RATIO`] joined (the points between them included).
fn plateau_levels(
    points: &[CurvePoint],
    smoothed: &[CurvePoint],
    sigma: f64,
    unresolved: &mut Vec<Unresolved>,
) -> Vec<Level> {
    let x: Vec<f64> = points.iter().map(|p| (p.size_bytes as f64).ln()).collect();
    let y: Vec<f64> = smoothed.iter().map(|p| p.ns.ln()).collect();
    let mut levels: Vec<Level> = Vec::new();
    for g in segment::segment(&x, &y).iter().filter(|g| g.plateau) {
        let level = Level::of(points, g.start, g.end, true);
        match levels.last() {
            Some(prev)
                if prev.ns < MEMORY_FLOOR_NS
                    && level.ns < MEMORY_FLOOR_NS
                    && level.ns < prev.ns * LEVEL_RATIO =>
            {
                let start = prev.start;
                *levels.last_mut().unwrap() = Level::of(points, start, g.end, true);
            }
            _ => levels.push(level),
        }
    }
    // A short memory-class stretch on the climb to memory is not memory.
    while let Some(k) = evidence::ramp_memory(points, &levels, sigma) {
        let l = levels.remove(k);
        unresolved.push(Unresolved::of(points, l.start, l.end));
    }
    tail::drop_translation_plateaus(&mut levels);
    // Smoothing may pull a last point that truly rose back onto the plateau;
    // when every repeat of it is well above, it is not on the plateau.
    let last = points.len() - 1;
    if let Some(l) = levels.last_mut()
        && l.end == last + 1
        && l.end - l.start > segment::MIN_POINTS
        && points[last].ns_min > l.ns * MERGE_RATIO
    {
        *l = Level::of(points, l.start, last, true);
    }
    levels
}

/// How many cache levels sysfs lists data (or unified) caches at: the prior
/// on how many levels the curve shows.
fn sysfs_cache_levels(sysfs: &[CacheInfo]) -> usize {
    let mut levels: Vec<u32> = sysfs
        .iter()
        .filter(|c| c.holds_data())
        .map(|c| c.level)
        .collect();
    levels.sort_unstable();
    levels.dedup();
    levels.len()
}

/// Where the curve pauses inside a transition without a plateau: each
/// stretch with its note.
fn pause_notes(
    points: &[CurvePoint],
    smoothed: &[CurvePoint],
    levels: &[Level],
) -> Vec<(Unresolved, String)> {
    let y: Vec<f64> = smoothed.iter().map(|p| p.ns.ln()).collect();
    let mut notes = Vec::new();
    let mut gaps: Vec<(usize, usize)> = levels.windows(2).map(|w| (w[0].end, w[1].start)).collect();
    if let Some(first) = levels.first() {
        gaps.insert(0, (0, first.start));
    }
    for (from, to) in gaps {
        for (start, end) in segment::pauses(&y, from, to) {
            let run = &points[start..end];
            // Refined sizes sit close together: a pause spans some size.
            let span = run[run.len() - 1].size_bytes as f64 / run[0].size_bytes as f64;
            if span < segment::MIN_SPAN {
                continue;
            }
            let lo = run.iter().map(|p| p.ns).fold(f64::INFINITY, f64::min);
            let hi = run.iter().map(|p| p.ns).fold(0.0, f64::max);
            // A pause worth naming stands apart from the plateaus either side.
            let below = levels.iter().rev().find(|l| l.end <= start && l.plateau);
            let above = levels.iter().find(|l| l.start >= end && l.plateau);
            let apart = below.is_none_or(|l| lo >= l.ns * MAX_BAND)
                && above.is_none_or(|l| hi * MAX_BAND <= l.ns);
            if apart {
                let stretch = Unresolved::of(points, start, end);
                notes.push((stretch, format!(
                    "between {} and {} the curve pauses at {:.1}..{:.1} ns ({} points): perhaps a level (for example a cache shared with others) too narrow or unsteady to call a plateau; a smaller --ratio or more --repeats would tell",
                    HumanBytes(run[0].size_bytes),
                    HumanBytes(run[run.len() - 1].size_bytes),
                    lo,
                    hi,
                    run.len()
                )));
            }
        }
    }
    notes
}

/// The note on a level's capacity: the estimate, its bracket, and where the
/// plateau starts to give way.
fn capacity_note(c: &Capacity) -> String {
    let mut note = if c.low == c.high {
        format!("capacity about {}", HumanBytes(c.estimate))
    } else {
        format!(
            "capacity {}: the latency leaves its plateau between {} and {}",
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
fn bounds_note(points: &[CurvePoint], b: &CapacityBounds) -> Option<String> {
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

/// The notes of one level: unstable sizes and a memory that is too fast.
fn stability_notes(
    points: &[CurvePoint],
    level: &Level,
    neighbours: &[f64],
    is_memory: bool,
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
    if is_memory && level.plateau && level.ns < 30.0 {
        notes.push(format!(
            "{:.1} ns is fast for memory: the sweep may not reach beyond the last cache",
            level.ns
        ));
    }
    notes
}

/// The note on a translation climb.
fn translation_note(t: &Translation, memory_ns: f64) -> String {
    format!(
        "translation cost beyond {}: the latency climbs again, to {:.1} ns at the largest size ({:.2}x memory's {:.1} ns): page walks once the TLBs no longer reach, not a cache level; smaller pages (--pages 4k) bring it to smaller sizes, huge pages push it out. Read from one page size, a prior: a farther tier (CXL memory, a remote node) climbs the same way but stays put when the page size changes (run the climb's sizes again with --pages 4k to tell)",
        HumanBytes(t.starts_bytes),
        t.latency_ns_at_largest,
        t.latency_ns_at_largest / memory_ns,
        memory_ns
    )
}

/// Finds the levels in `curve`; `sysfs` (data caches) is only reported beside them.
pub fn detect(curve: &[CurvePoint], sysfs: &[CacheInfo]) -> Detection {
    let mut notes = Vec::new();
    // Levels are read where the repeats show them: see [`clean::undisturbed`].
    let points = clean::undisturbed(&clean::clean(curve, &mut notes));
    let mut detection = Detection {
        levels: Vec::new(),
        unresolved: Vec::new(),
        translation: None,
        capacity_definition: CAPACITY_DEFINITION.into(),
        notes: Vec::new(),
    };
    if points.is_empty() {
        notes.push("no points: nothing to detect".into());
        detection.notes = notes;
        return detection;
    }
    let smoothed = smoothed(&points);
    let halves: Vec<f64> = points.iter().map(half_log_spread).collect();
    let sigma = median(&halves).clamp(0.02, 0.10);
    let mut on_ramp = Vec::new();
    let mut levels = plateau_levels(&points, &smoothed, sigma, &mut on_ramp);
    let last = points.len() - 1;
    match levels.last().map(|m| tail::read(&points, &smoothed, m)) {
        None | Some(Tail::StillRising) => {
            levels.push(Level::of(&points, last, last + 1, false));
            notes.push(format!(
                "the latency was still rising at the largest size ({}, {:.1} ns): memory latency is at least that; extend the sweep to larger sizes",
                HumanBytes(points[last].size_bytes),
                points[last].ns
            ));
        }
        Some(Tail::Translation(t)) => {
            notes.push(translation_note(&t, levels[levels.len() - 1].ns));
            detection.translation = Some(t);
        }
        Some(Tail::Flat) => {}
    }
    let smoothed_y: Vec<f64> = smoothed.iter().map(|p| p.ns.ln()).collect();
    let selection = evidence::select(
        &points,
        &smoothed_y,
        levels,
        sigma,
        sysfs_cache_levels(sysfs),
    );
    levels = selection.levels;
    notes.extend(selection.notes);
    let mut unresolved = selection.unresolved;
    for stretch in on_ramp {
        notes.push(format!(
            "unresolved: {}..{} at {:.1}..{:.1} ns fits the climb to memory nearly as well as a plateau; not taken for memory",
            HumanBytes(stretch.from_bytes),
            HumanBytes(stretch.to_bytes),
            stretch.ns_min,
            stretch.ns_max
        ));
        unresolved.push(stretch);
    }
    for (stretch, note) in pause_notes(&points, &smoothed, &levels) {
        if !unresolved
            .iter()
            .any(|u| u.overlaps(stretch.from_bytes, stretch.to_bytes))
        {
            notes.push(note);
            unresolved.push(stretch);
        }
    }
    unresolved.sort_by_key(|u| u.from_bytes);
    detection.unresolved = unresolved;
    if let Some(first) = levels.first()
        && first.start > 0
    {
        notes.push(format!(
            "the curve starts in a transition (below {}): a faster level may be missing; start the sweep at a smaller size",
            HumanBytes(points[first.start].size_bytes)
        ));
    }
    let mut detected = Vec::new();
    for (k, level) in levels.iter().enumerate() {
        let is_memory = k + 1 == levels.len();
        let next = levels.get(k + 1);
        let cap = next.map(|n| {
            capacity::capacity(
                &smoothed,
                level.start,
                level.end - 1,
                n.start,
                level.ns,
                n.ns,
            )
        });
        let neighbours: Vec<f64> = [k.checked_sub(1).map(|i| levels[i].ns), next.map(|n| n.ns)]
            .into_iter()
            .flatten()
            .collect();
        let bounds = next.map(|n| capacity::bounds(&points, level.start, level.ns, n.ns));
        let mut notes_here = Vec::new();
        if let Some(c) = &cap {
            notes_here.push(capacity_note(c));
        }
        notes_here.extend(bounds.and_then(|b| bounds_note(&points, &b)));
        notes_here.extend(stability_notes(&points, level, &neighbours, is_memory));
        detected.push(DetectedLevel {
            name: if is_memory {
                "memory".to_string()
            } else {
                format!("L{}", k + 1)
            },
            size_bytes: cap.map(|c| c.estimate),
            size_bracket_bytes: cap.map(|c| [c.low, c.high]),
            size_within_10pct_bytes: cap.map(|c| c.within_10pct),
            plateau_bytes: level.plateau.then(|| {
                [
                    points[level.start].size_bytes,
                    points[level.end - 1].size_bytes,
                ]
            }),
            capacity_bounds: bounds,
            capacity_bounds_this_sweep: None,
            capacity_bounds_sweeps: None,
            latency_ns: level.ns,
            latency_cycles: level.cycles,
            confidence: confidence(&points, level, &neighbours, sigma, cap),
            sysfs_size_bytes: if is_memory {
                None
            } else {
                sysfs_level(sysfs, k as u32 + 1).map(|c| c.size_bytes)
            },
            spread_ns: level.spread,
            evidence: Evidence {
                against_ramp: selection.against_ramp.get(k).copied().flatten(),
                ..Evidence::default()
            },
            notes: notes_here,
        });
    }
    if let Some(l1) = detected
        .first()
        .filter(|l| l.name == "L1" && l.latency_cycles > 0.0)
        && let Some(why) = crate::platform::clock::l1_cycles_suspect(l1.latency_cycles)
    {
        notes.push(format!("clock suspect: {why}"));
    }
    describe_transitions(&points, &levels, &detected, &mut notes);
    compare_with_sysfs(&mut detected, sysfs, &mut notes);
    detection.levels = detected;
    detection.notes = notes;
    detection
}
