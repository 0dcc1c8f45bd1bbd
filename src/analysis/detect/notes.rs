//! The remarks beside the levels: what lies between them, which sizes were
//! unstable, and where sysfs disagrees with the data.

use super::segment::{self, MAX_BAND};
use super::unresolved::Unresolved;
use super::{CurvePoint, DISAGREE_RATIO, DetectedLevel, Level, UNSTABLE_RATIO, clean};
use crate::platform::caches::CacheInfo;
use crate::units::HumanBytes;

/// The data (or unified) cache sysfs lists for `level`.
pub(super) fn sysfs_level(sysfs: &[CacheInfo], level: u32) -> Option<&CacheInfo> {
    sysfs.iter().find(|c| c.level == level && c.holds_data())
}

/// Notes on the points between plateaus, and on sizes whose repeats straddle two levels.
pub(super) fn describe_transitions(
    points: &[CurvePoint],
    levels: &[Level],
    detected: &[DetectedLevel],
    notes: &mut Vec<String>,
) {
    for (k, pair) in levels.windows(2).enumerate() {
        let (a, b) = (&pair[0], &pair[1]);
        let between = &points[a.end..b.start];
        if between.is_empty() {
            continue;
        }
        let unstable: Vec<&CurvePoint> = between.iter().filter(|p| clean::two_levels(p)).collect();
        let through: Vec<String> = between
            .iter()
            .map(|p| format!("{:.1} ns at {}", p.ns, HumanBytes(p.size_bytes)))
            .collect();
        notes.push(format!(
            "{} -> {}: the latency rises from {:.1} to {:.1} ns between {} and {}, through {}",
            detected[k].name,
            detected[k + 1].name,
            a.ns,
            b.ns,
            HumanBytes(points[a.end - 1].size_bytes),
            HumanBytes(points[b.start].size_bytes),
            through.join(", ")
        ));
        if !unstable.is_empty() {
            let sizes: Vec<String> = unstable
                .iter()
                .map(|p| {
                    format!(
                        "{} ({:.1}..{:.1} ns)",
                        HumanBytes(p.size_bytes),
                        p.ns_min,
                        p.ns_max
                    )
                })
                .collect();
            notes.push(format!(
                "unstable between {} and {}: at {} the repeats disagree by {UNSTABLE_RATIO}x or more: the level serving these sizes changed from run to run (a cache shared with other tenants, or a disturbed run); no plateau is reported there",
                detected[k].name,
                detected[k + 1].name,
                sizes.join(", ")
            ));
        }
    }
}

/// Fills in the sysfs disagreements as notes.
pub(super) fn compare_with_sysfs(
    detected: &mut [DetectedLevel],
    sysfs: &[CacheInfo],
    notes: &mut Vec<String>,
) {
    let caches: Vec<&CacheInfo> = sysfs.iter().filter(|c| c.holds_data()).collect();
    if caches.is_empty() {
        notes.push("sysfs lists no caches to compare with".into());
        return;
    }
    let cache_count = detected.iter().filter(|l| l.size_bytes.is_some()).count();
    for level in detected.iter_mut() {
        let Some(size) = level.size_bytes else {
            continue;
        };
        let nearest = caches.iter().min_by(|a, b| {
            let da = (a.size_bytes as f64 / size as f64).ln().abs();
            let db = (b.size_bytes as f64 / size as f64).ln().abs();
            da.total_cmp(&db)
        });
        match level.sysfs_size_bytes {
            Some(claim) if ratio(claim, size) <= DISAGREE_RATIO => {}
            Some(claim) => {
                let mut note = format!(
                    "disagrees with sysfs: measured about {}, sysfs says {} for {}",
                    HumanBytes(size),
                    HumanBytes(claim),
                    level.name
                );
                if let Some(near) = nearest
                    && ratio(near.size_bytes, size) <= 2.0
                    && near.size_bytes != claim
                {
                    note += &format!(
                        "; it is nearer sysfs {} ({}): a level may be missing from the curve",
                        near.name(),
                        HumanBytes(near.size_bytes)
                    );
                } else if size < claim {
                    note += "; only part of it served this thread at its latency (shared with other cores or tenants, or a non-inclusive design)";
                }
                level.notes.push(note);
            }
            None => level.notes.push(format!(
                "sysfs lists no data cache at level {}",
                level.name.trim_start_matches('L')
            )),
        }
    }
    let unseen: Vec<String> = caches
        .iter()
        .filter(|c| c.level as usize > cache_count)
        .map(|c| format!("{} {}", c.name(), HumanBytes(c.size_bytes)))
        .collect();
    if !unseen.is_empty() {
        notes.push(format!(
            "sysfs lists {} beyond the {} cache level(s) the data show: not told apart from the next level here",
            unseen.join(", "),
            cache_count
        ));
    }
}

/// The larger of a/b and b/a.
pub fn ratio(a: u64, b: u64) -> f64 {
    let (a, b) = (a.max(1) as f64, b.max(1) as f64);
    if a > b { a / b } else { b / a }
}

/// Where the curve pauses inside a transition without a plateau: each
/// stretch with its note.
pub(super) fn pause_notes(
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
