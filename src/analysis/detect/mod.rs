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
//! - memory is the last level: the one whose latency no larger buffer
//!   exceeds but by translation cost. No latency makes a level memory (an L2
//!   behind page walks can read 60+ ns, tuned DRAM less); the plateaus after
//!   the curve's last step of a level's size are a climb past it, which only
//!   the other page size tells apart: page walks, or a farther level (CXL
//!   memory, a remote node), undetermined from one curve ([`tail`]); the
//!   sweep's page test measures the last step's and the climb's ends again
//!   with the other page size and tells them ([`pages`]);
//! - each level's latency is the median of its points, its spread the lowest
//!   and highest repeat seen on it; its capacity is where the fraction of
//!   loads it serves, read from the two plateaus, falls to one half, with the
//!   measured sizes either side as its bracket ([`capacity`]);
//! - a confidence in 0..1 per level from the points behind it, its contrast
//!   with its neighbours, how stable its repeats are and how wide its bracket
//!   is ([`confidence`]).

mod capacity;
mod clean;
mod confidence;
mod evidence;
mod level_notes;
mod mixture;
mod notes;
pub mod one_latency;
mod pages;
mod segment;
pub mod tail;
#[cfg(test)]
mod tests;
mod unresolved;

pub use capacity::{
    CAPACITY_DEFINITION, CapacityBounds, PLACED, crossing_size, leave_threshold, pool_bounds,
    refinement_sizes,
};
pub use evidence::{EVIDENCE_MIN, EVIDENCE_STRONG, Evidence};
pub use level_notes::WIDE_BOUNDS;
use level_notes::{
    CLIMB_ADVICE_UNTESTED, bounds_note, capacity_note, short_memory_note, stability_notes,
    translation_note,
};
pub use notes::ratio;
use notes::{compare_with_sysfs, describe_transitions, pause_notes, sysfs_level};
pub use one_latency::LoadSpread;
pub use pages::detect_with_pages;
pub use tail::Translation;
pub use unresolved::Unresolved;

use serde::{Deserialize, Serialize};

use crate::platform::caches::CacheInfo;
use crate::units::HumanBytes;
use confidence::{confidence, half_log_spread};
use segment::{MERGE_RATIO, median};
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

/// A repeat below this fraction of its point's median is a disturbed timing:
/// interference only slows a load, and no two neighbouring levels differ by
/// 10x at one size (a repeat that fast timed something else: a timer step,
/// a stalled guest's clock).
pub const BOGUS_FRACTION: f64 = 0.1;

/// Repeats at one size that differ by this factor or more disagree about the
/// level serving it: more than a level's step ([`LEVEL_RATIO`]), so not
/// noise within one level (2-3%) but loads moved to the next level.
pub const UNSTABLE_RATIO: f64 = 2.0;

/// sysfs and measured capacities further apart than this factor disagree:
/// the half-served size of an LRU level lies within a few per cent past its
/// size, of a random-replacement one at about 1.4x; beyond 1.5x the level
/// served this thread more or less than sysfs lists (a share, a victim
/// cache counted with the level below).
pub const DISAGREE_RATIO: f64 = 1.5;

/// Two levels differ in latency by at least this factor: plateaus closer
/// than this are one level (or memory and a climb after it). The premise of
/// a hierarchy: a level is worth building only when it answers much faster
/// than the one behind it: every cache level of the real curves steps by
/// 3x or more (L1 to L2 3.2-3.7x, L2 to L3 3.5-9x, the last cache to memory
/// 3.6-12x); the smallest step memlat must tell is a remote NUMA node's,
/// 1.5-2x local memory.
pub const LEVEL_RATIO: f64 = 1.5;

/// Whether two latencies can be one level's: within [`LEVEL_RATIO`] of
/// each other.
pub fn same_level(a_ns: f64, b_ns: f64) -> bool {
    a_ns.max(b_ns) < a_ns.min(b_ns) * LEVEL_RATIO
}

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

/// Where the curve's last level starts among `plateaus` (by size): after
/// the last step of at least [`LEVEL_RATIO`] from the plateau before it.
/// The plateaus from there on are within a level's step of each other: the
/// first is the last level (memory, when nothing larger exceeds it but
/// translation), the rest the steps of a climb past it ([`tail`]).
fn last_level_start(plateaus: &[Level]) -> usize {
    (1..plateaus.len())
        .rev()
        .find(|&k| !same_level(plateaus[k - 1].ns, plateaus[k].ns))
        .unwrap_or(0)
}

/// The plateaus of the curve as levels, neighbours closer than
/// [`LEVEL_RATIO`] joined (the points between them included) up to the
/// last level, whose later plateaus are left to [`tail::read`].
fn plateau_levels(
    points: &[CurvePoint],
    smoothed: &[CurvePoint],
    sigma: f64,
    memory_at: Option<[u64; 2]>,
    unresolved: &mut Vec<Unresolved>,
    mixtures: &mut Vec<Unresolved>,
) -> Vec<Level> {
    let x: Vec<f64> = points.iter().map(|p| (p.size_bytes as f64).ln()).collect();
    let y: Vec<f64> = smoothed.iter().map(|p| p.ns.ln()).collect();
    let mut plateaus: Vec<Level> = segment::segment(&x, &y)
        .iter()
        .filter(|g| g.plateau)
        .map(|g| Level::of(points, g.start, g.end, true))
        .collect();
    mixture::drop_mixtures(points, &mut plateaus, mixtures);
    // Where the page test placed memory, it is the last level: the
    // plateaus after it are translation cost, the climb past it.
    let forced = memory_at.and_then(|[a, b]| {
        let start = points.iter().position(|p| p.size_bytes >= a)?;
        let end = points.iter().rposition(|p| p.size_bytes <= b)? + 1;
        (start < end).then(|| Level::of(points, start, end, true))
    });
    let memory = if let Some(m) = forced {
        plateaus.retain(|l| l.end <= m.start);
        plateaus.push(m);
        plateaus.len() - 1
    } else {
        // A short stretch on the climb to the last level is not that level.
        while let Some(k) = tail::ramp_memory(points, &plateaus, last_level_start(&plateaus), sigma)
        {
            let l = plateaus.remove(k);
            unresolved.push(Unresolved::of(points, l.start, l.end));
        }
        last_level_start(&plateaus)
    };
    let mut levels: Vec<Level> = Vec::new();
    for level in plateaus.into_iter().take(memory + 1) {
        match levels.last() {
            Some(prev) if same_level(prev.ns, level.ns) => {
                let start = prev.start;
                *levels.last_mut().unwrap() = Level::of(points, start, level.end, true);
            }
            _ => levels.push(level),
        }
    }
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
pub fn sysfs_cache_levels(sysfs: &[CacheInfo]) -> usize {
    let mut levels: Vec<u32> = sysfs
        .iter()
        .filter(|c| c.holds_data())
        .map(|c| c.level)
        .collect();
    levels.sort_unstable();
    levels.dedup();
    levels.len()
}

/// Where the loads a level stops serving go: the first of `pauses` between
/// it and the next level (a latency the curve settles at, too briefly to
/// call a level, where a level sysfs lists is missing), or the next level;
/// its first point's index and its latency.
fn next_latency(
    points: &[CurvePoint],
    level: &Level,
    next: &Level,
    pauses: &[Unresolved],
) -> (usize, f64) {
    let between = |u: &&Unresolved| {
        u.from_bytes > points[level.end - 1].size_bytes
            && u.to_bytes < points[next.start].size_bytes
    };
    pauses
        .iter()
        .filter(between)
        .min_by_key(|u| u.from_bytes)
        .and_then(|u| {
            let start = points.iter().position(|p| p.size_bytes == u.from_bytes)?;
            Some((start, (u.ns_min * u.ns_max).sqrt()))
        })
        .unwrap_or((next.start, next.ns))
}

/// Finds the levels in `curve`; `sysfs` (data caches) is only reported
/// beside them. From one curve, a climb past the last level is undetermined
/// and its last step is taken for a level ([`detect_with_pages`] tells both
/// by the other page size).
pub fn detect(curve: &[CurvePoint], sysfs: &[CacheInfo]) -> Detection {
    detect_from(curve, sysfs, None, &[])
}

/// [`detect`], memory placed on the sizes `memory_at` (its plateau's first
/// and last) and the plateaus after it taken for the climb past it, not
/// levels: where the page test found the last step to be translation cost
/// ([`pages`]); `spreads` are the sweep's single-load spreads, which tell
/// a level from a mixture of its neighbours ([`one_latency`]).
fn detect_from(
    curve: &[CurvePoint],
    sysfs: &[CacheInfo],
    memory_at: Option<[u64; 2]>,
    spreads: &[LoadSpread],
) -> Detection {
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
    // The curve's typical per-point uncertainty (log): never below the 2%
    // run-to-run variation of quiet repeats, never above the 10% at which a
    // point's repeats no longer place it within a plateau's band.
    let sigma = median(&halves).clamp(0.02, 0.10);
    let (mut on_ramp, mut mixed) = (Vec::new(), Vec::new());
    let mut levels = plateau_levels(
        &points,
        &smoothed,
        sigma,
        memory_at,
        &mut on_ramp,
        &mut mixed,
    );
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
            let memory_ns = levels[levels.len() - 1].ns;
            notes.push(translation_note(&t, memory_ns, CLIMB_ADVICE_UNTESTED));
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
        spreads,
    );
    levels = selection.levels;
    notes.extend(selection.notes);
    let mut unresolved = selection.unresolved;
    unresolved::note_unresolved(&mut notes, &mut unresolved, on_ramp, unresolved::ON_RAMP);
    unresolved::note_unresolved(&mut notes, &mut unresolved, mixed, mixture::MIXTURE);
    // Where sysfs lists more caches than the curve resolves, a pause stands
    // for the missing one: the loads a level stops serving go there first.
    let missing_level = sysfs_cache_levels(sysfs) + 1 > levels.len();
    let mut pauses = Vec::new();
    for (stretch, note) in pause_notes(&points, &smoothed, &levels) {
        if !unresolved
            .iter()
            .any(|u| u.overlaps(stretch.from_bytes, stretch.to_bytes))
        {
            notes.push(note);
            unresolved.push(stretch);
            if missing_level {
                pauses.push(stretch);
            }
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
            let (next_start, next_ns) = next_latency(&points, level, n, &pauses);
            capacity::capacity(
                &smoothed,
                level.start,
                level.end - 1,
                next_start,
                level.ns,
                next_ns,
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
        notes_here.extend(stability_notes(&points, level, &neighbours));
        if is_memory {
            notes_here.extend(short_memory_note(&points, level, sysfs));
        }
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
