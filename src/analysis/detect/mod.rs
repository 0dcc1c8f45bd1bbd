//! Finds cache levels from a measured latency curve alone: plateaus and the
//! transitions between them (seed 004, Problem 1). sysfs claims are only
//! shown beside the result, never used to find it.
//!
//! The method, in order:
//! - [`segment`] groups the points into plateaus and transitions;
//! - each plateau's latency is the median of its points, its spread the
//!   lowest and highest repeat seen on it;
//! - a cache's capacity is where the curve leaves its plateau: where the
//!   latency has doubled (or gone half-way, in log, to the next level if that
//!   is closer), interpolated in log-size; when the step is sharp (one point
//!   on the plateau, the next on the next plateau) it is the largest size
//!   still on the plateau, with the next size as upper bound. Leaving the
//!   plateau, not reaching the next one, marks it, so a level the curve does
//!   not resolve beyond does not inflate the capacity;
//! - the last plateau is memory; when the curve still rises after it, memory
//!   is only bounded below by the largest size's latency;
//! - a confidence in 0..1 per level from the points behind it, its contrast
//!   with its neighbours, and how stable its repeats are.

mod notes;
mod segment;
mod table;
#[cfg(test)]
mod tests;

use notes::{compare_with_sysfs, describe_transitions, ratio, sysfs_level};
pub use table::{levels_table, table};

use serde::{Deserialize, Serialize};

use crate::engine::Measurement;
use crate::platform::caches::CacheInfo;
use crate::units::HumanBytes;
use segment::{MAX_BAND, MERGE_RATIO, median};

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

impl From<&Measurement> for CurvePoint {
    fn from(m: &Measurement) -> CurvePoint {
        CurvePoint {
            size_bytes: m.size,
            ns: m.ns_per_load.median,
            ns_min: m.ns_per_load.min,
            ns_max: m.ns_per_load.max,
            cycles: m.cycles_per_load.median,
        }
    }
}

/// The curve of some measurements (one point per measurement).
pub fn curve(measurements: &[Measurement]) -> Vec<CurvePoint> {
    measurements.iter().map(CurvePoint::from).collect()
}

/// One level found in the curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DetectedLevel {
    /// `L1`, `L2`, `L3`... in the order found, and `memory` last.
    pub name: String,
    /// Estimated capacity in bytes; `None` for memory.
    pub size_bytes: Option<u64>,
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
    /// Remarks: capacity bounds, instability, disagreement with sysfs.
    pub notes: Vec<String>,
}

/// The result of detection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Detection {
    /// Levels found, smallest first, memory last (empty only without points).
    pub levels: Vec<DetectedLevel>,
    /// Remarks on the whole curve: transitions, unstable sizes, what sysfs lists that the data do not show.
    pub notes: Vec<String>,
}

/// A repeat below this fraction of its point's median is a disturbed timing.
pub const BOGUS_FRACTION: f64 = 0.1;

/// Repeats at one size that differ by this factor or more disagree about the level serving it.
pub const UNSTABLE_RATIO: f64 = 2.0;

/// sysfs and measured capacities further apart than this factor disagree.
pub const DISAGREE_RATIO: f64 = 1.5;

/// Points sorted by size with one point per size and sane values.
fn clean(curve: &[CurvePoint], notes: &mut Vec<String>) -> Vec<CurvePoint> {
    let mut points: Vec<CurvePoint> = curve
        .iter()
        .filter(|p| p.size_bytes > 0 && p.ns.is_finite() && p.ns > 0.0)
        .map(|p| CurvePoint {
            ns_min: if p.ns_min.is_finite() && p.ns_min >= BOGUS_FRACTION * p.ns {
                p.ns_min.min(p.ns)
            } else {
                p.ns
            },
            ns_max: if p.ns_max.is_finite() {
                p.ns_max.max(p.ns)
            } else {
                p.ns
            },
            ..*p
        })
        .collect();
    let bogus = curve
        .iter()
        .filter(|p| p.ns > 0.0 && (p.ns_min.is_nan() || p.ns_min < BOGUS_FRACTION * p.ns))
        .count();
    if bogus > 0 {
        notes.push(format!(
            "{bogus} point(s) had a repeat below a tenth of their median (a disturbed timing, not a latency); left out of the spreads"
        ));
    }
    let dropped = curve.len() - points.len();
    if dropped > 0 {
        notes.push(format!(
            "{dropped} point(s) without a positive latency were left out"
        ));
    }
    points.sort_by_key(|p| p.size_bytes);
    let mut merged: Vec<CurvePoint> = Vec::new();
    let mut i = 0;
    while i < points.len() {
        let same: Vec<CurvePoint> = points[i..]
            .iter()
            .take_while(|p| p.size_bytes == points[i].size_bytes)
            .copied()
            .collect();
        i += same.len();
        let ns: Vec<f64> = same.iter().map(|p| p.ns).collect();
        let cycles: Vec<f64> = same.iter().map(|p| p.cycles).collect();
        merged.push(CurvePoint {
            size_bytes: same[0].size_bytes,
            ns: median(&ns),
            ns_min: same.iter().map(|p| p.ns_min).fold(f64::INFINITY, f64::min),
            ns_max: same.iter().map(|p| p.ns_max).fold(0.0, f64::max),
            cycles: median(&cycles),
        });
    }
    merged
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

/// Where a cache's capacity lies: an estimate and the sizes that bound it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Capacity {
    estimate: u64,
    low: u64,
    high: u64,
    sharp: bool,
}

/// A level is left where its latency has doubled, or gone half-way (in log)
/// to the next level's when that comes first.
pub const LEAVE_RATIO: f64 = 2.0;

/// Where the curve leaves a plateau at `from_ns` (last point `last`) towards a
/// level at `to_ns` (first point `next`): the size at which the latency
/// reaches `from_ns * min(sqrt(to_ns / from_ns), LEAVE_RATIO)`, interpolated in
/// log-size and log-latency between the points either side. When those are
/// the plateau's last point and the next level's first, the step is sharp and
/// the capacity is the last size the plateau holds.
fn capacity(points: &[CurvePoint], last: usize, next: usize, from_ns: f64, to_ns: f64) -> Capacity {
    let threshold = from_ns * (to_ns / from_ns).sqrt().min(LEAVE_RATIO);
    let at = |i: usize| points[i].size_bytes;
    if points[last].ns >= threshold {
        return Capacity {
            estimate: at(last),
            low: at(last.saturating_sub(1)),
            high: at(last),
            sharp: false,
        };
    }
    for i in last + 1..=next {
        if points[i].ns < threshold {
            continue;
        }
        let prev = i - 1;
        if prev == last && i == next {
            return Capacity {
                estimate: at(last),
                low: at(last),
                high: at(next),
                sharp: true,
            };
        }
        let (np, ni) = (points[prev].ns, points[i].ns);
        let t = ((threshold / np).ln() / (ni / np).ln()).clamp(0.0, 1.0);
        let (sp, si) = (at(prev) as f64, at(i) as f64);
        let estimate = ((sp.ln() + t * (si.ln() - sp.ln())).exp() / 64.0).round() as u64 * 64;
        return Capacity {
            estimate: estimate.clamp(at(prev), at(i)),
            low: at(prev),
            high: at(i),
            sharp: false,
        };
    }
    Capacity {
        estimate: at(next),
        low: at(next),
        high: at(next),
        sharp: false,
    }
}

/// Half the log-spread of a point's repeats.
fn half_log_spread(p: &CurvePoint) -> f64 {
    0.5 * (p.ns_max / p.ns_min).ln()
}

/// Whether a point's repeats reach past the geometric midpoint towards `other_ns`.
fn crosses(p: &CurvePoint, level_ns: f64, other_ns: f64) -> bool {
    let mid = (level_ns * other_ns).sqrt();
    if other_ns > level_ns {
        p.ns_max >= mid
    } else {
        p.ns_min <= mid
    }
}

/// 0..1 confidence of a level given its neighbours' latencies.
fn confidence(
    points: &[CurvePoint],
    level: &Level,
    neighbours: &[f64],
    sigma: f64,
    capacity: Option<Capacity>,
) -> f64 {
    if !level.plateau {
        return 0.1;
    }
    let run = &points[level.start..level.end];
    let n = run.len() as f64;
    let support = 1.0 - 0.5f64.powf(n - 1.0);
    let y: Vec<f64> = run.iter().map(|p| p.ns.ln()).collect();
    let mean = y.iter().sum::<f64>() / n;
    let sd = (y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
    let contrast = neighbours
        .iter()
        .map(|nb| {
            let z = (nb / level.ns).ln().abs() / (sd + sigma);
            1.0 - (-z / 3.0).exp()
        })
        .fold(1.0, f64::min);
    let unstable = run
        .iter()
        .filter(|p| neighbours.iter().any(|&nb| crosses(p, level.ns, nb)))
        .count() as f64
        / n;
    let stability = 1.0 - 0.7 * unstable;
    let spreads: Vec<f64> = run.iter().map(|p| (p.ns_max - p.ns_min) / p.ns).collect();
    let tight = 1.0 / (1.0 + median(&spreads));
    let bracket = capacity.map_or(1.0, |c| {
        let ratio = c.high as f64 / c.low.max(1) as f64;
        (1.0 - 0.2 * (ratio / 1.5).log2().max(0.0)).clamp(0.6, 1.0)
    });
    let c = support * contrast * stability * tight * bracket;
    (c * 100.0).round() / 100.0
}

/// Finds the levels in `curve`; `sysfs` (data caches) is only reported beside them.
pub fn detect(curve: &[CurvePoint], sysfs: &[CacheInfo]) -> Detection {
    let mut notes = Vec::new();
    let points = clean(curve, &mut notes);
    if points.is_empty() {
        notes.push("no points: nothing to detect".into());
        return Detection {
            levels: Vec::new(),
            notes,
        };
    }
    let x: Vec<f64> = points.iter().map(|p| (p.size_bytes as f64).ln()).collect();
    let raw_y: Vec<f64> = points.iter().map(|p| p.ns.ln()).collect();
    let y = segment::smooth(&raw_y);
    // The curve with each latency replaced by its running median: for
    // grouping, capacities and the end of the curve; levels report raw medians.
    let smoothed: Vec<CurvePoint> = points
        .iter()
        .zip(&y)
        .map(|(p, v)| CurvePoint { ns: v.exp(), ..*p })
        .collect();
    let halves: Vec<f64> = points.iter().map(half_log_spread).collect();
    let sigma = median(&halves).clamp(0.02, 0.10);
    let groups = segment::segment(&x, &y);
    let mut levels: Vec<Level> = groups
        .iter()
        .filter(|g| g.plateau)
        .map(|g| Level::of(&points, g.start, g.end, true))
        .collect();
    let last = points.len() - 1;
    // Smoothing may pull a last point that truly rose back onto the plateau;
    // when every repeat of it is well above, it is not on the plateau.
    if let Some(l) = levels.last_mut()
        && l.end == last + 1
        && l.end - l.start > segment::MIN_POINTS
        && points[last].ns_min > l.ns * MERGE_RATIO
    {
        *l = Level::of(&points, l.start, last, true);
    }
    // Rising after the last plateau: smoothed points above it, or a last point
    // whose every repeat is above it (not one disturbed median).
    let still_rising = levels.last().is_none_or(|l| {
        smoothed[l.end..].iter().any(|p| p.ns > l.ns * MERGE_RATIO)
            || (l.end <= last && points[last].ns_min > l.ns * MERGE_RATIO)
    });
    if still_rising {
        levels.push(Level::of(&points, last, last + 1, false));
        notes.push(format!(
            "the latency was still rising at the largest size ({}, {:.1} ns): memory latency is at least that; extend the sweep to larger sizes",
            HumanBytes(points[last].size_bytes),
            points[last].ns
        ));
    }
    for g in groups.iter().filter(|g| !g.plateau && g.end - g.start >= 2) {
        let run = &points[g.start..g.end];
        let lo = run.iter().map(|p| p.ns).fold(f64::INFINITY, f64::min);
        let hi = run.iter().map(|p| p.ns).fold(0.0, f64::max);
        // A pause worth naming stands apart from the plateaus either side.
        let below = levels.iter().rev().find(|l| l.end <= g.start && l.plateau);
        let above = levels.iter().find(|l| l.start >= g.end && l.plateau);
        let apart = below.is_none_or(|l| lo >= l.ns * MAX_BAND)
            && above.is_none_or(|l| hi * MAX_BAND <= l.ns);
        if hi <= lo * MERGE_RATIO && apart {
            notes.push(format!(
                "between {} and {} the curve pauses at {:.1}..{:.1} ns ({} points): perhaps a level (for example a cache shared with others) too narrow or unsteady to call a plateau; a smaller --ratio or more --repeats would tell",
                HumanBytes(run[0].size_bytes),
                HumanBytes(run[run.len() - 1].size_bytes),
                lo,
                hi,
                run.len()
            ));
        }
    }
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
        let mut level_notes = Vec::new();
        let cap = (!is_memory).then(|| {
            let next = &levels[k + 1];
            capacity(&smoothed, level.end - 1, next.start, level.ns, next.ns)
        });
        let mut neighbours = Vec::new();
        if k > 0 {
            neighbours.push(levels[k - 1].ns);
        }
        if !is_memory {
            neighbours.push(levels[k + 1].ns);
        }
        let conf = confidence(&points, level, &neighbours, sigma, cap);
        if let Some(c) = cap {
            level_notes.push(if c.sharp {
                format!(
                    "holds {} (the last size on its plateau); {} is already on the next level",
                    HumanBytes(c.low),
                    HumanBytes(c.high)
                )
            } else if c.low == c.high {
                format!("capacity about {}", HumanBytes(c.estimate))
            } else {
                format!(
                    "the latency leaves its plateau at about {} (between {} and {})",
                    HumanBytes(c.estimate),
                    HumanBytes(c.low),
                    HumanBytes(c.high)
                )
            });
        }
        let run = &points[level.start..level.end];
        let unstable: Vec<&CurvePoint> = run
            .iter()
            .filter(|p| neighbours.iter().any(|&nb| crosses(p, level.ns, nb)))
            .collect();
        if level.plateau && !unstable.is_empty() {
            level_notes.push(format!(
                "unstable: at {} of its {} sizes some repeats reached half-way to a neighbouring level (repeats {:.1}..{:.1} ns); shared with other tenants or disturbed, its figures are uncertain",
                unstable.len(),
                run.len(),
                level.spread.0,
                level.spread.1
            ));
        }
        if is_memory && level.plateau && level.ns < 30.0 {
            level_notes.push(format!(
                "{:.1} ns is fast for memory: the sweep may not reach beyond the last cache",
                level.ns
            ));
        }
        let name = if is_memory {
            "memory".to_string()
        } else {
            format!("L{}", k + 1)
        };
        detected.push(DetectedLevel {
            sysfs_size_bytes: if is_memory {
                None
            } else {
                sysfs_level(sysfs, k as u32 + 1).map(|c| c.size_bytes)
            },
            name,
            size_bytes: cap.map(|c| c.estimate),
            latency_ns: level.ns,
            latency_cycles: level.cycles,
            confidence: conf,
            spread_ns: level.spread,
            notes: level_notes,
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
    Detection {
        levels: detected,
        notes,
    }
}
