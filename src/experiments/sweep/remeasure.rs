//! Before the levels are decided: the points that decide them measured
//! again with fresh chains, their repeats pooled with the first pass's.
//!
//! What is measured again, most telling first, within a time budget:
//! - the points of every unresolved stretch (a plateau or a pause that could
//!   not be told from the ramp between two levels);
//! - the points of every short (under [`SHORT_POINTS`]) or weak plateau
//!   (confidence under [`WEAK_CONFIDENCE`]);
//! - on a noisy machine (median repeat cv over [`NOISY_CV`]), the two sizes
//!   that bracket each level's edge.
//!
//! The first pass's levels are kept in the result, so each level can say
//! whether both passes found it (`evidence.agree`).

use anyhow::Result;

use super::{Observer, SweepPlan, SweepResult, cost_ms, measure_each};
use crate::analysis::detect::Detection;
use crate::engine::{Engine, Point};

/// A plateau of fewer points is measured again.
pub const SHORT_POINTS: usize = 5;

/// A plateau with a confidence under this is measured again.
pub const WEAK_CONFIDENCE: f64 = 0.5;

/// Above this median repeat cv, the sizes bracketing each edge are measured again too.
pub const NOISY_CV: f64 = 0.03;

/// The re-measuring may take this fraction of the sweep so far...
pub const BUDGET_FRACTION: f64 = 0.3;

/// ...and at least this long, ms.
pub const MIN_BUDGET_MS: u64 = 1500;

/// Chains of the second pass differ from the first's by this seed offset.
const SEED_OFFSET: u64 = 0x5EED_0000;

/// The sizes of `known` (the detection series' sizes) that decide
/// `detection`, most telling first, without repeats.
pub fn deciding_sizes(detection: &Detection, known: &[u64], noisy: bool) -> Vec<u64> {
    let within = |a: u64, b: u64| -> Vec<u64> {
        known
            .iter()
            .copied()
            .filter(|s| (a..=b).contains(s))
            .collect()
    };
    let mut sizes: Vec<u64> = Vec::new();
    for u in &detection.unresolved {
        sizes.extend(within(u.from_bytes, u.to_bytes));
    }
    for level in detection.levels.iter().filter(|l| l.name != "memory") {
        let Some([a, b]) = level.plateau_bytes else {
            continue;
        };
        let points = within(a, b);
        if points.len() < SHORT_POINTS || level.confidence < WEAK_CONFIDENCE {
            sizes.extend(points);
        }
    }
    if noisy {
        for level in &detection.levels {
            if let Some([a, b]) = level.size_bracket_bytes {
                sizes.extend(within(a, b));
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    sizes.retain(|s| seen.insert(*s));
    sizes
}

/// Measures the deciding sizes of the detection series again (fresh
/// chains), pools them into `result`, and records what was done.
pub(super) fn remeasure(
    engine: &mut Engine,
    plan: &SweepPlan,
    result: &mut SweepResult,
    observer: &mut dyn Observer<SweepResult>,
    clock: &mut dyn FnMut() -> f64,
) -> Result<()> {
    let (Some(key), Some(first)) = (result.detection_series(), result.detect()) else {
        return Ok(());
    };
    let series = result.series_points(key);
    let known: Vec<u64> = series.iter().map(|m| m.size).collect();
    let cvs: Vec<f64> = series.iter().map(|m| m.ns_per_load.cv).collect();
    let noisy = crate::analysis::stats::median(&cvs) > NOISY_CV;
    let budget = ((clock() * 1e3 * BUDGET_FRACTION) as u64).max(MIN_BUDGET_MS);
    let mut spent = 0;
    let points: Vec<Point> = deciding_sizes(&first, &known, noisy)
        .into_iter()
        .map(|size| Point {
            seed: plan.template.seed.wrapping_add(SEED_OFFSET),
            ..plan.point(size, key)
        })
        .take_while(|p| {
            spent += cost_ms(p);
            spent <= budget
        })
        .collect();
    if points.is_empty() {
        return Ok(());
    }
    result.config.first_pass_levels = first.plateaus();
    // The second pass goes into a scratch result, then is pooled point by point.
    let mut second = result.clone();
    second.points.clear();
    measure_each(
        engine,
        &points,
        &mut second,
        observer,
        clock,
        &mut |_, _, _| false,
    )?;
    for m in second.points {
        if let Some(existing) = result
            .points
            .iter_mut()
            .find(|e| e.size == m.size && super::SeriesKey::of(e) == key)
        {
            result.config.remeasured_sizes.push(m.size);
            existing.pool(m);
        }
    }
    result.config.remeasured_sizes.sort_unstable();
    result.config.remeasured_sizes.dedup();
    observer.checkpoint(result)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::detect::{DetectedLevel, Unresolved};

    fn level(name: &str, plateau: [u64; 2], confidence: f64) -> DetectedLevel {
        DetectedLevel {
            name: name.into(),
            plateau_bytes: Some(plateau),
            size_bracket_bytes: Some([plateau[1], plateau[1] * 2]),
            confidence,
            ..DetectedLevel::default()
        }
    }

    #[test]
    fn unresolved_stretches_then_short_or_weak_plateaus_then_edges_when_noisy() {
        let known: Vec<u64> = (0..20).map(|k| 1000 << k).collect();
        let detection = Detection {
            levels: vec![
                level("L1", [1000, 16000], 0.9),   // 5 points, strong: not again
                level("L2", [64000, 256000], 0.9), // 3 points: short
                level("memory", [2048000, 524288000], 0.9),
            ],
            unresolved: vec![Unresolved {
                from_bytes: 512000,
                to_bytes: 1024000,
                ns_min: 5.0,
                ns_max: 7.0,
            }],
            ..Detection::default()
        };
        let quiet = deciding_sizes(&detection, &known, false);
        assert_eq!(quiet, vec![512000, 1024000, 64000, 128000, 256000]);
        let noisy = deciding_sizes(&detection, &known, true);
        // L1's edge bracket (16000..32000) joins; sizes are never repeated.
        assert_eq!(&noisy[..5], &quiet[..]);
        assert!(noisy.contains(&16000) && noisy.contains(&32000));
        let mut sorted = noisy.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), noisy.len());
    }
}
